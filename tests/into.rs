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
