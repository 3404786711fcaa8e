//! A builder for the body of one VCODE function with a compile-time model of the stack.
//!
//! Code generation works with *slots*: named stack entries, each holding one VCODE
//! vector. An operation names its operand slots; the builder copies them to the top of
//! the stack (`COPY 1 d`), emits the instruction and records the results as fresh slots.
//! Values thus stay where they were made until the scope that made them ends: a scope
//! end ([`FunBuilder::collapse`]) moves the scope's results down and pops everything
//! else (`POP n r`). Structured `IF`/`ELSE`/`ENDIF` blocks leave the stack in the same
//! shape on both paths, as the VCODE verifier requires.

/// A stack slot: an identifier of one vector on the VCODE stack.
pub(crate) type Slot = u32;

use vcode::{Const, Function, Instr, Opcode, Origin};

/// The code of one VCODE function under construction and its stack model.
#[derive(Debug)]
pub(crate) struct FunBuilder {
    /// Emitted instructions.
    code: Vec<Instr>,
    /// The origin of each emitted instruction.
    origins: Vec<Origin>,
    /// The origin given to instructions emitted now ([`FunBuilder::set_origin`]).
    origin: Origin,
    /// The stack model, bottom to top.
    stack: Vec<Slot>,
    /// The next fresh slot id.
    next: Slot,
}

/// What [`FunBuilder::begin_if`] records: the stack height at the branch start.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IfMark {
    height: usize,
    results: Option<usize>,
}

impl FunBuilder {
    /// A builder for a function whose `nargs` argument slots lie on the stack on entry;
    /// returns them in order (deepest first).
    pub(crate) fn new(nargs: usize) -> (Self, Vec<Slot>) {
        let stack: Vec<Slot> = (0..nargs as Slot).collect();
        let b = FunBuilder {
            code: Vec::new(),
            origins: Vec::new(),
            origin: Origin::default(),
            stack: stack.clone(),
            next: nargs as Slot,
        };
        (b, stack)
    }

    fn fresh(&mut self) -> Slot {
        let s = self.next;
        self.next += 1;
        s
    }

    /// Sets the origin of the instructions emitted from now on; returns the previous one.
    pub(crate) fn set_origin(&mut self, o: Origin) -> Origin {
        std::mem::replace(&mut self.origin, o)
    }

    fn push(&mut self, ins: Instr) {
        self.code.push(ins);
        self.origins.push(self.origin);
    }

    /// Appends one raw instruction (the caller keeps the model right).
    pub(crate) fn emit(&mut self, ins: impl Into<Instr>) {
        self.push(ins.into());
    }

    /// The current height of the stack model.
    pub(crate) fn height(&self) -> usize {
        self.stack.len()
    }

    /// Copies `slots` to the top of the stack, in order (merging runs into one `COPY`).
    fn copy_to_top(&mut self, slots: &[Slot]) {
        let mut i = 0;
        while i < slots.len() {
            // A run of slots that lie consecutively on the stack, in order.
            let pos = |st: &[Slot], s: Slot| st.iter().rposition(|&x| x == s);
            let start = pos(&self.stack, slots[i]);
            let mut n = 1;
            if let Some(p) = start {
                while i + n < slots.len() && pos(&self.stack, slots[i + n]) == Some(p + n) {
                    n += 1;
                }
            }
            let d = match start {
                Some(p) => self.stack.len() - (p + n),
                None => 0,
            };
            self.push(Instr::copy(n as u32, d as u32));
            for k in 0..n {
                let s = slots[i + k];
                self.stack.push(s);
            }
            i += n;
        }
    }

    /// Emits `ins` on copies of `args` and returns its fresh result slots; the numbers
    /// of operands and results come from the instruction table (use
    /// [`FunBuilder::call`] for `CALL`).
    pub(crate) fn op(&mut self, ins: impl Into<Instr>, args: &[Slot]) -> Vec<Slot> {
        let ins = ins.into();
        let (nin, nres) = ins.fixed_effect().unwrap_or((args.len(), 0));
        debug_assert_eq!(nin, args.len(), "operand count of {ins}");
        self.emit_on(ins, args, nres)
    }

    /// `CALL f` on copies of `args`, returning its `nres` result slots.
    pub(crate) fn call(&mut self, f: &str, args: &[Slot], nres: usize) -> Vec<Slot> {
        self.emit_on(Instr::call(f), args, nres)
    }

    fn emit_on(&mut self, ins: Instr, args: &[Slot], nres: usize) -> Vec<Slot> {
        self.copy_to_top(args);
        self.push(ins);
        let h = self.stack.len() - args.len();
        self.stack.truncate(h);
        (0..nres)
            .map(|_| {
                let s = self.fresh();
                self.stack.push(s);
                s
            })
            .collect()
    }

    /// [`FunBuilder::op`] for an instruction with exactly one result.
    pub(crate) fn op1(&mut self, ins: impl Into<Instr>, args: &[Slot]) -> Slot {
        let r = self.op(ins, args);
        debug_assert_eq!(r.len(), 1);
        r[0]
    }

