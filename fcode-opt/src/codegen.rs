//! Stack code generation: let form back to VCODE / FCODE.
//!
//! The generator keeps an abstract stack of variables and emits, for each statement, the
//! shuffles that bring its operands to the top followed by its instruction. An operand
//! read for the last time is moved (`CPOP 1 d`, or nothing when it already sits where it
//! is needed); one still needed later is copied (`COPY 1 d`). When the operands already
//! lie on top in order they are used in place. Expression trees are emitted in postfix
//! order, each operand brought up just before it is needed. A slot that is no longer
//! needed is popped as soon as it is dead (runs of dead slots with one `POP n d`), so
//! vectors are freed early.
//!
//! A block ends with its stack arranged exactly as required: for a function, just its
//! results; for a branch of an `IF`, the live slots that were below the `IF` (in their
//! order) and then the branch results. The arrangement picks the shorter of two plans:
//! pop the unwanted slots when the wanted ones are already in order, or build the wanted
//! slots on top (moving or copying) and pop what is left under them in one go.

use crate::lir::{Block, LFunc, LProgram, Rhs, Stmt, Tree, Var};
use crate::OptError;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use vcode::{Function, Imm, Instr, Opcode, Origin, Program};

fn counts(op: Opcode, n: usize, d: usize) -> Instr {
    Instr { op, ty: None, imm: Imm::Counts(n as u32, d as u32) }
}

/// One step of a statement's code.
enum Act {
    /// Bring this variable to the top.
    Push(Var),
    /// Emit an instruction that pops `pops` operand slots and pushes `pushes` results;
    /// it gets this origin.
    Emit(Instr, usize, usize, Origin),
}

struct Gen<'a> {
    prog: &'a LProgram,
    /// The code, each instruction with its origin.
    out: Vec<(Instr, Origin)>,
    /// The origin given to shuffles: that of the statement they serve.
    at: Origin,
    stack: Vec<Var>,
    /// Temporaries of expression trees (never read outside their statement).
    next_tmp: Var,
    func: &'a str,
    /// The free variables of the blocks met so far, by address (the program does not
    /// change during code generation): a deep nest of `IF`s is walked once, not once per
    /// level.
    free: HashMap<*const Block, Rc<[Var]>>,
}

fn internal(func: &str, m: String) -> OptError {
    OptError::Malformed { function: func.to_string(), message: format!("internal (code generation): {m}") }
}

/// Binary instructions whose operands can be swapped (exactly, including floats).
fn commutative(ins: &Instr) -> bool {
    use vcode::cvl::BinOp::*;
    matches!(ins.op.info().exec, vcode::op::Exec::Binary(Add | Mul | Eq | Ne | And | Or | Xor | Max | Min))
}

/// The actions of a tree in postfix order; each operation keeps its own origin, constants
/// get `at` (the statement's).
fn tree_acts(t: &Tree, acts: &mut Vec<Act>, at: Origin) {
    match t {
        Tree::Var(v) => acts.push(Act::Push(*v)),
        Tree::Const(k) => acts.push(Act::Emit(k.clone(), 0, 1, at)),
        Tree::Dist { konst, dist, seg } => {
            acts.push(Act::Emit(konst.clone(), 0, 1, at));
            acts.push(Act::Push(*seg));
            acts.push(Act::Emit(dist.clone(), 2, 1, at));
        }
        Tree::Op { ins, args, origin } => {
            for a in args {
                tree_acts(a, acts, at);
            }
            acts.push(Act::Emit(ins.clone(), args.len(), 1, *origin));
        }
    }
}

