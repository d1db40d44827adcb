use super::*;
use crate::core::env_of;
use std::fs;

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn manifest(pairs: &[(&str, &str)]) -> IndexMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

const CWD: &str = "/work/cwd";

#[test]
fn token_rule() {
    assert!(has_token(b"${CLAUDE_PLUGIN_ROOT}"));
    assert!(has_token(b"/opt/${X}/y"));
    assert!(has_token(b"${}"));
    assert!(has_token(b"a${b/c}"));
    assert!(!has_token(b"${"));
    assert!(!has_token(b"}${"));
    assert!(!has_token(b"$HOME/x"));
    assert!(!has_token(b"agent-bundle:path:plugin-root"));
}

#[test]
fn plugin_root_precedence() {
    let cwd = Path::new(CWD);
    let fb = Path::new("fallback/");
    let pr = |v: Option<&str>| {
        let e = match v {
            Some(v) => env_of(&[(PLUGIN_ROOT_VARIABLE, v)]),
            None => Env::new(),
        };
        s(&plugin_root(fb, &e, cwd))
    };
    assert_eq!(pr(None), "/work/cwd/fallback");
    assert_eq!(pr(Some("")), "/work/cwd/fallback");
    assert_eq!(pr(Some(" \t ")), "/work/cwd/fallback");
    assert_eq!(pr(Some("${CLAUDE_PLUGIN_ROOT}")), "/work/cwd/fallback");
    assert_eq!(pr(Some("/opt/${X}/y")), "/work/cwd/fallback");
    assert_eq!(pr(Some("${}")), "/work/cwd/fallback");
    assert_eq!(pr(Some("/installs/curator ")), "/installs/curator ");
    assert_eq!(pr(Some(" /p")), "/work/cwd/ /p");
    assert_eq!(pr(Some("./")), "/work/cwd");
    assert_eq!(pr(Some("/a/b/../c/")), "/a/c");
    assert_eq!(pr(Some("${")), "/work/cwd/${");
    assert_eq!(pr(Some("$HOME/x")), "/work/cwd/$HOME/x");
    // Lookup is exact-case.
    let e = env_of(&[("agent_bundle_plugin_root", "/x")]);
    assert_eq!(s(&plugin_root(fb, &e, cwd)), "/work/cwd/fallback");
    // An empty fallback is the cwd.
    assert_eq!(s(&plugin_root(Path::new(""), &Env::new(), cwd)), CWD);
}

#[test]
fn env_file_list() {
    let cwd = Path::new(CWD);
    let root = Path::new("/root/plugin");
    let paths = |v: Option<&str>| -> Vec<String> {
        let e = match v {
            Some(v) => env_of(&[(ENV_FILE_VARIABLE, v)]),
            None => Env::new(),
        };
        env_file_paths(root, &e, cwd).iter().map(|p| s(p)).collect()
    };
    let default = vec!["/root/plugin/.env", "/root/plugin/.env.local"];
    assert_eq!(paths(None), default);
    assert_eq!(paths(Some("")), default);
    assert_eq!(paths(Some("  ")), default);
    assert!(paths(Some("none")).is_empty());
    assert!(paths(Some(" none\t")).is_empty());
    assert_eq!(paths(Some("NONE")), vec!["/work/cwd/NONE"]);
    assert_eq!(paths(Some("None")), vec!["/work/cwd/None"]);
    assert_eq!(paths(Some("none:/x.env")), vec!["/work/cwd/none", "/x.env"]);
    assert_eq!(
        paths(Some(" a.env : :./b/../c.env: /abs//d.env/ ")),
        vec!["/work/cwd/a.env", "/work/cwd/c.env", "/abs/d.env"]
    );
    assert!(paths(Some(":")).is_empty());
    assert!(paths(Some("::")).is_empty());
    // A relative root gives relative default paths.
    let rel = env_file_paths(Path::new("rel/"), &Env::new(), cwd);
    assert_eq!(
        rel,
        vec![PathBuf::from("rel/.env"), "rel/.env.local".into()]
    );
    let empty = env_file_paths(Path::new(""), &Env::new(), cwd);
    assert_eq!(empty, vec![PathBuf::from(".env"), ".env.local".into()]);
    // Exact-case lookup, even for win32 runs.
    let e = env_of(&[("agent_bundle_env_file", "none")]);
    assert_eq!(env_file_paths(root, &e, cwd).len(), 2);
}

