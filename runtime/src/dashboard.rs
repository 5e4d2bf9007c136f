//! The operator's page (feature `dashboard`): server-rendered SVG charts of what load
//! control saw and decided over the last minutes, from the guard's and the gate's
//! histories; no script, no external asset (its [`CONTENT_SECURITY_POLICY`] allows
//! neither). The demo serves it at `/admin/load`.
//!
//! [`Snapshot::take`] reads a guard and a gate, [`Snapshot::view`] makes the [`View`] of a
//! configuration, and [`page`] renders it; serve it with [`HEADERS`]. Everything after the
//! snapshot is a pure function of a [`View`], so the charts are tested without a browser
//! and in one (the project's Chromium test of the demo's page).
//!
//! ```
//! use load_runtime::dashboard::{self, Snapshot};
//! use load_runtime::{BackgroundGate, Config, CpuPercent, FixedSource, LoadGuard, Runtime, time::Sleep};
//!
//! # #[derive(Clone, Copy, Default)] struct Rt;
//! # impl Sleep for Rt { async fn sleep(&self, _: std::time::Duration) {} }
//! # impl Runtime for Rt { fn spawn(&self, _: impl std::future::Future<Output = ()> + Send + 'static) {} }
//! static CLUSTER: FixedSource = FixedSource::new(CpuPercent::new(42));
//! static LOCAL: FixedSource = FixedSource::new(CpuPercent::new(10));
//! let config = Config::from_properties("web.load.control=80")?;
//! let guard: LoadGuard<Rt, _> = LoadGuard::with_source(&config.control, &CLUSTER);
//! let gate: BackgroundGate<Rt, _> = BackgroundGate::with_source(&config.control, &LOCAL);
//!
//! // In the page's handler:
//! let snapshot = Snapshot::take(&guard, &gate);
//! let html = dashboard::page(&snapshot.view(&config, dashboard::DEFAULT_REFRESH));
//! assert!(html.contains("<h1>Load control</h1>"));
//! // ... answered with `dashboard::HEADERS` (the CSP, no caching) and `text/html`.
//! # Ok::<(), load_runtime::ConfigError>(())
//! ```

use std::fmt::Write as _;
use std::time::Duration;

use load_core::history::{ClusterPoint, HISTORY_LEN, LocalPoint, Timeline};
use load_core::{
    AdmissionMode, AdmissionStats, Clock, Config, CpuPercent, GateThreshold, Instant, Mode,
    RejectReason, Rejections, Threshold,
    config::{Smoothing, keys},
};

use crate::{BackgroundGate, LoadGuard, Runtime};

/// How often the page refreshes itself by default, in seconds.
pub const DEFAULT_REFRESH: u32 = 2;

/// The page's `Content-Security-Policy`: it is self-contained, so no script and no external
/// asset may load.
pub const CONTENT_SECURITY_POLICY: &str =
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; frame-ancestors 'none'";

/// The headers to answer the page with, besides its `text/html; charset=utf-8` type.
pub const HEADERS: [(&str, &str); 3] = [
    ("content-security-policy", CONTENT_SECURITY_POLICY),
    ("cache-control", "no-store"),
    ("x-content-type-options", "nosniff"),
];

/// The settings shown by default: the control keys an operator tunes, and the cluster.
pub const SETTINGS: [&str; 11] = [
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
];

/// What a guard and a gate hold at one instant, owned: the histories and the live state a
/// [`View`] borrows.
#[derive(Debug)]
pub struct Snapshot {
    cluster: Timeline<ClusterPoint>,
    cluster_now: Instant,
    local: Timeline<LocalPoint>,
    local_now: Instant,
    live: load_core::Stats,
    monitor_started: bool,
    waiting: u32,
    last_error: Option<(String, Duration)>,
}

impl Snapshot {
    /// Reads `guard` and `gate` (their histories under a short critical section each).
    #[must_use]
    pub fn take<R: Runtime, S, G>(
        guard: &LoadGuard<R, S>,
        gate: &BackgroundGate<R, G>,
    ) -> Snapshot {
        let cluster = guard.history().snapshot();
        let local = gate.history().snapshot();
        let cluster_now = guard.clock().now();
        Snapshot {
            last_error: guard
                .history()
                .last_error()
                .map(|(at, error)| (error.to_string(), cluster_now.saturating_duration_since(at))),
            cluster,
            cluster_now,
            local,
            local_now: gate.clock().now(),
            live: guard.stats(),
            monitor_started: guard.monitor_started(),
            waiting: gate.stats().waiting,
        }
    }

