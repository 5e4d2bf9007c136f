//! Laws of the core, checked over generated inputs.

use load_core::node_stats::parse_node_stats;
use load_core::{
    Class, CpuPercent, Decision, LoadControl,
    failures::{FailureCounter, FailureLevel},
    path::classify,
};
use proptest::prelude::*;

/// Paths whose classification is plain (no obfuscation), one of each kind. (`/api` alone is
/// left out: it is ambiguous here, stricter than Fess, see `tests/classes.rs`.)
const PATHS: &[&str] = &[
    "/",
    "/search?q=rust",
    "/api/",
    "/api/v1/documents?q=x",
    "/admin/",
    "/login",
    "/error/busy",
    "/css/style.css",
    "/adminfoo",
    "/api/v1/app.js",
];

fn control(web: i32, api: i32, cpu: u8) -> LoadControl {
    let control = LoadControl::new(web, api);
    control.update(
        load_core::Instant::ZERO,
        load_core::Outcome::Sample(CpuPercent::new(cpu)),
    );
    control
}

/// Fess's filter, written the way its Java reads, for paths without obfuscation.
fn fess(path: &str, web: i32, api: i32, cpu: u8) -> Decision {
    let path = path.split('?').next().unwrap_or_default();
    let under = |p: &str| path == p || path.starts_with(&format!("{p}/"));
    let excluded = under("/admin")
        || under("/error")
        || under("/login")
        || load_core::path::STATIC_EXTENSIONS
            .iter()
            .any(|ext| path.ends_with(ext));
    if excluded {
        return Decision::Allow;
    }
    let (class, threshold) = if path.starts_with("/api/") {
        (Class::Api, api)
    } else {
        (Class::Web, web)
    };
    if threshold >= 100 || i32::from(cpu) < threshold {
        Decision::Allow
    } else {
        Decision::Reject(class)
    }
}

proptest! {
    #[test]
    fn decisions_equal_the_fess_rule(
        web in -10i32..=110, api in -10i32..=110, cpu in 0u8..=100, path in prop::sample::select(PATHS),
    ) {
        prop_assert_eq!(control(web, api, cpu).check(path), fess(path, web, api, cpu));
    }

    #[test]
    fn raising_the_cpu_never_turns_a_reject_into_an_allow(
        web in -10i32..=110, api in -10i32..=110, a in 0u8..=100, b in 0u8..=100,
        path in prop::sample::select(PATHS),
    ) {
        let (low, high) = (a.min(b), a.max(b));
        if !control(web, api, low).check(path).is_allowed() {
            prop_assert!(!control(web, api, high).check(path).is_allowed());
        }
    }

    #[test]
    fn raising_a_threshold_never_turns_an_allow_into_a_reject(
        a in -10i32..=110, b in -10i32..=110, other in -10i32..=110, cpu in 0u8..=100,
        path in prop::sample::select(PATHS),
    ) {
        let (low, high) = (a.min(b), a.max(b));
        for (l, h) in [((low, other), (high, other)), ((other, low), (other, high))] {
            if control(l.0, l.1, cpu).check(path).is_allowed() {
                prop_assert!(control(h.0, h.1, cpu).check(path).is_allowed());
            }
        }
    }

    #[test]
    fn failure_levels_follow_the_rule_for_any_sequence(outcomes in prop::collection::vec(any::<bool>(), 0..64)) {
        let counter = FailureCounter::new();
        let mut streak = 0u32;
        for success in outcomes {
            if success {
                prop_assert_eq!(counter.count_success(), streak);
                streak = 0;
            } else {
                streak += 1;
                let want = if streak <= 3 { FailureLevel::Warn } else { FailureLevel::Debug };
                prop_assert_eq!(counter.count_failure(), want);
            }
            prop_assert_eq!(counter.consecutive(), streak);
        }
    }
}

// ---- classification under obfuscation ------------------------------------------------

