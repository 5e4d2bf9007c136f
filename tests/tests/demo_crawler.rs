//! The demo's crawler against a stand-in cluster (a cluster down on demand, then answering):
//! its `_bulk` batches walk the corpus and start over after its last document, and a
//! failing cluster is counted in `crawler.index_errors` while the crawler goes on.

use std::net::SocketAddr;
use std::time::Duration;

use load_examples::app::{DemoOptions, SearchMode};
use load_examples::cli::{ConfigFrom, Options};
use load_examples::server::start;
use load_tests::{Reply, Stub, wait_until};
use serde_json::Value;

fn stats(addr: SocketAddr) -> Value {
    serde_json::from_str(&load_tests::raw_get(addr, "/admin/stats").text()).expect("JSON")
}

/// The first document id of each `_bulk` the stand-in received, in order.
fn bulk_starts(stub: &Stub) -> Vec<u64> {
    stub.seen()
        .iter()
        .filter(|seen| seen.method == "POST" && seen.target == "/_bulk")
        .filter_map(|seen| {
            let body = String::from_utf8_lossy(&seen.body).into_owned();
            let action: Value = serde_json::from_str(body.lines().next()?).ok()?;
            action["index"]["_id"].as_str()?.parse().ok()
        })
        .collect()
}

/// README, *What to try*: the crawler indexes 10 documents a `_bulk` and starts over after
/// the corpus's last document; `crawler.index_errors` counts the units that failed.
#[test]
fn the_crawler_counts_its_failures_and_starts_over_after_the_last_document() {
    let stub = Stub::start(Reply::json(500, r#"{"error":"down","status":500}"#));
    let dir = std::env::temp_dir().join(format!("load-demo-crawler-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("crawler.properties");
    std::fs::write(
        &path,
        format!(
            "search_engine.http.url={}\nweb.load.control=80\nadaptive.load.control=0\n",
            stub.url()
        ),
    )
    .expect("config");
    let options = Options {
        config: ConfigFrom::File(path),
        listen: "127.0.0.1:0".parse().expect("addr"),
        demo: DemoOptions {
            corpus: 25,
            search: SearchMode::Cluster,
            crawler: true,
            ..DemoOptions::default()
        },
        ..Options::default()
    };
    let server = start(&options).expect("server");
    let addr = server.addr();
    // The cluster down: the index cannot be prepared, each unit fails and is counted.
    assert!(
        wait_until(Duration::from_secs(10), || {
            stats(addr)["crawler"]["index_errors"]
                .as_u64()
                .is_some_and(|n| n >= 1)
        }),
        "{}",
        stats(addr)
    );
    assert!(bulk_starts(&stub).is_empty(), "nothing indexed while down");
    // The cluster answers (the index exists, each `_bulk` indexes its 10 documents).
    stub.set(Reply::json(
        200,
        r#"{"took":1,"errors":false,"items":[{},{},{},{},{},{},{},{},{},{}]}"#,
    ));
    assert!(
        wait_until(Duration::from_secs(10), || bulk_starts(&stub).len() >= 5),
        "{:?}",
        bulk_starts(&stub)
    );
    // 25 documents, 10 a batch: 0-9, 10-19, then 20-24 and 0-4, then from 5 on.
    assert_eq!(bulk_starts(&stub)[..5], [0, 10, 20, 5, 15]);
    let third = stub
        .seen()
        .into_iter()
        .filter(|seen| seen.method == "POST" && seen.target == "/_bulk")
        .nth(2)
        .expect("a third batch");
    let ids: Vec<String> = String::from_utf8_lossy(&third.body)
        .lines()
        .step_by(2)
        .filter_map(|line| {
            let action: Value = serde_json::from_str(line).ok()?;
            Some(action["index"]["_id"].as_str()?.to_owned())
        })
        .collect();
    assert_eq!(ids, ["20", "21", "22", "23", "24", "0", "1", "2", "3", "4"]);
    // The stub has seen the fifth batch; the crawler counts it once its answer is read.
    assert!(
        wait_until(Duration::from_secs(10), || {
            stats(addr)["crawler"]["indexed"].as_u64() >= Some(50)
        }),
        "{}",
        stats(addr)
    );
    server.stop().expect("clean stop");
}
