//! What symbols are: definitions and references, their kinds, and what a text holds of them.

use super::lang::Lang;
use serde::{Deserialize, Serialize};

/// At most this many bytes of a text are parsed.
pub const MAX_PARSE: usize = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DefKind {
    Function,
    Method,
    Class,
    Struct,
    Interface,
    Trait,
    Enum,
    Field,
    Constant,
    TypeAlias,
    Module,
    Macro,
}

impl DefKind {
    pub fn name(self) -> &'static str {
        match self {
            DefKind::Function => "function",
            DefKind::Method => "method",
            DefKind::Class => "class",
            DefKind::Struct => "struct",
            DefKind::Interface => "interface",
            DefKind::Trait => "trait",
            DefKind::Enum => "enum",
            DefKind::Field => "field",
            DefKind::Constant => "constant",
            DefKind::TypeAlias => "type alias",
            DefKind::Module => "module",
            DefKind::Macro => "macro",
        }
    }

    /// Functions, methods and macros: what is called with arguments.
    pub fn callable(self) -> bool {
        matches!(self, DefKind::Function | DefKind::Method | DefKind::Macro)
    }

    /// A member of a type (reached through a receiver: `x.name`, `x->name`, `T::name`).
    pub fn member(self) -> bool {
        matches!(self, DefKind::Method | DefKind::Field)
    }
}

/// The parameters of a callable: each one's text (for C and C++ without the parameter's name, so
/// a prototype and its definition compare), and how many arguments a call may pass.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    pub list: Vec<String>,
    pub min: usize,
    /// `None`: variadic (`*args`, `...`, rest parameters).
    pub max: Option<usize>,
}

impl Params {
    /// Whether a call with `n` arguments fits.
    pub fn accepts(&self, n: usize) -> bool {
        n >= self.min && self.max.is_none_or(|m| n <= m)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Definition {
    pub kind: DefKind,
    pub name: String,
    /// Enclosing classes, modules, impls, namespaces and functions, then the name, joined with
    /// the language's separator (`Client.send`, `ns::Widget::resize`, `Reader.Read`).
    pub qualified: String,
    /// The definition's head without its body, whitespace folded (`def fetch(url, *, timeout=3)`).
    pub signature: String,
    pub params: Option<Params>,
    /// A declaration without a body: a C/C++ prototype, an interface or trait method.
    pub prototype: bool,
    /// First and last line, 1-based, in the text read (or the file, for numbered views).
    pub line: usize,
    pub end_line: usize,
}

impl Definition {
    /// The scope parts and the name (`["Client", "send"]`).
    pub fn path(&self, lang: Lang) -> Vec<&str> {
        self.qualified.split(lang.separator()).collect()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefKind {
    /// A call or construction (`f(x)`, `obj.f(x)`, `new F(x)`, `f!(x)`).
    Call,
    /// A member reached through a receiver or a scope, not called (`obj.f`, `T::f`).
    Member,
    /// Named by an import, include or `use`.
    Import,
    /// Used as a type.
    Type,
    /// Any other use of the name.
    Name,
    /// A word in a comment or a string (a docstring, help text).
    Mention,
}

impl RefKind {
    pub fn name(self) -> &'static str {
        match self {
            RefKind::Call => "call",
            RefKind::Member => "member",
            RefKind::Import => "import",
            RefKind::Type => "type",
            RefKind::Name => "name",
            RefKind::Mention => "mention",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    pub name: String,
    pub kind: RefKind,
    pub line: usize,
    /// Reached through a receiver or a scope (`obj.f()`, `T::f()`, `pkg.F()`).
    pub qualified: bool,
    /// Calls: the number of arguments, `None` when a spread hides it (`f(*xs)`, `f(xs...)`).
    pub args: Option<usize>,
}

/// What a text defines and uses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Symbols {
    pub definitions: Vec<Definition>,
    pub references: Vec<Reference>,
}

impl Symbols {
    /// References to `name` of the given kinds.
    pub fn uses<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Reference> + 'a {
        self.references.iter().filter(move |r| r.name == name)
    }

    /// Whether the text defines `name` itself (outside any type: a function, constant...).
    pub fn defines_top_level(&self, name: &str) -> bool {
        self.definitions.iter().any(|d| d.name == name && !d.kind.member())
    }
}
