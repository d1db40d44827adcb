//! `exec --redact`, `launch --redact`, `harness run --redact` and `agentenv
//! redact` through the binary
//! (docs/redact.md#keeping-secrets-out-of-the-agents-context): every form of every
//! sensitive value of a store is masked on stdout and stderr, the right
//! variable is named, other output passes byte for byte, streaming holds and
//! releases as documented, and status and signals pass through.

use crate::support;

use agentenv::internals::mask::forms;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{Ran, Tree};

/// The store's secrets: quotes, spaces, `&`, `+`, `/`, backslashes,
/// non-ASCII, and a multi-line value. Each is under 54 bytes, so
/// `base64` (76 columns) and `xxd -p` of a prefixed value stay on one
/// line — except the multi-line key, which is longer on purpose.
const SECRETS: &[(&str, &str)] = &[
    ("GH_TOKEN", "ghp_Ab+c/d&e f\"g\\h=Z9"),
    ("PASS_UNI", "pässwörd-€-ünï-😀"),
    ("SQ", "it's a 'quoted' s3cret"),
    (
        "CERT",
        "-----BEGIN TEST KEY-----\nMIIBsecretline1abcdefgh\nMIIBsecretline2ijklmnop\n-----END TEST KEY-----",
    ),
    ("PROJ_SECRET", "proj-s3cr3t&x+y/z~_."),
];

/// A public value agentenv computes itself is never masked; neither is a
/// value of the base environment no store set.
const BASE_PUBLIC: (&str, &str) = ("BASE_PUBLIC", "base-public-value-42");

/// The value in the export format's single quotes.
fn sq(v: &str) -> String {
    format!("'{}'", v.replace('\'', "'\\''"))
}

fn store() -> Tree {
    let t = Tree::session();
    let mut user = String::new();
    for (k, v) in &SECRETS[..4] {
        user.push_str(&format!("{k}={}\n", sq(v)));
    }
    user.push_str("SHORT='abc'\nLOG_LEVEL='debug-verbose'\n");
    t.write("home/.agents/env", user);
    t.write(
        "home/.agents/agentenv.toml",
        "[vars]\nLOG_LEVEL = { public = true }\n",
    );
    let (k, v) = SECRETS[4];
    t.write("proj/.agents/env", format!("{k}={}\n", sq(v)));
    t
}

/// Every form of every secret, with its name.
fn all_forms() -> Vec<(&'static str, Vec<u8>)> {
    let mut out = Vec::new();
    for (k, v) in SECRETS {
        for (_, f) in forms(v.as_bytes()) {
            out.push((*k, f));
        }
    }
    out
}

/// No form of any secret in `bytes` (`what` names the stream).
fn assert_clean(bytes: &[u8], what: &str) {
    for (k, f) in all_forms() {
        assert!(
            !bytes.windows(f.len()).any(|w| w == f.as_slice()),
            "{what}: a form of {k} is not masked ({} bytes of it)",
            f.len()
        );
    }
}

fn redact(t: &Tree, script: &str) -> support::Run {
    t.agentenv(["exec", "--redact", "--", "sh", "-c", script])
        .env(BASE_PUBLIC.0, BASE_PUBLIC.1)
        .env("NODE_PATH", "")
}

fn have(tool: &str) -> bool {
    support::which(tool).is_some() || {
        support::skip(tool, &format!("{tool} not found on PATH"));
        false
    }
}

/// Lines `NAME KIND …`: each must name its variable, and no line may hold
/// a form of any secret.
fn check_labelled(out: &str, kinds: &[&str]) {
    for (k, _) in SECRETS {
        for kind in kinds {
            let label = format!("{k} {kind} ");
            let line = out
                .lines()
                .find(|l| l.starts_with(&label))
                .unwrap_or_else(|| panic!("no line {label:?} in:\n{out}"));
            assert!(
                line.contains(&format!("[REDACTED:{k}]")),
                "{label}: not masked as {k}:\n{line}"
            );
            // Masked whole: what is left besides the replacement is the
            // encoding's edge (characters shared with a neighbour byte,
            // padding, quotes), a few characters at most.
            let rest = line[label.len()..].replace(&format!("[REDACTED:{k}]"), "");
            if *kind != "dict" && *kind != "err" {
                assert!(rest.len() <= 6, "{label}: {line}");
            }
        }
    }
}

