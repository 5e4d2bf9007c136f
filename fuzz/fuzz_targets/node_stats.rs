//! The node-stats parser and the error-body summary on arbitrary bytes, against serde_json:
//! never a panic or a stack overflow, never a success on a body serde_json refuses as
//! syntax, and a maximum CPU at least serde_json's whenever both read the body (duplicate
//! keys: serde_json keeps the last, the parser reads every one).
#![no_main]

use libfuzzer_sys::fuzz_target;
use load_core::node_stats::{ParseError, error_summary, parse_node_stats};

fuzz_target!(|body: &[u8]| {
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
});

/// Whether the body has a `\uD800`-`\uDFFF` escape (serde_json refuses unpaired ones; JSON's
/// grammar, and the parser, accept them).
fn has_surrogate_escape(body: &[u8]) -> bool {
    body.windows(4).any(|w| {
        w[0] == b'\\' && w[1] == b'u' && matches!(w[2], b'd' | b'D') && matches!(w[3], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
    })
}
