//! Configuration: Fess's `fess_config.properties` keys and defaults, and a parser for them.

use core::fmt;
use core::time::Duration;

use crate::Snippet;
use crate::properties::{Encoding, Entry, Position, Properties};

/// The property keys this crate reads; all others are ignored.
pub mod keys {
    /// CPU % at or above which web requests are rejected; `>= 100` disables.
    pub const WEB_LOAD_CONTROL: &str = "web.load.control";
    /// CPU % at or above which API requests are rejected; `>= 100` disables.
    pub const API_LOAD_CONTROL: &str = "api.load.control";
    /// Seconds between polls of the cluster's CPU.
    pub const MONITOR_INTERVAL: &str = "load.control.monitor.interval";
    /// Local CPU % at or above which background work waits; `<= 0` disables.
    pub const ADAPTIVE_LOAD_CONTROL: &str = "adaptive.load.control";
    /// The search cluster's address.
    pub const SEARCH_ENGINE_URL: &str = "search_engine.http.url";
    /// Seconds a rejected client is told to wait (`Retry-After`).
    pub const RETRY_AFTER: &str = "load.control.retry.after";
    /// What a failed poll means: `open` (0 %, Fess), `hold` or `closed`.
    pub const FAILURE_POLICY: &str = "load.control.failure.policy";
    /// Seconds a held sample stays valid after the last successful poll.
    pub const STALE_AFTER: &str = "load.control.stale.after";
    /// `none` (Fess) or `ewma`.
    pub const SMOOTHING: &str = "load.control.smoothing";
    /// The EWMA's time constant, in seconds.
    pub const SMOOTHING_TAU: &str = "load.control.smoothing.tau";
    /// Consecutive samples at or above a threshold before rejecting starts.
    pub const ENTER_SAMPLES: &str = "load.control.enter.samples";
    /// Rejecting stops only below the threshold minus this many percent.
    pub const EXIT_MARGIN: &str = "load.control.exit.margin";
    /// Minimum seconds in the rejecting state.
    pub const MIN_HOLD: &str = "load.control.min.hold";
    /// `enforce` (Fess) or `monitor` (count and log, admit everything).
    pub const MODE: &str = "load.control.mode";
    /// Up to this many seconds added at random to each `Retry-After`.
    pub const RETRY_AFTER_JITTER: &str = "load.control.retry.after.jitter";
    /// Up to this many seconds of random delay before a monitor's first poll.
    pub const MONITOR_JITTER: &str = "load.control.monitor.jitter";
    /// Where the local CPU comes from: `auto`, `host` or `cgroup`.
    pub const ADAPTIVE_SOURCE: &str = "adaptive.load.control.source";

