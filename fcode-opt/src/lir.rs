//! The let IR: VCODE with the stack compiled away.
//!
//! Every computation binds fresh variables ([`Var`]); a function takes its parameters
//! (the slots it consumes, deepest first) and its body ends by returning a list of
//! variables (the slots it leaves, bottom first). `IF`/`ELSE`/`ENDIF` become a structured
//! statement whose branches are blocks returning the same number of values, bound by the
//! statement. A block *diverges* when it ends in `EXIT`, in a call to a function that
//! never returns, or in an `IF` whose branches both diverge.
//!
//! Element-wise computations can be expression trees ([`Tree`]): the reducer builds them,
//! fusion lifts the larger ones out as superoperators, and code generation turns the
//! rest back into postfix stack code. This module also holds the printer used by
//! `--dump-after` and the well-formedness checker used by `--verify`.

use crate::util::{exec_of, instr_arity, scalar_const};
use std::collections::{HashMap, HashSet};
use std::fmt::{self, Write as _};
use vcode::op::Exec;
use vcode::{Instr, Origin, Pos, SuperOp, Ty};

/// A variable of the let IR.
pub type Var = u32;

/// A program in let form.
#[derive(Debug, Clone)]
pub struct LProgram {
    /// The functions, in the order of the input (the entry keeps its place).
    pub funcs: Vec<LFunc>,
    /// The superoperator table (`FUSED n` statements refer to it).
    pub superops: Vec<SuperOp>,
    /// The next unused variable number.
    pub next_var: Var,
    /// The NESL scopes the instructions' origins refer to (`vcode::Program::scopes`).
    pub scopes: Vec<vcode::Scope>,
    /// The inlined call sites the origins refer to (`vcode::Program::inline_sites`).
    pub inline_sites: Vec<vcode::Origin>,
    /// The origins of the operations of each `FUSED` statement
    /// (`vcode::Program::fused_parts`).
    pub fused_parts: Vec<Vec<vcode::Origin>>,
}

/// One function.
#[derive(Debug, Clone)]
pub struct LFunc {
    /// The name.
    pub name: String,
    /// The informational `I ... O ...` line of the input, kept when still accurate.
    pub sig: Option<(Vec<Ty>, Vec<Ty>)>,
    /// The input's [`vcode::Function::instances`], kept while the parameters are.
    pub instances: Option<vcode::Instances>,
    /// The parameters, deepest stack slot first.
    pub params: Vec<Var>,
    /// The body; its results are the function's results.
    pub body: Block,
    /// Position of the input's `FUNC` keyword.
    pub pos: Pos,
    /// The origin of the input's `RET` (given to the code that arranges the results and
    /// to the `RET` written back).
    pub end: Origin,
}

impl LFunc {
    /// Number of results, `None` when the function never returns.
    pub fn outputs(&self) -> Option<usize> {
        if self.body.diverges {
            None
        } else {
            Some(self.body.results.len())
        }
    }
}

/// A sequence of statements and the values it returns.
#[derive(Debug, Clone, Default)]
pub struct Block {
    /// The statements, in order.
    pub stmts: Vec<Stmt>,
    /// The values returned (bottom of the stack first); empty when diverging.
    pub results: Vec<Var>,
    /// True when the last statement never returns.
    pub diverges: bool,
}

/// `let defs = rhs`.
#[derive(Debug, Clone)]
pub struct Stmt {
    /// The variables bound (one per result slot).
    pub defs: Vec<Var>,
    /// The computation.
    pub rhs: Rhs,
    /// Where it came from: the origin of the stack instruction it was made from (for a
    /// rewritten statement, of the instruction it stands for; for a `FUSED` statement, of
    /// the first fused operation that can trap, else of the root operation).
    pub origin: Origin,
}

impl Stmt {
    /// A statement.
    pub fn new(defs: Vec<Var>, rhs: Rhs, origin: Origin) -> Self {
        Stmt { defs, rhs, origin }
    }
}

