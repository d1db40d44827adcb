//! `agentenv import --to`'s engine (docs/team-secrets.md): the plain
//! values of a store's env files (read with the native evaluator, only a
//! variable with a plain assignment), stored in a backend through the
//! provider write of `set --to` ([`edit::to_backend`]), then their
//! references written into the store's `agentenv.toml` and the
//! assignments removed from the env files ([`storefile::remove_assignment`]).
//! Nothing here prints; values are never in a message.

use super::edit::{self, Error, Kept, Said, Target};
use super::storefile;
use crate::core::Env;
use std::path::{Path, PathBuf};

/// The reference of `name` under `--to`.
pub(crate) fn reference(to: &str, name: &str, several: bool) -> Result<String, String> {
    let text = if let Some(rest) = to.strip_prefix("vault://") {
        if rest.contains('#') {
            if several {
                return Err("a vault:// path with #FIELD takes one NAME".into());
            }
            to.to_string()
        } else {
            format!("{}#{name}", to.trim_end_matches('/'))
        }
    } else if to.starts_with("age:") {
        format!("{to}#{name}")
    } else if to.starts_with("pass:") {
        format!("{}/{name}", to.trim_end_matches('/'))
    } else if to.starts_with("keychain:") {
        format!("{to}/{name}")
    } else if to.starts_with("op://") {
        return Err("op://… is not supported (op takes values in its arguments)".into());
    } else {
        return Err("--to must start with vault://, age:, pass: or keychain:".into());
    };
    crate::refs::Ref::parse(&text)?;
    Ok(text)
}

/// A bad `--to` (usage).
fn bad_to(why: String) -> Error {
    Error::BadRef {
        prefix: "import: --to: ".into(),
        why,
    }
}

/// Refuse a bad NAME or `--to` before anything is read.
pub(crate) fn check(names: &[String], to: &str) -> Result<(), Error> {
    for n in names {
        edit::check_name("import", n)?;
    }
    reference(to, "X", names.len() != 1)
        .map(drop)
        .map_err(bad_to)
}

/// One variable to move (its value wiped on drop).
pub(crate) struct Move {
    pub(crate) name: String,
    pub(crate) file: PathBuf,
    value: Vec<u8>,
    pub(crate) reference: String,
}

/// `NAME from FILE to REF` (no value).
impl std::fmt::Display for Move {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (name, file, to) = (&self.name, self.file.display(), &self.reference);
        write!(f, "{name} from {file} to {to}")
    }
}

impl Drop for Move {
    fn drop(&mut self) {
        self.value.fill(0);
    }
}

/// What `import` moves out of `t`'s store: every variable with a plain
/// assignment in its env files (or those of `names`), each with its
/// reference under `to`.
pub(crate) fn moves(
    t: &Target,
    names: &[String],
    to: &str,
    base: &Env,
) -> Result<Vec<Move>, Error> {
    let files: &[&str] = if t.project {
        &["pre.env", "env", "pre.local.env", "local.env"]
    } else {
        &["pre.env", "env"]
    };
    let mut clean = Env::new();
    for k in ["PATH", "HOME"] {
        if let Some(v) = crate::core::get(base, k) {
            clean.insert(k.into(), v.into());
        }
    }
    let mut moves: Vec<Move> = Vec::new();
    for f in files {
        let ft = t.file(f);
        edit::no_link_in_store(&ft)?;
        let text = edit::read_store_file(&ft.file)?;
        if text.is_empty() {
            continue;
        }
        let cs = match super::native::evaluate(&text, &clean) {
            super::native::Outcome::Applied(cs) => cs,
            _ => return Err(Error::NotPlain(ft.file)),
        };
        for (k, v) in cs.assigned() {
            let Some(name) = k.to_str() else { continue };
            if !names.is_empty() && !names.iter().any(|n| n == name) {
                continue;
            }
            // Only a variable with a plain assignment in this file.
            match storefile::remove_assignment(&text, name) {
                Ok(Some(_)) => {}
                Ok(None) => continue,
                Err(why) => {
                    return Err(Error::Remove {
                        name: name.to_string(),
                        file: ft.file,
                        why,
                    })
                }
            }
            if let Some(other) = moves.iter().find(|m| m.name == name) {
                return Err(Error::Twice {
                    name: name.to_string(),
                    first: other.file.clone(),
                    second: ft.file,
                });
            }
            use std::os::unix::ffi::OsStrExt;
            let reference = reference(to, name, names.len() != 1).map_err(bad_to)?;
            moves.push(Move {
                name: name.to_string(),
                file: ft.file.clone(),
                value: v.as_bytes().to_vec(),
                reference,
            });
        }
    }
    for n in names {
        if !moves.iter().any(|m| &m.name == n) {
            return Err(Error::NotAssigned {
                name: n.clone(),
                store: t.store.clone(),
            });
        }
    }
    Ok(moves)
}

