//! The NESL top level: evaluate forms in order, print the transcript.
//!
//! [`TopLevel`] owns the type-checking session and the values of the global variables;
//! for each form of a file it prints what the NESL top level prints (spec section 6.2):
//! `name = fn : type` for a function or datatype, `it = value : type` for an expression,
//! `pattern = value : type` for a binding, an error paragraph (starting with `error` or
//! `RUNTIME ERROR`, ending with a blank line) for a form that fails, after which the
//! evaluation goes on with the next form. A run-time error is rendered like a compile
//! error, at the NESL place where it happened, with the calls that led there.
//!
//! Each expression is compiled by the front end and run by an [`Executor`] (the backend
//! and optimisation level are the caller's choice, [`crate::exec::Config`]). [`output`]
//! tracks the transcript's line state (every result line ends its line, program output
//! starts on a fresh one, every error paragraph starts a line and ends with a blank one)
//! and, with [`TopLevel::eval_source_split`], sends error paragraphs to their own stream.

mod each;
mod liveness;
pub mod output;
#[cfg(test)]
mod tests;

use crate::diagnostics::plain_render;
use crate::exec::{ExecResult, Executor};
use crate::{Backtrace, Error};
use nesl_front::ast::{Command, CommandKind, Expr, Pattern, PatternKind, Span, TopLevel as Form};
use nesl_front::check::{builtin_description, builtin_scheme, format_scheme, format_type, ItemInfo, Session};
use nesl_front::diag::{DiagKind, Diagnostic};
use nesl_front::flatten::{compile_expr, CompileOptions, GlobalValue, Globals};
use nesl_front::parser::parse_items;
use nesl_front::ty::Type;
use nesl_front::value::{format_value_from, slot_count, SlotSource};
use liveness::Liveness;
use output::Transcript;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use vcode::HostValue;

/// Renders diagnostics of one source file as text. Every diagnostic's text must start
/// with the word `error` and end with a blank line. The command line passes
/// [`crate::diagnostics::render`] (with source snippets); [`plain_render`] is the
/// default.
pub type Renderer = fn(file: &str, src: &str, diags: &[Diagnostic]) -> String;

/// The settings the `set` command changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Most elements printed per sequence (`set print_length n;`, default 100);
    /// `None` prints everything.
    pub print_length: Option<usize>,
    /// Compile run-time argument checks (`set arg_check on|off;`, default on).
    pub arg_check: bool,
    /// `set verbose on|off;` (accepted; this top level prints no progress messages).
    pub verbose: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings { print_length: Some(100), arg_check: true, verbose: true }
    }
}

/// How an evaluation went: the number of forms evaluated and of those that failed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EvalSummary {
    /// Forms evaluated (including those of loaded files).
    pub forms: usize,
    /// Forms that printed an error (syntax, type, compile or run-time).
    pub failed: usize,
    /// True when an `exit;` command stopped the evaluation.
    pub exited: bool,
    /// True when an interrupt (Ctrl-C, [`vcode::interrupt::request`]) stopped the
    /// evaluation: the form running then failed and the forms after it were not read.
    pub interrupted: bool,
}

/// Files loaded inside files may nest this deep.
const MAX_LOAD_DEPTH: usize = 16;

/// The NESL top level: the type-checking session, the values of the global variables,
/// the executor that runs compiled code, and the settings.
pub struct TopLevel {
    session: Session,
    globals: Globals,
    executor: Box<dyn Executor>,
    render: Renderer,
    settings: Settings,
    last_loaded: Option<PathBuf>,
    load_depth: usize,
    /// Drop the values of a file's variables after the last form that needs them
    /// ([`TopLevel::dropping_dead_globals`]).
    drop_dead_globals: bool,
}

/// The writer every form prints through.
type Out<'w> = Transcript<&'w mut dyn Write>;

impl TopLevel {
    /// A fresh top level (only the standard library defined) running code with
    /// `executor`.
    pub fn new(executor: Box<dyn Executor>) -> Self {
        let mut top = TopLevel {
            session: Session::new(),
            globals: Globals::default(),
            executor,
            render: plain_render,
            settings: Settings::default(),
            last_loaded: None,
            load_depth: 0,
            drop_dead_globals: false,
        };
        top.define_environment_globals();
        top
    }

