//! The configuration keys: one table ([`TABLE`]) says, for every key, how its value is
//! parsed, checked, shown and compared, which environment variable overrides it and whether
//! a change needs a restart. Parsing, validation, [`crate::Config::apply_env`], reload
//! diffs ([`changes`]) and the README's key table all follow it.

use core::fmt;
use core::time::Duration;

use super::{
    AdmissionMode, ClusterConfig, ClusterUrls, Config, ConfigError, ConfigErrorKind, ControlConfig,
    CpuSourceKind, DEFAULT_TAU, FailurePolicy, MAX_JITTER, MAX_SECONDS, Mode, Origin, Smoothing,
};
use crate::{
    GateThreshold, Threshold,
    text::{Secret, Text},
};

/// CPU % at or above which web requests are rejected; `>= 100` disables.
pub const WEB_LOAD_CONTROL: &str = "web.load.control";
/// CPU % at or above which API requests are rejected; `>= 100` disables.
pub const API_LOAD_CONTROL: &str = "api.load.control";
/// Seconds between polls of the cluster's CPU.
pub const MONITOR_INTERVAL: &str = "load.control.monitor.interval";
/// Local CPU % at or above which background work waits; `<= 0` or above 100 disables.
pub const ADAPTIVE_LOAD_CONTROL: &str = "adaptive.load.control";
/// The search cluster's addresses, comma-separated.
pub const SEARCH_ENGINE_URL: &str = "search_engine.http.url";
/// The user for HTTP basic auth (used only with the password).
pub const SEARCH_ENGINE_USERNAME: &str = "search_engine.username";
/// The password for HTTP basic auth (used only with the user).
pub const SEARCH_ENGINE_PASSWORD: &str = "search_engine.password";
/// A PEM file of CA certificates to verify the cluster's certificate with.
pub const SEARCH_ENGINE_CA: &str = "search_engine.http.ssl.certificate_authorities";
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
/// Minimum seconds in the armed state.
pub const MIN_HOLD: &str = "load.control.min.hold";
/// `enforce` (Fess) or `monitor` (count and log, admit everything).
pub const MODE: &str = "load.control.mode";
/// Up to this many seconds added at random to each `Retry-After`.
pub const RETRY_AFTER_JITTER: &str = "load.control.retry.after.jitter";
/// Up to this many seconds of random delay before a monitor's first poll.
pub const MONITOR_JITTER: &str = "load.control.monitor.jitter";
/// Where the local CPU comes from: `auto`, `host` or `cgroup`.
pub const ADAPTIVE_SOURCE: &str = "adaptive.load.control.source";
/// `threshold` (Fess) or `limit` (an in-flight cap while the threshold is reached).
pub const ADMISSION: &str = "load.control.admission";
/// Polls a class stays armed after its threshold is no longer reached.
pub const ADMISSION_COOLOFF: &str = "load.control.admission.cooloff";
/// The in-flight cap before any completion, and its least value after.
pub const ADMISSION_INITIAL: &str = "load.control.admission.initial";

/// One configuration key: its name, environment variable, restart rule and documentation,
/// and how its value is read, checked and shown.
///
/// ```
/// use load_core::{Config, Threshold, config::keys};
///
/// let key = keys::find("web.load.control").expect("a key");
/// let mut config = Config::new();
/// key.parse(&mut config, "70")?;
/// assert_eq!(config.control.web_threshold, Threshold::from_fess(70));
/// assert_eq!(key.value(&config).to_string(), "70");
/// assert_eq!(key.value(&Config::DEFAULT).to_string(), key.default_value().to_string());
/// assert!(!key.needs_restart());
/// assert!(key.is_control());
/// # Ok::<(), load_core::config::ConfigErrorKind>(())
/// ```
#[derive(Clone, Copy)]
pub struct Key {
    name: &'static str,
    variable: Option<&'static str>,
    restart: bool,
    secret: bool,
    doc: &'static str,
    /// The whole numbers the key accepts, for a key that is one (`None`: any other).
    range: Option<(u32, u32)>,
    field: Field,
}