/// For each secret: raw, printenv, base64 at offsets 0/1/2 (std and
/// URL-safe), hex (`xxd -p`), in labelled lines.
const SHELL_FORMS: &str = r#"
# Plain `base64` (one line under 57 bytes); the long multi-line key unwrapped.
b64() { if [ "$n" = CERT ]; then base64 -w0; else base64; fi; }
for n in GH_TOKEN PASS_UNI SQ CERT PROJ_SECRET; do
  eval "v=\$$n"
  printf '%s raw %s\n' "$n" "$v" | head -n 1
  printf '%s printenv %s\n' "$n" "$(printenv "$n" | head -n 1)"
  printf '%s b64 %s\n' "$n" "$(printf %s "$v" | b64)"
  printf '%s b64-1 %s\n' "$n" "$(printf x%s "$v" | b64)"
  printf '%s b64-2 %s\n' "$n" "$(printf xy%s "$v" | b64)"
  printf '%s b64url %s\n' "$n" "$(printf x%s "$v" | base64 -w0 | tr '+/' '-_')"
  printf '%s hex %s\n' "$n" "$(printf %s "$v" | od -An -tx1 -v | tr -d ' \n')"
  printf '%s stderr %s\n' "$n" "$v" | head -n 1 >&2
done
"#;

#[test]
fn every_shell_form_is_masked_and_named() {
    let t = store();
    let r = redact(&t, SHELL_FORMS).run();
    check_labelled(
        &r.stdout,
        &["raw", "printenv", "b64", "b64-1", "b64-2", "b64url", "hex"],
    );
    assert_clean(&r.stdout_bytes, "stdout");
    check_labelled(&r.stderr, &["stderr"]);
    assert_clean(r.stderr.as_bytes(), "stderr");
}

#[test]
fn env_printenv_and_the_store_files_are_masked() {
    let t = store();
    let r = redact(
        &t,
        r#"env; printenv; cat "$HOME/.agents/env" .agents/env; cat .agents/env >&2
        printf 'public %s %s\n' "$AGENTS_PROJECT_ROOT" "$BASE_PUBLIC""#,
    )
    .run();
    assert_clean(&r.stdout_bytes, "stdout");
    assert_clean(r.stderr.as_bytes(), "stderr");
    for (k, _) in SECRETS {
        assert!(r.stdout.contains(&format!("{k}=[REDACTED:{k}]")), "{k}");
    }
    // The store file, in the export format's quoting: the quoted form.
    assert!(r.stdout.contains("SQ='[REDACTED:SQ]'"), "{}", r.stdout);
    // The multi-line value: each line.
    assert!(r.stdout.contains("[REDACTED:CERT]\n[REDACTED:CERT]\n"));
    assert!(r.stderr.contains("PROJ_SECRET='[REDACTED:PROJ_SECRET]'"));
    // Public: a computed variable, a base variable, a short value.
    let root = t.path("proj");
    assert!(r
        .stdout
        .contains(&format!("public {} {}", root.display(), BASE_PUBLIC.1)));
    assert!(r.stdout.contains("SHORT=abc"));
    // Declared public in the store's agentenv.toml.
    assert!(r.stdout.contains("LOG_LEVEL=debug-verbose"));
}

#[test]
#[cfg_attr(missing = "xxd", ignore = "needs xxd")]
fn xxd_hex_is_masked() {
    if !have("xxd") {
        return;
    }
    let t = store();
    let r = redact(
        &t,
        r#"for n in GH_TOKEN PASS_UNI SQ CERT PROJ_SECRET; do
             eval "v=\$$n"; printf '%s xxd %s\n' "$n" "$(printf %s "$v" | xxd -p | head -n 1)"
           done"#,
    )
    .run();
    check_labelled(&r.stdout, &["xxd"]);
    assert_clean(&r.stdout_bytes, "stdout");
}

#[test]
fn base64_wrapped_at_76_columns_is_masked_line_by_line() {
    let t = store();
    // The multi-line value is over 57 bytes: `base64` wraps it.
    let r = redact(
        &t,
        r#"printf %s "$CERT" | base64; printf %s "$CERT" | xxd -p"#,
    )
    .run();
    assert!(!r.stdout.is_empty());
    for line in r.stdout.lines() {
        assert!(line.starts_with("[REDACTED:CERT]"), "{line}");
    }
}

const PYTHON: &str = r#"
import json, os, sys, urllib.parse
for n in ["GH_TOKEN", "PASS_UNI", "SQ", "CERT", "PROJ_SECRET"]:
    v = os.environ[n]
    print(n, "quote", urllib.parse.quote(v))
    print(n, "quote-safe", urllib.parse.quote(v, safe=""))
    print(n, "dumps", json.dumps(v))
    print(n, "dumps-utf8", json.dumps(v, ensure_ascii=False))
    print(n, "dict", json.dumps({n: v}))
