//! The in-flight limit of `load.control.admission=limit`: a count of the front end's own
//! admitted requests, a cap learnt from their completions, and, while the cluster is
//! saturated, the law that holds its busiest node at the operating point.

use core::time::Duration;

use super::cap::{self, MIN_FINE, ceiling};
use super::law::Law;
use super::step::{Poll, PollState};
use super::window::Window;
use crate::Instant;
use crate::atomic::{AtomicU32, Ordering};
use crate::node_stats::SearchPool;
use core::cell::Cell;
use embassy_sync::blocking_mutex::CriticalSectionMutex;

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
const FLOOD_STRETCH: u64 = 8;

/// Whether `now` is in a probe: the first 200 ms of every 10 seconds, while bounded
/// without the cluster's search pool, the limit is half the cap, so that a queue the cap
/// let build drains and the window sees the latency without it again (BBR's ProbeRTT, for
/// a cap: the latency it assumes is the least of the last 10 s, and a queue kept standing
/// for 10 s would become it).
#[inline]
fn probing(now: Instant) -> bool {
    now.as_millis() % 10_000 < 200
}

/// How many buckets the flood bound holds for with polls every `interval`: two intervals
/// and a second (the CPU is reported a second late, and the poll after it may be a whole
/// interval away), at least [`FLOOD_HOLD`]; at most half the bucket numbers, which wrap.
const fn flood_hold(interval: Duration) -> u32 {
    let ms = interval.as_millis().saturating_mul(2).saturating_add(1_000);
    let buckets = ms / super::window::BUCKET_MS as u128;
    if buckets > (u32::MAX / 2) as u128 {
        u32::MAX / 2
    } else if buckets < FLOOD_HOLD as u128 {
        FLOOD_HOLD
    } else {
        buckets as u32
    }
}

/// What bounds a request now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    /// Nothing: the class is below saturation (or disarmed) and no flood is seen.
    None,
    /// The cap, while the class is armed and the cluster saturated.
    Cap(u32),
    /// The cap, as a flood bound.
    Flood(u32),
}

impl Bound {
    /// The in-flight count a request may find.
    #[inline]
    pub(crate) const fn limit(self) -> u32 {
        match self {
            Bound::None => u32::MAX,
            Bound::Cap(limit) | Bound::Flood(limit) => limit,
        }
    }
}

/// What the last poll told the law, for the stats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PollReading {
    /// The busiest node's search pool, when the poll reported one.
    pub(crate) pool: Option<SearchPool>,
    /// The share of this front end's demand refused since the poll before, in percent.
    pub(crate) refused_percent: u8,
}

/// An atomic alone on its cache line: the in-flight count and the refusal count change on
/// every request under overload, and neither should make the other's line bounce between
/// cores.
#[repr(align(64))]
struct Line(AtomicU32);

/// The in-flight count, the cap and the window it is learnt from.
pub(crate) struct Limiter {
    inflight: Line,
    /// Requests refused at the limit in all (wrapping): the demand the law weighs growth by.
    refused: Line,
    /// The cap in 1/256ths of a request: the law adjusts it by fractions, and a fraction is
    /// one more request that share of the time.
    fine: AtomicU32,
    /// The cap before anything is learnt (and, without the cluster's pool, its least value).
    initial: AtomicU32,
    /// Whether the cap comes from completions (else it is the initial one).
    learned: AtomicU32,
    /// Completions in all (wrapping).
    completed: AtomicU32,
    /// The bucket the cap was last learnt in (0: never): a cap older than the window is
    /// not used, the initial one is (without the pool).
    learned_at: AtomicU32,
    /// The in-flight count when the last bucket opened, and for how many buckets in a row
    /// it has grown.
    last_inflight: AtomicU32,
    growing: AtomicU32,
    /// The bucket the flood bound holds until (0: never engaged), whether it holds, the
    /// in-flight count it last engaged at, and how many buckets it holds for.
    flood_until: AtomicU32,
    flood: AtomicU32,
    flood_held: AtomicU32,
    flood_hold: AtomicU32,
    /// Whether the fleet law holds, as the last poll left it ([`PollState::fleet`]): the
    /// request path reads it.
    fleet: AtomicU32,
    /// What only the poll touches, under the poll's lock: requests never take it.
    poll: CriticalSectionMutex<Cell<PollState>>,
    window: Window,
    /// The recent peak of the in-flight count.
    peak: AtomicU32,
    /// The flood bound's cap, in 1/256ths, fixed when it engages.
    flood_cap: AtomicU32,
    law: Law,
}