#[test]
fn reservation_rules() {
    let e = env_of(&[
        ("HOST", "h"),
        ("EMPTY", ""),
        ("DEF", "default"),
        ("DIFF", "other"),
        ("SPACE", "default "),
    ]);
    let m = manifest(&[
        ("DEF", "default"),
        ("DIFF", "default"),
        ("SPACE", "default"),
        ("GAP", "g"),
    ]);
    let r = reserved_set(&e, Some(&m), Platform::Linux);
    let names: Vec<&[u8]> = r.iter().map(|k| k.as_slice()).collect();
    assert_eq!(
        names,
        vec![&b"DIFF"[..], b"EMPTY", b"HOST", b"SPACE"],
        "DEF holds its default, GAP is absent"
    );
    let none = reserved_set(&e, None, Platform::Linux);
    assert_eq!(none.len(), 5);
}

#[test]
fn win32_reservation_uppercases() {
    let e = env_of(&[("Path", "/bin"), ("straße", "x")]);
    let r = reserved_set(&e, None, Platform::Win32);
    assert!(r.contains(b"PATH".as_slice()));
    assert!(r.contains("STRASSE".as_bytes()));
    let r = reserved_set(&e, None, Platform::Linux);
    assert!(r.contains(b"Path".as_slice()));
    assert!(!r.contains(b"PATH".as_slice()));
    // A manifest default matches across spellings on win32; the later of
    // two colliding manifest keys wins.
    let m = manifest(&[("PATH", "/bin"), ("path", "/other")]);
    assert!(reserved_set(&e, Some(&m), Platform::Win32).contains(b"PATH".as_slice()));
    let m = manifest(&[("path", "/other"), ("PATH", "/bin")]);
    assert!(!reserved_set(&e, Some(&m), Platform::Win32).contains(b"PATH".as_slice()));
    // Two spellings in env: any one differing from the default reserves.
    let e2 = env_of(&[("PATH", "/bin"), ("Path", "/elsewhere")]);
    let m = manifest(&[("PATH", "/bin")]);
    assert!(reserved_set(&e2, Some(&m), Platform::Win32).contains(b"PATH".as_slice()));
}

