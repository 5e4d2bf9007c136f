//! Which route answers what: the cluster's searches, the admin pages, the built-in pages
//! and static files.

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{CONTENT_SECURITY_POLICY, CONTENT_TYPE, HeaderValue};
use hyper::{Response, StatusCode};
use load_smol::Runtime;
use serde_json::json;

use super::{App, DASHBOARD_REFRESH};
use crate::dashboard::escape;
use crate::search::Search;

impl<R: Runtime + Default> App<R> {
    /// The answer to an admitted request: at once, or a search to run on the cluster
    /// (when there is one).
    pub(super) fn route<'a>(&'a self, path: &str, raw_query: &str) -> Routed<'a> {
        let decoded = segments(path);
        let segments: Vec<&str> = decoded.iter().map(String::as_str).collect();
        let parameter = |name: &str| {
            form_urlencoded::parse(raw_query.as_bytes())
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.into_owned())
        };
        let query = parameter("q").unwrap_or_default();
        let response = match (segments.as_slice(), &self.search) {
            ([] | ["search"], Some(search)) => {
                return Routed::Search {
                    search,
                    api: false,
                    query,
                };
            }
            (["api", "v1", "documents"], Some(search)) => {
                return Routed::Search {
                    search,
                    api: true,
                    query,
                };
            }
            (segments, _) => segments,
        };
        Routed::Ready(match response {
            [] | ["search"] => html(StatusCode::OK, &search_page(&query)),
            ["api", "v1", "documents"] => json_response(StatusCode::OK, &documents(&query)),
            ["api", ..] => json_response(
                StatusCode::NOT_FOUND,
                &json!({"response": {"status": 1, "message": "Not found."}}),
            ),
            ["admin", "stats"] => json_response(StatusCode::OK, &self.stats()),
            ["admin", "load"] => {
                // `?refresh=N` (0 to 3600 seconds; 0 stops it); anything else is the default.
                let refresh = parameter("refresh")
                    .and_then(|value| value.parse::<u32>().ok())
                    .filter(|seconds| *seconds <= 3600)
                    .unwrap_or(DASHBOARD_REFRESH);
                let mut response = html(StatusCode::OK, &self.dashboard(refresh));
                // The page is self-contained: no script, no external asset may load.
                for (name, value) in crate::dashboard::HEADERS {
                    response.headers_mut().insert(
                        hyper::header::HeaderName::from_static(name),
                        HeaderValue::from_static(value),
                    );
                }
                response
            }
            ["metrics"] => respond(
                StatusCode::OK,
                load_runtime::prometheus::CONTENT_TYPE,
                self.metrics().into(),
            ),
            ["admin", ..] => html(StatusCode::OK, &page("Administration", "<p>Dashboard.</p>")),
            ["login", ..] => html(StatusCode::OK, &page("Login", LOGIN_FORM)),
            ["error", ..] => html(
                StatusCode::OK,
                &page("Error", "<p>Something went wrong.</p>"),
            ),
            [.., last] => match static_file(last) {
                Some((content_type, body)) => respond(StatusCode::OK, content_type, body.into()),
                None => html(
                    StatusCode::NOT_FOUND,
                    &page("Not found", "<p>No such page.</p>"),
                ),
            },
        })
    }
}

/// An answer ready at once, or a search to run on the cluster.
pub(super) enum Routed<'a> {
    Ready(Response<Full<Bytes>>),
    Search {
        search: &'a Search,
        api: bool,
        query: String,
    },
}

pub(super) fn respond(
    status: StatusCode,
    content_type: &'static str,
    body: Bytes,
) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

pub(super) fn html(status: StatusCode, body: &str) -> Response<Full<Bytes>> {
    let mut response = respond(
        status,
        "text/html;charset=UTF-8",
        Bytes::copy_from_slice(body.as_bytes()),
    );
    // The pages run no script and load only this server's style sheet.
    response.headers_mut().insert(
        CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; script-src 'none'; object-src 'none'; base-uri 'none'; \
             frame-ancestors 'none'",
        ),
    );
    response
}

