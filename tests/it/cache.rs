//! `agentenv env --cache`: replay, invalidation by everything the key
//! covers, TTL, safety rules, and `--into` on a hit.
//!
//! Hits are detected by tampering: after a run, every entry in the cache
//! directory is overwritten with a marker. A hit replays the marker
//! verbatim; a miss assembles and prints the real rendering.

use crate::support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};
use support::{Run, Tree};

const MARK: &str = "TAMPERED-ENTRY\n";

/// A user store and a project store, one variable each.
fn tree() -> Tree {
    Tree::session()
        .file("home/.agents/env", "USER_VAR=u\n")
        .file("proj/.agents/env", "PROJ_VAR=p\n")
}

fn cache_dir(t: &Tree) -> PathBuf {
    t.path("home/.agents/.cache/env")
}

/// `agentenv env --cache ARGS`.
fn cached(t: &Tree, args: &[&str]) -> Run {
    t.agentenv(["env", "--cache"]).args(args)
}

/// The stdout of a successful `env --cache ARGS`.
fn out(t: &Tree, args: &[&str]) -> String {
    cached(t, args).run().stdout
}

fn entries(t: &Tree) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = match fs::read_dir(cache_dir(t)) {
        Ok(rd) => rd.flatten().map(|e| e.path()).collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}

/// Overwrite every entry with the marker (mtime now).
fn tamper(t: &Tree) {
    let es = entries(t);
    assert!(!es.is_empty(), "no cache entry was written");
    for e in es {
        fs::write(&e, MARK).unwrap();
    }
}

fn hit(out: &str) -> bool {
    out == MARK
}

/// A tree whose `env --cache ARGS` entry has been tampered with.
fn tampered(args: &[&str]) -> Tree {
    let t = tree();
    out(&t, args);
    tamper(&t);
    t
}

/// Run `a`, tamper, check that `a` again hits and that `b` misses.
fn assert_invalidates(a: &[&str], b: &[&str]) {
    let t = tree();
    assert!(!hit(&out(&t, a)));
    tamper(&t);
    assert!(hit(&out(&t, a)), "same invocation must hit");
    assert!(!hit(&out(&t, b)), "{b:?} must miss after {a:?}");
}

