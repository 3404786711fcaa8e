//! Scalars the host knows: one-element vectors whose value the host has without asking
//! the device.
//!
//! Serial code (loop counters, lengths, flags of `IF`) works on one-element vectors. On the
//! device each of its operations would be a kernel launch and each `IF` a host round trip
//! that waits for all queued work: thousands of times slower than the arithmetic. So a
//! one-element vector made from a host value (a `CONST`, `LENGTH`, a host vector of one
//! element) remembers that value, and an element-wise operation whose operands all have
//! known values is computed on the host by the CPU library (the same results and traps as
//! the CPU backend) instead of by a kernel. Its result is known in turn; its device copy is
//! written (a fill kernel, queued, no synchronisation) just before the next device
//! operation, and not at all if the vector is dropped first. Reading a known value (`IF`, `MAKE_SEGDES` of one segment, printing) needs no
//! round trip.
//!
//! Vectors are immutable once made (no operation of this library writes into an operand),
//! so a known value never goes stale.

use std::rc::Rc;

use vcode::cvl::{BinOp, UnOp};
use vcode::fused::SuperOp;
use vcode::{CpuCvl, Cvl, HostScalar, HostVector, Trap, VType};

use crate::{CudaCvl, CudaVector, VecData};

impl CudaVector {
    /// The value of a one-element vector the host knows.
    pub(crate) fn known(&self) -> Option<HostScalar> {
        self.0.known
    }

    /// The sum of an `INT` vector the host knows to hold no negative element.
    pub(crate) fn known_sum(&self) -> Option<usize> {
        self.0.sum
    }

    /// This fresh vector, marked as holding no negative element and summing to `sum`.
    pub(crate) fn with_sum(self, sum: Option<usize>) -> CudaVector {
        if sum.is_none() || self.0.ty != VType::Int {
            return self;
        }
        match Rc::try_unwrap(self.0) {
            Ok(data) => CudaVector(Rc::new(VecData { sum, ..data })),
            Err(shared) => CudaVector(shared),
        }
    }
}

fn host_vector(x: HostScalar) -> HostVector {
    match x {
        HostScalar::Int(v) => HostVector::Int(vec![v]),
        HostScalar::Float(v) => HostVector::Float(vec![v]),
        HostScalar::Bool(v) => HostVector::Bool(vec![v]),
    }
}

/// The element of a one-element host vector.
pub(crate) fn only_element(v: &HostVector) -> Option<HostScalar> {
    match v {
        HostVector::Int(x) if x.len() == 1 => Some(HostScalar::Int(x[0])),
        HostVector::Float(x) if x.len() == 1 => Some(HostScalar::Float(x[0])),
        HostVector::Bool(x) if x.len() == 1 => Some(HostScalar::Bool(x[0])),
        _ => None,
    }
}

impl CudaCvl {
    /// A one-element device vector holding `value`, known to the host. Its device copy is
    /// written (by a fill kernel, queued behind earlier work) only when some device
    /// operation comes before the vector is dropped.
    pub(crate) fn scalar(&mut self, value: HostScalar) -> Result<CudaVector, Trap> {
        let (ty, bits) = crate::ops::scalar_bits(value);
        let byte = ty == VType::Bool;
        let buf = self.dev.alloc(crate::esize(ty))?;
        self.dev.write_later(buf.ptr(), bits, byte);
        let sum = match value {
            HostScalar::Int(x) => usize::try_from(x).ok(),
            _ => None,
        };
        Ok(CudaVector(Rc::new(VecData { buf, len: 1, ty, known: Some(value), sum })))
    }

    /// Runs `f` on the CPU library over the known values of `operands` when every one is a
    /// known one-element vector: `None` when some value is not known (the device computes
    /// it), else the result as a known scalar (or the CPU library's trap).
    fn on_host(
        &mut self,
        operands: &[&CudaVector],
        f: impl FnOnce(&mut CpuCvl, &[<CpuCvl as Cvl>::Vector]) -> Result<<CpuCvl as Cvl>::Vector, Trap>,
    ) -> Option<Result<CudaVector, Trap>> {
        let values: Vec<HostScalar> = operands.iter().map(|v| v.known()).collect::<Option<_>>()?;
        let run = |cvl: &mut CudaCvl| -> Result<CudaVector, Trap> {
            let vs = values
                .iter()
                .map(|x| cvl.host.from_host(host_vector(*x)))
                .collect::<Result<Vec<_>, Trap>>()?;
            let r = f(&mut cvl.host, &vs)?;
            let h = cvl.host.to_host(&r)?;
            match only_element(&h) {
                Some(x) => cvl.scalar(x),
                None => Err(Trap::ty("a scalar operation gave other than one element")),
            }
        };
        Some(run(self))
    }

    /// An element-wise binary operation on known scalars, on the host.
    pub(crate) fn binary_on_host(&mut self, op: BinOp, a: &CudaVector, b: &CudaVector) -> Option<Result<CudaVector, Trap>> {
        self.on_host(&[a, b], |c, v| c.binary(op, &v[0], &v[1]))
    }

    /// An element-wise unary operation on a known scalar, on the host.
    pub(crate) fn unary_on_host(&mut self, op: UnOp, a: &CudaVector) -> Option<Result<CudaVector, Trap>> {
        self.on_host(&[a], |c, v| c.unary(op, &v[0]))
    }

    /// `SELECT` on known scalars, on the host.
    pub(crate) fn select_on_host(&mut self, f: &CudaVector, a: &CudaVector, b: &CudaVector) -> Option<Result<CudaVector, Trap>> {
        self.on_host(&[f, a, b], |c, v| c.select(&v[0], &v[1], &v[2]))
    }

    /// An element-wise superoperator over one position whose data operands are all known
    /// scalars, on the host (segment descriptor operands stay `None`).
    pub(crate) fn fused_on_host(&mut self, op: &SuperOp, args: &[Option<&CudaVector>], len: usize) -> Option<Result<CudaVector, Trap>> {
        if len != 1 || op.fold.is_some() || op.guard.is_some() || op.pack.is_some() || !op.more.is_empty() {
            return None;
        }
        let data: Vec<&CudaVector> = args.iter().flatten().copied().collect();
        let shape: Vec<bool> = args.iter().map(|a| a.is_some()).collect();
        self.on_host(&data, |c, v| {
            let mut it = v.iter();
            let cargs: Vec<Option<&<CpuCvl as Cvl>::Vector>> =
                shape.iter().map(|&has| if has { it.next() } else { None }).collect();
            c.fused(op, &cargs, 1)
        })
    }
}
