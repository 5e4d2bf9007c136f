//! `OpenSearchSource`: the cluster's busiest node, polled over HTTP(S) with surf.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::{Either, select};
use futures::io::AsyncReadExt;
use surf::http::auth::BasicAuth;

use super::IoTimer;
use crate::opensearch::{Limits, NODE_STATS_PATH, ParseError, parse_node_stats_with};
use crate::{ClusterUrls, Config, CpuSample, CpuSource, SourceError, SourceErrorKind, Url};

/// How to reach a cluster, beyond its address.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct OpenSearchOptions {
    /// Limit on the whole exchange: connecting, TLS, headers and body. Default 10 s.
    pub timeout: Option<Duration>,
    /// A PEM file with an extra CA certificate to trust (clusters often use their own CA).
    pub ca_certificate: Option<PathBuf>,
    /// User and password for basic auth; they override any in the URL.
    pub credentials: Option<(String, String)>,
    /// Largest body read; a longer one is cut off and reported. Default 1 MiB.
    pub max_body: Option<usize>,
}

impl fmt::Debug for OpenSearchOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenSearchOptions")
            .field("timeout", &self.timeout)
            .field("ca_certificate", &self.ca_certificate)
            .field(
                "credentials",
                &self.credentials.as_ref().map(|(user, _)| (user, "***")),
            )
            .field("max_body", &self.max_body)
            .finish()
    }
}

impl OpenSearchOptions {
    /// The default options.
    #[must_use]
    pub fn new() -> OpenSearchOptions {
        OpenSearchOptions::default()
    }

    /// The options Fess's keys give: basic auth from `search_engine.username` and
    /// `search_engine.password` when both are set, the CA file of
    /// `search_engine.http.ssl.certificate_authorities`, default timeout and body cap.
    #[must_use]
    pub fn from_config(config: &Config) -> OpenSearchOptions {
        OpenSearchOptions {
            credentials: config
                .credentials()
                .map(|(user, password)| (user.to_owned(), password.expose().to_owned())),
            ca_certificate: config
                .certificate_authorities
                .as_ref()
                .map(|path| PathBuf::from(path.as_str())),
            ..OpenSearchOptions::default()
        }
    }

    /// Sets the timeout of the whole exchange.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Trusts the CA certificate in this PEM file too.
    #[must_use]
    pub fn ca_certificate(mut self, pem: impl Into<PathBuf>) -> Self {
        self.ca_certificate = Some(pem.into());
        self
    }

    /// Uses these basic-auth credentials.
    #[must_use]
    pub fn credentials(mut self, user: impl Into<String>, password: impl Into<String>) -> Self {
        self.credentials = Some((user.into(), password.into()));
        self
    }

    /// Sets the largest body read.
    #[must_use]
    pub fn max_body(mut self, bytes: usize) -> Self {
        self.max_body = Some(bytes);
        self
    }
}

