//! Parser throughput: `agentenv::dotenv::parse` vs the `dotenvy` crate on
//! the same bytes, in the same run. See BENCHMARKS.md ("Dotenv parser").

#[path = "support/dotenv_gen.rs"]
mod dotenv_gen;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::hint::black_box;

fn agentenv_parse(bytes: &[u8]) -> usize {
    agentenv::dotenv::parse_bytes(bytes).entries.len()
}

fn dotenvy_parse(bytes: &[u8]) -> usize {
    // Same shape of result: an ordered map with the last value winning.
    let mut map = indexmap::IndexMap::new();
    for item in dotenvy::from_read_iter(bytes) {
        let (k, v) = item.expect("dotenvy parses the generated input");
        map.insert(k, v);
    }
    map.len()
}

fn bench(c: &mut Criterion) {
    let big = dotenv_gen::generate(10 * 1024 * 1024);
    // 50 lines from the same generator.
    let small: String = big.lines().take(50).flat_map(|l| [l, "\n"]).collect();
    for (name, text) in [("10MiB", &big), ("50lines", &small)] {
        let bytes = text.as_bytes();
        // Both parsers must see the same variables.
        assert_eq!(agentenv_parse(bytes), dotenvy_parse(bytes));
        let mut g = c.benchmark_group(format!("parse/{name}"));
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        if name == "10MiB" {
            g.sample_size(10);
        }
        g.bench_function("agentenv", |b| b.iter(|| agentenv_parse(black_box(bytes))));
        g.bench_function("dotenvy", |b| b.iter(|| dotenvy_parse(black_box(bytes))));
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
