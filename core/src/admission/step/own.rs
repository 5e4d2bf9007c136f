//! A machine's own load: a front end whose CPU is its own reads its requests in flight over
//! its cores as the pool ([`own_pool`]), with its own slack and relief
//! ([`Law::on_own_load`](crate::admission::Law)), saturated by the CPU its demand would take
//! ([`super::demand`]).

use crate::node_stats::SearchPool;

/// A machine's own load as a pool, for a front end whose CPU is its own over `cores`
/// CPUs: its requests in flight (now, and on average over the last second) run up to one a
/// CPU and the rest wait, as a node's search pool reports its tasks. The pool has the
/// threads OpenSearch would give those cores, so that [`SearchPool::cores`] gives them back.
pub(super) fn own_pool(cores: u32, in_flight: u32, mean_fine: u32) -> SearchPool {
    let cores = cores.max(1);
    let threads = cores.saturating_mul(3) / 2 + 1;
    let active = in_flight.min(cores);
    let mean_milli = u64::from(mean_fine) * 1000 / 256;
    let active_milli = mean_milli.min(u64::from(cores) * 1000);
    let milli = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    SearchPool::new(threads, active, in_flight - active)
        .with_means(milli(active_milli), milli(mean_milli - active_milli))
}
