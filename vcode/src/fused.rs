//! Superoperators: the fused element-wise operators of FCODE.
//!
//! A [`SuperOp`] is an expression tree of element-wise operations over typed parameters
//! (`$0`, `$1`, ...) and constants. `FUSED n` pops one operand per parameter (`$0`
//! deepest) and pushes one vector whose element `p` is the tree evaluated with every
//! `$i` replaced by `$i[p]`. Parameters of type `SEGDES` are not read: they only give the
//! result length (the element count of `$0` when `$0` is a segdes, otherwise the length
//! of `$0`; every data parameter has that length). Constants are broadcast.
//!
//! Text form (one line of an FCODE file, or [`SuperOp::parse`]):
//!
//! ```text
//! SUPEROP 0 (INT INT SEGDES) (* INT (- INT $0 $1) (CONST INT 7))
//! ```
//!
//! A node is `(NAME TYPE args...)` where `NAME` is an element-wise VCODE instruction (or
//! `MAX` / `MIN`) and `TYPE` the type of its operands (for `SELECT`, of its branches).
//! Which names exist, which operand types they accept and what they return all come from
//! the instruction table in [`crate::op`].
//!
//! A superoperator may end in a *fold*: its root is then a segmented reduction or scan
//! of the element-wise tree over one of its `SEGDES` parameters,
//!
//! ```text
//! SUPEROP 1 (FLOAT FLOAT SEGDES) (+_REDUCE FLOAT (* FLOAT $0 $1) $2)
//! ```
//!
//! which computes what `FUSED` of the tree followed by `+_REDUCE FLOAT` over `$2` would,
//! without the intermediate vector: the result has one element per segment of `$2`
//! (a reduction) or one per element (a scan). The element count of the fold's segment
//! descriptor is the length of every data parameter.
//!
//! An element-wise superoperator may carry a *guard*: a second root, the `OR_REDUCE` of a
//! boolean tree over one of its `SEGDES` parameters, written after the body,
//!
//! ```text
//! SUPEROP 2 (FLOAT FLOAT SEGDES) (SQRT FLOAT (/ FLOAT $0 $1)) (OR_REDUCE BOOL (< FLOAT $0 (CONST FLOAT 0.0)) $2)
//! ```
//!
//! `FUSED n` then pushes two values: the body's vector, then the guard's reduction (one
//! `BOOL` per segment of its descriptor, whose element count is the body's length), as
//! `FUSED` of the body and `FUSED` of the guard's fold would, in one pass over the
//! operands. The optimiser makes one of a run-time check followed by the computation it
//! guards (the check's `IF` then reads the flag); neither tree may trap (no integer `/`
//! or `%`: the values are computed before the flag is read).
//!
//! An element-wise superoperator may have *further results*: more element-wise trees
//! over the same parameters, written after the body (and before a guard),
//!
//! ```text
//! SUPEROP 4 (FLOAT FLOAT FLOAT) (* FLOAT (SQRT FLOAT $0) $1) (* FLOAT (SQRT FLOAT $0) $2)
//! ```
//!
//! `FUSED n` then pushes the body's vector, then each further tree's, in order (then the
//! guard's flags, with a guard): what `FUSED` of each tree alone would push, in one pass
//! over the operands that computes the subexpressions the trees share once (the two
//! components of a force over the same distance). No tree may trap (no integer `/` or
//! `%`: every result is computed before any is pushed).
//!
//! A superoperator whose root is a reduction may likewise reduce further trees, each by
//! the same reduction over the same descriptor,
//!
//! ```text
//! SUPEROP 5 (FLOAT FLOAT SEGDES) (+_REDUCE FLOAT (* FLOAT (SQRT FLOAT $0) $1) $2) (+_REDUCE FLOAT (SQRT FLOAT $0) $2)
//! ```
//!
//! and pushes one reduced vector per tree (the two components of the total force on each
//! body of a direct N-body sum).
//!
//! A superoperator may instead end in a *pack*: its root keeps, in every segment of one
//! of its `SEGDES` parameters, the elements of the body whose flag is true, for each of
//! one or more boolean flag trees,
//!
//! ```text
//! SUPEROP 3 (INT INT SEGDES) (PACK INT $0 $2 (< INT $0 $1) (= INT $0 $1) (> INT $0 $1))
//! ```
//!
//! and `FUSED n` pushes, for each flag tree in order, the packed vector and its segment
//! descriptor: what `FUSED` of each flag tree followed by `PACK` of the body's values
//! would push, in one pass over the operands (quicksort's three filters of one sequence
//! by comparisons with its pivot). The element count of the pack's segment descriptor is
//! the length of every data parameter. No tree of a pack may trap.

