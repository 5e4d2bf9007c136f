//! What the demo shows of load control: `/admin/stats` (JSON), `/admin/load` (the
//! operator's page) and `/metrics` (Prometheus).

use std::sync::atomic::Ordering;

use load_smol::{AdmissionMode, Mode, Runtime};
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
        // One field per reason, by the word the log and the metrics use.
        let by_reason = |rejections: load_smol::Rejections| {
            load_smol::RejectReason::ALL
                .iter()
                .map(|reason| (reason.as_str().to_owned(), json!(rejections.get(*reason))))
                .collect::<serde_json::Map<_, _>>()
        };
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
            "rejected_by_reason": {
                "web": by_reason(stats.rejections_web),
                "api": by_reason(stats.rejections_api),
            },
            "armed": {
                "web": stats.armed_web,
                "api": stats.armed_api,
            },
            "transitions": stats.transitions,
            "admission": {
                "mode": match stats.settings.admission {
                    AdmissionMode::Threshold => "threshold",
                    AdmissionMode::Limit => "limit",
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
                    // Whether the busiest node (or this machine's cores) is saturated.
                    "saturated": stats.admission.saturated,
                    // The law on a machine's own load: its requests in flight over its CPUs.
                    "own_cores": stats.admission.own_cores,
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
                // `null` when off (0 would read as reject-all beside web and api).
                "adaptive": adaptive.threshold.percent(),
            },
            "cluster": match &config.cluster.urls {
                Some(urls) => urls.to_string(),
                None => format!("local ({})", self.request_cpu),
            },
            "cpu_source": {
                "requests": self.request_cpu,
                "background": self.background_cpu,
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

    /// The `/admin/load` page, refreshing itself every `refresh` seconds (0: never): the
    /// library's page, with the crawler's counts and the address that answered.
    #[must_use]
    pub fn dashboard(&self, refresh: u32) -> String {
        let config = self.config();
        let snapshot = dashboard::Snapshot::of(&self.guard).with_background(&self.background);
        let mut view = snapshot
            .view(refresh)
            .with_settings(&config)
            .with_work("Crawler", self.crawled())
            .with_link("JSON: /admin/stats", "/admin/stats")
            .with_link("Prometheus: /metrics", "/metrics");
        if self.search.is_some() {
            view = view.with_work_note(&format!("{} documents indexed", self.indexed()));
        }
        view.settings.push((
            "answered the last poll",
            match (&config.cluster.urls, self.answered()) {
                (None, _) => "this machine".to_owned(),
                (Some(_), Some(url)) => url,
                (Some(_), None) => "none yet".to_owned(),
            },
        ));
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
            &self.guard,
            &self.background,
            self.crawled(),
            self.answered().as_deref(),
        )
    }
}

/// How often `/admin/load` refreshes itself by default, in seconds.
pub const DASHBOARD_REFRESH: u32 = dashboard::DEFAULT_REFRESH;
