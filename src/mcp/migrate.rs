//! `mcp scan` and `mcp migrate` without the command line: the files read
//! ([`read_all`]), the findings ([`findings_of`]), what migrate moves and
//! leaves ([`decide`]), the new texts checked before anything is written
//! ([`rewrites`]), the safety check, the backups and the masked diff. The
//! command line (`cli/mcp.rs`) holds the arguments, the store writes and
//! the printing.

use super::edit::Change;
use super::find::{Finder, Why};
use super::{Field, Place, Server};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One configuration file as read.
pub struct Read {
    pub place: Place,
    pub text: String,
    pub servers: Vec<Server>,
}

/// Largest configuration file read (`~/.claude.json` grows with history).
pub const MAX_FILE: u64 = 64 << 20;

/// Read every place that exists; a file that cannot be read or parsed is
/// warned about (file, line; never text) and counted.
pub fn read_all(places: Vec<Place>, unreadable: &mut u64) -> Vec<Read> {
    let mut out = Vec::new();
    for place in places {
        let bytes = match crate::fsutil::read_regular(&place.path, MAX_FILE) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                crate::debug!("mcp: {} does not exist", place.path.display());
                continue;
            }
            Err(e) => {
                crate::warn!(
                    "mcp: cannot read {}: {}; skipped",
                    place.path.display(),
                    crate::fsutil::io_kind(&e)
                );
                *unreadable += 1;
                continue;
            }
        };
        let Ok(text) = String::from_utf8(bytes) else {
            crate::warn!("mcp: {} is not UTF-8; skipped", place.path.display());
            *unreadable += 1;
            continue;
        };
        match crate::mcp::read(&place, &text) {
            Ok(servers) => out.push(Read {
                place,
                text,
                servers,
            }),
            Err(e) => {
                crate::warn!(
                    "mcp: cannot parse {}: {}; skipped (fix the file, then run again)",
                    place.path.display(),
                    e.0
                );
                *unreadable += 1;
            }
        }
    }
    out
}

/// One finding, as printed.
pub struct Finding {
    pub file: PathBuf,
    pub client: &'static str,
    pub server: String,
    pub project: Option<String>,
    pub label: String,
    pub field: Field,
    pub why: Why,
}

impl Finding {
    pub fn line(&self) -> String {
        format!(
            "{}: {}: {} ({})",
            self.file.display(),
            self.label,
            self.field,
            self.why
        )
    }

    pub fn json(&self) -> serde_json::Value {
        let (field, key) = match &self.field {
            Field::Env(k) => ("env", serde_json::json!(k)),
            Field::Header(k) => ("header", serde_json::json!(k)),
            Field::Arg(i) => ("args", serde_json::json!(i)),
            Field::Url(k) => ("url", serde_json::json!(k)),
        };
        let mut v = serde_json::json!({
            "file": self.file.to_string_lossy(),
            "client": self.client,
            "server": self.server,
            "field": field,
            "key": key,
            "why": self.why.to_string(),
            "kind": self.why.kind(),
        });
        if let Some(p) = &self.project {
            v["project"] = serde_json::json!(p);
        }
        if let Why::Stored { name, form } = &self.why {
            v["variable"] = serde_json::json!(name);
            v["form"] = serde_json::json!(form);
        }
        v
    }
}

pub fn findings_of(reads: &[Read], finder: &Finder) -> Vec<(usize, usize, usize, Finding)> {
    let mut out = Vec::new();
    for (ri, r) in reads.iter().enumerate() {
        for (si, s) in r.servers.iter().enumerate() {
            for (li, why) in crate::mcp::find::server_findings(finder, s) {
                out.push((
                    ri,
                    si,
                    li,
                    Finding {
                        file: r.place.path.clone(),
                        client: r.place.client.as_str(),
                        server: s.name.clone(),
                        project: s.project.clone(),
                        label: s.label(),
                        field: s.literals[li].field.clone(),
                        why,
                    },
                ));
            }
        }
    }
    out
}

