//! The in-flight limit of `load.control.admission=limit`: a count of the front end's own
//! admitted requests, a cap learnt from their completions, and, while the cluster is
//! saturated, the law that holds its busiest node at the operating point.

use core::cell::Cell;
use core::time::Duration;

use embassy_sync::blocking_mutex::CriticalSectionMutex;

use super::bound::Bound;
use super::cap;
use super::count::Counts;
use super::flood::Flood;
use super::law::Law;
use super::step::PollState;
use super::window::Window;
use crate::Instant;
use crate::atomic::{AtomicU32, Ordering};

/// The least time between two quick looks ([`Law::quick_looks`]), in milliseconds: a
/// quarter of a bucket.
const QUICK_MS: u32 = (super::window::BUCKET_MS / 4) as u32;

/// Whether `now` is in a probe: the first 200 ms of every 10 seconds, while bounded
/// without the cluster's search pool, the limit is half the cap, so that a queue the cap
/// let build drains and the window sees the latency without it again (BBR's ProbeRTT, for
/// a cap: the latency it assumes is the least of the last 10 s, and a queue kept standing
/// for 10 s would become it).
#[inline]
fn probing(now: Instant) -> bool {
    now.as_millis() % 10_000 < 200
}

/// The in-flight count, the cap and the window it is learnt from.
pub(crate) struct Limiter {
    counts: Counts,
    /// The cap in 1/256ths of a request: the law adjusts it by fractions, and a fraction is
    /// one more request that share of the time.
    fine: AtomicU32,
    /// The cap before anything is learnt (and, without the cluster's pool, its least value).
    initial: AtomicU32,
    /// Whether the cap comes from completions (else it is the initial one).
    learned: AtomicU32,
    /// The bucket the cap was last learnt in (0: never): a cap older than the window is
    /// not used, the initial one is (without the pool).
    learned_at: AtomicU32,
    flood: Flood,
    /// Whether the fleet law holds, as the last poll left it ([`PollState::fleet`]): the
    /// request path reads it.
    fleet: AtomicU32,
    /// The CPUs of a machine whose CPU is the front end's own, as the last poll said (0:
    /// none, or a node's pool): the flood bound measures demand against what they serve.
    own_cores: AtomicU32,
    /// The busiest node's cores, as the last poll with its search pool said (0: none yet):
    /// the flood bound holds at most its operating point ([`Law::flood_point`]).
    node_cores: AtomicU32,
    /// What only the poll touches, under the poll's lock: requests never take it.
    poll: CriticalSectionMutex<Cell<PollState>>,
    window: Window,
    /// The recent peak of the in-flight count, and the mean of the last second (in
    /// 256ths), as the last bucket found them.
    peak: AtomicU32,
    mean: AtomicU32,
    /// What the front end held at the last poll that left the class unbounded, in 256ths:
    /// the cap the window learnt, the mean in flight or the recent peak then, whichever is
    /// more (the initial cap before any poll). A surge cannot move it before a poll: the flood bound is
    /// measured against it.
    quiet: AtomicU32,
    /// The bucket the flood bound last looked at the in-flight count in, or with quick
    /// looks the millisecond (0: never; [`Limiter::watch`]).
    watched: AtomicU32,
    /// The bucket of the flood bound's last look (0: never): a look in a new one measures
    /// the bucket's growth.
    looked: AtomicU32,
    law: Law,
}

impl Limiter {
    pub(crate) const fn new(initial: u32, interval: Duration, law: Law) -> Limiter {
        let initial = if initial == 0 { 1 } else { initial };
        Limiter {
            counts: Counts::new(),
            fine: AtomicU32::new(initial.saturating_mul(256)),
            initial: AtomicU32::new(initial),
            learned: AtomicU32::new(0),
            learned_at: AtomicU32::new(0),
            flood: Flood::new(interval),
            fleet: AtomicU32::new(0),
            own_cores: AtomicU32::new(0),
            node_cores: AtomicU32::new(0),
            poll: CriticalSectionMutex::new(Cell::new(PollState::NEW)),
            window: Window::new(),
            peak: AtomicU32::new(0),
            mean: AtomicU32::new(0),
            quiet: AtomicU32::new(initial.saturating_mul(256)),
            watched: AtomicU32::new(0),
            looked: AtomicU32::new(0),
            law,
        }
    }

    /// Whether the fleet law holds: a poll reported the busiest node's search pool within
    /// the grace.
    #[inline]
    fn fleet(&self) -> bool {
        self.fleet.load(Ordering::Relaxed) != 0
    }

    /// Whether the busiest node's CPU says the cluster is saturated.
    #[inline]
    pub(crate) fn saturated(&self) -> bool {
        self.poll.lock(|state| state.get().saturated)
    }

    /// What bounds a new request at `now` (`None`: no clock, no probe and no fraction)
    /// while its class is `armed` or not. Armed with the cluster saturated, or a flood
    /// bounded: the cap (a fraction of a request is one more that share of the time;
    /// without the cluster's pool, half the cap during a probe, never below the initial
    /// cap, and the initial one after a window without completions). Else nothing.
    #[inline]
    pub(crate) fn bound(&self, armed: bool, now: Option<Instant>) -> Bound {
        let flooding = self.flooding();
        if !armed && !flooding {
            return Bound::None;
        }
        let fleet = self.fleet();
        let mut fine = self.fine.load(Ordering::Relaxed);
        if !fleet
            && let Some(now) = now
            && self.stale(now)
        {
            fine = self.initial.load(Ordering::Relaxed).saturating_mul(256);
        }
        let mut cap = cap::at(fine, now);
        if !fleet && now.is_some_and(probing) {
            cap = (cap / 2).max(self.initial.load(Ordering::Relaxed));
        }
        if armed {
            Bound::Cap(cap)
        } else {
            Bound::Flood(self.flood.limit(now))
        }
    }

