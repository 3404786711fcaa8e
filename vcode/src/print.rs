//! The printers: VCODE / FCODE text (the inverse of [`crate::parse`]) and the
//! `vinterp` final-stack format.

use crate::fused::{Expr, SuperOp};
use crate::ir::{Const, Function, Imm, Instr, Origin, Program};
use crate::op::Opcode;
use crate::HostValue;
use std::fmt::{self, Write as _};

/// A float as a VCODE literal that reads back to the same value: always with a decimal
/// point (`1.0`, `2.5e-7`, `1.0e20`). Infinities print as `1.0e999` / `-1.0e999`, which
/// the parser reads back as infinities; NaN cannot be written and prints as `0.0`.
pub fn float_literal(x: f64) -> String {
    if x.is_nan() {
        return "0.0".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "1.0e999".into() } else { "-1.0e999".into() };
    }
    let s = format!("{x:e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let mant = if mant.contains('.') { mant.to_string() } else { format!("{mant}.0") };
    if exp == "0" {
        mant
    } else {
        format!("{mant}e{exp}")
    }
}

fn write_list<T>(f: &mut fmt::Formatter<'_>, v: &[T], list: bool, item: impl Fn(&T) -> String) -> fmt::Result {
    if !list && v.len() == 1 {
        return write!(f, "{}", item(&v[0]));
    }
    write!(f, "(")?;
    for (i, x) in v.iter().enumerate() {
        if i > 0 {
            write!(f, " ")?;
        }
        write!(f, "{}", item(x))?;
    }
    write!(f, ")")
}

impl fmt::Display for Const {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ", self.ty().name())?;
        match self {
            Const::Int(v, l) | Const::Segdes(v, l) => write_list(f, v, *l, |x| x.to_string()),
            Const::Float(v, l) => write_list(f, v, *l, |x| float_literal(*x)),
            Const::Bool(v, l) => write_list(f, v, *l, |x| if *x { "T".into() } else { "F".into() }),
            Const::Char(s) => write!(f, "\"{s}\""),
            Const::Resident(r) => write!(f, "<resident {}>", r.id()),
        }
    }
}

impl fmt::Display for Instr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.op.info().name)?;
        if let Some(t) = self.ty {
            write!(f, " {}", t.name())?;
        }
        match &self.imm {
            Imm::None => Ok(()),
            Imm::Counts(n, d) => write!(f, " {n} {d}"),
            Imm::Label(l) => write!(f, " {l}"),
            Imm::Const(c) => write!(f, " {c}"),
            Imm::Index(n) => write!(f, " {n}"),
        }
    }
}

/// The `FUNC name [I ins... O outs...]` line of a function.
fn write_header(func: &Function, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    write!(f, "FUNC {}", func.name)?;
    if let Some((ins, outs)) = &func.sig {
        write!(f, " I")?;
        for t in ins {
            write!(f, " {}", t.name())?;
        }
        write!(f, " O")?;
        for t in outs {
            write!(f, " {}", t.name())?;
        }
    }
    writeln!(f)
}

impl fmt::Display for Function {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_header(self, f)?;
        for ins in &self.body {
            writeln!(f, "{ins}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Program {
    /// Prints the program as VCODE text (FCODE when it has superoperators).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, op) in self.superops.iter().enumerate() {
            writeln!(f, "SUPEROP {i} {op}")?;
        }
        if !self.superops.is_empty() {
            writeln!(f)?;
        }
        for (i, func) in self.functions.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{func}")?;
        }
        Ok(())
    }
}

/// A program printed as VCODE text with each instruction's origin as a comment after it
/// (`{ file.nesl:3:14 in qsort }`, `{ <prelude>:10:5 in sum, inlined at file.nesl:3:1 }`;
/// for an instruction of VCODE text, `{ NAME:line:col }` when the text is named, else
/// nothing). A `FUSED` instruction also lists each operation it fused with its origin, in
/// evaluation order (`{ f.nesl:3:26 in g; fuses / at 3:26, / at 3:34, + at 3:30 }`; the
/// file and function are written when they differ from the instruction's). Comments are skipped by the parser, so the text reads back as the same
/// program (without the origins). See [`Program::with_origins`].
pub struct WithOrigins<'a> {
    program: &'a Program,
    vcode_name: Option<&'a str>,
}

