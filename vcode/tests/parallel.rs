//! The CPU library on many threads against one thread and against plain serial
//! reference code, on random vectors long enough to take the parallel paths (over the
//! library's 64K-element grain, with segments that are empty, of one element, short, and
//! longer than a 32K-element block), and a stress test with a million one-element
//! segments. Results must be bit-identical at every thread count (float sums included)
//! and equal to the reference (float sums within rounding).

use proptest::prelude::*;
use vcode::cvl::{BinOp, ReduceOp, UnOp};
use vcode::{CpuCvl, Cvl, HostVector};

/// A small deterministic generator for the data.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Segment lengths: a mix of empty, one-element, short and long (over one block)
/// segments.
fn lengths(seed: u64, segments: usize) -> Vec<i64> {
    let mut r = Rng(seed);
    (0..segments)
        .map(|_| match r.below(10) {
            0 => 0,
            1 | 2 => 1,
            3..=7 => r.below(300) as i64,
            _ => 20_000 + r.below(60_000) as i64,
        })
        .collect()
}

struct Case {
    lens: Vec<i64>,
    ints: Vec<i64>,
    floats: Vec<f64>,
    flags: Vec<bool>,
    /// Per element: an index into its own segment.
    local: Vec<i64>,
    /// Per element: its segment's permutation (a reversal), for PERMUTE.
    perm: Vec<i64>,
}

fn case(seed: u64, segments: usize) -> Case {
    let lens = lengths(seed, segments);
    let mut r = Rng(seed ^ 0xABCD);
    let n: usize = lens.iter().map(|&l| l as usize).sum();
    let ints = (0..n).map(|_| r.below(2001) as i64 - 1000).collect();
    let floats = (0..n).map(|_| (r.below(1 << 30) as f64 / 1024.0) - 5e5).collect();
    let flags = (0..n).map(|_| r.below(3) == 0).collect();
    let mut local = Vec::with_capacity(n);
    let mut perm = Vec::with_capacity(n);
    for &l in &lens {
        for j in 0..l {
            local.push(r.below(l as u64) as i64);
            perm.push(l - 1 - j);
        }
    }
    Case { lens, ints, floats, flags, local, perm }
}

fn ranges(lens: &[i64]) -> Vec<(usize, usize)> {
    let mut st = 0;
    lens.iter()
        .map(|&l| {
            let r = (st, l as usize);
            st += l as usize;
            r
        })
        .collect()
}

/// Every operation of the library on one case, as host vectors (in a fixed order).
fn run_all(c: &mut CpuCvl, k: &Case) -> Vec<HostVector> {
    let s = c.segdes_from_host(&k.lens).unwrap();
    let iv = c.from_host(HostVector::Int(k.ints.clone())).unwrap();
    let fv = c.from_host(HostVector::Float(k.floats.clone())).unwrap();
    let bv = c.from_host(HostVector::Bool(k.flags.clone())).unwrap();
    let local = c.from_host(HostVector::Int(k.local.clone())).unwrap();
    let perm = c.from_host(HostVector::Int(k.perm.clone())).unwrap();
    let m = k.lens.len();
    let firsts = c.from_host(HostVector::Int(vec![0; m])).unwrap();
    let per_seg = c.from_host(HostVector::Int((0..m as i64).collect())).unwrap();
    let strides = c.from_host(HostVector::Int((0..m as i64).map(|x| x % 5 - 2).collect())).unwrap();
    let mut out = Vec::new();
    for (op, v) in [(ReduceOp::Add, &iv), (ReduceOp::Max, &iv), (ReduceOp::Add, &fv), (ReduceOp::Min, &fv), (ReduceOp::Mul, &fv)] {
        let r = c.scan(op, v, &s).unwrap();
        out.push(c.to_host(&r).unwrap());
        let r = c.reduce(op, v, &s).unwrap();
        out.push(c.to_host(&r).unwrap());
    }
    let r = c.scan(ReduceOp::Or, &bv, &s).unwrap();
    out.push(c.to_host(&r).unwrap());
    let r = c.binary(BinOp::Add, &iv, &local).unwrap();
    out.push(c.to_host(&r).unwrap());
    let r = c.binary(BinOp::Lt, &fv, &fv).unwrap();
    out.push(c.to_host(&r).unwrap());
    let r = c.unary(UnOp::IToF, &iv).unwrap();
    out.push(c.to_host(&r).unwrap());
    let r = c.select(&bv, &iv, &local).unwrap();
    out.push(c.to_host(&r).unwrap());
    let r = c.permute(&iv, &perm, &s).unwrap();
    out.push(c.to_host(&r).unwrap());
    let r = c.dpermute(&fv, &local, &fv, &s, &s).unwrap();
    out.push(c.to_host(&r).unwrap());
    let r = c.fpermute(&iv, &perm, &bv, &s, &s).unwrap();
    out.push(c.to_host(&r).unwrap());
    let r = c.bpermute(&iv, &local, &s, &s).unwrap();
    out.push(c.to_host(&r).unwrap());
    let r = c.bfpermute(&fv, &local, &bv, &s, &s).unwrap();
    out.push(c.to_host(&r).unwrap());
    let r = c.dfpermute(&iv, &perm, &bv, &local, &s, &s).unwrap();
    out.push(c.to_host(&r).unwrap());
    let r = c.dist(&per_seg, &s).unwrap();
    out.push(c.to_host(&r).unwrap());
    let r = c.index(&per_seg, &strides, &s).unwrap();
    out.push(c.to_host(&r).unwrap());
    let nonempty: Vec<i64> = k.lens.iter().map(|&l| l.max(1)).collect();
    let s1 = c.segdes_from_host(&nonempty).unwrap();
    let d1 = c.dist(&per_seg, &s1).unwrap();
    let r = c.extract(&d1, &firsts, &s1).unwrap();
    out.push(c.to_host(&r).unwrap());
    let (p, ps) = c.pack(&iv, &bv, &s).unwrap();
    out.push(c.to_host(&p).unwrap());
    out.push(HostVector::Int(c.segdes_to_host(&ps).unwrap()));
    let r = c.rank(true, &iv, &s).unwrap();
    out.push(c.to_host(&r).unwrap());
    let r = c.rank(false, &fv, &s).unwrap();
    out.push(c.to_host(&r).unwrap());
    c.srand(7).unwrap();
    let ones = c.fill(vcode::HostScalar::Int(1), k.ints.len()).unwrap();
    let bounds = c.binary(BinOp::Add, &local, &ones).unwrap();
    let r = c.rand(&bounds).unwrap();
    out.push(c.to_host(&r).unwrap());
    let lens = c.lengths(&s).unwrap();
    let s2 = c.make_segdes(&lens).unwrap();
    out.push(HostVector::Int(c.segdes_to_host(&s2).unwrap()));
    out
}

/// The serial reference of every integer (exact) result of [`run_all`], by position;
/// `None` where the reference is a float or not computed here.
fn reference(k: &Case) -> Vec<Option<HostVector>> {
    let rs = ranges(&k.lens);
    let n = k.ints.len();
    let scan_i = |f: fn(i64, i64) -> i64, id: i64| {
        let mut o = vec![0; n];
        for &(st, len) in &rs {
            let mut acc = None;
            for j in st..st + len {
                o[j] = acc.unwrap_or(id);
                acc = Some(acc.map_or(k.ints[j], |a| f(a, k.ints[j])));
            }
        }
        HostVector::Int(o)
    };
    let red_i = |f: fn(i64, i64) -> i64, id: i64| {
        HostVector::Int(rs.iter().map(|&(st, len)| k.ints[st..st + len].iter().copied().reduce(f).unwrap_or(id)).collect())
    };
    let mut v: Vec<Option<HostVector>> = vec![
        Some(scan_i(i64::wrapping_add, 0)),
        Some(red_i(i64::wrapping_add, 0)),
        Some(scan_i(i64::max, -2147483648)),
        Some(red_i(i64::max, -2147483648)),
        None,
        None,
        None,
        None,
        None,
        None,
    ];
    let mut or = vec![false; n];
    for &(st, len) in &rs {
        let mut acc = false;
        for j in st..st + len {
            or[j] = acc;
            acc |= k.flags[j];
        }
    }
    v.push(Some(HostVector::Bool(or)));
    v.push(Some(HostVector::Int(k.ints.iter().zip(&k.local).map(|(a, b)| a + b).collect())));
    v.push(Some(HostVector::Bool(vec![false; n])));
    v.push(Some(HostVector::Float(k.ints.iter().map(|&x| x as f64).collect())));
    v.push(Some(HostVector::Int((0..n).map(|j| if k.flags[j] { k.ints[j] } else { k.local[j] }).collect())));
    let mut perm = vec![0; n];
    let mut dperm = k.floats.clone();
    let mut fperm = vec![0; n];
    let mut gather = vec![0; n];
    let mut fgather = vec![0.0; n];
    let mut dfperm = k.local.clone();
    for &(st, len) in &rs {
        for j in st..st + len {
            perm[st + k.perm[j] as usize] = k.ints[j];
            dperm[st + k.local[j] as usize] = k.floats[j];
            if k.flags[j] {
                fperm[st + k.perm[j] as usize] = k.ints[j];
                fgather[j] = k.floats[st + k.local[j] as usize];
                dfperm[st + k.perm[j] as usize] = k.ints[j];
            }
            gather[j] = k.ints[st + k.local[j] as usize];
        }
    }
    v.push(Some(HostVector::Int(perm)));
    v.push(Some(HostVector::Float(dperm)));
    v.push(Some(HostVector::Int(fperm)));
    v.push(Some(HostVector::Int(gather)));
    v.push(Some(HostVector::Float(fgather)));
    v.push(Some(HostVector::Int(dfperm)));
    let mut dist = Vec::with_capacity(n);
    let mut index = Vec::with_capacity(n);
    for (s, &(_, len)) in rs.iter().enumerate() {
        for j in 0..len as i64 {
            dist.push(s as i64);
            index.push(s as i64 + j * (s as i64 % 5 - 2));
        }
    }
    v.push(Some(HostVector::Int(dist)));
    v.push(Some(HostVector::Int(index)));
    v.push(Some(HostVector::Int((0..k.lens.len() as i64).collect())));
    v.push(Some(HostVector::Int((0..n).filter(|&j| k.flags[j]).map(|j| k.ints[j]).collect())));
    v.push(Some(HostVector::Int(rs.iter().map(|&(st, len)| k.flags[st..st + len].iter().filter(|&&b| b).count() as i64).collect())));
    let mut rank_up = vec![0; n];
    let mut rank_down = vec![0; n];
    for &(st, len) in &rs {
        let mut p: Vec<usize> = (st..st + len).collect();
        p.sort_by_key(|&j| k.ints[j]);
        for (r, &j) in p.iter().enumerate() {
            rank_up[j] = r as i64;
        }
        let mut p: Vec<usize> = (st..st + len).collect();
        p.sort_by(|&a, &b| k.floats[b].total_cmp(&k.floats[a]));
        for (r, &j) in p.iter().enumerate() {
            rank_down[j] = r as i64;
        }
    }
    v.push(Some(HostVector::Int(rank_up)));
    v.push(Some(HostVector::Int(rank_down)));
    v.push(None);
    v.push(Some(HostVector::Int(k.lens.clone())));
    v
}

