//! `agentenv harness explain`: per variable of `runner_env`, `env.runner`,
//! `env.sandbox` and the effective runner env, every place that set it, in
//! the order the resolution applied them (the last one wins): the file
//! (root or base), the block (`top`, `forge.<p>`, `overlays[i]`), the YAML
//! line; and which variables its `${X}` / `$X` references read and where
//! those came from (host env, an `--env-file` file and line, the fullsend
//! dir, the deny list). Values only with `--show-values`.
//!
//! It stands on the shared provenance view ([`crate::core::explain`], the
//! one session `explain` uses): the resolution records each block's sets
//! as core [`ChangeSet`]s ([`Trace`]); here every map becomes a core
//! [`Assembly`] with one layer per block (kind `harness`, the file as its
//! path, the block as its level, the YAML line on each touch), and the
//! core report is completed with what only the harness knows: the map as
//! the report's scope, `root` / `base` (and, for the effective runner env,
//! the field) as each touch's detail, the expanded value, and the reads.
//!
//! The record is exact because every merge of a chain is "later wins" in
//! one linear order: deepest file's top < its forge block < its matching
//! overlays < … < the child's top < its forge block < its overlays.

use super::schema::{Config, EnvMap, Field};
use super::Resolved;
use crate::core::explain::{self as view, ReadReport, VarReport};
use crate::core::{Action, Assembly, ChangeSet, Env, LayerInfo, LayerKind};
use std::ffi::{OsStr, OsString};

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

/// The fields a block sets, in [`BlockSets::sets`] order.
const FIELDS: [Field; 3] = [Field::RunnerEnv, Field::EnvRunner, Field::EnvSandbox];

/// What one block set: per field, the keys with their values as written
/// (before expansion) and YAML lines.
#[derive(Debug, Clone)]
pub struct BlockSets {
    /// Index into [`Trace::files`].
    pub file: usize,
    pub block: Block,
    /// `runner_env`, `env.runner`, `env.sandbox`.
    pub sets: [ChangeSet; 3],
}

/// Every block that was applied, in application order, and the files of
/// the chain (index 0 is the harness file itself).
#[derive(Debug, Clone, Default)]
pub struct Trace {
    pub files: Vec<String>,
    pub blocks: Vec<BlockSets>,
}

impl Trace {
    pub fn record(&mut self, file: usize, block: Block, cfg: &Config) {
        let env = cfg.env.as_ref();
        let maps = [
            cfg.runner_env.as_ref(),
            env.and_then(|e| e.runner.as_ref()),
            env.and_then(|e| e.sandbox.as_ref()),
        ];
        let sets = std::array::from_fn(|i| change_set(FIELDS[i], maps[i], cfg));
        self.blocks.push(BlockSets { file, block, sets });
    }
}

fn change_set(field: Field, m: Option<&EnvMap>, cfg: &Config) -> ChangeSet {
    let mut cs = ChangeSet::new();
    for (k, v) in m.into_iter().flatten() {
        match cfg.lines.get(&(field, k.clone())) {
            Some(&l) => cs.set_at(k.as_str(), v.as_str(), l as u32),
            None => cs.set(k.as_str(), v.as_str()),
        }
    }
    cs
}

/// One map's provenance: a core assembly over an empty base, and for each
/// of its layers the file and field it stands for.
struct MapView {
    assembly: Assembly,
    layers: Vec<(usize, Field)>,
}

fn map_view(t: &Trace, fields: &[Field]) -> MapView {
    let mut assembly = Assembly::new(Env::new());
    let mut layers = Vec::new();
    for &field in fields {
        let i = FIELDS.iter().position(|f| *f == field).unwrap_or(0);
        for b in &t.blocks {
            let info = LayerInfo::new(LayerKind::Harness)
                .with_path(t.files.get(b.file).map(String::as_str).unwrap_or(""))
                .with_level(b.block.to_string());
            let l = assembly.add_layer(info);
            assembly.apply(l, &b.sets[i]);
            layers.push((b.file, field));
        }
    }
    MapView { assembly, layers }
}