impl Limiter {
    pub(crate) const fn new(initial: u32, interval: Duration, law: Law) -> Limiter {
        let initial = if initial == 0 { 1 } else { initial };
        Limiter {
            inflight: Line(AtomicU32::new(0)),
            refused: Line(AtomicU32::new(0)),
            fine: AtomicU32::new(initial.saturating_mul(256)),
            initial: AtomicU32::new(initial),
            learned: AtomicU32::new(0),
            completed: AtomicU32::new(0),
            learned_at: AtomicU32::new(0),
            last_inflight: AtomicU32::new(0),
            growing: AtomicU32::new(0),
            flood_until: AtomicU32::new(0),
            flood: AtomicU32::new(0),
            flood_held: AtomicU32::new(0),
            flood_hold: AtomicU32::new(flood_hold(interval)),
            fleet: AtomicU32::new(0),
            poll: CriticalSectionMutex::new(Cell::new(PollState::NEW)),
            window: Window::new(),
            peak: AtomicU32::new(0),
            flood_cap: AtomicU32::new(0),
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
            // A flood: room for twice what the completions supported before it (the
            // backlog drains down to it first, since nothing is admitted above it).
            let twice = self.flood_cap.load(Ordering::Relaxed).max(MIN_FINE);
            Bound::Flood(cap::at(twice, now))
        }
    }

    /// The in-flight count the flood bound last engaged at (0: never).
    pub(crate) fn flood_engaged_at(&self) -> u32 {
        self.flood_held.load(Ordering::Relaxed)
    }

    /// Whether the flood bound is engaged.
    #[inline]
    pub(crate) fn flooding(&self) -> bool {
        self.flood.load(Ordering::Relaxed) != 0
    }

    /// Whether the cap was learnt more than a window before `now` (no completion since):
    /// it says nothing about the cluster now, and the initial one applies until one comes.
    #[inline]
    fn stale(&self, now: Instant) -> bool {
        let at = self.learned_at.load(Ordering::Relaxed);
        at != 0 && Window::epoch(now).wrapping_sub(at) as usize > super::window::BUCKETS
    }

    /// Counts a request in if fewer than `limit` are in flight; whether it was. At the limit
    /// a load decides, so that a rejection writes nothing here.
    #[inline]
    pub(crate) fn try_enter(&self, limit: u32) -> bool {
        let inflight = &self.inflight.0;
        if inflight.load(Ordering::Relaxed) >= limit {
            return false;
        }
        let before = inflight.fetch_add(1, Ordering::Relaxed);
        if before < limit {
            return true;
        }
        inflight.fetch_sub(1, Ordering::Relaxed);
        false
    }

