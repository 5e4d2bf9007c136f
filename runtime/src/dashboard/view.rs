//! What the page shows, as a value: the histories, the live state and settings, and what
//! the caller adds (the settings table, background work's counts, links).

use std::time::Duration;

use load_core::config::keys;
use load_core::history::{ClusterPoint, LocalPoint, Timeline};
use load_core::source::SourceKind;
use load_core::{
    AdmissionMode, AdmissionStats, Config, GateThreshold, Instant, Mode, Rejections, Threshold,
};

use super::SETTINGS;

/// What the page shows: the histories, the clocks they were taken at, the live state and
/// settings, and what the caller adds. Made by [`super::Snapshot::view`] and grown with the
/// `with_` methods; a later version may add fields.
#[derive(Debug)]
#[non_exhaustive]
pub struct View<'a> {
    /// What the request control's source reads (`None`: request control off).
    pub source: Option<SourceKind>,
    /// The request monitor's points.
    pub cluster: &'a Timeline<ClusterPoint>,
    /// The request monitor's clock when the snapshot was taken.
    pub cluster_now: Instant,
    /// Background work's gate: its sampler's points and clock (`None`: no gate, the page
    /// shows no background work).
    pub background: Option<Background<'a>>,
    /// How much time the charts span (ending now).
    pub window: Duration,
    /// `web.load.control`, as requests are decided with now.
    pub web_threshold: Threshold,
    /// `api.load.control`, as requests are decided with now.
    pub api_threshold: Threshold,
    /// Whether smoothing is on (the effective CPU is drawn beside the raw one).
    pub smoothing: bool,
    /// `load.control.mode`, as requests are decided with now.
    pub mode: Mode,
    /// `load.control.admission`, as requests are decided with now.
    pub admission: AdmissionMode,
    /// The limit mode's state now: the cap, the requests in flight and what the law reads.
    pub live: AdmissionStats,
    /// Whether the request monitor was started (it starts on the first controlled request).
    pub monitor_started: bool,
    /// Whether the web class is armed now (the live state, for the badges): its requests
    /// refused by Fess's rule, or admitted under the cap in the limit mode.
    pub armed_web: bool,
    /// Whether the API class is armed now.
    pub armed_api: bool,
    /// Web requests rejected in all, by reason (the words of the log and the metrics).
    pub rejections_web: Rejections,
    /// API requests rejected in all, by reason.
    pub rejections_api: Rejections,
    /// Settings shown in the table: key and value (secrets already hidden).
    pub settings: Vec<(&'static str, String)>,
    /// The links of the page's footer: text and address, as the caller gave them.
    pub links: Vec<(String, String)>,
    /// The last poll error, without credentials, and how long ago it happened.
    pub last_error: Option<(String, Duration)>,
    /// Seconds between refreshes (`0`: no refresh).
    pub refresh: u32,
}

/// Background work's side of the page: the gate's history and state.
#[derive(Debug)]
#[non_exhaustive]
pub struct Background<'a> {
    /// The gate sampler's points.
    pub local: &'a Timeline<LocalPoint>,
    /// The gate's clock when the snapshot was taken.
    pub local_now: Instant,
    /// `adaptive.load.control`, as the gate decides with now.
    pub threshold: GateThreshold,
    /// Tasks waiting at the gate now.
    pub waiting: u32,
    /// What the work is called on the page ("Background work" unless
    /// [`View::with_work`] names it).
    pub name: String,
    /// Units of work done (`None`: not counted).
    pub done: Option<u64>,
    /// A note of the caller's on what the work did, shown after the count (escaped; `None`:
    /// none).
    pub note: Option<String>,
}

impl View<'_> {
    /// The table of settings: the control keys an operator tunes and the cluster's address
    /// (`web.load.control`, `api.load.control`, `adaptive.load.control`, the mode, the
    /// admission and its cool-off and initial cap, the interval, the failure policy, the
    /// smoothing, `search_engine.http.url`) as `config` holds them (the background
    /// gate's only with a gate), with the live value where requests or the gate decide
    /// with another (a reload since `config` was read).
    #[must_use]
    pub fn with_settings(mut self, config: &Config) -> Self {
        let mut live = config.clone();
        live.control.web_threshold = self.web_threshold;
        live.control.api_threshold = self.api_threshold;
        live.control.mode = self.mode;
        live.control.admission = self.admission;
        if let Some(background) = &self.background {
            live.control.adaptive_threshold = background.threshold;
        }
        let gate = self.background.is_some();
        self.settings = SETTINGS
            .into_iter()
            // The gate's key only where the page shows background work.
            .filter(|name| gate || *name != keys::ADAPTIVE_LOAD_CONTROL)
            .filter_map(keys::find)
            .map(|key| {
                let value = key.value(&live).to_string();
                let value = if value.is_empty() {
                    "not set".to_owned()
                } else {
                    value
                };
                (key.name(), value)
            })
            .collect();
        self
    }

    /// Names the background work (the page says "Background work" otherwise) and counts
    /// what it did: `done` units of work. No effect on a view without a gate.
    #[must_use]
    pub fn with_work(mut self, name: &str, done: u64) -> Self {
        if let Some(background) = &mut self.background {
            name.clone_into(&mut background.name);
            background.done = Some(done);
        }
        self
    }

    /// A note on what the background work did, shown after its count (say, "12340
    /// documents indexed"). No effect on a view without a gate.
    #[must_use]
    pub fn with_work_note(mut self, note: &str) -> Self {
        if let Some(background) = &mut self.background {
            background.note = Some(note.to_owned());
        }
        self
    }

    /// Adds a link to the page's footer (say, the server's JSON stats or its metrics): the
    /// page links nothing the caller did not hand it. Both are escaped.
    #[must_use]
    pub fn with_link(mut self, text: &str, href: &str) -> Self {
        self.links.push((text.to_owned(), href.to_owned()));
        self
    }
}
