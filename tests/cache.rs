//! `agentenv env --cache`: replay, invalidation by everything the key
//! covers, TTL, safety rules, and `--into` on a hit.
//!
//! Hits are detected by tampering: after a run, every entry in the cache
//! directory is overwritten with a marker. A hit replays the marker
//! verbatim; a miss assembles and prints the real rendering.

mod support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

const MARK: &str = "TAMPERED-ENTRY\n";

struct Tree {
    _dir: tempfile::TempDir,
    w: PathBuf,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let w = dir.path().canonicalize().unwrap();
        fs::create_dir_all(w.join("home/.agents")).unwrap();
        fs::create_dir_all(w.join("proj/.agents")).unwrap();
        fs::write(w.join("home/.agents/env"), "USER_VAR=u\n").unwrap();
        fs::write(w.join("proj/.agents/env"), "PROJ_VAR=p\n").unwrap();
        Tree { _dir: dir, w }
    }

    fn cache_dir(&self) -> PathBuf {
        self.w.join("home/.agents/.cache/env")
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = support::session_cmd(&self.w);
        c.arg("env").arg("--cache").args(args);
        c
    }

    fn run(&self, args: &[&str]) -> String {
        self.run_cmd(self.cmd(args))
    }

    fn run_cmd(&self, mut c: Command) -> String {
        let out = c.output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn entries(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = match fs::read_dir(self.cache_dir()) {
            Ok(rd) => rd.flatten().map(|e| e.path()).collect(),
            Err(_) => Vec::new(),
        };
        v.sort();
        v
    }

    /// Overwrite every entry with the marker (mtime now).
    fn tamper(&self) {
        let es = self.entries();
        assert!(!es.is_empty(), "no cache entry was written");
        for e in es {
            fs::write(&e, MARK).unwrap();
        }
    }
}

fn hit(out: &str) -> bool {
    out == MARK
}

/// Run `a`, tamper, check that `a` again hits and that `b` misses.
fn assert_invalidates(t: &Tree, a: &[&str], b: &[&str]) {
    let _ = fs::remove_dir_all(t.cache_dir());
    let first = t.run(a);
    assert!(!hit(&first));
    t.tamper();
    assert!(hit(&t.run(a)), "same invocation must hit");
    let other = t.run(b);
    assert!(!hit(&other), "{b:?} must miss after {a:?}");
}

#[test]
fn replays_verbatim_and_entries_are_owner_only() {
    let t = Tree::new();
    let real = t.run(&["--format", "export", "--diff"]);
    assert!(real.contains("export PROJ_VAR='p'"), "{real}");
    let es = t.entries();
    assert_eq!(es.len(), 1);
    assert_eq!(fs::read_to_string(&es[0]).unwrap(), real);
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&t.cache_dir()), 0o700);
    assert_eq!(mode(&es[0]), 0o600);
    // A second identical run replays (the same bytes).
    assert_eq!(t.run(&["--format", "export", "--diff"]), real);
    t.tamper();
    assert!(hit(&t.run(&["--format", "export", "--diff"])));
}

