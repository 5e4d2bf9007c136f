//! What the monitors log: Fess's wording and levels, bounded volume, no credentials.
//!
//! One test runs every scenario on both runtimes in turn, because the log capture is global
//! to this test binary.

use std::time::Duration;

use load_core::{Class, Config, CpuPercent, CpuSource, FixedSource, RejectReason, config::NodeUrl};
use load_opensearch::{OpenSearchOptions, OpenSearchSource};
use load_runtime::{BackgroundGate, LoadGuard, Runtime};
use load_tests::logs::{self, Record};
use load_tests::{Reply, Stub, wait_until};

/// Where else a 429 is explained agrees with the log line the caller checks: the stats
/// count `web` web requests under `reason` and nothing under any other, their total is the
/// class's, and the metric gives each reason's count under its word.
fn the_counts_agree<R: Runtime, S: CpuSource + Send + 'static>(
    guard: &LoadGuard<R, S>,
    reason: RejectReason,
    web: u32,
) {
    let stats = guard.stats();
    for each in RejectReason::ALL {
        let expected = if each == reason { web } else { 0 };
        assert_eq!(
            stats.rejections_web.get(each),
            expected,
            "{each}: {stats:?}"
        );
        assert_eq!(stats.rejections_api.get(each), 0, "{each}: {stats:?}");
    }
    assert_eq!(stats.rejected_web, web);
    let mut registry = prometheus_client::registry::Registry::default();
    load_runtime::prometheus::LoadCollector::new()
        .guard(guard)
        .register(&mut registry);
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).expect("encoded");
    for each in RejectReason::ALL {
        let count = stats.rejections_web.get(each);
        let line = format!(
            "load_control_rejected_requests_total{{class=\"web\",reason=\"{each}\"}} {count}"
        );
        assert!(
            text.lines().any(|l| l == line),
            "{line} missing from:\n{text}"
        );
    }
}

fn matching(records: &[Record], prefix: &str) -> Vec<Record> {
    records
        .iter()
        .filter(|r| r.message.starts_with(prefix))
        .cloned()
        .collect()
}

async fn cluster_monitor<R: Runtime + Default>() {
    logs::start();
    let stub = Stub::start(Reply::cpu(&[90, 12]));
    let url = NodeUrl::parse(&stub.url_with_credentials("admin", "s3cret")).expect("url");
    let source = OpenSearchSource::with_options(
        &url,
        OpenSearchOptions::new().timeout(Duration::from_secs(2)),
    )
    .expect("source");
    let mut config = Config::new();
    config.control.web_threshold = 80.into();
    config.control.monitor_interval = Duration::from_millis(40);
    let guard = LoadGuard::<R, _>::with_source(&config.control, source);

    let _ = guard.check("/search");
    assert!(wait_until(Duration::from_secs(5), || guard.cpu()
        == CpuPercent::new(90)));
    for _ in 0..7 {
        assert!(!guard.check("/search?q=x").is_allowed());
    }
    the_counts_agree(&guard, RejectReason::Cpu, 7);
    for _ in 0..3 {
        assert!(guard.check("/api/v1/x").is_allowed(), "API control is off");
    }
    stub.set(Reply::reset());
    assert!(wait_until(Duration::from_secs(5), || guard
        .status()
        .failures()
        .consecutive()
        >= 6));
    stub.set(Reply::cpu(&[85]));
    assert!(wait_until(Duration::from_secs(5), || guard.cpu()
        == CpuPercent::new(85)));
    guard.shutdown().await;

    let records = logs::records();
    assert!(
        records
            .iter()
            .any(|r| r.level == log::Level::Debug && r.message == "Search Engine CPU: 90%"),
        "{records:#?}"
    );
    assert!(
        records
            .iter()
            .any(|r| r.message == "Search Engine CPU: 85%")
    );

    let failures = matching(&records, "Failed to get search engine CPU stats: ");
    assert!(failures.len() >= 6, "{failures:#?}");
    let levels: Vec<log::Level> = failures.iter().map(|r| r.level).collect();
    assert_eq!(&levels[..3], [log::Level::Warn; 3], "{failures:#?}");
    assert!(
        levels[3..].iter().all(|&l| l == log::Level::Debug),
        "{failures:#?}"
    );

    let summaries = matching(&records, "Rejecting request due to high CPU load: ");
    assert_eq!(
        summaries.len(),
        1,
        "one summary for the burst: {summaries:#?}"
    );
    assert_eq!(summaries[0].level, log::Level::Info);
    assert_eq!(
        summaries[0].message,
        "Rejecting request due to high CPU load: 7 web request(s) (threshold=80%) since the last poll, cpu=90%, reason=cpu"
    );

    for record in &records {
        assert!(
            !record.message.contains("s3cret"),
            "credentials logged: {record:?}"
        );
    }
}

