//! This process's cgroup as a CPU source: usage over time relative to its CPU limit, for
//! containers whose quota is smaller than the host.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::locate::{Located, locate};
use load_core::{
    Clock, CpuPercent, CpuSample, CpuSource, Instant, SourceError, source::SourceErrorKind,
};

/// Why a cgroup could not be read: which file, and what was wrong with it.
#[derive(Debug)]
#[non_exhaustive]
pub enum CgroupError {
    /// Neither interface's CPU accounting is readable under this directory.
    NotFound {
        /// The directory searched.
        root: PathBuf,
    },
    /// A file could not be read.
    Read {
        /// The file.
        file: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// This process's cgroup could not be located from `/proc/self/cgroup` and
    /// `/proc/self/mountinfo`.
    NotLocated {
        /// Why, with the path or subtree concerned.
        reason: String,
    },
    /// A file was read but does not say what it should.
    Malformed {
        /// The file.
        file: PathBuf,
        /// What was wrong, with the text found.
        reason: String,
    },
}

impl fmt::Display for CgroupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CgroupError::NotFound { root } => write!(
                f,
                "no readable cgroup CPU accounting under {} (neither cpu.stat nor cpuacct.usage)",
                root.display()
            ),
            CgroupError::Read { file, source } => write!(f, "{}: {source}", file.display()),
            CgroupError::NotLocated { reason } => f.write_str(reason),
            CgroupError::Malformed { file, reason } => write!(f, "{}: {reason}", file.display()),
        }
    }
}

impl std::error::Error for CgroupError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CgroupError::Read { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Which cgroup interface was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CgroupVersion {
    /// The unified hierarchy (`cpu.stat`, `cpu.max`, `cpuset.cpus.effective`).
    V2,
    /// The legacy per-controller hierarchies (`cpuacct.usage`, `cpu.cfs_quota_us`, ...).
    V1,
}

/// A cgroup's CPU accounting and limit, read from its files.
#[derive(Clone, Debug)]
pub struct Cgroup {
    version: CgroupVersion,
    usage_file: PathBuf,
    quota_cpus: Option<f64>,
    cpuset_cpus: Option<usize>,
}

impl Cgroup {
    /// Reads the cgroup at `root`: for v2 the cgroup's own directory (`/sys/fs/cgroup` inside a
    /// container); for v1 the directory holding the `cpu`, `cpuacct` and `cpuset` (or
    /// `cpu,cpuacct`) hierarchies.
    ///
    /// # Errors
    ///
    /// [`CgroupError::NotFound`] when neither interface's usage file is there; the
    /// v1 usage file's own error when it is there but unreadable.
    pub fn detect(root: &Path) -> Result<Cgroup, CgroupError> {
        let v2_usage = root.join("cpu.stat");
        if read_usage(CgroupVersion::V2, &v2_usage).is_ok() {
            return Ok(Cgroup {
                version: CgroupVersion::V2,
                quota_cpus: std::fs::read_to_string(root.join("cpu.max"))
                    .ok()
                    .and_then(|text| parse_quota(&text)),
                cpuset_cpus: std::fs::read_to_string(root.join("cpuset.cpus.effective"))
                    .ok()
                    .and_then(|text| parse_cpu_list(&text)),
                usage_file: v2_usage,
            });
        }
        let pick = |names: &[&str], file: &str| {
            names
                .iter()
                .map(|n| root.join(n).join(file))
                .find(|p| p.is_file())
        };
        let Some(usage_file) = pick(&["cpuacct", "cpu,cpuacct", "cpuacct,cpu"], "cpuacct.usage")
        else {
            return Err(CgroupError::NotFound {
                root: root.to_path_buf(),
            });
        };
        read_usage(CgroupVersion::V1, &usage_file)?;
        let read = |file: &str| {
            pick(&["cpu", "cpu,cpuacct", "cpuacct,cpu"], file)
                .and_then(|p| std::fs::read_to_string(p).ok())
        };
        let quota_cpus = v1_quota(read("cpu.cfs_quota_us"), read("cpu.cfs_period_us"));
        let cpuset_cpus = pick(&["cpuset"], "cpuset.cpus")
            .and_then(|p| std::fs::read_to_string(p).ok())
            .and_then(|text| parse_cpu_list(&text));
        Ok(Cgroup {
            version: CgroupVersion::V1,
            usage_file,
            quota_cpus,
            cpuset_cpus,
        })
    }

