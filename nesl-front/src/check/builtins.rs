//! The registry of built-ins (spec section 5 and CMU NESL's library): one [`Builtin`]
//! row per built-in function, operator and constant.
//!
//! A row gives the name (as the AST spells it: operators keep their symbol, `#x` is
//! `length`, `a[i]` is `elt`, ...), the type written as NESL prints it (`"(a, a) -> a ::
//! (a in number)"`, parsed by the language's own grammar, [`crate::parser::parse_type`]),
//! a one-line description, how it is implemented ([`Impl`]: NESL code of the prelude, a
//! primitive of one of the code generator's families, or an effect), whether it may be
//! called inside an apply-to-each, and whether a user function may take its name. The
//! checker takes types and flags from here; the code generator dispatches on [`Impl`]
//! (`flatten::prims`). A variable without a context entry is in class `any`.
//!
//! The graphics library (CMU's plot.nesl and window.nesl) has the types its NESL code
//! (prelude_window.nesl) has, which are CMU's; a test checks that they agree.

use crate::ast::{TypeExpr, TypeExprKind, TypeSpec};
use crate::ty::{Scheme, TyVar, Type, TypeClass};
use std::collections::HashMap;
use std::sync::OnceLock;

/// The families of primitives, one module of `flatten::prims` each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// Element-wise arithmetic, comparison, logic, conversions, constants, hashing.
    Scalar,
    /// Construction, access, subsequences, nesting, ranks and search.
    Sequence,
    /// Scans and reductions.
    Scan,
    /// Gathers, scatters, permutations and other reorderings.
    Permute,
    /// Text: `@`, `||`, `exp_string` and the character functions.
    Strings,
    /// Terminal output.
    Io,
}

/// How a built-in is implemented.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Impl {
    /// NESL code of the prelude (`prelude.nesl`, `prelude_strings.nesl`), compiled like a
    /// user function.
    Prelude,
    /// VCODE generated directly by the primitive family.
    Prim(Family),
    /// VCODE with effects beyond the result: errors, the random seed, timers, files,
    /// streams and processes (`flatten::prims::io`).
    Effect,
}

/// One built-in.
#[derive(Debug)]
pub struct Builtin {
    /// The name as the AST spells it.
    pub name: &'static str,
    /// The type, as NESL prints it.
    pub ty: &'static str,
    /// A one-line description.
    pub doc: &'static str,
    /// The implementation.
    pub imp: Impl,
    /// May not be called inside an apply-to-each ("Cannot call X in parallel"):
    /// reseeding the generator and the file, stream and process functions.
    pub serial_only: bool,
    /// A user function may take the name (the new definition wins from then on); false
    /// for those CMU NESL's library marks `:redefine no`, and `length` and `elt`, which
    /// `#a` and `a[i]` denote.
    pub redefinable: bool,
}

const fn row(name: &'static str, ty: &'static str, imp: Impl, doc: &'static str) -> Builtin {
    Builtin {
        name,
        ty,
        doc,
        imp,
        serial_only: false,
        redefinable: true,
    }
}

impl Builtin {
    const fn serial(mut self) -> Self {
        self.serial_only = true;
        self
    }

    const fn fixed(mut self) -> Self {
        self.redefinable = false;
        self
    }
}

const PRELUDE: Impl = Impl::Prelude;
const EFFECT: Impl = Impl::Effect;
const SCALAR: Impl = Impl::Prim(Family::Scalar);
const SEQUENCE: Impl = Impl::Prim(Family::Sequence);
const SCAN: Impl = Impl::Prim(Family::Scan);
const PERMUTE: Impl = Impl::Prim(Family::Permute);
const STRINGS: Impl = Impl::Prim(Family::Strings);
const IO: Impl = Impl::Prim(Family::Io);

