//! `/metrics`: the guard's and the gate's snapshots in the Prometheus text format, through
//! the `prometheus-client` crate.

use std::sync::atomic::AtomicU64;

use load_smol::BackgroundStats;
use load_smol::{AdmissionMode, Mode, Stats};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

type Labels = Vec<(String, String)>;

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn gauge(registry: &mut Registry, name: &str, help: &str, value: i64) {
    let metric = Gauge::<i64>::default();
    metric.set(value);
    registry.register(name, help, metric);
}

fn gauge_f64(registry: &mut Registry, name: &str, help: &str, value: f64) {
    let metric = Gauge::<f64, AtomicU64>::default();
    metric.set(value);
    registry.register(name, help, metric);
}

fn counter(registry: &mut Registry, name: &str, help: &str, value: u64) {
    let metric = Counter::<u64>::default();
    metric.inc_by(value);
    registry.register(name, help, metric);
}

fn by_label(registry: &mut Registry, name: &str, help: &str, rows: &[(&[(&str, &str)], i64)]) {
    let family = Family::<Labels, Gauge>::default();
    for (pairs, value) in rows {
        family.get_or_create(&labels(pairs)).set(*value);
    }
    registry.register(name, help, family);
}

fn counter_by_label(
    registry: &mut Registry,
    name: &str,
    help: &str,
    rows: &[(&[(&str, &str)], u64)],
) {
    let family = Family::<Labels, Counter>::default();
    for (pairs, value) in rows {
        family.get_or_create(&labels(pairs)).inc_by(*value);
    }
    registry.register(name, help, family);
}

