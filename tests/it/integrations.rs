//! Integrations (docs/render.md#agentenvs-own-formats-github-and-docker,
//! docs/integrations.md#integrations): `--format github` and `--format docker` read back
//! by readers that follow their consumers' parsing code, on generated values,
//! through the library and the binary.
//!
//! - [`runner_read`] follows the GitHub Actions runner's handling of the
//!   `GITHUB_ENV` file command (actions/runner,
//!   `src/Runner.Worker/FileCommandManager.cs`, `SetEnvFileCommand` and, in
//!   current versions, `EnvFileKeyValuePairs`): the whole file as text, empty
//!   lines skipped, a line is `NAME=value` when its first `=` comes before
//!   its first `<<`, else `NAME<<DELIM` and the value is everything up to the
//!   line that equals DELIM (the newline before it excluded; a value line
//!   without a newline is an error); lines end at LF, and on Windows runners
//!   also at CRLF; `NODE_OPTIONS` (any case) is refused. Run in both line
//!   modes.
//! - [`kvfile_read`] follows docker/cli's env-file parser (`pkg/kvfile`,
//!   used by `opts.ParseEnvFile` for `docker run --env-file`): Go's
//!   `bufio.ScanLines` (LF, one CR before it dropped, 64 KiB buffer), each
//!   line valid UTF-8 or the whole file fails, a BOM dropped on line 1,
//!   leading Unicode whitespace trimmed, `#` lines and empty lines skipped,
//!   the name up to the first `=` (not empty, no space or tab, else the
//!   whole file fails), the value literal to the end of the line.
//!
//! Both are written from reading that code, not copied from it.

use crate::support;

use agentenv::render::{render_checked, Format, View};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use support::{Rng, Run, Tree};

// ---------------------------------------------------------------- readers

/// One line of `text` from byte `*pos`, as the runner's `ReadLine`: the
/// line and the length of the newline that ended it (0 at end of text).
fn runner_line<'a>(text: &'a str, pos: &mut usize, windows: bool) -> Option<(&'a str, usize)> {
    if *pos >= text.len() {
        return None;
    }
    let rest = &text[*pos..];
    let Some(lf) = rest.find('\n') else {
        *pos = text.len();
        return Some((rest, 0));
    };
    if windows {
        if let Some(crlf) = rest.find("\r\n") {
            if crlf < lf {
                *pos += crlf + 2;
                return Some((&rest[..crlf], 2));
            }
        }
    }
    *pos += lf + 1;
    Some((&rest[..lf], 1))
}

/// The variables the runner sets from a `GITHUB_ENV` file, or its error.
fn runner_read(text: &str, windows: bool) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    let mut pos = 0;
    while let Some((line, _)) = runner_line(text, &mut pos, windows) {
        if line.is_empty() {
            continue;
        }
        let set = |out: &mut BTreeMap<String, String>, k: &str, v: &str| {
            // The runner's block list: an error annotation, nothing set.
            if !k.eq_ignore_ascii_case("NODE_OPTIONS") {
                out.insert(k.to_string(), v.to_string());
            }
        };
        let eq = line.find('=');
        let hd = line.find("<<");
        match (eq, hd) {
            (Some(e), h) if h.is_none_or(|h| e < h) => {
                set(&mut out, &line[..e], &line[e + 1..]);
            }
            (_, Some(h)) => {
                let (name, delim) = (&line[..h], &line[h + 2..]);
                if name.is_empty() || delim.is_empty() {
                    return Err(format!("empty name or delimiter: {line:?}"));
                }
                let start = pos;
                let mut end = pos;
                loop {
                    match runner_line(text, &mut pos, windows) {
                        None => return Err(format!("delimiter {delim:?} not found")),
                        Some((l, _)) if l == delim => break,
                        Some((_, 0)) => return Err("EOF marker missing new line".into()),
                        Some((_, nl)) => end = pos - nl,
                    }
                }
                let value = if end > start { &text[start..end] } else { "" };
                set(&mut out, name, value);
            }
            _ => return Err(format!("invalid line {line:?}")),
        }
    }
    Ok(out)
}

/// Go's `unicode.IsSpace`.
fn go_space(c: char) -> bool {
    c.is_whitespace()
}

/// What `docker run --env-file` sets from `bytes`, in file order, or the
/// error that makes docker refuse the file.
fn kvfile_read(bytes: &[u8]) -> Result<Vec<(String, String)>, String> {
    const BUF: usize = 64 * 1024;
    let mut out = Vec::new();
    let mut rest = bytes;
    let mut n = 0;
    while !rest.is_empty() {
        n += 1;
        let (raw, next) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => {
                if i + 1 > BUF {
                    return Err(format!("line {n}: token too long"));
                }
                (&rest[..i], &rest[i + 1..])
            }
            None => {
                if rest.len() > BUF {
                    return Err(format!("line {n}: token too long"));
                }
                (rest, &rest[rest.len()..])
            }
        };
        rest = next;
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let Ok(mut line) = std::str::from_utf8(raw) else {
            return Err(format!("invalid utf8 bytes at line {n}"));
        };
        if n == 1 {
            line = line.strip_prefix('\u{feff}').unwrap_or(line);
        }
        let line = line.trim_start_matches(go_space);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (line, None),
        };
        if key.is_empty() {
            return Err(format!("line {n}: no variable name"));
        }
        if key.contains([' ', '\t']) {
            return Err(format!("line {n}: variable contains whitespaces"));
        }
        if let Some(v) = value {
            out.push((key.to_string(), v.to_string()));
        }
    }
    Ok(out)
}

#[test]
fn readers_follow_their_consumers() {
    // The runner: heredoc value excludes the newline before the delimiter;
    // `=` before `<<` decides the form; CRLF only ends a line on Windows.
    let t = "A=x<<y\nB<<EOF\nl1\n\nEOF\n\nC<<D=x\nv\nD=x\nE=a\r\n";
    let lin = runner_read(t, false).unwrap();
    assert_eq!(lin["A"], "x<<y");
    assert_eq!(lin["B"], "l1\n");
    assert_eq!(lin["C"], "v");
    assert_eq!(lin["E"], "a\r");
    assert_eq!(runner_read(t, true).unwrap()["E"], "a");
    assert!(runner_read("X<<EOF\nv\n", false).is_err());
    assert!(runner_read("X<<EOF\nv", false).is_err());
    assert!(!runner_read("NODE_OPTIONS=x\n", false)
        .unwrap()
        .contains_key("NODE_OPTIONS"));
    assert!(runner_read("junk\n", false).is_err());
    // docker: literal values, trailing CR dropped, quotes kept, comments.
    let d = b"\xef\xbb\xbf  A= \"q\" \r\n# c\n\nB=x=y\nNOVALUE\n";
    assert_eq!(
        kvfile_read(d).unwrap(),
        [
            ("A".to_string(), " \"q\" ".to_string()),
            ("B".to_string(), "x=y".to_string())
        ]
    );
    assert!(kvfile_read(b"A B=1\n").is_err());
    assert!(kvfile_read(b"=1\n").is_err());
    assert!(kvfile_read(b"A=\xff\n").is_err());
    let long = format!("A={}\n", "x".repeat(64 * 1024));
    assert!(kvfile_read(long.as_bytes()).is_err());
}

// -------------------------------------------------------------- generation