    /// The string variables CMU NESL's top level defines from its environment: `display`
    /// (`$DISPLAY`, the graphics library's default display), `user` (`$USER`) and
    /// `nesl_path` (where NESL is installed: `$NESL_PATH` here, with a final `/`; empty
    /// when unset). A program may rebind them.
    fn define_environment_globals(&mut self) {
        let env = |name: &str| std::env::var(name).unwrap_or_default();
        let mut path = env("NESL_PATH");
        if !path.is_empty() && !path.ends_with('/') {
            path.push('/');
        }
        for (name, text) in [("display", env("DISPLAY")), ("user", env("USER")), ("nesl_path", path)] {
            let codes: Vec<i64> = text.bytes().map(i64::from).collect();
            let len = codes.len() as i64;
            let ty = Type::seq(Type::Char);
            let slots = vec![
                vcode::Const::from(HostValue::Segdes(vec![len])),
                vcode::Const::from(HostValue::Int(codes)),
            ];
            self.session.globals.insert(name.to_string(), ty.clone());
            self.globals.insert(name.to_string(), GlobalValue { ty, slots });
        }
    }

    /// Drops the value of each variable a file binds after the last form of the file
    /// that names it (no function of the file may name it), freeing its vectors for
    /// the forms after (see `liveness`). For a whole program run once (`nesl run`, the
    /// regression runner), never for an interactive top level: a variable a file no
    /// longer names is gone afterwards.
    pub fn dropping_dead_globals(mut self) -> Self {
        self.drop_dead_globals = true;
        self
    }

    /// Uses `render` for diagnostics instead of [`plain_render`].
    pub fn with_renderer(mut self, render: Renderer) -> Self {
        self.render = render;
        self
    }

    /// The settings (`print_length`, `arg_check`, ...).
    pub fn settings_mut(&mut self) -> &mut Settings {
        &mut self.settings
    }

    /// The type-checking session (what has been defined so far).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The values of the global variables bound so far (including `it`).
    pub fn globals(&self) -> &Globals {
        &self.globals
    }

    /// The executor (for its statistics).
    pub fn executor(&self) -> &dyn Executor {
        self.executor.as_ref()
    }

    /// Runs the following forms with `executor` (the REPL's `set backend` and `set opt`);
    /// what is defined so far stays: the global values move from the old executor's
    /// vector library into the new one's. When a value cannot move, nothing changes.
    pub fn set_executor(&mut self, mut executor: Box<dyn Executor>) -> crate::Result<()> {
        let mut moved = Vec::with_capacity(self.globals.len());
        for (name, g) in &self.globals {
            let mut slots = Vec::with_capacity(g.slots.len());
            for c in &g.slots {
                slots.push(match c {
                    vcode::Const::Resident(_) => executor.keep(self.executor.fetch(c)?)?,
                    host => host.clone(),
                });
            }
            moved.push((name.clone(), slots));
        }
        for (name, slots) in moved {
            if let Some(g) = self.globals.get_mut(&name) {
                g.slots = slots;
            }
        }
        self.executor = executor;
        Ok(())
    }

    /// Reads and evaluates a file; `file` names it in messages.
    pub fn eval_file(&mut self, path: &Path, out: &mut dyn Write) -> io::Result<EvalSummary> {
        let bytes = std::fs::read(path)?;
        let src = String::from_utf8_lossy(&bytes);
        self.last_loaded = Some(path.to_path_buf());
        self.eval_source(&path.display().to_string(), &src, out)
    }

    /// Evaluates every form of `src` in order, printing the transcript on `out`; the
    /// transcript ends with a newline. `file` names the source in messages and is the
    /// base of relative `load` paths. I/O errors of `out` are returned; every other
    /// failure is printed and counted.
    pub fn eval_source(&mut self, file: &str, src: &str, out: &mut dyn Write) -> io::Result<EvalSummary> {
        self.eval_transcript(file, src, Transcript::new(out))
    }

    /// [`TopLevel::eval_source`] with results and program output on `out`, error
    /// paragraphs (diagnostics, run-time errors) on `err`; each stream is flushed before
    /// the other is written, so that a terminal shows them in order.
    pub fn eval_source_split(&mut self, file: &str, src: &str, out: &mut dyn Write, err: &mut dyn Write) -> io::Result<EvalSummary> {
        self.eval_transcript(file, src, Transcript::split(out, err))
    }

    fn eval_transcript(&mut self, file: &str, src: &str, mut t: Out<'_>) -> io::Result<EvalSummary> {
        let mut summary = EvalSummary::default();
        self.eval_forms(file, src, &mut t, &mut summary)?;
        t.start_line()?;
        t.flush()?;
        Ok(summary)
    }

    fn eval_forms(&mut self, file: &str, src: &str, t: &mut Out<'_>, summary: &mut EvalSummary) -> io::Result<()> {
        let previous = self.session.set_source(file, src);
        let r = self.eval_forms_in(file, src, t, summary);
        self.session.restore_source(previous);
        r
    }

