//! The page: badges of the live state, the charts, what the limit mode reads, the
//! settings and the caller's links, as one self-contained HTML document.

use std::fmt::Write as _;

use load_core::source::SourceKind;
use load_core::{
    AdmissionMode, AdmissionStats, CpuPercent, Mode, RejectReason, Rejections, Threshold,
};

use super::View;
use super::charts::{cluster_chart, local_chart, rejections_chart};

/// Escapes text for HTML (element content and quoted attributes).
pub(super) fn escape(text: &str) -> String {
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

fn state(armed: bool, threshold: Threshold, view: &View<'_>) -> (&'static str, String) {
    let limit = view.admission == AdmissionMode::Limit;
    if limit && !threshold.is_off() {
        let (cap, flying) = (view.live.cap, view.live.in_flight);
        return if armed {
            (
                "rejecting",
                format!("armed (≥ {threshold}%): cap {cap}, {flying} in flight"),
            )
        } else {
            (
                "admitting",
                format!("disarmed (&lt; {threshold}%): {flying} in flight"),
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
    } else if armed {
        ("rejecting", format!("rejecting (≥ {threshold}%)"))
    } else {
        ("admitting", format!("admitting (&lt; {threshold}%)"))
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

/// The request control's CPU as the page names it: its badge, its chart's heading and
/// the chart's label, by what the source reads.
fn source_names(source: Option<SourceKind>) -> (&'static str, &'static str) {
    match source {
        Some(SourceKind::Cluster) => ("Cluster CPU (busiest node)", "Cluster CPU"),
        Some(SourceKind::Machine) => ("This machine's CPU (requests)", "This machine's CPU"),
        Some(SourceKind::Fixed) => ("CPU (a fixed value)", "CPU (a fixed value)"),
        Some(_) => ("Source CPU", "Source CPU"),
        None => ("Source CPU (request control off)", "Source CPU"),
    }
}

/// What the limit mode acts on, in words: the busiest node's load per core and whether
/// it is saturated, or the front end's own requests over its cores.
fn acts_on(live: &AdmissionStats) -> String {
    // The law's gate: the CPU this front end's demand would take, beyond what the CPU
    // serves by more than the arrivals' noise.
    let saturated = if live.saturated {
        "saturated (this front end's demand beyond what the CPU serves)"
    } else {
        "not saturated (this front end's demand within what the CPU serves)"
    };
    let load = match (live.search_pool, live.own_cores) {
        (Some(pool), _) => {
            let per_core = pool.load_per_core_milli().map_or_else(
                || "no mean yet".to_owned(),
                |milli| {
                    format!(
                        "{:.2} task(s) per core on average",
                        f64::from(milli) / 1000.0
                    )
                },
            );
            format!(
                "the busiest node runs on {cores} core(s): {per_core} since the poll before, \
                 {queue} queued and {active} of {threads} search threads busy at the last \
                 poll",
                cores = pool.cores(),
                queue = pool.queue,
                active = pool.active,
                threads = pool.threads,
            )
        }
        (None, Some(cores)) => format!(
            "this machine's CPU is the service's own: its {flying} request(s) in flight over \
             {cores} core(s) are the load",
            flying = live.in_flight,
        ),
        (None, None) => "the poll did not report a load to read (the cap is learnt from \
                         completions)"
            .to_owned(),
    };
    format!("{load}; {saturated}")
}

/// The page of `view` as an answer: its headers ([`super::HEADERS`] and the content type)
/// and body. axum answers the pair as it is (`IntoResponse`); with hyper, set each header.
///
/// ```
/// use load_runtime::dashboard::{self, Snapshot};
/// use load_runtime::{ControlConfig, CpuPercent, FixedSource, LoadGuard, Runtime, time::Sleep};
///
/// # #[derive(Clone, Copy, Default)] struct Rt;
/// # impl Sleep for Rt { async fn sleep(&self, _: std::time::Duration) {} }
/// # impl Runtime for Rt { fn spawn(&self, _: impl std::future::Future<Output = ()> + Send + 'static) {} }
/// static CLUSTER: FixedSource = FixedSource::new(CpuPercent::new(42));
/// let guard: LoadGuard<Rt, _> = LoadGuard::with_source(&ControlConfig::new(), &CLUSTER);
///
/// let (headers, body) = dashboard::response(&Snapshot::of(&guard).view(2));
/// assert!(headers.contains(&("content-type", dashboard::CONTENT_TYPE)));
/// assert!(headers.contains(&("cache-control", "no-store")));
/// assert!(body.starts_with("<!DOCTYPE html>"));
/// ```
#[must_use]
pub fn response(view: &View<'_>) -> ([(&'static str, &'static str); 4], String) {
    let [csp, cache, sniff] = super::HEADERS;
    (
        [("content-type", super::CONTENT_TYPE), csp, cache, sniff],
        page(view),
    )
}

/// The whole page: the badges, the charts, the settings the view holds and the links the
/// caller handed it.
#[must_use]
pub fn page(view: &View<'_>) -> String {
    let latest = view.cluster.latest();
    let (web_class, web_text) = state(view.armed_web, view.web_threshold, view);
    let (api_class, api_text) = state(view.armed_api, view.api_threshold, view);
    let (source_badge, source_title) = source_names(view.source);
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
         <li class=\"badge\" id=\"cluster-now\">{source_badge}: {cluster}</li>\n",
        cluster = if view.monitor_started {
            shown(latest.and_then(|p| p.cpu))
        } else {
            "monitor not started (no controlled request yet)".to_owned()
        },
    );
    if let Some(background) = &view.background {
        let work = match background.local.latest() {
            _ if background.threshold.is_off() => "running (adaptive control off)",
            Some(point) if !point.open => "paused",
            _ => "running",
        };
        let _ = write!(
            html,
            "<li class=\"badge\" id=\"local-now\">This machine: {local}</li>\n\
             <li class=\"badge\" id=\"crawler-state\">{name}: {work}</li>\n",
            local = shown(background.local.latest().and_then(|p| p.cpu)),
            name = escape(&background.name),
        );
    }
    html.push_str("</ul>\n");
    if view.mode == Mode::Monitor {
        html.push_str(
            "<p class=\"legend\">Monitor mode: requests over a threshold are counted, \
             not rejected.</p>\n",
        );
    }
    let _ = write!(
        html,
        "<h2>{source_title}</h2>\n{chart}<p class=\"legend\">{raw}{smoothed}{web}{api}</p>\n",
        chart = cluster_chart(view, source_title),
        raw = swatch(
            "raw",
            if view.source == Some(SourceKind::Cluster) {
                "CPU (busiest node)"
            } else {
                "CPU"
            }
        ),
        smoothed = if view.smoothing {
            swatch("smoothed", "smoothed (decides)")
        } else {
            String::new()
        },
        web = swatch("web", "web armed"),
        api = swatch("api", "API armed"),
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
        let _ = writeln!(
            html,
            "<p id=\"fleet\">What the limit mode reads: {acts_on}. This front end refused \
             {refused} % of its demand between the last two polls; its cap is {cap:.2} \
             request(s). Flood bound: {flood}.</p>",
            acts_on = acts_on(live),
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
        "<p id=\"rejected-in-all\">Rejected in all: web {web}, API {api}.</p>",
        web = by_reason(view.rejections_web),
        api = by_reason(view.rejections_api),
    );
    if let Some(background) = &view.background {
        let name = escape(&background.name);
        let done = background
            .done
            .map_or_else(String::new, |done| format!("{done} units of work, "));
        let note = background
            .note
            .as_deref()
            .map_or_else(String::new, |note| format!("{}, ", escape(note)));
        let _ = write!(
            html,
            "<h2>{name} and this machine's CPU</h2>\n{chart}<p class=\"legend\">{local}{paused}</p>\n\
             <p id=\"crawler\">{name}: {done}{note}{waiting} task(s) waiting at the gate.</p>\n",
            chart = local_chart(view, background),
            local = swatch("local", "CPU"),
            paused = swatch("paused", "background work paused"),
            waiting = background.waiting,
        );
    }
    // The last poll error: a row of the settings table when the caller asked for one,
    // else a line of its own when there is an error to show.
    let error = view.last_error.as_ref().map(|(text, ago)| {
        format!(
            "<td class=\"error\" id=\"last-error\">{} ({}s ago)</td>",
            escape(text),
            ago.as_secs()
        )
    });
    if !view.settings.is_empty() {
        html.push_str("<h2>Settings</h2>\n<table id=\"settings\">\n");
        for (key, value) in &view.settings {
            let _ = writeln!(
                html,
                "<tr><th>{}</th><td>{}</td></tr>",
                escape(key),
                escape(value)
            );
        }
        let error = error.unwrap_or_else(|| "<td id=\"last-error\">none</td>".to_owned());
        let _ = writeln!(html, "<tr><th>Last poll error</th>{error}</tr>\n</table>");
    } else if let Some(error) = error {
        let _ = writeln!(
            html,
            "<table><tr><th>Last poll error</th>{error}</tr></table>"
        );
    }
    let links: Vec<String> = view
        .links
        .iter()
        .map(|(text, href)| format!("<a href=\"{}\">{}</a>", escape(href), escape(text)))
        .collect();
    let _ = write!(
        html,
        "<footer>{refresh} The charts span the last {window}s.{links}</footer>\n\
         </body>\n</html>\n",
        refresh = if view.refresh > 0 {
            format!("Refreshes every {} s.", view.refresh)
        } else {
            String::new()
        },
        window = view.window.as_secs(),
        links = if links.is_empty() {
            String::new()
        } else {
            format!(" {}.", links.join(", "))
        },
    );
    html
}
