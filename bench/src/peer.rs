//! Hand-written Rust peers of the benchmark programs (the `rust-rayon` rows): the same
//! algorithms on inputs of the same distributions as the NESL programs build, written as a
//! Rust programmer would with rayon, run on a pool of a given number of threads.
//!
//! Each peer builds its input (untimed), times its core, and checks its own result
//! (untimed): the core time and the check's verdict are what it reports. `nesl bench`
//! runs every peer in a child process (`nesl bench-peer PROGRAM N`, with `NESL_THREADS`
//! set) so that the child's peak memory is the peer's.
//!
//! Where a NESL program draws with `rand`, its peer draws from a deterministic generator
//! of the same distribution (uniform floats in `[0, r)`, uniform integers in `[0, m)`).

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Below this many elements a peer works serially (no rayon splitting).
const GRAIN: usize = 1 << 13;

/// A small deterministic generator (xorshift64*, seeded through splitmix64), so the
/// peers need no dependency.
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed` (any value, zero included).
    pub fn new(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in `[0, m)` (`m > 0`).
    pub fn below(&mut self, m: u64) -> u64 {
        ((self.next_u64() as u128 * m as u128) >> 64) as u64
    }
}

/// What one peer run reports (one JSON line of `nesl bench-peer`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerReport {
    /// The program (`quicksort`, ...).
    pub program: String,
    /// The size `n`.
    pub size: usize,
    /// Threads of the pool it ran on.
    pub threads: usize,
    /// Core time in seconds.
    pub seconds: f64,
    /// Whether its self-check passed.
    pub ok: bool,
    /// The process's peak resident memory at the end (`VmHWM`), where known.
    pub peak_rss_bytes: Option<u64>,
}

/// The core time of a peer and its self-check's verdict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timed {
    /// Core time in seconds.
    pub seconds: f64,
    /// The self-check passed.
    pub ok: bool,
}

/// The peers `nesl bench-peer` runs: one per program that has one, named after it (the
/// same algorithm as the NESL program), plus the [`EXTRA_PEERS`].
pub const PEERS: &[&str] = &["dotp", "quicksort", "blackscholes", "quickhull", "barneshut", "smvm", "muladd", "barneshut-tree"];

/// Second peers of a program, each a different (faster) algorithm for the same result, shown
/// in their own rows for comparison: `(program, peer, backend label of its rows)`. The
/// ours/peer ratio is always against the program's own peer, the same algorithm.
pub const EXTRA_PEERS: &[(&str, &str, &str)] = &[("barneshut", "barneshut-tree", "rust-rayon-tree")];

/// The peer of `program`, if it has one.
pub fn peer(program: &str) -> Option<fn(usize) -> Timed> {
    Some(match program {
        "dotp" => dotp,
        "quicksort" => quicksort,
        "blackscholes" => blackscholes,
        "quickhull" => quickhull,
        "barneshut" => barneshut,
        "barneshut-tree" => barneshut_tree,
        "smvm" => smvm,
        "muladd" => muladd,
        _ => return None,
    })
}

/// Runs the peer of `program` at size `n` on a pool of `threads` threads, then reads
/// this process's peak memory.
pub fn run(program: &str, n: usize, threads: usize) -> Result<PeerReport, String> {
    let f = peer(program).ok_or_else(|| format!("no Rust peer for `{program}` (peers: {})", PEERS.join(", ")))?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(|i| format!("peer-{i}"))
        .build()
        .map_err(|e| format!("cannot build a pool of {threads} threads: {e}"))?;
    let t = pool.install(|| f(n));
    Ok(PeerReport {
        program: program.to_string(),
        size: n,
        threads: pool.current_num_threads(),
        seconds: t.seconds,
        ok: t.ok,
        peak_rss_bytes: crate::stats::peak_rss_bytes(),
    })
}

/// The elements of `xs` that `keep` accepts, in order; in parallel by blocks above the
/// grain size (each block counts its survivors, then writes them at its offset).
pub fn filter<T: Copy + Send + Sync>(xs: &[T], keep: impl Fn(&T) -> bool + Sync) -> Vec<T> {
    if xs.len() < GRAIN {
        return xs.iter().copied().filter(|x| keep(x)).collect();
    }
    let counts: Vec<usize> = xs.par_chunks(GRAIN).map(|c| c.iter().filter(|x| keep(x)).count()).collect();
    let mut out = vec![xs[0]; counts.iter().sum()];
    carve(&mut out, counts.into_iter()).into_par_iter().zip(xs.par_chunks(GRAIN)).for_each(|(dst, src)| {
        for (d, s) in dst.iter_mut().zip(src.iter().filter(|x| keep(x))) {
            *d = *s;
        }
    });
    out
}

/// Times `f`, returning its result and the seconds it took.
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let r = f();
    (r, t.elapsed().as_secs_f64())
}

// ----- dot product -----

/// The dot product: a parallel sum of products.
pub fn dotp_core(xs: &[f64], ys: &[f64]) -> f64 {
    xs.par_iter().zip(ys.par_iter()).map(|(x, y)| x * y).sum()
}

/// `programs/dotp.nesl`: `xs = i / 1000`, `ys` uniform in `[0, 1)`; checked against a
/// differently associated sum (of chunks of 100), as the program does.
pub fn dotp(n: usize) -> Timed {
    let mut rng = Rng::new(1);
    let xs: Vec<f64> = (0..n).map(|i| i as f64 / 1000.0).collect();
    let ys: Vec<f64> = (0..n).map(|_| rng.next_f64()).collect();
    let (r, seconds) = timed(|| dotp_core(&xs, &ys));
    let check: f64 =
        xs.chunks(100).zip(ys.chunks(100)).map(|(a, b)| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>()).sum();
    Timed { seconds, ok: (r - check).abs() <= 1e-9 * check.abs().max(1.0) }
}

// ----- Black-Scholes -----

fn cnd(d: f64) -> f64 {
    let k = 1.0 / (1.0 + 0.2316419 * d.abs());
    let poly = k
        * (0.31938153
            + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))));
    let w = 1.0 - 0.3989422804014327 * (-d * d / 2.0).exp() * poly;
    if d < 0.0 {
        1.0 - w
    } else {
        w
    }
}

/// The price of a European call: spot `s`, strike `x`, time `t`, rate `r`, volatility `v`.
pub fn bs_call(s: f64, x: f64, t: f64, r: f64, v: f64) -> f64 {
    let sqt = t.sqrt();
    let d1 = ((s / x).ln() + (r + v * v / 2.0) * t) / (v * sqt);
    let d2 = d1 - v * sqt;
    s * cnd(d1) - x * (-r * t).exp() * cnd(d2)
}

/// `programs/blackscholes.nesl`: spot in `[5, 30)`, strike in `[1, 100)`, time in
/// `[0.25, 10)`, r = 2%, v = 30%; every price lies between its no-arbitrage bounds.
pub fn blackscholes(n: usize) -> Timed {
    let mut rng = Rng::new(2);
    let ss: Vec<f64> = (0..n).map(|_| 5.0 + 25.0 * rng.next_f64()).collect();
    let xs: Vec<f64> = (0..n).map(|_| 1.0 + 99.0 * rng.next_f64()).collect();
    let ts: Vec<f64> = (0..n).map(|_| 0.25 + 9.75 * rng.next_f64()).collect();
    let (prices, seconds) = timed(|| {
        ss.par_iter()
            .zip(xs.par_iter())
            .zip(ts.par_iter())
            .map(|((&s, &x), &t)| bs_call(s, x, t, 0.02, 0.30))
            .collect::<Vec<f64>>()
    });
    let ok = prices.len() == n
        && prices.par_iter().zip(ss.par_iter()).zip(xs.par_iter()).zip(ts.par_iter()).all(|(((&p, &s), &x), &t)| {
            p >= (s - x * (-0.02 * t).exp()).max(0.0) - 1e-6 && p <= s + 1e-9
        });
    Timed { seconds, ok }
}

// ----- quicksort -----

/// `programs/quicksort.nesl`'s algorithm: the middle element as pivot, three filters
/// (less, equal, greater; order kept, parallel on large inputs), the less and greater
/// parts sorted in parallel (`rayon::join`), then concatenated (the parts are filtered
/// into place, so the concatenation is free).
pub fn quicksort_core(a: &[i64]) -> Vec<i64> {
    let mut v = a.to_vec();
    let mut buf = vec![0; a.len()];
    sort_in(&mut v, &mut buf);
    v
}

/// The three filters of one quicksort step, serially: `dst` gets the elements of `src`
/// less than `p`, then those equal, then those greater, each in their order in `src`.
/// Returns the numbers of lesser and equal elements.
fn filter3(src: &[i64], dst: &mut [i64], p: i64) -> (usize, usize) {
    let nl = src.iter().filter(|&&x| x < p).count();
    let ne = src.iter().filter(|&&x| x == p).count();
    let (mut il, mut ie, mut ig) = (0, nl, nl + ne);
    for &x in src {
        let (lt, gt) = (x < p, x > p);
        dst[if lt { il } else if gt { ig } else { ie }] = x;
        il += lt as usize;
        ig += gt as usize;
        ie += (!lt && !gt) as usize;
    }
    (nl, ne)
}

/// Splits `s` into consecutive pieces of the given lengths.
fn carve<T>(mut s: &mut [T], lens: impl Iterator<Item = usize>) -> Vec<&mut [T]> {
    let mut out = Vec::new();
    for l in lens {
        let (head, tail) = std::mem::take(&mut s).split_at_mut(l);
        out.push(head);
        s = tail;
    }
    out
}

/// The three filters of one quicksort step, in place of `a` (through `buf`, as long as
/// `a`): afterwards `a` holds the lesser, equal and greater elements, each in their order.
/// In parallel above the grain size: every block filters into its own part of `buf`, then
/// the blocks' parts move to their places in `a`. Returns the numbers of lesser and equal.
fn filter3_in_place(a: &mut [i64], buf: &mut [i64], p: i64) -> (usize, usize) {
    if a.len() < GRAIN {
        let r = filter3(a, buf, p);
        a.copy_from_slice(buf);
        return r;
    }
    let counts: Vec<(usize, usize, usize)> = a
        .par_chunks(GRAIN)
        .zip(buf.par_chunks_mut(GRAIN))
        .map(|(src, dst)| {
            let (l, e) = filter3(src, dst, p);
            (l, e, src.len() - l - e)
        })
        .collect();
    let nl: usize = counts.iter().map(|c| c.0).sum();
    let ne: usize = counts.iter().map(|c| c.1).sum();
    let (al, rest) = a.split_at_mut(nl);
    let (ae, ag) = rest.split_at_mut(ne);
    let dl = carve(al, counts.iter().map(|c| c.0));
    let de = carve(ae, counts.iter().map(|c| c.1));
    let dg = carve(ag, counts.iter().map(|c| c.2));
    dl.into_par_iter().zip(de).zip(dg).zip(buf.par_chunks(GRAIN)).for_each(|(((l, e), g), src)| {
        let (nl, ne) = (l.len(), e.len());
        l.copy_from_slice(&src[..nl]);
        e.copy_from_slice(&src[nl..nl + ne]);
        g.copy_from_slice(&src[nl + ne..]);
    });
    (nl, ne)
}

/// Sorts `a` by the quicksort of the NESL program, in place: the filters write the
/// concatenation of their results in place of `a` (through `buf`, as long as `a`) and the
/// recursive calls sort the less and greater parts where they lie.
fn sort_in(a: &mut [i64], buf: &mut [i64]) {
    let n = a.len();
    if n < 2 {
        return;
    }
    let p = a[n / 2];
    let (nl, ne) = filter3_in_place(a, buf, p);
    let (lesser, rest) = a.split_at_mut(nl);
    let greater = &mut rest[ne..];
    let (bl, brest) = buf.split_at_mut(nl);
    let bg = &mut brest[ne..];
    if n >= GRAIN / 8 {
        rayon::join(|| sort_in(lesser, bl), || sort_in(greater, bg));
    } else {
        sort_in(lesser, bl);
        sort_in(greater, bg);
    }
}

/// `programs/quicksort.nesl`: `n` integers uniform in `[0, 10^9)`; the result is sorted
/// and has the input's length and sum.
pub fn quicksort(n: usize) -> Timed {
    let mut rng = Rng::new(3);
    let xs: Vec<i64> = (0..n).map(|_| rng.below(1_000_000_000) as i64).collect();
    let (sorted, seconds) = timed(|| quicksort_core(&xs));
    let sum = |v: &[i64]| v.iter().fold(0i64, |a, &b| a.wrapping_add(b));
    let ok = sorted.len() == n && sorted.windows(2).all(|w| w[0] <= w[1]) && sum(&sorted) == sum(&xs);
    Timed { seconds, ok }
}

// ----- quickhull -----

/// A point of the plane.
pub type Point = (f64, f64);

/// `(a - o) x (b - o)`: positive when `o` lies left of the line from `a` to `b`.
pub fn cross(o: Point, a: Point, b: Point) -> f64 {
    (a.0 - o.0) * (b.1 - o.1) - (a.1 - o.1) * (b.0 - o.0)
}

/// The first of the larger: `(index, value)` pairs, ties to the smaller index.
fn better(x: (usize, f64), y: (usize, f64)) -> (usize, f64) {
    if y.1 > x.1 || (y.1 == x.1 && y.0 < x.0) {
        y
    } else {
        x
    }
}

/// `hsplit` of `programs/quickhull.nesl`: the hull vertices from `a` (included) towards
/// `b` (excluded) of the points left of the line from `a` to `b`. The farthest of them
/// (`max_index` of the cross products) splits the line; both halves recurse in parallel.
fn hsplit(pts: &[Point], a: Point, b: Point) -> Vec<Point> {
    let none = (usize::MAX, 0.0);
    let farthest = if pts.len() >= GRAIN {
        pts.par_iter().enumerate().map(|(i, &q)| (i, cross(q, a, b))).reduce(|| none, better)
    } else {
        pts.iter().enumerate().map(|(i, &q)| (i, cross(q, a, b))).fold(none, better)
    };
    if farthest.1 <= 0.0 {
        // no point lies left of the line (the NESL program's `#kx == 0`)
        return vec![a];
    }
    let m = pts[farthest.0];
    let kept = filter(pts, |&q| cross(q, a, b) > 0.0);
    let (mut l, r) = if kept.len() >= GRAIN / 8 {
        rayon::join(|| hsplit(&kept, a, m), || hsplit(&kept, m, b))
    } else {
        (hsplit(&kept, a, m), hsplit(&kept, m, b))
    };
    l.extend_from_slice(&r);
    l
}

