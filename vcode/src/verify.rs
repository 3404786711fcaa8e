//! The verifier: stack effects and operand types of every function, before running.
//!
//! VCODE functions have no declared signatures (the callee sees the caller's whole
//! stack), so the verifier infers one per function by running its body on an abstract
//! stack: slots are known types, or *inputs* (slot `k` below the stack top at entry)
//! whose type is inferred from their uses. A `CALL` applies the callee's inferred
//! signature (its outputs may pass inputs through). Recursive functions are handled by
//! iterating to a fixed point: a call whose callee has no signature yet makes that path
//! unknown, and an `IF` takes its signature from the branch that is known. The two
//! branches of an `IF` must leave stacks of the same depth and types. The entry
//! function starts with an empty stack, so any reach below it is a stack underflow.
//! Every problem is reported, each with its function, instruction and position.
//!
//! [`analyze`] returns what the verifier inferred ([`Analysis`]: every function's inputs,
//! their types, its results and its deepest stack), so that later stages (the optimiser's
//! stack→let conversion) do not infer it again.

use crate::cvl::VType;
use crate::ir::{Function, Imm, Program};
use crate::op::{Effect, Exec, SlotTy};
use std::collections::HashMap;
use std::fmt;

/// A problem found by [`verify`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyError {
    /// The function.
    pub function: String,
    /// Index of the instruction in the function body (0-based).
    pub index: usize,
    /// The instruction as written.
    pub instr: String,
    /// 1-based line of the instruction.
    pub line: u32,
    /// 1-based column.
    pub col: u32,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: in function {}, instruction {} (`{}`): {}",
            self.line, self.col, self.function, self.index, self.instr, self.message
        )
    }
}

impl std::error::Error for VerifyError {}

/// An abstract stack slot, as the verifier sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum Slot {
    /// A slot of this type.
    Known(SlotTy),
    /// The `k`-th slot below the top of the stack at function entry (0 = the top),
    /// passed through unchanged.
    Input(usize),
    /// A `PAIR` of two slots.
    Pair(Box<Slot>, Box<Slot>),
    /// Anything (after an error, or an input of unknown type passed through).
    Any,
}

use Slot as S;

/// The deepest a `COPY`, `POP` or `CPOP` may reach (`n + d`): far beyond any compiled
/// program's stack, small enough that modelling a stack that deep is cheap.
pub const MAX_REACH: usize = 1 << 20;

/// What the verifier inferred about one function: its stack signature.
#[derive(Debug, Clone, PartialEq)]
pub struct FunctionInfo {
    /// Number of caller slots the function consumes (always 0 for the entry function,
    /// which starts on an empty stack).
    pub inputs: usize,
    /// The inferred type of each consumed slot, indexed by depth below the caller's top
    /// of stack at the call (`input_types[0]` is the top); `None`: unconstrained.
    pub input_types: Vec<Option<SlotTy>>,
    /// The result slots, bottom first (the consumed slots are replaced by these; an
    /// [`Slot::Input`] is an input passed through). `None` when the function never
    /// returns (every path ends in `EXIT` or in a call that never returns).
    pub outputs: Option<Vec<Slot>>,
    /// The most slots the function's part of the stack holds at once (its inputs
    /// included), over every path.
    pub max_depth: usize,
}

impl FunctionInfo {
    /// Number of result slots, `None` when the function never returns.
    pub fn output_count(&self) -> Option<usize> {
        self.outputs.as_ref().map(Vec::len)
    }
}

/// The result of [`analyze`]: one [`FunctionInfo`] per function of the program, in the
/// order of [`Program::functions`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Analysis {
    /// Per function, indexed as `Program::functions`.
    pub functions: Vec<FunctionInfo>,
}

type Sig = FunctionInfo;

#[derive(Debug, Clone)]
struct State {
    stack: Vec<S>,
    consumed: usize,
    /// False on a path whose stack is unknown (after `EXIT`, or a call to a function
    /// with no signature yet).
    live: bool,
}