pub(super) fn json_response(
    status: StatusCode,
    value: &serde_json::Value,
) -> Response<Full<Bytes>> {
    respond(
        status,
        "application/json;charset=UTF-8",
        value.to_string().into(),
    )
}

/// The path's segments as the router reads them: split at `/`, `;params` dropped,
/// percent-escapes decoded, empty and `.` segments skipped, `..` resolved. Load control
/// classifies the raw target: where this reading and another router's could differ, the
/// target is ambiguous and answers to both thresholds.
#[must_use]
pub fn segments(path: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in path.split('/') {
        let name = raw.split(';').next().unwrap_or_default();
        let decoded = percent_encoding::percent_decode_str(name)
            .decode_utf8_lossy()
            .into_owned();
        match decoded.as_str() {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            _ => out.push(decoded),
        }
    }
    out
}

pub(super) fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"UTF-8\">\n<title>{title}</title>\n\
         <link rel=\"stylesheet\" href=\"/css/style.css\">\n</head>\n<body>\n<h1>{title}</h1>\n{body}\n</body>\n</html>\n"
    )
}

const LOGIN_FORM: &str = "<form method=\"post\" action=\"/login/\"><input name=\"user\"> \
<input name=\"password\" type=\"password\"> <button>Log in</button></form>";

/// The demo index: a few documents, matched by a substring of their title.
const DOCUMENTS: [(&str, &str); 4] = [
    (
        "Load control",
        "Rejecting requests while the search cluster is busy.",
    ),
    (
        "Adaptive load control",
        "Pausing crawling while this machine is busy.",
    ),
    ("Rate limiting", "Limiting requests per client address."),
    ("Crawling", "Fetching web pages and files for the index."),
];

fn matches(query: &str) -> impl Iterator<Item = &'static (&'static str, &'static str)> + '_ {
    let query = query.to_lowercase();
    DOCUMENTS.iter().filter(move |(title, text)| {
        query.is_empty()
            || title.to_lowercase().contains(&query)
            || text.to_lowercase().contains(&query)
    })
}

fn search_page(query: &str) -> String {
    let results: String = matches(query)
        .map(|(title, text)| format!("<li><b>{title}</b>: {text}</li>\n"))
        .collect();
    page(
        "Search",
        &format!(
            "<form action=\"/search\"><input name=\"q\" value=\"{}\"> <button>Search</button></form>\n<ul>\n{results}</ul>",
            escape(query)
        ),
    )
}

fn documents(query: &str) -> serde_json::Value {
    let docs: Vec<serde_json::Value> = matches(query)
        .map(|(title, text)| json!({"title": title, "content": text}))
        .collect();
    json!({"response": {"status": 0, "q": query, "record_count": docs.len(), "result": docs}})
}

/// A tiny 1x1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0D, 0x0A, 0x2D, 0xB4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
    0x42, 0x60, 0x82,
];

/// The content type and body of a static resource, by its file name.
fn static_file(name: &str) -> Option<(&'static str, &'static [u8])> {
    let extension = name.rsplit_once('.')?.1;
    let (content_type, body): (&str, &[u8]) = match extension {
        "css" => (
            "text/css;charset=UTF-8",
            b"body { font-family: sans-serif; }\n",
        ),
        "js" => (
            "text/javascript;charset=UTF-8",
            b"console.log(\"search\");\n",
        ),
        "png" => ("image/png", PNG),
        "jpg" => ("image/jpeg", &[0xFF, 0xD8, 0xFF, 0xD9]),
        "gif" => ("image/gif", b"GIF89a"),
        "ico" => ("image/x-icon", &[0, 0, 1, 0]),
        "svg" => (
            "image/svg+xml",
            b"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1\" height=\"1\"/>\n",
        ),
        "woff" => ("font/woff", b"wOFF"),
        "woff2" => ("font/woff2", b"wOF2"),
        "ttf" => ("font/ttf", &[0, 1, 0, 0]),
        "eot" => ("application/vnd.ms-fontobject", &[0; 4]),
        _ => return None,
    };
    Some((content_type, body))
}
