//! The graphics library on the SVG display (issue 18): NESL drawing programs run through
//! the built binary with `--display svg:DIR`, and the SVG files they leave are parsed:
//! the count and coordinates of points, segments, polygons and text; input from
//! `--events FILE` (a button press, a click in a box, a key) and the error when the
//! events run out; the convex hull example; the types of the library.

mod common;
use common::Scratch;
use std::path::Path;
use std::process::{Command, Output};

/// A fresh scratch folder for one test.
fn scratch(name: &str) -> Scratch {
    Scratch::dir("gfx", name)
}

/// Runs `src` with the svg display into `dir/out`, with `events` when given.
fn run(dir: &Path, src: &str, events: Option<&str>) -> Output {
    let file = dir.join("prog.nesl");
    std::fs::write(&file, src).unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_nesl"));
    c.env("NESL_THREADS", "2")
        .arg("run")
        .arg("--backend")
        .arg("cpu");
    c.arg("--display")
        .arg(format!("svg:{}", dir.join("out").display()));
    if let Some(ev) = events {
        let path = dir.join("events.txt");
        std::fs::write(&path, ev).unwrap();
        c.arg("--events").arg(path);
    }
    c.arg(&file).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// One element of an SVG file: its tag, class and attributes.
#[derive(Debug)]
struct El {
    tag: String,
    class: String,
    attrs: Vec<(String, String)>,
    body: String,
}

impl El {
    fn num(&self, name: &str) -> i64 {
        self.get(name)
            .parse()
            .unwrap_or_else(|_| panic!("{name} of {self:?}"))
    }
    fn get(&self, name: &str) -> &str {
        self.attrs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    }
    fn points(&self) -> Vec<(i64, i64)> {
        self.get("points")
            .split_whitespace()
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect()
    }
}

/// The elements of an SVG file written by the display (one a line).
fn parse_svg(path: &Path) -> (i64, i64, Vec<El>) {
    let s = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut size = (0, 0);
    let mut els = Vec::new();
    for line in s.lines() {
        let Some(rest) = line.strip_prefix('<') else {
            continue;
        };
        let tag: String = rest.chars().take_while(|c| c.is_alphanumeric()).collect();
        let mut attrs = Vec::new();
        let mut r = &rest[tag.len()..];
        while let Some(eq) = r.find("=\"") {
            let name = r[..eq].trim().to_string();
            let after = &r[eq + 2..];
            let end = after.find('"').unwrap();
            attrs.push((name, after[..end].to_string()));
            r = &after[end + 1..];
        }
        let body = match (line.find('>'), line.rfind("</")) {
            (Some(a), Some(b)) if b > a => line[a + 1..b].to_string(),
            _ => String::new(),
        };
        let el = El {
            class: String::new(),
            tag,
            attrs,
            body,
        };
        if el.tag == "svg" {
            size = (el.num("width"), el.num("height"));
            continue;
        }
        let class = el.get("class").to_string();
        els.push(El { class, ..el });
    }
    (size.0, size.1, els)
}

fn of<'a>(els: &'a [El], class: &str) -> Vec<&'a El> {
    els.iter().filter(|e| e.class == class).collect()
}

