//! `agentenv harness resolve | lint | run | sandbox-env` through the binary.

mod support;

use serde_json::Value;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A fullsend dir with `harness/` inside; the default FULLSEND_DIR of a
/// harness file in `harness/` is the fullsend dir.
struct Fs {
    dir: tempfile::TempDir,
}

impl Fs {
    fn new() -> Fs {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("harness")).unwrap();
        Fs { dir }
    }
    fn root(&self) -> PathBuf {
        fs::canonicalize(self.dir.path()).unwrap()
    }
    fn write(&self, rel: &str, body: &str) -> PathBuf {
        let p = self.root().join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, body).unwrap();
        p
    }
}

const HEAD: &str = "agent: agents/t.md\nrole: test\n";

fn cmd(args: &[&str]) -> Command {
    let mut c = Command::new(support::agentenv_bin());
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .args(args);
    c
}

fn run(c: &mut Command) -> Output {
    c.output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn resolve_ok(c: &mut Command) -> Value {
    let o = run(c);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Runs and expects exit 1 with `phrase` on stderr; returns stderr.
fn fails(c: &mut Command, phrase: &str) -> String {
    let o = run(c);
    let e = stderr(&o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "stderr: {e}\nstdout: {}",
        stdout(&o)
    );
    assert!(e.contains(phrase), "expected {phrase:?} in stderr: {e}");
    e
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn resolve_prints_the_documented_json() {
    let fs = Fs::new();
    let h = fs.write(
        "harness/review.yaml",
        &format!(
            "{HEAD}runner_env:\n  OLD: old\n  K: from-runner-env\nenv:\n  runner:\n    FULLSEND_OUTPUT_SCHEMA: \"${{FULLSEND_DIR}}/schemas/r.json\"\n    K: from-env-runner\n  sandbox:\n    GH_TOKEN: \"${{GH_TOKEN}}\"\n    QUOTE: \"it's\"\n    PATH: /evil\n    N: 5\nhost_files:\n  - src: env/gh.env\n    dest: /sandbox/workspace/.env.d/gh.env\n    expand: true\n"
        ),
    );
    fs.write("env/gh.env", "export X=1\n");
    let j = resolve_ok(cmd(&["harness", "resolve", p(&h)]).env("GH_TOKEN", "tok"));
    let root = fs.root();
    let r = root.to_str().unwrap();
    let keys: Vec<&String> = j.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "platform",
            "runner_env",
            "env",
            "effective_runner_env",
            "sandbox_lines",
            "host_files",
            "diagnostics",
            "warnings"
        ]
    );
    assert_eq!(j["platform"], "");
    assert_eq!(j["runner_env"]["K"], "from-runner-env");
    assert_eq!(
        j["env"]["runner"]["FULLSEND_OUTPUT_SCHEMA"],
        format!("{r}/schemas/r.json")
    );
    assert_eq!(j["effective_runner_env"]["K"], "from-env-runner");
    assert_eq!(j["effective_runner_env"]["OLD"], "old");
    assert_eq!(j["env"]["sandbox"]["N"], "5");
    assert_eq!(
        j["sandbox_lines"],
        serde_json::json!([
            "export GH_TOKEN='tok'",
            "export N='5'",
            "export QUOTE='it'\\''s'"
        ])
    );
    assert_eq!(
        j["host_files"],
        serde_json::json!([{"src": "env/gh.env", "dest": "/sandbox/workspace/.env.d/gh.env", "expand": true, "optional": false}])
    );
    assert_eq!(
        j["diagnostics"],
        serde_json::json!([
            "warning: runner_env: runner_env is deprecated and env.runner takes precedence; migrate to env.runner (see ADR 0055)",
            format!("warning: env.sandbox: env.sandbox coexists with host_files entry {r}/env/gh.env (dest: /sandbox/workspace/.env.d/gh.env); env.sandbox values take precedence on key collision")
        ])
    );
    assert_eq!(
        j["warnings"],
        serde_json::json!([
            "env.sandbox key \"PATH\" is reserved for runner infrastructure; skipping"
        ])
    );
}

#[test]
fn fullsend_dir_flag_and_host_override() {
    let fs = Fs::new();
    let h = fs.write(
        "harness/a.yaml",
        &format!("{HEAD}env:\n  runner:\n    D: \"${{FULLSEND_DIR}}\"\n    U: \"$UNSET_X/y\"\n"),
    );
    let j = resolve_ok(
        cmd(&["harness", "resolve", p(&h), "--fullsend-dir", "/opt/fs"])
            .env("FULLSEND_DIR", "/host"),
    );
    assert_eq!(j["env"]["runner"]["D"], "/opt/fs");
    assert_eq!(j["env"]["runner"]["U"], "/y");
}

#[test]
fn unset_braced_variable_is_an_error() {
    let fs = Fs::new();
    let h = fs.write(
        "harness/a.yaml",
        &format!("{HEAD}env:\n  sandbox:\n    A: \"${{NOPE_VAR}}\"\n"),
    );
    fails(
        &mut cmd(&["harness", "resolve", p(&h)]),
        "validating env: 1 unresolved host variable(s):\n    NOPE_VAR is not set (referenced by env.sandbox[A])",
    );
    // set-but-empty passes; OIDC keys never count as set
    resolve_ok(cmd(&["harness", "resolve", p(&h)]).env("NOPE_VAR", ""));
    let h2 = fs.write(
        "harness/b.yaml",
        &format!("{HEAD}env:\n  runner:\n    T: \"${{ACTIONS_ID_TOKEN_REQUEST_TOKEN}}\"\n"),
    );
    fails(
        cmd(&["harness", "resolve", p(&h2)]).env("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "x"),
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN is not set (referenced by env.runner[T])",
    );
}

#[test]
fn required_fields() {
    let fs = Fs::new();
    let h = fs.write("harness/a.yaml", "");
    fails(
        &mut cmd(&["harness", "resolve", p(&h)]),
        &format!("{}: invalid harness: agent field is required", p(&h)),
    );
    let h = fs.write("harness/b.yaml", "agent: a\n");
    fails(
        &mut cmd(&["harness", "lint", p(&h)]),
        "role field is required",
    );
    let h = fs.write(
        "harness/c.yaml",
        &format!("{HEAD}host_files:\n  - dest: /x\n"),
    );
    fails(
        &mut cmd(&["harness", "resolve", p(&h)]),
        "host_files[0]: src is required",
    );
}

#[test]
fn yaml_errors_name_file_line_and_field() {
    let fs = Fs::new();
    let h = fs.write(
        "harness/a.yaml",
        &format!("{HEAD}env:\n  runner:\n    K: a\n    K: hunter2-dup\n"),
    );
    let e = fails(
        &mut cmd(&["harness", "resolve", p(&h)]),
        "already defined at line 5",
    );
    assert!(e.contains(&format!("{}:6:", p(&h))), "{e}");
    let h = fs.write(
        "harness/b.yaml",
        &format!("{HEAD}env:\n  runner: [hunter2-type]\n"),
    );
    let e = fails(
        &mut cmd(&["harness", "resolve", p(&h)]),
        "parsing harness YAML: yaml: unmarshal errors: env.runner: expected a mapping",
    );
    assert!(e.contains(&format!("{}:4:11", p(&h))), "{e}");
    let h = fs.write("harness/c.yaml", &format!("{HEAD}host_files: {{}}\n"));
    fails(
        &mut cmd(&["harness", "resolve", p(&h)]),
        "host_files: expected a sequence",
    );
    let missing = fs.root().join("harness/none.yaml");
    fails(
        &mut cmd(&["harness", "resolve", p(&missing)]),
        "reading harness file",
    );
}

#[test]
fn lenient_yaml_literal_scalars() {
    let fs = Fs::new();
    let h = fs.write(
        "harness/a.yaml",
        &format!("{HEAD}unknown_top: [1, 2]\nenv:\n  runer: {{X: y}}\n  sandbox:\n    B: yes\n    F: 1.50\n    H: 0x1F\n    NUL: ~\n    E:\n---\nagent: other\n"),
    );
    let j = resolve_ok(&mut cmd(&["harness", "resolve", p(&h)]));
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
    let fs = Fs::new();
    fs.write(
        "harness/common/root.yaml",
        &format!("{HEAD}env:\n  runner: {{R: root, K: root}}\n  sandbox: {{S: root}}\nhost_files:\n  - {{src: a, dest: /tmp/d1, optional: true}}\n  - {{src: b, dest: /tmp/d2, optional: true}}\noverlays:\n  - when: \"runtime.forge == ''\"\n    env: {{runner: {{O: base-overlay}}}}\n"),
    );
    fs.write(
        "harness/common/mid.yaml",
        "base: root.yaml\nenv:\n  runner: {K: mid}\n",
    );
    let h = fs.write(
        "harness/child.yaml",
        "base: common/mid.yaml\nenv:\n  sandbox: {C: child}\nhost_files:\n  - {src: c, dest: /tmp/d2, optional: true, expand: true}\noverlays:\n  - when: 'true'\n    env: {runner: {O: child-overlay}}\n",
    );
    let j = resolve_ok(&mut cmd(&["harness", "resolve", p(&h)]));
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

#[test]
fn base_chain_limits() {
    let fs = Fs::new();
    // child + 5 ancestors is fine, a 6th fails
    for i in 1..=5 {
        let next = if i < 5 {
            format!("base: b{}.yaml\n", i + 1)
        } else {
            HEAD.to_string()
        };
        fs.write(&format!("harness/b{i}.yaml"), &next);
    }
    let h = fs.write("harness/c.yaml", "base: b1.yaml\n");
    resolve_ok(&mut cmd(&["harness", "resolve", p(&h)]));
    fs.write("harness/b5.yaml", &format!("{HEAD}base: b6.yaml\n"));
    fs.write("harness/b6.yaml", HEAD);
    fails(
        &mut cmd(&["harness", "resolve", p(&h)]),
        "loading base chain: exceeded maximum base depth of 5",
    );
    // cycles
    fs.write("harness/x.yaml", "base: y.yaml\n");
    let y = fs.write("harness/y.yaml", "base: ../harness/x.yaml\n");
    let e = fails(
        &mut cmd(&["harness", "resolve", p(&y)]),
        "circular base reference: ",
    );
    assert!(
        e.contains(&format!("{}/harness/y.yaml", fs.root().display())),
        "{e}"
    );
    let s = fs.write("harness/self.yaml", "base: self.yaml\n");
    fails(
        &mut cmd(&["harness", "resolve", p(&s)]),
        "circular base reference",
    );
    // missing, escaping, http
    let m = fs.write("harness/m.yaml", "base: nope.yaml\n");
    fails(
        &mut cmd(&["harness", "resolve", p(&m)]),
        "loading base chain: loading base harness ",
    );
    let esc = fs.write("harness/esc.yaml", "base: ../../outside.yaml\n");
    fails(
        &mut cmd(&["harness", "resolve", p(&esc)]),
        "base path \"../../outside.yaml\" escapes workspace root",
    );
    let http = fs.write("harness/http.yaml", "base: http://example.com/b.yaml\n");
    fails(
        &mut cmd(&["harness", "resolve", p(&http)]),
        "base URL scheme must be https, got http://",
    );
}

#[test]
fn url_bases_come_only_from_the_cache() {
    let fs = Fs::new();
    let body = format!("{HEAD}env:\n  runner: {{FROM: url}}\n");
    let digest = {
        // sha256 via python for an independent check of our digest
        let o = Command::new("python3")
            .args([
                "-c",
                "import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())",
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().unwrap().write_all(body.as_bytes())?;
                c.wait_with_output()
            })
            .unwrap();
        String::from_utf8(o.stdout).unwrap().trim().to_string()
    };
    let cache = fs.root().join("cache");
    fs::create_dir(&cache).unwrap();
    fs::write(cache.join(&digest), &body).unwrap();
    let h = fs.write(
        "harness/u.yaml",
        &format!(
            "base: https://example.com/h.yaml#sha256={}\n",
            digest.to_uppercase()
        ),
    );
    fails(
        &mut cmd(&["harness", "resolve", p(&h)]),
        "URL base requires org-level allowed_remote_resources",
    );
    fails(&mut cmd(&["harness", "resolve", p(&h)]), "--base-cache");
    let j = resolve_ok(&mut cmd(&[
        "harness",
        "resolve",
        p(&h),
        "--base-cache",
        p(&cache),
    ]));
    assert_eq!(j["env"]["runner"]["FROM"], "url");
    // tampered cache file
    fs::write(cache.join(&digest), format!("{body}# x\n")).unwrap();
    fails(
        &mut cmd(&["harness", "resolve", p(&h), "--base-cache", p(&cache)]),
        "integrity check failed",
    );
    let nofrag = fs.write("harness/n.yaml", "base: https://example.com/h.yaml\n");
    fails(&mut cmd(&["harness", "resolve", p(&nofrag)]), "#sha256=");
}

#[test]
fn forge_selection_and_validation() {
    let fs = Fs::new();
    let h = fs.write(
        "harness/f.yaml",
        &format!("{HEAD}env:\n  runner: {{K: top}}\nforge:\n  github:\n    env: {{runner: {{K: gh}}}}\n  gitlab:\n    env: {{runner: {{K: \"${{UNSET_IN_GITLAB}}\"}}}}\n"),
    );
    let j = resolve_ok(&mut cmd(&["harness", "resolve", p(&h)]));
    assert_eq!(
        (j["platform"].as_str(), j["env"]["runner"]["K"].as_str()),
        (Some(""), Some("top"))
    );
    let j = resolve_ok(
        cmd(&["harness", "resolve", p(&h)])
            .env("GITHUB_ACTIONS", "true")
            .env("GITLAB_CI", "true"),
    );
    assert_eq!(
        (j["platform"].as_str(), j["env"]["runner"]["K"].as_str()),
        (Some("github"), Some("gh"))
    );
    let j = resolve_ok(&mut cmd(&[
        "harness",
        "resolve",
        p(&h),
        "--forge",
        "github",
    ]));
    assert_eq!(j["env"]["runner"]["K"], "gh");
    fails(
        cmd(&["harness", "resolve", p(&h)]).env("GITLAB_CI", "true"),
        "UNSET_IN_GITLAB is not set (referenced by env.runner[K])",
    );
    // §11.1.1: every block is checked, selected or not, with no platform too.
    let unsel = fs.write(
        "harness/u.yaml",
        &format!("{HEAD}forge:\n  github: {{}}\n  gitlab:\n    host_files: [{{dest: /tmp/x}}]\n"),
    );
    for extra in [&[][..], &["--forge", "github"][..]] {
        let mut c = cmd(&["harness", "resolve", p(&unsel)]);
        c.args(extra);
        fails(
            &mut c,
            "invalid harness: forge.gitlab.host_files[0]: src is required",
        );
    }
    fails(
        &mut cmd(&["harness", "resolve", p(&h), "--forge", "bitbucket"]),
        "--forge: \"bitbucket\" is not a valid forge platform (valid: github, gitlab, jira)",
    );
    fails(
        &mut cmd(&["harness", "resolve", p(&h), "--forge", "jira"]),
        "resolving forge config: forge platform \"jira\" not configured (available: github, gitlab)",
    );
    let bad = fs.write(
        "harness/bad.yaml",
        &format!("{HEAD}forge:\n  gihtub: {{}}\n"),
    );
    fails(
        &mut cmd(&["harness", "resolve", p(&bad)]),
        "forge: unrecognized key \"gihtub\" (valid: github, gitlab, jira)",
    );
}

#[test]
fn overlays_with_event_and_config() {
    let fs = Fs::new();
    let h = fs.write(
        "harness/o.yaml",
        &format!("{HEAD}env:\n  runner: {{K: top}}\noverlays:\n  - when: \"event.kind == 'pull_request'\"\n    env: {{runner: {{K: pr}}}}\n  - when: \"config.forge == 'gitlab' && runtime.forge == 'gitlab'\"\n    env: {{runner: {{K: gl}}}}\n  - when: \"event.number > 3.0\"\n    env: {{runner: {{K: big}}}}\n"),
    );
    let ev = fs.write("pr.json", "{\"kind\": \"pull_request\"}");
    let j = resolve_ok(&mut cmd(&["harness", "resolve", p(&h), "--event", p(&ev)]));
    assert_eq!(j["env"]["runner"]["K"], "pr");
    // no event: event.kind is an error → non-match with a warning naming the index
    let cfg = fs.write("c.yaml", "forge: gitlab\n");
    let o = run(&mut cmd(&[
        "harness",
        "resolve",
        p(&h),
        "--config",
        p(&cfg),
    ]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["platform"], "gitlab");
    assert_eq!(j["env"]["runner"]["K"], "gl");
    assert!(
        stderr(&o).contains("overlay[0].when eval failed"),
        "{}",
        stderr(&o)
    );
    assert_eq!(j["warnings"], serde_json::json!([]));
    let ev2 = fs.write("n.json", "{\"kind\": \"push\", \"number\": 4}");
    let j = resolve_ok(&mut cmd(&[
        "harness",
        "resolve",
        p(&h),
        "--event-file",
        p(&ev2),
    ]));
    assert_eq!(j["env"]["runner"]["K"], "big");
    // compile errors and non-bool types are load errors
    let bad = fs.write(
        "harness/b.yaml",
        &format!("{HEAD}overlays:\n  - when: \"event.flag\"\n"),
    );
    fails(
        &mut cmd(&["harness", "resolve", p(&bad)]),
        "overlays[0].when must evaluate to bool, got dyn",
    );
    let bad = fs.write(
        "harness/c.yaml",
        &format!("{HEAD}overlays:\n  - when: \"event.a ==\"\n"),
    );
    fails(
        &mut cmd(&["harness", "resolve", p(&bad)]),
        "overlays[0].when: ",
    );
    let both = fs.write(
        "harness/d.yaml",
        &format!("{HEAD}forge: {{}}\noverlays:\n  - when: 'true'\n"),
    );
    fails(
        &mut cmd(&["harness", "resolve", p(&both)]),
        "forge and overlays cannot coexist in the same harness",
    );
}

#[test]
fn env_files_load_first_and_strictly() {
    let fs = Fs::new();
    let h = fs.write(
        "harness/e.yaml",
        &format!("{HEAD}env:\n  sandbox: {{T: \"${{FROM_FILE}}\"}}\nforge:\n  github: {{env: {{runner: {{G: yes}}}}}}\n"),
    );
    let e1 = fs.write("one.env", "FROM_FILE=first\nGITHUB_ACTIONS=true\n");
    let e2 = fs.write("two.env", "export FROM_FILE='second'\n");
    let j = resolve_ok(&mut cmd(&[
        "harness",
        "resolve",
        p(&h),
        "--env-file",
        p(&e1),
        "--env-file",
        p(&e2),
    ]));
    assert_eq!(j["env"]["sandbox"]["T"], "second");
    assert_eq!(j["platform"], "github");
    assert_eq!(j["env"]["runner"]["G"], "yes");
    // §11.1.5: a line without "=" is skipped with a warning naming the file
    // and line; an invalid name is an error naming file, line and prefix.
    let skip = fs.write(
        "skip.env",
        "FROM_FILE=1\nthis line is ignored hunter2-envline\n",
    );
    let o = run(&mut cmd(&[
        "harness",
        "resolve",
        p(&h),
        "--env-file",
        p(&skip),
    ]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains(&format!("{}:2: line skipped", p(&skip))), "{e}");
    assert!(!e.contains("hunter2"), "{e}");
    let bad = fs.write("bad.env", "FROM_FILE=1\nTOKEN hunter2-envline=x\n");
    let e = fails(
        &mut cmd(&["harness", "resolve", p(&h), "--env-file", p(&bad)]),
        &format!(
            "{}:2: invalid env var name \"TOKEN…\" in {}",
            p(&bad),
            p(&bad)
        ),
    );
    assert!(!e.contains("hunter2"), "{e}");
    // The envfile grammar, not the operator one: leading space kept, text
    // after a closing quote dropped.
    let g = fs.write("g.env", "FROM_FILE= \"a\"b\n");
    let j = resolve_ok(&mut cmd(&[
        "harness",
        "resolve",
        p(&h),
        "--env-file",
        p(&g),
    ]));
    assert_eq!(j["env"]["sandbox"]["T"], " \"a\"b");
    let g = fs.write("g2.env", "FROM_FILE=\"a\"b\n");
    let j = resolve_ok(&mut cmd(&[
        "harness",
        "resolve",
        p(&h),
        "--env-file",
        p(&g),
    ]));
    assert_eq!(j["env"]["sandbox"]["T"], "a");
    fails(
        &mut cmd(&[
            "harness",
            "resolve",
            p(&h),
            "--env-file",
            "/nonexistent/x.env",
        ]),
        "loading env file /nonexistent/x.env",
    );
}

#[test]
fn missing_host_file_is_an_error_and_a_lint_finding() {
    // §11.1.3: resolve, run and sandbox-env fail; lint reports a finding.
    let fs = Fs::new();
    let h = fs.write(
        "harness/m.yaml",
        &format!("{HEAD}host_files:\n  - {{src: env/none.env, dest: /tmp/d}}\n  - {{src: env/opt.env, dest: /tmp/e, optional: true}}\n  - {{src: \"${{FULLSEND_DIR}}/x\", dest: /tmp/f}}\n"),
    );
    let want = format!(
        "validating files: host_files[0].src: stat {}/env/none.env: no such file or directory",
        fs.root().display()
    );
    for args in [
        &["harness", "resolve", p(&h)][..],
        &["harness", "sandbox-env", p(&h)][..],
        &["harness", "run", p(&h), "--", "true"][..],
    ] {
        let e = fails(&mut cmd(args), &want);
        assert!(
            !e.contains("host_files[1]") && !e.contains("host_files[2]"),
            "{e}"
        );
    }
    let o = run(&mut cmd(&["harness", "lint", p(&h)]));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        format!(
            "error: host_files[0].src: stat {}/env/none.env: no such file or directory\n",
            fs.root().display()
        )
    );
    fs.write("env/none.env", "X=1\n");
    resolve_ok(&mut cmd(&["harness", "resolve", p(&h)]));
}

#[test]
fn lint_prints_diagnostics_and_exits_zero() {
    let fs = Fs::new();
    let h = fs.write("harness/l.yaml", &format!("{HEAD}runner_env: {{A: b}}\n"));
    let o = run(&mut cmd(&["harness", "lint", p(&h)]));
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        "warning: runner_env: runner_env is deprecated; use env.runner instead (see ADR 0055)\n"
    );
    let clean = fs.write("harness/c.yaml", HEAD);
    let o = run(&mut cmd(&["harness", "lint", p(&clean)]));
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(0), ""));
}

#[test]
fn run_uses_host_env_plus_effective_runner_env() {
    let fs = Fs::new();
    let h = fs.write(
        "harness/r.yaml",
        &format!("{HEAD}runner_env: {{A: re, B: re}}\nenv:\n  runner:\n    B: er\n    TRACEPARENT: declared\n    FULLSEND_GCP_OIDC_URL: declared\n    FROM_HOST: \"${{HOST_V}}\"\n"),
    );
    let ef = fs.write("run.env", "FROM_ENV_FILE=ef\nB=from-file\n");
    let o = run(cmd(&[
        "harness",
        "run",
        p(&h),
        "--env-file",
        p(&ef),
        "--",
        "sh",
        "-c",
        "env",
    ])
    .env("HOST_V", "hv")
    .env("TRACEPARENT", "host-tp")
    .env("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "oidc")
    .env("B", "host"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
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
    assert!(!out.contains("ACTIONS_ID_TOKEN_REQUEST_TOKEN"), "{out}");
    assert!(!out.contains("FULLSEND_GCP_OIDC_URL"), "{out}");
    // exit status and not-found
    let o = run(cmd(&["harness", "run", p(&h), "--", "sh", "-c", "exit 7"]).env("HOST_V", ""));
    assert_eq!(o.status.code(), Some(7));
    let o = run(cmd(&["harness", "run", p(&h), "--", "no-such-cmd-xyz"]).env("HOST_V", ""));
    assert_eq!(o.status.code(), Some(127));
    // a load error exits 1 without running
    let bad = fs.write("harness/bad.yaml", "agent: a\n");
    let o = run(&mut cmd(&[
        "harness",
        "run",
        p(&bad),
        "--",
        "sh",
        "-c",
        "echo ran",
    ]));
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "");
}

#[test]
fn sandbox_env_export_and_dotenv() {
    let fs = Fs::new();
    let h = fs.write(
        "harness/s.yaml",
        &format!("{HEAD}env:\n  sandbox:\n    Z: \"it's\"\n    A: \"$. `y`\"\n    HOME: /h\n    bad-key: v\n"),
    );
    let o = run(&mut cmd(&["harness", "sandbox-env", p(&h)]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "export A='$. `y`'\nexport Z='it'\\''s'\n");
    let e = stderr(&o);
    assert!(
        e.contains("env.sandbox key \"HOME\" is reserved for runner infrastructure; skipping"),
        "{e}"
    );
    assert!(
        e.contains("env.sandbox key \"bad-key\" is not a valid POSIX identifier; skipping"),
        "{e}"
    );
    // the export lines, sourced by sh, give back the values
    if let Some(sh) = support::which("dash").or_else(|| support::tool("sh")) {
        let out = fs.root().join("out.env");
        let o = run(&mut cmd(&["harness", "sandbox-env", p(&h), "-o", p(&out)]));
        assert_eq!(o.status.code(), Some(0));
        assert_eq!(
            fs::metadata(&out).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let o = Command::new(sh)
            .args([
                "-c",
                ". \"$1\"; printf '%s|%s' \"$A\" \"$Z\"",
                "sh",
                p(&out),
            ])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&o.stdout), "$. `y`|it's");
    }
    // dotenv format reads back with the project's grammar
    let out = fs.root().join("out2.env");
    let o = run(&mut cmd(&[
        "harness",
        "sandbox-env",
        p(&h),
        "--format",
        "dotenv",
        "-o",
        p(&out),
    ]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let parsed = agentenv::dotenv::parse_bytes(&fs::read(&out).unwrap());
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
    fails(
        &mut cmd(&["harness", "sandbox-env", p(&h), "--format", "yaml"]),
        "[possible values: export, dotenv, github, docker]",
    );
}

#[test]
fn sandbox_env_dotenv_refuses_unrepresentable_values() {
    let fs = Fs::new();
    // Find a value the grammar cannot carry (the writer decides).
    let candidates = ["'\"`\\n\r", "a'b\"c`d\r\n\\n", "\r'\"`\\"];
    let Some(v) = candidates
        .iter()
        .find(|v| agentenv::dotenv::write_value("K", v).is_none())
    else {
        panic!("no unrepresentable candidate");
    };
    let yaml_v = serde_json::to_string(v).unwrap(); // JSON string is a YAML double-quoted scalar
    let h = fs.write(
        "harness/s.yaml",
        &format!("{HEAD}env:\n  sandbox:\n    OK: fine\n    WEIRD: {yaml_v}\n"),
    );
    let out = fs.root().join("o.env");
    let e = fails(
        &mut cmd(&[
            "harness",
            "sandbox-env",
            p(&h),
            "--format",
            "dotenv",
            "-o",
            p(&out),
        ]),
        "env.sandbox[WEIRD]",
    );
    assert!(!out.exists());
    assert!(!e.contains("fine"));
}

#[test]
fn canary_secrets_never_reach_stderr() {
    const C: &str = "canary-XYZ-7731";
    let fs = Fs::new();
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
        let h = fs.write(&format!("harness/c{i}.yaml"), body);
        cases.push((s(&["harness", "resolve", p(&h)]), vec![]));
    }
    let h = fs.write(
        "harness/ok.yaml",
        &format!("{HEAD}overlays:\n  - when: \"event.tok + 1 == 2\"\n"),
    );
    let ev = fs.write("ev.json", &format!("{{\"tok\": \"{C}\"}}"));
    cases.push((s(&["harness", "resolve", p(&h), "--event", p(&ev)]), vec![]));
    let bad_ev = fs.write("bad.json", &format!("{{\"tok\": \"{C}\" x"));
    cases.push((
        s(&["harness", "resolve", p(&h), "--event", p(&bad_ev)]),
        vec![],
    ));
    let bad_cfg = fs.write("bad.yaml", &format!("forge: [{C}\n"));
    cases.push((
        s(&["harness", "resolve", p(&h), "--config", p(&bad_cfg)]),
        vec![],
    ));
    let bad_cfg_json = fs.write("badc.json", &format!("{{\"forge\": {C}}}"));
    cases.push((
        s(&["harness", "resolve", p(&h), "--config", p(&bad_cfg_json)]),
        vec![],
    ));
    let bad_env = fs.write(
        "bad.env",
        &format!("SECRET={C}\n{C} not an assignment\nX=\"{C}\n"),
    );
    cases.push((
        s(&["harness", "resolve", p(&h), "--env-file", p(&bad_env)]),
        vec![],
    ));
    let runh = fs.write(
        "harness/run.yaml",
        &format!("{HEAD}env:\n  runner:\n    S: \"{C}\"\n"),
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
        let mut c = cmd(&args.iter().map(|x| x.as_str()).collect::<Vec<_>>());
        for (k, v) in env {
            c.env(k, v);
        }
        let o = run(&mut c);
        let e = stderr(&o);
        assert!(!e.contains(C), "canary leaked for {args:?}: {e}");
        assert!(!e.contains("XYZ-7731"), "canary leaked for {args:?}: {e}");
    }
}

// ---- reference §11: fullsend main as of 2026-10-01 -----------------------

#[test]
fn s11_1_2_host_files_merge_by_dest_replacing_the_last() {
    let fs = Fs::new();
    fs.write(
        "harness/base.yaml",
        &format!("{HEAD}host_files:\n  - {{src: z, dest: /tmp/a, optional: true}}\n"),
    );
    let h = fs.write(
        "harness/c.yaml",
        "base: base.yaml\nhost_files:\n  - {src: x, dest: /tmp/b, optional: true}\n  - {src: y, dest: /tmp/b, optional: true, expand: true}\noverlays:\n  - when: 'true'\n    host_files:\n      - {src: o1, dest: /tmp/c, optional: true}\n      - {src: o2, dest: /tmp/c, optional: true}\n",
    );
    let j = resolve_ok(&mut cmd(&["harness", "resolve", p(&h)]));
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
    let fs = Fs::new();
    let h = fs.write(
        "harness/o.yaml",
        &format!("{HEAD}env:\n  runner: {{K: top, T: top}}\noverlays:\n  - when: 'true'\n    env: {{runner: {{K: first, A: first}}}}\n  - when: \"event.missing == 1\"\n    env: {{runner: {{K: err}}}}\n  - when: \"runtime.forge == ''\"\n    env: {{runner: {{K: third}}, sandbox: {{S: third}}}}\n  - when: 'false'\n    env: {{runner: {{K: never}}}}\n"),
    );
    let o = run(&mut cmd(&["harness", "resolve", p(&h)]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        j["env"]["runner"],
        serde_json::json!({"A": "first", "K": "third", "T": "top"})
    );
    assert_eq!(j["env"]["sandbox"]["S"], "third");
    assert!(stderr(&o).contains("harness: overlay[1].when eval failed: no such key"));
}

#[test]
fn s11_2_2_each_base_layer_resolves_its_own_blocks_first() {
    let fs = Fs::new();
    // The base's forge block and overlay set K; the child's top level wins.
    fs.write(
        "harness/base.yaml",
        &format!("{HEAD}env:\n  runner: {{K: base, B: base}}\nforge:\n  github: {{env: {{runner: {{K: base-forge, F: base-forge}}}}}}\n  gitlab: {{env: {{runner: {{G: gl}}}}}}\n"),
    );
    let h = fs.write(
        "harness/child.yaml",
        "base: base.yaml\nenv:\n  runner: {K: child}\noverlays:\n  - when: 'true'\n    env: {runner: {O: child-overlay}}\n",
    );
    let j = resolve_ok(&mut cmd(&[
        "harness",
        "resolve",
        p(&h),
        "--forge",
        "github",
    ]));
    assert_eq!(
        j["env"]["runner"],
        serde_json::json!({"B": "base", "F": "base-forge", "K": "child", "O": "child-overlay"})
    );
    // forge in the base, overlays in the child: fine (exclusivity per file).
    // A base forge map without the run's platform is dropped silently.
    let j = resolve_ok(&mut cmd(&["harness", "resolve", p(&h), "--forge", "jira"]));
    assert_eq!(j["env"]["runner"]["K"], "child");
    assert!(j["env"]["runner"].get("F").is_none());
    // No platform: every base forge block is dropped.
    let j = resolve_ok(&mut cmd(&["harness", "resolve", p(&h)]));
    assert_eq!(
        j["env"]["runner"],
        serde_json::json!({"B": "base", "K": "child", "O": "child-overlay"})
    );
    // A child cannot null a base's platform block any more.
    let n = fs.write(
        "harness/null.yaml",
        "base: base.yaml\nforge:\n  github: ~\n",
    );
    let j = resolve_ok(&mut cmd(&[
        "harness",
        "resolve",
        p(&n),
        "--forge",
        "github",
    ]));
    assert_eq!(j["env"]["runner"]["F"], "base-forge");
    // Overlays are not concatenated across files: the base's overlay is
    // evaluated in the base layer, under the child's top level.
    fs.write(
        "harness/ob.yaml",
        &format!("{HEAD}overlays:\n  - when: 'true'\n    env: {{runner: {{K: base-overlay, X: base-overlay}}}}\n"),
    );
    let oc = fs.write(
        "harness/oc.yaml",
        "base: ob.yaml\nenv:\n  runner: {K: child}\n",
    );
    let j = resolve_ok(&mut cmd(&["harness", "resolve", p(&oc)]));
    assert_eq!(
        j["env"]["runner"],
        serde_json::json!({"K": "child", "X": "base-overlay"})
    );
    // Errors in a base layer read "invalid base harness".
    fs.write(
        "harness/badbase.yaml",
        &format!("{HEAD}forge: {{}}\noverlays:\n  - when: 'true'\n"),
    );
    let bc = fs.write("harness/bc.yaml", "base: badbase.yaml\n");
    fails(
        &mut cmd(&["harness", "resolve", p(&bc)]),
        "loading base chain: ",
    );
    let e = fails(
        &mut cmd(&["harness", "resolve", p(&bc)]),
        "invalid base harness: forge and overlays cannot coexist in the same harness",
    );
    assert!(e.contains("badbase.yaml"), "{e}");
}

#[test]
fn s11_2_3_unset_variables_are_reported_together() {
    let fs = Fs::new();
    let h = fs.write(
        "harness/u.yaml",
        &format!("{HEAD}runner_env: {{R: \"${{U2}}\"}}\nenv:\n  runner: {{A: \"${{U1}}\", B: \"${{U2}}${{SET}}\"}}\n  sandbox: {{S: \"${{U1}}\"}}\nhost_files:\n  - {{src: \"${{U3}}/f\", dest: /tmp/f}}\n"),
    );
    let e = fails(
        cmd(&["harness", "resolve", p(&h)]).env("SET", ""),
        "validating env: 3 unresolved host variable(s):\n    U1 is not set (referenced by env.runner[A], env.sandbox[S])\n    U2 is not set (referenced by env.runner[B], runner_env[R])\n    U3 is not set (referenced by host_files[0].src)",
    );
    assert!(!e.contains("SET is not set"), "{e}");
}

#[test]
fn s11_2_4_the_wider_deny_list() {
    let fs = Fs::new();
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
        let h = fs.write(
            "harness/d.yaml",
            &format!("{HEAD}env:\n  runner: {{A: \"${{{k}}}\"}}\n"),
        );
        fails(
            cmd(&["harness", "resolve", p(&h)]).env(k, "v"),
            &format!("{k} is not set (referenced by env.runner[A])"),
        );
        // expands to "" unbraced, is a reserved sandbox key, and is
        // stripped from the run child even when declared
        let h = fs.write(
            "harness/d.yaml",
            &format!(
                "{HEAD}env:\n  runner: {{A: \"x${k}-y\", {k}: declared}}\n  sandbox: {{{k}: s}}\n"
            ),
        );
        let o = run(cmd(&["harness", "resolve", p(&h)]).env(k, "v"));
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let j: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(j["env"]["runner"]["A"], "x-y");
        assert_eq!(j["sandbox_lines"], serde_json::json!([]));
        assert_eq!(
            j["warnings"][0],
            format!("env.sandbox key \"{k}\" is reserved for runner infrastructure; skipping")
        );
        let o = run(cmd(&["harness", "run", p(&h), "--", "env"]).env(k, "v"));
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(!stdout(&o).contains(&format!("{k}=")), "{k}");
    }
}

#[test]
fn s11_2_5_new_reserved_sandbox_keys() {
    let fs = Fs::new();
    let h = fs.write(
        "harness/r.yaml",
        &format!("{HEAD}env:\n  sandbox:\n    FULLSEND_TIMEOUT_MINUTES: a\n    FULLSEND_ITERATION_DEADLINE: b\n    TRACEPARENT: c\n    FULLSEND_RUNNER_PATH: d\n    KEPT: e\n"),
    );
    let j = resolve_ok(&mut cmd(&["harness", "resolve", p(&h)]));
    assert_eq!(j["sandbox_lines"], serde_json::json!(["export KEPT='e'"]));
    assert_eq!(j["warnings"].as_array().unwrap().len(), 4);
}

#[test]
fn s11_2_6_host_file_dest_rules() {
    let fs = Fs::new();
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
        let h = fs.write(
            "harness/d.yaml",
            &format!("{HEAD}host_files:\n  - {{src: a, dest: \"{dest}\", optional: true}}\n"),
        );
        fails(
            &mut cmd(&["harness", "resolve", p(&h)]),
            &format!("invalid harness: {msg}"),
        );
    }
    // inside blocks, with their prefixes; before ${} validation
    let h = fs.write(
        "harness/b.yaml",
        &format!("{HEAD}forge:\n  gitlab:\n    host_files: [{{src: a, dest: /etc/x}}]\n"),
    );
    fails(
        &mut cmd(&["harness", "resolve", p(&h)]),
        "forge.gitlab.host_files[0]: dest \"/etc/x\" must be under /sandbox/ or /tmp/",
    );
    let h = fs.write(
        "harness/o.yaml",
        &format!("{HEAD}env: {{runner: {{A: \"${{UNSET}}\"}}}}\noverlays:\n  - when: 'false'\n    host_files: [{{src: a, dest: /sandbox/claude-config/x}}]\n"),
    );
    fails(
        &mut cmd(&["harness", "resolve", p(&h)]),
        "overlays[0].host_files[0]: dest \"/sandbox/claude-config/x\" is reserved for the runner",
    );
    let ok = fs.write(
        "harness/ok.yaml",
        &format!("{HEAD}host_files:\n  - {{src: a, dest: /sandbox/workspace/.env.d/a.env, optional: true}}\n  - {{src: b, dest: /sandbox/workspace/bin/my-tool.sh, optional: true}}\n"),
    );
    resolve_ok(&mut cmd(&["harness", "resolve", p(&ok)]));
}

#[test]
fn s11_2_7_validation_loop_merges_field_by_field() {
    let fs = Fs::new();
    fs.write(
        "harness/base.yaml",
        &format!("{HEAD}validation_loop: {{script: s.sh, preflight_check: \"${{PRE}}\"}}\n"),
    );
    // The child sets only schema: script and preflight come from the base.
    let h = fs.write(
        "harness/c.yaml",
        "base: base.yaml\nvalidation_loop: {schema: \"${SCHEMA_DIR}/x.json\"}\n",
    );
    fails(
        &mut cmd(&["harness", "resolve", p(&h)]),
        "2 unresolved host variable(s):\n    PRE is not set (referenced by validation_loop.preflight_check)\n    SCHEMA_DIR is not set (referenced by validation_loop.schema)",
    );
    resolve_ok(
        cmd(&["harness", "resolve", p(&h)])
            .env("PRE", "")
            .env("SCHEMA_DIR", ""),
    );
    // A forge block may omit script when the top level has one.
    let f = fs.write(
        "harness/f.yaml",
        &format!("{HEAD}validation_loop: {{script: s.sh}}\nforge:\n  github:\n    validation_loop: {{schema: \"${{GH_SCHEMA}}\"}}\n"),
    );
    fails(
        &mut cmd(&["harness", "resolve", p(&f), "--forge", "github"]),
        "GH_SCHEMA is not set (referenced by validation_loop.schema)",
    );
    let nf = fs.write(
        "harness/nf.yaml",
        &format!("{HEAD}forge:\n  github:\n    validation_loop: {{schema: x}}\n"),
    );
    fails(
        &mut cmd(&["harness", "resolve", p(&nf)]),
        "forge.github.validation_loop.script is required when validation_loop is set",
    );
}

#[test]
fn s11_2_8_the_config_map_cel_sees() {
    let fs = Fs::new();
    let h = fs.write(
        "harness/c.yaml",
        &format!("{HEAD}overlays:\n  - when: \"!has(config.mint_url) && !has(config.inference)\"\n    env: {{runner: {{HIDDEN: 'yes'}}}}\n  - when: \"config.agents[0].runtime == 'claude' && !has(config.agents[0].source) && config.agents[0].name == 'n'\"\n    env: {{runner: {{AGENT: 'yes'}}}}\n  - when: \"config.create_issues.allow_orgs == ['o'] && config.status_notifications.start == 's'\"\n    env: {{runner: {{NESTED: 'yes'}}}}\n  - when: \"has(config.kill_switch)\"\n    env: {{runner: {{KILL: 'yes'}}}}\n"),
    );
    let c = fs.write(
        "config.yaml",
        "mint_url: https://mint\ninference: {project: p}\nkill_switch: false\nagents:\n  - {source: '', name: n, runtime: claude}\ncreate_issues: {allow_targets: {orgs: [o]}}\nstatus_notifications: {comment: {start: s}}\n",
    );
    let j = resolve_ok(&mut cmd(&["harness", "resolve", p(&h), "--config", p(&c)]));
    assert_eq!(
        j["env"]["runner"],
        serde_json::json!({"AGENT": "yes", "HIDDEN": "yes", "NESTED": "yes"})
    );
}

#[test]
fn s11_2_9_lint_warnings() {
    let fs = Fs::new();
    let h = fs.write(
        "harness/l.yaml",
        &format!("{HEAD}allowed_remote_resources: ['https://example.com/']\nenv:\n  runner: {{U: \"${{GITHUB_ISSUE_URL}}\"}}\n  sandbox: {{S: \"x $GITHUB_ISSUE_URL\"}}\nrunner_env: {{R: \"${{GITHUB_ISSUE_URL}}\"}}\n"),
    );
    let o = run(cmd(&["harness", "lint", p(&h)]).env("GITHUB_ISSUE_URL", "u"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "warning: runner_env: runner_env is deprecated and env.runner takes precedence; migrate to env.runner (see ADR 0055)\n\
         warning: allowed_remote_resources: allowed_remote_resources is set without allow_runtime_fetch: true; runtime fetching is enabled for backward compatibility, but this is deprecated — add allow_runtime_fetch: true to the harness to silence this warning\n\
         warning: env.runner.U: GITHUB_ISSUE_URL is deprecated; use TRIGGER_ENTITY_URL instead (see #6610)\n\
         warning: env.sandbox.S: GITHUB_ISSUE_URL is deprecated; use TRIGGER_ENTITY_URL instead (see #6610)\n"
    );
}

#[test]
fn s11_2_10_trigger_is_inherited_from_a_base() {
    let fs = Fs::new();
    // `runtime` is not declared for triggers: the inherited one fails.
    fs.write(
        "harness/base.yaml",
        &format!("{HEAD}trigger: \"runtime.forge == 'github'\"\n"),
    );
    let h = fs.write("harness/c.yaml", "base: base.yaml\n");
    fails(
        &mut cmd(&["harness", "resolve", p(&h)]),
        "invalid harness: trigger: undeclared reference to 'runtime' at 1:1",
    );
    let own = fs.write(
        "harness/own.yaml",
        "base: base.yaml\ntrigger: \"event.x == 1\"\n",
    );
    resolve_ok(&mut cmd(&["harness", "resolve", p(&own)]));
}

#[test]
fn s11_2_11_the_run_childs_environment() {
    let fs = Fs::new();
    let h = fs.write(
        "harness/r.yaml",
        &format!("{HEAD}env:\n  runner:\n    JIRA_USER_EMAIL: \"${{JIRA_USER_EMAIL}}\"\n    GITLAB_TOKEN: declared\n    FULLSEND_FORGE_TOKEN: declared\n    FULLSEND_GITLAB_HOST: declared\n    KEEP: \"${{JIRA_TOKEN}}\"\n"),
    );
    let o = run(cmd(&["harness", "run", p(&h), "--", "env"])
        .env("PYTHONDONTWRITEBYTECODE", "0")
        .env("JIRA_TOKEN", "jt")
        .env("JIRA_USER_EMAIL", "je")
        .env("OTEL_EXPORTER_OTLP_HEADERS", "h")
        .env("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "h")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "e")
        .env("GITLAB_TOKEN", "host-gl"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
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

#[test]
fn values_are_bytes_from_the_host_to_the_child_and_the_sandbox_lines() {
    use std::os::unix::ffi::OsStrExt;
    let fs = Fs::new();
    let h = fs.write(
        "harness/b.yaml",
        &format!("{HEAD}env:\n  runner: {{R: \"<${{RAW}}>\"}}\n  sandbox: {{S: \"${{RAW}}\"}}\n"),
    );
    let raw = std::ffi::OsStr::from_bytes(b"a\xffb");
    let o = run(cmd(&[
        "harness",
        "run",
        p(&h),
        "--",
        "sh",
        "-c",
        "printf %s \"$R\"",
    ])
    .env("RAW", raw));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(o.stdout, b"<a\xffb>");
    let o = run(cmd(&["harness", "sandbox-env", p(&h)]).env("RAW", raw));
    assert_eq!(o.stdout, b"export S='a\xffb'\n");
    // JSON escapes it as the session's JSON does.
    let o = run(cmd(&["harness", "resolve", p(&h)]).env("RAW", raw));
    let s = stdout(&o);
    assert!(s.contains("\"S\": \"a\\udcffb\""), "{s}");
    // An env file value too.
    let ef = fs.root().join("raw.env");
    fs::write(&ef, b"RAW=x\xfey\n").unwrap();
    let o = run(&mut cmd(&[
        "harness",
        "sandbox-env",
        p(&h),
        "--env-file",
        p(&ef),
    ]));
    assert_eq!(o.stdout, b"export S='x\xfey'\n");
    // dotenv cannot carry it: refused naming the key.
    let o = run(cmd(&["harness", "sandbox-env", p(&h), "--format", "dotenv"]).env("RAW", raw));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("env.sandbox[S]"), "{}", stderr(&o));
}

#[test]
fn explain_names_file_block_line_and_reads() {
    let fs = Fs::new();
    fs.write(
        "harness/base.yaml",
        &format!("{HEAD}env:\n  runner:\n    K: base\n    T: \"${{TOK}}\"\nforge:\n  github:\n    env:\n      runner:\n        K: base-forge\n"),
    );
    let h = fs.write(
        "harness/child.yaml",
        "base: base.yaml\nrunner_env: {R: r}\nenv:\n  runner:\n    R: \"$FROM_FILE/${FULLSEND_DIR}\"\noverlays:\n  - when: 'true'\n    env:\n      runner:\n        K: overlay\n",
    );
    let ef = fs.write("e.env", "# c\nFROM_FILE=secret-ef\n");
    let args = [
        "harness",
        "explain",
        p(&h),
        "--forge",
        "github",
        "--env-file",
        p(&ef),
        "--format",
        "json",
    ];
    let o = run(cmd(&args).env("TOK", "secret-tok"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(!out.contains("secret-"), "{out}");
    let j: Value = serde_json::from_str(&out).unwrap();
    let root = fs.root();
    let base = root.join("harness/base.yaml");
    let base = base.display().to_string();
    // The core view's shape: variables grouped by map, then by name.
    assert_eq!(j["platform"], "github");
    assert_eq!(j["files"], serde_json::json!([p(&h), base]));
    assert_eq!(j["failed_layers"], serde_json::json!([]));
    let maps: Vec<&String> = j["variables"].as_object().unwrap().keys().collect();
    assert_eq!(
        maps,
        ["runner_env", "env.runner", "effective_runner_env"],
        "{j}"
    );
    let var = |map: &str, name: &str| -> Value {
        let v = j["variables"][map][name].clone();
        assert!(v.is_object(), "{map} {name}: {j}");
        v
    };
    let k = var("env.runner", "K");
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
                base.clone(),
                "forge.github".into(),
                11,
                "override".into(),
                "base".into()
            ),
            (
                4,
                p(&h).to_string(),
                "overlays[0]".into(),
                10,
                "override".into(),
                "root".into()
            ),
        ]
    );
    assert_eq!(k["reads"], serde_json::json!([]));
    let t = var("env.runner", "T");
    assert_eq!(
        t["reads"],
        serde_json::json!([{"name": "TOK", "from": "host env", "file": null, "line": null}])
    );
    let r = var("effective_runner_env", "R");
    let t = r["touches"].as_array().unwrap();
    assert_eq!(t.len(), 2, "{r}");
    assert_eq!(t[0]["detail"], "root, runner_env");
    assert_eq!(t[1]["detail"], "root, env.runner");
    assert_eq!(
        (&t[0]["line"], &t[1]["line"]),
        (&serde_json::json!(2), &serde_json::json!(5))
    );
    assert_eq!(
        r["reads"],
        serde_json::json!([
            {"name": "FROM_FILE", "from": "env file", "file": p(&ef), "line": 2},
            {"name": "FULLSEND_DIR", "from": "fullsend dir", "file": null, "line": null}
        ])
    );
    // Values only with --show-values (the expanded value); VAR filters.
    let mut a2 = args.to_vec();
    a2.extend(["--show-values", "T"]);
    let o = run(cmd(&a2).env("TOK", "secret-tok"));
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    let v = j["variables"].as_object().unwrap();
    assert_eq!(v.len(), 2, "{j}");
    assert_eq!(j["variables"]["env.runner"]["T"]["value"], "secret-tok");
    assert_eq!(
        j["variables"]["effective_runner_env"]["T"]["value"],
        "secret-tok"
    );
    // Text: the core view's rows, the map in the header.
    let o = run(cmd(&["harness", "explain", p(&h), "--forge", "github", "K"]).env("TOK", "t"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let w = base.len().max(p(&h).len()) + 3;
    let row = |n: u32, level: &str, at: String, action: &str, detail: &str| {
        format!("  #{n}  harness  {level:<12}  {at:<w$}  {action:<8}  {detail}\n")
    };
    let expected = format!(
        "K [env.runner]  set\n{}{}{}\nK [effective_runner_env]  set\n{}{}{}",
        row(1, "top", format!("{base}:5"), "set", "base"),
        row(2, "forge.github", format!("{base}:11"), "override", "base"),
        row(
            4,
            "overlays[0]",
            format!("{}:10", p(&h)),
            "override",
            "root"
        ),
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
            format!("{}:10", p(&h)),
            "override",
            "root, env.runner"
        ),
    );
    assert_eq!(text, expected);
    let o = run(cmd(&["harness", "explain", p(&h), "--env-file", p(&ef), "R"]).env("TOK", "t"));
    let text = stdout(&o);
    assert!(
        text.contains(&format!("  reads $FROM_FILE from env file {}:2\n", p(&ef))),
        "{text}"
    );
    assert!(
        text.contains("  reads $FULLSEND_DIR from fullsend dir\n"),
        "{text}"
    );
    assert!(!text.contains("secret-"), "{text}");
    fails(
        &mut cmd(&["harness", "explain", p(&h), "--format", "yaml"]),
        "[possible values: text, json]",
    );
}

#[test]
fn the_run_child_is_an_assembly_with_provenance() {
    use agentenv::core::{Action, Env, LayerKind};
    use std::ffi::{OsStr, OsString};
    let fs = Fs::new();
    let h = fs.write(
        "harness/a.yaml",
        &format!(
            "{HEAD}runner_env: {{K: re}}\nenv:\n  runner: {{K: er, OPENAI_API_KEY: declared}}\n"
        ),
    );
    let ef = fs.write("a.env", "K=from-file\nJIRA_TOKEN=jt\n");
    let mut host = Env::new();
    host.insert(OsString::from("K"), OsString::from("host"));
    host.insert(OsString::from("OPENAI_API_KEY"), OsString::from("sk"));
    let opts = agentenv::harness::Options {
        file: h.clone(),
        env_files: vec![ef.clone()],
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