    fn eval_forms_in(&mut self, file: &str, src: &str, t: &mut Out<'_>, summary: &mut EvalSummary) -> io::Result<()> {
        let items = parse_items(src);
        // Values of this file's variables that no later form needs are dropped after
        // each form (`liveness`): only for a whole file run on its own.
        let live = if self.drop_dead_globals && self.load_depth == 0 { Liveness::of(src, &items) } else { None };
        let mut bound: Vec<String> = Vec::new();
        for (i, item) in items.into_iter().enumerate() {
            if live.is_some() {
                match &item {
                    Ok(Form::Binding { pat, .. }) => bound.extend(pattern_names(pat)),
                    Ok(Form::Expr(_)) => bound.push("it".to_string()),
                    _ => {}
                }
            }
            // Each form starts uninterrupted (a Ctrl-C between forms stops the input
            // below instead).
            vcode::interrupt::clear();
            summary.forms += 1;
            let mut ok = match item {
                Err(diags) => self.report(t, file, src, &diags)?,
                Ok(Form::Command(cmd)) => self.command(&cmd, file, src, t, summary)?,
                Ok(form) => self.eval_form(form, file, src, t)?,
            };
            if vcode::interrupt::requested() {
                // Said once: by the run that trapped, by a loaded file, or here (an
                // interrupt while checking, compiling or printing).
                if ok && !summary.interrupted {
                    ok = Self::runtime_error(t, "interrupted")?;
                }
                summary.interrupted = true;
            }
            if !ok {
                summary.failed += 1;
            }
            if let Some(live) = &live {
                let globals = &mut self.globals;
                bound.retain(|name| {
                    let dead = live.dead_after(name, i);
                    if dead {
                        // The executor frees the vectors at its next run.
                        globals.shift_remove(name);
                    }
                    !dead
                });
            }
            // What the form freed goes back to the OS (its allocator kept it mapped while
            // the form ran).
            vcode::memory::release_free_memory();
            t.flush()?;
            if summary.exited || summary.interrupted {
                break;
            }
        }
        Ok(())
    }

    /// Prints rendered diagnostics as an error paragraph; returns `false` (failed).
    fn report(&self, t: &mut Out<'_>, file: &str, src: &str, diags: &[Diagnostic]) -> io::Result<bool> {
        t.begin_error()?;
        let text = (self.render)(file, src, diags);
        if text.trim().is_empty() {
            writeln!(t, "error: {file}: the form was rejected")?;
        } else {
            t.write_all(text.as_bytes())?;
        }
        t.end_error()?;
        Ok(false)
    }

    /// Prints a run-time error paragraph that says where in the NESL source it happened
    /// when `backtrace` knows; returns `false` (failed).
    fn located_runtime_error(&self, t: &mut Out<'_>, message: &str, backtrace: &Backtrace) -> io::Result<bool> {
        match self.render_runtime(message, backtrace) {
            Some(text) => {
                t.begin_error()?;
                t.write_all(text.trim_end().as_bytes())?;
                writeln!(t)?;
                t.end_error()?;
                Ok(false)
            }
            None => Self::runtime_error(t, message),
        }
    }

    /// The source text of `place`: one this session read, or the standard library's.
    /// Several texts may have the same name (the REPL's inputs, each padded with blank
    /// lines so positions stay unique in the session; a file loaded again): the newest
    /// one with text at the place's position, else the newest of that name.
    fn source_of(&self, place: &vcode::Place) -> Option<std::sync::Arc<nesl_front::diag::Source>> {
        let file = place.file.as_deref()?;
        let named = || self.session.sources.iter().rev().filter(|s| &*s.name == file);
        let has_text = |s: &&std::sync::Arc<nesl_front::diag::Source>| {
            let (line, col) = (place.pos.line as usize, place.pos.col as usize);
            let at = s.index.offset(line, col, s.text.len());
            s.index.line_col(at) == (line, col) && s.text[at..].chars().next().is_some_and(|c| !c.is_whitespace())
        };
        let mine = named().find(has_text).or_else(|| named().next());
        let prelude = || nesl_front::flatten::prelude::prelude().ok()?.sources.iter().find(|s| &*s.name == file);
        mine.or_else(prelude).cloned()
    }

