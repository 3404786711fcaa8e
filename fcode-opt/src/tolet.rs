//! Stack → let: symbolic execution of each function's stack code.
//!
//! The abstract stack holds variables. The function's parameters are its input slots
//! (from the verifier's analysis, [`vcode::analyze`]); every computing instruction pops its operand variables and
//! pushes fresh ones, bound by a statement; `COPY`, `POP` and `CPOP` only rearrange the
//! abstract stack and so disappear. An `IF` runs both branches from the same stack: the
//! deepest slots on which both agree stay as they are, the rest become the values the
//! `IF` statement binds (each branch returns its own). Code after a point that never
//! returns is dead and dropped.

use crate::lir::{Block, LFunc, LProgram, Rhs, Stmt, Var};
use crate::util::{exec_of, instr_arity, structure, Node};
use crate::OptError;
use vcode::op::Exec;
use vcode::{Analysis, Function, FunctionInfo, Imm, Program};

struct Conv<'a> {
    prog: &'a Program,
    sigs: &'a [FunctionInfo],
    func: &'a Function,
    next: Var,
}

impl Conv<'_> {
    fn fresh(&mut self) -> Var {
        self.next += 1;
        self.next - 1
    }

    fn bad(&self, i: usize, m: String) -> OptError {
        let p = self.func.pos_of(i);
        OptError::Malformed { function: self.func.name.clone(), message: format!("{}:{}: {m}", p.line, p.col) }
    }

    fn pop_n(&self, stack: &mut Vec<Var>, n: usize, at: usize) -> Result<Vec<Var>, OptError> {
        if stack.len() < n {
            return Err(self.bad(at, format!("stack underflow: needs {n} slots, has {}", stack.len())));
        }
        Ok(stack.split_off(stack.len() - n))
    }

    /// Converts `nodes` starting from `stack`; leaves the final stack in `stack`.
    /// Returns the statements and whether the path diverges.
    fn block(&mut self, nodes: &[Node], stack: &mut Vec<Var>) -> Result<(Vec<Stmt>, bool), OptError> {
        let mut stmts = Vec::new();
        for node in nodes {
            match node {
                Node::Ins(i) => {
                    let i = *i;
                    let ins = &self.func.body[i];
                    match (exec_of(ins), &ins.imm) {
                        (Exec::Copy | Exec::Pop | Exec::Cpop, Imm::Counts(n, d)) => {
                            let (n, d) = (*n as usize, *d as usize);
                            if stack.len() < n + d {
                                return Err(self.bad(i, format!("stack underflow in `{ins}`")));
                            }
                            let start = stack.len() - n - d;
                            match exec_of(ins) {
                                Exec::Copy => stack.extend_from_within(start..start + n),
                                Exec::Pop => {
                                    stack.drain(start..start + n);
                                }
                                _ => {
                                    let moved: Vec<Var> = stack.drain(start..start + n).collect();
                                    stack.extend(moved);
                                }
                            }
                        }
                        (Exec::Call, Imm::Label(l)) => {
                            let k = self
                                .prog
                                .lookup(l)
                                .ok_or_else(|| self.bad(i, format!("call to undefined function `{l}`")))?;
                            let sig = &self.sigs[k];
                            let args = self.pop_n(stack, sig.inputs, i)?;
                            match sig.output_count() {
                                Some(o) => {
                                    let defs: Vec<Var> = (0..o).map(|_| self.fresh()).collect();
                                    stack.extend(&defs);
                                    stmts.push(Stmt::new(defs, Rhs::Call { name: l.clone(), args }, self.func.origin_of(i)));
                                }
                                None => {
                                    stmts.push(Stmt::new(Vec::new(), Rhs::Call { name: l.clone(), args }, self.func.origin_of(i)));
                                    return Ok((stmts, true));
                                }
                            }
                        }
                        (Exec::Exit, _) => {
                            stmts.push(Stmt::new(Vec::new(), Rhs::Exit { top: stack.last().copied() }, self.func.origin_of(i)));
                            return Ok((stmts, true));
                        }
                        _ => {
                            let (n, m) = instr_arity(ins, &self.prog.superops)
                                .ok_or_else(|| self.bad(i, format!("unexpected instruction `{ins}`")))?;
                            let args = self.pop_n(stack, n, i)?;
                            let defs: Vec<Var> = (0..m).map(|_| self.fresh()).collect();
                            stack.extend(&defs);
                            stmts.push(Stmt::new(defs, Rhs::Prim { ins: ins.clone(), args }, self.func.origin_of(i)));
                        }
                    }
                }
                Node::If { at, then, els } => {
                    let cond =
                        self.pop_n(stack, 1, *at)?.pop().ok_or_else(|| self.bad(*at, "IF on an empty stack".into()))?;
                    let mut st_then = stack.clone();
                    let (then_stmts, then_div) = self.block(then, &mut st_then)?;
                    let mut st_else = stack.clone();
                    let (else_stmts, else_div) = self.block(els, &mut st_else)?;
                    let mut then_b = Block { stmts: then_stmts, results: Vec::new(), diverges: then_div };
                    let mut else_b = Block { stmts: else_stmts, results: Vec::new(), diverges: else_div };
                    if then_div && else_div {
                        stmts.push(Stmt::new(Vec::new(), Rhs::If { cond, then: then_b, els: else_b }, self.func.origin_of(*at)));
                        return Ok((stmts, true));
                    }
                    let common = |a: &[Var], b: &[Var]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
                    let (c, len) = match (then_div, else_div) {
                        (false, false) => {
                            if st_then.len() != st_else.len() {
                                return Err(
                                    self.bad(*at, "the branches of this IF leave different stack depths".into())
                                );
                            }
                            (common(&st_then, &st_else), st_then.len())
                        }
                        (false, true) => (common(&st_then, stack), st_then.len()),
                        _ => (common(&st_else, stack), st_else.len()),
                    };
                    let kept: Vec<Var> = if then_div { st_else[..c].to_vec() } else { st_then[..c].to_vec() };
                    if !then_div {
                        then_b.results = st_then[c..].to_vec();
                    }
                    if !else_div {
                        else_b.results = st_else[c..].to_vec();
                    }
                    let defs: Vec<Var> = (c..len).map(|_| self.fresh()).collect();
                    *stack = kept;
                    stack.extend(&defs);
                    stmts.push(Stmt::new(defs, Rhs::If { cond, then: then_b, els: else_b }, self.func.origin_of(*at)));
                }
            }
        }
        Ok((stmts, false))
    }
}