/// Value fragments: delimiter look-alikes, `=`, `<<`, quotes, spaces,
/// line breaks, comment marks, non-ASCII and bytes that are not UTF-8.
const FRAGMENTS: &[&[u8]] = &[
    b"AGENTENV_EOF",
    b"AGENTENV_EOF_1",
    b"AGENTENV_EOF_2",
    b"EOF",
    b"ghadelimiter_x",
    b"=",
    b"==",
    b"<<",
    b"<<EOF",
    b"NAME=v",
    b" ",
    b"  ",
    b"\t",
    b"\n",
    b"\n\n",
    b"\r",
    b"\r\n",
    b"#",
    b"'",
    b"\"",
    b"$HOME",
    b"\\",
    b"x",
    b"value",
    "é".as_bytes(),
    "\u{feff}".as_bytes(),
    "\u{85}".as_bytes(),
    "\u{2028}".as_bytes(),
    "😀".as_bytes(),
    b"\x01",
    b"\x7f",
    b"\xff",
    b"\xc3",
];

/// Names: mostly ordinary, some that each format must refuse.
const ODD_NAMES: &[&[u8]] = &[
    b"A=B",
    b"A<<B",
    b"<<",
    b"LT<",
    b"<",
    b" LEAD",
    b"TRAIL ",
    b"MID DLE",
    b"TAB\tX",
    b"#HASH",
    b"H#ASH",
    b"NL\nX",
    b"CR\rX",
    "é".as_bytes(),
    "\u{feff}BOM".as_bytes(),
    "NBSP\u{a0}".as_bytes(),
    b"CTL\x01",
    b"BAD\xff",
    b"lower.dot-dash",
    b"NODE_OPTIONS",
    b"node_Options",
];

fn gen_value(r: &mut Rng) -> Vec<u8> {
    let mut v = Vec::new();
    if r.chance(10) {
        // A value that is exactly a delimiter line between other lines.
        v.extend_from_slice(b"a\nAGENTENV_EOF\nb");
        return v;
    }
    for _ in 0..r.below(7) {
        v.extend_from_slice(FRAGMENTS[r.below(FRAGMENTS.len())]);
    }
    v
}

fn gen_view(r: &mut Rng, i: usize) -> View {
    let mut vars = Vec::new();
    for j in 0..1 + r.below(8) {
        let name = if r.chance(20) {
            ODD_NAMES[r.below(ODD_NAMES.len())].to_vec()
        } else {
            format!("V{i}_{j}").into_bytes()
        };
        vars.push((OsString::from_vec(name), OsString::from_vec(gen_value(r))));
    }
    let mut v = View::of(vars);
    if r.chance(30) {
        v.removals.push(OsString::from(format!("GONE{i}")));
    }
    v
}

/// Our github format: what the runner cannot get back.
fn github_unrepresentable(name: &[u8], value: &[u8]) -> bool {
    let (Ok(n), Ok(v)) = (std::str::from_utf8(name), std::str::from_utf8(value)) else {
        return true;
    };
    n.is_empty()
        || n.contains(['=', '\n', '\r'])
        || n.contains("<<")
        || n.starts_with('\u{feff}')
        || v.contains('\r')
        || (n.ends_with('<') && v.contains('\n'))
        || n.eq_ignore_ascii_case("NODE_OPTIONS")
}

/// Our docker format: what docker/cli cannot get back.
fn docker_unrepresentable(name: &[u8], value: &[u8]) -> bool {
    let (Ok(n), Ok(v)) = (std::str::from_utf8(name), std::str::from_utf8(value)) else {
        return true;
    };
    n.is_empty()
        || n.contains(char::is_whitespace)
        || n.starts_with('#')
        || n.contains(['=', '\0'])
        || n.starts_with('\u{feff}')
        || v.contains('\n')
        || v.ends_with('\r')
        || n.len() + 1 + v.len() > 64 * 1024 - 1
}

/// Check one rendering against its reader: every representable value
/// exact, every other name omitted, nothing else read.
fn check(format: Format, view: &View) -> Result<(), String> {
    let r = render_checked(format, view);
    let omitted: Vec<&[u8]> = r.omitted.iter().map(|o| o.name.as_slice()).collect();
    let read: Vec<BTreeMap<String, String>> = match format {
        Format::Github => vec![runner_read(&r.text, false)?, runner_read(&r.text, true)?],
        Format::Docker => {
            let pairs = kvfile_read(r.text.as_bytes())?;
            vec![pairs.into_iter().collect()]
        }
        _ => unreachable!(),
    };
    let mut expect = BTreeMap::new();
    let mut last: BTreeMap<&[u8], &[u8]> = BTreeMap::new();
    for (k, v) in &view.assignments {
        last.insert(k.as_bytes(), v.as_bytes());
    }
    for (k, v) in last {
        let bad = match format {
            Format::Github => github_unrepresentable(k, v),
            _ => docker_unrepresentable(k, v),
        };
        if bad {
            if !omitted.contains(&k) {
                return Err(format!("{k:?} is unrepresentable but not reported"));
            }
        } else {
            if omitted.contains(&k) {
                return Err(format!("{k:?} is representable but was omitted"));
            }
            expect.insert(
                String::from_utf8(k.to_vec()).unwrap(),
                String::from_utf8(v.to_vec()).unwrap(),
            );
        }
    }
    for g in &view.removals {
        if !omitted.contains(&g.as_bytes()) {
            return Err(format!("removal {g:?} not reported"));
        }
    }
    for got in read {
        if got != expect {
            return Err(format!("read back {got:?}\nexpected {expect:?}"));
        }
    }
    Ok(())
}