/// Every built-in.
#[rustfmt::skip]
pub static BUILTINS: &[Builtin] = &[
    // 5.1 logical
    row("not", "a -> a :: (a in logical)", SCALAR, "Logical negation on bool, bitwise complement on int."),
    row("or", "(a, a) -> a :: (a in logical)", SCALAR, "Inclusive or (bitwise on int)."),
    row("and", "(a, a) -> a :: (a in logical)", SCALAR, "And (bitwise on int)."),
    row("xor", "(a, a) -> a :: (a in logical)", SCALAR, "Exclusive or (bitwise on int)."),
    row("nor", "(a, a) -> a :: (a in logical)", SCALAR, "not(a or b)."),
    row("nand", "(a, a) -> a :: (a in logical)", SCALAR, "not(a and b)."),
    // 5.2 comparison
    row("==", "(a, a) -> bool :: (a in ordinal)", SCALAR, "Equality."),
    row("/=", "(a, a) -> bool :: (a in ordinal)", SCALAR, "Inequality."),
    row("<", "(a, a) -> bool :: (a in ordinal)", SCALAR, "Less than (characters by code)."),
    row(">", "(a, a) -> bool :: (a in ordinal)", SCALAR, "Greater than (characters by code)."),
    row("<=", "(a, a) -> bool :: (a in ordinal)", SCALAR, "Less than or equal."),
    row(">=", "(a, a) -> bool :: (a in ordinal)", SCALAR, "Greater than or equal."),
    row("plusp", "a -> bool :: (a in number)", SCALAR, "True if the argument is positive."),
    row("minusp", "a -> bool :: (a in number)", SCALAR, "True if the argument is negative."),
    row("zerop", "a -> bool :: (a in number)", SCALAR, "True if the argument is zero."),
    row("oddp", "int -> bool", SCALAR, "True if the integer is odd."),
    row("evenp", "int -> bool", SCALAR, "True if the integer is even."),
    // 5.3 arithmetic
    row("+", "(a, a) -> a :: (a in number)", SCALAR, "Addition."),
    row("-", "(a, a) -> a :: (a in number)", SCALAR, "Subtraction."),
    row("*", "(a, a) -> a :: (a in number)", SCALAR, "Multiplication."),
    row("/", "(a, a) -> a :: (a in number)", SCALAR, "Division; integers truncate toward zero; dividing by zero is an error."),
    row("negate", "a -> a :: (a in number)", SCALAR, "Negation (prefix -)."),
    row("abs", "a -> a :: (a in number)", SCALAR, "Absolute value."),
    row("diff", "(a, a) -> a :: (a in number)", SCALAR, "Absolute difference abs(x - y)."),
    row("max", "(a, a) -> a :: (a in ordinal)", SCALAR, "The larger of two values."),
    row("min", "(a, a) -> a :: (a in ordinal)", SCALAR, "The smaller of two values."),
    row("rem", "(int, int) -> int", SCALAR, "Remainder, with the sign of the dividend."),
    row("mod", "(int, int) -> int", SCALAR, "Modulus, with the sign of the divisor."),
    row("lshift", "(int, int) -> int", SCALAR, "Shift left by n bits."),
    row("rshift", "(int, int) -> int", SCALAR, "Arithmetic shift right by n bits."),
    row("sqrt", "float -> float", SCALAR, "Square root of a non-negative number."),
    row("isqrt", "int -> int", SCALAR, "Integer square root, floor(sqrt(float(v)))."),
    row("ln", "float -> float", SCALAR, "Natural logarithm."),
    row("log", "(float, float) -> float", SCALAR, "Logarithm of v to base b."),
    row("exp", "float -> float", SCALAR, "e to the power v."),
    row("expt", "(float, float) -> float", SCALAR, "v to the power p, exp(ln(v) * p)."),
    row("^", "(a, int) -> a :: (a in number)", SCALAR, "Integer power (the exponent must be non-negative)."),
    row("reciprocal", "float -> float", SCALAR, "1.0 / v."),
    row("sin", "float -> float", SCALAR, "Sine (radians)."),
    row("cos", "float -> float", SCALAR, "Cosine (radians)."),
    row("tan", "float -> float", SCALAR, "Tangent (radians)."),
    row("asin", "float -> float", SCALAR, "Arc sine."),
    row("acos", "float -> float", SCALAR, "Arc cosine."),
    row("atan", "float -> float", SCALAR, "Arc tangent."),
    row("sinh", "float -> float", SCALAR, "Hyperbolic sine."),
    row("cosh", "float -> float", SCALAR, "Hyperbolic cosine."),
    row("tanh", "float -> float", SCALAR, "Hyperbolic tangent."),
    row("gcd", "(int, int) -> int", SCALAR, "Greatest common divisor."),
    // 5.4 conversions and constants
    row("btoi", "bool -> int", SCALAR, "t to 1, f to 0."),
    row("code_char", "int -> char", SCALAR, "The character with the given code."),
    row("char_code", "char -> int", SCALAR, "The code of a character."),
    row("float", "int -> float", SCALAR, "Integer to float."),
    row("ceil", "float -> int", SCALAR, "Smallest integer not below v."),
    row("floor", "float -> int", SCALAR, "Largest integer not above v."),
    row("trunc", "float -> int", SCALAR, "Round toward zero."),
    row("round", "float -> int", SCALAR, "Round to nearest, trunc(v + 0.5)."),
    row("pi", "float", SCALAR, "The constant pi."),
    row("max_int", "int", SCALAR, "The largest integer of CMU NESL's 32-bit int, 2147483647, as CMU prints it. Our int is 64-bit: arithmetic past it does not wrap."),
    row("min_int", "int", SCALAR, "The smallest integer of CMU NESL's 32-bit int, -2147483648, as CMU prints it. Our int is 64-bit: arithmetic past it does not wrap."),
    row("space", "char", SCALAR, "The space character."),
    row("newline", "char", SCALAR, "The newline character."),
    row("tab", "char", SCALAR, "The tab character."),
    // 5.5 random numbers
    row("rand", "a -> a :: (a in number)", SCALAR, "A random number in [0, v)."),
    row("rand_seed", "int -> bool", EFFECT, "Reseed the random number generator (serial only).").serial(),
    // 5.6 basic sequence functions
    row("length", "[a] -> int :: (a in any)", SEQUENCE, "The length of a sequence (prefix #).").fixed(),
    row("elt", "([a], int) -> a :: (a in any)", SEQUENCE, "The element at a position, 0-based (a[i]).").fixed(),
    row("dist", "(a, int) -> [a] :: (a in any)", SEQUENCE, "A sequence of n copies of a value."),
    row("index", "int -> [int]", SEQUENCE, "The sequence [0, 1, ..., n-1].").fixed(),
    row("iseq", "(int, int, int) -> [int]", SEQUENCE, "iseq(s, d, e) is [s:e:d]."),
    row("rep", "([a], a, int) -> [a] :: (a in any)", SEQUENCE, "A copy of d with position i replaced by v."),
    row("zip", "([a], [b]) -> [(a, b)] :: (a in any; b in any)", SEQUENCE, "Pairs the elements of two sequences of equal length."),
    row("zip3", "([a], [b], [c]) -> [(a, b, c)] :: (a in any; b in any; c in any)", SEQUENCE, "Triples the elements of three sequences."),
    row("unzip", "[(a, b)] -> ([a], [b]) :: (a in any; b in any)", SEQUENCE, "Splits a sequence of pairs."),
    row("cons", "(a, [a]) -> [a] :: (a in any)", SEQUENCE, "Prepends an element."),
    row("snoc", "([a], a) -> [a] :: (a in any)", SEQUENCE, "Appends an element."),
    row("vpair", "(a, a) -> [a] :: (a in any)", SEQUENCE, "A two-element sequence."),
    row("vsep", "[a] -> (a, a) :: (a in any)", SEQUENCE, "The first two elements as a pair."),
    // 5.7 scans and reductions
    row("plus_scan", "[a] -> [a] :: (a in number)", SCAN, "Exclusive prefix sums."),
    row("mult_scan", "[a] -> [a] :: (a in number)", SCAN, "Exclusive prefix products."),
    row("max_scan", "[a] -> [a] :: (a in ordinal)", SCAN, "Exclusive prefix maxima."),
    row("min_scan", "[a] -> [a] :: (a in ordinal)", SCAN, "Exclusive prefix minima."),
    row("or_scan", "[a] -> [a] :: (a in logical)", SCAN, "Exclusive prefix or."),
    row("and_scan", "[a] -> [a] :: (a in logical)", SCAN, "Exclusive prefix and."),
    row("xor_scan", "[a] -> [a] :: (a in logical)", SCAN, "Exclusive prefix exclusive or."),
    row("sum", "[a] -> a :: (a in number)", SCAN, "Sum of the elements (0 when empty).").fixed(),
    row("product", "[a] -> a :: (a in number)", SCAN, "Product of the elements (1 when empty)."),
    row("max_val", "[a] -> a :: (a in ordinal)", SCAN, "The largest element.").fixed(),
    row("min_val", "[a] -> a :: (a in ordinal)", SCAN, "The smallest element.").fixed(),
    row("any", "[a] -> a :: (a in logical)", SCAN, "Or of the elements.").fixed(),
    row("all", "[a] -> a :: (a in logical)", SCAN, "And of the elements.").fixed(),
    row("parity", "[a] -> a :: (a in logical)", SCAN, "Exclusive or of the elements."),
    row("count", "[bool] -> int", SCAN, "The number of true flags.").fixed(),
    row("max_index", "[a] -> int :: (a in ordinal)", SCAN, "Index of the (leftmost) largest element.").fixed(),
    row("min_index", "[a] -> int :: (a in ordinal)", SCAN, "Index of the (leftmost) smallest element.").fixed(),
    row("enumerate", "[bool] -> [int]", SCAN, "Exclusive prefix count of the true flags.").fixed(),
    // 5.8 reordering
    row("->", "([a], [int]) -> [a] :: (a in any)", PERMUTE, "Gather: result k is a[i[k]]."),
    row("read", "([a], [int]) -> [a] :: (a in any)", PERMUTE, "Gather: result k is a[i[k]] (same as ->)."),
    row("<-", "([a], [(int, a)]) -> [a] :: (a in any)", PERMUTE, "Scatter: a copy of d with d[i] = v for each (i, v)."),
    row("write", "([a], [(int, a)]) -> [a] :: (a in any)", PERMUTE, "Scatter (same as <-)."),
    row("permute", "([a], [int]) -> [a] :: (a in any)", PERMUTE, "Permute: result[i[k]] = v[k]."),
    row("put", "([a], [int], [a]) -> [a] :: (a in any)", PERMUTE, "Write the values v at the positions i of d.").fixed(),
    row("cond_put", "([a], [int], [bool], [a]) -> [a] :: (a in any)", PERMUTE, "put, only where the flag is true.").fixed(),
    row("rotate", "([a], int) -> [a] :: (a in any)", PERMUTE, "Rotate right by i (left if negative).").fixed(),
    row("reverse", "[a] -> [a] :: (a in any)", PERMUTE, "Reverse a sequence."),
    row("join", "([a], [int], [a], [int]) -> [a] :: (a in any)", PERMUTE, "Merge two sequences into the given positions.").fixed(),
    // 5.9 simple sequence manipulation
    row("pack", "[(a, bool)] -> [a] :: (a in any)", SEQUENCE, "Keep the values whose flag is true."),
    row("++", "([a], [a]) -> [a] :: (a in any)", SEQUENCE, "Append two sequences."),
    row("subseq", "([a], int, int) -> [a] :: (a in any)", SEQUENCE, "The elements from s to e-1.").fixed(),
    row("take", "([a], int) -> [a] :: (a in any)", SEQUENCE, "The first n elements (the last -n if negative).").fixed(),
    row("drop", "([a], int) -> [a] :: (a in any)", SEQUENCE, "All but the first n elements (the last -n if negative).").fixed(),
    row("odd_elts", "[a] -> [a] :: (a in any)", SEQUENCE, "The elements at odd positions."),
    row("even_elts", "[a] -> [a] :: (a in any)", SEQUENCE, "The elements at even positions."),
    row("interleave", "([a], [a]) -> [a] :: (a in any)", SEQUENCE, "a0, b0, a1, b1, ..."),
    row("length_from_flags", "[bool] -> [int]", SEQUENCE, "Lengths of the runs starting at each true flag."),
    row("pack_index", "[bool] -> [int]", SEQUENCE, "Positions of the true flags."),
    row("unpack", "([a], [bool]) -> [a] :: (a in any)", SEQUENCE, "Place v at the true positions, a zero-like default elsewhere.").fixed(),
    row("flag_merge", "([bool], [a], [a]) -> [a] :: (a in any)", SEQUENCE, "True positions take elements of v2, false ones of v1."),
    row("next", "([a], a) -> [a] :: (a in any)", SEQUENCE, "Shift left by one, filling with v."),
    row("previous", "([a], a) -> [a] :: (a in any)", SEQUENCE, "Shift right by one, filling with v."),
    row("group_by", "([a], int) -> [[a]] :: (a in any)", SEQUENCE, "Chunks of length n (the last may be shorter)."),
    // 5.10 nesting
    row("partition", "([a], [int]) -> [[a]] :: (a in any)", SEQUENCE, "Cut v into subsequences of the given lengths."),
    row("flatten", "[[a]] -> [a] :: (a in any)", SEQUENCE, "Concatenate the subsequences."),
    row("split", "([a], [bool]) -> [[a]] :: (a in any)", SEQUENCE, "The elements with false flags, then those with true flags.").fixed(),
    row("bottop", "[a] -> [[a]] :: (a in any)", SEQUENCE, "The first half (rounded up) and the second half.").fixed(),
    row("head_rest", "[a] -> (a, [a]) :: (a in any)", SEQUENCE, "The first element and the rest.").fixed(),
    row("rest_tail", "[a] -> ([a], a) :: (a in any)", SEQUENCE, "All but the last element, and the last.").fixed(),
    row("transpose", "[[a]] -> [[a]] :: (a in any)", SEQUENCE, "Transpose a rectangular nested sequence."),
    // 5.11 other sequence functions
    row("rank", "[a] -> [int] :: (a in number)", SEQUENCE, "Stable ascending rank of each element."),
    row("rank_down", "[a] -> [int] :: (a in number)", SEQUENCE, "Stable descending rank of each element."),
    row("sort", "[a] -> [a] :: (a in number)", SEQUENCE, "Ascending sort."),
    row("char_rank", "[char] -> [int]", SEQUENCE, "Rank of characters by code."),
    row("kth_smallest", "([a], int) -> a :: (a in ordinal)", PRELUDE, "The k-th smallest element, 0-based."),
    row("median", "[a] -> a :: (a in ordinal)", PRELUDE, "The median element."),
    row("find", "(a, [a]) -> int :: (a in any)", SEQUENCE, "Index of the first element equal to e, or -1."),
    row("search_for_subseqs", "([a], [a]) -> [int] :: (a in any)", PRELUDE, "All start positions where p occurs in s."),
    row("remove_duplicates", "[a] -> [a] :: (a in any)", PRELUDE, "One instance of each distinct value: its last occurrence, in order (as CMU NESL)."),
    row("mark_duplicates", "[a] -> [bool] :: (a in any)", PRELUDE, "True on the last occurrence of each distinct value."),
    row("union", "([a], [a]) -> [a] :: (a in any)", PRELUDE, "Union of duplicate-free sequences: remove_duplicates(a ++ b)."),
    row("intersection", "([a], [a]) -> [a] :: (a in any)", PRELUDE, "Intersection of duplicate-free sequences."),
    row("set_difference", "([a], [a]) -> [a] :: (a in any)", PRELUDE, "Difference of duplicate-free sequences."),
    row("name", "[a] -> [int] :: (a in any)", PRELUDE, "A label per element: the position of the value's last occurrence."),
    row("collect", "[(a, b)] -> [(a, [b])] :: (a in any; b in any)", PRELUDE, "Group values by key."),
    row("int_collect", "[(int, a)] -> [(int, [a])] :: (a in any)", PRELUDE, "Group values by integer key, keys ascending."),
    row("histogram", "[a] -> [(a, int)] :: (a in any)", PRELUDE, "Each distinct value with its count, in the order of remove_duplicates."),
    row("scan", "((a, a) -> a, a, [a]) -> ([a], a) :: (a in any)", PRELUDE, "Exclusive scan with a function argument; scans and total."),
    row("map", "(b -> a, [b]) -> [a] :: (a in any; b in any)", PRELUDE, "Apply a function argument to each element."),
    // 5.12 functions on any type
    row("eql", "(a, a) -> bool :: (a in any)", SCALAR, "Structural equality."),
    row("hash", "(a, int) -> int :: (a in any)", SCALAR, "Hash a value into [0, l)."),
    row("select", "(bool, a, a) -> a :: (a in any)", SCALAR, "a if the flag is true, else b (both evaluated)."),
    row("identity", "a -> a :: (a in any)", SCALAR, "The zero-like value of the argument's type."),
    // 5.13 strings
    row("string", "a -> [char] :: (a in any)", STRINGS, "Printable representation of a value (prefix @)."),
    row("exp_string", "(float, int) -> [char]", STRINGS, "Exponential notation with d digits after the point."),
    row("||", "([char], int) -> [char]", STRINGS, "Pad with spaces to width |n| (left-justified if n > 0)."),
    row("int_string", "int -> [char]", PRELUDE, "An integer as text."),
    row("float_string", "float -> [char]", PRELUDE, "A float as text."),
    row("linify", "[char] -> [[char]]", PRELUDE, "Split into lines."),
    row("wordify", "[char] -> [[char]]", PRELUDE, "Split into words."),
    row("lowercase", "char -> char", STRINGS, "Lower-case a character."),
    row("uppercase", "char -> char", STRINGS, "Upper-case a character."),
    row("string_eql", "([char], [char]) -> bool", PRELUDE, "Case-insensitive string equality."),
    row("parse_int", "[char] -> (int, bool)", PRELUDE, "Parse an integer; value and success flag."),
    row("parse_float", "[char] -> (float, bool)", PRELUDE, "Parse a float; value and success flag."),
    row("digitp", "char -> bool", STRINGS, "True for a decimal digit."),
    // 5.14 input/output and other side effects
    row("print_char", "char -> bool", IO, "Print a character to the terminal."),
    row("print_string", "[char] -> bool", IO, "Print a string to the terminal."),
    row("print_line", "[char] -> bool", PRELUDE, "Print a string and a newline."),
    row("print", "a -> a :: (a in any)", PRELUDE, "Print a value followed by a space; returns it."),
    row("printl", "a -> a :: (a in any)", PRELUDE, "Print a value followed by a newline; returns it."),
    row("print_trace", "([char], a) -> a :: (a in any)", PRELUDE, "Print the label, the abbreviated value (abrev_string) and a newline; returns the value."),
    row("abrev_string", "a -> [char] :: (a in any)", STRINGS, "@v, with at most 5 elements of a sequence (then ...) and 3 levels of nesting (then **)."),
    row("print_debug", "([char], a) -> a :: (a in any)", PRELUDE, "Print a label, the value and a newline; returns the value."),
    row("error", "[char] -> bool", EFFECT, "Print ERROR: s and abort the evaluation."),
    row("open_in_file", "[char] -> (stream, bool, [char])", EFFECT, "Open a file for reading.").serial(),
    row("open_file", "([char], int) -> (stream, bool, [char])", PRELUDE, "Open a file: mode 1 to read, 2 to write, 3 to append.").serial(),
    row("open_out_file", "[char] -> (stream, bool, [char])", EFFECT, "Open a file for writing.").serial(),
    row("open_append_file", "[char] -> (stream, bool, [char])", EFFECT, "Open a file for appending.").serial(),
    row("close_file", "stream -> (bool, [char])", EFFECT, "Close a file.").serial(),
    row("write_char", "(char, stream) -> (bool, [char])", EFFECT, "Write a character to a stream."),
    row("write_string", "([char], stream) -> (bool, [char])", EFFECT, "Write a string to a stream."),
    row("write_object", "(a, stream) -> (bool, [char]) :: (a in any)", EFFECT, "Write any value in the VCODE text format.").serial(),
    row("read_object", "(a, stream) -> (a, bool, [char]) :: (a in any)", EFFECT, "Read a value of the type of the prototype.").serial(),
    row("read_char", "stream -> (char, bool, [char])", EFFECT, "Read a character.").serial(),
    row("read_string", "([char], int, stream) -> (([char], int), bool, [char])", EFFECT, "Read up to a delimiter, end of file or max characters.").serial(),
    row("read_line", "stream -> (([char], bool), bool, [char])", EFFECT, "Read a line and an end-of-file flag.").serial(),
    row("read_word", "stream -> (([char], char, bool), bool, [char])", EFFECT, "Read a word, its terminating character and an end-of-file flag.").serial(),
    row("read_int_seq", "stream -> ([int], bool, [char])", EFFECT, "Read a sequence of integers.").serial(),
    row("read_float_seq", "stream -> ([float], bool, [char])", EFFECT, "Read a sequence of floats.").serial(),
    row("open_check", "(a, bool, [char]) -> a :: (a in any)", PRELUDE, "Strip the error information of an open, printing the message on failure."),
    row("read_check", "(a, bool, [char]) -> a :: (a in any)", PRELUDE, "Strip the error information of a read, printing the message on failure."),
    row("write_check", "(bool, [char]) -> bool", PRELUDE, "Strip the error information of a write, printing the message on failure."),
    row("close_check", "(bool, [char]) -> bool", PRELUDE, "Strip the error information of a close, printing the message on failure."),
    row("write_object_to_file", "(a, [char]) -> bool :: (a in any)", PRELUDE, "Write a value to a file.").serial(),
    row("read_object_from_file", "(a, [char]) -> a :: (a in any)", PRELUDE, "Read a value of the prototype's type from a file.").serial(),
    row("write_string_to_file", "([char], [char]) -> bool", PRELUDE, "Write a string to a file.").serial(),
    row("append_string_to_file", "([char], [char]) -> bool", PRELUDE, "Append a string to a file.").serial(),
    row("read_string_from_file", "[char] -> [char]", PRELUDE, "The whole contents of a file.").serial(),
    row("read_int_seq_from_file", "[char] -> [int]", PRELUDE, "Read a file containing ( 1 2 3 ).").serial(),
    row("read_float_seq_from_file", "[char] -> [float]", PRELUDE, "Read a file containing ( 1.0 2.0 ).").serial(),
    row("nullstr", "stream", SCALAR, "The null stream, stream(-1)."),
    row("stdin", "stream", SCALAR, "Standard input, stream(0)."),
    row("stdout", "stream", SCALAR, "Standard output, stream(2)."),
    row("stderr", "stream", SCALAR, "Standard error, stream(2)."),
    row("shell_command", "([char], [char]) -> [char]", EFFECT, "Run a shell command with the given input; its output.").serial(),
    row("get_environment_variable", "[char] -> [char]", EFFECT, "The value of an environment variable.").serial(),
    row("spawn", "([char], stream, stream, stream) -> ((stream, stream, stream), bool, [char])", EFFECT, "Start a subprocess.").serial(),
    row("display_request", "(int, [int]) -> [int]", EFFECT, "A request to the graphics display (the window library's lowest layer): its code and arguments; the answer."),
    // CMU's graphics library (plot.nesl, window.nesl): NESL code in prelude_window.nesl
    row("xps_make_window", "(((int, int), int, int), [char], [char]) -> (xps_window, bool, [char])", PRELUDE, "Graphics library (plot.nesl): xps make window."),
    row("xps_nmake_window", "(((int, int), int, int), [char], [char], stream) -> (xps_window, int, bool, [char])", PRELUDE, "Graphics library (plot.nesl): xps nmake window."),
    row("xps_kill_window", "xps_window -> bool", PRELUDE, "Graphics library (plot.nesl): xps kill window."),
    row("xps_close_window", "xps_window -> bool", PRELUDE, "Graphics library (plot.nesl): xps close window."),
    row("xps_clear_window", "xps_window -> bool", PRELUDE, "Graphics library (plot.nesl): xps clear window."),
    row("xps_white_pixel", "xps_window -> int", PRELUDE, "Graphics library (plot.nesl): xps white pixel."),
    row("xps_black_pixel", "xps_window -> int", PRELUDE, "Graphics library (plot.nesl): xps black pixel."),
    row("xps_color_gc", "(int, (int, int, int), xps_window) -> xps_gc", PRELUDE, "Graphics library (plot.nesl): xps color gc."),
    row("xps_line_gc", "(int, int, int, xps_window) -> xps_gc", PRELUDE, "Graphics library (plot.nesl): xps line gc."),
    row("xps_draw_point", "((int, int), xps_gc, xps_window) -> bool", PRELUDE, "Graphics library (plot.nesl): xps draw point."),
    row("xps_draw_lines", "([(int, int)], int, xps_gc, xps_window) -> bool", PRELUDE, "Graphics library (plot.nesl): xps draw lines."),
    row("xps_draw_segments", "([((int, int), int, int)], int, xps_gc, xps_window) -> bool", PRELUDE, "Graphics library (plot.nesl): xps draw segments."),
    row("xps_draw_string", "((int, int), [char], xps_gc, xps_window) -> bool", PRELUDE, "Graphics library (plot.nesl): xps draw string."),
    row("xps_draw_rectangle", "(((int, int), int, int), int, xps_gc, xps_window) -> bool", PRELUDE, "Graphics library (plot.nesl): xps draw rectangle."),
    row("xps_shade_polygon", "([(int, int)], xps_gc, xps_window) -> bool", PRELUDE, "Graphics library (plot.nesl): xps shade polygon."),
    row("xps_shade_rectangle", "(((int, int), int, int), xps_gc, xps_window) -> bool", PRELUDE, "Graphics library (plot.nesl): xps shade rectangle."),
    row("xps_select_input", "(int, xps_window) -> bool", PRELUDE, "Graphics library (plot.nesl): xps select input."),
    row("xps_next_event", "xps_window -> (int, (int, int), int, int)", PRELUDE, "Graphics library (plot.nesl): xps next event."),
    row("xps_next_event_noblock", "xps_window -> (bool, int, (int, int), int, int)", PRELUDE, "Graphics library (plot.nesl): xps next event noblock."),
    row("xps_next_selected_event", "(int, xps_window) -> ((int, int), int, int)", PRELUDE, "Graphics library (plot.nesl): xps next selected event."),
    row("xps_symbol_from_key", "(int, int, xps_window) -> int", PRELUDE, "Graphics library (plot.nesl): xps symbol from key."),
    row("key_char", "(int, int, xps_window) -> char", PRELUDE, "Graphics library (plot.nesl): key char."),
    row("xps_get_box", "((int, int), int, xps_gc, xps_window) -> (int, int)", PRELUDE, "Graphics library (plot.nesl): xps get box."),
    row("get_boxsize", "((int, int), float, float) -> (int, int)", PRELUDE, "Graphics library (plot.nesl): get boxsize."),
    row("make_scale_box", "(((int, int), int, int), bound_box(a)) -> ((int, int), scale_box(a)) :: (a in number)", PRELUDE, "Graphics library (plot.nesl): make scale box."),
    row("bounding_box", "[(a, a)] -> bound_box(a) :: (a in number)", PRELUDE, "The bounding box of points (for make_window)."),
    row("scale_point", "((a, a), scale_box(a)) -> (int, int) :: (a in number)", PRELUDE, "Graphics library (plot.nesl): scale point."),
    row("scale_size", "((a, b), scale_box(c)) -> (int, int) :: (a in number; b in number; c in number)", PRELUDE, "Graphics library (plot.nesl): scale size."),
    row("unscale_point", "((int, int), scale_box(a)) -> (a, a) :: (a in number)", PRELUDE, "Graphics library (plot.nesl): unscale point."),
    row("unscale_size", "((int, int), scale_box(a)) -> (int, int) :: (a in number)", PRELUDE, "Graphics library (plot.nesl): unscale size."),
    row("scale_and_clip_segment", "(((a, a), a, a), scale_box(a)) -> (((int, int), int, int), bool) :: (a in number)", PRELUDE, "Graphics library (plot.nesl): scale and clip segment."),
    row("in_scale_box_p", "((a, a), scale_box(a)) -> bool :: (a in number)", PRELUDE, "Graphics library (plot.nesl): in scale box p."),
    row("make_window", "(((int, int), int, int), bound_box(a), [char], [char]) -> window(a) :: (a in number)", PRELUDE, "The old plotting interface: a window showing a bounding box."),
    row("draw_points", "([(a, a)], window(a)) -> [bool] :: (a in number)", PRELUDE, "Draw points in a window of make_window."),
    row("draw_string", "((a, a), [char], window(a)) -> bool :: (a in number)", PRELUDE, "Draw text in a window of make_window."),
    row("draw_strings", "([(a, a)], [[char]], window(a)) -> [bool] :: (a in number)", PRELUDE, "Draw texts in a window of make_window."),
    row("draw_lines", "([(a, a)], int, window(a)) -> bool :: (a in number)", PRELUDE, "Draw a polyline in a window of make_window."),
    row("draw_segments", "([((a, a), a, a)], int, window(a)) -> bool :: (a in number)", PRELUDE, "Draw segments in a window of make_window."),
    row("get_mouse_info", "window(a) -> (a, a, int, int) :: (a in number)", PRELUDE, "Wait for a click in a window of make_window: (x, y, button, control)."),
    row("close_window", "window(a) -> bool :: (a in number)", PRELUDE, "Close a window of make_window."),
    row("clear_window", "window(a) -> bool :: (a in number)", PRELUDE, "Clear a window of make_window."),
    row("kill_window", "window(a) -> bool :: (a in number)", PRELUDE, "Close a window of make_window."),
    row("w_make_window", "(((int, int), int, int), [char], int, [char]) -> w_window", PRELUDE, "Make a window (offset, size, title, background colour, display)."),
    row("w_kill_window", "w_window -> bool", PRELUDE, "Close a window (its SVG file is written)."),
    row("w_get_color", "(float, float, float) -> int", PRELUDE, "The colour number of red, blue and green levels in [0, 1]."),
    row("w_add_box", "(((int, int), int, int), ((float, float), float, float), [char], int, w_window) -> (w_window, w_box)", PRELUDE, "Add a box with virtual coordinates to a window; the new window and the box."),
    row("w_add_text_box", "(((int, int), int, int), [char], int, w_window) -> (w_window, w_box)", PRELUDE, "Add a box to write text into."),
    row("w_make_window_box", "(((int, int), int, int), ((float, float), float, float), [char], int, [char]) -> (w_window, w_box)", PRELUDE, "Make a window filled by one box."),
    row("w_reset_box_size", "([char], ((float, float), float, float), w_window) -> (w_window, w_box)", PRELUDE, "Change the virtual coordinates of a named box."),
    row("w_bounds_from_box", "w_box -> ((float, float), float, float)", PRELUDE, "The virtual coordinates a box shows."),
    row("w_box_scale", "w_box -> float", PRELUDE, "Pixels per virtual unit of a box."),
    row("w_bounding_box", "[(a, a)] -> ((a, a), a, a) :: (a in number)", PRELUDE, "The smallest (offset, size) holding the points."),
    row("w_add_button", "(((int, int), int, int), [char], int, w_window) -> w_window", PRELUDE, "Add a named button to a window."),
    row("w_add_button_stack", "(((int, int), (int, int), int, int), [[char]], int, w_window) -> w_window", PRELUDE, "Add a row or column of named buttons."),
    row("w_add_text", "((int, int), [char], int, w_window) -> w_window", PRELUDE, "Write text on a window at a pixel position."),
    row("w_get_named_box", "([char], w_window) -> w_box", PRELUDE, "The box of a window with the given name."),
    row("w_get_input", "w_window -> ([char], [char], (float, float), (int, int), char)", PRELUDE, "Wait for input: (kind, name, position, flags, char); kind is button, click, key or none."),
    row("w_get_input_noblock", "w_window -> (bool, [char], [char], (float, float), (int, int), char)", PRELUDE, "Input if there is some: a flag, then what w_get_input returns."),
    row("w_get_button_input", "w_window -> [char]", PRELUDE, "Wait for a button press; the button's name."),
    row("w_get_zoom_box", "((float, float), int, w_box) -> ((float, float), float, float)", PRELUDE, "The region between a point and the next click in a box."),
    row("w_clear_box", "w_box -> bool", PRELUDE, "Clear a box to its background colour."),
    row("w_draw_segments", "([((float, float), float, float)], int, int, w_box) -> bool", PRELUDE, "Draw segments (pairs of points) in a box, clipped."),
    row("w_clip_and_draw_segments", "([((float, float), float, float)], int, int, w_box) -> bool", PRELUDE, "Draw segments in a box, clipped."),
    row("w_draw_lines", "([(float, float)], int, int, w_box) -> bool", PRELUDE, "Draw a polyline through the points in a box."),
    row("w_draw_point", "((float, float), int, w_box) -> bool", PRELUDE, "Draw a point in a box."),
    row("w_draw_points", "([(float, float)], int, w_box) -> [bool]", PRELUDE, "Draw points in a box."),
    row("w_draw_big_point", "((float, float), int, int, w_box) -> bool", PRELUDE, "Draw a point as a square of the given size in pixels."),
    row("w_draw_big_points", "([(float, float)], int, int, w_box) -> [bool]", PRELUDE, "Draw points as squares of the given size in pixels."),
    row("w_draw_string", "((float, float), [char], int, w_box) -> bool", PRELUDE, "Draw text in a box at a virtual position."),
    row("w_draw_rectangle", "(((float, float), a, b), int, int, w_box) -> bool :: (a in number; b in number)", PRELUDE, "Draw the outline of a rectangle in a box."),
    row("w_shade_rectangle", "(((float, float), a, b), int, w_box) -> bool :: (a in number; b in number)", PRELUDE, "Fill a rectangle in a box."),
    row("w_shade_polygon", "([(float, float)], int, w_box) -> bool", PRELUDE, "Fill a polygon in a box."),
    row("w_draw_arrow", "(((float, float), float, float), int, (int, int), int, w_box) -> bool", PRELUDE, "Draw an arrow (segment, width, head length and width, colour, box)."),
    row("w_write_text_centered", "([char], int, w_box) -> bool", PRELUDE, "Clear a text box and write text centred in it."),
    row("w_write_text_left", "([char], int, w_box) -> bool", PRELUDE, "Clear a text box and write text at its left."),
    row("w_write_paragraph", "([char], int, w_box) -> bool", PRELUDE, "Clear a text box and write wrapped text (@ breaks a line)."),
    // The graphics library's constants (values in WINDOW_CONSTANTS)
    row("w_black", "int", SCALAR, "A colour of the graphics library (window.nesl)."),
    row("w_white", "int", SCALAR, "A colour of the graphics library (window.nesl)."),
    row("w_red", "int", SCALAR, "A colour of the graphics library (window.nesl)."),
    row("w_blue", "int", SCALAR, "A colour of the graphics library (window.nesl)."),
    row("w_green", "int", SCALAR, "A colour of the graphics library (window.nesl)."),
    row("w_cyan", "int", SCALAR, "A colour of the graphics library (window.nesl)."),
    row("w_yellow", "int", SCALAR, "A colour of the graphics library (window.nesl)."),
    row("w_magenta", "int", SCALAR, "A colour of the graphics library (window.nesl)."),
    row("w_pink", "int", SCALAR, "A colour of the graphics library (window.nesl)."),
    row("w_light_green", "int", SCALAR, "A colour of the graphics library (window.nesl)."),
    row("w_light_blue", "int", SCALAR, "A colour of the graphics library (window.nesl)."),
    row("w_purple", "int", SCALAR, "A colour of the graphics library (window.nesl)."),
    row("w_gray", "int", SCALAR, "A colour of the graphics library (window.nesl)."),
    row("w_dark_gray", "int", SCALAR, "A colour of the graphics library (window.nesl)."),
    row("w_orange", "int", SCALAR, "A colour of the graphics library (window.nesl)."),
    row("w_xor", "int", SCALAR, "The xor drawing colour of the graphics library (window.nesl)."),
    row("xps_func_clear", "int", SCALAR, "A drawing function of a graphics context (plot.nesl)."),
    row("xps_func_and", "int", SCALAR, "A drawing function of a graphics context (plot.nesl)."),
    row("xps_func_and_reverse", "int", SCALAR, "A drawing function of a graphics context (plot.nesl)."),
    row("xps_func_copy", "int", SCALAR, "A drawing function of a graphics context (plot.nesl)."),
    row("xps_func_and_inverted", "int", SCALAR, "A drawing function of a graphics context (plot.nesl)."),
    row("xps_func_noop", "int", SCALAR, "A drawing function of a graphics context (plot.nesl)."),
    row("xps_func_xor", "int", SCALAR, "A drawing function of a graphics context (plot.nesl)."),
    row("xps_func_or", "int", SCALAR, "A drawing function of a graphics context (plot.nesl)."),
    row("xps_func_set", "int", SCALAR, "A drawing function of a graphics context (plot.nesl)."),
    row("xps_event_mask_no_event", "int", SCALAR, "An X event mask (plot.nesl)."),
    row("xps_event_mask_key_press", "int", SCALAR, "An X event mask (plot.nesl)."),
    row("xps_event_mask_key_release", "int", SCALAR, "An X event mask (plot.nesl)."),
    row("xps_event_mask_button_press", "int", SCALAR, "An X event mask (plot.nesl)."),
    row("xps_event_mask_button_release", "int", SCALAR, "An X event mask (plot.nesl)."),
    row("xps_event_mask_enter_window", "int", SCALAR, "An X event mask (plot.nesl)."),
    row("xps_event_mask_leave_window", "int", SCALAR, "An X event mask (plot.nesl)."),
    row("xps_event_mask_pointer_motion", "int", SCALAR, "An X event mask (plot.nesl)."),
    row("xps_event_mask_pointer_motion_hint", "int", SCALAR, "An X event mask (plot.nesl)."),
    row("xps_event_mask_button1_motion", "int", SCALAR, "An X event mask (plot.nesl)."),
    row("xps_event_mask_button2_motion", "int", SCALAR, "An X event mask (plot.nesl)."),
    row("xps_event_mask_button3_motion", "int", SCALAR, "An X event mask (plot.nesl)."),
    row("xps_event_key_press", "int", SCALAR, "An X event type (plot.nesl)."),
    row("xps_event_key_release", "int", SCALAR, "An X event type (plot.nesl)."),
    row("xps_event_button_press", "int", SCALAR, "An X event type (plot.nesl)."),
    row("xps_event_button_release", "int", SCALAR, "An X event type (plot.nesl)."),
    row("xps_event_motion_notify", "int", SCALAR, "An X event type (plot.nesl)."),
    // Further functions of CMU NESL's library (its *.lnesl files and other-ops.nesl)
    row("get", "([a], [int]) -> [a] :: (a in any)", PRELUDE, "Gather: result k is a[i[k]] (same as ->)."),
    row("append", "([a], [a]) -> [a] :: (a in any)", PRELUDE, "Append two sequences (same as ++)."),
    row("first", "(a, b) -> a :: (a in any; b in any)", PRELUDE, "The first element of a pair."),
    row("rest", "(a, b) -> b :: (a in any; b in any)", PRELUDE, "The second element of a pair."),
    row("make_sequence", "([a], a) -> [a] :: (a in any)", PRELUDE, "Appends an element (same as snoc)."),
    row("seq_dist", "(a, int) -> [a] :: (a in any)", PRELUDE, "A sequence of n copies of a value (same as dist)."),
    row("eput", "([a], [(int, a)]) -> [a] :: (a in any)", PRELUDE, "Scatter (same as <-)."),
    row("pack_scalar", "[(a, bool)] -> [a] :: (a in any)", PRELUDE, "Keep the values whose flag is true (same as pack)."),
    row("max_reduce", "[a] -> a :: (a in ordinal)", PRELUDE, "The largest element (same as max_val)."),
    row("min_reduce", "[a] -> a :: (a in ordinal)", PRELUDE, "The smallest element (same as min_val)."),
    row("or_reduce", "[a] -> a :: (a in logical)", PRELUDE, "Or of the elements (same as any)."),
    row("and_reduce", "[a] -> a :: (a in logical)", PRELUDE, "And of the elements (same as all)."),
    row("split_index", "[bool] -> ([int], [int])", PRELUDE, "The counts of false and true flags, and each element's position in split."),
    row("get_nocheck", "([a], [int]) -> [a] :: (a in any)", PRELUDE, "Gather, as ->."),
    row("elt_nocheck", "([a], int) -> a :: (a in any)", PRELUDE, "The element at a position, as a[i]."),
    row("permute_nocheck", "([a], [int]) -> [a] :: (a in any)", PRELUDE, "Permute, as permute."),
    row("int_collect_pairs", "[(int, a)] -> [[(int, a)]] :: (a in any)", PRELUDE, "The pairs grouped by integer key, keys ascending."),
    row("grep", "([char], [char]) -> [[char]]", PRELUDE, "The lines of the file fname that contain str.").serial(),
    row("parse_int_vect", "[char] -> ([int], bool)", PRELUDE, "The integers of the words of a string, and whether all parsed."),
    row("char_map", "[char] -> [bool]", PRELUDE, "256 flags, true at the codes of the given characters."),
    row("flag_partition", "([a], [bool]) -> [[a]] :: (a in any)", PRELUDE, "Cut a sequence before each true flag (the first flag must be true)."),
    row("bool_string", "bool -> [char]", PRELUDE, "t or f."),
    row("char_string", "char -> [char]", PRELUDE, "A character as text, with its backquote."),
    row("hashinternal", "a -> int :: (a in any)", SCALAR, "A hash of any value (the full-range hash behind hash)."),
    row("fseq", "(float, float, float) -> [float]", PRELUDE, "fseq(s, d, e): s, s + d, ... up to |e - s| from s."),
    row("next_char", "([int], [a], [a], int) -> [int] :: (a in any)", PRELUDE, "The candidate starts c at which w[i:] occurs in s at c + i."),
    row("make_segdes", "int -> segdes", PRELUDE, "A segment descriptor for one subsequence of length n (for nest)."),
    row("nest", "([a], [segdes]) -> [[a]] :: (a in any)", PRELUDE, "Cut v into subsequences of the lengths of the segment descriptors: nest(v, {make_segdes(l) : l in ls}) = partition(v, ls)."),
    row("vselect", "(bool, a, a, segdes) -> a :: (a in any)", PRELUDE, "select(flag, a, b); the segment descriptor is not used."),
    row("justify_text", "([char], int) -> [[char]]", PRELUDE, "The words of text filled into lines of about width characters (two spaces after a period)."),
    row("collect_pairs", "[(a, b)] -> [[(a, b)]] :: (a in any; b in any)", PRELUDE, "The pairs grouped by key."),
    row("group_by_space", "([char], [char]) -> [[char]]", PRELUDE, "Words: the runs of str between characters of space_chars."),
    row("prompt", "[char] -> [char]", PRELUDE, "Print a prompt and read a non-empty line from standard input.").serial(),
    row("one", "a -> a :: (a in number)", SCALAR, "1 of the argument's type."),
    row("zero", "a -> a :: (a in number)", SCALAR, "0 of the argument's type."),
    row("float_num", "a -> float :: (a in number)", SCALAR, "A number as a float."),
    row("int_to_any", "(int, a) -> a :: (a in number)", SCALAR, "An integer as a number of the type of the second argument."),
    row("float_to_any", "(float, a) -> a :: (a in number)", SCALAR, "A float as a number of the type of the second argument (rounded for int)."),
    row("hash_float", "float -> int", PRELUDE, "A hash of a float (0 for 0.0)."),
    row("hash_scalar", "a -> int :: (a in any)", SCALAR, "A hash of a scalar: an int itself, a bool 0 or 1, a character its code."),
    row("hash_vector", "[a] -> int :: (a in any)", SCALAR, "A hash of a sequence."),
    row("cheap_hash_vector", "[a] -> int :: (a in any)", SCALAR, "A hash of a sequence."),
    row("start_timer", "int -> int", EFFECT, "Start the timer; returns its argument."),
    row("stop_timer", "int -> float", EFFECT, "Seconds since start_timer."),
    // CMU's hash tables (other-ops.nesl): open addressing with quadratic probing
    row("make_table", "((a, b), int) -> hashtable(a, b) :: (a in any; b in any)", PRELUDE, "An empty table for at most maxsize (key, value) pairs shaped like the first argument."),
    row("insert_table", "([(a, b)], hashtable(a, b)) -> hashtable(a, b) :: (a in any; b in any)", PRELUDE, "The table with the (key, value) pairs added."),
    row("create_table", "[(a, b)] -> hashtable(a, b) :: (a in any; b in any)", PRELUDE, "A table holding the (key, value) pairs (at least one)."),
    row("fast_create_table", "[(a, b)] -> hashtable(a, b) :: (a in any; b in any)", PRELUDE, "A table holding the (key, value) pairs (same as create_table)."),
    row("search_table", "([a], hashtable(a, b)) -> [(b, bool)] :: (a in any; b in any)", PRELUDE, "For each key, (value, T) if the table holds it, else (identity, F)."),
    row("table_entries", "hashtable(a, b) -> [(a, b)] :: (a in any; b in any)", PRELUDE, "The (key, value) pairs a table holds."),
];

