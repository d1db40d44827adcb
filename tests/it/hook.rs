//! The shell hook in real interactive bash, zsh and fish, driven through a
//! pseudo-terminal (`tests/it/support/pty_shell.py`, Python's stdlib `pty`):
//! enter/leave/nested/sibling projects, exact restore, user PATH additions,
//! the trust gate (allow, an edit, deny), values with newlines, quotes and
//! non-ASCII text, the undo data absent from a child's environment, and
//! zero processes over unchanged prompts (counted with strace).

use crate::support;

use support::Tree;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

const UNSET: &str = "@unset@";

struct Sh {
    kind: &'static str,
    w: PathBuf,
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    n: usize,
}

fn driver() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/support/pty_shell.py")
}

fn bin() -> String {
    support::agentenv_bin().to_str().unwrap().to_string()
}

/// Single-quote for all three shells (test paths and values have no `'`
/// or `\`).
fn sq(s: &str) -> String {
    assert!(!s.contains('\'') && !s.contains('\\'));
    format!("'{s}'")
}

impl Sh {
    /// Start `kind` interactively in `<w>/home` with the hook installed;
    /// `prefix` wraps the shell (strace).
    fn start(kind: &'static str, w: &Path, prefix: &[String]) -> Option<Sh> {
        let shell = support::tool(kind)?;
        let python = support::tool("python3")?;
        let rc = w.join(format!("rc.{kind}"));
        let mut argv: Vec<String> = prefix.to_vec();
        let shell = shell.to_str().unwrap().to_string();
        match kind {
            "bash" => {
                std::fs::write(
                    &rc,
                    format!("PS1='$ '\neval \"$({} hook bash)\"\n", sq(&bin())),
                )
                .unwrap();
                argv.extend([
                    shell,
                    "--noprofile".into(),
                    "--rcfile".into(),
                    rc.to_str().unwrap().into(),
                    "-i".into(),
                ]);
            }
            "zsh" => {
                let zdot = w.join("zdot");
                std::fs::create_dir_all(&zdot).unwrap();
                std::fs::write(
                    zdot.join(".zshrc"),
                    format!(
                        "PS1='$ '\nunsetopt PROMPT_SP\neval \"$({} hook zsh)\"\n",
                        sq(&bin())
                    ),
                )
                .unwrap();
                argv.extend([shell, "-i".into()]);
            }
            "fish" => {
                std::fs::write(
                    &rc,
                    format!(
                        "set -g fish_greeting\nfunction fish_prompt; printf '$ '; end\n{} hook fish | source\n",
                        sq(&bin())
                    ),
                )
                .unwrap();
                argv.extend([
                    shell,
                    "--no-config".into(),
                    "-i".into(),
                    "-C".into(),
                    format!("source {}", sq(rc.to_str().unwrap())),
                ]);
            }
            _ => unreachable!(),
        }
        // The load's stamp is 20 ms before it (file times come from a coarse
        // clock): files written just now would count as edited at the next
        // prompt and cause one more load. Let them age first.
        std::thread::sleep(std::time::Duration::from_millis(100));
        let mut child = Command::new(python)
            .arg(driver())
            .arg(serde_json::to_string(&argv).unwrap())
            .current_dir(w.join("home"))
            .env_clear()
            .env("HOME", w.join("home"))
            .env("PATH", "/usr/bin:/bin")
            .env("TERM", "dumb")
            .env("LANG", "C.UTF-8")
            .env("XDG_STATE_HOME", w.join("state"))
            .env("AGENTS_SYSTEM_ROOT", w.join("no-system"))
            .env("AGENTS_PYTHON", support::pinned_python())
            .env("ZDOTDIR", w.join("zdot"))
            .env("PWD", w.join("home"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut sh = Sh {
            kind,
            w: w.to_path_buf(),
            child,
            input,
            output,
            n: 0,
        };
        sh.answer("(start)");
        Some(sh)
    }

    fn answer(&mut self, what: &str) -> String {
        let mut line = String::new();
        self.output.read_line(&mut line).unwrap();
        assert!(!line.is_empty(), "{}: driver ended at {what}", self.kind);
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        let out = v["out"].as_str().unwrap_or("").to_string();
        assert!(
            v.get("error").is_none(),
            "{}: no prompt after {what}; terminal showed:\n{out}",
            self.kind
        );
        out
    }

    /// Type `line`; return what the terminal showed until the next prompt
    /// was through (hook messages included).
    fn run(&mut self, line: &str) -> String {
        let mut req = serde_json::to_string(line).unwrap();
        req.push('\n');
        self.input.write_all(req.as_bytes()).unwrap();
        self.input.flush().unwrap();
        self.answer(line)
    }

    /// The value of `name` in the shell, exactly (`None`: unset).
    fn var(&mut self, name: &str) -> Option<String> {
        self.n += 1;
        let f = self.w.join(format!("out/{}.{}", name, self.n));
        let fq = sq(f.to_str().unwrap());
        let line = match self.kind {
            "fish" => format!(
                "if set -q {name}; printf '%s' \"${name}\" > {fq}; else; printf '%s' {UNSET} > {fq}; end"
            ),
            _ => format!("printf '%s' \"${{{name}-{UNSET}}}\" > {fq}"),
        };
        self.run(&line);
        let v = std::fs::read_to_string(&f).unwrap();
        (v != UNSET).then_some(v)
    }

    fn cd(&mut self, rel: &str) -> String {
        let p = self.w.join(rel);
        self.run(&format!("cd {}", sq(p.to_str().unwrap())))
    }

    fn export(&mut self, name: &str, value: &str) {
        let line = match self.kind {
            "fish" => format!("set -gx {name} {}", sq(value)),
            _ => format!("export {name}={}", sq(value)),
        };
        self.run(&line);
    }
}

impl Drop for Sh {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `home/.agents` (user store), `home/p` (project with bin/, values that
/// need quoting), `home/p/sub`, `home/p/nested` (its own project),
/// `home/q` (a sibling).
fn tree() -> (Tree, PathBuf) {
    let t = Tree::new()
        .dir("home/.agents/bin")
        .dir("home/p/.agents/bin")
        .dir("home/p/sub")
        .dir("out")
        .dir("state")
        .file("home/.agents/env", "USERV=u1\n")
        .file(
            "home/p/.agents/env",
            r#"PV=p1
SPACEY='a  b'
NL="line1
line2"
QUOTES='say "hi" $HOME `x`'
UNI='héllo ✓'
PRESET=from-proj
unset RMME
"#,
        )
        .file("home/p/nested/.agents/env", "NV=n1\n")
        .file("home/q/.agents/env", "QV=q1\n");
    let w = t.root().to_path_buf();
    (t, w)
}

fn scenario(kind: &'static str) {
    let (_t, w) = tree();
    let Some(mut sh) = Sh::start(kind, &w, &[]) else {
        return;
    };
    let pbin = w.join("home/p/.agents/bin");
    let ubin = w.join("home/.agents/bin");
    let pbin = pbin.to_str().unwrap();
    let ubin = ubin.to_str().unwrap();

    // Outside any project the user store loads.
    assert_eq!(sh.var("USERV").as_deref(), Some("u1"));
    sh.export("PRESET", "orig value");
    sh.export("RMME", "keep me");
    assert_eq!(sh.var("PV"), None);

    // Entering a project that is not allowed: one message, other stores load.
    let out = sh.cd("home/p");
    let msg = format!(
        "agentenv: {}/home/p/.agents is not allowed; run 'agentenv allow' to load it",
        w.display()
    );
    assert!(out.contains(&msg), "{kind}: {out}");
    assert_eq!(sh.var("PV"), None);
    assert_eq!(sh.var("USERV").as_deref(), Some("u1"));
    let out = sh.cd("home/p/sub");
    assert!(
        !out.contains("not allowed"),
        "{kind}: once per directory: {out}"
    );

    // Allow: the next prompt loads it (the records dir is watched).
    let out = sh.run(&format!("{} allow", sq(&bin())));
    assert!(out.contains("agentenv: allowed"), "{kind}: {out}");
    assert_eq!(sh.var("PV").as_deref(), Some("p1"));
    assert_eq!(sh.var("SPACEY").as_deref(), Some("a  b"));
    assert_eq!(sh.var("NL").as_deref(), Some("line1\nline2"));
    assert_eq!(
        sh.var("QUOTES").as_deref(),
        Some("say \"hi\" $HOME `x`"),
        "{kind}"
    );
    assert_eq!(sh.var("UNI").as_deref(), Some("héllo ✓"));
    assert_eq!(sh.var("PRESET").as_deref(), Some("from-proj"));
    assert_eq!(sh.var("RMME"), None, "{kind}: the load removes it");
    assert_eq!(
        sh.var("AGENTS_PROJECT_ROOT").as_deref(),
        Some(w.join("home/p").to_str().unwrap())
    );
    let path = sh.var("PATH").unwrap();
    assert!(
        path.starts_with(&format!("{pbin}:{ubin}:")),
        "{kind}: {path}"
    );

    // A child sees the loaded values, never the undo data.
    let envf = w.join("out/child.env");
    sh.run(&format!("env > {}", sq(envf.to_str().unwrap())));
    let child = std::fs::read_to_string(&envf).unwrap();
    assert!(child.contains("PRESET=from-proj"), "{kind}");
    assert!(
        !child.contains("orig value"),
        "{kind}: previous value leaked"
    );
    assert!(!child.contains("keep me"), "{kind}: previous value leaked");
    assert!(!child.contains("agentenv_"), "{kind}: hook state exported");

    // The user adds to PATH; an edit of the env file blocks the store.
    match kind {
        "fish" => sh.run("set -gx PATH /added $PATH"),
        _ => sh.run("export PATH=/added:$PATH"),
    };
    let envfile = w.join("home/p/.agents/env");
    let out = sh.run(&format!(
        "printf 'PV=p2\\n' > {}",
        sq(envfile.to_str().unwrap())
    ));
    assert!(
        out.contains("p/.agents changed since it was allowed; run 'agentenv allow' to load it"),
        "{kind}: {out}"
    );
    assert_eq!(sh.var("PV"), None);
    assert_eq!(sh.var("PRESET").as_deref(), Some("orig value"));
    let path = sh.var("PATH").unwrap();
    assert!(
        path.contains("/added"),
        "{kind}: user PATH entry kept: {path}"
    );
    assert!(!path.contains(pbin), "{kind}: {path}");
    sh.run(&format!("{} allow", sq(&bin())));
    assert_eq!(sh.var("PV").as_deref(), Some("p2"));

    // Nested project: its own root, not allowed; then the sibling.
    let out = sh.cd("home/p/nested");
    assert!(
        out.contains("p/nested/.agents is not allowed"),
        "{kind}: {out}"
    );
    assert_eq!(sh.var("PV"), None);
    assert_eq!(sh.var("NV"), None);
    sh.run(&format!("{} allow", sq(&bin())));
    assert_eq!(sh.var("NV").as_deref(), Some("n1"));
    assert_eq!(sh.var("PV"), None, "{kind}: the nearest root only");
    let out = sh.cd("home/q");
    assert!(
        out.contains("home/q/.agents is not allowed"),
        "{kind}: {out}"
    );
    assert_eq!(sh.var("NV"), None);

    // Back in p, then deny.
    sh.cd("home/p");
    assert_eq!(sh.var("PV").as_deref(), Some("p2"));
    let out = sh.run(&format!("{} deny", sq(&bin())));
    assert!(out.contains("not allowed"), "{kind}: {out}");
    assert_eq!(sh.var("PV"), None);

    // Leaving: everything as before, PATH with the user's entry.
    sh.run(&format!("{} allow", sq(&bin())));
    assert_eq!(sh.var("PV").as_deref(), Some("p2"));
    sh.cd("home");
    assert_eq!(sh.var("PV"), None);
    assert_eq!(sh.var("NL"), None);
    assert_eq!(sh.var("PRESET").as_deref(), Some("orig value"));
    assert_eq!(sh.var("RMME").as_deref(), Some("keep me"));
    assert_eq!(sh.var("AGENTS_PROJECT_ROOT"), None);
    assert_eq!(sh.var("USERV").as_deref(), Some("u1"));
    let path = sh.var("PATH").unwrap();
    assert!(path.contains("/added"), "{kind}: {path}");
    assert!(!path.contains(pbin), "{kind}: {path}");
}

#[test]
#[cfg_attr(
    any(missing = "bash", missing = "python3"),
    ignore = "needs bash and python3"
)]
fn bash_follows_the_directory() {
    scenario("bash");
}

#[test]
#[cfg_attr(
    any(missing = "zsh", missing = "python3"),
    ignore = "needs zsh and python3"
)]
fn zsh_follows_the_directory() {
    scenario("zsh");
}

