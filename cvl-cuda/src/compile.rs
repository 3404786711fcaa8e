//! Run-time compilation of CUDA C with NVRTC, cached in memory (once per process) and on disk
//! (keyed by a hash of the source, the target architecture, the options and the NVRTC
//! version).
//!
//! NVRTC is opened by name through cudarc's dynamic loading, so `LD_LIBRARY_PATH` decides
//! which `libnvrtc.so` is used (see `scripts/nvrtc.sh`). Every entry point first checks that
//! the library is loadable: cudarc panics otherwise, and this module never lets it.
//! The output is a CUBIN for the exact architecture (`sm_90` for H100/H200), which the driver
//! loads without a PTX JIT step and which does not depend on the driver's PTX version.

use std::collections::HashMap;
use std::ffi::{c_char, CString};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::nvrtc::{result, sys};

/// Options given to NVRTC besides the architecture. `--fmad=false` keeps `a*b+c` as two
/// rounded operations, as on the CPU, so results match the CPU backend bit for bit.
pub const NVRTC_OPTIONS: &[&str] = &["--fmad=false", "--std=c++17", "-default-device"];

/// Why NVRTC could not be used or a source did not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompileError {
    /// `libnvrtc` is not loadable.
    #[error("NVRTC not available: no loadable libnvrtc.so (install it with scripts/nvrtc.sh and put its directory on LD_LIBRARY_PATH)")]
    NoNvrtc,
    /// NVRTC rejected the source; the log is attached.
    #[error("NVRTC failed to compile {name} for {arch}: {log}")]
    Failed {
        /// The module's name.
        name: String,
        /// The target architecture.
        arch: String,
        /// NVRTC's log (or the failing call).
        log: String,
    },
}

/// True when `libnvrtc` can be loaded (it is then safe to call cudarc's NVRTC functions).
///
/// cudarc opens the library by name (`libnvrtc.so.13`, found through `LD_LIBRARY_PATH`).
/// When that fails, the usual install places are tried by full path ([`nvrtc_candidates`]);
/// once a library with that soname is loaded, opening it by name finds it.
pub fn nvrtc_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    *PRESENT.get_or_init(|| {
        // SAFETY: only tries to dlopen candidate library names.
        if unsafe { sys::is_culib_present() } {
            return true;
        }
        preload_nvrtc().is_some() && unsafe { sys::is_culib_present() }
    })
}

/// Full paths where an NVRTC library may be installed, in the order they are tried:
/// `$NESL_NVRTC_LIB` (a file), `$CUDA_HOME/lib64`, `/usr/local/cuda/lib64`, the CUDA
/// targets directory, and the wheel cache of `scripts/nvrtc.sh`
/// (`${NESL_NVRTC_DIR:-$HOME/.cache/nesl-nvrtc}/nvidia/cu13/lib`).
pub fn nvrtc_candidates() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(h) = std::env::var_os("CUDA_HOME") {
        dirs.push(PathBuf::from(h).join("lib64"));
    }
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    dirs.push(PathBuf::from("/usr/local/cuda/targets/x86_64-linux/lib"));
    let wheel = std::env::var_os("NESL_NVRTC_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("nesl-nvrtc"))
        });
    if let Some(w) = wheel {
        dirs.push(w.join("nvidia").join("cu13").join("lib"));
    }
    let mut out: Vec<PathBuf> = std::env::var_os("NESL_NVRTC_LIB")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    for d in dirs {
        out.push(d.join("libnvrtc.so.13"));
    }
    out
}

