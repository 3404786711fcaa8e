//! Large constants kept out of the passes.
//!
//! The top level hands global values to compiled code as `CONST` instructions, which can
//! hold millions of elements. The passes copy instructions freely (the inliner copies
//! bodies, the let form and code generation rebuild them), and no pass looks inside a
//! constant of more than one element, so [`crate::optimize_owned`] takes every large
//! `INT`, `FLOAT` or `SEGDES` constant out of the program first ([`hoist`]), optimises
//! the small program, and puts the constants back ([`restore`]), moving each one once.
//!
//! A constant taken out is replaced by a two-element constant of the same type,
//! `(MAGIC k)`, where `k` indexes the table and `MAGIC` is chosen so that no
//! two-element constant of the input starts with it; the passes never create
//! multi-element constants, so after optimisation the placeholders are exactly the
//! constants that start with `MAGIC`.

use vcode::{Const, Imm, Program};

/// Constants with more elements than this are taken out.
pub const HOIST_MIN: usize = 64;

/// How placeholders look: `(int_magic k)` for `INT` and `SEGDES`, `(float_magic k)`
/// (compared bit for bit) for `FLOAT`, with `k < n`.
#[derive(Debug, Clone, Copy)]
struct Marks {
    int_magic: i64,
    float_magic: u64,
    n: usize,
}

impl Marks {
    fn index_of(&self, c: &Const) -> Option<usize> {
        let k = match c {
            Const::Int(v, _) | Const::Segdes(v, _) if v.len() == 2 && v[0] == self.int_magic => v[1],
            Const::Float(v, _) if v.len() == 2 && v[0].to_bits() == self.float_magic => v[1] as i64,
            _ => return None,
        };
        usize::try_from(k).ok().filter(|&k| k < self.n)
    }
}

/// The constants taken out of a program, and how their placeholders look.
#[derive(Debug)]
pub struct Hoisted {
    table: Vec<Const>,
    marks: Marks,
}

impl Hoisted {
    /// Number of constants taken out.
    pub fn len(&self) -> usize {
        self.table.len()
    }
    /// True when nothing was taken out.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}

fn consts_mut(p: &mut Program) -> impl Iterator<Item = &mut Const> {
    p.functions.iter_mut().flat_map(|f| f.body.iter_mut()).filter_map(|i| match &mut i.imm {
        Imm::Const(c) => Some(c),
        _ => None,
    })
}

/// Takes the large constants out of `p`, leaving placeholders.
pub fn hoist(p: &mut Program) -> Hoisted {
    let mut int_magic: i64 = 0x7E57_C0DE_0000_0000;
    let mut float_magic: u64 = 0x7FF8_DEAD_BEEF_0000;
    let mut ints = std::collections::HashSet::new();
    let mut floats = std::collections::HashSet::new();
    for c in consts_mut(p) {
        match c {
            Const::Int(v, _) | Const::Segdes(v, _) if v.len() == 2 => {
                ints.insert(v[0]);
            }
            Const::Float(v, _) if v.len() == 2 => {
                floats.insert(v[0].to_bits());
            }
            _ => {}
        }
    }
    while ints.contains(&int_magic) {
        int_magic += 1;
    }
    while floats.contains(&float_magic) {
        float_magic += 1;
    }
    let mut table = Vec::new();
    for c in consts_mut(p) {
        let big = match c {
            Const::Int(v, _) | Const::Segdes(v, _) => v.len() > HOIST_MIN,
            Const::Float(v, _) => v.len() > HOIST_MIN,
            Const::Bool(..) | Const::Char(_) => false,
        };
        if !big {
            continue;
        }
        let k = table.len() as i64;
        let placeholder = match c {
            Const::Int(..) => Const::Int(vec![int_magic, k], true),
            Const::Segdes(..) => Const::Segdes(vec![int_magic, k], true),
            _ => Const::Float(vec![f64::from_bits(float_magic), k as f64], true),
        };
        table.push(std::mem::replace(c, placeholder));
    }
    let marks = Marks { int_magic, float_magic, n: table.len() };
    Hoisted { table, marks }
}

/// Puts the constants taken out by [`hoist`] back in place of their placeholders (a
/// constant the optimiser duplicated is copied; its last occurrence gets the original).
pub fn restore(p: &mut Program, h: Hoisted) {
    if h.table.is_empty() {
        return;
    }
    let marks = h.marks;
    let mut remaining = vec![0usize; marks.n];
    for c in consts_mut(p) {
        if let Some(k) = marks.index_of(c) {
            remaining[k] += 1;
        }
    }
    let mut originals: Vec<Option<Const>> = h.table.into_iter().map(Some).collect();
    for c in consts_mut(p) {
        let Some(k) = marks.index_of(c) else { continue };
        remaining[k] -= 1;
        let value = if remaining[k] == 0 { originals[k].take() } else { originals[k].clone() };
        if let Some(v) = value {
            *c = v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hoist_and_restore_round_trip() {
        let big: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        let src = format!(
            "FUNC MAIN\nCONST INT ({b})\nCONST FLOAT ({f})\nCONST INT (9103957231468019712 1)\nCONST INT (1 2)\nRET\n",
            b = big.join(" "),
            f = big.iter().map(|x| format!("{x}.5")).collect::<Vec<_>>().join(" ")
        );
        let p = vcode::parse(&src).expect("parses");
        let mut q = p.clone();
        let h = hoist(&mut q);
        assert_eq!(h.len(), 2);
        // The input's own (MAGIC 1) constant moved the magic number on.
        assert_ne!(h.marks.int_magic, 0x7E57_C0DE_0000_0000);
        assert!(q.to_string().len() < 200, "{q}");
        restore(&mut q, h);
        assert!(q.same_code(&p));
    }
}