#[test]
#[cfg_attr(
    any(missing = "fish", missing = "python3"),
    ignore = "needs fish and python3"
)]
fn fish_follows_the_directory() {
    scenario("fish");
}

/// The lines of an strace log that start a process. A clone with
/// `CLONE_THREAD` starts a thread of the shell itself (fish keeps worker
/// threads for history and autosuggestions, hook or not), not a process.
fn spawns(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| !l.contains("resumed>") && !l.contains("CLONE_THREAD"))
        .filter(|l| {
            ["execve(", "clone(", "clone3(", "fork(", "vfork("]
                .iter()
                .any(|s| l.contains(s))
        })
        .map(str::to_string)
        .collect()
}

fn no_process_at_unchanged_prompts(kind: &'static str) {
    let Some(strace) = support::tool("strace") else {
        return;
    };
    let (_t, w) = tree();
    let log = w.join("strace.log");
    let prefix = vec![
        strace.to_str().unwrap().to_string(),
        "-f".into(),
        "-qq".into(),
        "-e".into(),
        "trace=execve,clone,clone3,fork,vfork".into(),
        "-o".into(),
        log.to_str().unwrap().to_string(),
    ];
    let Some(mut sh) = Sh::start(kind, &w, &prefix) else {
        return;
    };
    sh.cd("home/p");
    sh.run(&format!("{} allow", sq(&bin())));
    assert_eq!(sh.var("PV").as_deref(), Some("p1"));
    // Let file times settle past the stamp's margin, then mark the log.
    std::thread::sleep(std::time::Duration::from_millis(200));
    sh.run("");
    sh.run("/bin/true agentenv-begin");
    for _ in 0..5 {
        sh.run("");
    }
    sh.run("/bin/true agentenv-end");
    let text = std::fs::read_to_string(&log).unwrap();
    let all = spawns(&text);
    let begin = all
        .iter()
        .position(|l| l.contains("execve(") && l.contains("agentenv-begin"))
        .expect("begin mark in the strace log");
    let end = all
        .iter()
        .position(|l| l.contains("execve(") && l.contains("agentenv-end"))
        .expect("end mark in the strace log");
    // Between the marks: only the fork that starts the end mark's /bin/true.
    let between = &all[begin + 1..end];
    assert!(
        between.len() <= 1 && between.iter().all(|l| !l.contains("execve(")),
        "{kind}: the unchanged prompts started processes:\n{}",
        between.join("\n")
    );
    // The loads before did run agentenv (the count is real).
    assert!(
        all[..begin]
            .iter()
            .any(|l| l.contains("execve(") && l.contains("hook")),
        "{kind}: no load seen in the log"
    );
}

