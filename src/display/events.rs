//! Input events read from a file (`--events FILE`), for displays without a person.
//!
//! One event a line; blank lines and lines starting with `#` are skipped:
//!
//! - `button NAME`: a press on the button called NAME (of the window asking for input);
//! - `click X Y [B]`: a press of mouse button B (default 1) at window pixel (X, Y),
//!   origin at the lower left corner, as the library's coordinates;
//! - `key C`: a key press of the character C (`key space`, `key newline`, `key tab`),
//!   with the pointer at the middle of the window.

use super::{Event, Window};

/// An event as written in the file, before it meets a window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Planned {
    /// `button NAME`.
    Button(String),
    /// `click X Y B`.
    Click(i64, i64, i64),
    /// `key C`.
    Key(i64),
}

/// The events of a file, each with its line number.
pub fn parse(name: &str, text: &str) -> Result<Vec<(usize, Planned)>, String> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: &str| {
            format!("{name}:{n}: {why} (expected `button NAME`, `click X Y [BUTTON]` or `key C`)")
        };
        let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        let ev = match word {
            "button" if !rest.is_empty() => Planned::Button(rest.to_string()),
            "click" => {
                let nums: Result<Vec<i64>, _> = rest.split_whitespace().map(str::parse).collect();
                match nums.as_deref() {
                    Ok([x, y]) => Planned::Click(*x, *y, 1),
                    Ok([x, y, b]) => Planned::Click(*x, *y, *b),
                    _ => return Err(bad("`click` takes two or three integers")),
                }
            }
            "key" => {
                let c = match rest {
                    "space" => ' ',
                    "newline" | "return" => '\n',
                    "tab" => '\t',
                    s if s.chars().count() == 1 => s.chars().next().unwrap_or(' '),
                    _ => return Err(bad("`key` takes one character")),
                };
                Planned::Key(c as i64)
            }
            _ => return Err(bad(&format!("unknown event `{line}`"))),
        };
        out.push((n, ev));
    }
    Ok(out)
}

/// The event `p` on window `w`; a button the window does not have is an error.
pub fn resolve(file: &str, line: usize, p: &Planned, w: &Window) -> Result<Event, String> {
    Ok(match p {
        Planned::Click(x, y, b) => Event {
            kind: 4,
            x: *x,
            y: *y,
            state: 0,
            code: *b,
        },
        // A key goes to what is under the pointer; the file gives no pointer, so it is at
        // the middle of the window.
        Planned::Key(c) => Event {
            kind: 2,
            x: w.size.0 / 2,
            y: w.size.1 / 2,
            state: 0,
            code: *c,
        },
        Planned::Button(name) => match w.buttons.iter().rev().find(|b| &b.name == name) {
            Some(b) => {
                let (x, y, bw, bh) = b.rect;
                Event {
                    kind: 4,
                    x: x + bw / 2,
                    y: y + bh / 2,
                    state: 0,
                    code: 1,
                }
            }
            None => {
                let names: Vec<&str> = w.buttons.iter().map(|b| b.name.as_str()).collect();
                return Err(format!(
                    "{file}:{line}: window `{}` has no button `{name}` (its buttons: {})",
                    w.title,
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                ));
            }
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_kind_and_locates_errors() {
        let ev = parse(
            "e",
            "# c\nbutton step\n\nclick 3 4\nclick 1 2 3\nkey q\nkey space\n",
        )
        .unwrap();
        assert_eq!(
            ev,
            vec![
                (2, Planned::Button("step".into())),
                (4, Planned::Click(3, 4, 1)),
                (5, Planned::Click(1, 2, 3)),
                (6, Planned::Key('q' as i64)),
                (7, Planned::Key(32)),
            ]
        );
        let e = parse("e", "click 1\n").unwrap_err();
        assert!(e.starts_with("e:1: `click`"), "{e}");
        assert!(parse("e", "jump\n").unwrap_err().contains("unknown event"));
    }
}