struct IfFrame {
    start: State,
    then_end: Option<State>,
}

struct Checker<'a> {
    prog: &'a Program,
    /// [`Program::function_index`] of `prog`.
    index: &'a HashMap<&'a str, usize>,
    sigs: &'a [Option<Sig>],
    func: &'a Function,
    entry: bool,
    in_types: Vec<Option<SlotTy>>,
    errors: Vec<VerifyError>,
    at: usize,
    max_depth: usize,
}

fn slot_text(s: &S, in_types: &[Option<SlotTy>]) -> String {
    match s {
        S::Known(t) => t.name().to_string(),
        S::Input(k) => match in_types.get(*k).copied().flatten() {
            Some(t) => t.name().to_string(),
            None => format!("input {k}"),
        },
        S::Pair(a, b) => format!("PAIR({}, {})", slot_text(a, in_types), slot_text(b, in_types)),
        S::Any => "unknown".to_string(),
    }
}

impl Checker<'_> {
    fn error(&mut self, msg: String) {
        let i = self.at;
        let pos = self.func.pos_of(i);
        self.errors.push(VerifyError {
            function: self.func.name.clone(),
            index: i,
            instr: self.func.body.get(i).map(|x| x.to_string()).unwrap_or_default(),
            line: pos.line,
            col: pos.col,
            message: msg,
        });
    }

    /// Makes sure the stack has `k` slots, pulling inputs from below.
    fn ensure(&mut self, st: &mut State, k: usize) {
        if st.stack.len() >= k {
            return;
        }
        let missing = k - st.stack.len();
        if self.entry {
            self.error(format!(
                "stack underflow: needs {k} slots, the stack holds {}",
                st.stack.len()
            ));
            st.stack.splice(0..0, std::iter::repeat_n(S::Any, missing));
            return;
        }
        // The deepest new slot is the last input consumed. One splice: inserting slot by
        // slot is quadratic in the depth a `COPY n d` reaches.
        let first = st.consumed;
        st.stack.splice(0..0, (first..first + missing).rev().map(S::Input));
        st.consumed += missing;
        if self.in_types.len() < st.consumed {
            self.in_types.resize(st.consumed, None);
        }
    }

    /// Checks that `s` can be a `want`; constrains inputs.
    fn expect(&mut self, s: &S, want: SlotTy, what: &str) {
        match s {
            S::Known(t) if *t == want => {}
            S::Any => {}
            S::Input(k) => match self.in_types[*k] {
                None => self.in_types[*k] = Some(want),
                Some(t) if t == want => {}
                Some(t) => self.error(format!("{what} should be {}, found {}", want.name(), t.name())),
            },
            other => {
                let found = slot_text(other, &self.in_types);
                self.error(format!("{what} should be {}, found {found}", want.name()))
            }
        }
    }

    fn merge(&mut self, mut a: State, mut b: State) -> State {
        // Give both the same number of consumed inputs (a path that never returns still
        // consumed what it reached).
        let (ca, cb) = (a.consumed, b.consumed);
        for (x, y) in [(&mut a, cb), (&mut b, ca)] {
            if x.consumed < y {
                let first = x.consumed;
                x.stack.splice(0..0, (first..y).rev().map(S::Input));
                x.consumed = y;
            }
        }
        if !a.live {
            return b;
        }
        if !b.live {
            return a;
        }
        if a.stack.len() != b.stack.len() {
            self.error(format!(
                "the branches of this IF leave different stack depths (then: {}, else: {})",
                a.stack.len() as i64 - a.consumed as i64,
                b.stack.len() as i64 - b.consumed as i64
            ));
            return State { live: false, ..a };
        }
        let mut out = Vec::with_capacity(a.stack.len());
        for (i, (x, y)) in a.stack.iter().zip(&b.stack).enumerate() {
            let depth = a.stack.len() - 1 - i;
            let m = match (x, y) {
                _ if x == y => x.clone(),
                (S::Any, _) | (_, S::Any) => S::Any,
                (S::Known(t), other @ S::Input(_)) | (other @ S::Input(_), S::Known(t)) => {
                    let t = *t;
                    self.expect(other, t, &format!("the slot at depth {depth} after this IF"));
                    S::Known(t)
                }
                (S::Input(p), S::Input(q)) => match (self.in_types[*p], self.in_types[*q]) {
                    (Some(s), Some(t)) if s == t => S::Known(s),
                    (Some(s), None) | (None, Some(s)) => {
                        self.in_types[*p] = Some(s);
                        self.in_types[*q] = Some(s);
                        S::Known(s)
                    }
                    (None, None) => S::Any,
                    _ => {
                        self.error(format!("the branches of this IF leave different types at depth {depth}"));
                        S::Any
                    }
                },
                _ => {
                    let (sx, sy) = (slot_text(x, &self.in_types), slot_text(y, &self.in_types));
                    self.error(format!(
                        "the branches of this IF leave different types at depth {depth} (then: {sx}, else: {sy})"
                    ));
                    S::Any
                }
            };
            out.push(m);
        }
        State { stack: out, consumed: a.consumed, live: true }
    }

    fn run(&mut self) -> Option<Sig> {
        let mut st = State { stack: Vec::new(), consumed: 0, live: true };
        let mut ifs: Vec<IfFrame> = Vec::new();
        for (i, ins) in self.func.body.iter().enumerate() {
            self.at = i;
            let info = ins.op.info();
            // Structure first: it matters even on dead paths.
            match info.exec {
                Exec::Else => {
                    if let Some(fr) = ifs.last_mut() {
                        fr.then_end = Some(std::mem::replace(&mut st, fr.start.clone()));
                    }
                    continue;
                }
                Exec::EndIf => {
                    if let Some(fr) = ifs.pop() {
                        st = match fr.then_end {
                            Some(t) => self.merge(t, st),
                            None => self.merge(st, fr.start),
                        };
                    }
                    continue;
                }
                Exec::Ret => break,
                _ => {}
            }
            if !st.live {
                if info.exec == Exec::If {
                    ifs.push(IfFrame { start: st.clone(), then_end: None });
                }
                continue;
            }
            match info.effect {
                Effect::Fixed(ins_p, outs_p) => {
                    self.ensure(&mut st, ins_p.len());
                    let base = st.stack.len() - ins_p.len();
                    for (k, p) in ins_p.iter().enumerate() {
                        let slot = st.stack[base + k].clone();
                        if let Some(want) = p.resolve(ins.ty) {
                            self.expect(&slot, want, &format!("operand {}", k + 1));
                        }
                    }
                    st.stack.truncate(base);
                    for p in outs_p {
                        st.stack.push(p.resolve(ins.ty).map_or(S::Any, S::Known));
                    }
                }
                Effect::Special => self.special(&mut st, &mut ifs, ins),
            }
            self.max_depth = self.max_depth.max(st.stack.len());
        }
        if !ifs.is_empty() {
            self.error("`IF` without `ENDIF`".to_string());
        }
        // The function's signature even when it never returns (its callers need the
        // inputs). In the first rounds of a recursion a path through a call to a function
        // with no signature yet counts as not returning; the rounds go on to a fixed point.
        let mut in_types = self.in_types.clone();
        in_types.resize(st.consumed, None);
        Some(Sig { inputs: st.consumed, input_types: in_types, outputs: st.live.then_some(st.stack), max_depth: self.max_depth })
    }

    fn special(&mut self, st: &mut State, ifs: &mut Vec<IfFrame>, ins: &crate::ir::Instr) {
        match (ins.op.info().exec, &ins.imm) {
            (Exec::Copy | Exec::Pop | Exec::Cpop, Imm::Counts(n, d)) => {
                let (n, d) = (*n as usize, *d as usize);
                if n + d > MAX_REACH {
                    // Checked before the stack model grows to that depth (which could
                    // need more memory than the machine has).
                    self.error(format!(
                        "reaches {} slots below the top of the stack; no VCODE stack here holds more than {MAX_REACH}",
                        n + d
                    ));
                    return;
                }
                self.ensure(st, n + d);
                let start = st.stack.len() - n - d;
                match ins.op.info().exec {
                    Exec::Copy => st.stack.extend_from_within(start..start + n),
                    Exec::Pop => {
                        st.stack.drain(start..start + n);
                    }
                    _ => {
                        let moved: Vec<S> = st.stack.drain(start..start + n).collect();
                        st.stack.extend(moved);
                    }
                }
            }
            (Exec::Pair, _) => {
                self.ensure(st, 2);
                let b = st.stack.pop().unwrap_or(S::Any);
                let a = st.stack.pop().unwrap_or(S::Any);
                st.stack.push(S::Pair(Box::new(a), Box::new(b)));
            }
            (Exec::Unpair, _) => {
                self.ensure(st, 1);
                match st.stack.pop().unwrap_or(S::Any) {
                    S::Pair(a, b) => {
                        st.stack.push(*a);
                        st.stack.push(*b);
                    }
                    S::Any | S::Input(_) => {
                        st.stack.push(S::Any);
                        st.stack.push(S::Any);
                    }
                    other => {
                        let t = slot_text(&other, &self.in_types);
                        self.error(format!("UNPAIR needs a pair, found {t}"));
                        st.stack.push(S::Any);
                        st.stack.push(S::Any);
                    }
                }
            }
            (Exec::If, _) => {
                self.ensure(st, 1);
                let flag = st.stack.pop().unwrap_or(S::Any);
                self.expect(&flag, SlotTy::Vec(crate::VType::Bool), "the IF condition");
                ifs.push(IfFrame { start: st.clone(), then_end: None });
            }
            (Exec::Exit, _) => st.live = false,
            (Exec::Const, Imm::Const(c)) => st.stack.push(S::Known(c.ty().slot())),
            (Exec::Call, Imm::Label(l)) => {
                let Some(&callee) = self.index.get(l.as_str()) else {
                    self.error(format!("call to undefined function `{l}`"));
                    st.live = false;
                    return;
                };
                let Some(sig) = self.sigs[callee].clone() else {
                    st.live = false;
                    return;
                };
                self.ensure(st, sig.inputs);
                let base = st.stack.len() - sig.inputs;
                let args: Vec<S> = st.stack[base..].to_vec();
                // Input k of the callee is the k-th slot from the top.
                let arg = |k: usize| args.get(args.len().wrapping_sub(1 + k)).cloned().unwrap_or(S::Any);
                for (k, t) in sig.input_types.iter().enumerate() {
                    if let Some(t) = t {
                        self.expect(&arg(k), *t, &format!("argument slot {k} (from the top) of `{l}`"));
                    }
                }
                fn subst(s: &S, arg: &dyn Fn(usize) -> S) -> S {
                    match s {
                        S::Input(k) => arg(*k),
                        S::Pair(a, b) => S::Pair(Box::new(subst(a, arg)), Box::new(subst(b, arg))),
                        other => other.clone(),
                    }
                }
                st.stack.truncate(base);
                match &sig.outputs {
                    Some(outs) => {
                        for o in outs {
                            st.stack.push(subst(o, &arg));
                        }
                    }
                    None => st.live = false,
                }
            }
            (Exec::Fused, Imm::Index(k)) => {
                let Some(op) = self.prog.superops.get(*k as usize) else {
                    self.error(format!("no superoperator {k}"));
                    st.live = false;
                    return;
                };
                let n = op.params.len();
                self.ensure(st, n);
                let base = st.stack.len() - n;
                for (i, p) in op.params.iter().enumerate() {
                    let slot = st.stack[base + i].clone();
                    self.expect(&slot, p.slot(), &format!("superoperator operand ${i}"));
                }
                st.stack.truncate(base);
                let t = match op.result_type() {
                    Ok(t) => S::Known(SlotTy::Vec(t)),
                    Err(m) => {
                        self.error(format!("superoperator {k} is ill-typed: {m}"));
                        S::Any
                    }
                };
                if let Some(p) = &op.pack {
                    // A packed vector and its segment descriptor per flag tree.
                    for _ in &p.flags {
                        st.stack.push(t.clone());
                        st.stack.push(S::Known(SlotTy::Segdes));
                    }
                    return;
                }
                st.stack.push(t);
                for e in &op.more {
                    st.stack.push(match e.result_type(&op.params) {
                        Ok(t) => S::Known(SlotTy::Vec(t)),
                        Err(_) => S::Any,
                    });
                }
                if op.guard.is_some() {
                    st.stack.push(S::Known(SlotTy::Vec(VType::Bool)));
                }
            }
            _ => self.error("malformed instruction (missing or wrong immediate)".to_string()),
        }
    }
}

