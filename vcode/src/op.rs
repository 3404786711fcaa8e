//! The VCODE instruction set, defined once.
//!
//! Every instruction is one row of the `instruction_set!` table below: its spelling, the
//! type arguments it accepts, what follows it in the text (its immediate), its stack
//! effect and the operation it performs ([`Exec`]). The parser, the printer, the
//! verifier, the interpreter's decoder, the statistics and the superoperator language
//! all read this table; nothing else lists instructions.

use crate::cvl::{BinOp, ReduceOp, UnOp, VType};

/// A type name as written in VCODE (type arguments, `CONST`, type information).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ty {
    /// `INT`
    Int,
    /// `FLOAT`
    Float,
    /// `BOOL`
    Bool,
    /// `SEGDES`
    Segdes,
    /// `CHAR` (a type argument of `CONST` and I/O only; stored as `INT`)
    Char,
}

impl From<VType> for Ty {
    /// The type keyword of a data vector's element type.
    fn from(t: VType) -> Ty {
        match t {
            VType::Int => Ty::Int,
            VType::Float => Ty::Float,
            VType::Bool => Ty::Bool,
        }
    }
}

impl Ty {
    /// The VCODE spelling.
    pub fn name(self) -> &'static str {
        match self {
            Ty::Int => "INT",
            Ty::Float => "FLOAT",
            Ty::Bool => "BOOL",
            Ty::Segdes => "SEGDES",
            Ty::Char => "CHAR",
        }
    }
    /// Parses a type keyword.
    pub fn from_name(s: &str) -> Option<Ty> {
        Some(match s {
            "INT" => Ty::Int,
            "FLOAT" => Ty::Float,
            "BOOL" => Ty::Bool,
            "SEGDES" => Ty::Segdes,
            "CHAR" => Ty::Char,
            _ => return None,
        })
    }
    /// The run-time slot kind of a value of this type (`CHAR` is stored as `INT`).
    pub fn slot(self) -> SlotTy {
        match self {
            Ty::Int | Ty::Char => SlotTy::Vec(VType::Int),
            Ty::Float => SlotTy::Vec(VType::Float),
            Ty::Bool => SlotTy::Vec(VType::Bool),
            Ty::Segdes => SlotTy::Segdes,
        }
    }
    /// The element type for a data type (`None` for `SEGDES`).
    pub fn vtype(self) -> Option<VType> {
        match self.slot() {
            SlotTy::Vec(t) => Some(t),
            SlotTy::Segdes => None,
        }
    }
}

/// What a stack slot holds, as far as types go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SlotTy {
    /// A data vector of this element type.
    Vec(VType),
    /// A segment descriptor.
    Segdes,
}

impl SlotTy {
    /// The VCODE spelling (`INT`, `FLOAT`, `BOOL`, `SEGDES`).
    pub fn name(self) -> &'static str {
        match self {
            SlotTy::Vec(t) => t.name(),
            SlotTy::Segdes => "SEGDES",
        }
    }
}

/// One slot in a stack-effect pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pat {
    /// The instruction's type argument.
    T,
    /// An `INT` vector.
    I,
    /// A `FLOAT` vector.
    F,
    /// A `BOOL` vector.
    B,
    /// A segment descriptor.
    S,
}

impl Pat {
    /// The slot type this pattern denotes, given the instruction's type argument.
    #[inline]
    pub fn resolve(self, ty: Option<Ty>) -> Option<SlotTy> {
        Some(match self {
            Pat::T => return ty.map(Ty::slot),
            Pat::I => SlotTy::Vec(VType::Int),
            Pat::F => SlotTy::Vec(VType::Float),
            Pat::B => SlotTy::Vec(VType::Bool),
            Pat::S => SlotTy::Segdes,
        })
    }
}

/// The stack effect of an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Pops the `inputs` (deepest first) and pushes the `outputs` (last on top).
    Fixed(&'static [Pat], &'static [Pat]),
    /// Depends on the immediate or on control flow (stack ops, `CALL`, `IF`, `CONST`, ...).
    Special,
}

/// What follows the instruction name in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImmKind {
    /// Nothing (apart from the type argument, if the instruction takes one).
    None,
    /// Two non-negative integers (`COPY n d`, `POP n d`, `CPOP n d`).
    Counts,
    /// A function name (`CALL f`).
    Label,
    /// A constant (`CONST ...`).
    Const,
    /// A non-negative integer (`FUSED n`).
    Index,
}

