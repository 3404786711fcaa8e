//! The displays of the graphics library: what the `DISPLAY` instruction's requests draw
//! on (CMU NESL's X11 plotting process, replaced).
//!
//! The window library (`nesl-front/src/prelude_window.nesl`) sends requests with window
//! pixel coordinates whose origin is the lower left corner; [`Model`] keeps each window's
//! drawing as a list of [`Item`]s in SVG coordinates (origin at the top left). Two
//! displays serve the requests:
//!
//! - [`svg`]: each window becomes `DIR/<title>.svg` when it is killed or the program
//!   ends; input comes from an events file (`--events FILE`, one event a line).
//! - [`web`]: a small HTTP server on 127.0.0.1 serves a page that draws every window on
//!   a canvas as the program draws, and sends clicks and keys back.
//!
//! The request codes are listed at the top of `prelude_window.nesl`.

pub mod events;
pub mod svg;
pub mod web;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Which display `--display` chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// The web page (`web`).
    Web,
    /// SVG files in this folder (`svg:DIR`).
    Svg(PathBuf),
}

impl Choice {
    /// Parses `web` or `svg:DIR`.
    pub fn parse(s: &str) -> Result<Choice, String> {
        if s == "web" {
            return Ok(Choice::Web);
        }
        match s.strip_prefix("svg:") {
            Some(dir) if !dir.is_empty() => Ok(Choice::Svg(PathBuf::from(dir))),
            Some(_) => Err("--display svg:DIR needs a folder after `svg:`".into()),
            None => Err(format!("--display {s}: expected `web` or `svg:DIR`")),
        }
    }
}

/// One thing drawn on a window, in SVG coordinates (y grows downwards).
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    /// Points (one pixel each).
    Points { color: String, pts: Vec<(i64, i64)> },
    /// A polyline.
    Lines {
        color: String,
        width: i64,
        pts: Vec<(i64, i64)>,
    },
    /// Separate segments.
    Segments {
        color: String,
        width: i64,
        segs: Vec<(i64, i64, i64, i64)>,
    },
    /// Text whose baseline starts at (x, y).
    Text {
        color: String,
        x: i64,
        y: i64,
        text: String,
    },
    /// The outline of a rectangle with top left corner (x, y).
    Rect {
        color: String,
        width: i64,
        x: i64,
        y: i64,
        w: i64,
        h: i64,
    },
    /// A filled polygon.
    Polygon { color: String, pts: Vec<(i64, i64)> },
}

/// A named button of a window (where a press on it lands), in NESL pixel coordinates.
#[derive(Debug, Clone, PartialEq)]
pub struct Button {
    /// The name it shows and `w_get_input` reports.
    pub name: String,
    /// Lower left corner and size.
    pub rect: (i64, i64, i64, i64),
}

/// A window of the program.
#[derive(Debug, Clone)]
pub struct Window {
    /// Its number (the handle the library holds).
    pub id: i64,
    /// Its title.
    pub title: String,
    /// Its width and height in pixels.
    pub size: (i64, i64),
    /// Colours of its graphics contexts, `#rrggbb`.
    pub colors: Vec<String>,
    /// What was drawn, oldest first.
    pub items: Vec<Item>,
    /// Its buttons.
    pub buttons: Vec<Button>,
    /// False once killed.
    pub open: bool,
}

