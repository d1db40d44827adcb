//! CEL guards for `overlays[].when` and `trigger` (fullsend's overlays), with
//! the `cel` crate. cel-go's checker is emulated where the reference depends
//! on it: undeclared identifiers are compile errors, and the static result
//! type of a guard must be exactly `bool` (every variable is `dyn`, so a bare
//! field access such as `event.flag` is rejected).
//!
//! No message here ever contains a value: parse errors give only the
//! position inside the expression, evaluation errors only their kind.

use cel::common::ast::{operators, Expr, IdedExpr, LiteralValue, SourceInfo};
use cel::parser::PrattParser;
use cel::Context;
pub use cel::{Env, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// A static CEL type, as far as the bool check needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ty {
    Dyn,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Null,
    List,
    Map,
    Type,
}

impl Ty {
    pub fn name(&self) -> &'static str {
        match self {
            Ty::Dyn => "dyn",
            Ty::Bool => "bool",
            Ty::Int => "int",
            Ty::Uint => "uint",
            Ty::Double => "double",
            Ty::String => "string",
            Ty::Bytes => "bytes",
            Ty::Null => "null_type",
            Ty::List => "list(dyn)",
            Ty::Map => "map(dyn, dyn)",
            Ty::Type => "type",
        }
    }
}

/// The standard environment, without the optional syntax (cel-go's
/// standard library has none).
pub fn cel_env() -> Arc<Env> {
    Arc::new(Env::stdlib().with_optional_support(false))
}

/// Type names usable as identifiers (`type(x) == int`).
const TYPE_IDENTS: &[&str] = &[
    "bool",
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
    "dyn",
];

/// Standard functions we accept, with their result type.
fn function_type(name: &str) -> Option<Ty> {
    Some(match name {
        "size" | "getFullYear" | "getMonth" | "getDayOfYear" | "getDayOfMonth" | "getDate"
        | "getDayOfWeek" | "getHours" | "getMinutes" | "getSeconds" | "getMilliseconds" => Ty::Int,
        "startsWith" | "endsWith" | "contains" | "matches" => Ty::Bool,
        "int" => Ty::Int,
        "uint" => Ty::Uint,
        "double" => Ty::Double,
        "string" => Ty::String,
        "bytes" => Ty::Bytes,
        "bool" => Ty::Bool,
        "type" => Ty::Type,
        "dyn" => Ty::Dyn,
        _ => return None,
    })
}

/// Every variable some CEL environment of a harness declares: naming one
/// of these in a message is safe (an unquoted token is not one).
const KNOWN_VARS: &[&str] = &["event", "runtime", "config"];

struct Checker<'a> {
    vars: &'a [&'a str],
    scopes: Vec<(String, Ty)>,
    info: &'a SourceInfo,
}

/// `line:col` (1-based) of byte offset `start` in `src`.
fn line_col(src: &str, start: usize) -> (usize, usize) {
    let before = &src.as_bytes()[..start.min(src.len())];
    let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
    let col = 1 + before.iter().rev().take_while(|&&b| b != b'\n').count();
    (line, col)
}

impl Checker<'_> {
    /// "undeclared reference" naming the position, and the name only when
    /// it is a variable of some harness CEL environment: an identifier can
    /// be an unquoted token (`ghp_…`), so it is never printed otherwise.
    fn undeclared(&self, id: u64, name: &str) -> String {
        let pos = match self.info.offset_for(id) {
            Some((start, _)) => {
                let (l, c) = line_col(&self.info.source, start as usize);
                format!(" at {l}:{c}")
            }
            None => String::new(),
        };
        if KNOWN_VARS.contains(&name) {
            format!("undeclared reference to '{name}'{pos}")
        } else {
            format!("undeclared reference{pos}")
        }
    }

    fn ident(&self, id: u64, name: &str) -> Result<Ty, String> {
        if let Some((_, t)) = self.scopes.iter().rev().find(|(n, _)| n == name) {
            return Ok(t.clone());
        }
        if self.vars.contains(&name) {
            return Ok(Ty::Dyn);
        }
        if TYPE_IDENTS.contains(&name) {
            return Ok(Ty::Type);
        }
        Err(self.undeclared(id, name))
    }

    fn same_or_dyn(a: Ty, b: Ty) -> Ty {
        if a == b {
            a
        } else {
            Ty::Dyn
        }
    }

    fn check(&mut self, e: &IdedExpr) -> Result<Ty, String> {
        match &e.expr {
            Expr::Unspecified => Ok(Ty::Dyn),
            Expr::Ident(name) => self.ident(e.id, name),
            Expr::Literal(l) => Ok(match l {
                LiteralValue::Boolean(_) => Ty::Bool,
                LiteralValue::Int(_) => Ty::Int,
                LiteralValue::UInt(_) => Ty::Uint,
                LiteralValue::Double(_) => Ty::Double,
                LiteralValue::String(_) => Ty::String,
                LiteralValue::Bytes(_) => Ty::Bytes,
                LiteralValue::Null => Ty::Null,
            }),
            Expr::List(l) => {
                for el in &l.elements {
                    self.check(el)?;
                }
                Ok(Ty::List)
            }
            Expr::Map(m) => {
                for entry in &m.entries {
                    if let cel::common::ast::EntryExpr::MapEntry(me) = &entry.expr {
                        self.check(&me.key)?;
                        self.check(&me.value)?;
                    }
                }
                Ok(Ty::Map)
            }
            Expr::Struct(_) => Err("message construction is not supported".into()),
            Expr::Select(s) => {
                self.check(&s.operand)?;
                Ok(if s.test { Ty::Bool } else { Ty::Dyn })
            }
            Expr::Comprehension(c) => {
                self.check(&c.iter_range)?;
                let accu = self.check(&c.accu_init)?;
                let depth = self.scopes.len();
                self.scopes.push((c.iter_var.clone(), Ty::Dyn));
                if let Some(v2) = &c.iter_var2 {
                    self.scopes.push((v2.clone(), Ty::Dyn));
                }
                self.scopes.push((c.accu_var.clone(), accu));
                let r = (|| {
                    self.check(&c.loop_cond)?;
                    self.check(&c.loop_step)?;
                    self.check(&c.result)
                })();
                self.scopes.truncate(depth);
                r
            }
            Expr::Call(call) => {
                let target = match &call.target {
                    Some(t) => Some(self.check(t)?),
                    None => None,
                };
                let mut args = Vec::with_capacity(call.args.len());
                for a in &call.args {
                    args.push(self.check(a)?);
                }
                let f = call.func_name.as_str();
                match f {
                    operators::LOGICAL_AND
                    | operators::LOGICAL_OR
                    | operators::LOGICAL_NOT
                    | operators::EQUALS
                    | operators::NOT_EQUALS
                    | operators::LESS
                    | operators::LESS_EQUALS
                    | operators::GREATER
                    | operators::GREATER_EQUALS
                    | operators::IN
                    | operators::NOT_STRICTLY_FALSE => Ok(Ty::Bool),
                    operators::CONDITIONAL => {
                        let mut it = args.into_iter().skip(1);
                        let a = it.next().unwrap_or(Ty::Dyn);
                        let b = it.next().unwrap_or(Ty::Dyn);
                        Ok(Self::same_or_dyn(a, b))
                    }
                    operators::ADD
                    | operators::SUBSTRACT
                    | operators::MULTIPLY
                    | operators::DIVIDE
                    | operators::MODULO => {
                        let mut it = args.into_iter();
                        let a = it.next().unwrap_or(Ty::Dyn);
                        let b = it.next().unwrap_or(Ty::Dyn);
                        if a != Ty::Dyn && b != Ty::Dyn && a != b {
                            return Err(format!(
                                "found no matching overload for '{f}' applied to '({}, {})'",
                                a.name(),
                                b.name()
                            ));
                        }
                        Ok(Self::same_or_dyn(a, b))
                    }
                    operators::NEGATE => Ok(args.into_iter().next().unwrap_or(Ty::Dyn)),
                    operators::INDEX => Ok(Ty::Dyn),
                    _ => match function_type(f) {
                        Some(t) => {
                            let _ = target;
                            Ok(t)
                        }
                        None => Err(self.undeclared(e.id, f)),
                    },
                }
            }
        }
    }
}

