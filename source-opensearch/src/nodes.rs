//! The cluster's addresses behind one HTTP client: credentials, CA, a timeout over the
//! whole exchange, connections that never carry an answer out of step, and failover to the
//! next address after a failure. The cluster source and requests of your own share it.

use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use async_native_tls::TlsConnector;
use futures::future::{Either, select};
use load_core::node_stats::Limits;
use load_core::{
    ClusterConfig, SourceError,
    config::{ClusterUrls, NodeUrl},
    source::SourceErrorKind,
};
use surf::http::auth::BasicAuth;

use crate::OpenSearchOptions;
use crate::connections::Connections;

/// One address of the cluster.
#[derive(Clone)]
pub(crate) struct Endpoint {
    /// The address without credentials, ending in `/`.
    base: surf::Url,
    /// The address without its password, for log lines and errors.
    shown: String,
    /// The `Authorization` header's value, when credentials are set.
    authorization: Option<String>,
}

impl Endpoint {
    fn new(url: &NodeUrl, credentials: Option<&(String, String)>) -> Result<Endpoint, SourceError> {
        let shown = url.without_credentials().to_string();
        let base = url.without_credentials();
        let base = surf::Url::parse(&format!("{}/", base.as_str().trim_end_matches('/')))
            .map_err(|e| SourceError::new(SourceErrorKind::Connect, &format!("{shown}: {e}")))?;
        let credentials = match credentials {
            Some(credentials) => Some(credentials.clone()),
            None => url
                .credentials()
                .map(|(user, password)| (percent_decode(user), percent_decode(password))),
        };
        let authorization =
            credentials.map(|(user, password)| BasicAuth::new(user, password).value().to_string());
        Ok(Endpoint {
            base,
            shown,
            authorization,
        })
    }

    /// The address without credentials, ending in `/`: paths go below it.
    #[must_use]
    pub(crate) fn base(&self) -> &surf::Url {
        &self.base
    }

    /// The value of the `Authorization` header to send, when credentials are set. Never log
    /// it.
    #[cfg(test)]
    #[must_use]
    pub(crate) fn authorization(&self) -> Option<&str> {
        self.authorization.as_deref()
    }

    /// `request` with this endpoint's `Authorization` header, if any.
    #[must_use]
    pub(crate) fn authorize(&self, request: surf::RequestBuilder) -> surf::RequestBuilder {
        match &self.authorization {
            Some(authorization) => request.header("Authorization", authorization.as_str()),
            None => request,
        }
    }
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Endpoint")
            .field("url", &self.shown)
            .field("authenticated", &self.authorization.is_some())
            .finish()
    }
}

/// The cluster's addresses and one HTTP client (surf, TLS through OpenSSL) to reach them,
/// shared by reference between tasks.
///
/// - **Credentials** from [`OpenSearchOptions::credentials`] (or each address's own
///   userinfo) are sent in a header only, and never appear in this crate's log lines,
///   errors or `Debug` output.
/// - **One timeout** around the whole exchange: connecting, TLS, headers and body.
/// - **A connection carries one exchange at a time, and another only once its answer was
///   read to the end.** An exchange that is dropped (a caller that gave up), times out,
///   fails, or leaves any of its answer unread closes its connection, so no exchange can
///   ever read the late answer of another; an idle connection with a byte waiting in it is
///   closed rather than used.
/// - **Failover.** Exchanges go to one address until one fails (no answer, a timeout, a cut
///   body, an error status): the next exchange then goes to the next address, round robin.
/// - **No Nagle delay**: a request's head and body leave in two writes; with Nagle's
///   algorithm the body would wait ~40 ms for the ACK of the head.
pub(crate) struct ClusterNodes {
    client: surf::Client,
    endpoints: Vec<Endpoint>,
    current: AtomicUsize,
    timeout: Duration,
    max_body: usize,
}

impl ClusterNodes {
    /// The default timeout of a whole exchange.
    pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

