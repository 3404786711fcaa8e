//! The VCODE interpreter: a stack machine over whole vectors, generic over [`Cvl`].
//!
//! The program is decoded once into a flat array of instructions with every `CALL`,
//! `IF` and `ELSE` target resolved to an index and every constant pre-loaded into the
//! vector library; the run loop does no string look-ups. Stack slots hold reference
//! counted handles, so a vector is freed when its last slot goes. With a library that
//! computes on the host ([`Cvl::host_scalars`]: the CPU's), one-element constants,
//! `LENGTH`s, the `LENGTHS` of one segment and the results of element-wise work (superoperators included) on
//! one-element operands are held as host values instead: serial code runs on those
//! without a vector made per instruction, and an instruction that works on vectors gets
//! its operands made vectors first ([`Machine::vectors`]). Each instruction with
//! a fixed stack effect has its operands checked against the instruction table (count,
//! vector or segdes, element type) before it runs; every failure is a [`Trap`] that
//! names the function and instruction.

use crate::calls::CallStack;
use crate::cvl::{Cvl, HostScalar, HostVector, OpStats};
use crate::io::{write_text, Files};
use crate::ir::{Const, Imm, Program};
use crate::op::{Effect, Exec, Pat, SlotTy, Ty};
use crate::trap::{Trap, TrapKind, TrapSite};
use crate::resident::Residents;
use crate::{HostValue, RunOptions, RunOutcome, RunReport};
use smallvec::{smallvec, SmallVec};
use std::io::Write;
use std::time::Instant;

/// One stack slot.
pub(crate) enum Value<C: Cvl> {
    Vec(C::Vector),
    /// A one-element data vector held on the host: the result of element-wise work on
    /// one-element operands when the library computes it there ([`Cvl::host_scalars`]).
    /// Serial code runs on these; an instruction that needs the vector gets it made
    /// ([`Machine::vectors`]).
    Scalar(HostScalar),
    Seg(C::Segdes),
    Pair(Box<(Value<C>, Value<C>)>),
}

