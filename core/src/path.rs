//! Request classification: excluded, web or API, robust to path obfuscation.

/// A request's class, for load control: what [`classify`] reads a target as (the metrics'
/// `class` label, the glossary's *class*).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Class {
    /// Never controlled: the admin UI, login and error pages, static resources.
    Excluded,
    /// A web request, controlled by `web.load.control`.
    Web,
    /// An API request (under `/api/`), controlled by `api.load.control`.
    Api,
    /// A target that routers could read as either class (see [`classify`]): it answers to
    /// both thresholds, and is rejected while either class is.
    Ambiguous,
}

/// The name [`Class`] had before 0.4.
#[deprecated(
    since = "0.4.0",
    note = "renamed `Class`: the word of the docs, the glossary and the metrics' `class` label"
)]
pub type Route = Class;

impl Class {
    /// `"excluded"`, `"web"`, `"api"` or `"ambiguous"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Class::Excluded => "excluded",
            Class::Web => "web",
            Class::Api => "api",
            Class::Ambiguous => "ambiguous",
        }
    }
}

impl core::fmt::Display for Class {
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

/// Where a server's static files live: where Fess's static-extension rule may exclude a
/// request from control.
///
/// Fess excludes any path whose last segment ends with a static extension
/// ([`STATIC_EXTENSIONS`]), wherever it is ([`StaticFiles::Everywhere`], the default). In a
/// server of your own that rule is a way around load control: with a route such as
/// `/api/v1/documents/{id}`, `/api/v1/documents/42.css` is excluded and reaches the handler
/// however busy the cluster is. Name the prefixes your static files are served under
/// ([`StaticFiles::Under`]) and the rule applies there only: elsewhere no extension
/// excludes. It only ever narrows Fess's exclusion.
///
/// ```
/// use load_core::{Class, path::{PathRules, StaticFiles}};
///
/// let fess = PathRules::FESS; // static files everywhere
/// assert_eq!(fess.classify("/api/v1/documents/42.css"), Class::Excluded);
/// let assets = PathRules::FESS.static_files(StaticFiles::Under(&["/css", "/js", "/images"]));
/// assert_eq!(assets.classify("/api/v1/documents/42.css"), Class::Api);
/// assert_eq!(assets.classify("/css/site.css"), Class::Excluded);
/// assert_eq!(assets.classify("/cssx/site.css"), Class::Web);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum StaticFiles {
    /// A static extension excludes a request anywhere (Fess).
    #[default]
    Everywhere,
    /// A static extension excludes a request only below one of these prefixes, each a path
    /// from the root (`/css`, `/assets/js`; a trailing `/` is ignored) matched as whole
    /// segments: `/css` covers `/css/site.css`, not `/cssx/site.css` nor `/css;v=1/a.css`.
    Under(&'static [&'static str]),
}

impl StaticFiles {
    /// Whether static files may live at `path` (the path of a canonical target, without
    /// its query).
    #[inline]
    fn cover(self, path: &[u8]) -> bool {
        match self {
            StaticFiles::Everywhere => true,
            StaticFiles::Under(prefixes) => under(prefixes, path),
        }
    }
}

/// Whether `path` is below one of `prefixes` (out of line: the request path's fast path
/// stays small enough to be inlined).
#[cold]
#[inline(never)]
fn under(prefixes: &[&str], path: &[u8]) -> bool {
    prefixes.iter().any(|prefix| {
        let prefix = prefix.as_bytes();
        let prefix = prefix.strip_suffix(b"/").unwrap_or(prefix);
        prefix.first() == Some(&b'/')
            && path.starts_with(prefix)
            && path.get(prefix.len()) == Some(&b'/')
    })
}

/// Whether `path` is one of `prefixes` or below one (out of line, as [`under`]).
#[cold]
#[inline(never)]
fn at_or_under(prefixes: &[&str], path: &[u8]) -> bool {
    let path = match path.strip_suffix(b"/") {
        Some(stripped) if !stripped.is_empty() => stripped,
        _ => path,
    };
    prefixes.iter().any(|prefix| {
        let prefix = prefix.as_bytes();
        let prefix = prefix.strip_suffix(b"/").unwrap_or(prefix);
        prefix.len() > 1
            && prefix.first() == Some(&b'/')
            && path.starts_with(prefix)
            && matches!(path.get(prefix.len()), None | Some(&b'/'))
    })
}