    /// The view of `config` (the configuration the guard and the gate were built with),
    /// refreshing every `refresh` seconds (0: never), with [`SETTINGS`] in its table and
    /// nothing counted as background work done: set [`View::crawled`] and
    /// [`View::indexed`] for that.
    #[must_use]
    pub fn view(&self, config: &Config, refresh: u32) -> View<'_> {
        let settings = SETTINGS
            .into_iter()
            .filter_map(keys::find)
            .map(|key| {
                let value = key.value(config).to_string();
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
        let control = &config.control;
        View {
            cluster: &self.cluster,
            cluster_now: self.cluster_now,
            local: &self.local,
            local_now: self.local_now,
            window: window(
                control.monitor_interval,
                [
                    self.cluster
                        .oldest()
                        .map(|p| self.cluster_now.saturating_duration_since(p.at)),
                    self.local
                        .oldest()
                        .map(|p| self.local_now.saturating_duration_since(p.at)),
                ],
            ),
            web_threshold: control.web_threshold,
            api_threshold: control.api_threshold,
            adaptive_threshold: control.adaptive_threshold,
            smoothing: !matches!(control.smoothing, Smoothing::None),
            mode: control.mode,
            admission: control.admission,
            live: self.live.admission,
            monitor_started: self.monitor_started,
            armed_web: self.live.armed_web,
            armed_api: self.live.armed_api,
            rejections_web: self.live.rejections_web,
            rejections_api: self.live.rejections_api,
            crawled: 0,
            indexed: None,
            waiting: self.waiting,
            settings,
            last_error: self.last_error.clone(),
            refresh,
        }
    }
}

/// The time the charts span: the time the histories cover (`ages` of their oldest points),
/// in whole minutes from 1 up to what a full history holds at `interval` (5 minutes at the
/// default 1 s). A fresh server shows its first minute, not five empty ones.
#[must_use]
pub fn window(interval: Duration, ages: [Option<Duration>; 2]) -> Duration {
    let points = u32::try_from(HISTORY_LEN).unwrap_or(u32::MAX);
    let full = interval.saturating_mul(points);
    let seen = ages.into_iter().flatten().max().unwrap_or_default();
    let minutes = seen.as_secs().div_ceil(60).max(1);
    Duration::from_secs(minutes.saturating_mul(60)).min(full)
}

/// The charts' drawing box, in SVG user units: the plot area is `PLOT_W` × `PLOT_H` at
/// (`LEFT`, `TOP`), with room for the axis labels around it.
pub const WIDTH: f64 = 668.0;
/// The whole chart's height.
pub const HEIGHT: f64 = 196.0;
/// Left edge of the plot area (room for the y labels).
pub const LEFT: f64 = 56.0;
/// Top edge of the plot area.
pub const TOP: f64 = 8.0;
/// Width of the plot area.
pub const PLOT_W: f64 = 600.0;
/// Height of the plot area.
pub const PLOT_H: f64 = 160.0;

/// What the page shows: the histories, the clocks they were taken at, and the settings.
#[derive(Debug)]
pub struct View<'a> {
    /// The cluster monitor's points.
    pub cluster: &'a Timeline<ClusterPoint>,
    /// The cluster monitor's clock when the snapshot was taken.
    pub cluster_now: Instant,
    /// The local sampler's points.
    pub local: &'a Timeline<LocalPoint>,
    /// The local sampler's clock when the snapshot was taken.
    pub local_now: Instant,
    /// How much time the charts span (ending now).
    pub window: Duration,
    /// `web.load.control`.
    pub web_threshold: Threshold,
    /// `api.load.control`.
    pub api_threshold: Threshold,
    /// `adaptive.load.control`.
    pub adaptive_threshold: GateThreshold,
    /// Whether smoothing is on (the effective CPU is drawn beside the raw one).
    pub smoothing: bool,
    /// `load.control.mode`.
    pub mode: Mode,
    /// `load.control.admission`.
    pub admission: AdmissionMode,
    /// The limit mode's state now: the cap and the requests in flight.
    pub live: AdmissionStats,
    /// Whether the cluster monitor was started (it starts on the first controlled request).
    pub monitor_started: bool,
    /// Whether web requests are being rejected now (the live state, for the badges).
    pub armed_web: bool,
    /// Whether API requests are being rejected now.
    pub armed_api: bool,
    /// Web requests rejected in all, by reason (the words of the log and the metrics).
    pub rejections_web: Rejections,
    /// API requests rejected in all, by reason.
    pub rejections_api: Rejections,
    /// Units of background work done (the crawler's, in Fess; 0 when not counted).
    pub crawled: u64,
    /// Documents the background work indexed into the cluster (`None`: not shown).
    pub indexed: Option<u64>,
    /// Tasks waiting at the adaptive gate now.
    pub waiting: u32,
    /// Settings shown in the table: key and value (secrets already hidden).
    pub settings: Vec<(&'static str, String)>,
    /// The last poll error, without credentials, and how long ago it happened.
    pub last_error: Option<(String, Duration)>,
    /// Seconds between refreshes (`0`: no refresh).
    pub refresh: u32,
}

/// The y coordinate of `percent` on a CPU chart.
#[must_use]
pub fn cpu_y(percent: f64) -> f64 {
    TOP + PLOT_H * (100.0 - percent.clamp(0.0, 100.0)) / 100.0
}

/// The x coordinate of an instant `at`, on a chart spanning `window` and ending at `now`.
#[must_use]
pub fn time_x(at: Instant, now: Instant, window: Duration) -> f64 {
    let age = now.saturating_duration_since(at).as_secs_f64();
    let span = window.as_secs_f64().max(1.0);
    LEFT + PLOT_W * (1.0 - (age / span).min(1.0))
}

/// Whether `at` lies within the chart's window ending at `now`.
fn in_window(at: Instant, now: Instant, window: Duration) -> bool {
    now.saturating_duration_since(at) <= window
}

/// A path through `(x, value)` pairs: `M` at the start and after each gap (`None`).
fn path(points: impl Iterator<Item = (f64, Option<f64>)>) -> String {
    let mut data = String::new();
    let mut pen_down = false;
    for (x, y) in points {
        match y {
            Some(y) => {
                let command = if pen_down { 'L' } else { 'M' };
                let _ = write!(data, "{}{x:.1} {y:.1}", separator(&data, command));
                pen_down = true;
            }
            None => pen_down = false,
        }
    }
    data
}

fn separator(data: &str, command: char) -> String {
    if data.is_empty() {
        command.to_string()
    } else {
        format!(" {command}")
    }
}

/// The spans (x from, x to) where `on` holds: from the point where it became true to the
/// next point (where it stopped), or to `now` when it still holds.
fn spans<T: Copy>(
    points: &[T],
    at: impl Fn(&T) -> Instant,
    on: impl Fn(&T) -> bool,
    now: Instant,
    window: Duration,
) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let mut start: Option<f64> = None;
    for point in points {
        let x = time_x(at(point), now, window);
        match (on(point), start) {
            (true, None) => start = Some(x),
            (false, Some(from)) => {
                // A period that ended before the window has nothing to show.
                if x > LEFT {
                    out.push((from, x));
                }
                start = None;
            }
            _ => {}
        }
    }
    if let Some(from) = start {
        out.push((from, LEFT + PLOT_W));
    }
    out
}

