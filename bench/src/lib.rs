//! What the benchmarks share: the request paths, a naive port of Fess's filter to compare
//! against, and generated node-stats bodies.
#![forbid(unsafe_code)]

pub mod closed_loop;
pub mod local_loop;
pub mod stats_trace;

use std::sync::atomic::{AtomicU32, Ordering};

/// The paths of the `check` bench: (name, target, cluster CPU that makes the case).
pub const PATHS: [(&str, &str); 6] = [
    ("admitted_web", "/search?q=rust"),
    ("rejected_api", "/api/v1/documents?q=x"),
    ("excluded_static", "/css/style.css"),
    ("excluded_admin", "/admin/dashboard/"),
    ("long_256", LONG_PATH),
    ("obfuscated", "/admin/../api/v1/./x;jsessionid=1"),
];

/// A 256-byte web path.
pub const LONG_PATH: &str = "/search/aaaaaaa/bbbbbbb/ccccccc/ddddddd/eeeeeee/fffffff/ggggggg/hhhhhhh/iiiiiii/jjjjjjj/kkkkkkk/lllllll/mmmmmmm/nnnnnnn/ooooooo/ppppppp/qqqqqqq/rrrrrrr/sssssss/ttttttt/uuuuuuu/vvvvvvv/wwwwwww/xxxxxxx/yyyyyyy/zzzzzzz/aaaaaaa/bbbbbbb/ccccccc/ddddddd/eeeeeeex";

/// The web and API thresholds of the benches (the shipped example configuration).
pub const WEB_THRESHOLD: i32 = 80;
/// See [`WEB_THRESHOLD`].
pub const API_THRESHOLD: i32 = 90;

/// Fess's filter as a user would port it by hand: `starts_with` for the excluded prefixes,
/// `ends_with` over the static extensions, `starts_with("/api/")`, then the compare. It is
/// the baseline of the `check` bench (and it is fooled by `/search;.css`, which `check` is
/// not).
#[must_use]
pub fn naive_check(path: &str, cpu: &AtomicU32) -> bool {
    const EXTENSIONS: [&str; 11] = [
        ".css", ".js", ".png", ".jpg", ".gif", ".ico", ".svg", ".woff", ".woff2", ".ttf", ".eot",
    ];
    if path.starts_with("/admin") || path.starts_with("/error") || path.starts_with("/login") {
        return true;
    }
    if EXTENSIONS.iter().any(|ext| path.ends_with(ext)) {
        return true;
    }
    let threshold = if path.starts_with("/api/") {
        API_THRESHOLD
    } else {
        WEB_THRESHOLD
    };
    if threshold >= 100 {
        return true;
    }
    (cpu.load(Ordering::Relaxed) as i32) < threshold
}

/// A `filter_path` body with `nodes` nodes (what the monitor asks for).
#[must_use]
pub fn filtered_body(nodes: usize) -> String {
    let entries: Vec<String> = (0..nodes)
        .map(|i| {
            format!(
                "\"node-{i:016x}\":{{\"os\":{{\"cpu\":{{\"percent\":{}}}}},\
                 \"thread_pool\":{{\"search\":{{\"threads\":13,\"queue\":{},\"active\":{}}}}}}}",
                (i * 37) % 101,
                (i * 7) % 5,
                (i * 11) % 14
            )
        })
        .collect();
    format!(
        "{{\"_nodes\":{{\"total\":{nodes},\"successful\":{nodes},\"failed\":0}},\"nodes\":{{{}}}}}",
        entries.join(",")
    )
}

/// A full (unfiltered) body with `nodes` copies of `template`'s first node, from a fixture
/// such as `os-2x-3nodes.json`.
///
/// # Panics
///
/// When `template` is not a node-stats body with at least one node.
#[must_use]
pub fn full_body(template: &str, nodes: usize) -> String {
    let doc: serde_json::Value = serde_json::from_str(template).expect("template JSON");
    let first = doc["nodes"]
        .as_object()
        .and_then(|n| n.values().next())
        .expect("a node")
        .clone();
    let mut map = serde_json::Map::new();
    for i in 0..nodes {
        let mut node = first.clone();
        node["os"]["cpu"]["percent"] = serde_json::json!((i * 37) % 101);
        map.insert(format!("node-{i:016x}"), node);
    }
    let mut doc = doc;
    doc["nodes"] = serde_json::Value::Object(map);
    doc["_nodes"] = serde_json::json!({"total": nodes, "successful": nodes, "failed": 0});
    serde_json::to_string_pretty(&doc).expect("serialise")
}

