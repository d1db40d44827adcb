//! Sensitive unless declared public (docs/session.md#sensitive-and-public-values),
//! through the binary: which values are public (computed variables,
//! `agentenv.toml` declarations of the store that set the value) and which are
//! not, what `explain` says about it, and `env --public-only` in every format,
//! with `--diff`, `--cache` and `--into`.

use crate::support;

use serde_json::{json, Value};
use support::{Run, Tree};

const USER_TOKEN: &str = "canary-user-token-7Qx";
const FEATURE_KEY: &str = "canary-feature-key-2Lp";
const PROXY_PW: &str = "canary-proxy-pw-9Zr";
const TOOL_KEY: &str = "canary-tool-key-4Mn";
const PROJ_KEY: &str = "canary-proj-key-6Wd";
const BASE_SECRET: &str = "canary-base-secret-1Hb";
const REBASED: &str = "canary-rebased-8Kc";
/// A value in a malformed declaration (never printed).
const TOML_CANARY: &str = "canary-in-toml-3Vy";

const CANARIES: &[&str] = &[
    USER_TOKEN,
    FEATURE_KEY,
    PROXY_PW,
    TOOL_KEY,
    PROJ_KEY,
    BASE_SECRET,
    REBASED,
    TOML_CANARY,
];

/// A user store (with an overlay) and a project store, each with an
/// `agentenv.toml`; the project's tries to make public what the user store
/// and the base environment set.
fn tree() -> Tree {
    Tree::session()
        .file(
            "home/.agents/env",
            format!(
                "TOKEN={USER_TOKEN}\nLOG_LEVEL=debug\nFEATURE_A=on\nFEATURE_SECRET_KEY={FEATURE_KEY}\n\
                 HTTPS_PROXY=http://me:{PROXY_PW}@proxy.example:3128\nNO_PROXY=localhost\nSHORT=ab\n"
            ),
        )
        .file(
            "home/.agents/agentenv.toml",
            r#"# the user's declarations
[vars]
LOG_LEVEL = { public = true, description = "log level of the agent's tools" }
"FEATURE_*" = { public = true }
"FEATURE_SECRET_*" = { public = false, description = "feature keys" }
TOKEN = { description = "GitHub token for gh" }
"#,
        )
        .file(
            "home/.agents/overlays/tools/env",
            format!("TOOL_URL=https://tools.example\nTOOL_KEY={TOOL_KEY}\n"),
        )
        .file(
            "home/.agents/overlays/tools/agentenv.toml",
            "[vars]\nTOOL_URL = { public = true }\n",
        )
        .file(
            "proj/.agents/env",
            format!(
                "PROJ_NAME=demo\nPROJ_KEY={PROJ_KEY}\nLAUNDERED=\"x-$TOKEN\"\nREBASED=\"$REBASED\"\nCACHE_DIR=\"$HOME/.cache/demo\"\n"
            ),
        )
        .file(
            "proj/.agents/agentenv.toml",
            r#"[vars]
PROJ_NAME = { public = true, description = "the project's name" }
TOKEN = { public = true }
LAUNDERED = { public = true }
CACHE_DIR = { public = true }
REBASED = { public = true }
BASE_SECRET = { public = true }
"TOOL_*" = { public = true }
"#,
        )
}

/// `agentenv ARGS` with two secrets in the caller's environment; no
/// canary may reach stderr.
fn run(t: &Tree, args: &[&str]) -> Run {
    let mut r = t
        .agentenv(args)
        .env("BASE_SECRET", BASE_SECRET)
        .env("REBASED", REBASED);
    for c in CANARIES {
        r = r.stderr_lacks(*c);
    }
    r
}

/// `run`, and no canary on stdout either.
fn clean(t: &Tree, args: &[&str]) -> Run {
    let mut r = run(t, args);
    for c in CANARIES {
        r = r.stdout_lacks(*c);
    }
    r
}