/// The smallest rectangle (x0, y0, x1, y1) holding an item, in SVG coordinates (text:
/// 6 by 10 pixels a character above its baseline, as the page and the SVG draw it).
fn extent(item: &Item) -> Option<(i64, i64, i64, i64)> {
    let of = |pts: &mut dyn Iterator<Item = (i64, i64)>| {
        pts.fold(None, |acc: Option<(i64, i64, i64, i64)>, (x, y)| {
            Some(match acc {
                None => (x, y, x, y),
                Some((a, b, c, d)) => (a.min(x), b.min(y), c.max(x), d.max(y)),
            })
        })
    };
    match item {
        Item::Points { pts, .. } => of(&mut pts.iter().copied()),
        Item::Lines { pts, width, .. } => of(&mut pts.iter().copied()).map(|(a, b, c, d)| (a - width, b - width, c + width, d + width)),
        Item::Polygon { pts, .. } => of(&mut pts.iter().copied()),
        Item::Segments { segs, width, .. } => of(&mut segs.iter().flat_map(|&(a, b, c, d)| [(a, b), (c, d)]))
            .map(|(a, b, c, d)| (a - width, b - width, c + width, d + width)),
        Item::Text { x, y, text, .. } => Some((*x, y - 10, x + 6 * text.chars().count() as i64, *y + 2)),
        Item::Rect { x, y, w, h, width, .. } => Some((x - width, y - width, x + w + width, y + h + width)),
    }
}

/// The rectangle a filled polygon is, when it is one with sides along the axes.
fn filled_rectangle(item: &Item) -> Option<(i64, i64, i64, i64)> {
    let Item::Polygon { pts, .. } = item else { return None };
    let (x0, y0, x1, y1) = extent(item)?;
    let on_corner = pts.iter().all(|&(x, y)| (x == x0 || x == x1) && (y == y0 || y == y1));
    let corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)];
    (on_corner && corners.iter().all(|c| pts.contains(c))).then_some((x0, y0, x1, y1))
}

impl Window {
    /// Forgets what `item`, an opaque filled rectangle, hides entirely (clearing a box
    /// shades it): the SVG file and a page loaded later hold what can be seen.
    fn cover(&mut self, item: &Item) {
        if let Some((x0, y0, x1, y1)) = filled_rectangle(item) {
            self.items.retain(|it| !extent(it).is_some_and(|(a, b, c, d)| a >= x0 && b >= y0 && c <= x1 && d <= y1));
        }
    }
    fn color(&self, gc: i64) -> Result<String, String> {
        usize::try_from(gc)
            .ok()
            .and_then(|g| self.colors.get(g).cloned())
            .ok_or_else(|| {
                format!(
                    "graphics: window `{}` has no graphics context {gc}",
                    self.title
                )
            })
    }
    fn flip(&self, x: i64, y: i64) -> (i64, i64) {
        (x, self.size.1 - y)
    }
    fn points(&self, xs: &[i64]) -> Vec<(i64, i64)> {
        xs.chunks_exact(2).map(|p| self.flip(p[0], p[1])).collect()
    }
}

/// An input event as the library reads it: type (2 key press, 4 button press), position
/// in NESL window pixels, state flags and the mouse button or character code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// 2: key press, 4: button press (CMU's X event numbers).
    pub kind: i64,
    /// Position, origin at the lower left corner.
    pub x: i64,
    /// Position, origin at the lower left corner.
    pub y: i64,
    /// Shift and control flags.
    pub state: i64,
    /// Mouse button, or the character code of a key.
    pub code: i64,
}

/// All windows of a run.
#[derive(Debug, Default)]
pub struct Model {
    /// Every window made so far, by number.
    pub windows: Vec<Window>,
}

/// What a display does besides keeping the model: show changes, give input.
pub trait Backend: Send + Sync {
    /// A window changed (`item` drawn, or `None`: made, cleared or killed).
    fn changed(&self, model: &Model, id: i64, item: Option<&Item>) -> Result<(), String>;
    /// The next input event for window `id`; `block` false: `None` when there is none yet.
    fn next_event(
        &self,
        model: &Mutex<Model>,
        id: i64,
        block: bool,
    ) -> Result<Option<Event>, String>;
    /// Window `id` was killed or the program ended: make it last (write its file).
    fn finish_window(&self, window: &Window) -> Result<(), String>;
}

/// A display: the model plus the backend that shows it.
pub struct Display {
    model: Mutex<Model>,
    backend: Box<dyn Backend>,
}

fn text_of(codes: &[i64]) -> String {
    codes
        .iter()
        .map(|&c| {
            u32::try_from(c)
                .ok()
                .and_then(char::from_u32)
                .unwrap_or('\u{fffd}')
        })
        .collect()
}

