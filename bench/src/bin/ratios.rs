//! Reads criterion's estimates (`target/criterion`) and prints every ratio of the report as
//! a Markdown table: each figure divides two benchmarks measured in the same run.
//!
//! ```text
//! cargo bench -p load-bench && cargo run -p load-bench --bin ratios [-- target/criterion]
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Mean time per iteration (ns) of every benchmark found, by its full id.
fn estimates(root: &Path) -> BTreeMap<String, f64> {
    let mut found = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n == "new") {
                    if let Some((id, mean)) = read(&path) {
                        found.insert(id, mean);
                    }
                } else {
                    stack.push(path);
                }
            }
        }
    }
    found
}

fn read(dir: &Path) -> Option<(String, f64)> {
    let json = |name: &str| -> Option<serde_json::Value> {
        serde_json::from_str(&std::fs::read_to_string(dir.join(name)).ok()?).ok()
    };
    let id = json("benchmark.json")?["full_id"].as_str()?.to_owned();
    let mean = json("estimates.json")?["mean"]["point_estimate"].as_f64()?;
    Some((id, mean))
}

fn main() -> ExitCode {
    // criterion writes under cargo's target directory, which CARGO_TARGET_DIR may move.
    let root = std::env::args_os().nth(1).map_or_else(
        || {
            std::env::var_os("CARGO_TARGET_DIR")
                .map_or_else(
                    || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"),
                    PathBuf::from,
                )
                .join("criterion")
        },
        PathBuf::from,
    );
    let found = estimates(&root);
    if found.is_empty() {
        eprintln!(
            "ratios: no criterion results under {} (run `cargo bench -p load-bench` first)",
            root.display()
        );
        return ExitCode::FAILURE;
    }
    let get = |id: &str| found.get(id).copied();
    let mut rows: Vec<(String, String, Option<f64>)> = Vec::new();
    let mut ratio = |label: String, num: &str, den: &str, scale: f64| {
        let value = get(num).zip(get(den)).map(|(n, d)| scale * n / d);
        rows.push((label, format!("`{num}` / `{den}`"), value));
    };
    for (name, _) in load_bench::PATHS {
        ratio(
            format!("check / naive, {name}"),
            &format!("check/check/{name}"),
            &format!("check/naive/{name}"),
            1.0,
        );
    }
    for (name, _) in load_bench::PATHS {
        ratio(
            format!("check / floor, {name}"),
            &format!("check/check/{name}"),
            "check/floor",
            1.0,
        );
    }
    // One 2-thread iteration is a check on each thread: scaling = 2 * t1 / t2.
    ratio(
        "2-thread throughput / 1-thread throughput".into(),
        "check/admitted_web_1_thread",
        "check/admitted_web_2_threads",
        2.0,
    );
    for body in ["full_3_nodes", "filtered_100_nodes", "filtered_1000_nodes"] {
        ratio(
            format!("core parser / serde_json Value, {body}"),
            &format!("parse/core/{body}"),
            &format!("parse/serde_json/{body}"),
            1.0,
        );
    }
    for waiters in ["1", "100", "10000"] {
        ratio(
            format!("gate / event-listener, wake {waiters} waiter(s)"),
            &format!("adaptive/gate/{waiters}"),
            &format!("adaptive/event_listener/{waiters}"),
            1.0,
        );
    }
    println!("| ratio | benchmarks | value |\n|---|---|---|");
    for (label, ids, value) in rows {
        let value = value.map_or_else(|| "not measured".to_owned(), |v| format!("{v:.2}"));
        println!("| {label} | {ids} | {value} |");
    }
    ExitCode::SUCCESS
}