    /// A runtime diagnostic rendered at the innermost NESL place of `backtrace`, with the
    /// calls that led there as notes; `None` when no place is in a known NESL source.
    fn render_runtime(&self, message: &str, backtrace: &Backtrace) -> Option<String> {
        let all: Vec<&vcode::Place> = backtrace.places.iter().filter(|p| p.file.is_some() && p.pos.line > 0).collect();
        // Point at the user's code: the innermost place outside the standard library
        // (the library frames above it become a note).
        let k = all.iter().position(|p| p.file.as_deref() != Some(nesl_front::flatten::prelude::PRELUDE_NAME)).unwrap_or(0);
        let nesl = &all[k..];
        let first = nesl.first()?;
        let src = self.source_of(first)?;
        let at = src.index.offset(first.pos.line as usize, first.pos.col as usize, src.text.len());
        let end = src.text[at..].find(|c: char| c.is_whitespace() || c == ';').map_or(src.text.len(), |k| at + k.max(1));
        let mut d = Diagnostic::new(DiagKind::Runtime, Span::new(at, end), message);
        let name = |p: &vcode::Place| match &p.function {
            Some(f) => format!("function `{f}`"),
            None => "the top level".to_string(),
        };
        d = d.with_note(None, format!("in {}{}", name(first), self.each_levels(first)));
        if k > 0 {
            let lib = all[..k].iter().filter_map(|p| p.function.as_deref()).collect::<Vec<_>>();
            d = d.with_note(None, format!("inside the standard library: {}", lib.join(", called from ")));
        }
        // The calls that led here, innermost first; a run of calls from one place (a
        // recursion) is one line.
        let mut i = 1;
        while i < nesl.len() {
            let p = nesl[i];
            let mut n = 1;
            while i + n < nesl.len() && nesl[i + n] == p {
                n += 1;
            }
            let file = p.file.as_deref().unwrap_or("");
            let times = if n > 1 { format!(" ({n} times)") } else { String::new() };
            let each = self.each_levels(p);
            d = d.with_note(None, format!("called from {} at {file}:{}:{}{times}{each}", name(p), p.pos.line, p.pos.col));
            i += n;
        }
        if backtrace.truncated {
            d = d.with_note(None, format!("(only the innermost {} calls are shown)", vcode::trap::MAX_FRAMES));
        }
        Some((self.render)(&src.name, &src.text, &[d]))
    }

    /// The apply-to-each levels that run the expression at `place` once per element, as
    /// a note's tail: `, applied to each element at L:C` (the apply-to-each's `{`, in the
    /// same file) for the innermost, `, inside the apply-to-each at L:C` for each one
    /// around it; empty when the place is not inside one (or its source is unknown).
    fn each_levels(&self, place: &vcode::Place) -> String {
        let Some(src) = self.source_of(place) else { return String::new() };
        let at = src.index.offset(place.pos.line as usize, place.pos.col as usize, src.text.len());
        let mut text = String::new();
        for (i, start) in each::enclosing(&src.text, at).into_iter().enumerate() {
            let (line, col) = src.index.line_col(start);
            let how = if i == 0 { "applied to each element" } else { "inside the apply-to-each" };
            text.push_str(&format!(", {how} at {line}:{col}"));
        }
        text
    }

    /// Prints a run-time error paragraph; returns `false` (failed).
    fn runtime_error(t: &mut Out<'_>, message: &str) -> io::Result<bool> {
        t.begin_error()?;
        writeln!(t, "RUNTIME ERROR: {message}")?;
        t.end_error()?;
        Ok(false)
    }

    /// Prints one result line `lhs = value : type`.
    fn result_line(t: &mut Out<'_>, lhs: &str, value: &str, ty: &str) -> io::Result<bool> {
        t.start_line()?;
        writeln!(t, "{lhs} = {value} : {ty}")?;
        Ok(true)
    }

