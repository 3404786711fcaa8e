//! Stack code for the slot code of one function ([`super::builder`]).
//!
//! Two passes. Liveness runs backwards over the structured code: it finds each slot's
//! last use and drops pure instructions whose results are never used. Emission then
//! walks forwards with a model of the stack that holds exactly the live slots: an
//! operand is moved to the top at its last use (`CPOP`, or nothing when it is already
//! there) and copied (`COPY`) otherwise; a result nobody uses is popped at once; a
//! branch starts by popping what it does not need and ends with the slots that live on
//! after the `IF` (in their order) under its results. Scalar constants are written at
//! each use (`CONST`, as CMU's compiler does) instead of living on the stack.
//!
//! So no value outlives its last use, and a call in tail position finds exactly its
//! arguments on the stack: `CALL f` is then followed only by `ELSE`/`ENDIF` and `RET`,
//! which the interpreter runs as a jump.

use super::builder::Slot;
use std::collections::{HashMap, HashSet};
use vcode::{Const, Imm, Instr, Opcode, Origin};

/// A sequence of slot instructions.
pub(crate) type Block = Vec<Node>;

/// One slot instruction.
#[derive(Debug)]
pub(crate) enum Node {
    Op(OpNode),
    If(Box<IfNode>),
}

/// An instruction on operand slots with result slots.
#[derive(Debug)]
pub(crate) struct OpNode {
    ins: Instr,
    args: Vec<Slot>,
    res: Vec<Slot>,
    origin: Origin,
    /// Liveness: the instruction is written (false: pure and unused, or a constant
    /// written at its uses).
    keep: bool,
    /// Liveness: operand `i` is the last use of its slot.
    dies: Vec<bool>,
    /// Liveness: the results nobody reads.
    unused: Vec<Slot>,
}

impl OpNode {
    pub(crate) fn new(ins: Instr, args: Vec<Slot>, res: Vec<Slot>, origin: Origin) -> Self {
        OpNode { ins, args, res, origin, keep: true, dies: Vec::new(), unused: Vec::new() }
    }
}

/// `IF cond` with two branches, each ending with its result slots, and the merged
/// result slots.
#[derive(Debug)]
pub(crate) struct IfNode {
    cond: Slot,
    /// Origins of `IF`, `ELSE`, `ENDIF`.
    origins: [Origin; 3],
    then: Block,
    then_res: Vec<Slot>,
    els: Block,
    else_res: Vec<Slot>,
    res: Vec<Slot>,
    /// Liveness: the condition's last use; the slots each branch needs on entry; which
    /// branch results are last uses.
    cond_dies: bool,
    then_in: HashSet<Slot>,
    els_in: HashSet<Slot>,
    then_dies: Vec<bool>,
    else_dies: Vec<bool>,
    unused: Vec<Slot>,
}

impl IfNode {
    pub(crate) fn new(cond: Slot, origins: [Origin; 3], then: (Block, Vec<Slot>), els: (Block, Vec<Slot>), res: Vec<Slot>) -> Self {
        IfNode {
            cond,
            origins,
            then: then.0,
            then_res: then.1,
            els: els.0,
            else_res: els.1,
            res,
            cond_dies: false,
            then_in: HashSet::new(),
            els_in: HashSet::new(),
            then_dies: Vec::new(),
            else_dies: Vec::new(),
            unused: Vec::new(),
        }
    }
}

/// Writes the stack code of a function body whose `nargs` arguments are slots
/// `0..nargs` and which leaves `results`; returns the instructions (ending with `RET`,
/// which gets `ret_origin`) and their origins.
pub(crate) fn generate(mut body: Block, nargs: usize, results: &[Slot], ret_origin: Origin) -> (Vec<Instr>, Vec<Origin>) {
    let mut remat = HashMap::new();
    find_consts(&body, &mut remat);
    let mut lv = Liveness { remat: &remat };
    let mut live: HashSet<Slot> = results.iter().copied().filter(|s| !remat.contains_key(s)).collect();
    let res_dies = lv.uses(results, &mut HashSet::new());
    lv.block(&mut body, &mut live);
    let mut e = Emitter { code: Vec::new(), origins: Vec::new(), stack: (0..nargs as Slot).collect(), remat: &remat };
    e.pop_where(|s| !live.contains(&s), ret_origin);
    e.block(&body);
    e.place(results, &res_dies, ret_origin);
    debug_assert_eq!(e.stack, results.to_vec(), "stack at RET");
    e.push(Opcode::Ret.into(), ret_origin);
    (e.code, e.origins)
}

