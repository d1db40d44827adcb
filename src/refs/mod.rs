//! Secret references (docs/team-secrets.md#team-secrets): a
//! store's `agentenv.toml` says where a value comes from —
//! `NAME = { from = "vault://secret/app#token" }` — and the session
//! resolves it at load, in memory only.
//!
//! - [`Ref`] is a parsed reference; each scheme is one [`Provider`] in a
//!   file of its own (`vault.rs`, `op.rs`, `age.rs`, `pass.rs`,
//!   `keychain.rs`): a sixth provider is a sixth file and a line in
//!   [`provider`].
//! - [`resolve`] resolves one load's references: first from the per-user
//!   value cache (`cache.rs`, a daemon holding values in memory for
//!   `AGENTENV_REF_TTL` seconds), the rest from the backends — one call
//!   per provider and distinct secret (vault: a read per path shared by
//!   its fields; op: one `op inject`; age: one decryption per file), the
//!   providers in parallel, each under `AGENTENV_REF_TIMEOUT` (5 s) and
//!   never past the load's own timeout.
//! - Every failure is a reason without a value or a token: the caller
//!   warns with the variable and the reference and leaves the variable
//!   unset.

pub(crate) mod age;
pub(crate) mod cache;
pub(crate) mod keychain;
pub(crate) mod op;
pub(crate) mod pass;
pub(crate) mod vault;

use crate::core::Env;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// The default time one provider call may take (`AGENTENV_REF_TIMEOUT`).
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);
/// The default time a value stays in the daemon (`AGENTENV_REF_TTL`).
pub(crate) const DEFAULT_TTL: Duration = Duration::from_secs(600);

/// A parsed reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ref {
    /// `vault://MOUNT/PATH#FIELD` (KV version 2).
    Vault {
        mount: String,
        path: String,
        field: String,
    },
    /// `op://VAULT/ITEM/FIELD` (the whole text).
    Op(String),
    /// `age:FILE#NAME`, FILE relative to the store.
    Age { file: String, name: String },
    /// `pass:PATH`.
    Pass(String),
    /// `keychain:SERVICE/ACCOUNT`.
    Keychain { service: String, account: String },
}

/// The schemes, as `from` spells them (for messages).
pub(crate) const SCHEMES: &str = "vault://, op://, age:, pass:, keychain:";

fn no_controls(s: &str) -> bool {
    !s.chars().any(char::is_control)
}

/// Both sides of a split, when there was one and neither is empty.
fn halves<'a>(split: Option<(&'a str, &'a str)>, why: &str) -> Result<(&'a str, &'a str), String> {
    match split {
        Some((a, b)) if !a.is_empty() && !b.is_empty() => Ok((a, b)),
        _ => Err(why.to_string()),
    }
}

impl Ref {
    /// Parse `from`'s text; `Err` says what is wrong (never echoing it).
    pub(crate) fn parse(text: &str) -> Result<Ref, String> {
        if !no_controls(text) {
            return Err("a reference holds a control character".into());
        }
        if let Some(rest) = text.strip_prefix("vault://") {
            let (path, field) = rest
                .rsplit_once('#')
                .ok_or("vault:// needs #FIELD (vault://MOUNT/PATH#FIELD)")?;
            let (mount, path) = path
                .split_once('/')
                .ok_or("vault:// needs a mount and a path (vault://MOUNT/PATH#FIELD)")?;
            let bad = |s: &str| s.is_empty() || s.split('/').any(|p| p.is_empty() || p == "..");
            if bad(mount) || bad(path) || field.is_empty() {
                return Err("vault:// needs MOUNT/PATH#FIELD, each part non-empty".into());
            }
            return Ok(Ref::Vault {
                mount: mount.into(),
                path: path.into(),
                field: field.into(),
            });
        }
        if let Some(rest) = text.strip_prefix("op://") {
            let parts: Vec<&str> = rest.split('/').collect();
            if parts.len() < 3 || parts.iter().any(|p| p.is_empty()) || text.contains("}}") {
                return Err("op:// needs VAULT/ITEM/FIELD".into());
            }
            return Ok(Ref::Op(text.into()));
        }
        if let Some(rest) = text.strip_prefix("age:") {
            let (file, name) = halves(rest.rsplit_once('#'), "age: needs FILE#NAME")?;
            if !crate::compat::ident::is_name(name.as_bytes()) {
                return Err("age: needs FILE#NAME, NAME a variable name".into());
            }
            let (file, name) = (file.into(), name.into());
            return Ok(Ref::Age { file, name });
        }
        if let Some(rest) = text.strip_prefix("pass:") {
            if rest.is_empty() || rest.starts_with('-') || rest.split('/').any(|p| p == "..") {
                return Err("pass: needs a password's path (pass:dev/npm)".into());
            }
            return Ok(Ref::Pass(rest.into()));
        }
        if let Some(rest) = text.strip_prefix("keychain:") {
            let (service, account) =
                halves(rest.split_once('/'), "keychain: needs SERVICE/ACCOUNT")?;
            let (service, account) = (service.into(), account.into());
            return Ok(Ref::Keychain { service, account });
        }
        Err(format!("unknown scheme (known: {SCHEMES})"))
    }

