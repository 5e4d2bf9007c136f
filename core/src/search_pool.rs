//! A node's search thread pool, and what its cumulative counters say over time: the
//! limit mode's signal of how loaded the busiest node is.

use core::cell::Cell;

/// A node's search thread pool, as `_nodes/stats` reports it: the searches (shard-level
/// tasks) it runs at once at most, runs now and has waiting, and, from the second poll on,
/// how many it ran and had waiting on average since the previous poll.
///
/// Build one with [`SearchPool::new`] (a test double of your own reports one with
/// [`crate::CpuSample::with_search_pool`]):
///
/// ```
/// use load_core::node_stats::SearchPool;
///
/// // Two threads, both busy, one task waiting; over the last poll interval 1.8 tasks ran
/// // and 0.4 waited on average.
/// let pool = SearchPool::new(2, 2, 1).with_means(1_800, 400);
/// assert_eq!(pool.cores(), 1);
/// assert_eq!(pool.load_per_core_milli(), Some(2_200));
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SearchPool {
    /// `thread_pool.search.threads`: the pool's threads.
    pub threads: u32,
    /// `thread_pool.search.active`: threads running a task now.
    pub active: u32,
    /// `thread_pool.search.queue`: tasks waiting for a thread now.
    pub queue: u32,
    /// The mean number of tasks running since the previous poll, in thousandths: the
    /// node's `indices.search.query_time_in_millis` and `fetch_time_in_millis` grew by that
    /// much per millisecond of its `timestamp`. `None` on a node's first poll and when it
    /// does not report them.
    pub mean_active_milli: Option<u32>,
    /// The mean number of tasks waiting since the previous poll, in thousandths:
    /// `thread_pool.search.total_wait_time_in_nanos` (OpenSearch 2.11 and later) grew by
    /// that much per nanosecond. `None` as for [`SearchPool::mean_active_milli`].
    pub mean_queue_milli: Option<u32>,
}

impl SearchPool {
    /// A pool of `threads` threads, `active` of them running a task, `queue` tasks waiting,
    /// and no means over time.
    #[must_use]
    pub const fn new(threads: u32, active: u32, queue: u32) -> SearchPool {
        SearchPool {
            threads,
            active,
            queue,
            mean_active_milli: None,
            mean_queue_milli: None,
        }
    }

    /// The same pool with the mean numbers of tasks running and waiting since the previous
    /// poll, in thousandths of a task.
    #[must_use]
    pub const fn with_means(self, active_milli: u32, queue_milli: u32) -> SearchPool {
        SearchPool {
            mean_active_milli: Some(active_milli),
            mean_queue_milli: Some(queue_milli),
            ..self
        }
    }

    /// The cores the pool runs on, as OpenSearch sizes it: `threads = ⌊1.5 × cores⌋ + 1`,
    /// so `cores = ⌈2 (threads − 1) / 3⌉`, at least one. A pool sized by hand
    /// (`thread_pool.search.size`) reads as the cores that size would fit.
    #[must_use]
    pub const fn cores(&self) -> u32 {
        let threads = if self.threads == 0 { 1 } else { self.threads };
        let cores = (2 * (threads as u64 - 1)).div_ceil(3);
        if cores == 0 { 1 } else { cores as u32 }
    }

    /// How loaded the node is: the tasks it ran and had waiting per core on average since
    /// the previous poll, in thousandths; `None` without the means.
    #[must_use]
    pub const fn load_per_core_milli(&self) -> Option<u32> {
        match (self.mean_active_milli, self.mean_queue_milli) {
            (Some(active), Some(queue)) => {
                let load = (active as u64 + queue as u64) / self.cores() as u64;
                Some(if load > u32::MAX as u64 {
                    u32::MAX
                } else {
                    load as u32
                })
            }
            _ => None,
        }
    }

    /// How loaded the pool is now: tasks running and waiting per thread (in 1/1000ths, so
    /// that pools compare exactly).
    #[must_use]
    pub(crate) const fn load_milli(&self) -> u64 {
        let threads = if self.threads == 0 { 1 } else { self.threads };
        (self.active as u64 + self.queue as u64) * 1000 / threads as u64
    }

    /// Whether this pool is more loaded than `other`: by the means per core when both have
    /// them, else by the tasks per thread now.
    #[must_use]
    pub const fn busier_than(&self, other: &SearchPool) -> bool {
        match (self.load_per_core_milli(), other.load_per_core_milli()) {
            (Some(this), Some(that)) => this > that,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => self.load_milli() > other.load_milli(),
        }
    }
}