/// The convex hull (clockwise, from the leftmost point) by `programs/quickhull.nesl`'s
/// algorithm: split at the leftmost and rightmost points, recurse on both sides in parallel.
pub fn quickhull_core(pts: &[Point]) -> Vec<Point> {
    if pts.is_empty() {
        return vec![];
    }
    let ends = |sign: f64| pts.par_iter().enumerate().map(|(i, p)| (i, sign * p.0)).reduce(|| (usize::MAX, f64::NEG_INFINITY), better).0;
    let (i, j) = (ends(-1.0), ends(1.0));
    let (mut upper, lower) = rayon::join(|| hsplit(pts, pts[i], pts[j]), || hsplit(pts, pts[j], pts[i]));
    upper.extend_from_slice(&lower);
    upper
}

/// Whether `hull` is a convex polygon (at least 3 vertices turning one way, as the NESL
/// program checks) with every point of `pts` inside it or on its boundary.
pub fn hull_ok(hull: &[Point], pts: &[Point]) -> bool {
    let m = hull.len();
    if m < 3 {
        return false;
    }
    let turns: Vec<f64> = (0..m).map(|i| cross(hull[i], hull[(i + 1) % m], hull[(i + 2) % m])).collect();
    let cw = turns.iter().all(|&t| t <= 0.0);
    if !cw && !turns.iter().all(|&t| t >= 0.0) {
        return false;
    }
    let sign = if cw { 1.0 } else { -1.0 };
    pts.par_iter().all(|&q| (0..m).all(|i| sign * cross(q, hull[i], hull[(i + 1) % m]) <= 1e-12))
}

