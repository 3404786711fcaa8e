//! The one table of element-wise semantics: for every (operator, operand type) the CUDA C
//! expression, the result type, whether it may report an error and whether it commutes.
//!
//! Everything element-wise on the device is generated from it: the primitive kernels of
//! the `elementwise` module ([`elementwise_kernels`], one per row: `add_wuz`, `sqt_wud`,
//! ...), their launch table ([`binary`], [`unary`]: kernel name, result type, may-trap),
//! and the expressions of the superoperator kernels (`superop.rs`, also behind
//! `nesl opt --emit-cuda`). An expression names its operands `{x}` and `{y}`; integer `/`
//! and `%` also take `{part}`, the operation's number inside a superoperator (a primitive
//! kernel passes `NO_PART`), see `sdiv` in `kernels/cuda/common.cuh`.
//!
//! The expressions follow the CPU library bit for bit where IEEE and two's complement
//! allow it: wrapping integers, shifts by the count modulo 64, MAX/MIN that keep the first
//! operand on ties and NaN, saturating float-to-int conversions, BOOL results normalised
//! to 0/1; the math functions are CUDA's (within a few ulps of the C library).

use vcode::cvl::{BinOp, UnOp};
use vcode::VType;

use VType::{Bool as B, Float as F, Int as Z};

/// A binary operator on one operand type.
#[derive(Debug, Clone, Copy)]
pub struct Binary {
    /// The operator.
    pub op: BinOp,
    /// The operands' type.
    pub ty: VType,
    /// The primitive kernel's name (CVL style: `<op>_wu<type letter>`).
    pub kernel: &'static str,
    /// The result type.
    pub result: VType,
    /// The CUDA C expression of `{x}` and `{y}` (and `{part}`).
    pub c: &'static str,
    /// Whether it may report an error (integer division by zero).
    pub may_trap: bool,
    /// Whether `x op y` is `y op x` bit for bit (common subexpressions match either order).
    pub commutative: bool,
}

/// A unary operator on one operand type.
#[derive(Debug, Clone, Copy)]
pub struct Unary {
    /// The operator.
    pub op: UnOp,
    /// The operand's type.
    pub ty: VType,
    /// The primitive kernel's name.
    pub kernel: &'static str,
    /// The result type.
    pub result: VType,
    /// The CUDA C expression of `{x}`.
    pub c: &'static str,
}

const fn bin(op: BinOp, ty: VType, kernel: &'static str, result: VType, c: &'static str, may_trap: bool, commutative: bool) -> Binary {
    Binary { op, ty, kernel, result, c, may_trap, commutative }
}

const fn un(op: UnOp, ty: VType, kernel: &'static str, result: VType, c: &'static str) -> Unary {
    Unary { op, ty, kernel, result, c }
}

