//! The secret audit: distinct canary values are planted in every kind of
//! input (store files, env.py, plain files for bash, overlays, the caller's
//! environment, operator .env files and manifest, harness YAML, CEL
//! expressions, event/config JSON, env files) and every command and every
//! error path we can trigger is run at default verbosity and at -vv. No
//! canary may appear in stderr, a report, or `explain` output without
//! `--show-values`; cache files are 0600 in 0700 directories.

use crate::support;

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use support::Tree;

/// Every canary shares this stem, so one search finds any of them.
const STEM: &str = "zqCANARY";

struct Audit {
    t: Tree,
    w: PathBuf,
    planted: BTreeSet<String>,
    runs: usize,
    checked: usize,
}

impl Audit {
    fn new() -> Audit {
        let t = Tree::session()
            .dir("home/.agents")
            .dir("plug")
            .dir("fs/harness")
            .dir("cache");
        let w = t.root().to_path_buf();
        Audit {
            t,
            w,
            planted: BTreeSet::new(),
            runs: 0,
            checked: 0,
        }
    }

    /// A fresh canary value (recorded).
    fn c(&mut self, tag: &str) -> String {
        let v = format!("{STEM}{tag}x{}", self.planted.len());
        self.planted.insert(v.clone());
        v
    }

    fn p(&self, rel: &str) -> PathBuf {
        self.t.path(rel)
    }

    fn write(&self, rel: &str, body: &str) -> PathBuf {
        self.t.write(rel, body)
    }

    /// The session environment (`support::session_cmd`) with the cache
    /// in `$W/cache`.
    fn base_env(&self) -> Vec<(OsString, OsString)> {
        let mut env: Vec<(OsString, OsString)> = support::session_cmd(&self.w)
            .get_envs()
            .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned())))
            .collect();
        env.push(("XDG_CACHE_HOME".into(), self.p("cache").into()));
        env
    }

    /// Run `args` (at default verbosity and at -vv) and check that no
    /// canary reaches stderr; `stdout_secret` says whether stdout may hold
    /// values (rendered output, a child's output) or must be clean too.
    fn run(&mut self, args: &[&str], extra_env: &[(&str, &str)], stdout_secret: bool) {
        for verbose in [false, true] {
            let mut c = Command::new(support::agentenv_bin());
            if verbose {
                c.arg("-vv");
            }
            c.args(args)
                .current_dir(self.p("proj"))
                .env_clear()
                .envs(self.base_env())
                .envs(
                    extra_env
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_string())),
                )
                .stdin(Stdio::null());
            let out = c.output().unwrap();
            self.runs += 1;
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                !stderr.contains(STEM),
                "agentenv {}{args:?} leaks on stderr:\n{stderr}",
                if verbose { "-vv " } else { "" }
            );
            self.checked += 1;
            if !stdout_secret {
                let stdout = String::from_utf8_lossy(&out.stdout);
                assert!(
                    !stdout.contains(STEM),
                    "agentenv {args:?} leaks on stdout:\n{stdout}"
                );
                self.checked += 1;
            }
        }
    }

    fn clean_file(&mut self, p: &Path) {
        let body = std::fs::read_to_string(p).unwrap_or_default();
        assert!(!body.contains(STEM), "{} leaks:\n{body}", p.display());
        self.checked += 1;
    }
}

