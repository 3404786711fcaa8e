//! VCODE I/O: the open-file table and the text formats of `READ`/`WRITE`
//! (spec/vcode.md section 7.9).
//!
//! File descriptors 0, 1 and 2 are standard input, output and error; what a program
//! writes to 1 or 2 goes to the interpreter's output sink (the caller's `out`). Failures
//! are values (an error message and a false flag), never traps.
//!
//! Processes: `SPAWN` starts a child whose standard streams are pipes (entries of the
//! table) or streams of the table; `SHELL` (an extension) runs a command to completion
//! with a given input and collects its output; `GETENV` (an extension) reads an
//! environment variable. All three count as file access: a run without it refuses them.

use crate::op::Ty;
use crate::print::format_value;
use crate::HostValue;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};

enum Entry {
    Stdin,
    Std,
    Reader(BufReader<File>),
    Writer(BufWriter<File>),
    /// The read end of a pipe from a child's standard output or error.
    PipeReader(BufReader<Box<dyn Read + Send>>),
    /// The write end of a pipe to a child's standard input.
    PipeWriter(ChildStdin),
}

/// The open-file table of one run.
pub(crate) struct Files {
    entries: Vec<Option<Entry>>,
    /// What standard input reads, when not the process's own.
    input: Option<io::Cursor<Vec<u8>>>,
    /// Whether `FOPEN` may open files (and `SPAWN`, `SHELL`, `GETENV` run).
    file_access: bool,
    /// The children started by `SPAWN`, reaped when they have ended.
    children: Vec<Child>,
}

/// Where an I/O instruction failed: the message it reports on the stack.
pub(crate) type IoResult<T> = Result<T, String>;

impl Files {
    pub fn new() -> Self {
        Files {
            entries: vec![Some(Entry::Stdin), Some(Entry::Std), Some(Entry::Std)],
            input: None,
            file_access: true,
            children: Vec::new(),
        }
    }

    /// Takes standard input from `input` (`None`: the process's own) and allows or
    /// refuses `FOPEN`.
    pub fn configure(&mut self, input: Option<Vec<u8>>, file_access: bool) {
        self.input = input.map(io::Cursor::new);
        self.file_access = file_access;
    }

    /// `FOPEN`: mode 1 read, 2 write (create, truncate), 3 append.
    pub fn open(&mut self, name: &str, mode: i64) -> IoResult<i64> {
        if !self.file_access {
            return Err(format!("FOPEN: file access is disabled (cannot open {name})"));
        }
        let entry = match mode {
            1 => File::open(name).map(|f| Entry::Reader(BufReader::new(f))),
            2 => File::create(name).map(|f| Entry::Writer(BufWriter::new(f))),
            3 => OpenOptions::new()
                .append(true)
                .create(true)
                .open(name)
                .map(|f| Entry::Writer(BufWriter::new(f))),
            m => return Err(format!("FOPEN: illegal mode {m} (1 read, 2 write, 3 append)")),
        }
        .map_err(|e| format!("FOPEN: cannot open {name}: {e}"))?;
        self.entries.push(Some(entry));
        Ok(self.entries.len() as i64 - 1)
    }

    /// `FCLOSE`.
    pub fn close(&mut self, fd: i64) -> IoResult<()> {
        match usize::try_from(fd).ok().and_then(|i| self.entries.get_mut(i)) {
            Some(slot @ Some(_)) => {
                if let Some(Entry::Writer(w)) = slot {
                    w.flush().map_err(|e| format!("FCLOSE: {e}"))?;
                }
                if fd > 2 {
                    *slot = None;
                }
                Ok(())
            }
            _ => Err(format!("FCLOSE: {fd} is not an open file")),
        }
    }

