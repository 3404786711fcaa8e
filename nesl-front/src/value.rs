//! Printing NESL values the way the NESL top level does (spec section 6.2).
//!
//! A value arrives as its type plus the VCODE stack slots that hold it, in the flat
//! layout of `vcode.md` section 3 (scalars are vectors of length 1, a sequence is a
//! segment descriptor followed by the slots of its elements "one level up"). The
//! slots are read through a [`SlotSource`] into a columnar [`View`] holding only the
//! leading elements of each slot that are printed (at most `print_length` of each
//! sequence), so that a result of ten million elements costs copies of about a hundred
//! (and a check of its floats for NaN where they are kept).
//!
//! Printing rules: integers in decimal; `T`/`F`; characters as `` `a ``; floats as
//! Common Lisp prints them after the 15-significant-digit VCODE text round trip
//! ([`format_float`]); `[char]` as a double-quoted string with `"` and `\` escaped;
//! other sequences `[e1, e2]`, cut after `print_length` elements as `[1, 2,...]`;
//! tuples `(a, b, c)` (pairs nested in the second position are flattened, in the first
//! position they keep their parentheses); datatype values as constructor calls
//! `point(1, 2)`; function values as `fn`.

use vcode::HostValue;
use crate::ty::Type;
use std::fmt::Write as _;

/// The field type of datatype `name` applied to `args` (its type parameters already
/// substituted), or `None` when the datatype is unknown. The top level answers it from
/// the type checker's datatype table.
pub type DatatypeFields<'a> = &'a dyn Fn(&str, &[Type]) -> Option<Type>;

/// Formats a float as the NESL top level prints it: first rounded to 15 significant
/// digits (the VCODE text format the reference reads results back from), then the
/// shortest text that reads back to that value, with a decimal point, in plain
/// notation when `1e-3 <= |x| < 1e7` and otherwise as mantissa and exponent
/// (`1.0E10`, `1.23E-4`). NaN and infinities print as `NaN`, `Infinity`, `-Infinity`
/// (the top level rejects such results before printing them).
pub fn format_float(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    // The 15-digit round trip; the text always parses back.
    let y: f64 = format!("{x:.14e}").parse().unwrap_or(x);
    // Shortest digits that read back to `y`: Rust prints them as `d.ddde±x`.
    let sci = format!("{:e}", y.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if y < 0.0 { "-" } else { "" };
    let abs = y.abs();
    if (1e-3..1e7).contains(&abs) {
        // Plain notation: the decimal point goes after digit number exp + 1.
        let point = exp + 1;
        let text = if point <= 0 {
            format!("0.{}{}", "0".repeat((-point) as usize), digits)
        } else if point as usize >= digits.len() {
            format!("{}{}.0", digits, "0".repeat(point as usize - digits.len()))
        } else {
            let (int, frac) = digits.split_at(point as usize);
            format!("{int}.{frac}")
        };
        format!("{sign}{text}")
    } else {
        let (first, rest) = digits.split_at(1);
        let rest = if rest.is_empty() { "0" } else { rest };
        format!("{sign}{first}.{rest}E{exp}")
    }
}

/// A value of some type read from flat slots, as columns: the leading values that are
/// printed, side by side.
#[derive(Debug)]
enum View {
    Int(Vec<i64>),
    Char(Vec<i64>),
    Float(Vec<f64>),
    Bool(Vec<bool>),
    Pair(Box<View>, Box<View>),
    Data(String, Box<View>),
    /// Sequences: value `i` holds elements `starts[i]..starts[i + 1]` of `elems`, of which
    /// the first ones printed are read.
    Seq { starts: Vec<usize>, elems: Box<View> },
    /// Function values (no slots).
    Fun,
}

/// Where a value's slots are read from: their sizes, and the leading elements of each
/// that are printed. The top level reads them from the vector library, so that printing
/// a result of ten million elements copies the hundred it shows; [`format_value`] from
/// host copies.
pub trait SlotSource {
    /// Number of slots.
    fn slots(&self) -> usize;
    /// Elements of slot `i` (segments, for a segment descriptor) and, for a segment
    /// descriptor, its element count (the sum of its lengths).
    fn shape(&mut self, i: usize) -> Result<(usize, Option<usize>), String>;
    /// The first `n` elements of slot `i` (the first `n` lengths of a segment descriptor;
    /// all of them when it has fewer).
    fn prefix(&mut self, i: usize, n: usize) -> Result<HostValue, String>;
    /// True when slot `i`, a `FLOAT` vector, holds a NaN or an infinity anywhere.
    fn non_finite(&mut self, i: usize) -> Result<bool, String>;
}

/// Host copies of every slot, as a [`SlotSource`].
struct HostSlots<'a>(&'a [HostValue]);

