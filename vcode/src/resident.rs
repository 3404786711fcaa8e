//! Values kept in a vector library from one run to the next.
//!
//! A top-level NESL session runs one program per form, and a later form uses the values
//! of earlier ones (`xs = ...; sum(xs);`). Copying every such value to the host after
//! its run and back into the library for each later run costs a copy of every global
//! per form (and on a GPU, a transfer each way). Instead, [`run_resident`] leaves a
//! run's final stack in a [`Residents`] store and returns [`Const::Resident`] handles for
//! it; a later program that holds such a constant loads the stored vector itself
//! (sharing it, as any constant is shared), and [`Residents::to_host`] copies a value out
//! only when it is printed.
//!
//! A stored value lives as long as some [`Resident`] handle to it does (the session's
//! globals, a program being compiled): the store keeps only weak references to the
//! handles and drops the values whose handles are all gone ([`Residents::collect`]).

use crate::cvl::{Cvl, HostScalar};
use crate::interp::{to_host_value, Value};
use crate::ir::Const;
use crate::op::Ty;
use crate::trap::{Trap, TrapKind};
use crate::HostValue;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

/// Tells stores apart, so that a handle given to another library is an error, not a
/// wrong value.
static NEXT_STORE: AtomicU64 = AtomicU64::new(1);

#[derive(Debug, PartialEq, Eq)]
struct Key {
    store: u64,
    id: u64,
    ty: Ty,
}

/// A handle to a value kept in a [`Residents`] store: the immediate of a
/// [`Const::Resident`]. Cloning it shares the value.
#[derive(Debug, Clone)]
pub struct Resident(Arc<Key>);

impl Resident {
    /// The type keyword of the value (`SEGDES` for a segment descriptor).
    pub fn ty(&self) -> Ty {
        self.0.ty
    }

    /// The number that names the value in its store (for printing).
    pub fn id(&self) -> u64 {
        self.0.id
    }
}

impl PartialEq for Resident {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
    }
}

/// Values kept in the vector library `C` between runs (see the module documentation).
pub struct Residents<C: Cvl> {
    store: u64,
    next: u64,
    values: HashMap<u64, (Weak<Key>, Value<C>)>,
}

impl<C: Cvl> Default for Residents<C> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: Cvl> Residents<C> {
    /// An empty store.
    pub fn new() -> Self {
        Residents { store: NEXT_STORE.fetch_add(1, Ordering::Relaxed), next: 0, values: HashMap::new() }
    }

    /// How many values the store holds (values whose handles are gone count until the
    /// next [`Residents::collect`]).
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// True when the store holds nothing.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Drops the values no [`Resident`] handle refers to any more.
    pub fn collect(&mut self) {
        self.values.retain(|_, (handle, _)| handle.strong_count() > 0);
    }

    /// Keeps `v`; the handle to it.
    pub(crate) fn keep(&mut self, cvl: &C, v: Value<C>) -> Const {
        let ty = match &v {
            Value::Vec(x) => cvl.vtype(x).into(),
            Value::Scalar(x) => x.vtype().into(),
            // A pair is not a value a program leaves; it cannot be printed either, so its
            // type keyword only matters to the verifier, which rejects it.
            Value::Seg(_) | Value::Pair(_) => Ty::Segdes,
        };
        self.next += 1;
        let key = Arc::new(Key { store: self.store, id: self.next, ty });
        self.values.insert(self.next, (Arc::downgrade(&key), v));
        Const::Resident(Resident(key))
    }

    /// The stored value of `r`; an error when `r` belongs to another store or its value
    /// was dropped.
    pub(crate) fn get(&self, r: &Resident) -> Result<&Value<C>, Trap> {
        if r.0.store != self.store {
            return Err(Trap::new(TrapKind::Unsupported(format!(
                "resident value #{} belongs to another vector library",
                r.0.id
            ))));
        }
        self.values
            .get(&r.0.id)
            .map(|(_, v)| v)
            .ok_or_else(|| Trap::new(TrapKind::Unsupported(format!("resident value #{} is no longer kept", r.0.id))))
    }

