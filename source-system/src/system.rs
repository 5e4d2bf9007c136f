//! `SystemSource`: this machine's CPU usage, from the host's counters (sysinfo) or, in a
//! container with a CPU limit, from its cgroup.

use std::fmt;
use std::path::Path;
use std::time::{Duration, Instant};

use load_core::{
    Config, ConfigError, CpuPercent, CpuSample, CpuSource, SourceError,
    config::{ConfigErrorKind, CpuSourceKind, Origin, keys},
    source::{FromConfig, Role, SetupError, SourceErrorKind},
    text::Snippet,
    time::StdClock,
};
use sysinfo::{MINIMUM_CPU_UPDATE_INTERVAL, System};

use crate::cgroup::{Cgroup, CgroupSource, CgroupVersion};

/// Where cgroups are mounted: inside a container with its own cgroup namespace, this is the
/// container's cgroup.
pub const DEFAULT_CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// What a [`SystemSource`] measures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LocalCpu {
    /// The whole host, over all its CPUs.
    Host {
        /// The host's CPUs.
        cpus: usize,
    },
    /// This process's cgroup, relative to its limit.
    Cgroup {
        /// The interface read.
        version: CgroupVersion,
        /// The CPUs usage is relative to: the cgroup's quota or cpuset, the smaller.
        cpus: f64,
    },
}

impl fmt::Display for LocalCpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LocalCpu::Host { cpus } => write!(f, "host CPU ({cpus} CPUs)"),
            LocalCpu::Cgroup { version, cpus } => write!(f, "cgroup {version:?} CPU ({cpus} CPUs)"),
        }
    }
}

/// This machine's CPU usage.
///
/// On the host (sysinfo), the first reading is meaningless (there is no previous one to
/// compare with), so the source takes it at construction and never reports it; and it
/// never refreshes faster than sysinfo's minimum interval
/// ([`SystemSource::minimum_interval`], 200 ms on Linux): a sample asked for sooner after
/// the previous refresh is unknown (`None`, which lets work proceed and reads as 0 % for
/// request control), never a stale or meaningless value, and it never waits. Monitors poll
/// at least that far apart ([`FromConfig`] refuses a shorter interval), so only a sample
/// taken at once after construction is unknown.
///
/// sysinfo reads the host's `/proc/stat`: inside a container with a CPU quota that is the
/// host's load, not the container's. [`SystemSource::own`] (what [`FromConfig`] builds)
/// reads this process's own cgroup instead (`cgroup`), or when it sets a limit below the
/// host's CPUs (`auto`); [`SystemSource::with_kind`] the cgroup at a root given.
///
/// No runtime and no timer: it works on any executor.
pub struct SystemSource {
    inner: Inner,
    measures: LocalCpu,
}

enum Inner {
    Host {
        system: Box<System>,
        last_refresh: Instant,
    },
    Cgroup(CgroupSource<StdClock>),
}

impl SystemSource {
    /// The host's CPU (sysinfo), primed with its first (discarded) reading.
    ///
    /// # Errors
    ///
    /// [`SourceErrorKind::Unsupported`] when sysinfo cannot read this system.
    pub fn new() -> Result<SystemSource, SourceError> {
        Self::host()
    }

    /// The CPU as `kind` says, with cgroups under `cgroup_root` (a cgroup's own directory
    /// for v2, the directory of the hierarchies for v1; [`SystemSource::own`] finds the
    /// process's own cgroup instead):
    ///
    /// - `host`: the whole machine;
    /// - `cgroup`: the cgroup, relative to its limit (to the host's CPUs if it sets none);
    /// - `auto`: the cgroup when its limit is below the host's CPUs, else the host.
    ///
    /// Cgroup files that are missing or odd never fail this: it falls back to the host with
    /// one log line (WARN when `cgroup` was asked for, DEBUG for `auto`). What was chosen is
    /// logged at INFO and available from [`SystemSource::measures`].
    ///
    /// # Errors
    ///
    /// [`SourceErrorKind::Unsupported`] when the host's CPU cannot be read either.
    pub fn with_kind(
        kind: CpuSourceKind,
        cgroup_root: impl AsRef<Path>,
    ) -> Result<SystemSource, SourceError> {
        let root = cgroup_root.as_ref();
        Self::choose(kind, Role::Local, || Cgroup::detect(root))
    }