/// The operation an instruction performs (its CVL call, or its interpreter action).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exec {
    /// Binary element-wise operation.
    Binary(BinOp),
    /// Unary element-wise operation or conversion.
    Unary(UnOp),
    /// `SELECT`.
    Select,
    /// `RAND`.
    Rand,
    /// Segmented exclusive scan.
    Scan(ReduceOp),
    /// Segmented reduction.
    Reduce(ReduceOp),
    /// `PERMUTE`.
    Permute,
    /// `DPERMUTE`.
    DPermute,
    /// `FPERMUTE`.
    FPermute,
    /// `BPERMUTE`.
    BPermute,
    /// `BFPERMUTE`.
    BfPermute,
    /// `DFPERMUTE`.
    DfPermute,
    /// `EXTRACT`.
    Extract,
    /// `REPLACE`.
    Replace,
    /// `DIST`.
    Dist,
    /// `INDEX`.
    Index,
    /// `RANK_UP` (`true`) / `RANK_DOWN`.
    Rank(bool),
    /// `PACK`.
    Pack,
    /// `LENGTH`.
    Length,
    /// `MAKE_SEGDES`.
    MakeSegdes,
    /// `LENGTHS`.
    Lengths,
    /// `COPY n d`.
    Copy,
    /// `POP n d`.
    Pop,
    /// `CPOP n d`.
    Cpop,
    /// `PAIR`.
    Pair,
    /// `UNPAIR`.
    Unpair,
    /// `CALL f`.
    Call,
    /// `RET`.
    Ret,
    /// `IF`.
    If,
    /// `ELSE`.
    Else,
    /// `ENDIF`.
    EndIf,
    /// `CONST ...`.
    Const,
    /// `EXIT`.
    Exit,
    /// `START_TIMER`.
    StartTimer,
    /// `STOP_TIMER`.
    StopTimer,
    /// `SRAND`.
    Srand,
    /// `READ T`.
    Read,
    /// `WRITE T`.
    Write,
    /// `FOPEN`.
    Fopen,
    /// `FCLOSE`.
    Fclose,
    /// `FREAD T`.
    Fread,
    /// `FREAD_CHAR`.
    FreadChar,
    /// `FWRITE T`.
    Fwrite,
    /// `SPAWN`.
    Spawn,
    /// `GETENV` (extension, not CMU VCODE).
    Getenv,
    /// `SHELL` (extension, not CMU VCODE).
    Shell,
    /// `DISPLAY` (extension, not CMU VCODE): requests to the graphics display.
    Display,
    /// `FUSED n` (FCODE).
    Fused,
}

impl Exec {
    /// The family name used by `--stats`.
    pub fn family(self) -> &'static str {
        match self {
            Exec::Binary(_) | Exec::Unary(_) | Exec::Select | Exec::Rand => "elementwise",
            Exec::Scan(_) => "scan",
            Exec::Reduce(_) => "reduce",
            Exec::Permute
            | Exec::DPermute
            | Exec::FPermute
            | Exec::BPermute
            | Exec::BfPermute
            | Exec::DfPermute => "permute",
            Exec::Extract | Exec::Replace | Exec::Dist | Exec::Index => "vector-scalar",
            Exec::Rank(_) => "rank",
            Exec::Pack => "pack",
            Exec::Length | Exec::MakeSegdes | Exec::Lengths => "segdes",
            Exec::Copy | Exec::Pop | Exec::Cpop | Exec::Pair | Exec::Unpair => "stack",
            Exec::Call | Exec::Ret | Exec::If | Exec::Else | Exec::EndIf | Exec::Exit => {
                "control"
            }
            Exec::Const => "const",
            Exec::Fused => "fused",
            _ => "io",
        }
    }
}

/// One row of the instruction table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpInfo {
    /// The spelling in VCODE text.
    pub name: &'static str,
    /// Accepted type arguments; empty when the instruction takes none.
    pub types: &'static [Ty],
    /// What follows the name (after the type argument).
    pub imm: ImmKind,
    /// Stack effect.
    pub effect: Effect,
    /// The operation.
    pub exec: Exec,
}

