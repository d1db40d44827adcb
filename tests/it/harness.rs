//! `agentenv harness resolve | lint | run | sandbox-env` through the binary.

use crate::support;

use serde_json::Value;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use support::{Ran, Run, Tree};

const HEAD: &str = "agent: agents/t.md\nrole: test\n";

/// A harness file: the required head, then `rest`.
fn yaml(rest: &str) -> String {
    format!("{HEAD}{rest}")
}

/// A path as an argument.
fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn resolve_prints_the_documented_json() {
    let t = Tree::fullsend()
        .file(
            "harness/review.yaml",
            r#"agent: agents/t.md
role: test
runner_env:
  OLD: old
  K: from-runner-env
env:
  runner:
    FULLSEND_OUTPUT_SCHEMA: "${FULLSEND_DIR}/schemas/r.json"
    K: from-env-runner
  sandbox:
    GH_TOKEN: "${GH_TOKEN}"
    QUOTE: "it's"
    PATH: /evil
    N: 5
host_files:
  - src: env/gh.env
    dest: /sandbox/workspace/.env.d/gh.env
    expand: true
"#,
        )
        .file("env/gh.env", "export X=1\n");
    t.host(["harness", "resolve", &t.arg("harness/review.yaml")])
        .env("GH_TOKEN", "tok")
        .stdout(
            r#"{
  "platform": "",
  "runner_env": {
    "K": "from-runner-env",
    "OLD": "old"
  },
  "env": {
    "runner": {
      "FULLSEND_OUTPUT_SCHEMA": "$W/schemas/r.json",
      "K": "from-env-runner"
    },
    "sandbox": {
      "GH_TOKEN": "tok",
      "N": "5",
      "PATH": "/evil",
      "QUOTE": "it's"
    }
  },
  "effective_runner_env": {
    "FULLSEND_OUTPUT_SCHEMA": "$W/schemas/r.json",
    "K": "from-env-runner",
    "OLD": "old"
  },
  "sandbox_lines": [
    "export GH_TOKEN='tok'",
    "export N='5'",
    "export QUOTE='it'\\''s'"
  ],
  "host_files": [
    {
      "src": "env/gh.env",
      "dest": "/sandbox/workspace/.env.d/gh.env",
      "expand": true,
      "optional": false
    }
  ],
  "diagnostics": [
    "warning: runner_env: runner_env is deprecated and env.runner takes precedence; migrate to env.runner (see ADR 0055)",
    "warning: env.sandbox: env.sandbox coexists with host_files entry $W/env/gh.env (dest: /sandbox/workspace/.env.d/gh.env); env.sandbox values take precedence on key collision"
  ],
  "warnings": [
    "env.sandbox key \"PATH\" is reserved for runner infrastructure; skipping"
  ]
}
"#,
        )
        .run();
}

#[test]
fn fullsend_dir_flag_and_host_override() {
    let t = Tree::fullsend();
    let h = t.write(
        "harness/a.yaml",
        yaml(
            r#"env:
  runner:
    D: "${FULLSEND_DIR}"
    U: "$UNSET_X/y"
"#,
        ),
    );
    let j = t
        .host(["harness", "resolve", p(&h), "--fullsend-dir", "/opt/fs"])
        .env("FULLSEND_DIR", "/host")
        .run()
        .json();
    assert_eq!(j["env"]["runner"]["D"], "/opt/fs");
    assert_eq!(j["env"]["runner"]["U"], "/y");
}

/// A fullsend tree with one harness file, `harness/h.yaml`.
fn one(yaml: impl AsRef<[u8]>) -> Tree {
    Tree::fullsend().file("harness/h.yaml", yaml)
}

/// `agentenv harness SUB $W/harness/h.yaml ARGS…`.
fn harness(t: &Tree, sub: &str, args: &[&str]) -> Run {
    t.host(["harness", sub, &t.arg("harness/h.yaml")])
        .args(args)
}

/// `harness resolve` of `harness/h.yaml` fails with `phrase`.
fn resolve_fails(t: &Tree, phrase: &str) -> Ran {
    harness(t, "resolve", &[])
        .status(1)
        .stderr_has(phrase)
        .run()
}

const A_BRACED_UNSET: &str = r#"agent: agents/t.md
role: test
env:
  sandbox:
    A: "${NOPE_VAR}"
"#;

#[test]
fn unset_braced_variable_is_an_error() {
    resolve_fails(
        &one(A_BRACED_UNSET),
        "validating env: 1 unresolved host variable(s):\n    NOPE_VAR is not set (referenced by env.sandbox[A])",
    );
}

#[test]
fn set_but_empty_passes() {
    harness(&one(A_BRACED_UNSET), "resolve", &[])
        .env("NOPE_VAR", "")
        .run();
}

