//! Common subexpressions: a statement that repeats the instruction and the operands of
//! an earlier one that dominates it (earlier in the same block, or before the `IF` in an
//! enclosing block) is deleted, and its results are read from the earlier statement's.
//!
//! Only statements without an effect take part (no I/O, random numbers, timers, calls
//! or exits), and no `CONST` (the reducer substitutes constants itself). A statement
//! that can trap may go too: with the same operands the earlier one already trapped, or
//! this one would not. Nothing is shared across `START_TIMER`/`STOP_TIMER`, so a timed
//! region still does its own work. The flattener writes such repeats often: quicksort's
//! three filters each `DIST` the pivot over the same segment descriptor.

use crate::lir::{Block, LProgram, Rhs, Tree, Var};
use std::collections::HashMap;
use vcode::Opcode;

/// Shares the common subexpressions of every function.
pub fn cse(p: &mut LProgram) {
    for f in &mut p.funcs {
        block(&mut f.body, &mut Scope::default(), &mut HashMap::new());
    }
}

/// The key of a statement that can be shared: its instruction and operands.
fn key(rhs: &Rhs) -> Option<String> {
    match rhs {
        Rhs::Prim { ins, args } if ins.op != Opcode::Const && !rhs.is_effectful() => Some(format!("{ins} {args:?}")),
        _ => None,
    }
}

/// The statements seen so far, by key, with an undo log: a nested block sees the
/// statements of the blocks around it, and what it adds is undone when it ends (one
/// shared map, not a copy per nested block: copies made `cse` quadratic in the depth of
/// nested `IF`s).
#[derive(Default)]
struct Scope {
    map: HashMap<String, Vec<Var>>,
    /// `(key, what it mapped to before)` for every change, oldest first.
    log: Vec<(String, Option<Vec<Var>>)>,
}

impl Scope {
    fn insert(&mut self, k: String, v: Vec<Var>) {
        let old = self.map.insert(k.clone(), v);
        self.log.push((k, old));
    }

    fn clear(&mut self) {
        for (k, v) in self.map.drain() {
            self.log.push((k, Some(v)));
        }
    }

    fn mark(&self) -> usize {
        self.log.len()
    }

    /// Undoes the changes made since `mark`.
    fn undo(&mut self, mark: usize) {
        while self.log.len() > mark {
            let Some((k, old)) = self.log.pop() else { break };
            match old {
                Some(v) => {
                    self.map.insert(k, v);
                }
                None => {
                    self.map.remove(&k);
                }
            }
        }
    }
}

fn block(b: &mut Block, seen: &mut Scope, rename: &mut HashMap<Var, Var>) {
    let mut kept = Vec::with_capacity(b.stmts.len());
    for mut s in std::mem::take(&mut b.stmts) {
        rename_uses(&mut s.rhs, rename);
        if let Rhs::If { then, els, .. } = &mut s.rhs {
            let m = seen.mark();
            block(then, seen, rename);
            seen.undo(m);
            block(els, seen, rename);
            seen.undo(m);
        } else if s.rhs.is_timer() {
            seen.clear();
        } else if let Some(k) = key(&s.rhs) {
            match seen.map.get(&k) {
                Some(earlier) if earlier.len() == s.defs.len() => {
                    for (d, e) in s.defs.iter().zip(earlier) {
                        rename.insert(*d, *e);
                    }
                    continue;
                }
                Some(_) => {}
                None => {
                    seen.insert(k, s.defs.clone());
                }
            }
        }
        kept.push(s);
    }
    b.stmts = kept;
    for r in &mut b.results {
        renamed(r, rename);
    }
}

fn renamed(v: &mut Var, rename: &HashMap<Var, Var>) {
    if let Some(n) = rename.get(v) {
        *v = *n;
    }
}

/// Renames the variables a statement reads (not those of nested blocks: they are renamed
/// when their own statements are reached).
fn rename_uses(rhs: &mut Rhs, rename: &HashMap<Var, Var>) {
    match rhs {
        Rhs::Prim { args, .. } | Rhs::Call { args, .. } => args.iter_mut().for_each(|v| renamed(v, rename)),
        Rhs::Tree(t) => rename_tree(t, rename),
        Rhs::If { cond, .. } => renamed(cond, rename),
        Rhs::Exit { top } => {
            if let Some(v) = top {
                renamed(v, rename)
            }
        }
    }
}

fn rename_tree(t: &mut Tree, rename: &HashMap<Var, Var>) {
    match t {
        Tree::Var(v) => renamed(v, rename),
        Tree::Dist { seg, .. } => renamed(seg, rename),
        Tree::Op { args, .. } => args.iter_mut().for_each(|a| rename_tree(a, rename)),
        Tree::Const(_) => {}
    }
}