fn explain_json(t: &Tree, vars: &[&str]) -> Value {
    let mut args = vec!["explain", "--format", "json"];
    args.extend_from_slice(vars);
    clean(t, &args).run().json_w()["variables"].clone()
}

fn decided(v: &Value) -> (String, String) {
    (
        v["sensitivity"].as_str().unwrap_or("-").to_string(),
        v["decided_by"]["kind"].as_str().unwrap_or("-").to_string(),
    )
}

#[test]
fn classification_of_every_kind_of_variable() {
    let t = tree();
    let v = explain_json(
        &t,
        &[
            "AGENTS_HOME",
            "AGENTS_PROJECT_ROOT",
            "AGENTS_PYTHON",
            "TOOLS_OVERLAY_ROOT",
            "PATH",
            "NO_PROXY",
            "no_proxy",
            "HTTPS_PROXY",
            "https_proxy",
            "AGENTS_PROXY",
            "LOG_LEVEL",
            "FEATURE_A",
            "FEATURE_SECRET_KEY",
            "TOKEN",
            "TOOL_URL",
            "TOOL_KEY",
            "PROJ_NAME",
            "PROJ_KEY",
            "LAUNDERED",
            "CACHE_DIR",
            "REBASED",
            "BASE_SECRET",
        ],
    );
    let want = [
        ("AGENTS_HOME", "public", "agentenv"),
        ("AGENTS_PROJECT_ROOT", "public", "agentenv"),
        ("AGENTS_PYTHON", "public", "agentenv"),
        ("TOOLS_OVERLAY_ROOT", "public", "agentenv"),
        ("PATH", "public", "agentenv"),
        ("NO_PROXY", "public", "agentenv"),
        ("no_proxy", "public", "agentenv"),
        // A proxy URL with a password, and its copies by the proxy model.
        ("HTTPS_PROXY", "sensitive", "agentenv"),
        ("https_proxy", "sensitive", "agentenv"),
        ("AGENTS_PROXY", "sensitive", "agentenv"),
        ("LOG_LEVEL", "public", "declaration"),
        // The prefix `FEATURE_*` and the longer `FEATURE_SECRET_*`.
        ("FEATURE_A", "public", "declaration"),
        ("FEATURE_SECRET_KEY", "sensitive", "declaration"),
        // Described, not public.
        ("TOKEN", "sensitive", "declaration"),
        ("TOOL_URL", "public", "declaration"),
        // The project's `TOOL_*` does not cover the overlay's value.
        ("TOOL_KEY", "sensitive", "store"),
        ("PROJ_NAME", "public", "declaration"),
        ("PROJ_KEY", "sensitive", "store"),
        // Declared public by the project, but it holds the user's token.
        ("LAUNDERED", "sensitive", "store"),
        // Holding the caller's HOME (a path) is fine.
        ("CACHE_DIR", "public", "declaration"),
        // The project's plain file set the caller's own value again: as in
        // the reference, that leaves no trace (no layer changed it), so it
        // is the caller's, and the project's declaration does not reach it.
        ("REBASED", "sensitive", "base"),
        // No layer set it: the caller's, never public.
        ("BASE_SECRET", "sensitive", "base"),
    ];
    for (name, sens, kind) in want {
        assert_eq!(
            decided(&v[name]),
            (sens.to_string(), kind.to_string()),
            "{name}: {}",
            v[name]
        );
    }
    assert_eq!(
        v["LOG_LEVEL"]["decided_by"],
        json!({"kind": "declaration", "path": "$W/home/.agents/agentenv.toml", "line": 3})
    );
    assert_eq!(
        v["LOG_LEVEL"]["description"],
        "log level of the agent's tools"
    );
    assert_eq!(v["TOKEN"]["description"], "GitHub token for gh");
    assert_eq!(
        v["TOOL_KEY"]["decided_by"],
        json!({"kind": "store", "path": "$W/home/.agents/overlays/tools", "line": null})
    );
    assert_eq!(
        v["LAUNDERED"]["decided_by"]["path"],
        json!("$W/home/.agents")
    );
}

