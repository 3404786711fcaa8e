//! `impl Cvl for CudaCvl`: every VCODE vector operation as kernel launches (see the
//! `kernels` crate for the device side). Argument checks (types, lengths, segment counts)
//! happen on the host before any launch and mirror the CPU library's messages.

use std::cell::RefCell;
use std::rc::Rc;

use cudarc::driver::sys::CUdeviceptr;
use vcode::cvl::{check, BinOp, ReduceOp, UnOp, FLOAT_MAX_IDENTITY, INT_MAX_IDENTITY};
use vcode::{Cvl, HostScalar, HostVector, Trap, TrapKind, VType};

use crate::device::Arg::{self, I, I32, P, U};
use crate::{esize, sfx, CudaCvl, CudaSegdes, CudaVector, SegData};

/// Elements per tile of the scan kernels.
const TILE: usize = kernels::SCAN_TILE;
/// Elements per block of the radix-sort kernels.
const RTILE: usize = kernels::RADIX_TILE;

const NULL: Arg = P(0);

fn unsupported(what: &str, t: VType) -> Trap {
    Trap::ty(format!("{what} is not defined on {}", t.name()))
}

fn want(v: &CudaVector, ty: VType, what: &str) -> Result<(), Trap> {
    check::ty(v.sh(), ty, what)
}

impl CudaVector {
    /// The shape the shared argument checks take.
    fn sh(&self) -> check::V {
        check::V { ty: self.0.ty, len: self.0.len }
    }
}

impl CudaSegdes {
    /// The shape the shared argument checks take.
    fn sh(&self) -> check::S {
        check::S { m: self.0.m, n: self.0.n }
    }
}

fn binop_name(op: BinOp) -> &'static str {
    vcode::fused::binop_name(op)
}

/// The scan kernels' suffix, accumulator size in bytes and identity for `op` on `ty`. The
/// identity is the one results show (the reference's, as on the CPU): an empty segment's
/// reduction, the first element of each segment of a scan. It is never combined with
/// elements: the kernels use a true neutral element for that (`scan.cu`).
pub(crate) fn monoid(op: ReduceOp, ty: VType) -> Result<(&'static str, usize, HostScalar), Trap> {
    use ReduceOp::*;
    use VType::{Bool as B, Float as F, Int as Z};
    Ok(match (op, ty) {
        (Add, Z) => ("add_z", 8, HostScalar::Int(0)),
        (Mul, Z) => ("mul_z", 8, HostScalar::Int(1)),
        (Max, Z) => ("max_z", 8, HostScalar::Int(INT_MAX_IDENTITY)),
        (Min, Z) => ("min_z", 8, HostScalar::Int(-INT_MAX_IDENTITY - 1)),
        (And, Z) => ("and_z", 8, HostScalar::Int(-1)),
        (Or, Z) => ("ior_z", 8, HostScalar::Int(0)),
        (Xor, Z) => ("xor_z", 8, HostScalar::Int(0)),
        (Add, F) => ("add_d", 8, HostScalar::Float(0.0)),
        (Mul, F) => ("mul_d", 8, HostScalar::Float(1.0)),
        (Max, F) => ("max_d", 8, HostScalar::Float(FLOAT_MAX_IDENTITY)),
        (Min, F) => ("min_d", 8, HostScalar::Float(-FLOAT_MAX_IDENTITY)),
        (And, B) => ("and_b", 4, HostScalar::Bool(true)),
        (Or, B) => ("ior_b", 4, HostScalar::Bool(false)),
        (Xor, B) => ("xor_b", 4, HostScalar::Bool(false)),
        (op, t) => return Err(unsupported(&format!("{op:?} scan/reduce"), t)),
    })
}

pub(crate) fn scalar_bits(v: HostScalar) -> (VType, u64) {
    match v {
        HostScalar::Int(x) => (VType::Int, x as u64),
        HostScalar::Float(x) => (VType::Float, x.to_bits()),
        HostScalar::Bool(b) => (VType::Bool, u64::from(b)),
    }
}

impl CudaVector {
    fn ptr(&self) -> CUdeviceptr {
        self.0.buf.ptr()
    }
}

impl CudaSegdes {
    fn lens(&self) -> CUdeviceptr {
        self.0.lo.ptr()
    }
    fn offs(&self) -> CUdeviceptr {
        self.0.lo.ptr() + 8 * self.0.m as u64
    }
}

/// How `scan_raw` writes its result.
#[derive(Clone, Copy)]
enum ScanMode {
    Exclusive = 0,
    Inclusive = 1,
    /// Each segment's total to `out[segment]`.
    ReduceByKey = 2,
}

/// Where the elements a scan kernel loads come from.
pub(crate) enum TileSrc {
    /// A vector on the device (the library's `scan_tiles_X` / `scan_down_X`).
    Vector(CUdeviceptr),
    /// A folding superoperator's element-wise tree: its generated kernels, their operand
    /// pointers (first) and error mailbox (last).
    Fused { tiles: String, down: String, operands: Vec<Arg>, err: CUdeviceptr },
}

