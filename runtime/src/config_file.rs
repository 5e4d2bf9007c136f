//! Reading Fess's `fess_config.properties` and its environment variables.

use std::fmt;
use std::path::{Path, PathBuf};

use load_core::properties::Encoding;
use load_core::{Config, ConfigError};

/// Why a configuration file could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReadConfigError {
    /// The file could not be read.
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        error: std::io::Error,
    },
    /// The file, or an environment variable, holds a value that is refused.
    Config {
        /// The file, if the value came from one (`None`: from the environment alone).
        path: Option<PathBuf>,
        /// What is wrong, naming the line or variable, the key and the value.
        error: ConfigError,
    },
}

impl fmt::Display for ReadConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadConfigError::Read { path, error } => {
                write!(f, "cannot read {}: {error}", path.display())
            }
            ReadConfigError::Config {
                path: Some(path),
                error,
            } => write!(f, "{}: {error}", path.display()),
            ReadConfigError::Config { path: None, error } => write!(f, "configuration: {error}"),
        }
    }
}

impl std::error::Error for ReadConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ReadConfigError::Read { error, .. } => Some(error),
            ReadConfigError::Config { error, .. } => Some(error),
        }
    }
}

/// Reads a `fess_config.properties`-style file on top of the defaults, then Fess's
/// environment variables on top of the file ([`Config::apply_env`]:
/// `SEARCH_ENGINE_HTTP_URL`, `SEARCH_ENGINE_USERNAME`, `SEARCH_ENGINE_PASSWORD`), as Fess
/// does.
///
/// The bytes are read as UTF-8 when they are valid UTF-8, else as ISO-8859-1 (as Java's
/// resource bundles do); which one is logged at INFO.
///
/// # Errors
///
/// [`ReadConfigError::Read`] or [`ReadConfigError::Config`], both naming the file (and the
/// line or the variable at fault).
pub fn read_config(path: impl AsRef<Path>) -> Result<Config, ReadConfigError> {
    read_config_with_env(path, |name| std::env::var(name).ok())
}

/// [`read_config`] with the environment looked up by `var` (tests, or a process that keeps
/// its settings elsewhere).
///
/// # Errors
///
/// As [`read_config`].
pub fn read_config_with_env(
    path: impl AsRef<Path>,
    var: impl FnMut(&str) -> Option<String>,
) -> Result<Config, ReadConfigError> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|error| ReadConfigError::Read {
        path: path.to_owned(),
        error,
    })?;
    let config_error = |error| ReadConfigError::Config {
        path: Some(path.to_owned()),
        error,
    };
    let (mut config, encoding) = Config::from_properties_bytes(&bytes).map_err(config_error)?;
    match encoding {
        Encoding::Utf8 => log::info!("Read {} as {encoding}", path.display()),
        Encoding::Latin1 => log::info!(
            "Read {} as {encoding}: its bytes are not valid UTF-8",
            path.display()
        ),
    }
    config.apply_env(var).map_err(config_error)?;
    Ok(config)
}

/// Fess's defaults with its environment variables applied ([`Config::apply_env`]): the
/// configuration when there is no file.
///
/// # Errors
///
/// [`ReadConfigError::Config`] naming the variable at fault.
pub fn env_config() -> Result<Config, ReadConfigError> {
    let mut config = Config::new();
    config
        .apply_env(|name| std::env::var(name).ok())
        .map_err(|error| ReadConfigError::Config { path: None, error })?;
    Ok(config)
}