#[test]
fn a_project_store_cannot_unmask_what_another_store_or_the_base_set() {
    let t = tree();
    let ran = run(&t, &["env", "--diff", "--format", "json", "--public-only"])
        .stderr_has("proj/.agents/agentenv.toml:3: TOKEN is declared public, but its final value was set by ")
        .stderr_has("LAUNDERED is declared public, but its value holds the value of TOKEN")
        .run();
    let j = ran.json();
    for name in ["TOKEN", "LAUNDERED", "REBASED", "BASE_SECRET", "TOOL_KEY"] {
        assert!(j.get(name).is_none(), "{name} in {j}");
    }
    assert_eq!(j["PROJ_NAME"], "demo");
    // The same declarations cover the project's own values.
    assert!(j.get("PROJ_KEY").is_none());
}

#[test]
fn explain_text_says_who_decided_and_flags_short_values() {
    let t = tree();
    let ran = clean(
        &t,
        &[
            "explain",
            "LOG_LEVEL",
            "SHORT",
            "HTTPS_PROXY",
            "BASE_SECRET",
        ],
    )
    .run();
    let text = ran.stdout_w();
    for line in [
        "  public: declared in $W/home/.agents/agentenv.toml:3\n  description: log level of the agent's tools\n",
        "  sensitive: set by $W/home/.agents, not declared public; too short to mask\n",
        "  sensitive: a proxy URL with a user or password\n",
        "BASE_SECRET  unchanged\n  (no layer touched it)\n  not public: the base environment's value (agentenv does not mask it)\n",
    ] {
        assert!(text.contains(line), "{line:?} not in\n{text}");
    }
    let v = explain_json(&t, &["SHORT", "TOKEN"]);
    assert_eq!(v["SHORT"]["too_short_to_mask"], true);
    assert_eq!(v["TOKEN"]["too_short_to_mask"], false);
}

/// Every format `env --format` accepts.
const FORMATS: &[&str] = &[
    "export",
    "powershell",
    "cmd",
    "fish",
    "dotenv",
    "json",
    "ini",
    "yaml",
    "github",
    "docker",
];

#[test]
fn public_only_in_every_format_full_and_diff() {
    let t = tree();
    for format in FORMATS {
        for diff in [true, false] {
            let mut args = vec!["env", "--public-only", "--format", format];
            if diff {
                args.push("--diff");
            }
            // Sensitive ones are left out silently (no warning).
            let ran = clean(&t, &args)
                .stdout_has("LOG_LEVEL")
                .stdout_has("demo")
                .stdout_has("https://tools.example")
                .stdout_has("AGENTS_HOME")
                .stdout_has("localhost")
                .stdout_lacks("TOKEN")
                .stdout_lacks("FEATURE_SECRET_KEY")
                .stdout_lacks("SHORT")
                .stdout_lacks("HTTPS_PROXY")
                .run();
            // What the caller had (HOME, LANG) is not public: full mode
            // leaves it out too.
            assert!(!ran.stdout.contains("C.UTF-8"), "{format}: {}", ran.stdout);
            // (The warnings are the project's refused declarations.)
            assert!(
                !ran.stderr.contains("left out") && !ran.stderr.contains("PROJ_KEY"),
                "{format}: {}",
                ran.stderr
            );
        }
    }
}

#[test]
fn without_public_only_nothing_changes() {
    let t = tree();
    let j = run(&t, &["env", "--diff", "--format", "json"]).run().json();
    assert_eq!(j["TOKEN"], USER_TOKEN);
    assert_eq!(j["SHORT"], "ab");
}

#[test]
fn verbose_names_what_was_left_out_names_only() {
    let t = tree();
    run(&t, &["env", "--diff", "--public-only", "-v"])
        .stderr_has("--public-only left out ")
        .stderr_has("left out 9 variable(s) that are not public: AGENTS_PROXY, FEATURE_SECRET_KEY, HTTPS_PROXY, LAUNDERED, PROJ_KEY, SHORT, TOKEN, TOOL_KEY, https_proxy\n")
        .run();
    // Quiet without -v.
    run(&t, &["env", "--diff", "--public-only"])
        .stderr_lacks("left out")
        .run();
}

