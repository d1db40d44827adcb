//! Secret references, continued (issue 36): an overlay's `agentenv.toml`
//! (the order against its store, trust, one vault read per path across a
//! store and its overlays, `explain`/`status` naming file and line), and
//! the write paths of `pass` and the Secret Service (`set --to`,
//! `import --to`) against the real `pass` + GnuPG and gnome-keyring, with
//! wrappers on PATH recording every backend call's argv and environment.
//! Each test skips visibly when its backend is missing.

use crate::refs::{bao_env, files_holding, run, tree, typed_under, Bao};
use crate::support::{skip, which, Tree};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

const PW: &str = "ovl-db-pw-canary-4410";
const USER: &str = "ovl-db-user-canary-77";
const OWN: &str = "ovl-own-canary-a5a5";

#[test]
fn an_overlay_references_resolve_before_its_store_with_one_vault_read_per_path() {
    let t = tree();
    let Some(b) = Bao::start(&t.path("bao")) else {
        return;
    };
    b.put("secret/app/db", &[("password", PW), ("user", USER)]);
    b.put("secret/app/tool", &[("k", OWN)]);
    t.write(
        "home/.agents/agentenv.toml",
        "[vars]\nSHARED = { from = \"vault://secret/app/db#password\" }\nDB_USER = { from = \"vault://secret/app/db#user\" }\n",
    );
    // The overlay references the store's path too (one read for both) and
    // a name the store also references (the store's wins, as its env
    // files win over its overlays').
    t.write(
        "home/.agents/overlays/tools/agentenv.toml",
        "[vars]\nSHARED = { from = \"vault://secret/app/missing#k\" }\nTOOL_PW = { from = \"vault://secret/app/db#password\" }\nTOOL_OWN = { from = \"vault://secret/app/tool#k\" }\n",
    );
    let print = "printf '%s|%s|%s|%s' \"$SHARED\" \"$DB_USER\" \"$TOOL_PW\" \"$TOOL_OWN\"";
    run(&t, &["exec", "--", "sh", "-c", print], bao_env(&b))
        .stdout(format!("{PW}|{USER}|{PW}|{OWN}"))
        .stderr("")
        .run();
    assert_eq!((b.reads("app/db"), b.reads("app/tool")), (1, 1));
    // The overlay's SHARED was not resolved (its store's wins): no read, no
    // warning; -v says so. explain shows the store's touch.
    assert_eq!(b.reads("app/missing"), 0);
    let store_toml = t.path("home/.agents/agentenv.toml").display().to_string();
    let ovl_toml = t
        .path("home/.agents/overlays/tools/agentenv.toml")
        .display()
        .to_string();
    run(&t, &["env", "-v", "--public-only"], bao_env(&b))
        .stderr_has(format!("SHARED: reference vault://secret/app/missing#k ({ovl_toml}:2) not resolved: {store_toml} references it too and wins"))
        .secret(PW)
        .run();
    let ex = run(&t, &["explain", "SHARED", "--format", "json"], bao_env(&b))
        .secret(PW)
        .run()
        .json();
    let text = ex.to_string();
    assert!(
        text.contains(&store_toml)
            && !text.contains(&ovl_toml)
            && text.contains("from vault://secret/app/db#password: resolved from"),
        "{text}"
    );
    let out = run(&t, &["explain", "TOOL_OWN"], bao_env(&b))
        .secret(OWN)
        .run();
    assert!(
        out.stdout.contains(&format!("{ovl_toml}:4")),
        "{}",
        out.stdout
    );
    // status names the file and line of each, and contacts nothing; the
    // overlay's SHARED, which a load does not resolve, is not contacted.
    run(&t, &["status"], bao_env(&b))
        .stdout_has(format!(
            "SHARED  vault://secret/app/missing#k  not contacted: {store_toml} references it too and wins  ({ovl_toml}:2)"
        ))
        .stdout_has(format!(
            "TOOL_OWN  vault://secret/app/tool#k  OpenBao/Vault at {}  ({ovl_toml}:4)",
            b.addr
        ))
        .stdout_has(format!(
            "DB_USER  vault://secret/app/db#user  OpenBao/Vault at {}  ({store_toml}:3)",
            b.addr
        ))
        .run();
    assert_eq!((b.reads("app/db"), b.reads("app/tool")), (1, 1));
    // A value an overlay references is sensitive like the store's.
    run(&t, &["env", "--public-only"], bao_env(&b))
        .secret(OWN)
        .secret(PW)
        .run();
}