#[test]
#[cfg_attr(
    any(missing = "strace", missing = "bash", missing = "python3"),
    ignore = "needs strace, bash and python3"
)]
fn bash_unchanged_prompts_start_no_process() {
    no_process_at_unchanged_prompts("bash");
}

#[test]
#[cfg_attr(
    any(missing = "strace", missing = "zsh", missing = "python3"),
    ignore = "needs strace, zsh and python3"
)]
fn zsh_unchanged_prompts_start_no_process() {
    no_process_at_unchanged_prompts("zsh");
}

#[test]
#[cfg_attr(
    any(missing = "strace", missing = "fish", missing = "python3"),
    ignore = "needs strace, fish and python3"
)]
fn fish_unchanged_prompts_start_no_process() {
    no_process_at_unchanged_prompts("fish");
}

#[test]
#[cfg_attr(
    any(
        missing = "bash",
        missing = "zsh",
        missing = "fish",
        missing = "python3"
    ),
    ignore = "needs bash, zsh, fish and python3"
)]
fn a_missing_binary_or_broken_store_never_breaks_the_prompt() {
    let (_t, w) = tree();
    // A broken store: an env file that cannot be parsed, and one that fails.
    std::fs::write(w.join("home/.agents/pre.env"), "exit 3\n").unwrap();
    std::fs::write(w.join("home/.agents/env.py"), "raise SystemExit(4)\n").unwrap();
    for kind in ["bash", "zsh", "fish"] {
        let Some(mut sh) = Sh::start(kind, &w, &[]) else {
            return;
        };
        assert_eq!(sh.var("USERV").as_deref(), Some("u1"));
        // The binary goes away: one message, the shell goes on, no reload loop.
        match kind {
            "fish" => sh.run("set -g __agentenv_bin /nonexistent/agentenv"),
            "zsh" => sh.run("_agentenv_bin=/nonexistent/agentenv"),
            _ => sh.run("_agentenv_bin=/nonexistent/agentenv"),
        };
        let out = sh.cd("home/p");
        assert!(
            out.contains("/nonexistent/agentenv is missing"),
            "{kind}: {out}"
        );
        let out = sh.cd("home/q");
        assert!(!out.contains("is missing"), "{kind}: said once: {out}");
        assert_eq!(sh.var("QV"), None);
        assert_eq!(sh.var("USERV"), None, "{kind}: the last load was undone");
        let out = sh.run("echo still-here");
        assert!(out.contains("still-here"), "{kind}: {out}");
    }
}