#[test]
fn hit_runs_no_layer_and_prints_no_warning() {
    let t = Tree::new();
    // A plain file bash fails (a warning on a miss).
    fs::write(t.w.join("proj/.agents/local.env"), "exit 0\n").unwrap();
    let out = t.cmd(&["--format", "json"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning"));
    t.tamper();
    let out = t.cmd(&["--format", "json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), MARK);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn base_env_var_invalidates() {
    let t = Tree::new();
    let a = ["--format", "export", "--diff"];
    t.run(&a);
    t.tamper();
    let mut c = t.cmd(&a);
    c.env("SOMETHING_NEW", "1");
    assert!(!hit(&t.run_cmd(c)));
    let mut c = t.cmd(&a);
    c.env("LANG", "C");
    assert!(!hit(&t.run_cmd(c)));
}

#[test]
fn cwd_invalidates() {
    let t = Tree::new();
    let a = ["--format", "export"];
    t.run(&a);
    t.tamper();
    fs::create_dir_all(t.w.join("proj/sub")).unwrap();
    let mut c = t.cmd(&a);
    c.current_dir(t.w.join("proj/sub"));
    assert!(!hit(&t.run_cmd(c)));
}

#[test]
fn format_as_given_and_mode_invalidate() {
    let t = Tree::new();
    assert_invalidates(&t, &["--format", "export"], &["--format", "sh"]);
    assert_invalidates(&t, &["--format", "export"], &["--format", "json"]);
    assert_invalidates(
        &t,
        &["--format", "export"],
        &["--format", "export", "--diff"],
    );
    // `auto` resolving to export (the test harness is no shell) shares
    // export's entry.
    let _ = fs::remove_dir_all(t.cache_dir());
    t.run(&["--format", "export"]);
    t.tamper();
    assert!(hit(&t.run(&["--format", "auto"])));
    assert!(hit(&t.run(&[])));
}

#[test]
fn scope_flags_and_timeout_invalidate() {
    let t = Tree::new();
    assert_invalidates(&t, &["--format", "export"], &["--format", "export", "-g"]);
    assert_invalidates(
        &t,
        &["--format", "export"],
        &["--format", "export", "--timeout", "7"],
    );
    let other = t.w.join("other-store");
    fs::create_dir_all(&other).unwrap();
    // --agents-dir moves the cache too; a tampered entry under the default
    // store is not consulted.
    let first = t.run(&[
        "--format",
        "export",
        "--agents-dir",
        other.to_str().unwrap(),
    ]);
    assert!(!hit(&first));
    assert!(other.join(".cache/env").is_dir());
}

#[test]
fn touching_an_env_file_invalidates() {
    let t = Tree::new();
    let a = ["--format", "export"];
    t.run(&a);
    t.tamper();
    let f = t.w.join("home/.agents/env");
    let later = SystemTime::now() + Duration::from_secs(3);
    fs::File::options()
        .write(true)
        .open(&f)
        .unwrap()
        .set_modified(later)
        .unwrap();
    assert!(!hit(&t.run(&a)));
}

#[test]
fn creating_a_missing_candidate_invalidates() {
    for name in [
        "proj/.agents/local.env",
        "proj/.agents/pre.local.env",
        "home/.agents/pre.env",
        "home/.agents/env.py",
        "proj/.agents/pre.env.py",
    ] {
        let t = Tree::new();
        let a = ["--format", "json", "--diff"];
        t.run(&a);
        t.tamper();
        // An empty file: it changes nothing in the output, only the key.
        fs::write(t.w.join(name), "").unwrap();
        assert!(!hit(&t.run(&a)), "{name}");
    }
}

#[test]
fn lib_dirs_and_files_below_them_invalidate() {
    let t = Tree::new();
    let a = ["--format", "json"];
    t.run(&a);
    t.tamper();
    fs::create_dir_all(t.w.join("home/.agents/lib")).unwrap();
    assert!(!hit(&t.run(&a)), "creating lib");
    t.tamper();
    assert!(hit(&t.run(&a)));
    fs::create_dir_all(t.w.join("home/.agents/lib/pkg")).unwrap();
    fs::write(t.w.join("home/.agents/lib/pkg/mod.py"), "x = 1\n").unwrap();
    assert!(!hit(&t.run(&a)), "adding a file below lib");
}

#[test]
fn a_new_overlay_invalidates() {
    let t = Tree::new();
    let a = ["--format", "json"];
    t.run(&a);
    t.tamper();
    fs::create_dir_all(t.w.join("home/.agents/overlays/tools")).unwrap();
    assert!(!hit(&t.run(&a)));
}

fn set_mtime(p: &Path, t: SystemTime) {
    fs::File::options()
        .write(true)
        .open(p)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

#[test]
fn ttl_and_future_slack() {
    let t = Tree::new();
    let a = ["--format", "export"];
    t.run(&a);
    t.tamper();
    let e = t.entries().remove(0);
    let now = SystemTime::now();
    set_mtime(&e, now - Duration::from_secs(290));
    assert!(hit(&t.run(&a)), "290 s old");
    set_mtime(&e, now + Duration::from_secs(1));
    assert!(hit(&t.run(&a)), "1 s in the future");
    set_mtime(&e, now + Duration::from_secs(5));
    assert!(!hit(&t.run(&a)), "5 s in the future");
    t.tamper();
    let e = t.entries().remove(0);
    set_mtime(&e, now - Duration::from_secs(301));
    assert!(!hit(&t.run(&a)), "301 s old");
}

#[test]
fn stale_entries_are_cleaned_up() {
    let t = Tree::new();
    t.run(&["--format", "export"]);
    let old = t.entries().remove(0);
    set_mtime(&old, SystemTime::now() - Duration::from_secs(400));
    t.run(&["--format", "json"]);
    assert!(!old.exists());
    assert_eq!(t.entries().len(), 1);
}

#[test]
fn unsafe_cache_dir_is_not_used() {
    let t = Tree::new();
    let a = ["--format", "export"];
    let real = t.run(&a);
    t.tamper();
    fs::set_permissions(t.cache_dir(), fs::Permissions::from_mode(0o777)).unwrap();
    let out = t.cmd(&a).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), real);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("warning") && err.contains("uncached"), "{err}");
    // Nothing was stored into it.
    assert!(t
        .entries()
        .iter()
        .all(|e| fs::read_to_string(e).unwrap() == MARK));
}

#[test]
fn unwritable_cache_is_silent() {
    let t = Tree::new();
    fs::create_dir_all(t.w.join("home/.agents")).unwrap();
    fs::write(t.w.join("home/.agents/.cache"), "a file").unwrap();
    let out = t.cmd(&["--format", "export"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8(out.stdout).unwrap().contains("PROJ_VAR"));
}

#[test]
fn into_is_written_on_a_hit_and_nothing_is_printed() {
    let t = Tree::new();
    let target = t.w.join("out/env.sh");
    let tgt = target.to_str().unwrap();
    // Miss: writes the file, nothing on stdout.
    assert_eq!(t.run(&["--format", "export", "--into", tgt]), "");
    let miss = fs::read_to_string(&target).unwrap();
    assert!(miss.contains("\nexport PROJ_VAR='p'\n"), "{miss}");
    // Hit, untampered: the same bytes, still nothing on stdout (the
    // reference prints the entry on stdout here and leaves the file alone).
    fs::remove_file(&target).unwrap();
    let out = t
        .cmd(&["--format", "export", "--into", tgt])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty(), "a hit printed on stdout");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fs::read_to_string(&target).unwrap(), miss);
    assert_eq!(
        fs::metadata(&target).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // It really was a hit: a tampered entry is what lands in the file.
    t.tamper();
    assert_eq!(t.run(&["--format", "export", "--into", tgt]), "");
    assert_eq!(
        fs::read_to_string(&target).unwrap(),
        format!(": dotagents-env-begin\n{MARK}: dotagents-env-end\n")
    );
    // `auto` with --into shares the export entry.
    assert_eq!(t.run(&["--into", tgt]), "");
    assert!(fs::read_to_string(&target).unwrap().contains("TAMPERED"));
}

#[test]
fn into_with_a_non_export_format_fails_before_anything_runs() {
    let t = Tree::new();
    let target = t.w.join("hook.sh");
    fs::write(&target, "keep\n").unwrap();
    let args = ["--format", "json", "--into", target.to_str().unwrap()];
    for _ in 0..2 {
        let out = t.cmd(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(out.stdout.is_empty());
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep\n");
        // Refused before the cache or any layer: nothing was stored that a
        // later run could print.
        assert!(t.entries().is_empty());
    }
}
