//! Configuration: Fess's `fess_config.properties` keys and defaults, read from a file and
//! the environment, and checked.

use core::time::Duration;

use crate::properties::{Encoding, Entry, Position, Properties};
use crate::{Secret, Snippet, Text};

mod error;
pub mod keys;
mod url;

pub use error::{ConfigError, ConfigErrorKind, Origin};
pub use url::{ClusterUrls, Url, UrlError};

/// The longest interval or `Retry-After` accepted: one day, in seconds.
pub const MAX_SECONDS: u32 = 86_400;

/// The largest `Retry-After` jitter accepted, in seconds.
pub const MAX_JITTER: u32 = 3_600;

/// The EWMA time constant when `load.control.smoothing=ewma` is set without a `tau`.
pub const DEFAULT_TAU: Duration = Duration::from_secs(5);

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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Reject (Fess; the default).
    #[default]
    Enforce,
    /// Admit everything, but count and log what would have been rejected: a safe way to tune
    /// thresholds on a live system.
    Monitor,
}

/// Load-control settings, with Fess's defaults.
///
/// A plain `Copy` value: build it with [`Config::new`] (the defaults) and set fields, or
/// read it from a properties file with [`Config::from_properties`].
///
/// ```
/// use load_core::Config;
///
/// let config = Config::from_properties(
///     "# graded control: shed the web first\n\
///      web.load.control=70\n\
///      api.load.control : 80\n\
///      load.control.monitor.interval 2\n",
/// )?;
/// assert_eq!((config.web_threshold, config.api_threshold), (70, 80));
/// assert_eq!(config.monitor_interval.as_secs(), 2);
/// assert_eq!(config.adaptive_threshold, 50);
/// assert!(config.http_control_enabled());
/// # Ok::<(), load_core::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// `web.load.control`: CPU % at or above which web requests are rejected. `>= 100`
    /// disables web control; `<= 0` rejects every web request. Default 100.
    pub web_threshold: i32,
    /// `api.load.control`: the same for API requests. Default 100.
    pub api_threshold: i32,
    /// `load.control.monitor.interval`: time between polls, 1 s to one day. Default 1 s.
    pub monitor_interval: Duration,
    /// `adaptive.load.control`: local CPU % at or above which background work waits. `<= 0`
    /// disables. Default 50.
    pub adaptive_threshold: i32,
    /// `load.control.retry.after`: seconds in `Retry-After` and the API body. Default 60.
    pub retry_after: u32,
    /// `search_engine.http.url` (`$SEARCH_ENGINE_HTTP_URL`): the cluster's addresses,
    /// polled one at a time, the next after a failure. No default.
    pub search_engine_url: Option<ClusterUrls>,
    /// `search_engine.username` (`$SEARCH_ENGINE_USERNAME`): the user for HTTP basic auth,
    /// used only when the password is set too. No default.
    pub search_engine_username: Option<Text<128>>,
    /// `search_engine.password` (`$SEARCH_ENGINE_PASSWORD`): its password. No default.
    pub search_engine_password: Option<Secret>,
    /// `search_engine.http.ssl.certificate_authorities`: a PEM file of CA certificates
    /// that verify the cluster's certificate (besides the system's). No default.
    pub certificate_authorities: Option<Text<512>>,
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
    /// `load.control.min.hold`: minimum time in the rejecting state. Default 0 (Fess).
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

impl Config {
    /// Fess's defaults: HTTP control off (100/100), 1 s interval, adaptive control at 50 %,
    /// `Retry-After: 60`, no cluster address.
    pub const DEFAULT: Config = Config {
        web_threshold: 100,
        api_threshold: 100,
        monitor_interval: Duration::from_secs(1),
        adaptive_threshold: 50,
        retry_after: 60,
        search_engine_url: None,
        search_engine_username: None,
        search_engine_password: None,
        certificate_authorities: None,
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
    };

