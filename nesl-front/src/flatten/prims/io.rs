//! Terminal output (`print_char`, `print_string`) and the built-ins with effects beyond
//! their result: `error`, `rand_seed`, the timers, file and stream I/O (spec section
//! 5.14, VCODE instructions of vcode.md section 7.9), processes and the environment.
//!
//! The composite I/O functions (`open_check`, `write_string_to_file`, `print`, ...)
//! are NESL code in the prelude; what is here maps one built-in onto the VCODE I/O
//! instructions. I/O instructions report failure as an error message and a flag, which
//! become the `(value, ok, message)` tuples of NESL.
//!
//! The serial-only built-ins (the checker refuses them inside an apply-to-each) always
//! run with one instance, so their code works on scalars. `error`, `write_char` and
//! `write_string` may run in parallel: `error` reports the message of the first
//! instance, and a write writes each instance's text to that instance's stream, in
//! instance order.

use vcode::{Const, Opcode as O, Ty};
use super::super::builder::{FunBuilder, Slot};
use super::super::gen::{Compiler, Ctx, Val, R};
use super::super::layout::{Lay, SlotKind};
use super::unsupported;
use crate::ast::Span;
use crate::ty::Type;

/// The layout of an `(ok, message)` status.
fn status_lay() -> Lay {
    Lay::Pair(std::sync::Arc::new(Lay::Base(SlotKind::Bool)), std::sync::Arc::new(Lay::Seq(std::sync::Arc::new(Lay::Base(SlotKind::Int)))))
}

/// The stream table's opening modes (`FOPEN`).
const MODE_READ: i64 = 1;
const MODE_WRITE: i64 = 2;
const MODE_APPEND: i64 = 3;