    /// Every key above.
    pub const ALL: [&str; 17] = [
        WEB_LOAD_CONTROL,
        API_LOAD_CONTROL,
        MONITOR_INTERVAL,
        ADAPTIVE_LOAD_CONTROL,
        SEARCH_ENGINE_URL,
        RETRY_AFTER,
        FAILURE_POLICY,
        STALE_AFTER,
        SMOOTHING,
        SMOOTHING_TAU,
        ENTER_SAMPLES,
        EXIT_MARGIN,
        MIN_HOLD,
        MODE,
        RETRY_AFTER_JITTER,
        MONITOR_JITTER,
        ADAPTIVE_SOURCE,
    ];
}

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
    /// `search_engine.http.url`: the cluster to poll. No default.
    pub search_engine_url: Option<Url>,
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
    /// applies the last entry of each known key: an earlier duplicate is never judged.
    fn apply_entries(&mut self, mut properties: Properties<'_>) -> Result<(), ConfigError> {
        let mut last: [Option<Position>; keys::ALL.len()] = [None; keys::ALL.len()];
        loop {
            let at = properties.position();
            let Some(entry) = properties.next().transpose()? else {
                break;
            };
            if !entry.key_is_complete() {
                continue;
            }
            if let Some(i) = keys::ALL.iter().position(|key| *key == entry.key()) {
                last[i] = Some(at);
            }
        }
        let mut next = *self;
        let mut tau = None;
        for at in last.into_iter().flatten() {
            if let Some(entry) = properties.at(at).next().transpose()? {
                next.set(&entry, &mut tau)?;
            }
        }
        if let (Smoothing::Ewma { .. }, Some(tau)) = (next.smoothing, tau) {
            next.smoothing = Smoothing::Ewma { tau };
        }
        *self = next;
        Ok(())
    }

    /// Applies one entry; `tau` collects `load.control.smoothing.tau`, which may come before
    /// or after `load.control.smoothing` and is applied once all lines are read.
    fn set(&mut self, entry: &Entry, tau: &mut Option<Duration>) -> Result<(), ConfigError> {
        let value = entry.value().trim_end();
        let error = |kind| ConfigError {
            line: entry.line(),
            key: Snippet::new(entry.key()),
            value: Snippet::new(value),
            kind,
        };
        let seconds = || match parse_i32(value) {
            Some(n) if (1..=MAX_SECONDS as i32).contains(&n) => Ok(n as u32),
            Some(_) => Err(error(ConfigErrorKind::OutOfRange {
                min: 1,
                max: MAX_SECONDS,
            })),
            None => Err(error(ConfigErrorKind::NotAnInteger)),
        };
        let threshold = || parse_i32(value).ok_or(error(ConfigErrorKind::NotAnInteger));
        let ranged = |min: u32, max: u32| match parse_i32(value) {
            Some(n) if n >= 0 && (min..=max).contains(&n.unsigned_abs()) => Ok(n.unsigned_abs()),
            Some(_) => Err(error(ConfigErrorKind::OutOfRange { min, max })),
            None => Err(error(ConfigErrorKind::NotAnInteger)),
        };
        let choice = |expected: &'static str| {
            let value = value.trim();
            expected
                .split('|')
                .position(|name| name.eq_ignore_ascii_case(value))
                .ok_or(error(ConfigErrorKind::UnknownValue { expected }))
        };
        if !entry.key_is_complete() {
            return Ok(());
        }
        // A value cut to the buffer would read as another value: refused, never guessed.
        if !entry.value_is_complete() && entry.key() != keys::SEARCH_ENGINE_URL {
            return Err(error(ConfigErrorKind::TooLong {
                max: Entry::VALUE_CAPACITY,
            }));
        }
        match entry.key() {
            keys::WEB_LOAD_CONTROL => self.web_threshold = threshold()?,
            keys::API_LOAD_CONTROL => self.api_threshold = threshold()?,
            keys::ADAPTIVE_LOAD_CONTROL => self.adaptive_threshold = threshold()?,
            keys::MONITOR_INTERVAL => {
                self.monitor_interval = Duration::from_secs(seconds()?.into())
            }
            keys::RETRY_AFTER => self.retry_after = seconds()?,
            keys::FAILURE_POLICY => {
                self.failure_policy = match choice("open|hold|closed")? {
                    0 => FailurePolicy::Open,
                    1 => FailurePolicy::Hold,
                    _ => FailurePolicy::Closed,
                };
            }
            keys::STALE_AFTER => self.stale_after = Duration::from_secs(seconds()?.into()),
            keys::SMOOTHING => {
                self.smoothing = match choice("none|ewma")? {
                    0 => Smoothing::None,
                    _ => Smoothing::Ewma {
                        tau: match self.smoothing {
                            Smoothing::Ewma { tau } => tau,
                            Smoothing::None => DEFAULT_TAU,
                        },
                    },
                };
            }
            keys::SMOOTHING_TAU => *tau = Some(Duration::from_secs(seconds()?.into())),
            keys::ENTER_SAMPLES => self.enter_samples = ranged(1, 1000)?,
            keys::EXIT_MARGIN => self.exit_margin = ranged(0, 100)? as u8,
            keys::MIN_HOLD => self.min_hold = Duration::from_secs(ranged(0, MAX_SECONDS)?.into()),
            keys::MODE => {
                self.mode = match choice("enforce|monitor")? {
                    0 => Mode::Enforce,
                    _ => Mode::Monitor,
                };
            }
            keys::RETRY_AFTER_JITTER => self.retry_after_jitter = ranged(0, MAX_JITTER)?,
            keys::MONITOR_JITTER => {
                self.monitor_jitter = Duration::from_secs(ranged(0, MAX_JITTER)?.into());
            }
            keys::ADAPTIVE_SOURCE => {
                self.adaptive_source = match choice("auto|host|cgroup")? {
                    0 => CpuSourceKind::Auto,
                    1 => CpuSourceKind::Host,
                    _ => CpuSourceKind::Cgroup,
                };
            }
            keys::SEARCH_ENGINE_URL => {
                // The error shows the address without its password, whatever it holds.
                let url_error = |e| ConfigError {
                    value: redacted_url(value),
                    ..error(ConfigErrorKind::InvalidUrl(e))
                };
                if !entry.value_is_complete() {
                    // Only the start was kept, perhaps without the `@` that ends a password:
                    // show the scheme and nothing after it.
                    let value = value.trim();
                    let scheme = value.find("://").map_or("", |i| &value[..i + 3]);
                    let mut shown = heapless::String::<16>::new();
                    let _ = shown.push_str(scheme.get(..12).unwrap_or(scheme));
                    let _ = shown.push('…');
                    return Err(ConfigError {
                        value: Snippet::new(&shown),
                        ..error(ConfigErrorKind::InvalidUrl(UrlError::TooLong))
                    });
                }
                let value = value.trim();
                self.search_engine_url = if value.is_empty() {
                    None
                } else {
                    Some(Url::parse(value).map_err(url_error)?)
                };
            }
            _ => {}
        }
        Ok(())
    }
}