/// Plans the shuffles that turn `stack` into exactly `target`; returns the instructions.
fn arrange(stack: &[Var], target: &[Var]) -> Option<Vec<Instr>> {
    let p = stack.iter().zip(target).take_while(|(a, b)| a == b).count();
    let mut best: Option<Vec<Instr>> = None;
    // Plan A: the rest of the target is a subsequence of the rest of the stack.
    {
        let rest = &stack[p..];
        let want = &target[p..];
        let mut keep = vec![false; rest.len()];
        let mut k = 0;
        for (i, v) in rest.iter().enumerate() {
            if k < want.len() && *v == want[k] {
                keep[i] = true;
                k += 1;
            }
        }
        if k == want.len() {
            let mut code = Vec::new();
            // Pop runs from the top down; the depth is the number of kept slots above.
            let mut above = 0;
            let mut i = rest.len();
            while i > 0 {
                if keep[i - 1] {
                    above += 1;
                    i -= 1;
                } else {
                    let mut n = 0;
                    while i > 0 && !keep[i - 1] {
                        n += 1;
                        i -= 1;
                    }
                    code.push(counts(Opcode::Pop, n, above));
                }
            }
            best = Some(code);
        }
    }
    // Plan B: keep the longest run already on top, build the rest of the target above
    // it, then pop what is left between the common prefix and the built part.
    {
        let rest_len = stack.len() - p;
        let want = &target[p..];
        let mut j = want.len().min(rest_len);
        while j > 0 && stack[stack.len() - j..] != want[..j] {
            j -= 1;
        }
        let mut st: Vec<Var> = stack.to_vec();
        // Region [p, lo) holds the slots still to be consumed or dropped.
        let mut lo = st.len() - j;
        let mut code = Vec::new();
        let mut ok = true;
        for (idx, &t) in want.iter().enumerate().skip(j) {
            let later = want[idx + 1..].iter().filter(|&&x| x == t).count();
            let avail: Vec<usize> = (p..lo).filter(|&i| st[i] == t).collect();
            if let Some(&i) = avail.last().filter(|_| avail.len() > later) {
                let d = st.len() - 1 - i;
                let v = st.remove(i);
                st.push(v);
                lo -= 1;
                if d > 0 {
                    code.push(counts(Opcode::Cpop, 1, d));
                }
            } else if let Some(i) = st.iter().rposition(|&x| x == t) {
                let d = st.len() - 1 - i;
                st.push(t);
                code.push(counts(Opcode::Copy, 1, d));
            } else {
                ok = false;
                break;
            }
        }
        if ok {
            let left = lo - p;
            if left > 0 {
                code.push(counts(Opcode::Pop, left, st.len() - lo));
            }
            if best.as_ref().is_none_or(|b| code.len() < b.len()) {
                best = Some(code);
            }
        }
    }
    best
}

fn apply(stack: &mut Vec<Var>, ins: &Instr) {
    if let Imm::Counts(n, d) = ins.imm {
        let (n, d) = (n as usize, d as usize);
        let start = stack.len() - n - d;
        match ins.op {
            Opcode::Copy => stack.extend_from_within(start..start + n),
            Opcode::Pop => {
                stack.drain(start..start + n);
            }
            _ => {
                let moved: Vec<Var> = stack.drain(start..start + n).collect();
                stack.extend(moved);
            }
        }
    }
}

