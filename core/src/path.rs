//! Request classification: excluded, web or API, robust to path obfuscation.

/// What a request target is, for load control.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Route {
    /// Never controlled: the admin UI, login and error pages, static resources.
    Excluded,
    /// A web request, controlled by `web.load.control`.
    Web,
    /// An API request (under `/api/`), controlled by `api.load.control`.
    Api,
}

impl Route {
    /// `"excluded"`, `"web"` or `"api"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Route::Excluded => "excluded",
            Route::Web => "web",
            Route::Api => "api",
        }
    }
}

impl core::fmt::Display for Route {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// First path segments whose whole subtree is excluded (Fess: `/admin`, `/error`, `/login`).
pub const EXCLUDED_PREFIXES: [&str; 3] = ["admin", "error", "login"];

/// File extensions served as static resources, which are excluded (Fess's list).
pub const STATIC_EXTENSIONS: [&str; 11] = [
    ".css", ".js", ".png", ".jpg", ".gif", ".ico", ".svg", ".woff", ".woff2", ".ttf", ".eot",
];

/// Classifies a request target (`/path;params?query#fragment`, as a server receives it).
///
/// # The rule
///
/// The target is first normalised the way a router resolves it, then Fess's rules apply to
/// the result:
///
/// 1. Everything from the first `?` or `#` is dropped.
/// 2. The path is split into segments at `/`; empty segments (`//`) are skipped.
/// 3. In each segment, a `;` and everything after it (path parameters such as
///    `;jsessionid=...`) is dropped.
/// 4. Percent-escapes of unreserved characters (`A-Z a-z 0-9 - . _ ~`) are decoded; other
///    escapes stay as they are, as routers keep them.
/// 5. `.` and `..` segments are resolved (`..` never climbs above the root).
/// 6. The result is **API** if its first segment is `api` and something follows it
///    (`/api/...`; `/api` alone is web); otherwise **web**.
/// 7. It is **excluded** if its first segment is exactly `admin`, `error` or `login`
///    (so `/admin` and `/admin/x`, not `/adminfoo`), or if its last segment ends with one of
///    [`STATIC_EXTENSIONS`] and contains no remaining escape (so `/a.css`, not `/a.css/`,
///    `/a;.css` or `/a%3b.css`).
///
/// Exclusion is a privilege granted only to unambiguous targets. A target that routers
/// could read in different ways is always controlled, never excluded: one that does not
/// start with `/`, or that contains a backslash, an encoded separator (`%2F`, `%5C`), an
/// encoded `%` (`%25`, double encoding), a control character or a malformed escape. Such a
/// target is classified as web or API with the separators taken as separators, the reading
/// under which routers that accept it serve it. Matching is case-sensitive, as in Fess: a
/// router that matches `/ADMIN` case-insensitively gets a controlled request, the stricter
/// answer.
///
/// # Performance
///
/// One pass over the bytes with constant state: no allocation, no buffer, no length limit.
///
/// # Examples
///
/// ```
/// use load_core::{classify, Route};
///
/// assert_eq!(classify("/search?q=rust"), Route::Web);
/// assert_eq!(classify("/api/v1/documents?q=x"), Route::Api);
/// assert_eq!(classify("/admin/dashboard/"), Route::Excluded);
/// assert_eq!(classify("/css/style.css"), Route::Excluded);
/// // Obfuscations do not buy an exclusion:
/// assert_eq!(classify("/search;.css"), Route::Web);
/// assert_eq!(classify("/admin/%2e%2e/search"), Route::Web);
/// assert_eq!(classify("/./admin/../api/v1/x"), Route::Api);
/// assert_eq!(classify("/adminfoo"), Route::Web);
/// ```
#[must_use]
pub fn classify(target: &str) -> Route {
    classify_bytes(target.as_bytes())
}

/// [`classify`] on raw bytes (a target that is not valid UTF-8 is classified all the same).
#[must_use]
#[inline]
pub fn classify_bytes(target: &[u8]) -> Route {
    match classify_canonical(target) {
        Some(route) => route,
        None => classify_normalising(target),
    }
}

/// How the fast path treats a byte.
const PLAIN: u8 = 0;
const SLASH: u8 = 1;
const DOT: u8 = 2;
const END: u8 = 3;
/// Needs the full normaliser: `%`, `\`, `;`, control characters.
const BAIL: u8 = 4;

const CLASS: [u8; 256] = {
    let mut class = [PLAIN; 256];
    let mut b = 0;
    while b < 256 {
        class[b] = match b as u8 {
            b'/' => SLASH,
            b'.' => DOT,
            b'?' | b'#' => END,
            b'%' | b'\\' | b';' | 0x00..=0x1f | 0x7f => BAIL,
            _ => PLAIN,
        };
        b += 1;
    }
    class
};

/// The fast path: a target that is already canonical (starts with `/`; no escape, backslash,
/// `;`, control character, empty segment or segment starting with `.` before the query) is
/// classified in one pass over a byte-class table. Anything else is `None`, for the full
/// normaliser. Both agree wherever this answers (a property test checks it).
#[inline]
fn classify_canonical(target: &[u8]) -> Option<Route> {
    if target.first() != Some(&b'/') {
        return None;
    }
    let mut first_end = 0;
    let mut last_slash = 0;
    let mut last_dot = 0;
    let mut end = target.len();
    let mut i = 1;
    loop {
        // Runs of plain bytes are the common case: skip them in a tight loop.
        while i < target.len() && CLASS[usize::from(target[i])] == PLAIN {
            i += 1;
        }
        let Some(&b) = target.get(i) else { break };
        match CLASS[usize::from(b)] {
            SLASH => {
                if last_slash == i - 1 {
                    return None; // an empty segment
                }
                if first_end == 0 {
                    first_end = i;
                }
                last_slash = i;
            }
            DOT => {
                if last_slash == i - 1 {
                    return None; // a segment starting with `.`: maybe a dot segment
                }
                last_dot = i;
            }
            END => {
                end = i;
                break;
            }
            _ => return None,
        }
        i += 1;
    }
    let first = &target[1..if first_end == 0 { end } else { first_end }];
    if matches!(first, b"admin" | b"error" | b"login") {
        return Some(Route::Excluded);
    }
    if last_dot > last_slash && is_static_extension(&target[last_dot..end]) {
        return Some(Route::Excluded);
    }
    if first == b"api" && first_end != 0 {
        Some(Route::Api)
    } else {
        Some(Route::Web)
    }
}

/// Whether `extension` (with its dot) is one of [`STATIC_EXTENSIONS`].
#[inline]
fn is_static_extension(extension: &[u8]) -> bool {
    matches!(
        extension,
        b".css"
            | b".js"
            | b".png"
            | b".jpg"
            | b".gif"
            | b".ico"
            | b".svg"
            | b".woff"
            | b".woff2"
            | b".ttf"
            | b".eot"
    )
}

/// The full normaliser (see [`classify`] for the rule).
#[cold]
fn classify_normalising(target: &[u8]) -> Route {
    let end = target
        .iter()
        .position(|&b| b == b'?' || b == b'#')
        .unwrap_or(target.len());
    let path = &target[..end];

    let mut walk = Walk {
        ambiguous: path.first() != Some(&b'/'),
        depth: 0,
        first: &[],
        last: &[],
        trailing: false,
    };
    let mut start = 0;
    let mut i = 0;
    while i < path.len() {
        match separator_at(path, i) {
            Some((len, ambiguous)) => {
                walk.ambiguous |= ambiguous;
                walk.segment(&path[start..i]);
                i += len;
                start = i;
            }
            None => i += 1,
        }
    }
    walk.segment(&path[start..]);
    walk.route()
}

/// The state of a dot-segment resolution that remembers only what the rules need.
struct Walk<'a> {
    ambiguous: bool,
    /// Segments in the resolved path so far.
    depth: usize,
    /// The resolved path's first segment (valid while `depth > 0`).
    first: &'a [u8],
    /// The last segment pushed (the resolved path's last segment when `!trailing`).
    last: &'a [u8],
    /// The resolved path ends with `/`.
    trailing: bool,
}

