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
use std::path::{Path, PathBuf};
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

/// What a cached binary is built from, as one byte string: each part (source text,
/// architecture, compiler and its options, ...) preceded by its length, so that the
/// boundaries between parts count. The caches store it beside the binary and compare it
/// before using the binary.
pub fn key_material(parts: &[&[u8]]) -> Vec<u8> {
    let mut key = Vec::with_capacity(parts.iter().map(|p| p.len() + 21).sum());
    for p in parts {
        key.extend_from_slice(format!("{}:", p.len()).as_bytes());
        key.extend_from_slice(p);
        key.push(b'\n');
    }
    key
}

/// SHA-256 of `bytes` as 64 lowercase hex digits: the caches' file names (and the
/// superoperator kernels' names, from a prefix).
pub fn digest(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The entry of an on-disk cache: the binary at `binary` when the file `key_file`
/// beside it holds exactly `key` (what the binary was built from); `None` otherwise (no
/// entry, an unreadable one, or one built from something else: a hash collision or a
/// file put there by someone else).
pub fn read_entry(binary: &Path, key_file: &Path, key: &[u8]) -> Option<Vec<u8>> {
    if !entry_matches(binary, key_file, key) {
        return None;
    }
    std::fs::read(binary).ok().filter(|b| !b.is_empty())
}

/// True when `key_file` holds exactly `key` and `binary` exists ([`read_entry`] without
/// reading the binary; for libraries that are loaded by path).
pub fn entry_matches(binary: &Path, key_file: &Path, key: &[u8]) -> bool {
    binary.is_file() && std::fs::read(key_file).is_ok_and(|k| k == key)
}

/// Writes a cache entry (best effort: a read-only or missing cache directory only costs
/// a recompilation): the key first, then the binary, each through a temporary file
/// renamed into place, so a reader never sees half a file.
pub fn write_entry(binary: &Path, key_file: &Path, key: &[u8], bytes: &[u8]) {
    if let Some(dir) = binary.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    for (path, data) in [(key_file, key), (binary, bytes)] {
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, data).is_err() || std::fs::rename(&tmp, path).is_err() {
            let _ = std::fs::remove_file(&tmp);
            return;
        }
    }
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

/// Compiled modules of this process, by their key material.
type MemCache = Mutex<HashMap<Vec<u8>, Arc<Vec<u8>>>>;

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
    let key = key_material(&[
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
    // `NAME-ARCH-SHA256.cubin`, built from exactly `NAME-ARCH-SHA256.key`.
    let stem = cache_dir().map(|d| d.join(format!("{name}-{arch}-{}", digest(&key))));
    let files = stem.map(|s| (s.with_extension("cubin"), s.with_extension("key")));
    if let Some((bin, key_file)) = &files {
        if let Some(bytes) = read_entry(bin, key_file, &key) {
            let bin = Arc::new(bytes);
            if let Ok(mut cache) = mem_cache().lock() {
                cache.insert(key, bin.clone());
            }
            return Ok((bin, CacheHit::Disk));
        }
    }
    let bin = Arc::new(compile_cubin(name, text, arch)?);
    if let Some((path, key_file)) = &files {
        write_entry(path, key_file, &key, &bin);
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
        let modules = crate::semantics::modules();
        let jobs: Vec<_> = modules
            .into_iter()
            .map(|(name, src)| {
                sc.spawn(move || {
                    compile_cubin(name, &module_text(&src), arch).map(|b| (name, b.len()))
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
    fn keys_are_sha256_of_every_part() {
        assert_eq!(digest(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_ne!(key_material(&[b"ab", b"c"]), key_material(&[b"a", b"bc"]));
        assert_ne!(digest(&key_material(&[b"x", b"sm_90"])), digest(&key_material(&[b"x", b"sm_80"])));
    }

    /// A cached binary is used only when the key stored beside it is the one asked for:
    /// one built from other source (a collision of names, a planted file) is not.
    #[test]
    fn cache_entries_are_used_only_for_their_own_source() {
        let dir = std::env::temp_dir().join(format!("nesl-cache-test-{}", std::process::id()));
        let (bin, key_file) = (dir.join("k.cubin"), dir.join("k.key"));
        let key = key_material(&[b"__global__ void k() {}", b"sm_90"]);
        assert_eq!(read_entry(&bin, &key_file, &key), None);
        write_entry(&bin, &key_file, &key, b"BINARY");
        assert_eq!(read_entry(&bin, &key_file, &key).as_deref(), Some(&b"BINARY"[..]));
        let other = key_material(&[b"__global__ void k() { evil(); }", b"sm_90"]);
        assert_eq!(read_entry(&bin, &key_file, &other), None);
        assert!(!entry_matches(&bin, &key_file, &other));
        std::fs::write(&key_file, &other).unwrap();
        assert_eq!(read_entry(&bin, &key_file, &key), None, "a planted key file is not the source asked for");
        std::fs::remove_file(&key_file).unwrap();
        assert_eq!(read_entry(&bin, &key_file, &key), None, "a binary with no key beside it is not used");
        let _ = std::fs::remove_dir_all(&dir);
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
