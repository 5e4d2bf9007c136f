//! Every OpenSearch fixture through the core parser, with its expected answer.

use load_core::node_stats::{NodeStats, ParseError, parse_node_stats};
use load_core::{CpuPercent, CpuSample};
use load_tests::{fixture, fixture_names};

/// What a fixture's parse says, field by field (`NodeStats` may grow, so it is read, not
/// built): the busiest CPU, the nodes that answered, measured and refused, `_nodes.total`
/// and `_nodes.failed`, and whether a search pool was read.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    max_cpu: CpuPercent,
    nodes: u32,
    measured: u32,
    refused: u32,
    total: Option<u32>,
    failed: Option<u32>,
    pool: bool,
}

impl Seen {
    fn of(stats: &NodeStats) -> Seen {
        Seen {
            max_cpu: stats.max_cpu,
            nodes: stats.nodes,
            measured: stats.measured,
            refused: stats.refused,
            total: stats.total,
            failed: stats.failed,
            pool: stats.search_pool.is_some(),
        }
    }
}

fn stats(max: u8, nodes: u32, measured: u32, total: Option<u32>, failed: Option<u32>) -> Seen {
    Seen {
        max_cpu: CpuPercent::new(max).expect("percent"),
        nodes,
        measured,
        refused: 0,
        total,
        failed,
        pool: false,
    }
}

/// What the parser answers for a fixture, by name; `None` for a name nobody expected.
type Expected = Result<Seen, fn(&ParseError) -> bool>;

fn expected(name: &str) -> Option<Expected> {
    // The real captures of every version: `os-VERSION-real-KIND`.
    if let Some((_, kind)) = name
        .strip_prefix("os-")
        .and_then(|rest| rest.split_once("-real-"))
    {
        return match kind {
            // Checked against their cluster in `real_captures_read_as_their_cluster`.
            "filtered" | "filtered-later" | "full" => None,
            // JSON error bodies are refused as error responses ...
            "403" | "404" | "400-unrecognized-metric" => {
                Some(Err(|e| *e == ParseError::ErrorResponse))
            }
            // ... and the security plugin's plain-text ones as not JSON.
            "401" | "401-wrong-password" => Some(Err(|e| matches!(e, ParseError::Json(_)))),
            _ => panic!("capture {name} has no expected answer: add one"),
        };
    }
    Some(match name {
        "os-2x-3nodes" => Ok(stats(87, 3, 3, Some(3), Some(0))),
        "os-edge-cases" => Ok(stats(25, 3, 2, Some(3), Some(0))),
        "os-partial-failure" => Ok(stats(87, 2, 2, Some(3), Some(1))),
        "os-all-failed" => Ok(stats(0, 0, 0, Some(1), Some(1))),
        "os-filter-path" => Ok(stats(87, 3, 3, None, None)),
        "os-filter-path-partial-failure" => Ok(stats(87, 2, 2, Some(3), Some(1))),
        "os-filter-path-empty" => Ok(stats(0, 0, 0, None, None)),
        "es-8x-401" => Err(|e| *e == ParseError::ErrorResponse),
        "os-503" => Err(|e| matches!(e, ParseError::Json(_))),
        other => panic!("fixture {other} has no expected answer: add one"),
    })
}

#[test]
fn every_fixture_has_its_expected_answer() {
    let names = fixture_names();
    assert!(names.len() >= 23, "fixtures found: {names:?}");
    for name in names {
        let Some(expected) = expected(&name) else {
            continue;
        };
        let fixture = fixture(&name);
        let parsed = parse_node_stats(&fixture.body);
        match (expected, parsed) {
            (Ok(want), Ok(got)) => {
                assert_eq!(fixture.status, 200, "{name}");
                assert_eq!(Seen::of(&got), want, "{name}");
            }
            (Err(check), Err(got)) => {
                assert!(fixture.status >= 400, "{name}");
                assert!(check(&got), "{name}: {got:?}");
            }
            (want, got) => panic!(
                "{name}: expected {:?}, got {got:?}",
                want.map_err(|_| "an error")
            ),
        }
    }
}