    /// The defaults, [`Config::DEFAULT`].
    #[must_use]
    pub const fn new() -> Config {
        Config::DEFAULT
    }

    /// Whether HTTP request control is on: a threshold below 100. When it is off, the
    /// cluster monitor never starts.
    #[must_use]
    pub const fn http_control_enabled(&self) -> bool {
        self.web_threshold < 100 || self.api_threshold < 100
    }

    /// Whether adaptive control of background work is on: a threshold above 0.
    #[must_use]
    pub const fn adaptive_enabled(&self) -> bool {
        self.adaptive_threshold > 0
    }

    /// Reads the keys this crate knows from the text of a Java properties file, on top of
    /// the defaults. Unknown keys are ignored; when a key appears twice the last one wins.
    ///
    /// The full properties syntax is understood: `#` and `!` comments, `=`, `:` or
    /// whitespace between key and value, surrounding whitespace, `\` line continuations and
    /// the escapes `\t \n \r \f \uXXXX`.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the line, key and value, for the first line that has a
    /// malformed escape, a threshold that is not an integer, an interval or `Retry-After`
    /// outside `1..=86400` seconds, or a cluster URL that is not `http(s)://host...`.
    pub fn from_properties(text: &str) -> Result<Config, ConfigError> {
        let mut config = Config::DEFAULT;
        config.apply_properties(text)?;
        Ok(config)
    }

    /// Like [`Config::from_properties`], on top of `self`. On error `self` is unchanged.
    ///
    /// # Errors
    ///
    /// As [`Config::from_properties`].
    pub fn apply_properties(&mut self, text: &str) -> Result<(), ConfigError> {
        self.apply_entries(Properties::from_text(text))
    }

    /// A configuration from the bytes of a properties file: UTF-8 when they are valid
    /// UTF-8, else ISO-8859-1 (see [`crate::properties`]); also says which.
    ///
    /// # Errors
    ///
    /// As [`Config::from_properties`].
    pub fn from_properties_bytes(bytes: &[u8]) -> Result<(Config, Encoding), ConfigError> {
        let mut config = Config::DEFAULT;
        let encoding = config.apply_properties_bytes(bytes)?;
        Ok((config, encoding))
    }

    /// Like [`Config::from_properties_bytes`], on top of `self`. On error `self` is
    /// unchanged.
    ///
    /// # Errors
    ///
    /// As [`Config::from_properties`].
    pub fn apply_properties_bytes(&mut self, bytes: &[u8]) -> Result<Encoding, ConfigError> {
        let properties = Properties::new(bytes);
        let encoding = properties.encoding();
        self.apply_entries(properties)?;
        Ok(encoding)
    }

    /// Reads every entry (a malformed escape anywhere fails the file, as in Java), then
    /// applies the last entry of each known key, in [`keys::TABLE`] order: an earlier
    /// duplicate is never judged. The credentials are checked against the addresses last.
    fn apply_entries(&mut self, mut properties: Properties<'_>) -> Result<(), ConfigError> {
        let mut last: [Option<Position>; keys::TABLE.len()] = [None; keys::TABLE.len()];
        loop {
            let at = properties.position();
            let Some(entry) = properties.next().transpose()? else {
                break;
            };
            if !entry.key_is_complete() {
                continue;
            }
            if let Some(i) = keys::TABLE.iter().position(|key| key.name() == entry.key()) {
                last[i] = Some(at);
            }
        }
        let mut next = *self;
        for (key, at) in keys::TABLE.iter().zip(last) {
            let Some(at) = at else { continue };
            if let Some(entry) = properties.at(at).next().transpose()? {
                next.set(key, &entry)?;
            }
        }
        next.check_credentials()?;
        *self = next;
        Ok(())
    }

