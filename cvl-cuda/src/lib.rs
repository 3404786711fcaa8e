//! cvl-cuda: the `Cvl` vector library on an NVIDIA GPU, through cudarc.
//!
//! Builds and links with no CUDA installed (cudarc's dynamic loading); when no driver or
//! GPU is present at run time, [`CudaCvl::new`] returns a clean one-line error.
//!
//! Design (see `spec/cvl.md` section 13 for the port this improves on):
//! * kernels: the CUDA C of the `kernels` crate, compiled by NVRTC to a CUBIN for the GPU's
//!   architecture once per process and cached on disk ([`compile`]);
//! * data stays on the device: INT is `i64`, FLOAT `f64`, BOOL one byte; only the scalars
//!   the interpreter needs (and printed results) come back, each transfer counted in
//!   [`DeviceStats`];
//! * a pool recycles device buffers by size class;
//! * scalars the host knows stay on the host ([`scalar`]): serial code launches nothing and
//!   its `IF`s read no flag back;
//! * a segment descriptor is one device buffer of lengths then offsets, plus (built on
//!   first use, and only for more than one segment) the segment index of every element;
//!   one segment is the fast path everywhere (no per-element index at all);
//! * device errors become traps: driver failures, out of memory, and bad indices or
//!   division by zero detected inside kernels (reported through an error mailbox slot per
//!   operation, read back with the next host read, `CALL` or `RET`, in the same round
//!   trip; the trap names the operation that failed: [`vcode::Trap::deferred_at`]).

pub mod compile;
mod device;
mod emu;
mod ops;
mod scalar;
pub mod semantics;
pub mod superop;

use std::cell::RefCell;
use std::rc::Rc;

pub use device::DeviceStats;
use device::{DevBuf, Device};
use vcode::{Trap, TrapKind, VType};

/// Why the CUDA backend could not start. Its `Display` is one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CudaInitError {
    /// No `libcuda.so` could be loaded.
    #[error("no CUDA driver: libcuda.so could not be loaded (no NVIDIA driver installed on this machine)")]
    NoDriver,
    /// The driver is there but reports no usable GPU.
    #[error("no CUDA GPU: {0}")]
    NoDevice(String),
    /// NVRTC (`libnvrtc.so`) could not be loaded, so the kernels cannot be compiled.
    #[error("NVRTC not available: libnvrtc.so could not be loaded (put the CUDA toolkit's lib64, or the directory printed by scripts/nvrtc.sh, on LD_LIBRARY_PATH)")]
    NoNvrtc,
    /// The CUDA backend was turned off with `NESL_CUDA_DISABLE`.
    #[error("the CUDA backend is disabled (NESL_CUDA_DISABLE is set)")]
    Disabled,
    /// A driver call failed while starting.
    #[error("CUDA driver error: {0}")]
    Driver(String),
    /// A kernel module did not compile.
    #[error("CUDA kernel compilation failed: {0}")]
    Compile(String),
    /// The CPU emulation of the kernels could not be built.
    #[error("kernel emulation unavailable: {0}")]
    Emulation(String),
}

/// The CUDA vector library. Not `Send`: create one per thread.
pub struct CudaCvl {
    dev: Rc<Device>,
    /// State of the splitmix64 generator (the same stream as the CPU library's).
    rng: u64,
    /// Check the error mailbox at the next synchronisation instead of after each operation.
    deferred: bool,
    /// The mailbox slot the next error-reporting kernel writes to: slots before it belong
    /// to operations whose checks are deferred, one each, in order.
    slot: usize,
    /// The position (see [`vcode::Cvl::set_position`]) of the operation of each deferred
    /// slot.
    pending_at: Vec<u64>,
    /// The position of the operation running now.
    position: u64,
    /// The generated kernels of the superoperators run so far.
    memo: superop::KernelMemo,
    /// The CPU library (one thread) that computes scalars the host knows (see [`scalar`]).
    host: vcode::CpuCvl,
}

/// Reads the [`DeviceStats`] of a [`CudaCvl`] (see [`CudaCvl::stats_probe`]).
#[derive(Clone)]
pub struct StatsProbe(Rc<Device>);

impl StatsProbe {
    /// The counters now.
    pub fn stats(&self) -> DeviceStats {
        self.0.stats()
    }
    /// The device's name and architecture, as `NAME (ARCH)`.
    pub fn device(&self) -> String {
        format!("{} ({})", self.0.name(), self.0.arch())
    }
}

impl std::fmt::Debug for StatsProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StatsProbe({})", self.device())
    }
}

/// Compiles and loads the kernels of superoperator tables (see [`CudaCvl::kernel_loader`]).
#[derive(Clone)]
pub struct KernelLoader(Rc<Device>);

impl std::fmt::Debug for KernelLoader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KernelLoader({}, {})", self.0.name(), self.0.arch())
    }
}

