//! The demo search application: its state, and load control in front of its routes.
//!
//! - here: the state, its construction from a configuration, reloading, and
//!   [`App::handle`], where load control decides before routing;
//! - `routes`: which route answers what, and the built-in pages;
//! - `results`: the cluster's hits as a page or as Fess's API JSON;
//! - `crawler`: background work behind the adaptive gate;
//! - `admin`: `/admin/stats`, `/admin/load` and `/metrics`.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::future::Either;
use http_body_util::Full;
use hyper::{Request, Response};
use load_runtime::tower::LoadControlLayer;
use load_runtime::{BackgroundGate, LoadGuard};
use load_smol::monitor::Stop;
use load_smol::{
    Config, ControlConfig, FixedSource, OpenSearchSource, Runtime, SystemSource,
    source::{FromConfig, Role},
};

use crate::corpus::{Corpus, DEFAULT_DOCUMENTS};
use crate::search::{DEFAULT_INDEX, Search, valid_index};
use load_opensearch::ClusterClient;

mod admin;
mod crawler;
mod failure_log;
mod results;
mod routes;
pub mod service;

pub use admin::DASHBOARD_REFRESH;
pub use crawler::BATCH;
pub(crate) use failure_log::FailureLog;
pub use routes::segments;

/// The cluster signal: the cluster when its address is known, else this machine's CPU.
pub type ClusterSource = Either<OpenSearchSource, SystemSource>;

/// The local signal: this machine's CPU, or a test double.
pub type LocalSource = Either<SystemSource, &'static FixedSource>;

/// The application state shared by every connection.
pub struct App<R: Runtime + Default> {
    guard: LoadGuard<R, ClusterSource>,
    background: BackgroundGate<R, LocalSource>,
    config: Mutex<Config>,
    /// Search and indexing on the cluster; `None` single-box (the built-in documents).
    search: Option<Search>,
    corpus: Corpus,
    crawled: AtomicU64,
    indexed: AtomicU64,
    index_errors: AtomicU64,
    search_failures: FailureLog,
    stop: Stop,
    crawler: bool,
    /// `--peer-limiter`: decides instead of the limit mode (benchmarks only).
    peer: Option<Arc<crate::peer::Peer>>,
    /// What request control measures: the cluster, or this service's CPU (its cgroup or
    /// the host, as `SystemSource` chose).
    request_cpu: String,
    /// What background work's gate measures (`None`: a fixed source, or off).
    background_cpu: Option<String>,
}

/// What the demo does beyond load control: which index it searches and fills, and how
/// many documents its crawler has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DemoOptions {
    /// The index (`--index`, default [`DEFAULT_INDEX`]).
    pub index: String,
    /// Documents in the crawler's corpus (`--corpus`, default [`DEFAULT_DOCUMENTS`]).
    pub corpus: usize,
    /// Where searches run (`--search`): on the cluster when one is configured (the
    /// default), or on the built-in documents, with the cluster only polled for its CPU.
    pub search: SearchMode,
    /// Whether the crawler runs (`--crawler on|off`, default on): off, background work is
    /// quiet (the closed loop's light-load baseline is then the cluster's own).
    pub crawler: bool,
    /// A peer's admission law instead of the limit mode (`--peer-limiter`, benchmarks only).
    pub peer: Option<crate::peer::PeerLaw>,
}

/// Where the demo's searches run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SearchMode {
    /// On the configured cluster, which the crawler fills; the built-in documents
    /// single-box.
    #[default]
    Cluster,
    /// Always on the four built-in documents, and the crawler only counts: load control
    /// polls the cluster, nothing else talks to it (what the load-control benchmarks and
    /// the tests with a stand-in cluster want).
    Builtin,
}

impl Default for DemoOptions {
    fn default() -> Self {
        DemoOptions {
            index: DEFAULT_INDEX.to_owned(),
            corpus: DEFAULT_DOCUMENTS,
            search: SearchMode::Cluster,
            crawler: true,
            peer: None,
        }
    }
}

