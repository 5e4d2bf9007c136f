//! The in-flight limit of `load.control.admission=limit`: a count of the front end's own
//! admitted requests, and a cap learnt from their completions.

use super::window::Window;
use crate::Instant;
use crate::atomic::{AtomicU32, Ordering};

/// While a class is disarmed, the in-flight count may reach this many times the cap (plus
/// three standard deviations of a Poisson count of that mean, so that light load's bursts
/// fit): room for a load that grows, and a bound on a flood (a front end that admits
/// without bound when the cluster's CPU dips under the threshold floods it again).
pub(crate) const CEILING_FACTOR: u32 = 2;

/// Whether `now` is in a probe: the first 200 ms of every 10 seconds, while armed, the
/// limit is half the cap, so that a queue the cap let build drains and the window sees the
/// latency without it again (BBR's ProbeRTT, for a cap: the latency it assumes is the
/// least of the last 10 s, and a queue kept standing for 10 s would become it).
#[inline]
fn probing(now: Instant) -> bool {
    now.as_millis() % 10_000 < 200
}

/// The disarmed ceiling for `cap`: `2 cap + ceil(3 sqrt(2 cap))`.
#[inline]
pub(crate) const fn ceiling(cap: u32) -> u32 {
    let twice = cap.saturating_mul(CEILING_FACTOR);
    // 3 sqrt(x) = sqrt(9 x), rounded up.
    let nine = twice.saturating_mul(9);
    let root = nine.isqrt();
    let slack = if root * root < nine { root + 1 } else { root };
    twice.saturating_add(slack)
}

/// The in-flight count, the cap and the window it is learnt from.
pub(crate) struct Limiter {
    inflight: AtomicU32,
    /// The cap: what the window says, never below `floor`.
    cap: AtomicU32,
    /// The cap before anything is learnt, and its least value after.
    floor: AtomicU32,
    /// Whether the cap comes from completions (else it is the floor).
    learned: AtomicU32,
    /// Completions in all (wrapping).
    completed: AtomicU32,
    /// The bucket the cap was last learnt in (0: never): a cap older than the window is
    /// not used, the floor is.
    learned_at: AtomicU32,
    window: Window,
}

impl Limiter {
    pub(crate) const fn new(initial: u32) -> Limiter {
        let initial = if initial == 0 { 1 } else { initial };
        Limiter {
            inflight: AtomicU32::new(0),
            cap: AtomicU32::new(initial),
            floor: AtomicU32::new(initial),
            learned: AtomicU32::new(0),
            completed: AtomicU32::new(0),
            learned_at: AtomicU32::new(0),
            window: Window::new(),
        }
    }

    /// The in-flight count a new request may find at `now` (`None`: outside any probe):
    /// the cap while its class is armed (half of it during a probe, never below the
    /// floor), the ceiling while disarmed.
    #[inline]
    pub(crate) fn limit(&self, armed: bool, now: Option<Instant>) -> u32 {
        let mut cap = self.cap.load(Ordering::Relaxed);
        if let Some(now) = now
            && self.stale(now)
        {
            cap = self.floor.load(Ordering::Relaxed);
        }
        if !armed {
            ceiling(cap)
        } else if now.is_some_and(probing) {
            (cap / 2).max(self.floor.load(Ordering::Relaxed))
        } else {
            cap
        }
    }

    /// Whether the cap was learnt more than a window before `now` (no completion since):
    /// it says nothing about the cluster now, and the floor applies until one comes.
    #[inline]
    fn stale(&self, now: Instant) -> bool {
        let at = self.learned_at.load(Ordering::Relaxed);
        at != 0 && Window::epoch(now).wrapping_sub(at) as usize > super::window::BUCKETS
    }

    /// Counts a request in if fewer than `limit` are in flight; whether it was. At the limit
    /// a load decides, so that a rejection writes nothing here.
    #[inline]
    pub(crate) fn try_enter(&self, limit: u32) -> bool {
        if self.inflight.load(Ordering::Relaxed) >= limit {
            return false;
        }
        let before = self.inflight.fetch_add(1, Ordering::Relaxed);
        if before < limit {
            return true;
        }
        self.inflight.fetch_sub(1, Ordering::Relaxed);
        false
    }

