//! The web display in a real browser (issue 18): a NESL program runs with
//! `--display web`; headless Chromium (Debian's `chromium`, or the binary named by
//! `NESL_CHROMIUM`) loads its page through the DevTools protocol, takes screenshots and
//! checks that the drawn pixels are where the program put them, clicks a button and sees
//! the program react (a new rectangle), then leaves the page and sees the program stop
//! with the "page was closed" error instead of hanging. Where Chromium is absent the test
//! says so on stderr (past the test harness's capture) and passes.
//!
//! Everything binds 127.0.0.1 and every wait is bounded.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Kills a child process when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn chromium() -> Option<String> {
    if let Ok(p) = std::env::var("NESL_CHROMIUM") {
        return Some(p);
    }
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            std::env::var_os("PATH")?
                .to_str()?
                .split(':')
                .map(|d| std::path::Path::new(d).join(name))
                .find(|p| p.is_file())
                .map(|p| p.display().to_string())
        })
}

/// Lines of a child's stream, on a channel.
fn lines_of(r: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(r).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The first line with `marker`, within `secs` seconds; the lines before it go to `seen`.
fn wait_line(
    rx: &mpsc::Receiver<String>,
    marker: &str,
    secs: u64,
    seen: &mut Vec<String>,
) -> Option<String> {
    let end = Instant::now() + Duration::from_secs(secs);
    while let Some(left) = end.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(l) if l.contains(marker) => return Some(l),
            Ok(l) => seen.push(l),
            Err(_) => return None,
        }
    }
    None
}

/// A DevTools protocol connection to one page.
struct Cdp {
    ws: tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<std::net::TcpStream>>,
    session: String,
    next: u64,
}

impl Cdp {
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if !self.session.is_empty() {
            msg["sessionId"] = json!(self.session);
        }
        self.ws
            .send(tungstenite::Message::text(msg.to_string()))
            .expect("send to chromium");
        let end = Instant::now() + Duration::from_secs(20);
        loop {
            assert!(Instant::now() < end, "chromium did not answer {method}");
            let m = self.ws.read().expect("read from chromium");
            let Ok(text) = m.to_text() else { continue };
            let Ok(v) = serde_json::from_str::<Value>(text) else {
                continue;
            };
            if v["id"] == json!(id) {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }

    fn eval(&mut self, js: &str) -> Value {
        self.call(
            "Runtime.evaluate",
            json!({"expression": js, "returnByValue": true}),
        )["result"]["value"]
            .clone()
    }

    /// A screenshot of the page, decoded: width, height, RGBA bytes.
    fn screenshot(&mut self) -> (u32, u32, Vec<u8>) {
        use base64::Engine;
        let r = self.call("Page.captureScreenshot", json!({"format": "png"}));
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().unwrap())
            .unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        buf.truncate(info.buffer_size());
        let rgba = match info.color_type {
            png::ColorType::Rgba => buf,
            png::ColorType::Rgb => buf
                .chunks(3)
                .flat_map(|p| [p[0], p[1], p[2], 255])
                .collect(),
            other => panic!("screenshot colour type {other:?}"),
        };
        (info.width, info.height, rgba)
    }

    fn click(&mut self, x: f64, y: f64) {
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            );
        }
    }
}

fn pixel(shot: &(u32, u32, Vec<u8>), x: i64, y: i64) -> [u8; 3] {
    let (w, h, data) = shot;
    assert!(
        x >= 0 && y >= 0 && (x as u32) < *w && (y as u32) < *h,
        "({x}, {y}) outside the screenshot"
    );
    let i = ((y as u32 * w + x as u32) * 4) as usize;
    [data[i], data[i + 1], data[i + 2]]
}

const PROGRAM: &str = r#"
function wait_go(win, box) =
  let name = w_get_button_input(win)
  in if eql(name, "go") then
       let a = w_shade_rectangle(((0.5, 0.0), (0.25, 0.5)), w_blue, box);
           b = print_string("pressed go" ++ [newline])
       in wait_go(win, box)
     else name;
function demo(n) =
  let win = w_make_window(((0, 0), (300, 200)), "web test", w_white, "");
      (win, box) = w_add_box(((100, 0), (200, 200)), ((0.0, 0.0), (1.0, 1.0)), "area", w_white, win);
      win = w_add_button(((10, 150), (80, 30)), "go", w_green, win);
      r = w_shade_rectangle(((0.0, 0.5), (0.5, 0.5)), w_red, box)
  in wait_go(win, box);
demo(0);
"#;