#[test]
fn no_canary_reaches_stderr_reports_or_explain() {
    let mut a = Audit::new();

    // ---- session stores -------------------------------------------------
    let v = [a.c("native"), a.c("native2")];
    a.write(
        "home/.agents/pre.env",
        &format!("PRE_NATIVE={}\nexport PRE_TWO='{}'\n", v[0], v[1]),
    );
    let v = [a.c("bash"), a.c("bashfn")];
    a.write(
        "home/.agents/env",
        &format!(
            "BASHED=\"$(printf %s {})\"\nf() {{ echo {}; }}\nf >/dev/null\n",
            v[0], v[1]
        ),
    );
    let v = [a.c("py"), a.c("pykey"), a.c("pyint"), a.c("pyerr")];
    a.write(
        "home/.agents/env.py",
        &format!(
            "import json, sys\nsys.stderr.write('{3}\\n')\nprint(json.dumps({{'PY_OK': '{0}', 'bad key': '{1}', 'PY_NUL': '{1}\\u0000', 'PY_LIST': ['{2}'], 'PY_INT': 7}}))\n",
            v[0], v[1], v[2], v[3]
        ),
    );
    let v = [a.c("ovl"), a.c("ovlpy")];
    a.write("home/.agents/overlays/tool/env", &format!("OVL={}\n", v[0]));
    a.write(
        "home/.agents/overlays/tool/env.py",
        &format!("print('not json {}')\n", v[1]),
    );
    let v = [a.c("projpy"), a.c("projbad")];
    a.write(
        "proj/.agents/env.py",
        &format!(
            "import sys\nprint('{{\"P\": \"{}\"')\nsys.stderr.write('{}')\nsys.exit(3)\n",
            v[0], v[1]
        ),
    );
    let v = [a.c("unterminated"), a.c("syntax")];
    a.write(
        "proj/.agents/local.env",
        &format!("OK_LOCAL=1\nBAD='{}\nif then {} fi\n", v[0], v[1]),
    );
    let v = a.c("prelocal");
    a.write(
        "proj/.agents/pre.local.env",
        &format!("import time\nX={v}\n$(exit 3)\n"),
    );
    // Declarations (docs/session.md#sensitive-and-public-values): malformed entries
    // holding canaries, a file that is not TOML, and a project store that
    // tries to make public what the user store, an overlay and the caller set.
    // Nothing here is public, so `env --public-only` prints no canary.
    let v = [
        a.c("tomlbool"),
        a.c("tomlfield"),
        a.c("tomlkey"),
        a.c("tomlval"),
    ];
    a.write(
        "home/.agents/agentenv.toml",
        &format!(
            "[vars]\nPRE_NATIVE = {{ public = \"{}\" }}\nPRE_TWO = {{ public = true, x = \"{}\" }}\n\"{} *\" = {{ public = true }}\nBASHED = \"{}\"\n",
            v[0], v[1], v[2], v[3]
        ),
    );
    let v = a.c("tomlsyntax");
    a.write(
        "home/.agents/overlays/tool/agentenv.toml",
        &format!("[vars]\nOVL = {{ public = true }}\nX = {v}\n"),
    );
    a.write(
        "proj/.agents/agentenv.toml",
        "[vars]\nPRE_NATIVE = { public = true }\nOVL = { public = true }\nCALLER_SECRET = { public = true }\n\"OV*\" = { public = true, description = \"overlay values\" }\n",
    );
    let caller = [a.c("caller"), a.c("dotagents")];
    let caller_env = [
        ("CALLER_SECRET", caller[0].as_str()),
        ("DOTAGENTS_HIDDEN", caller[1].as_str()),
        ("AGENTS_ENV_TIMEOUT", "2"),
    ];

    for fmt in [
        "export",
        "dotenv",
        "powershell",
        "cmd",
        "fish",
        "json",
        "ini",
        "yaml",
        "auto",
    ] {
        a.run(&["env", "--format", fmt], &caller_env, true);
        a.run(&["env", "--format", fmt, "--diff"], &caller_env, true);
    }
    a.run(&["env", "-g", "--format", "json"], &caller_env, true);
    // --public-only: only public variables, so stdout holds no canary in
    // any format, full or --diff, from the cache or into a file.
    for fmt in [
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
        "auto",
    ] {
        a.run(
            &["env", "--public-only", "--format", fmt],
            &caller_env,
            false,
        );
        a.run(
            &["env", "--public-only", "--format", fmt, "--diff"],
            &caller_env,
            false,
        );
    }
    for _ in 0..2 {
        a.run(
            &["env", "--public-only", "--diff", "--cache"],
            &caller_env,
            false,
        );
    }
    let into = a.p("public.sh");
    let into_arg = into.to_str().unwrap().to_string();
    a.run(
        &["env", "--public-only", "--diff", "--into", &into_arg],
        &caller_env,
        false,
    );
    a.clean_file(&into);
    // Error paths of env: a bad --format, a bad timeout, a missing store.
    a.run(&["env", "--format", "JSON"], &caller_env, false);
    a.run(&["env", "--timeout", "x"], &caller_env, false);
    a.run(
        &["env", "--agents-dir", "/nonexistent/store"],
        &caller_env,
        true,
    );
    // exec: the child's output may hold values; stderr may not.
    a.run(
        &["exec", "--", "sh", "-c", "env >/dev/null"],
        &caller_env,
        true,
    );
    a.run(&["exec", "--", "/nonexistent/cmd"], &caller_env, false);
    // exec --redact and redact
    // (docs/redact.md#keeping-secrets-out-of-the-agents-context): their diagnostics
    // (-v counts,
    // -vv names) hold no value, and the values the stores set are masked
    // in what the child prints, on both streams.
    let shown = "printenv PRE_NATIVE PRE_TWO BASHED PY_OK OVL; printenv PRE_NATIVE PY_OK >&2";
    a.run(
        &["exec", "--redact", "--", "sh", "-c", shown],
        &caller_env,
        false,
    );
    a.run(
        &["exec", "--redact", "--", "/nonexistent/cmd"],
        &caller_env,
        false,
    );
    a.run(
        &["exec", "--redact", "--", "sh", "-c", "kill -TERM $$"],
        &caller_env,
        false,
    );
    a.run(&["redact"], &caller_env, false);
    a.run(&["redact", "--timeout", "x"], &caller_env, false);
    // The stores' values on redact's stdin come out masked.
    let values = a.p("values.txt");
    let dump = format!(
        "printenv PRE_NATIVE PRE_TWO BASHED PY_OK OVL > {}",
        values.display()
    );
    a.run(&["exec", "--", "sh", "-c", &dump], &caller_env, false);
    for verbose in [&[][..], &["-vv"][..]] {
        let out = Command::new(support::agentenv_bin())
            .args(verbose)
            .arg("redact")
            .current_dir(a.p("proj"))
            .env_clear()
            .envs(a.base_env())
            .envs(
                caller_env
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string())),
            )
            .stdin(std::fs::File::open(&values).unwrap())
            .output()
            .unwrap();
        let (o, e) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert_eq!(o.lines().count(), 5, "{o}");
        assert!(
            !o.contains(STEM) && !e.contains(STEM),
            "redact {verbose:?} leaks:\n{o}\n{e}"
        );
        a.runs += 1;
        a.checked += 2;
    }
    a.run(
        &["exec", "--agent", "claude", "--", "true"],
        &caller_env,
        false,
    );
    // explain without --show-values: stdout must be clean too.
    a.run(&["explain"], &caller_env, false);
    a.run(&["explain", "--format", "json"], &caller_env, false);
    a.run(
        &["explain", "PY_OK", "CALLER_SECRET", "BASHED", "OVL", "NOPE"],
        &caller_env,
        false,
    );
    a.run(&["explain", "--show-values"], &caller_env, true);
    // No Python and no bash on PATH (issue 10 item 6): the env.py layers
    // fail with a message naming AGENTS_PYTHON, values stay hidden.
    let mut bare_env = caller_env.to_vec();
    bare_env.push(("AGENTS_PYTHON", ""));
    bare_env.push(("PATH", "/nonexistent-bin"));
    a.run(&["env", "--format", "json"], &bare_env, true);
    a.run(&["explain"], &bare_env, false);
    // The ~/.bashrc trap note (issue 10 item 8) in explain and at -v.
    let home = a.p("home");
    let home = home.to_str().unwrap().to_string();
    let mut trap_env = caller_env.to_vec();
    trap_env.push(("AGENTS_PROJECT_ROOT", home.as_str()));
    a.run(&["explain"], &trap_env, false);
    a.run(&["explain", "--format", "json"], &trap_env, false);
    a.run(&["env", "--diff", "--cache"], &trap_env, true);

    // ---- operator layer --------------------------------------------------
    let v = [
        a.c("op"),
        a.c("opbad"),
        a.c("opdup"),
        a.c("oplocal"),
        a.c("opswallow"),
        a.c("opswallowed"),
    ];
    // Every kind of breakage launch now warns about (issue 10 item 4):
    // an ignored line, trailing text, an unterminated quote (in
    // .env.local), a closed multi-line value that swallowed assignments.
    a.write(
        "plug/.env",
        &format!(
            "OP_SECRET={}\nthis line is bad {}\nOP_SECRET=\"{}\" trailing\nSW=\"{}\nSW_LOST={}\nSW_END=\"\n",
            v[0], v[1], v[2], v[4], v[5]
        ),
    );
    a.write("plug/.env.local", &format!("OP_LOCAL='{}\n", v[3]));
    let v = [a.c("manifest"), a.c("reserved")];
    let manifest = a.write(
        "manifest.json",
        &format!("{{\"OP_DEFAULT\": \"{}\", \"RESERVED\": \"x\"}}", v[0]),
    );
    let bad_manifest = a.write("bad-manifest.json", &format!("{{\"K\": [\"{}\"]}}", v[0]));
    let broken_manifest = a.write("broken-manifest.json", &format!("{{\"K\": \"{}", v[0]));
    let report = a.p("report.json");
    let op_env = [
        ("RESERVED", v[1].as_str()),
        ("OP_DEFAULT", v[0].as_str()),
        ("CALLER_SECRET", caller[0].as_str()),
    ];
    let plug = a.p("plug");
    let plug = plug.to_str().unwrap();
    let m = manifest.to_str().unwrap();
    let r = report.to_str().unwrap();
    a.run(
        &[
            "launch",
            "--plugin-root",
            plug,
            "--manifest-env",
            m,
            "--report",
            r,
            "--",
            "true",
        ],
        &op_env,
        false,
    );
    a.clean_file(&report);
    a.run(
        &["-v", "launch", "--plugin-root", plug, "--", "true"],
        &op_env,
        false,
    );
    for bad in [&bad_manifest, &broken_manifest] {
        a.run(
            &[
                "launch",
                "--plugin-root",
                plug,
                "--manifest-env",
                bad.to_str().unwrap(),
                "--",
                "true",
            ],
            &op_env,
            false,
        );
    }
    a.run(
        &["launch", "--plugin-root", plug, "--", "/nonexistent/cmd"],
        &op_env,
        false,
    );
    a.run(&["launch", "--no-env", "--", "true"], &op_env, false);
    a.run(
        &[
            "launch",
            "--redact",
            "--plugin-root",
            plug,
            "--",
            "sh",
            "-c",
            "printenv OP_SECRET SW OP_LOCAL; printenv OP_SECRET >&2",
        ],
        &op_env,
        false,
    );
    a.run(
        &[
            "launch",
            "--redact",
            "--plugin-root",
            plug,
            "--",
            "/nonexistent/cmd",
        ],
        &op_env,
        false,
    );

    // ---- harness ----------------------------------------------------------
    let v = [
        a.c("runner"),
        a.c("sandbox"),
        a.c("reservedsb"),
        a.c("badkey"),
        a.c("cel"),
        a.c("legacy"),
    ];
    let ok = a.write(
        "fs/harness/ok.yaml",
        &format!(
            "agent: agents/a.md\nrole: r\nrunner_env:\n  LEGACY: '{5}'\nenv:\n  runner:\n    RUN_SECRET: '{0}'\n    FROM_HOST: '${{CALLER_SECRET}}'\n  sandbox:\n    SB_SECRET: \"{1}\"\n    GH_TOKEN: '{2}'\n    bad-key: '{3}'\nhost_files:\n  - src: /nonexistent/${{CALLER_SECRET}}/f\n    dest: /tmp/f\n  - src: /nonexistent/plain\n    dest: /tmp/g\n    optional: true\noverlays:\n  - when: 'event.action == \"{4}\"'\n    env:\n      sandbox:\n        OVERLAID: '{4}'\n",
            v[0], v[1], v[2], v[3], v[4], v[5]
        ),
    );
    let ev = a.c("event");
    let event = a.write("event.json", &format!("{{\"action\": \"{ev}\", \"n\": 1}}"));
    let cf = a.c("config");
    let config = a.write("config.yaml", &format!("forge: github\nsecret: '{cf}'\n"));
    let ef = [a.c("envfile"), a.c("envfilebad")];
    let envfile = a.write("h.env", &format!("EF_SECRET={}\n", ef[0]));
    let bad_envfile = a.write("bad.env", &format!("EF=1\nnot an assignment {}\n", ef[1]));
    let bev = a.c("badevent");
    let bad_event = a.write("bad-event.json", &format!("{{\"action\": \"{bev}\" oops}}"));
    let bcf = a.c("badconfig");
    let bad_config = a.write("bad-config.yaml", &format!("forge: [\"{bcf}\"\n"));
    let hv = [
        a.c("dup"),
        a.c("yamlsyntax"),
        a.c("unset"),
        a.c("celbad"),
        a.c("celtype"),
        a.c("forgeov"),
        a.c("tab"),
        a.c("default"),
        a.c("undeclared"),
        a.c("urlbase"),
        a.c("keyvalue"),
        a.c("budget"),
        a.c("envkey"),
    ];
    let cfg_forge = a.c("cfgforge");
    let bad_forge_config = a.write("bad-forge.yaml", &format!("forge: {cfg_forge}\n"));
    let env_key = a.write("key.env", &format!("TOKEN {}=x\n", hv[12]));
    let error_files = [
        a.write(
            "fs/harness/dup.yaml",
            &format!("agent: a\nrole: r\nenv:\n  runner:\n    K: '{0}'\n    K: '{0}'\n", hv[0]),
        ),
        a.write(
            "fs/harness/syntax.yaml",
            &format!("agent: a\nrole: r\nenv:\n  runner: {{K: '{}'\n", hv[1]),
        ),
        a.write(
            "fs/harness/unset.yaml",
            &format!("agent: a\nrole: r\nenv:\n  runner:\n    K: '{}${{NOT_SET_ANYWHERE}}'\n", hv[2]),
        ),
        a.write(
            "fs/harness/celbad.yaml",
            &format!("agent: a\nrole: r\noverlays:\n  - when: 'event.x == \"{}\" &&'\n", hv[3]),
        ),
        a.write(
            "fs/harness/celtype.yaml",
            &format!("agent: a\nrole: r\noverlays:\n  - when: '\"{}\"'\n", hv[4]),
        ),
        a.write(
            "fs/harness/forgeov.yaml",
            &format!("agent: a\nrole: r\nforge:\n  github:\n    env:\n      runner:\n        K: '{0}'\noverlays:\n  - when: 'true'\n", hv[5]),
        ),
        a.write(
            "fs/harness/tab.yaml",
            &format!("agent: a\nrole: r\nenv:\n\trunner: '{}'\n", hv[6]),
        ),
        a.write(
            "fs/harness/base.yaml",
            "base: ../../nonexistent/base.yaml\nagent: a\nrole: r\n",
        ),
        // issue #16 items 6, 7, 9, 10, 4 and a missing host file
        a.write(
            "fs/harness/default.yaml",
            &format!("agent: a\nrole: r\nenv:\n  runner:\n    K: '${{GH_TOKEN:-{}}}'\n", hv[7]),
        ),
        a.write(
            "fs/harness/undeclared.yaml",
            &format!("agent: a\nrole: r\noverlays:\n  - when: '{} == 1'\n", hv[8]),
        ),
        a.write(
            "fs/harness/urlbase.yaml",
            &format!("agent: a\nrole: r\nbase: 'HTTPS://u:p/{}@h.example/x.yaml#sha256={}'\n", hv[9], "0".repeat(64)),
        ),
        a.write(
            "fs/harness/keyvalue.yaml",
            &format!("agent: a\nrole: r\nenv:\n  sandbox:\n    'GH_TOKEN={0}': v\n  runner:\n    'K {0}': '${{NOPE}}'\n", hv[10]),
        ),
        a.write(
            "fs/harness/budget.yaml",
            &format!(
                "agent: a\nrole: r\noverlays:\n  - when: '{0}.exists(a, {0}.exists(b, {0}.exists(c, a == b && b == c && c == 9)))'\n    env: {{runner: {{B: \"{1}\"}}}}\n",
                format!("[{}]", vec!["1"; 200].join(",")),
                hv[11]
            ),
        ),
        a.write(
            "fs/harness/missing.yaml",
            "agent: a\nrole: r\nhost_files:\n  - {src: /nonexistent/x, dest: /tmp/x}\n",
        ),
    ];
    let hostenv = [
        ("CALLER_SECRET", caller[0].as_str()),
        ("GITHUB_ACTIONS", "true"),
    ];
    let (ok, event, config, envfile) = (
        ok.to_str().unwrap().to_string(),
        event.to_str().unwrap().to_string(),
        config.to_str().unwrap().to_string(),
        envfile.to_str().unwrap().to_string(),
    );
    let flags = [
        "--event",
        event.as_str(),
        "--config",
        config.as_str(),
        "--env-file",
        envfile.as_str(),
    ];
    let with = |head: &[&str], tail: &[&str]| -> Vec<String> {
        head.iter()
            .chain(flags.iter())
            .chain(tail.iter())
            .map(|s| s.to_string())
            .collect()
    };
    let sandbox_out = a.p("sandbox.env");
    let so = sandbox_out.to_str().unwrap().to_string();
    let cmds: Vec<(Vec<String>, bool)> = vec![
        (with(&["harness", "resolve", &ok], &[]), true),
        (with(&["harness", "lint", &ok], &[]), false),
        (with(&["harness", "run", &ok], &["--", "true"]), true),
        (
            with(&["harness", "run", &ok], &["--", "/nonexistent/cmd"]),
            false,
        ),
        (
            with(&["harness", "run", "--redact", &ok], &["--", "true"]),
            false,
        ),
        (
            with(
                &["harness", "run", "--redact", &ok],
                &["--", "/nonexistent/cmd"],
            ),
            false,
        ),
        (with(&["harness", "sandbox-env", &ok], &[]), true),
        (
            with(&["harness", "sandbox-env", &ok], &["--format", "dotenv"]),
            true,
        ),
        (with(&["harness", "sandbox-env", &ok], &["-o", &so]), false),
        (
            with(&["harness", "sandbox-env", &ok], &["--format", "github"]),
            true,
        ),
        (
            with(&["harness", "sandbox-env", &ok], &["--format", "docker"]),
            true,
        ),
        (with(&["harness", "explain", &ok], &[]), false),
        (
            with(&["harness", "explain", &ok], &["--format", "json"]),
            false,
        ),
        (with(&["harness", "explain", &ok], &["--show-values"]), true),
        (
            with(
                &["harness", "sandbox-env", &ok],
                &["-o", "/nonexistent/dir/f"],
            ),
            false,
        ),
    ];
    for (args, secret_out) in &cmds {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        a.run(&args, &hostenv, *secret_out);
    }
    for (flag, bad) in [
        ("--env-file", &bad_envfile),
        ("--event", &bad_event),
        ("--config", &bad_config),
        ("--config", &bad_forge_config),
        ("--env-file", &env_key),
    ] {
        // A skipped env-file line is a warning: the resolve succeeds and
        // prints values on stdout; stderr is what is audited.
        a.run(
            &["harness", "resolve", &ok, flag, bad.to_str().unwrap()],
            &hostenv,
            true,
        );
    }
    for f in &error_files {
        for sub in ["resolve", "lint", "sandbox-env", "explain"] {
            a.run(&["harness", sub, f.to_str().unwrap()], &hostenv, false);
        }
        a.run(
            &["harness", "run", f.to_str().unwrap(), "--", "true"],
            &hostenv,
            false,
        );
    }

    // ---- dotenv -----------------------------------------------------------
    let dv = [
        a.c("dparse"),
        a.c("dcheck"),
        a.c("dquote"),
        a.c("ddup"),
        a.c("dswallow"),
    ];
    let d1 = a.write(
        "d1.env",
        &format!(
            "S='{4}\nS_LOST={4}\nS_END='\nA={}\nbroken line {}\nQ=\"{}\n\nD=x\nD={}\n",
            dv[0], dv[1], dv[2], dv[3], dv[4]
        ),
    );
    let d1 = d1.to_str().unwrap().to_string();
    a.run(&["dotenv", "parse", &d1], &[], true);
    a.run(&["dotenv", "parse", "--format", "export", &d1], &[], true);
    a.run(&["dotenv", "parse", "--format", "nope", &d1], &[], false);
    a.run(&["dotenv", "check", &d1], &[], false);
    a.run(&["dotenv", "check", &d1, "/nonexistent.env"], &[], false);

    // ---- cache permissions (when the cache has landed) -------------------
    let has_cache = Command::new(support::agentenv_bin())
        .args(["env", "--help"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).contains("--cache"))
        .unwrap_or(false);
    if has_cache {
        let rc = a.write("rc", "# rc\n");
        let rc = rc.to_str().unwrap().to_string();
        a.run(
            &["env", "--format", "export", "--into", &rc],
            &caller_env,
            false,
        );
        a.run(
            &["env", "--format", "json", "--into", &rc],
            &caller_env,
            false,
        );
        a.run(
            &["env", "--format", "export", "--into", "/dev/zero"],
            &caller_env,
            false,
        );
        a.run(&["env", "--cache", "--format", "json"], &caller_env, true);
        a.run(&["env", "--cache", "--format", "json"], &caller_env, true);
        // --into with --cache: the miss and then the hit (issue 10) write
        // the file and print nothing, so stdout must be clean too; the rc
        // file is group/world-readable, so each run also warns (path only).
        std::fs::set_permissions(&rc, std::fs::Permissions::from_mode(0o644)).unwrap();
        for _ in 0..2 {
            a.run(
                &[
                    "env", "--cache", "--diff", "--format", "export", "--into", &rc,
                ],
                &caller_env,
                false,
            );
            a.run(&["env", "--cache", "--into", &rc], &caller_env, false);
        }
        // Another user's symlink in a sticky world-writable directory is
        // refused (issue 16 item 1): the error names the path only.
        if rustix::process::geteuid().is_root() {
            let share = a.p("share");
            std::fs::create_dir_all(&share).unwrap();
            std::fs::set_permissions(&share, std::fs::Permissions::from_mode(0o1777)).unwrap();
            let link = share.join("envfile");
            std::os::unix::fs::symlink(a.p("att-target"), &link).unwrap();
            std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
            let l = link.to_str().unwrap().to_string();
            a.run(&["env", "--cache", "--into", &l], &caller_env, false);
            assert!(!a.p("att-target").exists());
        }
        let hook_file = a.p("claude/env.sh");
        let hf = hook_file.to_str().unwrap().to_string();
        a.run(&["env", "--cache", "--into", &hf], &caller_env, false);
        a.run(&["env", "--cache", "--into", &hf], &caller_env, false);
        assert!(std::fs::read_to_string(&hook_file).unwrap().contains(STEM));
        let m = std::fs::metadata(&hook_file).unwrap().permissions().mode() & 0o777;
        assert_eq!(m, 0o600, "{}", hook_file.display());
        a.checked += 1;
        let mut files = 0;
        let cache = a.p("home/.agents/.cache");
        for d in [cache.clone(), cache.join("env")] {
            let m = std::fs::metadata(&d).unwrap().permissions().mode() & 0o777;
            assert_eq!(m, 0o700, "{}", d.display());
            a.checked += 1;
        }
        for e in std::fs::read_dir(cache.join("env")).unwrap().flatten() {
            let m = e.metadata().unwrap().permissions().mode() & 0o777;
            assert_eq!(m, 0o600, "{}", e.path().display());
            a.checked += 1;
            files += 1;
        }
        assert!(files > 0, "a cache entry was written");
        // A cache directory reached through a symlink is refused (issue 16
        // item 2): the warning names the path only; the run is uncached.
        let real = cache.join("env.real");
        std::fs::rename(cache.join("env"), &real).unwrap();
        std::os::unix::fs::symlink(&real, cache.join("env")).unwrap();
        a.run(&["env", "--cache", "--format", "json"], &caller_env, true);
        a.run(&["env", "--cache", "--into", &hf], &caller_env, false);
        std::fs::remove_file(cache.join("env")).unwrap();
        std::fs::rename(&real, cache.join("env")).unwrap();
    } else {
        eprintln!("secret_audit: `env --cache` not available yet, cache modes not checked");
    }

    // The shell hook and the trust gate (issue 12): the integration script,
    // allow/deny and the gate's messages never hold a value; a load's stdout
    // is shell code for the user's own shell (values asked for); the trust
    // records hold paths and digests only.
    let state = a.p("state");
    let state_s = state.to_str().unwrap().to_string();
    let mut trust_env = caller_env.to_vec();
    trust_env.push(("XDG_STATE_HOME", state_s.as_str()));
    for sh in ["bash", "zsh", "fish"] {
        a.run(&["hook", sh], &trust_env, false);
        a.run(&["hook", sh, "--load", "--pid", "1"], &trust_env, true);
    }
    a.run(
        &["env", "--require-trust", "--format", "json"],
        &trust_env,
        true,
    );
    a.run(&["allow"], &trust_env, false);
    a.run(&["hook", "bash", "--load", "--pid", "1"], &trust_env, true);
    a.run(&["explain", "--require-trust"], &trust_env, false);
    let changed = a.c("changed");
    a.write("proj/.agents/pre.env", &format!("CHANGED={changed}\n"));
    a.run(&["hook", "fish", "--load", "--pid", "1"], &trust_env, true);
    a.run(&["exec", "--require-trust", "true"], &trust_env, false);
    for e in std::fs::read_dir(state.join("agentenv/allowed"))
        .unwrap()
        .flatten()
    {
        a.clean_file(&e.path());
        let m = e.metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(m, 0o600, "{}", e.path().display());
    }
    a.run(&["deny"], &trust_env, false);
    a.run(&["deny"], &trust_env, false);
    // Issue 22: the hook's warning about names a shell reserves names them,
    // never their values; a value file's FIFO target is refused by name;
    // an env.py output over the value cap is named, never shown.
    let rv = a.c("reserved");
    a.write(
        "home/.agents/overlays/reserved/env.py",
        &format!(
            "import json\nprint(json.dumps({{'status': '{rv}', 'fish_pid': '{rv}', 'BASHOPTS': '{rv}', 'path': '{rv}'}}))\n"
        ),
    );
    for sh in ["bash", "zsh", "fish"] {
        a.run(&["hook", sh, "--load", "--pid", "1"], &trust_env, true);
    }
    a.write(
        "home/.agents/overlays/reserved/env.py",
        &format!("import json\nprint(json.dumps({{f'K{{i}}': '{rv}' for i in range(100001)}}))\n"),
    );
    a.run(&["env", "--format", "json"], &[], true);
    std::fs::remove_dir_all(a.p("home/.agents/overlays/reserved")).unwrap();
    let fifo = a.p("out.fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    a.run(&["env", "--into", fifo.to_str().unwrap()], &[], false);

    // ---- integrations (issue 13) --------------------------------------------
    // github/docker leave out what their readers cannot carry, and cannot
    // express removals: each warning names the variable, never its value.
    let iv = [a.c("ghcr"), a.c("ghlf"), a.c("ghgone"), a.c("ghbad")];
    a.write(
        "home/.agents/overlays/integ/env.py",
        &format!(
            "import json\nprint(json.dumps({{'INTEG_CR': '{0}\\r', 'INTEG_LF': '{1}\\nx', 'INTEG_GONE': None, 'bad key': '{2}'}}))\n",
            iv[0], iv[1], iv[3]
        ),
    );
    let mut integ_env = caller_env.to_vec();
    integ_env.push(("INTEG_GONE", iv[2].as_str()));
    for fmt in ["github", "docker"] {
        a.run(&["env", "--format", fmt], &integ_env, true);
        a.run(&["env", "--format", fmt, "--diff"], &integ_env, true);
        a.run(&["dotenv", "parse", "--format", fmt, &d1], &[], true);
    }
    let cr = a.c("dotenvcr");
    let d2 = a.write("d2.env", &format!("CR=\"{cr}\\r\"\nLF=\"a\\n{cr}\"\n"));
    let d2 = d2.to_str().unwrap().to_string();
    a.run(&["dotenv", "parse", "--format", "github", &d2], &[], true);
    a.run(&["dotenv", "parse", "--format", "docker", &d2], &[], true);
    // init claude: the settings file's values never reach stderr; stdout
    // holds the file only with --dry-run.
    let sv = [a.c("settings"), a.c("settingsbad")];
    let settings = a.write(
        "home/.claude/settings.json",
        &format!(
            "{{\n  \"env\": {{\n    \"TOKEN\": \"{}\"\n  }}\n}}\n",
            sv[0]
        ),
    );
    a.run(&["init", "claude"], &[], false);
    a.run(&["init", "claude", "--dry-run"], &[], true);
    a.run(&["init", "claude", "--remove", "--dry-run"], &[], true);
    a.run(&["init", "claude", "--remove"], &[], false);
    // init codex: the same for $CODEX_HOME/hooks.json.
    let codex_home = a.p("home/.codex").to_str().unwrap().to_string();
    a.write(
        "home/.codex/hooks.json",
        &format!("{{\"hooks\": {{}}, \"x\": \"{}\"}}", sv[0]),
    );
    let ce = [("CODEX_HOME", codex_home.as_str())];
    a.run(&["init", "codex"], &ce, false);
    a.run(&["init", "codex", "--dry-run"], &ce, true);
    a.run(&["init", "codex", "--remove"], &ce, false);
    // The agent hooks on events that are not JSON, or name a store.
    a.run(&["hook", "claude", "pre-tool-use"], &[], false);
    a.run(&["hook", "codex", "pre-tool-use"], &[], false);
    a.run(&["hook", "claude", "session-start"], &[], false);
    // The masking daemon, run in the foreground until its idle exit (at
    // once), in a runtime directory of the audit's own.
    let run = a.p("run");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let run = run.to_str().unwrap().to_string();
    a.run(
        &["hook", "claude", "daemon"],
        &[
            ("XDG_RUNTIME_DIR", run.as_str()),
            ("AGENTENV_DAEMON_IDLE", "0"),
        ],
        false,
    );
    std::fs::write(&settings, format!("{{\"env\": {{\"TOKEN\": {}}}}}", sv[1])).unwrap();
    a.run(&["init", "claude"], &[], false);
    a.run(&["init", "claude", "--dry-run"], &[], false);
    let proj = a.p("proj");
    let proj = proj.to_str().unwrap().to_string();
    a.write(
        "proj/.claude/settings.json",
        &format!("{{\"env\": {{\"TOKEN\": \"{}\"}}", sv[1]),
    );
    a.run(&["init", "claude", "--project", &proj], &[], false);
    // status: names and paths only, stdout included.
    a.run(&["status"], &trust_env, false);
    a.run(&["status", "--format", "json"], &trust_env, false);
    a.run(&["status", "--require-trust"], &trust_env, false);
    a.run(&["status", "--format", "json", "-g"], &integ_env, false);

    eprintln!(
        "secret_audit: {} canaries planted, {} runs, {} outputs checked",
        a.planted.len(),
        a.runs,
        a.checked
    );
    assert!(a.planted.len() >= 40);
}

