//! Where CPU samples come from: the [`CpuSource`] trait, its sample and error types, how a
//! source is built from a configuration ([`FromConfig`]), and allocation-free test
//! doubles. The sources that need an operating system live in crates of their own
//! (`load-opensearch`, `load-system`).

use core::future::Future;

use crate::CpuPercent;
use crate::node_stats::NodeStats;

mod doubles;
mod error;
mod kind;
mod setup;

pub use doubles::{FixedSource, ScriptedSource};
pub use error::{BodyError, SourceError, SourceErrorKind};
pub use kind::SourceKind;

/// Either of two sources, chosen at run time: `futures`' own `Either`, re-exported so that
/// a server need not depend on `futures` to name it. It is a [`CpuSource`] (the chosen
/// side's samples) and a [`FromConfig`] (Fess's single box: the cluster when
/// `search_engine.http.url` is set, else this machine).
pub use futures::future::Either;
pub use setup::{FromConfig, Role, SetupError};

/// One reading of a CPU source, built with [`CpuSample::local`] or [`CpuSample::cluster`]
/// and the `with_` methods (a later version may add what a sample carries).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CpuSample {
    /// The CPU: for a cluster, the busiest node (0 % when no node could measure, as in
    /// Fess); for a machine, its usage, `None` when it cannot measure.
    pub cpu: Option<CpuPercent>,
    /// Nodes that answered (1 for a machine).
    pub nodes: u32,
    /// Nodes that did not answer (a cluster's `_nodes.failed`, 0 when unknown).
    pub failed: u32,
    /// Which of the source's addresses answered, as an index into its list (0 for a source
    /// with one address).
    pub endpoint: u8,
    /// For a cluster, the busiest node's search thread pool, when the poll reported one
    /// (the limit mode's fleet law reads it); `None` for a machine.
    pub search_pool: Option<crate::node_stats::SearchPool>,
    /// For a machine whose CPU is the front end's own (a service limited by its own CPU):
    /// the CPUs that CPU is measured over, a count of at least 1. The limit mode then reads
    /// the front end's own requests in flight as the load on those CPUs, where a cluster
    /// reports its search pool. `None` for a cluster, and for a machine whose CPU others
    /// share.
    pub own_cores: Option<u32>,
}

impl CpuSample {
    /// A sample of one machine.
    #[must_use]
    pub const fn local(cpu: Option<CpuPercent>) -> CpuSample {
        CpuSample {
            cpu,
            nodes: 1,
            failed: 0,
            endpoint: 0,
            search_pool: None,
            own_cores: None,
        }
    }

    /// The same sample, answered by the address at `endpoint` of the source's list.
    #[must_use]
    pub const fn from_endpoint(self, endpoint: u8) -> CpuSample {
        CpuSample { endpoint, ..self }
    }

    /// The same sample of a machine, whose CPU is the front end's own over `cores` CPUs
    /// (at least 1): the limit mode reads the front end's requests in flight as the load on
    /// them.
    #[must_use]
    pub const fn with_own_cores(self, cores: u32) -> CpuSample {
        CpuSample {
            own_cores: Some(if cores == 0 { 1 } else { cores }),
            ..self
        }
    }

    /// The same sample, of a cluster where `answered` nodes answered and `failed` did not
    /// (a source of another cluster than OpenSearch's node stats, which
    /// [`CpuSample::cluster`] reads).
    ///
    /// ```
    /// use load_core::{CpuPercent, CpuSample};
    ///
    /// let sample = CpuSample::local(CpuPercent::new(85)).with_nodes(3, 1);
    /// assert_eq!((sample.nodes, sample.failed), (3, 1));
    /// ```
    #[must_use]
    pub const fn with_nodes(self, answered: u32, failed: u32) -> CpuSample {
        CpuSample {
            nodes: answered,
            failed,
            ..self
        }
    }

