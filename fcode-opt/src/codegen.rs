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
//!
//! The cost is near-linear in the program (besides the depth of the shuffles it emits):
//! liveness is a count of the reads still ahead per variable, not a set per statement;
//! dead slots are looked for only among what a statement read or bound; how many slots
//! hold a variable is counted, not scanned for; trying the two operand orders of a
//! commutative operation saves only the part of the stack it can change; and merging two
//! shuffles computes the one depth that could stand for both.

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
    /// Whether each function's body diverges, by name (the last definition of a name wins).
    diverging: &'a HashMap<&'a str, bool>,
    /// The code, each instruction with its origin.
    out: Vec<(Instr, Origin)>,
    /// The origin given to shuffles: that of the statement they serve.
    at: Origin,
    stack: Vec<Var>,
    /// How many slots of `stack` hold each variable (kept in step with `stack`), so that
    /// "is it on the stack, and how often" needs no scan of the stack.
    on_stack: HashMap<Var, u32>,
    /// Liveness, as the reads still ahead: for each variable, how many reads the code not
    /// yet generated makes of it, counted at the granularity of the blocks being
    /// generated (the statements after the current one in the current block and its
    /// results, then the same in each enclosing block; an `IF` statement reads its
    /// condition and the free variables of its branches). A variable is live exactly when
    /// its count is positive. A block adds the reads of its statements and results when
    /// it starts and each statement takes its own reads off before its code is emitted,
    /// so no set of live variables is ever materialised per statement.
    pending: HashMap<Var, u32>,
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

fn bump(counts: &mut HashMap<Var, u32>, v: Var, add: bool) {
    if add {
        *counts.entry(v).or_insert(0) += 1;
    } else if let Some(n) = counts.get_mut(&v) {
        *n -= 1;
        if *n == 0 {
            counts.remove(&v);
        }
    }
}

