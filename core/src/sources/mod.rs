//! The CPU sources that need an operating system: the cluster over HTTP (feature
//! `opensearch`) and this machine (feature `system`). They implement
//! [`crate::CpuSource`], which lives with its sample and error types in the `no_std` part.

/// The std sources' default [`crate::Sleep`]: the timer of `async-io`, the reactor that
/// surf's HTTP client runs on anyway. Any runtime's sleep can replace it
/// (`with_sleep`); the sources never name a runtime themselves.
#[derive(Clone, Copy, Debug, Default)]
pub struct IoTimer;

impl crate::Sleep for IoTimer {
    async fn sleep(&self, duration: std::time::Duration) {
        async_io::Timer::after(duration).await;
    }
}

#[cfg(feature = "system")]
mod cgroup;
#[cfg(feature = "opensearch")]
mod opensearch;
#[cfg(feature = "system")]
mod system;

#[cfg(feature = "system")]
pub use cgroup::{Cgroup, CgroupSource, CgroupVersion, cpu_percent};
#[cfg(feature = "opensearch")]
pub use opensearch::{
    ClusterClient, ClusterResponse, HttpMethod, OpenSearchOptions, OpenSearchSource,
};
#[cfg(feature = "system")]
pub use system::{DEFAULT_CGROUP_ROOT, LocalCpu, SystemSource};
