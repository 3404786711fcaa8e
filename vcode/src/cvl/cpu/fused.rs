//! Superoperators (`FUSED`) on the CPU: the expression tree is compiled into steps over
//! registers, then evaluated in [`CHUNK`]-element chunks (no full-length intermediates),
//! in parallel [`BLOCK`]-element blocks. Long element-wise operations run through the same
//! evaluator as one-step programs. The result is written into fresh, uninitialised memory
//! or over an operand whose only handle the caller gave up.

use super::data::{view_as, write_data, Data, Elem, Out, Slice, Val, V};
use super::elementwise::{binary_kernel, compare_bits, mul_add_kernel, select_kernel, unary_kernel, MulAdd};
use super::par::{cut, split_mut, Chunk, Par, BLOCK};
use super::scan::{block_offsets, fold_lanes, fold_segments, scan_in_place};
use super::seg::Seg;
use super::mem::{alloc, build};
use super::pack;
use super::permute::{Gathered, Picked, Progressions};
use crate::cvl::{BinOp, HostScalar, UnOp, VType};
use crate::fused::{Expr, SuperOp};
use crate::trap::Trap;
use smallvec::{smallvec, SmallVec};
use std::collections::HashMap;
use std::mem::MaybeUninit;

/// Elements per chunk when evaluating a superoperator (a divisor of [`BLOCK`]).
pub const CHUNK: usize = 1024;

/// An operand of a superoperator as the evaluator reads it: its elements, a `DIST` not
/// written out (segment `k`'s value `vals[k]` over the elements of segment `k`), which
/// each chunk reads as a constant when the chunk lies in one segment and expands into a
/// chunk-sized buffer otherwise, or an `INDEX` not written out (segment `k` is
/// `start[k] + j * stride[k]`), which each chunk expands.
#[derive(Debug, Clone, Copy)]
pub(super) enum Operand<'a> {
    Elems(Slice<'a>),
    Dist(Slice<'a>, &'a Seg),
    Index(Progressions<'a>),
    /// A `BPERMUTE` of the elements (over the descriptor) by the `INDEX` not written out
    /// ([`Gathered`], checked when it was kept), which each chunk gathers.
    Gather(Slice<'a>, Progressions<'a>, &'a Seg),
    /// A `BPERMUTE` of the elements (one segment) by the written-out indices ([`Picked`],
    /// checked when it was kept), which each chunk gathers.
    Pick(Slice<'a>, &'a [i64]),
}

impl<'a> Operand<'a> {
    fn vtype(&self) -> VType {
        match self {
            Operand::Elems(s) | Operand::Dist(s, _) | Operand::Gather(s, ..) | Operand::Pick(s, _) => s.vtype(),
            Operand::Index(_) => VType::Int,
        }
    }
    pub(super) fn len(&self) -> usize {
        match self {
            Operand::Elems(s) => s.len(),
            Operand::Dist(_, s) => s.total(),
            Operand::Index(ix) | Operand::Gather(_, ix, _) => ix.seg.total(),
            Operand::Pick(_, ix) => ix.len(),
        }
    }
}

/// `vals[k]` as a scalar.
fn scalar(vals: Slice, k: usize) -> HostScalar {
    match vals {
        Slice::Int(v) => HostScalar::Int(v[k]),
        Slice::Float(v) => HostScalar::Float(v[k]),
        Slice::Bool(v) => HostScalar::Bool(v[k]),
    }
}

/// Writes positions `lo..hi` of the `DIST` of `vals` over `s` into `out`, from segment
/// `k` (the one holding `lo`). Every segment after the first stores its value [`SPLAT`]
/// copies at a time (a fixed-size store the compiler makes one vector store), at least
/// once whatever its length, up to its end or at most `SPLAT - 1` copies past it (the
/// next segment's own stores overwrite what lies past this one's end, and `out` has room
/// for the overhang): a chunk over quicksort's deep levels, segments of ten or twenty
/// elements, pays no loop set-up and one loop exit per segment.
fn expand<T: Elem>(vals: &[T], s: &Seg, k: usize, lo: usize, hi: usize, out: &mut Vec<T>) {
    out.clear();
    let n = hi - lo;
    out.reserve(n + SPLAT);
    let buf = &mut out.spare_capacity_mut()[..n + SPLAT];
    let first = (s.start(k) + s.len(k)).min(hi) - lo;
    for o in &mut buf[..first] {
        o.write(vals[k]);
    }
    let mut pos = first;
    for (&l, &y) in s.lens()[k + 1..].iter().zip(&vals[k + 1..]) {
        if pos >= n {
            break;
        }
        let l = (l as usize).min(n - pos);
        // Whole stores of SPLAT copies up to the segment's end (one loop exit per
        // segment, at most SPLAT - 1 copies past its end, which the next overwrites).
        let mut q = pos;
        loop {
            for o in &mut buf[q..q + SPLAT] {
                o.write(y);
            }
            q += SPLAT;
            if q >= pos + l {
                break;
            }
        }
        pos += l;
    }
    debug_assert_eq!(pos, n);
    // SAFETY: the segments from `k` cover `lo..hi` (the caller's `k` holds `lo`, and `hi`
    // is at most the descriptor's total), so positions `0..n` were all written above.
    unsafe { out.set_len(n) };
}

/// Writes a chunk of an operand into its scratch buffer `buf` with `fill` (given the
/// buffer's storage, emptied, as a `Vec` of `T` to append to; reused from chunk to chunk).
#[inline]
fn refill<T: Elem>(buf: &mut Data, fill: impl FnOnce(&mut Vec<T>)) {
    let mut v = T::unwrap(std::mem::replace(buf, Data::none())).unwrap_or_default();
    v.clear();
    fill(&mut v);
    *buf = T::wrap(v);
}

/// Copies of a segment's value [`expand`] stores at once.
const SPLAT: usize = 8;

/// The shortest run of one segment of a `DIST` operand a piece of evaluation is cut at
/// to read it as a constant.
const RUN_MIN: usize = 256;

/// Where each `DIST` operand stands in a walk over increasing positions: the segment
/// holding the current position (found by a search the first time, then by stepping).
struct Cursors(SmallVec<[usize; 8]>);

impl Cursors {
    fn new(n: usize) -> Cursors {
        Cursors(smallvec![usize::MAX; n])
    }
    /// The segment of `s` holding `pos`, for operand `i` (`pos` never decreases between
    /// calls, but for [`first_failure`]'s fresh cursors).
    fn at(&mut self, i: usize, s: &Seg, pos: usize) -> usize {
        let k = &mut self.0[i];
        if *k == usize::MAX || s.start(*k) > pos {
            *k = s.segment_at(pos);
        }
        while s.start(*k) + s.len(*k) <= pos {
            *k += 1;
        }
        *k
    }
}

/// The values each operand gives one piece of an evaluation ([`piece`]).
type Operands<'a> = SmallVec<[Val<'a>; 8]>;

/// The next piece of evaluation from `lo` (up to `hi`) and the values each operand gives
/// it: a run of its elements, or for a `DIST` a constant where the piece lies in one of
/// its segments and an expansion into `scratch` (one buffer per operand) otherwise. The
/// piece is cut at the end of a `DIST`'s segment holding `lo` when that segment ends
/// inside it after at least [`RUN_MIN`] elements. An operand shorter than `hi` (a
/// `SEGDES` stand-in, never read) is passed whole. Returns the piece's end.
fn piece<'a>(args: &[Operand<'a>], cur: &mut Cursors, lo: usize, mut hi: usize, scratch: &'a mut [Data], vals: &mut Operands<'a>) -> usize {
    let live = |s: &Seg, hi: usize| hi > lo && s.total() >= hi;
    for (i, a) in args.iter().enumerate() {
        if let Operand::Dist(_, s) = *a {
            if live(s, hi) {
                let k = cur.at(i, s, lo);
                let e = s.start(k) + s.len(k);
                if e < hi && e - lo >= RUN_MIN {
                    hi = e;
                }
            }
        }
    }
    vals.clear();
    for ((i, a), buf) in args.iter().enumerate().zip(scratch.iter_mut()) {
        vals.push(match *a {
            Operand::Elems(e) => Val::of(if e.len() >= hi { e.range(lo, hi) } else { e }),
            Operand::Dist(v, s) if live(s, hi) => {
                let k = cur.at(i, s, lo);
                if s.start(k) + s.len(k) >= hi {
                    Val::konst(scalar(v, k))
                } else {
                    match v {
                        Slice::Int(v) => refill(buf, |o| expand(v, s, k, lo, hi, o)),
                        Slice::Float(v) => refill(buf, |o| expand(v, s, k, lo, hi, o)),
                        Slice::Bool(v) => refill(buf, |o| expand(v, s, k, lo, hi, o)),
                    }
                    Val::of(buf.slice())
                }
            }
            Operand::Index(ix) if live(ix.seg, hi) => {
                let k = cur.at(i, ix.seg, lo);
                refill(buf, |v: &mut Vec<i64>| ix.runs(&mut Some(k), lo, hi, |_, r| v.extend(r.indices())));
                Val::of(buf.slice())
            }
            Operand::Gather(src, ix, ss) if live(ix.seg, hi) => {
                let j = &mut Some(cur.at(i, ix.seg, lo));
                match src {
                    Slice::Int(x) => refill(buf, |o| Gathered { src: x, ix, ss }.range(j, lo, hi, o)),
                    Slice::Float(x) => refill(buf, |o| Gathered { src: x, ix, ss }.range(j, lo, hi, o)),
                    Slice::Bool(x) => refill(buf, |o| Gathered { src: x, ix, ss }.range(j, lo, hi, o)),
                }
                Val::of(buf.slice())
            }
            Operand::Pick(src, ix) if ix.len() >= hi && hi > lo => {
                match src {
                    Slice::Int(x) => refill(buf, |o| Picked::of(x, ix).range(lo, hi, o)),
                    Slice::Float(x) => refill(buf, |o| Picked::of(x, ix).range(lo, hi, o)),
                    Slice::Bool(x) => refill(buf, |o| Picked::of(x, ix).range(lo, hi, o)),
                }
                Val::of(buf.slice())
            }
            Operand::Dist(v, _) | Operand::Gather(v, ..) | Operand::Pick(v, _) => Val::of(v.range(0, 0)),
            Operand::Index(..) => Val::of(Slice::Int(&[])),
        });
    }
    hi
}

/// One operand of a compiled step: a parameter, a register, or a constant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Src {
    Arg(usize),
    Reg(usize),
    Const(HostScalar),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Step {
    Bin(BinOp, Src, Src),
    Un(UnOp, Src),
    Sel(Src, Src, Src),
    /// A product `a * b` and the sum it alone feeds ([`MulAdd`]), in one step.
    MulAdd(MulAdd, Src, Src, Src),
}

/// A step of a compiled program: its operation, its result type, the register it
/// writes (the last step writes the result instead), and which operation of the
/// superoperator it computes (its number in evaluation order, the first of identical
/// ones; `None` in a one-step program of a plain instruction): a trap names it.
#[derive(Debug, Clone, Copy)]
struct Ins {
    step: Step,
    rt: VType,
    dst: usize,
    part: Option<u32>,
}

