//! Presentation of benchmark rows: the markdown table, JSON, and a log–log SVG plot of
//! median core time against size per program (like the paper's figures 10–14).

use crate::Row;
use std::fmt::Write;

fn ms(s: f64) -> String {
    format!("{:.3}", s * 1e3)
}

/// The markdown table: one line per (program, size, backend, level).
pub fn markdown(rows: &[Row]) -> String {
    let mut s = String::new();
    s.push_str("| program | size | backend | opt | median ms | min–max ms | Melem/s | CVL ops | launches | round trips | vs rayon | ok |\n");
    s.push_str("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for r in rows {
        let base = rows
            .iter()
            .find(|b| b.backend == "rust-rayon" && b.program == r.program && b.size == r.size)
            .and_then(|b| b.median());
        let med = r.median();
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.program,
            r.size,
            r.backend,
            r.opt.map(|o| o.to_string()).unwrap_or_else(|| "-".into()),
            med.map(ms).unwrap_or_else(|| "-".into()),
            r.range().map(|(a, b)| format!("{}–{}", ms(a), ms(b))).unwrap_or_else(|| "-".into()),
            med.filter(|m| *m > 0.0).map(|m| format!("{:.1}", r.elements / m / 1e6)).unwrap_or_else(|| "-".into()),
            r.cvl_ops.map(|c| c.to_string()).unwrap_or_else(|| "-".into()),
            r.launches.map(|c| c.to_string()).unwrap_or_else(|| "-".into()),
            r.round_trips.map(|c| c.to_string()).unwrap_or_else(|| "-".into()),
            match (med, base) {
                (Some(m), Some(b)) if b > 0.0 && r.backend != "rust-rayon" => format!("{:.1}×", m / b),
                _ => "-".into(),
            },
            match (&r.error, r.ok) {
                (Some(e), _) => format!("FAILED: {}", e.replace('|', "/")),
                (None, true) => "yes".into(),
                (None, false) => "CHECK FAILED".into(),
            }
        );
    }
    s
}

fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// The rows as a JSON document, with the machine description and command given.
pub fn to_json(rows: &[Row], machine: &str, command: &str, date: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{{\n  \"machine\": {},\n  \"command\": {},\n  \"date\": {},\n  \"rows\": [", json_str(machine), json_str(command), json_str(date));
    for (i, r) in rows.iter().enumerate() {
        let times: Vec<String> = r.times.iter().map(|t| format!("{t:e}")).collect();
        let _ = write!(
            s,
            "    {{\"program\": {}, \"size\": {}, \"backend\": {}, \"opt\": {}, \"times_s\": [{}], \"median_s\": {}, \"ok\": {}, \"cvl_ops\": {}, \"launches\": {}, \"round_trips\": {}, \"error\": {}}}",
            json_str(&r.program),
            r.size,
            json_str(&r.backend),
            r.opt.map(|o| o.to_string()).unwrap_or_else(|| "null".into()),
            times.join(", "),
            r.median().map(|m| format!("{m:e}")).unwrap_or_else(|| "null".into()),
            r.ok,
            r.cvl_ops.map(|c| c.to_string()).unwrap_or_else(|| "null".into()),
            r.launches.map(|c| c.to_string()).unwrap_or_else(|| "null".into()),
            r.round_trips.map(|c| c.to_string()).unwrap_or_else(|| "null".into()),
            r.error.as_deref().map(json_str).unwrap_or_else(|| "null".into()),
        );
        s.push_str(if i + 1 < rows.len() { ",\n" } else { "\n" });
    }
    s.push_str("  ]\n}\n");
    s
}

/// A log–log SVG plot of median time against size for one program, one line per
/// (backend, level) series. `None` when the program has fewer than one measured point.
pub fn svg_plot(rows: &[Row], program: &str) -> Option<String> {
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for r in rows.iter().filter(|r| r.program == program) {
        let Some(m) = r.median().filter(|m| *m > 0.0) else { continue };
        let name = match r.opt {
            Some(o) => format!("{} opt {o}", r.backend),
            None => r.backend.clone(),
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

    fn row(p: &str, n: usize, backend: &str, t: f64) -> Row {
        Row { program: p.into(), size: n, elements: n as f64, backend: backend.into(), opt: Some(2), times: vec![t, t * 2.0, t * 3.0], walls: vec![], ok: true, cvl_ops: Some(7), launches: None, round_trips: None, error: None }
    }

    #[test]
    fn table_has_a_line_per_row_and_ratio_to_baseline() {
        let mut b = row("dotp", 1000, "rust-rayon", 0.001);
        b.opt = None;
        let rows = vec![row("dotp", 1000, "cpu", 0.002), b];
        let t = markdown(&rows);
        assert_eq!(t.lines().count(), 4);
        assert!(t.contains("| dotp | 1000 | cpu | 2 | 4.000 | 2.000–6.000 |"), "{t}");
        assert!(t.contains("2.0×"), "{t}");
    }

    #[test]
    fn json_and_svg_are_well_formed_enough() {
        let rows = vec![row("q", 1000, "cpu", 0.01), row("q", 100000, "cpu", 1.0)];
        let j = to_json(&rows, "m \"x\"", "nesl bench", "2026-11-23");
        assert!(j.contains("\\\"x\\\"") && j.trim_end().ends_with('}'));
        let s = svg_plot(&rows, "q").expect("plot");
        assert!(s.starts_with("<svg") && s.contains("polyline"));
        assert!(svg_plot(&rows, "none").is_none());
    }
}