/// Names of the datatypes the prelude predefines (usable in type strings).
const PREDEFINED_DATATYPES: &[&str] = &[
    "stream", "hashtable", "segdes", "xps_window", "xps_gc", "scale_box", "bound_box", "window", "w_subbox", "w_window", "w_box",
];

/// The graphics library's constants (CMU's window.nesl and plot.nesl): the colours, the
/// drawing functions of a graphics context and the X event types and masks.
pub const WINDOW_CONSTANTS: &[(&str, i64)] = &[
    ("w_black", 0), ("w_white", 63), ("w_red", 3), ("w_blue", 12), ("w_green", 48), ("w_cyan", 60),
    ("w_yellow", 51), ("w_magenta", 15), ("w_pink", 43), ("w_light_green", 58), ("w_light_blue", 44),
    ("w_purple", 9), ("w_gray", 42), ("w_dark_gray", 21), ("w_orange", 35), ("w_xor", 64),
    ("xps_func_clear", 0), ("xps_func_and", 1), ("xps_func_and_reverse", 2), ("xps_func_copy", 3),
    ("xps_func_and_inverted", 4), ("xps_func_noop", 5), ("xps_func_xor", 6), ("xps_func_or", 7),
    ("xps_func_set", 15),
    ("xps_event_mask_no_event", 0), ("xps_event_mask_key_press", 1), ("xps_event_mask_key_release", 2),
    ("xps_event_mask_button_press", 4), ("xps_event_mask_button_release", 8),
    ("xps_event_mask_enter_window", 16), ("xps_event_mask_leave_window", 32),
    ("xps_event_mask_pointer_motion", 64), ("xps_event_mask_pointer_motion_hint", 128),
    ("xps_event_mask_button1_motion", 256), ("xps_event_mask_button2_motion", 512),
    ("xps_event_mask_button3_motion", 1024),
    ("xps_event_key_press", 2), ("xps_event_key_release", 3), ("xps_event_button_press", 4),
    ("xps_event_button_release", 5), ("xps_event_motion_notify", 6),
];

