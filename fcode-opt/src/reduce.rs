//! The reducer: builds element-wise expression trees and removes dead code.
//!
//! * Every element-wise instruction becomes a one-node [`Tree`].
//! * A variable bound by an element-wise tree and used exactly once, as an operand of
//!   another tree in the same block, is substituted into it (never across
//!   `START_TIMER`/`STOP_TIMER`, and a tree that can trap — integer `/`, `%` — is never
//!   moved past an effectful statement).
//! * Scalar constants are substituted into every tree operand that uses them; a
//!   constant broadcast (`DIST` of a scalar constant) is substituted into its tree uses
//!   too — all of them when fusing, only a single use otherwise (duplicating it without
//!   fusion would repeat the `DIST`).
//! * Segment bookkeeping on constants folds (`fold_const_reductions`, to a fixed
//!   point with the rules above): `LENGTHS (MAKE_SEGDES c)`, a reduction of one constant
//!   over one segment of length 1, a boolean reduction of a constant broadcast (a check
//!   that constants made trivial), an `IF` on a constant; when fusing, the `NOT` of a
//!   boolean reduction moves into the element-wise tree it reduces (De Morgan).
//! * Statements whose results are all unused and that have no effect are deleted, unused
//!   `IF` results are dropped from both branches, and unused function parameters are
//!   removed together with the matching arguments at every call site, to a fixed point.

use crate::lir::{removable, use_counts, Block, LProgram, Rhs, Stmt, Tree, Var};
use crate::util::{exec_of, is_elementwise, scalar_const};
use std::collections::{HashMap, HashSet};
use vcode::op::Exec;
use vcode::{Const, HostScalar, Imm, Instr, Opcode, Ty};

/// What a variable is bound to, for substitution.
#[derive(Clone)]
enum Known {
    Const(Instr),
    Dist { konst: Instr, dist: Instr, seg: Var },
}

struct Reducer {
    fuse: bool,
    /// Constants and constant broadcasts visible anywhere in the function.
    known: HashMap<Var, Known>,
    uses: HashMap<Var, usize>,
    /// Uses as element-wise operands in the block being reduced.
    tree_uses: HashMap<Var, usize>,
}

/// A tree read several times (all by element-wise code) is recomputed in each reader
/// when it has at most this many operations...
const DUP_MAX_OPS: usize = 3;
/// ...and at most this many readers.
const DUP_MAX_USES: usize = 4;

impl Reducer {
    fn block(&mut self, b: &mut Block) {
        // In order: record constants and constant broadcasts (visible to later statements
        // and nested blocks), reduce nested blocks, build trees and substitute into them
        // the single-use trees defined earlier in this block.
        let mut defs_at: HashMap<Var, usize> = HashMap::new();
        // Uses of each variable as an operand of an element-wise computation of this block.
        self.tree_uses.clear();
        for st in &b.stmts {
            match &st.rhs {
                Rhs::Prim { ins, args } if is_elementwise(ins) => {
                    args.iter().for_each(|v| *self.tree_uses.entry(*v).or_insert(0) += 1)
                }
                Rhs::Tree(t) => t.for_each_var(&mut |v| *self.tree_uses.entry(v).or_insert(0) += 1),
                _ => {}
            }
        }
        let mut taken: HashSet<usize> = HashSet::new();
        for j in 0..b.stmts.len() {
            let s = &mut b.stmts[j];
            match &mut s.rhs {
                Rhs::Prim { ins, args } => {
                    if let [d] = s.defs.as_slice() {
                        if scalar_const(ins).is_some() {
                            self.known.insert(*d, Known::Const(ins.clone()));
                        } else if exec_of(ins) == Exec::Dist {
                            if let (Some(Known::Const(k)), Some(seg)) =
                                (args.first().and_then(|a| self.known.get(a)), args.get(1))
                            {
                                self.known.insert(*d, Known::Dist { konst: k.clone(), dist: ins.clone(), seg: *seg });
                            }
                        }
                    }
                    if is_elementwise(ins) {
                        let t = Tree::Op {
                            ins: ins.clone(),
                            args: args.iter().map(|v| Tree::Var(*v)).collect(),
                            origin: s.origin,
                        };
                        s.rhs = Rhs::Tree(t);
                    }
                }
                Rhs::If { then, els, .. } => {
                    let saved = std::mem::take(&mut self.tree_uses);
                    self.block(then);
                    self.block(els);
                    self.tree_uses = saved;
                }
                _ => {}
            }
            if matches!(b.stmts[j].rhs, Rhs::Tree(_)) {
                // The tree is moved out while its variables are substituted (nothing reads
                // statement `j` meanwhile) and put back after.
                let Rhs::Tree(mut t) = std::mem::replace(&mut b.stmts[j].rhs, Rhs::Tree(Tree::Var(0))) else {
                    continue;
                };
                // `subst` also folds constants, node by node on its way up.
                self.subst(&mut t, j, b, &defs_at, &mut taken);
                if let [d] = b.stmts[j].defs.as_slice() {
                    match &t {
                        Tree::Const(k) => {
                            self.known.insert(*d, Known::Const(k.clone()));
                        }
                        Tree::Dist { konst, dist, seg } => {
                            self.known.insert(*d, Known::Dist { konst: konst.clone(), dist: dist.clone(), seg: *seg });
                        }
                        _ => {}
                    }
                    defs_at.insert(*d, j);
                }
                b.stmts[j].rhs = Rhs::Tree(t);
            }
        }
        if !taken.is_empty() {
            let mut k = 0;
            b.stmts.retain(|_| {
                k += 1;
                !taken.contains(&(k - 1))
            });
        }
    }

