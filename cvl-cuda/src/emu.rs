//! The CPU emulation of the kernels, for testing the CUDA backend without a GPU.
//!
//! Every kernel module is compiled as C++ (the `kernels` crate's `EMU_HEADER`, then the
//! common header and the module) into a shared library with the system C++ compiler
//! (`$CXX`, else `g++`, else `c++`), cached on disk like the CUBINs, and loaded with
//! `dlopen`. Device memory is host memory; a launch runs the kernel's blocks one after the
//! other, each as cooperative fibers (see `kernels/emu/emu.h`). Only for x86-64 Linux,
//! where every kernel argument travels in a 64-bit integer slot.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::c_void;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use crate::compile;
use crate::CudaInitError;

type LaunchFn = unsafe extern "C" fn(*const c_void, i32, *const u64, u32, u32) -> i32;

/// Serialises launches: the emulation's scheduler state is global to each library.
static LAUNCH: Mutex<()> = Mutex::new(());

/// The most argument slots an emulated kernel may take (`EMU_MAX_ARGS` in emu.h).
const EMU_MAX_ARGS: usize = 32;

/// The loaded emulated modules of one library instance.
pub(crate) struct EmuDev {
    libs: RefCell<Vec<(String, &'static libloading::Library)>>,
    syms: RefCell<HashMap<String, (usize, LaunchFn)>>,
}

fn compiler() -> Option<String> {
    let candidates: Vec<String> = std::env::var("CXX")
        .ok()
        .into_iter()
        .chain(["g++".to_string(), "c++".to_string()])
        .collect();
    candidates.into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// The flags the emulation's libraries are compiled with.
const CXX_FLAGS: [&str; 6] = ["-std=c++17", "-O1", "-shared", "-fPIC", "-w", "-x"];

/// Compiles `text` (CUDA C with the common header) for the emulation, through a disk cache;
/// returns the shared library's path. A cached library `NAME-SHA256.so` is used only
/// when the source beside it, `NAME-SHA256.cpp` (the text compiled, after a first line
/// naming the compiler and its flags), is exactly the one asked for now.
fn compile_emu(name: &str, text: &str) -> Result<PathBuf, String> {
    if !cfg!(all(target_arch = "x86_64", target_os = "linux")) {
        return Err("the kernel emulation needs x86-64 Linux".into());
    }
    let cxx = compiler().ok_or("no C++ compiler (g++) to build the kernel emulation")?;
    // The source as compiled, its first line a comment naming the compiler and flags:
    // what the library is built from, all of it in the key.
    let full = format!("// {cxx} {} c++\n{}\n{}", CXX_FLAGS.join(" "), kernels::EMU_HEADER, text);
    let key = compile::digest(full.as_bytes());
    let dir = compile::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("emu");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let so = dir.join(format!("{name}-{key}.so"));
    let cpp = dir.join(format!("{name}-{key}.cpp"));
    if compile::entry_matches(&so, &cpp, full.as_bytes()) {
        return Ok(so);
    }
    let pid = std::process::id();
    let src = dir.join(format!("{name}-{key}.{pid}.cpp"));
    let tmp = dir.join(format!("{name}-{key}.{pid}.so"));
    std::fs::write(&src, &full).map_err(|e| format!("{}: {e}", src.display()))?;
    let out = Command::new(&cxx)
        .args(CXX_FLAGS)
        .arg("c++")
        .arg(&src)
        .arg("-o")
        .arg(&tmp)
        .output()
        .map_err(|e| format!("running {cxx}: {e}"))?;
    if !out.status.success() {
        let _ = std::fs::remove_file(&src);
        let _ = std::fs::remove_file(&tmp);
        return Err(format!(
            "{cxx} failed on the emulation of {name}: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .take(20)
                .collect::<Vec<_>>()
                .join("\n")
        ));
    }
    // The source beside the library first: a library is used only with its source.
    std::fs::rename(&src, &cpp).map_err(|e| format!("{}: {e}", cpp.display()))?;
    std::fs::rename(&tmp, &so).map_err(|e| format!("{}: {e}", so.display()))?;
    Ok(so)
}

/// Loads a library for the rest of the process (the emulation's libraries are never
/// unloaded, so the symbols stay valid in every instance).
fn load(path: &PathBuf) -> Result<&'static libloading::Library, String> {
    type Loaded = Mutex<HashMap<PathBuf, &'static libloading::Library>>;
    static LIBS: OnceLock<Loaded> = OnceLock::new();
    let mut libs = LIBS
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .map_err(|_| "emulation library table poisoned".to_string())?;
    if let Some(l) = libs.get(path) {
        return Ok(l);
    }
    // SAFETY: the library is one we just compiled from the kernel sources; its
    // initialisers only set up static data.
    let lib = unsafe { libloading::Library::new(path) }
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let lib: &'static libloading::Library = Box::leak(Box::new(lib));
    libs.insert(path.clone(), lib);
    Ok(lib)
}

impl EmuDev {
    /// Compiles (or finds in the cache) and loads every kernel module.
    pub(crate) fn open() -> Result<EmuDev, CudaInitError> {
        static MODULES: OnceLock<Result<Vec<(String, PathBuf)>, String>> = OnceLock::new();
        let mods = MODULES
            .get_or_init(|| {
                std::thread::scope(|sc| {
                    let jobs: Vec<_> = crate::semantics::modules()
                        .into_iter()
                        .map(|(name, src)| {
                            sc.spawn(move || {
                                compile_emu(name, &compile::module_text(&src))
                                    .map(|p| (name.to_string(), p))
                            })
                        })
                        .collect();
                    jobs.into_iter()
                        .map(|j| {
                            j.join()
                                .unwrap_or_else(|_| Err("a compiling thread panicked".into()))
                        })
                        .collect()
                })
            })
            .clone()
            .map_err(CudaInitError::Emulation)?;
        let mut libs = Vec::new();
        for (name, path) in mods {
            libs.push((name, load(&path).map_err(CudaInitError::Emulation)?));
        }
        Ok(EmuDev {
            libs: RefCell::new(libs),
            syms: RefCell::new(HashMap::new()),
        })
    }

