//! `agentenv launch` through the built binary: the operator layer's rules
//! (issue 5), observed in the child's environment (`env -0`) and in the
//! report.

use crate::support;

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use support::{Ran, Run, Tree};

const PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// A scratch tree (the working directory) and the host environment one
/// `agentenv launch` starts in.
struct Launch {
    t: Tree,
    host: Vec<(String, String)>,
}

impl Launch {
    fn new() -> Self {
        Launch {
            t: Tree::new(),
            host: vec![("PATH".into(), PATH.into())],
        }
    }
    fn path(&self) -> &Path {
        self.t.root()
    }
    fn p(&self, rel: &str) -> PathBuf {
        self.t.path(rel)
    }
    fn file(&self, rel: &str, contents: impl AsRef<[u8]>) -> &Self {
        self.t.write(rel, contents);
        self
    }
    fn host(mut self, k: &str, v: &str) -> Self {
        self.host.push((k.into(), v.into()));
        self
    }
    /// `agentenv launch ARGS` (launch flags, `--`, CMD…) in the host
    /// environment only; any exit status.
    fn launch(&self, args: &[&str]) -> Run {
        self.t
            .host(["launch"])
            .with(|c| {
                c.env_clear();
            })
            .envs(self.host.iter().map(|(k, v)| (k, v)))
            .args(args)
            .any_status()
    }
    fn run(&self, args: &[&str]) -> Ran {
        self.launch(args).run()
    }
    /// Run with `flags` and the child `env -0`; return the child's env.
    fn child_env(&self, flags: &[&str]) -> (BTreeMap<String, String>, Ran) {
        let mut args = flags.to_vec();
        args.extend(["--", "env", "-0"]);
        let out = self.launch(&args).status(0).run();
        (parse_env0(&out.stdout_bytes), out)
    }
    fn report(&self, rel: &str) -> Value {
        serde_json::from_slice(&fs::read(self.p(rel)).unwrap()).unwrap()
    }
}

fn parse_env0(bytes: &[u8]) -> BTreeMap<String, String> {
    bytes
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| {
            let s = String::from_utf8_lossy(s);
            let (k, v) = s.split_once('=').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect()
}

fn get<'a>(e: &'a BTreeMap<String, String>, k: &str) -> Option<&'a str> {
    e.get(k).map(String::as_str)
}

#[test]
fn fills_gaps_later_file_wins_host_wins() {
    let t = Launch::new().host("HOST", "host").host("EMPTY", "");
    t.file(".env", "A=1\nB=2\nHOST=file\nEMPTY=file\nA=again\n");
    t.file(".env.local", "B=3\nC=4\n");
    let (env, out) = t.child_env(&["--report", "r.json"]);
    assert_eq!(get(&env, "A"), Some("again"));
    assert_eq!(get(&env, "B"), Some("3"));
    assert_eq!(get(&env, "C"), Some("4"));
    assert_eq!(get(&env, "HOST"), Some("host"));
    assert_eq!(get(&env, "EMPTY"), Some(""), "empty counts as present");
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    let root = t.path().to_string_lossy().into_owned();
    assert_eq!(
        t.report("r.json"),
        json!({
            "applied": ["A", "B", "C"],
            "files": [
                {"applied": 2, "path": format!("{root}/.env"), "state": "loaded"},
                {"applied": 2, "path": format!("{root}/.env.local"), "state": "loaded"},
            ]
        })
    );
}

#[test]
fn absent_files_are_normal() {
    let t = Launch::new();
    let (env, out) = t.child_env(&["--report", "r.json"]);
    assert!(out.stderr.is_empty());
    assert_eq!(env.len(), 1, "only PATH: {env:?}");
    let r = t.report("r.json");
    assert_eq!(r["applied"], json!([]));
    assert_eq!(r["files"][0]["state"], "absent");
    assert_eq!(r["files"][1]["state"], "absent");
    assert!(r["files"][0].get("applied").is_none());
}

