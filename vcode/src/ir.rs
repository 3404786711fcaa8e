//! The VCODE / FCODE intermediate representation: plain data.
//!
//! A [`Program`] is a list of functions (each a flat list of instructions, with
//! `IF`/`ELSE`/`ENDIF` kept as instructions, exactly as in the text) plus the table of
//! superoperators that `FUSED n` refers to. Source positions are kept beside the code,
//! not inside it, so that two programs with the same code compare equal with
//! [`Program::same_code`] whatever their layout.

use crate::fused::SuperOp;
use crate::op::{Opcode, Ty};

/// A 1-based source position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    /// Line.
    pub line: u32,
    /// Column (in characters).
    pub col: u32,
}

/// A whole VCODE or FCODE program.
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    /// The functions in file order.
    pub functions: Vec<Function>,
    /// The superoperator table (`FUSED n` uses entry `n`); empty for plain VCODE.
    pub superops: Vec<SuperOp>,
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

    /// Fills in constants passed beside the program text instead of written in it: for
    /// each `(line, value)`, the `CONST` instruction on that source line must be an empty
    /// list constant of the value's type (`CONST INT ()`, `CONST FLOAT ()`,
    /// `CONST BOOL ()`, `CONST SEGDES ()`), and becomes that constant. This is how the top
    /// level hands large global values to compiled code without printing them as text.
    pub fn fill_consts(&mut self, consts: Vec<(u32, crate::HostValue)>) -> Result<(), String> {
        use crate::HostValue;
        let mut sites: std::collections::HashMap<u32, (usize, usize)> = std::collections::HashMap::new();
        for (fi, f) in self.functions.iter().enumerate() {
            for (ii, ins) in f.body.iter().enumerate() {
                if let (Imm::Const(_), Some(pos)) = (&ins.imm, f.spans.get(ii)) {
                    sites.insert(pos.line, (fi, ii));
                }
            }
        }
        for (line, value) in consts {
            let &(fi, ii) = sites.get(&line).ok_or_else(|| format!("no CONST on line {line} to fill"))?;
            let Imm::Const(c) = &mut self.functions[fi].body[ii].imm else { unreachable!("sites holds CONSTs only") };
            *c = match (&*c, value) {
                (Const::Int(v, true), HostValue::Int(x)) if v.is_empty() => Const::Int(x, true),
                (Const::Float(v, true), HostValue::Float(x)) if v.is_empty() => Const::Float(x, true),
                (Const::Bool(v, true), HostValue::Bool(x)) if v.is_empty() => Const::Bool(x, true),
                (Const::Segdes(v, true), HostValue::Segdes(x)) if v.is_empty() => Const::Segdes(x, true),
                (c, v) => {
                    return Err(format!(
                        "line {line}: CONST {} is not an empty placeholder for a {} value",
                        c.ty().name(),
                        match v {
                            HostValue::Int(_) => "INT",
                            HostValue::Float(_) => "FLOAT",
                            HostValue::Bool(_) => "BOOL",
                            HostValue::Segdes(_) => "SEGDES",
                        }
                    ))
                }
            };
        }
        Ok(())
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
    /// Source position of each instruction (same length as `body`; may be empty for
    /// programs built in memory).
    pub spans: Vec<Pos>,
    /// Position of the `FUNC` keyword.
    pub pos: Pos,
}

impl Function {
    /// A function built in memory (no source positions).
    pub fn new(name: impl Into<String>, body: Vec<Instr>) -> Self {
        Function { name: name.into(), sig: None, body, spans: Vec::new(), pos: Pos::default() }
    }
    /// The source position of instruction `i` (or of the function when unknown).
    pub fn pos_of(&self, i: usize) -> Pos {
        self.spans.get(i).copied().unwrap_or(self.pos)
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
    Int(Vec<i64>, bool),
    /// `CONST FLOAT x` or `CONST FLOAT (...)`.
    Float(Vec<f64>, bool),
    /// `CONST BOOL T` or `CONST BOOL (...)`.
    Bool(Vec<bool>, bool),
    /// `CONST SEGDES k` (one segment) or `CONST SEGDES (l0 l1 ...)` (segment lengths).
    Segdes(Vec<i64>, bool),
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