/// How a server's request targets are classified: Fess's rules, where its static files
/// live ([`StaticFiles`]), and the paths it declares never controlled.
///
/// [`PathRules::FESS`] is Fess's rule exactly ([`classify`]). A server of your own narrows
/// the static-file rule to where its static files are, and names what must answer under
/// any load: its metrics, health checks, readiness probes. An uncontrolled path is a path
/// from the root matched as whole segments, as [`StaticFiles::Under`] matches (`/metrics`
/// covers `/metrics` and `/metrics/x`, not `/metricsx`), on canonical targets only: a
/// spelling that routers could read as another path (`/metrics/../search`, `/metrics;x`,
/// an escape) stays controlled. An entry that does not start with `/`, or is `/` alone,
/// matches nothing.
///
/// ```
/// use load_core::{Class, path::{PathRules, StaticFiles}};
///
/// let rules = PathRules::FESS
///     .static_files(StaticFiles::Under(&["/assets"]))
///     .uncontrolled(&["/metrics", "/healthz"]);
/// assert_eq!(rules.classify("/metrics"), Class::Excluded);
/// assert_eq!(rules.classify("/healthz/ready?x=1"), Class::Excluded);
/// assert_eq!(rules.classify("/metricsx"), Class::Web);
/// assert_eq!(rules.classify("/metrics/../search"), Class::Ambiguous);
/// assert_eq!(rules.classify(b"/api/v1/documents/1.css"), Class::Api);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct PathRules {
    /// Where Fess's static-extension rule may exclude a request.
    pub static_files: StaticFiles,
    /// Paths never controlled, beyond Fess's `/admin`, `/error` and `/login`.
    pub uncontrolled: &'static [&'static str],
}

impl PathRules {
    /// Fess's rule: static files everywhere, nothing else uncontrolled.
    pub const FESS: PathRules = PathRules {
        static_files: StaticFiles::Everywhere,
        uncontrolled: &[],
    };

    /// These rules with static files where `static_files` says.
    #[must_use]
    pub const fn static_files(self, static_files: StaticFiles) -> PathRules {
        PathRules {
            static_files,
            ..self
        }
    }

    /// These rules with `paths` never controlled.
    #[must_use]
    pub const fn uncontrolled(self, paths: &'static [&'static str]) -> PathRules {
        PathRules {
            uncontrolled: paths,
            ..self
        }
    }

    /// Classifies a request target, as text or raw bytes (a target that is not valid
    /// UTF-8 is classified all the same): [`classify`]'s rule with these rules' static
    /// files and uncontrolled paths.
    #[must_use]
    #[inline(always)]
    pub fn classify(&self, target: impl AsRef<[u8]>) -> Class {
        let target = target.as_ref();
        match classify_canonical(target, self) {
            Some(class) => class,
            None => classify_slow(target, self),
        }
    }
}