    /// The cluster at `urls`, with `options`, keeping at most `per_host` connections to each
    /// address open at once (at least 1; more concurrent exchanges wait for one).
    ///
    /// # Errors
    ///
    /// [`SourceErrorKind::Connect`] for an address that is no HTTP(S) URL, or a CA file that
    /// cannot be read or parsed.
    pub(crate) fn new(
        urls: &ClusterUrls,
        options: &OpenSearchOptions,
        per_host: usize,
    ) -> Result<ClusterNodes, SourceError> {
        let endpoints = urls
            .iter()
            .map(|url| Endpoint::new(&url, options.credentials.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        let connections = Connections::new(
            endpoints.iter().map(|endpoint| &endpoint.base),
            per_host,
            tls_connector(options)?,
        );
        Ok(ClusterNodes {
            client: surf::Client::with_http_client(connections),
            endpoints,
            current: AtomicUsize::new(0),
            timeout: options.timeout.unwrap_or(Self::DEFAULT_TIMEOUT),
            max_body: options.max_body.unwrap_or(Limits::DEFAULT.max_body),
        })
    }

    /// The cluster of Fess's connection keys ([`ClusterConfig`]), with the options they
    /// give ([`OpenSearchOptions::from_config`]) and the timeout and body cap of `options`.
    ///
    /// # Errors
    ///
    /// A [`SourceErrorKind::Other`] naming `search_engine.http.url` when no address is set;
    /// else as [`ClusterNodes::new`].
    pub(crate) fn from_config(
        cluster: &ClusterConfig,
        per_host: usize,
    ) -> Result<ClusterNodes, SourceError> {
        let urls = cluster.urls.ok_or_else(|| {
            SourceError::new(
                SourceErrorKind::Other,
                "search_engine.http.url is not set: the cluster's address is needed",
            )
        })?;
        ClusterNodes::new(&urls, &OpenSearchOptions::from_config(cluster), per_host)
    }

    /// How many addresses it uses in turn.
    #[must_use]
    pub(crate) fn len(&self) -> usize {
        self.endpoints.len()
    }

    /// The index of the address the next exchange goes to.
    #[must_use]
    pub(crate) fn current(&self) -> usize {
        self.current.load(Ordering::Relaxed) % self.endpoints.len()
    }

    /// The address at `index` (modulo their number).
    #[must_use]
    pub(crate) fn endpoint(&self, index: usize) -> &Endpoint {
        &self.endpoints[index % self.endpoints.len()]
    }

    /// The largest body read.
    #[must_use]
    pub(crate) fn max_body(&self) -> usize {
        self.max_body
    }

    /// One exchange with the current address, bounded by the timeout (timed with `sleep`):
    /// `prepare` gets the client and the endpoint and returns the exchange, or an error of
    /// the caller's (a refused path: nothing was sent, and it does not count against the
    /// node). Returns which address answered, and what the exchange gave.
    ///
    /// The exchange's connection is used again only if the exchange read its answer's body
    /// to the end; dropping this future at any point closes it.
    ///
    /// # Errors
    ///
    /// The caller's error as it is; the exchange's, or [`SourceErrorKind::Timeout`], naming
    /// the address. Either of the latter moves the next exchange to the next address.
    pub(crate) async fn exchange<T, F, Z>(
        &self,
        sleep: &Z,
        prepare: impl FnOnce(surf::Client, &Endpoint) -> Result<F, SourceError>,
    ) -> Result<(usize, T), SourceError>
    where
        F: Future<Output = Result<T, SourceError>>,
        Z: load_core::time::Sleep,
    {
        let index = self.current();
        let endpoint = &self.endpoints[index];
        let exchange = prepare(self.client.clone(), endpoint).map_err(|e| e.at(&endpoint.shown))?;
        match within(sleep, self.timeout, exchange).await {
            Ok(value) => Ok((index, value)),
            Err(error) => {
                // Exchanges that fail together move on once, not once each.
                let _ = self.current.compare_exchange(
                    index,
                    (index + 1) % self.endpoints.len(),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
                Err(error.at(&endpoint.shown))
            }
        }
    }
}

impl fmt::Debug for ClusterNodes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let urls: Vec<&str> = self.endpoints.iter().map(|e| e.shown.as_str()).collect();
        f.debug_struct("ClusterNodes")
            .field("urls", &urls)
            .field("next", &self.current())
            .field(
                "authenticated",
                &self.endpoints.iter().any(|e| e.authorization.is_some()),
            )
            .field("timeout", &self.timeout)
            .field("max_body", &self.max_body)
            .finish()
    }
}

/// The TLS settings for `https` addresses: the system's roots, and the extra CA of
/// `options` if any.
fn tls_connector(options: &OpenSearchOptions) -> Result<TlsConnector, SourceError> {
    let connector = TlsConnector::new();
    let Some(path) = &options.ca_certificate else {
        return Ok(connector);
    };
    let pem = std::fs::read(path).map_err(|e| {
        SourceError::new(
            SourceErrorKind::Connect,
            &format!("cannot read CA certificate {}: {e}", path.display()),
        )
    })?;
    let certificate = async_native_tls::Certificate::from_pem(&pem).map_err(|e| {
        SourceError::new(
            SourceErrorKind::Connect,
            &format!("invalid CA certificate {}: {e}", path.display()),
        )
    })?;
    Ok(connector.add_root_certificate(certificate))
}

/// `work`, or a [`SourceErrorKind::Timeout`] when it takes longer than `timeout` on `sleep`.
async fn within<T, Z: load_core::time::Sleep>(
    sleep: &Z,
    timeout: Duration,
    work: impl Future<Output = Result<T, SourceError>>,
) -> Result<T, SourceError> {
    let work = std::pin::pin!(work);
    let timer = std::pin::pin!(sleep.sleep(timeout));
    match select(work, timer).await {
        Either::Left((outcome, _)) => outcome,
        Either::Right(_) => Err(SourceError::new(
            SourceErrorKind::Timeout,
            &format!("no complete answer within {timeout:?}"),
        )),
    }
}

/// `%XX` escapes of the URL's userinfo, decoded (invalid ones kept as written).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let decoded = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok());
        match decoded {
            Some(b) => {
                out.push(b);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_is_decoded_and_never_shown() {
        assert_eq!(percent_decode("p%40ss%3Aw%zz"), "p@ss:w%zz");
        let urls =
            ClusterUrls::parse("https://admin:s%40cret@search.example:9200/prefix/").unwrap();
        let nodes = ClusterNodes::new(&urls, &OpenSearchOptions::new(), 1).unwrap();
        let endpoint = nodes.endpoint(0);
        assert_eq!(
            endpoint.base().as_str(),
            "https://search.example:9200/prefix/"
        );
        for shown in [format!("{nodes:?}"), format!("{endpoint:?}")] {
            assert!(
                !shown.contains("s%40cret") && !shown.contains("s@cret"),
                "{shown}"
            );
        }
        assert_eq!(
            endpoint.authorization(),
            Some(BasicAuth::new("admin", "s@cret").value().as_str())
        );
        let options = OpenSearchOptions::new().credentials("u", "hunter2");
        assert!(!format!("{options:?}").contains("hunter2"));
    }

    #[test]
    fn a_missing_ca_file_is_a_clear_error() {
        let urls = ClusterUrls::parse("https://h:9200").unwrap();
        let error = ClusterNodes::new(
            &urls,
            &OpenSearchOptions::new().ca_certificate("/nonexistent/ca.pem"),
            1,
        )
        .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("cannot read CA certificate /nonexistent/ca.pem"),
            "{error}"
        );
    }
}
