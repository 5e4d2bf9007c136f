//! Search and indexing on a real cluster, as Fess does them: a match query for 10 hits with
//! a highlighted fragment, and `_bulk` indexing of the crawler's documents into an index
//! created with its mapping when missing. Requests go through
//! [`load_opensearch::ClusterClient`], the HTTP stack and settings the monitor polls with.

use std::fmt;
use std::time::Duration;

use load_smol::SourceError;

use load_opensearch::{ClusterClient, Method};
use serde_json::{Value, json};

use crate::corpus::Document;

/// The index the demo searches and the crawler fills, by default.
pub const DEFAULT_INDEX: &str = "load-control-demo";

/// Hits per search, as Fess's default page.
pub const PAGE_SIZE: usize = 10;

/// Marks around highlighted words in fragments: private-use characters, which escaping
/// leaves alone (control characters would not do: the highlighter trims them off a
/// fragment's end, as Java's `String::trim` does).
const MARK_START: &str = "\u{E000}";
const MARK_END: &str = "\u{E001}";

/// What went wrong with a request to the cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SearchError {
    /// No answer: the cluster could not be reached or did not answer in time (503).
    Unavailable(String),
    /// The cluster answered with an error status (502).
    Status {
        /// The cluster's status.
        status: u16,
        /// Its error, in a few words.
        reason: String,
    },
    /// The answer could not be read (502).
    Unreadable(String),
}

impl SearchError {
    /// The status the front end answers with: 503 when the cluster is out of reach or
    /// says it is busy (429, 503), 502 when it answered wrongly.
    #[must_use]
    pub fn http_status(&self) -> u16 {
        match self {
            // The cluster's own overload answers: come back later.
            SearchError::Unavailable(_)
            | SearchError::Status {
                status: 429 | 503, ..
            } => 503,
            SearchError::Status { .. } | SearchError::Unreadable(_) => 502,
        }
    }
}

impl fmt::Display for SearchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SearchError::Unavailable(cause) => {
                write!(f, "the search engine is unavailable ({cause})")
            }
            SearchError::Status { status, reason } => {
                write!(f, "the search engine answered HTTP {status}: {reason}")
            }
            SearchError::Unreadable(cause) => {
                write!(f, "the search engine's answer could not be read: {cause}")
            }
        }
    }
}

impl std::error::Error for SearchError {}

impl From<SourceError> for SearchError {
    fn from(error: SourceError) -> Self {
        match error.kind() {
            load_smol::source::SourceErrorKind::Body(_)
            | load_smol::source::SourceErrorKind::Protocol => {
                SearchError::Unreadable(error.to_string())
            }
            _ => SearchError::Unavailable(error.to_string()),
        }
    }
}

/// One hit.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// The document's id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its address.
    pub url: String,
    /// Its score.
    pub score: f64,
    /// A fragment of its content with the matched words between [`Hits::fragment_html`]'s
    /// marks.
    fragment: String,
}

impl Hit {
    /// The fragment as text, without marks.
    #[must_use]
    pub fn fragment(&self) -> String {
        self.fragment.replace(['\u{E000}', '\u{E001}'], "")
    }

    /// The fragment as HTML: escaped, with the matched words in `<em>`.
    #[must_use]
    pub fn fragment_html(&self) -> String {
        // Marks a document itself contains could pair up wrongly: only a start followed by
        // its end becomes an `<em>`; any other mark is dropped.
        let mut html = String::with_capacity(self.fragment.len() + 16);
        let mut open = false;
        for piece in
            crate::dashboard::escape(&self.fragment).split_inclusive(['\u{E000}', '\u{E001}'])
        {
            let (text, mark) = match piece.char_indices().last() {
                Some((at, c @ ('\u{E000}' | '\u{E001}'))) => (&piece[..at], Some(c)),
                _ => (piece, None),
            };
            html.push_str(text);
            match (mark, open) {
                (Some('\u{E000}'), false) => {
                    html.push_str("<em>");
                    open = true;
                }
                (Some('\u{E001}'), true) => {
                    html.push_str("</em>");
                    open = false;
                }
                _ => {}
            }
        }
        if open {
            html.push_str("</em>");
        }
        html
    }
}