/// Every binary operator the device computes.
pub const BINARY: &[Binary] = {
    use BinOp::*;
    &[
        bin(Add, Z, "add_wuz", Z, "wadd({x}, {y})", false, true),
        bin(Sub, Z, "sub_wuz", Z, "wsub({x}, {y})", false, false),
        bin(Mul, Z, "mul_wuz", Z, "wmul({x}, {y})", false, true),
        bin(Div, Z, "div_wuz", Z, "sdiv({x}, {y}, err, p, {part})", true, false),
        bin(Mod, Z, "mod_wuz", Z, "smod({x}, {y}, err, p, {part})", true, false),
        bin(Lt, Z, "les_wuz", B, "(b8)({x} < {y})", false, false),
        bin(Le, Z, "leq_wuz", B, "(b8)({x} <= {y})", false, false),
        bin(Gt, Z, "grt_wuz", B, "(b8)({x} > {y})", false, false),
        bin(Ge, Z, "geq_wuz", B, "(b8)({x} >= {y})", false, false),
        bin(Eq, Z, "eql_wuz", B, "(b8)({x} == {y})", false, true),
        bin(Ne, Z, "neq_wuz", B, "(b8)({x} != {y})", false, true),
        bin(Lshift, Z, "lsh_wuz", Z, "ishl({x}, {y})", false, false),
        bin(Rshift, Z, "rsh_wuz", Z, "ishr({x}, {y})", false, false),
        bin(And, Z, "and_wuz", Z, "{x} & {y}", false, true),
        bin(Or, Z, "ior_wuz", Z, "{x} | {y}", false, true),
        bin(Xor, Z, "xor_wuz", Z, "{x} ^ {y}", false, true),
        bin(Max, Z, "max_wuz", Z, "{y} > {x} ? {y} : {x}", false, false),
        bin(Min, Z, "min_wuz", Z, "{y} < {x} ? {y} : {x}", false, false),
        bin(Add, F, "add_wud", F, "{x} + {y}", false, true),
        bin(Sub, F, "sub_wud", F, "{x} - {y}", false, false),
        bin(Mul, F, "mul_wud", F, "{x} * {y}", false, true),
        bin(Div, F, "div_wud", F, "{x} / {y}", false, false),
        bin(Lt, F, "les_wud", B, "(b8)({x} < {y})", false, false),
        bin(Le, F, "leq_wud", B, "(b8)({x} <= {y})", false, false),
        bin(Gt, F, "grt_wud", B, "(b8)({x} > {y})", false, false),
        bin(Ge, F, "geq_wud", B, "(b8)({x} >= {y})", false, false),
        bin(Eq, F, "eql_wud", B, "(b8)({x} == {y})", false, true),
        bin(Ne, F, "neq_wud", B, "(b8)({x} != {y})", false, true),
        bin(Max, F, "max_wud", F, "{y} > {x} ? {y} : {x}", false, false),
        bin(Min, F, "min_wud", F, "{y} < {x} ? {y} : {x}", false, false),
        bin(And, B, "and_wub", B, "(b8)(({x} != 0) & ({y} != 0))", false, true),
        bin(Or, B, "ior_wub", B, "(b8)(({x} != 0) | ({y} != 0))", false, true),
        bin(Xor, B, "xor_wub", B, "(b8)(({x} != 0) ^ ({y} != 0))", false, true),
        bin(Eq, B, "eql_wub", B, "(b8)(({x} != 0) == ({y} != 0))", false, true),
        bin(Ne, B, "neq_wub", B, "(b8)(({x} != 0) != ({y} != 0))", false, true),
    ]
};

/// Every unary operator the device computes.
pub const UNARY: &[Unary] = {
    use UnOp::*;
    &[
        un(Not, Z, "not_wuz", Z, "~{x}"),
        un(Not, B, "not_wub", B, "(b8)({x} == 0)"),
        // Float -> int conversions saturate and map NaN to 0 (the cvt.*.s64.f64 instructions).
        un(Floor, F, "flr_wud", Z, "__double2ll_rd({x})"),
        un(Ceil, F, "cei_wud", Z, "__double2ll_ru({x})"),
        un(Trunc, F, "trn_wud", Z, "__double2ll_rz({x})"),
        un(Round, F, "rou_wud", Z, "__double2ll_rz({x} + 0.5)"),
        un(IToF, Z, "dbl_wuz", F, "(double){x}"),
        un(IToB, Z, "boo_wuz", B, "(b8)({x} != 0)"),
        un(BToI, B, "int_wub", Z, "(i64)({x} != 0)"),
        un(Log, F, "log_wud", F, "log({x})"),
        un(Sqrt, F, "sqt_wud", F, "sqrt({x})"),
        un(Exp, F, "exp_wud", F, "exp({x})"),
        un(Sin, F, "sin_wud", F, "sin({x})"),
        un(Cos, F, "cos_wud", F, "cos({x})"),
        un(Tan, F, "tan_wud", F, "tan({x})"),
        un(Asin, F, "asn_wud", F, "asin({x})"),
        un(Acos, F, "acs_wud", F, "acos({x})"),
        un(Atan, F, "atn_wud", F, "atan({x})"),
        un(Sinh, F, "snh_wud", F, "sinh({x})"),
        un(Cosh, F, "csh_wud", F, "cosh({x})"),
        un(Tanh, F, "tnh_wud", F, "tanh({x})"),
    ]
};