/// Handle to a device vector (reference counted; the last drop recycles the buffer).
#[derive(Clone, Debug)]
pub struct CudaVector(Rc<VecData>);

#[derive(Debug)]
struct VecData {
    buf: DevBuf,
    len: usize,
    ty: VType,
    /// The value of a one-element vector whose value the host knows (a constant, a length,
    /// or a scalar computed on the host from such values): see [`scalar`].
    known: Option<vcode::HostScalar>,
    /// For an `INT` vector whose elements the host knows to be `>= 0` with this sum (a
    /// descriptor's `LENGTHS`, a permutation of such, a fill): `MAKE_SEGDES` of it reads
    /// nothing back.
    sum: Option<usize>,
}

/// Handle to a device segment descriptor (reference counted).
#[derive(Clone, Debug)]
pub struct CudaSegdes(Rc<SegData>);

#[derive(Debug)]
struct SegData {
    /// Number of segments.
    m: usize,
    /// Number of elements described.
    n: usize,
    /// `m` lengths then `m` offsets (i64).
    lo: DevBuf,
    /// Per-element segment index (u32), built on first use when `m > 1`.
    seg: RefCell<Option<DevBuf>>,
}

impl CudaCvl {
    /// Opens GPU 0 and prepares the kernels. Errors (no driver, no GPU, no NVRTC, a kernel
    /// that does not compile) come back as values; this never panics.
    ///
    /// Environment: `NESL_CUDA_DISABLE` (any value) refuses to start;
    /// `NESL_CUDA_EMULATE=1` gives [`CudaCvl::new_emulated`] (kernels on the CPU, for tests);
    /// `NESL_CUDA_DEFER_CHECKS=0` turns deferred error checks off (see
    /// [`CudaCvl::set_deferred_checks`]; on by default); `NESL_CUDA_CACHE` names the kernel cache directory.
    pub fn new() -> Result<CudaCvl, CudaInitError> {
        if std::env::var_os("NESL_CUDA_DISABLE").is_some() {
            return Err(CudaInitError::Disabled);
        }
        let deferred = std::env::var("NESL_CUDA_DEFER_CHECKS").map_or(true, |v| v != "0");
        if std::env::var("NESL_CUDA_EMULATE").is_ok_and(|v| v == "1") {
            let mut c = Self::new_emulated()?;
            c.deferred = deferred;
            return Ok(c);
        }
        let dev = Device::open()?;
        Ok(CudaCvl {
            dev: Rc::new(dev),
            rng: 0,
            deferred,
            slot: 0,
            pending_at: Vec::new(),
            position: 0,
            memo: Default::default(),
            host: vcode::CpuCvl::with_threads(1),
        })
    }

    /// The same library with every kernel run by a CPU emulation of CUDA (the kernels
    /// compiled as C++ with the system compiler): slow, for testing the backend's logic
    /// on machines without a GPU. Needs `g++` (or `$CXX`) on x86-64 Linux.
    pub fn new_emulated() -> Result<CudaCvl, CudaInitError> {
        let dev = Device::open_emulated()?;
        Ok(CudaCvl {
            dev: Rc::new(dev),
            rng: 0,
            deferred: false,
            slot: 0,
            pending_at: Vec::new(),
            position: 0,
            memo: Default::default(),
            host: vcode::CpuCvl::with_threads(1),
        })
    }

    /// True when running on a real GPU (false for [`CudaCvl::new_emulated`]).
    pub fn is_gpu(&self) -> bool {
        self.dev.is_gpu()
    }

    /// The GPU's name (e.g. `NVIDIA H100 80GB HBM3`).
    pub fn device_name(&self) -> &str {
        self.dev.name()
    }

    /// The architecture the kernels were compiled for (e.g. `sm_90`).
    pub fn arch(&self) -> &str {
        self.dev.arch()
    }

    /// Counters of kernel launches, host round trips, bytes moved and pool use.
    pub fn device_stats(&self) -> DeviceStats {
        self.dev.stats()
    }

    /// A handle that reads this library's counters later, after the library itself has
    /// been moved away (into an executor, say).
    pub fn stats_probe(&self) -> StatsProbe {
        StatsProbe(self.dev.clone())
    }

    /// A handle that compiles and loads superoperator kernels into this library's device
    /// later, after the library itself has been moved away (an executor's program
    /// transform uses it to build a program's kernels when the program is loaded).
    pub fn kernel_loader(&self) -> KernelLoader {
        KernelLoader(self.dev.clone())
    }

