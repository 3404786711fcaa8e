//! The types and one-line descriptions of the standard library (spec section 5).
//!
//! Every built-in function, operator and constant is one row of [`TABLE`]: its name (as
//! the AST spells it: operators keep their symbol, `#x` is `length`, `a[i]` is `elt`, ...),
//! its type written as NESL prints it (`"(a, a) -> a :: (a in number)"`) and a
//! description. The type strings are parsed once by the small parser of this module
//! ([`parse_type_string`]); a variable without a context entry is in class `any`.
//!
//! The graphics library (CMU's plot.nesl and window.nesl) has the types its NESL code
//! (prelude_window.nesl) has, which are CMU's; a test checks that they agree.

use crate::ty::{Scheme, TyVar, Type, TypeClass};
use std::collections::HashMap;
use std::sync::OnceLock;

/// `(name, type, description)` for every built-in.
#[rustfmt::skip]
pub const TABLE: &[(&str, &str, &str)] = &[
    // 5.1 logical
    ("not", "a -> a :: (a in logical)", "Logical negation on bool, bitwise complement on int."),
    ("or", "(a, a) -> a :: (a in logical)", "Inclusive or (bitwise on int)."),
    ("and", "(a, a) -> a :: (a in logical)", "And (bitwise on int)."),
    ("xor", "(a, a) -> a :: (a in logical)", "Exclusive or (bitwise on int)."),
    ("nor", "(a, a) -> a :: (a in logical)", "not(a or b)."),
    ("nand", "(a, a) -> a :: (a in logical)", "not(a and b)."),
    // 5.2 comparison
    ("==", "(a, a) -> bool :: (a in ordinal)", "Equality."),
    ("/=", "(a, a) -> bool :: (a in ordinal)", "Inequality."),
    ("<", "(a, a) -> bool :: (a in ordinal)", "Less than (characters by code)."),
    (">", "(a, a) -> bool :: (a in ordinal)", "Greater than (characters by code)."),
    ("<=", "(a, a) -> bool :: (a in ordinal)", "Less than or equal."),
    (">=", "(a, a) -> bool :: (a in ordinal)", "Greater than or equal."),
    ("plusp", "a -> bool :: (a in number)", "True if the argument is positive."),
    ("minusp", "a -> bool :: (a in number)", "True if the argument is negative."),
    ("zerop", "a -> bool :: (a in number)", "True if the argument is zero."),
    ("oddp", "int -> bool", "True if the integer is odd."),
    ("evenp", "int -> bool", "True if the integer is even."),
    // 5.3 arithmetic
    ("+", "(a, a) -> a :: (a in number)", "Addition."),
    ("-", "(a, a) -> a :: (a in number)", "Subtraction."),
    ("*", "(a, a) -> a :: (a in number)", "Multiplication."),
    ("/", "(a, a) -> a :: (a in number)", "Division; integers truncate toward zero; dividing by zero is an error."),
    ("negate", "a -> a :: (a in number)", "Negation (prefix -)."),
    ("abs", "a -> a :: (a in number)", "Absolute value."),
    ("diff", "(a, a) -> a :: (a in number)", "Absolute difference abs(x - y)."),
    ("max", "(a, a) -> a :: (a in ordinal)", "The larger of two values."),
    ("min", "(a, a) -> a :: (a in ordinal)", "The smaller of two values."),
    ("rem", "(int, int) -> int", "Remainder, with the sign of the dividend."),
    ("mod", "(int, int) -> int", "Modulus, with the sign of the divisor."),
    ("lshift", "(int, int) -> int", "Shift left by n bits."),
    ("rshift", "(int, int) -> int", "Arithmetic shift right by n bits."),
    ("sqrt", "float -> float", "Square root of a non-negative number."),
    ("isqrt", "int -> int", "Integer square root, floor(sqrt(float(v)))."),
    ("ln", "float -> float", "Natural logarithm."),
    ("log", "(float, float) -> float", "Logarithm of v to base b."),
    ("exp", "float -> float", "e to the power v."),
    ("expt", "(float, float) -> float", "v to the power p, exp(ln(v) * p)."),
    ("^", "(a, int) -> a :: (a in number)", "Integer power (the exponent must be non-negative)."),
    ("reciprocal", "float -> float", "1.0 / v."),
    ("sin", "float -> float", "Sine (radians)."),
    ("cos", "float -> float", "Cosine (radians)."),
    ("tan", "float -> float", "Tangent (radians)."),
    ("asin", "float -> float", "Arc sine."),
    ("acos", "float -> float", "Arc cosine."),
    ("atan", "float -> float", "Arc tangent."),
    ("sinh", "float -> float", "Hyperbolic sine."),
    ("cosh", "float -> float", "Hyperbolic cosine."),
    ("tanh", "float -> float", "Hyperbolic tangent."),
    ("gcd", "(int, int) -> int", "Greatest common divisor."),
    // 5.4 conversions and constants
    ("btoi", "bool -> int", "t to 1, f to 0."),
    ("code_char", "int -> char", "The character with the given code."),
    ("char_code", "char -> int", "The code of a character."),
    ("float", "int -> float", "Integer to float."),
    ("ceil", "float -> int", "Smallest integer not below v."),
    ("floor", "float -> int", "Largest integer not above v."),
    ("trunc", "float -> int", "Round toward zero."),
    ("round", "float -> int", "Round to nearest, trunc(v + 0.5)."),
    ("pi", "float", "The constant pi."),
    ("max_int", "int", "The largest integer."),
    ("min_int", "int", "The smallest integer."),
    ("space", "char", "The space character."),
    ("newline", "char", "The newline character."),
    ("tab", "char", "The tab character."),
    // 5.5 random numbers
    ("rand", "a -> a :: (a in number)", "A random number in [0, v)."),
    ("rand_seed", "int -> bool", "Reseed the random number generator (serial only)."),
    // 5.6 basic sequence functions
    ("length", "[a] -> int :: (a in any)", "The length of a sequence (prefix #)."),
    ("elt", "([a], int) -> a :: (a in any)", "The element at a position, 0-based (a[i])."),
    ("dist", "(a, int) -> [a] :: (a in any)", "A sequence of n copies of a value."),
    ("index", "int -> [int]", "The sequence [0, 1, ..., n-1]."),
    ("iseq", "(int, int, int) -> [int]", "iseq(s, d, e) is [s:e:d]."),
    ("rep", "([a], a, int) -> [a] :: (a in any)", "A copy of d with position i replaced by v."),
    ("zip", "([a], [b]) -> [(a, b)] :: (a in any; b in any)", "Pairs the elements of two sequences of equal length."),
    ("zip3", "([a], [b], [c]) -> [(a, b, c)] :: (a in any; b in any; c in any)", "Triples the elements of three sequences."),
    ("unzip", "[(a, b)] -> ([a], [b]) :: (a in any; b in any)", "Splits a sequence of pairs."),
    ("cons", "(a, [a]) -> [a] :: (a in any)", "Prepends an element."),
    ("snoc", "([a], a) -> [a] :: (a in any)", "Appends an element."),
    ("vpair", "(a, a) -> [a] :: (a in any)", "A two-element sequence."),
    ("vsep", "[a] -> (a, a) :: (a in any)", "The first two elements as a pair."),
    // 5.7 scans and reductions
    ("plus_scan", "[a] -> [a] :: (a in number)", "Exclusive prefix sums."),
    ("mult_scan", "[a] -> [a] :: (a in number)", "Exclusive prefix products."),
    ("max_scan", "[a] -> [a] :: (a in ordinal)", "Exclusive prefix maxima."),
    ("min_scan", "[a] -> [a] :: (a in ordinal)", "Exclusive prefix minima."),
    ("or_scan", "[a] -> [a] :: (a in logical)", "Exclusive prefix or."),
    ("and_scan", "[a] -> [a] :: (a in logical)", "Exclusive prefix and."),
    ("xor_scan", "[a] -> [a] :: (a in logical)", "Exclusive prefix exclusive or."),
    ("sum", "[a] -> a :: (a in number)", "Sum of the elements (0 when empty)."),
    ("product", "[a] -> a :: (a in number)", "Product of the elements (1 when empty)."),
    ("max_val", "[a] -> a :: (a in ordinal)", "The largest element."),
    ("min_val", "[a] -> a :: (a in ordinal)", "The smallest element."),
    ("any", "[a] -> a :: (a in logical)", "Or of the elements."),
    ("all", "[a] -> a :: (a in logical)", "And of the elements."),
    ("parity", "[a] -> a :: (a in logical)", "Exclusive or of the elements."),
    ("count", "[bool] -> int", "The number of true flags."),
    ("max_index", "[a] -> int :: (a in ordinal)", "Index of the (leftmost) largest element."),
    ("min_index", "[a] -> int :: (a in ordinal)", "Index of the (leftmost) smallest element."),
    ("enumerate", "[bool] -> [int]", "Exclusive prefix count of the true flags."),
    // 5.8 reordering
    ("->", "([a], [int]) -> [a] :: (a in any)", "Gather: result k is a[i[k]]."),
    ("read", "([a], [int]) -> [a] :: (a in any)", "Gather: result k is a[i[k]] (same as ->)."),
    ("<-", "([a], [(int, a)]) -> [a] :: (a in any)", "Scatter: a copy of d with d[i] = v for each (i, v)."),
    ("write", "([a], [(int, a)]) -> [a] :: (a in any)", "Scatter (same as <-)."),
    ("permute", "([a], [int]) -> [a] :: (a in any)", "Permute: result[i[k]] = v[k]."),
    ("put", "([a], [int], [a]) -> [a] :: (a in any)", "Write the values v at the positions i of d."),
    ("cond_put", "([a], [int], [bool], [a]) -> [a] :: (a in any)", "put, only where the flag is true."),
    ("rotate", "([a], int) -> [a] :: (a in any)", "Rotate right by i (left if negative)."),
    ("reverse", "[a] -> [a] :: (a in any)", "Reverse a sequence."),
    ("join", "([a], [int], [a], [int]) -> [a] :: (a in any)", "Merge two sequences into the given positions."),
    // 5.9 simple sequence manipulation
    ("pack", "[(a, bool)] -> [a] :: (a in any)", "Keep the values whose flag is true."),
    ("++", "([a], [a]) -> [a] :: (a in any)", "Append two sequences."),
    ("subseq", "([a], int, int) -> [a] :: (a in any)", "The elements from s to e-1."),
    ("take", "([a], int) -> [a] :: (a in any)", "The first n elements (the last -n if negative)."),
    ("drop", "([a], int) -> [a] :: (a in any)", "All but the first n elements (the last -n if negative)."),
    ("odd_elts", "[a] -> [a] :: (a in any)", "The elements at odd positions."),
    ("even_elts", "[a] -> [a] :: (a in any)", "The elements at even positions."),
    ("interleave", "([a], [a]) -> [a] :: (a in any)", "a0, b0, a1, b1, ..."),
    ("length_from_flags", "[bool] -> [int]", "Lengths of the runs starting at each true flag."),
    ("pack_index", "[bool] -> [int]", "Positions of the true flags."),
    ("unpack", "([a], [bool]) -> [a] :: (a in any)", "Place v at the true positions, a zero-like default elsewhere."),
    ("flag_merge", "([bool], [a], [a]) -> [a] :: (a in any)", "True positions take elements of v2, false ones of v1."),
    ("next", "([a], a) -> [a] :: (a in any)", "Shift left by one, filling with v."),
    ("previous", "([a], a) -> [a] :: (a in any)", "Shift right by one, filling with v."),
    ("group_by", "([a], int) -> [[a]] :: (a in any)", "Chunks of length n (the last may be shorter)."),
    // 5.10 nesting
    ("partition", "([a], [int]) -> [[a]] :: (a in any)", "Cut v into subsequences of the given lengths."),
    ("flatten", "[[a]] -> [a] :: (a in any)", "Concatenate the subsequences."),
    ("split", "([a], [bool]) -> [[a]] :: (a in any)", "The elements with false flags, then those with true flags."),
    ("bottop", "[a] -> [[a]] :: (a in any)", "The first half (rounded up) and the second half."),
    ("head_rest", "[a] -> (a, [a]) :: (a in any)", "The first element and the rest."),
    ("rest_tail", "[a] -> ([a], a) :: (a in any)", "All but the last element, and the last."),
    ("transpose", "[[a]] -> [[a]] :: (a in any)", "Transpose a rectangular nested sequence."),
    // 5.11 other sequence functions
    ("rank", "[a] -> [int] :: (a in number)", "Stable ascending rank of each element."),
    ("rank_down", "[a] -> [int] :: (a in number)", "Stable descending rank of each element."),
    ("sort", "[a] -> [a] :: (a in number)", "Ascending sort."),
    ("char_rank", "[char] -> [int]", "Rank of characters by code."),
    ("kth_smallest", "([a], int) -> a :: (a in ordinal)", "The k-th smallest element, 0-based."),
    ("median", "[a] -> a :: (a in ordinal)", "The median element."),
    ("find", "(a, [a]) -> int :: (a in any)", "Index of the first element equal to e, or -1."),
    ("search_for_subseqs", "([a], [a]) -> [int] :: (a in any)", "All start positions where p occurs in s."),
    ("remove_duplicates", "[a] -> [a] :: (a in any)", "One instance of each distinct value."),
    ("mark_duplicates", "[a] -> [bool] :: (a in any)", "True on exactly one instance of each distinct value."),
    ("union", "([a], [a]) -> [a] :: (a in any)", "Union of duplicate-free sequences."),
    ("intersection", "([a], [a]) -> [a] :: (a in any)", "Intersection of duplicate-free sequences."),
    ("set_difference", "([a], [a]) -> [a] :: (a in any)", "Difference of duplicate-free sequences."),
    ("name", "[a] -> [int] :: (a in any)", "A label per element; equal values get equal labels."),
    ("collect", "[(a, b)] -> [(a, [b])] :: (a in any; b in any)", "Group values by key."),
    ("int_collect", "[(int, a)] -> [(int, [a])] :: (a in any)", "Group values by integer key, keys ascending."),
    ("histogram", "[a] -> [(a, int)] :: (a in any)", "Each distinct value with its count."),
    ("scan", "((a, a) -> a, a, [a]) -> ([a], a) :: (a in any)", "Exclusive scan with a function argument; scans and total."),
    ("map", "(b -> a, [b]) -> [a] :: (a in any; b in any)", "Apply a function argument to each element."),
    // 5.12 functions on any type
    ("eql", "(a, a) -> bool :: (a in any)", "Structural equality."),
    ("hash", "(a, int) -> int :: (a in any)", "Hash a value into [0, l)."),
    ("select", "(bool, a, a) -> a :: (a in any)", "a if the flag is true, else b (both evaluated)."),
    ("identity", "a -> a :: (a in any)", "The zero-like value of the argument's type."),
    // 5.13 strings
    ("string", "a -> [char] :: (a in any)", "Printable representation of a value (prefix @)."),
    ("exp_string", "(float, int) -> [char]", "Exponential notation with d digits after the point."),
    ("||", "([char], int) -> [char]", "Pad with spaces to width |n| (left-justified if n > 0)."),
    ("int_string", "int -> [char]", "An integer as text."),
    ("float_string", "float -> [char]", "A float as text."),
    ("linify", "[char] -> [[char]]", "Split into lines."),
    ("wordify", "[char] -> [[char]]", "Split into words."),
    ("lowercase", "char -> char", "Lower-case a character."),
    ("uppercase", "char -> char", "Upper-case a character."),
    ("string_eql", "([char], [char]) -> bool", "Case-insensitive string equality."),
    ("parse_int", "[char] -> (int, bool)", "Parse an integer; value and success flag."),
    ("parse_float", "[char] -> (float, bool)", "Parse a float; value and success flag."),
    ("digitp", "char -> bool", "True for a decimal digit."),
    // 5.14 input/output and other side effects
    ("print_char", "char -> bool", "Print a character to the terminal."),
    ("print_string", "[char] -> bool", "Print a string to the terminal."),
    ("print_line", "[char] -> bool", "Print a string and a newline."),
    ("print", "a -> a :: (a in any)", "Print a value followed by a space; returns it."),
    ("printl", "a -> a :: (a in any)", "Print a value followed by a newline; returns it."),
    ("print_debug", "([char], a) -> a :: (a in any)", "Print a label, the value and a newline; returns the value."),
    ("error", "[char] -> bool", "Print ERROR: s and abort the evaluation."),
    ("open_in_file", "[char] -> (stream, bool, [char])", "Open a file for reading."),
    ("open_file", "([char], int) -> (stream, bool, [char])", "Open a file: mode 1 to read, 2 to write, 3 to append."),
    ("open_out_file", "[char] -> (stream, bool, [char])", "Open a file for writing."),
    ("open_append_file", "[char] -> (stream, bool, [char])", "Open a file for appending."),
    ("close_file", "stream -> (bool, [char])", "Close a file."),
    ("write_char", "(char, stream) -> (bool, [char])", "Write a character to a stream."),
    ("write_string", "([char], stream) -> (bool, [char])", "Write a string to a stream."),
    ("write_object", "(a, stream) -> (bool, [char]) :: (a in any)", "Write any value in the VCODE text format."),
    ("read_object", "(a, stream) -> (a, bool, [char]) :: (a in any)", "Read a value of the type of the prototype."),
    ("read_char", "stream -> (char, bool, [char])", "Read a character."),
    ("read_string", "([char], int, stream) -> (([char], int), bool, [char])", "Read up to a delimiter, end of file or max characters."),
    ("read_line", "stream -> (([char], bool), bool, [char])", "Read a line and an end-of-file flag."),
    ("read_word", "stream -> (([char], char, bool), bool, [char])", "Read a word, its terminating character and an end-of-file flag."),
    ("read_int_seq", "stream -> ([int], bool, [char])", "Read a sequence of integers."),
    ("read_float_seq", "stream -> ([float], bool, [char])", "Read a sequence of floats."),
    ("open_check", "(a, bool, [char]) -> a :: (a in any)", "Strip the error information of an open, printing the message on failure."),
    ("read_check", "(a, bool, [char]) -> a :: (a in any)", "Strip the error information of a read, printing the message on failure."),
    ("write_check", "(bool, [char]) -> bool", "Strip the error information of a write, printing the message on failure."),
    ("close_check", "(bool, [char]) -> bool", "Strip the error information of a close, printing the message on failure."),
    ("write_object_to_file", "(a, [char]) -> bool :: (a in any)", "Write a value to a file."),
    ("read_object_from_file", "(a, [char]) -> a :: (a in any)", "Read a value of the prototype's type from a file."),
    ("write_string_to_file", "([char], [char]) -> bool", "Write a string to a file."),
    ("append_string_to_file", "([char], [char]) -> bool", "Append a string to a file."),
    ("read_string_from_file", "[char] -> [char]", "The whole contents of a file."),
    ("read_int_seq_from_file", "[char] -> [int]", "Read a file containing ( 1 2 3 )."),
    ("read_float_seq_from_file", "[char] -> [float]", "Read a file containing ( 1.0 2.0 )."),
    ("nullstr", "stream", "The null stream, stream(-1)."),
    ("stdin", "stream", "Standard input, stream(0)."),
    ("stdout", "stream", "Standard output, stream(2)."),
    ("stderr", "stream", "Standard error, stream(2)."),
    ("shell_command", "([char], [char]) -> [char]", "Run a shell command with the given input; its output."),
    ("get_environment_variable", "[char] -> [char]", "The value of an environment variable."),
    ("spawn", "([char], stream, stream, stream) -> ((stream, stream, stream), bool, [char])", "Start a subprocess."),
    ("display_request", "(int, [int]) -> [int]", "A request to the graphics display (the window library's lowest layer): its code and arguments; the answer."),
    // CMU's graphics library (plot.nesl, window.nesl): NESL code in prelude_window.nesl
    ("xps_make_window", "(((int, int), int, int), [char], [char]) -> (xps_window, bool, [char])", "Graphics library (plot.nesl): xps make window."),
    ("xps_nmake_window", "(((int, int), int, int), [char], [char], stream) -> (xps_window, int, bool, [char])", "Graphics library (plot.nesl): xps nmake window."),
    ("xps_kill_window", "xps_window -> bool", "Graphics library (plot.nesl): xps kill window."),
    ("xps_close_window", "xps_window -> bool", "Graphics library (plot.nesl): xps close window."),
    ("xps_clear_window", "xps_window -> bool", "Graphics library (plot.nesl): xps clear window."),
    ("xps_white_pixel", "xps_window -> int", "Graphics library (plot.nesl): xps white pixel."),
    ("xps_black_pixel", "xps_window -> int", "Graphics library (plot.nesl): xps black pixel."),
    ("xps_color_gc", "(int, (int, int, int), xps_window) -> xps_gc", "Graphics library (plot.nesl): xps color gc."),
    ("xps_line_gc", "(int, int, int, xps_window) -> xps_gc", "Graphics library (plot.nesl): xps line gc."),
    ("xps_draw_point", "((int, int), xps_gc, xps_window) -> bool", "Graphics library (plot.nesl): xps draw point."),
    ("xps_draw_lines", "([(int, int)], int, xps_gc, xps_window) -> bool", "Graphics library (plot.nesl): xps draw lines."),
    ("xps_draw_segments", "([((int, int), int, int)], int, xps_gc, xps_window) -> bool", "Graphics library (plot.nesl): xps draw segments."),
    ("xps_draw_string", "((int, int), [char], xps_gc, xps_window) -> bool", "Graphics library (plot.nesl): xps draw string."),
    ("xps_draw_rectangle", "(((int, int), int, int), int, xps_gc, xps_window) -> bool", "Graphics library (plot.nesl): xps draw rectangle."),
    ("xps_shade_polygon", "([(int, int)], xps_gc, xps_window) -> bool", "Graphics library (plot.nesl): xps shade polygon."),
    ("xps_shade_rectangle", "(((int, int), int, int), xps_gc, xps_window) -> bool", "Graphics library (plot.nesl): xps shade rectangle."),
    ("xps_select_input", "(int, xps_window) -> bool", "Graphics library (plot.nesl): xps select input."),
    ("xps_next_event", "xps_window -> (int, (int, int), int, int)", "Graphics library (plot.nesl): xps next event."),
    ("xps_next_event_noblock", "xps_window -> (bool, int, (int, int), int, int)", "Graphics library (plot.nesl): xps next event noblock."),
    ("xps_next_selected_event", "(int, xps_window) -> ((int, int), int, int)", "Graphics library (plot.nesl): xps next selected event."),
    ("xps_symbol_from_key", "(int, int, xps_window) -> int", "Graphics library (plot.nesl): xps symbol from key."),
    ("key_char", "(int, int, xps_window) -> char", "Graphics library (plot.nesl): key char."),
    ("xps_get_box", "((int, int), int, xps_gc, xps_window) -> (int, int)", "Graphics library (plot.nesl): xps get box."),
    ("get_boxsize", "((int, int), float, float) -> (int, int)", "Graphics library (plot.nesl): get boxsize."),
    ("make_scale_box", "(((int, int), int, int), bound_box(a)) -> ((int, int), scale_box(a)) :: (a in number)", "Graphics library (plot.nesl): make scale box."),
    ("bounding_box", "[(a, a)] -> bound_box(a) :: (a in number)", "The bounding box of points (for make_window)."),
    ("scale_point", "((a, a), scale_box(a)) -> (int, int) :: (a in number)", "Graphics library (plot.nesl): scale point."),
    ("scale_size", "((a, b), scale_box(c)) -> (int, int) :: (a in number; b in number; c in number)", "Graphics library (plot.nesl): scale size."),
    ("unscale_point", "((int, int), scale_box(a)) -> (a, a) :: (a in number)", "Graphics library (plot.nesl): unscale point."),
    ("unscale_size", "((int, int), scale_box(a)) -> (int, int) :: (a in number)", "Graphics library (plot.nesl): unscale size."),
    ("scale_and_clip_segment", "(((a, a), a, a), scale_box(a)) -> (((int, int), int, int), bool) :: (a in number)", "Graphics library (plot.nesl): scale and clip segment."),
    ("in_scale_box_p", "((a, a), scale_box(a)) -> bool :: (a in number)", "Graphics library (plot.nesl): in scale box p."),
    ("make_window", "(((int, int), int, int), bound_box(a), [char], [char]) -> window(a) :: (a in number)", "The old plotting interface: a window showing a bounding box."),
    ("draw_points", "([(a, a)], window(a)) -> [bool] :: (a in number)", "Draw points in a window of make_window."),
    ("draw_string", "((a, a), [char], window(a)) -> bool :: (a in number)", "Draw text in a window of make_window."),
    ("draw_strings", "([(a, a)], [[char]], window(a)) -> [bool] :: (a in number)", "Draw texts in a window of make_window."),
    ("draw_lines", "([(a, a)], int, window(a)) -> bool :: (a in number)", "Draw a polyline in a window of make_window."),
    ("draw_segments", "([((a, a), a, a)], int, window(a)) -> bool :: (a in number)", "Draw segments in a window of make_window."),
    ("get_mouse_info", "window(a) -> (a, a, int, int) :: (a in number)", "Wait for a click in a window of make_window: (x, y, button, control)."),
    ("close_window", "window(a) -> bool :: (a in number)", "Close a window of make_window."),
    ("clear_window", "window(a) -> bool :: (a in number)", "Clear a window of make_window."),
    ("kill_window", "window(a) -> bool :: (a in number)", "Close a window of make_window."),
    ("w_make_window", "(((int, int), int, int), [char], int, [char]) -> w_window", "Make a window (offset, size, title, background colour, display)."),
    ("w_kill_window", "w_window -> bool", "Close a window (its SVG file is written)."),
    ("w_get_color", "(float, float, float) -> int", "The colour number of red, blue and green levels in [0, 1]."),
    ("w_add_box", "(((int, int), int, int), ((float, float), float, float), [char], int, w_window) -> (w_window, w_box)", "Add a box with virtual coordinates to a window; the new window and the box."),
    ("w_add_text_box", "(((int, int), int, int), [char], int, w_window) -> (w_window, w_box)", "Add a box to write text into."),
    ("w_make_window_box", "(((int, int), int, int), ((float, float), float, float), [char], int, [char]) -> (w_window, w_box)", "Make a window filled by one box."),
    ("w_reset_box_size", "([char], ((float, float), float, float), w_window) -> (w_window, w_box)", "Change the virtual coordinates of a named box."),
    ("w_bounds_from_box", "w_box -> ((float, float), float, float)", "The virtual coordinates a box shows."),
    ("w_box_scale", "w_box -> float", "Pixels per virtual unit of a box."),
    ("w_bounding_box", "[(a, a)] -> ((a, a), a, a) :: (a in number)", "The smallest (offset, size) holding the points."),
    ("w_add_button", "(((int, int), int, int), [char], int, w_window) -> w_window", "Add a named button to a window."),
    ("w_add_button_stack", "(((int, int), (int, int), int, int), [[char]], int, w_window) -> w_window", "Add a row or column of named buttons."),
    ("w_add_text", "((int, int), [char], int, w_window) -> w_window", "Write text on a window at a pixel position."),
    ("w_get_named_box", "([char], w_window) -> w_box", "The box of a window with the given name."),
    ("w_get_input", "w_window -> ([char], [char], (float, float), (int, int), char)", "Wait for input: (kind, name, position, flags, char); kind is button, click, key or none."),
    ("w_get_input_noblock", "w_window -> (bool, [char], [char], (float, float), (int, int), char)", "Input if there is some: a flag, then what w_get_input returns."),
    ("w_get_button_input", "w_window -> [char]", "Wait for a button press; the button's name."),
    ("w_get_zoom_box", "((float, float), int, w_box) -> ((float, float), float, float)", "The region between a point and the next click in a box."),
    ("w_clear_box", "w_box -> bool", "Clear a box to its background colour."),
    ("w_draw_segments", "([((float, float), float, float)], int, int, w_box) -> bool", "Draw segments (pairs of points) in a box, clipped."),
    ("w_clip_and_draw_segments", "([((float, float), float, float)], int, int, w_box) -> bool", "Draw segments in a box, clipped."),
    ("w_draw_lines", "([(float, float)], int, int, w_box) -> bool", "Draw a polyline through the points in a box."),
    ("w_draw_point", "((float, float), int, w_box) -> bool", "Draw a point in a box."),
    ("w_draw_points", "([(float, float)], int, w_box) -> [bool]", "Draw points in a box."),
    ("w_draw_big_point", "((float, float), int, int, w_box) -> bool", "Draw a point as a square of the given size in pixels."),
    ("w_draw_big_points", "([(float, float)], int, int, w_box) -> [bool]", "Draw points as squares of the given size in pixels."),
    ("w_draw_string", "((float, float), [char], int, w_box) -> bool", "Draw text in a box at a virtual position."),
    ("w_draw_rectangle", "(((float, float), a, b), int, int, w_box) -> bool :: (a in number; b in number)", "Draw the outline of a rectangle in a box."),
    ("w_shade_rectangle", "(((float, float), a, b), int, w_box) -> bool :: (a in number; b in number)", "Fill a rectangle in a box."),
    ("w_shade_polygon", "([(float, float)], int, w_box) -> bool", "Fill a polygon in a box."),
    ("w_draw_arrow", "(((float, float), float, float), int, (int, int), int, w_box) -> bool", "Draw an arrow (segment, width, head length and width, colour, box)."),
    ("w_write_text_centered", "([char], int, w_box) -> bool", "Clear a text box and write text centred in it."),
    ("w_write_text_left", "([char], int, w_box) -> bool", "Clear a text box and write text at its left."),
    ("w_write_paragraph", "([char], int, w_box) -> bool", "Clear a text box and write wrapped text (@ breaks a line)."),
    // Further functions of CMU NESL's library (its *.lnesl files and other-ops.nesl)
    ("get", "([a], [int]) -> [a] :: (a in any)", "Gather: result k is a[i[k]] (same as ->)."),
    ("append", "([a], [a]) -> [a] :: (a in any)", "Append two sequences (same as ++)."),
    ("first", "(a, b) -> a :: (a in any; b in any)", "The first element of a pair."),
    ("rest", "(a, b) -> b :: (a in any; b in any)", "The second element of a pair."),
    ("make_sequence", "([a], a) -> [a] :: (a in any)", "Appends an element (same as snoc)."),
    ("seq_dist", "(a, int) -> [a] :: (a in any)", "A sequence of n copies of a value (same as dist)."),
    ("eput", "([a], [(int, a)]) -> [a] :: (a in any)", "Scatter (same as <-)."),
    ("pack_scalar", "[(a, bool)] -> [a] :: (a in any)", "Keep the values whose flag is true (same as pack)."),
    ("max_reduce", "[a] -> a :: (a in ordinal)", "The largest element (same as max_val)."),
    ("min_reduce", "[a] -> a :: (a in ordinal)", "The smallest element (same as min_val)."),
    ("or_reduce", "[a] -> a :: (a in logical)", "Or of the elements (same as any)."),
    ("and_reduce", "[a] -> a :: (a in logical)", "And of the elements (same as all)."),
    ("split_index", "[bool] -> ([int], [int])", "The counts of false and true flags, and each element's position in split."),
    ("fseq", "(float, float, float) -> [float]", "fseq(s, d, e): s, s + d, ... up to |e - s| from s."),
    ("next_char", "([int], [a], [a], int) -> [int] :: (a in any)", "The candidate starts c at which w[i:] occurs in s at c + i."),
    ("collect_pairs", "[(a, b)] -> [[(a, b)]] :: (a in any; b in any)", "The pairs grouped by key."),
    ("group_by_space", "([char], [char]) -> [[char]]", "Words: the runs of str between characters of space_chars."),
    ("prompt", "[char] -> [char]", "Print a prompt and read a non-empty line from standard input."),
    ("one", "a -> a :: (a in number)", "1 of the argument's type."),
    ("zero", "a -> a :: (a in number)", "0 of the argument's type."),
    ("float_num", "a -> float :: (a in number)", "A number as a float."),
    ("int_to_any", "(int, a) -> a :: (a in number)", "An integer as a number of the type of the second argument."),
    ("float_to_any", "(float, a) -> a :: (a in number)", "A float as a number of the type of the second argument (rounded for int)."),
    ("hash_float", "float -> int", "A hash of a float (0 for 0.0)."),
    ("hash_scalar", "a -> int :: (a in any)", "A hash of a scalar: an int itself, a bool 0 or 1, a character its code."),
    ("hash_vector", "[a] -> int :: (a in any)", "A hash of a sequence."),
    ("cheap_hash_vector", "[a] -> int :: (a in any)", "A hash of a sequence."),
    ("start_timer", "int -> int", "Start the timer; returns its argument."),
    ("stop_timer", "int -> float", "Seconds since start_timer."),
    // CMU's hash tables (other-ops.nesl): open addressing with quadratic probing
    ("make_table", "((a, b), int) -> hashtable(a, b) :: (a in any; b in any)", "An empty table for at most maxsize (key, value) pairs shaped like the first argument."),
    ("insert_table", "([(a, b)], hashtable(a, b)) -> hashtable(a, b) :: (a in any; b in any)", "The table with the (key, value) pairs added."),
    ("create_table", "[(a, b)] -> hashtable(a, b) :: (a in any; b in any)", "A table holding the (key, value) pairs (at least one)."),
    ("fast_create_table", "[(a, b)] -> hashtable(a, b) :: (a in any; b in any)", "A table holding the (key, value) pairs (same as create_table)."),
    ("search_table", "([a], hashtable(a, b)) -> [(b, bool)] :: (a in any; b in any)", "For each key, (value, T) if the table holds it, else (identity, F)."),
    ("table_entries", "hashtable(a, b) -> [(a, b)] :: (a in any; b in any)", "The (key, value) pairs a table holds."),
];