#[test]
fn cache_keys_on_public_only_and_on_the_declarations() {
    let t = tree();
    let first = clean(
        &t,
        &[
            "env",
            "--diff",
            "--public-only",
            "--cache",
            "--format",
            "dotenv",
        ],
    )
    .stdout_has("LOG_LEVEL=")
    .run();
    let hit = clean(
        &t,
        &[
            "env",
            "--diff",
            "--public-only",
            "--cache",
            "--format",
            "dotenv",
            "-v",
        ],
    )
    .stderr_has("cache hit")
    .run();
    assert_eq!(first.stdout, hit.stdout);
    // The same run without --public-only is another entry.
    run(
        &t,
        &["env", "--diff", "--cache", "--format", "dotenv", "-v"],
    )
    .stderr_has("cache miss")
    .stdout_has(USER_TOKEN)
    .run();
    // An edited declaration is never answered from the old entry.
    t.write(
        "home/.agents/agentenv.toml",
        "[vars]\nLOG_LEVEL = { public = false }\n",
    );
    clean(
        &t,
        &[
            "env",
            "--diff",
            "--public-only",
            "--cache",
            "--format",
            "dotenv",
            "-v",
        ],
    )
    .stderr_has("cache miss")
    .stdout_lacks("LOG_LEVEL")
    .stdout_lacks("FEATURE_A")
    .run();
}

#[test]
fn into_writes_only_public_variables() {
    let t = tree();
    let file = t.arg("out.sh");
    clean(&t, &["env", "--diff", "--public-only", "--into", &file])
        .stdout("")
        .run();
    let text = t.read("out.sh");
    assert!(text.contains("export LOG_LEVEL='debug'"), "{text}");
    for c in CANARIES {
        assert!(!text.contains(c), "{c} in {text}");
    }
    // And from the cache.
    for _ in 0..2 {
        clean(
            &t,
            &["env", "--diff", "--public-only", "--cache", "--into", &file],
        )
        .stdout("")
        .run();
        let again = t.read("out.sh");
        assert!(!again.contains(USER_TOKEN) && again.contains("LOG_LEVEL"));
    }
}

#[test]
fn malformed_declarations_warn_with_file_and_line_and_stay_sensitive() {
    let t = tree().file(
        "home/.agents/agentenv.toml",
        format!(
            r#"[vars]
LOG_LEVEL = {{ public = "{TOML_CANARY}" }}
FEATURE_A = {{ public = true, secret = "{TOML_CANARY}" }}
"{TOML_CANARY} *" = {{ public = true }}
TOKEN = "{TOML_CANARY}"
"#
        ),
    );
    let ran = clean(&t, &["env", "--diff", "--public-only", "--format", "json"])
        .stderr_has("home/.agents/agentenv.toml:2: LOG_LEVEL: public is not a boolean")
        .stderr_has("home/.agents/agentenv.toml:3: FEATURE_A: unknown field")
        .stderr_has("home/.agents/agentenv.toml:4: a key of [vars] is neither a variable name")
        .stderr_has("home/.agents/agentenv.toml:5: TOKEN: not a table")
        .run();
    let j = ran.json();
    assert!(
        j.get("LOG_LEVEL").is_none() && j.get("FEATURE_A").is_none(),
        "{j}"
    );
    // Not TOML at all: the whole file is ignored, with its line.
    let t = tree().file(
        "home/.agents/agentenv.toml",
        format!("[vars]\nLOG_LEVEL = {{ public = true }}\nX = {TOML_CANARY}\n"),
    );
    let j = clean(&t, &["env", "--diff", "--public-only", "--format", "json"])
        .stderr_has("home/.agents/agentenv.toml:3: not valid TOML; the file is ignored")
        .run()
        .json();
    assert!(j.get("LOG_LEVEL").is_none(), "{j}");
    // explain warns the same way and shows the variable as sensitive.
    let v = explain_json(&t, &["LOG_LEVEL"]);
    assert_eq!(
        decided(&v["LOG_LEVEL"]),
        ("sensitive".into(), "store".into())
    );
}