/// Where a referenced variable came from: the fullsend dir, the deny
/// list, the last `--env-file` line that set it (from the resolution's
/// own assembly), the host env, or nowhere.
fn read_source(r: &Resolved, name: &str) -> ReadReport {
    let mut read = ReadReport {
        name: name.to_string(),
        from: String::new(),
        file: None,
        line: None,
    };
    let key = OsStr::new(name);
    let from_file = r.assembly.touches(key).iter().rev().find(|t| {
        r.assembly.layers()[t.layer].info.kind == LayerKind::DotenvFile
            && matches!(t.action, Action::Set | Action::Override)
    });
    read.from = if name == "FULLSEND_DIR" {
        "fullsend dir".into()
    } else if super::expansion::is_denied(name) {
        "deny list (expands to empty)".into()
    } else if let Some(t) = from_file {
        let info = &r.assembly.layers()[t.layer].info;
        read.file = info.path_text();
        read.line = t.line;
        "env file".into()
    } else if r.host_env.contains_key(key) {
        "host env".into()
    } else {
        "unset (expands to empty)".into()
    };
    read
}

/// The maps explained, in output order: the name (the report's scope),
/// the expanded values and the fields whose sets make it up (the effective
/// runner env: every `runner_env` set, then every `env.runner` set, which
/// wins whatever the files' order).
fn maps(r: &Resolved) -> [(&'static str, &super::expansion::ValueMap, &'static [Field]); 4] {
    [
        ("runner_env", &r.runner_env, &[Field::RunnerEnv]),
        ("env.runner", &r.env_runner, &[Field::EnvRunner]),
        ("env.sandbox", &r.env_sandbox, &[Field::EnvSandbox]),
        (
            "effective_runner_env",
            &r.effective_runner_env,
            &[Field::RunnerEnv, Field::EnvRunner],
        ),
    ]
}

/// The core reports of `harness explain`: every variable of the four maps
/// (only those named in `only`, when it is not empty), map by map.
pub fn report(r: &Resolved, only: &[String]) -> Vec<VarReport> {
    let mut out = Vec::new();
    for (scope, values, fields) in maps(r) {
        let names: Vec<OsString> = values
            .keys()
            .filter(|k| only.is_empty() || only.contains(k))
            .map(OsString::from)
            .collect();
        if names.is_empty() {
            continue;
        }
        let mv = map_view(&r.trace, fields);
        for mut v in view::report(&mv.assembly, &names) {
            let name = v.name.to_string_lossy().into_owned();
            for t in &mut v.touches {
                let (file, field) = mv.layers[t.layer.number - 1];
                let role = if file == 0 { "root" } else { "base" };
                t.detail = Some(if fields.len() > 1 {
                    format!("{role}, {}", field.name())
                } else {
                    role.to_string()
                });
            }
            // The winning value as written decides what was read.
            let raw = mv.assembly.final_value(&v.name).map(OsStr::to_string_lossy);
            let mut reads: Vec<ReadReport> = Vec::new();
            for n in raw
                .as_deref()
                .map(crate::expand::expanded_names)
                .unwrap_or_default()
            {
                if !reads.iter().any(|x| x.name == n) {
                    reads.push(read_source(r, n));
                }
            }
            v.reads = Some(reads);
            v.value = values.get(&name).cloned();
            v.scope = Some(scope.to_string());
            out.push(v);
        }
    }
    out
}

/// The `--format json` report: the core view's object (variables grouped
/// by map) after the platform and the chain's files.
pub fn render_json(r: &Resolved, only: &[String], show: bool) -> String {
    let mut top = serde_json::Map::new();
    top.insert("platform".into(), serde_json::json!(r.platform));
    top.insert("files".into(), serde_json::json!(r.trace.files));
    top.extend(view::to_json(&report(r, only), &[], show));
    let mut s = serde_json::to_string_pretty(&serde_json::Value::Object(top))
        .unwrap_or_else(|_| "{}".into());
    s.push('\n');
    s
}

/// The text report: the core view's text.
pub fn render_text(r: &Resolved, only: &[String], show: bool) -> String {
    view::render_text(&report(r, only), show)
}
