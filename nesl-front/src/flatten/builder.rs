//! A builder for the body of one VCODE function.
//!
//! Code generation works with *slots*: names of single VCODE vectors, each defined once
//! (a function argument, an instruction's result, an `IF`'s merged result). An
//! operation names its operand slots and gets fresh result slots; structured
//! `IF`/`ELSE`/`ENDIF` blocks end each branch with the slots it yields. The builder
//! records this slot code and, when the function is finished, writes the stack code
//! for it ([`super::stack`]): every value dies at its last use, nothing dead stays on
//! the stack across a call, and an unused pure instruction is dropped.

/// A slot: the name of one vector of the function under construction.
pub(crate) type Slot = u32;

use super::stack::{Block, IfNode, Node, OpNode};
use vcode::{Const, Function, Instr, Opcode, Origin};

/// The code of one VCODE function under construction.
#[derive(Debug)]
pub(crate) struct FunBuilder {
    /// The block being written (the innermost open branch, or the body).
    code: Block,
    /// The `IF`s being written, innermost last.
    open: Vec<OpenIf>,
    /// The origin given to instructions recorded now ([`FunBuilder::set_origin`]).
    origin: Origin,
    /// Number of argument slots (`0..nargs`).
    nargs: usize,
    /// The next fresh slot id.
    next: Slot,
}

/// An `IF` whose branches are being written.
#[derive(Debug)]
struct OpenIf {
    cond: Slot,
    origins: [Origin; 3],
    /// The enclosing block, resumed at `ENDIF`.
    outer: Block,
    /// The finished then-part and its results.
    then: Option<(Block, Vec<Slot>)>,
}

/// What [`FunBuilder::begin_if`] returns: which open `IF` the branches belong to.
#[derive(Debug)]
pub(crate) struct IfMark {
    depth: usize,
}

impl FunBuilder {
    /// A builder for a function whose `nargs` argument slots lie on the stack on entry;
    /// returns them in order (deepest first).
    pub(crate) fn new(nargs: usize) -> (Self, Vec<Slot>) {
        let b = FunBuilder { code: Vec::new(), open: Vec::new(), origin: Origin::default(), nargs, next: nargs as Slot };
        (b, (0..nargs as Slot).collect())
    }

    fn fresh(&mut self) -> Slot {
        let s = self.next;
        self.next += 1;
        s
    }

    fn fresh_n(&mut self, n: usize) -> Vec<Slot> {
        (0..n).map(|_| self.fresh()).collect()
    }

    /// Sets the origin of the instructions recorded from now on; returns the previous one.
    pub(crate) fn set_origin(&mut self, o: Origin) -> Origin {
        std::mem::replace(&mut self.origin, o)
    }

    /// Appends one instruction that takes and leaves no slots (`START_TIMER`).
    pub(crate) fn emit(&mut self, ins: impl Into<Instr>) {
        self.record(ins.into(), &[], 0);
    }

    fn record(&mut self, ins: Instr, args: &[Slot], nres: usize) -> Vec<Slot> {
        let res = self.fresh_n(nres);
        self.code.push(Node::Op(OpNode::new(ins, args.to_vec(), res.clone(), self.origin)));
        res
    }

    /// Records `ins` on `args` and returns its fresh result slots; the numbers of
    /// operands and results come from the instruction table (use [`FunBuilder::call`]
    /// for `CALL`).
    pub(crate) fn op(&mut self, ins: impl Into<Instr>, args: &[Slot]) -> Vec<Slot> {
        let ins = ins.into();
        let (nin, nres) = ins.fixed_effect().unwrap_or((args.len(), 0));
        debug_assert_eq!(nin, args.len(), "operand count of {ins}");
        self.record(ins, args, nres)
    }

    /// `CALL f` on `args`, returning its `nres` result slots.
    pub(crate) fn call(&mut self, f: &str, args: &[Slot], nres: usize) -> Vec<Slot> {
        self.record(Instr::call(f), args, nres)
    }

    /// [`FunBuilder::op`] for an instruction with exactly one result.
    pub(crate) fn op1(&mut self, ins: impl Into<Instr>, args: &[Slot]) -> Slot {
        let r = self.op(ins, args);
        debug_assert_eq!(r.len(), 1);
        r[0]
    }

    /// Writes an INT slot as characters to the terminal (`WRITE CHAR`) and drops the
    /// status results.
    pub(crate) fn copy_write(&mut self, s: Slot) {
        self.op(Opcode::Write.t(vcode::Ty::Char), &[s]);
    }

    /// Writes `text` to the terminal (`CONST CHAR`, `WRITE CHAR`) and drops the status
    /// results.
    pub(crate) fn write_text(&mut self, text: &str) {
        let t = self.konst(Const::Char(text.into()));
        self.copy_write(t);
    }

    /// Stops the program with status 1 (`EXIT`), as a failed runtime check does.
    pub(crate) fn exit_failure(&mut self) {
        let one = self.konst(Const::int(1));
        // `EXIT` reads the status on top and leaves it there.
        self.record(Opcode::Exit.into(), &[one], 1);
    }

    /// Stops the program with `EXIT` on `status` (a failed check's record: see
    /// [`vcode::CheckFailure`]).
    pub(crate) fn exit_with(&mut self, status: Slot) {
        self.record(Opcode::Exit.into(), &[status], 1);
    }

    /// Records `CONST c` and returns its slot.
    pub(crate) fn konst(&mut self, c: Const) -> Slot {
        self.op1(Instr::konst(c), &[])
    }