/// The row of binary `op` on `ty` operands (`None`: not defined on that type).
pub fn binary(op: BinOp, ty: VType) -> Option<&'static Binary> {
    BINARY.iter().find(|r| r.op == op && r.ty == ty)
}

/// The row of unary `op` on a `ty` operand.
pub fn unary(op: UnOp, ty: VType) -> Option<&'static Unary> {
    UNARY.iter().find(|r| r.op == op && r.ty == ty)
}

/// The `{part}` of a primitive kernel: no superoperator operation (`report_part` ignores it).
const NO_PART: &str = "0x10000";

/// An expression with its operands (and operation number) filled in.
pub(crate) fn expand(c: &str, x: &str, y: &str, part: &str) -> String {
    c.replace("{x}", x).replace("{y}", y).replace("{part}", part)
}

/// The C type of a device element.
pub(crate) fn cty(t: VType) -> &'static str {
    match t {
        Z => "i64",
        F => "double",
        B => "b8",
    }
}

/// The primitive element-wise kernels, one per row of [`BINARY`] and [`UNARY`]: appended
/// to `kernels/cuda/elementwise.cu` to make the `elementwise` module.
pub fn elementwise_kernels() -> String {
    let mut s = String::from("\n// ----- generated from cvl-cuda's table of element-wise semantics -----\n");
    for r in BINARY {
        let (t, rt) = (cty(r.ty), cty(r.result));
        s.push_str(&format!(
            "extern \"C\" __global__ void {}(const {t}* __restrict__ a, const {t}* __restrict__ b, {rt}* __restrict__ r, i64 n, i64* err) {{\n    GRID_LOOP(p, n) {{ const {t} x = a[p]; const {t} y = b[p]; r[p] = {}; }}\n}}\n",
            r.kernel,
            expand(r.c, "x", "y", NO_PART)
        ));
    }
    for r in UNARY {
        let (t, rt) = (cty(r.ty), cty(r.result));
        s.push_str(&format!(
            "extern \"C\" __global__ void {}(const {t}* __restrict__ a, {rt}* __restrict__ r, i64 n) {{\n    GRID_LOOP(p, n) {{ const {t} x = a[p]; r[p] = {}; }}\n}}\n",
            r.kernel,
            expand(r.c, "x", "", NO_PART)
        ));
    }
    s
}

/// Every kernel module as `(name, source)`: the `kernels` crate's sources, the
/// `elementwise` one completed with [`elementwise_kernels`]. Each is compiled after the
/// common header ([`crate::compile::module_text`]).
pub fn modules() -> Vec<(&'static str, String)> {
    kernels::SOURCES
        .iter()
        .map(|(name, src)| {
            let mut text = src.to_string();
            if *name == "elementwise" {
                text.push_str(&elementwise_kernels());
            }
            (*name, text)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_unique_and_every_kernel_name_too() {
        for (i, r) in BINARY.iter().enumerate() {
            assert!(BINARY[..i].iter().all(|q| (q.op, q.ty) != (r.op, r.ty) && q.kernel != r.kernel), "{r:?}");
            assert!(r.c.contains("{x}") && r.c.contains("{y}"), "{r:?}");
            assert_eq!(r.may_trap, r.c.contains("{part}"), "{r:?}");
        }
        for (i, r) in UNARY.iter().enumerate() {
            assert!(UNARY[..i].iter().all(|q| (q.op, q.ty) != (r.op, r.ty) && q.kernel != r.kernel), "{r:?}");
            assert!(r.c.contains("{x}") && !r.c.contains("{y}"), "{r:?}");
        }
        let k = elementwise_kernels();
        for r in BINARY {
            assert_eq!(k.matches(&format!("void {}(", r.kernel)).count(), 1, "{}", r.kernel);
        }
        assert!(!k.contains('{') || !k.contains("{x}"), "placeholders left: {k}");
    }
}
