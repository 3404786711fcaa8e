//! The VCODE / FCODE intermediate representation: plain data.
//!
//! A [`Program`] is a list of functions (each a flat list of instructions, with
//! `IF`/`ELSE`/`ENDIF` kept as instructions, exactly as in the text) plus the table of
//! superoperators that `FUSED n` refers to. Source positions are kept beside the code,
//! not inside it, so that two programs with the same code compare equal with
//! [`Program::same_code`] whatever their layout.

use crate::fused::SuperOp;
use crate::op::{Opcode, Ty};
use std::sync::Arc;

/// A 1-based source position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Pos {
    /// Line.
    pub line: u32,
    /// Column (in characters).
    pub col: u32,
}

/// Where an instruction came from: a source position and what it is a position in.
///
/// Scope 0 is the program's own VCODE text (a program parsed from a `.vcode` file: the
/// position is the instruction's place in that file). Scope `k >= 1` is entry `k - 1` of
/// [`Program::scopes`]: the position is in a NESL source file, inside a NESL function.
/// Every optimiser pass keeps the origin of each instruction it keeps or rewrites.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Origin {
    /// The position (1-based; line 0 when unknown).
    pub pos: Pos,
    /// 0: the VCODE text; `k >= 1`: `Program::scopes[k - 1]`.
    pub scope: u32,
    /// 0: not inlined; `k >= 1`: the instruction was copied by the inliner from a callee's
    /// body, and `Program::inline_sites[k - 1]` is the origin of the `CALL` it replaced
    /// (itself possibly inlined: follow the chain for the whole call stack).
    pub inlined_at: u32,
}

impl Origin {
    /// A position in the program's own VCODE text.
    pub fn vcode(pos: Pos) -> Self {
        Origin { pos, scope: 0, inlined_at: 0 }
    }
}

/// A NESL source scope that instructions can come from: a file and a function in it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Scope {
    /// The NESL source file (as the user named it; `<prelude>` for the standard
    /// library, `<repl>` or similar for text typed in).
    pub file: std::sync::Arc<str>,
    /// The NESL function (`None` at the top level).
    pub function: Option<String>,
}

/// A whole VCODE or FCODE program.
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    /// The functions in file order.
    pub functions: Vec<Function>,
    /// The superoperator table (`FUSED n` uses entry `n`); empty for plain VCODE.
    pub superops: Vec<SuperOp>,
    /// NESL scopes that [`Origin::scope`] refers to (empty for VCODE read from text).
    pub scopes: Vec<Scope>,
    /// Call sites that [`Origin::inlined_at`] refers to (empty before inlining).
    pub inline_sites: Vec<Origin>,
}

impl Program {
    /// The entry function: the one named `MAIN` if there is one, otherwise the first.
    pub fn entry(&self) -> usize {
        self.functions.iter().position(|f| f.name == "MAIN").unwrap_or(0)
    }
    /// The function a `CALL name` reaches (the last definition of that name wins).
    pub fn lookup(&self, name: &str) -> Option<usize> {
        self.functions.iter().rposition(|f| f.name == name)
    }
    /// True when both programs have the same functions, instructions and superoperators,
    /// ignoring source positions.
    pub fn same_code(&self, other: &Program) -> bool {
        self.superops == other.superops
            && self.functions.len() == other.functions.len()
            && self
                .functions
                .iter()
                .zip(&other.functions)
                .all(|(a, b)| a.name == b.name && a.sig == b.sig && a.body == b.body)
    }
    /// Number of instructions in all functions.
    pub fn instruction_count(&self) -> usize {
        self.functions.iter().map(|f| f.body.len()).sum()
    }
}

/// One `FUNC name ... RET`.
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    /// The function's name.
    pub name: String,
    /// The informational type line `I ins... O outs...`, when written.
    pub sig: Option<(Vec<Ty>, Vec<Ty>)>,
    /// The instructions, ending with `RET`.
    pub body: Vec<Instr>,
    /// Where each instruction came from (same length as `body`; may be empty for
    /// programs built in memory with no origins).
    pub origins: Vec<Origin>,
    /// Position of the `FUNC` keyword.
    pub pos: Pos,
}

impl Function {
    /// A function built in memory (no source positions).
    pub fn new(name: impl Into<String>, body: Vec<Instr>) -> Self {
        Function { name: name.into(), sig: None, body, origins: Vec::new(), pos: Pos::default() }
    }
    /// The origin of instruction `i` (the function's own position when unknown).
    pub fn origin_of(&self, i: usize) -> Origin {
        self.origins.get(i).copied().unwrap_or(Origin::vcode(self.pos))
    }
    /// The source position of instruction `i` (or of the function when unknown).
    pub fn pos_of(&self, i: usize) -> Pos {
        self.origin_of(i).pos
    }
}

/// One instruction.
#[derive(Debug, Clone, PartialEq)]
pub struct Instr {
    /// Which instruction.
    pub op: Opcode,
    /// Its type argument, for instructions that take one.
    pub ty: Option<Ty>,
    /// Its immediate operand.
    pub imm: Imm,
}

impl Instr {
    /// An instruction with no type argument and no immediate.
    pub fn plain(op: Opcode) -> Self {
        Instr { op, ty: None, imm: Imm::None }
    }
    /// An instruction with a type argument.
    pub fn typed(op: Opcode, ty: Ty) -> Self {
        Instr { op, ty: Some(ty), imm: Imm::None }
    }
}

/// The immediate operand of an instruction.
#[derive(Debug, Clone, PartialEq)]
pub enum Imm {
    /// None.
    None,
    /// `n d` of `COPY`, `POP`, `CPOP`.
    Counts(u32, u32),
    /// The callee of `CALL`.
    Label(String),
    /// The constant of `CONST`.
    Const(Const),
    /// The table index of `FUSED`.
    Index(u32),
}

/// A constant.
#[derive(Debug, Clone, PartialEq)]
pub enum Const {
    /// `CONST INT k` (`list = false`) or `CONST INT (...)`.
    Int(Arc<[i64]>, bool),
    /// `CONST FLOAT x` or `CONST FLOAT (...)`.
    Float(Arc<[f64]>, bool),
    /// `CONST BOOL T` or `CONST BOOL (...)`.
    Bool(Arc<[bool]>, bool),
    /// `CONST SEGDES k` (one segment) or `CONST SEGDES (l0 l1 ...)` (segment lengths).
    Segdes(Arc<[i64]>, bool),
    /// `CONST CHAR "text"`: an `INT` vector of character codes.
    Char(String),
}

impl Const {
    /// The type keyword.
    pub fn ty(&self) -> Ty {
        match self {
            Const::Int(..) => Ty::Int,
            Const::Float(..) => Ty::Float,
            Const::Bool(..) => Ty::Bool,
            Const::Segdes(..) => Ty::Segdes,
            Const::Char(_) => Ty::Char,
        }
    }
}