/// The scalar constants of a body, which are written at each use.
fn find_consts(b: &Block, out: &mut HashMap<Slot, Instr>) {
    for n in b {
        match n {
            Node::Op(o) => {
                if let Imm::Const(c) = &o.ins.imm {
                    let scalar = matches!(c, Const::Int(_, false) | Const::Float(_, false) | Const::Bool(_, false));
                    if scalar && o.res.len() == 1 {
                        out.insert(o.res[0], o.ins.clone());
                    }
                }
            }
            Node::If(i) => {
                find_consts(&i.then, out);
                find_consts(&i.els, out);
            }
        }
    }
}

struct Liveness<'a> {
    remat: &'a HashMap<Slot, Instr>,
}

impl Liveness<'_> {
    /// Marks the uses `slots` (in order) before a point where `live` is live; returns
    /// which of them are last uses and adds them to `live`.
    fn uses(&self, slots: &[Slot], live: &mut HashSet<Slot>) -> Vec<bool> {
        let mut dies = vec![false; slots.len()];
        for (i, s) in slots.iter().enumerate().rev() {
            if self.remat.contains_key(s) {
                continue;
            }
            dies[i] = live.insert(*s);
        }
        dies
    }

    /// Backwards over `b`: `live` holds the slots live after it, and on return those
    /// live before it.
    fn block(&mut self, b: &mut Block, live: &mut HashSet<Slot>) {
        for n in b.iter_mut().rev() {
            match n {
                Node::Op(o) => {
                    let used = o.res.iter().any(|r| live.contains(r));
                    if self.remat.contains_key(o.res.first().unwrap_or(&Slot::MAX)) || (!used && o.ins.removable_when_unused()) {
                        o.keep = false;
                        continue;
                    }
                    o.unused = o.res.iter().copied().filter(|r| !live.remove(r)).collect();
                    o.dies = self.uses(&o.args, live);
                }
                Node::If(i) => {
                    i.unused = i.res.iter().copied().filter(|r| !live.remove(r)).collect();
                    let mut t = live.clone();
                    i.then_dies = self.uses(&i.then_res, &mut t);
                    self.block(&mut i.then, &mut t);
                    let mut e = live.clone();
                    i.else_dies = self.uses(&i.else_res, &mut e);
                    self.block(&mut i.els, &mut e);
                    live.extend(t.iter().copied());
                    live.extend(e.iter().copied());
                    i.then_in = t;
                    i.els_in = e;
                    i.cond_dies = self.uses(&[i.cond], live)[0];
                }
            }
        }
    }
}

struct Emitter<'a> {
    code: Vec<Instr>,
    origins: Vec<Origin>,
    /// The slots on the stack, bottom first.
    stack: Vec<Slot>,
    remat: &'a HashMap<Slot, Instr>,
}

fn counts(op: Opcode, n: usize, d: usize) -> Instr {
    Instr { op, ty: None, imm: Imm::Counts(n as u32, d as u32) }
}

