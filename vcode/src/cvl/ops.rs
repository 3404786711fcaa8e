//! The CVL operation enums: which element-wise, unary and scan/reduce operator a call
//! performs. Shared by every vector library (and by the optimiser's superoperators).

/// Binary element-wise operators (`*_wu?` in CVL).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+` (INT wraps)
    Add,
    /// `-`
    Sub,
    /// `*` (INT wraps)
    Mul,
    /// `/` (INT truncates toward zero; divisor 0 traps)
    Div,
    /// `%` (INT, sign of the dividend; divisor 0 traps)
    Mod,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `=`
    Eq,
    /// `!=`
    Ne,
    /// `LSHIFT` (INT; count taken modulo 64)
    Lshift,
    /// `RSHIFT` (INT, arithmetic; count taken modulo 64)
    Rshift,
    /// `AND` (INT bitwise, BOOL logical)
    And,
    /// `OR`
    Or,
    /// `XOR`
    Xor,
    /// `max` (CVL `max_wu?`; not a VCODE instruction but used by superoperators)
    Max,
    /// `min`
    Min,
}

impl BinOp {
    /// True for the six comparisons (their result is `BOOL`).
    pub fn is_comparison(self) -> bool {
        matches!(self, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne)
    }
}

/// Unary element-wise operators and conversions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// `NOT` (INT bitwise complement, BOOL logical not)
    Not,
    /// `FLOOR` FLOAT -> INT
    Floor,
    /// `CEIL` FLOAT -> INT
    Ceil,
    /// `TRUNC` FLOAT -> INT
    Trunc,
    /// `ROUND` FLOAT -> INT, computed as `trunc(x + 0.5)` like the reference
    Round,
    /// `I_TO_F`
    IToF,
    /// `I_TO_B` (non-zero -> T)
    IToB,
    /// `B_TO_I`
    BToI,
    /// `LOG`
    Log,
    /// `SQRT`
    Sqrt,
    /// `EXP`
    Exp,
    /// `SIN`
    Sin,
    /// `COS`
    Cos,
    /// `TAN`
    Tan,
    /// `ASIN`
    Asin,
    /// `ACOS`
    Acos,
    /// `ATAN`
    Atan,
    /// `SINH`
    Sinh,
    /// `COSH`
    Cosh,
    /// `TANH`
    Tanh,
}

/// Operators of scans and reductions (`*_SCAN`, `*_REDUCE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// `+`, identity 0
    Add,
    /// `*`, identity 1
    Mul,
    /// max, identity `INT_MAX_IDENTITY` (-2147483648) / `-9.99999961690316e35` (the reference's float quirk)
    Max,
    /// min, identity 2147483647 / `+9.99999961690316e35`
    Min,
    /// and, identity all ones / T
    And,
    /// or, identity 0 / F
    Or,
    /// xor, identity 0 / F
    Xor,
}

/// The float identity of `MAX` (negated for `MIN`): `1.0e36` rounded through a C
/// `float`, as the reference serial CVL does.
pub const FLOAT_MAX_IDENTITY: f64 = -1.0e36_f32 as f64;

/// The int identity of `MAX` (`MIN` uses `-INT_MAX_IDENTITY - 1`): the reference's 32-bit
/// `INT_MIN`, so results print as CMU `vinterp` prints them. Identities are only produced
/// for empty segments and the first element of a scan, never combined with elements, so
/// 64-bit values outside the 32-bit range still reduce correctly.
pub const INT_MAX_IDENTITY: i64 = i32::MIN as i64;