#[test]
fn dotagents_style_env_output_ignores_the_file() {
    // The same tree without any agentenv.toml renders the same `env`.
    let t = tree();
    let with = run(&t, &["env", "--format", "json"]).run().stdout;
    for f in [
        "home/.agents/agentenv.toml",
        "home/.agents/overlays/tools/agentenv.toml",
        "proj/.agents/agentenv.toml",
    ] {
        std::fs::remove_file(t.path(f)).unwrap();
    }
    let without = run(&t, &["env", "--format", "json"]).run().stdout;
    assert_eq!(with, without);
}

#[test]
fn a_declarations_path_that_is_not_a_file_is_never_opened() {
    let t = tree();
    std::fs::remove_file(t.path("home/.agents/agentenv.toml")).unwrap();
    let fifo = t.path("home/.agents/agentenv.toml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        std::fs::create_dir(&fifo).unwrap();
    }
    // A FIFO nobody writes would block a reader: it is refused unopened.
    let j = run(&t, &["env", "--diff", "--public-only", "--format", "json"])
        .stderr_has("home/.agents/agentenv.toml: not a regular file; ignored")
        .run()
        .json();
    assert!(j.get("LOG_LEVEL").is_none(), "{j}");
}

#[test]
fn a_value_the_caller_already_has_is_the_callers() {
    // A shell where the stores' values were already exported: a plain file
    // that sets a variable to the value it has changes nothing (the
    // reference's snapshot rule), so the variable is the caller's — not
    // public (kind `base`), not a value the session lists as its own.
    let t = tree();
    let loaded = run(&t, &["explain", "--format", "json", "LOG_LEVEL", "TOKEN"])
        .env("LOG_LEVEL", "debug")
        .env("TOKEN", USER_TOKEN)
        .run()
        .json_w();
    let v = &loaded["variables"];
    for name in ["LOG_LEVEL", "TOKEN"] {
        assert_eq!(v[name]["state"], "unchanged");
        assert_eq!(
            decided(&v[name]),
            ("sensitive".into(), "base".into()),
            "{name}"
        );
    }
    // The project's LAUNDERED copies TOKEN, now the caller's: still caught.
    let j = run(&t, &["env", "--public-only", "--format", "json"])
        .env("LOG_LEVEL", "debug")
        .env("TOKEN", USER_TOKEN)
        .stdout_lacks(USER_TOKEN)
        .stderr_has("LAUNDERED is declared public, but its value holds the value of TOKEN, from the caller's environment; it stays sensitive")
        .run()
        .json();
    assert!(
        j.get("LOG_LEVEL").is_none() && j.get("FEATURE_A").is_some(),
        "{j}"
    );
}

