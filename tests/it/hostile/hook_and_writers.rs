//! Hardening round 3 (issue 22): value files never go into a FIFO, device
//! or socket (#4), the hook's stamps (#6), reserved shell names (#8),
//! control bytes in displayed paths (#11), many overlays (#13), a huge
//! `env.py` output (#14), one deadline for `dotenv check`'s FIFOs.
//! Cross-user cases run as two real uids through `setpriv` (the tests run
//! as root).

use super::*;

/// #13: overlays are checked for duplicate names, shadowed across stores,
/// and their `bin`/`lib` dirs put on PATH/PYTHONPATH with hash sets, so the
/// work grows with their number (the unit tests beside `scope::duplicates`
/// and `steps::prepend_path` pin that with 200,000 entries; 20,000
/// overlays took 5 s in a release build before, see BENCHMARKS.md). The
/// bound below is a hang guard.
#[test]
fn twenty_thousand_overlays_assemble() {
    let n = 20_000;
    let w = W::new();
    for i in 0..n {
        std::fs::create_dir_all(w.p(&format!("home/.agents/overlays/o{i}/lib"))).unwrap();
    }
    std::fs::create_dir_all(w.p("proj/.agents/overlays/O7/lib")).unwrap();
    // One pair that normalizes to the same name: warned once.
    for dup in ["dup-a", "dup_a"] {
        std::fs::create_dir_all(w.p(&format!("home/.agents/overlays/{dup}"))).unwrap();
    }
    let o = run(w.cmd(&["env", "--format", "json", "--diff"]), 90);
    eprintln!("{n} overlays: {:?}", o.elapsed);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(
        o.stderr.matches("are one overlay (dup-a)").count(),
        1,
        "{}",
        o.stderr
    );
    let j = o.json();
    let m = j.as_object().unwrap();
    let roots = m.keys().filter(|k| k.ends_with("_OVERLAY_ROOT")).count();
    assert_eq!(roots, n + 1);
    // The project's overlays shadow the user store's of the same name.
    let proj = w.p("proj/.agents/overlays/O7");
    assert_eq!(m["O7_OVERLAY_ROOT"], proj.to_str().unwrap());
    let pp: Vec<&str> = m["PYTHONPATH"].as_str().unwrap().split(':').collect();
    assert_eq!(pp.len(), n);
    assert_eq!(pp[0], w.p("proj/.agents/overlays/O7/lib").to_str().unwrap());
    let path: Vec<&str> = m["PATH"].as_str().unwrap().split(':').collect();
    let bins = path.iter().filter(|e| e.contains("/overlays/")).count();
    assert_eq!(bins, n + 2, "every overlay's bin once (the pair's too)");
}

// VICTIM, ATTACKER, as_uid, need_root and open_tree: from `hostile.rs`.

