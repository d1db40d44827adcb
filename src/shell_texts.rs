//! Every shell text agentenv generates, checked as shell (a unit test over
//! the text files `include_str!` pulls in): each parses in the shells
//! that run it (`bash -n`, `zsh -n`, `dash -n`, `fish --no-execute`; the
//! OpenCode plugin, JavaScript, in `node --check`), and
//! the generated scripts equal their golden files under `tests/golden/`,
//! so a review sees a change of shell as a shell diff.
//! `AGENTENV_BLESS=1` rewrites the golden files instead of comparing.

use std::path::{Path, PathBuf};

/// The program path the golden scripts are generated with.
const BIN: &str = "/usr/local/bin/agentenv";

/// Each generated text: its golden file's name, the text, and the shells
/// that must parse it.
fn texts() -> Vec<(&'static str, String, &'static [&'static str])> {
    use crate::hook::{integration, Shell};
    let bin = Path::new(BIN);
    vec![
        ("hook.bash", integration(Shell::Bash, bin), &["bash"]),
        ("hook.zsh", integration(Shell::Zsh, bin), &["zsh"]),
        ("hook.fish", integration(Shell::Fish, bin), &["fish"]),
        (
            "agent-functions.sh",
            crate::agent::hook::FUNCTIONS.to_string(),
            &["bash", "zsh", "dash"],
        ),
        (
            "codex-prologue.bash",
            crate::agent::hook::prologue_text(),
            &["bash", "zsh", "dash"],
        ),
        (
            "source.bash",
            crate::session::shell::SOURCE_SCRIPT.to_string(),
            &["bash"],
        ),
        (
            "opencode-plugin.js",
            crate::agent::install::file_text(crate::agent::client::Client::OpenCode, BIN),
            &["node"],
        ),
    ]
}

fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

/// `SHELL`'s parse-only run over `text` (`None`: the shell is missing).
fn parses(shell: &str, text: &str) -> Option<Result<(), String>> {
    let (flag, name) = match shell {
        "fish" => ("--no-execute", "text"),
        // The plugin is an ES module (`import`).
        "node" => ("--check", "text.mjs"),
        _ => ("-n", "text"),
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(name);
    std::fs::write(&file, text).unwrap();
    let out = match std::process::Command::new(shell)
        .arg(flag)
        .arg(&file)
        .output()
    {
        Ok(o) => o,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => panic!("{shell}: {e}"),
    };
    Some(if out.status.success() && out.stderr.is_empty() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    })
}

#[test]
#[cfg_attr(
    any(
        missing = "bash",
        missing = "zsh",
        missing = "dash",
        missing = "fish",
        missing = "node"
    ),
    ignore = "needs bash, zsh, dash, fish and node"
)]
fn every_shell_text_parses_in_its_shells() {
    for (name, text, shells) in texts() {
        for shell in shells {
            match parses(shell, &text) {
                Some(Ok(())) => {}
                Some(Err(e)) => panic!("{name} does not parse in {shell}:\n{e}"),
                None => panic!("{shell} is not on PATH (build.rs said it was)"),
            }
        }
    }
}

#[test]
fn a_broken_text_does_not_parse() {
    // The check can fail: an unclosed `if` is refused by each shell found.
    for (shell, text) in [
        ("bash", "if true; then\n"),
        ("zsh", "if true; then\n"),
        ("dash", "if true; then\n"),
        ("fish", "if true\n"),
        ("node", "export const f = () => {\n"),
    ] {
        if let Some(r) = parses(shell, text) {
            assert!(r.is_err(), "{shell}");
        }
    }
}

#[test]
fn every_generated_script_equals_its_golden_file() {
    let bless = std::env::var_os("AGENTENV_BLESS").is_some_and(|v| v == "1");
    for (name, text, _) in texts() {
        let path = golden(name);
        if bless {
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; AGENTENV_BLESS=1 cargo test --lib shell_texts writes it",
                path.display()
            )
        });
        assert!(
            want == text,
            "{name} differs from {} (AGENTENV_BLESS=1 cargo test --lib shell_texts \
             rewrites it; then review the diff)",
            path.display()
        );
    }
}