/// What a reader of `serde_json::Value` writes to get the same answer as the core parser.
#[must_use]
pub fn serde_json_max(body: &[u8]) -> Option<i64> {
    let doc: serde_json::Value = serde_json::from_slice(body).ok()?;
    let mut max = 0;
    let mut busiest_pool = 0;
    for node in doc.get("nodes")?.as_object()?.values() {
        if let Some(percent) = node["os"]["cpu"]["percent"].as_i64() {
            max = max.max(percent);
        }
        // The same work as the core's parser: the most loaded search pool too.
        let pool = &node["thread_pool"]["search"];
        if let (Some(threads), Some(active), Some(queue)) = (
            pool["threads"].as_u64(),
            pool["active"].as_u64(),
            pool["queue"].as_u64(),
        ) {
            busiest_pool = busiest_pool.max((active + queue) * 1000 / threads.max(1));
        }
    }
    std::hint::black_box(busiest_pool);
    Some(max)
}

/// Starts `search-server` (`binary`) on an ephemeral loopback port with `--config config`
/// and `args`, logging warnings to this process's stderr, and reads its address from the
/// first line it prints.
///
/// # Errors
///
/// The binary cannot start, or its first line is not `listening on http://ADDR`.
pub fn spawn_search_server(
    binary: &str,
    config: &std::path::Path,
    args: &[&str],
) -> Result<(std::process::Child, std::net::SocketAddr), String> {
    use std::process::{Command, Stdio};
    let child = Command::new(binary)
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .arg("--config")
        .arg(config)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start {binary}: {e}"))?;
    listening_on(child)
}

/// The address a server just started as `child` (its stdout piped) announces on its first
/// line, `listening on http://ADDR` (anything after the address is ignored); `child` is
/// killed and waited for when the line says otherwise.
///
/// # Errors
///
/// The first line cannot be read or names no address.
pub fn listening_on(
    mut child: std::process::Child,
) -> Result<(std::process::Child, std::net::SocketAddr), String> {
    use std::io::BufRead;
    let mut line = String::new();
    let read = child
        .stdout
        .take()
        .ok_or_else(|| "no stdout".to_owned())
        .and_then(|out| {
            std::io::BufReader::new(out)
                .read_line(&mut line)
                .map_err(|e| e.to_string())
        });
    let addr = read.and_then(|_| {
        line.trim()
            .strip_prefix("listening on http://")
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|a| a.parse().ok())
            .ok_or_else(|| format!("unexpected first line: {line:?}"))
    });
    match addr {
        Ok(addr) => Ok((child, addr)),
        Err(error) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(error)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_long_path_is_256_bytes() {
        assert_eq!(LONG_PATH.len(), 256);
    }

    #[test]
    fn generated_bodies_agree_with_both_parsers() {
        for nodes in [1, 3, 100] {
            let body = filtered_body(nodes);
            let core = load_core::node_stats::parse_node_stats(body.as_bytes()).expect("core");
            assert_eq!(
                Some(i64::from(core.max_cpu.get())),
                serde_json_max(body.as_bytes())
            );
            assert_eq!(core.nodes as usize, nodes);
        }
    }

    #[test]
    fn the_naive_port_is_fooled_where_check_is_not() {
        let cpu = AtomicU32::new(95);
        assert!(
            naive_check("/search;.css", &cpu),
            "naive: excluded as static"
        );
        let control = load_core::LoadControl::new(WEB_THRESHOLD, API_THRESHOLD);
        control.update(
            load_core::Instant::ZERO,
            load_core::Outcome::Sample(load_core::CpuPercent::new(95)),
        );
        assert!(!control.check("/search;.css").is_allowed());
    }
}
