//! The `Cvl` trait: the one seam between the VCODE interpreter and the hardware.
//!
//! A vector library owns vector data behind two handle types (data vectors and segment
//! descriptors). Handles are cheap to clone (reference counted); dropping the last clone
//! frees the storage. Every operation is a pure function from input handles to new
//! handles (an implementation may reuse an input's storage when it holds the only
//! reference) and returns `Result<_, Trap>`: failures are values, never panics.
//!
//! Operations do not take the VCODE type argument: a vector handle knows its element
//! type ([`VType`]), and the library dispatches on it (returning a
//! [`TrapKind::TypeMismatch`](crate::TrapKind::TypeMismatch) trap for a type the
//! operation does not accept). Operands are given in VCODE order (operand 1 first).
//! Segmented operations take the segment descriptor(s) explicitly; indices are always
//! relative to the start of their segment. See `spec/cvl.md` sections 5-12.

pub mod check;
pub mod cpu;
pub mod ops;

pub use ops::{BinOp, ReduceOp, UnOp, FLOAT_MAX_IDENTITY, INT_MAX_IDENTITY};

use crate::fused::{Expr, FoldKind, SuperOp};
use crate::trap::Trap;

/// Element type of a data vector at run time (characters are `Int`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VType {
    /// 64-bit signed integer, wrapping arithmetic.
    Int,
    /// IEEE double.
    Float,
    /// Boolean.
    Bool,
}

impl VType {
    /// The VCODE spelling (`INT`, `FLOAT`, `BOOL`).
    pub fn name(self) -> &'static str {
        match self {
            VType::Int => "INT",
            VType::Float => "FLOAT",
            VType::Bool => "BOOL",
        }
    }
}

/// A data vector in host memory, used to move constants in and results out.
#[derive(Debug, Clone, PartialEq)]
pub enum HostVector {
    /// Integers (and character codes).
    Int(Vec<i64>),
    /// Doubles.
    Float(Vec<f64>),
    /// Booleans.
    Bool(Vec<bool>),
}

impl HostVector {
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            HostVector::Int(v) => v.len(),
            HostVector::Float(v) => v.len(),
            HostVector::Bool(v) => v.len(),
        }
    }
    /// True when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Keeps the first `n` elements.
    pub fn truncate(&mut self, n: usize) {
        match self {
            HostVector::Int(v) => v.truncate(n),
            HostVector::Float(v) => v.truncate(n),
            HostVector::Bool(v) => v.truncate(n),
        }
    }
    /// The element type.
    pub fn vtype(&self) -> VType {
        match self {
            HostVector::Int(_) => VType::Int,
            HostVector::Float(_) => VType::Float,
            HostVector::Bool(_) => VType::Bool,
        }
    }
}

/// Counters of the CVL operations a library ran: how many calls of each kind and how many
/// elements they touched (inputs plus outputs). Filled by the interpreter.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OpStats {
    /// `(kind, calls, elements)` in first-use order; `kind` is a CVL family name such as
    /// `elementwise`, `scan`, `reduce`, `permute`.
    pub rows: Vec<(String, u64, u64)>,
    /// VCODE instructions executed (every kind, stack shuffles and control included).
    pub instructions: u64,
    /// `(kind, round trips)`: the library's host round trips ([`Cvl::round_trips`]) by the
    /// family of the instruction that caused them (`control` for an `IF` reading its flag),
    /// in first-use order; kinds that caused none are absent.
    pub round_trips: Vec<(String, u64)>,
    /// `(calls, parts)`: the calls run in parts, one part per thread, and their parts
    /// (`crate::split`).
    pub parts: (u64, u64),
}

