//! `nesl repl`: the interactive NESL top level.
//!
//! Each input is read until it holds only complete forms (a form ends with `;` or `$`;
//! an open bracket, `let`, string or comment reads another line) and is then evaluated
//! by the same [`TopLevel`] as `nesl run`, so definitions persist from one input to the
//! next and every form prints what `nesl run` prints for it (`it = value : type`, or an
//! error paragraph after which the session goes on).
//!
//! On top of the top level's own commands (`load`, `describe`, `set print_length`,
//! `set arg_check`, `help`, `exit`), the REPL handles `set backend cpu|cuda|auto;` and
//! `set opt 0|1|2;` by switching the executor that runs compiled code.
//!
//! On a terminal, lines are edited with rustyline and the history is kept in
//! `$NESL_HISTORY` or `~/.nesl_history` (silently not, when that file cannot be read or
//! written); Ctrl-C drops the input being typed and Ctrl-D leaves. Ctrl-C during an
//! evaluation stops it (`interrupted`, and the rest of that input is dropped); the
//! session goes on with everything defined before. When standard input is not a
//! terminal, lines are read plainly and no prompt is printed, so a script can drive the
//! REPL and its output is the transcript alone; the exit status is then 1 when a form
//! failed. Results go to stdout, error paragraphs to stderr.

use crate::RunOpts;
use nesl::{Backend, Config, TopLevel};
use nesl_front::ast::{CommandKind, TopLevel as Form};
use nesl_front::parser::{is_incomplete, parse_items};
use rustyline::error::ReadlineError;
use rustyline::DefaultEditor;
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

/// The name inputs carry in messages; `load` resolves relative paths from the current
/// directory.
const SOURCE_NAME: &str = "<stdin>";
const PROMPT: &str = "<Nesl> ";
const CONTINUATION: &str = "   ... ";

const REPL_HELP: &str = "\
REPL settings:
  set backend cpu|cuda|auto; vector library that runs compiled code
  set opt 0|1|2;      optimisation level (0: VCODE as compiled, 1: inlined, 2: fused)
Input ends with `;` or `$` and may span lines. Ctrl-C drops the current input,
Ctrl-D (or `exit;`) leaves.
";

/// One line of input, or why there is none.
pub(crate) enum Line {
    Text(String),
    /// Ctrl-C.
    Interrupted,
    /// Ctrl-D or the end of the input.
    Eof,
}

/// Where lines come from: rustyline on a terminal, plain reads otherwise.
pub(crate) enum Reader {
    Editor { editor: Box<DefaultEditor>, history: Option<PathBuf> },
    Plain(std::io::StdinLock<'static>),
}

impl Reader {
    /// Rustyline when standard input and output are terminals (with the history kept in
    /// `history`, if given), plain reads otherwise.
    pub(crate) fn new(history: Option<PathBuf>) -> Reader {
        let stdin = std::io::stdin();
        if stdin.is_terminal() && std::io::stdout().is_terminal() {
            let config = rustyline::Config::builder().max_history_size(10_000).ok().map(|b| b.auto_add_history(false).build());
            if let Some(Ok(mut editor)) = config.map(DefaultEditor::with_config) {
                if let Some(path) = &history {
                    let _ = editor.load_history(path);
                }
                return Reader::Editor { editor: Box::new(editor), history };
            }
        }
        Reader::Plain(stdin.lock())
    }

    /// The next line (without its newline); `prompt` is shown on a terminal only.
    pub(crate) fn read(&mut self, prompt: &str) -> std::io::Result<Line> {
        match self {
            Reader::Editor { editor, .. } => match editor.readline(prompt) {
                Ok(s) => Ok(Line::Text(s)),
                Err(ReadlineError::Interrupted) => Ok(Line::Interrupted),
                Err(ReadlineError::Eof) => Ok(Line::Eof),
                Err(ReadlineError::Io(e)) => Err(e),
                Err(e) => Err(std::io::Error::other(e.to_string())),
            },
            Reader::Plain(stdin) => {
                let mut buf = Vec::new();
                if stdin.read_until(b'\n', &mut buf)? == 0 {
                    return Ok(Line::Eof);
                }
                while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                    buf.pop();
                }
                Ok(Line::Text(String::from_utf8_lossy(&buf).into_owned()))
            }
        }
    }

