//! `agentenv import --to SCHEME:… [--user | --project DIR] [NAME…]`
//! (docs/team-secrets.md): plain values of a store's env files moved
//! into a backend and replaced by references in the store's
//! `agentenv.toml`. Values are never printed: names and files only.

use super::set::{keep_trust, no_link_in_store, read_store_file, target_for, Target};
use super::{Exit, Failure};
use crate::refs::Ref;
use crate::session::storefile;
use std::path::PathBuf;

const AFTER_HELP: &str = "\
--to names where the values go; each variable's reference is made from it:
  vault://MOUNT/PATH   -> vault://MOUNT/PATH#NAME (one field per variable)
  vault://MOUNT/PATH#F -> as given (one NAME only)
  age:FILE             -> age:FILE#NAME (FILE in the store, re-encrypted to
                          FILE.recipients)
  pass:PATH            -> pass:PATH/NAME
  keychain:SERVICE     -> keychain:SERVICE/NAME
Without NAME, every variable the store's env files assign. Each value is
stored in the backend first, then NAME = { from = \"REF\" } is written into
agentenv.toml, then NAME's assignment is removed from its env file (0600,
temp file + rename, every other line kept byte for byte). A project store
that was allowed and otherwise unchanged stays allowed.

Examples:
  # Move GH_TOKEN from .agents/local.env into OpenBao (field GH_TOKEN)
  agentenv import --to vault://secret/myproj GH_TOKEN
  # Every value of the user store into an age file for the team
  agentenv import --to age:secrets.age --user";

#[derive(Debug, clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct ImportArgs {
    /// Where the values go: vault://MOUNT/PATH, age:FILE, pass:PATH,
    /// keychain:SERVICE.
    #[arg(long = "to", value_name = "SCHEME:…")]
    pub to: String,
    /// Import from the user store ($AGENTS_HOME, else ~/.agents).
    #[arg(long = "user", conflicts_with = "project")]
    pub user: bool,
    /// Import from DIR/.agents (default: the nearest project store upwards).
    #[arg(long = "project", value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Say what would move; write nothing, contact no backend.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
    /// The variables to move (default: every one the env files assign).
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,
}

/// The reference of `name` under `--to`.
fn reference(to: &str, name: &str, several: bool) -> Result<String, String> {
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
    Ref::parse(&text)?;
    Ok(text)
}

/// One variable to move.
struct Move {
    name: String,
    file: PathBuf,
    value: Vec<u8>,
    reference: String,
}

impl Drop for Move {
    fn drop(&mut self) {
        self.value.fill(0);
    }
}