use crate::cvl::{BinOp, HostScalar, ReduceOp, UnOp, VType};
use crate::op::{accepts_operand_type, Effect, Exec, Opcode, Pat, SlotTy, Ty, OPCODES};
use std::fmt;

/// One superoperator: parameter types and the expression computing each element.
#[derive(Debug, Clone, PartialEq)]
pub struct SuperOp {
    /// Parameter types (`INT`, `FLOAT`, `BOOL` or `SEGDES`), `$0` first.
    pub params: Vec<Ty>,
    /// The expression.
    pub body: Expr,
    /// The reduction or scan applied to the expression's values, if any.
    pub fold: Option<Fold>,
    /// A second result, the `OR_REDUCE` of a boolean tree (only without a fold).
    pub guard: Option<Guard>,
    /// The body's values packed by each of several flag trees (no fold, no guard).
    pub pack: Option<Pack>,
    /// Further results over the same parameters, pushed after the body's: element-wise
    /// trees, or with a reduction as the fold, trees reduced the same way (no scan, no
    /// pack; no tree traps).
    pub more: Vec<Expr>,
}

/// The pack root of a superoperator: the body's values packed, within the segments of
/// `SEGDES` parameter `seg`, by each flag tree in turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Pack {
    /// The `SEGDES` parameter giving the segments.
    pub seg: usize,
    /// The boolean trees, over the same parameters as the body (at least one).
    pub flags: Vec<Expr>,
}

/// The guard of an element-wise superoperator: its second result is the `OR_REDUCE` of
/// `cond` over the segments of `SEGDES` parameter `seg`.
#[derive(Debug, Clone, PartialEq)]
pub struct Guard {
    /// The boolean tree, over the same parameters as the body.
    pub cond: Expr,
    /// The `SEGDES` parameter giving the segments.
    pub seg: usize,
}

/// Whether a fold reduces each segment to one value or scans it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FoldKind {
    /// `<op>_REDUCE`: one value per segment.
    Reduce,
    /// `<op>_SCAN`: the exclusive scan of every segment.
    Scan,
}

/// The root of a superoperator that folds its element-wise values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fold {
    /// Reduction or scan.
    pub kind: FoldKind,
    /// The combining operator.
    pub op: ReduceOp,
    /// The element type (that of the tree).
    pub ty: VType,
    /// The `SEGDES` parameter giving the segments.
    pub seg: usize,
}

impl Fold {
    /// The VCODE instruction this fold performs (`+_REDUCE`, `MAX_SCAN`, ...).
    pub fn opcode(&self) -> Option<Opcode> {
        OPCODES.iter().copied().find(|o| match (self.kind, o.info().exec) {
            (FoldKind::Reduce, Exec::Reduce(r)) | (FoldKind::Scan, Exec::Scan(r)) => r == self.op,
            _ => false,
        })
    }
    /// The fold an instruction performs, if it is a reduction or scan.
    pub fn of_opcode(op: Opcode) -> Option<(FoldKind, ReduceOp)> {
        match op.info().exec {
            Exec::Reduce(r) => Some((FoldKind::Reduce, r)),
            Exec::Scan(r) => Some((FoldKind::Scan, r)),
            _ => None,
        }
    }
}

/// A node of a superoperator's expression tree.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// Parameter `$i` (element `p` of operand `i`).
    Arg(usize),
    /// A constant, broadcast to every position.
    Const(HostScalar),
    /// A binary operation on operands of type `ty`.
    Binary {
        /// The operator.
        op: BinOp,
        /// The operand type.
        ty: VType,
        /// Left operand.
        a: Box<Expr>,
        /// Right operand.
        b: Box<Expr>,
    },
    /// A unary operation (or conversion) on an operand of type `ty`.
    Unary {
        /// The operator.
        op: UnOp,
        /// The operand type.
        ty: VType,
        /// The operand.
        a: Box<Expr>,
    },
    /// `f ? a : b` with branches of type `ty`.
    Select {
        /// Branch type.
        ty: VType,
        /// The flag (BOOL).
        f: Box<Expr>,
        /// Value when the flag is true.
        a: Box<Expr>,
        /// Value when the flag is false.
        b: Box<Expr>,
    },
}