/// Built-ins that may not be called inside an apply-to-each ("Cannot call X in
/// parallel"): reseeding the generator and the file, stream and process functions. The
/// terminal output functions (`print_char`, `print_string`, ...) and `write_char`,
/// `write_string`, `write_check` may be called in parallel.
const SERIAL_ONLY: &[&str] = &[
    "rand_seed",
    "open_in_file",
    "open_file",
    "open_out_file",
    "open_append_file",
    "close_file",
    "write_object",
    "read_object",
    "read_char",
    "read_string",
    "read_line",
    "read_word",
    "read_int_seq",
    "read_float_seq",
    "write_object_to_file",
    "read_object_from_file",
    "write_string_to_file",
    "append_string_to_file",
    "read_string_from_file",
    "read_int_seq_from_file",
    "read_float_seq_from_file",
    "shell_command",
    "get_environment_variable",
    "spawn",
    "prompt",
];

/// True for a built-in that may not be called inside an apply-to-each.
pub fn is_serial_only_builtin(name: &str) -> bool {
    SERIAL_ONLY.contains(&name)
}

/// Built-ins a user function may not replace: those CMU NESL's library marks
/// `:redefine no`, and `length` and `elt`, which `#a` and `a[i]` denote. A user function
/// may take the name of any other built-in; the new definition wins from then on.
const NOT_REDEFINABLE: &[&str] = &[
    "length", "elt", "index", "sum", "max_val", "min_val", "any", "all", "put", "cond_put",
    "enumerate", "count", "max_index", "min_index", "rotate", "unpack", "join", "subseq",
    "drop", "take", "split", "bottop", "head_rest", "rest_tail",
];