/// Masked or not (README "Masked or not"): ordinary values a store sets
/// stay sensitive (`--public-only` leaves them out) but are not masked,
/// and `explain` says why; `sensitive = true` masks from 4 bytes.
#[test]
fn numbers_words_and_short_values_are_sensitive_but_not_masked() {
    let t = Tree::session()
        .file(
            "home/.agents/env",
            "TIMEOUT=3000\nFEATURE_ENABLED=true\nDEBUG=On\nNAME7=abcdefg\nPIN=4242\nTOKEN=ghp_t0kenvalue\n",
        )
        .file(
            "home/.agents/agentenv.toml",
            "[vars]\nPIN = { sensitive = true, description = \"door pin\" }\n",
        );
    let j = t
        .agentenv(["env", "--public-only", "--format", "json"])
        .run()
        .json();
    for name in [
        "TIMEOUT",
        "FEATURE_ENABLED",
        "DEBUG",
        "NAME7",
        "PIN",
        "TOKEN",
    ] {
        assert!(j.get(name).is_none(), "{name} is not public: {j}");
    }
    t.agentenv(["redact"])
        .stdin("{\"ok\":true,\"timeout\":3000,\"debug\":\"On\",\"n\":\"abcdefg\",\"pin\":4242,\"t\":\"ghp_t0kenvalue\"}\n")
        .stdout("{\"ok\":true,\"timeout\":3000,\"debug\":\"On\",\"n\":\"abcdefg\",\"pin\":\"[REDACTED:PIN]\",\"t\":\"[REDACTED:TOKEN]\"}\n")
        .run();
    t.agentenv([
        "exec",
        "--redact",
        "--",
        "sh",
        "-c",
        "echo $TIMEOUT $FEATURE_ENABLED $PIN $TOKEN",
    ])
    .stdout("3000 true [REDACTED:PIN] [REDACTED:TOKEN]\n")
    .run();
    let text = t
        .agentenv([
            "explain",
            "TIMEOUT",
            "FEATURE_ENABLED",
            "NAME7",
            "PIN",
            "TOKEN",
        ])
        .run()
        .stdout;
    for line in [
        "TIMEOUT  set\n  #",
        "not declared public; not masked: a number; declare sensitive = true to mask it\n",
        "not declared public; not masked: a boolean or null word; declare sensitive = true to mask it\n",
        "not declared public; not masked: shorter than 8 bytes; declare sensitive = true to mask it\n",
    ] {
        assert!(text.contains(line), "{line:?} in:\n{text}");
    }
    assert!(
        !text.contains("3000") && !text.contains("4242") && !text.contains("ghp_"),
        "{text}"
    );
    let j = t
        .agentenv(["explain", "--format", "json", "TIMEOUT", "PIN", "TOKEN"])
        .run()
        .json();
    let v = &j["variables"];
    assert_eq!(v["TIMEOUT"]["masked"], false);
    assert_eq!(
        v["TIMEOUT"]["not_masked"],
        "not masked: a number; declare sensitive = true to mask it"
    );
    assert_eq!(
        (&v["PIN"]["masked"], &v["PIN"]["not_masked"]),
        (&json!(true), &Value::Null)
    );
    assert_eq!(v["TOKEN"]["masked"], true);
    // A field with the wrong type is a warning, and the entry is ignored.
    t.write(
        "home/.agents/agentenv.toml",
        "[vars]\nPIN = { sensitive = \"yes\" }\nTIMEOUT = { public = true, sensitive = true }\n",
    );
    t.agentenv(["env", "--format", "json"])
        .stderr_has("agentenv.toml:2: PIN: sensitive is not a boolean (true or false); entry ignored (stays sensitive)")
        .stderr_has("agentenv.toml:3: TIMEOUT: public = true and sensitive = true contradict each other; entry ignored (stays sensitive)")
        .run();
}

const F3_TOKEN: &str = "ghp_RT4canaryTOKENaaaa1111";
const F3_DB: &str = "RT4canaryDBpassword";