/// The repository holds real answers of both OpenSearch lines the project runs on: 2.x
/// (Fess 14) and 3.x (Fess 15), each with every kind `cluster.sh capture` takes.
#[test]
fn both_opensearch_lines_are_captured() {
    let versions = load_tests::captured_versions();
    for line in ["2.", "3."] {
        assert!(
            versions.iter().any(|v| v.starts_with(line)),
            "no capture of OpenSearch {line}x in {versions:?}"
        );
    }
    for version in &versions {
        for kind in [
            "filtered",
            "full",
            "400-unrecognized-metric",
            "401",
            "401-wrong-password",
            "403",
            "404",
        ] {
            let name = format!("os-{version}-real-{kind}");
            assert!(fixture_names().contains(&name), "{name} is missing");
        }
    }
}

/// A node that cannot measure its CPU reports `-1` (OpenSearch 3.2 to 3.6 do on cgroup-v2
/// containers): in a real answer of each version, each node in turn reporting `-1` is
/// skipped, and the busiest of the others decides.
#[test]
fn a_node_reporting_minus_one_among_valid_ones_is_skipped() {
    for (name, body) in load_tests::captured_fixtures() {
        let text = String::from_utf8(body).expect("UTF-8");
        let marker = "\"percent\":";
        let spots: Vec<usize> = text
            .match_indices(marker)
            .map(|(i, _)| i + marker.len())
            .collect();
        assert!(spots.len() >= 3, "{name}: {} percents", spots.len());
        let value_at = |at: usize| -> (usize, u8) {
            let digits = text[at..].chars().take_while(char::is_ascii_digit).count();
            (digits, text[at..at + digits].parse().expect("a percent"))
        };
        for (skipped, &at) in spots.iter().enumerate() {
            let (digits, _) = value_at(at);
            let edited = format!("{}-1{}", &text[..at], &text[at + digits..]);
            let stats =
                parse_node_stats(edited.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}"));
            let busiest_other = spots
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != skipped)
                .map(|(_, &other)| value_at(other).1)
                .max()
                .expect("other nodes");
            assert_eq!(stats.nodes, spots.len() as u32, "{name}");
            assert_eq!(
                stats.measured,
                spots.len() as u32 - 1,
                "{name}: node {skipped}"
            );
            assert_eq!(stats.max_cpu.get(), busiest_other, "{name}: node {skipped}");
        }
    }
}

#[test]
fn partial_failure_is_a_success_that_records_the_failed_node() {
    let parsed = parse_node_stats(&fixture("os-filter-path-partial-failure").body).expect("parses");
    let sample = CpuSample::cluster(&parsed);
    assert_eq!(sample.cpu, CpuPercent::new(87));
    assert_eq!((sample.nodes, sample.failed), (2, 1));
}

/// Responses of a real cluster: every node measured, the header complete, and the filtered
/// and the full response of one version agree on everything but the CPU (two moments).
#[test]
fn real_captures_read_as_their_cluster() {
    let captures = load_tests::captured_fixtures();
    for (name, body) in &captures {
        let stats = parse_node_stats(body).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(stats.total, Some(stats.nodes), "{name}");
        assert_eq!(stats.failed, Some(0), "{name}");
        assert_eq!(stats.measured, stats.nodes, "{name}");
        assert!(stats.nodes >= 3, "{name}: {stats:?}");
        if let Some(version) = name.strip_suffix("-real-filtered") {
            let full = captures
                .iter()
                .find(|(other, _)| *other == format!("{version}-real-full"))
                .unwrap_or_else(|| panic!("{name} has no full capture beside it"));
            let full = parse_node_stats(&full.1).expect("full capture");
            assert_eq!(
                (full.nodes, full.measured, full.total),
                (stats.nodes, stats.measured, stats.total)
            );
            // The filtered body is under a third of the OS stats alone.
            assert!(
                body.len() * 3
                    < captures
                        .iter()
                        .find(|(n, _)| *n == format!("{version}-real-full"))
                        .map_or(0, |c| c.1.len())
            );
        }
    }
}