    /// Adds a complete input to the history and appends it to the history file.
    pub(crate) fn remember(&mut self, input: &str) {
        if let Reader::Editor { editor, history } = self {
            let _ = editor.add_history_entry(input);
            if let Some(path) = history {
                let _ = editor.append_history(path);
            }
        }
    }

    /// True when reading from a terminal with line editing.
    pub(crate) fn interactive(&self) -> bool {
        matches!(self, Reader::Editor { .. })
    }
}

/// `$NESL_HISTORY`, else `$HOME/.nesl_history`.
fn history_file() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("NESL_HISTORY").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".nesl_history"))
}

/// The session: the top level and the REPL's own settings.
struct Repl {
    top: TopLevel,
    backend: Backend,
    opt: u8,
    /// Lines read so far: each input is evaluated as if it followed them, so messages
    /// give the line in the whole session.
    lines: usize,
    /// Forms that failed so far (a REPL fed by a pipe exits with status 1 when any did).
    failed: usize,
}

/// How the evaluation of a part of an input ended.
enum Segment {
    Done,
    /// `exit;` ran.
    Exited,
    /// Ctrl-C stopped it.
    Interrupted,
}

/// A REPL-level form found in an input: where it is and what to do.
enum Special {
    Backend(Backend),
    Opt(u8),
    Help,
    Bad(String),
}

impl Repl {
    /// Evaluates one complete input, results on `out` and errors on `err`; returns true
    /// when `exit;` ran.
    fn eval(&mut self, input: &str, out: &mut dyn Write, err: &mut dyn Write) -> std::io::Result<bool> {
        let src = format!("{}{input}", "\n".repeat(self.lines));
        self.lines += input.matches('\n').count();
        // Forms the REPL handles itself split the input into segments that the top level
        // evaluates in order, each with the rest of the text blanked (offsets stay put).
        let mut cuts: Vec<(usize, usize, Special)> = Vec::new();
        for form in parse_items(&src).into_iter().flatten() {
            let Form::Command(cmd) = form else { continue };
            let special = match &cmd.kind {
                CommandKind::Set(name, values) if name.name == "backend" => Some(match values.as_slice() {
                    [v] => match v.to_ascii_lowercase().as_str() {
                        "cpu" => Special::Backend(Backend::Cpu),
                        "cuda" => Special::Backend(Backend::Cuda),
                        "auto" => Special::Backend(Backend::Auto),
                        _ => Special::Bad(format!("`set backend` takes cpu, cuda or auto, not `{v}`")),
                    },
                    _ => Special::Bad("`set backend` takes one of cpu, cuda, auto".into()),
                }),
                CommandKind::Set(name, values) if name.name == "opt" => Some(match values.as_slice() {
                    [v] => match v.parse::<u8>() {
                        Ok(n) if n <= 2 => Special::Opt(n),
                        _ => Special::Bad(format!("`set opt` takes 0, 1 or 2, not `{v}`")),
                    },
                    _ => Special::Bad("`set opt` takes 0, 1 or 2".into()),
                }),
                CommandKind::Help => Some(Special::Help),
                _ => None,
            };
            if let Some(s) = special {
                cuts.push((cmd.span.start as usize, cmd.span.end as usize, s));
            }
        }
        let mut from = 0;
        for (start, end, special) in cuts {
            // `help;` is also the top level's: it runs with the segment before it.
            let upto = if matches!(special, Special::Help) { terminator_after(&src, end) } else { start };
            match self.segment(&src, from, upto, out, err)? {
                Segment::Exited => return Ok(true),
                Segment::Interrupted => return Ok(false),
                Segment::Done => {}
            }
            from = upto.max(end);
            self.special(&src, start, special, out, err)?;
        }
        Ok(matches!(self.segment(&src, from, src.len(), out, err)?, Segment::Exited))
    }

    /// Evaluates the forms of `src[from..to]`.
    fn segment(&mut self, src: &str, from: usize, to: usize, out: &mut dyn Write, err: &mut dyn Write) -> std::io::Result<Segment> {
        if src[from..to].trim().is_empty() {
            return Ok(Segment::Done);
        }
        let text = blank_outside(src, from, to);
        let summary = self.top.eval_source_split(SOURCE_NAME, &text, out, err)?;
        self.failed += summary.failed;
        Ok(if summary.exited {
            Segment::Exited
        } else if summary.interrupted {
            // Ctrl-C stops the whole input; the session goes on with the next one.
            Segment::Interrupted
        } else {
            Segment::Done
        })
    }