    /// Writes a copy of an INT slot as characters to the terminal (`WRITE CHAR`) and
    /// drops the status results.
    pub(crate) fn copy_write(&mut self, s: Slot) {
        self.copy_to_top(&[s]);
        self.push(Opcode::Write.t(vcode::Ty::Char));
        self.push(Instr::pop(2, 0));
        self.stack.pop();
    }

    /// Writes `text` to the terminal (`CONST CHAR`, `WRITE CHAR`) and drops the status
    /// results.
    pub(crate) fn write_text(&mut self, text: &str) {
        self.push(Instr::konst(Const::Char(text.into())));
        self.push(Opcode::Write.t(vcode::Ty::Char));
        self.push(Instr::pop(2, 0));
    }

    /// Stops the program with status 1 (`EXIT`), as a failed runtime check does.
    pub(crate) fn exit_failure(&mut self) {
        self.push(Instr::konst(Const::int(1)));
        self.push(Opcode::Exit.into());
        self.push(Instr::pop(1, 0));
    }

    /// Emits `CONST c` and returns its slot.
    pub(crate) fn konst(&mut self, c: Const) -> Slot {
        self.op1(Instr::konst(c), &[])
    }

    /// Ends a scope that began at stack height `mark`: leaves exactly `results` (in
    /// order) above `mark` and drops everything else above it.
    pub(crate) fn collapse(&mut self, mark: usize, results: &[Slot]) {
        let r = results.len();
        if self.stack.len() >= mark && self.stack[mark..] == *results {
            return;
        }
        let h = self.stack.len();
        let top_ok = h >= mark + r && self.stack[h - r..] == *results;
        if !top_ok {
            self.copy_to_top(results);
        }
        let h = self.stack.len();
        let k = h - r - mark;
        if k > 0 {
            self.push(Instr::pop(k as u32, r as u32));
        }
        self.stack.truncate(mark);
        self.stack.extend_from_slice(results);
    }

    /// Starts `IF` on a BOOL scalar slot.
    pub(crate) fn begin_if(&mut self, cond: Slot) -> IfMark {
        self.copy_to_top(&[cond]);
        self.push(Opcode::If.into());
        self.stack.pop();
        IfMark { height: self.stack.len(), results: None }
    }

    /// Ends the then-part with `results` and starts the else-part.
    pub(crate) fn else_(&mut self, m: &mut IfMark, results: &[Slot]) {
        self.collapse(m.height, results);
        self.push(Opcode::Else.into());
        self.stack.truncate(m.height);
        m.results = Some(results.len());
    }

    /// Ends the else-part with `results`; returns the fresh slots of the merged results.
    pub(crate) fn end_if(&mut self, m: IfMark, results: &[Slot]) -> Vec<Slot> {
        debug_assert_eq!(m.results, Some(results.len()));
        self.collapse(m.height, results);
        self.push(Opcode::EndIf.into());
        self.stack.truncate(m.height);
        (0..results.len())
            .map(|_| {
                let s = self.fresh();
                self.stack.push(s);
                s
            })
            .collect()
    }

    /// Ends a then-part that terminated the program (`EXIT`) and closes the `IF` with
    /// an empty else-part.
    pub(crate) fn end_exit_if(&mut self, m: IfMark) {
        self.collapse(m.height, &[]);
        self.push(Opcode::Else.into());
        self.push(Opcode::EndIf.into());
        self.stack.truncate(m.height);
    }

    /// Finishes the function: `results` become the only stack contents, then `RET`.
    pub(crate) fn finish(mut self, name: &str, results: &[Slot]) -> Function {
        self.collapse(0, results);
        self.push(Opcode::Ret.into());
        let mut f = Function::new(name, self.code);
        f.origins = self.origins;
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vcode::Ty;

    #[test]
    fn copies_and_collapses() {
        let (mut b, args) = FunBuilder::new(2);
        let s = b.op1(Opcode::Add.t(Ty::Int), &[args[0], args[1]]);
        let text = b.finish("F", &[s]).to_string();
        assert_eq!(text, "FUNC F\nCOPY 2 0\n+ INT\nPOP 2 1\nRET\n");
    }

    #[test]
    fn if_blocks_keep_shape() {
        let (mut b, args) = FunBuilder::new(1);
        let c = b.konst(Const::bool(true));
        let mut m = b.begin_if(c);
        let one = b.konst(Const::int(1));
        b.else_(&mut m, &[one]);
        let r = b.end_if(m, &[args[0]]);
        assert_eq!(b.height(), 3);
        let text = b.finish("G", &r).to_string();
        assert!(text.contains("IF\nCONST INT 1\nELSE\nCOPY 1 1\nENDIF\n"), "{text}");
        assert!(text.ends_with("POP 2 1\nRET\n"), "{text}");
    }
}
