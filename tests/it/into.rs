//! `agentenv env --into FILE`.

use crate::support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use support::{Run, Tree};

/// A project store with two variables; B's value holds a U+2028.
fn tree() -> Tree {
    Tree::session()
        .dir("home/.agents")
        .file("proj/.agents/env", "export A='first'\nB='x\u{2028}y'\n")
}

/// `agentenv env ARGS`.
fn env(t: &Tree, args: &[&str]) -> Run {
    t.agentenv(["env"]).args(args)
}

/// `agentenv env --format export --into $W/REL`.
fn into(t: &Tree, rel: &str) -> Run {
    env(t, &["--format", "export", "--into", &t.arg(rel)])
}

fn mode(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

#[test]
fn writes_the_owned_block_and_keeps_other_lines() {
    let t = tree().file(
        "hook/env.sh",
        "other=1\r\n: dotagents-env-begin\nexport OLD='o'\n: dotagents-env-end\nlast=2\n",
    );
    let f = t.path("hook/env.sh");
    fs::set_permissions(&f, fs::Permissions::from_mode(0o640)).unwrap();
    env(
        &t,
        &[
            "--diff",
            "--format",
            "export",
            "--into",
            &t.arg("hook/env.sh"),
        ],
    )
    .stdout("")
    .run();
    let rendered = env(&t, &["--diff", "--format", "export"]).run().stdout;
    let body: String = rendered
        .split('\n')
        .filter(|l| !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    let expected = format!("other=1\nlast=2\n: dotagents-env-begin\n{body}: dotagents-env-end\n");
    assert_eq!(t.read("hook/env.sh"), expected);
    assert_eq!(mode(&f), 0o640);
    // The U+2028 inside B's value stays inside its line (LF-only split).
    assert!(expected.contains("export B='x\u{2028}y'\n"));
}

#[test]
fn creates_parents_and_is_idempotent() {
    let t = tree();
    let args = ["--format", "sh", "--into", &t.arg("a/b/c/env.sh")];
    env(&t, &args).run();
    let once = t.read("a/b/c/env.sh");
    assert!(once.starts_with(": dotagents-env-begin\n"));
    assert!(once.ends_with(": dotagents-env-end\n"));
    env(&t, &args).run();
    assert_eq!(t.read("a/b/c/env.sh"), once);
}

#[test]
fn only_the_export_format() {
    let t = tree().file("env.sh", "keep\n");
    for (fmt, canon) in [("json", "json"), ("env", "dotenv"), ("pwsh", "powershell")] {
        env(&t, &["--format", fmt, "--into", &t.arg("env.sh")])
            .status(1)
            .stdout("")
            .stderr_has(format!(
                "error: --into writes the export format only, not '{canon}'"
            ))
            .run();
        assert_eq!(t.read("env.sh"), "keep\n");
    }
}

#[test]
fn through_a_symlink() {
    let t = tree().file("real.sh", "x\n");
    std::os::unix::fs::symlink(t.path("real.sh"), t.path("link.sh")).unwrap();
    into(&t, "link.sh").run();
    assert!(fs::symlink_metadata(t.path("link.sh"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(t.read("real.sh").starts_with("x\n: dotagents-env-begin\n"));
}

#[test]
fn unwritable_target_is_an_error() {
    let t = tree().dir("adir");
    into(&t, "adir")
        .status(1)
        .stderr_has("--into")
        .stderr_lacks("first")
        .run();
}

/// `agentenv env ARGS` started by a real fish (its parent process, which
/// `--format auto` looks at), in the deterministic session environment.
fn from_fish(t: &Tree, args: &str) -> Run {
    let fish = support::tool("fish").expect("fish");
    // Not the last command, so fish does not exec it: fish stays the parent.
    t.command(fish)
        .with(|c| {
            c.env_clear()
                .env("HOME", t.path("home"))
                .env("PATH", "/usr/bin:/bin")
                .env("LANG", "C.UTF-8")
                .env("AGENTS_PYTHON", support::pinned_python())
                .env("AGENTS_SYSTEM_ROOT", t.path("no-system"));
        })
        .cwd("proj")
        .args(["--no-config", "-c"])
        .arg(format!(
            "{} env {args}; true",
            support::agentenv_bin().display()
        ))
}

#[test]
#[cfg_attr(missing = "fish", ignore = "needs fish")]
fn auto_format_from_fish_is_fish() {
    from_fish(&tree(), "--diff").stdout_has("set -gx A ").run();
}

#[test]
#[cfg_attr(missing = "fish", ignore = "needs fish")]
fn auto_format_with_into_is_export_whatever_the_shell() {
    let t = tree();
    from_fish(&t, &format!("--diff --into {}", t.arg("claude-env")))
        .stdout("")
        .stderr("")
        .run();
    let body = t.read("claude-env");
    assert!(body.contains("export A='first'\n"), "{body}");
}

#[test]
fn an_explicit_fish_format_with_into_is_an_error() {
    let t = tree();
    env(
        &t,
        &["--diff", "--format", "fish", "--into", &t.arg("claude-env")],
    )
    .status(1)
    .stderr_has("not 'fish'")
    .run();
}

#[test]
fn a_new_file_is_0600_in_new_0700_dirs() {
    let t = tree();
    into(&t, "new/sub/env.sh").stderr("").run();
    assert_eq!(mode(&t.path("new/sub/env.sh")), 0o600);
    assert_eq!(mode(&t.path("new/sub")), 0o700);
    assert_eq!(mode(&t.path("new")), 0o700);
    // The temp file and rename leave no other file behind.
    let names: Vec<_> = fs::read_dir(t.path("new/sub"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("env.sh")]);
}

/// A 0644 `env.sh` in the root.
fn readable_target() -> Tree {
    let t = tree().file("env.sh", "");
    fs::set_permissions(t.path("env.sh"), fs::Permissions::from_mode(0o644)).unwrap();
    t
}

#[test]
fn an_existing_readable_file_keeps_its_mode_with_one_warning() {
    let t = readable_target();
    let err = into(&t, "env.sh")
        .stderr_has("$W/env.sh is readable by group or others")
        .run()
        .stderr;
    assert_eq!(err.matches("warning").count(), 1, "{err}");
    assert_eq!(mode(&t.path("env.sh")), 0o644);
}

#[test]
fn quiet_silences_the_readable_file_warning() {
    let t = readable_target();
    env(
        &t,
        &["-q", "--format", "export", "--into", &t.arg("env.sh")],
    )
    .any_status()
    .stderr("")
    .run();
}

#[test]
fn a_private_file_gives_no_warning() {
    let t = readable_target();
    fs::set_permissions(t.path("env.sh"), fs::Permissions::from_mode(0o600)).unwrap();
    into(&t, "env.sh").any_status().stderr("").run();
    assert_eq!(mode(&t.path("env.sh")), 0o600);
}

const NOBODY: u32 = 65534;

fn am_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// A tree with a sticky world-writable directory `share` like /tmp, owned
/// by root, and "nobody"'s 0666 file `att/f`.
fn sticky_share() -> Tree {
    let t = tree().dir("share").file("att/f", "");
    fs::set_permissions(t.path("share"), fs::Permissions::from_mode(0o1777)).unwrap();
    fs::set_permissions(t.path("att/f"), fs::Permissions::from_mode(0o666)).unwrap();
    lchown(&t.path("att/f"), NOBODY);
    t
}

/// A symlink at `$W/link` to `target`, owned by `uid` (or by us).
fn link(t: &Tree, link: &str, target: &Path, uid: Option<u32>) -> PathBuf {
    let l = t.path(link);
    std::os::unix::fs::symlink(target, &l).unwrap();
    if let Some(uid) = uid {
        lchown(&l, uid);
    }
    l
}

fn lchown(p: &Path, uid: u32) {
    std::os::unix::fs::lchown(p, Some(uid), Some(uid)).unwrap();
}

#[test]
#[cfg_attr(missing = "root", ignore = "needs root")]
fn another_users_symlink_in_a_sticky_dir_is_refused() {
    if !am_root() {
        support::skip("foreign symlink test", "needs root to chown a symlink");
        return;
    }
    let t = sticky_share();
    link(&t, "share/envfile", &t.path("att/f"), Some(NOBODY));
    into(&t, "share/envfile")
        .status(1)
        .stderr_has("symlink owned by another user in a sticky world-writable directory")
        .run();
    assert_eq!(t.read("att/f"), "");
}

#[test]
#[cfg_attr(missing = "root", ignore = "needs root")]
fn another_users_dangling_symlink_in_a_sticky_dir_is_refused() {
    if !am_root() {
        support::skip("foreign symlink test", "needs root to chown a symlink");
        return;
    }
    // Nothing is created where it points.
    let t = sticky_share();
    link(&t, "share/dangling", &t.path("att/created"), Some(NOBODY));
    into(&t, "share/dangling").status(1).run();
    assert!(!t.path("att/created").exists());
}

#[test]
#[cfg_attr(missing = "root", ignore = "needs root")]
fn own_symlink_in_a_sticky_dir_is_followed() {
    if !am_root() {
        support::skip("foreign symlink test", "needs root to chown a symlink");
        return;
    }
    // The kernel's rule.
    let t = sticky_share();
    link(&t, "share/mine", &t.path("mine.sh"), None);
    into(&t, "share/mine").run();
    assert!(t.read("mine.sh").contains("export A="));
}

#[test]
#[cfg_attr(missing = "root", ignore = "needs root")]
fn a_symlink_owned_by_the_sticky_dirs_owner_is_followed() {
    if !am_root() {
        support::skip("foreign symlink test", "needs root to chown a symlink");
        return;
    }
    let t = sticky_share();
    lchown(&t.path("share"), NOBODY);
    link(&t, "share/by-owner", &t.path("mine.sh"), Some(NOBODY));
    into(&t, "share/by-owner").run();
    assert!(t.path("mine.sh").exists());
}

#[test]
#[cfg_attr(missing = "root", ignore = "needs root")]
fn another_users_symlink_elsewhere_is_followed() {
    if !am_root() {
        support::skip("foreign symlink test", "needs root to chown a symlink");
        return;
    }
    // Outside a sticky world-writable directory, as before.
    let t = sticky_share();
    link(&t, "plain-link", &t.path("mine.sh"), Some(NOBODY));
    into(&t, "plain-link").run();
}

#[test]
#[cfg_attr(missing = "root", ignore = "needs root")]
fn a_target_owned_by_another_user_is_replaced_0600() {
    if !am_root() {
        support::skip("foreign target test", "needs root to chown a file");
        return;
    }
    let t = tree().file("theirs.sh", "keep\n");
    let f = t.path("theirs.sh");
    fs::set_permissions(&f, fs::Permissions::from_mode(0o666)).unwrap();
    lchown(&f, NOBODY);
    into(&t, "theirs.sh").run();
    assert_eq!(mode(&f), 0o600);
    assert!(t.read("theirs.sh").starts_with("keep\n"));
}
