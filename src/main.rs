//! `nesl`: the command line of the NESL system.
//!
//! Each subcommand lives in its own module under `src/cmd/` and calls the driver (the
//! `nesl` library: pipeline, executors, session); this binary parses arguments, prints
//! and chooses exit statuses. The only place that uses `anyhow`.

mod cmd;

use clap::{Parser, Subcommand};
use nesl::Backend;
use std::path::PathBuf;
use std::process::ExitCode;

/// Vectors of 256 KiB and more come from one reserved range, best fit over coalescing free
/// blocks ([`vcode::region`]), so that a freed vector's pages serve the next one of any
/// size; everything else from mimalloc, which keeps freed memory for reuse instead of
/// unmapping it (with the system allocator, page faults on fresh memory were a fifth of
/// the time of irregular programs such as Barnes-Hut).
#[global_allocator]
/// Counted, for the memory limit (`--max-memory`, [`vcode::memory`]).
static GLOBAL: vcode::memory::Counting<vcode::region::Region<mimalloc::MiMalloc>> =
    vcode::memory::Counting(vcode::region::Region::new(mimalloc::MiMalloc));

/// mimalloc's `purge_delay` option (the same index in its v2 and v3 option tables).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Freed memory stays committed while a form runs, and the top level gives it back to
/// the OS after each form ([`vcode::memory::release_free_memory`]). mimalloc's default
/// purge delay, 10 ms, is shorter than the gap between two vector operations of a
/// recursive program (quicksort 1M on 2 threads took 109k page faults and 1.5 s of CPU
/// time, against 0.3k and 0.6 s with a delay of 1 s); even 1 s let a loaded machine purge
/// Black-Scholes' freed vectors mid-form and page-fault them in again (23k faults and half
/// its time clearing fresh pages, against under 1k). So the delay is ten minutes, and the
/// forced collection between forms purges at once. `MIMALLOC_PURGE_DELAY` still wins
/// when set.
fn keep_freed_memory_while_a_form_runs() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets a plain integer option; mimalloc reads it at each purge.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 600_000) };
    }
    vcode::memory::set_release(give_freed_memory_back);
}

/// mimalloc's forced collection: frees this thread's empty pages and purges every arena
/// block whose purge was scheduled, whatever its delay.
fn give_freed_memory_back() {
    // SAFETY: a plain call into the allocator, safe at any time from any thread.
    unsafe { libmimalloc_sys::mi_collect(true) };
    GLOBAL.0.release();
}

/// NESL: a nested data-parallel language, on the CPU and on NVIDIA GPUs.
#[derive(Parser, Debug)]
#[command(name = "nesl", version, about)]
pub struct Cli {
    /// Threads of the CPU vector library (default: the `NESL_THREADS` environment
    /// variable, else all cores). Results are identical at every thread count.
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub threads: Option<u64>,
    /// Most nested calls before a run stops with a call stack overflow (runaway
    /// recursion); default 1048576.
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1u64 << 32))]
    pub max_call_depth: Option<u64>,
    /// Most heap memory a run may use (e.g. `512M`, `4G`); an allocation past it stops
    /// the form with an out-of-memory error. Default: the `NESL_MAX_MEMORY` environment
    /// variable, else three quarters of physical memory.
    #[arg(long, global = true, value_name = "SIZE", value_parser = parse_size)]
    pub max_memory: Option<usize>,
    #[command(subcommand)]
    pub command: Command,
}

/// Options shared by the commands that run code.
#[derive(clap::Args, Debug, Clone)]
pub struct RunOpts {
    /// Vector library to run on.
    #[arg(long, value_enum, default_value = "auto")]
    pub backend: Backend,
    /// Optimisation level: 0 = VCODE as written, 1 = inlined and re-stacked, 2 = fused.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(0..=2))]
    pub opt: u8,
    /// Print how many CVL operations ran, by kind, the elements they touched, and the VCODE instructions executed.
    #[arg(long)]
    pub stats: bool,
    /// Where the graphics library draws: `web` (a page served on 127.0.0.1; the default
    /// of `run` and `repl` at a terminal) or `svg:DIR` (one `DIR/<title>.svg` per window;
    /// the default otherwise, with DIR `.`, and for `test` a temporary folder).
    #[arg(long, value_name = "web|svg:DIR")]
    pub display: Option<String>,
    /// Input events for the svg display, one a line: `button NAME`, `click X Y [BUTTON]`
    /// (window pixels, origin at the lower left) or `key C`.
    #[arg(long, value_name = "FILE")]
    pub events: Option<PathBuf>,
}

