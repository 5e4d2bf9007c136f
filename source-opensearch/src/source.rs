//! `OpenSearchSource`: the cluster's busiest node, polled over HTTP(S).

use std::fmt;

use std::sync::Mutex;

use load_core::node_stats::{Limits, NODE_STATS_PATH, PoolTracker, parse_node_stats_tracked};
use load_core::{
    Config, ConfigError, CpuSample, CpuSource, SourceError,
    config::{ClusterUrls, ConfigErrorKind, NodeUrl, Origin, keys},
    source::{FromConfig, Role, SetupError, SourceErrorKind},
    text::Snippet,
};

use crate::body::{read_body, read_capped};
use crate::errors::{describe_error_body, send_error};
use crate::nodes::ClusterNodes;
use crate::{IoTimer, OpenSearchOptions};

/// How much of an error body is read to describe it.
const ERROR_BODY_PREFIX: usize = 4096;

/// Connections a source keeps to each address: one poll at a time, plus one being closed.
const CONNECTIONS: usize = 2;

/// Polls `GET {url}`[`NODE_STATS_PATH`] and reads the busiest node's CPU (and its search
/// queue) with the core's parser ([`load_core::node_stats`]).
///
/// - `http://` and `https://` (TLS through the system's OpenSSL); trust an extra CA with
///   [`OpenSearchOptions::ca_certificate`]. Basic auth from the URL's userinfo
///   (`https://user:pass@host:9200`) or [`OpenSearchOptions::credentials`].
/// - Several addresses ([`OpenSearchSource::cluster`], Fess's comma-separated
///   `search_engine.http.url`): each poll goes to one of them (any node answers for the
///   whole cluster); after a failed poll the next goes to the next address, round robin,
///   on a fresh connection. Each error names the address it came from
///   (without its password), and each sample says which answered
///   ([`CpuSample::endpoint`]).
/// - A non-2xx status is an error naming the status and the first line of the body; a
///   `200` with failed nodes is a success whose sample records how many failed.
///
/// ```no_run
/// use load_core::{CpuSource, config::NodeUrl};
/// use load_opensearch::OpenSearchSource;
/// # async fn f() -> Result<(), load_core::SourceError> {
/// let url = NodeUrl::parse("https://admin:secret@search.example:9200").expect("url");
/// let mut source = OpenSearchSource::new(&url)?;
/// let sample = source.sample().await?;
/// println!("busiest node: {:?}", sample.cpu);
/// # Ok(()) }
/// ```
pub struct OpenSearchSource<Z = IoTimer> {
    nodes: ClusterNodes,
    /// The nodes' pool counters at the previous poll, for the means since
    /// ([`PoolTracker`]); locked only while a body is parsed.
    tracker: Mutex<PoolTracker>,
    /// Times the timeout.
    sleep: Z,
}

impl OpenSearchSource {
    /// The default timeout of a whole exchange.
    pub const DEFAULT_TIMEOUT: std::time::Duration = ClusterNodes::DEFAULT_TIMEOUT;

    /// A source for the cluster at `url`, with default options.
    ///
    /// # Errors
    ///
    /// As [`OpenSearchSource::with_options`].
    pub fn new(url: &NodeUrl) -> Result<OpenSearchSource, SourceError> {
        OpenSearchSource::with_options(url, OpenSearchOptions::default())
    }

    /// A source for the cluster at `url`.
    ///
    /// # Errors
    ///
    /// [`SourceErrorKind::Connect`] when the URL cannot be used or the CA certificate file
    /// cannot be read or parsed.
    pub fn with_options(
        url: &NodeUrl,
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
        Ok(OpenSearchSource {
            nodes: ClusterNodes::new(urls, &options, CONNECTIONS)?,
            tracker: Mutex::new(PoolTracker::new()),
            sleep: IoTimer,
        })
    }
}

impl<Z> OpenSearchSource<Z> {
    /// The same source, timing its timeout with `sleep` (a runtime's [`load_core::time::Sleep`])
    /// instead of [`IoTimer`].
    #[must_use]
    pub fn with_sleep<S: load_core::time::Sleep>(self, sleep: S) -> OpenSearchSource<S> {
        OpenSearchSource {
            nodes: self.nodes,
            tracker: self.tracker,
            sleep,
        }
    }

    /// The URL the next poll goes to, without credentials.
    #[must_use]
    pub fn stats_url(&self) -> String {
        stats_url(self.nodes.endpoint(self.nodes.current()).base())
    }
}

/// `{base}`[`NODE_STATS_PATH`].
fn stats_url(base: &surf::Url) -> String {
    format!("{}{NODE_STATS_PATH}", base.as_str().trim_end_matches('/'))
}