    fn eval_form(&mut self, mut form: Form, file: &str, src: &str, t: &mut Out<'_>) -> io::Result<bool> {
        // Global types a binding may overwrite, to put back if its evaluation fails.
        let previous: Vec<(String, Option<Type>)> = match &form {
            Form::Binding { pat, .. } => pattern_names(pat)
                .into_iter()
                .map(|n| {
                    let old = self.session.globals.get(&n).cloned();
                    (n, old)
                })
                .collect(),
            Form::Expr(_) => vec![("it".to_string(), self.session.globals.get("it").cloned())],
            _ => Vec::new(),
        };
        let info = match self.session.check_item(&mut form) {
            Ok(info) => info,
            Err(diags) => return self.report(t, file, src, &diags),
        };
        match (info, form) {
            (ItemInfo::Function { name, scheme }, _) | (ItemInfo::Datatype { name, scheme }, _) => {
                for note in std::mem::take(&mut self.session.notes) {
                    t.start_line()?;
                    writeln!(t, "Note: {note}.")?;
                }
                Self::result_line(t, &name, "fn", &format_scheme(&scheme))
            }
            (ItemInfo::Expr { ty }, Form::Expr(expr)) => {
                let Some(slots) = self.run(&expr, &ty, file, src, t)? else {
                    self.restore(previous);
                    return Ok(false);
                };
                let ok = self.print_value(t, "it", &ty, &slots)?;
                if ok {
                    self.globals.insert("it".to_string(), GlobalValue { ty, slots });
                } else {
                    self.restore(previous);
                }
                Ok(ok)
            }
            (ItemInfo::Binding { names }, Form::Binding { pat, expr, .. }) => {
                let ty = match expr.ty.clone().or_else(|| pat.ty.clone()) {
                    Some(ty) => ty,
                    None => {
                        let d = Diagnostic::new(DiagKind::Compile, expr.span, "the binding's type is unknown");
                        return self.report(t, file, src, &[d]);
                    }
                };
                let Some(slots) = self.run(&expr, &ty, file, src, t)? else {
                    self.restore(previous);
                    return Ok(false);
                };
                let mut parts = Vec::new();
                let split = self.split_pattern(&pat, &ty, &slots, &names, &mut 0, &mut parts);
                if let Err(msg) = split {
                    self.restore(previous);
                    return Self::runtime_error(t, &msg);
                }
                let ok = self.print_value(t, &pattern_text(&pat), &ty, &slots)?;
                if ok {
                    for (name, value) in parts {
                        self.globals.insert(name, value);
                    }
                } else {
                    self.restore(previous);
                }
                Ok(ok)
            }
            (ItemInfo::Command, _) => Ok(true),
            (_, form) => {
                let d = Diagnostic::new(
                    DiagKind::Compile,
                    form.span(),
                    "internal error: the type checker described this form as a different kind of form",
                );
                self.report(t, file, src, &[d])
            }
        }
    }

    /// Puts back global types that a failed binding had overwritten.
    fn restore(&mut self, previous: Vec<(String, Option<Type>)>) {
        for (name, old) in previous {
            match old {
                Some(ty) => {
                    self.session.globals.insert(name, ty);
                }
                None => {
                    if !self.globals.contains_key(&name) {
                        self.session.globals.shift_remove(&name);
                    }
                }
            }
        }
    }

    /// Compiles and runs a top-level expression; `None` when an error was printed.
    /// Its value stays where the executor keeps it (see [`Executor::fetch`]).
    fn run(&mut self, expr: &Expr, ty: &Type, file: &str, src: &str, t: &mut Out<'_>) -> io::Result<Option<Vec<vcode::Const>>> {
        let opts = CompileOptions { arg_check: self.settings.arg_check };
        let code = match compile_expr(&self.session, expr, &self.globals, &opts) {
            Ok(code) => code,
            Err(diags) => {
                self.report(t, file, src, &diags)?;
                return Ok(None);
            }
        };
        t.start_line()?;
        let before = t.written();
        let result = self.executor.execute(code, &mut t.program_output());
        t.flush()?;
        if t.in_error() && !matches!(result, Ok(ExecResult::Exited(_))) {
            // A program that printed `RUNTIME ERROR` and went on: its paragraph ends here.
            t.end_error()?;
        }
        match result {
            Ok(ExecResult::Finished(slots)) => {
                let data = |name: &str, args: &[Type]| self.datatype_fields(name, args);
                match slot_count(ty, &data) {
                    Some(n) if n == slots.len() => Ok(Some(slots)),
                    _ => {
                        let msg = format!(
                            "the program left {} values on the stack, which do not hold a value of type {}",
                            slots.len(),
                            format_type(ty)
                        );
                        Self::runtime_error(t, &msg)?;
                        Ok(None)
                    }
                }
            }
            Ok(ExecResult::Exited(backtrace)) => {
                if t.written() == before {
                    self.located_runtime_error(t, "the evaluation was aborted", &backtrace)?;
                } else {
                    // The program printed its message (`RUNTIME ERROR: ...`): say where.
                    t.begin_error()?;
                    if let Some(text) = self.render_runtime("", &backtrace) {
                        let place = text.split_once('\n').map_or("", |(_, rest)| rest);
                        t.write_all(place.trim_end().as_bytes())?;
                        writeln!(t)?;
                    }
                    t.end_error()?;
                }
                Ok(None)
            }
            Err(Error::Runtime(e)) => {
                self.located_runtime_error(t, &e.to_string(), &e.backtrace)?;
                Ok(None)
            }
            Err(e) => {
                Self::runtime_error(t, &e.to_string())?;
                Ok(None)
            }
        }
    }

    /// Prints `lhs = value : type` (copying the value out of the executor for that), or
    /// a run-time error when the value cannot be printed (NaN or infinity, inconsistent
    /// slots).
    fn print_value(&mut self, t: &mut Out<'_>, lhs: &str, ty: &Type, slots: &[vcode::Const]) -> io::Result<bool> {
        let session = &self.session;
        let fields = |name: &str, args: &[Type]| datatype_fields(session, name, args);
        let mut src = ExecutorSlots { executor: &mut *self.executor, slots };
        match format_value_from(ty, &mut src, &fields, self.settings.print_length) {
            Ok(text) => Self::result_line(t, lhs, &text, &format_type(ty)),
            Err(msg) => Self::runtime_error(t, &msg),
        }
    }