/// The exposition for one scrape. A missing value (CPU unknown, no sample yet) is left
/// out rather than reported as 0.
#[must_use]
pub fn render(
    stats: &Stats,
    adaptive: &BackgroundStats,
    crawled: u64,
    answered: Option<&str>,
) -> String {
    let mut registry = Registry::with_prefix("load_control");
    if let Some(url) = answered {
        by_label(
            &mut registry,
            "cluster_answered",
            "The cluster address that answered the last successful poll (value 1)",
            &[(&[("url", url)], 1)],
        );
    }
    let mut cpu_rows: Vec<(&[(&str, &str)], i64)> = Vec::new();
    if let Some(cpu) = stats.cpu {
        cpu_rows.push((&[("value", "effective")], i64::from(cpu.get())));
    }
    if let Some(cpu) = stats.raw_cpu {
        cpu_rows.push((&[("value", "raw")], i64::from(cpu.get())));
    }
    by_label(
        &mut registry,
        "cluster_cpu_percent",
        "Cluster CPU: the value decisions use, and the last raw sample",
        &cpu_rows,
    );
    if let Some(age) = stats.sample_age {
        gauge_f64(
            &mut registry,
            "sample_age_seconds",
            "Time since the last successful cluster sample",
            age.as_secs_f64(),
        );
    }
    counter(
        &mut registry,
        "polls",
        "Cluster polls recorded, successful or not",
        u64::from(stats.polls),
    );
    counter(
        &mut registry,
        "poll_failures",
        "Failed cluster polls",
        u64::from(stats.total_failures),
    );
    gauge(
        &mut registry,
        "poll_failures_consecutive",
        "Failed cluster polls since the last success",
        i64::from(stats.consecutive_failures),
    );
    by_label(
        &mut registry,
        "cluster_nodes",
        "Nodes in the last successful poll",
        &[
            (&[("state", "answered")], i64::from(stats.nodes)),
            (&[("state", "failed")], i64::from(stats.failed_nodes)),
        ],
    );
    counter_by_label(
        &mut registry,
        "rejected_requests",
        "Requests rejected per class (in monitor mode: that would have been)",
        &[
            (&[("class", "web")], u64::from(stats.rejected_web)),
            (&[("class", "api")], u64::from(stats.rejected_api)),
        ],
    );
    by_label(
        &mut registry,
        "rejecting",
        "1 while a class is in the rejecting state",
        &[
            (&[("class", "web")], i64::from(stats.rejecting_web)),
            (&[("class", "api")], i64::from(stats.rejecting_api)),
        ],
    );
    by_label(
        &mut registry,
        "threshold_percent",
        "Thresholds in force (100: not controlled)",
        &[
            (
                &[("class", "web")],
                i64::from(stats.settings.web_threshold.get()),
            ),
            (
                &[("class", "api")],
                i64::from(stats.settings.api_threshold.get()),
            ),
            (&[("class", "adaptive")], i64::from(adaptive.threshold)),
        ],
    );
    gauge(
        &mut registry,
        "admission_limit_mode",
        "1 with load.control.admission=limit (an in-flight cap while armed)",
        i64::from(stats.settings.admission == AdmissionMode::Limit),
    );
    by_label(
        &mut registry,
        "armed",
        "1 while a class is armed (in the threshold mode: rejecting)",
        &[
            (&[("class", "web")], i64::from(stats.admission.armed_web)),
            (&[("class", "api")], i64::from(stats.admission.armed_api)),
        ],
    );
    gauge_f64(
        &mut registry,
        "admission_cap",
        "The in-flight cap while armed, in requests (a fraction is one more request that share of the time)",
        f64::from(stats.admission.cap_hundredths) / 100.0,
    );
    gauge(
        &mut registry,
        "flood_bounded",
        "1 while the flood bound holds: in flight kept growing above what the cluster's completions support while no class was armed",
        i64::from(stats.admission.flooding),
    );
    counter(
        &mut registry,
        "flood_refused_requests",
        "Requests refused by the flood bound (not by the CPU: apart from rejected_requests)",
        u64::from(stats.admission.rejected_flood),
    );
    gauge(
        &mut registry,
        "refused_share_percent",
        "The share of this front end's demand refused between the last two polls (the fleet law grows the cap with it)",
        i64::from(stats.admission.refused_percent),
    );
    if let Some(pool) = stats.admission.search_pool {
        by_label(
            &mut registry,
            "cluster_search_pool",
            "The busiest node's search thread pool at the last poll (the signal every front end of a fleet shares)",
            &[
                (&[("state", "threads")], i64::from(pool.threads)),
                (&[("state", "active")], i64::from(pool.active)),
                (&[("state", "queue")], i64::from(pool.queue)),
            ],
        );
    }
    gauge(
        &mut registry,
        "in_flight",
        "Admitted, counted requests being served (the limit mode counts them)",
        i64::from(stats.admission.in_flight),
    );
    counter(
        &mut registry,
        "completed_requests",
        "Counted requests completed (the limit mode counts them); the share admitted is its rate over its rate plus the rejections'",
        u64::from(stats.admission.completed),
    );
    gauge(
        &mut registry,
        "monitor_mode",
        "1 in monitor mode (nothing rejected)",
        i64::from(stats.settings.mode == Mode::Monitor),
    );
    counter(
        &mut registry,
        "transitions",
        "Entries into the rejecting state",
        u64::from(stats.transitions),
    );
    if let Some(cpu) = adaptive.cpu {
        gauge(
            &mut registry,
            "local_cpu_percent",
            "This machine's (or container's) CPU",
            i64::from(cpu.get()),
        );
    }
    gauge(
        &mut registry,
        "adaptive_waiting",
        "Background tasks waiting at the adaptive gate",
        i64::from(adaptive.waiting),
    );
    counter(
        &mut registry,
        "adaptive_waits",
        "Waits at the adaptive gate that had to sleep",
        adaptive.waits,
    );
    gauge_f64(
        &mut registry,
        "adaptive_waited_seconds",
        "Total time background work waited",
        adaptive.waited.as_secs_f64(),
    );
    counter(
        &mut registry,
        "crawler_processed",
        "Items the demo crawler processed",
        crawled,
    );
    let mut text = String::new();
    // Writing into a String cannot fail.
    let _ = encode(&mut text, &registry);
    text
}
