//! The node-stats parser against `serde_json::Value` plus a walk to the maximum, on the same
//! bodies in the same group.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use load_bench::{filtered_body, serde_json_max};
use load_core::node_stats::parse_node_stats;

fn fixture_3_nodes() -> String {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/opensearch/os-2x-3nodes.json");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");
    for (name, body) in [
        ("full_3_nodes", fixture_3_nodes()),
        ("filtered_100_nodes", filtered_body(100)),
        ("filtered_1000_nodes", filtered_body(1000)),
    ] {
        let core = parse_node_stats(body.as_bytes()).expect("core parses");
        assert_eq!(
            Some(i64::from(core.max_cpu.get())),
            serde_json_max(body.as_bytes())
        );
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_with_input(BenchmarkId::new("core", name), &body, |b, body| {
            b.iter(|| parse_node_stats(black_box(body.as_bytes())))
        });
        group.bench_with_input(BenchmarkId::new("serde_json", name), &body, |b, body| {
            b.iter(|| serde_json_max(black_box(body.as_bytes())))
        });
    }
    group.finish();
}

criterion_group!(benches, parse);
criterion_main!(benches);