#[test]
fn generated_values_round_trip_through_both_readers() {
    let seed = std::env::var("AGENTENV_INTEG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x17E6_2026_u64);
    let mut r = Rng(seed);
    let mut failures = Vec::new();
    let (mut heredocs, mut omitted) = (0usize, 0usize);
    for i in 0..3000 {
        let view = gen_view(&mut r, i);
        for f in [Format::Github, Format::Docker] {
            if let Err(e) = check(f, &view) {
                failures.push(format!("case {i} {}: {e}\nview {view:?}", f.name()));
            }
            let out = render_checked(f, &view);
            heredocs += out.text.matches("<<AGENTENV_EOF").count();
            omitted += out.omitted.len();
        }
    }
    assert!(
        failures.is_empty(),
        "seed {seed}: {} failures, first:\n{}",
        failures.len(),
        failures[0]
    );
    assert!(heredocs > 500 && omitted > 500, "{heredocs} {omitted}");
}

#[test]
fn delimiter_lookalikes_pick_the_next_delimiter() {
    let mut value = String::from("x");
    for _ in 0..5 {
        let view = View::of([(OsString::from("K"), OsString::from(&value))]);
        let r = render_checked(Format::Github, &view);
        assert_eq!(runner_read(&r.text, false).unwrap()["K"], value);
        value.push('\n');
        value.push_str(&agentenv::render::github_delimiter(&value));
    }
    assert!(value.ends_with("\nAGENTENV_EOF_4"), "{value:?}");
    // Lines that only contain the delimiter, or differ by spaces, are fine.
    let tricky = "AGENTENV_EOF \n AGENTENV_EOF\nAGENTENV_EOFX\n";
    let view = View::of([(OsString::from("K"), OsString::from(tricky))]);
    let text = render_checked(Format::Github, &view).text;
    assert!(text.starts_with("K<<AGENTENV_EOF\n"));
    assert_eq!(runner_read(&text, true).unwrap()["K"], tricky);
}

#[test]
fn docker_long_lines_fit_or_are_omitted() {
    for len in [64 * 1024 - 4, 64 * 1024 - 3, 64 * 1024 - 2, 64 * 1024] {
        let view = View::of([(OsString::from("K"), OsString::from("v".repeat(len)))]);
        check(Format::Docker, &view).unwrap();
    }
}

// ------------------------------------------------------ through the binary

const CANARY: &str = "zqCANARYinteg";

/// A store whose layers set values of every kind (each holding the
/// canary), plus one removal of an inherited variable.
fn store() -> Tree {
    let py = format!(
        "import json\nprint(json.dumps({{'ONE': ' {c} = << ', 'MULTI': '{c}\\nAGENTENV_EOF\\n', \
         'WITHCR': '{c}\\r', 'MIDCR': 'a\\r{c}', 'HASHY': '# {c}', 'QUOTED': '\"{c}\"', \
         'INHERITED': None}}))\n",
        c = CANARY
    );
    let mut plain = b"NONUTF=".to_vec();
    plain.extend_from_slice(CANARY.as_bytes());
    plain.extend_from_slice(b"\xff\n");
    Tree::session()
        .file("home/.agents/env.py", py)
        .file("home/.agents/pre.env", plain)
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `env --diff --format FORMAT ARGS` with INHERITED set; no canary on
/// stderr.
fn env_diff(t: &Tree, format: &str, args: &[&str]) -> Run {
    t.agentenv(["env", "--diff", "--format", format])
        .args(args)
        .env("INHERITED", "x")
        .stderr_lacks("zqCANARY")
}

fn github_reads_back(verbosity: &[&str]) {
    let text = env_diff(&store(), "github", verbosity)
        .stderr_has("agentenv: warning: 'WITHCR' left out of the github format: its value holds a CR")
        .stderr_has("agentenv: warning: 'MIDCR' left out of the github format: its value holds a CR")
        .stderr_has("agentenv: warning: 'NONUTF' left out of the github format: its value is not UTF-8")
        .stderr_has("agentenv: warning: 'INHERITED' left out of the github format: it is removed, and the format cannot express a removal")
        .run()
        .stdout;
    let got = runner_read(&text, false).unwrap();
    assert_eq!(got["ONE"], format!(" {CANARY} = << "));
    assert_eq!(got["MULTI"], format!("{CANARY}\nAGENTENV_EOF\n"));
    assert_eq!(got["HASHY"], format!("# {CANARY}"));
    assert_eq!(got["QUOTED"], format!("\"{CANARY}\""));
    for gone in ["WITHCR", "MIDCR", "NONUTF", "INHERITED"] {
        assert!(!got.contains_key(gone), "{gone}");
    }
    assert_eq!(runner_read(&text, true).unwrap(), got);
}

#[test]
fn env_format_github_through_the_binary() {
    github_reads_back(&[]);
}

#[test]
fn env_format_github_through_the_binary_at_vv() {
    github_reads_back(&["-vv"]);
}

#[test]
fn env_format_github_quiet_silences_the_warnings() {
    store()
        .agentenv(["env", "--diff", "--format", "github", "-q"])
        .stderr("")
        .run();
}

#[test]
fn env_format_docker_through_the_binary() {
    let mut run = env_diff(&store(), "docker", &[]);
    for gone in ["MULTI", "WITHCR", "NONUTF"] {
        run = run.stdout_has(format!(
            "# {gone} omitted: not representable in a docker env-file\n"
        ));
    }
    for name in ["MULTI", "WITHCR", "NONUTF", "INHERITED"] {
        run = run.stderr_has(format!("warning: '{name}' left out of the docker format"));
    }
    let o = run.run();
    let got: BTreeMap<String, String> = kvfile_read(&o.stdout_bytes).unwrap().into_iter().collect();
    assert_eq!(got["ONE"], format!(" {CANARY} = << "));
    assert_eq!(got["MIDCR"], format!("a\r{CANARY}"));
    assert_eq!(got["HASHY"], format!("# {CANARY}"));
    assert_eq!(got["QUOTED"], format!("\"{CANARY}\""));
    for gone in ["MULTI", "WITHCR", "NONUTF"] {
        assert!(!got.contains_key(gone), "{gone}");
    }
}

/// `dotenv parse --format FORMAT` of a file holding the canary.
fn dotenv_parse(format: &str) -> Run {
    let t = Tree::new().file(
        ".env",
        format!("A=\"l1\\nl2 {CANARY}\"\nB=' x=<<y '\nC=\"cr\\r{CANARY}\"\n"),
    );
    t.host(["dotenv", "parse", "--format", format, &t.arg(".env")])
}

#[test]
fn dotenv_parse_as_github() {
    let o = dotenv_parse("github")
        .stderr_has("'C' left out of the github format")
        .stderr_lacks(CANARY)
        .run();
    let got = runner_read(&o.stdout, false).unwrap();
    assert_eq!(got["A"], format!("l1\nl2 {CANARY}"));
    assert_eq!(got["B"], " x=<<y ");
    assert!(!got.contains_key("C"));
}

#[test]
fn dotenv_parse_as_docker() {
    let o = dotenv_parse("docker").stderr_lacks(CANARY).run();
    let got: BTreeMap<_, _> = kvfile_read(&o.stdout_bytes).unwrap().into_iter().collect();
    assert_eq!(got["B"], " x=<<y ");
    assert_eq!(got["C"], format!("cr\r{CANARY}"));
    assert!(!got.contains_key("A"));
}

#[test]
fn an_unknown_format_lists_agentenvs_own_too() {
    dotenv_parse("gh")
        .status(1)
        .stderr_has("; agentenv's own: docker, github")
        .run();
}

// ------------------------------------------------------------ init claude

/// A user settings file with other keys (not sorted), hooks of other
/// events and another SessionStart entry, in Claude Code's own 2-space
/// style.
const SETTINGS: &str = r#"{
  "permissions": {
    "allow": [
      "Bash(npm run test:*)"
    ],
    "deny": []
  },
  "env": {
    "ZED": "1",
    "ALPHA": "zqCANARYsettings"
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "echo pre"
          }
        ]
      }
    ],
    "SessionStart": [
      {
        "matcher": "startup",
        "hooks": [
          {
            "type": "command",
            "command": "echo started",
            "timeout": 5
          }
        ]
      }
    ],
    "Stop": []
  },
  "model": "opus"
}
"#;

/// `agentenv init claude ARGS` with `HOME` (and the working directory) at
/// `$W/home`.
fn init(t: &Tree, args: &[&str]) -> Run {
    t.command(support::agentenv_bin())
        .with(|c| {
            c.env_clear();
        })
        .env("HOME", t.path("home"))
        .env("PATH", "/usr/bin:/bin")
        .cwd("home")
        .args(["init", "claude"])
        .args(args)
}

mod init_claude {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    const FILE: &str = "home/.claude/settings.json";

    /// SETTINGS, mode 0640.
    fn settings() -> Tree {
        let t = Tree::new().file(FILE, SETTINGS);
        std::fs::set_permissions(t.path(FILE), std::fs::Permissions::from_mode(0o640)).unwrap();
        t
    }

    /// The settings `init claude` wrote are SETTINGS with agentenv's
    /// entries added: every original byte kept in order, the hooks and
    /// deny rules there (checked by taking them out again elsewhere).
    fn assert_wired(text: &str) {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        let bin = support::agentenv_bin().display().to_string();
        assert_eq!(
            v["hooks"]["SessionStart"][1]["hooks"][0]["command"],
            format!("{bin}{}", agentenv::internals::cli::HOOK_ARGS)
        );
        assert_eq!(
            v["hooks"]["PreToolUse"][1]["hooks"][0]["command"],
            format!("{bin} hook claude pre-tool-use")
        );
        assert_eq!(
            v["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
            "echo pre"
        );
        assert_eq!(v["hooks"]["SessionStart"][0]["hooks"][0]["timeout"], 5);
        assert!(v["permissions"]["deny"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("Read(~/.agents/**)")));
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["permissions", "env", "hooks", "model"], "key order");
        // The untouched parts, byte for byte.
        for piece in [
            "{\n  \"permissions\": {\n    \"allow\": [\n      \"Bash(npm run test:*)\",\n      \"Bash(__agentenv_begin:*)\"\n    ],\n",
            "  \"env\": {\n    \"ZED\": \"1\",\n    \"ALPHA\": \"zqCANARYsettings\"\n  },\n",
            "\"Stop\": []\n  },\n  \"model\": \"opus\"\n}\n",
        ] {
            assert!(text.contains(piece), "{piece:?} in {text}");
        }
    }

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn dry_run_prints_the_result_and_writes_nothing() {
        let t = settings();
        let shown = init(&t, &["--dry-run"])
            .stderr_has("dry run: would have added")
            .run();
        assert_eq!(t.read(FILE), SETTINGS);
        init(&t, &[]).run();
        assert_eq!(shown.stdout, t.read(FILE), "the dry run showed the result");
    }

