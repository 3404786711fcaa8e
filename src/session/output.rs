//! The transcript writer: passes bytes through and remembers how the text written so far
//! ends, so the top level can start its lines and close its error paragraphs correctly.
//!
//! A transcript goes to one stream, or to two: results and program output to one (stdout),
//! error paragraphs to the other (stderr). The top level writes an error paragraph
//! between [`Transcript::begin_error`] and [`Transcript::end_error`]; with two streams,
//! the results' stream is first brought to the start of a line and flushed, so a terminal
//! that shows both interleaves whole lines, in the order they were written.
//!
//! Every result line ends with its newline, and text a program prints starts on a fresh
//! line ([`Transcript::program_output`]). An error paragraph starts a line and ends with
//! a blank line ([`Transcript::end_paragraph`]); the comparison rule of the conformance
//! corpus relies on it.

use std::io::{self, Write};

/// A writer to one or two streams that tracks the last two bytes written to each.
pub struct Transcript<W: Write> {
    out: W,
    /// The stream of error paragraphs; `None`: they go to `out`.
    err: Option<W>,
    /// True between [`Transcript::begin_error`] and [`Transcript::end_error`].
    in_error: bool,
    /// The last two bytes of `out` and of `err`.
    tails: [[u8; 2]; 2],
    written: u64,
}

impl<W: Write> Transcript<W> {
    /// Everything to `out`; nothing written yet counts as being at the start of a line.
    pub fn new(out: W) -> Self {
        Transcript { out, err: None, in_error: false, tails: [[b'\n'; 2]; 2], written: 0 }
    }

    /// Results and program output to `out`, error paragraphs to `err`.
    pub fn split(out: W, err: W) -> Self {
        Transcript { err: Some(err), ..Transcript::new(out) }
    }

    /// Bytes written so far (to both streams).
    pub fn written(&self) -> u64 {
        self.written
    }

    /// The stream written now: 1 (`err`) inside an error paragraph of a split
    /// transcript, else 0.
    fn current(&self) -> usize {
        usize::from(self.in_error && self.err.is_some())
    }

    /// True when the next byte would start a line.
    pub fn at_line_start(&self) -> bool {
        self.tails[self.current()][1] == b'\n'
    }

    /// True inside an error paragraph.
    pub fn in_error(&self) -> bool {
        self.in_error
    }

    /// A writer for the output of a running program, which starts on a fresh line.
    /// Programs start their run-time error messages with a newline (to leave the line
    /// they are on); where the transcript is at the start of a line that newline is
    /// dropped, so error paragraphs are not separated by blank lines. A message that
    /// starts with `RUNTIME ERROR` (a failed check; the program stops after it) begins an
    /// error paragraph ([`Transcript::begin_error`]), which the caller ends.
    pub fn program_output(&mut self) -> ProgramOutput<'_, W> {
        let armed = self.at_line_start();
        ProgramOutput { t: self, armed }
    }

    /// Writes a newline unless at the start of a line.
    pub fn start_line(&mut self) -> io::Result<()> {
        if !self.at_line_start() {
            self.write_all(b"\n")?;
        }
        Ok(())
    }

    /// Writes newlines until the text ends with a blank line (a closed paragraph).
    pub fn end_paragraph(&mut self) -> io::Result<()> {
        while self.tails[self.current()] != [b'\n', b'\n'] {
            self.write_all(b"\n")?;
        }
        Ok(())
    }

    /// Starts an error paragraph on a fresh line (of the error stream, after ending the
    /// current line of the results' stream and flushing it).
    pub fn begin_error(&mut self) -> io::Result<()> {
        if !self.in_error && self.err.is_some() {
            if self.tails[0][1] != b'\n' {
                self.write_all(b"\n")?;
            }
            self.out.flush()?;
        }
        self.in_error = true;
        self.start_line()
    }

    /// Ends the error paragraph (with a blank line), flushes it, and goes back to the
    /// results' stream.
    pub fn end_error(&mut self) -> io::Result<()> {
        self.end_paragraph()?;
        self.flush()?;
        self.in_error = false;
        Ok(())
    }

    /// The results' writer.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// The results' writer, borrowed.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }
}

impl<W: Write> Write for Transcript<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let k = self.current();
        let n = match (k, &mut self.err) {
            (1, Some(err)) => err.write(buf)?,
            _ => self.out.write(buf)?,
        };
        let tail = &mut self.tails[k];
        match n {
            0 => {}
            1 => *tail = [tail[1], buf[0]],
            _ => *tail = [buf[n - 2], buf[n - 1]],
        }
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()?;
        match &mut self.err {
            Some(err) => err.flush(),
            None => Ok(()),
        }
    }
}

/// The writer [`Transcript::program_output`] returns.
pub struct ProgramOutput<'a, W: Write> {
    t: &'a mut Transcript<W>,
    armed: bool,
}

impl<W: Write> Write for ProgramOutput<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut skipped = 0;
        let mut text = buf;
        if self.armed && !buf.is_empty() {
            self.armed = false;
            if buf[0] == b'\n' {
                skipped = 1;
                text = &buf[1..];
                if text.is_empty() {
                    return Ok(1);
                }
            }
        }
        let line_start = self.t.at_line_start() || text.first() == Some(&b'\n');
        if !self.t.in_error && line_start && text.trim_ascii_start().starts_with(b"RUNTIME ERROR") {
            self.t.begin_error()?;
            // The message's own leading newlines are not needed at a line start.
            let rest = text.trim_ascii_start();
            skipped += text.len() - rest.len();
            text = rest;
        }
        Ok(skipped + self.t.write(text)?)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.t.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_paragraphs() -> io::Result<()> {
        let mut t = Transcript::new(Vec::new());
        t.start_line()?;
        writeln!(t, "it = 1 : int")?;
        write!(t.program_output(), "\nabc")?; // the program's first newline is dropped
        t.begin_error()?;
        write!(t, "RUNTIME ERROR: x")?;
        t.end_error()?;
        t.end_paragraph()?;
        write!(t, "\nERROR: y\n")?;
        t.end_paragraph()?;
        t.start_line()?;
        writeln!(t, "it = 2 : int")?;
        t.program_output().write_all(b"\nRUNTIME ERROR: z\n")?;
        assert!(t.in_error());
        t.end_error()?;
        writeln!(t.program_output())?;
        write!(t.program_output(), "x")?;
        t.start_line()?;
        let written = t.written();
        let text = String::from_utf8(t.into_inner()).unwrap_or_default();
        assert_eq!(written, text.len() as u64);
        assert_eq!(text, "it = 1 : int\nabc\nRUNTIME ERROR: x\n\n\nERROR: y\n\nit = 2 : int\nRUNTIME ERROR: z\n\nx\n");
        Ok(())
    }

    /// Two streams: errors on the second, each stream's lines whole (a line a program
    /// left open is ended before an error is written).
    #[test]
    fn errors_on_their_own_stream() -> io::Result<()> {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        {
            let mut t = Transcript::split(&mut out, &mut err);
            writeln!(t, "it = 1 : int")?;
            write!(t.program_output(), "abc")?;
            t.program_output().write_all(b"\nRUNTIME ERROR: z\n")?;
            t.end_error()?;
            t.begin_error()?;
            write!(t, "error: y")?;
            t.end_error()?;
            t.start_line()?;
            writeln!(t, "it = 2 : int")?;
        }
        assert_eq!(String::from_utf8_lossy(&out), "it = 1 : int\nabc\nit = 2 : int\n");
        assert_eq!(String::from_utf8_lossy(&err), "RUNTIME ERROR: z\n\nerror: y\n\n");
        Ok(())
    }
}
