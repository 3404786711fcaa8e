//! Superoperators on CUDA: each FCODE superoperator becomes one generated module that
//! reads every argument once and writes only its results, with no intermediate vectors.
//!
//! [`kernel_source`] is the one generator of superoperator kernels: the CUDA backend runs
//! what it writes, and `nesl opt --emit-cuda` prints it ([`program_source`]). The tree is
//! evaluated once per element with common subexpressions computed once (the optimiser's
//! trees repeat shared subterms: Black-Scholes' `d1` appears dozens of times). By shape:
//!
//! * element-wise: `NAME(operands..., R* r, i64 n, i64* err)`, one result per element;
//! * guarded (a second result, the `OR_REDUCE` of a boolean tree): `NAME(operands..., R* r,
//!   b8* g, i64 n, i64* err)` writes the body and the guard's flag of every element in one
//!   pass, the library's OR reduction then folds the flags per segment;
//! * with further results (`SuperOp::more`), element-wise or guarded: a pointer per further
//!   result after `r` (`NAME(operands..., R* r, R1* r1, ..., [b8* g,] i64 n, i64* err)`),
//!   every result written in the same pass, their common subexpressions computed once;
//! * folding (a reduction or scan of the element-wise values): the library's scan
//!   templates (`kernels::SCAN_TEMPLATES`) over a generated source functor, so the values
//!   are computed as the tiles are loaded and never stored: `NAME_tiles` and `NAME_down`,
//!   the two per-tile phases of `scan.cuh`; the middle phases are the library's own.
//!
//! `CudaCvl` compiles a module the first time it is seen (cached in memory and on disk by a
//! hash of the text) and keeps the generated kernel of each table entry. The C expressions
//! follow the element-wise kernels of `elementwise.cu` (wrapping integers, `--fmad=false`,
//! the CPU's MAX/MIN and conversions).

use std::collections::HashMap;
use std::rc::Rc;

use vcode::cvl::ReduceOp;
use vcode::fused::{Expr, FoldKind, SuperOp};
use vcode::{HostScalar, Trap, Ty, VType};

use crate::compile;
use crate::device::Arg::{self, I, P};
use crate::ops::monoid;
use crate::semantics::{self, cty};
use crate::{CudaCvl, CudaSegdes, CudaVector, KernelLoader};

fn param_vtype(t: Ty) -> Option<VType> {
    match t {
        Ty::Int | Ty::Char => Some(VType::Int),
        Ty::Float => Some(VType::Float),
        Ty::Bool => Some(VType::Bool),
        Ty::Segdes => None,
    }
}

/// What a generated module computes (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// One result per element.
    Map,
    /// One result per element and one guard flag per element.
    Guarded,
    /// A reduction or scan of the element-wise values with the library monoid `suffix`
    /// (`add_d`, `ior_b`, ...: the scan kernels' suffix).
    Fold {
        /// Reduction or scan.
        kind: FoldKind,
        /// The combining operator.
        op: ReduceOp,
        /// The library scan kernels' suffix of the operator on the element type.
        suffix: &'static str,
    },
}

/// A generated superoperator module: its kernels' base name, its full CUDA C text (common
/// header and scan templates included), its result type and whether it may report an
/// error (integer division).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuperKernel {
    /// The base name (`superop_<hash>`): the kernel's name, or with `_tiles` / `_down` the
    /// two kernels of a fold.
    pub name: String,
    /// The kernels alone (what [`program_source`] concatenates).
    pub code: String,
    /// The complete compilable module text.
    pub text: String,
    /// Element type of the (body's) result.
    pub result: VType,
    /// Element types of the further results (`SuperOp::more`), in order.
    pub more: Vec<VType>,
    /// True when the kernel may report a division by zero.
    pub may_trap: bool,
    /// Which kernels the module has.
    pub shape: Shape,
}

impl SuperKernel {
    /// The kernels the module defines, by name.
    pub fn kernel_names(&self) -> Vec<String> {
        match self.shape {
            Shape::Fold { .. } => vec![format!("{}_tiles", self.name), format!("{}_down", self.name)],
            _ => vec![self.name.clone()],
        }
    }
}

struct Gen {
    body: String,
    /// Temporaries so far (`t0`, `t1`, ...).
    temps: usize,
    /// Operations visited so far, repeated ones included: the number of the next one in
    /// evaluation order (a division by zero reports it, as the CPU does).
    ops: usize,
    may_trap: bool,
    /// The temporary already holding each C expression (common subexpressions).
    seen: HashMap<(VType, String), String>,
}