/// The text name of a binary operator (the VCODE spelling, `MAX` / `MIN` otherwise).
pub fn binop_name(op: BinOp) -> &'static str {
    match op {
        BinOp::Max => "MAX",
        BinOp::Min => "MIN",
        _ => OPCODES
            .iter()
            .map(|o| o.info())
            .find(|i| i.exec == Exec::Binary(op))
            .map_or("?", |i| i.name),
    }
}

/// The text name of a unary operator (its VCODE spelling).
pub fn unop_name(op: UnOp) -> &'static str {
    OPCODES.iter().map(|o| o.info()).find(|i| i.exec == Exec::Unary(op)).map_or("?", |i| i.name)
}

/// What a superoperator node name means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NodeKind {
    Binary(BinOp),
    Unary(UnOp),
    Select,
}

/// Looks up a node name (`+`, `SQRT`, `SELECT`, `MAX`, ...).
pub(crate) fn node_kind(name: &str) -> Option<NodeKind> {
    match name {
        "MAX" => return Some(NodeKind::Binary(BinOp::Max)),
        "MIN" => return Some(NodeKind::Binary(BinOp::Min)),
        _ => {}
    }
    match Opcode::from_name(name)?.info().exec {
        Exec::Binary(op) => Some(NodeKind::Binary(op)),
        Exec::Unary(op) => Some(NodeKind::Unary(op)),
        Exec::Select => Some(NodeKind::Select),
        _ => None,
    }
}

fn opcode_of(kind: NodeKind) -> Option<Opcode> {
    OPCODES.iter().copied().find(|o| match (kind, o.info().exec) {
        (NodeKind::Binary(a), Exec::Binary(b)) => a == b,
        (NodeKind::Unary(a), Exec::Unary(b)) => a == b,
        (NodeKind::Select, Exec::Select) => true,
        _ => false,
    })
}

/// The operand types a node accepts and its result type for operand type `ty`, read off
/// the instruction table. `Err` says why the combination is not allowed.
pub(crate) fn node_types(kind: NodeKind, ty: VType) -> Result<VType, String> {
    let (name, op) = match kind {
        NodeKind::Binary(BinOp::Max) | NodeKind::Binary(BinOp::Min) => {
            return if ty == VType::Bool {
                Err(format!("`{}` does not take BOOL operands", node_name(kind)))
            } else {
                Ok(ty)
            };
        }
        _ => match opcode_of(kind) {
            Some(op) => (op.info().name, op),
            None => return Err("unknown operator".into()),
        },
    };
    if !accepts_operand_type(op, ty) {
        return Err(format!("`{name}` does not take {} operands", ty.name()));
    }
    let out = match op.info().effect {
        Effect::Fixed(_, outs) => outs.first().copied(),
        Effect::Special => None,
    };
    let ty_arg = Some(Ty::from(ty));
    match out.and_then(|p: Pat| p.resolve(ty_arg)) {
        Some(SlotTy::Vec(t)) => Ok(t),
        _ => Err(format!("`{name}` is not element-wise")),
    }
}

pub(crate) fn node_name(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Binary(op) => binop_name(op),
        NodeKind::Unary(op) => unop_name(op),
        NodeKind::Select => "SELECT",
    }
}

impl Expr {
    /// The element type of this node, checking the whole subtree against `params`.
    pub fn result_type(&self, params: &[Ty]) -> Result<VType, String> {
        match self {
            Expr::Arg(i) => match params.get(*i) {
                Some(t) => t.vtype().ok_or_else(|| {
                    format!("parameter ${i} is a SEGDES and cannot be used as a value")
                }),
                None => Err(format!("parameter ${i} is not declared ({} parameters)", params.len())),
            },
            Expr::Const(c) => Ok(match c {
                HostScalar::Int(_) => VType::Int,
                HostScalar::Float(_) => VType::Float,
                HostScalar::Bool(_) => VType::Bool,
            }),
            Expr::Binary { op, ty, a, b } => {
                let kind = NodeKind::Binary(*op);
                for e in [a, b] {
                    let t = e.result_type(params)?;
                    if t != *ty {
                        return Err(format!(
                            "`{}` on {} has a {} operand",
                            node_name(kind),
                            ty.name(),
                            t.name()
                        ));
                    }
                }
                node_types(kind, *ty)
            }
            Expr::Unary { op, ty, a } => {
                let kind = NodeKind::Unary(*op);
                let t = a.result_type(params)?;
                if t != *ty {
                    return Err(format!(
                        "`{}` on {} has a {} operand",
                        node_name(kind),
                        ty.name(),
                        t.name()
                    ));
                }
                node_types(kind, *ty)
            }
            Expr::Select { ty, f, a, b } => {
                let tf = f.result_type(params)?;
                if tf != VType::Bool {
                    return Err(format!("`SELECT` flag is {}, not BOOL", tf.name()));
                }
                for e in [a, b] {
                    let t = e.result_type(params)?;
                    if t != *ty {
                        return Err(format!("`SELECT` on {} has a {} branch", ty.name(), t.name()));
                    }
                }
                node_types(NodeKind::Select, *ty)
            }
        }
    }

