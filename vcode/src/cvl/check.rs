//! The argument checks of every CVL operation, in one place for every backend.
//!
//! A backend describes its operands by their shapes ([`V`]: element type and length;
//! [`S`]: segment and element counts) and calls the check named after the operation
//! before it touches any data; the messages are therefore the same on the CPU and on
//! CUDA. What these checks cannot see (index values, segment lengths) each backend checks
//! on its data.

use super::VType;
use crate::trap::Trap;

/// The shape of a data vector operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct V {
    /// Element type.
    pub ty: VType,
    /// Number of elements.
    pub len: usize,
}

/// The shape of a segment descriptor operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct S {
    /// Number of segments.
    pub m: usize,
    /// Number of elements (sum of the lengths).
    pub n: usize,
}

/// `have` must equal `want`.
pub fn len(what: &str, have: usize, want: usize) -> Result<(), Trap> {
    if have == want {
        Ok(())
    } else {
        Err(Trap::length(format!("{what} has length {have}, expected {want}")))
    }
}

/// `v` must have element type `ty`.
pub fn ty(v: V, ty: VType, what: &str) -> Result<(), Trap> {
    if v.ty == ty {
        Ok(())
    } else {
        Err(Trap::ty(format!("{what} must be {}, not {}", ty.name(), v.ty.name())))
    }
}

/// `a` and `b` must have one element type.
pub fn same_type(a: V, b: V) -> Result<(), Trap> {
    if a.ty == b.ty {
        Ok(())
    } else {
        Err(Trap::ty(format!(
            "values are {} and {}; they must have one type",
            a.ty.name(),
            b.ty.name()
        )))
    }
}

/// Source and destination descriptors must have one segment count.
pub fn same_m(ss: S, sd: S) -> Result<(), Trap> {
    if ss.m == sd.m {
        Ok(())
    } else {
        Err(Trap::length(format!(
            "source descriptor has {} segments, destination descriptor {}",
            ss.m, sd.m
        )))
    }
}

/// `SCAN` / `REDUCE`.
pub fn scan_reduce(scan: bool, v: V, s: S) -> Result<(), Trap> {
    len(if scan { "the scanned vector" } else { "the reduced vector" }, v.len, s.n)
}

/// `PERMUTE`.
pub fn permute(v: V, i: V, s: S) -> Result<(), Trap> {
    ty(i, VType::Int, "PERMUTE indices")?;
    len("PERMUTE data", v.len, s.n)?;
    len("PERMUTE indices", i.len, s.n)
}

/// `DPERMUTE`.
pub fn dpermute(v: V, i: V, d: V, ss: S, sd: S) -> Result<(), Trap> {
    ty(i, VType::Int, "DPERMUTE indices")?;
    len("DPERMUTE data", v.len, ss.n)?;
    len("DPERMUTE indices", i.len, ss.n)?;
    len("DPERMUTE defaults", d.len, sd.n)?;
    same_m(ss, sd)?;
    same_type(v, d)
}

/// `FPERMUTE`.
pub fn fpermute(v: V, i: V, f: V, ss: S, sd: S) -> Result<(), Trap> {
    ty(i, VType::Int, "FPERMUTE indices")?;
    ty(f, VType::Bool, "FPERMUTE flags")?;
    len("FPERMUTE data", v.len, ss.n)?;
    len("FPERMUTE indices", i.len, ss.n)?;
    len("FPERMUTE flags", f.len, ss.n)?;
    same_m(ss, sd)
}

/// `BPERMUTE`.
pub fn bpermute(v: V, i: V, ss: S, sd: S) -> Result<(), Trap> {
    ty(i, VType::Int, "BPERMUTE indices")?;
    len("BPERMUTE data", v.len, ss.n)?;
    len("BPERMUTE indices", i.len, sd.n)?;
    same_m(ss, sd)
}

/// `BFPERMUTE`.
pub fn bfpermute(v: V, i: V, f: V, ss: S, sd: S) -> Result<(), Trap> {
    ty(i, VType::Int, "BFPERMUTE indices")?;
    ty(f, VType::Bool, "BFPERMUTE flags")?;
    len("BFPERMUTE data", v.len, ss.n)?;
    len("BFPERMUTE indices", i.len, sd.n)?;
    len("BFPERMUTE flags", f.len, sd.n)?;
    same_m(ss, sd)
}

/// `DFPERMUTE`.
pub fn dfpermute(v: V, i: V, f: V, d: V, ss: S, sd: S) -> Result<(), Trap> {
    ty(i, VType::Int, "DFPERMUTE indices")?;
    ty(f, VType::Bool, "DFPERMUTE flags")?;
    len("DFPERMUTE data", v.len, ss.n)?;
    len("DFPERMUTE indices", i.len, ss.n)?;
    len("DFPERMUTE flags", f.len, ss.n)?;
    len("DFPERMUTE defaults", d.len, sd.n)?;
    same_m(ss, sd)?;
    same_type(v, d)
}

/// `DIST`.
pub fn dist(x: V, s: S) -> Result<(), Trap> {
    len("DIST values (one per segment)", x.len, s.m)
}

/// `INDEX`.
pub fn index(b: V, k: V, s: S) -> Result<(), Trap> {
    ty(b, VType::Int, "INDEX start")?;
    ty(k, VType::Int, "INDEX stride")?;
    len("INDEX start (one per segment)", b.len, s.m)?;
    len("INDEX stride (one per segment)", k.len, s.m)
}

/// `EXTRACT`.
pub fn extract(v: V, i: V, s: S) -> Result<(), Trap> {
    ty(i, VType::Int, "EXTRACT indices")?;
    len("EXTRACT data", v.len, s.n)?;
    len("EXTRACT indices (one per segment)", i.len, s.m)
}

/// `REPLACE`.
pub fn replace(v: V, i: V, x: V, s: S) -> Result<(), Trap> {
    ty(i, VType::Int, "REPLACE indices")?;
    len("REPLACE data", v.len, s.n)?;
    len("REPLACE indices (one per segment)", i.len, s.m)?;
    len("REPLACE values (one per segment)", x.len, s.m)?;
    same_type(v, x)
}

/// `PACK`.
pub fn pack(v: V, f: V, s: S) -> Result<(), Trap> {
    ty(f, VType::Bool, "PACK flags")?;
    len("PACK data", v.len, s.n)?;
    len("PACK flags", f.len, s.n)
}

/// `RANK_UP` / `RANK_DOWN`.
pub fn rank(v: V, s: S) -> Result<(), Trap> {
    len("the ranked vector", v.len, s.n)?;
    if v.ty == VType::Bool {
        return Err(Trap::ty("RANK is not defined on BOOL".to_string()));
    }
    Ok(())
}

/// `SELECT`.
pub fn select(f: V, a: V, b: V) -> Result<(), Trap> {
    if f.len != a.len || a.len != b.len {
        return Err(Trap::length(format!(
            "operands of `SELECT` have lengths {}, {} and {}",
            f.len, a.len, b.len
        )));
    }
    if f.ty != VType::Bool {
        return Err(Trap::ty(format!("`SELECT` flags are {}, not BOOL", f.ty.name())));
    }
    if a.ty != b.ty {
        return Err(Trap::ty(format!("branches of `SELECT` are {} and {}", a.ty.name(), b.ty.name())));
    }
    Ok(())
}
