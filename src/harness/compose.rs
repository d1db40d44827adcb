//! `base:` chains (reference §2): locating bases (relative to the declaring
//! file, containment in the workspace root, `https://…#sha256=` from a local
//! content-addressed cache), depth and cycle limits, and the per-field
//! merge rules of `mergeBaseIntoChild` / `mergeForgeConfig`.

use super::schema::{Config, EnvConfig, EnvMap, Harness, HostFile};
use super::{sha256, Error};
use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

/// `MaxBaseDepth`.
pub const MAX_BASE_DEPTH: usize = 5;

/// Copy base keys missing from `over` (child / block keys win).
fn merge_map(base: &Option<EnvMap>, over: &mut Option<EnvMap>) {
    if let Some(b) = base {
        let o = over.get_or_insert_with(EnvMap::new);
        for (k, v) in b {
            o.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
}

fn merge_env(base: &Option<EnvConfig>, over: &mut Option<EnvConfig>) {
    if let Some(b) = base {
        let o = over.get_or_insert_with(EnvConfig::default);
        merge_map(&b.runner, &mut o.runner);
        merge_map(&b.sandbox, &mut o.sandbox);
    }
}

/// Base entries first; an `over` entry whose `dest` exactly equals a base
/// entry's replaces it in place; the others are appended.
fn merge_host_files(base: &Option<Vec<HostFile>>, over: &mut Option<Vec<HostFile>>) {
    if let Some(b) = base {
        let mut res = b.clone();
        let n = res.len();
        for c in over.take().unwrap_or_default() {
            match res[..n].iter().position(|x| x.dest == c.dest) {
                Some(i) => res[i] = c,
                None => res.push(c),
            }
        }
        *over = Some(res);
    }
}

fn merge_scalar(base: &str, over: &mut String) {
    if over.is_empty() {
        *over = base.to_string();
    }
}

/// Merge `base` under `over` (`over` wins). `carry_preflight`: a replacing
/// `validation_loop` keeps the base's `preflight_check` when it has none
/// (base composition only).
pub fn merge_config(base: &Config, over: &mut Config, carry_preflight: bool) {
    merge_scalar(&base.pre_script, &mut over.pre_script);
    merge_scalar(&base.post_script, &mut over.post_script);
    merge_scalar(&base.policy, &mut over.policy);
    merge_map(&base.runner_env, &mut over.runner_env);
    merge_env(&base.env, &mut over.env);
    merge_host_files(&base.host_files, &mut over.host_files);
    match (&base.validation_loop, &mut over.validation_loop) {
        (Some(b), Some(o)) if carry_preflight && o.preflight_check.is_empty() => {
            o.preflight_check = b.preflight_check.clone();
        }
        (Some(b), None) => over.validation_loop = Some(b.clone()),
        _ => {}
    }
}

/// Apply `block` over `top` (the block wins): ResolveForge / overlays.
pub fn apply_block(top: &mut Config, block: Config) {
    let mut o = block;
    merge_config(top, &mut o, false);
    *top = o;
}

/// `mergeBaseIntoChild(base, child)`.
pub fn merge_base_into_child(base: &Harness, child: &mut Harness) {
    merge_scalar(&base.agent, &mut child.agent);
    merge_scalar(&base.role, &mut child.role);
    merge_scalar(&base.slug, &mut child.slug);
    merge_scalar(&base.trigger, &mut child.trigger);
    merge_config(&base.cfg, &mut child.cfg, true);
    if let Some(bf) = &base.forge {
        let cf = child.forge.get_or_insert_with(Default::default);
        for (k, bb) in bf {
            match cf.get_mut(k) {
                Some(Some(cb)) => {
                    if let Some(bb) = bb {
                        merge_config(bb, cb, true);
                    }
                }
                Some(None) => {} // explicitly nulled in the child
                None => {
                    cf.insert(k.clone(), bb.clone());
                }
            }
        }
    }
    if let Some(bo) = &base.overlays {
        let mut all = bo.clone();
        all.extend(child.overlays.take().unwrap_or_default());
        child.overlays = Some(all);
    }
    child.base = None;
}

/// Lexical `filepath.Clean` of an absolute path.
pub fn clean(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    out.push("/");
                }
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Make `p` absolute (against the current directory) and clean it.
pub fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        clean(p)
    } else {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        clean(&cwd.join(p))
    }
}