impl Program {
    /// The program as VCODE text with origin comments; `vcode_name` names the VCODE text
    /// the program was read from, for the instructions that came from it.
    pub fn with_origins<'a>(&'a self, vcode_name: Option<&'a str>) -> WithOrigins<'a> {
        WithOrigins { program: self, vcode_name }
    }
}

impl WithOrigins<'_> {
    /// `file:line:col in f` for a NESL origin; `NAME:line:col` for VCODE text.
    fn place(&self, o: Origin) -> Option<String> {
        let clean = |s: &str| s.replace('}', ")");
        if o.pos.line == 0 {
            return None;
        }
        match (o.scope as usize).checked_sub(1).and_then(|k| self.program.scopes.get(k)) {
            Some(scope) => {
                let at = format!("{}:{}:{}", clean(&scope.file), o.pos.line, o.pos.col);
                Some(match &scope.function {
                    Some(f) => format!("{at} in {}", clean(f)),
                    None => at,
                })
            }
            None => self.vcode_name.map(|n| format!("{}:{}:{}", clean(n), o.pos.line, o.pos.col)),
        }
    }

    /// The comment for an origin: its place, then the call sites it was inlined at.
    fn comment(&self, o: Origin) -> Option<String> {
        let mut text = self.place(o)?;
        let mut site = o.inlined_at;
        // The chain ends at a site that was not itself inlined; a malformed chain stops.
        let mut steps = 0;
        while let Some(&call) = (site as usize).checked_sub(1).and_then(|k| self.program.inline_sites.get(k)) {
            if let Some(p) = self.place(call) {
                text.push_str(&format!(", inlined at {p}"));
            }
            site = call.inlined_at;
            steps += 1;
            if steps > self.program.inline_sites.len() {
                break;
            }
        }
        Some(text)
    }

    /// The comment for a `FUSED` instruction of origin `o` running superoperator `op`:
    /// its own, then `; fuses` and each operation with the origin kept for it.
    fn fused_comment(&self, o: Origin, op: &SuperOp) -> Option<String> {
        let parts = self.program.parts_of(o);
        let mut names = Vec::new();
        op_names(&op.body, &mut names);
        for e in &op.more {
            op_names(e, &mut names);
        }
        // A pack keeps the origins of its flag trees' operations.
        for f in op.pack.iter().flat_map(|p| &p.flags) {
            op_names(f, &mut names);
        }
        if parts.is_empty() || parts.len() != names.len() {
            return self.comment(o);
        }
        let mut text = self.comment(o).unwrap_or_else(|| "?".into());
        text.push_str("; fuses");
        for (i, (name, part)) in names.iter().zip(parts).enumerate() {
            let at = if part.pos.line == 0 {
                "?".to_string()
            } else if part.scope == o.scope && part.inlined_at == o.inlined_at {
                format!("{}:{}", part.pos.line, part.pos.col)
            } else {
                self.comment(*part).unwrap_or_else(|| format!("{}:{}", part.pos.line, part.pos.col))
            };
            text.push_str(if i == 0 { " " } else { ", " });
            text.push_str(&format!("{name} at {at}"));
        }
        Some(text)
    }
}

