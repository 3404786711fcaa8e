//! Property test: the lexer and parser never panic, and always locate their errors.
//!
//! A fixed-seed PRNG generates random byte strings, random token soups and mutations of
//! the conformance programs (and of the bad-syntax programs); each input goes through
//! every entry point. Checked for every input: no panic; every diagnostic's span lies
//! inside the text and starts on a character boundary; a form that fails has at least one
//! diagnostic; a form that parses has a span inside the text.

use nesl_front::lexer::source_from_bytes;
use nesl_front::parser::{is_incomplete, parse_expr, parse_items};
use nesl_front::Diagnostic;
use std::path::{Path, PathBuf};

/// xorshift64*: small, deterministic, good enough to pick mutations.
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

const FRAGMENTS: &[&str] = &[
    "(", ")", "[", "]", "{", "}", ",", ";", "$", ":", "::", "=", "==", "/=", "<", "<=", "+",
    "-", "*", "/", "^", "#", "@", "->", "<-", "++", "||", "|", "?", "!", "&", "'", "\\", ":=",
    "let ", " in ", "if ", " then ", " else ", "function ", "datatype ", " and ", " or ", "t",
    "f", "time", "x", "foo", "1", "2.5", "1e5", ".5", "`a", "`", "\"", "\"str\"", "%", "% c %",
    "[] int", "[0:10]", "\n", " ", "load", "set", "é", "\u{0}", "\u{7f}", "\t",
];

fn check_diag(src: &str, d: &Diagnostic, what: &str) {
    let (s, e) = (d.span.start as usize, d.span.end as usize);
    assert!(s <= e && e <= src.len(), "{what}: span {:?} outside text of {} bytes", d.span, src.len());
    assert!(src.is_char_boundary(s), "{what}: span {:?} not on a char boundary", d.span);
    assert!(!d.message.is_empty(), "{what}: empty message");
}

fn exercise(src: &str, what: &str) {
    for item in parse_items(src) {
        match item {
            Ok(form) => {
                let sp = form.span();
                assert!(sp.start <= sp.end && sp.end as usize <= src.len(), "{what}: form span");
            }
            Err(diags) => {
                assert!(!diags.is_empty(), "{what}: a failed form without diagnostics");
                for d in &diags {
                    check_diag(src, d, what);
                }
            }
        }
    }
    if let Err(diags) = parse_expr(src) {
        assert!(!diags.is_empty(), "{what}: parse_expr failed without diagnostics");
        for d in &diags {
            check_diag(src, d, what);
        }
    }
    let _ = is_incomplete(src);
}

fn seeds() -> Vec<String> {
    let mut out = Vec::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs: Vec<PathBuf> = vec![
        root.join("../../shared/conformance/nesl"),
        root.join("../regression/bad-syntax"),
        root.join("../bench/programs"),
    ];
    while let Some(dir) = dirs.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else { continue };
        let mut paths: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|e| e == "nesl") {
                if let Ok(s) = std::fs::read_to_string(&p) {
                    out.push(s);
                }
            }
        }
    }
    // Always have something to mutate, even without the corpus.
    out.push(
        "function f1(x, y) : (int, int) -> int = let a = x + y; b = a * 2 in {a + b : a in [1:4] | a > 1};\n\
         datatype p(int, a) :: (a in any);\n(q, r) = (p(1, `c), [] [char]);\n"
            .to_string(),
    );
    out
}

fn char_boundary_at_or_before(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn mutate(rng: &mut Rng, src: &str) -> String {
    let mut s = src.to_string();
    for _ in 0..1 + rng.below(4) {
        let at = char_boundary_at_or_before(&s, rng.below(s.len() + 1));
        match rng.below(5) {
            0 => s.insert_str(at, FRAGMENTS[rng.below(FRAGMENTS.len())]),
            1 => {
                let end = char_boundary_at_or_before(&s, at + rng.below(12));
                s.replace_range(at..end.max(at), "");
            }
            2 => s.truncate(at),
            3 => {
                let end = char_boundary_at_or_before(&s, at + rng.below(40));
                let chunk = s[at..end.max(at)].to_string();
                let to = char_boundary_at_or_before(&s, rng.below(s.len() + 1));
                s.insert_str(to, &chunk);
            }
            _ => {
                let end = char_boundary_at_or_before(&s, at + 1 + rng.below(3));
                let frag = FRAGMENTS[rng.below(FRAGMENTS.len())];
                s.replace_range(at..end.max(at), frag);
            }
        }
    }
    s
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for case in 0..1500 {
        let len = rng.below(80);
        let bytes: Vec<u8> = (0..len)
            .map(|_| match rng.below(4) {
                0 => rng.below(256) as u8,
                _ => b" ()[]{},;:=+-*#@<>|`\"%abcxyz019.\n"[rng.below(33)],
            })
            .collect();
        match source_from_bytes(&bytes) {
            Ok(src) => exercise(src, &format!("random case {case}: {src:?}")),
            Err(d) => assert!(d.span.start as usize <= bytes.len(), "binary span"),
        }
    }
}

#[test]
fn random_token_soup_never_panics() {
    let mut rng = Rng(42);
    for case in 0..1500 {
        let n = rng.below(30);
        let src: String = (0..n).map(|_| FRAGMENTS[rng.below(FRAGMENTS.len())]).collect();
        exercise(&src, &format!("soup case {case}: {src:?}"));
    }
}

#[test]
fn mutated_programs_never_panic() {
    let seeds = seeds();
    let mut rng = Rng(0xDEAD_BEEF_CAFE_F00D);
    for case in 0..2000 {
        let seed = &seeds[rng.below(seeds.len())];
        let src = mutate(&mut rng, seed);
        exercise(&src, &format!("mutation case {case}: {src:?}"));
    }
}