fn mode(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn replays_verbatim_and_entries_are_owner_only() {
    let t = tree();
    let real = out(&t, &["--format", "export", "--diff"]);
    assert!(real.contains("export PROJ_VAR='p'"), "{real}");
    let es = entries(&t);
    assert_eq!(es.len(), 1);
    assert_eq!(fs::read_to_string(&es[0]).unwrap(), real);
    assert_eq!(mode(&cache_dir(&t)), 0o700);
    assert_eq!(mode(&es[0]), 0o600);
    // A second identical run replays (the same bytes).
    assert_eq!(out(&t, &["--format", "export", "--diff"]), real);
    tamper(&t);
    assert!(hit(&out(&t, &["--format", "export", "--diff"])));
}

#[test]
fn hit_runs_no_layer_and_prints_no_warning() {
    // A plain file bash fails (a warning on a miss).
    let t = tree().file("proj/.agents/local.env", "exit 0\n");
    cached(&t, &["--format", "json"])
        .any_status()
        .stderr_has("warning")
        .run();
    tamper(&t);
    cached(&t, &["--format", "json"])
        .stdout(MARK)
        .stderr("")
        .run();
}

#[test]
fn a_new_base_env_var_invalidates() {
    let a = ["--format", "export", "--diff"];
    let t = tampered(&a);
    let o = cached(&t, &a).env("SOMETHING_NEW", "1").run();
    assert!(!hit(&o.stdout));
}

#[test]
fn a_changed_base_env_var_invalidates() {
    let a = ["--format", "export", "--diff"];
    let t = tampered(&a);
    let o = cached(&t, &a).env("LANG", "C").run();
    assert!(!hit(&o.stdout));
}

#[test]
fn cwd_invalidates() {
    let a = ["--format", "export"];
    let t = tampered(&a);
    t.mkdir("proj/sub");
    let o = cached(&t, &a).cwd("proj/sub").run();
    assert!(!hit(&o.stdout));
}

#[test]
fn format_as_given_invalidates() {
    assert_invalidates(&["--format", "export"], &["--format", "sh"]);
    assert_invalidates(&["--format", "export"], &["--format", "json"]);
}

#[test]
fn diff_mode_invalidates() {
    assert_invalidates(&["--format", "export"], &["--format", "export", "--diff"]);
}

#[test]
fn auto_resolving_to_export_shares_its_entry() {
    // The test harness is no shell: `auto` is export.
    let t = tampered(&["--format", "export"]);
    assert!(hit(&out(&t, &["--format", "auto"])));
    assert!(hit(&out(&t, &[])));
}

#[test]
fn global_flag_invalidates() {
    assert_invalidates(&["--format", "export"], &["--format", "export", "-g"]);
}

#[test]
fn timeout_invalidates() {
    assert_invalidates(
        &["--format", "export"],
        &["--format", "export", "--timeout", "7"],
    );
}

#[test]
fn agents_dir_moves_the_cache() {
    // A tampered entry under the default store is not consulted.
    let t = tampered(&["--format", "export"]);
    let other = t.mkdir("other-store");
    let first = out(
        &t,
        &[
            "--format",
            "export",
            "--agents-dir",
            other.to_str().unwrap(),
        ],
    );
    assert!(!hit(&first));
    assert!(other.join(".cache/env").is_dir());
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
fn touching_an_env_file_invalidates() {
    let a = ["--format", "export"];
    let t = tampered(&a);
    set_mtime(
        &t.path("home/.agents/env"),
        SystemTime::now() + Duration::from_secs(3),
    );
    assert!(!hit(&out(&t, &a)));
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
        let a = ["--format", "json", "--diff"];
        let t = tampered(&a);
        // An empty file: it changes nothing in the output, only the key.
        t.write(name, "");
        assert!(!hit(&out(&t, &a)), "{name}");
    }
}

#[test]
fn creating_the_lib_dir_invalidates() {
    let a = ["--format", "json"];
    let t = tampered(&a);
    t.mkdir("home/.agents/lib");
    assert!(!hit(&out(&t, &a)), "creating lib");
}

#[test]
fn a_file_below_lib_invalidates() {
    let a = ["--format", "json"];
    let t = tree().dir("home/.agents/lib");
    out(&t, &a);
    tamper(&t);
    assert!(hit(&out(&t, &a)));
    t.write("home/.agents/lib/pkg/mod.py", "x = 1\n");
    assert!(!hit(&out(&t, &a)), "adding a file below lib");
}

#[test]
fn a_new_overlay_invalidates() {
    let a = ["--format", "json"];
    let t = tampered(&a);
    t.mkdir("home/.agents/overlays/tools");
    assert!(!hit(&out(&t, &a)));
}

/// Whether the tampered entry, its mtime moved by `shift`, still hits.
fn hits_with_mtime(shift: impl Fn(SystemTime) -> SystemTime) -> bool {
    let a = ["--format", "export"];
    let t = tampered(&a);
    set_mtime(&entries(&t)[0], shift(SystemTime::now()));
    hit(&out(&t, &a))
}

#[test]
fn an_entry_290_s_old_hits() {
    assert!(hits_with_mtime(|now| now - Duration::from_secs(290)));
}

#[test]
fn an_entry_301_s_old_misses() {
    assert!(!hits_with_mtime(|now| now - Duration::from_secs(301)));
}

#[test]
fn an_entry_1_s_in_the_future_hits() {
    assert!(hits_with_mtime(|now| now + Duration::from_secs(1)));
}

#[test]
fn an_entry_5_s_in_the_future_misses() {
    assert!(!hits_with_mtime(|now| now + Duration::from_secs(5)));
}

#[test]
fn stale_entries_are_cleaned_up() {
    let t = tree();
    out(&t, &["--format", "export"]);
    let old = entries(&t).remove(0);
    set_mtime(&old, SystemTime::now() - Duration::from_secs(400));
    out(&t, &["--format", "json"]);
    assert!(!old.exists());
    assert_eq!(entries(&t).len(), 1);
}

#[test]
fn unsafe_cache_dir_is_not_used() {
    let a = ["--format", "export"];
    let t = tree();
    let real = out(&t, &a);
    tamper(&t);
    fs::set_permissions(cache_dir(&t), fs::Permissions::from_mode(0o777)).unwrap();
    cached(&t, &a)
        .stdout(real)
        .stderr_has("warning")
        .stderr_has("uncached")
        .run();
    // Nothing was stored into it.
    assert!(entries(&t)
        .iter()
        .all(|e| fs::read_to_string(e).unwrap() == MARK));
}

#[test]
fn unwritable_cache_is_silent() {
    let t = tree().file("home/.agents/.cache", "a file");
    cached(&t, &["--format", "export"])
        .stderr("")
        .stdout_has("PROJ_VAR")
        .run();
}

/// `env --cache --format export --into $W/out/env.sh`
fn into(t: &Tree) -> Run {
    cached(t, &["--format", "export", "--into", &t.arg("out/env.sh")])
}

#[test]
fn into_on_a_miss_writes_the_file_and_prints_nothing() {
    let t = tree();
    into(&t).stdout("").run();
    let miss = t.read("out/env.sh");
    assert!(miss.contains("\nexport PROJ_VAR='p'\n"), "{miss}");
}

#[test]
fn into_on_a_hit_writes_the_same_bytes_and_prints_nothing() {
    let t = tree();
    into(&t).run();
    let miss = t.read("out/env.sh");
    // The reference prints the entry on stdout here and leaves the file
    // alone.
    fs::remove_file(t.path("out/env.sh")).unwrap();
    into(&t).stdout("").stderr("").run();
    assert_eq!(t.read("out/env.sh"), miss);
    assert_eq!(mode(&t.path("out/env.sh")), 0o600);
}

#[test]
fn into_on_a_hit_writes_the_entry() {
    // It really is a hit: a tampered entry is what lands in the file.
    let t = tree();
    into(&t).run();
    tamper(&t);
    into(&t).stdout("").run();
    assert_eq!(
        t.read("out/env.sh"),
        format!(": dotagents-env-begin\n{MARK}: dotagents-env-end\n")
    );
    // `auto` with --into shares the export entry.
    cached(&t, &["--into", &t.arg("out/env.sh")])
        .stdout("")
        .run();
    assert!(t.read("out/env.sh").contains("TAMPERED"));
}

#[test]
fn into_with_a_non_export_format_fails_before_anything_runs() {
    let t = tree().file("hook.sh", "keep\n");
    for _ in 0..2 {
        cached(&t, &["--format", "json", "--into", &t.arg("hook.sh")])
            .status(1)
            .stdout("")
            .run();
        assert_eq!(t.read("hook.sh"), "keep\n");
        // Refused before the cache or any layer: nothing was stored that a
        // later run could print.
        assert!(entries(&t).is_empty());
    }
}

// ------------------------------------- what the key leaves out (--diff)

/// `env --diff --cache` with the per-session variables of one shell.
fn in_session(t: &Tree, n: u32) -> Run {
    cached(t, &["--format", "export", "--diff"])
        .env("OLDPWD", format!("/somewhere/{n}"))
        .env("SHLVL", n.to_string())
        .env("_", format!("/usr/bin/tool{n}"))
        .env("CLAUDE_ENV_FILE", format!("/tmp/claude-{n}/env"))
        .env("TERM_SESSION_ID", format!("w0t0p0:{n}"))
        .env("TMUX_PANE", format!("%{n}"))
}

#[test]
fn per_session_variables_do_not_invalidate_a_diff() {
    let t = tree();
    assert!(!hit(&in_session(&t, 1).run().stdout));
    tamper(&t);
    // Re-entering from another directory, a nested shell, a new Claude
    // Code session: the same answer, no layer runs.
    assert!(hit(&in_session(&t, 2).run().stdout));
    // Without the variables at all, too.
    assert!(hit(&out(&t, &["--format", "export", "--diff"])));
}

#[test]
fn a_full_rendering_prints_them_so_they_still_invalidate_it() {
    let a = ["--format", "export"];
    let t = tampered(&a);
    let o = cached(&t, &a).env("OLDPWD", "/elsewhere").run();
    assert!(!hit(&o.stdout));
    assert!(o.stdout.contains("OLDPWD"), "{}", o.stdout);
}

#[test]
fn a_session_variable_an_env_file_mentions_still_invalidates() {
    // A plain file that expands it, an env.py that reads it.
    for (file, body) in [
        ("proj/.agents/env", "PROJ_VAR=p\nFROM=$OLDPWD\n"),
        (
            "home/.agents/env.py",
            "import json, os\nprint(json.dumps({'FROM': os.environ.get('OLDPWD', '')}))\n",
        ),
    ] {
        let t = tree();
        t.write(file, body);
        let a = ["--format", "export", "--diff"];
        let first = cached(&t, &a).env("OLDPWD", "/usr").run().stdout;
        assert!(first.contains("FROM='/usr'"), "{first}");
        tamper(&t);
        let o = cached(&t, &a).env("OLDPWD", "/tmp").run();
        assert!(!hit(&o.stdout), "{file}: an entry made with another OLDPWD");
        assert!(o.stdout.contains("FROM='/tmp'"), "{}", o.stdout);
        // The other session variables are still left out (the file does
        // not name SHLVL; OLDPWD inside a longer name would not count).
        tamper(&t);
        let o = cached(&t, &a).env("OLDPWD", "/tmp").env("SHLVL", "9").run();
        assert!(hit(&o.stdout), "{file}: SHLVL is not read: {}", o.stdout);
    }
}

#[test]
fn home_pwd_and_the_scope_still_invalidate_a_diff() {
    let a = ["--format", "export", "--diff"];
    let t = tampered(&a);
    let ah = t.path("home/.agents");
    // HOME elsewhere, the same user store.
    let o = cached(&t, &a)
        .env("AGENTS_HOME", &ah)
        .env("HOME", t.path("proj"))
        .run();
    assert!(!hit(&o.stdout));
    let o = cached(&t, &a).env("PWD", t.path("proj")).run();
    assert!(!hit(&o.stdout), "PWD");
    let o = cached(&t, &["--format", "export", "--diff", "-g"]).run();
    assert!(!hit(&o.stdout), "-g");
    let o = cached(&t, &["--format", "export", "--diff", "--public-only"]).run();
    assert!(!hit(&o.stdout), "--public-only");
}

#[test]
fn verbose_miss_names_what_changed_never_a_value() {
    let a = ["--format", "export", "--diff"];
    let t = tree();
    cached(&t, &a)
        .env("API_URL", "https://first.example/v1")
        .run();
    t.write("proj/.agents/env", "PROJ_VAR=p2\n");
    let o = cached(&t, &["-v", "--format", "export", "--diff"])
        .env("API_URL", "https://second.example/v2")
        .env("SHLVL", "7")
        .run();
    let line = o
        .stderr
        .lines()
        .find(|l| l.contains("cache miss"))
        .unwrap_or_else(|| panic!("no miss line: {}", o.stderr));
    assert!(line.contains("$API_URL"), "{line}");
    assert!(
        line.contains(&format!("file {}", t.path("proj/.agents/env").display())),
        "{line}"
    );
    assert!(
        !line.contains("SHLVL"),
        "a session variable is not in the key: {line}"
    );
    for v in ["first.example", "second.example", "p2"] {
        assert!(!o.stderr.contains(v), "a value in stderr: {}", o.stderr);
    }
}

#[test]
fn a_new_claude_session_and_a_re_entered_project_run_no_env_py() {
    let t = tree().file(
        "home/.agents/env.py",
        "import json, os\nopen(os.environ['HOME'] + '/runs', 'a').write('x')\nprint(json.dumps({'PY': '1'}))\n",
    );
    let runs = || {
        fs::read_to_string(t.path("home/runs"))
            .unwrap_or_default()
            .len()
    };
    // Three Claude Code session starts, each with its own env file.
    for n in 1..=3 {
        let env_file = t.path(&format!("claude-{n}.env"));
        fs::write(&env_file, "").unwrap();
        t.agentenv(["hook", "claude", "session-start"])
            .env("CLAUDE_ENV_FILE", &env_file)
            .env("CLAUDE_PROJECT_DIR", t.path("proj"))
            .env("SHLVL", n.to_string())
            .stdin(r#"{"hook_event_name":"SessionStart","session_id":"s"}"#)
            .run();
        assert!(fs::read_to_string(&env_file)
            .unwrap()
            .contains("AGENTS_HOME"));
    }
    assert_eq!(runs(), 1, "env.py ran for each session start");
    // The shell hook entering the project from three directories.
    let before = runs();
    for from in ["/", "/tmp", "/usr"] {
        t.agentenv(["hook", "bash", "--load"])
            .env("OLDPWD", from)
            .env("SHLVL", "2")
            .run();
    }
    assert_eq!(runs() - before, 1, "env.py runs for three entries");
}
