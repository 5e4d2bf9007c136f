//! The charts' geometry, worked out by hand, and their committed snapshots.

use std::time::Duration;

use load_core::history::ClusterHistory;
use load_core::monitor::{ClusterSink, Sink};
use load_core::node_stats::SearchPool;
use load_core::time::ManualClock;
use load_core::{
    Admission, AdmissionMode, Class, ClusterStatus, Config, CpuPercent, CpuSample, GateThreshold,
    Instant, LoadControl, Threshold,
};

use super::super::charts::{cluster_chart, local_chart, nice_ceiling, rejections_chart};
use super::super::page::page as render;
use super::super::window;
use super::{attributes, background, cluster_history, local_history, snapshot, view};

#[test]
fn the_cluster_chart_draws_the_history() {
    let (cluster, local) = (cluster_history().snapshot(), local_history().snapshot());
    let svg = cluster_chart(&view(&cluster, &local), "Cluster CPU");

    // y = 8 + 160 * (100 - percent) / 100.
    assert_eq!(attributes(&svg, "threshold web", "y1"), ["56.0"]);
    assert_eq!(attributes(&svg, "threshold api", "y1"), ["24.0"]);
    // x = 56 + 600 * (1 - (13 - t) / 20) = 56 + 30 * (t + 7).
    // Web rejected from the poll at 4 s (x 386) to the failed poll at 10 s (x 566).
    assert_eq!(attributes(&svg, "shade web", "x"), ["386.0"]);
    assert_eq!(attributes(&svg, "shade web", "width"), ["180.0"]);
    // The API from 6 s (x 446) to 9 s (x 536).
    assert_eq!(attributes(&svg, "shade api", "x"), ["446.0"]);
    assert_eq!(attributes(&svg, "shade api", "width"), ["90.0"]);
    // The raw CPU, with a gap at the failed poll; no smoothed line when smoothing is off.
    assert_eq!(
        attributes(&svg, "series raw", "d"),
        [
            "M296.0 120.0 L326.0 120.0 L356.0 120.0 L386.0 40.0 L416.0 40.0 L446.0 16.0 \
          L476.0 16.0 L506.0 16.0 L536.0 40.0 M596.0 136.0 L626.0 136.0"
        ]
    );
    assert!(attributes(&svg, "series smoothed", "d").is_empty());
    assert_eq!(attributes(&svg, "failed", "x1"), ["566.0"]);

    snapshot("cluster_cpu.svg", &svg);
}

#[test]
fn the_rejection_chart_shows_rates_per_class() {
    let (cluster, local) = (cluster_history().snapshot(), local_history().snapshot());
    let svg = rejections_chart(&view(&cluster, &local));
    // Polls are 1 s apart: the web rate is 2/s while web was rejecting (the requests after
    // the polls at 4 to 9 s, counted at 5 to 10 s), the API's 1/s (after 6 to 8 s). The
    // scale's top is 2/s: y = 8 + 160 * (1 - rate / 2).
    let web = attributes(&svg, "series web", "d");
    assert_eq!(
        web,
        [
            "M326.0 168.0 L356.0 168.0 L386.0 168.0 L416.0 8.0 L446.0 8.0 L476.0 8.0 \
          L506.0 8.0 L536.0 8.0 L566.0 8.0 L596.0 168.0 L626.0 168.0"
        ]
    );
    assert_eq!(
        attributes(&svg, "series api", "d"),
        [
            "M326.0 168.0 L356.0 168.0 L386.0 168.0 L416.0 168.0 L446.0 168.0 L476.0 88.0 \
          L506.0 88.0 L536.0 88.0 L566.0 168.0 L596.0 168.0 L626.0 168.0"
        ]
    );
    assert_eq!(attributes(&svg, "series web", "data-max"), ["2"]);
    snapshot("rejections.svg", &svg);
}