/// The right-hand side of a statement.
#[derive(Debug, Clone)]
pub enum Rhs {
    /// One VCODE instruction (not a stack shuffle, `CALL`, `IF` or `EXIT`) applied to
    /// its operands (operand 1 first); includes `CONST` and `FUSED n`.
    Prim {
        /// The instruction.
        ins: Instr,
        /// The operands.
        args: Vec<Var>,
    },
    /// An element-wise expression tree.
    Tree(Tree),
    /// A call; `args` are the callee's parameters, `defs` its results.
    Call {
        /// The callee.
        name: String,
        /// The arguments, deepest first.
        args: Vec<Var>,
    },
    /// A conditional; both blocks return as many values as the statement binds.
    If {
        /// The `BOOL` scalar tested.
        cond: Var,
        /// The then-branch.
        then: Block,
        /// The else-branch (empty when the input had no `ELSE`).
        els: Block,
    },
    /// `EXIT`, with the value on top of the stack at that point (its exit status).
    Exit {
        /// The slot on top of the stack, if any.
        top: Option<Var>,
    },
}

/// An element-wise expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Tree {
    /// A variable.
    Var(Var),
    /// A scalar constant (the `CONST` instruction that made it).
    Const(Instr),
    /// A scalar constant broadcast over a segment descriptor: `CONST c; DIST T` over `seg`.
    Dist {
        /// The `CONST` instruction.
        konst: Instr,
        /// The `DIST T` instruction.
        dist: Instr,
        /// The segment descriptor giving the length.
        seg: Var,
    },
    /// An element-wise instruction applied to sub-expressions.
    Op {
        /// The instruction (`+ INT`, `SQRT`, `SELECT FLOAT`, ...).
        ins: Instr,
        /// Its operands, operand 1 first.
        args: Vec<Tree>,
        /// The origin of the instruction it was made from.
        origin: Origin,
    },
}

impl Tree {
    /// Calls `f` on every variable the tree reads (leaves and `DIST` segment descriptors).
    pub fn for_each_var(&self, f: &mut dyn FnMut(Var)) {
        match self {
            Tree::Var(v) => f(*v),
            Tree::Const(_) => {}
            Tree::Dist { seg, .. } => f(*seg),
            Tree::Op { args, .. } => args.iter().for_each(|a| a.for_each_var(f)),
        }
    }
    /// Number of operations (element-wise instructions and constant broadcasts).
    pub fn op_count(&self) -> usize {
        match self {
            Tree::Var(_) | Tree::Const(_) => 0,
            Tree::Dist { .. } => 1,
            Tree::Op { args, .. } => 1 + args.iter().map(Tree::op_count).sum::<usize>(),
        }
    }
    /// True when evaluating the tree may trap on its values (integer `/` or `%`).
    pub fn may_trap(&self) -> bool {
        match self {
            Tree::Op { ins, args, .. } => ins.may_trap_on_values() || args.iter().any(Tree::may_trap),
            _ => false,
        }
    }
    /// The origins of the tree's operations in evaluation (postfix) order.
    pub fn op_origins(&self, out: &mut Vec<Origin>) {
        if let Tree::Op { args, origin, .. } = self {
            args.iter().for_each(|a| a.op_origins(out));
            out.push(Origin { parts: 0, ..*origin });
        }
    }
    /// The origin of the first operation (in evaluation order) that can trap, if any.
    pub fn trap_origin(&self) -> Option<Origin> {
        match self {
            Tree::Op { ins, args, origin } => {
                args.iter().find_map(Tree::trap_origin).or_else(|| ins.may_trap_on_values().then_some(*origin))
            }
            _ => None,
        }
    }
    /// The origin of the root operation (`None` for a leaf).
    pub fn root_origin(&self) -> Option<Origin> {
        match self {
            Tree::Op { origin, .. } => Some(*origin),
            _ => None,
        }
    }
}