impl OpStats {
    /// Adds the counts of `other` (a part of the run) to these.
    pub fn merge(&mut self, other: &OpStats) {
        for (kind, calls, elements) in &other.rows {
            match self.rows.iter_mut().find(|r| &r.0 == kind) {
                Some(r) => {
                    r.1 += calls;
                    r.2 += elements;
                }
                None => self.rows.push((kind.clone(), *calls, *elements)),
            }
        }
        self.instructions += other.instructions;
        self.parts.0 += other.parts.0;
        self.parts.1 += other.parts.1;
        for (kind, n) in &other.round_trips {
            self.record_round_trips(kind, *n);
        }
    }

    /// Adds one call of `kind` that touched `elements` elements.
    pub fn record(&mut self, kind: &str, elements: u64) {
        if let Some(r) = self.rows.iter_mut().find(|r| r.0 == kind) {
            r.1 += 1;
            r.2 += elements;
        } else {
            self.rows.push((kind.to_string(), 1, elements));
        }
    }

    /// Adds `n` host round trips caused by an instruction of family `kind`.
    pub fn record_round_trips(&mut self, kind: &str, n: u64) {
        if let Some(r) = self.round_trips.iter_mut().find(|r| r.0 == kind) {
            r.1 += n;
        } else {
            self.round_trips.push((kind.to_string(), n));
        }
    }
}

/// A vector library: the operations VCODE needs, on vectors of `INT`, `FLOAT` and `BOOL`
/// elements and on segment descriptors.
///
/// Conventions for every method:
/// * operands are in VCODE stack order (deepest first); a segdes `S` with `m` segments
///   describes data vectors of length `N = sum of lengths`;
/// * "compatible with S" = length `N`; "per segment" = length `m`;
/// * lengths and types are checked; a violation is a `Trap`, never undefined behaviour;
/// * results are fresh handles (storage may be reused when an input is uniquely held).
pub trait Cvl {
    /// Handle to a data vector (cheap `Clone`, reference counted; last drop frees).
    type Vector: Clone;
    /// Handle to a segment descriptor (cheap `Clone`, reference counted).
    type Segdes: Clone;

    /// A short name for messages and statistics (`"cpu"`, `"cuda"`).
    fn name(&self) -> &'static str;

    /// Host round trips so far: the times the host waited for the device to hand a value
    /// back (a GPU library's device-to-host reads). A library in host memory has none. The
    /// interpreter's `--stats` attributes them to the instructions that caused them.
    fn round_trips(&self) -> u64 {
        0
    }

    /// Waits until every operation issued so far has finished (a GPU library's queued
    /// kernels), reporting an error one of them left. `START_TIMER` and `STOP_TIMER` call
    /// it, so that `time` measures finished work. A library that computes as it is called
    /// has nothing to wait for.
    fn wait(&mut self) -> Result<(), Trap> {
        Ok(())
    }

    /// The position of the instruction about to run (the interpreter's program counter),
    /// which a library that checks errors later ([`Trap::deferred_at`]) records with each
    /// deferred check.
    fn set_position(&mut self, _pos: u64) {}

    /// Reports an error a deferred check holds (one round trip when there is one). The
    /// interpreter calls it at `CALL`, `RET` and `EXIT`, so a deferred error is reported
    /// while the call that raised it is still the innermost one.
    fn settle(&mut self) -> Result<(), Trap> {
        Ok(())
    }

    // ----- handle inspection (no data transfer) -----

    /// Number of elements of `v`.
    fn len(&self, v: &Self::Vector) -> usize;
    /// Element type of `v`.
    fn vtype(&self, v: &Self::Vector) -> VType;
    /// Number of segments `m` of `s`.
    fn segment_count(&self, s: &Self::Segdes) -> usize;
    /// Element count `N` of `s` (sum of the lengths).
    fn element_count(&self, s: &Self::Segdes) -> usize;

    // ----- host transfer -----

