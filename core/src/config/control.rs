//! The control settings: thresholds, intervals and the opt-in behaviour beyond Fess. Small
//! and `Copy`: what a microcontroller keeps.

use core::time::Duration;

use super::apply::{Apply, apply_entries};
use super::{ConfigError, keys};
use crate::properties::{Encoding, Properties};
use crate::{GateThreshold, Threshold, path::StaticFiles};

/// What a failed poll of the cluster means for requests (`load.control.failure.policy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FailurePolicy {
    /// The CPU reads 0 % at once: requests are admitted (Fess; the default).
    #[default]
    Open,
    /// The last good sample is kept for up to `load.control.stale.after`, then as `Open`.
    Hold,
    /// The last good sample is kept for up to `load.control.stale.after`; after that the
    /// signal is unknown and controlled requests are rejected until a poll succeeds.
    Closed,
}

/// How raw samples become the CPU that decisions use (`load.control.smoothing`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Smoothing {
    /// Each sample as it is (Fess; the default).
    #[default]
    None,
    /// A time-aware exponentially weighted moving average with this time constant: a sample
    /// `dt` after the previous one weighs `1 - exp(-dt / tau)`, so irregular polls do not
    /// skew it. Seeded with the first sample.
    Ewma {
        /// The time constant.
        tau: Duration,
    },
}

/// Whether rejections are enforced (`load.control.mode`).
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Reject (Fess; the default).
    #[default]
    Enforce,
    /// Admit everything, but count and log what would have been rejected: a safe way to tune
    /// thresholds on a live system.
    Monitor,
}

/// How a class whose threshold is reached admits requests (`load.control.admission`).
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum AdmissionMode {
    /// Every request of the class is rejected while its threshold is reached (Fess; the
    /// default).
    #[default]
    Threshold,
    /// The threshold arms the class; while armed (and for a cool-off after), its requests
    /// are admitted while the front end's own in-flight count is under a cap learnt from
    /// its completions ([`crate::admission`]). Needs [`crate::LoadControl::admit`]'s
    /// permits.
    Limit,
}

/// Where the adaptive gate's local CPU comes from (`adaptive.load.control.source`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CpuSourceKind {
    /// The cgroup when it sets a CPU limit (a container with a quota or a cpuset), else
    /// the host (the default).
    #[default]
    Auto,
    /// The whole machine, as `/proc/stat` reports it.
    Host,
    /// This process's cgroup: usage over time relative to its CPU limit.
    Cgroup,
}

/// The control settings of a [`crate::Config`]: everything but the cluster's connection.
///
/// A plain, small `Copy` value with Fess's defaults: build it with [`ControlConfig::new`]
/// and set fields, or read it from a properties file with
/// [`ControlConfig::from_properties`] (which skips the connection keys: a firmware reads
/// its thresholds without carrying addresses and credentials).
///
/// ```
/// use load_core::{ControlConfig, Threshold};
///
/// let control = ControlConfig::from_properties(
///     "# graded control: shed the web first\n\
///      web.load.control=70\n\
///      api.load.control : 80\n\
///      search_engine.http.url=http://node1:9200\n",
/// )?;
/// assert_eq!(control.web_threshold, Threshold::from_fess(70));
/// assert!(control.http_control_enabled());
/// # Ok::<(), load_core::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ControlConfig {
    /// `web.load.control`: the cluster CPU at or above which web requests are rejected.
    /// Default off (Fess's 100).
    pub web_threshold: Threshold,
    /// `api.load.control`: the same for API requests. Default off.
    pub api_threshold: Threshold,
    /// `load.control.monitor.interval`: time between polls, 1 s to one day. Default 1 s.
    pub monitor_interval: Duration,
    /// `adaptive.load.control`: local CPU % at or above which background work waits; off at
    /// `<= 0` or above 100. Default 50.
    pub adaptive_threshold: GateThreshold,
    /// `load.control.retry.after`: seconds in `Retry-After` and the API body. Default 60.
    pub retry_after: u32,
    /// `load.control.failure.policy`. Default [`FailurePolicy::Open`] (Fess).
    pub failure_policy: FailurePolicy,
    /// `load.control.stale.after`: how long `hold` and `closed` keep the last good sample.
    /// Default 10 s.
    pub stale_after: Duration,
    /// `load.control.smoothing` and `load.control.smoothing.tau`. Default none (Fess).
    pub smoothing: Smoothing,
    /// `load.control.enter.samples`: consecutive samples at or above a threshold before its
    /// class is rejected, 1 to 1000. Default 1 (Fess).
    pub enter_samples: u32,
    /// `load.control.exit.margin`: rejecting stops only below the threshold minus this,
    /// 0 to 100 percent. Default 0 (Fess).
    pub exit_margin: u8,
    /// `load.control.min.hold`: minimum time in the armed state. Default 0 (Fess).
    pub min_hold: Duration,
    /// `load.control.mode`. Default [`Mode::Enforce`] (Fess).
    pub mode: Mode,
    /// `load.control.retry.after.jitter`: up to this many seconds (0 to 3600) added at
    /// random to each `Retry-After`, so rejected clients do not return in step. Default 0.
    pub retry_after_jitter: u32,
    /// `load.control.monitor.jitter`: a random delay of up to this long (0 to 3600 s) before
    /// the cluster monitor's first poll, so front ends started together do not poll in
    /// lockstep. Default 0.
    pub monitor_jitter: Duration,
    /// `adaptive.load.control.source`: where the local CPU comes from. Default
    /// [`CpuSourceKind::Auto`].
    pub adaptive_source: CpuSourceKind,
    /// `load.control.admission`. Default [`AdmissionMode::Threshold`] (Fess).
    pub admission: AdmissionMode,
    /// `load.control.admission.cooloff`: polls a class stays armed after its threshold is
    /// no longer reached, 2 to 1000. Default 2.
    pub admission_cooloff: u32,
    /// `load.control.admission.initial`: the in-flight cap before any completion, and its
    /// least value after, 1 to 1,000,000. Default 8.
    pub admission_initial: u32,
    /// Where static files live (set in code; no key): by default Fess's rule, a static
    /// extension anywhere excludes a request ([`StaticFiles::Everywhere`]). See
    /// [`StaticFiles`]; fixed at construction of a [`crate::LoadControl`].
    pub static_files: StaticFiles,
    /// Paths this server declares never controlled (set in code; no key), beyond Fess's
    /// `/admin`, `/error` and `/login`: its metrics, health checks and probes, which must
    /// answer under any load. Whole segments on canonical targets (see
    /// [`crate::path::PathRules`]); empty by default (Fess); fixed at construction of a
    /// [`crate::LoadControl`].
    pub uncontrolled: &'static [&'static str],
}