/// What migrate decided for one file.
#[derive(Default)]
pub struct Plan {
    pub changes: Vec<Change>,
    /// (label, env key) moved.
    pub moved: Vec<(String, String)>,
    /// Lines to print about what is left and why (no value).
    pub left: Vec<String>,
}

/// What migrate decided: per file (in the order of `reads`) a [`Plan`];
/// the values to put into the store by name; the masker of the diff
/// (every literal found, every store value).
pub struct Decided {
    pub plans: Vec<Plan>,
    pub pending: BTreeMap<String, String>,
    pub diff_masker: crate::mask::Masker,
}

/// Decide, file by file: which env keys move, what is left. `held`: what
/// the stores hold now, by name (for conflicts).
pub fn decide(
    reads: &[Read],
    found: &[(usize, usize, usize, Finding)],
    held: &BTreeMap<String, Vec<u8>>,
) -> Decided {
    let mut pending: BTreeMap<String, String> = Default::default();
    let mut plans: Vec<Plan> = (0..reads.len()).map(|_| Plan::default()).collect();
    let mut hidden: Vec<(String, Vec<u8>)> = Vec::new();
    let mut i = 0;
    while i < found.len() {
        let (ri, si, _, _) = found[i];
        let mut j = i;
        while j < found.len() && (found[j].0, found[j].1) == (ri, si) {
            j += 1;
        }
        let server = &reads[ri].servers[si];
        let file = reads[ri].place.path.display().to_string();
        let mut names = Vec::new();
        for (_, _, li, f) in &found[i..j] {
            let lit = &server.literals[*li];
            hidden.push((mask_name(&f.field), lit.value.as_bytes().to_vec()));
            let Field::Env(key) = &f.field else {
                plans[ri].left.push(format!(
                    "left {file}: {}: {} ({}): {}",
                    server.label(),
                    f.field,
                    f.why,
                    by_hand(&f.field, &f.why)
                ));
                continue;
            };
            let why_not = if server.command.is_none() {
                Some("a remote server: its env does not reach it; set the value by hand")
            } else if !crate::compat::ident::is_name(key.as_bytes())
                || crate::session::bash_special(key.as_bytes())
            {
                Some("not a name a store can carry; move it by hand")
            } else if lit
                .value
                .bytes()
                .any(|b| (b < 0x20 && b != b'\t') || b == 0x7f)
            {
                Some("the value holds a control character; move it by hand")
            } else if held.get(key).is_some_and(|v| v != lit.value.as_bytes())
                || pending.get(key).is_some_and(|v| v != &lit.value)
            {
                Some(
                    "the store already sets this name to another value; rename one of them by hand",
                )
            } else if literal_is_partial(&lit.value) {
                Some("the value mixes a literal with a reference; move it by hand")
            } else {
                None
            };
            match why_not {
                Some(w) => {
                    plans[ri].left.push(format!(
                        "left {file}: {}: {} ({}): {w}",
                        server.label(),
                        f.field,
                        f.why
                    ));
                }
                None => names.push((key.clone(), lit.value.clone())),
            }
        }
        if !names.is_empty() {
            for (k, v) in &names {
                pending.insert(k.clone(), v.clone());
                plans[ri].moved.push((server.label(), k.clone()));
            }
            plans[ri].changes.push(Change {
                path: server.path.clone(),
                names: names.into_iter().map(|(k, _)| k).collect(),
            });
        }
        i = j;
    }
    for (k, v) in &pending {
        hidden.push((k.clone(), v.as_bytes().to_vec()));
    }
    hidden.extend(held.iter().map(|(k, v)| (k.clone(), v.clone())));
    let diff_masker = crate::mask::Masker::new(hidden);
    Decided {
        plans,
        pending,
        diff_masker,
    }
}