/// The graphics library's functions (CMU's plot.nesl and window.nesl, written in NESL in
/// `prelude_window.nesl`) and the request they are built on.
pub const GRAPHICS_FUNCTIONS: &[&str] = &[
    "display_request",
    "xps_make_window",
    "xps_nmake_window",
    "xps_kill_window",
    "xps_close_window",
    "xps_clear_window",
    "xps_white_pixel",
    "xps_black_pixel",
    "xps_color_gc",
    "xps_line_gc",
    "xps_draw_point",
    "xps_draw_lines",
    "xps_draw_segments",
    "xps_draw_string",
    "xps_draw_rectangle",
    "xps_shade_polygon",
    "xps_shade_rectangle",
    "xps_select_input",
    "xps_next_event",
    "xps_next_event_noblock",
    "xps_next_selected_event",
    "xps_symbol_from_key",
    "key_char",
    "xps_get_box",
    "get_boxsize",
    "make_scale_box",
    "bounding_box",
    "scale_point",
    "scale_size",
    "unscale_point",
    "unscale_size",
    "scale_and_clip_segment",
    "in_scale_box_p",
    "make_window",
    "draw_points",
    "draw_string",
    "draw_strings",
    "draw_lines",
    "draw_segments",
    "get_mouse_info",
    "close_window",
    "clear_window",
    "kill_window",
    "w_make_window",
    "w_kill_window",
    "w_get_color",
    "w_add_box",
    "w_add_text_box",
    "w_make_window_box",
    "w_reset_box_size",
    "w_bounds_from_box",
    "w_box_scale",
    "w_bounding_box",
    "w_add_button",
    "w_add_button_stack",
    "w_add_text",
    "w_get_named_box",
    "w_get_input",
    "w_get_input_noblock",
    "w_get_button_input",
    "w_get_zoom_box",
    "w_clear_box",
    "w_draw_segments",
    "w_clip_and_draw_segments",
    "w_draw_lines",
    "w_draw_point",
    "w_draw_points",
    "w_draw_big_point",
    "w_draw_big_points",
    "w_draw_string",
    "w_draw_rectangle",
    "w_shade_rectangle",
    "w_shade_polygon",
    "w_draw_arrow",
    "w_write_text_centered",
    "w_write_text_left",
    "w_write_paragraph",
];