/// `audit` and `set` (docs/audit-set.md#audit-and-set): canaries held by the stores
/// and planted in transcripts in several forms never reach audit's output
/// (text, JSON, `--fix`, `--all-stores`, the refusals) or set's (its usage
/// errors, the refusal without a terminal, the prompts on a terminal where one
/// is typed).
#[test]
fn no_canary_in_audit_or_set_output() {
    let mut a = Audit::new();
    let v = [a.c("audita"), a.c("auditb"), a.c("auditproj")];
    a.write(
        "home/.agents/env",
        &format!("AUD_A='{}'\nAUD_B='{}'\n", v[0], v[1]),
    );
    a.write("proj/.agents/env", &format!("AUD_A='{}'\n", v[2]));
    let hex: String = v[1].bytes().map(|b| format!("{b:02x}")).collect();
    let dir = a.p("transcripts");
    a.write(
        "transcripts/s.jsonl",
        &format!(
            "{{\"type\":\"user\",\"content\":\"token {} and {}\"}}\n{{\"n\":1}}\n",
            v[0], v[2]
        ),
    );
    a.write("transcripts/h.txt", &format!("echo {hex}\n"));
    let link = dir.join("link.txt");
    std::os::unix::fs::symlink(a.p("transcripts/h.txt"), &link).unwrap();
    let d = dir.to_str().unwrap().to_string();
    let l = link.to_str().unwrap().to_string();
    a.run(&["audit", &d], &[], false);
    a.run(&["audit", "--format", "json", &d], &[], false);
    a.run(&["audit", "--all-stores", &d], &[], false);
    a.run(&["audit", "--fix", &l], &[], false);
    a.run(&["audit", "--fix", "--format", "json", &d], &[], false);
    a.run(&["audit", "/nonexistent/place"], &[], false);
    a.run(&["audit"], &[], false);
    // A fixed file with other hard links, control bytes in a name (#31).
    let t2 = a.write(
        "transcripts2/x\u{1b}]0;t\u{7}\r.jsonl",
        &format!("{{\"content\":\"token {}\"}}\n", v[0]),
    );
    std::fs::hard_link(&t2, a.p("transcripts2-backup.jsonl")).unwrap();
    let d2 = a.p("transcripts2").to_str().unwrap().to_string();
    a.run(&["audit", &d2], &[], false);
    a.run(&["audit", "--fix", &d2], &[], false);
    // set: a store file that is a link (the refusal names it and its
    // target, no value of either).
    a.write("outside.env", &format!("X='{}'\n", v[1]));
    std::os::unix::fs::symlink(a.p("outside.env"), a.p("proj/.agents/pre.local.env")).unwrap();
    a.run(&["set", "AUD_L", "--file", "pre.local.env"], &[], false);
    // set: usage errors and the file it refuses come before any prompt.
    a.write(
        "proj/.agents/local.env",
        &format!("AUD_L=$(printf %s {})\n", v[0]),
    );
    a.run(&["set", "AUD_L"], &[], false);
    a.run(&["set", "1BAD"], &[], false);
    a.run(&["set", "AUD_L", "--file", "nope"], &[], false);
    // Without a terminal (a new session has none).
    if let Some(setsid) = support::tool("setsid") {
        let mut c = Command::new(setsid);
        c.arg("-w")
            .arg(support::agentenv_bin())
            .args(["-vv", "set", "AUD_NEW"])
            .current_dir(a.p("proj"))
            .env_clear()
            .envs(a.base_env())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        {
            use std::io::Write;
            let _ = child
                .stdin
                .take()
                .unwrap()
                .write_all(format!("{}\n", v[1]).as_bytes());
        }
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        let all = [out.stdout, out.stderr].concat();
        assert!(!String::from_utf8_lossy(&all).contains(STEM));
        a.checked += 1;
    }
    // On a terminal: what the terminal shows (prompts, the result line)
    // holds no typed canary.
    let typed = format!("{}\r", a.c("typed"));
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/support/pty_run.py");
    let argv = [
        support::agentenv_bin().to_string_lossy().into_owned(),
        "-vv".into(),
        "set".into(),
        "AUD_TYPED".into(),
        "--user".into(),
    ];
    let steps = [["Value for ", typed.as_str()], ["confirm ", typed.as_str()]];
    let out = Command::new("python3")
        .arg(driver)
        .arg(serde_json::to_string(&argv).unwrap())
        .arg(serde_json::to_string(&steps).unwrap())
        .current_dir(a.p("proj"))
        .env_clear()
        .envs(a.base_env())
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["status"], 0, "{r}");
    assert!(!r["out"].as_str().unwrap().contains(STEM), "{r}");
    a.checked += 1;
    let env = std::fs::read_to_string(a.p("home/.agents/env")).unwrap();
    assert!(env.contains("AUD_TYPED='zqCANARYtyped"), "{env}");
    let m = std::fs::metadata(a.p("home/.agents/env"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(m, 0o600);
    assert!(a.runs >= 20 && a.checked >= 40, "{} runs", a.runs);
}
