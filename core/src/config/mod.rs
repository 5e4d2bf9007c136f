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
mod tests {
    use super::*;

    fn parse(text: &str) -> Config {
        match Config::from_properties(text) {
            Ok(config) => config,
            Err(e) => panic!("{text:?}: {e}"),
        }
    }

    #[test]
    fn defaults_are_fess_defaults() {
        let config = parse("");
        assert_eq!(config, Config::DEFAULT);
        assert_eq!(config.web_threshold, 100);
        assert_eq!(config.api_threshold, 100);
        assert_eq!(config.monitor_interval, Duration::from_secs(1));
        assert_eq!(config.adaptive_threshold, 50);
        assert_eq!(config.retry_after, 60);
        assert_eq!(config.search_engine_url, None);
        assert!(!config.http_control_enabled());
        assert!(config.adaptive_enabled());
    }

    #[test]
    fn separators_whitespace_and_comments() {
        let config = parse(
            "# comment\n\
             ! another = comment\n\
             \n   \t\n\
             web.load.control=70\n\
             \t api.load.control : 80   \n\
             load.control.monitor.interval 2\n\
             adaptive.load.control\t=\t0\r\n",
        );
        assert_eq!(config.web_threshold, 70);
        assert_eq!(config.api_threshold, 80);
        assert_eq!(config.monitor_interval, Duration::from_secs(2));
        assert_eq!(config.adaptive_threshold, 0);
        assert!(!config.adaptive_enabled());
        // `:=30`: the separator is `:`, the value `=30`, which is not an integer in Java
        // either. Prove it with the error instead:
        assert!(Config::from_properties("load.control.retry.after:=30").is_err());
        assert_eq!(parse("load.control.retry.after = 30").retry_after, 30);
    }

    #[test]
    fn continuations_and_escapes() {
        let config = parse(
            "web.load.con\\\n    trol = 6\\\n   5\n\
             search_engine.http.url = https\\://admin\\:secret@search.example\\:9200\n\
             api.load.control=\\u0038\\u0030\n",
        );
        assert_eq!(config.web_threshold, 65);
        assert_eq!(config.api_threshold, 80);
        let url = config.search_engine_url.expect("url").first();
        assert_eq!(url.as_str(), "https://admin:secret@search.example:9200");
        assert_eq!(url.credentials(), Some(("admin", "secret")));
        assert_eq!(
            url.without_credentials().as_str(),
            "https://search.example:9200"
        );
    }

    #[test]
    fn crlf_and_cr_line_endings_count_lines() {
        let error = Config::from_properties("a=1\r\nb=2\rweb.load.control=x\r\n").unwrap_err();
        assert_eq!(error.at, Origin::Line(3));
    }

    #[test]
    fn unknown_keys_are_ignored_last_wins() {
        let config = parse("foo=bar\nweb.load.control=10\nweb.load.control=20\nx\n");
        assert_eq!(config.web_threshold, 20);
    }

    #[test]
    fn fess_threshold_meanings_are_kept() {
        let config = parse("web.load.control=200\napi.load.control=-5\nadaptive.load.control=-1");
        assert_eq!(config.web_threshold, 200);
        assert_eq!(config.api_threshold, -5);
        assert!(config.http_control_enabled());
        assert!(!config.adaptive_enabled());
        assert_eq!(parse("web.load.control=+80").web_threshold, 80);
    }

    #[test]
    fn errors_name_line_key_and_value() {
        let cases: [(&str, u32, &str, &str, ConfigErrorKind); 8] = [
            (
                "web.load.control=abc",
                1,
                "web.load.control",
                "abc",
                ConfigErrorKind::NotAnInteger,
            ),
            (
                "\n\napi.load.control=8.5",
                3,
                "api.load.control",
                "8.5",
                ConfigErrorKind::NotAnInteger,
            ),
            (
                "adaptive.load.control=",
                1,
                "adaptive.load.control",
                "",
                ConfigErrorKind::NotAnInteger,
            ),
            (
                "web.load.control=99999999999",
                1,
                "web.load.control",
                "99999999999",
                ConfigErrorKind::NotAnInteger,
            ),
            (
                "load.control.monitor.interval=0",
                1,
                "load.control.monitor.interval",
                "0",
                ConfigErrorKind::OutOfRange {
                    min: 1,
                    max: 86_400,
                },
            ),
            (
                "load.control.monitor.interval=86401",
                1,
                "load.control.monitor.interval",
                "86401",
                ConfigErrorKind::OutOfRange {
                    min: 1,
                    max: 86_400,
                },
            ),
            (
                "load.control.retry.after=-1",
                1,
                "load.control.retry.after",
                "-1",
                ConfigErrorKind::OutOfRange {
                    min: 1,
                    max: 86_400,
                },
            ),
            (
                "search_engine.http.url=ftp://x",
                1,
                "search_engine.http.url",
                "ftp://x",
                ConfigErrorKind::InvalidUrl(UrlError::UnsupportedScheme),
            ),
        ];
        for (text, line, key, value, kind) in cases {
            let error = Config::from_properties(text).unwrap_err();
            assert_eq!(error.at, Origin::Line(line), "{text}");
            assert_eq!(error.key.as_str(), key, "{text}");
            assert_eq!(error.value.as_str(), value, "{text}");
            assert_eq!(error.kind, kind, "{text}");
        }
    }