impl<'a> Walk<'a> {
    fn segment(&mut self, raw: &'a [u8]) {
        let name = match raw.iter().position(|&b| b == b';') {
            Some(semicolon) => &raw[..semicolon],
            None => raw,
        };
        self.ambiguous |= is_ambiguous_segment(name);
        if name.is_empty() || decoded_eq(name, b".") {
            self.trailing = true;
        } else if decoded_eq(name, b"..") {
            self.depth = self.depth.saturating_sub(1);
            self.trailing = true;
        } else {
            if self.depth == 0 {
                self.first = name;
            }
            self.depth += 1;
            self.last = name;
            self.trailing = false;
        }
    }

    fn route(&self) -> Route {
        if self.depth == 0 {
            return Route::Web;
        }
        if !self.ambiguous {
            let excluded_prefix = EXCLUDED_PREFIXES
                .iter()
                .any(|prefix| decoded_eq(self.first, prefix.as_bytes()));
            if excluded_prefix || (!self.trailing && is_static(self.last)) {
                return Route::Excluded;
            }
        }
        if decoded_eq(self.first, b"api") && (self.depth > 1 || self.trailing) {
            Route::Api
        } else {
            Route::Web
        }
    }
}

/// A path separator at `i`: its length, and whether routers disagree on it.
fn separator_at(path: &[u8], i: usize) -> Option<(usize, bool)> {
    match path[i] {
        b'/' => Some((1, false)),
        b'\\' => Some((1, true)),
        b'%' => match escape_at(path, i) {
            Some(b'/' | b'\\') => Some((3, true)),
            _ => None,
        },
        _ => None,
    }
}

