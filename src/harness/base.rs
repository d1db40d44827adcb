//! `base:` chains (fullsend's base rules, each layer resolved first): locating
//! each base (relative to the declaring file; contained in the fullsend dir
//! after resolving symlinks; `https://…#sha256=` only from a local
//! content-addressed cache), the depth and cycle limits. Loading only: the
//! per-layer resolution and merges are in `mod.rs`, `select.rs` and
//! `compose.rs`.
//!
//! A base reference can carry credentials (`https://user:token@host/…`):
//! every message shows it through [`shown_ref`], which drops userinfo,
//! query and fragment whatever their spelling.

use super::schema::Harness;
use super::{sha256, Error};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// `MaxBaseDepth`.
pub const MAX_BASE_DEPTH: usize = 5;

/// Lexical `filepath.Clean` ([`crate::compat::go::clean`]).
pub fn clean(p: &Path) -> PathBuf {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let c = crate::compat::go::clean(p.as_os_str().as_bytes());
    PathBuf::from(std::ffi::OsString::from_vec(c))
}

/// Make `p` absolute (against the current directory) and clean it.
pub fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        clean(p)
    } else {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        clean(&cwd.join(p))
    }
}

/// `p` with every symlink resolved: the whole path when it exists, else
/// its resolved parent joined with the last name, else `p` as it is.
pub fn resolve_links(p: &Path) -> PathBuf {
    if let Ok(r) = std::fs::canonicalize(p) {
        return r;
    }
    match (p.parent(), p.file_name()) {
        (Some(dir), Some(name)) => match std::fs::canonicalize(dir) {
            Ok(d) => d.join(name),
            Err(_) => p.to_path_buf(),
        },
        _ => p.to_path_buf(),
    }
}

/// Where bases come from.
pub struct BaseSource<'a> {
    /// Containment root (the fullsend dir).
    pub root: &'a Path,
    /// `--base-cache DIR`.
    pub cache: Option<&'a Path>,
}

/// The URL scheme of `s` (`[A-Za-z][A-Za-z0-9+.-]*:`), lowercased, and the
/// text after the colon.
fn scheme(s: &str) -> Option<(String, &str)> {
    let colon = s.find(':')?;
    let name = &s[..colon];
    let mut bytes = name.bytes();
    let first = bytes.next()?;
    if !first.is_ascii_alphabetic()
        || !bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-'))
    {
        return None;
    }
    Some((name.to_ascii_lowercase(), &s[colon + 1..]))
}

/// A reference as messages show it. A URL (any scheme followed by `/`,
/// any case, any number of slashes) loses everything up to its last `@`
/// (userinfo, even with `/`, `#` or `?` in the password), then its query
/// and fragment; other references are shown as written.
pub fn shown_ref(reference: &str) -> String {
    match scheme(reference) {
        Some((name, rest))
            if rest.starts_with('/') || matches!(name.as_str(), "http" | "https") =>
        {
            let rest = rest.trim_start_matches('/');
            let rest = match rest.rfind('@') {
                Some(i) => &rest[i + 1..],
                None => rest,
            };
            let end = rest.find(['?', '#']).unwrap_or(rest.len());
            format!("{name}://{}", &rest[..end])
        }
        _ => reference.to_string(),
    }
}

/// How a reference is to be loaded.
enum Kind {
    Local,
    Https,
}

fn classify(reference: &str) -> Result<Kind, Error> {
    let shown = shown_ref(reference);
    match scheme(reference) {
        Some((name, rest))
            if rest.starts_with('/') || matches!(name.as_str(), "http" | "https") =>
        {
            match name.as_str() {
                "http" => Err(Error::load(
                    "base URL scheme must be https, got http://".to_string(),
                )),
                "https" if rest.starts_with("//") && !rest.starts_with("///") => Ok(Kind::Https),
                "https" => Err(Error::load(format!(
                    "base URL {shown} is malformed (expected https://host/path)"
                ))),
                _ => Err(Error::load(format!(
                    "base {shown}: only https:// URLs and local paths can be bases"
                ))),
            }
        }
        _ => Ok(Kind::Local),
    }
}

