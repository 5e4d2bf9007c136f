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
            window: Window::new(),
        }
    }

    /// The in-flight count a new request may find at `now` (`None`: outside any probe):
    /// the cap while its class is armed (half of it during a probe, never below the
    /// floor), the ceiling while disarmed.
    #[inline]
    pub(crate) fn limit(&self, armed: bool, now: Option<Instant>) -> u32 {
        let cap = self.cap.load(Ordering::Relaxed);
        if !armed {
            ceiling(cap)
        } else if now.is_some_and(probing) {
            (cap / 2).max(self.floor.load(Ordering::Relaxed))
        } else {
            cap
        }
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
        if self.inflight.fetch_sub(1, Ordering::Relaxed) == 0 {
            // Nothing was in flight: a ticket from another control. Undo the wrap, which
            // would otherwise reject everything from now on (at worst one request that
            // races with it sees the wrapped count and is turned away).
            self.inflight.fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.completed.fetch_add(1, Ordering::Relaxed);
        let latency_us = now.saturating_duration_since(started).as_micros();
        let latency_us = u64::try_from(latency_us).unwrap_or(u64::MAX);
        if self.window.record(now, latency_us) {
            self.learn(now);
        }
    }

    /// Sets the cap from the window's estimate, never below the floor.
    fn learn(&self, now: Instant) {
        if let Some(estimate) = self.window.estimate(now) {
            let floor = self.floor.load(Ordering::Relaxed);
            self.cap
                .store(estimate.in_flight().max(floor), Ordering::Relaxed);
            self.learned.store(1, Ordering::Relaxed);
        }
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
            limiter.leave(Instant::from_millis(0), Instant::from_millis(100));
        }
        // The next bucket's first completion learns from it.
        limiter.enter();
        limiter.leave(Instant::from_millis(200), Instant::from_millis(210));
        assert!(limiter.learned());
        assert_eq!(limiter.cap(), 44);
        assert_eq!(limiter.in_flight(), 0);
        assert_eq!(limiter.completed(), 45);
        // Armed, the first 200 ms of every 10 s halve the cap (a probe).
        assert_eq!(limiter.limit(true, Some(Instant::from_millis(10_050))), 22);
        assert_eq!(limiter.limit(true, Some(Instant::from_millis(10_250))), 44);
        limiter.set_floor(100);
        assert_eq!(limiter.cap(), 100, "never below the floor");
    }
}
