//! The published crate holds what its sources pull in: every file an
//! `include_str!`/`include_bytes!`/`include!` in `src/` names is in
//! `cargo package --list` (a text left out of Cargo.toml's `include`
//! builds here and fails for everyone who installs the crate). The build
//! script is left out on purpose (build.rs: it only marks the tools the
//! tests need): cargo then publishes `build = false`, so nothing in `src/`
//! may need what it sets — no `env!` of a variable it sets (only
//! `option_env!`), no `cfg` of its own outside a test's `cfg_attr`.

use std::path::{Component, Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `cargo package --list`: the files of the published crate.
fn package_list() -> Vec<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args(["package", "--list", "--allow-dirty", "--offline"])
        .current_dir(root())
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo package --list: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `a/b/../c` → `a/c` (no file system access).
fn normal(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// The files the include macros of `text` (the file at `file`) name,
/// relative to the crate root; `Err` for an argument that is not a plain
/// string literal (this test could not follow it).
fn includes(file: &Path, text: &str) -> Vec<Result<String, String>> {
    let mut found = Vec::new();
    for mac in ["include_str!(", "include_bytes!(", "include!("] {
        for (at, _) in text.match_indices(mac) {
            // A mention in a comment or a string is not a use.
            let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let before = &text[line_start..at];
            if before.contains("//") || before.matches('"').count() % 2 == 1 {
                continue;
            }
            let rest = text[at + mac.len()..].trim_start();
            let literal = rest
                .strip_prefix('"')
                .and_then(|r| r.split_once('"'))
                .map(|(lit, _)| lit)
                .filter(|lit| !lit.contains('\\'));
            let line = text[..at].lines().count().max(1);
            found.push(match literal {
                Some(lit) => {
                    let target = normal(&file.parent().unwrap().join(lit));
                    Ok(target
                        .strip_prefix(root())
                        .unwrap_or(&target)
                        .display()
                        .to_string())
                }
                None => Err(format!(
                    "{}:{line}: {mac}…) without a plain string literal",
                    file.display()
                )),
            });
        }
    }
    found
}

#[test]
fn every_file_the_sources_include_is_in_the_package() {
    let list = package_list();
    assert!(
        list.iter().any(|f| f == "src/lib.rs"),
        "not a package list: {list:?}"
    );
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    files.sort();
    let mut seen = 0;
    let mut missing = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for inc in includes(f, &text) {
            match inc {
                Ok(target) => {
                    seen += 1;
                    assert!(root().join(&target).is_file(), "{target}: no such file");
                    if !list.contains(&target) {
                        missing.push(format!("{target} (from {})", f.display()));
                    }
                }
                Err(why) => missing.push(why),
            }
        }
    }
    // The hook's shell texts, the session's scripts, the completions' block.
    assert!(seen >= 9, "found only {seen} include macros in src/");
    assert!(
        missing.is_empty(),
        "left out of the published crate (Cargo.toml's include): {missing:?}"
    );
}

#[test]
fn the_sources_need_nothing_only_the_build_script_sets() {
    let list = package_list();
    if list.iter().any(|f| f == "build.rs") {
        return; // Published with the crate: whatever it sets is there.
    }
    let build = std::fs::read_to_string(root().join("build.rs")).unwrap();
    let set = |what: &str| -> Vec<String> {
        build
            .match_indices(what)
            .map(|(at, _)| {
                build[at + what.len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect::<String>()
            })
            .filter(|n| !n.is_empty())
            .collect()
    };
    let envs = set("rustc-env=");
    let cfgs = set("rustc-cfg=");
    assert!(
        envs.contains(&"AGENTENV_PORTABLE_BUILD".to_string()) && cfgs.contains(&"missing".into()),
        "build.rs changed: {envs:?} {cfgs:?}"
    );
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut bad = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let at = format!("{}:{}", f.display(), i + 1);
            for e in &envs {
                if line.contains(&format!("env!(\"{e}\")"))
                    && !line.contains(&format!("option_env!(\"{e}\")"))
                {
                    bad.push(format!("{at}: env!(\"{e}\") (only build.rs sets it)"));
                }
            }
            for c in &cfgs {
                let uses = [format!("cfg({c}"), format!("{c} = \""), format!("({c},")];
                if !uses.iter().any(|u| line.contains(u.as_str()))
                    || line.trim_start().starts_with("//")
                {
                    continue;
                }
                // Only a test's `#[cfg_attr(…, ignore = …)]` may read it.
                let window = lines[i.saturating_sub(10)..(i + 10).min(lines.len())].join("\n");
                if !(window.contains("#[cfg_attr(") && window.contains("ignore =")) {
                    bad.push(format!("{at}: cfg {c} outside a test's cfg_attr"));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "the published crate has no build script (build = false), but: {bad:?}"
    );
}