    #[test]
    fn edits_user_settings_keeping_everything_else() {
        let t = settings();
        init(&t, &[])
            .stdout("")
            .stderr_has(
                "agentenv: added agentenv's hooks and deny rules in $W/home/.claude/settings.json",
            )
            .stderr_has("--require-trust")
            .run();
        assert_wired(&t.read(FILE));
        assert_eq!(mode(&t.path(FILE)), 0o640, "mode kept");
    }

    #[test]
    fn again_changes_nothing_and_says_so() {
        let t = settings();
        init(&t, &[]).run();
        let wired = t.read(FILE);
        // The file is not even rewritten.
        let md = std::fs::metadata(t.path(FILE)).unwrap();
        init(&t, &["--user"]).stderr_has("already in").run();
        assert_eq!(t.read(FILE), wired);
        let again = std::fs::metadata(t.path(FILE)).unwrap();
        assert_eq!(again.modified().unwrap(), md.modified().unwrap());
        assert_eq!(again.ino(), md.ino());
    }

    #[test]
    fn remove_takes_only_agentenvs_entry() {
        let t = settings();
        init(&t, &[]).run();
        init(&t, &["--remove"]).run();
        assert_eq!(t.read(FILE), SETTINGS, "the original again");
        init(&t, &["--remove"])
            .stderr_has("none of agentenv's hooks")
            .run();
        assert_eq!(t.read(FILE), SETTINGS);
    }

    #[test]
    fn big_numbers_and_duplicate_keys_stay_as_they_are() {
        let body = "{\"env\":{\"TOKEN\":\"a\"},\"env\":{\"OTHER\":\"b\"},\"n\":12345678901234567890123,\"big\":100000000000000000001,\"f\":1e400}\n";
        let t = Tree::new().file(FILE, body);
        init(&t, &[]).run();
        let text = t.read(FILE);
        assert!(
            text.starts_with(body.trim_end().trim_end_matches('}')),
            "{text}"
        );
        init(&t, &["--remove"]).run();
        assert_eq!(t.read(FILE), body);
        // A duplicate on the way to agentenv's entries: refused, untouched.
        let body = "{\"hooks\": {},\n \"hooks\": {\"Stop\": []}}";
        let t = Tree::new().file(FILE, body);
        init(&t, &[])
            .status(1)
            .stderr_has("the key \"hooks\" appears twice in one object (again at line 2, column 2)")
            .stderr_has("the file was not changed")
            .run();
        assert_eq!(t.read(FILE), body);
    }

    #[test]
    fn a_project_link_out_of_the_project_is_refused() {
        let t = Tree::new()
            .file("home/.docker/config.json", "{\"auths\": {}}")
            .dir("home/repo/.claude");
        std::os::unix::fs::symlink(
            "../../.docker/config.json",
            t.path("home/repo/.claude/settings.json"),
        )
        .unwrap();
        init(&t, &["--project", "repo"])
            .status(1)
            .stderr_has("leads out of the project")
            .run();
        assert_eq!(t.read("home/.docker/config.json"), "{\"auths\": {}}");
        // A .claude directory that is such a link too.
        let t = Tree::new()
            .file("home/elsewhere/settings.json", "{}")
            .dir("home/repo");
        std::os::unix::fs::symlink(t.path("home/elsewhere"), t.path("home/repo/.claude")).unwrap();
        init(&t, &["--project", "repo"]).status(1).run();
        assert_eq!(t.read("home/elsewhere/settings.json"), "{}");
        // A link inside the project is followed.
        let t = Tree::new()
            .file("home/repo/conf/claude.json", "{}")
            .dir("home/repo/.claude");
        std::os::unix::fs::symlink(
            "../conf/claude.json",
            t.path("home/repo/.claude/settings.json"),
        )
        .unwrap();
        init(&t, &["--project", "repo"]).run();
        assert!(t
            .read("home/repo/conf/claude.json")
            .contains("pre-tool-use"));
    }

    #[test]
    fn settings_values_never_reach_stderr() {
        let t = settings();
        init(&t, &[]).stderr_lacks("zqCANARY").run();
        init(&t, &["--remove", "-vv"])
            .stderr_lacks("zqCANARY")
            .run();
    }