impl Emitter<'_> {
    /// Appends an instruction, merging a `COPY`, `CPOP` or `POP` of one slot into the
    /// previous one of the same kind when together they act on adjacent slots.
    fn push(&mut self, ins: Instr, o: Origin) {
        if let (Some(prev), Imm::Counts(1, e)) = (self.code.last_mut(), &ins.imm) {
            if let Imm::Counts(n, d) = prev.imm {
                let e = *e;
                let merged = match ins.op {
                    _ if prev.op != ins.op => None,
                    // After `COPY n d` (or `CPOP n d`) the slot that lay just above the
                    // block is at depth d - 1 + n.
                    Opcode::Copy | Opcode::Cpop if d >= 1 && e == d - 1 + n => Some((n + 1, d - 1)),
                    Opcode::Pop if e == d => Some((n + 1, d)),
                    Opcode::Pop if d >= 1 && e == d - 1 => Some((n + 1, d - 1)),
                    _ => None,
                };
                if let Some((n, d)) = merged {
                    prev.imm = Imm::Counts(n, d);
                    return;
                }
            }
        }
        self.code.push(ins);
        self.origins.push(o);
    }

    fn depth(&self, pos: usize) -> usize {
        self.stack.len() - 1 - pos
    }

    /// Pops every slot on the stack for which `dead` holds.
    fn pop_where(&mut self, dead: impl Fn(Slot) -> bool, o: Origin) {
        while let Some(p) = self.stack.iter().rposition(|&s| dead(s)) {
            let mut q = p;
            while q > 0 && dead(self.stack[q - 1]) {
                q -= 1;
            }
            let d = self.depth(p);
            self.push(counts(Opcode::Pop, p - q + 1, d), o);
            self.stack.drain(q..=p);
        }
    }

    /// Brings `args` to the top of the stack, in order: moved where `dies` says it is the
    /// last use, copied otherwise, written where a constant.
    fn place(&mut self, args: &[Slot], dies: &[bool], o: Origin) {
        let h = self.stack.len();
        // The longest run of dying operands that already lies on top, in order.
        let mut placed = (0..=args.len().min(h))
            .rev()
            .find(|&j| self.stack[h - j..] == args[..j] && dies[..j].iter().all(|&d| d))
            .unwrap_or(0);
        for (i, &s) in args.iter().enumerate().skip(placed) {
            if let Some(c) = self.remat.get(&s) {
                self.push(c.clone(), o);
                self.stack.push(s);
                placed += 1;
                continue;
            }
            let limit = self.stack.len() - placed;
            let Some(pos) = self.stack[..limit].iter().rposition(|&x| x == s) else {
                debug_assert!(false, "slot {s} is not on the stack");
                continue;
            };
            let d = self.depth(pos);
            if dies[i] {
                if d > 0 {
                    self.push(counts(Opcode::Cpop, 1, d), o);
                    self.stack.remove(pos);
                    self.stack.push(s);
                }
            } else {
                self.push(counts(Opcode::Copy, 1, d), o);
                self.stack.push(s);
            }
            placed += 1;
        }
    }

    fn block(&mut self, b: &Block) {
        for n in b {
            match n {
                Node::Op(op) => self.op(op),
                Node::If(i) => self.if_(i),
            }
        }
    }

    fn op(&mut self, op: &OpNode) {
        if !op.keep {
            return;
        }
        self.place(&op.args, &op.dies, op.origin);
        self.push(op.ins.clone(), op.origin);
        let h = self.stack.len() - op.args.len();
        self.stack.truncate(h);
        self.stack.extend_from_slice(&op.res);
        if !op.unused.is_empty() {
            self.pop_where(|s| op.unused.contains(&s), op.origin);
        }
    }

    fn if_(&mut self, i: &IfNode) {
        let [o_if, o_else, o_end] = i.origins;
        self.place(&[i.cond], &[i.cond_dies], o_if);
        self.push(Opcode::If.into(), o_if);
        self.stack.pop();
        let entry = self.stack.clone();
        self.pop_where(|s| !i.then_in.contains(&s), o_if);
        self.block(&i.then);
        self.place(&i.then_res, &i.then_dies, o_else);
        self.push(Opcode::Else.into(), o_else);
        let after_then = std::mem::replace(&mut self.stack, entry);
        self.pop_where(|s| !i.els_in.contains(&s), o_else);
        self.block(&i.els);
        self.place(&i.else_res, &i.else_dies, o_end);
        self.push(Opcode::EndIf.into(), o_end);
        debug_assert_eq!(
            after_then[..after_then.len() - i.then_res.len()],
            self.stack[..self.stack.len() - i.else_res.len()],
            "stack shapes of the branches"
        );
        let h = self.stack.len() - i.res.len();
        self.stack.truncate(h);
        self.stack.extend_from_slice(&i.res);
        if !i.unused.is_empty() {
            self.pop_where(|s| i.unused.contains(&s), o_end);
        }
    }
}