#[test]
fn report_json_shape() {
    let r = Report {
        applied: vec!["a".into(), "B".into()],
        files: vec![
            FileReport {
                path: "/p/.env".into(),
                state: FileState::Loaded,
                applied: Some(2),
                error: None,
                problems: Vec::new(),
            },
            FileReport {
                path: "/p/.env.local".into(),
                state: FileState::Absent,
                applied: None,
                error: None,
                problems: Vec::new(),
            },
            FileReport {
                path: "/q".into(),
                state: FileState::Unreadable,
                applied: None,
                error: Some("Is a directory".into()),
                problems: Vec::new(),
            },
        ],
        plugin_root: "/p".into(),
        ..Report::default()
    };
    let v = r.to_json();
    assert_eq!(
        v,
        serde_json::json!({
            "applied": ["a", "B"],
            "files": [
                {"applied": 2, "path": "/p/.env", "state": "loaded"},
                {"path": "/p/.env.local", "state": "absent"},
                {"path": "/q", "state": "unreadable"},
            ]
        })
    );
    // Property order as the reference's: applied, path, state.
    let text = serde_json::to_string(&v).unwrap();
    assert!(text.starts_with(r#"{"applied":["a","B"],"files":[{"applied":2,"path""#));
}

/// A temporary directory holding a `.env` of `text`.
fn with_env(text: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join(".env"), text).unwrap();
    d
}

fn opts(root: &Path) -> Options {
    Options {
        plugin_root_fallback: root.to_path_buf(),
        platform: Platform::Linux,
        cwd: root.to_path_buf(),
        ..Options::default()
    }
}

#[test]
fn apply_fills_gaps_later_file_wins() {
    let d = with_env("A=1\nB=2\nHOST=file\nA=again\n");
    fs::write(d.path().join(".env.local"), "B=3\nC=4\nEMPTY=x\n").unwrap();
    let mut e = env_of(&[("HOST", "h"), ("EMPTY", "")]);
    let r = apply(&mut e, &opts(d.path()));
    assert_eq!(g(&e, "A"), "again");
    assert_eq!(g(&e, "B"), "3");
    assert_eq!(g(&e, "C"), "4");
    assert_eq!(g(&e, "HOST"), "h");
    assert_eq!(g(&e, "EMPTY"), "");
    assert_eq!(r.applied, vec!["A", "B", "C"]);
    assert_eq!(r.files.len(), 2);
    assert_eq!(r.files[0].applied, Some(2), "A counted once");
    assert_eq!(r.files[1].applied, Some(2));
    assert_eq!(r.files[1].path, d.path().join(".env.local"));
}

#[test]
fn apply_manifest_default_is_overridable() {
    let d = with_env("LOG=debug\nPORT=1\nGAP=g\n");
    let mut e = env_of(&[("LOG", "info"), ("PORT", "8080")]);
    let mut o = opts(d.path());
    o.manifest_env = Some(manifest(&[("LOG", "info"), ("PORT", "80"), ("GAP", "x")]));
    let r = apply(&mut e, &o);
    assert_eq!(g(&e, "LOG"), "debug");
    assert_eq!(g(&e, "PORT"), "8080");
    assert_eq!(g(&e, "GAP"), "g");
    assert_eq!(r.applied, vec!["GAP", "LOG"]);
}

#[test]
fn apply_win32_reserves_case_insensitively_assigns_file_spelling() {
    let d = with_env("PATH=/file\nnew_one=1\n");
    let mut e = env_of(&[("Path", "/host")]);
    let mut o = opts(d.path());
    o.platform = Platform::Win32;
    let r = apply(&mut e, &o);
    assert!(!e.contains_key(OsStr::new("PATH")));
    assert_eq!(r.applied, vec!["new_one"]);
    // On linux the names differ, so PATH is a gap next to Path.
    let mut e = env_of(&[("Path", "/host")]);
    let r = apply(&mut e, &opts(d.path()));
    assert_eq!(g(&e, "PATH"), "/file");
    assert_eq!(g(&e, "Path"), "/host");
    assert_eq!(r.applied, vec!["new_one", "PATH"]);
}

#[test]
fn apply_states_absent_unreadable() {
    let d = tempfile::tempdir().unwrap();
    fs::create_dir(d.path().join(".env")).unwrap();
    fs::write(d.path().join(".env.local"), "K=v\n").unwrap();
    let mut e = Env::new();
    let r = apply(&mut e, &opts(d.path()));
    assert_eq!(r.files[0].state, FileState::Unreadable);
    assert_eq!(r.files[0].applied, None);
    assert!(r.files[0].error.is_some());
    assert_eq!(r.files[1].state, FileState::Loaded);
    assert_eq!(r.applied, vec!["K"]);
    let mut asm = Assembly::new(Env::new());
    apply_to_assembly(&mut asm, &opts(d.path()));
    assert!(asm.layers()[0]
        .failure
        .as_deref()
        .unwrap()
        .starts_with("unreadable"));
    assert!(asm.layers()[1].failure.is_none());
    // The warning is a Note on the assembly, worded as `launch` prints it.
    let warned: Vec<&str> = asm.warnings().collect();
    assert_eq!(
        warned,
        vec![format!(
            "launch: cannot read {} ({}); skipped",
            d.path().join(".env").display(),
            r.files[0].error.as_deref().unwrap()
        )]
    );

    // A plugin root that is a regular file: ENOTDIR, unreadable.
    let f = d.path().join("plainfile");
    fs::write(&f, "").unwrap();
    let r = apply(&mut Env::new(), &opts(&f));
    let states: Vec<_> = r.files.iter().map(|f| f.state).collect();
    assert_eq!(states, vec![FileState::Unreadable, FileState::Unreadable]);

    // A missing root: absent.
    let r = apply(&mut Env::new(), &opts(&d.path().join("missing")));
    let states: Vec<_> = r.files.iter().map(|f| f.state).collect();
    assert_eq!(states, vec![FileState::Absent, FileState::Absent]);
    assert!(r.applied.is_empty());
}

#[test]
fn apply_list_computed_once_and_file_may_set_it_for_child() {
    let d = tempfile::tempdir().unwrap();
    fs::write(
        d.path().join(".env"),
        "AGENT_BUNDLE_ENV_FILE=/elsewhere\nX=1\n",
    )
    .unwrap();
    fs::write(d.path().join(".env.local"), "Y=2\n").unwrap();
    let mut e = Env::new();
    let r = apply(&mut e, &opts(d.path()));
    assert_eq!(r.files.len(), 2);
    assert_eq!(r.files[1].state, FileState::Loaded);
    assert_eq!(g(&e, ENV_FILE_VARIABLE), "/elsewhere");
    assert_eq!(g(&e, "Y"), "2");
}

#[test]
fn apply_no_env() {
    let d = with_env("X=1\n");
    let mut o = opts(d.path());
    o.no_env = true;
    let mut e = Env::new();
    let r = apply(&mut e, &o);
    assert!(r.disabled);
    assert!(r.files.is_empty() && r.applied.is_empty());
    assert!(!e.contains_key(OsStr::new("X")));
    assert_eq!(g(&e, ENV_FILE_VARIABLE), "none");
    let mut e = env_of(&[(ENV_FILE_VARIABLE, "/mine.env")]);
    apply(&mut e, &o);
    assert_eq!(g(&e, ENV_FILE_VARIABLE), "/mine.env");
}

#[test]
fn apply_nul_cut_and_lossy() {
    let d = tempfile::tempdir().unwrap();
    fs::write(d.path().join(".env"), b"N=\"a\\nb\"\nBAD=x\xffy\n").unwrap();
    let mut e = Env::new();
    apply(&mut e, &opts(d.path()));
    assert_eq!(g(&e, "N"), "a\nb");
    assert_eq!(g(&e, "BAD"), "x\u{fffd}y");
    let (cs, _) = file_changes(b"Z=a\0b\n");
    if let Some(v) = cs.get("Z") {
        assert!(!v.as_bytes().contains(&0));
    }
}

#[test]
fn apply_records_provenance() {
    let d = with_env("HOST=f\nNEW=1\n");
    let mut asm = Assembly::new(env_of(&[("HOST", "h")]));
    apply_to_assembly(&mut asm, &opts(d.path()));
    let t = asm.touches(OsStr::new("HOST"));
    assert!(matches!(t[0].action, crate::core::Action::Skipped(_)));
    assert_eq!(t[0].line, Some(1));
    let t = asm.touches(OsStr::new("NEW"));
    assert_eq!(t[0].action, crate::core::Action::Set);
    assert_eq!(
        asm.layers()[t[0].layer].info.path.as_deref(),
        Some(d.path().join(".env").as_path())
    );
}

fn g<'a>(e: &'a Env, k: &str) -> &'a str {
    crate::core::get(e, k)
        .unwrap_or_else(|| panic!("{k} missing"))
        .to_str()
        .unwrap()
}

