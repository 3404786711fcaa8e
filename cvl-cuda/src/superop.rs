//! Superoperators on CUDA: each FCODE superoperator becomes one generated kernel that
//! reads every argument once and writes the result once, with no intermediate vectors.
//!
//! [`kernel_source`] turns a [`SuperOp`] into CUDA C (one `extern "C"` kernel, compiled
//! after the `kernels` crate's common header); `CudaCvl::fused` compiles it with NVRTC the
//! first time it is seen (cached in memory and on disk by a hash of the text), loads it and
//! launches it. The C expressions follow the element-wise kernels of `elementwise.cu`
//! (wrapping integers, `--fmad=false`, the CPU's MAX/MIN and conversions).

use vcode::cvl::{BinOp, UnOp};
use vcode::fused::{Expr, SuperOp};
use vcode::{HostScalar, Trap, Ty, VType};

use crate::compile;
use crate::device::Arg::{I, P};
use crate::ops::{binop_kernel, unop_kernel};
use crate::{CudaCvl, CudaVector, KernelLoader};

fn cty(t: VType) -> &'static str {
    match t {
        VType::Int => "i64",
        VType::Float => "double",
        VType::Bool => "b8",
    }
}

fn param_vtype(t: Ty) -> Option<VType> {
    match t {
        Ty::Int | Ty::Char => Some(VType::Int),
        Ty::Float => Some(VType::Float),
        Ty::Bool => Some(VType::Bool),
        Ty::Segdes => None,
    }
}

/// A generated kernel: its name, its full CUDA C text (common header included), its result
/// type and whether it may report an error (integer division).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuperKernel {
    /// The `extern "C"` kernel name (`superop_<hash>`).
    pub name: String,
    /// The complete compilable text.
    pub text: String,
    /// Element type of the result.
    pub result: VType,
    /// True when the kernel may report a division by zero.
    pub may_trap: bool,
}

struct Gen {
    body: String,
    next: usize,
    may_trap: bool,
}

fn bad(msg: String) -> Trap {
    Trap::ty(format!("superoperator: {msg}"))
}

impl Gen {
    fn temp(&mut self, t: VType, expr: String) -> (String, VType) {
        let name = format!("t{}", self.next);
        self.next += 1;
        self.body
            .push_str(&format!("        {} {name} = {expr};\n", cty(t)));
        (name, t)
    }

    fn expr(&mut self, e: &Expr, params: &[Ty]) -> Result<(String, VType), Trap> {
        Ok(match e {
            Expr::Arg(i) => {
                let t = params
                    .get(*i)
                    .and_then(|t| param_vtype(*t))
                    .ok_or_else(|| bad(format!("${i} is not a data parameter")))?;
                (format!("x{i}"), t)
            }
            Expr::Const(c) => match *c {
                HostScalar::Int(x) => (format!("((i64){:#x}ull)", x as u64), VType::Int),
                HostScalar::Float(x) => (
                    format!("__longlong_as_double((i64){:#x}ull)", x.to_bits()),
                    VType::Float,
                ),
                HostScalar::Bool(b) => (format!("((b8){})", u8::from(b)), VType::Bool),
            },
            Expr::Binary { op, ty, a, b } => {
                let (x, tx) = self.expr(a, params)?;
                let (y, ty2) = self.expr(b, params)?;
                if tx != *ty || ty2 != *ty {
                    return Err(bad(format!(
                        "`{}` on {} has operands {} and {}",
                        vcode::fused::binop_name(*op),
                        ty.name(),
                        tx.name(),
                        ty2.name()
                    )));
                }
                let (_, rt, _) = binop_kernel(*op, *ty).ok_or_else(|| {
                    bad(format!(
                        "`{}` is not defined on {}",
                        vcode::fused::binop_name(*op),
                        ty.name()
                    ))
                })?;
                // This operation's number in evaluation order: the temporaries are
                // numbered the same way (one per operation, after its operands).
                let part = self.next;
                let c = binop_c(*op, *ty, &x, &y, part);
                if matches!((op, ty), (BinOp::Div | BinOp::Mod, VType::Int)) {
                    self.may_trap = true;
                }
                self.temp(rt, c)
            }
            Expr::Unary { op, ty, a } => {
                let (x, tx) = self.expr(a, params)?;
                if tx != *ty {
                    return Err(bad(format!(
                        "unary operand is {}, expected {}",
                        tx.name(),
                        ty.name()
                    )));
                }
                let (_, rt) = unop_kernel(*op, *ty).ok_or_else(|| {
                    bad(format!(
                        "`{}` is not defined on {}",
                        vcode::fused::unop_name(*op),
                        ty.name()
                    ))
                })?;
                let c = unop_c(*op, *ty, &x);
                self.temp(rt, c)
            }
            Expr::Select { ty, f, a, b } => {
                let (cf, tf) = self.expr(f, params)?;
                let (x, tx) = self.expr(a, params)?;
                let (y, ty2) = self.expr(b, params)?;
                if tf != VType::Bool || tx != *ty || ty2 != *ty {
                    return Err(bad("SELECT operands have the wrong types".into()));
                }
                self.temp(*ty, format!("{cf} ? {x} : {y}"))
            }
        })
    }
}

