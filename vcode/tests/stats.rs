//! `RunOptions::stats`: CVL operations counted by family, with the elements each call
//! touched (inputs plus outputs; a segment descriptor counts its segments). Stack
//! shuffles, control flow and constants are not vector work and are not counted.

fn stats_of(src: &str) -> Vec<(String, u64, u64)> {
    let p = vcode::parse(src).expect("parses");
    vcode::verify(&p).expect("verifies");
    let opts = vcode::RunOptions { stats: true, ..Default::default() };
    let rep = vcode::run(&p, &mut vcode::CpuCvl::new(), &mut std::io::sink(), &opts).expect("runs");
    rep.stats.rows
}

fn row(kind: &str, calls: u64, elements: u64) -> (String, u64, u64) {
    (kind.to_string(), calls, elements)
}

#[test]
fn per_segment_filter_of_spec_9_4() {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../regression/vcode/spec_filter.vcode"))
        .expect("fixture");
    // MAKE_SEGDES (2) -> [2]: 1 + 1; MAKE_SEGDES (2 3) -> [2 3]: 2 + 2.
    // DIST (4 6) over [2 3] -> 5 elements: 2 + 2 + 5.
    // > INT on two 5-element vectors: 5 + 5 + 5.
    // PACK of 5 elements, 5 flags, [2 3] -> 3 elements and [1 2]: 5 + 5 + 2 + 3 + 2.
    assert_eq!(
        stats_of(&src),
        vec![row("segdes", 2, 6), row("vector-scalar", 1, 9), row("elementwise", 1, 15), row("pack", 1, 17)]
    );
}

#[test]
fn stack_ops_constants_and_control_are_not_counted() {
    let src = "FUNC MAIN\nCONST INT (1 2 3)\nCOPY 1 0\nCPOP 1 1\nPOP 1 0\nCONST BOOL T\nIF\nCALL G\nENDIF\nRET\n\
               FUNC G\nCONST INT 3\nMAKE_SEGDES\n+_SCAN INT\nCOPY 1 0\nCONST INT 3\nMAKE_SEGDES\n+_REDUCE INT\nPOP 1 1\nRET\n";
    assert_eq!(stats_of(src), vec![row("segdes", 2, 4), row("scan", 1, 7), row("reduce", 1, 5)]);
}

#[test]
fn no_counts_unless_asked() {
    let p = vcode::parse("FUNC MAIN\nCONST INT (1 2)\nCOPY 1 0\n+ INT\nRET\n").expect("parses");
    let rep = vcode::run(&p, &mut vcode::CpuCvl::new(), &mut std::io::sink(), &Default::default()).expect("runs");
    assert!(rep.stats.rows.is_empty());
}