    /// Copies a host vector into the library (constants, `READ`).
    fn from_host(&mut self, v: HostVector) -> Result<Self::Vector, Trap>;
    /// Copies a whole vector back to the host (final stack, `WRITE`).
    fn to_host(&mut self, v: &Self::Vector) -> Result<HostVector, Trap>;
    /// Copies the first `n` elements of `v` back to the host (all of them when it has
    /// fewer): the part of a result the top level prints.
    fn to_host_prefix(&mut self, v: &Self::Vector, n: usize) -> Result<HostVector, Trap> {
        let mut h = self.to_host(v)?;
        h.truncate(n);
        Ok(h)
    }
    /// True when `v` is a `FLOAT` vector holding a NaN or an infinity.
    fn any_non_finite(&mut self, v: &Self::Vector) -> Result<bool, Trap> {
        Ok(match self.to_host(v)? {
            HostVector::Float(x) => x.iter().any(|x| !x.is_finite()),
            _ => false,
        })
    }
    /// Reads one integer element (an `IF` flag is read with [`Cvl::get_bool`]); used for
    /// the scalars that control flow and I/O need. Traps when `i` is out of range or the
    /// vector is not `INT`.
    fn get_int(&mut self, v: &Self::Vector, i: usize) -> Result<i64, Trap>;
    /// Reads one boolean element (the flag of an `IF`).
    fn get_bool(&mut self, v: &Self::Vector, i: usize) -> Result<bool, Trap>;
    /// A vector of `n` copies of one host value (`dis_vu?`): `CONST` scalars, fills.
    fn fill(&mut self, value: HostScalar, n: usize) -> Result<Self::Vector, Trap>;

    // ----- host scalars (serial code) -----

    /// Whether the interpreter may hold the one-element results of element-wise work as
    /// host values and compute them with the `scalar_*` methods below (serial code runs
    /// one such instruction after another, where making a vector costs more than the
    /// work). A library whose data lives elsewhere (a GPU's) keeps every value in its own
    /// memory: `false`, the default.
    fn host_scalars(&self) -> bool {
        false
    }
    /// The element of a one-element vector, as a host value.
    fn scalar_of(&mut self, v: &Self::Vector) -> Result<HostScalar, Trap> {
        if self.len(v) != 1 {
            return Err(Trap::length(format!("a scalar is one element, not {}", self.len(v))));
        }
        Ok(match self.to_host_prefix(v, 1)? {
            HostVector::Int(x) => HostScalar::Int(x[0]),
            HostVector::Float(x) => HostScalar::Float(x[0]),
            HostVector::Bool(x) => HostScalar::Bool(x[0]),
        })
    }
    /// [`Cvl::binary`] of two one-element vectors holding `a` and `b`: the same value or
    /// the same trap. The default makes the vectors and runs it.
    fn scalar_binary(&mut self, op: BinOp, a: HostScalar, b: HostScalar) -> Result<HostScalar, Trap> {
        let (a, b) = (self.fill(a, 1)?, self.fill(b, 1)?);
        let r = self.binary(op, &a, &b)?;
        self.scalar_of(&r)
    }
    /// [`Cvl::unary`] of a one-element vector holding `a`.
    fn scalar_unary(&mut self, op: UnOp, a: HostScalar) -> Result<HostScalar, Trap> {
        let a = self.fill(a, 1)?;
        let r = self.unary(op, &a)?;
        self.scalar_of(&r)
    }
    /// [`Cvl::select`] of one-element vectors holding `f`, `a` and `b`.
    fn scalar_select(&mut self, f: HostScalar, a: HostScalar, b: HostScalar) -> Result<HostScalar, Trap> {
        let (f, a, b) = (self.fill(f, 1)?, self.fill(a, 1)?, self.fill(b, 1)?);
        let r = self.select(&f, &a, &b)?;
        self.scalar_of(&r)
    }
    /// [`Cvl::fused`] over one position, operand `$i` the one-element vector holding
    /// `args[i]` (a superoperator with one element-wise result and only data
    /// parameters).
    fn scalar_fused(&mut self, op: &SuperOp, args: &[HostScalar]) -> Result<HostScalar, Trap> {
        let vs = args.iter().map(|&x| self.fill(x, 1)).collect::<Result<Vec<_>, _>>()?;
        let refs: Vec<Option<&Self::Vector>> = vs.iter().map(Some).collect();
        let r = self.fused(op, &refs, 1)?;
        self.scalar_of(&r)
    }

