//! `agentenv env --into FILE`.

mod support;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Output;

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
        fs::write(
            w.join("proj/.agents/env"),
            "export A='first'\nB='x\u{2028}y'\n",
        )
        .unwrap();
        Tree { _dir: dir, w }
    }

    fn run(&self, args: &[&str]) -> Output {
        support::session_cmd(&self.w)
            .arg("env")
            .args(args)
            .output()
            .unwrap()
    }
}

#[test]
fn writes_the_owned_block_and_keeps_other_lines() {
    let t = Tree::new();
    let f = t.w.join("hook/env.sh");
    fs::create_dir_all(f.parent().unwrap()).unwrap();
    fs::write(
        &f,
        "other=1\r\n: dotagents-env-begin\nexport OLD='o'\n: dotagents-env-end\nlast=2\n",
    )
    .unwrap();
    fs::set_permissions(&f, fs::Permissions::from_mode(0o640)).unwrap();
    let out = t.run(&[
        "--diff",
        "--format",
        "export",
        "--into",
        f.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let stdout = t.run(&["--diff", "--format", "export"]).stdout;
    let rendered = String::from_utf8(stdout).unwrap();
    let body: String = rendered
        .split('\n')
        .filter(|l| !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    let expected = format!("other=1\nlast=2\n: dotagents-env-begin\n{body}: dotagents-env-end\n");
    assert_eq!(fs::read_to_string(&f).unwrap(), expected);
    assert_eq!(
        fs::metadata(&f).unwrap().permissions().mode() & 0o777,
        0o640
    );
    // The U+2028 inside B's value stays inside its line (LF-only split).
    assert!(expected.contains("export B='x\u{2028}y'\n"));
}

#[test]
fn creates_parents_and_is_idempotent() {
    let t = Tree::new();
    let f = t.w.join("a/b/c/env.sh");
    let args = ["--format", "sh", "--into", f.to_str().unwrap()];
    assert_eq!(t.run(&args).status.code(), Some(0));
    let once = fs::read_to_string(&f).unwrap();
    assert!(once.starts_with(": dotagents-env-begin\n"));
    assert!(once.ends_with(": dotagents-env-end\n"));
    assert_eq!(t.run(&args).status.code(), Some(0));
    assert_eq!(fs::read_to_string(&f).unwrap(), once);
}

#[test]
fn only_the_export_format() {
    let t = Tree::new();
    let f = t.w.join("env.sh");
    fs::write(&f, "keep\n").unwrap();
    for (fmt, canon) in [("json", "json"), ("env", "dotenv"), ("pwsh", "powershell")] {
        let out = t.run(&["--format", fmt, "--into", f.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1));
        assert!(out.stdout.is_empty());
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains(&format!(
                "error: --into writes the export format only, not '{canon}'"
            )),
            "{err}"
        );
        assert_eq!(fs::read_to_string(&f).unwrap(), "keep\n");
    }
}

#[test]
fn through_a_symlink() {
    let t = Tree::new();
    let real = t.w.join("real.sh");
    fs::write(&real, "x\n").unwrap();
    let link = t.w.join("link.sh");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = t.run(&["--format", "export", "--into", link.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(fs::read_to_string(&real)
        .unwrap()
        .starts_with("x\n: dotagents-env-begin\n"));
}

#[test]
fn unwritable_target_is_an_error() {
    let t = Tree::new();
    let d = t.w.join("adir");
    fs::create_dir_all(&d).unwrap();
    let out = t.run(&["--format", "export", "--into", d.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("--into") && !err.contains("first"), "{err}");
}

fn mode(p: &std::path::Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

/// `agentenv env ARGS` started by a real fish (its parent process, which
/// `--format auto` looks at), in the deterministic session environment.
fn from_fish(t: &Tree, fish: &std::path::Path, args: &str) -> Output {
    let w = &t.w;
    std::process::Command::new(fish)
        .env_clear()
        .env("HOME", w.join("home"))
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .env("AGENTS_PYTHON", support::pinned_python())
        .env("AGENTS_SYSTEM_ROOT", w.join("no-system"))
        .current_dir(w.join("proj"))
        .arg("--no-config")
        .arg("-c")
        // Not the last command, so fish does not exec it: fish stays the parent.
        .arg(format!(
            "{} env {args}; true",
            support::agentenv_bin().display()
        ))
        .output()
        .unwrap()
}

#[test]
#[cfg_attr(missing = "fish", ignore = "needs fish")]
fn auto_format_with_into_is_export_whatever_the_shell() {
    let Some(fish) = support::tool("fish") else {
        return;
    };
    let t = Tree::new();
    // From fish, `auto` alone renders fish ...
    let out = from_fish(&t, &fish, "--diff");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("set -gx A "), "{text}");
    // ... but with --into the file gets the export rendering, exit 0.
    let f = t.w.join("claude-env");
    let out = from_fish(&t, &fish, &format!("--diff --into {}", f.display()));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    let body = fs::read_to_string(&f).unwrap();
    assert!(body.contains("export A='first'\n"), "{body}");
    // An explicit fish format stays an error.
    let out = t.run(&["--diff", "--format", "fish", "--into", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not 'fish'"));
}

#[test]
fn a_new_file_is_0600_in_new_0700_dirs() {
    let t = Tree::new();
    let f = t.w.join("new/sub/env.sh");
    let out = t.run(&["--format", "export", "--into", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(mode(&f), 0o600);
    assert_eq!(mode(&t.w.join("new/sub")), 0o700);
    assert_eq!(mode(&t.w.join("new")), 0o700);
    // Same under a permissive umask-independent path: the temp file and
    // rename leave no other file behind.
    let names: Vec<_> = fs::read_dir(t.w.join("new/sub"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("env.sh")]);
}

#[test]
fn an_existing_readable_file_keeps_its_mode_with_one_warning() {
    let t = Tree::new();
    let f = t.w.join("env.sh");
    fs::write(&f, "").unwrap();
    fs::set_permissions(&f, fs::Permissions::from_mode(0o644)).unwrap();
    let out = t.run(&["--format", "export", "--into", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(mode(&f), 0o644);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.matches("warning").count(), 1, "{err}");
    assert!(
        err.contains(&format!("{} is readable by group or others", f.display())),
        "{err}"
    );
    // -q silences it; a private file gives no warning.
    let out = t.run(&["-q", "--format", "export", "--into", f.to_str().unwrap()]);
    assert!(out.stderr.is_empty());
    fs::set_permissions(&f, fs::Permissions::from_mode(0o600)).unwrap();
    let out = t.run(&["--format", "export", "--into", f.to_str().unwrap()]);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(mode(&f), 0o600);
}

const NOBODY: u32 = 65534;

fn am_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// A sticky world-writable directory like /tmp, owned by root.
fn sticky_dir(t: &Tree) -> PathBuf {
    let d = t.w.join("share");
    fs::create_dir(&d).unwrap();
    fs::set_permissions(&d, fs::Permissions::from_mode(0o1777)).unwrap();
    d
}

fn lchown(p: &std::path::Path, uid: u32) {
    std::os::unix::fs::lchown(p, Some(uid), Some(uid)).unwrap();
}

#[test]
#[cfg_attr(missing = "root", ignore = "needs root")]
fn another_users_symlink_in_a_sticky_dir_is_refused() {
    if !am_root() {
        support::skip("foreign symlink test", "needs root to chown a symlink");
        return;
    }
    let t = Tree::new();
    let share = sticky_dir(&t);
    // The attacker's 0666 file and a link to it, both owned by "nobody".
    let att = t.w.join("att");
    fs::create_dir(&att).unwrap();
    let victim_target = att.join("f");
    fs::write(&victim_target, "").unwrap();
    fs::set_permissions(&victim_target, fs::Permissions::from_mode(0o666)).unwrap();
    lchown(&victim_target, NOBODY);
    let link = share.join("envfile");
    std::os::unix::fs::symlink(&victim_target, &link).unwrap();
    lchown(&link, NOBODY);
    let out = t.run(&["--format", "export", "--into", link.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("symlink owned by another user in a sticky world-writable directory"),
        "{err}"
    );
    assert_eq!(fs::read_to_string(&victim_target).unwrap(), "");
    // A dangling link is refused too (nothing created where it points).
    let dangling = share.join("dangling");
    let nowhere = att.join("created");
    std::os::unix::fs::symlink(&nowhere, &dangling).unwrap();
    lchown(&dangling, NOBODY);
    let out = t.run(&["--format", "export", "--into", dangling.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!nowhere.exists());
    // The user's own link there is followed (the kernel's rule).
    let mine = share.join("mine");
    let my_target = t.w.join("mine.sh");
    std::os::unix::fs::symlink(&my_target, &mine).unwrap();
    let out = t.run(&["--format", "export", "--into", mine.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(fs::read_to_string(&my_target)
        .unwrap()
        .contains("export A="));
    // So is a link owned by the directory's owner.
    fs::remove_file(&my_target).unwrap();
    lchown(&share, NOBODY);
    let by_owner = share.join("by-owner");
    std::os::unix::fs::symlink(&my_target, &by_owner).unwrap();
    lchown(&by_owner, NOBODY);
    let out = t.run(&["--format", "export", "--into", by_owner.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(my_target.exists());
    // Outside a sticky world-writable directory another user's link is
    // followed as before.
    let plain = t.w.join("plain-link");
    std::os::unix::fs::symlink(&my_target, &plain).unwrap();
    lchown(&plain, NOBODY);
    let out = t.run(&["--format", "export", "--into", plain.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
#[cfg_attr(missing = "root", ignore = "needs root")]
fn a_target_owned_by_another_user_is_replaced_0600() {
    if !am_root() {
        support::skip("foreign target test", "needs root to chown a file");
        return;
    }
    let t = Tree::new();
    let f = t.w.join("theirs.sh");
    fs::write(&f, "keep\n").unwrap();
    fs::set_permissions(&f, fs::Permissions::from_mode(0o666)).unwrap();
    lchown(&f, NOBODY);
    let out = t.run(&["--format", "export", "--into", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(mode(&f), 0o600);
    assert!(fs::read_to_string(&f).unwrap().starts_with("keep\n"));
}