impl TileSrc {
    /// The two per-tile kernels, for the operator of library suffix `suf`.
    fn kernels(&self, suf: &str) -> (String, String) {
        match self {
            TileSrc::Vector(_) => (format!("scan_tiles_{suf}"), format!("scan_down_{suf}")),
            TileSrc::Fused { tiles, down, .. } => (tiles.clone(), down.clone()),
        }
    }
    /// A per-tile kernel's arguments: the source's, then `rest`, then (fused) the mailbox.
    fn args(&self, rest: &[Arg]) -> Vec<Arg> {
        match self {
            TileSrc::Vector(p) => std::iter::once(P(*p)).chain(rest.iter().copied()).collect(),
            TileSrc::Fused { operands, err, .. } => {
                operands.iter().copied().chain(rest.iter().copied()).chain([P(*err)]).collect()
            }
        }
    }
}

impl CudaCvl {
    /// The per-element segment index of `s` (device pointer), or 0 (null) for the
    /// single-segment fast path. Built on first use: mark segment starts, max-scan.
    fn seg_index(&mut self, s: &CudaSegdes) -> Result<CUdeviceptr, Trap> {
        if s.0.m <= 1 || s.0.n == 0 {
            return Ok(0);
        }
        if let Some(b) = s.0.seg.borrow().as_ref() {
            return Ok(b.ptr());
        }
        if s.0.m > u32::MAX as usize {
            return Err(Trap::new(TrapKind::Unsupported(format!(
                "{} segments (the CUDA backend handles at most {})",
                s.0.m,
                u32::MAX
            ))));
        }
        let n = s.0.n;
        let buf = self.dev.alloc(n * 4)?;
        self.dev.memset(buf.ptr(), 0, n * 4)?;
        self.dev.launch_n(
            "mke_mark",
            s.0.m,
            &[P(s.lens()), P(s.offs()), I(s.0.m as i64), P(buf.ptr())],
        )?;
        self.scan_raw("max_u", 4, &TileSrc::Vector(buf.ptr()), 0, n, buf.ptr(), ScanMode::Inclusive)?;
        let p = buf.ptr();
        *s.0.seg.borrow_mut() = Some(buf);
        Ok(p)
    }

    /// The three-phase tiled scan of the `n` elements of `src` (keys: per-element segment
    /// index or null) into `out`. `suf` names the library's middle-phase kernels of the
    /// operator, `acc` its accumulator size.
    fn scan_raw(
        &mut self,
        suf: &str,
        acc: usize,
        src: &TileSrc,
        keys: CUdeviceptr,
        n: usize,
        out: CUdeviceptr,
        mode: ScanMode,
    ) -> Result<(), Trap> {
        if n == 0 {
            return Ok(());
        }
        let ntiles = n.div_ceil(TILE);
        let blocks = u32::try_from(ntiles)
            .map_err(|_| Trap::new(TrapKind::Unsupported(format!("a scan of {n} elements"))))?;
        let (tiles, down) = src.kernels(suf);
        let tail = |rest: &[Arg]| src.args(rest);
        if ntiles == 1 {
            return self.dev.launch_blocks(
                &down,
                1,
                &tail(&[P(keys), I(n as i64), NULL, NULL, P(out), I32(mode as i32)]),
            );
        }
        let agg_v = self.dev.alloc(ntiles * acc)?;
        let agg_k = self.dev.alloc(ntiles * 4)?;
        self.dev.launch_blocks(
            &tiles,
            blocks,
            &tail(&[P(keys), I(n as i64), P(agg_v.ptr()), P(agg_k.ptr())]),
        )?;
        self.dev.launch_blocks(
            &format!("scan_aggs_{suf}"),
            1,
            &[P(agg_v.ptr()), P(agg_k.ptr()), I(ntiles as i64)],
        )?;
        self.dev.launch_blocks(
            &down,
            blocks,
            &tail(&[
                P(keys),
                I(n as i64),
                P(agg_v.ptr()),
                P(agg_k.ptr()),
                P(out),
                I32(mode as i32),
            ]),
        )
    }

    /// Unsegmented reduction of the `n >= 1` elements of `src` into `out[0]`.
    fn reduce_raw(
        &mut self,
        suf: &str,
        acc: usize,
        src: &TileSrc,
        n: usize,
        out: CUdeviceptr,
    ) -> Result<(), Trap> {
        let ntiles = n.div_ceil(TILE);
        if ntiles == 1 {
            return self.scan_raw(suf, acc, src, 0, n, out, ScanMode::ReduceByKey);
        }
        let blocks = u32::try_from(ntiles).map_err(|_| {
            Trap::new(TrapKind::Unsupported(format!(
                "a reduction of {n} elements"
            )))
        })?;
        let agg_v = self.dev.alloc(ntiles * acc)?;
        let (tiles, _) = src.kernels(suf);
        self.dev.launch_blocks(
            &tiles,
            blocks,
            &src.args(&[NULL, I(n as i64), P(agg_v.ptr()), NULL]),
        )?;
        self.dev.launch_blocks(
            &format!("reduce_aggs_{suf}"),
            1,
            &[P(agg_v.ptr()), I(ntiles as i64), P(out)],
        )
    }