impl Compiler<'_> {
    /// Terminal output: the characters are written as they are.
    pub(super) fn io_prim(&mut self, fb: &mut FunBuilder, ctx: Ctx, name: &str, arg: Val, rty: &Type, span: Span) -> R<Val> {
        let rlay = self.lay(rty, span)?;
        let data = match name {
            "print_char" => arg.one(),
            "print_string" => arg.seq().1.one(),
            _ => return Err(unsupported(span, name)),
        };
        fb.copy_write(data);
        Ok(Val::new(vec![self.const_in(fb, ctx, Const::bool(true))], rlay))
    }

    /// The built-ins with effects.
    pub(super) fn effect(
        &mut self,
        fb: &mut FunBuilder,
        ctx: Ctx,
        name: &str,
        arg: &Val,
        rty: &Type,
        span: Span,
    ) -> R<Val> {
        let rlay = self.lay(rty, span)?;
        let v = match name {
            "error" => {
                self.runtime_error(fb, ctx, arg);
                Val::base(self.const_in(fb, ctx, Const::bool(true)), SlotKind::Bool)
            }
            "rand_seed" => Val::base(fb.op1(O::Srand.t(Ty::Int), &[arg.one()]), SlotKind::Bool),
            "start_timer" => {
                fb.emit(O::StartTimer);
                arg.clone()
            }
            "stop_timer" => {
                let t = fb.op1(O::StopTimer, &[]);
                let t = if ctx.unit { t } else { fb.op1(O::Dist.t(Ty::Float), &[t, ctx.seg]) };
                Val::base(t, SlotKind::Float)
            }
            "open_in_file" | "open_out_file" | "open_append_file" => {
                let mode = match name {
                    "open_in_file" => MODE_READ,
                    "open_out_file" => MODE_WRITE,
                    _ => MODE_APPEND,
                };
                let (_, fname) = arg.seq();
                let m = self.cint(fb, mode);
                let r = fb.op(O::Fopen, &[fname.one(), m]);
                let fd = Val::base(r[0], SlotKind::Int);
                Val::pair(fd, self.status(fb, r[2], r[1]))
            }
            "close_file" => {
                let r = fb.op(O::Fclose, &[arg.one()]);
                self.status(fb, r[1], r[0])
            }
            "write_char" | "write_string" => {
                let (x, st) = arg.split();
                let text = if name == "write_char" {
                    let one = self.int_in(fb, ctx, 1);
                    let seg = fb.op1(O::MakeSegdes, &[one]);
                    Val::mk_seq(seg, x)
                } else {
                    x
                };
                if ctx.unit {
                    let (_, data) = text.seq();
                    let r = fb.op(O::Fwrite.t(Ty::Char), &[data.one(), st.one()]);
                    self.status(fb, r[1], r[0])
                } else {
                    self.write_each(fb, ctx, &text, st.one())?
                }
            }
            "write_object" => {
                let (x, st) = arg.split();
                let mut kinds = Vec::new();
                x.lay.slots(&mut kinds);
                let mut oks: Option<Slot> = None;
                let mut msgs: Option<Slot> = None;
                for (s, k) in x.s.iter().zip(kinds) {
                    let r = fb.op(O::Fwrite.t(k.ty()), &[*s, st.one()]);
                    oks = Some(match oks {
                        None => r[1],
                        Some(o) => fb.op1(O::And.t(Ty::Bool), &[o, r[1]]),
                    });
                    msgs = Some(match msgs {
                        None => r[0],
                        Some(m) => self.append(fb, &Val::base(m, SlotKind::Int), &Val::base(r[0], SlotKind::Int)).one(),
                    });
                }
                let ok = match oks {
                    Some(o) => o,
                    None => fb.konst(Const::bool(true)),
                };
                let msg = match msgs {
                    Some(m) => m,
                    None => fb.konst(Const::empty(Ty::Int)),
                };
                self.status(fb, ok, msg)
            }
            "read_object" => {
                let (proto, st) = arg.split();
                let mut kinds = Vec::new();
                proto.lay.slots(&mut kinds);
                let mut vals = Vec::new();
                let mut ok = fb.konst(Const::bool(true));
                let mut msg = fb.konst(Const::empty(Ty::Int));
                for k in kinds {
                    let r = fb.op(O::Fread.t(k.ty()), &[st.one()]);
                    vals.push(r[0]);
                    ok = fb.op1(O::And.t(Ty::Bool), &[ok, r[2]]);
                    msg = self.append(fb, &Val::base(msg, SlotKind::Int), &Val::base(r[1], SlotKind::Int)).one();
                }
                // The vectors read must fit together as a value of the prototype's type.
                let one = self.cint(fb, 1);
                let fit = self.fits(fb, &proto.lay, &vals, one);
                let nofit = fb.op1(O::Not.t(Ty::Bool), &[fit]);
                let misfit = fb.op1(O::And.t(Ty::Bool), &[ok, nofit]);
                let mut m = fb.begin_if(misfit);
                let t = self.string_const(fb, b"read_object: the stream does not hold a value of the prototype's type");
                fb.else_(&mut m, &[t.seq().1.one()]);
                let msg = fb.end_if(m, &[msg])[0];
                let ok = fb.op1(O::And.t(Ty::Bool), &[ok, fit]);
                // A failed read gives back the prototype, never a value whose slots
                // do not fit together.
                let mut m = fb.begin_if(ok);
                fb.else_(&mut m, &vals);
                let value = fb.end_if(m, &proto.s);
                let value = Val::new(value, proto.lay.clone());
                Val::pair(value, self.status(fb, ok, msg))
            }
            "read_char" => {
                let st = arg.one();
                let delims = fb.konst(Const::empty(Ty::Int));
                let max = self.cint(fb, 1);
                let r = fb.op(O::FreadChar, &[delims, max, st]);
                // At the end of the file: the NUL character and a failure.
                let z = fb.konst(Const::int(0));
                let padded = self.append(fb, &Val::base(r[0], SlotKind::Int), &Val::base(z, SlotKind::Int));
                let first = self.gather(fb, &padded, z);
                let m1 = self.cint(fb, -1);
                let eof = fb.op1(O::Eq.t(Ty::Int), &[r[1], m1]);
                let not_eof = fb.op1(O::Not.t(Ty::Bool), &[eof]);
                let ok = fb.op1(O::And.t(Ty::Bool), &[r[3], not_eof]);
                let mut m = fb.begin_if(eof);
                let t = self.string_const(fb, b"read_char: end of file").seq().1.one();
                fb.else_(&mut m, &[t]);
                let msg = fb.end_if(m, &[r[2]])[0];
                Val::pair(first, self.status(fb, ok, msg))
            }
            "read_string" | "read_line" | "read_word" => {
                let (delims, max, st) = match name {
                    "read_string" => {
                        let (d, rest) = arg.split();
                        let (mx, st) = rest.split();
                        (d.seq().1.one(), mx.one(), st.one())
                    }
                    "read_line" => (fb.konst(Const::int(10)), self.cint(fb, -1), arg.one()),
                    _ => (fb.konst(Const::ints(vec![32, 9, 10])), self.cint(fb, -1), arg.one()),
                };
                let r = fb.op(O::FreadChar, &[delims, max, st]);
                let n = fb.op1(O::Length.t(Ty::Int), &[r[0]]);
                let seg = fb.op1(O::MakeSegdes, &[n]);
                let text = Val::mk_seq(seg, Val::base(r[0], SlotKind::Int));
                let m1 = self.cint(fb, -1);
                let eof = Val::base(fb.op1(O::Eq.t(Ty::Int), &[r[1], m1]), SlotKind::Bool);
                let value = match name {
                    "read_string" => Val::pair(text, Val::base(r[1], SlotKind::Int)),
                    "read_line" => Val::pair(text, eof),
                    _ => {
                        // The terminating character; NUL at the end of the file.
                        let z = self.cint(fb, 0);
                        let neg = fb.op1(O::Lt.t(Ty::Int), &[r[1], z]);
                        let term = fb.op1(O::Select.t(Ty::Int), &[neg, z, r[1]]);
                        Val::pair(text, Val::pair(Val::base(term, SlotKind::Int), eof))
                    }
                };
                Val::pair(value, self.status(fb, r[3], r[2]))
            }
            "read_int_seq" | "read_float_seq" => {
                let k = if name == "read_int_seq" { SlotKind::Int } else { SlotKind::Float };
                let r = fb.op(O::Fread.t(k.ty()), &[arg.one()]);
                let n = fb.op1(O::Length.t(k.ty()), &[r[0]]);
                let seg = fb.op1(O::MakeSegdes, &[n]);
                let v = Val::mk_seq(seg, Val::base(r[0], k));
                Val::pair(v, self.status(fb, r[2], r[1]))
            }
            "get_environment_variable" | "shell_command" => {
                // The extension instructions `GETENV` and `SHELL`; a failure (a command
                // that cannot start, no access to the environment) stops the program
                // with the instruction's message.
                let r = if name == "shell_command" {
                    let (cmd, input) = arg.split();
                    fb.op(O::Shell, &[cmd.seq().1.one(), input.seq().1.one()])
                } else {
                    fb.op(O::Getenv, &[arg.seq().1.one()])
                };
                self.stop_unless(fb, r[2], r[1]);
                let n = fb.op1(O::Length.t(Ty::Int), &[r[0]]);
                let seg = fb.op1(O::MakeSegdes, &[n]);
                Val::mk_seq(seg, Val::base(r[0], SlotKind::Int))
            }
            "display_request" => {
                // The extension instruction `DISPLAY`: one request per instance, in
                // instance order; a failure (no display, the page closed, no more input
                // events) stops the program with the display's message.
                let (code, args) = arg.split();
                let (aseg, adata) = args.seq();
                let r = fb.op(O::Display, &[code.one(), adata.one(), aseg]);
                self.stop_unless(fb, r[3], r[2]);
                Val::mk_seq(r[1], Val::base(r[0], SlotKind::Int))
            }
            "spawn" => {
                let (cmd, rest) = arg.split();
                let (sin, rest) = rest.split();
                let (sout, serr) = rest.split();
                let r = fb.op(O::Spawn, &[cmd.seq().1.one(), sin.one(), sout.one(), serr.one()]);
                // The instruction leaves the streams as error, output, input.
                let streams = Val::pair(
                    Val::base(r[2], SlotKind::Int),
                    Val::pair(Val::base(r[1], SlotKind::Int), Val::base(r[0], SlotKind::Int)),
                );
                Val::pair(streams, self.status(fb, r[4], r[3]))
            }
            _ => return Err(unsupported(span, name)),
        };
        Ok(Val::new(v.s, rlay))
    }

    /// Whether `slots` hold a value of layout `lay` over `count` (INT scalar) instances:
    /// every vector has the length its level of nesting needs (BOOL scalar).
    fn fits(&mut self, fb: &mut FunBuilder, lay: &Lay, slots: &[Slot], count: Slot) -> Slot {
        match lay {
            Lay::Unit | Lay::Fun(_) => fb.konst(Const::bool(true)),
            Lay::Base(k) => {
                let n = fb.op1(O::Length.t(k.ty()), &[slots[0]]);
                fb.op1(O::Eq.t(Ty::Int), &[n, count])
            }
            Lay::Pair(a, b) => {
                let na = a.size();
                let x = self.fits(fb, a, &slots[..na], count);
                let y = self.fits(fb, b, &slots[na..], count);
                fb.op1(O::And.t(Ty::Bool), &[x, y])
            }
            Lay::Seq(e) => {
                let lens = fb.op1(O::Lengths, &[slots[0]]);
                let n = fb.op1(O::Length.t(Ty::Int), &[lens]);
                let here = fb.op1(O::Eq.t(Ty::Int), &[n, count]);
                let sn = fb.op1(O::MakeSegdes, &[n]);
                let total = fb.op1(O::AddReduce.t(Ty::Int), &[lens, sn]);
                let inner = self.fits(fb, e, &slots[1..], total);
                fb.op1(O::And.t(Ty::Bool), &[here, inner])
            }
        }
    }

    /// The `(ok, message)` pair of an I/O instruction's flag and INT message vector.
    fn status(&mut self, fb: &mut FunBuilder, ok: Slot, msg: Slot) -> Val {
        let n = fb.op1(O::Length.t(Ty::Int), &[msg]);
        let seg = fb.op1(O::MakeSegdes, &[n]);
        Val::pair(Val::base(ok, SlotKind::Bool), Val::mk_seq(seg, Val::base(msg, SlotKind::Int)))
    }

    /// Stops the program with `RUNTIME ERROR: ` and `msg` (INT character codes) unless
    /// `ok` (BOOL scalar).
    fn stop_unless(&mut self, fb: &mut FunBuilder, ok: Slot, msg: Slot) {
        let bad = fb.op1(O::Not.t(Ty::Bool), &[ok]);
        let m = fb.begin_if(bad);
        fb.write_text("\nRUNTIME ERROR: ");
        fb.copy_write(msg);
        fb.write_text("\n");
        fb.exit_failure();
        fb.end_exit_if(m);
    }

    /// `error(s)`: when there is an instance, prints `RUNTIME ERROR: ` and the first
    /// instance's message as a paragraph and stops the program.
    fn runtime_error(&mut self, fb: &mut FunBuilder, ctx: Ctx, msg: &Val) {
        let n = self.count(fb, ctx.seg);
        let z = self.cint(fb, 0);
        let any = fb.op1(O::Gt.t(Ty::Int), &[n, z]);
        let m = fb.begin_if(any);
        let first = self.gather(fb, msg, z);
        let (_, data) = first.seq();
        fb.write_text("\nRUNTIME ERROR: ");
        fb.copy_write(data.one());
        fb.write_text("\n");
        fb.exit_failure();
        fb.end_exit_if(m);
    }

    /// Writes each instance's string to its own stream, in instance order; the
    /// `(ok, message)` of every instance. When all instances write to one stream (the
    /// usual case) that is one `FWRITE` of all the text, whose status every instance
    /// gets; otherwise the instances are written one by one.
    fn write_each(&mut self, fb: &mut FunBuilder, ctx: Ctx, text: &Val, fds: Slot) -> R<Val> {
        let lay = status_lay();
        let n = self.count(fb, ctx.seg);
        let z = self.cint(fb, 0);
        let none = fb.op1(O::Eq.t(Ty::Int), &[n, z]);
        let mut m = fb.begin_if(none);
        let e = self.empty(fb, &lay);
        fb.else_(&mut m, &e.s);
        let lo = fb.op1(O::MinReduce.t(Ty::Int), &[fds, ctx.seg]);
        let hi = fb.op1(O::MaxReduce.t(Ty::Int), &[fds, ctx.seg]);
        let same = fb.op1(O::Eq.t(Ty::Int), &[lo, hi]);
        let mut m2 = fb.begin_if(same);
        let (_, data) = text.seq();
        let w = fb.op(O::Fwrite.t(Ty::Char), &[data.one(), lo]);
        let st = self.status(fb, w[1], w[0]);
        let all = self.replicate(fb, &st, Ctx { seg: ctx.seg, unit: false })?;
        fb.else_(&mut m2, &all.s);
        // Several streams: one write per stream; the statuses come back grouped by
        // stream with the instance numbers, and are put back in instance order.
        let name = self.write_groups_fn()?;
        let io = self.iota(fb, ctx.seg);
        let mut args = text.s.clone();
        args.extend([fds, io]);
        let r = fb.call(&name, &args, 4);
        let pos = r[3];
        let inv = fb.op1(O::Permute.t(Ty::Int), &[io, pos, ctx.seg]);
        let back = self.gather(fb, &Val::new(r[..3].to_vec(), lay.clone()), inv);
        let inner = fb.end_if(m2, &back.s);
        let r = fb.end_if(m, &inner);
        Ok(Val::new(r, lay))
    }

    /// `WRITE_GROUPS (seg, chars, fds, idx) -> (oks, msg seg, msg chars, positions)`:
    /// writes the strings of the instances `idx` (in order), all those on the stream
    /// of the first one with one `FWRITE CHAR`, then the others (recursively, once per
    /// stream). The statuses come out grouped by stream, `positions` naming their
    /// instances.
    fn write_groups_fn(&mut self) -> R<String> {
        let key = "WRITE_GROUPS".to_string();
        if let Some(n) = self.helpers.get(&key) {
            return Ok(n.clone());
        }
        self.helpers.insert(key.clone(), key.clone());
        let (mut b, a) = FunBuilder::new(4);
        let fb = &mut b;
        let (seg, chars, fds, idx) = (a[0], a[1], a[2], a[3]);
        let lay = Lay::Pair(std::sync::Arc::new(status_lay()), std::sync::Arc::new(Lay::Base(SlotKind::Int)));
        let k = fb.op1(O::Length.t(Ty::Int), &[idx]);
        let z = self.cint(fb, 0);
        let done = fb.op1(O::Eq.t(Ty::Int), &[k, z]);
        let mut m = fb.begin_if(done);
        let e = self.empty(fb, &lay);
        fb.else_(&mut m, &e.s);
        let fdv = Val::base(fds, SlotKind::Int);
        let first = self.gather(fb, &Val::base(idx, SlotKind::Int), z).one();
        let fd0 = self.gather(fb, &fdv, first).one();
        let fdr = self.gather(fb, &fdv, idx).one();
        let sk = fb.op1(O::MakeSegdes, &[k]);
        let fd0d = fb.op1(O::Dist.t(Ty::Int), &[fd0, sk]);
        let mine = fb.op1(O::Eq.t(Ty::Int), &[fdr, fd0d]);
        let other = fb.op1(O::Not.t(Ty::Bool), &[mine]);
        let pick = fb.op(O::Pack.t(Ty::Int), &[idx, mine, sk]);
        let rest = fb.op(O::Pack.t(Ty::Int), &[idx, other, sk]);
        let strs = Val::mk_seq(seg, Val::base(chars, SlotKind::Int));
        let sel = self.gather(fb, &strs, pick[0]);
        let (_, data) = sel.seq();
        let w = fb.op(O::Fwrite.t(Ty::Char), &[data.one(), fd0]);
        let st = self.status(fb, w[1], w[0]);
        let here = self.replicate(fb, &st, Ctx { seg: pick[1], unit: false })?;
        let here = Val::pair(here, Val::base(pick[0], SlotKind::Int));
        let later = fb.call(&key, &[seg, chars, fds, rest[0]], 4);
        let all = self.append(fb, &here, &Val::new(later, lay.clone()));
        let r = fb.end_if(m, &all.s);
        self.funcs.push(b.finish(&key, &r));
        Ok(key)
    }
}
