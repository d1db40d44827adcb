//! What a newcomer meets in the first hour (issue "The first hour"): the
//! help texts, the messages of the hook, `set`, `status`, `allow` and
//! `audit`, through the binary (a pseudo-terminal where a terminal is
//! involved).

use crate::support;

use support::agentenv;

/// Every visible command's `--help`, by its command line.
fn all_help() -> Vec<(String, String)> {
    let root = agentenv::internals::cli::command();
    agentenv::internals::cli::all_commands(&root)
        .into_iter()
        .map(|c| {
            let name = c.get_bin_name().unwrap_or(c.get_name()).to_string();
            let mut args: Vec<String> = name.split(' ').skip(1).map(String::from).collect();
            args.push("--help".into());
            (name, agentenv(&args).run().stdout)
        })
        .collect()
}

#[test]
fn no_help_recommends_putting_values_into_the_agents_session_file() {
    let helps = all_help();
    assert!(helps.len() >= 15);
    for (cmd, text) in &helps {
        for leaky in ["\"$CLAUDE_ENV_FILE\"", "\"$CODEX_ENV_FILE\""] {
            assert!(
                !text.contains(leaky),
                "{cmd} --help recommends writing the session env into {leaky}:\n{text}"
            );
        }
    }
    let man = agentenv(["man"]).run().stdout;
    assert!(!man.contains("$CLAUDE_ENV_FILE"), "the man page does");
}

#[test]
fn env_help_lists_every_format() {
    let text = agentenv(["env", "--help"]).run().stdout;
    let at = text.find("--format <F>").expect("--format");
    let end = text[at..].find("--diff").unwrap() + at;
    let line = text[at..end]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let words: Vec<&str> = line
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    for f in agentenv::render::ACCEPTED
        .iter()
        .chain(agentenv::render::OWN)
    {
        assert!(
            words.contains(f),
            "env --help does not name --format {f}: {line}"
        );
    }
}

#[test]
fn hook_help_says_a_project_store_loads_once_allowed() {
    let text = agentenv(["hook", "--help"]).run().stdout;
    assert!(text.contains("agentenv allow"), "{text}");
    assert!(text.contains("agentenv deny"), "{text}");
    assert!(text.contains("~/.agents"), "{text}");
    assert!(text.contains("changed since"), "{text}");
}

#[test]
fn init_help_says_what_it_adds_and_why_the_allow_rule_is_safe() {
    for args in [&["init", "--help"][..], &["init", "claude", "--help"]] {
        let text = agentenv(args).run().stdout;
        for want in [
            "SessionStart",
            "PreToolUse",
            "deny rules",
            "Bash(__agentenv_begin:*)",
            "before the rewrite",
            "/hooks",
        ] {
            assert!(text.contains(want), "{args:?}: no {want:?} in:\n{text}");
        }
    }
}

#[test]
fn launch_help_is_true_under_redact() {
    let text = agentenv(["launch", "--help"]).run().stdout;
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("With --redact agentenv stays, as CMD's parent"),
        "{text}"
    );
}

#[test]
fn a_swapped_pair_in_a_command_name_suggests_that_command() {
    for (typo, want) in [
        (&["evn"][..], "'env'"),
        (&["exce"], "'exec'"),
        (&["harness", "reslove"], "'resolve'"),
        (&["init", "cluade"], "'claude'"),
    ] {
        let o = agentenv(typo).status(2).run();
        assert!(
            o.stderr
                .contains(&format!("a similar subcommand exists: {want}")),
            "{typo:?}: {}",
            o.stderr
        );
    }
    // Nothing near: no tip at all (clap's would be a far name).
    let o = agentenv(["zzzzz"]).status(2).run();
    assert!(!o.stderr.contains("similar"), "{}", o.stderr);
}

#[test]
fn a_write_error_names_the_path_and_the_os_reason() {
    let t = support::Tree::fullsend().file(
        "harness/h.yaml",
        "agent: agents/a.md\nrole: r\nenv:\n  sandbox:\n    A: b\n",
    );
    let report = t.path("missing/dir/report.json");
    let o = t
        .host(["launch", "--report"])
        .arg(&report)
        .args(["--", "true"])
        .status(1)
        .run();
    assert!(
        o.stderr
            .contains(&format!("{}: no such file or directory", report.display())),
        "{}",
        o.stderr
    );
    let out = t.path("missing/x.env");
    let o = t
        .host(["harness", "sandbox-env", "harness/h.yaml", "-o"])
        .arg(&out)
        .status(1)
        .run();
    assert!(
        o.stderr
            .contains(&format!("{}: no such file or directory", out.display())),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains("entity not found"), "{}", o.stderr);
}

#[test]
fn a_harness_env_file_line_is_trimmed_as_fullsend_trims_it() {
    // fullsend's envfile.Load trims the line, not the key: ` K=v` sets K,
    // `K =v` is an invalid name, named once with its file and line.
    let t = support::Tree::fullsend()
        .file("harness/h.yaml", "agent: agents/a.md\nrole: r\n")
        .file("lead.env", "  K=v\n")
        .file("key.env", "K =v\n");
    let o = t
        .host([
            "harness",
            "run",
            "harness/h.yaml",
            "--env-file",
            "lead.env",
            "--",
        ])
        .args(["sh", "-c", "printf '%s' \"$K\""])
        .run();
    assert_eq!(o.stdout, "v");
    let o = t
        .host([
            "harness",
            "run",
            "harness/h.yaml",
            "--env-file",
            "key.env",
            "--",
            "true",
        ])
        .status(1)
        .run();
    let want = "key.env:1: invalid env var name";
    assert!(o.stderr.contains(want), "{}", o.stderr);
    assert_eq!(o.stderr.matches("key.env").count(), 1, "{}", o.stderr);
}
