//! Name resolution and type inference for NESL top-level forms.
//!
//! A [`Session`] holds what earlier forms defined (functions with their schemes and typed
//! definitions, datatypes, global bindings). [`Session::check_item`] resolves every name
//! of one form, infers its types with Hindley–Milner unification extended by NESL's type
//! classes ([`unify`]), and records the form on success. The built-in functions' types
//! come from [`builtins`]; types print as the NESL top level prints them ([`print`]).
//!
//! Guarantees after a successful `check_item` (what the flattener relies on):
//! - every [`Expr::ty`](crate::ast::Expr) and [`Pattern::ty`](crate::ast::Pattern) of the
//!   form is `Some` and fully substituted;
//! - inside a function body the types mention only the variables quantified in that
//!   function's [`Scheme`] (any other leftover variable is defaulted to `int`);
//! - the types of a top-level expression or binding are ground (leftover variables of
//!   any class default to `int`, a member of every class);
//! - every [`Ident::res`](crate::ast::Ident) is set. The instance of an overloaded
//!   built-in is given by the (ground, after monomorphisation) types of the `Call` node's
//!   argument and result.
//!
//! What this module does not do: evaluate anything, or decide whether a function can be
//! called in parallel.

pub mod builtins;
mod infer;
pub mod print;
pub mod unify;

pub use builtins::{builtin_description, builtin_scheme, is_builtin};
pub use infer::{walk_expr, walk_pattern};
pub use print::{format_scheme, format_type, TypePrinter};

use crate::ast::{DataDef, Expr, ExprKind, FunDef, Res, TopLevel};
use crate::diag::Diagnostic;
use crate::ty::{Scheme, TyVar, Type};
use indexmap::IndexMap;
use std::collections::HashSet;

/// Everything known about a user-defined function.
#[derive(Clone, Debug, PartialEq)]
pub struct FunInfo {
    /// Its (possibly polymorphic) type.
    pub scheme: Scheme,
    /// The typed definition (`body` is `None` for a declaration without a body).
    pub def: FunDef,
    /// The source text it was defined in (an index into [`Session::sources`]), when the
    /// session was told ([`Session::set_source`]).
    pub source: Option<usize>,
}

/// Everything known about a datatype.
#[derive(Clone, Debug, PartialEq)]
pub struct DataInfo {
    /// Its type parameters, in order (the variables of the fields, in order of first
    /// appearance).
    pub params: Vec<TyVar>,
    /// The underlying representation: the tuple (right-nested pairs) of the fields.
    pub fields: Type,
    /// The constructor's type: `fields -> name(params)`.
    pub scheme: Scheme,
    /// The definition, when the datatype was defined by a form (`None` for the
    /// predefined `stream`).
    pub def: Option<DataDef>,
}

/// What a successfully checked form was.
#[derive(Clone, Debug, PartialEq)]
pub enum ItemInfo {
    /// A function definition or declaration.
    Function {
        /// Its name.
        name: String,
        /// Its type.
        scheme: Scheme,
    },
    /// A datatype definition; `scheme` is the constructor's type.
    Datatype {
        /// Its name.
        name: String,
        /// The constructor's type.
        scheme: Scheme,
    },
    /// A top-level binding `pattern = exp`: the names bound, with their (ground) types.
    Binding {
        /// The bound names in pattern order.
        names: Vec<(String, Type)>,
    },
    /// A top-level expression (bound to `it`).
    Expr {
        /// Its (ground) type.
        ty: Type,
    },
    /// A command (nothing to check).
    Command,
}

/// The state of one type-checking session: what earlier forms defined.
#[derive(Clone, Debug)]
pub struct Session {
    /// User-defined functions, in definition order (a redefinition keeps the first
    /// position and replaces the contents).
    pub functions: IndexMap<String, FunInfo>,
    /// Datatypes, including the predefined `stream` and `hashtable`.
    pub datatypes: IndexMap<String, DataInfo>,
    /// Global variables bound by top-level `pattern = exp` forms (and `it`).
    pub globals: IndexMap<String, Type>,
    /// When true, function definitions may use the names of built-ins (for a prelude
    /// written in NESL); otherwise redefining a built-in is an error.
    pub prelude_mode: bool,
    /// The first type-variable id not used yet (ids stored in schemes stay unique).
    next_var: u32,
    /// User functions that call a serial-only function (directly or indirectly).
    serial_functions: HashSet<String>,
    /// The source texts items were checked from, in order ([`Session::set_source`]).
    pub sources: Vec<std::sync::Arc<crate::diag::Source>>,
    /// The source the items checked now come from (an index into `sources`).
    pub current_source: Option<usize>,
    /// Remarks about forms that checked (a definition that replaces a built-in), for the
    /// top level to show and clear.
    pub notes: Vec<String>,
}

impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}

impl Session {
    /// A session that knows only the standard library (and the `stream` and `hashtable`
    /// datatypes).
    pub fn new() -> Session {
        let mut datatypes = IndexMap::new();
        let stream = Type::Data("stream".into(), Vec::new());
        datatypes.insert(
            "stream".to_string(),
            DataInfo {
                params: Vec::new(),
                fields: Type::Int,
                scheme: Scheme {
                    vars: Vec::new(),
                    ty: Type::fun(Type::Int, stream),
                },
                def: None,
            },
        );
        let mut s = Session {
            functions: IndexMap::new(),
            datatypes,
            globals: IndexMap::new(),
            prelude_mode: false,
            next_var: 0,
            serial_functions: HashSet::new(),
            sources: Vec::new(),
            current_source: None,
            notes: Vec::new(),
        };
        s.predefine_datatypes();
        s
    }

    /// Defines the datatypes of the library that are written in NESL: CMU's hash table
    /// (`other-ops.nesl`), a sequence of (used, key, value) slots. The functions on it
    /// (`make_table`, `insert_table`, ...) are in the prelude.
    fn predefine_datatypes(&mut self) {
        const SRC: &str = concat!(
            "datatype hashtable([(bool, a, b)]) :: (a in any; b in any);",
            // CMU's segment descriptor, as a user sees it (make_segdes, nest, vselect):
            // the length of one subsequence.
            "datatype segdes(int);",
            // The graphics library (plot.nesl and window.nesl of CMU NESL): a window of
            // the display is its number and size; a graphics context a colour number.
            "datatype xps_window(int, (int, int));",
            "datatype xps_gc(int);",
            "datatype scale_box(((int, int), (int, int)), (a, a), float) :: (a in number);",
            "datatype bound_box((a, a), (a, a)) :: (a in number);",
            "datatype window(xps_window, scale_box(a), xps_gc) :: (a in number);",
            "datatype w_subbox(int, [char], scale_box(float), int);",
            "datatype w_window(xps_window, [w_subbox], [xps_gc]);",
            "datatype w_box(xps_window, scale_box(float), [xps_gc], int);",
        );
        let (items, diags) = crate::parser::parse_program(SRC);
        debug_assert!(diags.is_empty(), "predefined datatypes do not parse: {diags:?}");
        for mut item in items {
            let checked = self.check_item(&mut item);
            debug_assert!(checked.is_ok(), "predefined datatypes do not check: {checked:?}");
        }
    }

    /// Says that the items checked from now on come from the text `text` named `name`
    /// (spans are byte offsets into it); returns the previous current source, for
    /// [`Session::restore_source`] when a nested `load` ends.
    pub fn set_source(&mut self, name: &str, text: &str) -> Option<usize> {
        let found = self.sources.iter().rposition(|s| &*s.name == name && &*s.text == text);
        let i = found.unwrap_or_else(|| {
            self.sources.push(std::sync::Arc::new(crate::diag::Source::new(name, text)));
            self.sources.len() - 1
        });
        self.current_source.replace(i)
    }

    /// Makes `previous` (what [`Session::set_source`] returned) current again.
    pub fn restore_source(&mut self, previous: Option<usize>) {
        self.current_source = previous;
    }

    /// The current source text, if any.
    pub fn source(&self) -> Option<&std::sync::Arc<crate::diag::Source>> {
        self.sources.get(self.current_source?)
    }

    /// Resolves names and infers types of one top-level item, in place; on success the
    /// item is recorded in the session (a redefinition replaces the old one).
    pub fn check_item(&mut self, item: &mut TopLevel) -> Result<ItemInfo, Vec<Diagnostic>> {
        let outcome = infer::check(self, item);
        self.next_var = outcome.next_var;
        let info = outcome.result?;
        match (&info, &*item) {
            (ItemInfo::Function { name, scheme }, TopLevel::Function(def)) => {
                if !self.prelude_mode && is_builtin(name) && !self.functions.contains_key(name) {
                    self.notes.push(format!(
                        "`{name}` is a built-in function; this definition replaces it from here on"
                    ));
                }
                self.keep_old_callers(name, scheme);
                if outcome.calls_serial {
                    self.serial_functions.insert(name.clone());
                } else {
                    self.serial_functions.remove(name);
                }
                self.functions.insert(
                    name.clone(),
                    FunInfo {
                        scheme: scheme.clone(),
                        def: def.clone(),
                        source: self.current_source,
                    },
                );
            }
            (ItemInfo::Datatype { name, scheme }, TopLevel::Datatype(def)) => {
                if let Type::Fun(fields, _) = &scheme.ty {
                    let info = DataInfo {
                        params: scheme.vars.clone(),
                        fields: (**fields).clone(),
                        scheme: scheme.clone(),
                        def: Some(def.clone()),
                    };
                    self.datatypes.insert(name.clone(), info);
                }
            }
            (ItemInfo::Binding { names }, _) => {
                for (n, t) in names {
                    self.globals.insert(n.clone(), t.clone());
                }
            }
            (ItemInfo::Expr { ty }, _) => {
                self.globals.insert("it".to_string(), ty.clone());
            }
            _ => {}
        }
        Ok(info)
    }