    // ----- segment descriptors -----

    /// `MAKE_SEGDES`: a descriptor from an `INT` vector of lengths (all `>= 0`).
    fn make_segdes(&mut self, lengths: &Self::Vector) -> Result<Self::Segdes, Trap>;
    /// A descriptor from host lengths (`CONST SEGDES`, `READ SEGDES`).
    fn segdes_from_host(&mut self, lengths: &[i64]) -> Result<Self::Segdes, Trap>;
    /// `LENGTHS`: the lengths as an `INT` vector of length `m`.
    fn lengths(&mut self, s: &Self::Segdes) -> Result<Self::Vector, Trap>;
    /// The lengths copied to the host (final stack, `WRITE SEGDES`).
    fn segdes_to_host(&mut self, s: &Self::Segdes) -> Result<Vec<i64>, Trap>;
    /// The first `n` lengths copied to the host (all of them when there are fewer).
    fn segdes_to_host_prefix(&mut self, s: &Self::Segdes, n: usize) -> Result<Vec<i64>, Trap> {
        let mut h = self.segdes_to_host(s)?;
        h.truncate(n);
        Ok(h)
    }

    // ----- element-wise -----

    /// Binary element-wise `a op b` (equal lengths). Comparisons give `BOOL`.
    /// Integer `Div`/`Mod` by zero traps with `DivisionByZero`.
    fn binary(&mut self, op: BinOp, a: &Self::Vector, b: &Self::Vector)
        -> Result<Self::Vector, Trap>;
    /// Unary element-wise `op a` (conversions, math functions, `NOT`).
    fn unary(&mut self, op: UnOp, a: &Self::Vector) -> Result<Self::Vector, Trap>;
    /// `SELECT`: `r[i] = f[i] ? a[i] : b[i]` (`f` is `BOOL`; `a`, `b` of one type).
    fn select(&mut self, f: &Self::Vector, a: &Self::Vector, b: &Self::Vector)
        -> Result<Self::Vector, Trap>;
    /// `RAND`: `r[i]` uniform in `[0, |a[i]|)` from the library's generator; zero traps.
    fn rand(&mut self, bounds: &Self::Vector) -> Result<Self::Vector, Trap>;
    /// `SRAND`: reseeds the generator.
    fn srand(&mut self, seed: i64) -> Result<(), Trap>;

    // ----- scans and reductions (segmented; one segment = unsegmented) -----

    /// Exclusive segmented scan of `v` (compatible with `s`), restarting at every segment.
    fn scan(&mut self, op: ReduceOp, v: &Self::Vector, s: &Self::Segdes)
        -> Result<Self::Vector, Trap>;
    /// Segmented reduction: one value per segment, the identity for empty segments.
    fn reduce(&mut self, op: ReduceOp, v: &Self::Vector, s: &Self::Segdes)
        -> Result<Self::Vector, Trap>;

    // ----- permutations (indices relative to segment starts; last writer wins) -----