impl ControlConfig {
    /// Fess's defaults: HTTP control off (100/100), 1 s interval, adaptive control at 50 %,
    /// `Retry-After: 60`.
    pub const DEFAULT: ControlConfig = ControlConfig {
        web_threshold: Threshold::OFF,
        api_threshold: Threshold::OFF,
        monitor_interval: Duration::from_secs(1),
        adaptive_threshold: GateThreshold::DEFAULT,
        retry_after: 60,
        failure_policy: FailurePolicy::Open,
        stale_after: Duration::from_secs(10),
        smoothing: Smoothing::None,
        enter_samples: 1,
        exit_margin: 0,
        min_hold: Duration::ZERO,
        mode: Mode::Enforce,
        retry_after_jitter: 0,
        monitor_jitter: Duration::ZERO,
        adaptive_source: CpuSourceKind::Auto,
        admission: AdmissionMode::Threshold,
        admission_cooloff: 2,
        admission_initial: 8,
        static_files: StaticFiles::Everywhere,
        uncontrolled: &[],
    };

    /// The defaults, [`ControlConfig::DEFAULT`].
    #[must_use]
    pub const fn new() -> ControlConfig {
        ControlConfig::DEFAULT
    }

    /// How requests are classified: [`ControlConfig::static_files`] and
    /// [`ControlConfig::uncontrolled`] over Fess's rules.
    #[must_use]
    pub const fn paths(&self) -> crate::path::PathRules {
        crate::path::PathRules {
            static_files: self.static_files,
            uncontrolled: self.uncontrolled,
        }
    }

    /// Whether HTTP request control is on: a class's threshold is not off. When it is off,
    /// the cluster monitor never starts.
    #[must_use]
    pub const fn http_control_enabled(&self) -> bool {
        !self.web_threshold.is_off() || !self.api_threshold.is_off()
    }

    /// Whether adaptive control of background work is on: its threshold is not off.
    #[must_use]
    pub const fn adaptive_enabled(&self) -> bool {
        !self.adaptive_threshold.is_off()
    }

    /// Reads the control keys from the text of a Java properties file, on top of the
    /// defaults; the cluster's connection keys are skipped, like unknown keys. Otherwise as
    /// [`crate::Config::from_properties`].
    ///
    /// # Errors
    ///
    /// As [`crate::Config::from_properties`], for the control keys.
    pub fn from_properties(text: &str) -> Result<ControlConfig, ConfigError> {
        let mut control = ControlConfig::DEFAULT;
        apply_entries(&mut control, Properties::from_text(text))?;
        Ok(control)
    }

    /// [`ControlConfig::from_properties`] on the bytes of a file: UTF-8 when they are
    /// valid UTF-8, else ISO-8859-1; also says which.
    ///
    /// # Errors
    ///
    /// As [`ControlConfig::from_properties`].
    pub fn from_properties_bytes(bytes: &[u8]) -> Result<(ControlConfig, Encoding), ConfigError> {
        let mut control = ControlConfig::DEFAULT;
        let properties = Properties::new(bytes);
        let encoding = properties.encoding();
        apply_entries(&mut control, properties)?;
        Ok((control, encoding))
    }

    /// Checks every value as a file would be checked (see [`crate::Config::validate`]).
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] with [`super::Origin::Config`] for the first refused key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        keys::TABLE
            .iter()
            .try_for_each(|key| key.check_control(self))
    }
}

impl Default for ControlConfig {
    fn default() -> Self {
        ControlConfig::DEFAULT
    }
}

impl Apply for ControlConfig {
    fn takes(key: &keys::Key) -> bool {
        key.is_control()
    }

    fn apply(&mut self, key: &keys::Key, value: &str) -> Result<(), super::ConfigErrorKind> {
        key.parse_control(self, value)
    }

    fn finish(&self) -> Result<(), ConfigError> {
        Ok(())
    }
}