/// The line of `out` that is the hook's load line, if any.
/// An edit in place of a store's `agentenv.toml` (declarations, secret
/// references) changes no directory: the file itself is watched, so the
/// next prompt loads it (here a reference that cannot resolve, whose
/// warning names it).
#[test]
#[cfg_attr(
    any(missing = "bash", missing = "python3"),
    ignore = "needs bash and python3"
)]
fn an_edit_in_place_of_agentenv_toml_loads_at_the_next_prompt() {
    let (_t, w) = tree();
    let toml = w.join("home/.agents/agentenv.toml");
    std::fs::write(&toml, "# declarations\n").unwrap();
    let Some(mut sh) = Sh::start("bash", &w, &[]) else {
        return;
    };
    assert_eq!(sh.var("USERV").as_deref(), Some("u1"));
    let inode = |p: &Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).unwrap());
    let before = inode(&toml);
    let out = sh.run(&format!(
        "printf '[vars]\\nGONE = {{ from = \"age:nowhere.age#GONE\" }}\\n' > {}",
        sq(toml.to_str().unwrap())
    ));
    assert_eq!(inode(&toml), before, "edited in place");
    assert!(
        out.contains("GONE: reference age:nowhere.age#GONE"),
        "the edit was not loaded: {out:?}"
    );
    assert_eq!(sh.var("USERV").as_deref(), Some("u1"));
}