    #[test]
    fn a_new_file_is_0600_in_a_0700_dir_with_an_absolute_command() {
        let t = Tree::new().dir("home");
        init(&t, &[]).run();
        assert_eq!(mode(&t.path(FILE)), 0o600);
        assert_eq!(mode(&t.path("home/.claude")), 0o700);
        let v: serde_json::Value = serde_json::from_str(&t.read(FILE)).unwrap();
        assert!(v["hooks"]["SessionStart"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .starts_with('/'));
    }

    #[test]
    fn project_writes_the_bare_name_in_dir() {
        let t = Tree::new().dir("home/repo");
        init(&t, &["--project", "repo"]).run();
        let p: serde_json::Value =
            serde_json::from_str(&t.read("home/repo/.claude/settings.json")).unwrap();
        assert_eq!(
            p["hooks"]["SessionStart"][0]["hooks"][0]["command"],
            format!("agentenv{}", agentenv::internals::cli::HOOK_ARGS)
        );
    }

    #[test]
    fn user_and_project_together_are_a_usage_error() {
        let t = Tree::new().dir("home/repo");
        init(&t, &["--user", "--project", "repo"]).status(2).run();
    }

    #[test]
    fn project_names_a_directory_that_exists() {
        let t = Tree::new().dir("home");
        init(&t, &["--project", "typo"]).status(1).run();
        assert!(!t.path("home/typo").exists());
    }

    /// Settings that are a symlink to `$W/home/dotfiles/claude.json`
    /// holding `body`.
    fn dotfiles(body: &str) -> Tree {
        let t = Tree::new()
            .file("home/dotfiles/claude.json", body)
            .dir("home/.claude");
        std::os::unix::fs::symlink(t.path("home/dotfiles/claude.json"), t.path(FILE)).unwrap();
        t
    }

    #[test]
    fn a_symlinked_settings_file_edits_the_target() {
        let t = dotfiles("{\"model\": \"opus\"}");
        init(&t, &[]).run();
        assert!(std::fs::symlink_metadata(t.path(FILE))
            .unwrap()
            .file_type()
            .is_symlink());
        let text = t.read("home/dotfiles/claude.json");
        assert!(
            text.starts_with("{\"model\": \"opus\", \"hooks\": {"),
            "{text}"
        );
        assert!(!text.ends_with('\n'), "no final newline before, none after");
    }

    #[test]
    fn crlf_and_a_bom_are_kept() {
        let t = dotfiles("\u{feff}{\r\n  \"model\": \"opus\"\r\n}\r\n");
        init(&t, &[]).run();
        let text = t.read("home/dotfiles/claude.json");
        assert!(
            text.starts_with("\u{feff}{\r\n  \"model\": \"opus\",\r\n"),
            "{text:?}"
        );
        assert!(!text.replace("\r\n", "").contains('\n') && text.ends_with("}\r\n"));
    }

    #[test]
    fn claude_config_dir_moves_the_user_settings() {
        let t = Tree::new().dir("home");
        t.command(support::agentenv_bin())
            .env("HOME", t.path("home"))
            .env("CLAUDE_CONFIG_DIR", t.path("home/cfg"))
            .args(["init", "claude", "--dry-run"])
            .stderr_has("$W/home/cfg/settings.json")
            .run();
    }

    #[test]
    fn invalid_json_is_refused_untouched() {
        for (body, line, col) in [
            ("{\n  \"env\": {\"K\": zqCANARYbad}\n}\n", 2, 16),
            ("{\n  \"env\": {\"K\": \"zqCANARYopen\n", 2, 29),
            ("{\"a\": 1,}\n", 1, 9),
            ("// comment zqCANARY\n{}", 1, 1),
        ] {
            let t = Tree::new().file(FILE, body);
            for args in [&[][..], &["--remove"][..], &["--dry-run"][..]] {
                let place = if col > 0 {
                    format!("at line {line}, column {col};")
                } else {
                    format!("at line {line}, column ")
                };
                init(&t, args)
                    .status(1)
                    .stdout("")
                    .stderr_has("$W/home/.claude/settings.json")
                    .stderr_has(place)
                    .stderr_lacks("zqCANARY")
                    .run();
                assert_eq!(t.read(FILE), body);
            }
        }
    }

    #[test]
    fn valid_json_of_the_wrong_shape_is_refused_by_key() {
        let t = Tree::new().file(FILE, "{\"hooks\": {\"SessionStart\": {}}}");
        init(&t, &[])
            .status(1)
            .stderr_has("\"hooks.SessionStart\" is not an array")
            .run();
        let t = Tree::new().file(FILE, "[]");
        init(&t, &[]).status(1).run();
        assert_eq!(t.read(FILE), "[]");
    }

    /// The hook command `init claude` writes, run the way Claude Code runs
    /// a command hook (`sh -c` with `CLAUDE_ENV_FILE` set), loads the
    /// session env into that file, and prints nothing.
    #[test]
    #[cfg_attr(
        any(missing = "bash", missing = "zsh", missing = "fish"),
        ignore = "needs bash, zsh and fish"
    )]
    fn the_hook_command_runs() {
        let t = Tree::session()
            .file(
                "home/.agents/env",
                "FROM_STORE='a b'\nSECRET=zqCANARYhook\n",
            )
            .file(
                "home/.agents/agentenv.toml",
                "[vars]\nFROM_STORE = { public = true }\n",
            );
        init(&t, &[]).run();
        let v: serde_json::Value = serde_json::from_str(&t.read(FILE)).unwrap();
        let command = v["hooks"]["SessionStart"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .to_string();
        // Run by sh (Claude Code's hook shell), and by the user's shell if
        // that is bash, zsh or fish: `--format auto` must still write export.
        let mut shells = vec![PathBuf::from("sh")];
        for sh in ["bash", "zsh", "fish"] {
            if let Some(p) = support::tool(sh) {
                shells.push(p);
            }
        }
        for (i, sh) in shells.iter().enumerate() {
            let env_file = t.path(&format!("claude-env-{i}.sh"));
            // PATH without agentenv: the absolute path still finds it.
            t.command(sh)
                .with(|c| {
                    c.env_clear();
                })
                .arg("-c")
                .arg(&command)
                .env("HOME", t.path("home"))
                .env("PATH", "/usr/bin:/bin")
                .env("AGENTS_SYSTEM_ROOT", t.path("no-system"))
                .env("CLAUDE_ENV_FILE", &env_file)
                .cwd("proj")
                .stdout("")
                .stderr("")
                .run();
            assert!(
                !t.read(&format!("claude-env-{i}.sh")).contains("zqCANARY"),
                "public only"
            );
            t.command("bash")
                .arg("-c")
                .arg(". \"$1\" && printf '%s' \"$FROM_STORE\"")
                .arg("_")
                .arg(&env_file)
                .stdout("a b")
                .run();
        }
    }
}

// ----------------------------------------------------------------- status

mod status {
    use super::*;

    /// A tree whose every layer would leave a marker `$W/ran` (and print a
    /// canary) if it ran.
    pub(super) fn tree() -> Tree {
        let t = Tree::session();
        let m = t.arg("ran");
        t.file(
            "home/.agents/env.py",
            format!("open('{m}', 'a').write('py')\nprint('{{\"K\": \"zqCANARYpy\"}}')\n"),
        )
        .file("home/.agents/pre.env", "PRE=zqCANARYpre\n")
        .file(
            "proj/.agents/local.env",
            format!("X=$(touch '{m}'; echo zqCANARYsh)\n"),
        )
        .file("home/.agents/overlays/ov/env", "O=zqCANARYov\n")
        .dir("proj/.agents/bin")
    }

    /// `agentenv ARGS` with the trust state in `$W/state`.
    fn agentenv(t: &Tree, args: &[&str]) -> Run {
        t.agentenv(args).env("XDG_STATE_HOME", t.path("state"))
    }

    fn status(t: &Tree, args: &[&str]) -> Run {
        agentenv(t, &["status"]).args(args)
    }

    /// `status --format json ARGS`, which must not run a layer or show a
    /// value.
    fn report(t: &Tree, args: &[&str]) -> serde_json::Value {
        let j = status(t, &["--format", "json"])
            .args(args)
            .secret("zqCANARY")
            .run()
            .json();
        assert!(!t.path("ran").exists(), "status ran a layer");
        j
    }

    #[test]
    fn reports_roots_stores_and_overlays() {
        let t = tree();
        let r = report(&t, &[]);
        let proj = t.arg("proj");
        assert_eq!(r["project_root"], proj);
        assert!(r["project_root_rule"]
            .as_str()
            .unwrap()
            .starts_with("the directory"));
        assert_eq!(r["hook_root"], proj);
        assert_eq!(r["hook_root_trust"], "not allowed");
        assert_eq!(r["scope"], "project");
        let stores = r["stores"].as_array().unwrap();
        assert_eq!(stores[0]["level"], "system");
        assert_eq!(stores[0]["state"], "absent");
        assert_eq!(stores[1]["state"], "present");
        assert_eq!(stores[2]["level"], "project");
        assert_eq!(stores[2]["trust"], "not allowed");
        assert_eq!(r["overlays"][0]["name"], "ov");
        assert!(r["bin"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b["exists"] == true));
        assert!(r["cache"]["lookups"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["hit"] == false));
    }

    #[test]
    fn reports_each_file_and_how_it_would_run() {
        let r = report(&tree(), &[]);
        let files = r["files"].as_array().unwrap();
        let find = |suffix: &str| {
            files
                .iter()
                .find(|f| f["path"].as_str().unwrap().ends_with(suffix))
                .unwrap_or_else(|| panic!("{suffix} not listed"))
                .clone()
        };
        let py = find("home/.agents/env.py");
        assert_eq!(
            (py["tier"].as_str(), py["kind"].as_str()),
            (Some("main"), Some("env.py"))
        );
        assert_eq!(py["exists"], true);
        let pre = find("home/.agents/pre.env");
        assert_eq!(
            (pre["tier"].as_str(), pre["evaluated"].as_str()),
            (Some("pre"), Some("native"))
        );
        assert_eq!(find("proj/.agents/local.env")["evaluated"], "bash");
        assert_eq!(find("proj/.agents/env.py")["exists"], false);
        assert_eq!(find("ov/env")["level"], "ov");
        // Walk order: pre tier first, overlays before their store.
        let order: Vec<&str> = files.iter().map(|f| f["path"].as_str().unwrap()).collect();
        let pos = |s: &str| order.iter().position(|p| p.ends_with(s)).unwrap();
        assert!(pos("home/.agents/pre.env") < pos("ov/env"));
        assert!(pos("ov/env") < pos("home/.agents/env"));
        assert!(pos("home/.agents/env") < pos("proj/.agents/local.env"));
    }