    /// `PERMUTE`: `r[start(s)+i[j]] = v[j]`; unwritten positions are zero/false.
    fn permute(&mut self, v: &Self::Vector, i: &Self::Vector, s: &Self::Segdes)
        -> Result<Self::Vector, Trap>;
    /// `DPERMUTE`: copy of default `d` (compatible with `sd`), then scatter of `v` by `i`
    /// (compatible with `ss`) into the matching destination segments.
    fn dpermute(
        &mut self,
        v: &Self::Vector,
        i: &Self::Vector,
        d: &Self::Vector,
        ss: &Self::Segdes,
        sd: &Self::Segdes,
    ) -> Result<Self::Vector, Trap>;
    /// `FPERMUTE`: flagged scatter into a zero-filled vector of length `N(sd)`.
    fn fpermute(
        &mut self,
        v: &Self::Vector,
        i: &Self::Vector,
        f: &Self::Vector,
        ss: &Self::Segdes,
        sd: &Self::Segdes,
    ) -> Result<Self::Vector, Trap>;
    /// `BPERMUTE`: gather, `r[k] = v[starts(s)+i[k]]` for `k` in destination segment `s`.
    fn bpermute(
        &mut self,
        v: &Self::Vector,
        i: &Self::Vector,
        ss: &Self::Segdes,
        sd: &Self::Segdes,
    ) -> Result<Self::Vector, Trap>;
    /// `BFPERMUTE`: flagged gather, unflagged destinations get zero/false.
    fn bfpermute(
        &mut self,
        v: &Self::Vector,
        i: &Self::Vector,
        f: &Self::Vector,
        ss: &Self::Segdes,
        sd: &Self::Segdes,
    ) -> Result<Self::Vector, Trap>;
    /// `DFPERMUTE`: copy of default `d`, then flagged scatter (flags by source position).
    #[allow(clippy::too_many_arguments)]
    fn dfpermute(
        &mut self,
        v: &Self::Vector,
        i: &Self::Vector,
        f: &Self::Vector,
        d: &Self::Vector,
        ss: &Self::Segdes,
        sd: &Self::Segdes,
    ) -> Result<Self::Vector, Trap>;

    // ----- vector / scalar -----

    /// `DIST`: segment `s` of the result is `x[s]` repeated `len(s)` times.
    fn dist(&mut self, x: &Self::Vector, s: &Self::Segdes) -> Result<Self::Vector, Trap>;
    /// `INDEX`: segment `s` gets `b[s] + j*k[s]` for `j < len(s)` (`INT`).
    fn index(&mut self, b: &Self::Vector, k: &Self::Vector, s: &Self::Segdes)
        -> Result<Self::Vector, Trap>;
    /// `EXTRACT`: `r[s] = v[start(s)+i[s]]`.
    fn extract(&mut self, v: &Self::Vector, i: &Self::Vector, s: &Self::Segdes)
        -> Result<Self::Vector, Trap>;
    /// `REPLACE`: copy of `v` with `r[start(s)+i[s]] = x[s]` (non-destructive).
    fn replace(
        &mut self,
        v: &Self::Vector,
        i: &Self::Vector,
        x: &Self::Vector,
        s: &Self::Segdes,
    ) -> Result<Self::Vector, Trap>;

    // ----- library functions -----

    /// `PACK`: keeps the elements whose flag is true; returns the packed data and the new
    /// descriptor (same segment count, lengths = true flags per segment).
    fn pack(&mut self, v: &Self::Vector, f: &Self::Vector, s: &Self::Segdes)
        -> Result<(Self::Vector, Self::Segdes), Trap>;
    /// `RANK_UP` (`up = true`) / `RANK_DOWN`: stable rank within each segment, relative to
    /// the segment start (`INT` or `FLOAT` keys).
    fn rank(&mut self, up: bool, v: &Self::Vector, s: &Self::Segdes)
        -> Result<Self::Vector, Trap>;

    // ----- results in an operand's storage (the paper's in-place optimisation) -----
    //
    // Each of these may write its result over the operand passed as `&mut` when that
    // handle is the only one to its vector, and then return a handle to it (the caller
    // drops the operand right after). They check everything before writing: on error the
    // operand is unchanged. The defaults never reuse.

