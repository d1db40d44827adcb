//! The cache entry of a rewritten command: made by the `PreToolUse` hook
//! through `session::plan` (`CacheMode::Entry`, keyed like `env --cache`
//! by the stores and the client's environment, so a command on a cache hit
//! runs no layer), read by the per-command helper and the daemon, which
//! turn it into the `export` lines the shell evaluates and the values its
//! output is masked of.

use super::client::Client;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The format name the cache key gets for the hook's entries (nothing
/// else renders it, so the keys never meet `env --cache`'s).
const ENTRY_FORMAT: &str = "agentenv-hook-sensitive-v2";

/// How long a cache entry must still be fresh when a command starts.
const ENTRY_MARGIN: std::time::Duration = std::time::Duration::from_secs(60);

/// The cache entry holding this session's sensitive variables (written
/// now when missing or about to expire) and the user store; `None` when
/// there are none. For
/// Codex, which has no session env file before 0.172, the entry also
/// holds the `export` lines of the public variables.
pub fn make(base: &crate::core::Env, client: Client) -> Result<Option<(PathBuf, PathBuf)>, String> {
    let req = crate::session::Request {
        require_trust: true,
        cache: crate::session::CacheMode::Entry {
            format: format!("{ENTRY_FORMAT} {}", client.name()),
            fresh_for: ENTRY_MARGIN,
        },
        ..crate::session::Request::new(crate::session::Options::default())
    };
    let mut plan = crate::session::plan(&req, base).map_err(|e| e.to_string())?;
    crate::log::notes(&plan.take_notes());
    if let Some(why) = plan.cache_error() {
        return Err(why.to_string());
    }
    if let (Some(bytes), Some(entry)) = (plan.cached(), plan.cache_entry()) {
        if bytes == b"{}" {
            return Ok(None);
        }
        return Ok(Some((entry, plan.user_store().to_path_buf())));
    }
    let session = plan.assemble();
    crate::log::notes(session.assembly.notes());
    let entry = Entry {
        vars: session.sensitive_unmasked_too(),
        masked: session.values_to_mask(),
        public: String::new(),
    };
    let public = if client.facts().public_in_entry {
        let mut view = session.view(true);
        session.keep_public(&mut view);
        crate::render::render(crate::render::Format::Export, &view)
    } else {
        String::new()
    };
    let text = Entry { public, ..entry }.text();
    let kept = plan.keep(text.as_bytes())?;
    if text == "{}" {
        return Ok(None);
    }
    match kept {
        Some(entry) => Ok(Some((entry, plan.user_store().to_path_buf()))),
        None => Err(format!(
            "cannot write the cache entry in {}",
            plan.cache_entry()
                .as_deref()
                .and_then(Path::parent)
                .unwrap_or(Path::new(""))
                .display()
        )),
    }
}

fn hex(b: &[u8]) -> String {
    const H: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(b.len() * 2);
    for &x in b {
        s.push(H[(x >> 4) as usize] as char);
        s.push(H[(x & 15) as usize] as char);
    }
    s
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Sensitive variables: names and values.
pub(crate) type Values = Vec<(String, Vec<u8>)>;

/// What a cache entry holds: the sensitive variables the command gets,
/// the values its output is masked of ([`crate::session::Session::
/// values_to_mask`]: not a short one or a number, but also a store's
/// value the client's environment holds already), and the `export` lines
/// of the public variables (a client without an env file).
#[derive(Debug, Default, PartialEq, Eq)]
struct Entry {
    vars: Values,
    masked: Values,
    public: String,
}

impl Entry {
    /// `{"vars": [[NAME, HEX-VALUE], …], "masked": […], "public": "export
    /// …"}` (`{}` when all are empty): names and values byte-exact, UTF-8
    /// as the cache wants.
    fn text(&self) -> String {
        if self.vars.is_empty() && self.masked.is_empty() && self.public.trim().is_empty() {
            return "{}".into();
        }
        let pairs =
            |vs: &Values| -> Vec<Value> { vs.iter().map(|(k, v)| json!([k, hex(v)])).collect() };
        json!({ "vars": pairs(&self.vars), "masked": pairs(&self.masked), "public": self.public })
            .to_string()
    }

    fn parse(bytes: &[u8]) -> Option<Entry> {
        let v: Value = serde_json::from_slice(bytes).ok()?;
        let pairs = |key: &str| -> Option<Values> {
            let Some(list) = v.get(key) else {
                return Some(Vec::new());
            };
            list.as_array()?
                .iter()
                .map(|p| {
                    let name = p.get(0)?.as_str()?.to_string();
                    let value = unhex(p.get(1)?.as_str()?)?;
                    Some((name, value))
                })
                .collect()
        };
        Some(Entry {
            vars: pairs("vars")?,
            masked: pairs("masked")?,
            public: v
                .get("public")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        })
    }
}

/// A name the shell can assign.
fn shell_name(n: &str) -> bool {
    crate::compat::ident::is_name(n.as_bytes()) && !n.starts_with("__ae_")
}

/// The exports a rewritten command `eval`s (ended by NUL: sent once the
/// shell's output goes into the FIFOs) and the values to mask, from the
/// cache entry `entry`. `Err`: a value-free message.
pub(crate) fn load_entry(entry: &Path) -> Result<(Vec<u8>, Values), String> {
    if entry.parent().is_none() || entry.file_name().and_then(|k| k.to_str()).is_none() {
        return Err("hook run: the entry path has no file name".into());
    }
    let Some(bytes) = crate::session::read_entry(entry) else {
        return Err(format!(
            "the sensitive variables' cache entry {} is gone or stale",
            entry.display()
        ));
    };
    let Some(Entry {
        vars,
        masked,
        public,
    }) = Entry::parse(&bytes)
    else {
        return Err(format!(
            "the cache entry {} is not agentenv's",
            entry.display()
        ));
    };
    let mut prologue: Vec<u8> = public.into_bytes();
    for (name, value) in &vars {
        if shell_name(name) {
            // A name zsh keeps for itself (read-only: the assignment would
            // end the `eval` there; `USERNAME`: zsh would change the
            // shell's user; `path`: `PATH`) is set in bash only.
            let zsh_own = crate::hook::shell_reserves(crate::hook::Shell::Zsh, name.as_bytes());
            if zsh_own {
                prologue.extend_from_slice(
                    format!(
                        "if [ -n \"${{ZSH_VERSION-}}\" ]; then printf '%s\\n' 'agentenv: zsh keeps \
                         {name} for itself: this command runs without it' >&2; else "
                    )
                    .as_bytes(),
                );
            }
            prologue.extend_from_slice(b"export ");
            prologue.extend_from_slice(name.as_bytes());
            prologue.push(b'=');
            prologue.extend_from_slice(&crate::compat::sh::single_quote(value));
            if zsh_own {
                prologue.extend_from_slice(b"; fi");
            }
            prologue.push(b'\n');
        }
    }
    prologue.push(super::protocol::EXPORTS_END);
    Ok((prologue, masked))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_bytes() {
        let e = Entry {
            vars: vec![
                ("A".to_string(), b"x\xff\n'y".to_vec()),
                ("B".to_string(), Vec::new()),
            ],
            masked: vec![("C".to_string(), b"held".to_vec())],
            public: "export X=1\n".to_string(),
        };
        assert_eq!(Entry::parse(e.text().as_bytes()), Some(e));
        assert_eq!(Entry::parse(b"{}"), Some(Entry::default()));
        assert_eq!(Entry::parse(b"not json"), None);
    }
}