    /// This process's own cgroup, wherever it is: found from `/proc/self/cgroup` and the
    /// cgroup mounts of `/proc/self/mountinfo` (v2, v1 with the controllers in one hierarchy
    /// or several, at any depth), its limit the least of its own and its ancestors' quotas
    /// up to the mount (a limit set on a parent, as a pod's on its containers, applies) and
    /// its cpuset.
    ///
    /// # Errors
    ///
    /// [`CgroupError::Read`] when a `/proc` file, or the cgroup's usage file, is missing or
    /// cannot be read; [`CgroupError::Malformed`] when the usage file does not say what it
    /// should; [`CgroupError::NotLocated`] when no mounted hierarchy with CPU accounting
    /// holds the process.
    pub fn own() -> Result<Cgroup, CgroupError> {
        Cgroup::own_under(Path::new("/"))
    }

    /// [`Cgroup::own`], and where `/proc` does not locate it, the cgroup at
    /// `/sys/fs/cgroup` (a container's own view); both under `prefix` (`/` for this
    /// process): what [`crate::SystemSource::own`] reads. The error is the root's, when
    /// neither is readable.
    ///
    /// # Errors
    ///
    /// As [`Cgroup::detect`] for `prefix/sys/fs/cgroup`.
    pub fn own_or_root_under(prefix: &Path) -> Result<Cgroup, CgroupError> {
        Cgroup::own_under(prefix).or_else(|own| {
            log::debug!(
                "{own}: reading the cgroup at {}",
                crate::DEFAULT_CGROUP_ROOT
            );
            let root = crate::DEFAULT_CGROUP_ROOT.trim_start_matches('/');
            Cgroup::detect(&prefix.join(root))
        })
    }

    /// [`Cgroup::own`] with `/proc` and the mount points under `prefix` (a fixture tree
    /// holding `proc/self/cgroup`, `proc/self/mountinfo` and the cgroup files).
    ///
    /// # Errors
    ///
    /// As [`Cgroup::own`].
    pub fn own_under(prefix: &Path) -> Result<Cgroup, CgroupError> {
        let read = |file: &str| {
            // Lossy: a mount point elsewhere may hold any bytes (the kernel escapes only
            // space, tab, newline and backslash), and it must not hide the cgroup's line.
            let file = prefix.join(file);
            std::fs::read(&file)
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                .map_err(|source| CgroupError::Read { file, source })
        };
        let (cgroup, mountinfo) = (read("proc/self/cgroup")?, read("proc/self/mountinfo")?);
        let located = locate(prefix, &cgroup, &mountinfo).map_err(|e| CgroupError::NotLocated {
            reason: e.to_string(),
        })?;
        let read_text = |file: PathBuf| std::fs::read_to_string(file).ok();
        match located {
            Located::V2 { dir, mount } => {
                let usage_file = dir.join("cpu.stat");
                read_usage(CgroupVersion::V2, &usage_file)?;
                Ok(Cgroup {
                    version: CgroupVersion::V2,
                    quota_cpus: least_up_to(&dir, &mount, |d| {
                        read_text(d.join("cpu.max")).and_then(|t| parse_quota(&t))
                    }),
                    // The nearest that has it: a cgroup whose parent does not enable the
                    // cpuset controller for its children has no file of its own.
                    cpuset_cpus: dir
                        .ancestors()
                        .take_while(|d| d.starts_with(&mount))
                        .find_map(|d| read_text(d.join("cpuset.cpus.effective")))
                        .and_then(|t| parse_cpu_list(&t)),
                    usage_file,
                })
            }
            Located::V1 {
                cpuacct,
                cpu,
                cpuset,
            } => {
                let usage_file = cpuacct.0.join("cpuacct.usage");
                read_usage(CgroupVersion::V1, &usage_file)?;
                Ok(Cgroup {
                    version: CgroupVersion::V1,
                    quota_cpus: cpu.and_then(|(dir, mount)| {
                        least_up_to(&dir, &mount, |d| {
                            v1_quota(
                                read_text(d.join("cpu.cfs_quota_us")),
                                read_text(d.join("cpu.cfs_period_us")),
                            )
                        })
                    }),
                    // `effective_cpus` leaves out CPUs taken offline; older kernels lack it.
                    cpuset_cpus: cpuset.and_then(|(dir, _)| {
                        read_text(dir.join("cpuset.effective_cpus"))
                            .or_else(|| read_text(dir.join("cpuset.cpus")))
                            .and_then(|t| parse_cpu_list(&t))
                    }),
                    usage_file,
                })
            }
        }
    }