fn rgb(r: i64, g: i64, b: i64) -> String {
    let c = |v: i64| (v.clamp(0, 65535) * 255 / 65535) as u8;
    format!("#{:02x}{:02x}{:02x}", c(r), c(g), c(b))
}

impl Display {
    /// A display on `backend`.
    pub fn new(backend: Box<dyn Backend>) -> Display {
        Display {
            model: Mutex::new(Model::default()),
            backend,
        }
    }

    /// Finishes every open window (the program ended): each is written or shown as it is.
    pub fn finish(&self) -> Result<(), String> {
        let mut m = self
            .model
            .lock()
            .map_err(|_| "graphics: the display is broken".to_string())?;
        for w in m.windows.iter_mut().filter(|w| w.open) {
            w.open = false;
            self.backend.finish_window(w)?;
        }
        Ok(())
    }

    fn window(m: &mut Model, id: i64) -> Result<&mut Window, String> {
        match m.windows.iter_mut().find(|w| w.id == id) {
            Some(w) if w.open => Ok(w),
            Some(w) => Err(format!("graphics: window `{}` was killed", w.title)),
            None => Err(format!("graphics: there is no window {id}")),
        }
    }

    fn draw(&self, code: i64, a: &[i64]) -> Result<Vec<i64>, String> {
        let mut m = self
            .model
            .lock()
            .map_err(|_| "graphics: the display is broken".to_string())?;
        let short = || format!("graphics: request {code} has too few arguments");
        if code == 1 {
            if a.len() < 4 {
                return Err(short());
            }
            let id = m.windows.len() as i64 + 1;
            let (w, h) = (a[2], a[3]);
            if w <= 0 || h <= 0 || w > 100_000 || h > 100_000 {
                return Err(format!(
                    "w_make_window: a window of {w} by {h} pixels cannot be made"
                ));
            }
            let title = text_of(&a[4..]);
            m.windows.push(Window {
                id,
                title,
                size: (w, h),
                colors: Vec::new(),
                items: Vec::new(),
                buttons: Vec::new(),
                open: true,
            });
            self.backend.changed(&m, id, None)?;
            return Ok(vec![id]);
        }
        let id = *a.first().ok_or_else(short)?;
        let win = Self::window(&mut m, id)?;
        let item = match code {
            2 => {
                win.open = false;
                let w = win.clone();
                self.backend.finish_window(&w)?;
                self.backend.changed(&m, id, None)?;
                return Ok(Vec::new());
            }
            3 => {
                win.items.clear();
                self.backend.changed(&m, id, None)?;
                return Ok(Vec::new());
            }
            4 => {
                if a.len() < 4 {
                    return Err(short());
                }
                win.colors.push(rgb(a[1], a[2], a[3]));
                return Ok(vec![win.colors.len() as i64 - 1]);
            }
            12 => {
                if a.len() < 5 {
                    return Err(short());
                }
                win.buttons.push(Button {
                    name: text_of(&a[5..]),
                    rect: (a[1], a[2], a[3], a[4]),
                });
                return Ok(Vec::new());
            }
            13 => return Ok(vec![if a.get(1) == Some(&1) { 1 } else { 0 }]),
            11 => {
                let block = a.get(1) != Some(&0);
                drop(m);
                let e = self.backend.next_event(&self.model, id, block)?;
                return Ok(match e {
                    Some(e) => vec![1, e.kind, e.x, e.y, e.state, e.code],
                    None => vec![0, 0, 0, 0, 0, 0],
                });
            }
            5..=10 => {
                let color = win.color(*a.get(1).ok_or_else(short)?)?;
                match code {
                    5 => Item::Points {
                        color,
                        pts: win.points(&a[2..]),
                    },
                    6 | 7 => {
                        let width = *a.get(2).ok_or_else(short)?;
                        if code == 6 {
                            Item::Lines {
                                color,
                                width,
                                pts: win.points(&a[3..]),
                            }
                        } else {
                            let segs = a[3..]
                                .chunks_exact(4)
                                .map(|s| {
                                    let (x1, y1) = win.flip(s[0], s[1]);
                                    let (x2, y2) = win.flip(s[2], s[3]);
                                    (x1, y1, x2, y2)
                                })
                                .collect();
                            Item::Segments { color, width, segs }
                        }
                    }
                    8 => {
                        if a.len() < 4 {
                            return Err(short());
                        }
                        let (x, y) = win.flip(a[2], a[3]);
                        Item::Text {
                            color,
                            x,
                            y,
                            text: text_of(&a[4..]),
                        }
                    }
                    9 => {
                        if a.len() < 7 {
                            return Err(short());
                        }
                        let (x, y) = win.flip(a[3], a[4] + a[6]);
                        Item::Rect {
                            color,
                            width: a[2],
                            x,
                            y,
                            w: a[5],
                            h: a[6],
                        }
                    }
                    _ => Item::Polygon {
                        color,
                        pts: win.points(&a[2..]),
                    },
                }
            }
            _ => return Err(format!("graphics: unknown display request {code}")),
        };
        win.cover(&item);
        win.items.push(item.clone());
        self.backend.changed(&m, id, Some(&item))?;
        Ok(Vec::new())
    }
}

