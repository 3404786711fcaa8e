//! Interrupts ([`vcode::interrupt`]): the interpreter stops an endless program, and a
//! vector operation asked to stop returns the trap instead of a half-written vector. In
//! a test binary of its own: the flag is process-wide.

use std::time::{Duration, Instant};
use vcode::{interrupt, Cvl, HostScalar, TrapKind};

#[test]
fn interrupts_stop_the_interpreter_and_the_kernels() {
    // An endless tail recursion: constant stack, never returns.
    let p = vcode::parse("FUNC MAIN\nCONST INT 0\nCALL LOOP\nRET\nFUNC LOOP\nCONST INT 1\n+ INT\nCALL LOOP\nRET\n").unwrap();
    interrupt::clear();
    let asker = std::thread::spawn(|| {
        std::thread::sleep(Duration::from_millis(200));
        interrupt::request();
        Instant::now()
    });
    // The step limit only keeps a broken poll from hanging the test.
    let opts = vcode::RunOptions { max_steps: Some(500_000_000), ..Default::default() };
    let r = vcode::run(&p, &mut vcode::CpuCvl::new(), &mut Vec::new(), &opts);
    let stopped = Instant::now();
    let asked = asker.join().unwrap();
    let trap = r.expect_err("the endless program is stopped");
    assert_eq!(trap.kind, TrapKind::Interrupted);
    assert_eq!(trap.site.as_ref().map(|s| s.function.as_str()), Some("LOOP"), "the trap names where it stopped");
    let latency = stopped.saturating_duration_since(asked);
    // The goal is 100 ms; the bound leaves room for a loaded machine and a debug build.
    assert!(latency < Duration::from_millis(500), "stopped {latency:?} after the request");

    // A kernel with the flag set skips its blocks and says so: no vector comes back.
    // The request stays until cleared (the top level clears it before each form).
    assert!(interrupt::requested());
    interrupt::clear();
    let mut cvl = vcode::CpuCvl::new();
    let n = 1 << 22;
    assert!(!interrupt::abandoned());
    let v = cvl.fill(HostScalar::Int(7), n).expect("not interrupted yet");
    interrupt::request();
    let e = cvl.fill(HostScalar::Int(7), n).expect_err("an interrupted fill returns no vector");
    assert_eq!(e.kind, TrapKind::Interrupted);
    assert!(interrupt::abandoned());

    // On one thread too, a segmented operation (`DIST` over many segments, cut into
    // chunks that each poll) asked to stop returns the trap. (Segments of 8 elements: a
    // `DIST` over so short ones is written out at once, not kept unwritten.)
    interrupt::clear();
    let mut one = vcode::CpuCvl::with_threads(1);
    let x = one.fill(HostScalar::Int(3), 1 << 19).unwrap();
    let s = one.segdes_from_host(&vec![8; 1 << 19]).unwrap();
    assert_eq!(one.dist(&x, &s).map(|v| one.len(&v)).ok(), Some(1 << 22));
    interrupt::request();
    assert_eq!(one.dist(&x, &s).map(|_| ()).unwrap_err().kind, TrapKind::Interrupted);

    // A vector with gaps (a `DPERMUTE` into the first half of each segment of a `DIST`
    // not written out) whose filling is interrupted traps, and is whole when read again.
    interrupt::clear();
    let segs = 4096;
    let ss = one.segdes_from_host(&vec![32; segs]).unwrap();
    let sd = one.segdes_from_host(&vec![64; segs]).unwrap();
    let sevens = one.fill(HostScalar::Int(7), segs).unwrap();
    let d = one.dist(&sevens, &sd).unwrap();
    let (zeros, ones) = (one.fill(HostScalar::Int(0), segs).unwrap(), one.fill(HostScalar::Int(1), segs).unwrap());
    let i = one.index(&zeros, &ones, &ss).unwrap();
    let fives = one.fill(HostScalar::Int(5), 32 * segs).unwrap();
    let holey = one.dpermute(&fives, &i, &d, &ss, &sd).unwrap();
    interrupt::request();
    assert_eq!(one.get_int(&holey, 40).unwrap_err().kind, TrapKind::Interrupted, "the interrupted fill");
    interrupt::clear();
    let whole = one.to_host(&holey).expect("filled when read again");
    let want: Vec<i64> = (0..64 * segs).map(|p| if p % 64 < 32 { 5 } else { 7 }).collect();
    assert_eq!(whole, vcode::HostVector::Int(want), "each segment's first half from the DPERMUTE, the rest from the DIST");

    // Cleared, everything runs again, whole.
    interrupt::clear();
    let w = cvl.fill(HostScalar::Int(7), n).unwrap();
    let sum = cvl.binary(vcode::cvl::BinOp::Add, &v, &w).unwrap();
    assert_eq!(cvl.get_int(&sum, n - 1).unwrap(), 14);
    let r = vcode::run(&vcode::parse("FUNC MAIN\nCONST INT 5\nRET\n").unwrap(), &mut cvl, &mut Vec::new(), &Default::default());
    assert!(r.is_ok());
}