pub fn run(a: ImportArgs) -> Exit {
    for n in &a.names {
        if !crate::compat::ident::is_name(n.as_bytes()) {
            return Err(Failure::usage(format!(
                "import: {} is not a variable name",
                crate::render::py_repr(n)
            )));
        }
    }
    // Refuse a bad --to before reading anything.
    reference(&a.to, "X", a.names.len() != 1)
        .map_err(|why| Failure::usage(format!("import: --to: {why}")))?;
    let t = target_for(a.user, a.project.as_deref(), None)?;
    let files: &[&str] = if t.project {
        &["pre.env", "env", "pre.local.env", "local.env"]
    } else {
        &["pre.env", "env"]
    };
    let base = crate::core::process_env();
    let mut clean = crate::core::Env::new();
    for k in ["PATH", "HOME"] {
        if let Some(v) = crate::core::get(&base, k) {
            clean.insert(k.into(), v.into());
        }
    }
    let mut moves: Vec<Move> = Vec::new();
    for f in files {
        let ft = Target {
            file: t.store.join(f),
            store: t.store.clone(),
            project: t.project,
        };
        no_link_in_store(&ft)?;
        let text = read_store_file(&ft.file)?;
        if text.is_empty() {
            continue;
        }
        let cs = match crate::session::native::evaluate(&text, &clean) {
            crate::session::native::Outcome::Applied(cs) => cs,
            _ => {
                return Err(Failure::runtime(format!(
                    "import: {} is not plain assignments agentenv reads without bash; move its values by hand (agentenv set NAME --to REF)",
                    ft.file.display()
                )))
            }
        };
        for (k, v) in cs.assigned() {
            let Some(name) = k.to_str() else { continue };
            if !a.names.is_empty() && !a.names.iter().any(|n| n == name) {
                continue;
            }
            // Only a variable with a plain assignment in this file.
            match storefile::remove_assignment(&text, name) {
                Ok(Some(_)) => {}
                Ok(None) => continue,
                Err(e) => {
                    return Err(Failure::runtime(format!(
                        "import: cannot remove {name} from {}: {e}; nothing written",
                        ft.file.display()
                    )))
                }
            }
            if let Some(other) = moves.iter().find(|m| m.name == name) {
                return Err(Failure::runtime(format!(
                    "import: {name} is assigned in both {} and {}; keep one, then import; nothing written",
                    other.file.display(),
                    ft.file.display()
                )));
            }
            use std::os::unix::ffi::OsStrExt;
            let several = a.names.len() != 1;
            let reference = reference(&a.to, name, several)
                .map_err(|why| Failure::usage(format!("import: --to: {why}")))?;
            moves.push(Move {
                name: name.to_string(),
                file: ft.file.clone(),
                value: v.as_bytes().to_vec(),
                reference,
            });
        }
    }
    for n in &a.names {
        if !moves.iter().any(|m| &m.name == n) {
            return Err(Failure::runtime(format!(
                "import: {n} has no plain assignment in {}'s env files; nothing written",
                t.store.display()
            )));
        }
    }
    if moves.is_empty() {
        super::say(format_args!(
            "import: nothing to move in {}",
            t.store.display()
        ));
        return Ok(0);
    }
    let toml = t.store.join(crate::session::DECLARATIONS);
    let before = String::from_utf8(read_store_file(&toml)?).map_err(|_| {
        Failure::runtime(format!(
            "import: {} is not UTF-8; nothing written",
            toml.display()
        ))
    })?;
    let mut after = before;
    for m in &moves {
        after = crate::session::with_reference(&after, &m.name, &m.reference).map_err(|why| {
            Failure::runtime(format!(
                "import: cannot add {} to {}: {why}; nothing written",
                m.name,
                toml.display()
            ))
        })?;
    }
    if a.dry_run {
        for m in &moves {
            super::say(format_args!(
                "would move {} from {} to {}",
                m.name,
                m.file.display(),
                m.reference
            ));
        }
        return Ok(0);
    }
    let cwd = super::current_dir()?;
    let ctx = crate::refs::Ctx {
        env: &base,
        store: &t.store,
        cwd: &cwd,
        timeout: crate::refs::seconds(&base, "AGENTENV_REF_TIMEOUT", crate::refs::DEFAULT_TIMEOUT),
    };
    // 0. Every value one the backend would give back whole (before any write).
    for m in &moves {
        let r = Ref::parse(&m.reference).map_err(|why| Failure::usage(format!("import: {why}")))?;
        crate::refs::provider(&r).check(&m.value).map_err(|why| {
            Failure::runtime(format!(
                "import: {}: {}: {why}; nothing written",
                m.name, m.reference
            ))
        })?;
    }
    // 1. Every value into the backend (a failure leaves the store as it was).
    for m in &moves {
        let r = Ref::parse(&m.reference).map_err(|why| Failure::usage(format!("import: {why}")))?;
        crate::refs::provider(&r)
            .write(&r, &m.value, &ctx)
            .map_err(|why| {
                Failure::runtime(format!(
                    "import: {}: {}: {why}; the env files are unchanged",
                    m.name, m.reference
                ))
            })?;
    }
    let new_store = false;
    let trust = t
        .project
        .then(|| crate::session::before_edit(&t.store, &base))
        .flatten();
    // 2. The references; 3. the assignments out of the env files.
    super::set::write_declarations(&toml, &after, |file, kind| {
        format!(
            "import: values stored but cannot write {file}: {kind}; the env files are unchanged"
        )
    })?;
    let mut done: Vec<&PathBuf> = Vec::new();
    for m in &moves {
        if done.contains(&&m.file) {
            continue;
        }
        done.push(&m.file);
        let mut text = read_store_file(&m.file)?;
        for n in moves.iter().filter(|o| o.file == m.file) {
            if let Ok(Some(t2)) = storefile::remove_assignment(&text, &n.name) {
                text.fill(0);
                text = t2;
            }
        }
        let written = super::write_file(
            &m.file,
            &text,
            crate::fsutil::Mode::Exactly(0o600),
            true,
            |file, kind| {
                format!("import: references written but cannot write {file}: {kind}; remove the moved assignments by hand")
            },
        );
        text.fill(0);
        written?;
    }
    keep_trust(&t, trust, new_store, &base, &toml)?;
    for m in &moves {
        super::say(format_args!(
            "moved {} from {} to {}, referenced in {}",
            m.name,
            m.file.display(),
            m.reference,
            toml.display()
        ));
    }
    Ok(0)
}