fn chmod(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn mkfifo_as(p: &Path, uid: u32) {
    assert!(Command::new("mkfifo").arg(p).status().unwrap().success());
    chmod(p, 0o666);
    std::os::unix::fs::lchown(p, Some(uid), Some(uid)).unwrap();
}

/// #4: a FIFO another user planted in a sticky world-writable directory,
/// with a reader waiting on it, gets nothing from `--into`, `-o` or
/// `--report`: each refuses the target with a message and exits 1. The
/// same for a socket and a device (`/dev/null`), and for the victim's own
/// FIFO. Before, `-o` wrote the values into the FIFO (exit 0).
#[test]
#[cfg_attr(missing = "root", ignore = "needs root")]
fn value_files_never_go_into_a_fifo_device_or_socket() {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    if !need_root("value files into a FIFO") {
        return;
    }
    let w = open_tree();
    w.write("home/.agents/env", format!("S={CANARY}\n"));
    w.write("plug/.env", format!("T={CANARY}\n"));
    let h = w.write(
        "fs/harness/h.yaml",
        format!("agent: a\nrole: r\nenv:\n  sandbox:\n    S: {CANARY}\n"),
    );
    let share = w.p("share");
    std::fs::create_dir(&share).unwrap();
    chmod(&share, 0o1777);
    type Writer<'a> = Box<dyn Fn(&str) -> Command + 'a>;
    let cases: Vec<(&str, Writer)> = vec![
        (
            "env --into",
            Box::new(|p: &str| w.cmd(&["env", "--format", "export", "--into", p])),
        ),
        (
            "harness sandbox-env -o",
            Box::new(|p: &str| w.cmd(&["harness", "sandbox-env", h.to_str().unwrap(), "-o", p])),
        ),
        (
            "launch --report",
            Box::new(|p: &str| {
                let mut c = w.cmd(&["launch", "--report", p, "--", "true"]);
                c.env("AGENT_BUNDLE_ENV_FILE", w.p("plug/.env"));
                c
            }),
        ),
    ];
    for (i, (what, cmd)) in cases.iter().enumerate() {
        let theirs = share.join(format!("theirs{i}"));
        mkfifo_as(&theirs, ATTACKER);
        let mine = share.join(format!("mine{i}"));
        mkfifo_as(&mine, VICTIM);
        let sock = share.join(format!("sock{i}"));
        let _l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        chmod(&sock, 0o666);
        for target in [&theirs, &mine, &sock, Path::new("/dev/null")] {
            // A reader waits on the FIFO (non-blocking, so the test never
            // hangs); whatever a writer put in would be read below.
            let mut reader = target.metadata().unwrap().file_type().is_fifo().then(|| {
                std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
                    .open(target)
                    .unwrap()
            });
            let o = run(as_uid(VICTIM, &cmd(target.to_str().unwrap())), 60);
            o.no_canary();
            assert_eq!(o.code, Some(1), "{what} {}: {}", target.display(), o.stderr);
            assert!(
                o.stderr.contains(&target.display().to_string())
                    && o.stderr.contains("is a FIFO, device or socket"),
                "{what}: {}",
                o.stderr
            );
            if let Some(r) = reader.as_mut() {
                let mut got = Vec::new();
                let _ = std::io::Read::read_to_end(r, &mut got);
                assert!(
                    got.is_empty(),
                    "{what} wrote {} bytes into the FIFO",
                    got.len()
                );
            }
            let t = std::fs::symlink_metadata(target).unwrap().file_type();
            assert!(t.is_fifo() || t.is_socket() || t.is_char_device(), "{what}");
        }
    }
}

/// Left from round 2: `dotenv check` gave each FIFO its own 5 s, so three
/// FIFOs nobody writes took 15 s. Now its inputs share one deadline (as
/// `launch` and `harness resolve` do): a pipe met after it is refused
/// without being opened, even one whose writer is ready, and the regular
/// files are still checked.
#[test]
fn dotenv_check_pipe_inputs_share_one_deadline() {
    let w = W::new();
    let dead: Vec<PathBuf> = ["a", "b", "c"]
        .iter()
        .map(|n| w.fifo(&format!("plug/{n}.fifo")))
        .collect();
    let ready = w.fifo("plug/ready.fifo");
    let _writer = KillOnDrop(
        Command::new("sh")
            .arg("-c")
            .arg("printf 'LATE=1\\n' > \"$0\"")
            .arg(&ready)
            .spawn()
            .unwrap(),
    );
    let ok = w.write("plug/ok.env", format!("OK=1\nbroken line {CANARY}\n"));
    let mut args = vec!["dotenv", "check"];
    let names: Vec<String> = dead
        .iter()
        .chain([&ready, &ok])
        .map(|p| p.display().to_string())
        .collect();
    args.extend(names.iter().map(String::as_str));
    let o = run(w.cmd(&args), 60);
    o.no_canary();
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    for p in dead.iter().chain([&ready]) {
        assert!(
            o.stderr.contains(&format!(
                "cannot read {}: pipe not finished within 5 s",
                p.display()
            )),
            "{}",
            o.stderr
        );
    }
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with(&format!("{}:2: ", ok.display())), "{out}");
}

