//! The SVG display: each window becomes `DIR/<title>.svg` when it is killed or the program
//! ends; input comes from the events file (`--events FILE`), and when it runs out (or
//! there is none) asking for input is an error saying so, so that demo loops end.
//!
//! Every drawn thing is one element with a class naming what drew it: `point` (a 1 by 1
//! `rect` per point), `lines` (`polyline`), `segment` (`line`), `string` (`text`),
//! `rectangle` (an outlined `rect`) and `polygon` (a filled `polygon`, which is also how
//! boxes and window backgrounds are shaded).

use super::events::{self, Planned};
use super::{Backend, Event, Item, Model, Window};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// SVG files in a folder, input from an events file.
pub struct SvgBackend {
    dir: PathBuf,
    events_name: Option<String>,
    events: Mutex<std::collections::VecDeque<(usize, Planned)>>,
    written: Mutex<Vec<String>>,
}

impl SvgBackend {
    /// The display writing into `dir` (made if missing), reading input from `events`.
    pub fn new(dir: PathBuf, events: Option<&Path>) -> Result<SvgBackend, String> {
        let (events_name, list) = match events {
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .map_err(|e| format!("--events {}: {e}", p.display()))?;
                let name = p.display().to_string();
                let list = events::parse(&name, &text)?;
                (Some(name), list)
            }
            None => (None, Vec::new()),
        };
        Ok(SvgBackend {
            dir,
            events_name,
            events: Mutex::new(list.into()),
            written: Mutex::new(Vec::new()),
        })
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn pts(p: &[(i64, i64)]) -> String {
    p.iter()
        .map(|(x, y)| format!("{x},{y}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The SVG text of a window.
pub fn render(w: &Window) -> String {
    let (width, height) = w.size;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\">"
    );
    let _ = writeln!(s, "<title>{}</title>", esc(&w.title));
    for item in &w.items {
        match item {
            Item::Points { color, pts } => {
                for (x, y) in pts {
                    let _ = writeln!(s, "<rect class=\"point\" x=\"{x}\" y=\"{y}\" width=\"1\" height=\"1\" fill=\"{color}\"/>");
                }
            }
            Item::Lines {
                color,
                width,
                pts: p,
            } => {
                let _ = writeln!(
                    s,
                    "<polyline class=\"lines\" points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"{}\"/>",
                    pts(p),
                    (*width).max(1)
                );
            }
            Item::Segments { color, width, segs } => {
                for (x1, y1, x2, y2) in segs {
                    let _ = writeln!(
                        s,
                        "<line class=\"segment\" x1=\"{x1}\" y1=\"{y1}\" x2=\"{x2}\" y2=\"{y2}\" stroke=\"{color}\" stroke-width=\"{}\"/>",
                        (*width).max(1)
                    );
                }
            }
            Item::Text { color, x, y, text } => {
                let _ = writeln!(
                    s,
                    "<text class=\"string\" x=\"{x}\" y=\"{y}\" fill=\"{color}\" font-family=\"monospace\" font-size=\"10\">{}</text>",
                    esc(text)
                );
            }
            Item::Rect {
                color,
                width,
                x,
                y,
                w,
                h,
            } => {
                let _ = writeln!(
                    s,
                    "<rect class=\"rectangle\" x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"{}\"/>",
                    (*width).max(1)
                );
            }
            Item::Polygon { color, pts: p } => {
                let _ = writeln!(
                    s,
                    "<polygon class=\"polygon\" points=\"{}\" fill=\"{color}\"/>",
                    pts(p)
                );
            }
        }
    }
    s.push_str("</svg>\n");
    s
}

/// A file name from a window title: characters that cannot be in a name become `_`.
fn file_stem(title: &str) -> String {
    let s: String = title
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ' ') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let s = s.trim().trim_start_matches('.').to_string();
    if s.is_empty() {
        "window".to_string()
    } else {
        s
    }
}

impl Backend for SvgBackend {
    fn changed(&self, _model: &Model, _id: i64, _item: Option<&Item>) -> Result<(), String> {
        Ok(())
    }

    fn next_event(
        &self,
        model: &Mutex<Model>,
        id: i64,
        block: bool,
    ) -> Result<Option<Event>, String> {
        let _ = block;
        let Some(file) = &self.events_name else {
            return Err("w_get_input: no input events: the svg display takes its input from --events FILE, and none was given".into());
        };
        let next = self
            .events
            .lock()
            .map_err(|_| "graphics: the display is broken".to_string())?
            .pop_front();
        let Some((line, p)) = next else {
            return Err(format!(
                "w_get_input: no more input events: every event of {file} has been used"
            ));
        };
        let m = model
            .lock()
            .map_err(|_| "graphics: the display is broken".to_string())?;
        let w = m
            .windows
            .iter()
            .find(|w| w.id == id)
            .ok_or_else(|| format!("graphics: there is no window {id}"))?;
        events::resolve(file, line, &p, w).map(Some)
    }

    fn finish_window(&self, window: &Window) -> Result<(), String> {
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| format!("graphics: cannot make {}: {e}", self.dir.display()))?;
        let mut written = self
            .written
            .lock()
            .map_err(|_| "graphics: the display is broken".to_string())?;
        let stem = file_stem(&window.title);
        let mut name = format!("{stem}.svg");
        let mut k = 2;
        while written.contains(&name) {
            name = format!("{stem}-{k}.svg");
            k += 1;
        }
        let path = self.dir.join(&name);
        std::fs::write(&path, render(window))
            .map_err(|e| format!("graphics: cannot write {}: {e}", path.display()))?;
        written.push(name);
        Ok(())
    }
}