fn float_sums_close(k: &Case, got: &[HostVector]) {
    // Float +-scan and +-reduce against a serial sum, within rounding.
    let rs = ranges(&k.lens);
    let (HostVector::Float(scan), HostVector::Float(red)) = (&got[4], &got[5]) else { panic!("float results") };
    for (s, &(st, len)) in rs.iter().enumerate() {
        let mut acc = 0.0f64;
        let mut abs = 0.0f64;
        for j in st..st + len {
            let tol = 1e-9 * abs.max(1.0);
            assert!((scan[j] - acc).abs() <= tol, "+-scan at {j}: {} vs {acc}", scan[j]);
            acc += k.floats[j];
            abs += k.floats[j].abs();
        }
        assert!((red[s] - acc).abs() <= 1e-9 * abs.max(1.0), "+-reduce of segment {s}: {} vs {acc}", red[s]);
    }
}

fn check(seed: u64, segments: usize) {
    let k = case(seed, segments);
    let one = run_all(&mut CpuCvl::with_threads(1), &k);
    let two = run_all(&mut CpuCvl::with_threads(2), &k);
    let four = run_all(&mut CpuCvl::with_threads(4), &k);
    for (i, ((a, b), c)) in one.iter().zip(&two).zip(&four).enumerate() {
        // Bit-identical: compare the bit patterns of floats (NaN-proof).
        let bits = |h: &HostVector| match h {
            HostVector::Float(f) => HostVector::Int(f.iter().map(|x| x.to_bits() as i64).collect()),
            h => h.clone(),
        };
        assert_eq!(bits(a), bits(b), "result {i} differs between 1 and 2 threads");
        assert_eq!(bits(a), bits(c), "result {i} differs between 1 and 4 threads");
    }
    for (i, (want, got)) in reference(&k).iter().zip(&one).enumerate() {
        if let Some(w) = want {
            assert_eq!(w, got, "result {i} differs from the serial reference");
        }
    }
    float_sums_close(&k, &one);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]
    #[test]
    fn many_threads_match_one_thread_and_the_reference(seed in any::<u64>(), segments in 1usize..40) {
        check(seed, segments);
    }
}

#[test]
fn one_long_segment_and_many_short_ones() {
    check(1, 1);
    check(2, 3);
    check(3, 120);
}

#[test]
fn a_million_one_element_segments() {
    let n = 1_000_000usize;
    let lens = vec![1i64; n];
    let ints: Vec<i64> = (0..n as i64).map(|x| x * 7 % 1001).collect();
    for threads in [1, 2] {
        let mut c = CpuCvl::with_threads(threads);
        let s = c.segdes_from_host(&lens).unwrap();
        let v = c.from_host(HostVector::Int(ints.clone())).unwrap();
        let r = c.reduce(ReduceOp::Add, &v, &s).unwrap();
        assert_eq!(c.to_host(&r).unwrap(), HostVector::Int(ints.clone()));
        let r = c.scan(ReduceOp::Add, &v, &s).unwrap();
        assert_eq!(c.to_host(&r).unwrap(), HostVector::Int(vec![0; n]));
        let f = c.from_host(HostVector::Bool((0..n).map(|j| j % 3 == 0).collect())).unwrap();
        let (p, ps) = c.pack(&v, &f, &s).unwrap();
        assert_eq!(c.segdes_to_host(&ps).unwrap(), (0..n).map(|j| (j % 3 == 0) as i64).collect::<Vec<_>>());
        assert_eq!(c.to_host(&p).unwrap(), HostVector::Int((0..n).filter(|j| j % 3 == 0).map(|j| ints[j]).collect()));
        let zeros = c.from_host(HostVector::Int(vec![0; n])).unwrap();
        let g = c.bpermute(&v, &zeros, &s, &s).unwrap();
        assert_eq!(c.to_host(&g).unwrap(), HostVector::Int(ints.clone()));
        let d = c.dist(&v, &s).unwrap();
        assert_eq!(c.to_host(&d).unwrap(), HostVector::Int(ints.clone()));
        let r = c.rank(true, &v, &s).unwrap();
        assert_eq!(c.to_host(&r).unwrap(), HostVector::Int(vec![0; n]));
    }
}

/// `DIST`, `INDEX` and `PACK` write segments of up to 8 elements with fixed-width stores
/// (and count their flags from one load): many segments of 0 to 12 elements, mixed, in
/// one chunk and in many, against serial references.
#[test]
fn many_short_segments_of_mixed_lengths() {
    for (seed, m) in [(1u64, 1usize), (2, 7), (3, 50), (4, 100_000)] {
        let mut r = Rng(seed);
        let lens: Vec<i64> = (0..m).map(|_| r.below(13) as i64).collect();
        let n: usize = lens.iter().map(|&l| l as usize).sum();
        let per: Vec<i64> = (0..m).map(|_| r.below(1000) as i64 - 500).collect();
        let strides: Vec<i64> = (0..m).map(|_| r.below(7) as i64 - 3).collect();
        let vals: Vec<i64> = (0..n).map(|_| r.below(1 << 20) as i64).collect();
        let flags: Vec<bool> = (0..n).map(|_| r.below(3) != 0).collect();
        let mut dist = Vec::new();
        let mut index = Vec::new();
        let mut kept = Vec::new();
        let mut counts = Vec::new();
        let mut e = 0;
        for (k, &l) in lens.iter().enumerate() {
            let mut c = 0;
            for t in 0..l {
                dist.push(per[k]);
                index.push(per[k] + t * strides[k]);
                if flags[e] {
                    kept.push(vals[e]);
                    c += 1;
                }
                e += 1;
            }
            counts.push(c);
        }
        for threads in [1, 2] {
            let mut c = CpuCvl::with_threads(threads);
            let s = c.segdes_from_host(&lens).unwrap();
            let pv = c.from_host(HostVector::Int(per.clone())).unwrap();
            let sv = c.from_host(HostVector::Int(strides.clone())).unwrap();
            let d = c.dist(&pv, &s).unwrap();
            assert_eq!(c.to_host(&d).unwrap(), HostVector::Int(dist.clone()), "DIST, {m} segments");
            let i = c.index(&pv, &sv, &s).unwrap();
            assert_eq!(c.to_host(&i).unwrap(), HostVector::Int(index.clone()), "INDEX, {m} segments");
            let v = c.from_host(HostVector::Int(vals.clone())).unwrap();
            let f = c.from_host(HostVector::Bool(flags.clone())).unwrap();
            let (p, ps) = c.pack(&v, &f, &s).unwrap();
            assert_eq!(c.to_host(&p).unwrap(), HostVector::Int(kept.clone()), "PACK, {m} segments");
            assert_eq!(c.segdes_to_host(&ps).unwrap(), counts, "PACK lengths, {m} segments");
        }
    }
}

#[test]
fn a_bad_index_is_the_same_trap_at_every_thread_count() {
    let k = case(5, 30);
    let n = k.ints.len();
    let mut bad = k.local.clone();
    bad[n / 2] = -1;
    bad[n - 1] = 1 << 40;
    let mut traps = Vec::new();
    for threads in [1, 2, 4] {
        let mut c = CpuCvl::with_threads(threads);
        let s = c.segdes_from_host(&k.lens).unwrap();
        let v = c.from_host(HostVector::Int(k.ints.clone())).unwrap();
        let i = c.from_host(HostVector::Int(bad.clone())).unwrap();
        let e1 = c.bpermute(&v, &i, &s, &s).unwrap_err();
        let e2 = c.dpermute(&v, &i, &v, &s, &s).unwrap_err();
        traps.push((e1.kind.to_string(), e2.kind.to_string()));
    }
    assert!(traps[0].0.contains("-1"), "{:?}", traps[0]);
    assert!(traps.iter().all(|t| *t == traps[0]), "{traps:?}");
}

/// Superoperators that fold (reduce or scan) their element-wise values, against the
/// same tree evaluated by `FUSED` and then reduced or scanned: bit-identical, float sums
/// included, at 1, 2 and 4 threads.
/// A superoperator's operands from the case's vectors `[ints, local, floats, flags]`:
/// `$0` of type `INT` gets the ints, a later `INT` the local indices; `None` for a
/// `SEGDES`.
fn operands<'a, V>(op: &vcode::SuperOp, [iv, lv, fv, bv]: [&'a V; 4]) -> Vec<Option<&'a V>> {
    op.params
        .iter()
        .enumerate()
        .map(|(i, t)| match (t.name(), i) {
            ("FLOAT", _) => Some(fv),
            ("INT", 0) => Some(iv),
            ("INT", _) => Some(lv),
            ("BOOL", _) => Some(bv),
            _ => None,
        })
        .collect()
}

