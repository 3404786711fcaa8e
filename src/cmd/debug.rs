//! `nesl debug FILE`: a VCODE stepper with breakpoints and a stack view.
//!
//! The file is a `.nesl` program (compiled to the VCODE that `nesl compile` emits, whose
//! entry function evaluates every top-level form), or a `.vcode` / `.fcode` file.
//! Commands are read line by line from standard input (with line editing on a
//! terminal; echoed after the prompt otherwise, so a scripted session reads as a log).
//! `help` lists them. Stack slots are numbered by depth, as `COPY n d` counts them:
//! 0 is the top. For a `.nesl` file every VCODE function is shown with the source
//! function it was compiled from.

use super::repl::{Line, Reader};
use nesl::Backend;
use nesl::backend::Library;
use nesl::trap_message;
use nesl_front::check::Session;
use nesl_front::flatten::CompileOptions;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use vcode::{Cvl, HostValue, Location, Program, SlotInfo, StepEvent, Stepper};

const PROMPT: &str = "(ndb) ";
/// Elements shown per slot by `stack`; `print` shows up to [`PRINT_LIMIT`].
const STACK_LIMIT: usize = 8;
const PRINT_LIMIT: usize = 1000;
/// Frames shown by `bt`.
const BT_LIMIT: usize = 40;
/// Instructions `list` shows around the current one (unless `list all`).
const LIST_BEFORE: usize = 8;
const LIST_AFTER: usize = 16;

const HELP: &str = "\
Commands (short forms in brackets):
  step [N]         [s]  run one instruction (N instructions), entering calls
  next [N]         [n]  like step, but run a CALL through to its return
  finish           [f]  run until the current function returns
  continue         [c]  run until a breakpoint or the end
  break FUNC       [b]  stop where FUNC starts (a VCODE name, or a NESL function: all its instances)
  break N               stop at instruction N of the current function (as `list` numbers them)
  break FUNC:N          stop at instruction N of FUNC
  break                 list the breakpoints
  delete [K]       [d]  delete breakpoint K (every breakpoint without K)
  stack [N]             every stack slot (or the top N): type, length, first elements, segments
  print N          [p]  the whole slot at depth N (0 = top of the stack)
  bt               [where] the call stack, innermost first
  list [all|FUNC]  [l]  the current function (or FUNC) with `=>` at the current instruction
  help             [h]  this text
  quit             [q]  leave
";