/// A canonical path: segments of plain characters, maybe a trailing slash.
fn canonical() -> impl Strategy<Value = (Vec<String>, bool)> {
    let first = prop::sample::select(vec![
        "admin", "error", "login", "api", "search", "css", "adminx", "apis",
    ]);
    let word = "[a-z0-9_~-]{1,6}(\\.(css|js|png|woff2|html|txt))?";
    (first, prop::collection::vec(word, 0..4), any::<bool>()).prop_map(|(first, rest, trailing)| {
        let mut segments = vec![first.to_owned()];
        segments.extend(rest);
        (segments, trailing)
    })
}

fn render(segments: &[String], trailing: bool) -> String {
    let mut path = String::new();
    for segment in segments {
        path.push('/');
        path.push_str(segment);
    }
    if trailing || path.is_empty() {
        path.push('/');
    }
    path
}

/// Obfuscations that a router undoes (or reads in its own way).
#[derive(Clone, Debug)]
enum Trick {
    Dot,
    DotDot(String),
    DoubleSlash,
    Params(String),
    Encode(u64),
}

fn trick() -> impl Strategy<Value = Trick> {
    prop_oneof![
        Just(Trick::Dot),
        "[a-z]{1,4}".prop_map(Trick::DotDot),
        Just(Trick::DoubleSlash),
        "[a-z0-9=.]{0,8}".prop_map(Trick::Params),
        any::<u64>().prop_map(Trick::Encode),
    ]
}

fn encode(segment: &str, mask: u64) -> String {
    segment
        .bytes()
        .enumerate()
        .map(|(i, b)| match (mask >> (i % 64)) & 3 {
            1 => format!("%{b:02X}"),
            2 => format!("%{b:02x}"),
            _ => char::from(b).to_string(),
        })
        .collect()
}

fn obfuscate(segments: &[String], trailing: bool, tricks: &[Option<Trick>], query: &str) -> String {
    let mut path = String::new();
    for (segment, trick) in segments.iter().zip(tricks.iter().cycle()) {
        match trick {
            Some(Trick::Dot) => path.push_str("/."),
            Some(Trick::DotDot(dummy)) => {
                path.push('/');
                path.push_str(dummy);
                path.push_str("/..");
            }
            Some(Trick::DoubleSlash) => path.push('/'),
            _ => {}
        }
        path.push('/');
        match trick {
            Some(Trick::Encode(mask)) => path.push_str(&encode(segment, *mask)),
            Some(Trick::Params(params)) => {
                path.push_str(segment);
                path.push(';');
                path.push_str(params);
            }
            _ => path.push_str(segment),
        }
    }
    if trailing {
        path.push('/');
    }
    path.push_str(query);
    path
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// An obfuscated spelling keeps its class or becomes ambiguous (both thresholds): it
    /// never leaves a controlled class for the other one or for an exclusion.
    #[test]
    fn obfuscation_never_loosens_control(
        (segments, trailing) in canonical(),
        tricks in prop::collection::vec(prop::option::of(trick()), 1..6),
        query in prop::sample::select(vec!["", "?q=x.css", "?next=/admin/", "#frag.js", "?a=/../api/x;.png"]),
    ) {
        let plain = classify(&render(&segments, trailing));
        let tricky_target = obfuscate(&segments, trailing, &tricks, query);
        let tricky = classify(&tricky_target);
        let dots = tricks.iter().cycle().take(segments.len()).flatten().any(|t| matches!(t, Trick::Dot | Trick::DotDot(_) | Trick::DoubleSlash));
        if dots {
            prop_assert_eq!(tricky, Class::Ambiguous, "{}", tricky_target);
        }
        match plain {
            Class::Excluded => {}
            class => prop_assert!(tricky == class || tricky == Class::Ambiguous, "{} is {:?}, the plain path {:?}", tricky_target, tricky, class),
        }
    }

    #[test]
    fn ambiguous_separators_never_buy_an_exclusion(
        (segments, trailing) in canonical(),
        at in any::<prop::sample::Index>(),
        separator in prop::sample::select(vec!["%2f", "%2F", "%5c", "\\", "%252e%252e/", "%zz", "%"]),
        suffix in prop::sample::select(vec!["", ".css", "/x.js", "/../admin/", ";.png"]),
    ) {
        let plain = render(&segments, trailing);
        let mut tricky = plain.clone();
        let cut = at.index(tricky.len() + 1);
        tricky.insert_str(cut, separator);
        tricky.push_str(suffix);
        // A lone `%` may happen to form a valid escape with what follows (`%ad`): then the
        // target is not ambiguous, and only the malformed case is checked.
        let malformed = separator != "%"
            || !tricky.as_bytes()[cut + 1..].get(..2).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit));
        if malformed {
            prop_assert_ne!(classify(&tricky), Class::Excluded, "{}", tricky);
        }
    }

    #[test]
    fn classify_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = load_core::path::PathRules::FESS.classify(&bytes);
    }
}