/// The store's `agentenv.toml` and its text with the references of
/// `moves` ([`edit::with_references`]).
pub(crate) fn references(t: &Target, moves: &[Move]) -> Result<(PathBuf, String), Error> {
    let refs = moves
        .iter()
        .map(|m| (m.name.as_str(), m.reference.as_str()));
    edit::with_references(t, "import", refs)
}

/// Move them: 1. every value into the backend (a failure leaves the
/// store as it was); 2. the references (`toml`'s new `text`, from
/// [`references`]); 3. the assignments out of the env files.
/// An allowed, unchanged store stays allowed.
pub(crate) fn apply(
    t: &Target,
    moves: &[Move],
    toml: &Path,
    text: &str,
    base: &Env,
    cwd: &Path,
    said: &mut Vec<Said>,
) -> Result<(), Error> {
    // Every value one its backend would give back whole, before any write.
    for m in moves {
        edit::check_for_backend(&m.name, &m.reference, &m.value)?;
    }
    for m in moves {
        edit::to_backend(t, "import", &m.name, &m.reference, &m.value, base, cwd)?;
    }
    let kept = Kept::before(t, base);
    edit::write_declarations(toml, text, |file, kind| {
        format!(
            "import: values stored but cannot write {file}: {kind}; the env files are unchanged"
        )
    })?;
    let mut done: Vec<&PathBuf> = Vec::new();
    for m in moves {
        if done.contains(&&m.file) {
            continue;
        }
        done.push(&m.file);
        let mut text = edit::read_store_file(&m.file)?;
        for n in moves.iter().filter(|o| o.file == m.file) {
            if let Ok(Some(t2)) = storefile::remove_assignment(&text, &n.name) {
                text.fill(0);
                text = t2;
            }
        }
        let written = edit::write_store_file(&m.file, &text, |file, kind| {
            format!("import: references written but cannot write {file}: {kind}; remove the moved assignments by hand")
        });
        text.fill(0);
        written?;
    }
    kept.keep(t, base, toml, said)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_is_made_per_name_from_to() {
        let r = |to: &str, several: bool| reference(to, "GH_TOKEN", several);
        assert_eq!(
            r("vault://secret/p/", true).unwrap(),
            "vault://secret/p#GH_TOKEN"
        );
        assert_eq!(
            r("vault://secret/p#F", false).unwrap(),
            "vault://secret/p#F"
        );
        assert!(r("vault://secret/p#F", true).is_err());
        assert_eq!(r("age:s.age", true).unwrap(), "age:s.age#GH_TOKEN");
        assert_eq!(r("pass:team/", true).unwrap(), "pass:team/GH_TOKEN");
        assert_eq!(r("keychain:svc", true).unwrap(), "keychain:svc/GH_TOKEN");
        assert!(r("op://v/i", true).unwrap_err().contains("not supported"));
        assert!(r("file:x", true)
            .unwrap_err()
            .starts_with("--to must start"));
        let e = check(&["A".into(), "B".into()], "vault://s/p#F").unwrap_err();
        assert!(e.is_usage());
        assert!(e.to_string().starts_with("import: --to: "), "{e}");
    }
}
