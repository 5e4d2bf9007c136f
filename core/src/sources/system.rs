//! `SystemSource`: this machine's CPU usage, from the host's counters (sysinfo) or, in a
//! container with a CPU limit, from its cgroup.

use std::fmt;
use std::path::Path;
use std::time::Instant;

use sysinfo::{MINIMUM_CPU_UPDATE_INTERVAL, System};

use super::IoTimer;
use super::cgroup::{Cgroup, CgroupSource, CgroupVersion};
use crate::{
    CpuPercent, CpuSample, CpuSource, CpuSourceKind, SourceError, SourceErrorKind, StdClock,
};

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
/// never refreshes faster than sysinfo's minimum interval: a sample asked for too early
/// waits for it (without blocking the executor).
///
/// sysinfo reads the host's `/proc/stat`: inside a container with a CPU quota that is the
/// host's load, not the container's. [`SystemSource::with_kind`] reads the cgroup instead
/// (`cgroup`), or when it sets a limit below the host's CPUs (`auto`).
pub struct SystemSource<Z = IoTimer> {
    inner: Inner,
    measures: LocalCpu,
    /// Waits out sysinfo's minimum refresh interval when sampled too soon.
    sleep: Z,
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

    /// The CPU as `kind` says, with cgroups under `cgroup_root` (normally
    /// [`DEFAULT_CGROUP_ROOT`]):
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
        let host = Self::host()?;
        let LocalCpu::Host { cpus: host_cpus } = host.measures else {
            return Ok(host);
        };
        if kind == CpuSourceKind::Host {
            log::info!("Adaptive load control measures the {}", host.measures);
            return Ok(host);
        }
        let cgroup = match Cgroup::detect(root) {
            Ok(cgroup) => cgroup,
            Err(reason) => {
                if kind == CpuSourceKind::Cgroup {
                    log::warn!(
                        "adaptive.load.control.source=cgroup: {reason}; measuring the host instead"
                    );
                } else {
                    log::debug!("no cgroup to measure ({reason}): measuring the host");
                }
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
                    "Adaptive load control measures the {} (the cgroup sets no CPU limit below it)",
                    host.measures
                );
                return Ok(host);
            }
        };
        let version = cgroup.version();
        let source = CgroupSource::new(cgroup, cpus, StdClock::new())?;
        let measures = LocalCpu::Cgroup { version, cpus };
        log::info!("Adaptive load control measures the {measures}");
        Ok(SystemSource {
            inner: Inner::Cgroup(source),
            measures,
            sleep: IoTimer,
        })
    }

    fn host() -> Result<SystemSource, SourceError> {
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
            sleep: IoTimer,
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

impl<Z> SystemSource<Z> {
    /// The same source, waiting with `sleep` (a runtime's [`crate::Sleep`]) instead of
    /// [`IoTimer`].
    #[must_use]
    pub fn with_sleep<S: crate::Sleep>(self, sleep: S) -> SystemSource<S> {
        SystemSource {
            inner: self.inner,
            measures: self.measures,
            sleep,
        }
    }
}

impl<Z: crate::Sleep + Send + Sync> CpuSource for SystemSource<Z> {
    async fn sample(&mut self) -> Result<CpuSample, SourceError> {
        match &mut self.inner {
            Inner::Cgroup(cgroup) => cgroup.sample_now(),
            Inner::Host {
                system,
                last_refresh,
            } => {
                let since = last_refresh.elapsed();
                if since < MINIMUM_CPU_UPDATE_INTERVAL {
                    self.sleep.sleep(MINIMUM_CPU_UPDATE_INTERVAL - since).await;
                }
                system.refresh_cpu_usage();
                *last_refresh = Instant::now();
                if system.cpus().is_empty() {
                    return Ok(CpuSample::local(None));
                }
                Ok(CpuSample::local(CpuPercent::from_f32(
                    system.global_cpu_usage(),
                )))
            }
        }
    }
}

impl<Z> fmt::Debug for SystemSource<Z> {
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
    fn host_samples_are_percentages_and_respect_the_minimum_interval() {
        let mut source = SystemSource::new().expect("supported");
        assert!(matches!(source.measures(), LocalCpu::Host { cpus } if cpus > 0));
        let started = Instant::now();
        let first = futures::executor::block_on(source.sample()).expect("sample");
        let second = futures::executor::block_on(source.sample()).expect("sample");
        assert!(started.elapsed() >= 2 * MINIMUM_CPU_UPDATE_INTERVAL - Duration::from_millis(5));
        for sample in [first, second] {
            assert!(sample.cpu.is_some_and(|c| c.get() <= 100), "{sample:?}");
            assert_eq!((sample.nodes, sample.failed), (1, 0));
        }
    }
}