/// True for a built-in that a user function may replace ([`NOT_REDEFINABLE`]).
pub fn is_redefinable_builtin(name: &str) -> bool {
    is_builtin(name) && !NOT_REDEFINABLE.contains(&name)
}

/// Names of the datatypes the prelude predefines (usable in type strings).
const PREDEFINED_DATATYPES: &[&str] = &[
    "stream", "hashtable", "xps_window", "xps_gc", "scale_box", "bound_box", "window", "w_subbox", "w_window", "w_box",
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
    scheme: Scheme,
    description: &'static str,
}

fn table() -> &'static HashMap<&'static str, Entry> {
    static TABLE_MAP: OnceLock<HashMap<&'static str, Entry>> = OnceLock::new();
    TABLE_MAP.get_or_init(|| {
        let mut map = HashMap::new();
        for (i, (name, ty, description)) in TABLE.iter().enumerate() {
            let base = BUILTIN_VAR_BASE + (i as u32) * 8;
            // The table is constant and covered by a unit test that parses every row; a
            // row that failed to parse would simply be absent.
            if let Ok(scheme) = parse_type_string(ty, base, PREDEFINED_DATATYPES) {
                map.insert(
                    *name,
                    Entry {
                        scheme,
                        description,
                    },
                );
            }
        }
        for (name, _) in WINDOW_CONSTANTS {
            let scheme = Scheme { vars: Vec::new(), ty: Type::Int };
            map.insert(*name, Entry { scheme, description: "A constant of the graphics library (window.nesl, plot.nesl)." });
        }
        map
    })
}

