//! Targets whose class depended on how `;params` end, on encodings, or on the request
//! form: no spelling may move a request from a rejecting class to an admitted one, and
//! only canonical targets are ever excluded.

use load_core::{Class, CpuPercent, Instant, LoadControl, Outcome, path::classify};
use proptest::prelude::*;

/// Control with these thresholds, after one sample at 50 %: a class at threshold 0 is
/// rejecting, one at 100 is not controlled.
fn control(web: i32, api: i32) -> LoadControl {
    let control = LoadControl::new(web, api);
    control.update(Instant::ZERO, Outcome::Sample(CpuPercent::new(50)));
    control
}

fn admitted(target: &str, web: i32, api: i32) -> bool {
    control(web, api).check(target).is_allowed()
}

/// The targets of the report: served as one class by routers, classified as the other.
const REPORTED: [&str; 5] = [
    "/api;%2f%2e%2e/v1/documents?q=load",
    "/;%2fapi/?q=load",
    "/search/..;/admin",
    "/search//../admin",
    "/api/..;/search",
];

#[test]
fn reported_targets_answer_to_both_thresholds() {
    for target in REPORTED {
        assert!(!admitted(target, 100, 0), "{target}: API rejecting");
        assert!(!admitted(target, 0, 100), "{target}: web rejecting");
        assert!(admitted(target, 100, 100), "{target}: nothing controlled");
        assert_eq!(classify(target), Class::Ambiguous, "{target}");
    }
}

/// Found from outside: an escaped `?` or `#` counted as canonical, so these were excluded as
/// static files, while a front end that decodes the path once before forwarding it serves
/// the search page, the root or the API (the decoded `?` starts the query there).
#[test]
fn an_escaped_query_or_fragment_mark_is_not_canonical() {
    for target in [
        "/search%3Fq=load%26x=.css",
        "/%3F.js",
        "/api/%3f.js",
        "/search%23q=load%26x=.css",
        "/%23.js",
        "/api/%23.js",
        "/search%3fq=load.css",
        "/%3f.js",
        "/api/%3F.js",
        "/api/v1/documents%3Fq=x.png",
    ] {
        assert_eq!(classify(target), Class::Ambiguous, "{target}");
        assert!(!admitted(target, 100, 0), "{target}: API rejecting");
        assert!(!admitted(target, 0, 100), "{target}: web rejecting");
    }
}

#[test]
fn absolute_form_is_classified_by_its_path() {
    for (target, class) in [
        ("http://host/api/v1/documents", Class::Api),
        ("https://host:9200/api/v1/documents?q=x", Class::Api),
        ("http://host/search?q=x", Class::Web),
        ("http://host", Class::Web),
        ("http://host?q=/api/x", Class::Web),
        ("HTTP://user@host/admin/", Class::Excluded),
        ("http://host/css/site.css", Class::Excluded),
        ("http://host/admin/../api/x", Class::Ambiguous),
        ("http://host\\@evil/api/x", Class::Ambiguous),
        ("http:/api/x", Class::Ambiguous),
        ("//host/api/x", Class::Ambiguous),
    ] {
        assert_eq!(classify(target), class, "{target}");
    }
    assert!(!admitted("http://host/api/v1/documents", 100, 0));
    assert!(admitted("http://host/api/v1/documents", 0, 100));
}

#[test]
fn never_exclude_markers_count_inside_params() {
    for target in [
        "/admin;%252f..%252fsearch",
        "/admin;%",
        "/admin;%2",
        "/x.css;%25",
        "/admin;%00",
        "/admin;a\\b",
        "/admin;%2f",
        "/login;\u{1}",
    ] {
        assert_ne!(classify(target), Class::Excluded, "{target}");
        assert!(!admitted(target, 0, 0), "{target}");
    }
}

#[test]
fn canonical_targets_keep_their_class() {
    for (target, class) in [
        ("/search?q=rust", Class::Web),
        ("/search;jsessionid=ABC123?q=rust", Class::Web),
        ("/api/v1/documents;jsessionid=1?q=x", Class::Api),
        ("/admin/dashboard/", Class::Excluded),
        ("/css/style.css", Class::Excluded),
        ("/search/caf%C3%A9", Class::Web),
        ("/images/a%20b.png", Class::Excluded),
        ("/.well-known/x", Class::Web),
        ("/api", Class::Ambiguous),
        ("/api/", Class::Api),
        ("/", Class::Web),
    ] {
        assert_eq!(classify(target), class, "{target}");
    }
}

/// Pieces that routers read in different ways.
const PIECES: [&str; 28] = [
    "/", "/", "/", ".", "..", "%2e", "%2E", "%2f", "%5c", "%25", ";", ";x", "\\", "?", "#",
    "admin", "api", "css", ".css", "search", "v1", "%61", "é", "%C3%A9", "login", "x.js", "%3F",
    "%23",
];

