//! Why a configuration was refused, and where the refused value came from.

use core::fmt;

use crate::{config::UrlError, text::Snippet};

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
    /// The value contradicts the value of another key: credentials both in the URL and in
    /// `search_engine.username`/`search_engine.password`.
    Conflict {
        /// The other key.
        with: &'static str,
    },
    /// The key is not set, but what is being built needs it.
    Missing {
        /// What needs it.
        needed_by: &'static str,
    },
    /// The value is below the least that what is being built can work with (a duration set
    /// in code).
    BelowMinimum {
        /// The least value, in milliseconds.
        minimum_ms: u32,
        /// Why.
        because: &'static str,
    },
}

/// Where a refused value came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Origin {
    /// A line of a properties file (1-based; where the entry starts).
    Line(u32),
    /// An environment variable.
    Variable(&'static str),
    /// A [`crate::Config`] as a whole: set in code, or keys that contradict each other
    /// after file and environment were merged.
    Config,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Line(line) => write!(f, "line {line}"),
            Origin::Variable(name) => write!(f, "environment variable {name}"),
            Origin::Config => f.write_str("configuration"),
        }
    }
}

/// A configuration value that was refused: where it came from (file line, environment
/// variable or code), which key and value, and why.
///
/// Small and `Copy`; key and value are kept up to 48 bytes each (longer ones are shown cut,
/// with `…`, and say so with [`Snippet::is_truncated`]).
///
/// ```
/// use load_core::{Config, config::{ConfigErrorKind, Origin}};
///
/// let error = Config::from_properties("# tuning\nweb.load.control = eighty\n").unwrap_err();
/// assert_eq!(error.at, Origin::Line(2));
/// assert_eq!(error.kind, ConfigErrorKind::NotAnInteger);
/// assert_eq!(
///     error.to_string(),
///     r#"line 2: web.load.control = "eighty": not an integer"#
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfigError {
    /// Where it came from.
    pub at: Origin,
    /// The entry's key (as written, escapes resolved).
    pub key: Snippet,
    /// The entry's value (as written, escapes resolved, surrounding whitespace dropped;
    /// a password as `***`, a URL without its password).
    pub value: Snippet,
    /// What is wrong with it.
    pub kind: ConfigErrorKind,
}

impl ConfigError {
    /// An error of the entry `key = value` from `at`, of this `kind` (a source's setup
    /// checks what the configuration's own checks cannot: a key it needs, a minimum of its
    /// own).
    ///
    /// ```
    /// use load_core::ConfigError;
    /// use load_core::config::{ConfigErrorKind, Origin};
    /// use load_core::text::Snippet;
    ///
    /// let error = ConfigError::new(
    ///     Origin::Config,
    ///     Snippet::new("search_engine.http.url"),
    ///     Snippet::EMPTY,
    ///     ConfigErrorKind::Missing { needed_by: "HTTP load control" },
    /// );
    /// assert!(error.to_string().contains("search_engine.http.url"), "{error}");
    /// ```
    #[must_use]
    pub const fn new(
        at: Origin,
        key: Snippet,
        value: Snippet,
        kind: ConfigErrorKind,
    ) -> ConfigError {
        ConfigError {
            at,
            key,
            value,
            kind,
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} = \"{}\": ", self.at, self.key, self.value)?;
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
            ConfigErrorKind::Missing { needed_by } => write!(f, "not set; {needed_by} needs it"),
            ConfigErrorKind::BelowMinimum {
                minimum_ms,
                because,
            } => write!(f, "below the minimum of {minimum_ms} ms: {because}"),
            ConfigErrorKind::Conflict { with } => write!(
                f,
                "conflicts with {with}: give the credentials either in the URL or in \
                 search_engine.username and search_engine.password, not both"
            ),
        }
    }
}

impl core::error::Error for ConfigError {}

impl From<crate::properties::EscapeError> for ConfigError {
    /// A malformed `\\u` escape: the file is refused at its line.
    fn from(error: crate::properties::EscapeError) -> ConfigError {
        ConfigError {
            at: Origin::Line(error.line),
            key: Snippet::new(""),
            value: error.text,
            kind: ConfigErrorKind::MalformedEscape,
        }
    }
}
