//! Merging run-time checks: consecutive checks over one segment descriptor become one
//! pass over the data, and the checks themselves run only when that pass finds a failure.
//!
//! A check, after fusion, is a superoperator that OR-reduces a condition over one segment
//! descriptor (`(OR_REDUCE BOOL (NOT BOOL (>= FLOAT $0 (CONST FLOAT 0.0))) $1)`), read only
//! by an `IF` whose then-block diverges (writes the error and exits) and whose else-block
//! is empty. Black-Scholes makes four in a row (square root of a negative number, two
//! divisions by zero, logarithm of a negative number), each a pass over up to two input
//! vectors. A run of such checks on the same descriptor, with only statements between them
//! that have no effect and cannot trap, becomes
//!
//! ```text
//! let any = FUSED (OR_REDUCE BOOL (OR BOOL c1 (OR BOOL c2 ...)) seg)
//! IF any { the checks, in their order } ELSE { }
//! ```
//!
//! placed where the last check was (the statements between them, which cannot fail or be
//! observed, run first). The merged condition reads each input once; when it holds, the
//! original checks run in their order, so the first failing one reports its error, as
//! before. Checks that can trap themselves (integer division) are left alone.
//!
//! Then each test (a check, or merged checks) followed, past statements that cannot fail
//! or be observed, by an element-wise superoperator over the same elements (a data operand
//! in common) that cannot trap becomes that superoperator's *guard*
//! ([`vcode::Guard`]):
//!
//! ```text
//! let (r, any) = FUSED (body ... (OR_REDUCE BOOL cond seg))
//! IF any { the checks } ELSE { }
//! ```
//!
//! One pass over the operands computes the values and the test (Black-Scholes reads its
//! three input vectors once, not twice). The values are computed before the test is read,
//! which nothing can observe: the superoperator neither traps nor has an effect, and when
//! the test holds its checks end the program. Superoperators no statement uses any more
//! are dropped from the table.

use crate::fuse::intern;
use crate::util::{add_operands, renumber};
use crate::lir::{removable, superop_may_trap, use_counts, Block, LProgram, Rhs, Stmt, Var};
use std::collections::HashMap;
use vcode::cvl::{BinOp, ReduceOp};
use vcode::{Expr, Fold, FoldKind, Guard, Imm, Instr, Opcode, Origin, SuperOp, Ty, VType};

/// A check at statement `i` of a block: its superoperator and operands.
struct Check {
    at: usize,
    op: usize,
    args: Vec<Var>,
}

/// The check starting at statement `i` (the `FUSED` reduction; the `IF` follows), if any.
fn check_at(b: &Block, i: usize, uses: &HashMap<Var, usize>, table: &[SuperOp]) -> Option<Check> {
    test_at(b, i, uses, table).filter(|c| matches!(&b.stmts[c.at + 1].rhs, Rhs::If { then, .. } if then.diverges))
}

/// A test starting at statement `i`: a check, or merged checks (whose then-block runs the
/// checks it merged, so does not itself diverge).
fn test_at(b: &Block, i: usize, uses: &HashMap<Var, usize>, table: &[SuperOp]) -> Option<Check> {
    let (s, t) = (b.stmts.get(i)?, b.stmts.get(i + 1)?);
    let (Rhs::Prim { ins, args }, [c]) = (&s.rhs, s.defs.as_slice()) else { return None };
    let (Opcode::Fused, Imm::Index(k)) = (ins.op, &ins.imm) else { return None };
    let op = table.get(*k as usize)?;
    let fold = op.fold?;
    let or = Fold { kind: FoldKind::Reduce, op: ReduceOp::Or, ty: VType::Bool, seg: op.params.len() - 1 };
    if fold != or || op.params.last() != Some(&Ty::Segdes) || op.body.may_trap() || uses.get(c) != Some(&1) {
        return None;
    }
    let Rhs::If { cond, then, els } = &t.rhs else { return None };
    let empty_else = els.stmts.is_empty() && els.results.is_empty() && !els.diverges;
    let no_results = then.results.is_empty();
    (cond == c && t.defs.is_empty() && no_results && empty_else).then(|| Check { at: i, op: *k as usize, args: args.clone() })
}

/// The superoperator OR-reducing the conditions of `checks` (all over the same segment
/// descriptor, their last operand) and its operands: each variable once.
fn merged(checks: &[Check], table: &[SuperOp]) -> Option<(SuperOp, Vec<Var>)> {
    let mut vars: Vec<Var> = Vec::new();
    let mut params: Vec<Ty> = Vec::new();
    let mut body: Option<Expr> = None;
    for c in checks {
        let op = &table[c.op];
        let map = add_operands(&mut vars, &mut params, &c.args[..c.args.len() - 1], &op.params);
        let e = renumber(&op.body, &map);
        body = Some(match body {
            None => e,
            Some(acc) => Expr::Binary { op: BinOp::Or, ty: VType::Bool, a: Box::new(acc), b: Box::new(e) },
        });
    }
    let seg = *checks.first()?.args.last()?;
    vars.push(seg);
    params.push(Ty::Segdes);
    let fold = Fold { kind: FoldKind::Reduce, op: ReduceOp::Or, ty: VType::Bool, seg: params.len() - 1 };
    let op = SuperOp::folding(params, body?, fold);
    op.check().ok()?;
    Some((op, vars))
}