    /// [`Cvl::binary`], possibly writing the result over `a`.
    fn binary_reusing(&mut self, op: BinOp, a: &mut Self::Vector, b: &Self::Vector) -> Result<Self::Vector, Trap> {
        self.binary(op, a, b)
    }
    /// [`Cvl::unary`], possibly writing the result over `a`.
    fn unary_reusing(&mut self, op: UnOp, a: &mut Self::Vector) -> Result<Self::Vector, Trap> {
        self.unary(op, a)
    }
    /// [`Cvl::replace`], possibly updating `v` in place, so that `REPLACE` costs one
    /// element per segment rather than a copy of `v`.
    fn replace_reusing(
        &mut self,
        v: &mut Self::Vector,
        i: &Self::Vector,
        x: &Self::Vector,
        s: &Self::Segdes,
    ) -> Result<Self::Vector, Trap> {
        self.replace(v, i, x, s)
    }
    /// [`Cvl::dpermute`], possibly scattering into the defaults `d` in place.
    fn dpermute_reusing(
        &mut self,
        v: &Self::Vector,
        i: &Self::Vector,
        d: &mut Self::Vector,
        ss: &Self::Segdes,
        sd: &Self::Segdes,
    ) -> Result<Self::Vector, Trap> {
        self.dpermute(v, i, d, ss, sd)
    }

    // ----- superoperators (FCODE) -----

    /// [`Cvl::fused`], possibly writing the result over an operand passed as `Some(&mut
    /// v)` when that handle is the only one to its vector (the caller drops the operands
    /// right after). On error every operand is unchanged. The default never reuses.
    fn fused_reusing(
        &mut self,
        op: &SuperOp,
        args: &mut [Option<&mut Self::Vector>],
        len: usize,
    ) -> Result<Self::Vector, Trap> {
        let shared: Vec<Option<&Self::Vector>> = args.iter().map(|a| a.as_deref()).collect();
        self.fused(op, &shared, len)
    }

    /// `FUSED n` of a superoperator with a fold: the reduction (one value per segment of
    /// `seg`) or exclusive scan (one per element) of its element-wise values over the
    /// segments of `seg`, whose element count is `len`. `args` as for [`Cvl::fused`]
    /// (`seg` is also among them, as `None`).
    ///
    /// The default evaluates the element-wise part with [`Cvl::fused`] and folds the
    /// result with [`Cvl::reduce`] / [`Cvl::scan`]; a backend overrides it to fold as it
    /// evaluates, with no intermediate vector.
    fn fused_fold(
        &mut self,
        op: &SuperOp,
        args: &[Option<&Self::Vector>],
        seg: &Self::Segdes,
        len: usize,
    ) -> Result<Self::Vector, Trap> {
        let Some(fold) = op.fold else {
            return Err(Trap::ty("superoperator has no fold"));
        };
        let v = self.fused(&op.without_fold(), args, len)?;
        match fold.kind {
            FoldKind::Reduce => self.reduce(fold.op, &v, seg),
            FoldKind::Scan => self.scan(fold.op, &v, seg),
        }
    }

    /// `FUSED n` of a superoperator with a guard: the body evaluated element-wise over
    /// `len` positions, and the `OR_REDUCE` of the guard's tree over the segments of
    /// `seg` (whose element count is `len`): one `BOOL` per segment. `args` as for
    /// [`Cvl::fused`] (`seg` is among them, as `None`). Neither tree traps.
    ///
    /// The default evaluates the guard with [`Cvl::fused_fold`] and then the body with
    /// [`Cvl::fused`]; a backend overrides it to do both in one pass over the operands.
    fn fused_guarded(
        &mut self,
        op: &SuperOp,
        args: &[Option<&Self::Vector>],
        seg: &Self::Segdes,
        len: usize,
    ) -> Result<(Self::Vector, Self::Vector), Trap> {
        let Some(guard) = op.guard_op() else {
            return Err(Trap::ty("superoperator has no guard"));
        };
        let flags = self.fused_fold(&guard, args, seg, len)?;
        let r = self.fused(&op.without_fold(), args, len)?;
        Ok((r, flags))
    }