/// A page of hits.
#[derive(Clone, Debug, PartialEq)]
pub struct Hits {
    /// Documents that match (a lower bound past 10,000, as OpenSearch counts).
    pub total: u64,
    /// The time the cluster spent, in milliseconds.
    pub took_ms: u64,
    /// The best [`PAGE_SIZE`] hits.
    pub hits: Vec<Hit>,
}

/// The demo's search and indexing on one index of the cluster.
#[derive(Debug)]
pub struct Search {
    client: ClusterClient,
    index: String,
}

/// Whether `name` is an index name OpenSearch accepts: 1 to 255 bytes of lower-case
/// letters, digits, `-`, `_` and `.`, not starting with `-`, `_` or `+`, nor `.` or `..`.
#[must_use]
pub fn valid_index(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && name != "."
        && name != ".."
        && !name.starts_with(['-', '_', '+'])
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b))
}

impl Search {
    /// Search and indexing on `index` through `client`.
    ///
    /// # Panics
    ///
    /// When `index` is no valid index name (see [`valid_index`]; the command line checks).
    #[must_use]
    pub fn new(client: ClusterClient, index: &str) -> Search {
        assert!(valid_index(index), "invalid index name {index:?}");
        Search {
            client,
            index: index.to_owned(),
        }
    }

    /// The index name.
    #[must_use]
    pub fn index(&self) -> &str {
        &self.index
    }

    /// Creates the index with its mapping if it does not exist; whether it created it.
    ///
    /// # Errors
    ///
    /// The cluster is out of reach or refuses.
    pub async fn ensure_index(&self) -> Result<bool, SearchError> {
        let path = format!("/{}", self.index);
        let head = self.client.request(Method::Head, &path, None).await?;
        match head.status {
            200 => return Ok(false),
            404 => {}
            status => {
                return Err(SearchError::Status {
                    status,
                    reason: head.error_summary(),
                });
            }
        }
        let mapping = json!({
            "settings": {"number_of_shards": 1, "number_of_replicas": 0},
            "mappings": {"properties": {
                "title": {"type": "text"},
                "content": {"type": "text"},
                "url": {"type": "keyword"},
            }},
        });
        let created = self
            .client
            .request(Method::Put, &path, Some(mapping.to_string().as_bytes()))
            .await?;
        if created.is_success() {
            return Ok(true);
        }
        // Another front end created it meanwhile: fine.
        if created.status == 400 && created.error_summary().contains("already_exists") {
            return Ok(false);
        }
        Err(SearchError::Status {
            status: created.status,
            reason: created.error_summary(),
        })
    }

    /// Indexes `documents` in one `_bulk` request; how many were indexed.
    ///
    /// # Errors
    ///
    /// The cluster is out of reach, or refused the request or any document.
    pub async fn index_documents(&self, documents: &[Document]) -> Result<usize, SearchError> {
        let mut body = String::new();
        for doc in documents {
            body.push_str(
                &json!({"index": {"_index": self.index, "_id": doc.id.to_string()}}).to_string(),
            );
            body.push('\n');
            body.push_str(
                &json!({"title": doc.title, "content": doc.content, "url": doc.url}).to_string(),
            );
            body.push('\n');
        }
        let answer = self
            .client
            .request(Method::Post, "/_bulk", Some(body.as_bytes()))
            .await?;
        if !answer.is_success() {
            return Err(SearchError::Status {
                status: answer.status,
                reason: answer.error_summary(),
            });
        }
        let result: Value = serde_json::from_slice(&answer.body)
            .map_err(|e| SearchError::Unreadable(format!("_bulk: {e}")))?;
        let items = result["items"].as_array().map_or(0, Vec::len);
        if result["errors"] == true {
            let first = result["items"]
                .as_array()
                .into_iter()
                .flatten()
                .find_map(|item| item["index"]["error"]["reason"].as_str())
                .unwrap_or("unknown");
            return Err(SearchError::Status {
                status: 200,
                reason: format!("some documents were refused: {first}"),
            });
        }
        Ok(items)
    }