    /// This reference as declared by the `agentenv.toml` at `dir`, a
    /// path under the store (an overlay's `overlays/NAME`): an `age:`
    /// FILE is relative to that directory. A FILE that leaves it (`..`,
    /// absolute) is kept as written, for `age` to refuse.
    pub(crate) fn under(&self, dir: &Path) -> Ref {
        match self {
            Ref::Age { file, name } if !dir.as_os_str().is_empty() => {
                let f = Path::new(file);
                let inside = f.is_relative()
                    && !f.components().any(|c| c == std::path::Component::ParentDir);
                let file = match (inside, dir.join(f).to_str()) {
                    (true, Some(joined)) => joined.to_string(),
                    _ => file.clone(),
                };
                Ref::Age {
                    file,
                    name: name.clone(),
                }
            }
            other => other.clone(),
        }
    }

    /// The scheme's provider name (`vault`, `op`, `age`, `pass`,
    /// `keychain`).
    pub(crate) fn scheme(&self) -> &'static str {
        match self {
            Ref::Vault { .. } => "vault",
            Ref::Op(_) => "op",
            Ref::Age { .. } => "age",
            Ref::Pass(_) => "pass",
            Ref::Keychain { .. } => "keychain",
        }
    }
}

/// What a provider sees of one load: the environment at the references'
/// layer (addresses, tokens, `HOME`, the store's own settings), the
/// store's directory (age files are relative to it), and the time one
/// call may take.
pub(crate) struct Ctx<'a> {
    pub env: &'a Env,
    pub store: &'a Path,
    pub cwd: &'a Path,
    pub timeout: Duration,
}

impl Ctx<'_> {
    /// A variable of the environment, when set and not empty.
    pub(crate) fn var(&self, name: &str) -> Option<&str> {
        crate::core::get(self.env, name)
            .and_then(std::ffi::OsStr::to_str)
            .filter(|v| !v.is_empty())
    }

    /// `$HOME`.
    pub(crate) fn home(&self) -> Option<PathBuf> {
        self.var("HOME").map(PathBuf::from)
    }

    /// A command with the load's environment (the layer's), run by
    /// [`crate::process::run_captured`] (stdin `/dev/null`, stderr
    /// discarded: a backend's message may quote a value).
    pub(crate) fn command(&self, program: &str) -> std::process::Command {
        let mut c = std::process::Command::new(program);
        c.env_clear().envs(self.env).current_dir(self.cwd);
        c
    }

    /// Run `cmd`; its stdout, or a reason naming `what` (never its output).
    pub(crate) fn run(&self, cmd: std::process::Command, what: &str) -> Result<Vec<u8>, String> {
        match crate::process::run_captured(cmd, self.timeout, 1 << 20) {
            Ok(c) if c.status.success() => Ok(c.stdout),
            Ok(c) => Err(format!(
                "{what} exited {}",
                crate::process::status_code(c.status)
            )),
            Err(crate::process::RunError::Spawn(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(format!("{what} is not installed (not found on PATH)"))
            }
            Err(crate::process::RunError::Timeout) => Err(format!(
                "{what} timed out after {} s",
                self.timeout.as_secs_f64()
            )),
            Err(e) => Err(format!("{what}: {e}")),
        }
    }
}

/// Run `cmd` with `input` on its stdin (a value to store: never in argv),
/// stdout and stderr discarded, in its own process group, for at most
/// `timeout`. `Err`: a reason naming `what`.
pub(crate) fn run_with_stdin(
    mut cmd: std::process::Command,
    input: &[u8],
    timeout: Duration,
    what: &str,
) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    let mut child = cmd.spawn().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            format!("{what} is not installed (not found on PATH)")
        } else {
            format!("{what}: cannot start: {}", crate::fsutil::io_kind(&e))
        }
    })?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let data = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            _ => {
                let pid = rustix::process::Pid::from_child(&child);
                let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{what} timed out after {} s",
                    timeout.as_secs_f64()
                ));
            }
        }
    };
    let _ = writer.join();
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "{what} exited {}",
            crate::process::status_code(status)
        ))
    }
}

/// A value, or why there is none (value- and token-free).
pub(crate) type Outcome = Result<Vec<u8>, String>;

