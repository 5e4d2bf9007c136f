//! How a source is built from a configuration ([`FromConfig`]), and why it could not be.

use core::fmt;

use crate::{Config, ConfigError, SourceError};

/// Which signal a source is asked to provide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// The cluster's CPU, that HTTP request control decides on (`search_engine.*` keys; a
    /// local source stands in for it in single-box mode).
    Cluster,
    /// This machine's CPU, that background work waits on (`adaptive.load.control.*`).
    Local,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Cluster => "the cluster's CPU",
            Role::Local => "this machine's CPU",
        })
    }
}

/// A [`crate::CpuSource`] that a [`Config`] describes: how the ready-made constructors
/// (`LoadGuard::from_config`, `BackgroundGate::from_config` in `load-runtime`) build the
/// source they are generic over, so that the guard never names a source type it does not
/// need.
///
/// # Example
///
/// A source of your own, which reads nothing from the configuration:
///
/// ```
/// use load_core::{Config, CpuPercent, CpuSample, CpuSource, SourceError, source::{FromConfig, Role, SetupError}};
///
/// struct Quiet;
///
/// impl CpuSource for Quiet {
///     async fn sample(&mut self) -> Result<CpuSample, SourceError> {
///         Ok(CpuSample::local(CpuPercent::new(5)))
///     }
/// }
///
/// impl FromConfig for Quiet {
///     fn from_config(_: &Config, _: Role) -> Result<Quiet, SetupError> {
///         Ok(Quiet)
///     }
/// }
///
/// assert!(Quiet::from_config(&Config::new(), Role::Cluster).is_ok());
/// ```
pub trait FromConfig: Sized {
    /// The source `config` describes for `role`.
    ///
    /// # Errors
    ///
    /// [`SetupError::Config`] when a key it needs is missing or unusable (naming the key),
    /// [`SetupError::Source`] when the source cannot be created, or cannot provide `role`.
    fn from_config(config: &Config, role: Role) -> Result<Self, SetupError>;
}

/// Fess's single box: the cluster `A` for [`Role::Cluster`] when the configuration names
/// one (`search_engine.http.url`), else this machine `B`; `B` for [`Role::Local`]. With
/// `Either<OpenSearchSource, SystemSource>`, `LoadGuard::from_config` polls the cluster when
/// its address is set and reads the service's own CPU when it is not, as the demo does.
///
/// ```
/// use futures::future::Either;
/// use load_core::source::{FromConfig, Role, SetupError};
/// use load_core::{Config, CpuPercent, CpuSample, CpuSource, SourceError};
///
/// struct Cluster;
/// struct Machine;
/// # impl CpuSource for Cluster { async fn sample(&mut self) -> Result<CpuSample, SourceError> { Ok(CpuSample::local(CpuPercent::new(1))) } }
/// # impl CpuSource for Machine { async fn sample(&mut self) -> Result<CpuSample, SourceError> { Ok(CpuSample::local(CpuPercent::new(2))) } }
/// impl FromConfig for Cluster {
///     fn from_config(_: &Config, _: Role) -> Result<Cluster, SetupError> { Ok(Cluster) }
/// }
/// impl FromConfig for Machine {
///     fn from_config(_: &Config, _: Role) -> Result<Machine, SetupError> { Ok(Machine) }
/// }
///
/// type Source = Either<Cluster, Machine>;
/// let single_box = Config::from_properties("web.load.control=80")?;
/// let cluster = Config::from_properties("search_engine.http.url=http://127.0.0.1:9200")?;
/// assert!(matches!(Source::from_config(&single_box, Role::Cluster), Ok(Either::Right(Machine))));
/// assert!(matches!(Source::from_config(&cluster, Role::Cluster), Ok(Either::Left(Cluster))));
/// assert!(matches!(Source::from_config(&cluster, Role::Local), Ok(Either::Right(Machine))));
/// # Ok::<(), load_core::ConfigError>(())
/// ```
impl<A: FromConfig, B: FromConfig> FromConfig for futures::future::Either<A, B> {
    /// # Errors
    ///
    /// Those of the source chosen.
    fn from_config(config: &Config, role: Role) -> Result<Self, SetupError> {
        match (role, &config.cluster.urls) {
            (Role::Cluster, Some(_)) => A::from_config(config, role).map(Self::Left),
            _ => B::from_config(config, role).map(Self::Right),
        }
    }
}

/// Why a source or a handle could not be set up. Small and `Copy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SetupError {
    /// The configuration is invalid, or lacks what is needed (naming key and value).
    Config(ConfigError),
    /// The source could not be created (an unreadable CA file, a system whose CPU cannot be
    /// read).
    Source(SourceError),
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetupError::Config(error) => write!(f, "configuration: {error}"),
            SetupError::Source(error) => write!(f, "cannot set up the CPU source: {error}"),
        }
    }
}

impl core::error::Error for SetupError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            SetupError::Config(error) => Some(error),
            SetupError::Source(error) => Some(error),
        }
    }
}

impl From<ConfigError> for SetupError {
    fn from(error: ConfigError) -> Self {
        SetupError::Config(error)
    }
}

impl From<SourceError> for SetupError {
    fn from(error: SourceError) -> Self {
        SetupError::Source(error)
    }
}