// ---- the parser ---------------------------------------------------------------------------

/// A node as a generator sees it: percent (or none), whether `os` / `cpu` exist.
#[derive(Clone, Debug)]
struct GenNode {
    percent: i64,
    has_os: bool,
    has_cpu: bool,
    noise: u8,
}

fn gen_node() -> impl Strategy<Value = GenNode> {
    (
        -1i64..=100,
        prop::bool::weighted(0.9),
        prop::bool::weighted(0.9),
        any::<u8>(),
    )
        .prop_map(|(percent, has_os, has_cpu, noise)| GenNode {
            percent,
            has_os,
            has_cpu,
            noise,
        })
}

fn body(nodes: &[GenNode], failed: Option<u32>) -> String {
    let mut map = serde_json::Map::new();
    for (i, node) in nodes.iter().enumerate() {
        let mut cpu = serde_json::json!({ "percent": node.percent });
        if node.noise.is_multiple_of(2) {
            cpu["load_average"] = serde_json::json!({ "1m": 0.5, "5m": [1, {"x": "]}"}] });
        }
        let mut os = serde_json::json!({ "timestamp": 1_664_484_195_263_u64, "mem": { "free_percent": node.noise } });
        if node.has_cpu {
            os["cpu"] = cpu;
        }
        let mut value = serde_json::json!({ "name": format!("node-\"{i}\\"), "roles": ["data"] });
        if node.has_os {
            value["os"] = os;
        }
        map.insert(format!("id{i}-{}", node.noise), value);
    }
    let mut doc = serde_json::json!({ "cluster_name": "c", "nodes": map });
    if let Some(failed) = failed {
        doc["_nodes"] = serde_json::json!({ "total": nodes.len() as u32 + failed, "successful": nodes.len(), "failed": failed });
    }
    if nodes.len().is_multiple_of(2) {
        serde_json::to_string_pretty(&doc).expect("json")
    } else {
        doc.to_string()
    }
}

proptest! {
    #[test]
    fn parser_agrees_with_a_reference(nodes in prop::collection::vec(gen_node(), 0..40), failed in prop::option::of(0u32..5)) {
        let text = body(&nodes, failed);
        let stats = parse_node_stats(text.as_bytes()).map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
        let measured: Vec<i64> = nodes.iter().filter(|n| n.has_os && n.has_cpu && n.percent >= 0).map(|n| n.percent).collect();
        prop_assert_eq!(i64::from(stats.max_cpu.get()), measured.iter().copied().max().unwrap_or(0));
        prop_assert_eq!(stats.measured as usize, measured.len());
        prop_assert_eq!(stats.nodes as usize, nodes.len());
        prop_assert_eq!(stats.failed, failed);
    }

    #[test]
    fn parser_never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = parse_node_stats(&bytes);
    }

    #[test]
    fn parser_never_panics_on_damaged_bodies(
        nodes in prop::collection::vec(gen_node(), 1..8),
        cut in any::<prop::sample::Index>(),
        flip in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let mut text = body(&nodes, Some(0)).into_bytes();
        let at = flip.index(text.len());
        text[at] = byte;
        text.truncate(cut.index(text.len() + 1));
        let _ = parse_node_stats(&text);
    }
}