    /// Writes `text` to `fd` (1 and 2 go to `out`).
    pub fn write(&mut self, fd: i64, text: &str, out: &mut dyn Write) -> IoResult<()> {
        let r = match usize::try_from(fd).ok().and_then(|i| self.entries.get_mut(i)) {
            Some(Some(Entry::Std)) => out.write_all(text.as_bytes()),
            Some(Some(Entry::Writer(w))) => w.write_all(text.as_bytes()),
            Some(Some(Entry::PipeWriter(w))) => w.write_all(text.as_bytes()),
            Some(Some(_)) => return Err(format!("file {fd} is not open for writing")),
            _ => return Err(format!("{fd} is not an open file")),
        };
        r.map_err(|e| format!("write error: {e}"))
    }

    fn with_reader<T>(&mut self, fd: i64, f: impl FnOnce(&mut dyn BufRead) -> IoResult<T>) -> IoResult<T> {
        match usize::try_from(fd).ok().and_then(|i| self.entries.get_mut(i)) {
            Some(Some(Entry::Stdin)) => match &mut self.input {
                Some(input) => f(input),
                None => f(&mut io::stdin().lock()),
            },
            Some(Some(Entry::Reader(r))) => f(r),
            Some(Some(Entry::PipeReader(r))) => f(r),
            Some(Some(_)) => Err(format!("file {fd} is not open for reading")),
            _ => Err(format!("{fd} is not an open file")),
        }
    }

    /// `READ T` / `FREAD T`: one value in the stack-dump format.
    pub fn read_value(&mut self, fd: i64, ty: Ty) -> IoResult<HostValue> {
        self.with_reader(fd, |r| read_value(r, ty))
    }

    /// `FREAD_CHAR`: characters up to a delimiter, `max` characters (negative: no limit)
    /// or the end of the file. Returns the codes and the status (-1 end of file, -2
    /// limit reached, otherwise the delimiter).
    pub fn read_chars(&mut self, fd: i64, delims: &[i64], max: i64) -> IoResult<(Vec<i64>, i64)> {
        self.with_reader(fd, |r| {
            let mut s = Vec::new();
            loop {
                if max >= 0 && s.len() as i64 >= max {
                    return Ok((s, -2));
                }
                match next_byte(r)? {
                    None => return Ok((s, -1)),
                    Some(b) if delims.contains(&(b as i64)) => return Ok((s, b as i64)),
                    Some(b) => s.push(b as i64),
                }
            }
        })
    }

    /// Flushes every file opened for writing.
    pub fn flush(&mut self) {
        for e in self.entries.iter_mut().flatten() {
            match e {
                Entry::Writer(w) => {
                    let _ = w.flush();
                }
                Entry::PipeWriter(w) => {
                    let _ = w.flush();
                }
                _ => {}
            }
        }
    }

    /// `GETENV`: the value of environment variable `name`, empty when it is unset.
    pub fn getenv(&self, name: &str) -> IoResult<Vec<u8>> {
        if !self.file_access {
            return Err(format!("GETENV: access to the environment is disabled (cannot read {name})"));
        }
        if name.is_empty() || name.contains(['=', '\0']) {
            return Ok(Vec::new());
        }
        Ok(std::env::var_os(name).map(|v| v.to_string_lossy().into_owned().into_bytes()).unwrap_or_default())
    }