/// A key whose value is a whole number from `$min` to `$max`, its range written once: its
/// documentation ends with it, its parser and its check read it.
///
/// - `count`: a field of the control settings that holds the number (`u32`, or a smaller
///   type the range fits).
/// - `seconds`: a `Duration` field; set in code, below a second is accepted, and zero only
///   where the least is 0.
macro_rules! ranged {
    (count $field:ident, $name:expr, $doc:literal, $min:literal ..= $max:literal) => {
        Key {
            name: $name,
            variable: None,
            restart: false,
            secret: false,
            doc: concat!($doc, " (", $min, " to ", $max, ")"),
            range: Some(($min, $max)),
            field: Field::Control(Access {
                set: |c, v| {
                    c.$field = narrow(ranged(v, $min, $max)?, $min, $max)?;
                    Ok(())
                },
                check: |c| within(c.$field.into(), $min, $max),
                show: |c, _, f| write!(f, "{}", c.$field),
            }),
        }
    };
    (
        seconds $field:ident, $name:expr, restart: $restart:literal, $doc:literal,
        $min:literal ..= $max:literal
    ) => {
        Key {
            name: $name,
            variable: None,
            restart: $restart,
            secret: false,
            doc: concat!($doc, " (", $min, " to ", $max, ")"),
            range: Some(($min, $max)),
            field: Field::Control(Access {
                set: |c, v| {
                    c.$field = secs(ranged(v, $min, $max)?);
                    Ok(())
                },
                check: |c| seconds_within(c.$field, $min, $max),
                show: |c, _, f| duration(c.$field, f),
            }),
        }
    };
}

// The ranges below are literals (a documentation is built from them at compile time): the
// longest ones are these.
const _: () = assert!(MAX_SECONDS == 86_400 && MAX_JITTER == 3_600);

/// The smoothing's time constant, in seconds: its key sets it only with `ewma`.
const TAU: (u32, u32) = (1, MAX_SECONDS);

/// Which part of a [`Config`] a key sets, and how.
#[derive(Clone, Copy)]
enum Field {
    Control(Access<ControlConfig>),
    Cluster(Access<ClusterConfig>),
}

/// How a key reads, checks and shows its value in its part of the configuration.
struct Access<T> {
    set: fn(&mut T, &str) -> Result<(), ConfigErrorKind>,
    check: fn(&T) -> Result<(), ConfigErrorKind>,
    /// Writes the value; secrets only when revealed (for comparison), else `***`.
    show: fn(&T, bool, &mut fmt::Formatter<'_>) -> fmt::Result,
}

impl<T> Clone for Access<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Access<T> {}

impl Key {
    /// The property key, e.g. `web.load.control`.
    #[must_use]
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The environment variable that overrides it (Fess's names), if any.
    #[must_use]
    pub const fn variable(&self) -> Option<&'static str> {
        self.variable
    }

    /// Whether a change only takes effect after a restart: it shapes tasks or clients
    /// built once (the cluster's address and credentials, the poll interval, the jitter
    /// of the first poll, the local CPU source).
    #[must_use]
    pub const fn needs_restart(&self) -> bool {
        self.restart
    }

    /// Whether the value is a secret, shown as `***`.
    #[must_use]
    pub const fn is_secret(&self) -> bool {
        self.secret
    }

    /// Whether it is a control setting ([`ControlConfig`]) rather than part of the
    /// cluster's connection ([`ClusterConfig`]).
    #[must_use]
    pub const fn is_control(&self) -> bool {
        matches!(self.field, Field::Control(_))
    }

    /// One line on what it means (for a ranged key, ending with its range).
    #[must_use]
    pub const fn doc(&self) -> &'static str {
        self.doc
    }

    /// The whole numbers the key accepts, least and most, for a key whose value is one
    /// (seconds, counts, percents of a margin); `None` for any other (thresholds take any
    /// integer, as Fess's do).
    ///
    /// ```
    /// use load_core::config::keys;
    ///
    /// let key = keys::find("load.control.enter.samples").expect("a key");
    /// assert_eq!(key.range(), Some(1..=1000));
    /// assert!(key.doc().ends_with("(1 to 1000)"));
    /// assert_eq!(keys::find("web.load.control").and_then(|key| key.range()), None);
    /// ```
    #[must_use]
    pub fn range(&self) -> Option<core::ops::RangeInclusive<u32>> {
        self.range.map(|(min, max)| min..=max)
    }

    /// Reads `value` (surrounding whitespace dropped) into `config`. On error `config` is
    /// unchanged.
    ///
    /// # Errors
    ///
    /// Why the value is refused.
    pub fn parse(&self, config: &mut Config, value: &str) -> Result<(), ConfigErrorKind> {
        match &self.field {
            Field::Control(access) => parse_into(access, &mut config.control, value),
            Field::Cluster(access) => parse_into(access, &mut config.cluster, value),
        }
    }

