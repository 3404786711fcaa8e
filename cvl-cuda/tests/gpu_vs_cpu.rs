//! Differential tests: every `Cvl` operation on the CUDA backend against the CPU backend,
//! on sizes that cross the kernels' tile boundaries and on segment layouts with empty
//! segments. On a GPU they run the real kernels; without one they run the same host code
//! with the kernels executed by the CPU emulation (`CudaCvl::new_emulated`, needs g++),
//! on smaller sizes; with neither each test prints that it was skipped and why.

use cvl_cuda::CudaCvl;
use vcode::cvl::{BinOp, ReduceOp, UnOp};
use vcode::{CpuCvl, Cvl, HostScalar, HostVector, SuperOp, Trap, TrapKind, VType};

/// Sizes around the scan tile (2048) and radix tile (4096), and a large one.
const SIZES: &[usize] = &[0, 1, 7, 2047, 2048, 2049, 4097, 70_001];
/// Sizes for the (slow) emulation: still two and three scan tiles, two radix tiles.
const EMU_SIZES: &[usize] = &[0, 1, 7, 2049, 4097];

fn gpu(test: &str) -> Option<CudaCvl> {
    match CudaCvl::new() {
        Ok(c) => Some(c),
        Err(e) => match CudaCvl::new_emulated() {
            Ok(c) => {
                eprintln!("{test}: no GPU ({e}); running the kernels in the CPU emulation");
                Some(c)
            }
            Err(e2) => {
                eprintln!("SKIPPED {test}: {e}; {e2}");
                None
            }
        },
    }
}

fn sizes(g: &CudaCvl) -> &'static [usize] {
    if g.is_gpu() {
        SIZES
    } else {
        EMU_SIZES
    }
}

/// A small deterministic generator (xorshift) for inputs.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
    fn ints(&mut self, n: usize, range: i64) -> Vec<i64> {
        (0..n)
            .map(|_| self.below(2 * range as u64) as i64 - range)
            .collect()
    }
    fn floats(&mut self, n: usize) -> Vec<f64> {
        (0..n)
            .map(|_| (self.below(2_000_001) as f64 - 1_000_000.0) / 997.0)
            .collect()
    }
    fn bools(&mut self, n: usize) -> Vec<bool> {
        (0..n).map(|_| self.next() & 1 == 1).collect()
    }
    /// Segment lengths summing to `n`: one segment, or random ones including empties.
    fn layouts(&mut self, n: usize) -> Vec<Vec<i64>> {
        let mut out = vec![vec![n as i64]];
        let mut lens = Vec::new();
        let mut left = n as i64;
        lens.push(0);
        while left > 0 {
            let l = (self.below(3000) as i64).min(left);
            lens.push(l);
            if self.next() % 4 == 0 {
                lens.push(0);
            }
            left -= l;
        }
        lens.push(0);
        out.push(lens);
        if n > 0 && n < 5000 {
            out.push(vec![1; n]);
        }
        out
    }
}

/// Both backends, with the same operation applied to each.
struct Pair {
    cpu: CpuCvl,
    gpu: CudaCvl,
}

