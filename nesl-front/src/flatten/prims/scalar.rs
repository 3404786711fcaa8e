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
                    self.check_all_data(fb, ok, ctx.seg, "Divide by zero.", 3, &[]);
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
                    self.check_all_data(fb, ok, ctx.seg, &msg, 3, &[]);
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
                    self.check_all_data(fb, ok, ctx.seg, msg, code, &[]);
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
                    self.check_all_data(fb, ok, ctx.seg, "The power must be nonnegative for ^ .", 7, &[b.one()]);
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
                    self.check_all_data(fb, ok, ctx.seg, "Rand only works with positive numbers.", code, &data);
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
                    self.check_all_data(fb, ok, ctx.seg, "The second argument for the function HASH must be positive.", 9, &[l.one()]);
                }
                let h = match self.hash_of(fb, &x) {
                    Some(h) => h,
                    None => self.int_in(fb, ctx, 0),
                };
                // 30 bits: a positive mask on CMU's 32-bit VCODE interpreter too.
                let mask = self.int_in(fb, ctx, 0x3fff_ffff);
                let pos = fb.op1(O::And.t(Ty::Int), &[h, mask]);
                base(fb.op1(O::Mod, &[pos, l.one()]))
            }
            // CMU's hash_scalar: an int is its own hash, a bool its btoi, a character its
            // code, a float hash_float (the prelude); the sequence hashes and anything
            // else use the full-range hash behind `hash`.
            "hash_scalar" | "hash_vector" | "cheap_hash_vector" | "hashinternal" => {
                let h = match &arg.lay {
                    Lay::Base(SlotKind::Int) if name == "hash_scalar" => Some(arg.one()),
                    Lay::Base(SlotKind::Bool) if name == "hash_scalar" => Some(fb.op1(O::BToI, &[arg.one()])),
                    Lay::Base(SlotKind::Float) if name == "hash_scalar" => {
                        let fty = Type::Float;
                        return self.builtin(fb, ctx, "hash_float", arg.clone(), &fty, rty, span);
                    }
                    _ => self.hash_of(fb, &arg),
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

    /// A hash of every instance of a lifted value (one INT per instance), or `None`
    /// for a value without slots.
    fn hash_of(&mut self, fb: &mut FunBuilder, v: &Val) -> Option<Slot> {
        match &v.lay {
            Lay::Unit | Lay::Fun(_) => None,
            Lay::Base(SlotKind::Float) => {
                let scale = self.float_like(fb, 65536.0, v.one());
                let x = fb.op1(O::Mul.t(Ty::Float), &[v.one(), scale]);
                let i = fb.op1(O::Trunc, &[x]);
                Some(self.mix(fb, i))
            }
            Lay::Base(SlotKind::Bool) => {
                let i = fb.op1(O::BToI, &[v.one()]);
                Some(self.mix(fb, i))
            }
            Lay::Base(_) => Some(self.mix(fb, v.one())),
            Lay::Pair(..) => {
                let (a, b) = v.split();
                let ha = self.hash_of(fb, &a);
                let hb = self.hash_of(fb, &b);
                match (ha, hb) {
                    (Some(x), Some(y)) => {
                        let k = self.int_like_slot(fb, 31, x);
                        let x31 = fb.op1(O::Mul.t(Ty::Int), &[x, k]);
                        let s = fb.op1(O::Add.t(Ty::Int), &[x31, y]);
                        Some(self.mix(fb, s))
                    }
                    (x, y) => x.or(y),
                }
            }
            Lay::Seq(_) => {
                let v = self.force(fb, v);
                let (seg, data) = v.seq();
                let lens = fb.op1(O::Lengths, &[seg]);
                let m = fb.op1(O::Length.t(Ty::Int), &[lens]);
                let sm = fb.op1(O::MakeSegdes, &[m]);
                let k = self.int_like_slot(fb, 131, lens);
                let lh = fb.op1(O::Mul.t(Ty::Int), &[lens, k]);
                let Some(hd) = self.hash_of(fb, &data) else {
                    return Some(self.mix(fb, lh));
                };
                // Element hashes weighted by their position, summed per sequence.
                let z = self.cint(fb, 0);
                let o = self.cint(fb, 1);
                let zs = fb.op1(O::Dist.t(Ty::Int), &[z, sm]);
                let os = fb.op1(O::Dist.t(Ty::Int), &[o, sm]);
                let pos = fb.op1(O::Index, &[zs, os, seg]);
                let kp = self.int_like_slot(fb, 7919, pos);
                let pw = fb.op1(O::Mul.t(Ty::Int), &[pos, kp]);
                let he = fb.op1(O::Add.t(Ty::Int), &[hd, pw]);
                let he = self.mix(fb, he);
                let sum = fb.op1(O::AddReduce.t(Ty::Int), &[he, seg]);
                let s = fb.op1(O::Add.t(Ty::Int), &[sum, lh]);
                Some(self.mix(fb, s))
            }
        }
    }

    /// A mix of an INT vector: two rounds of xor-shift and multiply (wrapping; VCODE's
    /// `RSHIFT` is arithmetic, which still spreads the bits). The multiplier is a 32-bit
    /// constant: CMU's VCODE interpreter keeps the low 32 bits of a constant.
    fn mix(&mut self, fb: &mut FunBuilder, x: Slot) -> Slot {
        let mut y = x;
        for (shift, mult) in [(16, 0x045d_9f3b_i64), (16, 0x045d_9f3b_i64)] {
            let s = self.int_like_slot(fb, shift, y);
            let sh = fb.op1(O::Rshift, &[y, s]);
            let z = fb.op1(O::Xor.t(Ty::Int), &[y, sh]);
            let k = self.int_like_slot(fb, mult, z);
            y = fb.op1(O::Mul.t(Ty::Int), &[z, k]);
        }
        let s = self.int_like_slot(fb, 16, y);
        let sh = fb.op1(O::Rshift, &[y, s]);
        fb.op1(O::Xor.t(Ty::Int), &[y, sh])
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
