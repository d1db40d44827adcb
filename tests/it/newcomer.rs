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
    assert!(text.contains("AGENTENV_HOOK_QUIET=1"), "{text}");
    assert!(text.contains("names only"), "{text}");
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

/// A user store and a project store (`proj/.agents/env`) never allowed.
fn project_tree() -> support::Tree {
    support::Tree::session()
        .file("home/.agents/env", "USER_VAR=u\n")
        .file("proj/.agents/env", "PROJ_VAR=p\n")
}

#[test]
fn status_says_who_loads_a_project_store_that_is_not_allowed() {
    let t = project_tree();
    let o = t.agentenv(["status"]).run();
    let flat = o.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("trust: not allowed"), "{}", o.stdout);
    assert!(
        flat.contains("env, exec, explain and redact load it as it is")
            && flat.contains(
                "the shell hook and the agent hooks skip it until you run 'agentenv allow'"
            ),
        "{}",
        o.stdout
    );
    // Once allowed, no such line.
    t.agentenv(["allow"]).run();
    let o = t.agentenv(["status"]).run();
    assert!(!o.stdout.contains("skip it until"), "{}", o.stdout);
}

#[test]
fn allow_in_home_says_the_user_store_needs_no_allow() {
    let t = project_tree();
    let o = t.agentenv(["allow"]).cwd(t.path("home")).status(1).run();
    assert!(
        o.stderr
            .contains(".agents is your user store: it loads without an allow"),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains("no project here"), "{}", o.stderr);
}

