//! Development driver: `cargo run -p fcode-opt --example fopt -- FILE [LEVEL] [DUMP_PASS]`
//! optimises a VCODE file, prints the requested pass dump (or the result) and the pass
//! timings on stderr.

use fcode_opt::{optimize_report, OptOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(file) = args.get(1) else {
        eprintln!("usage: fopt FILE [LEVEL] [DUMP_PASS]");
        std::process::exit(2);
    };
    let level: u8 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(2);
    let dump = args.get(3).cloned();
    let src = match std::fs::read_to_string(file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{file}: {e}");
            std::process::exit(1);
        }
    };
    let p = match vcode::parse(&src) {
        Ok(p) => p,
        Err(e) => {
            for e in e {
                eprintln!("{file}:{e}");
            }
            std::process::exit(1);
        }
    };
    let opts = OptOptions { verify: true, dump_after: dump.clone(), timings: true };
    match optimize_report(&p, level, &opts) {
        Ok((out, rep)) => {
            match &rep.dump {
                Some((_, text)) => print!("{text}"),
                None => print!("{out}"),
            }
            eprint!("{}", rep.timings_text());
        }
        Err(e) => {
            eprintln!("{file}: {e}");
            std::process::exit(1);
        }
    }
}