macro_rules! instruction_set {
    ($( $var:ident $name:literal [$($t:ident)*] $imm:ident ($($eff:tt)*) $exec:expr; )*) => {
        /// A VCODE instruction (see [`Opcode::info`] for its table row).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[allow(missing_docs)]
        pub enum Opcode { $($var),* }

        /// Every opcode, in table order.
        pub const OPCODES: &[Opcode] = &[$(Opcode::$var),*];

        static TABLE: &[OpInfo] = &[$(OpInfo {
            name: $name,
            types: &[$(Ty::$t),*],
            imm: ImmKind::$imm,
            effect: instruction_set!(@eff $($eff)*),
            exec: $exec,
        }),*];

        impl Opcode {
            /// This instruction's row of the table.
            pub fn info(self) -> &'static OpInfo {
                &TABLE[self as usize]
            }
            /// The opcode spelled `name`, if any.
            pub fn from_name(name: &str) -> Option<Opcode> {
                match name {
                    $($name => Some(Opcode::$var),)*
                    _ => None,
                }
            }
        }
    };
    (@eff special) => { Effect::Special };
    (@eff [$($i:ident)*] -> [$($o:ident)*]) => { Effect::Fixed(&[$(Pat::$i),*], &[$(Pat::$o),*]) };
}

use BinOp as Bo;
use ReduceOp as Ro;
use UnOp as Uo;

