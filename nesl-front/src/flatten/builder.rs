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

/// The code of one VCODE function under construction and its stack model.
#[derive(Debug)]
pub(crate) struct FunBuilder {
    /// Emitted instruction lines.
    code: Vec<String>,
    /// The stack model, bottom to top.
    stack: Vec<Slot>,
    /// The next fresh slot id.
    next: Slot,
    /// Placeholder `CONST`s filled from outside ([`FunBuilder::konst_external`]):
    /// `(index in code, external constant id)`.
    external: Vec<(usize, usize)>,
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
        let b = FunBuilder { code: Vec::new(), stack: stack.clone(), next: nargs as Slot, external: Vec::new() };
        (b, stack)
    }

    fn fresh(&mut self) -> Slot {
        let s = self.next;
        self.next += 1;
        s
    }

    /// Appends one raw instruction line (the caller keeps the model right).
    pub(crate) fn emit(&mut self, line: impl Into<String>) {
        self.code.push(line.into());
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
            self.code.push(format!("COPY {n} {d}"));
            for k in 0..n {
                let s = slots[i + k];
                self.stack.push(s);
            }
            i += n;
        }
    }

    /// Emits `instr` on copies of `args` and returns its `nres` fresh result slots.
    pub(crate) fn op(&mut self, instr: &str, args: &[Slot], nres: usize) -> Vec<Slot> {
        self.copy_to_top(args);
        self.code.push(instr.to_string());
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

    /// [`FunBuilder::op`] with exactly one result.
    pub(crate) fn op1(&mut self, instr: &str, args: &[Slot]) -> Slot {
        self.op(instr, args, 1)[0]
    }

    /// Writes a copy of an INT slot as characters to the terminal (`WRITE CHAR`) and
    /// drops the status results.
    pub(crate) fn copy_write(&mut self, s: Slot) {
        self.copy_to_top(&[s]);
        self.code.push("WRITE CHAR".into());
        self.code.push("POP 2 0".into());
        self.stack.pop();
    }

    /// Emits `CONST <text>` and returns its slot.
    pub(crate) fn konst(&mut self, text: &str) -> Slot {
        self.op1(&format!("CONST {text}"), &[])
    }

    /// Emits a placeholder `CONST <ty> ()` whose value is passed beside the program text
    /// as external constant `id` (see `vcode::Program::fill_consts`); returns its slot.
    pub(crate) fn konst_external(&mut self, ty: &str, id: usize) -> Slot {
        let s = self.konst(&format!("{ty} ()"));
        self.external.push((self.code.len() - 1, id));
        s
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
            self.code.push(format!("POP {k} {r}"));
        }
        self.stack.truncate(mark);
        self.stack.extend_from_slice(results);
    }

    /// Starts `IF` on a BOOL scalar slot.
    pub(crate) fn begin_if(&mut self, cond: Slot) -> IfMark {
        self.copy_to_top(&[cond]);
        self.code.push("IF".into());
        self.stack.pop();
        IfMark { height: self.stack.len(), results: None }
    }

    /// Ends the then-part with `results` and starts the else-part.
    pub(crate) fn else_(&mut self, m: &mut IfMark, results: &[Slot]) {
        self.collapse(m.height, results);
        self.code.push("ELSE".into());
        self.stack.truncate(m.height);
        m.results = Some(results.len());
    }

    /// Ends the else-part with `results`; returns the fresh slots of the merged results.
    pub(crate) fn end_if(&mut self, m: IfMark, results: &[Slot]) -> Vec<Slot> {
        debug_assert_eq!(m.results, Some(results.len()));
        self.collapse(m.height, results);
        self.code.push("ENDIF".into());
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
        self.code.push("ELSE".into());
        self.code.push("ENDIF".into());
        self.stack.truncate(m.height);
    }

    /// Finishes the function: `results` become the only stack contents, then `RET`.
    /// Returns the text `FUNC name ... RET`.
    pub(crate) fn finish(self, name: &str, results: &[Slot]) -> String {
        let (text, external) = self.finish_external(name, results);
        debug_assert!(external.is_empty(), "external constants dropped: use finish_external");
        text
    }

    /// [`FunBuilder::finish`], also returning the external constants as `(line, id)`,
    /// the line counted from 0 at the `FUNC` line.
    pub(crate) fn finish_external(mut self, name: &str, results: &[Slot]) -> (String, Vec<(usize, usize)>) {
        self.collapse(0, results);
        // Lines, not instructions: a `CONST CHAR` string may hold newlines.
        let line_of = |i: usize| 1 + i + self.code[..i].iter().map(|l| l.matches('\n').count()).sum::<usize>();
        let external = self.external.iter().map(|&(i, id)| (line_of(i), id)).collect();
        let mut out = String::with_capacity(self.code.len() * 12 + 32);
        out.push_str("FUNC ");
        out.push_str(name);
        out.push('\n');
        for line in &self.code {
            out.push_str(line);
            out.push('\n');
        }
        out.push_str("RET\n");
        (out, external)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_and_collapses() {
        let (mut b, args) = FunBuilder::new(2);
        let s = b.op1("+ INT", &[args[0], args[1]]);
        let text = b.finish("F", &[s]);
        assert_eq!(text, "FUNC F\nCOPY 2 0\n+ INT\nPOP 2 1\nRET\n");
    }

    #[test]
    fn if_blocks_keep_shape() {
        let (mut b, args) = FunBuilder::new(1);
        let c = b.konst("BOOL T");
        let mut m = b.begin_if(c);
        let one = b.konst("INT 1");
        b.else_(&mut m, &[one]);
        let r = b.end_if(m, &[args[0]]);
        assert_eq!(b.height(), 3);
        let text = b.finish("G", &r);
        assert!(text.contains("IF\nCONST INT 1\nELSE\nCOPY 1 1\nENDIF\n"), "{text}");
        assert!(text.ends_with("POP 2 1\nRET\n"), "{text}");
    }
}