fn load_line(out: &str) -> Option<String> {
    // fish redraws its prompt with bare `\r`s: they end a line too.
    out.split(['\r', '\n'])
        .find(|l| {
            l.strip_prefix("agentenv: ")
                .is_some_and(|r| r.starts_with(['+', '-', '~']))
        })
        .map(str::to_string)
}

fn says_what_a_load_changes(kind: &'static str) {
    let (_t, w) = tree();
    let Some(mut sh) = Sh::start(kind, &w, &[]) else {
        return;
    };
    sh.export("RMME", "keep me");
    sh.cd("home/p");
    // Allowing loads the project at the next prompt: one line, names only.
    let out = sh.run(&format!("{} allow", sq(&bin())));
    let line = load_line(&out).unwrap_or_else(|| panic!("{kind}: no load line in {out:?}"));
    let words: Vec<&str> = line["agentenv: ".len()..].split(' ').collect();
    for want in [
        "+PV", "+SPACEY", "+NL", "+QUOTES", "+UNI", "+PRESET", "-RMME",
    ] {
        assert!(words.contains(&want), "{kind}: {want} missing: {line}");
    }
    let mut sorted = words.clone();
    sorted.sort_by_key(|w| &w[1..]);
    assert_eq!(words, sorted, "{kind}: sorted by name: {line}");
    for value in ["p1", "a  b", "line1", "héllo", "from-proj", "keep me"] {
        assert!(!out.contains(value), "{kind}: a value in {out:?}");
    }
    assert_eq!(sh.var("PV").as_deref(), Some("p1"));
    // Same project, another directory: nothing changes, nothing said.
    let out = sh.cd("home/p/sub");
    assert_eq!(load_line(&out), None, "{kind}: {out:?}");
    let out = sh.run("");
    assert_eq!(load_line(&out), None, "{kind}: {out:?}");
    // Leaving: the names go back.
    let out = sh.cd("home");
    let line = load_line(&out).unwrap_or_else(|| panic!("{kind}: no line on leaving: {out:?}"));
    let words: Vec<&str> = line["agentenv: ".len()..].split(' ').collect();
    for want in ["-PV", "-NL", "-PRESET", "+RMME"] {
        assert!(words.contains(&want), "{kind}: {want} missing: {line}");
    }
    assert!(!out.contains("keep me"), "{kind}: a value in {out:?}");
    assert_eq!(sh.var("RMME").as_deref(), Some("keep me"));
    // Quiet: the same loads, no line.
    sh.export("AGENTENV_HOOK_QUIET", "1");
    let out = sh.cd("home/p");
    assert_eq!(load_line(&out), None, "{kind}: quiet: {out:?}");
    assert_eq!(sh.var("PV").as_deref(), Some("p1"));
    let out = sh.cd("home");
    assert_eq!(load_line(&out), None, "{kind}: quiet: {out:?}");
    assert_eq!(sh.var("PV"), None);
}

#[test]
#[cfg_attr(
    any(missing = "bash", missing = "python3"),
    ignore = "needs bash and python3"
)]
fn bash_says_what_a_load_changes_by_name() {
    says_what_a_load_changes("bash");
}

#[test]
#[cfg_attr(
    any(missing = "zsh", missing = "python3"),
    ignore = "needs zsh and python3"
)]
fn zsh_says_what_a_load_changes_by_name() {
    says_what_a_load_changes("zsh");
}

#[test]
#[cfg_attr(
    any(missing = "fish", missing = "python3"),
    ignore = "needs fish and python3"
)]
fn fish_says_what_a_load_changes_by_name() {
    says_what_a_load_changes("fish");
}