fn read_file(path: &Path) -> Result<String, Error> {
    let bytes = crate::fsutil::read_input(path, super::inputs::MAX_INPUT_FILE).map_err(|e| {
        Error::load(format!(
            "reading harness file: {}: {}",
            path.display(),
            crate::fsutil::io_kind(&e)
        ))
    })?;
    String::from_utf8(bytes).map_err(|e| {
        Error::load(format!(
            "reading harness file: {}: not valid UTF-8 (byte {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Load one harness file.
pub fn load_file(path: &Path) -> Result<Harness, Error> {
    let text = read_file(path)?;
    super::schema::parse_harness(&text, path)
}

/// One file of a chain.
pub struct Link {
    pub harness: Harness,
    /// How messages and `explain` name the file (a path, or a scrubbed URL).
    pub label: String,
    /// Where a relative `base:` written in it resolves (the declaring
    /// file's directory; for a URL base, the nearest local file's
    /// directory — the reference's quirk).
    dir: PathBuf,
}

fn load_url_base(reference: &str, src: &BaseSource<'_>) -> Result<Harness, Error> {
    let shown = shown_ref(reference);
    let frag = reference.rsplit_once('#').map(|(_, f)| f).unwrap_or("");
    let hex = frag.strip_prefix("sha256=").unwrap_or("");
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::load(format!(
            "base URL {shown} requires a #sha256=<64 hex digits> fragment"
        )));
    }
    let hex = hex.to_ascii_lowercase();
    let Some(cache) = src.cache else {
        return Err(Error::load(format!(
            "base URL {shown}: URL base requires org-level allowed_remote_resources; agentenv resolves URL bases only from a local cache instead: pass --base-cache DIR holding a file named {hex} (no network access)"
        )));
    };
    let file = cache.join(&hex);
    let bytes = crate::fsutil::read_input(&file, super::inputs::MAX_INPUT_FILE).map_err(|e| {
        Error::load(format!(
            "base URL {shown}: not in base cache {} (expected file {hex}): {}",
            cache.display(),
            crate::fsutil::io_kind(&e)
        ))
    })?;
    if sha256::hex_digest(&bytes) != hex {
        return Err(Error::load(format!(
            "base URL {shown}: integrity check failed: {} does not have sha256 {hex}",
            file.display()
        )));
    }
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::load(format!(
            "base URL {shown}: cached file {} is not valid UTF-8",
            file.display()
        ))
    })?;
    super::schema::parse_harness(&text, Path::new(&shown))
}

/// Load `child_path` and every base of its chain: the child first, the
/// deepest ancestor last. Nothing is merged or resolved here. Errors are
/// wrapped `loading base chain: …` (the first file's own load is not).
pub fn load_chain(child_path: &Path, src: &BaseSource<'_>) -> Result<Vec<Link>, Error> {
    let child_abs = absolute(child_path);
    let child = load_file(child_path)?;
    let mut visited: HashSet<String> = HashSet::new();
    visited.insert(resolve_links(&child_abs).to_string_lossy().into_owned());
    let mut links = vec![Link {
        harness: child,
        label: child_path.display().to_string(),
        dir: child_abs.parent().unwrap_or(Path::new("/")).to_path_buf(),
    }];
    let wrap = |e: Error| e.wrap("loading base chain");
    let root = clean(&absolute(src.root));
    let resolved_root = std::fs::canonicalize(&root).unwrap_or_else(|_| root.clone());
    loop {
        let last = links.last().expect("non-empty");
        let Some((reference, _pos)) = last.harness.base.clone() else {
            break;
        };
        if links.len() > MAX_BASE_DEPTH {
            return Err(wrap(Error::load(format!(
                "exceeded maximum base depth of {MAX_BASE_DEPTH}"
            ))));
        }
        let shown = shown_ref(&reference);
        match classify(&reference).map_err(wrap)? {
            Kind::Https => {
                if !visited.insert(shown.clone()) {
                    return Err(wrap(Error::load(format!(
                        "circular base reference: {shown}"
                    ))));
                }
                let h = load_url_base(&reference, src).map_err(wrap)?;
                let dir = last.dir.clone();
                links.push(Link {
                    harness: h,
                    label: shown,
                    dir,
                });
                continue;
            }
            Kind::Local => {}
        }
        let declared = Path::new(&reference);
        let abs = if declared.is_absolute() {
            clean(declared)
        } else {
            clean(&last.dir.join(declared))
        };
        // Containment is decided on the real path: a base inside the
        // fullsend dir by name but a symlink to a file outside is refused.
        let lexically_inside = abs.starts_with(&root);
        let resolved = resolve_links(&abs);
        if !resolved.starts_with(&resolved_root) {
            let how = if lexically_inside { " via symlink" } else { "" };
            return Err(wrap(Error::load(format!(
                "base path {shown:?} escapes workspace root{how}"
            ))));
        }
        let key = resolved.to_string_lossy().into_owned();
        if !visited.insert(key.clone()) {
            return Err(wrap(Error::load(format!("circular base reference: {key}"))));
        }
        let h = load_file(&resolved).map_err(|e| {
            wrap(Error::load(format!(
                "loading base harness {}: {e}",
                resolved.display()
            )))
        })?;
        links.push(Link {
            harness: h,
            label: resolved.display().to_string(),
            dir: abs.parent().unwrap_or(Path::new("/")).to_path_buf(),
        });
    }
    Ok(links)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_paths() {
        assert_eq!(clean(Path::new("/a/b/../c/./d")), PathBuf::from("/a/c/d"));
        assert_eq!(clean(Path::new("/../x")), PathBuf::from("/x"));
    }

    #[test]
    fn shown_refs_drop_userinfo_whatever_the_spelling() {
        for (r, want) in [
            (
                "https://user:tok@example.com/h.yaml?sig=abc#sha256=00",
                "https://example.com/h.yaml",
            ),
            (
                "https://u:pa/ss@example.com/h.yaml",
                "https://example.com/h.yaml",
            ),
            ("HTTPS://u:secret@example.com/h", "https://example.com/h"),
            ("https:/u:secret@example.com/h", "https://example.com/h"),
            ("https:u:secret@example.com/h", "https://example.com/h"),
            (
                "https://u:p#w@example.com/h#sha256=1",
                "https://example.com/h",
            ),
            ("https://u:p?w@example.com/h", "https://example.com/h"),
            ("ftp://u:secret@h/x", "ftp://h/x"),
            ("common.yaml", "common.yaml"),
        ] {
            let got = shown_ref(r);
            assert_eq!(got, want, "{r}");
        }
        for bad in [
            "https:/u:secret@h/x",
            "https:u:secret@h/x",
            "https:///u:secret@h",
        ] {
            assert!(
                matches!(classify(bad), Err(e) if !e.to_string().contains("secret")),
                "{bad}"
            );
        }
        assert!(matches!(classify("HTTPS://h/x"), Ok(Kind::Https)));
        assert!(
            matches!(classify("Http://h/x"), Err(e) if e.to_string().contains("must be https"))
        );
    }
}