impl RunOpts {
    /// How the driver runs code for these options.
    pub fn config(&self) -> nesl::Config {
        nesl::Config::new(self.backend, self.opt).with_stats(self.stats)
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Compile and run a NESL program, printing the top-level transcript.
    Run {
        /// The `.nesl` file.
        file: PathBuf,
        #[command(flatten)]
        opts: RunOpts,
        /// Write the statistics as JSON to this file: the CVL operation counts, the device's
        /// counters (GPU), the CPU library's thread count and the peak resident memory.
        #[arg(long, value_name = "FILE")]
        stats_json: Option<PathBuf>,
    },
    /// Parse and type-check a NESL program; print each definition's type.
    Check {
        /// The `.nesl` file.
        file: PathBuf,
    },
    /// Compile a NESL program to VCODE.
    Compile {
        /// The `.nesl` file.
        file: PathBuf,
        /// Output `.vcode` file (stdout when absent).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// After each instruction, its NESL origin as a VCODE comment
        /// (`{ FILE:line:col in FUNCTION }`); the text still reads back as the same program.
        #[arg(long)]
        origins: bool,
    },
    /// Run (or only check) a VCODE or FCODE file, printing the final stack as `vinterp` does.
    Vcode {
        /// The `.vcode` / `.fcode` file.
        file: PathBuf,
        /// Only parse and verify.
        #[arg(long)]
        check: bool,
        #[command(flatten)]
        opts: RunOpts,
    },
    /// Optimise VCODE into FCODE.
    Opt {
        /// Input `.vcode`.
        file: PathBuf,
        /// Output `.fcode` (stdout when absent).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Also write the CUDA C of the superoperators here.
        #[arg(long)]
        emit_cuda: Option<PathBuf>,
        /// Optimisation level: 0 = unchanged, 1 = inlined and re-stacked, 2 = fused.
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(0..=2))]
        opt: u8,
        /// Check the input and the result of every pass.
        #[arg(long)]
        verify: bool,
        /// Print the program after this pass on stderr (inline, let, cse, reduce, fuse, checks, codegen).
        #[arg(long, value_name = "PASS")]
        dump_after: Option<String>,
        /// Print the time each pass took on stderr.
        #[arg(long)]
        timings: bool,
        /// After each instruction, the place of the input it came from as a VCODE
        /// comment (`{ IN.vcode:line:col }`, plus `, inlined at IN.vcode:line:col` for
        /// each call the inliner replaced); the text still reads back as the same program.
        #[arg(long)]
        origins: bool,
    },
    /// Run the benchmark programs and print one comparison table (markdown), plus JSON and
    /// log-log SVG plots when `--out` is given.
    Bench {
        /// Small sizes only (under a minute; for CI).
        #[arg(long)]
        quick: bool,
        /// A sweep of sizes up to the paper's (the paper's sizes only by default).
        #[arg(long, conflicts_with = "quick")]
        sweep: bool,
        /// Runs per configuration (the table shows the median, min and max).
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Only these programs (comma-separated: dotp,quicksort,blackscholes,quickhull,barneshut,smvm,muladd,loop,fib,strbuild,collatz,indexloop).
        #[arg(long, value_delimiter = ',')]
        programs: Vec<String>,
        /// Optimisation levels to run (comma-separated).
        #[arg(long, value_delimiter = ',', default_value = "0,1,2")]
        opt: Vec<u8>,
        /// Backends to run (comma-separated `cpu`, `cuda`); default: cpu, plus cuda when a GPU is present.
        #[arg(long, value_delimiter = ',')]
        backend: Vec<String>,
        /// Thread counts of the CPU runs and the Rust peers (comma-separated); default: 1 and
        /// all threads (`--threads N` or `NESL_THREADS`, else every core). A GPU backend
        /// runs at the largest only.
        #[arg(long, value_delimiter = ',', value_name = "N,N,...", value_parser = clap::value_parser!(u64).range(1..=4096))]
        threads_list: Vec<u64>,
        /// Time limit of one run, in seconds.
        #[arg(long, default_value_t = 600)]
        timeout: u64,
        /// Write `results.json`, `table.md` and one `PROGRAM.svg` plot per program here.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Run the hand-written Rust peer of a benchmark program once, on `--threads` /
    /// `NESL_THREADS` threads, and print one JSON line (program, size, threads, seconds,
    /// ok, peak_rss_bytes). `nesl bench` runs it as a child process.
    #[command(hide = true)]
    BenchPeer {
        /// The benchmark program (dotp, quicksort, blackscholes, quickhull, barneshut, smvm, muladd).
        program: String,
        /// The size `n`.
        n: usize,
    },
    /// The interactive NESL top level (definitions persist; `help;` lists the commands).
    Repl {
        #[command(flatten)]
        opts: RunOpts,
    },
    /// Step through the VCODE of a program (`.nesl`, `.vcode` or `.fcode`): breakpoints,
    /// stack view, call stack. Commands are read from standard input (`help` lists them).
    Debug {
        /// The `.nesl`, `.vcode` or `.fcode` file.
        file: PathBuf,
        /// Vector library to run on.
        #[arg(long, value_enum, default_value = "cpu")]
        backend: Backend,
        /// Optimise the VCODE first (0: step it as compiled; 1, 2: as `nesl opt` leaves it).
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=2))]
        opt: u8,
    },
    /// Time the compiler's stages (parse, check, flatten, optimise) on NESL files
    /// (default: the benchmark programs and the regression corpus).
    #[command(hide = true)]
    Frontbench {
        /// Files or directories of `.nesl` files.
        paths: Vec<PathBuf>,
        /// Runs per file (the best is kept).
        #[arg(long, default_value_t = 5)]
        runs: usize,
    },
    /// Run regression suites (directories of `.nesl` + `.expected`).
    Test {
        /// Directories to run.
        dirs: Vec<PathBuf>,
        #[command(flatten)]
        opts: RunOpts,
    },
}

