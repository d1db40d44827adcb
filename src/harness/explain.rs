//! `agentenv harness explain`: per variable of `runner_env`, `env.runner`,
//! `env.sandbox` and the effective runner env, every place that set it, in
//! the order the resolution applied them (the last one wins): the file
//! (root or base), the block (`top`, `forge.<p>`, `overlays[i]`), the YAML
//! line; and which host variables its `${X}` / `$X` references read and
//! where those came from (host env, an `--env-file` file and line, the
//! fullsend dir, the deny list). Values only with `--show-values`.
//!
//! The record is exact because every merge of a chain is "later wins" in
//! one linear order: deepest file's top < its forge block < its matching
//! overlays < … < the child's top < its forge block < its overlays.

use super::json::J;
use super::schema::{Config, EnvMap, Field};
use super::Resolved;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// Where inside a file a value was set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    Top,
    Forge(String),
    Overlay(usize),
}

impl std::fmt::Display for Block {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Block::Top => f.write_str("top"),
            Block::Forge(p) => write!(f, "forge.{p}"),
            Block::Overlay(i) => write!(f, "overlays[{i}]"),
        }
    }
}

/// One key set by one block.
#[derive(Debug, Clone)]
pub struct Set {
    pub file: usize,
    pub block: Block,
    pub field: Field,
    pub key: String,
    pub line: Option<usize>,
    /// The value as written (before expansion).
    pub raw: String,
}

/// Every set, in application order, and the files of the chain (index 0
/// is the harness file itself).
#[derive(Debug, Clone, Default)]
pub struct Trace {
    pub files: Vec<String>,
    pub sets: Vec<Set>,
}

impl Trace {
    pub fn record(&mut self, file: usize, block: Block, cfg: &Config) {
        let mut add = |field: Field, m: &Option<EnvMap>| {
            for (k, v) in m.iter().flatten() {
                self.sets.push(Set {
                    file,
                    block: block.clone(),
                    field,
                    key: k.clone(),
                    line: cfg.lines.get(&(field, k.clone())).copied(),
                    raw: v.clone(),
                });
            }
        };
        add(Field::RunnerEnv, &cfg.runner_env);
        if let Some(e) = &cfg.env {
            add(Field::EnvRunner, &e.runner);
            add(Field::EnvSandbox, &e.sandbox);
        }
    }
}

/// Where a referenced host variable came from.
fn read_source(r: &Resolved, name: &str) -> J {
    let mut o = vec![("name".to_string(), J::str(name))];
    let from = if name == "FULLSEND_DIR" {
        "fullsend dir"
    } else if super::expansion::is_denied(name) {
        "deny list (expands to empty)"
    } else if let Some((file, line)) = r.origins.get(OsStr::new(name)) {
        o.push(("file".into(), J::str(file.as_os_str().as_bytes())));
        o.push(("line".into(), J::Num(*line as u64)));
        "env file"
    } else if r.host_env.contains_key(OsStr::new(name)) {
        "host env"
    } else {
        "unset (expands to empty)"
    };
    o.insert(1, ("from".into(), J::str(from)));
    J::Obj(o)
}

/// The report of one variable of one map.
struct Var<'a> {
    map: &'static str,
    name: &'a str,
    value: Option<&'a OsStr>,
    sets: Vec<&'a Set>,
}

fn vars<'a>(r: &'a Resolved, only: &[String]) -> Vec<Var<'a>> {
    let mut out = Vec::new();
    let wanted = |k: &str| only.is_empty() || only.iter().any(|o| o == k);
    let maps: [(&'static str, &super::expansion::ValueMap, &[Field]); 4] = [
        ("runner_env", &r.runner_env, &[Field::RunnerEnv]),
        ("env.runner", &r.env_runner, &[Field::EnvRunner]),
        ("env.sandbox", &r.env_sandbox, &[Field::EnvSandbox]),
        (
            "effective_runner_env",
            &r.effective_runner_env,
            &[Field::RunnerEnv, Field::EnvRunner],
        ),
    ];
    for (map, values, fields) in maps {
        for (k, v) in values {
            if !wanted(k) {
                continue;
            }
            // runner_env sets come before env.runner sets in the effective
            // env (env.runner wins whatever the files' order).
            let mut sets = Vec::new();
            for f in fields {
                sets.extend(r.trace.sets.iter().filter(|s| s.field == *f && &s.key == k));
            }
            out.push(Var {
                map,
                name: k,
                value: Some(v.as_os_str()),
                sets,
            });
        }
    }
    out
}