/// No secret becomes public by name (red team round 4, F3): a store of
/// plain assignments copies secrets into variables agentenv treats as
/// public by name; each stays sensitive, with a warning, and none reaches
/// `CLAUDE_ENV_FILE`.
#[test]
fn no_secret_becomes_public_by_name() {
    let t = Tree::session()
        .file(
            "home/.agents/env",
            format!("GH_TOKEN={F3_TOKEN}\nDB_PASSWORD={F3_DB}\nLOG_LEVEL=debug\n"),
        )
        .file(
            "proj/.agents/env",
            "AGENTS_MODEL=\"$GH_TOKEN\"\nCACHE_OVERLAY_ROOT=\"/srv/$GH_TOKEN\"\nPYTHONPATH=\"/opt/lib/$GH_TOKEN\"\n\
             NO_PROXY=\"localhost,$DB_PASSWORD\"\nHTTPS_PROXY=\"http://proxy.example:3128/?k=$GH_TOKEN\"\nPATH=\"/opt/bin:$PATH\"\n",
        );
    let r = t
        .agentenv(["env", "--public-only", "--format", "json"])
        .stdout_lacks("RT4canary")
        .run();
    let j = r.json();
    for name in [
        "AGENTS_MODEL",
        "CACHE_OVERLAY_ROOT",
        "PYTHONPATH",
        "NO_PROXY",
        "no_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "AGENTS_PROXY",
    ] {
        assert!(j.get(name).is_none(), "{name} is public: {j}");
    }
    // Public by name and holding no secret: still public.
    assert!(
        j.get("PATH").is_some() && j.get("AGENTS_HOME").is_some(),
        "{j}"
    );
    for name in ["AGENTS_MODEL", "PYTHONPATH", "NO_PROXY", "HTTPS_PROXY"] {
        assert!(
            r.stderr.contains(&format!(
                "warning: {name} is public by name (agentenv computes it), but its value holds the value of"
            )),
            "{name}: {}",
            r.stderr
        );
    }
    assert!(!r.stderr.contains("RT4canary"));
    let v = explain_json(&t, &["AGENTS_MODEL"]);
    assert_eq!(decided(&v["AGENTS_MODEL"]).0, "sensitive");
    // The agent's session start: nothing of them in CLAUDE_ENV_FILE (the
    // project allowed, so that its store loads; a store not allowed would
    // load nothing and be said on stdout as the hook's systemMessage).
    let env_file = t.path("claude.env");
    t.agentenv(["allow"]).run();
    t.agentenv(["hook", "claude", "session-start"])
        .env("CLAUDE_ENV_FILE", &env_file)
        .stdout("")
        .run();
    let text = std::fs::read_to_string(&env_file).unwrap();
    assert!(!text.contains("RT4canary"), "{text}");
    assert!(text.contains("PATH="), "{text}");
    // The masker masks them (AGENTS_MODEL is GH_TOKEN's value: the first
    // name in byte order is shown).
    t.agentenv([
        "exec",
        "--redact",
        "--",
        "sh",
        "-c",
        "echo $AGENTS_MODEL $NO_PROXY",
    ])
    .stdout("[REDACTED:AGENTS_MODEL] [REDACTED:NO_PROXY]\n")
    .run();
}

/// A project env.py that re-emits the user's GH_TOKEN under the same name
/// and declares it public does not make it public: the value is still the
/// user's (red team round 4, F8).
#[test]
fn a_store_re_emitting_another_stores_value_does_not_own_it() {
    let t = Tree::session()
        .file("home/.agents/env", format!("GH_TOKEN={F3_TOKEN}\n"))
        .file(
            "proj/.agents/env.py",
            "import json, os\nprint(json.dumps({'GH_TOKEN': os.environ['GH_TOKEN'], 'OWN': 'project-own-value'}))\n",
        )
        .file(
            "proj/.agents/agentenv.toml",
            "[vars]\nGH_TOKEN = { public = true }\nOWN = { public = true }\n",
        );
    let r = t
        .agentenv(["env", "--public-only", "--format", "json"])
        .stdout_lacks("RT4canary")
        .stderr_has("GH_TOKEN is declared public, but its final value was set by")
        .run();
    let j = r.json();
    assert!(j.get("GH_TOKEN").is_none(), "{j}");
    assert_eq!(j["OWN"], "project-own-value");
    let v = explain_json(&t, &["GH_TOKEN"]);
    assert_eq!(
        decided(&v["GH_TOKEN"]),
        ("sensitive".into(), "store".into())
    );
    assert!(v["GH_TOKEN"]["decided_by"]["path"]
        .as_str()
        .unwrap()
        .ends_with("home/.agents"));
    t.agentenv(["exec", "--redact", "--", "sh", "-c", "echo $GH_TOKEN"])
        .stdout("[REDACTED:GH_TOKEN]\n")
        .run();
}