    /// The same sample without [`CpuSample::own_cores`]: a machine's CPU that others share,
    /// for a source that wraps one that says otherwise (the limit mode then learns its cap
    /// from completions, the law without a pool).
    ///
    /// ```
    /// use load_core::{CpuPercent, CpuSample};
    ///
    /// let own = CpuSample::local(CpuPercent::new(40)).with_own_cores(2);
    /// assert_eq!(own.own_cores, Some(2));
    /// assert_eq!(own.without_own_cores().own_cores, None);
    /// ```
    #[must_use]
    pub const fn without_own_cores(self) -> CpuSample {
        CpuSample {
            own_cores: None,
            ..self
        }
    }

    /// The same sample, with the busiest node's search thread pool.
    #[must_use]
    pub const fn with_search_pool(self, pool: crate::node_stats::SearchPool) -> CpuSample {
        CpuSample {
            search_pool: Some(pool),
            ..self
        }
    }
}

/// A source of CPU samples: a cluster polled over HTTP, this machine, or a test double.
///
/// The future is `Send` so that monitors can run on multi-threaded executors.
///
/// # Example
///
/// A source that reads a value some other part of the program keeps up to date:
///
/// ```
/// use core::sync::atomic::{AtomicU8, Ordering};
/// use load_core::{CpuPercent, CpuSample, CpuSource, SourceError};
///
/// struct FromAtomic<'a>(&'a AtomicU8);
///
/// impl CpuSource for FromAtomic<'_> {
///     async fn sample(&mut self) -> Result<CpuSample, SourceError> {
///         let percent = self.0.load(Ordering::Relaxed);
///         Ok(CpuSample::local(CpuPercent::new(percent)))
///     }
/// }
///
/// let value = AtomicU8::new(42);
/// let sample = futures::executor::block_on(FromAtomic(&value).sample()).unwrap();
/// assert_eq!(sample.cpu, CpuPercent::new(42));
/// ```
pub trait CpuSource {
    /// Takes one sample.
    fn sample(&mut self) -> impl Future<Output = Result<CpuSample, SourceError>> + Send;

    /// What the source reads, for the operator's page and the log: by default
    /// [`SourceKind::Unnamed`]. The sources of this project's crates each say theirs.
    fn kind(&self) -> SourceKind {
        SourceKind::Unnamed
    }
}

impl<S: CpuSource + Send + ?Sized> CpuSource for &mut S {
    fn sample(&mut self) -> impl Future<Output = Result<CpuSample, SourceError>> + Send {
        (**self).sample()
    }

    fn kind(&self) -> SourceKind {
        (**self).kind()
    }
}

/// Either of two sources, chosen at run time (for instance the cluster when its address is
/// configured, else this machine).
impl<A, B> CpuSource for futures::future::Either<A, B>
where
    A: CpuSource + Send,
    B: CpuSource + Send,
{
    async fn sample(&mut self) -> Result<CpuSample, SourceError> {
        match self {
            futures::future::Either::Left(a) => a.sample().await,
            futures::future::Either::Right(b) => b.sample().await,
        }
    }

    fn kind(&self) -> SourceKind {
        match self {
            futures::future::Either::Left(a) => a.kind(),
            futures::future::Either::Right(b) => b.kind(),
        }
    }
}

impl CpuSample {
    /// A sample of a cluster, from a parsed `_nodes/stats/os` body: the busiest valid
    /// node's CPU; as failed, the nodes that did not answer (`_nodes.failed`) and those
    /// whose percent was [refused](NodeStats::refused).
    #[must_use]
    pub const fn cluster(stats: &NodeStats) -> CpuSample {
        let failed = match stats.failed {
            Some(failed) => failed,
            None => 0,
        };
        CpuSample {
            cpu: Some(stats.max_cpu),
            nodes: stats.nodes,
            failed: failed.saturating_add(stats.refused),
            endpoint: 0,
            search_pool: stats.search_pool,
            own_cores: None,
        }
    }
}