fn check_folds(seed: u64, segments: usize) {
    use vcode::SuperOp;
    let k = case(seed, segments);
    let ops = [
        "(FLOAT FLOAT SEGDES) (+_REDUCE FLOAT (* FLOAT $0 $1) $2)",
        "(FLOAT SEGDES) (+_SCAN FLOAT (* FLOAT $0 (CONST FLOAT 0.5)) $1)",
        "(INT INT SEGDES) (MAX_REDUCE INT (- INT $0 $1) $2)",
        "(INT BOOL SEGDES) (+_SCAN INT (SELECT INT $1 $0 (CONST INT 3)) $2)",
        "(FLOAT SEGDES) (MIN_REDUCE FLOAT (SQRT FLOAT $0) $1)",
        "(FLOAT SEGDES) (MAX_SCAN FLOAT (- FLOAT (CONST FLOAT 0.0) $0) $1)",
        "(BOOL FLOAT SEGDES) (OR_REDUCE BOOL (AND BOOL $0 (< FLOAT $1 (CONST FLOAT 0.0))) $2)",
        "(INT SEGDES) (*_REDUCE INT (+ INT (CONST INT 1) (% INT $0 (CONST INT 3))) $1)",
    ];
    let run = |threads: usize| -> Vec<(HostVector, HostVector)> {
        let mut c = CpuCvl::with_threads(threads);
        let s = c.segdes_from_host(&k.lens).unwrap();
        let iv = c.from_host(HostVector::Int(k.ints.clone())).unwrap();
        let fv = c.from_host(HostVector::Float(k.floats.clone())).unwrap();
        let bv = c.from_host(HostVector::Bool(k.flags.clone())).unwrap();
        let lv = c.from_host(HostVector::Int(k.local.clone())).unwrap();
        let n = k.ints.len();
        ops.iter()
            .map(|src| {
                let op = SuperOp::parse(src).unwrap();
                let args = operands(&op, [&iv, &lv, &fv, &bv]);
                let fused = c.fused_fold(&op, &args, &s, n).unwrap();
                let fold = op.fold.unwrap();
                let v = c.fused(&op.without_fold(), &args, n).unwrap();
                let parts = match fold.kind {
                    vcode::FoldKind::Reduce => c.reduce(fold.op, &v, &s).unwrap(),
                    vcode::FoldKind::Scan => c.scan(fold.op, &v, &s).unwrap(),
                };
                (c.to_host(&fused).unwrap(), c.to_host(&parts).unwrap())
            })
            .collect()
    };
    let bits = |h: &HostVector| match h {
        HostVector::Float(f) => HostVector::Int(f.iter().map(|x| x.to_bits() as i64).collect()),
        h => h.clone(),
    };
    let one = run(1);
    for (i, (fused, parts)) in one.iter().enumerate() {
        assert_eq!(bits(fused), bits(parts), "fold {i} ({}) differs from evaluating then folding", ops[i]);
    }
    for threads in [2, 4] {
        for (i, (a, b)) in one.iter().zip(run(threads)).enumerate() {
            assert_eq!(bits(&a.0), bits(&b.0), "fold {i} differs between 1 and {threads} threads");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, .. ProptestConfig::default() })]
    #[test]
    fn folding_superoperators_match_evaluate_then_fold(seed in any::<u64>(), segments in 0usize..40) {
        check_folds(seed, segments);
    }
}

#[test]
fn folds_over_one_long_segment_many_short_and_none() {
    check_folds(1, 1);
    check_folds(2, 3);
    check_folds(3, 200);
    check_folds(4, 0);
}

/// The case's descriptor (or one segment of all its elements) and its vectors on `c`, as
/// [`operands`] hands them to superoperators: ints, local ints, floats, flags.
fn superop_operands(c: &mut CpuCvl, k: &Case, one_segment: bool) -> (<CpuCvl as Cvl>::Segdes, [<CpuCvl as Cvl>::Vector; 4]) {
    let n = k.ints.len();
    let s = if one_segment { c.segdes_from_host(&[n as i64]).unwrap() } else { c.segdes_from_host(&k.lens).unwrap() };
    let iv = c.from_host(HostVector::Int(k.ints.clone())).unwrap();
    let lv = c.from_host(HostVector::Int(k.local.clone())).unwrap();
    let fv = c.from_host(HostVector::Float(k.floats.clone())).unwrap();
    let bv = c.from_host(HostVector::Bool(k.flags.clone())).unwrap();
    (s, [iv, lv, fv, bv])
}

/// A guarded superoperator (`FUSED` pushing its values and the `OR_REDUCE` of its guard)
/// against its two parts run on their own (the guard's fold, then the body), over one
/// segment (the one-pass path) and over the case's segments (a flag per segment), on 1,
/// 2 and 4 threads: bit-identical.
fn check_guards(seed: u64, segments: usize) {
    use vcode::SuperOp;
    let k = case(seed, segments);
    let ops = [
        // the guard shares `(/ FLOAT $0 $1)` and the square root with the body
        "(FLOAT FLOAT SEGDES) (LOG FLOAT (+ FLOAT (/ FLOAT $0 $1) (SQRT FLOAT $0))) (OR_REDUCE BOOL (OR BOOL (< FLOAT (/ FLOAT $0 $1) (CONST FLOAT -0.5)) (< FLOAT (SQRT FLOAT $0) (CONST FLOAT 0.5))) $2)",
        // the guard is the body
        "(INT INT SEGDES) (< INT $0 $1) (OR_REDUCE BOOL (< INT $0 $1) $2)",
        // the body is a parameter, the guard a parameter
        "(FLOAT BOOL SEGDES) $0 (OR_REDUCE BOOL $1 $2)",
        // a constant guard, a guard that never holds
        "(INT SEGDES) (* INT $0 (CONST INT 3)) (OR_REDUCE BOOL (CONST BOOL T) $1)",
        "(INT SEGDES) (+ INT $0 (CONST INT 1)) (OR_REDUCE BOOL (> INT $0 (CONST INT 9223372036854775806)) $1)",
        // the guard is the body's select flag
        "(FLOAT INT SEGDES) (SELECT FLOAT (< INT $1 (CONST INT 0)) $0 (CONST FLOAT 1.5)) (OR_REDUCE BOOL (< INT $1 (CONST INT 0)) $2)",
        // the body reads the guard's value half way, then computes another BOOL (which
        // took the guard's register, so the guard read that BOOL's values: a guard that
        // never holds held, and one that always holds did not)
        "(FLOAT FLOAT SEGDES) (SELECT FLOAT (AND BOOL (OR BOOL (< FLOAT $0 (CONST FLOAT -1.0e300)) (> FLOAT $1 $0)) (< FLOAT $1 (CONST FLOAT 1.0e300))) $0 $1) (OR_REDUCE BOOL (< FLOAT $0 (CONST FLOAT -1.0e300)) $2)",
        "(FLOAT FLOAT SEGDES) (SELECT FLOAT (AND BOOL (OR BOOL (< FLOAT $0 (CONST FLOAT 1.0e300)) (> FLOAT $1 $0)) (> FLOAT $1 (CONST FLOAT 1.0e300))) $0 $1) (OR_REDUCE BOOL (< FLOAT $0 (CONST FLOAT 1.0e300)) $2)",
    ];
    let run = |threads: usize, one_segment: bool| -> Vec<(HostVector, HostVector, HostVector, HostVector)> {
        let mut c = CpuCvl::with_threads(threads);
        let n = k.ints.len();
        let (s, [iv, lv, fv, bv]) = superop_operands(&mut c, &k, one_segment);
        ops.iter()
            .map(|src| {
                let op = SuperOp::parse(src).unwrap();
                let args = operands(&op, [&iv, &lv, &fv, &bv]);
                let (v, flags) = c.fused_guarded(&op, &args, &s, n).unwrap();
                let guard = c.fused_fold(&op.guard_op().unwrap(), &args, &s, n).unwrap();
                let body = c.fused(&op.without_fold(), &args, n).unwrap();
                (c.to_host(&v).unwrap(), c.to_host(&flags).unwrap(), c.to_host(&body).unwrap(), c.to_host(&guard).unwrap())
            })
            .collect()
    };
    let bits = |h: &HostVector| match h {
        HostVector::Float(f) => HostVector::Int(f.iter().map(|x| x.to_bits() as i64).collect()),
        h => h.clone(),
    };
    for one_segment in [true, false] {
        let one = run(1, one_segment);
        for (i, (v, flags, body, guard)) in one.iter().enumerate() {
            assert_eq!(bits(v), bits(body), "guarded {i} ({}): values differ from the body's", ops[i]);
            assert_eq!(flags, guard, "guarded {i} ({}): flags differ from the guard's reduction", ops[i]);
        }
        for threads in [2, 4] {
            for (i, (a, b)) in one.iter().zip(run(threads, one_segment)).enumerate() {
                assert_eq!((bits(&a.0), &a.1), (bits(&b.0), &b.1), "guarded {i} differs between 1 and {threads} threads");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, .. ProptestConfig::default() })]
    #[test]
    fn guarded_superoperators_match_their_parts(seed in any::<u64>(), segments in 1usize..40) {
        check_guards(seed, segments);
    }
}

#[test]
fn guards_over_one_long_segment_and_many_short() {
    check_guards(5, 1);
    check_guards(6, 200);
}