    /// The in-flight count the flood bound last engaged at (0: never).
    pub(crate) fn flood_engaged_at(&self) -> u32 {
        self.flood.engaged_at()
    }

    /// Whether the flood bound is engaged.
    #[inline]
    pub(crate) fn flooding(&self) -> bool {
        self.flood.holding()
    }

    /// Whether the cap was learnt more than a window before `now` (no completion since):
    /// it says nothing about the cluster now, and the initial one applies until one comes.
    #[inline]
    fn stale(&self, now: Instant) -> bool {
        let at = self.learned_at.load(Ordering::Relaxed);
        at != 0 && Window::epoch(now).wrapping_sub(at) as usize > super::window::BUCKETS
    }

    /// Counts a request in if fewer than `limit` are in flight; whether it was.
    #[inline]
    pub(crate) fn try_enter(&self, limit: u32) -> bool {
        self.counts.try_enter(limit)
    }

    /// Counts a request refused at the limit: the demand the law weighs its growth by.
    #[inline]
    pub(crate) fn refuse(&self) {
        self.counts.refuse();
    }

    /// Counts a request in, whatever the limit (monitor mode).
    pub(crate) fn enter(&self) {
        self.counts.enter();
    }

    /// Counts a request out that completed at `now`, admitted at `started` (`armed`: its
    /// class is armed now); the first completion of a new bucket recomputes the cap.
    pub(crate) fn leave(&self, started: Instant, now: Instant, armed: bool) {
        if !self.counts.leave() {
            return;
        }
        self.counts.complete();
        let latency_us = now.saturating_duration_since(started).as_micros();
        let latency_us = u64::try_from(latency_us).unwrap_or(u64::MAX);
        let requests = self.watches_requests();
        let quick = self.quick();
        if self.window.record(now, latency_us) {
            self.learn(now, armed);
            if !requests && !quick {
                // The bucket's first completion, which the window has just told: no other
                // atomic to read on a permit's drop.
                self.look(now, Window::epoch(now), armed, false);
                return;
            }
        }
        if requests || quick {
            self.watch(now, armed, false);
        }
    }

    /// Whether the flood bound also looks a quarter of a bucket apart ([`Law::quick_looks`]):
    /// on the front end of a cluster, not on a machine whose CPU is its own.
    #[inline]
    fn quick(&self) -> bool {
        self.law.quick_looks != 0 && self.own_cores.load(Ordering::Relaxed) == 0
    }

    /// Whether the flood bound looks at requests as they come, not only at completions:
    /// with `Watch::Requests`, and on a machine whose
    /// CPU is the front end's own, whose cores share themselves among everything in
    /// flight, so that a surge stalls the completions a look would wait for (the local
    /// loop's step found a look 0.2 s into a surge with 122 requests in flight on one
    /// core).
    #[inline]
    fn watches_requests(&self) -> bool {
        self.law.watch.requests() || self.own_cores.load(Ordering::Relaxed) != 0
    }

    /// A request at `now`, admitted or not, while its class is `armed` or not: where the
    /// flood bound watches requests ([`Limiter::watches_requests`]), it looks at the
    /// in-flight count if this is the bucket's first (two loads of an atomic, when it is
    /// not).
    #[inline]
    pub(crate) fn arrive(&self, now: Instant, armed: bool) {
        if self.watches_requests() {
            self.watch(now, armed, true);
        }
    }

    /// Once a bucket, at its first request or completion, or with quick looks
    /// ([`Limiter::quick`]) at the first a quarter of one after the last look: the flood
    /// bound ([`Flood::observe`]) looks at the in-flight count.
    #[inline]
    fn watch(&self, now: Instant, armed: bool, arrival: bool) {
        let quick = self.quick();
        // Quick looks at least a quarter of a bucket apart, in milliseconds of the clock
        // (odd, never 0), not a quarter's first: two looks a millisecond apart across a
        // quarter's edge would each see half of a burst sent at once grow the count.
        let tick = if quick {
            (now.as_millis() as u32) | 1
        } else {
            Window::epoch(now)
        };
        let watched = self.watched.load(Ordering::Relaxed);
        let due = if quick {
            watched == 0 || tick.wrapping_sub(watched) >= QUICK_MS
        } else {
            watched != tick
        };
        if due
            && self
                .watched
                .compare_exchange(watched, tick, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            self.look(now, Window::epoch(now), armed, arrival);
        }
    }

    /// Counts a request out without recording it (its latency is not the cluster's: the
    /// client went away, or it was answered without the cluster); whether one was in
    /// flight.
    pub(crate) fn abandon(&self) -> bool {
        self.counts.abandon()
    }

    pub(crate) fn in_flight(&self) -> u32 {
        self.counts.in_flight()
    }

    /// The cap in whole requests (at least one).
    pub(crate) fn cap(&self) -> u32 {
        (self.fine.load(Ordering::Relaxed) >> 8).max(1)
    }

    /// The cap in hundredths of a request.
    pub(crate) fn cap_hundredths(&self) -> u32 {
        let fine = u64::from(self.fine.load(Ordering::Relaxed));
        u32::try_from(fine * 100 / 256).unwrap_or(u32::MAX)
    }

    pub(crate) fn learned(&self) -> bool {
        self.learned.load(Ordering::Relaxed) != 0
    }

    pub(crate) fn completed(&self) -> u32 {
        self.counts.completed()
    }
}

mod learn;
mod look;
mod poll;

#[cfg(test)]
#[path = "limit_tests.rs"]
mod tests;
