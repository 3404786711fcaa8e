//! Front-end benchmark: generates a 5,000-line NESL program (function definitions of
//! several shapes, datatypes, global bindings and expressions, each calling earlier
//! definitions) and prints the time to lex, to parse and to type-check it.
//!
//! `cargo run --release -p nesl-front --example frontbench [LINES]`

use nesl_front::check::Session;
use nesl_front::lexer::lex;
use nesl_front::parser::parse_items;
use std::time::Instant;

/// One line of the generated program; `i` numbers the line, definitions named after it.
fn line(i: usize) -> String {
    // Index of the most recent definition of each shape before line i.
    let prev = |shape: usize| -> Option<usize> {
        let k = i / 8 * 8 + shape;
        if k < i {
            Some(k)
        } else if k >= 8 {
            Some(k - 8)
        } else {
            None
        }
    };
    match i % 8 {
        0 => format!("function f{i}(s, k) = {{x * k + {i} : x in s | x > k}};"),
        1 => format!(
            "function g{i}(a, b) = if a < b then g{i}(b, a) else let d = a - b in (d * d, a + b);"
        ),
        2 => format!("function h{i}(p) = let (u, v) = p in [u, v] ++ {{w + 1 : w in [u:v]}};"),
        3 => format!("datatype d{i}(int, [float]);"),
        4 => match prev(3) {
            Some(d) => format!("function m{i}(d{d}(a, b)) = float(a) + sum({{y * 2.0 : y in b}});"),
            None => format!("function m{i}(a, b) = float(a) + b;"),
        },
        5 => match prev(0) {
            Some(f) => format!("x{i} = sum(f{f}([1, 2, 3, {i}], 2));"),
            None => format!("x{i} = {i};"),
        },
        6 => match (prev(0), prev(2)) {
            (Some(f), Some(h)) => format!("{{f{f}(r, 1) ++ h{h}((1, #r)) : r in [[1, 2], [3, 4, {i}]]}};"),
            _ => format!("[{i}];"),
        },
        _ => format!(
            "function q{i}(s) = if #s <= 1 then s else let p = s[#s / 2]; lo = {{x in s | x < p}}; hi = {{x in s | x > p}} in q{i}(lo) ++ [p] ++ q{i}(hi);"
        ),
    }
}

fn main() {
    let lines: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5000);
    let src: String = (0..lines).map(|i| line(i) + "\n").collect();

    let t0 = Instant::now();
    let lexed = lex(&src);
    let t_lex = t0.elapsed();

    let t1 = Instant::now();
    let items = parse_items(&src);
    let t_parse = t1.elapsed();

    let t2 = Instant::now();
    let mut session = Session::new();
    let mut ok = 0;
    let mut failed = 0;
    for item in items {
        match item.and_then(|mut form| session.check_item(&mut form)) {
            Ok(_) => ok += 1,
            Err(d) => {
                if failed < 3 {
                    eprintln!("unexpected error: {d:?}");
                }
                failed += 1;
            }
        }
    }
    let t_check = t2.elapsed();

    println!(
        "program: {lines} lines, {} bytes, {} tokens, {} forms",
        src.len(),
        lexed.tokens.len(),
        ok + failed
    );
    println!("lex:    {:>9.3} ms", t_lex.as_secs_f64() * 1e3);
    println!(
        "parse:  {:>9.3} ms  (includes lexing)",
        t_parse.as_secs_f64() * 1e3
    );
    println!("check:  {:>9.3} ms", t_check.as_secs_f64() * 1e3);
    println!(
        "total:  {:>9.3} ms  (parse + check)",
        (t_parse + t_check).as_secs_f64() * 1e3
    );
    if failed > 0 {
        println!("{failed} forms failed to check");
        std::process::exit(1);
    }
}