    #[test]
    fn java_reads_these_files_and_so_does_this() {
        // A surrogate pair escape anywhere, even in a key nobody reads.
        let config = parse("label.emoji=\\uD83D\\uDE00\nweb.load.control=70\n");
        assert_eq!(config.web_threshold, 70);
        // The last duplicate wins, whatever the earlier ones said.
        assert_eq!(
            parse("web.load.control=\nweb.load.control=70\n").web_threshold,
            70
        );
        assert_eq!(
            parse("web.load.control=x\napi.load.control=9\nweb.load.control=71").web_threshold,
            71
        );
        // ... and a bad last value is reported on its own line.
        let error =
            Config::from_properties("web.load.control=70\n\nweb.load.control=x\n").unwrap_err();
        assert_eq!(
            (error.at, error.kind),
            (Origin::Line(3), ConfigErrorKind::NotAnInteger)
        );
        // A comment line inside a continuation that has nothing yet is a comment.
        assert_eq!(parse("\\\n# c \\\nweb.load.control=42\n").web_threshold, 42);
        // Continuations join before escapes are decoded.
        assert_eq!(parse("web.load.control=\\u00\\\n  37\n").web_threshold, 7);
    }

    #[test]
    fn long_values_are_refused_never_cut() {
        let zeros = std::format!("x=1\nweb.load.control={}7\n", "0".repeat(512));
        let error = Config::from_properties(&zeros).unwrap_err();
        assert_eq!(error.kind, ConfigErrorKind::TooLong { max: 512 });
        assert_eq!(
            (error.at, error.key.as_str()),
            (Origin::Line(2), "web.load.control")
        );
        let spaces = std::format!("web.load.control=70{}x\n", " ".repeat(600));
        assert_eq!(
            Config::from_properties(&spaces).unwrap_err().kind,
            ConfigErrorKind::TooLong { max: 512 }
        );
        // Unknown keys may be as long as they like.
        let long = std::format!("fess.long={}\nweb.load.control=60\n", "v".repeat(10_000));
        assert_eq!(parse(&long).web_threshold, 60);
        // A known value just within the limit is read whole.
        let padded = std::format!("web.load.control={}61\n", "0".repeat(510));
        assert_eq!(parse(&padded).web_threshold, 61);
    }

    #[test]
    fn latin1_bytes_are_read_as_java_reads_them() {
        let (config, encoding) =
            Config::from_properties_bytes(b"label=caf\xe9\nweb.load.control=55\n").unwrap();
        assert_eq!((config.web_threshold, encoding), (55, Encoding::Latin1));
        let (_, encoding) = Config::from_properties_bytes("label=café\n".as_bytes()).unwrap();
        assert_eq!(encoding, Encoding::Utf8);
    }

    #[test]
    fn malformed_escape_is_a_malformed_line() {
        let error = Config::from_properties("ok=1\nfoo=\\u12G4\n").unwrap_err();
        assert_eq!(error.at, Origin::Line(2));
        assert_eq!(error.kind, ConfigErrorKind::MalformedEscape);
        assert!(error.to_string().starts_with("line 2: "), "{error}");
        // A lone surrogate is not malformed (Java keeps it; here it becomes U+FFFD).
        assert!(Config::from_properties("foo=\\uD800").is_ok());
    }