/// A compiled guard: the checked expression (macros expanded).
pub struct Guard {
    expr: Arc<IdedExpr>,
}

/// Why a guard did not compile (messages without values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompileError {
    /// Syntax or reference error.
    Invalid(String),
    /// Compiled, but the static type is not `bool`.
    NotBool(&'static str),
}

/// Longest `when` / `trigger` expression compiled.
pub const MAX_EXPR_BYTES: usize = 4096;
/// Deepest bracket nesting (`(`, `[`, `{`) in an expression. The parser
/// recurses heavily per level; without a cap a few hundred `(` overflow
/// the stack and abort the process.
pub const MAX_EXPR_NESTING: usize = 32;

/// The deepest bracket nesting of `src` outside string literals.
fn nesting(src: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let mut quote: Option<char> = None;
    let mut chars = src.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(_), '\\') => {
                chars.next();
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[' | '{') => {
                depth += 1;
                max = max.max(depth);
            }
            (None, ')' | ']' | '}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Compile `src` with the variables `vars` (all `dyn`).
pub fn compile(env: &Env, src: &str, vars: &[&str]) -> Result<Guard, CompileError> {
    if src.len() > MAX_EXPR_BYTES {
        return Err(CompileError::Invalid(format!(
            "expression longer than {MAX_EXPR_BYTES} bytes"
        )));
    }
    if nesting(src) > MAX_EXPR_NESTING {
        return Err(CompileError::Invalid(format!(
            "expression nested deeper than {MAX_EXPR_NESTING} levels"
        )));
    }
    if let Some(expr) = fast_compile(src, vars) {
        return Ok(Guard {
            expr: Arc::new(expr),
        });
    }
    let program = env.compile(src).map_err(|errs| {
        let pos = errs
            .errors
            .first()
            .map(|e| format!(" at {}:{}", e.pos.0.max(1), e.pos.1.max(0) + 1))
            .unwrap_or_default();
        CompileError::Invalid(format!("syntax error{pos}"))
    })?;
    let mut c = Checker {
        vars,
        scopes: Vec::new(),
        info: program.source_info(),
    };
    let ty = c
        .check(program.expression())
        .map_err(CompileError::Invalid)?;
    if ty != Ty::Bool {
        return Err(CompileError::NotBool(ty.name()));
    }
    Ok(Guard {
        expr: Arc::new(program.expression().clone()),
    })
}

/// The fast path of [`compile`]: the `cel` crate's hand-written Pratt
/// parser, which starts in microseconds where the ANTLR parser that
/// [`Env::compile`] uses spends about a millisecond of CPU initialising
/// itself once per process. Only a success is taken from it: an
/// expression it parses to a tree that checks as `bool`. Anything else —
/// a syntax error, a check error, a non-`bool` type — goes through the
/// ANTLR path, so every error (and its position) is the ANTLR parser's.
/// A differential test (`pratt_and_antlr_agree`) holds the two parsers to
/// the same tree on every expression the tests use and on generated ones.
/// The standard macros are the ones [`cel_env`] expands; its optional
/// syntax is off, as here.
fn fast_compile(src: &str, vars: &[&str]) -> Option<IdedExpr> {
    if !plain_syntax(src) {
        return None;
    }
    let expr = PrattParser::new()
        .enable_optional_syntax(false)
        .parse(src)
        .ok()?;
    let info = SourceInfo::default();
    let mut c = Checker {
        vars,
        scopes: Vec::new(),
        info: &info,
    };
    (c.check(&expr).ok()? == Ty::Bool).then_some(expr)
}

/// Whether `src` keeps to the syntax the fast path is trusted with: ASCII
/// identifiers, numbers and operators, and quoted strings without escapes,
/// prefixes (`r`, `b`), triple quotes or line breaks; no comments, no
/// backquoted identifiers, no optional syntax (`.?`, `[?`, `{?`). Guards
/// as harness files write them; anything else takes the ANTLR path.
fn plain_syntax(src: &str) -> bool {
    let b = src.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\'' | b'"' => {
                let prefixed = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
                if prefixed || b.get(i + 1) == Some(&c) {
                    return false;
                }
                let Some(len) = b[i + 1..].iter().position(|&x| x == c) else {
                    return false;
                };
                let body = &b[i + 1..i + 1 + len];
                if body.iter().any(|&x| x == b'\\' || x == b'\n' || x == b'\r') {
                    return false;
                }
                i += len + 2;
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => return false,
            // A unary minus before a number: ANTLR reads `-1` as one
            // literal that member operators then apply to (`-1[x]` is
            // `(-1)[x]`), the Pratt parser as a negation of `1[x]`.
            b'-' if unary_at(b, i) && number_follows(b, i + 1) => return false,
            // The grammar has `!`+ or `-`+ before a member, never both
            // (`-!x` is a syntax error); the Pratt parser takes any mix.
            b'-' if unary_at(b, i) && next_is(b, i + 1, b'!') => return false,
            b'!' if next_is(b, i + 1, b'-') => return false,
            b'?' if i > 0 && matches!(b[i - 1], b'.' | b'[' | b'{') => return false,
            b'.' | b'[' | b'{' | b',' if b.get(i + 1) == Some(&b'?') => return false,
            _ if c.is_ascii_alphanumeric() => {}
            b'_' | b' ' | b'\t' | b'\n' | b'\r' | b'.' | b'(' | b')' | b'[' | b']' | b'{'
            | b'}' | b',' | b':' | b'!' | b'=' | b'<' | b'>' | b'&' | b'|' | b'+' | b'-' | b'*'
            | b'/' | b'%' | b'?' => {}
            _ => return false,
        }
        i += 1;
    }
    true
}

/// Whether the `-` at `i` is a unary minus: nothing but whitespace, an
/// operator, an opening bracket or the keyword `in` before it.
fn unary_at(b: &[u8], i: usize) -> bool {
    let before = b[..i].trim_ascii_end();
    let word = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_';
    match before.last() {
        None => true,
        Some(c) if word(c) => {
            let start = before.iter().rposition(|c| !word(c)).map_or(0, |p| p + 1);
            &before[start..] == b"in"
        }
        Some(c) => !matches!(c, b')' | b']' | b'}' | b'\'' | b'"'),
    }
}

/// Whether the first byte at or after `i` that is not whitespace is `c`.
fn next_is(b: &[u8], i: usize, c: u8) -> bool {
    b[i..].iter().find(|x| !x.is_ascii_whitespace()) == Some(&c)
}

/// Whether a number starts at `i` (after whitespace).
fn number_follows(b: &[u8], i: usize) -> bool {
    b[i..]
        .iter()
        .find(|c| !c.is_ascii_whitespace())
        .is_some_and(|c| c.is_ascii_digit() || *c == b'.')
}

/// An evaluation error's kind, never its values.
fn describe(e: &cel::ExecutionError) -> String {
    use cel::ExecutionError as E;
    match e {
        E::NoSuchKey(_) => "no such key".into(),
        E::UndeclaredReference(_) => "undeclared reference".into(),
        E::NoSuchOverload(o) => format!("no matching overload for '{}'", o.function()),
        E::FunctionError { function, .. } => format!("error in function '{function}'"),
        E::InvalidArgumentCount { expected, actual } => {
            format!("invalid argument count: expected {expected}, got {actual}")
        }
        E::UnexpectedType { .. } | E::UnsupportedTargetType { .. } => "unexpected type".into(),
        E::ValuesNotComparable(..) => "values not comparable".into(),
        E::UnsupportedBinaryOperator(op, ..) => format!("unsupported operand types for '{op}'"),
        E::DivisionByZero(_) => "division by zero".into(),
        E::RemainderByZero(_) => "remainder by zero".into(),
        E::Overflow(op, ..) => format!("overflow in '{op}'"),
        E::IndexOutOfBounds(_) => "index out of bounds".into(),
        E::UnsupportedIndex(..) => "unsupported index".into(),
        _ => "evaluation error".into(),
    }
}

// ---- evaluation budget ----------------------------------------------------
//
// The `cel` crate has no cost tracking and cannot be interrupted, and a
// guard within the size and nesting caps can still ask for billions of
// steps (four nested `exists` over 300-element literals) or allocate until
// the process aborts (nested `map`s). Before a guard runs, its cost is
// bounded statically against the actual inputs; the run itself has a
// wall-clock deadline. Running out is an evaluation error: the overlay does
// not match, and the usual index-only warning says why.

/// Largest estimated cost of one evaluation: AST nodes visited, with every
/// comprehension body counted once per possible iteration, plus the
/// elements copied by list concatenation.
pub const COST_LIMIT: u64 = 1_000_000;
/// Largest product of range sizes along one nesting of comprehensions
/// (how many times the innermost body can run).
pub const NESTING_LIMIT: u64 = 100_000;
/// Wall-clock deadline of one evaluation.
pub const EVAL_DEADLINE: std::time::Duration = std::time::Duration::from_millis(500);

/// The largest list or map anywhere in `v`.
fn largest_container(v: &Value) -> u64 {
    match v {
        Value::List(l) => l
            .iter()
            .map(largest_container)
            .fold(l.len() as u64, u64::max),
        Value::Map(m) => m
            .map
            .values()
            .map(largest_container)
            .fold(m.map.len() as u64, u64::max),
        _ => 0,
    }
}

/// The largest list or map literal in `e`, and the number of user-written
/// `+` nodes (the macros' own accumulator appends not counted).
fn literal_stats(e: &IdedExpr, largest: &mut u64, adds: &mut u64) {
    match &e.expr {
        Expr::List(l) => {
            *largest = (*largest).max(l.elements.len() as u64);
            for el in &l.elements {
                literal_stats(el, largest, adds);
            }
        }
        Expr::Map(m) => {
            *largest = (*largest).max(m.entries.len() as u64);
            for entry in &m.entries {
                if let cel::common::ast::EntryExpr::MapEntry(me) = &entry.expr {
                    literal_stats(&me.key, largest, adds);
                    literal_stats(&me.value, largest, adds);
                }
            }
        }
        Expr::Select(s) => literal_stats(&s.operand, largest, adds),
        Expr::Comprehension(c) => {
            for x in [
                &c.iter_range,
                &c.accu_init,
                &c.loop_cond,
                &c.loop_step,
                &c.result,
            ] {
                literal_stats(x, largest, adds);
            }
        }
        Expr::Call(call) => {
            let macro_append = call
                .args
                .first()
                .is_some_and(|a| matches!(&a.expr, Expr::Ident(n) if n.starts_with('@')));
            if call.func_name == operators::ADD && !macro_append {
                *adds += 1;
            }
            for a in call.target.iter().map(|t| &**t).chain(&call.args) {
                literal_stats(a, largest, adds);
            }
        }
        _ => {}
    }
}

struct Estimate {
    /// Bound on the size of any list or map value the expression can see
    /// or build that is not known more precisely.
    general: u64,
    /// Accumulator variables in scope with the bound of their range.
    accus: Vec<(String, u64)>,
    /// Largest iteration product seen.
    deepest: u64,
}

impl Estimate {
    /// An upper bound on the number of elements of `e`'s value.
    fn size(&self, e: &IdedExpr) -> u64 {
        match &e.expr {
            Expr::List(l) => l.elements.len() as u64,
            Expr::Map(m) => m.entries.len() as u64,
            Expr::Comprehension(c) => self.size(&c.iter_range),
            Expr::Ident(n) => self
                .accus
                .iter()
                .rev()
                .find(|(a, _)| a == n)
                .map_or(self.general, |(_, b)| *b),
            Expr::Call(c) if c.func_name == operators::ADD && c.args.len() == 2 => {
                self.size(&c.args[0]).saturating_add(self.size(&c.args[1]))
            }
            Expr::Call(c) if c.func_name == operators::CONDITIONAL && c.args.len() == 3 => {
                self.size(&c.args[1]).max(self.size(&c.args[2]))
            }
            _ => self.general,
        }
    }

    /// An upper bound on the steps evaluating `e` once takes; `mult` is how
    /// often the enclosing comprehensions can run it.
    fn cost(&mut self, e: &IdedExpr, mult: u64) -> u64 {
        match &e.expr {
            Expr::List(l) => {
                let mut c = 1 + l.elements.len() as u64;
                for el in &l.elements {
                    c = c.saturating_add(self.cost(el, mult));
                }
                c
            }
            Expr::Map(m) => {
                let mut c = 1 + m.entries.len() as u64;
                for entry in &m.entries {
                    if let cel::common::ast::EntryExpr::MapEntry(me) = &entry.expr {
                        c = c
                            .saturating_add(self.cost(&me.key, mult))
                            .saturating_add(self.cost(&me.value, mult));
                    }
                }
                c
            }
            Expr::Select(s) => 1u64.saturating_add(self.cost(&s.operand, mult)),
            Expr::Comprehension(c) => {
                let range = self.size(&c.iter_range).max(1);
                let inner = mult.saturating_mul(range);
                self.deepest = self.deepest.max(inner);
                let mut total = 1u64
                    .saturating_add(self.cost(&c.iter_range, mult))
                    .saturating_add(self.cost(&c.accu_init, mult));
                self.accus.push((c.accu_var.clone(), range));
                let body = self
                    .cost(&c.loop_cond, inner)
                    .saturating_add(self.cost(&c.loop_step, inner));
                total = total.saturating_add(range.saturating_mul(body));
                total = total.saturating_add(self.cost(&c.result, mult));
                self.accus.pop();
                total
            }
            Expr::Call(call) => {
                let mut c = 1u64;
                if call.func_name == operators::ADD && call.args.len() == 2 {
                    // A list or string concatenation copies its operands.
                    c = c.saturating_add(self.size(e));
                }
                for a in call.target.iter().map(|t| &**t).chain(&call.args) {
                    c = c.saturating_add(self.cost(a, mult));
                }
                c
            }
            _ => 1,
        }
    }
}

/// Below this estimated cost an evaluation runs on the calling thread:
/// it ends in well under a millisecond, so a deadline thread (a spawn and
/// its stack mapping, more than the evaluation itself) buys nothing.
pub const INLINE_COST: u64 = 20_000;

/// Check `expr` against the budget for these inputs; the estimated cost.
fn within_budget(expr: &IdedExpr, vars: &[(&str, Value)]) -> Result<u64, String> {
    let data = vars
        .iter()
        .map(|(_, v)| largest_container(v))
        .max()
        .unwrap_or(0);
    let (mut lit, mut adds) = (0u64, 0u64);
    literal_stats(expr, &mut lit, &mut adds);
    let mut est = Estimate {
        general: data.max(lit).max(1).saturating_mul(adds + 1),
        accus: Vec::new(),
        deepest: 1,
    };
    let cost = est.cost(expr, 1);
    if est.deepest > NESTING_LIMIT {
        return Err(format!(
            "evaluation budget exceeded: comprehensions nest to more than {NESTING_LIMIT} iterations"
        ));
    }
    if cost > COST_LIMIT {
        return Err(format!(
            "evaluation budget exceeded: estimated cost over {COST_LIMIT}"
        ));
    }
    Ok(cost)
}

fn run_program(expr: &IdedExpr, env: &Arc<Env>, vars: &[(&str, Value)]) -> Result<bool, String> {
    let mut ctx = Context::with_env(env.clone());
    for (name, v) in vars {
        ctx.add_variable_from_value(*name, v.clone());
    }
    // What `Program::execute` does with its expression.
    match Value::resolve(expr, &ctx) {
        Ok(Value::Bool(b)) => Ok(b),
        Ok(_) => Err("result is not a bool".into()),
        Err(e) => Err(describe(&e)),
    }
}

impl Guard {
    /// Evaluate with `vars`; `Ok(bool)` or a value-free error text.
    pub fn eval(&self, env: &Arc<Env>, vars: &[(&str, Value)]) -> Result<bool, String> {
        self.eval_within(env, vars, EVAL_DEADLINE)
    }

    /// [`Guard::eval`] with an explicit deadline. The evaluation runs on its
    /// own thread; past the deadline it is abandoned (it cannot be
    /// interrupted, but the static budget keeps what is left of it small).
    pub fn eval_within(
        &self,
        env: &Arc<Env>,
        vars: &[(&str, Value)],
        deadline: std::time::Duration,
    ) -> Result<bool, String> {
        if within_budget(&self.expr, vars)? <= INLINE_COST {
            return run_program(&self.expr, env, vars);
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let expr = self.expr.clone();
        let thread_env = env.clone();
        let owned: Vec<(String, Value)> = vars
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect();
        let spawned = std::thread::Builder::new()
            .name("harness-cel".into())
            .stack_size(super::RESOLVE_STACK)
            .spawn(move || {
                let vars: Vec<(&str, Value)> =
                    owned.iter().map(|(n, v)| (n.as_str(), v.clone())).collect();
                let _ = tx.send(run_program(&expr, &thread_env, &vars));
            });
        if spawned.is_err() {
            // No thread to be had: run here, bounded by the budget alone.
            return run_program(&self.expr, env, vars);
        }
        match rx.recv_timeout(deadline) {
            Ok(r) => r,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(format!(
                "evaluation budget exceeded: deadline of {} ms",
                deadline.as_millis()
            )),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err("evaluation error".into()),
        }
    }
}

/// JSON → CEL. Numbers are doubles, as after the reference's JSON round-trip.
pub fn json_to_cel(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => Value::Float(n.as_f64().unwrap_or(0.0)),
        serde_json::Value::String(s) => Value::String(Arc::new(s.clone())),
        serde_json::Value::Array(a) => Value::List(Arc::new(a.iter().map(json_to_cel).collect())),
        serde_json::Value::Object(o) => {
            let m: HashMap<String, Value> =
                o.iter().map(|(k, v)| (k.clone(), json_to_cel(v))).collect();
            Value::Map(m.into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const VARS: &[&str] = &["event", "runtime", "config"];

    fn ok(src: &str) -> Guard {
        compile(&cel_env(), src, VARS).unwrap_or_else(|e| panic!("{src}: {e:?}"))
    }

    fn run(src: &str, event: serde_json::Value) -> Result<bool, String> {
        let env = cel_env();
        let g = ok(src);
        g.eval(
            &env,
            &[
                ("event", json_to_cel(&event)),
                ("runtime", json_to_cel(&json!({"forge": "github"}))),
                ("config", json_to_cel(&json!({}))),
            ],
        )
    }

    #[test]
    fn static_bool_check() {
        for s in [
            "true",
            "event.a == 'x'",
            "has(event.a)",
            "'a' in event",
            "runtime.forge in ['github', 'gitlab']",
            "!has(config.forge)",
            "event.labels.exists(l, l == 'bug')",
            "event.labels.all(l, l != '')",
            "size(event.x) > 0",
            "event.s.startsWith('a')",
            "event.a == 1 ? true : false",
            "type(event.a) == string",
        ] {
            ok(s);
        }
        let env = cel_env();
        for (s, t) in [
            ("event.flag", "dyn"),
            ("1", "int"),
            ("'x'", "string"),
            ("[1]", "list(dyn)"),
            ("event.a ? 1 : 2", "int"),
            ("event.labels.map(l, l)", "list(dyn)"),
        ] {
            assert_eq!(
                compile(&env, s, VARS).err(),
                Some(CompileError::NotBool(t)),
                "{s}"
            );
        }
    }

    #[test]
    fn deep_nesting_and_long_expressions_are_compile_errors_not_crashes() {
        // On the stack `resolve` gives the parser (a test thread has 2 MiB).
        std::thread::Builder::new()
            .stack_size(super::super::RESOLVE_STACK)
            .spawn(|| {
                let env = cel_env();
                let ok = format!("{}true{}", "(".repeat(32), ")".repeat(32));
                assert!(compile(&env, &ok, VARS).is_ok());
                for deep in [
                    format!("{}true{}", "(".repeat(33), ")".repeat(33)),
                    format!("{}{} == []", "[".repeat(2000), "]".repeat(2000)),
                ] {
                    assert_eq!(
                        compile(&env, &deep, VARS).err(),
                        Some(CompileError::Invalid(
                            "expression nested deeper than 32 levels".into()
                        ))
                    );
                }
                // Brackets inside string literals do not count.
                let lit = format!("event.a == '{}'", "(".repeat(100));
                assert!(compile(&env, &lit, VARS).is_ok());
                let long = format!("event{} == 1", ".a".repeat(3000));
                assert!(
                    matches!(compile(&env, &long, VARS), Err(CompileError::Invalid(m)) if m.contains("4096 bytes"))
                );
                // The longest member chain allowed compiles and evaluates.
                let chain = format!("event{} == 1", ".a".repeat(2040));
                let g = compile(&env, &chain, VARS).unwrap();
                let vars = [
                    ("event", json_to_cel(&serde_json::json!({}))),
                    ("runtime", json_to_cel(&serde_json::json!({}))),
                    ("config", json_to_cel(&serde_json::json!({}))),
                ];
                let _ = g.eval(&env, &vars);
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn compile_errors_without_values() {
        let env = cel_env();
        match compile(&env, "event.a == 'secret-lit", VARS) {
            Err(CompileError::Invalid(m)) => {
                assert!(m.starts_with("syntax error"), "{m}");
                assert!(!m.contains("secret"));
            }
            other => panic!("{:?}", other.err()),
        }
        // An identifier may be an unquoted token: only its position is named.
        assert_eq!(
            compile(&env, "ghp_secret1 == 1", VARS).err(),
            Some(CompileError::Invalid("undeclared reference at 1:1".into()))
        );
        assert_eq!(
            compile(&env, "event.a == 'x' && ghp_secret2(1)", VARS).err(),
            Some(CompileError::Invalid("undeclared reference at 1:30".into()))
        );
        assert_eq!(
            compile(&env, "event.a == 1 ||\n runtime.forge == 'x'", &["event"]).err(),
            Some(CompileError::Invalid(
                "undeclared reference to 'runtime' at 2:2".into()
            ))
        );
        assert!(matches!(
            compile(&env, "runtime.forge == 'x'", &["event"]),
            Err(CompileError::Invalid(_))
        ));
        assert!(matches!(
            compile(&env, "event.?a == 1", VARS),
            Err(CompileError::Invalid(_))
        ));
    }

    #[test]
    fn evaluation() {
        assert_eq!(run("event.a == 'x'", json!({"a": "x"})), Ok(true));
        assert_eq!(run("event.n == 3", json!({"n": 3})), Ok(true));
        assert_eq!(run("runtime.forge == 'github'", json!({})), Ok(true));
        assert_eq!(run("has(event.a)", json!({})), Ok(false));
        let e = run("event.missing == 'x'", json!({})).unwrap_err();
        assert_eq!(e, "no such key");
        let e = run("event.tok + 1 == 2", json!({"tok": "secret-canary"})).unwrap_err();
        assert!(!e.contains("secret"), "{e}");
    }

    #[test]
    fn error_absorption_in_logic() {
        assert_eq!(run("event.missing == 'x' || true", json!({})), Ok(true));
        assert_eq!(run("true || event.missing == 'x'", json!({})), Ok(true));
        assert_eq!(run("event.missing == 'x' && false", json!({})), Ok(false));
        assert_eq!(run("false && event.missing == 'x'", json!({})), Ok(false));
        assert!(run("event.missing == 'x' && true", json!({})).is_err());
    }

    #[test]
    fn numbers_from_json_are_doubles() {
        assert_eq!(run("event.n > 3", json!({"n": 4})), Ok(true));
        assert_eq!(run("event.n == 4.0", json!({"n": 4})), Ok(true));
        assert_eq!(run("type(event.n) == double", json!({"n": 4})), Ok(true));
        assert_eq!(run("size(event.l) == 2", json!({"l": [1, 2]})), Ok(true));
        assert_eq!(run("'k' in event.m", json!({"m": {"k": null}})), Ok(true));
        assert_eq!(
            run("event.s.matches('^a+$')", json!({"s": "aaa"})),
            Ok(true)
        );
    }

    fn vars(event: serde_json::Value) -> Vec<(&'static str, Value)> {
        vec![
            ("event", json_to_cel(&event)),
            ("runtime", json_to_cel(&json!({"forge": ""}))),
            ("config", json_to_cel(&json!({}))),
        ]
    }

    fn lits(n: usize) -> String {
        format!("[{}]", vec!["1"; n].join(","))
    }

    #[test]
    fn nested_comprehensions_over_literals_run_out_of_budget() {
        // Four nested `exists` over 300-element literals: 8.1e9 steps.
        let l = lits(300);
        let src = format!(
            "{l}.exists(a, {l}.exists(b, {l}.exists(c, {l}.exists(d, a + b + c + d == -1))))"
        );
        assert!(src.len() < MAX_EXPR_BYTES);
        let env = cel_env();
        let g = ok(&src);
        let t = std::time::Instant::now();
        let e = g.eval(&env, &vars(json!({}))).unwrap_err();
        assert!(e.starts_with("evaluation budget exceeded"), "{e}");
        assert!(t.elapsed() < std::time::Duration::from_secs(1));
        // Nested maps (allocation) likewise.
        let src = format!("size({l}.map(a, {l}.map(b, {l}.map(c, [a, b, c])))) > 0");
        let e = ok(&src).eval(&env, &vars(json!({}))).unwrap_err();
        assert!(e.starts_with("evaluation budget exceeded"), "{e}");
        // Ranges from the event count with their real size.
        let src =
            "event.l.exists(a, event.l.exists(b, event.l.exists(c, a == b && b == c && c == -1)))";
        let big: Vec<u32> = (0..100).collect();
        let e = ok(src).eval(&env, &vars(json!({ "l": big }))).unwrap_err();
        assert!(e.starts_with("evaluation budget exceeded"), "{e}");
        let small: Vec<u32> = (0..10).collect();
        assert_eq!(ok(src).eval(&env, &vars(json!({ "l": small }))), Ok(false));
        // Concatenations grow ranges: bounded too.
        let src = format!("({l} + {l} + {l}).exists(a, ({l} + {l}).exists(b, a == b && a == -1))");
        assert!(ok(&src).eval(&env, &vars(json!({}))).is_err());
        // An ordinary guard is far within the budget.
        let src = format!("{l}.exists(a, a == 1) && {l}.all(a, a >= 0)");
        assert_eq!(ok(&src).eval(&env, &vars(json!({}))), Ok(true));
    }

    #[test]
    fn the_deadline_ends_an_evaluation() {
        // Within the cost limit, but not within a 1 ms deadline.
        let l = lits(150);
        let src = format!("{l}.exists(a, {l}.exists(b, a == b && a == -1))");
        let g = ok(&src);
        let env = cel_env();
        let e = g
            .eval_within(&env, &vars(json!({})), std::time::Duration::from_millis(1))
            .unwrap_err();
        assert_eq!(e, "evaluation budget exceeded: deadline of 1 ms");
        // The same guard completes given time. Not the default deadline:
        // on a loaded machine an unoptimised build can need more than it,
        // and this test is about the deadline ending work, not its size.
        let generous = std::time::Duration::from_secs(120);
        assert_eq!(g.eval_within(&env, &vars(json!({})), generous), Ok(false));
    }

    #[test]
    fn cross_type_equality() {
        assert_eq!(run("event.a == 'x'", json!({"a": 1})), Ok(false));
        assert_eq!(run("event.n == 1", json!({"n": 1.0})), Ok(true));
    }

    /// A tree without its node ids (they only key source positions, which
    /// evaluation never reads; the two parsers number nodes differently).
    fn shape(e: &IdedExpr) -> String {
        let d = format!("{e:?}");
        let mut out = String::with_capacity(d.len());
        let mut rest = d.as_str();
        while let Some(i) = rest.find("id: ") {
            out.push_str(&rest[..i]);
            rest = rest[i + 4..].trim_start_matches(|c: char| c.is_ascii_digit());
        }
        out.push_str(rest);
        out
    }

    /// The fast path's contract: whenever the Pratt parser gives a tree
    /// that [`fast_compile`] takes, the ANTLR parser gives the same tree
    /// (up to node ids) — so the guard means what it meant before.
    fn agree(env: &Env, src: &str) {
        let pratt = PrattParser::new().enable_optional_syntax(false).parse(src);
        let antlr = env.compile(src);
        if !plain_syntax(src) {
            assert!(fast_compile(src, VARS).is_none(), "{src}");
            return;
        }
        match (&pratt, &antlr) {
            (Ok(p), Ok(a)) => assert_eq!(shape(p), shape(a.expression()), "{src}"),
            (Ok(_), Err(_)) | (Err(_), _) => assert!(
                fast_compile(src, VARS).is_none(),
                "{src}: the fast path took what ANTLR rejects"
            ),
        }
    }

    fn gen(depth: u32, next: &mut dyn FnMut(usize) -> usize) -> String {
        const ATOMS: &[&str] = &[
            "event",
            "event.a",
            "runtime.forge",
            "config.x",
            "1",
            "2u",
            "1.5",
            "'s'",
            "\"t\"",
            "true",
            "null",
            "[]",
            "[1, 'a']",
            "{}",
            "{'k': 1}",
            "b'x'",
            "x",
            "event['k']",
        ];
        const BIN: &[&str] = &[
            " && ", " || ", " == ", " != ", " < ", " <= ", " > ", " >= ", " in ", " + ", " - ",
            " * ", " / ", " % ",
        ];
        if depth == 0 {
            return ATOMS[next(ATOMS.len())].to_string();
        }
        let d = depth - 1;
        match next(13) {
            0..=3 => {
                let a = gen(d, next);
                let op = BIN[next(BIN.len())];
                format!("{a}{op}{}", gen(d, next))
            }
            4 => format!("!{}", gen(d, next)),
            5 => format!("-{}", gen(d, next)),
            6 => format!("({})", gen(d, next)),
            7 => {
                let (a, b) = (gen(d, next), gen(d, next));
                format!("{a} ? {b} : {}", gen(d, next))
            }
            8 => format!("has({}.f)", gen(d, next)),
            9 => {
                let m = ["exists", "all", "exists_one", "map", "filter"][next(5)];
                let a = gen(d, next);
                format!("{a}.{m}(v, {})", gen(d, next))
            }
            10 => format!("size({})", gen(d, next)),
            11 => {
                format!("{}\n  {}", gen(d, next), ["&&", "||", "==", "+"][next(4)])
                    + &format!(" {}", gen(d, next))
            }
            _ => {
                let a = gen(d, next);
                format!("{a}[{}]", gen(d, next))
            }
        }
    }

    #[test]
    fn pratt_and_antlr_agree() {
        // The ANTLR parser recurses deeply (resolve gives it a big stack).
        std::thread::Builder::new()
            .stack_size(super::super::RESOLVE_STACK)
            .spawn(pratt_and_antlr_agree_here)
            .unwrap()
            .join()
            .unwrap();
    }

    fn pratt_and_antlr_agree_here() {
        let env = cel_env();
        let fixed = [
            "true",
            "false",
            "  true  ",
            "has(event.labels) && 'urgent' in event.labels",
            "runtime.forge == 'gitlab'",
            "has(event.labels) && 'l1' in event.labels || runtime.forge == 'github' && 0 % 2 == 0",
            "a && b && c && d && e",
            "a || b || c || d || e || f",
            "event.a && event.b || event.c && event.d || !event.e",
            "!!event.a",
            "!!!event.a",
            "--1 == 1",
            "---1 == -1",
            "-event.n < 0",
            "event.a == 1 ? true : false",
            "event.a ? event.b ? true : false : event.c",
            "event.a.b.c[0]['k'] == 1",
            "event['a'].b == 'x'",
            "event.labels.exists(l, l == 'bug')",
            "event.labels.all(l, l != '')",
            "event.labels.exists_one(l, l == 'x')",
            "event.labels.existsOne(l, l == 'x')",
            "event.labels.map(l, l + 'x') == []",
            "event.labels.map(l, l != '', l + 'x') == []",
            "event.labels.filter(l, l == 'x').size() > 0",
            "size(event.x) > 0",
            "event.s.startsWith('a') && event.s.endsWith(\"b\")",
            "event.s.contains('c') || event.s.matches('^a.*$')",
            "type(event.a) == string",
            "int(event.n) + 1 == 2",
            "uint(event.n) == 1u",
            "double(event.n) == 1.5e3",
            "0x1F == 31 && 1.0 == 1e0 && .5 < 1.0 && 0x1Fu == 31u",
            "'a\\nb' == \"a\\u00e9\" || r'\\d' == 'x' || '''multi\nline''' == \"\"\"x\"\"\"",
            "'\\x41\\101\\U0001F600\\a\\b\\f\\r\\t\\v\\\\\\'\\\"\\`\\?' == 'x'",
            "b'\\xff' == b\"a\" || B'x' == RB'y' || br'\\x' == b''",
            "bytes('a') == b'a'",
            "[1, 2, 3][0] == 1 && {'a': 1}['a'] == 1 && {1: 'x', true: 2}[1] == 'x'",
            "[1, 2,] == [1, 2]",
            "{'a': 1,}.a == 1",
            "1 + 2 * 3 - 4 / 2 % 3 == 5",
            "(1 + 2) * 3 == 9",
            "1 < 2 == true",
            "1 <= 2 && 2 >= 1 && 2 > 1 && 1 != 2",
            "'a' in ['a'] in [true]",
            "null == null",
            "event.a // a comment\n == 1",
            "event\n.a\n==\n1",
            "event\t.a\r\n== 1",
            "has(event.a.b)",
            "!has(config.forge)",
            ".event.a == 1",
            "dyn(event.a) == 1",
            "event.a.size() == size(event.a)",
            "event.x.y(1, 2) == 1",
            "Foo{a: 1} == 1",
            "event.a.?b == 1",
            "event[?'a'] == 1",
            "[?event.a] == []",
            "{?'a': event.a} == {}",
            "in == 1",
            "event.if == 1",
            "event.in == 1",
            "while == 1",
            "event.`a-b` == 1",
            "event.a == 'ünïcødé'",
            "ünï == 1",
            "9223372036854775807 == 1",
            "9223372036854775808 == 1",
            "-9223372036854775808 == 1",
            "18446744073709551615u == 1u",
            "18446744073709551616u == 1u",
            "1e400 == 1.0",
            "1. == 1.0",
            "1e == 1",
            "'\\q' == 'x'",
            "'\\u12' == 'x'",
            "'unterminated == 1",
            "event.a =",
            "event.a == ",
            "event.x == \"{}\" &&",
            "(((true)))",
            "[[[]]] == []",
            "1",
            "'x'",
            "event.flag",
            "event.a ? 1 : 2",
            "foo == 1",
            "event.a == 1 || foo(1)",
            "has(event)",
            "has(1)",
            "has(event.a, event.b)",
            "event.all(1, true)",
            "[1].exists(x.y, true)",
            "event.labels.map(l) == []",
            "event.labels.exists(l, l == 1, 2)",
            "",
            "  ",
            "@ == 1",
            "event.a === 1",
            "event.a == 1;",
            "event.a == 1 ) ",
            "( event.a == 1",
            "event..a == 1",
            "event.a == 1 ?",
            "true ? : false",
        ];
        for src in fixed {
            agree(&env, src);
        }
        // Guards as harness files write them take the fast path.
        for src in [
            "true",
            "has(event.labels) && 'urgent' in event.labels",
            "runtime.forge == 'gitlab'",
            "has(event.labels) && 'l1' in event.labels || runtime.forge == 'github' && 0 % 2 == 0",
            "event.labels.exists(l, l == \"bug\") && size(config.x) > 0",
            "event.a == 1 ? true : false",
        ] {
            assert!(fast_compile(src, VARS).is_some(), "{src}");
        }
        for src in [
            "b'x' == b'x'",
            "r'x' == 'x'",
            "'\\n' == 'x'",
            "true // c",
            "event.?a == 1",
        ] {
            assert!(!plain_syntax(src), "{src}");
        }
        // One the differential check found: an upper-case bytes prefix is
        // a Pratt-only extension.
        assert!(PrattParser::new().parse("RB'x' == b'x'").is_ok());
        assert!(env.compile("RB'x' == b'x'").is_err());
        assert!(!plain_syntax("RB'x' == b'x'"));
        let l = lits(5);
        for src in [
            format!("{l}.exists(a, {l}.exists(b, a == b))"),
            format!("size({l}.map(a, {l}.map(b, [a, b]))) == 0"),
            format!("({l} + {l}).exists(a, a == 1)"),
            format!("{}true{}", "(".repeat(32), ")".repeat(32)),
            "!".repeat(33) + "true",
            format!("event{} == 1", ".a".repeat(200)),
            format!("{} == 1", ["event.a"; 40].join(" + ")),
            ["event.a == 1"; 40].join(" || "),
            ["event.a == 1"; 40].join(" && "),
        ] {
            agree(&env, &src);
        }
        // Generated: random expressions over a small grammar, some of them
        // broken on purpose (a byte dropped).
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for i in 0..3000u32 {
            let mut src = gen(1 + i % 4, &mut next);
            if i % 7 == 0 && src.len() > 2 {
                let at = next(src.len() - 1);
                if src.is_char_boundary(at) && src.is_char_boundary(at + 1) {
                    src.remove(at);
                }
            }
            agree(&env, &src);
        }
    }
}