/// An age identity and its recipient (`age-keygen`), or a visible skip.
fn age_identity(t: &Tree) -> Option<(PathBuf, String)> {
    let (Some(_), Some(keygen)) = (
        crate::support::tool("age"),
        crate::support::tool("age-keygen"),
    ) else {
        return None;
    };
    let id = t.path("id.txt");
    let recipient = crate::refs::age_keygen(&keygen, &id);
    Some((id, recipient))
}

fn age_encrypt(recipient: &str, out: &Path, plain: &str) {
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let mut c = Command::new(crate::support::tool("age").unwrap())
        .arg("-r")
        .arg(recipient)
        .arg("-o")
        .arg(out)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    c.stdin.take().unwrap().write_all(plain.as_bytes()).unwrap();
    assert!(c.wait().unwrap().success());
}

#[test]
#[cfg_attr(missing = "age", ignore = "needs age")]
fn a_project_overlay_age_reference_resolves_once_allowed_and_an_edit_asks_again() {
    let t = tree();
    let Some((id, recipient)) = age_identity(&t) else {
        return;
    };
    let started = SystemTime::now() - Duration::from_secs(1);
    // The age file sits in the overlay; FILE is relative to it. The
    // store has a file of the same name holding another value.
    age_encrypt(
        &recipient,
        &t.path("proj/.agents/overlays/team/secrets.env.age"),
        "TEAM_KEY=age-overlay-canary-31\n",
    );
    age_encrypt(
        &recipient,
        &t.path("proj/.agents/secrets.env.age"),
        "TEAM_KEY=age-store-canary-32\n",
    );
    t.write(
        "proj/.agents/overlays/team/agentenv.toml",
        "# the team's\n[vars]\nTEAM_KEY = { from = \"age:secrets.env.age#TEAM_KEY\" }\n",
    );
    t.write(
        "proj/.agents/agentenv.toml",
        "[vars]\nSTORE_KEY = { from = \"age:secrets.env.age#TEAM_KEY\" }\n",
    );
    t.write("proj/.agents/env", "PROJ_PLAIN=p\n");
    let extra = || {
        [
            ("AGENTENV_AGE_IDENTITY", id.display().to_string()),
            ("AGENTENV_REF_TTL", "0".to_string()),
        ]
    };
    let print = [
        "exec",
        "--",
        "sh",
        "-c",
        "printf '%s|%s|%s' \"$TEAM_KEY\" \"$STORE_KEY\" \"$PROJ_PLAIN\"",
    ];
    // Not allowed: the overlay's reference is refused too (nothing read).
    run(&t, &print, extra())
        .stdout("||p")
        .stderr_has(
            "TEAM_KEY: reference age:secrets.env.age#TEAM_KEY not resolved: the project store",
        )
        .stderr_has("is not allowed (agentenv allow")
        .run();
    run(&t, &["status"], extra())
        .stdout_has("TEAM_KEY  age:secrets.env.age#TEAM_KEY  not contacted: the project store is not allowed")
        .stdout_has("overlays/team/agentenv.toml:3)")
        .run();
    run(&t, &["allow"], extra()).run();
    let want = "age-overlay-canary-31|age-store-canary-32|p";
    run(&t, &print, extra()).stdout(want).stderr("").run();
    // The trust gate pins the store: the overlay's references resolve from
    // the bytes the digest read.
    run(
        &t,
        &["exec", "--require-trust", "--", "sh", "-c", print[4]],
        extra(),
    )
    .stdout(want)
    .stderr("")
    .run();
    // An edit of the overlay's agentenv.toml asks again: refused with and
    // without the gate, until allowed again.
    t.write(
        "proj/.agents/overlays/team/agentenv.toml",
        "# the team's\n[vars]\nTEAM_KEY = { from = \"age:secrets.env.age#TEAM_KEY\" }\nMORE = { from = \"age:secrets.env.age#TEAM_KEY\" }\n",
    );
    run(&t, &print, extra())
        .stdout("||p")
        .stderr_has("MORE: reference age:secrets.env.age#TEAM_KEY not resolved: the project store")
        .any_status()
        .run();
    run(&t, &["env", "--require-trust"], extra())
        .any_status()
        .stderr_has("changed")
        .secret("age-overlay-canary-31")
        .run();
    run(&t, &["allow"], extra()).run();
    run(
        &t,
        &[
            "exec",
            "--require-trust",
            "--",
            "sh",
            "-c",
            "printf %s \"$MORE\"",
        ],
        extra(),
    )
    .stdout("age-overlay-canary-31")
    .run();
    // Sensitive, and never on disk.
    run(&t, &["env", "--public-only"], extra())
        .secret("age-overlay-canary-31")
        .run();
    let dirs = [
        t.root().to_path_buf(),
        PathBuf::from("/tmp"),
        PathBuf::from("/dev/shm"),
    ];
    let found = files_holding(
        &dirs,
        started,
        &["age-overlay-canary-31", "age-store-canary-32"],
    );
    assert!(found.is_empty(), "files holding a canary: {found:?}");
}

