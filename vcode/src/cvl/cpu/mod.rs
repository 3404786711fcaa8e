//! The CPU vector library: [`Cvl`] on host memory, on every core.
//!
//! One module per concern: element storage and the kernels' shared checks ([`data`]),
//! memory ([`mem`]: results written into uninitialised memory), parallel execution ([`par`]: fixed blocks, so results never
//! depend on the thread count; [`threads`]: how many), segment descriptors ([`seg`]),
//! element-wise operations ([`elementwise`]), superoperators ([`fused`]), scans and
//! reductions ([`scan`]), permutes, gathers and segment fills ([`permute`]), `PACK`
//! ([`pack`]) and `RANK` ([`rank`]). This file holds the handles and the [`Cvl`] impl,
//! which checks the operands' shapes (with [`crate::cvl::check`], shared with the CUDA
//! library) and calls the kernels. All sizes and indices are checked: a bad operand is a
//! [`Trap`], never a panic.

mod affine;
mod data;
mod elementwise;
mod fused;
mod math;
mod pack;
mod par;
mod permute;
mod mem;
mod rank;
mod scan;
mod seg;
pub mod threads;

pub use data::{Data, Elem};
pub use fused::CHUNK;

use super::check::{self, S, V};
use super::{BinOp, Cvl, HostScalar, HostVector, ReduceOp, UnOp, VType};
use crate::fused::{FoldKind, SuperOp};
use crate::trap::{Trap, TrapKind};
use data::{bools, each, each2, each_mut, ints, Slice};
use fused::{Operand, Prog, Step};
use par::{Par, THREADS_FROM};
use permute::Targets;
use seg::Seg;
use smallvec::SmallVec;
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// Handle to a CPU data vector (reference counted, shareable between threads): its
/// elements, or a `DIST`, `INDEX` or range of another vector not written out yet.
#[derive(Debug, Clone)]
pub struct CpuVector(Rep);

#[derive(Debug, Clone)]
enum Rep {
    Data(Arc<Data>),
    Lazy(Arc<Lazy>),
}

/// A vector kept as the operation that makes it: a `DIST` or an `INDEX` over `seg`, or a
/// contiguous range of another vector. Superoperators and element-wise operations read it
/// a chunk at a time (a `DIST` as a constant where the chunk lies in one segment, a range
/// in place); `BPERMUTE` and `DPERMUTE` by an `INDEX` copy whole runs, and read a range in
/// place; any other operation writes it out once, on first use (`forced`).
#[derive(Debug)]
struct Lazy {
    form: Form,
    seg: Arc<Seg>,
    par: Par,
    forced: OnceLock<Arc<Data>>,
}

#[derive(Debug)]
enum Form {
    /// `DIST`: segment `k` is `vals[k]` repeated (kept from [`LAZY_MIN`] elements).
    Dist(Arc<Data>),
    /// `INDEX`: segment `k` is `start[k] + j * stride[k]` (both `INT`).
    Index(Arc<Data>, Arc<Data>),
    /// Elements `lo..lo + n` of a vector (`n` the length of `seg`, one segment): a
    /// `BPERMUTE` that reads one contiguous run ([`CpuCvl::range_gather`]), such as block `j` of
    /// a result in block order. Kept from [`LAZY_MIN`] elements and a quarter of the
    /// vector (it holds the whole vector alive).
    Range(Arc<Data>, usize),
    /// A `BPERMUTE` of `src` (over `ss`) by the `INDEX` of `start` and `stride` over
    /// `seg` (whose lengths are the destination's), every index checked
    /// ([`permute::Gathered`]): superoperators and packs gather it a chunk at a time,
    /// `EXTRACT` reads through it. Kept from [`LAZY_MIN`] elements and a quarter of `src`
    /// (it holds all of `src` alive).
    Gather(Arc<Data>, Arc<Data>, Arc<Data>, Arc<Seg>),
    /// A `BPERMUTE` of `src` (one segment, over the descriptor held) by written-out
    /// indices, every one checked, that reads at least as many elements as `src` holds (a
    /// lookup into a table: `v[j]` for every `j` of a sparse row, an edge's endpoints):
    /// superoperators gather it a chunk at a time ([`permute::Picked`]), so the gathered
    /// vector is never stored and read back; any other reader writes it out. Kept from
    /// [`LAZY_MIN`] elements; it holds `src` and the indices alive (also once written
    /// out, as the other forms hold their operands).
    Pick(Arc<Data>, Arc<Data>, Arc<Seg>),
    /// `DPERMUTE`s into a `DIST` of `vals` over `ds`, the places none of them wrote still
    /// to be filled with its values ([`permute::Holey`]): the next `DPERMUTE` into it, when
    /// this handle is the only one, writes into the same memory (an append's parts each
    /// written once, the `DIST` never written where they go); any other reader fills the
    /// gaps.
    Holes(Mutex<Holes>),
}

/// The vector of a [`Form::Holes`], and the `DIST` that fills its gaps.
#[derive(Debug)]
struct Holes {
    h: Holey,
    vals: Arc<Data>,
    ds: Arc<Seg>,
}

/// A [`permute::Holey`] of each element type; `Taken` once filled.
#[derive(Debug)]
enum Holey {
    Int(permute::Holey<i64>),
    Float(permute::Holey<f64>),
    Bool(permute::Holey<bool>),
    Taken,
}

impl Holey {
    fn gaps(&self) -> usize {
        match self {
            Holey::Int(h) => h.gaps.len(),
            Holey::Float(h) => h.gaps.len(),
            Holey::Bool(h) => h.gaps.len(),
            Holey::Taken => 0,
        }
    }
}

impl Holes {
    /// The vector, its gaps filled with the `DIST`'s values (an interrupted fill leaves
    /// it as it was, to be filled when read again).
    fn fill(&mut self, par: &Par) -> Result<Data, Trap> {
        let d = match (&mut self.h, &*self.vals) {
            (Holey::Int(h), Data::Int(w)) => Data::Int(h.fill(par, w, &self.ds)?),
            (Holey::Float(h), Data::Float(w)) => Data::Float(h.fill(par, w, &self.ds)?),
            (Holey::Bool(h), Data::Bool(w)) => Data::Bool(h.fill(par, w, &self.ds)?),
            _ => return Err(Trap::ty("a scattered vector's gaps were filled twice")),
        };
        self.h = Holey::Taken;
        Ok(d)
    }
}

/// The shortest `DIST` or `INDEX` kept unwritten (shorter ones are written at once: their
/// reads cost less than the chunked evaluation of a lazy one).
const LAZY_MIN: usize = 2 * CHUNK;
/// The shortest mean segment length of a `DIST` kept unwritten: over shorter segments a
/// read expands it chunk by chunk at a cost per segment, about what writing it out once
/// costs. Readers that share one expansion (the flag trees of a pack root: quicksort's
/// three comparisons with its pivots, which were three readers and broke even at a
/// thousand elements per segment) save the write and the read of the whole vector
/// (measured from 1024 down to 16, alternating runs on one thread: quicksort 1M 0.97x,
/// quickhull 2M 0.90x, Barnes-Hut 30K 0.96x).
const LAZY_SEGMENT: usize = 16;
/// The shortest mean segment length of an `INDEX` kept unwritten: its main readers, the
/// permutes, then copy runs instead of reading indices, but pay for each run, which a
/// write and a read of each index beat on runs of a few elements. Measured on quicksort
/// 1M (one thread, alternating runs), with the permutes' one-pass path for runs of
/// consecutive places ([`permute::unit`]): 12 elements 0.89x the time of 16, 8 0.93x, 1
/// (every `INDEX` kept) 1.07x; before that path, 16 was best.
const LAZY_INDEX_SEGMENT: usize = 12;

/// The elements of an `INT` buffer (empty for another type; lazy forms hold `INT`s only).
fn int_slice(d: &Data) -> &[i64] {
    match d {
        Data::Int(v) => v,
        _ => &[],
    }
}

impl Lazy {
    fn write_out(&self) -> Result<Data, Trap> {
        let p = &self.par;
        Ok(match &self.form {
            Form::Dist(vals) => each!(&**vals, |v| permute::dist(p, v, &self.seg)),
            Form::Index(b, k) => Data::Int(permute::index(p, int_slice(b), int_slice(k), &self.seg)?),
            Form::Range(v, lo) => each!(v.slice().range(*lo, lo + self.seg.total()), |x| mem::copied(p, x)),
            Form::Gather(src, b, k, ss) => {
                let ix = permute::Progressions { start: int_slice(b), stride: int_slice(k), seg: &self.seg };
                let d = match src.slice() {
                    Slice::Int(x) => permute::gather_runs(p, x, ix, ss, &self.seg)?.map(Data::Int),
                    Slice::Float(x) => permute::gather_runs(p, x, ix, ss, &self.seg)?.map(Data::Float),
                    Slice::Bool(x) => permute::gather_runs(p, x, ix, ss, &self.seg)?.map(Data::Bool),
                };
                d.ok_or_else(|| Trap::ty("a kept gather's index is out of range"))?
            }
            Form::Pick(src, i, ss) => each!(src.slice(), |x| permute::gather(p, x, int_slice(i), None, ss, &self.seg)),
            Form::Holes(h) => h.lock().map_err(|_| Trap::ty("a scattered vector was poisoned"))?.fill(p)?,
        })
    }
    /// Its first `n` elements (`n` at most its length), written alone: the part of a
    /// result the top level prints.
    fn prefix(&self, n: usize) -> Result<Data, Trap> {
        // `(segment, elements of it)` up to `n` elements.
        let mut pieces = Vec::new();
        let mut left = n;
        for (k, &l) in self.seg.lens().iter().enumerate() {
            if left == 0 {
                break;
            }
            let c = (l as usize).min(left);
            if c > 0 {
                pieces.push((k, c));
                left -= c;
            }
        }
        Ok(match &self.form {
            Form::Dist(vals) => each!(&**vals, |v| Ok::<_, Trap>(pieces.iter().flat_map(|&(k, c)| std::iter::repeat_n(v[k], c)).collect())),
            Form::Index(b, k) => {
                let (b, k) = (int_slice(b), int_slice(k));
                Data::Int(
                    pieces
                        .iter()
                        .flat_map(|&(s, c)| (0..c as i64).map(move |j| b[s].wrapping_add(j.wrapping_mul(k[s]))))
                        .collect(),
                )
            }
            Form::Range(v, lo) => each!(v.slice().range(*lo, lo + n), |x| Ok::<_, Trap>(x.to_vec())),
            Form::Gather(..) => each!(self.write_out()?.slice().range(0, n), |x| Ok::<_, Trap>(x.to_vec())),
            Form::Pick(src, i, _) => each!(src.slice(), |x| {
                let mut out = Vec::new();
                permute::Picked::of(x, int_slice(i)).range(0, n, &mut out);
                Ok::<_, Trap>(out)
            }),
            // (Its readers fill it first: `to_host_prefix`.)
            Form::Holes(_) => return Err(Trap::ty("a prefix of a scattered vector with gaps")),
        })
    }
    /// The `INDEX` this is, while not written out: `(start, stride, segments)`.
    fn index(&self) -> Option<permute::Progressions<'_>> {
        match (&self.form, self.forced.get()) {
            (Form::Index(b, k), None) => Some(permute::Progressions { start: int_slice(b), stride: int_slice(k), seg: &self.seg }),
            _ => None,
        }
    }
}

impl CpuVector {
    /// The elements (a `DIST` or `INDEX` is written out on first use; that can fail for
    /// lack of memory).
    pub fn data(&self) -> Result<&Data, Trap> {
        self.arc().map(|a| &**a)
    }
    fn arc(&self) -> Result<&Arc<Data>, Trap> {
        match &self.0 {
            Rep::Data(d) => Ok(d),
            Rep::Lazy(l) => {
                if l.forced.get().is_none() {
                    let d = l.write_out()?;
                    let _ = l.forced.set(Arc::new(d));
                }
                l.forced.get().ok_or_else(|| Trap::ty("a lazy vector could not be written out"))
            }
        }
    }
    fn len(&self) -> usize {
        match &self.0 {
            Rep::Data(d) => d.len(),
            Rep::Lazy(l) => l.seg.total(),
        }
    }
    fn vtype(&self) -> VType {
        match &self.0 {
            Rep::Data(d) => d.vtype(),
            Rep::Lazy(l) => match &l.form {
                Form::Dist(vals) | Form::Range(vals, _) | Form::Gather(vals, ..) | Form::Pick(vals, ..) => vals.vtype(),
                Form::Holes(h) => h.lock().unwrap_or_else(|e| e.into_inner()).vals.vtype(),
                Form::Index(..) => VType::Int,
            },
        }
    }
    fn shape(&self) -> V {
        V { ty: self.vtype(), len: self.len() }
    }
    /// As an operand of a superoperator: a `DIST`, `INDEX` or gather not written out stays
    /// one (a vector with gaps has them filled: that cannot fail, but reports a broken
    /// invariant as a trap).
    fn operand(&self) -> Result<Operand<'_>, Trap> {
        Ok(match &self.0 {
            Rep::Data(d) => Operand::Elems(d.slice()),
            Rep::Lazy(l) => match (l.forced.get(), &l.form) {
                (Some(d), _) => Operand::Elems(d.slice()),
                (None, Form::Dist(vals)) => Operand::Dist(vals.slice(), &l.seg),
                (None, Form::Index(b, k)) => Operand::Index(permute::Progressions { start: int_slice(b), stride: int_slice(k), seg: &l.seg }),
                (None, Form::Range(v, lo)) => Operand::Elems(v.slice().range(*lo, lo + l.seg.total())),
                (None, Form::Gather(src, b, k, ss)) => {
                    Operand::Gather(src.slice(), permute::Progressions { start: int_slice(b), stride: int_slice(k), seg: &l.seg }, ss)
                }
                (None, Form::Pick(src, i, _)) => Operand::Pick(src.slice(), int_slice(i)),
                (None, Form::Holes(_)) => Operand::Elems(self.data()?.slice()),
            },
        })
    }
    /// The values and descriptor of the `DIST` this is, while not written out.
    fn lazy_dist(&self) -> Option<(&Data, &Seg)> {
        match &self.0 {
            Rep::Lazy(l) if l.forced.get().is_none() => match &l.form {
                Form::Dist(vals) => Some((vals, &l.seg)),
                Form::Index(..) | Form::Range(..) | Form::Gather(..) | Form::Pick(..) | Form::Holes(_) => None,
            },
            _ => None,
        }
    }
    /// The values and descriptor of the `DIST` this is, while not written out.
    fn lazy_dist_arcs(&self) -> Option<(Arc<Data>, Arc<Seg>)> {
        match &self.0 {
            Rep::Lazy(l) if l.forced.get().is_none() => match &l.form {
                Form::Dist(vals) => Some((vals.clone(), l.seg.clone())),
                _ => None,
            },
            _ => None,
        }
    }
    /// The gather this is, while not written out: the source, the `INDEX` and the
    /// source's descriptor.
    fn gathered(&self) -> Option<(Slice<'_>, permute::Progressions<'_>, &Seg)> {
        match &self.0 {
            Rep::Lazy(l) if l.forced.get().is_none() => match &l.form {
                Form::Gather(src, b, k, ss) => {
                    Some((src.slice(), permute::Progressions { start: int_slice(b), stride: int_slice(k), seg: &l.seg }, ss))
                }
                _ => None,
            },
            _ => None,
        }
    }
    /// The `INDEX` this is, while not written out.
    fn progressions(&self) -> Option<permute::Progressions<'_>> {
        match &self.0 {
            Rep::Lazy(l) => l.index(),
            Rep::Data(_) => None,
        }
    }
    /// The elements, read in place where this is a range of another vector (any other
    /// lazy vector is written out, as by [`data`](Self::data)).
    fn elems(&self) -> Result<Slice<'_>, Trap> {
        match self.operand()? {
            Operand::Elems(x) => Ok(x),
            _ => Ok(self.data()?.slice()),
        }
    }
    /// True for a `DIST`, `INDEX` or gather not written out (a superoperator reads it as
    /// it is).
    fn is_lazy(&self) -> bool {
        matches!(&self.0, Rep::Lazy(l) if l.forced.get().is_none() && matches!(l.form, Form::Dist(_) | Form::Index(..) | Form::Gather(..) | Form::Pick(..)))
    }
    /// True for a vector with gaps not filled yet ([`Form::Holes`]).
    fn has_gaps(&self) -> bool {
        matches!(&self.0, Rep::Lazy(l) if l.forced.get().is_none() && matches!(l.form, Form::Holes(_)))
    }
    /// False while this is a `DIST`, `INDEX` or gather kept as its operands, or a vector
    /// with gaps not filled yet (not yet stored element by element).
    pub fn is_written_out(&self) -> bool {
        !self.is_lazy() && !self.has_gaps()
    }
    /// The elements when this handle is the only one to them (to write over them).
    fn owned(&mut self) -> Option<&mut Data> {
        match &mut self.0 {
            Rep::Data(d) => Arc::get_mut(d),
            Rep::Lazy(_) => None,
        }
    }
    /// [`owned`](Self::owned), writing out a lazy vector only this handle holds (into
    /// memory it then owns: no copy).
    fn unique(&mut self) -> Result<Option<&mut Data>, Trap> {
        if let Rep::Lazy(l) = &mut self.0 {
            let Some(l) = Arc::get_mut(l) else { return Ok(None) };
            let d = match l.forced.take() {
                Some(d) => d,
                None => Arc::new(l.write_out()?),
            };
            self.0 = Rep::Data(d);
        }
        Ok(self.owned())
    }
}

/// Handle to a CPU segment descriptor (reference counted).
#[derive(Debug, Clone)]
pub struct CpuSegdes(Arc<Seg>);

impl CpuSegdes {
    fn shape(&self) -> S {
        S { m: self.0.m(), n: self.0.total() }
    }
}

