//! Poll responses written by an attacker: nesting hidden behind ignored values, bodies that
//! are not JSON, absurd percents. Every parse runs on a thread with a 256 KiB stack, so a
//! stack overflow cannot hide behind the test harness's larger default stack.

use std::thread;

use load_core::node_stats::{ParseError, error_summary, parse_node_stats};
use proptest::prelude::*;

/// Small enough that unbounded recursion over a few thousand levels overflows it.
const STACK: usize = 256 * 1024;

/// Runs `f` on a thread with [`STACK`] bytes of stack; a stack overflow aborts the whole
/// test binary, so it cannot pass by accident.
fn small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    thread::Builder::new()
        .stack_size(STACK)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("the parser panicked")
}

fn parse(body: Vec<u8>) -> Result<load_core::node_stats::NodeStats, ParseError> {
    small_stack(move || parse_node_stats(&body))
}

fn summary(body: Vec<u8>) -> Option<(String, String)> {
    small_stack(move || error_summary(&body).map(|(t, r)| (t.to_owned(), r.to_owned())))
}

/// `open` repeated `n` times, then the matching closers.
fn nest(n: usize, object: bool) -> String {
    let (open, close) = if object {
        (r#"{"k":"#, "}")
    } else {
        ("[", "]")
    };
    let mut s = String::with_capacity(n * (open.len() + 1) + 1);
    for _ in 0..n {
        s.push_str(open);
    }
    s.push('0');
    for _ in 0..n {
        s.push_str(close);
    }
    s
}

/// Where a hostile value can be hidden: `{}` is replaced by the value.
const LEVELS: [&str; 6] = [
    r#"{"a":{}}"#,
    r#"{"_nodes":{"a":{}},"nodes":{}}"#,
    r#"{"nodes":{"n1":{"a":{}}}}"#,
    r#"{"nodes":{"n1":{"os":{"a":{}}}}}"#,
    r#"{"nodes":{"n1":{"os":{"cpu":{"a":{},"percent":5}}}}}"#,
    r#"{"error":{"type":"t","a":{},"reason":"r"},"status":500}"#,
];

/// Values that serde-json-core skips without reading them up to the next `,`, `}` or `]`,
/// each followed by a stray quote that a string-guessing pre-scan takes for a string.
const TRICKS: [&str; 6] = ["0\"", "true\"", "-\"", "1e5\"", "null \"", "7\"\\\""];

fn hide(level: &str, trick: &str, nesting: &str) -> Vec<u8> {
    level
        .replacen("{}", &format!("{trick},\"b\":{nesting}"), 1)
        .into_bytes()
}

#[test]
fn the_reported_body_is_refused_without_overflowing() {
    // `{"a":0","b":` + 100,000 `[` + 100,000 `]` + `}`: 200 KB; it aborted the process.
    let mut body = String::from(r#"{"a":0","b":"#);
    body.push_str(&"[".repeat(100_000));
    body.push_str(&"]".repeat(100_000));
    body.push('}');
    assert!(matches!(
        parse(body.clone().into_bytes()),
        Err(ParseError::Json(_))
    ));
    assert_eq!(summary(body.into_bytes()), None);
}

#[test]
fn every_level_and_every_trick_is_refused() {
    for level in LEVELS {
        for trick in TRICKS {
            for object in [false, true] {
                let body = hide(level, trick, &nest(50_000, object));
                let shown = String::from_utf8_lossy(&body[..80]).into_owned();
                assert!(parse(body.clone()).is_err(), "{shown}");
                assert_eq!(summary(body), None, "{shown}");
            }
        }
    }
}

#[test]
fn deep_but_valid_nesting_is_too_deep_at_every_level() {
    for level in LEVELS {
        let body = level.replacen("{}", &nest(100_000, false), 1).into_bytes();
        // An error body is judged too deep before it is judged an error response.
        assert_eq!(
            parse(body.clone()),
            Err(ParseError::TooDeep { limit: 64 }),
            "{level}"
        );
        assert_eq!(summary(body), None, "{level}");
    }
}

#[test]
fn what_is_not_json_is_an_error() {
    let nodes = |percent: &str| {
        format!(r#"{{"nodes":{{"a":{{"os":{{"cpu":{{"percent":{percent}}}}}}}}}}}"#)
    };
    let mut bodies = vec![
        r#"{"cluster_name": hello world, "nodes":{}}"#.to_owned(),
        nodes("+87"),
        nodes("087"),
        nodes("87."),
        nodes(".5"),
        nodes("1e"),
        r#"{"cluster_name":"a	b","nodes":{}}"#.to_owned(), // a raw tab in a string
        "{\"cluster_name\":\"a\u{1}b\",\"nodes\":{}}".to_owned(),
        r#"{"cluster_name":"\x","nodes":{}}"#.to_owned(),
        r#"{"cluster_name":"\u12","nodes":{}}"#.to_owned(),
        r#"{"nodes":{},}"#.to_owned(),
        r#"{"nodes":{"a":{"os":[1,]}}}"#.to_owned(),
        r#"{'nodes':{}}"#.to_owned(),
        r#"{"nodes":{}} {}"#.to_owned(),
    ];
    bodies.push(r#"{"a":tru,"nodes":{}}"#.to_owned());
    for body in bodies {
        let parsed = parse(body.clone().into_bytes());
        assert!(
            matches!(parsed, Err(ParseError::Json(_))),
            "{body}: {parsed:?}"
        );
    }
    let error = r#"{"error":{"type":"x","reason":"y","z":+1},"status":500}"#;
    assert_eq!(summary(error.as_bytes().to_vec()), None);
}

#[test]
fn negative_percents_of_any_magnitude_are_skipped_like_minus_one() {
    for percent in [
        "-1",
        "-1e19",
        "-9999999999999999999",
        "-1e308",
        "-1e999",
        "-100000000000000000000000000000",
        "-0",
        "-0.0",
    ] {
        let body = format!(
            r#"{{"nodes":{{"a":{{"os":{{"cpu":{{"percent":{percent}}}}}}},"b":{{"os":{{"cpu":{{"percent":42}}}}}}}}}}"#
        );
        let stats = parse(body.into_bytes()).unwrap_or_else(|e| panic!("{percent}: {e}"));
        assert_eq!(stats.max_cpu.get(), 42, "{percent}");
        let measured = if percent.starts_with("-0") { 2 } else { 1 };
        assert_eq!(stats.measured, measured, "{percent}");
    }
}

/// A random nesting of arrays and objects, `depth` levels deep: `(depth, text)`.
fn nesting() -> impl Strategy<Value = (usize, String)> {
    (prop::collection::vec(any::<bool>(), 1..64), 60usize..20_000).prop_map(|(kinds, depth)| {
        let mut open = String::new();
        let mut close = Vec::new();
        for i in 0..depth {
            if kinds[i % kinds.len()] {
                open.push_str(r#"{"k":"#);
                close.push('}');
            } else {
                open.push('[');
                close.push(']');
            }
        }
        open.push_str("null");
        open.extend(close.into_iter().rev());
        (depth, open)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// Random nestings behind ignored values (with or without a trick in front), at every
    /// level: never an overflow or a panic, and never a success for a body that is not
    /// JSON or nests deeper than the limit.
    #[test]
    fn hidden_nestings_never_overflow(
        level in prop::sample::select(LEVELS.to_vec()),
        trick in prop::option::of(prop::sample::select(TRICKS.to_vec())),
        (depth, nesting) in nesting(),
    ) {
        let body = match trick {
            Some(trick) => hide(level, trick, &nesting),
            None => level.replacen("{}", &nesting, 1).into_bytes(),
        };
        let reference: Result<serde_json::Value, _> = serde_json::from_slice(&body);
        let parsed = parse(body.clone());
        let summarised = summary(body);
        // Not JSON (serde_json's verdict), or deeper than the parser's limit of 64 by the
        // nesting alone: never read as node stats. (The text's length is no measure of
        // depth: 60 levels of `{"k":` are 360 bytes, and were wrongly taken as too deep.)
        if reference.is_err() || depth > 64 {
            prop_assert!(parsed.is_err());
            prop_assert!(summarised.is_none());
        }
    }

    /// Arbitrary short bodies: the parser says "JSON" exactly when serde_json does
    /// (both refuse nesting deeper than their limits; shallow bodies only here).
    #[test]
    fn syntax_verdicts_agree_with_serde_json(
        body in prop::collection::vec(prop::sample::select(
            br#"{}[],:"\ 0123456789.-+eEtrufalsn"#.to_vec()), 0..40),
    ) {
        let reference = serde_json::from_slice::<serde_json::Value>(&body).is_ok();
        let shallow = body.iter().filter(|&&b| b == b'[' || b == b'{').count() <= 64;
        if shallow {
            let parsed = parse(body.clone());
            // Valid JSON may still not be node stats (`[]`, `1`): a body serde_json refuses
            // must be a `Json` error here ...
            if !reference {
                prop_assert!(matches!(parsed, Err(ParseError::Json(_))), "{:?}: {:?}", String::from_utf8_lossy(&body), parsed);
            }
            // ... and a syntax error (one with an offset) is one for serde_json too.
            if let Err(ParseError::Json(e)) = &parsed
                && e.offset().is_some()
            {
                prop_assert!(!reference, "{:?}: {}", String::from_utf8_lossy(&body), e);
            }
        }
    }
}