    /// Compiles and loads one more module (a superoperator's kernel).
    pub(crate) fn load_text(&self, name: &str, text: &str) -> Result<(), String> {
        if self.libs.borrow().iter().any(|(n, _)| n == name) {
            return Ok(());
        }
        let path = compile_emu(name, text)?;
        let lib = load(&path)?;
        self.libs.borrow_mut().push((name.to_string(), lib));
        Ok(())
    }

    fn symbol(&self, name: &str) -> Result<(usize, LaunchFn), String> {
        if let Some(s) = self.syms.borrow().get(name) {
            return Ok(*s);
        }
        for (_, lib) in self.libs.borrow().iter().rev() {
            // SAFETY: looking up symbols of our own libraries; the kernel is only called
            // through `emu_launch`, with the argument count the caller gives.
            let found = unsafe {
                match (
                    lib.get::<*const c_void>(name.as_bytes()),
                    lib.get::<LaunchFn>(b"emu_launch"),
                ) {
                    (Ok(f), Ok(l)) => Some((*f as usize, *l)),
                    _ => None,
                }
            };
            if let Some(s) = found {
                self.syms.borrow_mut().insert(name.to_string(), s);
                return Ok(s);
            }
        }
        Err(format!("kernel `{name}` not found in the emulated modules"))
    }

    /// Runs kernel `name` on `blocks` blocks of `threads` threads.
    pub(crate) fn launch(
        &self,
        name: &str,
        blocks: u32,
        threads: u32,
        args: &[u64],
    ) -> Result<(), String> {
        if args.len() > EMU_MAX_ARGS {
            return Err(format!(
                "emulated kernel `{name}` takes {} arguments; the emulation passes at most {EMU_MAX_ARGS}",
                args.len()
            ));
        }
        let (f, launch) = self.symbol(name)?;
        let _guard = LAUNCH
            .lock()
            .map_err(|_| "emulation lock poisoned".to_string())?;
        // SAFETY: `f` is an `extern "C"` kernel of our library taking `args.len()` integer
        // slots (see the argument convention in emu.h); `args` outlives the call.
        let rc = unsafe {
            launch(
                f as *const c_void,
                args.len() as i32,
                args.as_ptr(),
                blocks,
                threads,
            )
        };
        if rc != 0 {
            return Err(format!(
                "emulated kernel `{name}` deadlocked or could not start"
            ));
        }
        Ok(())
    }
}

/// Host memory standing for device memory (256-byte aligned, like cudaMalloc's).
pub(crate) fn host_alloc(bytes: usize) -> Option<u64> {
    let layout = std::alloc::Layout::from_size_align(bytes.max(1), 256).ok()?;
    // SAFETY: the layout has a non-zero size.
    let p = unsafe { std::alloc::alloc(layout) };
    (!p.is_null()).then_some(p as u64)
}

/// Frees memory from [`host_alloc`] of the same size.
pub(crate) fn host_free(ptr: u64, bytes: usize) {
    if let Ok(layout) = std::alloc::Layout::from_size_align(bytes.max(1), 256) {
        // SAFETY: `ptr` came from `host_alloc(bytes)` and is freed once.
        unsafe { std::alloc::dealloc(ptr as *mut u8, layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cached library is loaded only beside its own source: one whose `.cpp` says it
    /// was built from something else (a hash collision, a file planted in the cache) is
    /// rebuilt, not loaded.
    #[test]
    fn a_cached_library_is_used_only_with_its_source() {
        if compiler().is_none() || !cfg!(all(target_arch = "x86_64", target_os = "linux")) {
            eprintln!("skipped: no C++ compiler");
            return;
        }
        let dir = std::env::temp_dir().join(format!("nesl-emu-cache-test-{}", std::process::id()));
        // SAFETY (edition 2021: safe): no other test of this crate reads the variable.
        std::env::set_var("NESL_CUDA_CACHE", &dir);
        let text = compile::module_text("extern \"C\" int nesl_cache_probe() { return 7; }\n");
        let so = compile_emu("probe", &text).expect("the library builds");
        let cpp = so.with_extension("cpp");
        let source = std::fs::read_to_string(&cpp).expect("the source is kept beside the library");
        assert!(source.contains("nesl_cache_probe") && source.starts_with("// "), "{source}");
        assert_eq!(compile_emu("probe", &text).unwrap(), so, "a matching entry is reused");

        std::fs::write(&so, b"not a library").unwrap();
        std::fs::write(&cpp, b"// something else\n").unwrap();
        assert_eq!(compile_emu("probe", &text).unwrap(), so);
        assert_ne!(std::fs::read(&so).unwrap(), b"not a library", "the foreign library was rebuilt");
        assert_eq!(std::fs::read_to_string(&cpp).unwrap(), source);
        std::env::remove_var("NESL_CUDA_CACHE");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
