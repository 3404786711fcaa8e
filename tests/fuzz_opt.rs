//! Fuzzing the optimiser (issue 16) with random but valid VCODE: a generator that tracks
//! the type and length of every stack slot writes programs of constants, segment
//! descriptors (counts up to 100,000), `DIST`, element-wise arithmetic, comparisons,
//! `SELECT`, scans, reductions, `LENGTH`, stack shuffles, calls and `IF`s nested up to
//! 300 deep. Every program verifies and goes through the optimiser at levels 1 and 2:
//! no panic, the result verifies, and where the unoptimised program runs to the end the
//! optimised one prints the same stack. Programs with a huge shuffle count (`COPY
//! 4294967295 0`) must be refused by the verifier, not crash it.
//!
//! Fixed seed, a fixed number of cases and a time budget of a few seconds (whichever
//! ends first), on a thread with the stack the `nesl` binary runs on.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

/// A stack slot: its type and its length (a segment descriptor: one segment of `n`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Slot {
    Int(usize),
    Float(usize),
    Bool(usize),
    Seg(usize),
}

impl Slot {
    fn len(self) -> usize {
        match self {
            Slot::Int(n) | Slot::Float(n) | Slot::Bool(n) | Slot::Seg(n) => n,
        }
    }

    fn ty(self) -> &'static str {
        match self {
            Slot::Int(_) => "INT",
            Slot::Float(_) => "FLOAT",
            Slot::Bool(_) => "BOOL",
            Slot::Seg(_) => "SEGDES",
        }
    }

    fn with_len(self, n: usize) -> Slot {
        match self {
            Slot::Int(_) => Slot::Int(n),
            Slot::Float(_) => Slot::Float(n),
            Slot::Bool(_) => Slot::Bool(n),
            Slot::Seg(_) => Slot::Seg(n),
        }
    }
}

const COUNTS: &[usize] = &[0, 1, 2, 3, 7, 64, 1000, 100_000];
const INTS: &[&str] = &[
    "0",
    "1",
    "-1",
    "7",
    "-13",
    "1000",
    "2147483647",
    "-2147483648",
];
const FLOATS: &[&str] = &["0.0", "1.5", "-2.25", "0.125", "1000.0"];

struct Gen {
    rng: Rng,
    out: Vec<String>,
    stack: Vec<Slot>,
    /// How many more `IF`s may open inside the current one.
    depth_left: usize,
    /// Statements left to write in the whole program.
    budget: usize,
    /// Whether the helper function `H` (INT scalar to INT scalar) exists.
    helper: bool,
}

impl Gen {
    fn emit(&mut self, s: impl Into<String>) {
        self.out.push(s.into());
    }

    /// Depth (0 = top) of a random slot at or above `lo` (an index) that satisfies `p`.
    fn find(&mut self, lo: usize, p: impl Fn(Slot) -> bool) -> Option<usize> {
        let c: Vec<usize> = (lo..self.stack.len())
            .filter(|&i| p(self.stack[i]))
            .collect();
        if c.is_empty() {
            return None;
        }
        let i = c[self.rng.below(c.len())];
        Some(self.stack.len() - 1 - i)
    }

    /// `COPY 1 d`.
    fn copy(&mut self, d: usize) {
        let s = self.stack[self.stack.len() - 1 - d];
        self.emit(format!("COPY 1 {d}"));
        self.stack.push(s);
    }

    fn push_const(&mut self) {
        match self.rng.below(3) {
            0 => {
                let v = INTS[self.rng.below(INTS.len())];
                self.emit(format!("CONST INT {v}"));
                self.stack.push(Slot::Int(1));
            }
            1 => {
                let v = FLOATS[self.rng.below(FLOATS.len())];
                self.emit(format!("CONST FLOAT {v}"));
                self.stack.push(Slot::Float(1));
            }
            _ => {
                let v = if self.rng.below(2) == 0 { "T" } else { "F" };
                self.emit(format!("CONST BOOL {v}"));
                self.stack.push(Slot::Bool(1));
            }
        }
    }