/// Wrappers for `pass`, `secret-tool` and `gpg`/`gpg2` in `<tree>/wrap`:
/// each appends its argv and its environment to `<tree>/calls.log`, then
/// runs the real program. The PATH to give: the wrappers first.
fn wrappers(t: &Tree) -> String {
    let log = t.path("calls.log");
    for name in ["pass", "secret-tool", "gpg", "gpg2"] {
        let Some(real) = which(name) else {
            continue;
        };
        t.exe(
            &format!("wrap/{name}"),
            format!(
                "#!/bin/sh\n{{ printf 'CALL %s' '{name}'; for a in \"$@\"; do printf ' [%s]' \"$a\"; done; printf '\\n'; env; printf 'END\\n'; }} >> '{}'\nexec '{}' \"$@\"\n",
                log.display(),
                real.display()
            ),
        );
    }
    format!(
        "{}:{}",
        t.path("wrap").display(),
        std::env::var("PATH").unwrap()
    )
}

/// `strace` recording every `execve` of a command and its children, with
/// their whole argv and environment, into `<tree>/LOG`; empty (and a
/// visible skip: the wrappers still record the backends' calls) without
/// strace.
fn tracer(t: &Tree, log: &str) -> Vec<String> {
    let Some(strace) = which("strace") else {
        skip(
            "strace",
            "not on PATH: only the wrappers record the backend calls",
        );
        return Vec::new();
    };
    let out = t.path(log).display().to_string();
    [strace.display().to_string()]
        .into_iter()
        .chain(
            [
                "-f",
                "-qq",
                "-v",
                "-s",
                "1048576",
                "-e",
                "trace=execve",
                "-o",
            ]
            .map(String::from),
        )
        .chain([out])
        .collect()
}

/// `agentenv ARGS` (the session environment of [`Tree::agentenv`], the
/// tests' runtime and state directories, and `env`) under [`tracer`];
/// its output.
fn traced(t: &Tree, log: &str, args: &[&str], env: &[(&str, String)]) -> std::process::Output {
    let prefix = tracer(t, log);
    let base = crate::support::session_cmd(t.root());
    let mut c = match prefix.split_first() {
        Some((strace, rest)) => {
            let mut c = Command::new(strace);
            c.args(rest).arg(crate::support::agentenv_bin());
            c
        }
        None => Command::new(crate::support::agentenv_bin()),
    };
    c.args(args).env_clear();
    for (k, v) in base.get_envs() {
        if let Some(v) = v {
            c.env(k, v);
        }
    }
    c.env("XDG_RUNTIME_DIR", t.path("rt"))
        .env("XDG_STATE_HOME", t.path("state"))
        .envs(env.iter().cloned())
        .current_dir(t.path("proj"))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The strace log `log`, when strace ran.
fn started(t: &Tree, log: &str) -> Option<String> {
    std::fs::read_to_string(t.path(log)).ok()
}

/// The recorded calls of `program` (its argv line).
fn calls(t: &Tree, program: &str) -> Vec<String> {
    let log = std::fs::read_to_string(t.path("calls.log")).unwrap_or_default();
    log.lines()
        .filter(|l| l.starts_with(&format!("CALL {program} ")) || *l == format!("CALL {program}"))
        .map(str::to_string)
        .collect()
}

/// No value in any recorded argv or environment (the wrappers' log, the
/// strace logs), nor in a file written since `since` under the tree, /tmp
/// or /dev/shm.
fn nowhere(t: &Tree, since: SystemTime, values: &[&str]) {
    let mut logs = vec![t.path("calls.log")];
    for e in std::fs::read_dir(t.root()).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "strace") {
            logs.push(e.path());
        }
    }
    for log in &logs {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        for v in values {
            assert!(
                !text.contains(v),
                "{}: a process's argv or env holds {v}",
                log.display()
            );
        }
    }
    let dirs = [
        t.root().to_path_buf(),
        PathBuf::from("/tmp"),
        PathBuf::from("/dev/shm"),
    ];
    let found = files_holding(&dirs, since, values);
    assert!(found.is_empty(), "files holding a value: {found:?}");
}