    fn subst(&mut self, t: &mut Tree, at: usize, b: &mut Block, defs_at: &HashMap<Var, usize>, taken: &mut HashSet<usize>) {
        match t {
            Tree::Var(v) => {
                let v = *v;
                if let Some(&i) = defs_at.get(&v) {
                    let n = self.uses.get(&v).copied().unwrap_or(0);
                    if let (false, Rhs::Tree(def)) = (taken.contains(&i), &b.stmts[i].rhs) {
                        // Whether the tree may trap is asked only when an effect lies
                        // between (it walks the whole tree, which grows along a chain).
                        let between = &b.stmts[i + 1..at];
                        let blocked = between.iter().any(|s| s.rhs.is_timer())
                            || (between.iter().any(|s| s.rhs.is_effectful()) && def.may_trap());
                        if n == 1 && !blocked {
                            taken.insert(i);
                            // Moved, not copied: statement `i` is removed at the end of
                            // the block, and a chain of n element-wise operations (each
                            // tree holding all before it) would copy O(n^2) nodes.
                            let placeholder = Rhs::Tree(Tree::Var(v));
                            if let Rhs::Tree(def) = std::mem::replace(&mut b.stmts[i].rhs, placeholder) {
                                *t = def;
                            }
                            return;
                        }
                        // A small tree read only by element-wise code of this block is
                        // recomputed in each reader rather than stored (fusion only).
                        let dup = self.fuse
                            && n > 1
                            && n <= DUP_MAX_USES
                            && self.tree_uses.get(&v) == Some(&n)
                            && def.op_count() <= DUP_MAX_OPS
                            && !def.may_trap()
                            && !blocked;
                        if dup {
                            let def = def.clone();
                            def.for_each_var(&mut |x| *self.uses.entry(x).or_insert(0) += 1);
                            self.dec(v);
                            if let Some(k) = self.tree_uses.get_mut(&v) {
                                *k -= 1;
                            }
                            if self.uses.get(&v) == Some(&0) {
                                taken.insert(i);
                                def.for_each_var(&mut |x| self.dec(x));
                            }
                            *t = def;
                            return;
                        }
                    }
                }
                match self.known.get(&v).cloned() {
                    Some(Known::Const(k)) => {
                        *t = Tree::Const(k);
                        self.dec(v);
                    }
                    Some(Known::Dist { konst, dist, seg }) => {
                        let single_local =
                            self.uses.get(&v) == Some(&1) && b.stmts[..at].iter().any(|s| s.defs.contains(&v));
                        if self.fuse || single_local {
                            *t = Tree::Dist { konst, dist, seg };
                            self.dec(v);
                            *self.uses.entry(seg).or_insert(0) += 1;
                        }
                    }
                    None => {}
                }
            }
            Tree::Op { args, .. } => {
                for a in args {
                    self.subst(a, at, b, defs_at, taken);
                }
                // What replaced a variable was folded already (an earlier statement's
                // tree, a constant): only this node is left to fold. Folding the whole
                // tree again at each statement of a chain was quadratic.
                fold_node(t);
            }
            Tree::Const(_) | Tree::Dist { .. } => {}
        }
    }

    fn dec(&mut self, v: Var) {
        if let Some(n) = self.uses.get_mut(&v) {
            *n = n.saturating_sub(1);
        }
    }
}

