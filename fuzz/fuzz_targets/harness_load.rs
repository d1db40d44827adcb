//! The harness loader and the whole resolve pipeline (YAML → schema →
//! forge → CEL overlays → validation → expansion → lint → sandbox lines)
//! never panic or hang on any file, and no error or warning carries the
//! value of a host variable.
#![no_main]
use agentenv::core::Env;
use agentenv::harness::{resolve, Options};
use libfuzzer_sys::fuzz_target;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::OnceLock;

const CANARY: &str = "qz7canaryVALUE";

fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("agentenv-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(d.join("harness")).unwrap();
        d
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The pure loader first.
    let _ = agentenv::internals::parse_harness(text, std::path::Path::new("h.yaml"));

    let root = dir();
    let file = root.join("harness").join("h.yaml");
    std::fs::write(&file, data).unwrap();
    let mut host = Env::new();
    for k in ["SECRET", "TOKEN", "HOME", "A", "B"] {
        host.insert(OsString::from(k), OsString::from(CANARY));
    }
    host.insert(OsString::from("GITHUB_ACTIONS"), OsString::from("true"));
    let opts = Options {
        file: file.clone(),
        fullsend_dir: Some(root.clone()),
        ..Default::default()
    };
    let leaks = !text.contains("qz7");
    match resolve(&opts, &host) {
        Ok(r) => {
            let _ = r.to_json();
            let _ = r.sandbox_dotenv();
            let _ = r.sandbox_export();
            // `harness explain` without values never shows a host value.
            let shown = r.explain_text(&[], false);
            let shown_json = r.explain_json(&[], false);
            let _ = r.explain_text(&[], true);
            if leaks {
                assert!(
                    !shown.contains(CANARY) && !shown_json.contains(CANARY),
                    "explain leaks a host value"
                );
                for w in r.warnings.iter().map(String::as_str).chain(r.assembly.warnings()) {
                    assert!(!w.contains(CANARY), "warning leaks a host value");
                }
                for d in &r.diagnostics {
                    assert!(!d.to_string().contains(CANARY), "lint leaks a host value");
                }
            }
        }
        Err(e) => {
            if leaks {
                assert!(!e.to_string().contains(CANARY), "error leaks a host value");
            }
        }
    }
});