    /// [`Key::parse`] into the control settings alone; a connection key leaves them as
    /// they are.
    ///
    /// # Errors
    ///
    /// Why the value is refused.
    pub fn parse_control(
        &self,
        control: &mut ControlConfig,
        value: &str,
    ) -> Result<(), ConfigErrorKind> {
        match &self.field {
            Field::Control(access) => parse_into(access, control, value),
            Field::Cluster(_) => Ok(()),
        }
    }

    /// Checks the value `config` holds, as [`Key::parse`] would check it (durations set in
    /// code may be below a second; zero is refused where a file refuses it).
    ///
    /// # Errors
    ///
    /// Why the value is refused.
    pub fn check(&self, config: &Config) -> Result<(), ConfigErrorKind> {
        match &self.field {
            Field::Control(access) => (access.check)(&config.control),
            Field::Cluster(access) => (access.check)(&config.cluster),
        }
    }

    /// [`Key::check`] on the control settings alone, as a [`ConfigError`] showing the
    /// value ([`Origin::Config`]); a connection key passes.
    pub(crate) fn check_control(&self, control: &ControlConfig) -> Result<(), ConfigError> {
        let Field::Control(access) = &self.field else {
            return Ok(());
        };
        (access.check)(control).map_err(|kind| {
            let mut value = heapless::String::<64>::new();
            let _ = fmt::write(
                &mut value,
                format_args!("{}", Shown::new(access, control, false)),
            );
            ConfigError::of_key(Origin::Config, self, &value, kind)
        })
    }

    /// The value in `config`, as a file would write it, except that a password is `***`
    /// and addresses are shown without their passwords; empty when unset.
    #[must_use]
    pub fn value<'a>(&'a self, config: &'a Config) -> impl fmt::Display + 'a {
        Value {
            key: self,
            config,
            reveal: false,
        }
    }

    /// The value in [`Config::DEFAULT`].
    #[must_use]
    pub fn default_value(&self) -> impl fmt::Display + '_ {
        Value {
            key: self,
            config: &Config::DEFAULT,
            reveal: false,
        }
    }

    /// Whether `a` and `b` hold different values for this key (secrets compared as they
    /// are, not as shown).
    #[must_use]
    pub fn differs(&self, a: &Config, b: &Config) -> bool {
        render(self, a) != render(self, b)
    }
}

fn parse_into<T: Clone>(
    access: &Access<T>,
    target: &mut T,
    value: &str,
) -> Result<(), ConfigErrorKind> {
    let mut next = target.clone();
    (access.set)(&mut next, value.trim())?;
    *target = next;
    Ok(())
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Key")
            .field("name", &self.name)
            .field("variable", &self.variable)
            .field("restart", &self.restart)
            .finish_non_exhaustive()
    }
}

/// A key's value in a whole configuration.
struct Value<'a> {
    key: &'a Key,
    config: &'a Config,
    reveal: bool,
}

impl fmt::Display for Value<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key.field {
            Field::Control(access) => (access.show)(&self.config.control, self.reveal, f),
            Field::Cluster(access) => (access.show)(&self.config.cluster, self.reveal, f),
        }
    }
}

/// A key's value in its part.
struct Shown<'a, T> {
    access: &'a Access<T>,
    part: &'a T,
    reveal: bool,
}

impl<'a, T> Shown<'a, T> {
    fn new(access: &'a Access<T>, part: &'a T, reveal: bool) -> Self {
        Shown {
            access,
            part,
            reveal,
        }
    }
}

impl<T> fmt::Display for Shown<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (self.access.show)(self.part, self.reveal, f)
    }
}

/// A value as written, secrets included, for comparison. Values are at most 512 bytes;
/// the list of addresses with its separators fits too.
fn render(key: &Key, config: &Config) -> heapless::String<1024> {
    let mut out = heapless::String::new();
    let _ = fmt::write(
        &mut out,
        format_args!(
            "{}",
            Value {
                key,
                config,
                reveal: true,
            }
        ),
    );
    out
}