/// Folds constant subtrees: a subtree whose leaves are all scalar constants becomes one
/// constant, one whose leaves are constants and constant broadcasts becomes one broadcast.
/// Evaluation uses the CPU vector library, so it follows the run-time semantics exactly; a
/// subtree that would trap (integer division by zero) or give NaN is left alone.
///
/// This folds the node `t` only, its operands being folded already.
fn fold_node(t: &mut Tree) {
    let Tree::Op { args, .. } = t else { return };
    if !args.iter().all(|a| matches!(a, Tree::Const(_) | Tree::Dist { .. })) {
        return;
    }
    let seg = args.iter().find_map(|a| match a {
        Tree::Dist { seg, .. } => Some(*seg),
        _ => None,
    });
    let Some(value) = crate::fuse::const_value(t) else { return };
    let konst = const_instr(value);
    *t = match seg {
        None => Tree::Const(konst),
        Some(seg) => {
            let ty = match value {
                HostScalar::Int(_) => Ty::Int,
                HostScalar::Float(_) => Ty::Float,
                HostScalar::Bool(_) => Ty::Bool,
            };
            Tree::Dist { konst, dist: Instr::typed(Opcode::Dist, ty), seg }
        }
    };
}

/// `CONST` of one scalar.
fn const_instr(v: HostScalar) -> Instr {
    let c = match v {
        HostScalar::Int(x) => Const::Int([x].into(), false),
        HostScalar::Float(x) => Const::Float([x].into(), false),
        HostScalar::Bool(x) => Const::Bool([x].into(), false),
    };
    Instr { op: Opcode::Const, ty: None, imm: Imm::Const(c) }
}

/// Deletes dead statements and unused `IF` results in a block, given the variables live
/// after it. Returns true when something changed, and the variables live before the
/// block (those live after it that it does not define, and its free variables): an `IF`
/// adds those of its branches, so that no block is walked again at every level of a
/// deep nest of `IF`s.
fn dce_block(b: &mut Block, live_out: &HashSet<Var>, superops: &[vcode::SuperOp]) -> (bool, HashSet<Var>) {
    let mut live: HashSet<Var> = live_out.clone();
    live.extend(b.results.iter().copied());
    let mut changed = false;
    let mut keep = vec![true; b.stmts.len()];
    for (i, s) in b.stmts.iter_mut().enumerate().rev() {
        let used = s.defs.iter().any(|d| live.contains(d));
        if !used && removable(&s.rhs, superops) {
            keep[i] = false;
            changed = true;
            continue;
        }
        if let Rhs::If { cond, then, els } = &mut s.rhs {
            // Drop the results nobody reads.
            let dead: Vec<usize> = (0..s.defs.len()).filter(|&k| !live.contains(&s.defs[k])).collect();
            if !dead.is_empty() {
                for &k in dead.iter().rev() {
                    s.defs.remove(k);
                    if !then.diverges {
                        then.results.remove(k);
                    }
                    if !els.diverges {
                        els.results.remove(k);
                    }
                }
                changed = true;
            }
            let mut inner_live = live.clone();
            for d in &s.defs {
                inner_live.remove(d);
            }
            let (c1, in1) = dce_block(then, &inner_live, superops);
            let (c2, in2) = dce_block(els, &inner_live, superops);
            changed |= c1 | c2;
            for d in &s.defs {
                live.remove(d);
            }
            live.insert(*cond);
            live.extend(in1);
            live.extend(in2);
            continue;
        }
        for d in &s.defs {
            live.remove(d);
        }
        s.rhs.for_each_use(&mut |v| {
            live.insert(v);
        });
    }
    if changed {
        let mut k = 0;
        b.stmts.retain(|_| {
            k += 1;
            keep[k - 1]
        });
    }
    (changed, live)
}