impl Rhs {
    /// Calls `f` on every variable this statement reads, including free variables of
    /// nested blocks.
    pub fn for_each_use(&self, f: &mut dyn FnMut(Var)) {
        match self {
            Rhs::Prim { args, .. } | Rhs::Call { args, .. } => args.iter().for_each(|v| f(*v)),
            Rhs::Tree(t) => t.for_each_var(f),
            Rhs::If { cond, then, els } => {
                f(*cond);
                then.for_each_use(f);
                els.for_each_use(f);
            }
            Rhs::Exit { top } => {
                if let Some(v) = top {
                    f(*v)
                }
            }
        }
    }
    /// True when the statement has an effect besides its results (I/O, timers, random
    /// numbers, calls, exits) and so must stay where it is.
    pub fn is_effectful(&self) -> bool {
        match self {
            Rhs::Prim { ins, .. } => !pure_exec(exec_of(ins)),
            Rhs::Tree(_) => false,
            Rhs::Call { .. } | Rhs::Exit { .. } => true,
            Rhs::If { then, els, .. } => then.is_effectful() || els.is_effectful(),
        }
    }
    /// True for `START_TIMER` / `STOP_TIMER` (nothing moves across them).
    pub fn is_timer(&self) -> bool {
        matches!(self, Rhs::Prim { ins, .. } if matches!(exec_of(ins), Exec::StartTimer | Exec::StopTimer))
    }
}

/// Operations with no effect besides their results (they may still trap on bad input).
fn pure_exec(e: Exec) -> bool {
    !matches!(
        e,
        Exec::Rand
            | Exec::Srand
            | Exec::StartTimer
            | Exec::StopTimer
            | Exec::Read
            | Exec::Write
            | Exec::Fopen
            | Exec::Fclose
            | Exec::Fread
            | Exec::FreadChar
            | Exec::Fwrite
            | Exec::Spawn
            | Exec::Getenv
            | Exec::Shell
            | Exec::Display
            | Exec::Exit
            | Exec::Call
    )
}

/// True when a statement whose results are unused can be deleted: it has no effect and
/// cannot trap on well-formed input ([`vcode::Instr::removable_when_unused`], plus pairs
/// and superoperators without integer division).
pub fn removable(rhs: &Rhs, superops: &[SuperOp]) -> bool {
    match rhs {
        Rhs::Tree(t) => !t.may_trap(),
        Rhs::Prim { ins, .. } => match exec_of(ins) {
            Exec::Pair | Exec::Unpair => true,
            Exec::Fused => match ins.imm {
                vcode::Imm::Index(k) => superops.get(k as usize).is_some_and(|op| !superop_may_trap(op)),
                _ => false,
            },
            _ => ins.removable_when_unused(),
        },
        Rhs::If { then, els, .. } => {
            !then.diverges
                && !els.diverges
                && then.stmts.iter().all(|s| removable(&s.rhs, superops))
                && els.stmts.iter().all(|s| removable(&s.rhs, superops))
        }
        Rhs::Call { .. } | Rhs::Exit { .. } => false,
    }
}

/// True when a superoperator (its body, a further result or its guard) can trap.
pub fn superop_may_trap(op: &SuperOp) -> bool {
    op.body.may_trap() || op.more.iter().any(|e| e.may_trap()) || op.guard.as_ref().is_some_and(|g| g.cond.may_trap())
}

impl Block {
    /// Calls `f` on every variable read in the block (statements and results), including
    /// variables the block defines itself.
    pub fn for_each_use(&self, f: &mut dyn FnMut(Var)) {
        for s in &self.stmts {
            s.rhs.for_each_use(f);
        }
        self.results.iter().for_each(|v| f(*v));
    }
    /// True when some statement is effectful.
    pub fn is_effectful(&self) -> bool {
        self.diverges || self.stmts.iter().any(|s| s.rhs.is_effectful())
    }
    /// The variables read in the block that it does not define (its free variables).
    pub fn free_vars(&self) -> HashSet<Var> {
        let mut used = HashSet::new();
        self.for_each_use(&mut |v| {
            used.insert(v);
        });
        let mut defined = HashSet::new();
        self.for_each_def(&mut |v| {
            defined.insert(v);
        });
        used.retain(|v| !defined.contains(v));
        used
    }
    /// Calls `f` on every variable defined in the block, nested blocks included.
    pub fn for_each_def(&self, f: &mut dyn FnMut(Var)) {
        for s in &self.stmts {
            s.defs.iter().for_each(|v| f(*v));
            if let Rhs::If { then, els, .. } = &s.rhs {
                then.for_each_def(f);
                els.for_each_def(f);
            }
        }
    }
}

/// Counts the uses of every variable in a block (nested blocks included).
pub fn use_counts(b: &Block) -> HashMap<Var, usize> {
    let mut m = HashMap::new();
    b.for_each_use(&mut |v| *m.entry(v).or_insert(0) += 1);
    m
}