    /// True when the tree can trap: it holds an integer `/` or `%` (by zero).
    pub fn may_trap(&self) -> bool {
        match self {
            Expr::Arg(_) | Expr::Const(_) => false,
            Expr::Binary { op, ty, a, b } => (matches!(op, BinOp::Div | BinOp::Mod) && *ty == VType::Int) || a.may_trap() || b.may_trap(),
            Expr::Unary { a, .. } => a.may_trap(),
            Expr::Select { f, a, b, .. } => f.may_trap() || a.may_trap() || b.may_trap(),
        }
    }

    /// Number of nodes in the tree.
    pub fn size(&self) -> usize {
        match self {
            Expr::Arg(_) | Expr::Const(_) => 1,
            Expr::Binary { a, b, .. } => 1 + a.size() + b.size(),
            Expr::Unary { a, .. } => 1 + a.size(),
            Expr::Select { f, a, b, .. } => 1 + f.size() + a.size() + b.size(),
        }
    }
}

impl SuperOp {
    /// An element-wise superoperator (no fold).
    pub fn elementwise(params: Vec<Ty>, body: Expr) -> SuperOp {
        SuperOp { params, body, fold: None, guard: None, pack: None, more: Vec::new() }
    }
    /// A superoperator folding `body` with `fold`.
    pub fn folding(params: Vec<Ty>, body: Expr, fold: Fold) -> SuperOp {
        SuperOp { params, body, fold: Some(fold), guard: None, pack: None, more: Vec::new() }
    }
    /// A superoperator packing `body` by each of `flags` over `SEGDES` parameter `seg`.
    pub fn packing(params: Vec<Ty>, body: Expr, seg: usize, flags: Vec<Expr>) -> SuperOp {
        SuperOp { params, body, fold: None, guard: None, pack: Some(Pack { seg, flags }), more: Vec::new() }
    }
    /// Flag tree `i` of a pack root as an element-wise superoperator of its own (over the
    /// same parameters), if there is one.
    pub fn flag_op(&self, i: usize) -> Option<SuperOp> {
        let f = self.pack.as_ref()?.flags.get(i)?;
        Some(SuperOp::elementwise(self.params.clone(), f.clone()))
    }
    /// The superoperators a vector library that does not evaluate this one whole runs in
    /// its place: for a pack root, the body and each flag tree (element-wise); with
    /// several reductions, each; otherwise the operator itself (the CUDA library runs one
    /// with several element-wise results whole).
    pub fn parts(&self) -> Vec<SuperOp> {
        match &self.pack {
            // (Several reductions run as one each.)
            None if self.fold.is_some() && !self.more.is_empty() => (0..=self.more.len()).filter_map(|i| self.output_op(i)).collect(),
            None => vec![self.clone()],
            Some(p) => std::iter::once(self.without_fold()).chain((0..p.flags.len()).filter_map(|i| self.flag_op(i))).collect(),
        }
    }
    /// Result `i` (`0` the body, then the further ones) as a superoperator of its own over
    /// the same parameters, without a guard (with the fold, for a reduction).
    pub fn output_op(&self, i: usize) -> Option<SuperOp> {
        let e = if i == 0 { &self.body } else { self.more.get(i - 1)? };
        Some(SuperOp { fold: self.fold, ..SuperOp::elementwise(self.params.clone(), e.clone()) })
    }
    /// The element types of the element-wise results: the body's, then each further
    /// tree's (checks the trees).
    pub fn output_types(&self) -> Result<Vec<VType>, String> {
        std::iter::once(self.result_type()).chain(self.more.iter().map(|e| e.result_type(&self.params))).collect()
    }
    /// The element-wise part of this operator: the same parameters and tree, no fold
    /// and no guard.
    pub fn without_fold(&self) -> SuperOp {
        SuperOp::elementwise(self.params.clone(), self.body.clone())
    }
    /// The guard as a superoperator of its own (the `OR_REDUCE` of its tree over the same
    /// parameters), if there is one.
    pub fn guard_op(&self) -> Option<SuperOp> {
        let g = self.guard.as_ref()?;
        let fold = Fold { kind: FoldKind::Reduce, op: ReduceOp::Or, ty: VType::Bool, seg: g.seg };
        Some(SuperOp::folding(self.params.clone(), g.cond.clone(), fold))
    }
    /// Number of values `FUSED` of this operator pushes: a vector and a segment
    /// descriptor per flag tree with a pack root, else a vector per element-wise result
    /// and one more with a guard.
    pub fn results(&self) -> usize {
        match &self.pack {
            Some(p) => 2 * p.flags.len(),
            None => 1 + self.more.len() + self.guard.is_some() as usize,
        }
    }
    /// The parameter whose element count is the length of every data operand: the fold's
    /// or the guard's segment descriptor, else `$0`.
    pub fn length_param(&self) -> usize {
        match (&self.fold, &self.guard, &self.pack) {
            (Some(f), _, _) => f.seg,
            (None, Some(g), _) => g.seg,
            (None, None, Some(p)) => p.seg,
            (None, None, None) => 0,
        }
    }
    /// The result element type (checks the tree, and the fold, against the parameters).
    pub fn result_type(&self) -> Result<VType, String> {
        let t = self.body.result_type(&self.params)?;
        if let Some(f) = &self.fold {
            let op = f.opcode().ok_or("unknown fold")?;
            let name = op.info().name;
            if f.ty != t {
                return Err(format!("`{name}` on {} folds a {} tree", f.ty.name(), t.name()));
            }
            if !accepts_operand_type(op, t) {
                return Err(format!("`{name}` does not take {} operands", t.name()));
            }
            match self.params.get(f.seg) {
                Some(Ty::Segdes) => {}
                Some(p) => return Err(format!("`{name}` folds over ${}, a {}, not a SEGDES", f.seg, p.name())),
                None => return Err(format!("parameter ${} is not declared ({} parameters)", f.seg, self.params.len())),
            }
        }
        if let Some(g) = &self.guard {
            if self.fold.is_some() {
                return Err("a superoperator with a fold has no guard".into());
            }
            if self.body.may_trap() || g.cond.may_trap() {
                // The values are computed before the guard is read: nothing may fail.
                return Err("a superoperator with a guard cannot trap (integer `/` or `%`)".into());
            }
            let gt = g.cond.result_type(&self.params)?;
            if gt != VType::Bool {
                return Err(format!("the guard is a {} tree, not BOOL", gt.name()));
            }
            match self.params.get(g.seg) {
                Some(Ty::Segdes) => {}
                Some(p) => return Err(format!("the guard reduces over ${}, a {}, not a SEGDES", g.seg, p.name())),
                None => return Err(format!("parameter ${} is not declared ({} parameters)", g.seg, self.params.len())),
            }
        }
        if !self.more.is_empty() {
            if self.pack.is_some() || self.fold.is_some_and(|f| f.kind != FoldKind::Reduce) {
                return Err("a superoperator with several results has no pack and no scan".into());
            }
            if let Some(f) = self.fold {
                for e in &self.more {
                    let t = e.result_type(&self.params)?;
                    if t != f.ty {
                        return Err(format!("a further reduced tree is {}, not {}", t.name(), f.ty.name()));
                    }
                }
            }
            if self.body.may_trap() || self.more.iter().any(Expr::may_trap) {
                // Every result is computed before any is pushed: nothing may fail.
                return Err("a superoperator with several results cannot trap (integer `/` or `%`)".into());
            }
            for e in &self.more {
                e.result_type(&self.params)?;
            }
        }
        if let Some(p) = &self.pack {
            if self.fold.is_some() || self.guard.is_some() {
                return Err("a superoperator with a pack has no fold and no guard".into());
            }
            if p.flags.is_empty() {
                return Err("a pack needs at least one flag tree".into());
            }
            if self.body.may_trap() || p.flags.iter().any(Expr::may_trap) {
                // Every flag is computed before any element is kept: nothing may fail.
                return Err("a superoperator with a pack cannot trap (integer `/` or `%`)".into());
            }
            for f in &p.flags {
                let ft = f.result_type(&self.params)?;
                if ft != VType::Bool {
                    return Err(format!("a pack's flag is a {} tree, not BOOL", ft.name()));
                }
            }
            match self.params.get(p.seg) {
                Some(Ty::Segdes) => {}
                Some(q) => return Err(format!("the pack is over ${}, a {}, not a SEGDES", p.seg, q.name())),
                None => return Err(format!("parameter ${} is not declared ({} parameters)", p.seg, self.params.len())),
            }
        }
        Ok(t)
    }
    /// Checks the operator: parameter types are data types or `SEGDES`, the tree is well
    /// typed, and there is at least one parameter to give the result length.
    pub fn check(&self) -> Result<VType, String> {
        if self.params.is_empty() {
            return Err("a superoperator needs at least one parameter (it gives the length)".into());
        }
        if self.params.contains(&Ty::Char) {
            return Err("CHAR is not a superoperator parameter type (use INT)".into());
        }
        self.result_type()
    }
    /// Parses the text form `(T1 T2 ...) expr` (without the `SUPEROP n` prefix).
    pub fn parse(src: &str) -> Result<SuperOp, Vec<crate::ParseError>> {
        crate::parse::parse_superop(src)
    }
}