impl SlotSource for HostSlots<'_> {
    fn slots(&self) -> usize {
        self.0.len()
    }
    fn shape(&mut self, i: usize) -> Result<(usize, Option<usize>), String> {
        Ok(match &self.0[i] {
            HostValue::Int(v) => (v.len(), None),
            HostValue::Float(v) => (v.len(), None),
            HostValue::Bool(v) => (v.len(), None),
            HostValue::Segdes(l) => {
                let mut total = 0usize;
                for &x in l {
                    let x = usize::try_from(x).map_err(|_| format!("negative segment length {x} in the result"))?;
                    total = total.checked_add(x).ok_or("segment lengths overflow")?;
                }
                (l.len(), Some(total))
            }
        })
    }
    fn prefix(&mut self, i: usize, n: usize) -> Result<HostValue, String> {
        Ok(match &self.0[i] {
            HostValue::Int(v) => HostValue::Int(v[..n.min(v.len())].to_vec()),
            HostValue::Float(v) => HostValue::Float(v[..n.min(v.len())].to_vec()),
            HostValue::Bool(v) => HostValue::Bool(v[..n.min(v.len())].to_vec()),
            HostValue::Segdes(v) => HostValue::Segdes(v[..n.min(v.len())].to_vec()),
        })
    }
    fn non_finite(&mut self, i: usize) -> Result<bool, String> {
        Ok(matches!(&self.0[i], HostValue::Float(v) if v.iter().any(|x| !x.is_finite())))
    }
}

/// Reads values of the flat layout from a [`SlotSource`], slot after slot.
struct Reader<'s, 'd> {
    src: &'s mut dyn SlotSource,
    pos: usize,
    data: DatatypeFields<'d>,
    /// Elements printed per sequence.
    limit: Option<usize>,
    /// Some float of the value is NaN or infinite (printed or not).
    non_finite: bool,
}

impl Reader<'_, '_> {
    /// The next slot's index and size, checked against the `count` values it must hold.
    fn next(&mut self, what: &str, count: usize) -> Result<(usize, Option<usize>), String> {
        let i = self.pos;
        if i >= self.src.slots() {
            return Err(format!("the result has too few stack slots (a {what} is missing)"));
        }
        self.pos += 1;
        let (n, total) = self.src.shape(i)?;
        if n != count {
            return Err(format!("a {what} vector of the result has {n} elements where {count} were expected"));
        }
        Ok((i, total))
    }

