//! The device layer: one CUDA context and stream, the compiled kernel modules, a pool of
//! device buffers recycled by size, the error mailbox, kernel launches and host transfers,
//! and the counters behind [`DeviceStats`].
//!
//! Everything runs on the context's default (legacy) stream, so operations are ordered
//! without events: a buffer returned to the pool can be handed to the next operation at
//! once, because any kernel still reading it was queued before the kernel that will
//! overwrite it. Only transfers to the host synchronise.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::sync::{Arc, OnceLock};

use cudarc::driver::result as dres;
use cudarc::driver::sys::{self, CUdeviceptr};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaStream, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::Ptx;
use vcode::{Trap, TrapKind};

use crate::compile;
use crate::CudaInitError;

/// Threads per block of every kernel (must match `BLOCK` in `kernels/cuda/common.cuh`).
pub(crate) const BLOCK: u32 = kernels::BLOCK;

/// Counters of the device work done by a [`crate::CudaCvl`] since it was created.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceStats {
    /// Kernels launched.
    pub kernel_launches: u64,
    /// Transfers that made the host wait for the device (scalars the interpreter needs,
    /// results copied back, error checks).
    pub host_round_trips: u64,
    /// Bytes copied host -> device.
    pub bytes_to_device: u64,
    /// Bytes copied device -> host.
    pub bytes_to_host: u64,
    /// Bytes copied device -> device (copies of inputs, segment descriptors).
    pub bytes_device_copy: u64,
    /// Device allocations made (`cuMemAlloc`), i.e. pool misses.
    pub allocations: u64,
    /// Buffer requests served from the pool.
    pub pool_hits: u64,
    /// Bytes currently held by the pool for reuse.
    pub pool_cached_bytes: u64,
    /// Launches per kernel name.
    pub launches_by_kernel: BTreeMap<String, u64>,
}

impl DeviceStats {
    /// The counters as `(name, value)` rows, in the order `nesl run --stats` prints them
    /// (launches per kernel left out).
    pub fn rows(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("kernel launches", self.kernel_launches),
            ("host round trips", self.host_round_trips),
            ("bytes to device", self.bytes_to_device),
            ("bytes to host", self.bytes_to_host),
            ("bytes dev to dev", self.bytes_device_copy),
            ("allocations", self.allocations),
            ("pool hits", self.pool_hits),
        ]
    }
}

/// Free device buffers by size class.
#[derive(Default)]
struct Pool {
    free: HashMap<usize, Vec<CUdeviceptr>>,
    cached: usize,
    limit: usize,
}

/// The size class of a request: small sizes round to a power of two, larger ones to a
/// quarter of their power of two, so that buffers of nearby sizes are shared.
fn size_class(bytes: usize) -> usize {
    if bytes <= 256 {
        return 256;
    }
    let p = bytes.next_power_of_two();
    if p <= 4096 {
        return p;
    }
    let q = p / 8;
    bytes.div_ceil(q) * q
}

/// Error mailbox slots (32 bytes each): deferred checks use one each.
pub(crate) const MAILBOX_SLOTS: usize = 64;
const MAILBOX_BYTES: usize = 32 * MAILBOX_SLOTS;

/// The device: its backend (a real GPU or the CPU emulation), pool, mailbox and counters.
pub(crate) struct Device {
    backend: Backend,
    pool: RefCell<Pool>,
    stats: RefCell<DeviceStats>,
    /// [`MAILBOX_SLOTS`] slots of 4 long longs: error code, value, bound, and a scalar
    /// slot (see common.cuh); one per operation whose check is deferred, plus the current.
    mailbox: CUdeviceptr,
    max_grid: u32,
    name: String,
    arch: String,
    /// Writes of known scalars not made yet `(address, bits, one byte?)`: made (by fill
    /// kernels) just before the next device operation, dropped when their buffer is freed
    /// first, so that serial code whose scalars never meet device work launches nothing.
    writes: RefCell<Vec<(CUdeviceptr, u64, bool)>>,
}

/// Where kernels run and memory lives.
enum Backend {
    /// A GPU through the CUDA driver.
    Cuda(CudaDev),
    /// The kernels compiled as C++ and run on the CPU (tests without a GPU).
    Emu(crate::emu::EmuDev),
}