/// Loads the first NVRTC of [`nvrtc_candidates`] that exists, with the builtins library
/// beside it (NVRTC opens `libnvrtc-builtins.so.13.x` by name, which then finds the loaded
/// one), and keeps them loaded for the life of the process; returns the NVRTC path.
fn preload_nvrtc() -> Option<PathBuf> {
    type Loaded = Option<(PathBuf, Vec<libloading::Library>)>;
    static LIB: OnceLock<Loaded> = OnceLock::new();
    LIB.get_or_init(|| {
        nvrtc_candidates()
            .into_iter()
            .filter(|p| p.exists())
            .find_map(|p| {
                let mut libs = Vec::new();
                if let Some(dir) = p.parent() {
                    let builtins = std::fs::read_dir(dir)
                        .into_iter()
                        .flatten()
                        .flatten()
                        .map(|e| e.path())
                        .filter(|f| {
                            f.file_name()
                                .and_then(|n| n.to_str())
                                .is_some_and(|n| n.starts_with("libnvrtc-builtins.so."))
                        });
                    for b in builtins {
                        // SAFETY: loading NVRTC's builtins runs only its initialisers.
                        if let Ok(l) = unsafe { libloading::Library::new(&b) } {
                            libs.push(l);
                        }
                    }
                }
                // SAFETY: loading NVRTC runs only its initialisers, as cudarc's own loading does.
                let l = unsafe { libloading::Library::new(&p) }.ok()?;
                libs.push(l);
                Some((p, libs))
            })
    })
    .as_ref()
    .map(|(p, _)| p.clone())
}

/// NVRTC's version as `(major, minor)`, or `None` when it is not loadable.
pub fn nvrtc_version() -> Option<(i32, i32)> {
    if !nvrtc_present() {
        return None;
    }
    let (mut major, mut minor) = (0i32, 0i32);
    // SAFETY: the library is present; the pointers are valid for writes.
    let r = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    r.result().ok().map(|_| (major, minor))
}

/// The full text of a kernel module: the common header followed by the source.
pub fn module_text(source: &str) -> String {
    let mut s = String::with_capacity(kernels::COMMON.len() + source.len() + 1);
    s.push_str(kernels::COMMON);
    s.push('\n');
    s.push_str(source);
    s
}

/// 64-bit FNV-1a: a stable hash (unlike std's hasher) for the disk cache's file names.
pub fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in *p {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        // separator so that ("ab","c") and ("a","bc") differ
        h ^= 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The directory of the on-disk cache: `$NESL_CUDA_CACHE`, else `$XDG_CACHE_HOME/nesl/cuda`,
/// else `$HOME/.cache/nesl/cuda`; `None` when none can be named.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("NESL_CUDA_CACHE") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(PathBuf::from(d).join("nesl").join("cuda"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("nesl").join("cuda"))
}

type MemCache = Mutex<HashMap<u64, Arc<Vec<u8>>>>;