    /// `SHELL`: runs `cmd` with `input` on its standard input until it ends; what it
    /// wrote to its standard output. Its standard error is the interpreter's own. A
    /// command that runs but fails still gives its output; one that cannot start is
    /// an error.
    pub fn shell(&mut self, cmd: &str, input: Vec<u8>) -> IoResult<Vec<u8>> {
        if !self.file_access {
            return Err(format!("SHELL: running commands is disabled (cannot run {cmd})"));
        }
        let mut child = command(cmd, "SHELL")?
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("SHELL: cannot run {cmd}: {e}"))?;
        // The input goes in on a thread of its own, so that a child which writes
        // before it has read everything cannot block on a full pipe.
        let mut stdin = child.stdin.take();
        let feeder = std::thread::spawn(move || {
            if let Some(w) = stdin.as_mut() {
                // A child that exits without reading its input is not an error.
                let _ = w.write_all(&input);
            }
        });
        let mut output = Vec::new();
        let read = match child.stdout.take() {
            Some(mut r) => r.read_to_end(&mut output).map(|_| ()),
            None => Ok(()),
        };
        let _ = feeder.join();
        let waited = child.wait();
        read.map_err(|e| format!("SHELL: reading the output of {cmd}: {e}"))?;
        waited.map_err(|e| format!("SHELL: waiting for {cmd}: {e}"))?;
        Ok(output)
    }

    /// `SPAWN`: starts `cmd` as a child process. Each of `fds` (its standard input,
    /// output and error) is a stream of the table that the child gets, or -1 (the null
    /// stream) for a fresh pipe whose other end becomes a new stream. Standard streams
    /// 0, 1 and 2 are the interpreter process's own (standard input becomes the empty
    /// input when the run reads a given text instead). Returns the child's streams in
    /// stack order: error, output, input.
    pub fn spawn(&mut self, cmd: &str, fds: [i64; 3]) -> IoResult<[i64; 3]> {
        if !self.file_access {
            return Err(format!("SPAWN: running commands is disabled (cannot run {cmd})"));
        }
        self.reap();
        let mut c = command(cmd, "SPAWN")?;
        let [fin, fout, ferr] = fds;
        c.stdin(self.child_stdio(fin, true)?);
        c.stdout(self.child_stdio(fout, false)?);
        c.stderr(self.child_stdio(ferr, false)?);
        let mut child = c.spawn().map_err(|e| format!("SPAWN: cannot run {cmd}: {e}"))?;
        let mut new_in = fin;
        if let Some(w) = child.stdin.take() {
            self.entries.push(Some(Entry::PipeWriter(w)));
            new_in = self.entries.len() as i64 - 1;
        }
        let mut new_out = fout;
        if let Some(r) = child.stdout.take() {
            self.entries.push(Some(Entry::PipeReader(BufReader::new(Box::new(r)))));
            new_out = self.entries.len() as i64 - 1;
        }
        let mut new_err = ferr;
        if let Some(r) = child.stderr.take() {
            self.entries.push(Some(Entry::PipeReader(BufReader::new(Box::new(r)))));
            new_err = self.entries.len() as i64 - 1;
        }
        self.children.push(child);
        Ok([new_err, new_out, new_in])
    }

    /// What a child gets for stream `fd` as its input (`input`) or an output.
    fn child_stdio(&mut self, fd: i64, input: bool) -> IoResult<Stdio> {
        if fd == -1 {
            return Ok(Stdio::piped());
        }
        let has_input = self.input.is_some();
        let dir = if input { "reading" } else { "writing" };
        let not_for = || format!("SPAWN: stream {fd} is not open for {dir}");
        match usize::try_from(fd).ok().and_then(|i| self.entries.get_mut(i)) {
            Some(Some(Entry::Stdin)) if input => Ok(if has_input { Stdio::null() } else { Stdio::inherit() }),
            Some(Some(Entry::Std)) if !input => {
                Ok(if fd == 1 { Stdio::from(io::stdout()) } else { Stdio::from(io::stderr()) })
            }
            Some(Some(Entry::Reader(r))) if input => {
                r.get_ref().try_clone().map(Stdio::from).map_err(|e| format!("SPAWN: stream {fd}: {e}"))
            }
            Some(Some(Entry::Writer(w))) if !input => {
                w.flush().map_err(|e| format!("SPAWN: stream {fd}: {e}"))?;
                w.get_ref().try_clone().map(Stdio::from).map_err(|e| format!("SPAWN: stream {fd}: {e}"))
            }
            Some(Some(Entry::PipeReader(_) | Entry::PipeWriter(_))) => {
                Err(format!("SPAWN: stream {fd} is a pipe of another process and cannot be given to a child"))
            }
            Some(Some(_)) => Err(not_for()),
            _ => Err(format!("SPAWN: {fd} is not an open file")),
        }
    }

    /// Forgets the children that have ended.
    fn reap(&mut self) {
        self.children.retain_mut(|c| !matches!(c.try_wait(), Ok(Some(_))));
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        // Closing the pipes first lets children that wait for their input end.
        self.flush();
        self.entries.clear();
        self.reap();
    }
}