struct CudaDev {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    modules: RefCell<Vec<(String, Arc<CudaModule>)>>,
    funcs: RefCell<HashMap<String, CudaFunction>>,
}

fn drv(what: &str, e: dres::DriverError) -> Trap {
    let msg = e
        .error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
        Trap::new(TrapKind::OutOfMemory(format!(
            "device memory exhausted in {what}"
        )))
    } else {
        Trap::backend(format!("CUDA error in {what}: {:?} {msg}", e.0))
    }
}

fn init_err(what: &str, e: dres::DriverError) -> CudaInitError {
    let msg = e
        .error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if e.0 == sys::CUresult::CUDA_ERROR_NO_DEVICE {
        CudaInitError::NoDevice(format!("{what}: {msg}"))
    } else {
        CudaInitError::Driver(format!("{what}: {:?} {msg}", e.0))
    }
}

/// What every library instance of the process shares: the context of GPU 0 (kept alive, so
/// that later instances do not pay for creating it again) and the loaded kernel modules.
struct Shared {
    ctx: Arc<CudaContext>,
    modules: Vec<(String, Arc<CudaModule>)>,
    name: String,
    arch: String,
    sms: u32,
}

/// Opens GPU 0 and loads every kernel module, once per process (the outcome, success or
/// error, is remembered).
fn shared() -> Result<Arc<Shared>, CudaInitError> {
    static SHARED: OnceLock<Result<Arc<Shared>, CudaInitError>> = OnceLock::new();
    SHARED.get_or_init(|| open_shared().map(Arc::new)).clone()
}

fn open_shared() -> Result<Shared, CudaInitError> {
    // SAFETY: only tries to dlopen candidate library names.
    if !unsafe { sys::is_culib_present() } {
        return Err(CudaInitError::NoDriver);
    }
    let count = CudaContext::device_count().map_err(|e| init_err("cuInit", e))?;
    if count < 1 {
        return Err(CudaInitError::NoDevice("the driver reports no GPU".into()));
    }
    if !compile::nvrtc_present() {
        return Err(CudaInitError::NoNvrtc);
    }
    let ctx = CudaContext::new(0).map_err(|e| init_err("creating the context", e))?;
    let (major, minor) = ctx
        .compute_capability()
        .map_err(|e| init_err("compute capability", e))?;
    let arch = format!("sm_{major}{minor}");
    let name = ctx.name().unwrap_or_else(|_| "unknown GPU".into());
    let sms = ctx
        .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .unwrap_or(16)
        .max(1) as u32;
    let mut modules = Vec::new();
    for (mname, src) in crate::semantics::modules() {
        let (bin, _) = compile::compile_cached(mname, &compile::module_text(&src), &arch)
            .map_err(|e| CudaInitError::Compile(e.to_string()))?;
        let module = ctx
            .load_module(Ptx::from_binary(bin.as_ref().clone()))
            .map_err(|e| init_err(&format!("loading kernel module {mname}"), e))?;
        modules.push((mname.to_string(), module));
    }
    Ok(Shared {
        ctx,
        modules,
        name,
        arch,
        sms,
    })
}

impl Device {
    /// Opens GPU 0 (once per process) and gives this instance its own pool and mailbox.
    pub(crate) fn open() -> Result<Device, CudaInitError> {
        let sh = shared()?;
        let ctx = sh.ctx.clone();
        ctx.bind_to_thread()
            .map_err(|e| init_err("binding the context", e))?;
        let stream = ctx.default_stream();
        let total = ctx.total_mem().unwrap_or(1 << 30);
        // SAFETY: a plain allocation of MAILBOX_BYTES bytes, freed in Drop.
        let mailbox = unsafe { dres::malloc_sync(MAILBOX_BYTES) }.map_err(|e| init_err("allocating", e))?;
        // SAFETY: the mailbox was just allocated with MAILBOX_BYTES bytes.
        unsafe { dres::memset_d8_sync(mailbox, 0, MAILBOX_BYTES) }.map_err(|e| init_err("memset", e))?;
        Ok(Device {
            backend: Backend::Cuda(CudaDev {
                ctx,
                stream,
                modules: RefCell::new(sh.modules.clone()),
                funcs: RefCell::new(HashMap::new()),
            }),
            pool: RefCell::new(Pool {
                limit: total / 4,
                ..Pool::default()
            }),
            stats: RefCell::new(DeviceStats::default()),
            writes: RefCell::new(Vec::new()),
            mailbox,
            max_grid: sh.sms * 32,
            name: sh.name.clone(),
            arch: sh.arch.clone(),
        })
    }