/// `agentenv hook bash --load --pid PID` as the victim in `home`, with the
/// trust state under `xdg/agentenv`.
fn hook_load(w: &W, home: &Path, xdg: &Path, pid: &str) -> Command {
    let mut c = Command::new(support::agentenv_bin());
    c.env_clear()
        .env("HOME", home)
        .env("XDG_STATE_HOME", xdg)
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .env("AGENTS_PYTHON", support::pinned_python())
        .env("AGENTS_SYSTEM_ROOT", w.p("no-system"))
        .env("AGENTENV_HOOK_CACHE", "0")
        .env("PWD", home)
        .current_dir(home)
        .args(["hook", "bash", "--load", "--pid", pid])
        .stdin(Stdio::null());
    c
}

/// #6: the hook wrote its stamps into a trust state dir that the trust
/// code refuses. With `$XDG_STATE_HOME` in a shared place, another user's
/// `agentenv/stamps -> ~victim/mail/inbox` made the victim create
/// `inbox/4242` and delete the numeric-named mail of pids that are gone.
/// Now nothing is written or deleted there (no stamp: only a `cd`
/// reloads); in the victim's own state dir the cleanup removes only what
/// a stamp looks like.
#[test]
#[cfg_attr(missing = "root", ignore = "needs root")]
fn the_hook_never_writes_or_deletes_in_a_state_dir_it_does_not_own() {
    if !need_root("hook stamps in a foreign state dir") {
        return;
    }
    let w = open_tree();
    let home = w.p("vhome");
    let inbox = home.join("mail/inbox");
    std::fs::create_dir_all(&inbox).unwrap();
    std::fs::create_dir_all(home.join(".agents")).unwrap();
    w.write("vhome/.agents/env", "U=1\n");
    for i in ["1", "77777", "99999"] {
        w.write(&format!("vhome/mail/inbox/{i}"), "");
    }
    let shared = w.p("shared");
    std::fs::create_dir(&shared).unwrap();
    chmod(&shared, 0o1777);
    let theirs = shared.join("agentenv");
    std::fs::create_dir(&theirs).unwrap();
    chmod(&theirs, 0o777);
    std::os::unix::fs::symlink(&inbox, theirs.join("stamps")).unwrap();
    for p in [&theirs, &theirs.join("stamps")] {
        std::os::unix::fs::lchown(p, Some(ATTACKER), Some(ATTACKER)).unwrap();
    }
    // The store file is the victim's (written 0600, as set writes one).
    let env = home.join(".agents/env");
    for p in [
        &home,
        &home.join(".agents"),
        &env,
        &home.join("mail"),
        &inbox,
    ] {
        std::os::unix::fs::lchown(p, Some(VICTIM), Some(VICTIM)).unwrap();
    }
    let o = run(as_uid(VICTIM, &hook_load(&w, &home, &shared, "4242")), 60);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        stdout_text(&o).contains("export U='1'"),
        "{}",
        stdout_text(&o)
    );
    assert!(
        stdout_text(&o).contains("_agentenv_stamp=''"),
        "{}",
        stdout_text(&o)
    );
    let mut left: Vec<String> = std::fs::read_dir(&inbox)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["1", "77777", "99999"], "the inbox was changed");
    let mut there: Vec<String> = std::fs::read_dir(&theirs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    there.sort();
    assert_eq!(there, ["stamps"], "nothing created in their dir");

    // The victim's own state dir: a stamp is left; of the planted
    // numeric names of gone pids only the empty regular file is removed
    // (not a file with content, a link, a directory, a name like "007").
    let own = home.join("xdg");
    let stamps = own.join("agentenv/stamps");
    std::fs::create_dir_all(&stamps).unwrap();
    chmod(&own.join("agentenv"), 0o700);
    chmod(&stamps, 0o700);
    std::fs::write(stamps.join("88881"), "").unwrap();
    std::fs::write(stamps.join("88882"), "mail").unwrap();
    std::os::unix::fs::symlink(inbox.join("99999"), stamps.join("88883")).unwrap();
    std::fs::create_dir(stamps.join("88884")).unwrap();
    std::fs::write(stamps.join("088885"), "").unwrap();
    for e in walk(&own) {
        std::os::unix::fs::lchown(&e, Some(VICTIM), Some(VICTIM)).unwrap();
    }
    let o = run(as_uid(VICTIM, &hook_load(&w, &home, &own, "4243")), 60);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let stamp = stamps.join("4243");
    assert!(
        stdout_text(&o).contains(&format!("_agentenv_stamp='{}'", stamp.display())),
        "{}",
        stdout_text(&o)
    );
    let mut left: Vec<String> = std::fs::read_dir(&stamps)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["088885", "4243", "88882", "88883", "88884"]);
    assert!(inbox.join("99999").exists());
}