/// The command `cmd` split on blanks: the program (searched in PATH) and its
/// arguments.
fn command(cmd: &str, instr: &str) -> IoResult<Command> {
    let mut words = cmd.split_ascii_whitespace();
    let prog = words.next().ok_or_else(|| format!("{instr}: empty command"))?;
    let mut c = Command::new(prog);
    c.args(words);
    Ok(c)
}

/// The text `WRITE T` / `FWRITE T` produce for a value.
pub(crate) fn write_text(v: &HostValue, ty: Ty) -> String {
    match (ty, v) {
        (Ty::Char, HostValue::Int(codes)) => codes
            .iter()
            .map(|&c| u32::try_from(c).ok().and_then(char::from_u32).unwrap_or('\u{fffd}'))
            .collect(),
        _ => {
            let mut s = format_value(v);
            s.push('\n');
            s
        }
    }
}

fn peek_byte(r: &mut dyn BufRead) -> IoResult<Option<u8>> {
    let buf = r.fill_buf().map_err(|e| format!("read error: {e}"))?;
    Ok(buf.first().copied())
}

fn next_byte(r: &mut dyn BufRead) -> IoResult<Option<u8>> {
    let b = peek_byte(r)?;
    if b.is_some() {
        r.consume(1);
    }
    Ok(b)
}

/// Next token: a bracket, a double-quoted string, or a run of other non-blank bytes.
fn token(r: &mut dyn BufRead) -> IoResult<Option<String>> {
    while let Some(b) = peek_byte(r)? {
        if b.is_ascii_whitespace() {
            r.consume(1);
        } else {
            break;
        }
    }
    let Some(b) = next_byte(r)? else { return Ok(None) };
    if b"()[]".contains(&b) {
        return Ok(Some((b as char).to_string()));
    }
    let mut s = vec![b];
    if b == b'"' {
        loop {
            match next_byte(r)? {
                None => return Err("READ: unterminated string".into()),
                Some(b'"') => break,
                Some(c) => s.push(c),
            }
        }
        s.push(b'"');
        return Ok(Some(String::from_utf8_lossy(&s).into_owned()));
    }
    while let Some(c) = peek_byte(r)? {
        if c.is_ascii_whitespace() || b"()[]".contains(&c) {
            break;
        }
        s.push(c);
        r.consume(1);
    }
    Ok(Some(String::from_utf8_lossy(&s).into_owned()))
}