fn mem_cache() -> &'static MemCache {
    static CACHE: OnceLock<MemCache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Where a compiled module came from (for statistics and tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheHit {
    /// Compiled earlier in this process.
    Memory,
    /// Read from the on-disk cache.
    Disk,
    /// Compiled now by NVRTC.
    Compiled,
}

/// Compiles `text` (a complete CUDA C unit) for `arch` (e.g. `sm_90`) to a CUBIN, using the
/// process and disk caches. `name` only labels errors.
pub fn compile_cached(
    name: &str,
    text: &str,
    arch: &str,
) -> Result<(Arc<Vec<u8>>, CacheHit), CompileError> {
    let version = nvrtc_version().ok_or(CompileError::NoNvrtc)?;
    let vtag = format!("nvrtc {}.{}", version.0, version.1);
    let opts = NVRTC_OPTIONS.join(" ");
    let key = fnv1a(&[
        text.as_bytes(),
        arch.as_bytes(),
        opts.as_bytes(),
        vtag.as_bytes(),
    ]);
    if let Ok(cache) = mem_cache().lock() {
        if let Some(bin) = cache.get(&key) {
            return Ok((bin.clone(), CacheHit::Memory));
        }
    }
    let file = cache_dir().map(|d| d.join(format!("{name}-{arch}-{key:016x}.cubin")));
    if let Some(f) = &file {
        if let Ok(bytes) = std::fs::read(f) {
            if !bytes.is_empty() {
                let bin = Arc::new(bytes);
                if let Ok(mut cache) = mem_cache().lock() {
                    cache.insert(key, bin.clone());
                }
                return Ok((bin, CacheHit::Disk));
            }
        }
    }
    let bin = Arc::new(compile_cubin(name, text, arch)?);
    if let Some(f) = &file {
        // Best effort: a read-only or missing cache directory only costs a recompilation.
        if let Some(dir) = f.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let tmp = f.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, bin.as_slice()).is_ok() && std::fs::rename(&tmp, f).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
    if let Ok(mut cache) = mem_cache().lock() {
        cache.insert(key, bin.clone());
    }
    Ok((bin, CacheHit::Compiled))
}

/// Compiles `text` for `arch` with NVRTC, bypassing the caches, and returns the CUBIN.
pub fn compile_cubin(name: &str, text: &str, arch: &str) -> Result<Vec<u8>, CompileError> {
    if !nvrtc_present() {
        return Err(CompileError::NoNvrtc);
    }
    let fail = |log: String| CompileError::Failed {
        name: name.to_string(),
        arch: arch.to_string(),
        log,
    };
    let src = CString::new(text).map_err(|_| fail("source contains a NUL byte".into()))?;
    let cname = CString::new(format!("{name}.cu")).map_err(|_| fail("bad module name".into()))?;
    let prog = result::create_program(&src, Some(&cname))
        .map_err(|e| fail(format!("nvrtcCreateProgram: {e}")))?;
    let mut options: Vec<String> = vec![format!("--gpu-architecture={arch}")];
    options.extend(NVRTC_OPTIONS.iter().map(|s| s.to_string()));
    // SAFETY: `prog` was just created and is destroyed exactly once below.
    let out = unsafe {
        let compiled = result::compile_program(prog, &options);
        let r = match compiled {
            Err(e) => {
                let log = result::get_program_log(prog)
                    .map(|l| c_chars_to_string(&l))
                    .unwrap_or_default();
                Err(fail(format!("{e}: {}", log.trim())))
            }
            Ok(()) => get_cubin(prog).map_err(|e| fail(format!("nvrtcGetCUBIN: {e}"))),
        };
        let _ = result::destroy_program(prog);
        r
    };
    let _ = (src, cname);
    out
}

/// # Safety
/// `prog` must be a successfully compiled, live NVRTC program.
unsafe fn get_cubin(prog: sys::nvrtcProgram) -> Result<Vec<u8>, result::NvrtcError> {
    let mut size: usize = 0;
    sys::nvrtcGetCUBINSize(prog, &mut size).result()?;
    let mut buf = vec![0u8; size];
    sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut c_char).result()?;
    Ok(buf)
}

fn c_chars_to_string(v: &[c_char]) -> String {
    let bytes: Vec<u8> = v
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Compiles every module of the `kernels` crate for `arch` (in parallel, bypassing the
/// caches), returning `(name, cubin size)` per module, or the first failure.
pub fn compile_all_kernels(arch: &str) -> Result<Vec<(&'static str, usize)>, CompileError> {
    std::thread::scope(|sc| {
        let jobs: Vec<_> = kernels::SOURCES
            .iter()
            .map(|(name, src)| {
                sc.spawn(move || {
                    compile_cubin(name, &module_text(src), arch).map(|b| (*name, b.len()))
                })
            })
            .collect();
        jobs.into_iter()
            .map(|j| {
                j.join().unwrap_or_else(|_| {
                    Err(CompileError::Failed {
                        name: "?".into(),
                        arch: arch.to_string(),
                        log: "the compiling thread panicked".into(),
                    })
                })
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_is_stable_and_separates_parts() {
        assert_eq!(fnv1a(&[]), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(&[b"abc"]), fnv1a(&[b"abc"]));
        assert_ne!(fnv1a(&[b"ab", b"c"]), fnv1a(&[b"a", b"bc"]));
        assert_ne!(fnv1a(&[b"x", b"sm_90"]), fnv1a(&[b"x", b"sm_80"]));
    }

    #[test]
    fn module_text_starts_with_the_common_header() {
        let t = module_text("extern \"C\" __global__ void k() {}");
        assert!(t.starts_with(kernels::COMMON));
        assert!(t.ends_with("void k() {}"));
    }

    #[test]
    fn candidates_end_with_the_soname() {
        for p in nvrtc_candidates() {
            if std::env::var_os("NESL_NVRTC_LIB").is_none() {
                assert!(p.ends_with("libnvrtc.so.13"), "{}", p.display());
            }
        }
    }
}
