//! Superoperators (`FUSED`) on the CPU: the expression tree is compiled into steps over
//! registers, then evaluated in [`CHUNK`]-element chunks (no full-length intermediates),
//! in parallel [`BLOCK`]-element blocks. Long element-wise operations run through the same
//! evaluator as one-step programs. The result is written into fresh, uninitialised memory
//! or over an operand whose only handle the caller gave up.

use super::data::{Data, Elem, Slice};
use super::elementwise::{binary_into, select_into, unary_into};
use super::par::{cut, split_mut, Chunk, Par, BLOCK};
use super::scan::{block_offsets, fold_lanes, scan_in_place};
use super::seg::Seg;
use super::mem::build;
use crate::cvl::{BinOp, HostScalar, UnOp, VType};
use crate::fused::{Expr, SuperOp};
use crate::trap::Trap;
use std::collections::HashMap;
use std::mem::MaybeUninit;

/// Elements per chunk when evaluating a superoperator (a divisor of [`BLOCK`]).
pub const CHUNK: usize = 4096;

/// One operand of a compiled step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Src {
    Arg(usize),
    Reg(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Step {
    Bin(BinOp, Src, Src),
    Un(UnOp, Src),
    Sel(Src, Src, Src),
}

/// A superoperator flattened into steps; register `r` holds the result of step `r`, or
/// the broadcast constant `consts[r]` (whose step is `None`).
///
/// Identical subexpressions share one register (a superoperator whose tree repeats a
/// shared value, as the optimiser writes one that reads a value several times, computes
/// it once per element).
#[derive(Debug, Clone)]
pub(super) struct Prog {
    steps: Vec<Option<Step>>,
    consts: Vec<Option<HostScalar>>,
    root: Src,
    rt: VType,
}

/// A step, named by its operator and its operands' registers (operand types follow from
/// the operands).
fn keyed(step: Step) -> (Key, Option<Step>, Option<HostScalar>) {
    (Key::Step(step), Some(step), None)
}

/// What identifies a register's value while compiling: its step over earlier registers,
/// or its constant (by bits, so that `-0.0` and `0.0` stay apart).
#[derive(PartialEq, Eq, Hash)]
enum Key {
    Step(Step),
    Const(u8, u64),
}

impl Prog {
    /// Compiles a checked superoperator.
    pub(super) fn compile(op: &SuperOp) -> Result<Prog, Trap> {
        let rt = op.result_type().map_err(Trap::ty)?;
        let mut p = Prog { steps: Vec::new(), consts: Vec::new(), root: Src::Arg(0), rt };
        p.root = p.add(&op.body, &mut HashMap::new());
        Ok(p)
    }
    /// A program of one step over `$0` (and `$1`, `$2`) with result type `rt`.
    pub(super) fn one(step: Step, rt: VType) -> Prog {
        Prog { steps: vec![Some(step)], consts: vec![None], root: Src::Reg(0), rt }
    }
    pub(super) fn result_type(&self) -> VType {
        self.rt
    }
    fn add(&mut self, e: &Expr, seen: &mut HashMap<Key, usize>) -> Src {
        let (key, step, konst) = match e {
            Expr::Arg(i) => return Src::Arg(*i),
            Expr::Const(c) => {
                let key = match *c {
                    HostScalar::Int(x) => Key::Const(0, x as u64),
                    HostScalar::Float(x) => Key::Const(1, x.to_bits()),
                    HostScalar::Bool(x) => Key::Const(2, x as u64),
                };
                (key, None, Some(*c))
            }
            Expr::Binary { op, a, b, .. } => keyed(Step::Bin(*op, self.add(a, seen), self.add(b, seen))),
            Expr::Unary { op, a, .. } => keyed(Step::Un(*op, self.add(a, seen))),
            Expr::Select { f, a, b, .. } => keyed(Step::Sel(self.add(f, seen), self.add(a, seen), self.add(b, seen))),
        };
        if let Some(&r) = seen.get(&key) {
            return Src::Reg(r);
        }
        self.steps.push(step);
        self.consts.push(konst);
        let r = self.steps.len() - 1;
        seen.insert(key, r);
        Src::Reg(r)
    }
    /// Fresh registers (constants broadcast over one chunk).
    fn registers(&self) -> Vec<Data> {
        self.consts
            .iter()
            .map(|c| match *c {
                Some(HostScalar::Int(x)) => Data::Int(vec![x; CHUNK]),
                Some(HostScalar::Float(x)) => Data::Float(vec![x; CHUNK]),
                Some(HostScalar::Bool(x)) => Data::Bool(vec![x; CHUNK]),
                None => Data::none(),
            })
            .collect()
    }
    /// True when an element can make the program trap (integer `/` and `%` by zero): it
    /// must then not write over an operand, which has to survive a trap unchanged.
    pub(super) fn may_trap(&self) -> bool {
        self.steps.iter().any(|s| matches!(s, Some(Step::Bin(BinOp::Div | BinOp::Mod, ..))))
    }
}

fn operand<'a>(src: Src, args: &[Slice<'a>], regs: &'a [Data], n: usize) -> Slice<'a> {
    match src {
        Src::Arg(i) => args[i],
        Src::Reg(r) => {
            let s = regs[r].slice();
            if s.len() == n {
                s
            } else {
                s.range(0, n)
            }
        }
    }
}