/// Every new text first: nothing is written unless every file can be.
/// Each result must read back, with the moved keys gone.
pub fn rewrites(reads: &[Read], plans: &[Plan]) -> Result<Vec<(usize, String)>, String> {
    let mut outputs: Vec<(usize, String)> = Vec::new();
    for (ri, plan) in plans.iter().enumerate() {
        if plan.changes.is_empty() {
            continue;
        }
        let r = &reads[ri];
        let new = crate::mcp::edit::rewrite(&r.place, &r.text, &plan.changes).map_err(|e| {
            format!(
                "mcp migrate: cannot edit {}: {e}; nothing changed",
                r.place.path.display()
            )
        })?;
        // The result must read back, with the moved keys gone.
        let again = crate::mcp::read(&r.place, &new).map_err(|e| {
            format!(
                "mcp migrate: the edit of {} would not parse ({}); nothing changed",
                r.place.path.display(),
                e.0
            )
        })?;
        for c in &plan.changes {
            let s = again.iter().find(|s| s.path == c.path);
            let still = s.is_some_and(|s| {
                s.literals
                    .iter()
                    .any(|l| matches!(&l.field, Field::Env(k) if c.names.contains(k)))
            });
            if still {
                return Err(format!(
                    "mcp migrate: the edit of {} left a moved key in place; nothing changed",
                    r.place.path.display()
                ));
            }
        }
        outputs.push((ri, new));
    }
    Ok(outputs)
}

/// A value that is part literal, part reference (`Bearer ${X}` style in
/// env): moving it whole would move the reference too.
fn literal_is_partial(v: &str) -> bool {
    crate::mcp::find::literal_part(v) != v
}

/// A name for a literal in the masked diff: the env key, or the field.
fn mask_name(f: &Field) -> String {
    match f {
        Field::Env(k) => k.clone(),
        other => other.to_string().replace(' ', "_"),
    }
}

/// What to change by hand for a literal the environment cannot carry.
fn by_hand(f: &Field, why: &Why) -> &'static str {
    if matches!(why, Why::UrlPassword | Why::UrlQuery(_)) {
        return by_hand(&Field::Url(String::new()), &Why::SecretName);
    }
    match f {
        Field::Header(_) => {
            "move the value into a store (agentenv set NAME) and use the client's reference syntax in the header (${NAME}, {env:NAME}), or its headers helper"
        }
        Field::Arg(_) => {
            "move the value into a store (agentenv set NAME) and let the server read it from its environment (most servers take an env variable instead of the flag)"
        }
        Field::Url(_) => {
            "move the credential out of the URL into a header or the environment, its value into a store (agentenv set NAME)"
        }
        Field::Env(_) => "move it by hand",
    }
}

/// A configuration `migrate` may replace: a regular file we own, not a
/// symlink (a project's link could point anywhere).
pub fn refuse_unsafe(p: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let md = match std::fs::symlink_metadata(p) {
        Ok(md) => md,
        Err(e) => {
            let kind = crate::fsutil::io_kind(&e);
            let p = p.display();
            return Err(format!(
                "mcp migrate: cannot read {p}: {kind}; nothing changed"
            ));
        }
    };
    if md.file_type().is_symlink() {
        return Err(format!(
            "mcp migrate: {} is a symbolic link; edit the file it points to by its own path (migrate --project with that directory); nothing changed",
            p.display()
        ));
    }
    if !md.is_file() {
        return Err(format!(
            "mcp migrate: {} is not a regular file; nothing changed",
            p.display()
        ));
    }
    if md.uid() != rustix::process::geteuid().as_raw() {
        return Err(format!(
            "mcp migrate: {} belongs to another user; nothing changed",
            p.display()
        ));
    }
    Ok(())
}

/// `<user store>/.backup/mcp/<seconds>-<pid>`, 0700 (the user store:
/// `agents_dir` (`--agents-dir`, made absolute), else `$AGENTS_HOME`,
/// else `~/.agents`).
pub fn backup_dir(agents_dir: Option<PathBuf>) -> Result<PathBuf, String> {
    let env = crate::core::process_env();
    let store = match agents_dir {
        Some(d) => d,
        None => crate::session::user_store(&env)
            .map_err(|e| format!("mcp migrate: cannot find the user store for the backup: {e}"))?,
    };
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let dir = store
        .join(".backup/mcp")
        .join(format!("{secs}-{}", std::process::id()));
    let mk = |d: &Path| -> Result<(), String> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(d)
            .map_err(|e| {
                format!(
                    "mcp migrate: cannot create the backup directory {}: {}; nothing changed",
                    d.display(),
                    crate::fsutil::io_kind(&e)
                )
            })
    };
    mk(&dir)?;
    Ok(dir)
}