// ---------------------------------------------------------------------------------
// Printer
// ---------------------------------------------------------------------------------

fn var_list(vs: &[Var]) -> String {
    let v: Vec<String> = vs.iter().map(|v| format!("v{v}")).collect();
    v.join(", ")
}

impl fmt::Display for Tree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tree::Var(v) => write!(f, "v{v}"),
            Tree::Const(i) => write!(f, "({i})"),
            Tree::Dist { konst, dist, seg } => write!(f, "({dist} ({konst}) v{seg})"),
            Tree::Op { ins, args, .. } => {
                write!(f, "({ins}")?;
                for a in args {
                    write!(f, " {a}")?;
                }
                write!(f, ")")
            }
        }
    }
}

fn write_block(out: &mut String, b: &Block, indent: usize) {
    let pad = " ".repeat(indent);
    for s in &b.stmts {
        let lhs = match s.defs.len() {
            0 => String::new(),
            1 => format!("let v{} = ", s.defs[0]),
            _ => format!("let ({}) = ", var_list(&s.defs)),
        };
        match &s.rhs {
            Rhs::Prim { ins, args } => {
                let _ = writeln!(out, "{pad}{lhs}{ins} ({})", var_list(args));
            }
            Rhs::Tree(t) => {
                let _ = writeln!(out, "{pad}{lhs}{t}");
            }
            Rhs::Call { name, args } => {
                let _ = writeln!(out, "{pad}{lhs}CALL {name} ({})", var_list(args));
            }
            Rhs::Exit { top } => {
                let _ = writeln!(out, "{pad}EXIT{}", top.map(|v| format!(" v{v}")).unwrap_or_default());
            }
            Rhs::If { cond, then, els } => {
                let _ = writeln!(out, "{pad}{lhs}IF v{cond} THEN");
                write_block(out, then, indent + 4);
                let _ = writeln!(out, "{pad}ELSE");
                write_block(out, els, indent + 4);
                let _ = writeln!(out, "{pad}ENDIF");
            }
        }
    }
    if b.diverges {
        let _ = writeln!(out, "{pad}(diverges)");
    } else {
        let _ = writeln!(out, "{pad}in ({})", var_list(&b.results));
    }
}

impl fmt::Display for LProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, op) in self.superops.iter().enumerate() {
            writeln!(f, "SUPEROP {i} {op}")?;
        }
        for func in &self.funcs {
            let mut s = String::new();
            write_block(&mut s, &func.body, 2);
            writeln!(f, "function {} ({})", func.name, var_list(&func.params))?;
            write!(f, "{s}")?;
            writeln!(f)?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------
// Checker
// ---------------------------------------------------------------------------------

struct Check<'a> {
    prog: &'a LProgram,
    func: &'a str,
    defined: HashSet<Var>,
    errors: Vec<String>,
}

