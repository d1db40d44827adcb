//! The harness schema as far as env delivery needs it (fullsend's), and the
//! lenient conversion from the YAML node tree: unknown keys are ignored at
//! every level, any scalar is taken as its literal text, null is the empty
//! string (the key stays present), and type mismatches are errors naming the
//! file, line, column and field — never a value.

use super::yaml::{Kind, Node, Pos};
use super::Error;
use indexmap::IndexMap;
use std::collections::BTreeMap;
use std::path::Path;

/// A string → string env map. Go maps are unordered; we keep them sorted.
pub type EnvMap = BTreeMap<String, String>;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvConfig {
    pub runner: Option<EnvMap>,
    pub sandbox: Option<EnvMap>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct HostFile {
    pub src: String,
    pub dest: String,
    pub expand: bool,
    pub optional: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValidationLoop {
    pub script: String,
    pub schema: String,
    /// The literal text of the integer (`0` and empty count as unset).
    pub max_iterations: String,
    pub feedback_mode: String,
    pub preflight_check: String,
}

/// The YAML line of each env key of a block.
pub type KeyLines = BTreeMap<(Field, String), usize>;

/// Which env map of a [`Config`] a key belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Field {
    RunnerEnv,
    EnvRunner,
    EnvSandbox,
}

impl Field {
    pub fn name(self) -> &'static str {
        match self {
            Field::RunnerEnv => "runner_env",
            Field::EnvRunner => "env.runner",
            Field::EnvSandbox => "env.sandbox",
        }
    }
}

/// The field set shared by the top level, a `forge.<p>` block and an
/// overlay entry (Go's `ForgeConfig`), as far as env delivery needs it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    pub pre_script: String,
    pub post_script: String,
    pub policy: String,
    pub host_files: Option<Vec<HostFile>>,
    pub validation_loop: Option<ValidationLoop>,
    pub runner_env: Option<EnvMap>,
    pub env: Option<EnvConfig>,
    /// The YAML line of each env key declared in this block (for
    /// `harness explain`); merges leave it alone.
    pub lines: KeyLines,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overlay {
    pub when: String,
    pub cfg: Config,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Harness {
    pub agent: String,
    pub role: String,
    pub slug: String,
    pub trigger: String,
    /// The declared `base:` and where it was written.
    pub base: Option<(String, Pos)>,
    pub cfg: Config,
    /// `None` = absent or null; a null block value = explicitly nulled.
    pub forge: Option<IndexMap<String, Option<Config>>>,
    pub overlays: Option<Vec<Overlay>>,
    /// `allowed_remote_resources` (never inherited from a base).
    pub allowed_remote_resources: Option<Vec<String>>,
    pub allow_runtime_fetch: bool,
}

/// Conversion context: the file name for messages.
pub(crate) struct Conv<'a> {
    pub file: &'a Path,
}