/// The type scheme of a built-in function or constant, by its AST name.
pub fn builtin_scheme(name: &str) -> Option<Scheme> {
    table().get(name).map(|e| e.scheme.clone())
}

/// The type scheme of a built-in, borrowed from the table.
pub(crate) fn builtin_scheme_ref(name: &str) -> Option<&'static Scheme> {
    table().get(name).map(|e| &e.scheme)
}

/// The one-line description of a built-in, by its AST name.
pub fn builtin_description(name: &str) -> Option<&'static str> {
    table().get(name).map(|e| e.description)
}

/// True when `name` is a built-in function, operator or constant.
pub fn is_builtin(name: &str) -> bool {
    table().contains_key(name)
}

/// Parses a NESL type string such as `"([a], int) -> a :: (a in ordinal)"` into a
/// scheme whose variables are numbered from `base`. Identifiers other than the base
/// types and the names in `datatypes` are type variables; variables missing from the
/// context are in class `any`. The scheme lists its variables in order of first
/// appearance.
pub fn parse_type_string(src: &str, base: u32, datatypes: &[&str]) -> Result<Scheme, String> {
    let toks = tokenize(src)?;
    let mut p = TyParser {
        toks,
        pos: 0,
        vars: Vec::new(),
        base,
        datatypes,
    };
    let ty = p.ty()?;
    if p.eat("::") {
        p.expect("(")?;
        loop {
            let v = p.ident()?;
            p.expect("in")?;
            let c = p.ident()?;
            let class = class_from_name(&c).ok_or_else(|| format!("unknown type class `{c}`"))?;
            match p.vars.iter_mut().find(|(n, _)| *n == v) {
                Some((_, tv)) => tv.class = class,
                None => {
                    return Err(format!(
                        "the context names `{v}`, which the type does not use"
                    ))
                }
            }
            if !p.eat(";") {
                break;
            }
        }
        p.expect(")")?;
    }
    if p.pos != p.toks.len() {
        return Err(format!("unexpected `{}`", p.toks[p.pos]));
    }
    let vars: Vec<TyVar> = p.vars.iter().map(|(_, v)| *v).collect();
    let ty = reclass(&ty, &vars);
    Ok(Scheme { vars, ty })
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

fn tokenize(src: &str) -> Result<Vec<String>, String> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(src[s..i].to_ascii_lowercase());
        } else if src[i..].starts_with("->") || src[i..].starts_with("::") {
            out.push(src[i..i + 2].to_string());
            i += 2;
        } else if matches!(c, b'(' | b')' | b'[' | b']' | b',' | b';') {
            out.push((c as char).to_string());
            i += 1;
        } else {
            return Err(format!("unexpected character `{}` in a type", c as char));
        }
    }
    Ok(out)
}

