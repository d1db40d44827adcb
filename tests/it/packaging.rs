//! Packaging: the man pages render without a warning, and option values
//! complete in bash, zsh, fish and PowerShell.
//!
//! bash and fish are asked for completions the way they ask at a prompt
//! (bash calls `_agentenv` with COMP_WORDS set, fish runs `complete -C`).
//! zsh needs a terminal: an interactive zsh in a zsh/zpty pseudo-terminal
//! gets each line and a Tab, and its listing is read. PowerShell is not on
//! the test machines, so its script is checked as text.

use crate::support;

use std::process::Command;
use support::agentenv;

/// The completion script for `shell`.
fn script(shell: &str) -> String {
    agentenv(["completions", shell]).run().stdout
}

/// (command line before the cursor, words that must be offered, words that
/// must not).
const CASES: &[(&str, &[&str], &[&str])] = &[
    (
        "agentenv env --format ",
        &[
            "auto",
            "export",
            "dotenv",
            "powershell",
            "cmd",
            "fish",
            "json",
            "ini",
            "yaml",
            "github",
            "docker",
        ],
        &["pwsh", "sh"],
    ),
    ("agentenv explain --format ", &["text", "json"], &[]),
    (
        "agentenv dotenv parse .env --format ",
        &["export", "github", "docker"],
        &[],
    ),
    (
        "agentenv harness resolve h.yaml --forge ",
        &["github", "gitlab", "jira"],
        &[],
    ),
    (
        "agentenv harness sandbox-env h.yaml --format ",
        &["export", "dotenv"],
        &["json"],
    ),
    (
        "agentenv launch --platform ",
        &["linux", "darwin", "win32"],
        &[],
    ),
    (
        "agentenv completions ",
        &["bash", "zsh", "fish", "powershell"],
        &[],
    ),
    ("agentenv hook ", &["bash", "zsh", "fish"], &[]),
    ("agentenv status --format ", &["text", "json"], &[]),
];

fn check(shell: &str, line: &str, got: &[String], want: &[&str], not: &[&str]) {
    for w in want {
        assert!(
            got.iter().any(|g| g == w),
            "{shell}: `{line}` does not offer {w}: {got:?}"
        );
    }
    for w in not {
        assert!(
            !got.iter().any(|g| g == w),
            "{shell}: `{line}` offers {w}: {got:?}"
        );
    }
}

#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn bash_completes_values() {
    if support::tool("bash").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agentenv.bash");
    std::fs::write(&path, script("bash")).unwrap();
    for (line, want, not) in CASES {
        let prog = format!(
            "source {}; COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}; \
             read -ra COMP_WORDS <<< \"$COMP_LINE\"; COMP_WORDS+=(''); \
             COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 )); \
             _agentenv agentenv '' \"${{COMP_WORDS[COMP_CWORD-1]}}\"; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            path.display()
        );
        let out = Command::new("bash")
            .args(["--noprofile", "--norc", "-c", &prog])
            .output()
            .unwrap();
        assert!(out.status.success(), "bash: {line}");
        let got: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(String::from)
            .collect();
        check("bash", line, &got, want, not);
    }
}

#[test]
#[cfg_attr(missing = "fish", ignore = "needs fish")]
fn fish_completes_values() {
    if support::tool("fish").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agentenv.fish");
    std::fs::write(&path, script("fish")).unwrap();
    for (line, want, not) in CASES {
        let prog = format!("source {}; complete -C '{line}'", path.display());
        let out = Command::new("fish")
            .args(["--no-config", "-c", &prog])
            .env("HOME", dir.path())
            .env("XDG_CONFIG_HOME", dir.path())
            .env("XDG_DATA_HOME", dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "fish: {line}");
        let got: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| l.split('\t').next().unwrap().to_string())
            .collect();
        check("fish", line, &got, want, not);
    }
}

/// Drop terminal escapes (CSI sequences), backspaces and carriage returns.
fn strip_terminal(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => {
                if chars.peek() == Some(&'[') {
                    chars.next();
                    for c in chars.by_ref() {
                        if c.is_ascii_alphabetic() || c == '~' {
                            break;
                        }
                    }
                }
            }
            '\x08' => {
                out.pop();
            }
            '\r' => out.push('\n'),
            c => out.push(c),
        }
    }
    out
}

