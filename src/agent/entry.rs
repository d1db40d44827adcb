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
const ENTRY_FORMAT: &str = "agentenv-hook-sensitive-v3";

/// How long a cache entry must still be fresh when a command starts.
const ENTRY_MARGIN: std::time::Duration = std::time::Duration::from_secs(60);

/// A cache entry [`make`] found or wrote.
pub(crate) struct Made {
    /// The entry's path.
    pub entry: PathBuf,
    /// The user store (where the shell functions' prologue lives).
    pub user_store: PathBuf,
    /// The entry holds secret references (or variables built from their
    /// values): the value daemon serves it.
    pub references: bool,
}

/// The cache entry holding this session's sensitive variables (written
/// now when missing or about to expire) and the user store; `None` when
/// there are none. For
/// Codex, which has no session env file before 0.172, the entry also
/// holds the `export` lines of the public variables.
pub(crate) fn make(base: &crate::core::Env, client: Client) -> Result<Option<Made>, String> {
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
        return Ok(Some(Made {
            entry,
            user_store: plan.user_store().to_path_buf(),
            references: Entry::parse(bytes).is_some_and(|e| e.references()),
        }));
    }
    let session = plan.assemble();
    crate::log::notes(session.assembly.notes());
    let mut entry = Entry {
        vars: session.sensitive_unmasked_too(),
        masked: session.values_to_mask(),
        refs: Vec::new(),
        derived: Vec::new(),
        cwd: session.prepared.scope.cwd.clone(),
        public: String::new(),
    };
    // A secret reference's value never goes into a file, and this entry
    // is one: it holds the reference and the value daemon's key, and
    // [`load_entry`] gets the value from the value daemon (or the
    // backend again).
    let mut held: Vec<Vec<u8>> = Vec::new();
    for r in session.references() {
        let (Ok(_), Some(key)) = (&r.outcome, r.key) else {
            continue;
        };
        if !entry.vars.iter().any(|(k, _)| *k == r.name) || !set_by_reference(&session, &r.name) {
            continue;
        }
        let mask = entry.masked.iter().any(|(k, _)| *k == r.name);
        held.extend(
            entry
                .vars
                .iter()
                .filter(|(k, _)| *k == r.name)
                .map(|(_, v)| v.clone()),
        );
        entry.vars.retain(|(k, _)| *k != r.name);
        entry.masked.retain(|(k, _)| *k != r.name);
        entry.refs.retain(|s| s.name != r.name);
        entry.refs.push(RefSlot {
            name: r.name.clone(),
            text: r.text.clone(),
            key,
            mask,
        });
    }
    // A variable a later layer built from a referenced value (`Y="x$REF"`)
    // holds that value too: it stays out of the entry as well, and each
    // command takes it from the session assembled again (the value daemon
    // answers the references within the TTL).
    let holds = |v: &[u8]| {
        held.iter().any(|r| {
            r.len() >= crate::core::MIN_MASKED_LEN && v.windows(r.len()).any(|w| w == &r[..])
        })
    };
    for (name, _) in entry.vars.iter().filter(|(_, v)| holds(v)) {
        let mask = entry.masked.iter().any(|(k, _)| k == name);
        entry.derived.push((name.clone(), mask));
    }
    entry.vars.retain(|(_, v)| !holds(v));
    entry.masked.retain(|(_, v)| !holds(v));
    let public = if client.facts().public_in_entry {
        let mut view = session.view(true);
        session.keep_public(&mut view);
        crate::render::render(crate::render::Format::Export, &view)
    } else {
        String::new()
    };
    let entry = Entry { public, ..entry };
    let references = entry.references();
    let text = entry.text();
    let kept = plan.keep(text.as_bytes())?;
    if text == "{}" {
        return Ok(None);
    }
    match kept {
        Some(entry) => Ok(Some(Made {
            entry,
            user_store: plan.user_store().to_path_buf(),
            references,
        })),
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

/// Is `name`'s final value the one a `references` layer set (no later
/// layer set it again)? A later layer's value stays a plain one.
fn set_by_reference(session: &crate::session::Session, name: &str) -> bool {
    use crate::core::{Action, LayerKind};
    let a = &session.assembly;
    a.touches(std::ffi::OsStr::new(name))
        .iter()
        .rfind(|t| !matches!(t.action, Action::Skipped(_)))
        .is_some_and(|t| {
            t.action != Action::Unset && a.layers()[t.layer].info.kind == LayerKind::References
        })
}

use crate::refs::cache::{hex, unhex};

/// Sensitive variables: names and values.
pub(crate) type Values = Vec<(String, Vec<u8>)>;

/// A secret reference of a cache entry: its variable, its text, the value
/// daemon's key ([`crate::refs::Resolved::key`]) and whether the command's
/// output is masked of it — never its value.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RefSlot {
    name: String,
    text: String,
    key: [u8; 32],
    mask: bool,
}