/// `programs/quickhull.nesl`: `n` points uniform in the unit square; the hull is convex
/// and holds every point.
pub fn quickhull(n: usize) -> Timed {
    let mut rng = Rng::new(4);
    let xs: Vec<f64> = (0..n).map(|_| rng.next_f64()).collect();
    let pts: Vec<Point> = xs.into_iter().map(|x| (x, rng.next_f64())).collect();
    let (hull, seconds) = timed(|| quickhull_core(&pts));
    Timed { seconds, ok: hull_ok(&hull, &pts) }
}

// ----- Barnes-Hut -----

/// A body: position and mass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Body {
    /// x coordinate.
    pub x: f64,
    /// y coordinate.
    pub y: f64,
    /// Mass.
    pub m: f64,
}

/// The pull of mass `m` at `(gx, gy)` on a unit mass at `(x, y)` (softened as in the
/// NESL program).
fn pull(x: f64, y: f64, gx: f64, gy: f64, m: f64) -> (f64, f64) {
    let (dx, dy) = (gx - x, gy - y);
    let r2 = dx * dx + dy * dy + 1.0e-6;
    let fm = m / (r2 * r2.sqrt());
    (fm * dx, fm * dy)
}

/// A cell of the quadtree.
enum Cell {
    /// A cell of one body, or one too small to split: its bodies pull one by one.
    Leaf(Vec<Body>),
    /// A split cell: its side, centre of mass and mass, and its non-empty quadrants.
    Inner { size: f64, gx: f64, gy: f64, m: f64, quads: Vec<Cell> },
}