    #[test]
    fn apply_keeps_the_old_config_on_error() {
        let mut config = parse("web.load.control=70");
        assert!(
            config
                .apply_properties("api.load.control=80\nweb.load.control=x")
                .is_err()
        );
        assert_eq!(config.web_threshold, 70);
        assert_eq!(config.api_threshold, 100);
    }

    #[test]
    fn long_values_are_cut_in_errors() {
        let mut long = heapless::String::<200>::new();
        let _ = long.push_str("web.load.control=");
        for _ in 0..60 {
            let _ = long.push('é');
        }
        let error = Config::from_properties(&long).unwrap_err();
        assert!(error.value.is_truncated());
        assert_eq!(error.value.as_str().chars().count(), 24);
    }

    #[test]
    fn beyond_fess_keys_default_to_fess_behaviour() {
        let config = Config::DEFAULT;
        assert_eq!(config.failure_policy, FailurePolicy::Open);
        assert_eq!(config.smoothing, Smoothing::None);
        assert_eq!((config.enter_samples, config.exit_margin), (1, 0));
        assert_eq!(config.min_hold, Duration::ZERO);
        assert_eq!(config.mode, Mode::Enforce);
        assert_eq!(config.retry_after_jitter, 0);
    }

    #[test]
    fn beyond_fess_keys_parse() {
        let config = parse(
            "load.control.smoothing.tau=8\n\
             load.control.smoothing = EWMA\n\
             load.control.failure.policy=closed\n\
             load.control.stale.after=30\n\
             load.control.enter.samples=3\n\
             load.control.exit.margin=10\n\
             load.control.min.hold=20\n\
             load.control.mode=monitor\n\
             load.control.retry.after.jitter=15\n\
             load.control.monitor.jitter=30\n\
             adaptive.load.control.source=cgroup\n",
        );
        assert_eq!(config.monitor_jitter, Duration::from_secs(30));
        assert_eq!(config.adaptive_source, CpuSourceKind::Cgroup);
        assert_eq!(
            config.smoothing,
            Smoothing::Ewma {
                tau: Duration::from_secs(8)
            }
        );
        assert_eq!(config.failure_policy, FailurePolicy::Closed);
        assert_eq!(config.stale_after, Duration::from_secs(30));
        assert_eq!((config.enter_samples, config.exit_margin), (3, 10));
        assert_eq!(config.min_hold, Duration::from_secs(20));
        assert_eq!(config.mode, Mode::Monitor);
        assert_eq!(config.retry_after_jitter, 15);
        assert_eq!(
            parse("load.control.smoothing=ewma").smoothing,
            Smoothing::Ewma { tau: DEFAULT_TAU }
        );
        assert_eq!(
            parse("load.control.smoothing.tau=8").smoothing,
            Smoothing::None
        );
    }

    #[test]
    fn beyond_fess_errors() {
        for (text, kind, message) in [
            (
                "load.control.failure.policy=maybe",
                ConfigErrorKind::UnknownValue {
                    expected: "open|hold|closed",
                },
                "expected one of: open, hold, closed",
            ),
            (
                "load.control.mode=on",
                ConfigErrorKind::UnknownValue {
                    expected: "enforce|monitor",
                },
                "enforce, monitor",
            ),
            (
                "load.control.enter.samples=0",
                ConfigErrorKind::OutOfRange { min: 1, max: 1000 },
                "1 to 1000",
            ),
            (
                "load.control.exit.margin=101",
                ConfigErrorKind::OutOfRange { min: 0, max: 100 },
                "0 to 100",
            ),
            (
                "load.control.retry.after.jitter=-1",
                ConfigErrorKind::OutOfRange { min: 0, max: 3600 },
                "0 to 3600",
            ),
            (
                "load.control.smoothing.tau=0",
                ConfigErrorKind::OutOfRange {
                    min: 1,
                    max: 86_400,
                },
                "1 to 86400",
            ),
        ] {
            let error = Config::from_properties(text).unwrap_err();
            assert_eq!(error.kind, kind, "{text}");
            assert!(error.to_string().contains(message), "{error}");
        }
    }