/// Every key, in the order files are applied (`load.control.smoothing` before its `tau`).
pub const TABLE: [Key; 23] = [
    Key {
        name: WEB_LOAD_CONTROL,
        variable: None,
        restart: false,
        secret: false,
        doc: "CPU % at or above which web requests get 429; >= 100 disables, <= 0 rejects all",
        range: None,
        field: Field::Control(Access {
            set: |c, v| {
                c.web_threshold = Threshold::from_fess(threshold(v)?);
                Ok(())
            },
            check: |_| Ok(()),
            show: |c, _, f| write!(f, "{}", c.web_threshold),
        }),
    },
    Key {
        name: API_LOAD_CONTROL,
        variable: None,
        restart: false,
        secret: false,
        doc: "the same for API requests",
        range: None,
        field: Field::Control(Access {
            set: |c, v| {
                c.api_threshold = Threshold::from_fess(threshold(v)?);
                Ok(())
            },
            check: |_| Ok(()),
            show: |c, _, f| write!(f, "{}", c.api_threshold),
        }),
    },
    ranged!(
        seconds monitor_interval, MONITOR_INTERVAL, restart: true,
        "seconds between polls", 1..=86400
    ),
    Key {
        name: ADAPTIVE_LOAD_CONTROL,
        variable: None,
        restart: false,
        secret: false,
        doc: "local CPU % at or above which background work waits; <= 0 or above 100 disables",
        range: None,
        field: Field::Control(Access {
            set: |c, v| {
                c.adaptive_threshold = GateThreshold::from_fess(threshold(v)?);
                Ok(())
            },
            check: |_| Ok(()),
            show: |c, _, f| write!(f, "{}", c.adaptive_threshold),
        }),
    },
    Key {
        name: SEARCH_ENGINE_URL,
        variable: Some("SEARCH_ENGINE_HTTP_URL"),
        restart: true,
        secret: false,
        doc: "the cluster: one address or a comma-separated list, polled one at a time",
        range: None,
        field: Field::Cluster(Access {
            set: |c, v| {
                c.urls = if v.is_empty() {
                    None
                } else {
                    Some(ClusterUrls::parse(v).map_err(ConfigErrorKind::InvalidUrl)?)
                };
                Ok(())
            },
            check: |_| Ok(()),
            show: |c, reveal, f| match &c.urls {
                Some(urls) if reveal => f.write_str(urls.as_str()),
                Some(urls) => write!(f, "{urls}"),
                None => Ok(()),
            },
        }),
    },
    Key {
        name: SEARCH_ENGINE_USERNAME,
        variable: Some("SEARCH_ENGINE_USERNAME"),
        restart: true,
        secret: false,
        doc: "user for HTTP basic auth; used only with the password",
        range: None,
        field: Field::Cluster(Access {
            set: |c, v| {
                c.username = text(v)?;
                Ok(())
            },
            check: |_| Ok(()),
            show: |c, _, f| optional(c.username.as_ref().map(Text::as_str), f),
        }),
    },
    Key {
        name: SEARCH_ENGINE_PASSWORD,
        variable: Some("SEARCH_ENGINE_PASSWORD"),
        restart: true,
        secret: true,
        doc: "password for HTTP basic auth; used only with the user",
        range: None,
        field: Field::Cluster(Access {
            set: |c, v| {
                c.password = if v.is_empty() {
                    None
                } else {
                    Some(Secret::new(v).ok_or(ConfigErrorKind::TooLong {
                        max: Secret::CAPACITY,
                    })?)
                };
                Ok(())
            },
            check: |_| Ok(()),
            show: |c, reveal, f| match &c.password {
                Some(password) if reveal => f.write_str(password.expose()),
                Some(_) => f.write_str("***"),
                None => Ok(()),
            },
        }),
    },
    Key {
        name: SEARCH_ENGINE_CA,
        variable: None,
        restart: true,
        secret: false,
        doc: "PEM file of CA certificates that verify the cluster's certificate",
        range: None,
        field: Field::Cluster(Access {
            set: |c, v| {
                c.certificate_authorities = text(v)?;
                Ok(())
            },
            check: |_| Ok(()),
            show: |c, _, f| optional(c.certificate_authorities.as_ref().map(Text::as_str), f),
        }),
    },
    ranged!(
        count retry_after, RETRY_AFTER,
        "seconds in Retry-After and the API body", 1..=86400
    ),
    Key {
        name: FAILURE_POLICY,
        variable: None,
        restart: false,
        secret: false,
        doc: "what a failed poll means: open (0 %), hold or closed",
        range: None,
        field: Field::Control(Access {
            set: |c, v| {
                c.failure_policy = match choice(v, "open|hold|closed")? {
                    0 => FailurePolicy::Open,
                    1 => FailurePolicy::Hold,
                    _ => FailurePolicy::Closed,
                };
                Ok(())
            },
            check: |_| Ok(()),
            show: |c, _, f| {
                f.write_str(match c.failure_policy {
                    FailurePolicy::Open => "open",
                    FailurePolicy::Hold => "hold",
                    FailurePolicy::Closed => "closed",
                })
            },
        }),
    },
    ranged!(
        seconds stale_after, STALE_AFTER, restart: false,
        "seconds hold and closed keep the last good sample", 1..=86400
    ),
    Key {
        name: SMOOTHING,
        variable: None,
        restart: false,
        secret: false,
        doc: "none, or ewma (a time-aware moving average)",
        range: None,
        field: Field::Control(Access {
            set: |c, v| {
                c.smoothing = match choice(v, "none|ewma")? {
                    0 => Smoothing::None,
                    _ => Smoothing::Ewma {
                        tau: match c.smoothing {
                            Smoothing::Ewma { tau } => tau,
                            Smoothing::None => DEFAULT_TAU,
                        },
                    },
                };
                Ok(())
            },
            check: |_| Ok(()),
            show: |c, _, f| {
                f.write_str(match c.smoothing {
                    Smoothing::None => "none",
                    Smoothing::Ewma { .. } => "ewma",
                })
            },
        }),
    },
    Key {
        name: SMOOTHING_TAU,
        variable: None,
        restart: false,
        secret: false,
        doc: "the EWMA's time constant in seconds, used with ewma only (1 to 86400)",
        range: Some(TAU),
        field: Field::Control(Access {
            set: |c, v| {
                let tau = secs(ranged(v, TAU.0, TAU.1)?);
                if let Smoothing::Ewma { .. } = c.smoothing {
                    c.smoothing = Smoothing::Ewma { tau };
                }
                Ok(())
            },
            check: |c| match c.smoothing {
                Smoothing::Ewma { tau } => seconds_within(tau, TAU.0, TAU.1),
                Smoothing::None => Ok(()),
            },
            show: |c, _, f| match c.smoothing {
                Smoothing::Ewma { tau } => duration(tau, f),
                Smoothing::None => duration(DEFAULT_TAU, f),
            },
        }),
    },
    ranged!(
        count enter_samples, ENTER_SAMPLES,
        "consecutive samples at or above a threshold before rejecting", 1..=1000
    ),
    ranged!(
        count exit_margin, EXIT_MARGIN,
        "rejecting stops below the threshold minus this many percent", 0..=100
    ),
    ranged!(
        seconds min_hold, MIN_HOLD, restart: false,
        "minimum seconds in the armed state", 0..=86400
    ),
    Key {
        name: MODE,
        variable: None,
        restart: false,
        secret: false,
        doc: "enforce, or monitor (count and log, admit everything)",
        range: None,
        field: Field::Control(Access {
            set: |c, v| {
                c.mode = match choice(v, "enforce|monitor")? {
                    0 => Mode::Enforce,
                    _ => Mode::Monitor,
                };
                Ok(())
            },
            check: |_| Ok(()),
            show: |c, _, f| {
                f.write_str(match c.mode {
                    Mode::Enforce => "enforce",
                    Mode::Monitor => "monitor",
                })
            },
        }),
    },
    ranged!(
        count retry_after_jitter, RETRY_AFTER_JITTER,
        "up to this many seconds added at random to each Retry-After", 0..=3600
    ),
    ranged!(
        seconds monitor_jitter, MONITOR_JITTER, restart: true,
        "up to this many seconds of random delay before the first poll", 0..=3600
    ),
    Key {
        name: ADAPTIVE_SOURCE,
        variable: None,
        restart: true,
        secret: false,
        doc: "where the local CPU comes from: auto, host or cgroup",
        range: None,
        field: Field::Control(Access {
            set: |c, v| {
                c.adaptive_source = match choice(v, "auto|host|cgroup")? {
                    0 => CpuSourceKind::Auto,
                    1 => CpuSourceKind::Host,
                    _ => CpuSourceKind::Cgroup,
                };
                Ok(())
            },
            check: |_| Ok(()),
            show: |c, _, f| {
                f.write_str(match c.adaptive_source {
                    CpuSourceKind::Auto => "auto",
                    CpuSourceKind::Host => "host",
                    CpuSourceKind::Cgroup => "cgroup",
                })
            },
        }),
    },
    Key {
        name: ADMISSION,
        variable: None,
        restart: false,
        secret: false,
        doc: "threshold (Fess: reject the class), or limit (an in-flight cap while armed)",
        range: None,
        field: Field::Control(Access {
            set: |c, v| {
                c.admission = match choice(v, "threshold|limit")? {
                    0 => AdmissionMode::Threshold,
                    _ => AdmissionMode::Limit,
                };
                Ok(())
            },
            check: |_| Ok(()),
            show: |c, _, f| {
                f.write_str(match c.admission {
                    AdmissionMode::Threshold => "threshold",
                    AdmissionMode::Limit => "limit",
                })
            },
        }),
    },
    ranged!(
        count admission_cooloff, ADMISSION_COOLOFF,
        "polls a class stays armed after its threshold is no longer reached", 2..=1000
    ),
    ranged!(
        count admission_initial, ADMISSION_INITIAL,
        "the in-flight cap before any completion, and its least value", 1..=1000000
    ),
];