impl Conv<'_> {
    fn err(&self, pos: Pos, field: &str, msg: &str) -> Error {
        Error::load(format!(
            "{}:{}:{}: parsing harness YAML: yaml: unmarshal errors: {field}: {msg}",
            self.file.display(),
            pos.line,
            pos.col
        ))
    }

    fn mismatch(&self, n: &Node, field: &str, want: &str) -> Error {
        self.err(
            n.pos,
            field,
            &format!("expected {want}, found {}", n.kind_name()),
        )
    }

    /// The entries of a mapping node; null → `None`.
    fn entries<'n>(&self, n: &'n Node, field: &str) -> Result<Option<&'n [(Node, Node)]>, Error> {
        match &n.kind {
            Kind::Null => Ok(None),
            Kind::Map(es) => Ok(Some(es)),
            _ => Err(self.mismatch(n, field, "a mapping")),
        }
    }

    fn string(&self, n: &Node, field: &str) -> Result<String, Error> {
        match &n.kind {
            Kind::Null => Ok(String::new()),
            Kind::Scalar { text, .. } => Ok(text.clone()),
            _ => Err(self.mismatch(n, field, "a string")),
        }
    }

    /// yaml.v3 decoding into `bool`: core booleans, plus the YAML 1.1
    /// words (`yes`, `on`, …) for typed bool targets; null → false.
    fn boolean(&self, n: &Node, field: &str) -> Result<bool, Error> {
        match &n.kind {
            Kind::Null => Ok(false),
            Kind::Scalar { text, plain } => {
                let t = text.as_str();
                if *plain && matches!(t, "true" | "True" | "TRUE") {
                    return Ok(true);
                }
                if *plain && matches!(t, "false" | "False" | "FALSE") {
                    return Ok(false);
                }
                match t {
                    "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => Ok(true),
                    "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => Ok(false),
                    _ => Err(self.err(n.pos, field, "expected a boolean")),
                }
            }
            _ => Err(self.mismatch(n, field, "a boolean")),
        }
    }

    fn string_map(
        &self,
        n: &Node,
        field: &str,
        lines: Option<(Field, &mut KeyLines)>,
    ) -> Result<Option<EnvMap>, Error> {
        let Some(es) = self.entries(n, field)? else {
            return Ok(None);
        };
        let mut m = EnvMap::new();
        let mut lines = lines;
        for (k, v) in es {
            let key = self.string(k, &format!("{field} key"))?;
            // A key is named in messages only up to its valid prefix.
            let val = self.string(v, &format!("{field}.{}", super::shown_key(&key)))?;
            if let Some((f, l)) = lines.as_mut() {
                l.insert((*f, key.clone()), k.pos.line);
            }
            m.insert(key, val);
        }
        Ok(Some(m))
    }

    fn env(&self, n: &Node, field: &str, lines: &mut KeyLines) -> Result<Option<EnvConfig>, Error> {
        let Some(es) = self.entries(n, field)? else {
            return Ok(None);
        };
        let mut e = EnvConfig::default();
        for (k, v) in es {
            match k.key_text() {
                Some("runner") => {
                    e.runner = self.string_map(
                        v,
                        &format!("{field}.runner"),
                        Some((Field::EnvRunner, &mut *lines)),
                    )?
                }
                Some("sandbox") => {
                    e.sandbox = self.string_map(
                        v,
                        &format!("{field}.sandbox"),
                        Some((Field::EnvSandbox, &mut *lines)),
                    )?
                }
                _ => {}
            }
        }
        Ok(Some(e))
    }

    /// yaml.v3 decoding into `int`: decimal, `0x`, `0o`, `0b`, a sign,
    /// `_` separators; null → 0. Kept as its text.
    fn int(&self, n: &Node, field: &str) -> Result<String, Error> {
        match &n.kind {
            Kind::Null => Ok(String::new()),
            Kind::Scalar { text, plain: true } => {
                let t = text.replace('_', "");
                let t = t.strip_prefix(['+', '-']).unwrap_or(&t);
                let ok = if let Some(h) = t.strip_prefix("0x") {
                    !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit())
                } else if let Some(o) = t.strip_prefix("0o") {
                    !o.is_empty() && o.bytes().all(|b| (b'0'..=b'7').contains(&b))
                } else if let Some(b) = t.strip_prefix("0b") {
                    !b.is_empty() && b.bytes().all(|c| c == b'0' || c == b'1')
                } else {
                    !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
                };
                if ok {
                    Ok(text.clone())
                } else {
                    Err(self.err(n.pos, field, "expected an integer"))
                }
            }
            Kind::Scalar { .. } => Err(self.err(n.pos, field, "expected an integer")),
            _ => Err(self.mismatch(n, field, "an integer")),
        }
    }

    fn string_list(&self, n: &Node, field: &str) -> Result<Option<Vec<String>>, Error> {
        match &n.kind {
            Kind::Null => Ok(None),
            Kind::Seq(items) => items
                .iter()
                .enumerate()
                .map(|(i, it)| self.string(it, &format!("{field}[{i}]")))
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            _ => Err(self.mismatch(n, field, "a sequence")),
        }
    }

    fn host_files(&self, n: &Node, field: &str) -> Result<Option<Vec<HostFile>>, Error> {
        let items = match &n.kind {
            Kind::Null => return Ok(None),
            Kind::Seq(items) => items,
            _ => return Err(self.mismatch(n, field, "a sequence")),
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let f = format!("{field}[{i}]");
            let mut h = HostFile::default();
            if let Some(es) = self.entries(item, &f)? {
                for (k, v) in es {
                    match k.key_text() {
                        Some("src") => h.src = self.string(v, &format!("{f}.src"))?,
                        Some("dest") => h.dest = self.string(v, &format!("{f}.dest"))?,
                        Some("expand") => h.expand = self.boolean(v, &format!("{f}.expand"))?,
                        Some("optional") => {
                            h.optional = self.boolean(v, &format!("{f}.optional"))?
                        }
                        _ => {}
                    }
                }
            }
            out.push(h);
        }
        Ok(Some(out))
    }

    fn validation_loop(&self, n: &Node, field: &str) -> Result<Option<ValidationLoop>, Error> {
        let Some(es) = self.entries(n, field)? else {
            return Ok(None);
        };
        let mut vl = ValidationLoop::default();
        for (k, v) in es {
            match k.key_text() {
                Some("script") => vl.script = self.string(v, &format!("{field}.script"))?,
                Some("schema") => vl.schema = self.string(v, &format!("{field}.schema"))?,
                Some("max_iterations") => {
                    vl.max_iterations = self.int(v, &format!("{field}.max_iterations"))?
                }
                Some("feedback_mode") => {
                    vl.feedback_mode = self.string(v, &format!("{field}.feedback_mode"))?
                }
                Some("preflight_check") => {
                    vl.preflight_check = self.string(v, &format!("{field}.preflight_check"))?
                }
                _ => {}
            }
        }
        Ok(Some(vl))
    }

    /// One ForgeConfig field; returns `false` when `key` is not one.
    fn config_field(
        &self,
        cfg: &mut Config,
        key: &str,
        v: &Node,
        prefix: &str,
    ) -> Result<bool, Error> {
        let f = format!("{prefix}{key}");
        match key {
            "pre_script" => cfg.pre_script = self.string(v, &f)?,
            "post_script" => cfg.post_script = self.string(v, &f)?,
            "policy" => cfg.policy = self.string(v, &f)?,
            "host_files" => cfg.host_files = self.host_files(v, &f)?,
            "validation_loop" => cfg.validation_loop = self.validation_loop(v, &f)?,
            "runner_env" => {
                cfg.runner_env = self.string_map(v, &f, Some((Field::RunnerEnv, &mut cfg.lines)))?
            }
            "env" => cfg.env = self.env(v, &f, &mut cfg.lines)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn config(&self, n: &Node, prefix: &str) -> Result<Option<Config>, Error> {
        let field = prefix.trim_end_matches('.');
        let Some(es) = self.entries(n, field)? else {
            return Ok(None);
        };
        let mut cfg = Config::default();
        for (k, v) in es {
            if let Some(key) = k.key_text() {
                self.config_field(&mut cfg, key, v, prefix)?;
            }
        }
        Ok(Some(cfg))
    }

    pub fn harness(&self, root: Option<&Node>) -> Result<Harness, Error> {
        let mut h = Harness::default();
        let Some(root) = root else { return Ok(h) };
        let Some(es) = self.entries(root, "document")? else {
            return Ok(h);
        };
        for (k, v) in es {
            let Some(key) = k.key_text() else { continue };
            if self.config_field(&mut h.cfg, key, v, "")? {
                continue;
            }
            match key {
                "agent" => h.agent = self.string(v, "agent")?,
                "role" => h.role = self.string(v, "role")?,
                "slug" => h.slug = self.string(v, "slug")?,
                "trigger" => h.trigger = self.string(v, "trigger")?,
                "allowed_remote_resources" => {
                    h.allowed_remote_resources = self.string_list(v, "allowed_remote_resources")?
                }
                "allow_runtime_fetch" => {
                    h.allow_runtime_fetch = self.boolean(v, "allow_runtime_fetch")?
                }
                "base" => {
                    let b = self.string(v, "base")?;
                    h.base = if b.is_empty() { None } else { Some((b, v.pos)) };
                }
                "forge" => {
                    if let Some(fs) = self.entries(v, "forge")? {
                        let mut m = IndexMap::new();
                        for (pk, pv) in fs {
                            let p = self.string(pk, "forge key")?;
                            let block =
                                self.config(pv, &format!("forge.{}.", super::shown_key(&p)))?;
                            m.insert(p, block);
                        }
                        h.forge = Some(m);
                    }
                }
                "overlays" => {
                    let items = match &v.kind {
                        Kind::Null => None,
                        Kind::Seq(items) => Some(items),
                        _ => return Err(self.mismatch(v, "overlays", "a sequence")),
                    };
                    if let Some(items) = items {
                        let mut out = Vec::new();
                        for (i, item) in items.iter().enumerate() {
                            let prefix = format!("overlays[{i}].");
                            let mut o = Overlay::default();
                            if let Some(es) = self.entries(item, &format!("overlays[{i}]"))? {
                                for (k, v) in es {
                                    let Some(key) = k.key_text() else { continue };
                                    if key == "when" {
                                        o.when = self.string(v, &format!("{prefix}when"))?;
                                    } else {
                                        self.config_field(&mut o.cfg, key, v, &prefix)?;
                                    }
                                }
                            }
                            out.push(o);
                        }
                        h.overlays = Some(out);
                    }
                }
                _ => {}
            }
        }
        Ok(h)
    }
}

/// Parse harness YAML text (the file name is for messages).
pub fn parse_harness(text: &str, file: &Path) -> Result<Harness, Error> {
    let root = super::yaml::parse_first_document(text).map_err(|e| {
        Error::load(format!(
            "{}:{}:{}: parsing harness YAML: {}",
            file.display(),
            e.pos.line,
            e.pos.col,
            e.message
        ))
    })?;
    Conv { file }.harness(root.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Harness, Error> {
        parse_harness(s, Path::new("h.yaml"))
    }

    /// The message `p(s)` fails with.
    fn err(s: &str) -> String {
        p(s).unwrap_err().to_string()
    }

    #[test]
    fn literal_scalars_and_nulls_in_env_maps() {
        let h = p("env:\n  runner:\n    N: 5\n    B: true\n    F: 1.50\n    H: 0x1F\n    Y: yes\n    E: ~\n    E2:\n    1: a\n").unwrap();
        let r = h.cfg.env.unwrap().runner.unwrap();
        assert_eq!(r["N"], "5");
        assert_eq!(r["B"], "true");
        assert_eq!(r["F"], "1.50");
        assert_eq!(r["H"], "0x1F");
        assert_eq!(r["Y"], "yes");
        assert_eq!(r["E"], "");
        assert_eq!(r["E2"], "");
        assert_eq!(r["1"], "a");
    }

    #[test]
    fn unknown_keys_ignored_everywhere() {
        let h = p("agent: a\nbogus: [1, {x: y}]\nenv: {runer: {A: b}, sandbox: {S: v}}\nhost_files:\n  - {src: s, dest: d, extra: [1]}\nforge:\n  github: {model: x, slug: y, env: {runner: {K: v}}}\noverlays:\n  - {when: 'true', base: x}\n").unwrap();
        let env = h.cfg.env.unwrap();
        assert_eq!(env.runner, None);
        assert_eq!(env.sandbox.unwrap()["S"], "v");
        assert_eq!(h.cfg.host_files.unwrap()[0].dest, "d");
        let f = h.forge.unwrap();
        assert!(f["github"].as_ref().unwrap().env.is_some());
        assert_eq!(h.overlays.unwrap()[0].when, "true");
    }

    #[test]
    fn type_mismatches_name_field_and_position_not_value() {
        let e = err("env: \"secret-x\"\n");
        assert!(e.contains("h.yaml:1:6"), "{e}");
        assert!(e.contains("parsing harness YAML"), "{e}");
        assert!(e.contains("env: expected a mapping"), "{e}");
        assert!(!e.contains("secret-x"));
        let e = err("env:\n  runner: [secret-y]\n");
        assert!(
            e.contains("env.runner: expected a mapping, found a sequence"),
            "{e}"
        );
        assert!(!e.contains("secret-y"));
        let e = err("host_files: {}\n");
        assert!(e.contains("host_files: expected a sequence"), "{e}");
        let e = err("env:\n  runner:\n    K: [a]\n");
        assert!(e.contains("env.runner.K: expected a string"), "{e}");
        let e = err("host_files:\n  - {src: a, dest: b, expand: secret-z}\n");
        assert!(
            e.contains("host_files[0].expand: expected a boolean"),
            "{e}"
        );
        assert!(!e.contains("secret-z"));
    }

    #[test]
    fn a_forge_key_carrying_a_value_is_shown_by_its_prefix() {
        let e = err("forge:\n  'gh ghp_secret9':\n    env: 'x'\n");
        assert!(e.contains("forge.gh….env: expected a mapping"), "{e}");
        assert!(!e.contains("secret9"), "{e}");
    }

    #[test]
    fn booleans() {
        let h = p("host_files:\n  - {src: a, dest: b, expand: yes, optional: 'on'}\n  - {src: a, dest: c, expand: TRUE}\n  - {src: a, dest: d, expand: ~}\n").unwrap();
        let hf = h.cfg.host_files.unwrap();
        assert!(hf[0].expand && hf[0].optional);
        assert!(hf[1].expand);
        assert!(!hf[2].expand);
        assert!(p("host_files:\n  - {src: a, dest: b, expand: 'true'}\n").is_err());
        assert!(p("host_files:\n  - {src: a, dest: b, expand: !!str true}\n").is_err());
        let h = p("host_files:\n  - {src: a, dest: b, expand: !!bool true}\n").unwrap();
        assert!(h.cfg.host_files.unwrap()[0].expand);
    }

    #[test]
    fn presence_distinctions() {
        let h = p("forge:\n  github: ~\n  gitlab: {}\n").unwrap();
        let f = h.forge.unwrap();
        assert_eq!(f["github"], None);
        assert_eq!(f["gitlab"], Some(Config::default()));
        assert_eq!(p("forge: ~\n").unwrap().forge, None);
        assert_eq!(p("forge: {}\n").unwrap().forge, Some(IndexMap::new()));
        assert_eq!(p("").unwrap(), Harness::default());
    }

    #[test]
    fn duplicate_keys_name_file_and_line() {
        let e = err("env:\n  runner:\n    K: a\n    K: b\n");
        assert!(e.starts_with("h.yaml:4:"), "{e}");
        assert!(e.contains("already defined at line 3"), "{e}");
    }

    proptest::proptest! {
        #[test]
        fn loader_never_panics(s in "[a-z:{}\\[\\],&*!~'\" \n-]{0,80}") {
            let _ = p(&s);
        }

        #[test]
        fn loader_errors_never_quote_values(v in "[a-z]{6,12}") {
            let secret = format!("zz{v}");
            for doc in [
                format!("env: {secret}\n"),
                format!("env: {{runner: [{secret}]}}\n"),
                format!("host_files: [{{src: a, dest: b, expand: {secret}}}]\n"),
                format!("env: {{runner: {{K: {secret}, K: {secret}}}}}\n"),
                format!("env: {{runner: [{secret}\n"),
            ] {
                let e = err(&doc);
                proptest::prop_assert!(!e.contains(&secret), "{}", e);
            }
        }
    }

    #[test]
    fn root_must_be_a_mapping() {
        let e = err("- a\n");
        assert!(e.contains("expected a mapping, found a sequence"), "{e}");
        assert_eq!(p("~\n").unwrap(), Harness::default());
    }
}
