//! Values kept in the vector library between runs (`vcode::run_resident`).

use vcode::{Const, CpuCvl, HostValue, Imm, Instr, Opcode, Residents, RunOptions, RunOutcome};

fn program(text: &str) -> vcode::Program {
    vcode::parse(text).expect("parses")
}

/// Runs `p`, keeping its final stack (slots of more than `small` elements) in `store`.
fn run(p: &vcode::Program, cvl: &mut CpuCvl, store: &mut Residents<CpuCvl>, small: usize) -> Result<Vec<Const>, vcode::Trap> {
    let r = vcode::run_resident(p, cvl, store, small, &mut Vec::new(), &RunOptions::default())?;
    match r.outcome {
        RunOutcome::Finished(v) => Ok(v),
        RunOutcome::Exited(s) => panic!("exited with {s}"),
    }
}

/// A program that pushes `c` and sums it (an INT vector) in one segment.
fn sum_of(c: Const) -> vcode::Program {
    let mut p = program("FUNC MAIN\nCONST INT 0\nCOPY 1 0\nLENGTH INT\nMAKE_SEGDES\n+_REDUCE INT\nRET\n");
    let body = &mut p.functions[0].body;
    body[0] = Instr { op: Opcode::Const, ty: None, imm: Imm::Const(c) };
    p
}

#[test]
fn a_kept_vector_is_a_constant_of_later_runs_until_its_handles_are_gone() {
    let mut cvl = CpuCvl::new();
    let mut store = Residents::new();
    // 0..999 (INDEX), then a scalar.
    let made = program("FUNC MAIN\nCONST INT 0\nCONST INT 1\nCONST INT 1000\nMAKE_SEGDES\nINDEX\nCONST INT 7\nRET\n");
    let slots = run(&made, &mut cvl, &mut store, 16).expect("runs");
    assert_eq!(slots.len(), 2);
    assert!(matches!(slots[0], Const::Resident(_)), "1000 elements stay: {:?}", slots[0]);
    assert_eq!(slots[0].ty(), vcode::Ty::Int);
    assert_eq!(slots[1], Const::ints(vec![7]), "a scalar comes back to the host");
    assert_eq!(store.to_host(&mut cvl, &slots[0]).expect("copies out"), HostValue::Int((0..1000).collect()));

    // A later program holds the value as a constant; the verifier types it.
    let p = sum_of(slots[0].clone());
    vcode::verify(&p).expect("verifies");
    let sum = run(&p, &mut cvl, &mut store, 16).expect("runs");
    assert_eq!(sum, vec![Const::ints(vec![499500])]);
    // The printed form says what it is and does not read back as VCODE.
    let text = p.to_string();
    assert!(text.contains("CONST INT <resident"), "{text}");
    assert!(vcode::parse(&text).is_err());

    // With every handle gone the value is dropped at the next run, and a program that
    // still named it (it cannot) would be refused, not given another value.
    let id_holder = slots[0].clone();
    drop(slots);
    drop(p);
    run(&program("FUNC MAIN\nCONST INT 1\nRET\n"), &mut cvl, &mut store, 16).expect("runs");
    assert_eq!(store.len(), 1, "a handle is still held");
    let again = sum_of(id_holder);
    assert_eq!(run(&again, &mut cvl, &mut store, 16).expect("runs"), vec![Const::ints(vec![499500])]);
    drop(again);
    store.collect();
    assert!(store.is_empty());
}

#[test]
fn small_results_come_back_as_host_constants() {
    let mut cvl = CpuCvl::new();
    let mut store = Residents::new();
    let p = program("FUNC MAIN\nCONST INT (1 2 3)\nCONST INT 3\nMAKE_SEGDES\nRET\n");
    let slots = run(&p, &mut cvl, &mut store, 3).expect("runs");
    assert_eq!(slots, vec![Const::ints(vec![1, 2, 3]), Const::Segdes(vec![3].into(), true)]);
    assert!(store.is_empty());
    let slots = run(&p, &mut cvl, &mut store, 0).expect("runs");
    assert!(slots.iter().all(|c| matches!(c, Const::Resident(_))));
    assert_eq!(slots[1].ty(), vcode::Ty::Segdes);
    assert_eq!(store.to_host(&mut cvl, &slots[1]).expect("copies out"), HostValue::Segdes(vec![3]));
}

#[test]
fn a_value_of_another_library_is_an_error() {
    let mut cvl = CpuCvl::new();
    let mut mine = Residents::new();
    let mut theirs = Residents::<CpuCvl>::new();
    let c = theirs.insert_host(&mut cvl, HostValue::Int(vec![4, 5])).expect("kept");
    let e = run(&sum_of(c.clone()), &mut cvl, &mut mine, 16).expect_err("refused");
    assert!(e.to_string().contains("another vector library"), "{e}");
    assert!(mine.to_host(&mut cvl, &c).is_err());
    assert_eq!(run(&sum_of(c), &mut cvl, &mut theirs, 16).expect("runs"), vec![Const::ints(vec![9])]);
}

/// A one-element result the interpreter held on the host (serial code's scalars) is kept
/// like any other value: read back whole or as a prefix, its shape, whether it is a NaN
/// or an infinity, and a constant of a later run (with host scalars and without).
#[test]
fn a_kept_host_scalar_reads_back_and_runs_again() {
    for on in [true, false] {
        let mut cvl = CpuCvl::new().with_host_scalars(on);
        let mut store = Residents::new();
        let made = program("FUNC MAIN\nCONST FLOAT 1.0\nCONST FLOAT 0.0\n/ FLOAT\nCONST INT 6\nCONST INT 7\n* INT\nRET\n");
        let slots = run(&made, &mut cvl, &mut store, 0).expect("runs");
        assert_eq!(slots.len(), 2);
        assert!(slots.iter().all(|c| matches!(c, Const::Resident(_))), "kept: {slots:?}");
        assert_eq!(slots[0].ty(), vcode::Ty::Float);
        assert_eq!(store.to_host(&mut cvl, &slots[0]).expect("copies out"), HostValue::Float(vec![f64::INFINITY]));
        assert!(store.any_non_finite(&mut cvl, &slots[0]).expect("checks"), "host scalars {on}");
        assert!(!store.any_non_finite(&mut cvl, &slots[1]).expect("checks"));
        assert_eq!(store.to_host_prefix(&mut cvl, &slots[1], 0).expect("prefix"), HostValue::Int(vec![]));
        assert_eq!(store.to_host_prefix(&mut cvl, &slots[1], 5).expect("prefix"), HostValue::Int(vec![42]));
        assert_eq!(store.shape(&mut cvl, &slots[1]).expect("shape"), (1, None));
        let p = sum_of(slots[1].clone());
        vcode::verify(&p).expect("verifies");
        assert_eq!(run(&p, &mut cvl, &mut store, 16).expect("runs"), vec![Const::ints(vec![42])]);
    }
}
