//! Property test: random mutations of NESL programs (the conformance corpus when present,
//! a few built-in programs otherwise) go through parsing and checking without a panic,
//! and every diagnostic lies inside the source. A fixed seed keeps the cases the same
//! from run to run.

use nesl_front::check::{ItemInfo, Session};
use nesl_front::parser::parse_items;
use std::path::{Path, PathBuf};

const FALLBACK: &[&str] = &[
    "function fact(n) = if n <= 1 then 1 else n * fact(n - 1);\nfact(5);\n",
    "datatype point(int, int);\nfunction px(point(x, y)) = x;\n{px(p) : p in [point(1, 2)]};\n",
    "function quick(s) = if #s <= 1 then s else let p = s[#s / 2]; lo = {x in s | x < p} in quick(lo) ++ [p];\n",
    "xs = [3, 1, 4];\n{(x, c) : x in xs; c in \"abc\" | x > 1};\nlet (a, b) = (1, 2.5) in float(a) + b;\n",
];

const TOKENS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ";",
    "|",
    ":",
    " in ",
    " let ",
    " if ",
    " then ",
    " else ",
    "=",
    "+",
    "x",
    "1",
    "2.0",
    "`a",
    "\"s\"",
    "#",
    "->",
    "<-",
    "datatype ",
    "function ",
    "[] int",
    " t ",
    " f ",
    "$",
    "%",
    "@",
    "==",
    "time(",
    "sum",
    "point(",
    ":: (a in number)",
    " : int -> int",
];

/// xorshift64*: a small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn programs() -> Vec<String> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Ok(p) = std::env::var("NESL_CONFORMANCE") {
        dirs.push(PathBuf::from(p));
    }
    dirs.push(manifest.join("../../shared/conformance/nesl"));
    let mut out = Vec::new();
    if let Some(dir) = dirs.into_iter().find(|d| d.is_dir()) {
        let mut stack = vec![dir];
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "nesl") {
                    if let Ok(s) = std::fs::read_to_string(&p) {
                        out.push(s);
                    }
                }
            }
        }
        out.sort();
    }
    if out.is_empty() {
        out = FALLBACK.iter().map(|s| s.to_string()).collect();
    }
    out
}

fn mutate(rng: &mut Rng, src: &str) -> String {
    let mut b = src.as_bytes().to_vec();
    let edits = 1 + rng.below(4);
    for _ in 0..edits {
        let at = rng.below(b.len() + 1);
        match rng.below(4) {
            0 => {
                let end = (at + 1 + rng.below(8)).min(b.len());
                b.drain(at..end);
            }
            1 => {
                let tok = TOKENS[rng.below(TOKENS.len())].as_bytes();
                b.splice(at..at, tok.iter().copied());
            }
            2 => {
                let end = (at + 1 + rng.below(12)).min(b.len());
                let piece: Vec<u8> = b[at..end].to_vec();
                let to = rng.below(b.len() + 1);
                b.splice(to..to, piece);
            }
            _ => {
                let byte = (rng.next() & 0xff) as u8;
                if at < b.len() {
                    b[at] = byte;
                } else {
                    b.push(byte);
                }
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn check_all(src: &str) {
    let mut session = Session::new();
    for item in parse_items(src) {
        let r = item.and_then(|mut form| session.check_item(&mut form));
        if let Err(diags) = r {
            for d in diags {
                assert!(
                    d.span.start <= d.span.end && d.span.end as usize <= src.len(),
                    "span out of source: {d:?}"
                );
            }
        }
    }
}

#[test]
fn mutated_programs_never_panic() {
    let progs = programs();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let cases = 8000;
    for i in 0..cases {
        let src = &progs[i % progs.len()];
        let m = mutate(&mut rng, src);
        let r = std::panic::catch_unwind(|| check_all(&m));
        assert!(r.is_ok(), "case {i} panicked on:\n{m}");
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng(12345);
    for _ in 0..300 {
        let n = rng.below(200);
        let bytes: Vec<u8> = (0..n).map(|_| (rng.next() & 0xff) as u8).collect();
        check_all(&String::from_utf8_lossy(&bytes));
    }
}

/// Very deep expressions, patterns and types get a clean error instead of exhausting the
/// stack, on a thread with the stack the `nesl` binary gives the front end
/// ([`nesl_front::STACK_SIZE`]); long operator chains and wide tuples (6,000 terms) check;
/// deeply nested sequence literals (6,000) are errors, as are 300,000-level chains.
#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = std::thread::Builder::new().stack_size(nesl_front::STACK_SIZE).spawn(|| {
        let n = 6_000;
        let terms = vec!["1"; n];
        let names: Vec<String> = (0..n).map(|i| format!("x{i}")).collect();
        let huge = 300_000;
        let programs = [
            (format!("{};", terms.join(" + ")), false),
            (format!("({});", terms.join(", ")), false),
            (format!("let ({}) = ({}) in x0;", names.join(", "), terms.join(", ")), false),
            (format!("let ({}) = 1 in x0;", names.join(", ")), true),
            (format!("[] ({});", vec!["int"; n].join(", ")), false),
            (format!("{}1{};", "[".repeat(n), "]".repeat(n)), true),
            (format!("{}1{};", "-".repeat(n), ""), false),
            (format!("{};", vec!["1"; huge].join(" + ")), true),
            (format!("{}1{};", "-".repeat(huge), ""), true),
            (format!("{}1{};", "#[".repeat(huge), "]".repeat(huge)), true),
        ];
        let mut checked = 0;
        for (src, error) in &programs {
            let mut session = Session::new();
            for item in parse_items(src) {
                let Ok(mut form) = item else { continue };
                checked += 1;
                let r = session.check_item(&mut form);
                assert_eq!(r.is_err(), *error, "{}...: {r:?}", &src[..40]);
            }
        }
        assert_eq!(checked, programs.len(), "some deep programs did not parse");
    });
    deep.unwrap().join().unwrap();
}

/// Wide tuples check in linear time: every node's type shares its parts with its
/// components' types (they used to be copied, so 2,000 components took seconds and
/// 20,000 would take minutes). A 20,000-component tuple literal, pattern and function
/// parameter, each with a fresh variable per component.
#[test]
fn wide_tuples_check_in_linear_time() {
    let wide = std::thread::Builder::new().stack_size(nesl_front::STACK_SIZE).spawn(|| {
        let n = 20_000;
        let terms: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        let names: Vec<String> = (0..n).map(|i| format!("x{i}")).collect();
        let src = format!(
            "({terms});\nfunction wide(({names})) = x0;\nwide(({terms}));\n\
             let ({names}) = ({terms}) in x1 + x{last};\n",
            terms = terms.join(", "),
            names = names.join(", "),
            last = n - 1,
        );
        let mut session = Session::new();
        let mut infos = Vec::new();
        for item in parse_items(&src) {
            let mut form = item.expect("parses");
            infos.push(session.check_item(&mut form).expect("checks"));
        }
        assert_eq!(infos.len(), 4);
        // The function is polymorphic in every component.
        match &infos[1] {
            ItemInfo::Function { scheme, .. } => assert_eq!(scheme.vars.len(), n),
            other => panic!("not a function: {other:?}"),
        }
    });
    wide.unwrap().join().unwrap();
}