#[test]
fn default_options_use_process_cwd_and_host_platform() {
    assert_eq!(Options::default().platform, Platform::host());
    let r = apply(&mut Env::new(), &Options::default());
    let cwd = std::env::current_dir().unwrap();
    assert_eq!(r.plugin_root, cwd);
    assert_eq!(r.files[0].path, cwd.join(".env"));
}

#[test]
fn root_source_reasons() {
    let cwd = Path::new(CWD);
    let fb = Path::new("fb");
    let src = |v: &str| plugin_root_with_source(fb, &env_of(&[(PLUGIN_ROOT_VARIABLE, v)]), cwd).1;
    assert_eq!(src("/x"), RootSource::Env);
    assert_eq!(src(" "), RootSource::Fallback);
    assert_eq!(src("${CLAUDE_PLUGIN_ROOT}"), RootSource::FallbackToken);
    assert_eq!(
        plugin_root_with_source(fb, &Env::new(), cwd).1,
        RootSource::Fallback
    );
}

mod model {
    //! Model-based check of [`apply`]: random host envs, manifests, platforms
    //! and two files, against a direct transcription of agent-bundle's
    //! `applyOperatorEnv` (its reserved set and its files).
    use super::*;
    use proptest::prelude::*;

    const HOST_NAMES: &[&str] = &["A", "a", "B", "Ab", "AB", "_x", "Path", "straße", "K"];
    const FILE_NAMES: &[&str] = &["A", "a", "B", "ab", "AB", "_x", "PATH", "STRASSE", "K", "N"];
    const VALUES: &[&str] = &["", "v", "d", "d ", "x y"];