/// `p` and everything under it (links not followed).
fn walk(p: &Path) -> Vec<PathBuf> {
    let mut out = vec![p.to_path_buf()];
    if std::fs::symlink_metadata(p).unwrap().is_dir() {
        for e in std::fs::read_dir(p).unwrap().flatten() {
            out.extend(walk(&e.path()));
        }
    }
    out
}

/// Run `script` in `shell` (`zsh -f` / `fish --no-config`) with
/// `HOME=w/home`, the trust state in `w/state`; `None` when the shell is
/// missing (skipped with a message).
fn shell_script(w: &W, shell: &str, script: &str) -> Option<Out> {
    let Some(sh) = support::which(shell) else {
        support::skip(shell, "not installed");
        return None;
    };
    let mut c = Command::new(sh);
    if shell == "zsh" {
        c.arg("-f");
    } else {
        c.arg("--no-config");
    }
    c.arg("-c")
        .arg(script)
        .env_clear()
        .env("HOME", w.p("home"))
        .env("XDG_STATE_HOME", w.p("state"))
        .env("PATH", "/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .env("AGENTS_PYTHON", support::pinned_python())
        .env("AGENTS_SYSTEM_ROOT", w.p("no-system"))
        .env("AGENTENV_HOOK_CACHE", "0")
        .current_dir(w.p("home"))
        .stdin(Stdio::null());
    Some(run(c, 120))
}

/// #8: a store that sets a name the shell reserves (zsh `status`,
/// `pipestatus`, `path`; fish `fish_pid`, `status`, `version`) broke the
/// undo: in zsh the read-only `status` aborted the eval, so leaving the
/// project kept every value it set (`ZZZ`) and its `bin/` on PATH; in fish
/// the undo erased `fish_pid` and every later reload failed. Now such
/// names are skipped with one warning naming them (never a value), leaving
/// restores everything, and later reloads work.
#[test]
fn undo_stays_exact_when_a_store_sets_names_the_shell_reserves() {
    for shell in ["zsh", "fish"] {
        let w = W::new();
        std::fs::create_dir_all(w.p("home/p/.agents/bin")).unwrap();
        std::fs::create_dir_all(w.p("state")).unwrap();
        chmod(&w.p("state"), 0o700);
        w.write(
            "home/p/.agents/env",
            format!("AAA=1\nstatus=3\npipestatus=4\nversion=5\nZZZ={CANARY}\n"),
        );
        w.write(
            "home/p/.agents/env.py",
            "import json\nprint(json.dumps({'fish_pid': '1', 'path': '/nowhere', 'fish_function_path': '/x'}))\n",
        );
        let p = w.p("home/p");
        let bin = support::agentenv_bin();
        let (hook, show, pidcheck) = if shell == "zsh" {
            (
                format!("eval \"$('{}' hook zsh)\"", bin.display()),
                "print -r -- \"$1: AAA=${AAA-unset} ZZZ=${ZZZ-unset} PATH=$PATH\"",
                "print -r -- \"pid ok\"",
            )
        } else {
            (
                format!("'{}' hook fish | source", bin.display()),
                "set -q AAA; or set AAA unset; set -q ZZZ; or set ZZZ unset; echo \"$argv[1]: AAA=$AAA ZZZ=$ZZZ PATH=\"(string join : $PATH)",
                "test \"$fish_pid\" = (echo %self); and echo 'pid ok'",
            )
        };
        let call = if shell == "zsh" {
            "_agentenv_hook"
        } else {
            "__agentenv_hook"
        };
        let def = if shell == "zsh" {
            format!("show() {{ {show}; }}")
        } else {
            format!("function show; {show}; end")
        };
        let script = format!(
            "{hook}\n{def}\ncd '{p}'; '{bin}' allow >/dev/null; {call}; show in\n\
             cd /; {call}; show out\ncd '{p}'; {call}; show again\ncd /; {call}; show out2\n{pidcheck}\n",
            p = p.display(),
            bin = bin.display(),
        );
        let Some(o) = shell_script(&w, shell, &script) else {
            continue;
        };
        o.no_canary();
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert_eq!(o.code, Some(0), "{shell}: {out}\n{}", o.stderr);
        let pbin = w.p("home/p/.agents/bin").display().to_string();
        let line = |tag: &str| {
            out.lines()
                .find(|l| l.starts_with(&format!("{tag}: ")))
                .unwrap_or_else(|| panic!("{shell}: no {tag} line: {out}\n{}", o.stderr))
                .to_string()
        };
        for tag in ["in", "again"] {
            let l = line(tag);
            assert!(
                l.contains(&format!("AAA=1 ZZZ={CANARY} ")),
                "{shell} {tag}: {l}"
            );
            assert!(l.contains(&pbin), "{shell} {tag}: {l}");
        }
        for tag in ["out", "out2"] {
            let l = line(tag);
            assert!(l.contains("AAA=unset ZZZ=unset "), "{shell} {tag}: {l}");
            assert!(!l.contains(&pbin), "{shell} {tag}: {l}");
        }
        assert!(out.contains("pid ok"), "{shell}: {out}\n{}", o.stderr);
        assert!(
            !o.stderr.contains("could not load") && !o.stderr.contains("read-only"),
            "{shell}: {}",
            o.stderr
        );
        let warned: Vec<&str> = o
            .stderr
            .lines()
            .filter(|l| l.contains("the shell reserves these names"))
            .collect();
        assert!(!warned.is_empty(), "{shell}: {}", o.stderr);
        assert!(warned[0].contains("status"), "{shell}: {}", warned[0]);
    }
}

/// No raw control character in `s` (C0 but the line feed, DEL, C1).
fn assert_no_controls(what: &str, s: &str) {
    let bad: Vec<char> = s
        .chars()
        .filter(|c| (c.is_control() && *c != '\n') || ('\u{80}'..='\u{9f}').contains(c))
        .collect();
    assert!(bad.is_empty(), "{what}: raw {bad:?} in {s:?}");
}

/// #11: a directory whose name holds terminal control sequences (set the
/// title, erase the line, carriage return, conceal; an 8-bit CSI) was
/// printed raw by the hook's "not allowed" line, `allow` and `status`.
/// Every display escapes them now; the hook's shell code still carries the
/// exact path.
#[test]
fn control_sequences_in_paths_never_reach_the_terminal() {
    let w = W::new();
    let evil = "x\u{1b}]0;T\u{7}\u{1b}[2K\rloaded OK\u{1b}[8m\u{9b}1m\u{7f}\nagentenv: forged";
    let p = w.p(&format!("repo/{evil}"));
    std::fs::create_dir_all(p.join(".agents")).unwrap();
    std::fs::create_dir_all(p.join("sub")).unwrap();
    std::fs::create_dir_all(w.p("state")).unwrap();
    chmod(&w.p("state"), 0o700);
    w.write(&format!("repo/{evil}/.agents/env"), "A=1\n");
    let home = w.p("home");
    let cmd = |dir: &Path, args: &[&str]| {
        let mut c = Command::new(support::agentenv_bin());
        c.env_clear()
            .env("HOME", &home)
            .env("XDG_STATE_HOME", w.p("state"))
            .env("PATH", "/usr/bin:/bin")
            .env("LANG", "C.UTF-8")
            .env("AGENTS_PYTHON", support::pinned_python())
            .env("AGENTS_SYSTEM_ROOT", w.p("no-system"))
            .env("AGENTENV_HOOK_CACHE", "0")
            .env("PWD", dir)
            .current_dir(dir)
            .args(args)
            .stdin(Stdio::null());
        c
    };
    let sub = p.join("sub");
    let shown = "x\\x1b]0;T\\x07\\x1b[2K\\x0dloaded OK\\x1b[8m\\u{9b}1m\\x7f\\x0aagentenv: forged";
    let hook = ["hook", "bash", "--load", "--pid", "1"];
    let o = run(cmd(&sub, &hook), 60);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_no_controls("hook", &o.stderr);
    assert!(!o.stderr.contains("\nagentenv: forged"), "{}", o.stderr);
    assert!(
        o.stderr
            .contains(&format!("{shown}/.agents is not allowed")),
        "{}",
        o.stderr
    );
    let steps: [(&str, Vec<&str>); 5] = [
        ("allow", vec!["allow"]),
        ("status", vec!["status"]),
        ("hook after allow", hook.to_vec()),
        ("deny", vec!["deny"]),
        ("init claude", vec!["init", "claude", "--project", "."]),
    ];
    for (what, args) in steps {
        let o = run(cmd(&sub, &args), 60);
        assert_eq!(o.code, Some(0), "{what}: {}", o.stderr);
        assert_no_controls(what, &o.stderr);
        // No line forged by the name's line feed.
        assert!(
            !o.stderr.contains("\nagentenv: forged"),
            "{what}: {}",
            o.stderr
        );
        if what == "status" {
            assert_no_controls(what, &String::from_utf8_lossy(&o.stdout));
            assert!(String::from_utf8_lossy(&o.stdout).contains(shown), "{what}");
        } else if what != "hook after allow" {
            assert!(o.stderr.contains(shown), "{what}: {}", o.stderr);
        }
        if what == "hook after allow" {
            // The shell code carries the exact bytes (it is evaluated, not shown).
            let out = String::from_utf8_lossy(&o.stdout);
            assert!(
                out.contains(&format!("export AGENTS_PROJECT_ROOT='{}'", p.display())),
                "{out}"
            );
        }
    }
}

/// #14: an `env.py` printing 1.1 million keys (14 MB, under the 16 MiB
/// output cap) took 17 s and 790 MB after the child exited, past
/// `--timeout`. An output holds at most 100,000 values now: parsing stops
/// at the first one past it, the layer contributes nothing, a warning
/// names the file, and the peak memory stays small. (The deadline is
/// checked while the output is parsed and while its keys are applied.)
#[test]
fn an_env_py_output_with_a_million_keys_is_refused_in_bounded_memory() {
    let w = W::new();
    w.write("home/.agents/env", "PLAIN=1\n");
    let py = w.write(
        "home/.agents/env.py",
        "import json\nprint(json.dumps({f'V{i}': '' for i in range(1100000)}))\n",
    );
    let o = run(
        w.cmd(&["env", "--format", "json", "--diff", "--timeout", "60"]),
        120,
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(
        o.stderr.contains(&format!(
            "env.py output holds more than 100000 values (the limit; nothing of it is used): {}",
            py.display()
        )),
        "{}",
        o.stderr
    );
    let j = o.json();
    assert_eq!(j["PLAIN"], "1");
    assert!(j.get("V0").is_none());
    assert!(o.hwm_kib < MAX_HWM_KIB, "peak RSS {} KiB", o.hwm_kib);
}
