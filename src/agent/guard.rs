//! The file-tool guard: a file tool (Read, Edit, Grep, Glob, …) or a patch
//! (Codex's `apply_patch`) aimed at a store is denied. Where the stores are
//! is the session's own rule ([`crate::session::store_roots`]: `~`
//! expanded, the default system store included), plus any directory named
//! `.agents` (a project's store), before or after resolving links.

use super::client::Client;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The paths a guarded tool's input names; `None` when the client's
/// `tool` is not a file or patch tool (a shell command is the rewrite's).
pub fn guards<'a>(
    client: Client,
    tool: &str,
    input: &'a Map<String, Value>,
) -> Option<Vec<&'a str>> {
    let facts = client.facts();
    let text = |k: &str| input.get(k).and_then(Value::as_str);
    if facts.patch_tools.contains(&tool) {
        return Some(text("command").map(patch_paths).unwrap_or_default());
    }
    if !facts.file_tools.contains(&tool) {
        return None;
    }
    // Glob's `pattern` is a path pattern; Grep's is a regex (its `glob`
    // filters names under `path`).
    let keys: &[&str] = if tool == "Glob" {
        &["path", "pattern"]
    } else {
        &["file_path", "notebook_path", "path", "glob"]
    };
    Some(keys.iter().filter_map(|k| text(k)).collect())
}

/// The files a patch (Codex's `apply_patch` format) adds, updates, deletes
/// or moves to.
fn patch_paths(patch: &str) -> Vec<&str> {
    const HEADS: [&str; 4] = [
        "*** Add File: ",
        "*** Update File: ",
        "*** Delete File: ",
        "*** Move to: ",
    ];
    patch
        .lines()
        .filter_map(|l| HEADS.iter().find_map(|h| l.strip_prefix(h)).map(str::trim))
        .collect()
}

/// Where the stores are, for the deny rule.
pub struct Guard {
    roots: Vec<PathBuf>,
    home: Option<PathBuf>,
}

