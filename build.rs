//! Development only: which tools the integration tests will not find.
//!
//! For each tool a test needs (a shell, node, strace, docker, direnv,
//! man and groff, the test virtual environment with the reference
//! `dotagents`, root for the chown tests) that is missing here, this script
//! sets `cfg(missing = "TOOL")`, and such a test carries
//! `#[cfg_attr(missing = "zsh", ignore = "needs zsh")]`: plain `cargo test`
//! lists it as ignored with the reason, instead of passing without having
//! run. With `AGENTENV_REQUIRE_ALL=1` (CI) nothing is marked, so a missing
//! tool fails its tests.
//!
//! The library and the binary never read these cfgs; the published crate
//! does not ship this file (see `include` in Cargo.toml), so it has no build
//! script at all.

use std::path::{Path, PathBuf};

/// Every name a test may ask for (`missing = "…"`).
const TOOLS: &[&str] = &[
    "bash", "dash", "zsh", "fish", "node", "strace", "docker", "direnv", "man", "groff", "python3",
    "xxd",
];

fn main() {
    // Any change below reruns this script and rebuilds the crate, so watch
    // only what decides the output.
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=AGENTENV_REQUIRE_ALL");
    let names: Vec<String> = TOOLS
        .iter()
        .chain(&["venv", "root", "python311"])
        .map(|t| format!("\"{t}\""))
        .collect();
    println!(
        "cargo::rustc-check-cfg=cfg(missing, values({}))",
        names.join(", ")
    );
    if std::env::var_os("AGENTENV_REQUIRE_ALL").is_some_and(|v| v == "1") {
        return;
    }
    println!("cargo::rerun-if-env-changed=PATH");
    println!("cargo::rerun-if-env-changed=AGENTENV_TEST_VENV");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    for tool in TOOLS {
        if !dirs.iter().any(|d| d.join(tool).is_file()) {
            println!("cargo::rustc-cfg=missing=\"{tool}\"");
        }
    }
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let venv = match std::env::var_os("AGENTENV_TEST_VENV") {
        Some(v) => PathBuf::from(v),
        None => manifest.join(".venv"),
    };
    if !venv_ready(&venv) {
        println!("cargo::rustc-cfg=missing=\"venv\"");
    }
    // Watch the files that decide the venv, where they exist (a path that
    // does not exist would rerun this script, and rebuild the crate, on
    // every build).
    for p in [venv.join("bin/dotagents"), venv.join("bin/python")] {
        if p.exists() {
            println!("cargo::rerun-if-changed={}", p.display());
        }
    }
    if !is_root() {
        println!("cargo::rustc-cfg=missing=\"root\"");
    }
    // The CPython-table tests need the reference interpreter's version.
    let python3 = dirs.iter().map(|d| d.join("python3")).find(|p| p.is_file());
    if let Some(p) = &python3 {
        println!("cargo::rerun-if-changed={}", p.display());
    }
    if !python3.is_some_and(|p| is_python311(&p)) {
        println!("cargo::rustc-cfg=missing=\"python311\"");
    }
}

/// Whether `python3` is CPython 3.11 (the reference interpreter, whose
/// Unicode tables the compat tests compare with).
fn is_python311(python3: &Path) -> bool {
    std::process::Command::new(python3)
        .args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"3.11")
}

/// The test virtual environment holds the reference CLI and its readers.
fn venv_ready(venv: &Path) -> bool {
    let py = venv.join("bin/python");
    venv.join("bin/dotagents").is_file()
        && std::process::Command::new(&py)
            .args(["-c", "import dotagents, dotenv, yaml"])
            .output()
            .is_ok_and(|o| o.status.success())
}

/// Whether this build runs as root (the chown tests need it; the tests
/// run as the user who builds them).
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}
