//! The computed layers of contract B (dotagents' `get_environment`): roots,
//! interpreter pin, overlay roots, bin paths and lib paths. (Identity and
//! proxy are [`super::identity::stamp`] and [`super::identity::proxy`].)
//!
//! Each step is a pure function from the environment accumulated so far
//! (and what the scope resolved) to the [`ChangeSet`] its layer applies;
//! an empty change set when nothing changes. File-system questions (is a
//! lib a directory, are two paths the same file) are answered by the
//! caller and passed in, so every rule here is tested without a tree.
//!
//! Not for: running env files ([`super::script`], [`super::shell`],
//! [`super::native`]).

use super::paths;
use crate::core::{ChangeSet, Env};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

fn get<'a>(env: &'a Env, k: &str) -> Option<&'a OsStr> {
    crate::core::get(env, k)
}

fn b(p: &Path) -> &[u8] {
    p.as_os_str().as_bytes()
}

/// The non-empty entries of a `:` list.
fn entries(v: Option<&OsStr>) -> Vec<Vec<u8>> {
    v.map(|v| {
        v.as_bytes()
            .split(|c| *c == b':')
            .filter(|e| !e.is_empty())
            .map(|e| e.to_vec())
            .collect()
    })
    .unwrap_or_default()
}

/// The project root the roots layer pins or fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectRoot<'a> {
    /// A project is walked: `AGENTS_PROJECT_ROOT` is pinned to its root.
    Walked(&'a Path),
    /// None is walked (`-g`): an unset or empty `AGENTS_PROJECT_ROOT` gets
    /// the reference's default root (its variables, else the cwd).
    Fallback(&'a Path),
}

/// Roots: `AGENTS_HOME` is the user store and `AGENTS_PROJECT_ROOT` the
/// project root ([`ProjectRoot`]) — unless the inherited value already
/// names the same directory (`same`; the session compares realpaths).
pub fn roots(
    current: &Env,
    user_root: &Path,
    project: ProjectRoot<'_>,
    same: impl Fn(&Path, &Path) -> bool,
) -> ChangeSet {
    let mut cs = ChangeSet::new();
    let mut pin = |key: &str, value: &Path| {
        let kept = get(current, key)
            .filter(|c| !c.is_empty())
            .is_some_and(|c| same(Path::new(c), value));
        if !kept {
            cs.set(key, value.as_os_str());
        }
    };
    pin("AGENTS_HOME", user_root);
    match project {
        ProjectRoot::Walked(root) => pin("AGENTS_PROJECT_ROOT", root),
        ProjectRoot::Fallback(root) => {
            if get(current, "AGENTS_PROJECT_ROOT").is_none_or(|v| v.is_empty()) {
                cs.set("AGENTS_PROJECT_ROOT", root.as_os_str());
            }
        }
    }
    cs
}

/// `…/.pyvenv/<any>/<any>/<file>`: a store venv's interpreter.
pub fn is_pyvenv_python(p: &OsStr) -> bool {
    let norm = paths::pathlib(p);
    let mut anc = norm.ancestors().skip(1);
    let _ = anc.next();
    let _ = anc.next();
    match anc.next() {
        Some(a) => a.file_name().is_some_and(|n| n == ".pyvenv"),
        None => false,
    }
}

/// Interpreter pin (no store venvs): `AGENTS_PYTHON` becomes the default
/// interpreter when it is unset, empty or a store venv's; `AGENTS_PYVENV`
/// goes; `AGENTS_PYLIB` is never touched.
pub fn interpreter(current: &Env, interpreter: Option<&Path>) -> ChangeSet {
    let mut cs = ChangeSet::new();
    if let Some(py) = interpreter {
        let py = py.as_os_str();
        let pinned = get(current, "AGENTS_PYTHON");
        let replace = match pinned {
            None => true,
            Some(p) if p.is_empty() => true,
            Some(p) => p == py || is_pyvenv_python(p),
        };
        if !py.is_empty() && pinned != Some(py) && replace {
            cs.set("AGENTS_PYTHON", py);
        }
    }
    if current.contains_key(OsStr::new("AGENTS_PYVENV")) {
        cs.remove("AGENTS_PYVENV");
    }
    cs
}

/// One overlay's root: `<NAME>_OVERLAY_ROOT` is the overlay's directory,
/// unless it is already pinned — to anything but the user store's copy of
/// the overlay, which a walked overlay elsewhere replaces.
pub fn overlay_root(current: &Env, var: &str, overlay: &Path, store_copy: &Path) -> ChangeSet {
    let mut cs = ChangeSet::new();
    match get(current, var) {
        Some(p) if !p.is_empty() => {
            if p == store_copy.as_os_str() && overlay != store_copy {
                cs.set(var, overlay.as_os_str());
            }
        }
        _ => cs.set(var, overlay.as_os_str()),
    }
    cs
}

fn anchored(e: &[u8]) -> bool {
    !e.is_empty() && (e[0] == b'/' || e[0] == b'\\')
}

/// The reference's `_prepended_path_var`: `entries` at the front in their
/// order, inherited empty/relative entries and copies of ours dropped.
/// `None` when the value would not change.
pub fn prepend_path(current: Option<&OsStr>, entries: &[Vec<u8>]) -> Option<OsString> {
    use std::collections::HashSet;
    let cur = current.map(|c| c.as_bytes()).unwrap_or(b"");
    // Hash sets, not list scans: linear in the entries (20,000 overlays'
    // bin dirs took seconds when each was looked up in the list).
    let ours: HashSet<&[u8]> = entries.iter().map(Vec::as_slice).collect();
    // Each entry once, the last given first (each goes in front of the
    // ones before it).
    let mut seen: HashSet<&[u8]> = HashSet::with_capacity(entries.len());
    let mut list: Vec<&[u8]> = entries
        .iter()
        .map(Vec::as_slice)
        .filter(|e| seen.insert(e))
        .collect();
    list.reverse();
    list.extend(
        cur.split(|c| *c == b':')
            .filter(|e| anchored(e) && !ours.contains(e)),
    );
    let joined = list.join(&b':');
    (joined != cur).then(|| OsString::from_vec(joined))
}

/// Bin paths, first step: every `bin` entry of the walk (missing ones too)
/// at the front of `PATH`.
pub fn bin_paths(current: &Env, bins: &[&Path]) -> ChangeSet {
    let bins: Vec<Vec<u8>> = bins.iter().map(|p| b(p).to_vec()).collect();
    let mut cs = ChangeSet::new();
    if let Some(v) = prepend_path(get(current, "PATH"), &bins) {
        cs.set("PATH", v);
    }
    cs
}

/// `<x>/.pyvenv/<anything>/overlays` (a venv's launcher dir), lexically.
pub fn is_launcher_dir(e: &[u8]) -> bool {
    let n = paths::normpath(e);
    let mut parts: Vec<&[u8]> = Vec::new();
    if n.starts_with(b"/") {
        parts.push(b"/");
    }
    parts.extend(n.split(|c| *c == b'/').filter(|p| !p.is_empty()));
    parts.len() >= 3
        && parts[parts.len() - 1] == b"overlays"
        && parts[parts.len() - 3] == b".pyvenv"
}

/// Bin paths, second step (the same layer, a second touch of `PATH`):
/// venv launcher dirs leave `PATH`.
pub fn without_launcher_dirs(current: &Env) -> ChangeSet {
    let path = get(current, "PATH").map(OsStrExt::as_bytes).unwrap_or(b"");
    let kept: Vec<&[u8]> = if path.is_empty() {
        Vec::new()
    } else {
        path.split(|c| *c == b':')
            .filter(|e| e.is_empty() || !is_launcher_dir(e))
            .collect()
    };
    let joined = kept.join(&b':');
    let mut cs = ChangeSet::new();
    if joined != path {
        cs.set("PATH", OsString::from_vec(joined));
    }
    cs
}

/// Lib paths: `AGENTS_PYTHONPATH` lists `libs` (the walk's existing lib
/// directories, highest precedence first, no duplicates) or goes when there
/// are none; `PYTHONPATH` gets them in front, with the entries of an
/// inherited `AGENTS_PYTHONPATH` (stale ones) and empty entries dropped.
pub fn lib_paths(current: &Env, libs: &[Vec<u8>]) -> ChangeSet {
    let mut cs = ChangeSet::new();
    let inherited_app = get(current, "AGENTS_PYTHONPATH");
    let stale: std::collections::HashSet<Vec<u8>> = entries(inherited_app).into_iter().collect();
    let libs_joined = OsString::from_vec(libs.join(&b':'));
    if !libs.is_empty() {
        if inherited_app != Some(libs_joined.as_os_str()) {
            cs.set("AGENTS_PYTHONPATH", libs_joined);
        }
    } else if inherited_app.is_some() {
        cs.remove("AGENTS_PYTHONPATH");
    }
    let inherited_pp = get(current, "PYTHONPATH").unwrap_or_default();
    let kept: Vec<&[u8]> = inherited_pp
        .as_bytes()
        .split(|c| *c == b':')
        .filter(|e| !e.is_empty() && !stale.contains(*e))
        .collect();
    let kept_joined = OsString::from_vec(kept.join(&b':'));
    let rev: Vec<Vec<u8>> = libs.iter().rev().cloned().collect();
    let pp = prepend_path(Some(&kept_joined), &rev).unwrap_or(kept_joined);
    if pp != inherited_pp {
        if !pp.is_empty() {
            cs.set("PYTHONPATH", pp);
        } else if current.contains_key(OsStr::new("PYTHONPATH")) {
            cs.remove("PYTHONPATH");
        }
    }
    cs
}

/// The `PYTHONPATH` an `env.py` child runs with: the accumulated
/// `AGENTS_PYTHONPATH` entries in front of the child env's `PYTHONPATH`.
/// `None` when it stays as it is.
pub fn script_pythonpath(current: &Env, child: &Env) -> Option<OsString> {
    let libs = entries(get(current, "AGENTS_PYTHONPATH"));
    if libs.is_empty() {
        return None;
    }
    let rev: Vec<Vec<u8>> = libs.into_iter().rev().collect();
    prepend_path(get(child, "PYTHONPATH"), &rev)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::core::env_of as env;

    fn v(s: &[&str]) -> Vec<Vec<u8>> {
        s.iter().map(|x| x.as_bytes().to_vec()).collect()
    }

    /// `(set pairs, removed names)` of a change set, for short asserts.
    fn shape(cs: &ChangeSet) -> (Vec<(String, String)>, Vec<String>) {
        (
            cs.assigned()
                .iter()
                .map(|(k, v)| {
                    (
                        k.to_string_lossy().into_owned(),
                        v.to_string_lossy().into_owned(),
                    )
                })
                .collect(),
            cs.removed()
                .iter()
                .map(|k| k.to_string_lossy().into_owned())
                .collect(),
        )
    }

    fn sets(pairs: &[(&str, &str)]) -> (Vec<(String, String)>, Vec<String>) {
        (
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            Vec::new(),
        )
    }

    fn lexical(a: &Path, b: &Path) -> bool {
        a == b
    }

    /// #13 (issue 22): 200,000 entries (overlays' bin dirs) go in front
    /// in one pass; the list scan it replaces needed about 2 × 10^10
    /// comparisons (minutes in a debug build).
    #[test]
    fn prepend_path_is_linear_in_the_entries() {
        let n = 200_000;
        let mut entries: Vec<Vec<u8>> =
            (0..n).map(|i| format!("/o/{i}/bin").into_bytes()).collect();
        entries.push(b"/o/0/bin".to_vec());
        let cur = OsString::from("/usr/bin:/o/7/bin:/bin");
        let r = prepend_path(Some(&cur), &entries).unwrap();
        let parts: Vec<&[u8]> = r.as_bytes().split(|c| *c == b':').collect();
        assert_eq!(parts.len(), n + 2);
        assert_eq!(parts[0], format!("/o/{}/bin", n - 1).as_bytes());
        assert_eq!(parts[n - 1], b"/o/0/bin");
        assert_eq!(&parts[n..], [b"/usr/bin".as_slice(), b"/bin"]);
    }

    #[test]
    fn prepend_path_rules() {
        let r = prepend_path(
            Some(OsStr::new(":/usr/bin:.:rel/dir::/h/bin:/bin:/usr/bin")),
            &v(&["/h/bin", "/p/bin"]),
        )
        .unwrap();
        assert_eq!(r, "/p/bin:/h/bin:/usr/bin:/bin:/usr/bin");
        assert_eq!(prepend_path(Some(OsStr::new("/a:/b")), &v(&["/a"])), None);
        assert_eq!(prepend_path(None, &v(&[])), None);
        assert_eq!(
            prepend_path(Some(OsStr::new("rel:/abs::")), &v(&[])).unwrap(),
            "/abs"
        );
    }

    #[test]
    fn launcher_and_pyvenv_shapes() {
        assert!(is_launcher_dir(b"/s/.pyvenv/3.11-posix-x86_64/overlays"));
        assert!(is_launcher_dir(b"/s/.pyvenv/x/overlays/"));
        assert!(!is_launcher_dir(b"/s/.pyvenv/overlays"));
        assert!(is_pyvenv_python(OsStr::new("/s/.pyvenv/t/bin/python")));
        assert!(!is_pyvenv_python(OsStr::new("/usr/bin/python3")));
    }

    const USER: &str = "/h/.agents";

    /// From an empty env, `roots` sets both `AGENTS_HOME` (to [`USER`]) and
    /// `AGENTS_PROJECT_ROOT` (to `want`).
    fn assert_pins_both(root: ProjectRoot, want: &str) {
        let cs = roots(&Env::new(), Path::new(USER), root, lexical);
        let both = [("AGENTS_HOME", USER), ("AGENTS_PROJECT_ROOT", want)];
        assert_eq!(shape(&cs), sets(&both));
    }

    #[test]
    fn roots_pin_the_stores_unless_already_the_same_directory() {
        let (user, proj) = (Path::new(USER), ProjectRoot::Walked(Path::new("/p")));
        assert_pins_both(proj, "/p");
        // Inherited values naming the same directories are kept.
        let same = env(&[("AGENTS_HOME", "/h/.agents"), ("AGENTS_PROJECT_ROOT", "/p")]);
        assert!(roots(&same, user, proj, lexical).is_empty());
        // `same` decides (the session passes a realpath comparison).
        let other = env(&[("AGENTS_HOME", "/link"), ("AGENTS_PROJECT_ROOT", "")]);
        let cs = roots(&other, user, proj, |_, _| true);
        assert_eq!(shape(&cs), sets(&[("AGENTS_PROJECT_ROOT", "/p")]));
    }

    #[test]
    fn roots_without_a_walked_project_fill_only_an_unset_project_root() {
        let (user, cwd) = (Path::new(USER), ProjectRoot::Fallback(Path::new("/cwd")));
        assert_pins_both(cwd, "/cwd");
        let e = env(&[
            ("AGENTS_HOME", "/h/.agents"),
            ("AGENTS_PROJECT_ROOT", "/mine"),
        ]);
        assert!(roots(&e, user, cwd, lexical).is_empty());
        let e = env(&[("AGENTS_HOME", "/h/.agents"), ("AGENTS_PROJECT_ROOT", "")]);
        assert_eq!(
            shape(&roots(&e, user, cwd, lexical)),
            sets(&[("AGENTS_PROJECT_ROOT", "/cwd")])
        );
    }

    #[test]
    fn interpreter_pin_replaces_only_unset_empty_or_store_venv_pins() {
        let py = Some(Path::new("/usr/bin/python3"));
        let want = sets(&[("AGENTS_PYTHON", "/usr/bin/python3")]);
        assert_eq!(shape(&interpreter(&Env::new(), py)), want);
        assert_eq!(
            shape(&interpreter(&env(&[("AGENTS_PYTHON", "")]), py)),
            want
        );
        let venv = env(&[("AGENTS_PYTHON", "/s/.pyvenv/t/bin/python")]);
        assert_eq!(shape(&interpreter(&venv, py)), want);
        // The user's own interpreter, or the same one: kept.
        let own = env(&[("AGENTS_PYTHON", "/opt/py/bin/python")]);
        assert!(interpreter(&own, py).is_empty());
        let same = env(&[("AGENTS_PYTHON", "/usr/bin/python3")]);
        assert!(interpreter(&same, py).is_empty());
        // No interpreter: nothing pinned; AGENTS_PYVENV goes regardless.
        let cs = interpreter(
            &env(&[("AGENTS_PYVENV", "/v"), ("AGENTS_PYLIB", "/l")]),
            None,
        );
        assert_eq!(shape(&cs), (vec![], vec!["AGENTS_PYVENV".to_string()]));
    }

    #[test]
    fn overlay_root_respects_a_pin_except_the_store_copy() {
        let (o, copy) = (
            Path::new("/p/.agents/overlays/t"),
            Path::new("/h/.agents/overlays/t"),
        );
        let want = sets(&[("T_OVERLAY_ROOT", "/p/.agents/overlays/t")]);
        assert_eq!(
            shape(&overlay_root(&Env::new(), "T_OVERLAY_ROOT", o, copy)),
            want
        );
        let empty = env(&[("T_OVERLAY_ROOT", "")]);
        assert_eq!(
            shape(&overlay_root(&empty, "T_OVERLAY_ROOT", o, copy)),
            want
        );
        let pinned = env(&[("T_OVERLAY_ROOT", "/mine")]);
        assert!(overlay_root(&pinned, "T_OVERLAY_ROOT", o, copy).is_empty());
        let store = env(&[("T_OVERLAY_ROOT", "/h/.agents/overlays/t")]);
        assert_eq!(
            shape(&overlay_root(&store, "T_OVERLAY_ROOT", o, copy)),
            want
        );
        // The walked overlay is the store copy itself: nothing to do.
        assert!(overlay_root(&store, "T_OVERLAY_ROOT", copy, copy).is_empty());
    }

    #[test]
    fn bin_paths_go_in_front_and_launcher_dirs_leave() {
        let e = env(&[("PATH", "/usr/bin:rel:/bin")]);
        let bins = [Path::new("/h/.agents/bin"), Path::new("/p/.agents/bin")];
        assert_eq!(
            shape(&bin_paths(&e, &bins)),
            sets(&[("PATH", "/p/.agents/bin:/h/.agents/bin:/usr/bin:/bin")])
        );
        assert!(bin_paths(&env(&[("PATH", "/b:/usr/bin")]), &[Path::new("/b")]).is_empty());
        let e = env(&[("PATH", "/b:/s/.pyvenv/x/overlays::/usr/bin")]);
        assert_eq!(
            shape(&without_launcher_dirs(&e)),
            sets(&[("PATH", "/b::/usr/bin")])
        );
        assert!(without_launcher_dirs(&env(&[("PATH", "/b:/usr/bin")])).is_empty());
        assert!(without_launcher_dirs(&Env::new()).is_empty());
    }

    #[test]
    fn lib_paths_list_the_libs_and_replace_stale_entries() {
        let libs = v(&["/p/lib", "/h/lib"]);
        let e = env(&[("PYTHONPATH", "/old:/mine")]);
        assert_eq!(
            shape(&lib_paths(&e, &libs)),
            sets(&[
                ("AGENTS_PYTHONPATH", "/p/lib:/h/lib"),
                ("PYTHONPATH", "/p/lib:/h/lib:/old:/mine")
            ])
        );
        // An inherited AGENTS_PYTHONPATH's entries are stale in PYTHONPATH.
        let e = env(&[("AGENTS_PYTHONPATH", "/old"), ("PYTHONPATH", "/old:/mine")]);
        assert_eq!(
            shape(&lib_paths(&e, &libs)),
            sets(&[
                ("AGENTS_PYTHONPATH", "/p/lib:/h/lib"),
                ("PYTHONPATH", "/p/lib:/h/lib:/mine")
            ])
        );
        // No libs: both go (PYTHONPATH only when nothing else is left).
        let cs = lib_paths(&e, &[]);
        assert_eq!(
            shape(&cs),
            (
                vec![("PYTHONPATH".to_string(), "/mine".to_string())],
                vec!["AGENTS_PYTHONPATH".to_string()]
            )
        );
        let e = env(&[("AGENTS_PYTHONPATH", "/old"), ("PYTHONPATH", "/old")]);
        let cs = lib_paths(&e, &[]);
        assert_eq!(
            shape(&cs),
            (
                vec![],
                vec!["AGENTS_PYTHONPATH".to_string(), "PYTHONPATH".to_string()]
            )
        );
        // Already as wanted: nothing.
        let e = env(&[
            ("AGENTS_PYTHONPATH", "/p/lib:/h/lib"),
            ("PYTHONPATH", "/p/lib:/h/lib"),
        ]);
        assert!(lib_paths(&e, &libs).is_empty());
    }

    #[test]
    fn script_pythonpath_puts_the_libs_in_front() {
        let cur = env(&[("AGENTS_PYTHONPATH", "/p/lib:/h/lib")]);
        let child = env(&[("PYTHONPATH", "/x")]);
        assert_eq!(script_pythonpath(&cur, &child).unwrap(), "/p/lib:/h/lib:/x");
        assert_eq!(script_pythonpath(&Env::new(), &child), None);
    }
}
