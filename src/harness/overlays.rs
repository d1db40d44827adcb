//! CEL guards for `overlays[].when` and `trigger` (reference §3.3), with the
//! `cel` crate. cel-go's checker is emulated where the reference depends on
//! it: undeclared identifiers are compile errors, and the static result
//! type of a guard must be exactly `bool` (every variable is `dyn`, so a
//! bare field access such as `event.flag` is rejected).
//!
//! No message here ever contains a value: parse errors give only the
//! position inside the expression, evaluation errors only their kind.

use cel::common::ast::{operators, Expr, IdedExpr, LiteralValue};
use cel::{Context, Env, Program, Value};
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

struct Checker<'a> {
    vars: &'a [&'a str],
    scopes: Vec<(String, Ty)>,
}

impl Checker<'_> {
    fn ident(&self, name: &str) -> Result<Ty, String> {
        if let Some((_, t)) = self.scopes.iter().rev().find(|(n, _)| n == name) {
            return Ok(t.clone());
        }
        if self.vars.contains(&name) {
            return Ok(Ty::Dyn);
        }
        if TYPE_IDENTS.contains(&name) {
            return Ok(Ty::Type);
        }
        Err(format!("undeclared reference to '{name}'"))
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
            Expr::Ident(name) => self.ident(name),
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
                        None => Err(format!("undeclared reference to '{f}'")),
                    },
                }
            }
        }
    }
}

/// A compiled guard.
pub struct Guard {
    program: Program,
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
    };
    let ty = c
        .check(program.expression())
        .map_err(CompileError::Invalid)?;
    if ty != Ty::Bool {
        return Err(CompileError::NotBool(ty.name()));
    }
    Ok(Guard { program })
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

impl Guard {
    /// Evaluate with `vars`; `Ok(bool)` or a value-free error text.
    pub fn eval(&self, env: &Arc<Env>, vars: &[(&str, Value)]) -> Result<bool, String> {
        let mut ctx = Context::with_env(env.clone());
        for (name, v) in vars {
            ctx.add_variable_from_value(*name, v.clone());
        }
        match self.program.execute(&ctx) {
            Ok(Value::Bool(b)) => Ok(b),
            Ok(_) => Err("result is not a bool".into()),
            Err(e) => Err(describe(&e)),
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
        assert_eq!(
            compile(&env, "nope == 1", VARS).err(),
            Some(CompileError::Invalid(
                "undeclared reference to 'nope'".into()
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

    #[test]
    fn cross_type_equality() {
        assert_eq!(run("event.a == 'x'", json!({"a": 1})), Ok(false));
        assert_eq!(run("event.n == 1", json!({"n": 1.0})), Ok(true));
    }
}