#[test]
fn headless_chromium_draws_clicks_and_closes() {
    let Some(chrome) = chromium() else {
        let _ = writeln!(
            std::io::stderr().lock(),
            "SKIPPED headless_chromium_draws_clicks_and_closes: no chromium found (install Debian's `chromium`, or set NESL_CHROMIUM)"
        );
        return;
    };
    let dir = std::env::temp_dir().join(format!("nesl-gfx-web-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let prog = dir.join("web.nesl");
    std::fs::write(&prog, PROGRAM).unwrap();

    let mut nesl = Killed(
        Command::new(env!("CARGO_BIN_EXE_nesl"))
            .env("NESL_THREADS", "2")
            .args(["run", "--backend", "cpu", "--display", "web"])
            .arg(&prog)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let out = lines_of(nesl.0.stdout.take().unwrap());
    let err = lines_of(nesl.0.stderr.take().unwrap());
    let mut seen = Vec::new();
    let line = wait_line(&err, "display: the windows are at ", 60, &mut seen)
        .unwrap_or_else(|| panic!("no address: {seen:?}"));
    let url = line.rsplit(' ').next().unwrap().to_string();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");

    let profile = dir.join("profile");
    let mut browser = Killed(
        Command::new(&chrome)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--remote-debugging-port=0",
            ])
            .arg("--remote-debugging-address=127.0.0.1")
            .arg("--window-size=800,600")
            .arg("--force-device-scale-factor=1")
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let berr = lines_of(browser.0.stderr.take().unwrap());
    let mut bseen = Vec::new();
    let line = wait_line(&berr, "DevTools listening on ", 60, &mut bseen)
        .unwrap_or_else(|| panic!("chromium: {bseen:?}"));
    let ws_url = line.rsplit(' ').next().unwrap().to_string();
    let (ws, _) = tungstenite::connect(ws_url.as_str()).expect("connect to chromium");
    let mut cdp = Cdp {
        ws,
        session: String::new(),
        next: 0,
    };
    let target = cdp.call("Target.createTarget", json!({"url": "about:blank"}))["targetId"]
        .as_str()
        .unwrap()
        .to_string();
    let session = cdp.call(
        "Target.attachToTarget",
        json!({"targetId": target, "flatten": true}),
    )["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    cdp.session = session;
    cdp.call("Page.enable", json!({}));
    cdp.call("Page.navigate", json!({"url": url}));

    // Wait for the window's canvas and the red rectangle on it.
    let end = Instant::now() + Duration::from_secs(30);
    let rect = loop {
        let r = cdp.eval("(() => { const c = document.getElementById('w1'); if (!c || c.width !== 300) return null; const r = c.getBoundingClientRect(); return [r.left, r.top]; })()");
        if let Some(a) = r.as_array() {
            break (a[0].as_f64().unwrap(), a[1].as_f64().unwrap());
        }
        assert!(Instant::now() < end, "the page never showed the window");
        std::thread::sleep(Duration::from_millis(100));
    };
    // Window pixel (x, y), origin at the lower left, on the page (the canvas has a 1px border).
    let at = |x: i64, y: i64| ((rect.0 + 1.0) as i64 + x, (rect.1 + 1.0) as i64 + (200 - y));
    let red_at = at(100 + 50, 150); // virtual (0.25, 0.75): inside the red rectangle
    let blue_at = at(100 + 125, 50); // virtual (0.625, 0.25): where "go" draws blue
    let button_at = at(10 + 40, 150 + 15);
    let shot = loop {
        let shot = cdp.screenshot();
        if pixel(&shot, red_at.0, red_at.1) == [255, 0, 0] {
            break shot;
        }
        assert!(
            Instant::now() < end,
            "no red at {red_at:?}: {:?}",
            pixel(&shot, red_at.0, red_at.1)
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(
        pixel(&shot, blue_at.0, blue_at.1),
        [255, 255, 255],
        "blue before the button was pressed"
    );
    // The green button (w_green is #00ff00).
    assert_eq!(pixel(&shot, button_at.0 - 30, button_at.1), [0, 255, 0]);

    // Press "go": the program draws a blue rectangle and prints.
    cdp.click(button_at.0 as f64, button_at.1 as f64);
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        let shot = cdp.screenshot();
        if pixel(&shot, blue_at.0, blue_at.1) == [0, 0, 255] {
            break;
        }
        assert!(
            Instant::now() < end,
            "the program did not react to the button"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut oseen = Vec::new();
    assert!(
        wait_line(&out, "pressed go", 20, &mut oseen).is_some(),
        "{oseen:?}"
    );

    // Leave the page: the program, waiting for input, stops with a clear error.
    cdp.call("Page.navigate", json!({"url": "about:blank"}));
    let mut eseen = Vec::new();
    let closed = wait_line(&err, "was closed", 30, &mut eseen);
    assert!(closed.is_some(), "no 'page was closed' error: {eseen:?}");
    let end = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(s) = nesl.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < end,
            "nesl did not end after the page closed"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status.code(), Some(1));
    drop(browser);
}
