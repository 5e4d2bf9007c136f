//! Requests of your own to the cluster the source polls: the same addresses, credentials,
//! CA, timeout, connection rules and failover ([`ClusterNodes`]), with no HTTP client's
//! types in its signatures.

use std::fmt;

use load_core::{ClusterConfig, SourceError, config::ClusterUrls, source::SourceErrorKind};

use crate::body::read_body;
use crate::errors::{describe_error_body, send_error};
use crate::nodes::ClusterNodes;
use crate::{IoTimer, OpenSearchOptions};

/// The methods a request to the cluster can use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Method {
    /// `GET`
    Get,
    /// `HEAD`: the answer's body is never read, whatever `Content-Length` says.
    Head,
    /// `POST`
    Post,
    /// `PUT`
    Put,
    /// `DELETE`
    Delete,
}

impl Method {
    /// The method's name, as sent.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
        }
    }

    fn to_surf(self) -> surf::http::Method {
        match self {
            Method::Get => surf::http::Method::Get,
            Method::Head => surf::http::Method::Head,
            Method::Post => surf::http::Method::Post,
            Method::Put => surf::http::Method::Put,
            Method::Delete => surf::http::Method::Delete,
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A cluster's answer to [`ClusterClient::request`]: any status, with its body.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClusterResponse {
    /// The HTTP status.
    pub status: u16,
    /// The body, at most the client's body cap ([`OpenSearchOptions::max_body`]).
    pub body: Vec<u8>,
    /// Which of the cluster's addresses answered, as an index into its list.
    pub endpoint: usize,
}

impl ClusterResponse {
    /// Whether the status is 2xx.
    #[must_use]
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The error in the body (`type: reason` of an OpenSearch error, else its first line,
    /// else the status's name), for a response that is not a success.
    #[must_use]
    pub fn error_summary(&self) -> String {
        let reason = surf::StatusCode::try_from(self.status)
            .map_or("unknown status", |status| status.canonical_reason());
        describe_error_body(&self.body, reason)
    }
}

/// Requests of your own to the cluster (searches, mappings, `_bulk`), shared by reference
/// between tasks; [`crate::OpenSearchSource`] polls through the same machinery.
///
/// - Requests go to one address until a request to it fails (no answer, a timeout, a cut
///   body): the next request then goes to the next address. An error status is an answer,
///   not a failure: it is returned for the caller to judge.
/// - One timeout covers the whole exchange (connecting, TLS, headers and body); a body over
///   the cap is an error, never buffered whole.
/// - A connection carries another request only once its answer was read to the end: a
///   request that is dropped, times out or fails closes its connection, so no request ever
///   reads another's late answer.
/// - Credentials go in a header only, never in a log line, an error or `Debug`.
///
/// ```no_run
/// use load_core::config::ClusterUrls;
/// use load_opensearch::{ClusterClient, Method, OpenSearchOptions};
/// # async fn f() -> Result<(), load_core::SourceError> {
/// let urls = ClusterUrls::parse("http://127.0.0.1:9200").expect("an address");
/// let client = ClusterClient::cluster(&urls, &OpenSearchOptions::new())?;
/// let query = br#"{"query":{"match":{"title":"rust"}}}"#;
/// let answer = client.request(Method::Post, "/docs/_search", Some(query)).await?;
/// if !answer.is_success() {
///     eprintln!("search refused: {}", answer.error_summary());
/// }
/// # Ok(()) }
/// ```
pub struct ClusterClient {
    nodes: ClusterNodes,
}

impl ClusterClient {
    /// Connections kept to each address by default.
    pub const DEFAULT_CONNECTIONS: usize = 16;

    /// A client of the cluster at `urls`, with `options` and at most
    /// [`ClusterClient::DEFAULT_CONNECTIONS`] connections to each address.
    ///
    /// # Errors
    ///
    /// [`SourceErrorKind::Connect`] for an address that is no HTTP(S) URL, or a CA file
    /// that cannot be read or parsed.
    pub fn cluster(
        urls: &ClusterUrls,
        options: &OpenSearchOptions,
    ) -> Result<ClusterClient, SourceError> {
        Self::with_connections(urls, options, Self::DEFAULT_CONNECTIONS)
    }

    /// [`ClusterClient::cluster`] with at most `per_host` connections to each address (at
    /// least 1; more concurrent requests wait for one).
    ///
    /// # Errors
    ///
    /// As [`ClusterClient::cluster`].
    pub fn with_connections(
        urls: &ClusterUrls,
        options: &OpenSearchOptions,
        per_host: usize,
    ) -> Result<ClusterClient, SourceError> {
        Ok(ClusterClient {
            nodes: ClusterNodes::new(urls, options, per_host)?,
        })
    }

    /// A client for Fess's connection keys ([`ClusterConfig`]).
    ///
    /// # Errors
    ///
    /// [`SourceErrorKind::Other`] naming `search_engine.http.url` when no address is set;
    /// else as [`ClusterClient::cluster`].
    pub fn from_config(cluster: &ClusterConfig) -> Result<ClusterClient, SourceError> {
        Ok(ClusterClient {
            nodes: ClusterNodes::from_config(cluster, Self::DEFAULT_CONNECTIONS)?,
        })
    }

    /// Sends `method path` with `json` as an `application/json` body (OpenSearch takes
    /// `_bulk`'s newline-delimited JSON under that type too), bounded by the timeout.
    /// `path` starts with `/`, may carry a query, and is taken below the address's own
    /// path; one that would leave the address (another host, `..` above its path, a
    /// backslash) is refused before anything is sent.
    ///
    /// # Errors
    ///
    /// [`SourceErrorKind::Other`] for a path that would leave the address. The request
    /// could not be sent or no whole answer came in time ([`SourceErrorKind::Connect`],
    /// [`SourceErrorKind::Io`], [`SourceErrorKind::Timeout`]), or its body is over the cap
    /// ([`SourceErrorKind::Body`]); each names the address without credentials. Any status
    /// is an answer.
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        json: Option<&[u8]>,
    ) -> Result<ClusterResponse, SourceError> {
        let max_body = self.nodes.max_body();
        let (endpoint, (status, body)) = self
            .nodes
            .exchange(&IoTimer, |client, endpoint| {
                // A refused path is the caller's mistake, not the node's: nothing is sent
                // and the pool stays.
                let url = url_on(endpoint.base(), path)?;
                let mut request =
                    endpoint.authorize(surf::RequestBuilder::new(method.to_surf(), url));
                if let Some(json) = json {
                    request = request
                        .body(surf::Body::from_bytes(json.to_vec()))
                        .content_type(surf::http::mime::JSON);
                }
                Ok(async move {
                    let mut response = client.send(request).await.map_err(|e| send_error(&e))?;
                    let status = response.status() as u16;
                    if method == Method::Head {
                        // No body follows, whatever `Content-Length` says: reading one
                        // would wait for bytes that never come.
                        return Ok((status, Vec::new()));
                    }
                    Ok((status, read_body(&mut response, max_body).await?))
                })
            })
            .await?;
        Ok(ClusterResponse {
            status,
            body,
            endpoint,
        })
    }

    /// How many addresses it uses in turn.
    #[must_use]
    pub fn endpoints(&self) -> usize {
        self.nodes.len()
    }
}

impl fmt::Debug for ClusterClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusterClient")
            .field("nodes", &self.nodes)
            .finish()
    }
}