/// The CPU vector library.
#[derive(Debug)]
pub struct CpuCvl {
    rng: u64,
    max_elements: usize,
    par: Par,
    /// The results of `RANK` still alive, each with the descriptor whose segments it
    /// permutes: a `PERMUTE` by one of them over segments of the same lengths needs no
    /// check of its indices (in range, no two alike), which costs more than the scatter
    /// on two threads (Barnes-Hut permutes three vectors of 4M terms by one rank). The
    /// registry holds them weakly, so the buffer cannot be written in place
    /// ([`Arc::get_mut`] refuses) while it is registered, nor be freed and its address
    /// reused.
    permutations: Vec<(Weak<Data>, Arc<Seg>)>,
    /// `INT` vectors still alive whose least and greatest elements a `MIN_REDUCE` or
    /// `MAX_REDUCE` over the whole vector found ([`BOUNDS_MIN`] elements and more): the
    /// pass finds both, so the other reduction, which the bounds check of `v[j]` in an
    /// apply-to-each runs next, reads it here, and a gather by the vector into a source
    /// that holds its range needs no check of its indices. Held weakly, as the
    /// permutations are (a buffer cannot change while registered); the newest
    /// [`BOUNDS_KEPT`].
    bounds: Vec<(Weak<Data>, i64, i64)>,
    /// Superoperators compiled for the CPU ([`Progs`]).
    progs: Progs,
    /// [`Cvl::host_scalars`].
    host_scalars: bool,
}

/// Superoperators compiled for the CPU, so that a `FUSED` run again (in a loop, on
/// every level of a recursion, or over one-element vectors in serial code, where
/// compiling cost more than the work) is compiled once. Slots are found by the address of
/// the superoperator (a program's stay put while it runs) and hold a copy of it, which
/// must equal the one asked for: an address reused by another superoperator (another
/// program, a temporary) misses and is compiled again. A pack's flag programs are kept
/// the same way, under their superoperator (they come from temporaries made per call).
#[derive(Default)]
struct Progs {
    slots: Vec<Option<(usize, SuperOp, Compiled)>>,
}

/// What a slot of [`Progs`] holds for its superoperator.
#[derive(Clone)]
enum Compiled {
    /// The superoperator's program.
    Body(Arc<Prog>),
    /// The programs of its pack's flags, in order.
    Flags(Arc<[Prog]>),
}

/// Slots of [`Progs`] (a program uses a few dozen superoperators at most in its loops).
const PROG_SLOTS: usize = 64;

impl Progs {
    /// `op` compiled, from its slot when that holds it.
    fn get(&mut self, op: &SuperOp) -> Result<Arc<Prog>, Trap> {
        match self.find(op, false, || Ok(Compiled::Body(Arc::new(Prog::compile(op)?))))? {
            Compiled::Body(p) => Ok(p),
            Compiled::Flags(_) => Err(Trap::ty("a superoperator's slot holds flag programs")),
        }
    }
    /// The flag programs of `op`'s pack, from their slot when that holds them.
    fn flags(&mut self, op: &SuperOp) -> Result<Arc<[Prog]>, Trap> {
        let compile = || {
            let n = op.pack.as_ref().map_or(0, |pk| pk.flags.len());
            let progs = (0..n)
                .map(|i| op.flag_op(i).ok_or_else(|| Trap::ty("superoperator has no pack")).and_then(|f| Prog::compile(&f)))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Compiled::Flags(progs.into()))
        };
        match self.find(op, true, compile)? {
            Compiled::Flags(p) => Ok(p),
            Compiled::Body(_) => Err(Trap::ty("a pack's slot holds a superoperator's program")),
        }
    }
    /// The slot of `op`'s body or flag programs (`flags`), compiled by `compile` when it
    /// does not hold them.
    fn find(&mut self, op: &SuperOp, flags: bool, compile: impl FnOnce() -> Result<Compiled, Trap>) -> Result<Compiled, Trap> {
        // The flag programs' key is the superoperator's address plus one: a superoperator
        // spans more than a byte, so no other one has that address.
        let key = op as *const SuperOp as usize + usize::from(flags);
        let i = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) % PROG_SLOTS;
        if self.slots.is_empty() {
            self.slots.resize_with(PROG_SLOTS, || None);
        }
        if let Some((k, o, c)) = &self.slots[i] {
            if *k == key && o == op {
                return Ok(c.clone());
            }
        }
        let c = compile()?;
        self.slots[i] = Some((key, op.clone(), c.clone()));
        Ok(c)
    }
}

impl std::fmt::Debug for Progs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Progs({} compiled)", self.slots.iter().flatten().count())
    }
}

/// The shortest vector whose reduction registers its bounds ([`CpuCvl::bounds`]).
const BOUNDS_MIN: usize = 2 * CHUNK;
/// The most vectors [`CpuCvl::bounds`] holds.
const BOUNDS_KEPT: usize = 8;

impl Default for CpuCvl {
    fn default() -> Self {
        Self::new()
    }
}

fn vecd(d: Data) -> CpuVector {
    CpuVector(Rep::Data(Arc::new(d)))
}

/// The splitmix64 output for generator state `z`.
fn splitmix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

impl CpuCvl {
    /// A library with the random generator seeded with 0, on
    /// [`threads::default_threads`] threads.
    pub fn new() -> Self {
        Self::with_threads(threads::default_threads())
    }
    /// A library on `n` threads (at least 1).
    pub fn with_threads(n: usize) -> Self {
        CpuCvl {
            rng: 0,
            max_elements: usize::MAX,
            par: Par::new(n.max(1)),
            permutations: Vec::new(),
            bounds: Vec::new(),
            progs: Progs::default(),
            host_scalars: true,
        }
    }
    /// The same library, its one-element element-wise work held by the interpreter as
    /// host values or not ([`Cvl::host_scalars`]; on by default). Off, serial code runs on
    /// one-element vectors, as vector code does (the tests compare the two).
    pub fn with_host_scalars(mut self, on: bool) -> Self {
        self.host_scalars = on;
        self
    }
    /// A library that refuses (with an out-of-memory trap) any segment descriptor or
    /// fill describing more than `n` elements: a guard for untrusted programs.
    pub fn with_max_elements(n: usize) -> Self {
        CpuCvl { max_elements: n, ..Self::new() }
    }
    /// Checks a superoperator's operands and compiles it (once: [`Progs`]).
    fn fused_args<'a>(&mut self, op: &SuperOp, args: &[Option<&'a CpuVector>], len: usize) -> Result<(Arc<Prog>, Operands<'a>), Trap> {
        let slices = fused_operands(op, args, len)?;
        Ok((self.progs.get(op)?, slices))
    }
    /// The number of threads the library runs on.
    pub fn threads(&self) -> usize {
        self.par.threads()
    }
    /// A library of one thread with this one's settings (its element limit, its host
    /// scalars), for a part of a call run in parts ([`crate::split`]).
    pub fn part_library(&self) -> CpuCvl {
        CpuCvl { max_elements: self.max_elements, host_scalars: self.host_scalars, ..Self::with_threads(1) }
    }
    /// `v` as a library of one thread reads it: written out (by this library, if it was
    /// kept undone), its elements shared.
    pub fn part_whole(&self, v: &CpuVector) -> Result<CpuVector, Trap> {
        Ok(CpuVector(Rep::Data(v.arc()?.clone())))
    }
    /// Elements `a..b` of `v` as a vector of their own for a library of one thread,
    /// read in place (`v` written out first, by this library, if it was kept undone): no
    /// copy of a call's arguments is made to run it in parts.
    pub fn part_of(&self, v: &CpuVector, a: usize, b: usize) -> Result<CpuVector, Trap> {
        let src = v.arc()?.clone();
        if a > b || b > src.len() {
            return Err(Trap::ty(format!("a part's elements {a}..{b} are outside its vector of {}", src.len())));
        }
        let one = Par::new(1);
        let seg = Arc::new(Seg::new(&one, Arc::new(Data::Int(vec![(b - a) as i64])))?);
        Ok(CpuVector(Rep::Lazy(Arc::new(Lazy { form: Form::Range(src, a), seg, par: one, forced: OnceLock::new() }))))
    }
    /// The vectors `parts` (of one type) end to end, in one vector of this library.
    pub fn joined(&self, parts: &[CpuVector]) -> Result<CpuVector, Trap> {
        fn typed<T: data::Elem>(parts: &[Slice], n: usize, of: impl Fn(Slice) -> Option<&[T]>) -> Result<Vec<T>, Trap> {
            let mut out = mem::alloc::<T>(n)?;
            for &x in parts {
                out.extend_from_slice(of(x).ok_or_else(|| Trap::ty("the parts of a call's result differ in type"))?);
            }
            Ok(out)
        }
        let slices = parts.iter().map(|v| v.elems()).collect::<Result<Vec<_>, _>>()?;
        let n = slices.iter().map(|x| x.len()).sum();
        Ok(vecd(match slices.first().map(|x| x.vtype()) {
            None | Some(VType::Int) => Data::Int(typed(&slices, n, |x| if let Slice::Int(v) = x { Some(v) } else { None })?),
            Some(VType::Float) => Data::Float(typed(&slices, n, |x| if let Slice::Float(v) = x { Some(v) } else { None })?),
            Some(VType::Bool) => Data::Bool(typed(&slices, n, |x| if let Slice::Bool(v) = x { Some(v) } else { None })?),
        }))
    }
    fn limit(&self, n: usize) -> Result<(), Trap> {
        if n <= self.max_elements {
            Ok(())
        } else {
            Err(Trap::new(TrapKind::OutOfMemory(format!(
                "{n} elements is over this library's limit of {}",
                self.max_elements
            ))))
        }
    }
    fn seg(&self, lens: Arc<Data>) -> Result<CpuSegdes, Trap> {
        let s = Seg::new(&self.par, lens)?;
        self.limit(s.total().max(s.m()))?;
        Ok(CpuSegdes(Arc::new(s)))
    }
    /// `DPERMUTE` by an `INDEX` not written out into a `DIST` not written out, when the
    /// scatter can write its runs alone (`how`: planned runs that ascend without holes, or
    /// unit runs, [`permute::holey`]): the places between them are left for the next
    /// `DPERMUTE` into it, or filled with the `DIST`'s values by any other reader
    /// ([`Form::Holes`]); the `DIST` is never written out.
    fn scatter_into_dist(p: &Par, v: &CpuVector, how: permute::HoleWrite, d: &CpuVector, ss: &CpuSegdes, sd: &CpuSegdes) -> Result<Option<CpuVector>, Trap> {
        let Some((vals, ds)) = d.lazy_dist_arcs() else { return Ok(None) };
        let h = match (v.elems()?, &*vals) {
            (Slice::Int(x), Data::Int(_)) => permute::holey(how, x, &ss.0, &sd.0)?.map(Holey::Int),
            (Slice::Float(x), Data::Float(_)) => permute::holey(how, x, &ss.0, &sd.0)?.map(Holey::Float),
            (Slice::Bool(x), Data::Bool(_)) => permute::holey(how, x, &ss.0, &sd.0)?.map(Holey::Bool),
            _ => None,
        };
        let Some(h) = h else { return Ok(None) };
        let form = Form::Holes(Mutex::new(Holes { h, vals, ds }));
        Self::settled(Lazy { form, seg: sd.0.clone(), par: p.clone(), forced: OnceLock::new() }).map(Some)
    }
    /// `DPERMUTE` by checked, ascending written indices into `d`, a `DIST` not written
    /// out (over a descriptor of `sd`'s lengths): the `DIST` and the scatter written
    /// together, chunk by chunk ([`permute::scatter_ascending_into_dist`]).
    fn scatter_ascending_into_dist(
        p: &Par,
        v: &CpuVector,
        t: permute::Targets,
        d: &CpuVector,
        ss: &CpuSegdes,
        sd: &CpuSegdes,
    ) -> Result<Option<CpuVector>, Trap> {
        let Some((vals, ds)) = d.lazy_dist_arcs() else { return Ok(None) };
        if !(Arc::ptr_eq(&ds, &sd.0) || ds.lens() == sd.0.lens()) {
            return Ok(None);
        }
        let r = match (v.elems()?, &*vals) {
            (Slice::Int(x), Data::Int(w)) => permute::scatter_ascending_into_dist(p, w, x, t, &ss.0, &sd.0)?.map(Data::Int),
            (Slice::Float(x), Data::Float(w)) => permute::scatter_ascending_into_dist(p, w, x, t, &ss.0, &sd.0)?.map(Data::Float),
            (Slice::Bool(x), Data::Bool(w)) => permute::scatter_ascending_into_dist(p, w, x, t, &ss.0, &sd.0)?.map(Data::Bool),
            _ => None,
        };
        Ok(r.map(vecd))
    }
    /// True when `i` is a live result of `RANK` ([`CpuCvl::permutations`]) over segments
    /// of the lengths of `s`: each of its segments is a permutation of its positions.
    fn is_permutation(&self, i: &Arc<Data>, s: &Arc<Seg>) -> bool {
        self.permutations.iter().any(|(w, rs)| {
            w.upgrade().is_some_and(|r| Arc::ptr_eq(&r, i)) && (Arc::ptr_eq(rs, s) || rs.lens() == s.lens())
        })
    }
    /// The least and greatest elements of `v` when [`CpuCvl::bounds`] holds them.
    fn known_bounds(&self, v: &Arc<Data>) -> Option<(i64, i64)> {
        self.bounds.iter().find(|(w, ..)| std::ptr::eq(w.as_ptr(), Arc::as_ptr(v)) && w.strong_count() > 0).map(|&(_, lo, hi)| (lo, hi))
    }
    /// `MIN_REDUCE` or `MAX_REDUCE` (`max`) of the `INT` vector `v` over one segment, from
    /// [`CpuCvl::bounds`] or by a pass that finds both and registers them; `None` for a
    /// short or empty vector (reduced as any other).
    fn whole_extreme(&mut self, v: &CpuVector, max: bool) -> Result<Option<i64>, Trap> {
        if v.len() < BOUNDS_MIN || v.vtype() != VType::Int {
            return Ok(None);
        }
        let a = v.arc()?;
        let (lo, hi) = match self.known_bounds(a) {
            Some(b) => b,
            None => {
                let Some(b) = scan::min_max(&self.par, int_slice(a)) else { return Ok(None) };
                self.bounds.retain(|(w, ..)| w.strong_count() > 0);
                if self.bounds.len() >= BOUNDS_KEPT {
                    self.bounds.remove(0);
                }
                self.bounds.push((Arc::downgrade(a), b.0, b.1));
                b
            }
        };
        Ok(Some(if max { hi } else { lo }))
    }
    /// `l` as a vector: a vector with gaps whose scatters left none, as its elements.
    fn settled(mut l: Lazy) -> Result<CpuVector, Trap> {
        if let Form::Holes(m) = &mut l.form {
            let holes = m.get_mut().map_err(|_| Trap::ty("a scattered vector was poisoned"))?;
            if holes.h.gaps() == 0 {
                return Ok(vecd(holes.fill(&l.par)?));
            }
        }
        Ok(CpuVector(Rep::Lazy(Arc::new(l))))
    }
    /// The holes of `d`, a vector with gaps that only this handle holds (after writing
    /// into them, [`Self::resettle`] it).
    fn holes_of(d: &mut CpuVector) -> Result<Option<&mut Holes>, Trap> {
        let Rep::Lazy(l) = &mut d.0 else { return Ok(None) };
        let Some(lz) = Arc::get_mut(l) else { return Ok(None) };
        if lz.forced.get().is_some() {
            return Ok(None);
        }
        let Form::Holes(m) = &mut lz.form else { return Ok(None) };
        m.get_mut().map(Some).map_err(|_| Trap::ty("a scattered vector was poisoned"))
    }
    /// `d` after a scatter into its holes: an ordinary vector when none is left.
    fn resettle(d: &mut CpuVector) -> Result<CpuVector, Trap> {
        d.0 = match std::mem::replace(&mut d.0, Rep::Data(Arc::new(Data::none()))) {
            Rep::Lazy(l) => match Arc::try_unwrap(l) {
                Ok(l) => Self::settled(l)?.0,
                Err(l) => Rep::Lazy(l),
            },
            other => other,
        };
        Ok(d.clone())
    }
    /// `DPERMUTE` of `v` into a vector with gaps that only this handle holds, written
    /// into the same memory as `how` says ([`permute::write_into_holes`]): the places
    /// written leave the gaps. `None` otherwise.
    fn into_holes(v: &CpuVector, how: permute::HoleWrite, d: &mut CpuVector, ss: &CpuSegdes, sd: &CpuSegdes) -> Result<Option<CpuVector>, Trap> {
        let Some(holes) = Self::holes_of(d)? else { return Ok(None) };
        let done = match (&mut holes.h, v.elems()?) {
            (Holey::Int(h), Slice::Int(x)) => permute::write_into_holes(h, x, how, &ss.0, &sd.0)?,
            (Holey::Float(h), Slice::Float(x)) => permute::write_into_holes(h, x, how, &ss.0, &sd.0)?,
            (Holey::Bool(h), Slice::Bool(x)) => permute::write_into_holes(h, x, how, &ss.0, &sd.0)?,
            _ => false,
        };
        if !done {
            return Ok(None);
        }
        Self::resettle(d).map(Some)
    }
    /// `DPERMUTE` by an `INDEX` not written out, planned, into a copy of `d`.
    fn scatter_into_copy(
        p: &Par,
        v: &CpuVector,
        ix: permute::Progressions,
        plan: &permute::Plan,
        d: &CpuVector,
        ss: &CpuSegdes,
        sd: &CpuSegdes,
    ) -> Result<CpuVector, Trap> {
        Ok(vecd(each2!(v.elems()?, d.elems()?, |x, dv| {
            mem::copied(p, dv).map(|mut out| {
                permute::scatter_runs(p, &mut out, x, ix, &ss.0, &sd.0, plan);
                out
            })
        })))
    }
    /// `op`'s value as an `INDEX` kept unwritten, when every operand is an unwritten
    /// `INDEX` or `INT` `DIST` over segments of the same lengths (an `INDEX` among them)
    /// and the tree keeps progressions ([`affine`]); `None` otherwise.
    fn affine_index(&self, op: &SuperOp, args: &[Option<&CpuVector>]) -> Result<Option<CpuVector>, Trap> {
        if op.fold.is_some() || op.guard.is_some() || !op.more.is_empty() {
            return Ok(None);
        }
        let mut seg: Option<&Arc<Seg>> = None;
        let mut terms = Vec::with_capacity(args.len());
        let mut indices = 0;
        for a in args {
            let Some(v) = a else {
                terms.push(affine::Term::None);
                continue;
            };
            let Rep::Lazy(l) = &v.0 else { return Ok(None) };
            if l.forced.get().is_some() || seg.is_some_and(|s| !Arc::ptr_eq(s, &l.seg) && s.lens() != l.seg.lens()) {
                return Ok(None);
            }
            seg.get_or_insert(&l.seg);
            terms.push(match &l.form {
                Form::Index(b, k) => {
                    indices += 1;
                    affine::Term::Index(int_slice(b), int_slice(k))
                }
                Form::Dist(vals) => match &**vals {
                    Data::Int(d) => affine::Term::Dist(d),
                    _ => return Ok(None),
                },
                Form::Range(..) | Form::Gather(..) | Form::Pick(..) | Form::Holes(_) => return Ok(None),
            });
        }
        let Some(seg) = seg.filter(|_| indices > 0) else { return Ok(None) };
        let Some((start, stride)) = affine::progressions(&op.body, &terms, seg.m()) else { return Ok(None) };
        let n = seg.total();
        crate::memory::check(n, n.saturating_mul(8))?;
        let form = Form::Index(Arc::new(Data::Int(start)), Arc::new(Data::Int(stride)));
        Ok(Some(CpuVector(Rep::Lazy(Arc::new(Lazy { form, seg: seg.clone(), par: self.par.clone(), forced: OnceLock::new() })))))
    }
    /// A `BPERMUTE` of `v` by the `INDEX` `ix` (from `ss` into `sd`) that reads one contiguous run
    /// of `v`, kept as that range of `v` (no copy: the readers of block `j` of a result in
    /// block order, such as the `++` and the scatters of quicksort's `result[0] ++ equal ++
    /// result[1]`, read it in place). `None` for another gather, a short one, or one of
    /// under a quarter of `v` (a range holds all of `v` alive).
    fn range_gather(&self, v: &CpuVector, ix: permute::Progressions, ss: &Seg, sd: &Seg) -> Result<Option<CpuVector>, Trap> {
        let n = ix.seg.total();
        if n < LAZY_MIN || n.saturating_mul(4) < v.len() {
            return Ok(None);
        }
        let Some(lo) = permute::contiguous(ix, ss, sd) else { return Ok(None) };
        let (src, lo) = match &v.0 {
            Rep::Lazy(l) => match (&l.form, l.forced.get()) {
                (Form::Range(src, base), None) => (src.clone(), base + lo),
                (_, Some(d)) => (d.clone(), lo),
                _ => return Ok(None),
            },
            Rep::Data(d) => (d.clone(), lo),
        };
        let seg = Arc::new(Seg::new(&self.par, Arc::new(Data::Int(vec![n as i64])))?);
        let l = Lazy { form: Form::Range(src, lo), seg, par: self.par.clone(), forced: OnceLock::new() };
        Ok(Some(CpuVector(Rep::Lazy(Arc::new(l)))))
    }
    /// A `BPERMUTE` of `v` by the `INDEX` `i` not written out (from `ss` into `sd`) kept
    /// undone ([`Form::Gather`]), when every index is in range, `i` lies over `sd`, and
    /// the result is long and at least a quarter of `v`; `None` otherwise.
    fn lazy_gather(&self, v: &CpuVector, i: &CpuVector, ss: &CpuSegdes, sd: &CpuSegdes) -> Result<Option<CpuVector>, Trap> {
        let Rep::Lazy(il) = &i.0 else { return Ok(None) };
        let (Form::Index(b, k), None) = (&il.form, il.forced.get()) else { return Ok(None) };
        let n = sd.0.total();
        if n < LAZY_MIN || n.saturating_mul(4) < v.len() {
            return Ok(None);
        }
        let src = match &v.0 {
            Rep::Data(d) => d.clone(),
            Rep::Lazy(l) => match l.forced.get() {
                Some(d) => d.clone(),
                None => return Ok(None),
            },
        };
        let ix = permute::Progressions { start: int_slice(b), stride: int_slice(k), seg: &il.seg };
        let ok = match src.slice() {
            Slice::Int(x) => permute::Gathered::new(x, ix, &ss.0, &sd.0).is_some(),
            Slice::Float(x) => permute::Gathered::new(x, ix, &ss.0, &sd.0).is_some(),
            Slice::Bool(x) => permute::Gathered::new(x, ix, &ss.0, &sd.0).is_some(),
        };
        if !ok {
            return Ok(None);
        }
        // Refused here when it could not be stored, as a written one would be.
        let size = if src.vtype() == VType::Bool { 1 } else { 8 };
        crate::memory::check(n, n.saturating_mul(size))?;
        let form = Form::Gather(src, b.clone(), k.clone(), ss.0.clone());
        let l = Lazy { form, seg: il.seg.clone(), par: self.par.clone(), forced: OnceLock::new() };
        Ok(Some(CpuVector(Rep::Lazy(Arc::new(l)))))
    }
    /// A `BPERMUTE` of `v` by the written-out indices `i` kept undone ([`Form::Pick`]):
    /// when the source is one segment (then so is the destination), the result is long
    /// and at least as long as `v` (a table lookup; a gather that selects part of a
    /// longer vector, such as an `if`'s split, is written at once: its readers are
    /// rarely superoperators, a separate pass of index checks would cost it more than it
    /// saves, and kept it would hold its longer source alive), and `v` and `i` are
    /// written out. Every index is checked here, in parallel blocks: the trap
    /// names the first bad one, as the gather's would. `None` otherwise.
    fn lazy_pick(&self, v: &CpuVector, i: &CpuVector, ss: &CpuSegdes, sd: &CpuSegdes) -> Result<Option<CpuVector>, Trap> {
        let n = sd.0.total();
        if ss.0.m() != 1 || n < LAZY_MIN || n < v.len() {
            return Ok(None);
        }
        let written = |x: &CpuVector| match &x.0 {
            Rep::Data(d) => Some(d.clone()),
            Rep::Lazy(l) => l.forced.get().cloned(),
        };
        let (Some(src), Some(ix)) = (written(v), written(i)) else { return Ok(None) };
        // Indices whose registered bounds lie in the source need no check.
        if !self.known_bounds(&ix).is_some_and(|(lo, hi)| lo >= 0 && hi < src.len() as i64) {
            permute::check_indices(&self.par, int_slice(&ix), src.len())?;
        }
        let size = if src.vtype() == VType::Bool { 1 } else { 8 };
        crate::memory::check(n, n.saturating_mul(size))?;
        let l = Lazy { form: Form::Pick(src, ix, ss.0.clone()), seg: sd.0.clone(), par: self.par.clone(), forced: OnceLock::new() };
        Ok(Some(CpuVector(Rep::Lazy(Arc::new(l)))))
    }
    /// The packs of a kept gather by each of `counts`: each chunk that keeps any of it
    /// gathers its part in cache ([`pack::Elems::Made`]).
    fn pack_gathered(p: &Par, (src, ix, ss): (Slice, permute::Progressions, &Seg), s: &Seg, counts: &[pack::Counts]) -> Result<Vec<Data>, Trap> {
        fn typed<T: data::Elem>(p: &Par, g: permute::Gathered<T>, s: &Seg, counts: &[pack::Counts]) -> Result<Vec<Data>, Trap> {
            let make = |lo: usize, hi: usize, buf: &mut Vec<T>| g.range(&mut None, lo, hi, buf);
            Ok(pack::pack_many(p, pack::Elems::Made(&make), s, counts)?.into_iter().map(T::wrap).collect())
        }
        match src {
            Slice::Int(x) => typed(p, permute::Gathered { src: x, ix, ss }, s, counts),
            Slice::Float(x) => typed(p, permute::Gathered { src: x, ix, ss }, s, counts),
            Slice::Bool(x) => typed(p, permute::Gathered { src: x, ix, ss }, s, counts),
        }
    }
    /// A vector kept as `form` over `s`, written out on first use.
    fn lazy(&self, form: Form, s: &CpuSegdes) -> CpuVector {
        let l = Lazy { form, seg: s.0.clone(), par: self.par.clone(), forced: OnceLock::new() };
        CpuVector(Rep::Lazy(Arc::new(l)))
    }
    /// `a op b` on long vectors: checked, then the one-step program on every core.
    fn elementwise(&self, step: Step, rt: VType, args: &[Operand]) -> Result<CpuVector, Trap> {
        let len = args.first().map_or(0, |a| a.len());
        Ok(vecd(fused::eval(&self.par, &Prog::one(step, rt), args, len)?))
    }
    /// `REPLACE` into `out`, the elements of the replaced vector (owned); indices checked.
    fn replace_into(mut out: Data, i: &[i64], x: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        each_mut!(&mut out, x.elems()?, |o, y| permute::replace(o, i, y, &s.0));
        Ok(vecd(out))
    }
}

