//! The node-stats parser and the error-body summary on arbitrary bytes, against serde_json.
//!
//! The input is one body, or two (the poll's pair) split at the first `0xFF` byte, which no
//! JSON text holds. Each is read as a poll reads it (`parse_node_stats_tracked`, one tracker
//! for both) and checked:
//!
//! - never a panic or a stack overflow, never a success on a body serde_json refuses as
//!   syntax, and a maximum CPU at least serde_json's whenever both read the body;
//! - against a reading of serde_json's document, entry by entry and duplicates included
//!   (`model`): the body fails exactly when the reading finds something that is not node
//!   stats; a pool value of the wrong kind drops every pool but never the poll; and
//!   otherwise the busiest node's pool (threads, active, queue, and the means since the
//!   previous body, worked out here from the counters) is exactly the one the reading
//!   picks, whenever the nodes' ids are known (no escapes) and fit the tracker.
#![no_main]

use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use load_core::node_stats::{
    Limits, ParseError, PoolTracker, SearchPool, error_summary, parse_node_stats,
    parse_node_stats_tracked,
};

#[path = "../src/model.rs"]
mod model;

use model::{Doc, Reading, read};

fuzz_target!(|input: &[u8]| {
    let (first, second) = match input.iter().position(|&b| b == 0xFF) {
        Some(at) => (&input[..at], Some(&input[at + 1..])),
        None => (input, None),
    };
    let tracker: PoolTracker = PoolTracker::new();
    // Each node's counters as last observed, as the tracker should keep them.
    let mut kept: HashMap<String, [u64; 3]> = HashMap::new();
    let mut known = true;
    for body in std::iter::once(first).chain(second) {
        untracked(body);
        let parsed = parse_node_stats_tracked(body, Limits::DEFAULT, &tracker);
        if let Err(ParseError::TooDeep { .. } | ParseError::TooLarge { .. }) = parsed {
            // Refused before any node is read (serde_json reads up to 128 levels).
            continue;
        }
        let Ok(doc) = serde_json::from_slice::<Doc>(body) else {
            // Syntax (checked by `untracked`) or serde_json's own limits: nothing to compare,
            // and the tracker may have observed nodes this model cannot follow.
            known = false;
            continue;
        };
        let reading = read(&doc, &mut kept);
        known &= reading.ids_known && kept.len() <= 64;
        match (&parsed, &reading) {
            (Err(e), Reading { fatal: false, .. }) => {
                panic!("refused a body serde_json reads as node stats: {e} ({reading:?})")
            }
            (Ok(stats), Reading { fatal: true, .. }) => {
                panic!("accepted a body that is not node stats: {stats:?} ({reading:?})")
            }
            (Ok(stats), _) if reading.pool_error => {
                assert_eq!(stats.search_pool, None, "a pool from a body with an odd pool value");
            }
            (Ok(stats), _) if known => {
                assert_eq!(stats.search_pool, reading.busiest, "the busiest node's pool");
            }
            (Ok(stats), _) => {
                // Ids the model cannot follow: the pool is at least one node's as read.
                if let Some(pool) = stats.search_pool {
                    let counts = (pool.threads, pool.active, pool.queue);
                    assert!(
                        reading.pools.iter().any(|p| (p.threads, p.active, p.queue) == counts),
                        "a pool no node reported: {pool:?} ({reading:?})"
                    );
                }
            }
            (Err(_), _) => {}
        }
        if let Ok(stats) = &parsed {
            if let Some(pool) = stats.search_pool {
                check_means(&pool);
            }
        }
    }
});

/// A pool's means are both there or both absent.
fn check_means(pool: &SearchPool) {
    assert_eq!(
        pool.mean_active_milli.is_some(),
        pool.mean_queue_milli.is_some(),
        "one mean without the other: {pool:?}"
    );
}

/// The checks of one body on its own: grammar against serde_json's, the error summary, and
/// a maximum CPU at least serde_json's.
fn untracked(body: &[u8]) {
    let parsed = parse_node_stats(body);
    let summary = error_summary(body);
    let reference = serde_json::from_slice::<serde_json::Value>(body);
    match &reference {
        // Stricter than JSON's grammar in serde_json only: surrogates in `\u` escapes that
        // do not pair up, and numbers beyond f64's range.
        Err(e) if has_surrogate_escape(body) || e.to_string().contains("out of range") => {}
        Err(_) => {
            // serde_json refuses it (not JSON, or nested deeper than its 128 levels).
            assert!(parsed.is_err(), "accepted what serde_json refuses: {parsed:?}");
            assert!(summary.is_none(), "summarised what serde_json refuses");
        }
        Ok(value) => {
            if let Err(ParseError::Json(e)) = &parsed {
                assert!(e.offset().is_none(), "a syntax error in valid JSON: {e}");
            }
            if let Ok(stats) = &parsed {
                let max = value["nodes"]
                    .as_object()
                    .into_iter()
                    .flatten()
                    .filter_map(|(_, node)| node["os"]["cpu"]["percent"].as_f64())
                    // Valid readings only: whole percents in 0..=100 (others are refused nodes).
                    .filter(|&p| (0.0..=100.0).contains(&p) && p.fract() == 0.0)
                    .fold(0.0f64, f64::max);
                assert!(f64::from(stats.max_cpu.get()) >= max, "max cpu {stats:?} < {max}");
            }
        }
    }
}

/// Whether the body has a `\uD800`-`\uDFFF` escape (serde_json refuses unpaired ones; JSON's
/// grammar, and the parser, accept them).
fn has_surrogate_escape(body: &[u8]) -> bool {
    body.windows(4).any(|w| {
        w[0] == b'\\'
            && w[1] == b'u'
            && matches!(w[2], b'd' | b'D')
            && matches!(w[3], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
    })
}
