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

use crate::fuse::intern;
use crate::lir::{expr_may_trap, removable, use_counts, Block, LProgram, Rhs, Stmt, Var};
use std::collections::HashMap;
use vcode::cvl::{BinOp, ReduceOp};
use vcode::{Expr, Fold, FoldKind, Imm, Instr, Opcode, Origin, SuperOp, Ty, VType};

/// A check at statement `i` of a block: its superoperator and operands.
struct Check {
    at: usize,
    op: usize,
    args: Vec<Var>,
}

/// The check starting at statement `i` (the `FUSED` reduction; the `IF` follows), if any.
fn check_at(b: &Block, i: usize, uses: &HashMap<Var, usize>, table: &[SuperOp]) -> Option<Check> {
    let (s, t) = (b.stmts.get(i)?, b.stmts.get(i + 1)?);
    let (Rhs::Prim { ins, args }, [c]) = (&s.rhs, s.defs.as_slice()) else { return None };
    let (Opcode::Fused, Imm::Index(k)) = (ins.op, &ins.imm) else { return None };
    let op = table.get(*k as usize)?;
    let fold = op.fold?;
    let or = Fold { kind: FoldKind::Reduce, op: ReduceOp::Or, ty: VType::Bool, seg: op.params.len() - 1 };
    if fold != or || op.params.last() != Some(&Ty::Segdes) || expr_may_trap(&op.body) || uses.get(c) != Some(&1) {
        return None;
    }
    let Rhs::If { cond, then, els } = &t.rhs else { return None };
    let empty_else = els.stmts.is_empty() && els.results.is_empty() && !els.diverges;
    (cond == c && t.defs.is_empty() && then.diverges && empty_else).then(|| Check { at: i, op: *k as usize, args: args.clone() })
}

/// `e` with parameter `$i` renamed `$map[i]`.
fn renumber(e: &Expr, map: &[usize]) -> Expr {
    match e {
        Expr::Arg(i) => Expr::Arg(map[*i]),
        Expr::Const(c) => Expr::Const(*c),
        Expr::Binary { op, ty, a, b } => Expr::Binary { op: *op, ty: *ty, a: Box::new(renumber(a, map)), b: Box::new(renumber(b, map)) },
        Expr::Unary { op, ty, a } => Expr::Unary { op: *op, ty: *ty, a: Box::new(renumber(a, map)) },
        Expr::Select { ty, f, a, b } => {
            Expr::Select { ty: *ty, f: Box::new(renumber(f, map)), a: Box::new(renumber(a, map)), b: Box::new(renumber(b, map)) }
        }
    }
}

/// The superoperator OR-reducing the conditions of `checks` (all over the same segment
/// descriptor, their last operand) and its operands: each variable once.
fn merged(checks: &[Check], table: &[SuperOp]) -> Option<(SuperOp, Vec<Var>)> {
    let mut vars: Vec<Var> = Vec::new();
    let mut params: Vec<Ty> = Vec::new();
    let mut body: Option<Expr> = None;
    for c in checks {
        let op = &table[c.op];
        let data = &c.args[..c.args.len() - 1];
        let map: Vec<usize> = data
            .iter()
            .zip(&op.params)
            .map(|(v, t)| match vars.iter().position(|x| x == v) {
                Some(k) => k,
                None => {
                    vars.push(*v);
                    params.push(*t);
                    vars.len() - 1
                }
            })
            .collect();
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
    let op = SuperOp { params, body: body?, fold: Some(fold) };
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

/// Merges every run of consecutive checks over one segment descriptor (see the module
/// documentation).
pub fn merge_checks(p: &mut LProgram) {
    let mut table = std::mem::take(&mut p.superops);
    let mut parts = std::mem::take(&mut p.fused_parts);
    let mut next = p.next_var;
    for f in &mut p.funcs {
        let uses = use_counts(&f.body);
        merge_block(&mut f.body, &uses, &mut table, &mut parts, &mut next);
    }
    p.next_var = next;
    p.superops = table;
    p.fused_parts = parts;
}
