//! Superoperators over unwritten `INDEX`es that are themselves an `INDEX`.
//!
//! Segment-wise index arithmetic is common in flattened code: `drop(v, n)` gathers by
//! `INDEX(0, 1) + DIST(n)`, `take`, `subseq` and `++` by similar sums. When every operand
//! of an `INT` superoperator is an `INDEX` or a `DIST` not written out (over segments of
//! the same lengths) and its tree only adds, subtracts and multiplies by per-segment
//! constants, its value in segment `k` is again `start[k] + j * stride[k]`: the library
//! keeps it as that `INDEX` (no vector of indices written and read back), which the
//! permutes then copy by runs. Arithmetic wraps, as `INT` arithmetic does everywhere, and
//! a progression's terms wrap the same way, so the values are exactly the tree's.

use crate::cvl::{BinOp, HostScalar, VType};
use crate::fused::Expr;

/// An operand of the tree, per segment.
#[derive(Debug, Clone, Copy)]
pub(super) enum Term<'a> {
    /// An `INDEX`: starts and strides.
    Index(&'a [i64], &'a [i64]),
    /// A `DIST` of `INT`s: one value per segment.
    Dist(&'a [i64]),
    /// Not a value (a `SEGDES` parameter).
    None,
}

/// Per segment `(start, stride)`.
type Prog = (Vec<i64>, Vec<i64>);

/// The starts and strides of `e` over `m` segments when it is a progression in each
/// (`None` when some node is not one: a division, a comparison, a product of two
/// progressions, an operand of another kind).
pub(super) fn progressions(e: &Expr, terms: &[Term], m: usize) -> Option<Prog> {
    Some(match e {
        Expr::Arg(i) => match terms.get(*i)? {
            Term::Index(b, k) if b.len() == m && k.len() == m => (b.to_vec(), k.to_vec()),
            Term::Dist(v) if v.len() == m => (v.to_vec(), vec![0; m]),
            _ => return None,
        },
        Expr::Const(HostScalar::Int(c)) => (vec![*c; m], vec![0; m]),
        Expr::Binary { op, ty: VType::Int, a, b } => {
            let (sa, ka) = progressions(a, terms, m)?;
            let (sb, kb) = progressions(b, terms, m)?;
            let zip = |x: &[i64], y: &[i64], f: fn(i64, i64) -> i64| x.iter().zip(y).map(|(&p, &q)| f(p, q)).collect::<Vec<i64>>();
            match op {
                BinOp::Add => (zip(&sa, &sb, i64::wrapping_add), zip(&ka, &kb, i64::wrapping_add)),
                BinOp::Sub => (zip(&sa, &sb, i64::wrapping_sub), zip(&ka, &kb, i64::wrapping_sub)),
                // (s + j k) c = s c + j (k c): a product with a per-segment constant.
                BinOp::Mul if kb.iter().all(|&x| x == 0) => (zip(&sa, &sb, i64::wrapping_mul), zip(&ka, &sb, i64::wrapping_mul)),
                BinOp::Mul if ka.iter().all(|&x| x == 0) => (zip(&sa, &sb, i64::wrapping_mul), zip(&sa, &kb, i64::wrapping_mul)),
                _ => return None,
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fused::SuperOp;

    fn at(p: &Prog, lens: &[usize]) -> Vec<i64> {
        lens.iter().enumerate().flat_map(|(k, &l)| (0..l as i64).map(move |j| p.0[k].wrapping_add(j.wrapping_mul(p.1[k])))).collect()
    }

    #[test]
    fn sums_differences_and_products_by_constants_stay_progressions() {
        let lens = [3, 0, 4];
        let (b, k, d) = ([0i64, 5, -2], [1i64, 2, 3], [10i64, 20, i64::MAX]);
        let terms = [Term::Index(&b, &k), Term::Dist(&d), Term::None];
        let index: Vec<i64> = at(&(b.to_vec(), k.to_vec()), &lens);
        let dist: Vec<i64> = lens.iter().zip(d).flat_map(|(&l, v)| std::iter::repeat_n(v, l)).collect();
        let cases: [(&str, fn(i64, i64) -> i64); 4] = [
            ("(INT INT SEGDES) (+ INT $0 (+ INT (CONST INT 7) $1))", |i, d| i.wrapping_add(7i64.wrapping_add(d))),
            ("(INT INT SEGDES) (- INT $1 $0)", |i, d| d.wrapping_sub(i)),
            ("(INT INT SEGDES) (* INT (- INT $0 (CONST INT 1)) $1)", |i, d| (i - 1).wrapping_mul(d)),
            ("(INT INT SEGDES) (* INT $1 (* INT (CONST INT 3) $0))", |i, d| d.wrapping_mul(3 * i)),
        ];
        for (src, f) in cases {
            let op = SuperOp::parse(src).expect("parses");
            let p = progressions(&op.body, &terms, lens.len()).unwrap_or_else(|| panic!("{src} is a progression"));
            let want: Vec<i64> = index.iter().zip(&dist).map(|(&i, &d)| f(i, d)).collect();
            assert_eq!(at(&p, &lens), want, "{src}");
        }
        for src in [
            "(INT INT SEGDES) (* INT $0 $0)",
            "(INT INT SEGDES) (/ INT $0 $1)",
            "(INT INT SEGDES) (MAX INT $0 $1)",
            "(INT INT SEGDES) (+ INT $0 $2)",
        ] {
            let Ok(op) = SuperOp::parse(src) else { continue };
            assert!(progressions(&op.body, &terms, lens.len()).is_none(), "{src} is not a progression");
        }
    }
}