/// The origins of the merged superoperator's operations in evaluation order (those of
/// each check's operations, then, from the second check on, the `OR` joining it, given
/// that check's origin), recorded in `parts`; returns its [`vcode::Origin::parts`] number.
fn merged_parts(checks: &[&Stmt], parts: &mut Vec<Vec<Origin>>) -> u32 {
    let mut list = Vec::new();
    for (n, c) in checks.iter().enumerate() {
        if let Some(ops) = (c.origin.parts as usize).checked_sub(1).and_then(|k| parts.get(k)) {
            list.extend_from_slice(ops);
        }
        if n > 0 {
            list.push(Origin { parts: 0, ..c.origin });
        }
    }
    parts.push(list);
    parts.len() as u32
}

fn merge_block(b: &mut Block, uses: &HashMap<Var, usize>, table: &mut Vec<SuperOp>, parts: &mut Vec<Vec<Origin>>, next_var: &mut Var) {
    for s in &mut b.stmts {
        if let Rhs::If { then, els, .. } = &mut s.rhs {
            merge_block(then, uses, table, parts, next_var);
            merge_block(els, uses, table, parts, next_var);
        }
    }
    let mut i = 0;
    while i < b.stmts.len() {
        let Some(first) = check_at(b, i, uses, table) else {
            i += 1;
            continue;
        };
        let seg = first.args.last().copied();
        // The run: checks on the same descriptor, with statements between them that have
        // no effect and cannot trap.
        let mut run = vec![first];
        let mut j = i + 2;
        let mut end = j;
        while j < b.stmts.len() {
            if let Some(c) = check_at(b, j, uses, table).filter(|c| c.args.last().copied() == seg) {
                run.push(c);
                j += 2;
                end = j;
            } else if removable(&b.stmts[j].rhs, table) && !b.stmts[j].rhs.is_timer() {
                j += 1;
            } else {
                break;
            }
        }
        if run.len() < 2 {
            i += 2;
            continue;
        }
        let Some((op, args)) = merged(&run, table) else {
            i = end;
            continue;
        };
        let k = intern(table, op);
        // Pull the checks out of `i..end`, keeping the other statements in order.
        let mut checks: Vec<Stmt> = Vec::with_capacity(2 * run.len());
        let mut others: Vec<Stmt> = Vec::new();
        let span: Vec<Stmt> = b.stmts.drain(i..end).collect();
        for (n, s) in span.into_iter().enumerate() {
            if run.iter().any(|c| c.at - i == n || c.at - i + 1 == n) {
                checks.push(s);
            } else {
                others.push(s);
            }
        }
        let origin = checks[0].origin;
        let reductions: Vec<&Stmt> = checks.iter().step_by(2).collect();
        let list = merged_parts(&reductions, parts);
        let any = *next_var;
        *next_var += 1;
        let test = Stmt::new(
            vec![any],
            Rhs::Prim { ins: Instr { op: Opcode::Fused, ty: None, imm: Imm::Index(k as u32) }, args },
            Origin { parts: list, ..origin },
        );
        let guard = Stmt::new(
            Vec::new(),
            Rhs::If { cond: any, then: Block { stmts: checks, results: Vec::new(), diverges: false }, els: Block::default() },
            Origin { parts: 0, ..origin },
        );
        let n_others = others.len();
        let mut new = others;
        new.push(test);
        new.push(guard);
        b.stmts.splice(i..i, new);
        i += n_others + 2;
    }
}

/// The operator and operands of statement `s` when it is an element-wise superoperator
/// (of one result or several) that a test over `test`'s operands can guard: no fold, no
/// guard, no pack, nothing that traps,
/// and a data operand in common with the test (so both run over the same elements).
fn guardable<'a>(s: &'a Stmt, test: &Check, table: &[SuperOp]) -> Option<(usize, &'a [Var])> {
    let Rhs::Prim { ins, args } = &s.rhs else { return None };
    let (Opcode::Fused, Imm::Index(k)) = (ins.op, &ins.imm) else { return None };
    let op = table.get(*k as usize)?;
    let tested = &table[test.op];
    let data = |v: &Var, params: &[Ty], vars: &[Var]| vars.iter().zip(params).any(|(x, t)| x == v && *t != Ty::Segdes);
    let shared = args.iter().any(|v| data(v, &op.params, args) && data(v, &tested.params, &test.args));
    let plain = op.fold.is_none() && op.guard.is_none() && op.pack.is_none() && s.defs.len() == op.results();
    (plain && !superop_may_trap(op) && shared).then_some((*k as usize, args))
}