    #[test]
    fn says_a_cached_invocation_would_hit() {
        let t = tree();
        agentenv(&t, &["env", "--diff", "--cache", "--format", "export"]).run();
        std::fs::remove_file(t.path("ran")).unwrap();
        let text = status(&t, &[])
            .stdout_has("project  ")
            .secret("zqCANARY")
            .run()
            .stdout;
        assert!(!t.path("ran").exists());
        assert!(
            text.contains("env --diff --cache --format export: hit")
                || text.contains("env --diff --cache (auto: export): hit"),
            "{text}"
        );
    }

    #[test]
    fn reports_an_allowed_store() {
        let t = tree();
        agentenv(&t, &["allow"]).run();
        let r = report(&t, &[]);
        assert_eq!(r["stores"][2]["trust"], "allowed");
        assert_eq!(r["hook_root_trust"], "allowed");
    }

    #[test]
    fn reports_a_store_changed_since_it_was_allowed() {
        let t = tree();
        agentenv(&t, &["allow"]).run();
        t.write("proj/.agents/env", "NEW=1\n");
        let r = report(&t, &["--require-trust"]);
        assert_eq!(r["stores"][2]["trust"], "changed since it was allowed");
        assert_eq!(r["stores"][2]["state"], "skipped");
        assert_eq!(r["scope"], "user");
    }

    #[test]
    fn agentenv_require_trust_gates_as_the_flag_does() {
        let t = tree();
        agentenv(&t, &["allow"]).run();
        t.write("proj/.agents/env", "NEW=1\n");
        let ran = status(&t, &["--format", "json"])
            .env("AGENTENV_REQUIRE_TRUST", "1")
            .run();
        assert_eq!(ran.json()["stores"][2]["state"], "skipped");
        assert_eq!(
            ran.stderr.matches("changed since it was allowed").count(),
            1
        );
        assert!(!t.path("ran").exists());
    }

    #[test]
    fn dir_is_as_if_env_ran_there() {
        let t = tree().dir("other/.agents");
        let r = report(&t, &["../other"]);
        assert_eq!(r["project_root"], t.arg("other"));
    }

    #[test]
    fn agents_project_root_wins_and_says_so() {
        let t = tree().dir("other/.agents");
        t.agentenv(["status"])
            .env("AGENTS_PROJECT_ROOT", t.path("other"))
            .stdout_has("(chosen by: $AGENTS_PROJECT_ROOT)")
            .run();
    }

    #[test]
    fn an_untrusted_system_store_is_skipped_with_the_reason() {
        use std::os::unix::fs::PermissionsExt;
        let t = tree().dir("sys");
        std::fs::set_permissions(t.path("sys"), std::fs::Permissions::from_mode(0o777)).unwrap();
        let r = t
            .agentenv(["status", "--format", "json"])
            .env("AGENTS_SYSTEM_ROOT", t.path("sys"))
            .run()
            .json();
        assert_eq!(r["stores"][0]["state"], "skipped");
        let why = r["stores"][0]["why"].as_str().unwrap();
        assert!(
            why == "group- or world-writable" || why == "not owned by root",
            "{why}"
        );
    }

    #[test]
    fn a_bad_format_is_exit_1_listing_the_accepted_values() {
        // As for every command (docs/commands.md#commands).
        let t = tree();
        status(&t, &["--format", "yaml"])
            .status(1)
            .stderr_has("invalid value 'yaml' for '--format <F>'")
            .stderr_has("[possible values: text, json]")
            .run();
        assert!(!t.path("ran").exists());
    }

    #[test]
    fn a_bad_timeout_is_a_usage_error() {
        // As for env (the same scope flags).
        let t = tree();
        status(&t, &["--timeout", "0"])
            .status(2)
            .stderr("agentenv: error: --timeout must be a positive number of seconds\n")
            .run();
    }

    #[test]
    fn a_missing_dir_is_an_error() {
        let t = tree();
        status(&t, &["nope"]).status(1).run();
        assert!(!t.path("ran").exists());
    }
}

// ------------------------------------------- the real docker CLI, if any

/// A stand-in for the docker daemon: it answers the CLI's ping and, for
/// `POST …/containers/create`, writes the request body (which holds the
/// `Env` list the CLI parsed from `--env-file`) to the file named by its
/// first argument, then refuses the create so `docker run` ends there.
const FAKE_DAEMON: &str = r#"
import http.server, sys
out = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def reply(self, code, body, ctype="application/json"):
        self.send_response(code)
        self.send_header("Api-Version", "1.45")
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
    def do_HEAD(self):
        self.reply(200, b"OK", "text/plain")
    def do_GET(self):
        if self.path.endswith("/_ping"):
            self.reply(200, b"OK", "text/plain")
        else:
            self.reply(404, b'{"message": "not here"}')
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if "/containers/create" in self.path:
            with open(out + ".tmp", "wb") as f:
                f.write(body)
            import os
            os.replace(out + ".tmp", out)
            self.reply(500, b'{"message": "captured by the test daemon"}')
        else:
            self.reply(404, b'{"message": "not here"}')
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"#;

struct FakeDaemon {
    child: std::process::Child,
    host: String,
    body: std::path::PathBuf,
}

impl FakeDaemon {
    fn start(dir: &Path) -> FakeDaemon {
        use std::io::BufRead;
        let body = dir.join("create.json");
        let mut child = std::process::Command::new("python3")
            .arg("-c")
            .arg(FAKE_DAEMON)
            .arg(&body)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        FakeDaemon {
            child,
            host: format!("tcp://127.0.0.1:{}", line.trim()),
            body,
        }
    }

    /// The `Env` list docker sent for the last `run`.
    fn env(&self) -> Vec<String> {
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&self.body).unwrap()).unwrap();
        std::fs::remove_file(&self.body).unwrap();
        v["Env"]
            .as_array()
            .map(|a| a.iter().map(|e| e.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    }
}

impl Drop for FakeDaemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `docker run --env-file FILE` with the real CLI; the `Env` it sent, or
/// its error.
fn docker_run(d: &FakeDaemon, docker: &Path, file: &Path) -> Result<Vec<String>, String> {
    let o = std::process::Command::new(docker)
        .env("DOCKER_HOST", &d.host)
        .env(
            "DOCKER_CONFIG",
            file.parent().unwrap().join("docker-config"),
        )
        .arg("run")
        .arg("--env-file")
        .arg(file)
        .args(["alpine", "true"])
        .output()
        .unwrap();
    let err = stderr(&o);
    if err.contains("captured by the test daemon") {
        Ok(d.env())
    } else {
        Err(err)
    }
}

#[test]
#[cfg_attr(missing = "docker", ignore = "needs docker")]
fn docker_cli_reads_back_generated_values() {
    let Some(docker) = support::tool("docker") else {
        return;
    };
    let t = tempfile::tempdir().unwrap();
    let d = FakeDaemon::start(t.path());
    let file = t.path().join("vars.env");
    // The reader agrees with the real CLI on its own edge cases first.
    for body in [
        &b"\xef\xbb\xbf  A= \"q\" \r\n# c\n\nB=x=y\nNOVALUE\n"[..],
        b"\tT=\ttab \n",
    ] {
        std::fs::write(&file, body).unwrap();
        let want: Vec<String> = kvfile_read(body)
            .unwrap()
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        assert_eq!(docker_run(&d, &docker, &file).unwrap(), want);
    }
    for bad in [&b"A B=1\n"[..], b"A=\xff\n"] {
        std::fs::write(&file, bad).unwrap();
        assert!(kvfile_read(bad).is_err());
        assert!(docker_run(&d, &docker, &file).is_err(), "{bad:?}");
    }
    // Generated views, many variables per file.
    let mut r = Rng(0xD0C);
    for round in 0..12 {
        let mut vars = Vec::new();
        for i in 0..40 {
            let v = gen_view(&mut r, round * 100 + i);
            vars.extend(v.assignments);
        }
        let view = View::of(vars);
        let out = render_checked(Format::Docker, &view);
        std::fs::write(&file, &out.text).unwrap();
        let want: Vec<String> = kvfile_read(out.text.as_bytes())
            .unwrap()
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        check(Format::Docker, &view).unwrap();
        assert_eq!(
            docker_run(&d, &docker, &file).unwrap(),
            want,
            "round {round}"
        );
    }
}

