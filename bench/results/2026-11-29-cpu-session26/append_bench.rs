#[global_allocator]
static GLOBAL: vcode::region::Region<std::alloc::System> = vcode::region::Region::new(std::alloc::System);
use std::time::Instant;
use vcode::{Cvl, CpuCvl, HostScalar, HostVector};

fn main() {
    let m: usize = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(50000);
    let la: usize = std::env::args().nth(2).map(|s| s.parse().unwrap()).unwrap_or(10);
    let lc = 1usize;
    let lb = la;
    vcode::set_threads(std::env::var("T").ok().and_then(|s| s.parse().ok()).unwrap_or(1));
    let mut c = CpuCvl::new();
    let lens = |c: &mut CpuCvl, l: usize| c.from_host(HostVector::Int(vec![l as i64; m])).unwrap();
    let (la_v, lb_v, lc_v) = (lens(&mut c, la), lens(&mut c, lb), lens(&mut c, lc));
    let sa = c.make_segdes(&la_v).unwrap();
    let sb = c.make_segdes(&lb_v).unwrap();
    let sc = c.make_segdes(&lc_v).unwrap();
    let a = c.from_host(HostVector::Int((0..(m * la) as i64).collect())).unwrap();
    let b = c.from_host(HostVector::Int((0..(m * lb) as i64).collect())).unwrap();
    let cc = c.from_host(HostVector::Int((0..(m * lc) as i64).collect())).unwrap();
    let mut best = [f64::MAX; 6];
    for _ in 0..40 {
        let t0 = Instant::now();
        let ltot = c.from_host(HostVector::Int(vec![(la + lb + lc) as i64; m])).unwrap();
        let sd = c.make_segdes(&ltot).unwrap();
        let n = m * (la + lb + lc);
        let zero = c.fill(HostScalar::Int(0), 1).unwrap();
        let one1 = c.fill(HostScalar::Int(0), 1).unwrap();
        let _ = one1;
        let f1 = c.fill(HostScalar::Int(1), m).unwrap();
        let sm = c.make_segdes(&f1).unwrap();
        let zeros = c.fill(HostScalar::Int(0), m).unwrap();
        let ones = c.fill(HostScalar::Int(1), m).unwrap();
        let z = c.fill(HostScalar::Int(0), m).unwrap();
        let d = c.dist(&z, &sd).unwrap();
        let _ = (zero, sm);
        let t1 = Instant::now();
        let ia = c.index(&zeros, &ones, &sa).unwrap();
        let t2 = Instant::now();
        let d = { let mut d0 = d; c.dpermute_reusing(&a, &ia, &mut d0, &sa, &sd).unwrap() };
        let t3 = Instant::now();
        let offc = c.fill(HostScalar::Int(la as i64), m).unwrap();
        let ic = c.index(&offc, &ones, &sc).unwrap();
        let d = { let mut d0 = d; c.dpermute_reusing(&cc, &ic, &mut d0, &sc, &sd).unwrap() };
        let t4 = Instant::now();
        let offb = c.fill(HostScalar::Int((la + lc) as i64), m).unwrap();
        let ib = c.index(&offb, &ones, &sb).unwrap();
        let t5 = Instant::now();
        let d = { let mut d0 = d; c.dpermute_reusing(&b, &ib, &mut d0, &sb, &sd).unwrap() };
        let t6 = Instant::now();
        let h = c.get_int(&d, n - 1).unwrap();
        assert_eq!(h, ((m * lb) - 1) as i64);
        let ts = [t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5];
        for (b, t) in best.iter_mut().zip(ts) {
            *b = b.min(t.as_secs_f64() * 1e3);
        }
    }
    // The floor: the same runs copied by a plain loop into a reused buffer.
    let av: Vec<i64> = (0..(m * la) as i64).collect();
    let n = m * (la + lb + lc);
    let mut dst: Vec<i64> = vec![0; n];
    let mut floor = f64::MAX;
    for _ in 0..40 {
        let t = Instant::now();
        let w = la + lb + lc;
        for k in 0..m {
            dst[k * w..k * w + la].copy_from_slice(&av[k * la..(k + 1) * la]);
        }
        floor = floor.min(t.elapsed().as_secs_f64() * 1e3);
        std::hint::black_box(&dst);
    }
    println!("floor (plain loop, part a) {floor:.3} ms");
    println!("m {m} la {la}: setup {:.3} index_a {:.3} dperm_a {:.3} c(index+dperm) {:.3} index_b {:.3} dperm_b {:.3} ms (min of 40); per run a {:.1} ns b {:.1} ns",
        best[0], best[1], best[2], best[3], best[4], best[5], best[2] * 1e6 / m as f64, best[5] * 1e6 / m as f64);
}