fn open_svg(svg: &mut String, id: &str, label: &str) {
    let _ = write!(
        svg,
        "<svg id=\"{id}\" class=\"chart\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" \
         aria-label=\"{label}\" xmlns=\"http://www.w3.org/2000/svg\">\n\
         <rect class=\"plot\" x=\"{LEFT}\" y=\"{TOP}\" width=\"{PLOT_W}\" height=\"{PLOT_H}\"/>\n"
    );
}

/// Time ticks along the bottom, at "now" and every whole step before it (at most six
/// intervals: 5, 10, 15 or 30 seconds, or 1, 2, 5, 10 … minutes).
fn time_axis(svg: &mut String, window: Duration) {
    let span = window.as_secs().max(1);
    let step = [5, 10, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600]
        .into_iter()
        .find(|step| span / step <= 6)
        .unwrap_or_else(|| span.div_ceil(6));
    for k in 0..=span / step {
        let ago = k * step;
        #[allow(clippy::cast_precision_loss)] // both are at most a few days in seconds
        let x = LEFT + PLOT_W * (1.0 - ago as f64 / span as f64);
        let (label, anchor) = match ago {
            0 => ("now".to_owned(), "end"),
            _ if step % 60 == 0 => (format!("-{}m", ago / 60), "middle"),
            _ => (format!("-{ago}s"), "middle"),
        };
        let _ = writeln!(
            svg,
            "<line class=\"grid\" x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{bottom}\"/>\
             <text class=\"tick\" x=\"{x:.1}\" y=\"{label_y}\" text-anchor=\"{anchor}\">{label}</text>",
            bottom = TOP + PLOT_H,
            label_y = TOP + PLOT_H + 16.0,
        );
    }
}