    /// Reads `count` values of type `ty`, of which the first `shown` are printed (and
    /// so copied).
    fn read(&mut self, ty: &Type, count: usize, shown: usize) -> Result<View, String> {
        Ok(match ty {
            Type::Int | Type::Char => {
                let (i, _) = self.next("INT", count)?;
                match self.src.prefix(i, shown)? {
                    HostValue::Int(v) if *ty == Type::Int => View::Int(v),
                    HostValue::Int(v) => View::Char(v),
                    other => return Err(mismatch("INT", &other)),
                }
            }
            Type::Float => {
                let (i, _) = self.next("FLOAT", count)?;
                match self.src.prefix(i, shown)? {
                    HostValue::Float(v) => {
                        self.non_finite = self.non_finite || self.src.non_finite(i)?;
                        View::Float(v)
                    }
                    other => return Err(mismatch("FLOAT", &other)),
                }
            }
            Type::Bool => {
                let (i, _) = self.next("BOOL", count)?;
                match self.src.prefix(i, shown)? {
                    HostValue::Bool(v) => View::Bool(v),
                    other => return Err(mismatch("BOOL", &other)),
                }
            }
            Type::Pair(a, b) => {
                let a = self.read(a, count, shown)?;
                let b = self.read(b, count, shown)?;
                View::Pair(Box::new(a), Box::new(b))
            }
            Type::Data(name, args) => {
                let fields = (self.data)(name, args).ok_or_else(|| format!("unknown datatype `{name}`"))?;
                let v = self.read(&fields, count, shown)?;
                View::Data(name.clone(), Box::new(v))
            }
            Type::Seq(elem) => {
                let (i, total) = self.next("SEGDES", count)?;
                let lengths = match self.src.prefix(i, shown)? {
                    HostValue::Segdes(l) => l,
                    other => return Err(mismatch("SEGDES", &other)),
                };
                let mut starts = Vec::with_capacity(lengths.len() + 1);
                let mut end = 0usize;
                starts.push(0);
                for &l in &lengths {
                    let l = usize::try_from(l).map_err(|_| format!("negative segment length {l} in the result"))?;
                    end = end.checked_add(l).ok_or("segment lengths overflow")?;
                    starts.push(end);
                }
                // Elements of the shown sequences up to the last one printed: strings
                // print whole, other sequences their first `limit` elements.
                let inner = match lengths.last() {
                    Some(&l) if **elem != Type::Char => starts[starts.len() - 2] + self.limit.map_or(l as usize, |n| (l as usize).min(n)),
                    _ => end,
                };
                let total = total.ok_or("a SEGDES slot of the result has no element count")?;
                let elems = self.read(elem, total, inner)?;
                View::Seq { starts, elems: Box::new(elems) }
            }
            Type::Fun(..) => View::Fun,
            Type::Var(_) => return Err("the result's type still has type variables".into()),
        })
    }
}

fn mismatch(wanted: &str, got: &HostValue) -> String {
    let got = match got {
        HostValue::Int(_) => "INT",
        HostValue::Float(_) => "FLOAT",
        HostValue::Bool(_) => "BOOL",
        HostValue::Segdes(_) => "SEGDES",
    };
    format!("expected a {wanted} slot in the result, found a {got} slot")
}

impl View {
    /// Appends value `i` to `out`.
    fn print(&self, i: usize, limit: Option<usize>, out: &mut String) {
        match self {
            View::Int(v) => {
                let _ = write!(out, "{}", v[i]);
            }
            View::Char(v) => {
                out.push('`');
                out.push(char_of(v[i]));
            }
            View::Float(v) => out.push_str(&format_float(v[i])),
            View::Bool(v) => out.push(if v[i] { 'T' } else { 'F' }),
            View::Pair(..) => {
                out.push('(');
                self.print_spine(i, limit, out);
                out.push(')');
            }
            View::Data(name, fields) => {
                out.push_str(name);
                out.push('(');
                fields.print_spine(i, limit, out);
                out.push(')');
            }
            View::Seq { starts, elems } => {
                let (lo, hi) = (starts[i], starts[i + 1]);
                if let View::Char(chars) = elems.as_ref() {
                    out.push('"');
                    for &c in &chars[lo..hi] {
                        let c = char_of(c);
                        if c == '"' || c == '\\' {
                            out.push('\\');
                        }
                        out.push(c);
                    }
                    out.push('"');
                    return;
                }
                let shown = match limit {
                    Some(n) => (hi - lo).min(n),
                    None => hi - lo,
                };
                out.push('[');
                for k in 0..shown {
                    if k > 0 {
                        out.push_str(", ");
                    }
                    elems.print(lo + k, limit, out);
                }
                if shown < hi - lo {
                    out.push_str(if shown == 0 { "..." } else { ",..." });
                }
                out.push(']');
            }
            View::Fun => out.push_str("fn"),
        }
    }

    /// Appends value `i` without the parentheses of a tuple: `a, b, c`.
    fn print_spine(&self, i: usize, limit: Option<usize>, out: &mut String) {
        match self {
            View::Pair(a, b) => {
                a.print(i, limit, out);
                out.push_str(", ");
                b.print_spine(i, limit, out);
            }
            other => other.print(i, limit, out),
        }
    }
}