#[test]
fn plugin_root_flag_is_a_fallback_relative_to_cwd() {
    let t = Launch::new();
    t.file("pack/.env", "FROM=pack\n");
    t.file("other/.env", "FROM=other\n");
    let (env, _) = t.child_env(&["--plugin-root", "pack/", "--report", "r.json"]);
    assert_eq!(get(&env, "FROM"), Some("pack"));
    let r = t.report("r.json");
    assert_eq!(
        r["files"][0]["path"],
        format!("{}/pack/.env", t.path().display())
    );
    // A declared root overrides the flag.
    let other = t.p("other").to_string_lossy().into_owned();
    let t2 = Launch {
        t: t.t,
        host: vec![
            ("PATH".into(), PATH.into()),
            ("AGENT_BUNDLE_PLUGIN_ROOT".into(), other),
        ],
    };
    let (env, _) = t2.child_env(&["--plugin-root", "pack"]);
    assert_eq!(get(&env, "FROM"), Some("other"));
}

#[test]
fn plugin_root_token_or_blank_falls_back() {
    for declared in ["${CLAUDE_PLUGIN_ROOT}", "/opt/${X}/y", "${}", "", "  \t"] {
        let t = Launch::new().host("AGENT_BUNDLE_PLUGIN_ROOT", declared);
        t.file("pack/.env", "FROM=fallback\n");
        let (env, _) = t.child_env(&["--plugin-root", "pack"]);
        assert_eq!(get(&env, "FROM"), Some("fallback"), "{declared:?}");
        // The host's value is handed on unchanged.
        assert_eq!(get(&env, "AGENT_BUNDLE_PLUGIN_ROOT"), Some(declared));
    }
}

#[test]
fn plugin_root_is_untrimmed_and_normalised() {
    let t = Launch::new();
    t.file("root /.env", "FROM=spaced\n");
    t.file("root/.env", "FROM=trimmed\n");
    let declared = format!("{}/x/../root ", t.path().display());
    let t = t.host("AGENT_BUNDLE_PLUGIN_ROOT", &declared);
    let (env, _) = t.child_env(&["--report", "r.json"]);
    assert_eq!(get(&env, "FROM"), Some("spaced"));
    assert_eq!(
        t.report("r.json")["files"][0]["path"],
        format!("{}/root /.env", t.path().display())
    );
}

#[test]
fn plugin_root_unclosed_brace_is_a_relative_path() {
    // `${` without a closing brace is not a token: a relative path.
    let t = Launch::new().host("AGENT_BUNDLE_PLUGIN_ROOT", "${");
    t.file("${/.env", "FROM=literal\n");
    let (env, _) = t.child_env(&[]);
    assert_eq!(get(&env, "FROM"), Some("literal"));
}

#[test]
fn env_file_list_split_trimmed_absolutised_in_order() {
    let t = Launch::new().host("AGENT_BUNDLE_ENV_FILE", " a.env : :sub/../b.env: ");
    t.file("a.env", "K=a\nONLY_A=1\n");
    t.file("b.env", "K=b\n");
    t.file(".env", "DEFAULT=1\n");
    let (env, _) = t.child_env(&["--report", "r.json"]);
    assert_eq!(get(&env, "K"), Some("b"));
    assert_eq!(get(&env, "ONLY_A"), Some("1"));
    assert_eq!(get(&env, "DEFAULT"), None, "the list replaces the pair");
    let d = t.path().display();
    assert_eq!(
        t.report("r.json"),
        json!({
            "applied": ["K", "ONLY_A"],
            "files": [
                {"applied": 2, "path": format!("{d}/a.env"), "state": "loaded"},
                {"applied": 1, "path": format!("{d}/b.env"), "state": "loaded"},
            ]
        })
    );
}