    /// The CPU emulation: every kernel module compiled as C++ (see `kernels/emu/emu.h`).
    pub(crate) fn open_emulated() -> Result<Device, CudaInitError> {
        let emu = crate::emu::EmuDev::open()?;
        let mailbox = crate::emu::host_alloc(MAILBOX_BYTES)
            .ok_or_else(|| CudaInitError::Driver("emulation: out of memory".into()))?;
        // SAFETY: the mailbox was just allocated with MAILBOX_BYTES bytes.
        unsafe { std::ptr::write_bytes(mailbox as *mut u8, 0, MAILBOX_BYTES) };
        Ok(Device {
            backend: Backend::Emu(emu),
            pool: RefCell::new(Pool {
                limit: 1 << 30,
                ..Pool::default()
            }),
            stats: RefCell::new(DeviceStats::default()),
            writes: RefCell::new(Vec::new()),
            mailbox,
            // Few blocks: each emulated thread is a fiber, grid-stride loops do the rest.
            max_grid: 4,
            name: "CPU emulation of the CUDA kernels".into(),
            arch: "emu".into(),
        })
    }

    /// True on a real GPU.
    pub(crate) fn is_gpu(&self) -> bool {
        matches!(self.backend, Backend::Cuda(_))
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }
    pub(crate) fn arch(&self) -> &str {
        &self.arch
    }
    pub(crate) fn mailbox(&self) -> CUdeviceptr {
        self.mailbox
    }

    /// The host round trips so far (without copying the other counters).
    pub(crate) fn round_trips(&self) -> u64 {
        self.stats.borrow().host_round_trips
    }

    pub(crate) fn stats(&self) -> DeviceStats {
        let mut s = self.stats.borrow().clone();
        s.pool_cached_bytes = self.pool.borrow().cached as u64;
        s
    }

    /// Compiles (through the caches) and loads a kernel module given as CUDA C text (the
    /// common header included), so that [`Device::launch_n`] finds its functions by name.
    pub(crate) fn load_module_text(&self, name: &str, text: &str) -> Result<(), Trap> {
        match &self.backend {
            Backend::Cuda(c) => {
                if c.modules.borrow().iter().any(|(n, _)| n == name) {
                    return Ok(());
                }
                let (bin, _) = compile::compile_cached(name, text, &self.arch)
                    .map_err(|e| Trap::backend(e.to_string()))?;
                let m = c
                    .ctx
                    .load_module(Ptx::from_binary(bin.as_ref().clone()))
                    .map_err(|e| drv(&format!("loading module {name}"), e))?;
                c.modules.borrow_mut().push((name.to_string(), m));
                Ok(())
            }
            Backend::Emu(e) => e.load_text(name, text).map_err(Trap::backend),
        }
    }

    fn func(c: &CudaDev, name: &str) -> Result<CudaFunction, Trap> {
        if let Some(f) = c.funcs.borrow().get(name) {
            return Ok(f.clone());
        }
        for (_, m) in c.modules.borrow().iter().rev() {
            if let Ok(f) = m.load_function(name) {
                c.funcs.borrow_mut().insert(name.to_string(), f.clone());
                return Ok(f);
            }
        }
        Err(Trap::backend(format!(
            "CUDA kernel `{name}` not found in the loaded modules"
        )))
    }

    /// Launches `name` over `n` elements (grid-stride kernels): as many blocks as needed,
    /// capped at 32 per multiprocessor. Nothing is launched for `n == 0`.
    pub(crate) fn launch_n(&self, name: &str, n: usize, args: &[Arg]) -> Result<(), Trap> {
        if n == 0 {
            return Ok(());
        }
        let blocks = n.div_ceil(BLOCK as usize).min(self.max_grid as usize) as u32;
        self.launch_blocks(name, blocks, args)
    }

    /// Launches `name` with exactly `blocks` blocks of [`BLOCK`] threads.
    pub(crate) fn launch_blocks(&self, name: &str, blocks: u32, args: &[Arg]) -> Result<(), Trap> {
        if blocks == 0 {
            return Ok(());
        }
        self.flush_writes()?;
        self.launch_raw(name, blocks, args)
    }