/// With `load.control.admission=limit` the rejection chart also draws the in-flight cap
/// and the requests in flight at each poll, on the rejections' scale, and the badges name
/// the cap; in Fess's mode neither line is drawn.
#[test]
fn the_limit_mode_draws_the_cap_and_the_requests_in_flight() {
    let mut config = Config::default();
    config.control.web_threshold = 70.into();
    config.control.admission = AdmissionMode::Limit;
    config.control.admission_initial = 4;
    let control = LoadControl::from_config(&config.control);
    let clock = ManualClock::new(Instant::from_secs(1));
    let history = ClusterHistory::new();
    let status = ClusterStatus::new();
    let sink = ClusterSink::new(&control, &status).with_history(&history);
    let mut held = Vec::new();
    // Polls at 1 to 3 s: 30 % (disarmed), then 80 % twice (armed, cap 4). One more request
    // is held after each poll: 1, 2, 3 in flight at the polls after them.
    for (second, cpu) in (1..).zip([30, 80, 80, 80]) {
        sink.on_sample(
            Instant::from_secs(second),
            &CpuSample::local(CpuPercent::new(cpu)),
        );
        match control.admit("/search?q=a", &clock) {
            Admission::Admitted(permit) => held.push(permit),
            Admission::Rejected(_) => panic!("under the cap"),
        }
    }
    let (cluster, local) = (history.snapshot(), local_history().snapshot());
    let mut view = view(&cluster, &local);
    view.cluster_now = Instant::from_secs(4);
    view.admission = AdmissionMode::Limit;
    view.live = control.admission();
    view.armed_web = control.is_armed(Class::Web);
    // One request over the cap, and one only checked while armed: the cap's and the CPU's,
    // in the words of the log and the metrics.
    assert!(!control.admit("/search?q=b", &clock).is_admitted());
    assert!(!control.check("/search?q=c").is_allowed());
    view.rejections_web = control.rejections(Class::Web);
    assert!(
        render(&view).contains(
            "<p id=\"rejected-in-all\">Rejected in all: web 2 (cpu 1, cap 1, flood 0), API 0 \
             (cpu 0, cap 0, flood 0).</p>"
        ),
        "{}",
        render(&view)
    );

    let svg = rejections_chart(&view);
    // x = 56 + 600 * (1 - (4 - t) / 20) = 56 + 30 * (t + 16); the scale's top is the cap,
    // 4 requests (nice ceiling 5): y = 8 + 160 * (1 - count / 5).
    assert_eq!(attributes(&svg, "series cap", "data-max"), ["5"]);
    assert_eq!(
        attributes(&svg, "series cap", "d"),
        ["M566.0 40.0 L596.0 40.0 L626.0 40.0 L656.0 40.0"]
    );
    assert_eq!(
        attributes(&svg, "series inflight", "d"),
        ["M566.0 168.0 L596.0 136.0 L626.0 104.0 L656.0 72.0"]
    );
    let page = render(&view);
    assert!(
        page.contains("Web: armed (≥ 70%): cap 4, 4 in flight"),
        "{page}"
    );
    assert!(page.contains("the in-flight cap"), "{page}");
    // What the front end believes about the fleet: no pool in these polls.
    assert!(
        page.contains(
            "<p id=\"fleet\">What the limit mode reads: the poll did not report a load to read"
        ),
        "{page}"
    );
    // A poll with the busiest node's search pool.
    sink.on_sample(
        Instant::from_secs(5),
        &CpuSample::local(CpuPercent::new(90)).with_search_pool(SearchPool::new(13, 12, 3)),
    );
    view.live = control.admission();
    let page = render(&view);
    assert!(
        page.contains(
            "What the limit mode reads: the busiest node runs on 8 core(s): no mean yet since the \
             poll before, 3 queued and 12 of 13 search threads busy at the last poll; not \
             saturated (this front end's demand within what the CPU serves). This front end \
             refused 100 % of its demand between the last two polls"
        ),
        "{page}"
    );
    assert!(page.contains("Flood bound: idle.</p>"), "{page}");

    view.admission = AdmissionMode::Threshold;
    assert!(!render(&view).contains("id=\"fleet\""));
    let svg = rejections_chart(&view);
    assert!(attributes(&svg, "series cap", "d").is_empty(), "{svg}");
    assert!(attributes(&svg, "series inflight", "d").is_empty(), "{svg}");
    drop(held);
}

