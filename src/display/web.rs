//! The web display: the first window starts a small HTTP server on 127.0.0.1 (a free
//! port, printed on stderr; a browser is opened on it when a person is at a terminal).
//! Its page draws every window on a canvas as the program draws (it long-polls
//! `/poll?since=N` for the drawing commands after the N-th), and posts presses and keys
//! to `/input`. When the page is closed (it posts `/closed`, or stops polling for a
//! while), waiting for input is an error saying so instead of a hang.

use super::{Backend, Event, Item, Model, Window};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::Read;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long `/poll` waits for something new before it answers with nothing.
const POLL_WAIT: Duration = Duration::from_secs(15);
/// A page that has not polled for this long is taken as closed.
const PAGE_GONE: Duration = Duration::from_secs(40);

#[derive(Default)]
struct State {
    /// Drawing commands (JSON), in order.
    log: Vec<Value>,
    /// Input from the page: window number and event.
    inputs: VecDeque<(i64, Event)>,
    /// The page said it was closed.
    closed: bool,
    /// When the page last polled (None: no page yet).
    last_poll: Option<Instant>,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

/// The web page display.
pub struct WebBackend {
    shared: Arc<Shared>,
    /// The page's address.
    pub url: String,
}

const PAGE: &str = include_str!("page.html");

fn item_json(item: &Item) -> Value {
    match item {
        Item::Points { color, pts } => json!({"t": "points", "c": color, "p": pts}),
        Item::Lines { color, width, pts } => {
            json!({"t": "lines", "c": color, "w": width, "p": pts})
        }
        Item::Segments { color, width, segs } => {
            json!({"t": "segments", "c": color, "w": width, "s": segs})
        }
        Item::Text { color, x, y, text } => {
            json!({"t": "text", "c": color, "x": x, "y": y, "s": text})
        }
        Item::Rect {
            color,
            width,
            x,
            y,
            w,
            h,
        } => {
            json!({"t": "rect", "c": color, "w": width, "x": x, "y": y, "rw": w, "rh": h})
        }
        Item::Polygon { color, pts } => json!({"t": "polygon", "c": color, "p": pts}),
    }
}

fn window_json(w: &Window) -> Value {
    let items: Vec<Value> = w.items.iter().map(item_json).collect();
    json!({"op": "window", "id": w.id, "title": w.title, "w": w.size.0, "h": w.size.1, "open": w.open, "items": items})
}

impl WebBackend {
    /// Starts the server (and a browser when `open_browser`).
    pub fn start(open_browser: bool) -> Result<WebBackend, String> {
        let server = tiny_http::Server::http("127.0.0.1:0")
            .map_err(|e| format!("graphics: cannot start the web display: {e}"))?;
        let port = server
            .server_addr()
            .to_ip()
            .map(|a| a.port())
            .ok_or("graphics: the web display has no port")?;
        let url = format!("http://127.0.0.1:{port}/");
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        });
        let s2 = shared.clone();
        std::thread::Builder::new()
            .name("nesl-display".into())
            .spawn(move || {
                for req in server.incoming_requests() {
                    let s3 = s2.clone();
                    let _ = std::thread::Builder::new()
                        .name("nesl-display-req".into())
                        .spawn(move || serve(&s3, req));
                }
            })
            .map_err(|e| format!("graphics: cannot start the web display: {e}"))?;
        eprintln!("display: the windows are at {url}");
        if open_browser {
            if let Err(e) = webbrowser::open(&url) {
                eprintln!("display: no browser could be opened ({e}); open {url} in one");
            }
        }
        Ok(WebBackend { shared, url })
    }

    fn push(&self, v: Value) {
        if let Ok(mut st) = self.shared.state.lock() {
            st.log.push(v);
        }
        self.shared.wake.notify_all();
    }
}

fn respond(req: tiny_http::Request, status: u16, ctype: &str, body: String) {
    let header = tiny_http::Header::from_bytes(&b"Content-Type"[..], ctype.as_bytes());
    let mut r = tiny_http::Response::from_string(body).with_status_code(status);
    if let Ok(h) = header {
        r = r.with_header(h);
    }
    let _ = req.respond(r);
}

