//! Configuration: Fess's `fess_config.properties` keys and defaults, read from a file and
//! the environment, and checked. The control settings ([`ControlConfig`], small and `Copy`)
//! and the cluster's connection ([`ClusterConfig`]) are values of their own.

use core::time::Duration;

use crate::properties::{Encoding, Properties};

mod apply;
mod cluster;
mod control;
mod error;
pub mod keys;
mod url;

use apply::{Apply, apply_entries};
pub use cluster::ClusterConfig;
pub use control::{AdmissionMode, ControlConfig, CpuSourceKind, FailurePolicy, Mode, Smoothing};
pub use error::{ConfigError, ConfigErrorKind, Origin};
pub use url::{ClusterUrls, NodeUrl, UrlError};

/// The longest interval or `Retry-After` accepted: one day, in seconds.
pub const MAX_SECONDS: u32 = 86_400;

/// The largest `Retry-After` jitter accepted, in seconds.
pub const MAX_JITTER: u32 = 3_600;

/// The EWMA time constant when `load.control.smoothing=ewma` is set without a `tau`.
pub const DEFAULT_TAU: Duration = Duration::from_secs(5);

/// Load-control settings, with Fess's defaults: the control settings and the cluster's
/// connection.
///
/// Read it from a properties file with [`Config::from_properties`], or build it with
/// [`Config::new`] (the defaults) and set fields.
///
/// ```
/// use load_core::{Config, Threshold};
///
/// let config = Config::from_properties(
///     "# graded control: shed the web first\n\
///      web.load.control=70\n\
///      api.load.control : 80\n\
///      load.control.monitor.interval 2\n\
///      search_engine.http.url=http://node1:9200,http://node2:9200\n",
/// )?;
/// let control = &config.control;
/// assert_eq!((control.web_threshold, control.api_threshold), (70.into(), 80.into()));
/// assert_eq!(control.monitor_interval.as_secs(), 2);
/// assert_eq!(control.adaptive_threshold.get(), 50);
/// assert!(control.http_control_enabled());
/// assert_eq!(config.cluster.urls.map(|urls| urls.len()), Some(2));
/// # Ok::<(), load_core::ConfigError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Config {
    /// Thresholds, intervals and the behaviour beyond Fess.
    pub control: ControlConfig,
    /// How to reach the cluster.
    pub cluster: ClusterConfig,
}

impl Config {
    /// Fess's defaults: HTTP control off (100/100), 1 s interval, adaptive control at 50 %,
    /// `Retry-After: 60`, no cluster address.
    pub const DEFAULT: Config = Config {
        control: ControlConfig::DEFAULT,
        cluster: ClusterConfig::NONE,
    };

    /// The defaults, [`Config::DEFAULT`].
    #[must_use]
    pub const fn new() -> Config {
        Config::DEFAULT
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
        apply_entries(self, Properties::from_text(text))
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
        apply_entries(self, properties)?;
        Ok(encoding)
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
    /// let urls = config.cluster.urls.expect("urls");
    /// assert_eq!(urls.len(), 2);
    /// assert_eq!(config.cluster.credentials().map(|(user, _)| user), Some("admin"));
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
        let mut next = self.clone();
        for key in &keys::TABLE {
            let Some(name) = key.variable() else { continue };
            let Some(value) = var(name) else { continue };
            let value = value.as_ref().trim();
            if value.is_empty() {
                continue;
            }
            key.parse(&mut next, value)
                .map_err(|kind| ConfigError::of_key(Origin::Variable(name), key, value, kind))?;
        }
        next.cluster.check_credentials()?;
        *self = next;
        Ok(())
    }

    /// Checks every value as a file would be checked, for a configuration built or changed
    /// in code: the same ranges, except that durations may be below a second. Parsed
    /// configurations pass by construction.
    ///
    /// ```
    /// use core::time::Duration;
    /// use load_core::{Config, config::ConfigErrorKind};
    ///
    /// let mut config = Config::new();
    /// config.control.exit_margin = 101;
    /// let error = config.validate().unwrap_err();
    /// assert_eq!(error.key.as_str(), "load.control.exit.margin");
    /// assert_eq!(error.kind, ConfigErrorKind::OutOfRange { min: 0, max: 100 });
    /// config.control.exit_margin = 5;
    /// config.control.monitor_interval = Duration::from_millis(100); // fine in code
    /// assert!(config.validate().is_ok());
    /// config.control.monitor_interval = Duration::ZERO;
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
                ConfigError::of_key(Origin::Config, key, &value, kind)
            })?;
        }
        self.cluster.check_credentials()
    }

    /// What of `new` can be applied to a running system configured with `self`: `new`, with
    /// every key that [needs a restart](keys::Key::needs_restart) kept as in `self` (the
    /// whole connection, the interval, the first poll's jitter and the local source).
    ///
    /// ```
    /// use load_core::Config;
    ///
    /// let running = Config::from_properties("web.load.control=80\nload.control.monitor.interval=1")?;
    /// let file = Config::from_properties("web.load.control=70\nload.control.monitor.interval=5")?;
    /// let applied = running.reloadable(&file);
    /// assert_eq!(applied.control.web_threshold, 70.into()); // at once
    /// assert_eq!(applied.control.monitor_interval.as_secs(), 1); // at the next restart
    /// # Ok::<(), load_core::ConfigError>(())
    /// ```
    #[must_use]
    pub fn reloadable(&self, new: &Config) -> Config {
        Config {
            control: ControlConfig {
                monitor_interval: self.control.monitor_interval,
                monitor_jitter: self.control.monitor_jitter,
                adaptive_source: self.control.adaptive_source,
                static_files: self.control.static_files,
                uncontrolled: self.control.uncontrolled,
                ..new.control
            },
            cluster: self.cluster.clone(),
        }
    }
}

impl Apply for Config {
    fn takes(_: &keys::Key) -> bool {
        true
    }

    fn apply(&mut self, key: &keys::Key, value: &str) -> Result<(), ConfigErrorKind> {
        key.parse(self, value)
    }

    fn finish(&self) -> Result<(), ConfigError> {
        self.cluster.check_credentials()
    }
}

#[cfg(test)]
mod tests;