    /// Writes `bits` (8 bytes, or one byte when `byte`) at `ptr` before the next device
    /// operation, unless the buffer is freed first.
    pub(crate) fn write_later(&self, ptr: CUdeviceptr, bits: u64, byte: bool) {
        self.writes.borrow_mut().push((ptr, bits, byte));
    }

    /// Makes the deferred scalar writes, in order (one fill kernel each).
    fn flush_writes(&self) -> Result<(), Trap> {
        if self.writes.borrow().is_empty() {
            return Ok(());
        }
        let writes = std::mem::take(&mut *self.writes.borrow_mut());
        for (ptr, bits, byte) in writes {
            let k = if byte { "dis_vu1" } else { "dis_vu8" };
            self.launch_raw(k, 1, &[Arg::P(ptr), Arg::U(bits), Arg::I(1)])?;
        }
        Ok(())
    }

    fn launch_raw(&self, name: &str, blocks: u32, args: &[Arg]) -> Result<(), Trap> {
        let vals: Vec<u64> = args.iter().map(|a| a.bits()).collect();
        match &self.backend {
            Backend::Cuda(c) => {
                let f = Self::func(c, name)?;
                let i32s: Vec<i32> = args
                    .iter()
                    .map(|a| if let Arg::I32(x) = a { *x } else { 0 })
                    .collect();
                let mut b = c.stream.launch_builder(&f);
                for (k, a) in args.iter().enumerate() {
                    match a {
                        Arg::I32(_) => b.arg(&i32s[k]),
                        _ => b.arg(&vals[k]),
                    };
                }
                let cfg = LaunchConfig {
                    grid_dim: (blocks, 1, 1),
                    block_dim: (BLOCK, 1, 1),
                    shared_mem_bytes: 0,
                };
                // SAFETY: every kernel of the `kernels` crate takes exactly the arguments the
                // callers in `ops.rs` pass (device pointers as 64-bit values, 64-bit counts, int
                // flags), checks its bounds, and only touches buffers the caller allocated with
                // the sizes the kernel assumes.
                unsafe { b.launch(cfg) }.map_err(|e| drv(&format!("launching {name}"), e))?;
            }
            Backend::Emu(e) => e
                .launch(name, blocks, BLOCK, &vals)
                .map_err(Trap::backend)?,
        }
        let mut st = self.stats.borrow_mut();
        st.kernel_launches += 1;
        match st.launches_by_kernel.get_mut(name) {
            Some(c) => *c += 1,
            None => {
                st.launches_by_kernel.insert(name.to_string(), 1);
            }
        }
        Ok(())
    }

    /// A buffer of at least `bytes` bytes, from the pool when one of the size class is free.
    pub(crate) fn alloc(self: &Rc<Self>, bytes: usize) -> Result<DevBuf, Trap> {
        if bytes == 0 {
            return Ok(DevBuf {
                ptr: 0,
                class: 0,
                dev: self.clone(),
            });
        }
        let class = size_class(bytes);
        // Under the memory limit (`--max-memory`), with the host's live memory.
        vcode::memory::reserve_device(class, self.host_backed())?;
        {
            let mut pool = self.pool.borrow_mut();
            if let Some(ptr) = pool.free.get_mut(&class).and_then(|v| v.pop()) {
                pool.cached -= class;
                self.stats.borrow_mut().pool_hits += 1;
                return Ok(DevBuf {
                    ptr,
                    class,
                    dev: self.clone(),
                });
            }
        }
        let ptr = self.raw_alloc(class, bytes).inspect_err(|_| vcode::memory::release_device(class, self.host_backed()))?;
        self.stats.borrow_mut().allocations += 1;
        Ok(DevBuf {
            ptr,
            class,
            dev: self.clone(),
        })
    }

    /// Whether buffers are host memory (the emulation), which the host allocator counts.
    fn host_backed(&self) -> bool {
        matches!(self.backend, Backend::Emu(_))
    }