#[test]
fn a_session_start_in_a_project_not_allowed_tells_the_user() {
    let t = project_tree();
    let env_file = t.path("claude.env");
    std::fs::write(&env_file, "").unwrap();
    let o = t
        .agentenv(["hook", "claude", "session-start"])
        .env("CLAUDE_ENV_FILE", &env_file)
        .env("CLAUDE_PROJECT_DIR", t.path("proj"))
        .stdin(r#"{"hook_event_name":"SessionStart"}"#)
        .run();
    let v: serde_json::Value = serde_json::from_str(o.stdout.trim())
        .unwrap_or_else(|e| panic!("stdout is not the hook's JSON ({e}): {:?}", o.stdout));
    let msg = v["systemMessage"].as_str().unwrap();
    assert!(
        msg.contains("proj/.agents is not allowed; run 'agentenv allow'"),
        "{msg}"
    );
    // Allowed: nothing for the user to see, nothing on stdout.
    t.agentenv(["allow"]).run();
    let o = t
        .agentenv(["hook", "claude", "session-start"])
        .env("CLAUDE_ENV_FILE", &env_file)
        .env("CLAUDE_PROJECT_DIR", t.path("proj"))
        .stdin(r#"{"hook_event_name":"SessionStart"}"#)
        .run();
    assert_eq!(o.stdout, "");
    assert!(std::fs::read_to_string(&env_file)
        .unwrap()
        .contains("AGENTS_HOME"));
}

#[test]
fn init_codex_says_to_trust_the_hooks_in_codex() {
    let t = project_tree();
    let o = t
        .agentenv(["init", "codex"])
        .env("CODEX_HOME", t.path("home/.codex"))
        .run();
    assert!(o.stderr.contains("/hooks"), "{}", o.stderr);
    assert!(o.stderr.contains("trust"), "{}", o.stderr);
    let o = t
        .agentenv(["init", "claude"])
        .env("CLAUDE_CONFIG_DIR", t.path("home/.claude"))
        .run();
    assert!(!o.stderr.contains("/hooks"), "{}", o.stderr);
}

#[test]
fn harness_run_keeps_the_warning_that_explains_its_error() {
    let t = support::Tree::fullsend()
        .file(
            "harness/h.yaml",
            "agent: a.md\nrole: r\nenv:\n  runner:\n    FROM_FILE: \"${K}\"\n",
        )
        .file("typo.env", "K\n");
    let o = t
        .host([
            "harness",
            "run",
            "harness/h.yaml",
            "--env-file",
            "typo.env",
            "--",
            "true",
        ])
        .status(1)
        .run();
    assert!(o.stderr.contains("K is not set"), "{}", o.stderr);
    assert!(
        o.stderr.contains("typo.env:1: line skipped (no \"=\""),
        "{}",
        o.stderr
    );
}

#[test]
fn a_user_store_named_explicitly_that_does_not_exist_is_a_warning() {
    let t = project_tree();
    let missing = t.path("home/.agent");
    let o = t
        .agentenv(["env", "-g", "--diff", "--agents-dir"])
        .arg(&missing)
        .run();
    assert!(
        o.stderr.contains(&format!(
            "the user store {} (named by --agents-dir) does not exist",
            missing.display()
        )),
        "{}",
        o.stderr
    );
    let o = t
        .agentenv(["env", "-g", "--diff"])
        .env("AGENTS_HOME", &missing)
        .run();
    assert!(
        o.stderr.contains("(named by $AGENTS_HOME) does not exist"),
        "{}",
        o.stderr
    );
    // The default store, missing, is no news.
    let o = t
        .agentenv(["env", "-g", "--diff"])
        .cwd(t.path("proj"))
        .env("HOME", t.path("proj"))
        .run();
    assert!(!o.stderr.contains("does not exist"), "{}", o.stderr);
}

/// Two allowed projects with a secret each, a user store with one, and a
/// transcript and a shell history holding some of them.
fn leaky_machine() -> support::Tree {
    let t = support::Tree::session()
        .file("home/.agents/env", "GH_TOKEN=ghp_zqUSERtoken000111222\n")
        .file("proj/.agents/env", "APP_KEY=zqAPPkey-333444555666\n")
        .file("other/.agents/env", "STRIPE_KEY=sk_zqOTHER-777888999000\n")
        .file(
            "home/.claude/projects/-other/s.jsonl",
            "{\"content\":\"sk_zqOTHER-777888999000 and ghp_zqUSERtoken000111222\"}\n",
        )
        .file(
            "home/.bash_history",
            "export APP_KEY=zqAPPkey-333444555666\n",
        );
    t.agentenv(["allow"]).run();
    t.agentenv(["allow"]).cwd(t.path("other")).run();
    t
}

#[test]
fn audit_all_projects_looks_for_every_allowed_projects_values() {
    let t = leaky_machine();
    // From proj: its own values and the user store's, not other's.
    let o = t.agentenv(["audit"]).status(1).run();
    assert!(o.stdout.contains("GH_TOKEN"), "{}", o.stdout);
    assert!(!o.stdout.contains("STRIPE_KEY"), "{}", o.stdout);
    let o = t.agentenv(["audit", "--all-projects"]).status(1).run();
    assert!(
        o.stdout.contains("s.jsonl:1: STRIPE_KEY (raw)"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains(".bash_history:1: APP_KEY (raw)"),
        "{}",
        o.stdout
    );
    assert!(!o.stdout.contains("zqOTHER") && !o.stderr.contains("zqOTHER"));
    // A project changed since it was allowed is not loaded (as the hook).
    t.write(
        "other/.agents/env",
        "STRIPE_KEY=sk_zqOTHER-777888999000\nX=1\n",
    );
    let o = t.agentenv(["audit", "--all-projects"]).status(1).run();
    assert!(!o.stdout.contains("STRIPE_KEY"), "{}", o.stdout);
}

#[test]
fn audit_says_where_each_value_was_found() {
    let t = leaky_machine();
    let o = t.agentenv(["audit", "--all-projects"]).status(1).run();
    let line = |what: &str| {
        o.stdout
            .lines()
            .find(|l| l.starts_with("audit: ") && l.contains(what))
            .unwrap_or_else(|| panic!("no line saying {what:?}: {}", o.stdout))
            .to_string()
    };
    let transcript = line("transcript");
    assert!(
        transcript.contains("GH_TOKEN") && transcript.contains("STRIPE_KEY"),
        "{transcript}"
    );
    assert!(!transcript.contains("APP_KEY"), "{transcript}");
    let history = line("shell history");
    assert!(history.contains("APP_KEY"), "{history}");
    assert!(!history.contains("GH_TOKEN"), "{history}");
    let j = t
        .agentenv(["audit", "--all-projects", "--format", "json"])
        .status(1)
        .run()
        .json();
    assert_eq!(
        j["found_in"]["shell_history"],
        serde_json::json!(["APP_KEY"])
    );
    assert_eq!(
        j["found_in"]["transcript"],
        serde_json::json!(["GH_TOKEN", "STRIPE_KEY"])
    );
}

#[test]
fn audit_help_says_fix_still_exits_1() {
    let text = agentenv(["audit", "--help"]).run().stdout;
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("exit status stays 1"), "{text}");
    assert!(flat.contains("--all-projects"), "{text}");
}

#[test]
fn a_broken_store_file_names_its_line_and_what_is_wrong() {
    let t = support::Tree::session().file(
        "home/.agents/env",
        "GOOD1=one\nBROKEN=\"unterminated zqVALUE\nGOOD2=two\n",
    );
    let o = t.agentenv(["env", "-g", "--diff"]).run();
    let want = format!(
        "env file source failed: {}:2: unterminated double quote for BROKEN",
        t.path("home/.agents/env").display()
    );
    assert!(o.stderr.contains(&want), "{}", o.stderr);
    assert!(
        o.stderr.contains("the whole file was dropped"),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains("zqVALUE"), "{}", o.stderr);
    assert!(!o.stdout.contains("GOOD1"), "{}", o.stdout);
}

#[test]
fn a_readable_store_file_with_secrets_is_a_warning_once_per_file() {
    use std::os::unix::fs::PermissionsExt;
    let t = support::Tree::session()
        .file(
            "home/.agents/env",
            "GH_TOKEN=ghp_zqREAD-abcdef123456\nDB_URL=postgres://u:zqPW@h/db\n",
        )
        .file(
            "home/.agents/agentenv.toml",
            "[vars]\nLOG_LEVEL = { public = true }\n",
        )
        .file("home/.agents/pre.env", "LOG_LEVEL=debug\n");
    let env = t.path("home/.agents/env");
    let pre = t.path("home/.agents/pre.env");
    for f in [&env, &pre] {
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let o = t.agentenv(["env", "-g", "--diff"]).run();
    let lines: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| l.contains("readable by group or others"))
        .collect();
    assert_eq!(lines.len(), 1, "{}", o.stderr);
    assert!(
        lines[0].contains(&env.display().to_string()),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].contains("DB_URL, GH_TOKEN") || lines[0].contains("GH_TOKEN, DB_URL"),
        "{}",
        lines[0]
    );
    assert!(lines[0].contains("chmod 600"), "{}", lines[0]);
    assert!(!o.stderr.contains("zqREAD") && !o.stderr.contains("zqPW"));
    // pre.env holds only a public value: no warning for it; 0600: none.
    assert!(!o.stderr.contains("pre.env"), "{}", o.stderr);
    std::fs::set_permissions(&env, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = t.agentenv(["env", "-g", "--diff"]).run();
    assert!(!o.stderr.contains("readable by group"), "{}", o.stderr);
}