    /// The interface found.
    #[must_use]
    pub fn version(&self) -> CgroupVersion {
        self.version
    }

    /// The CPUs this cgroup may use: the smaller of its quota (fractional: 1.5 CPUs is 1.5)
    /// and its cpuset; `None` when it sets neither.
    #[must_use]
    pub fn limit(&self) -> Option<f64> {
        match (self.quota_cpus, self.cpuset_cpus) {
            (Some(quota), Some(set)) => Some(quota.min(set as f64)),
            (Some(quota), None) => Some(quota),
            (None, Some(set)) => Some(set as f64),
            (None, None) => None,
        }
    }

    /// CPU time used by the cgroup so far.
    ///
    /// # Errors
    ///
    /// When the usage file cannot be read or parsed.
    pub fn usage(&self) -> Result<Duration, CgroupError> {
        read_usage(self.version, &self.usage_file)
    }
}

fn read_usage(version: CgroupVersion, file: &Path) -> Result<Duration, CgroupError> {
    let text = std::fs::read_to_string(file).map_err(|source| CgroupError::Read {
        file: file.to_path_buf(),
        source,
    })?;
    let malformed = |reason: String| CgroupError::Malformed {
        file: file.to_path_buf(),
        reason,
    };
    match version {
        CgroupVersion::V2 => text
            .lines()
            .find_map(|line| line.strip_prefix("usage_usec "))
            .and_then(|n| n.trim().parse().ok())
            .map(Duration::from_micros)
            .ok_or_else(|| malformed("no usage_usec line".to_owned())),
        CgroupVersion::V1 => text
            .trim()
            .parse()
            .map(Duration::from_nanos)
            .map_err(|_| malformed(format!("not a number: {:?}", text.trim()))),
    }
}

/// The least of `quota` read at `dir` and at each ancestor up to `mount` (inclusive): a
/// limit set on a parent holds for its children.
fn least_up_to(dir: &Path, mount: &Path, quota: impl Fn(&Path) -> Option<f64>) -> Option<f64> {
    dir.ancestors()
        .take_while(|d| d.starts_with(mount))
        .filter_map(quota)
        .reduce(f64::min)
}

/// v1's `cpu.cfs_quota_us` (`-1`: none) over `cpu.cfs_period_us`.
fn v1_quota(quota: Option<String>, period: Option<String>) -> Option<f64> {
    let quota = quota?.trim().parse::<i64>().ok()?;
    let period = period?.trim().parse::<u64>().ok()?;
    (quota > 0 && period > 0).then(|| quota as f64 / period as f64)
}

/// `cpu.max`: `"max 100000"` (no quota) or `"150000 100000"` (1.5 CPUs).
fn parse_quota(text: &str) -> Option<f64> {
    let mut words = text.split_whitespace();
    let quota = words.next()?.parse::<u64>().ok()?;
    let period = words
        .next()
        .map_or(Some(100_000), |p| p.parse::<u64>().ok())?;
    (quota > 0 && period > 0).then(|| quota as f64 / period as f64)
}

/// A cpuset list (`"0-3,6"`): how many CPUs it names.
fn parse_cpu_list(text: &str) -> Option<usize> {
    let mut count: usize = 0;
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let cpus = match part.split_once('-') {
            Some((a, b)) => b
                .trim()
                .parse::<usize>()
                .ok()?
                .checked_sub(a.trim().parse().ok()?)?
                .checked_add(1)?,
            None => part.trim().parse::<usize>().map(|_| 1).ok()?,
        };
        count = count.checked_add(cpus)?;
    }
    (count > 0).then_some(count)
}