    /// `FUSED n` of a superoperator with further results ([`SuperOp::more`]): the
    /// vector of each element-wise result over `len` positions in order (the body's
    /// first), then, with a guard, its flags as [`Cvl::fused_guarded`] gives them (`seg`
    /// is then the guard's descriptor); with a reduction, each tree's reduction over the
    /// segments of `seg`. `args` as for [`Cvl::fused`]. No tree traps.
    ///
    /// The default evaluates each result with [`Cvl::fused`] (the body with its guard
    /// through [`Cvl::fused_guarded`]); a backend overrides it to read the operands once
    /// and compute the subexpressions the trees share once.
    fn fused_many(
        &mut self,
        op: &SuperOp,
        args: &[Option<&Self::Vector>],
        seg: Option<&Self::Segdes>,
        len: usize,
    ) -> Result<Vec<Self::Vector>, Trap> {
        fused_many_by_parts(self, op, args, seg, len)
    }

    /// `FUSED n` of a superoperator with a pack root: for each flag tree in order, the
    /// body's values (over `len` positions) packed by the tree's values within the
    /// segments of `seg` (whose element count is `len`), and the new descriptor, as
    /// [`Cvl::pack`] gives them. `args` as for [`Cvl::fused`] (`seg` is among them, as
    /// `None`). No tree traps.
    ///
    /// The default evaluates the body (a parameter is read as it is) and each flag tree
    /// with [`Cvl::fused`] and packs with [`Cvl::pack`]; a backend overrides it to read
    /// the operands once for every flag tree.
    fn fused_pack(
        &mut self,
        op: &SuperOp,
        args: &[Option<&Self::Vector>],
        seg: &Self::Segdes,
        len: usize,
    ) -> Result<Vec<(Self::Vector, Self::Segdes)>, Trap> {
        let Some(pack) = &op.pack else {
            return Err(Trap::ty("superoperator has no pack"));
        };
        let computed;
        let data = match op.body {
            Expr::Arg(i) => args.get(i).copied().flatten().ok_or_else(|| Trap::ty(format!("pack operand ${i} is not a vector")))?,
            _ => {
                computed = self.fused(&op.without_fold(), args, len)?;
                &computed
            }
        };
        let mut out = Vec::with_capacity(pack.flags.len());
        for i in 0..pack.flags.len() {
            let flag = op.flag_op(i).ok_or_else(|| Trap::ty("superoperator has no pack"))?;
            let f = self.fused(&flag, args, len)?;
            out.push(self.pack(data, &f, seg)?);
        }
        Ok(out)
    }

    /// `FUSED n`: evaluates superoperator `op` element-wise over `len` positions.
    /// `args[i]` is operand `$i`: `Some(vector)` for a data parameter (of length `len`
    /// and the parameter's type; the interpreter checks both), `None` for a `SEGDES`
    /// parameter (which only gave `len`). Returns one fresh vector of length `len`.
    ///
    /// The default implementation evaluates the tree node by node with the other
    /// methods of this trait (correct on any backend, one intermediate per node); a
    /// backend overrides it to fuse (the CPU evaluates in cache-sized chunks, CUDA
    /// generates one kernel).
    fn fused(
        &mut self,
        op: &SuperOp,
        args: &[Option<&Self::Vector>],
        len: usize,
    ) -> Result<Self::Vector, Trap> {
        fused_by_parts(self, &op.body, args, len)
    }
}

