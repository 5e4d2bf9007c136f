//! What the demo shows of load control: `/admin/stats` (JSON), `/admin/load` (the
//! operator's page) and `/metrics` (Prometheus).

use std::sync::atomic::Ordering;
use std::time::Duration;

use load_smol::{AdmissionMode, Clock, Mode, Runtime, Smoothing, keys};
use serde_json::json;

use super::App;
use crate::dashboard;
use crate::search::Search;

impl<R: Runtime + Default> App<R> {
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
            "admission": {
                "mode": match stats.settings.admission {
                    AdmissionMode::Threshold => "threshold",
                    AdmissionMode::Limit => "limit",
                },
                "armed": {
                    "web": stats.admission.armed_web,
                    "api": stats.admission.armed_api,
                },
                "cap": f64::from(stats.admission.cap_hundredths) / 100.0,
                "ceiling": (stats.admission.ceiling != u32::MAX).then_some(stats.admission.ceiling),
                "cap_learned": stats.admission.learned,
                "in_flight": stats.admission.in_flight,
                "completed": stats.admission.completed,
                "admitted_share_last_poll": self.admitted_share(),
                "flood": {
                    "bounded": stats.admission.flooding,
                    "refused": stats.admission.rejected_flood,
                    "engaged_at_in_flight": stats.admission.flood_engaged_at,
                },
                "fleet": {
                    "refused_share_percent": stats.admission.refused_percent,
                    "cluster_search_pool": stats.admission.search_pool.map(|pool| json!({
                        "threads": pool.threads,
                        "active": pool.active,
                        "queue": pool.queue,
                    })),
                },
            },
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
            keys::ADMISSION,
            keys::ADMISSION_COOLOFF,
            keys::ADMISSION_INITIAL,
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
                admission: config.control.admission,
                live: live.admission,
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

    /// The share of controlled requests admitted between the last two polls (completions
    /// over completions and rejections; the limit mode counts completions), `None` before
    /// a poll or when nothing was asked.
    #[must_use]
    pub fn admitted_share(&self) -> Option<f64> {
        let latest = self.guard.history().snapshot().latest()?;
        let rejected = f64::from(latest.rejected_web) + f64::from(latest.rejected_api);
        let completed = f64::from(latest.completed);
        (rejected + completed > 0.0).then(|| completed / (completed + rejected))
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