/// The quadtree of `bodies` in the square cell of centre `(cx, cy)` and side `size`, as
/// `bh` of `programs/barneshut.nesl` walks it: a cell of one body or of side under 1e-9
/// is a leaf; otherwise its four quadrants (a body on a dividing line goes right / up).
fn build(bodies: Vec<Body>, cx: f64, cy: f64, size: f64) -> Option<Cell> {
    if bodies.is_empty() {
        return None;
    }
    if bodies.len() == 1 || size < 1.0e-9 {
        return Some(Cell::Leaf(bodies));
    }
    let m: f64 = bodies.iter().map(|b| b.m).sum();
    let gx = bodies.iter().map(|b| b.x * b.m).sum::<f64>() / m;
    let gy = bodies.iter().map(|b| b.y * b.m).sum::<f64>() / m;
    let mut parts: [Vec<Body>; 4] = Default::default();
    for b in &bodies {
        parts[(b.x >= cx) as usize + 2 * (b.y >= cy) as usize].push(*b);
    }
    let big = bodies.len() >= GRAIN / 8;
    drop(bodies);
    let h = size / 2.0;
    let centres = [(cx - h / 2.0, cy - h / 2.0), (cx + h / 2.0, cy - h / 2.0), (cx - h / 2.0, cy + h / 2.0), (cx + h / 2.0, cy + h / 2.0)];
    let jobs: Vec<(Vec<Body>, (f64, f64))> = parts.into_iter().zip(centres).collect();
    let quads: Vec<Cell> = if big {
        jobs.into_par_iter().filter_map(|(p, (qx, qy))| build(p, qx, qy, h)).collect()
    } else {
        jobs.into_iter().filter_map(|(p, (qx, qy))| build(p, qx, qy, h)).collect()
    };
    Some(Cell::Inner { size, gx, gy, m, quads })
}