/// A node's cumulative counters at one poll, as `_nodes/stats` reports them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PoolCounters {
    /// The node's `timestamp`, in milliseconds of its own clock.
    pub timestamp_ms: u64,
    /// `indices.search.query_time_in_millis` plus `fetch_time_in_millis`: the time its
    /// shard-level searches ran, in all.
    pub run_ms: u64,
    /// `thread_pool.search.total_wait_time_in_nanos`: the time its search tasks waited for
    /// a thread, in all.
    pub wait_ns: u64,
}

impl PoolCounters {
    /// Counters read at `timestamp_ms`.
    #[must_use]
    pub const fn new(timestamp_ms: u64, run_ms: u64, wait_ns: u64) -> PoolCounters {
        PoolCounters {
            timestamp_ms,
            run_ms,
            wait_ns,
        }
    }
}

/// One tracked node: a hash of its id and its counters at the previous poll.
#[derive(Clone, Copy, Debug, Default)]
struct Entry {
    /// FNV-1a of the node's id; 0 is a free slot.
    id: u64,
    counters: PoolCounters,
    /// The poll the node was last seen at, to give the slot of the longest unseen node to
    /// a new one when all are taken.
    seen: u32,
}

/// The nodes' counters at the previous poll, so that a poll can say how many tasks each
/// node ran and had waiting *on average* since: every front end of a fleet differentiates
/// the same counters, so they read nearly the same figure, where a snapshot of the queue
/// differs with the instant each one polls. Fixed capacity, no allocation: nodes beyond
/// `N` are reported without means.
///
/// ```
/// use load_core::node_stats::{PoolCounters, PoolTracker, SearchPool};
///
/// let tracker: PoolTracker = PoolTracker::new();
/// let now = SearchPool::new(2, 2, 0);
/// assert_eq!(tracker.observe(b"node-a", now, PoolCounters::new(1_000, 5_000, 0)), now);
/// // A second later: 1,800 ms more run time and 0.4 s more waiting.
/// let pool = tracker.observe(b"node-a", now, PoolCounters::new(2_000, 6_800, 400_000_000));
/// assert_eq!((pool.mean_active_milli, pool.mean_queue_milli), (Some(1_800), Some(400)));
/// ```
#[derive(Debug)]
pub struct PoolTracker<const N: usize = 64> {
    entries: [Cell<Entry>; N],
    polls: Cell<u32>,
}

impl<const N: usize> Default for PoolTracker<N> {
    fn default() -> Self {
        PoolTracker::new()
    }
}

impl<const N: usize> PoolTracker<N> {
    /// A tracker that has seen no node.
    #[must_use]
    pub const fn new() -> PoolTracker<N> {
        PoolTracker {
            entries: [const {
                Cell::new(Entry {
                    id: 0,
                    counters: PoolCounters::new(0, 0, 0),
                    seen: 0,
                })
            }; N],
            polls: Cell::new(0),
        }
    }

    /// Starts a poll: nodes observed from now on are this poll's.
    pub fn start_poll(&self) {
        self.polls.set(self.polls.get().wrapping_add(1));
    }

    /// The pool of the node `id` (its id as the body spells it) with the means since the
    /// node's counters were last observed; the pool as it is on the node's first poll,
    /// after its counters went back (a restart) or its clock did not move on, and when
    /// every slot is taken by a node seen this poll.
    pub fn observe(&self, id: &[u8], pool: SearchPool, counters: PoolCounters) -> SearchPool {
        let id = fnv1a(id);
        let poll = self.polls.get();
        // The node's slot; else a free one; else the one unseen the longest (not this poll).
        let mut spare: Option<(&Cell<Entry>, u32)> = None;
        for slot in &self.entries {
            let entry = slot.get();
            if entry.id == id {
                slot.set(Entry {
                    id,
                    counters,
                    seen: poll,
                });
                return with_means(pool, entry.counters, counters);
            }
            let age = if entry.id == 0 {
                u32::MAX
            } else {
                poll.wrapping_sub(entry.seen)
            };
            if age > 0 && spare.is_none_or(|(_, oldest)| age > oldest) {
                spare = Some((slot, age));
            }
        }
        if let Some((slot, _)) = spare {
            slot.set(Entry {
                id,
                counters,
                seen: poll,
            });
        }
        pool
    }
}

