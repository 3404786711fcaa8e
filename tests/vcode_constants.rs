//! The VCODE `nesl compile` writes runs on CMU's 32-bit VCODE interpreter (issue 15),
//! whose reader keeps the low 32 bits of an `INT` constant: the library functions may
//! emit no constant outside 32 bits of their own ("not found" marks come from lengths,
//! digits of `@` from the value), only the program's own literals may need more.

mod common;
use common::Scratch;
use std::process::Command;

/// The integer constants (`CONST INT ...`, scalars and vectors) of a VCODE text.
fn int_constants(vcode: &str) -> Vec<i64> {
    let mut out = Vec::new();
    for line in vcode.lines() {
        let Some(rest) = line.trim().strip_prefix("CONST INT") else { continue };
        let rest = rest.trim().trim_start_matches('(').trim_end_matches(')');
        out.extend(rest.split_whitespace().filter_map(|w| w.parse::<i64>().ok()));
    }
    out
}

fn compile(src: &str, name: &str) -> String {
    let dir = Scratch::dir("vcode-constants", name);
    let nesl = dir.join(format!("{name}.nesl"));
    let vcode = dir.join(format!("{name}.vcode"));
    std::fs::write(&nesl, src).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_nesl"))
        .arg("compile")
        .arg(&nesl)
        .arg("-o")
        .arg(&vcode)
        .output()
        .unwrap();
    assert!(out.status.success(), "nesl compile failed: {}", String::from_utf8_lossy(&out.stderr));
    std::fs::read_to_string(&vcode).unwrap()
}

#[test]
fn library_constants_fit_in_32_bits() {
    let src = "find(3, [1, 2, 3]), find(9, [1, 2]);\n\
               remove_duplicates([3, 1, 3, 2, 1]), union([1, 2], [2, 5]);\n\
               histogram([1, 2, 1]), collect([(1, 2), (1, 3), (2, 4)]);\n\
               @[0, -7, 12345], {@x : x in [5, -5, 100]};\n\
               hash(\"abc\", 7), {hash(x, 11) : x in [1.5, 2.5]};\n\
               search_table([1, 4], create_table([(1, 2), (3, 4)]));\n";
    let vcode = compile(src, "library");
    let big: Vec<i64> = int_constants(&vcode)
        .into_iter()
        .filter(|&k| i32::try_from(k).is_err())
        .collect();
    assert!(big.is_empty(), "64-bit constants in the library's VCODE: {big:?}");
}

#[test]
fn the_programs_own_large_literals_stay() {
    let vcode = compile("@123456789012;\n", "literal");
    assert!(int_constants(&vcode).contains(&123456789012));
}