/// The force on a unit mass at `(x, y)` from `cell`: a cell whose centre of mass is
/// farther than `size * sqrt(2)` pulls as one mass (theta = 0.71, the NESL program's
/// opening criterion); a nearer one opens.
fn force(cell: &Cell, x: f64, y: f64) -> (f64, f64) {
    match cell {
        Cell::Leaf(bodies) => bodies.iter().fold((0.0, 0.0), |a, b| {
            let f = pull(x, y, b.x, b.y, b.m);
            (a.0 + f.0, a.1 + f.1)
        }),
        Cell::Inner { size, gx, gy, m, quads } => {
            if (x - gx) * (x - gx) + (y - gy) * (y - gy) > 2.0 * size * size {
                pull(x, y, *gx, *gy, *m)
            } else {
                quads.iter().fold((0.0, 0.0), |a, q| {
                    let f = force(q, x, y);
                    (a.0 + f.0, a.1 + f.1)
                })
            }
        }
    }
}

/// The force on every body from all bodies (itself included, which pulls with zero
/// force), through a quadtree of the unit square built first and then walked once per body:
/// the usual Barnes-Hut, a different algorithm from the NESL program's.
pub fn barneshut_tree_core(bodies: &[Body]) -> Vec<(f64, f64)> {
    match build(bodies.to_vec(), 0.5, 0.5, 1.0) {
        None => vec![],
        Some(root) => bodies.par_iter().map(|b| force(&root, b.x, b.y)).collect(),
    }
}

/// A target of [`bh_sets`]: a body's index and position.
type Target = (usize, f64, f64);