    fn raw_alloc(&self, class: usize, bytes: usize) -> Result<CUdeviceptr, Trap> {
        let oom = || {
            Trap::new(TrapKind::OutOfMemory(format!(
                "cannot allocate {bytes} bytes"
            )))
        };
        match &self.backend {
            Backend::Cuda(c) => {
                c.ctx
                    .bind_to_thread()
                    .map_err(|e| drv("binding the context", e))?;
                // SAFETY: a plain device allocation; the DevBuf returns it to the pool on drop.
                match unsafe { dres::malloc_sync(class) } {
                    Ok(p) => Ok(p),
                    Err(e) if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => {
                        self.trim_pool();
                        // SAFETY: as above.
                        unsafe { dres::malloc_sync(class) }
                            .map_err(|e| drv(&format!("allocating {bytes} bytes"), e))
                    }
                    Err(e) => Err(drv(&format!("allocating {bytes} bytes"), e)),
                }
            }
            Backend::Emu(_) => crate::emu::host_alloc(class)
                .or_else(|| {
                    self.trim_pool();
                    crate::emu::host_alloc(class)
                })
                .ok_or_else(oom),
        }
    }

    fn raw_free(&self, ptr: CUdeviceptr, class: usize) {
        match &self.backend {
            // SAFETY: `ptr` came from malloc_sync and nothing refers to it any more.
            Backend::Cuda(_) => {
                let _ = unsafe { dres::free_sync(ptr) };
            }
            Backend::Emu(_) => crate::emu::host_free(ptr, class),
        }
    }

    fn release(&self, ptr: CUdeviceptr, class: usize) {
        {
            // A scalar write to a buffer nobody holds any more need not be made.
            let mut w = self.writes.borrow_mut();
            if !w.is_empty() {
                w.retain(|x| x.0 < ptr || x.0 >= ptr + class as u64);
            }
        }
        let mut pool = self.pool.borrow_mut();
        if pool.cached + class <= pool.limit {
            pool.cached += class;
            pool.free.entry(class).or_default().push(ptr);
        } else {
            drop(pool);
            // Past the pool's limit: free at once (cuMemFree waits for pending work).
            self.raw_free(ptr, class);
        }
    }

    /// Frees every cached buffer (before retrying an allocation that ran out of memory).
    pub(crate) fn trim_pool(&self) {
        let drained: Vec<(usize, Vec<CUdeviceptr>)> = {
            let mut pool = self.pool.borrow_mut();
            pool.cached = 0;
            pool.free.drain().collect()
        };
        for (class, v) in drained {
            for p in v {
                self.raw_free(p, class);
            }
        }
    }

    pub(crate) fn memset(&self, ptr: CUdeviceptr, byte: u8, bytes: usize) -> Result<(), Trap> {
        if bytes == 0 {
            return Ok(());
        }
        self.flush_writes()?;
        match &self.backend {
            Backend::Cuda(c) => {
                c.ctx
                    .bind_to_thread()
                    .map_err(|e| drv("binding the context", e))?;
                // SAFETY: callers pass a live buffer of at least `bytes` bytes.
                unsafe { dres::memset_d8_async(ptr, byte, bytes, c.stream.cu_stream()) }
                    .map_err(|e| drv("memset", e))
            }
            Backend::Emu(_) => {
                // SAFETY: callers pass a live host buffer of at least `bytes` bytes.
                unsafe { std::ptr::write_bytes(ptr as *mut u8, byte, bytes) };
                Ok(())
            }
        }
    }