    fn special(&mut self, src: &str, at: usize, special: Special, out: &mut dyn Write, err: &mut dyn Write) -> std::io::Result<()> {
        let (backend, opt) = match special {
            Special::Help => {
                out.write_all(REPL_HELP.as_bytes())?;
                return Ok(());
            }
            Special::Bad(msg) => {
                self.failed += 1;
                return error(out, err, src, at, &msg);
            }
            Special::Backend(b) => (b, self.opt),
            Special::Opt(n) => (self.backend, n),
        };
        match Config::new(backend, opt).executor().and_then(|ex| self.top.set_executor(ex)) {
            Ok(()) => {
                self.backend = backend;
                self.opt = opt;
                Ok(())
            }
            Err(msg) => {
                self.failed += 1;
                error(out, err, src, at, &format!("the setting was not changed: {msg}"))
            }
        }
    }
}

/// Prints an error paragraph about the form at byte `at` of `src` on `err` (after
/// flushing `out`).
fn error(out: &mut dyn Write, err: &mut dyn Write, src: &str, at: usize, msg: &str) -> std::io::Result<()> {
    out.flush()?;
    let line = src[..at].matches('\n').count() + 1;
    let col = src[..at].rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    writeln!(err, "error: {SOURCE_NAME}:{line}:{col}: {msg}\n")?;
    err.flush()
}

/// The offset just past the `;` or `$` that ends the command ending at `end`.
fn terminator_after(src: &str, end: usize) -> usize {
    src[end..].find([';', '$']).map_or(src.len(), |k| end + k + 1)
}

/// `src` with every byte outside `from..to` that is not a newline replaced by a space.
fn blank_outside(src: &str, from: usize, to: usize) -> String {
    let blank = |s: &str| s.bytes().map(|b| if b == b'\n' { '\n' } else { ' ' }).collect::<String>();
    format!("{}{}{}", blank(&src[..from]), &src[from..to], blank(&src[to..]))
}

/// Entry point of `nesl repl`.
pub fn main(opts: &RunOpts) -> anyhow::Result<ExitCode> {
    let top = TopLevel::new(Config::new(opts.backend, opts.opt).executor()?).with_renderer(nesl::diagnostics::render);
    let mut repl = Repl { top, backend: opts.backend, opt: opts.opt, lines: 0, failed: 0 };
    let mut reader = Reader::new(history_file());
    super::install_display(opts, super::person_at_terminal(), std::path::Path::new("."))?;
    let stdout = std::io::stdout();
    let mut buffer = String::new();
    if reader.interactive() {
        writeln!(stdout.lock(), "NESL top level. Type `help;` for help; Ctrl-D leaves.")?;
    }
    loop {
        let prompt = if buffer.is_empty() { PROMPT } else { CONTINUATION };
        match reader.read(prompt)? {
            Line::Text(line) => {
                buffer.push_str(&line);
                buffer.push('\n');
                if buffer.trim().is_empty() {
                    repl.lines += 1;
                    buffer.clear();
                    continue;
                }
                if is_incomplete(&buffer) {
                    continue;
                }
            }
            Line::Interrupted => {
                if !buffer.is_empty() {
                    repl.lines += buffer.matches('\n').count();
                    buffer.clear();
                }
                writeln!(stdout.lock(), "(input dropped)")?;
                continue;
            }
            Line::Eof => {
                if buffer.trim().is_empty() {
                    break;
                }
                // An unterminated last input: the top level says what is missing.
            }
        }
        let input = std::mem::take(&mut buffer);
        reader.remember(input.trim_end());
        let mut out = stdout.lock();
        let exited = repl.eval(&input, &mut out, &mut std::io::stderr().lock())?;
        out.flush()?;
        if exited {
            break;
        }
    }
    super::finish_display();
    if reader.interactive() {
        writeln!(stdout.lock())?;
        return Ok(ExitCode::SUCCESS);
    }
    // Fed by a pipe or a file: the status says whether every form went through.
    Ok(if repl.failed > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
