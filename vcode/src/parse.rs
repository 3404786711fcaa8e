//! The parser of the VCODE / FCODE text format (spec/vcode.md sections 4, 5 and 10).
//!
//! Reads the CMU dialect: `FUNC name [I types O types] stmts RET`, with flat
//! `IF`/`ELSE`/`ENDIF` that must nest, constants of every form, and `FUSED n` plus
//! `SUPEROP n (types) expr` lines for FCODE. What each instruction takes after its name
//! comes from the instruction table ([`crate::op`]). Every problem is reported with its
//! line and column; after an error the parser skips to the next line and goes on, so one
//! run reports as many problems as it can. Calls are linked after parsing (a call to an
//! undefined function is an error at the `CALL`).

use crate::cvl::{HostScalar, ReduceOp, VType};
use crate::fused::{node_kind, node_name, Expr, Fold, FoldKind, Guard, NodeKind, SuperOp};
use crate::ir::{Const, Function, Imm, Instr, Origin, Pos, Program};
use crate::lex::{lex, Tok, Token};
use crate::op::{is_reserved, ImmKind, Opcode, Ty};
use std::fmt;

/// A syntax or link error, with its 1-based position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Line.
    pub line: u32,
    /// Column.
    pub col: u32,
    /// What is wrong.
    pub message: String,
}