/// A throwaway GnuPG home with a key and a password store initialised to
/// it; the environment to reach both. `None`: pass or gpg missing.
fn pass_store(t: &Tree) -> Option<Vec<(&'static str, String)>> {
    let (Some(pass), Some(gpg)) = (crate::support::tool("pass"), crate::support::tool("gpg"))
    else {
        return None;
    };
    let gnupg = t.mkdir("home/.gnupg");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&gnupg, std::fs::Permissions::from_mode(0o700)).unwrap();
    let env = vec![
        ("GNUPGHOME", gnupg.display().to_string()),
        (
            "PASSWORD_STORE_DIR",
            t.path("home/.password-store").display().to_string(),
        ),
    ];
    let st = Command::new(&gpg)
        .envs(env.clone())
        .args(["--batch", "--passphrase", "", "--quick-gen-key"])
        .args(["refs-more@example.com", "default", "default", "never"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "gpg key");
    let st = Command::new(&pass)
        .envs(env.clone())
        .env("HOME", t.path("home"))
        .args(["init", "refs-more@example.com"])
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "pass init");
    Some(env)
}

/// `pass show PATH` with the real pass (not the wrapper).
fn pass_show(t: &Tree, env: &[(&str, String)], path: &str) -> String {
    let out = Command::new(which("pass").unwrap())
        .envs(env.iter().cloned())
        .env("HOME", t.path("home"))
        .args(["show", path])
        .output()
        .unwrap();
    assert!(out.status.success(), "pass show {path}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
#[cfg_attr(missing = "pass", ignore = "needs pass")]
fn set_and_import_to_pass_store_through_stdin_only() {
    let t = tree();
    let since = SystemTime::now() - Duration::from_secs(1);
    let Some(mut env) = pass_store(&t) else {
        return;
    };
    env.push(("PATH", wrappers(&t)));
    let value = "pass-set-canary-6061";
    let (out, status) = typed_under(
        &t,
        &tracer(&t, "set.strace"),
        &["set", "NPM_TOKEN", "--user", "--to", "pass:dev/npm"],
        value,
        &env,
    );
    assert_eq!(status, 0, "{out}");
    if let Some(log) = started(&t, "set.strace") {
        // strace saw pass and gpg start (what `nowhere` checks is real).
        assert!(
            log.contains("wrap/pass\", [") && log.contains("/usr/bin/gpg"),
            "{log}"
        );
    }
    assert!(!out.contains(value), "echoed: {out}");
    assert_eq!(pass_show(&t, &env, "dev/npm"), format!("{value}\n"));
    assert_eq!(
        t.read("home/.agents/agentenv.toml"),
        "[vars]\nNPM_TOKEN = { from = \"pass:dev/npm\" }\n"
    );
    let inserts = calls(&t, "pass");
    assert_eq!(
        inserts,
        ["CALL pass [insert] [--multiline] [--force] [--] [dev/npm]"],
        "the wrapper saw the call"
    );
    // import: each plain value to pass:team/NAME; the other lines kept.
    t.write(
        "home/.agents/env",
        "# mine\nGH_TOKEN=pass-imp-canary-1\nKEEP=kept\nNPM2='pass imp canary 2'\n",
    );
    let out = traced(
        &t,
        "import.strace",
        &["import", "--to", "pass:team", "--user", "GH_TOKEN", "NPM2"],
        &env,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("moved GH_TOKEN from") && !stderr.contains("canary"),
        "{stderr}"
    );
    assert_eq!(pass_show(&t, &env, "team/GH_TOKEN"), "pass-imp-canary-1\n");
    assert_eq!(pass_show(&t, &env, "team/NPM2"), "pass imp canary 2\n");
    assert_eq!(t.read("home/.agents/env"), "# mine\nKEEP=kept\n");
    let toml = t.read("home/.agents/agentenv.toml");
    assert!(
        toml.contains("GH_TOKEN = { from = \"pass:team/GH_TOKEN\" }")
            && toml.contains("NPM2 = { from = \"pass:team/NPM2\" }")
            && toml.contains("NPM_TOKEN = { from = \"pass:dev/npm\" }"),
        "{toml}"
    );
    // A load reads them all back.
    let mut e = env.clone();
    e.push(("AGENTENV_REF_TTL", "0".into()));
    run(
        &t,
        &[
            "exec",
            "--",
            "sh",
            "-c",
            "printf '%s|%s|%s' \"$NPM_TOKEN\" \"$GH_TOKEN\" \"$NPM2\"",
        ],
        e,
    )
    .stdout(format!("{value}|pass-imp-canary-1|pass imp canary 2"))
    .run();
    // A value pass would not give back whole is refused before pass runs,
    // for any of the values moved: a line break (a load reads the first
    // line), an empty value.
    let before = calls(&t, "pass").len();
    let toml = t.read("home/.agents/agentenv.toml");
    for (file, why) in [
        (
            "GOOD=pass-good-canary\nML=\"multi-canary-1\nmulti-canary-2\"\n",
            "ML: pass:team/ML: pass: the value has a line break",
        ),
        (
            "GOOD=pass-good-canary\nEMPTY=\n",
            "EMPTY: pass:team/EMPTY: pass: the value is empty",
        ),
    ] {
        t.write("home/.agents/env", file);
        run(&t, &["import", "--to", "pass:team", "--user"], env.clone())
            .status(1)
            .stderr_has(why)
            .stderr_has("nothing written")
            .stderr_lacks("canary")
            .run();
        assert_eq!(t.read("home/.agents/env"), file);
        assert_eq!(t.read("home/.agents/agentenv.toml"), toml);
    }
    let inserts: Vec<String> = calls(&t, "pass").into_iter().skip(before).collect();
    assert!(
        !inserts.iter().any(|c| c.contains("[insert]")),
        "{inserts:?}"
    );
    // The refused values stay in the env file, as they were (the one
    // place they may be): emptied, so that the scan below finds any copy.
    t.write("home/.agents/env", "");
    let gpg_calls = calls(&t, "gpg").len() + calls(&t, "gpg2").len();
    assert!(gpg_calls > 0, "gpg ran under the wrapper");
    nowhere(
        &t,
        since,
        &[
            value,
            "pass-imp-canary-1",
            "pass imp canary 2",
            "multi-canary-1",
            "pass-good-canary",
        ],
    );
}

/// A D-Bus session with gnome-keyring's Secret Service unlocked, kept
/// running for the test; `None` (with a visible skip) when it cannot
/// start here.
struct Keyring {
    child: Child,
    stop: PathBuf,
    bus: String,
}

impl Keyring {
    fn start(t: &Tree) -> Option<Keyring> {
        let (Some(dbus), Some(_), Some(_)) = (
            which("dbus-run-session"),
            which("gnome-keyring-daemon"),
            which("secret-tool"),
        ) else {
            skip(
                "Secret Service",
                "dbus-run-session, gnome-keyring-daemon or secret-tool missing",
            );
            return None;
        };
        let (addr, stop) = (t.path("bus.addr"), t.path("bus.stop"));
        let script = format!(
            "printf 'test-keyring-pw' | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1 || exit 3\n\
             printf %s \"$DBUS_SESSION_BUS_ADDRESS\" > '{a}.tmp' && mv '{a}.tmp' '{a}'\n\
             while [ ! -e '{s}' ]; do sleep 0.1; done\n",
            a = addr.display(),
            s = stop.display()
        );
        let mut child = Command::new(dbus)
            .args(["--", "sh", "-c", &script])
            .env_clear()
            .env("HOME", t.path("home"))
            .env("PATH", "/usr/bin:/bin")
            .env("XDG_RUNTIME_DIR", t.path("rt"))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(bus) = std::fs::read_to_string(&addr) {
                return Some(Keyring { child, stop, bus });
            }
            if let Ok(Some(_)) = child.try_wait() {
                let out = child.wait_with_output().unwrap();
                skip(
                    "Secret Service",
                    &format!(
                        "gnome-keyring did not start here: {}",
                        String::from_utf8_lossy(&out.stderr)
                    ),
                );
                return None;
            }
            if Instant::now() > until {
                let _ = child.kill();
                let _ = child.wait();
                skip(
                    "Secret Service",
                    "the D-Bus session did not come up in 30 s",
                );
                return None;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `secret-tool lookup service S account A` (the real one).
    fn lookup(&self, t: &Tree, service: &str, account: &str) -> Option<String> {
        let out = Command::new(which("secret-tool").unwrap())
            .args(["lookup", "service", service, "account", account])
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus)
            .env("XDG_RUNTIME_DIR", t.path("rt"))
            .env("HOME", t.path("home"))
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| String::from_utf8(out.stdout).unwrap())
    }
}

impl Drop for Keyring {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.stop, "");
        let until = Instant::now() + Duration::from_secs(10);
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
#[cfg_attr(missing = "python3", ignore = "needs python3")]
fn set_and_import_to_the_secret_service_through_stdin_only() {
    let t = tree();
    let since = SystemTime::now() - Duration::from_secs(1);
    let Some(k) = Keyring::start(&t) else {
        return;
    };
    let env = vec![
        ("DBUS_SESSION_BUS_ADDRESS", k.bus.clone()),
        ("PATH", wrappers(&t)),
    ];
    let value = "keyring-set-canary-8282";
    let (out, status) = typed_under(
        &t,
        &tracer(&t, "set.strace"),
        &[
            "set",
            "OPENAI_API_KEY",
            "--user",
            "--to",
            "keychain:agentenv/OPENAI_API_KEY",
        ],
        value,
        &env,
    );
    assert_eq!(status, 0, "{out}");
    assert!(!out.contains(value), "echoed: {out}");
    assert_eq!(
        k.lookup(&t, "agentenv", "OPENAI_API_KEY").as_deref(),
        Some(value)
    );
    assert_eq!(
        t.read("home/.agents/agentenv.toml"),
        "[vars]\nOPENAI_API_KEY = { from = \"keychain:agentenv/OPENAI_API_KEY\" }\n"
    );
    let stores = calls(&t, "secret-tool");
    assert_eq!(
        stores,
        ["CALL secret-tool [store] [--label] [agentenv agentenv/OPENAI_API_KEY] [service] [agentenv] [account] [OPENAI_API_KEY]"],
    );
    if let Some(log) = started(&t, "set.strace") {
        assert!(log.contains("wrap/secret-tool\", ["), "{log}");
    }
    t.write(
        "home/.agents/env",
        "GH_TOKEN=keyring-imp-canary-1\nKEEP=kept\nEMPTY=\n",
    );
    run(
        &t,
        &["import", "--to", "keychain:team", "--user", "GH_TOKEN"],
        env.clone(),
    )
    .stderr_has("moved GH_TOKEN from")
    .stderr_lacks("canary")
    .run();
    assert_eq!(
        k.lookup(&t, "team", "GH_TOKEN").as_deref(),
        Some("keyring-imp-canary-1")
    );
    assert_eq!(t.read("home/.agents/env"), "KEEP=kept\nEMPTY=\n");
    assert!(t
        .read("home/.agents/agentenv.toml")
        .contains("GH_TOKEN = { from = \"keychain:team/GH_TOKEN\" }"));
    // An empty value is refused before secret-tool runs (a lookup would
    // find no item).
    let before = calls(&t, "secret-tool").len();
    run(
        &t,
        &["import", "--to", "keychain:team", "--user", "EMPTY"],
        env.clone(),
    )
    .status(1)
    .stderr_has("the value is empty")
    .run();
    assert_eq!(calls(&t, "secret-tool").len(), before);
    assert_eq!(t.read("home/.agents/env"), "KEEP=kept\nEMPTY=\n");
    // A load reads both back.
    let mut e = env.clone();
    e.push(("AGENTENV_REF_TTL", "0".into()));
    run(
        &t,
        &[
            "exec",
            "--",
            "sh",
            "-c",
            "printf '%s|%s' \"$OPENAI_API_KEY\" \"$GH_TOKEN\"",
        ],
        e,
    )
    .stdout(format!("{value}|keyring-imp-canary-1"))
    .run();
    nowhere(&t, since, &[value, "keyring-imp-canary-1"]);
}

#[test]
fn a_pinned_project_reads_its_overlays_declarations_from_the_digest() {
    // The trust gate loads an allowed project from the bytes its digest
    // read; an overlay's `agentenv.toml` is among them, so what it
    // declares public stays public under the gate too.
    let t = tree();
    t.write("proj/.agents/overlays/tools/env", "TOOL_LEVEL=debug\n");
    t.write(
        "proj/.agents/overlays/tools/agentenv.toml",
        "[vars]\nTOOL_LEVEL = { public = true }\n",
    );
    run(&t, &["allow"], []).run();
    for args in [
        &["env", "--public-only", "--format", "json"][..],
        &[
            "env",
            "--public-only",
            "--format",
            "json",
            "--require-trust",
        ],
    ] {
        let j = run(&t, args, []).run().json();
        assert_eq!(j["TOOL_LEVEL"], "debug", "{args:?}: {j}");
    }
}