/// `bh` of `programs/barneshut.nesl` as written, with no tree: the bodies `ps` of one
/// square cell and the targets `ts` that must look inside it. Targets far from the cell's
/// centre of mass take its pull; the near ones go on into the four quadrants (each quadrant
/// filtering the cell's bodies), in parallel above the grain. Appends a `(target, fx, fy)`
/// term per pull to `out`: far terms first, then the quadrants' in order, as the NESL
/// function concatenates them.
fn bh_sets(ts: &[Target], ps: &[Body], cx: f64, cy: f64, size: f64, out: &mut Vec<(usize, f64, f64)>) {
    if ts.is_empty() || ps.is_empty() {
        return;
    }
    if ps.len() == 1 || size < 1.0e-9 {
        out.extend(ts.iter().map(|&(i, x, y)| {
            let f = direct_force(&Body { x, y, m: 0.0 }, ps);
            (i, f.0, f.1)
        }));
        return;
    }
    let m: f64 = ps.iter().map(|b| b.m).sum();
    let gx = ps.iter().map(|b| b.x * b.m).sum::<f64>() / m;
    let gy = ps.iter().map(|b| b.y * b.m).sum::<f64>() / m;
    let far = |&(_, x, y): &Target| (x - gx) * (x - gx) + (y - gy) * (y - gy) > 2.0 * size * size;
    out.extend(ts.iter().filter(|t| far(t)).map(|&(i, x, y)| {
        let f = pull(x, y, gx, gy, m);
        (i, f.0, f.1)
    }));
    let near: Vec<Target> = ts.iter().copied().filter(|t| !far(t)).collect();
    let h = size / 2.0;
    let inq = |qx: f64, qy: f64| -> Vec<Body> {
        ps.iter()
            .copied()
            .filter(|b| (if qx > cx { b.x >= cx } else { b.x < cx }) && (if qy > cy { b.y >= cy } else { b.y < cy }))
            .collect()
    };
    let centres = [(cx - h / 2.0, cy - h / 2.0), (cx + h / 2.0, cy - h / 2.0), (cx - h / 2.0, cy + h / 2.0), (cx + h / 2.0, cy + h / 2.0)];
    if near.len() + ps.len() >= GRAIN {
        let subs: Vec<Vec<(usize, f64, f64)>> = centres
            .par_iter()
            .map(|&(qx, qy)| {
                let mut sub = Vec::new();
                bh_sets(&near, &inq(qx, qy), qx, qy, h, &mut sub);
                sub
            })
            .collect();
        for sub in subs {
            out.extend(sub);
        }
    } else {
        for (qx, qy) in centres {
            bh_sets(&near, &inq(qx, qy), qx, qy, h, out);
        }
    }
}

/// The force on every body from all bodies, by the NESL program's algorithm: [`bh_sets`]
/// from the unit square with every body a target, then the terms sorted by target (a
/// stable sort, as `rank` is) and summed per target (`total` of the NESL program).
pub fn barneshut_core(bodies: &[Body]) -> Vec<(f64, f64)> {
    let ts: Vec<Target> = bodies.iter().enumerate().map(|(i, b)| (i, b.x, b.y)).collect();
    let mut terms = Vec::new();
    bh_sets(&ts, bodies, 0.5, 0.5, 1.0, &mut terms);
    terms.par_sort_by_key(|t| t.0);
    let mut fs: Vec<(f64, f64)> = Vec::with_capacity(bodies.len());
    let mut at = usize::MAX;
    for (i, fx, fy) in terms {
        if i == at {
            let f = fs.last_mut().expect("a term was pushed for this target");
            f.0 += fx;
            f.1 += fy;
        } else {
            fs.push((fx, fy));
            at = i;
        }
    }
    fs
}

/// The force on `b` summed directly over `all`.
pub fn direct_force(b: &Body, all: &[Body]) -> (f64, f64) {
    all.iter().fold((0.0, 0.0), |a, q| {
        let f = pull(b.x, b.y, q.x, q.y, q.m);
        (a.0 + f.0, a.1 + f.1)
    })
}

/// The input of `programs/barneshut.nesl`: `n` bodies uniform in the unit square with
/// masses in `[0.5, 1.5)`.
fn bodies(n: usize) -> Vec<Body> {
    let mut rng = Rng::new(5);
    let xs: Vec<f64> = (0..n).map(|_| rng.next_f64()).collect();
    let ys: Vec<f64> = (0..n).map(|_| rng.next_f64()).collect();
    xs.iter().zip(&ys).map(|(&x, &y)| Body { x, y, m: 0.5 + rng.next_f64() }).collect()
}

/// The NESL program's check: one force per body, all finite, and the forces of the first
/// 16 bodies, as one vector, within 5% of the direct sum's.
fn forces_ok(bodies: &[Body], fs: &[(f64, f64)]) -> bool {
    let k = bodies.len().min(16);
    let (mut err2, mut norm2) = (0.0, 0.0);
    for (b, f) in bodies[..k].iter().zip(fs) {
        let d = direct_force(b, bodies);
        err2 += (f.0 - d.0) * (f.0 - d.0) + (f.1 - d.1) * (f.1 - d.1);
        norm2 += d.0 * d.0 + d.1 * d.1;
    }
    fs.len() == bodies.len() && fs.iter().all(|f| f.0.is_finite() && f.1.is_finite()) && err2.sqrt() <= 0.05 * norm2.sqrt() + 1e-9
}