    /// The field tuple of datatype `name` with its parameters replaced by `args`.
    fn datatype_fields(&self, name: &str, args: &[Type]) -> Option<Type> {
        datatype_fields(&self.session, name, args)
    }

    /// Splits the slots of a binding's value along its pattern into one global value per
    /// bound name.
    fn split_pattern(
        &self,
        pat: &Pattern,
        ty: &Type,
        slots: &[vcode::Const],
        names: &[(String, Type)],
        pos: &mut usize,
        out: &mut Vec<(String, GlobalValue)>,
    ) -> Result<(), String> {
        let data = |name: &str, args: &[Type]| self.datatype_fields(name, args);
        match (&pat.kind, ty) {
            (PatternKind::Var(id), _) => {
                let ty = names.iter().find(|(n, _)| *n == id.name).map(|(_, t)| t.clone()).unwrap_or_else(|| ty.clone());
                let n = slot_count(&ty, &data).ok_or_else(|| format!("cannot lay out a value of type {}", format_type(&ty)))?;
                let end = *pos + n;
                let part = slots.get(*pos..end).ok_or("the value has fewer stack slots than its pattern needs")?;
                *pos = end;
                out.push((id.name.clone(), GlobalValue { ty, slots: part.to_vec() }));
                Ok(())
            }
            (PatternKind::Pair(a, b), Type::Pair(ta, tb)) => {
                self.split_pattern(a, ta, slots, names, pos, out)?;
                self.split_pattern(b, tb, slots, names, pos, out)
            }
            (PatternKind::Con(_, inner), Type::Data(name, args)) => {
                let fields = self.datatype_fields(name, args).ok_or_else(|| format!("unknown datatype `{name}`"))?;
                self.split_pattern(inner, &fields, slots, names, pos, out)
            }
            _ => Err(format!("the pattern `{}` does not fit the type {}", pattern_text(pat), format_type(ty))),
        }
    }

    /// Evaluates the file-name expression of `load exp;`: a `[char]`, as text; `None`
    /// when an error was printed. The expression does not become `it`.
    fn file_name_value(&mut self, expr: &Expr, file: &str, src: &str, t: &mut Out<'_>) -> io::Result<Option<String>> {
        let previous = vec![("it".to_string(), self.session.globals.get("it").cloned())];
        let mut form = Form::Expr(expr.clone());
        let checked = self.session.check_item(&mut form);
        self.restore(previous);
        let ty = match checked {
            Ok(ItemInfo::Expr { ty }) => ty,
            Ok(_) => {
                let d = Diagnostic::new(DiagKind::Compile, expr.span, "the argument of `load` must be an expression");
                self.report(t, file, src, &[d])?;
                return Ok(None);
            }
            Err(diags) => {
                self.report(t, file, src, &diags)?;
                return Ok(None);
            }
        };
        if ty != Type::seq(Type::Char) {
            let msg = format!("the file name of `load` must be a string ([char]), not {}", format_type(&ty));
            self.report(t, file, src, &[Diagnostic::new(DiagKind::Type, expr.span, msg)])?;
            return Ok(None);
        }
        let Form::Expr(expr) = form else { return Ok(None) };
        let Some(slots) = self.run(&expr, &ty, file, src, t)? else { return Ok(None) };
        let mut name = String::new();
        for c in &slots {
            match self.executor.fetch(c) {
                Ok(HostValue::Int(codes)) => name.extend(codes.iter().map(|&c| char::from(c.clamp(0, 255) as u8))),
                Ok(_) => {}
                Err(e) => {
                    Self::runtime_error(t, &e.to_string())?;
                    return Ok(None);
                }
            }
        }
        Ok(Some(name))
    }