print(json.dumps(dict(os.environ)))
print(json.dumps(dict(os.environ), ensure_ascii=False))
raise RuntimeError("token was " + os.environ["GH_TOKEN"])
"#;

#[test]
#[cfg_attr(missing = "python3", ignore = "needs python3")]
fn python_quote_json_dumps_and_a_traceback_are_masked() {
    if !have("python3") {
        return;
    }
    let t = store();
    let r = t
        .agentenv(["exec", "--redact", "--", "python3", "-c", PYTHON])
        .status(1)
        .run();
    check_labelled(
        &r.stdout,
        &["quote", "quote-safe", "dumps", "dumps-utf8", "dict"],
    );
    assert_clean(&r.stdout_bytes, "stdout");
    assert!(r.stderr.contains("Traceback"), "{}", r.stderr);
    assert!(r
        .stderr
        .contains("RuntimeError: token was [REDACTED:GH_TOKEN]"));
    assert_clean(r.stderr.as_bytes(), "stderr");
}

const NODE: &str = r#"
for (const n of ["GH_TOKEN", "PASS_UNI", "SQ", "CERT", "PROJ_SECRET"]) {
  const v = process.env[n];
  console.log(n, "stringify", JSON.stringify(v));
  console.log(n, "uri", encodeURIComponent(v));
  console.log(n, "b64", Buffer.from(v).toString("base64"));
  console.error(n, "err", JSON.stringify({k: v}));
}
console.log(JSON.stringify(process.env));
"#;

#[test]
#[cfg_attr(missing = "node", ignore = "needs node")]
fn node_json_stringify_is_masked() {
    if !have("node") {
        return;
    }
    let t = store();
    let r = t
        .agentenv(["exec", "--redact", "--", "node", "-e", NODE])
        .run();
    check_labelled(&r.stdout, &["stringify", "uri", "b64"]);
    check_labelled(&r.stderr, &["err"]);
    assert_clean(&r.stdout_bytes, "stdout");
    assert_clean(r.stderr.as_bytes(), "stderr");
}