struct TyParser<'a> {
    toks: Vec<String>,
    pos: usize,
    vars: Vec<(String, TyVar)>,
    base: u32,
    datatypes: &'a [&'a str],
}

impl TyParser<'_> {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.pos).map(String::as_str)
    }

    fn eat(&mut self, t: &str) -> bool {
        if self.peek() == Some(t) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, t: &str) -> Result<(), String> {
        if self.eat(t) {
            Ok(())
        } else {
            Err(format!(
                "expected `{t}`, found {}",
                self.peek().map_or("the end".into(), |s| format!("`{s}`"))
            ))
        }
    }

    fn ident(&mut self) -> Result<String, String> {
        match self.peek() {
            Some(s)
                if s.chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_') =>
            {
                let s = s.to_string();
                self.pos += 1;
                Ok(s)
            }
            other => Err(format!(
                "expected a name, found {}",
                other.map_or("the end".into(), |s| format!("`{s}`"))
            )),
        }
    }

    /// type ::= arrow {',' arrow}   (pairs are right-nested)
    fn ty(&mut self) -> Result<Type, String> {
        let first = self.arrow()?;
        if self.eat(",") {
            let rest = self.ty()?;
            Ok(Type::pair(first, rest))
        } else {
            Ok(first)
        }
    }

    /// arrow ::= atom ['->' atom]
    fn arrow(&mut self) -> Result<Type, String> {
        let a = self.atom()?;
        if self.eat("->") {
            let r = self.atom()?;
            Ok(Type::fun(a, r))
        } else {
            Ok(a)
        }
    }

    fn atom(&mut self) -> Result<Type, String> {
        if self.eat("[") {
            let t = self.ty()?;
            self.expect("]")?;
            return Ok(Type::seq(t));
        }
        if self.eat("(") {
            let t = self.ty()?;
            self.expect(")")?;
            return Ok(t);
        }
        let name = self.ident()?;
        Ok(match name.as_str() {
            "int" => Type::Int,
            "bool" => Type::Bool,
            "float" => Type::Float,
            "char" => Type::Char,
            n if self.datatypes.contains(&n) => {
                let mut args = Vec::new();
                if self.eat("(") {
                    loop {
                        args.push(self.arrow()?);
                        if !self.eat(",") {
                            break;
                        }
                    }
                    self.expect(")")?;
                }
                Type::Data(name, args)
            }
            _ => {
                if let Some((_, v)) = self.vars.iter().find(|(n, _)| *n == name) {
                    Type::Var(*v)
                } else {
                    let v = TyVar {
                        id: self.base + self.vars.len() as u32,
                        class: TypeClass::Any,
                    };
                    self.vars.push((name, v));
                    Type::Var(v)
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::print::format_scheme;

    #[test]
    fn every_row_parses_and_prints_back() {
        let mut seen = std::collections::HashSet::new();
        for (name, ty, desc) in TABLE {
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