/// Points, segments, a polyline, a polygon, a rectangle and text, each where the program
/// put it: virtual coordinates (0..2 by 0..1 on a 200 by 100 box) scaled to pixels with
/// the y axis flipped (SVG's origin is the top left corner).
#[test]
fn shapes_land_where_the_program_put_them() {
    let dir = scratch("shapes");
    let src = r#"
function demo(n) =
let (win, box) = w_make_window_box(((0, 0), (200, 100)), ((0.0, 0.0), (2.0, 1.0)), "shapes", w_black, "");
    a = w_draw_points([(0.5, 0.5), (1.0, 0.25), (1.5, 0.75)], w_red, box);
    b = w_draw_segments([((0.0, 0.0), (2.0, 1.0)), ((0.0, 1.0), (1.0, 0.0))], 2, w_blue, box);
    c = w_draw_lines([(0.1, 0.1), (0.2, 0.3), (0.4, 0.1)], 1, w_green, box);
    d = w_shade_polygon([(1.0, 0.0), (2.0, 0.0), (1.5, 0.5)], w_yellow, box);
    e = w_draw_rectangle(((0.2, 0.2), (0.4, 0.3)), 1, w_white, box);
    s = w_draw_string((0.1, 0.9), "hello <nesl>", w_cyan, box);
    g = w_draw_point((5.0, 5.0), w_red, box)
in (g, w_kill_window(win));
demo(0);
"#;
    let out = run(&dir, src, None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("it = (F, T) : bool, bool"),
        "{}",
        text(&out.stdout)
    );
    let (w, h, els) = parse_svg(&dir.join("out/shapes.svg"));
    assert_eq!((w, h), (200, 100));
    // Points: three inside, the one outside the box is not drawn.
    let pts: Vec<(i64, i64, &str)> = of(&els, "point")
        .iter()
        .map(|e| (e.num("x"), e.num("y"), e.get("fill")))
        .collect();
    assert_eq!(
        pts,
        vec![
            (50, 50, "#ff0000"),
            (100, 75, "#ff0000"),
            (150, 25, "#ff0000")
        ]
    );
    let segs: Vec<(i64, i64, i64, i64)> = of(&els, "segment")
        .iter()
        .map(|e| (e.num("x1"), e.num("y1"), e.num("x2"), e.num("y2")))
        .collect();
    assert_eq!(segs, vec![(0, 100, 200, 0), (0, 0, 100, 100)]);
    assert!(of(&els, "segment")
        .iter()
        .all(|e| e.get("stroke") == "#0000ff" && e.get("stroke-width") == "2"));
    let lines = of(&els, "lines");
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].points(), vec![(10, 90), (20, 70), (40, 90)]);
    // The window's background and the box are polygons too; the yellow one is the program's.
    let polys = of(&els, "polygon");
    let yellow: Vec<&&El> = polys
        .iter()
        .filter(|e| e.get("fill") == "#ffff00")
        .collect();
    assert_eq!(yellow.len(), 1);
    let mut corners = yellow[0].points();
    corners.dedup();
    assert_eq!(corners, vec![(100, 100), (200, 100), (150, 50), (100, 100)]);
    let rects = of(&els, "rectangle");
    assert_eq!(rects.len(), 1);
    assert_eq!(
        (
            rects[0].num("x"),
            rects[0].num("y"),
            rects[0].num("width"),
            rects[0].num("height")
        ),
        (20, 50, 40, 30)
    );
    let texts = of(&els, "string");
    assert_eq!(texts.len(), 1);
    assert_eq!((texts[0].num("x"), texts[0].num("y")), (10, 10));
    assert_eq!(texts[0].body, "hello &lt;nesl&gt;");
}