/// A superoperator flattened into steps over registers, each holding one chunk.
///
/// Identical subexpressions share one step (a superoperator whose tree repeats a shared
/// value, as the optimiser writes one that reads a value several times, computes it
/// once per element); constants are operands, never stored. A register is reused once
/// the last step reading it has run, so a long program touches a few chunk-sized
/// registers that stay in cache. The last step writes straight into the result.
#[derive(Debug, Clone)]
pub(super) struct Prog {
    code: Vec<Ins>,
    registers: usize,
    /// The result when it is not computed by a step (a parameter or a constant).
    root: Option<Src>,
    rt: VType,
    may_trap: bool,
    /// Number of operands (each gets a scratch buffer to expand a `DIST` into).
    nargs: usize,
    /// Where a chunk's guard values are once its steps have run (a register kept to the
    /// end, a parameter or a constant), for a superoperator with a guard.
    guard: Option<Src>,
    /// Where a chunk's values of each further result are once its steps have run (as
    /// for `guard`), for a superoperator with several results.
    more: Vec<(Src, VType)>,
}

/// What identifies an operand while compiling (a constant by its bits, so that `-0.0`
/// and `0.0` stay apart).
type KeySrc = (u8, u64);

fn key_src(s: Src) -> KeySrc {
    match s {
        Src::Arg(i) => (0, i as u64),
        Src::Reg(r) => (1, r as u64),
        Src::Const(HostScalar::Int(x)) => (2, x as u64),
        Src::Const(HostScalar::Float(x)) => (3, x.to_bits()),
        Src::Const(HostScalar::Bool(x)) => (4, x as u64),
    }
}

#[derive(PartialEq, Eq, Hash)]
enum Key {
    Bin(BinOp, KeySrc, KeySrc),
    Un(UnOp, KeySrc),
    Sel(KeySrc, KeySrc, KeySrc),
    MulAdd(MulAdd, KeySrc, KeySrc, KeySrc),
}

fn key(step: Step) -> Key {
    match step {
        Step::Bin(op, a, b) => Key::Bin(op, key_src(a), key_src(b)),
        Step::Un(op, a) => Key::Un(op, key_src(a)),
        Step::Sel(f, a, b) => Key::Sel(key_src(f), key_src(a), key_src(b)),
        Step::MulAdd(m, a, b, c) => Key::MulAdd(m, key_src(a), key_src(b), key_src(c)),
    }
}

fn operands(step: &Step) -> impl Iterator<Item = Src> {
    let (a, b, c) = match *step {
        Step::Bin(_, a, b) => (Some(a), Some(b), None),
        Step::Un(_, a) => (Some(a), None, None),
        Step::Sel(f, a, b) | Step::MulAdd(_, f, a, b) => (Some(f), Some(a), Some(b)),
    };
    [a, b, c].into_iter().flatten()
}

/// The program before register allocation: step `v` computes value `v`; `parts[v]` is
/// the number (in evaluation order) of the first operation of the tree it computes.
struct Ssa {
    steps: Vec<(Step, VType)>,
    parts: Vec<u32>,
    /// Operations of the tree met so far (identical ones each counted).
    ops: u32,
    seen: HashMap<Key, usize>,
    params: Vec<Option<VType>>,
}

impl Ssa {
    fn add(&mut self, e: &Expr) -> Result<(Src, VType), Trap> {
        let (step, rt) = match e {
            Expr::Arg(i) => {
                let t = self.params.get(*i).copied().flatten().ok_or_else(|| Trap::ty(format!("parameter ${i} is not a value")))?;
                return Ok((Src::Arg(*i), t));
            }
            Expr::Const(c) => {
                let t = match c {
                    HostScalar::Int(_) => VType::Int,
                    HostScalar::Float(_) => VType::Float,
                    HostScalar::Bool(_) => VType::Bool,
                };
                return Ok((Src::Const(*c), t));
            }
            Expr::Binary { op, ty, a, b } => {
                let (a, _) = self.add(a)?;
                let (b, _) = self.add(b)?;
                let rt = crate::fused::node_types(crate::fused::NodeKind::Binary(*op), *ty).map_err(Trap::ty)?;
                match (op, b) {
                    (BinOp::Div, Src::Const(HostScalar::Float(c))) if rt == VType::Float => match exact_reciprocal(c) {
                        Some(r) => (Step::Bin(BinOp::Mul, a, Src::Const(HostScalar::Float(r))), rt),
                        None => (Step::Bin(BinOp::Div, a, b), rt),
                    },
                    _ => (Step::Bin(*op, a, b), rt),
                }
            }
            Expr::Unary { op, ty, a } => {
                let (a, _) = self.add(a)?;
                (Step::Un(*op, a), crate::fused::node_types(crate::fused::NodeKind::Unary(*op), *ty).map_err(Trap::ty)?)
            }
            Expr::Select { ty, f, a, b } => {
                let (f, _) = self.add(f)?;
                let (a, _) = self.add(a)?;
                let (b, _) = self.add(b)?;
                (Step::Sel(f, a, b), *ty)
            }
        };
        // Operations are numbered in evaluation order: after their operands.
        let part = self.ops;
        self.ops += 1;
        let k = key(step);
        if let Some(&v) = self.seen.get(&k) {
            return Ok((Src::Reg(v), rt));
        }
        self.steps.push((step, rt));
        self.parts.push(part);
        self.seen.insert(k, self.steps.len() - 1);
        Ok((Src::Reg(self.steps.len() - 1), rt))
    }

    /// Makes every `INT` or `FLOAT` sum (`+`, `-`) of a product read only there one
    /// [`Step::MulAdd`] (a polynomial by Horner's rule is then one step per degree), and
    /// drops the products; the results `roots` (the body's, the guard's, the further
    /// ones) follow the renumbered steps. Products and sums never trap, so no trap loses
    /// the operation it would name.
    fn fuse_mul_adds(&mut self, roots: &mut [Src]) {
        if !self.steps.iter().any(|(s, _)| matches!(s, Step::Bin(BinOp::Mul, ..))) {
            return;
        }
        let n = self.steps.len();
        let mut uses = vec![0usize; n];
        for s in roots.iter().copied().chain(self.steps.iter().flat_map(|(s, _)| operands(s))) {
            if let Src::Reg(v) = s {
                uses[v] += 1;
            }
        }
        let product = |v: Src, rt: VType, steps: &[(Step, VType)]| match v {
            Src::Reg(m) if uses[m] == 1 && matches!(rt, VType::Int | VType::Float) => match steps[m] {
                (Step::Bin(BinOp::Mul, a, b), t) if t == rt => Some((m, a, b)),
                _ => None,
            },
            _ => None,
        };
        let mut dead = vec![false; n];
        for i in 0..n {
            let (step, rt) = self.steps[i];
            let Step::Bin(op @ (BinOp::Add | BinOp::Sub), x, y) = step else { continue };
            let fused = match (product(x, rt, &self.steps), product(y, rt, &self.steps)) {
                (Some((m, a, b)), _) => Some((m, Step::MulAdd(if op == BinOp::Add { MulAdd::Add } else { MulAdd::Sub }, a, b, y))),
                (None, Some((m, a, b))) => Some((m, Step::MulAdd(if op == BinOp::Add { MulAdd::Add } else { MulAdd::SubFrom }, a, b, x))),
                _ => None,
            };
            if let Some((m, s)) = fused {
                self.steps[i].0 = s;
                dead[m] = true;
            }
        }
        if !dead.contains(&true) {
            return;
        }
        let mut new_of = vec![usize::MAX; n];
        let mut steps = Vec::with_capacity(n);
        let mut parts = Vec::with_capacity(n);
        for (i, ((s, t), &p)) in self.steps.iter().zip(&self.parts).enumerate() {
            if !dead[i] {
                new_of[i] = steps.len();
                steps.push((map_srcs(*s, |x| rename(x, &new_of)), *t));
                parts.push(p);
            }
        }
        self.steps = steps;
        self.parts = parts;
        self.seen.clear();
        for r in roots.iter_mut() {
            *r = rename(*r, &new_of);
        }
    }
}

/// `1 / c` where `c` is a normal power of two (`x / c` is then `x * (1 / c)` bit for bit,
/// for every `x`: both are the exact value `x * 2^-e` rounded once, and a multiply takes a
/// fraction of a divide's time; Black-Scholes divides by 2 twice per option); `None`
/// otherwise.
fn exact_reciprocal(c: f64) -> Option<f64> {
    const MANTISSA: u64 = (1 << 52) - 1;
    (c.is_normal() && c.to_bits() & MANTISSA == 0).then(|| 1.0 / c)
}

/// `step` with every operand mapped by `f`.
fn map_srcs(step: Step, f: impl Fn(Src) -> Src) -> Step {
    match step {
        Step::Bin(op, a, b) => Step::Bin(op, f(a), f(b)),
        Step::Un(op, a) => Step::Un(op, f(a)),
        Step::Sel(c, a, b) => Step::Sel(f(c), f(a), f(b)),
        Step::MulAdd(m, a, b, c) => Step::MulAdd(m, f(a), f(b), f(c)),
    }
}