fn write_scalar(f: &mut fmt::Formatter<'_>, c: &HostScalar) -> fmt::Result {
    match c {
        HostScalar::Int(v) => write!(f, "(CONST INT {v})"),
        HostScalar::Float(v) => write!(f, "(CONST FLOAT {})", crate::print::float_literal(*v)),
        HostScalar::Bool(v) => write!(f, "(CONST BOOL {})", if *v { "T" } else { "F" }),
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Arg(i) => write!(f, "${i}"),
            Expr::Const(c) => write_scalar(f, c),
            Expr::Binary { op, ty, a, b } => {
                write!(f, "({} {} {a} {b})", binop_name(*op), ty.name())
            }
            Expr::Unary { op, ty, a } => write!(f, "({} {} {a})", unop_name(*op), ty.name()),
            Expr::Select { ty, f: c, a, b } => write!(f, "(SELECT {} {c} {a} {b})", ty.name()),
        }
    }
}

impl fmt::Display for SuperOp {
    /// Prints `(T1 T2 ...) expr`, the form [`SuperOp::parse`] reads.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "(")?;
        for (i, t) in self.params.iter().enumerate() {
            if i > 0 {
                write!(f, " ")?;
            }
            write!(f, "{}", t.name())?;
        }
        if let Some(p) = &self.pack {
            write!(f, ") (PACK {} {} ${}", self.body.result_type(&self.params).map_or("?", |t| t.name()), self.body, p.seg)?;
            for flag in &p.flags {
                write!(f, " {flag}")?;
            }
            return write!(f, ")");
        }
        match &self.fold {
            None => write!(f, ") {}", self.body)?,
            Some(fold) => {
                let name = fold.opcode().map_or("?", |o| o.info().name);
                write!(f, ") ({name} {} {} ${})", fold.ty.name(), self.body, fold.seg)?
            }
        }
        for e in &self.more {
            match &self.fold {
                None => write!(f, " {e}")?,
                Some(fold) => write!(f, " ({} {} {e} ${})", fold.opcode().map_or("?", |o| o.info().name), fold.ty.name(), fold.seg)?,
            }
        }
        match &self.guard {
            None => Ok(()),
            Some(g) => write!(f, " (OR_REDUCE BOOL {} ${})", g.cond, g.seg),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_print_check() {
        let src = "(INT INT SEGDES) (* INT (- INT $0 $1) (CONST INT 7))";
        let op = SuperOp::parse(src).expect("parses");
        assert_eq!(op.to_string(), src);
        assert_eq!(op.check(), Ok(VType::Int));
        let cmp = SuperOp::parse("(FLOAT FLOAT) (SELECT FLOAT (< FLOAT $0 $1) (SQRT FLOAT $0) (MAX FLOAT $1 (CONST FLOAT 0.5)))")
            .expect("parses");
        assert_eq!(cmp.check(), Ok(VType::Float));
    }

    #[test]
    fn type_errors() {
        assert!(SuperOp::parse("(INT FLOAT) (+ INT $0 $1)").is_err());
        assert!(SuperOp::parse("(SEGDES) (+ INT $0 $0)").is_err());
        assert!(SuperOp::parse("(BOOL) (SQRT BOOL $0)").is_err());
        assert!(SuperOp::parse("(INT) (+ INT $0 $3)").is_err());
        assert!(SuperOp::parse("(INT) (I_TO_F INT $0)").is_ok());
    }

    #[test]
    fn folds() {
        let src = "(FLOAT FLOAT SEGDES) (+_REDUCE FLOAT (* FLOAT $0 $1) $2)";
        let op = SuperOp::parse(src).expect("parses");
        assert_eq!(op.to_string(), src);
        assert_eq!(op.check(), Ok(VType::Float));
        assert_eq!(op.fold, Some(Fold { kind: FoldKind::Reduce, op: ReduceOp::Add, ty: VType::Float, seg: 2 }));
        assert_eq!(op.without_fold().to_string(), "(FLOAT FLOAT SEGDES) (* FLOAT $0 $1)");
        let scan = SuperOp::parse("(INT SEGDES) (MAX_SCAN INT (+ INT $0 (CONST INT 1)) $1)").expect("parses");
        assert_eq!(scan.fold.map(|f| f.kind), Some(FoldKind::Scan));
        // the fold's type must be the tree's, take that type, and fold over a SEGDES
        assert!(SuperOp::parse("(FLOAT SEGDES) (+_REDUCE INT (SQRT FLOAT $0) $1)").is_err());
        assert!(SuperOp::parse("(BOOL SEGDES) (+_REDUCE BOOL (NOT BOOL $0) $1)").is_err());
        assert!(SuperOp::parse("(INT INT) (+_REDUCE INT (+ INT $0 $1) $1)").is_err());
        assert!(SuperOp::parse("(INT SEGDES) (+_REDUCE INT (+ INT $0 $0) $4)").is_err());
        // only the root folds
        assert!(SuperOp::parse("(INT SEGDES) (+ INT (+_REDUCE INT $0 $1) $0)").is_err());
    }

    #[test]
    fn several_results() {
        let src = "(FLOAT FLOAT FLOAT SEGDES) (* FLOAT (SQRT FLOAT $0) $1) (* FLOAT (SQRT FLOAT $0) $2) (< FLOAT $1 $2) (OR_REDUCE BOOL (< FLOAT $0 (CONST FLOAT 0.0)) $3)";
        let op = SuperOp::parse(src).expect("parses");
        assert_eq!(op.to_string(), src);
        assert_eq!(op.more.len(), 2);
        assert!(op.guard.is_some());
        assert_eq!(op.results(), 4);
        assert_eq!(op.output_types(), Ok(vec![VType::Float, VType::Float, VType::Bool]));
        assert_eq!(op.output_op(2).map(|o| o.to_string()), Some("(FLOAT FLOAT FLOAT SEGDES) (< FLOAT $1 $2)".to_string()));
        assert_eq!(op.output_op(3), None);
        assert_eq!(op.parts(), vec![op.clone()], "run whole");
        // No tree may trap; no fold or pack beside them; the guard comes last; a further
        // tree is checked like the body.
        assert!(SuperOp::parse("(INT INT) (+ INT $0 $1) (/ INT $0 $1)").is_err());
        assert!(SuperOp::parse("(INT INT SEGDES) (+_REDUCE INT $0 $2) (+ INT $0 $1)").is_err());
        assert!(SuperOp::parse("(INT SEGDES) (+ INT $0 $0) (OR_REDUCE BOOL (< INT $0 $0) $1) (+ INT $0 $0)").is_err());
        assert!(SuperOp::parse("(INT FLOAT) (+ INT $0 $0) (+ INT $0 $1)").is_err());
        assert!(SuperOp::parse("(INT INT) (+ INT $0 $1) (- INT $0 $1)").is_ok());
        // Several reductions: the same reduction of each tree, run by a library that does
        // not evaluate them together as one superoperator each.
        let src = "(FLOAT FLOAT SEGDES) (+_REDUCE FLOAT (* FLOAT (SQRT FLOAT $0) $1) $2) (+_REDUCE FLOAT (SQRT FLOAT $0) $2)";
        let op = SuperOp::parse(src).expect("parses");
        assert_eq!(op.to_string(), src);
        assert_eq!(op.results(), 2);
        let parts: Vec<String> = op.parts().iter().map(|p| p.to_string()).collect();
        assert_eq!(parts, ["(FLOAT FLOAT SEGDES) (+_REDUCE FLOAT (* FLOAT (SQRT FLOAT $0) $1) $2)", "(FLOAT FLOAT SEGDES) (+_REDUCE FLOAT (SQRT FLOAT $0) $2)"]);
        // another reduction, another descriptor, a tree of another type, a scan, an
        // element-wise tree beside a reduction
        for bad in [
            "(FLOAT FLOAT SEGDES) (+_REDUCE FLOAT $0 $2) (MAX_REDUCE FLOAT $1 $2)",
            "(FLOAT FLOAT SEGDES SEGDES) (+_REDUCE FLOAT $0 $2) (+_REDUCE FLOAT $1 $3)",
            "(FLOAT INT SEGDES) (+_REDUCE FLOAT $0 $2) (+_REDUCE FLOAT (I_TO_F INT $1) $2) (+_REDUCE INT $1 $2)",
            "(INT INT SEGDES) (+_SCAN INT $0 $2) (+_SCAN INT $1 $2)",
            "(INT INT SEGDES) (+_REDUCE INT $0 $2) (+ INT $0 $1)",
        ] {
            assert!(SuperOp::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn guards() {
        let src = "(FLOAT FLOAT SEGDES) (SQRT FLOAT (/ FLOAT $0 $1)) (OR_REDUCE BOOL (< FLOAT $0 (CONST FLOAT 0.0)) $2)";
        let op = SuperOp::parse(src).expect("parses");
        assert_eq!(op.to_string(), src);
        assert_eq!(op.check(), Ok(VType::Float));
        assert_eq!(op.results(), 2);
        assert_eq!(op.length_param(), 2);
        assert_eq!(op.without_fold().to_string(), "(FLOAT FLOAT SEGDES) (SQRT FLOAT (/ FLOAT $0 $1))");
        assert_eq!(
            op.guard_op().map(|g| g.to_string()),
            Some("(FLOAT FLOAT SEGDES) (OR_REDUCE BOOL (< FLOAT $0 (CONST FLOAT 0.0)) $2)".to_string())
        );
        // a guard is an OR_REDUCE of a BOOL tree over a SEGDES, after an element-wise body
        assert!(SuperOp::parse("(FLOAT SEGDES) (SQRT FLOAT $0) (AND_REDUCE BOOL (< FLOAT $0 $0) $1)").is_err());
        assert!(SuperOp::parse("(FLOAT SEGDES) (SQRT FLOAT $0) (OR_REDUCE BOOL (SQRT FLOAT $0) $1)").is_err());
        assert!(SuperOp::parse("(FLOAT FLOAT) (SQRT FLOAT $0) (OR_REDUCE BOOL (< FLOAT $0 $1) $1)").is_err());
        assert!(SuperOp::parse("(FLOAT SEGDES) (+_REDUCE FLOAT $0 $1) (OR_REDUCE BOOL (< FLOAT $0 $0) $1)").is_err());
        // (an element-wise second root is a further result: `several_results`)
        assert_eq!(SuperOp::parse("(FLOAT SEGDES) (SQRT FLOAT $0) (< FLOAT $0 $0)").map(|o| o.results()), Ok(2));
        // neither tree may trap
        assert!(SuperOp::parse("(INT SEGDES) (/ INT $0 $0) (OR_REDUCE BOOL (< INT $0 $0) $1)").is_err());
        assert!(SuperOp::parse("(INT SEGDES) $0 (OR_REDUCE BOOL (< INT (% INT $0 $0) $0) $1)").is_err());
    }

    #[test]
    fn packs() {
        let src = "(INT INT SEGDES) (PACK INT $0 $2 (< INT $0 $1) (= INT $0 $1) (> INT $0 $1))";
        let op = SuperOp::parse(src).expect("parses");
        assert_eq!(op.to_string(), src);
        assert_eq!(op.check(), Ok(VType::Int));
        assert_eq!(op.results(), 6);
        assert_eq!(op.length_param(), 2);
        assert_eq!(op.flag_op(1).map(|g| g.to_string()), Some("(INT INT SEGDES) (= INT $0 $1)".to_string()));
        assert_eq!(op.parts().len(), 4);
        let one = SuperOp::parse("(FLOAT BOOL SEGDES) (PACK FLOAT (* FLOAT $0 $0) $2 $1)").expect("parses");
        assert_eq!(one.results(), 2);
        assert_eq!(one.to_string(), "(FLOAT BOOL SEGDES) (PACK FLOAT (* FLOAT $0 $0) $2 $1)");
        // flags are BOOL trees, the pack is over a SEGDES, of the body's type, and nothing traps
        assert!(SuperOp::parse("(INT INT SEGDES) (PACK INT $0 $2 (+ INT $0 $1))").is_err());
        assert!(SuperOp::parse("(INT INT SEGDES) (PACK INT $0 $1 (< INT $0 $1))").is_err());
        assert!(SuperOp::parse("(INT INT SEGDES) (PACK FLOAT $0 $2 (< INT $0 $1))").is_err());
        assert!(SuperOp::parse("(INT INT SEGDES) (PACK INT $0 $2)").is_err());
        assert!(SuperOp::parse("(INT INT SEGDES) (PACK INT (/ INT $0 $1) $2 (< INT $0 $1))").is_err());
        assert!(SuperOp::parse("(INT INT SEGDES) (PACK INT $0 $2 (< INT (% INT $0 $1) $1))").is_err());
    }
}