/// The character with code `c` (codes outside Unicode print as U+FFFD).
fn char_of(c: i64) -> char {
    u32::try_from(c).ok().and_then(char::from_u32).unwrap_or('\u{FFFD}')
}

/// Prints the value of type `ty` held in `slots` (the whole final stack of a top-level
/// evaluation, flat layout, one instance). `print_length` caps the elements shown per
/// sequence (`None`: no limit). Errors: the slots do not match the type, or the value
/// contains a NaN or infinite float (which the NESL top level rejects).
pub fn format_value(
    ty: &Type,
    slots: &[HostValue],
    data: DatatypeFields<'_>,
    print_length: Option<usize>,
) -> Result<String, String> {
    format_value_from(ty, &mut HostSlots(slots), data, print_length)
}

/// [`format_value`] of the slots of `src`, reading from each only the leading elements
/// printed (and checking every float for a NaN or infinity where it is).
pub fn format_value_from(
    ty: &Type,
    src: &mut dyn SlotSource,
    data: DatatypeFields<'_>,
    print_length: Option<usize>,
) -> Result<String, String> {
    let mut r = Reader { src, pos: 0, data, limit: print_length, non_finite: false };
    let view = r.read(ty, 1, 1)?;
    if r.pos != r.src.slots() {
        return Err(format!(
            "the result has {} stack slots where its type needs {}",
            r.src.slots(),
            r.pos
        ));
    }
    if r.non_finite {
        return Err("the result contains a NaN or infinite float".into());
    }
    let mut out = String::new();
    view.print(0, print_length, &mut out);
    Ok(out)
}