/// Every key's name, in [`TABLE`] order.
pub const ALL: [&str; TABLE.len()] = {
    let mut names = [""; TABLE.len()];
    let mut i = 0;
    while i < TABLE.len() {
        names[i] = TABLE[i].name;
        i += 1;
    }
    names
};

/// The key named `name`.
#[must_use]
pub fn find(name: &str) -> Option<&'static Key> {
    TABLE.iter().find(|key| key.name == name)
}

/// The keys whose values differ between `old` and `new`, in [`TABLE`] order (a password
/// that changed counts, though both show as `***`).
pub fn changes<'a>(old: &'a Config, new: &'a Config) -> impl Iterator<Item = &'static Key> + 'a {
    TABLE.iter().filter(move |key| key.differs(old, new))
}

// ---- value parsers ---------------------------------------------------------------------------

/// Java's `Integer.parseInt` on a trimmed value: optional sign, decimal digits, `i32` range.
pub(crate) fn parse_i32(value: &str) -> Option<i32> {
    let value = value.trim();
    let digits = value.strip_prefix(['+', '-']).unwrap_or(value);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse().ok()
}

fn threshold(value: &str) -> Result<i32, ConfigErrorKind> {
    parse_i32(value).ok_or(ConfigErrorKind::NotAnInteger)
}