    /// The reduction of `op` over each segment of `s` of the values of `src` (of type
    /// `ty`), one per segment; empty segments get the operator's identity.
    pub(crate) fn reduce_from(
        &mut self,
        op: ReduceOp,
        ty: VType,
        src: &TileSrc,
        s: &CudaSegdes,
    ) -> Result<CudaVector, Trap> {
        let (suf, acc, id) = monoid(op, ty)?;
        let (m, n) = (s.0.m, s.0.n);
        let out = self.new_vec(ty, m)?;
        if m == 0 {
            return Ok(out);
        }
        if n == 0 || m > 1 {
            // Empty segments keep the identity.
            let (ty, bits) = scalar_bits(id);
            self.fill_raw(ty, bits, out.ptr(), m)?;
        }
        if n == 0 {
            return Ok(out);
        }
        if m == 1 {
            self.reduce_raw(suf, acc, src, n, out.ptr())?;
        } else {
            let keys = self.seg_index(s)?;
            self.scan_raw(suf, acc, src, keys, n, out.ptr(), ScanMode::ReduceByKey)?;
        }
        Ok(out)
    }

    /// The exclusive scan of `op` within each segment of `s` of the values of `src`.
    pub(crate) fn scan_from(
        &mut self,
        op: ReduceOp,
        ty: VType,
        src: &TileSrc,
        s: &CudaSegdes,
    ) -> Result<CudaVector, Trap> {
        let (suf, acc, _) = monoid(op, ty)?;
        let n = s.0.n;
        let out = self.new_vec(ty, n)?;
        let keys = self.seg_index(s)?;
        self.scan_raw(suf, acc, src, keys, n, out.ptr(), ScanMode::Exclusive)?;
        Ok(out)
    }

    /// `n` copies of `value` on the device (a fill kernel), not known to the host.
    pub(crate) fn fill_device(&mut self, value: HostScalar, n: usize) -> Result<CudaVector, Trap> {
        let (ty, bits) = scalar_bits(value);
        let out = self.new_vec(ty, n)?;
        self.fill_raw(ty, bits, out.ptr(), n)?;
        Ok(out)
    }

    fn fill_raw(&mut self, ty: VType, bits: u64, ptr: CUdeviceptr, n: usize) -> Result<(), Trap> {
        if bits == 0 {
            return self.dev.memset(ptr, 0, n * esize(ty));
        }
        let k = if ty == VType::Bool {
            "dis_vu1"
        } else {
            "dis_vu8"
        };
        self.dev.launch_n(k, n, &[P(ptr), U(bits), I(n as i64)])
    }

    fn copy_of(&mut self, v: &CudaVector) -> Result<CudaVector, Trap> {
        let out = self.new_vec(v.0.ty, v.0.len)?;
        self.dev
            .copy_dtod(out.ptr(), v.ptr(), v.0.len * esize(v.0.ty))?;
        Ok(out)
    }

    /// A descriptor from its device buffer of lengths then offsets.
    fn segdes(&self, m: usize, n: usize, lo: crate::DevBuf) -> CudaSegdes {
        CudaSegdes(Rc::new(SegData {
            m,
            n,
            lo,
            seg: RefCell::new(None),
        }))
    }

    /// Scatter with "last writer wins" (DPERMUTE, FPERMUTE, DFPERMUTE) into `out`.
    #[allow(clippy::too_many_arguments)]
    fn scatter(
        &mut self,
        out: &CudaVector,
        v: &CudaVector,
        i: &CudaVector,
        flags: CUdeviceptr,
        ss: &CudaSegdes,
        sd: &CudaSegdes,
    ) -> Result<(), Trap> {
        let n_s = ss.0.n;
        if n_s == 0 {
            return Ok(());
        }
        let seg_s = self.seg_index(ss)?;
        let win = self.dev.alloc(sd.0.n * 8)?;
        self.dev.memset(win.ptr(), 0xff, sd.0.n * 8)?;
        let mb = self.err_slot();
        self.dev.launch_n(
            "scatter_claim",
            n_s,
            &[
                P(i.ptr()),
                P(flags),
                P(seg_s),
                P(sd.lens()),
                P(sd.offs()),
                I(n_s as i64),
                P(win.ptr()),
                P(mb),
            ],
        )?;
        self.dev.launch_n(
            &format!("scatter_write{}", sfx(v.0.ty)),
            n_s,
            &[
                P(v.ptr()),
                P(i.ptr()),
                P(flags),
                P(seg_s),
                P(sd.lens()),
                P(sd.offs()),
                I(n_s as i64),
                P(win.ptr()),
                P(out.ptr()),
            ],
        )?;
        self.check()
    }

    /// Gather (BPERMUTE, BFPERMUTE).
    fn gather(
        &mut self,
        v: &CudaVector,
        i: &CudaVector,
        flags: CUdeviceptr,
        ss: &CudaSegdes,
        sd: &CudaSegdes,
    ) -> Result<CudaVector, Trap> {
        let n_d = sd.0.n;
        let out = self.new_vec(v.0.ty, n_d)?;
        if n_d == 0 {
            return Ok(out);
        }
        let seg_d = self.seg_index(sd)?;
        let mb = self.err_slot();
        self.dev.launch_n(
            &format!("bck_pe{}", sfx(v.0.ty)),
            n_d,
            &[
                P(v.ptr()),
                P(i.ptr()),
                P(flags),
                P(seg_d),
                P(ss.lens()),
                P(ss.offs()),
                I(n_d as i64),
                P(out.ptr()),
                P(mb),
            ],
        )?;
        self.check()?;
        Ok(out)
    }