/// A superoperator with several results (`FUSED` pushing each tree's values, then its
/// guard's flags) against its parts run on their own, over one segment and over the
/// case's segments, on 1, 2 and 4 threads: bit-identical.
fn check_several_results(seed: u64, segments: usize) {
    use vcode::SuperOp;
    let k = case(seed, segments);
    let ops = [
        // the two components of a force: the square root and the division shared
        "(FLOAT FLOAT INT SEGDES) (* FLOAT (/ FLOAT $0 (SQRT FLOAT (+ FLOAT (* FLOAT $1 $1) (CONST FLOAT 1.0e-6)))) $1) (* FLOAT (/ FLOAT $0 (SQRT FLOAT (+ FLOAT (* FLOAT $1 $1) (CONST FLOAT 1.0e-6)))) (I_TO_F INT $2))",
        // results of three types, one a parameter, one a constant
        "(INT INT BOOL SEGDES) (+ INT $0 $1) (< INT (+ INT $0 $1) (CONST INT 0)) $2 (CONST FLOAT 2.5)",
        // with a guard sharing the body's subtree
        "(FLOAT FLOAT SEGDES) (LOG FLOAT (SQRT FLOAT $0)) (* FLOAT (SQRT FLOAT $0) $1) (OR_REDUCE BOOL (< FLOAT (SQRT FLOAT $0) (CONST FLOAT 0.5)) $2)",
        // several reductions (a direct N-body sum's components), floats and ints
        "(FLOAT FLOAT SEGDES) (+_REDUCE FLOAT (* FLOAT (/ FLOAT $0 (SQRT FLOAT (+ FLOAT (* FLOAT $1 $1) (CONST FLOAT 1.0)))) $1) $2) (+_REDUCE FLOAT (/ FLOAT $0 (SQRT FLOAT (+ FLOAT (* FLOAT $1 $1) (CONST FLOAT 1.0)))) $2) (+_REDUCE FLOAT $1 $2)",
        "(INT INT SEGDES) (MAX_REDUCE INT (* INT (+ INT $0 $1) $0) $2) (MAX_REDUCE INT (+ INT $0 $1) $2)",
    ];
    let run = |threads: usize, one_segment: bool| -> Vec<(Vec<HostVector>, Vec<HostVector>)> {
        let mut c = CpuCvl::with_threads(threads);
        let n = k.ints.len();
        let (s, [iv, lv, fv, bv]) = superop_operands(&mut c, &k, one_segment);
        ops.iter()
            .map(|src| {
                let op = SuperOp::parse(src).unwrap();
                let args = operands(&op, [&iv, &lv, &fv, &bv]);
                let all = c.fused_many(&op, &args, Some(&s), n).unwrap();
                let mut parts: Vec<HostVector> = (0..=op.more.len()).map(|i| {
                    let part = op.output_op(i).unwrap();
                    let v = if part.fold.is_some() { c.fused_fold(&part, &args, &s, n) } else { c.fused(&part, &args, n) }.unwrap();
                    c.to_host(&v).unwrap()
                }).collect();
                if let Some(g) = op.guard_op() {
                    let f = c.fused_fold(&g, &args, &s, n).unwrap();
                    parts.push(c.to_host(&f).unwrap());
                }
                (all.iter().map(|v| c.to_host(v).unwrap()).collect(), parts)
            })
            .collect()
    };
    let bits = |h: &HostVector| match h {
        HostVector::Float(f) => HostVector::Int(f.iter().map(|x| x.to_bits() as i64).collect()),
        h => h.clone(),
    };
    let all_bits = |v: &[HostVector]| v.iter().map(bits).collect::<Vec<_>>();
    for one_segment in [true, false] {
        let one = run(1, one_segment);
        for (i, (all, parts)) in one.iter().enumerate() {
            assert_eq!(all_bits(all), all_bits(parts), "superoperator {i} ({}): results differ from its parts'", ops[i]);
        }
        for threads in [2, 4] {
            for (i, (a, b)) in one.iter().zip(run(threads, one_segment)).enumerate() {
                assert_eq!(all_bits(&a.0), all_bits(&b.0), "superoperator {i} differs between 1 and {threads} threads");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, .. ProptestConfig::default() })]
    #[test]
    fn superoperators_with_several_results_match_their_parts(seed in any::<u64>(), segments in 1usize..40) {
        check_several_results(seed, segments);
    }
}

#[test]
fn several_results_over_one_long_segment_and_many_short() {
    check_several_results(7, 1);
    check_several_results(8, 200);
}

/// Segments long enough for the parallel radix sort (over 128K elements), beside short
/// ones: ranks equal a plain stable sort's, up and down, ints (many equal keys, negative
/// ones, the extremes) and floats (signed zeros, infinities, NaNs), on 1 and 2 threads.
#[test]
fn long_segments_rank_like_a_stable_sort() {
    let lens: Vec<i64> = vec![5, 300_000, 0, 3, 140_000, 1];
    let n: usize = lens.iter().sum::<i64>() as usize;
    let mut r = Rng(42);
    let specials = [i64::MIN, i64::MAX, 0, -1];
    let ints: Vec<i64> = (0..n)
        .map(|j| if j % 97 == 0 { specials[j % 4] } else { r.below(5000) as i64 - 2500 + ((r.below(4) as i64) << 40) })
        .collect();
    let fspecials = [0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -f64::NAN];
    let floats: Vec<f64> = (0..n).map(|j| if j % 89 == 0 { fspecials[j % 6] } else { r.below(1000) as f64 / 7.0 - 70.0 }).collect();
    let mut want_up = vec![0i64; n];
    let mut want_down = vec![0i64; n];
    let mut st = 0;
    for &len in &lens {
        let len = len as usize;
        let mut p: Vec<usize> = (st..st + len).collect();
        p.sort_by_key(|&j| ints[j]);
        for (rk, &j) in p.iter().enumerate() {
            want_up[j] = rk as i64;
        }
        let mut p: Vec<usize> = (st..st + len).collect();
        p.sort_by(|&a, &b| floats[b].total_cmp(&floats[a]));
        for (rk, &j) in p.iter().enumerate() {
            want_down[j] = rk as i64;
        }
        st += len;
    }
    for threads in [1, 2] {
        let mut c = CpuCvl::with_threads(threads);
        let s = c.segdes_from_host(&lens).unwrap();
        let iv = c.from_host(HostVector::Int(ints.clone())).unwrap();
        let fv = c.from_host(HostVector::Float(floats.clone())).unwrap();
        let up = c.rank(true, &iv, &s).unwrap();
        assert_eq!(c.to_host(&up).unwrap(), HostVector::Int(want_up.clone()), "ints up, {threads} threads");
        let down = c.rank(false, &fv, &s).unwrap();
        assert_eq!(c.to_host(&down).unwrap(), HostVector::Int(want_down.clone()), "floats down, {threads} threads");
    }
}

#[test]
fn keys_that_differ_only_between_blocks_still_rank() {
    // Every 32K-element block holds one key, different from block to block (in bytes 2
    // and 5): the radix passes that skip bytes in which all keys agree must see the
    // difference between blocks, on one thread and on two, in long and short segments.
    let n = 6 * (1 << 15) + 123;
    let key = |j: usize| {
        let b = (j >> 15) as i64;
        ((b * 7919) % 5) << 16 | ((b * 104_729) % 3) << 40
    };
    let ints: Vec<i64> = (0..n).map(key).collect();
    for lens in [vec![n as i64], vec![3, (n - 10) as i64, 7]] {
        let mut want = vec![0i64; n];
        let mut st = 0;
        for &len in &lens {
            let mut p: Vec<usize> = (st..st + len as usize).collect();
            p.sort_by_key(|&j| ints[j]);
            for (rk, &j) in p.iter().enumerate() {
                want[j] = rk as i64;
            }
            st += len as usize;
        }
        for threads in [1, 2] {
            let mut c = CpuCvl::with_threads(threads);
            let s = c.segdes_from_host(&lens).unwrap();
            let iv = c.from_host(HostVector::Int(ints.clone())).unwrap();
            let up = c.rank(true, &iv, &s).unwrap();
            assert_eq!(c.to_host(&up).unwrap(), HostVector::Int(want.clone()), "{lens:?}, {threads} threads");
        }
    }
}

/// Keys whose differing bits span at most 32 bits (the radix sorts pack each with its
/// position into one word) rank like a stable sort: small ids, ids far from zero (the
/// span shifted up), a span of exactly 32 bits, negative keys close together, and floats
/// of one sign and exponent; up and down, in long (parallel) and short segments, on 1 and
/// 2 threads.
#[test]
fn keys_of_a_narrow_span_rank_like_a_stable_sort() {
    let mut r = Rng(7);
    let lens: Vec<i64> = vec![2000, 200_000, 7, 1500];
    let n: usize = lens.iter().sum::<i64>() as usize;
    let sets: Vec<Vec<i64>> = vec![
        (0..n).map(|_| r.below(20_000) as i64).collect(),
        (0..n).map(|_| (r.below(300) as i64) << 37 | 0x5_0000).collect(),
        (0..n).map(|j| if j % 2 == 0 { r.below(1 << 32) as i64 } else { 7 }).collect(),
        (0..n).map(|_| -(r.below(1000) as i64) - 3).collect(),
    ];
    let floats: Vec<f64> = (0..n).map(|_| 1.0 + r.below(1 << 20) as f64 / (1u64 << 20) as f64).collect();
    ranks_like_a_stable_sort(&lens, &sets, &floats, &[false], &[1, 2]);
}

/// The ranks of every set of `ints` (up and down) and of `floats` (in each direction of
/// `float_dirs`, up = true) within the segments `lens`, on each thread count, against a
/// stable sort's.
fn ranks_like_a_stable_sort(lens: &[i64], sets: &[Vec<i64>], floats: &[f64], float_dirs: &[bool], threads: &[usize]) {
    let n = floats.len();
    let want = |cmp: &dyn Fn(usize, usize) -> std::cmp::Ordering| {
        let mut w = vec![0i64; n];
        let mut st = 0;
        for &len in lens {
            let mut p: Vec<usize> = (st..st + len as usize).collect();
            p.sort_by(|&a, &b| cmp(a, b));
            for (rk, &j) in p.iter().enumerate() {
                w[j] = rk as i64;
            }
            st += len as usize;
        }
        w
    };
    for &threads in threads {
        let mut c = CpuCvl::with_threads(threads);
        let s = c.segdes_from_host(lens).unwrap();
        for (k, ints) in sets.iter().enumerate() {
            let iv = c.from_host(HostVector::Int(ints.clone())).unwrap();
            for up in [true, false] {
                let r = c.rank(up, &iv, &s).unwrap();
                let w = want(&|a, b| if up { ints[a].cmp(&ints[b]) } else { ints[b].cmp(&ints[a]) });
                assert_eq!(c.to_host(&r).unwrap(), HostVector::Int(w), "set {k}, up {up}, {threads} threads");
            }
        }
        let fv = c.from_host(HostVector::Float(floats.to_vec())).unwrap();
        for &up in float_dirs {
            let r = c.rank(up, &fv, &s).unwrap();
            let w = want(&|a, b| if up { floats[a].total_cmp(&floats[b]) } else { floats[b].total_cmp(&floats[a]) });
            assert_eq!(c.to_host(&r).unwrap(), HostVector::Int(w), "floats, up {up}, {threads} threads");
        }
    }
}