fn serve(shared: &Shared, mut req: tiny_http::Request) {
    let url = req.url().to_string();
    let (path, query) = url.split_once('?').unwrap_or((url.as_str(), ""));
    match (req.method(), path) {
        (tiny_http::Method::Get, "/") => {
            respond(req, 200, "text/html; charset=utf-8", PAGE.to_string())
        }
        (tiny_http::Method::Get, "/poll") => {
            let since: usize = query
                .strip_prefix("since=")
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            let deadline = Instant::now() + POLL_WAIT;
            let Ok(mut st) = shared.state.lock() else {
                return respond(req, 500, "text/plain", String::new());
            };
            st.last_poll = Some(Instant::now());
            while st.log.len() <= since && Instant::now() < deadline {
                st = match shared.wake.wait_timeout(st, Duration::from_millis(500)) {
                    Ok((g, _)) => g,
                    Err(_) => return,
                };
            }
            st.last_poll = Some(Instant::now());
            let cmds: Vec<Value> = st
                .log
                .get(since..)
                .map(<[Value]>::to_vec)
                .unwrap_or_default();
            let body = json!({"next": st.log.len(), "cmds": cmds}).to_string();
            drop(st);
            respond(req, 200, "application/json", body);
        }
        (tiny_http::Method::Post, "/input") => {
            let mut body = String::new();
            let _ = req.as_reader().take(1000).read_to_string(&mut body);
            let n: Vec<i64> = body
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            if let [id, kind, x, y, state, code] = n[..] {
                if let Ok(mut st) = shared.state.lock() {
                    st.inputs.push_back((
                        id,
                        Event {
                            kind,
                            x,
                            y,
                            state,
                            code,
                        },
                    ));
                }
                shared.wake.notify_all();
                respond(req, 204, "text/plain", String::new());
            } else {
                respond(
                    req,
                    400,
                    "text/plain",
                    "expected: window kind x y state code".into(),
                );
            }
        }
        (tiny_http::Method::Post, "/closed") => {
            if let Ok(mut st) = shared.state.lock() {
                st.closed = true;
            }
            shared.wake.notify_all();
            respond(req, 204, "text/plain", String::new());
        }
        _ => respond(req, 404, "text/plain", "not found".into()),
    }
}

impl Backend for WebBackend {
    fn changed(&self, model: &Model, id: i64, item: Option<&Item>) -> Result<(), String> {
        match item {
            Some(it) => self.push(json!({"op": "item", "id": id, "item": item_json(it)})),
            None => {
                if let Some(w) = model.windows.iter().find(|w| w.id == id) {
                    self.push(window_json(w));
                }
            }
        }
        Ok(())
    }

    fn next_event(
        &self,
        _model: &Mutex<Model>,
        id: i64,
        block: bool,
    ) -> Result<Option<Event>, String> {
        let broken = || "graphics: the display is broken".to_string();
        let mut st = self.shared.state.lock().map_err(|_| broken())?;
        loop {
            if let Some(k) = st.inputs.iter().position(|(w, _)| *w == id) {
                return Ok(st.inputs.remove(k).map(|(_, e)| e));
            }
            let gone = st.last_poll.is_some_and(|t| t.elapsed() > PAGE_GONE);
            if st.closed || gone {
                return Err(format!(
                    "w_get_input: the display page ({}) was closed, so no more input can come",
                    self.url
                ));
            }
            if !block {
                return Ok(None);
            }
            if vcode::interrupt::requested() {
                return Err("w_get_input: interrupted".into());
            }
            st = self
                .shared
                .wake
                .wait_timeout(st, Duration::from_millis(200))
                .map_err(|_| broken())?
                .0;
        }
    }

    fn finish_window(&self, window: &Window) -> Result<(), String> {
        let mut w = window.clone();
        w.open = false;
        self.push(window_json(&w));
        Ok(())
    }
}

/// The web display, started when the first window is made.
pub struct LazyWeb {
    open_browser: bool,
    inner: std::sync::OnceLock<Result<WebBackend, String>>,
}

impl LazyWeb {
    /// A web display that starts its server on first use.
    pub fn new(open_browser: bool) -> LazyWeb {
        LazyWeb {
            open_browser,
            inner: std::sync::OnceLock::new(),
        }
    }
    fn get(&self) -> Result<&WebBackend, String> {
        self.inner
            .get_or_init(|| WebBackend::start(self.open_browser))
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl Backend for LazyWeb {
    fn changed(&self, model: &Model, id: i64, item: Option<&Item>) -> Result<(), String> {
        self.get()?.changed(model, id, item)
    }
    fn next_event(
        &self,
        model: &Mutex<Model>,
        id: i64,
        block: bool,
    ) -> Result<Option<Event>, String> {
        self.get()?.next_event(model, id, block)
    }
    fn finish_window(&self, window: &Window) -> Result<(), String> {
        match self.inner.get() {
            Some(Ok(w)) => w.finish_window(window),
            _ => Ok(()),
        }
    }
}
