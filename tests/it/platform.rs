//! The portable paths (docs/platforms.md): `AGENTENV_PORTABLE=1` makes a Linux
//! build take the paths a macOS build takes. These tests prove the switch
//! changes the path, through the binary, in both directions (the variable
//! set to `1` and to `0` decides over a build's default).

use crate::support::Tree;

/// A gated store whose plain env file bash must source (a command
/// substitution): it records the path bash sourced and what that open
/// file is.
fn gated_store() -> Tree {
    let t = Tree::session().file(
        "proj/.agents/env",
        "export SRC=\"$BASH_SOURCE\"\nexport WHAT=\"$(readlink /proc/$$/fd/${BASH_SOURCE##*/})\"\n",
    );
    t.agentenv(["allow"]).stdout("").run();
    t
}

fn loaded(t: &Tree, portable: &str) -> serde_json::Value {
    t.agentenv(["env", "--require-trust", "--format", "json", "--diff"])
        .env("AGENTENV_PORTABLE", portable)
        .run()
        .json()
}

#[test]
#[cfg_attr(missing = "bash", ignore = "needs bash")]
fn the_pinned_bytes_are_a_sealed_memfd_on_linux_and_an_unlinked_file_when_portable() {
    let t = gated_store();
    let linux = loaded(&t, "0");
    let src = linux["SRC"].as_str().unwrap();
    assert!(src.starts_with("/proc/self/fd/"), "{linux}");
    assert_eq!(linux["WHAT"], "/memfd:agentenv-layer (deleted)", "{linux}");

    let portable = loaded(&t, "1");
    let src = portable["SRC"].as_str().unwrap();
    assert!(src.starts_with("/dev/fd/"), "{portable}");
    let what = portable["WHAT"].as_str().unwrap();
    // A file of the temp dir, unlinked with its private directory before
    // bash ran: no name reaches it.
    assert!(
        what.contains("/agentenv-layer.") && what.ends_with("/bytes (deleted)"),
        "{portable}"
    );
    // Nothing is left behind in the temp dir.
    let dir = std::path::Path::new(what.trim_end_matches(" (deleted)"))
        .parent()
        .unwrap()
        .to_path_buf();
    assert!(!dir.exists(), "{}", dir.display());
}