/// The names of the operations of a superoperator body in evaluation order (postfix), the
/// order of [`Program::fused_parts`].
fn op_names(e: &Expr, out: &mut Vec<&'static str>) {
    match e {
        Expr::Arg(_) | Expr::Const(_) => {}
        Expr::Binary { op, a, b, .. } => {
            op_names(a, out);
            op_names(b, out);
            out.push(crate::fused::binop_name(*op));
        }
        Expr::Unary { op, a, .. } => {
            op_names(a, out);
            out.push(crate::fused::unop_name(*op));
        }
        Expr::Select { f, a, b, .. } => {
            op_names(f, out);
            op_names(a, out);
            op_names(b, out);
            out.push("SELECT");
        }
    }
}

impl fmt::Display for WithOrigins<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.program;
        for (i, op) in p.superops.iter().enumerate() {
            writeln!(f, "SUPEROP {i} {op}")?;
        }
        if !p.superops.is_empty() {
            writeln!(f)?;
        }
        for (i, func) in p.functions.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write_header(func, f)?;
            for (k, ins) in func.body.iter().enumerate() {
                let comment = func.origins.get(k).and_then(|&o| match (&ins.imm, ins.op) {
                    (Imm::Index(n), Opcode::Fused) if o.parts != 0 => {
                        p.superops.get(*n as usize).map_or_else(|| self.comment(o), |op| self.fused_comment(o, op))
                    }
                    _ => self.comment(o),
                });
                match comment {
                    Some(c) => writeln!(f, "{ins} {{ {c} }}")?,
                    None => writeln!(f, "{ins}")?,
                }
            }
        }
        Ok(())
    }
}

/// A double as C's `%.14e` prints it (`1.50000000000000e+00`, `inf`, `-nan`).
pub fn c_exp(x: f64) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan".into() } else { "nan".into() };
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let s = format!("{x:.14e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = exp.parse().unwrap_or(0);
    format!("{mant}e{}{:02}", if e < 0 { '-' } else { '+' }, e.unsigned_abs())
}

/// One stack value as `vinterp` prints it, without the newline.
pub fn format_value(v: &HostValue) -> String {
    let mut s = String::new();
    match v {
        HostValue::Int(v) => {
            s.push('(');
            for x in v {
                let _ = write!(s, " {x}");
            }
            s.push_str(" )");
        }
        HostValue::Float(v) => {
            s.push('(');
            for x in v {
                let _ = write!(s, " {}", c_exp(*x));
            }
            s.push_str(" )");
        }
        HostValue::Bool(v) => {
            s.push('(');
            for x in v {
                s.push_str(if *x { " T" } else { " F" });
            }
            s.push_str(" )");
        }
        HostValue::Segdes(v) => {
            s.push('[');
            for x in v {
                let _ = write!(s, " {x}");
            }
            s.push_str(" ]");
        }
    }
    s
}

/// The final stack as `vinterp` prints it: one line per value, bottom first.
pub fn format_vinterp(values: &[HostValue]) -> String {
    let mut s = String::new();
    for v in values {
        s.push_str(&format_value(v));
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_format() {
        assert_eq!(c_exp(1.5), "1.50000000000000e+00");
        assert_eq!(c_exp(-0.25), "-2.50000000000000e-01");
        assert_eq!(c_exp(crate::cvl::ops::FLOAT_MAX_IDENTITY), "-9.99999961690316e+35");
        assert_eq!(c_exp(1e300), "1.00000000000000e+300");
        assert_eq!(c_exp(0.0), "0.00000000000000e+00");
    }

    #[test]
    fn literals_round_trip() {
        for x in [1.0, 2.5e-7, 1e20, -3.25, 0.1, 1.0999999999999999e28, f64::MAX, 5e-324] {
            let s = float_literal(x);
            assert!(s.contains('.'), "{s}");
            assert_eq!(s.parse::<f64>().ok(), Some(x), "{s}");
        }
    }

    #[test]
    fn vinterp_lines() {
        let v = [
            HostValue::Segdes(vec![2, 0, 1]),
            HostValue::Int(vec![]),
            HostValue::Bool(vec![true, false]),
        ];
        assert_eq!(format_vinterp(&v), "[ 2 0 1 ]\n( )\n( T F )\n");
    }
}