    /// Spec 6.1: a user function redefined with another type leaves the functions that
    /// already call it with the earlier definition. That definition is kept under a name
    /// no program can write (`name'N`), the callers' (and its own recursive) calls are
    /// pointed at it, and a note says which callers keep it. A redefinition with the same
    /// type replaces the function for every caller.
    fn keep_old_callers(&mut self, name: &str, scheme: &Scheme) {
        let Some(old) = self.functions.get(name) else { return };
        if print::format_scheme(&old.scheme) == print::format_scheme(scheme) {
            return;
        }
        let callers: Vec<String> = self
            .functions
            .iter()
            .filter(|(n, f)| n.as_str() != name && f.def.body.as_ref().is_some_and(|b| calls_function(b, name)))
            .map(|(n, _)| n.clone())
            .collect();
        if callers.is_empty() {
            return;
        }
        let hidden = (1..)
            .map(|i| format!("{name}'{i}"))
            .find(|h| !self.functions.contains_key(h))
            .unwrap_or_else(|| format!("{name}'"));
        let mut kept = old.clone();
        kept.def.name.name = hidden.clone();
        if let Some(body) = kept.def.body.as_mut() {
            rename_calls(body, name, &hidden);
        }
        if self.serial_functions.contains(name) {
            self.serial_functions.insert(hidden.clone());
        }
        for c in &callers {
            if let Some(body) = self.functions.get_mut(c).and_then(|f| f.def.body.as_mut()) {
                rename_calls(body, name, &hidden);
            }
        }
        self.functions.insert(hidden, kept);
        let list: Vec<String> = callers.iter().map(|c| format!("`{c}`")).collect();
        self.notes.push(format!(
            "`{name}` is redefined with another type; {} defined before keep{} its earlier definition",
            list.join(", "),
            if callers.len() == 1 { "s" } else { "" }
        ));
    }

    /// Whether calling `name` (a user function or a built-in) is serial only: it may
    /// not be called inside an apply-to-each. The serial-only built-ins are those with
    /// effects on the state of the whole program (reseeding, files, processes); a user
    /// function is serial only when its body calls a serial-only function.
    pub fn is_serial_only(&self, name: &str) -> bool {
        if self.functions.contains_key(name) {
            self.serial_functions.contains(name)
        } else {
            builtins::is_serial_only_builtin(name)
        }
    }

    /// The scheme of whatever a name in call position would refer to: a user function,
    /// a datatype constructor or a built-in (used by `describe`).
    pub fn scheme_of(&self, name: &str) -> Option<Scheme> {
        if let Some(f) = self.functions.get(name) {
            return Some(f.scheme.clone());
        }
        if let Some(d) = self.datatypes.get(name) {
            return Some(d.scheme.clone());
        }
        builtin_scheme(name)
    }
}

/// The line the NESL top level prints for a checked function or datatype definition
/// (`name = fn : type`), or `None` for other forms.
pub fn definition_line(info: &ItemInfo) -> Option<String> {
    match info {
        ItemInfo::Function { name, scheme } | ItemInfo::Datatype { name, scheme } => {
            Some(format!("{name} = fn : {}", format_scheme(scheme)))
        }
        _ => None,
    }
}

/// Whether `e` calls (or names as a value) the user function `name`.
pub(crate) fn calls_function(e: &Expr, name: &str) -> bool {
    let here = match &e.kind {
        ExprKind::Call { func, .. } | ExprKind::Var(func) => func.res == Res::Function && func.name == name,
        _ => false,
    };
    let mut found = here;
    e.for_each_child(&mut |c| found = found || calls_function(c, name));
    found
}

/// Points the calls of (and references to) the user function `from` in `e` at `to`.
pub(crate) fn rename_calls(e: &mut Expr, from: &str, to: &str) {
    match &mut e.kind {
        ExprKind::Call { func, .. } | ExprKind::Var(func) if func.res == Res::Function && func.name == from => {
            func.name = to.to_string();
        }
        _ => {}
    }
    crate::lambda::for_each_child_mut(e, &mut |c| rename_calls(c, from, to));
}

#[cfg(test)]
mod tests;