/// The C expression of a binary operation; `part` is its number in the superoperator's
/// evaluation order, which a division by zero reports (`sdiv`, `smod`).
fn binop_c(op: BinOp, ty: VType, x: &str, y: &str, part: usize) -> String {
    use BinOp::*;
    match (op, ty) {
        (Add, VType::Int) => format!("wadd({x}, {y})"),
        (Sub, VType::Int) => format!("wsub({x}, {y})"),
        (Mul, VType::Int) => format!("wmul({x}, {y})"),
        (Div, VType::Int) => format!("sdiv({x}, {y}, err, p, {part})"),
        (Mod, VType::Int) => format!("smod({x}, {y}, err, p, {part})"),
        (Lshift, _) => format!("ishl({x}, {y})"),
        (Rshift, _) => format!("ishr({x}, {y})"),
        (Add, _) => format!("{x} + {y}"),
        (Sub, _) => format!("{x} - {y}"),
        (Mul, _) => format!("{x} * {y}"),
        (Div, _) | (Mod, _) => format!("{x} / {y}"),
        (Lt, _) => format!("(b8)({x} < {y})"),
        (Le, _) => format!("(b8)({x} <= {y})"),
        (Gt, _) => format!("(b8)({x} > {y})"),
        (Ge, _) => format!("(b8)({x} >= {y})"),
        (Eq, _) => format!("(b8)({x} == {y})"),
        (Ne, _) => format!("(b8)({x} != {y})"),
        (And, VType::Bool) => format!("(b8)({x} & {y})"),
        (Or, VType::Bool) => format!("(b8)({x} | {y})"),
        (Xor, VType::Bool) => format!("(b8)({x} ^ {y})"),
        (And, _) => format!("{x} & {y}"),
        (Or, _) => format!("{x} | {y}"),
        (Xor, _) => format!("{x} ^ {y}"),
        (Max, _) => format!("{y} > {x} ? {y} : {x}"),
        (Min, _) => format!("{y} < {x} ? {y} : {x}"),
    }
}

fn unop_c(op: UnOp, ty: VType, x: &str) -> String {
    use UnOp::*;
    match op {
        Not if ty == VType::Bool => format!("(b8)({x} == 0)"),
        Not => format!("~{x}"),
        Floor => format!("__double2ll_rd({x})"),
        Ceil => format!("__double2ll_ru({x})"),
        Trunc => format!("__double2ll_rz({x})"),
        Round => format!("__double2ll_rz({x} + 0.5)"),
        IToF => format!("(double){x}"),
        IToB => format!("(b8)({x} != 0)"),
        BToI => format!("(i64)({x} != 0)"),
        Log => format!("log({x})"),
        Sqrt => format!("sqrt({x})"),
        Exp => format!("exp({x})"),
        Sin => format!("sin({x})"),
        Cos => format!("cos({x})"),
        Tan => format!("tan({x})"),
        Asin => format!("asin({x})"),
        Acos => format!("acos({x})"),
        Atan => format!("atan({x})"),
        Sinh => format!("sinh({x})"),
        Cosh => format!("cosh({x})"),
        Tanh => format!("tanh({x})"),
    }
}

/// The kernels a superoperator runs: that of its tree ([`kernel_source`]), then, when it
/// has a guard, that of the guard's tree.
pub fn kernel_sources(op: &SuperOp) -> Result<Vec<SuperKernel>, Trap> {
    let mut ks = vec![kernel_source(op)?];
    if let Some(g) = op.guard_op() {
        ks.push(kernel_source(&g.without_fold())?);
    }
    Ok(ks)
}

/// Generates the CUDA C kernel of a superoperator's element-wise tree (a fold, or a
/// guard, runs through the library's reduction after a kernel of its own tree). The
/// kernel takes one pointer per parameter (null for SEGDES parameters), the result
/// pointer, the length and the error mailbox: `(const T0* a0, ..., R* r, i64 n, i64* err)`.
pub fn kernel_source(op: &SuperOp) -> Result<SuperKernel, Trap> {
    if op.params.is_empty() {
        return Err(bad("a superoperator needs at least one parameter".into()));
    }
    let mut g = Gen {
        body: String::new(),
        next: 0,
        may_trap: false,
    };
    let (res, rt) = g.expr(&op.body, &op.params)?;
    let mut sig = String::new();
    let mut loads = String::new();
    for (i, t) in op.params.iter().enumerate() {
        match param_vtype(*t) {
            Some(vt) => {
                sig.push_str(&format!("const {}* __restrict__ a{i}, ", cty(vt)));
                loads.push_str(&format!("        {} x{i} = a{i}[p];\n", cty(vt)));
            }
            None => sig.push_str(&format!("const void* a{i}, ")),
        }
    }
    let code = format!(
        "(NAME)({sig}{rty}* __restrict__ r, i64 n, i64* err) {{\n    GRID_LOOP(p, n) {{\n{loads}{body}        r[p] = {res};\n    }}\n}}\n",
        rty = cty(rt),
        body = g.body
    );
    // 128 bits of SHA-256: distinct kernels never share a name.
    let name = format!("superop_{}", &compile::digest(code.as_bytes())[..32]);
    let mut text = compile::module_text("");
    text.push_str("extern \"C\" __global__ void ");
    text.push_str(&code.replacen("(NAME)", &name, 1));
    Ok(SuperKernel {
        name,
        text,
        result: rt,
        may_trap: g.may_trap,
    })
}