// ------------------------------------------------- the README's examples

const README_DOCKER: &str = "docker run --env-file <(agentenv env --diff --format docker) image";
const README_DIRENV: &str = r#"eval "$(agentenv env --diff)""#;
const README_CODEX: &str = "agentenv exec --agent codex -- codex";

/// The README and the docs book, where these examples now live.
fn readme() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut text = std::fs::read_to_string(root.join("README.md")).unwrap();
    let mut chapters: Vec<_> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    chapters.sort();
    for c in chapters {
        text.push_str(&std::fs::read_to_string(c).unwrap());
    }
    text
}

/// A store, and a PATH that finds this agentenv as `agentenv`.
fn example_tree() -> (Tree, String) {
    let t = Tree::session().file(
        "home/.agents/env.py",
        r#"import json
print(json.dumps({'FROM_STORE': 'a b', 'MULTI': 'l1\nl2', 'QUOTED': '"q"'}))
"#,
    );
    let bin = support::agentenv_bin();
    (
        t,
        format!("{}:/usr/bin:/bin", bin.parent().unwrap().display()),
    )
}

fn bash_in(w: &Path, path: &str, script: &str) -> std::process::Command {
    let mut c = support::session_cmd(w);
    c.env("PATH", path);
    let mut b = std::process::Command::new("bash");
    b.arg("-c").arg(script);
    b.env_clear();
    for (k, v) in c.get_envs() {
        if let Some(v) = v {
            b.env(k, v);
        }
    }
    b.current_dir(w.join("proj"));
    b
}

/// The documented GitHub Actions line: the `- run:` line of the yaml block
/// under the first "GitHub Actions" heading of the README and the book
/// (docs/integrations.md); every other `- run: agentenv` line of the
/// documents must be the same.
fn readme_github_line() -> String {
    let text = readme();
    let section = &text[text
        .find("## GitHub Actions")
        .expect("the docs' Actions section")..];
    let block = &section[section.find("```yaml").expect("its yaml block")..];
    let line = block
        .lines()
        .find_map(|l| l.strip_prefix("- run: "))
        .expect("a `- run:` line")
        .to_string();
    for other in text
        .lines()
        .filter_map(|l| l.strip_prefix("- run: agentenv env"))
    {
        assert_eq!(format!("agentenv env{other}"), line, "the documents differ");
    }
    line
}

/// The values the runner's masker gets from a step's stdout, as the
/// runner reads `::add-mask::` (ActionCommand: `%25`, `%0D`, `%0A`
/// unescaped).
fn runner_masks(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("::add-mask::"))
        .map(|v| {
            v.replace("%0D", "\r")
                .replace("%0A", "\n")
                .replace("%25", "%")
        })
        .collect()
}

#[test]
fn readme_github_actions_example() {
    let line = readme_github_line();
    assert!(line.starts_with("agentenv env "), "{line}");
    let (t, path) = example_tree();
    t.write(
        "home/.agents/env",
        "API_TOKEN='ghp_%0Atok3n-value-99'\nCERT='-----BEGIN KEY-----\nMIIBsecretline1abc\n-----END KEY-----'\n\
         TIMEOUT=3000\nFLAG=true\nPUBLIC_URL=https://docs.example\n",
    );
    t.write(
        "home/.agents/agentenv.toml",
        "[vars]\nPUBLIC_URL = { public = true }\n",
    );
    let w = t.root().to_path_buf();
    let gh = w.join("github_env");
    // An earlier line of the same step, written without a final newline.
    std::fs::write(&gh, "EARLIER=1").unwrap();
    let o = bash_in(&w, &path, &line)
        .env("GITHUB_ENV", &gh)
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    // Only workflow commands on stdout; each masked value (each line of
    // a multi-line one) registered; ordinary values are not.
    assert!(out.lines().all(|l| l.starts_with("::add-mask::")), "{out}");
    let mut masks = runner_masks(&out);
    masks.sort();
    assert_eq!(
        masks,
        [
            "-----BEGIN KEY-----",
            "-----END KEY-----",
            "MIIBsecretline1abc",
            "ghp_%0Atok3n-value-99",
        ]
    );
    let got = runner_read(&std::fs::read_to_string(&gh).unwrap(), false).unwrap();
    assert_eq!(got["EARLIER"], "1", "the step's earlier line survives");
    assert_eq!(got["API_TOKEN"], "ghp_%0Atok3n-value-99");
    assert_eq!(
        got["CERT"],
        "-----BEGIN KEY-----\nMIIBsecretline1abc\n-----END KEY-----"
    );
    assert_eq!(got["TIMEOUT"], "3000");
    assert_eq!(got["FLAG"], "true");
    assert_eq!(got["FROM_STORE"], "a b");
    assert_eq!(got["MULTI"], "l1\nl2");
    assert_eq!(got["QUOTED"], "\"q\"");
    assert!(
        !got.contains_key("HOME"),
        "--diff keeps the step's own env out"
    );
    // Every value that reached $GITHUB_ENV and is masked elsewhere is
    // registered: the runner hides each later occurrence.
    for (k, v) in &got {
        // The public ones (computed, declared) and ordinary values
        // (`3000`, `true`, under 8 bytes) are not.
        let masked = ["API_TOKEN", "CERT"].contains(&k.as_str());
        for l in v.lines() {
            assert_eq!(masks.contains(&l.to_string()), masked, "{k}");
        }
    }
    // Printed to stdout instead of appended: a warning says nothing was
    // registered.
    let o = bash_in(&w, &path, "agentenv env --diff --format github")
        .env("GITHUB_ACTIONS", "true")
        .output()
        .unwrap();
    assert!(
        stderr(&o).contains("registers no value with the runner's masker"),
        "{}",
        stderr(&o)
    );
}

#[test]
#[cfg_attr(missing = "docker", ignore = "needs docker")]
fn readme_docker_example() {
    assert!(readme().contains(README_DOCKER));
    let Some(docker) = support::tool("docker") else {
        return;
    };
    let (t, path) = example_tree();
    let w = t.root().to_path_buf();
    let path = format!("{}:{path}", docker.parent().unwrap().display());
    let d = FakeDaemon::start(&w);
    let o = bash_in(&w, &path, README_DOCKER)
        .env("DOCKER_HOST", &d.host)
        .env("DOCKER_CONFIG", w.join("docker-config"))
        .output()
        .unwrap();
    assert!(
        stderr(&o).contains("captured by the test daemon"),
        "{}",
        stderr(&o)
    );
    let env = d.env();
    assert!(env.contains(&"FROM_STORE=a b".to_string()), "{env:?}");
    assert!(env.contains(&"QUOTED=\"q\"".to_string()), "{env:?}");
    assert!(!env.iter().any(|e| e.starts_with("MULTI=")), "{env:?}");
    assert!(stderr(&o).contains("'MULTI' left out of the docker format"));
}

