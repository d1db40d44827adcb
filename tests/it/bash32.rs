//! docs/platforms.md: macOS's `/bin/bash` is bash 3.2. Every bash text agentenv
//! generates — the shell hook and what its `--load` prints, the functions
//! of a rewritten agent command, the layer runner that sources plain env
//! files (the reference's own script, kept byte for byte) — is taken from
//! the binary and searched for the bash-4-only constructs of the issue.
//! The agent functions need bash 4.1's `{var}>` descriptors: under an
//! older bash they stop before any of that, with a message (the command
//! runs without the sensitive variables), which is checked too.

use crate::support::Tree;

/// (what, a regex of it): bash 4 or later only.
const BASH4_ONLY: &[(&str, &str)] = &[
    (
        "an associative array",
        r"\b(declare|local|typeset)\s+-[a-zA-Z]*A",
    ),
    (
        "a case change ${x,,} / ${x^^}",
        r"\$\{[#!]?[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?(,|\^)",
    ),
    ("mapfile / readarray", r"\b(mapfile|readarray)\b"),
    (
        "$EPOCHREALTIME / $EPOCHSECONDS",
        r"\$\{?EPOCH(REALTIME|SECONDS)",
    ),
    ("coproc", r"\bcoproc\b"),
    ("a nameref", r"\b(declare|local|typeset)\s+-[a-zA-Z]*n"),
    ("a case fall-through ;& / ;;&", r";;?&"),
    ("|& (stderr into a pipe)", r"\|&"),
    (
        "a fractional read -t",
        r"\bread\b[^\n;|&]*-t\s*[0-9]*\.[0-9]",
    ),
];

/// The texts that must not need bash 4 at all (the hook, its load
/// output, the layer runner): also no `{var}>` descriptors, `$BASHPID`,
/// `declare -g` or `${x@Q}`.
const BASH41_ONLY: &[(&str, &str)] = &[
    ("a {var}> descriptor", r"\{[A-Za-z_][A-Za-z0-9_]*\}[<>]"),
    ("$BASHPID", r"\$\{?BASHPID"),
    ("declare -g", r"\b(declare|typeset)\s+-[a-zA-Z]*g"),
    ("a ${x@Q} transformation", r"\$\{[^}]*@[QEPAaKkUuL]\}"),
];

fn find(text: &str, what: &str, list: &[(&str, &str)]) -> Vec<String> {
    use std::io::Write;
    // Comment lines blanked (the line numbers stay).
    let code: String = text
        .lines()
        .map(|l| {
            if l.trim_start().starts_with('#') {
                ""
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut found = Vec::new();
    for (name, re) in list {
        // One `grep -nE` per pattern (`\b`, `\s`: GNU grep, as in CI).
        let mut child = std::process::Command::new("grep")
            .args(["-nE", "--", re])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(code.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.code().is_some_and(|c| c < 2), "grep: {re}");
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            found.push(format!("{what}:{name}: {line}"));
        }
    }
    found
}

/// The bash texts, from the binary.
fn texts() -> Vec<(String, String)> {
    let t = Tree::session()
        .file(
            "home/.agents/env",
            "A=1\nexport B=\"x y\"\nC='it'\"'\"'s'\n",
        )
        .file(
            "home/.agents/agentenv.toml",
            "[vars]\nA = { public = true }\n",
        )
        .file("home/.agents/bin/.keep", "");
    let hook = t.agentenv(["hook", "bash"]).run().stdout_w();
    let load = t
        .agentenv(["hook", "bash", "--load", "--pid", "1"])
        .env("PWD", t.path("proj"))
        .run()
        .stdout_w();
    let env_file = t.path("claude-env.sh");
    t.agentenv(["hook", "claude", "session-start"])
        .env("CLAUDE_ENV_FILE", &env_file)
        .env("AGENTENV_NO_DAEMON", "1")
        .run();
    let functions = std::fs::read_to_string(&env_file).unwrap();
    let runner = agentenv::internals::SOURCE_SCRIPT.to_string();
    vec![
        ("the shell hook".into(), hook),
        ("the hook's --load output".into(), load),
        ("the agent functions".into(), functions),
        ("the layer runner".into(), runner),
    ]
}

#[test]
fn no_generated_bash_text_needs_bash_4() {
    let texts = texts();
    let mut found = Vec::new();
    for (what, text) in &texts {
        assert!(!text.is_empty(), "{what}");
        found.extend(find(text, what, BASH4_ONLY));
        if what != "the agent functions" {
            found.extend(find(text, what, BASH41_ONLY));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
    // The search finds what it looks for (each pattern on a sample).
    let samples = [
        "declare -A m",
        "echo ${x,,}",
        "mapfile -t a",
        "echo $EPOCHREALTIME",
        "coproc cat",
        "local -n r=x",
        "a) echo ;;&",
        "ls |& cat",
        "read -t 0.5 x",
    ];
    for (sample, (name, _)) in samples.iter().zip(BASH4_ONLY) {
        assert_eq!(find(sample, "s", BASH4_ONLY).len(), 1, "{name}: {sample}");
    }
    for sample in [
        "exec {fd}>&1",
        "echo $BASHPID",
        "declare -g x",
        "echo ${x@Q}",
    ] {
        assert_eq!(find(sample, "s", BASH41_ONLY).len(), 1, "{sample}");
    }
    // The agent functions use `{var}>` descriptors only after a guard
    // that sends bash < 4.1 away with a message.
    let functions = &texts[2].1;
    let guard = functions
        .find("BASH_VERSINFO[0]}\" -lt 4")
        .expect("the functions check bash's version");
    let first_fd = functions.find("{__ae_").unwrap();
    let begin = functions.find("__agentenv_begin() {").unwrap();
    assert!(begin < guard, "the guard is in __agentenv_begin");
    assert!(
        functions[guard..].contains("bash older than 4.1"),
        "{functions}"
    );
    // (`{__ae_` occurs in the helpers above, which only the guarded
    // __agentenv_begin calls.)
    assert!(first_fd < begin);
}