/// Entry point of `nesl debug`.
pub fn main(file: &Path, backend: Backend, opt: u8) -> anyhow::Result<ExitCode> {
    let Some(loaded) = load(file, opt)? else { return Ok(ExitCode::from(1)) };
    match Library::open(backend) {
        Ok(Library::Cpu(cvl)) => session(&loaded, cvl, "cpu"),
        Ok(Library::Cuda(cvl)) => session(&loaded, *cvl, "cuda"),
        Err(e) => {
            eprintln!("error: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

/// A program ready to step, and where its functions came from.
struct Loaded {
    program: Program,
    /// VCODE function name -> the NESL source it was compiled from (`.nesl` only).
    origins: HashMap<String, String>,
    /// NESL function name -> the VCODE functions compiled from it.
    instances: HashMap<String, Vec<String>>,
    /// The NESL source texts the program's origins point into (`.nesl` only).
    sources: Vec<std::sync::Arc<nesl_front::diag::Source>>,
}

/// Reads, compiles (for `.nesl`), verifies and optionally optimises `file`; prints the
/// errors and returns `None` when it cannot be run.
fn load(file: &Path, opt: u8) -> anyhow::Result<Option<Loaded>> {
    let name = file.display().to_string();
    let is_nesl = file.extension().is_some_and(|e| e == "nesl");
    let is_fcode = file.extension().is_some_and(|e| e == "fcode");
    let compiled = if is_nesl {
        nesl::pipeline::read_source(file).and_then(|src| {
            let checked = nesl::pipeline::check(&src.name, &src.text)?;
            let program = nesl::pipeline::flatten(&checked, &CompileOptions::default())?;
            Ok((program, checked.session))
        })
    } else {
        nesl::pipeline::read_vcode(file, false).inspect(|p| super::warn_redefinitions(file, p)).map(|p| (p, Session::new()))
    };
    let (program, session) = match compiled {
        Ok(c) => c,
        Err(nesl::Error::Compile { file, text, diags }) => {
            eprint!("{}", nesl::diagnostics::render(&file, &text, &diags));
            return Ok(None);
        }
        Err(e) => {
            for line in super::opt::file_errors(e) {
                eprintln!("error: {name}:{line}");
            }
            return Ok(None);
        }
    };
    if let Err(errs) = vcode::verify(&program) {
        for e in errs {
            eprintln!("error: {name}:{e}");
        }
        return Ok(None);
    }
    let program = if opt > 0 && !is_fcode {
        match nesl::pipeline::optimise(&program, opt) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("error: {name}: {e}");
                return Ok(None);
            }
        }
    } else {
        program
    };
    let (origins, instances) = nesl_map(&program, &session);
    let mut sources = session.sources.clone();
    if let Ok(p) = nesl_front::flatten::prelude::prelude() {
        sources.extend(p.sources.iter().cloned());
    }
    Ok(Some(Loaded { program, origins, instances, sources }))
}

/// For each VCODE function, the NESL code it was compiled from, and for each NESL
/// function its VCODE functions, read off the instructions' origins: a function belongs
/// to the scope most of its own (not inlined) instructions come from.
fn nesl_map(program: &Program, session: &Session) -> (HashMap<String, String>, HashMap<String, Vec<String>>) {
    let mut origins = HashMap::new();
    let mut instances: HashMap<String, Vec<String>> = HashMap::new();
    if program.scopes.is_empty() {
        return (origins, instances);
    }
    for f in &program.functions {
        let mut counts: HashMap<u32, usize> = HashMap::new();
        for o in f.origins.iter().filter(|o| o.scope > 0 && o.inlined_at == 0) {
            *counts.entry(o.scope).or_default() += 1;
        }
        let best = counts.into_iter().max_by_key(|&(scope, n)| (n, std::cmp::Reverse(scope))).map(|(s, _)| s);
        let Some(scope) = best.and_then(|s| program.scopes.get(s as usize - 1)) else {
            origins.insert(f.name.clone(), "a helper of the code generator".to_string());
            continue;
        };
        let text = match &scope.function {
            None => format!("the top-level forms of {}", scope.file),
            Some(n) if &*scope.file == nesl_front::flatten::prelude::PRELUDE_NAME => format!("{n} (standard library)"),
            Some(n) => {
                let at = session.functions.get(n).and_then(|fi| {
                    let src = session.sources.get(fi.source?)?;
                    let (line, col) = src.line_col(fi.def.span.start as usize);
                    Some(format!("{n} at {}:{line}:{col}", src.name))
                });
                at.unwrap_or_else(|| format!("{n} in {}", scope.file))
            }
        };
        if let Some(n) = &scope.function {
            instances.entry(n.clone()).or_default().push(f.name.clone());
        }
        origins.insert(f.name.clone(), text);
    }
    (origins, instances)
}

/// A debugging session over one program.
struct Debugger<'a, C: Cvl> {
    stepper: Stepper<'a, C>,
    loaded: &'a Loaded,
    /// Breakpoints: number and place (deleted ones are removed).
    breaks: Vec<(usize, Location)>,
    next_break: usize,
    /// How the run ended, once it has.
    ended: Option<String>,
}

/// Why a run command stopped.
enum Stop {
    /// The command's own condition (a step count, a return).
    Done,
    /// A breakpoint (its number).
    Break(usize),
    /// The program ended (or trapped); the message was printed.
    Ended,
    /// Ctrl-C, between two instructions: the program can go on.
    Interrupted,
}

fn session<C: Cvl>(loaded: &Loaded, mut cvl: C, backend: &str) -> anyhow::Result<ExitCode> {
    let mut reader = Reader::new(None);
    let stepper = match Stepper::new(&loaded.program, &mut cvl, &vcode::RunOptions::default()) {
        Ok(s) => s,
        Err(t) => {
            eprintln!("error: the program cannot start: {}", trap_message(&t));
            return Ok(ExitCode::from(1));
        }
    };
    let mut dbg = Debugger { stepper, loaded, breaks: Vec::new(), next_break: 1, ended: None };
    let stdout = std::io::stdout();
    {
        let mut out = stdout.lock();
        let p = &loaded.program;
        writeln!(
            out,
            "{} functions, {} instructions, on the {backend} backend. `help` lists the commands.",
            p.functions.len(),
            p.instruction_count()
        )?;
        dbg.where_line(&mut out, "at")?;
    }
    let mut last = String::new();
    loop {
        let line = match reader.read(PROMPT)? {
            Line::Text(t) => t,
            Line::Interrupted => continue,
            Line::Eof => break,
        };
        let mut command = line.trim().to_string();
        if !reader.interactive() {
            writeln!(stdout.lock(), "{PROMPT}{command}")?;
        } else if command.is_empty() {
            command = last.clone();
        }
        if command.is_empty() {
            continue;
        }
        reader.remember(&command);
        last = command.clone();
        let mut out = stdout.lock();
        vcode::interrupt::clear();
        let go_on = dbg.command(&command, &mut out)?;
        out.flush()?;
        if !go_on {
            break;
        }
    }
    Ok(ExitCode::SUCCESS)
}

impl<C: Cvl> Debugger<'_, C> {
    fn program(&self) -> &Program {
        &self.loaded.program
    }

    /// Runs one command; false when the session should end.
    fn command(&mut self, line: &str, out: &mut dyn Write) -> std::io::Result<bool> {
        let mut words = line.split_whitespace();
        let verb = words.next().unwrap_or("");
        let args: Vec<&str> = words.collect();
        let count = |args: &[&str]| -> Result<usize, String> {
            match args {
                [] => Ok(1),
                [n] => n.parse::<usize>().ok().filter(|&n| n > 0).ok_or_else(|| format!("`{n}` is not a count")),
                _ => Err("too many arguments".into()),
            }
        };
        match verb {
            "step" | "s" | "stepi" | "si" => match count(&args) {
                Ok(n) => self.run(out, |d, done| d.step_n(done, n))?,
                Err(e) => writeln!(out, "error: {e}")?,
            },
            "next" | "n" | "nexti" | "ni" => match count(&args) {
                Ok(n) => self.run(out, |d, done| d.next_n(done, n))?,
                Err(e) => writeln!(out, "error: {e}")?,
            },
            "finish" | "f" => self.run(out, |d, done| d.finish(done))?,
            "continue" | "c" | "run" | "r" => self.run(out, |d, done| d.until(done, |_| false))?,
            "break" | "b" => self.set_break(&args, out)?,
            "delete" | "d" => self.delete(&args, out)?,
            "stack" => self.show_stack(&args, out)?,
            "print" | "p" => self.print(&args, out)?,
            "bt" | "backtrace" | "where" => self.backtrace(out)?,
            "list" | "l" => self.list(&args, out)?,
            "help" | "h" | "?" => out.write_all(HELP.as_bytes())?,
            "quit" | "q" | "exit" => return Ok(false),
            other => writeln!(out, "error: unknown command `{other}` (`help` lists the commands)")?,
        }
        Ok(true)
    }

    /// Runs a stepping command and reports where it stopped.
    fn run(
        &mut self,
        out: &mut dyn Write,
        f: impl FnOnce(&mut Self, &mut dyn Write) -> std::io::Result<Stop>,
    ) -> std::io::Result<()> {
        if let Some(how) = &self.ended {
            return writeln!(out, "the program is not running ({how}); `stack` shows its final stack, `quit` leaves");
        }
        match f(self, out)? {
            Stop::Done => self.where_line(out, "at"),
            Stop::Break(k) => self.where_line(out, &format!("breakpoint {k},")),
            Stop::Ended => Ok(()),
            Stop::Interrupted => self.where_line(out, "interrupted,"),
        }
    }

    /// One instruction; `Some(stop)` when the program ended or Ctrl-C was pressed
    /// (then before the instruction, so that the program can go on; an instruction that
    /// Ctrl-C cut short ends the program with an `interrupted` error).
    fn step_one(&mut self, out: &mut dyn Write) -> std::io::Result<Option<Stop>> {
        if vcode::interrupt::requested() {
            vcode::interrupt::clear();
            return Ok(Some(Stop::Interrupted));
        }
        out.flush()?;
        let steps = self.stepper.steps();
        let event = {
            let mut stdout = std::io::stdout();
            self.stepper.step(&mut stdout)
        };
        let msg = match event {
            Ok(StepEvent::Stepped) => return Ok(None),
            Ok(StepEvent::Finished) => {
                let n = self.stepper.stack_len();
                writeln!(out, "the program finished after {} instructions; its final stack (bottom first):", steps + 1)?;
                let mut vals = Vec::with_capacity(n);
                for i in 0..n {
                    match self.stepper.read_slot(i) {
                        Ok(v) => vals.push(v),
                        Err(t) => {
                            writeln!(out, "  (cannot read slot {}: {})", n - 1 - i, t.kind)?;
                            vals.clear();
                            break;
                        }
                    }
                }
                out.write_all(vcode::format_vinterp(&vals).as_bytes())?;
                "finished".to_string()
            }
            Ok(StepEvent::Exited(s)) => {
                writeln!(out, "the program ran EXIT with status {s}")?;
                if let Some(line) = self.source_line(self.stepper.location()) {
                    writeln!(out, "{line}")?;
                }
                format!("exited with status {s}")
            }
            Err(t) => {
                writeln!(out, "RUNTIME ERROR: {}", trap_message(&t))?;
                let at = t.site.as_ref().and_then(|s| {
                    let f = self.program().lookup(&s.function)?;
                    let instr = self.program().functions[f].origins.iter().position(|o| *o == s.origin)?;
                    self.source_line(Location { function: f, instr })
                });
                if let Some(line) = at {
                    writeln!(out, "{line}")?;
                }
                "stopped by a runtime error".to_string()
            }
        };
        self.ended = Some(msg);
        Ok(Some(Stop::Ended))
    }

    fn at_break(&self) -> Option<usize> {
        let here = self.stepper.location();
        self.breaks.iter().find(|(_, l)| *l == here).map(|(k, _)| *k)
    }

    fn step_n(&mut self, out: &mut dyn Write, n: usize) -> std::io::Result<Stop> {
        for i in 0..n {
            if let Some(stop) = self.step_one(out)? {
                return Ok(stop);
            }
            if i + 1 < n {
                if let Some(k) = self.at_break() {
                    return Ok(Stop::Break(k));
                }
            }
        }
        Ok(Stop::Done)
    }

    /// Runs until `done` holds (checked after each instruction), a breakpoint or the end.
    fn until(&mut self, out: &mut dyn Write, done: impl Fn(&Stepper<'_, C>) -> bool) -> std::io::Result<Stop> {
        loop {
            if let Some(stop) = self.step_one(out)? {
                return Ok(stop);
            }
            if done(&self.stepper) {
                return Ok(Stop::Done);
            }
            if let Some(k) = self.at_break() {
                return Ok(Stop::Break(k));
            }
        }
    }

    fn next_n(&mut self, out: &mut dyn Write, n: usize) -> std::io::Result<Stop> {
        for _ in 0..n {
            let depth = self.stepper.call_depth();
            let stop = if self.stepper.pending_call().is_some() {
                self.until(out, |s| s.call_depth() <= depth)?
            } else {
                self.step_n(out, 1)?
            };
            if !matches!(stop, Stop::Done) {
                return Ok(stop);
            }
        }
        Ok(Stop::Done)
    }

    fn finish(&mut self, out: &mut dyn Write) -> std::io::Result<Stop> {
        let depth = self.stepper.call_depth();
        if depth == 0 {
            writeln!(out, "(in the entry function: running to the end)")?;
            return self.until(out, |_| false);
        }
        let name = self.function_name(self.stepper.location().function);
        let stop = self.until(out, |s| s.call_depth() < depth)?;
        if matches!(stop, Stop::Done) {
            writeln!(out, "returned from {name}")?;
        }
        Ok(stop)
    }

    fn function_name(&self, f: usize) -> String {
        self.program().functions.get(f).map(|f| f.name.clone()).unwrap_or_default()
    }

    /// ` [qsort at f.nesl:2:1]` for a function with a known origin.
    fn origin(&self, f: usize) -> String {
        let name = self.function_name(f);
        self.loaded.origins.get(&name).map(|o| format!("  [{o}]")).unwrap_or_default()
    }

    fn describe(&self, l: Location) -> String {
        let f = &self.program().functions[l.function];
        let ins = f.body.get(l.instr).map(|i| i.to_string()).unwrap_or_default();
        format!("{} {}: {ins}", f.name, l.instr)
    }

    /// `LABEL FUNC N: INSTR  [origin]` for the current location, then the NESL source
    /// line the instruction was compiled from (`.nesl` only).
    fn where_line(&self, out: &mut dyn Write, label: &str) -> std::io::Result<()> {
        let l = self.stepper.location();
        writeln!(out, "{label} {}{}", self.describe(l), self.origin(l.function))?;
        if let Some(s) = self.source_line(l) {
            writeln!(out, "{s}")?;
        }
        Ok(())
    }

    /// `    FILE:LINE:COL | the source line` of the NESL expression an instruction was
    /// compiled from, when its origin is in a NESL source.
    fn source_line(&self, l: Location) -> Option<String> {
        let f = self.program().functions.get(l.function)?;
        let o = f.origins.get(l.instr)?;
        let scope = self.program().scopes.get((o.scope as usize).checked_sub(1)?)?;
        let src = self.loaded.sources.iter().find(|s| s.name == scope.file)?;
        let line = src.text.lines().nth((o.pos.line as usize).checked_sub(1)?)?;
        Some(format!("    {}:{}:{} | {}", src.name, o.pos.line, o.pos.col, line.trim_end()))
    }

    /// The function called `name`: a VCODE name (exact, then ignoring case) or, for a
    /// `.nesl` file, every instance of the NESL function of that name.
    fn functions_named(&self, name: &str) -> Vec<usize> {
        let fs = &self.program().functions;
        if let Some(i) = self.program().lookup(name) {
            return vec![i];
        }
        let folded: Vec<usize> = (0..fs.len()).filter(|&i| fs[i].name.eq_ignore_ascii_case(name)).collect();
        if !folded.is_empty() {
            return folded;
        }
        match self.loaded.instances.get(name) {
            Some(v) => v.iter().filter_map(|n| self.program().lookup(n)).collect(),
            None => Vec::new(),
        }
    }

    fn set_break(&mut self, args: &[&str], out: &mut dyn Write) -> std::io::Result<()> {
        let spec = match args {
            [] => return self.list_breaks(out),
            [s] => *s,
            _ => return writeln!(out, "error: `break` takes one FUNC, N or FUNC:N"),
        };
        let (func, instr) = match spec.rsplit_once(':') {
            Some((f, n)) => (Some(f), Some(n)),
            None if spec.bytes().all(|b| b.is_ascii_digit()) => (None, Some(spec)),
            None => (Some(spec), None),
        };
        let functions = match func {
            None => vec![self.stepper.location().function],
            Some(f) => self.functions_named(f),
        };
        if functions.is_empty() {
            return writeln!(out, "error: no function `{}`", func.unwrap_or(""));
        }
        let instr = match instr.map(str::parse::<usize>) {
            None => 0,
            Some(Ok(n)) => n,
            Some(Err(_)) => return writeln!(out, "error: `{spec}`: the instruction number is not a number"),
        };
        for f in functions {
            let len = self.program().functions[f].body.len();
            if instr >= len {
                writeln!(out, "error: {} has instructions 0..{}, not {instr}", self.function_name(f), len - 1)?;
                continue;
            }
            let l = Location { function: f, instr };
            if let Some((k, _)) = self.breaks.iter().find(|(_, b)| *b == l) {
                writeln!(out, "breakpoint {k} is already at {}", self.describe(l))?;
                continue;
            }
            let k = self.next_break;
            self.next_break += 1;
            self.breaks.push((k, l));
            writeln!(out, "breakpoint {k} at {}{}", self.describe(l), self.origin(f))?;
        }
        Ok(())
    }

    fn list_breaks(&self, out: &mut dyn Write) -> std::io::Result<()> {
        if self.breaks.is_empty() {
            return writeln!(out, "no breakpoints");
        }
        for (k, l) in &self.breaks {
            writeln!(out, "breakpoint {k} at {}", self.describe(*l))?;
        }
        Ok(())
    }

    fn delete(&mut self, args: &[&str], out: &mut dyn Write) -> std::io::Result<()> {
        match args {
            [] => {
                let n = self.breaks.len();
                self.breaks.clear();
                writeln!(out, "deleted {n} breakpoint{}", if n == 1 { "" } else { "s" })
            }
            [k] => match k.parse::<usize>().ok().and_then(|k| self.breaks.iter().position(|(j, _)| *j == k)) {
                Some(i) => {
                    let (k, l) = self.breaks.remove(i);
                    writeln!(out, "deleted breakpoint {k} at {}", self.describe(l))
                }
                None => writeln!(out, "error: no breakpoint `{k}`"),
            },
            _ => writeln!(out, "error: `delete` takes at most one breakpoint number"),
        }
    }

    fn backtrace(&self, out: &mut dyn Write) -> std::io::Result<()> {
        let frames = self.stepper.backtrace();
        for (i, l) in frames.iter().enumerate().take(BT_LIMIT) {
            writeln!(out, "#{i} {}{}", self.describe(*l), self.origin(l.function))?;
        }
        if frames.len() > BT_LIMIT {
            writeln!(out, "... {} outer frames not shown", frames.len() - BT_LIMIT)?;
        }
        Ok(())
    }

    fn list(&self, args: &[&str], out: &mut dyn Write) -> std::io::Result<()> {
        let here = self.stepper.location();
        let (f, all) = match args {
            [] => (here.function, false),
            ["all"] => (here.function, true),
            [name] => match self.functions_named(name).first() {
                Some(&f) => (f, true),
                None => return writeln!(out, "error: no function `{name}`"),
            },
            _ => return writeln!(out, "error: `list` takes `all` or one function name"),
        };
        let func = &self.program().functions[f];
        writeln!(out, "FUNC {}{}", func.name, self.origin(f))?;
        let n = func.body.len();
        let (lo, hi) = if all || f != here.function {
            (0, n)
        } else {
            (here.instr.saturating_sub(LIST_BEFORE), (here.instr + LIST_AFTER + 1).min(n))
        };
        if lo > 0 {
            writeln!(out, "   ... {lo} instructions before")?;
        }
        for (i, ins) in func.body.iter().enumerate().take(hi).skip(lo) {
            let l = Location { function: f, instr: i };
            let mark = if l == here && self.ended.is_none() { "=>" } else { "  " };
            let bp = if self.breaks.iter().any(|(_, b)| *b == l) { "*" } else { " " };
            writeln!(out, "{mark}{bp}{i:>5}  {ins}")?;
        }
        if hi < n {
            writeln!(out, "   ... {} instructions after (`list all` shows them)", n - hi)?;
        }
        Ok(())
    }

    /// The stack index (0 = bottom) of the slot at `depth` (0 = top).
    fn index_of(&self, depth: usize) -> Option<usize> {
        let n = self.stepper.stack_len();
        (depth < n).then(|| n - 1 - depth)
    }

    fn show_stack(&mut self, args: &[&str], out: &mut dyn Write) -> std::io::Result<()> {
        let n = self.stepper.stack_len();
        let shown = match args {
            [] => n,
            [k] => match k.parse::<usize>() {
                Ok(k) => k.min(n),
                Err(_) => return writeln!(out, "error: `stack` takes a number of slots"),
            },
            _ => return writeln!(out, "error: `stack` takes at most one number"),
        };
        writeln!(out, "{} (depth 0 is the top):", plural(n, "slot"))?;
        for depth in 0..shown {
            let text = self.slot_text(depth, STACK_LIMIT);
            writeln!(out, "  [{depth}] {text}")?;
        }
        if shown < n {
            writeln!(out, "  ... {} deeper slots", n - shown)?;
        }
        Ok(())
    }

    fn print(&mut self, args: &[&str], out: &mut dyn Write) -> std::io::Result<()> {
        let depth = match args {
            [k] => match k.parse::<usize>() {
                Ok(k) => k,
                Err(_) => return writeln!(out, "error: `print` takes a stack depth (0 = top)"),
            },
            _ => return writeln!(out, "error: `print` takes a stack depth (0 = top)"),
        };
        if self.index_of(depth).is_none() {
            return writeln!(out, "error: the stack has {} slots; there is no depth {depth}", self.stepper.stack_len());
        }
        let text = self.slot_text(depth, PRINT_LIMIT);
        writeln!(out, "[{depth}] {text}")
    }

    /// One slot: its type and size, its first `limit` elements, and for a data vector
    /// that the segment descriptors under it cover, the vector as nested sequences.
    fn slot_text(&mut self, depth: usize, limit: usize) -> String {
        let Some(i) = self.index_of(depth) else { return String::new() };
        let Some(info) = self.stepper.slot_info(i) else { return String::new() };
        let mut s = String::new();
        match &info {
            SlotInfo::Vector(t, len) => {
                let _ = write!(s, "{:<6} length {len}", t.name());
            }
            SlotInfo::Segdes { segments, elements } => {
                let _ = write!(s, "SEGDES {} over {}", plural(*segments, "segment"), plural(*elements, "element"));
            }
            SlotInfo::Pair(..) => {
                let _ = write!(s, "PAIR   {}", pair_text(&info));
                return s;
            }
        }
        let value = match self.stepper.read_slot(i) {
            Ok(v) => v,
            Err(t) => {
                let _ = write!(s, "  (cannot read it: {})", t.kind);
                return s;
            }
        };
        match &value {
            HostValue::Segdes(_) => {
                let _ = write!(s, ": lengths {}", elements(&value, limit));
            }
            _ => {
                let _ = write!(s, ": {}", elements(&value, limit));
                if let Some(nested) = self.nested(i, &value, limit) {
                    let _ = write!(s, "\n        {nested}");
                }
            }
        }
        s
    }

    /// The data vector at stack index `i` grouped by the segment descriptors directly
    /// under it (each covering the previous level exactly), when that shows more than
    /// the flat elements: `as nested: [[1, 2], [3]]` (the grouping ends in one sequence)
    /// or `by segment: [1, 2], [3]`.
    fn nested(&mut self, i: usize, value: &HostValue, limit: usize) -> Option<String> {
        let mut items: Vec<String> = match value {
            HostValue::Int(v) => v.iter().map(|x| x.to_string()).collect(),
            HostValue::Float(v) => v.iter().map(|x| x.to_string()).collect(),
            HostValue::Bool(v) => v.iter().map(|&b| if b { "T".to_string() } else { "F".to_string() }).collect(),
            HostValue::Segdes(_) => return None,
        };
        let mut below = i;
        let mut levels = 0;
        while below > 0 {
            below -= 1;
            let Some(SlotInfo::Segdes { elements, .. }) = self.stepper.slot_info(below) else { break };
            if elements != items.len() {
                break;
            }
            let Ok(HostValue::Segdes(lengths)) = self.stepper.read_slot(below) else { break };
            let mut grouped = Vec::with_capacity(lengths.len());
            let mut at = 0usize;
            for &l in &lengths {
                let l = l.max(0) as usize;
                let end = (at + l).min(items.len());
                grouped.push(format!("[{}]", items[at..end].join(", ")));
                at = end;
            }
            items = grouped;
            levels += 1;
        }
        if levels == 0 || levels == 1 && items.len() == 1 {
            return None;
        }
        let label = if items.len() == 1 { "as nested:" } else { "by segment:" };
        let text = format!("{label} {}", items.join(", "));
        Some(if text.chars().count() > limit * 8 {
            let cut: String = text.chars().take(limit * 8).collect();
            format!("{cut} ...")
        } else {
            text
        })
    }
}

/// `1 segment`, `3 segments`.
fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// `( a b c ... )` with at most `limit` elements.
fn elements(v: &HostValue, limit: usize) -> String {
    fn show<T>(v: &[T], limit: usize, f: impl Fn(&T) -> String) -> String {
        let mut s: Vec<String> = v.iter().take(limit).map(f).collect();
        if v.len() > limit {
            s.push(format!("... ({} more)", v.len() - limit));
        }
        s.join(" ")
    }
    match v {
        HostValue::Int(x) => format!("( {} )", show(x, limit, |e| e.to_string())),
        HostValue::Float(x) => format!("( {} )", show(x, limit, |e| e.to_string())),
        HostValue::Bool(x) => format!("( {} )", show(x, limit, |&e| if e { "T".into() } else { "F".into() })),
        HostValue::Segdes(x) => format!("[ {} ]", show(x, limit, |e| e.to_string())),
    }
}

fn pair_text(info: &SlotInfo) -> String {
    match info {
        SlotInfo::Vector(t, n) => format!("{} length {n}", t.name()),
        SlotInfo::Segdes { segments, elements } => format!("SEGDES {segments}/{elements}"),
        SlotInfo::Pair(a, b) => format!("({}, {})", pair_text(a), pair_text(b)),
    }
}
