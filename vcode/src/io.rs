//! VCODE I/O: the open-file table and the text formats of `READ`/`WRITE`
//! (spec/vcode.md section 7.9).
//!
//! File descriptors 0, 1 and 2 are standard input, output and error; what a program
//! writes to 1 or 2 goes to the interpreter's output sink (the caller's `out`). Failures
//! are values (an error message and a false flag), never traps.

use crate::op::Ty;
use crate::print::format_value;
use crate::HostValue;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, BufWriter, Write};

enum Entry {
    Stdin,
    Std,
    Reader(BufReader<File>),
    Writer(BufWriter<File>),
}

/// The open-file table of one run.
pub(crate) struct Files {
    entries: Vec<Option<Entry>>,
    /// What standard input reads, when not the process's own.
    input: Option<io::Cursor<Vec<u8>>>,
    /// Whether `FOPEN` may open files.
    file_access: bool,
}

/// Where an I/O instruction failed: the message it reports on the stack.
pub(crate) type IoResult<T> = Result<T, String>;

impl Files {
    pub fn new() -> Self {
        Files {
            entries: vec![Some(Entry::Stdin), Some(Entry::Std), Some(Entry::Std)],
            input: None,
            file_access: true,
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
            if let Entry::Writer(w) = e {
                let _ = w.flush();
            }
        }
    }
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
}