/// Keys of few distinct values for their number (the library ranks them by counting,
/// not by sorting) rank like a stable sort: ids in a small range in a long segment
/// (cut into pieces per thread) and in shorter ones, a segment of one key, ids far from
/// zero, negative ones, and floats of a few values; up and down, on 1, 2 and 3 threads.
#[test]
fn keys_of_few_values_rank_like_a_stable_sort() {
    let mut r = Rng(11);
    let lens: Vec<i64> = vec![300_000, 9000, 0, 5000, 20_000, 3];
    let n: usize = lens.iter().sum::<i64>() as usize;
    let sets: Vec<Vec<i64>> = vec![
        (0..n).map(|j| if (300_000..309_000).contains(&j) { r.below(100) as i64 } else { r.below(1000) as i64 }).collect(),
        (0..n).map(|j| if (309_000..314_000).contains(&j) { 42 } else { (1 << 40) + r.below(4000) as i64 }).collect(),
        (0..n).map(|_| -(r.below(1 << 12) as i64)).collect(),
    ];
    let fvals = [1.0, 2.0, 3.0, -0.5, 0.0, -0.0];
    let floats: Vec<f64> = (0..n).map(|_| fvals[r.below(6) as usize]).collect();
    ranks_like_a_stable_sort(&lens, &sets, &floats, &[true, false], &[1, 2, 3]);
}

/// The result of every operation that reads a `DIST` kept unwritten (one value per
/// segment), at 1, 2 and 4 threads, against the same operations on the same elements
/// stored one by one: identical, float bits and traps included.
fn check_lazy_dist(seed: u64, segments: usize) {
    use vcode::cvl::cpu::CpuVector;
    use vcode::SuperOp;
    let k = case(seed, segments);
    let rs = ranges(&k.lens);
    let n = k.ints.len();
    let m = k.lens.len();
    let mut r = Rng(seed ^ 0x5EED);
    // Per-segment values; one segment's INT value is 0 (a divisor that traps).
    let pi: Vec<i64> = (0..m).map(|s| if s == m / 2 { 0 } else { r.below(200) as i64 - 100 }).collect();
    let pf: Vec<f64> = (0..m).map(|_| r.below(1 << 20) as f64 / 64.0 - 8000.0).collect();
    let pb: Vec<bool> = (0..m).map(|_| r.below(2) == 0).collect();
    let expand_i: Vec<i64> = rs.iter().enumerate().flat_map(|(s, &(_, l))| std::iter::repeat_n(pi[s], l)).collect();
    let expand_f: Vec<f64> = rs.iter().enumerate().flat_map(|(s, &(_, l))| std::iter::repeat_n(pf[s], l)).collect();
    let expand_b: Vec<bool> = rs.iter().enumerate().flat_map(|(s, &(_, l))| std::iter::repeat_n(pb[s], l)).collect();
    // Kept unwritten from 2048 elements and a mean of 16 per segment (the library's
    // `LAZY_MIN` and `LAZY_SEGMENT`).
    let lazy_expected = n >= 2048 && n >= 16 * m;
    let bits = |h: HostVector| match h {
        HostVector::Float(f) => HostVector::Int(f.iter().map(|x| x.to_bits() as i64).collect()),
        h => h,
    };
    // Runs the operations with the DISTs made by `dist` (lazily) or stored (`stored`).
    let run = |threads: usize, stored: bool| -> Vec<Result<HostVector, String>> {
        let mut c = CpuCvl::with_threads(threads);
        let s = c.segdes_from_host(&k.lens).unwrap();
        let iv = c.from_host(HostVector::Int(k.ints.clone())).unwrap();
        let fv = c.from_host(HostVector::Float(k.floats.clone())).unwrap();
        let lv = c.from_host(HostVector::Int(k.local.clone())).unwrap();
        let mk = |c: &mut CpuCvl, per: HostVector, all: HostVector| -> CpuVector {
            if stored {
                c.from_host(all).unwrap()
            } else {
                let p = c.from_host(per).unwrap();
                let d = c.dist(&p, &s).unwrap();
                assert_eq!(!d.is_written_out(), lazy_expected, "{n} elements in {m} segments");
                d
            }
        };
        let di = mk(&mut c, HostVector::Int(pi.clone()), HostVector::Int(expand_i.clone()));
        let df = mk(&mut c, HostVector::Float(pf.clone()), HostVector::Float(expand_f.clone()));
        let db = mk(&mut c, HostVector::Bool(pb.clone()), HostVector::Bool(expand_b.clone()));
        let mut out: Vec<Result<HostVector, String>> = Vec::new();
        let mut put = |c: &mut CpuCvl, r: Result<CpuVector, vcode::Trap>| {
            out.push(r.map(|v| bits(c.to_host(&v).unwrap())).map_err(|t| format!("{:?} {:?}", t.kind, t.part)));
        };
        let r = c.binary(BinOp::Add, &iv, &di);
        put(&mut c, r);
        let r = c.binary(BinOp::Lt, &di, &iv);
        put(&mut c, r);
        let r = c.binary(BinOp::Mul, &df, &fv);
        put(&mut c, r);
        let r = c.binary(BinOp::Sub, &df, &df);
        put(&mut c, r);
        let r = c.binary(BinOp::Div, &iv, &di);
        put(&mut c, r);
        let r = c.binary(BinOp::Mod, &di, &lv);
        put(&mut c, r);
        let r = c.unary(UnOp::IToF, &di);
        put(&mut c, r);
        let r = c.unary(UnOp::Not, &db);
        put(&mut c, r);
        let r = c.select(&db, &iv, &di);
        put(&mut c, r);
        let cross = SuperOp::parse("(FLOAT FLOAT FLOAT INT) (- FLOAT (* FLOAT (- FLOAT $0 $1) $2) (I_TO_F INT $3))").unwrap();
        let r = c.fused(&cross, &[Some(&fv), Some(&df), Some(&df), Some(&di)], n);
        put(&mut c, r);
        let div = SuperOp::parse("(INT INT INT) (+ INT (/ INT $0 $1) (/ INT $1 $2))").unwrap();
        let r = c.fused(&div, &[Some(&iv), Some(&di), Some(&lv)], n);
        put(&mut c, r);
        let sum = SuperOp::parse("(FLOAT FLOAT SEGDES) (+_REDUCE FLOAT (* FLOAT $0 $1) $2)").unwrap();
        let r = c.fused_fold(&sum, &[Some(&fv), Some(&df), None], &s, n);
        put(&mut c, r);
        let scan = SuperOp::parse("(INT BOOL SEGDES) (MAX_SCAN INT (SELECT INT $1 $0 (CONST INT 3)) $2)").unwrap();
        let r = c.fused_fold(&scan, &[Some(&di), Some(&db), None], &s, n);
        put(&mut c, r);
        // Written over: a unique operand takes the result; the DIST is read.
        let mut own = c.binary(BinOp::Add, &fv, &fv).unwrap();
        let mut dd = df.clone();
        let r = c.fused_reusing(&cross, &mut [Some(&mut own), Some(&mut dd), None, None], n);
        // A vector operand missing (read as an empty stand-in) fails unless nothing is read.
        assert!(n == 0 || r.is_err(), "a missing operand");
        let twice = SuperOp::parse("(FLOAT FLOAT) (* FLOAT $0 $1)").unwrap();
        let r = c.fused_reusing(&twice, &mut [Some(&mut own), Some(&mut dd)], n);
        put(&mut c, r);
        let mut owni = c.binary(BinOp::Add, &iv, &lv).unwrap();
        let r = c.binary_reusing(BinOp::Max, &mut owni, &di);
        put(&mut c, r);
        // Other operations read it written out.
        let r = c.scan(ReduceOp::Add, &df, &s);
        put(&mut c, r);
        let r = c.bpermute(&di, &lv, &s, &s);
        put(&mut c, r);
        let r = c.bpermute(&iv, &lv, &s, &s);
        put(&mut c, r);
        // A DIST only one handle holds is the default a DPERMUTE writes into.
        let p = c.from_host(HostVector::Float(pf.clone())).unwrap();
        let mut d2 = if stored { c.from_host(HostVector::Float(expand_f.clone())).unwrap() } else { c.dist(&p, &s).unwrap() };
        let half = c.from_host(HostVector::Float(k.floats.iter().map(|x| x * 0.5).collect())).unwrap();
        let r = c.dpermute_reusing(&half, &lv, &mut d2, &s, &s);
        put(&mut c, r);
        out
    };
    let want = run(1, true);
    for threads in [1, 2, 4] {
        let got = run(threads, false);
        for (i, (w, g)) in want.iter().zip(&got).enumerate() {
            assert_eq!(w, g, "operation {i} on a lazy DIST differs from a stored one ({threads} threads, {n} elements, {m} segments)");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, .. ProptestConfig::default() })]
    #[test]
    fn a_lazy_dist_reads_like_a_stored_one(seed in any::<u64>(), segments in 1usize..30) {
        check_lazy_dist(seed, segments);
    }
}

#[test]
fn lazy_dists_over_one_long_segment_and_many_short() {
    check_lazy_dist(5, 1);
    check_lazy_dist(6, 2);
    check_lazy_dist(7, 300);
}

