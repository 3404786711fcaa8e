//! The transcript writer: passes bytes through and remembers how the text written so far
//! ends, so the top level can start its lines and close its error paragraphs correctly.
//!
//! Like the reference top level, a result line is written without its newline: text the
//! next form's program prints is glued onto it, and the top level's next line first
//! moves to a fresh line ([`Transcript::start_line`]). An error paragraph must start a
//! line and end with a blank line ([`Transcript::end_paragraph`]); the comparison rule of
//! the conformance corpus relies on both.

use std::io::{self, Write};

/// A writer that tracks the last two bytes written through it.
pub struct Transcript<W: Write> {
    out: W,
    tail: [u8; 2],
    written: u64,
}

impl<W: Write> Transcript<W> {
    /// Wraps `out`; nothing written yet counts as being at the start of a line.
    pub fn new(out: W) -> Self {
        Transcript { out, tail: [b'\n', b'\n'], written: 0 }
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// True when the next byte would start a line.
    pub fn at_line_start(&self) -> bool {
        self.tail[1] == b'\n'
    }

    /// A writer for the output of a running program. Programs start their run-time error
    /// messages with a newline (to leave a result line the reference did not end); where
    /// the transcript already ends with a blank line that newline is dropped, so error
    /// paragraphs are not separated by two blank lines.
    pub fn program_output(&mut self) -> ProgramOutput<'_, W> {
        let armed = self.tail == [b'\n', b'\n'];
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
        while self.tail != [b'\n', b'\n'] {
            self.write_all(b"\n")?;
        }
        Ok(())
    }

    /// The wrapped writer.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// The wrapped writer, borrowed.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }
}

impl<W: Write> Write for Transcript<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.out.write(buf)?;
        match n {
            0 => {}
            1 => self.tail = [self.tail[1], buf[0]],
            _ => self.tail = [buf[n - 2], buf[n - 1]],
        }
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The writer [`Transcript::program_output`] returns.
pub struct ProgramOutput<'a, W: Write> {
    t: &'a mut Transcript<W>,
    armed: bool,
}

impl<W: Write> Write for ProgramOutput<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.armed && !buf.is_empty() {
            self.armed = false;
            if buf[0] == b'\n' {
                if buf.len() == 1 {
                    return Ok(1);
                }
                return Ok(1 + self.t.write(&buf[1..])?);
            }
        }
        self.t.write(buf)
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
        write!(t, "it = 1 : int")?;
        assert!(!t.at_line_start());
        write!(t, "abc")?; // program output, glued
        t.start_line()?;
        write!(t, "RUNTIME ERROR: x")?;
        t.end_paragraph()?;
        t.end_paragraph()?;
        write!(t, "\nERROR: y\n")?;
        t.end_paragraph()?;
        t.start_line()?;
        write!(t, "it = 2 : int")?;
        t.start_line()?;
        t.program_output().write_all(b"\nRUNTIME ERROR: z\n")?;
        t.end_paragraph()?;
        writeln!(t.program_output())?;
        write!(t.program_output(), "x")?;
        t.start_line()?;
        let written = t.written();
        let text = String::from_utf8(t.into_inner()).unwrap_or_default();
        assert_eq!(written, text.len() as u64);
        assert_eq!(text, "it = 1 : intabc\nRUNTIME ERROR: x\n\n\nERROR: y\n\nit = 2 : int\n\nRUNTIME ERROR: z\n\nx\n");
        Ok(())
    }
}
