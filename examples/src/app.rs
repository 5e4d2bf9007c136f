//! The demo search application: its routes, and load control in front of them.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::future::Either;
use http_body_util::Full;
use hyper::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, HeaderName, HeaderValue, RETRY_AFTER,
};
use hyper::{Request, Response, StatusCode};
use load_smol::Runtime;
use load_smol::load_runtime::{BackgroundGate, LoadGuard};
use load_smol::monitor::Stop;
use load_smol::{
    Clock, Config, Decision, FixedSource, FromConfig, Mode, OpenSearchSource, Role, Route,
    Smoothing, SystemSource, keys,
};

use crate::cluster::ClusterClient;

use crate::corpus::{Corpus, DEFAULT_DOCUMENTS, Document};
use crate::dashboard;
use crate::search::{self, DEFAULT_INDEX, Hits, PAGE_SIZE, Search, SearchError, valid_index};
use serde_json::json;

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
        }
    }
}

/// Documents the crawler indexes per unit of work (one `_bulk` request, one pass of the
/// adaptive gate).
pub const BATCH: usize = 10;

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
            // Single-box: the search engine runs on this host, so it is the host's CPU.
            None => Either::Right(
                SystemSource::from_config(&config, Role::Cluster)
                    .map_err(|e| format!("cannot read this machine's CPU: {e}"))?,
            ),
        };
        let background = if config.control.adaptive_enabled() {
            let local = SystemSource::from_config(&config, Role::Local)
                .map_err(|e| format!("adaptive load control: {e}"))?;
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
        Ok(Self::build(
            config,
            cluster,
            background,
            search,
            Corpus::new(options.corpus),
        ))
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
        Arc::new(App {
            guard: LoadGuard::with_source(&config.control, cluster),
            background,
            config: Mutex::new(config),
            search,
            corpus,
            crawled: AtomicU64::new(0),
            indexed: AtomicU64::new(0),
            index_errors: AtomicU64::new(0),
            search_failures: FailureLog::default(),
            stop: Stop::new(),
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

    /// The demo crawler, one unit of work every ~50 ms, each behind the adaptive gate, until
    /// [`App::shutdown`]. With a cluster, a unit indexes the next [`BATCH`] documents of the
    /// corpus (creating the index first if missing; after the last document it starts over,
    /// re-indexing); single-box, it only counts.
    pub async fn crawl(&self) {
        let work = async {
            let mut next = 0;
            // The index is created at start, before the first pass of the gate.
            let mut index_ready = match &self.search {
                Some(search) => self.prepare_index(search).await,
                None => true,
            };
            let mut failing = false;
            while self.background.wait().await.is_proceed() {
                if let Some(search) = &self.search {
                    let outcome = self.crawl_unit(search, next, &mut index_ready).await;
                    match outcome {
                        Ok(indexed) => {
                            self.indexed.fetch_add(indexed as u64, Ordering::Relaxed);
                            next = (next + BATCH) % self.corpus.len();
                            if failing {
                                log::info!("Indexing resumed");
                                failing = false;
                            }
                        }
                        Err(error) => {
                            self.index_errors.fetch_add(1, Ordering::Relaxed);
                            if !failing {
                                log::warn!("Indexing failed, retrying every second: {error}");
                                failing = true;
                            }
                            load_smol::Sleep::sleep(&R::default(), search::RETRY_PAUSE).await;
                            continue;
                        }
                    }
                }
                self.crawled.fetch_add(1, Ordering::Relaxed);
                load_smol::Sleep::sleep(&R::default(), Duration::from_millis(50)).await;
            }
        };
        let stop = self.stop.wait();
        futures::pin_mut!(work, stop);
        futures::future::select(work, stop).await;
    }

    /// Creates the index if missing; whether it exists now (a failure is logged, and the
    /// crawler tries again before its first batch).
    async fn prepare_index(&self, search: &Search) -> bool {
        match search.ensure_index().await {
            Ok(true) => {
                log::info!("Created the index {} with its mapping", search.index());
                true
            }
            Ok(false) => true,
            Err(error) => {
                log::warn!("Cannot prepare the index {}: {error}", search.index());
                false
            }
        }
    }

    async fn crawl_unit(
        &self,
        search: &Search,
        next: usize,
        index_ready: &mut bool,
    ) -> Result<usize, SearchError> {
        if !*index_ready {
            if search.ensure_index().await? {
                log::info!("Created the index {} with its mapping", search.index());
            }
            *index_ready = true;
        }
        let batch: Vec<Document> = (next..next + BATCH.min(self.corpus.len()))
            .map(|id| self.corpus.document(id))
            .collect();
        search.index_documents(&batch).await
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

    /// Answers one request: load control first, then the route.
    ///
    /// Load control sees the request target as received (path, `;params` and query; an
    /// absolute-form target's path), before anything has normalised it; the router reads
    /// the same path (see [`segments`]).
    pub fn handle<'a, B>(
        &'a self,
        request: &Request<B>,
    ) -> impl Future<Output = Response<Full<Bytes>>> + Send + use<'a, R, B>
    where
        R: Sync,
    {
        let uri = request.uri();
        let path = uri.path();
        let query = uri.query().unwrap_or_default();
        let target = uri.path_and_query().map_or("/", |target| target.as_str());
        // Monitoring must keep working under overload: it is served before load control.
        let routed = if path == "/metrics" {
            self.route(path, query)
        } else {
            match self.guard.check(target) {
                Decision::Allow => self.route(path, query),
                Decision::Reject(route) => Routed::Ready(self.busy(route)),
            }
        };
        async move {
            match routed {
                Routed::Ready(response) => response,
                Routed::Search { search, api, query } => self.searched(search, api, &query).await,
            }
        }
    }

    /// Runs `query` on the cluster and answers with the hits (HTML, or Fess's API JSON when
    /// `api`); an empty query answers at once, a failed search with 502 or 503.
    async fn searched(&self, search: &Search, api: bool, query: &str) -> Response<Full<Bytes>> {
        let form = search_form(query);
        if query.trim().is_empty() {
            return if api {
                json_response(StatusCode::OK, &api_hits(query, 0, &[]))
            } else {
                html(StatusCode::OK, &page("Search", &form))
            };
        }
        match search.search(query).await {
            Ok(hits) => {
                if api {
                    let result: Vec<serde_json::Value> = hits
                        .hits
                        .iter()
                        .map(|hit| {
                            json!({"doc_id": hit.id, "title": hit.title, "url": hit.url,
                                   "score": hit.score, "content_description": hit.fragment()})
                        })
                        .collect();
                    json_response(StatusCode::OK, &api_hits(query, hits.total, &result))
                } else {
                    html(StatusCode::OK, &page("Search", &hits_html(&form, &hits)))
                }
            }
            Err(error) => {
                self.search_failures.failed(&error);
                let status =
                    StatusCode::from_u16(error.http_status()).unwrap_or(StatusCode::BAD_GATEWAY);
                let message = if status == StatusCode::SERVICE_UNAVAILABLE {
                    "The search engine is unavailable. Please try again later."
                } else {
                    "The search engine could not answer this search."
                };
                let mut response = if api {
                    json_response(
                        status,
                        &json!({"response": {"status": 1, "message": message}}),
                    )
                } else {
                    html(
                        status,
                        &page(
                            "Search",
                            &format!("{form}\n<p class=\"error\">{message}</p>"),
                        ),
                    )
                };
                if status == StatusCode::SERVICE_UNAVAILABLE {
                    response.headers_mut().insert(
                        RETRY_AFTER,
                        HeaderValue::from(self.config().control.retry_after),
                    );
                }
                response
            }
        }
    }

    fn busy(&self, route: Route) -> Response<Full<Bytes>> {
        let busy = self.guard.busy_response(route);
        let mut response = respond(
            StatusCode::TOO_MANY_REQUESTS,
            busy.content_type(),
            Bytes::copy_from_slice(busy.body()),
        );
        for (name, value) in busy.headers() {
            if let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value),
            ) {
                response.headers_mut().insert(name, value);
            }
        }
        response
    }

    /// The answer to an admitted request: at once, or a search to run on the cluster
    /// (when there is one).
    fn route<'a>(&'a self, path: &str, raw_query: &str) -> Routed<'a> {
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
                response.headers_mut().insert(
                    CONTENT_SECURITY_POLICY,
                    HeaderValue::from_static(
                        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; \
                         frame-ancestors 'none'",
                    ),
                );
                response
                    .headers_mut()
                    .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
                response
            }
            ["metrics"] => respond(
                StatusCode::OK,
                "text/plain; version=0.0.4; charset=utf-8",
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

    /// The `/admin/stats` document.
    #[must_use]
    pub fn stats(&self) -> serde_json::Value {
        let stats = self.guard.stats();
        let adaptive = self.background.stats();
        let config = self.config();
        let percent = |cpu: Option<load_smol::CpuPercent>| cpu.map(|c| c.get());
        json!({
            "cpu": percent(stats.cpu),
            "raw_cpu": percent(stats.raw_cpu),
            "sample_age_seconds": stats.sample_age.map(|age| age.as_secs_f64()),
            "polls": stats.polls,
            "monitor_started": self.guard.monitor_started(),
            "monitor_failures": stats.consecutive_failures,
            "monitor_failures_total": stats.total_failures,
            "nodes": stats.nodes,
            "failed_nodes": stats.failed_nodes,
            "rejected_web": stats.rejected_web,
            "rejected_api": stats.rejected_api,
            "rejecting": {
                "web": stats.rejecting_web,
                "api": stats.rejecting_api,
            },
            "transitions": stats.transitions,
            "mode": match stats.settings.mode {
                Mode::Enforce => "enforce",
                Mode::Monitor => "monitor",
            },
            "thresholds": {
                "web": config.control.web_threshold.get(),
                "api": config.control.api_threshold.get(),
                "adaptive": adaptive.threshold,
            },
            "cluster": match &config.cluster.urls {
                Some(urls) => urls.to_string(),
                None => "local (this machine's CPU)".to_owned(),
            },
            "cluster_answered": self.answered(),
            "local_cpu": percent(adaptive.cpu),
            "adaptive": {
                "waits": adaptive.waits,
                "waited_seconds": adaptive.waited.as_secs_f64(),
                "sampler_failures": adaptive.failures,
            },
            "crawler": {
                "processed": self.crawled(),
                "waiting": adaptive.waiting,
                "indexed": self.indexed(),
                "index_errors": self.index_errors.load(Ordering::Relaxed),
                "corpus": self.corpus.len(),
                "index": self.search.as_ref().map(Search::index),
            },
        })
    }

    /// The `/admin/load` page, refreshing itself every `refresh` seconds (0: never).
    #[must_use]
    pub fn dashboard(&self, refresh: u32) -> String {
        let config = self.config();
        let cluster = self.guard.history().snapshot();
        let local = self.background.history().snapshot();
        let cluster_now = self.guard.clock().now();
        let local_now = self.background.clock().now();
        let stats = self.background.stats();
        let live = self.guard.stats();
        let mut settings: Vec<(&'static str, String)> = [
            keys::WEB_LOAD_CONTROL,
            keys::API_LOAD_CONTROL,
            keys::ADAPTIVE_LOAD_CONTROL,
            keys::MODE,
            keys::MONITOR_INTERVAL,
            keys::FAILURE_POLICY,
            keys::SMOOTHING,
            keys::SEARCH_ENGINE_URL,
        ]
        .into_iter()
        .filter_map(keys::find)
        .map(|key| {
            let value = key.value(&config).to_string();
            let value = match value.as_str() {
                "" if key.name() == keys::SEARCH_ENGINE_URL => {
                    "not set: single box, this machine's CPU".to_owned()
                }
                "" => "not set".to_owned(),
                _ => value,
            };
            (key.name(), value)
        })
        .collect();
        settings.push((
            "answered the last poll",
            match (&config.cluster.urls, self.answered()) {
                (None, _) => "this machine".to_owned(),
                (Some(_), Some(url)) => url,
                (Some(_), None) => "none yet".to_owned(),
            },
        ));
        let view =
            dashboard::View {
                cluster: &cluster,
                cluster_now,
                local: &local,
                local_now,
                window: dashboard_window(
                    config.control.monitor_interval,
                    [
                        cluster
                            .oldest()
                            .map(|p| cluster_now.saturating_duration_since(p.at)),
                        local
                            .oldest()
                            .map(|p| local_now.saturating_duration_since(p.at)),
                    ],
                ),
                web_threshold: config.control.web_threshold,
                api_threshold: config.control.api_threshold,
                adaptive_threshold: config.control.adaptive_threshold,
                smoothing: !matches!(config.control.smoothing, Smoothing::None),
                mode: config.control.mode,
                monitor_started: self.guard.monitor_started(),
                rejecting_web: live.rejecting_web,
                rejecting_api: live.rejecting_api,
                crawled: self.crawled(),
                indexed: self.search.as_ref().map(|_| self.indexed()),
                waiting: stats.waiting,
                settings,
                last_error: self.guard.history().last_error().map(|(at, error)| {
                    (error.to_string(), cluster_now.saturating_duration_since(at))
                }),
                refresh,
            };
        dashboard::page(&view)
    }

    /// The address (without credentials) that answered the last successful poll, if any.
    #[must_use]
    pub fn answered(&self) -> Option<String> {
        let urls = self.config().cluster.urls?;
        let index = self.guard.stats().endpoint?;
        urls.get(usize::from(index))
            .map(|url| url.without_credentials().to_string())
    }

    /// The `/metrics` exposition.
    #[must_use]
    pub fn metrics(&self) -> String {
        crate::metrics::render(
            &self.guard.stats(),
            &self.background.stats(),
            self.crawled(),
            self.answered().as_deref(),
        )
    }
}