/// What a cache entry holds: the sensitive variables the command gets,
/// the values its output is masked of ([`crate::session::Session::
/// values_to_mask`]: not a short one or a number, but also a store's
/// value the client's environment holds already), the secret references
/// (no value: [`RefSlot`]) with the directory the session was made in,
/// and the `export` lines of the public variables (a client without an
/// env file).
#[derive(Debug, Default, PartialEq, Eq)]
struct Entry {
    vars: Values,
    masked: Values,
    refs: Vec<RefSlot>,
    /// Variables whose values hold a referenced value: their names (and
    /// whether output is masked of them), never the values.
    derived: Vec<(String, bool)>,
    cwd: PathBuf,
    public: String,
}

impl Entry {
    /// Does it hold secret references (or variables built from them)?
    fn references(&self) -> bool {
        !self.refs.is_empty() || !self.derived.is_empty()
    }

    /// `{"vars": [[NAME, HEX-VALUE], …], "masked": […], "refs": [[NAME,
    /// TEXT, HEX-KEY, MASK], …], "derived": [[NAME, MASK], …], "cwd":
    /// HEX-PATH, "public": "export …"}`
    /// (`{}` when there is nothing to give): names and values byte-exact,
    /// UTF-8 as the cache wants.
    fn text(&self) -> String {
        if self.vars.is_empty()
            && self.masked.is_empty()
            && self.refs.is_empty()
            && self.public.trim().is_empty()
        {
            return "{}".into();
        }
        let pairs =
            |vs: &Values| -> Vec<Value> { vs.iter().map(|(k, v)| json!([k, hex(v)])).collect() };
        let refs: Vec<Value> = self
            .refs
            .iter()
            .map(|r| json!([r.name, r.text, hex(&r.key), r.mask]))
            .collect();
        json!({
            "vars": pairs(&self.vars),
            "masked": pairs(&self.masked),
            "refs": refs,
            "derived": self.derived,
            "cwd": hex(self.cwd.as_os_str().as_encoded_bytes()),
            "public": self.public,
        })
        .to_string()
    }

    fn parse(bytes: &[u8]) -> Option<Entry> {
        use std::os::unix::ffi::OsStrExt;
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
        let refs = match v.get("refs") {
            None => Vec::new(),
            Some(list) => list
                .as_array()?
                .iter()
                .map(|r| {
                    Some(RefSlot {
                        name: r.get(0)?.as_str()?.to_string(),
                        text: r.get(1)?.as_str()?.to_string(),
                        key: unhex(r.get(2)?.as_str()?)?.try_into().ok()?,
                        mask: r.get(3)?.as_bool()?,
                    })
                })
                .collect::<Option<Vec<RefSlot>>>()?,
        };
        let derived = match v.get("derived") {
            None => Vec::new(),
            Some(list) => list
                .as_array()?
                .iter()
                .map(|d| Some((d.get(0)?.as_str()?.to_string(), d.get(1)?.as_bool()?)))
                .collect::<Option<Vec<(String, bool)>>>()?,
        };
        let cwd = unhex(v.get("cwd").and_then(Value::as_str).unwrap_or(""))?;
        Some(Entry {
            vars: pairs("vars")?,
            masked: pairs("masked")?,
            refs,
            derived,
            cwd: PathBuf::from(std::ffi::OsStr::from_bytes(&cwd)),
            public: v
                .get("public")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        })
    }
}

/// Does the cache entry `entry` hold a secret reference (or a variable
/// built from one)?
pub(crate) fn holds_references(entry: &Path) -> bool {
    crate::session::read_entry(entry)
        .and_then(|b| Entry::parse(&b))
        .is_some_and(|e| e.references())
}

/// The session assembled again as the hook did, once, for the references
/// the value daemon no longer holds and the variables built from them.
struct Again<'a> {
    cwd: &'a Path,
    session: Option<Option<crate::session::Session>>,
}

impl Again<'_> {
    fn session(&mut self) -> Option<&crate::session::Session> {
        let cwd = self.cwd;
        self.session
            .get_or_insert_with(|| assemble_again(cwd))
            .as_ref()
    }
}

/// The referenced values of `refs`, from the value daemon; the daemon's
/// misses, given `again`, resolved anew ([`resolve_again`]), else `Err`.
/// A value missing then is left out (a warning names the variable and the
/// reference).
fn referenced(refs: &[RefSlot], again: Option<&mut Again>) -> Result<Values, String> {
    if refs.is_empty() {
        return Ok(Vec::new());
    }
    let keys: Vec<[u8; 32]> = refs.iter().map(|r| r.key).collect();
    let held = match crate::refs::cache::Client::new() {
        Some(c) => c.get(&keys),
        None => vec![None; keys.len()],
    };
    let missed: Vec<&RefSlot> = refs
        .iter()
        .zip(&held)
        .filter(|(_, h)| h.is_none())
        .map(|(r, _)| r)
        .collect();
    let mut found = match again {
        _ if missed.is_empty() => Vec::new(),
        None => return Err("a secret reference's value is not in the value daemon".into()),
        Some(a) => resolve_again(&missed, a.session()),
    };
    for (r, h) in refs.iter().zip(held) {
        if let Some((v, _)) = h {
            found.push((r.name.clone(), v));
        }
    }
    Ok(found)
}

