//! Property test: random bytes, random token soup and mutated fixtures never make the
//! parser, printer, verifier or interpreter panic; whatever parses prints and re-parses
//! to the same program. Fixed seed, a built-in PRNG, a few thousand cases.

use std::path::Path;

/// xorshift64*: small, deterministic, good enough for test inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

/// Parses, checks the round trip, verifies and (when it verifies) runs under limits.
fn exercise(src: &str) -> bool {
    let Ok(p) = vcode::parse(src) else { return false };
    let printed = p.to_string();
    match vcode::parse(&printed) {
        Ok(q) => assert!(q.same_code(&p), "round trip changed the program:\n{src}\n---\n{printed}"),
        Err(e) => panic!("printed program does not parse: {e:?}\n{printed}"),
    }
    if vcode::verify(&p).is_ok() {
        let opts = vcode::RunOptions {
            stats: true,
            max_call_depth: 500,
            max_steps: Some(5_000),
            stdin: Some(Vec::new()),
            file_access: false,
        };
        let mut cvl = vcode::CpuCvl::with_max_elements(1 << 10);
        let _ = vcode::run(&p, &mut cvl, &mut std::io::sink(), &opts);
    }
    true
}

const WORDS: &[&str] = &[
    "FUNC", "MAIN", "F1", "RET", "CALL", "IF", "ELSE", "ENDIF", "CONST", "INT", "FLOAT", "BOOL",
    "SEGDES", "CHAR", "T", "F", "(", ")", "0", "1", "2", "3", "-1", "1.5", "\"ab\"", "+", "-", "*",
    "/", "%", "<", "=", "SELECT", "+_SCAN", "MAX_REDUCE", "PERMUTE", "BPERMUTE", "DPERMUTE", "DIST",
    "INDEX", "EXTRACT", "REPLACE", "PACK", "RANK_UP", "LENGTH", "MAKE_SEGDES", "LENGTHS", "COPY",
    "POP", "CPOP", "PAIR", "UNPAIR", "EXIT", "WRITE", "NOT", "I_TO_F", "SQRT", "FUSED", "SUPEROP",
    "$0", "$1", "{ c }", "\n", "\n", "\n", "4294967295", "1048577", "65536",
];

#[test]
fn random_bytes_never_panic() {
    let mut r = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..1500 {
        let n = r.below(200);
        let bytes: Vec<u8> = (0..n).map(|_| r.next() as u8).collect();
        exercise(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn token_soup_never_panics() {
    let mut r = Rng(42);
    let mut parsed = 0;
    for _ in 0..2000 {
        let mut s = String::from("FUNC MAIN\n");
        for _ in 0..r.below(40) {
            s.push_str(r.pick(WORDS));
            s.push(' ');
        }
        if r.below(4) > 0 {
            s.push_str("\nRET\n");
        }
        if exercise(&s) {
            parsed += 1;
        }
    }
    assert!(parsed > 0, "no token soup parsed: the generator is too weak");
}

#[test]
fn mutated_fixtures_never_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../regression/vcode");
    let mut srcs = Vec::new();
    for e in std::fs::read_dir(&dir).expect("fixtures").flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "vcode" || x == "fcode") {
            srcs.push(std::fs::read_to_string(&p).expect("read"));
        }
    }
    srcs.sort();
    assert!(!srcs.is_empty());
    let mut r = Rng(7);
    let mut ran = 0;
    for i in 0..2000 {
        let src = &srcs[i % srcs.len()];
        let mut lines: Vec<String> = src.lines().map(str::to_string).collect();
        for _ in 0..1 + r.below(3) {
            if lines.is_empty() {
                break;
            }
            let k = r.below(lines.len());
            match r.below(7) {
                0 => {
                    lines.remove(k);
                }
                1 => {
                    let l = lines[k].clone();
                    lines.insert(r.below(lines.len()), l);
                }
                2 => {
                    let j = r.below(lines.len());
                    lines.swap(k, j);
                }
                3 => {
                    // replace a number with another
                    let n = ["0", "1", "-1", "7", "1000", "99999", "-5"][r.below(7)];
                    let words: Vec<String> = lines[k]
                        .split(' ')
                        .map(|w| if w.parse::<i64>().is_ok() && r.below(2) == 0 { n.to_string() } else { w.to_string() })
                        .collect();
                    lines[k] = words.join(" ");
                }
                4 => {
                    let at = r.below(lines[k].len() + 1);
                    if lines[k].is_char_boundary(at) {
                        lines[k].truncate(at);
                    }
                }
                5 => lines.insert(k, r.pick(WORDS).to_string()),
                _ => {
                    let w = r.pick(WORDS);
                    lines[k] = format!("{} {w}", lines[k]);
                }
            }
        }
        if exercise(&lines.join("\n")) {
            ran += 1;
        }
    }
    assert!(ran > 100, "too few mutants parsed ({ran})");
}

#[test]
fn huge_stack_counts_are_errors_not_aborts() {
    // The verifier refuses a reach past its bound before modelling a stack that deep
    // (it used to allocate 206 GB and abort here).
    for ins in ["COPY 4294967295 4294967295", "POP 1 4294967295", "CPOP 4294967295 0", "COPY 1048577 0"] {
        let src = format!("FUNC MAIN\nCONST INT 1\n{ins}\nRET\nFUNC F1\n{ins}\nRET\n");
        let p = vcode::parse(&src).expect("parses");
        let errs = vcode::verify(&p).expect_err(ins);
        assert!(errs.iter().any(|e| e.message.contains("slots below the top")), "{ins}: {errs:?}");
    }
    // A deep but bounded reach in a function that takes its inputs from its callers is fine.
    let p = vcode::parse("FUNC MAIN\nRET\nFUNC F1\nCOPY 1 1000\nRET\n").expect("parses");
    assert!(vcode::verify(&p).is_ok());
}