    /// Counts a request in, whatever the limit (monitor mode).
    pub(crate) fn enter(&self) {
        self.inflight.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a request out that completed at `now`, admitted at `started`; the first
    /// completion of a new bucket recomputes the cap.
    pub(crate) fn leave(&self, started: Instant, now: Instant) {
        if !self.abandon() {
            return;
        }
        self.completed.fetch_add(1, Ordering::Relaxed);
        let latency_us = now.saturating_duration_since(started).as_micros();
        let latency_us = u64::try_from(latency_us).unwrap_or(u64::MAX);
        if self.window.record(now, latency_us) {
            self.learn(now);
        }
    }

    /// Counts a request out without recording it (its latency is not the cluster's: the
    /// client went away, or it was answered without the cluster); whether one was in
    /// flight. With nothing in flight (a ticket from another control) the count stays at
    /// zero instead of wrapping to `u32::MAX`, which would reject everything from then on.
    pub(crate) fn abandon(&self) -> bool {
        self.inflight
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok()
    }

    /// Sets the cap from the window's estimate, never below the floor, and never above the
    /// ceiling of what is in flight or allowed now: however a bucket's completions line up
    /// (requests held for a minute, then completed together), the cap grows by at most
    /// the ceiling's factor a bucket, as fast as real load needs, not to what no load ever
    /// held. An empty window (no completion for a second) starts over from the floor, so
    /// that a step in load after a quiet spell meets the cold start's bound.
    fn learn(&self, now: Instant) {
        let floor = self.floor.load(Ordering::Relaxed);
        match self.window.estimate(now) {
            Some(estimate) => {
                let held = self.inflight.load(Ordering::Relaxed);
                let bound = ceiling(held.max(self.cap.load(Ordering::Relaxed)));
                let cap = estimate.in_flight().min(bound).max(floor);
                self.cap.store(cap, Ordering::Relaxed);
                self.learned.store(1, Ordering::Relaxed);
            }
            None => {
                self.cap.store(floor, Ordering::Relaxed);
                self.learned.store(0, Ordering::Relaxed);
            }
        }
        self.learned_at.store(Window::epoch(now), Ordering::Relaxed);
    }

    /// A new floor (and the cap, if nothing was learnt yet).
    pub(crate) fn set_floor(&self, floor: u32) {
        let floor = floor.max(1);
        self.floor.store(floor, Ordering::Relaxed);
        if self.learned.load(Ordering::Relaxed) == 0 {
            self.cap.store(floor, Ordering::Relaxed);
        } else {
            let _ = self
                .cap
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |cap| {
                    Some(cap.max(floor))
                });
        }
    }

    pub(crate) fn in_flight(&self) -> u32 {
        self.inflight.load(Ordering::Relaxed)
    }

    pub(crate) fn cap(&self) -> u32 {
        self.cap.load(Ordering::Relaxed)
    }

    pub(crate) fn learned(&self) -> bool {
        self.learned.load(Ordering::Relaxed) != 0
    }

    pub(crate) fn completed(&self) -> u32 {
        self.completed.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ceiling_is_twice_the_cap_and_three_deviations() {
        for (cap, ceiling_) in [
            (0, 0),
            (1, 7),
            (2, 10),
            (4, 17),
            (8, 28),
            (50, 130),
            (u32::MAX, u32::MAX),
        ] {
            assert_eq!(ceiling(cap), ceiling_, "{cap}");
        }
    }

    fn ms(n: u64) -> Instant {
        Instant::from_millis(n)
    }

    #[test]
    fn the_cap_starts_at_the_floor_and_follows_completions() {
        let limiter = Limiter::new(4);
        let (armed, disarmed) = (limiter.limit(true, None), limiter.limit(false, None));
        assert_eq!((limiter.cap(), armed, disarmed), (4, 4, 17));
        for _ in 0..4 {
            assert!(limiter.try_enter(4));
        }
        assert!(!limiter.try_enter(4), "at the cap");
        assert_eq!(limiter.in_flight(), 4);
        // 40 completions of 100 ms in one bucket: 400/s x 0.1 s = 40 in flight.
        for _ in 0..40 {
            limiter.enter();
        }
        for _ in 0..44 {
            limiter.leave(ms(0), ms(100));
        }
        // The next bucket's first completion learns from it, growing by at most the
        // ceiling of the cap (4) at a time: 17, then 44 a bucket later.
        limiter.enter();
        limiter.leave(ms(110), ms(210));
        assert!(limiter.learned());
        assert_eq!(limiter.cap(), 17);
        limiter.enter();
        limiter.leave(ms(200), ms(300));
        assert_eq!(limiter.cap(), 44);
        assert_eq!(limiter.in_flight(), 0);
        assert_eq!(limiter.completed(), 46);
        assert_eq!(limiter.limit(true, Some(ms(350))), 44);
        // No completion for more than a window: the floor again, until one comes.
        assert_eq!(limiter.limit(true, Some(ms(1_400))), 4);
        assert_eq!(limiter.limit(false, Some(ms(1_400))), 17);
        // Armed, the first 200 ms of every 10 s halve the cap (a probe).
        for _ in 0..44 {
            limiter.enter();
        }
        for _ in 0..44 {
            limiter.leave(ms(9_800), ms(9_900));
        }
        // (After the quiet spell the window started over from the floor: 4, 17, 44.)
        limiter.enter();
        limiter.leave(ms(9_950), ms(10_050));
        assert_eq!(limiter.cap(), 17);
        limiter.enter();
        limiter.leave(ms(10_000), ms(10_100));
        assert_eq!(limiter.cap(), 44);
        assert_eq!(limiter.limit(true, Some(ms(10_110))), 22);
        assert_eq!(limiter.limit(true, Some(ms(10_250))), 44);
        limiter.set_floor(100);
        assert_eq!(limiter.cap(), 100, "never below the floor");
    }
}