impl Gen<'_> {
    /// Emits `ins` with the current statement's origin.
    fn emit(&mut self, ins: Instr) {
        self.out.push((ins, self.at));
    }

    /// Whether `v` is read by code not yet generated.
    fn live(&self, v: Var) -> bool {
        self.pending.contains_key(&v)
    }

    /// How many stack slots hold `v`.
    fn slots(&self, v: Var) -> u32 {
        self.on_stack.get(&v).copied().unwrap_or(0)
    }

    fn push(&mut self, v: Var) {
        self.stack.push(v);
        bump(&mut self.on_stack, v, true);
    }

    fn truncate(&mut self, len: usize) {
        for v in self.stack.drain(len..) {
            bump(&mut self.on_stack, v, false);
        }
    }

    fn set_stack(&mut self, stack: Vec<Var>) {
        self.on_stack.clear();
        for &v in &stack {
            bump(&mut self.on_stack, v, true);
        }
        self.stack = stack;
    }

    /// Applies a shuffle to the stack (and its slot counts).
    fn shuffle_stack(&mut self, ins: &Instr) {
        if let Imm::Counts(n, d) = ins.imm {
            let (n, d) = (n as usize, d as usize);
            let start = self.stack.len() - n - d;
            match ins.op {
                Opcode::Copy => {
                    for k in start..start + n {
                        self.push(self.stack[k]);
                    }
                }
                Opcode::Pop => {
                    for v in self.stack.drain(start..start + n) {
                        bump(&mut self.on_stack, v, false);
                    }
                }
                _ => apply(&mut self.stack, ins),
            }
        }
    }

    /// Adds (or takes off) the reads of a statement to (from) the pending reads.
    fn pend(&mut self, s: &Stmt, add: bool) {
        match &s.rhs {
            Rhs::If { cond, then, els } => {
                bump(&mut self.pending, *cond, add);
                self.pend_branches(then, els, add);
            }
            rhs => {
                let p = &mut self.pending;
                rhs.for_each_use(&mut |v| bump(p, v, add));
            }
        }
    }

    /// The reads of an `IF` statement's branches (their free variables).
    fn pend_branches(&mut self, then: &Block, els: &Block, add: bool) {
        for b in [then, els] {
            let free = self.free_uses(b);
            for &v in free.iter() {
                bump(&mut self.pending, v, add);
            }
        }
    }

    /// Pops every slot whose variable is not live, and duplicate slots of live
    /// variables (the topmost copy stays).
    fn drop_dead(&mut self) {
        let mut seen = HashSet::new();
        let keep: Vec<bool> = self
            .stack
            .iter()
            .rev()
            .map(|v| self.pending.contains_key(v) && seen.insert(*v))
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
            self.shuffle_stack(&c);
            self.emit(c);
        }
    }

    /// [`Self::drop_dead`] where only the variables in `changed` can have become dead or
    /// duplicated since the stack last held live, distinct slots only (a statement's
    /// operands and results, or at the start of a branch what the `IF` read): when none
    /// of them is, there is nothing to pop and the stack is not scanned.
    fn drop_dead_among(&mut self, changed: impl IntoIterator<Item = Var>) {
        let stale = changed.into_iter().any(|v| match self.slots(v) {
            0 => false,
            1 => !self.live(v),
            _ => true,
        });
        if stale {
            self.drop_dead();
        }
    }

    /// Emits a statement's actions; liveness after the statement is `self.pending`.
    fn run_acts(&mut self, acts: &[Act], defs: &[Var]) -> Result<(), OptError> {
        // Operands already on top, in order, can be used in place.
        let lead: Vec<Var> = acts
            .iter()
            .map_while(|a| match a {
                Act::Push(v) => Some(*v),
                Act::Emit(..) => None,
            })
            .collect();
        // Pushes of each variable among all the acts: those after the first `j` (all
        // pushes of `lead`) are the total less its count in `lead[..j]`.
        let mut pushes: HashMap<Var, usize> = HashMap::new();
        for a in acts {
            if let Act::Push(v) = a {
                *pushes.entry(*v).or_insert(0) += 1;
            }
        }
        let mut j = lead.len().min(self.stack.len());
        while j > 0 {
            let top = &self.stack[self.stack.len() - j..];
            if top == &lead[..j] {
                let valid = lead[..j].iter().all(|v| {
                    // Slots of `v` used in place (`lead[..j]` is all pushes).
                    let in_top = lead[..j].iter().filter(|&&x| x == *v).count();
                    let later = pushes.get(v).copied().unwrap_or(0) - in_top;
                    let needed = self.live(*v) || later > 0;
                    // A slot of `v` below the ones used in place.
                    !needed || self.slots(*v) > in_top as u32
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
        // Slots of each variable above `region` (the operands brought up so far), so that
        // the slots below are counted without a scan of the stack.
        let mut above: HashMap<Var, u32> = HashMap::new();
        for &v in &self.stack[region..] {
            bump(&mut above, v, true);
        }
        for (k, a) in acts.iter().enumerate().skip(j) {
            match a {
                Act::Push(v) => {
                    let v = *v;
                    let left = ahead.get_mut(&v).map_or(0, |n| {
                        *n -= 1;
                        *n
                    });
                    let needed = self.live(v) || left > 0;
                    let below = self.slots(v) - above.get(&v).copied().unwrap_or(0);
                    let movable = if below > 0 && (!needed || below >= 2) {
                        self.stack[..region].iter().rposition(|&x| x == v)
                    } else {
                        None
                    };
                    if let Some(i) = movable {
                        let d = self.stack.len() - 1 - i;
                        // Moving the slot changes the stack unless every slot from it
                        // up holds `v`.
                        let changed = self.stack[i + 1..].iter().any(|&x| x != v);
                        let x = self.stack.remove(i);
                        self.stack.push(x);
                        bump(&mut above, x, true);
                        region -= 1;
                        if changed {
                            self.emit(counts(Opcode::Cpop, 1, d));
                        }
                    } else {
                        let i = self
                            .stack
                            .iter()
                            .rposition(|&x| x == v)
                            .ok_or_else(|| internal(self.func, format!("v{v} is not on the stack")))?;
                        let d = self.stack.len() - 1 - i;
                        self.push(v);
                        bump(&mut above, v, true);
                        self.emit(counts(Opcode::Copy, 1, d));
                    }
                }
                Act::Emit(ins, pops, pushes, origin) => {
                    if self.stack.len() < region + pops {
                        return Err(internal(self.func, format!("`{ins}` would reach below its operands")));
                    }
                    for &x in &self.stack[self.stack.len() - pops..] {
                        bump(&mut above, x, false);
                    }
                    self.truncate(self.stack.len() - pops);
                    if k + 1 == n_acts {
                        if defs.len() != *pushes {
                            return Err(internal(self.func, format!("`{ins}` binds {} values", defs.len())));
                        }
                        for &d in defs {
                            self.push(d);
                        }
                    } else {
                        for _ in 0..*pushes {
                            self.next_tmp = self.next_tmp.wrapping_sub(1);
                            self.push(self.next_tmp);
                            bump(&mut above, self.next_tmp, true);
                        }
                    }
                    self.out.push((ins.clone(), *origin));
                }
            }
        }
        Ok(())
    }

    /// The lowest stack index that running any of `plans` can change: below the lowest
    /// slot of any variable they push (a move takes a slot out from under the others;
    /// copies and the instructions only work on top). Found by a scan down from the top
    /// that stops once every slot of those variables has been met.
    fn reach(&self, plans: &[&[Act]]) -> usize {
        let mut missing: HashMap<Var, u32> = HashMap::new();
        for acts in plans {
            for a in acts.iter() {
                if let Act::Push(v) = a {
                    let n = self.slots(*v);
                    if n > 0 {
                        missing.insert(*v, n);
                    }
                }
            }
        }
        let mut low = self.stack.len();
        while !missing.is_empty() && low > 0 {
            low -= 1;
            bump(&mut missing, self.stack[low], false);
        }
        low
    }

    /// Puts back the stack above `low` as `saved`, the code as `n` instructions long and
    /// the temporaries' counter as `tmp`.
    fn undo(&mut self, low: usize, saved: &[Var], n: usize, tmp: Var) {
        self.truncate(low);
        for &v in saved {
            self.push(v);
        }
        self.out.truncate(n);
        self.next_tmp = tmp;
    }

    /// Runs `acts`, or `alt` (an equivalent order) when that needs fewer instructions.
    /// Trying a plan saves and restores only the part of the stack it can change.
    fn run_best(&mut self, acts: &[Act], alt: Option<&[Act]>, defs: &[Var]) -> Result<(), OptError> {
        if let Some(alt) = alt {
            let low = self.reach(&[acts, alt]);
            let saved: Vec<Var> = self.stack[low..].to_vec();
            let (n, tmp) = (self.out.len(), self.next_tmp);
            self.run_acts(acts, defs)?;
            let first = self.out.len() - n;
            self.undo(low, &saved, n, tmp);
            self.run_acts(alt, defs)?;
            if self.out.len() - n < first {
                return Ok(());
            }
            self.undo(low, &saved, n, tmp);
        }
        self.run_acts(acts, defs)
    }

    fn stmt(&mut self, s: &Stmt) -> Result<bool, OptError> {
        let at = s.origin;
        self.at = at;
        if !matches!(s.rhs, Rhs::If { .. }) {
            // From here on, pending reads are those after the statement.
            self.pend(s, false);
        }
        match &s.rhs {
            Rhs::Prim { ins, args } => {
                let mut acts: Vec<Act> = args.iter().map(|v| Act::Push(*v)).collect();
                acts.push(Act::Emit(ins.clone(), args.len(), s.defs.len(), at));
                let swapped = (commutative(ins) && args.len() == 2).then(|| {
                    vec![Act::Push(args[1]), Act::Push(args[0]), Act::Emit(ins.clone(), 2, s.defs.len(), at)]
                });
                self.run_best(&acts, swapped.as_deref(), &s.defs)?;
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
                self.run_best(&acts, swapped.as_deref(), &s.defs)?;
            }
            Rhs::Call { name, args } => {
                let mut acts: Vec<Act> = args.iter().map(|v| Act::Push(*v)).collect();
                let ins = Instr { op: Opcode::Call, ty: None, imm: Imm::Label(name.clone()) };
                acts.push(Act::Emit(ins, args.len(), s.defs.len(), at));
                self.run_acts(&acts, &s.defs)?;
                let diverges = self.diverging.get(name.as_str()).copied().unwrap_or(false);
                return Ok(diverges);
            }
            Rhs::Exit { top } => {
                let mut acts: Vec<Act> = top.iter().map(|v| Act::Push(*v)).collect();
                acts.push(Act::Emit(vcode::Instr::plain(Opcode::Exit), 0, 0, at));
                self.run_acts(&acts, &[])?;
                return Ok(true);
            }
            Rhs::If { cond, then, els } => {
                let acts = [Act::Push(*cond), Act::Emit(Instr::plain(Opcode::If), 1, 0, at)];
                // The condition is consumed by `IF` only if no branch reads it either:
                // its own read is taken off first, those of the branches after it.
                bump(&mut self.pending, *cond, false);
                self.run_acts(&acts, &[])?;
                self.pend_branches(then, els, false);
                // The IF instruction itself is emitted below, around the branches.
                self.out.pop();
                let mut seen = HashSet::new();
                let kept: Vec<Var> =
                    self.stack.iter().copied().filter(|&v| self.live(v) && seen.insert(v)).collect();
                // The branches are generated in place (not into vectors of their own
                // copied in afterwards: that copied a deep nest of `IF`s once per level).
                // What the other branch reads may be dead in each one.
                let (free_then, free_else) = (self.free_uses(then), self.free_uses(els));
                let start = self.stack.clone();
                self.at = at;
                self.emit(Instr::plain(Opcode::If));
                let then_div = self.block(then, &kept, at, free_else.iter().copied().chain([*cond]))?;
                self.set_stack(start);
                self.at = at;
                self.emit(Instr::plain(Opcode::Else));
                let else_at = self.out.len();
                let else_div = self.block(els, &kept, at, free_then.iter().copied().chain([*cond]))?;
                self.at = at;
                if self.out.len() == else_at {
                    // An empty else branch: no `ELSE`.
                    self.out.pop();
                }
                self.emit(Instr::plain(Opcode::EndIf));
                self.set_stack(kept);
                for &d in &s.defs {
                    self.push(d);
                }
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
    /// `entering` are the variables that may have died on the way in (apart from them,
    /// the stack holds live, distinct slots); the pending reads are those after the block.
    fn block(
        &mut self,
        b: &Block,
        kept: &[Var],
        end: Origin,
        entering: impl IntoIterator<Item = Var>,
    ) -> Result<bool, OptError> {
        for s in &b.stmts {
            self.pend(s, true);
        }
        for &v in &b.results {
            bump(&mut self.pending, v, true);
        }
        self.at = b.stmts.first().map_or(end, |s| s.origin);
        self.drop_dead_among(entering);
        let mut done = b.stmts.len();
        for (i, s) in b.stmts.iter().enumerate() {
            if self.stmt(s)? {
                done = i + 1;
                break;
            }
            let uses = self.stmt_reads(s);
            self.drop_dead_among(uses.iter().copied().chain(s.defs.iter().copied()));
        }
        // Reads of statements after a diverging one, and the results, are no longer ahead.
        for s in &b.stmts[done..] {
            self.pend(s, false);
        }
        for &v in &b.results {
            bump(&mut self.pending, v, false);
        }
        if done < b.stmts.len() || b.diverges {
            return Ok(true);
        }
        self.at = end;
        let mut target = kept.to_vec();
        target.extend(&b.results);
        let code = arrange(&self.stack, &target)
            .ok_or_else(|| internal(self.func, "cannot arrange the block results".into()))?;
        for c in code {
            self.shuffle_stack(&c);
            self.emit(c);
        }
        if self.stack != target {
            return Err(internal(self.func, "the block results are misplaced".into()));
        }
        Ok(false)
    }

    /// The variables a statement reads (for an `IF`, its condition and the free variables
    /// of its branches).
    fn stmt_reads(&mut self, s: &Stmt) -> Vec<Var> {
        let mut out = Vec::new();
        match &s.rhs {
            Rhs::If { cond, then, els } => {
                out.push(*cond);
                out.extend(self.free_uses(then).iter().copied());
                out.extend(self.free_uses(els).iter().copied());
            }
            rhs => rhs.for_each_use(&mut |v| out.push(v)),
        }
        out
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

/// For `op n dd` applied to the stack `0, 1, .., len - 1` (slot numbers equal to their
/// positions) to give `two`, the depth `dd` it must have: read off where the block of `n`
/// slots it moves, copies or pops starts. `None` when no depth fits the lengths.
fn merged_depth(op: Opcode, n: u32, two: &[u32]) -> Option<u32> {
    let n = n as usize;
    let (start, len) = match op {
        // Popped: the block starts at the first slot that no longer holds its number.
        Opcode::Pop => {
            let len = two.len() + n;
            (two.iter().enumerate().position(|(i, &x)| x as usize != i).unwrap_or(two.len()), len)
        }
        // Copied: the block's copy starts right after the original slots.
        Opcode::Copy => {
            let len = two.len().checked_sub(n)?;
            (*two.get(len)? as usize, len)
        }
        // Moved: the block ends up on top.
        _ => (*two.get(two.len().checked_sub(n)?)? as usize, two.len()),
    };
    u32::try_from(len.checked_sub(start)?.checked_sub(n)?).ok()
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
                    // The one depth that could give the same effect, checked by running it
                    // (not a search over every depth: shuffles can be thousands deep).
                    let merged = two.as_deref().and_then(|two| merged_depth(ins.op, n, two)).and_then(|dd| {
                        let cand = Instr { op: ins.op, ty: None, imm: Imm::Counts(n, dd) };
                        (dd <= d1 + d2 + a + b && shuffle(&base, &cand).as_deref() == two.as_deref())
                            .then_some(cand)
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

fn function(diverging: &HashMap<&str, bool>, f: &LFunc) -> Result<Function, OptError> {
    let mut g = Gen {
        diverging,
        out: Vec::new(),
        at: f.end,
        stack: Vec::new(),
        on_stack: HashMap::new(),
        pending: HashMap::new(),
        next_tmp: Var::MAX,
        func: &f.name,
        free: HashMap::new(),
    };
    g.set_stack(f.params.clone());
    g.block(&f.body, &[], f.end, f.params.iter().copied())?;
    peephole(&mut g.out);
    g.out.push((Instr::plain(Opcode::Ret), f.end));
    let (body, origins) = g.out.into_iter().unzip();
    let mut func = Function::new(f.name.clone(), body);
    func.origins = origins;
    func.pos = f.pos;
    func.sig = f.sig.clone();
    func.instances = f.instances.clone();
    Ok(func)
}

/// Generates stack code for every function.
pub fn codegen(p: &LProgram) -> Result<Program, OptError> {
    let diverging: HashMap<&str, bool> = p.funcs.iter().map(|f| (f.name.as_str(), f.body.diverges)).collect();
    let functions = p.funcs.iter().map(|f| function(&diverging, f)).collect::<Result<Vec<_>, _>>()?;
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

    #[test]
    fn peephole_merges_deep_shuffles() {
        // Thousands deep (generated code for long chains): merged without trying every depth.
        for (op, a, d1, b, d2) in [(Opcode::Cpop, 1, 6000, 1, 6000), (Opcode::Copy, 1, 5000, 1, 5000), (Opcode::Pop, 2, 7000, 1, 7000)] {
            let code = vec![counts(op, a, d1), counts(op, b, d2)];
            let base: Vec<Var> = (0..20_000).collect();
            let want = run_all(&base, &code);
            let o = Origin::vcode(vcode::Pos { line: 1, col: 1 });
            let mut with: Vec<(Instr, Origin)> = code.into_iter().map(|c| (c, o)).collect();
            peephole(&mut with);
            let merged: Vec<Instr> = with.into_iter().map(|(c, _)| c).collect();
            assert_eq!(merged.len(), 1, "{op:?}: {merged:?}");
            assert_eq!(run_all(&base, &merged), want, "{op:?}");
        }
        // Shuffles no single one can stand for stay as they are.
        let mut two = vec![(counts(Opcode::Cpop, 1, 3000), Origin::vcode(vcode::Pos { line: 1, col: 1 }))];
        two.push((counts(Opcode::Cpop, 1, 10), two[0].1));
        peephole(&mut two);
        assert_eq!(two.len(), 2);
    }
}