/// `used` CPU time over `elapsed` wall time on `cpus` CPUs, as a percentage (clamped).
#[must_use]
pub fn cpu_percent(used: Duration, elapsed: Duration, cpus: f64) -> Option<CpuPercent> {
    if elapsed.is_zero() || cpus <= 0.0 {
        return None;
    }
    CpuPercent::from_f32((used.as_secs_f64() / elapsed.as_secs_f64() / cpus * 100.0) as f32)
}

/// A cgroup's CPU usage as a [`CpuSource`]: each sample is the usage since the previous one
/// (or since construction), relative to `cpus`.
pub struct CgroupSource<C> {
    cgroup: Cgroup,
    cpus: f64,
    clock: C,
    last: (Duration, Instant),
}

impl<C: Clock> CgroupSource<C> {
    /// A source over `cgroup` relative to `cpus` CPUs, timed by `clock`; reads the usage
    /// once now as the baseline.
    ///
    /// # Errors
    ///
    /// When the usage cannot be read.
    pub fn new(cgroup: Cgroup, cpus: f64, clock: C) -> Result<CgroupSource<C>, SourceError> {
        let usage = cgroup
            .usage()
            .map_err(|e| SourceError::new(SourceErrorKind::Unsupported, &e.to_string()))?;
        let now = clock.now();
        Ok(CgroupSource {
            cgroup,
            cpus,
            clock,
            last: (usage, now),
        })
    }

    /// The CPUs usage is relative to.
    #[must_use]
    pub fn cpus(&self) -> f64 {
        self.cpus
    }

    /// One sample now.
    ///
    /// # Errors
    ///
    /// [`SourceErrorKind::Io`] when the usage file cannot be read.
    pub fn sample_now(&mut self) -> Result<CpuSample, SourceError> {
        let usage = self
            .cgroup
            .usage()
            .map_err(|e| SourceError::new(SourceErrorKind::Io, &e.to_string()))?;
        let now = self.clock.now();
        let (last_usage, last_time) = self.last;
        let elapsed = now.saturating_duration_since(last_time);
        if elapsed.is_zero() {
            return Ok(CpuSample::local(None));
        }
        self.last = (usage, now);
        Ok(CpuSample::local(cpu_percent(
            usage.saturating_sub(last_usage),
            elapsed,
            self.cpus,
        )))
    }
}

impl<C: Clock + Send> CpuSource for CgroupSource<C> {
    async fn sample(&mut self) -> Result<CpuSample, SourceError> {
        self.sample_now()
    }

    fn kind(&self) -> load_core::source::SourceKind {
        load_core::source::SourceKind::Machine
    }
}

impl<C> fmt::Debug for CgroupSource<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CgroupSource")
            .field("cgroup", &self.cgroup)
            .field("cpus", &self.cpus)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotas_and_cpu_lists() {
        assert_eq!(parse_quota("max 100000\n"), None);
        assert_eq!(parse_quota("150000 100000\n"), Some(1.5));
        assert_eq!(parse_quota("50000 100000"), Some(0.5));
        assert_eq!(parse_quota("garbage"), None);
        assert_eq!(parse_cpu_list("0-3,6\n"), Some(5));
        assert_eq!(parse_cpu_list("2"), Some(1));
        assert_eq!(parse_cpu_list(""), None);
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("a-b"), None);
        assert_eq!(parse_cpu_list("0-18446744073709551615"), None, "overflow");
        assert_eq!(
            parse_cpu_list("0-9223372036854775807,0-9223372036854775807"),
            None
        );
    }

    #[test]
    fn percent_is_relative_to_the_limit() {
        let second = Duration::from_secs(1);
        assert_eq!(
            cpu_percent(Duration::from_millis(750), second, 1.5),
            CpuPercent::new(50)
        );
        assert_eq!(
            cpu_percent(Duration::from_millis(1500), second, 1.5),
            CpuPercent::new(100)
        );
        assert_eq!(
            cpu_percent(Duration::from_secs(4), second, 1.5),
            CpuPercent::new(100),
            "clamped"
        );
        assert_eq!(cpu_percent(second, Duration::ZERO, 1.0), None);
    }
}
