//! Stack signatures of VCODE functions: how many caller slots a function consumes and how
//! many it leaves.
//!
//! VCODE functions declare nothing (the callee sees the caller's whole stack), so the
//! signature is inferred by counting: the body is run on an abstract stack height, the
//! deepest slot reached is the number of inputs, and the final height plus the inputs is
//! the number of outputs. Recursion is handled by a fixed point: a call to a function
//! whose signature is not known yet ends that path, so a recursive function gets its
//! signature from its base case first. A function none of whose paths returns (every path
//! ends in `EXIT` or in a call that never returns) has inputs but no outputs.

use crate::util::{exec_of, instr_arity, structure, Node};
use crate::OptError;
use vcode::op::Exec;
use vcode::{Imm, Program};

/// The signature of one function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sig {
    /// Caller slots consumed.
    pub inputs: usize,
    /// Slots left in their place, `None` when the function never returns.
    pub outputs: Option<usize>,
}

#[derive(Clone, Copy)]
struct St {
    h: i64,
    min: i64,
    live: bool,
}

fn need(st: &mut St, k: usize) {
    st.min = st.min.min(st.h - k as i64);
}

fn run(p: &Program, fi: usize, nodes: &[Node], mut st: St, sigs: &[Option<Sig>]) -> Result<St, OptError> {
    let f = &p.functions[fi];
    let bad = |i: usize, m: String| {
        let pos = f.pos_of(i);
        OptError::Malformed { function: f.name.clone(), message: format!("{}:{}: {m}", pos.line, pos.col) }
    };
    for node in nodes {
        if !st.live {
            break;
        }
        match node {
            Node::Ins(i) => {
                let ins = &f.body[*i];
                match (exec_of(ins), &ins.imm) {
                    (Exec::Copy | Exec::Pop | Exec::Cpop, Imm::Counts(n, d)) => {
                        need(&mut st, (*n + *d) as usize);
                        match exec_of(ins) {
                            Exec::Copy => st.h += *n as i64,
                            Exec::Pop => st.h -= *n as i64,
                            _ => {}
                        }
                    }
                    (Exec::Call, Imm::Label(l)) => {
                        let Some(k) = p.lookup(l) else {
                            return Err(bad(*i, format!("call to undefined function `{l}`")));
                        };
                        match sigs[k] {
                            Some(Sig { inputs, outputs }) => {
                                need(&mut st, inputs);
                                match outputs {
                                    Some(o) => st.h += o as i64 - inputs as i64,
                                    None => st.live = false,
                                }
                            }
                            None => st.live = false,
                        }
                    }
                    (Exec::Exit, _) => st.live = false,
                    _ => match instr_arity(ins, &p.superops) {
                        Some((n, m)) => {
                            need(&mut st, n);
                            st.h += m as i64 - n as i64;
                        }
                        None => return Err(bad(*i, format!("unexpected instruction `{ins}`"))),
                    },
                }
            }
            Node::If { then, els, .. } => {
                need(&mut st, 1);
                st.h -= 1;
                let a = run(p, fi, then, st, sigs)?;
                let b = run(p, fi, els, st, sigs)?;
                let min = a.min.min(b.min);
                st = match (a.live, b.live) {
                    (true, true) => {
                        if a.h != b.h {
                            let at = match node {
                                Node::If { at, .. } => *at,
                                Node::Ins(i) => *i,
                            };
                            return Err(bad(
                                at,
                                format!(
                                    "the branches of this IF leave different stack depths ({} and {})",
                                    a.h - st.h,
                                    b.h - st.h
                                ),
                            ));
                        }
                        St { h: a.h, min, live: true }
                    }
                    (true, false) => St { min, ..a },
                    (false, true) => St { min, ..b },
                    (false, false) => St { h: a.h, min, live: false },
                };
            }
        }
    }
    Ok(st)
}

/// Infers the signature of every function (index as in `p.functions`).
pub fn infer(p: &Program) -> Result<Vec<Sig>, OptError> {
    let bodies: Vec<Vec<Node>> = p.functions.iter().map(structure).collect::<Result<_, _>>()?;
    let mut sigs: Vec<Option<Sig>> = vec![None; p.functions.len()];
    let mut stable = false;
    for _ in 0..p.functions.len() + 3 {
        let mut next = Vec::with_capacity(sigs.len());
        for (fi, nodes) in bodies.iter().enumerate() {
            let st = run(p, fi, nodes, St { h: 0, min: 0, live: true }, &sigs)?;
            let inputs = (-st.min).max(0) as usize;
            let outputs = st.live.then(|| (st.h + inputs as i64) as usize);
            next.push(Some(Sig { inputs, outputs }));
        }
        if next == sigs {
            stable = true;
            break;
        }
        sigs = next;
    }
    if !stable {
        return Err(OptError::Malformed {
            function: String::new(),
            message: "the stack signatures of the functions do not settle (inconsistent recursion)".into(),
        });
    }
    Ok(sigs.into_iter().map(|s| s.unwrap_or(Sig { inputs: 0, outputs: None })).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sigs(src: &str) -> Vec<Sig> {
        infer(&vcode::parse(src).expect("parses")).expect("infers")
    }

    #[test]
    fn counts_inputs_and_outputs() {
        let s = sigs("FUNC MAIN\nCONST INT 1\nCONST INT 2\nCALL SWAP\nRET\nFUNC SWAP\nCPOP 1 1\nRET\n");
        assert_eq!(s[1], Sig { inputs: 2, outputs: Some(2) });
        assert_eq!(s[0], Sig { inputs: 0, outputs: Some(2) });
    }

    #[test]
    fn recursion_and_divergence() {
        let fact = "FUNC MAIN\nCONST INT 5\nCALL FACT\nRET\nFUNC FACT\nCOPY 1 0\nCONST INT 1\n<= INT\nIF\nPOP 1 0\nCONST INT 1\nELSE\nCOPY 1 0\nCONST INT 1\n- INT\nCALL FACT\n* INT\nENDIF\nRET\n";
        assert_eq!(sigs(fact)[1], Sig { inputs: 1, outputs: Some(1) });
        let s = sigs("FUNC MAIN\nCONST INT 0\nCALL DIE\nRET\nFUNC DIE\nPOP 1 0\nEXIT\nRET\n");
        assert_eq!(s[1], Sig { inputs: 1, outputs: None });
        assert_eq!(s[0].outputs, None);
    }

    #[test]
    fn unbalanced_branches_are_reported() {
        let p = vcode::parse("FUNC MAIN\nCONST BOOL T\nIF\nCONST INT 1\nELSE\nENDIF\nRET\n").expect("parses");
        let e = infer(&p).expect_err("unbalanced");
        assert!(e.to_string().contains("3:1"), "{e}");
    }
}