instruction_set! {
    Add "+" [Int Float] None ([T T] -> [T]) Exec::Binary(Bo::Add);
    Sub "-" [Int Float] None ([T T] -> [T]) Exec::Binary(Bo::Sub);
    Mul "*" [Int Float] None ([T T] -> [T]) Exec::Binary(Bo::Mul);
    Div "/" [Int Float] None ([T T] -> [T]) Exec::Binary(Bo::Div);
    Mod "%" [] None ([I I] -> [I]) Exec::Binary(Bo::Mod);
    Lt "<" [Int Float] None ([T T] -> [B]) Exec::Binary(Bo::Lt);
    Le "<=" [Int Float] None ([T T] -> [B]) Exec::Binary(Bo::Le);
    Gt ">" [Int Float] None ([T T] -> [B]) Exec::Binary(Bo::Gt);
    Ge ">=" [Int Float] None ([T T] -> [B]) Exec::Binary(Bo::Ge);
    Eq "=" [Int Float] None ([T T] -> [B]) Exec::Binary(Bo::Eq);
    Ne "!=" [Int Float] None ([T T] -> [B]) Exec::Binary(Bo::Ne);
    Lshift "LSHIFT" [] None ([I I] -> [I]) Exec::Binary(Bo::Lshift);
    Rshift "RSHIFT" [] None ([I I] -> [I]) Exec::Binary(Bo::Rshift);
    Not "NOT" [Int Bool] None ([T] -> [T]) Exec::Unary(Uo::Not);
    And "AND" [Int Bool] None ([T T] -> [T]) Exec::Binary(Bo::And);
    Or "OR" [Int Bool] None ([T T] -> [T]) Exec::Binary(Bo::Or);
    Xor "XOR" [Int Bool] None ([T T] -> [T]) Exec::Binary(Bo::Xor);
    Select "SELECT" [Int Bool Float] None ([B T T] -> [T]) Exec::Select;
    Rand "RAND" [] None ([I] -> [I]) Exec::Rand;
    Floor "FLOOR" [] None ([F] -> [I]) Exec::Unary(Uo::Floor);
    Ceil "CEIL" [] None ([F] -> [I]) Exec::Unary(Uo::Ceil);
    Trunc "TRUNC" [] None ([F] -> [I]) Exec::Unary(Uo::Trunc);
    Round "ROUND" [] None ([F] -> [I]) Exec::Unary(Uo::Round);
    IToF "I_TO_F" [] None ([I] -> [F]) Exec::Unary(Uo::IToF);
    IToB "I_TO_B" [] None ([I] -> [B]) Exec::Unary(Uo::IToB);
    BToI "B_TO_I" [] None ([B] -> [I]) Exec::Unary(Uo::BToI);
    Log "LOG" [] None ([F] -> [F]) Exec::Unary(Uo::Log);
    Sqrt "SQRT" [] None ([F] -> [F]) Exec::Unary(Uo::Sqrt);
    Exp "EXP" [] None ([F] -> [F]) Exec::Unary(Uo::Exp);
    Sin "SIN" [] None ([F] -> [F]) Exec::Unary(Uo::Sin);
    Cos "COS" [] None ([F] -> [F]) Exec::Unary(Uo::Cos);
    Tan "TAN" [] None ([F] -> [F]) Exec::Unary(Uo::Tan);
    Asin "ASIN" [] None ([F] -> [F]) Exec::Unary(Uo::Asin);
    Acos "ACOS" [] None ([F] -> [F]) Exec::Unary(Uo::Acos);
    Atan "ATAN" [] None ([F] -> [F]) Exec::Unary(Uo::Atan);
    Sinh "SINH" [] None ([F] -> [F]) Exec::Unary(Uo::Sinh);
    Cosh "COSH" [] None ([F] -> [F]) Exec::Unary(Uo::Cosh);
    Tanh "TANH" [] None ([F] -> [F]) Exec::Unary(Uo::Tanh);
    AddScan "+_SCAN" [Int Float] None ([T S] -> [T]) Exec::Scan(Ro::Add);
    MulScan "*_SCAN" [Int Float] None ([T S] -> [T]) Exec::Scan(Ro::Mul);
    MaxScan "MAX_SCAN" [Int Float] None ([T S] -> [T]) Exec::Scan(Ro::Max);
    MinScan "MIN_SCAN" [Int Float] None ([T S] -> [T]) Exec::Scan(Ro::Min);
    AndScan "AND_SCAN" [Int Bool] None ([T S] -> [T]) Exec::Scan(Ro::And);
    OrScan "OR_SCAN" [Int Bool] None ([T S] -> [T]) Exec::Scan(Ro::Or);
    XorScan "XOR_SCAN" [Int Bool] None ([T S] -> [T]) Exec::Scan(Ro::Xor);
    AddReduce "+_REDUCE" [Int Float] None ([T S] -> [T]) Exec::Reduce(Ro::Add);
    MulReduce "*_REDUCE" [Int Float] None ([T S] -> [T]) Exec::Reduce(Ro::Mul);
    MaxReduce "MAX_REDUCE" [Int Float] None ([T S] -> [T]) Exec::Reduce(Ro::Max);
    MinReduce "MIN_REDUCE" [Int Float] None ([T S] -> [T]) Exec::Reduce(Ro::Min);
    AndReduce "AND_REDUCE" [Int Bool] None ([T S] -> [T]) Exec::Reduce(Ro::And);
    OrReduce "OR_REDUCE" [Int Bool] None ([T S] -> [T]) Exec::Reduce(Ro::Or);
    XorReduce "XOR_REDUCE" [Int Bool] None ([T S] -> [T]) Exec::Reduce(Ro::Xor);
    Permute "PERMUTE" [Int Bool Float] None ([T I S] -> [T]) Exec::Permute;
    DPermute "DPERMUTE" [Int Bool Float] None ([T I T S S] -> [T]) Exec::DPermute;
    FPermute "FPERMUTE" [Int Bool Float] None ([T I B S S] -> [T]) Exec::FPermute;
    BPermute "BPERMUTE" [Int Bool Float] None ([T I S S] -> [T]) Exec::BPermute;
    BfPermute "BFPERMUTE" [Int Bool Float] None ([T I B S S] -> [T]) Exec::BfPermute;
    DfPermute "DFPERMUTE" [Int Bool Float] None ([T I B T S S] -> [T]) Exec::DfPermute;
    Extract "EXTRACT" [Int Bool Float] None ([T I S] -> [T]) Exec::Extract;
    Replace "REPLACE" [Int Bool Float] None ([T I T S] -> [T]) Exec::Replace;
    Dist "DIST" [Int Bool Float] None ([T S] -> [T]) Exec::Dist;
    Index "INDEX" [] None ([I I S] -> [I]) Exec::Index;
    RankUp "RANK_UP" [Int Float] None ([T S] -> [I]) Exec::Rank(true);
    RankDown "RANK_DOWN" [Int Float] None ([T S] -> [I]) Exec::Rank(false);
    Pack "PACK" [Int Bool Float] None ([T B S] -> [T S]) Exec::Pack;
    Length "LENGTH" [Int Bool Float] None ([T] -> [I]) Exec::Length;
    MakeSegdes "MAKE_SEGDES" [] None ([I] -> [S]) Exec::MakeSegdes;
    Lengths "LENGTHS" [] None ([S] -> [I]) Exec::Lengths;
    Copy "COPY" [] Counts (special) Exec::Copy;
    Pop "POP" [] Counts (special) Exec::Pop;
    Cpop "CPOP" [] Counts (special) Exec::Cpop;
    Pair "PAIR" [] None (special) Exec::Pair;
    Unpair "UNPAIR" [] None (special) Exec::Unpair;
    Call "CALL" [] Label (special) Exec::Call;
    Ret "RET" [] None (special) Exec::Ret;
    If "IF" [] None (special) Exec::If;
    Else "ELSE" [] None (special) Exec::Else;
    EndIf "ENDIF" [] None (special) Exec::EndIf;
    Const "CONST" [] Const (special) Exec::Const;
    Exit "EXIT" [] None (special) Exec::Exit;
    StartTimer "START_TIMER" [] None ([] -> []) Exec::StartTimer;
    StopTimer "STOP_TIMER" [] None ([] -> [F]) Exec::StopTimer;
    Srand "SRAND" [Int] None ([I] -> [B]) Exec::Srand;
    Read "READ" [Int Bool Float Segdes Char] None ([] -> [T I B]) Exec::Read;
    Write "WRITE" [Int Bool Float Segdes Char] None ([T] -> [I B]) Exec::Write;
    Fopen "FOPEN" [] None ([I I] -> [I I B]) Exec::Fopen;
    Fclose "FCLOSE" [] None ([I] -> [I B]) Exec::Fclose;
    Fread "FREAD" [Int Bool Float Segdes Char] None ([I] -> [T I B]) Exec::Fread;
    FreadChar "FREAD_CHAR" [] None ([I I I] -> [I I I B]) Exec::FreadChar;
    Fwrite "FWRITE" [Int Bool Float Segdes Char] None ([T I] -> [I B]) Exec::Fwrite;
    Spawn "SPAWN" [] None ([I I I I] -> [I I I I B]) Exec::Spawn;
    // Extensions (not CMU VCODE instructions): CMU NESL reads environment variables
    // and runs shell commands in its Lisp front end, so VCODE never had them.
    // `GETENV`: name (INT char codes) -> value err msg ok; an unset variable is the
    // empty string. `SHELL`: command (split on blanks, searched in PATH), input (INT
    // char codes) -> output err msg ok; the child reads `input` on its standard input
    // and what it writes to its standard output is the result.
    Getenv "GETENV" [] None ([I] -> [I I B]) Exec::Getenv;
    Shell "SHELL" [] None ([I I] -> [I I B]) Exec::Shell;
    // `DISPLAY` (extension): requests to the graphics display that the driver installed
    // (`vcode::display`), CMU's plotting process in one instruction. Inputs: one request
    // code per instance (INT), the instances' integer arguments (INT) and their
    // segment descriptor; outputs: the answers (INT) and their segment descriptor, then
    // err msg ok. Requests run in instance order.
    Display "DISPLAY" [] None ([I I S] -> [I S I B]) Exec::Display;
    Fused "FUSED" [] Index (special) Exec::Fused;
}