/// Removes unused parameters of non-entry functions and the matching call arguments.
fn drop_params(p: &mut LProgram, entry: usize) -> bool {
    let names: Vec<String> = p.funcs.iter().map(|f| f.name.clone()).collect();
    fn p_names_last(names: &[String], name: &str) -> Option<usize> {
        names.iter().rposition(|n| n == name)
    }
    let mut removed: HashMap<String, Vec<usize>> = HashMap::new();
    for (fi, f) in p.funcs.iter_mut().enumerate() {
        if fi == entry || p_names_last(&names, &f.name) != Some(fi) {
            continue;
        }
        let used = use_counts(&f.body);
        let dead: Vec<usize> = (0..f.params.len()).filter(|&k| !used.contains_key(&f.params[k])).collect();
        if !dead.is_empty() {
            for &k in dead.iter().rev() {
                f.params.remove(k);
            }
            f.sig = None;
            f.instances = None;
            removed.insert(f.name.clone(), dead);
        }
    }
    if removed.is_empty() {
        return false;
    }
    fn fix(b: &mut Block, removed: &HashMap<String, Vec<usize>>) {
        for s in &mut b.stmts {
            match &mut s.rhs {
                Rhs::Call { name, args } => {
                    if let Some(dead) = removed.get(name) {
                        for &k in dead.iter().rev() {
                            if k < args.len() {
                                args.remove(k);
                            }
                        }
                    }
                }
                Rhs::If { then, els, .. } => {
                    fix(then, removed);
                    fix(els, removed);
                }
                _ => {}
            }
        }
    }
    for f in &mut p.funcs {
        fix(&mut f.body, &removed);
    }
    true
}