    /// One stable radix pass over the byte of the keys at `shift`.
    #[allow(clippy::too_many_arguments)]
    fn radix_pass(
        &mut self,
        n: usize,
        shift: u32,
        keys_in: CUdeviceptr,
        perm_in: CUdeviceptr,
        keys_out: CUdeviceptr,
        perm_out: CUdeviceptr,
        hist: CUdeviceptr,
        nblocks: usize,
    ) -> Result<(), Trap> {
        let nb = nblocks as u32;
        self.dev.launch_blocks(
            "radix_hist",
            nb,
            &[
                P(keys_in),
                I(n as i64),
                I32(shift as i32),
                P(hist),
                I(nblocks as i64),
            ],
        )?;
        self.scan_raw(
            "add_z",
            8,
            &TileSrc::Vector(hist),
            0,
            256 * nblocks,
            hist,
            ScanMode::Exclusive,
        )?;
        self.dev.launch_blocks(
            "radix_scatter",
            nb,
            &[
                P(keys_in),
                P(perm_in),
                I(n as i64),
                I32(shift as i32),
                P(hist),
                I(nblocks as i64),
                P(keys_out),
                P(perm_out),
            ],
        )
    }

    /// Bits that differ between the keys (one round trip), to skip constant digits.
    fn varying_bits(&mut self, keys: CUdeviceptr, n: usize) -> Result<u64, Trap> {
        let buf = self.dev.alloc(8)?;
        self.dev.memset(buf.ptr(), 0, 8)?;
        self.dev
            .launch_n("radix_diff", n, &[P(keys), I(n as i64), P(buf.ptr())])?;
        self.read_scalar(buf.ptr(), 8)
    }
}

impl Cvl for CudaCvl {
    type Vector = CudaVector;
    type Segdes = CudaSegdes;