#[derive(Clone)]
struct PV {
    c: <CpuCvl as Cvl>::Vector,
    g: <CudaCvl as Cvl>::Vector,
}
#[derive(Clone)]
struct PS {
    c: <CpuCvl as Cvl>::Segdes,
    g: <CudaCvl as Cvl>::Segdes,
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

impl Pair {
    fn vec(&mut self, v: HostVector) -> PV {
        PV {
            c: self.cpu.from_host(v.clone()).unwrap(),
            g: self.gpu.from_host(v).unwrap(),
        }
    }
    fn seg(&mut self, lens: &[i64]) -> PS {
        PS {
            c: self.cpu.segdes_from_host(lens).unwrap(),
            g: self.gpu.segdes_from_host(lens).unwrap(),
        }
    }
    /// Compares results: exact, or within a relative 1e-9 for floats when `approx`.
    fn same(
        &mut self,
        what: &str,
        r: (
            Result<<CpuCvl as Cvl>::Vector, Trap>,
            Result<<CudaCvl as Cvl>::Vector, Trap>,
        ),
        approx: bool,
    ) {
        match r {
            (Ok(c), Ok(g)) => {
                let hc = self.cpu.to_host(&c).unwrap();
                let hg = self.gpu.to_host(&g).unwrap();
                match (&hc, &hg) {
                    (HostVector::Float(a), HostVector::Float(b)) if approx => {
                        assert_eq!(a.len(), b.len(), "{what}: lengths");
                        for (k, (x, y)) in a.iter().zip(b).enumerate() {
                            assert!(close(*x, *y), "{what}: element {k}: cpu {x} gpu {y}");
                        }
                    }
                    (HostVector::Float(a), HostVector::Float(b)) => {
                        assert_eq!(a.len(), b.len(), "{what}: lengths");
                        for (k, (x, y)) in a.iter().zip(b).enumerate() {
                            assert!(
                                x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
                                "{what}: element {k}: cpu {x} gpu {y}"
                            );
                        }
                    }
                    _ => {
                        if hc != hg {
                            let k = match (&hc, &hg) {
                                (HostVector::Int(a), HostVector::Int(b)) => {
                                    a.iter().zip(b).position(|(x, y)| x != y)
                                }
                                (HostVector::Bool(a), HostVector::Bool(b)) => {
                                    a.iter().zip(b).position(|(x, y)| x != y)
                                }
                                _ => None,
                            };
                            panic!(
                                "{what}: results differ (first at {k:?}; lengths {} and {})",
                                hc.len(),
                                hg.len()
                            );
                        }
                    }
                }
            }
            (Err(a), Err(b)) => {
                assert_eq!(
                    std::mem::discriminant(&a.kind),
                    std::mem::discriminant(&b.kind),
                    "{what}: traps {a} / {b}"
                )
            }
            (a, b) => panic!("{what}: cpu {:?}, gpu {:?}", a.map(|_| ()), b.map(|_| ())),
        }
    }
}

/// Every ordered pair of `vals`, as two vectors: element `i` pairs `vals[i / k]` with
/// `vals[i % k]` (`k` values).
fn every_pair<T: Copy>(vals: &[T]) -> (Vec<T>, Vec<T>) {
    let k = vals.len();
    ((0..k * k).map(|i| vals[i / k]).collect(), (0..k * k).map(|i| vals[i % k]).collect())
}

impl Pair {
    /// Each binary operator of `ops` on `(a, b)`, compared exactly.
    fn binaries(&mut self, ops: &[BinOp], a: &PV, b: &PV, what: &str) {
        for &op in ops {
            let res = (self.cpu.binary(op, &a.c, &b.c), self.gpu.binary(op, &a.g, &b.g));
            self.same(&format!("{op:?} {what}"), res, false);
        }
    }
    /// Each unary operator of `ops` on `a`, compared within 1e-9 where `approx(op)`.
    fn unaries(&mut self, ops: &[UnOp], a: &PV, what: &str, approx: impl Fn(UnOp) -> bool) {
        for &op in ops {
            let res = (self.cpu.unary(op, &a.c), self.gpu.unary(op, &a.g));
            self.same(&format!("{op:?} {what}"), res, approx(op));
        }
    }
}

fn pair(test: &str) -> Option<Pair> {
    gpu(test).map(|g| Pair {
        cpu: CpuCvl::new(),
        gpu: g,
    })
}

#[test]
fn elementwise_matches_cpu() {
    let Some(mut p) = pair("elementwise_matches_cpu") else {
        return;
    };
    let mut r = Rng(0x1234_5678);
    for &n in sizes(&p.gpu) {
        let ia = p.vec(HostVector::Int(r.ints(n, 1000)));
        let mut ib_h = r.ints(n, 70);
        ib_h.iter_mut().for_each(|x| {
            if *x == 0 {
                *x = 3
            }
        });
        let ib = p.vec(HostVector::Int(ib_h));
        let fa = p.vec(HostVector::Float(r.floats(n)));
        let fb = p.vec(HostVector::Float(r.floats(n)));
        let ba = p.vec(HostVector::Bool(r.bools(n)));
        let bb = p.vec(HostVector::Bool(r.bools(n)));
        use BinOp::*;
        for op in [
            Add, Sub, Mul, Div, Mod, Lt, Le, Gt, Ge, Eq, Ne, Lshift, Rshift, And, Or, Xor, Max, Min,
        ] {
            let res = (
                p.cpu.binary(op, &ia.c, &ib.c),
                p.gpu.binary(op, &ia.g, &ib.g),
            );
            p.same(&format!("{op:?} INT n={n}"), res, false);
            let res = (
                p.cpu.binary(op, &fa.c, &fb.c),
                p.gpu.binary(op, &fa.g, &fb.g),
            );
            p.same(&format!("{op:?} FLOAT n={n}"), res, false);
            let res = (
                p.cpu.binary(op, &ba.c, &bb.c),
                p.gpu.binary(op, &ba.g, &bb.g),
            );
            p.same(&format!("{op:?} BOOL n={n}"), res, false);
        }
        use UnOp::*;
        for op in [
            Not, Floor, Ceil, Trunc, Round, IToF, IToB, BToI, Log, Sqrt, Exp, Sin, Cos, Tan, Asin,
            Acos, Atan, Sinh, Cosh, Tanh,
        ] {
            let approx = !matches!(
                op,
                Not | Floor | Ceil | Trunc | Round | IToF | IToB | BToI | Sqrt
            );
            for v in [&ia, &fa, &ba] {
                let res = (p.cpu.unary(op, &v.c), p.gpu.unary(op, &v.g));
                p.same(&format!("{op:?} n={n}"), res, approx);
            }
        }
        let res = (
            p.cpu.select(&ba.c, &ia.c, &ib.c),
            p.gpu.select(&ba.g, &ia.g, &ib.g),
        );
        p.same(&format!("SELECT n={n}"), res, false);
        let res = (
            p.cpu.select(&ba.c, &fa.c, &fb.c),
            p.gpu.select(&ba.g, &fa.g, &fb.g),
        );
        p.same(&format!("SELECT FLOAT n={n}"), res, false);
        for v in [
            HostScalar::Int(-5),
            HostScalar::Float(2.5),
            HostScalar::Bool(true),
            HostScalar::Int(0),
        ] {
            let res = (p.cpu.fill(v, n), p.gpu.fill(v, n));
            p.same(&format!("fill {v:?} n={n}"), res, false);
        }
    }
}

/// Element-wise FLOAT operators and conversions on the special values, every pair of them:
/// NaN, infinities, signed zeros, halves (rounding), the ends of `i64` and beyond (the
/// conversions saturate, NaN gives 0), subnormals. Bit for bit, but for the transcendental
/// functions (within 1e-9 relative, NaN against NaN).
#[test]
fn special_floats_match_cpu() {
    let Some(mut p) = pair("special_floats_match_cpu") else {
        return;
    };
    let special = [
        f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 1.0, -1.0,
        9.2e18, -9.3e18, 1.0e19, 1.0e308, -1.0e308, 5.0e-324, -1.0e-310, 3.0,
    ];
    let (a, b) = every_pair(&special);
    let fa = p.vec(HostVector::Float(a));
    let fb = p.vec(HostVector::Float(b));
    use BinOp::*;
    p.binaries(&[Add, Sub, Mul, Div, Lt, Le, Gt, Ge, Eq, Ne, Max, Min], &fa, &fb, "FLOAT on special values");
    use UnOp::*;
    let unary = [Floor, Ceil, Trunc, Round, Sqrt, Log, Exp, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Tanh];
    p.unaries(&unary, &fa, "on special values", |op| !matches!(op, Floor | Ceil | Trunc | Round | Sqrt));
}

/// Element-wise INT operators on every pair of edge values: the ends of the range
/// (`MIN / -1` wraps), signs for division and remainder, shift counts of 1, 63, 64 and
/// more, and negative ones. Zero divisors are left out (they trap; see below).
#[test]
fn edge_ints_match_cpu() {
    let Some(mut p) = pair("edge_ints_match_cpu") else {
        return;
    };
    let edge = [i64::MIN, i64::MIN + 1, i64::MAX, -1, 1, 2, -7, 7, 63, 64, 65, 127, -64, 3, 1 << 40];
    let (a, b) = every_pair(&edge);
    let ia = p.vec(HostVector::Int(a));
    let ib = p.vec(HostVector::Int(b));
    use BinOp::*;
    let binary = [Add, Sub, Mul, Div, Mod, Lt, Le, Gt, Ge, Eq, Ne, Lshift, Rshift, And, Or, Xor, Max, Min];
    p.binaries(&binary, &ia, &ib, "INT on edge values");
    p.unaries(&[UnOp::Not, UnOp::IToF, UnOp::IToB], &ia, "on edge ints", |_| false);
}

#[test]
fn division_by_zero_traps() {
    let Some(mut p) = pair("division_by_zero_traps") else {
        return;
    };
    let a = p.vec(HostVector::Int(vec![1, 2, 3, 4, 5]));
    let b = p.vec(HostVector::Int(vec![1, 1, 0, 1, 1]));
    for op in [BinOp::Div, BinOp::Mod] {
        let e = p.gpu.binary(op, &a.g, &b.g).unwrap_err();
        assert_eq!(e.kind, TrapKind::DivisionByZero);
    }
    // The mailbox is cleared: the next operation works.
    let ok = p.gpu.binary(BinOp::Div, &a.g, &a.g).unwrap();
    assert_eq!(p.gpu.to_host(&ok).unwrap(), HostVector::Int(vec![1; 5]));
}

#[test]
fn rand_matches_cpu_stream() {
    let Some(mut p) = pair("rand_matches_cpu_stream") else {
        return;
    };
    let mut r = Rng(99);
    for &n in sizes(&p.gpu) {
        let mut b = r.ints(n, 1000);
        b.iter_mut().for_each(|x| {
            if *x == 0 {
                *x = 7
            }
        });
        let b = p.vec(HostVector::Int(b));
        p.cpu.srand(n as i64).unwrap();
        p.gpu.srand(n as i64).unwrap();
        for _ in 0..2 {
            let res = (p.cpu.rand(&b.c), p.gpu.rand(&b.g));
            p.same(&format!("RAND n={n}"), res, false);
        }
    }
}

/// `RAND` at edge bounds: 0, 1, -1, the ends of the int range; float bounds 0, -0.0,
/// negative, infinite, NaN, subnormal.
#[test]
fn rand_at_edge_bounds_matches_cpu() {
    let Some(mut p) = pair("rand_at_edge_bounds_matches_cpu") else {
        return;
    };
    let ints = p.vec(HostVector::Int(vec![0, 1, -1, i64::MIN, i64::MAX, 2, -3, 1 << 62]));
    let floats = p.vec(HostVector::Float(vec![0.0, -0.0, -2.5, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 5.0e-324, 1.0e308]));
    for seed in [0, 7] {
        p.cpu.srand(seed).unwrap();
        p.gpu.srand(seed).unwrap();
        for v in [&ints, &floats] {
            let res = (p.cpu.rand(&v.c), p.gpu.rand(&v.g));
            p.same(&format!("RAND at edge bounds, seed {seed}"), res, false);
        }
    }
}

#[test]
fn scans_and_reductions_match_cpu() {
    let Some(mut p) = pair("scans_and_reductions_match_cpu") else {
        return;
    };
    let mut r = Rng(7);
    for &n in sizes(&p.gpu) {
        let iv = p.vec(HostVector::Int(r.ints(n, 50)));
        let fv = p.vec(HostVector::Float(r.floats(n)));
        let bv = p.vec(HostVector::Bool((0..n).map(|_| r.below(10) != 0).collect()));
        for lens in r.layouts(n) {
            let s = p.seg(&lens);
            let m = lens.len();
            use ReduceOp::*;
            for op in [Add, Mul, Max, Min, And, Or, Xor] {
                for (v, approx) in [(&iv, false), (&fv, true), (&bv, false)] {
                    let what = format!("{op:?} n={n} m={m}");
                    let res = (p.cpu.scan(op, &v.c, &s.c), p.gpu.scan(op, &v.g, &s.g));
                    p.same(&format!("scan {what}"), res, approx);
                    let res = (p.cpu.reduce(op, &v.c, &s.c), p.gpu.reduce(op, &v.g, &s.g));
                    p.same(&format!("reduce {what}"), res, approx);
                }
            }
        }
    }
}

/// Float MAX and MIN over vectors with NaNs and signed zeros, bit for bit: the CPU fold
/// keeps a NaN that starts a segment and passes over every other NaN, and of `0.0` and
/// `-0.0` keeps the first. NaNs fall at segment starts, just after them, at the scan tiles'
/// edges (2048 elements) and at random; plain vectors and a folding superoperator's tree.
#[test]
fn float_extremes_over_nans_match_cpu() {
    let Some(mut p) = pair("float_extremes_over_nans_match_cpu") else {
        return;
    };
    let mut r = Rng(41);
    let folds = [
        "(FLOAT SEGDES) (MAX_REDUCE FLOAT (+ FLOAT $0 (CONST FLOAT 1.0)) $1)",
        "(FLOAT SEGDES) (MIN_SCAN FLOAT (* FLOAT $0 (CONST FLOAT 2.0)) $1)",
    ];
    for &n in sizes(&p.gpu) {
        for lens in r.layouts(n) {
            let starts: Vec<usize> = lens.iter().scan(0usize, |a, &l| {
                let s = *a;
                *a += l as usize;
                Some(s)
            }).collect();
            for variant in 0..3 {
                let mut x: Vec<f64> = (0..n).map(|_| [0.0, -0.0, 1.0, -1.0][r.below(4) as usize]).collect();
                for (k, &st) in starts.iter().enumerate() {
                    let l = lens[k] as usize;
                    // Variant 0: NaN first in every other segment; 1: NaN second; 2: neither.
                    match variant {
                        0 if l > 0 && k % 2 == 0 => x[st] = f64::NAN,
                        1 if l > 1 => x[st + 1] = f64::NAN,
                        _ => {}
                    }
                    if l > 3 {
                        x[st + 2] = if variant == 2 { 5.0 } else { -5.0 };
                    }
                }
                for e in [2047, 2048, 2049, 4095, 4096] {
                    if e < n {
                        x[e] = f64::NAN;
                    }
                }
                for _ in 0..n / 50 {
                    let i = r.below(n as u64) as usize;
                    x[i] = f64::NAN;
                }
                let v = p.vec(HostVector::Float(x));
                let s = p.seg(&lens);
                let what = format!("n={n} segments={} variant {variant}", lens.len());
                for op in [ReduceOp::Max, ReduceOp::Min] {
                    let res = (p.cpu.scan(op, &v.c, &s.c), p.gpu.scan(op, &v.g, &s.g));
                    p.same(&format!("scan {op:?} {what}"), res, false);
                    let res = (p.cpu.reduce(op, &v.c, &s.c), p.gpu.reduce(op, &v.g, &s.g));
                    p.same(&format!("reduce {op:?} {what}"), res, false);
                }
                for src in folds {
                    let op = SuperOp::parse(src).unwrap_or_else(|e| panic!("{src}: {e:?}"));
                    let res = (p.cpu.fused_fold(&op, &[Some(&v.c), None], &s.c, n), p.gpu.fused_fold(&op, &[Some(&v.g), None], &s.g, n));
                    p.same(&format!("FUSED {src} {what}"), res, false);
                }
            }
        }
    }
}

/// The identities of scans and reductions: results show the reference's (32-bit INT_MIN /
/// INT_MAX for MAX / MIN on INT, -/+1.0e36 through a float on FLOAT, 0.0 for `+`), only as
/// the first element of a scan segment or the reduction of an empty segment; they are never
/// combined with elements, so values beyond them (64-bit ints, floats past 1.0e36,
/// infinities, -0.0 sums) come out exactly as on the CPU. Floats are compared bit for bit.
#[test]
fn scan_reduce_identities_match_cpu() {
    let Some(mut p) = pair("scan_reduce_identities_match_cpu") else {
        return;
    };
    let big = 1_i64 << 40;
    let ints = [
        i64::MIN,
        i64::MAX,
        -big,
        big,
        -2_147_483_649,
        2_147_483_648,
        -2_147_483_648,
        2_147_483_647,
        0,
    ];
    let floats = [
        f64::NEG_INFINITY,
        f64::INFINITY,
        -1.0e40,
        1.0e40,
        -1.0e36,
        1.0e36,
        -0.0,
        0.0,
    ];
    let mut r = Rng(99);
    for &n in sizes(&p.gpu) {
        let iv: Vec<i64> = (0..n)
            .map(|_| ints[r.below(ints.len() as u64) as usize])
            .collect();
        let fv: Vec<f64> = (0..n)
            .map(|_| floats[r.below(floats.len() as u64) as usize])
            .collect();
        // Every element at an extreme (all below INT_MIN32, all above INT_MAX32, all -0.0,
        // all below -1.0e36), so that a kernel combining an identity would show it.
        let cases = [
            (
                HostVector::Int(iv),
                vec![ReduceOp::Max, ReduceOp::Min, ReduceOp::Add, ReduceOp::Xor],
            ),
            (HostVector::Int(vec![-big; n]), vec![ReduceOp::Max]),
            (HostVector::Int(vec![big; n]), vec![ReduceOp::Min]),
            (HostVector::Float(fv), vec![ReduceOp::Max, ReduceOp::Min]),
            (HostVector::Float(vec![-1.0e40; n]), vec![ReduceOp::Max]),
            (HostVector::Float(vec![1.0e40; n]), vec![ReduceOp::Min]),
            (
                HostVector::Float(vec![f64::NEG_INFINITY; n]),
                vec![ReduceOp::Max],
            ),
            (
                HostVector::Float(vec![-0.0; n]),
                vec![ReduceOp::Add, ReduceOp::Mul],
            ),
        ];
        for (data, ops) in cases {
            let v = p.vec(data);
            for lens in r.layouts(n) {
                let s = p.seg(&lens);
                let m = lens.len();
                for &op in &ops {
                    let what = format!("{op:?} n={n} m={m}");
                    let res = (p.cpu.scan(op, &v.c, &s.c), p.gpu.scan(op, &v.g, &s.g));
                    p.same(&format!("identity scan {what}"), res, false);
                    let res = (p.cpu.reduce(op, &v.c, &s.c), p.gpu.reduce(op, &v.g, &s.g));
                    p.same(&format!("identity reduce {what}"), res, false);
                }
            }
        }
    }
    // The identities themselves, as the reference prints them.
    let e = p.vec(HostVector::Int(vec![]));
    let s = p.seg(&[0, 0]);
    let mx = p.gpu.reduce(ReduceOp::Max, &e.g, &s.g).unwrap();
    let mn = p.gpu.reduce(ReduceOp::Min, &e.g, &s.g).unwrap();
    assert_eq!(
        p.gpu.to_host(&mx).unwrap(),
        HostVector::Int(vec![-2_147_483_648; 2])
    );
    assert_eq!(
        p.gpu.to_host(&mn).unwrap(),
        HostVector::Int(vec![2_147_483_647; 2])
    );
    let v = p.vec(HostVector::Int(vec![-big, 5, -big]));
    let s = p.seg(&[2, 0, 1]);
    let sc = p.gpu.scan(ReduceOp::Max, &v.g, &s.g).unwrap();
    assert_eq!(
        p.gpu.to_host(&sc).unwrap(),
        HostVector::Int(vec![-2_147_483_648, -big, -2_147_483_648])
    );
    let rd = p.gpu.reduce(ReduceOp::Max, &v.g, &s.g).unwrap();
    assert_eq!(
        p.gpu.to_host(&rd).unwrap(),
        HostVector::Int(vec![5, -2_147_483_648, -big])
    );
}

#[test]
fn segment_descriptors_match_cpu() {
    let Some(mut p) = pair("segment_descriptors_match_cpu") else {
        return;
    };
    let mut r = Rng(11);
    for &n in sizes(&p.gpu) {
        for lens in r.layouts(n) {
            let lv = p.vec(HostVector::Int(lens.clone()));
            let sc = p.cpu.make_segdes(&lv.c).unwrap();
            let sg = p.gpu.make_segdes(&lv.g).unwrap();
            assert_eq!(p.gpu.element_count(&sg), p.cpu.element_count(&sc));
            assert_eq!(p.gpu.segment_count(&sg), lens.len());
            assert_eq!(p.gpu.segdes_to_host(&sg).unwrap(), lens);
            let res = (p.cpu.lengths(&sc), p.gpu.lengths(&sg));
            p.same("LENGTHS", res, false);
            // The per-element index built from a device-made descriptor.
            let x = p.vec(HostVector::Int((0..lens.len() as i64).collect()));
            let res = (p.cpu.dist(&x.c, &sc), p.gpu.dist(&x.g, &sg));
            p.same(&format!("DIST n={n}"), res, false);
        }
    }
    let bad = p.vec(HostVector::Int(vec![3, -1, 2]));
    let e = p.gpu.make_segdes(&bad.g).unwrap_err();
    assert_eq!(e.kind, TrapKind::NegativeLength(-1));
    let bad1 = p.vec(HostVector::Int(vec![-4]));
    let e = p.gpu.make_segdes(&bad1.g).unwrap_err();
    assert_eq!(e.kind, TrapKind::NegativeLength(-4));
}

/// A random permutation of each segment (indices relative to the segment start).
fn seg_perm(r: &mut Rng, lens: &[i64]) -> Vec<i64> {
    let mut out = Vec::new();
    for &l in lens {
        let mut p: Vec<i64> = (0..l).collect();
        for k in (1..p.len()).rev() {
            let j = r.below(k as u64 + 1) as usize;
            p.swap(k, j);
        }
        out.extend(p);
    }
    out
}

#[test]
fn permutations_match_cpu() {
    let Some(mut p) = pair("permutations_match_cpu") else {
        return;
    };
    let mut r = Rng(5);
    for &n in sizes(&p.gpu) {
        for lens in r.layouts(n) {
            let m = lens.len();
            let s = p.seg(&lens);
            let iv = p.vec(HostVector::Int(r.ints(n, 1 << 40)));
            let bv = p.vec(HostVector::Bool(r.bools(n)));
            let perm = p.vec(HostVector::Int(seg_perm(&mut r, &lens)));
            // Indices with collisions (for the "last writer wins" permutes).
            let coll: Vec<i64> = lens
                .iter()
                .flat_map(|&l| {
                    (0..l)
                        .map(|_| (r.below(l.max(1) as u64 / 2 + 1)) as i64)
                        .collect::<Vec<_>>()
                })
                .collect();
            let coll = p.vec(HostVector::Int(coll));
            let flags = p.vec(HostVector::Bool(r.bools(n)));
            let defaults = p.vec(HostVector::Int(r.ints(n, 5)));
            let what = format!("n={n} m={m}");
            for v in [&iv, &bv] {
                let res = (
                    p.cpu.permute(&v.c, &perm.c, &s.c),
                    p.gpu.permute(&v.g, &perm.g, &s.g),
                );
                p.same(&format!("PERMUTE {what}"), res, false);
                let res = (
                    p.cpu.bpermute(&v.c, &perm.c, &s.c, &s.c),
                    p.gpu.bpermute(&v.g, &perm.g, &s.g, &s.g),
                );
                p.same(&format!("BPERMUTE {what}"), res, false);
                let res = (
                    p.cpu.bfpermute(&v.c, &coll.c, &flags.c, &s.c, &s.c),
                    p.gpu.bfpermute(&v.g, &coll.g, &flags.g, &s.g, &s.g),
                );
                p.same(&format!("BFPERMUTE {what}"), res, false);
                let res = (
                    p.cpu.fpermute(&v.c, &coll.c, &flags.c, &s.c, &s.c),
                    p.gpu.fpermute(&v.g, &coll.g, &flags.g, &s.g, &s.g),
                );
                p.same(&format!("FPERMUTE {what}"), res, false);
            }
            let res = (
                p.cpu.dpermute(&iv.c, &coll.c, &defaults.c, &s.c, &s.c),
                p.gpu.dpermute(&iv.g, &coll.g, &defaults.g, &s.g, &s.g),
            );
            p.same(&format!("DPERMUTE {what}"), res, false);
            let res = (
                p.cpu
                    .dfpermute(&iv.c, &coll.c, &flags.c, &defaults.c, &s.c, &s.c),
                p.gpu
                    .dfpermute(&iv.g, &coll.g, &flags.g, &defaults.g, &s.g, &s.g),
            );
            p.same(&format!("DFPERMUTE {what}"), res, false);
            // Per-segment operations.
            let per: Vec<i64> = lens
                .iter()
                .map(|&l| r.below(l.max(1) as u64) as i64)
                .collect();
            let ok_idx = lens.iter().all(|&l| l > 0);
            let pi = p.vec(HostVector::Int(per));
            let px = p.vec(HostVector::Int(r.ints(m, 9)));
            let res = (
                p.cpu.extract(&iv.c, &pi.c, &s.c),
                p.gpu.extract(&iv.g, &pi.g, &s.g),
            );
            p.same(&format!("EXTRACT {what} (valid {ok_idx})"), res, false);
            let res = (
                p.cpu.replace(&iv.c, &pi.c, &px.c, &s.c),
                p.gpu.replace(&iv.g, &pi.g, &px.g, &s.g),
            );
            p.same(&format!("REPLACE {what}"), res, false);
            let res = (p.cpu.dist(&px.c, &s.c), p.gpu.dist(&px.g, &s.g));
            p.same(&format!("DIST {what}"), res, false);
            let stride = p.vec(HostVector::Int(r.ints(m, 4)));
            let res = (
                p.cpu.index(&px.c, &stride.c, &s.c),
                p.gpu.index(&px.g, &stride.g, &s.g),
            );
            p.same(&format!("INDEX {what}"), res, false);
        }
    }
}

#[test]
fn bad_indices_trap() {
    let Some(mut p) = pair("bad_indices_trap") else {
        return;
    };
    let s = p.seg(&[2, 3]);
    let v = p.vec(HostVector::Int(vec![10, 20, 30, 40, 50]));
    let i = p.vec(HostVector::Int(vec![1, 0, 2, 3, 1]));
    let e = p.gpu.permute(&v.g, &i.g, &s.g).unwrap_err();
    assert_eq!(e.kind, TrapKind::IndexOutOfRange { index: 3, len: 3 });
    let e = p.gpu.bpermute(&v.g, &i.g, &s.g, &s.g).unwrap_err();
    assert_eq!(e.kind, TrapKind::IndexOutOfRange { index: 3, len: 3 });
    let k = p.vec(HostVector::Int(vec![2, 0]));
    let e = p.gpu.extract(&v.g, &k.g, &s.g).unwrap_err();
    assert_eq!(e.kind, TrapKind::IndexOutOfRange { index: 2, len: 2 });
    // Still usable afterwards.
    let ok = p.vec(HostVector::Int(vec![1, 0, 2, 0, 1]));
    let r = p.gpu.permute(&v.g, &ok.g, &s.g).unwrap();
    assert_eq!(
        p.gpu.to_host(&r).unwrap(),
        HostVector::Int(vec![20, 10, 40, 50, 30])
    );
}

/// `RANK` of floats with NaNs, infinities, signed zeros, subnormals and ties, both
/// directions, across the radix tiles (4096): the same order (and the same stable order
/// of equal keys) as the CPU sort. Ints at the ends of their range too.
#[test]
fn rank_of_special_values_matches_cpu() {
    let Some(mut p) = pair("rank_of_special_values_matches_cpu") else {
        return;
    };
    let special = [
        f64::NAN, -f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, 1.0, -1.0, 5.0e-324, -5.0e-324,
        1.0e308, -1.0e308, 2.5,
    ];
    let ints = [i64::MIN, i64::MAX, 0, -1, 1, i64::MIN + 1, i64::MAX - 1];
    let mut r = Rng(5);
    for &n in sizes(&p.gpu) {
        for lens in r.layouts(n) {
            let s = p.seg(&lens);
            let what = format!("n={n} m={}", lens.len());
            let f: Vec<f64> = (0..n).map(|_| special[r.below(special.len() as u64) as usize]).collect();
            let i: Vec<i64> = (0..n).map(|_| ints[r.below(ints.len() as u64) as usize]).collect();
            let fv = p.vec(HostVector::Float(f));
            let iv = p.vec(HostVector::Int(i));
            for up in [true, false] {
                for v in [&fv, &iv] {
                    let res = (p.cpu.rank(up, &v.c, &s.c), p.gpu.rank(up, &v.g, &s.g));
                    p.same(&format!("RANK up={up} of special values {what}"), res, false);
                }
            }
        }
    }
}

#[test]
fn pack_and_rank_match_cpu() {
    let Some(mut p) = pair("pack_and_rank_match_cpu") else {
        return;
    };
    let mut r = Rng(3);
    for &n in sizes(&p.gpu) {
        for lens in r.layouts(n) {
            let s = p.seg(&lens);
            let what = format!("n={n} m={}", lens.len());
            let iv = p.vec(HostVector::Int(r.ints(n, 100)));
            let wide = p.vec(HostVector::Int(r.ints(n, i64::MAX / 2)));
            let fv = p.vec(HostVector::Float(r.floats(n)));
            let fl = p.vec(HostVector::Bool(r.bools(n)));
            for v in [&iv, &fv] {
                let (dc, sc) = p.cpu.pack(&v.c, &fl.c, &s.c).unwrap();
                let (dg, sg) = p.gpu.pack(&v.g, &fl.g, &s.g).unwrap();
                assert_eq!(
                    p.gpu.segdes_to_host(&sg).unwrap(),
                    p.cpu.segdes_to_host(&sc).unwrap(),
                    "PACK lengths {what}"
                );
                assert_eq!(p.gpu.element_count(&sg), p.cpu.element_count(&sc));
                p.same(&format!("PACK {what}"), (Ok(dc), Ok(dg)), false);
            }
            for up in [true, false] {
                for v in [&iv, &wide, &fv] {
                    let res = (p.cpu.rank(up, &v.c, &s.c), p.gpu.rank(up, &v.g, &s.g));
                    p.same(&format!("RANK up={up} {what}"), res, false);
                }
            }
        }
    }
}

#[test]
fn superoperators_match_cpu() {
    let Some(mut p) = pair("superoperators_match_cpu") else {
        return;
    };
    let ops = [
        "(INT INT SEGDES) (* INT (- INT $0 $1) (CONST INT 7))",
        "(FLOAT FLOAT FLOAT) (+ FLOAT (* FLOAT $0 $1) $2)",
        "(FLOAT BOOL FLOAT) (SELECT FLOAT $1 (SQRT FLOAT $0) $2)",
        "(INT INT) (% INT $0 $1)",
    ];
    let mut r = Rng(17);
    for &n in sizes(&p.gpu) {
        let ints = r.ints(n, 100);
        let fl = r.floats(n);
        for src in ops {
            let op = SuperOp::parse(src).unwrap();
            let mut args = Vec::new();
            for t in &op.params {
                args.push(match t {
                    vcode::Ty::Int => Some(p.vec(HostVector::Int(ints.clone()))),
                    vcode::Ty::Float => {
                        Some(p.vec(HostVector::Float(fl.iter().map(|x| x.abs()).collect())))
                    }
                    vcode::Ty::Bool => Some(p.vec(HostVector::Bool(r.bools(n)))),
                    _ => None,
                });
            }
            let ac: Vec<Option<&<CpuCvl as Cvl>::Vector>> =
                args.iter().map(|a| a.as_ref().map(|x| &x.c)).collect();
            let ag: Vec<Option<&<CudaCvl as Cvl>::Vector>> =
                args.iter().map(|a| a.as_ref().map(|x| &x.g)).collect();
            let res = (p.cpu.fused(&op, &ac, n), p.gpu.fused(&op, &ag, n));
            p.same(&format!("FUSED {src} n={n}"), res, false);
        }
    }
    let st = p.gpu.device_stats();
    assert!(
        st.kernel_launches > 0
            && st
                .launches_by_kernel
                .keys()
                .any(|k| k.starts_with("superop_"))
    );
}

/// Folding superoperators (reductions and scans evaluated as the scan kernels load their
/// tiles) and guarded ones (body and flags in one pass), on every segment layout: the same
/// values as the CPU library, and the same traps (an integer division by zero inside a fold).
#[test]
fn folding_and_guarded_superoperators_match_cpu() {
    let Some(mut p) = pair("folding_and_guarded_superoperators_match_cpu") else {
        return;
    };
    let folds = [
        "(FLOAT FLOAT SEGDES) (+_REDUCE FLOAT (* FLOAT $0 $1) $2)",
        "(FLOAT SEGDES) (MAX_REDUCE FLOAT (- FLOAT (CONST FLOAT 0.0) (* FLOAT $0 $0)) $1)",
        "(INT INT SEGDES) (MAX_SCAN INT (- INT $0 $1) $2)",
        "(INT SEGDES) (+_SCAN INT (* INT $0 (+ INT $0 (CONST INT 1))) $1)",
        "(FLOAT SEGDES) (OR_REDUCE BOOL (< FLOAT $0 (CONST FLOAT -900.0)) $1)",
        "(INT INT SEGDES) (+_REDUCE INT (/ INT $0 $1) $2)",
    ];
    let guarded = [
        "(FLOAT FLOAT SEGDES) (+ FLOAT (SQRT FLOAT $0) (SQRT FLOAT $0)) (OR_REDUCE BOOL (< FLOAT $1 (CONST FLOAT 1.0)) $2)",
        "(INT INT SEGDES) (* INT $0 (+ INT $0 $1)) (OR_REDUCE BOOL (= INT $0 (CONST INT 5)) $2)",
        // several results, with a guard and without
        "(FLOAT FLOAT INT SEGDES) (* FLOAT (SQRT FLOAT $0) $1) (- FLOAT (SQRT FLOAT $0) (I_TO_F INT $2)) (< INT $2 (CONST INT 50)) (OR_REDUCE BOOL (< FLOAT $1 (CONST FLOAT 1.0)) $3)",
        "(FLOAT INT SEGDES) (+ FLOAT (SQRT FLOAT $0) $0) (* INT $1 (CONST INT 3)) (SQRT FLOAT $0)",
        // several reductions
        "(INT INT SEGDES) (+_REDUCE INT (* INT (+ INT $0 $1) $0) $2) (+_REDUCE INT (+ INT $0 $1) $2)",
    ];
    let mut r = Rng(29);
    for &n in sizes(&p.gpu) {
        let ints = r.ints(n, 100);
        let divisors: Vec<i64> = r.ints(n, 5).into_iter().map(|x| if x == 0 { 3 } else { x }).collect();
        let fl = r.floats(n);
        for lens in r.layouts(n) {
            let seg = p.seg(&lens);
            for (k, src) in folds.iter().chain(&guarded).enumerate() {
                let op = SuperOp::parse(src).unwrap_or_else(|e| panic!("{src}: {e:?}"));
                // A division by zero in the last fold's tree, at one element, on large inputs.
                let mut den = divisors.clone();
                if k == folds.len() - 1 && n > 2000 {
                    den[n / 2] = 0;
                }
                let mut ints_used = 0;
                let mut args = Vec::new();
                for t in &op.params {
                    args.push(match t {
                        vcode::Ty::Int => {
                            ints_used += 1;
                            Some(p.vec(HostVector::Int(if ints_used == 1 { ints.clone() } else { den.clone() })))
                        }
                        vcode::Ty::Float => Some(p.vec(HostVector::Float(fl.iter().map(|x| x.abs()).collect()))),
                        _ => None,
                    });
                }
                let ac: Vec<Option<&<CpuCvl as Cvl>::Vector>> = args.iter().map(|a| a.as_ref().map(|x| &x.c)).collect();
                let ag: Vec<Option<&<CudaCvl as Cvl>::Vector>> = args.iter().map(|a| a.as_ref().map(|x| &x.g)).collect();
                let what = format!("FUSED {src} n={n} segments={}", lens.len());
                if !op.more.is_empty() {
                    let c = p.cpu.fused_many(&op, &ac, Some(&seg.c), n);
                    let g = p.gpu.fused_many(&op, &ag, Some(&seg.g), n);
                    let (c, g) = match (c, g) {
                        (Ok(c), Ok(g)) => (c, g),
                        (c, g) => panic!("{what}: cpu {:?}, gpu {:?}", c.map(|_| ()), g.map(|_| ())),
                    };
                    assert_eq!(c.len(), op.results(), "{what}");
                    assert_eq!(g.len(), op.results(), "{what}");
                    for (i, (c, g)) in c.into_iter().zip(g).enumerate() {
                        p.same(&format!("{what} (result {i})"), (Ok(c), Ok(g)), false);
                    }
                } else if op.guard.is_some() {
                    let c = p.cpu.fused_guarded(&op, &ac, &seg.c, n);
                    let g = p.gpu.fused_guarded(&op, &ag, &seg.g, n);
                    let (c, g) = match (c, g) {
                        (Ok(c), Ok(g)) => (c, g),
                        (c, g) => panic!("{what}: cpu {:?}, gpu {:?}", c.map(|_| ()), g.map(|_| ())),
                    };
                    p.same(&format!("{what} (body)"), (Ok(c.0), Ok(g.0)), false);
                    p.same(&format!("{what} (guard)"), (Ok(c.1), Ok(g.1)), false);
                } else {
                    let res = (p.cpu.fused_fold(&op, &ac, &seg.c, n), p.gpu.fused_fold(&op, &ag, &seg.g, n));
                    // Sums of floats associate differently (tiles against chunks).
                    p.same(&what, res, k == 0);
                }
            }
        }
    }
}

#[test]
fn stats_count_launches_and_round_trips() {
    let Some(mut g) = gpu("stats_count_launches_and_round_trips") else {
        return;
    };
    let before = g.device_stats();
    let v = g.from_host(HostVector::Int(vec![1, 2, 3])).unwrap();
    let w = g.binary(BinOp::Add, &v, &v).unwrap();
    let x = g.get_int(&w, 2).unwrap();
    assert_eq!(x, 6);
    let after = g.device_stats();
    assert_eq!(after.kernel_launches, before.kernel_launches + 1);
    assert_eq!(after.host_round_trips, before.host_round_trips + 1);
    assert_eq!(after.bytes_to_device, before.bytes_to_device + 24);
    // The scalar comes back in the error mailbox's slot (32 bytes), with the checks.
    assert_eq!(after.bytes_to_host, before.bytes_to_host + 32);
    assert_eq!(g.vtype(&w), VType::Int);
}

/// Scalars the host knows (constants, lengths, and element-wise results of such) are
/// computed on the host: no kernel launch, no round trip; their device copies are written
/// only when device work comes, and not at all once dropped; traps are the CPU library's.
#[test]
fn known_scalars_stay_on_the_host() {
    let Some(mut g) = gpu("known_scalars_stay_on_the_host") else {
        return;
    };
    let before = g.device_stats();
    let a = g.from_host(HostVector::Int(vec![5])).unwrap();
    let b = g.fill(HostScalar::Int(3), 1).unwrap();
    let c = g.binary(BinOp::Add, &a, &b).unwrap();
    let f = g.binary(BinOp::Lt, &b, &c).unwrap();
    let x = g.from_host(HostVector::Float(vec![2.25])).unwrap();
    let r = g.unary(UnOp::Sqrt, &x).unwrap();
    let s = g.select(&f, &c, &a).unwrap();
    assert_eq!(g.get_int(&s, 0).unwrap(), 8);
    assert!(g.get_bool(&f, 0).unwrap());
    assert_eq!(g.to_host(&r).unwrap(), HostVector::Float(vec![1.5]));
    let sum = SuperOp::parse("(INT INT) (* INT (+ INT $0 $1) (CONST INT 2))").unwrap();
    let t = g.fused(&sum, &[Some(&a), Some(&b)], 1).unwrap();
    assert_eq!(g.get_int(&t, 0).unwrap(), 16);
    let seg = g.make_segdes(&c).unwrap();
    assert_eq!(g.element_count(&seg), 8);
    let zero = g.fill(HostScalar::Int(0), 1).unwrap();
    let e = g.binary(BinOp::Div, &a, &zero).unwrap_err();
    assert!(matches!(e.kind, TrapKind::DivisionByZero), "{e}");
    let mid = g.device_stats();
    assert_eq!(mid.host_round_trips, before.host_round_trips, "no round trip for known values");
    assert_eq!(mid.kernel_launches, before.kernel_launches, "no kernel for known values");
    // A dropped scalar's device copy is never written; a live one's is, before device work
    // that reads it: 8 + (1 + 2 + 3) on the device.
    drop((a, b, f, r, s, t, x, zero, seg));
    let v = g.from_host(HostVector::Int(vec![1, 2, 3])).unwrap();
    let one = g.segdes_from_host(&[3]).unwrap();
    let six = g.reduce(ReduceOp::Add, &v, &one).unwrap();
    let total = g.binary(BinOp::Add, &c, &six).unwrap();
    assert_eq!(g.get_int(&total, 0).unwrap(), 14);
    let after = g.device_stats();
    let fills = after.launches_by_kernel.get("dis_vu8").copied().unwrap_or(0)
        - before.launches_by_kernel.get("dis_vu8").copied().unwrap_or(0);
    assert_eq!(fills, 1, "only the live scalar is written to the device");
    assert_eq!(after.host_round_trips, mid.host_round_trips + 1, "one read of the device result");
    // The lengths of a descriptor, and a fill of a known count, have a sum the host
    // knows: a descriptor of them reads nothing back either.
    let two = g.segdes_from_host(&[3, 5]).unwrap();
    let lens = g.lengths(&two).unwrap();
    let from_lens = g.make_segdes(&lens).unwrap();
    assert_eq!(g.element_count(&from_lens), 8);
    let fours = g.fill(HostScalar::Int(4), 3).unwrap();
    let from_fill = g.make_segdes(&fours).unwrap();
    assert_eq!(g.element_count(&from_fill), 12);
    // Per-segment sums of such lengths, and a known value spread over one segment, too.
    let pairs = g.segdes_from_host(&[2]).unwrap();
    let total = g.reduce(ReduceOp::Add, &lens, &pairs).unwrap();
    let from_total = g.make_segdes(&total).unwrap();
    assert_eq!(g.element_count(&from_total), 8);
    let seven = g.fill(HostScalar::Int(7), 1).unwrap();
    let spread = g.dist(&seven, &pairs).unwrap();
    let from_spread = g.make_segdes(&spread).unwrap();
    assert_eq!(g.element_count(&from_spread), 14);
    assert_eq!(g.segdes_to_host(&from_lens).unwrap(), vec![3, 5]);
    assert_eq!(g.segdes_to_host(&from_fill).unwrap(), vec![4, 4, 4]);
    assert_eq!(g.device_stats().host_round_trips, after.host_round_trips + 2, "only the two reads of the lengths");
}

/// More than 256 scan tiles: the carries of the tile aggregates are scanned in several
/// chunks by one block (`scan_aggs`), which smaller sizes never reach.
#[test]
fn long_scans_match_cpu() {
    let Some(mut p) = pair("long_scans_match_cpu") else {
        return;
    };
    // 260 tiles of 2048; the emulation (slow) checks one segmented and one plain scan.
    let n = 532_481;
    let mut r = Rng(23);
    let v = p.vec(HostVector::Int(r.ints(n, 1000)));
    let one = p.seg(&[n as i64]);
    let mut lens = r.layouts(n).pop().unwrap_or_default();
    lens.extend([0, 0]);
    let many = p.seg(&lens);
    let long = p.seg(&[250_000, 0, n as i64 - 250_000]);
    let ops: &[ReduceOp] = if p.gpu.is_gpu() {
        &[ReduceOp::Add, ReduceOp::Max, ReduceOp::Min]
    } else {
        &[ReduceOp::Add]
    };
    for (k, s) in [&one, &many, &long].into_iter().enumerate() {
        if k == 2 && !p.gpu.is_gpu() {
            continue;
        }
        for &op in ops {
            let res = (p.cpu.scan(op, &v.c, &s.c), p.gpu.scan(op, &v.g, &s.g));
            p.same(&format!("long scan {op:?} layout {k}"), res, false);
            if p.gpu.is_gpu() {
                let res = (p.cpu.reduce(op, &v.c, &s.c), p.gpu.reduce(op, &v.g, &s.g));
                p.same(&format!("long reduce {op:?} layout {k}"), res, false);
            }
        }
    }
}

#[test]
fn deferred_checks_report_at_the_next_read() {
    let Some(mut g) = gpu("deferred_checks_report_at_the_next_read") else {
        return;
    };
    g.set_deferred_checks(true);
    let s = g.segdes_from_host(&[3]).unwrap();
    let v = g.from_host(HostVector::Int(vec![1, 2, 3])).unwrap();
    let bad = g.from_host(HostVector::Int(vec![0, 5, 1])).unwrap();
    let trips = g.device_stats().host_round_trips;
    let r = g.permute(&v, &bad, &s).expect("the error is not read yet");
    assert_eq!(
        g.device_stats().host_round_trips,
        trips,
        "no round trip in deferred mode"
    );
    let e = g.to_host(&r).unwrap_err();
    assert_eq!(e.kind, TrapKind::IndexOutOfRange { index: 5, len: 3 });
    let ok = g.to_host(&v).unwrap();
    assert_eq!(ok, HostVector::Int(vec![1, 2, 3]));
    // Several deferred checks: the first failing operation is named by its position, in
    // the one round trip of the next read; a hundred good ones need two more at most.
    let good = g.from_host(HostVector::Int(vec![2, 0, 1])).unwrap();
    let trips = g.device_stats().host_round_trips;
    for k in 0..100 {
        g.set_position(k);
        g.permute(&v, &good, &s).unwrap();
    }
    assert!(g.device_stats().host_round_trips <= trips + 2, "one read per full mailbox");
    g.set_position(200);
    g.permute(&v, &good, &s).unwrap();
    g.set_position(201);
    g.permute(&v, &bad, &s).unwrap();
    g.set_position(202);
    let w = g.permute(&v, &bad, &s).unwrap();
    g.set_position(203);
    let e = g.get_int(&w, 0).unwrap_err();
    assert_eq!(e.kind, TrapKind::IndexOutOfRange { index: 5, len: 3 });
    assert_eq!(e.deferred_at, Some(201), "the first failing operation");
    assert_eq!(g.to_host(&v).unwrap(), HostVector::Int(vec![1, 2, 3]), "the mailbox is clear again");
}

/// One segment is the fast path: no per-element segment index is ever built for it.
#[test]
fn single_segment_operations_build_no_segment_index() {
    let Some(mut p) = pair("single_segment_operations_build_no_segment_index") else {
        return;
    };
    let n = 3000;
    let mut r = Rng(31);
    let v = p.vec(HostVector::Int(r.ints(n, 100)));
    let lens = p.vec(HostVector::Int(vec![n as i64]));
    let s = p.gpu.make_segdes(&lens.g).unwrap();
    let perm = p.vec(HostVector::Int(seg_perm(&mut r, &[n as i64])));
    let one = p.vec(HostVector::Int(vec![7]));
    let fl = p.vec(HostVector::Bool(r.bools(n)));
    p.gpu.scan(ReduceOp::Add, &v.g, &s).unwrap();
    p.gpu.reduce(ReduceOp::Max, &v.g, &s).unwrap();
    p.gpu.permute(&v.g, &perm.g, &s).unwrap();
    p.gpu.bpermute(&v.g, &perm.g, &s, &s).unwrap();
    p.gpu.dpermute(&v.g, &perm.g, &v.g, &s, &s).unwrap();
    p.gpu.dist(&one.g, &s).unwrap();
    p.gpu.index(&one.g, &one.g, &s).unwrap();
    p.gpu.pack(&v.g, &fl.g, &s).unwrap();
    p.gpu.rank(true, &v.g, &s).unwrap();
    let st = p.gpu.device_stats();
    for k in ["mke_mark", "mke_check", "scan_down_max_u", "rank_segkeys"] {
        assert!(
            !st.launches_by_kernel.contains_key(k),
            "{k} launched: {:?}",
            st.launches_by_kernel
        );
    }
}