/// Where bases come from.
pub struct BaseSource<'a> {
    /// Containment root (the fullsend dir).
    pub root: &'a Path,
    /// `--base-cache DIR`.
    pub cache: Option<&'a Path>,
}

/// A URL without userinfo, query and fragment, for messages and cycle keys.
fn url_display(url: &str) -> String {
    let no_frag = url.split('#').next().unwrap_or("");
    let no_query = no_frag.split('?').next().unwrap_or("");
    match no_query.strip_prefix("https://") {
        Some(rest) => {
            let (host, path) = match rest.find('/') {
                Some(i) => (&rest[..i], &rest[i..]),
                None => (rest, ""),
            };
            let host = host.rsplit('@').next().unwrap_or(host);
            format!("https://{host}{path}")
        }
        None => no_query.to_string(),
    }
}

fn read_file(path: &Path) -> Result<String, Error> {
    let bytes = crate::fsutil::read_input(path, super::inputs::MAX_INPUT_FILE).map_err(|e| {
        Error::new(format!(
            "reading harness file: {}: {}",
            path.display(),
            crate::process::io_kind(&e)
        ))
    })?;
    String::from_utf8(bytes).map_err(|e| {
        Error::new(format!(
            "reading harness file: {}: not valid UTF-8 (byte {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Load one harness file.
pub fn load_file(path: &Path) -> Result<Harness, Error> {
    let text = read_file(path)?;
    super::schema::parse_harness(&text, path)
}

/// One link of a chain: its parsed harness, and where a relative `base:`
/// written in it resolves (the declaring file's directory; for a URL base,
/// the nearest local file's directory — the reference's quirk).
struct Link {
    harness: Harness,
    dir: PathBuf,
}

fn load_url_base(url: &str, src: &BaseSource<'_>) -> Result<(String, Harness, String), Error> {
    let shown = url_display(url);
    let Some((_, frag)) = url.split_once('#') else {
        return Err(Error::new(format!(
            "base URL {shown} requires a #sha256=<64 hex digits> fragment"
        )));
    };
    let hex = frag.strip_prefix("sha256=").unwrap_or("");
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::new(format!(
            "base URL {shown} requires a #sha256=<64 hex digits> fragment"
        )));
    }
    let hex = hex.to_ascii_lowercase();
    let Some(cache) = src.cache else {
        return Err(Error::new(format!(
            "base URL {shown}: URL base requires org-level allowed_remote_resources; agentenv resolves URL bases only from a local cache instead: pass --base-cache DIR holding a file named {hex} (no network access)"
        )));
    };
    let file = cache.join(&hex);
    let bytes = crate::fsutil::read_input(&file, super::inputs::MAX_INPUT_FILE).map_err(|e| {
        Error::new(format!(
            "base URL {shown}: not in base cache {} (expected file {hex}): {}",
            cache.display(),
            crate::process::io_kind(&e)
        ))
    })?;
    if sha256::hex_digest(&bytes) != hex {
        return Err(Error::new(format!(
            "base URL {shown}: integrity check failed: {} does not have sha256 {hex}",
            file.display()
        )));
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::new(format!(
            "base URL {shown}: cached file {} is not valid UTF-8",
            file.display()
        ))
    })?;
    let h = super::schema::parse_harness(&text, Path::new(&shown))?;
    Ok((shown, h, hex))
}

/// Load `child_path` and its whole base chain, merged (deepest ancestor
/// first). Forge and overlays are not resolved here.
pub fn load_with_base(child_path: &Path, src: &BaseSource<'_>) -> Result<Harness, Error> {
    let child_abs = absolute(child_path);
    let child = load_file(child_path)?;
    let mut visited: HashSet<String> = HashSet::new();
    visited.insert(child_abs.to_string_lossy().into_owned());
    let mut links = vec![Link {
        harness: child,
        dir: child_abs.parent().unwrap_or(Path::new("/")).to_path_buf(),
    }];
    let wrap = |e: Error| Error::new(format!("loading base chain: {e}"));
    let root = clean(src.root);
    loop {
        let last = links.last().expect("non-empty");
        let Some((reference, _pos)) = last.harness.base.clone() else {
            break;
        };
        let depth = links.len(); // the child's direct base is depth 1
        if depth > MAX_BASE_DEPTH {
            return Err(wrap(Error::new(format!(
                "exceeded maximum base depth of {MAX_BASE_DEPTH}"
            ))));
        }
        if reference.starts_with("http://") {
            return Err(wrap(Error::new(
                "base URL scheme must be https, got http://".to_string(),
            )));
        }
        if reference.starts_with("https://") {
            let key = url_display(&reference);
            if !visited.insert(key.clone()) {
                return Err(wrap(Error::new(format!("circular base reference: {key}"))));
            }
            let (_, h, _) = load_url_base(&reference, src).map_err(wrap)?;
            let dir = last.dir.clone();
            links.push(Link { harness: h, dir });
            continue;
        }
        let declared = Path::new(&reference);
        let abs = if declared.is_absolute() {
            clean(declared)
        } else {
            clean(&last.dir.join(declared))
        };
        match abs.strip_prefix(&root) {
            Ok(_) => {}
            Err(_) => {
                return Err(wrap(Error::new(format!(
                    "base path {reference:?} escapes workspace root"
                ))))
            }
        }
        let key = abs.to_string_lossy().into_owned();
        if !visited.insert(key.clone()) {
            return Err(wrap(Error::new(format!("circular base reference: {key}"))));
        }
        let h = load_file(&abs).map_err(|e| {
            wrap(Error::new(format!(
                "loading base harness {}: {e}",
                abs.display()
            )))
        })?;
        links.push(Link {
            harness: h,
            dir: abs.parent().unwrap_or(Path::new("/")).to_path_buf(),
        });
    }
    let mut acc = links.pop().expect("non-empty").harness;
    while let Some(mut l) = links.pop() {
        merge_base_into_child(&acc, &mut l.harness);
        acc = l.harness;
    }
    acc.base = None;
    Ok(acc)
}

#[cfg(test)]
mod tests {
    use super::super::schema::parse_harness;
    use super::*;

    fn h(s: &str) -> Harness {
        parse_harness(s, Path::new("t.yaml")).unwrap()
    }

    #[test]
    fn scalars_child_wins_unless_empty() {
        let base = h("agent: a\nrole: r\nslug: s\n");
        let mut child = h("agent: ''\nrole: c\n");
        merge_base_into_child(&base, &mut child);
        assert_eq!(child.agent, "a");
        assert_eq!(child.role, "c");
        assert_eq!(child.slug, "s");
    }

    #[test]
    fn env_submaps_merge_independently() {
        let base = h("env:\n  runner: {A: b, K: b}\n  sandbox: {S: b}\n");
        let mut child = h("env:\n  runner: {K: c, C: c}\n");
        merge_base_into_child(&base, &mut child);
        let env = child.cfg.env.unwrap();
        let r = env.runner.unwrap();
        assert_eq!(
            (r["A"].as_str(), r["K"].as_str(), r["C"].as_str()),
            ("b", "c", "c")
        );
        assert_eq!(env.sandbox.unwrap()["S"], "b");
        // a child null value sets "", it does not remove
        let base = h("env:\n  sandbox: {K: b}\n");
        let mut child = h("env:\n  sandbox: {K: ~}\n");
        merge_base_into_child(&base, &mut child);
        assert_eq!(child.cfg.env.unwrap().sandbox.unwrap()["K"], "");
    }

    #[test]
    fn runner_env_additive() {
        let base = h("runner_env: {A: b, K: b}\n");
        let mut child = h("runner_env: {K: c}\n");
        merge_base_into_child(&base, &mut child);
        let r = child.cfg.runner_env.unwrap();
        assert_eq!((r["A"].as_str(), r["K"].as_str()), ("b", "c"));
        let base = h("agent: x\n");
        let mut child = h("runner_env: {K: c}\n");
        merge_base_into_child(&base, &mut child);
        assert_eq!(child.cfg.runner_env.unwrap().len(), 1);
    }

    #[test]
    fn host_files_by_dest_in_place() {
        let base = h("host_files:\n  - {src: a, dest: /x}\n  - {src: b, dest: /y, expand: true}\n");
        let mut child = h(
            "host_files:\n  - {src: c, dest: /z}\n  - {src: d, dest: /y}\n  - {src: e, dest: /X}\n",
        );
        merge_base_into_child(&base, &mut child);
        let hf = child.cfg.host_files.unwrap();
        let got: Vec<_> = hf
            .iter()
            .map(|f| (f.src.as_str(), f.dest.as_str(), f.expand))
            .collect();
        assert_eq!(
            got,
            [
                ("a", "/x", false),
                ("d", "/y", false),
                ("c", "/z", false),
                ("e", "/X", false)
            ]
        );
    }

    #[test]
    fn validation_loop_replaced_with_preflight_carried() {
        let base = h("validation_loop: {script: s1, schema: sc1, preflight_check: p1}\n");
        let mut child = h("validation_loop: {script: s2}\n");
        merge_base_into_child(&base, &mut child);
        let vl = child.cfg.validation_loop.unwrap();
        assert_eq!(
            (
                vl.script.as_str(),
                vl.schema.as_str(),
                vl.preflight_check.as_str()
            ),
            ("s2", "", "p1")
        );
    }

    #[test]
    fn forge_blocks_key_by_key_and_null_drops() {
        let base = h("forge:\n  github: {env: {runner: {A: b, K: b}}}\n  gitlab: {env: {runner: {G: b}}}\n  jira: {runner_env: {J: b}}\n");
        let mut child = h("forge:\n  github: {env: {runner: {K: c}}}\n  gitlab: ~\n");
        merge_base_into_child(&base, &mut child);
        let f = child.forge.unwrap();
        let gh = f["github"]
            .as_ref()
            .unwrap()
            .env
            .as_ref()
            .unwrap()
            .runner
            .as_ref()
            .unwrap();
        assert_eq!((gh["A"].as_str(), gh["K"].as_str()), ("b", "c"));
        assert_eq!(f["gitlab"], None);
        assert!(f["jira"].is_some());
        // a base forge: {} makes the child's map non-nil
        let base = h("forge: {}\n");
        let mut child = h("agent: a\n");
        merge_base_into_child(&base, &mut child);
        assert!(child.forge.is_some());
    }

    #[test]
    fn overlays_base_first() {
        let base = h("overlays:\n  - {when: 'b'}\n");
        let mut child = h("overlays:\n  - {when: 'c'}\n");
        merge_base_into_child(&base, &mut child);
        let w: Vec<_> = child
            .overlays
            .unwrap()
            .iter()
            .map(|o| o.when.clone())
            .collect();
        assert_eq!(w, ["b", "c"]);
    }

    #[test]
    fn block_wins_over_top() {
        let mut top =
            h("env:\n  runner: {K: top, T: top}\nhost_files:\n  - {src: a, dest: /d}\n").cfg;
        let block = h("env:\n  runner: {K: blk}\nhost_files:\n  - {src: b, dest: /d}\nvalidation_loop: {script: x}\n").cfg;
        apply_block(&mut top, block);
        let r = top.env.as_ref().unwrap().runner.as_ref().unwrap();
        assert_eq!((r["K"].as_str(), r["T"].as_str()), ("blk", "top"));
        assert_eq!(top.host_files.unwrap()[0].src, "b");
        assert_eq!(top.validation_loop.unwrap().script, "x");
    }

    #[test]
    fn clean_paths() {
        assert_eq!(clean(Path::new("/a/b/../c/./d")), PathBuf::from("/a/c/d"));
        assert_eq!(clean(Path::new("/../x")), PathBuf::from("/x"));
    }

    #[test]
    fn url_display_strips_secrets() {
        assert_eq!(
            url_display("https://user:tok@example.com/h.yaml?sig=abc#sha256=00"),
            "https://example.com/h.yaml"
        );
    }
}