/// The README's key tables say what `load_core::config::keys::TABLE` says: every key is listed once,
/// with its default as the table shows it, and every environment variable with its key.
#[test]
fn readme_key_tables_follow_the_key_table() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    for key in &load_core::config::keys::TABLE {
        let rows: Vec<&str> = readme
            .lines()
            .filter(|line| line.starts_with(&format!("| `{}` |", key.name())))
            .collect();
        assert_eq!(
            rows.len(),
            1,
            "{}: one row expected, found {rows:?}",
            key.name()
        );
        let default = key.default_value().to_string();
        let shown = if default.is_empty() {
            "none".to_owned()
        } else {
            format!("`{default}`")
        };
        assert!(
            rows[0].starts_with(&format!("| `{}` | {shown} |", key.name())),
            "{}: default {shown} expected in {}",
            key.name(),
            rows[0]
        );
        if let Some(variable) = key.variable() {
            assert!(
                readme.contains(&format!("| `{variable}` | `{}` |", key.name())),
                "{variable} is not in the variables table"
            );
        }
    }
}

/// Two real polls of one cluster, searches between them: tracked, the second reads every
/// node's counters against the first's, and the busiest node is the one with the most
/// tasks run and waiting per core on average, computed here from the two bodies.
#[test]
fn real_pool_counters_give_the_means_between_two_polls() {
    use load_core::node_stats::{Limits, PoolTracker, parse_node_stats_tracked};
    let names = fixture_names();
    let mut checked = 0;
    for name in &names {
        let Some(version) = name.strip_suffix("-real-filtered-later") else {
            continue;
        };
        let (first, later) = (
            fixture(&format!("{version}-real-filtered")).body,
            fixture(name).body,
        );
        let tracker: PoolTracker = PoolTracker::new();
        let before = parse_node_stats_tracked(&first, Limits::DEFAULT, &tracker).expect("first");
        assert_eq!(
            before.search_pool.and_then(|p| p.mean_active_milli),
            None,
            "{name}"
        );
        let after = parse_node_stats_tracked(&later, Limits::DEFAULT, &tracker).expect("later");
        let pool = after.search_pool.expect("the pool");
        // The same from the bodies, by hand.
        let json = |body: &[u8]| serde_json::from_slice::<serde_json::Value>(body).expect("json");
        let (a, b) = (json(&first), json(&later));
        let mut best = 0u64;
        for (id, node) in b["nodes"].as_object().expect("nodes") {
            let old = &a["nodes"][id];
            let n = |v: &serde_json::Value, path: &[&str]| {
                path.iter()
                    .fold(v, |v, k| &v[*k])
                    .as_u64()
                    .expect("a counter")
            };
            let ms = n(node, &["timestamp"]) - n(old, &["timestamp"]);
            let run = |v| {
                n(v, &["indices", "search", "query_time_in_millis"])
                    + n(v, &["indices", "search", "fetch_time_in_millis"])
            };
            let wait = |v| n(v, &["thread_pool", "search", "total_wait_time_in_nanos"]);
            let active = (run(node) - run(old)) * 1000 / ms;
            let queue = (wait(node) - wait(old)) / 1000 / ms;
            let threads = n(node, &["thread_pool", "search", "threads"]);
            let cores = (2 * (threads.max(1) - 1)).div_ceil(3).max(1);
            best = best.max((active + queue) / cores);
        }
        assert!(best > 0, "{name}: searches ran between the two captures");
        let load = u64::from(pool.load_per_core_milli().expect("means"));
        assert!(
            load.abs_diff(best) <= 1,
            "{name}: {load} against {best} by hand"
        );
        checked += 1;
    }
    assert!(checked >= 1, "no pair of captures");
}