impl Cvl for CpuCvl {
    type Vector = CpuVector;
    type Segdes = CpuSegdes;

    fn name(&self) -> &'static str {
        "cpu"
    }
    fn len(&self, v: &CpuVector) -> usize {
        v.len()
    }
    fn vtype(&self, v: &CpuVector) -> VType {
        v.vtype()
    }
    fn segment_count(&self, s: &CpuSegdes) -> usize {
        s.0.m()
    }
    fn element_count(&self, s: &CpuSegdes) -> usize {
        s.0.total()
    }

    fn from_host(&mut self, v: HostVector) -> Result<CpuVector, Trap> {
        Ok(vecd(match v {
            HostVector::Int(x) => Data::Int(x),
            HostVector::Float(x) => Data::Float(x),
            HostVector::Bool(x) => Data::Bool(x),
        }))
    }
    fn to_host(&mut self, v: &CpuVector) -> Result<HostVector, Trap> {
        Ok(match v.elems()? {
            Slice::Int(x) => HostVector::Int(x.to_vec()),
            Slice::Float(x) => HostVector::Float(x.to_vec()),
            Slice::Bool(x) => HostVector::Bool(x.to_vec()),
        })
    }
    fn to_host_prefix(&mut self, v: &CpuVector, n: usize) -> Result<HostVector, Trap> {
        // A `DIST` or `INDEX` not written out stays so: its prefix is written alone.
        let n = n.min(v.len());
        let cut;
        let d = match &v.0 {
            Rep::Lazy(l) if l.forced.get().is_none() && !v.has_gaps() => {
                cut = l.prefix(n)?;
                &cut
            }
            _ => v.data()?,
        };
        Ok(match d {
            Data::Int(x) => HostVector::Int(x[..n].to_vec()),
            Data::Float(x) => HostVector::Float(x[..n].to_vec()),
            Data::Bool(x) => HostVector::Bool(x[..n].to_vec()),
        })
    }
    fn any_non_finite(&mut self, v: &CpuVector) -> Result<bool, Trap> {
        if let Rep::Lazy(l) = &v.0 {
            if let (Form::Dist(vals), None) = (&l.form, l.forced.get()) {
                // Every element is one of the values (of a segment that is not empty).
                return Ok(matches!(&**vals, Data::Float(x) if x.iter().zip(l.seg.lens()).any(|(x, &n)| n > 0 && !x.is_finite())));
            }
        }
        Ok(match v.elems()? {
            Slice::Float(x) => elementwise::any_non_finite(&self.par, x),
            _ => false,
        })
    }
    fn segdes_to_host_prefix(&mut self, s: &CpuSegdes, n: usize) -> Result<Vec<i64>, Trap> {
        let l = s.0.lens();
        Ok(l[..n.min(l.len())].to_vec())
    }
    fn get_int(&mut self, v: &CpuVector, i: usize) -> Result<i64, Trap> {
        let x = match v.elems()? {
            Slice::Int(x) => x,
            s => return Err(Trap::ty(format!("the scalar must be INT, not {}", s.vtype().name()))),
        };
        x.get(i).copied().ok_or_else(|| Trap::index(i as i64, x.len()))
    }
    fn get_bool(&mut self, v: &CpuVector, i: usize) -> Result<bool, Trap> {
        let x = match v.elems()? {
            Slice::Bool(x) => x,
            s => return Err(Trap::ty(format!("the flag must be BOOL, not {}", s.vtype().name()))),
        };
        x.get(i).copied().ok_or_else(|| Trap::index(i as i64, x.len()))
    }
    fn fill(&mut self, value: HostScalar, n: usize) -> Result<CpuVector, Trap> {
        self.limit(n)?;
        let p = &self.par;
        Ok(vecd(match value {
            HostScalar::Int(x) => Data::Int(mem::filled(p, x, n)?),
            HostScalar::Float(x) => Data::Float(mem::filled(p, x, n)?),
            HostScalar::Bool(x) => Data::Bool(mem::filled(p, x, n)?),
        }))
    }

    fn make_segdes(&mut self, lengths: &CpuVector) -> Result<CpuSegdes, Trap> {
        let l = lengths.arc()?;
        ints(l, "MAKE_SEGDES lengths")?;
        self.seg(l.clone())
    }
    fn segdes_from_host(&mut self, lengths: &[i64]) -> Result<CpuSegdes, Trap> {
        self.seg(Arc::new(Data::Int(mem::copied(&self.par, lengths)?)))
    }
    fn lengths(&mut self, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        Ok(CpuVector(Rep::Data(s.0.lens_buf().clone())))
    }
    fn segdes_to_host(&mut self, s: &CpuSegdes) -> Result<Vec<i64>, Trap> {
        Ok(s.0.lens().to_vec())
    }

    fn binary(&mut self, op: BinOp, a: &CpuVector, b: &CpuVector) -> Result<CpuVector, Trap> {
        // An integer divisor is checked whole first: written out if it is a `DIST`.
        let int_div = matches!(op, BinOp::Div | BinOp::Mod) && b.vtype() == VType::Int;
        let lazy = a.is_lazy() || (b.is_lazy() && !int_div);
        if !lazy && (a.len() < THREADS_FROM || self.par.threads() == 1) {
            let mut out = Data::none();
            elementwise::binary_into(op, a.elems()?, b.elems()?, &mut out)?;
            return Ok(vecd(out));
        }
        elementwise::binary_check(op, a.shape(), b.shape())?;
        if int_div {
            elementwise::check_divisors(&self.par, op, ints(b.data()?, "the divisor")?)?;
        }
        let rt = if op.is_comparison() { VType::Bool } else { a.vtype() };
        self.elementwise(Step::Bin(op, fused::Src::Arg(0), fused::Src::Arg(1)), rt, &[a.operand()?, b.operand()?])
    }
    fn unary(&mut self, op: UnOp, a: &CpuVector) -> Result<CpuVector, Trap> {
        if !a.is_lazy() && (a.len() < THREADS_FROM || self.par.threads() == 1) {
            let mut out = Data::none();
            elementwise::unary_into(op, a.elems()?, &mut out)?;
            return Ok(vecd(out));
        }
        let rt = crate::fused::node_types(crate::fused::NodeKind::Unary(op), a.vtype())
            .map_err(|_| data::unsupported(&format!("`{}`", crate::fused::unop_name(op)), a.vtype()))?;
        self.elementwise(Step::Un(op, fused::Src::Arg(0)), rt, &[a.operand()?])
    }
    fn select(&mut self, f: &CpuVector, a: &CpuVector, b: &CpuVector) -> Result<CpuVector, Trap> {
        let lazy = f.is_lazy() || a.is_lazy() || b.is_lazy();
        if !lazy && (a.len() < THREADS_FROM || self.par.threads() == 1) {
            let mut out = Data::none();
            elementwise::select_into(f.elems()?, a.elems()?, b.elems()?, &mut out)?;
            return Ok(vecd(out));
        }
        elementwise::select_check(f.shape(), a.shape(), b.shape())?;
        use fused::Src::Arg;
        self.elementwise(Step::Sel(Arg(0), Arg(1), Arg(2)), a.vtype(), &[f.operand()?, a.operand()?, b.operand()?])
    }
    #[inline]
    fn host_scalars(&self) -> bool {
        self.host_scalars
    }
    #[inline]
    fn scalar_of(&mut self, v: &CpuVector) -> Result<HostScalar, Trap> {
        if v.len() != 1 {
            return Err(Trap::length(format!("a scalar is one element, not {}", v.len())));
        }
        let missing = || Trap::length("a one-element vector without its element");
        Ok(match v.elems()? {
            Slice::Int(x) => HostScalar::Int(*x.first().ok_or_else(missing)?),
            Slice::Float(x) => HostScalar::Float(*x.first().ok_or_else(missing)?),
            Slice::Bool(x) => HostScalar::Bool(*x.first().ok_or_else(missing)?),
        })
    }
    #[inline(always)]
    fn scalar_binary(&mut self, op: BinOp, a: HostScalar, b: HostScalar) -> Result<HostScalar, Trap> {
        elementwise::binary_one(op, a, b)
    }
    #[inline(always)]
    fn scalar_unary(&mut self, op: UnOp, a: HostScalar) -> Result<HostScalar, Trap> {
        elementwise::unary_one(op, a)
    }
    #[inline(always)]
    fn scalar_select(&mut self, f: HostScalar, a: HostScalar, b: HostScalar) -> Result<HostScalar, Trap> {
        elementwise::select_one(f, a, b)
    }
    fn scalar_fused(&mut self, op: &SuperOp, args: &[HostScalar]) -> Result<HostScalar, Trap> {
        if !op.more.is_empty() || op.fold.is_some() || op.guard.is_some() || op.pack.is_some() {
            return Err(Trap::ty("a superoperator over scalars has one element-wise result"));
        }
        if args.len() != op.params.len() {
            return Err(Trap::ty(format!("superoperator with {} operands given {}", op.params.len(), args.len())));
        }
        for (i, (a, p)) in args.iter().zip(&op.params).enumerate() {
            if crate::op::SlotTy::Vec(a.vtype()) != p.slot() {
                return Err(Trap::ty(format!("superoperator operand ${i} should be {}, found {}", p.slot().name(), a.vtype().name())));
            }
        }
        fused::eval_one(&*self.progs.get(op)?, args)
    }
    fn rand(&mut self, bounds: &CpuVector) -> Result<CpuVector, Trap> {
        // splitmix64 is counter based: draw `j` of this call is the output for state
        // `rng + (j+1)*GOLDEN`, so blocks draw independently and identically.
        let base = self.rng;
        let draw = |pos: usize, bound: i64| (splitmix(base.wrapping_add(GOLDEN.wrapping_mul((pos + 1) as u64))) % bound.unsigned_abs()) as i64;
        let n = bounds.len();
        let out = if let Some((vals, seg)) = bounds.lazy_dist() {
            // Bounds kept as a `DIST` (`{rand(r) : r in dist(x, n)}`): read per segment,
            // never written out.
            let vals = ints(vals, "RAND bounds")?;
            if seg.lens().iter().zip(vals).any(|(&l, &v)| l > 0 && v == 0) {
                return Err(Trap::new(TrapKind::DivisionByZero));
            }
            mem::build(n, |out| {
                self.par.blocks_mut(out, |lo, blk| {
                    let (mut k, mut j) = (seg.segment_at(lo), 0);
                    while j < blk.len() {
                        while seg.start(k) + seg.len(k) <= lo + j {
                            k += 1;
                        }
                        let end = (seg.start(k) + seg.len(k) - lo).min(blk.len());
                        for (t, o) in blk[j..end].iter_mut().enumerate() {
                            o.write(draw(lo + j + t, vals[k]));
                        }
                        j = end;
                    }
                });
                Ok(())
            })?
        } else {
            let b = ints(bounds.data()?, "RAND bounds")?;
            if b.contains(&0) {
                return Err(Trap::new(TrapKind::DivisionByZero));
            }
            mem::build(n, |out| {
                self.par.blocks_mut(out, |lo, blk| {
                    for (j, (o, &x)) in blk.iter_mut().zip(&b[lo..]).enumerate() {
                        o.write(draw(lo + j, x));
                    }
                });
                Ok(())
            })?
        };
        self.rng = base.wrapping_add(GOLDEN.wrapping_mul(n as u64));
        Ok(vecd(Data::Int(out)))
    }
    fn srand(&mut self, seed: i64) -> Result<(), Trap> {
        self.rng = seed as u64;
        Ok(())
    }

    fn scan(&mut self, op: ReduceOp, v: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        check::scan_reduce(true, v.shape(), s.shape())?;
        Ok(vecd(scan::scan(&self.par, op, v.data()?, &s.0)?))
    }
    fn reduce(&mut self, op: ReduceOp, v: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        check::scan_reduce(false, v.shape(), s.shape())?;
        if matches!(op, ReduceOp::Min | ReduceOp::Max) && s.0.m() == 1 {
            if let Some(x) = self.whole_extreme(v, op == ReduceOp::Max)? {
                return Ok(vecd(Data::Int(vec![x])));
            }
        }
        Ok(vecd(scan::reduce(&self.par, op, v.data()?, &s.0)?))
    }

    fn permute(&mut self, v: &CpuVector, i: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        check::permute(v.shape(), i.shape(), s.shape())?;
        let ia = i.arc()?;
        let iv = ints(ia, "PERMUTE indices")?;
        let p = &self.par;
        if self.is_permutation(ia, &s.0) {
            let t = Targets::permutation(iv);
            return Ok(vecd(each!(v.elems()?, |x| permute::permute_by_permutation(p, x, t, &s.0))));
        }
        let t = Targets::new(iv, None);
        Ok(vecd(each!(v.elems()?, |x| {
            mem::filled(p, Default::default(), x.len()).and_then(|mut out| permute::scatter(p, &mut out, x, t, &s.0, &s.0).map(|_| out))
        })))
    }
    fn dpermute(&mut self, v: &CpuVector, i: &CpuVector, d: &CpuVector, ss: &CpuSegdes, sd: &CpuSegdes) -> Result<CpuVector, Trap> {
        check::dpermute(v.shape(), i.shape(), d.shape(), ss.shape(), sd.shape())?;
        let p = &self.par;
        if let Some(ix) = i.progressions().filter(|&ix| permute::unit(ix, &ss.0, &sd.0)) {
            if let Some(r) = Self::scatter_into_dist(p, v, permute::HoleWrite::Unit(p, ix), d, ss, sd)? {
                return Ok(r);
            }
        }
        if let Some((ix, plan)) = i.progressions().and_then(|ix| Some((ix, permute::plan(p, ix, &ss.0, &sd.0)?))) {
            if let Some(r) = Self::scatter_into_dist(p, v, permute::HoleWrite::Runs(p, ix, &plan), d, ss, sd)? {
                return Ok(r);
            }
            return Self::scatter_into_copy(p, v, ix, &plan, d, ss, sd);
        }
        let iv = ints(i.data()?, "DPERMUTE indices")?;
        Ok(vecd(each2!(v.elems()?, d.elems()?, |x, dv| {
            mem::copied(p, dv).and_then(|mut out| permute::scatter(p, &mut out, x, Targets::new(iv, None), &ss.0, &sd.0).map(|_| out))
        })))
    }
    fn fpermute(&mut self, v: &CpuVector, i: &CpuVector, f: &CpuVector, ss: &CpuSegdes, sd: &CpuSegdes) -> Result<CpuVector, Trap> {
        check::fpermute(v.shape(), i.shape(), f.shape(), ss.shape(), sd.shape())?;
        let (iv, fv) = (ints(i.data()?, "FPERMUTE indices")?, bools(f.data()?, "FPERMUTE flags")?);
        let p = &self.par;
        Ok(vecd(each!(v.elems()?, |x| {
            mem::filled(p, Default::default(), sd.0.total())
                .and_then(|mut out| permute::scatter(p, &mut out, x, Targets::new(iv, Some(fv)), &ss.0, &sd.0).map(|_| out))
        })))
    }
    fn bpermute(&mut self, v: &CpuVector, i: &CpuVector, ss: &CpuSegdes, sd: &CpuSegdes) -> Result<CpuVector, Trap> {
        check::bpermute(v.shape(), i.shape(), ss.shape(), sd.shape())?;
        let p = &self.par;
        if let Some(ix) = i.progressions() {
            if let Some(r) = self.range_gather(v, ix, &ss.0, &sd.0)? {
                return Ok(r);
            }
            if let Some(r) = self.lazy_gather(v, i, ss, sd)? {
                return Ok(r);
            }
            let runs = match v.elems()? {
                Slice::Int(x) => permute::gather_runs(p, x, ix, &ss.0, &sd.0)?.map(Data::Int),
                Slice::Float(x) => permute::gather_runs(p, x, ix, &ss.0, &sd.0)?.map(Data::Float),
                Slice::Bool(x) => permute::gather_runs(p, x, ix, &ss.0, &sd.0)?.map(Data::Bool),
            };
            if let Some(r) = runs {
                return Ok(vecd(r));
            }
        }
        if let Some(r) = self.lazy_pick(v, i, ss, sd)? {
            return Ok(r);
        }
        let iv = ints(i.data()?, "BPERMUTE indices")?;
        Ok(vecd(each!(v.elems()?, |x| permute::gather(p, x, iv, None, &ss.0, &sd.0))))
    }
    fn bfpermute(&mut self, v: &CpuVector, i: &CpuVector, f: &CpuVector, ss: &CpuSegdes, sd: &CpuSegdes) -> Result<CpuVector, Trap> {
        check::bfpermute(v.shape(), i.shape(), f.shape(), ss.shape(), sd.shape())?;
        let (iv, fv) = (ints(i.data()?, "BFPERMUTE indices")?, bools(f.data()?, "BFPERMUTE flags")?);
        let p = &self.par;
        Ok(vecd(each!(v.elems()?, |x| permute::gather(p, x, iv, Some(fv), &ss.0, &sd.0))))
    }
    fn dfpermute(
        &mut self,
        v: &CpuVector,
        i: &CpuVector,
        f: &CpuVector,
        d: &CpuVector,
        ss: &CpuSegdes,
        sd: &CpuSegdes,
    ) -> Result<CpuVector, Trap> {
        check::dfpermute(v.shape(), i.shape(), f.shape(), d.shape(), ss.shape(), sd.shape())?;
        let (iv, fv) = (ints(i.data()?, "DFPERMUTE indices")?, bools(f.data()?, "DFPERMUTE flags")?);
        let p = &self.par;
        Ok(vecd(each2!(v.elems()?, d.elems()?, |x, dv| {
            mem::copied(p, dv).and_then(|mut out| permute::scatter(p, &mut out, x, Targets::new(iv, Some(fv)), &ss.0, &sd.0).map(|_| out))
        })))
    }

    fn dist(&mut self, x: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        check::dist(x.shape(), s.shape())?;
        let vals = x.arc()?;
        if s.0.total() >= LAZY_MIN && s.0.total() >= LAZY_SEGMENT * s.0.m() {
            // Refused here, as written out, when it could not be stored (any reader but a
            // superoperator writes it out): the error names the `DIST`.
            let n = s.0.total();
            let size = if vals.vtype() == VType::Bool { 1 } else { 8 };
            crate::memory::check(n, n.saturating_mul(size))?;
            return Ok(self.lazy(Form::Dist(vals.clone()), s));
        }
        let p = &self.par;
        Ok(vecd(each!(&**vals, |v| permute::dist(p, v, &s.0))))
    }
    fn index(&mut self, b: &CpuVector, k: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        check::index(b.shape(), k.shape(), s.shape())?;
        let (ba, ka) = (b.arc()?, k.arc()?);
        let (bv, kv) = (ints(ba, "INDEX start")?, ints(ka, "INDEX stride")?);
        if s.0.total() >= LAZY_MIN && s.0.total() >= LAZY_INDEX_SEGMENT * s.0.m() {
            // Refused here when it could not be stored, as a written one would be.
            let n = s.0.total();
            crate::memory::check(n, n.saturating_mul(8))?;
            return Ok(self.lazy(Form::Index(ba.clone(), ka.clone()), s));
        }
        Ok(vecd(Data::Int(permute::index(&self.par, bv, kv, &s.0)?)))
    }
    fn extract(&mut self, v: &CpuVector, i: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        check::extract(v.shape(), i.shape(), s.shape())?;
        let iv = ints(i.data()?, "EXTRACT indices")?;
        let p = &self.par;
        if let Some((src, ix, ss)) = v.gathered() {
            // Read through a kept gather (quicksort's pivots from the `else` branch's
            // elements), which the superoperators after it gather chunk by chunk.
            let r = match src {
                Slice::Int(x) => permute::Gathered { src: x, ix, ss }.extract(p, iv, &s.0).map(|r| r.map(Data::Int)),
                Slice::Float(x) => permute::Gathered { src: x, ix, ss }.extract(p, iv, &s.0).map(|r| r.map(Data::Float)),
                Slice::Bool(x) => permute::Gathered { src: x, ix, ss }.extract(p, iv, &s.0).map(|r| r.map(Data::Bool)),
            };
            if let Some(r) = r {
                return Ok(vecd(r?));
            }
        }
        Ok(vecd(each!(v.elems()?, |x| permute::extract(p, x, iv, &s.0))))
    }
    fn replace(&mut self, v: &CpuVector, i: &CpuVector, x: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        check::replace(v.shape(), i.shape(), x.shape(), s.shape())?;
        let iv = ints(i.data()?, "REPLACE indices")?;
        permute::check_replace(iv, &s.0)?;
        let p = &self.par;
        let copy = each!(v.elems()?, |y| mem::copied(p, y));
        Self::replace_into(copy, iv, x, s)
    }

    fn binary_reusing(&mut self, op: BinOp, a: &mut CpuVector, b: &CpuVector) -> Result<CpuVector, Trap> {
        if !b.is_lazy() {
            if let Some(buf) = a.owned() {
                if elementwise::binary_in_place(&self.par, op, buf, b.elems()?)? {
                    return Ok(a.clone());
                }
            }
        }
        self.binary(op, a, b)
    }
    fn unary_reusing(&mut self, op: UnOp, a: &mut CpuVector) -> Result<CpuVector, Trap> {
        if let Some(buf) = a.owned() {
            if elementwise::unary_in_place(&self.par, op, buf) {
                return Ok(a.clone());
            }
        }
        self.unary(op, a)
    }
    fn replace_reusing(&mut self, v: &mut CpuVector, i: &CpuVector, x: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        check::replace(v.shape(), i.shape(), x.shape(), s.shape())?;
        let iv = ints(i.data()?, "REPLACE indices")?;
        permute::check_replace(iv, &s.0)?;
        if let Some(buf) = v.unique()? {
            // Every check that can fail was made before the first write.
            let out = std::mem::replace(buf, Data::none());
            return Self::replace_into(out, iv, x, s);
        }
        self.replace(v, i, x, s)
    }
    fn dpermute_reusing(
        &mut self,
        v: &CpuVector,
        i: &CpuVector,
        d: &mut CpuVector,
        ss: &CpuSegdes,
        sd: &CpuSegdes,
    ) -> Result<CpuVector, Trap> {
        check::dpermute(v.shape(), i.shape(), d.shape(), ss.shape(), sd.shape())?;
        let p = &self.par.clone();
        if let Some(ix) = i.progressions().filter(|&ix| permute::unit(ix, &ss.0, &sd.0)) {
            // Runs of consecutive places, checked as they are written, in one pass (no
            // plan): into a `DIST` (gaps between them), into the gaps of a vector with
            // gaps, or over the only handle's elements. Where they do not ascend, the
            // planned path below writes them all again.
            let how = permute::HoleWrite::Unit(p, ix);
            if d.lazy_dist_arcs().is_some() {
                if let Some(r) = Self::scatter_into_dist(p, v, how, d, ss, sd)? {
                    return Ok(r);
                }
            } else if d.has_gaps() {
                if let Some(r) = Self::into_holes(v, how, d, ss, sd)? {
                    return Ok(r);
                }
            } else if let Some(buf) = d.unique()? {
                if each_mut!(buf, v.elems()?, |o, x| permute::scatter_unit_over(p, o, x, ix)) {
                    return Ok(d.clone());
                }
            }
        }
        if let Some((ix, plan)) = i.progressions().and_then(|ix| Some((ix, permute::plan(p, ix, &ss.0, &sd.0)?))) {
            if let Some(r) = Self::scatter_into_dist(p, v, permute::HoleWrite::Runs(p, ix, &plan), d, ss, sd)? {
                return Ok(r);
            }
            if let Some(r) = Self::into_holes(v, permute::HoleWrite::Runs(p, ix, &plan), d, ss, sd)? {
                return Ok(r);
            }
            let Some(buf) = d.unique()? else { return Self::scatter_into_copy(p, v, ix, &plan, d, ss, sd) };
            each_mut!(buf, v.elems()?, |o, x| permute::scatter_runs(p, o, x, ix, &ss.0, &sd.0, &plan));
            return Ok(d.clone());
        }
        let iv = ints(i.data()?, "DPERMUTE indices")?;
        // Every index is checked before the first write: the operand survives a trap, and
        // the scatter (into its gaps or over it) does not check them again.
        let targets = permute::check_scatter(p, iv, None, &ss.0, &sd.0)?;
        if d.has_gaps() {
            if let Some(r) = Self::into_holes(v, permute::HoleWrite::Written(p, targets), d, ss, sd)? {
                return Ok(r);
            }
        }
        if let Some(r) = Self::scatter_ascending_into_dist(p, v, targets, d, ss, sd)? {
            return Ok(r);
        }
        let Some(buf) = d.unique()? else { return self.dpermute(v, i, d, ss, sd) };
        each_mut!(buf, v.elems()?, |o, x| permute::scatter(p, o, x, targets, &ss.0, &sd.0))?;
        Ok(d.clone())
    }

    fn pack(&mut self, v: &CpuVector, f: &CpuVector, s: &CpuSegdes) -> Result<(CpuVector, CpuSegdes), Trap> {
        check::pack(v.shape(), f.shape(), s.shape())?;
        let fv = bools(f.data()?, "PACK flags")?;
        let p = &self.par;
        let counts = pack::count(p, pack::Ones::of_bools(p, fv)?, &s.0)?;
        let data = match v.gathered() {
            Some(g) => Self::pack_gathered(p, g, &s.0, std::slice::from_ref(&counts))?.pop().unwrap_or_else(Data::none),
            None => each!(v.elems()?, |x| pack::pack(p, x, &s.0, &counts)),
        };
        let seg = self.seg(Arc::new(Data::Int(counts.lens)))?;
        Ok((vecd(data), seg))
    }
    fn rank(&mut self, up: bool, v: &CpuVector, s: &CpuSegdes) -> Result<CpuVector, Trap> {
        check::rank(v.shape(), s.shape())?;
        let r = Arc::new(Data::Int(match v.data()? {
            Data::Int(x) => rank::rank(&self.par, x, &s.0, up)?,
            Data::Float(x) => rank::rank(&self.par, x, &s.0, up)?,
            Data::Bool(_) => return Err(data::unsupported("RANK", VType::Bool)),
        }));
        self.permutations.retain(|(w, _)| w.strong_count() > 0);
        self.permutations.push((Arc::downgrade(&r), s.0.clone()));
        Ok(CpuVector(Rep::Data(r)))
    }

    fn fused_fold(&mut self, op: &SuperOp, args: &[Option<&CpuVector>], seg: &CpuSegdes, len: usize) -> Result<CpuVector, Trap> {
        let Some(fold) = op.fold else {
            return Err(Trap::ty("superoperator has no fold"));
        };
        let (prog, slices) = self.fused_args(op, args, len)?;
        check::len("folded segment descriptor", seg.0.total(), len)?;
        let (p, s) = (&self.par, &seg.0);
        Ok(vecd(match fold.kind {
            FoldKind::Reduce => {
                scan::monoid!(fold.op, prog.result_type(), |id, lanes, f| fused::reduce(p, &prog, &slices, s, id, lanes, f)?.swap_remove(0))
            }
            FoldKind::Scan => {
                scan::monoid!(fold.op, prog.result_type(), |id, lanes, f| fused::scan(p, &prog, &slices, s, id, lanes, f)?)
            }
        }))
    }
    fn fused_guarded(
        &mut self,
        op: &SuperOp,
        args: &[Option<&CpuVector>],
        seg: &CpuSegdes,
        len: usize,
    ) -> Result<(CpuVector, CpuVector), Trap> {
        if op.guard.is_none() || !op.more.is_empty() {
            return Err(Trap::ty("superoperator has no guard, or several results"));
        }
        check::len("guard segment descriptor", seg.0.total(), len)?;
        if seg.0.m() != 1 {
            // One flag per segment: the guard's fold, then the body (two passes).
            let guard = op.guard_op().ok_or_else(|| Trap::ty("superoperator has no guard"))?;
            let flags = self.fused_fold(&guard, args, seg, len)?;
            return Ok((self.fused(&op.without_fold(), args, len)?, flags));
        }
        let (prog, slices) = self.fused_args(op, args, len)?;
        let (r, any) = fused::eval_guarded(&self.par, &prog, &slices, len)?;
        Ok((vecd(r), vecd(Data::Bool(vec![any]))))
    }
    fn fused_many(&mut self, op: &SuperOp, args: &[Option<&CpuVector>], seg: Option<&CpuSegdes>, len: usize) -> Result<Vec<CpuVector>, Trap> {
        if op.pack.is_some() {
            return Err(Trap::ty("a superoperator with a pack has one kind of result"));
        }
        if let Some(fold) = op.fold {
            // Several reductions: every tree's values reduced from one pass.
            let seg = seg.ok_or_else(|| Trap::ty("a folding superoperator's descriptor is missing"))?;
            if fold.kind != FoldKind::Reduce {
                return Err(Trap::ty("a superoperator with several results has no scan"));
            }
            let (prog, slices) = self.fused_args(op, args, len)?;
            check::len("folded segment descriptor", seg.0.total(), len)?;
            let (p, s) = (&self.par, &seg.0);
            let rest: Vec<Data>;
            let first = scan::monoid!(fold.op, prog.result_type(), |id, lanes, f| {
                let mut all = fused::reduce(p, &prog, &slices, s, id, lanes, f)?;
                let first = all.remove(0);
                rest = all.into_iter().map(data::Elem::wrap).collect();
                first
            });
            return Ok(std::iter::once(first).chain(rest).map(vecd).collect());
        }
        // A guard over several segments (a flag each) runs as its fold first, then the
        // values without it; over one segment, in the same pass as the values.
        let mut flags = None;
        let mut op = std::borrow::Cow::Borrowed(op);
        if op.guard.is_some() {
            let seg = seg.ok_or_else(|| Trap::ty("a guarded superoperator's descriptor is missing"))?;
            check::len("guard segment descriptor", seg.0.total(), len)?;
            if seg.0.m() != 1 {
                let guard = op.guard_op().ok_or_else(|| Trap::ty("superoperator has no guard"))?;
                flags = Some(self.fused_fold(&guard, args, seg, len)?);
                op = std::borrow::Cow::Owned(SuperOp { guard: None, ..op.into_owned() });
            }
        }
        let (prog, slices) = self.fused_args(&op, args, len)?;
        let (outs, any) = fused::eval_many(&self.par, &prog, &slices, len)?;
        let mut r: Vec<CpuVector> = outs.into_iter().map(vecd).collect();
        if op.guard.is_some() {
            r.push(vecd(Data::Bool(vec![any])));
        }
        r.extend(flags);
        Ok(r)
    }
    fn fused_pack(
        &mut self,
        op: &SuperOp,
        args: &[Option<&CpuVector>],
        seg: &CpuSegdes,
        len: usize,
    ) -> Result<Vec<(CpuVector, CpuSegdes)>, Trap> {
        let Some(pk) = &op.pack else {
            return Err(Trap::ty("superoperator has no pack"));
        };
        check::len("pack segment descriptor", seg.0.total(), len)?;
        let slices = fused_operands(op, args, len)?;
        let progs = self.progs.flags(op)?;
        if progs.len() != pk.flags.len() {
            return Err(Trap::ty("a pack's flag programs do not match its flags"));
        }
        // Every flag tree in one pass over the operands, then every pack in one pass over
        // the body's values.
        let flags = fused::eval_flags(&self.par, &progs, &slices, len)?;
        let data = match op.body {
            crate::fused::Expr::Arg(i) => args.get(i).copied().flatten().cloned().ok_or_else(|| Trap::ty(format!("pack operand ${i} is not a vector")))?,
            _ => self.fused(&op.without_fold(), args, len)?,
        };
        let p = &self.par;
        let counts = flags
            .into_iter()
            .map(|f| pack::Ones::of_bits(f, len).ok_or_else(|| Trap::ty("a pack's flags are not as long as its descriptor")))
            .map(|ones| pack::count(p, ones?, &seg.0))
            .collect::<Result<Vec<_>, _>>()?;
        let packed: Vec<Data> = if let Some(g) = data.gathered() {
            Self::pack_gathered(p, g, &seg.0, &counts)?
        } else if let Some(ix) = data.progressions() {
            // An `INDEX` not written out (`max_index`'s positions) stays so: each chunk
            // that keeps any of it makes its part.
            let make = |lo: usize, hi: usize, buf: &mut Vec<i64>| ix.runs(&mut None, lo, hi, |_, r| buf.extend(r.indices()));
            pack::pack_many(p, pack::Elems::Made(&make), &seg.0, &counts)?.into_iter().map(Data::Int).collect()
        } else {
            match data.elems()? {
                Slice::Int(x) => pack::pack_many(p, pack::Elems::Stored(x), &seg.0, &counts)?.into_iter().map(Data::Int).collect(),
                Slice::Float(x) => pack::pack_many(p, pack::Elems::Stored(x), &seg.0, &counts)?.into_iter().map(Data::Float).collect(),
                Slice::Bool(x) => pack::pack_many(p, pack::Elems::Stored(x), &seg.0, &counts)?.into_iter().map(Data::Bool).collect(),
            }
        };
        packed
            .into_iter()
            .zip(counts)
            .map(|(d, c)| Ok((vecd(d), self.seg(Arc::new(Data::Int(c.lens)))?)))
            .collect()
    }
    fn fused(&mut self, op: &SuperOp, args: &[Option<&CpuVector>], len: usize) -> Result<CpuVector, Trap> {
        if !op.more.is_empty() {
            return Err(Trap::ty("a superoperator with several results pushes each (FUSED runs it through `fused_many`)"));
        }
        if op.guard.is_some() {
            return Err(Trap::ty("a superoperator with a guard pushes two results (FUSED runs it through `fused_guarded`)"));
        }
        if op.pack.is_some() {
            return Err(Trap::ty("a superoperator with a pack pushes two results per flag (FUSED runs it through `fused_pack`)"));
        }
        let (prog, slices) = self.fused_args(op, args, len)?;
        if let Some(v) = self.affine_index(op, args)? {
            return Ok(v);
        }
        Ok(vecd(fused::eval(&self.par, &prog, &slices, len)?))
    }
    fn fused_reusing(&mut self, op: &SuperOp, args: &mut [Option<&mut CpuVector>], len: usize) -> Result<CpuVector, Trap> {
        if !op.more.is_empty() {
            return Err(Trap::ty("a superoperator with several results pushes each (FUSED runs it through `fused_many`)"));
        }
        if op.guard.is_some() {
            return Err(Trap::ty("a superoperator with a guard pushes two results (FUSED runs it through `fused_guarded`)"));
        }
        let shared: SmallVec<[Option<&CpuVector>; 8]> = args.iter().map(|a| a.as_deref()).collect();
        let (prog, _) = self.fused_args(op, &shared, len)?;
        if let Some(v) = self.affine_index(op, &shared)? {
            return Ok(v);
        }
        drop(shared);
        // An operand of the result's type (else of its width: `INT` and `FLOAT`) whose only
        // handle the caller gives up takes the result, unless an element could trap half
        // way.
        let rt = prog.result_type();
        let mut writable = |same: bool| {
            args.iter_mut().position(|a| match a {
                Some(v) => (if same { v.vtype() == rt } else { data::same_width(v.vtype(), rt) }) && v.len() == len && v.owned().is_some(),
                None => false,
            })
        };
        let over = if prog.may_trap() { None } else { writable(true).or_else(|| writable(false)) };
        let Some(r) = over else {
            // Nothing to write over: a fresh result, from the program compiled above.
            let slices: Operands = args.iter().map(|a| a.as_deref().map_or(Ok(Operand::Elems(Slice::Int(&[]))), |v| v.operand())).collect::<Result<_, _>>()?;
            return Ok(vecd(fused::eval(&self.par, &prog, &slices, len)?));
        };
        let operand_type = args[r].as_ref().map_or(rt, |v| v.vtype());
        let mut out = match args[r].as_mut().and_then(|v| v.owned()) {
            Some(buf) => match data::retype(std::mem::replace(buf, Data::none()), rt) {
                Ok(d) => d,
                Err(d) => {
                    *buf = d;
                    return Err(Trap::ty("superoperator operand of another width"));
                }
            },
            None => return Err(Trap::ty("superoperator operand vanished")),
        };
        let res = {
            let slices: Result<Operands, Trap> = args
                .iter()
                .enumerate()
                .map(|(i, a)| match a {
                    Some(v) if i != r => v.operand(),
                    _ => Ok(Operand::Elems(Slice::Int(&[]))),
                })
                .collect::<Result<_, _>>();
            slices.and_then(|slices| fused::eval_over(&self.par, &prog, &slices, &mut out, (r, operand_type)))
        };
        match res {
            Ok(()) => match args[r].as_mut() {
                // The result goes back into the operand's storage: its handle is the
                // result's (the caller drops the operand's slot).
                Some(v) => match v.owned() {
                    Some(buf) => {
                        *buf = out;
                        Ok(v.clone())
                    }
                    None => Ok(vecd(out)),
                },
                None => Ok(vecd(out)),
            },
            Err(t) => {
                // Cannot happen for a program that cannot trap; keep the operand anyway.
                if let (Some(buf), Ok(d)) = (args[r].as_mut().and_then(|v| v.owned()), data::retype(out, operand_type)) {
                    *buf = d;
                }
                Err(t)
            }
        }
    }
}