/// `1.5` as "1.5", `2.0` as "2".
fn trim(value: f64) -> String {
    let text = format!("{value:.1}");
    text.strip_suffix(".0").map_or(text.clone(), str::to_owned)
}

/// Percent ticks on the left: 0, 25, 50, 75, 100.
fn percent_axis(svg: &mut String) {
    for percent in [0, 25, 50, 75, 100] {
        grid_row(svg, cpu_y(f64::from(percent)), &format!("{percent}%"));
    }
}

/// A horizontal grid line at `y`, labelled on the left.
fn grid_row(svg: &mut String, y: f64, label: &str) {
    let _ = writeln!(
        svg,
        "<line class=\"grid\" x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{right}\" y2=\"{y:.1}\"/>\
         <text class=\"tick\" x=\"{x}\" y=\"{ty:.1}\" text-anchor=\"end\">{label}</text>",
        right = LEFT + PLOT_W,
        x = LEFT - 6.0,
        ty = y + 4.0,
    );
}

/// A threshold line at `threshold` % (clamped to the chart), when it acts.
fn threshold_line(svg: &mut String, class: &str, label: &str, threshold: i32, acts: bool) {
    if !acts {
        return;
    }
    let y = cpu_y(f64::from(threshold.clamp(0, 100)));
    let _ = writeln!(
        svg,
        "<line class=\"threshold {class}\" data-percent=\"{threshold}\" x1=\"{LEFT}\" \
         y1=\"{y:.1}\" x2=\"{right}\" y2=\"{y:.1}\"/>\
         <text class=\"label {class}\" x=\"{tx}\" y=\"{ty:.1}\">{label} {threshold}%</text>",
        right = LEFT + PLOT_W,
        tx = LEFT + 4.0,
        ty = (y - 4.0).max(TOP + 12.0),
    );
}

fn shade(svg: &mut String, class: &str, title: &str, spans: &[(f64, f64)]) {
    for (from, to) in spans {
        let _ = writeln!(
            svg,
            "<rect class=\"shade {class}\" x=\"{from:.1}\" y=\"{TOP}\" width=\"{w:.1}\" \
             height=\"{PLOT_H}\"><title>{title}</title></rect>",
            w = (to - from).max(1.0),
        );
    }
}

fn percent(cpu: Option<CpuPercent>) -> Option<f64> {
    cpu.map(|cpu| f64::from(cpu.get()))
}