/// The session assembled again as the hook did (in `cwd`, this process's
/// environment, the trust gate required: an allowance withdrawn since
/// leaves a project's references unresolved, no backend contacted).
fn assemble_again(cwd: &Path) -> Option<crate::session::Session> {
    let base = crate::core::process_env();
    let opts = crate::session::Options {
        cwd: Some(cwd.to_path_buf()),
        ..crate::session::Options::default()
    };
    let req = crate::session::Request {
        require_trust: true,
        ..crate::session::Request::new(opts)
    };
    match crate::session::plan(&req, &base) {
        Ok(plan) => Some(plan.assemble()),
        Err(e) => {
            crate::warn!("the session cannot be assembled again: {e}");
            None
        }
    }
}

/// The values of the references `missed` in `session` (assembled again),
/// each when its reference resolved there (which also gave the value
/// daemon the value again).
fn resolve_again(missed: &[&RefSlot], session: Option<&crate::session::Session>) -> Values {
    let vars = session
        .map(crate::session::Session::sensitive_unmasked_too)
        .unwrap_or_default();
    let mut out = Vec::new();
    for r in missed {
        let record = session.and_then(|s| {
            s.references()
                .iter()
                .rev()
                .find(|x| x.name == r.name && x.text == r.text)
        });
        let why = match record.map(|x| &x.outcome) {
            Some(Ok(_)) => match vars.iter().find(|(k, _)| *k == r.name) {
                Some((_, v)) => {
                    out.push((r.name.clone(), v.clone()));
                    continue;
                }
                None => "the session no longer sets it".to_string(),
            },
            Some(Err(why)) => why.clone(),
            None => "the session no longer holds it".to_string(),
        };
        crate::warn!(
            "{}: reference {} not resolved: {why}; left unset",
            r.name,
            r.text
        );
    }
    out
}

/// A name the shell can assign.
fn shell_name(n: &str) -> bool {
    crate::compat::ident::is_name(n.as_bytes()) && !n.starts_with("__ae_")
}

/// The exports a rewritten command `eval`s (ended by NUL: sent once the
/// shell's output goes into the FIFOs) and the values to mask, from the
/// cache entry `entry`; a secret reference's value from the value daemon,
/// else resolved anew (the per-command helper, Gemini's after-tool
/// hook). `Err`: a value-free message.
pub(crate) fn load_entry(entry: &Path) -> Result<(Vec<u8>, Values), String> {
    load(entry, true)
}

/// [`load_entry`] for the masking daemon: a reference's value only from
/// the value daemon — `Err` when it does not hold one (the daemon then
/// answers `no`, and the per-command helper resolves it).
pub(crate) fn load_entry_held(entry: &Path) -> Result<(Vec<u8>, Values), String> {
    load(entry, false)
}

fn load(entry: &Path, again: bool) -> Result<(Vec<u8>, Values), String> {
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
        mut vars,
        mut masked,
        refs,
        derived,
        cwd,
        public,
    }) = Entry::parse(&bytes)
    else {
        return Err(format!(
            "the cache entry {} is not agentenv's",
            entry.display()
        ));
    };
    if !refs.is_empty() || !derived.is_empty() {
        if !derived.is_empty() && !again {
            return Err(
                "a variable built from a secret reference's value is made per command".into(),
            );
        }
        let mut session_again = Again {
            cwd: &cwd,
            session: None,
        };
        for (name, value) in referenced(&refs, again.then_some(&mut session_again))? {
            if refs.iter().any(|r| r.name == name && r.mask) {
                masked.push((name.clone(), value.clone()));
            }
            vars.push((name, value));
        }
        if !derived.is_empty() {
            let values = session_again
                .session()
                .map(crate::session::Session::sensitive_unmasked_too)
                .unwrap_or_default();
            for (name, mask) in &derived {
                match values.iter().find(|(k, _)| k == name) {
                    Some((_, v)) => {
                        if *mask {
                            masked.push((name.clone(), v.clone()));
                        }
                        vars.push((name.clone(), v.clone()));
                    }
                    None => crate::warn!(
                        "{name}: built from a secret reference's value, but the session no longer sets it; left unset"
                    ),
                }
            }
        }
        vars.sort();
        masked.sort();
    }
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
            refs: vec![RefSlot {
                name: "D".to_string(),
                text: "vault://secret/a#b".to_string(),
                key: [7; 32],
                mask: true,
            }],
            derived: vec![("E".to_string(), true)],
            cwd: PathBuf::from("/w/p q"),
            public: "export X=1\n".to_string(),
        };
        assert_eq!(Entry::parse(e.text().as_bytes()), Some(e));
        assert_eq!(Entry::parse(b"{}"), Some(Entry::default()));
        assert_eq!(Entry::parse(b"not json"), None);
    }
}