impl Prog {
    /// Compiles a checked superoperator (with its guard and further results, if any: the
    /// guard's tree first, then the further trees, then the body, sharing the steps they
    /// have in common).
    pub(super) fn compile(op: &SuperOp) -> Result<Prog, Trap> {
        let rt = op.result_type().map_err(Trap::ty)?;
        let params = op.params.iter().map(|t| t.vtype()).collect();
        let mut ssa = Ssa { steps: Vec::new(), parts: Vec::new(), ops: 0, seen: HashMap::new(), params };
        // The results other than the body's: the guard's (first), then the further ones.
        let mut kept = Vec::with_capacity(1 + op.more.len());
        let mut types = Vec::with_capacity(op.more.len());
        if let Some(g) = &op.guard {
            kept.push(ssa.add(&g.cond)?.0);
        }
        for e in &op.more {
            let (src, t) = ssa.add(e)?;
            kept.push(src);
            types.push(t);
        }
        let (root, _) = ssa.add(&op.body)?;
        kept.push(root);
        ssa.fuse_mul_adds(&mut kept);
        let mut root = kept.pop().unwrap_or(root);
        let nargs = op.params.len();
        let may_trap = ssa.steps.iter().any(|(s, rt)| matches!(s, Step::Bin(BinOp::Div | BinOp::Mod, ..)) && *rt == VType::Int);
        if !kept.is_empty() && (root != Src::Reg(ssa.steps.len().wrapping_sub(1)) || kept.contains(&root)) {
            // The body's value is not the last step (another result's tree computed it,
            // or it is a parameter or constant), or another result is that step (which
            // writes the body's result, not a register): a last step copies it into the
            // result.
            ssa.steps.push((Step::Sel(Src::Const(HostScalar::Bool(true)), root, root), rt));
            root = Src::Reg(ssa.steps.len() - 1);
        }
        Ok(match root {
            // The root is the last step (a tree is never its own subtree).
            Src::Reg(_) => Prog { nargs, ..Prog::allocate(ssa.steps, &ssa.parts, rt, may_trap, op.guard.is_some(), &kept, types) },
            r => Prog { code: Vec::new(), registers: 0, root: Some(r), rt, may_trap, nargs, guard: None, more: Vec::new() },
        })
    }
    /// A program of one step over `$0` (and `$1`, `$2`) with result type `rt`.
    pub(super) fn one(step: Step, rt: VType) -> Prog {
        Prog { code: vec![Ins { step, rt, dst: 0, part: None }], registers: 0, root: None, rt, may_trap: false, nargs: 3, guard: None, more: Vec::new() }
    }
    /// Assigns registers to the values of `steps` (the last one is the result): a value's
    /// register is free again after the last step that reads it, and is reused for the
    /// next value of the same type. The other results' values (`kept`: the guard's first
    /// when `guarded`, then the further results', of `types`), when they are steps',
    /// keep their registers to the end.
    #[allow(clippy::too_many_arguments)]
    fn allocate(steps: Vec<(Step, VType)>, parts: &[u32], rt: VType, may_trap: bool, guarded: bool, kept: &[Src], more_types: Vec<VType>) -> Prog {
        let n = steps.len();
        let mut last = vec![0; n];
        for (i, (s, _)) in steps.iter().enumerate() {
            for o in operands(s) {
                if let Src::Reg(v) = o {
                    last[v] = i;
                }
            }
        }
        // (After the readers: a kept value that a later step also reads stays kept.)
        for k in kept {
            if let Src::Reg(g) = *k {
                last[g] = n;
            }
        }
        let mut reg_of = vec![usize::MAX; n];
        let mut types: Vec<VType> = Vec::new();
        let mut free: Vec<usize> = Vec::new();
        let mut code = Vec::with_capacity(n);
        for (i, (s, t)) in steps.into_iter().enumerate() {
            let step = map_srcs(s, |x| rename(x, &reg_of));
            let dst = if i + 1 == n {
                0
            } else {
                match free.iter().position(|&r| types[r] == t) {
                    Some(k) => free.swap_remove(k),
                    None => {
                        types.push(t);
                        types.len() - 1
                    }
                }
            };
            reg_of[i] = dst;
            for o in operands(&s) {
                if let Src::Reg(v) = o {
                    if last[v] == i && !free.contains(&reg_of[v]) {
                        free.push(reg_of[v]);
                    }
                }
            }
            code.push(Ins { step, rt: t, dst, part: parts.get(i).copied() });
        }
        let mut kept = kept.iter().map(|&k| rename(k, &reg_of));
        let guard = if guarded { kept.next() } else { None };
        let more = kept.zip(more_types).collect();
        Prog { code, registers: types.len(), root: None, rt, may_trap, nargs: 0, guard, more }
    }
    pub(super) fn result_type(&self) -> VType {
        self.rt
    }
    /// The comparison this program is, when it is one step comparing two operands or
    /// constants of `args` that are both `INT` or both `FLOAT` (a pack's flag tree
    /// `e < p`): [`compare_bits`] then writes its flags as bits.
    fn comparison(&self, args: &[Operand]) -> Option<(BinOp, Src, Src)> {
        let ty = |s: Src| match s {
            Src::Arg(i) => args.get(i).map(Operand::vtype),
            Src::Const(HostScalar::Int(_)) => Some(VType::Int),
            Src::Const(HostScalar::Float(_)) => Some(VType::Float),
            Src::Const(HostScalar::Bool(_)) => Some(VType::Bool),
            Src::Reg(_) => None,
        };
        match self.code.as_slice() {
            [Ins { step: Step::Bin(op, a, b), rt: VType::Bool, .. }] if self.root.is_none() && op.is_comparison() => {
                match (ty(*a)?, ty(*b)?) {
                    (VType::Int, VType::Int) | (VType::Float, VType::Float) => Some((*op, *a, *b)),
                    _ => None,
                }
            }
            _ => None,
        }
    }
    /// Registers for one evaluation, then a scratch buffer per operand ([`Registers`]:
    /// their buffers are those the thread's last evaluation left).
    fn registers(&self) -> Registers {
        let n = self.registers + self.nargs;
        let mut regs = SPARE_REGISTERS.with(|s| std::mem::take(&mut *s.borrow_mut()));
        if regs.len() < n {
            regs.resize_with(n, Data::none);
        }
        Registers { regs, n }
    }
    /// True when an element can make the program trap (integer `/` and `%` by zero): it
    /// must then not write over an operand, which has to survive a trap unchanged.
    pub(super) fn may_trap(&self) -> bool {
        self.may_trap
    }
    /// The work of evaluating the program over `n` elements, in the units of
    /// [`Par`]'s grain (one per element of a cheap operation): a program of many steps
    /// splits across threads from fewer elements (Black-Scholes' superoperator of 50,000
    /// elements took 0.63x the time on two threads, where the grain alone kept it on one).
    pub(super) fn work(&self, n: usize) -> usize {
        n.saturating_mul((self.code.len() / STEPS_PER_UNIT).max(1))
    }
}

thread_local! {
    /// Register buffers a finished evaluation on this thread left ([`Registers`]).
    static SPARE_REGISTERS: std::cell::RefCell<Vec<Data>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The registers of an evaluation (and the scratch buffers of its operands), the first
/// `n` of `regs`. Their buffers go back to the thread when it ends, to be written over by
/// the next evaluation there: a superoperator over a few elements (a `FUSED` in serial
/// code, on one-element vectors) otherwise allocated a buffer per step, which cost more
/// than the step. A register holds at most a chunk ([`CHUNK`] elements), an operand's
/// scratch buffer at most a block ([`BLOCK`]: a program without registers takes its
/// operands a block at a time).
struct Registers {
    regs: Vec<Data>,
    n: usize,
}

impl std::ops::Deref for Registers {
    type Target = [Data];
    fn deref(&self) -> &[Data] {
        &self.regs[..self.n]
    }
}

impl std::ops::DerefMut for Registers {
    fn deref_mut(&mut self) -> &mut [Data] {
        &mut self.regs[..self.n]
    }
}

impl Drop for Registers {
    fn drop(&mut self) {
        let regs = std::mem::take(&mut self.regs);
        // The thread keeps the larger set (nested evaluations give back two).
        let _ = SPARE_REGISTERS.try_with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                if s.len() < regs.len() {
                    *s = regs;
                }
            }
        });
    }
}

/// Steps of a program that count as one unit of work per element ([`Prog::work`]).
const STEPS_PER_UNIT: usize = 4;

fn rename(s: Src, reg_of: &[usize]) -> Src {
    match s {
        Src::Reg(v) => Src::Reg(reg_of[v]),
        s => s,
    }
}

fn operand<'a>(src: Src, args: &[Val<'a>], regs: &'a [Data]) -> Val<'a> {
    match src {
        Src::Arg(i) => args[i],
        Src::Reg(r) => Val::of(regs[r].slice()),
        Src::Const(c) => Val::konst(c),
    }
}

fn exec(step: Step, args: &[Val], regs: &[Data], out: Out) -> Result<(), Trap> {
    match step {
        Step::Bin(op, a, b) => binary_kernel(op, operand(a, args, regs), operand(b, args, regs), out),
        Step::Un(op, a) => unary_kernel(op, operand(a, args, regs), out),
        Step::Sel(f, a, b) => select_kernel(operand(f, args, regs), operand(a, args, regs), operand(b, args, regs), out),
        Step::MulAdd(m, a, b, c) => mul_add_kernel(m, operand(a, args, regs), operand(b, args, regs), operand(c, args, regs), out),
    }
}

/// Evaluates the program over one chunk (`args` are that chunk's values, of `out`'s
/// length) into `out`.
fn run_chunk(p: &Prog, args: &[Val], regs: &mut [Data], out: Out) -> Result<(), Trap> {
    let n = match &out {
        Out::Int(o) => o.len(),
        Out::Float(o) => o.len(),
        Out::Bool(o) => o.len(),
    };
    if let Some(root) = p.root {
        // A parameter or a constant: copied.
        return select_kernel(Val::Bool(V::K(true)), operand(root, args, regs), operand(root, args, regs), out);
    }
    let Some((last, body)) = p.code.split_last() else {
        return Err(Trap::ty("empty superoperator"));
    };
    // A failing step names the superoperator's operation it computes.
    let named = |ins: &Ins, t: Trap| match ins.part {
        Some(k) => t.in_part(k),
        None => t,
    };
    for ins in body {
        let mut dst = std::mem::replace(&mut regs[ins.dst], Data::none());
        let res = write_data(&mut dst, ins.rt, n, |o| exec(ins.step, args, regs, o));
        regs[ins.dst] = dst;
        res.map_err(|t| named(ins, t))?;
    }
    if last.rt != out.vtype() {
        return Err(Trap::ty(format!("superoperator produces {}, not {}", last.rt.name(), out.vtype().name())));
    }
    exec(last.step, args, regs, out).map_err(|t| named(last, t))
}

/// The trap of the first element of a failed chunk (at positions `glo..` of `args`, `out`
/// as long as the chunk) that fails, from the first step that fails on it: the program is
/// run again one element at a time. The steps of a chunk each run over all its elements,
/// so the trap the chunk gave may come from a later element of an earlier step; the first
/// failing element in element order does not depend on how the work was split. `first`
/// is that trap, returned when no single element fails.
fn first_failure<T: Elem>(p: &Prog, args: &[Operand], glo: usize, out: &mut [MaybeUninit<T>], regs: &mut [Data], first: Trap) -> Trap {
    let (regs, scratch) = regs.split_at_mut(p.registers);
    let mut cur = Cursors::new(args.len());
    for i in 0..out.len() {
        let g = glo + i;
        let mut one = Operands::new();
        piece(args, &mut cur, g, g + 1, scratch, &mut one);
        if let Err(t) = run_chunk(p, &one, regs, T::out(&mut out[i..i + 1])) {
            return t;
        }
    }
    first
}

/// Evaluates `p` at one position whose operands are the values `args` (the scalars of
/// serial code): the steps a chunk runs, over one element, in the thread's registers.
pub(super) fn eval_one(p: &Prog, args: &[HostScalar]) -> Result<HostScalar, Trap> {
    const ON_STACK: usize = 8;
    let mut regs = p.registers();
    let regs = &mut regs[..p.registers];
    if args.len() > ON_STACK {
        let vals: Vec<Val> = args.iter().map(|&a| Val::konst(a)).collect();
        return super::elementwise::one(p.result_type(), |o| run_chunk(p, &vals, regs, o));
    }
    let mut vals = [Val::Int(V::K(0)); ON_STACK];
    for (v, &a) in vals.iter_mut().zip(args) {
        *v = Val::konst(a);
    }
    super::elementwise::one(p.result_type(), |o| run_chunk(p, &vals[..args.len()], regs, o))
}

/// Evaluates `p` over `len` positions into a fresh vector. `args[i]` is operand `$i`
/// (length `len`; a `SEGDES` operand is an empty stand-in, never read).
pub(super) fn eval(par: &Par, p: &Prog, args: &[Operand], len: usize) -> Result<Data, Trap> {
    Ok(eval_guarded(par, p, args, len)?.0)
}

