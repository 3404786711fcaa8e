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
    /// 0: no parts; `k >= 1`: the instruction is a `FUSED` one and
    /// `Program::fused_parts[k - 1]` holds the origin of each operation it fused (the
    /// instruction's own position is that of its first operation that can trap, or else
    /// of its root).
    pub parts: u32,
}

impl Origin {
    /// A position in the program's own VCODE text.
    pub fn vcode(pos: Pos) -> Self {
        Origin { pos, scope: 0, inlined_at: 0, parts: 0 }
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

/// One place of a backtrace ([`Program::backtrace`]): a source position and, for code
/// compiled from NESL, the file and the NESL function it lies in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The NESL file (`None`: the position is in the program's own VCODE text).
    pub file: Option<Arc<str>>,
    /// The NESL function (`None` at the top level or for VCODE text).
    pub function: Option<String>,
    /// The VCODE function the place is in (after inlining: the one that runs).
    pub vcode_function: String,
    /// The position (line 0 when unknown).
    pub pos: Pos,
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
    /// The origins of the operations fused into a `FUSED` instruction, one list per
    /// instruction, that [`Origin::parts`] refers to (empty before fusion). Entry `j` of a
    /// list is the origin of operation `j` of the superoperator's element-wise body in
    /// evaluation order (operands left to right, then the operation: postfix), which is
    /// how a vector library names the operation that trapped ([`crate::Trap::part`]).
    pub fused_parts: Vec<Vec<Origin>>,
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
    /// [`Self::lookup`] for every name at once: name -> the function a `CALL` of it
    /// reaches (for a caller that looks up many names: `lookup` scans the functions).
    pub fn function_index(&self) -> std::collections::HashMap<&str, usize> {
        self.functions.iter().enumerate().map(|(i, f)| (f.name.as_str(), i)).collect()
    }
    /// Functions defined again under a name already defined: `(name, position of the
    /// previous definition, position of this one)`, in file order. The later definition
    /// wins ([`Program::lookup`]); the spec (and the reference, which warns) allows it,
    /// and the command line prints each as a warning naming both places.
    pub fn redefinitions(&self) -> Vec<(&str, Pos, Pos)> {
        let mut seen: std::collections::HashMap<&str, Pos> = std::collections::HashMap::new();
        let mut out = Vec::new();
        for f in &self.functions {
            if let Some(before) = seen.insert(&f.name, f.pos) {
                out.push((f.name.as_str(), before, f.pos));
            }
        }
        out
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
    /// The place an origin denotes, in VCODE function `vfun`.
    pub fn place(&self, o: Origin, vfun: &str) -> Place {
        let scope = (o.scope as usize).checked_sub(1).and_then(|k| self.scopes.get(k));
        Place {
            file: scope.map(|s| s.file.clone()),
            function: scope.and_then(|s| s.function.clone()),
            vcode_function: vfun.to_string(),
            pos: o.pos,
        }
    }

    /// The origins of the operations fused into an instruction of origin `o`, in
    /// evaluation order (empty unless it is a `FUSED` one).
    pub fn parts_of(&self, o: Origin) -> &[Origin] {
        (o.parts as usize).checked_sub(1).and_then(|k| self.fused_parts.get(k)).map_or(&[], |v| v.as_slice())
    }

    /// The origin of operation `part` (in evaluation order) of the `FUSED` instruction of
    /// origin `o`: where a trap of that operation happened. `o` itself when it has no such
    /// part.
    pub fn part_origin(&self, o: Origin, part: u32) -> Origin {
        self.parts_of(o).get(part as usize).copied().unwrap_or(o)
    }

    /// The places of an origin and of the calls the inliner removed on the way to it,
    /// innermost first.
    fn expand(&self, o: Origin, vfun: &str, out: &mut Vec<Place>) {
        out.push(self.place(o, vfun));
        let mut k = o.inlined_at;
        let mut guard = 0;
        while let Some(site) = (k as usize).checked_sub(1).and_then(|i| self.inline_sites.get(i)) {
            out.push(self.place(*site, vfun));
            k = site.inlined_at;
            guard += 1;
            if guard > self.inline_sites.len() {
                break;
            }
        }
    }

    /// Where a trap (or an `EXIT`) happened and how the program got there: the place of
    /// the instruction, then the place of each call on the way (calls the optimiser
    /// inlined included), innermost first.
    pub fn backtrace(&self, site: &crate::trap::TrapSite) -> Vec<Place> {
        let mut out = Vec::new();
        self.expand(site.origin, &site.function, &mut out);
        for f in &site.stack {
            self.expand(f.call, &f.function, &mut out);
        }
        out
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
    /// For a function over the instances of an apply-to-each whose instances are
    /// independent (no random numbers, no effects), how its parameters and results lie
    /// over them: what lets the interpreter run a call's instances in parts, one part per
    /// thread. Not written in VCODE text.
    pub instances: Option<Instances>,
}

/// How a function's parameter slots (bottom of the stack first) and result slots lie
/// over the instances of a call ([`Function::instances`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Instances {
    /// The parameters, in stack order.
    pub params: Vec<Lane>,
    /// The results, in stack order.
    pub results: Vec<Lane>,
}

/// Slots of a value over a call's instances (one slot, or a segment descriptor and the
/// slots of its elements).
#[derive(Debug, Clone, PartialEq)]
pub enum Lane {
    /// A vector with one element per instance of its level.
    Vector,
    /// A segment descriptor with one segment per instance of its level, then the slots
    /// of its elements, whose instances are the elements of those segments.
    Seq(Vec<Lane>),
    /// A slot every part of a call gets whole (a top-level variable the function reads).
    Whole,
    /// The call's context: a segment descriptor of one segment, one element per instance.
    Context,
}

impl Lane {
    /// The stack slots of this value.
    pub fn slots(&self) -> usize {
        match self {
            Lane::Seq(e) => 1 + e.iter().map(Lane::slots).sum::<usize>(),
            _ => 1,
        }
    }
}

impl Function {
    /// A function built in memory (no source positions).
    pub fn new(name: impl Into<String>, body: Vec<Instr>) -> Self {
        Function { name: name.into(), sig: None, body, origins: Vec::new(), pos: Pos::default(), instances: None }
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
    /// True for the instructions that trap on some operand values: integer `/` and `%`.
    pub fn may_trap_on_values(&self) -> bool {
        matches!(self.op, Opcode::Mod) || (matches!(self.op, Opcode::Div) && self.ty != Some(Ty::Float))
    }
    /// True when the instruction may be dropped if its results are unused: no effect
    /// besides its results, and no trap on the inputs compiled code gives it (integer
    /// division stays; so do the permutations, `EXTRACT` and `REPLACE`, which check their
    /// indices; `MAKE_SEGDES` only rejects negative lengths, which compiled code never
    /// builds). Stack shuffles, pairs and `FUSED` are left to the caller.
    pub fn removable_when_unused(&self) -> bool {
        use crate::op::Exec;
        match self.op.info().exec {
            Exec::Binary(_) => !self.may_trap_on_values(),
            Exec::Unary(_)
            | Exec::Select
            | Exec::Const
            | Exec::Dist
            | Exec::Length
            | Exec::Lengths
            | Exec::MakeSegdes
            | Exec::Scan(_)
            | Exec::Reduce(_)
            | Exec::Index
            | Exec::Rank(_)
            | Exec::Pack => true,
            _ => false,
        }
    }
    /// An instruction with no type argument and no immediate.
    pub fn plain(op: Opcode) -> Self {
        Instr { op, ty: None, imm: Imm::None }
    }
    /// An instruction with a type argument.
    pub fn typed(op: Opcode, ty: Ty) -> Self {
        Instr { op, ty: Some(ty), imm: Imm::None }
    }
    /// `CALL f`.
    pub fn call(f: impl Into<String>) -> Self {
        Instr { op: Opcode::Call, ty: None, imm: Imm::Label(f.into()) }
    }
    /// `CONST c`.
    pub fn konst(c: Const) -> Self {
        Instr { op: Opcode::Const, ty: None, imm: Imm::Const(c) }
    }
    /// `COPY n d`.
    pub fn copy(n: u32, d: u32) -> Self {
        Instr { op: Opcode::Copy, ty: None, imm: Imm::Counts(n, d) }
    }
    /// `POP n d`.
    pub fn pop(n: u32, d: u32) -> Self {
        Instr { op: Opcode::Pop, ty: None, imm: Imm::Counts(n, d) }
    }
    /// How many slots the instruction pops and pushes, when the table fixes it (every
    /// instruction but the stack and control ones, `CALL` and `FUSED`); `CONST` pushes one.
    pub fn fixed_effect(&self) -> Option<(usize, usize)> {
        match (self.op, self.op.info().effect) {
            (_, crate::op::Effect::Fixed(ins, outs)) => Some((ins.len(), outs.len())),
            (Opcode::Const, _) => Some((0, 1)),
            _ => None,
        }
    }
}

impl Opcode {
    /// This instruction with type argument `ty` (`Opcode::Add.t(Ty::Int)` is `+ INT`).
    pub fn t(self, ty: Ty) -> Instr {
        Instr::typed(self, ty)
    }
}

impl From<Opcode> for Instr {
    fn from(op: Opcode) -> Instr {
        Instr::plain(op)
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
    /// A value kept in the vector library by an earlier run ([`crate::run_resident`]):
    /// not part of the VCODE text (it prints as `CONST INT <resident 3>`, which does not
    /// read back), only of programs built and run in one process.
    Resident(crate::Resident),
}

impl From<crate::HostValue> for Const {
    /// A value copied from a run's final stack as a list constant (a segment descriptor
    /// as its segment lengths).
    fn from(v: crate::HostValue) -> Const {
        use crate::HostValue;
        match v {
            HostValue::Int(x) => Const::Int(x.into(), true),
            HostValue::Float(x) => Const::Float(x.into(), true),
            HostValue::Bool(x) => Const::Bool(x.into(), true),
            HostValue::Segdes(x) => Const::Segdes(x.into(), true),
        }
    }
}

impl Const {
    /// The scalar `CONST INT k`.
    pub fn int(k: i64) -> Self {
        Const::Int([k].into(), false)
    }
    /// The list `CONST INT (...)`.
    pub fn ints(v: impl Into<Arc<[i64]>>) -> Self {
        Const::Int(v.into(), true)
    }
    /// The scalar `CONST FLOAT x`.
    pub fn float(x: f64) -> Self {
        Const::Float([x].into(), false)
    }
    /// The list `CONST FLOAT (...)`.
    pub fn floats(v: impl Into<Arc<[f64]>>) -> Self {
        Const::Float(v.into(), true)
    }
    /// The scalar `CONST BOOL T` / `F`.
    pub fn bool(b: bool) -> Self {
        Const::Bool([b].into(), false)
    }
    /// The list `CONST BOOL (...)`.
    pub fn bools(v: impl Into<Arc<[bool]>>) -> Self {
        Const::Bool(v.into(), true)
    }
    /// An empty list constant of an element type (`CONST INT ()`, ...).
    pub fn empty(ty: Ty) -> Self {
        match ty {
            Ty::Int | Ty::Char => Const::Int(Arc::new([]), true),
            Ty::Float => Const::Float(Arc::new([]), true),
            Ty::Bool => Const::Bool(Arc::new([]), true),
            Ty::Segdes => Const::Segdes(Arc::new([]), true),
        }
    }
    /// The type keyword.
    pub fn ty(&self) -> Ty {
        match self {
            Const::Int(..) => Ty::Int,
            Const::Float(..) => Ty::Float,
            Const::Bool(..) => Ty::Bool,
            Const::Segdes(..) => Ty::Segdes,
            Const::Char(_) => Ty::Char,
            Const::Resident(r) => r.ty(),
        }
    }

    /// The constant's data as a host value (a segment descriptor as its lengths, a scalar
    /// as a one-element vector, text as character codes); `None` for a
    /// [`Const::Resident`], whose data is in a library ([`crate::Residents::to_host`]).
    pub fn to_host(&self) -> Option<crate::HostValue> {
        use crate::HostValue;
        Some(match self {
            Const::Int(v, _) => HostValue::Int(v.to_vec()),
            Const::Float(v, _) => HostValue::Float(v.to_vec()),
            Const::Bool(v, _) => HostValue::Bool(v.to_vec()),
            Const::Segdes(v, true) => HostValue::Segdes(v.to_vec()),
            Const::Segdes(v, false) => HostValue::Segdes(vec![v.first().copied().unwrap_or(0)]),
            Const::Char(s) => HostValue::Int(s.chars().map(|c| c as i64).collect()),
            Const::Resident(_) => return None,
        })
    }
}