/// Polls `GET {url}/_nodes/stats/os?filter_path=_nodes,nodes.*.os.cpu.percent` and reads
/// the busiest node's CPU with the core parser.
///
/// - `http://` and `https://` (TLS through the system's OpenSSL); trust an extra CA with
///   [`OpenSearchOptions::ca_certificate`].
/// - Basic auth from the URL's userinfo (`https://user:pass@host:9200`) or
///   [`OpenSearchOptions::credentials`]. The credentials are sent in a header only, and never
///   appear in this crate's log lines, errors or `Debug` output. **One exception outside
///   this crate:** surf's HTTP/1 client (async-h1) logs every request it sends, headers and
///   so the `Authorization` header included, at `TRACE` under the target `async_h1`. Keep
///   that target below `TRACE` in your logger (with env_logger: `RUST_LOG=trace,async_h1=debug`).
/// - One timeout around the whole exchange (surf's own stops at the headers).
/// - Several addresses ([`OpenSearchSource::cluster`], Fess's comma-separated
///   `search_engine.http.url`): each poll goes to one of them (any node answers for the
///   whole cluster); after a failed poll the next goes to the next address, round robin,
///   so one dead coordinating node does not blind the monitor. Each error names the
///   address it came from (without its password), and each sample says which answered
///   ([`CpuSample::endpoint`]).
/// - A non-2xx status is an error naming the status and the first line of the body; a
///   `200` with failed nodes is a success whose sample records how many failed.
///
/// ```no_run
/// use load_core::{CpuSource, OpenSearchSource, Url};
/// # async fn f() -> Result<(), load_core::SourceError> {
/// let url = Url::parse("https://admin:secret@search.example:9200").expect("url");
/// let mut source = OpenSearchSource::new(&url)?;
/// let sample = source.sample().await?;
/// println!("busiest node: {:?}", sample.cpu);
/// # Ok(()) }
/// ```
pub struct OpenSearchSource<Z = IoTimer> {
    client: surf::Client,
    /// What `client` was built from: a failed exchange replaces the client (and with it the
    /// connection pool) by a fresh one built from this.
    config: surf::Config,
    endpoints: Vec<Endpoint>,
    /// The endpoint the next poll goes to.
    current: usize,
    timeout: Duration,
    max_body: usize,
    /// Times the timeout.
    sleep: Z,
}

/// One address of the cluster.
struct Endpoint {
    /// The address without credentials, ending in `/`.
    base: surf::Url,
    stats_url: surf::Url,
    /// The address without its password, for log lines and errors.
    shown: String,
    authorization: Option<String>,
}

/// How much of an error body is read to describe it.
const ERROR_BODY_PREFIX: usize = 4096;

impl OpenSearchSource {
    /// The default timeout of a whole exchange.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

    /// A source for the cluster at `url`, with default options.
    ///
    /// # Errors
    ///
    /// As [`OpenSearchSource::with_options`].
    pub fn new(url: &Url) -> Result<OpenSearchSource, SourceError> {
        OpenSearchSource::with_options(url, OpenSearchOptions::default())
    }

    /// A source for the cluster at `url`.
    ///
    /// # Errors
    ///
    /// [`SourceErrorKind::Connect`] when the URL cannot be used or the CA certificate file
    /// cannot be read or parsed.
    pub fn with_options(
        url: &Url,
        options: OpenSearchOptions,
    ) -> Result<OpenSearchSource, SourceError> {
        OpenSearchSource::cluster(&ClusterUrls::from(*url), options)
    }