impl Check<'_> {
    fn err(&mut self, m: String) {
        self.errors.push(format!("function {}: {m}", self.func));
    }
    fn use_var(&mut self, v: Var, scope: &HashSet<Var>, what: &str) {
        if !scope.contains(&v) {
            self.err(format!("v{v} used by {what} is not in scope"));
        }
    }
    fn define(&mut self, v: Var, scope: &mut HashSet<Var>) {
        if !self.defined.insert(v) {
            self.err(format!("v{v} is defined twice"));
        }
        scope.insert(v);
    }
    fn block(&mut self, b: &Block, mut scope: HashSet<Var>) -> Option<usize> {
        for (i, s) in b.stmts.iter().enumerate() {
            let what = format!("statement {i}");
            let mut uses = Vec::new();
            match &s.rhs {
                Rhs::Prim { ins, args } => {
                    uses.extend(args);
                    match instr_arity(ins, &self.prog.superops) {
                        Some((n, m)) => {
                            if n != args.len() || m != s.defs.len() {
                                self.err(format!(
                                    "{what}: `{ins}` takes {n} and gives {m} slots, written with {} and {}",
                                    args.len(),
                                    s.defs.len()
                                ));
                            }
                        }
                        None => self.err(format!("{what}: `{ins}` is not a primitive")),
                    }
                }
                Rhs::Tree(t) => {
                    t.for_each_var(&mut |v| uses.push(v));
                    if s.defs.len() != 1 {
                        self.err(format!("{what}: an expression binds one variable"));
                    }
                    self.tree(t, &what);
                }
                Rhs::Call { name, args } => {
                    uses.extend(args);
                    match self.prog.funcs.iter().rposition(|f| &f.name == name) {
                        Some(k) => {
                            let callee = &self.prog.funcs[k];
                            if callee.params.len() != args.len() {
                                self.err(format!(
                                    "{what}: `{name}` takes {} arguments, given {}",
                                    callee.params.len(),
                                    args.len()
                                ));
                            }
                            match callee.outputs() {
                                Some(o) if o != s.defs.len() => {
                                    self.err(format!("{what}: `{name}` returns {o} values, {} bound", s.defs.len()))
                                }
                                None if !s.defs.is_empty() => {
                                    self.err(format!("{what}: `{name}` never returns but binds values"))
                                }
                                _ => {}
                            }
                        }
                        None => self.err(format!("{what}: call to undefined function `{name}`")),
                    }
                }
                Rhs::Exit { top } => uses.extend(top.iter()),
                Rhs::If { cond, then, els } => {
                    self.use_var(*cond, &scope, &what);
                    let a = self.block(then, scope.clone());
                    let b = self.block(els, scope.clone());
                    for (r, name) in [(a, "then"), (b, "else")] {
                        if let Some(n) = r {
                            if n != s.defs.len() {
                                self.err(format!(
                                    "{what}: the {name} branch returns {n} values, the IF binds {}",
                                    s.defs.len()
                                ));
                            }
                        }
                    }
                }
            }
            for v in uses {
                self.use_var(v, &scope, &what);
            }
            for &d in &s.defs {
                self.define(d, &mut scope);
            }
            let last = i + 1 == b.stmts.len();
            let diverging = match &s.rhs {
                Rhs::Exit { .. } => true,
                Rhs::Call { name, .. } => {
                    self.prog.funcs.iter().rfind(|f| &f.name == name).is_some_and(|f| f.body.diverges)
                }
                Rhs::If { then, els, .. } => then.diverges && els.diverges,
                _ => false,
            };
            if diverging && !last {
                self.err(format!("{what} never returns but is followed by more statements"));
            }
            if last && diverging != b.diverges {
                self.err("the block's divergence flag is wrong".to_string());
            }
        }
        if b.stmts.is_empty() && b.diverges {
            self.err("an empty block cannot diverge".to_string());
        }
        if b.diverges {
            return None;
        }
        for &v in &b.results {
            self.use_var(v, &scope, "the block results");
        }
        Some(b.results.len())
    }
    fn tree(&mut self, t: &Tree, what: &str) {
        match t {
            Tree::Var(_) => {}
            Tree::Const(i) => {
                if scalar_const(i).is_none() {
                    self.err(format!("{what}: `{i}` is not a scalar constant"));
                }
            }
            Tree::Dist { konst, dist, .. } => {
                if scalar_const(konst).is_none() || exec_of(dist) != Exec::Dist {
                    self.err(format!("{what}: malformed constant broadcast"));
                }
            }
            Tree::Op { ins, args, .. } => {
                let ok = matches!(exec_of(ins), Exec::Binary(_) | Exec::Unary(_) | Exec::Select);
                if !ok {
                    self.err(format!("{what}: `{ins}` is not element-wise"));
                }
                match instr_arity(ins, &self.prog.superops) {
                    Some((n, 1)) if n == args.len() => {}
                    _ => self.err(format!("{what}: `{ins}` has {} operands", args.len())),
                }
                args.iter().for_each(|a| self.tree(a, what));
            }
        }
    }
}

/// Checks a let program: every variable is defined once and used in scope, every call
/// matches its callee's parameters and results, both branches of every `IF` return as
/// many values as it binds, instruction arities match the instruction table, and
/// divergence flags are consistent. Returns every problem found.
pub fn check(p: &LProgram) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    for f in &p.funcs {
        let mut c = Check { prog: p, func: &f.name, defined: HashSet::new(), errors: Vec::new() };
        let mut scope = HashSet::new();
        for &v in &f.params {
            c.define(v, &mut scope);
        }
        c.block(&f.body, scope);
        errors.append(&mut c.errors);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}