#[test]
fn the_local_chart_shades_the_paused_work() {
    let (cluster, local) = (cluster_history().snapshot(), local_history().snapshot());
    let view = view(&cluster, &local);
    let svg = local_chart(&view, view.background.as_ref().expect("a gate"));
    // Local time: now is 7 s, so x = 56 + 30 * (t + 13). Paused (at or above 75 %) from
    // the sample at 3 s (x 536) to the one at 5 s (x 596).
    assert_eq!(attributes(&svg, "threshold adaptive", "y1"), ["48.0"]);
    assert_eq!(attributes(&svg, "shade paused", "x"), ["536.0"]);
    assert_eq!(attributes(&svg, "shade paused", "width"), ["60.0"]);
    assert_eq!(
        attributes(&svg, "series local", "d"),
        ["M476.0 104.0 L506.0 88.0 L536.0 24.0 L566.0 16.0 L596.0 72.0 L626.0 104.0"]
    );
    snapshot("local_cpu.svg", &svg);
}

#[test]
fn smoothing_adds_the_line_that_decides() {
    let mut config = Config::default();
    config.control.web_threshold = 70.into();
    config.control.smoothing = load_core::config::Smoothing::Ewma {
        tau: Duration::from_secs(5),
    };
    let control = LoadControl::from_config(&config.control);
    let history: ClusterHistory = ClusterHistory::new();
    let status = ClusterStatus::new();
    let sink = ClusterSink::new(&control, &status).with_history(&history);
    for (second, cpu) in (1..).zip([20, 90, 90]) {
        sink.on_sample(
            Instant::from_secs(second),
            &CpuSample::local(CpuPercent::new(cpu)),
        );
    }
    let (cluster, local) = (history.snapshot(), local_history().snapshot());
    let mut view = view(&cluster, &local);
    view.cluster_now = Instant::from_secs(3);
    view.smoothing = true;
    let svg = cluster_chart(&view, "Cluster CPU");
    let smoothed = attributes(&svg, "series smoothed", "d");
    assert_eq!(smoothed.len(), 1, "{svg}");
    assert_ne!(smoothed, attributes(&svg, "series raw", "d"));
}

#[test]
fn thresholds_that_cannot_be_reached_draw_no_line() {
    let (cluster, local) = (cluster_history().snapshot(), local_history().snapshot());
    let mut view = view(&cluster, &local);
    // 100 and above: web and API control off; 0 and below: the adaptive gate off.
    view.web_threshold = 100.into();
    view.api_threshold = 120.into();
    background(&mut view).threshold = GateThreshold::OFF;
    let page = render(&view);
    assert!(!page.contains("class=\"threshold"), "{page}");
    assert!(page.contains("Web: off"), "{page}");
    assert!(page.contains("API: off"), "{page}");
}

/// A web or API threshold of 0 or below rejects every request (Fess's rule), and an
/// adaptive threshold of 100 still pauses work at 100 %: the page must say so, not "off".
#[test]
fn thresholds_at_the_edges_are_drawn_as_they_act() {
    let (cluster, local) = (cluster_history().snapshot(), local_history().snapshot());
    let mut view = view(&cluster, &local);
    view.web_threshold = 0.into();
    view.api_threshold = Threshold::from_fess(-5);
    background(&mut view).threshold = GateThreshold::from_fess(100);
    view.armed_web = true;
    view.armed_api = true;
    let page = render(&view);
    assert!(page.contains("Web: rejecting every request"), "{page}");
    assert!(page.contains("API: rejecting every request"), "{page}");
    let svg = cluster_chart(&view, "Cluster CPU");
    assert_eq!(attributes(&svg, "threshold web", "y1"), ["168.0"], "at 0 %");
    assert_eq!(attributes(&svg, "threshold api", "y1"), ["168.0"], "at 0 %");
    let svg = local_chart(&view, view.background.as_ref().expect("a gate"));
    assert_eq!(
        attributes(&svg, "threshold adaptive", "y1"),
        ["8.0"],
        "at 100 %"
    );
}