    /// A source for the cluster at these addresses, polled one at a time, the next after a
    /// failure. Credentials in `options` are used for every address; else each address's
    /// own userinfo, if any.
    ///
    /// # Errors
    ///
    /// As [`OpenSearchSource::with_options`].
    pub fn cluster(
        urls: &ClusterUrls,
        options: OpenSearchOptions,
    ) -> Result<OpenSearchSource, SourceError> {
        let endpoints = urls
            .iter()
            .map(|url| Endpoint::new(&url, options.credentials.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        let config = surf_config(&options, 2)?;
        Ok(OpenSearchSource {
            client: client(&config),
            config,
            endpoints,
            current: 0,
            timeout: options.timeout.unwrap_or(Self::DEFAULT_TIMEOUT),
            max_body: options.max_body.unwrap_or(Limits::DEFAULT.max_body),
            sleep: IoTimer,
        })
    }

    /// A source for `config`'s `search_engine.http.url`, with the options of its keys
    /// ([`OpenSearchOptions::from_config`]).
    ///
    /// # Errors
    ///
    /// [`SourceErrorKind::Other`] when no address is set; else as
    /// [`OpenSearchSource::with_options`].
    pub fn from_config(config: &Config) -> Result<OpenSearchSource, SourceError> {
        let urls = configured_urls(config)?;
        OpenSearchSource::cluster(&urls, OpenSearchOptions::from_config(config))
    }
}

impl<Z> OpenSearchSource<Z> {
    /// The same source, timing its timeout with `sleep` (a runtime's [`crate::Sleep`])
    /// instead of [`IoTimer`].
    #[must_use]
    pub fn with_sleep<S: crate::Sleep>(self, sleep: S) -> OpenSearchSource<S> {
        OpenSearchSource {
            client: self.client,
            config: self.config,
            endpoints: self.endpoints,
            current: self.current,
            timeout: self.timeout,
            max_body: self.max_body,
            sleep,
        }
    }

    /// The URL the next poll goes to, without credentials.
    #[must_use]
    pub fn stats_url(&self) -> &str {
        self.endpoints[self.current].stats_url.as_str()
    }

    /// How many addresses it polls in turn.
    #[must_use]
    pub fn endpoints(&self) -> usize {
        self.endpoints.len()
    }

    async fn fetch(&self, endpoint: &Endpoint) -> Result<CpuSample, SourceError> {
        let mut request = self.client.get(endpoint.stats_url.clone());
        if let Some(authorization) = &endpoint.authorization {
            request = request.header("Authorization", authorization.as_str());
        }
        let mut response = request.await.map_err(|e| connect_error(&e))?;
        let status = response.status();
        if !status.is_success() {
            let body = read_capped(&mut response, ERROR_BODY_PREFIX)
                .await
                .unwrap_or_default();
            return Err(SourceError::new(
                SourceErrorKind::Status(status as u16),
                &describe_error_body(&body, status.canonical_reason()),
            ));
        }
        let body = read_body(&mut response, self.max_body).await?;
        let stats =
            parse_node_stats_with(&body, Limits::new(self.max_body, Limits::DEFAULT.max_depth))?;
        Ok(CpuSample::cluster(&stats).from_endpoint(u8::try_from(self.current).unwrap_or(u8::MAX)))
    }
}

impl Endpoint {
    fn new(url: &Url, credentials: Option<&(String, String)>) -> Result<Endpoint, SourceError> {
        let shown = url.to_string();
        let base = url.without_credentials();
        let stats_url = surf::Url::parse(&format!(
            "{}{NODE_STATS_PATH}",
            base.as_str().trim_end_matches('/')
        ))
        .map_err(|e| SourceError::new(SourceErrorKind::Connect, &format!("{shown}: {e}")))?;
        let credentials = match credentials {
            Some(credentials) => Some(credentials.clone()),
            None => url
                .credentials()
                .map(|(user, password)| (percent_decode(user), percent_decode(password))),
        };
        let authorization = credentials.map(|(user, password)| {
            let auth = BasicAuth::new(user, password);
            auth.value().to_string()
        });
        let base = surf::Url::parse(&format!("{}/", base.as_str().trim_end_matches('/')))
            .map_err(|e| SourceError::new(SourceErrorKind::Connect, &format!("{shown}: {e}")))?;
        Ok(Endpoint {
            base,
            stats_url,
            shown: url.without_credentials().to_string(),
            authorization,
        })
    }
}

/// surf's settings for a cluster: keep-alive, no Nagle delay, at most `per_host`
/// connections to each address, the extra CA of `options` if any. No surf timeout: callers bound each whole
/// exchange themselves (surf's covers neither connecting nor the body).
fn surf_config(options: &OpenSearchOptions, per_host: usize) -> Result<surf::Config, SourceError> {
    let mut config = surf::Config::new()
        .set_timeout(None)
        .set_http_keep_alive(true)
        // async-h1 writes a request's head and body apart: with Nagle's algorithm the body
        // would wait for the ACK of the head, which the cluster delays (~40 ms on Linux).
        .set_tcp_no_delay(true)
        .set_max_connections_per_host(per_host);
    if let Some(path) = &options.ca_certificate {
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
        let connector = async_native_tls::TlsConnector::new().add_root_certificate(certificate);
        config = config.set_tls_config(Some(Arc::new(connector)));
    }
    Ok(config)
}

/// `work`, or a [`SourceErrorKind::Timeout`] when it takes longer than `timeout` on `sleep`.
async fn within<T, Z: crate::Sleep>(
    sleep: &Z,
    timeout: Duration,
    work: impl std::future::Future<Output = Result<T, SourceError>>,
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

/// A request that got no answer, in this crate's words: what failed (connection refused,
/// connect timed out, the host name not resolved, TLS, ...) with the operating system's
/// error or the TLS library's text kept. surf's HTTP/1 client hands its connection pool's
/// errors over as text only (`An error occured while creating a new object: ...`), so the
/// text is what is read.
fn connect_error(error: &surf::Error) -> SourceError {
    SourceError::new(
        SourceErrorKind::Connect,
        &describe_connect(&error.to_string()),
    )
}

/// See [`connect_error`].
fn describe_connect(text: &str) -> String {
    const POOL: [&str; 2] = [
        "An error occured while creating a new object: ",
        "An error occurred while creating a new object: ",
    ];
    let cause = POOL
        .iter()
        .find_map(|prefix| text.strip_prefix(prefix))
        .unwrap_or(text)
        .trim();
    if let Some(code) = os_error(cause) {
        use std::io::ErrorKind;
        let what = match std::io::Error::from_raw_os_error(code).kind() {
            ErrorKind::ConnectionRefused => "connection refused",
            ErrorKind::TimedOut => "connect timed out",
            ErrorKind::HostUnreachable => "host unreachable",
            ErrorKind::NetworkUnreachable => "network unreachable",
            ErrorKind::ConnectionReset => "connection reset",
            ErrorKind::ConnectionAborted => "connection aborted",
            ErrorKind::AddrNotAvailable => "no local address to connect from",
            ErrorKind::PermissionDenied => "connecting is not permitted",
            _ => "connect failed",
        };
        return format!("{what} (os error {code})");
    }
    if cause.starts_with("failed to lookup address") {
        return format!("host name not resolved ({cause})");
    }
    let lower = cause.to_ascii_lowercase();
    if ["ssl", "tls", "certificate", "handshake"]
        .iter()
        .any(|word| lower.contains(word))
    {
        return format!("TLS failure: {cause}");
    }
    format!("connect failed: {cause}")
}

/// The `N` of a trailing `(os error N)`.
fn os_error(text: &str) -> Option<i32> {
    let start = text.rfind("(os error ")?;
    text[start + "(os error ".len()..]
        .strip_suffix(')')?
        .parse()
        .ok()
}

/// `search_engine.http.url`, or the error that says it is needed.
fn configured_urls(config: &Config) -> Result<ClusterUrls, SourceError> {
    config.search_engine_url.ok_or_else(|| {
        SourceError::new(
            SourceErrorKind::Other,
            "search_engine.http.url is not set: the cluster's address is needed",
        )
    })
}

fn client(config: &surf::Config) -> surf::Client {
    match config.clone().try_into() {
        Ok(client) => client,
        Err(never) => match never {},
    }
}

/// An error body in a few words: `type: reason` of an OpenSearch/Elasticsearch error, else
/// its first non-empty line (the security plugin answers in plain text), else `fallback`.
fn describe_error_body(body: &[u8], fallback: &str) -> String {
    if let Some((kind, reason)) = crate::opensearch::error_summary(body) {
        return if reason.is_empty() {
            kind.to_owned()
        } else {
            format!("{kind}: {reason}")
        };
    }
    let text = String::from_utf8_lossy(body);
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or(fallback)
        .to_owned()
}

/// The whole body, or [`ParseError::TooLarge`] when its announced length or the bytes
/// that came are over `cap` (reading stops one byte past it).
async fn read_body(response: &mut surf::Response, cap: usize) -> Result<Vec<u8>, SourceError> {
    if let Some(len) = response.len()
        && len > cap
    {
        return Err(ParseError::TooLarge { len, limit: cap }.into());
    }
    let body = read_capped(response, cap).await?;
    if body.len() > cap {
        return Err(ParseError::TooLarge {
            len: body.len(),
            limit: cap,
        }
        .into());
    }
    Ok(body)
}

/// Reads at most `cap + 1` bytes of the body, so that "longer than `cap`" shows without
/// buffering more.
async fn read_capped(response: &mut surf::Response, cap: usize) -> Result<Vec<u8>, SourceError> {
    let mut reader = response.take_body().into_reader().take(cap as u64 + 1);
    let mut body = Vec::new();
    reader
        .read_to_end(&mut body)
        .await
        .map_err(|e| SourceError::new(SourceErrorKind::Io, &e.to_string()))?;
    Ok(body)
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

/// An HTTP method of [`ClusterClient::request`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HttpMethod {
    /// `GET`.
    Get,
    /// `HEAD`.
    Head,
    /// `POST`.
    Post,
    /// `PUT`.
    Put,
    /// `DELETE`.
    Delete,
}

/// A cluster's answer to [`ClusterClient::request`]: any status, with its body.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClusterResponse {
    /// The HTTP status.
    pub status: u16,
    /// The body, at most the client's body cap.
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

/// Requests of your own (searches, indexing) to the cluster the monitor polls, through the
/// same HTTP stack and with the same settings: addresses, credentials, CA, a timeout over
/// the whole exchange (connecting and the body included) and a body cap.
///
/// Shared by reference between tasks. Requests go to one address until a request to it
/// fails (no answer, a timeout, a cut body): then the pool is dropped, as
/// [`OpenSearchSource`] does, and the next request goes to the next address. An error
/// status is an answer, not a failure: it is returned for the caller to judge.
///
/// ```no_run
/// use load_core::{ClusterClient, Config, HttpMethod};
///
/// # async fn f() -> Result<(), Box<dyn std::error::Error>> {
/// let config = Config::from_properties("search_engine.http.url=http://localhost:9200\n")?;
/// let cluster = ClusterClient::from_config(&config)?;
/// let query = br#"{"query":{"match":{"content":"load"}},"size":10}"#;
/// let answer = cluster.request(HttpMethod::Post, "/docs/_search", Some(query)).await?;
/// if !answer.is_success() {
///     eprintln!("HTTP {}: {}", answer.status, answer.error_summary());
/// }
/// # Ok(()) }
/// ```
pub struct ClusterClient {
    /// The pool, and how many times it was replaced: requests that fail together on one
    /// pool replace it once, not once each.
    client: std::sync::Mutex<(u64, surf::Client)>,
    config: surf::Config,
    endpoints: Vec<Endpoint>,
    current: AtomicUsize,
    timeout: Duration,
    max_body: usize,
}

impl ClusterClient {
    /// Connections kept to each address by default.
    pub const DEFAULT_CONNECTIONS: usize = 16;

    /// A client of the cluster at `urls`, with `options` (timeout, CA, credentials, body
    /// cap; the defaults of [`OpenSearchOptions`]) and at most
    /// [`ClusterClient::DEFAULT_CONNECTIONS`] connections to each address.
    ///
    /// # Errors
    ///
    /// An address that is no HTTP(S) URL, or a CA file that cannot be read or parsed.
    pub fn cluster(
        urls: &ClusterUrls,
        options: &OpenSearchOptions,
    ) -> Result<ClusterClient, SourceError> {
        Self::with_connections(urls, options, Self::DEFAULT_CONNECTIONS)
    }

    /// [`ClusterClient::cluster`] with at most `per_host` connections to each address
    /// (at least 1): more concurrent requests wait for one.
    ///
    /// # Errors
    ///
    /// As [`ClusterClient::cluster`].
    pub fn with_connections(
        urls: &ClusterUrls,
        options: &OpenSearchOptions,
        per_host: usize,
    ) -> Result<ClusterClient, SourceError> {
        let endpoints = urls
            .iter()
            .map(|url| Endpoint::new(&url, options.credentials.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        let config = surf_config(options, per_host.max(1))?;
        Ok(ClusterClient {
            client: std::sync::Mutex::new((0, client(&config))),
            config,
            endpoints,
            current: AtomicUsize::new(0),
            timeout: options.timeout.unwrap_or(OpenSearchSource::DEFAULT_TIMEOUT),
            max_body: options.max_body.unwrap_or(Limits::DEFAULT.max_body),
        })
    }

    /// A client for `config`'s `search_engine.http.url`, with the options of its keys.
    ///
    /// # Errors
    ///
    /// [`SourceErrorKind::Other`] when no address is set; else as
    /// [`ClusterClient::cluster`].
    pub fn from_config(config: &Config) -> Result<ClusterClient, SourceError> {
        let urls = configured_urls(config)?;
        ClusterClient::cluster(&urls, &OpenSearchOptions::from_config(config))
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
    /// could not be sent or no whole answer came in time
    /// ([`SourceErrorKind::Connect`], [`SourceErrorKind::Io`], [`SourceErrorKind::Timeout`]),
    /// or its body is over the cap ([`SourceErrorKind::Body`]); each names the address
    /// without credentials. Any status is an answer.
    pub async fn request(
        &self,
        method: HttpMethod,
        path: &str,
        json: Option<&[u8]>,
    ) -> Result<ClusterResponse, SourceError> {
        let index = self.current.load(Ordering::Relaxed) % self.endpoints.len();
        let endpoint = &self.endpoints[index];
        // A refused path is the caller's mistake, not the node's: nothing is sent and the
        // pool stays.
        let url = url_on(&endpoint.base, path).map_err(|e| e.at(&endpoint.shown))?;
        let (generation, pooled) = self
            .client
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let exchange = self.exchange(&pooled, endpoint, method, url, json);
        let outcome = within(&IoTimer, self.timeout, exchange).await;
        match outcome {
            Ok((status, body)) => Ok(ClusterResponse {
                status,
                body,
                endpoint: index,
            }),
            Err(error) => {
                // A pooled connection may be half-read: drop the pool and move on to the
                // next address, once for all the requests that failed on this pool.
                let mut current = self
                    .client
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if current.0 == generation {
                    *current = (generation + 1, client(&self.config));
                    self.current
                        .store((index + 1) % self.endpoints.len(), Ordering::Relaxed);
                }
                Err(error.at(&endpoint.shown))
            }
        }
    }

    async fn exchange(
        &self,
        client: &surf::Client,
        endpoint: &Endpoint,
        method: HttpMethod,
        url: surf::Url,
        json: Option<&[u8]>,
    ) -> Result<(u16, Vec<u8>), SourceError> {
        let method = match method {
            HttpMethod::Get => surf::http::Method::Get,
            HttpMethod::Head => surf::http::Method::Head,
            HttpMethod::Post => surf::http::Method::Post,
            HttpMethod::Put => surf::http::Method::Put,
            HttpMethod::Delete => surf::http::Method::Delete,
        };
        let mut request = surf::RequestBuilder::new(method, url);
        if let Some(authorization) = &endpoint.authorization {
            request = request.header("Authorization", authorization.as_str());
        }
        if let Some(json) = json {
            request = request
                .body(surf::Body::from_bytes(json.to_vec()))
                .content_type(surf::http::mime::JSON);
        }
        let mut response = client.send(request).await.map_err(|e| connect_error(&e))?;
        let status = response.status() as u16;
        if method == surf::http::Method::Head {
            // No body follows, whatever `Content-Length` says: reading one would wait for
            // bytes that never come.
            return Ok((status, Vec::new()));
        }
        let body = read_body(&mut response, self.max_body).await?;
        Ok((status, body))
    }

    /// How many addresses it uses in turn.
    #[must_use]
    pub fn endpoints(&self) -> usize {
        self.endpoints.len()
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

impl fmt::Debug for ClusterClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let urls: Vec<&str> = self.endpoints.iter().map(|e| e.shown.as_str()).collect();
        f.debug_struct("ClusterClient")
            .field("urls", &urls)
            .field("timeout", &self.timeout)
            .field("max_body", &self.max_body)
            .finish_non_exhaustive()
    }
}

impl<Z: crate::Sleep + Send + Sync> CpuSource for OpenSearchSource<Z> {
    /// One poll, bounded by the timeout.
    ///
    /// A healthy poll leaves its keep-alive connection for the next one. A poll that fails
    /// in any way (timeout, I/O error, error status, unreadable body) drops its client and
    /// with it every pooled connection: surf would otherwise give a timed-out or half-read
    /// connection back to its pool, and the next poll would wait on a connection that a
    /// frozen node never answers. The next poll after a failure always connects afresh.
    async fn sample(&mut self) -> Result<CpuSample, SourceError> {
        let endpoint = &self.endpoints[self.current];
        let outcome = within(&self.sleep, self.timeout, self.fetch(endpoint)).await;
        match outcome {
            Ok(sample) => Ok(sample),
            Err(error) => {
                let error = error.at(&endpoint.shown);
                self.client = client(&self.config);
                self.current = (self.current + 1) % self.endpoints.len();
                Err(error)
            }
        }
    }
}

impl<Z> fmt::Debug for OpenSearchSource<Z> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let urls: Vec<&str> = self.endpoints.iter().map(|e| e.shown.as_str()).collect();
        f.debug_struct("OpenSearchSource")
            .field("urls", &urls)
            .field("next", &self.current)
            .field(
                "authenticated",
                &self.endpoints.iter().any(|e| e.authorization.is_some()),
            )
            .field("timeout", &self.timeout)
            .field("max_body", &self.max_body)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn userinfo_is_decoded_and_never_shown() {
        assert_eq!(percent_decode("p%40ss%3Aw%zz"), "p@ss:w%zz");
        let url = Url::parse("https://admin:s%40cret@search.example:9200/prefix/").unwrap();
        let source = OpenSearchSource::new(&url).unwrap();
        assert_eq!(
            source.stats_url(),
            "https://search.example:9200/prefix/_nodes/stats/os?filter_path=_nodes,nodes.*.os.cpu.percent"
        );
        let shown = format!("{source:?}");
        assert!(
            !shown.contains("s%40cret") && !shown.contains("s@cret"),
            "{shown}"
        );
        assert_eq!(
            source.endpoints[0].authorization.as_deref(),
            Some(BasicAuth::new("admin", "s@cret").value().as_str())
        );
        let options = OpenSearchOptions::new().credentials("u", "hunter2");
        assert!(!format!("{options:?}").contains("hunter2"));
    }

    /// Found from outside: a refused connection was logged in the HTTP client's pool
    /// wording, misspelt (`An error occured while creating a new object: ...`).
    #[test]
    fn connect_failures_are_said_in_our_words_with_the_os_error() {
        for (surf, ours) in [
            (
                "An error occured while creating a new object: Connection refused (os error 111)",
                "connection refused (os error 111)",
            ),
            (
                "An error occured while creating a new object: Connection timed out (os error 110)",
                "connect timed out (os error 110)",
            ),
            (
                "An error occured while creating a new object: No route to host (os error 113)",
                "host unreachable (os error 113)",
            ),
            (
                "failed to lookup address information: Name or service not known",
                "host name not resolved (failed to lookup address information: Name or service \
                 not known)",
            ),
            (
                "An error occured while creating a new object: error:0A00010B:SSL \
                 routines:ssl3_get_record:wrong version number",
                "TLS failure: error:0A00010B:SSL routines:ssl3_get_record:wrong version number",
            ),
            (
                "missing valid address",
                "connect failed: missing valid address",
            ),
        ] {
            assert_eq!(describe_connect(surf), ours, "{surf}");
        }
    }

    #[test]
    fn a_refused_poll_says_so() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        let mut source = OpenSearchSource::new(&Url::parse(&url).unwrap()).unwrap();
        let error = futures::executor::block_on(source.sample()).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("{url}: cannot connect: connection refused (os error 111)")
        );
    }

    #[test]
    fn a_missing_ca_file_is_a_clear_error() {
        let url = Url::parse("https://h:9200").unwrap();
        let error = OpenSearchSource::with_options(
            &url,
            OpenSearchOptions::new().ca_certificate("/nonexistent/ca.pem"),
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