/// `od -An -tx1` of each secret at each of od's 16 line offsets, in
/// lower and upper case: with the output's whitespace removed (the
/// agentloop scanner's rule) no secret's hex is left, and no form.
#[test]
fn od_spaced_hex_at_every_line_offset_is_masked() {
    if !have("od") {
        return;
    }
    let t = store();
    let r = redact(
        &t,
        r#"for n in GH_TOKEN PASS_UNI SQ CERT PROJ_SECRET; do
             eval "v=\$$n"; p=""
             while [ ${#p} -lt 16 ]; do
               printf '%s%s~' "$p" "$v" | od -An -tx1
               printf '%s%s~' "$p" "$v" | od -An -tx1 | tr a-f A-F
               p="$p!"
             done
           done"#,
    )
    .run();
    assert_clean(&r.stdout_bytes, "stdout");
    let squeezed: Vec<u8> = r
        .stdout_bytes
        .iter()
        .copied()
        .filter(|b| !b.is_ascii_whitespace())
        .collect();
    for (k, v) in SECRETS {
        for digits in ["0123456789abcdef", "0123456789ABCDEF"] {
            let d = digits.as_bytes();
            let hex: Vec<u8> = v
                .bytes()
                .flat_map(|b| [d[usize::from(b >> 4)], d[usize::from(b & 15)]])
                .collect();
            assert!(
                !squeezed.windows(hex.len()).any(|w| w == hex.as_slice()),
                "the hex of {k} is readable with whitespace removed"
            );
        }
        assert!(r.stdout.contains(&format!("[REDACTED:{k}]")), "{k}");
    }
}

/// `print(os.environ)` (each value's `repr`) and bash's `set` and
/// `declare -p` (the multi-line value as `$'…'`) are masked.
#[test]
#[cfg_attr(missing = "python3", ignore = "needs python3")]
fn python_repr_and_bash_set_are_masked() {
    let t = store();
    if have("python3") {
        let r = t
            .agentenv([
                "exec",
                "--redact",
                "--",
                "python3",
                "-c",
                "import os; print(os.environ); print(repr(dict(os.environ)))",
            ])
            .run();
        assert_clean(&r.stdout_bytes, "python stdout");
        for (k, _) in SECRETS {
            assert!(r.stdout.contains(&format!("[REDACTED:{k}]")), "{k}");
        }
        assert!(
            r.stdout.contains("'CERT': '[REDACTED:CERT]'"),
            "{}",
            r.stdout
        );
        assert!(r.stdout.contains("'SQ': \"[REDACTED:SQ]\""), "{}", r.stdout);
    }
    if have("bash") {
        let r = t
            .agentenv([
                "exec",
                "--redact",
                "--",
                "bash",
                "-c",
                "set; declare -p CERT GH_TOKEN",
            ])
            .run();
        assert_clean(&r.stdout_bytes, "bash stdout");
        assert!(r.stdout.contains("CERT=$'[REDACTED:CERT]'"), "{}", r.stdout);
        assert!(
            r.stdout.contains("declare -x CERT=$'[REDACTED:CERT]'"),
            "{}",
            r.stdout
        );
    }
}

/// 1 MiB of random bytes (invalid UTF-8 throughout).
fn random_file(t: &Tree) -> std::path::PathBuf {
    let mut rng = support::Rng(23);
    let mut data = Vec::with_capacity(1 << 20);
    while data.len() < 1 << 20 {
        data.extend_from_slice(&rng.next().to_le_bytes());
    }
    t.write("proj/random.bin", &data)
}

#[test]
fn output_without_secrets_is_byte_identical() {
    let t = store();
    let f = random_file(&t);
    let f = f.to_str().unwrap();
    let plain = t.agentenv(["exec", "--", "cat", f]).run();
    let masked = t.agentenv(["exec", "--redact", "--", "cat", f]).run();
    assert_eq!(plain.stdout_bytes.len(), 1 << 20);
    assert!(plain.stdout_bytes == masked.stdout_bytes, "bytes differ");
    // And on stderr, and through `agentenv redact`.
    let cmd = format!("cat {f} >&2");
    let masked = t
        .agentenv(["exec", "--redact", "--", "sh", "-c", &cmd])
        .run();
    assert!(masked.stderr.as_bytes() == String::from_utf8_lossy(&plain.stdout_bytes).as_bytes());
    let filtered = t
        .agentenv(["redact"])
        .stdin(std::fs::read(f).unwrap())
        .run();
    assert!(filtered.stdout_bytes == plain.stdout_bytes);
}

/// The secret written one byte at a time with 5 ms pauses, then split in
/// two writes at every offset. A line in which two writes of the value
/// were more than 40 ms apart, measured from before the first to after
/// the second (a late wake-up or a preemption on a loaded machine, near
/// the masker's 50 ms release, which counts from when it read the first),
/// ends in ` late`: a piece may rightly have been released there. Once
/// the value is whole, a release masks it, so what follows is not timed.
const SLOW: &str = r#"
import os, sys, time
out = sys.stdout.buffer
prev = None
def put(b):
    global prev
    t = time.monotonic()
    out.write(b); out.flush()
    late = prev is not None and time.monotonic() - prev > 0.04
    prev = t
    return late
for n in ["GH_TOKEN", "PASS_UNI", "PROJ_SECRET"]:
    v = os.environ[n].encode()
    out.write(n.encode() + b" bytes ")
    prev, late = None, False
    for i in range(len(v)):
        late = put(v[i:i+1]) or late
        time.sleep(0.005)
    out.write(b" late\n" if late else b"\n")
    for i in range(1, len(v)):
        out.write(n.encode() + b" split ")
        prev = None
        put(v[:i]); time.sleep(0.005)
        late = put(v[i:])
        out.write(b" end late\n" if late else b" end\n"); out.flush()
"#;

#[test]
#[cfg_attr(missing = "python3", ignore = "needs python3")]
fn a_secret_in_pieces_a_few_ms_apart_is_masked() {
    if !have("python3") {
        return;
    }
    let t = store();
    let r = t
        .agentenv(["exec", "--redact", "--", "python3", "-c", SLOW])
        .run();
    let on_time: Vec<&str> = r.stdout.lines().filter(|l| !l.ends_with(" late")).collect();
    assert_clean(on_time.join("\n").as_bytes(), "stdout");
    for n in ["GH_TOKEN", "PASS_UNI", "PROJ_SECRET"] {
        let lines: Vec<&&str> = on_time
            .iter()
            .filter(|l| l.starts_with(&format!("{n} ")))
            .collect();
        assert!(lines.len() > 5, "{n}: too few lines on time: {lines:?}");
        for l in lines {
            assert!(l.contains(&format!("[REDACTED:{n}]")), "{l}");
        }
    }
}

/// Spawn `cmd` with piped stdout (stderr kept for the failure message).
fn spawn(mut cmd: Command) -> std::process::Child {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// A thread reading `pipe` to its end, chunk by chunk.
fn reader(mut pipe: impl Read + Send + 'static) -> std::sync::mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    rx
}

/// Take chunks from `rx` until `want` has arrived or `deadline` passes;
/// what was read.
fn read_until(rx: &std::sync::mpsc::Receiver<Vec<u8>>, want: &str, deadline: Duration) -> String {
    let mut got = Vec::new();
    let end = Instant::now() + deadline;
    while !String::from_utf8_lossy(&got).contains(want) {
        let left = end.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(b) => got.extend_from_slice(&b),
            Err(_) => break,
        }
    }
    String::from_utf8_lossy(&got).into_owned()
}

fn kill(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{sig} {pid}");
}

#[test]
fn an_unfinished_line_shows_while_the_command_waits_and_signals_reach_it() {
    for sig in ["TERM", "INT", "HUP"] {
        let t = store();
        // A prompt ending in the start of GH_TOKEN: held, then released
        // when no byte follows (the 50 ms rule), long before the command
        // goes on.
        let script = format!(
            r#"trap 'echo " got-{sig}"; exit 42' {sig}
            printf 'Token: ghp_'; while :; do sleep 0.05; done"#
        );
        let mut child = spawn(
            t.agentenv(["exec", "--redact", "--", "sh", "-c", &script])
                .into_command(),
        );
        let out = reader(child.stdout.take().unwrap());
        let got = read_until(&out, "Token: ghp_", Duration::from_secs(20));
        assert_eq!(got, "Token: ghp_", "the prompt did not show");
        // A signal to agentenv reaches the command.
        kill(child.id(), sig);
        let rest = read_until(&out, &format!("got-{sig}"), Duration::from_secs(20));
        assert!(rest.contains(&format!("got-{sig}")), "{sig}: {rest:?}");
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(42), "{sig}");
    }
}

#[test]
fn status_and_streams_pass_through() {
    let t = store();
    redact(&t, "echo out; echo err >&2; exit 7")
        .status(7)
        .stdout("out\n")
        .stderr("err\n")
        .run();
    redact(&t, "kill -TERM $$").status(143).run();
    redact(&t, "kill -KILL $$").status(137).run();
    // stdin is the command's own.
    t.agentenv(["exec", "--redact", "--", "cat"])
        .stdin(format!("in {}\n", SECRETS[0].1))
        .stdout("in [REDACTED:GH_TOKEN]\n")
        .run();
    // Not found / not executable, as without --redact.
    t.agentenv(["exec", "--redact", "--", "no-such-command-x"])
        .status(127)
        .stderr_has("command not found")
        .run();
    // AGENTENV_REDACT=1 turns it on.
    let r: Ran = t
        .agentenv(["exec", "--", "printenv", "GH_TOKEN"])
        .env("AGENTENV_REDACT", "1")
        .run();
    assert_eq!(r.stdout, "[REDACTED:GH_TOKEN]\n");
    // Without it, the value (exec replaces itself as before).
    t.agentenv(["exec", "--", "printenv", "GH_TOKEN"])
        .stdout(format!("{}\n", SECRETS[0].1))
        .run();
}

#[test]
fn a_closed_reader_ends_the_command_as_without_redact() {
    let t = store();
    let r = redact(&t, "yes | head -c 10000000; echo done >&2").run();
    assert!(r.stdout.len() == 10_000_000);
    // `head -c 1` closes early: the writer gets EPIPE / SIGPIPE.
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{} exec --redact -- sh -c 'yes; echo yes-ended >&2' | head -c 1",
            support::agentenv_bin().display()
        ))
        .env("HOME", t.path("home"))
        .current_dir(t.path("proj"))
        .output()
        .unwrap();
    assert_eq!(out.stdout, b"y");
}

