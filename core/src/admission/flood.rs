//! The flood bound: while a class is disarmed nothing bounds a request, but a load whose
//! in-flight count keeps growing (a flood the cluster's CPU, reported a second late, has not
//! seen yet) is bounded until the poll can arm the class. A burst is not a flood: it
//! arrives at once and then drains.

use core::time::Duration;

use super::cap::{self, MIN_FINE, ceiling};
use super::window::BUCKET_MS;
use crate::Instant;
use crate::atomic::{AtomicU32, Ordering};

/// Buckets in a row the in-flight count must grow, each time by more than noise, before a
/// class below saturation is bounded as a flood.
pub(crate) const FLOOD_BUCKETS: u32 = 2;
/// The least time a flood bound holds after the flood was last seen growing, in buckets:
/// long enough for the cluster's CPU, reported a second late and polled once a second, to
/// arm the class. A longer poll interval holds it for two intervals and a second.
pub(crate) const FLOOD_HOLD: u32 = 30;
/// How many times the least latency of the window the last bucket's mean latency must be
/// for a growing in-flight count to be a flood even below the ceiling of the cap: the
/// cluster queues what this front end, one of a fleet, sends.
pub(crate) const FLOOD_STRETCH: u64 = 8;

/// How many buckets the flood bound holds for with polls every `interval`: two intervals
/// and a second (the CPU is reported a second late, and the poll after it may be a whole
/// interval away), at least [`FLOOD_HOLD`]; at most half the bucket numbers, which wrap.
const fn flood_hold(interval: Duration) -> u32 {
    let ms = interval.as_millis().saturating_mul(2).saturating_add(1_000);
    let buckets = ms / BUCKET_MS as u128;
    if buckets > (u32::MAX / 2) as u128 {
        u32::MAX / 2
    } else if buckets < FLOOD_HOLD as u128 {
        FLOOD_HOLD
    } else {
        buckets as u32
    }
}

/// What a bucket tells the flood bound.
pub(crate) struct Seen {
    /// The bucket's number ([`super::window::Window::epoch`]).
    pub(crate) epoch: u32,
    /// Requests in flight at its first completion.
    pub(crate) held: u32,
    /// What a flood is measured against, in whole requests: what the front end held at
    /// the last poll that left its class unbounded ([`super::law::FloodBase::Quiet`]), or
    /// the cap of now.
    pub(crate) cap: u32,
    /// Whether the class is capped (armed): then it is bounded already.
    pub(crate) capped: bool,
}

/// Whether a flood is bounded, since when, and at what.
pub(crate) struct Flood {
    /// The in-flight count when the last bucket opened, and for how many buckets in a row
    /// it has grown.
    last_inflight: AtomicU32,
    growing: AtomicU32,
    /// The bucket the bound holds until (0: never engaged), whether it holds, the in-flight
    /// count it last engaged at, and how many buckets it holds for.
    until: AtomicU32,
    holding: AtomicU32,
    engaged_at: AtomicU32,
    hold: AtomicU32,
    /// The bound, in 1/256ths of a request, fixed when it engages.
    fine: AtomicU32,
}

impl Flood {
    pub(crate) const fn new(interval: Duration) -> Flood {
        Flood {
            last_inflight: AtomicU32::new(0),
            growing: AtomicU32::new(0),
            until: AtomicU32::new(0),
            holding: AtomicU32::new(0),
            engaged_at: AtomicU32::new(0),
            hold: AtomicU32::new(flood_hold(interval)),
            fine: AtomicU32::new(0),
        }
    }

    /// Whether the bound holds.
    #[inline]
    pub(crate) fn holding(&self) -> bool {
        self.holding.load(Ordering::Relaxed) != 0
    }

    /// The in-flight count the bound last engaged at (0: never).
    pub(crate) fn engaged_at(&self) -> u32 {
        self.engaged_at.load(Ordering::Relaxed)
    }

    /// The bound at `now`, in whole requests (a fraction is one more that share of the
    /// time): twice what the front end held before the flood (the backlog drains down to it
    /// first, since nothing is admitted above it).
    #[inline]
    pub(crate) fn limit(&self, now: Option<Instant>) -> u32 {
        cap::at(self.fine.load(Ordering::Relaxed).max(MIN_FINE), now)
    }

    /// A new poll interval: the bound holds for two of them and a second.
    pub(crate) fn set_interval(&self, interval: Duration) {
        self.hold.store(flood_hold(interval), Ordering::Relaxed);
    }

    /// Releases the bound (the poll found the busiest node idle: no flood).
    pub(crate) fn release(&self) {
        self.until.store(0, Ordering::Relaxed);
        self.holding.store(0, Ordering::Relaxed);
    }

    /// Once a bucket: a flood, while not capped, is an in-flight count that grew at each
    /// of the last [`FLOOD_BUCKETS`] buckets by more than noise (2 plus a quarter of what
    /// it is measured against, [`Seen::cap`]), and is above the ceiling of that or finds
    /// the cluster `queueing`. It engages the bound at `base` (what the front end held
    /// before it, in 256ths) doubled, or extends it; the bound holds for its hold after the
    /// flood was last seen growing.
    pub(crate) fn observe(
        &self,
        seen: &Seen,
        queueing: impl FnOnce() -> bool,
        base: impl FnOnce() -> u32,
    ) {
        let Seen {
            epoch,
            held,
            cap,
            capped,
        } = *seen;
        let before = self.last_inflight.swap(held, Ordering::Relaxed);
        let growing = if held >= before.saturating_add(2 + cap / 4) {
            self.growing
                .fetch_add(1, Ordering::Relaxed)
                .saturating_add(1)
        } else {
            self.growing.store(0, Ordering::Relaxed);
            0
        };
        if !capped && growing >= FLOOD_BUCKETS && (held > ceiling(cap) || queueing()) {
            if !self.holding() {
                self.engaged_at.store(held, Ordering::Relaxed);
                self.fine
                    .store(base().saturating_mul(2).max(MIN_FINE), Ordering::Relaxed);
            }
            let hold = self.hold.load(Ordering::Relaxed);
            self.until
                .store(epoch.wrapping_add(hold), Ordering::Relaxed);
        }
        let until = self.until.load(Ordering::Relaxed);
        let holding = until != 0 && (until.wrapping_sub(epoch) as i32) > 0;
        self.holding.store(u32::from(holding), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flood_bound_holds_two_intervals_and_a_second() {
        assert_eq!(flood_hold(Duration::from_secs(1)), FLOOD_HOLD);
        assert_eq!(flood_hold(Duration::from_secs(10)), 210);
        assert_eq!(flood_hold(Duration::from_secs(86_400)), 1_728_010);
        assert_eq!(flood_hold(Duration::MAX), u32::MAX / 2);
        assert_eq!(flood_hold(Duration::ZERO), FLOOD_HOLD);
    }
}