/// True for a function or constant of the graphics library.
pub fn is_graphics_builtin(name: &str) -> bool {
    GRAPHICS_FUNCTIONS.contains(&name) || window_constant(name).is_some()
}

/// The value of a graphics-library constant ([`WINDOW_CONSTANTS`]).
pub fn window_constant(name: &str) -> Option<i64> {
    WINDOW_CONSTANTS.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}


/// First variable id used by built-in schemes (instantiation replaces them all, so they
/// only need to be distinct within one scheme; a high range keeps them apart from
/// session variables in debugging output).
const BUILTIN_VAR_BASE: u32 = 0xF000_0000;

struct Entry {
    row: &'static Builtin,
    scheme: Scheme,
}

fn registry() -> &'static HashMap<&'static str, Entry> {
    static MAP: OnceLock<HashMap<&'static str, Entry>> = OnceLock::new();
    MAP.get_or_init(|| {
        let mut map = HashMap::with_capacity(BUILTINS.len());
        for (i, row) in BUILTINS.iter().enumerate() {
            let base = BUILTIN_VAR_BASE + (i as u32) * 8;
            // The rows are constant and covered by a unit test that parses every one; a
            // row that failed to parse would simply be absent.
            if let Ok(scheme) = parse_type_string(row.ty, base, PREDEFINED_DATATYPES) {
                map.insert(row.name, Entry { row, scheme });
            }
        }
        map
    })
}

