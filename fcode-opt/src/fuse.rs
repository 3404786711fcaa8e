//! Fusion: every expression tree with at least two operations becomes a superoperator.
//!
//! The tree's variable leaves become the parameters `$0, $1, ...` in order of first
//! appearance (a variable read twice is one parameter), typed by the operand position
//! they fill; scalar constants and constant broadcasts become constants of the
//! superoperator. A tree with no variable leaf takes the segment descriptor of one of its
//! broadcasts as its only (`SEGDES`) parameter, which gives the result length. Identical
//! superoperators share one table entry. The statement becomes `FUSED n` on the
//! parameters' variables; its origin becomes that of the first fused operation that can
//! trap (integer `/` or `%`, in evaluation order), or else of the root operation, and
//! keeps the origin of every fused operation, in evaluation order, in
//! `fused_parts` ([`vcode::Origin::parts`]): a trap names the operation that failed.
//!
//! First, a reduction or scan whose operand is such a tree (read only there) takes the
//! tree in: the superoperator then folds (`(+_REDUCE FLOAT (* FLOAT $0 $1) $2)`), and the
//! values are never stored. This holds for a one-operation tree too.
//!
//! Before both, a tree read several times, all by one later tree, moves into that tree at
//! each read ([`share_block`]): superoperators are trees in their text, but the vector
//! libraries evaluate identical subexpressions once. Then a small tree read by several
//! later trees is computed again in each of them ([`remat_block`]) instead of stored.
//!
//! Last, element-wise superoperators over the same elements that compute a subexpression
//! in common become one superoperator with several results ([`results_block`]): the two
//! components of Barnes-Hut's `pull` each divided the mass by `r2 * sqrt(r2)`, over the
//! same operands; now one pass computes the square root and the division once. Reductions
//! by the same operator over the same segments that read an operand in common become one
//! too (the two components of a direct N-body sum).

use crate::lir::{removable, use_counts, Block, LProgram, Rhs, Stmt, Tree, Var};
use crate::util::{add_operands, exec_of, operand_types, renumber, scalar_const};
use std::collections::{HashMap, HashSet};
use vcode::op::{Exec, SlotTy};
use vcode::cvl::ReduceOp;
use vcode::{Expr, Fold, FoldKind, HostScalar, HostVector, Imm, Instr, Opcode, Origin, SuperOp, Ty, VType};

struct Lift {
    params: Vec<(Var, Ty)>,
    witness: Option<Var>,
}

impl Lift {
    /// Translates `t`, which fills an operand slot of type `want`.
    fn expr(&mut self, t: &Tree, want: Option<VType>) -> Option<Expr> {
        Some(match t {
            Tree::Var(v) => {
                let ty = Ty::from(want?);
                match self.params.iter().position(|(p, _)| p == v) {
                    Some(i) => {
                        if self.params[i].1 != ty {
                            return None;
                        }
                        Expr::Arg(i)
                    }
                    None => {
                        self.params.push((*v, ty));
                        Expr::Arg(self.params.len() - 1)
                    }
                }
            }
            Tree::Const(k) => Expr::Const(scalar_const(k)?),
            Tree::Dist { konst, seg, .. } => {
                if self.witness.is_none() {
                    self.witness = Some(*seg);
                }
                Expr::Const(scalar_const(konst)?)
            }
            Tree::Op { ins, args, .. } => {
                let tys = operand_types(ins);
                let mut sub = Vec::with_capacity(args.len());
                for (a, t) in args.iter().zip(&tys) {
                    let want = match t {
                        Some(SlotTy::Vec(v)) => Some(*v),
                        _ => return None,
                    };
                    sub.push(self.expr(a, want)?);
                }
                let first = match tys.first() {
                    Some(Some(SlotTy::Vec(v))) => *v,
                    _ => return None,
                };
                let mut sub = sub.into_iter();
                match exec_of(ins) {
                    Exec::Binary(op) => {
                        Expr::Binary { op, ty: first, a: Box::new(sub.next()?), b: Box::new(sub.next()?) }
                    }
                    Exec::Unary(op) => Expr::Unary { op, ty: first, a: Box::new(sub.next()?) },
                    Exec::Select => {
                        let ty = match tys.get(1) {
                            Some(Some(SlotTy::Vec(v))) => *v,
                            _ => return None,
                        };
                        Expr::Select {
                            ty,
                            f: Box::new(sub.next()?),
                            a: Box::new(sub.next()?),
                            b: Box::new(sub.next()?),
                        }
                    }
                    _ => return None,
                }
            }
        })
    }
}