/// The byte encoded by a well-formed `%XX` at `i`.
fn escape_at(bytes: &[u8], i: usize) -> Option<u8> {
    match bytes.get(i..i + 3) {
        Some([b'%', hi, lo]) => Some(hex(*hi)? << 4 | hex(*lo)?),
        _ => None,
    }
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

const fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

fn is_ambiguous_segment(name: &[u8]) -> bool {
    name.iter().enumerate().any(|(i, &b)| {
        b.is_ascii_control()
            || (b == b'%'
                && match escape_at(name, i) {
                    None => true,
                    Some(decoded) => decoded == b'%' || decoded.is_ascii_control(),
                })
    })
}

/// The bytes of a path segment with escapes of unreserved characters (`A-Z a-z 0-9 - . _ ~`)
/// decoded, and every other byte (other escapes included) as written: what [`classify`]
/// compares. A router that matches segments this way routes exactly what load control
/// classified.
///
/// ```
/// use load_core::decode_unreserved;
///
/// let decoded: Vec<u8> = decode_unreserved(b"%61dmin%2Fx").collect();
/// assert_eq!(decoded, b"admin%2Fx");
/// ```
pub fn decode_unreserved(raw: &[u8]) -> impl Iterator<Item = u8> + '_ {
    decoded(raw)
}

/// See [`decode_unreserved`]; any `%` that is not decoded is yielded as-is, so it can never
/// match a plain name.
fn decoded(raw: &[u8]) -> impl Iterator<Item = u8> + '_ {
    let mut i = 0;
    core::iter::from_fn(move || {
        let b = *raw.get(i)?;
        if b == b'%'
            && let Some(decoded) = escape_at(raw, i).filter(|&d| is_unreserved(d))
        {
            i += 3;
            return Some(decoded);
        }
        i += 1;
        Some(b)
    })
}

fn decoded_eq(raw: &[u8], name: &[u8]) -> bool {
    raw.len() >= name.len() && decoded(raw).eq(name.iter().copied())
}