    /// The best [`PAGE_SIZE`] documents for `query`.
    ///
    /// # Errors
    ///
    /// The cluster is out of reach, answers an error, or its answer is unreadable.
    pub async fn search(&self, query: &str) -> Result<Hits, SearchError> {
        let body = json!({
            "size": PAGE_SIZE,
            "query": {"multi_match": {"query": query, "fields": ["title^2", "content"]}},
            "_source": ["title", "url"],
            "highlight": {
                "pre_tags": [MARK_START], "post_tags": [MARK_END],
                "fields": {"content": {"fragment_size": 160, "number_of_fragments": 1}},
            },
        });
        let path = format!("/{}/_search", self.index);
        let answer = self
            .client
            .request(Method::Post, &path, Some(body.to_string().as_bytes()))
            .await?;
        if !answer.is_success() {
            return Err(SearchError::Status {
                status: answer.status,
                reason: answer.error_summary(),
            });
        }
        parse_hits(&answer.body)
    }
}

/// The hits of a `_search` answer.
///
/// # Errors
///
/// [`SearchError::Unreadable`] when it is no search answer.
pub fn parse_hits(body: &[u8]) -> Result<Hits, SearchError> {
    let value: Value =
        serde_json::from_slice(body).map_err(|e| SearchError::Unreadable(e.to_string()))?;
    let hits = value["hits"]["hits"]
        .as_array()
        .ok_or_else(|| SearchError::Unreadable("no hits.hits in the answer".to_owned()))?;
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    Ok(Hits {
        total: value["hits"]["total"]["value"].as_u64().unwrap_or(0),
        took_ms: value["took"].as_u64().unwrap_or(0),
        hits: hits
            .iter()
            .map(|hit| Hit {
                id: text(&hit["_id"]),
                title: text(&hit["_source"]["title"]),
                url: text(&hit["_source"]["url"]),
                score: hit["_score"].as_f64().unwrap_or(0.0),
                fragment: text(&hit["highlight"]["content"][0]),
            })
            .collect(),
    })
}

/// How long the crawler waits after an indexing failure before the next try.
pub const RETRY_PAUSE: Duration = Duration::from_secs(1);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_are_read_and_fragments_escaped() {
        let body = br#"{"took":3,"hits":{"total":{"value":42,"relation":"eq"},"hits":[
            {"_id":"7","_score":1.5,"_source":{"title":"kalo <b>","url":"https://docs.example/x/7.html"},
             "highlight":{"content":["a \ue000kalo\ue001 & <script> \ue000cut"]}}]}}"#;
        let hits = parse_hits(body).expect("hits");
        assert_eq!((hits.total, hits.took_ms, hits.hits.len()), (42, 3, 1));
        let hit = &hits.hits[0];
        assert_eq!((hit.id.as_str(), hit.score), ("7", 1.5));
        assert_eq!(
            hit.fragment_html(),
            "a <em>kalo</em> &amp; &lt;script&gt; <em>cut</em>"
        );
        assert_eq!(hit.fragment(), "a kalo & <script> cut");
        let stray = Hit {
            fragment: "\u{E001}x\u{E000}\u{E000}y".to_owned(),
            ..hit.clone()
        };
        assert_eq!(stray.fragment_html(), "x<em>y</em>");
    }

    #[test]
    fn unreadable_answers_are_errors() {
        for body in [&b"not json"[..], br#"{"hits":{}}"#, b"[]"] {
            let error = parse_hits(body).expect_err("unreadable");
            assert_eq!(error.http_status(), 502, "{error}");
        }
    }

    #[test]
    fn index_names() {
        for good in ["load-control-demo", "docs", "a.b_c-1"] {
            assert!(valid_index(good), "{good}");
        }
        for bad in ["", "Docs", "-x", "_x", "+x", ".", "..", "a b", "a/b", "a*"] {
            assert!(!valid_index(bad), "{bad}");
        }
    }
}
