//! `SystemSource`: this machine's CPU usage, through sysinfo.

use std::fmt;
use std::time::{Duration, Instant};

use sysinfo::{MINIMUM_CPU_UPDATE_INTERVAL, System};

use crate::{CpuPercent, CpuSample, CpuSource, SourceError, SourceErrorKind};

/// This machine's CPU usage, over all cores, as sysinfo measures it between two samples.
///
/// sysinfo's first reading is meaningless (there is no previous one to compare with), so
/// the source takes it at construction and never reports it; and it never refreshes faster
/// than sysinfo's minimum interval: a sample asked for too early waits for it (without
/// blocking the executor).
///
/// It reports the host's CPU: inside a container with a CPU quota, that is not the
/// container's own load.
pub struct SystemSource {
    system: System,
    last_refresh: Instant,
}

impl SystemSource {
    /// A source primed with its first (discarded) reading.
    ///
    /// # Errors
    ///
    /// [`SourceErrorKind::Unsupported`] when sysinfo cannot read this system.
    pub fn new() -> Result<SystemSource, SourceError> {
        let mut system = System::new()
            .map_err(|e| SourceError::new(SourceErrorKind::Unsupported, &e.to_string()))?;
        system.refresh_cpu_usage();
        Ok(SystemSource {
            system,
            last_refresh: Instant::now(),
        })
    }

    /// The shortest time between two refreshes.
    #[must_use]
    pub fn minimum_interval() -> Duration {
        MINIMUM_CPU_UPDATE_INTERVAL
    }
}

impl CpuSource for SystemSource {
    async fn sample(&mut self) -> Result<CpuSample, SourceError> {
        let since = self.last_refresh.elapsed();
        if since < MINIMUM_CPU_UPDATE_INTERVAL {
            async_io::Timer::after(MINIMUM_CPU_UPDATE_INTERVAL - since).await;
        }
        self.system.refresh_cpu_usage();
        self.last_refresh = Instant::now();
        if self.system.cpus().is_empty() {
            return Ok(CpuSample::local(None));
        }
        Ok(CpuSample::local(CpuPercent::from_f32(
            self.system.global_cpu_usage(),
        )))
    }
}

impl fmt::Debug for SystemSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SystemSource")
            .field("cpus", &self.system.cpus().len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_percentages_and_respect_the_minimum_interval() {
        let mut source = SystemSource::new().expect("supported");
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
