//! Differential tests: `agentenv env` against the reference `dotagents env`
//! 0.8.2 on the same store trees, with the deterministic environment of the
//! dotagents oracle recipe (`support::session_cmd`). stdout and the exit code
//! must be identical.
//!
//! Two parts: hand-written cases for every rule of the stores, the walk, the
//! layers, the default output and the command (`cases`), and generated trees
//! from a seeded xorshift (`generated`; seed from `AGENTENV_ORACLE_SEED`,
//! count from `AGENTENV_ORACLE_TREES`). Deliberate differences (docs/compat.md,
//! "Deliberate differences from dotagents env 0.8.2") are never generated: the
//! base env always pins `AGENTS_PYTHON`, no store has a `.pyvenv`, nothing
//! times out, stderr is not compared.

use crate::support;

use support::Rng;

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

#[derive(Clone, Debug)]
enum Node {
    File(String, Vec<u8>),
    Dir(String),
    Link(String, String),
    Fifo(String),
}

/// A store tree under a scratch dir `W`, plus how to run one case on it.
#[derive(Clone, Debug, Default)]
struct Case {
    name: String,
    nodes: Vec<Node>,
    vars: Vec<(String, Option<String>)>,
    args: Vec<String>,
    cwd: String,
}

impl Case {
    fn new(name: &str) -> Self {
        Case {
            name: name.into(),
            cwd: "proj".into(),
            args: vec!["--format".into(), "json".into(), "--diff".into()],
            ..Default::default()
        }
    }
    fn file(mut self, p: &str, body: &str) -> Self {
        self.nodes
            .push(Node::File(p.into(), body.as_bytes().to_vec()));
        self
    }
    fn dir(mut self, p: &str) -> Self {
        self.nodes.push(Node::Dir(p.into()));
        self
    }
    fn link(mut self, target: &str, p: &str) -> Self {
        self.nodes.push(Node::Link(target.into(), p.into()));
        self
    }
    fn fifo(mut self, p: &str) -> Self {
        self.nodes.push(Node::Fifo(p.into()));
        self
    }
    /// A base variable; `$W` in the value is the scratch dir.
    fn var(mut self, k: &str, v: &str) -> Self {
        self.vars.push((k.into(), Some(v.into())));
        self
    }
    fn unset(mut self, k: &str) -> Self {
        self.vars.push((k.into(), None));
        self
    }
    fn args(mut self, a: &[&str]) -> Self {
        self.args = a.iter().map(|s| s.to_string()).collect();
        self
    }
    fn cwd(mut self, c: &str) -> Self {
        self.cwd = c.into();
        self
    }

    fn build(&self, w: &Path) {
        std::fs::create_dir_all(w.join("home")).unwrap();
        std::fs::create_dir_all(w.join("proj")).unwrap();
        // Best effort: a generated tree may name one path twice or put a
        // file where a later node wants a directory; both tools see the
        // same tree either way.
        for n in &self.nodes {
            let path = match n {
                Node::File(p, _) | Node::Dir(p) | Node::Link(_, p) | Node::Fifo(p) => p,
            };
            let full = w.join(path);
            if std::fs::symlink_metadata(&full).is_ok() {
                continue;
            }
            if let Some(parent) = full.parent() {
                if std::fs::create_dir_all(parent).is_err() {
                    continue;
                }
            }
            let _ = match n {
                Node::File(_, body) => std::fs::write(&full, body),
                Node::Dir(_) => std::fs::create_dir_all(&full),
                Node::Link(t, _) => {
                    std::os::unix::fs::symlink(t.replace("$W", w.to_str().unwrap()), &full)
                }
                Node::Fifo(_) => {
                    let ok = Command::new("mkfifo")
                        .arg(&full)
                        .status()
                        .unwrap()
                        .success();
                    assert!(ok, "mkfifo");
                    Ok(())
                }
            };
        }
    }

    fn env(&self, w: &Path) -> Vec<(String, String)> {
        let ws = w.to_str().unwrap();
        let mut env: Vec<(String, String)> = vec![
            ("HOME".into(), format!("{ws}/home")),
            ("PATH".into(), "/usr/bin:/bin".into()),
            ("LANG".into(), "C.UTF-8".into()),
            // The interpreter every case pins (the oracle recipe's).
            (
                "AGENTS_PYTHON".into(),
                support::pinned_python().to_str().unwrap().into(),
            ),
            ("AGENTS_SYSTEM_ROOT".into(), format!("{ws}/no-system")),
        ];
        for (k, v) in &self.vars {
            env.retain(|(ek, _)| ek != k);
            if let Some(v) = v {
                env.push((k.clone(), v.replace("$W", ws)));
            }
        }
        env
    }

    fn run(&self, tool: &Path, w: &Path) -> (Vec<u8>, Option<i32>, Vec<u8>) {
        let ws = w.to_str().unwrap();
        let args: Vec<String> = self.args.iter().map(|a| a.replace("$W", ws)).collect();
        let out = Command::new(tool)
            .arg("env")
            .args(&args)
            .current_dir(w.join(&self.cwd))
            .env_clear()
            .envs(self.env(w))
            .output()
            .unwrap();
        (out.stdout, out.status.code(), out.stderr)
    }

    /// Run both tools; `Err` describes the difference.
    fn compare(&self, oracle: &Path) -> Result<(), String> {
        let tmp = tempfile::tempdir().unwrap();
        let w = tmp.path().canonicalize().unwrap();
        self.build(&w);
        std::fs::create_dir_all(w.join(&self.cwd)).unwrap();
        let (eo, ec, ee) = self.run(oracle, &w);
        let (ao, ac, ae) = self.run(&support::agentenv_bin(), &w);
        if eo == ao && ec == ac {
            return Ok(());
        }
        let ws = w.to_str().unwrap();
        let show = |b: &[u8]| String::from_utf8_lossy(b).replace(ws, "$W");
        Err(format!(
            "case {}: args {:?} vars {:?} cwd {}\n--- tree\n{}\n--- dotagents (exit {:?})\n{}\n--- stderr\n{}\n--- agentenv (exit {:?})\n{}\n--- stderr\n{}",
            self.name,
            self.args,
            self.vars,
            self.cwd,
            self.nodes
                .iter()
                .map(|n| match n {
                    Node::File(p, b) => format!("{p}: {}", String::from_utf8_lossy(b)),
                    other => format!("{other:?}"),
                })
                .collect::<Vec<_>>()
                .join("\n"),
            ec,
            show(&eo),
            show(&ee),
            ac,
            show(&ao),
            show(&ae)
        ))
    }
}