/// The result of every operation that reads an `INDEX` kept unwritten, at 1, 2 and 4
/// threads, against the same operations on the same indices stored one by one:
/// identical, traps included. The permutes by it copy runs (stride 1) or walk them
/// (other strides, 0 and negative included); some cases hold an index out of range.
fn check_lazy_index(seed: u64, segments: usize, bad: bool) {
    use vcode::cvl::cpu::CpuVector;
    use vcode::SuperOp;
    let k = case(seed, segments);
    let n = k.ints.len();
    let m = k.lens.len();
    let mut r = Rng(seed ^ 0x1DE4);
    // The source of the gathers: one segment of `big` elements, and segments of the
    // same count as the index's, each at least as long as its index segment.
    let big = n + 100;
    let src: Vec<i64> = (0..big).map(|_| r.below(1 << 40) as i64).collect();
    let src_lens: Vec<i64> = k.lens.iter().map(|&l| l + r.below(50) as i64).collect();
    let src_n: usize = src_lens.iter().map(|&l| l as usize).sum();
    let src2: Vec<f64> = (0..src_n).map(|_| r.below(1 << 30) as f64 / 8.0).collect();
    // Per index segment: a stride, and a start that keeps the run inside `0..room`.
    let pick = |r: &mut Rng, len: i64, room: i64| -> (i64, i64) {
        let mut stride: i64 = [1, 1, 1, 2, -1, 0, 3][r.below(7) as usize];
        if (len - 1) * stride.abs() >= room {
            stride = 1;
        }
        let span = (len - 1).max(0) * stride.abs();
        let free = (room - span).max(1);
        let start = r.below(free as u64) as i64 + if stride < 0 { span } else { 0 };
        (start, stride)
    };
    let (mut one_b, mut one_k, mut seg_b, mut seg_k) = (vec![], vec![], vec![], vec![]);
    for (j, &l) in k.lens.iter().enumerate() {
        let (b, s) = pick(&mut r, l, big as i64);
        one_b.push(b);
        one_k.push(s);
        let (b, s) = pick(&mut r, l, src_lens[j]);
        seg_b.push(b);
        seg_k.push(s);
    }
    if bad {
        // One index past its segment's end (a trap at that element) and one negative.
        let j = (0..m).rev().find(|&j| k.lens[j] > 1).or_else(|| (0..m).find(|&j| k.lens[j] > 0)).unwrap_or(0);
        seg_b[j] = src_lens[j] - (k.lens[j] > 1) as i64;
        seg_k[j] = 1;
        one_b[(0..m).find(|&j| k.lens[j] > 0).unwrap_or(0)] = -1;
    }
    let expand = |b: &[i64], st: &[i64]| -> Vec<i64> {
        k.lens.iter().enumerate().flat_map(|(j, &l)| (0..l).map(move |t| b[j] + t * st[j])).collect()
    };
    // Ascending runs (as `++` and the merge of an `IF`'s branches scatter): stride 1, or
    // 2 for `holes`, with gaps of 0 to 2 between them, into `asc_n` places.
    let asc = |r: &mut Rng, holes: bool| -> (Vec<i64>, Vec<i64>, usize) {
        let (mut b, mut st, mut at) = (vec![], vec![], 0i64);
        for &l in &k.lens {
            let s = if holes && r.below(2) == 0 { 2 } else { 1 };
            at += r.below(3) as i64;
            b.push(at);
            st.push(s);
            at += (l - 1).max(0) * s + 1;
        }
        (b, st, at as usize + 5)
    };
    let (asc_b, asc_k, asc_n) = asc(&mut r, false);
    let (hol_b, hol_k, hol_n) = asc(&mut r, true);
    let mut asc_b = asc_b;
    if bad {
        if let Some(j) = (0..m).rev().find(|&j| k.lens[j] > 0) {
            asc_b[j] = asc_n as i64 - k.lens[j] + 1;
        }
    }
    let per: Vec<i64> = (0..m).map(|_| r.below(3) as i64).collect();
    let asc_lens: Vec<i64> = (0..m).map(|j| k.lens[j] + per[j] + r.below(3) as i64).collect();
    let ones = vec![1; m];
    let per_all = expand(&per, &ones);
    let (one_all, seg_all) = (expand(&one_b, &one_k), expand(&seg_b, &seg_k));
    let (asc_all, hol_all) = (expand(&asc_b, &asc_k), expand(&hol_b, &hol_k));
    let lazy_expected = n >= 2048 && n >= 16 * m;
    let run = |threads: usize, stored: bool| -> Vec<Result<HostVector, String>> {
        let mut c = CpuCvl::with_threads(threads);
        let s = c.segdes_from_host(&k.lens).unwrap();
        let whole = c.segdes_from_host(&[n as i64]).unwrap();
        let whole_src = c.segdes_from_host(&[big as i64]).unwrap();
        let ss = c.segdes_from_host(&src_lens).unwrap();
        let iv = c.from_host(HostVector::Int(k.ints.clone())).unwrap();
        let sv = c.from_host(HostVector::Int(src.clone())).unwrap();
        let fv = c.from_host(HostVector::Float(src2.clone())).unwrap();
        let mk = |c: &mut CpuCvl, b: &[i64], st: &[i64], all: &[i64]| -> CpuVector {
            if stored {
                c.from_host(HostVector::Int(all.to_vec())).unwrap()
            } else {
                let bv = c.from_host(HostVector::Int(b.to_vec())).unwrap();
                let kv = c.from_host(HostVector::Int(st.to_vec())).unwrap();
                let i = c.index(&bv, &kv, &s).unwrap();
                assert_eq!(!i.is_written_out(), lazy_expected, "{n} elements in {m} segments");
                i
            }
        };
        let mut out: Vec<Result<HostVector, String>> = Vec::new();
        let mut put = |c: &mut CpuCvl, r: Result<CpuVector, vcode::Trap>| {
            out.push(r.map(|v| match c.to_host(&v).unwrap() {
                HostVector::Float(f) => HostVector::Int(f.iter().map(|x| x.to_bits() as i64).collect()),
                h => h,
            }).map_err(|t| format!("{:?} {:?}", t.kind, t.part)));
        };
        // Gathers: from one long segment into one segment; segment by segment.
        let i1 = mk(&mut c, &one_b, &one_k, &one_all);
        let r = c.bpermute(&sv, &i1, &whole_src, &whole);
        put(&mut c, r);
        let i2 = mk(&mut c, &seg_b, &seg_k, &seg_all);
        let r = c.bpermute(&fv, &i2, &ss, &s);
        put(&mut c, r);
        // Scatters: into one long segment, into a default only one handle holds, and
        // segment by segment (runs overlap: the last writer wins).
        let d = c.from_host(HostVector::Int(vec![7; big])).unwrap();
        let r = c.dpermute(&iv, &i1, &d, &whole, &whole_src);
        put(&mut c, r);
        let z = c.from_host(HostVector::Int(vec![0])).unwrap();
        let one = c.segdes_from_host(&[big as i64]).unwrap();
        let mut d0 = c.dist(&z, &one).unwrap();
        let r = c.dpermute_reusing(&iv, &i1, &mut d0, &whole, &whole_src);
        put(&mut c, r);
        let vf = c.from_host(HostVector::Float(k.floats.clone())).unwrap();
        let df = c.from_host(HostVector::Float(vec![0.5; src_n])).unwrap();
        let r = c.dpermute(&vf, &i2, &df, &s, &ss);
        put(&mut c, r);
        // Ascending runs into a DIST (of one value, and of two over halves of the
        // destination), kept or given up; with holes between elements.
        let i3 = mk(&mut c, &asc_b, &asc_k, &asc_all);
        let whole_asc = c.segdes_from_host(&[asc_n as i64]).unwrap();
        let halves = c.segdes_from_host(&[(asc_n / 2) as i64, (asc_n - asc_n / 2) as i64]).unwrap();
        let two = c.from_host(HostVector::Int(vec![-3, -4])).unwrap();
        let z1 = c.from_host(HostVector::Int(vec![9])).unwrap();
        let d1 = c.dist(&z1, &whole_asc).unwrap();
        let r = c.dpermute(&iv, &i3, &d1, &whole, &whole_asc);
        put(&mut c, r);
        put(&mut c, Ok(d1.clone()));
        let mut d2 = c.dist(&two, &halves).unwrap();
        let r = c.dpermute_reusing(&iv, &i3, &mut d2, &whole, &whole_asc);
        put(&mut c, r);
        let i4 = mk(&mut c, &hol_b, &hol_k, &hol_all);
        let whole_hol = c.segdes_from_host(&[hol_n as i64]).unwrap();
        let z2 = c.from_host(HostVector::Float(vec![0.25])).unwrap();
        let mut d3 = c.dist(&z2, &whole_hol).unwrap();
        let r = c.dpermute_reusing(&vf, &i4, &mut d3, &whole, &whole_hol);
        put(&mut c, r);
        let d4 = c.from_host(HostVector::Float(vec![1.5; hol_n])).unwrap();
        let r = c.dpermute(&vf, &i4, &d4, &whole, &whole_hol);
        put(&mut c, r);
        // Segment by segment, ascending: into the matching segments of a destination.
        let i5 = mk(&mut c, &per, &ones, &per_all);
        let sdl = c.segdes_from_host(&asc_lens).unwrap();
        let seven = c.from_host(HostVector::Int(vec![7; m])).unwrap();
        let d5 = c.dist(&seven, &sdl).unwrap();
        let r = c.dpermute(&iv, &i5, &d5, &s, &sdl);
        put(&mut c, r);
        // Element-wise, superoperators, and operations that write it out.
        let r = c.binary(BinOp::Add, &iv, &i2);
        put(&mut c, r);
        let r = c.binary(BinOp::Lt, &i1, &iv);
        put(&mut c, r);
        let op = SuperOp::parse("(INT INT INT) (+ INT (* INT $0 $1) (/ INT $2 (CONST INT 3)))").unwrap();
        let r = c.fused(&op, &[Some(&i1), Some(&iv), Some(&i2)], n);
        put(&mut c, r);
        let sum = SuperOp::parse("(INT INT SEGDES) (+_REDUCE INT (* INT $0 $1) $2)").unwrap();
        let r = c.fused_fold(&sum, &[Some(&i2), Some(&iv), None], &s, n);
        put(&mut c, r);
        let r = c.scan(ReduceOp::Max, &i1, &s);
        put(&mut c, r);
        out
    };
    let want = run(1, true);
    assert_eq!((want[0].is_err(), want[1].is_err()), (bad && n > 0, bad && n > 0), "the gathers trap on a bad index");
    for threads in [1, 2, 4] {
        let got = run(threads, false);
        for (i, (w, g)) in want.iter().zip(&got).enumerate() {
            assert_eq!(w, g, "operation {i} on a lazy INDEX differs from a stored one ({threads} threads, {n} elements, {m} segments)");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, .. ProptestConfig::default() })]
    #[test]
    fn a_lazy_index_reads_like_a_stored_one(seed in any::<u64>(), segments in 1usize..40, bad in any::<bool>()) {
        check_lazy_index(seed, segments, bad);
    }
}