/// Compiles a superoperator's kernel for `arch` (e.g. `sm_90`) with NVRTC, through the
/// caches; needs no GPU. Returns the CUBIN's size.
pub fn compile_superop(op: &SuperOp, arch: &str) -> Result<usize, String> {
    let k = kernel_source(op).map_err(|e| e.to_string())?;
    compile::compile_cached(&k.name, &k.text, arch)
        .map(|(bin, _)| bin.len())
        .map_err(|e| e.to_string())
}

impl CudaCvl {
    /// Compiles (in parallel) and loads the kernels of a program's whole superoperator
    /// table, so that no compilation happens while it runs.
    pub fn prepare_superops(&mut self, ops: &[SuperOp]) -> Result<(), Trap> {
        self.kernel_loader().prepare_superops(ops)
    }
}

impl KernelLoader {
    /// [`CudaCvl::prepare_superops`] through a loader handle.
    pub fn prepare_superops(&self, ops: &[SuperOp]) -> Result<(), Trap> {
        let dev = &self.0;
        let mut kernels: Vec<SuperKernel> = Vec::new();
        for op in ops {
            kernels.extend(kernel_sources(op)?);
        }
        let arch = dev.arch().to_string();
        if !dev.is_gpu() {
            for k in &kernels {
                dev.load_module_text(&k.name, &k.text)?;
            }
            return Ok(());
        }
        std::thread::scope(|sc| {
            let jobs: Vec<_> = kernels
                .iter()
                .map(|k| {
                    let arch = &arch;
                    sc.spawn(move || compile::compile_cached(&k.name, &k.text, arch).map(|_| ()))
                })
                .collect();
            for j in jobs {
                match j.join() {
                    Ok(r) => r.map_err(|e| Trap::backend(e.to_string()))?,
                    Err(_) => return Err(Trap::backend("a kernel compilation thread panicked")),
                }
            }
            Ok(())
        })?;
        for k in &kernels {
            dev.load_module_text(&k.name, &k.text)?;
        }
        Ok(())
    }
}

impl CudaCvl {
    /// Compiles a superoperator's kernel now (normally done on its first use), so that an
    /// FCODE program's kernels are all built when it is loaded.
    pub fn prepare_superop(&mut self, op: &SuperOp) -> Result<(), Trap> {
        let k = kernel_source(op)?;
        self.load_superkernel(&k)
    }

    fn load_superkernel(&mut self, k: &SuperKernel) -> Result<(), Trap> {
        self.dev.load_module_text(&k.name, &k.text)
    }

    pub(crate) fn run_superop(
        &mut self,
        op: &SuperOp,
        args: &[Option<&CudaVector>],
        len: usize,
    ) -> Result<CudaVector, Trap> {
        if args.len() != op.params.len() {
            return Err(Trap::length(format!(
                "superoperator takes {} operands, got {}",
                op.params.len(),
                args.len()
            )));
        }
        let mut ptrs = Vec::with_capacity(args.len() + 3);
        for (i, (a, t)) in args.iter().zip(&op.params).enumerate() {
            match (a, param_vtype(*t)) {
                (Some(v), Some(vt)) => {
                    if v.0.ty != vt {
                        return Err(Trap::ty(format!(
                            "superoperator operand ${i} is {}, expected {}",
                            v.0.ty.name(),
                            vt.name()
                        )));
                    }
                    if v.0.len != len {
                        return Err(Trap::length(format!(
                            "superoperator operand ${i} has length {}, expected {len}",
                            v.0.len
                        )));
                    }
                    ptrs.push(P(v.0.buf.ptr()));
                }
                (None, None) => ptrs.push(P(0)),
                (Some(_), None) => ptrs.push(P(0)),
                (None, Some(_)) => {
                    return Err(Trap::ty(format!(
                        "superoperator operand ${i} is missing or a segment descriptor"
                    )))
                }
            }
        }
        let k = kernel_source(op)?;
        let out = self.new_vec(k.result, len)?;
        if len == 0 {
            return Ok(out);
        }
        self.load_superkernel(&k)?;
        ptrs.push(P(out.0.buf.ptr()));
        ptrs.push(I(len as i64));
        ptrs.push(P(self.dev.mailbox()));
        self.dev.launch_n(&k.name, len, &ptrs)?;
        if k.may_trap {
            self.check()?;
        }
        Ok(out)
    }
}