/// One scheme's backend.
pub(crate) trait Provider: Sync {
    /// Resolve every reference of one load that has this scheme: one
    /// outcome per reference, in order, with as few backend calls as the
    /// backend allows.
    fn resolve(&self, refs: &[&Ref], ctx: &Ctx<'_>) -> Vec<Outcome>;

    /// What the daemon's key covers besides the reference text: the
    /// backend's address, a hash of the credential, the file's identity.
    fn context(&self, r: &Ref, ctx: &Ctx<'_>) -> Vec<u8>;

    /// What `status` says this would contact (no secret).
    fn backend(&self, r: &Ref, ctx: &Ctx<'_>) -> String;

    /// Whether `write` would take `value` (one a load would not read back
    /// whole is refused): asked for every value before any is written
    /// (`import --to`), and by `write` itself.
    fn check(&self, _value: &[u8]) -> Result<(), String> {
        Ok(())
    }

    /// Store `value` at `r` (`agentenv set --to`).
    fn write(&self, r: &Ref, value: &[u8], ctx: &Ctx<'_>) -> Result<(), String>;
}

/// The provider of `r`'s scheme.
pub(crate) fn provider(r: &Ref) -> &'static dyn Provider {
    match r {
        Ref::Vault { .. } => &vault::Vault,
        Ref::Op(_) => &op::Op,
        Ref::Age { .. } => &age::Age,
        Ref::Pass(_) => &pass::Pass,
        Ref::Keychain { .. } => &keychain::Keychain,
    }
}

/// Where a resolved value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// The per-user daemon's memory (within the TTL).
    Daemon,
    /// The backend, now.
    Backend,
}

impl Source {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Source::Daemon => "the daemon",
            Source::Backend => "the backend",
        }
    }
}

/// One reference's result in a load.
#[derive(Debug, Clone)]
pub(crate) struct Resolved {
    pub value: Result<Vec<u8>, String>,
    pub source: Source,
    /// When the value was fetched from the backend.
    pub at: SystemTime,
    /// The value daemon's key of the reference ([`key_of`]).
    pub key: [u8; 32],
}

/// `AGENTENV_REF_TIMEOUT` / `AGENTENV_REF_TTL` in seconds (a positive
/// number), else `default`.
pub(crate) fn seconds(env: &Env, name: &str, default: Duration) -> Duration {
    crate::core::get(env, name)
        .and_then(|v| v.to_str()?.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0 && *s < 1e9)
        .map_or(default, Duration::from_secs_f64)
}

/// The daemon's key of `r` in `ctx`: a hash, so the daemon never learns a
/// reference, an address or a file name.
fn key_of(r: &Ref, text: &str, ctx: &Ctx<'_>) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key("agentenv secret reference v1");
    let ctx_bytes = provider(r).context(r, ctx);
    for part in [text.as_bytes(), &ctx_bytes] {
        h.update(&(part.len() as u64).to_le_bytes());
        h.update(part);
    }
    *h.finalize().as_bytes()
}