impl Gen<'_> {
    /// Emits `ins` with the current statement's origin.
    fn emit(&mut self, ins: Instr) {
        self.out.push((ins, self.at));
    }

    /// Pops every slot whose variable is not in `live`, and duplicate slots of live
    /// variables (the topmost copy stays).
    fn drop_dead(&mut self, live: &HashSet<Var>) {
        let mut seen = HashSet::new();
        let keep: Vec<bool> = self
            .stack
            .iter()
            .rev()
            .map(|v| live.contains(v) && seen.insert(*v))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if keep.iter().all(|&k| k) {
            return;
        }
        let mut above = 0;
        let mut i = keep.len();
        let mut code = Vec::new();
        while i > 0 {
            if keep[i - 1] {
                above += 1;
                i -= 1;
            } else {
                let mut n = 0;
                while i > 0 && !keep[i - 1] {
                    n += 1;
                    i -= 1;
                }
                code.push(counts(Opcode::Pop, n, above));
            }
        }
        for c in code {
            apply(&mut self.stack, &c);
            self.emit(c);
        }
    }

    /// Emits a statement's actions; `live_after` are the variables needed afterwards.
    fn run_acts(&mut self, acts: &[Act], defs: &[Var], live_after: &HashSet<Var>) -> Result<(), OptError> {
        // Operands already on top, in order, can be used in place.
        let lead: Vec<Var> = acts
            .iter()
            .map_while(|a| match a {
                Act::Push(v) => Some(*v),
                Act::Emit(..) => None,
            })
            .collect();
        let later_pushes =
            |from: usize, v: Var| acts[from..].iter().filter(|a| matches!(a, Act::Push(x) if *x == v)).count();
        let mut j = lead.len().min(self.stack.len());
        while j > 0 {
            let top = &self.stack[self.stack.len() - j..];
            if top == &lead[..j] {
                let below = &self.stack[..self.stack.len() - j];
                let valid = lead[..j].iter().all(|v| {
                    let needed = live_after.contains(v) || later_pushes(j, *v) > 0;
                    !needed || below.contains(v)
                });
                if valid {
                    break;
                }
            }
            j -= 1;
        }
        let mut region = self.stack.len() - j;
        let n_acts = acts.len();
        // How many pushes of each variable are still ahead (counted once, not by a scan
        // of the rest at each push: a tree of n operations has n acts).
        let mut ahead: HashMap<Var, usize> = HashMap::new();
        for a in &acts[j..] {
            if let Act::Push(v) = a {
                *ahead.entry(*v).or_insert(0) += 1;
            }
        }
        for (k, a) in acts.iter().enumerate().skip(j) {
            match a {
                Act::Push(v) => {
                    let v = *v;
                    let left = ahead.get_mut(&v).map_or(0, |n| {
                        *n -= 1;
                        *n
                    });
                    debug_assert_eq!(left, later_pushes(k + 1, v));
                    let needed = live_after.contains(&v) || left > 0;
                    let below: Vec<usize> = (0..region).filter(|&i| self.stack[i] == v).collect();
                    let movable = match below.last() {
                        Some(_) if !needed || below.len() >= 2 => below.last().copied(),
                        _ => None,
                    };
                    if let Some(i) = movable {
                        let d = self.stack.len() - 1 - i;
                        let before = self.stack.clone();
                        let x = self.stack.remove(i);
                        self.stack.push(x);
                        region -= 1;
                        if self.stack != before {
                            self.emit(counts(Opcode::Cpop, 1, d));
                        }
                    } else {
                        let i = self
                            .stack
                            .iter()
                            .rposition(|&x| x == v)
                            .ok_or_else(|| internal(self.func, format!("v{v} is not on the stack")))?;
                        let d = self.stack.len() - 1 - i;
                        self.stack.push(v);
                        self.emit(counts(Opcode::Copy, 1, d));
                    }
                }
                Act::Emit(ins, pops, pushes, origin) => {
                    if self.stack.len() < region + pops {
                        return Err(internal(self.func, format!("`{ins}` would reach below its operands")));
                    }
                    self.stack.truncate(self.stack.len() - pops);
                    if k + 1 == n_acts {
                        if defs.len() != *pushes {
                            return Err(internal(self.func, format!("`{ins}` binds {} values", defs.len())));
                        }
                        self.stack.extend(defs);
                    } else {
                        for _ in 0..*pushes {
                            self.next_tmp = self.next_tmp.wrapping_sub(1);
                            self.stack.push(self.next_tmp);
                        }
                    }
                    self.out.push((ins.clone(), *origin));
                }
            }
        }
        Ok(())
    }

    /// Runs `acts`, or `alt` (an equivalent order) when that needs fewer instructions.
    fn run_best(
        &mut self,
        acts: &[Act],
        alt: Option<&[Act]>,
        defs: &[Var],
        live_after: &HashSet<Var>,
    ) -> Result<(), OptError> {
        if let Some(alt) = alt {
            let (stack, n, tmp) = (self.stack.clone(), self.out.len(), self.next_tmp);
            self.run_acts(acts, defs, live_after)?;
            let first = self.out.len() - n;
            self.stack = stack;
            self.out.truncate(n);
            self.next_tmp = tmp;
            let (stack, tmp) = (self.stack.clone(), self.next_tmp);
            self.run_acts(alt, defs, live_after)?;
            if self.out.len() - n < first {
                return Ok(());
            }
            self.stack = stack;
            self.out.truncate(n);
            self.next_tmp = tmp;
        }
        self.run_acts(acts, defs, live_after)
    }

    fn stmt(&mut self, s: &Stmt, live_after: &HashSet<Var>) -> Result<bool, OptError> {
        let at = s.origin;
        self.at = at;
        match &s.rhs {
            Rhs::Prim { ins, args } => {
                let mut acts: Vec<Act> = args.iter().map(|v| Act::Push(*v)).collect();
                acts.push(Act::Emit(ins.clone(), args.len(), s.defs.len(), at));
                let swapped = (commutative(ins) && args.len() == 2).then(|| {
                    vec![Act::Push(args[1]), Act::Push(args[0]), Act::Emit(ins.clone(), 2, s.defs.len(), at)]
                });
                self.run_best(&acts, swapped.as_deref(), &s.defs, live_after)?;
            }
            Rhs::Tree(t) => {
                let mut acts = Vec::new();
                tree_acts(t, &mut acts, at);
                let swapped = match t {
                    Tree::Op { ins, args, origin } if commutative(ins) && args.len() == 2 => {
                        let mut v = Vec::new();
                        tree_acts(&args[1], &mut v, at);
                        tree_acts(&args[0], &mut v, at);
                        v.push(Act::Emit(ins.clone(), 2, 1, *origin));
                        Some(v)
                    }
                    _ => None,
                };
                self.run_best(&acts, swapped.as_deref(), &s.defs, live_after)?;
            }
            Rhs::Call { name, args } => {
                let mut acts: Vec<Act> = args.iter().map(|v| Act::Push(*v)).collect();
                let ins = Instr { op: Opcode::Call, ty: None, imm: Imm::Label(name.clone()) };
                acts.push(Act::Emit(ins, args.len(), s.defs.len(), at));
                self.run_acts(&acts, &s.defs, live_after)?;
                let diverges = self.prog.funcs.iter().rfind(|f| &f.name == name).is_some_and(|f| f.body.diverges);
                return Ok(diverges);
            }
            Rhs::Exit { top } => {
                let mut acts: Vec<Act> = top.iter().map(|v| Act::Push(*v)).collect();
                acts.push(Act::Emit(vcode::Instr::plain(Opcode::Exit), 0, 0, at));
                self.run_acts(&acts, &[], live_after)?;
                return Ok(true);
            }
            Rhs::If { cond, then, els } => {
                let acts = [Act::Push(*cond), Act::Emit(Instr::plain(Opcode::If), 1, 0, at)];
                // The condition is consumed by `IF` only if no branch reads it either.
                let mut inside = live_after.clone();
                inside.extend(self.free_uses(then).iter().copied());
                inside.extend(self.free_uses(els).iter().copied());
                self.run_acts(&acts, &[], &inside)?;
                // The IF instruction itself is emitted below, around the branches.
                self.out.pop();
                let mut seen = HashSet::new();
                let kept: Vec<Var> =
                    self.stack.iter().copied().filter(|v| live_after.contains(v) && seen.insert(*v)).collect();
                // The branches are generated in place (not into vectors of their own
                // copied in afterwards: that copied a deep nest of `IF`s once per level).
                // The statement's own results are not live inside its branches (they are
                // defined when the branches end): passing them down would make the live
                // sets of a deep nest of `IF`s grow with its depth.
                let mut live_in_branches = live_after.clone();
                for d in &s.defs {
                    live_in_branches.remove(d);
                }
                let start = self.stack.clone();
                self.at = at;
                self.emit(Instr::plain(Opcode::If));
                let then_div = self.block(then, &kept, &live_in_branches, at)?;
                self.stack = start;
                self.at = at;
                self.emit(Instr::plain(Opcode::Else));
                let else_at = self.out.len();
                let else_div = self.block(els, &kept, &live_in_branches, at)?;
                self.at = at;
                if self.out.len() == else_at {
                    // An empty else branch: no `ELSE`.
                    self.out.pop();
                }
                self.emit(Instr::plain(Opcode::EndIf));
                self.stack = kept;
                self.stack.extend(&s.defs);
                return Ok(then_div && else_div);
            }
        }
        Ok(false)
    }

    /// Adds the variables a statement reads to `uses`: for an `IF`, its condition and the
    /// free variables of its branches.
    fn add_uses(&mut self, rhs: &Rhs, uses: &mut HashSet<Var>) {
        match rhs {
            Rhs::If { cond, then, els } => {
                uses.insert(*cond);
                uses.extend(self.free_uses(then).iter().copied());
                uses.extend(self.free_uses(els).iter().copied());
            }
            _ => rhs.for_each_use(&mut |v| {
                uses.insert(v);
            }),
        }
    }

    /// The variables a block reads and does not define before (nested blocks included),
    /// computed once per block.
    fn free_uses(&mut self, b: &Block) -> Rc<[Var]> {
        let key: *const Block = b;
        if let Some(f) = self.free.get(&key) {
            return f.clone();
        }
        let mut set: HashSet<Var> = b.results.iter().copied().collect();
        for s in b.stmts.iter().rev() {
            for d in &s.defs {
                set.remove(d);
            }
            self.add_uses(&s.rhs, &mut set);
        }
        let f: Rc<[Var]> = set.into_iter().collect();
        self.free.insert(key, f.clone());
        f
    }

    /// Generates a block; on return (unless it diverges) the stack is `kept` followed by
    /// the block's results. Returns whether the block diverges. `end` is the origin of
    /// the code that arranges the results (and of pops before the first statement).
    fn block(&mut self, b: &Block, kept: &[Var], live_out: &HashSet<Var>, end: Origin) -> Result<bool, OptError> {
        // live[i] = variables needed after statement i.
        let mut live_after: Vec<HashSet<Var>> = vec![HashSet::new(); b.stmts.len()];
        let mut live: HashSet<Var> = live_out.clone();
        live.extend(b.results.iter().copied());
        for (i, s) in b.stmts.iter().enumerate().rev() {
            live_after[i] = live.clone();
            for d in &s.defs {
                live.remove(d);
            }
            self.add_uses(&s.rhs, &mut live);
        }
        self.at = b.stmts.first().map_or(end, |s| s.origin);
        self.drop_dead(&live);
        for (i, s) in b.stmts.iter().enumerate() {
            let div = self.stmt(s, &live_after[i])?;
            if div {
                return Ok(true);
            }
            self.drop_dead(&live_after[i]);
        }
        if b.diverges {
            return Ok(true);
        }
        self.at = end;
        let mut target = kept.to_vec();
        target.extend(&b.results);
        let code = arrange(&self.stack, &target)
            .ok_or_else(|| internal(self.func, "cannot arrange the block results".into()))?;
        for c in code {
            apply(&mut self.stack, &c);
            self.emit(c);
        }
        if self.stack != target {
            return Err(internal(self.func, "the block results are misplaced".into()));
        }
        Ok(false)
    }
}