/// [`eval`], and whether `p`'s guard holds at some position (`false` without a guard):
/// one pass over the operands.
pub(super) fn eval_guarded(par: &Par, p: &Prog, args: &[Operand], len: usize) -> Result<(Data, bool), Trap> {
    let mut any = false;
    let data = match p.rt {
        VType::Int => Data::Int(build(len, |out| fill::<i64>(par, p, args, out, None).map(|g| any = g))?),
        VType::Float => Data::Float(build(len, |out| fill::<f64>(par, p, args, out, None).map(|g| any = g))?),
        VType::Bool => Data::Bool(build(len, |out| fill::<bool>(par, p, args, out, None).map(|g| any = g))?),
    };
    Ok((data, any))
}

/// Evaluates the `BOOL` programs `ps` (a pack's flag trees), all over the operands `args`,
/// into `len` flags each, as bits ([`pack::words_for`]`(len)` words each, as
/// [`pack::word_of`] writes them), in one pass over the operands: each chunk of them is
/// read once and every program runs over it while it is in cache; a block's flags go
/// through a buffer in cache into their words, never stored a byte each.
pub(super) fn eval_flags(par: &Par, ps: &[Prog], args: &[Operand], len: usize) -> Result<Vec<Vec<u64>>, Trap> {
    if ps.is_empty() {
        return Ok(Vec::new());
    }
    if ps.iter().any(|p| p.rt != VType::Bool) {
        return Err(Trap::ty("a pack's flag trees are not BOOL"));
    }
    let words = pack::words_for(len);
    let per_block = BLOCK / 64;
    // Block `b` writes flags `b * BLOCK..` into words `b * per_block..`; the last block
    // (or, for no flags, the only one) also the words past them.
    let blocks = len.div_ceil(BLOCK).max(1);
    let sizes = (0..blocks).map(|b| if b + 1 < blocks { per_block } else { words - b * per_block });
    let mut outs = ps.iter().map(|_| super::mem::alloc::<u64>(words)).collect::<Result<Vec<_>, _>>()?;
    let mut items: Vec<(usize, Vec<&mut [MaybeUninit<u64>]>)> = (0..blocks).map(|b| (b * BLOCK, Vec::with_capacity(ps.len()))).collect();
    for o in outs.iter_mut() {
        for (b, part) in split_mut(&mut o.spare_capacity_mut()[..words], sizes.clone()).into_iter().enumerate() {
            items[b].1.push(part);
        }
    }
    let cmps: Vec<_> = ps.iter().map(|p| p.comparison(args)).collect();
    let derived = derived_flags(&cmps, args);
    let init = || {
        let bufs = cmps.iter().map(|c| if c.is_some() { Vec::new() } else { vec![false; BLOCK.min(len)] }).collect::<Vec<Vec<bool>>>();
        (ps.iter().map(Prog::registers).collect::<Vec<_>>(), bufs)
    };
    let work = ps.iter().map(|p| p.work(len)).fold(0, usize::saturating_add);
    let results = par.map_init(work, items, init, |(regs, buf), (lo, mut parts)| {
        flags_range(ps, &cmps, &derived, args, lo, (lo + BLOCK).min(len), &mut parts, regs, buf)
    });
    for r in results {
        r?;
    }
    if crate::interrupt::abandoned() {
        // Blocks may have been skipped: not written.
        return Err(Trap::new(crate::trap::TrapKind::Interrupted));
    }
    for o in &mut outs {
        // SAFETY: every block wrote every word of its part of every output (`flags_range`
        // returned `Ok` for each; a failure returned above), the parts cover all `words`,
        // and no block was skipped.
        unsafe { o.set_len(words) };
    }
    Ok(outs)
}

/// For each flag tree, the two others it follows from, when it is `=` of two `INT`
/// parameters and the trees also hold `<` and `>` of the same two (quicksort's three
/// filters): an element is equal exactly when it is neither less nor greater, so its
/// flags are the words of the other two, or-ed and negated, and its comparison pass is
/// saved.
fn derived_flags(cmps: &[Option<(BinOp, Src, Src)>], args: &[Operand]) -> Vec<Option<(usize, usize)>> {
    let int = |s: Src| matches!(s, Src::Arg(i) if args.get(i).map(Operand::vtype) == Some(VType::Int));
    let find = |op: BinOp, x: Src, y: Src| cmps.iter().position(|c| *c == Some((op, x, y)));
    cmps.iter()
        .map(|c| match *c {
            Some((BinOp::Eq, x, y)) if int(x) && int(y) => {
                let lt = find(BinOp::Lt, x, y).or_else(|| find(BinOp::Gt, y, x))?;
                let gt = find(BinOp::Gt, x, y).or_else(|| find(BinOp::Lt, y, x))?;
                Some((lt, gt))
            }
            _ => None,
        })
        .collect()
}

/// [`eval_flags`] at positions `lo..hi`, [`CHUNK`] elements at a time: every program
/// runs over a chunk of the operands (expanded once for all of them) into its buffer in
/// `bufs` (each at least `hi - lo` flags), whose flags then go into the words `outs[i]`;
/// a program that is one comparison (`cmps[i]`, [`Prog::comparison`]) writes its flags
/// straight into its words as bits ([`compare_bits`]), and one that follows from two
/// others (`derived[i]`, [`derived_flags`]) is made from their words at the end.
#[allow(clippy::too_many_arguments)]
fn flags_range(
    ps: &[Prog],
    cmps: &[Option<(BinOp, Src, Src)>],
    derived: &[Option<(usize, usize)>],
    args: &[Operand],
    lo: usize,
    hi: usize,
    outs: &mut [&mut [MaybeUninit<u64>]],
    regs: &mut [Registers],
    bufs: &mut [Vec<bool>],
) -> Result<(), Trap> {
    if crate::interrupt::skip_work() {
        return Err(Trap::new(crate::trap::TrapKind::Interrupted));
    }
    fn view(s: &mut [bool]) -> &mut [MaybeUninit<bool>] {
        // SAFETY: `MaybeUninit<bool>` has `bool`'s layout, and the evaluator only ever
        // writes whole `bool`s through this view, so `s` stays initialised.
        unsafe { &mut *(s as *mut [bool] as *mut [MaybeUninit<bool>]) }
    }
    /// Program `p`'s flags at positions `c..e` of the block: as bits into `words` for a
    /// comparison, else as booleans into `b`.
    #[allow(clippy::too_many_arguments)]
    fn one(p: &Prog, cmp: Option<(BinOp, Src, Src)>, args: &[Val], rs: &mut [Data], b: &mut [bool], words: &mut [MaybeUninit<u64>], c: usize, e: usize) -> Result<(), Trap> {
        let Some((op, x, y)) = cmp else { return run_chunk(p, args, rs, bool::out(&mut view(b)[c..e])) };
        // The words were zeroed before the first piece.
        if compare_bits(op, operand(x, args, &[]), operand(y, args, &[]), assume_init(words), c, e - c) {
            Ok(())
        } else {
            Err(Trap::ty("a pack's flag comparison changed its operand types"))
        }
    }
    let n = hi.saturating_sub(lo);
    for (o, c) in outs.iter_mut().zip(cmps) {
        if c.is_some() {
            o.fill(MaybeUninit::new(0));
        }
    }
    let Some(((p0, ps), (r0, regs))) = ps.split_first().zip(regs.split_first_mut()) else { return Ok(()) };
    let Some(((b0, bufs_rest), (o0, outs_rest))) = bufs.split_first_mut().zip(outs.split_first_mut()) else { return Ok(()) };
    let (r0, scratch) = r0.split_at_mut(p0.registers);
    let mut cur = Cursors::new(args.len());
    let mut c = 0;
    while c < n {
        let mut chunk_args = Operands::new();
        let e = piece(args, &mut cur, lo + c, lo + (c + CHUNK).min(n), scratch, &mut chunk_args) - lo;
        if derived[0].is_none() {
            one(p0, cmps[0], &chunk_args, r0, b0, o0, c, e)?;
        }
        for (i, (((p, rs), b), o)) in ps.iter().zip(regs.iter_mut()).zip(bufs_rest.iter_mut()).zip(outs_rest.iter_mut()).enumerate() {
            if derived[i + 1].is_none() {
                one(p, cmps[i + 1], &chunk_args, &mut rs[..p.registers], b, o, c, e)?;
            }
        }
        c = e;
    }
    for (i, d) in derived.iter().enumerate() {
        let Some((lt, gt)) = *d else { continue };
        for w in 0..outs[i].len() {
            let base = 64 * w;
            let valid = if base >= n { 0 } else if n - base >= 64 { !0u64 } else { (1u64 << (n - base)) - 1 };
            // SAFETY: the comparisons' words were zeroed above and then written.
            let (a, b) = unsafe { (outs[lt][w].assume_init(), outs[gt][w].assume_init()) };
            outs[i][w].write(!(a | b) & valid);
        }
    }
    for ((out, b), cmp) in outs.iter_mut().zip(bufs.iter()).zip(cmps) {
        if cmp.is_some() {
            continue;
        }
        let b = &b[..n];
        for (w, o) in out.iter_mut().enumerate() {
            o.write(pack::word_of(b, 64 * w));
        }
    }
    Ok(())
}

/// Evaluates `p` writing the result over `out`, which holds operand `$over` (of type
/// `ty`: the result's, or of the same width, its bits in `out`; `args[over]` is not
/// read). The caller makes sure `p` cannot trap ([`Prog::may_trap`]).
pub(super) fn eval_over(par: &Par, p: &Prog, args: &[Operand], out: &mut Data, over: (usize, VType)) -> Result<(), Trap> {
    fn view<T>(s: &mut [T]) -> &mut [MaybeUninit<T>] {
        // SAFETY: `MaybeUninit<T>` has `T`'s layout, and the evaluator only ever writes
        // initialised values through this view, so `s` stays initialised.
        unsafe { &mut *(s as *mut [T] as *mut [MaybeUninit<T>]) }
    }
    match out {
        Data::Int(v) => fill::<i64>(par, p, args, view(v), Some(over)).map(drop),
        Data::Float(v) => fill::<f64>(par, p, args, view(v), Some(over)).map(drop),
        Data::Bool(v) => fill::<bool>(par, p, args, view(v), Some(over)).map(drop),
    }
}

/// Evaluates `p` into `out` in parallel blocks; whether its guard held anywhere.
fn fill<T: Elem>(par: &Par, p: &Prog, args: &[Operand], out: &mut [MaybeUninit<T>], over: Option<(usize, VType)>) -> Result<bool, Trap> {
    let len = out.len();
    if len <= BLOCK {
        // One block (the blocks below, on the calling thread): no lists made.
        return eval_range(p, args, 0, out, &mut p.registers(), over, &mut []);
    }
    let blocks: Vec<(usize, &mut [MaybeUninit<T>])> =
        split_mut(out, (0..len.div_ceil(BLOCK)).map(|b| (len - b * BLOCK).min(BLOCK))).into_iter().enumerate().map(|(b, s)| (b * BLOCK, s)).collect();
    let results = par.map_init(p.work(len), blocks, || p.registers(), |regs, (lo, blk)| eval_range(p, args, lo, blk, regs, over, &mut []));
    let mut any = false;
    for r in results {
        any |= r?;
    }
    Ok(any)
}