    /// One statement that reads anything on the stack and leaves the slots below `base`
    /// as they are.
    fn stmt(&mut self, base: usize) {
        self.budget = self.budget.saturating_sub(1);
        match self.rng.below(12) {
            0 | 1 => self.push_const(),
            2 => {
                let n = COUNTS[self.rng.below(COUNTS.len())];
                self.emit(format!("CONST INT {n}"));
                self.emit("MAKE_SEGDES");
                self.stack.push(Slot::Seg(n));
            }
            3 => {
                // DIST of a scalar over a segment descriptor.
                let Some(dx) = self.find(0, |s| !matches!(s, Slot::Seg(_)) && s.len() == 1) else {
                    return self.push_const();
                };
                let Some(ds) = self.find(0, |s| matches!(s, Slot::Seg(_))) else {
                    return self.push_const();
                };
                let x = self.stack[self.stack.len() - 1 - dx];
                let n = self.stack[self.stack.len() - 1 - ds].len();
                self.copy(dx);
                self.copy(ds + 1);
                self.emit(format!("DIST {}", x.ty()));
                self.stack.truncate(self.stack.len() - 2);
                self.stack.push(x.with_len(n));
            }
            4 | 5 => {
                // An element-wise binary operation on two slots of one type and length.
                let Some(da) = self.find(0, |s| !matches!(s, Slot::Seg(_))) else {
                    return self.push_const();
                };
                let a = self.stack[self.stack.len() - 1 - da];
                let Some(db) = self.find(0, |s| s == a) else {
                    return;
                };
                self.copy(da);
                self.copy(db + 1);
                self.stack.truncate(self.stack.len() - 2);
                let (op, r) = match a {
                    Slot::Bool(_) => (["AND", "OR", "XOR"][self.rng.below(3)], a),
                    _ => match self.rng.below(7) {
                        0 => ("+", a),
                        1 => ("-", a),
                        2 => ("*", a),
                        3 => ("-", a),
                        4 => ("/", a),
                        5 => ("<", Slot::Bool(a.len())),
                        _ => (
                            ["=", "<=", ">", "!="][self.rng.below(4)],
                            Slot::Bool(a.len()),
                        ),
                    },
                };
                self.emit(format!("{op} {}", a.ty()));
                self.stack.push(r);
            }
            6 => {
                // SELECT flags a b.
                let Some(da) = self.find(0, |s| !matches!(s, Slot::Seg(_))) else {
                    return self.push_const();
                };
                let a = self.stack[self.stack.len() - 1 - da];
                let Some(df) = self.find(0, |s| s == Slot::Bool(a.len())) else {
                    return;
                };
                self.copy(df);
                self.copy(da + 1);
                self.copy(da + 2);
                self.stack.truncate(self.stack.len() - 3);
                self.emit(format!("SELECT {}", a.ty()));
                self.stack.push(a);
            }
            7 => {
                // A scan or a reduction over a one-segment descriptor of the same length.
                let Some(dv) = self.find(0, |s| matches!(s, Slot::Int(_) | Slot::Float(_))) else {
                    return self.push_const();
                };
                let v = self.stack[self.stack.len() - 1 - dv];
                let Some(ds) = self.find(0, |s| s == Slot::Seg(v.len())) else {
                    // LENGTH instead.
                    self.copy(dv);
                    self.stack.pop();
                    self.emit(format!("LENGTH {}", v.ty()));
                    self.stack.push(Slot::Int(1));
                    return;
                };
                self.copy(dv);
                self.copy(ds + 1);
                self.stack.truncate(self.stack.len() - 2);
                let op = ["+_SCAN", "MAX_SCAN", "+_REDUCE", "MIN_REDUCE", "MAX_REDUCE"]
                    [self.rng.below(5)];
                self.emit(format!("{op} {}", v.ty()));
                self.stack.push(if op.ends_with("SCAN") {
                    v
                } else {
                    v.with_len(1)
                });
            }
            8 => {
                // Drop or move a slot of this block.
                if self.stack.len() > base + 1 {
                    let d = self.rng.below(self.stack.len() - base);
                    let i = self.stack.len() - 1 - d;
                    let s = self.stack.remove(i);
                    if self.rng.below(2) == 0 {
                        self.emit(format!("POP 1 {d}"));
                    } else {
                        self.emit(format!("CPOP 1 {d}"));
                        self.stack.push(s);
                    }
                } else {
                    self.push_const();
                }
            }
            9 if self.helper => {
                let Some(d) = self.find(0, |s| s == Slot::Int(1)) else {
                    return self.push_const();
                };
                self.copy(d);
                self.emit("CALL H");
                // H maps an INT scalar to an INT scalar.
            }
            _ => {
                if self.depth_left == 0 || self.budget == 0 {
                    return self.push_const();
                }
                let Some(d) = self.find(0, |s| s == Slot::Bool(1)) else {
                    self.emit("CONST BOOL T");
                    self.stack.push(Slot::Bool(1));
                    return;
                };
                self.copy(d);
                self.stack.pop();
                self.emit("IF");
                self.depth_left -= 1;
                let start = self.stack.clone();
                self.branch();
                self.emit("ELSE");
                self.stack = start;
                self.branch();
                self.emit("ENDIF");
                self.depth_left += 1;
            }
        }
    }

    /// A block that leaves the stack as it found it plus one INT scalar.
    fn branch(&mut self) {
        let base = self.stack.len();
        let n = if self.depth_left > 20 {
            1 + self.rng.below(2)
        } else {
            self.rng.below(6)
        };
        for _ in 0..n {
            if self.budget == 0 {
                break;
            }
            self.stmt(base);
        }
        self.finish(base);
    }