/// The superoperator for a tree and its operand variables, or `None` when the tree is
/// too small (fewer than two operations) or cannot be expressed.
pub fn lift(t: &Tree) -> Option<(SuperOp, Vec<Var>)> {
    if t.op_count() < 2 {
        return None;
    }
    let mut l = Lift { params: Vec::new(), witness: None };
    let body = l.expr(t, tree_type(t))?;
    let (params, args): (Vec<Ty>, Vec<Var>) = if l.params.is_empty() {
        let w = l.witness?;
        (vec![Ty::Segdes], vec![w])
    } else {
        l.params.iter().map(|(v, t)| (*t, *v)).unzip()
    };
    let op = SuperOp::elementwise(params, body);
    op.check().ok()?;
    Some((op, args))
}

/// The value of a tree whose leaves are all constants or constant broadcasts, computed
/// with the CPU vector library; `None` when it traps or is NaN (not writable as VCODE).
pub fn const_value(t: &Tree) -> Option<HostScalar> {
    let mut l = Lift { params: Vec::new(), witness: None };
    let e = l.expr(t, tree_type(t))?;
    if !l.params.is_empty() {
        return None;
    }
    let op = SuperOp::elementwise(vec![Ty::Segdes], e);
    op.check().ok()?;
    // One element: one thread (finding the default number of threads reads the system's
    // configuration, which cost more than the fold itself).
    let mut cvl = vcode::CpuCvl::with_threads(1);
    let v = vcode::cvl::fused_by_parts(&mut cvl, &op.body, &[None], 1).ok()?;
    use vcode::Cvl;
    Some(match cvl.to_host(&v).ok()? {
        HostVector::Int(x) => HostScalar::Int(*x.first()?),
        HostVector::Float(x) => {
            let f = *x.first()?;
            if f.is_nan() {
                return None;
            }
            HostScalar::Float(f)
        }
        HostVector::Bool(x) => HostScalar::Bool(*x.first()?),
    })
}

