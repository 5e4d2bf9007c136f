//! The charts' geometry and the SVG they are drawn with: where a percent and an instant
//! fall in the plot area, paths with gaps, shaded spans, axes and threshold lines.

use std::fmt::Write as _;
use std::time::Duration;

use load_core::{CpuPercent, Instant};

/// The charts' drawing box, in SVG user units: the plot area is `PLOT_W` × `PLOT_H` at
/// (`LEFT`, `TOP`), with room for the axis labels around it.
pub(super) const WIDTH: f64 = 668.0;
/// The whole chart's height.
pub(super) const HEIGHT: f64 = 196.0;
/// Left edge of the plot area (room for the y labels).
pub(super) const LEFT: f64 = 56.0;
/// Top edge of the plot area.
pub(super) const TOP: f64 = 8.0;
/// Width of the plot area.
pub(super) const PLOT_W: f64 = 600.0;
/// Height of the plot area.
pub(super) const PLOT_H: f64 = 160.0;

/// The y coordinate of `percent` on a CPU chart.
#[must_use]
pub(super) fn cpu_y(percent: f64) -> f64 {
    TOP + PLOT_H * (100.0 - percent.clamp(0.0, 100.0)) / 100.0
}

/// The x coordinate of an instant `at`, on a chart spanning `window` and ending at `now`.
#[must_use]
pub(super) fn time_x(at: Instant, now: Instant, window: Duration) -> f64 {
    let age = now.saturating_duration_since(at).as_secs_f64();
    let span = window.as_secs_f64().max(1.0);
    LEFT + PLOT_W * (1.0 - (age / span).min(1.0))
}

/// Whether `at` lies within the chart's window ending at `now`.
pub(super) fn in_window(at: Instant, now: Instant, window: Duration) -> bool {
    now.saturating_duration_since(at) <= window
}

/// A path through `(x, value)` pairs: `M` at the start and after each gap (`None`).
pub(super) fn path(points: impl Iterator<Item = (f64, Option<f64>)>) -> String {
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
pub(super) fn spans<T: Copy>(
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

pub(super) fn open_svg(svg: &mut String, id: &str, label: &str) {
    let _ = write!(
        svg,
        "<svg id=\"{id}\" class=\"chart\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" \
         aria-label=\"{label}\" xmlns=\"http://www.w3.org/2000/svg\">\n\
         <rect class=\"plot\" x=\"{LEFT}\" y=\"{TOP}\" width=\"{PLOT_W}\" height=\"{PLOT_H}\"/>\n"
    );
}

/// Time ticks along the bottom, at "now" and every whole step before it (at most six
/// intervals: 5, 10, 15 or 30 seconds, or 1, 2, 5, 10 … minutes).
pub(super) fn time_axis(svg: &mut String, window: Duration) {
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
pub(super) fn trim(value: f64) -> String {
    let text = format!("{value:.1}");
    text.strip_suffix(".0").map_or(text.clone(), str::to_owned)
}

/// Percent ticks on the left: 0, 25, 50, 75, 100.
pub(super) fn percent_axis(svg: &mut String) {
    for percent in [0, 25, 50, 75, 100] {
        grid_row(svg, cpu_y(f64::from(percent)), &format!("{percent}%"));
    }
}

/// A horizontal grid line at `y`, labelled on the left.
pub(super) fn grid_row(svg: &mut String, y: f64, label: &str) {
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
pub(super) fn threshold_line(
    svg: &mut String,
    class: &str,
    label: &str,
    threshold: i32,
    acts: bool,
) {
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

pub(super) fn shade(svg: &mut String, class: &str, title: &str, spans: &[(f64, f64)]) {
    for (from, to) in spans {
        let _ = writeln!(
            svg,
            "<rect class=\"shade {class}\" x=\"{from:.1}\" y=\"{TOP}\" width=\"{w:.1}\" \
             height=\"{PLOT_H}\"><title>{title}</title></rect>",
            w = (to - from).max(1.0),
        );
    }
}

pub(super) fn percent(cpu: Option<CpuPercent>) -> Option<f64> {
    cpu.map(|cpu| f64::from(cpu.get()))
}