    /// The CPU as `kind` says ([`SystemSource::with_kind`]), of this process's own cgroup
    /// ([`Cgroup::own`]: found from `/proc/self/cgroup` and the mount table, v1 or v2, at
    /// any depth, its ancestors' limits included), for the work `role` names (the log line
    /// says which). Where `/proc` does not say, the cgroup at [`DEFAULT_CGROUP_ROOT`] (a
    /// container's own view).
    ///
    /// ```no_run
    /// use load_core::{config::CpuSourceKind, source::Role};
    /// use load_system::SystemSource;
    ///
    /// // What a service's request control reads: its container's CPU where the container
    /// // is limited below the host, the host's otherwise.
    /// let source = SystemSource::own(CpuSourceKind::Auto, Role::Cluster)?;
    /// println!("measuring the {}", source.measures());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`SourceErrorKind::Unsupported`] when the host's CPU cannot be read either.
    pub fn own(kind: CpuSourceKind, role: Role) -> Result<SystemSource, SourceError> {
        Self::choose(kind, role, || Cgroup::own_or_root_under(Path::new("/")))
    }

    /// The host, or the cgroup `detect` finds, as `kind` says; logged for `role`.
    fn choose(
        kind: CpuSourceKind,
        role: Role,
        detect: impl FnOnce() -> Result<Cgroup, crate::CgroupError>,
    ) -> Result<SystemSource, SourceError> {
        let what = match role {
            Role::Local => "Adaptive load control",
            Role::Cluster => "Request load control",
        };
        let host = Self::host()?;
        let LocalCpu::Host { cpus: host_cpus } = host.measures else {
            return Ok(host);
        };
        if kind == CpuSourceKind::Host {
            log::info!("{what} measures the {}", host.measures);
            return Ok(host);
        }
        let cgroup = match detect() {
            Ok(cgroup) => cgroup,
            Err(reason) => {
                if kind == CpuSourceKind::Cgroup {
                    log::warn!(
                        "adaptive.load.control.source=cgroup: {reason}; measuring the host instead"
                    );
                } else {
                    log::debug!("no cgroup to measure ({reason}): measuring the host");
                }
                log::info!("{what} measures the {}", host.measures);
                return Ok(host);
            }
        };
        let cpus = match (cgroup.limit(), kind) {
            (Some(limit), _) if limit < host_cpus as f64 => limit,
            (_, CpuSourceKind::Cgroup) => cgroup
                .limit()
                .unwrap_or(host_cpus as f64)
                .min(host_cpus as f64),
            _ => {
                log::info!(
                    "{what} measures the {} (the cgroup sets no CPU limit below it)",
                    host.measures
                );
                return Ok(host);
            }
        };
        let version = cgroup.version();
        let source = CgroupSource::new(cgroup, cpus, StdClock::new())?;
        let measures = LocalCpu::Cgroup { version, cpus };
        log::info!("{what} measures the {measures}");
        Ok(SystemSource {
            inner: Inner::Cgroup(source),
            measures,
        })
    }

    /// The host's CPU, whatever the cgroups say.
    ///
    /// # Errors
    ///
    /// [`SourceErrorKind::Unsupported`] when sysinfo cannot read this system.
    pub fn host() -> Result<SystemSource, SourceError> {
        let mut system = System::new()
            .map_err(|e| SourceError::new(SourceErrorKind::Unsupported, &e.to_string()))?;
        system.refresh_cpu_usage();
        let cpus = system.cpus().len();
        Ok(SystemSource {
            inner: Inner::Host {
                system: Box::new(system),
                last_refresh: Instant::now(),
            },
            measures: LocalCpu::Host { cpus },
        })
    }

    /// What it measures: the host or the cgroup, and over how many CPUs.
    #[must_use]
    pub fn measures(&self) -> LocalCpu {
        self.measures
    }

    /// The shortest time between two host refreshes.
    #[must_use]
    pub fn minimum_interval() -> std::time::Duration {
        MINIMUM_CPU_UPDATE_INTERVAL
    }
}

impl LocalCpu {
    /// The CPUs usage is relative to, in whole CPUs (a fractional quota rounded up; at
    /// least 1).
    #[must_use]
    pub fn whole_cpus(&self) -> u32 {
        let cpus = match *self {
            LocalCpu::Host { cpus } => u32::try_from(cpus).unwrap_or(u32::MAX),
            // A quota's CPUs, at most the host's: the conversion saturates.
            LocalCpu::Cgroup { cpus, .. } => cpus.ceil() as u32,
        };
        cpus.max(1)
    }
}