#[test]
fn agentenv_redact_filters_stdin() {
    let t = store();
    let mut input = String::new();
    for (k, v) in SECRETS {
        input.push_str(&format!("{k} raw {v}\n"));
    }
    input.push_str("no newline at the end ghp_");
    let r = t.agentenv(["redact"]).stdin(input).run();
    assert_clean(&r.stdout_bytes, "stdout");
    assert!(r.stdout.starts_with("GH_TOKEN raw [REDACTED:GH_TOKEN]\n"));
    assert!(r.stdout.ends_with("no newline at the end ghp_"));
    assert_eq!(r.stderr, "");
    // -g: the user store only; the project's value passes.
    let (k, v) = SECRETS[4];
    t.agentenv(["redact", "-g"])
        .stdin(format!("{k} {v}\n"))
        .stdout(format!("{k} {v}\n"))
        .run();
}

#[test]
fn launch_redact_masks_the_operator_values() {
    let t = Tree::new().file(".env", format!("OP_SECRET={}\n", sq(SECRETS[0].1)));
    t.host([
        "launch",
        "--redact",
        "--",
        "sh",
        "-c",
        "echo $OP_SECRET; echo $OP_SECRET >&2; exit 3",
    ])
    .status(3)
    .stdout("[REDACTED:OP_SECRET]\n")
    .stderr("[REDACTED:OP_SECRET]\n")
    .run();
    t.host(["launch", "--", "sh", "-c", "echo $OP_SECRET"])
        .stdout(format!("{}\n", SECRETS[0].1))
        .run();
}