    /// Applies one entry of `key`.
    fn set(&mut self, key: &keys::Key, entry: &Entry) -> Result<(), ConfigError> {
        let value = entry.value().trim();
        let at = Origin::Line(entry.line());
        // A value cut to the buffer would read as another value: refused, never guessed.
        if !entry.value_is_complete() {
            return Err(ConfigError {
                value: if key.name() == keys::SEARCH_ENGINE_URL {
                    cut_url(value)
                } else {
                    shown_value(key, value)
                },
                ..ConfigError::new(
                    at,
                    key,
                    "",
                    ConfigErrorKind::TooLong {
                        max: Entry::VALUE_CAPACITY,
                    },
                )
            });
        }
        key.parse(self, value)
            .map_err(|kind| ConfigError::new(at, key, value, kind))
    }

    /// Applies Fess's environment variables on top of `self`: `SEARCH_ENGINE_HTTP_URL`,
    /// `SEARCH_ENGINE_USERNAME` and `SEARCH_ENGINE_PASSWORD` (see [`keys::Key::variable`]).
    /// A variable that is unset or blank leaves its key as it is. On error `self` is
    /// unchanged.
    ///
    /// `var` looks a variable up: `|name| std::env::var(name).ok()` on an OS.
    ///
    /// ```
    /// use load_core::Config;
    ///
    /// let mut config = Config::from_properties("search_engine.http.url=http://file:9200")?;
    /// config.apply_env(|name| match name {
    ///     "SEARCH_ENGINE_HTTP_URL" => Some("http://node1:9200,http://node2:9200"),
    ///     "SEARCH_ENGINE_USERNAME" => Some("admin"),
    ///     "SEARCH_ENGINE_PASSWORD" => Some("secret"),
    ///     _ => None,
    /// })?;
    /// let urls = config.search_engine_url.expect("urls");
    /// assert_eq!(urls.len(), 2);
    /// assert_eq!(config.credentials().map(|(user, _)| user), Some("admin"));
    /// # Ok::<(), load_core::ConfigError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the variable ([`Origin::Variable`]), or a conflict between
    /// credentials in a URL and in the user/password keys.
    pub fn apply_env<V: AsRef<str>>(
        &mut self,
        mut var: impl FnMut(&str) -> Option<V>,
    ) -> Result<(), ConfigError> {
        let mut next = *self;
        for key in &keys::TABLE {
            let Some(name) = key.variable() else { continue };
            let Some(value) = var(name) else { continue };
            let value = value.as_ref().trim();
            if value.is_empty() {
                continue;
            }
            key.parse(&mut next, value)
                .map_err(|kind| ConfigError::new(Origin::Variable(name), key, value, kind))?;
        }
        next.check_credentials()?;
        *self = next;
        Ok(())
    }

    /// Checks every value as a file would be checked, for a configuration built or changed
    /// in code: the same ranges, except that durations may be below a second. Parsed
    /// configurations pass by construction.
    ///
    /// ```
    /// use core::time::Duration;
    /// use load_core::{Config, ConfigErrorKind};
    ///
    /// let mut config = Config::new();
    /// config.exit_margin = 101;
    /// let error = config.validate().unwrap_err();
    /// assert_eq!(error.key.as_str(), "load.control.exit.margin");
    /// assert_eq!(error.kind, ConfigErrorKind::OutOfRange { min: 0, max: 100 });
    /// config.exit_margin = 5;
    /// config.monitor_interval = Duration::from_millis(100); // fine in code
    /// assert!(config.validate().is_ok());
    /// config.monitor_interval = Duration::ZERO;
    /// assert!(config.validate().is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] with [`Origin::Config`] for the first key in [`keys::TABLE`] order
    /// whose value is refused.
    pub fn validate(&self) -> Result<(), ConfigError> {
        for key in &keys::TABLE {
            key.check(self).map_err(|kind| {
                let mut value = heapless::String::<64>::new();
                let _ = core::fmt::write(&mut value, format_args!("{}", key.value(self)));
                ConfigError::new(Origin::Config, key, &value, kind)
            })?;
        }
        self.check_credentials()
    }