#[test]
fn oidc_keys_never_count_as_set() {
    let t = one(r#"agent: agents/t.md
role: test
env:
  runner:
    T: "${ACTIONS_ID_TOKEN_REQUEST_TOKEN}"
"#);
    harness(&t, "resolve", &[])
        .env("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "x")
        .status(1)
        .stderr_has("ACTIONS_ID_TOKEN_REQUEST_TOKEN is not set (referenced by env.runner[T])")
        .run();
}

#[test]
fn agent_is_required() {
    resolve_fails(
        &one(""),
        "$W/harness/h.yaml: invalid harness: agent field is required",
    );
}

#[test]
fn role_is_required() {
    harness(&one("agent: a\n"), "lint", &[])
        .status(1)
        .stderr_has("role field is required")
        .run();
}

#[test]
fn host_file_src_is_required() {
    resolve_fails(
        &one(yaml(
            r#"host_files:
  - dest: /x
"#,
        )),
        "host_files[0]: src is required",
    );
}

#[test]
fn a_duplicate_key_names_file_line_and_the_first() {
    let t = one(yaml(
        r#"env:
  runner:
    K: a
    K: hunter2-dup
"#,
    ));
    let e = resolve_fails(&t, "already defined at line 5").stderr_w();
    assert!(e.contains("$W/harness/h.yaml:6:"), "{e}");
}

#[test]
fn a_type_mismatch_names_file_line_column_and_field() {
    let t = one(yaml(
        r#"env:
  runner: [hunter2-type]
"#,
    ));
    let e = resolve_fails(
        &t,
        "parsing harness YAML: yaml: unmarshal errors: env.runner: expected a mapping",
    )
    .stderr_w();
    assert!(e.contains("$W/harness/h.yaml:4:11"), "{e}");
}

#[test]
fn host_files_must_be_a_sequence() {
    resolve_fails(
        &one(format!("{HEAD}host_files: {{}}\n")),
        "host_files: expected a sequence",
    );
}

#[test]
fn a_missing_harness_file_is_an_error() {
    resolve_fails(&Tree::fullsend(), "reading harness file");
}

#[test]
fn lenient_yaml_literal_scalars() {
    let t = Tree::fullsend();
    let h = t.write(
        "harness/a.yaml",
        yaml(
            r#"unknown_top: [1, 2]
env:
  runer: {X: y}
  sandbox:
    B: yes
    F: 1.50
    H: 0x1F
    NUL: ~
    E:
---
agent: other
"#,
        ),
    );
    let j = t.host(["harness", "resolve", p(&h)]).run().json();
    assert_eq!(j["env"]["runner"], serde_json::json!({}));
    let s = &j["env"]["sandbox"];
    assert_eq!(
        (s["B"].as_str(), s["F"].as_str(), s["H"].as_str()),
        (Some("yes"), Some("1.50"), Some("0x1F"))
    );
    assert_eq!((s["NUL"].as_str(), s["E"].as_str()), (Some(""), Some("")));
}

#[test]
fn base_chain_merges_relative_to_declaring_file() {
    let t = Tree::fullsend();
    t.write(
        "harness/common/root.yaml",
        yaml(
            r#"env:
  runner: {R: root, K: root}
  sandbox: {S: root}
host_files:
  - {src: a, dest: /tmp/d1, optional: true}
  - {src: b, dest: /tmp/d2, optional: true}
overlays:
  - when: "runtime.forge == ''"
    env: {runner: {O: base-overlay}}
"#,
        ),
    );
    t.write(
        "harness/common/mid.yaml",
        "base: root.yaml\nenv:\n  runner: {K: mid}\n",
    );
    let h = t.write(
        "harness/child.yaml",
        "base: common/mid.yaml\nenv:\n  sandbox: {C: child}\nhost_files:\n  - {src: c, dest: /tmp/d2, optional: true, expand: true}\noverlays:\n  - when: 'true'\n    env: {runner: {O: child-overlay}}\n",
    );
    let j = t.host(["harness", "resolve", p(&h)]).run().json();
    assert_eq!(
        j["env"]["runner"],
        // The child's overlay is applied last (each layer resolves its own).
        serde_json::json!({"K": "mid", "O": "child-overlay", "R": "root"})
    );
    assert_eq!(
        j["env"]["sandbox"],
        serde_json::json!({"C": "child", "S": "root"})
    );
    let srcs: Vec<&str> = j["host_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["src"].as_str().unwrap())
        .collect();
    assert_eq!(srcs, ["a", "c"]);
    assert_eq!(j["host_files"][1]["expand"], true);
}

/// A chain `harness/c.yaml` → b1 → … → b5 (child + 5 ancestors).
fn five_ancestors() -> Tree {
    let t = Tree::fullsend().file("harness/c.yaml", "base: b1.yaml\n");
    for i in 1..=5 {
        let next = if i < 5 {
            format!("base: b{}.yaml\n", i + 1)
        } else {
            HEAD.to_string()
        };
        t.write(&format!("harness/b{i}.yaml"), next);
    }
    t
}

#[test]
fn a_base_chain_of_five_ancestors_is_fine() {
    let t = five_ancestors();
    t.host(["harness", "resolve", &t.arg("harness/c.yaml")])
        .run();
}

#[test]
fn a_sixth_ancestor_fails() {
    let t = five_ancestors()
        .file("harness/b5.yaml", format!("{HEAD}base: b6.yaml\n"))
        .file("harness/b6.yaml", HEAD);
    t.host(["harness", "resolve", &t.arg("harness/c.yaml")])
        .status(1)
        .stderr_has("loading base chain: exceeded maximum base depth of 5")
        .run();
}

#[test]
fn a_base_cycle_is_an_error_naming_the_file() {
    let t = Tree::fullsend()
        .file("harness/x.yaml", "base: y.yaml\n")
        .file("harness/y.yaml", "base: ../harness/x.yaml\n");
    t.host(["harness", "resolve", &t.arg("harness/y.yaml")])
        .status(1)
        .stderr_has("circular base reference: ")
        .stderr_has("$W/harness/y.yaml")
        .run();
}

#[test]
fn a_harness_that_is_its_own_base_is_a_cycle() {
    resolve_fails(&one("base: h.yaml\n"), "circular base reference");
}

#[test]
fn a_missing_base_is_an_error() {
    resolve_fails(
        &one("base: nope.yaml\n"),
        "loading base chain: loading base harness ",
    );
}

#[test]
fn a_base_outside_the_workspace_is_refused() {
    resolve_fails(
        &one("base: ../../outside.yaml\n"),
        "base path \"../../outside.yaml\" escapes workspace root",
    );
}

#[test]
fn an_http_base_is_refused() {
    resolve_fails(
        &one("base: http://example.com/b.yaml\n"),
        "base URL scheme must be https, got http://",
    );
}

/// A URL base whose body is in `$W/cache` under its digest: the harness
/// names the digest in upper case.
fn url_base() -> Tree {
    let body = yaml(
        r#"env:
  runner: {FROM: url}
"#,
    );
    // sha256 via python for an independent check of our digest
    let digest = Tree::new()
        .command("python3")
        .args([
            "-c",
            "import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())",
        ])
        .stdin(&body)
        .run()
        .stdout
        .trim()
        .to_string();
    let t = one(format!(
        "base: https://example.com/h.yaml#sha256={}\n",
        digest.to_uppercase()
    ));
    t.write(&format!("cache/{digest}"), &body);
    t.write("digest", &digest);
    t
}

#[test]
fn a_url_base_needs_allowed_remote_resources() {
    resolve_fails(
        &url_base(),
        "URL base requires org-level allowed_remote_resources",
    );
}

#[test]
fn a_url_base_names_base_cache() {
    resolve_fails(&url_base(), "--base-cache");
}

#[test]
fn a_url_base_comes_from_the_cache() {
    let t = url_base();
    let j = harness(&t, "resolve", &["--base-cache", &t.arg("cache")])
        .run()
        .json();
    assert_eq!(j["env"]["runner"]["FROM"], "url");
}

#[test]
fn a_tampered_cache_file_fails_the_integrity_check() {
    let t = url_base();
    let entry = format!("cache/{}", t.read("digest"));
    let body = t.read(&entry);
    t.write(&entry, format!("{body}# x\n"));
    harness(&t, "resolve", &["--base-cache", &t.arg("cache")])
        .status(1)
        .stderr_has("integrity check failed")
        .run();
}

#[test]
fn a_url_base_without_a_digest_is_refused() {
    resolve_fails(&one("base: https://example.com/h.yaml\n"), "#sha256=");
}

/// A top-level K, a github block setting it, a gitlab block reading an
/// unset variable.
fn forges() -> Tree {
    one(yaml(
        r#"env:
  runner: {K: top}
forge:
  github:
    env: {runner: {K: gh}}
  gitlab:
    env: {runner: {K: "${UNSET_IN_GITLAB}"}}
"#,
    ))
}

#[test]
fn no_platform_applies_no_forge_block() {
    let j = harness(&forges(), "resolve", &[]).run().json();
    assert_eq!(
        (j["platform"].as_str(), j["env"]["runner"]["K"].as_str()),
        (Some(""), Some("top"))
    );
}

#[test]
fn the_platform_is_detected_github_first() {
    let j = harness(&forges(), "resolve", &[])
        .env("GITHUB_ACTIONS", "true")
        .env("GITLAB_CI", "true")
        .run()
        .json();
    assert_eq!(
        (j["platform"].as_str(), j["env"]["runner"]["K"].as_str()),
        (Some("github"), Some("gh"))
    );
}

#[test]
fn forge_flag_selects_the_block() {
    let j = harness(&forges(), "resolve", &["--forge", "github"])
        .run()
        .json();
    assert_eq!(j["env"]["runner"]["K"], "gh");
}

#[test]
fn the_selected_block_is_validated() {
    harness(&forges(), "resolve", &[])
        .env("GITLAB_CI", "true")
        .status(1)
        .stderr_has("UNSET_IN_GITLAB is not set (referenced by env.runner[K])")
        .run();
}

#[test]
fn every_forge_block_is_checked_selected_or_not() {
    // As the Go code does: with no platform too.
    let t = one(yaml(
        r#"forge:
  github: {}
  gitlab:
    host_files: [{dest: /tmp/x}]
"#,
    ));
    for extra in [&[][..], &["--forge", "github"][..]] {
        harness(&t, "resolve", extra)
            .status(1)
            .stderr_has("invalid harness: forge.gitlab.host_files[0]: src is required")
            .run();
    }
}

#[test]
fn an_unknown_forge_flag_lists_the_platforms() {
    harness(&forges(), "resolve", &["--forge", "bitbucket"])
        .status(1)
        .stderr_has(
            "--forge: \"bitbucket\" is not a valid forge platform (valid: github, gitlab, jira)",
        )
        .run();
}

#[test]
fn a_forge_flag_without_its_block_lists_the_configured_ones() {
    harness(&forges(), "resolve", &["--forge", "jira"])
        .status(1)
        .stderr_has("resolving forge config: forge platform \"jira\" not configured (available: github, gitlab)")
        .run();
}

#[test]
fn an_unknown_forge_key_is_an_error() {
    resolve_fails(
        &one(yaml(
            r#"forge:
  gihtub: {}
"#,
        )),
        "forge: unrecognized key \"gihtub\" (valid: github, gitlab, jira)",
    );
}

/// Overlays keyed on the event, the config and the runtime.
fn overlays() -> Tree {
    one(yaml(
        r#"env:
  runner: {K: top}
overlays:
  - when: "event.kind == 'pull_request'"
    env: {runner: {K: pr}}
  - when: "config.forge == 'gitlab' && runtime.forge == 'gitlab'"
    env: {runner: {K: gl}}
  - when: "event.number > 3.0"
    env: {runner: {K: big}}
"#,
    ))
    .file("pr.json", r#"{"kind": "pull_request"}"#)
    .file("n.json", r#"{"kind": "push", "number": 4}"#)
    .file("c.yaml", "forge: gitlab\n")
}

#[test]
fn an_overlay_matches_the_event() {
    let t = overlays();
    let j = harness(&t, "resolve", &["--event", &t.arg("pr.json")])
        .run()
        .json();
    assert_eq!(j["env"]["runner"]["K"], "pr");
}

#[test]
fn without_an_event_an_event_overlay_is_a_warned_non_match() {
    // event.kind is an error → non-match with a warning naming the index;
    // the config sets the platform.
    let t = overlays();
    let j = harness(&t, "resolve", &["--config", &t.arg("c.yaml")])
        .stderr_has("overlay[0].when eval failed")
        .run()
        .json();
    assert_eq!(j["platform"], "gitlab");
    assert_eq!(j["env"]["runner"]["K"], "gl");
    assert_eq!(j["warnings"], serde_json::json!([]));
}

#[test]
fn event_file_is_the_event() {
    let t = overlays();
    let j = harness(&t, "resolve", &["--event-file", &t.arg("n.json")])
        .run()
        .json();
    assert_eq!(j["env"]["runner"]["K"], "big");
}

#[test]
fn a_non_bool_when_is_a_load_error() {
    resolve_fails(
        &one(yaml(
            r#"overlays:
  - when: "event.flag"
"#,
        )),
        "overlays[0].when must evaluate to bool, got dyn",
    );
}

#[test]
fn a_when_that_does_not_compile_is_a_load_error() {
    resolve_fails(
        &one(yaml(
            r#"overlays:
  - when: "event.a =="
"#,
        )),
        "overlays[0].when: ",
    );
}

#[test]
fn forge_and_overlays_cannot_coexist() {
    resolve_fails(
        &one(yaml(
            r#"forge: {}
overlays:
  - when: 'true'
"#,
        )),
        "forge and overlays cannot coexist in the same harness",
    );
}

/// A harness reading FROM_FILE; a github block.
fn reads_from_file() -> Tree {
    one(yaml(
        r#"env:
  sandbox: {T: "${FROM_FILE}"}
forge:
  github: {env: {runner: {G: yes}}}
"#,
    ))
}

/// `harness resolve --env-file $W/NAME` with NAME holding `body`.
fn with_env_file(t: &Tree, name: &str, body: &str) -> Run {
    t.write(name, body);
    harness(t, "resolve", &["--env-file", &t.arg(name)])
}

#[test]
fn env_files_load_first_later_wins() {
    let t = reads_from_file()
        .file("one.env", "FROM_FILE=first\nGITHUB_ACTIONS=true\n")
        .file("two.env", "export FROM_FILE='second'\n");
    let j = harness(
        &t,
        "resolve",
        &[
            "--env-file",
            &t.arg("one.env"),
            "--env-file",
            &t.arg("two.env"),
        ],
    )
    .run()
    .json();
    assert_eq!(j["env"]["sandbox"]["T"], "second");
    assert_eq!(j["platform"], "github");
    assert_eq!(j["env"]["runner"]["G"], "yes");
}

#[test]
fn an_env_file_line_without_equals_is_skipped_with_a_warning() {
    // fullsend's `envfile` grammar: naming the file and line, never the text.
    with_env_file(
        &reads_from_file(),
        "skip.env",
        "FROM_FILE=1\nthis line is ignored hunter2-envline\n",
    )
    .stderr_has("$W/skip.env:2: line skipped")
    .stderr_lacks("hunter2")
    .run();
}

#[test]
fn an_invalid_env_file_name_is_an_error_naming_file_line_and_prefix() {
    with_env_file(
        &reads_from_file(),
        "bad.env",
        "FROM_FILE=1\nTOKEN hunter2-envline=x\n",
    )
    .status(1)
    .stderr_has("$W/bad.env:2: invalid env var name \"TOKEN…\"")
    .stderr_lacks("hunter2")
    .run();
}

#[test]
fn env_files_use_the_envfile_grammar() {
    // Not the operator one: leading space kept, text after a closing quote
    // dropped.
    let t = reads_from_file();
    let j = with_env_file(&t, "g.env", "FROM_FILE= \"a\"b\n")
        .run()
        .json();
    assert_eq!(j["env"]["sandbox"]["T"], " \"a\"b");
    let j = with_env_file(&t, "g2.env", "FROM_FILE=\"a\"b\n")
        .run()
        .json();
    assert_eq!(j["env"]["sandbox"]["T"], "a");
}

#[test]
fn a_missing_env_file_is_an_error() {
    harness(
        &reads_from_file(),
        "resolve",
        &["--env-file", "/nonexistent/x.env"],
    )
    .status(1)
    .stderr_has("loading env file /nonexistent/x.env")
    .run();
}

/// A required host file that is missing, an optional one, one under an
/// unset-looking FULLSEND_DIR path.
fn missing_host_file() -> Tree {
    one(yaml(
        r#"host_files:
  - {src: env/none.env, dest: /tmp/d}
  - {src: env/opt.env, dest: /tmp/e, optional: true}
  - {src: "${FULLSEND_DIR}/x", dest: /tmp/f}
"#,
    ))
}

#[test]
fn a_missing_host_file_fails_resolve_run_and_sandbox_env() {
    // In every command, naming only the first.
    let t = missing_host_file();
    for (sub, args) in [
        ("resolve", &[][..]),
        ("sandbox-env", &[]),
        ("run", &["--", "true"]),
    ] {
        harness(&t, sub, args)
            .status(1)
            .stderr_has("validating files: host_files[0].src: stat $W/env/none.env: no such file or directory")
            .stderr_lacks("host_files[1]")
            .stderr_lacks("host_files[2]")
            .run();
    }
}

#[test]
fn a_missing_host_file_is_a_lint_finding() {
    harness(&missing_host_file(), "lint", &[])
        .status(1)
        .stdout("error: host_files[0].src: stat $W/env/none.env: no such file or directory\n")
        .run();
}

#[test]
fn a_host_file_that_appears_resolves() {
    let t = missing_host_file().file("env/none.env", "X=1\n");
    harness(&t, "resolve", &[]).run();
}

#[test]
fn lint_prints_diagnostics_and_exits_zero() {
    harness(&one(format!("{HEAD}runner_env: {{A: b}}\n")), "lint", &[])
        .stdout(
            "warning: runner_env: runner_env is deprecated; use env.runner instead (see ADR 0055)\n",
        )
        .run();
}

#[test]
fn lint_of_a_clean_harness_prints_nothing() {
    harness(&one(HEAD), "lint", &[]).stdout("").run();
}

/// runner_env, env.runner with declared reserved keys and a host read.
fn runner() -> Tree {
    one(yaml(
        r#"runner_env: {A: re, B: re}
env:
  runner:
    B: er
    TRACEPARENT: declared
    FULLSEND_GCP_OIDC_URL: declared
    FROM_HOST: "${HOST_V}"
"#,
    ))
    .file("run.env", "FROM_ENV_FILE=ef\nB=from-file\n")
}

#[test]
fn run_uses_host_env_plus_effective_runner_env() {
    let t = runner();
    let out = harness(
        &t,
        "run",
        &["--env-file", &t.arg("run.env"), "--", "sh", "-c", "env"],
    )
    .env("HOST_V", "hv")
    .env("TRACEPARENT", "host-tp")
    .env("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "oidc")
    .env("B", "host")
    .stdout_lacks("ACTIONS_ID_TOKEN_REQUEST_TOKEN")
    .stdout_lacks("FULLSEND_GCP_OIDC_URL")
    .run()
    .stdout;
    let lines: Vec<&str> = out.lines().collect();
    for want in [
        "A=re",
        "B=er",
        "FROM_HOST=hv",
        "HOST_V=hv",
        "TRACEPARENT=host-tp",
        "FROM_ENV_FILE=ef",
    ] {
        assert!(lines.contains(&want), "missing {want} in {out}");
    }
}

#[test]
fn run_passes_the_childs_exit_status() {
    harness(&runner(), "run", &["--", "sh", "-c", "exit 7"])
        .env("HOST_V", "")
        .status(7)
        .run();
}

#[test]
fn run_of_a_missing_command_is_127() {
    harness(&runner(), "run", &["--", "no-such-cmd-xyz"])
        .env("HOST_V", "")
        .status(127)
        .run();
}

#[test]
fn run_with_a_load_error_exits_1_without_running() {
    harness(&one("agent: a\n"), "run", &["--", "sh", "-c", "echo ran"])
        .status(1)
        .stdout("")
        .run();
}

/// Sandbox values to quote, a reserved key, an invalid name.
fn sandbox() -> Tree {
    one(yaml(
        r#"env:
  sandbox:
    Z: "it's"
    A: "$. `y`"
    HOME: /h
    bad-key: v
"#,
    ))
}

/// Through the library: the skipped sandbox keys are warnings in one
/// shape, `Note`s on the run's assembly (what the CLI prints with its one
/// printer), as well as the JSON's `warnings`; a failure is a typed error.
#[test]
fn library_records_warnings_as_notes_and_types_its_errors() {
    use agentenv::core::Level;
    use agentenv::harness::{resolve, Error, Options};
    let t = sandbox();
    let opts = Options {
        file: t.path("harness/h.yaml"),
        ..Options::default()
    };
    let r = resolve(&opts, &agentenv::core::Env::new()).unwrap();
    let notes: Vec<(Level, &str)> = r
        .assembly
        .notes()
        .iter()
        .map(|n| (n.level, n.text.as_str()))
        .collect();
    assert_eq!(
        notes,
        vec![
            (
                Level::Warning,
                "env.sandbox key \"HOME\" is reserved for runner infrastructure; skipping"
            ),
            (
                Level::Warning,
                "env.sandbox key \"bad-key\" is not a valid POSIX identifier; skipping"
            ),
        ]
    );
    assert_eq!(r.warnings, notes.iter().map(|n| n.1).collect::<Vec<_>>());
    let missing = Options {
        file: t.path("harness/missing.yaml"),
        ..Options::default()
    };
    let err = resolve(&missing, &agentenv::core::Env::new()).unwrap_err();
    assert!(matches!(err, Error::Load(_)), "{err:?}");
    assert_eq!(err.to_string(), err.message());
}

#[test]
fn sandbox_env_prints_export_lines_and_warns_per_skipped_key() {
    harness(&sandbox(), "sandbox-env", &[])
        .stdout("export A='$. `y`'\nexport Z='it'\\''s'\n")
        .stderr_has("env.sandbox key \"HOME\" is reserved for runner infrastructure; skipping")
        .stderr_has("env.sandbox key \"bad-key\" is not a valid POSIX identifier; skipping")
        .run();
}

#[test]
fn sandbox_env_export_lines_sourced_by_sh_give_back_the_values() {
    let sh = support::which("dash")
        .or_else(|| support::tool("sh"))
        .expect("sh");
    let t = sandbox();
    harness(&t, "sandbox-env", &["-o", &t.arg("out.env")]).run();
    assert_eq!(
        fs::metadata(t.path("out.env"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    t.command(sh)
        .args([
            "-c",
            ". \"$1\"; printf '%s|%s' \"$A\" \"$Z\"",
            "sh",
            &t.arg("out.env"),
        ])
        .stdout("$. `y`|it's")
        .run();
}

#[test]
fn sandbox_env_dotenv_reads_back_with_the_projects_grammar() {
    let t = sandbox();
    harness(
        &t,
        "sandbox-env",
        &["--format", "dotenv", "-o", &t.arg("out2.env")],
    )
    .run();
    let parsed = agentenv::dotenv::parse_bytes(&fs::read(t.path("out2.env")).unwrap());
    let got: Vec<(String, String)> = parsed
        .entries
        .into_iter()
        .map(|e| (e.key, e.value))
        .collect();
    assert_eq!(
        got,
        [
            ("A".to_string(), "$. `y`".to_string()),
            ("Z".to_string(), "it's".to_string())
        ]
    );
}

#[test]
fn sandbox_env_lists_its_formats() {
    harness(&sandbox(), "sandbox-env", &["--format", "yaml"])
        .status(1)
        .stderr_has("[possible values: export, dotenv, github, docker]")
        .run();
}

#[test]
fn sandbox_env_dotenv_refuses_unrepresentable_values() {
    let t = Tree::fullsend();
    // Find a value the grammar cannot carry (the writer decides).
    let candidates = ["'\"`\\n\r", "a'b\"c`d\r\n\\n", "\r'\"`\\"];
    let Some(v) = candidates
        .iter()
        .find(|v| agentenv::dotenv::write_value("K", v).is_none())
    else {
        panic!("no unrepresentable candidate");
    };
    let yaml_v = serde_json::to_string(v).unwrap(); // JSON string is a YAML double-quoted scalar
    let h = t.write(
        "harness/s.yaml",
        format!("{HEAD}env:\n  sandbox:\n    OK: fine\n    WEIRD: {yaml_v}\n"),
    );
    let out = t.root().join("o.env");
    let e = t
        .host([
            "harness",
            "sandbox-env",
            p(&h),
            "--format",
            "dotenv",
            "-o",
            p(&out),
        ])
        .status(1)
        .stderr_has("env.sandbox[WEIRD]")
        .run()
        .stderr;
    assert!(!out.exists());
    assert!(!e.contains("fine"));
}

#[test]
fn canary_secrets_never_reach_stderr() {
    const C: &str = "canary-XYZ-7731";
    let t = Tree::fullsend();
    type Case<'a> = (Vec<String>, Vec<(&'a str, &'a str)>);
    let mut cases: Vec<Case> = Vec::new();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    // YAML: duplicate key, type mismatch, bad bool, syntax error, unset var
    let files = [
        format!("{HEAD}env:\n  runner:\n    K: {C}\n    K: {C}\n"),
        format!("{HEAD}env: \"{C}\"\n"),
        format!("{HEAD}host_files:\n  - {{src: a, dest: b, expand: {C}}}\n"),
        format!("{HEAD}env: {{runner: [{C}\n"),
        format!("{HEAD}env:\n  sandbox:\n    A: \"{C} ${{UNSET_CANARY}}\"\n"),
        format!("{HEAD}k: @{C}\n"),
        format!(
            "{HEAD}overlays:\n  - when: \"event.tok + 1 == 2\"\n    env: {{runner: {{A: {C}}}}}\n"
        ),
        format!("{HEAD}overlays:\n  - when: \"event.tok == '{C}\"\n"),
        format!("{HEAD}base: \"https://u:{C}@example.com/x.yaml?sig={C}#sha256=00\"\n"),
        format!("{HEAD}env:\n  sandbox:\n    OK: \"{C}\"\n"),
    ];
    for (i, body) in files.iter().enumerate() {
        let h = t.write(&format!("harness/c{i}.yaml"), body);
        cases.push((s(&["harness", "resolve", p(&h)]), vec![]));
    }
    let h = t.write(
        "harness/ok.yaml",
        yaml(
            r#"overlays:
  - when: "event.tok + 1 == 2"
"#,
        ),
    );
    let ev = t.write("ev.json", format!("{{\"tok\": \"{C}\"}}"));
    cases.push((s(&["harness", "resolve", p(&h), "--event", p(&ev)]), vec![]));
    let bad_ev = t.write("bad.json", format!("{{\"tok\": \"{C}\" x"));
    cases.push((
        s(&["harness", "resolve", p(&h), "--event", p(&bad_ev)]),
        vec![],
    ));
    let bad_cfg = t.write("bad.yaml", format!("forge: [{C}\n"));
    cases.push((
        s(&["harness", "resolve", p(&h), "--config", p(&bad_cfg)]),
        vec![],
    ));
    let bad_cfg_json = t.write("badc.json", format!("{{\"forge\": {C}}}"));
    cases.push((
        s(&["harness", "resolve", p(&h), "--config", p(&bad_cfg_json)]),
        vec![],
    ));
    let bad_env = t.write(
        "bad.env",
        format!("SECRET={C}\n{C} not an assignment\nX=\"{C}\n"),
    );
    cases.push((
        s(&["harness", "resolve", p(&h), "--env-file", p(&bad_env)]),
        vec![],
    ));
    let runh = t.write(
        "harness/run.yaml",
        format!("{HEAD}env:\n  runner:\n    S: \"{C}\"\n"),
    );
    cases.push((
        s(&["harness", "run", p(&runh), "--", "no-such-cmd-canary"]),
        vec![("SECRET", C)],
    ));
    cases.push((
        s(&[
            "harness",
            "sandbox-env",
            p(&runh),
            "-o",
            "/nonexistent/dir/x",
        ]),
        vec![("SECRET", C)],
    ));
    cases.push((
        s(&["-vv", "harness", "lint", p(&runh)]),
        vec![("SECRET", C)],
    ));
    for (args, env) in cases {
        t.host(&args)
            .envs(env)
            .any_status()
            .stderr_lacks(C)
            .stderr_lacks("XYZ-7731")
            .run();
    }
}

// ---- fullsend main as of 2026-10-01 ---------------------------------------

#[test]
fn s11_1_2_host_files_merge_by_dest_replacing_the_last() {
    let t = Tree::fullsend();
    t.write(
        "harness/base.yaml",
        yaml(
            r#"host_files:
  - {src: z, dest: /tmp/a, optional: true}
"#,
        ),
    );
    let h = t.write(
        "harness/c.yaml",
        "base: base.yaml\nhost_files:\n  - {src: x, dest: /tmp/b, optional: true}\n  - {src: y, dest: /tmp/b, optional: true, expand: true}\noverlays:\n  - when: 'true'\n    host_files:\n      - {src: o1, dest: /tmp/c, optional: true}\n      - {src: o2, dest: /tmp/c, optional: true}\n",
    );
    let j = t.host(["harness", "resolve", p(&h)]).run().json();
    let got: Vec<(&str, &str, bool)> = j["host_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["src"].as_str().unwrap(),
                f["dest"].as_str().unwrap(),
                f["expand"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("z", "/tmp/a", false),
            ("y", "/tmp/b", true),
            ("o2", "/tmp/c", false)
        ]
    );
}

#[test]
fn s11_2_1_every_matching_overlay_merges_later_wins() {
    let t = Tree::fullsend();
    let h = t.write(
        "harness/o.yaml",
        yaml(
            r#"env:
  runner: {K: top, T: top}
overlays:
  - when: 'true'
    env: {runner: {K: first, A: first}}
  - when: "event.missing == 1"
    env: {runner: {K: err}}
  - when: "runtime.forge == ''"
    env: {runner: {K: third}, sandbox: {S: third}}
  - when: 'false'
    env: {runner: {K: never}}
"#,
        ),
    );
    let o = t.host(["harness", "resolve", p(&h)]).any_status().run();
    assert_eq!(o.status, Some(0), "{}", o.stderr.clone());
    let j: Value = serde_json::from_slice(&o.stdout_bytes).unwrap();
    assert_eq!(
        j["env"]["runner"],
        serde_json::json!({"A": "first", "K": "third", "T": "top"})
    );
    assert_eq!(j["env"]["sandbox"]["S"], "third");
    assert!(o
        .stderr
        .clone()
        .contains("harness: overlay[1].when eval failed: no such key"));
}

mod s11_2_2_each_base_layer_resolves_its_own_blocks_first {
    use super::*;

    /// A base with forge blocks, a child with an overlay; the child's top
    /// level sets K.
    fn chain() -> Tree {
        Tree::fullsend()
            .file(
                "harness/base.yaml",
                yaml(
                    r#"env:
  runner: {K: base, B: base}
forge:
  github: {env: {runner: {K: base-forge, F: base-forge}}}
  gitlab: {env: {runner: {G: gl}}}
"#,
                ),
            )
            .file(
                "harness/child.yaml",
                r#"base: base.yaml
env:
  runner: {K: child}
overlays:
  - when: 'true'
    env: {runner: {O: child-overlay}}
"#,
            )
    }

    fn resolve(t: &Tree, file: &str, args: &[&str]) -> serde_json::Value {
        t.host(["harness", "resolve", &t.arg(file)])
            .args(args)
            .run()
            .json()
    }

    #[test]
    fn the_childs_top_level_wins_over_the_bases_forge_block() {
        let j = resolve(&chain(), "harness/child.yaml", &["--forge", "github"]);
        assert_eq!(
            j["env"]["runner"],
            serde_json::json!({"B": "base", "F": "base-forge", "K": "child", "O": "child-overlay"})
        );
    }

    #[test]
    fn a_base_forge_map_without_the_platform_is_dropped_silently() {
        // forge in the base, overlays in the child: fine (exclusivity per
        // file).
        let j = resolve(&chain(), "harness/child.yaml", &["--forge", "jira"]);
        assert_eq!(j["env"]["runner"]["K"], "child");
        assert!(j["env"]["runner"].get("F").is_none());
    }

    #[test]
    fn no_platform_drops_every_base_forge_block() {
        let j = resolve(&chain(), "harness/child.yaml", &[]);
        assert_eq!(
            j["env"]["runner"],
            serde_json::json!({"B": "base", "K": "child", "O": "child-overlay"})
        );
    }

    #[test]
    fn a_child_cannot_null_a_bases_platform_block() {
        let t = chain().file(
            "harness/null.yaml",
            "base: base.yaml\nforge:\n  github: ~\n",
        );
        let j = resolve(&t, "harness/null.yaml", &["--forge", "github"]);
        assert_eq!(j["env"]["runner"]["F"], "base-forge");
    }

    #[test]
    fn a_bases_overlay_is_evaluated_in_the_base_layer() {
        // Overlays are not concatenated across files: under the child's top
        // level.
        let t = Tree::fullsend()
            .file(
                "harness/ob.yaml",
                yaml(
                    r#"overlays:
  - when: 'true'
    env: {runner: {K: base-overlay, X: base-overlay}}
"#,
                ),
            )
            .file(
                "harness/oc.yaml",
                "base: ob.yaml\nenv:\n  runner: {K: child}\n",
            );
        let j = resolve(&t, "harness/oc.yaml", &[]);
        assert_eq!(
            j["env"]["runner"],
            serde_json::json!({"K": "child", "X": "base-overlay"})
        );
    }

    #[test]
    fn errors_in_a_base_read_invalid_base_harness() {
        let t = Tree::fullsend()
            .file(
                "harness/badbase.yaml",
                yaml(
                    r#"forge: {}
overlays:
  - when: 'true'
"#,
                ),
            )
            .file("harness/bc.yaml", "base: badbase.yaml\n");
        t.host(["harness", "resolve", &t.arg("harness/bc.yaml")])
            .status(1)
            .stderr_has("loading base chain: ")
            .stderr_has(
                "invalid base harness: forge and overlays cannot coexist in the same harness",
            )
            .stderr_has("badbase.yaml")
            .run();
    }
}

#[test]
fn s11_2_3_unset_variables_are_reported_together() {
    let t = Tree::fullsend();
    let h = t.write(
        "harness/u.yaml",
        yaml(
            r#"runner_env: {R: "${U2}"}
env:
  runner: {A: "${U1}", B: "${U2}${SET}"}
  sandbox: {S: "${U1}"}
host_files:
  - {src: "${U3}/f", dest: /tmp/f}
"#,
        ),
    );
    let e = t.host(["harness", "resolve", p(&h)]).env("SET", "").status(1).stderr_has("validating env: 3 unresolved host variable(s):\n    U1 is not set (referenced by env.runner[A], env.sandbox[S])\n    U2 is not set (referenced by env.runner[B], runner_env[R])\n    U3 is not set (referenced by host_files[0].src)").run().stderr;
    assert!(!e.contains("SET is not set"), "{e}");
}

#[test]
fn s11_2_4_the_wider_deny_list() {
    let t = Tree::fullsend();
    let denied = [
        "FULLSEND_GCP_PROJECT_ID",
        "FULLSEND_GCP_WIF_PROVIDER",
        "FULLSEND_OPENAI_AUDIENCE",
        "FULLSEND_OPENAI_IDENTITY_PROVIDER_ID",
        "FULLSEND_OPENAI_SERVICE_ACCOUNT_ID",
        "OPENAI_API_KEY",
        "FULLSEND_OPENAI_API_KEY",
        "FULLSEND_TRIGGER_TOKEN",
        "FULLSEND_WEBHOOK_SECRET",
        "GH_WORKFLOW_TOKEN",
    ];
    for k in denied {
        // counts as unset for the validation
        let h = t.write(
            "harness/d.yaml",
            format!("{HEAD}env:\n  runner: {{A: \"${{{k}}}\"}}\n"),
        );
        t.host(["harness", "resolve", p(&h)])
            .env(k, "v")
            .status(1)
            .stderr_has(format!("{k} is not set (referenced by env.runner[A])"))
            .run();
        // expands to "" unbraced, is a reserved sandbox key, and is
        // stripped from the run child even when declared
        let h = t.write(
            "harness/d.yaml",
            format!(
                "{HEAD}env:\n  runner: {{A: \"x${k}-y\", {k}: declared}}\n  sandbox: {{{k}: s}}\n"
            ),
        );
        let o = t
            .host(["harness", "resolve", p(&h)])
            .env(k, "v")
            .any_status()
            .run();
        assert_eq!(o.status, Some(0), "{}", o.stderr.clone());
        let j: Value = serde_json::from_slice(&o.stdout_bytes).unwrap();
        assert_eq!(j["env"]["runner"]["A"], "x-y");
        assert_eq!(j["sandbox_lines"], serde_json::json!([]));
        assert_eq!(
            j["warnings"][0],
            format!("env.sandbox key \"{k}\" is reserved for runner infrastructure; skipping")
        );
        let o = t
            .host(["harness", "run", p(&h), "--", "env"])
            .env(k, "v")
            .any_status()
            .run();
        assert_eq!(o.status, Some(0), "{}", o.stderr.clone());
        assert!(!o.stdout.clone().contains(&format!("{k}=")), "{k}");
    }
}

#[test]
fn s11_2_5_new_reserved_sandbox_keys() {
    let t = Tree::fullsend();
    let h = t.write(
        "harness/r.yaml",
        yaml(
            r#"env:
  sandbox:
    FULLSEND_TIMEOUT_MINUTES: a
    FULLSEND_ITERATION_DEADLINE: b
    TRACEPARENT: c
    FULLSEND_RUNNER_PATH: d
    KEPT: e
"#,
        ),
    );
    let j = t.host(["harness", "resolve", p(&h)]).run().json();
    assert_eq!(j["sandbox_lines"], serde_json::json!(["export KEPT='e'"]));
    assert_eq!(j["warnings"].as_array().unwrap().len(), 4);
}

#[test]
fn s11_2_6_host_file_dest_rules() {
    let t = Tree::fullsend();
    for (dest, msg) in [
        (
            "rel/x",
            "host_files[0]: dest \"rel/x\" must be an absolute path",
        ),
        (
            "/sandbox/a/../b",
            "host_files[0]: dest \"/sandbox/a/../b\" must not contain a \"..\" path component",
        ),
        (
            "/home/x",
            "host_files[0]: dest \"/home/x\" must be under /sandbox/ or /tmp/",
        ),
        (
            "/sandbox/workspace/.env",
            "host_files[0]: dest \"/sandbox/workspace/.env\" is reserved for the runner",
        ),
        (
            "/sandbox/workspace/bin/fullsend",
            "host_files[0]: dest \"/sandbox/workspace/bin/fullsend\" is reserved for the runner",
        ),
        (
            "/sandbox/.venv/bin/python3",
            "host_files[0]: dest \"/sandbox/.venv/bin/python3\" is reserved for the runner",
        ),
    ] {
        let h = t.write(
            "harness/d.yaml",
            format!("{HEAD}host_files:\n  - {{src: a, dest: \"{dest}\", optional: true}}\n"),
        );
        t.host(["harness", "resolve", p(&h)])
            .status(1)
            .stderr_has(format!("invalid harness: {msg}"))
            .run();
    }
    // inside blocks, with their prefixes; before ${} validation
    let h = t.write(
        "harness/b.yaml",
        yaml(
            r#"forge:
  gitlab:
    host_files: [{src: a, dest: /etc/x}]
"#,
        ),
    );
    t.host(["harness", "resolve", p(&h)])
        .status(1)
        .stderr_has("forge.gitlab.host_files[0]: dest \"/etc/x\" must be under /sandbox/ or /tmp/")
        .run();
    let h = t.write(
        "harness/o.yaml",
        yaml(
            r#"env: {runner: {A: "${UNSET}"}}
overlays:
  - when: 'false'
    host_files: [{src: a, dest: /sandbox/claude-config/x}]
"#,
        ),
    );
    t.host(["harness", "resolve", p(&h)]).status(1).stderr_has("overlays[0].host_files[0]: dest \"/sandbox/claude-config/x\" is reserved for the runner").run();
    let ok = t.write(
        "harness/ok.yaml",
        yaml(
            r#"host_files:
  - {src: a, dest: /sandbox/workspace/.env.d/a.env, optional: true}
  - {src: b, dest: /sandbox/workspace/bin/my-tool.sh, optional: true}
"#,
        ),
    );
    t.host(["harness", "resolve", p(&ok)]).run();
}

/// A base with a validation loop; a child that sets only its schema.
fn validation_loop_chain() -> Tree {
    Tree::fullsend()
        .file(
            "harness/base.yaml",
            format!("{HEAD}validation_loop: {{script: s.sh, preflight_check: \"${{PRE}}\"}}\n"),
        )
        .file(
            "harness/h.yaml",
            "base: base.yaml\nvalidation_loop: {schema: \"${SCHEMA_DIR}/x.json\"}\n",
        )
}

#[test]
fn s11_2_7_validation_loop_merges_field_by_field() {
    // The child sets only schema: script and preflight come from the base.
    resolve_fails(
        &validation_loop_chain(),
        "2 unresolved host variable(s):\n    PRE is not set (referenced by validation_loop.preflight_check)\n    SCHEMA_DIR is not set (referenced by validation_loop.schema)",
    );
    harness(&validation_loop_chain(), "resolve", &[])
        .env("PRE", "")
        .env("SCHEMA_DIR", "")
        .run();
}

#[test]
fn s11_2_7_a_forge_block_may_omit_script_when_the_top_level_has_one() {
    let t = one(yaml(
        r#"validation_loop: {script: s.sh}
forge:
  github:
    validation_loop: {schema: "${GH_SCHEMA}"}
"#,
    ));
    harness(&t, "resolve", &["--forge", "github"])
        .status(1)
        .stderr_has("GH_SCHEMA is not set (referenced by validation_loop.schema)")
        .run();
}

#[test]
fn s11_2_7_a_forge_validation_loop_needs_a_script_somewhere() {
    resolve_fails(
        &one(yaml(
            r#"forge:
  github:
    validation_loop: {schema: x}
"#,
        )),
        "forge.github.validation_loop.script is required when validation_loop is set",
    );
}

#[test]
fn s11_2_8_the_config_map_cel_sees() {
    let t = Tree::fullsend();
    let h = t.write(
        "harness/c.yaml",
        yaml(
        r#"overlays:
  - when: "!has(config.mint_url) && !has(config.inference)"
    env: {runner: {HIDDEN: 'yes'}}
  - when: "config.agents[0].runtime == 'claude' && !has(config.agents[0].source) && config.agents[0].name == 'n'"
    env: {runner: {AGENT: 'yes'}}
  - when: "config.create_issues.allow_orgs == ['o'] && config.status_notifications.start == 's'"
    env: {runner: {NESTED: 'yes'}}
  - when: "has(config.kill_switch)"
    env: {runner: {KILL: 'yes'}}
"#,
    ),
    );
    let c = t.write(
        "config.yaml",
        "mint_url: https://mint\ninference: {project: p}\nkill_switch: false\nagents:\n  - {source: '', name: n, runtime: claude}\ncreate_issues: {allow_targets: {orgs: [o]}}\nstatus_notifications: {comment: {start: s}}\n",
    );
    let j = t
        .host(["harness", "resolve", p(&h), "--config", p(&c)])
        .run()
        .json();
    assert_eq!(
        j["env"]["runner"],
        serde_json::json!({"AGENT": "yes", "HIDDEN": "yes", "NESTED": "yes"})
    );
}

#[test]
fn s11_2_9_lint_warnings() {
    let t = Tree::fullsend();
    let h = t.write(
        "harness/l.yaml",
        yaml(
            r#"allowed_remote_resources: ['https://example.com/']
env:
  runner: {U: "${GITHUB_ISSUE_URL}"}
  sandbox: {S: "x $GITHUB_ISSUE_URL"}
runner_env: {R: "${GITHUB_ISSUE_URL}"}
"#,
        ),
    );
    let o = t
        .host(["harness", "lint", p(&h)])
        .env("GITHUB_ISSUE_URL", "u")
        .any_status()
        .run();
    assert_eq!(o.status, Some(0), "{}", o.stderr.clone());
    assert_eq!(
        o.stdout.clone(),
        "warning: runner_env: runner_env is deprecated and env.runner takes precedence; migrate to env.runner (see ADR 0055)\n\
         warning: allowed_remote_resources: allowed_remote_resources is set without allow_runtime_fetch: true; runtime fetching is enabled for backward compatibility, but this is deprecated — add allow_runtime_fetch: true to the harness to silence this warning\n\
         warning: env.runner.U: GITHUB_ISSUE_URL is deprecated; use TRIGGER_ENTITY_URL instead (see #6610)\n\
         warning: env.sandbox.S: GITHUB_ISSUE_URL is deprecated; use TRIGGER_ENTITY_URL instead (see #6610)\n"
    );
}

/// A base whose trigger reads `runtime`, which triggers do not declare.
fn trigger_base() -> Tree {
    Tree::fullsend().file(
        "harness/base.yaml",
        format!("{HEAD}trigger: \"runtime.forge == 'github'\"\n"),
    )
}

#[test]
fn s11_2_10_trigger_is_inherited_from_a_base() {
    let t = trigger_base().file("harness/h.yaml", "base: base.yaml\n");
    resolve_fails(
        &t,
        "invalid harness: trigger: undeclared reference to 'runtime' at 1:1",
    );
}

#[test]
fn s11_2_10_a_childs_own_trigger_replaces_the_bases() {
    let t = trigger_base().file(
        "harness/h.yaml",
        "base: base.yaml\ntrigger: \"event.x == 1\"\n",
    );
    harness(&t, "resolve", &[]).run();
}

#[test]
fn s11_2_11_the_run_childs_environment() {
    let t = Tree::fullsend();
    let h = t.write(
        "harness/r.yaml",
        yaml(
            r#"env:
  runner:
    JIRA_USER_EMAIL: "${JIRA_USER_EMAIL}"
    GITLAB_TOKEN: declared
    FULLSEND_FORGE_TOKEN: declared
    FULLSEND_GITLAB_HOST: declared
    KEEP: "${JIRA_TOKEN}"
"#,
        ),
    );
    let o = t
        .host(["harness", "run", p(&h), "--", "env"])
        .env("PYTHONDONTWRITEBYTECODE", "0")
        .env("JIRA_TOKEN", "jt")
        .env("JIRA_USER_EMAIL", "je")
        .env("OTEL_EXPORTER_OTLP_HEADERS", "h")
        .env("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "h")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "e")
        .env("GITLAB_TOKEN", "host-gl")
        .any_status()
        .run();
    assert_eq!(o.status, Some(0), "{}", o.stderr.clone());
    let out = o.stdout.clone();
    let lines: Vec<&str> = out.lines().collect();
    for want in [
        "PYTHONDONTWRITEBYTECODE=1",
        "JIRA_USER_EMAIL=je",
        "KEEP=jt",
        "OTEL_EXPORTER_OTLP_ENDPOINT=e",
        "GITLAB_TOKEN=host-gl",
    ] {
        assert!(lines.contains(&want), "missing {want} in {out}");
    }
    for gone in [
        "JIRA_TOKEN=",
        "OTEL_EXPORTER_OTLP_HEADERS=",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS=",
        "FULLSEND_FORGE_TOKEN=",
        "FULLSEND_GITLAB_HOST=",
        "GITLAB_TOKEN=declared",
    ] {
        assert!(
            !lines.iter().any(|l| l.starts_with(gone)),
            "{gone} in {out}"
        );
    }
}

mod values_are_bytes_from_the_host_to_the_child_and_the_sandbox_lines {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    fn raw() -> &'static std::ffi::OsStr {
        std::ffi::OsStr::from_bytes(b"a\xffb")
    }

    fn tree() -> Tree {
        one(yaml(
            r#"env:
  runner: {R: "<${RAW}>"}
  sandbox: {S: "${RAW}"}
"#,
        ))
    }

    #[test]
    fn to_the_run_child() {
        let o = harness(&tree(), "run", &["--", "sh", "-c", "printf %s \"$R\""])
            .env("RAW", raw())
            .run();
        assert_eq!(o.stdout_bytes, b"<a\xffb>");
    }

    #[test]
    fn to_the_sandbox_lines() {
        let o = harness(&tree(), "sandbox-env", &[])
            .env("RAW", raw())
            .any_status()
            .run();
        assert_eq!(o.stdout_bytes, b"export S='a\xffb'\n");
    }

    #[test]
    fn json_escapes_them_as_the_sessions_json_does() {
        harness(&tree(), "resolve", &[])
            .env("RAW", raw())
            .any_status()
            .stdout_has("\"S\": \"a\\udcffb\"")
            .run();
    }

    #[test]
    fn from_an_env_file_too() {
        let t = tree().file("raw.env", b"RAW=x\xfey\n");
        let o = harness(&t, "sandbox-env", &["--env-file", &t.arg("raw.env")])
            .any_status()
            .run();
        assert_eq!(o.stdout_bytes, b"export S='x\xfey'\n");
    }

    #[test]
    fn dotenv_cannot_carry_them_and_names_the_key() {
        harness(&tree(), "sandbox-env", &["--format", "dotenv"])
            .env("RAW", raw())
            .status(1)
            .stderr_has("env.sandbox[S]")
            .run();
    }
}

mod explain {
    use super::*;

    /// A base with a forge block, a child with runner_env and an overlay,
    /// an env file; values named `secret-…` must not show.
    fn tree() -> Tree {
        Tree::fullsend()
            .file(
                "harness/base.yaml",
                yaml(
                    r#"env:
  runner:
    K: base
    T: "${TOK}"
forge:
  github:
    env:
      runner:
        K: base-forge
"#,
                ),
            )
            .file(
                "harness/child.yaml",
                r#"base: base.yaml
runner_env: {R: r}
env:
  runner:
    R: "$FROM_FILE/${FULLSEND_DIR}"
overlays:
  - when: 'true'
    env:
      runner:
        K: overlay
"#,
            )
            .file("e.env", "# c\nFROM_FILE=secret-ef\n")
    }

    /// `harness explain $W/harness/child.yaml ARGS` with TOK set to `tok`.
    fn explain(t: &Tree, args: &[&str], tok: &str) -> Run {
        t.host(["harness", "explain", &t.arg("harness/child.yaml")])
            .args(args)
            .env("TOK", tok)
    }

    /// The JSON of `--forge github --env-file e.env ARGS`.
    fn json(t: &Tree, args: &[&str]) -> Value {
        let ef = t.arg("e.env");
        explain(
            t,
            &["--forge", "github", "--env-file", &ef, "--format", "json"],
            "secret-tok",
        )
        .args(args)
        .run()
        .json()
    }

    #[test]
    fn json_is_the_core_view_grouped_by_map_and_never_a_value() {
        let t = tree();
        let ef = t.arg("e.env");
        explain(
            &t,
            &["--forge", "github", "--env-file", &ef, "--format", "json"],
            "secret-tok",
        )
        .stdout_lacks("secret-")
        .run();
        let j = json(&t, &[]);
        // The core view's shape: variables grouped by map, then by name.
        assert_eq!(j["platform"], "github");
        assert_eq!(
            j["files"],
            serde_json::json!([t.arg("harness/child.yaml"), t.arg("harness/base.yaml")])
        );
        assert_eq!(j["failed_layers"], serde_json::json!([]));
        let maps: Vec<&String> = j["variables"].as_object().unwrap().keys().collect();
        assert_eq!(
            maps,
            ["runner_env", "env.runner", "effective_runner_env"],
            "{j}"
        );
    }

    fn var(j: &Value, map: &str, name: &str) -> Value {
        let v = j["variables"][map][name].clone();
        assert!(v.is_object(), "{map} {name}: {j}");
        v
    }

    #[test]
    fn json_names_file_block_line_and_action_of_each_layer() {
        let t = tree();
        let j = json(&t, &[]);
        let (base, child) = (t.arg("harness/base.yaml"), t.arg("harness/child.yaml"));
        let k = var(&j, "env.runner", "K");
        assert_eq!(k["state"], "set");
        assert!(k.get("value").is_none(), "{k}");
        let by: Vec<(u64, String, String, u64, String, String)> = k["touches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                assert_eq!(s["kind"], "harness");
                (
                    s["layer"].as_u64().unwrap(),
                    s["file"].as_str().unwrap().to_string(),
                    s["level"].as_str().unwrap().to_string(),
                    s["line"].as_u64().unwrap(),
                    s["action"].as_str().unwrap().to_string(),
                    s["detail"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        // Layers are the blocks applied: base top, base forge.github, root
        // top, root overlays[0].
        assert_eq!(
            by,
            [
                (
                    1,
                    base.clone(),
                    "top".into(),
                    5,
                    "set".into(),
                    "base".into()
                ),
                (
                    2,
                    base,
                    "forge.github".into(),
                    11,
                    "override".into(),
                    "base".into()
                ),
                (
                    4,
                    child,
                    "overlays[0]".into(),
                    10,
                    "override".into(),
                    "root".into()
                ),
            ]
        );
        assert_eq!(k["reads"], serde_json::json!([]));
    }

    #[test]
    fn json_names_what_each_value_reads() {
        let t = tree();
        let j = json(&t, &[]);
        assert_eq!(
            var(&j, "env.runner", "T")["reads"],
            serde_json::json!([{"name": "TOK", "from": "host env", "file": null, "line": null}])
        );
        let r = var(&j, "effective_runner_env", "R");
        let touches = r["touches"].as_array().unwrap();
        assert_eq!(touches.len(), 2, "{r}");
        assert_eq!(touches[0]["detail"], "root, runner_env");
        assert_eq!(touches[1]["detail"], "root, env.runner");
        assert_eq!(
            (&touches[0]["line"], &touches[1]["line"]),
            (&serde_json::json!(2), &serde_json::json!(5))
        );
        assert_eq!(
            r["reads"],
            serde_json::json!([
                {"name": "FROM_FILE", "from": "env file", "file": t.arg("e.env"), "line": 2},
                {"name": "FULLSEND_DIR", "from": "fullsend dir", "file": null, "line": null}
            ])
        );
    }

    #[test]
    fn show_values_gives_the_expanded_value_and_var_filters() {
        let j = json(&tree(), &["--show-values", "T"]);
        let v = j["variables"].as_object().unwrap();
        assert_eq!(v.len(), 2, "{j}");
        assert_eq!(j["variables"]["env.runner"]["T"]["value"], "secret-tok");
        assert_eq!(
            j["variables"]["effective_runner_env"]["T"]["value"],
            "secret-tok"
        );
    }

    #[test]
    fn text_is_the_core_views_rows_with_the_map_in_the_header() {
        let t = tree();
        let text = explain(&t, &["--forge", "github", "K"], "t").run().stdout;
        let (base, child) = (t.arg("harness/base.yaml"), t.arg("harness/child.yaml"));
        let w = base.len().max(child.len()) + 3;
        let row = |n: u32, level: &str, at: String, action: &str, detail: &str| {
            format!("  #{n}  harness  {level:<12}  {at:<w$}  {action:<8}  {detail}\n")
        };
        let expected = format!(
            "K [env.runner]  set\n{}{}{}\nK [effective_runner_env]  set\n{}{}{}",
            row(1, "top", format!("{base}:5"), "set", "base"),
            row(2, "forge.github", format!("{base}:11"), "override", "base"),
            row(4, "overlays[0]", format!("{child}:10"), "override", "root"),
            row(5, "top", format!("{base}:5"), "set", "base, env.runner"),
            row(
                6,
                "forge.github",
                format!("{base}:11"),
                "override",
                "base, env.runner"
            ),
            row(
                8,
                "overlays[0]",
                format!("{child}:10"),
                "override",
                "root, env.runner"
            ),
        );
        assert_eq!(text, expected);
    }

    #[test]
    fn text_names_what_a_value_reads_and_never_a_value() {
        let t = tree();
        let ef = t.arg("e.env");
        explain(&t, &["--env-file", &ef, "R"], "t")
            .any_status()
            .stdout_has("  reads $FROM_FILE from env file $W/e.env:2\n")
            .stdout_has("  reads $FULLSEND_DIR from fullsend dir\n")
            .stdout_lacks("secret-")
            .run();
    }

    #[test]
    fn a_bad_format_lists_the_accepted_values() {
        explain(&tree(), &["--format", "yaml"], "t")
            .status(1)
            .stderr_has("[possible values: text, json]")
            .run();
    }
}

#[test]
fn the_run_child_is_an_assembly_with_provenance() {
    use agentenv::core::{Action, Env, LayerKind};
    use std::ffi::{OsStr, OsString};
    let t = one(yaml(
        r#"runner_env: {K: re}
env:
  runner: {K: er, OPENAI_API_KEY: declared}
"#,
    ))
    .file("a.env", "K=from-file\nJIRA_TOKEN=jt\n");
    let mut host = Env::new();
    host.insert(OsString::from("K"), OsString::from("host"));
    host.insert(OsString::from("OPENAI_API_KEY"), OsString::from("sk"));
    let opts = agentenv::harness::Options {
        file: t.path("harness/h.yaml"),
        env_files: vec![t.path("a.env")],
        ..Default::default()
    };
    let r = agentenv::harness::resolve(&opts, &host).unwrap();
    let a = &r.assembly;
    assert_eq!(a.base(), &host);
    let kinds: Vec<(LayerKind, Option<String>)> = a
        .touches(OsStr::new("K"))
        .iter()
        .map(|t| {
            let l = &a.layers()[t.layer].info;
            (l.kind, l.level.clone())
        })
        .collect();
    assert_eq!(
        kinds,
        [
            (LayerKind::DotenvFile, None),
            (LayerKind::Harness, Some("runner_env".into())),
            (LayerKind::Harness, Some("env.runner".into())),
        ]
    );
    assert_eq!(a.touches(OsStr::new("K"))[0].line, Some(1));
    assert_eq!(r.child_env().get(OsStr::new("K")).unwrap(), "er");
    assert!(!r.child_env().contains_key(OsStr::new("JIRA_TOKEN")));
    assert!(!r.child_env().contains_key(OsStr::new("OPENAI_API_KEY")));
    assert!(matches!(
        a.touches(OsStr::new("OPENAI_API_KEY"))
            .last()
            .unwrap()
            .action,
        Action::Unset
    ));
}