/// The effect of a shuffle on a stack of distinct slot numbers (`None`: it underflows).
fn shuffle(stack: &[u32], ins: &Instr) -> Option<Vec<u32>> {
    let Imm::Counts(n, d) = ins.imm else { return None };
    let (n, d) = (n as usize, d as usize);
    if n + d > stack.len() {
        return None;
    }
    let mut st = stack.to_vec();
    apply_ids(&mut st, ins.op, n, d);
    Some(st)
}

fn apply_ids(st: &mut Vec<u32>, op: Opcode, n: usize, d: usize) {
    let start = st.len() - n - d;
    match op {
        Opcode::Copy => st.extend_from_within(start..start + n),
        Opcode::Pop => {
            st.drain(start..start + n);
        }
        _ => {
            let moved: Vec<u32> = st.drain(start..start + n).collect();
            st.extend(moved);
        }
    }
}

/// Merges two adjacent shuffles of the same kind into one when a single instruction has
/// the same effect (`CPOP 1 3; CPOP 1 3` is `CPOP 2 2`, `COPY 1 1; COPY 1 1` is
/// `COPY 2 0`, `POP 1 2; POP 1 2` is `POP 2 2`), and drops `CPOP n 0` and `n = 0` shuffles.
/// A merged shuffle keeps the origin of the first of the two.
fn peephole(code: &mut Vec<(Instr, Origin)>) {
    let is_shuffle = |i: &Instr| matches!(i.op, Opcode::Copy | Opcode::Pop | Opcode::Cpop);
    let mut out: Vec<(Instr, Origin)> = Vec::with_capacity(code.len());
    for (ins, origin) in code.drain(..) {
        if let Imm::Counts(n, d) = ins.imm {
            if is_shuffle(&ins) && (n == 0 || (ins.op == Opcode::Cpop && d == 0)) {
                continue;
            }
        }
        if let (Some((prev, prev_origin)), Imm::Counts(b, d2)) = (out.last(), &ins.imm) {
            if prev.op == ins.op && is_shuffle(&ins) {
                if let Imm::Counts(a, d1) = prev.imm {
                    let depth = (a + b + d1.max(*d2) + 2) as usize;
                    let base: Vec<u32> = (0..depth as u32).collect();
                    let two = shuffle(&base, prev).and_then(|s| shuffle(&s, &ins));
                    let n = a + b;
                    let merged = (0..=(d1 + d2 + a + b)).find_map(|dd| {
                        let cand = Instr { op: ins.op, ty: None, imm: Imm::Counts(n, dd) };
                        (shuffle(&base, &cand) == two && two.is_some()).then_some(cand)
                    });
                    if let Some(m) = merged {
                        let o = *prev_origin;
                        out.pop();
                        out.push((m, o));
                        continue;
                    }
                }
            }
        }
        out.push((ins, origin));
    }
    *code = out;
}