/// Words that are reserved and can never name a function.
pub fn is_reserved(word: &str) -> bool {
    Opcode::from_name(word).is_some()
        || Ty::from_name(word).is_some()
        || matches!(
            word,
            "FUNC" | "T" | "F" | "I" | "O" | "STDIN" | "STDOUT" | "STDERR" | "NULL_STREAM"
                | "SUPEROP"
        )
}

/// The operand types an element-wise instruction accepts: its type arguments, or the
/// fixed type of its first input when it takes none.
pub fn operand_types(op: Opcode) -> Vec<VType> {
    operand_type_list(op).collect()
}

/// Whether `ty` is among [`operand_types`] of `op` (asked at every element-wise
/// operation, so without building the list).
pub fn accepts_operand_type(op: Opcode, ty: VType) -> bool {
    operand_type_list(op).any(|t| t == ty)
}

fn operand_type_list(op: Opcode) -> impl Iterator<Item = VType> {
    let info = op.info();
    let fixed = match info.effect {
        Effect::Fixed(ins, _) if info.types.is_empty() => match ins.last().and_then(|p| p.resolve(None)) {
            Some(SlotTy::Vec(t)) => Some(t),
            _ => None,
        },
        _ => None,
    };
    info.types.iter().filter_map(|t| t.vtype()).chain(fixed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_round_trip() {
        for &op in OPCODES {
            assert_eq!(Opcode::from_name(op.info().name), Some(op));
        }
    }
}