fn set_json(r: &Resolved, s: &Set, show: bool) -> J {
    let mut o = vec![
        (
            "file".to_string(),
            J::str(r.trace.files.get(s.file).map(String::as_str).unwrap_or("")),
        ),
        ("base".into(), J::Bool(s.file > 0)),
        ("block".into(), J::str(s.block.to_string())),
        ("field".into(), J::str(s.field.name())),
        ("line".into(), s.line.map_or(J::Null, |l| J::Num(l as u64))),
    ];
    if show {
        o.push(("raw".into(), J::str(&s.raw)));
    }
    J::Obj(o)
}

/// The `--format json` report.
pub fn render_json(r: &Resolved, only: &[String], show: bool) -> String {
    let items = vars(r, only)
        .into_iter()
        .map(|v| {
            let mut o = vec![
                ("map".to_string(), J::str(v.map)),
                ("name".into(), J::str(v.name)),
            ];
            if show {
                o.push((
                    "value".into(),
                    v.value.map_or(J::Null, |x| J::str(x.as_bytes())),
                ));
            }
            o.push((
                "set_by".into(),
                J::Arr(v.sets.iter().map(|s| set_json(r, s, show)).collect()),
            ));
            let reads = v
                .sets
                .last()
                .map(|s| crate::expand::expanded_names(&s.raw))
                .unwrap_or_default();
            let mut seen = Vec::new();
            let reads: Vec<J> = reads
                .into_iter()
                .filter(|n| {
                    let new = !seen.contains(n);
                    seen.push(*n);
                    new
                })
                .map(|n| read_source(r, n))
                .collect();
            o.push(("reads".into(), J::Arr(reads)));
            J::Obj(o)
        })
        .collect();
    let files = r.trace.files.iter().map(|f| J::str(f.as_bytes())).collect();
    super::json::to_string(&J::Obj(vec![
        ("platform".into(), J::str(&r.platform)),
        ("files".into(), J::Arr(files)),
        ("variables".into(), J::Arr(items)),
    ]))
}

/// The text report.
pub fn render_text(r: &Resolved, only: &[String], show: bool) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::new();
    for v in vars(r, only) {
        out.extend_from_slice(format!("{} [{}]", v.name, v.map).as_bytes());
        if show {
            if let Some(x) = v.value {
                out.extend_from_slice(b" = ");
                out.extend_from_slice(x.as_bytes());
            }
        }
        out.push(b'\n');
        let n = v.sets.len();
        for (i, s) in v.sets.iter().enumerate() {
            let file = r.trace.files.get(s.file).map(String::as_str).unwrap_or("");
            let role = if s.file == 0 { "" } else { " (base)" };
            let line = s.line.map(|l| format!(":{l}")).unwrap_or_default();
            let wins = if i + 1 == n { "  <- wins" } else { "" };
            out.extend_from_slice(
                format!(
                    "  {}. set in {file}{line}{role}, {}, {}{wins}\n",
                    i + 1,
                    s.block,
                    s.field.name()
                )
                .as_bytes(),
            );
        }
        if let Some(last) = v.sets.last() {
            let mut seen = Vec::new();
            for name in crate::expand::expanded_names(&last.raw) {
                if seen.contains(&name) {
                    continue;
                }
                seen.push(name);
                let from = if name == "FULLSEND_DIR" {
                    "the fullsend dir".to_string()
                } else if super::expansion::is_denied(name) {
                    "nothing: on the deny list, expands to empty".to_string()
                } else if let Some((file, line)) = r.origins.get(OsStr::new(name)) {
                    format!("{}:{line}", file.display())
                } else if r.host_env.contains_key(OsStr::new(name)) {
                    "host env".to_string()
                } else {
                    "nothing: unset, expands to empty".to_string()
                };
                out.extend_from_slice(format!("  reads ${name} from {from}\n").as_bytes());
            }
        }
    }
    out
}