/// Classifies a request target (`/path;params?query#fragment`, or the absolute form
/// `http://host/path?query`, as a server receives it).
///
/// # The rule
///
/// Only the path matters: everything from the first `?` or `#` is dropped, and an
/// absolute-form target (`scheme://authority/path`) is classified by its path (`/` when it
/// has none).
///
/// **Canonical targets** are classified by Fess's rules. A path is canonical when it is
/// already what every router would make of it: it starts with `/`; no segment is empty
/// (`//`; a single trailing `/` is fine) or a dot segment (`.` or `..`, also as `..;x`);
/// and nowhere, `;params` included, is there a backslash, a control character, a malformed
/// escape, or an escape of a character that changes the reading (`%2F`, `%5C`, `%25`,
/// `%3B`, `%3F`, `%23`, or an unreserved character such as `%2e` or `%61`, which canonical
/// URIs never encode). A front end that decodes the path once before forwarding it turns
/// `%3F` and `%23` into the start of a query or fragment, so `/search%3Fq=x.css` is the
/// search page to the server behind it. Browsers send nothing else for pages and static files. On a canonical path:
///
/// 1. **Excluded** if its first segment is exactly `admin`, `error` or `login` (so `/admin`
///    and `/admin/x`, not `/adminfoo`), or if it does not end with `/` and its last segment
///    ends with one of [`STATIC_EXTENSIONS`];
/// 2. otherwise **API** if its first segment is `api` and something follows it (`/api/...`);
///    `/api` alone is [`Class::Ambiguous`]: Fess serves it as a web page, a router that nests
///    the API under `/api` serves the API's root;
/// 3. otherwise **web**.
///
/// Fess's static-file rule is kept as Fess has it: a target whose last segment ends with one
/// of [`STATIC_EXTENSIONS`] is excluded, whatever the router does with it. A server that
/// serves dynamic pages or API answers at such paths (`/api/v1/documents/{id}` with an id
/// like `123.js`) should say where its static files live instead ([`StaticFiles`],
/// [`PathRules`]; `ControlConfig::static_files` for [`crate::LoadControl`]).
///
/// `;params` are read both ways routers read them: dropped (Tomcat, `;jsessionid=...`)
/// and kept as part of the segment (most other routers). A request is excluded only if both
/// readings exclude it; when they give different controlled classes (`/api;v=2/x`: API
/// without the parameter, web with it) the target is [`Class::Ambiguous`].
///
/// **Every other target is [`Class::Ambiguous`]**: routers disagree on what it names, so it
/// answers to both thresholds and no spelling can move a request from a rejecting class to
/// an admitted one. Matching is case-sensitive, as in Fess: a router that matches `/ADMIN`
/// case-insensitively gets a controlled request, the stricter answer.
///
/// # Performance
///
/// One pass over the bytes with constant state: no allocation, no buffer, no length limit.
/// Plain canonical targets (no `%`, `;`, `\` or control character) take a table-driven
/// fast path.
///
/// # Examples
///
/// ```
/// use load_core::{Class, path::classify};
///
/// assert_eq!(classify("/search?q=rust"), Class::Web);
/// assert_eq!(classify("/api/v1/documents?q=x"), Class::Api);
/// assert_eq!(classify("/admin/dashboard/"), Class::Excluded);
/// assert_eq!(classify("/css/style.css"), Class::Excluded);
/// assert_eq!(classify("http://host/api/v1/documents"), Class::Api);
/// assert_eq!(classify("/search;jsessionid=A1?q=x"), Class::Web);
/// // Obfuscations do not buy an exclusion, nor a change of class:
/// assert_eq!(classify("/search;.css"), Class::Web);
/// assert_eq!(classify("/admin/%2e%2e/search"), Class::Ambiguous);
/// assert_eq!(classify("/api;%2f%2e%2e/v1/documents"), Class::Ambiguous);
/// assert_eq!(classify("/adminfoo"), Class::Web);
/// ```
#[must_use]
pub fn classify(target: &str) -> Class {
    PathRules::FESS.classify(target)
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
#[inline(always)]
fn classify_canonical(target: &[u8], rules: &PathRules) -> Option<Class> {
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
        return Some(Class::Excluded);
    }
    if !rules.uncontrolled.is_empty() && at_or_under(rules.uncontrolled, &target[..end]) {
        return Some(Class::Excluded);
    }
    if last_dot > last_slash
        && is_static_extension(&target[last_dot..end])
        && rules.static_files.cover(&target[..end])
    {
        return Some(Class::Excluded);
    }
    Some(match (first == b"api", first_end != 0) {
        (true, true) => Class::Api,
        // `/api` alone: web to Fess, the API's root to a router that nests the API there.
        (true, false) => Class::Ambiguous,
        (false, _) => Class::Web,
    })
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

/// Everything the fast path leaves: absolute form, `;params`, escapes, and the targets
/// that are not canonical (see [`classify`] for the rule).
#[cold]
fn classify_slow(target: &[u8], rules: &PathRules) -> Class {
    let Some(path) = path_of(target) else {
        return Class::Ambiguous;
    };
    let end = path
        .iter()
        .position(|&b| b == b'?' || b == b'#')
        .unwrap_or(path.len());
    let path = &path[..end];
    if path.is_empty() {
        // An absolute-form target without a path: `/`.
        return Class::Web;
    }
    let Some(body) = path.strip_prefix(b"/") else {
        return Class::Ambiguous;
    };
    if body.is_empty() {
        return Class::Web;
    }
    let segments = body.split(|&b| b == b'/');
    let count = segments.clone().count();
    let mut first = (&b""[..], &b""[..]);
    let mut last = first;
    for (i, segment) in segments.enumerate() {
        let name = match segment.iter().position(|&b| b == b';') {
            Some(semicolon) => &segment[..semicolon],
            None => segment,
        };
        let trailing = i + 1 == count && i > 0 && segment.is_empty();
        if (name.is_empty() && !trailing && count > 1)
            || (name.is_empty() && segment.len() > name.len())
            || name == b"."
            || name == b".."
            || !is_canonical_segment(segment)
        {
            return Class::Ambiguous;
        }
        if i == 0 {
            first = (name, segment);
        }
        last = (name, segment);
    }
    let trailing = count > 1 && last.1.is_empty();
    let depth = if trailing { count - 1 } else { count };
    // Parameters dropped, then kept: a request is excluded only if both readings exclude
    // it, and gets one class only if both readings agree on it.
    // An uncontrolled path only as itself: with `;params` it is left to the readings.
    if !rules.uncontrolled.is_empty()
        && !path.contains(&b';')
        && at_or_under(rules.uncontrolled, path)
    {
        return Class::Excluded;
    }
    let covered = rules.static_files.cover(path);
    let dropped = fess_rule(first.0, last.0, depth, trailing, covered);
    let kept = fess_rule(first.1, last.1, depth, trailing, covered);
    match (dropped, kept) {
        (a, b) if a == b => a,
        (Class::Excluded, other) | (other, Class::Excluded) => other,
        _ => Class::Ambiguous,
    }
}

/// The path of an origin-form target (itself), or of an absolute-form one; `None` for any
/// other form (`*`, `host:port`, a relative path, an authority routers could misread).
fn path_of(target: &[u8]) -> Option<&[u8]> {
    if target.first() == Some(&b'/') {
        return Some(target);
    }
    // scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), then "://".
    let colon = target.iter().position(|&b| b == b':')?;
    let (scheme, rest) = target.split_at(colon);
    let scheme_ok = scheme.first().is_some_and(u8::is_ascii_alphabetic)
        && scheme
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    let rest = rest.strip_prefix(b"://").filter(|_| scheme_ok)?;
    let authority_end = rest
        .iter()
        .position(|&b| matches!(b, b'/' | b'?' | b'#'))
        .unwrap_or(rest.len());
    let authority_ok = rest[..authority_end]
        .iter()
        .all(|&b| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@[]%".contains(&b));
    authority_ok.then(|| &rest[authority_end..])
}

/// Fess's rules on one reading of a canonical path.
fn fess_rule(first: &[u8], last: &[u8], depth: usize, trailing: bool, covered: bool) -> Class {
    if depth == 0 {
        return Class::Web;
    }
    if matches!(first, b"admin" | b"error" | b"login") {
        return Class::Excluded;
    }
    if !trailing
        && covered
        && let Some(dot) = last.iter().rposition(|&b| b == b'.')
        && is_static_extension(&last[dot..])
    {
        return Class::Excluded;
    }
    if first == b"api" {
        if depth > 1 || trailing {
            Class::Api
        } else {
            Class::Ambiguous
        }
    } else {
        Class::Web
    }
}

/// No backslash, control character, malformed escape, or escape of a character that
/// changes the reading (unreserved characters, `/`, `\`, `%`, `;`, `?`, `#`, control
/// characters).
fn is_canonical_segment(segment: &[u8]) -> bool {
    segment.iter().enumerate().all(|(i, &b)| match b {
        b'\\' => false,
        b if b.is_ascii_control() => false,
        b'%' => escape_at(segment, i).is_some_and(|decoded| {
            !(is_unreserved(decoded)
                || decoded.is_ascii_control()
                || matches!(decoded, b'/' | b'\\' | b'%' | b';' | b'?' | b'#'))
        }),
        _ => true,
    })
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

/// The bytes of a path segment with escapes of unreserved characters (`A-Z a-z 0-9 - . _ ~`)
/// decoded, and every other byte (other escapes included) as written: what [`classify`]
/// compares. A router that matches segments this way routes exactly what load control
/// classified.
///
/// ```
/// use load_core::path::decode_unreserved;
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
            assert_eq!(classify(path), Class::Excluded, "{path}");
        }
    }

    #[test]
    fn web_and_api() {
        for (path, class) in [
            ("/", Class::Web),
            ("/search?q=rust", Class::Web),
            ("/api", Class::Ambiguous),
            ("/api?x=/", Class::Ambiguous),
            ("/apis/v1", Class::Web),
            ("/api/", Class::Api),
            ("/api/v1/documents?q=x", Class::Api),
            ("/adminfoo", Class::Web),
            ("/errors", Class::Web),
            ("/login-help", Class::Web),
            ("/ADMIN", Class::Web),
            ("/style.CSS", Class::Web),
            ("/search/x.css/", Class::Web),
        ] {
            assert_eq!(classify(path), class, "{path}");
        }
    }

    #[test]
    fn obfuscations_never_buy_an_exclusion() {
        for (path, class) in [
            ("/search;.css", Class::Web),
            ("/api/v1/search;.js", Class::Api),
            ("/admin/../search", Class::Ambiguous),
            ("/admin/%2e%2e/search", Class::Ambiguous),
            ("/admin/%2E%2e/search", Class::Ambiguous),
            ("/./admin/../api/v1/x", Class::Ambiguous),
            ("//admin/../search", Class::Ambiguous),
            ("/api/v1/../../search", Class::Ambiguous),
            ("/search?x=.css", Class::Web),
            ("/search#x.css", Class::Web),
            ("/search%3b.css", Class::Ambiguous),
            ("/search%3B.css", Class::Ambiguous),
            ("/search%3Fq=load%26x=.css", Class::Ambiguous),
            ("/%23.js", Class::Ambiguous),
            ("/../admin/x", Class::Ambiguous),
            ("/%61dmin/x", Class::Ambiguous),
            ("/css/style%2ecss", Class::Ambiguous),
            ("/api/v1/..", Class::Ambiguous),
            ("/x/./y/../style.css", Class::Ambiguous),
            ("/;x/admin", Class::Ambiguous),
            ("/admin/;x", Class::Ambiguous),
            ("/admin/..;/api/x", Class::Ambiguous),
        ] {
            assert_eq!(classify(path), class, "{path}");
        }
    }

    #[test]
    fn params_are_read_with_and_without() {
        for (path, class) in [
            ("/search;jsessionid=1?q=x", Class::Web),
            ("/api/x;jsessionid=1", Class::Api),
            // Excluded only when both readings exclude it.
            ("/admin;jsessionid=1/x", Class::Web),
            ("/x.css;v=1", Class::Web),
            ("/admin/x;v=1", Class::Excluded),
            ("/admin/x.css;v=1", Class::Excluded),
            // Two controlled classes: both thresholds.
            ("/api;v=2/x", Class::Ambiguous),
            ("/api/x;v=.css", Class::Api),
        ] {
            assert_eq!(classify(path), class, "{path}");
        }
    }

    #[test]
    fn ambiguous_targets_are_never_excluded() {
        for path in [
            "/admin%2f..%2fsearch",
            "/admin\\..\\search",
            "/api%2fv1/x",
            "/api%5Cv1",
            "/admin%252e%252e/x",
            "/admin/%zz",
            "/admin/%",
            "/admin/\u{7f}",
            "/style%00.css",
            "admin/x",
            "*",
            "",
            "example.com:443",
            "http://host\\/admin/",
        ] {
            assert_eq!(classify(path), Class::Ambiguous, "{path:?}");
        }
    }

    #[test]
    fn absolute_form_reads_the_path() {
        for (target, class) in [
            ("http://host/admin/", Class::Excluded),
            ("https://h:1/api/v1?q=/admin", Class::Api),
            ("http://h", Class::Web),
            ("http://h/", Class::Web),
            ("http://h?x", Class::Web),
            ("a+b.c-d://[::1]:9/x.css", Class::Excluded),
            ("1http://h/admin", Class::Ambiguous),
            ("http:/admin", Class::Ambiguous),
        ] {
            assert_eq!(classify(target), class, "{target}");
        }
    }

    #[test]
    fn the_extension_list_and_the_fast_match_agree() {
        for ext in STATIC_EXTENSIONS {
            let name = std::format!("file{ext}");
            assert!(is_static_extension(ext.as_bytes()), "{ext}");
            assert_eq!(
                classify_slow(std::format!("/x/{name};").as_bytes(), &PathRules::FESS),
                Class::Web
            );
            assert_eq!(
                classify_canonical(std::format!("/x/{name}").as_bytes(), &PathRules::FESS),
                Some(Class::Excluded)
            );
        }
        for name in ["/css", "/a.cs", "/a.css.map", "/a.css/", "/.css"] {
            assert_ne!(
                classify_canonical(name.as_bytes(), &PathRules::FESS),
                Some(Class::Excluded),
                "{name}"
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]

        /// Wherever the fast path answers, it answers what the general path does.
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
            for rules in [
                PathRules::FESS,
                PathRules::FESS.static_files(StaticFiles::Under(&["/a", "/x.css"])),
                PathRules::FESS.uncontrolled(&["/a", "/search/"]),
            ] {
                if let Some(fast) = classify_canonical(target.as_bytes(), &rules) {
                    proptest::prop_assert_eq!(
                        fast,
                        classify_slow(target.as_bytes(), &rules),
                        "{} {:?}", target, rules
                    );
                }
            }
        }
    }

    #[test]
    fn non_utf8_bytes_are_classified() {
        assert_eq!(PathRules::FESS.classify(b"/\xff\xfe.css"), Class::Excluded);
        assert_eq!(PathRules::FESS.classify(b"/api/\xff"), Class::Api);
    }

    #[test]
    fn static_prefixes_narrow_the_extension_rule() {
        let assets =
            PathRules::FESS.static_files(StaticFiles::Under(&["/css", "/assets/js/", "relative"]));
        for (target, class) in [
            ("/css/site.css", Class::Excluded),
            ("/css/a/b.png?v=1", Class::Excluded),
            ("/assets/js/app.js", Class::Excluded),
            ("/assets/js;v=1/app.js", Class::Web),
            ("/css;v=1/site.css", Class::Web),
            ("/css", Class::Web),
            ("/css.css", Class::Web),
            ("/cssx/site.css", Class::Web),
            ("/relative/a.css", Class::Web),
            ("/api/v1/documents/42.css", Class::Api),
            ("/api/v1/documents/42.woff2", Class::Api),
            ("http://host/css/site.css", Class::Excluded),
            ("/admin/x.css", Class::Excluded),
            ("/search%3F.css", Class::Ambiguous),
        ] {
            assert_eq!(assets.classify(target), class, "{target}");
        }
    }

    #[test]
    fn uncontrolled_paths_are_whole_segments_on_canonical_targets() {
        let rules = PathRules::FESS.uncontrolled(&["/metrics", "/health/live/", "/", "relative"]);
        for (target, class) in [
            ("/metrics", Class::Excluded),
            ("/metrics/", Class::Excluded),
            ("/metrics?name[]=up", Class::Excluded),
            ("/metrics/jvm", Class::Excluded),
            ("http://host/metrics", Class::Excluded),
            ("/health/live", Class::Excluded),
            ("/health/live/x", Class::Excluded),
            ("/health", Class::Web),
            ("/metricsx", Class::Web),
            ("/metrics.json", Class::Web),
            ("/relative", Class::Web),
            ("/", Class::Web),
            ("/search", Class::Web),
            ("/api/v1/metrics", Class::Api),
            // Spellings routers could read as another path stay controlled.
            ("/metrics/../search", Class::Ambiguous),
            ("/metrics/%2e%2e/api/v1/documents", Class::Ambiguous),
            ("/metrics;x", Class::Web),
            ("/metrics;x/../api/v1/documents", Class::Ambiguous),
            ("//metrics", Class::Ambiguous),
            ("/%6detrics", Class::Ambiguous),
        ] {
            assert_eq!(rules.classify(target), class, "{target}");
        }
        // No list: Fess's rule, exactly.
        assert_eq!(PathRules::FESS.classify("/metrics"), Class::Web);
    }
}
