//! Session env benches: native plain-file evaluation, the assembly of a
//! large store tree (plain files only, so no child process runs), the cache
//! key over that tree, and `explain` rendering.
//!
//! Run: `cargo bench --bench session`.

use agentenv::core::Env;
use agentenv::session;
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use std::path::Path;

fn plain_text(prefix: &str, n: usize) -> String {
    let mut s = format!("# {prefix} settings\n");
    for i in 0..n {
        s.push_str(&format!(
            "export {prefix}_VAR_{i}='value {i} of {prefix}'\n"
        ));
    }
    s
}

fn base_env(w: &Path) -> Env {
    let mut e = Env::new();
    for (k, v) in [
        ("HOME", w.join("home").display().to_string()),
        ("PATH", "/usr/bin:/bin".to_string()),
        ("LANG", "C.UTF-8".to_string()),
        ("AGENTS_PYTHON", "/usr/bin/python3".to_string()),
        (
            "AGENTS_SYSTEM_ROOT",
            w.join("no-system").display().to_string(),
        ),
    ] {
        e.insert(k.into(), v.into());
    }
    e
}

/// A user store with `overlays` overlays and a project store, each with a
/// `pre.env` and an `env` of 5 assignments.
fn large_tree(w: &Path, overlays: usize) {
    let user = w.join("home/.agents");
    let proj = w.join("proj/.agents");
    for (dir, p) in [(&user, "U"), (&proj, "P")] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("pre.env"), plain_text(&format!("{p}PRE"), 5)).unwrap();
        std::fs::write(dir.join("env"), plain_text(p, 5)).unwrap();
    }
    for i in 0..overlays {
        let o = user.join(format!("overlays/o{i}"));
        std::fs::create_dir_all(&o).unwrap();
        std::fs::write(o.join("env"), plain_text(&format!("O{i}"), 5)).unwrap();
    }
    std::fs::create_dir_all(w.join("no-system")).unwrap();
}

fn benches(c: &mut Criterion) {
    let mut env = Env::new();
    env.insert("PATH".into(), "/usr/bin:/bin".into());
    let text = plain_text("BENCH", 50);
    c.bench_function("native: 50-assignment plain file", |b| {
        b.iter(|| agentenv::internals::evaluate(black_box(text.as_bytes()), &env))
    });

    let dir = tempfile::tempdir().unwrap();
    let w = dir.path();
    large_tree(w, 50);
    let base = base_env(w);
    let opts = session::Options {
        cwd: Some(w.join("proj")),
        ..Default::default()
    };
    c.bench_function("assemble: 54 plain files, 50 overlays", |b| {
        b.iter(|| session::assemble(&opts, base.clone()).unwrap())
    });
    let prepared = session::prepare(&opts, &base).unwrap();
    c.bench_function("cache key: same tree", |b| {
        b.iter(|| agentenv::internals::key_for(&prepared, &base, "export", true))
    });
    let s = session::assemble(&opts, base.clone()).unwrap();
    c.bench_function("explain: render text for the tree", |b| {
        b.iter(|| {
            let r = agentenv::core::explain::report(&s.assembly, &[]);
            agentenv::core::explain::render_text(&r, false)
        })
    });
}

criterion_group!(session_benches, benches);
criterion_main!(session_benches);
