//! The page without a browser: the SVG charts as pure functions of a fixed history (each
//! checked against numbers worked out by hand, then against a committed snapshot), the
//! page's escaping, and what it shows with and without background work. The browser test
//! is `tests/tests/dashboard_browser.rs`.
//!
//! `UPDATE_SNAPSHOTS=1 cargo test -p load-runtime --features dashboard dashboard` rewrites
//! the snapshots; review the diff before committing it.

use std::path::PathBuf;
use std::time::Duration;

use load_core::history::{ClusterHistory, ClusterPoint, LocalHistory, LocalPoint, Timeline};
use load_core::monitor::{ClusterSink, LocalSink, Sink};
use load_core::source::SourceKind;
use load_core::{
    AdaptiveGate, AdmissionMode, ClusterStatus, CpuPercent, CpuSample, GateThreshold, Instant,
    LoadControl, Mode, Outcome, Rejections, Threshold,
};

use super::view::{Background, View};

mod charts;
mod page;

/// The cluster's CPU at seconds 1 to 12 (`None`: the poll failed), and the web and API
/// requests tried after each poll.
const POLLS: [(Option<u8>, usize, usize); 12] = [
    (Some(30), 2, 1),
    (Some(30), 2, 1),
    (Some(30), 2, 1),
    (Some(80), 2, 1), // web rejecting from here (threshold 70)
    (Some(80), 2, 1),
    (Some(95), 2, 1), // API rejecting from here (threshold 90)
    (Some(95), 2, 1),
    (Some(95), 2, 1),
    (Some(80), 2, 1), // API admitted again
    (None, 2, 1),     // failed: Fess's policy reads 0 %, so web is admitted again
    (Some(20), 2, 1),
    (Some(20), 2, 1),
];

fn cluster_history() -> ClusterHistory {
    let control = LoadControl::new(70, 90);
    let history = ClusterHistory::new();
    let status = ClusterStatus::new();
    let sink = ClusterSink::new(&control, &status).with_history(&history);
    for (second, (cpu, web, api)) in (1..).zip(POLLS) {
        let now = Instant::from_secs(second);
        match cpu {
            Some(cpu) => sink.on_sample(now, &CpuSample::local(CpuPercent::new(cpu))),
            None => sink.on_outcome(now, Outcome::Failed),
        }
        for _ in 0..web {
            let _ = control.check("/search?q=a");
        }
        for _ in 0..api {
            let _ = control.check("/api/v1/documents?q=a");
        }
    }
    history
}

fn local_history() -> LocalHistory {
    let gate: AdaptiveGate = AdaptiveGate::new(GateThreshold::from_fess(75));
    let history = LocalHistory::new();
    let sink = LocalSink::new(&gate).with_history(&history);
    for (second, cpu) in (1..).zip([40, 50, 90, 95, 60, 40]) {
        sink.on_outcome(
            Instant::from_secs(second),
            Outcome::Sample(CpuPercent::new(cpu)),
        );
    }
    history
}

fn view<'a>(cluster: &'a Timeline<ClusterPoint>, local: &'a Timeline<LocalPoint>) -> View<'a> {
    View {
        source: Some(SourceKind::Cluster),
        cluster,
        cluster_now: Instant::from_secs(13),
        background: Some(Background {
            local,
            local_now: Instant::from_secs(7),
            threshold: GateThreshold::from_fess(75),
            waiting: 2,
            name: "Crawler".to_owned(),
            done: Some(1234),
            note: Some("12340 documents indexed".to_owned()),
        }),
        // 20 s: one second is 30 units wide, so every x below is easy to work out.
        window: Duration::from_secs(20),
        web_threshold: Threshold::from_fess(70),
        api_threshold: Threshold::from_fess(90),
        smoothing: false,
        mode: Mode::Enforce,
        admission: AdmissionMode::Threshold,
        live: LoadControl::new(70, 90).admission(),
        monitor_started: true,
        armed_web: false,
        armed_api: false,
        rejections_web: Rejections::default(),
        rejections_api: Rejections::default(),
        settings: vec![("web.load.control", "70".to_owned())],
        links: Vec::new(),
        last_error: None,
        refresh: 2,
    }
}

/// The background side of a view made by [`view`].
fn background<'v, 'a>(view: &'v mut View<'a>) -> &'v mut Background<'a> {
    view.background.as_mut().expect("a gate")
}

/// Compares `actual` with the committed snapshot `name`, or rewrites it with
/// `UPDATE_SNAPSHOTS=1`.
fn snapshot(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("src/dashboard/snapshots")
        .join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, actual).expect("write the snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run with UPDATE_SNAPSHOTS=1 to create it",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "{name} changed; run with UPDATE_SNAPSHOTS=1 and review the diff.\n--- expected\n{expected}\n--- actual\n{actual}"
    );
}

/// The value of `attribute` in each element of `svg` that has `class`.
fn attributes(svg: &str, class: &str, attribute: &str) -> Vec<String> {
    let marker = format!("class=\"{class}\"");
    svg.lines()
        .filter(|line| line.contains(&marker))
        .filter_map(|line| {
            let start = line.find(&format!(" {attribute}=\""))? + attribute.len() + 3;
            let end = start + line[start..].find('"')?;
            Some(line[start..end].to_owned())
        })
        .collect()
}