    /// With `true`, errors detected inside kernels (bad index, division by zero) are read
    /// back at the next synchronisation (a scalar or result read, a call or return: see
    /// [`vcode::Cvl::settle`]) instead of right after the operation, in the same round trip
    /// as that read. Each deferred operation reports into a mailbox slot of its own and the
    /// trap names it ([`Trap::deferred_at`](vcode::Trap)), so the site is exact either way.
    /// On by default for [`CudaCvl::new`]; off for [`CudaCvl::new_emulated`] unless set.
    pub fn set_deferred_checks(&mut self, deferred: bool) {
        self.deferred = deferred;
    }

    /// Waits for all queued device work and reports any pending kernel error.
    pub fn synchronize(&mut self) -> Result<(), Trap> {
        self.read_mailbox().map(|_| ())
    }

    // ----- internal helpers shared by ops.rs and superop.rs -----

    fn new_vec(&self, ty: VType, len: usize) -> Result<CudaVector, Trap> {
        let bytes = len
            .checked_mul(esize(ty))
            .ok_or_else(|| Trap::new(TrapKind::OutOfMemory(format!("{len} elements"))))?;
        let buf = self.dev.alloc(bytes)?;
        Ok(CudaVector(Rc::new(VecData { buf, len, ty, known: None, sum: None })))
    }

    /// The error mailbox slot of the next kernel that may report an error (4 `i64`s:
    /// code, value, bound, and a scalar or superoperator key; see common.cuh).
    fn err_slot(&self) -> cudarc::driver::sys::CUdeviceptr {
        self.dev.mailbox() + 32 * self.slot as u64
    }

    /// After an operation whose kernels may report errors: read the mailbox now, or keep
    /// the operation's slot (and position) for the next read.
    fn check(&mut self) -> Result<(), Trap> {
        if self.deferred {
            self.pending_at.push(self.position);
            self.slot += 1;
            if self.slot + 1 >= device::MAILBOX_SLOTS {
                self.read_mailbox()?;
            }
            Ok(())
        } else {
            self.read_mailbox().map(|_| ())
        }
    }

    /// Before a host read: report an error left by deferred operations.
    fn flush_pending(&mut self) -> Result<(), Trap> {
        if !self.pending_at.is_empty() {
            self.read_mailbox()?;
        }
        Ok(())
    }

    /// Reads the mailbox slots in use (one round trip, waiting for all queued work). The
    /// first slot holding an error code, in operation order, becomes the trap (naming its
    /// deferred operation's position); otherwise returns the current slot, whose last
    /// value a kernel may have used for a scalar result. Every slot is free afterwards.
    fn read_mailbox(&mut self) -> Result<[i64; 4], Trap> {
        let used = self.slot + 1;
        let mut mb = vec![0i64; 4 * used];
        self.dev.dtoh(&mut mb, self.dev.mailbox())?;
        let pending = std::mem::take(&mut self.pending_at);
        let current = self.slot;
        self.slot = 0;
        if let Some(k) = (0..used).find(|&k| mb[4 * k] != 0) {
            self.dev.memset(self.dev.mailbox(), 0, 32 * used)?;
            let e = &mb[4 * k..4 * k + 4];
            let mut t = match e[0] {
                1 => Trap::index(e[1], e[2].max(0) as usize),
                // A superoperator's division leaves the key of its first failure in
                // slot 3 (see `report_part` in the common header).
                2 if e[3] < 0 => Trap::new(TrapKind::DivisionByZero).in_part((e[3] as u64 & 0xFFFF) as u32),
                2 | 4 => Trap::new(TrapKind::DivisionByZero),
                3 => Trap::new(TrapKind::NegativeLength(e[1])),
                c => Trap::backend(format!("unknown kernel error code {c}")),
            };
            if k < current {
                t.deferred_at = pending.get(k).copied();
            }
            return Err(t);
        }
        let c = &mb[4 * current..4 * current + 4];
        Ok([c[0], c[1], c[2], c[3]])
    }

    /// Reads the 8 bytes at `src` (a scalar the host needs) in the same round trip as the
    /// deferred checks: copied into the current mailbox slot first.
    fn read_scalar(&mut self, src: cudarc::driver::sys::CUdeviceptr, bytes: usize) -> Result<u64, Trap> {
        let at = self.err_slot() + 24;
        if bytes < 8 {
            self.dev.memset(at, 0, 8)?;
        }
        self.dev.copy_dtod(at, src, bytes)?;
        Ok(self.read_mailbox()?[3] as u64)
    }
}

impl std::fmt::Debug for CudaCvl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CudaCvl({}, {})", self.dev.name(), self.dev.arch())
    }
}

/// Bytes per element on the device.
fn esize(ty: VType) -> usize {
    match ty {
        VType::Int | VType::Float => 8,
        VType::Bool => 1,
    }
}

/// Suffix of the size-generic data kernels.
fn sfx(ty: VType) -> &'static str {
    match ty {
        VType::Int | VType::Float => "8",
        VType::Bool => "1",
    }
}