fn check_all(p: &Program, index: &HashMap<&str, usize>, sigs: &[Option<Sig>], collect: bool) -> (Vec<Option<Sig>>, Vec<VerifyError>) {
    let mut out = Vec::with_capacity(p.functions.len());
    let mut errors = Vec::new();
    for i in 0..p.functions.len() {
        let (sig, mut errs) = check_one(p, index, sigs, i);
        out.push(sig);
        if collect {
            errors.append(&mut errs);
        }
    }
    (out, errors)
}

/// Checks function `i` given the signatures `sigs` of all: its signature and problems.
fn check_one(p: &Program, index: &HashMap<&str, usize>, sigs: &[Option<Sig>], i: usize) -> (Option<Sig>, Vec<VerifyError>) {
    let mut c = Checker {
        prog: p,
        index,
        sigs,
        func: &p.functions[i],
        entry: i == p.entry(),
        in_types: Vec::new(),
        errors: Vec::new(),
        at: 0,
        max_depth: 0,
    };
    let sig = c.run();
    (sig, c.errors)
}

/// The functions each function calls (resolved as `CALL` resolves them), without repeats.
fn callees(p: &Program, index: &HashMap<&str, usize>) -> Vec<Vec<usize>> {
    p.functions
        .iter()
        .map(|f| {
            let mut out: Vec<usize> = Vec::new();
            for ins in &f.body {
                if let Imm::Label(l) = &ins.imm {
                    if let Some(&c) = index.get(l.as_str()) {
                        if !out.contains(&c) {
                            out.push(c);
                        }
                    }
                }
            }
            out
        })
        .collect()
}

