//! The page's three charts, each a pure function of a [`View`]: the request control's
//! source CPU with the thresholds, the rejections (and the limit mode's cap and in-flight
//! count), and this machine's CPU with the background gate.

use std::fmt::Write as _;

use load_core::history::{ClusterPoint, LocalPoint};
use load_core::{AdmissionMode, Instant};

use super::svg::{
    PLOT_H, TOP, cpu_y, grid_row, in_window, open_svg, path, percent, percent_axis, shade, spans,
    threshold_line, time_axis, time_x, trim,
};
use super::view::{Background, View};

/// The cluster CPU chart: raw CPU (and the smoothed CPU decisions use, when smoothing is
/// on), the web and API thresholds, the periods each class was rejecting, failed polls.
#[must_use]
pub(super) fn cluster_chart(view: &View<'_>, title: &str) -> String {
    let (now, window) = (view.cluster_now, view.window);
    let points: Vec<ClusterPoint> = view.cluster.iter().collect();
    let mut svg = String::new();
    open_svg(&mut svg, "cluster-cpu", &format!("{title} over time"));
    shade(
        &mut svg,
        "web",
        "web armed",
        &spans(&points, |p| p.at, |p| p.armed_web, now, window),
    );
    shade(
        &mut svg,
        "api",
        "API armed",
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
pub(super) fn nice_ceiling(value: f64) -> f64 {
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
pub(super) fn rejections_chart(view: &View<'_>) -> String {
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
pub(super) fn local_chart(view: &View<'_>, background: &Background<'_>) -> String {
    let (now, window) = (background.local_now, view.window);
    let points: Vec<LocalPoint> = background.local.iter().collect();
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
        i32::from(background.threshold.get()),
        !background.threshold.is_off(),
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