/// A cluster address for an error message: everything between the scheme and the last `@`
/// (a password may hold an unescaped `/`, `?` or `#`) replaced by the user and `:***`.
fn redacted_url(text: &str) -> Snippet {
    let text = text.trim();
    let Some(start) = text.find("://").map(|i| i + 3) else {
        return Snippet::new(text);
    };
    let Some(at) = text[start..].rfind('@') else {
        return Snippet::new(text);
    };
    let user = text[start..start + at]
        .split([':', '/', '?', '#'])
        .next()
        .unwrap_or_default();
    let mut shown = heapless::String::<{ Snippet::<48>::CAPACITY + 8 }>::new();
    for piece in [&text[..start], user, ":***@", &text[start + at + 1..]] {
        for c in piece.chars() {
            if shown.push(c).is_err() {
                return Snippet::new(&shown);
            }
        }
    }
    Snippet::new(&shown)
}

impl Default for Config {
    fn default() -> Self {
        Config::DEFAULT
    }
}

/// Java's `Integer.parseInt` on a trimmed value: optional sign, decimal digits, `i32` range.
fn parse_i32(value: &str) -> Option<i32> {
    let value = value.trim();
    let digits = value.strip_prefix(['+', '-']).unwrap_or(value);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse().ok()
}

/// Why a configuration was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigErrorKind {
    /// The value of a threshold, interval or `Retry-After` is not a (32-bit) integer.
    NotAnInteger,
    /// The value is an integer outside `min..=max`.
    OutOfRange {
        /// Smallest accepted value.
        min: u32,
        /// Largest accepted value.
        max: u32,
    },
    /// The line has a `\u` escape that is not four hex digits naming a character.
    MalformedEscape,
    /// The cluster address is not usable.
    InvalidUrl(UrlError),
    /// The value is longer than the reader keeps ([`crate::properties::Entry::VALUE_CAPACITY`]
    /// bytes): refused rather than read cut.
    TooLong {
        /// The most bytes kept.
        max: usize,
    },
    /// The value is not one of the accepted words.
    UnknownValue {
        /// The accepted words, separated by `|`.
        expected: &'static str,
    },
}

/// A configuration line that was refused: which line, key and value, and why.
///
/// Small and `Copy`; key and value are kept up to 48 bytes each (longer ones are shown cut,
/// with `…`, and say so with [`Snippet::is_truncated`]).
///
/// ```
/// use load_core::{Config, ConfigErrorKind};
///
/// let error = Config::from_properties("# tuning\nweb.load.control = eighty\n").unwrap_err();
/// assert_eq!(error.line, 2);
/// assert_eq!(error.kind, ConfigErrorKind::NotAnInteger);
/// assert_eq!(
///     error.to_string(),
///     r#"line 2: web.load.control = "eighty": not an integer"#
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// The 1-based line where the offending entry starts.
    pub line: u32,
    /// The entry's key (as written, escapes resolved).
    pub key: Snippet,
    /// The entry's value (as written, escapes resolved, surrounding whitespace dropped).
    pub value: Snippet,
    /// What is wrong with it.
    pub kind: ConfigErrorKind,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {} = \"{}\": ", self.line, self.key, self.value)?;
        match self.kind {
            ConfigErrorKind::NotAnInteger => f.write_str("not an integer"),
            ConfigErrorKind::OutOfRange { min, max } => {
                write!(f, "out of range (expected {min} to {max})")
            }
            ConfigErrorKind::MalformedEscape => f.write_str("malformed \\uXXXX escape"),
            ConfigErrorKind::InvalidUrl(e) => write!(f, "invalid URL: {e}"),
            ConfigErrorKind::TooLong { max } => {
                write!(f, "longer than {max} bytes, the most a value may be here")
            }
            ConfigErrorKind::UnknownValue { expected } => {
                f.write_str("expected one of: ")?;
                for (i, word) in expected.split('|').enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    f.write_str(word)?;
                }
                Ok(())
            }
        }
    }
}

impl core::error::Error for ConfigError {}

/// Why a cluster address was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UrlError {
    /// Not `http://` or `https://`.
    UnsupportedScheme,
    /// Nothing between the scheme and the path.
    MissingHost,
    /// The port is not a number from 1 to 65535.
    InvalidPort,
    /// Whitespace, control characters, or several comma-separated addresses.
    InvalidCharacter,
    /// Longer than [`Url::CAPACITY`] bytes.
    TooLong,
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UrlError::UnsupportedScheme => "expected http:// or https://",
            UrlError::MissingHost => "no host",
            UrlError::InvalidPort => "the port is not a number from 1 to 65535",
            UrlError::InvalidCharacter => {
                "contains whitespace, a control character or a comma (give one address)"
            }
            UrlError::TooLong => "longer than 512 bytes",
        })
    }
}

