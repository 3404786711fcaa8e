//! Presentation of benchmark rows: the markdown table, JSON, and a log–log SVG plot of
//! median core time against size per program (like the paper's figures 10–14).

use crate::Row;
use serde::Serialize;
use std::fmt::Write;

fn ms(s: f64) -> String {
    format!("{:.3}", s * 1e3)
}

/// A rate with at least three significant digits and at least one decimal.
fn rate(x: f64) -> String {
    match x.abs() {
        a if a >= 10.0 => format!("{x:.1}"),
        a if a >= 1.0 => format!("{x:.2}"),
        _ => format!("{x:.3}"),
    }
}

fn or_dash<T>(v: Option<T>, f: impl FnOnce(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

/// The speedup of `r` over the same configuration on 1 thread (median over median), for a
/// row on more than one thread.
pub fn speedup(rows: &[Row], r: &Row) -> Option<f64> {
    if r.threads <= 1 {
        return None;
    }
    let one = rows
        .iter()
        .find(|b| b.threads == 1 && b.program == r.program && b.size == r.size && b.backend == r.backend && b.opt == r.opt)?
        .median()?;
    let m = r.median().filter(|m| *m > 0.0)?;
    Some(one / m)
}

/// The time of `r` over its hand-written peer's at the same size and thread count (ours /
/// peer: 3.0 means three times slower), for a row that is not a peer's.
pub fn peer_ratio(rows: &[Row], r: &Row) -> Option<f64> {
    if r.is_peer() {
        return None;
    }
    let p = rows
        .iter()
        .find(|b| b.backend == crate::PEER_BACKEND && b.program == r.program && b.size == r.size && b.threads == r.threads)?
        .median()
        .filter(|m| *m > 0.0)?;
    Some(r.median()? / p)
}

fn melem(r: &Row) -> Option<f64> {
    r.median().filter(|m| *m > 0.0).map(|m| r.elements / m / 1e6)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// The markdown table: one line per (program, size, backend, level, threads).
pub fn markdown(rows: &[Row]) -> String {
    let mut s = String::new();
    s.push_str("| program | size | backend | opt | threads | median ms | min–max ms | Melem/s | peak MiB | speedup vs 1 thread | ours/peer | CVL ops | VCODE instrs | launches | round trips | ok |\n");
    s.push_str("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for r in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.program,
            r.size,
            r.backend,
            or_dash(r.opt, |o| o.to_string()),
            r.threads,
            or_dash(r.median(), ms),
            or_dash(r.range(), |(a, b)| format!("{}–{}", ms(a), ms(b))),
            or_dash(melem(r), rate),
            or_dash(r.peak_rss_bytes, |b| format!("{:.1}", mib(b))),
            or_dash(speedup(rows, r), |x| format!("{x:.2}×")),
            or_dash(peer_ratio(rows, r), |x| format!("{x:.2}×")),
            or_dash(r.cvl_ops, |c| c.to_string()),
            or_dash(r.instructions, |c| c.to_string()),
            or_dash(r.launches, |c| c.to_string()),
            or_dash(r.round_trips, |c| c.to_string()),
            match (&r.error, r.ok) {
                (Some(e), _) => format!("FAILED: {}", e.replace('|', "/")),
                (None, true) => "yes".into(),
                (None, false) => "CHECK FAILED".into(),
            }
        );
    }
    s
}

/// One row of `results.json`: the row's measurements and the table's derived columns.
#[derive(Serialize)]
struct JsonRow<'a> {
    program: &'a str,
    size: usize,
    elements: f64,
    backend: &'a str,
    opt: Option<u8>,
    threads: usize,
    times_s: &'a [f64],
    walls_s: &'a [f64],
    median_s: Option<f64>,
    min_s: Option<f64>,
    max_s: Option<f64>,
    melem_per_s: Option<f64>,
    peak_rss_bytes: Option<u64>,
    peak_mib: Option<f64>,
    speedup_vs_1_thread: Option<f64>,
    ratio_to_peer: Option<f64>,
    cvl_ops: Option<u64>,
    instructions: Option<u64>,
    launches: Option<u64>,
    round_trips: Option<u64>,
    ok: bool,
    error: Option<&'a str>,
}

/// The whole of `results.json`.
#[derive(Serialize)]
struct JsonDoc<'a> {
    machine: &'a str,
    command: &'a str,
    date: &'a str,
    rows: Vec<JsonRow<'a>>,
}