/// The row of a built-in, by its AST name.
pub fn lookup(name: &str) -> Option<&'static Builtin> {
    registry().get(name).map(|e| e.row)
}

/// The type scheme of a built-in function or constant, by its AST name.
pub fn builtin_scheme(name: &str) -> Option<Scheme> {
    registry().get(name).map(|e| e.scheme.clone())
}

/// The type scheme of a built-in, borrowed from the registry.
pub(crate) fn builtin_scheme_ref(name: &str) -> Option<&'static Scheme> {
    registry().get(name).map(|e| &e.scheme)
}

/// The one-line description of a built-in, by its AST name.
pub fn builtin_description(name: &str) -> Option<&'static str> {
    lookup(name).map(|r| r.doc)
}

/// True when `name` is a built-in function, operator or constant.
pub fn is_builtin(name: &str) -> bool {
    registry().contains_key(name)
}

/// True for a built-in that may not be called inside an apply-to-each.
pub fn is_serial_only_builtin(name: &str) -> bool {
    lookup(name).is_some_and(|r| r.serial_only)
}

/// True for a built-in that a user function may replace.
pub fn is_redefinable_builtin(name: &str) -> bool {
    lookup(name).is_some_and(|r| r.redefinable)
}

/// Parses a NESL type such as `"([a], int) -> a :: (a in ordinal)"` with the language's
/// grammar into a scheme whose variables are numbered from `base`. Names other than the
/// base types and those in `datatypes` are type variables; variables missing from the
/// context are in class `any`. The scheme lists its variables in order of first
/// appearance.
pub fn parse_type_string(src: &str, base: u32, datatypes: &[&str]) -> Result<Scheme, String> {
    let spec = crate::parser::parse_type(src).map_err(|d| {
        d.first()
            .map_or_else(|| "not a type".to_string(), |d| d.message.clone())
    })?;
    scheme_of_spec(&spec, base, datatypes)
}