/// The result type of a tree's root.
fn tree_type(t: &Tree) -> Option<VType> {
    match t {
        Tree::Op { ins, .. } => match ins.op.info().effect {
            vcode::op::Effect::Fixed(_, outs) => match outs.first()?.resolve(ins.ty)? {
                SlotTy::Vec(v) => Some(v),
                SlotTy::Segdes => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// The superoperator folding tree `t` with `ins` (a reduction or scan) over `seg`, and
/// its operand variables, or `None` when the tree cannot be expressed.
pub fn lift_fold(t: &Tree, ins: &Instr, seg: Var) -> Option<(SuperOp, Vec<Var>)> {
    let (kind, op) = Fold::of_opcode(ins.op)?;
    let ty = match ins.ty? {
        Ty::Int => VType::Int,
        Ty::Float => VType::Float,
        Ty::Bool => VType::Bool,
        _ => return None,
    };
    let mut l = Lift { params: Vec::new(), witness: None };
    let body = l.expr(t, tree_type(t))?;
    // The fold's segment descriptor is the last parameter; it also gives the length.
    let (mut params, mut args): (Vec<Ty>, Vec<Var>) = l.params.iter().map(|(v, t)| (*t, *v)).unzip();
    params.push(Ty::Segdes);
    args.push(seg);
    let fold = Fold { kind, op, ty, seg: params.len() - 1 };
    let op = SuperOp::folding(params, body, fold);
    op.check().ok()?;
    Some((op, args))
}

/// Folds into each reduction or scan the element-wise tree that computes its operand,
/// when that tree is defined earlier in the same block and read nowhere else: the tree
/// moves to the reduction (never across a timer, and one that can trap never across a
/// statement with an effect or that can trap) and both become one `FUSED` statement.
fn fold_block(b: &mut Block, uses: &HashMap<Var, usize>, table: &mut Vec<SuperOp>, parts: &mut Vec<Vec<Origin>>) {
    let mut dead = Vec::new();
    for i in 0..b.stmts.len() {
        let (ins, x, seg) = match &b.stmts[i].rhs {
            Rhs::Prim { ins, args } if args.len() == 2 && Fold::of_opcode(ins.op).is_some() => (ins.clone(), args[0], args[1]),
            _ => continue,
        };
        if uses.get(&x) != Some(&1) {
            continue;
        }
        let Some(j) = b.stmts[..i].iter().rposition(|s| s.defs == [x]) else { continue };
        let Rhs::Tree(t) = &b.stmts[j].rhs else { continue };
        let between = &b.stmts[j + 1..i];
        if between.iter().any(|s| s.rhs.is_timer()) {
            continue;
        }
        if t.may_trap() && !between.iter().all(|s| removable(&s.rhs, table)) {
            continue;
        }
        let Some((op, args)) = lift_fold(t, &ins, seg) else { continue };
        let trap_at = t.trap_origin();
        let list = record_parts(parts, t);
        let k = intern(table, op);
        let st = &mut b.stmts[i];
        st.rhs = Rhs::Prim { ins: Instr { op: Opcode::Fused, ty: None, imm: Imm::Index(k as u32) }, args };
        if let Some(o) = trap_at {
            st.origin = o;
        }
        st.origin.parts = list;
        dead.push(j);
    }
    let mut k = 0;
    b.stmts.retain(|_| {
        k += 1;
        !dead.contains(&(k - 1))
    });
}

/// Most operations a tree may have after shared values move into it (each read is a
/// copy of the value's tree in the superoperator's text). Both vector libraries compute
/// identical subexpressions once (the CPU evaluator shares their steps; NVRTC's optimiser
/// the CUDA temporaries), so this bounds only the text and its compile time. Black-Scholes'
/// price, with `d1`, `d2` and both `cnd`s moved in, is about 1500: one pass over the
/// options instead of three (12 -> 7 elements touched per option at 1000, 16 at 400).
const SHARE_MAX_OPS: usize = 2000;

/// How many times `t` reads `v`.
fn reads_of(t: &Tree, v: Var) -> usize {
    let mut n = 0;
    t.for_each_var(&mut |x| n += usize::from(x == v));
    n
}

/// Replaces every read of `v` in `t` by `def`.
fn substitute(t: &mut Tree, v: Var, def: &Tree) {
    match t {
        Tree::Var(x) if *x == v => *t = def.clone(),
        Tree::Op { args, .. } => args.iter_mut().for_each(|a| substitute(a, v, def)),
        _ => {}
    }
}

/// Moves into a tree each element-wise value that it alone reads, several times: a value
/// defined earlier in the same block whose every read (`uses`) is in that one tree is
/// written there at each read (never across a timer, and one that can trap never across
/// a statement with an effect or that can trap). The superoperator then computes the
/// value once per element (the vector libraries share identical subexpressions) and it
/// is never stored: Black-Scholes' `k` (read five times by the polynomial) and the
/// polynomial (read twice by the final `select`) become one pass. To a fixed point;
/// `uses` is kept up to date.
fn share_block(b: &mut Block, uses: &mut HashMap<Var, usize>, table: &[SuperOp]) {
    'again: loop {
        for j in 0..b.stmts.len() {
            let (v, def) = match (b.stmts[j].defs.as_slice(), &b.stmts[j].rhs) {
                ([v], Rhs::Tree(t @ Tree::Op { .. })) => (*v, t.clone()),
                _ => continue,
            };
            let n = uses.get(&v).copied().unwrap_or(0);
            if n < 2 {
                continue;
            }
            let Some(i) = (j + 1..b.stmts.len()).find(|&i| {
                let mut hit = false;
                b.stmts[i].rhs.for_each_use(&mut |x| hit |= x == v);
                hit
            }) else {
                continue;
            };
            let Rhs::Tree(t) = &b.stmts[i].rhs else { continue };
            if reads_of(t, v) != n || t.op_count() + n * def.op_count() > SHARE_MAX_OPS {
                continue;
            }
            let between = &b.stmts[j + 1..i];
            if between.iter().any(|s| s.rhs.is_timer()) || (def.may_trap() && !between.iter().all(|s| removable(&s.rhs, table))) {
                continue;
            }
            def.for_each_var(&mut |x| *uses.entry(x).or_insert(0) += n - 1);
            uses.insert(v, 0);
            if let Rhs::Tree(t) = &mut b.stmts[i].rhs {
                substitute(t, v, &def);
            }
            b.stmts.remove(j);
            continue 'again;
        }
        break;
    }
    for s in &mut b.stmts {
        if let Rhs::If { then, els, .. } = &mut s.rhs {
            share_block(then, uses, table);
            share_block(els, uses, table);
        }
    }
}

/// Most operations of a value [`remat_block`] computes again in each tree that reads it.
const REMAT_MAX_OPS: usize = 12;

/// Most operands of such a value that are stored vectors (not `DIST`s, which the vector
/// libraries expand chunk by chunk as they read them).
const REMAT_MAX_VECTORS: usize = 2;

/// Computes a small element-wise value again in each tree that reads it, when only trees
/// of its block read it, several of them ([`share_block`] moves a value read by one tree)
/// and it cannot trap: the value is never stored, and the pass that stored it goes. Its
/// operands are read by the readers instead, alongside what they read already; at most
/// [`REMAT_MAX_VECTORS`] of them are stored vectors and it has at most
/// [`REMAT_MAX_OPS`] operations, so recomputing it costs less than the store and the
/// reads it saves. Never across a timer. `uses` is kept up to date.
///
/// The reducer recomputes trees of up to three operations in their readers as it builds
/// them ([`crate::reduce`]); this runs after the checks have become guards, when the
/// readers are trees of one block: Barnes-Hut's `r2 = dx * dx + dy * dy + 1.0e-6` (nine
/// operations over the bodies' coordinates and the cell's centre, a `DIST`), read by both
/// components of the force and the guards of `sqrt` and `/`, was a pass of its own that
/// wrote 8 bytes per term (Barnes-Hut 75K: 0.14 s of the run's superoperator time, 0.52 s).
fn remat_block(b: &mut Block, uses: &mut HashMap<Var, usize>) {
    let dists: HashSet<Var> = b
        .stmts
        .iter()
        .filter(|s| matches!(&s.rhs, Rhs::Prim { ins, .. } if ins.op == Opcode::Dist))
        .flat_map(|s| s.defs.iter().copied())
        .collect();
    let mut j = 0;
    while j < b.stmts.len() {
        let (v, def) = match (b.stmts[j].defs.as_slice(), &b.stmts[j].rhs) {
            ([v], Rhs::Tree(t @ Tree::Op { .. })) => (*v, t.clone()),
            _ => {
                j += 1;
                continue;
            }
        };
        let n = uses.get(&v).copied().unwrap_or(0);
        let mut vectors = HashSet::new();
        stored_leaves(&def, &dists, &mut vectors);
        if n < 2 || def.may_trap() || def.op_count() > REMAT_MAX_OPS || vectors.len() > REMAT_MAX_VECTORS {
            j += 1;
            continue;
        }
        // Every read is in a tree of this block after `j`, and no timer comes before the
        // last of them.
        let mut readers = Vec::new();
        let mut seen = 0;
        for (i, st) in b.stmts.iter().enumerate().skip(j + 1) {
            let mut hit = 0;
            st.rhs.for_each_use(&mut |x| hit += usize::from(x == v));
            if hit == 0 {
                continue;
            }
            match &st.rhs {
                Rhs::Tree(t) if t.op_count() + hit * def.op_count() <= SHARE_MAX_OPS => readers.push(i),
                _ => break,
            }
            seen += hit;
        }
        let last = readers.last().copied().unwrap_or(j);
        if seen != n || b.stmts[j + 1..last].iter().any(|s| s.rhs.is_timer()) {
            j += 1;
            continue;
        }
        def.for_each_var(&mut |x| *uses.entry(x).or_insert(0) += n - 1);
        uses.insert(v, 0);
        for &i in &readers {
            if let Rhs::Tree(t) = &mut b.stmts[i].rhs {
                substitute(t, v, &def);
            }
        }
        b.stmts.remove(j);
    }
    for s in &mut b.stmts {
        if let Rhs::If { then, els, .. } = &mut s.rhs {
            remat_block(then, uses);
            remat_block(els, uses);
        }
    }
}

/// The variables `t` reads as values (not a broadcast's segment descriptor) that are not
/// among `dists`.
fn stored_leaves(t: &Tree, dists: &HashSet<Var>, out: &mut HashSet<Var>) {
    match t {
        Tree::Var(v) if !dists.contains(v) => {
            out.insert(*v);
        }
        Tree::Op { args, .. } => args.iter().for_each(|a| stored_leaves(a, dists, out)),
        _ => {}
    }
}

/// The index of `op` in the table, adding it when new.
pub(crate) fn intern(table: &mut Vec<SuperOp>, op: SuperOp) -> usize {
    match table.iter().position(|o| *o == op) {
        Some(k) => k,
        None => {
            table.push(op);
            table.len() - 1
        }
    }
}

/// Adds the origins of `t`'s operations in evaluation order (the order in which the
/// vector libraries number a superoperator's operations) to `parts`; returns the
/// [`Origin::parts`] number of the new list.
fn record_parts(parts: &mut Vec<Vec<Origin>>, t: &Tree) -> u32 {
    let mut list = Vec::with_capacity(t.op_count());
    t.op_origins(&mut list);
    parts.push(list);
    parts.len() as u32
}

/// A `PACK` whose flags an element-wise tree computes: the statement, the tree's
/// statement, the data, the segment descriptor and the element type.
struct PackCand {
    at: usize,
    flag_at: usize,
    data: Var,
    seg: Var,
    ty: VType,
}

/// Packs whose flags come from element-wise trees become superoperators with a pack root
/// ([`vcode::Pack`]): each tree, defined earlier in the same block and read only by its
/// `PACK` (never across a timer; no tree that can trap), moves into the pack. The packs of
/// one vector over one segment descriptor (quicksort's three filters by its pivot) become
/// one `FUSED` at the first of them, which then reads the operands once for all of their
/// flags, when every later tree's operands are defined before it and no timer lies
/// between; its results are each pack's vector and descriptor, in order.
fn pack_block(b: &mut Block, uses: &HashMap<Var, usize>, table: &mut Vec<SuperOp>, parts: &mut Vec<Vec<Origin>>) {
    let mut cands = Vec::new();
    for (i, st) in b.stmts.iter().enumerate() {
        let Rhs::Prim { ins, args } = &st.rhs else { continue };
        let (Opcode::Pack, [data, flag, seg], Some(ty)) = (ins.op, args.as_slice(), ins.ty.and_then(|t| t.vtype())) else { continue };
        if uses.get(flag) != Some(&1) || st.defs.len() != 2 {
            continue;
        }
        let Some(j) = b.stmts[..i].iter().rposition(|s| s.defs == [*flag]) else { continue };
        let Rhs::Tree(t) = &b.stmts[j].rhs else { continue };
        if t.may_trap() || b.stmts[j + 1..i].iter().any(|s| s.rhs.is_timer()) {
            continue;
        }
        cands.push(PackCand { at: i, flag_at: j, data: *data, seg: *seg, ty });
    }
    if cands.is_empty() {
        return;
    }
    // Where each variable of this block is defined.
    let def_at: HashMap<Var, usize> = b.stmts.iter().enumerate().flat_map(|(i, s)| s.defs.iter().map(move |v| (*v, i))).collect();
    let tree_at = |k: usize| match &b.stmts[k].rhs {
        Rhs::Tree(t) => Some(t),
        _ => None,
    };
    let mut taken = vec![false; cands.len()];
    let mut fused: Vec<(usize, Stmt)> = Vec::new();
    let mut dead = Vec::new();
    for a in 0..cands.len() {
        if taken[a] {
            continue;
        }
        let lead = &cands[a];
        let mut group = vec![a];
        for (c, m) in cands.iter().enumerate().skip(a + 1) {
            if taken[c] || m.data != lead.data || m.seg != lead.seg || m.ty != lead.ty {
                continue;
            }
            let Some(t) = tree_at(m.flag_at) else { continue };
            let mut ready = true;
            t.for_each_var(&mut |x| ready &= def_at.get(&x).is_none_or(|&d| d < lead.at));
            if ready && !b.stmts[lead.at..m.at].iter().any(|s| s.rhs.is_timer()) {
                group.push(c);
            }
        }
        let mut l = Lift { params: Vec::new(), witness: None };
        let Some(body) = l.expr(&Tree::Var(lead.data), Some(lead.ty)) else { continue };
        let flags: Option<Vec<Expr>> = group.iter().map(|&c| tree_at(cands[c].flag_at).and_then(|t| l.expr(t, tree_type(t)))).collect();
        let Some(flags) = flags else { continue };
        let (mut params, mut args): (Vec<Ty>, Vec<Var>) = l.params.iter().map(|(v, t)| (*t, *v)).unzip();
        params.push(Ty::Segdes);
        args.push(lead.seg);
        let op = SuperOp::packing(params.clone(), body, params.len() - 1, flags);
        if op.check().is_err() {
            continue;
        }
        let mut list = Vec::new();
        for &c in &group {
            taken[c] = true;
            if let Some(t) = tree_at(cands[c].flag_at) {
                t.op_origins(&mut list);
            }
            dead.push(cands[c].flag_at);
            if c != a {
                dead.push(cands[c].at);
            }
        }
        parts.push(list);
        let k = intern(table, op);
        let defs = group.iter().flat_map(|&c| b.stmts[cands[c].at].defs.clone()).collect();
        let mut origin = b.stmts[lead.at].origin;
        origin.parts = parts.len() as u32;
        let ins = Instr { op: Opcode::Fused, ty: None, imm: Imm::Index(k as u32) };
        fused.push((lead.at, Stmt::new(defs, Rhs::Prim { ins, args }, origin)));
    }
    for (at, st) in fused {
        b.stmts[at] = st;
    }
    let mut k = 0;
    b.stmts.retain(|_| {
        k += 1;
        !dead.contains(&(k - 1))
    });
}

fn fuse_block(b: &mut Block, uses: &HashMap<Var, usize>, table: &mut Vec<SuperOp>, parts: &mut Vec<Vec<Origin>>) {
    pack_block(b, uses, table, parts);
    fold_block(b, uses, table, parts);
    for s in &mut b.stmts {
        match &mut s.rhs {
            Rhs::If { then, els, .. } => {
                fuse_block(then, uses, table, parts);
                fuse_block(els, uses, table, parts);
            }
            Rhs::Tree(t) => {
                if let Some((op, args)) = lift(t) {
                    let k = intern(table, op);
                    let ins = Instr { op: Opcode::Fused, ty: None, imm: Imm::Index(k as u32) };
                    // A run-time failure of the superoperator is one of its divisions:
                    // the vector library says which, and its origin is kept here.
                    if let Some(o) = t.trap_origin().or_else(|| t.root_origin()) {
                        s.origin = o;
                    }
                    s.origin.parts = record_parts(parts, t);
                    s.rhs = Rhs::Prim { ins, args };
                }
            }
            _ => {}
        }
    }
}

/// Statements after an element-wise superoperator among which [`results_block`] looks
/// for others to compute with it.
const RESULTS_WINDOW: usize = 16;

/// Most results of one superoperator [`results_block`] makes.
const RESULTS_MAX: usize = 4;

/// The superoperator and operands of statement `s` when it is a `FUSED` of one
/// element-wise result, or of one reduction (not an `OR` of flags), that cannot trap.
fn single_result<'a>(s: &'a Stmt, table: &'a [SuperOp]) -> Option<(&'a SuperOp, &'a [Var])> {
    let Rhs::Prim { ins, args } = &s.rhs else { return None };
    let (Opcode::Fused, Imm::Index(k)) = (ins.op, &ins.imm) else { return None };
    let op = table.get(*k as usize)?;
    let single = op.guard.is_none() && op.pack.is_none() && op.more.is_empty() && s.defs.len() == 1;
    // (An `OR_REDUCE` of flags is how a run-time check tests its condition: the checks
    // pass merges those into one test, which becomes a guard.)
    let kind = op.fold.is_none_or(|f| f.kind == FoldKind::Reduce && !(f.op == ReduceOp::Or && f.ty == VType::Bool));
    (single && kind && !op.body.may_trap()).then_some((op, args))
}

/// The fold of superoperator `op` at operands `args`, with the variable of its
/// descriptor: results can be computed together when these are equal.
fn fold_of(op: &SuperOp, args: &[Var]) -> Option<(FoldKind, ReduceOp, VType, Option<Var>)> {
    op.fold.map(|f| (f.kind, f.op, f.ty, args.get(f.seg).copied()))
}

/// Pushes the subtrees of `e` of at least two operations onto `out`; returns the
/// operations of `e`.
fn big_subtrees<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) -> usize {
    let ops = match e {
        Expr::Arg(_) | Expr::Const(_) => return 0,
        Expr::Binary { a, b, .. } => 1 + big_subtrees(a, out) + big_subtrees(b, out),
        Expr::Unary { a, .. } => 1 + big_subtrees(a, out),
        Expr::Select { f, a, b, .. } => 1 + big_subtrees(f, out) + big_subtrees(a, out) + big_subtrees(b, out),
    };
    if ops >= 2 {
        out.push(e);
    }
    ops
}

/// Whether `a` and `b` (over the same parameters) have a subtree of at least two
/// operations in common.
fn share_work(a: &[&Expr], b: &Expr) -> bool {
    let mut subs = Vec::new();
    for e in a {
        big_subtrees(e, &mut subs);
    }
    let mut theirs = Vec::new();
    big_subtrees(b, &mut theirs);
    theirs.iter().any(|t| subs.contains(t))
}

/// Makes element-wise superoperators over the same elements (a data operand in common)
/// that have a subexpression of two operations or more in common one superoperator with
/// several results, and reductions by the same operator over the same segment
/// descriptor that read a data operand in common one superoperator with several
/// reductions (one pass over the operand), at the first of them: a later one joins when its operands are all
/// defined before the first and no timer lies between (it cannot trap and has no effect,
/// so it may run earlier). Its results keep their variables; its origin list is the
/// first's, then each joining one's.
fn results_block(b: &mut Block, table: &mut Vec<SuperOp>, parts: &mut Vec<Vec<Origin>>) {
    for s in &mut b.stmts {
        if let Rhs::If { then, els, .. } = &mut s.rhs {
            results_block(then, table, parts);
            results_block(els, table, parts);
        }
    }
    // Where each variable of the block is defined (again after each merge).
    let positions = |b: &Block| -> HashMap<Var, usize> { b.stmts.iter().enumerate().flat_map(|(i, s)| s.defs.iter().map(move |v| (*v, i))).collect() };
    let mut def_at = positions(b);
    let mut i = 0;
    while i < b.stmts.len() {
        let Some((first, first_args)) = single_result(&b.stmts[i], table) else {
            i += 1;
            continue;
        };
        let mut op = first.clone();
        let mut vars = first_args.to_vec();
        let mut joined: Vec<usize> = Vec::new();
        let data = |vars: &[Var], params: &[Ty]| -> HashSet<Var> { vars.iter().zip(params).filter(|(_, t)| **t != Ty::Segdes).map(|(v, _)| *v).collect() };
        let end = (i + 1 + RESULTS_WINDOW).min(b.stmts.len());
        for j in i + 1..end {
            if b.stmts[j].rhs.is_timer() || op.results() >= RESULTS_MAX {
                break;
            }
            let Some((other, args)) = single_result(&b.stmts[j], table) else { continue };
            // (A variable not defined in this block comes from around it.)
            let ready = args.iter().all(|v| def_at.get(v).is_none_or(|&d| d < i));
            let common = !data(&vars, &op.params).is_disjoint(&data(args, &other.params));
            // Element-wise with element-wise, or the same reduction over the same segments.
            let alike = fold_of(&op, &vars) == fold_of(other, args);
            if !ready || !common || !alike {
                continue;
            }
            let (mut v2, mut p2) = (vars.clone(), op.params.clone());
            let map = add_operands(&mut v2, &mut p2, args, &other.params);
            let e = renumber(&other.body, &map);
            let trees: Vec<&Expr> = std::iter::once(&op.body).chain(&op.more).collect();
            // (A tree equal to one already computed would be a second copy of its values:
            // left to be computed on its own. Reductions join for the operand they read in
            // common alone: their results are small.)
            if trees.contains(&&e) || (op.fold.is_none() && !share_work(&trees, &e)) {
                continue;
            }
            let mut next = SuperOp { params: p2, more: op.more.clone(), ..op.clone() };
            next.more.push(e);
            if next.check().is_err() {
                continue;
            }
            op = next;
            vars = v2;
            joined.push(j);
        }
        if joined.is_empty() {
            i += 1;
            continue;
        }
        let mut list: Vec<Origin> = Vec::new();
        let mut defs = b.stmts[i].defs.clone();
        for &k in std::iter::once(&i).chain(&joined) {
            let st = &b.stmts[k];
            if let Some(ops) = (st.origin.parts as usize).checked_sub(1).and_then(|n| parts.get(n)) {
                list.extend(ops.iter().copied());
            }
            if k != i {
                defs.extend(st.defs.iter().copied());
            }
        }
        parts.push(list);
        let k = intern(table, op);
        let st = &mut b.stmts[i];
        st.defs = defs;
        st.origin.parts = parts.len() as u32;
        st.rhs = Rhs::Prim { ins: Instr { op: Opcode::Fused, ty: None, imm: Imm::Index(k as u32) }, args: vars };
        for &j in joined.iter().rev() {
            b.stmts.remove(j);
        }
        def_at = positions(b);
        i += 1;
    }
}

/// Replaces every fusible tree of the program by a `FUSED` statement.
pub fn fuse(p: &mut LProgram) {
    let mut table = std::mem::take(&mut p.superops);
    let mut parts = std::mem::take(&mut p.fused_parts);
    for f in &mut p.funcs {
        let mut uses = use_counts(&f.body);
        share_block(&mut f.body, &mut uses, &table);
        remat_block(&mut f.body, &mut uses);
        fuse_block(&mut f.body, &uses, &mut table, &mut parts);
        results_block(&mut f.body, &mut table, &mut parts);
    }
    p.superops = table;
    p.fused_parts = parts;
}