impl<R: Runtime + Default> std::fmt::Debug for App<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("guard", &self.guard)
            .field("background", &self.background)
            .finish_non_exhaustive()
    }
}

impl<R: Runtime + Default> App<R> {
    /// The application for `config`, with the cluster monitor ready to start on the first
    /// controlled request and the local sampler running.
    ///
    /// # Errors
    ///
    /// A one-line description when a CPU source cannot be set up.
    pub fn new(config: Config) -> Result<Arc<App<R>>, String> {
        Self::new_with(config, &DemoOptions::default())
    }

    /// [`App::new`] with the demo's own options. With a cluster, searches run on it and the
    /// crawler fills its index.
    ///
    /// # Errors
    ///
    /// As [`App::new`].
    pub fn new_with(config: Config, options: &DemoOptions) -> Result<Arc<App<R>>, String> {
        let cluster: ClusterSource = match &config.cluster.urls {
            Some(urls) => Either::Left(
                OpenSearchSource::from_config(&config, Role::Cluster)
                    .map_err(|e| format!("search_engine.http.url {urls}: {e}"))?,
            ),
            // Single-box: the search engine runs in this service, so it is this service's CPU
            // (its cgroup where that limits it below the host, the host otherwise).
            None => Either::Right(
                SystemSource::from_config(&config, Role::Cluster)
                    .map_err(|e| format!("cannot read this machine's CPU: {e}"))?,
            ),
        };
        let mut background_cpu = None;
        let background = if config.control.adaptive_enabled() {
            let local = SystemSource::from_config(&config, Role::Local)
                .map_err(|e| format!("adaptive load control: {e}"))?;
            background_cpu = Some(local.measures().to_string());
            BackgroundGate::with_source(&config.control, Either::Left(local))
        } else {
            // Off: the gate never samples, whatever it is given.
            static NEVER: FixedSource = FixedSource::new(None);
            BackgroundGate::with_source(&config.control, Either::Right(&NEVER))
        };
        let search = match config.cluster.urls {
            Some(urls) if options.search == SearchMode::Cluster => {
                if !valid_index(&options.index) {
                    return Err(format!(
                        "--index {:?} is no valid index name",
                        options.index
                    ));
                }
                let client = ClusterClient::from_config(&config.cluster)
                    .map_err(|e| format!("search_engine.http.url {urls}: {e}"))?;
                Some(Search::new(client, &options.index))
            }
            _ => None,
        };
        let peer = options
            .peer
            .map(crate::peer::Peer::new)
            .transpose()?
            .map(Arc::new);
        let app = Self::build(
            config,
            cluster,
            background,
            search,
            Corpus::new(options.corpus),
        );
        match Arc::try_unwrap(app) {
            Ok(mut app) => {
                app.crawler = options.crawler;
                app.peer = peer;
                app.background_cpu = background_cpu;
                Ok(Arc::new(app))
            }
            Err(app) => Ok(app),
        }
    }

    /// The application with explicit sources (tests use scripted ones).
    pub fn with_sources(
        config: Config,
        cluster: ClusterSource,
        local: &'static FixedSource,
    ) -> Arc<App<R>> {
        let background = BackgroundGate::with_source(&config.control, Either::Right(local));
        Self::build(
            config,
            cluster,
            background,
            None,
            Corpus::new(DEFAULT_DOCUMENTS),
        )
    }

    fn build(
        config: Config,
        cluster: ClusterSource,
        background: BackgroundGate<R, LocalSource>,
        search: Option<Search>,
        corpus: Corpus,
    ) -> Arc<App<R>> {
        let request_cpu = match &cluster {
            Either::Left(_) => "the cluster's busiest node".to_owned(),
            Either::Right(system) => format!("this service's {}", system.measures()),
        };
        Arc::new(App {
            request_cpu,
            background_cpu: None,
            guard: LoadGuard::with_source(&uncontrolled(config.control), cluster),
            background,
            config: Mutex::new(config),
            search,
            corpus,
            crawled: AtomicU64::new(0),
            indexed: AtomicU64::new(0),
            index_errors: AtomicU64::new(0),
            search_failures: FailureLog::default(),
            stop: Stop::new(),
            crawler: true,
            peer: None,
        })
    }