/// Whether a chunk's guard values (`n` of them) hold anywhere.
fn any_true(v: Val, n: usize) -> Result<bool, Trap> {
    match v {
        Val::Bool(V::S(x)) => Ok(x[..n].contains(&true)),
        Val::Bool(V::K(x)) => Ok(x && n > 0),
        _ => Err(Trap::ty("a superoperator's guard is not BOOL")),
    }
}

/// Evaluates `p` at positions `lo..lo + out.len()` into `out` (and its further results
/// into `more`, as long as `out`, one per further result), [`CHUNK`] elements at a time.
/// With `over = Some((a, ty))`, `out` is initialised and holds operand `$a`, of type
/// `ty` (read before it is written). Returns whether `p`'s guard held at one of these
/// positions.
fn eval_range<T: Elem>(
    p: &Prog,
    args: &[Operand],
    lo: usize,
    out: &mut [MaybeUninit<T>],
    regs: &mut [Data],
    over: Option<(usize, VType)>,
    more: &mut [Out],
) -> Result<bool, Trap> {
    if crate::interrupt::skip_work() {
        return Err(Trap::new(crate::trap::TrapKind::Interrupted));
    }
    if more.len() != p.more.len() {
        // (Every further result must be written: the callers mark them all written.)
        return Err(Trap::ty(format!("a superoperator with {} further results given {} outputs", p.more.len(), more.len())));
    }
    let mut stage: Vec<T> = Vec::new();
    let mut c = 0;
    let mut any = false;
    let nregs = p.registers;
    // A program without registers writes straight into `out`: no chunks needed.
    let step = if nregs == 0 { out.len() } else { CHUNK };
    let mut cur = Cursors::new(args.len());
    while c < out.len() {
        let (rs, scratch) = regs.split_at_mut(nregs);
        let mut chunk_args = Operands::new();
        let glo = lo + c;
        let hi = piece(args, &mut cur, glo, lo + (c + step).min(out.len()), scratch, &mut chunk_args) - lo;
        if over.is_some() {
            // SAFETY: in this mode `out` is initialised (see `eval_over`).
            let init: &[T] = unsafe { &*(&out[c..hi] as *const [MaybeUninit<T>] as *const [T]) };
            stage.clear();
            stage.extend_from_slice(init);
        }
        if let Some((a, ty)) = over {
            chunk_args[a] = Val::of(view_as(&stage, ty).ok_or_else(|| Trap::ty("a superoperator wrote over an operand of another width"))?);
        }
        if let Err(t) = run_chunk(p, &chunk_args, rs, T::out(&mut out[c..hi])) {
            drop(chunk_args);
            // (Over an operand, the program cannot trap on its values: see `eval_over`.)
            return Err(if p.may_trap && over.is_none() { first_failure(p, args, glo, &mut out[c..hi], regs, t) } else { t });
        }
        if let Some(g) = p.guard {
            any = any || any_true(operand(g, &chunk_args, rs), hi - c)?;
        }
        for (&(src, _), o) in p.more.iter().zip(more.iter_mut()) {
            let v = operand(src, &chunk_args, rs);
            select_kernel(Val::Bool(V::K(true)), v, v, sub_out(o, c, hi))?;
        }
        c = hi;
    }
    Ok(any)
}

/// Positions `lo..hi` of `o`.
fn sub_out<'b>(o: &'b mut Out<'_>, lo: usize, hi: usize) -> Out<'b> {
    match o {
        Out::Int(x) => Out::Int(&mut x[lo..hi]),
        Out::Float(x) => Out::Float(&mut x[lo..hi]),
        Out::Bool(x) => Out::Bool(&mut x[lo..hi]),
    }
}

/// `o` cut into consecutive pieces of the lengths `sizes`.
fn split_out<'a>(o: Out<'a>, sizes: impl IntoIterator<Item = usize>) -> Vec<Out<'a>> {
    match o {
        Out::Int(x) => split_mut(x, sizes).into_iter().map(Out::Int).collect(),
        Out::Float(x) => split_mut(x, sizes).into_iter().map(Out::Float).collect(),
        Out::Bool(x) => split_mut(x, sizes).into_iter().map(Out::Bool).collect(),
    }
}

/// An empty vector of type `t` with room for `n` elements.
fn alloc_data(t: VType, n: usize) -> Result<Data, Trap> {
    Ok(match t {
        VType::Int => Data::Int(alloc(n)?),
        VType::Float => Data::Float(alloc(n)?),
        VType::Bool => Data::Bool(alloc(n)?),
    })
}

/// The first `n` places of `d`'s room, to be written.
fn room(d: &mut Data, n: usize) -> Out<'_> {
    match d {
        Data::Int(v) => Out::Int(&mut v.spare_capacity_mut()[..n]),
        Data::Float(v) => Out::Float(&mut v.spare_capacity_mut()[..n]),
        Data::Bool(v) => Out::Bool(&mut v.spare_capacity_mut()[..n]),
    }
}

/// [`eval_guarded`] of a program with further results: the body's values, then each
/// further result's, and whether the guard holds at some position; one pass over the
/// operands, in parallel blocks.
pub(super) fn eval_many(par: &Par, p: &Prog, args: &[Operand], len: usize) -> Result<(Vec<Data>, bool), Trap> {
    let mut outs = std::iter::once(p.rt).chain(p.more.iter().map(|&(_, t)| t)).map(|t| alloc_data(t, len)).collect::<Result<Vec<_>, _>>()?;
    let blocks = len.div_ceil(BLOCK);
    let sizes = (0..blocks).map(|b| (len - b * BLOCK).min(BLOCK));
    let mut items: Vec<(usize, Vec<Out>)> = (0..blocks).map(|b| (b * BLOCK, Vec::with_capacity(outs.len()))).collect();
    for d in outs.iter_mut() {
        for (item, part) in items.iter_mut().zip(split_out(room(d, len), sizes.clone())) {
            item.1.push(part);
        }
    }
    let results = par.map_init(p.work(len), items, || p.registers(), |regs, (lo, mut parts)| {
        let Some((first, rest)) = parts.split_first_mut() else { return Ok(false) };
        match first {
            Out::Int(o) => eval_range(p, args, lo, o, regs, None, rest),
            Out::Float(o) => eval_range(p, args, lo, o, regs, None, rest),
            Out::Bool(o) => eval_range(p, args, lo, o, regs, None, rest),
        }
    });
    let mut any = false;
    for r in results {
        any |= r?;
    }
    if crate::interrupt::abandoned() {
        // Blocks may have been skipped: not written.
        return Err(Trap::new(crate::trap::TrapKind::Interrupted));
    }
    for d in &mut outs {
        // SAFETY: every block wrote all its positions of every result (`eval_range`
        // returned `Ok` for each, over the whole block, into the body's part and each
        // further result's), the blocks cover `len` positions, and none was skipped.
        unsafe {
            match d {
                Data::Int(v) => v.set_len(len),
                Data::Float(v) => v.set_len(len),
                Data::Bool(v) => v.set_len(len),
            }
        }
    }
    Ok((outs, any))
}

/// Views `out`, all of whose elements have been written, as initialised.
fn assume_init<T>(out: &mut [MaybeUninit<T>]) -> &mut [T] {
    // SAFETY: callers only pass storage every element of which they have written;
    // `MaybeUninit<T>` has `T`'s layout.
    unsafe { &mut *(out as *mut [MaybeUninit<T>] as *mut [T]) }
}

/// What one chunk of a fold gives: the fold of its piece of a long segment, or the value
/// of each of its whole segments.
enum Part<T> {
    Piece(usize, Option<T>),
    Whole(Vec<T>),
}

/// The segmented reductions over `s` of `p`'s values, without storing them: one vector
/// per result of `p` (its body's, then each further result's, all reduced by `f`). Each
/// chunk of [`cut`](super::par::cut) is evaluated into block-sized scratch buffers (one per
/// result) and folded there. The folds are those of [`reduce_t`](super::scan::reduce_t)
/// (a segment of at most [`BLOCK`] elements left to right, a longer one per block in lanes,
/// blocks in order), so each result is bit-identical to evaluating and then reducing, on
/// any number of threads.
pub(super) fn reduce<T: Elem>(
    par: &Par,
    p: &Prog,
    args: &[Operand],
    s: &Seg,
    id: T,
    lanes: bool,
    f: impl Fn(T, T) -> T + Sync + Send,
) -> Result<Vec<Vec<T>>, Trap> {
    let results = 1 + p.more.len();
    if p.more.iter().any(|&(_, t)| t != p.rt) {
        return Err(Trap::ty("a superoperator's reduced results are of different types"));
    }
    let init = || (p.registers(), (0..results).map(|_| Vec::<T>::new()).collect::<Vec<_>>());
    let parts = par.map_init(p.work(s.total()) + s.m(), cut(s, true), init, |(regs, scratch), c| -> Result<Vec<Part<T>>, Trap> {
        let n = c.e1 - c.e0;
        for b in scratch.iter_mut() {
            b.clear();
            b.reserve(n);
        }
        let (first, rest) = scratch.split_first_mut().ok_or_else(|| Trap::ty("no result"))?;
        let mut more: Vec<Out> = rest.iter_mut().map(|b| T::out(&mut b.spare_capacity_mut()[..n])).collect();
        eval_range(p, args, c.e0, &mut first.spare_capacity_mut()[..n], regs, None, &mut more)?;
        drop(more);
        for b in scratch.iter_mut() {
            // SAFETY: `eval_range` wrote all `n` elements of the body's buffer and of each
            // further result's.
            unsafe { b.set_len(n) };
        }
        scratch.iter().map(|b| fold_chunk(b, &c, s, id, lanes, &f)).collect()
    });
    let mut outs: Vec<Vec<T>> = (0..results).map(|_| Vec::with_capacity(s.m())).collect();
    // Per result, the segment whose pieces are being combined, and their fold so far.
    let mut open: Vec<Option<(usize, Option<T>)>> = vec![None; results];
    for chunk in parts {
        for ((part, out), open) in chunk?.into_iter().zip(outs.iter_mut()).zip(open.iter_mut()) {
            match part {
                Part::Piece(k, x) => match open {
                    Some((j, acc)) if *j == k => {
                        *acc = match (*acc, x) {
                            (Some(a), Some(x)) => Some(f(a, x)),
                            (a, x) => a.or(x),
                        }
                    }
                    _ => {
                        if let Some((_, acc)) = open.take() {
                            out.push(acc.unwrap_or(id));
                        }
                        *open = Some((k, x));
                    }
                },
                Part::Whole(vals) => {
                    if let Some((_, acc)) = open.take() {
                        out.push(acc.unwrap_or(id));
                    }
                    out.extend(vals);
                }
            }
        }
    }
    for (out, open) in outs.iter_mut().zip(open) {
        if let Some((_, acc)) = open {
            out.push(acc.unwrap_or(id));
        }
        if out.len() != s.m() {
            return Err(Trap::ty(format!("fused reduction made {} values for {} segments", out.len(), s.m())));
        }
    }
    Ok(outs)
}