/// The signatures at the fixed point (or once they fail to settle), the problems found
/// with them, and whether they settled.
///
/// A worklist: callees are checked before their callers (a depth-first post-order of the
/// call graph) and a function is checked again only when the signature of one it calls
/// changed, so a chain of n calls settles in O(n) checks, not n rounds over every
/// function. A function whose signature changes more than n + 2 times belongs to a
/// recursion that does not settle.
fn infer(p: &Program) -> (Vec<Option<Sig>>, Vec<VerifyError>, bool) {
    let n = p.functions.len();
    let index = p.function_index();
    let calls = callees(p, &index);
    let mut callers: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (f, cs) in calls.iter().enumerate() {
        for &c in cs {
            callers[c].push(f);
        }
    }
    // Post-order of the call graph, without recursion (a chain may be 100,000 deep).
    let mut order = Vec::with_capacity(n);
    let mut visited = vec![false; n];
    for root in 0..n {
        if visited[root] {
            continue;
        }
        visited[root] = true;
        let mut stack = vec![(root, 0usize)];
        while let Some(&mut (f, ref mut next)) = stack.last_mut() {
            if let Some(&c) = calls[f].get(*next) {
                *next += 1;
                if !visited[c] {
                    visited[c] = true;
                    stack.push((c, 0));
                }
            } else {
                order.push(f);
                stack.pop();
            }
        }
    }
    let mut sigs: Vec<Option<Sig>> = vec![None; n];
    let mut queued = vec![true; n];
    let mut work: std::collections::VecDeque<usize> = order.into_iter().collect();
    let mut changes = vec![0usize; n];
    while let Some(f) = work.pop_front() {
        queued[f] = false;
        let (sig, _) = check_one(p, &index, &sigs, f);
        if sig != sigs[f] {
            sigs[f] = sig;
            changes[f] += 1;
            if changes[f] > n + 2 {
                break;
            }
            for &c in &callers[f] {
                if !queued[c] {
                    queued[c] = true;
                    work.push_back(c);
                }
            }
        }
    }
    let (last, errors) = check_all(p, &index, &sigs, true);
    let settled = last == sigs;
    (last, errors, settled)
}