/// An answer ready at once, or a search to run on the cluster.
enum Routed<'a> {
    Ready(Response<Full<Bytes>>),
    Search {
        search: &'a Search,
        api: bool,
        query: String,
    },
}

/// Logs failed searches at WARN, at most once every 10 s with the count in between: an
/// outage must not flood the log at the request rate.
#[derive(Debug, Default)]
struct FailureLog {
    /// Seconds since `UNIX_EPOCH` of the last line.
    last: AtomicU64,
    suppressed: AtomicU64,
}

impl FailureLog {
    fn failed(&self, error: &SearchError) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let last = self.last.load(Ordering::Relaxed);
        if now >= last + 10
            && self
                .last
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            let more = self.suppressed.swap(0, Ordering::Relaxed);
            log::warn!("Search failed: {error} ({more} more failure(s) since the last line)");
        } else {
            self.suppressed.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn search_form(query: &str) -> String {
    format!(
        "<form action=\"/search\"><input name=\"q\" value=\"{}\"> <button>Search</button></form>",
        escape(query)
    )
}

fn hits_html(form: &str, hits: &Hits) -> String {
    let mut out = format!(
        "{form}\n<p>{} document(s), {} ms.</p>\n<ol>\n",
        hits.total, hits.took_ms
    );
    for hit in &hits.hits {
        // The address comes from the index: only a web address becomes a link.
        let web = hit.url.split_once(':').is_some_and(|(scheme, _)| {
            scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")
        });
        let title = if web {
            format!(
                "<a href=\"{}\">{}</a>",
                escape(&hit.url),
                escape(&hit.title)
            )
        } else {
            escape(&hit.title)
        };
        out.push_str(&format!("<li>{title}<br>{}</li>\n", hit.fragment_html()));
    }
    out.push_str("</ol>");
    out
}

/// Fess's API answer for a page of hits.
fn api_hits(query: &str, total: u64, result: &[serde_json::Value]) -> serde_json::Value {
    json!({"response": {"status": 0, "q": query, "record_count": total, "page_size": PAGE_SIZE,
                        "result": result}})
}

/// How often `/admin/load` refreshes itself by default, in seconds.
pub const DASHBOARD_REFRESH: u32 = 2;

/// The time the dashboard's charts span: the time the histories cover (`ages` of their
/// oldest points), in whole minutes from 1 up to what a full history holds at `interval`
/// (5 minutes at the default 1 s). A fresh server shows its first minute, not five empty ones.
#[must_use]
pub fn dashboard_window(interval: Duration, ages: [Option<Duration>; 2]) -> Duration {
    let points = u32::try_from(load_smol::history::HISTORY_LEN).unwrap_or(u32::MAX);
    let full = interval.saturating_mul(points);
    let seen = ages.into_iter().flatten().max().unwrap_or_default();
    let minutes = seen.as_secs().div_ceil(60).max(1);
    Duration::from_secs(minutes.saturating_mul(60)).min(full)
}

fn respond(status: StatusCode, content_type: &'static str, body: Bytes) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn html(status: StatusCode, body: &str) -> Response<Full<Bytes>> {
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

fn json_response(status: StatusCode, value: &serde_json::Value) -> Response<Full<Bytes>> {
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

use dashboard::escape;

fn page(title: &str, body: &str) -> String {
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