impl core::error::Error for UrlError {}

/// A cluster address (`http(s)://[user:password@]host[:port][/path]`), checked and stored
/// inline so that [`Config`] stays `Copy`.
///
/// Its `Debug` and `Display` hide any password: `https://admin:***@host:9200`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Url {
    bytes: [u8; Url::CAPACITY],
    len: u16,
}

impl Url {
    /// The longest address accepted, in bytes.
    pub const CAPACITY: usize = 512;

    /// Checks and stores an address.
    ///
    /// # Errors
    ///
    /// A [`UrlError`] when the scheme is not `http`/`https`, the host is empty, the port is
    /// not a number, it contains whitespace, control characters or a comma, or it is longer
    /// than [`Url::CAPACITY`].
    pub fn parse(text: &str) -> Result<Url, UrlError> {
        if text.len() > Self::CAPACITY {
            return Err(UrlError::TooLong);
        }
        if text
            .bytes()
            .any(|b| b.is_ascii_whitespace() || b.is_ascii_control() || b == b',')
        {
            return Err(UrlError::InvalidCharacter);
        }
        // Compared as bytes: the text may hold a multi-byte character where a prefix ends.
        let lower_starts = |prefix: &str| {
            text.as_bytes()
                .get(..prefix.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
        };
        let rest = if lower_starts("http://") {
            &text[7..]
        } else if lower_starts("https://") {
            &text[8..]
        } else {
            return Err(UrlError::UnsupportedScheme);
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let host_port = authority.rsplit('@').next().unwrap_or_default();
        let (host, port) = match host_port.rfind(':') {
            Some(colon) if !host_port[colon..].contains(']') => {
                (&host_port[..colon], Some(&host_port[colon + 1..]))
            }
            _ => (host_port, None),
        };
        if host.is_empty() {
            return Err(UrlError::MissingHost);
        }
        if let Some(port) = port
            && !matches!(port.parse::<u16>(), Ok(p) if p > 0 && port.bytes().all(|b| b.is_ascii_digit()))
        {
            return Err(UrlError::InvalidPort);
        }
        let mut bytes = [0; Self::CAPACITY];
        bytes[..text.len()].copy_from_slice(text.as_bytes());
        Ok(Url {
            bytes,
            len: text.len() as u16,
        })
    }

    /// The address as given, credentials included: hand it to an HTTP client, never to a
    /// log line.
    #[must_use]
    pub fn as_str(&self) -> &str {
        // Copied from a `&str` whole.
        core::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }

    /// The address with any userinfo removed: `https://host:9200/`.
    #[must_use]
    pub fn without_credentials(&self) -> (&str, &str) {
        let text = self.as_str();
        let scheme_end = text.find("://").map_or(0, |i| i + 3);
        let authority_end = text[scheme_end..]
            .find(['/', '?', '#'])
            .map_or(text.len(), |i| scheme_end + i);
        match text[scheme_end..authority_end].rfind('@') {
            Some(at) => (&text[..scheme_end], &text[scheme_end + at + 1..]),
            None => (text, ""),
        }
    }

    /// The `user` and `password` of `http(s)://user:password@host`, if present (still
    /// percent-encoded as written).
    #[must_use]
    pub fn credentials(&self) -> Option<(&str, &str)> {
        let text = self.as_str();
        let scheme_end = text.find("://")? + 3;
        let authority = text[scheme_end..].split(['/', '?', '#']).next()?;
        let at = authority.rfind('@')?;
        let userinfo = &authority[..at];
        Some(userinfo.split_once(':').unwrap_or((userinfo, "")))
    }
}

impl fmt::Display for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (scheme, rest) = self.without_credentials();
        match self.credentials() {
            Some((user, _)) => write!(f, "{scheme}{user}:***@{rest}"),
            None => f.write_str(scheme),
        }
    }
}

impl fmt::Debug for Url {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Url(\"{self}\")")
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
        let url = config.search_engine_url.expect("url");
        assert_eq!(url.as_str(), "https://admin:secret@search.example:9200");
        assert_eq!(url.credentials(), Some(("admin", "secret")));
        assert_eq!(
            url.without_credentials(),
            ("https://", "search.example:9200")
        );
    }

    #[test]
    fn crlf_and_cr_line_endings_count_lines() {
        let error = Config::from_properties("a=1\r\nb=2\rweb.load.control=x\r\n").unwrap_err();
        assert_eq!(error.line, 3);
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
            assert_eq!(error.line, line, "{text}");
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
        assert_eq!((error.line, error.kind), (3, ConfigErrorKind::NotAnInteger));
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
        assert_eq!((error.line, error.key.as_str()), (2, "web.load.control"));
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
        assert_eq!(error.line, 2);
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
}