    #[test]
    fn a_refused_url_never_shows_its_password() {
        for url in [
            "http://admin:Zq/Xw@host:9200",
            "http://admin:Zq#Xw@host:9200",
            "http://admin:Zq?Xw@host:9200",
            "ftp://admin:Zq Xw@host",
            "http://admin:Zq:Xw@host:99999",
            "http://admin:Zq,Xw@host:99999",
            "http://ok:9200, http://admin:Zq,Xw@host:99999",
        ] {
            let text = std::format!("search_engine.http.url = {url}\n");
            let error = Config::from_properties(&text).unwrap_err();
            let shown = std::format!("{error} {error:?} {}", error.value);
            assert!(
                !shown.contains("Zq") && !shown.contains("Xw"),
                "{url}: {shown}"
            );
            assert!(shown.contains("admin:***@host"), "{url}: {shown}");
        }
        let long = std::format!("search_engine.http.url=http://u:{}@h\n", "Zq".repeat(300));
        let shown = std::format!("{}", Config::from_properties(&long).unwrap_err());
        assert!(!shown.contains("Zq"), "{shown}");
    }

    #[test]
    fn urls() {
        for (text, expected) in [
            ("http://localhost:9200", Ok(())),
            ("HTTPS://search.example", Ok(())),
            ("https://[::1]:9200/", Ok(())),
            ("http://u:p@h:1/prefix", Ok(())),
            ("localhost:9200", Err(UrlError::UnsupportedScheme)),
            ("http://", Err(UrlError::MissingHost)),
            ("http://user@:80", Err(UrlError::MissingHost)),
            ("http://h:0", Err(UrlError::InvalidPort)),
            ("http://h:99999", Err(UrlError::InvalidPort)),
            ("http://h:+80", Err(UrlError::InvalidPort)),
            (
                "http://a:9200,http://b:9200",
                Err(UrlError::InvalidCharacter),
            ),
            ("http://a b", Err(UrlError::InvalidCharacter)),
            // Found by the properties fuzzer: a multi-byte character where the scheme's
            // prefix would end panicked on a non-boundary slice.
            ("httpꌚ://h", Err(UrlError::UnsupportedScheme)),
            ("é", Err(UrlError::UnsupportedScheme)),
            ("https:/ꌚ", Err(UrlError::UnsupportedScheme)),
        ] {
            assert_eq!(Url::parse(text).map(|_| ()), expected, "{text}");
        }
        let url = Url::parse("https://admin:hunter2@h:9200/x").unwrap();
        let mut shown = heapless::String::<128>::new();
        let _ = core::fmt::write(&mut shown, format_args!("{url} {url:?}"));
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("admin:***@h:9200/x"), "{shown}");
        assert_eq!(parse("search_engine.http.url=").search_engine_url, None);
    }

    /// Issue: a Fess config's comma-separated list was refused at start-up, and its
    /// username/password keys were silently ignored.
    #[test]
    fn fess_connection_keys_are_read() {
        let config = parse(
            "search_engine.http.url=http://node1:9200, http://node2:9200 ,http://[::1]:9200\n\
             search_engine.username=admin\n\
             search_engine.password=s3cr#t pass\n\
             search_engine.http.ssl.certificate_authorities=/etc/fess/root-ca.pem\n",
        );
        let urls = config.search_engine_url.expect("urls");
        let all: std::vec::Vec<_> = urls
            .iter()
            .map(|u| std::string::String::from(u.as_str()))
            .collect();
        assert_eq!(
            all,
            [
                "http://node1:9200",
                "http://node2:9200",
                "http://[::1]:9200"
            ]
        );
        let (user, password) = config.credentials().expect("both set");
        assert_eq!((user, password.expose()), ("admin", "s3cr#t pass"));
        assert_eq!(
            config
                .certificate_authorities
                .map(|p| std::string::String::from(p.as_str())),
            Some("/etc/fess/root-ca.pem".into())
        );
        // One without the other is not used, as in Fess.
        assert_eq!(parse("search_engine.username=admin").credentials(), None);
        assert_eq!(parse("search_engine.password=x").credentials(), None);
    }

    #[test]
    fn address_lists_are_checked_item_by_item() {
        for (text, kind) in [
            ("http://a:9200,,http://b:9200", UrlError::EmptyItem),
            ("http://a:9200,", UrlError::EmptyItem),
            ("http://a:9200,ftp://b", UrlError::UnsupportedScheme),
            ("http://a:9200,http://b:0", UrlError::InvalidPort),
            (
                "http://a,http://b,http://c,http://d,http://e,http://f,http://g,http://h,http://i",
                UrlError::TooMany,
            ),
        ] {
            let error = Config::from_properties(&std::format!("search_engine.http.url={text}"))
                .unwrap_err();
            assert_eq!(error.kind, ConfigErrorKind::InvalidUrl(kind), "{text}");
            assert_eq!(error.key.as_str(), keys::SEARCH_ENGINE_URL);
        }
        // A refused list never shows a password, in any item.
        let error =
            Config::from_properties("search_engine.http.url=http://u:Zq1@a:9200,http://v:Zq2@b:0")
                .unwrap_err();
        let shown = std::format!("{error} {error:?}");
        assert!(!shown.contains("Zq"), "{shown}");
        assert!(
            shown.contains("u:***@a:9200,v:***@b:0")
                || shown.contains("http://u:***@a:9200,http://v:***@b:0"),
            "{shown}"
        );
    }

    #[test]
    fn the_environment_overrides_the_file() {
        let mut config = parse(
            "search_engine.http.url=http://file:9200\nsearch_engine.username=fileuser\n\
             search_engine.password=filepass\n",
        );
        let env = |name: &str| match name {
            "SEARCH_ENGINE_HTTP_URL" => Some("http://env1:9200,http://env2:9200"),
            "SEARCH_ENGINE_PASSWORD" => Some("envpass"),
            "SEARCH_ENGINE_USERNAME" => Some("   "), // blank: left as the file says
            _ => None,
        };
        config.apply_env(env).unwrap();
        assert_eq!(config.search_engine_url.unwrap().len(), 2);
        let (user, password) = config.credentials().unwrap();
        assert_eq!((user, password.expose()), ("fileuser", "envpass"));

        let mut config = Config::new();
        let error = config
            .apply_env(|name: &str| (name == "SEARCH_ENGINE_HTTP_URL").then_some("node1:9200"))
            .unwrap_err();
        assert_eq!(error.at, Origin::Variable("SEARCH_ENGINE_HTTP_URL"));
        assert_eq!(
            error.to_string(),
            "environment variable SEARCH_ENGINE_HTTP_URL: search_engine.http.url = \"node1:9200\": \
             invalid URL: expected http:// or https://"
        );
        assert_eq!(config, Config::new(), "unchanged on error");
    }

    #[test]
    fn credentials_in_the_url_and_in_the_keys_are_a_conflict_naming_both() {
        let error = Config::from_properties(
            "search_engine.http.url=https://admin:Zq9@h:9200\nsearch_engine.username=admin\n",
        )
        .unwrap_err();
        assert_eq!(
            error.kind,
            ConfigErrorKind::Conflict {
                with: keys::SEARCH_ENGINE_USERNAME
            }
        );
        let message = error.to_string();
        assert!(
            message.contains("search_engine.http.url")
                && message.contains("search_engine.username"),
            "{message}"
        );
        assert!(!message.contains("Zq9"), "{message}");
        // File URL with userinfo, password from the environment: the same conflict.
        let mut config = parse("search_engine.http.url=https://admin:Zq9@h:9200");
        let error = config
            .apply_env(|name: &str| (name == "SEARCH_ENGINE_PASSWORD").then_some("other"))
            .unwrap_err();
        assert_eq!(
            error.kind,
            ConfigErrorKind::Conflict {
                with: keys::SEARCH_ENGINE_PASSWORD
            }
        );
        // Userinfo alone is still accepted.
        assert!(config.search_engine_url.unwrap().has_credentials());
    }

    #[test]
    fn a_password_never_shows() {
        let config = parse("search_engine.username=admin\nsearch_engine.password=Zq-hunter2\n");
        let key = keys::find(keys::SEARCH_ENGINE_PASSWORD).unwrap();
        let shown = std::format!("{config:?} {}", key.value(&config));
        assert!(!shown.contains("Zq-hunter2"), "{shown}");
        assert_eq!(key.value(&config).to_string(), "***");
        assert_eq!(key.value(&Config::new()).to_string(), "");
        let long = std::format!("search_engine.password={}\n", "Zq".repeat(200));
        let error = Config::from_properties(&long).unwrap_err();
        assert_eq!(error.kind, ConfigErrorKind::TooLong { max: 256 });
        assert!(!std::format!("{error} {error:?}").contains("Zq"));
        // A change of password alone is a change.
        let other = parse("search_engine.username=admin\nsearch_engine.password=other\n");
        let changed: std::vec::Vec<_> = keys::changes(&config, &other).map(|k| k.name()).collect();
        assert_eq!(changed, [keys::SEARCH_ENGINE_PASSWORD]);
        let a = parse("search_engine.http.url=http://u:one@h");
        let b = parse("search_engine.http.url=http://u:two@h");
        let changed: std::vec::Vec<_> = keys::changes(&a, &b).map(|k| k.name()).collect();
        assert_eq!(changed, [keys::SEARCH_ENGINE_URL]);
    }

    #[test]
    fn the_key_table_drives_parsing_and_shows_what_it_read() {
        // Every key reads back the value it shows, and its default is Config::DEFAULT's.
        for key in &keys::TABLE {
            let mut config = Config::new();
            let shown = std::format!("{}", key.default_value());
            if !shown.is_empty() {
                key.parse(&mut config, &shown)
                    .unwrap_or_else(|e| panic!("{}: {e:?}", key.name()));
            }
            assert_eq!(
                std::format!("{}", key.value(&config)),
                shown,
                "{}",
                key.name()
            );
            assert!(key.check(&Config::DEFAULT).is_ok(), "{}", key.name());
        }
        assert_eq!(keys::ALL.len(), keys::TABLE.len());
        let restart: std::vec::Vec<_> = keys::TABLE
            .iter()
            .filter(|k| k.needs_restart())
            .map(|k| k.name())
            .collect();
        assert_eq!(
            restart,
            [
                keys::MONITOR_INTERVAL,
                keys::SEARCH_ENGINE_URL,
                keys::SEARCH_ENGINE_USERNAME,
                keys::SEARCH_ENGINE_PASSWORD,
                keys::SEARCH_ENGINE_CA,
                keys::MONITOR_JITTER,
                keys::ADAPTIVE_SOURCE
            ]
        );
    }

    #[test]
    fn configs_built_in_code_are_validated_like_files() {
        let mut config = Config::new();
        config.enter_samples = 0;
        let error = config.validate().unwrap_err();
        assert_eq!(
            (error.at, error.key.as_str()),
            (Origin::Config, keys::ENTER_SAMPLES)
        );
        assert_eq!(
            error.to_string(),
            "configuration: load.control.enter.samples = \"0\": out of range (expected 1 to 1000)"
        );
        let mut config = Config::new();
        config.retry_after = 0;
        assert_eq!(
            config.validate().unwrap_err().key.as_str(),
            keys::RETRY_AFTER
        );
        let mut config = Config::new();
        config.retry_after_jitter = MAX_JITTER + 1;
        assert!(config.validate().is_err());
        let mut config = Config::new();
        config.smoothing = Smoothing::Ewma {
            tau: Duration::ZERO,
        };
        assert_eq!(
            config.validate().unwrap_err().key.as_str(),
            keys::SMOOTHING_TAU
        );
        let mut config = Config::new();
        config.search_engine_url = Some(ClusterUrls::parse("http://u:p@h").unwrap());
        config.search_engine_username = Text::new("u");
        assert!(matches!(
            config.validate().unwrap_err().kind,
            ConfigErrorKind::Conflict { .. }
        ));
    }

    #[test]
    fn reloadable_keeps_exactly_the_restart_keys() {
        let every = "web.load.control=1\napi.load.control=2\nload.control.monitor.interval=3\n\
            adaptive.load.control=4\nsearch_engine.http.url=http://a:9200\n\
            search_engine.username=u\nsearch_engine.password=p\n\
            search_engine.http.ssl.certificate_authorities=/ca.pem\nload.control.retry.after=5\n\
            load.control.failure.policy=hold\nload.control.stale.after=6\n\
            load.control.smoothing=ewma\nload.control.smoothing.tau=7\n\
            load.control.enter.samples=8\nload.control.exit.margin=9\nload.control.min.hold=10\n\
            load.control.mode=monitor\nload.control.retry.after.jitter=11\n\
            load.control.monitor.jitter=12\nadaptive.load.control.source=cgroup\n";
        let new = parse(every);
        let running = Config::new();
        // The test file sets every key to a non-default value.
        assert_eq!(keys::changes(&running, &new).count(), keys::TABLE.len());
        let applied = running.reloadable(&new);
        for key in &keys::TABLE {
            let kept = !key.differs(&applied, &running);
            let taken = !key.differs(&applied, &new);
            assert_eq!(
                (kept, taken),
                (key.needs_restart(), !key.needs_restart()),
                "{}",
                key.name()
            );
        }
    }
}