    /// Starts `IF` on a BOOL scalar slot.
    pub(crate) fn begin_if(&mut self, cond: Slot) -> IfMark {
        let outer = std::mem::take(&mut self.code);
        self.open.push(OpenIf { cond, origins: [self.origin; 3], outer, then: None });
        IfMark { depth: self.open.len() }
    }

    /// Ends the then-part with `results` and starts the else-part.
    pub(crate) fn else_(&mut self, m: &mut IfMark, results: &[Slot]) {
        debug_assert_eq!(m.depth, self.open.len(), "ELSE of an inner IF");
        let then = std::mem::take(&mut self.code);
        let origin = self.origin;
        if let Some(o) = self.open.last_mut() {
            o.origins[1] = origin;
            o.then = Some((then, results.to_vec()));
        }
    }

    /// Ends the else-part with `results`; returns the fresh slots of the merged results.
    pub(crate) fn end_if(&mut self, m: IfMark, results: &[Slot]) -> Vec<Slot> {
        debug_assert_eq!(m.depth, self.open.len(), "ENDIF of an inner IF");
        let Some(mut o) = self.open.pop() else { return Vec::new() };
        o.origins[2] = self.origin;
        let els = std::mem::replace(&mut self.code, o.outer);
        let (then, then_res) = o.then.unwrap_or_default();
        debug_assert_eq!(then_res.len(), results.len());
        let res = self.fresh_n(results.len());
        self.code.push(Node::If(Box::new(IfNode::new(
            o.cond,
            o.origins,
            (then, then_res),
            (els, results.to_vec()),
            res.clone(),
        ))));
        res
    }

    /// Ends a then-part that terminated the program (`EXIT`) and closes the `IF` with
    /// an empty else-part.
    pub(crate) fn end_exit_if(&mut self, mut m: IfMark) {
        self.else_(&mut m, &[]);
        self.end_if(m, &[]);
    }

    /// Finishes the function: writes its stack code, which leaves exactly `results`
    /// (in order) and ends with `RET`.
    pub(crate) fn finish(self, name: &str, results: &[Slot]) -> Function {
        debug_assert!(self.open.is_empty(), "function finished inside an IF");
        let (code, origins) = super::stack::generate(self.code, self.nargs, results, self.origin);
        let mut f = Function::new(name, code);
        f.origins = origins;
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vcode::Ty;

    fn text(b: FunBuilder, name: &str, r: &[Slot]) -> String {
        b.finish(name, r).to_string()
    }

    #[test]
    fn last_uses_move_and_first_uses_copy() {
        let (mut b, args) = FunBuilder::new(2);
        let s = b.op1(Opcode::Add.t(Ty::Int), &[args[0], args[1]]);
        assert_eq!(text(b, "F", &[s]), "FUNC F\n+ INT\nRET\n");
        let (mut b, args) = FunBuilder::new(2);
        let s = b.op1(Opcode::Sub.t(Ty::Int), &[args[1], args[0]]);
        let t = b.op1(Opcode::Mul.t(Ty::Int), &[s, args[1]]);
        assert_eq!(text(b, "G", &[t]), "FUNC G\nCOPY 1 0\nCPOP 1 2\n- INT\nCPOP 1 1\n* INT\nRET\n");
    }

    #[test]
    fn unused_values_are_dropped_and_pure_dead_code_removed() {
        let (mut b, args) = FunBuilder::new(2);
        let one = b.konst(Const::int(1));
        let _dead = b.op1(Opcode::Add.t(Ty::Int), &[one, args[0]]);
        assert_eq!(text(b, "F", &[args[1]]), "FUNC F\nPOP 1 1\nRET\n");
    }

    #[test]
    fn if_blocks_keep_shape_and_tail_calls_see_only_their_arguments() {
        // f(i, acc) = if i == 0 then acc else f(i - 1, acc + i)
        let (mut b, a) = FunBuilder::new(2);
        let z = b.konst(Const::int(0));
        let c = b.op1(Opcode::Eq.t(Ty::Int), &[a[0], z]);
        let mut m = b.begin_if(c);
        b.else_(&mut m, &[a[1]]);
        let one = b.konst(Const::int(1));
        let i1 = b.op1(Opcode::Sub.t(Ty::Int), &[a[0], one]);
        let acc = b.op1(Opcode::Add.t(Ty::Int), &[a[1], a[0]]);
        let r = b.call("F", &[i1, acc], 1);
        let r = b.end_if(m, &r);
        let t = text(b, "F", &r);
        assert_eq!(
            t,
            "FUNC F\nCOPY 1 1\nCONST INT 0\n= INT\nIF\nPOP 1 1\nELSE\nCOPY 1 1\nCONST INT 1\n- INT\n\
             CPOP 1 1\nCPOP 1 2\n+ INT\nCALL F\nENDIF\nRET\n"
        );
    }

    #[test]
    fn exit_branches_stop_with_status_one() {
        let (mut b, a) = FunBuilder::new(1);
        let m = b.begin_if(a[0]);
        b.write_text("bad");
        b.exit_failure();
        b.end_exit_if(m);
        let t = text(b, "E", &[]);
        assert_eq!(t, "FUNC E\nIF\nCONST CHAR \"bad\"\nWRITE CHAR\nPOP 2 0\nCONST INT 1\nEXIT\nPOP 1 0\nELSE\nENDIF\nRET\n");
    }
}