#[test]
fn harness_run_redact_masks_the_runner_values() {
    let t = Tree::fullsend().file(
        "harness/h.yaml",
        "agent: agents/t.md\nrole: test\nenv:\n  runner:\n    RUN_SECRET: \"runner-s3cret/+&\"\n",
    );
    let h = t.arg("harness/h.yaml");
    t.host([
        "harness",
        "run",
        "--redact",
        &h,
        "--",
        "sh",
        "-c",
        "echo $RUN_SECRET",
    ])
    .stdout("[REDACTED:RUN_SECRET]\n")
    .run();
    t.host(["harness", "run", &h, "--", "sh", "-c", "echo $RUN_SECRET"])
        .env("AGENTENV_REDACT", "0")
        .stdout("runner-s3cret/+&\n")
        .run();
}

#[test]
fn a_store_value_already_in_the_environment_is_still_masked() {
    // The caller's shell loaded the stores already (an env.py value equal
    // to the base's): the value is still the store's secret.
    let t = Tree::session();
    t.write(
        "home/.agents/env.py",
        "import json\nprint(json.dumps({'PYTOK': 'value-from-py-123'}))\n",
    );
    t.agentenv(["redact"])
        .env("PYTOK", "value-from-py-123")
        .stdin("a value-from-py-123 b\n")
        .stdout("a [REDACTED:PYTOK] b\n")
        .run();
}

#[test]
fn plain_store_values_already_exported_are_still_masked() {
    // `eval "$(agentenv env)"` (or the shell hook) ran: the caller holds
    // the plain file's values, so the session's result sets none of them.
    // They are still the store's secrets; a value declared public is not.
    let t = Tree::session()
        .file(
            "home/.agents/env",
            "GH_TOKEN=ghp_0123456789abcdefXYZ\nDOCS_URL=https://docs.example.org\n",
        )
        .file(
            "home/.agents/agentenv.toml",
            "[vars]\nDOCS_URL = { public = true }\n",
        );
    let held = [
        ("GH_TOKEN", "ghp_0123456789abcdefXYZ"),
        ("DOCS_URL", "https://docs.example.org"),
    ];
    t.agentenv([
        "exec",
        "--redact",
        "--",
        "sh",
        "-c",
        "echo \"$GH_TOKEN $DOCS_URL\"",
    ])
    .envs(held)
    .stdout("[REDACTED:GH_TOKEN] https://docs.example.org\n")
    .run();
    t.agentenv(["redact"])
        .envs(held)
        .stdin("x ghp_0123456789abcdefXYZ https://docs.example.org\n")
        .stdout("x [REDACTED:GH_TOKEN] https://docs.example.org\n")
        .run();
}

#[test]
fn a_descendant_holding_the_streams_does_not_hold_agentenv() {
    // The background sleep keeps stdout and stderr open after sh exits:
    // agentenv reads on while bytes come, then leaves (status sh's). The
    // sleep outlasts the deadline by far, so a loaded machine cannot make
    // the run look like a hang (it takes about 2 s at a load of 11).
    let t = store();
    redact(&t, "(sleep 0.2; echo late) & sleep 60 & echo done; exit 3")
        .deadline(Duration::from_secs(30))
        .status(3)
        .stdout_has("done\n")
        .run();
}

/// A parent (node does this) that made its pipe non-blocking and reads
/// slowly: agentenv waits for room instead of failing the write.
const NONBLOCKING_PARENT: &str = r#"
import os, subprocess, sys, time
r, w = os.pipe()
os.set_blocking(w, False)
p = subprocess.Popen(sys.argv[1:], stdout=w, stdin=subprocess.DEVNULL)
os.close(w)
n = 0
time.sleep(2)
while True:
    b = os.read(r, 65536)
    if not b:
        break
    n += len(b)
    time.sleep(0.001)
print(n, p.wait())
"#;