/// Fess's rule on one reading of a path: segments as that reading splits them.
fn fess(segments: &[String], trailing: bool) -> Class {
    let Some(first) = segments.first() else {
        return Class::Web;
    };
    if ["admin", "error", "login"].contains(&first.as_str()) {
        return Class::Excluded;
    }
    let last = segments.last().expect("non-empty");
    if !trailing
        && load_core::path::STATIC_EXTENSIONS
            .iter()
            .any(|ext| last.ends_with(ext))
    {
        return Class::Excluded;
    }
    if first == "api" && (segments.len() > 1 || trailing) {
        Class::Api
    } else {
        Class::Web
    }
}

/// Resolves dot segments (RFC 3986 5.2.4) over already split segments.
fn resolve(raw: &[String]) -> (Vec<String>, bool) {
    let mut out: Vec<String> = Vec::new();
    let mut trailing = false;
    for segment in raw {
        trailing = false;
        match segment.as_str() {
            "." | "" => trailing = true,
            ".." => {
                out.pop();
                trailing = true;
            }
            _ => out.push(segment.clone()),
        }
    }
    (out, trailing)
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(Ok(b)) = bytes
                .get(i + 1..i + 3)
                .map(|h| u8::from_str_radix(std::str::from_utf8(h).unwrap_or("zz"), 16))
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Plausible readings of a target's path: the raw path; the `url` crate's (WHATWG: `\`
/// is `/`, `%2e` segments are dots); Tomcat's (`;params` dropped per segment, then
/// decoded, then dot segments resolved); and a decode-first server (`%2f` is a `/`).
fn readings(target: &str) -> Vec<Class> {
    let path = target.split(['?', '#']).next().unwrap_or_default();
    let split = |p: &str| -> Vec<String> {
        p.strip_prefix('/')
            .unwrap_or(p)
            .split('/')
            .map(str::to_owned)
            .collect()
    };
    let mut routes = Vec::new();
    // Raw, with dot segments resolved as written.
    let (segments, trailing) = resolve(&split(path));
    routes.push(fess(&segments, trailing));
    // The url crate.
    if let Ok(url) = url::Url::parse(&format!(
        "http://h{}",
        if path.starts_with('/') {
            path.to_owned()
        } else {
            format!("/{path}")
        }
    )) {
        let (segments, trailing) = resolve(&split(url.path()));
        routes.push(fess(&segments, trailing));
    }
    // Tomcat: parameters off, decode, resolve.
    let tomcat: Vec<String> = split(path)
        .iter()
        .map(|s| percent_decode(s.split(';').next().unwrap_or_default()))
        .collect();
    let (segments, trailing) = resolve(&tomcat);
    routes.push(fess(&segments, trailing));
    // Decode first, then split.
    let (segments, trailing) = resolve(&split(&percent_decode(path).replace('\\', "/")));
    routes.push(fess(&segments, trailing));
    // A front end that decodes the path once and forwards it: the server behind it reads a
    // decoded `?` or `#` as the end of the path.
    let forwarded = percent_decode(path);
    let forwarded = forwarded.split(['?', '#']).next().unwrap_or_default();
    let (segments, trailing) = resolve(&split(forwarded));
    routes.push(fess(&segments, trailing));
    routes
}

fn is_canonical(target: &str) -> bool {
    let path = target.split(['?', '#']).next().unwrap_or_default();
    let Some(rest) = path.strip_prefix('/') else {
        return false;
    };
    let segments: Vec<&str> = rest.split('/').collect();
    segments.iter().enumerate().all(|(i, segment)| {
        let name = segment.split(';').next().unwrap_or_default();
        let last = i + 1 == segments.len();
        (!name.is_empty() || (last && !segment.contains(';')))
            && !matches!(percent_decode(name).as_str(), "." | "..")
            && !segment.contains('\\')
            && !segment.bytes().any(|b| b.is_ascii_control())
            && segment.split('%').skip(1).all(|escape| {
                let hex = escape.get(..2).unwrap_or("zz");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => {
                        !(b.is_ascii_alphanumeric()
                            || b"-._~/\\%;?#".contains(&b)
                            || b.is_ascii_control())
                    }
                    Err(_) => false,
                }
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    /// For random targets built from dangerous pieces: an excluded target is canonical, and
    /// under every plausible reading, a class that is rejecting never gets the request
    /// admitted.
    #[test]
    fn no_reading_escapes_a_rejecting_class(
        pieces in prop::collection::vec(prop::sample::select(PIECES.to_vec()), 0..9),
        absolute in prop::bool::weighted(0.1),
    ) {
        let path = format!("/{}", pieces.concat());
        let target = if absolute { format!("http://host{path}") } else { path.clone() };
        let class = classify(&target);
        if class == Class::Excluded {
            prop_assert!(is_canonical(&path), "{} excluded but not canonical", target);
        }
        for reading in readings(&path) {
            let (web, api) = match reading {
                Class::Excluded => continue,
                Class::Web => (0, 100),
                _ => (100, 0),
            };
            prop_assert!(
                !control(web, api).check(&target).is_allowed(),
                "{} read as {:?} but admitted (classified {:?})", target, reading, class
            );
        }
    }
}
