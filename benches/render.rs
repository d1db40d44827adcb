//! Renderer throughput: a 200-variable environment with 5 removals, in
//! every format, full mode; and the same rendering by the reference's
//! `_format_env` (timed with `timeit` in the venv's Python, same run).
//!
//! Run: `AGENTENV_TEST_VENV=/work/venv cargo bench --bench render`

use agentenv::core::{ChangeSet, Env};
use agentenv::render::{render, Format, View};
use criterion::{criterion_group, Criterion};
use std::ffi::OsString;
use std::hint::black_box;
use std::time::Instant;

fn workload() -> (Env, ChangeSet) {
    let mut base = Env::new();
    for i in 0..150 {
        base.insert(
            OsString::from(format!("BASE_VAR_{i:03}")),
            OsString::from(format!("/usr/local/lib/tool-{i}/bin:/opt/it's {i}/share")),
        );
    }
    base.insert("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into());
    let mut ch = ChangeSet::new();
    for i in 0..50 {
        ch.set(
            format!("AGENT_VAR_{i:02}"),
            format!("value {i} with $dollar, \"quotes\", ‘curly’ and é\nsecond line"),
        );
    }
    ch.set("PATH", "/home/u/.agents/bin:/usr/local/bin:/usr/bin:/bin");
    for i in 0..5 {
        ch.remove(format!("BASE_VAR_{i:03}"));
    }
    (base, ch)
}

fn bench(c: &mut Criterion) {
    let (base, ch) = workload();
    let view = View::full(&base, &ch, Some("DOTAGENTS_"));
    for f in Format::ALL {
        c.bench_function(&format!("render/{}", f.name()), |b| {
            b.iter(|| render(black_box(f), black_box(&view)))
        });
    }
}

criterion_group!(benches, bench);

/// Mean seconds per rendering, ours (building the full-mode view
/// included, as the reference's timing includes its dict building).
fn ours(base: &Env, ch: &ChangeSet, f: Format) -> f64 {
    let n = 2000;
    let t = Instant::now();
    for _ in 0..n {
        let view = View::full(black_box(base), black_box(ch), Some("DOTAGENTS_"));
        black_box(render(f, &view));
    }
    t.elapsed().as_secs_f64() / n as f64
}

/// Mean seconds per rendering by the reference (None without the venv).
fn reference(base: &Env, ch: &ChangeSet, f: Format) -> Option<f64> {
    let venv = std::env::var_os("AGENTENV_TEST_VENV")?;
    let py = std::path::Path::new(&venv).join("bin/python");
    let data = serde_json::json!({
        "base": base.iter().map(|(k, v)| (k.to_str().unwrap().to_string(), serde_json::Value::from(v.to_str().unwrap()))).collect::<serde_json::Map<_, _>>(),
        "set": ch.assigned().iter().map(|(k, v)| (k.to_str().unwrap().to_string(), serde_json::Value::from(v.to_str().unwrap()))).collect::<serde_json::Map<_, _>>(),
        "removed": ch.removed().iter().map(|k| k.to_str().unwrap()).collect::<Vec<_>>(),
    });
    let script = format!(
        r#"
import json, sys, timeit
from dotagents.cli.env import _format_env
d = json.loads(sys.argv[1])
base, sets, removed = d["base"], d["set"], d["removed"]
def run():
    env = {{k: v for k, v in base.items() if not k.startswith("DOTAGENTS_") and k not in removed}}
    env.update(sets)
    (_format_env(env, "{fmt}", removed, base=None) + "\n").encode("utf-8", "replace")
n = 300
print(min(timeit.repeat(run, number=n, repeat=5)) / n)
"#,
        fmt = f.name()
    );
    let out = std::process::Command::new(py)
        .args(["-c", &script, &data.to_string()])
        .output()
        .ok()?;
    String::from_utf8(out.stdout).ok()?.trim().parse().ok()
}

fn main() {
    benches();
    let (base, ch) = workload();
    println!("\nformat      agentenv µs  reference µs  ratio");
    for f in Format::ALL {
        let a = ours(&base, &ch, f);
        match reference(&base, &ch, f) {
            Some(r) => println!(
                "{:<11} {:>10.1}  {:>12.1}  {:>5.0}×",
                f.name(),
                a * 1e6,
                r * 1e6,
                r / a
            ),
            None => println!(
                "{:<11} {:>10.1}  (no AGENTENV_TEST_VENV)",
                f.name(),
                a * 1e6
            ),
        }
    }
    Criterion::default().configure_from_args().final_summary();
}