/// Converts every function of `p` to let form, with the signatures the verifier inferred
/// (`analysis`, from [`vcode::analyze`] of `p`).
pub fn to_let(p: &Program, analysis: &Analysis) -> Result<LProgram, OptError> {
    let sigs = analysis.functions.as_slice();
    if sigs.len() != p.functions.len() {
        return Err(OptError::Malformed {
            function: String::new(),
            message: "internal: the analysis is not of this program".into(),
        });
    }
    let mut next: Var = 0;
    let mut funcs = Vec::with_capacity(p.functions.len());
    for (fi, f) in p.functions.iter().enumerate() {
        let nodes = structure(f)?;
        let mut c = Conv { prog: p, sigs, func: f, next };
        let params: Vec<Var> = (0..sigs[fi].inputs).map(|_| c.fresh()).collect();
        let mut stack = params.clone();
        let (stmts, diverges) = c.block(&nodes, &mut stack)?;
        next = c.next;
        let results = if diverges { Vec::new() } else { stack };
        if !diverges && Some(results.len()) != sigs[fi].output_count() {
            return Err(OptError::Malformed {
                function: f.name.clone(),
                message: "internal: the converted function disagrees with its signature".into(),
            });
        }
        funcs.push(LFunc {
            name: f.name.clone(),
            sig: f.sig.clone(),
            instances: f.instances.clone(),
            params,
            body: Block { stmts, results, diverges },
            pos: f.pos,
            end: f.origin_of(f.body.len().saturating_sub(1)),
        });
    }
    Ok(LProgram { funcs, superops: p.superops.clone(), next_var: next, scopes: p.scopes.clone(), inline_sites: p.inline_sites.clone(), fused_parts: p.fused_parts.clone() })
}