fn read_value(r: &mut dyn BufRead, ty: Ty) -> IoResult<HostValue> {
    let first = token(r)?.ok_or("READ: end of file")?;
    if ty == Ty::Char {
        let body = first
            .strip_prefix('"')
            .and_then(|s| s.strip_suffix('"'))
            .ok_or_else(|| format!("READ CHAR: expected a double-quoted string, found `{first}`"))?;
        return Ok(HostValue::Int(body.chars().map(|c| c as i64).collect()));
    }
    let (open, close) = if ty == Ty::Segdes { ("[", "]") } else { ("(", ")") };
    if first != open {
        return Err(format!("READ {}: expected `{open}`, found `{first}`", ty.name()));
    }
    let mut items = Vec::new();
    loop {
        let t = token(r)?.ok_or_else(|| format!("READ {}: missing `{close}`", ty.name()))?;
        if t == close {
            break;
        }
        items.push(t);
    }
    let bad = |t: &String| format!("READ {}: bad element `{t}`", ty.name());
    Ok(match ty {
        Ty::Float => HostValue::Float(
            items.iter().map(|t| t.parse::<f64>().map_err(|_| bad(t))).collect::<Result<_, _>>()?,
        ),
        Ty::Bool => HostValue::Bool(
            items
                .iter()
                .map(|t| match t.as_str() {
                    "T" => Ok(true),
                    "F" => Ok(false),
                    _ => Err(bad(t)),
                })
                .collect::<Result<_, _>>()?,
        ),
        _ => {
            let v = items.iter().map(|t| t.parse::<i64>().map_err(|_| bad(t))).collect::<Result<Vec<_>, _>>()?;
            if ty == Ty::Segdes {
                if let Some(n) = v.iter().find(|&&n| n < 0) {
                    return Err(format!("READ SEGDES: negative segment length {n}"));
                }
                HostValue::Segdes(v)
            } else {
                HostValue::Int(v)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_values() {
        let mut r: &[u8] = b"  ( 1 -2 3)[2 0] (T F) (1.5 2.0) \"hi\" (1 x)";
        assert_eq!(read_value(&mut r, Ty::Int), Ok(HostValue::Int(vec![1, -2, 3])));
        assert_eq!(read_value(&mut r, Ty::Segdes), Ok(HostValue::Segdes(vec![2, 0])));
        assert_eq!(read_value(&mut r, Ty::Bool), Ok(HostValue::Bool(vec![true, false])));
        assert_eq!(read_value(&mut r, Ty::Float), Ok(HostValue::Float(vec![1.5, 2.0])));
        assert_eq!(read_value(&mut r, Ty::Char), Ok(HostValue::Int(vec![104, 105])));
        assert!(read_value(&mut r, Ty::Int).is_err());
    }

    #[test]
    fn negative_segment_lengths_are_read_errors() {
        let mut r: &[u8] = b"[1 -3]";
        assert_eq!(read_value(&mut r, Ty::Segdes), Err("READ SEGDES: negative segment length -3".to_string()));
    }

    #[test]
    fn processes_and_environment_need_file_access() {
        let mut f = Files::new();
        f.configure(None, false);
        assert!(f.getenv("PATH").unwrap_err().contains("disabled"));
        assert!(f.shell("cat", b"x".to_vec()).unwrap_err().contains("disabled"));
        assert!(f.spawn("cat", [-1, -1, -1]).unwrap_err().contains("disabled"));
    }

    #[test]
    fn shell_feeds_input_and_collects_output() {
        let mut f = Files::new();
        // More than a pipe buffer, so that input and output must flow together.
        let input: Vec<u8> = (0..200_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        assert_eq!(f.shell("cat", input.clone()), Ok(input));
        assert_eq!(f.shell("  echo   a  b ", Vec::new()), Ok(b"a b\n".to_vec()));
        assert!(f.shell("no-such-command-of-vcode", Vec::new()).unwrap_err().starts_with("SHELL: cannot run"));
        assert_eq!(f.shell("", Vec::new()), Err("SHELL: empty command".to_string()));
        assert_eq!(f.getenv("VCODE_SURELY_UNSET_VARIABLE_17"), Ok(Vec::new()));
        assert_eq!(f.getenv(""), Ok(Vec::new()));
    }

    #[test]
    fn spawned_pipes_are_streams() {
        let mut f = Files::new();
        let [e, o, i] = f.spawn("cat", [-1, -1, 2]).unwrap();
        assert_eq!(e, 2);
        assert!(o > 2 && i > 2 && o != i);
        let mut sink = Vec::new();
        f.write(i, "one\ntwo", &mut sink).unwrap();
        assert!(f.read_chars(i, &[], -1).is_err(), "the child's input is not readable");
        f.close(i).unwrap();
        assert_eq!(f.read_chars(o, &[10], -1), Ok((b"one".iter().map(|&b| b as i64).collect(), 10)));
        assert_eq!(f.read_chars(o, &[10], -1), Ok((b"two".iter().map(|&b| b as i64).collect(), -1)));
        assert!(f.spawn("cat", [o, -1, -1]).unwrap_err().contains("pipe of another process"));
        assert!(f.spawn("cat", [99, -1, -1]).unwrap_err().contains("not an open file"));
        assert!(f.spawn("cat", [1, -1, -1]).unwrap_err().contains("not open for reading"));
    }
}