/// Evaluates every step over one chunk of `n` elements (`args` are that chunk's slices)
/// into the registers; gives the root's elements.
fn run_chunk<'a>(p: &Prog, args: &[Slice<'a>], regs: &'a mut [Data], n: usize) -> Result<Slice<'a>, Trap> {
    for r in 0..p.steps.len() {
        let Some(step) = p.steps[r] else { continue };
        let mut dst = std::mem::replace(&mut regs[r], Data::none());
        let res = {
            let regs = &*regs;
            match step {
                Step::Bin(op, a, b) => binary_into(op, operand(a, args, regs, n), operand(b, args, regs, n), &mut dst),
                Step::Un(op, a) => unary_into(op, operand(a, args, regs, n), &mut dst),
                Step::Sel(f, a, b) => {
                    select_into(operand(f, args, regs, n), operand(a, args, regs, n), operand(b, args, regs, n), &mut dst)
                }
            }
        };
        regs[r] = dst;
        res?;
    }
    let regs: &'a [Data] = regs;
    Ok(operand(p.root, args, regs, n))
}

/// Evaluates `p` over `len` positions into a fresh vector. `args[i]` is operand `$i`
/// (length `len`; a `SEGDES` operand is an empty stand-in, never read).
pub(super) fn eval(par: &Par, p: &Prog, args: &[Slice], len: usize) -> Result<Data, Trap> {
    Ok(match p.rt {
        VType::Int => Data::Int(build(len, |out| fill::<i64>(par, p, args, out, None))?),
        VType::Float => Data::Float(build(len, |out| fill::<f64>(par, p, args, out, None))?),
        VType::Bool => Data::Bool(build(len, |out| fill::<bool>(par, p, args, out, None))?),
    })
}

/// Evaluates `p` writing the result over `out`, which is operand `$over` (of the result
/// type; `args[over]` is not read). The caller makes sure `p` cannot trap
/// ([`Prog::may_trap`]).
pub(super) fn eval_over(par: &Par, p: &Prog, args: &[Slice], out: &mut Data, over: usize) -> Result<(), Trap> {
    fn view<T>(s: &mut [T]) -> &mut [MaybeUninit<T>] {
        // SAFETY: `MaybeUninit<T>` has `T`'s layout, and the evaluator only ever writes
        // initialised values through this view, so `s` stays initialised.
        unsafe { &mut *(s as *mut [T] as *mut [MaybeUninit<T>]) }
    }
    match out {
        Data::Int(v) => fill::<i64>(par, p, args, view(v), Some(over)),
        Data::Float(v) => fill::<f64>(par, p, args, view(v), Some(over)),
        Data::Bool(v) => fill::<bool>(par, p, args, view(v), Some(over)),
    }
}

fn fill<T: Elem>(par: &Par, p: &Prog, args: &[Slice], out: &mut [MaybeUninit<T>], over: Option<usize>) -> Result<(), Trap> {
    let len = out.len();
    let blocks: Vec<(usize, &mut [MaybeUninit<T>])> =
        split_mut(out, (0..len.div_ceil(BLOCK)).map(|b| (len - b * BLOCK).min(BLOCK))).into_iter().enumerate().map(|(b, s)| (b * BLOCK, s)).collect();
    let results = par.map_init(len, blocks, || p.registers(), |regs, (lo, blk)| eval_range(p, args, lo, blk, regs, over));
    results.into_iter().collect()
}

