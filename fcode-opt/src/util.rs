//! Small helpers shared by the passes: instruction arities and operand types read off
//! the `vcode` instruction table, scalar constants, and the structured view of a
//! function body (`IF`/`ELSE`/`ENDIF` nested as a tree).

use crate::lir::Var;
use crate::OptError;
use vcode::op::{Effect, Exec, SlotTy};
use vcode::{Const, Expr, Function, HostScalar, Imm, Instr, SuperOp, Ty};

/// The operation an instruction performs.
pub fn exec_of(ins: &Instr) -> Exec {
    ins.op.info().exec
}

/// `(slots consumed, slots produced)` of an instruction that computes values (fixed
/// stack effect, `CONST`, `FUSED`, `PAIR`, `UNPAIR`); `None` for stack shuffles and
/// control flow.
pub fn instr_arity(ins: &Instr, superops: &[SuperOp]) -> Option<(usize, usize)> {
    match ins.op.info().effect {
        Effect::Fixed(i, o) => Some((i.len(), o.len())),
        Effect::Special => match (exec_of(ins), &ins.imm) {
            (Exec::Const, _) => Some((0, 1)),
            (Exec::Fused, Imm::Index(k)) => superops.get(*k as usize).map(|op| (op.params.len(), op.results())),
            (Exec::Pair, _) => Some((2, 1)),
            (Exec::Unpair, _) => Some((1, 2)),
            _ => None,
        },
    }
}

/// The operand slot types of a fixed-effect instruction (operand 1 first).
pub fn operand_types(ins: &Instr) -> Vec<Option<SlotTy>> {
    match ins.op.info().effect {
        Effect::Fixed(i, _) => i.iter().map(|p| p.resolve(ins.ty)).collect(),
        Effect::Special => Vec::new(),
    }
}

/// The value of a `CONST` holding exactly one `INT`, `FLOAT` or `BOOL` element.
pub fn scalar_const(ins: &Instr) -> Option<HostScalar> {
    if exec_of(ins) != Exec::Const {
        return None;
    }
    match &ins.imm {
        Imm::Const(Const::Int(v, _)) if v.len() == 1 => Some(HostScalar::Int(v[0])),
        Imm::Const(Const::Float(v, _)) if v.len() == 1 => Some(HostScalar::Float(v[0])),
        Imm::Const(Const::Bool(v, _)) if v.len() == 1 => Some(HostScalar::Bool(v[0])),
        _ => None,
    }
}

/// True for the element-wise instructions that can appear in an expression tree.
pub fn is_elementwise(ins: &Instr) -> bool {
    matches!(exec_of(ins), Exec::Binary(_) | Exec::Unary(_) | Exec::Select)
}

/// A function body as a tree: instructions (by index in the body) and nested `IF`s.
#[derive(Debug, Clone)]
pub enum Node {
    /// Instruction `i` of the body.
    Ins(usize),
    /// `IF` at index `at`, its then-part and else-part.
    If {
        /// Index of the `IF`.
        at: usize,
        /// The then-part.
        then: Vec<Node>,
        /// The else-part (empty without `ELSE`).
        els: Vec<Node>,
    },
}

/// Nests a body's `IF`/`ELSE`/`ENDIF`; the final `RET` is dropped. Errors name the place.
pub fn structure(f: &Function) -> Result<Vec<Node>, OptError> {
    let bad = |i: usize, m: &str| {
        let p = f.pos_of(i);
        OptError::Malformed { function: f.name.clone(), message: format!("{}:{}: {m}", p.line, p.col) }
    };
    let n = f.body.len();
    if n == 0 || exec_of(&f.body[n - 1]) != Exec::Ret {
        return Err(bad(n.saturating_sub(1), "the function does not end with RET"));
    }
    // Frames: (if index, then-part, else-part if seen)
    type Frame = (usize, Vec<Node>, Option<Vec<Node>>);
    let mut frames: Vec<Frame> = Vec::new();
    let mut top: Vec<Node> = Vec::new();
    for (i, ins) in f.body[..n - 1].iter().enumerate() {
        let cur = |frames: &mut Vec<Frame>, top: &mut Vec<Node>, node: Node| match frames.last_mut() {
            Some((_, _, Some(e))) => e.push(node),
            Some((_, t, None)) => t.push(node),
            None => top.push(node),
        };
        match exec_of(ins) {
            Exec::If => frames.push((i, Vec::new(), None)),
            Exec::Else => match frames.last_mut() {
                Some((_, _, e @ None)) => *e = Some(Vec::new()),
                _ => return Err(bad(i, "`ELSE` without `IF`")),
            },
            Exec::EndIf => match frames.pop() {
                Some((at, then, els)) => {
                    cur(&mut frames, &mut top, Node::If { at, then, els: els.unwrap_or_default() })
                }
                None => return Err(bad(i, "`ENDIF` without `IF`")),
            },
            Exec::Ret => return Err(bad(i, "`RET` before the end of the function")),
            _ => cur(&mut frames, &mut top, Node::Ins(i)),
        }
    }
    if let Some((at, _, _)) = frames.last() {
        return Err(bad(*at, "`IF` without `ENDIF`"));
    }
    Ok(top)
}

/// Adds the operands `args` (of types `types`) to `vars` / `params`, each variable once;
/// the parameter number of each.
pub(crate) fn add_operands(vars: &mut Vec<Var>, params: &mut Vec<Ty>, args: &[Var], types: &[Ty]) -> Vec<usize> {
    args.iter()
        .zip(types)
        .map(|(v, t)| match vars.iter().position(|x| x == v) {
            Some(k) => k,
            None => {
                vars.push(*v);
                params.push(*t);
                vars.len() - 1
            }
        })
        .collect()
}

/// `e` with parameter `$i` renamed `$map[i]`.
pub(crate) fn renumber(e: &Expr, map: &[usize]) -> Expr {
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
