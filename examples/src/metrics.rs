//! `/metrics`: the guard's and the gate's state in OpenMetrics text, through the
//! library's collector (`load_runtime::prometheus::LoadCollector`), and two metrics of the
//! demo's own.

use load_runtime::prometheus::prometheus_client::metrics::counter::Counter;
use load_runtime::prometheus::prometheus_client::metrics::family::Family;
use load_runtime::prometheus::prometheus_client::metrics::gauge::Gauge;
use load_runtime::prometheus::prometheus_client::registry::Registry;
use load_runtime::prometheus::{LoadCollector, scrape};
use load_runtime::{BackgroundGate, CpuSource, LoadGuard, Runtime};

/// The exposition for one scrape: the library's metrics of `guard` and `background`, the
/// address that answered the last poll and what the crawler processed.
#[must_use]
pub fn render<R, S, G>(
    guard: &LoadGuard<R, S>,
    background: &BackgroundGate<R, G>,
    crawled: u64,
    answered: Option<&str>,
) -> String
where
    R: Runtime,
    S: CpuSource + Send + 'static,
    G: Send + 'static,
{
    let mut registry = Registry::default();
    LoadCollector::new()
        .guard(guard)
        .gate(background)
        .register(&mut registry);
    let own = registry.sub_registry_with_prefix("load_control");
    if let Some(url) = answered {
        let family = Family::<Vec<(String, String)>, Gauge>::default();
        family
            .get_or_create(&vec![("url".to_owned(), url.to_owned())])
            .set(1);
        own.register(
            "cluster_answered",
            "The cluster address that answered the last successful poll (value 1)",
            family,
        );
    }
    let processed = Counter::<u64>::default();
    processed.inc_by(crawled);
    own.register(
        "crawler_processed",
        "Items the demo crawler processed",
        processed,
    );
    scrape(&registry).1
}