#[test]
fn lazy_indices_over_one_long_segment_and_many_short() {
    for bad in [false, true] {
        check_lazy_index(5, 1, bad);
        check_lazy_index(6, 2, bad);
        check_lazy_index(7, 300, bad);
    }
}

/// A scatter over one segment longer than a block: a permutation is written by blocks in
/// parallel; with two sources in different blocks aimed at one place the last one wins,
/// as on one thread; an index out of range is the same trap.
#[test]
fn a_long_scatter_in_parallel_keeps_the_last_writer() {
    let n = 200_000usize;
    let mut r = Rng(77);
    let mut perm: Vec<i64> = (0..n as i64).collect();
    for j in (1..n).rev() {
        perm.swap(j, r.below(j as u64 + 1) as usize);
    }
    let vals: Vec<i64> = (0..n as i64).map(|x| x * 3 + 1).collect();
    let mut dup = perm.clone();
    dup[n - 10] = dup[5];
    let mut bad = perm.clone();
    bad[150_000] = n as i64;
    let want = |ix: &[i64]| -> Vec<i64> {
        let mut out = vec![-1; n];
        for (&x, &i) in vals.iter().zip(ix) {
            out[i as usize] = x;
        }
        out
    };
    for threads in [1, 2, 4] {
        let mut c = CpuCvl::with_threads(threads);
        let s = c.segdes_from_host(&[n as i64]).unwrap();
        let v = c.from_host(HostVector::Int(vals.clone())).unwrap();
        let d = c.from_host(HostVector::Int(vec![-1; n])).unwrap();
        for ix in [&perm, &dup] {
            let i = c.from_host(HostVector::Int(ix.clone())).unwrap();
            let got = c.dpermute(&v, &i, &d, &s, &s).unwrap();
            assert_eq!(c.to_host(&got).unwrap(), HostVector::Int(want(ix)), "{threads} threads");
            let mut own = c.from_host(HostVector::Int(vec![-1; n])).unwrap();
            let got = c.dpermute_reusing(&v, &i, &mut own, &s, &s).unwrap();
            assert_eq!(c.to_host(&got).unwrap(), HostVector::Int(want(ix)), "{threads} threads, in place");
        }
        let i = c.from_host(HostVector::Int(bad.clone())).unwrap();
        let e = c.dpermute(&v, &i, &d, &s, &s).unwrap_err();
        assert!(format!("{:?}", e.kind).contains("200000"), "{threads} threads: {:?}", e.kind);
    }
}

/// The top level copies only the printed prefix of a result: `to_host_prefix` gives the
/// first elements of `to_host`, of stored vectors and of a `DIST` or `INDEX` kept
/// unwritten (which it leaves unwritten), and `any_non_finite` finds a NaN of a `DIST`
/// only where a segment holds it.
#[test]
fn prefixes_read_like_whole_copies() {
    let lens = [3000i64, 0, 2500, 1];
    let n: usize = lens.iter().map(|&l| l as usize).sum();
    for threads in [1, 2] {
        let mut c = CpuCvl::with_threads(threads);
        let s = c.segdes_from_host(&lens).unwrap();
        let per_f = c.from_host(HostVector::Float(vec![1.5, f64::NAN, -2.0, 4.0])).unwrap();
        let dist_f = c.dist(&per_f, &s).unwrap();
        let starts = c.from_host(HostVector::Int(vec![7, 0, -3, 9])).unwrap();
        let strides = c.from_host(HostVector::Int(vec![2, 1, -1, 5])).unwrap();
        let index = c.index(&starts, &strides, &s).unwrap();
        assert!(!dist_f.is_written_out() && !index.is_written_out(), "both kept unwritten");
        // The NaN is the value of the empty segment: no element holds it.
        assert!(!c.any_non_finite(&dist_f).unwrap());
        let stored = c.from_host(HostVector::Int((0..n as i64).map(|x| x * 3).collect())).unwrap();
        for k in [0, 1, 7, 2999, 3000, 3001, n - 1, n, n + 5] {
            for v in [&dist_f, &index, &stored] {
                let got = c.to_host_prefix(v, k).unwrap();
                let mut whole = match v {
                    v if std::ptr::eq(v, &stored) => c.to_host(v).unwrap(),
                    _ => {
                        // A whole copy of a lazy vector writes it out: take it from a twin.
                        let twin = if std::ptr::eq(v, &dist_f) { c.dist(&per_f, &s).unwrap() } else { c.index(&starts, &strides, &s).unwrap() };
                        c.to_host(&twin).unwrap()
                    }
                };
                whole.truncate(k);
                assert_eq!(format!("{got:?}"), format!("{whole:?}"), "prefix of {k} on {threads} threads");
            }
        }
        assert!(!dist_f.is_written_out() && !index.is_written_out(), "prefixes leave them unwritten");
        let segs = c.segdes_to_host_prefix(&s, 2).unwrap();
        assert_eq!(segs, vec![3000, 0]);
        let per_bad = c.from_host(HostVector::Float(vec![1.5, 0.0, f64::INFINITY, 4.0])).unwrap();
        let bad = c.dist(&per_bad, &s).unwrap();
        assert!(c.any_non_finite(&bad).unwrap());
        let mut fl = vec![0.25; n];
        fl[n - 1] = f64::NAN;
        let stored_bad = c.from_host(HostVector::Float(fl)).unwrap();
        assert!(c.any_non_finite(&stored_bad).unwrap());
    }
}

/// `PACK` of a superoperator's values by several flag trees at once (`Cvl::fused_pack`),
/// against a serial reference: quicksort's three filters by a per-segment pivot (a `DIST`
/// kept unwritten and one written out), and a computed `FLOAT` body packed by a `BOOL`
/// operand and its negation; segments empty, of one element, short and long; 1 and 2
/// threads.
#[test]
fn packs_by_several_flag_trees_match_a_serial_reference() {
    let three = vcode::SuperOp::parse("(INT INT SEGDES) (PACK INT $0 $2 (< INT $0 $1) (= INT $0 $1) (> INT $0 $1))").unwrap();
    let two = vcode::SuperOp::parse("(FLOAT BOOL SEGDES) (PACK FLOAT (* FLOAT $0 (CONST FLOAT 2.0)) $2 $1 (NOT BOOL $1))").unwrap();
    for (seed, segments, short) in [(1u64, 1usize, false), (2, 9, false), (3, 30, false), (4, 2000, true), (5, 100_000, true)] {
        let lens: Vec<i64> = if short {
            let mut r = Rng(seed);
            (0..segments).map(|_| r.below(13) as i64).collect()
        } else {
            lengths(seed, segments)
        };
        let n: usize = lens.iter().map(|&l| l as usize).sum();
        let mut r = Rng(seed ^ 77);
        let ints: Vec<i64> = (0..n).map(|_| r.below(41) as i64 - 20).collect();
        let floats: Vec<f64> = (0..n).map(|_| r.below(1 << 20) as f64 / 8.0).collect();
        let flags: Vec<bool> = (0..n).map(|_| r.below(3) == 0).collect();
        let pivots: Vec<i64> = (0..lens.len()).map(|_| r.below(41) as i64 - 20).collect();
        let mut want_three: Vec<(Vec<i64>, Vec<i64>)> = vec![Default::default(); 3];
        let mut want_two: Vec<(Vec<f64>, Vec<i64>)> = vec![Default::default(); 2];
        let mut spread = Vec::with_capacity(n);
        for (k, &(st, l)) in ranges(&lens).iter().enumerate() {
            for w in want_three.iter_mut() {
                w.1.push(0);
            }
            for w in want_two.iter_mut() {
                w.1.push(0);
            }
            for e in st..st + l {
                spread.push(pivots[k]);
                let c = [ints[e] < pivots[k], ints[e] == pivots[k], ints[e] > pivots[k]];
                for (w, keep) in want_three.iter_mut().zip(c) {
                    if keep {
                        w.0.push(ints[e]);
                        *w.1.last_mut().unwrap() += 1;
                    }
                }
                for (w, keep) in want_two.iter_mut().zip([flags[e], !flags[e]]) {
                    if keep {
                        w.0.push(floats[e] * 2.0);
                        *w.1.last_mut().unwrap() += 1;
                    }
                }
            }
        }
        for threads in [1, 2] {
            let mut c = CpuCvl::with_threads(threads);
            let s = c.segdes_from_host(&lens).unwrap();
            let v = c.from_host(HostVector::Int(ints.clone())).unwrap();
            let pv = c.from_host(HostVector::Int(pivots.clone())).unwrap();
            let lazy = c.dist(&pv, &s).unwrap();
            let written = c.from_host(HostVector::Int(spread.clone())).unwrap();
            for p in [&lazy, &written] {
                let got = c.fused_pack(&three, &[Some(&v), Some(p), None], &s, n).unwrap();
                assert_eq!(got.len(), 3);
                for (i, ((d, ds), w)) in got.iter().zip(&want_three).enumerate() {
                    assert_eq!(c.to_host(d).unwrap(), HostVector::Int(w.0.clone()), "flag {i}, {segments} segments, {threads} threads");
                    assert_eq!(c.segdes_to_host(ds).unwrap(), w.1, "lengths of flag {i}, {segments} segments");
                }
            }
            let fv = c.from_host(HostVector::Float(floats.clone())).unwrap();
            let bv = c.from_host(HostVector::Bool(flags.clone())).unwrap();
            let got = c.fused_pack(&two, &[Some(&fv), Some(&bv), None], &s, n).unwrap();
            for (i, ((d, ds), w)) in got.iter().zip(&want_two).enumerate() {
                assert_eq!(c.to_host(d).unwrap(), HostVector::Float(w.0.clone()), "FLOAT flag {i}, {segments} segments");
                assert_eq!(c.segdes_to_host(ds).unwrap(), w.1, "FLOAT lengths of flag {i}");
            }
            // A pack is refused as a plain element-wise superoperator, and over a
            // descriptor of the wrong element count.
            assert!(c.fused(&three, &[Some(&v), Some(&lazy), None], n).is_err());
            if n > 0 {
                let short = c.segdes_from_host(&[n as i64 - 1]).unwrap();
                assert!(c.fused_pack(&three, &[Some(&v), Some(&lazy), None], &short, n).is_err());
            }
        }
    }
}

