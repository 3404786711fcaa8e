//! The string built-ins that need the compiler's help: `@` (`string`), `||` and
//! `exp_string`, and the character functions `lowercase`, `uppercase` and `digitp`.
//!
//! Everything else of spec section 5.13 (`int_string`, `float_string`, `linify`,
//! `wordify`, `string_eql`, `parse_int`, `parse_float`) is NESL code in
//! `prelude_strings.nesl`, compiled like user functions. `@` depends on the type of its
//! argument, so it is composed here by recursion on that type, from the prelude's
//! text functions for the base types and its joining functions for sequences, tuples
//! and datatypes: `@[(1, t)]` calls `int_string` and `bool_string` on all the elements
//! at once, `tuple_string` and `paren_string` on the pairs, and `seq_string` on the
//! sequence. The result is always lifted like every other value, so `@` works at any
//! depth of apply-to-each.

use vcode::{Opcode as O, Ty};
use super::super::builder::{FunBuilder, Slot};
use super::super::gen::{err, Compiler, Ctx, Origin, Val, R};
use super::super::layout::{Lay, SlotKind};
use super::unsupported;
use crate::ast::Span;
use crate::ty::Type;

/// The most elements of a sequence `abrev_string` (and so `print_trace`) writes (CMU
/// NESL's `trace_string_length`).
const TRACE_STRING_LENGTH: i64 = 5;

/// The most levels of nested sequences `abrev_string` writes (CMU NESL's
/// `trace_string_depth`).
const TRACE_STRING_DEPTH: i64 = 3;

/// The number of elements of all instances' sequences of descriptor `seg`.
fn fb_total(fb: &mut FunBuilder, seg: Slot, ctx: Ctx) -> Slot {
    let lens = fb.op1(O::Lengths, &[seg]);
    fb.op1(O::AddReduce.t(Ty::Int), &[lens, ctx.seg])
}

fn string_ty() -> Type {
    Type::seq(Type::Char)
}