/// `op` (at its operands `args`) with `test`'s condition as its guard, and the operands
/// of the result: `args`, then those of the test's it lacks (its descriptor last).
fn guarded(op: &SuperOp, args: &[Var], test: &Check, table: &[SuperOp]) -> Option<(SuperOp, Vec<Var>)> {
    let tested = &table[test.op];
    let fold = tested.fold?;
    let mut vars = args.to_vec();
    let mut params = op.params.clone();
    let map = add_operands(&mut vars, &mut params, &test.args, &tested.params);
    let guard = Guard { cond: renumber(&tested.body, &map), seg: map[fold.seg] };
    let g = SuperOp { params, body: op.body.clone(), fold: None, guard: Some(guard), pack: None, more: op.more.clone() };
    g.check().ok()?;
    Some((g, vars))
}

/// Gives each test (a check, or merged checks) followed, past statements that have no
/// effect and cannot trap, by an element-wise superoperator over the same elements, to
/// that superoperator as its guard: one pass over the operands computes both, and the
/// test's `IF` reads the guard's flag right after.
fn guard_block(b: &mut Block, uses: &HashMap<Var, usize>, table: &mut Vec<SuperOp>, next_var: &mut Var) {
    for s in &mut b.stmts {
        if let Rhs::If { then, els, .. } = &mut s.rhs {
            guard_block(then, uses, table, next_var);
            guard_block(els, uses, table, next_var);
        }
    }
    let mut i = 0;
    while i < b.stmts.len() {
        let Some(test) = test_at(b, i, uses, table) else {
            i += 1;
            continue;
        };
        let mut j = i + 2;
        let mut target = None;
        while j < b.stmts.len() {
            if let Some((k, args)) = guardable(&b.stmts[j], &test, table) {
                target = guarded(&table[k], args, &test, table);
                break;
            }
            if !removable(&b.stmts[j].rhs, table) || b.stmts[j].rhs.is_timer() {
                break;
            }
            j += 1;
        }
        let Some((op, args)) = target else {
            i += 2;
            continue;
        };
        let k = intern(table, op);
        let flag = *next_var;
        *next_var += 1;
        // The test's `IF` now reads the flag, right after the superoperator; the
        // statements between run before it (they can neither fail nor be observed).
        let mut test_if = b.stmts.remove(i + 1);
        b.stmts.remove(i);
        if let Rhs::If { cond, .. } = &mut test_if.rhs {
            *cond = flag;
        }
        let at = j - 2;
        let s = &mut b.stmts[at];
        s.defs.push(flag);
        s.rhs = Rhs::Prim { ins: Instr { op: Opcode::Fused, ty: None, imm: Imm::Index(k as u32) }, args };
        b.stmts.insert(at + 1, test_if);
        i = at + 2;
    }
}

/// Merges every run of consecutive checks over one segment descriptor, then makes each
/// test the guard of the computation that follows it (see the module documentation).
pub fn merge_checks(p: &mut LProgram) {
    let mut table = std::mem::take(&mut p.superops);
    let mut parts = std::mem::take(&mut p.fused_parts);
    let mut next = p.next_var;
    for f in &mut p.funcs {
        let uses = use_counts(&f.body);
        merge_block(&mut f.body, &uses, &mut table, &mut parts, &mut next);
        let uses = use_counts(&f.body);
        guard_block(&mut f.body, &uses, &mut table, &mut next);
    }
    p.next_var = next;
    p.superops = table;
    p.fused_parts = parts;
    drop_unused(p);
}

/// Calls `f` on the table index of every `FUSED` statement of `b`, nested blocks included.
fn each_fused(b: &mut Block, f: &mut dyn FnMut(&mut u32)) {
    for s in &mut b.stmts {
        match &mut s.rhs {
            Rhs::Prim { ins, .. } if ins.op == Opcode::Fused => {
                if let Imm::Index(k) = &mut ins.imm {
                    f(k);
                }
            }
            Rhs::If { then, els, .. } => {
                each_fused(then, f);
                each_fused(els, f);
            }
            _ => {}
        }
    }
}

/// Drops the superoperators no statement uses any more (those guarded ones replaced),
/// renumbering the others.
fn drop_unused(p: &mut LProgram) {
    let mut used = vec![false; p.superops.len()];
    let mut valid = true;
    for f in &mut p.funcs {
        each_fused(&mut f.body, &mut |k| match used.get_mut(*k as usize) {
            Some(u) => *u = true,
            None => valid = false,
        });
    }
    if !valid || used.iter().all(|&u| u) {
        return;
    }
    let mut map = vec![0u32; used.len()];
    let mut next = 0;
    for (m, &u) in map.iter_mut().zip(&used) {
        *m = next;
        next += u as u32;
    }
    for f in &mut p.funcs {
        each_fused(&mut f.body, &mut |k| *k = map[*k as usize]);
    }
    let mut keep = used.into_iter();
    p.superops.retain(|_| keep.next().unwrap_or(true));
}