/// `programs/barneshut.nesl` by its own algorithm (target sets, [`barneshut_core`]).
pub fn barneshut(n: usize) -> Timed {
    let bodies = bodies(n);
    let (fs, seconds) = timed(|| barneshut_core(&bodies));
    Timed { seconds, ok: forces_ok(&bodies, &fs) }
}

/// The same forces through a quadtree ([`barneshut_tree_core`]).
pub fn barneshut_tree(n: usize) -> Timed {
    let bodies = bodies(n);
    let (fs, seconds) = timed(|| barneshut_tree_core(&bodies));
    Timed { seconds, ok: forces_ok(&bodies, &fs) }
}

// ----- sparse matrix times vector -----

/// A sparse matrix in compressed rows: row `i` holds `cols[offsets[i]..offsets[i + 1]]`.
pub struct Csr {
    /// Row starts, one more than the rows.
    pub offsets: Vec<usize>,
    /// Column of each entry.
    pub cols: Vec<usize>,
    /// Value of each entry.
    pub vals: Vec<f64>,
}

/// The product of `m` and `v`, one row per task.
pub fn smvm_core(m: &Csr, v: &[f64]) -> Vec<f64> {
    (0..m.offsets.len() - 1)
        .into_par_iter()
        .with_min_len(256)
        .map(|i| (m.offsets[i]..m.offsets[i + 1]).map(|k| m.vals[k] * v[m.cols[k]]).sum())
        .collect()
}

/// `programs/smvm.nesl`: `n` rows of `[0, 17)` entries of value 1.0 at columns uniform in
/// `[0, n)`, times `v = [0, 1, ..., n - 1]`; row `i` of the result is the sum of its columns.
pub fn smvm(n: usize) -> Timed {
    let mut rng = Rng::new(6);
    let lens: Vec<usize> = (0..n).map(|_| rng.below(17) as usize).collect();
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0);
    for l in &lens {
        offsets.push(offsets.last().copied().unwrap_or(0) + l);
    }
    let nnz = offsets[n];
    let cols: Vec<usize> = (0..nnz).map(|_| rng.below(n.max(1) as u64) as usize).collect();
    let m = Csr { offsets, cols, vals: vec![1.0; nnz] };
    let v: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let (res, seconds) = timed(|| smvm_core(&m, &v));
    let ok = res.len() == n
        && res.par_iter().enumerate().all(|(i, &r)| r == m.cols[m.offsets[i]..m.offsets[i + 1]].iter().sum::<usize>() as f64);
    Timed { seconds, ok }
}

// ----- multiply-add -----