    fn name(&self) -> &'static str {
        "cuda"
    }
    fn round_trips(&self) -> u64 {
        self.dev.round_trips()
    }
    fn wait(&mut self) -> Result<(), Trap> {
        self.synchronize()
    }
    fn set_position(&mut self, pos: u64) {
        self.position = pos;
    }
    fn settle(&mut self) -> Result<(), Trap> {
        self.flush_pending()
    }
    fn len(&self, v: &CudaVector) -> usize {
        v.0.len
    }
    fn vtype(&self, v: &CudaVector) -> VType {
        v.0.ty
    }
    fn segment_count(&self, s: &CudaSegdes) -> usize {
        s.0.m
    }
    fn element_count(&self, s: &CudaSegdes) -> usize {
        s.0.n
    }

    fn from_host(&mut self, v: HostVector) -> Result<CudaVector, Trap> {
        if let Some(x) = crate::scalar::only_element(&v) {
            // A scalar: known to the host, written to the device only when needed.
            return self.scalar(x);
        }
        let out = self.new_vec(v.vtype(), v.len())?;
        match &v {
            HostVector::Int(x) => self.dev.htod(out.ptr(), x)?,
            HostVector::Float(x) => self.dev.htod(out.ptr(), x)?,
            HostVector::Bool(x) => {
                let bytes: Vec<u8> = x.iter().map(|&b| u8::from(b)).collect();
                self.dev.htod(out.ptr(), &bytes)?
            }
        }
        Ok(out)
    }

    fn to_host(&mut self, v: &CudaVector) -> Result<HostVector, Trap> {
        self.to_host_prefix(v, usize::MAX)
    }

    fn to_host_prefix(&mut self, v: &CudaVector, n: usize) -> Result<HostVector, Trap> {
        self.flush_pending()?;
        match v.known() {
            Some(HostScalar::Int(x)) => return Ok(HostVector::Int(vec![x; n.min(1)])),
            Some(HostScalar::Float(x)) => return Ok(HostVector::Float(vec![x; n.min(1)])),
            Some(HostScalar::Bool(x)) => return Ok(HostVector::Bool(vec![x; n.min(1)])),
            None => {}
        }
        let n = v.0.len.min(n);
        Ok(match v.0.ty {
            VType::Int => {
                let mut x = vec![0i64; n];
                self.dev.dtoh(&mut x, v.ptr())?;
                HostVector::Int(x)
            }
            VType::Float => {
                let mut x = vec![0f64; n];
                self.dev.dtoh(&mut x, v.ptr())?;
                HostVector::Float(x)
            }
            VType::Bool => {
                let mut x = vec![0u8; n];
                self.dev.dtoh(&mut x, v.ptr())?;
                HostVector::Bool(x.into_iter().map(|b| b != 0).collect())
            }
        })
    }

    fn get_int(&mut self, v: &CudaVector, i: usize) -> Result<i64, Trap> {
        want(v, VType::Int, "the scalar")?;
        if i >= v.0.len {
            return Err(Trap::index(i as i64, v.0.len));
        }
        if let Some(HostScalar::Int(x)) = v.known() {
            return Ok(x);
        }
        Ok(self.read_scalar(v.ptr() + 8 * i as u64, 8)? as i64)
    }

    fn get_bool(&mut self, v: &CudaVector, i: usize) -> Result<bool, Trap> {
        want(v, VType::Bool, "the flag")?;
        if i >= v.0.len {
            return Err(Trap::index(i as i64, v.0.len));
        }
        if let Some(HostScalar::Bool(x)) = v.known() {
            return Ok(x);
        }
        Ok(self.read_scalar(v.ptr() + i as u64, 1)? != 0)
    }

    fn fill(&mut self, value: HostScalar, n: usize) -> Result<CudaVector, Trap> {
        if n == 1 {
            return self.scalar(value);
        }
        let sum = match value {
            HostScalar::Int(x) => usize::try_from(x).ok().and_then(|x| x.checked_mul(n)),
            _ => None,
        };
        Ok(self.fill_device(value, n)?.with_sum(sum))
    }

    fn make_segdes(&mut self, lengths: &CudaVector) -> Result<CudaSegdes, Trap> {
        want(lengths, VType::Int, "MAKE_SEGDES lengths")?;
        let m = lengths.0.len;
        let lo = self.dev.alloc(16 * m)?;
        if m == 0 {
            return Ok(self.segdes(0, 0, lo));
        }
        if let Some(HostScalar::Int(l)) = lengths.known() {
            // One segment of a length the host knows: no device work until it is used.
            if l < 0 {
                return Err(Trap::new(TrapKind::NegativeLength(l)));
            }
            self.dev.write_later(lo.ptr(), l as u64, false);
            self.dev.write_later(lo.ptr() + 8, 0, false);
            return Ok(self.segdes(1, l as usize, lo));
        }
        self.dev.copy_dtod(lo.ptr(), lengths.ptr(), 8 * m)?;
        let offs = lo.ptr() + 8 * m as u64;
        if let Some(n) = lengths.known_sum() {
            // Lengths the host knows to be valid, with their total: offsets only.
            self.scan_raw("add_z", 8, &TileSrc::Vector(lo.ptr()), 0, m, offs, ScanMode::Exclusive)?;
            return Ok(self.segdes(m, n, lo));
        }
        if m == 1 {
            // The common case (a flat vector): no kernel, one read of the length.
            self.dev.memset(offs, 0, 8)?;
            let l = self.read_scalar(lengths.ptr(), 8)? as i64;
            if l < 0 {
                return Err(Trap::new(TrapKind::NegativeLength(l)));
            }
            return Ok(self.segdes(1, l as usize, lo));
        }
        self.scan_raw("add_z", 8, &TileSrc::Vector(lo.ptr()), 0, m, offs, ScanMode::Exclusive)?;
        self.dev.launch_n(
            "mke_check",
            m,
            &[P(lo.ptr()), P(offs), I(m as i64), P(self.err_slot())],
        )?;
        // One round trip brings back the element count and any negative length.
        let mb = self.read_mailbox()?;
        let n = usize::try_from(mb[3]).map_err(|_| {
            Trap::new(TrapKind::OutOfMemory(format!(
                "segment lengths sum to {}",
                mb[3]
            )))
        })?;
        Ok(self.segdes(m, n, lo))
    }

    fn segdes_from_host(&mut self, lengths: &[i64]) -> Result<CudaSegdes, Trap> {
        let m = lengths.len();
        let mut lo: Vec<i64> = Vec::with_capacity(2 * m);
        lo.extend_from_slice(lengths);
        let mut total: i64 = 0;
        for &l in lengths {
            if l < 0 {
                return Err(Trap::new(TrapKind::NegativeLength(l)));
            }
            lo.push(total);
            total = total.checked_add(l).ok_or_else(|| {
                Trap::new(TrapKind::OutOfMemory("segment lengths overflow".into()))
            })?;
        }
        let buf = self.dev.alloc(16 * m)?;
        self.dev.htod(buf.ptr(), &lo)?;
        Ok(self.segdes(m, total as usize, buf))
    }

    fn lengths(&mut self, s: &CudaSegdes) -> Result<CudaVector, Trap> {
        let out = self.new_vec(VType::Int, s.0.m)?;
        self.dev.copy_dtod(out.ptr(), s.lens(), 8 * s.0.m)?;
        Ok(out.with_sum(Some(s.0.n)))
    }

    fn segdes_to_host(&mut self, s: &CudaSegdes) -> Result<Vec<i64>, Trap> {
        self.segdes_to_host_prefix(s, usize::MAX)
    }

    fn segdes_to_host_prefix(&mut self, s: &CudaSegdes, n: usize) -> Result<Vec<i64>, Trap> {
        self.flush_pending()?;
        let mut x = vec![0i64; s.0.m.min(n)];
        self.dev.dtoh(&mut x, s.lens())?;
        Ok(x)
    }

    fn binary(&mut self, op: BinOp, a: &CudaVector, b: &CudaVector) -> Result<CudaVector, Trap> {
        if a.0.len != b.0.len {
            return Err(Trap::length(format!(
                "operands of `{}` have lengths {} and {}",
                binop_name(op),
                a.0.len,
                b.0.len
            )));
        }
        if a.0.ty != b.0.ty {
            return Err(Trap::ty(format!(
                "operands of `{}` are {} and {}",
                binop_name(op),
                a.0.ty.name(),
                b.0.ty.name()
            )));
        }
        let row = crate::semantics::binary(op, a.0.ty)
            .ok_or_else(|| unsupported(&format!("`{}`", binop_name(op)), a.0.ty))?;
        if let Some(r) = self.binary_on_host(op, a, b) {
            return r;
        }
        let n = a.0.len;
        let out = self.new_vec(row.result, n)?;
        self.dev.launch_n(
            row.kernel,
            n,
            &[
                P(a.ptr()),
                P(b.ptr()),
                P(out.ptr()),
                I(n as i64),
                P(self.err_slot()),
            ],
        )?;
        if row.may_trap && n > 0 {
            self.check()?;
        }
        Ok(out)
    }

    fn unary(&mut self, op: UnOp, a: &CudaVector) -> Result<CudaVector, Trap> {
        let row = crate::semantics::unary(op, a.0.ty)
            .ok_or_else(|| unsupported(&format!("`{}`", vcode::fused::unop_name(op)), a.0.ty))?;
        if let Some(r) = self.unary_on_host(op, a) {
            return r;
        }
        let n = a.0.len;
        let out = self.new_vec(row.result, n)?;
        self.dev
            .launch_n(row.kernel, n, &[P(a.ptr()), P(out.ptr()), I(n as i64)])?;
        Ok(out)
    }

    fn select(
        &mut self,
        f: &CudaVector,
        a: &CudaVector,
        b: &CudaVector,
    ) -> Result<CudaVector, Trap> {
        check::select(f.sh(), a.sh(), b.sh())?;
        if let Some(r) = self.select_on_host(f, a, b) {
            return r;
        }
        let k = match a.0.ty {
            VType::Int => "sel_wuz",
            VType::Float => "sel_wud",
            VType::Bool => "sel_wub",
        };
        let n = a.0.len;
        let out = self.new_vec(a.0.ty, n)?;
        self.dev.launch_n(
            k,
            n,
            &[
                P(f.ptr()),
                P(a.ptr()),
                P(b.ptr()),
                P(out.ptr()),
                I(n as i64),
            ],
        )?;
        Ok(out)
    }

    fn rand(&mut self, bounds: &CudaVector) -> Result<CudaVector, Trap> {
        want(bounds, VType::Int, "RAND bounds")?;
        let n = bounds.0.len;
        let out = self.new_vec(VType::Int, n)?;
        if n == 0 {
            return Ok(out);
        }
        self.dev.launch_n(
            "rnd_wuz",
            n,
            &[
                P(bounds.ptr()),
                P(out.ptr()),
                I(n as i64),
                U(self.rng),
                P(self.err_slot()),
            ],
        )?;
        // A zero bound traps (DivisionByZero), as on the CPU.
        self.check()?;
        self.rng = self
            .rng
            .wrapping_add((n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        Ok(out)
    }

    fn srand(&mut self, seed: i64) -> Result<(), Trap> {
        self.rng = seed as u64;
        Ok(())
    }

    fn scan(&mut self, op: ReduceOp, v: &CudaVector, s: &CudaSegdes) -> Result<CudaVector, Trap> {
        check::scan_reduce(true, v.sh(), s.sh())?;
        self.scan_from(op, v.0.ty, &TileSrc::Vector(v.ptr()), s)
    }

    fn reduce(&mut self, op: ReduceOp, v: &CudaVector, s: &CudaSegdes) -> Result<CudaVector, Trap> {
        check::scan_reduce(false, v.sh(), s.sh())?;
        let r = self.reduce_from(op, v.0.ty, &TileSrc::Vector(v.ptr()), s)?;
        // Per-segment sums of non-negative elements: non-negative, with the same total.
        Ok(if op == ReduceOp::Add { r.with_sum(v.known_sum()) } else { r })
    }

    fn permute(
        &mut self,
        v: &CudaVector,
        i: &CudaVector,
        s: &CudaSegdes,
    ) -> Result<CudaVector, Trap> {
        check::permute(v.sh(), i.sh(), s.sh())?;
        let n = s.0.n;
        let out = self.new_vec(v.0.ty, n)?;
        if n == 0 {
            return Ok(out);
        }
        self.dev.memset(out.ptr(), 0, n * esize(v.0.ty))?;
        let seg = self.seg_index(s)?;
        self.dev.launch_n(
            &format!("smp_pe{}", sfx(v.0.ty)),
            n,
            &[
                P(v.ptr()),
                P(i.ptr()),
                P(seg),
                P(s.lens()),
                P(s.offs()),
                I(n as i64),
                P(out.ptr()),
                P(self.err_slot()),
            ],
        )?;
        self.check()?;
        Ok(out)
    }

    fn dpermute(
        &mut self,
        v: &CudaVector,
        i: &CudaVector,
        d: &CudaVector,
        ss: &CudaSegdes,
        sd: &CudaSegdes,
    ) -> Result<CudaVector, Trap> {
        check::dpermute(v.sh(), i.sh(), d.sh(), ss.sh(), sd.sh())?;
        let out = self.copy_of(d)?;
        self.scatter(&out, v, i, 0, ss, sd)?;
        Ok(out)
    }

    fn fpermute(
        &mut self,
        v: &CudaVector,
        i: &CudaVector,
        f: &CudaVector,
        ss: &CudaSegdes,
        sd: &CudaSegdes,
    ) -> Result<CudaVector, Trap> {
        check::fpermute(v.sh(), i.sh(), f.sh(), ss.sh(), sd.sh())?;
        let out = self.new_vec(v.0.ty, sd.0.n)?;
        self.dev.memset(out.ptr(), 0, sd.0.n * esize(v.0.ty))?;
        self.scatter(&out, v, i, f.ptr(), ss, sd)?;
        Ok(out)
    }

    fn bpermute(
        &mut self,
        v: &CudaVector,
        i: &CudaVector,
        ss: &CudaSegdes,
        sd: &CudaSegdes,
    ) -> Result<CudaVector, Trap> {
        check::bpermute(v.sh(), i.sh(), ss.sh(), sd.sh())?;
        self.gather(v, i, 0, ss, sd)
    }

    fn bfpermute(
        &mut self,
        v: &CudaVector,
        i: &CudaVector,
        f: &CudaVector,
        ss: &CudaSegdes,
        sd: &CudaSegdes,
    ) -> Result<CudaVector, Trap> {
        check::bfpermute(v.sh(), i.sh(), f.sh(), ss.sh(), sd.sh())?;
        self.gather(v, i, f.ptr(), ss, sd)
    }

    fn dfpermute(
        &mut self,
        v: &CudaVector,
        i: &CudaVector,
        f: &CudaVector,
        d: &CudaVector,
        ss: &CudaSegdes,
        sd: &CudaSegdes,
    ) -> Result<CudaVector, Trap> {
        check::dfpermute(v.sh(), i.sh(), f.sh(), d.sh(), ss.sh(), sd.sh())?;
        let out = self.copy_of(d)?;
        self.scatter(&out, v, i, f.ptr(), ss, sd)?;
        Ok(out)
    }

    fn dist(&mut self, x: &CudaVector, s: &CudaSegdes) -> Result<CudaVector, Trap> {
        check::dist(x.sh(), s.sh())?;
        let n = s.0.n;
        if let (Some(value), 1) = (x.known(), s.0.m) {
            // One known value over one segment: a fill (whose sum the host knows).
            return self.fill(value, n);
        }
        let out = self.new_vec(x.0.ty, n)?;
        if n == 0 {
            return Ok(out);
        }
        let seg = self.seg_index(s)?;
        self.dev.launch_n(
            &format!("dis_ve{}", sfx(x.0.ty)),
            n,
            &[P(x.ptr()), P(seg), I(n as i64), P(out.ptr())],
        )?;
        Ok(out)
    }

    fn index(
        &mut self,
        b: &CudaVector,
        k: &CudaVector,
        s: &CudaSegdes,
    ) -> Result<CudaVector, Trap> {
        check::index(b.sh(), k.sh(), s.sh())?;
        let n = s.0.n;
        let out = self.new_vec(VType::Int, n)?;
        if n == 0 {
            return Ok(out);
        }
        let seg = self.seg_index(s)?;
        self.dev.launch_n(
            "ind_lez",
            n,
            &[
                P(b.ptr()),
                P(k.ptr()),
                P(seg),
                P(s.offs()),
                I(n as i64),
                P(out.ptr()),
            ],
        )?;
        Ok(out)
    }

    fn extract(
        &mut self,
        v: &CudaVector,
        i: &CudaVector,
        s: &CudaSegdes,
    ) -> Result<CudaVector, Trap> {
        check::extract(v.sh(), i.sh(), s.sh())?;
        let m = s.0.m;
        let out = self.new_vec(v.0.ty, m)?;
        if m == 0 {
            return Ok(out);
        }
        self.dev.launch_n(
            &format!("ext_ve{}", sfx(v.0.ty)),
            m,
            &[
                P(v.ptr()),
                P(i.ptr()),
                P(s.lens()),
                P(s.offs()),
                I(m as i64),
                P(out.ptr()),
                P(self.err_slot()),
            ],
        )?;
        self.check()?;
        Ok(out)
    }

    fn replace(
        &mut self,
        v: &CudaVector,
        i: &CudaVector,
        x: &CudaVector,
        s: &CudaSegdes,
    ) -> Result<CudaVector, Trap> {
        check::replace(v.sh(), i.sh(), x.sh(), s.sh())?;
        let out = self.copy_of(v)?;
        let m = s.0.m;
        if m == 0 {
            return Ok(out);
        }
        self.dev.launch_n(
            &format!("rep_ve{}", sfx(v.0.ty)),
            m,
            &[
                P(out.ptr()),
                P(i.ptr()),
                P(x.ptr()),
                P(s.lens()),
                P(s.offs()),
                I(m as i64),
                P(self.err_slot()),
            ],
        )?;
        self.check()?;
        Ok(out)
    }

    fn pack(
        &mut self,
        v: &CudaVector,
        f: &CudaVector,
        s: &CudaSegdes,
    ) -> Result<(CudaVector, CudaSegdes), Trap> {
        check::pack(v.sh(), f.sh(), s.sh())?;
        let (m, n) = (s.0.m, s.0.n);
        if n == 0 {
            let lo = self.dev.alloc(16 * m)?;
            self.dev.memset(lo.ptr(), 0, 16 * m)?;
            return Ok((self.new_vec(v.0.ty, 0)?, self.segdes(m, 0, lo)));
        }
        // pos = inclusive +-scan of the flags: 1-based target of each kept element.
        let pos = self.dev.alloc(8 * n)?;
        self.scan_raw("add_bz", 8, &TileSrc::Vector(f.ptr()), 0, n, pos.ptr(), ScanMode::Inclusive)?;
        let total = (self.read_scalar(pos.ptr() + 8 * (n as u64 - 1), 8)? as i64).max(0) as usize;
        let out = self.new_vec(v.0.ty, total)?;
        self.dev.launch_n(
            &format!("pk2_le{}", sfx(v.0.ty)),
            n,
            &[
                P(v.ptr()),
                P(f.ptr()),
                P(pos.ptr()),
                I(n as i64),
                P(out.ptr()),
            ],
        )?;
        let lo = self.dev.alloc(16 * m)?;
        self.dev.launch_n(
            "pk1_lev",
            m,
            &[
                P(pos.ptr()),
                P(s.lens()),
                P(s.offs()),
                I(m as i64),
                P(lo.ptr()),
                P(lo.ptr() + 8 * m as u64),
            ],
        )?;
        Ok((out, self.segdes(m, total, lo)))
    }

    fn rank(&mut self, up: bool, v: &CudaVector, s: &CudaSegdes) -> Result<CudaVector, Trap> {
        check::rank(v.sh(), s.sh())?;
        let kk = match v.0.ty {
            VType::Int => "rank_keys_z",
            VType::Float => "rank_keys_d",
            VType::Bool => return Err(unsupported("RANK", VType::Bool)),
        };
        let n = s.0.n;
        let out = self.new_vec(VType::Int, n)?;
        if n == 0 {
            return Ok(out);
        }
        let mut ka = self.dev.alloc(8 * n)?;
        let mut pa = self.dev.alloc(8 * n)?;
        let mut kb = self.dev.alloc(8 * n)?;
        let mut pb = self.dev.alloc(8 * n)?;
        self.dev.launch_n(
            kk,
            n,
            &[
                P(v.ptr()),
                I(n as i64),
                I32(i32::from(up)),
                P(ka.ptr()),
                P(pa.ptr()),
            ],
        )?;
        let nblocks = n.div_ceil(RTILE);
        let hist = self.dev.alloc(8 * 256 * nblocks)?;
        let passes = |this: &mut CudaCvl,
                      varying: u64,
                      ka: &mut crate::DevBuf,
                      pa: &mut crate::DevBuf,
                      kb: &mut crate::DevBuf,
                      pb: &mut crate::DevBuf|
         -> Result<(), Trap> {
            for shift in (0..64).step_by(8) {
                if (varying >> shift) & 0xff == 0 {
                    continue;
                }
                this.radix_pass(
                    n,
                    shift,
                    ka.ptr(),
                    pa.ptr(),
                    kb.ptr(),
                    pb.ptr(),
                    hist.ptr(),
                    nblocks,
                )?;
                std::mem::swap(ka, kb);
                std::mem::swap(pa, pb);
            }
            Ok(())
        };
        if n > 1 {
            let varying = self.varying_bits(ka.ptr(), n)?;
            passes(self, varying, &mut ka, &mut pa, &mut kb, &mut pb)?;
        }
        let seg = self.seg_index(s)?;
        if seg != 0 {
            // Stable passes on the segment index put each segment's elements together.
            self.dev.launch_n(
                "rank_segkeys",
                n,
                &[P(pa.ptr()), P(seg), I(n as i64), P(ka.ptr())],
            )?;
            let bits = 64 - ((s.0.m - 1) as u64).leading_zeros();
            let varying = if bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            passes(self, varying, &mut ka, &mut pa, &mut kb, &mut pb)?;
        }
        self.dev.launch_n(
            "rank_finish",
            n,
            &[P(pa.ptr()), P(seg), P(s.offs()), I(n as i64), P(out.ptr())],
        )?;
        Ok(out)
    }

    fn fused(
        &mut self,
        op: &vcode::fused::SuperOp,
        args: &[Option<&CudaVector>],
        len: usize,
    ) -> Result<CudaVector, Trap> {
        // A folding superoperator runs through `fused_fold`, a guarded one through
        // `fused_guarded`, never as a plain element-wise one.
        if op.fold.is_some() {
            return Err(Trap::ty("a folding superoperator is not element-wise"));
        }
        if op.guard.is_some() {
            return Err(Trap::ty("a superoperator with a guard pushes two results"));
        }
        if op.pack.is_some() {
            return Err(Trap::ty("a superoperator with a pack pushes a vector and a segment descriptor per flag"));
        }
        if !op.more.is_empty() {
            return Err(Trap::ty("a superoperator with several results pushes each (FUSED runs it through `fused_many`)"));
        }
        self.run_superop(op, args, len)
    }

    fn fused_fold(
        &mut self,
        op: &vcode::fused::SuperOp,
        args: &[Option<&CudaVector>],
        seg: &CudaSegdes,
        len: usize,
    ) -> Result<CudaVector, Trap> {
        if op.fold.is_none() {
            return Err(Trap::ty("superoperator has no fold"));
        }
        self.run_fold(op, args, seg, len)
    }

    fn fused_guarded(
        &mut self,
        op: &vcode::fused::SuperOp,
        args: &[Option<&CudaVector>],
        seg: &CudaSegdes,
        len: usize,
    ) -> Result<(CudaVector, CudaVector), Trap> {
        if op.guard.is_none() || !op.more.is_empty() {
            return Err(Trap::ty("superoperator has no guard, or several results"));
        }
        self.run_guarded(op, args, seg, len)
    }

    fn fused_many(
        &mut self,
        op: &vcode::fused::SuperOp,
        args: &[Option<&CudaVector>],
        seg: Option<&CudaSegdes>,
        len: usize,
    ) -> Result<Vec<CudaVector>, Trap> {
        if op.pack.is_some() {
            return Err(Trap::ty("a superoperator with a pack has one kind of result"));
        }
        if op.fold.is_some() {
            // Several reductions: one fold kernel each (`SuperOp::parts`).
            return vcode::cvl::fused_many_by_parts(self, op, args, seg, len);
        }
        self.run_many(op, args, seg, len)
    }
}
