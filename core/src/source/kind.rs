//! What a source reads, named for the people who read a dashboard or a log.

use core::fmt;

/// What a [`CpuSource`](super::CpuSource) reads: the operator's page names the request
/// control's source by it (the busiest node of a cluster, this machine, a fixed value), so
/// that a page fed by a stand-in does not read as a cluster or a machine.
///
/// A source says what it reads with [`CpuSource::kind`](super::CpuSource::kind); a source
/// that does not is [`SourceKind::Unnamed`].
///
/// ```
/// use load_core::{CpuPercent, CpuSource, FixedSource, source::SourceKind};
///
/// let fixed = FixedSource::new(CpuPercent::new(42));
/// assert_eq!((&fixed).kind(), SourceKind::Fixed);
/// assert_eq!(SourceKind::Cluster.to_string(), "the cluster's busiest node");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SourceKind {
    /// A cluster's nodes, of which the busiest node's CPU is the sample (OpenSearch's node
    /// stats).
    Cluster,
    /// This machine's CPU, or its container's (the cgroup's limit).
    Machine,
    /// A value the program fixes or scripts: a test double or a stand-in.
    Fixed,
    /// A source that does not say what it reads.
    Unnamed,
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SourceKind::Cluster => "the cluster's busiest node",
            SourceKind::Machine => "this machine",
            SourceKind::Fixed => "a fixed value",
            SourceKind::Unnamed => "the program's own source",
        })
    }
}