/// The scheme of a parsed type (see [`parse_type_string`]).
fn scheme_of_spec(spec: &TypeSpec, base: u32, datatypes: &[&str]) -> Result<Scheme, String> {
    let mut vars: Vec<(String, TyVar)> = Vec::new();
    let ty = convert(&spec.ty, &mut vars, base, datatypes)?;
    for (v, c) in &spec.context {
        let class =
            class_from_name(&c.name).ok_or_else(|| format!("unknown type class `{}`", c.name))?;
        match vars.iter_mut().find(|(n, _)| *n == v.name) {
            Some((_, tv)) => tv.class = class,
            None => {
                return Err(format!(
                    "the context names `{}`, which the type does not use",
                    v.name
                ))
            }
        }
    }
    let vars: Vec<TyVar> = vars.iter().map(|(_, v)| *v).collect();
    let ty = reclass(&ty, &vars);
    Ok(Scheme { vars, ty })
}

fn convert(
    te: &TypeExpr,
    vars: &mut Vec<(String, TyVar)>,
    base: u32,
    datatypes: &[&str],
) -> Result<Type, String> {
    Ok(match &te.kind {
        TypeExprKind::Name(id) => match id.name.as_str() {
            "int" => Type::Int,
            "bool" => Type::Bool,
            "float" => Type::Float,
            "char" => Type::Char,
            n if datatypes.contains(&n) => Type::Data(n.to_string(), Vec::new()),
            n => match vars.iter().find(|(m, _)| m == n) {
                Some((_, v)) => Type::Var(*v),
                None => {
                    let v = TyVar {
                        id: base + vars.len() as u32,
                        class: TypeClass::Any,
                    };
                    vars.push((n.to_string(), v));
                    Type::Var(v)
                }
            },
        },
        TypeExprKind::Seq(e) => Type::seq(convert(e, vars, base, datatypes)?),
        TypeExprKind::Pair(a, b) => {
            let a = convert(a, vars, base, datatypes)?;
            Type::pair(a, convert(b, vars, base, datatypes)?)
        }
        TypeExprKind::Fun(a, b) => {
            let a = convert(a, vars, base, datatypes)?;
            Type::fun(a, convert(b, vars, base, datatypes)?)
        }
        TypeExprKind::Data(id, args) => {
            if !datatypes.contains(&id.name.as_str()) {
                return Err(format!("`{}` is not a datatype", id.name));
            }
            let mut out = Vec::with_capacity(args.len());
            for a in args {
                out.push(convert(a, vars, base, datatypes)?);
            }
            Type::Data(id.name.clone(), out)
        }
    })
}