impl ParseError {
    pub(crate) fn at(pos: Pos, message: impl Into<String>) -> Self {
        ParseError { line: pos.line, col: pos.col, message: message.into() }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Most errors reported for one file (the rest are dropped).
const MAX_ERRORS: usize = 50;

/// Parses a VCODE or FCODE program.
pub fn parse(src: &str) -> Result<Program, Vec<ParseError>> {
    let mut errors = Vec::new();
    let toks = lex(src, &mut errors);
    let mut p = Parser::new(toks, errors);
    let prog = p.program();
    let mut errors = p.errors;
    errors.sort_by_key(|e| (e.line, e.col));
    errors.dedup();
    errors.truncate(MAX_ERRORS);
    if errors.is_empty() {
        Ok(prog)
    } else {
        Err(errors)
    }
}

/// Parses one superoperator in the form `(T1 T2 ...) expr`.
pub(crate) fn parse_superop(src: &str) -> Result<SuperOp, Vec<ParseError>> {
    let mut errors = Vec::new();
    let toks = lex(src, &mut errors);
    let mut p = Parser::new(toks, errors);
    let op = p.superop_body();
    if !matches!(p.peek().tok, Tok::Eof) {
        let t = p.peek().clone();
        p.err(t.pos, format!("unexpected {} after the superoperator", t.tok.describe()));
    }
    match op {
        Some(op) if p.errors.is_empty() => Ok(op),
        _ => Err(p.errors),
    }
}

struct Parser {
    toks: Vec<Token>,
    i: usize,
    errors: Vec<ParseError>,
    /// Positions of tokens the lexer already reported (no second error there).
    quiet: Vec<Pos>,
}

/// An open `IF` while parsing a function body.
struct OpenIf {
    pos: Pos,
    seen_else: bool,
}

impl Parser {
    fn new(toks: Vec<Token>, errors: Vec<ParseError>) -> Self {
        let mut quiet: Vec<Pos> = toks.iter().filter(|t| t.tok == Tok::Bad).map(|t| t.pos).collect();
        // After an unterminated comment or string the rest of the file is gone: do not
        // also complain about what is missing at its end.
        if errors.iter().any(|e| e.message.starts_with("unterminated")) {
            if let Some(t) = toks.last() {
                quiet.push(t.pos);
            }
        }
        Parser { toks, i: 0, errors, quiet }
    }
    fn peek(&self) -> &Token {
        &self.toks[self.i.min(self.toks.len() - 1)]
    }
    fn next(&mut self) -> Token {
        let t = self.peek().clone();
        if self.i < self.toks.len() - 1 {
            self.i += 1;
        }
        t
    }
    fn err(&mut self, pos: Pos, msg: impl Into<String>) {
        if !self.quiet.contains(&pos) {
            self.errors.push(ParseError::at(pos, msg));
        }
    }
    fn at_word(&self, w: &str) -> bool {
        matches!(&self.peek().tok, Tok::Word(x) if x == w)
    }
    /// Skips the rest of the line `line` (error recovery).
    fn skip_line(&mut self, line: u32) {
        while !matches!(self.peek().tok, Tok::Eof) && self.peek().pos.line == line {
            self.next();
        }
    }
    fn too_many(&self) -> bool {
        self.errors.len() >= MAX_ERRORS
    }

    fn program(&mut self) -> Program {
        let mut functions = Vec::new();
        let mut superops = Vec::new();
        let mut fused_uses: Vec<(u32, Pos)> = Vec::new();
        let mut calls: Vec<(String, Pos)> = Vec::new();
        loop {
            if self.too_many() {
                break;
            }
            let t = self.peek().clone();
            match &t.tok {
                Tok::Eof => break,
                Tok::Word(w) if w == "FUNC" => {
                    self.next();
                    if let Some(f) = self.function(t.pos) {
                        for (ins, o) in f.body.iter().zip(&f.origins) {
                            let pos = &o.pos;
                            match &ins.imm {
                                Imm::Label(l) => calls.push((l.clone(), *pos)),
                                Imm::Index(n) => fused_uses.push((*n, *pos)),
                                _ => {}
                            }
                        }
                        functions.push(f);
                    }
                }
                Tok::Word(w) if w == "SUPEROP" => {
                    self.next();
                    self.superop_decl(t.pos, &mut superops);
                }
                other => {
                    let d = other.describe();
                    self.err(t.pos, format!("expected `FUNC`, found {d}"));
                    self.next();
                    while !matches!(self.peek().tok, Tok::Eof)
                        && !self.at_word("FUNC")
                        && !self.at_word("SUPEROP")
                    {
                        self.next();
                    }
                }
            }
        }
        let prog = Program { functions, superops, scopes: Vec::new(), inline_sites: Vec::new(), fused_parts: Vec::new() };
        if prog.functions.is_empty() && self.errors.is_empty() {
            let pos = self.peek().pos;
            self.err(pos, "the file defines no function (expected `FUNC`)");
        }
        let index = prog.function_index();
        for (name, pos) in calls {
            if !index.contains_key(name.as_str()) {
                self.err(pos, format!("call to undefined function `{name}`"));
            }
        }
        for (n, pos) in fused_uses {
            if n as usize >= prog.superops.len() {
                self.err(
                    pos,
                    format!(
                        "`FUSED {n}`: no superoperator {n} is defined ({} defined)",
                        prog.superops.len()
                    ),
                );
            }
        }
        prog
    }

    fn function(&mut self, pos: Pos) -> Option<Function> {
        let t = self.next();
        let name = match &t.tok {
            Tok::Word(w) if w == "MAIN" || !is_reserved(w) => w.clone(),
            other => {
                let d = other.describe();
                self.err(t.pos, format!("expected a function name after `FUNC`, found {d}"));
                self.skip_line(t.pos.line);
                "?".to_string()
            }
        };
        let mut sig = None;
        if self.at_word("I") {
            self.next();
            let ins = self.type_list();
            let mut outs = Vec::new();
            if self.at_word("O") {
                self.next();
                outs = self.type_list();
            } else {
                let t = self.peek().clone();
                self.err(t.pos, format!("expected `O` in the type line, found {}", t.tok.describe()));
            }
            sig = Some((ins, outs));
        }
        let mut body = Vec::new();
        let mut origins = Vec::new();
        let mut ifs: Vec<OpenIf> = Vec::new();
        loop {
            if self.too_many() {
                return None;
            }
            let t = self.peek().clone();
            match &t.tok {
                Tok::Eof => {
                    self.err(t.pos, format!("unexpected end of file: function `{name}` has no `RET`"));
                    break;
                }
                Tok::Word(w) if w == "FUNC" || w == "SUPEROP" => {
                    self.err(t.pos, format!("function `{name}` ends without `RET` before `{w}`"));
                    break;
                }
                Tok::Word(w) => {
                    let w = w.clone();
                    self.next();
                    let Some(op) = Opcode::from_name(&w) else {
                        let msg = if Ty::from_name(&w).is_some() {
                            format!("type `{w}` where an instruction was expected")
                        } else {
                            format!("unknown instruction `{w}`")
                        };
                        self.err(t.pos, msg);
                        self.skip_line(t.pos.line);
                        continue;
                    };
                    match op {
                        Opcode::If => ifs.push(OpenIf { pos: t.pos, seen_else: false }),
                        Opcode::Else => match ifs.last_mut() {
                            None => {
                                self.err(t.pos, "`ELSE` without `IF`");
                                continue;
                            }
                            Some(o) if o.seen_else => {
                                self.err(t.pos, "second `ELSE` for one `IF`");
                                continue;
                            }
                            Some(o) => o.seen_else = true,
                        },
                        Opcode::EndIf => {
                            if ifs.pop().is_none() {
                                self.err(t.pos, "`ENDIF` without `IF`");
                                continue;
                            }
                        }
                        Opcode::Ret if !ifs.is_empty() => {
                            let at_end = matches!(&self.peek().tok, Tok::Eof)
                                || self.at_word("FUNC")
                                || self.at_word("SUPEROP");
                            if at_end {
                                // The function ends here: the IFs were never closed.
                                for o in ifs.drain(..) {
                                    self.err(o.pos, "`IF` without `ENDIF`");
                                }
                            } else {
                                self.err(t.pos, "`RET` inside `IF` (RET must be the last instruction of a function)");
                                continue;
                            }
                        }
                        _ => {}
                    }
                    if let Some(ins) = self.operands(op, t.pos) {
                        body.push(ins);
                        origins.push(Origin::vcode(t.pos));
                    }
                    if op == Opcode::Ret {
                        break;
                    }
                }
                other => {
                    let d = other.describe();
                    self.err(t.pos, format!("expected an instruction, found {d}"));
                    self.next();
                    self.skip_line(t.pos.line);
                }
            }
        }
        for o in ifs {
            self.err(o.pos, "`IF` without `ENDIF`");
        }
        if body.last().map(|i| i.op) != Some(Opcode::Ret) {
            body.push(Instr::plain(Opcode::Ret));
            origins.push(Origin::vcode(self.peek().pos));
        }
        Some(Function { name, sig, body, origins, pos, instances: None })
    }

    fn type_list(&mut self) -> Vec<Ty> {
        let mut v = Vec::new();
        while let Tok::Word(w) = &self.peek().tok {
            match Ty::from_name(w) {
                Some(t) => {
                    v.push(t);
                    self.next();
                }
                None => break,
            }
        }
        v
    }

    /// Reads what follows an instruction name. `None` after reporting an error.
    fn operands(&mut self, op: Opcode, pos: Pos) -> Option<Instr> {
        let info = op.info();
        let mut ty = None;
        if !info.types.is_empty() {
            let t = self.peek().clone();
            let allowed = info.types.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ");
            match &t.tok {
                Tok::Word(w) if Ty::from_name(w).is_some() => {
                    let tt = Ty::from_name(w);
                    self.next();
                    if tt.is_some_and(|x| info.types.contains(&x)) {
                        ty = tt;
                    } else {
                        self.err(t.pos, format!("`{}` does not take type {w} (allowed: {allowed})", info.name));
                        return None;
                    }
                }
                other => {
                    let d = other.describe();
                    self.err(t.pos, format!("`{}` needs a type argument ({allowed}), found {d}", info.name));
                    self.skip_line(pos.line);
                    return None;
                }
            }
        }
        let imm = match info.imm {
            ImmKind::None => Imm::None,
            ImmKind::Counts => {
                let n = self.count(info.name)?;
                let d = self.count(info.name)?;
                Imm::Counts(n, d)
            }
            ImmKind::Index => Imm::Index(self.count(info.name)?),
            ImmKind::Label => {
                let t = self.next();
                match &t.tok {
                    Tok::Word(w) if w == "MAIN" || !is_reserved(w) => Imm::Label(w.clone()),
                    other => {
                        let d = other.describe();
                        self.err(t.pos, format!("`CALL` needs a function name, found {d}"));
                        self.skip_line(t.pos.line);
                        return None;
                    }
                }
            }
            ImmKind::Const => Imm::Const(self.constant()?),
        };
        Some(Instr { op, ty, imm })
    }

    fn count(&mut self, what: &str) -> Option<u32> {
        let t = self.next();
        match t.tok {
            Tok::Int(v) if (0..=u32::MAX as i64).contains(&v) => Some(v as u32),
            other => {
                let d = other.describe();
                self.err(t.pos, format!("`{what}` needs a non-negative integer, found {d}"));
                self.skip_line(t.pos.line);
                None
            }
        }
    }

    fn constant(&mut self) -> Option<Const> {
        let t = self.next();
        let ty = match &t.tok {
            Tok::Word(w) => Ty::from_name(w),
            _ => None,
        };
        let Some(ty) = ty else {
            let d = t.tok.describe();
            self.err(t.pos, format!("`CONST` needs a type (INT, FLOAT, BOOL, SEGDES, CHAR), found {d}"));
            self.skip_line(t.pos.line);
            return None;
        };
        if ty == Ty::Char {
            let s = self.next();
            return match s.tok {
                Tok::Str(text) => Some(Const::Char(text)),
                other => {
                    let d = other.describe();
                    self.err(s.pos, format!("`CONST CHAR` needs a string, found {d}"));
                    self.skip_line(s.pos.line);
                    None
                }
            };
        }
        if matches!(self.peek().tok, Tok::LParen) {
            let open = self.next();
            let mut items = Vec::new();
            loop {
                let e = self.next();
                match e.tok {
                    Tok::RParen => break,
                    Tok::Eof => {
                        self.err(open.pos, "unclosed `(` in a vector constant");
                        return None;
                    }
                    tok => match literal(ty, &tok) {
                        Ok(v) => items.push(v),
                        Err(m) => {
                            self.err(e.pos, m);
                            // skip to the closing parenthesis
                            while !matches!(self.peek().tok, Tok::RParen | Tok::Eof) {
                                self.next();
                            }
                            self.next();
                            return None;
                        }
                    },
                }
            }
            return Some(build_const(ty, items, true));
        }
        let e = self.next();
        match literal(ty, &e.tok) {
            Ok(v) => Some(build_const(ty, vec![v], false)),
            Err(m) => {
                self.err(e.pos, m);
                self.skip_line(e.pos.line);
                None
            }
        }
    }

    fn superop_decl(&mut self, pos: Pos, table: &mut Vec<SuperOp>) {
        let t = self.next();
        let n = match t.tok {
            Tok::Int(n) if n >= 0 => n as usize,
            other => {
                let d = other.describe();
                self.err(t.pos, format!("`SUPEROP` needs its table index, found {d}"));
                self.skip_line(t.pos.line);
                return;
            }
        };
        if n != table.len() {
            self.err(t.pos, format!("superoperator {n} declared out of order (expected {})", table.len()));
        }
        if let Some(op) = self.superop_body() {
            table.push(op);
        } else {
            self.skip_line(pos.line);
        }
    }

    /// `(types) expr`, type-checked.
    fn superop_body(&mut self) -> Option<SuperOp> {
        let open = self.next();
        if !matches!(open.tok, Tok::LParen) {
            let d = open.tok.describe();
            self.err(open.pos, format!("expected `(` and the parameter types, found {d}"));
            return None;
        }
        let params = self.type_list();
        let close = self.next();
        if !matches!(close.tok, Tok::RParen) {
            let d = close.tok.describe();
            self.err(close.pos, format!("expected a parameter type or `)`, found {d}"));
            return None;
        }
        let start = self.peek().pos;
        if let Some(op) = self.pack_root(&params, start) {
            return op;
        }
        let (body, fold) = self.fold_or_expr()?;
        // Further roots on the same line: element-wise trees (further results), then
        // possibly a guard, `(OR_REDUCE BOOL tree $k)`, which comes last.
        let mut more = Vec::new();
        let mut guard = None;
        while guard.is_none() && matches!(self.peek().tok, Tok::LParen | Tok::Arg(_)) && self.peek().pos.line == start.line {
            let at = self.peek().pos;
            match self.fold_or_expr()? {
                (e, None) if fold.is_none() => more.push(e),
                (cond, Some(Fold { kind: FoldKind::Reduce, op: ReduceOp::Or, ty: VType::Bool, seg })) if fold.is_none() => guard = Some(Guard { cond, seg }),
                // A further reduction: the body's, of another tree.
                (e, Some(f)) if fold == Some(f) && f.kind == FoldKind::Reduce => more.push(e),
                _ => {
                    self.err(
                        at,
                        "a superoperator's further roots are element-wise trees and, last, its guard `(OR_REDUCE BOOL tree $k)` after an element-wise body, and the body's reduction of other trees after a reduction",
                    );
                    return None;
                }
            }
        }
        let op = SuperOp { params, body, fold, guard, pack: None, more };
        if let Err(m) = op.check() {
            self.err(start, format!("ill-typed superoperator: {m}"));
            return None;
        }
        Some(op)
    }

    /// A pack root, `(PACK T body $k flag...)`, type-checked with `params`: `None` when
    /// the next tokens do not start one, `Some(None)` after an error.
    fn pack_root(&mut self, params: &[Ty], start: Pos) -> Option<Option<SuperOp>> {
        let is_pack = matches!(self.toks.get(self.i + 1).map(|t| &t.tok), Some(Tok::Word(w)) if w == "PACK");
        if !(matches!(self.peek().tok, Tok::LParen) && is_pack) {
            return None;
        }
        self.next();
        self.next();
        let ty_tok = self.next();
        let Some(ty) = (match &ty_tok.tok {
            Tok::Word(w) => Ty::from_name(w).and_then(Ty::vtype),
            _ => None,
        }) else {
            let d = ty_tok.tok.describe();
            self.err(ty_tok.pos, format!("expected INT, FLOAT or BOOL after `PACK`, found {d}"));
            return Some(None);
        };
        let Some(body) = self.expr() else { return Some(None) };
        let s = self.next();
        let Tok::Arg(seg) = s.tok else {
            let d = s.tok.describe();
            self.err(s.pos, format!("expected the `$n` segment descriptor `PACK` keeps elements within, found {d}"));
            return Some(None);
        };
        let mut flags = Vec::new();
        loop {
            match self.peek().tok {
                Tok::RParen => {
                    self.next();
                    break;
                }
                Tok::Eof => {
                    let p = self.peek().pos;
                    self.err(p, "unclosed `(PACK`");
                    return Some(None);
                }
                _ => match self.expr() {
                    Some(f) => flags.push(f),
                    None => return Some(None),
                },
            }
        }
        let op = SuperOp::packing(params.to_vec(), body, seg as usize, flags);
        let checked = op.check().and_then(|t| if t == ty { Ok(t) } else { Err(format!("`PACK` on {} packs a {} tree", ty.name(), t.name())) });
        if let Err(m) = checked {
            self.err(start, format!("ill-typed superoperator: {m}"));
            return Some(None);
        }
        Some(Some(op))
    }

    /// A superoperator's root: `(<op>_REDUCE T expr $k)`, `(<op>_SCAN T expr $k)`, or an
    /// element-wise expression.
    fn fold_or_expr(&mut self) -> Option<(Expr, Option<Fold>)> {
        let head = self.toks.get(self.i + 1).and_then(|t| match &t.tok {
            Tok::Word(w) => Opcode::from_name(w).and_then(Fold::of_opcode).map(|f| (f, w.clone())),
            _ => None,
        });
        let (Tok::LParen, Some(((kind, op), name))) = (&self.peek().tok, head) else {
            return Some((self.expr()?, None));
        };
        self.next();
        self.next();
        let ty_tok = self.next();
        let Some(ty) = (match &ty_tok.tok {
            Tok::Word(w) => Ty::from_name(w).and_then(Ty::vtype),
            _ => None,
        }) else {
            let d = ty_tok.tok.describe();
            self.err(ty_tok.pos, format!("expected INT, FLOAT or BOOL after `{name}`, found {d}"));
            return None;
        };
        let body = self.expr()?;
        let s = self.next();
        let Tok::Arg(seg) = s.tok else {
            let d = s.tok.describe();
            self.err(s.pos, format!("expected the `$n` segment descriptor `{name}` folds over, found {d}"));
            return None;
        };
        let c = self.next();
        if !matches!(c.tok, Tok::RParen) {
            let d = c.tok.describe();
            self.err(c.pos, format!("expected `)` to close `({name}`, found {d}"));
            return None;
        }
        Some((body, Some(Fold { kind, op, ty, seg: seg as usize })))
    }

    fn expr(&mut self) -> Option<Expr> {
        let t = self.next();
        match t.tok {
            Tok::Arg(i) => Some(Expr::Arg(i as usize)),
            Tok::LParen => {
                let h = self.next();
                let Tok::Word(name) = h.tok.clone() else {
                    let d = h.tok.describe();
                    self.err(h.pos, format!("expected an operator name, found {d}"));
                    return None;
                };
                let ty_tok = self.next();
                let ty = match &ty_tok.tok {
                    Tok::Word(w) => Ty::from_name(w).and_then(Ty::vtype),
                    _ => None,
                };
                let Some(ty) = ty else {
                    let d = ty_tok.tok.describe();
                    self.err(ty_tok.pos, format!("expected INT, FLOAT or BOOL after `{name}`, found {d}"));
                    return None;
                };
                let e = if name == "CONST" {
                    let v = self.next();
                    let vt = Ty::from(ty);
                    match literal(vt, &v.tok) {
                        Ok(s) => Expr::Const(s),
                        Err(m) => {
                            self.err(v.pos, m);
                            return None;
                        }
                    }
                } else {
                    let Some(kind) = node_kind(&name) else {
                        self.err(h.pos, format!("`{name}` is not an element-wise operator"));
                        return None;
                    };
                    match kind {
                        NodeKind::Binary(op) => {
                            let a = Box::new(self.expr()?);
                            let b = Box::new(self.expr()?);
                            Expr::Binary { op, ty, a, b }
                        }
                        NodeKind::Unary(op) => Expr::Unary { op, ty, a: Box::new(self.expr()?) },
                        NodeKind::Select => {
                            let f = Box::new(self.expr()?);
                            let a = Box::new(self.expr()?);
                            let b = Box::new(self.expr()?);
                            Expr::Select { ty, f, a, b }
                        }
                    }
                };
                let c = self.next();
                if !matches!(c.tok, Tok::RParen) {
                    let what = if name == "CONST" { "CONST" } else { node_kind(&name).map_or("?", node_name) };
                    let d = c.tok.describe();
                    self.err(c.pos, format!("expected `)` to close `({what}`, found {d}"));
                    return None;
                }
                Some(e)
            }
            other => {
                let d = other.describe();
                self.err(t.pos, format!("expected `$n` or `(` in a superoperator, found {d}"));
                None
            }
        }
    }
}

fn literal(ty: Ty, tok: &Tok) -> Result<HostScalar, String> {
    match (ty, tok) {
        (Ty::Int | Ty::Segdes, Tok::Int(v)) => Ok(HostScalar::Int(*v)),
        (Ty::Int, Tok::Word(w)) => match w.as_str() {
            "STDIN" => Ok(HostScalar::Int(0)),
            "STDOUT" => Ok(HostScalar::Int(1)),
            "STDERR" => Ok(HostScalar::Int(2)),
            "NULL_STREAM" => Ok(HostScalar::Int(-1)),
            _ => Err(format!("bad INT constant `{w}`")),
        },
        (Ty::Float, Tok::Float(v)) => Ok(HostScalar::Float(*v)),
        (Ty::Float, Tok::Int(v)) => {
            Err(format!("bad FLOAT constant `{v}`: a float needs a decimal point (`{v}.0`)"))
        }
        (Ty::Bool, Tok::Word(w)) if w == "T" => Ok(HostScalar::Bool(true)),
        (Ty::Bool, Tok::Word(w)) if w == "F" => Ok(HostScalar::Bool(false)),
        (ty, tok) => Err(format!("bad {} constant {}", ty.name(), tok.describe())),
    }
}

fn build_const(ty: Ty, items: Vec<HostScalar>, list: bool) -> Const {
    let ints = || items.iter().map(|s| if let HostScalar::Int(v) = s { *v } else { 0 }).collect::<Vec<_>>().into();
    match ty {
        Ty::Int | Ty::Char => Const::Int(ints(), list),
        Ty::Segdes => Const::Segdes(ints(), list),
        Ty::Float => Const::Float(
            items.iter().map(|s| if let HostScalar::Float(v) = s { *v } else { 0.0 }).collect::<Vec<_>>().into(),
            list,
        ),
        Ty::Bool => {
            Const::Bool(items.iter().map(|s| matches!(s, HostScalar::Bool(true))).collect::<Vec<_>>().into(), list)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_example() {
        let p = parse("FUNC MAIN\nCONST INT (1 2)\nCONST INT 2\nMAKE_SEGDES\n+_REDUCE INT\nRET\n")
            .expect("parses");
        assert_eq!(p.functions[0].body.len(), 5);
    }

    #[test]
    fn reports_several_errors() {
        let e = parse("FUNC MAIN\nFOO\nCONST FLOAT 3\n+ BOOL\nCALL NOPE\nRET\n").unwrap_err();
        let s: Vec<String> = e.iter().map(|e| e.to_string()).collect();
        assert_eq!(s.len(), 4, "{s:?}");
        assert!(s[0].starts_with("2:1: unknown instruction `FOO`"));
        assert!(s[1].starts_with("3:13: bad FLOAT constant"));
        assert!(s[2].starts_with("4:3: `+` does not take type BOOL"));
        assert!(s[3].starts_with("5:1: call to undefined function `NOPE`"));
    }
}