/// [`Cvl::fused_many`] one result at a time (its default): each element-wise result with
/// [`Cvl::fused`] (the body with its guard through [`Cvl::fused_guarded`]), each
/// reduction with [`Cvl::fused_fold`].
pub fn fused_many_by_parts<C: Cvl + ?Sized>(
    cvl: &mut C,
    op: &SuperOp,
    args: &[Option<&C::Vector>],
    seg: Option<&C::Segdes>,
    len: usize,
) -> Result<Vec<C::Vector>, Trap> {
    let mut out = Vec::with_capacity(op.results());
    let mut flags = None;
    for i in 0..=op.more.len() {
        let part = op.output_op(i).ok_or_else(|| Trap::ty("superoperator result out of range"))?;
        if part.fold.is_some() {
            let seg = seg.ok_or_else(|| Trap::ty("a folding superoperator's descriptor is missing"))?;
            out.push(cvl.fused_fold(&part, args, seg, len)?);
            continue;
        }
        match (i, &op.guard, seg) {
            (0, Some(g), Some(seg)) => {
                let guarded = SuperOp { guard: Some(g.clone()), ..part };
                let (r, f) = cvl.fused_guarded(&guarded, args, seg, len)?;
                out.push(r);
                flags = Some(f);
            }
            (0, Some(_), None) => return Err(Trap::ty("a guarded superoperator's descriptor is missing")),
            _ => out.push(cvl.fused(&part, args, len)?),
        }
    }
    out.extend(flags);
    Ok(out)
}

/// Evaluates a superoperator tree one node at a time with [`Cvl`]'s element-wise
/// methods (the default [`Cvl::fused`]). A trap names the operation that raised it
/// ([`Trap::part`]): the first one, in evaluation order, that fails on some element.
pub fn fused_by_parts<C: Cvl + ?Sized>(
    cvl: &mut C,
    e: &Expr,
    args: &[Option<&C::Vector>],
    len: usize,
) -> Result<C::Vector, Trap> {
    by_parts(cvl, e, args, len, &mut 0)
}

/// [`fused_by_parts`]; `ops` counts the operations evaluated so far (the number of the
/// next one).
fn by_parts<C: Cvl + ?Sized>(
    cvl: &mut C,
    e: &Expr,
    args: &[Option<&C::Vector>],
    len: usize,
    ops: &mut u32,
) -> Result<C::Vector, Trap> {
    let part = |ops: &mut u32| {
        *ops += 1;
        let k = *ops - 1;
        move |t: Trap| t.in_part(k)
    };
    Ok(match e {
        Expr::Arg(i) => match args.get(*i) {
            Some(Some(v)) => (*v).clone(),
            _ => {
                return Err(Trap::ty(format!(
                    "superoperator operand ${i} is missing or a segment descriptor"
                )))
            }
        },
        Expr::Const(c) => cvl.fill(*c, len)?,
        Expr::Binary { op, a, b, .. } => {
            let a = by_parts(cvl, a, args, len, ops)?;
            let b = by_parts(cvl, b, args, len, ops)?;
            cvl.binary(*op, &a, &b).map_err(part(ops))?
        }
        Expr::Unary { op, a, .. } => {
            let a = by_parts(cvl, a, args, len, ops)?;
            cvl.unary(*op, &a).map_err(part(ops))?
        }
        Expr::Select { f, a, b, .. } => {
            let f = by_parts(cvl, f, args, len, ops)?;
            let a = by_parts(cvl, a, args, len, ops)?;
            let b = by_parts(cvl, b, args, len, ops)?;
            cvl.select(&f, &a, &b).map_err(part(ops))?
        }
    })
}

/// One host value to broadcast with [`Cvl::fill`]; also a scalar of serial code held on
/// the host ([`Cvl::host_scalars`]). Its tag is a whole word, so that a copy of one (the
/// interpreter makes several per instruction) moves two aligned words: with a one-byte
/// tag the payload after it was copied as unaligned words that later reads could not
/// take from the store (about a third of the time of serial code).
#[derive(Debug, Clone, Copy, PartialEq)]
#[repr(u64)]
pub enum HostScalar {
    /// An integer.
    Int(i64),
    /// A double.
    Float(f64),
    /// A boolean.
    Bool(bool),
}

impl HostScalar {
    /// Its element type.
    pub fn vtype(self) -> VType {
        match self {
            HostScalar::Int(_) => VType::Int,
            HostScalar::Float(_) => VType::Float,
            HostScalar::Bool(_) => VType::Bool,
        }
    }
}