    pub(crate) fn copy_dtod(
        &self,
        dst: CUdeviceptr,
        src: CUdeviceptr,
        bytes: usize,
    ) -> Result<(), Trap> {
        if bytes == 0 {
            return Ok(());
        }
        self.flush_writes()?;
        match &self.backend {
            Backend::Cuda(c) => {
                c.ctx
                    .bind_to_thread()
                    .map_err(|e| drv("binding the context", e))?;
                // SAFETY: callers pass live buffers of at least `bytes` bytes each.
                unsafe { dres::memcpy_dtod_async(dst, src, bytes, c.stream.cu_stream()) }
                    .map_err(|e| drv("device copy", e))?;
            }
            // SAFETY: callers pass live host buffers of at least `bytes` bytes each.
            Backend::Emu(_) => unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, bytes) },
        }
        self.stats.borrow_mut().bytes_device_copy += bytes as u64;
        Ok(())
    }

    pub(crate) fn htod<T: bytemuck::Pod>(&self, dst: CUdeviceptr, src: &[T]) -> Result<(), Trap> {
        let bytes = std::mem::size_of_val(src);
        if bytes == 0 {
            return Ok(());
        }
        self.flush_writes()?;
        match &self.backend {
            Backend::Cuda(c) => {
                c.ctx
                    .bind_to_thread()
                    .map_err(|e| drv("binding the context", e))?;
                // SAFETY: `dst` is a live buffer of at least `bytes` bytes; the synchronous
                // copy is done with `src` before returning.
                unsafe { dres::memcpy_htod_sync(dst, src) }
                    .map_err(|e| drv("copy to the device", e))?;
            }
            // SAFETY: `dst` is a live host buffer of at least `bytes` bytes.
            Backend::Emu(_) => unsafe {
                std::ptr::copy_nonoverlapping(src.as_ptr() as *const u8, dst as *mut u8, bytes)
            },
        }
        self.stats.borrow_mut().bytes_to_device += bytes as u64;
        Ok(())
    }

    /// Copies device memory into `dst`, waiting for all queued work: one host round trip.
    pub(crate) fn dtoh<T: bytemuck::Pod>(&self, dst: &mut [T], src: CUdeviceptr) -> Result<(), Trap> {
        let bytes = std::mem::size_of_val(dst);
        if bytes == 0 {
            return Ok(());
        }
        self.flush_writes()?;
        match &self.backend {
            Backend::Cuda(c) => {
                c.ctx
                    .bind_to_thread()
                    .map_err(|e| drv("binding the context", e))?;
                // SAFETY: `src` is a live buffer of at least `bytes` bytes and `T` is `Pod`:
                // any bit pattern the device holds is a valid `T` (no `bool`).
                unsafe { dres::memcpy_dtoh_sync(dst, src) }
                    .map_err(|e| drv("copy to the host", e))?;
            }
            // SAFETY: as above, in host memory.
            Backend::Emu(_) => unsafe {
                std::ptr::copy_nonoverlapping(src as *const u8, dst.as_mut_ptr() as *mut u8, bytes)
            },
        }
        let mut st = self.stats.borrow_mut();
        st.bytes_to_host += bytes as u64;
        st.host_round_trips += 1;
        Ok(())
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        if let Backend::Cuda(c) = &self.backend {
            let _ = c.ctx.bind_to_thread();
            let _ = c.stream.synchronize();
        }
        self.trim_pool();
        self.raw_free(self.mailbox, MAILBOX_BYTES);
    }
}

/// A kernel argument: a device pointer, a 64-bit integer or a 32-bit int.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arg {
    /// A device pointer (0 = null).
    P(CUdeviceptr),
    /// A `long long`.
    I(i64),
    /// An `unsigned long long`.
    U(u64),
    /// An `int`.
    I32(i32),
}

impl Arg {
    fn bits(&self) -> u64 {
        match *self {
            Arg::P(p) => p,
            Arg::I(x) => x as u64,
            Arg::U(x) => x,
            Arg::I32(x) => x as u32 as u64,
        }
    }
}

/// A device buffer; dropping it returns it to the pool.
pub(crate) struct DevBuf {
    ptr: CUdeviceptr,
    class: usize,
    dev: Rc<Device>,
}

impl DevBuf {
    /// The device address (0 for an empty buffer).
    pub(crate) fn ptr(&self) -> CUdeviceptr {
        self.ptr
    }
}

impl Drop for DevBuf {
    fn drop(&mut self) {
        if self.class > 0 {
            self.dev.release(self.ptr, self.class);
            vcode::memory::release_device(self.class, self.dev.host_backed());
        }
    }
}

impl std::fmt::Debug for DevBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DevBuf({:#x}, {} bytes)", self.ptr, self.class)
    }
}

#[cfg(test)]
mod tests {
    use super::size_class;

    #[test]
    fn size_classes_cover_the_request_and_share_nearby_sizes() {
        for b in [
            1usize,
            255,
            256,
            257,
            4095,
            4096,
            4097,
            10_000,
            1 << 20,
            (1 << 20) + 1,
            80_000_000,
        ] {
            let c = size_class(b);
            assert!(c >= b, "{b} -> {c}");
            assert!(c <= b + b / 4 + 256, "{b} -> {c} wastes too much");
        }
        assert_eq!(size_class(1000), size_class(1024));
        assert_eq!(size_class(80_000_000), size_class(79_999_000));
    }
}