    /// What of `new` can be applied to a running system configured with `self`: `new`, with
    /// every key that [needs a restart](keys::Key::needs_restart) kept as in `self`.
    ///
    /// ```
    /// use load_core::Config;
    ///
    /// let running = Config::from_properties("web.load.control=80\nload.control.monitor.interval=1")?;
    /// let file = Config::from_properties("web.load.control=70\nload.control.monitor.interval=5")?;
    /// let applied = running.reloadable(&file);
    /// assert_eq!(applied.web_threshold, 70); // at once
    /// assert_eq!(applied.monitor_interval.as_secs(), 1); // at the next restart
    /// # Ok::<(), load_core::ConfigError>(())
    /// ```
    #[must_use]
    pub fn reloadable(&self, new: &Config) -> Config {
        Config {
            monitor_interval: self.monitor_interval,
            search_engine_url: self.search_engine_url,
            search_engine_username: self.search_engine_username,
            search_engine_password: self.search_engine_password,
            certificate_authorities: self.certificate_authorities,
            monitor_jitter: self.monitor_jitter,
            adaptive_source: self.adaptive_source,
            ..*new
        }
    }

    /// The basic-auth user and password of `search_engine.username` and
    /// `search_engine.password`, when both are set (as in Fess: one alone is not used).
    #[must_use]
    pub fn credentials(&self) -> Option<(&str, &Secret)> {
        match (&self.search_engine_username, &self.search_engine_password) {
            (Some(user), Some(password)) => Some((user.as_str(), password)),
            _ => None,
        }
    }

    /// Credentials in a URL and in the user/password keys at once: which one was meant is
    /// a guess, so it is refused.
    fn check_credentials(&self) -> Result<(), ConfigError> {
        let Some(urls) = &self.search_engine_url else {
            return Ok(());
        };
        let with = match (&self.search_engine_username, &self.search_engine_password) {
            (Some(_), _) => keys::SEARCH_ENGINE_USERNAME,
            (None, Some(_)) => keys::SEARCH_ENGINE_PASSWORD,
            (None, None) => return Ok(()),
        };
        if !urls.has_credentials() {
            return Ok(());
        }
        let mut shown = heapless::String::<64>::new();
        let _ = core::fmt::write(&mut shown, format_args!("{urls}"));
        Err(ConfigError {
            at: Origin::Config,
            key: Snippet::new(keys::SEARCH_ENGINE_URL),
            value: Snippet::new(&shown),
            kind: ConfigErrorKind::Conflict { with },
        })
    }
}

impl ConfigError {
    /// An error for `key` from `at`, showing `value` as the key allows (a password as
    /// `***`, an address without its password).
    fn new(at: Origin, key: &keys::Key, value: &str, kind: ConfigErrorKind) -> ConfigError {
        ConfigError {
            at,
            key: Snippet::new(key.name()),
            value: shown_value(key, value),
            kind,
        }
    }
}

/// A refused value as an error may show it.
fn shown_value(key: &keys::Key, value: &str) -> Snippet {
    if key.is_secret() {
        Snippet::new("***")
    } else if key.name() == keys::SEARCH_ENGINE_URL {
        url::redacted_url(value)
    } else {
        Snippet::new(value)
    }
}

/// The start of an address that was cut, perhaps before the `@` that ends a password: the
/// scheme and nothing after it.
fn cut_url(value: &str) -> Snippet {
    let scheme = value.find("://").map_or("", |i| &value[..i + 3]);
    let mut shown = heapless::String::<16>::new();
    let _ = shown.push_str(scheme.get(..12).unwrap_or(scheme));
    let _ = shown.push('…');
    Snippet::new(&shown)
}

impl Default for Config {
    fn default() -> Self {
        Config::DEFAULT
    }
}

#[cfg(test)]
mod tests;