/// Points older than the window (a monitor that fell behind: 300 polls over more than 5
/// minutes) are left out, not piled up at the left edge.
#[test]
fn points_before_the_window_are_left_out() {
    let control = LoadControl::new(70, 90);
    let history: ClusterHistory = ClusterHistory::new();
    let status = ClusterStatus::new();
    let sink = ClusterSink::new(&control, &status).with_history(&history);
    for (second, cpu) in [(1, 95), (2, 95), (3, 20), (50, 95), (55, 30), (58, 40)] {
        sink.on_sample(
            Instant::from_secs(second),
            &CpuSample::local(CpuPercent::new(cpu)),
        );
    }
    let (cluster, local) = (history.snapshot(), local_history().snapshot());
    let mut view = view(&cluster, &local);
    view.cluster_now = Instant::from_secs(60);
    // The window is 20 s: only the points at 50, 55 and 58 s are in it.
    let svg = cluster_chart(&view, "Cluster CPU");
    assert_eq!(
        attributes(&svg, "series raw", "d"),
        ["M356.0 16.0 L506.0 120.0 L596.0 104.0"]
    );
    // The rejecting period at 1 to 3 s is gone; the one from 50 s to 55 s stays.
    assert_eq!(attributes(&svg, "shade web", "x"), ["356.0"]);
    assert_eq!(attributes(&svg, "shade web", "width"), ["150.0"]);
}

/// A rejecting period that began before the window and goes on is shaded from the left
/// edge.
#[test]
fn a_period_that_began_before_the_window_starts_at_its_edge() {
    let control = LoadControl::new(70, 90);
    let history: ClusterHistory = ClusterHistory::new();
    let status = ClusterStatus::new();
    let sink = ClusterSink::new(&control, &status).with_history(&history);
    for second in [1, 30, 59] {
        sink.on_sample(
            Instant::from_secs(second),
            &CpuSample::local(CpuPercent::new(95)),
        );
    }
    let (cluster, local) = (history.snapshot(), local_history().snapshot());
    let mut view = view(&cluster, &local);
    view.cluster_now = Instant::from_secs(60);
    let svg = cluster_chart(&view, "Cluster CPU");
    assert_eq!(attributes(&svg, "shade web", "x"), ["56.0"]);
    assert_eq!(attributes(&svg, "shade web", "width"), ["600.0"]);
}

#[test]
fn nice_ceilings_of_odd_values_end() {
    for value in [f64::NAN, f64::INFINITY, -1.0, f64::MAX] {
        let ceiling = nice_ceiling(value);
        assert!(ceiling.is_finite() && ceiling >= 1.0, "{value}: {ceiling}");
    }
}

#[test]
fn nice_ceilings() {
    let cases = [
        (0.0, 1.0),
        (0.4, 1.0),
        (1.0, 1.0),
        (1.5, 2.0),
        (2.5, 5.0),
        (7.0, 10.0),
    ];
    for (value, ceiling) in cases {
        assert_eq!(nice_ceiling(value), ceiling, "{value}");
    }
    assert_eq!(nice_ceiling(12_345.0), 20_000.0);
}

#[test]
fn the_window_covers_what_was_seen_in_whole_minutes() {
    let second = Duration::from_secs(1);
    let secs = |s| Some(Duration::from_secs(s));
    assert_eq!(window(second, [None, None]), Duration::from_secs(60));
    assert_eq!(window(second, [secs(12), None]), Duration::from_secs(60));
    assert_eq!(
        window(second, [secs(12), secs(61)]),
        Duration::from_secs(120)
    );
    // Never more than a full history: 300 points.
    assert_eq!(window(second, [secs(1000), None]), Duration::from_secs(300));
    assert_eq!(
        window(Duration::from_secs(5), [secs(1000), None]),
        Duration::from_secs(1020)
    );
}