fn function(p: &LProgram, f: &LFunc) -> Result<Function, OptError> {
    let mut g =
        Gen { prog: p, out: Vec::new(), at: f.end, stack: f.params.clone(), next_tmp: Var::MAX, func: &f.name, free: HashMap::new() };
    g.block(&f.body, &[], &HashSet::new(), f.end)?;
    peephole(&mut g.out);
    g.out.push((Instr::plain(Opcode::Ret), f.end));
    let (body, origins) = g.out.into_iter().unzip();
    let mut func = Function::new(f.name.clone(), body);
    func.origins = origins;
    func.pos = f.pos;
    func.sig = f.sig.clone();
    Ok(func)
}

/// Generates stack code for every function.
pub fn codegen(p: &LProgram) -> Result<Program, OptError> {
    let functions = p.funcs.iter().map(|f| function(p, f)).collect::<Result<Vec<_>, _>>()?;
    Ok(Program { functions, superops: p.superops.clone(), scopes: p.scopes.clone(), inline_sites: p.inline_sites.clone(), fused_parts: p.fused_parts.clone() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_all(stack: &[Var], code: &[Instr]) -> Vec<Var> {
        let mut st = stack.to_vec();
        for c in code {
            apply(&mut st, c);
        }
        st
    }

    #[test]
    fn arrange_reaches_the_target_cheaply() {
        // Pop-only plan.
        let code = arrange(&[1, 2, 3, 4], &[1, 3]).expect("plan");
        assert_eq!(run_all(&[1, 2, 3, 4], &code), vec![1, 3]);
        assert_eq!(code.len(), 2);
        // Already in place.
        assert!(arrange(&[5, 6], &[5, 6]).expect("plan").is_empty());
        // Reorder with a copy.
        let code = arrange(&[1, 2, 3], &[3, 1, 1]).expect("plan");
        assert_eq!(run_all(&[1, 2, 3], &code), vec![3, 1, 1]);
        // Missing variable: no plan.
        assert!(arrange(&[1, 2], &[7]).is_none());
    }

    #[test]
    fn peephole_merges_runs_of_shuffles() {
        let code = vec![
            counts(Opcode::Cpop, 1, 3),
            counts(Opcode::Cpop, 1, 3),
            counts(Opcode::Copy, 1, 1),
            counts(Opcode::Copy, 1, 1),
            counts(Opcode::Cpop, 2, 0),
            counts(Opcode::Pop, 1, 2),
            counts(Opcode::Pop, 1, 2),
        ];
        let base: Vec<Var> = (0..8).collect();
        let want = run_all(&base, &code);
        let line = |l| Origin::vcode(vcode::Pos { line: l, col: 1 });
        let mut with: Vec<(Instr, Origin)> = code.into_iter().zip(1..).map(|(c, l)| (c, line(l))).collect();
        peephole(&mut with);
        let (code, origins): (Vec<Instr>, Vec<Origin>) = with.into_iter().unzip();
        assert_eq!(run_all(&base, &code), want);
        assert_eq!(code, vec![counts(Opcode::Cpop, 2, 2), counts(Opcode::Copy, 2, 0), counts(Opcode::Pop, 2, 2)]);
        assert_eq!(origins, vec![line(1), line(3), line(6)], "a merged shuffle keeps the first one's origin");
    }
}