#[test]
fn env_file_none_disables_but_not_other_spellings() {
    let t = Launch::new().host("AGENT_BUNDLE_ENV_FILE", " none ");
    t.file(".env", "X=1\n");
    let (env, _) = t.child_env(&["--report", "r.json"]);
    assert_eq!(get(&env, "X"), None);
    assert_eq!(t.report("r.json"), json!({"applied": [], "files": []}));
}

#[test]
fn env_file_none_inside_a_list_is_a_file() {
    let t = Launch::new().host("AGENT_BUNDLE_ENV_FILE", "NONE:none");
    t.file("NONE", "UPPER=1\n");
    t.file("none", "LOWER=1\n");
    let (env, _) = t.child_env(&[]);
    assert_eq!(get(&env, "UPPER"), Some("1"));
    assert_eq!(
        get(&env, "LOWER"),
        Some("1"),
        "none inside a list is a file"
    );
}

#[test]
fn env_file_list_of_blanks_reads_nothing() {
    let t = Launch::new().host("AGENT_BUNDLE_ENV_FILE", "::");
    t.file(".env", "X=1\n");
    let (env, _) = t.child_env(&["--report", "r.json"]);
    assert_eq!(get(&env, "X"), None);
    assert_eq!(t.report("r.json")["files"], json!([]));
}

#[test]
fn file_list_is_computed_once_from_the_host() {
    let t = Launch::new();
    t.file(".env", "AGENT_BUNDLE_ENV_FILE=other.env\nX=1\n");
    t.file(".env.local", "Y=2\n");
    t.file("other.env", "Z=3\n");
    let (env, _) = t.child_env(&[]);
    assert_eq!(get(&env, "Y"), Some("2"));
    assert_eq!(get(&env, "Z"), None);
    assert_eq!(get(&env, "AGENT_BUNDLE_ENV_FILE"), Some("other.env"));
}

#[test]
fn manifest_default_unreserves_byte_for_byte() {
    let t = Launch::new()
        .host("LOG", "info")
        .host("PORT", "8080")
        .host("MODE", "fast ")
        .host("SAME", "v");
    t.file(
        "m.json",
        r#"{"LOG": "info", "PORT": "80", "MODE": "fast", "GAP": "g", "SAME": "v"}"#,
    );
    t.file(".env", "LOG=debug\nPORT=1\nMODE=slow\nGAP=file\nSAME=v\n");
    let (env, _) = t.child_env(&["--manifest-env", "m.json", "--report", "r.json"]);
    assert_eq!(get(&env, "LOG"), Some("debug"), "still the default");
    assert_eq!(get(&env, "PORT"), Some("8080"), "differs from the default");
    assert_eq!(get(&env, "MODE"), Some("fast "), "no trimming");
    assert_eq!(get(&env, "GAP"), Some("file"));
    assert_eq!(get(&env, "SAME"), Some("v"));
    // Equal values are still applied and counted.
    let r = t.report("r.json");
    assert_eq!(r["applied"], json!(["GAP", "LOG", "SAME"]));
    assert_eq!(r["files"][0]["applied"], 3);
}

#[test]
fn without_manifest_every_present_variable_is_reserved() {
    let t = Launch::new().host("LOG", "info");
    t.file(".env", "LOG=debug\n");
    let (env, _) = t.child_env(&[]);
    assert_eq!(get(&env, "LOG"), Some("info"));
}

#[test]
fn manifest_token_default_keeps_expanded_value_reserved() {
    let t = Launch::new()
        .host("DATA", "/installs/pack/data")
        .host("RAW", "${CLAUDE_PLUGIN_ROOT}/data");
    t.file(
        "m.json",
        r#"{"DATA": "${CLAUDE_PLUGIN_ROOT}/data", "RAW": "${CLAUDE_PLUGIN_ROOT}/data"}"#,
    );
    t.file(".env", "DATA=/file\nRAW=/file\n");
    let (env, _) = t.child_env(&["--manifest-env", "m.json"]);
    assert_eq!(get(&env, "DATA"), Some("/installs/pack/data"));
    assert_eq!(get(&env, "RAW"), Some("/file"), "unexpanded pass-through");
}