/// `pool` with the means from `before` to `after`, when the node's clock moved on and no
/// counter went back.
fn with_means(pool: SearchPool, before: PoolCounters, after: PoolCounters) -> SearchPool {
    let elapsed_ms = after.timestamp_ms.checked_sub(before.timestamp_ms);
    let run_ms = after.run_ms.checked_sub(before.run_ms);
    let wait_ns = after.wait_ns.checked_sub(before.wait_ns);
    match (elapsed_ms, run_ms, wait_ns) {
        (Some(elapsed_ms), Some(run_ms), Some(wait_ns)) if elapsed_ms > 0 => {
            let milli = |per_ms: u128| u32::try_from(per_ms).unwrap_or(u32::MAX);
            let elapsed = u128::from(elapsed_ms);
            pool.with_means(
                milli(u128::from(run_ms) * 1000 / elapsed),
                // ns per ms of wall time is thousandths of a task.
                milli(u128::from(wait_ns) / elapsed / 1000),
            )
        }
        _ => pool,
    }
}

/// FNV-1a, 64 bits: a node id's key (never 0, the free slot's).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    if hash == 0 { 1 } else { hash }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cores_follow_opensearchs_pool_size() {
        // threads = floor(1.5 cores) + 1
        for cores in 1..=64u32 {
            let threads = cores * 3 / 2 + 1;
            assert_eq!(SearchPool::new(threads, 0, 0).cores(), cores, "{threads}");
        }
        assert_eq!(SearchPool::new(0, 0, 0).cores(), 1);
        assert_eq!(SearchPool::new(1, 0, 0).cores(), 1);
    }

    #[test]
    fn means_need_a_clock_that_moved_and_counters_that_did_not_go_back() {
        let tracker: PoolTracker<4> = PoolTracker::new();
        let pool = SearchPool::new(4, 1, 0);
        tracker.start_poll();
        assert_eq!(
            tracker.observe(b"a", pool, PoolCounters::new(100, 10, 10)),
            pool
        );
        tracker.start_poll();
        assert_eq!(
            tracker.observe(b"a", pool, PoolCounters::new(100, 20, 20)),
            pool,
            "same time"
        );
        tracker.start_poll();
        assert_eq!(
            tracker.observe(b"a", pool, PoolCounters::new(200, 5, 30)),
            pool,
            "a restart"
        );
        tracker.start_poll();
        let later = tracker.observe(b"a", pool, PoolCounters::new(700, 2_505, 1_000_000_030));
        assert_eq!(later.mean_active_milli, Some(5_000));
        assert_eq!(later.mean_queue_milli, Some(2_000));
        // Four threads are two cores (`⌊1.5 × 2⌋ + 1 = 4`).
        assert_eq!(later.load_per_core_milli(), Some(7_000 / 2));
    }

    #[test]
    fn nodes_beyond_the_capacity_get_no_means_and_the_longest_unseen_slot_is_reused() {
        let tracker: PoolTracker<2> = PoolTracker::new();
        let pool = SearchPool::new(2, 0, 0);
        let at = |t| PoolCounters::new(t, t, 0);
        tracker.start_poll();
        for id in [b"a", b"b", b"c"] {
            tracker.observe(id, pool, at(1_000));
        }
        tracker.start_poll();
        assert!(
            tracker
                .observe(b"a", pool, at(2_000))
                .mean_active_milli
                .is_some()
        );
        assert!(
            tracker
                .observe(b"b", pool, at(2_000))
                .mean_active_milli
                .is_some()
        );
        assert!(
            tracker
                .observe(b"c", pool, at(2_000))
                .mean_active_milli
                .is_none(),
            "no slot"
        );
        // Next poll, "b" is gone: "c" takes its slot.
        tracker.start_poll();
        assert!(
            tracker
                .observe(b"a", pool, at(3_000))
                .mean_active_milli
                .is_some()
        );
        assert!(
            tracker
                .observe(b"c", pool, at(3_000))
                .mean_active_milli
                .is_none()
        );
        tracker.start_poll();
        assert!(
            tracker
                .observe(b"c", pool, at(4_000))
                .mean_active_milli
                .is_some()
        );
    }

    #[test]
    fn the_busier_pool_is_the_one_with_more_load_per_core() {
        let small = SearchPool::new(2, 2, 0).with_means(1_000, 500); // 1.5 per core
        let big = SearchPool::new(25, 25, 0).with_means(20_000, 0); // 1.25 per core
        assert!(small.busier_than(&big));
        assert!(!big.busier_than(&small));
        assert!(big.busier_than(&SearchPool::new(2, 2, 9)), "means first");
        assert!(SearchPool::new(2, 2, 1).busier_than(&SearchPool::new(2, 2, 0)));
    }
}