/// The old plot interface (make_window, draw_points, draw_segments, draw_strings) scales
/// a bounding box onto the window.
#[test]
fn old_plot_interface_draws() {
    let dir = scratch("old");
    let src = r#"
function plot(pts) =
let w = make_window(((0, 0), (100, 100)), bounding_box(pts), "old plot", "");
    a = draw_points(pts, w);
    b = draw_segments([(pts[0], pts[1])], 1, w);
    c = draw_strings([pts[2]], ["c"], w)
in close_window(w);
plot([(0, 0), (10, 10), (5, 10)]);
"#;
    let out = run(&dir, src, None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (_, _, els) = parse_svg(&dir.join("out/old plot.svg"));
    let pts: Vec<(i64, i64)> = of(&els, "point")
        .iter()
        .map(|e| (e.num("x"), e.num("y")))
        .collect();
    assert_eq!(pts, vec![(0, 100), (100, 0), (50, 0)]);
    assert_eq!(of(&els, "segment").len(), 1);
    assert_eq!(of(&els, "string")[0].body, "c");
}

/// The window of CMU's quickhull demo: buttons and a box; events from the file: a button
/// press, a click in the box (its virtual coordinates come back), a key; then the events
/// run out and `w_get_input` stops the program with a message saying so.
#[test]
fn events_drive_input_until_they_run_out() {
    let dir = scratch("events");
    let src = r#"
function setup(n) =
let win = w_make_window(((0, 0), (300, 200)), "input", w_white, "");
    (win, box) = w_add_box(((100, 0), (200, 200)), ((0.0, 0.0), (1.0, 1.0)), "mesh", w_black, win);
    win = w_add_button(((10, 150), (80, 30)), "step", w_blue, win);
    win = w_add_button(((10, 100), (80, 30)), "quit", w_blue, win)
in win;
function inputs(win, k) =
if k == 0 then [] ([char], [char], int, int, char)
else let (kind, name, (x, y), flags, ch) = w_get_input(win)
     in [(kind, name, round(x * 100.0), round(y * 100.0), ch)] ++ inputs(win, k - 1);
function go(k) = let win = setup(0) in inputs(win, k);
go(4);
go(5);
"#;
    let out = run(
        &dir,
        src,
        Some("# presses\nbutton step\nclick 150 50\n\nkey q\nbutton quit\n"),
    );
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains(r#"it = [("button", "step", 0, 0, "#),
        "{stdout}"
    );
    assert!(stdout.contains(r#"("click", "mesh", 25, 25"#), "{stdout}");
    // A key goes to the box under the pointer (the middle of the window).
    assert!(
        stdout.contains(r#"("key", "mesh", 25, 50, `q)"#),
        "{stdout}"
    );
    assert!(stdout.contains(r#"("button", "quit""#), "{stdout}");
    // The second run asks for a fifth event: none left.
    assert!(stderr.contains("no more input events"), "{stderr}");
    // Each window was written (the second under a name of its own).
    assert!(dir.join("out/input.svg").exists());
    assert!(dir.join("out/input-2.svg").exists());
}

/// Input with no events file, a bad events file and a button the window lacks: clear
/// errors, never a hang.
#[test]
fn input_errors_are_clear() {
    let dir = scratch("noevents");
    let src = "function ff(n) = let w = w_make_window(((0, 0), (50, 50)), \"w\", w_white, \"\") in w_get_button_input(w);\nff(1);\n";
    let out = run(&dir, src, None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("--events FILE, and none was given"),
        "{}",
        text(&out.stderr)
    );
    let out = run(&dir, src, Some("button go\n"));
    assert!(
        text(&out.stderr).contains("window `w` has no button `go` (its buttons: none)"),
        "{}",
        text(&out.stderr)
    );
    let out = run(&dir, src, Some("button go\njump 3\n"));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("events.txt:2: unknown event `jump 3`"),
        "{}",
        text(&out.stderr)
    );
}

/// The example: the hull found step by step; the last drawing has the hull edges in red,
/// as many as the program returns, joined into one closed polygon around every point.
#[test]
fn convex_hull_example_draws_the_hull() {
    let dir = scratch("hull");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(root.join("examples/convex_hull_steps.nesl")).unwrap();
    let events = std::fs::read_to_string(root.join("examples/convex_hull_steps.events")).unwrap();
    let out = run(&dir, &src, Some(&events));
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", text(&out.stderr));
    let edges: usize = stdout
        .lines()
        .last()
        .unwrap()
        .trim_start_matches("it = ")
        .trim_end_matches(" : int")
        .parse()
        .unwrap();
    assert!(edges >= 3, "{stdout}");
    let (_, _, els) = parse_svg(&dir.join("out/convex hull.svg"));
    // The box is cleared before each step: the last step's drawing follows the last clear.
    let segs: Vec<&El> = of(&els, "segment");
    let red: Vec<&&El> = segs
        .iter()
        .filter(|e| e.get("stroke") == "#ff0000")
        .collect();
    assert_eq!(red.len(), edges);
    // Each end is the start of exactly one other edge: a closed cycle.
    let ends: Vec<((i64, i64), (i64, i64))> = red
        .iter()
        .map(|e| ((e.num("x1"), e.num("y1")), (e.num("x2"), e.num("y2"))))
        .collect();
    for (_, b) in &ends {
        assert_eq!(ends.iter().filter(|(a, _)| a == b).count(), 1, "{ends:?}");
    }
    // Every point drawn in the last step is inside (or on) the hull: on the right of
    // every edge in SVG coordinates (y down reverses the turn).
    let big: Vec<(i64, i64)> = of(&els, "rectangle")
        .iter()
        .map(|e| (e.num("x") + 1, e.num("y") + 1))
        .collect();
    assert!(big.len() > 100, "{}", big.len());
    for (px, py) in &big {
        for ((x1, y1), (x2, y2)) in &ends {
            let cross = (x2 - x1) * (py - y1) - (y2 - y1) * (px - x1);
            assert!(
                cross >= -1500,
                "point ({px}, {py}) outside edge ({x1}, {y1})-({x2}, {y2})"
            );
        }
    }
    let last = &of(&els, "string").last().unwrap().body;
    assert!(
        last.starts_with("step ") && last.ends_with(&format!(": {edges} hull edges")),
        "{last}"
    );
}

/// The library's functions have CMU's types.
#[test]
fn library_types_are_cmus() {
    let dir = scratch("types");
    let out = run(
        &dir,
        "w_make_window;\nw_add_box;\nw_get_input;\nw_draw_points;\nw_red + w_blue;\nw_get_color(1.0, 1.0, 0.0);\n",
        None,
    );
    let stdout = text(&out.stdout);
    for want in [
        "it = fn : (((int, int), int, int), [char], int, [char]) -> w_window",
        "it = fn : (((int, int), int, int), ((float, float), float, float), [char], int, w_window) -> (w_window, w_box)",
        "it = fn : w_window -> ([char], [char], (float, float), (int, int), char)",
        "it = fn : ([(float, float)], int, w_box) -> [bool]",
        "it = 15 : int",
        "it = 15 : int",
    ] {
        assert!(stdout.contains(want), "{want}\n{stdout}");
    }
}