/// Compare many cases on two threads; panic listing every failure.
fn compare_all(cases: Vec<Case>, what: &str) {
    let Some(oracle) = support::dotagents() else {
        return;
    };
    let total = cases.len();
    let queue = Arc::new(Mutex::new(cases));
    let fails = Arc::new(Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (q, f, o) = (queue.clone(), fails.clone(), oracle.clone());
            std::thread::spawn(move || loop {
                let Some(c) = q.lock().unwrap().pop() else {
                    break;
                };
                if let Err(e) = c.compare(&o) {
                    f.lock().unwrap().push(e);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let fails = fails.lock().unwrap();
    println!(
        "oracle {what}: compared {total} cases, {} identical, {} different",
        total - fails.len(),
        fails.len()
    );
    if !fails.is_empty() {
        let shown: Vec<&String> = fails.iter().take(5).collect();
        panic!(
            "{} of {total} {what} differ from dotagents; first ones:\n\n{}",
            fails.len(),
            shown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n\n=====\n\n")
        );
    }
}

const ORDER_PY: &str = "import os, sys, json\nlvl = sys.argv[sys.argv.index('--level') + 1]\nprint(json.dumps({'ORDER': os.environ.get('ORDER', '') + ' TAG(' + lvl + ')'}))\n";

fn order_py(tag: &str) -> String {
    ORDER_PY.replace("TAG", tag)
}

fn order_sh(tag: &str) -> String {
    format!("ORDER=\"$ORDER {tag}\"\n")
}

fn py(body: &str) -> String {
    format!("import json, os, sys\n{body}\n")
}

/// The hand-written cases, one or more per rule.
fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    let all_formats = [
        "export",
        "posix",
        "sh",
        "bash",
        "dotenv",
        "env",
        "powershell",
        "pwsh",
        "ps",
        "cmd",
        "bat",
        "batch",
        "fish",
        "json",
        "ini",
        "yaml",
    ];
    // Defaults, every format, both modes.
    for f in all_formats {
        v.push(Case::new(&format!("defaults-{f}-diff")).args(&["--format", f, "--diff"]));
        v.push(
            Case::new(&format!("defaults-{f}-full"))
                .args(&["--format", f])
                .var("DOTAGENTS_SECRET", "hidden")
                .var("TO_REMOVE", "x")
                .file(
                    "home/.agents/env",
                    "unset TO_REMOVE\nexport DOTAGENTS_SET=shown\n",
                ),
        );
    }
    // Bad formats: exit 1, nothing on stdout.
    for f in ["JSON", "Export", "xml", ""] {
        v.push(Case::new(&format!("bad-format-{f}")).args(&["--format", f]));
    }
    v.push(Case::new("format-equals").args(&["--format=json", "--diff"]));
    // argparse: the last of a repeated option wins; unique prefixes work.
    v.push(Case::new("repeated-format").args(&["--format", "json", "--format", "yaml"]));
    v.push(Case::new("repeated-flags").args(&["--diff", "--diff", "-g", "-g", "--format", "json"]));
    v.push(Case::new("abbreviated").args(&["--form", "json", "--dif"]));
    v.push(Case::new("repeated-agents-dir").args(&[
        "--format=json",
        "--agents-dir=$W/a",
        "--agents-dir",
        "$W/b",
    ]));
    // Usage errors: exit 2.
    v.push(Case::new("unknown-option").args(&["--nope"]));
    v.push(Case::new("missing-arg").args(&["--format"]));
    // Fed back: nothing left.
    v.push(
        Case::new("defaults-fed-back")
            .var("AGENTS_HOME", "$W/home/.agents")
            .var("AGENTS_PROJECT_ROOT", "$W/proj")
            .var(
                "PATH",
                "$W/proj/.agents/bin:$W/home/.agents/bin:/usr/bin:/bin",
            ),
    );
    // Stores.
    v.push(
        Case::new("agents-home")
            .var("AGENTS_HOME", "$W/other/.agents")
            .dir("other/.agents/bin"),
    );
    v.push(Case::new("agents-home-empty").var("AGENTS_HOME", ""));
    v.push(Case::new("agents-home-tilde").var("AGENTS_HOME", "~/alt"));
    v.push(Case::new("agents-home-relative").var("AGENTS_HOME", "../home/.agents/"));
    v.push(Case::new("agents-home-trailing").var("AGENTS_HOME", "$W/home/.agents/"));
    v.push(
        Case::new("agents-home-via-link")
            .dir("home/.agents")
            .link("$W/home/.agents", "lnk")
            .var("AGENTS_HOME", "$W/lnk"),
    );
    v.push(Case::new("agents-home-dotdot-abs").var("AGENTS_HOME", "$W/x/../home/.agents"));
    v.push(
        Case::new("agents-home-dotdot-abs-rel-root")
            .var("AGENTS_HOME", "$W/x/../home/.agents")
            .var("AGENTS_PROJECT_ROOT", "."),
    );
    v.push(Case::new("agents-dir-flag").args(&[
        "--format",
        "json",
        "--diff",
        "--agents-dir",
        "$W/ad",
    ]));
    v.push(Case::new("agents-dir-tilde").args(&[
        "--format",
        "json",
        "--diff",
        "--agents-dir",
        "~/x",
    ]));
    v.push(Case::new("agents-dir-relative").args(&[
        "--format",
        "export",
        "--diff",
        "--agents-dir",
        "sub/../st",
    ]));
    v.push(
        Case::new("agents-dir-over-home")
            .var("AGENTS_HOME", "$W/a")
            .args(&["--format", "json", "--diff", "--agents-dir", "$W/b"]),
    );
    v.push(Case::new("agents-dir-global").args(&[
        "-g",
        "--format",
        "json",
        "--diff",
        "--agents-dir",
        "$W/b",
    ]));
    v.push(Case::new("legacy-dotagents-dir").var("DOTAGENTS_AGENTS_DIR", "$W/legacy"));
    v.push(
        Case::new("project-root-var")
            .var("AGENTS_PROJECT_ROOT", "$W/elsewhere")
            .file("elsewhere/.agents/env", "P=1\n"),
    );
    v.push(
        Case::new("project-root-empty")
            .var("AGENTS_PROJECT_ROOT", "")
            .var("CLAUDE_PROJECT_DIR", "$W/cp")
            .file("cp/.agents/env", "CP=1\n"),
    );
    v.push(Case::new("project-root-relative").var("AGENTS_PROJECT_ROOT", "../proj/./"));
    v.push(Case::new("project-root-tilde").var("CLAUDE_PROJECT_DIR", "~/p"));
    v.push(Case::new("project-root-missing").var("AGENTS_PROJECT_ROOT", "$W/nope"));
    v.push(
        Case::new("no-walk-up")
            .file("proj/.agents/env", "UP=1\n")
            .dir("proj/sub")
            .cwd("proj/sub"),
    );
    v.push(
        Case::new("inside-store")
            .dir("proj/.agents")
            .cwd("proj/.agents"),
    );
    // System store.
    v.push(
        Case::new("system-store")
            .var("AGENTS_SYSTEM_ROOT", "$W/sys")
            .file("sys/env", "SYS=1\n")
            .dir("sys/bin"),
    );
    v.push(Case::new("system-relative").var("AGENTS_SYSTEM_ROOT", "rel/sys"));
    v.push(
        Case::new("system-empty")
            .var("AGENTS_SYSTEM_ROOT", "")
            .args(&["--format", "json"]),
    );
    v.push(
        Case::new("system-is-file")
            .var("AGENTS_SYSTEM_ROOT", "$W/sysfile")
            .file("sysfile", "x"),
    );
    v.push(
        Case::new("system-is-project-store")
            .var("AGENTS_SYSTEM_ROOT", "$W/proj/.agents")
            .file("proj/.agents/env.py", &order_py("p"))
            .file("proj/.agents/local.env", "LOCAL=1\n")
            .file("home/.agents/env.py", &order_py("u")),
    );
    v.push(
        Case::new("system-overlays-shadowed")
            .var("AGENTS_SYSTEM_ROOT", "$W/sys")
            .dir("sys/overlays/tool/bin")
            .file("sys/overlays/tool/env", "FROM=sys\n")
            .file("home/.agents/overlays/tool/env", "FROM=user\n"),
    );
    // agentenv's own declarations file
    // (docs/session.md#sensitive-and-public-values): the reference does not read it,
    // and without --public-only it changes nothing here.
    v.push(
        Case::new("agentenv-toml-is-not-a-layer")
            .file("home/.agents/env", "TOKEN=t\nLOG=1\n")
            .file(
                "home/.agents/agentenv.toml",
                "[vars]\nLOG = { public = true }\nTOKEN = { public = 3 }\n",
            )
            .file("home/.agents/overlays/tool/env", "TOOL=1\n")
            .file("home/.agents/overlays/tool/agentenv.toml", "not toml = =\n")
            .file("proj/.agents/env", "P=1\n")
            .file(
                "proj/.agents/agentenv.toml",
                "[vars]\n\"*\" = { public = true }\n",
            ),
    );
    // Scope: -g, collapse.
    v.push(
        Case::new("global")
            .file(
                "home/.agents/env.py",
                &py("print(json.dumps({'A': ' '.join(sys.argv[1:])}))"),
            )
            .file("proj/.agents/env", "P=1\n")
            .args(&["-g", "--format", "json", "--diff"]),
    );
    v.push(
        Case::new("global-root-pinned")
            .var("AGENTS_PROJECT_ROOT", "$W/pinned")
            .args(&["--global", "--format", "json", "--diff"]),
    );
    v.push(
        Case::new("global-root-empty")
            .var("AGENTS_PROJECT_ROOT", "")
            .args(&["-g", "--format", "json", "--diff"]),
    );
    v.push(
        Case::new("collapse-cwd-home")
            .file(
                "home/.agents/env.py",
                &py("print(json.dumps({'A': ' '.join(sys.argv[1:])}))"),
            )
            .file("home/.agents/local.env", "L=1\n")
            .cwd("home"),
    );
    v.push(
        Case::new("collapse-agents-dir")
            .file(
                "proj/.agents/env.py",
                &py("print(json.dumps({'A': ' '.join(sys.argv[1:])}))"),
            )
            .args(&[
                "--format",
                "json",
                "--diff",
                "--agents-dir",
                "$W/proj/.agents",
            ]),
    );
    v.push(
        Case::new("collapse-via-link")
            .dir("real/.agents")
            .link("$W/real", "proj2")
            .var("AGENTS_HOME", "$W/real/.agents")
            .file("real/.agents/env.py", &order_py("x"))
            .cwd("proj2"),
    );
    // Overlays.
    let mut ov = Case::new("overlay-names");
    for n in [
        ".git",
        "__pycache__",
        "2fast",
        "trail-",
        "user",
        "Project-Root",
        "con",
        "nul.txt",
        "a.b-c_d",
        "Z9",
        "v1.2",
        "My_Tool",
        "good",
        "x",
        "DEFAULT",
        "lpt3.x",
    ] {
        ov = ov.dir(&format!("home/.agents/overlays/{n}/bin"));
    }
    v.push(
        ov.file("home/.agents/overlays/afile", "x")
            .link("$W/elsewhere", "home/.agents/overlays/linked")
            .dir("elsewhere/lib"),
    );
    v.push(
        Case::new("overlay-same-store-dup")
            .file("home/.agents/overlays/my-tool/env", "A=dash\n")
            .file("home/.agents/overlays/my_tool/env", "B=underscore\n")
            .dir("home/.agents/overlays/my_tool/bin"),
    );
    v.push(
        Case::new("overlay-shadow")
            .file("home/.agents/overlays/My_Tool/env", "FROM=user\n")
            .dir("home/.agents/overlays/My_Tool/lib")
            .file("proj/.agents/overlays/my-tool/env", "FROM=project\n")
            .dir("proj/.agents/overlays/my-tool/bin"),
    );
    v.push(
        Case::new("overlay-root-pinned-store-copy")
            .dir("home/.agents/overlays/tool")
            .dir("proj/.agents/overlays/tool")
            .var("TOOL_OVERLAY_ROOT", "$W/home/.agents/overlays/tool"),
    );
    v.push(
        Case::new("overlay-root-pinned-other")
            .dir("home/.agents/overlays/tool")
            .var("TOOL_OVERLAY_ROOT", "/x"),
    );
    v.push(
        Case::new("overlay-root-pinned-empty")
            .dir("home/.agents/overlays/tool")
            .var("TOOL_OVERLAY_ROOT", ""),
    );
    // The walk (A14 order).
    v.push(
        Case::new("walk-order-a14")
            .dir("home/.agents/overlays/aa")
            .dir("home/.agents/overlays/bb")
            .dir("proj/.agents/overlays/pp")
            .file("home/.agents/overlays/aa/pre.env.py", &order_py("pre-aa"))
            .file("home/.agents/pre.env", &order_sh("pre-user"))
            .file("proj/.agents/pre.local.env", &order_sh("pre-local"))
            .file("home/.agents/overlays/aa/env.py", &order_py("aa"))
            .file("home/.agents/overlays/bb/env.py", &order_py("bb"))
            .file("home/.agents/env.py", &order_py("user"))
            .file("proj/.agents/overlays/pp/env.py", &order_py("pp"))
            .file("proj/.agents/env.py", &order_py("project"))
            .file("proj/.agents/env", &order_sh("project-env"))
            .file("proj/.agents/local.env", &order_sh("local"))
            .file("home/.agents/local.env", &order_sh("never-user-local"))
            .file(
                "home/.agents/overlays/aa/local.env",
                &order_sh("never-overlay-local"),
            )
            .file("proj/env.py", &order_py("never-root"))
            .file("proj/env", &order_sh("never-root-env"))
            .file("proj/local.env", &order_sh("never-root-local"))
            .dir("proj/bin")
            .dir("proj/lib"),
    );
    v.push(
        Case::new("walk-file-kinds")
            .dir("home/.agents/env")
            .link("$W/nowhere", "home/.agents/pre.env")
            .link("$W/real.env", "proj/.agents/env")
            .file("real.env", "REAL=1\n")
            .fifo("proj/.agents/local.env")
            .dir("home/.agents/env.py"),
    );
    // Identity.
    for (name, vars) in [
        (
            "id-claude",
            vec![("CLAUDECODE", "1"), ("ANTHROPIC_MODEL", "opus")],
        ),
        (
            "id-claude-entry-empty",
            vec![("CLAUDE_CODE_ENTRYPOINT", "")],
        ),
        (
            "id-gemini",
            vec![("GEMINI_CLI", "1"), ("GEMINI_MODEL", "g")],
        ),
        (
            "id-codex-prefix",
            vec![
                ("CODEX_SANDBOX_NETWORK_DISABLED", "1"),
                ("OPENAI_MODEL", "o"),
            ],
        ),
        ("id-cursor", vec![("CURSOR_AGENT", "1")]),
        ("id-pi", vec![("PI_CODING_AGENT", "1"), ("PI_MODEL", "p")]),
        (
            "id-harness-name",
            vec![("AGENTS_HARNESS", "copilot"), ("COPILOT_MODEL", "c")],
        ),
        ("id-harness-id", vec![("AGENTS_HARNESS", "gemini-cli")]),
        (
            "id-harness-unknown",
            vec![("AGENTS_HARNESS", "zzz"), ("CLAUDECODE", "1")],
        ),
        (
            "id-no-clobber",
            vec![
                ("CLAUDECODE", "1"),
                ("AGENT", "mine"),
                ("AGENTS_VENDOR", ""),
                ("AGENTS_MODEL", ""),
            ],
        ),
        (
            "id-not-markers",
            vec![
                ("CODEX_HOME", "x"),
                ("GEMINI_API_KEY", "k"),
                ("COPILOT_MODEL", "m"),
                ("AI_AGENT", "1"),
            ],
        ),
        ("id-order", vec![("CURSOR_AGENT", "1"), ("GEMINI_CLI", "1")]),
        (
            "id-agents-agent",
            vec![("CLAUDECODE", "1"), ("AGENTS_AGENT", "x")],
        ),
    ] {
        let mut c = Case::new(name);
        for (k, val) in vars {
            c = c.var(k, val);
        }
        v.push(c.clone());
        v.push(c.args(&["--format", "yaml"]));
    }
    v.push(
        Case::new("id-file-overrides")
            .var("CLAUDECODE", "1")
            .file("home/.agents/env.py", &py("print(json.dumps({'AGENTS_MODEL': 'file', 'SEEN': os.environ.get('AGENTS_HARNESS', '')}))")),
    );
    // Roots.
    v.push(
        Case::new("roots-relative-inherited")
            .var("AGENTS_HOME", "../home/.agents")
            .var("AGENTS_PROJECT_ROOT", "."),
    );
    v.push(
        Case::new("roots-different")
            .var("AGENTS_PROJECT_ROOT", "$W/proj/")
            .var("AGENTS_HOME", "$W/home/.agents")
            .args(&["--format", "json", "--diff", "--agents-dir", "$W/b"]),
    );
    // Interpreter.
    v.push(Case::new("pyvenv-removed").var("AGENTS_PYVENV", "/x/venv"));
    v.push(Case::new("pyvenv-empty").var("AGENTS_PYVENV", ""));
    v.push(Case::new("pylib-kept").var("AGENTS_PYLIB", "/x.pyz"));
    v.push(
        Case::new("interpreter-reread")
            .file("home/.agents/pre.env", "AGENTS_PYTHON=$W/bin/fakepy\n")
            .file("bin/fakepy", "#!/bin/sh\necho '{\"FAKE\": \"yes\"}'\n")
            .file("home/.agents/env.py", "print('{\"REAL\": \"1\"}')\n"),
    );
    // PATH.
    v.push(Case::new("path-p01").var(
        "PATH",
        ":/usr/bin:.:rel/dir::$W/home/.agents/bin:/bin:/usr/bin",
    ));
    v.push(
        Case::new("path-unset")
            .unset("PATH")
            .file("home/.agents/env", "X=1\n"),
    );
    v.push(Case::new("path-backslash").var("PATH", "\\odd:/usr/bin:/bin"));
    v.push(Case::new("path-launcher-dirs").var(
        "PATH",
        "/s/.pyvenv/3.11/overlays:/usr/bin:/bin:/t/.pyvenv/x/overlays/",
    ));
    v.push(
        Case::new("path-same-as-ours")
            .var(
                "PATH",
                "$W/proj/.agents/bin:$W/home/.agents/bin:/usr/bin:/bin",
            )
            .args(&["--format", "export", "--diff"]),
    );
    v.push(
        Case::new("path-export-short")
            .var("PATH", "/usr/bin:/bin")
            .args(&["--format", "export", "--diff"]),
    );
    v.push(
        Case::new("path-export-empty-base")
            .var("PATH", "")
            .args(&["--format", "export", "--diff"]),
    );
    v.push(
        Case::new("path-env-py-sees")
            .dir("home/.agents/overlays/tool/bin")
            .file(
                "home/.agents/overlays/tool/bin/hello",
                "#!/bin/sh\necho hi\n",
            )
            .file(
                "home/.agents/env.py",
                &py("print(json.dumps({'P': os.environ['PATH']}))"),
            ),
    );
    v.push(Case::new("path-file-unsets").file("home/.agents/env", "unset PATH\n"));
    v.push(Case::new("path-file-only").file("home/.agents/env", "PATH=/opt/only\n"));
    v.push(
        Case::new("path-file-prepends")
            .file("home/.agents/env", "PATH=/opt/x:$PATH\n")
            .args(&["--format", "export", "--diff"]),
    );
    // Libs.
    v.push(Case::new("pp-rel-dropped").var("PYTHONPATH", "rel:/abs::"));
    v.push(
        Case::new("pp-stale-removed")
            .var("AGENTS_PYTHONPATH", "/old/a")
            .var("PYTHONPATH", "/old/a"),
    );
    v.push(
        Case::new("pp-stale-replaced")
            .var("AGENTS_PYTHONPATH", "/old/a:/old/b")
            .var("PYTHONPATH", "/old/a:/keep:/old/b")
            .dir("home/.agents/lib"),
    );
    v.push(
        Case::new("pp-empty")
            .var("PYTHONPATH", "")
            .var("AGENTS_PYTHONPATH", ""),
    );
    v.push(
        Case::new("pp-order")
            .dir("home/.agents/lib")
            .dir("home/.agents/overlays/aa/lib")
            .dir("home/.agents/overlays/bb/lib")
            .dir("proj/.agents/lib")
            .file("home/.agents/overlays/zz/lib", "not a dir")
            .file(
                "home/.agents/env.py",
                &py("print(json.dumps({'SEEN': os.environ.get('PYTHONPATH', '')}))"),
            ),
    );
    v.push(
        Case::new("pp-l08")
            .dir("home/.agents/overlays/aa/lib")
            .file("home/.agents/pre.env", "PYTHONPATH=/elsewhere\n")
            .file("home/.agents/env.py", &py("print(json.dumps({'SEEN': os.environ['PYTHONPATH'], 'ENC': os.environ.get('PYTHONIOENCODING', '')}))")),
    );
    // Children: bootstrap vars, cwd.
    v.push(
        Case::new("child-backfill")
            .var("TMPDIR", "/tmp")
            .file("home/.agents/pre.env", "unset TMPDIR\n")
            .file("home/.agents/env.py", &py("print(json.dumps({'T': os.environ.get('TMPDIR', 'none'), 'CWD': os.getcwd()}))")),
    );
    // Env.py protocol.
    for (name, body) in [
        ("py-one-object", "print(json.dumps({'A': '1', 'B': 'two words'}))"),
        ("py-pretty", "print(json.dumps({'A': '1', 'B': '2'}, indent=2))"),
        ("py-per-line", "print('{\"K\": null}')\nprint()\nprint('{\"K\": \"v\", \"L\": \"1\"}')"),
        ("py-per-line-null-last", "print('{\"K\": \"v\"}')\nprint('{\"K\": null}')"),
        ("py-trailing", "print('{\"A\": \"1\"} trailing')"),
        ("py-array", "print('[1, 2]')"),
        ("py-string", "print('\"s\"')"),
        ("py-number", "print('42')"),
        ("py-null", "print('null')"),
        ("py-empty", "pass"),
        ("py-whitespace", "print('   \\n\\t ')"),
        ("py-non-strings", "print('{\"B\": true, \"I\": 1, \"F\": 1.5, \"L\": [1], \"D\": {}, \"N\": NaN, \"X\": \"ok\"}')"),
        ("py-bad-keys", "print(json.dumps({'': 'e', 'A=B': 'x', 'A-B': 'dash', '1X': 'digit', 'sp ace': 's', 'N\\u0000UL': 'n'}))"),
        ("py-nul-value", "print(json.dumps({'Z': 'a\\u0000b', 'OK': 'y'}))"),
        ("py-surrogate", "print('{\"S\": \"\\\\udc80\", \"T\": \"\\\\ud83d\\\\ude00\"}')"),
        ("py-raw-bytes", "sys.stdout.buffer.write(b'{\"R\": \"\\xff\"}\\n')"),
        ("py-unicode", "print(json.dumps({'U': 'caf\\u00e9 \\u2028 \\U0001F600', 'Q': 'it\\'s \"q\" $x `y` \\\\'}))"),
        ("py-exit", "print(json.dumps({'A': '1'}))\nsys.exit(3)"),
        ("py-crash", "raise SystemExit(7)"),
        ("py-signal", "import signal\nos.kill(os.getpid(), signal.SIGKILL)"),
        ("py-stderr", "sys.stderr.write('noise\\n')\nprint(json.dumps({'A': '1'}))"),
        ("py-dup-keys", "print('{\"A\": \"1\", \"B\": \"2\", \"A\": \"3\"}')"),
        ("py-remove-base", "print(json.dumps({'TO_REMOVE': None, 'NEVER': None}))"),
        ("py-set-same", "print(json.dumps({'TO_REMOVE': 'bye'}))"),
        ("py-argv", "print(json.dumps({'ARGV': ' '.join(sys.argv[1:])}))"),
        ("py-multiline-value", "print(json.dumps({'M': 'a\\nb\\r\\nc\\td'}))"),
        ("py-bom", "sys.stdout.buffer.write(b'\\xef\\xbb\\xbf{\"A\": \"1\"}')"),
        ("py-infinity", "print('{\"A\": Infinity, \"B\": -Infinity, \"C\": \"c\"}')"),
        ("py-bigint", "print('{\"A\": ' + '9' * 5000 + ', \"B\": \"b\"}')"),
        ("py-control-in-string", "sys.stdout.write('{\"A\": \"x\\ty\"}')"),
        ("py-lines-mixed", "print('{\"A\": \"1\"}')\nprint('[1]')"),
        ("py-vt-split", "sys.stdout.write('{\"A\": \"1\"}\\x0b{\"B\": \"2\"}')"),
        ("py-line-sep-split", "sys.stdout.write('{\"A\": \"1\"}\\u2028{\"B\": \"2\"}')"),
    ] {
        v.push(
            Case::new(name)
                .var("TO_REMOVE", "bye")
                .file("home/.agents/env.py", &py(body)),
        );
    }
    v.push(
        Case::new("py-in-overlay-argv")
            .file(
                "home/.agents/overlays/My_Tool/env.py",
                &py("print(json.dumps({'ARGV': ' '.join(sys.argv[1:])}))"),
            )
            .args(&["-g", "--format", "json", "--diff"]),
    );
    v.push(
        Case::new("py-missing-interpreter")
            .var("AGENTS_PYTHON", "$W/nope/python")
            .file("home/.agents/env.py", "print('{}')\n"),
    );
    v.push(
        Case::new("py-agents-python-empty")
            .file("home/.agents/pre.env", "AGENTS_PYTHON=\n")
            .file("home/.agents/env.py", "print('{\"A\": \"1\"}')\n"),
    );
    // Plain files.
    for (name, body) in [
        (
            "sh-assignments",
            "A=1\nexport B='two words'\nC=\"x $HOME y\"\nreadonly D=4\ndeclare -x E=5\n",
        ),
        ("sh-unset", "unset TO_REMOVE\nunset NEVER\n"),
        ("sh-export-n", "export -n TO_REMOVE\n"),
        ("sh-same-value", "TO_REMOVE=bye\n"),
        ("sh-function", "greet() { echo hi; }\nA=1\n"),
        ("sh-exit0", "A=1\nexit 0\n"),
        ("sh-exit1", "A=1\nexit 1\n"),
        ("sh-syntax", "A=1\nif then\n"),
        ("sh-last-false", "A=1\nX=\n[ -n \"$X\" ] && Y=1\n"),
        ("sh-return0", "A=1\nreturn 0\nB=2\n"),
        ("sh-set-eu", "set -eu\nA=1\n"),
        ("sh-output", "echo noise\necho err >&2\nA=1\n"),
        (
            "sh-multiline",
            "M='line1\nline2'\nT=$'tab\\there'\nCR=$'a\\rb'\n",
        ),
        ("sh-nonutf8", "B=$'\\xff\\xfe'\n"),
        ("sh-comments", "# comment\n\nA=1 # trailing\n"),
        (
            "sh-bash-own",
            "SHLVL=9\n_=x\nOLDPWD=/x\nPWD=/y\nMSYSTEM=z\nA=1\n",
        ),
        ("sh-crlf", "A=1\r\nB=2\r\n"),
        ("sh-cd", "cd /\nA=$PWD\n"),
        ("sh-unicode", "U='café ☃'\n"),
        ("sh-quotes", "Q=\"it's \\\"quoted\\\" \\$x \\`y\\`\"\n"),
    ] {
        v.push(
            Case::new(name)
                .var("TO_REMOVE", "bye")
                .file("home/.agents/env", body),
        );
        v.push(
            Case::new(&format!("{name}-export"))
                .var("TO_REMOVE", "bye")
                .file("proj/.agents/local.env", body)
                .args(&["--format", "export", "--diff"]),
        );
    }
    v.push(
        Case::new("sh-no-bash")
            .var("PATH", "$W/empty")
            .dir("empty")
            .file("home/.agents/env", "A=1\n")
            .file("home/.agents/env.py", "print('{\"P\": \"1\"}')\n"),
    );
    v.push(
        Case::new("sh-chain")
            .file("home/.agents/pre.env", "A=1\n")
            .file("home/.agents/env", "B=\"$A-2\"\nunset A\n")
            .file("proj/.agents/env", "C=\"$B-3\"\n"),
    );
    v.push(
        Case::new("sh-created-then-removed")
            .file("home/.agents/pre.env", "NEWV=1\n")
            .file("home/.agents/env", "unset NEWV\n"),
    );
    v.push(
        Case::new("sh-removed-then-set")
            .var("K", "base")
            .file("home/.agents/pre.env", "unset K\n")
            .file("home/.agents/env", "K=again\n"),
    );
    v.push(
        Case::new("sh-removed-then-set-same")
            .var("K", "base")
            .file("home/.agents/pre.env", "unset K\n")
            .file("home/.agents/env", "K=base\n")
            .args(&["--format", "json"]),
    );
    v.push(
        Case::new("sh-path-with-spaces")
            .file("home/.agents/overlays/o p/env", "X=1\n")
            .file("home/.agents/overlays/op/env", "Y=1\n"),
    );
    v.push(
        Case::new("sh-dollar-path")
            .dir("home/.agents/overlays/a$b")
            .args(&["--format", "json", "--diff", "--agents-dir", "$W/st$x"])
            .file("st$x/env", "Z=1\n"),
    );
    // Proxy.
    for (name, vars) in [
        (
            "proxy-seed-webfetch",
            vec![("AGENTS_WEBFETCH_PROXY_URL", "w"), ("HTTPS_PROXY", "h")],
        ),
        (
            "proxy-mirror",
            vec![
                ("HTTPS_PROXY", "h"),
                ("http_proxy", "l"),
                ("NO_PROXY", "n"),
                ("all_proxy", "a"),
            ],
        ),
        (
            "proxy-both-differ",
            vec![("HTTP_PROXY", "u"), ("http_proxy", "l")],
        ),
        (
            "proxy-existing-agents",
            vec![("AGENTS_PROXY", "mine"), ("HTTPS_PROXY", "h")],
        ),
        (
            "proxy-empty-upper",
            vec![
                ("HTTP_PROXY", ""),
                ("http_proxy", "l"),
                ("AGENTS_PROXY", ""),
            ],
        ),
        ("proxy-none", vec![("NO_PROXY", "")]),
    ] {
        let mut c = Case::new(name);
        for (k, val) in vars {
            c = c.var(k, val);
        }
        v.push(c);
    }
    v.push(
        Case::new("proxy-from-file").file("home/.agents/env", "export HTTPS_PROXY=http://p:1\n"),
    );
    // Full mode.
    v.push(
        Case::new("full-dotagents")
            .var("DOTAGENTS_TOKEN", "t")
            .var("DOTAGENTS_KEEP", "k")
            .file(
                "home/.agents/env.py",
                &py("print(json.dumps({'DOTAGENTS_KEEP': 'k', 'DOTAGENTS_NEW': 'n'}))"),
            )
            .args(&["--format", "export"]),
    );
    v.push(
        Case::new("full-removed")
            .var("TO_REMOVE", "x")
            .file("home/.agents/env", "unset TO_REMOVE\n")
            .args(&["--format", "yaml"]),
    );
    // Rendering of assembled odd names and values.
    for f in [
        "export",
        "dotenv",
        "powershell",
        "cmd",
        "fish",
        "json",
        "ini",
        "yaml",
    ] {
        v.push(
            Case::new(&format!("render-odd-{f}"))
                .var("TO_REMOVE", "x")
                .var("ProgramFiles(x86)", "y")
                .file("home/.agents/env", "f() { :; }\nunset TO_REMOVE 'ProgramFiles(x86)'\n")
                .file(
                    "home/.agents/env.py",
                    &py("print(json.dumps({'A-B': 'x', 'Y': 'yes', 'ON': '1:30', 'E': '', 'Q': \"'quoted'\", 'S': ' lead', 'C': 'a\\rb', 'P': '100%', 'U': '\\u2019x\\u00a0', 'H': '#x', 'N': 'l1\\nl2', 'X': 'a\\x01b\\x7fc\\x85', 'CT': 'c\\n#x', '1X': 'd', 'K;': 'v'}))"),
                )
                .args(&["--format", f, "--diff"]),
        );
    }
    v
}

#[test]
#[cfg_attr(missing = "venv", ignore = "needs the test venv")]
fn cases_match_the_reference() {
    compare_all(cases(), "hand-written cases");
}

const KEYS: &[&str] = &[
    "A",
    "B",
    "ORDER",
    "TO_REMOVE",
    "PATH",
    "PYTHONPATH",
    "AGENTS_HARNESS",
    "AGENTS_MODEL",
    "HTTPS_PROXY",
    "http_proxy",
    "NO_PROXY",
    "DOTAGENTS_X",
    "AGENTS_HOME",
    "A-B",
    "K_1",
    "AGENTS_PYTHON_X",
    "LANG",
    "HOME_X",
];
const VALUES: &[&str] = &[
    "1",
    "",
    "two words",
    "it's",
    "a\"b",
    "$HOME",
    "`x`",
    "caf\u{e9}",
    "l1\nl2",
    "\u{2028}",
    "100%",
    "yes",
    "#c",
    " lead",
    "tail ",
    "/opt/bin",
    "a\\b",
    "x=y",
    "null",
];

fn gen_py(r: &mut Rng, tag: &str) -> String {
    let mut obj = Vec::new();
    for _ in 0..r.below(4) {
        let k = r.pick(KEYS);
        let val = match r.below(10) {
            0 => "None".to_string(),
            1 => r.pick(&["1", "True", "1.5", "[1]", "{}"]).to_string(),
            2 => "os.environ.get('ORDER', '') + ' ' + LVL".to_string(),
            _ => format!("{:?}", r.pick(VALUES)),
        };
        obj.push(format!("{k:?}: {val}"));
    }
    let head = "import json, os, sys\nLVL = sys.argv[sys.argv.index('--level') + 1] + ('/g' if '--global' in sys.argv else '')\n";
    let dict = format!("{{{}}}", obj.join(", "));
    let body = match r.below(14) {
        0 => "sys.exit(2)".to_string(),
        1 => "print('{not json')".to_string(),
        2 => format!("print(json.dumps({dict}))\nprint('[1]')"),
        3 => format!("for k, v in {dict}.items():\n    print(json.dumps({{k: v}}))"),
        4 => format!("print(json.dumps({dict}, indent=1))"),
        5 => {
            format!("sys.stderr.write('err')\nprint(json.dumps({dict}))\nsys.exit(r'{tag}' == 'x')")
        }
        6 => "print()".to_string(),
        7 => {
            format!("print(json.dumps({{'ORDER': os.environ.get('ORDER', '') + ' {tag}:' + LVL}}))")
        }
        _ => format!("print(json.dumps({dict}))"),
    };
    format!("{head}{body}\n")
}

fn gen_sh(r: &mut Rng, tag: &str) -> String {
    let mut s = String::new();
    for _ in 0..1 + r.below(4) {
        let k = *r.pick(&[
            "A",
            "B",
            "ORDER",
            "TO_REMOVE",
            "K_1",
            "PATH",
            "PYTHONPATH",
            "AGENTS_MODEL",
            "https_proxy",
        ]);
        let line = match r.below(16) {
            0 => format!("unset {k}\n"),
            1 => format!("{k}=\"${k} {tag}\"\n"),
            2 => format!("fn_{tag}() {{ :; }}\n"),
            3 => "exit 0\n".to_string(),
            4 => "if then\n".to_string(),
            5 => "false\n".to_string(),
            6 => "return 0\n".to_string(),
            7 => format!("export {k}='{}'\n", r.pick(&["q", "x y", "a\"b", ""])),
            8 => format!("{k}=$'{}'\n", r.pick(&["a\\tb", "l1\\nl2", "\\xff"])),
            9 if k == "PATH" => "PATH=/opt/x:$PATH\n".to_string(),
            10 => "# just a comment\n".to_string(),
            11 => format!("readonly {k}_RO=1\n"),
            _ => format!(
                "{k}={}\n",
                r.pick(&["1", "two", "\"q q\"", "'$HOME'", "$HOME", "x#y"])
            ),
        };
        s.push_str(&line);
    }
    s
}

const OVERLAY_NAMES: &[&str] = &[
    "aa", "bb", "My_Tool", "my-tool", "my_tool", "v1.2", "v1-2", "Z9", "user", "con", "2fast",
    ".git", "trail-", "x", "pp", "PP", "Overlay", "nul.txt", "a.b",
];

fn gen_location(r: &mut Rng, c: &mut Case, loc: &str, project: bool, tag: &str) {
    if r.chance(35) {
        c.nodes.push(Node::Dir(format!("{loc}/bin")));
    }
    if r.chance(30) {
        c.nodes.push(Node::Dir(format!("{loc}/lib")));
    }
    let mut names = vec!["pre.env.py", "pre.env", "env.py", "env"];
    if project || r.chance(20) {
        names.extend(["pre.local.env", "local.env"]);
    }
    for n in names {
        if !r.chance(30) {
            continue;
        }
        let p = format!("{loc}/{n}");
        let t = format!("{tag}.{n}");
        match r.below(20) {
            0 => c.nodes.push(Node::Dir(p)),
            1 => c.nodes.push(Node::Link("$W/missing".into(), p)),
            _ if n.ends_with(".py") => c.nodes.push(Node::File(p, gen_py(r, &t).into_bytes())),
            _ => c.nodes.push(Node::File(p, gen_sh(r, &t).into_bytes())),
        }
    }
}

fn gen_case(seed: u64, i: usize) -> Case {
    let mut r = Rng(seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    for _ in 0..4 {
        r.next();
    }
    let mut c = Case::new(&format!("gen-{seed}-{i}"));
    let sys = r.chance(15);
    let mut stores = vec![("home/.agents", false), ("proj/.agents", true)];
    if sys {
        stores.push(("sys", false));
        c.vars
            .push(("AGENTS_SYSTEM_ROOT".into(), Some("$W/sys".into())));
        c.nodes.push(Node::Dir("sys".into()));
    }
    for (si, (store, project)) in stores.iter().enumerate() {
        gen_location(&mut r, &mut c, store, *project, &format!("s{si}"));
        for oi in 0..r.below(4) {
            let name = *r.pick(OVERLAY_NAMES);
            let loc = format!("{store}/overlays/{name}");
            match r.below(12) {
                0 => c.nodes.push(Node::File(loc, b"file".to_vec())),
                1 => {
                    c.nodes.push(Node::Dir(format!("elsewhere{si}{oi}")));
                    c.nodes
                        .push(Node::Link(format!("$W/elsewhere{si}{oi}"), loc.clone()));
                    gen_location(
                        &mut r,
                        &mut c,
                        &format!("elsewhere{si}{oi}"),
                        false,
                        &format!("l{si}{oi}"),
                    );
                }
                _ => {
                    c.nodes.push(Node::Dir(loc.clone()));
                    gen_location(&mut r, &mut c, &loc, false, &format!("o{si}{oi}"));
                }
            }
        }
    }
    // Base variables.
    let pool: &[(&str, &[&str])] = &[
        ("CLAUDECODE", &["1", ""]),
        ("CODEX_SANDBOX_NETWORK_DISABLED", &["1"]),
        ("AGENTS_HARNESS", &["gemini", "cursor", "unknown", ""]),
        ("ANTHROPIC_MODEL", &["opus", ""]),
        ("AGENT", &["mine"]),
        ("HTTPS_PROXY", &["http://h:1", ""]),
        ("http_proxy", &["http://l:2"]),
        ("NO_PROXY", &["localhost"]),
        ("AGENTS_PROXY", &["p", ""]),
        ("PYTHONPATH", &["rel:/abs", "/old/a:/keep", ""]),
        ("AGENTS_PYTHONPATH", &["/old/a", ""]),
        (
            "AGENTS_HOME",
            &["$W/home/.agents/", "../home/.agents", "$W/other", ""],
        ),
        ("AGENTS_PROJECT_ROOT", &["$W/proj", "$W/proj2", ".", ""]),
        ("CLAUDE_PROJECT_DIR", &["$W/proj"]),
        ("DOTAGENTS_SECRET", &["s"]),
        ("TO_REMOVE", &["bye"]),
        ("A", &["base", ""]),
        ("AGENTS_PYVENV", &["/v"]),
        (
            "MY_TOOL_OVERLAY_ROOT",
            &["$W/home/.agents/overlays/my_tool", "/pinned", ""],
        ),
        ("AA_OVERLAY_ROOT", &["$W/home/.agents/overlays/aa"]),
        (
            "PATH",
            &[
                ":/usr/bin:.:rel::/bin",
                "/usr/bin:/bin:/usr/bin",
                "$W/home/.agents/bin:/usr/bin:/bin",
            ],
        ),
        ("ORDER", &["start"]),
    ];
    for (k, vals) in pool {
        if r.chance(12) {
            c.vars.push((k.to_string(), Some(r.pick(vals).to_string())));
        }
    }
    let fmt = *r.pick(&[
        "json",
        "json",
        "export",
        "export",
        "dotenv",
        "yaml",
        "ini",
        "fish",
        "cmd",
        "powershell",
        "sh",
    ]);
    let mut args = vec!["--format".to_string(), fmt.to_string()];
    if r.chance(70) {
        args.push("--diff".into());
    }
    if r.chance(15) {
        args.push("-g".into());
    }
    if r.chance(10) {
        args.push("--agents-dir".into());
        args.push(
            r.pick(&[
                "$W/proj/.agents",
                "$W/home/.agents",
                "../home/.agents",
                "$W/other",
            ])
            .to_string(),
        );
    }
    c.args = args;
    c.cwd = r
        .pick(&["proj", "proj", "proj", "proj", "home", "proj/sub"])
        .to_string();
    c
}

#[test]
#[cfg_attr(missing = "venv", ignore = "needs the test venv")]
fn generated_trees_match_the_reference() {
    let seed: u64 = std::env::var("AGENTENV_ORACLE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_260_601);
    let n: usize = std::env::var("AGENTENV_ORACLE_TREES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let cases: Vec<Case> = (0..n).map(|i| gen_case(seed, i)).collect();
    compare_all(cases, &format!("generated trees (seed {seed})"));
}

/// The harness must see a difference where one exists: with `AGENTS_PYTHON`
/// unset the reference emits its own interpreter, agentenv its default
/// (a deliberate difference, docs/compat.md).
#[test]
#[cfg_attr(missing = "venv", ignore = "needs the test venv")]
fn harness_detects_a_difference() {
    let Some(oracle) = support::dotagents() else {
        return;
    };
    let c = Case::new("unpinned-python").unset("AGENTS_PYTHON");
    let err = c
        .compare(&oracle)
        .expect_err("AGENTS_PYTHON default differs");
    assert!(err.contains("AGENTS_PYTHON"), "{err}");
}