    /// A host copy of `c`: a stored value copied out of the library, or a constant's own
    /// data.
    pub fn to_host(&self, cvl: &mut C, c: &Const) -> Result<HostValue, Trap> {
        match (c, c.to_host()) {
            (_, Some(h)) => Ok(h),
            (Const::Resident(r), None) => to_host_value(cvl, self.get(r)?),
            (_, None) => Err(Trap::ty("a constant with no data")),
        }
    }

    /// The first `n` elements of `c` on the host (the first `n` lengths of a segment
    /// descriptor; all of them when it has fewer): what the top level prints of a value
    /// is copied, not the whole of it.
    pub fn to_host_prefix(&self, cvl: &mut C, c: &Const, n: usize) -> Result<HostValue, Trap> {
        let Const::Resident(r) = c else {
            let mut h = self.to_host(cvl, c)?;
            h.truncate(n);
            return Ok(h);
        };
        Ok(match self.get(r)? {
            Value::Vec(x) => cvl.to_host_prefix(x, n)?.into(),
            v @ Value::Scalar(_) => {
                let mut h = to_host_value(cvl, v)?;
                h.truncate(n);
                h
            }
            Value::Seg(s) => HostValue::Segdes(cvl.segdes_to_host_prefix(s, n)?),
            Value::Pair(_) => return Err(Trap::new(TrapKind::Unprintable("a PAIR slot has no text form".into()))),
        })
    }

    /// How many elements `c` has (segments, for a segment descriptor) and, for a
    /// segment descriptor, its element count; nothing is copied out of the library.
    pub fn shape(&self, cvl: &mut C, c: &Const) -> Result<(usize, Option<usize>), Trap> {
        let Const::Resident(r) = c else {
            return Ok(self.to_host(cvl, c)?.shape());
        };
        Ok(match self.get(r)? {
            Value::Vec(x) => (cvl.len(x), None),
            Value::Scalar(_) => (1, None),
            Value::Seg(s) => (cvl.segment_count(s), Some(cvl.element_count(s))),
            Value::Pair(_) => return Err(Trap::new(TrapKind::Unprintable("a PAIR slot has no text form".into()))),
        })
    }

    /// True when `c` is a `FLOAT` vector holding a NaN or an infinity (checked where it
    /// is kept).
    pub fn any_non_finite(&self, cvl: &mut C, c: &Const) -> Result<bool, Trap> {
        match c {
            Const::Resident(r) => match self.get(r)? {
                Value::Vec(x) => cvl.any_non_finite(x),
                Value::Scalar(HostScalar::Float(x)) => Ok(!x.is_finite()),
                _ => Ok(false),
            },
            _ => Ok(matches!(self.to_host(cvl, c)?, HostValue::Float(v) if v.iter().any(|x| !x.is_finite()))),
        }
    }

    /// Keeps a host value in the library; the handle to it.
    pub fn insert_host(&mut self, cvl: &mut C, v: HostValue) -> Result<Const, Trap> {
        let value = crate::interp::from_host(cvl, v)?;
        Ok(self.keep(cvl, value))
    }
}

/// Runs `p` like [`crate::run`], with the [`Const::Resident`] constants of the program
/// taken from `residents`, and keeps the final stack there: the report lists one
/// handle per slot instead of host copies. Slots of at most `small` elements (segments,
/// for a segment descriptor) come back as host constants instead: they cost nothing to
/// load again, and the optimiser can fold a program's scalar constants (`n = 1000;`
/// makes `n` a constant of later forms) but not resident ones. Values whose handles are
/// all gone are dropped first.
pub fn run_resident<C: Cvl + 'static>(
    p: &crate::Program,
    cvl: &mut C,
    residents: &mut Residents<C>,
    small: usize,
    out: &mut dyn std::io::Write,
    opts: &crate::RunOptions,
) -> Result<crate::RunReport<Const>, Trap> {
    residents.collect();
    let report = crate::interp::run(p, cvl, residents, out, opts)?;
    report.try_map(|v| {
        let size = match &v {
            Value::Vec(x) => cvl.len(x),
            Value::Scalar(_) => 1,
            Value::Seg(s) => cvl.segment_count(s),
            Value::Pair(_) => usize::MAX,
        };
        if size <= small {
            to_host_value(cvl, &v).map(Const::from)
        } else {
            Ok(residents.keep(cvl, v))
        }
    })
}