#[test]
#[cfg_attr(missing = "direnv", ignore = "needs direnv")]
fn readme_direnv_and_codex_examples() {
    let text = readme();
    assert!(text.contains(README_DIRENV) && text.contains(README_CODEX));
    let (t, path) = example_tree();
    let w = t.root().to_path_buf();
    // Codex: a stand-in `codex` that shows what it was started with.
    t.exe(
        "fakebin/codex",
        "#!/bin/sh\nprintf '%s|%s' \"$FROM_STORE\" \"$AGENTS_PROJECT_ROOT\"\n",
    );
    let cpath = format!("{}:{path}", w.join("fakebin").display());
    let o = bash_in(&w, &cpath, README_CODEX).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        format!("a b|{}", w.join("proj").display())
    );
    // direnv: the .envrc line, through direnv itself.
    let Some(direnv) = support::tool("direnv") else {
        return;
    };
    t.write("proj/.envrc", format!("{README_DIRENV}\n"));
    let run = |args: &[&str]| {
        let dpath = format!("{}:{path}", direnv.parent().unwrap().display());
        let mut c = bash_in(&w, &dpath, "exec direnv \"$@\"");
        c.arg("direnv")
            .args(args)
            .env("XDG_DATA_HOME", w.join("xdg-data"))
            .env("XDG_CONFIG_HOME", w.join("xdg-config"))
            .env("XDG_CACHE_HOME", w.join("xdg-cache"))
            .output()
            .unwrap()
    };
    let o = run(&["allow", "."]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&[
        "exec",
        ".",
        "sh",
        "-c",
        "printf '%s|%s' \"$FROM_STORE\" \"$MULTI\"",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "a b|l1\nl2");
}

#[test]
#[cfg_attr(missing = "node", ignore = "needs node")]
fn readme_mcp_examples() {
    let text = readme();
    let start = text
        .find("```json\n{\n  \"mcpServers\"")
        .expect("the .mcp.json example");
    let body = &text[start + 8..];
    let body = &body[..body.find("```").unwrap()];
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    let server = &v["mcpServers"]["tool"];
    assert_eq!(server["command"], "agentenv");
    let args: Vec<String> = server["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    // The Codex TOML example names the same command line.
    let toml_args = format!(
        "args = [{}]",
        args.iter()
            .map(|a| format!("{a:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    assert!(text.contains("command = \"agentenv\"\n") && text.contains(&toml_args));
    let Some(node) = support::tool("node") else {
        return;
    };
    // Run it as the host would, with the pack at a real path.
    let t = Tree::new()
        .file("pack/.env", "PACK_TOKEN=from-dotenv\nHOST_SET=dotenv\n")
        .file(
            "pack/server.js",
            "process.stdout.write(process.env.PACK_TOKEN + '|' + process.env.HOST_SET)\n",
        );
    let pack = t.path("pack");
    let args: Vec<String> = args
        .iter()
        .map(|a| a.replace("/opt/packs/tool", pack.to_str().unwrap()))
        .collect();
    let o = std::process::Command::new(support::agentenv_bin())
        .args(&args)
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", node.parent().unwrap().display()),
        )
        .env("HOST_SET", "host")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "from-dotenv|host");
}

#[test]
fn harness_sandbox_env_accepts_both_formats() {
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("h.yaml");
    std::fs::write(
        &f,
        "agent: agents/a.md\nrole: r\nenv:\n  sandbox:\n    SB: ' x=<<y '\n    ML: \"l1\\nAGENTENV_EOF\\nl3\"\n",
    )
    .unwrap();
    let run = |fmt: &str| {
        std::process::Command::new(support::agentenv_bin())
            .args(["harness", "sandbox-env"])
            .arg(&f)
            .args(["--format", fmt])
            .output()
            .unwrap()
    };
    let o = run("github");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let got = runner_read(std::str::from_utf8(&o.stdout).unwrap(), true).unwrap();
    assert_eq!(got["SB"], " x=<<y ");
    assert_eq!(got["ML"], "l1\nAGENTENV_EOF\nl3");
    let o = run("docker");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let got: BTreeMap<_, _> = kvfile_read(&o.stdout).unwrap().into_iter().collect();
    assert_eq!(got["SB"], " x=<<y ");
    assert!(!got.contains_key("ML"));
    assert!(stderr(&o).contains("'ML' left out of the docker format"));
    assert_eq!(run("yaml").status.code(), Some(1));
}

/// `status` starts no process at all (one execve: its own).
#[test]
#[cfg_attr(missing = "strace", ignore = "needs strace")]
fn status_starts_no_process() {
    let Some(strace) = support::tool("strace") else {
        return;
    };
    let t = status::tree();
    let w = t.root();
    let trace = t.path("trace");
    let c = support::session_cmd(w);
    let bin = support::agentenv_bin();
    let o = std::process::Command::new(strace)
        .args(["-f", "-e", "trace=execve,execveat", "-o"])
        .arg(&trace)
        .arg(&bin)
        .args(["status", "--format", "json"])
        .env_clear()
        .envs(
            c.get_envs()
                .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))),
        )
        .current_dir(w.join("proj"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&trace).unwrap();
    let execs: Vec<&str> = text.lines().filter(|l| l.contains("execve")).collect();
    assert_eq!(execs.len(), 1, "{execs:#?}");
    assert!(!w.join("ran").exists());
}

/// D4 (issue 33): the dotenv format keeps the reference's bytes, a CR raw
/// inside single quotes, which python-dotenv reading the file by path
/// turns into LF. So each variable whose value holds a CR is a warning
/// naming it (never the value), and the way it names reads back exactly.
#[test]
fn dotenv_render_of_a_cr_value_is_warned_by_name_and_the_named_read_is_exact() {
    let Some(py) = support::venv_python_with("dotenv") else {
        return;
    };
    let t = Tree::session().file(
        "home/.agents/env.py",
        format!(
            "import json\nprint(json.dumps({{'MIDCR': 'a\\r{CANARY}', 'ENDCR': '{CANARY}\\r', \
             'PLAIN': 'x {CANARY}'}}))\n"
        ),
    );
    let o = t
        .agentenv(["env", "--diff", "--format", "dotenv"])
        .stderr_lacks("zqCANARY")
        .stderr_lacks("'PLAIN'")
        .run();
    for name in ["MIDCR", "ENDCR"] {
        let w = format!(
            "agentenv: warning: '{name}' holds a CR, written raw as the reference writes it; \
             python-dotenv reading the file by path gives it back as LF. Read it with \
             dotenv_values(stream=open(path, newline=''), interpolate=False), or use --format json"
        );
        assert!(
            o.stderr.contains(&w),
            "no warning for {name}:\n{}",
            o.stderr
        );
    }
    let file = t.path("x.env");
    std::fs::write(&file, &o.stdout_bytes).unwrap();
    let read = |how: &str| -> BTreeMap<String, String> {
        let out = std::process::Command::new(&py)
            .arg("-c")
            .arg(format!(
                "import json, sys\nfrom dotenv import dotenv_values\n{how}\n\
                 print(json.dumps(dict(v)))"
            ))
            .arg(&file)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let exact: BTreeMap<String, String> = [
        ("MIDCR", format!("a\r{CANARY}")),
        ("ENDCR", format!("{CANARY}\r")),
        ("PLAIN", format!("x {CANARY}")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    // The warning's advice: a stream opened with newline='' is exact.
    let by_stream =
        read("v = dotenv_values(stream=open(sys.argv[1], newline=''), interpolate=False)");
    for (k, v) in &exact {
        assert_eq!(&by_stream[k], v, "{k}");
    }
    // What the warning is about: by path, python-dotenv gives LF.
    let by_path = read("v = dotenv_values(sys.argv[1], interpolate=False)");
    assert_eq!(by_path["MIDCR"], format!("a\n{CANARY}"));
    assert_eq!(by_path["ENDCR"], format!("{CANARY}\n"));
    assert_eq!(by_path["PLAIN"], exact["PLAIN"]);
}