fn parse_size(s: &str) -> Result<usize, String> {
    vcode::memory::parse_size(s)
}

/// Runs the command on a thread with a deep stack: the front end recurses on expression
/// trees, and its depth limits are set for [`nesl_front::STACK_SIZE`] (a chain of 100,000
/// operators checks; deeper nesting is a located error, never a stack overflow).
fn main() -> ExitCode {
    keep_freed_memory_while_a_form_runs();
    let deep = std::thread::Builder::new()
        .name("nesl".into())
        .stack_size(nesl_front::STACK_SIZE)
        .spawn(run_cli);
    match deep {
        Ok(handle) => handle.join().unwrap_or(ExitCode::from(101)),
        Err(_) => run_cli(),
    }
}

fn run_cli() -> ExitCode {
    let cli = Cli::parse();
    let max_memory = match cli.max_memory {
        Some(n) => Some(n),
        None => match std::env::var("NESL_MAX_MEMORY") {
            Ok(v) if !v.trim().is_empty() => match vcode::memory::parse_size(&v) {
                Ok(n) => Some(n),
                Err(e) => {
                    eprintln!("error: NESL_MAX_MEMORY: {e}");
                    return ExitCode::from(2);
                }
            },
            _ => vcode::memory::default_max_memory(),
        },
    };
    vcode::memory::set_max_memory(max_memory);
    match cli.threads {
        Some(n) => vcode::set_threads(n as usize),
        None => {
            if let Ok(v) = std::env::var("NESL_THREADS") {
                if let Err(e) = vcode::cvl::cpu::threads::parse_threads(&v) {
                    eprintln!("error: NESL_THREADS: {e}");
                    return ExitCode::from(2);
                }
            }
        }
    }
    if let Some(n) = cli.max_call_depth {
        vcode::set_default_max_call_depth(n as usize);
    }
    match cmd::dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