/// Evaluates `p` at positions `lo..lo + out.len()` into `out`, [`CHUNK`] elements at a
/// time. With `over = Some(a)`, `out` is initialised and is operand `$a` (read before it
/// is written).
fn eval_range<T: Elem>(
    p: &Prog,
    args: &[Slice],
    lo: usize,
    out: &mut [MaybeUninit<T>],
    regs: &mut [Data],
    over: Option<usize>,
) -> Result<(), Trap> {
    if crate::interrupt::skip_work() {
        return Err(Trap::new(crate::trap::TrapKind::Interrupted));
    }
    let mut stage: Vec<T> = Vec::new();
    let mut c = 0;
    while c < out.len() {
        let hi = (c + CHUNK).min(out.len());
        let (glo, ghi) = (lo + c, lo + hi);
        if over.is_some() {
            // SAFETY: in this mode `out` is initialised (see `eval_over`).
            let init: &[T] = unsafe { &*(&out[c..hi] as *const [MaybeUninit<T>] as *const [T]) };
            stage.clear();
            stage.extend_from_slice(init);
        }
        let mut chunk_args: Vec<Slice> = args.iter().map(|s| if s.len() >= ghi { s.range(glo, ghi) } else { *s }).collect();
        if let Some(a) = over {
            chunk_args[a] = T::slice_of(&stage);
        }
        let root = run_chunk(p, &chunk_args, regs, hi - c)?;
        match T::of_slice(root) {
            Some(r) => super::mem::write_all(&mut out[c..hi], r),
            None => return Err(Trap::ty(format!("superoperator produced {}", root.vtype().name()))),
        }
        c = hi;
    }
    Ok(())
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

/// The segmented reduction over `s` of `p`'s values, without storing them: each chunk of
/// [`cut`](super::par::cut) is evaluated into a block-sized scratch buffer and folded
/// there. The folds are those of [`reduce_t`](super::scan::reduce_t) (a segment of at most
/// [`BLOCK`] elements left to right, a longer one per block in lanes, blocks in order), so
/// the result is bit-identical to evaluating and then reducing, on any number of threads.
pub(super) fn reduce<T: Elem>(
    par: &Par,
    p: &Prog,
    args: &[Slice],
    s: &Seg,
    id: T,
    lanes: bool,
    f: impl Fn(T, T) -> T + Sync + Send,
) -> Result<Vec<T>, Trap> {
    let init = || (p.registers(), Vec::<T>::new());
    let parts = par.map_init(s.total() + s.m(), cut(s, true), init, |(regs, scratch), c| -> Result<Part<T>, Trap> {
        let n = c.e1 - c.e0;
        scratch.clear();
        scratch.reserve(n);
        eval_range(p, args, c.e0, &mut scratch.spare_capacity_mut()[..n], regs, None)?;
        // SAFETY: `eval_range` wrote all `n` elements.
        unsafe { scratch.set_len(n) };
        if c.s1 == c.s0 + 1 && s.len(c.s0) > BLOCK {
            return Ok(Part::Piece(c.s0, fold_lanes(scratch, lanes, &f)));
        }
        Ok(Part::Whole(
            (c.s0..c.s1)
                .map(|k| {
                    let st = s.start(k) - c.e0;
                    scratch[st..st + s.len(k)].iter().copied().reduce(&f).unwrap_or(id)
                })
                .collect(),
        ))
    });
    let mut out = Vec::with_capacity(s.m());
    // The segment whose pieces are being combined, and their fold so far.
    let mut open: Option<(usize, Option<T>)> = None;
    for part in parts {
        match part? {
            Part::Piece(k, x) => match &mut open {
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
                    open = Some((k, x));
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
    if let Some((_, acc)) = open {
        out.push(acc.unwrap_or(id));
    }
    if out.len() != s.m() {
        return Err(Trap::ty(format!("fused reduction made {} values for {} segments", out.len(), s.m())));
    }
    Ok(out)
}

/// The exclusive segmented scan over `s` of `p`'s values: each chunk is evaluated into
/// the result and, for whole segments, scanned there while it is in cache; the blocks of
/// a long segment are scanned in a second pass from the combined totals of the blocks
/// before them. Bit-identical to evaluating and then scanning ([`scan_t`](super::scan::scan_t)).
pub(super) fn scan<T: Elem>(
    par: &Par,
    p: &Prog,
    args: &[Slice],
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
        let firsts = par.map_init(n + s.m(), items, || p.registers(), |regs, (c, part)| -> Result<(Chunk, Option<T>, &mut [T]), Trap> {
            eval_range(p, args, c.e0, part, regs, None)?;
            let vals = assume_init(part);
            if long(&c) {
                let t = fold_lanes(vals, lanes, &f);
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

    #[test]
    fn identical_subexpressions_share_a_register() {
        // t = exp($0) * $1 appears three times; with its constant 2.0 once each.
        let t = "(* FLOAT (EXP FLOAT $0) $1)";
        let op = SuperOp::parse(&format!("(FLOAT FLOAT) (- FLOAT (* FLOAT {t} (CONST FLOAT 2.0)) (* FLOAT {t} {t}))")).expect("parses");
        let p = Prog::compile(&op).expect("compiles");
        // EXP, *, 2.0, * by 2.0, t * t, - : six registers, not twelve.
        assert_eq!(p.steps.len(), 6, "{p:?}");
        // 0.0 and -0.0 are different constants.
        let op = SuperOp::parse("(FLOAT) (+ FLOAT (* FLOAT $0 (CONST FLOAT 0.0)) (* FLOAT $0 (CONST FLOAT -0.0)))").expect("parses");
        assert_eq!(Prog::compile(&op).expect("compiles").steps.len(), 5);
        let xs: Vec<f64> = (0..3 * CHUNK + 5).map(|i| i as f64 / 1000.0).collect();
        let ys: Vec<f64> = xs.iter().map(|x| 1.5 - x).collect();
        let op = SuperOp::parse(&format!("(FLOAT FLOAT) (- FLOAT (* FLOAT {t} (CONST FLOAT 2.0)) (* FLOAT {t} {t}))")).expect("parses");
        let p = Prog::compile(&op).expect("compiles");
        let out = eval(&Par::new(1), &p, &[Slice::Float(&xs), Slice::Float(&ys)], xs.len()).expect("runs");
        let want: Vec<f64> = xs.iter().zip(&ys).map(|(x, y)| { let t = x.exp() * y; t * 2.0 - t * t }).collect();
        assert_eq!(out, Data::Float(want));
    }
}