    /// Leaves exactly one INT scalar above `base`.
    fn finish(&mut self, base: usize) {
        if self.stack.len() == base || *self.stack.last().unwrap() != Slot::Int(1) {
            let v = INTS[self.rng.below(INTS.len())];
            self.emit(format!("CONST INT {v}"));
            self.stack.push(Slot::Int(1));
        }
        let extra = self.stack.len() - base - 1;
        if extra > 0 {
            self.emit(format!("POP {extra} 1"));
            self.stack.drain(base..base + extra);
        }
    }
}

/// A random valid VCODE program (entry `MAIN`, maybe a helper `H`).
fn program(rng: &mut Rng) -> String {
    let deep = rng.below(8) == 0;
    let mut g = Gen {
        rng: Rng(rng.next() | 1),
        out: Vec::new(),
        stack: Vec::new(),
        depth_left: if deep { 300 } else { 4 },
        budget: if deep { 1500 } else { 10 + rng.below(60) },
        helper: rng.below(2) == 0,
    };
    g.emit("FUNC MAIN");
    while g.budget > 0 {
        g.stmt(0);
    }
    g.emit("RET");
    let mut text = g.out.join("\n");
    if g.helper {
        // H(x): a block on its argument.
        g.out.clear();
        g.stack = vec![Slot::Int(1)];
        g.budget = 20;
        g.depth_left = 3;
        g.emit("FUNC H");
        g.branch();
        g.finish(0);
        g.emit("RET");
        text.push_str("\n\n");
        text.push_str(&g.out.join("\n"));
    }
    text.push('\n');
    text
}

fn run(p: &vcode::Program) -> Result<String, String> {
    let mut w = Vec::new();
    let mut cvl = vcode::CpuCvl::with_threads(1);
    match vcode::run(p, &mut cvl, &mut w, &vcode::RunOptions::default()) {
        Ok(r) => match r.outcome {
            vcode::RunOutcome::Finished(stack) => Ok(vcode::format_vinterp(&stack)),
            vcode::RunOutcome::Exited(_) => Err("exited".into()),
        },
        Err(t) => Err(format!("{t:?}")),
    }
}

/// Returns whether the outputs were compared (the unoptimised program ran to the end).
fn exercise(text: &str) -> bool {
    let p = vcode::parse(text).unwrap_or_else(|e| panic!("generated VCODE does not parse: {e:?}"));
    if let Err(e) = vcode::verify(&p) {
        panic!("generated VCODE does not verify: {e:?}");
    }
    let expected = run(&p);
    for level in [1u8, 2] {
        let o = nesl::pipeline::optimise(&p, level)
            .unwrap_or_else(|e| panic!("the optimiser failed at level {level}: {e}"));
        if let Err(e) = vcode::verify(&o) {
            panic!("optimised (level {level}) VCODE does not verify: {e:?}");
        }
        if let Ok(want) = &expected {
            match run(&o) {
                Ok(got) => assert_eq!(&got, want, "level {level} prints another stack"),
                Err(e) => panic!("level {level} fails where the input runs: {e}"),
            }
        }
    }
    // The same program with one shuffle count made huge: refused, never a crash.
    if let Some(i) = text.find("COPY 1 ") {
        let bad = format!(
            "{}COPY 4294967295 0{}",
            &text[..i],
            &text[i + "COPY 1 ".len()..]
                .split_once('\n')
                .map_or(String::new(), |(_, r)| format!("\n{r}"))
        );
        if let Ok(bp) = vcode::parse(&bad) {
            assert!(
                vcode::verify(&bp).is_err(),
                "a COPY of 4294967295 slots verifies"
            );
        }
    }
    expected.is_ok()
}

#[test]
fn random_valid_vcode_optimises_to_the_same_result() {
    let t = std::thread::Builder::new()
        .stack_size(nesl_front::STACK_SIZE)
        .spawn(|| {
            let mut rng = Rng(0x0DDB_1A5E_5BAD_5EED);
            let start = Instant::now();
            let mut failures = Vec::new();
            let mut ran = 0;
            let mut compared = 0;
            for case in 0..400 {
                if start.elapsed() > Duration::from_secs(6) {
                    break;
                }
                let text = program(&mut rng);
                ran += 1;
                match catch_unwind(AssertUnwindSafe(|| exercise(&text))) {
                    Ok(true) => compared += 1,
                    Ok(false) => {}
                    Err(p) => {
                        let why = p
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_default();
                        let shown: String = text.chars().take(3000).collect();
                        failures.push(format!("case {case}: {why}\n--- input ---\n{shown}"));
                        if failures.len() >= 3 {
                            break;
                        }
                    }
                }
            }
            (ran, compared, failures)
        })
        .unwrap();
    let (ran, compared, failures) = t.join().unwrap();
    println!("{ran} programs, {compared} ran to the end and were compared");
    assert!(ran >= 20, "only {ran} cases in the budget");
    assert!(
        compared * 2 >= ran,
        "only {compared} of {ran} programs ran to the end"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