fn ranged(value: &str, min: u32, max: u32) -> Result<u32, ConfigErrorKind> {
    match parse_i32(value) {
        Some(n) if n >= 0 && (min..=max).contains(&n.unsigned_abs()) => Ok(n.unsigned_abs()),
        Some(_) => Err(ConfigErrorKind::OutOfRange { min, max }),
        None => Err(ConfigErrorKind::NotAnInteger),
    }
}

fn choice(value: &str, expected: &'static str) -> Result<usize, ConfigErrorKind> {
    expected
        .split('|')
        .position(|name| name.eq_ignore_ascii_case(value.trim()))
        .ok_or(ConfigErrorKind::UnknownValue { expected })
}

fn text<const N: usize>(value: &str) -> Result<Option<Text<N>>, ConfigErrorKind> {
    if value.is_empty() {
        return Ok(None);
    }
    Text::new(value)
        .map(Some)
        .ok_or(ConfigErrorKind::TooLong { max: N })
}

fn secs(n: u32) -> Duration {
    Duration::from_secs(n.into())
}

fn within(n: u32, min: u32, max: u32) -> Result<(), ConfigErrorKind> {
    if (min..=max).contains(&n) {
        Ok(())
    } else {
        Err(ConfigErrorKind::OutOfRange { min, max })
    }
}

/// A duration set in code within `min` to `max` seconds: below a second is accepted, and
/// zero only where `min` is 0.
fn seconds_within(d: Duration, min: u32, max: u32) -> Result<(), ConfigErrorKind> {
    if d > secs(max) || (min > 0 && d < secs(min) && (min > 1 || d.is_zero())) {
        Err(ConfigErrorKind::OutOfRange { min, max })
    } else {
        Ok(())
    }
}

/// `n`, read within `min` to `max`, as the field's type (which the range fits).
fn narrow<T: TryFrom<u32>>(n: u32, min: u32, max: u32) -> Result<T, ConfigErrorKind> {
    T::try_from(n).map_err(|_| ConfigErrorKind::OutOfRange { min, max })
}

/// Seconds as a file writes them; below-second parts (set in code) as a decimal.
fn duration(d: Duration, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match d.subsec_millis() {
        0 => write!(f, "{}", d.as_secs()),
        ms => write!(f, "{}.{ms:03}", d.as_secs()),
    }
}

fn optional(value: Option<&str>, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    f.write_str(value.unwrap_or(""))
}