/// Write the old text as a 0600 file in `dir`; its path.
pub fn backup(dir: &Path, original: &Path, text: &str) -> Result<PathBuf, String> {
    let name: String = original
        .to_string_lossy()
        .trim_start_matches('/')
        .replace('/', "%");
    let p = dir.join(name);
    let mode = crate::fsutil::Mode::Exactly(0o600);
    if let Err(e) = crate::fsutil::write_atomic(&p, text.as_bytes(), mode, false) {
        let kind = crate::fsutil::io_kind(&e);
        let p = p.display();
        return Err(format!(
            "mcp migrate: cannot write the backup {p}: {kind}; the file is unchanged"
        ));
    }
    Ok(p)
}

/// A unified diff of one file's changes, one hunk per changed server,
/// every value masked.
pub fn diff(r: &Read, changes: &[Change], _new: &str, masker: &crate::mask::Masker) -> String {
    let old: Vec<&str> = r.text.split_inclusive('\n').collect();
    // (first changed line, lines removed, lines added)
    let mut hunks: Vec<(usize, Vec<String>, Vec<String>)> = Vec::new();
    for c in changes {
        let Ok(one) = crate::mcp::edit::rewrite(&r.place, &r.text, std::slice::from_ref(c)) else {
            continue;
        };
        let new: Vec<&str> = one.split_inclusive('\n').collect();
        let pre = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
        let post = old[pre..]
            .iter()
            .rev()
            .zip(new[pre..].iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        let minus: Vec<String> = old[pre..old.len() - post]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let plus: Vec<String> = new[pre..new.len() - post]
            .iter()
            .map(|s| s.to_string())
            .collect();
        hunks.push((pre, minus, plus));
    }
    hunks.sort_by_key(|h| h.0);
    let path = r.place.path.display();
    let mut s = format!("--- {path}\n+++ {path} (migrated)\n");
    let mut delta: isize = 0;
    const CTX: usize = 3;
    for (pre, minus, plus) in &hunks {
        let from = pre.saturating_sub(CTX);
        let to = (pre + minus.len() + CTX).min(old.len());
        let old_len = to - from;
        let new_len = old_len - minus.len() + plus.len();
        let new_from = (from as isize + delta) as usize;
        s.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            from + 1,
            old_len,
            new_from + 1,
            new_len
        ));
        let line = |s: &mut String, mark: char, l: &str| {
            s.push(mark);
            s.push_str(l);
            if !l.ends_with('\n') {
                s.push_str("\n\\ No newline at end of file\n");
            }
        };
        for l in &old[from..*pre] {
            line(&mut s, ' ', l);
        }
        for (mark, l) in middle(minus, plus) {
            line(&mut s, mark, l);
        }
        for l in &old[pre + minus.len()..to] {
            line(&mut s, ' ', l);
        }
        delta += plus.len() as isize - minus.len() as isize;
    }
    String::from_utf8_lossy(&masker.mask(s.as_bytes())).into_owned()
}

/// The lines of a hunk's changed middle in diff order: a longest common
/// subsequence kept as context, the rest removed or added (the middle is
/// one server: small).
fn middle<'a>(minus: &'a [String], plus: &'a [String]) -> Vec<(char, &'a str)> {
    let (n, m) = (minus.len(), plus.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if minus[i] == plus[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < n || j < m {
        if i < n && j < m && minus[i] == plus[j] {
            out.push((' ', minus[i].as_str()));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push(('-', minus[i].as_str()));
            i += 1;
        } else {
            out.push(('+', plus[j].as_str()));
            j += 1;
        }
    }
    out
}