/// `path` on the address `base`, refused when it would leave it: another host (a path that
/// parses as a URL of its own, `\\host`), or above `base`'s own path (`..`). The request,
/// and its `Authorization` header, only ever go to the cluster.
fn url_on(base: &surf::Url, path: &str) -> Result<surf::Url, SourceError> {
    let refuse =
        |why: &str| SourceError::new(SourceErrorKind::Other, &format!("the path {path:?} {why}"));
    if !path.starts_with('/') {
        return Err(refuse("does not start with '/'"));
    }
    if path.contains('\\') {
        return Err(refuse("has a backslash"));
    }
    let url = surf::Url::parse(&format!("{}{path}", base.as_str().trim_end_matches('/')))
        .map_err(|e| refuse(&format!("is not a path: {e}")))?;
    if url.origin() != base.origin() || !url.path().starts_with(base.path()) {
        return Err(refuse("leaves the cluster's address"));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_are_sent_by_their_names() {
        for method in [
            Method::Get,
            Method::Head,
            Method::Post,
            Method::Put,
            Method::Delete,
        ] {
            assert_eq!(method.to_surf().to_string(), method.as_str());
            assert_eq!(method.to_string(), method.as_str());
        }
    }

    #[test]
    fn a_path_never_leaves_the_address() {
        let base = surf::Url::parse("http://node:9200/prefix/").unwrap();
        assert_eq!(
            url_on(&base, "/docs/_search?size=1").unwrap().as_str(),
            "http://node:9200/prefix/docs/_search?size=1"
        );
        for path in [
            "docs",
            "/..\\x",
            "/../admin",
            "/a/../../admin",
            "\\\\evil/x",
        ] {
            assert!(url_on(&base, path).is_err(), "{path}");
        }
    }
}