async fn adaptive_sampler<R: Runtime + Default>() {
    logs::start();
    let source: &'static FixedSource = Box::leak(Box::new(FixedSource::new(CpuPercent::new(90))));
    let gate = BackgroundGate::<R, _>::with_source_every(
        load_core::GateThreshold::from_fess(50),
        Duration::from_millis(20),
        source,
    );
    assert!(wait_until(Duration::from_secs(5), || gate.cpu() == CpuPercent::new(90)));
    let waiters: Vec<_> = (0..5)
        .map(|_| {
            let gate = gate.clone();
            std::thread::spawn(move || gate.wait_blocking())
        })
        .collect();
    assert!(wait_until(Duration::from_secs(5), || gate.waiting() == 5));
    let taken = source.taken();
    assert!(wait_until(Duration::from_secs(5), || source.taken() >= taken + 5));
    source.set(CpuPercent::new(10));
    for waiter in waiters {
        assert_eq!(waiter.join().expect("waiter"), load_core::Pass::Proceed);
    }
    gate.shutdown().await;

    let records = logs::records();
    let busy = matching(&records, "Cpu Load 90% is greater than 50%. ");
    assert!(!busy.is_empty(), "{records:#?}");
    assert!(busy.iter().all(|r| r.level == log::Level::Info));
    assert!(
        busy.iter()
            .any(|r| r.message.ends_with("5 waiting thread(s).")),
        "{busy:#?}"
    );
    assert!(
        busy.len() <= source.taken() as usize,
        "at most one line per sample, not per waiter: {} lines, {} samples",
        busy.len(),
        source.taken()
    );
}

/// The limit mode says what it does: a class is armed (not rejected), and a rejection is a
/// request of an armed class over the in-flight cap, with the cap.
async fn limit_mode<R: Runtime + Default>() {
    logs::start();
    let source: &'static FixedSource = Box::leak(Box::new(FixedSource::new(CpuPercent::new(90))));
    let config = Config::from_properties(
        "web.load.control=80\nload.control.admission=limit\nload.control.admission.initial=2",
    )
    .expect("config");
    let mut control = config.control;
    control.monitor_interval = Duration::from_millis(40);
    let guard = LoadGuard::<R, _>::with_source(&control, source);
    let _ = guard.check("/css/a.css"); // excluded: starts nothing
    drop(guard.admit("/search"));
    assert!(wait_until(Duration::from_secs(5), || guard
        .control()
        .is_armed(Class::Web)));
    let held: Vec<_> = (0..2)
        .filter_map(|_| guard.admit("/search").permit())
        .collect();
    assert_eq!(held.len(), 2, "the initial cap");
    for _ in 0..3 {
        assert!(!guard.admit("/search?q=x").is_admitted(), "over the cap");
    }
    the_counts_agree(&guard, RejectReason::Cap, 3);
    let summary = "Rejecting request over the in-flight cap: ";
    assert!(wait_until(Duration::from_secs(5), || !matching(
        &logs::records(),
        summary
    )
    .is_empty()));
    drop(held);
    guard.shutdown().await;

    let records = logs::records();
    let armed = matching(&records, "Load control: web requests now armed: ");
    assert_eq!(armed.len(), 1, "{records:#?}");
    assert_eq!(
        armed[0].message,
        "Load control: web requests now armed: in-flight cap 2 (cpu=90%, threshold=80%)"
    );
    let summaries = matching(&records, summary);
    assert_eq!(summaries.len(), 1, "{summaries:#?}");
    assert_eq!(summaries[0].level, log::Level::Info);
    assert_eq!(
        summaries[0].message,
        "Rejecting request over the in-flight cap: 3 web request(s) (armed) since the last \
         poll, cap=2, cpu=90%, reason=cap"
    );
    assert!(
        matching(&records, "Rejecting request due to high CPU load").is_empty(),
        "Fess's wording is for Fess's mode: {records:#?}"
    );
}

