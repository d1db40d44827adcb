//! Masker throughput (BENCHMARKS.md#masking---redact): 8 MiB of log-like text
//! (lines of printable ASCII with a few planted secrets and forms) through
//! `Masker::mask` and through `MaskWriter` in 64 KiB writes, with 1, 20 and
//! 200 sensitive values (each with every form the masker knows); and 8 MiB
//! of JSON-RPC lines with 20 values (the JSON rule's cost).
//!
//! The time is the thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), not the
//! wall clock, so a loaded machine slows the run but not the figures
//! much; `MASK_BENCH_WALL=1` measures wall time instead.
//!
//! Run: `cargo bench --bench mask`

use agentenv::internals::mask::{forms, MaskWriter, Masker};
use criterion::{criterion_group, Criterion, Throughput};
use std::hint::black_box;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The time `f` takes for `iters` iterations: CPU time of this thread,
/// or wall time with `MASK_BENCH_WALL=1`.
fn timed(iters: u64, mut f: impl FnMut()) -> Duration {
    use rustix::time::{clock_gettime, ClockId};
    if std::env::var_os("MASK_BENCH_WALL").is_some() {
        let t = Instant::now();
        for _ in 0..iters {
            f();
        }
        return t.elapsed();
    }
    let ns = || {
        let t = clock_gettime(ClockId::ThreadCPUTime);
        t.tv_sec as u128 * 1_000_000_000 + t.tv_nsec as u128
    };
    let t0 = ns();
    for _ in 0..iters {
        f();
    }
    Duration::from_nanos((ns() - t0) as u64)
}

/// SplitMix64.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// `n` secrets like real tokens: a prefix and 32 random characters.
fn secrets(n: usize) -> Vec<(String, Vec<u8>)> {
    let mut r = Rng(n as u64);
    const ALPHA: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    (0..n)
        .map(|i| {
            let mut v = format!("tok{i}_").into_bytes();
            for _ in 0..32 {
                v.push(ALPHA[(r.next() % ALPHA.len() as u64) as usize]);
            }
            (format!("SECRET_{i:03}"), v)
        })
        .collect()
}

/// `size` bytes of log lines, one in 100 holding a form of a secret.
fn log_text(size: usize, secrets: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut r = Rng(7);
    let words: &[&[u8]] = &[
        b"INFO",
        b"request",
        b"GET",
        b"/api/v1/items",
        b"200",
        b"took",
        b"12ms",
        b"user=alice",
        b"cache",
        b"miss",
        b"compiling",
        b"crate",
        b"test",
        b"ok",
        b"warning:",
        b"unused",
    ];
    let planted: Vec<Vec<u8>> = secrets
        .iter()
        .flat_map(|(_, v)| forms(v).into_iter().map(|(_, f)| f))
        .collect();
    let mut out = Vec::with_capacity(size + 200);
    let mut line = 0u64;
    while out.len() < size {
        line += 1;
        for _ in 0..(r.next() % 12 + 3) {
            out.extend_from_slice(words[(r.next() % words.len() as u64) as usize]);
            out.push(b' ');
        }
        if line.is_multiple_of(100) && !planted.is_empty() {
            out.extend_from_slice(&planted[(r.next() % planted.len() as u64) as usize]);
        }
        out.push(b'\n');
    }
    out.truncate(size);
    out
}

/// `size` bytes of JSON-RPC lines (an MCP server's stdout), one in 100
/// holding a secret inside a string: each such line is checked to be JSON
/// and stays JSON (docs/masking.md#a-json-line-stays-json).
fn json_lines(size: usize, secrets: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut r = Rng(11);
    let mut out = Vec::with_capacity(size + 400);
    let mut id = 0u64;
    while out.len() < size {
        id += 1;
        out.extend_from_slice(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"ok\":true,\"n\":{},\"text\":\"line of tool output ", r.next() % 1000)
                .as_bytes(),
        );
        if id.is_multiple_of(100) {
            out.extend_from_slice(&secrets[(r.next() % secrets.len() as u64) as usize].1);
        }
        out.extend_from_slice(b" done\"}}\n");
    }
    out.truncate(size);
    out
}

fn bench(c: &mut Criterion) {
    let size = 8 << 20;
    {
        let s = secrets(20);
        let m = Arc::new(Masker::new(s.clone()));
        let text = json_lines(size, &s);
        let mut g = c.benchmark_group("mask/20_values_jsonl");
        g.throughput(Throughput::Bytes(size as u64));
        g.sample_size(10);
        g.bench_function("whole", |b| {
            b.iter_custom(|iters| {
                timed(iters, || {
                    black_box(m.mask(black_box(&text)));
                })
            })
        });
        g.bench_function("stream_64k", |b| {
            b.iter_custom(|iters| {
                timed(iters, || {
                    let mut w = MaskWriter::new(m.clone(), Vec::with_capacity(size + 4096));
                    for chunk in text.chunks(64 * 1024) {
                        w.write_all(chunk).unwrap();
                    }
                    black_box(w.finish().unwrap());
                })
            })
        });
        g.finish();
    }
    for n in [1usize, 20, 200] {
        let s = secrets(n);
        let m = Arc::new(Masker::new(s.clone()));
        let text = log_text(size, &s);
        let mut g = c.benchmark_group(format!("mask/{n}_values"));
        g.throughput(Throughput::Bytes(size as u64));
        g.sample_size(10);
        g.bench_function("whole", |b| {
            b.iter_custom(|iters| {
                timed(iters, || {
                    black_box(m.mask(black_box(&text)));
                })
            })
        });
        g.bench_function("stream_64k", |b| {
            b.iter_custom(|iters| {
                timed(iters, || {
                    let mut w = MaskWriter::new(m.clone(), Vec::with_capacity(size + 4096));
                    for chunk in text.chunks(64 * 1024) {
                        w.write_all(chunk).unwrap();
                    }
                    black_box(w.finish().unwrap());
                })
            })
        });
        g.finish();
        // Building the masker is paid once per `exec --redact`.
        c.bench_function(&format!("mask/{n}_values/build"), |b| {
            b.iter_custom(|iters| {
                timed(iters, || {
                    black_box(Masker::new(black_box(s.clone())));
                })
            })
        });
        eprintln!("{n} values: {} needles", m.needles().len());
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