impl Guard {
    pub fn new(base: &crate::core::Env) -> Guard {
        let mut roots = crate::session::store_roots(base);
        let canon: Vec<PathBuf> = roots
            .iter()
            .filter_map(|r| std::fs::canonicalize(r).ok())
            .collect();
        roots.extend(canon);
        let home = crate::core::get(base, "HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from);
        Guard { roots, home }
    }

    /// Whether `p` (relative to `cwd`, `~/` the session's home; a glob
    /// pattern counts by its literal part) is in a store: under a store
    /// root, or through a directory named `.agents`, before or after
    /// resolving links.
    pub fn covers(&self, cwd: &Path, p: &str) -> bool {
        let p = p.trim_start_matches('!');
        let expanded = match (p.strip_prefix("~/"), &self.home) {
            (Some(rest), Some(h)) => h.join(rest),
            _ => PathBuf::from(p),
        };
        let abs = cwd.join(expanded);
        let lexical = normalize(&abs);
        let mut candidates = vec![lexical.clone()];
        // The longest existing prefix, resolved (a link into a store).
        let mut probe = lexical.clone();
        loop {
            if let Ok(c) = std::fs::canonicalize(&probe) {
                let rest = lexical.strip_prefix(&probe).unwrap_or(Path::new(""));
                candidates.push(c.join(rest));
                break;
            }
            if !probe.pop() {
                break;
            }
        }
        candidates.iter().any(|c| {
            c.components().any(|x| x.as_os_str() == ".agents")
                || self.roots.iter().any(|r| c.starts_with(r))
        })
    }
}

/// The reason a file tool is denied a process's environment or memory.
pub const PROC_DENY_REASON: &str = "agentenv: /proc/PID/environ, mem and cmdline hold a process's environment and memory (the secret values of the commands the agent runs); the file tools may not read them. Use the variable by name in a shell command (e.g. \"$GH_TOKEN\").";

/// Whether `p` (relative to `cwd`, before or after resolving links;
/// a pattern counts by its text) names a process's `environ`, `mem` or
/// `cmdline` under `/proc` (`/proc/PID/…`, `/proc/self/…`,
/// `/proc/PID/task/TID/…`), or searches `/proc` for one of them.
pub fn proc_secret(cwd: &Path, p: &str) -> bool {
    let abs = normalize(&cwd.join(p));
    let mut candidates = vec![abs.clone()];
    if let Ok(c) = std::fs::canonicalize(&abs) {
        candidates.push(c);
    }
    // A pattern or a search under /proc (Grep/Glob `path: /proc`, a glob
    // `*/environ`): by its words.
    let worded = ["environ", "mem", "cmdline"];
    let pidish = |w: &str| {
        w == "self"
            || w == "thread-self"
            || (!w.is_empty() && w.bytes().all(|b| b.is_ascii_digit()))
    };
    candidates.iter().any(|c| {
        let mut parts = c.components().map(|x| x.as_os_str().to_string_lossy());
        if parts.nth(1).as_deref() != Some("proc") {
            return false;
        }
        let rest: Vec<String> = parts.map(|x| x.into_owned()).collect();
        match rest.first() {
            // All of /proc searched.
            None => true,
            Some(first) if pidish(first) => {
                rest.len() == 1
                    || (rest[1] == "task" && rest.len() <= 3)
                    || rest[1..]
                        .iter()
                        .any(|w| worded.iter().any(|n| w.contains(n)))
            }
            Some(_) => false,
        }
    }) || (p.contains("/proc/")
        && p.contains(['*', '?', '[', '{'])
        && worded.iter().any(|n| p.contains(n)))
}

/// `.` and `..` taken out lexically.
pub(crate) fn normalize(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &Path)]) -> crate::core::Env {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), v.as_os_str().to_owned()))
            .collect()
    }

    #[test]
    fn process_environments_are_recognised() {
        let cwd = Path::new("/home/u/p");
        for p in [
            "/proc/1234/environ",
            "/proc/self/environ",
            "/proc/thread-self/mem",
            "/proc/1234/cmdline",
            "/proc/1234/task/1235/environ",
            "/proc/1234/task/1235",
            "/proc/1234",
            "/proc",
            "/proc/",
            "../../../../proc/99/environ",
            "/proc/*/environ",
            "/proc/[0-9]*/cmdline",
        ] {
            assert!(proc_secret(cwd, p), "{p}");
        }
        for p in [
            "/proc/cpuinfo",
            "/proc/meminfo",
            "/proc/1234/status",
            "/home/u/project/memo.txt",
            "environ.md",
            "src/proc/mem.rs",
        ] {
            assert!(!proc_secret(cwd, p), "{p}");
        }
    }

    #[test]
    fn store_paths_are_recognised() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        std::fs::create_dir_all(home.join(".agents")).unwrap();
        std::fs::create_dir_all(t.path().join("p/.agents")).unwrap();
        std::os::unix::fs::symlink(home.join(".agents"), t.path().join("p/link")).unwrap();
        let s = Guard::new(&env(&[("HOME", &home)]));
        let cwd = t.path().join("p");
        for p in [
            ".agents/env",
            "./.agents/local.env",
            "sub/../.agents",
            "link/env",
            "link",
            "~/.agents/env",
        ] {
            assert!(s.covers(&cwd, p), "{p}");
        }
        assert!(s.covers(
            &cwd,
            &home.join(".agents/.cache/env/x").display().to_string()
        ));
        for p in ["src/main.rs", "agents/env", ".agentsx/env", "/etc/passwd"] {
            assert!(!s.covers(&cwd, p), "{p}");
        }
    }

    #[test]
    fn the_default_system_store_and_tilde_roots_are_stores() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        let cwd = t.path().join("p");
        // The default system store, though it does not exist here.
        let s = Guard::new(&env(&[("HOME", &home)]));
        assert!(s.covers(&cwd, "/etc/agents/env"));
        // `~`-spelled roots are the session's home.
        let s = Guard::new(&env(&[
            ("HOME", &home),
            ("AGENTS_SYSTEM_ROOT", Path::new("~/sys")),
            ("AGENTS_HOME", Path::new("~/mine")),
        ]));
        for p in ["sys/env", "mine/env", "mine/.cache/x"] {
            assert!(s.covers(&cwd, &home.join(p).display().to_string()), "{p}");
        }
        assert!(!s.covers(&cwd, "/etc/agents/env"), "moved by the variable");
    }

    #[test]
    fn a_patch_names_each_file_it_touches() {
        let p = "*** Begin Patch\n*** Add File: a\n+x\n*** Update File: b\n*** Move to: c\n@@\n-*** Delete File: no\n*** Delete File: d \n*** End Patch\n";
        assert_eq!(patch_paths(p), ["a", "b", "c", "d"]);
    }
}