    /// Counts a request refused at the limit: the demand the law weighs its growth by.
    #[inline]
    pub(crate) fn refuse(&self) {
        self.refused.0.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a request in, whatever the limit (monitor mode).
    pub(crate) fn enter(&self) {
        self.inflight.0.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a request out that completed at `now`, admitted at `started` (`armed`: its
    /// class is armed now); the first completion of a new bucket recomputes the cap.
    pub(crate) fn leave(&self, started: Instant, now: Instant, armed: bool) {
        if !self.abandon() {
            return;
        }
        self.completed.fetch_add(1, Ordering::Relaxed);
        let latency_us = now.saturating_duration_since(started).as_micros();
        let latency_us = u64::try_from(latency_us).unwrap_or(u64::MAX);
        if self.window.record(now, latency_us) {
            self.learn(now, armed);
        }
    }

    /// Counts a request out without recording it (its latency is not the cluster's: the
    /// client went away, or it was answered without the cluster); whether one was in
    /// flight. With nothing in flight (a ticket from another control) the count stays at
    /// zero instead of wrapping to `u32::MAX`, which would reject everything from then on.
    pub(crate) fn abandon(&self) -> bool {
        self.inflight
            .0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok()
    }

    /// Stores the cap `next` learnt from `loaded`, unless a poll moved the cap meanwhile:
    /// the poll's update wins, and the next bucket learns from it.
    fn settle(&self, loaded: u32, next: u32) {
        let _ = self
            .fine
            .compare_exchange(loaded, next, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// Once a bucket, at its first completion: the cap and the flood bound.
    ///
    /// Unbounded, and always without the cluster's pool, the cap follows the window's
    /// estimate (Little's law); bounded with the pool, the poll moves it instead, and this
    /// leaves it alone. The estimate is never above the ceiling of what is in flight or
    /// allowed now: however a bucket's completions line up (requests held for a minute,
    /// then completed together), the cap grows by at most the ceiling's factor a bucket, as
    /// fast as real load needs, not to what no load ever held. Without the pool it is never
    /// below the initial cap, and an empty window (no completion for a second) starts over
    /// from it, so that a step in load after a quiet spell meets the cold start's bound.
    ///
    /// A flood, while not capped: the in-flight count grew at each of the last
    /// [`FLOOD_BUCKETS`] buckets by more than noise, and is above the ceiling of the cap or
    /// finds the cluster queueing (the last bucket's mean latency at least
    /// [`FLOOD_STRETCH`] times the least). A burst does not: it arrives at once and then
    /// drains.
    fn learn(&self, now: Instant, armed: bool) {
        let fleet = self.fleet();
        let capped = armed;
        let bounded = capped || self.flooding();
        let held = self.inflight.0.load(Ordering::Relaxed);
        let estimate = self.window.estimate(now);
        if !(fleet && bounded && self.learned.load(Ordering::Relaxed) != 0) {
            let initial = self.initial.load(Ordering::Relaxed);
            // From the value loaded: a poll that moved the cap meanwhile wins. With the
            // pool, in fractions of a request (a fleet's front ends share the cluster's
            // concurrency); without, in whole requests and never below the initial cap.
            let fine = self.fine.load(Ordering::Relaxed);
            let next = match estimate {
                None => initial.saturating_mul(256),
                Some(estimate) => {
                    let bound = ceiling(held.max(fine >> 8)).saturating_mul(256);
                    if fleet {
                        estimate.in_flight_fine().min(bound).max(MIN_FINE)
                    } else {
                        estimate
                            .in_flight()
                            .max(initial)
                            .saturating_mul(256)
                            .min(bound.max(initial.saturating_mul(256)))
                    }
                }
            };
            self.settle(fine, next);
            self.learned
                .store(u32::from(estimate.is_some()), Ordering::Relaxed);
        }
        let epoch = Window::epoch(now);
        self.learned_at.store(epoch, Ordering::Relaxed);

        // The recent peak of the in-flight count, decaying by a sixteenth a bucket.
        let peak = self.peak.load(Ordering::Relaxed);
        self.peak
            .store(held.max(peak - peak / 16), Ordering::Relaxed);
        let cap = self.cap();
        let before = self.last_inflight.swap(held, Ordering::Relaxed);
        let growing = if held >= before.saturating_add(2 + cap / 4) {
            self.growing
                .fetch_add(1, Ordering::Relaxed)
                .saturating_add(1)
        } else {
            self.growing.store(0, Ordering::Relaxed);
            0
        };
        // Capped, the class is bounded already: a flood is what the CPU has not seen yet.
        let queueing = || {
            estimate.is_some_and(|estimate| {
                self.window.last_mean_us(now).is_some_and(|mean| {
                    u64::from(mean) >= FLOOD_STRETCH * u64::from(estimate.latency_us)
                })
            })
        };
        if !capped && growing >= FLOOD_BUCKETS && (held > ceiling(cap) || queueing()) {
            if !self.flooding() {
                self.flood_held.store(held, Ordering::Relaxed);
                // Twice what was in flight on average before (the last second, the flood's
                // first buckets in it), or what Little's law gave, whichever is more.
                let area = self.window.mean_in_flight_fine(now);
                let little = estimate.map_or(0, |e| e.in_flight_fine());
                self.flood_cap.store(
                    area.max(little).saturating_mul(2).max(MIN_FINE),
                    Ordering::Relaxed,
                );
            }
            let hold = self.flood_hold.load(Ordering::Relaxed);
            self.flood_until
                .store(epoch.wrapping_add(hold), Ordering::Relaxed);
        }
        let until = self.flood_until.load(Ordering::Relaxed);
        let holding = until != 0 && (until.wrapping_sub(epoch) as i32) > 0;
        self.flood.store(u32::from(holding), Ordering::Relaxed);
    }

    /// A poll: the busiest node's CPU, its search pool (`None`: the poll did not report
    /// one) and whether a class is `armed`. The law's step ([`Law::step`]) runs under the
    /// poll's lock on a snapshot of what the requests share with it, and what it changes
    /// is stored back: the cap, the flood bound released, the cap learnt, the fleet law.
    pub(crate) fn on_poll(&self, armed: bool, cpu: u8, pool: Option<SearchPool>) {
        self.poll.lock(|cell| {
            let poll = Poll {
                armed,
                cpu,
                pool,
                completed: self.completed.load(Ordering::Relaxed),
                refused: self.refused.0.load(Ordering::Relaxed),
                in_flight: self.inflight.0.load(Ordering::Relaxed),
                peak: self.peak.load(Ordering::Relaxed),
                fine: self.fine.load(Ordering::Relaxed),
                flooding: self.flooding(),
            };
            let step = self.law.step(&cell.get(), &poll);
            cell.set(step.state);
            self.fleet
                .store(u32::from(step.state.fleet), Ordering::Relaxed);
            if step.release {
                self.flood_until.store(0, Ordering::Relaxed);
                self.flood.store(0, Ordering::Relaxed);
            }
            if let Some(fine) = step.fine {
                self.fine.store(fine, Ordering::Relaxed);
            }
            if step.learned {
                self.learned.store(1, Ordering::Relaxed);
            }
        });
    }

    /// A new poll interval: the flood bound holds for two of them and a second.
    pub(crate) fn set_interval(&self, interval: Duration) {
        self.flood_hold
            .store(flood_hold(interval), Ordering::Relaxed);
    }

    /// What the last poll told the law.
    pub(crate) fn reading(&self) -> PollReading {
        self.poll.lock(|state| {
            let state = state.get();
            PollReading {
                pool: state.pool,
                refused_percent: state.refused_percent,
            }
        })
    }

    /// A new initial cap (and the cap, if nothing was learnt yet; without the cluster's
    /// pool, the cap is never below it).
    pub(crate) fn set_initial(&self, initial: u32) {
        let initial = initial.max(1);
        self.initial.store(initial, Ordering::Relaxed);
        let fine = initial.saturating_mul(256);
        if self.learned.load(Ordering::Relaxed) == 0 {
            self.fine.store(fine, Ordering::Relaxed);
        } else if !self.fleet() {
            let _ = self
                .fine
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |cap| {
                    Some(cap.max(fine))
                });
        }
    }

    pub(crate) fn in_flight(&self) -> u32 {
        self.inflight.0.load(Ordering::Relaxed)
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
        self.completed.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    fn ms(n: u64) -> Instant {
        Instant::from_millis(n)
    }

    fn busy(load_milli: u32) -> Option<SearchPool> {
        Some(
            SearchPool::new(2, 2, 0)
                .with_means(load_milli.min(1000), load_milli.saturating_sub(1000)),
        )
    }

    #[test]
    fn the_flood_bound_holds_two_intervals_and_a_second() {
        assert_eq!(flood_hold(SECOND), FLOOD_HOLD);
        assert_eq!(flood_hold(Duration::from_secs(10)), 210);
        assert_eq!(flood_hold(Duration::from_secs(86_400)), 1_728_010);
        assert_eq!(flood_hold(Duration::MAX), u32::MAX / 2);
        assert_eq!(flood_hold(Duration::ZERO), FLOOD_HOLD);
    }

    /// Disarmed and no flood: nothing bounds a request. Armed: the cap, and a fraction of
    /// a request is one more that share of the time (the first `frac` ms of every 256).
    #[test]
    fn disarmed_nothing_bounds_and_armed_the_cap_with_its_fraction() {
        let limiter = Limiter::new(4, SECOND, Law::DEFAULT);
        assert_eq!(limiter.bound(false, Some(ms(0))), Bound::None);
        assert_eq!(limiter.bound(true, Some(ms(300))), Bound::Cap(4));
        limiter.on_poll(true, 99, busy(2_000));
        limiter.fine.store(256 + 64, Ordering::Relaxed); // 1.25
        let more = (0..256)
            .filter(|n| limiter.bound(true, Some(ms(1_000 + n))) == Bound::Cap(2))
            .count();
        assert_eq!(more, 64);
        assert_eq!(
            limiter.bound(true, None),
            Bound::Cap(1),
            "no clock, no fraction"
        );
    }

    /// Without the cluster's pool the cap follows the completions in whole requests, never
    /// below the initial one, and starts over from it after a window without completions.
    #[test]
    fn without_the_pool_the_cap_follows_completions_in_whole_requests() {
        let limiter = Limiter::new(4, SECOND, Law::DEFAULT);
        // 40 completions of 100 ms in one bucket: 400/s x 0.1 s = 40 in flight.
        for _ in 0..44 {
            limiter.enter();
        }
        for _ in 0..44 {
            limiter.leave(ms(0), ms(100), true);
        }
        // The next bucket learns from it, growing by at most the ceiling of what is in
        // flight or allowed (4: 17) a bucket.
        limiter.enter();
        limiter.leave(ms(110), ms(210), true);
        assert!(limiter.learned());
        assert_eq!(limiter.cap(), 17);
        limiter.enter();
        limiter.leave(ms(200), ms(300), true);
        assert_eq!(limiter.cap(), 44);
        assert_eq!(limiter.bound(true, Some(ms(350))), Bound::Cap(44));
        // No completion for more than a window: the initial cap again.
        assert_eq!(limiter.bound(true, Some(ms(1_400))), Bound::Cap(4));
        // A probe, the first 200 ms of every 10 s: half the cap, not below the initial.
        assert_eq!(limiter.bound(true, Some(ms(10_050))), Bound::Cap(4));
        limiter.set_initial(100);
        assert_eq!(limiter.cap(), 100, "never below the initial cap");
    }

    /// With the pool, each poll while armed moves the cap by the law: up by the refused
    /// share, down by the load per core over the operating point (1.25), within 1.4.
    #[test]
    fn with_the_pool_each_poll_moves_the_cap_by_the_law() {
        let limiter = Limiter::new(10, SECOND, Law::DEFAULT);
        limiter.on_poll(false, 99, busy(1_000));
        assert_eq!(limiter.cap_hundredths(), 1_000, "disarmed: left alone");
        // Arming at the operating point or below starts at the ceiling of the cap,
        // 2 x 10 + ceil(3 sqrt 20) = 34: room for twice the arrivals that kept up.
        limiter.on_poll(true, 99, busy(1_000));
        assert_eq!(limiter.cap_hundredths(), 3_400);
        let demand = |completed: u64, refused: u32| {
            for n in 0..completed {
                limiter.enter();
                limiter.leave(ms(n), ms(n + 5), true);
            }
            for _ in 0..refused {
                limiter.refuse();
            }
        };
        let near = |hundredths: f64| {
            let cap = f64::from(limiter.cap_hundredths());
            assert!((cap - hundredths).abs() <= 2.0, "{cap} != {hundredths}");
        };
        // Half refused, 2 tasks per core: 1 + 0.5 - (2 - 1.25) = 0.75.
        demand(10, 10);
        limiter.on_poll(true, 99, busy(2_000));
        near(2_550.0);
        assert_eq!(limiter.reading().refused_percent, 50);
        // No demand of its own: the cap stays, whatever the cluster's load.
        limiter.on_poll(true, 99, busy(8_000));
        near(2_550.0);
        // Nothing refused, 5 tasks per core (the error within the CPU's 60 x 6 % = 3.6):
        // down by at most 1.4.
        demand(10, 0);
        limiter.on_poll(true, 99, busy(5_000));
        near(2_550.0 / 1.4);
        // The CPU falls to 30 %: smoothed to 88.65 (15 % of the way), below saturation,
        // and the error is the CPU's, 5 x -4.35 % = -0.2175: up by 1.2175, but never
        // beyond the ceiling of the recent peak in flight: with nothing in flight, a cap
        // nothing fills stays.
        demand(10, 0);
        limiter.on_poll(true, 30, busy(2_000));
        assert!(!limiter.saturated());
        near(2_550.0 / 1.4);
        // With 20 in flight (ceiling 59) it grows: the CPU smoothed to 79.85, the error
        // 5 x -13.15 % = -0.66, beyond the step, so by 1.4.
        for _ in 0..20 {
            limiter.enter();
        }
        demand(10, 0);
        limiter.on_poll(true, 30, busy(2_000));
        for n in 0..20 {
            limiter.leave(ms(n), ms(n + 5), true);
        }
        let grown = 2_550.0;
        near(grown);
        // Disarmed: the poll leaves the cap alone and nothing bounds a request.
        demand(10, 0);
        limiter.on_poll(false, 99, busy(9_000));
        near(grown);
        assert_eq!(limiter.bound(false, Some(ms(60))), Bound::None);
        // Down to an eighth of a request at least, never to nothing.
        limiter.on_poll(true, 99, busy(9_000));
        for _ in 0..40 {
            demand(1, 0);
            limiter.on_poll(true, 99, busy(9_000));
        }
        assert_eq!(limiter.cap_hundredths(), MIN_FINE * 100 / 256);
    }

    /// `learn` computes a cap from the cap it loaded; a poll that moved the cap meanwhile
    /// must not be undone by the store.
    #[test]
    fn a_cap_learnt_from_a_stale_load_does_not_undo_a_poll() {
        let limiter = Limiter::new(10, SECOND, Law::DEFAULT);
        let loaded = limiter.fine.load(Ordering::Relaxed);
        // A poll moves the cap between the load and the store.
        limiter.fine.store(3 * 256, Ordering::Relaxed);
        limiter.settle(loaded, 40 * 256);
        assert_eq!(limiter.cap(), 3, "the poll's cap stays");
        limiter.settle(3 * 256, 5 * 256);
        assert_eq!(limiter.cap(), 5, "unraced, the learnt cap is stored");
    }

    /// Disarmed: a burst arrives at once and drains, and is no flood; an in-flight count
    /// growing by more than noise at each bucket is one, bounded at twice what was in
    /// flight before it, for the hold after it was last seen growing.
    #[test]
    fn a_growing_load_is_a_flood_and_a_burst_is_not() {
        let limiter = Limiter::new(2, SECOND, Law::DEFAULT);
        limiter.on_poll(false, 20, busy(300));
        // Light load: 2 in flight, 20 ms each.
        for bucket in 0..10 {
            for n in 0..10 {
                let at = bucket * 100 + n * 10;
                limiter.enter();
                limiter.leave(ms(at), ms(at + 20), false);
            }
        }
        // A burst of 100, then completions: the count only falls after it arrived.
        for _ in 0..100 {
            assert!(limiter.try_enter(limiter.bound(false, Some(ms(1_000))).limit()));
        }
        for bucket in 11..20 {
            for _ in 0..11 {
                limiter.leave(ms(bucket * 100 - 50), ms(bucket * 100), false);
            }
        }
        assert!(!limiter.flooding(), "a burst is no flood");
        assert_eq!(limiter.bound(false, Some(ms(2_000))), Bound::None);
        // A flood: 30 more in flight at each bucket.
        for bucket in 20..25 {
            for _ in 0..40 {
                limiter.enter();
            }
            for _ in 0..10 {
                limiter.leave(ms(bucket * 100 - 50), ms(bucket * 100), false);
            }
        }
        assert!(limiter.flooding(), "in flight: {}", limiter.in_flight());
        let Bound::Flood(limit) = limiter.bound(false, Some(ms(2_450))) else {
            panic!("no flood bound");
        };
        assert!(limit < 50, "bounded: {limit}");
        // It holds for 3 s after the last growth, then lapses.
        limiter.leave(ms(5_000), ms(5_200), false);
        assert!(limiter.flooding());
        limiter.leave(ms(5_600), ms(5_600), false);
        assert!(!limiter.flooding());
        assert_eq!(limiter.bound(false, Some(ms(5_700))), Bound::None);
    }
}