/// The class named `name` (`any`, `number`, `ordinal`, `logical`).
pub fn class_from_name(name: &str) -> Option<TypeClass> {
    match name {
        "any" => Some(TypeClass::Any),
        "number" => Some(TypeClass::Number),
        "ordinal" => Some(TypeClass::Ordinal),
        "logical" => Some(TypeClass::Logical),
        _ => None,
    }
}

/// Rewrites the classes stored in `t`'s variables to those of `vars`.
fn reclass(t: &Type, vars: &[TyVar]) -> Type {
    match t {
        Type::Var(v) => Type::Var(vars.iter().find(|w| w.id == v.id).copied().unwrap_or(*v)),
        Type::Seq(e) => Type::seq(reclass(e, vars)),
        Type::Pair(a, b) => Type::pair(reclass(a, vars), reclass(b, vars)),
        Type::Fun(a, b) => Type::fun(reclass(a, vars), reclass(b, vars)),
        Type::Data(n, args) => {
            Type::Data(n.clone(), args.iter().map(|a| reclass(a, vars)).collect())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::print::format_scheme;

    #[test]
    fn every_row_parses_and_prints_back() {
        let mut seen = std::collections::HashSet::new();
        for Builtin {
            name,
            ty,
            doc: desc,
            ..
        } in BUILTINS
        {
            assert!(seen.insert(*name), "duplicate row {name}");
            assert!(!desc.is_empty());
            let s = parse_type_string(ty, 0, PREDEFINED_DATATYPES)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            // Rows without a context are printed with `(a in any)` contexts; compare
            // modulo that.
            let printed = format_scheme(&s);
            if ty.contains("::") || s.vars.is_empty() {
                assert_eq!(&printed, ty, "row {name}");
            }
            assert!(builtin_scheme(name).is_some(), "{name}");
        }
    }

    #[test]
    fn classes_and_structure() {
        let s = builtin_scheme("+").unwrap();
        assert_eq!(s.vars.len(), 1);
        assert_eq!(s.vars[0].class, TypeClass::Number);
        let v = Type::Var(s.vars[0]);
        assert_eq!(s.ty, Type::fun(Type::pair(v.clone(), v.clone()), v));
        assert_eq!(builtin_scheme("pi").unwrap().ty, Type::Float);
        assert_eq!(
            builtin_scheme("stdout").unwrap().ty,
            Type::Data("stream".into(), vec![])
        );
        assert!(builtin_scheme("no_such_function").is_none());
        assert_eq!(
            builtin_description("sum"),
            Some("Sum of the elements (0 when empty).")
        );
    }

    #[test]
    fn parser_errors() {
        assert!(parse_type_string("(a, a", 0, &[]).is_err());
        assert!(parse_type_string("a -> a :: (b in number)", 0, &[]).is_err());
        assert!(parse_type_string("a -> a :: (a in nothing)", 0, &[]).is_err());
        assert!(parse_type_string("a $ b", 0, &[]).is_err());
        let s = parse_type_string("((b, b) -> b, b, [b]) -> ([b], b)", 0, &[]).unwrap();
        assert_eq!(
            format_scheme(&s),
            "((a, a) -> a, a, [a]) -> ([a], a) :: (a in any)"
        );
    }
}