/// Whether a (parameter-free) last segment names a static resource.
fn is_static(raw: &[u8]) -> bool {
    const TAIL: usize = 8;
    let mut tail = [0u8; TAIL];
    let mut len = 0;
    for b in decoded(raw) {
        if b == b'%' {
            // An escape that stayed encoded: `a%3b.css` is not the file `a.css`.
            return false;
        }
        tail.copy_within(1.., 0);
        tail[TAIL - 1] = b;
        len += 1;
    }
    let tail = &tail[TAIL - len.min(TAIL)..];
    STATIC_EXTENSIONS
        .iter()
        .any(|ext| tail.ends_with(ext.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fess_exclusions() {
        for path in [
            "/admin",
            "/admin/",
            "/admin/dashboard/",
            "/error",
            "/error/404",
            "/login",
            "/login/?next=/",
            "/css/style.css",
            "/js/app.js",
            "/images/logo.png",
            "/a.jpg",
            "/a.gif",
            "/favicon.ico",
            "/i.svg",
            "/f.woff",
            "/f.woff2",
            "/f.ttf",
            "/f.eot",
            "/api/v1/x.js",
        ] {
            assert_eq!(classify(path), Route::Excluded, "{path}");
        }
    }

    #[test]
    fn web_and_api() {
        for (path, route) in [
            ("/", Route::Web),
            ("", Route::Web),
            ("/search?q=rust", Route::Web),
            ("/api", Route::Web),
            ("/api?x=/", Route::Web),
            ("/apis/v1", Route::Web),
            ("/api/", Route::Api),
            ("/api/v1/documents?q=x", Route::Api),
            ("/adminfoo", Route::Web),
            ("/errors", Route::Web),
            ("/login-help", Route::Web),
            ("/ADMIN", Route::Web),
            ("/style.CSS", Route::Web),
            ("/search/x.css/", Route::Web),
        ] {
            assert_eq!(classify(path), route, "{path}");
        }
    }

    #[test]
    fn obfuscations_from_the_issue() {
        for (path, route) in [
            ("/search;.css", Route::Web),
            ("/api/v1/search;.js", Route::Api),
            ("/admin/../search", Route::Web),
            ("/admin/%2e%2e/search", Route::Web),
            ("/admin/%2E%2e/search", Route::Web),
            ("/./admin/../api/v1/x", Route::Api),
            ("//admin/../search", Route::Web),
            ("/api/v1/../../search", Route::Web),
            ("/search?x=.css", Route::Web),
            ("/search#x.css", Route::Web),
            ("/search%3b.css", Route::Web),
            ("/search%3B.css", Route::Web),
        ] {
            assert_eq!(classify(path), route, "{path}");
        }
    }

    #[test]
    fn normalisation_that_routers_do_is_followed() {
        for (path, route) in [
            ("/../admin/x", Route::Excluded),
            ("/admin;jsessionid=1/x", Route::Excluded),
            ("/%61dmin/x", Route::Excluded),
            ("/css/style%2ecss", Route::Excluded),
            ("/api/v1/..", Route::Api),
            ("/api/.", Route::Api),
            ("/api/..", Route::Web),
            ("/api;v=2/x", Route::Api),
            ("/x/./y/../style.css", Route::Excluded),
            ("/style.css/..", Route::Web),
            ("/;x/admin", Route::Excluded),
        ] {
            assert_eq!(classify(path), route, "{path}");
        }
    }

    #[test]
    fn ambiguous_targets_are_never_excluded() {
        for (path, route) in [
            ("/admin%2f..%2fsearch", Route::Web),
            ("/admin\\..\\search", Route::Web),
            ("/api%2fv1/x", Route::Api),
            ("/api%5Cv1", Route::Api),
            ("/admin%252e%252e/x", Route::Web),
            ("/admin/%zz", Route::Web),
            ("/admin/%", Route::Web),
            ("/admin/\u{7f}", Route::Web),
            ("/style%00.css", Route::Web),
            ("admin/x", Route::Web),
            ("*", Route::Web),
            ("http://host/admin/", Route::Web),
        ] {
            assert_eq!(classify(path), route, "{path}");
        }
    }

    #[test]
    fn the_extension_list_and_the_fast_match_agree() {
        for ext in STATIC_EXTENSIONS {
            let name = std::format!("file{ext}");
            assert!(is_static_extension(ext.as_bytes()), "{ext}");
            assert!(is_static(name.as_bytes()), "{ext}");
            assert_eq!(
                classify_canonical(std::format!("/x/{name}").as_bytes()),
                Some(Route::Excluded)
            );
        }
        for name in ["/css", "/a.cs", "/a.css.map", "/a.css/", "/.css"] {
            assert_ne!(
                classify_canonical(name.as_bytes()),
                Some(Route::Excluded),
                "{name}"
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]

        /// Wherever the fast path answers, it answers what the full normaliser does.
        #[test]
        fn the_fast_path_agrees_with_the_normaliser(
            parts in proptest::collection::vec(
                proptest::sample::select(std::vec![
                    "/", "//", ".", "..", "admin", "api", "error", "login", "search", "a", "x.css",
                    ".js", "woff2", ".woff", "?", "#", ";p", "%2e", "%61", "\\", "q=.css", "-", "~",
                ]),
                0..8,
            )
        ) {
            let target: std::string::String = parts.concat();
            if let Some(fast) = classify_canonical(target.as_bytes()) {
                proptest::prop_assert_eq!(fast, classify_normalising(target.as_bytes()), "{}", target);
            }
        }
    }

    #[test]
    fn non_utf8_bytes_are_classified() {
        assert_eq!(classify_bytes(b"/\xff\xfe.css"), Route::Excluded);
        assert_eq!(classify_bytes(b"/api/\xff"), Route::Api);
    }
}