#[test]
#[cfg_attr(missing = "python3", ignore = "needs python3")]
fn a_non_blocking_stdout_gets_every_byte() {
    if !have("python3") {
        return;
    }
    let t = store();
    let bin = support::agentenv_bin();
    t.command("python3")
        .args(["-c", NONBLOCKING_PARENT])
        .arg(&bin)
        .args([
            "exec",
            "--redact",
            "--",
            "sh",
            "-c",
            "yes | head -c 2000000",
        ])
        .env("HOME", t.path("home"))
        .cwd(t.path("proj"))
        .stdout("2000000 0\n")
        .run();
}

/// A fake MCP stdio server: answers each JSON-RPC request line with a
/// result that puts the operator's ordinary values outside strings
/// (`"enabled":true`, `"timeout":3000`, `"port":8443`) and the token inside
/// one, then one notification per form of the token (each form as a JSON
/// string's content when it holds no `"` or `\`, else on stderr).
const FAKE_MCP: &str = r#"
import json, os, sys
forms = json.loads(sys.argv[1])
for line in sys.stdin:
    req = json.loads(line)
    e = os.environ
    sys.stdout.write('{"jsonrpc":"2.0","id":%d,"result":{"ok":true,"enabled":%s,"timeout":%s,"port":%s,"token":"%s","content":[{"type":"text","text":"token is %s"}]}}\n'
        % (req["id"], e["FEATURE_ENABLED"], e["TIMEOUT"], e["PORT"], e["API_TOKEN"], e["API_TOKEN"]))
    for i, f in enumerate(forms):
        if '"' in f or '\\' in f:
            sys.stderr.write("form %d: %s\n" % (i, f))
        else:
            sys.stdout.write('{"jsonrpc":"2.0","method":"notifications/message","params":{"i":%d,"data":"%s"}}\n' % (i, f))
    sys.stdout.flush()
"#;