/// Resolve `refs` (reference text and parsed form) of one store, whose
/// environment and directory `ctx` gives, by `deadline` at the latest.
pub(crate) fn resolve(refs: &[(&str, &Ref)], ctx: &Ctx<'_>, deadline: Instant) -> Vec<Resolved> {
    let now = SystemTime::now();
    let keys: Vec<[u8; 32]> = refs.iter().map(|(t, r)| key_of(r, t, ctx)).collect();
    let ttl = seconds(ctx.env, "AGENTENV_REF_TTL", DEFAULT_TTL);
    let daemon = (!ttl.is_zero()).then(cache::Client::new).flatten();
    let cached = match &daemon {
        Some(d) => d.get(&keys),
        None => vec![None; keys.len()],
    };
    let mut out: Vec<Option<Resolved>> = cached
        .into_iter()
        .zip(&keys)
        .map(|(c, &key)| {
            c.map(|(value, age)| Resolved {
                value: Ok(value),
                source: Source::Daemon,
                at: now.checked_sub(age).unwrap_or(now),
                key,
            })
        })
        .collect();
    // The misses, by scheme: one thread per provider.
    let mut groups: Vec<(&'static str, Vec<usize>)> = Vec::new();
    for (i, (_, r)) in refs.iter().enumerate() {
        if out[i].is_some() {
            continue;
        }
        match groups.iter_mut().find(|(s, _)| *s == r.scheme()) {
            Some((_, v)) => v.push(i),
            None => groups.push((r.scheme(), vec![i])),
        }
    }
    let left = deadline.saturating_duration_since(Instant::now());
    let call_ctx = Ctx {
        timeout: ctx.timeout.min(left),
        ..*ctx
    };
    let results: Vec<(Vec<usize>, Vec<Outcome>)> = std::thread::scope(|s| {
        let handles: Vec<_> = groups
            .iter()
            .map(|(_, idx)| {
                let these: Vec<&Ref> = idx.iter().map(|&i| refs[i].1).collect();
                let call_ctx = &call_ctx;
                let h = s.spawn(move || {
                    let p = provider(these[0]);
                    p.resolve(&these, call_ctx)
                });
                (idx.clone(), h)
            })
            .collect();
        handles
            .into_iter()
            .map(|(idx, h)| {
                let n = idx.len();
                let r = h.join().unwrap_or_else(|_| {
                    vec![Err("the provider failed (an internal error)".to_string()); n]
                });
                (idx, r)
            })
            .collect()
    });
    let mut put = Vec::new();
    for (idx, outcomes) in results {
        for (i, o) in idx.into_iter().zip(outcomes) {
            if let Ok(v) = &o {
                put.push((keys[i], v.clone()));
            }
            out[i] = Some(Resolved {
                value: o,
                source: Source::Backend,
                at: now,
                key: keys[i],
            });
        }
    }
    if !put.is_empty() && !ttl.is_zero() {
        match &daemon {
            Some(d) => d.put(&put, ttl),
            None => cache::start_and_put(&put, ttl),
        }
    }
    out.into_iter()
        .zip(keys)
        .map(|(o, key)| {
            o.unwrap_or(Resolved {
                value: Err("not resolved".into()),
                source: Source::Backend,
                at: now,
                key,
            })
        })
        .collect()
}

/// A short `HH:MM:SS UTC` for `explain`.
pub(crate) fn clock(t: SystemTime) -> String {
    let s = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let day = s % 86_400;
    format!(
        "{:02}:{:02}:{:02} UTC",
        day / 3600,
        (day % 3600) / 60,
        day % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_scheme() {
        assert_eq!(
            Ref::parse("vault://secret/app/db#password"),
            Ok(Ref::Vault {
                mount: "secret".into(),
                path: "app/db".into(),
                field: "password".into()
            })
        );
        assert_eq!(
            Ref::parse("op://Eng/GitHub/token"),
            Ok(Ref::Op("op://Eng/GitHub/token".into()))
        );
        assert_eq!(
            Ref::parse("age:secrets.env.age#DEPLOY_KEY"),
            Ok(Ref::Age {
                file: "secrets.env.age".into(),
                name: "DEPLOY_KEY".into()
            })
        );
        assert_eq!(Ref::parse("pass:dev/npm"), Ok(Ref::Pass("dev/npm".into())));
        assert_eq!(
            Ref::parse("keychain:agentenv/OPENAI"),
            Ok(Ref::Keychain {
                service: "agentenv".into(),
                account: "OPENAI".into()
            })
        );
    }

    #[test]
    fn refuses_bad_references_without_echoing_them() {
        for bad in [
            "vault://secret#f",
            "vault://secret/a",
            "vault://secret/../x#f",
            "vault://secret/a#",
            "op://a/b",
            "age:file",
            "age:#X",
            "age:f#1X",
            "pass:",
            "pass:--help",
            "keychain:svc",
            "canary-scheme:x",
            "pass:a\nb",
        ] {
            let e = Ref::parse(bad).unwrap_err();
            // (A bare scheme may be named; nothing longer is echoed.)
            assert!(
                !e.contains("canary") && (bad.len() < 8 || !e.contains(bad)),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn an_overlays_age_file_is_relative_to_the_overlay() {
        let age = Ref::parse("age:team.env.age#K").unwrap();
        let ovl = Path::new("overlays/tools");
        assert_eq!(
            age.under(ovl),
            Ref::parse("age:overlays/tools/team.env.age#K").unwrap()
        );
        assert_eq!(age.under(Path::new("")), age);
        // A FILE that leaves the overlay is kept as written (age refuses it).
        for bad in ["age:../x#K", "age:/etc/x#K"] {
            let r = Ref::parse(bad).unwrap();
            assert_eq!(r.under(ovl), r);
        }
        let pass = Ref::parse("pass:dev/npm").unwrap();
        assert_eq!(pass.under(ovl), pass);
    }

    #[test]
    fn seconds_from_the_environment() {
        let mut env = Env::new();
        assert_eq!(seconds(&env, "T", DEFAULT_TIMEOUT), DEFAULT_TIMEOUT);
        env.insert("T".into(), "0.5".into());
        assert_eq!(
            seconds(&env, "T", DEFAULT_TIMEOUT),
            Duration::from_millis(500)
        );
        env.insert("T".into(), "x".into());
        assert_eq!(seconds(&env, "T", DEFAULT_TIMEOUT), DEFAULT_TIMEOUT);
    }
}
