//! Scalar primitives: arithmetic, comparison, logic, conversions, constants, random
//! numbers, `select`, `eql`, `identity` and hashing, one element-wise instruction or a
//! short sequence of them per instance.

use vcode::{Const, Opcode as O, Ty};
use super::super::builder::{FunBuilder, Slot};
use super::super::gen::{err, num, Compiler, Ctx, Val, R};
use super::super::layout::{Lay, SlotKind};
use super::unsupported;
use crate::ast::Span;
use crate::ty::Type;

impl Compiler<'_> {
    /// A builtin constant (`pi`, `max_int`, ...) or a builtin function used as a value.
    pub(crate) fn builtin_const(&mut self, fb: &mut FunBuilder, ctx: Ctx, name: &str, ty: &Type, span: Span) -> R<Val> {
        let (k, c) = match name {
            "pi" => (SlotKind::Float, Const::float(std::f64::consts::PI)),
            "max_int" => (SlotKind::Int, Const::int(2147483647)),
            "min_int" => (SlotKind::Int, Const::int(-2147483648)),
            "space" => (SlotKind::Int, Const::int(32)),
            "newline" => (SlotKind::Int, Const::int(10)),
            "tab" => (SlotKind::Int, Const::int(9)),
            "nullstr" => (SlotKind::Int, Const::int(-1)),
            "stdin" => (SlotKind::Int, Const::int(0)),
            "stdout" | "stderr" => (SlotKind::Int, Const::int(2)),
            _ if crate::check::builtins::window_constant(name).is_some() => {
                (SlotKind::Int, Const::int(crate::check::builtins::window_constant(name).unwrap_or(0)))
            }
            _ => {
                if matches!(ty, Type::Fun(..)) {
                    return Ok(Val::new(Vec::new(), Lay::Unit));
                }
                return Err(err(span, format!("the builtin {name} is not supported yet")));
            }
        };
        Ok(Val::base(self.const_in(fb, ctx, c), k))
    }

    /// The scalar primitives.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn scalar_prim(&mut self, fb: &mut FunBuilder, ctx: Ctx, name: &str, arg: Val, _aty: &Type, rty: &Type, span: Span) -> R<Val> {
        let rlay = self.lay(rty, span)?;
        let (a, b) = arg.split();
        // The base kind of the (first) argument, for overloaded scalar operations.
        let k1 = match &arg.lay {
            Lay::Pair(x, _) => match **x {
                Lay::Base(k) => k,
                _ => SlotKind::Int,
            },
            Lay::Base(k) => *k,
            _ => SlotKind::Int,
        };
        let kw = k1.ty();
        let base = |s: Slot| Ok(Val::new(vec![s], rlay.clone()));
        macro_rules! bin {
            ($op:expr) => {{
                let s = fb.op1($op, &[a.one(), b.one()]);
                base(s)
            }};
        }
        macro_rules! un {
            ($op:expr) => {{
                let s = fb.op1($op, &[arg.one()]);
                base(s)
            }};
        }
        match name {
            "+" => bin!(O::Add.t(kw)),
            "-" => bin!(O::Sub.t(kw)),
            "*" => bin!(O::Mul.t(kw)),
            "/" => {
                if self.arg_check {
                    let z = self.const_in(fb, ctx, num(k1, 0));
                    let ok = fb.op1(O::Ne.t(kw), &[b.one(), z]);
                    self.check_all(fb, ok, ctx, "Divide by zero.", 3, &[]);
                }
                bin!(O::Div.t(kw))
            }
            "==" => bin!(O::Eq.t(kw)),
            "/=" => bin!(O::Ne.t(kw)),
            "<" | ">" | "<=" | ">=" => bin!(compare_op(name).t(kw)),
            "and" | "or" | "xor" => bin!(match name {
                "and" => O::And,
                "or" => O::Or,
                _ => O::Xor,
            }
            .t(kw)),
            "nand" | "nor" => {
                let op = if name == "nand" { O::And } else { O::Or };
                let x = fb.op1(op.t(kw), &[a.one(), b.one()]);
                base(fb.op1(O::Not.t(kw), &[x]))
            }
            "not" => un!(O::Not.t(kw)),
            "negate" => {
                let z = self.const_in(fb, ctx, num(k1, 0));
                base(fb.op1(O::Sub.t(kw), &[z, arg.one()]))
            }
            "abs" => {
                let z = self.const_in(fb, ctx, num(k1, 0));
                let neg = fb.op1(O::Sub.t(kw), &[z, arg.one()]);
                let lt = fb.op1(O::Lt.t(kw), &[arg.one(), z]);
                base(fb.op1(O::Select.t(kw), &[lt, neg, arg.one()]))
            }
            "diff" => {
                let d = fb.op1(O::Sub.t(kw), &[a.one(), b.one()]);
                let z = self.const_in(fb, ctx, num(k1, 0));
                let neg = fb.op1(O::Sub.t(kw), &[z, d]);
                let lt = fb.op1(O::Lt.t(kw), &[d, z]);
                base(fb.op1(O::Select.t(kw), &[lt, neg, d]))
            }
            "max" | "min" => {
                let c = fb.op1(if name == "max" { O::Ge } else { O::Le }.t(kw), &[a.one(), b.one()]);
                base(fb.op1(O::Select.t(kw), &[c, a.one(), b.one()]))
            }
            "rem" | "mod" => {
                if self.arg_check {
                    let z = self.int_in(fb, ctx, 0);
                    let ok = fb.op1(O::Ne.t(Ty::Int), &[b.one(), z]);
                    let msg = format!("Divide by zero in function {}.", name.to_uppercase());
                    self.check_all(fb, ok, ctx, &msg, 3, &[]);
                }
                let r = fb.op1(O::Mod, &[a.one(), b.one()]);
                if name == "rem" {
                    return base(r);
                }
                // mod: the sign of the divisor.
                let z = self.int_in(fb, ctx, 0);
                let nz = fb.op1(O::Ne.t(Ty::Int), &[r, z]);
                let rn = fb.op1(O::Lt.t(Ty::Int), &[r, z]);
                let bn = fb.op1(O::Lt.t(Ty::Int), &[b.one(), z]);
                let diff = fb.op1(O::Xor.t(Ty::Bool), &[rn, bn]);
                let fix = fb.op1(O::And.t(Ty::Bool), &[nz, diff]);
                let rb = fb.op1(O::Add.t(Ty::Int), &[r, b.one()]);
                base(fb.op1(O::Select.t(Ty::Int), &[fix, rb, r]))
            }
            "lshift" => bin!(O::Lshift),
            "rshift" => bin!(O::Rshift),
            "plusp" | "minusp" | "zerop" => {
                let z = self.const_in(fb, ctx, num(k1, 0));
                let op = match name {
                    "plusp" => O::Gt,
                    "minusp" => O::Lt,
                    _ => O::Eq,
                };
                base(fb.op1(op.t(kw), &[arg.one(), z]))
            }
            "oddp" | "evenp" => {
                let one = self.int_in(fb, ctx, 1);
                let x = fb.op1(O::And.t(Ty::Int), &[arg.one(), one]);
                base(fb.op1(if name == "oddp" { O::Eq } else { O::Ne }.t(Ty::Int), &[x, one]))
            }
            "btoi" => un!(O::BToI),
            "float" => un!(O::IToF),
            "code_char" | "char_code" => Ok(Val::new(arg.s.clone(), rlay)),
            "floor" | "ceil" | "trunc" | "round" => un!(unary_op(name)),
            "sqrt" | "ln" => {
                if self.arg_check {
                    let z = self.const_in(fb, ctx, Const::float(0.0));
                    let ok = fb.op1(O::Ge.t(Ty::Float), &[arg.one(), z]);
                    let msg = if name == "sqrt" { "Sqrt of negative number." } else { "Ln of negative number." };
                    let code = if name == "sqrt" { 11 } else { 12 };
                    self.check_all(fb, ok, ctx, msg, code, &[]);
                }
                un!(if name == "sqrt" { O::Sqrt } else { O::Log })
            }
            "exp" | "sin" | "cos" | "tan" | "asin" | "acos" | "atan" | "sinh" | "cosh" | "tanh" => {
                un!(unary_op(name))
            }
            "log" => {
                let x = fb.op1(O::Log, &[a.one()]);
                let y = fb.op1(O::Log, &[b.one()]);
                base(fb.op1(O::Div.t(Ty::Float), &[x, y]))
            }
            "expt" => {
                let x = fb.op1(O::Log, &[a.one()]);
                let y = fb.op1(O::Mul.t(Ty::Float), &[x, b.one()]);
                base(fb.op1(O::Exp, &[y]))
            }
            "reciprocal" => {
                let one = self.const_in(fb, ctx, Const::float(1.0));
                base(fb.op1(O::Div.t(Ty::Float), &[one, arg.one()]))
            }
            "isqrt" => {
                let f = fb.op1(O::IToF, &[arg.one()]);
                let s = fb.op1(O::Sqrt, &[f]);
                base(fb.op1(O::Floor, &[s]))
            }
            "^" => {
                if self.arg_check {
                    let z = self.int_in(fb, ctx, 0);
                    let ok = fb.op1(O::Ge.t(Ty::Int), &[b.one(), z]);
                    self.check_all(fb, ok, ctx, "The power must be nonnegative for ^ .", 7, &[b.one()]);
                }
                let one = self.const_in(fb, ctx, num(k1, 1));
                let f = self.pow_fn(k1);
                let s = fb.call(&f, &[one, a.one(), b.one(), ctx.seg], 1)[0];
                base(s)
            }
            "gcd" => {
                let f = self.gcd_fn();
                let z = self.int_in(fb, ctx, 0);
                let abs = |fb: &mut FunBuilder, x: Slot| {
                    let n = fb.op1(O::Sub.t(Ty::Int), &[z, x]);
                    let lt = fb.op1(O::Lt.t(Ty::Int), &[x, z]);
                    fb.op1(O::Select.t(Ty::Int), &[lt, n, x])
                };
                let x = abs(fb, a.one());
                let y = abs(fb, b.one());
                base(fb.call(&f, &[x, y, ctx.seg], 1)[0])
            }
            "rand" => {
                if self.arg_check {
                    let z = self.const_in(fb, ctx, num(k1, 0));
                    let ok = fb.op1(O::Gt.t(kw), &[arg.one(), z]);
                    // A float argument cannot travel in the (INT) check record.
                    let (code, data) = if k1 == SlotKind::Float { (13, vec![]) } else { (8, vec![arg.one()]) };
                    self.check_all(fb, ok, ctx, "Rand only works with positive numbers.", code, &data);
                }
                if k1 == SlotKind::Float {
                    let big = self.int_in(fb, ctx, 1 << 30);
                    let r = fb.op1(O::Rand, &[big]);
                    let rf = fb.op1(O::IToF, &[r]);
                    let x = fb.op1(O::Mul.t(Ty::Float), &[arg.one(), rf]);
                    let d = self.const_in(fb, ctx, Const::float((1u64 << 30) as f64));
                    base(fb.op1(O::Div.t(Ty::Float), &[x, d]))
                } else {
                    un!(O::Rand)
                }
            }
            "select" => {
                let (x, y) = b.split();
                self.select_val(fb, ctx, a.one(), &x, &y)
            }
            "identity" => {
                let z = self.zeros(fb, &arg.lay, ctx.seg);
                Ok(z)
            }
            // ----- number conversions of CMU's library, by the argument's type -----
            "one" | "zero" => {
                let k = if name == "one" { 1 } else { 0 };
                base(self.const_in(fb, ctx, num(k1, k)))
            }
            "float_num" => match k1 {
                SlotKind::Float => base(arg.one()),
                _ => un!(O::IToF),
            },
            "int_to_any" | "float_to_any" => {
                // The second argument only says the result type.
                let to = match &rlay {
                    Lay::Base(k) => *k,
                    _ => SlotKind::Int,
                };
                match (name, to) {
                    ("int_to_any", SlotKind::Float) => base(fb.op1(O::IToF, &[a.one()])),
                    ("float_to_any", SlotKind::Int) => base(fb.op1(O::Round, &[a.one()])),
                    _ => base(a.one()),
                }
            }
            "eql" => base(self.eql(fb, ctx, &a, &b)),
            "hash" => {
                let (x, l) = arg.split();
                if self.arg_check {
                    let z = self.int_in(fb, ctx, 0);
                    let ok = fb.op1(O::Gt.t(Ty::Int), &[l.one(), z]);
                    self.check_all(fb, ok, ctx, "The second argument for the function HASH must be positive.", 9, &[l.one()]);
                }
                let h = match self.hash_of(fb, &x) {
                    Some(h) => h,
                    None => self.int_in(fb, ctx, 0),
                };
                // CMU's `rem(max_int and hashinternal(a), l)` with its 32-bit max_int.
                let mask = self.int_in(fb, ctx, 0x7fff_ffff);
                let pos = fb.op1(O::And.t(Ty::Int), &[h, mask]);
                base(fb.op1(O::Mod, &[pos, l.one()]))
            }
            // CMU's hash_scalar: an int is its own hash, a bool its btoi, a character its
            // code, a float hash_float (the prelude); hashinternal, cheap_hash_vector and
            // hash_vector as CMU's vector-ops.lnesl computes them (`hash_with`).
            "hash_scalar" | "hash_vector" | "cheap_hash_vector" | "hashinternal" => {
                let h = match &arg.lay {
                    Lay::Base(SlotKind::Int) if name == "hash_scalar" => Some(arg.one()),
                    Lay::Base(SlotKind::Bool) if name == "hash_scalar" => Some(fb.op1(O::BToI, &[arg.one()])),
                    Lay::Base(SlotKind::Float) if name == "hash_scalar" => {
                        let fty = Type::Float;
                        return self.builtin(fb, ctx, "hash_float", arg.clone(), &fty, rty, span);
                    }
                    _ => self.hash_with(fb, &arg, name == "hash_vector"),
                };
                match h {
                    Some(h) => base(h),
                    None => base(self.int_in(fb, ctx, 0)),
                }
            }
            _ => Err(unsupported(span, name)),
        }
    }

    /// `select(flag, a, b)` on lifted values of any layout.
    fn select_val(&mut self, fb: &mut FunBuilder, ctx: Ctx, f: Slot, a: &Val, b: &Val) -> R<Val> {
        match &a.lay {
            Lay::Unit | Lay::Fun(_) => Ok(a.clone()),
            Lay::Base(k) => Ok(Val::base(fb.op1(O::Select.t(k.ty()), &[f, a.one(), b.one()]), *k)),
            Lay::Pair(..) => {
                let (a1, a2) = a.split();
                let (b1, b2) = b.split();
                let x = self.select_val(fb, ctx, f, &a1, &b1)?;
                let y = self.select_val(fb, ctx, f, &a2, &b2)?;
                Ok(Val::pair(x, y))
            }
            Lay::Seq(_) => {
                let io = self.iota(fb, ctx.seg);
                let n = self.count(fb, ctx.seg);
                let nd = fb.op1(O::Dist.t(Ty::Int), &[n, ctx.seg]);
                let ib = fb.op1(O::Add.t(Ty::Int), &[io, nd]);
                let g = fb.op1(O::Select.t(Ty::Int), &[f, io, ib]);
                let cat = self.append(fb, a, b);
                Ok(self.gather(fb, &cat, g))
            }
        }
    }

    /// `POW_<k>(r, a, p, ctx)`: `r * a^p` element-wise by repeated squaring, looping
    /// (by recursion) while any exponent is positive.
    fn pow_fn(&mut self, k: SlotKind) -> String {
        let key = format!("POW_{}", k.keyword());
        if self.helpers.contains_key(&key) {
            return key;
        }
        self.helpers.insert(key.clone(), key.clone());
        let kw = k.ty();
        let (mut fb, a) = FunBuilder::new(4);
        let (r, x, p, ctx) = (a[0], a[1], a[2], a[3]);
        let c = Ctx { seg: ctx, unit: false };
        let z = self.int_in(&mut fb, c, 0);
        let pos = fb.op1(O::Gt.t(Ty::Int), &[p, z]);
        let any = fb.op1(O::OrReduce.t(Ty::Bool), &[pos, ctx]);
        let mut m = fb.begin_if(any);
        let one = self.int_in(&mut fb, c, 1);
        let two = self.int_in(&mut fb, c, 2);
        let lo = fb.op1(O::And.t(Ty::Int), &[p, one]);
        let odd = fb.op1(O::Eq.t(Ty::Int), &[lo, one]);
        let rx = fb.op1(O::Mul.t(kw), &[r, x]);
        let r2 = fb.op1(O::Select.t(kw), &[odd, rx, r]);
        let x2 = fb.op1(O::Mul.t(kw), &[x, x]);
        let p2 = fb.op1(O::Div.t(Ty::Int), &[p, two]);
        let res = fb.call(&key, &[r2, x2, p2, ctx], 1)[0];
        fb.else_(&mut m, &[res]);
        let out = fb.end_if(m, &[r]);
        self.funcs.push(fb.finish(&key, &out));
        key
    }

    /// `GCD(a, b, ctx)`: Euclid's algorithm element-wise on non-negative integers.
    fn gcd_fn(&mut self) -> String {
        let key = "GCD_I".to_string();
        if self.helpers.contains_key(&key) {
            return key;
        }
        self.helpers.insert(key.clone(), key.clone());
        let (mut fb, a) = FunBuilder::new(3);
        let (x, y, ctx) = (a[0], a[1], a[2]);
        let c = Ctx { seg: ctx, unit: false };
        let z = self.int_in(&mut fb, c, 0);
        let nz = fb.op1(O::Ne.t(Ty::Int), &[y, z]);
        let any = fb.op1(O::OrReduce.t(Ty::Bool), &[nz, ctx]);
        let mut m = fb.begin_if(any);
        let one = self.int_in(&mut fb, c, 1);
        let ys = fb.op1(O::Select.t(Ty::Int), &[nz, y, one]);
        let r = fb.op1(O::Mod, &[x, ys]);
        let x2 = fb.op1(O::Select.t(Ty::Int), &[nz, y, x]);
        let y2 = fb.op1(O::Select.t(Ty::Int), &[nz, r, y]);
        let res = fb.call(&key, &[x2, y2, ctx], 1)[0];
        fb.else_(&mut m, &[res]);
        let out = fb.end_if(m, &[x]);
        self.funcs.push(fb.finish(&key, &out));
        key
    }

    /// CMU NESL's `hashinternal` of every instance of a lifted value (one INT per
    /// instance), or `None` for a value without slots: an int is its own hash, a bool
    /// its btoi, a character its code, a float `hash_float`; a pair `h1 + 991892311 *
    /// h2`; a sequence (CMU's `cheap_hash_vector`) the sum of its elements' hashes
    /// weighted by `j^3`, `j = i + 991892313` at position `i` (`hash_vector`: weighted
    /// by `572197^i`). Arithmetic wraps at 64 bits where CMU's wraps at 32: the low 32
    /// bits agree, so `hash` (the low 31 bits, modulo the range) is CMU's.
    fn hash_of(&mut self, fb: &mut FunBuilder, v: &Val) -> Option<Slot> {
        self.hash_with(fb, v, false)
    }

    fn hash_with(&mut self, fb: &mut FunBuilder, v: &Val, powers: bool) -> Option<Slot> {
        match &v.lay {
            Lay::Unit | Lay::Fun(_) => None,
            Lay::Base(SlotKind::Float) => Some(self.hash_float_slot(fb, v.one())),
            Lay::Base(SlotKind::Bool) => Some(fb.op1(O::BToI, &[v.one()])),
            Lay::Base(_) => Some(v.one()),
            Lay::Pair(..) => {
                let (a, b) = v.split();
                let ha = self.hash_of(fb, &a);
                let hb = self.hash_of(fb, &b);
                match (ha, hb) {
                    (Some(x), Some(y)) => {
                        let k = self.int_like_slot(fb, 991_892_311, y);
                        let ky = fb.op1(O::Mul.t(Ty::Int), &[y, k]);
                        Some(fb.op1(O::Add.t(Ty::Int), &[x, ky]))
                    }
                    (Some(x), None) => Some(x),
                    (None, Some(y)) => {
                        let k = self.int_like_slot(fb, 991_892_311, y);
                        Some(fb.op1(O::Mul.t(Ty::Int), &[y, k]))
                    }
                    (None, None) => None,
                }
            }
            Lay::Seq(_) => {
                let v = self.force(fb, v);
                let (seg, data) = v.seq();
                let lens = fb.op1(O::Lengths, &[seg]);
                let Some(hd) = self.hash_of(fb, &data) else {
                    // Elements without slots hash to 0, as do their sums.
                    let z = self.int_like_slot(fb, 0, lens);
                    return Some(z);
                };
                let weight = if powers {
                    // 572197^i: an exclusive product scan of 572197s per sequence.
                    let k = self.int_like_slot(fb, 572_197, hd);
                    fb.op1(O::MulScan.t(Ty::Int), &[k, seg])
                } else {
                    // INDEX takes one start and one stride per sequence.
                    let n = fb.op1(O::Length.t(Ty::Int), &[lens]);
                    let sn = fb.op1(O::MakeSegdes, &[n]);
                    let start = self.cint(fb, 991_892_313);
                    let o = self.cint(fb, 1);
                    let starts = fb.op1(O::Dist.t(Ty::Int), &[start, sn]);
                    let ones = fb.op1(O::Dist.t(Ty::Int), &[o, sn]);
                    let j = fb.op1(O::Index, &[starts, ones, seg]);
                    let j2 = fb.op1(O::Mul.t(Ty::Int), &[j, j]);
                    fb.op1(O::Mul.t(Ty::Int), &[j2, j])
                };
                let he = fb.op1(O::Mul.t(Ty::Int), &[hd, weight]);
                Some(fb.op1(O::AddReduce.t(Ty::Int), &[he, seg]))
            }
        }
    }

    /// CMU's `hash_float` of a FLOAT vector: 0 for zero, else `trunc(a / 2^(e - 30)) - e`
    /// for `a = |x|` and `e = trunc(log(a, 2.0))`, with `log` and `expt` as the library
    /// computes them (`ln(a) / ln(2)`, `exp(ln(2) * p)`).
    fn hash_float_slot(&mut self, fb: &mut FunBuilder, x: Slot) -> Slot {
        let zero = self.float_like(fb, 0.0, x);
        let one = self.float_like(fb, 1.0, x);
        let two = self.float_like(fb, 2.0, x);
        let is_zero = fb.op1(O::Eq.t(Ty::Float), &[x, zero]);
        let neg = fb.op1(O::Sub.t(Ty::Float), &[zero, x]);
        let lt = fb.op1(O::Lt.t(Ty::Float), &[x, zero]);
        let mag = fb.op1(O::Select.t(Ty::Float), &[lt, neg, x]);
        // A zero takes the path of 1.0 (no infinities), then gets 0.
        let a = fb.op1(O::Select.t(Ty::Float), &[is_zero, one, mag]);
        let ln_a = fb.op1(O::Log, &[a]);
        let ln2 = fb.op1(O::Log, &[two]);
        let lg = fb.op1(O::Div.t(Ty::Float), &[ln_a, ln2]);
        let e = fb.op1(O::Trunc, &[lg]);
        let thirty = self.int_like_slot(fb, 30, e);
        let p = fb.op1(O::Sub.t(Ty::Int), &[e, thirty]);
        let pf = fb.op1(O::IToF, &[p]);
        let ln2b = fb.op1(O::Log, &[two]);
        let q = fb.op1(O::Mul.t(Ty::Float), &[ln2b, pf]);
        let scale = fb.op1(O::Exp, &[q]);
        let sig = fb.op1(O::Div.t(Ty::Float), &[a, scale]);
        let sigi = fb.op1(O::Trunc, &[sig]);
        let h = fb.op1(O::Sub.t(Ty::Int), &[sigi, e]);
        let z = self.int_like_slot(fb, 0, h);
        fb.op1(O::Select.t(Ty::Int), &[is_zero, z, h])
    }


    /// The integer `k` once per element of the INT vector `like`.
    fn int_like_slot(&self, fb: &mut FunBuilder, k: i64, like: Slot) -> Slot {
        let n = fb.op1(O::Length.t(Ty::Int), &[like]);
        let s = fb.op1(O::MakeSegdes, &[n]);
        let c = self.cint(fb, k);
        fb.op1(O::Dist.t(Ty::Int), &[c, s])
    }

    /// The float `x` once per element of the FLOAT vector `like`.
    fn float_like(&self, fb: &mut FunBuilder, x: f64, like: Slot) -> Slot {
        let n = fb.op1(O::Length.t(Ty::Float), &[like]);
        let s = fb.op1(O::MakeSegdes, &[n]);
        let c = fb.konst(Const::float(super::super::gen::vcode_float(x)));
        fb.op1(O::Dist.t(Ty::Float), &[c, s])
    }
}

/// The comparison instruction of a NESL comparison operator (`<`, `>`, `<=`, `>=`).
fn compare_op(name: &str) -> O {
    match name {
        "<" => O::Lt,
        ">" => O::Gt,
        "<=" => O::Le,
        _ => O::Ge,
    }
}

/// The unary float instruction of a NESL function of the same name (`floor`, `sin`, ...).
fn unary_op(name: &str) -> O {
    match name {
        "floor" => O::Floor,
        "ceil" => O::Ceil,
        "trunc" => O::Trunc,
        "round" => O::Round,
        "exp" => O::Exp,
        "sin" => O::Sin,
        "cos" => O::Cos,
        "tan" => O::Tan,
        "asin" => O::Asin,
        "acos" => O::Acos,
        "atan" => O::Atan,
        "sinh" => O::Sinh,
        "cosh" => O::Cosh,
        _ => O::Tanh,
    }
}