impl<C: Cvl> Clone for Value<C> {
    fn clone(&self) -> Self {
        match self {
            Value::Vec(v) => Value::Vec(v.clone()),
            Value::Scalar(x) => Value::Scalar(*x),
            Value::Seg(s) => Value::Seg(s.clone()),
            Value::Pair(p) => Value::Pair(p.clone()),
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum Arg {
    None,
    Counts(usize, usize),
    Target(usize),
    /// A `CALL` in tail position: its target, entered without a return address.
    Tail(usize),
    Const(usize),
    Fused(usize),
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Decoded {
    pub(crate) exec: Exec,
    ty: Option<Ty>,
    pub(crate) ins: &'static [Pat],
    pub(crate) arg: Arg,
    /// A `WRITE` that can only be followed by `EXIT` (see [`mark_held_writes`]).
    held: bool,
    /// Whether `--stats` counts it ([`counted`]).
    counted: bool,
}

/// A program decoded for execution.
pub(crate) struct Code {
    pub(crate) code: Vec<Decoded>,
    /// `(function, instruction)` of every decoded instruction.
    pub(crate) sites: Vec<(usize, usize)>,
    pub(crate) entry: usize,
}

fn link_error(msg: String) -> Trap {
    Trap::new(TrapKind::Unsupported(format!("cannot link the program: {msg}")))
}

pub(crate) fn decode(p: &Program) -> Result<Code, Trap> {
    let mut starts = Vec::with_capacity(p.functions.len());
    let mut n = 0;
    for f in &p.functions {
        starts.push(n);
        n += f.body.len();
    }
    let mut code = Vec::with_capacity(n);
    let mut sites = Vec::with_capacity(n);
    let mut consts = 0;
    let index = p.function_index();
    for (fi, f) in p.functions.iter().enumerate() {
        let mut open: Vec<usize> = Vec::new();
        for (ii, ins) in f.body.iter().enumerate() {
            let info = ins.op.info();
            let pc = code.len();
            let arg = match (&ins.imm, info.exec) {
                (Imm::Counts(a, b), _) => Arg::Counts(*a as usize, *b as usize),
                (Imm::Label(l), _) => match index.get(l.as_str()) {
                    Some(&t) => Arg::Target(starts[t]),
                    None => return Err(link_error(format!("call to undefined function `{l}`"))),
                },
                (Imm::Const(_), _) => {
                    consts += 1;
                    Arg::Const(consts - 1)
                }
                (Imm::Index(k), _) => {
                    if *k as usize >= p.superops.len() {
                        return Err(link_error(format!("FUSED {k}: no such superoperator")));
                    }
                    Arg::Fused(*k as usize)
                }
                (Imm::None, Exec::If) => {
                    open.push(pc);
                    Arg::Target(0)
                }
                (Imm::None, Exec::Else) => {
                    let i = open.pop().ok_or_else(|| link_error(format!("`ELSE` without `IF` in {}", f.name)))?;
                    code[i] = Decoded { arg: Arg::Target(pc + 1), ..code[i] };
                    open.push(pc);
                    Arg::Target(0)
                }
                (Imm::None, Exec::EndIf) => {
                    let i = open.pop().ok_or_else(|| link_error(format!("`ENDIF` without `IF` in {}", f.name)))?;
                    code[i] = Decoded { arg: Arg::Target(pc + 1), ..code[i] };
                    Arg::None
                }
                _ => Arg::None,
            };
            let ins_pats = match info.effect {
                Effect::Fixed(i, _) => i,
                Effect::Special => &[],
            };
            code.push(Decoded { exec: info.exec, ty: ins.ty, ins: ins_pats, arg, held: false, counted: counted(info.exec) });
            sites.push((fi, ii));
        }
        if !open.is_empty() {
            return Err(link_error(format!("`IF` without `ENDIF` in {}", f.name)));
        }
        if f.body.last().map(|i| i.op.info().exec) != Some(Exec::Ret) {
            return Err(link_error(format!("function {} does not end with RET", f.name)));
        }
        mark_tail_calls(&mut code[starts[fi]..], starts[fi]);
        mark_held_writes(&mut code[starts[fi]..]);
    }
    if p.functions.is_empty() {
        return Err(link_error("no functions".into()));
    }
    Ok(Code { code, sites, entry: starts[p.entry()] })
}

/// Marks the tail calls of one function's decoded code (`base` is its first index): a
/// `CALL` whose next instructions, up to `RET`, are only `ELSE` (a jump past its
/// `ENDIF`) and `ENDIF` (nothing) returns straight to its own caller, so it runs as a
/// jump that reuses the caller's return address: tail recursion, self or mutual, runs in
/// constant space. The VCODE is unchanged (CMU's interpreter runs it as a plain call).
fn mark_tail_calls(code: &mut [Decoded], base: usize) {
    for i in 0..code.len() {
        let Arg::Target(t) = code[i].arg else { continue };
        if code[i].exec != Exec::Call {
            continue;
        }
        let mut q = i + 1;
        let tail = loop {
            match code.get(q).map(|d| (d.exec, d.arg)) {
                Some((Exec::EndIf, _)) => q += 1,
                Some((Exec::Else, Arg::Target(e))) if e > base + q => q = e - base,
                Some((Exec::Ret, _)) => break true,
                _ => break false,
            }
        };
        if tail {
            code[i].arg = Arg::Tail(t);
        }
    }
}

/// Marks the `WRITE`s of one function's decoded code whose next instructions, up to an
/// `EXIT`, only compute (no control flow, no input or output): the failure branch of a
/// compiled NESL check, which writes CMU's message and ends with `EXIT` on a check record
/// ([`crate::trap::CheckFailure`]). The machine holds such a write's text back until the
/// `EXIT`: on a check record it reports the record's data instead, otherwise (and on a
/// trap on the way) the text is written as usual.
fn mark_held_writes(code: &mut [Decoded]) {
    let computes = |e: Exec| {
        matches!(
            e.family(),
            "elementwise" | "scan" | "reduce" | "permute" | "vector-scalar" | "rank" | "pack" | "segdes" | "stack" | "const" | "fused"
        )
    };
    // One backward pass: `next` is the first instruction after `i` that is not a
    // computation.
    let mut next: Option<Exec> = None;
    for d in code.iter_mut().rev() {
        if d.exec == Exec::Write {
            d.held = next == Some(Exec::Exit);
        }
        if !computes(d.exec) {
            next = Some(d.exec);
        }
    }
}

fn host_const<C: Cvl>(cvl: &mut C, residents: &Residents<C>, c: &Const) -> Result<Value<C>, Trap> {
    Ok(match c {
        Const::Resident(r) => residents.get(r)?.clone(),
        Const::Int(v, _) => Value::Vec(cvl.from_host(HostVector::Int(v.to_vec()))?),
        Const::Float(v, _) => Value::Vec(cvl.from_host(HostVector::Float(v.to_vec()))?),
        Const::Bool(v, _) => Value::Vec(cvl.from_host(HostVector::Bool(v.to_vec()))?),
        Const::Char(s) => Value::Vec(cvl.from_host(HostVector::Int(s.chars().map(|c| c as i64).collect()))?),
        Const::Segdes(v, list) => {
            let lens = if *list { v.to_vec() } else { vec![v.first().copied().unwrap_or(0)] };
            Value::Seg(cvl.segdes_from_host(&lens)?)
        }
    })
}

/// A host value copied into the library.
pub(crate) fn from_host<C: Cvl>(cvl: &mut C, v: HostValue) -> Result<Value<C>, Trap> {
    match v {
        HostValue::Int(a) => cvl.from_host(HostVector::Int(a)).map(Value::Vec),
        HostValue::Float(a) => cvl.from_host(HostVector::Float(a)).map(Value::Vec),
        HostValue::Bool(a) => cvl.from_host(HostVector::Bool(a)).map(Value::Vec),
        HostValue::Segdes(a) => cvl.segdes_from_host(&a).map(Value::Seg),
    }
}

fn slot_name<C: Cvl>(cvl: &C, v: &Value<C>) -> &'static str {
    match v {
        Value::Vec(x) => cvl.vtype(x).name(),
        Value::Scalar(x) => x.vtype().name(),
        Value::Seg(_) => "SEGDES",
        Value::Pair(_) => "PAIR",
    }
}

fn vec_at<C: Cvl>(s: &[Value<C>], i: usize) -> Result<&C::Vector, Trap> {
    match s.get(i) {
        Some(Value::Vec(v)) => Ok(v),
        _ => Err(Trap::ty(format!("operand {} is not a data vector", i + 1))),
    }
}

fn seg_at<C: Cvl>(s: &[Value<C>], i: usize) -> Result<&C::Segdes, Trap> {
    match s.get(i) {
        Some(Value::Seg(v)) => Ok(v),
        _ => Err(Trap::ty(format!("operand {} is not a segment descriptor", i + 1))),
    }
}

pub(crate) fn to_host_value<C: Cvl>(cvl: &mut C, v: &Value<C>) -> Result<HostValue, Trap> {
    Ok(match v {
        Value::Vec(x) => cvl.to_host(x)?.into(),
        Value::Scalar(x) => match *x {
            HostScalar::Int(x) => HostValue::Int(vec![x]),
            HostScalar::Float(x) => HostValue::Float(vec![x]),
            HostScalar::Bool(x) => HostValue::Bool(vec![x]),
        },
        Value::Seg(s) => HostValue::Segdes(cvl.segdes_to_host(s)?),
        Value::Pair(_) => {
            return Err(Trap::new(TrapKind::Unprintable("a PAIR slot has no text form".into())))
        }
    })
}

fn elements<C: Cvl>(cvl: &C, v: &Value<C>) -> u64 {
    match v {
        Value::Vec(x) => cvl.len(x) as u64,
        Value::Scalar(_) => 1,
        Value::Seg(s) => cvl.segment_count(s) as u64,
        Value::Pair(p) => elements(cvl, &p.0) + elements(cvl, &p.1),
    }
}

pub(crate) struct Machine<'a, C: Cvl> {
    pub(crate) cvl: &'a mut C,
    pub(crate) stack: Vec<Value<C>>,
    pub(crate) consts: Vec<Value<C>>,
    pub(crate) files: Files,
    timer: Instant,
    pub(crate) stats: OpStats,
    /// Text of held-back `WRITE`s ([`mark_held_writes`]), written at the next `EXIT`.
    held: String,
    /// [`Cvl::host_scalars`] of the library.
    scalars: bool,
    /// The row of [`OpStats::rows`] of each family counted so far, by the address of its
    /// (static) name: `--stats` finds it without comparing strings per instruction.
    stat_rows: Vec<(&'static str, usize)>,
    /// No call is run in parts any more ([`crate::split`]): a part failed (a run-time
    /// error), and the calls that hold it, tried again lower down, would fail again.
    pub(crate) whole_calls: bool,
}

pub(crate) enum Flow {
    Next,
    Jump(usize),
    Call(usize),
    /// A call in tail position: a jump that keeps the current return address.
    TailCall(usize),
    Ret,
    Exit(i64),
}

fn int_vec<C: Cvl>(cvl: &mut C, v: Vec<i64>) -> Result<Value<C>, Trap> {
    Ok(Value::Vec(cvl.from_host(HostVector::Int(v))?))
}

fn scalar<C: Cvl>(cvl: &mut C, x: HostScalar) -> Result<Value<C>, Trap> {
    Ok(Value::Vec(cvl.fill(x, 1)?))
}

/// The most operands of a superoperator run on host scalars ([`Machine::scalar_step`]).
const MAX_SCALAR_OPERANDS: usize = 8;

/// A host scalar's one-element vector in the library.
fn vector_of<C: Cvl>(cvl: &mut C, v: &mut Value<C>) -> Result<(), Trap> {
    match v {
        Value::Scalar(x) => *v = Value::Vec(cvl.fill(*x, 1)?),
        Value::Pair(p) => {
            vector_of(cvl, &mut p.0)?;
            vector_of(cvl, &mut p.1)?;
        }
        Value::Vec(_) | Value::Seg(_) => {}
    }
    Ok(())
}

impl<C: Cvl> Machine<'_, C> {
    /// Counts one instruction of `family` that touched `elements` elements
    /// ([`OpStats::record`]).
    fn record(&mut self, family: &'static str, elements: u64) {
        let row = match self.stat_rows.iter().find(|(f, _)| std::ptr::eq(*f, family)) {
            Some(&(_, r)) => r,
            None => {
                let r = match self.stats.rows.iter().position(|r| r.0 == family) {
                    Some(r) => r,
                    None => {
                        self.stats.rows.push((family.to_string(), 0, 0));
                        self.stats.rows.len() - 1
                    }
                };
                self.stat_rows.push((family, r));
                r
            }
        };
        if let Some(r) = self.stats.rows.get_mut(row) {
            r.1 += 1;
            r.2 += elements;
        }
    }

    /// Makes the host scalars among the top `k` slots (all of them when there are fewer)
    /// vectors in the library, for an instruction that works on vectors.
    pub(crate) fn vectors(&mut self, k: usize) -> Result<(), Trap> {
        if self.scalars {
            let from = self.stack.len().saturating_sub(k);
            for v in &mut self.stack[from..] {
                vector_of(self.cvl, v)?;
            }
        }
        Ok(())
    }

    /// The element of slot `i` as a host value of type `want`, when it is a host scalar
    /// or a one-element vector of that type.
    #[inline(always)]
    fn scalar_in(&mut self, i: usize, want: Option<SlotTy>) -> Option<HostScalar> {
        let x = match &self.stack[i] {
            Value::Scalar(x) => *x,
            Value::Vec(v) if self.cvl.len(v) == 1 && want == Some(SlotTy::Vec(self.cvl.vtype(v))) => {
                self.cvl.scalar_of(v).ok()?
            }
            _ => return None,
        };
        (want == Some(SlotTy::Vec(x.vtype()))).then_some(x)
    }

    /// Runs an element-wise instruction (or a superoperator with one element-wise result
    /// and only data operands) on the host when every operand is one element of the
    /// type it should be: its result is a host scalar. `false` (and nothing done) when
    /// the library keeps no host scalars or an operand is not such; a trap leaves the
    /// stack unchanged, as the vector path's does.
    fn scalar_step(&mut self, d: &Decoded, prog: &Program) -> Result<bool, Trap> {
        if !self.scalars {
            return Ok(false);
        }
        let op = match (d.exec, d.arg) {
            (Exec::Fused, Arg::Fused(k)) => {
                let op = &prog.superops[k];
                if !op.more.is_empty() || op.fold.is_some() || op.guard.is_some() || op.pack.is_some() {
                    return Ok(false);
                }
                Some(op)
            }
            (Exec::Binary(_) | Exec::Unary(_) | Exec::Select, _) => None,
            _ => return Ok(false),
        };
        let k = op.map_or(d.ins.len(), |op| op.params.len());
        if k == 0 || self.stack.len() < k {
            return Ok(false);
        }
        let base = self.stack.len() - k;
        // Operand `i` as a host value, if it is one of the type it should be.
        macro_rules! arg {
            ($i:expr) => {{
                let want = match op {
                    Some(op) => Some(op.params[$i].slot()),
                    None => d.ins[$i].resolve(d.ty),
                };
                match self.scalar_in(base + $i, want) {
                    Some(x) => x,
                    None => return Ok(false),
                }
            }};
        }
        let r = match (d.exec, op) {
            (_, Some(op)) if k <= MAX_SCALAR_OPERANDS => {
                let mut xs = [HostScalar::Int(0); MAX_SCALAR_OPERANDS];
                for (i, x) in xs.iter_mut().enumerate().take(k) {
                    *x = arg!(i);
                }
                self.cvl.scalar_fused(op, &xs[..k])?
            }
            (_, Some(_)) => return Ok(false),
            (Exec::Binary(o), _) => {
                let (a, b) = (arg!(0), arg!(1));
                self.cvl.scalar_binary(o, a, b)?
            }
            (Exec::Unary(o), _) => {
                let a = arg!(0);
                self.cvl.scalar_unary(o, a)?
            }
            _ => {
                let (f, a, b) = (arg!(0), arg!(1), arg!(2));
                self.cvl.scalar_select(f, a, b)?
            }
        };
        self.finish_one(base, Value::Scalar(r));
        Ok(true)
    }

    /// Checks the operands of a fixed-effect instruction; returns the stack index of the
    /// first one.
    fn check_inputs(&self, ins: &[Pat], ty: Option<Ty>) -> Result<usize, Trap> {
        let k = ins.len();
        if self.stack.len() < k {
            return Err(Trap::new(TrapKind::StackUnderflow { needed: k, have: self.stack.len() }));
        }
        let base = self.stack.len() - k;
        for (i, p) in ins.iter().enumerate() {
            let want = p.resolve(ty);
            let slot = &self.stack[base + i];
            let ok = match (want, slot) {
                (Some(SlotTy::Segdes), Value::Seg(_)) => true,
                (Some(SlotTy::Vec(t)), Value::Vec(v)) => self.cvl.vtype(v) == t,
                _ => false,
            };
            if !ok {
                return Err(Trap::ty(format!(
                    "operand {} should be {}, found {}",
                    i + 1,
                    want.map_or("?", SlotTy::name),
                    slot_name(self.cvl, slot)
                )));
            }
        }
        Ok(base)
    }

    fn finish(&mut self, base: usize, outs: impl IntoIterator<Item = Value<C>>) {
        self.stack.truncate(base);
        self.stack.extend(outs);
    }

    /// [`finish`](Self::finish) with one result (no list made for it: serial code runs
    /// one such instruction after another on one-element vectors).
    fn finish_one(&mut self, base: usize, out: Value<C>) {
        self.stack.truncate(base);
        self.stack.push(out);
    }

    fn block(&self, n: usize, d: usize) -> Result<usize, Trap> {
        let need = n.saturating_add(d);
        if self.stack.len() < need {
            return Err(Trap::new(TrapKind::StackUnderflow { needed: need, have: self.stack.len() }));
        }
        Ok(self.stack.len() - need)
    }

    fn io_result(&mut self, r: Result<Vec<Value<C>>, String>, fallback: Vec<Value<C>>) -> Result<Vec<Value<C>>, Trap> {
        let (mut vals, msg, ok) = match r {
            Ok(v) => (v, Vec::new(), true),
            Err(m) => (fallback, m.chars().map(|c| c as i64).collect(), false),
        };
        vals.push(int_vec(self.cvl, msg)?);
        vals.push(scalar(self.cvl, HostScalar::Bool(ok))?);
        Ok(vals)
    }

    fn empty_of(&mut self, ty: Ty) -> Result<Value<C>, Trap> {
        Ok(match ty {
            Ty::Segdes => Value::Seg(self.cvl.segdes_from_host(&[])?),
            Ty::Float => Value::Vec(self.cvl.from_host(HostVector::Float(Vec::new()))?),
            Ty::Bool => Value::Vec(self.cvl.from_host(HostVector::Bool(Vec::new()))?),
            Ty::Int | Ty::Char => int_vec(self.cvl, Vec::new())?,
        })
    }

    fn from_host_value(&mut self, v: HostValue) -> Result<Value<C>, String> {
        from_host(self.cvl, v).map_err(|t| t.kind.to_string())
    }

    fn string_arg(&mut self, v: &C::Vector) -> Result<String, Trap> {
        Ok(match self.cvl.to_host(v)? {
            HostVector::Int(c) => {
                c.iter().map(|&x| u32::try_from(x).ok().and_then(char::from_u32).unwrap_or('\u{fffd}')).collect()
            }
            _ => String::new(),
        })
    }

    /// Runs the instructions whose result may go into an operand's storage
    /// (element-wise operations, `REPLACE`, `DPERMUTE`; see [`Cvl::binary_reusing`]):
    /// when the stack slot holds the only handle to that operand, the library writes over
    /// it, and the operands are popped after. `None` for every other instruction. The
    /// operands were checked by `check_inputs`; on a trap the stack is unchanged.
    fn step_reusing(&mut self, e: Exec, base: usize) -> Result<Option<C::Vector>, Trap> {
        /// The first slot as a vector (mutable), and the slots after it.
        fn split<C: Cvl>(s: &mut [Value<C>]) -> Option<(&mut C::Vector, &[Value<C>])> {
            match s.split_first_mut()? {
                (Value::Vec(v), rest) => Some((v, rest)),
                _ => None,
            }
        }
        let cvl = &mut *self.cvl;
        let ops = &mut self.stack[base..];
        Ok(Some(match e {
            Exec::Binary(op) => {
                let Some((a, rest)) = split(ops) else { return Ok(None) };
                cvl.binary_reusing(op, a, vec_at(rest, 0)?)?
            }
            Exec::Unary(op) => {
                let Some((a, _)) = split(ops) else { return Ok(None) };
                cvl.unary_reusing(op, a)?
            }
            Exec::Replace => {
                let Some((v, rest)) = split(ops) else { return Ok(None) };
                cvl.replace_reusing(v, vec_at(rest, 0)?, vec_at(rest, 1)?, seg_at(rest, 2)?)?
            }
            Exec::DPermute => {
                // v i d Ss Sd: the defaults `d` are the reusable operand.
                let (head, tail) = ops.split_at_mut(2);
                let Some((d, rest)) = split(tail) else { return Ok(None) };
                cvl.dpermute_reusing(vec_at(head, 0)?, vec_at(head, 1)?, d, seg_at(rest, 0)?, seg_at(rest, 1)?)?
            }
            _ => return Ok(None),
        }))
    }

    /// Runs one decoded instruction.
    /// `pc` is the instruction's position: a trap whose check was deferred names the
    /// position of the instruction that raised it ([`Trap::raised_at`]).
    pub(crate) fn step(&mut self, pc: usize, d: &Decoded, prog: &Program, out: &mut dyn Write) -> Result<Flow, Trap> {
        self.cvl.set_position(pc as u64);
        let r = if matches!(d.exec, Exec::Call | Exec::Ret | Exec::Exit) {
            // Deferred errors are reported before the innermost call changes.
            self.cvl.settle().and_then(|()| self.step_one(d, prog, out))
        } else {
            self.step_one(d, prog, out)
        };
        if r.is_err() && !self.held.is_empty() {
            // A trap between a held write and its EXIT: the text is not lost.
            let text = std::mem::take(&mut self.held);
            let _ = self.files.write(2, &text, out);
        }
        r
    }

    /// The check record ([`crate::trap::CheckFailure`]) on top of the stack, if that is
    /// one.
    fn check_record(&mut self) -> Option<crate::trap::CheckFailure> {
        let v = match self.stack.last() {
            Some(Value::Vec(v)) => v.clone(),
            _ => return None,
        };
        let n = self.cvl.len(&v);
        if !(2..=8).contains(&n) {
            return None;
        }
        let r: Result<Vec<i64>, Trap> = (0..n).map(|i| self.cvl.get_int(&v, i)).collect();
        crate::trap::CheckFailure::from_record(&r.ok()?)
    }

    fn step_one(&mut self, d: &Decoded, prog: &Program, out: &mut dyn Write) -> Result<Flow, Trap> {
        use crate::cvl::HostScalar as H;
        let ty = d.ty;
        if matches!(d.exec, Exec::Binary(_) | Exec::Unary(_) | Exec::Select | Exec::Fused) && self.scalar_step(d, prog)? {
            return Ok(Flow::Next);
        }
        match d.exec {
            Exec::Copy | Exec::Pop | Exec::Cpop => {
                let Arg::Counts(n, dd) = d.arg else { return Ok(Flow::Next) };
                let start = self.block(n, dd)?;
                match d.exec {
                    Exec::Copy => self.stack.extend_from_within(start..start + n),
                    Exec::Pop => {
                        self.stack.drain(start..start + n);
                    }
                    // CPOP: the block goes to the top, in place.
                    _ => self.stack[start..].rotate_left(n),
                }
                return Ok(Flow::Next);
            }
            Exec::Pair => {
                let start = self.block(2, 0)?;
                let b = self.stack.pop();
                let a = self.stack.pop();
                if let (Some(a), Some(b)) = (a, b) {
                    self.stack.push(Value::Pair(Box::new((a, b))));
                }
                debug_assert_eq!(self.stack.len(), start + 1);
                return Ok(Flow::Next);
            }
            Exec::Unpair => {
                match self.stack.pop() {
                    Some(Value::Pair(p)) => {
                        let (a, b) = *p;
                        self.stack.push(a);
                        self.stack.push(b);
                    }
                    Some(v) => {
                        let name = slot_name(self.cvl, &v);
                        self.stack.push(v);
                        return Err(Trap::ty(format!("UNPAIR needs a pair, found {name}")));
                    }
                    None => return Err(Trap::new(TrapKind::StackUnderflow { needed: 1, have: 0 })),
                }
                return Ok(Flow::Next);
            }
            Exec::Call => {
                return Ok(match d.arg {
                    Arg::Target(t) => Flow::Call(t),
                    Arg::Tail(t) => Flow::TailCall(t),
                    _ => Flow::Next,
                });
            }
            Exec::Ret => return Ok(Flow::Ret),
            Exec::If => {
                let Arg::Target(t) = d.arg else { return Ok(Flow::Next) };
                let flag = match self.stack.pop() {
                    Some(Value::Scalar(H::Bool(b))) => b,
                    Some(Value::Vec(v)) => {
                        if self.cvl.len(&v) == 0 {
                            return Err(Trap::new(TrapKind::EmptyCondition));
                        }
                        self.cvl.get_bool(&v, 0)?
                    }
                    Some(v) => return Err(Trap::ty(format!("IF needs a BOOL, found {}", slot_name(self.cvl, &v)))),
                    None => return Err(Trap::new(TrapKind::StackUnderflow { needed: 1, have: 0 })),
                };
                return Ok(if flag { Flow::Next } else { Flow::Jump(t) });
            }
            Exec::Else => {
                let Arg::Target(t) = d.arg else { return Ok(Flow::Next) };
                return Ok(Flow::Jump(t));
            }
            Exec::EndIf => return Ok(Flow::Next),
            Exec::Const => {
                let Arg::Const(k) = d.arg else { return Ok(Flow::Next) };
                if let Some(v) = self.consts.get(k) {
                    self.stack.push(v.clone());
                }
                return Ok(Flow::Next);
            }
            Exec::Exit => {
                // Spec 6.3: EXIT ends the program with status 0, whatever the stack holds
                // (compiled NESL pushes an INT before it; CMU's interpreter ignores it).
                // A failed NESL check ends on its check record: reported as a trap with
                // the record's data, in place of the message written (held) before it.
                if let Some(c) = self.check_record() {
                    self.held.clear();
                    return Err(Trap::new(TrapKind::Check(c)));
                }
                if !self.held.is_empty() {
                    let text = std::mem::take(&mut self.held);
                    let r = self.files.write(2, &text, out);
                    r.map_err(|e| Trap::new(TrapKind::Output(e)))?;
                }
                let status = 0;
                return Ok(Flow::Exit(status));
            }
            Exec::Fused => {
                let Arg::Fused(k) = d.arg else { return Ok(Flow::Next) };
                let op = &prog.superops[k];
                let n = op.params.len();
                if self.stack.len() < n {
                    return Err(Trap::new(TrapKind::StackUnderflow { needed: n, have: self.stack.len() }));
                }
                self.vectors(n)?;
                let base = self.stack.len() - n;
                let s = &self.stack[base..];
                // The length: the element count of the segments a fold or a guard
                // reduces over, else that of operand $0.
                let len = match s.get(op.length_param()) {
                    Some(Value::Seg(x)) => self.cvl.element_count(x),
                    Some(Value::Vec(x)) => self.cvl.len(x),
                    _ => return Err(Trap::ty("superoperator operand $0 is a pair")),
                };
                for (i, (slot, pt)) in s.iter().zip(&op.params).enumerate() {
                    match (slot, pt.slot()) {
                        (Value::Seg(_), SlotTy::Segdes) => {}
                        (Value::Vec(v), SlotTy::Vec(t)) if self.cvl.vtype(v) == t => {
                            if self.cvl.len(v) != len {
                                return Err(Trap::length(format!(
                                    "superoperator operand ${i} has length {}, expected {len}",
                                    self.cvl.len(v)
                                )));
                            }
                        }
                        (slot, t) => {
                            return Err(Trap::ty(format!(
                                "superoperator operand ${i} should be {}, found {}",
                                t.name(),
                                slot_name(self.cvl, slot)
                            )))
                        }
                    }
                }
                if !op.more.is_empty() || op.fold.is_some() || op.guard.is_some() || op.pack.is_some() {
                    let seg = || seg_at(s, op.length_param());
                    let args: Vec<Option<&C::Vector>> = s
                        .iter()
                        .map(|v| match v {
                            Value::Vec(x) => Some(x),
                            _ => None,
                        })
                        .collect();
                    let outs = if !op.more.is_empty() {
                        // (Element-wise results alone need no descriptor.)
                        let seg = if op.fold.is_some() || op.guard.is_some() { Some(seg()?) } else { None };
                        let outs = self.cvl.fused_many(op, &args, seg, len)?;
                        if outs.len() != op.results() {
                            return Err(Trap::ty(format!("superoperator {k} made {} results, not {}", outs.len(), op.results())));
                        }
                        outs.into_iter().map(Value::Vec).collect()
                    } else if op.pack.is_some() {
                        let packed = self.cvl.fused_pack(op, &args, seg()?, len)?;
                        packed.into_iter().flat_map(|(v, s)| [Value::Vec(v), Value::Seg(s)]).collect()
                    } else if op.fold.is_some() {
                        vec![Value::Vec(self.cvl.fused_fold(op, &args, seg()?, len)?)]
                    } else {
                        let (r, flags) = self.cvl.fused_guarded(op, &args, seg()?, len)?;
                        vec![Value::Vec(r), Value::Vec(flags)]
                    };
                    self.finish(base, outs);
                    return Ok(Flow::Next);
                }
                // The operands are popped right after: the library may write the result
                // over one whose only handle is in its slot.
                let mut args: SmallVec<[Option<&mut C::Vector>; 8]> = self.stack[base..]
                    .iter_mut()
                    .map(|v| match v {
                        Value::Vec(x) => Some(x),
                        _ => None,
                    })
                    .collect();
                let r = self.cvl.fused_reusing(op, &mut args, len)?;
                drop(args);
                self.finish_one(base, Value::Vec(r));
                return Ok(Flow::Next);
            }
            _ => {}
        }
        // Fixed-effect instructions.
        self.vectors(d.ins.len())?;
        let base = self.check_inputs(d.ins, ty)?;
        if let Some(r) = self.step_reusing(d.exec, base)? {
            self.finish_one(base, Value::Vec(r));
            return Ok(Flow::Next);
        }
        let s = &self.stack[base..];
        let cvl = &mut *self.cvl;
        let scalars = self.scalars;
        let outs: SmallVec<[Value<C>; 2]> = match d.exec {
            Exec::Select => smallvec![Value::Vec(cvl.select(vec_at(s, 0)?, vec_at(s, 1)?, vec_at(s, 2)?)?)],
            Exec::Rand => smallvec![Value::Vec(cvl.rand(vec_at(s, 0)?)?)],
            Exec::Scan(op) => smallvec![Value::Vec(cvl.scan(op, vec_at(s, 0)?, seg_at(s, 1)?)?)],
            Exec::Reduce(op) => smallvec![Value::Vec(cvl.reduce(op, vec_at(s, 0)?, seg_at(s, 1)?)?)],
            Exec::Permute => smallvec![Value::Vec(cvl.permute(vec_at(s, 0)?, vec_at(s, 1)?, seg_at(s, 2)?)?)],
            Exec::FPermute => smallvec![Value::Vec(cvl.fpermute(
                vec_at(s, 0)?,
                vec_at(s, 1)?,
                vec_at(s, 2)?,
                seg_at(s, 3)?,
                seg_at(s, 4)?,
            )?)],
            Exec::BPermute => smallvec![Value::Vec(cvl.bpermute(
                vec_at(s, 0)?,
                vec_at(s, 1)?,
                seg_at(s, 2)?,
                seg_at(s, 3)?,
            )?)],
            Exec::BfPermute => smallvec![Value::Vec(cvl.bfpermute(
                vec_at(s, 0)?,
                vec_at(s, 1)?,
                vec_at(s, 2)?,
                seg_at(s, 3)?,
                seg_at(s, 4)?,
            )?)],
            Exec::DfPermute => smallvec![Value::Vec(cvl.dfpermute(
                vec_at(s, 0)?,
                vec_at(s, 1)?,
                vec_at(s, 2)?,
                vec_at(s, 3)?,
                seg_at(s, 4)?,
                seg_at(s, 5)?,
            )?)],
            Exec::Extract => smallvec![Value::Vec(cvl.extract(vec_at(s, 0)?, vec_at(s, 1)?, seg_at(s, 2)?)?)],
            Exec::Dist => smallvec![Value::Vec(cvl.dist(vec_at(s, 0)?, seg_at(s, 1)?)?)],
            Exec::Index => smallvec![Value::Vec(cvl.index(vec_at(s, 0)?, vec_at(s, 1)?, seg_at(s, 2)?)?)],
            Exec::Rank(up) => smallvec![Value::Vec(cvl.rank(up, vec_at(s, 0)?, seg_at(s, 1)?)?)],
            Exec::Pack => {
                let (v, sd) = cvl.pack(vec_at(s, 0)?, vec_at(s, 1)?, seg_at(s, 2)?)?;
                smallvec![Value::Vec(v), Value::Seg(sd)]
            }
            Exec::Length => {
                let n = cvl.len(vec_at(s, 0)?) as i64;
                smallvec![if scalars { Value::Scalar(H::Int(n)) } else { Value::Vec(cvl.fill(H::Int(n), 1)?) }]
            }
            Exec::MakeSegdes => smallvec![Value::Seg(cvl.make_segdes(vec_at(s, 0)?)?)],
            Exec::Lengths => {
                let sd = seg_at(s, 0)?;
                // One segment's length (`#a` in serial code) is a host scalar.
                if scalars && cvl.segment_count(sd) == 1 {
                    smallvec![Value::Scalar(H::Int(cvl.element_count(sd) as i64))]
                } else {
                    smallvec![Value::Vec(cvl.lengths(sd)?)]
                }
            }
            Exec::StartTimer => {
                // Work issued before the timer is not timed, work issued inside is.
                cvl.wait()?;
                self.timer = Instant::now();
                SmallVec::new()
            }
            Exec::StopTimer => {
                cvl.wait()?;
                let t = self.timer.elapsed().as_secs_f64();
                smallvec![Value::Vec(cvl.fill(H::Float(t), 1)?)]
            }
            Exec::Srand => {
                let seed = cvl.get_int(vec_at(s, 0)?, 0)?;
                cvl.srand(seed)?;
                smallvec![Value::Vec(cvl.fill(H::Bool(true), 1)?)]
            }
            Exec::Write | Exec::Fwrite => {
                let ty = ty.unwrap_or(Ty::Int);
                let v = to_host_value(cvl, &s[0])?;
                let fd = if d.exec == Exec::Write { 2 } else { cvl.get_int(vec_at(s, 1)?, 0)? };
                let text = write_text(&v, ty);
                let r = if d.held {
                    self.held.push_str(&text);
                    Ok(Vec::new())
                } else {
                    self.files.write(fd, &text, out).map(|_| Vec::new())
                };
                SmallVec::from_vec(self.io_result(r, Vec::new())?)
            }
            Exec::Read | Exec::Fread => {
                let ty = ty.unwrap_or(Ty::Int);
                let fd = if d.exec == Exec::Read { 0 } else { cvl.get_int(vec_at(s, 0)?, 0)? };
                let _ = out.flush();
                let r = match self.files.read_value(fd, ty) {
                    Ok(v) => self.from_host_value(v).map(|x| vec![x]),
                    Err(e) => Err(e),
                };
                let fallback = vec![self.empty_of(ty)?];
                SmallVec::from_vec(self.io_result(r, fallback)?)
            }
            Exec::Fopen => {
                let mode = cvl.get_int(vec_at(s, 1)?, 0)?;
                let name_v = vec_at(s, 0)?.clone();
                let name = self.string_arg(&name_v)?;
                let r = match self.files.open(&name, mode) {
                    Ok(fd) => Ok(vec![scalar(self.cvl, H::Int(fd))?]),
                    Err(e) => Err(e),
                };
                let fallback = vec![scalar(self.cvl, H::Int(-1))?];
                SmallVec::from_vec(self.io_result(r, fallback)?)
            }
            Exec::Fclose => {
                let fd = cvl.get_int(vec_at(s, 0)?, 0)?;
                let r = self.files.close(fd).map(|_| Vec::new());
                SmallVec::from_vec(self.io_result(r, Vec::new())?)
            }
            Exec::FreadChar => {
                let delims = match cvl.to_host(vec_at(s, 0)?)? {
                    HostVector::Int(d) => d,
                    _ => Vec::new(),
                };
                let max = cvl.get_int(vec_at(s, 1)?, 0)?;
                let fd = cvl.get_int(vec_at(s, 2)?, 0)?;
                let r = match self.files.read_chars(fd, &delims, max) {
                    Ok((text, status)) => {
                        Ok(vec![int_vec(self.cvl, text)?, scalar(self.cvl, H::Int(status))?])
                    }
                    Err(e) => Err(e),
                };
                let fallback = vec![int_vec(self.cvl, Vec::new())?, scalar(self.cvl, H::Int(-1))?];
                SmallVec::from_vec(self.io_result(r, fallback)?)
            }
            Exec::Spawn => {
                let mut fds = [0i64; 3];
                for (k, fd) in fds.iter_mut().enumerate() {
                    *fd = cvl.get_int(vec_at(s, k + 1)?, 0)?;
                }
                let cmd_v = vec_at(s, 0)?.clone();
                let cmd = self.string_arg(&cmd_v)?;
                let _ = out.flush();
                self.files.flush();
                let r = match self.files.spawn(&cmd, fds) {
                    Ok(got) => {
                        let mut v = Vec::new();
                        for fd in got {
                            v.push(scalar(self.cvl, H::Int(fd))?);
                        }
                        Ok(v)
                    }
                    Err(e) => Err(e),
                };
                let mut fallback = Vec::new();
                for _ in 0..3 {
                    fallback.push(scalar(self.cvl, H::Int(-1))?);
                }
                SmallVec::from_vec(self.io_result(r, fallback)?)
            }
            Exec::Getenv => {
                let name_v = vec_at(s, 0)?.clone();
                let name = self.string_arg(&name_v)?;
                let r = match self.files.getenv(&name) {
                    Ok(v) => Ok(vec![int_vec(self.cvl, v.into_iter().map(i64::from).collect())?]),
                    Err(e) => Err(e),
                };
                let fallback = vec![int_vec(self.cvl, Vec::new())?];
                SmallVec::from_vec(self.io_result(r, fallback)?)
            }
            Exec::Shell => {
                let input = match cvl.to_host(vec_at(s, 1)?)? {
                    HostVector::Int(c) => c.iter().map(|&x| x as u8).collect(),
                    _ => Vec::new(),
                };
                let cmd_v = vec_at(s, 0)?.clone();
                let cmd = self.string_arg(&cmd_v)?;
                let _ = out.flush();
                self.files.flush();
                let r = match self.files.shell(&cmd, input) {
                    Ok(v) => Ok(vec![int_vec(self.cvl, v.into_iter().map(i64::from).collect())?]),
                    Err(e) => Err(e),
                };
                let fallback = vec![int_vec(self.cvl, Vec::new())?];
                SmallVec::from_vec(self.io_result(r, fallback)?)
            }
            Exec::Display => {
                let host_ints = |cvl: &mut C, v: &C::Vector| -> Result<Vec<i64>, Trap> {
                    Ok(match cvl.to_host(v)? {
                        HostVector::Int(c) => c,
                        _ => Vec::new(),
                    })
                };
                let codes = host_ints(cvl, vec_at(s, 0)?)?;
                let args = host_ints(cvl, vec_at(s, 1)?)?;
                let lengths = cvl.segdes_to_host(seg_at(s, 2)?)?;
                let _ = out.flush();
                let r = match crate::display::run_requests(&codes, &args, &lengths) {
                    Ok((data, lens)) => {
                        let seg = Value::Seg(self.cvl.segdes_from_host(&lens)?);
                        Ok(vec![int_vec(self.cvl, data)?, seg])
                    }
                    Err(e) => Err(e),
                };
                let fallback = vec![int_vec(self.cvl, Vec::new())?, Value::Seg(self.cvl.segdes_from_host(&[])?)];
                SmallVec::from_vec(self.io_result(r, fallback)?)
            }
            other => {
                return Err(Trap::new(TrapKind::Unsupported(format!("instruction kind {other:?}"))))
            }
        };
        self.finish(base, outs);
        Ok(Flow::Next)
    }
}

impl<'a, C: Cvl> Machine<'a, C> {
    /// A machine with `stack` and the program's constants `consts` (as [`Machine::load`]
    /// loads them): for one part of a call run apart ([`crate::split`]), the call's
    /// arguments for the part and the caller's constants.
    pub(crate) fn part(cvl: &'a mut C, stack: Vec<Value<C>>, consts: Vec<Value<C>>) -> Self {
        let scalars = cvl.host_scalars();
        Machine {
            cvl,
            stack,
            consts,
            files: Files::new(),
            timer: Instant::now(),
            stats: OpStats::default(),
            held: String::new(),
            scalars,
            stat_rows: Vec::new(),
            whole_calls: false,
        }
    }

    /// A machine with an empty stack and every constant of `p` loaded into `cvl` (a
    /// one-element one held on the host when the library keeps host scalars).
    pub(crate) fn load(p: &Program, cvl: &'a mut C, residents: &Residents<C>) -> Result<Self, Trap> {
        let scalars = cvl.host_scalars();
        let mut consts = Vec::new();
        for f in &p.functions {
            for ins in &f.body {
                if let Imm::Const(c) = &ins.imm {
                    let one = match c {
                        Const::Int(v, _) if scalars && v.len() == 1 => Some(HostScalar::Int(v[0])),
                        Const::Float(v, _) if scalars && v.len() == 1 => Some(HostScalar::Float(v[0])),
                        Const::Bool(v, _) if scalars && v.len() == 1 => Some(HostScalar::Bool(v[0])),
                        _ => None,
                    };
                    consts.push(match one {
                        Some(x) => Value::Scalar(x),
                        None => host_const(cvl, residents, c)?,
                    });
                }
            }
        }
        Ok(Machine::part(cvl, Vec::new(), consts))
    }
}

/// The place of decoded instruction `pc`, for a trap, with no call stack.
pub(crate) fn site_of(p: &Program, code: &Code, pc: usize) -> TrapSite {
    let (fi, ii) = code.sites.get(pc).copied().unwrap_or((0, 0));
    let f = &p.functions[fi];
    let origin = f.origin_of(ii);
    TrapSite {
        instr: f.body.get(ii).map(|i| i.to_string()).unwrap_or_default(),
        function: f.name.clone(),
        line: origin.pos.line,
        col: origin.pos.col,
        origin,
        stack: Vec::new(),
    }
}

/// The place of decoded instruction `pc` with the call stack `calls` (return addresses,
/// outermost first, as the run loop keeps them): computed only when a trap or `EXIT`
/// happens. At most [`crate::trap::MAX_FRAMES`] innermost frames are kept.
pub(crate) fn site_with_stack(p: &Program, code: &Code, pc: usize, calls: &CallStack) -> TrapSite {
    let mut site = site_of(p, code, pc);
    site.stack = calls
        .returns()
        .rev()
        .take(crate::trap::MAX_FRAMES)
        .map(|r| {
            let (fi, ii) = code.sites.get(r.wrapping_sub(1)).copied().unwrap_or((0, 0));
            let f = &p.functions[fi];
            crate::trap::Frame { function: f.name.clone(), call: f.origin_of(ii) }
        })
        .collect();
    site
}

/// Runs `p` on `cvl`, its resident constants taken from `residents`; the final stack is
/// left in the library (see [`crate::run`], [`crate::run_resident`]).
pub(crate) fn run<C: Cvl + 'static>(
    p: &Program,
    cvl: &mut C,
    residents: &Residents<C>,
    out: &mut dyn Write,
    opts: &RunOptions,
) -> Result<RunReport<Value<C>>, Trap> {
    let code = decode(p)?;
    let mut m = Machine::load(p, cvl, residents)?;
    m.files.configure(opts.stdin.clone(), opts.file_access);
    let mut steps: u64 = 0;
    let outcome = drive(&mut m, p, &code, code.entry, &mut CallStack::default(), 0, out, opts, &mut steps)?;
    m.files.flush();
    let _ = out.flush();
    if opts.stats {
        m.stats.instructions = steps;
    }
    let mut exit_site = None;
    let outcome = match outcome {
        Some((s, at)) => {
            exit_site = Some(at);
            RunOutcome::Exited(s)
        }
        None => RunOutcome::Finished(std::mem::take(&mut m.stack)),
    };
    Ok(RunReport { outcome, stats: m.stats, exit_site })
}

/// Runs the code from `pc` on `m` until the function at the bottom of `calls` returns
/// (`None`; the entry function: the program ends) or the program exits (`Some`, with
/// where). `below` is the call depth below `calls` (a part of a call run apart,
/// [`crate::split`], starts at its call's depth); `steps` counts the instructions.
#[allow(clippy::too_many_arguments)]
pub(crate) fn drive<C: Cvl + 'static>(
    m: &mut Machine<'_, C>,
    p: &Program,
    code: &Code,
    mut pc: usize,
    calls: &mut CallStack,
    below: usize,
    out: &mut dyn Write,
    opts: &RunOptions,
    steps: &mut u64,
) -> Result<Option<(i64, TrapSite)>, Trap> {
    loop {
        let site = |pc: usize| site_with_stack(p, code, pc, calls);
        let Some(d) = code.code.get(pc) else {
            return Err(Trap::new(TrapKind::Unsupported("ran past the end of the code".into())).at(|| site(pc.saturating_sub(1))));
        };
        *steps += 1;
        if crate::interrupt::requested() {
            return Err(Trap::new(TrapKind::Interrupted).at(|| site(pc)));
        }
        if opts.max_steps.is_some_and(|mx| *steps > mx) {
            return Err(Trap::new(TrapKind::Unsupported(format!("step limit of {} reached", *steps - 1))).at(|| site(pc)));
        }
        let consumed = match d.arg {
            Arg::Fused(k) => p.superops[k].params.len(),
            _ => d.ins.len(),
        }
        .min(m.stack.len());
        let before = if opts.stats && d.counted {
            let k = consumed;
            let cvl: &C = m.cvl;
            m.stack[m.stack.len() - k..].iter().map(|v| elements(cvl, v)).sum::<u64>()
        } else {
            0
        };
        let depth = m.stack.len();
        let trips = if opts.stats { m.cvl.round_trips() } else { 0 };
        let flow = m.step(pc, d, p, out).map_err(|t| {
            let at = t.raised_at(pc);
            t.at_in(p, || site(at))
        })?;
        if opts.stats {
            let n = m.cvl.round_trips().saturating_sub(trips);
            if n > 0 {
                m.stats.record_round_trips(d.exec.family(), n);
            }
        }
        if opts.stats && d.counted {
            let produced = (m.stack.len() + consumed).saturating_sub(depth);
            let cvl: &C = m.cvl;
            let after: u64 = m.stack[m.stack.len() - produced.min(m.stack.len())..].iter().map(|v| elements(cvl, v)).sum();
            m.record(d.exec.family(), before + after);
        }
        match flow {
            Flow::Next => pc += 1,
            Flow::Jump(t) => pc = t,
            Flow::Call(t) => {
                if below + calls.depth() >= opts.max_call_depth {
                    return Err(Trap::new(TrapKind::CallStackOverflow(opts.max_call_depth)).at(|| site(pc)));
                }
                if crate::split::call_in_parts(m, p, code, t, below + calls.depth() + 1, opts, steps)? {
                    pc += 1;
                } else {
                    calls.call(pc + 1);
                    pc = t;
                }
            }
            Flow::TailCall(t) => {
                calls.tail_call(pc + 1);
                pc = t;
            }
            Flow::Ret => match calls.ret() {
                Some(r) => pc = r,
                None => return Ok(None),
            },
            Flow::Exit(s) => return Ok(Some((s, site(pc)))),
        }
    }
}

/// Whether `--stats` counts this kind of instruction (vector work, not stack shuffles).
fn counted(e: Exec) -> bool {
    !matches!(e.family(), "stack" | "control" | "const")
}