/// Each sample says that the CPU is the front end's own, over [`LocalCpu::whole_cpus`]
/// ([`CpuSample::with_own_cores`]): the limit mode reads the front end's own requests in
/// flight as the load on those CPUs.
impl CpuSource for SystemSource {
    async fn sample(&mut self) -> Result<CpuSample, SourceError> {
        let cores = self.measures.whole_cpus();
        let sample = match &mut self.inner {
            Inner::Cgroup(cgroup) => cgroup.sample_now()?,
            Inner::Host {
                system,
                last_refresh,
            } => {
                if last_refresh.elapsed() < MINIMUM_CPU_UPDATE_INTERVAL {
                    // Too soon for sysinfo: a refresh now would compare with almost nothing.
                    CpuSample::local(None)
                } else {
                    system.refresh_cpu_usage();
                    *last_refresh = Instant::now();
                    if system.cpus().is_empty() {
                        CpuSample::local(None)
                    } else {
                        CpuSample::local(CpuPercent::from_f32(system.global_cpu_usage()))
                    }
                }
            }
        };
        Ok(sample.with_own_cores(cores))
    }

    fn kind(&self) -> load_core::source::SourceKind {
        load_core::source::SourceKind::Machine
    }
}

/// Built from a [`Config`], this process's own cgroup or the host ([`SystemSource::own`]):
/// for [`Role::Local`] (background work) as `adaptive.load.control.source` says; for
/// [`Role::Cluster`] (a service limited by its own CPU, or single-box mode) as `auto` does:
/// the cgroup where it limits the service below the host's CPUs, the host otherwise. What
/// was chosen is logged at INFO and available from [`SystemSource::measures`].
///
/// ```no_run
/// use load_core::{Config, source::{FromConfig, Role}};
/// use load_system::SystemSource;
///
/// let config = Config::from_properties("adaptive.load.control=50")?;
/// let local = SystemSource::from_config(&config, Role::Local)?;
/// println!("measuring the {}", local.measures());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl FromConfig for SystemSource {
    /// # Errors
    ///
    /// [`SetupError::Config`] naming `load.control.monitor.interval` when the interval (set
    /// in code) is shorter than this machine's CPU can be measured;
    /// [`SetupError::Source`] when it cannot be measured at all.
    fn from_config(config: &Config, role: Role) -> Result<SystemSource, SetupError> {
        check_interval(config.control.monitor_interval)?;
        let kind = match role {
            Role::Cluster => CpuSourceKind::Auto,
            Role::Local => config.control.adaptive_source,
        };
        Ok(SystemSource::own(kind, role)?)
    }
}

/// Refuses an interval shorter than this machine's CPU can be measured.
fn check_interval(interval: Duration) -> Result<(), ConfigError> {
    let minimum = SystemSource::minimum_interval();
    if interval >= minimum {
        return Ok(());
    }
    let shown = format!("{interval:?}");
    Err(ConfigError::new(
        Origin::Config,
        Snippet::new(keys::MONITOR_INTERVAL),
        Snippet::new(&shown),
        ConfigErrorKind::BelowMinimum {
            minimum_ms: u32::try_from(minimum.as_millis()).unwrap_or(u32::MAX),
            because: "this machine's CPU cannot be measured more often",
        },
    ))
}

impl fmt::Debug for SystemSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SystemSource")
            .field("measures", &self.measures)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn host_samples_are_percentages_and_unknown_when_too_soon() {
        let mut source = SystemSource::new().expect("supported");
        assert!(matches!(source.measures(), LocalCpu::Host { cpus } if cpus > 0));
        // At once after the priming reading: too soon for a meaningful one.
        let early = futures::executor::block_on(source.sample()).expect("sample");
        assert_eq!(early.cpu, None);
        // Once sysinfo's interval has passed, a percentage.
        std::thread::sleep(MINIMUM_CPU_UPDATE_INTERVAL);
        let sample = futures::executor::block_on(source.sample()).expect("sample");
        assert!(sample.cpu.is_some_and(|c| c.get() <= 100), "{sample:?}");
        assert_eq!((sample.nodes, sample.failed), (1, 0));
    }

    #[test]
    fn an_interval_below_what_sysinfo_measures_is_refused_naming_the_key() {
        let mut config = Config::new();
        config.control.monitor_interval = Duration::from_millis(50);
        let error = SystemSource::from_config(&config, Role::Local).unwrap_err();
        assert!(
            error.to_string().contains("load.control.monitor.interval"),
            "{error}"
        );
        assert!(matches!(
            error,
            SetupError::Config(ConfigError {
                kind: ConfigErrorKind::BelowMinimum { .. },
                ..
            })
        ));
    }
}