/// Rewrites the boolean reductions of a constant broadcast, which the front end emits as
/// run-time checks that a constant made trivially true (`AND_REDUCE BOOL` of `DIST T`,
/// `OR_REDUCE BOOL` of `DIST F`): when the broadcast has as many elements as the
/// reduction's segment descriptor `s` (it is over `s` itself, or `s` is
/// `MAKE_SEGDES (+_REDUCE INT (LENGTHS s2, _))` and the broadcast is over `s2`) and
/// cannot trap (`s2` provably has one segment, also through parameters when every call
/// passes one), every segment reduces to the constant,
/// so the result is `L = L` (all `T`) or `L != L` (all `F`) with `L = LENGTHS s`: one
/// value per segment, exactly as before, computed from the segment lengths instead of a
/// full-length broadcast and reduction.
fn fold_const_reductions(p: &mut LProgram, fuse: bool) -> bool {
    /// What is known of one function's variables: the statement defining each (`CONST`,
    /// `DIST`, `MAKE_SEGDES`, reductions, ...) and the parameters known to be segment
    /// descriptors of one segment.
    #[derive(Default)]
    struct Facts {
        defs: HashMap<Var, Def>,
        one_seg: HashSet<Var>,
        uses: HashMap<Var, usize>,
        /// Variables bound to an integer compared with itself, and their value.
        self_cmp: HashMap<Var, bool>,
        /// Element-wise trees bound to one variable each (for [`sign`]).
        trees: HashMap<Var, Tree>,
    }
    /// A defining statement: its opcode, the value of a scalar constant, its operands.
    struct Def {
        op: Opcode,
        ty: Option<Ty>,
        scalar: Option<HostScalar>,
        args: Vec<Var>,
    }
    fn def(ins: &Instr, args: Vec<Var>) -> Def {
        Def { op: ins.op, ty: ins.ty, scalar: scalar_const(ins), args }
    }
    /// The defining statement of every variable bound alone, and the element-wise tree
    /// of those bound to one (for [`sign`]).
    fn defs(b: &Block, out: &mut HashMap<Var, Def>, trees: &mut HashMap<Var, Tree>) {
        for s in &b.stmts {
            match &s.rhs {
                Rhs::Prim { ins, args } if s.defs.len() == 1 => {
                    out.insert(s.defs[0], def(ins, args.clone()));
                }
                // A folded broadcast `DIST c` over `seg`, recorded as `DIST (k, seg)` with
                // `k` a pseudo-variable bound to `CONST c` (beyond every real variable).
                Rhs::Tree(Tree::Const(k)) if s.defs.len() == 1 => {
                    out.insert(s.defs[0], def(k, vec![]));
                }
                Rhs::Tree(Tree::Dist { konst, dist, seg }) if s.defs.len() == 1 => {
                    let k = Var::MAX - s.defs[0];
                    out.insert(k, def(konst, vec![]));
                    out.insert(s.defs[0], def(dist, vec![k, *seg]));
                }
                Rhs::Tree(t @ Tree::Op { .. }) if s.defs.len() == 1 => {
                    trees.insert(s.defs[0], t.clone());
                }
                Rhs::If { then, els, .. } => {
                    defs(then, out, trees);
                    defs(els, out, trees);
                }
                _ => {}
            }
        }
    }
    /// `x = x`, `x != x`, ... on integers: the same value at every element.
    fn self_comparisons(b: &Block, out: &mut HashMap<Var, bool>) {
        for s in &b.stmts {
            let cmp = match (&s.rhs, s.defs.as_slice()) {
                (Rhs::Prim { ins, args }, [r]) if args.len() == 2 && args[0] == args[1] => Some((*r, ins)),
                (Rhs::Tree(Tree::Op { ins, args, .. }), [r]) => match args.as_slice() {
                    [Tree::Var(a), Tree::Var(b)] if a == b => Some((*r, ins)),
                    _ => None,
                },
                (Rhs::If { then, els, .. }, _) => {
                    self_comparisons(then, out);
                    self_comparisons(els, out);
                    None
                }
                _ => None,
            };
            if let Some((r, ins)) = cmp {
                if ins.ty == Some(Ty::Int) {
                    let value = match ins.op {
                        Opcode::Eq | Opcode::Le | Opcode::Ge => Some(true),
                        Opcode::Ne | Opcode::Lt | Opcode::Gt => Some(false),
                        _ => None,
                    };
                    if let Some(v) = value {
                        out.insert(r, v);
                    }
                }
            }
        }
    }
    fn calls<'a>(b: &'a Block, out: &mut Vec<(&'a str, &'a [Var])>) {
        for s in &b.stmts {
            match &s.rhs {
                Rhs::Call { name, args } => out.push((name, args)),
                Rhs::If { then, els, .. } => {
                    calls(then, out);
                    calls(els, out);
                }
                _ => {}
            }
        }
    }
    // True when `v` is a segment descriptor of exactly one segment (so a `DIST` of a
    // scalar over it cannot trap): `MAKE_SEGDES` of a one-element vector, or a parameter
    // that every call site passes such a descriptor.
    fn one_segment(f: &Facts, v: Var, depth: u32) -> bool {
        f.one_seg.contains(&v)
            || matches!(f.defs.get(&v), Some(d) if d.op == Opcode::MakeSegdes && one_element(f, d.args[0], depth))
    }
    fn one_element(f: &Facts, v: Var, depth: u32) -> bool {
        let Some(d) = f.defs.get(&v) else { return false };
        if depth == 0 {
            return false;
        }
        match d.op.info().exec {
            Exec::Const => d.scalar.is_some(),
            Exec::Length => true,
            Exec::Reduce(_) | Exec::Lengths => d.args.last().is_some_and(|s| one_segment(f, *s, depth - 1)),
            _ => false,
        }
    }
    /// An operand of an element-wise operation: a variable, or a subtree.
    #[derive(Clone, Copy)]
    enum Arg<'a> {
        V(Var),
        T(&'a Tree),
    }
    /// The variable `a` is, if it is one.
    fn var_of(a: Arg) -> Option<Var> {
        match a {
            Arg::V(v) | Arg::T(&Tree::Var(v)) => Some(v),
            _ => None,
        }
    }
    /// The operation defining `a` (through variables bound to a tree or a primitive):
    /// opcode, type and operands; `None` for constants, parameters and the rest.
    fn defining<'a>(f: &'a Facts, a: Arg<'a>) -> Option<(Opcode, Option<Ty>, Vec<Arg<'a>>)> {
        if let Arg::T(Tree::Op { ins, args, .. }) = a {
            return Some((ins.op, ins.ty, args.iter().map(Arg::T).collect()));
        }
        let v = var_of(a)?;
        match f.trees.get(&v) {
            Some(t) => defining(f, Arg::T(t)),
            None => f.defs.get(&v).map(|d| (d.op, d.ty, d.args.iter().map(|&x| Arg::V(x)).collect())),
        }
    }
    /// The scalar constant `a` is (a `CONST`, or a broadcast of one).
    fn constant(f: &Facts, a: Arg) -> Option<HostScalar> {
        if let Arg::T(Tree::Const(k) | Tree::Dist { konst: k, .. }) = a {
            return scalar_const(k);
        }
        let d = f.defs.get(&var_of(a)?)?;
        match d.op {
            Opcode::Const => d.scalar,
            Opcode::Dist => constant(f, Arg::V(*d.args.first()?)),
            _ => None,
        }
    }
    /// Whether `a` and `b` are the same value (the same variable, or equal subtrees).
    fn same(a: Arg, b: Arg) -> bool {
        match (var_of(a), var_of(b), a, b) {
            (Some(x), Some(y), ..) => x == y,
            (None, None, Arg::T(x), Arg::T(y)) => x == y,
            _ => false,
        }
    }
    /// What every element of a FLOAT value is known to be: `1`, never a finite negative
    /// number (a zero of either sign, a positive number, an infinity or NaN: `-inf` comes
    /// from a division by `-0.0`); `2`, that and never a zero; `0`, nothing. A sum of such
    /// values is `2` when one of them is (a positive finite number plus a value of class
    /// `1` is positive, infinite or NaN), otherwise `1`; products and quotients are `1`
    /// (they may round to zero), as are `EXP`, a square and the absolute value
    /// `SELECT (x < 0) (0 - x) x`; `SQRT` keeps `2`. `budget` bounds the nodes visited
    /// (shared subtrees are visited once per path).
    fn sign(f: &Facts, a: Arg, budget: &mut u32) -> u8 {
        if *budget == 0 {
            return 0;
        }
        *budget -= 1;
        if let Some(c) = constant(f, a) {
            return match c {
                HostScalar::Float(x) if x > 0.0 => 2,
                HostScalar::Float(x) if x >= 0.0 => 1,
                _ => 0,
            };
        }
        let Some((op, ty, args)) = defining(f, a) else { return 0 };
        let mut s = |k: usize| args.get(k).map_or(0, |&x| sign(f, x, budget));
        match (op, ty, args.as_slice()) {
            (Opcode::Add, Some(Ty::Float), [_, _]) => {
                let (x, y) = (s(0), s(1));
                if x.min(y) >= 1 {
                    x.max(y)
                } else {
                    0
                }
            }
            (Opcode::Mul, Some(Ty::Float), [x, y]) if same(*x, *y) => 1,
            (Opcode::Mul | Opcode::Div, Some(Ty::Float), [_, _]) => {
                let (x, y) = (s(0), s(1));
                u8::from(x.min(y) >= 1)
            }
            (Opcode::Sqrt, _, [_]) => {
                if s(0) == 2 {
                    2
                } else {
                    1
                }
            }
            (Opcode::Exp, _, [_]) => 1,
            (Opcode::Select, Some(Ty::Float), [flag, neg, x]) => {
                let is_zero = |z: Arg| matches!(constant(f, z), Some(HostScalar::Float(c)) if c == 0.0);
                let abs = matches!(defining(f, *flag), Some((Opcode::Lt, Some(Ty::Float), fa))
                        if matches!(fa.as_slice(), [y, z] if same(*y, *x) && is_zero(*z)))
                    && matches!(defining(f, *neg), Some((Opcode::Sub, Some(Ty::Float), na))
                        if matches!(na.as_slice(), [z, y] if is_zero(*z) && same(*y, *x)));
                if abs {
                    1
                } else {
                    let (x, y) = (s(1), s(2));
                    x.min(y)
                }
            }
            _ => 0,
        }
    }
    /// Whether `v` is true at every element: `x != 0.0` for an `x` that is never zero
    /// (class `2` of [`sign`]).
    fn all_true(f: &Facts, v: Var) -> bool {
        let Some((op, ty, args)) = defining(f, Arg::V(v)) else { return false };
        let zero = |z: Arg| matches!(constant(f, z), Some(HostScalar::Float(c)) if c == 0.0);
        match (op, ty, args.as_slice()) {
            (Opcode::Ne, Some(Ty::Float), [x, z]) if zero(*z) => sign(f, *x, &mut 256) == 2,
            (Opcode::Ne, Some(Ty::Float), [z, x]) if zero(*z) => sign(f, *x, &mut 256) == 2,
            _ => false,
        }
    }
    /// The value of an `IF` condition that a check of [`all_true`] values makes constant:
    /// `NOT (AND_REDUCE t)` and `OR_REDUCE (NOT t)` are false (every segment, empty ones
    /// too).
    fn check_passes(f: &Facts, cond: Var) -> Option<bool> {
        let (op, _, args) = defining(f, Arg::V(cond))?;
        let var = |a: &Arg| var_of(*a);
        let passes = match (op, args.as_slice()) {
            (Opcode::Not, [r]) => matches!(defining(f, *r), Some((Opcode::AndReduce, _, ra))
                if ra.first().and_then(var).is_some_and(|t| all_true(f, t))),
            (Opcode::OrReduce, [t, _]) => matches!(defining(f, *t), Some((Opcode::Not, _, na))
                if na.first().and_then(var).is_some_and(|t| all_true(f, t))),
            _ => false,
        };
        passes.then_some(false)
    }
    fn rewrite(b: &mut Block, f: &Facts, next: &mut Var, fuse: bool) -> bool {
        let d = &f.defs;
        let mut changed = false;
        let op = |v: &Var| d.get(v).map(|x| (x.op, x.args.as_slice()));
        let mut out = Vec::with_capacity(b.stmts.len());
        for mut s in std::mem::take(&mut b.stmts) {
            if let Rhs::If { then, els, .. } = &mut s.rhs {
                changed |= rewrite(then, f, next, fuse);
                changed |= rewrite(els, f, next, fuse);
            }
            // Segment bookkeeping on constants.
            let scalar = |v: &Var| d.get(v).and_then(|x| x.scalar);
            // `MAKE_SEGDES x` for a constant x >= 0 (so it cannot trap): x.
            let const_segdes = |v: &Var| match d.get(v) {
                Some(x) if x.op == Opcode::MakeSegdes => match scalar(&x.args[0]) {
                    Some(HostScalar::Int(n)) if n >= 0 => Some(n),
                    _ => None,
                },
                _ => None,
            };
            let known = match (&s.rhs, s.defs.as_slice()) {
                // LENGTHS of a one-segment descriptor of constant length.
                (Rhs::Prim { ins, args }, [_]) if ins.op == Opcode::Lengths => {
                    const_segdes(&args[0]).map(HostScalar::Int)
                }
                // A reduction of one constant element over one segment of length 1.
                (Rhs::Prim { ins, args }, [_]) if matches!(exec_of(ins), Exec::Reduce(_)) && args.len() == 2 => {
                    scalar(&args[0]).filter(|_| const_segdes(&args[1]) == Some(1))
                }
                _ => None,
            };
            if let Some(value) = known {
                out.push(Stmt::new(s.defs, Rhs::Prim { ins: const_instr(value), args: vec![] }, s.origin));
                changed = true;
                continue;
            }
            // `NOT (AND_REDUCE BOOL (x, s))` is `OR_REDUCE BOOL (NOT x, s)` (and the other
            // way round), segment by segment, empty ones included: the NOT joins the
            // element-wise tree computing x, when it is the reduction's only reader (only
            // when fusing: otherwise the NOT would be one more full-length operation).
            if let (Rhs::Tree(Tree::Op { ins, args, origin }), [r], true) = (&s.rhs, s.defs.as_slice(), fuse) {
                if let (Opcode::Not, Some(Ty::Bool), [Tree::Var(a)]) = (ins.op, ins.ty, args.as_slice()) {
                    let dual = match d.get(a) {
                        Some(x) if x.ty == Some(Ty::Bool) && f.uses.get(a) == Some(&1) => match x.op {
                            Opcode::AndReduce => Some((Opcode::OrReduce, x.args.clone())),
                            Opcode::OrReduce => Some((Opcode::AndReduce, x.args.clone())),
                            _ => None,
                        },
                        _ => None,
                    };
                    if let Some((red, rargs)) = dual {
                        let n = *next;
                        *next += 1;
                        let not = Instr::typed(Opcode::Not, Ty::Bool);
                        out.push(Stmt::new(vec![n], Rhs::Prim { ins: not, args: vec![rargs[0]] }, *origin));
                        let red = Instr::typed(red, Ty::Bool);
                        out.push(Stmt::new(vec![*r], Rhs::Prim { ins: red, args: vec![n, rargs[1]] }, *origin));
                        changed = true;
                        continue;
                    }
                }
            }
            // An `IF` on a constant with no results: the branch taken, when it returns.
            // Comparing an integer with itself is a constant too: `L != L` is how the
            // boolean reductions above fold, and the length check of a zip whose two
            // sides CSE proved to be one vector reads so.
            if let (Rhs::If { cond, then, els }, true) = (&mut s.rhs, s.defs.is_empty()) {
                let known = scalar(cond)
                    .or_else(|| f.self_cmp.get(cond).map(|&c| HostScalar::Bool(c)))
                    .or_else(|| check_passes(f, *cond).map(HostScalar::Bool));
                if let Some(HostScalar::Bool(c)) = known {
                    let taken = if c { then } else { els };
                    if !taken.diverges && taken.results.is_empty() {
                        out.append(&mut taken.stmts);
                        changed = true;
                        continue;
                    }
                }
            }
            let folded = match (&s.rhs, s.defs.as_slice()) {
                (Rhs::Prim { ins, args }, [r]) if ins.ty == Some(Ty::Bool) && args.len() == 2 => {
                    let identity = match ins.op {
                        Opcode::AndReduce => Some(true),
                        Opcode::OrReduce => Some(false),
                        _ => None,
                    };
                    let seg = args[1];
                    let konst = match op(&args[0]) {
                        Some((Opcode::Dist, [c, s2])) if one_segment(f, *s2, 8) => {
                            let same_count = *s2 == seg
                                || matches!(op(&seg), Some((Opcode::MakeSegdes, [sum]))
                                    if matches!(op(sum), Some((Opcode::AddReduce, [lens, _]))
                                        if matches!(op(lens), Some((Opcode::Lengths, [x])) if x == s2)));
                            let value = d.get(c).and_then(|x| x.scalar);
                            same_count.then_some(value).flatten()
                        }
                        _ => None,
                    };
                    match (identity, konst) {
                        (Some(id), Some(HostScalar::Bool(b))) if b == id => Some((*r, seg, id)),
                        _ => None,
                    }
                }
                _ => None,
            };
            match folded {
                Some((r, seg, all_true)) => {
                    let lens = *next;
                    *next += 1;
                    let cmp = Instr::typed(if all_true { Opcode::Eq } else { Opcode::Ne }, Ty::Int);
                    let at = s.origin;
                    out.push(Stmt::new(vec![lens], Rhs::Prim { ins: Instr::plain(Opcode::Lengths), args: vec![seg] }, at));
                    out.push(Stmt::new(vec![r], Rhs::Prim { ins: cmp, args: vec![lens, lens] }, at));
                    changed = true;
                }
                None => out.push(s),
            }
        }
        b.stmts = out;
        changed
    }
    let mut facts: Vec<Facts> = p
        .funcs
        .iter()
        .map(|f| {
            let mut x = Facts::default();
            defs(&f.body, &mut x.defs, &mut x.trees);
            self_comparisons(&f.body, &mut x.self_cmp);
            x.uses = use_counts(&f.body);
            x
        })
        .collect();
    // Parameters that every call site passes a one-segment descriptor (a least fixed
    // point: a recursive call proves nothing about its own parameters).
    let index: HashMap<&str, usize> = p.funcs.iter().enumerate().map(|(i, f)| (f.name.as_str(), i)).collect();
    let sites: Vec<Vec<(&str, &[Var])>> = p
        .funcs
        .iter()
        .map(|f| {
            let mut v = Vec::new();
            calls(&f.body, &mut v);
            v
        })
        .collect();
    for _ in 0..4 {
        let mut proven: Vec<Option<Vec<bool>>> = vec![None; p.funcs.len()];
        for (caller, list) in sites.iter().enumerate() {
            for (name, args) in list {
                let Some(&callee) = index.get(name) else { continue };
                let here: Vec<bool> = args.iter().map(|a| one_segment(&facts[caller], *a, 8)).collect();
                let entry = proven[callee].get_or_insert_with(|| vec![true; args.len()]);
                for (k, ok) in here.into_iter().enumerate() {
                    if let Some(e) = entry.get_mut(k) {
                        *e &= ok;
                    }
                }
            }
        }
        let mut grew = false;
        for (i, pr) in proven.into_iter().enumerate() {
            let Some(pr) = pr else { continue };
            for (k, ok) in pr.into_iter().enumerate() {
                if let (true, Some(&v)) = (ok, p.funcs[i].params.get(k)) {
                    grew |= facts[i].one_seg.insert(v);
                }
            }
        }
        if !grew {
            break;
        }
    }
    let mut next = p.next_var;
    let mut changed = false;
    for (f, x) in p.funcs.iter_mut().zip(&facts) {
        changed |= rewrite(&mut f.body, x, &mut next, fuse);
    }
    p.next_var = next;
    changed
}

/// Runs the reducer on every function; `fuse` selects the substitution policy for
/// constant broadcasts (see the module documentation).
pub fn reduce(p: &mut LProgram, entry: usize, fuse: bool) {
    let run = |p: &mut LProgram| {
        for f in &mut p.funcs {
            let mut r = Reducer { fuse, known: HashMap::new(), uses: use_counts(&f.body), tree_uses: HashMap::new() };
            r.block(&mut f.body);
        }
    };
    run(p);
    // Checks that constant folding made trivial, then the trees they simplify, to a
    // fixed point (each round folds what the previous one made constant).
    for _ in 0..8 {
        if !fold_const_reductions(p, fuse) {
            break;
        }
        dead_code(p, entry);
        run(p);
    }
    dead_code(p, entry);
}

/// Dead-code elimination and parameter removal to a fixed point.
pub fn dead_code(p: &mut LProgram, entry: usize) {
    loop {
        let mut changed = false;
        for f in &mut p.funcs {
            while dce_block(&mut f.body, &HashSet::new(), &p.superops).0 {
                changed = true;
            }
        }
        changed |= drop_params(p, entry);
        if !changed {
            break;
        }
    }
}