/// `programs/muladd.nesl`: `x * y + z` with `xs = [0, 1, ...]` and `ys`, `zs` uniform
/// in `[0, 1)`; every element is checked.
pub fn muladd(n: usize) -> Timed {
    let mut rng = Rng::new(7);
    let xs: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let ys: Vec<f64> = (0..n).map(|_| rng.next_f64()).collect();
    let zs: Vec<f64> = (0..n).map(|_| rng.next_f64()).collect();
    let (res, seconds) = timed(|| {
        xs.par_iter().zip(ys.par_iter()).zip(zs.par_iter()).map(|((x, y), z)| x * y + z).collect::<Vec<f64>>()
    });
    let ok = res.len() == n && res.iter().zip(&xs).zip(&ys).zip(&zs).all(|(((r, x), y), z)| *r == x * y + z);
    Timed { seconds, ok }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_is_uniform_enough_and_in_range() {
        let mut r = Rng::new(0);
        let xs: Vec<f64> = (0..10_000).map(|_| r.next_f64()).collect();
        assert!(xs.iter().all(|&x| (0.0..1.0).contains(&x)));
        let mean = xs.iter().sum::<f64>() / xs.len() as f64;
        assert!((mean - 0.5).abs() < 0.02, "mean {mean}");
        assert!((0..10_000).all(|_| r.below(17) < 17));
    }

    #[test]
    fn dotp_matches_a_serial_sum() {
        let xs: Vec<f64> = (0..1000).map(|i| i as f64).collect();
        let ys = vec![0.5; 1000];
        assert_eq!(dotp_core(&xs, &ys), 0.5 * 999.0 * 1000.0 / 2.0);
    }

    #[test]
    fn call_prices_are_within_bounds() {
        // an at-the-money one-year call with r = 2%, v = 30% is worth about 12.8% of s
        let p = bs_call(100.0, 100.0, 1.0, 0.02, 0.30);
        assert!((p - 12.82).abs() < 0.05, "price {p}");
    }

    #[test]
    fn quicksort_sorts_with_duplicates() {
        let mut r = Rng::new(9);
        let xs: Vec<i64> = (0..50_000).map(|_| r.below(100) as i64).collect();
        let mut want = xs.clone();
        want.sort();
        assert_eq!(quicksort_core(&xs), want);
        let xs: Vec<i64> = (0..100_000).map(|_| r.below(1 << 40) as i64 - (1 << 39)).collect();
        let mut want = xs.clone();
        want.sort();
        assert_eq!(quicksort_core(&xs), want);
        let (mut a, mut buf) = (vec![5, 1, 9, 5, 2, 7, 5], vec![0; 7]);
        assert_eq!(filter3_in_place(&mut a, &mut buf, 5), (2, 3));
        assert_eq!(a, vec![1, 2, 5, 5, 5, 9, 7], "stable, as filters are");
        assert_eq!(quicksort_core(&[]), Vec::<i64>::new());
    }

    #[test]
    fn filters_keep_order_in_parallel_and_serially() {
        let xs: Vec<u32> = (0..100_000).collect();
        assert_eq!(filter(&xs, |x| x % 7 == 3), xs.iter().copied().filter(|x| x % 7 == 3).collect::<Vec<_>>());
        assert_eq!(filter(&xs[..10], |x| x % 2 == 0), vec![0, 2, 4, 6, 8]);
        assert!(filter(&xs, |_| false).is_empty());
    }

    #[test]
    fn quickhull_of_a_square_with_inner_points() {
        let pts = vec![(0.0, 0.0), (0.5, 0.5), (1.0, 0.0), (0.2, 0.7), (1.0, 1.0), (0.0, 1.0), (0.5, 0.1)];
        let h = quickhull_core(&pts);
        assert_eq!(h, vec![(0.0, 0.0), (0.0, 1.0), (1.0, 1.0), (1.0, 0.0)]);
        assert!(hull_ok(&h, &pts));
        assert!(!hull_ok(&h[..3], &pts), "a triangle misses a corner");
        assert!(!hull_ok(&[(0.0, 0.0), (1.0, 1.0), (1.0, 0.0), (0.0, 1.0)], &pts), "not convex");
    }

    #[test]
    fn barneshut_computes_what_the_nesl_program_computes() {
        let mut r = Rng::new(11);
        let bodies: Vec<Body> = (0..3000).map(|_| Body { x: r.next_f64(), y: r.next_f64(), m: 0.5 + r.next_f64() }).collect();
        // the tree walks exactly the cells the target sets visit: the same forces
        let fs = barneshut_tree_core(&bodies);
        let want = barneshut_core(&bodies);
        assert_eq!(fs.len(), want.len());
        for (f, w) in fs.iter().zip(&want) {
            let err = ((f.0 - w.0).powi(2) + (f.1 - w.1).powi(2)).sqrt();
            assert!(err <= 1e-9 * (w.0 * w.0 + w.1 * w.1).sqrt() + 1e-9, "{f:?} vs {w:?}");
        }
        // and close to the direct sum, over 50 bodies as one vector
        let (mut err2, mut norm2) = (0.0, 0.0);
        for (b, f) in bodies.iter().zip(&fs).take(50) {
            let d = direct_force(b, &bodies);
            err2 += (f.0 - d.0).powi(2) + (f.1 - d.1).powi(2);
            norm2 += d.0 * d.0 + d.1 * d.1;
        }
        assert!(err2.sqrt() <= 0.05 * norm2.sqrt(), "error {} of {}", err2.sqrt(), norm2.sqrt());
        // two bodies: the tree sums exactly as directly
        let two = [Body { x: 0.1, y: 0.1, m: 1.0 }, Body { x: 0.9, y: 0.8, m: 2.0 }];
        let direct: Vec<(f64, f64)> = two.iter().map(|b| direct_force(b, &two)).collect();
        assert_eq!(barneshut_tree_core(&two), direct);
        assert_eq!(barneshut_core(&two), direct);
    }

    #[test]
    fn every_peer_checks_itself_at_small_sizes_on_one_and_two_threads() {
        for &p in PEERS {
            for threads in [1, 2] {
                let r = run(p, 20_000, threads).unwrap();
                assert!(r.ok, "{p} on {threads} threads: {r:?}");
                assert_eq!((r.threads, r.size), (threads, 20_000));
                assert!(r.seconds >= 0.0);
            }
        }
        assert!(run("nope", 10, 1).is_err());
    }
}