/// How many stack slots a value of type `ty` occupies in the flat layout, or `None` when
/// the type has variables or names an unknown datatype.
pub fn slot_count(ty: &Type, data: DatatypeFields<'_>) -> Option<usize> {
    match ty {
        Type::Int | Type::Char | Type::Float | Type::Bool => Some(1),
        Type::Pair(a, b) => Some(slot_count(a, data)? + slot_count(b, data)?),
        Type::Seq(e) => Some(1 + slot_count(e, data)?),
        Type::Data(name, args) => slot_count(&data(name, args)?, data),
        Type::Fun(..) => Some(0),
        Type::Var(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_data(_: &str, _: &[Type]) -> Option<Type> {
        None
    }

    fn show(ty: &Type, slots: &[HostValue]) -> String {
        match format_value(ty, slots, &no_data, Some(100)) {
            Ok(s) => s,
            Err(e) => format!("error: {e}"),
        }
    }

    fn int(v: &[i64]) -> HostValue {
        HostValue::Int(v.to_vec())
    }
    fn seg(v: &[i64]) -> HostValue {
        HostValue::Segdes(v.to_vec())
    }
    fn float(v: &[f64]) -> HostValue {
        HostValue::Float(v.to_vec())
    }
    fn boolv(v: &[bool]) -> HostValue {
        HostValue::Bool(v.to_vec())
    }
    fn seq(t: Type) -> Type {
        Type::seq(t)
    }
    fn pair(a: Type, b: Type) -> Type {
        Type::pair(a, b)
    }

    #[test]
    fn floats_print_like_common_lisp() {
        let cases: &[(f64, &str)] = &[
            (3.75, "3.75"),
            (2.0f64.sqrt(), "1.4142135623731"),
            (std::f64::consts::E, "2.71828182845905"),
            (100.0f64.ln(), "4.60517018598809"),
            (10.0, "10.0"),
            (0.0, "0.0"),
            (1.0, "1.0"),
            (100.0, "100.0"),
            (0.001, "0.001"),
            (0.00123, "0.00123"),
            (1.0 / 3.0, "0.333333333333333"),
            (std::f64::consts::PI, "3.14159265358979"),
            (123456.789, "123456.789"),
            (1.23456789e7, "1.23456789E7"),
            (1.2345678e7, "1.2345678E7"),
            (9999999.0, "9999999.0"),
            (1e7, "1.0E7"),
            (1e10, "1.0E10"),
            (1e-4, "1.0E-4"),
            (1.23e-4, "1.23E-4"),
            (6.0e-6, "6.0E-6"),
            (1e100, "1.0E100"),
            (3.0e-20, "3.0E-20"),
            (1099511627776.0, "1.099511627776E12"),
            (2147483647.0, "2.147483647E9"),
            (-1.25, "-1.25"),
            (-2.5e-9, "-2.5E-9"),
            (0.1 + 0.2, "0.3"),
            (15.625, "15.625"),
            (-0.0, "-0.0"),
        ];
        for (x, want) in cases {
            assert_eq!(format_float(*x), *want, "printing {x:e}");
        }
        assert_eq!(format_float(f64::NAN), "NaN");
        assert_eq!(format_float(f64::NEG_INFINITY), "-Infinity");
    }

    #[test]
    fn scalars() {
        assert_eq!(show(&Type::Int, &[int(&[-3])]), "-3");
        assert_eq!(show(&Type::Bool, &[boolv(&[true])]), "T");
        assert_eq!(show(&Type::Bool, &[boolv(&[false])]), "F");
        assert_eq!(show(&Type::Char, &[int(&[97])]), "`a");
        assert_eq!(show(&Type::Char, &[int(&[32])]), "` ");
        assert_eq!(show(&Type::Float, &[float(&[2.5])]), "2.5");
        assert_eq!(show(&Type::fun(Type::Int, Type::Int), &[]), "fn");
    }

    #[test]
    fn sequences_and_strings() {
        assert_eq!(show(&seq(Type::Int), &[seg(&[3]), int(&[1, 2, 3])]), "[1, 2, 3]");
        assert_eq!(show(&seq(Type::Int), &[seg(&[0]), int(&[])]), "[]");
        assert_eq!(show(&seq(Type::Char), &[seg(&[3]), int(&[97, 98, 99])]), "\"abc\"");
        assert_eq!(show(&seq(Type::Char), &[seg(&[0]), int(&[])]), "\"\"");
        assert_eq!(show(&seq(Type::Char), &[seg(&[3]), int(&[97, 34, 92])]), "\"a\\\"\\\\\"");
        assert_eq!(
            show(&seq(Type::Bool), &[seg(&[2]), boolv(&[true, false])]),
            "[T, F]"
        );
        assert_eq!(
            show(&seq(Type::Float), &[seg(&[2]), float(&[0.5, -2.0])]),
            "[0.5, -2.0]"
        );
    }

    #[test]
    fn nested_sequences() {
        // [[1, 2], [], [3]]
        let t = seq(seq(Type::Int));
        assert_eq!(show(&t, &[seg(&[3]), seg(&[2, 0, 1]), int(&[1, 2, 3])]), "[[1, 2], [], [3]]");
        // [] [int]
        assert_eq!(show(&t, &[seg(&[0]), seg(&[]), int(&[])]), "[]");
        // ["nesl", "", "x"]
        let t = seq(seq(Type::Char));
        assert_eq!(
            show(&t, &[seg(&[3]), seg(&[4, 0, 1]), int(&[110, 101, 115, 108, 120])]),
            "[\"nesl\", \"\", \"x\"]"
        );
        // [[[1, 2], [3]], [], [[], [7]]]
        let t = seq(seq(seq(Type::Int)));
        assert_eq!(
            show(&t, &[seg(&[3]), seg(&[2, 0, 2]), seg(&[2, 1, 0, 1]), int(&[1, 2, 3, 7])]),
            "[[[1, 2], [3]], [], [[], [7]]]"
        );
    }

    #[test]
    fn tuples() {
        assert_eq!(show(&pair(Type::Int, Type::Float), &[int(&[1]), float(&[2.5])]), "(1, 2.5)");
        let t = pair(Type::Int, pair(Type::Int, Type::Int));
        assert_eq!(show(&t, &[int(&[1]), int(&[2]), int(&[3])]), "(1, 2, 3)");
        let t = pair(pair(Type::Int, Type::Int), Type::Int);
        assert_eq!(show(&t, &[int(&[1]), int(&[2]), int(&[3])]), "((1, 2), 3)");
        // [(1, F), (2, T)]
        let t = seq(pair(Type::Int, Type::Bool));
        assert_eq!(
            show(&t, &[seg(&[2]), int(&[1, 2]), boolv(&[false, true])]),
            "[(1, F), (2, T)]"
        );
        // ([1], [[2, 3]])
        let t = pair(seq(Type::Int), seq(seq(Type::Int)));
        assert_eq!(
            show(&t, &[seg(&[1]), int(&[1]), seg(&[1]), seg(&[2]), int(&[2, 3])]),
            "([1], [[2, 3]])"
        );
        // [("ada", [90, 85]), ("bo", [])]
        let t = seq(pair(seq(Type::Char), seq(Type::Int)));
        let slots = [seg(&[2]), seg(&[3, 2]), int(&[97, 100, 97, 98, 111]), seg(&[2, 0]), int(&[90, 85])];
        assert_eq!(show(&t, &slots), "[(\"ada\", [90, 85]), (\"bo\", [])]");
    }

    #[test]
    fn datatypes() {
        let data = |name: &str, args: &[Type]| -> Option<Type> {
            match name {
                "point" => Some(pair(Type::Int, Type::Int)),
                "item" => Some(pair(Type::Int, pair(Type::Float, Type::Bool))),
                "box" => args.first().cloned(),
                _ => None,
            }
        };
        let p = Type::Data("point".into(), vec![]);
        let got = format_value(&p, &[int(&[13]), int(&[-6])], &data, Some(100));
        assert_eq!(got.as_deref(), Ok("point(13, -6)"));
        let t = seq(Type::Data("item".into(), vec![]));
        let slots = [seg(&[2]), int(&[1, 2]), float(&[2.5, 10.0]), boolv(&[true, false])];
        let got = format_value(&t, &slots, &data, Some(100));
        assert_eq!(got.as_deref(), Ok("[item(1, 2.5, T), item(2, 10.0, F)]"));
        let t = Type::Data("box".into(), vec![seq(Type::Char)]);
        let got = format_value(&t, &[seg(&[4]), int(&[116, 101, 120, 116])], &data, Some(100));
        assert_eq!(got.as_deref(), Ok("box(\"text\")"));
        let t = Type::Data("nothing".into(), vec![]);
        assert!(format_value(&t, &[], &data, Some(100)).is_err());
        assert_eq!(slot_count(&seq(Type::Data("item".into(), vec![])), &data), Some(4));
    }

    #[test]
    fn long_sequences_are_cut() {
        let v: Vec<i64> = (0..150).collect();
        let s = show(&seq(Type::Int), &[seg(&[150]), int(&v)]);
        assert!(s.starts_with("[0, 1, 2, "));
        assert!(s.ends_with(", 98, 99,...]"), "{s}");
        let v: Vec<i64> = (0..100).collect();
        let s = show(&seq(Type::Int), &[seg(&[100]), int(&v)]);
        assert!(s.ends_with(", 98, 99]"), "{s}");
        let t = seq(Type::Int);
        let slots = [seg(&[5]), int(&[1, 2, 3, 4, 5])];
        assert_eq!(format_value(&t, &slots, &no_data, Some(3)).as_deref(), Ok("[1, 2, 3,...]"));
        assert_eq!(format_value(&t, &slots, &no_data, Some(0)).as_deref(), Ok("[...]"));
        assert_eq!(format_value(&t, &slots, &no_data, None).as_deref(), Ok("[1, 2, 3, 4, 5]"));
        // The limit applies at every level.
        let t = seq(seq(Type::Int));
        let slots = [seg(&[3]), seg(&[3, 1, 2]), int(&[1, 2, 3, 4, 5, 6])];
        assert_eq!(format_value(&t, &slots, &no_data, Some(2)).as_deref(), Ok("[[1, 2,...], [4],...]"));
    }

    #[test]
    fn bad_slots_are_errors() {
        assert!(show(&Type::Int, &[]).starts_with("error"));
        assert!(show(&Type::Int, &[float(&[1.0])]).starts_with("error"));
        assert!(show(&Type::Int, &[int(&[1, 2])]).starts_with("error"));
        assert!(show(&Type::Int, &[int(&[1]), int(&[2])]).starts_with("error"));
        assert!(show(&seq(Type::Int), &[seg(&[3]), int(&[1, 2])]).starts_with("error"));
        assert!(show(&seq(Type::Int), &[seg(&[-1]), int(&[])]).starts_with("error"));
        assert!(show(&Type::Float, &[float(&[f64::NAN])]).starts_with("error"));
        assert!(show(&seq(Type::Float), &[seg(&[2]), float(&[1.0, f64::INFINITY])]).starts_with("error"));
        // A NaN past the elements printed is still found.
        let mut v = vec![1.0; 500];
        v[400] = f64::NAN;
        let got = format_value(&seq(Type::Float), &[seg(&[500]), float(&v)], &no_data, Some(3));
        assert_eq!(got, Err("the result contains a NaN or infinite float".to_string()));
    }

    /// Host slots that record the largest prefix read from each.
    struct Counting<'a> {
        host: HostSlots<'a>,
        read: Vec<usize>,
    }

    impl SlotSource for Counting<'_> {
        fn slots(&self) -> usize {
            self.host.slots()
        }
        fn shape(&mut self, i: usize) -> Result<(usize, Option<usize>), String> {
            self.host.shape(i)
        }
        fn prefix(&mut self, i: usize, n: usize) -> Result<HostValue, String> {
            let v = self.host.prefix(i, n)?;
            let got = match &v {
                HostValue::Int(x) | HostValue::Segdes(x) => x.len(),
                HostValue::Float(x) => x.len(),
                HostValue::Bool(x) => x.len(),
            };
            self.read[i] = self.read[i].max(got);
            Ok(v)
        }
        fn non_finite(&mut self, i: usize) -> Result<bool, String> {
            self.host.non_finite(i)
        }
    }

    /// Formats with `limit`, returning the text and how many elements of each slot
    /// were read.
    fn read_counts(ty: &Type, slots: &[HostValue], limit: Option<usize>) -> (String, Vec<usize>) {
        let mut src = Counting { host: HostSlots(slots), read: vec![0; slots.len()] };
        let text = format_value_from(ty, &mut src, &no_data, limit).expect("formats");
        (text, src.read)
    }

    #[test]
    fn only_the_printed_elements_are_read() {
        // 10,000 integers: the first three are read.
        let v: Vec<i64> = (0..10_000).collect();
        let (text, read) = read_counts(&seq(Type::Int), &[seg(&[10_000]), int(&v)], Some(3));
        assert_eq!(text, "[0, 1, 2,...]");
        assert_eq!(read, vec![1, 3]);
        // 1,000 rows of 5 pairs: 2 rows' lengths, and the elements up to the second
        // row's second (5 + 2), of both columns.
        let t = seq(seq(pair(Type::Int, Type::Float)));
        let n = 5_000;
        let slots = [seg(&[1_000]), seg(&vec![5; 1_000]), int(&(0..n).collect::<Vec<_>>()), float(&vec![0.5; n as usize])];
        let (text, read) = read_counts(&t, &slots, Some(2));
        assert_eq!(text, "[[(0, 0.5), (1, 0.5),...], [(5, 0.5), (6, 0.5),...],...]");
        assert_eq!(read, vec![1, 2, 7, 7]);
        // Strings print whole: the last shown one's characters are all read.
        let t = seq(seq(Type::Char));
        let slots = [seg(&[3]), seg(&[2, 4, 1]), int(&[97, 98, 99, 100, 101, 102, 103])];
        let (text, read) = read_counts(&t, &slots, Some(2));
        assert_eq!(text, "[\"ab\", \"cdef\",...]");
        assert_eq!(read, vec![1, 2, 6]);
        // With no limit, everything.
        let (_, read) = read_counts(&t, &slots, None);
        assert_eq!(read, vec![1, 3, 7]);
    }
}