/// Monitor mode (README, *Configuration*: `load.control.mode=monitor` "logs what it would
/// have rejected and admits it"): the transition and the summary say so in their own words,
/// the requests are admitted, and Fess's enforcing wording never appears.
async fn monitor_mode<R: Runtime + Default>() {
    logs::start();
    let source: &'static FixedSource = Box::leak(Box::new(FixedSource::new(CpuPercent::new(90))));
    let config =
        Config::from_properties("web.load.control=80\nload.control.mode=monitor").expect("config");
    let mut control = config.control;
    control.monitor_interval = Duration::from_millis(40);
    let guard = LoadGuard::<R, _>::with_source(&control, source);
    let _ = guard.check("/search");
    assert!(wait_until(Duration::from_secs(5), || guard
        .control()
        .is_armed(Class::Web)));
    for _ in 0..4 {
        assert!(
            guard.check("/search?q=x").is_allowed(),
            "monitor mode admits"
        );
    }
    let summary = "Would reject request due to high CPU load (monitor mode, admitted): ";
    assert!(wait_until(Duration::from_secs(5), || !matching(
        &logs::records(),
        summary
    )
    .is_empty()));
    guard.shutdown().await;

    let records = logs::records();
    let over = matching(
        &records,
        "Load control: web requests now over the threshold",
    );
    assert_eq!(over.len(), 1, "{records:#?}");
    assert_eq!(
        over[0].message,
        "Load control: web requests now over the threshold (monitor mode: still admitted) \
         (cpu=90%, threshold=80%)"
    );
    let summaries = matching(&records, summary);
    assert_eq!(summaries.len(), 1, "{summaries:#?}");
    assert_eq!(summaries[0].level, log::Level::Info);
    assert_eq!(
        summaries[0].message,
        "Would reject request due to high CPU load (monitor mode, admitted): 4 web request(s) \
         (threshold=80%) since the last poll, cpu=90%, reason=cpu"
    );
    assert!(
        matching(&records, "Rejecting request").is_empty(),
        "the enforcing wording is for enforcing: {records:#?}"
    );
}