    /// Evaluates the forms of the file `path` (a `load` command).
    fn load_path(&mut self, path: PathBuf, cmd: &Command, file: &str, src: &str, t: &mut Out<'_>, summary: &mut EvalSummary) -> io::Result<bool> {
        let fail = |this: &Self, t: &mut Out<'_>, span: Span, msg: String| {
            this.report(t, file, src, &[Diagnostic::new(DiagKind::Compile, span, msg)])
        };
        if self.load_depth >= MAX_LOAD_DEPTH {
            return fail(self, t, cmd.span, format!("files load each other more than {MAX_LOAD_DEPTH} levels deep"));
        }
        let text = match std::fs::read(&path) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => return fail(self, t, cmd.span, format!("cannot load {}: {e}", path.display())),
        };
        self.last_loaded = Some(path.clone());
        self.load_depth += 1;
        let mut inner = EvalSummary::default();
        let result = self.eval_forms(&path.display().to_string(), &text, t, &mut inner);
        self.load_depth -= 1;
        result?;
        summary.forms += inner.forms;
        summary.failed += inner.failed;
        summary.exited |= inner.exited;
        summary.interrupted |= inner.interrupted;
        Ok(true)
    }

    /// Runs a top-level command; returns `false` when it failed (after printing why).
    fn command(&mut self, cmd: &Command, file: &str, src: &str, t: &mut Out<'_>, summary: &mut EvalSummary) -> io::Result<bool> {
        let fail = |this: &Self, t: &mut Out<'_>, span: Span, msg: String| {
            this.report(t, file, src, &[Diagnostic::new(DiagKind::Compile, span, msg)])
        };
        match &cmd.kind {
            CommandKind::LoadExpr(expr) => {
                let Some(name) = self.file_name_value(expr, file, src, t)? else { return Ok(false) };
                if name.is_empty() {
                    return fail(self, t, cmd.span, "the file name of `load` is an empty string".into());
                }
                let path = resolve_load(file, &name);
                self.load_path(path, cmd, file, src, t, summary)
            }
            CommandKind::Load(name) => {
                let path = match name {
                    Some(name) => resolve_load(file, name),
                    None => match &self.last_loaded {
                        Some(p) => p.clone(),
                        None => return fail(self, t, cmd.span, "`load;` with no file: nothing was loaded before".into()),
                    },
                };
                self.load_path(path, cmd, file, src, t, summary)
            }
            CommandKind::Describe(id) => {
                let name = id.name.as_str();
                t.start_line()?;
                if let Some(f) = self.session.functions.get(name) {
                    write!(t, "{name} = fn : {}", format_scheme(&f.scheme))?;
                    if let Some(doc) = &f.def.doc {
                        write!(t, "\n{doc}")?;
                    }
                } else if let Some(d) = self.session.datatypes.get(name) {
                    write!(t, "{name} = fn : {}", format_scheme(&d.scheme))?;
                } else if let Some(ty) = self.session.globals.get(name) {
                    write!(t, "{name} : {}", format_type(ty))?;
                } else if let Some(s) = builtin_scheme(name) {
                    write!(t, "{name} = fn : {}", format_scheme(&s))?;
                    if let Some(doc) = builtin_description(name) {
                        write!(t, "\n{doc}")?;
                    }
                } else {
                    return fail(self, t, id.span, format!("`{name}` is undefined"));
                }
                t.start_line()?;
                Ok(true)
            }
            CommandKind::Set(name, values) => self.set(name.name.as_str(), values, name.span, file, src, t),
            CommandKind::Help => {
                t.start_line()?;
                t.write_all(HELP.trim_end().as_bytes())?;
                t.start_line()?;
                Ok(true)
            }
            CommandKind::Exit => {
                summary.exited = true;
                Ok(true)
            }
        }
    }

    fn set(&mut self, name: &str, values: &[String], span: Span, file: &str, src: &str, t: &mut Out<'_>) -> io::Result<bool> {
        let value = values.first().map(|v| v.to_ascii_lowercase());
        let on_off = |v: &Option<String>| match v.as_deref() {
            Some("on") | Some("t") | Some("true") => Some(true),
            Some("off") | Some("f") | Some("false") => Some(false),
            _ => None,
        };
        let problem = match name {
            "print_length" => match value.as_deref().map(str::parse::<i64>) {
                Some(Ok(n)) if n >= 0 => {
                    self.settings.print_length = Some(n as usize);
                    None
                }
                _ => Some("`set print_length` takes a number >= 0".to_string()),
            },
            "arg_check" => match on_off(&value) {
                Some(b) => {
                    self.settings.arg_check = b;
                    None
                }
                None => Some("`set arg_check` takes `on` or `off`".to_string()),
            },
            "verbose" => match on_off(&value) {
                Some(b) => {
                    self.settings.verbose = b;
                    None
                }
                None => Some("`set verbose` takes `on` or `off`".to_string()),
            },
            other => Some(format!("unknown setting `{other}` (known: print_length, arg_check, verbose)")),
        };
        match problem {
            None => Ok(true),
            Some(msg) => self.report(t, file, src, &[Diagnostic::new(DiagKind::Compile, span, msg)]),
        }
    }
}

const HELP: &str = "\
Top-level forms:
  function name(args) [: type] = exp;   define a function
  datatype name(t1, ..., tn);           define a record type and its constructor
  pattern = exp;                        bind global variables
  exp;                                  evaluate (the value is bound to `it`)