/// Checks every function's stack effects and operand types; reports every problem.
pub fn verify(p: &Program) -> Result<(), Vec<VerifyError>> {
    let (_, errors, _) = infer(p);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// [`verify`], returning what it inferred: every function's signature ([`Analysis`]).
/// Besides the problems [`verify`] reports, it fails when the signatures of mutually
/// recursive functions do not settle.
pub fn analyze(p: &Program) -> Result<Analysis, Vec<VerifyError>> {
    let (last, errors, settled) = infer(p);
    if !errors.is_empty() {
        return Err(errors);
    }
    if !settled {
        let f = p.functions.first();
        return Err(vec![VerifyError {
            function: String::new(),
            index: 0,
            instr: String::new(),
            line: f.map_or(0, |f| f.pos.line),
            col: f.map_or(0, |f| f.pos.col),
            message: "the stack signatures of the functions do not settle (inconsistent recursion)".into(),
        }]);
    }
    let functions = last
        .into_iter()
        .map(|s| s.unwrap_or(Sig { inputs: 0, input_types: Vec::new(), outputs: None, max_depth: 0 }))
        .collect();
    Ok(Analysis { functions })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errs(src: &str) -> Vec<String> {
        let p = crate::parse(src).expect("parses");
        match verify(&p) {
            Ok(()) => Vec::new(),
            Err(e) => e.iter().map(|e| e.to_string()).collect(),
        }
    }

    #[test]
    fn accepts_recursion_and_passthrough() {
        let fact = "FUNC MAIN\nCONST INT 5\nCALL FACT\nRET\nFUNC FACT\nCOPY 1 0\nCONST INT 1\n<= INT\nIF\nPOP 1 0\nCONST INT 1\nELSE\nCOPY 1 0\nCONST INT 1\n- INT\nCALL FACT\n* INT\nENDIF\nRET\n";
        assert_eq!(errs(fact), Vec::<String>::new());
        let swap = "FUNC MAIN\nCONST INT 1\nCONST FLOAT 2.0\nCALL SWAP\n+ INT\nRET\nFUNC SWAP\nCPOP 1 1\nRET\n";
        let e = errs(swap);
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].contains("operand 1 should be INT, found FLOAT"), "{e:?}");
    }

    #[test]
    fn reports_underflow_and_types() {
        let e = errs("FUNC MAIN\nCONST INT 1\n+ INT\nCONST FLOAT 1.0\nCONST INT 2\n* FLOAT\nRET\n");
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(e[0].starts_with("3:1: in function MAIN, instruction 1 (`+ INT`): stack underflow"));
        assert!(e[1].contains("operand 2 should be FLOAT, found INT"));
    }

    #[test]
    fn deep_stack_reaches_are_linear() {
        // A callee reaching 400,000 slots deep, and an entry function underflowing by as
        // much: inserting the missing slots one at a time made this take minutes.
        let deep = "FUNC MAIN\nCONST INT 1\nCALL DEEP\nCPOP 200000 200000\nRET\nFUNC DEEP\nCPOP 200000 200000\nCONST BOOL T\nIF\nPOP 1 300000\nELSE\nPOP 1 200000\nPOP 1 299999\nCONST INT 1\nENDIF\nRET\n";
        let e = errs(deep);
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(e.iter().all(|m| m.contains("in function MAIN") && m.contains("stack underflow")), "{e:?}");
    }

    #[test]
    fn analysis_gives_signatures() {
        let a = |src: &str| analyze(&crate::parse(src).expect("parses")).expect("verifies");
        let r = a("FUNC MAIN\nCONST INT 1\nCONST FLOAT 2.0\nCALL SWAP\nRET\nFUNC SWAP\nCPOP 1 1\nRET\n");
        let swap = &r.functions[1];
        assert_eq!((swap.inputs, swap.output_count(), swap.max_depth), (2, Some(2), 2));
        assert_eq!(swap.outputs, Some(vec![Slot::Input(0), Slot::Input(1)]));
        assert_eq!((r.functions[0].inputs, r.functions[0].output_count(), r.functions[0].max_depth), (0, Some(2), 2));
        let fact = "FUNC MAIN\nCONST INT 5\nCALL FACT\nRET\nFUNC FACT\nCOPY 1 0\nCONST INT 1\n<= INT\nIF\nPOP 1 0\nCONST INT 1\nELSE\nCOPY 1 0\nCONST INT 1\n- INT\nCALL FACT\n* INT\nENDIF\nRET\n";
        let r = a(fact);
        assert_eq!(r.functions[1].inputs, 1);
        assert_eq!(r.functions[1].input_types, vec![Some(SlotTy::Vec(crate::VType::Int))]);
        assert_eq!(r.functions[1].output_count(), Some(1));
        // A function that never returns still consumes its inputs; so does its caller.
        let r = a("FUNC MAIN\nCONST INT 0\nCALL DIE\nRET\nFUNC DIE\nPOP 1 0\nEXIT\nRET\n");
        assert_eq!((r.functions[1].inputs, r.functions[1].output_count()), (1, None));
        assert_eq!(r.functions[0].output_count(), None);
        // Both branches diverge: the deeper reach counts.
        let r = a("FUNC MAIN\nCONST INT 0\nCONST INT 0\nCONST BOOL T\nCALL DIE\nRET\nFUNC DIE\nIF\nPOP 1 1\nEXIT\nELSE\nEXIT\nENDIF\nRET\n");
        assert_eq!((r.functions[1].inputs, r.functions[1].output_count()), (3, None));
    }

    #[test]
    fn reports_unbalanced_branches() {
        let e = errs("FUNC MAIN\nCONST BOOL T\nIF\nCONST INT 1\nELSE\nENDIF\nRET\n");
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].contains("different stack depths"));
    }

    /// A chain of 20,000 functions, each calling the next (the callee defined after its
    /// caller): the signatures settle by a worklist in one pass, callees first. Checking
    /// every function again each round until they settled took n rounds, each looking up
    /// every call by a scan of the functions: cubic (2,000 took 8 s).
    #[test]
    fn a_long_call_chain_settles_in_one_pass() {
        let n = 20_000;
        let mut src = String::from("FUNC MAIN\nCONST INT 0\nCALL F0\nRET\n");
        for i in 0..n {
            src.push_str(&format!("FUNC F{i}\nCONST INT 1\n+ INT\nCALL F{}\nRET\n", i + 1));
        }
        src.push_str(&format!("FUNC F{n}\nRET\n"));
        let p = crate::parse(&src).expect("parses");
        let a = analyze(&p).expect("verifies");
        assert_eq!(a.functions[0].inputs, 0);
        assert_eq!(a.functions[0].output_count(), Some(1));
        assert_eq!((a.functions[1].inputs, a.functions[1].output_count()), (1, Some(1)));
        // Mutual recursion still settles, or is reported when it cannot.
        let ok = "FUNC MAIN\nCONST INT 3\nCALL A\nRET\nFUNC A\nCOPY 1 0\nCONST INT 0\n= INT\nIF\nELSE\nCONST INT 1\n- INT\nCALL B\nENDIF\nRET\nFUNC B\nCALL A\nRET\n";
        assert!(analyze(&crate::parse(ok).expect("parses")).is_ok());
    }
}