/// A pack root whose values are an `INDEX` not written out (`max_index`: the positions
/// of the elements equal to their segment's maximum) packs as it does from the same
/// `INDEX` written out and as a serial reference: one long segment, a few, many short
/// ones; ties kept, most chunks keeping nothing; 1 and 2 threads.
#[test]
fn positions_packed_from_an_unwritten_index_match_a_written_one() {
    let op = vcode::SuperOp::parse("(INT FLOAT FLOAT SEGDES) (PACK INT $0 $3 (= FLOAT $1 $2))").unwrap();
    for (seed, lens) in [(1u64, vec![300_000i64]), (2, lengths(2, 9)), (3, vec![40; 5000])] {
        let n: usize = lens.iter().map(|&l| l as usize).sum();
        let mut r = Rng(seed);
        let xs: Vec<f64> = (0..n).map(|_| r.below(1000) as f64).collect();
        let (mut tops, mut starts, mut want, mut want_lens) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for &(st, l) in &ranges(&lens) {
            let top = xs[st..st + l].iter().copied().fold(f64::NEG_INFINITY, f64::max);
            tops.push(top);
            starts.push(st as i64 * 3);
            let kept: Vec<i64> = (st..st + l).filter(|&e| xs[e] == top).map(|e| st as i64 * 3 + 2 * (e - st) as i64).collect();
            want_lens.push(kept.len() as i64);
            want.extend(kept);
        }
        let positions: Vec<i64> = ranges(&lens).iter().flat_map(|&(st, l)| (0..l as i64).map(move |j| st as i64 * 3 + 2 * j)).collect();
        for threads in [1, 2] {
            let mut c = CpuCvl::with_threads(threads);
            let s = c.segdes_from_host(&lens).unwrap();
            let b = c.from_host(HostVector::Int(starts.clone())).unwrap();
            let k = c.from_host(HostVector::Int(vec![2; lens.len()])).unwrap();
            let lazy = c.index(&b, &k, &s).unwrap();
            let written = c.from_host(HostVector::Int(positions.clone())).unwrap();
            let xv = c.from_host(HostVector::Float(xs.clone())).unwrap();
            let tv = c.from_host(HostVector::Float(tops.clone())).unwrap();
            let top = c.dist(&tv, &s).unwrap();
            for (what, ix) in [("unwritten", &lazy), ("written", &written)] {
                let got = c.fused_pack(&op, &[Some(ix), Some(&xv), Some(&top), None], &s, n).unwrap();
                assert_eq!(got.len(), 1);
                assert_eq!(c.to_host(&got[0].0).unwrap(), HostVector::Int(want.clone()), "{what} INDEX, seed {seed}, {threads} threads");
                assert_eq!(c.segdes_to_host(&got[0].1).unwrap(), want_lens, "{what} INDEX lengths, seed {seed}");
            }
        }
    }
}

/// Float `MAX` and `MIN` reductions and scans over a segment longer than a block, folded
/// per block in parallel, give what one left-to-right fold gives wherever a NaN falls:
/// a NaN first element is held, a later one (at a block's start too) is passed over.
/// Stored and fused (the values of a superoperator), on 1 and 2 threads, by bits.
#[test]
fn float_extremes_over_blocks_fold_as_from_the_start_whatever_the_nans() {
    const BLOCK: usize = 1 << 15;
    let n = 3 * BLOCK + 100;
    let mut r = Rng(9);
    let base: Vec<f64> = (0..n).map(|_| r.below(1 << 20) as f64 / 16.0 - 30000.0).collect();
    let placements: [&[usize]; 5] = [&[], &[0], &[BLOCK], &[BLOCK, BLOCK + 1, 2 * BLOCK], &[5, 2 * BLOCK]];
    for nans in placements {
        let mut xs = base.clone();
        for &i in nans {
            xs[i] = f64::NAN;
        }
        // A large value just after a block's leading NaN: the fold must see it.
        xs[BLOCK + 2] = 1.0e9;
        xs[2 * BLOCK + 1] = -1.0e9;
        for (op, name, keep) in [(ReduceOp::Max, "MAX", (|a: f64, b: f64| b > a) as fn(f64, f64) -> bool), (ReduceOp::Min, "MIN", |a: f64, b: f64| b < a)] {
            let fold = |a: f64, b: f64| if keep(a, b) { b } else { a };
            let want_reduce = xs.iter().copied().reduce(fold).unwrap();
            let mut want_scan = Vec::with_capacity(n);
            let mut acc = None;
            for &x in &xs {
                want_scan.push(acc.unwrap_or(if op == ReduceOp::Max { vcode::cvl::FLOAT_MAX_IDENTITY } else { -vcode::cvl::FLOAT_MAX_IDENTITY }));
                acc = Some(acc.map_or(x, |a| fold(a, x)));
            }
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            let red = vcode::SuperOp::parse(&format!("(FLOAT SEGDES) ({name}_REDUCE FLOAT (* FLOAT $0 (CONST FLOAT 1.0)) $1)")).unwrap();
            let scn = vcode::SuperOp::parse(&format!("(FLOAT SEGDES) ({name}_SCAN FLOAT (* FLOAT $0 (CONST FLOAT 1.0)) $1)")).unwrap();
            for threads in [1, 2] {
                let mut c = CpuCvl::with_threads(threads);
                let s = c.segdes_from_host(&[n as i64]).unwrap();
                let v = c.from_host(HostVector::Float(xs.clone())).unwrap();
                let what = format!("{name}, NaNs at {nans:?}, {threads} threads");
                let got = |c: &mut CpuCvl, r: &<CpuCvl as Cvl>::Vector| match c.to_host(r).unwrap() {
                    HostVector::Float(f) => f,
                    other => panic!("not FLOAT: {other:?}"),
                };
                let reduced = c.reduce(op, &v, &s).unwrap();
                assert_eq!(bits(&got(&mut c, &reduced)), vec![want_reduce.to_bits()], "reduce, {what}");
                let fused = c.fused_fold(&red, &[Some(&v), None], &s, n).unwrap();
                assert_eq!(bits(&got(&mut c, &fused)), vec![want_reduce.to_bits()], "fused reduce, {what}");
                let scanned = c.scan(op, &v, &s).unwrap();
                assert_eq!(bits(&got(&mut c, &scanned)), bits(&want_scan), "scan, {what}");
                let fused = c.fused_fold(&scn, &[Some(&v), None], &s, n).unwrap();
                assert_eq!(bits(&got(&mut c, &fused)), bits(&want_scan), "fused scan, {what}");
            }
        }
    }
}

/// Float `MAX` and `MIN` reductions of segments of every size (short ones folded whole,
/// long ones per block) are bit for bit the left-to-right fold: NaNs first, inside and
/// at block starts, and extremes held by both `0.0` and `-0.0` (the first one in the
/// segment is the result), stored and fused, on 1 and 2 threads.
#[test]
fn float_extremes_are_the_fold_from_the_left_bit_for_bit() {
    let lens: Vec<i64> = vec![0, 1, 2, 31, 32, 33, 64, 100, 1000, 5000, 40_000, 70_000, 7, 300];
    let n: usize = lens.iter().sum::<i64>() as usize;
    let mut r = Rng(17);
    for case in 0..4 {
        // Case 0: random values with NaNs; 1: every value -1.0 or a zero of either sign
        // (the maximum is a zero); 2: NaN first in every segment; 3: positives and zeros
        // (the minimum is a zero).
        let xs: Vec<f64> = (0..n)
            .map(|_| match case {
                0 if r.below(50) == 0 => f64::NAN,
                0 => r.below(1 << 16) as f64 - 30000.0,
                1 => [-1.0, 0.0, -0.0][r.below(3) as usize],
                2 => r.below(1000) as f64,
                _ => [5.0, 0.0, -0.0, 3.0][r.below(4) as usize],
            })
            .collect();
        let mut xs = xs;
        if case == 2 {
            for &(st, l) in &ranges(&lens) {
                if l > 0 {
                    xs[st] = f64::NAN;
                }
            }
        }
        for (op, name, keep) in [(ReduceOp::Max, "MAX", (|a: f64, b: f64| b > a) as fn(f64, f64) -> bool), (ReduceOp::Min, "MIN", |a: f64, b: f64| b < a)] {
            let id = if op == ReduceOp::Max { vcode::cvl::FLOAT_MAX_IDENTITY } else { -vcode::cvl::FLOAT_MAX_IDENTITY };
            let want: Vec<u64> = ranges(&lens)
                .iter()
                .map(|&(st, l)| xs[st..st + l].iter().copied().reduce(|a, b| if keep(a, b) { b } else { a }).unwrap_or(id).to_bits())
                .collect();
            let red = vcode::SuperOp::parse(&format!("(FLOAT SEGDES) ({name}_REDUCE FLOAT (* FLOAT $0 (CONST FLOAT 1.0)) $1)")).unwrap();
            for threads in [1, 2] {
                let mut c = CpuCvl::with_threads(threads);
                let s = c.segdes_from_host(&lens).unwrap();
                let v = c.from_host(HostVector::Float(xs.clone())).unwrap();
                for (how, out) in [("stored", c.reduce(op, &v, &s).unwrap()), ("fused", c.fused_fold(&red, &[Some(&v), None], &s, n).unwrap())] {
                    let HostVector::Float(got) = c.to_host(&out).unwrap() else { panic!("not FLOAT") };
                    let got: Vec<u64> = got.iter().map(|x| x.to_bits()).collect();
                    assert_eq!(got, want, "{how} {name}, case {case}, {threads} threads");
                }
            }
        }
    }
}