/// The rows as a JSON document, with the machine description and command given.
pub fn to_json(rows: &[Row], machine: &str, command: &str, date: &str) -> String {
    let doc = JsonDoc {
        machine,
        command,
        date,
        rows: rows
            .iter()
            .map(|r| JsonRow {
                program: &r.program,
                size: r.size,
                elements: r.elements,
                backend: &r.backend,
                opt: r.opt,
                threads: r.threads,
                times_s: &r.times,
                walls_s: &r.walls,
                median_s: r.median(),
                min_s: r.range().map(|x| x.0),
                max_s: r.range().map(|x| x.1),
                melem_per_s: melem(r),
                peak_rss_bytes: r.peak_rss_bytes,
                peak_mib: r.peak_rss_bytes.map(mib),
                speedup_vs_1_thread: speedup(rows, r),
                ratio_to_peer: peer_ratio(rows, r),
                cvl_ops: r.cvl_ops,
                instructions: r.instructions,
                launches: r.launches,
                round_trips: r.round_trips,
                ok: r.ok && r.error.is_none(),
                error: r.error.as_deref(),
            })
            .collect(),
    };
    serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}")) + "\n"
}

/// A log–log SVG plot of median time against size for one program, one line per
/// (backend, level, threads) series. `None` when the program has fewer than one measured point.
pub fn svg_plot(rows: &[Row], program: &str) -> Option<String> {
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for r in rows.iter().filter(|r| r.program == program) {
        let Some(m) = r.median().filter(|m| *m > 0.0) else { continue };
        let thr = if r.threads == 1 { "1 thread".to_string() } else { format!("{} threads", r.threads) };
        let name = match r.opt {
            Some(o) => format!("{} opt {o}, {thr}", r.backend),
            None => format!("{}, {thr}", r.backend),
        };
        let pt = ((r.size as f64).log10(), (m * 1e3).log10());
        match series.iter_mut().find(|s| s.0 == name) {
            Some(s) => s.1.push(pt),
            None => series.push((name, vec![pt])),
        }
    }
    let pts: Vec<(f64, f64)> = series.iter().flat_map(|s| s.1.iter().copied()).collect();
    if pts.is_empty() {
        return None;
    }
    let (x0, x1) = pts.iter().fold((f64::MAX, f64::MIN), |a, p| (a.0.min(p.0.floor()), a.1.max(p.0.ceil())));
    let (y0, y1) = pts.iter().fold((f64::MAX, f64::MIN), |a, p| (a.0.min(p.1.floor()), a.1.max(p.1.ceil())));
    let (x1, y1) = (if x1 > x0 { x1 } else { x0 + 1.0 }, if y1 > y0 { y1 } else { y0 + 1.0 });
    let (w, h, l, b) = (640.0, 420.0, 70.0, 50.0);
    let px = |x: f64| l + (x - x0) / (x1 - x0) * (w - l - 170.0);
    let py = |y: f64| h - b - (y - y0) / (y1 - y0) * (h - b - 30.0);
    let mut s = String::new();
    let _ = writeln!(s, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">");
    let _ = writeln!(s, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/><text x=\"{l}\" y=\"18\" font-size=\"14\">{program}: median core time (ms) vs size, log–log</text>");
    let mut x = x0;
    while x <= x1 + 1e-9 {
        let _ = writeln!(s, "<line x1=\"{0}\" y1=\"30\" x2=\"{0}\" y2=\"{1}\" stroke=\"#ddd\"/><text x=\"{0}\" y=\"{2}\" text-anchor=\"middle\">1e{3}</text>", px(x), h - b, h - b + 16.0, x as i64);
        x += 1.0;
    }
    let mut y = y0;
    while y <= y1 + 1e-9 {
        let _ = writeln!(s, "<line x1=\"{l}\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\" stroke=\"#ddd\"/><text x=\"{2}\" y=\"{3}\" text-anchor=\"end\">1e{4}</text>", py(y), w - 170.0, l - 6.0, py(y) + 4.0, y as i64);
        y += 1.0;
    }
    let colours = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"];
    for (i, (name, pts)) in series.iter().enumerate() {
        let c = colours[i % colours.len()];
        let path: Vec<String> = pts.iter().map(|p| format!("{:.1},{:.1}", px(p.0), py(p.1))).collect();
        let _ = writeln!(s, "<polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"2\" points=\"{}\"/>", path.join(" "));
        for p in pts {
            let _ = writeln!(s, "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{c}\"/>", px(p.0), py(p.1));
        }
        let ly = 40.0 + 16.0 * i as f64;
        let _ = writeln!(s, "<line x1=\"{0}\" y1=\"{ly}\" x2=\"{1}\" y2=\"{ly}\" stroke=\"{c}\" stroke-width=\"2\"/><text x=\"{2}\" y=\"{3}\">{name}</text>", w - 160.0, w - 140.0, w - 134.0, ly + 4.0);
    }
    s.push_str("</svg>\n");
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(p: &str, n: usize, backend: &str, threads: usize, t: f64) -> Row {
        Row {
            program: p.into(),
            size: n,
            elements: n as f64,
            backend: backend.into(),
            opt: if backend == crate::PEER_BACKEND { None } else { Some(2) },
            threads,
            times: vec![t, t * 2.0, t * 3.0],
            walls: vec![],
            peak_rss_bytes: Some(3 * 1024 * 1024 / 2),
            ok: true,
            cvl_ops: Some(7),
            instructions: Some(40),
            launches: None,
            round_trips: None,
            error: None,
        }
    }

    fn rows() -> Vec<Row> {
        vec![
            row("dotp", 1000, "cpu", 1, 0.004),
            row("dotp", 1000, "cpu", 4, 0.001),
            row("dotp", 1000, "rust-rayon", 1, 0.002),
            row("dotp", 1000, "rust-rayon", 4, 0.0005),
        ]
    }

    #[test]
    fn table_has_the_thread_memory_speedup_and_peer_columns() {
        let rows = rows();
        let t = markdown(&rows);
        assert_eq!(t.lines().count(), 6, "{t}");
        let header = t.lines().next().unwrap();
        for col in ["threads", "median ms", "min–max ms", "Melem/s", "peak MiB", "speedup vs 1 thread", "ours/peer", "CVL ops", "VCODE instrs", "launches", "round trips", "ok"] {
            assert!(header.contains(&format!("| {col} |")), "no column {col}: {header}");
        }
        let cols = |l: &str| header.split('|').count() == l.split('|').count();
        assert!(t.lines().all(cols), "{t}");
        // 1 thread: 8 ms median, no speedup, twice the peer's time
        assert!(t.contains("| dotp | 1000 | cpu | 2 | 1 | 8.000 | 4.000–12.000 | 0.125 | 1.5 | - | 2.00× | 7 | 40 | - | - | yes |"), "{t}");
        // 4 threads: 4× faster than on 1, also twice the peer's time at 4 threads
        assert!(t.contains("| dotp | 1000 | cpu | 2 | 4 | 2.000 | 1.000–3.000 | 0.500 | 1.5 | 4.00× | 2.00× |"), "{t}");
        // the peer has a speedup but no ratio to itself
        assert!(t.contains("| dotp | 1000 | rust-rayon | - | 4 | 1.000 | 0.500–1.500 | 1.00 | 1.5 | 4.00× | - |"), "{t}");
    }

    #[test]
    fn failures_show_in_the_ok_column() {
        let mut a = row("q", 10, "cpu", 1, 0.1);
        a.ok = false;
        let mut b = row("q", 10, "cpu", 2, 0.1);
        b.times.clear();
        b.ok = false;
        b.error = Some("timed out | badly".into());
        let t = markdown(&[a, b]);
        assert!(t.contains("| CHECK FAILED |"), "{t}");
        assert!(t.contains("| 2 | - | - | - | 1.5 | - | - | 7 | 40 | - | - | FAILED: timed out / badly |"), "{t}");
    }

    #[test]
    fn json_has_the_same_fields_as_the_table() {
        let rows = rows();
        let j = to_json(&rows, "m \"x\"", "nesl bench", "2026-11-23");
        let v: serde_json::Value = serde_json::from_str(&j).expect("valid JSON");
        assert_eq!(v["machine"], "m \"x\"");
        let r = &v["rows"].as_array().unwrap()[1];
        assert_eq!(r["threads"], 4);
        assert_eq!(r["median_s"], 0.002);
        assert_eq!(r["speedup_vs_1_thread"], 4.0);
        assert_eq!(r["ratio_to_peer"], 2.0);
        assert_eq!(r["peak_rss_bytes"], 3 * 1024 * 1024 / 2);
        assert_eq!(r["peak_mib"], 1.5);
        assert_eq!(r["ok"], true);
        assert_eq!(r["instructions"], 40);
        assert!(r["launches"].is_null() && r["error"].is_null());
        assert_eq!(r["times_s"].as_array().unwrap().len(), 3);
        assert!(v["rows"][2]["ratio_to_peer"].is_null() && v["rows"][2]["opt"].is_null());
        assert!(v["rows"][0]["speedup_vs_1_thread"].is_null());
    }

    #[test]
    fn svg_has_a_series_per_thread_count() {
        let rows = vec![row("q", 1000, "cpu", 1, 0.01), row("q", 100000, "cpu", 1, 1.0), row("q", 1000, "cpu", 2, 0.01)];
        let s = svg_plot(&rows, "q").expect("plot");
        assert!(s.starts_with("<svg") && s.contains("polyline"));
        assert!(s.contains("cpu opt 2, 1 thread") && s.contains("cpu opt 2, 2 threads"), "{s}");
        assert!(svg_plot(&rows, "none").is_none());
    }
}