#[test]
fn win32_reserves_case_insensitively() {
    let t = Launch::new().host("Foo_Bar", "host").host("straße", "host");
    t.file(".env", "FOO_BAR=file\nSTRASSE=file\nNEW=1\n");
    let (env, _) = t.child_env(&["--platform", "win32", "--report", "r.json"]);
    assert_eq!(get(&env, "FOO_BAR"), None);
    assert_eq!(get(&env, "STRASSE"), None, "Unicode uppercase: ß → SS");
    assert_eq!(t.report("r.json")["applied"], json!(["NEW"]));
}

#[test]
fn linux_reserves_case_sensitively() {
    let t = Launch::new().host("Foo_Bar", "host").host("straße", "host");
    t.file(".env", "FOO_BAR=file\nSTRASSE=file\nNEW=1\n");
    let (env, _) = t.child_env(&["--platform", "linux", "--report", "r.json"]);
    assert_eq!(get(&env, "FOO_BAR"), Some("file"));
    assert_eq!(get(&env, "Foo_Bar"), Some("host"));
    assert_eq!(get(&env, "STRASSE"), Some("file"));
    assert_eq!(
        t.report("r.json")["applied"],
        json!(["FOO_BAR", "NEW", "STRASSE"])
    );
}

#[test]
fn win32_manifest_matching() {
    let t = Launch::new().host("Log", "info").host("Port", "8080");
    t.file("m.json", r#"{"LOG": "info", "PORT": "80"}"#);
    t.file(".env", "LOG=debug\nPORT=1\n");
    let (env, _) = t.child_env(&["--platform", "win32", "--manifest-env", "m.json"]);
    assert_eq!(get(&env, "LOG"), Some("debug"), "Log holds the default");
    assert_eq!(get(&env, "Log"), Some("info"), "assignment keeps spelling");
    assert_eq!(get(&env, "PORT"), None, "Port differs: reserved");
}

#[test]
fn win32_colliding_manifest_spellings_the_later_wins() {
    let t = Launch::new().host("Log", "info").host("Port", "8080");
    t.file(".env", "LOG=debug\nPORT=1\n");
    t.file("m2.json", r#"{"log": "other", "LOG": "info"}"#);
    let (env, _) = t.child_env(&["--platform", "win32", "--manifest-env", "m2.json"]);
    assert_eq!(get(&env, "LOG"), Some("debug"));
    t.file("m3.json", r#"{"LOG": "info", "log": "other"}"#);
    let (env, _) = t.child_env(&["--platform", "win32", "--manifest-env", "m3.json"]);
    assert_eq!(get(&env, "LOG"), None);
}

#[test]
fn bad_platform_is_a_usage_error() {
    let t = Launch::new();
    let out = t.run(&["--platform", "windows", "--", "true"]);
    assert_eq!(out.status, Some(2));
}

#[test]
fn directory_named_env_is_unreadable_not_fatal() {
    let t = Launch::new();
    fs::create_dir(t.p(".env")).unwrap();
    t.file(".env.local", "K=v\n");
    let (env, out) = t.child_env(&["--report", "r.json"]);
    assert_eq!(get(&env, "K"), Some("v"));
    let d = t.path().display();
    assert_eq!(
        t.report("r.json"),
        json!({
            "applied": ["K"],
            "files": [
                {"path": format!("{d}/.env"), "state": "unreadable"},
                {"applied": 1, "path": format!("{d}/.env.local"), "state": "loaded"},
            ]
        })
    );
    let err = out.stderr;
    assert!(
        err.contains("warning") && err.contains(&format!("{d}/.env")),
        "{err}"
    );
}

#[test]
fn plugin_root_that_is_a_file_is_unreadable() {
    let t = Launch::new();
    t.file("pack", "not a directory");
    let out = t.run(&[
        "--plugin-root",
        "pack",
        "--report",
        "r.json",
        "--",
        "sh",
        "-c",
        "exit 7",
    ]);
    assert_eq!(out.status, Some(7), "the child's status");
    let r = t.report("r.json");
    assert_eq!(r["files"][0]["state"], "unreadable");
    assert_eq!(r["files"][1]["state"], "unreadable");
    // -q silences the warning.
    let out = t.run(&["-q", "--plugin-root", "pack", "--", "true"]);
    assert!(out.status == Some(0));
    assert!(out.stderr.is_empty());
}

#[test]
fn dangling_symlink_is_absent() {
    let t = Launch::new();
    std::os::unix::fs::symlink(t.p("nowhere"), t.p(".env")).unwrap();
    let _ = t.child_env(&["--report", "r.json"]);
    assert_eq!(t.report("r.json")["files"][0]["state"], "absent");
}

#[test]
fn no_env_reads_nothing_and_tells_the_child() {
    let t = Launch::new();
    t.file(".env", "X=1\n");
    let (env, _) = t.child_env(&["--no-env", "--report", "r.json"]);
    assert_eq!(get(&env, "X"), None);
    assert_eq!(get(&env, "AGENT_BUNDLE_ENV_FILE"), Some("none"));
    assert_eq!(t.report("r.json"), json!({"applied": [], "files": []}));
}

#[test]
fn no_env_keeps_a_declared_file_list_for_the_child() {
    let t = Launch::new().host("AGENT_BUNDLE_ENV_FILE", "mine.env");
    t.file(".env", "X=1\n");
    t.file("mine.env", "Y=1\n");
    let (env, _) = t.child_env(&["--no-env"]);
    assert_eq!(get(&env, "AGENT_BUNDLE_ENV_FILE"), Some("mine.env"));
    assert_eq!(get(&env, "Y"), None, "still no file read");
}

#[test]
fn report_names_sorted_like_locale_compare() {
    let t = Launch::new();
    t.file(".env", "b=1\nAB=1\nA1=1\nA_B=1\nA=1\na=1\n_Z=1\n");
    let _ = t.child_env(&["--report", "r.json"]);
    assert_eq!(
        t.report("r.json")["applied"],
        json!(["_Z", "a", "A", "A_B", "A1", "AB", "b"])
    );
}

#[test]
fn report_is_replaced_atomically_and_never_on_stdout() {
    let t = Launch::new();
    t.file(".env", "A=1\n");
    t.file("out/r.json", "old contents");
    let out = t.run(&["-vv", "--report", "out/r.json", "--", "true"]);
    assert!(out.status == Some(0));
    assert!(out.stdout.is_empty(), "stdout belongs to the child");
    assert_eq!(t.report("out/r.json")["applied"], json!(["A"]));
    let names: Vec<_> = fs::read_dir(t.p("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec!["r.json"], "no temp file left behind");
}

#[test]
fn unwritable_report_exits_1_before_launching() {
    let t = Launch::new();
    let out = t.run(&["--report", "no/such/dir/r.json", "--", "touch", "ran"]);
    assert_eq!(out.status, Some(1));
    assert!(out.stderr.contains("no/such/dir/r.json"));
    assert!(!t.p("ran").exists());
}

#[test]
fn verbose_summary_names_and_counts() {
    let t = Launch::new().host("HOST", "h");
    t.file(".env", "A=1\nB=2\nHOST=x\n");
    let out = t.run(&["-v", "--", "true"]);
    assert!(out.status == Some(0));
    assert!(out.stdout.is_empty());
    let err = out.stderr;
    let d = t.path().display();
    assert!(
        err.contains(&format!("{d}/.env: loaded, 2 applied")),
        "{err}"
    );
    assert!(err.contains(&format!("{d}/.env.local: absent")), "{err}");
    assert!(err.contains("applied 2 variables: A, B"), "{err}");
    assert!(err.contains("(the fallback)"), "{err}");
    // Without -v: nothing.
    let out = t.run(&["--", "true"]);
    assert!(out.stderr.is_empty());
    // -vv traces each key with its file and line.
    let out = t.run(&["-vv", "--", "true"]);
    let err = out.stderr;
    assert!(
        err.contains(&format!("HOST: {d}/.env line 3: skipped")),
        "{err}"
    );
}

#[test]
fn canary_values_never_in_report_or_stderr() {
    const C: &str = "CANARY7f3e";
    let t = Launch::new()
        .host("HOSTVAL", &format!("{C}host"))
        .host("RESERVED", &format!("{C}hostres"))
        .host("DEF", &format!("{C}def"));
    t.file(
        ".env",
        format!("A={C}a\nRESERVED={C}file\nDEF={C}over\nQ=\"{C}q\"\n"),
    );
    t.file(".env.local", format!("A={C}local\nB='{C}b'\n"));
    t.file(
        "m.json",
        format!(r#"{{"DEF": "{C}def", "OTHER": "{C}other"}}"#),
    );
    fs::create_dir(t.p("dir.env")).unwrap();
    for v in ["-v", "-vv"] {
        for platform in ["linux", "win32"] {
            let out = t.run(&[
                v,
                "--platform",
                platform,
                "--manifest-env",
                "m.json",
                "--report",
                "r.json",
                "--",
                "true",
            ]);
            assert!(out.status == Some(0));
            let err = out.stderr;
            assert!(err.contains("DEF") || v == "-v", "trace names keys: {err}");
            assert!(!err.contains(C), "{v} {platform}: {err}");
            let report = fs::read_to_string(t.p("r.json")).unwrap();
            assert!(!report.contains(C), "{report}");
            assert!(report.contains("\"DEF\""), "{report}");
        }
    }
    // Unreadable files and explicit lists too.
    let t = t.host("AGENT_BUNDLE_ENV_FILE", ".env:dir.env:.env.local");
    let out = t.run(&["-vv", "--report", "r.json", "--", "true"]);
    let err = out.stderr;
    assert!(err.contains("dir.env"), "{err}");
    assert!(!err.contains(C), "{err}");
    assert!(!fs::read_to_string(t.p("r.json")).unwrap().contains(C));
}

#[test]
fn manifest_syntax_error_names_file_and_position_only() {
    let t = Launch::new();
    t.file("m.json", "{\n  \"TOKEN\": s3cretCANARY\n}\n");
    let out = t.run(&["--manifest-env", "m.json", "--", "touch", "ran"]);
    assert_eq!(out.status, Some(1));
    let err = out.stderr;
    assert!(err.contains("m.json") && err.contains("line 2"), "{err}");
    assert!(!err.contains("CANARY"), "{err}");
    assert!(!t.p("ran").exists(), "not launched");
}

#[test]
fn manifest_non_string_names_key_not_value() {
    let t = Launch::new();
    t.file("m.json", r#"{"OK": "CANARYok", "PORT": 80801234}"#);
    let out = t.run(&["--manifest-env", "m.json", "--", "touch", "ran"]);
    assert_eq!(out.status, Some(1));
    let err = out.stderr;
    assert!(err.contains("m.json") && err.contains("PORT"), "{err}");
    assert!(
        !err.contains("80801234") && !err.contains("CANARY"),
        "{err}"
    );
    assert!(!t.p("ran").exists());
}

#[test]
fn a_manifest_that_is_not_an_object_is_refused_without_its_values() {
    let t = Launch::new();
    t.file("arr.json", r#"["CANARY"]"#);
    let out = t.run(&["--manifest-env", "arr.json", "--", "true"]);
    assert_eq!(out.status, Some(1));
    assert!(!out.stderr.contains("CANARY"));
}

#[test]
fn a_missing_manifest_is_an_error_naming_it() {
    let t = Launch::new();
    let out = t.run(&["--manifest-env", "missing.json", "--", "true"]);
    assert_eq!(out.status, Some(1));
    assert!(out.stderr.contains("missing.json"));
}

#[test]
fn non_utf8_env_file_is_read_lossily() {
    let t = Launch::new();
    t.file(".env", b"K=a\xffb\nL=ok\n");
    let out = t.run(&["--report", "r.json", "--", "env", "-0"]);
    assert!(out.status == Some(0));
    let want: &[u8] = b"K=a\xef\xbf\xbdb";
    assert!(out.stdout_bytes.split(|&b| b == 0).any(|e| e == want));
    assert_eq!(t.report("r.json")["files"][0]["state"], "loaded");
    assert_eq!(t.report("r.json")["files"][0]["applied"], 2);
}

#[test]
fn nul_in_value_is_cut() {
    let t = Launch::new();
    t.file(".env", b"K=ab\0cd\nL=ok\n");
    let (env, _) = t.child_env(&[]);
    assert_eq!(get(&env, "K"), Some("ab"));
    assert_eq!(get(&env, "L"), Some("ok"));
}

#[test]
fn stdin_and_stdout_reach_the_child_untouched() {
    // A few MiB covering every byte value, in a non-periodic order.
    let mut data = Vec::with_capacity(3 << 20);
    let mut x: u32 = 0x1234_5678;
    for i in 0..(3usize << 20) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        data.push(if i < 256 { i as u8 } else { (x >> 11) as u8 });
    }
    let t = Launch::new();
    t.file(".env", "A=1\n");
    let out = t.launch(&["-vv", "--", "cat"]).stdin(&data).status(0).run();
    let got = out.stdout_bytes;
    assert_eq!(got.len(), data.len());
    assert!(got == data, "bytes differ");
}

#[test]
fn command_not_found_127_not_executable_126() {
    let t = Launch::new();
    let out = t.run(&["--", "agentenv-no-such-command-xyz"]);
    assert_eq!(out.status, Some(127));
    let err = out.stderr;
    assert!(
        err.contains("agentenv-no-such-command-xyz") && err.contains("not found"),
        "{err}"
    );
}

#[test]
fn a_command_that_is_not_executable_is_126() {
    let t = Launch::new();
    t.file("script.sh", "#!/bin/sh\necho hi\n");
    fs::set_permissions(t.p("script.sh"), fs::Permissions::from_mode(0o644)).unwrap();
    let out = t.run(&["--", "./script.sh"]);
    assert_eq!(out.status, Some(126));
    assert!(out.stderr.contains("script.sh"));
}

#[test]
fn a_directory_as_the_command_is_126() {
    let t = Launch::new();
    fs::create_dir(t.p("adir")).unwrap();
    let out = t.run(&["--", "./adir"]);
    assert_eq!(out.status, Some(126));
}

#[test]
fn child_status_and_arguments_pass_through() {
    let t = Launch::new();
    let out = t.run(&[
        "--",
        "sh",
        "-c",
        "printf '%s|' \"$@\"; exit 9",
        "sh",
        "-v",
        "--x",
        "",
    ]);
    assert_eq!(out.status, Some(9));
    assert_eq!(out.stdout_bytes, b"-v|--x||");
}

#[test]
fn child_path_lookup_uses_the_filled_path() {
    let t = Launch::new();
    t.file("bin/hello-agentenv", "#!/bin/sh\necho filled\n");
    fs::set_permissions(t.p("bin/hello-agentenv"), fs::Permissions::from_mode(0o755)).unwrap();
    // PATH is reserved by the host; a gap variable is not.
    t.file(".env", format!("EXTRA={}\n", t.p("bin").display()));
    let out = t.run(&["--", "sh", "-c", "PATH=$EXTRA:$PATH; hello-agentenv"]);
    assert_eq!(out.stdout_bytes, b"filled\n");
}

#[test]
fn endless_file_is_unreadable_not_a_hang() {
    let t = Launch::new().host("AGENT_BUNDLE_ENV_FILE", "/dev/zero:ok.env");
    t.file("ok.env", "OK=1\n");
    let (env, out) = t.child_env(&["--report", "r.json"]);
    assert_eq!(get(&env, "OK"), Some("1"));
    let r = t.report("r.json");
    assert_eq!(
        r["files"][0],
        json!({"path": "/dev/zero", "state": "unreadable"})
    );
    assert!(out.stderr.contains("/dev/zero"));
}

#[test]
fn process_substitution_is_read() {
    // A pipe (what `<(cmd)` gives) is read like a file, as Node does.
    let t = Launch::new();
    let script = format!(
        "printf 'FROM_PIPE=1\\n' > {fifo} 2>/dev/null & AGENT_BUNDLE_ENV_FILE={fifo} exec {bin} launch -- env -0",
        fifo = t.p("fifo").display(),
        bin = support::agentenv_bin().display()
    );
    let st = Command::new("mkfifo").arg(t.p("fifo")).status().unwrap();
    assert!(st.success());
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .env_clear()
        .env("PATH", PATH)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(get(&parse_env0(&out.stdout), "FROM_PIPE"), Some("1"));
}

#[test]
fn command_replaces_the_process() {
    // Same PID: signals and stdio reach the command, no agentenv in between.
    let t = Launch::new();
    let child = t
        .launch(&["--", "sh", "-c", "echo $$"])
        .into_command()
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), pid.to_string());
}

#[test]
fn a_broken_env_file_is_warned_by_file_line_and_key_never_value() {
    let t = Launch::new();
    t.file(
        ".env",
        "A=1\nghp_SECRETLINE1 no equals\nT=\"v1SECRET\" trailing2SECRET\nA=dup\n",
    );
    t.file(
        ".env.local",
        "OK=yes\nOPEN='v3SECRET\nLOST1=v4SECRET\nexport LOST2=v5SECRET\n",
    );
    let (env, out) = t.child_env(&[]);
    // The layer's semantics stay the reference's: what the grammar reads
    // is applied, the child starts.
    assert_eq!(get(&env, "A"), Some("dup"));
    assert_eq!(get(&env, "OK"), Some("yes"));
    assert_eq!(get(&env, "LOST1"), None);
    let err = out.stderr;
    assert!(!err.contains("SECRET"), "a value leaked: {err}");
    let env_p = t.p(".env").display().to_string();
    let local_p = t.p(".env.local").display().to_string();
    let expect = [
        format!("agentenv: warning: launch: {env_p}:2: ignored line: not an assignment (no '=')"),
        format!("agentenv: warning: launch: {env_p}:3: double-quoted value of T has text after the closing quote"),
        format!("agentenv: warning: launch: {local_p}:2: unterminated single quote for OPEN swallowed 2 lines (the value runs to the end of the file; 2 assignments on them lost: LOST1, LOST2)"),
    ];
    for e in &expect {
        assert!(err.contains(e.as_str()), "missing {e:?} in:\n{err}");
    }
    // A duplicate key is no breakage (layered files repeat keys on purpose).
    assert!(!err.contains("duplicate"), "{err}");
    assert_eq!(err.lines().count(), 3, "{err}");
    // -q silences them.
    let (env, out) = t.child_env(&["-q"]);
    assert_eq!(get(&env, "OK"), Some("yes"));
    assert!(out.stderr.is_empty(), "{}", out.stderr);
}

#[test]
fn a_file_the_grammar_reads_whole_gives_no_warning() {
    let clean = Launch::new();
    clean.file(
        ".env",
        "A=1
# c

B='multi\nline'
",
    );
    let (_, out) = clean.child_env(&[]);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
}