/// A superoperator's operands, as its evaluation reads them.
type Operands<'a> = SmallVec<[Operand<'a>; 8]>;

/// Checks a superoperator's operands.
fn fused_operands<'a>(op: &SuperOp, args: &[Option<&'a CpuVector>], len: usize) -> Result<Operands<'a>, Trap> {
    if args.len() != op.params.len() {
        return Err(Trap::length(format!("superoperator takes {} operands, got {}", op.params.len(), args.len())));
    }
    let mut slices = Operands::new();
    for (i, a) in args.iter().enumerate() {
        match a {
            Some(v) => {
                if v.len() != len {
                    check::len(&format!("superoperator argument ${i}"), v.len(), len)?;
                }
                slices.push(v.operand()?);
            }
            // A segment descriptor operand only gave the length; never read.
            None if op.params[i] == crate::op::Ty::Segdes => slices.push(Operand::Elems(Slice::Int(&[]))),
            None => return Err(Trap::ty(format!("superoperator operand ${i} is missing"))),
        }
    }
    Ok(slices)
}

/// The pseudo-random numbers the module's tests draw (a 64-bit linear congruential
/// generator from `seed`, its high 31 bits): one sequence per seed, the same on every run.
#[cfg(test)]
fn test_rng(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed;
    move || {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        x >> 33
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rank::RADIX_MIN;

    fn iv(c: &mut CpuCvl, x: &[i64]) -> CpuVector {
        c.from_host(HostVector::Int(x.to_vec())).expect("host")
    }
    fn host(c: &mut CpuCvl, v: &CpuVector) -> HostVector {
        c.to_host(v).expect("host")
    }

    /// Written-out copies of `v` (a lazy vector's elements as a stored one).
    fn stored(c: &mut CpuCvl, v: &CpuVector) -> CpuVector {
        let h = host(c, v);
        c.from_host(h).expect("host")
    }

    impl CpuCvl {
        /// The buffer of `v` (written out).
        fn arc_of(&self, v: &CpuVector) -> Arc<Data> {
            v.arc().expect("written").clone()
        }
    }

    /// A `PERMUTE` by a result of `RANK` over segments of its lengths skips the index
    /// checks and gives what the same indices written anew (checked) give: one long
    /// segment (the parallel scatter on two threads) and several; a rank over other
    /// lengths is checked as any index (out of range here); the rank's buffer is not
    /// written in place while the library knows it as a permutation.
    #[test]
    fn a_permute_by_a_rank_needs_no_check_and_permutes_alike() {
        for threads in [1, 2] {
            let mut c = CpuCvl::with_threads(threads);
            for lens in [vec![300_000i64], vec![200_000, 5, 0, 99_995]] {
                let s = c.segdes_from_host(&lens).expect("seg");
                let n = lens.iter().sum::<i64>();
                let keys = iv(&mut c, &(0..n).map(|x| (x * 7919 + 13) % 100_003).collect::<Vec<_>>());
                let r = c.rank(true, &keys, &s).expect("rank");
                let i = c.arc_of(&r);
                assert!(c.is_permutation(&i, &s.0), "{threads} threads, {lens:?}");
                let fresh = stored(&mut c, &r);
                assert!(!c.is_permutation(&c.arc_of(&fresh), &s.0));
                let vals = c.from_host(HostVector::Float((0..n).map(|x| x as f64 * 0.25).collect())).expect("host");
                let got = c.permute(&vals, &r, &s).expect("permute");
                let want = c.permute(&vals, &fresh, &s).expect("permute");
                assert_eq!(host(&mut c, &got), host(&mut c, &want), "{threads} threads, {lens:?}");
                // Another descriptor of the same total: the rank is checked there.
                let other = c.segdes_from_host(&[n / 2, n - n / 2]).expect("seg");
                assert!(!c.is_permutation(&i, &other.0));
                if lens.len() == 1 {
                    assert!(c.permute(&vals, &r, &other).is_err(), "indices past a half are out of range there");
                }
                drop(i);
                let mut r2 = r.clone();
                drop(r);
                assert!(r2.owned().is_none(), "registered: not written in place");
            }
        }
    }

    #[test]
    fn index_arithmetic_over_lazy_operands_stays_an_index() {
        for threads in [1, 2] {
            let mut c = CpuCvl::with_threads(threads);
            let lens = [5000, 0, 7000, 3000];
            let n = lens.iter().sum::<i64>() as usize;
            let s = c.segdes_from_host(&lens).expect("seg");
            let (b, k, d) = (iv(&mut c, &[1, 2, 3, -4]), iv(&mut c, &[1, 5, -2, 3]), iv(&mut c, &[10, 20, 30, i64::MAX]));
            let ix = c.index(&b, &k, &s).expect("index");
            let dd = c.dist(&d, &s).expect("dist");
            assert!(!ix.is_written_out() && !dd.is_written_out());
            // (written out from copies: reading a lazy vector's elements writes it out)
            let (ix2, dd2) = (c.index(&b, &k, &s).expect("index"), c.dist(&d, &s).expect("dist"));
            let (ixw, ddw) = (stored(&mut c, &ix2), stored(&mut c, &dd2));
            for (src, stays) in [
                ("(INT INT) (* INT (+ INT $0 (+ INT (CONST INT 7) $1)) (CONST INT 3))", true),
                ("(INT INT) (- INT $1 (* INT $1 $0))", true),
                ("(INT INT) (* INT $0 $0)", false),
                ("(INT INT) (MAX INT $0 $1)", false),
            ] {
                let op = SuperOp::parse(src).expect("parses");
                let lazy = c.fused(&op, &[Some(&ix), Some(&dd)], n).expect("lazy operands");
                assert_eq!(!lazy.is_written_out(), stays, "{src}: kept as an INDEX");
                let want = c.fused(&op, &[Some(&ixw), Some(&ddw)], n).expect("stored operands");
                assert_eq!(host(&mut c, &lazy), host(&mut c, &want), "{src} on {threads} threads");
                // A gather by it reads what a gather by the written indices does.
                let src_v = c.from_host(HostVector::Int((0..4 * n as i64).collect())).expect("host");
                let ss = c.segdes_from_host(&[4 * n as i64]).expect("seg");
                let one = c.segdes_from_host(&[n as i64]).expect("seg");
                if let (Ok(g1), Ok(g2)) = (c.bpermute(&src_v, &lazy, &ss, &one), c.bpermute(&src_v, &want, &ss, &one)) {
                    assert_eq!(host(&mut c, &g1), host(&mut c, &g2), "{src}: gathers");
                }
            }
        }
    }

    /// A `BPERMUTE` by an `INDEX` not written out is kept undone when every index is in
    /// range; a superoperator, a pack root, a plain `PACK`, `EXTRACT` and a reader of its
    /// elements all see what the gather by the written-out indices gives (`INT` and
    /// `FLOAT`, strides 1, -1, 2 and 3); `EXTRACT` over another descriptor writes it out;
    /// an index out of range traps at the `BPERMUTE` as before.
    #[test]
    fn a_gather_by_an_index_is_kept_undone_and_read_as_written() {
        for threads in [1, 2] {
            let mut c = CpuCvl::with_threads(threads);
            let src_lens = [50_000i64, 70_000, 10, 30_000];
            let ss = c.segdes_from_host(&src_lens).expect("seg");
            let total: i64 = src_lens.iter().sum();
            let ints = iv(&mut c, &(0..total).map(|x| (x * 7919) % 1009).collect::<Vec<_>>());
            let floats = c.from_host(HostVector::Float((0..total).map(|x| x as f64 * 0.5).collect())).expect("host");
            let lens = [40_000i64, 20_000, 5, 9_000];
            let sd = c.segdes_from_host(&lens).expect("seg");
            let n = lens.iter().sum::<i64>() as usize;
            let (b, k) = (iv(&mut c, &[100, 69_999, 0, 2]), iv(&mut c, &[1, -1, 2, 3]));
            let ix = c.index(&b, &k, &sd).expect("index");
            // (written out from a copy: reading a lazy vector's elements writes it out)
            let ix2 = c.index(&b, &k, &sd).expect("index");
            let written = stored(&mut c, &ix2);
            for v in [&ints, &floats] {
                let lazy = c.bpermute(v, &ix, &ss, &sd).expect("gather");
                assert!(!lazy.is_written_out(), "kept undone on {threads} threads");
                let want = c.bpermute(v, &written, &ss, &sd).expect("gather");
                let ty = if c.vtype(v) == VType::Int { "INT" } else { "FLOAT" };
                // A superoperator reading it, chunk by chunk.
                let op = SuperOp::parse(&format!("({ty} {ty}) (+ {ty} $0 (* {ty} $1 $1))")).expect("parses");
                let a = c.fused(&op, &[Some(&lazy), Some(&want)], n).expect("fused");
                let b2 = c.fused(&op, &[Some(&want), Some(&want)], n).expect("fused");
                assert_eq!(host(&mut c, &a), host(&mut c, &b2), "{ty}: superoperator");
                // A pack root and a plain pack of it.
                let zero = c.from_host(if ty == "INT" { HostVector::Int(vec![500; 4]) } else { HostVector::Float(vec![20_000.0; 4]) }).expect("host");
                let pivots = c.dist(&zero, &sd).expect("dist");
                let three = SuperOp::parse(&format!("({ty} {ty} SEGDES) (PACK {ty} $0 $2 (< {ty} $0 $1) (= {ty} $0 $1) (> {ty} $0 $1))")).expect("parses");
                let got = c.fused_pack(&three, &[Some(&lazy), Some(&pivots), None], &sd, n).expect("pack root");
                let exp = c.fused_pack(&three, &[Some(&want), Some(&pivots), None], &sd, n).expect("pack root");
                for ((g, gs), (e, es)) in got.iter().zip(&exp) {
                    assert_eq!(host(&mut c, g), host(&mut c, e), "{ty}: pack root");
                    assert_eq!(c.segdes_to_host_prefix(gs, 4).expect("lens"), c.segdes_to_host_prefix(es, 4).expect("lens"));
                }
                let lt = SuperOp::parse(&format!("({ty} {ty}) (< {ty} $0 $1)")).expect("parses");
                let flags = c.fused(&lt, &[Some(&want), Some(&pivots)], n).expect("flags");
                let (g, _) = c.pack(&lazy, &flags, &sd).expect("pack");
                let (e, _) = c.pack(&want, &flags, &sd).expect("pack");
                assert_eq!(host(&mut c, &g), host(&mut c, &e), "{ty}: plain pack");
                // EXTRACT through it, and a bad index's trap; then over another
                // descriptor of as many elements, which writes it out.
                let other = c.segdes_from_host(&[60_000, 9_005]).expect("seg");
                let mut outcome = |at: &[i64], s: &CpuSegdes, v: &CpuVector| {
                    let at = iv(&mut c, at);
                    c.extract(v, &at, s).map(|r| host(&mut c, &r)).map_err(|t| t.to_string())
                };
                for at in [&[39_999, 7, 4, 8_999][..], &[0, 20_000, 0, 0][..], &[-1, 0, 0, 0][..]] {
                    let (g, e) = (outcome(at, &sd, &lazy), outcome(at, &sd, &want));
                    assert_eq!(g, e, "{ty}: extract {at:?}");
                    assert_eq!(g.is_ok(), at[0] == 39_999, "{ty}: extract {at:?}");
                }
                assert!(!lazy.is_written_out(), "{ty}: still undone after its readers");
                let (g, e) = (outcome(&[59_999, 9_004], &other, &lazy), outcome(&[59_999, 9_004], &other, &want));
                assert_eq!(g, e, "{ty}: extract over another descriptor");
                // Its elements.
                assert_eq!(host(&mut c, &lazy), host(&mut c, &want), "{ty}: written out");
            }
            // The last segment's stride 3 from 2 reads to 2 + 3 * 8_999 = 26_999 < 30_000; a
            // start of 3_100 reads past it: refused at the gather.
            let b = iv(&mut c, &[100, 69_999, 0, 3_100]);
            let bad = c.index(&b, &k, &sd).expect("index");
            let bad2 = c.index(&b, &k, &sd).expect("index");
            let bad_written = stored(&mut c, &bad2);
            let (g, e) = (c.bpermute(&ints, &bad, &ss, &sd).unwrap_err(), c.bpermute(&ints, &bad_written, &ss, &sd).unwrap_err());
            assert_eq!(g.to_string(), e.to_string(), "the same trap");
        }
    }

    /// A `BPERMUTE` that looks up a shorter table (one segment) by written-out indices is
    /// kept undone; a superoperator (element-wise and a segmented sum), a plain
    /// element-wise operation, `PACK`, `EXTRACT` and a reader of its elements all see what
    /// the gather gives (`INT`, `FLOAT`, `BOOL`); a gather shorter than the table, or
    /// short, or from several segments is written at once; a bad index traps at the
    /// `BPERMUTE` as the gather's own check does.
    #[test]
    fn a_table_lookup_is_kept_undone_and_read_as_written() {
        let mut rng = test_rng(7);
        for threads in [1, 2] {
            let mut c = CpuCvl::with_threads(threads);
            let (m, n) = (3_001usize, 70_000usize);
            let idx: Vec<i64> = (0..n).map(|_| (rng() % m as u64) as i64).collect();
            let i = iv(&mut c, &idx);
            let (ss, sd) = (c.segdes_from_host(&[m as i64]).expect("seg"), c.segdes_from_host(&[n as i64]).expect("seg"));
            let tables = [
                HostVector::Int((0..m as i64).map(|x| x * 31 - 7_000).collect()),
                HostVector::Float((0..m).map(|x| x as f64 * 0.75 - 3.0).collect()),
                HostVector::Bool((0..m).map(|x| x % 3 == 1).collect()),
            ];
            for t in tables {
                let want_host = match &t {
                    HostVector::Int(v) => HostVector::Int(idx.iter().map(|&k| v[k as usize]).collect()),
                    HostVector::Float(v) => HostVector::Float(idx.iter().map(|&k| v[k as usize]).collect()),
                    HostVector::Bool(v) => HostVector::Bool(idx.iter().map(|&k| v[k as usize]).collect()),
                };
                let v = c.from_host(t).expect("host");
                let lazy = c.bpermute(&v, &i, &ss, &sd).expect("gather");
                assert!(!lazy.is_written_out(), "kept undone on {threads} threads");
                let want = c.from_host(want_host.clone()).expect("host");
                let ty = match c.vtype(&v) {
                    VType::Int => "INT",
                    VType::Float => "FLOAT",
                    _ => "BOOL",
                };
                // Superoperators reading it chunk by chunk: element-wise, and a segmented
                // sum over segments that cut chunks anywhere.
                let (op, sum) = if ty == "BOOL" {
                    ("(BOOL BOOL) (AND BOOL (NOT BOOL $0) $1)".to_string(), "(BOOL SEGDES) (+_REDUCE INT (B_TO_I BOOL $0) $1)".to_string())
                } else {
                    (format!("({ty} {ty}) (+ {ty} $0 (* {ty} $1 $1))"), format!("({ty} SEGDES) (+_REDUCE {ty} $0 $1)"))
                };
                let op = SuperOp::parse(&op).expect("parses");
                let a = c.fused(&op, &[Some(&lazy), Some(&want)], n).expect("fused");
                let b = c.fused(&op, &[Some(&want), Some(&lazy)], n).expect("fused");
                let e = c.fused(&op, &[Some(&want), Some(&want)], n).expect("fused");
                let e = host(&mut c, &e);
                assert_eq!(host(&mut c, &a), e, "{ty}: superoperator");
                assert_eq!(host(&mut c, &b), e, "{ty}: superoperator");
                let lens = [1_000i64, 0, 33_333, 1, 35_666];
                let segs = c.segdes_from_host(&lens).expect("seg");
                let sum = SuperOp::parse(&sum).expect("parses");
                let a = c.fused_fold(&sum, &[Some(&lazy), None], &segs, n).expect("sum");
                let e = c.fused_fold(&sum, &[Some(&want), None], &segs, n).expect("sum");
                assert_eq!(host(&mut c, &a), host(&mut c, &e), "{ty}: segmented sum");
                // A plain element-wise operation, a pack and EXTRACTs.
                let plain = if ty == "BOOL" { c.unary(UnOp::Not, &lazy) } else { c.binary(BinOp::Add, &lazy, &want) }.expect("plain");
                let plain_want = if ty == "BOOL" { c.unary(UnOp::Not, &want) } else { c.binary(BinOp::Add, &want, &want) }.expect("plain");
                assert_eq!(host(&mut c, &plain), host(&mut c, &plain_want), "{ty}: element-wise");
                let flags = c.from_host(HostVector::Bool((0..n).map(|x| x % 7 < 3).collect())).expect("host");
                let (g, _) = c.pack(&lazy, &flags, &segs).expect("pack");
                let (w, _) = c.pack(&want, &flags, &segs).expect("pack");
                assert_eq!(host(&mut c, &g), host(&mut c, &w), "{ty}: pack");
                let full = c.segdes_from_host(&[1_000, 33_333, 1, 35_666]).expect("seg");
                let at = iv(&mut c, &[999, 0, 0, 35_665]);
                let (g, w) = (c.extract(&lazy, &at, &full).expect("extract"), c.extract(&want, &at, &full).expect("extract"));
                assert_eq!(host(&mut c, &g), host(&mut c, &w), "{ty}: extract");
                // Its elements, and a prefix of a fresh one.
                let fresh = c.bpermute(&v, &i, &ss, &sd).expect("gather");
                let p = c.to_host_prefix(&fresh, 10).expect("prefix");
                assert_eq!(p, c.to_host_prefix(&want, 10).expect("prefix"), "{ty}: prefix");
                assert_eq!(host(&mut c, &lazy), want_host, "{ty}: written out");
            }
            // Written at once: a gather shorter than its table, a short one, one over
            // several segments.
            let big = iv(&mut c, &(0..2 * n as i64).collect::<Vec<_>>());
            let sbig = c.segdes_from_host(&[2 * n as i64]).expect("seg");
            assert!(c.bpermute(&big, &i, &sbig, &sd).expect("gather").is_written_out(), "selects from a longer vector");
            let few = iv(&mut c, &idx[..100]);
            let s100 = c.segdes_from_host(&[100]).expect("seg");
            let table = iv(&mut c, &(0..m as i64).collect::<Vec<_>>());
            assert!(c.bpermute(&table, &few, &ss, &s100).expect("gather").is_written_out(), "short");
            let two = c.segdes_from_host(&[1_500, 1_501]).expect("seg");
            let halves = c.segdes_from_host(&[35_000, 35_000]).expect("seg");
            let small: Vec<i64> = idx.iter().map(|&k| k % 1_500).collect();
            let small = iv(&mut c, &small);
            assert!(c.bpermute(&table, &small, &two, &halves).expect("gather").is_written_out(), "several segments");
            // A bad index (the first one in position order) traps here, as the gather's
            // check names it.
            for bad in [m as i64, -1] {
                let mut worse = idx.clone();
                worse[50_000] = bad;
                worse[60_000] = m as i64 + 5;
                let want = permute::gather(&c.par, &(0..m as i64).collect::<Vec<_>>(), &worse, None, &ss.0, &sd.0).unwrap_err();
                let w = iv(&mut c, &worse);
                let got = c.bpermute(&table, &w, &ss, &sd).unwrap_err();
                assert_eq!(got.to_string(), want.to_string(), "{threads} threads");
            }
        }
    }

    /// `MIN_REDUCE` and `MAX_REDUCE` over a whole `INT` vector find both bounds in one pass
    /// and register them: the other reduction reads them, and the values are a serial
    /// fold's (1 and 2 threads, lengths around the block size); a short vector, one over
    /// several segments and a `FLOAT` one are not registered; a registered buffer is not
    /// written in place; a table lookup by a registered vector inside its source skips the
    /// index check and reads what the gather does, and one whose bounds leave the source
    /// is still checked and traps at the gather's index.
    #[test]
    fn whole_vector_extremes_are_found_together_and_spare_a_lookup_its_check() {
        let mut rng = test_rng(11);
        for threads in [1, 2] {
            let mut c = CpuCvl::with_threads(threads);
            for n in [BOUNDS_MIN, 32_769, 100_003, 300_000] {
                let x: Vec<i64> = (0..n).map(|_| rng() as i64 - (1 << 30)).collect();
                let (lo, hi) = (*x.iter().min().expect("long"), *x.iter().max().expect("long"));
                let v = iv(&mut c, &x);
                let s = c.segdes_from_host(&[n as i64]).expect("seg");
                let mx = c.reduce(ReduceOp::Max, &v, &s).expect("max");
                assert_eq!(host(&mut c, &mx), HostVector::Int(vec![hi]), "{n} on {threads} threads");
                let a = c.arc_of(&v);
                assert_eq!(c.known_bounds(&a), Some((lo, hi)), "{n}: registered");
                let mn = c.reduce(ReduceOp::Min, &v, &s).expect("min");
                assert_eq!(host(&mut c, &mn), HostVector::Int(vec![lo]), "{n} on {threads} threads");
                drop(a);
                let mut w = v.clone();
                drop(v);
                assert!(w.owned().is_none(), "registered: not written in place");
            }
            let short = iv(&mut c, &[5, -3, 9]);
            let s3 = c.segdes_from_host(&[3]).expect("seg");
            let r = c.reduce(ReduceOp::Min, &short, &s3).expect("min");
            assert_eq!(host(&mut c, &r), HostVector::Int(vec![-3]));
            assert_eq!(c.known_bounds(&c.arc_of(&short)), None, "short");
            let x: Vec<i64> = (0..10_000).map(|i| (i * 37) % 1_001).collect();
            let split = iv(&mut c, &x);
            let halves = c.segdes_from_host(&[5_000, 5_000]).expect("seg");
            let got = c.reduce(ReduceOp::Max, &split, &halves).expect("max");
            assert_eq!(host(&mut c, &got), HostVector::Int(vec![*x[..5_000].iter().max().expect("x"), *x[5_000..].iter().max().expect("x")]));
            assert_eq!(c.known_bounds(&c.arc_of(&split)), None, "several segments");
            let f = c.from_host(HostVector::Float((0..10_000).map(|i| i as f64).collect())).expect("host");
            let s10k = c.segdes_from_host(&[10_000]).expect("seg");
            let r = c.reduce(ReduceOp::Max, &f, &s10k).expect("max");
            assert_eq!(host(&mut c, &r), HostVector::Float(vec![9_999.0]));
            // Lookups by registered indices.
            let (m, n) = (1_000usize, 40_000usize);
            let table: Vec<i64> = (0..m as i64).map(|k| k * k).collect();
            let t = iv(&mut c, &table);
            let (ss, sd) = (c.segdes_from_host(&[m as i64]).expect("seg"), c.segdes_from_host(&[n as i64]).expect("seg"));
            let idx: Vec<i64> = (0..n).map(|_| (rng() % m as u64) as i64).collect();
            let i = iv(&mut c, &idx);
            c.reduce(ReduceOp::Min, &i, &sd).expect("min");
            let g = c.bpermute(&t, &i, &ss, &sd).expect("gather");
            assert!(!g.is_written_out(), "kept undone");
            assert_eq!(host(&mut c, &g), HostVector::Int(idx.iter().map(|&k| table[k as usize]).collect()));
            for bad in [m as i64, -1] {
                let mut worse = idx.clone();
                worse[30_000] = bad;
                let want = permute::gather(&c.par, &table, &worse, None, &ss.0, &sd.0).unwrap_err();
                let w = iv(&mut c, &worse);
                c.reduce(ReduceOp::Max, &w, &sd).expect("max");
                assert!(c.known_bounds(&c.arc_of(&w)).is_some(), "registered");
                assert_eq!(c.bpermute(&t, &w, &ss, &sd).unwrap_err().to_string(), want.to_string(), "{bad} on {threads} threads");
            }
        }
    }

    /// The `DPERMUTE`s of an append into a `DIST` (`[lesser, greater]`, `++`) write their
    /// parts into one vector with gaps: after the last part none is left and it is an
    /// ordinary vector; a reader in between sees the `DIST`'s values in the gaps; a
    /// handle shared with another is copied before it is written into, and keeps what it
    /// held; all as the scatters into a written-out `DIST` give.
    #[test]
    fn an_append_into_a_dist_writes_each_place_once() {
        for threads in [1, 2] {
            let mut c = CpuCvl::with_threads(threads);
            let lens = [30_000i64, 50_000, 0, 40_000, 7];
            let parts: [[i64; 5]; 3] = [[10_000, 20_000, 0, 15_000, 7], [5, 0, 0, 1, 0], [19_995, 30_000, 0, 24_999, 0]];
            let sd = c.segdes_from_host(&lens).expect("seg");
            let fill = [7i64, 8, 9, 10, 11];
            // Part `p`'s elements are 1000 * (p + 1) + its position; segment `k` of the
            // result is part 0's, part 1's, part 2's segment `k`, one after another.
            let mut expect = Vec::new();
            let mut src = Vec::new();
            for (p, ls) in parts.iter().enumerate() {
                let n: i64 = ls.iter().sum();
                src.push((0..n).map(|j| 1_000_000 * (p as i64 + 1) + j).collect::<Vec<i64>>());
            }
            for k in 0..lens.len() {
                for (p, ls) in parts.iter().enumerate() {
                    let before: i64 = ls[..k].iter().sum();
                    expect.extend((0..ls[k]).map(|j| src[p][(before + j) as usize]));
                }
            }
            let offsets = |p: usize| -> Vec<i64> { (0..lens.len()).map(|k| parts[..p].iter().map(|ls| ls[k]).sum()).collect() };
            let scatter = |c: &mut CpuCvl, d: &mut CpuVector, p: usize, reuse: bool| {
                let ss = c.segdes_from_host(&parts[p]).expect("seg");
                let (b, k) = (iv(c, &offsets(p)), iv(c, &[1; 5]));
                let ix = c.index(&b, &k, &ss).expect("index");
                let v = iv(c, &src[p]);
                if reuse { c.dpermute_reusing(&v, &ix, d, &ss, &sd) } else { c.dpermute(&v, &ix, d, &ss, &sd) }.expect("dpermute")
            };
            let dist = |c: &mut CpuCvl| {
                let f = iv(c, &fill);
                c.dist(&f, &sd).expect("dist")
            };
            // The whole append: gaps after each part but the last.
            let mut d = dist(&mut c);
            let mut r = scatter(&mut c, &mut d, 0, false);
            assert!(!r.is_written_out(), "gaps after the first part");
            // (The middle part is a few elements: its `INDEX` is written out.)
            let mid = scatter(&mut c, &mut r, 1, true);
            drop(r);
            assert!(!mid.is_written_out(), "gaps after the second part");
            let mut r2 = mid;
            let done = scatter(&mut c, &mut r2, 2, true);
            assert!(done.is_written_out(), "no gap after the last part");
            assert!(host(&mut c, &done) == HostVector::Int(expect.clone()), "{threads} threads");
            // A reader between the parts: the gaps hold the `DIST`'s values.
            let mut d = dist(&mut c);
            let mut first = scatter(&mut c, &mut d, 0, false);
            let shared = first.clone();
            let mut want = Vec::new();
            for (k, &l) in lens.iter().enumerate() {
                let before: i64 = parts[0][..k].iter().sum();
                want.extend((0..parts[0][k]).map(|j| src[0][(before + j) as usize]));
                want.extend(std::iter::repeat_n(fill[k], (l - parts[0][k]) as usize));
            }
            // Written into while shared: a copy is, and the other handle keeps its elements.
            let second = scatter(&mut c, &mut first, 2, true);
            assert!(host(&mut c, &shared) == HostVector::Int(want.clone()), "the shared handle");
            let HostVector::Int(got) = host(&mut c, &second) else { panic!("INT") };
            let mut e = 0;
            for (k, &l) in lens.iter().enumerate() {
                let seg = &got[e..e + l as usize];
                let (n0, n1) = (parts[0][k] as usize, parts[1][k] as usize);
                assert!(seg[n0..n0 + n1].iter().all(|&x| x == fill[k]), "segment {k}: the middle part is still the DIST's");
                e += l as usize;
            }
            assert!(host(&mut c, &first) == HostVector::Int(want), "the handle written into while shared is unchanged");
        }
    }

    /// The flattened append's shape (quicksort's `result[0] ++ equal ++ result[1]`): each
    /// part one segment, its `INDEX` (kept unwritten) carrying the instances' segments,
    /// into a one-segment `DIST`. The parts go through the unit path (runs checked as they
    /// are written, no plan): gaps after the first two, none after the last, the result
    /// what the parts' places give; a `BPERMUTE` back by a part's runs gathers it; a part
    /// whose runs do not ascend (the instances' places given the other way round) still
    /// lands where its indices say, over a written vector too.
    #[test]
    fn a_flattened_append_goes_through_the_unit_runs() {
        let mut rng = test_rng(17);
        for threads in [1, 2] {
            let mut c = CpuCvl::with_threads(threads);
            let m = 3_000usize;
            // Instance `k`: parts 0 and 2 of 0..40 elements, part 1 of one or two.
            let parts: [Vec<i64>; 3] = [
                (0..m).map(|_| (rng() % 40) as i64).collect(),
                (0..m).map(|_| 1 + (rng() % 2) as i64).collect(),
                (0..m).map(|_| (rng() % 40) as i64).collect(),
            ];
            let lens: Vec<i64> = (0..m).map(|k| parts.iter().map(|p| p[k]).sum()).collect();
            let total: i64 = lens.iter().sum();
            let starts: Vec<i64> = lens.iter().scan(0, |a, &l| { let s = *a; *a += l; Some(s) }).collect();
            let src: Vec<Vec<i64>> = (0..3).map(|p| (0..parts[p].iter().sum::<i64>()).map(|j| 1_000_000 * (p as i64 + 1) + j).collect()).collect();
            // Part `p` of instance `k` goes after parts `0..p` of it.
            let offsets = |p: usize| -> Vec<i64> { (0..m).map(|k| starts[k] + parts[..p].iter().map(|q| q[k]).sum::<i64>()).collect() };
            let mut expect = Vec::new();
            let mut at = [0usize; 3];
            for k in 0..m {
                for p in 0..3 {
                    let l = parts[p][k] as usize;
                    expect.extend_from_slice(&src[p][at[p]..at[p] + l]);
                    at[p] += l;
                }
            }
            let one = |c: &mut CpuCvl, n: i64| c.segdes_from_host(&[n]).expect("seg");
            let sd = one(&mut c, total);
            let index_of = |c: &mut CpuCvl, p: usize, b: &[i64]| {
                let inst = c.segdes_from_host(&parts[p]).expect("seg");
                let (b, k) = (iv(c, b), iv(c, &vec![1; m]));
                c.index(&b, &k, &inst).expect("index")
            };
            let f = iv(&mut c, &[-5]);
            let mut d = c.dist(&f, &sd).expect("dist");
            for p in 0..3 {
                let ix = index_of(&mut c, p, &offsets(p));
                assert!(p == 1 || !ix.is_written_out(), "part {p}'s INDEX kept");
                let v = iv(&mut c, &src[p]);
                let ss = one(&mut c, src[p].len() as i64);
                let r = c.dpermute_reusing(&v, &ix, &mut d, &ss, &sd).expect("dpermute");
                assert_eq!(r.is_written_out(), p == 2, "gaps after part {p}, {threads} threads");
                d = r;
            }
            assert!(host(&mut c, &d) == HostVector::Int(expect.clone()), "append, {threads} threads");
            // The gather back of part 2 by its runs.
            let ix = index_of(&mut c, 2, &offsets(2));
            let ss = one(&mut c, src[2].len() as i64);
            let g = c.bpermute(&d, &ix, &sd, &ss).expect("bpermute");
            assert!(host(&mut c, &g) == HostVector::Int(src[2].clone()), "gather, {threads} threads");
            // Instances placed the other way round: part 0 of instance `k` at the place
            // instance `m - 1 - k`'s would take in a vector of part 0 alone.
            let rev: Vec<i64> = {
                let mut ends = Vec::with_capacity(m);
                let mut a = 0;
                for k in (0..m).rev() {
                    ends.push(a);
                    a += parts[0][k];
                }
                ends.into_iter().rev().collect()
            };
            let n0 = src[0].len() as i64;
            let mut want = vec![0i64; n0 as usize];
            let mut e = 0;
            for k in 0..m {
                for j in 0..parts[0][k] as usize {
                    want[rev[k] as usize + j] = src[0][e + j];
                }
                e += parts[0][k] as usize;
            }
            let ix = index_of(&mut c, 0, &rev);
            let v = iv(&mut c, &src[0]);
            let s0 = one(&mut c, n0);
            let f = iv(&mut c, &[0]);
            let mut d = c.dist(&f, &s0).expect("dist");
            let r = c.dpermute_reusing(&v, &ix, &mut d, &s0, &s0).expect("dpermute");
            assert!(host(&mut c, &r) == HostVector::Int(want.clone()), "descending into a DIST, {threads} threads");
            let mut w = iv(&mut c, &vec![0; n0 as usize]);
            let r = c.dpermute_reusing(&v, &ix, &mut w, &s0, &s0).expect("dpermute");
            assert!(host(&mut c, &r) == HostVector::Int(want), "descending over a vector, {threads} threads");
        }
    }

    /// Where `v`'s elements are read from (an `INT` vector).
    fn at(v: &CpuVector) -> *const i64 {
        match v.elems().expect("elems") {
            Slice::Int(x) => x.as_ptr(),
            _ => panic!("not INT"),
        }
    }

    /// A `BPERMUTE` by an `INDEX` that reads one contiguous run of its source is that range
    /// of the source, read in place (a range of a range too); one whose runs leave a gap,
    /// or read past their segment, is copied or refused as before; scatters and element-wise
    /// operations read a range's elements.
    #[test]
    fn a_gather_of_one_contiguous_run_reads_its_source_in_place() {
        for threads in [1, 2] {
            let mut c = CpuCvl::with_threads(threads);
            let n = 10_000i64;
            let v = iv(&mut c, &(0..n).collect::<Vec<_>>());
            let one = c.segdes_from_host(&[n]).expect("seg");
            let gather = |c: &mut CpuCvl, v: &CpuVector, ss: &CpuSegdes, starts: &[i64], lens: &[i64]| {
                let sd = c.segdes_from_host(lens).expect("seg");
                let (b, k) = (iv(c, starts), iv(c, &vec![1; starts.len()]));
                let ix = c.index(&b, &k, &sd).expect("index");
                c.bpermute(v, &ix, ss, &sd)
            };
            let r = gather(&mut c, &v, &one, &[3000], &[5000]).expect("gather");
            assert_eq!(host(&mut c, &r), HostVector::Int((3000..8000).collect()));
            assert_eq!(at(&r), at(&v).wrapping_add(3000), "read in place");
            let s5 = c.segdes_from_host(&[5000]).expect("seg");
            let rr = gather(&mut c, &r, &s5, &[1000], &[3000]).expect("gather");
            assert_eq!(host(&mut c, &rr), HostVector::Int((4000..7000).collect()));
            assert_eq!(at(&rr), at(&v).wrapping_add(4000), "a range of a range");
            // Over two segments, the second run starting where the first ends.
            let two = c.segdes_from_host(&[4000, 6000]).expect("seg");
            let r2 = gather(&mut c, &v, &two, &[1000, 0], &[3000, 6000]).expect("gather");
            assert_eq!(host(&mut c, &r2), HostVector::Int((1000..n).collect()));
            assert_eq!(at(&r2), at(&v).wrapping_add(1000));
            // A gap between the runs: copied.
            let r3 = gather(&mut c, &v, &two, &[1000, 1], &[3000, 5999]).expect("gather");
            assert_eq!(host(&mut c, &r3), HostVector::Int((1000..4000).chain(4001..n).collect()));
            assert_ne!(at(&r3), at(&v).wrapping_add(1000));
            // An `INDEX` over other segments than the destination's: each destination
            // segment reads its own source segment (not a range).
            let halves = c.segdes_from_host(&[5000, 5000]).expect("seg");
            let sd = c.segdes_from_host(&[2500, 2500]).expect("seg");
            let (b, k) = (iv(&mut c, &[0]), iv(&mut c, &[1]));
            let ix = c.index(&b, &k, &s5).expect("index");
            let r4 = c.bpermute(&v, &ix, &halves, &sd).expect("gather");
            assert_eq!(host(&mut c, &r4), HostVector::Int((0..2500).chain(7500..n).collect()));
            // Past the end of its segment: refused, as by the plain gather.
            assert!(gather(&mut c, &v, &two, &[1000, 1], &[3000, 6000]).is_err());
            assert!(gather(&mut c, &v, &one, &[6000], &[5000]).is_err());
            // Readers: a scatter by an `INDEX`, a plain scatter, an element-wise operation.
            let sd = c.segdes_from_host(&[5000]).expect("seg");
            let (b, k) = (iv(&mut c, &[4999]), iv(&mut c, &[-1]));
            let rev = c.index(&b, &k, &sd).expect("index");
            let z = iv(&mut c, &vec![0; 5000]);
            let back = c.dpermute(&r, &rev, &z, &sd, &sd).expect("dpermute");
            assert_eq!(host(&mut c, &back), HostVector::Int((3000..8000).rev().collect()));
            let revw = stored(&mut c, &rev);
            let back2 = c.dpermute(&r, &revw, &z, &sd, &sd).expect("dpermute");
            assert_eq!(host(&mut c, &back2), HostVector::Int((3000..8000).rev().collect()));
            let sum = c.binary(BinOp::Add, &r, &r).expect("add");
            assert_eq!(host(&mut c, &sum), HostVector::Int((3000..8000).map(|x| 2 * x).collect()));
        }
    }

    #[test]
    fn rand_over_a_lazy_dist_draws_what_it_draws_over_a_stored_one() {
        for threads in [1, 2] {
            let mut c = CpuCvl::with_threads(threads);
            // a zero bound over an empty segment draws nothing and is no error
            let s = c.segdes_from_host(&[4000, 0, 9000, 1]).expect("seg");
            let b = iv(&mut c, &[5, 0, -9, 1000]);
            let lazy = c.dist(&b, &s).expect("dist");
            assert!(!lazy.is_written_out());
            let copy = c.dist(&b, &s).expect("dist");
            let written = stored(&mut c, &copy);
            c.srand(3).expect("srand");
            let r1 = c.rand(&lazy).expect("rand");
            c.srand(3).expect("srand");
            let r2 = c.rand(&written).expect("rand");
            assert!(!lazy.is_written_out(), "the bounds are not written out");
            assert_eq!(host(&mut c, &r1), host(&mut c, &r2));
            let (zb, zs) = (iv(&mut c, &[5, 0, 7, 1]), c.segdes_from_host(&[4000, 1, 9000, 1]).expect("seg"));
            let z = c.dist(&zb, &zs).expect("dist");
            assert!(c.rand(&z).is_err(), "a zero bound over an element is an error");
        }
    }

    /// A superoperator is compiled once however often it runs (serial code runs one per
    /// loop iteration, over one-element vectors); another superoperator at the same
    /// address (here the same variable; a temporary or another program's in use) is
    /// compiled anew, never run as the one before it.
    #[test]
    fn a_superoperator_is_compiled_once_and_only_for_itself() {
        let mut c = CpuCvl::with_threads(1);
        let (a, b) = (iv(&mut c, &[3]), iv(&mut c, &[4]));
        let mut op = SuperOp::parse("(INT INT) (+ INT $0 (* INT $1 $1))").expect("parses");
        let compiled = |c: &CpuCvl| c.progs.slots.iter().flatten().count();
        let mut first = None;
        for _ in 0..100 {
            let r = c.fused(&op, &[Some(&a), Some(&b)], 1).expect("fused");
            assert_eq!(host(&mut c, &r), HostVector::Int(vec![19]));
            assert_eq!(compiled(&c), 1, "kept by the first run");
            let now = c.progs.get(&op).expect("compiles");
            assert!(Arc::ptr_eq(first.get_or_insert_with(|| now.clone()), &now), "compiled once");
        }
        let first = first.expect("ran");
        op = SuperOp::parse("(INT INT) (- INT $0 $1)").expect("parses");
        let r = c.fused(&op, &[Some(&a), Some(&b)], 1).expect("fused");
        assert_eq!(host(&mut c, &r), HostVector::Int(vec![-1]), "the superoperator now at that address");
        assert!(!Arc::ptr_eq(&first, &c.progs.get(&op).expect("compiles")));
    }

    /// Serial code's scalars ([`Cvl::host_scalars`]): every `scalar_*` operation gives
    /// what the same operation on one-element vectors gives, value for value (the bits of
    /// a float) and trap for trap, over edge values of every type, for every operator.
    #[test]
    fn scalar_operations_agree_with_one_element_vectors() {
        use HostScalar::{Bool as B, Float as F, Int as I};
        let mut c = CpuCvl::with_threads(1);
        let mut vals: Vec<HostScalar> = [0, 1, -1, 7, -7, 63, 64, 65, i64::MAX, i64::MIN].map(I).to_vec();
        vals.extend([0.0, -0.0, 1.5, -2.25, 0.5, 1e300, -1e-300, f64::INFINITY, f64::NEG_INFINITY, f64::NAN].map(F));
        vals.extend([false, true].map(B));
        let key = |r: Result<HostScalar, Trap>| match r {
            Ok(F(x)) => Ok((VType::Float, x.to_bits())),
            Ok(I(x)) => Ok((VType::Int, x as u64)),
            Ok(B(x)) => Ok((VType::Bool, x as u64)),
            Err(t) => Err(t.to_string()),
        };
        fn one(c: &mut CpuCvl, f: impl FnOnce(&mut CpuCvl) -> Result<CpuVector, Trap>) -> Result<HostScalar, Trap> {
            let r = f(c)?;
            c.scalar_of(&r)
        }
        use BinOp::*;
        let bins = [Add, Sub, Mul, Div, Mod, Lt, Le, Gt, Ge, Eq, Ne, Lshift, Rshift, And, Or, Xor, Max, Min];
        let (mut values, mut traps) = (0, 0);
        for op in bins {
            for &a in &vals {
                for &b in &vals {
                    let s = key(c.scalar_binary(op, a, b));
                    let v = key(one(&mut c, |c| {
                        let (x, y) = (c.fill(a, 1)?, c.fill(b, 1)?);
                        c.binary(op, &x, &y)
                    }));
                    assert_eq!(s, v, "{op:?} {a:?} {b:?}");
                    if s.is_ok() { values += 1 } else { traps += 1 }
                }
            }
        }
        assert!(values > 1000 && traps > 1000, "{values} values, {traps} traps");
        use UnOp::*;
        let uns = [Not, Floor, Ceil, Trunc, Round, IToF, IToB, BToI, Log, Sqrt, Exp, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Tanh];
        for op in uns {
            for &a in &vals {
                let s = key(c.scalar_unary(op, a));
                let v = key(one(&mut c, |c| {
                    let x = c.fill(a, 1)?;
                    c.unary(op, &x)
                }));
                assert_eq!(s, v, "{op:?} {a:?}");
            }
        }
        for &f in &vals {
            for &a in &vals {
                for &b in &vals[..12] {
                    let s = key(c.scalar_select(f, a, b));
                    let v = key(one(&mut c, |c| {
                        let (x, y, z) = (c.fill(f, 1)?, c.fill(a, 1)?, c.fill(b, 1)?);
                        c.select(&x, &y, &z)
                    }));
                    assert_eq!(s, v, "SELECT {f:?} {a:?} {b:?}");
                }
            }
        }
        let ops = [
            "(INT INT) (+ INT $0 (* INT $1 $1))",
            "(INT INT) (/ INT (- INT $0 (CONST INT 3)) $1)",
            "(FLOAT FLOAT) (+ FLOAT (* FLOAT $0 $1) (/ FLOAT $1 (+ FLOAT $0 (CONST FLOAT 1.5))))",
            "(INT FLOAT) (SELECT FLOAT (< INT $0 (CONST INT 2)) $1 (SQRT FLOAT $1))",
            "(BOOL INT) (AND BOOL $0 (= INT (% INT $1 (CONST INT 3)) (CONST INT 0)))",
            "(INT) (CONST INT 5)",
        ];
        for text in ops {
            let op = SuperOp::parse(text).expect("parses");
            for &a in &vals {
                for &b in &vals {
                    let args: Vec<HostScalar> = [a, b].into_iter().take(op.params.len()).collect();
                    let s = key(c.scalar_fused(&op, &args));
                    let v = key(one(&mut c, |c| {
                        let vs = args.iter().map(|&x| c.fill(x, 1)).collect::<Result<Vec<_>, _>>()?;
                        let refs: Vec<Option<&CpuVector>> = vs.iter().map(Some).collect();
                        c.fused(&op, &refs, 1)
                    }));
                    if args.iter().zip(&op.params).any(|(x, p)| crate::op::SlotTy::Vec(x.vtype()) != p.slot()) {
                        // (The interpreter checks operand types before either runs.)
                        assert!(s.is_err(), "{text} on {args:?}: operands of the wrong type");
                    } else {
                        assert_eq!(s, v, "{text} on {args:?}");
                    }
                }
            }
        }
    }

    /// A pack's flag programs are compiled once too, kept beside the programs of the
    /// superoperators in other slots, and a pack at another address is compiled for
    /// itself.
    #[test]
    fn a_packs_flag_programs_are_compiled_once() {
        let mut c = CpuCvl::with_threads(1);
        let x = iv(&mut c, &[5, 1, 9, 5, 2, 7]);
        let p = iv(&mut c, &[5, 5, 5, 7, 7, 7]);
        let sd = c.segdes_from_host(&[3, 3]).expect("segdes");
        let three = SuperOp::parse("(INT INT SEGDES) (PACK INT $0 $2 (< INT $0 $1) (= INT $0 $1) (> INT $0 $1))").expect("parses");
        let body = SuperOp::parse("(INT INT) (+ INT $0 $1)").expect("parses");
        let lens = |c: &mut CpuCvl, r: &[(CpuVector, CpuSegdes)]| -> Vec<(HostVector, Vec<i64>)> {
            r.iter().map(|(v, s)| (host(c, v), c.segdes_to_host(s).expect("lengths"))).collect()
        };
        let want = vec![
            (HostVector::Int(vec![1, 5, 2]), vec![1, 2]),
            (HostVector::Int(vec![5, 7]), vec![1, 1]),
            (HostVector::Int(vec![9]), vec![1, 0]),
        ];
        let mut first = None;
        for _ in 0..10 {
            let r = c.fused_pack(&three, &[Some(&x), Some(&p), None], &sd, 6).expect("pack");
            assert_eq!(lens(&mut c, &r), want);
            let s = c.fused(&body, &[Some(&x), Some(&p)], 6).expect("fused");
            assert_eq!(host(&mut c, &s), HostVector::Int(vec![10, 6, 14, 12, 9, 14]));
            let now = c.progs.flags(&three).expect("compiles");
            assert_eq!(now.len(), 3);
            assert!(Arc::ptr_eq(first.get_or_insert_with(|| now.clone()), &now), "compiled once");
        }
        let flipped = SuperOp::parse("(INT INT SEGDES) (PACK INT $0 $2 (> INT $0 $1) (= INT $0 $1) (< INT $0 $1))").expect("parses");
        let r = c.fused_pack(&flipped, &[Some(&x), Some(&p), None], &sd, 6).expect("pack");
        assert_eq!(lens(&mut c, &r), want.into_iter().rev().collect::<Vec<_>>());
    }

    /// Evaluations in turn on one thread take the register buffers the one before left
    /// (of other types, counts and lengths): each gives its own values, over one element
    /// and over several chunks.
    #[test]
    fn evaluations_in_turn_reuse_registers_of_other_types_and_lengths() {
        let mut c = CpuCvl::with_threads(1);
        let ops = [
            SuperOp::parse("(FLOAT FLOAT) (+ FLOAT (* FLOAT $0 $1) (/ FLOAT $1 (+ FLOAT $0 (CONST FLOAT 1.5))))").expect("parses"),
            SuperOp::parse("(INT) (- INT (* INT $0 $0) (* INT (CONST INT 3) $0))").expect("parses"),
            SuperOp::parse("(INT INT) (OR BOOL (< INT $0 $1) (= INT (+ INT $0 $1) (CONST INT 7)))").expect("parses"),
        ];
        for n in [1usize, 5000, 1, 3 * CHUNK + 7] {
            let xs: Vec<f64> = (0..n).map(|i| i as f64 * 0.25 - 3.0).collect();
            let ys: Vec<f64> = (0..n).map(|i| 2.0 - i as f64 * 0.125).collect();
            let is: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % 23 - 11).collect();
            let js: Vec<i64> = (0..n as i64).map(|i| (i * 104_729) % 19 - 9).collect();
            let (x, y) = (c.from_host(HostVector::Float(xs.clone())).expect("host"), c.from_host(HostVector::Float(ys.clone())).expect("host"));
            let (i, j) = (iv(&mut c, &is), iv(&mut c, &js));
            let r = c.fused(&ops[0], &[Some(&x), Some(&y)], n).expect("fused");
            assert_eq!(host(&mut c, &r), HostVector::Float(xs.iter().zip(&ys).map(|(&a, &b)| a * b + b / (a + 1.5)).collect()));
            let r = c.fused(&ops[1], &[Some(&i)], n).expect("fused");
            assert_eq!(host(&mut c, &r), HostVector::Int(is.iter().map(|&a| a * a - 3 * a).collect()));
            let r = c.fused(&ops[2], &[Some(&i), Some(&j)], n).expect("fused");
            assert_eq!(host(&mut c, &r), HostVector::Bool(is.iter().zip(&js).map(|(&a, &b)| a < b || a + b == 7).collect()));
        }
    }

    #[test]
    fn a_conversion_writes_over_its_operand_of_the_other_width() {
        let mut c = CpuCvl::with_threads(2);
        let n = 100_000i64;
        let mut v = iv(&mut c, &(0..n).collect::<Vec<_>>());
        let at = match v.data().expect("data") {
            Data::Int(x) => x.as_ptr() as usize,
            _ => unreachable!(),
        };
        let op = SuperOp::parse("(INT) (* FLOAT (I_TO_F INT $0) (CONST FLOAT 0.5))").expect("parses");
        let r = c.fused_reusing(&op, &mut [Some(&mut v)], n as usize).expect("fused");
        match r.data().expect("data") {
            Data::Float(x) => {
                assert_eq!(x.as_ptr() as usize, at, "the result is in the operand's memory");
                assert!(x.iter().enumerate().all(|(i, &f)| f == i as f64 * 0.5));
            }
            d => panic!("{d:?}"),
        }
        // and back (FLOAT to INT), over a vector with a second handle: a fresh result
        let keep = r.clone();
        let mut r = r;
        let back = SuperOp::parse("(FLOAT) (TRUNC FLOAT (* FLOAT $0 (CONST FLOAT 2.0)))").expect("parses");
        let w = c.fused_reusing(&back, &mut [Some(&mut r)], n as usize).expect("fused");
        assert_eq!(host(&mut c, &w), HostVector::Int((0..n).collect()));
        assert!(matches!(keep.data().expect("data"), Data::Float(x) if x.as_ptr() as usize == at), "the shared operand is untouched");
    }

    #[test]
    fn scans_and_reductions() {
        let mut c = CpuCvl::new();
        let v = iv(&mut c, &[1, 2, 3, 4, 5]);
        let s = c.segdes_from_host(&[2, 0, 3]).expect("seg");
        let r = c.scan(ReduceOp::Add, &v, &s).expect("scan");
        assert_eq!(host(&mut c, &r), HostVector::Int(vec![0, 1, 0, 3, 7]));
        let r = c.reduce(ReduceOp::Max, &v, &s).expect("reduce");
        assert_eq!(host(&mut c, &r), HostVector::Int(vec![2, -2147483648, 5]));
    }

    #[test]
    fn permutes() {
        let mut c = CpuCvl::new();
        let v = iv(&mut c, &[10, 20, 30, 40, 50]);
        let i = iv(&mut c, &[1, 0, 2, 0, 1]);
        let s = c.segdes_from_host(&[2, 3]).expect("seg");
        let r = c.permute(&v, &i, &s).expect("permute");
        assert_eq!(host(&mut c, &r), HostVector::Int(vec![20, 10, 40, 50, 30]));
        let i2 = iv(&mut c, &[1, 0, 1, 2]);
        let sd = c.segdes_from_host(&[1, 3]).expect("seg");
        let r = c.bpermute(&v, &i2, &s, &sd).expect("bpermute");
        assert_eq!(host(&mut c, &r), HostVector::Int(vec![20, 30, 40, 50]));
        let bad = iv(&mut c, &[2, 0, 2, 0, 1]);
        assert!(matches!(c.permute(&v, &bad, &s), Err(Trap { kind: TrapKind::IndexOutOfRange { .. }, .. })));
    }

    fn ptr(v: &CpuVector) -> usize {
        match v.data().expect("data") {
            Data::Int(x) => x.as_ptr() as usize,
            Data::Float(x) => x.as_ptr() as usize,
            Data::Bool(x) => x.as_ptr() as usize,
        }
    }

    #[test]
    fn rank_is_stable() {
        let mut c = CpuCvl::new();
        let v = iv(&mut c, &[5, 3, 5, 1]);
        let s = c.segdes_from_host(&[4]).expect("seg");
        let r = c.rank(true, &v, &s).expect("rank");
        assert_eq!(host(&mut c, &r), HostVector::Int(vec![2, 1, 3, 0]));
        let r = c.rank(false, &v, &s).expect("rank");
        assert_eq!(host(&mut c, &r), HostVector::Int(vec![0, 2, 1, 3]));
    }

    #[test]
    fn reusing_operations_write_over_unique_vectors_only() {
        let mut c = CpuCvl::new();
        let mut a = iv(&mut c, &[1, 2, 3]);
        let b = iv(&mut c, &[10, 20, 30]);
        // Unique: the sum is written over `a`.
        let at = ptr(&a);
        let mut r = c.binary_reusing(BinOp::Add, &mut a, &b).expect("add");
        drop(a);
        assert_eq!(ptr(&r), at);
        assert_eq!(host(&mut c, &r), HostVector::Int(vec![11, 22, 33]));
        // Shared: the other handle keeps its elements.
        let keep = r.clone();
        let mut r2 = c.binary_reusing(BinOp::Mul, &mut r, &b).expect("mul");
        assert_eq!(host(&mut c, &keep), HostVector::Int(vec![11, 22, 33]));
        assert_eq!(host(&mut c, &r2), HostVector::Int(vec![110, 440, 990]));
        // A comparison cannot overwrite INT operands; a failing operation leaves its
        // operand as it was.
        let lt = c.binary_reusing(BinOp::Lt, &mut r2, &b).expect("lt");
        assert_eq!(host(&mut c, &lt), HostVector::Bool(vec![false, false, false]));
        let z = iv(&mut c, &[1, 0, 1]);
        assert!(c.binary_reusing(BinOp::Div, &mut r2, &z).is_err());
        assert_eq!(host(&mut c, &r2), HostVector::Int(vec![110, 440, 990]));
        let mut b2 = b.clone();
        drop(b);
        let n = c.unary_reusing(UnOp::Not, &mut b2).expect("not");
        assert_eq!(host(&mut c, &n), HostVector::Int(vec![-11, -21, -31]));
        let mut f = c.from_host(HostVector::Float(vec![4.0, 9.0])).expect("host");
        let ft = ptr(&f);
        let q = c.unary_reusing(UnOp::Sqrt, &mut f).expect("sqrt");
        assert_eq!((ptr(&q), host(&mut c, &q)), (ft, HostVector::Float(vec![2.0, 3.0])));
        // REPLACE and DPERMUTE update a unique vector in place, a shared one by copy; a
        // bad index leaves the vector as it was.
        let s = c.segdes_from_host(&[2, 1]).expect("seg");
        let mut v = iv(&mut c, &[1, 2, 3]);
        let (i, x) = (iv(&mut c, &[1, 0]), iv(&mut c, &[7, 8]));
        let bad = iv(&mut c, &[1, 1]);
        assert!(c.replace_reusing(&mut v, &bad, &x, &s).is_err());
        assert_eq!(host(&mut c, &v), HostVector::Int(vec![1, 2, 3]));
        let vt = ptr(&v);
        let r = c.replace_reusing(&mut v, &i, &x, &s).expect("replace");
        assert_eq!((ptr(&r), host(&mut c, &r)), (vt, HostVector::Int(vec![1, 7, 8])));
        drop(v);
        let mut shared = r.clone();
        let x2 = iv(&mut c, &[5, 6]);
        let r3 = c.replace_reusing(&mut shared, &i, &x2, &s).expect("replace");
        assert_eq!(host(&mut c, &r), HostVector::Int(vec![1, 7, 8]));
        assert_eq!(host(&mut c, &r3), HostVector::Int(vec![1, 5, 6]));
        let mut d = iv(&mut c, &[0, 0, 0]);
        let dt = ptr(&d);
        let one = c.segdes_from_host(&[3]).expect("seg");
        let (src, to, two) = (iv(&mut c, &[4, 5]), iv(&mut c, &[2, 0]), c.segdes_from_host(&[2]).expect("seg"));
        let far = iv(&mut c, &[3, 0]);
        assert!(c.dpermute_reusing(&src, &far, &mut d, &two, &one).is_err());
        assert_eq!(host(&mut c, &d), HostVector::Int(vec![0, 0, 0]));
        let p = c.dpermute_reusing(&src, &to, &mut d, &two, &one).expect("dpermute");
        assert_eq!((ptr(&p), host(&mut c, &p)), (dt, HostVector::Int(vec![5, 0, 4])));
    }

    #[test]
    fn radix_and_comparison_ranks_agree() {
        let mut c = CpuCvl::new();
        let n = RADIX_MIN * 3;
        // Keys with many ties, negative and positive, in a long and a short segment.
        let keys: Vec<i64> = (0..n as i64).map(|j| (j * 7919 % 301) - 150).collect();
        let v = iv(&mut c, &keys);
        let s = c.segdes_from_host(&[n as i64 - 10, 10]).expect("seg");
        for up in [true, false] {
            let r = c.rank(up, &v, &s).expect("rank");
            let mut want = vec![0i64; n];
            for (st, len) in [(0, n - 10), (n - 10, 10)] {
                let mut perm: Vec<usize> = (st..st + len).collect();
                perm.sort_by(|&a, &b| if up { keys[a].cmp(&keys[b]) } else { keys[b].cmp(&keys[a]) });
                for (r, &p) in perm.iter().enumerate() {
                    want[p] = r as i64;
                }
            }
            assert_eq!(host(&mut c, &r), HostVector::Int(want), "up = {up}");
        }
        let f = c
            .from_host(HostVector::Float(vec![0.0, -0.0, f64::NAN, -1.5, f64::INFINITY, 2.0, f64::NEG_INFINITY]))
            .expect("host");
        let one = c.segdes_from_host(&[7]).expect("seg");
        let r = c.rank(true, &f, &one).expect("rank");
        assert_eq!(host(&mut c, &r), HostVector::Int(vec![3, 2, 6, 1, 5, 4, 0]));
    }

    #[test]
    fn fused_matches_parts_across_chunks() {
        let mut c = CpuCvl::new();
        let n = CHUNK * 2 + 17;
        let a: Vec<i64> = (0..n as i64).collect();
        let b: Vec<i64> = (0..n as i64).map(|x| x % 7 + 1).collect();
        let av = iv(&mut c, &a);
        let bv = iv(&mut c, &b);
        let op = SuperOp::parse("(INT INT SEGDES) (SELECT INT (< INT $0 (CONST INT 100)) (* INT $0 $1) (/ INT $0 $1))")
            .expect("parse");
        let r = c.fused(&op, &[Some(&av), Some(&bv), None], n).expect("fused");
        let want: Vec<i64> = a.iter().zip(&b).map(|(&x, &y)| if x < 100 { x * y } else { x / y }).collect();
        assert_eq!(host(&mut c, &r), HostVector::Int(want));
        let z = iv(&mut c, &vec![0; n]);
        assert!(c.fused(&op, &[Some(&av), Some(&z), None], n).is_err());
    }
}