/// The fold of one chunk's values `vals` (positions `c.e0..c.e1`): of its piece of a long
/// segment, or of each of its whole segments (`id` for an empty one).
fn fold_chunk<T: Elem>(vals: &[T], c: &Chunk, s: &Seg, id: T, lanes: bool, f: &impl Fn(T, T) -> T) -> Result<Part<T>, Trap> {
    if c.s1 == c.s0 + 1 && s.len(c.s0) > BLOCK {
        return Ok(Part::Piece(c.s0, fold_lanes(vals, c.e0 == s.start(c.s0), lanes, f)));
    }
    // Whole segments, each folded left to right (as `reduce_t` does, by the same
    // `fold_segments`). (`cut` only splits segments longer than a block, handled above.)
    let Some(lens) = c.whole(s) else {
        return Err(Trap::ty("fused reduction: a chunk holds part of a short segment"));
    };
    let out = build(lens.len(), |o| {
        fold_segments(vals, lens, id, f, o);
        Ok(())
    })?;
    Ok(Part::Whole(out))
}

/// The exclusive segmented scan over `s` of `p`'s values: each chunk is evaluated into
/// the result and, for whole segments, scanned there while it is in cache; the blocks of
/// a long segment are scanned in a second pass from the combined totals of the blocks
/// before them. Bit-identical to evaluating and then scanning ([`scan_t`](super::scan::scan_t)).
pub(super) fn scan<T: Elem>(
    par: &Par,
    p: &Prog,
    args: &[Operand],
    s: &Seg,
    id: T,
    lanes: bool,
    f: impl Fn(T, T) -> T + Sync + Send,
) -> Result<Vec<T>, Trap> {
    let n = s.total();
    build(n, |out| {
        let cs = cut(s, true);
        let long = |c: &Chunk| c.s1 == c.s0 + 1 && s.len(c.s0) > BLOCK;
        let parts = split_mut(out, cs.iter().map(|c| c.e1 - c.e0));
        let items: Vec<(Chunk, &mut [MaybeUninit<T>])> = cs.iter().copied().zip(parts).collect();
        // Pass 1: values; whole segments scanned; the total of each block of a long one.
        let firsts = par.map_init(p.work(n) + s.m(), items, || p.registers(), |regs, (c, part)| -> Result<(Chunk, Option<T>, &mut [T]), Trap> {
            eval_range(p, args, c.e0, part, regs, None, &mut [])?;
            let vals = assume_init(part);
            if long(&c) {
                let t = fold_lanes(vals, c.e0 == s.start(c.s0), lanes, &f);
                return Ok((c, t, vals));
            }
            for k in c.s0..c.s1 {
                let st = s.start(k) - c.e0;
                scan_in_place(&mut vals[st..st + s.len(k)], None, id, &f);
            }
            Ok((c, None, vals))
        });
        let mut pieces: Vec<(Chunk, Option<T>, &mut [T])> = Vec::new();
        for r in firsts {
            let r = r?;
            if long(&r.0) {
                pieces.push(r);
            }
        }
        // Pass 2: each block of a long segment from the total of the blocks before it.
        let mut starts: Vec<Option<T>> = Vec::with_capacity(pieces.len());
        let mut i = 0;
        while i < pieces.len() {
            let k = pieces[i].0.s0;
            let j = i + pieces[i..].iter().take_while(|p| p.0.s0 == k).count();
            starts.extend(block_offsets(pieces[i..j].iter().map(|p| p.1), &f).0);
            i = j;
        }
        let work: Vec<(Option<T>, &mut [T])> = starts.into_iter().zip(pieces.into_iter().map(|p| p.2)).collect();
        par.each(n, work, |(init, vals)| scan_in_place(vals, init, id, &f));
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`super::eval`] over stored operands.
    fn eval(par: &Par, p: &Prog, args: &[Slice], len: usize) -> Result<Data, Trap> {
        super::eval(par, p, &args.iter().map(|s| Operand::Elems(*s)).collect::<Vec<_>>(), len)
    }

    /// [`eval_flags`] of `progs` over `args` gives each tree's flags as [`super::eval`] of
    /// it alone does, as bits, with none set past the `n`th.
    fn assert_flags_are_the_trees(par: &Par, progs: &[Prog], args: &[Operand], n: usize, what: &str) {
        let words = eval_flags(par, progs, args, n).unwrap();
        for (p, w) in progs.iter().zip(&words) {
            let Data::Bool(want) = super::eval(par, p, args, n).unwrap() else { panic!("not BOOL") };
            assert_eq!(w.len(), pack::words_for(n));
            for i in 0..64 * w.len() {
                let bit = w[i / 64] >> (i % 64) & 1 == 1;
                assert_eq!(bit, i < n && want[i], "flag {i} of {n}, {what}, {:?}", p.code);
            }
        }
    }

    /// A pack's flag trees that are one comparison (written as bits) and one that is not
    /// (written as booleans, then bits) give the flags of evaluating each tree alone: over
    /// a `DIST` whose segments end on and off word and chunk boundaries (pieces cut at
    /// segment ends), against a constant and an operand, `INT` and `FLOAT`, one and two
    /// threads, lengths that end inside a word and on one.
    #[test]
    fn comparison_flag_trees_write_the_flags_of_their_trees() {
        let mut next = super::super::test_rng(3);
        let trees = [
            "(INT INT) (< INT $0 $1)",
            "(INT INT) (= INT $0 $1)",
            "(INT INT) (>= INT (CONST INT 3) $0)",
            "(INT INT) (> INT (+ INT $0 (CONST INT 1)) $1)",
            "(FLOAT FLOAT) (< FLOAT $0 $1)",
            "(FLOAT FLOAT) (!= FLOAT $1 $0)",
        ];
        let layouts: Vec<Vec<i64>> = vec![
            vec![300, 5, 1000, 64, 0, 700, 257, 3000, 1],
            (0..3000).map(|_| (next() % 40) as i64).collect(),
            vec![BLOCK as i64 + 70, 999, 64],
        ];
        for lens in layouts {
            let n: usize = lens.iter().map(|&l| l as usize).sum();
            let m = lens.len();
            let ints: Vec<i64> = (0..n).map(|_| (next() % 9) as i64).collect();
            let pivots: Vec<i64> = (0..m).map(|_| (next() % 9) as i64).collect();
            let floats: Vec<f64> = ints.iter().map(|&v| if v == 8 { f64::NAN } else { v as f64 }).collect();
            let fpivots: Vec<f64> = pivots.iter().map(|&v| v as f64 * 0.5).collect();
            for threads in [1, 2] {
                let par = Par::new(threads);
                let seg = Seg::new(&par, std::sync::Arc::new(Data::Int(lens.clone()))).unwrap();
                for (ty, group) in [(0, &trees[..4]), (1, &trees[4..])] {
                    let args = if ty == 0 {
                        vec![Operand::Elems(Slice::Int(&ints)), Operand::Dist(Slice::Int(&pivots), &seg)]
                    } else {
                        vec![Operand::Elems(Slice::Float(&floats)), Operand::Dist(Slice::Float(&fpivots), &seg)]
                    };
                    let progs: Vec<Prog> = group.iter().map(|t| Prog::compile(&SuperOp::parse(t).expect("parses")).expect("compiles")).collect();
                    let direct = progs.iter().filter(|p| p.comparison(&args).is_some()).count();
                    assert_eq!(direct, group.len() - usize::from(ty == 0), "which trees are comparisons");
                    assert_flags_are_the_trees(&par, &progs, &args, n, &format!("{threads} threads"));
                }
            }
        }
    }

    /// A pack's `=` flags made from its `<` and `>` flags of the same two `INT` operands
    /// ([`derived_flags`]: quicksort's three filters), also where those compare them the
    /// other way round, are the flags of evaluating `=` alone, over lengths that end
    /// inside a word and past one block, on one and two threads; `=` without both, and
    /// `FLOAT` `=` (NaN is neither less, greater nor equal), are evaluated.
    #[test]
    fn equal_flags_follow_from_less_and_greater() {
        let mut next = super::super::test_rng(5);
        let groups: [(&[&str], &[Option<(usize, usize)>]); 4] = [
            (&["(INT INT) (< INT $0 $1)", "(INT INT) (= INT $0 $1)", "(INT INT) (> INT $0 $1)"], &[None, Some((0, 2)), None]),
            (&["(INT INT) (= INT $0 $1)", "(INT INT) (< INT $1 $0)", "(INT INT) (> INT $1 $0)"], &[Some((2, 1)), None, None]),
            (&["(INT INT) (= INT $0 $1)", "(INT INT) (< INT $0 $1)"], &[None, None]),
            (&["(FLOAT FLOAT) (< FLOAT $0 $1)", "(FLOAT FLOAT) (= FLOAT $0 $1)", "(FLOAT FLOAT) (> FLOAT $0 $1)"], &[None, None, None]),
        ];
        for n in [0, 1, 63, 64, 65, 1000, BLOCK + 77, 3 * BLOCK] {
            let lens = vec![n as i64 / 3, n as i64 - n as i64 / 3];
            let ints: Vec<i64> = (0..n).map(|_| (next() % 5) as i64).collect();
            let pivots: Vec<i64> = (0..2).map(|_| (next() % 5) as i64).collect();
            let floats: Vec<f64> = ints.iter().map(|&v| if v == 4 { f64::NAN } else { v as f64 }).collect();
            let fpivots: Vec<f64> = vec![2.0, f64::NAN];
            for threads in [1, 2] {
                let par = Par::new(threads);
                let seg = Seg::new(&par, std::sync::Arc::new(Data::Int(lens.clone()))).unwrap();
                for (trees, derived) in &groups {
                    let args = if trees[0].starts_with("(INT") {
                        vec![Operand::Elems(Slice::Int(&ints)), Operand::Dist(Slice::Int(&pivots), &seg)]
                    } else {
                        vec![Operand::Elems(Slice::Float(&floats)), Operand::Dist(Slice::Float(&fpivots), &seg)]
                    };
                    let progs: Vec<Prog> = trees.iter().map(|t| Prog::compile(&SuperOp::parse(t).expect("parses")).expect("compiles")).collect();
                    let cmps: Vec<_> = progs.iter().map(|p| p.comparison(&args)).collect();
                    assert_eq!(derived_flags(&cmps, &args), *derived, "{trees:?}");
                    assert_flags_are_the_trees(&par, &progs, &args, n, &format!("{threads} threads, {trees:?}"));
                }
            }
        }
    }

    /// The work that decides whether a superoperator runs on several threads grows with
    /// its steps: one of many steps splits from fewer elements than one of a few.
    #[test]
    fn many_steps_weigh_more_than_one() {
        let one = Prog::compile(&SuperOp::parse("(FLOAT FLOAT) (* FLOAT $0 $1)").expect("parses")).expect("compiles");
        assert_eq!(one.work(50_000), 50_000);
        let heavy = "(FLOAT FLOAT) (+ FLOAT (SQRT FLOAT (EXP FLOAT $0)) (* FLOAT (LOG FLOAT (SQRT FLOAT $1)) (SIN FLOAT (COS FLOAT (EXP FLOAT (* FLOAT $0 $1))))))";
        let many = Prog::compile(&SuperOp::parse(heavy).expect("parses")).expect("compiles");
        assert!(many.code.len() >= 2 * STEPS_PER_UNIT, "{many:?}");
        assert!(many.work(50_000) >= 100_000, "{}", many.work(50_000));
        assert!(many.work(80_000) >= super::super::par::THREADS_FROM, "80,000 elements of it run on several threads");
    }

    /// A division by a normal power of two becomes a multiplication by its reciprocal,
    /// bit-identical to the division for every value (zeros, subnormal and overflowing
    /// results, infinities, NaN); other divisors, subnormal ones and `INT` divisions stay
    /// divisions.
    #[test]
    fn divisions_by_powers_of_two_are_exact_multiplications() {
        let steps = |t: &str| Prog::compile(&SuperOp::parse(t).expect("parses")).expect("compiles").code;
        for c in ["2.0", "-0.5", "1.0", "4.49423283715579e307", "2.2250738585072014e-308", "8.98846567431158e307"] {
            let code = steps(&format!("(FLOAT) (/ FLOAT $0 (CONST FLOAT {c}))"));
            assert!(matches!(code[..], [Ins { step: Step::Bin(BinOp::Mul, Src::Arg(0), Src::Const(_)), .. }]), "/ {c}: {code:?}");
        }
        for c in ["3.0", "0.1", "0.0", "5.0e-324", "1.0e309"] {
            let code = steps(&format!("(FLOAT) (/ FLOAT $0 (CONST FLOAT {c}))"));
            assert!(matches!(code[..], [Ins { step: Step::Bin(BinOp::Div, ..), .. }]), "/ {c}: {code:?}");
        }
        let code = steps("(INT) (/ INT $0 (CONST INT 2))");
        assert!(matches!(code[..], [Ins { step: Step::Bin(BinOp::Div, ..), .. }]), "{code:?}");
        // The values: against the division itself, over every kind of float.
        let mut next = super::super::test_rng(5);
        let mut xs: Vec<f64> = vec![0.0, -0.0, 1.0, -3.5, f64::MAX, -f64::MAX, f64::MIN_POSITIVE, 5.0e-324, -5.0e-324, 1.0e-310, f64::INFINITY, f64::NEG_INFINITY, f64::NAN];
        xs.extend((0..20_000).map(|_| f64::from_bits(next() << 32 ^ next())));
        let par = Par::new(1);
        for c in [2.0, 0.5, -4.0, 1.0, 2f64.powi(1023), 2f64.powi(-1022), 2f64.powi(-1000), 1024.0] {
            let p = Prog::compile(&SuperOp::parse(&format!("(FLOAT) (/ FLOAT $0 (CONST FLOAT {}))", crate::float_literal(c))).expect("parses")).expect("compiles");
            // (The constant read back exactly: the program multiplies.)
            assert!(matches!(p.code[..], [Ins { step: Step::Bin(BinOp::Mul, ..), .. }]), "/ {c:e}: {:?}", p.code);
            let Data::Float(got) = eval(&par, &p, &[Slice::Float(&xs)], xs.len()).unwrap() else { panic!("not FLOAT") };
            for (x, g) in xs.iter().zip(&got) {
                let want = x / c;
                assert!(want.to_bits() == g.to_bits() || (want.is_nan() && g.is_nan()), "{x:e} / {c:e}: {want:e}, got {g:e}");
            }
        }
    }

    #[test]
    fn products_fuse_into_the_sums_they_alone_feed() {
        // Horner's rule, with every form of sum: c + x*k, x*k + c, x*k - c, c - x*k.
        let poly = "(- FLOAT (CONST FLOAT 1.0) (* FLOAT $0 (- FLOAT (* FLOAT $0 (+ FLOAT (CONST FLOAT -0.35) (* FLOAT $0 (+ FLOAT (* FLOAT $0 $1) (CONST FLOAT 1.75))))) $1)))";
        let op = SuperOp::parse(&format!("(FLOAT FLOAT) {poly}")).expect("parses");
        let p = Prog::compile(&op).expect("compiles");
        assert_eq!(p.code.len(), 4, "four multiply-adds: {p:?}");
        assert!(p.code.iter().all(|i| matches!(i.step, Step::MulAdd(..))), "{p:?}");
        // A product read twice stays a step of its own.
        let twice = SuperOp::parse("(FLOAT FLOAT) (+ FLOAT (* FLOAT $0 $1) (* FLOAT (* FLOAT $0 $1) $1))").expect("parses");
        let q = Prog::compile(&twice).expect("compiles");
        assert_eq!(q.code.len(), 2, "$0*$1 once, then ($0*$1)*$1 + $0*$1 fused: {q:?}");
        let n = 3 * CHUNK + 5;
        let xs: Vec<f64> = (0..n).map(|i| (i as f64 - 1500.0) / 700.0).collect();
        let ys: Vec<f64> = xs.iter().map(|x| 0.3 - x / 3.0).collect();
        let want: Vec<f64> = xs.iter().zip(&ys).map(|(&x, &y)| 1.0 - x * (x * (-0.35 + x * (x * y + 1.75)) - y)).collect();
        for threads in [1, 2] {
            let out = eval(&Par::new(threads), &p, &[Slice::Float(&xs), Slice::Float(&ys)], n).expect("runs");
            let Data::Float(got) = out else { panic!("not FLOAT") };
            assert!(got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()), "bit-identical to separate * and +");
            let out = eval(&Par::new(threads), &q, &[Slice::Float(&xs), Slice::Float(&ys)], n).expect("runs");
            let want: Vec<f64> = xs.iter().zip(&ys).map(|(&x, &y)| x * y + x * y * y).collect();
            assert_eq!(out, Data::Float(want));
        }
        // INT wraps as `*` and `+` do.
        let op = SuperOp::parse("(INT INT) (- INT (* INT $0 $1) (CONST INT 7))").expect("parses");
        let p = Prog::compile(&op).expect("compiles");
        assert_eq!(p.code.len(), 1, "{p:?}");
        let a: Vec<i64> = (0..n as i64).map(|i| i.wrapping_mul(0x1234_5678_9abc)).collect();
        let b: Vec<i64> = (0..n as i64).map(|i| i64::MAX - i).collect();
        let out = eval(&Par::new(2), &p, &[Slice::Int(&a), Slice::Int(&b)], n).expect("runs");
        assert_eq!(out, Data::Int(a.iter().zip(&b).map(|(x, y)| x.wrapping_mul(*y).wrapping_sub(7)).collect()));
    }

    #[test]
    fn identical_subexpressions_share_a_register() {
        // t = exp($0) * $1 appears three times; with its constant 2.0 once each.
        let t = "(* FLOAT (EXP FLOAT $0) $1)";
        let op = SuperOp::parse(&format!("(FLOAT FLOAT) (- FLOAT (* FLOAT {t} (CONST FLOAT 2.0)) (* FLOAT {t} {t}))")).expect("parses");
        let p = Prog::compile(&op).expect("compiles");
        // EXP, *, t * t, then t * 2.0 - (t * t) as one multiply-add: four steps, not
        // nine (constants are operands).
        assert_eq!(p.code.len(), 4, "{p:?}");
        // Registers are reused once read for the last time: exp($0), then t and t * t.
        assert_eq!(p.registers, 2, "{p:?}");
        // 0.0 and -0.0 are different constants: two products, one of them fused.
        let op = SuperOp::parse("(FLOAT) (+ FLOAT (* FLOAT $0 (CONST FLOAT 0.0)) (* FLOAT $0 (CONST FLOAT -0.0)))").expect("parses");
        assert_eq!(Prog::compile(&op).expect("compiles").code.len(), 2);
        let xs: Vec<f64> = (0..3 * CHUNK + 5).map(|i| i as f64 / 1000.0).collect();
        let ys: Vec<f64> = xs.iter().map(|x| 1.5 - x).collect();
        let op = SuperOp::parse(&format!("(FLOAT FLOAT) (- FLOAT (* FLOAT {t} (CONST FLOAT 2.0)) (* FLOAT {t} {t}))")).expect("parses");
        let p = Prog::compile(&op).expect("compiles");
        let out = eval(&Par::new(1), &p, &[Slice::Float(&xs), Slice::Float(&ys)], xs.len()).expect("runs");
        let want: Vec<f64> = xs.iter().zip(&ys).map(|(x, y)| { let t = super::super::math::exp(*x) * y; t * 2.0 - t * t }).collect();
        assert_eq!(out, Data::Float(want));
    }

    #[test]
    fn a_trap_names_the_operation_that_fails_first_in_element_order() {
        // (+ (/ $0 $1) (/ $2 $3)): operation 0 is the first division, 1 the second, 2 the sum.
        let op = SuperOp::parse("(INT INT INT INT) (+ INT (/ INT $0 $1) (/ INT $2 $3))").expect("parses");
        let p = Prog::compile(&op).expect("compiles");
        let n = 2 * BLOCK + 3 * CHUNK + 11;
        let xs: Vec<i64> = (0..n as i64).collect();
        let part_at = |zero1: Option<usize>, zero3: Option<usize>, threads: usize| {
            let mut d1 = vec![1i64; n];
            let mut d3 = vec![1i64; n];
            if let Some(i) = zero1 {
                d1[i] = 0;
            }
            if let Some(i) = zero3 {
                d3[i] = 0;
            }
            let args = [Slice::Int(&xs), Slice::Int(&d1), Slice::Int(&xs), Slice::Int(&d3)];
            let t = eval(&Par::new(threads), &p, &args, n).expect_err("divides by zero");
            assert_eq!(t.kind, crate::trap::TrapKind::DivisionByZero);
            t.part
        };
        for threads in [1, 2, 4] {
            // Each division alone.
            assert_eq!(part_at(Some(7), None, threads), Some(0));
            assert_eq!(part_at(None, Some(BLOCK + 5), threads), Some(1));
            // Both: the one at the earlier element, though the first division's step runs
            // over the whole chunk (and block) before the second's.
            assert_eq!(part_at(Some(CHUNK - 1), Some(3), threads), Some(1));
            assert_eq!(part_at(Some(BLOCK + CHUNK + 9), Some(BLOCK + CHUNK + 2), threads), Some(1));
            assert_eq!(part_at(Some(2 * BLOCK + 1), Some(BLOCK + 2), threads), Some(1));
            assert_eq!(part_at(Some(40), Some(41), threads), Some(0));
            // The same element: the first in evaluation order.
            assert_eq!(part_at(Some(BLOCK + 100), Some(BLOCK + 100), threads), Some(0));
        }
        // Identical operations computed once keep the number of the first of them.
        let op = SuperOp::parse("(INT INT) (* INT (/ INT $0 $1) (/ INT $0 $1))").expect("parses");
        let p = Prog::compile(&op).expect("compiles");
        let (a, b) = (vec![5i64, 6], vec![1i64, 0]);
        let t = eval(&Par::new(1), &p, &[Slice::Int(&a), Slice::Int(&b)], 2).expect_err("divides by zero");
        assert_eq!(t.part, Some(0));
        // A plain element-wise operation names no part.
        let t = eval(&Par::new(1), &Prog::one(Step::Bin(BinOp::Div, Src::Arg(0), Src::Arg(1)), VType::Int), &[Slice::Int(&a), Slice::Int(&b)], 2)
            .expect_err("divides by zero");
        assert_eq!(t.part, None);
    }

    /// Element `i` of `e` computed directly from the tree (the reference).
    fn reference(e: &Expr, args: &[Vec<f64>], i: usize) -> HostScalar {
        use HostScalar::{Bool as B, Float as F, Int as I};
        match e {
            Expr::Arg(k) => F(args[*k][i]),
            Expr::Const(c) => *c,
            Expr::Binary { op, a, b, .. } => match (reference(a, args, i), reference(b, args, i)) {
                (F(x), F(y)) => match op {
                    BinOp::Add => F(x + y),
                    BinOp::Sub => F(x - y),
                    BinOp::Mul => F(x * y),
                    BinOp::Div => F(x / y),
                    BinOp::Max => F(if y > x { y } else { x }),
                    BinOp::Min => F(if y < x { y } else { x }),
                    BinOp::Lt => B(x < y),
                    BinOp::Ge => B(x >= y),
                    BinOp::Eq => B(x == y),
                    _ => unreachable!("{op:?}"),
                },
                (I(x), I(y)) => match op {
                    BinOp::Add => I(x.wrapping_add(y)),
                    BinOp::Mul => I(x.wrapping_mul(y)),
                    BinOp::Xor => I(x ^ y),
                    BinOp::Lt => B(x < y),
                    _ => unreachable!("{op:?}"),
                },
                (B(x), B(y)) => match op {
                    BinOp::And => B(x & y),
                    BinOp::Or => B(x | y),
                    BinOp::Xor => B(x ^ y),
                    _ => unreachable!("{op:?}"),
                },
                other => unreachable!("{other:?}"),
            },
            Expr::Unary { op, a, .. } => match (op, reference(a, args, i)) {
                (UnOp::Sqrt, F(x)) => F(x.sqrt()),
                (UnOp::Exp, F(x)) => F(super::super::math::exp(x)),
                (UnOp::Floor, F(x)) => I(x.floor() as i64),
                (UnOp::IToF, I(x)) => F(x as f64),
                (UnOp::Not, B(x)) => B(!x),
                other => unreachable!("{other:?}"),
            },
            Expr::Select { f, a, b, .. } => match reference(f, args, i) {
                B(true) => reference(a, args, i),
                B(false) => reference(b, args, i),
                other => unreachable!("{other:?}"),
            },
        }
    }

    /// A random tree of type `t` (FLOAT, INT or BOOL) over three FLOAT parameters, in
    /// superoperator text; `shared` is a subtree that appears several times.
    fn tree(r: &mut u64, depth: u32, t: VType, shared: &str) -> String {
        let mut next = |n: u64| {
            *r ^= *r << 13;
            *r ^= *r >> 7;
            *r ^= *r << 17;
            *r % n
        };
        let leaf = depth == 0 || next(4) == 0;
        match t {
            VType::Float if leaf => match next(5) {
                0 => format!("(CONST FLOAT {}.5)", next(7) as i64 - 3),
                4 if !shared.is_empty() => shared.to_string(),
                k => format!("${}", k % 3),
            },
            VType::Float => match next(7) {
                0 => format!("(SQRT FLOAT (MAX FLOAT {} (CONST FLOAT 0.0)))", tree(r, depth - 1, t, shared)),
                1 => format!("(EXP FLOAT (MIN FLOAT {} (CONST FLOAT 2.0)))", tree(r, depth - 1, t, shared)),
                2 => format!("(SELECT FLOAT {} {} {})", tree(r, depth - 1, VType::Bool, shared), tree(r, depth - 1, t, shared), tree(r, depth - 1, t, shared)),
                3 => format!("(I_TO_F INT {})", tree(r, depth - 1, VType::Int, shared)),
                k => {
                    let op = ["+", "-", "*", "/", "MAX", "MIN"][(k as usize + next(6) as usize) % 6];
                    format!("({op} FLOAT {} {})", tree(r, depth - 1, t, shared), tree(r, depth - 1, t, shared))
                }
            },
            VType::Int if leaf => format!("(FLOOR FLOAT {})", tree(r, 0, VType::Float, shared)),
            VType::Int => {
                let op = ["+", "*", "XOR"][next(3) as usize];
                format!("({op} INT {} {})", tree(r, depth - 1, t, shared), tree(r, depth - 1, t, shared))
            }
            VType::Bool if leaf => format!("(< FLOAT {} {})", tree(r, 0, VType::Float, shared), tree(r, 0, VType::Float, shared)),
            VType::Bool => match next(6) {
                0 => format!("(NOT BOOL {})", tree(r, depth - 1, t, shared)),
                1 => format!("(< INT {} {})", tree(r, depth - 1, VType::Int, shared), tree(r, depth - 1, VType::Int, shared)),
                k => {
                    let (op, ty) = [("AND", "BOOL"), ("OR", "BOOL"), ("XOR", "BOOL"), (">=", "FLOAT")][k as usize - 2];
                    let st = if ty == "BOOL" { t } else { VType::Float };
                    format!("({op} {ty} {} {})", tree(r, depth - 1, st, shared), tree(r, depth - 1, st, shared))
                }
            },
        }
    }

    /// A superoperator with several results gives each tree's values, as evaluating each
    /// alone does, in one pass: random trees with a shared subtree, the body a parameter
    /// or equal to another result, a guard beside them; one thread and two.
    #[test]
    fn several_results_are_each_trees_values() {
        let n = 3 * CHUNK + 7;
        let mut r = 0x2545_F491_4F6C_DD1Du64;
        let args: Vec<Vec<f64>> = (0..3).map(|k| (0..n).map(|i| ((i * 6007 + k * 7919) % 1999) as f64 / 300.0 - 3.0).collect()).collect();
        let slices: Vec<Operand> = args.iter().map(|a| Operand::Elems(Slice::Float(a))).collect();
        let fixed = [
            "(FLOAT FLOAT FLOAT) $0 (* FLOAT (SQRT FLOAT $1) $2) (CONST FLOAT 1.5)".to_string(),
            "(FLOAT FLOAT FLOAT) (+ FLOAT $0 $1) (+ FLOAT $0 $1) (< FLOAT (+ FLOAT $0 $1) $2)".to_string(),
            "(FLOAT FLOAT FLOAT) (* FLOAT (+ FLOAT $0 $1) $2) (+ FLOAT $0 $1)".to_string(),
        ];
        let random = (0..150).map(|case| {
            let shared = tree(&mut r, 2, VType::Float, "");
            let trees: Vec<String> = (0..2 + case % 2).map(|k| tree(&mut r, 5, [VType::Float, VType::Int, VType::Bool][(case + k) % 3], &shared)).collect();
            format!("(FLOAT FLOAT FLOAT) {}", trees.join(" "))
        });
        for text in fixed.into_iter().chain(random) {
            let op = SuperOp::parse(&text).unwrap_or_else(|e| panic!("{text}: {e:?}"));
            if op.check().is_err() {
                // (A random tree with an integer `/` or `%`: several results may not trap.)
                continue;
            }
            let p = Prog::compile(&op).expect("compiles");
            for threads in [1, 2] {
                let (got, any) = eval_many(&Par::new(threads), &p, &slices, n).expect("runs");
                assert!(!any, "no guard");
                assert_eq!(got.len(), 1 + op.more.len());
                for (k, g) in got.iter().enumerate() {
                    let e = if k == 0 { &op.body } else { &op.more[k - 1] };
                    for i in 0..n {
                        let same = match (g, reference(e, &args, i)) {
                            (Data::Float(g), HostScalar::Float(w)) => g[i].to_bits() == w.to_bits(),
                            (Data::Int(g), HostScalar::Int(w)) => g[i] == w,
                            (Data::Bool(g), HostScalar::Bool(w)) => g[i] == w,
                            _ => false,
                        };
                        assert!(same, "result {k}, element {i}: {text}\n{p:?}");
                    }
                }
            }
        }
        // With a guard: the values, and whether the guard's tree holds anywhere.
        for (limit, holds) in [("4.0", false), ("2.0", true)] {
            let text = format!("(FLOAT FLOAT FLOAT SEGDES) (* FLOAT (SQRT FLOAT $0) $1) (* FLOAT (SQRT FLOAT $0) $2) (OR_REDUCE BOOL (> FLOAT $0 (CONST FLOAT {limit})) $3)");
            let op = SuperOp::parse(&text).expect("parses");
            let p = Prog::compile(&op).expect("compiles");
            let mut with_seg = slices.clone();
            with_seg.push(Operand::Elems(Slice::Int(&[])));
            let (got, any) = eval_many(&Par::new(2), &p, &with_seg, n).expect("runs");
            assert_eq!(any, holds, "{text}");
            let bits = |d: &Data| match d {
                Data::Float(v) => v.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                _ => Vec::new(),
            };
            let want = |k: usize| (0..n).map(|i| (args[0][i].sqrt() * args[k][i]).to_bits()).collect::<Vec<_>>();
            assert_eq!(got.len(), 2);
            assert_eq!(bits(&got[0]), want(1));
            assert_eq!(bits(&got[1]), want(2));
        }
    }

    #[test]
    fn random_programs_match_the_tree_element_by_element() {
        let n = 3 * CHUNK + 7;
        let mut r = 0x9E37_79B9_7F4A_7C15u64;
        let args: Vec<Vec<f64>> = (0..3).map(|k| (0..n).map(|i| ((i * 7919 + k * 104_729) % 2001) as f64 / 250.0 - 4.0).collect()).collect();
        let slices: Vec<Slice> = args.iter().map(|a| Slice::Float(a)).collect();
        for case in 0..400 {
            // Half the cases on the kernels' baseline builds, half on the AVX2 ones
            // where the processor has it.
            super::super::elementwise::NARROW.store(case % 4 >= 2, std::sync::atomic::Ordering::Relaxed);
            let shared = if case % 2 == 0 { tree(&mut r, 2, VType::Float, "") } else { String::new() };
            let t = [VType::Float, VType::Int, VType::Bool][case % 3];
            let body = tree(&mut r, 6, t, &shared);
            let op = SuperOp::parse(&format!("(FLOAT FLOAT FLOAT) {body}")).unwrap_or_else(|e| panic!("{body}: {e:?}"));
            let p = Prog::compile(&op).expect("compiles");
            for threads in [1, 2] {
                let got = eval(&Par::new(threads), &p, &slices, n).expect("runs");
                for i in 0..n {
                    let want = reference(&op.body, &args, i);
                    let same = match (&got, want) {
                        (Data::Float(g), HostScalar::Float(w)) => g[i].to_bits() == w.to_bits(),
                        (Data::Int(g), HostScalar::Int(w)) => g[i] == w,
                        (Data::Bool(g), HostScalar::Bool(w)) => g[i] == w,
                        _ => false,
                    };
                    assert!(same, "case {case}, element {i}: {body}\n{p:?}");
                }
            }
        }
        super::super::elementwise::NARROW.store(false, std::sync::atomic::Ordering::Relaxed);
    }
}