fn bad(msg: String) -> Trap {
    Trap::ty(format!("superoperator: {msg}"))
}

impl Gen {
    fn new() -> Gen {
        Gen { body: String::new(), temps: 0, ops: 0, may_trap: false, seen: HashMap::new() }
    }

    /// The temporary holding `expr` (of type `t`): a new one, or the one that already
    /// holds the same expression. Counts one operation either way.
    fn temp(&mut self, t: VType, expr: String) -> (String, VType) {
        self.ops += 1;
        if let Some(name) = self.seen.get(&(t, expr.clone())) {
            return (name.clone(), t);
        }
        let name = format!("t{}", self.temps);
        self.temps += 1;
        self.body.push_str(&format!("        const {} {name} = {expr};\n", cty(t)));
        self.seen.insert((t, expr), name.clone());
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
                let row = semantics::binary(*op, *ty).ok_or_else(|| {
                    bad(format!(
                        "`{}` is not defined on {}",
                        vcode::fused::binop_name(*op),
                        ty.name()
                    ))
                })?;
                // This operation's number in evaluation order (after its operands). A
                // division's text holds it, so divisions are never shared.
                let part = self.ops.to_string();
                // Operands of a commutative operation in one order, so that `a*b` and
                // `b*a` are one subexpression.
                let (x, y) = if row.commutative && y < x { (y, x) } else { (x, y) };
                let c = semantics::expand(row.c, &x, &y, &part);
                if row.may_trap {
                    self.may_trap = true;
                }
                self.temp(row.result, c)
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
                let row = semantics::unary(*op, *ty).ok_or_else(|| {
                    bad(format!(
                        "`{}` is not defined on {}",
                        vcode::fused::unop_name(*op),
                        ty.name()
                    ))
                })?;
                self.temp(row.result, semantics::expand(row.c, &x, "", ""))
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

/// The loads of every data operand at element `p`, the evaluation, and the C expressions
/// of the body and (when present) the guard: one [`Gen`] for both, so they share their
/// common subexpressions.
struct Body {
    params: Vec<Option<VType>>,
    loads: String,
    eval: String,
    res: (String, VType),
    /// The further results' expressions.
    more: Vec<(String, VType)>,
    guard: Option<String>,
    may_trap: bool,
}

fn gen_body(op: &SuperOp) -> Result<Body, Trap> {
    if op.params.is_empty() {
        return Err(bad("a superoperator needs at least one parameter".into()));
    }
    let mut g = Gen::new();
    let res = g.expr(&op.body, &op.params)?;
    let more = op.more.iter().map(|e| g.expr(e, &op.params)).collect::<Result<Vec<_>, _>>()?;
    let guard = match &op.guard {
        Some(gd) => {
            let (c, t) = g.expr(&gd.cond, &op.params)?;
            if t != VType::Bool {
                return Err(bad(format!("the guard is {}, expected BOOL", t.name())));
            }
            Some(c)
        }
        None => None,
    };
    let params: Vec<Option<VType>> = op.params.iter().map(|t| param_vtype(*t)).collect();
    let mut loads = String::new();
    for (i, t) in params.iter().enumerate() {
        if let Some(vt) = t {
            loads.push_str(&format!("        const {} x{i} = a{i}[p];\n", cty(*vt)));
        }
    }
    Ok(Body { params, loads, eval: g.body, res, more, guard, may_trap: g.may_trap })
}

impl Body {
    /// The operand parameters of a kernel: one pointer per parameter (`const void*` for
    /// SEGDES ones, which are passed as null).
    fn signature(&self) -> String {
        self.params
            .iter()
            .enumerate()
            .map(|(i, t)| match t {
                Some(vt) => format!("const {}* __restrict__ a{i}, ", cty(*vt)),
                None => format!("const void* a{i}, "),
            })
            .collect()
    }
}

/// The library operator struct of a scan kernel suffix (`add_d` -> `OpAddD`, see
/// `scan.cuh`).
fn op_struct(suffix: &str) -> String {
    let (name, ty) = suffix.split_once('_').unwrap_or((suffix, ""));
    let mut cs = name.chars();
    let first = cs.next().map(|c| c.to_ascii_uppercase()).into_iter();
    format!("Op{}{}", first.chain(cs).collect::<String>(), ty.to_ascii_uppercase())
}

/// Generates the CUDA module of a superoperator (see the module documentation for the
/// kernels of each shape and their parameters).
pub fn kernel_source(op: &SuperOp) -> Result<SuperKernel, Trap> {
    if op.pack.is_some() {
        // The library runs the body and each flag tree (`SuperOp::parts`), then packs.
        return Err(bad("a superoperator with a pack runs as its element-wise parts".into()));
    }
    let b = gen_body(op)?;
    let sig = b.signature();
    let (res, rt) = (&b.res.0, b.res.1);
    let rty = cty(rt);
    if !b.more.is_empty() && op.fold.is_some() {
        return Err(bad("a superoperator with several results has no fold".into()));
    }
    // The further results' pointers (after `r`) and stores (after `r[p]`'s).
    let more_ptrs: String = b.more.iter().enumerate().map(|(i, (_, t))| format!("{}* __restrict__ r{}, ", cty(*t), i + 1)).collect();
    let more_stores: String = b.more.iter().enumerate().map(|(i, (e, _))| format!("        r{}[p] = {e};\n", i + 1)).collect();
    let (code, shape) = match (&op.fold, &b.guard) {
        (Some(_), Some(_)) => return Err(bad("a superoperator has both a fold and a guard".into())),
        (None, None) => (
            format!(
                "extern \"C\" __global__ void (NAME)({sig}{rty}* __restrict__ r, {more_ptrs}i64 n, i64* err) {{\n    GRID_LOOP(p, n) {{\n{}{}        r[p] = {res};\n{more_stores}    }}\n}}\n",
                b.loads, b.eval
            ),
            Shape::Map,
        ),
        (None, Some(gc)) => (
            format!(
                "extern \"C\" __global__ void (NAME)({sig}{rty}* __restrict__ r, {more_ptrs}b8* __restrict__ g, i64 n, i64* err) {{\n    GRID_LOOP(p, n) {{\n{}{}        r[p] = {res};\n{more_stores}        g[p] = {gc};\n    }}\n}}\n",
                b.loads, b.eval
            ),
            Shape::Guarded,
        ),
        (Some(f), None) => {
            if f.ty != rt {
                return Err(bad(format!("the fold is on {}, the tree gives {}", f.ty.name(), rt.name())));
            }
            let (suffix, _, _) = monoid(f.op, f.ty)?;
            let opn = op_struct(suffix);
            let mut members = String::new();
            let mut init = String::new();
            for (i, t) in b.params.iter().enumerate() {
                if let Some(vt) = t {
                    members.push_str(&format!("    const {}* __restrict__ a{i};\n", cty(*vt)));
                    init.push_str(&format!("a{i}, "));
                }
            }
            let code = format!(
                "struct (NAME)_src {{\n{members}    i64* err;\n    __device__ __forceinline__ {rty} operator()(i64 p) const {{\n{}{}        return {res};\n    }}\n}};\n\
                 extern \"C\" __global__ void __launch_bounds__(BLOCK) (NAME)_tiles({sig}const u32* keys, i64 n, {opn}::T* agg_v, u32* agg_k, i64* err) {{\n    scan_tiles<{opn}>((NAME)_src{{{init}err}}, keys, n, agg_v, agg_k);\n}}\n\
                 extern \"C\" __global__ void __launch_bounds__(BLOCK) (NAME)_down({sig}const u32* keys, i64 n, const {opn}::T* carry_v, const u32* carry_k, {opn}::Sout* out, int mode, i64* err) {{\n    scan_down<{opn}>((NAME)_src{{{init}err}}, keys, n, carry_v, carry_k, out, mode);\n}}\n",
                b.loads, b.eval
            );
            (code, Shape::Fold { kind: f.kind, op: f.op, suffix })
        }
    };
    // 128 bits of SHA-256: distinct kernels never share a name.
    let name = format!("superop_{}", &compile::digest(code.as_bytes())[..32]);
    let mut what = op.to_string();
    if let Some((cut, _)) = what.char_indices().nth(160) {
        what.truncate(cut);
        what.push_str(" ...");
    }
    let code = format!("// SUPEROP {what}\n{}", code.replace("(NAME)", &name));
    let text = compile::module_text(&format!("{}\n{code}", kernels::SCAN_TEMPLATES));
    let more = b.more.iter().map(|(_, t)| *t).collect();
    Ok(SuperKernel { name, code, text, result: rt, more, may_trap: b.may_trap, shape })
}

/// One compilable CUDA C text holding the kernels of a whole superoperator table (what
/// `nesl opt --emit-cuda` writes): the common header and scan templates once, then each
/// entry's kernels, the same text the CUDA backend compiles for it.
pub fn program_source(ops: &[SuperOp]) -> Result<String, Trap> {
    let mut out = String::from(
        "// Superoperator kernels, as the CUDA backend generates and runs them (cvl-cuda's\n\
         // superop module documents each shape's parameters). INT = i64 (wrapping),\n\
         // FLOAT = double, BOOL = b8 (0 or 1). Compile with NVRTC, --fmad=false.\n\n",
    );
    out.push_str(&compile::module_text(kernels::SCAN_TEMPLATES));
    let mut done: Vec<String> = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        for part in op.parts() {
            let k = kernel_source(&part).map_err(|t| bad(format!("SUPEROP {i}: {t}")))?;
            if done.contains(&k.name) {
                continue;
            }
            out.push_str(&format!("\n// table entry {i}\n{}", k.code));
            done.push(k.name);
        }
    }
    Ok(out)
}

/// Compiles a superoperator's module for `arch` (e.g. `sm_90`) with NVRTC, through the
/// caches; needs no GPU. Returns the CUBIN's size.
pub fn compile_superop(op: &SuperOp, arch: &str) -> Result<usize, String> {
    let mut size = 0;
    for part in op.parts() {
        let k = kernel_source(&part).map_err(|e| e.to_string())?;
        size += compile::compile_cached(&k.name, &k.text, arch).map(|(bin, _)| bin.len()).map_err(|e| e.to_string())?;
    }
    Ok(size)
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
        for part in ops.iter().flat_map(SuperOp::parts) {
            let k = kernel_source(&part)?;
            if !kernels.iter().any(|x| x.name == k.name) {
                kernels.push(k);
            }
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

/// The generated module of each superoperator a library has run, by the address of the
/// table entry (checked against the entry itself, so a table freed and another allocated
/// in its place never reuses a wrong kernel).
#[derive(Default)]
pub(crate) struct KernelMemo(HashMap<usize, Vec<(SuperOp, Rc<SuperKernel>)>>);

impl CudaCvl {
    /// The loaded module of `op`: generated, compiled and loaded on first use.
    fn superkernel(&mut self, op: &SuperOp) -> Result<Rc<SuperKernel>, Trap> {
        let key = op as *const SuperOp as usize;
        if let Some(v) = self.memo.0.get(&key) {
            if let Some((_, k)) = v.iter().find(|(o, _)| o == op) {
                return Ok(k.clone());
            }
        }
        let k = Rc::new(kernel_source(op)?);
        self.dev.load_module_text(&k.name, &k.text)?;
        let v = self.memo.0.entry(key).or_default();
        if v.len() >= 4 {
            v.remove(0);
        }
        v.push((op.clone(), k.clone()));
        Ok(k)
    }

    /// Compiles a superoperator's kernel now (normally done on its first use), so that an
    /// FCODE program's kernels are all built when it is loaded.
    pub fn prepare_superop(&mut self, op: &SuperOp) -> Result<(), Trap> {
        self.superkernel(op).map(|_| ())
    }

    /// The operand pointers of a launch, after checking each operand against its
    /// parameter (type, and length `len`).
    fn operand_args(op: &SuperOp, args: &[Option<&CudaVector>], len: usize) -> Result<Vec<Arg>, Trap> {
        if args.len() != op.params.len() {
            return Err(Trap::length(format!(
                "superoperator takes {} operands, got {}",
                op.params.len(),
                args.len()
            )));
        }
        let mut ptrs = Vec::with_capacity(args.len() + 8);
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
                (None, None) | (Some(_), None) => ptrs.push(P(0)),
                (None, Some(_)) => {
                    return Err(Trap::ty(format!(
                        "superoperator operand ${i} is missing or a segment descriptor"
                    )))
                }
            }
        }
        Ok(ptrs)
    }

    /// `FUSED` of an element-wise superoperator.
    pub(crate) fn run_superop(
        &mut self,
        op: &SuperOp,
        args: &[Option<&CudaVector>],
        len: usize,
    ) -> Result<CudaVector, Trap> {
        let mut ptrs = Self::operand_args(op, args, len)?;
        if let Some(r) = self.fused_on_host(op, args, len) {
            return r;
        }
        let k = self.superkernel(op)?;
        if k.shape != Shape::Map || !k.more.is_empty() {
            return Err(Trap::ty("superoperator is not element-wise with one result"));
        }
        let out = self.new_vec(k.result, len)?;
        if len == 0 {
            return Ok(out);
        }
        ptrs.push(P(out.0.buf.ptr()));
        ptrs.push(I(len as i64));
        ptrs.push(P(self.err_slot()));
        self.dev.launch_n(&k.name, len, &ptrs)?;
        if k.may_trap {
            self.check()?;
        }
        Ok(out)
    }

    /// `FUSED` of a guarded superoperator: body and flags in one pass, then the flags'
    /// OR per segment of `seg`.
    pub(crate) fn run_guarded(
        &mut self,
        op: &SuperOp,
        args: &[Option<&CudaVector>],
        seg: &CudaSegdes,
        len: usize,
    ) -> Result<(CudaVector, CudaVector), Trap> {
        let mut ptrs = Self::operand_args(op, args, len)?;
        let k = self.superkernel(op)?;
        if k.shape != Shape::Guarded || !k.more.is_empty() {
            return Err(Trap::ty("superoperator has no guard, or several results"));
        }
        let out = self.new_vec(k.result, len)?;
        let flags = self.new_vec(VType::Bool, len)?;
        if len > 0 {
            ptrs.push(P(out.0.buf.ptr()));
            ptrs.push(P(flags.0.buf.ptr()));
            ptrs.push(I(len as i64));
            ptrs.push(P(self.err_slot()));
            self.dev.launch_n(&k.name, len, &ptrs)?;
            if k.may_trap {
                self.check()?;
            }
        }
        let any = vcode::Cvl::reduce(self, ReduceOp::Or, &flags, seg)?;
        Ok((out, any))
    }

    /// `FUSED` of a superoperator with several results (and perhaps a guard, over `seg`):
    /// every result, then the guard's flags ORed per segment, from one pass.
    pub(crate) fn run_many(
        &mut self,
        op: &SuperOp,
        args: &[Option<&CudaVector>],
        seg: Option<&CudaSegdes>,
        len: usize,
    ) -> Result<Vec<CudaVector>, Trap> {
        let mut ptrs = Self::operand_args(op, args, len)?;
        let k = self.superkernel(op)?;
        let guarded = match (k.shape, seg) {
            (Shape::Map, _) => None,
            (Shape::Guarded, Some(seg)) => Some(seg),
            (Shape::Guarded, None) => return Err(Trap::ty("a guarded superoperator's descriptor is missing")),
            _ => return Err(Trap::ty("a folding superoperator has one result")),
        };
        let mut outs = vec![self.new_vec(k.result, len)?];
        for t in &k.more {
            outs.push(self.new_vec(*t, len)?);
        }
        let flags = match guarded {
            Some(_) => Some(self.new_vec(VType::Bool, len)?),
            None => None,
        };
        if len > 0 {
            ptrs.extend(outs.iter().map(|o| P(o.0.buf.ptr())));
            ptrs.extend(flags.iter().map(|f| P(f.0.buf.ptr())));
            ptrs.push(I(len as i64));
            ptrs.push(P(self.err_slot()));
            self.dev.launch_n(&k.name, len, &ptrs)?;
            if k.may_trap {
                self.check()?;
            }
        }
        if let (Some(f), Some(seg)) = (flags, guarded) {
            let any = vcode::Cvl::reduce(self, ReduceOp::Or, &f, seg)?;
            outs.push(any);
        }
        Ok(outs)
    }

    /// `FUSED` of a folding superoperator: its values reduced or scanned over the segments
    /// of `seg` as the scan kernels load them.
    pub(crate) fn run_fold(
        &mut self,
        op: &SuperOp,
        args: &[Option<&CudaVector>],
        seg: &CudaSegdes,
        len: usize,
    ) -> Result<CudaVector, Trap> {
        let ptrs = Self::operand_args(op, args, len)?;
        let k = self.superkernel(op)?;
        let Shape::Fold { kind, op: rop, .. } = k.shape else {
            return Err(Trap::ty("superoperator has no fold"));
        };
        let src = crate::ops::TileSrc::Fused {
            tiles: format!("{}_tiles", k.name),
            down: format!("{}_down", k.name),
            operands: ptrs,
            err: self.err_slot(),
        };
        let out = match kind {
            FoldKind::Reduce => self.reduce_from(rop, k.result, &src, seg)?,
            FoldKind::Scan => self.scan_from(rop, k.result, &src, seg)?,
        };
        if k.may_trap {
            self.check()?;
        }
        Ok(out)
    }
}