impl vcode::display::DisplayHost for Display {
    fn request(&self, code: i64, args: &[i64]) -> Result<Vec<i64>, String> {
        self.draw(code, args)
    }
}

/// The display installed for this process, kept to finish its windows at the end.
static INSTALLED: Mutex<Option<Arc<Display>>> = Mutex::new(None);

/// Installs the display chosen by `choice` (with the events file for SVG) as the one
/// `DISPLAY` instructions use; `open_browser`: the web display opens a browser on its
/// page.
pub fn install(
    choice: &Choice,
    events: Option<&std::path::Path>,
    open_browser: bool,
) -> Result<(), String> {
    let backend: Box<dyn Backend> = match choice {
        Choice::Svg(dir) => Box::new(svg::SvgBackend::new(dir.clone(), events)?),
        Choice::Web => Box::new(web::LazyWeb::new(open_browser)),
    };
    let d = Arc::new(Display::new(backend));
    vcode::display::set_display(Some(d.clone()));
    if let Ok(mut i) = INSTALLED.lock() {
        *i = Some(d);
    }
    Ok(())
}

/// Finishes the installed display's open windows (the program ended); a message for
/// each that could not be written.
pub fn finish() -> Result<(), String> {
    let d = INSTALLED.lock().ok().and_then(|i| i.clone());
    match d {
        Some(d) => d.finish(),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn win() -> Window {
        Window { id: 1, title: "t".into(), size: (100, 100), colors: Vec::new(), items: Vec::new(), buttons: Vec::new(), open: true }
    }

    /// A shaded rectangle drops what it hides entirely, and nothing else.
    #[test]
    fn an_opaque_rectangle_hides_what_is_under_it() {
        let mut w = win();
        let c = "#ffffff".to_string();
        w.items.push(Item::Points { color: c.clone(), pts: vec![(10, 10), (20, 20)] });
        w.items.push(Item::Segments { color: c.clone(), width: 1, segs: vec![(5, 5, 95, 95)] });
        w.items.push(Item::Text { color: c.clone(), x: 30, y: 40, text: "ab".into() });
        let cover = Item::Polygon { color: c.clone(), pts: vec![(0, 0), (50, 0), (50, 50), (0, 50)] };
        w.cover(&cover);
        assert_eq!(w.items.len(), 1, "{:?}", w.items);
        assert!(matches!(w.items[0], Item::Segments { .. }));
        // A triangle hides nothing (it is not known to cover anything).
        let tri = Item::Polygon { color: c, pts: vec![(0, 0), (100, 0), (0, 100)] };
        w.cover(&tri);
        assert_eq!(w.items.len(), 1);
    }
}