    fn comp(k: &str, win: bool) -> String {
        if win {
            k.to_uppercase()
        } else {
            k.to_string()
        }
    }

    fn pick(pool: &'static [&'static str]) -> impl Strategy<Value = &'static str> {
        (0..pool.len()).prop_map(move |i| pool[i])
    }

    fn file_value() -> impl Strategy<Value = String> {
        prop_oneof![pick(VALUES).prop_map(str::to_string), "[ -~\n\t]{0,10}",]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn apply_matches_model(
            host in proptest::collection::vec((pick(HOST_NAMES), pick(VALUES)), 0..6),
            manifest_in in proptest::option::of(
                proptest::collection::vec((pick(FILE_NAMES), pick(VALUES)), 0..5)),
            win in any::<bool>(),
            f1 in proptest::collection::vec((pick(FILE_NAMES), file_value()), 0..6),
            f2 in proptest::collection::vec((pick(FILE_NAMES), file_value()), 0..6),
        ) {
            let d = tempfile::tempdir().unwrap();
            let mut files: Vec<Vec<(String, String)>> = Vec::new();
            for (name, entries) in [(".env", &f1), (".env.local", &f2)] {
                let mut text = String::new();
                let mut kept = Vec::new();
                for (k, v) in entries {
                    if let Some(line) = crate::dotenv::write_value(k, v) {
                        text.push_str(&line);
                        text.push('\n');
                        kept.push((k.to_string(), v.clone()));
                    }
                }
                fs::write(d.path().join(name), text).unwrap();
                files.push(kept);
            }
            let host_env: Env = host
                .iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v)))
                .collect();
            let manifest_map: Option<IndexMap<String, String>> = manifest_in.map(|m| {
                m.into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
            });

            // The model.
            let mut defaults: BTreeMap<String, String> = BTreeMap::new();
            for (k, v) in manifest_map.iter().flatten() {
                defaults.insert(comp(k, win), v.clone());
            }
            let reserved: BTreeSet<String> = host_env
                .iter()
                .map(|(k, v)| (k.to_str().unwrap(), v.to_str().unwrap()))
                .filter(|(k, v)| defaults.get(&comp(k, win)).map(String::as_str) != Some(*v))
                .map(|(k, _)| comp(k, win))
                .collect();
            let mut expected = host_env.clone();
            let mut applied: BTreeSet<String> = BTreeSet::new();
            let mut counts = Vec::new();
            for entries in &files {
                let mut last: IndexMap<&str, &str> = IndexMap::new();
                for (k, v) in entries {
                    last.insert(k, v);
                }
                let mut n = 0;
                for (k, v) in last {
                    if !reserved.contains(&comp(k, win)) {
                        expected.insert(k.into(), v.into());
                        applied.insert(k.to_string());
                        n += 1;
                    }
                }
                counts.push(Some(n));
            }
            let mut applied: Vec<String> = applied.into_iter().collect();
            sort_names(&mut applied);

            let mut env = host_env.clone();
            let mut o = opts(d.path());
            o.platform = if win { Platform::Win32 } else { Platform::Linux };
            o.manifest_env = manifest_map;
            let r = apply(&mut env, &o);
            prop_assert_eq!(env, expected);
            prop_assert_eq!(r.applied, applied);
            let got: Vec<Option<usize>> = r.files.iter().map(|f| f.applied).collect();
            prop_assert_eq!(got, counts);
        }
    }
}