/// The flood bound says what it does, and the same everywhere: the log's refusals under
/// `reason=flood` add up to the stats' and the metric's flood count, and the operator page
/// gives it in its rejections line. The flood: in flight grows by 10 a bucket with one
/// request answered in each, on a class the CPU (10 %) leaves disarmed.
async fn flood_bound<R: Runtime + Default>() {
    logs::start();
    let source: &'static FixedSource = Box::leak(Box::new(FixedSource::new(CpuPercent::new(10))));
    let config = Config::from_properties("web.load.control=80\nload.control.admission=limit")
        .expect("config");
    let mut control = config.control;
    control.monitor_interval = Duration::from_millis(40);
    let guard = LoadGuard::<R, _>::with_source(&control, source);
    drop(guard.admit("/search"));
    assert!(wait_until(Duration::from_secs(5), || guard.cpu()
        == CpuPercent::new(10)));
    std::thread::sleep(Duration::from_millis(200)); // quiet polls: nothing held
    let mut held = Vec::new();
    let mut refused = 0;
    for _ in 0..30 {
        drop(held.pop()); // one answered: the bucket's first completion looks at the flood
        for _ in 0..10 {
            match guard.admit("/search?q=flood").permit() {
                Some(permit) => held.push(permit),
                None => refused += 1,
            }
        }
        if refused > 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(110));
    }
    assert!(
        refused > 0,
        "never bounded: {:?}",
        guard.control().admission()
    );
    assert!(
        !guard.control().is_armed(Class::Web),
        "the CPU never armed it"
    );
    for _ in 0..5 {
        assert!(
            !guard.admit("/search?q=more").is_admitted(),
            "over the bound"
        );
        refused += 1;
    }
    let logged = |records: &[Record]| -> u32 {
        matching(records, "Refusing request over the flood bound: ")
            .iter()
            .map(|r| {
                let count = r.message.split_whitespace().nth(6).expect("count");
                count.parse::<u32>().expect("a count")
            })
            .sum()
    };
    assert!(
        wait_until(Duration::from_secs(5), || logged(&logs::records())
            == refused),
        "logged {} of {refused}",
        logged(&logs::records())
    );
    the_counts_agree(&guard, RejectReason::Flood, refused);
    let page = load_runtime::dashboard::page(
        &load_runtime::dashboard::Snapshot::of(&guard)
            .view(0)
            .with_settings(&config),
    );
    let line = format!(
        "<p id=\"rejected-in-all\">Rejected in all: web {refused} (cpu 0, cap 0, flood {refused}), \
         API 0 (cpu 0, cap 0, flood 0).</p>"
    );
    assert!(page.contains(&line), "{line} missing from:\n{page}");
    drop(held);
    guard.shutdown().await;

    let records = logs::records();
    let engaged = matching(&records, "Load control: flood bound engaged: ");
    assert_eq!(engaged.len(), 1, "{records:#?}");
    assert_eq!(engaged[0].level, log::Level::Warn);
    let refusals = matching(&records, "Refusing request over the flood bound: ");
    assert!(
        refusals
            .iter()
            .all(|r| r.level == log::Level::Info && r.message.ends_with("reason=flood")),
        "{refusals:#?}"
    );
    assert!(
        matching(&records, "Rejecting request").is_empty(),
        "no CPU or cap wording for the flood's refusals: {records:#?}"
    );
}

/// Asking for the cgroup where there is none to read falls back to the host with one line.
fn cgroup_fallback_is_one_line() {
    logs::start();
    let odd = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/cgroup/odd");
    let source =
        load_system::SystemSource::with_kind(load_core::config::CpuSourceKind::Cgroup, &odd)
            .expect("host");
    assert!(matches!(
        source.measures(),
        load_system::LocalCpu::Host { .. }
    ));
    let warnings: Vec<Record> = logs::records()
        .into_iter()
        .filter(|r| r.level <= log::Level::Warn)
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(
        warnings[0]
            .message
            .starts_with("adaptive.load.control.source=cgroup: no readable cgroup CPU accounting")
    );
    assert!(warnings[0].message.ends_with("measuring the host instead"));
}

#[test]
fn monitors_log_like_fess_with_bounded_volume_and_no_credentials() {
    cgroup_fallback_is_one_line();
    smol::block_on(cluster_monitor::<load_smol::Smol>());
    async_std::task::block_on(cluster_monitor::<load_async_std::AsyncStd>());
    smol::block_on(adaptive_sampler::<load_smol::Smol>());
    async_std::task::block_on(adaptive_sampler::<load_async_std::AsyncStd>());
    smol::block_on(monitor_mode::<load_smol::Smol>());
    async_std::task::block_on(monitor_mode::<load_async_std::AsyncStd>());
    smol::block_on(limit_mode::<load_smol::Smol>());
    async_std::task::block_on(limit_mode::<load_async_std::AsyncStd>());
    smol::block_on(flood_bound::<load_smol::Smol>());
    async_std::task::block_on(flood_bound::<load_async_std::AsyncStd>());
}