#[test]
#[cfg_attr(missing = "zsh", ignore = "needs zsh")]
fn zsh_completes_values() {
    let text = script("zsh");
    for want in [
        ":F:(auto cmd dotenv export fish ini json powershell yaml docker github)",
        ":P:(github gitlab jira)",
        ":PLATFORM:(linux darwin win32)",
        ":shell -- bash, zsh or fish:(bash zsh fish)",
        ":F:(export dotenv github docker)",
    ] {
        assert!(text.contains(want), "zsh script lacks {want}");
    }
    if support::tool("zsh").is_none() {
        return;
    }
    // An interactive zsh in zsh's own pseudo-terminal (zsh/zpty): type each
    // line and a Tab, read the listing it prints (bounded: 10 s a case).
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    std::fs::write(dir.path().join("_agentenv"), &text).unwrap();
    let bin_dir = support::agentenv_bin()
        .parent()
        .unwrap()
        .display()
        .to_string();
    let mut prog = format!(
        r#"zmodload zsh/zpty
zpty -b z 'PS1="> " zsh -f -i'
zpty -w z 'fpath=({d} $fpath); autoload -U compinit; compinit -u -d {d}/dump; PATH={bin_dir}:$PATH; LISTMAX=10000; unsetopt beep'
sleep 0.3
while zpty -r -t z chunk; do :; done
run_case() {{
  local line=$1; shift
  local out="" chunk ok w
  zpty -w -n z "$line"$'\t'
  local deadline=$(( SECONDS + 10 ))
  while (( SECONDS < deadline )); do
    while zpty -r -t z chunk; do out+=$chunk; done
    ok=1
    for w in "$@"; do [[ $out == *$w* ]] || {{ ok=0; break; }}; done
    (( ok )) && break
    sleep 0.05
  done
  print -r -- "@@CASE $line"
  print -r -- "$out"
  zpty -w -n z $'\x15'
  sleep 0.1
  while zpty -r -t z chunk; do :; done
}}
"#
    );
    for (line, want, _) in CASES {
        prog.push_str(&format!("run_case '{line}' {}\n", want.join(" ")));
    }
    prog.push_str("zpty -d z\n");
    let out = Command::new("zsh")
        .args(["-f", "-c", &prog])
        .env("HOME", dir.path())
        .env("TERM", "xterm")
        .output()
        .unwrap();
    assert!(out.status.success(), "zsh: {out:?}");
    let all = strip_terminal(&String::from_utf8_lossy(&out.stdout));
    for (line, want, not) in CASES {
        let at = all
            .find(&format!("@@CASE {line}"))
            .unwrap_or_else(|| panic!("zsh: no output for `{line}`"));
        let rest = &all[at + 7 + line.len()..];
        let section = &rest[..rest.find("@@CASE ").unwrap_or(rest.len())];
        let got: Vec<String> = section.split_whitespace().map(String::from).collect();
        check("zsh", line, &got, want, not);
    }
}

#[test]
fn powershell_script_has_a_value_table_before_the_switch() {
    let text = script("powershell");
    let table = text.find("$agentenvValues = @{").expect("value table");
    let switch = text.find("$completions = @(switch ($command) {").unwrap();
    assert!(table < switch);
    for want in [
        "'agentenv;env;--format' = @('auto', 'cmd', 'dotenv', 'export', 'fish', 'ini', 'json', \
         'powershell', 'yaml', 'docker', 'github')",
        "'agentenv;harness;resolve;--forge' = @('github', 'gitlab', 'jira')",
        "'agentenv;launch;--platform' = @('linux', 'darwin', 'win32')",
        "'agentenv;hook;*' = @('bash', 'zsh', 'fish')",
        "'agentenv;completions;*' = @('bash', 'zsh', 'fish', 'powershell')",
    ] {
        assert!(text.contains(want), "PowerShell script lacks {want}");
    }
    // Braces balance (a cheap check that the inserted block is whole).
    assert_eq!(text.matches('{').count(), text.matches('}').count());
}

/// A new option called `--format`, `--forge` or `--platform` (or a SHELL
/// positional) must get its words, or completion silently offers files.
#[test]
fn every_choice_option_has_words() {
    let cmd = agentenv::internals::cli::completion_command();
    fn walk(c: &clap::Command, path: &str) {
        for a in c.get_arguments() {
            let id = a.get_id().as_str();
            if ["format", "forge", "platform", "shell"].contains(&id) && !a.is_hide_set() {
                assert!(
                    a.get_possible_values().iter().any(|v| !v.is_hide_set()),
                    "{path} {id}: no words to complete"
                );
            }
        }
        for s in c.get_subcommands() {
            walk(s, &format!("{path} {}", s.get_name()));
        }
    }
    walk(&cmd, "agentenv");
}

/// groff with every warning on; `Err` holds what it printed.
fn groff_warnings(page: &std::path::Path) -> String {
    let out = Command::new("groff")
        .args(["-man", "-ww", "-z"])
        .arg(page)
        .output()
        .unwrap();
    assert!(out.status.success(), "groff {}", page.display());
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
#[cfg_attr(missing = "groff", ignore = "needs groff")]
fn man_pages_render_without_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let all = dir.path().join("all.1");
    let text = agentenv(["man"]).run().stdout;
    assert!(
        text.is_ascii(),
        "non-ASCII input makes groff warn without -k"
    );
    assert!(text.starts_with(".ie \\n(.g .ds Aq \\(aq") || text.contains(".TH AGENTENV 1"));
    std::fs::write(&all, &text).unwrap();
    let root = agentenv::internals::cli::command();
    let commands = agentenv::internals::cli::all_commands(&root);
    for c in commands.iter().skip(1) {
        let name = c.get_bin_name().unwrap();
        assert!(
            text.contains(&format!(".SS \"{name}\"")),
            "the one page lacks {name}"
        );
    }

    let pages = dir.path().join("man1");
    let p = pages.to_str().unwrap();
    agentenv(["man", "--dir", p]).run();
    let mut names: Vec<String> = std::fs::read_dir(&pages)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let mut want: Vec<String> = commands
        .iter()
        .map(|c| format!("{}.1", agentenv::internals::cli::page_name(c)))
        .collect();
    want.sort();
    assert_eq!(names, want);
    assert!(names.contains(&"agentenv-harness-resolve.1".to_string()));
    let env_page = std::fs::read_to_string(pages.join("agentenv-env.1")).unwrap();
    assert!(env_page.contains(".SH EXAMPLES"));
    assert!(env_page.contains("\\-\\-format"));
    // The words of --format are listed, agentenv's own formats included.
    assert!(env_page.contains("Possible values:"));
    assert!(env_page.contains("\ngithub\n") && env_page.contains("\ndocker\n"));

    if support::tool("groff").is_none() {
        return;
    }
    let mut problems = groff_warnings(&all);
    for n in &names {
        problems.push_str(&groff_warnings(&pages.join(n)));
    }
    assert!(problems.is_empty(), "groff warnings:\n{problems}");
}