#[test]
#[cfg_attr(missing = "python3", ignore = "needs python3")]
fn launch_redact_keeps_an_mcp_servers_json_rpc_valid() {
    if !have("python3") {
        return;
    }
    let token = "ghp_R34lT0ken+/x&y<z>9";
    let t = Tree::new()
        .file(
            ".env",
            format!("FEATURE_ENABLED=true\nTIMEOUT=3000\nPORT=8443\nAPI_TOKEN={token}\n"),
        )
        // Declared beside the .env: PORT is masked although a number.
        .file("agentenv.toml", "[vars]\nPORT = { sensitive = true }\n");
    t.write("server.py", FAKE_MCP);
    let forms: Vec<String> = forms(token.as_bytes())
        .into_iter()
        .map(|(_, f)| String::from_utf8(f).unwrap())
        .collect();
    assert!(forms.len() > 20, "{}", forms.len());
    let requests = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\"}\n";
    let r = t
        .host(["-v", "launch", "--redact", "--", "python3", "server.py"])
        .arg(serde_json::to_string(&forms).unwrap())
        .stdin(requests)
        .run();
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(
        lines.len(),
        2 * (1 + forms.iter().filter(|f| !f.contains(['"', '\\'])).count())
    );
    for line in &lines {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert_eq!(v["jsonrpc"], "2.0");
        if let Some(d) = v["params"]["data"].as_str() {
            assert!(
                d.starts_with("[REDACTED:API_TOKEN]") || d.contains("[REDACTED:API_TOKEN]"),
                "{line}"
            );
        }
    }
    let first: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    let res = &first["result"];
    assert_eq!(res["ok"], true);
    assert_eq!(res["enabled"], true, "true passes untouched");
    assert_eq!(res["timeout"], 3000, "3000 passes untouched");
    assert_eq!(res["port"], "[REDACTED:PORT]", "declared sensitive: quoted");
    assert_eq!(res["token"], "[REDACTED:API_TOKEN]");
    assert_eq!(res["content"][0]["text"], "token is [REDACTED:API_TOKEN]");
    for (what, bytes) in [
        ("stdout", &r.stdout_bytes),
        ("stderr", &r.stderr.as_bytes().to_vec()),
    ] {
        for f in &forms {
            assert!(
                !bytes.windows(f.len()).any(|w| w == f.as_bytes()),
                "{what}: a form of the token ({} bytes) is not masked",
                f.len()
            );
        }
        assert!(!String::from_utf8_lossy(bytes).contains("8443"), "{what}");
    }
    // -v says which filled values are not masked, and why (no value).
    assert!(
        r.stderr
            .contains("launch: TIMEOUT: not masked: a number; declare sensitive = true to mask it"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains(
        "launch: FEATURE_ENABLED: not masked: a boolean or null word; declare sensitive = true to mask it"
    ));
}

/// A store value holding `"`, `$`, `\` and a backtick, one written by hand
/// with backslash escapes, and a URL holding `&` and `<` (Go escapes them).
fn escaped_store() -> Tree {
    Tree::session().file(
        "home/.agents/env",
        "DB_PASSWORD='pw$RT4canary\"quote\\back`tick'\n\
         HAND_PW=\"hand\\$RT4canary\\\"pw\\\\x\"\n\
         DB_URL='postgres://app:RT4canaryDBpw@db/app?ssl=1&name=x<y>'\n",
    )
}

const ESCAPED: &[&str] = &[
    "pw$RT4canary\"quote\\back`tick",
    "hand$RT4canary\"pw\\x",
    "postgres://app:RT4canaryDBpw@db/app?ssl=1&name=x<y>",
];

/// No value, and none with its backslashes taken out, in `out`.
fn no_escaped_value(out: &str) {
    let unescaped = out.replace('\\', "");
    for v in ESCAPED {
        assert!(!out.contains(v), "{v} in:\n{out}");
        assert!(
            !unescaped.contains(&v.replace('\\', "")),
            "{v} (backslash-escaped) in:\n{out}"
        );
    }
    assert!(!out.contains("RT4canary"), "{out}");
}

/// Bash prints a value holding `" $ \` or a backtick double-quoted with
/// backslashes (`export -p`, `declare -p`), and `printf %q` escapes more:
/// masked forms (red team round 4, F2).
#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn bash_backslash_spellings_are_masked() {
    if !have("bash") {
        return;
    }
    let t = escaped_store();
    let script = r#"export -p | grep -E 'DB_PASSWORD|HAND_PW'
declare -p DB_PASSWORD HAND_PW
typeset -p DB_PASSWORD
printf '%q\n' "$DB_PASSWORD" "$HAND_PW"
set | grep -E '^(DB_PASSWORD|HAND_PW)='
echo "${DB_PASSWORD@Q}"
cat "$HOME/.agents/env""#;
    let r = t
        .agentenv(["exec", "--redact", "--", "bash", "-c", script])
        .run();
    no_escaped_value(&r.stdout);
    for line in [
        "declare -x DB_PASSWORD=\"[REDACTED:DB_PASSWORD]\"",
        "declare -x HAND_PW=\"[REDACTED:HAND_PW]\"",
        "HAND_PW=\"[REDACTED:HAND_PW]\"",
    ] {
        assert!(r.stdout.contains(line), "{line} in:\n{}", r.stdout);
    }
    assert_eq!(
        r.stdout.matches("[REDACTED:DB_PASSWORD]").count(),
        7,
        "{}",
        r.stdout
    );
    // audit finds the same spellings in a transcript.
    let log = t.write("transcript.txt", {
        let o = std::process::Command::new("bash")
            .arg("-c")
            .arg("declare -p DB_PASSWORD; printf '%q\\n' \"$HAND_PW\"")
            .env("DB_PASSWORD", ESCAPED[0])
            .env("HAND_PW", ESCAPED[1])
            .output()
            .unwrap();
        o.stdout
    });
    let a = t.agentenv(["audit", log.to_str().unwrap()]).status(1).run();
    assert!(
        a.stdout.contains(":1: DB_PASSWORD (bash-dq)"),
        "{}",
        a.stdout
    );
    // (printf %q of this value equals its double-quoted form.)
    assert!(a.stdout.contains(":2: HAND_PW (bash-dq)"), "{}", a.stdout);
    no_escaped_value(&a.stdout);
}

/// Go's `encoding/json` writes `&`, `<`, `>` as `\u0026`, `\u003c`,
/// `\u003e` (kubectl, docker, gh): a masked form (red team round 4, F10),
/// checked with the docker CLI's own JSON (`docker context inspect`, no
/// daemon needed).
#[test]
#[cfg_attr(missing = "docker", ignore = "needs docker")]
fn go_json_escapes_are_masked() {
    let Some(docker) = support::tool("docker") else {
        return;
    };
    let t = escaped_store();
    let script = format!(
        "D={}; $D context create rt4 --description \"$DB_URL\" --docker host=unix:///nonexistent >/dev/null && $D context inspect rt4 && $D context ls --format json",
        docker.display()
    );
    let r = t
        .agentenv(["exec", "--redact", "--", "sh", "-c", &script])
        .env("DOCKER_CONFIG", t.path("docker-config"))
        .run();
    assert!(
        r.stdout.contains("\"Description\": \"[REDACTED:DB_URL]\""),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("\"Description\":\"[REDACTED:DB_URL]\""),
        "{}",
        r.stdout
    );
    no_escaped_value(&r.stdout);
    assert!(!r.stdout.contains("\\u0026name"), "{}", r.stdout);
}