/// Built from Fess's connection keys ([`Config::cluster`]: addresses, credentials, CA),
/// for [`Role::Cluster`].
impl FromConfig for OpenSearchSource {
    /// # Errors
    ///
    /// [`SetupError::Config`] naming `search_engine.http.url` when no address is set;
    /// [`SetupError::Source`] when a CA file cannot be read or parsed, or for
    /// [`Role::Local`] (a cluster is not this machine).
    fn from_config(config: &Config, role: Role) -> Result<OpenSearchSource, SetupError> {
        if role == Role::Local {
            return Err(SetupError::Source(SourceError::new(
                SourceErrorKind::Unsupported,
                "an OpenSearch cluster is not this machine's CPU",
            )));
        }
        let Some(urls) = &config.cluster.urls else {
            return Err(SetupError::Config(ConfigError::new(
                Origin::Config,
                Snippet::new(keys::SEARCH_ENGINE_URL),
                Snippet::EMPTY,
                ConfigErrorKind::Missing {
                    needed_by: "HTTP load control (a threshold below 100)",
                },
            )));
        };
        warn_half_credentials(config);
        Ok(OpenSearchSource::cluster(
            urls,
            OpenSearchOptions::from_config(&config.cluster),
        )?)
    }
}

/// Warns when only one of the user and the password is set: Fess then sends no
/// credentials, and neither does this crate.
fn warn_half_credentials(config: &Config) {
    match (&config.cluster.username, &config.cluster.password) {
        (Some(_), None) => log::warn!(
            "search_engine.username is set but search_engine.password is not: no credentials are sent"
        ),
        (None, Some(_)) => log::warn!(
            "search_engine.password is set but search_engine.username is not: no credentials are sent"
        ),
        _ => {}
    }
}

impl<Z: load_core::time::Sleep + Send + Sync> CpuSource for OpenSearchSource<Z> {
    /// One poll, bounded by the timeout.
    ///
    /// A healthy poll leaves its keep-alive connection for the next one. A poll that fails
    /// in any way (timeout, I/O error, error status, unreadable body) drops the client and
    /// with it every pooled connection, and the next poll goes to the next address on a
    /// fresh connection: a frozen node's half-read connection is never reused.
    async fn sample(&mut self) -> Result<CpuSample, SourceError> {
        let max_body = self.nodes.max_body();
        let tracker = &self.tracker;
        let (index, sample) = self
            .nodes
            .exchange(&self.sleep, |client, endpoint| {
                let request = endpoint.authorize(client.get(stats_url(endpoint.base())));
                Ok(async move {
                    let mut response = request.await.map_err(|e| send_error(&e))?;
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
                    let body = read_body(&mut response, max_body).await?;
                    let limits = Limits::new(max_body, Limits::DEFAULT.max_depth);
                    // A panic elsewhere cannot leave the counters half-written: the
                    // tracker's state is whole after every observation.
                    let tracker = tracker
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    let stats = parse_node_stats_tracked(&body, limits, &*tracker)?;
                    drop(tracker);
                    Ok(CpuSample::cluster(&stats))
                })
            })
            .await?;
        Ok(sample.from_endpoint(u8::try_from(index).unwrap_or(u8::MAX)))
    }

    fn kind(&self) -> load_core::source::SourceKind {
        load_core::source::SourceKind::Cluster
    }
}

impl<Z> fmt::Debug for OpenSearchSource<Z> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenSearchSource")
            .field("nodes", &self.nodes)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stats_url_is_below_the_address_without_credentials() {
        let url = NodeUrl::parse("https://admin:s%40cret@search.example:9200/prefix/").unwrap();
        let source = OpenSearchSource::new(&url).unwrap();
        assert_eq!(
            source.stats_url(),
            format!("https://search.example:9200/prefix{NODE_STATS_PATH}")
        );
        assert!(
            NODE_STATS_PATH.starts_with("/_nodes/stats/os,thread_pool,indices/search?"),
            "{NODE_STATS_PATH}"
        );
        assert!(!format!("{source:?}").contains("cret"));
    }

    #[test]
    fn a_missing_address_names_the_key() {
        let config = Config::from_properties("web.load.control=80").unwrap();
        let error = OpenSearchSource::from_config(&config, Role::Cluster).unwrap_err();
        assert!(
            error.to_string().contains("search_engine.http.url"),
            "{error}"
        );
    }

    #[test]
    fn a_refused_poll_says_so() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        let mut source = OpenSearchSource::new(&NodeUrl::parse(&url).unwrap()).unwrap();
        let error = futures::executor::block_on(source.sample()).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("{url}: cannot connect: connection refused (os error 111)")
        );
    }
}