/// The cluster CPU chart: raw CPU (and the smoothed CPU decisions use, when smoothing is
/// on), the web and API thresholds, the periods each class was rejecting, failed polls.
#[must_use]
pub fn cluster_chart(view: &View<'_>) -> String {
    let (now, window) = (view.cluster_now, view.window);
    let points: Vec<ClusterPoint> = view.cluster.iter().collect();
    let mut svg = String::new();
    open_svg(&mut svg, "cluster-cpu", "Cluster CPU over time");
    shade(
        &mut svg,
        "web",
        "web requests rejected",
        &spans(&points, |p| p.at, |p| p.armed_web, now, window),
    );
    shade(
        &mut svg,
        "api",
        "API requests rejected",
        &spans(&points, |p| p.at, |p| p.armed_api, now, window),
    );
    percent_axis(&mut svg);
    time_axis(&mut svg, window);
    threshold_line(
        &mut svg,
        "web",
        "web",
        i32::from(view.web_threshold.get()),
        !view.web_threshold.is_off(),
    );
    threshold_line(
        &mut svg,
        "api",
        "API",
        i32::from(view.api_threshold.get()),
        !view.api_threshold.is_off(),
    );
    let x = |p: &ClusterPoint| time_x(p.at, now, window);
    let shown: Vec<&ClusterPoint> = points
        .iter()
        .filter(|p| in_window(p.at, now, window))
        .collect();
    let raw = path(shown.iter().map(|p| (x(p), percent(p.raw).map(cpu_y))));
    let _ = writeln!(svg, "<path class=\"series raw\" d=\"{raw}\"/>");
    if view.smoothing {
        let smoothed = path(shown.iter().map(|p| (x(p), percent(p.cpu).map(cpu_y))));
        let _ = writeln!(svg, "<path class=\"series smoothed\" d=\"{smoothed}\"/>");
    }
    for point in shown.iter().filter(|p| p.failed) {
        let _ = writeln!(
            svg,
            "<line class=\"failed\" x1=\"{x:.1}\" y1=\"{y0:.1}\" x2=\"{x:.1}\" y2=\"{y1:.1}\">\
             <title>poll failed</title></line>",
            x = x(point),
            y0 = TOP + PLOT_H - 10.0,
            y1 = TOP + PLOT_H,
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// The smallest of 1, 2, 5 × 10^k at or above `value` (at least 1; 1 for NaN and the
/// infinities; past 10^15, `value` rounded up).
#[must_use]
pub fn nice_ceiling(value: f64) -> f64 {
    if !value.is_finite() || value <= 1.0 {
        return 1.0;
    }
    let mut scale = 1.0;
    loop {
        if scale > 1e15 {
            return value.ceil();
        }
        for step in [1.0, 2.0, 5.0] {
            if value <= step * scale {
                return step * scale;
            }
        }
        scale *= 10.0;
    }
}

/// Rejections per second, per class, between consecutive polls; with
/// `load.control.admission=limit`, the in-flight cap and the requests in flight at each poll
/// too (in requests, on the same scale).
#[must_use]
pub fn rejections_chart(view: &View<'_>) -> String {
    let (now, window) = (view.cluster_now, view.window);
    let points: Vec<ClusterPoint> = view.cluster.iter().collect();
    // A rate for each point after the first: its count over the time since the previous.
    let rates: Vec<(Instant, f64, f64)> = points
        .windows(2)
        .filter(|pair| in_window(pair[1].at, now, window))
        .map(|pair| {
            let seconds = pair[1]
                .at
                .saturating_duration_since(pair[0].at)
                .as_secs_f64()
                .max(0.001);
            (
                pair[1].at,
                f64::from(pair[1].rejected_web) / seconds,
                f64::from(pair[1].rejected_api) / seconds,
            )
        })
        .collect();
    let limit = view.admission == AdmissionMode::Limit;
    let counts: Vec<(Instant, f64, f64)> = if limit {
        points
            .iter()
            .filter(|p| in_window(p.at, now, window))
            .map(|p| (p.at, f64::from(p.cap), f64::from(p.in_flight)))
            .collect()
    } else {
        Vec::new()
    };
    let top = nice_ceiling(
        rates
            .iter()
            .chain(&counts)
            .fold(0.0, |m, r| f64::max(m, r.1.max(r.2))),
    );
    let y = |rate: f64| TOP + PLOT_H * (1.0 - rate / top);
    let mut svg = String::new();
    open_svg(&mut svg, "rejections", "Rejected requests per second");
    for fraction in [0.0, 0.5, 1.0] {
        grid_row(
            &mut svg,
            y(top * fraction),
            &format!("{}/s", trim(top * fraction)),
        );
    }
    time_axis(&mut svg, window);
    for (class, pick) in [("web", 1), ("api", 2)] {
        let data = path(rates.iter().map(|r| {
            let rate = if pick == 1 { r.1 } else { r.2 };
            (time_x(r.0, now, window), Some(y(rate)))
        }));
        let _ = writeln!(
            svg,
            "<path class=\"series {class}\" data-max=\"{top}\" d=\"{data}\"/>"
        );
    }
    if limit {
        let caps = counts.iter().map(|c| (c.0, c.1));
        let flying = counts.iter().map(|c| (c.0, c.2));
        for (class, values) in [
            ("cap", caps.collect::<Vec<_>>()),
            ("inflight", flying.collect()),
        ] {
            let data = path(
                values
                    .iter()
                    .map(|&(at, count)| (time_x(at, now, window), Some(y(count)))),
            );
            let _ = writeln!(
                svg,
                "<path class=\"series {class}\" data-max=\"{top}\" d=\"{data}\"/>"
            );
        }
    }
    svg.push_str("</svg>\n");
    svg
}

/// This machine's CPU, the adaptive threshold and the periods background work was paused.
#[must_use]
pub fn local_chart(view: &View<'_>) -> String {
    let (now, window) = (view.local_now, view.window);
    let points: Vec<LocalPoint> = view.local.iter().collect();
    let mut svg = String::new();
    open_svg(&mut svg, "local-cpu", "This machine's CPU over time");
    shade(
        &mut svg,
        "paused",
        "background work paused",
        &spans(&points, |p| p.at, |p| !p.open, now, window),
    );
    percent_axis(&mut svg);
    time_axis(&mut svg, window);
    threshold_line(
        &mut svg,
        "adaptive",
        "adaptive",
        i32::from(view.adaptive_threshold.get()),
        !view.adaptive_threshold.is_off(),
    );
    let data = path(
        points
            .iter()
            .filter(|p| in_window(p.at, now, window))
            .map(|p| (time_x(p.at, now, window), percent(p.cpu).map(cpu_y))),
    );
    let _ = writeln!(svg, "<path class=\"series local\" d=\"{data}\"/>");
    svg.push_str("</svg>\n");
    svg
}

/// Escapes text for HTML (element content and quoted attributes).
#[must_use]
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn state(rejecting: bool, threshold: Threshold, view: &View<'_>) -> (&'static str, String) {
    let limit = view.admission == AdmissionMode::Limit;
    if limit && !threshold.is_off() {
        let (cap, flying) = (view.live.cap, view.live.in_flight);
        return if rejecting {
            (
                "rejecting",
                format!("armed (≥ {threshold}%): cap {cap}, {flying} in flight"),
            )
        } else {
            (
                "admitting",
                format!("disarmed (< {threshold}%): {flying} in flight"),
            )
        };
    }
    if threshold.is_off() {
        ("off", "off".to_owned())
    } else if threshold.rejects_all() {
        (
            "rejecting",
            format!("rejecting every request (threshold {threshold})"),
        )
    } else if rejecting {
        ("rejecting", format!("rejecting (≥ {threshold}%)"))
    } else {
        ("admitting", format!("admitting (< {threshold}%)"))
    }
}

fn shown(cpu: Option<CpuPercent>) -> String {
    cpu.map_or_else(|| "unknown".to_owned(), |cpu| format!("{}%", cpu.get()))
}

const STYLE: &str = "\
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1b1f24; --muted: #5b6470; \
--grid: #d8dde3; --plot: #f6f8fa; --raw: #0b63c5; --smoothed: #7a3fc9; --web: #d1242f; \
--api: #bf6a02; --local: #1a7f37; --paused: #8c959f; --ok: #1a7f37; --cap: #0550ae; \
--inflight: #6e7781; }
@media (prefers-color-scheme: dark) { :root { --bg: #0d1117; --fg: #e6edf3; \
--muted: #9aa5b1; --grid: #30363d; --plot: #161b22; --raw: #58a6ff; --smoothed: #c297ff; \
--web: #ff7b72; --api: #f0b44c; --local: #56d364; --paused: #8b949e; --ok: #56d364; \
--cap: #79c0ff; --inflight: #c9d1d9; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 72rem; padding: 0.75rem; background: var(--bg); \
color: var(--fg); font: 15px/1.4 system-ui, sans-serif; }
h1 { font-size: 1.3rem; margin: 0.2rem 0 0.6rem; }
h2 { font-size: 1.05rem; margin: 1rem 0 0.3rem; }
.badges { display: flex; flex-wrap: wrap; gap: 0.4rem; margin: 0; padding: 0; list-style: none; }
.badge { border: 1px solid var(--grid); border-radius: 1rem; padding: 0.15rem 0.7rem; }
.badge.rejecting { border-color: var(--web); color: var(--web); font-weight: 600; }
.badge.admitting { border-color: var(--ok); color: var(--ok); }
.chart { display: block; width: 100%; height: auto; }
.chart .plot { fill: var(--plot); }
.chart .grid { stroke: var(--grid); stroke-width: 1; }
.chart .tick, .chart .label { fill: var(--muted); font-size: 12px; }
.chart .label.web { fill: var(--web); } .chart .label.api { fill: var(--api); }
.chart .label.adaptive { fill: var(--local); }
.chart .threshold { stroke-width: 1.5; stroke-dasharray: 6 4; }
.chart .threshold.web { stroke: var(--web); } .chart .threshold.api { stroke: var(--api); }
.chart .threshold.adaptive { stroke: var(--local); }
.chart .shade.web { fill: var(--web); opacity: 0.18; }
.chart .shade.api { fill: var(--api); opacity: 0.18; }
.chart .shade.paused { fill: var(--paused); opacity: 0.25; }
.chart .series { fill: none; stroke-width: 2; stroke-linejoin: round; }
.chart .series.raw { stroke: var(--raw); }
.chart .series.smoothed { stroke: var(--smoothed); stroke-dasharray: 3 2; }
.chart .series.web { stroke: var(--web); }
.chart .series.api { stroke: var(--api); stroke-dasharray: 5 3; }
.chart .series.local { stroke: var(--local); }
.chart .series.cap { stroke: var(--cap); stroke-width: 1.5; }
.chart .series.inflight { stroke: var(--inflight); stroke-width: 1.5; stroke-dasharray: 2 2; }
.chart .failed { stroke: var(--web); stroke-width: 2; }
.legend { color: var(--muted); font-size: 0.85rem; margin: 0.2rem 0 0; }
.swatch { display: inline-block; width: 0.8rem; height: 0.25rem; vertical-align: middle; \
margin: 0 0.25rem 0 0.6rem; }
table { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
th, td { text-align: left; padding: 0.25rem 0.5rem; border-bottom: 1px solid var(--grid); }
th { font-weight: 600; white-space: nowrap; }
td { overflow-wrap: anywhere; }
@media (max-width: 600px) { .chart .tick, .chart .label { font-size: 17px; } \
th { white-space: normal; overflow-wrap: anywhere; } }
.error { color: var(--web); }
footer { color: var(--muted); font-size: 0.8rem; margin-top: 1rem; }
";

fn swatch(colour: &str, text: &str) -> String {
    format!("<span class=\"swatch\" style=\"background: var(--{colour})\"></span>{text}")
}

/// The whole page.
#[must_use]
pub fn page(view: &View<'_>) -> String {
    let latest = view.cluster.latest();
    let (web_class, web_text) = state(view.armed_web, view.web_threshold, view);
    let (api_class, api_text) = state(view.armed_api, view.api_threshold, view);
    let local_now = view.local.latest();
    let crawler = match local_now {
        _ if view.adaptive_threshold.is_off() => "running (adaptive control off)",
        Some(point) if !point.open => "paused",
        _ => "running",
    };
    let mut html = String::with_capacity(32 * 1024);
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"UTF-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"color-scheme\" content=\"light dark\">\n"
    );
    if view.refresh > 0 {
        let _ = writeln!(
            html,
            "<meta http-equiv=\"refresh\" content=\"{}\">",
            view.refresh
        );
    }
    let _ = write!(
        html,
        "<title>Load control</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
         <h1>Load control</h1>\n<ul class=\"badges\">\n\
         <li class=\"badge {web_class}\" id=\"web-state\">Web: {web_text}</li>\n\
         <li class=\"badge {api_class}\" id=\"api-state\">API: {api_text}</li>\n\
         <li class=\"badge\" id=\"cluster-now\">Cluster CPU: {cluster}</li>\n\
         <li class=\"badge\" id=\"local-now\">This machine: {local}</li>\n\
         <li class=\"badge\" id=\"crawler-state\">Crawler: {crawler}</li>\n</ul>\n",
        cluster = if view.monitor_started {
            shown(latest.and_then(|p| p.cpu))
        } else {
            "monitor not started (no controlled request yet)".to_owned()
        },
        local = shown(local_now.and_then(|p| p.cpu)),
    );
    if view.mode == Mode::Monitor {
        html.push_str(
            "<p class=\"legend\">Monitor mode: requests over a threshold are counted, \
             not rejected.</p>\n",
        );
    }
    let _ = write!(
        html,
        "<h2>Cluster CPU</h2>\n{chart}<p class=\"legend\">{raw}{smoothed}{web}{api}</p>\n",
        chart = cluster_chart(view),
        raw = swatch("raw", "CPU (busiest node)"),
        smoothed = if view.smoothing {
            swatch("smoothed", "smoothed (decides)")
        } else {
            String::new()
        },
        web = swatch("web", "web rejecting"),
        api = swatch("api", "API rejecting"),
    );
    let limit = view.admission == AdmissionMode::Limit;
    let _ = write!(
        html,
        "<h2>{title}</h2>\n{chart}<p class=\"legend\">{web}{api}{cap}{inflight}</p>\n",
        title = if limit {
            "Rejected requests per second, and the in-flight cap"
        } else {
            "Rejected requests per second"
        },
        chart = rejections_chart(view),
        web = swatch("web", "web"),
        api = swatch("api", "API"),
        cap = if limit {
            swatch("cap", "cap (requests)")
        } else {
            String::new()
        },
        inflight = if limit {
            swatch("inflight", "in flight (requests)")
        } else {
            String::new()
        },
    );
    if limit {
        let live = &view.live;
        let pool = match live.search_pool {
            Some(pool) => format!(
                "the busiest node's search pool had {} queued and {} of {} threads busy at the \
                 last poll",
                pool.queue, pool.active, pool.threads
            ),
            None => "the poll did not report the cluster's search pool (the single front end's \
                     law applies)"
                .to_owned(),
        };
        let _ = writeln!(
            html,
            "<p id=\"fleet\">Fleet: {pool}; this front end refused {refused} % of its demand \
             between the last two polls, its cap is {cap:.2} request(s). Flood bound: \
             {flood}.</p>",
            refused = live.refused_percent,
            cap = f64::from(live.cap_hundredths) / 100.0,
            flood = if live.flooding { "holding" } else { "idle" },
        );
    }
    // Every busy response, by the reason's word: the metrics' `reason` label and the log's
    // `reason=`.
    let by_reason = |rejections: Rejections| {
        let reasons: Vec<String> = RejectReason::ALL
            .iter()
            .map(|reason| format!("{reason} {}", rejections.get(*reason)))
            .collect();
        format!("{} ({})", rejections.total(), reasons.join(", "))
    };
    let _ = writeln!(
        html,
        "<p id=\"rejections\">Rejected in all: web {web}, API {api}.</p>",
        web = by_reason(view.rejections_web),
        api = by_reason(view.rejections_api),
    );
    let _ = write!(
        html,
        "<h2>This machine and the crawler</h2>\n{chart}<p class=\"legend\">{local}{paused}</p>\n\
         <p id=\"crawler\">Crawler: {crawled} units of work{indexed}, {waiting} task(s) waiting at the gate.</p>\n",
        chart = local_chart(view),
        local = swatch("local", "CPU"),
        paused = swatch("paused", "background work paused"),
        crawled = view.crawled,
        indexed = view
            .indexed
            .map_or_else(String::new, |n| format!(", {n} documents indexed")),
        waiting = view.waiting,
    );
    html.push_str("<h2>Settings</h2>\n<table id=\"settings\">\n");
    for (key, value) in &view.settings {
        let _ = writeln!(
            html,
            "<tr><th>{}</th><td>{}</td></tr>",
            escape(key),
            escape(value)
        );
    }
    let error = match &view.last_error {
        Some((text, ago)) => format!(
            "<td class=\"error\">{} ({}s ago)</td>",
            escape(text),
            ago.as_secs()
        ),
        None => "<td>none</td>".to_owned(),
    };
    let _ = write!(
        html,
        "<tr><th>Last poll error</th>{error}</tr>\n</table>\n\
         <footer>{refresh} The charts span the last {window}s. JSON: \
         <a href=\"/admin/stats\">/admin/stats</a>, Prometheus: <a href=\"/metrics\">/metrics</a>.</footer>\n\
         </body>\n</html>\n",
        refresh = if view.refresh > 0 {
            format!("Refreshes every {} s.", view.refresh)
        } else {
            String::new()
        },
        window = view.window.as_secs(),
    );
    html
}