impl Compiler<'_> {
    /// The string primitives.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn string_prim(
        &mut self,
        fb: &mut FunBuilder,
        ctx: Ctx,
        name: &str,
        arg: Val,
        aty: &Type,
        rty: &Type,
        span: Span,
    ) -> R<Val> {
        let arg = &arg;
        let rlay = self.lay(rty, span)?;
        let base = |s: Slot| -> R<Val> { Ok(Val::new(vec![s], rlay.clone())) };
        match name {
            "string" => {
                let v = self.force(fb, arg);
                self.text_of(fb, ctx, &v, aty, span)
            }
            "abrev_string" => {
                let v = self.force(fb, arg);
                self.trace_text_of(fb, ctx, &v, aty, TRACE_STRING_DEPTH, span)
            }
            "||" => self.prelude_call(fb, ctx, "pad_string", arg, aty, rty, span),
            "exp_string" => {
                if self.arg_check {
                    let (_, d) = arg.split();
                    let eight = self.int_in(fb, ctx, 8);
                    let ok = fb.op1(O::Le.t(Ty::Int), &[d.one(), eight]);
                    self.check_all(
                        fb,
                        ok,
                        ctx,
                        "In function exp_string, digits_after_point is too large.",
                        10,
                        &[d.one()],
                    );
                }
                self.prelude_call(fb, ctx, "exp_string_digits", arg, aty, rty, span)
            }
            "lowercase" | "uppercase" => {
                let (lo, hi, d) = if name == "lowercase" { (65, 90, 32) } else { (97, 122, -32) };
                let l = self.int_in(fb, ctx, lo);
                let h = self.int_in(fb, ctx, hi);
                let dd = self.int_in(fb, ctx, d);
                let c1 = fb.op1(O::Ge.t(Ty::Int), &[arg.one(), l]);
                let c2 = fb.op1(O::Le.t(Ty::Int), &[arg.one(), h]);
                let c = fb.op1(O::And.t(Ty::Bool), &[c1, c2]);
                let m = fb.op1(O::Add.t(Ty::Int), &[arg.one(), dd]);
                base(fb.op1(O::Select.t(Ty::Int), &[c, m, arg.one()]))
            }
            "digitp" => {
                let l = self.int_in(fb, ctx, 48);
                let h = self.int_in(fb, ctx, 57);
                let c1 = fb.op1(O::Ge.t(Ty::Int), &[arg.one(), l]);
                let c2 = fb.op1(O::Le.t(Ty::Int), &[arg.one(), h]);
                base(fb.op1(O::And.t(Ty::Bool), &[c1, c2]))
            }
            _ => Err(unsupported(span, name)),
        }
    }

    /// Calls the prelude function `name` at argument type `aty`.
    #[allow(clippy::too_many_arguments)]
    fn prelude_call(
        &mut self,
        fb: &mut FunBuilder,
        ctx: Ctx,
        name: &str,
        arg: &Val,
        aty: &Type,
        rty: &Type,
        span: Span,
    ) -> R<Val> {
        if self.info.prelude(name).is_none() {
            return Err(err(span, format!("internal error: the prelude lacks {name}")));
        }
        self.call_fn(fb, Origin::Prelude, name, aty, arg, ctx, rty, span)
    }

    /// A prelude text function of one argument (`[char]` result).
    fn text_call(&mut self, fb: &mut FunBuilder, ctx: Ctx, name: &str, arg: &Val, aty: &Type, span: Span) -> R<Val> {
        self.prelude_call(fb, ctx, name, arg, aty, &string_ty(), span)
    }

    /// A constant string in every instance of `ctx`.
    fn text_const(&mut self, fb: &mut FunBuilder, ctx: Ctx, text: &str) -> R<Val> {
        let v = self.string_const(fb, text.as_bytes());
        self.replicate(fb, &v, ctx)
    }

    /// Concatenates two lifted strings with the prelude's `tuple_string` (`a, b`).
    fn text_join(&mut self, fb: &mut FunBuilder, ctx: Ctx, name: &str, a: Val, b: Val, span: Span) -> R<Val> {
        let pty = Type::pair(string_ty(), string_ty());
        self.text_call(fb, ctx, name, &Val::pair(a, b), &pty, span)
    }

    /// `@v` for a lifted value `v` of ground type `ty`: a lifted `[char]`.
    pub(crate) fn text_of(&mut self, fb: &mut FunBuilder, ctx: Ctx, v: &Val, ty: &Type, span: Span) -> R<Val> {
        match ty {
            Type::Int | Type::Var(_) => self.text_call(fb, ctx, "int_string", v, &Type::Int, span),
            Type::Float => self.text_call(fb, ctx, "float_string", v, ty, span),
            Type::Bool => self.text_call(fb, ctx, "bool_string", v, ty, span),
            Type::Char => self.text_call(fb, ctx, "char_string", v, ty, span),
            Type::Fun(..) => self.text_const(fb, ctx, "function"), // as CMU NESL writes it
            Type::Seq(e) => {
                let (seg, data) = v.seq();
                // The elements of all instances form one context of their own.
                let lens = fb.op1(O::Lengths, &[seg]);
                let total = fb.op1(O::AddReduce.t(Ty::Int), &[lens, ctx.seg]);
                let ectx = Ctx {
                    seg: fb.op1(O::MakeSegdes, &[total]),
                    unit: false,
                };
                let texts = self.text_of(fb, ectx, &data, e, span)?;
                let nested = Val::mk_seq(seg, texts);
                self.text_call(fb, ctx, "seq_string", &nested, &Type::seq(string_ty()), span)
            }
            Type::Pair(..) => {
                let body = self.tuple_body(fb, ctx, v, ty, span)?;
                self.text_call(fb, ctx, "paren_string", &body, &string_ty(), span)
            }
            Type::Data(name, args) => {
                let fields = if name == "stream" && args.is_empty() {
                    Type::Int
                } else {
                    match self.info.fields(name, args) {
                        Some(f) => f,
                        None => return Err(err(span, format!("unknown datatype {name}"))),
                    }
                };
                let body = match &fields {
                    Type::Pair(..) => self.tuple_body(fb, ctx, v, &fields, span)?,
                    _ => self.text_of(fb, ctx, v, &fields, span)?,
                };
                let label = self.text_const(fb, ctx, name)?;
                let inner = self.text_call(fb, ctx, "paren_string", &body, &string_ty(), span)?;
                let cat = Val::pair(label, inner);
                self.text_call(fb, ctx, "cat_string", &cat, &Type::pair(string_ty(), string_ty()), span)
            }
        }
    }

    /// `abrev_string(v)`, the text `print_trace` writes (as CMU NESL's library does):
    /// `@v`, except that a sequence shows at most its first [`TRACE_STRING_LENGTH`]
    /// elements followed by `...`, and a sequence nested more than `depth` levels deep
    /// is written `**`.
    fn trace_text_of(&mut self, fb: &mut FunBuilder, ctx: Ctx, v: &Val, ty: &Type, depth: i64, span: Span) -> R<Val> {
        match ty {
            Type::Seq(e) => {
                if depth == 0 {
                    return self.text_const(fb, ctx, "**");
                }
                let (seg, _) = v.seq();
                let lens = fb.op1(O::Lengths, &[seg]);
                let most = self.int_in(fb, ctx, TRACE_STRING_LENGTH);
                let short = fb.op1(O::Lt.t(Ty::Int), &[lens, most]);
                let n = fb.op1(O::Select.t(Ty::Int), &[short, lens, most]);
                let z = self.int_in(fb, ctx, 0);
                let head = self.subseq_raw(fb, ctx, v, z, n);
                let (hseg, hdata) = head.seq();
                let total = fb_total(fb, hseg, ctx);
                let ectx = Ctx {
                    seg: fb.op1(O::MakeSegdes, &[total]),
                    unit: false,
                };
                let texts = self.trace_text_of(fb, ectx, &hdata, e, depth - 1, span)?;
                let arg = Val::pair(Val::mk_seq(hseg, texts), Val::base(lens, SlotKind::Int));
                let aty = Type::pair(Type::seq(string_ty()), Type::Int);
                self.text_call(fb, ctx, "trace_seq_string", &arg, &aty, span)
            }
            Type::Pair(..) => {
                let body = self.trace_tuple_body(fb, ctx, v, ty, depth, span)?;
                self.text_call(fb, ctx, "paren_string", &body, &string_ty(), span)
            }
            _ => self.text_of(fb, ctx, v, ty, span),
        }
    }

    /// [`Self::tuple_body`] for [`Self::trace_text_of`].
    fn trace_tuple_body(&mut self, fb: &mut FunBuilder, ctx: Ctx, v: &Val, ty: &Type, depth: i64, span: Span) -> R<Val> {
        let Type::Pair(a, b) = ty else {
            return self.trace_text_of(fb, ctx, v, ty, depth, span);
        };
        let (x, y) = v.split();
        let xs = self.trace_text_of(fb, ctx, &x, a, depth, span)?;
        let ys = self.trace_tuple_body(fb, ctx, &y, b, depth, span)?;
        self.text_join(fb, ctx, "tuple_string", xs, ys, span)
    }

    /// The text of a tuple without its parentheses: `1, 2, 3` for `(1, (2, 3))` (a pair
    /// in the second position is printed flat, as the top level prints it).
    fn tuple_body(&mut self, fb: &mut FunBuilder, ctx: Ctx, v: &Val, ty: &Type, span: Span) -> R<Val> {
        let Type::Pair(a, b) = ty else {
            return self.text_of(fb, ctx, v, ty, span);
        };
        if !matches!(v.lay, Lay::Pair(..)) {
            return Err(err(span, "internal error: a tuple value without a tuple layout"));
        }
        let (x, y) = v.split();
        let xs = self.text_of(fb, ctx, &x, a, span)?;
        let ys = self.tuple_body(fb, ctx, &y, b, span)?;
        self.text_join(fb, ctx, "tuple_string", xs, ys, span)
    }
}