Commands:
  load \"file\";        evaluate the forms of a file (`load;` reloads the last one)
  describe name;      the type of a function, datatype, variable or built-in
  set print_length n; most sequence elements printed (default 100)
  set arg_check on|off; run-time argument checks (default on)
  set verbose on|off; accepted; no progress messages are printed
  help;               this text
  exit;               stop evaluating
";

/// The file a `load "name";` in `file` refers to: relative names are relative to the
/// directory of `file`. As CMU NESL does, `name.nesl` is preferred to `name` when the
/// name does not already end in `.nesl` and that file exists.
fn resolve_load(file: &str, name: &str) -> PathBuf {
    let mut path = PathBuf::from(name);
    if path.is_relative() {
        if let Some(dir) = Path::new(file).parent() {
            path = dir.join(path);
        }
    }
    if !name.ends_with(".nesl") {
        let mut with_ext = path.clone().into_os_string();
        with_ext.push(".nesl");
        let with_ext = PathBuf::from(with_ext);
        if with_ext.is_file() || (!path.exists() && path.extension().is_none()) {
            return with_ext;
        }
    }
    path
}

/// The names a pattern binds, in order.
fn pattern_names(p: &Pattern) -> Vec<String> {
    fn go(p: &Pattern, out: &mut Vec<String>) {
        match &p.kind {
            PatternKind::Var(id) => out.push(id.name.clone()),
            PatternKind::Pair(a, b) => {
                go(a, out);
                go(b, out);
            }
            PatternKind::Con(_, inner) => go(inner, out),
        }
    }
    let mut out = Vec::new();
    go(p, &mut out);
    out
}

/// A pattern as the top level prints it before ` = value`: `x`, `(r, tm)`, `point(x, y)`.
pub fn pattern_text(p: &Pattern) -> String {
    fn spine(p: &Pattern, out: &mut String) {
        match &p.kind {
            PatternKind::Pair(a, b) => {
                out.push_str(&pattern_text(a));
                out.push_str(", ");
                spine(b, out);
            }
            _ => out.push_str(&pattern_text(p)),
        }
    }
    match &p.kind {
        PatternKind::Var(id) => id.name.clone(),
        PatternKind::Pair(..) => {
            let mut s = String::from("(");
            spine(p, &mut s);
            s.push(')');
            s
        }
        PatternKind::Con(name, inner) => {
            let mut s = format!("{}(", name.name);
            spine(inner, &mut s);
            s.push(')');
            s
        }
    }
}

/// `ty` with each type variable whose id is listed replaced by its type.
fn substitute(ty: &Type, subst: &[(u32, &Type)]) -> Type {
    match ty {
        Type::Var(v) => subst.iter().find(|(id, _)| *id == v.id).map(|(_, t)| (*t).clone()).unwrap_or_else(|| ty.clone()),
        Type::Seq(e) => Type::seq(substitute(e, subst)),
        Type::Pair(a, b) => Type::pair(substitute(a, subst), substitute(b, subst)),
        Type::Fun(a, b) => Type::fun(substitute(a, subst), substitute(b, subst)),
        Type::Data(n, args) => Type::Data(n.clone(), args.iter().map(|a| substitute(a, subst)).collect()),
        Type::Int | Type::Bool | Type::Float | Type::Char => ty.clone(),
    }
}

/// The field tuple of datatype `name` with its parameters replaced by `args`.
fn datatype_fields(session: &Session, name: &str, args: &[Type]) -> Option<Type> {
    let info = session.datatypes.get(name)?;
    let subst: Vec<(u32, &Type)> = info.params.iter().map(|v| v.id).zip(args.iter()).collect();
    Some(substitute(&info.fields, &subst))
}

/// The slots of a result as the executor keeps them, read for printing: only the elements
/// printed are copied out of the vector library.
struct ExecutorSlots<'a> {
    executor: &'a mut dyn Executor,
    slots: &'a [vcode::Const],
}

impl SlotSource for ExecutorSlots<'_> {
    fn slots(&self) -> usize {
        self.slots.len()
    }
    fn shape(&mut self, i: usize) -> Result<(usize, Option<usize>), String> {
        self.executor.shape(&self.slots[i]).map_err(|e| e.to_string())
    }
    fn prefix(&mut self, i: usize, n: usize) -> Result<HostValue, String> {
        self.executor.fetch_prefix(&self.slots[i], n).map_err(|e| e.to_string())
    }
    fn non_finite(&mut self, i: usize) -> Result<bool, String> {
        self.executor.any_non_finite(&self.slots[i]).map_err(|e| e.to_string())
    }
}