    /// The request guard.
    #[must_use]
    pub fn guard(&self) -> &LoadGuard<R, ClusterSource> {
        &self.guard
    }

    /// The background-work gate.
    #[must_use]
    pub fn background(&self) -> &BackgroundGate<R, LocalSource> {
        &self.background
    }

    /// Items the crawler processed.
    #[must_use]
    pub fn crawled(&self) -> u64 {
        self.crawled.load(Ordering::Relaxed)
    }

    /// Documents the crawler indexed into the cluster.
    #[must_use]
    pub fn indexed(&self) -> u64 {
        self.indexed.load(Ordering::Relaxed)
    }

    /// The cluster search, when a cluster is configured.
    #[must_use]
    pub fn search(&self) -> Option<&Search> {
        self.search.as_ref()
    }

    /// The configuration in force.
    #[must_use]
    pub fn config(&self) -> Config {
        self.config
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Applies a new configuration at run time and logs, at INFO, every key that changed.
    /// The cluster address and the interval need a restart: a change to them is logged at
    /// WARN and otherwise ignored.
    pub fn reload(&self, new: &Config) {
        let mut current = self
            .config
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let changes = crate::cli::changes(&current, new);
        if changes.is_empty() {
            log::info!("Configuration reloaded: nothing changed");
            return;
        }
        for (key, old, value) in &changes {
            if crate::cli::needs_restart(key) {
                log::warn!("{key}: {old} -> {value} takes effect at the next restart");
            } else {
                log::info!("{key}: {old} -> {value}");
            }
        }
        let applied = current.reloadable(new);
        self.guard.reload(&applied.control);
        self.background.reload(&applied.control);
        *current = applied;
    }

    /// Stops the crawler and the monitors, and waits for the monitors.
    pub async fn shutdown(&self) {
        self.stop.request();
        self.guard.shutdown().await;
        self.background.shutdown().await;
    }

    /// Answers one request through the library's tower layer (`load_runtime::tower`), in
    /// front of the demo's routes ([`service::Routes`]); with `--peer-limiter`, the
    /// benchmark peer decides in the layer instead of the guard's law
    /// ([`crate::peer::PeerDecides`]).
    ///
    /// Load control sees the request target as received (path, `;params` and query; an
    /// absolute-form target's path), before anything has normalised it; the router reads
    /// the same path (see [`segments`]). An admitted request's permit is held until its
    /// answer is built (with a cluster, until the search has run): with
    /// `load.control.admission=limit` the in-flight count is the requests being answered.
    /// `/metrics` is never controlled ([`UNCONTROLLED`]), and a 404 did no work: the routes
    /// mark it [`load_runtime::tower::Unrecorded`].
    pub fn handle<B: Send + 'static>(
        self: &Arc<Self>,
        request: Request<B>,
    ) -> impl Future<Output = Response<Full<Bytes>>> + Send + use<R, B>
    where
        R: Sync + Send + 'static,
    {
        let routes = service::Routes::new(Arc::clone(self));
        let layer = LoadControlLayer::new(self.guard.clone());
        match &self.peer {
            None => Either::Left(service::through(layer, routes, request)),
            Some(peer) => {
                let layer = layer.deciding_with(crate::peer::PeerDecides(Arc::clone(peer)));
                Either::Right(service::through(layer, routes, request))
            }
        }
    }
}

/// Paths the demo never controls: the scraper's (monitoring must keep working under
/// overload). The admin pages are excluded by Fess's own rule.
pub const UNCONTROLLED: &[&str] = &["/metrics"];

/// `control` with the demo's [`UNCONTROLLED`] paths.
fn uncontrolled(mut control: ControlConfig) -> ControlConfig {
    control.uncontrolled = UNCONTROLLED;
    control
}
