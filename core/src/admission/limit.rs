//! The in-flight limit of `load.control.admission=limit`: a count of the front end's own
//! admitted requests, and a cap learnt from their completions and, when the poll reports
//! it, adjusted by the cluster's search queue.

use super::window::Window;
use crate::Instant;
use crate::atomic::{AtomicU32, Ordering};
use crate::node_stats::SearchPool;

/// While a class is disarmed (without the cluster's queue), the in-flight count may reach
/// this many times the cap (plus three standard deviations of a Poisson count of that mean,
/// so that light load's bursts fit): room for a load that grows, and a bound on a flood.
pub(crate) const CEILING_FACTOR: u32 = 2;

/// The fleet law, per poll (see [`crate::admission`]): the cap grows by `GROW` plus the
/// busiest node's idle share of threads, times the share of this front end's demand it
/// refused; it shrinks by `SHRINK` times the busiest node's queue per thread, counting at
/// least `MIN_THREADS` threads; and it changes by at most `STEP` times a poll, either way.
const GROW: f64 = 1.0;
const SHRINK: f64 = 0.7;
const MIN_THREADS: f64 = 8.0;
const STEP: f64 = 1.4;
/// The least cap of the fleet law, in 1/256ths of a request: one request an eighth of the
/// time.
const MIN_FINE: u32 = 32;

/// Buckets in a row the in-flight count must grow, each time by more than noise, and end
/// above the ceiling of the cap, before a disarmed class is bounded as a flood.
pub(crate) const FLOOD_BUCKETS: u32 = 3;
/// Buckets a flood bound holds after the flood was last seen growing: long enough for the
/// cluster's CPU, reported a second late and polled once a second, to arm the class.
pub(crate) const FLOOD_HOLD: u32 = 30;

/// Whether `now` is in a probe: the first 200 ms of every 10 seconds, while armed, the
/// limit is half the cap, so that a queue the cap let build drains and the window sees the
/// latency without it again (BBR's ProbeRTT, for a cap: the latency it assumes is the
/// least of the last 10 s, and a queue kept standing for 10 s would become it). Only
/// without the cluster's queue, which measures the queue instead.
#[inline]
fn probing(now: Instant) -> bool {
    now.as_millis() % 10_000 < 200
}

/// The disarmed ceiling for `cap`: `2 cap + ceil(3 sqrt(2 cap))`.
#[inline]
pub(crate) const fn ceiling(cap: u32) -> u32 {
    let twice = cap.saturating_mul(CEILING_FACTOR);
    twice.saturating_add(deviations(twice))
}

/// Three standard deviations of a Poisson count of mean `mean`, rounded up:
/// `ceil(3 sqrt(mean))`.
#[inline]
const fn deviations(mean: u32) -> u32 {
    // 3 sqrt(x) = sqrt(9 x).
    let nine = mean.saturating_mul(9);
    let root = nine.isqrt();
    if root * root < nine { root + 1 } else { root }
}

/// What the last poll told the fleet law, for the stats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PollReading {
    /// The busiest node's search pool, when the poll reported one.
    pub(crate) pool: Option<SearchPool>,
    /// The share of this front end's demand refused since the poll before, in percent.
    pub(crate) refused_percent: u8,
}

/// The in-flight count, the cap and the window it is learnt from.
pub(crate) struct Limiter {
    inflight: AtomicU32,
    /// The cap in 1/256ths of a request: the fleet law adjusts it by fractions, and a
    /// fraction is one more request that share of the time.
    fine: AtomicU32,
    /// The cap before anything is learnt (and, without the cluster's queue, its least
    /// value).
    initial: AtomicU32,
    /// Whether the cap comes from completions (else it is the initial one).
    learned: AtomicU32,
    /// Completions in all (wrapping), and that count at the last poll.
    completed: AtomicU32,
    completed_seen: AtomicU32,
    /// Requests refused at the limit in all (wrapping), and that count at the last poll.
    refused: AtomicU32,
    refused_seen: AtomicU32,
    /// The bucket the cap was last learnt in (0: never): a cap older than the window is
    /// not used, the initial one is.
    learned_at: AtomicU32,
    /// The in-flight count when the last bucket opened, and for how many buckets in a row
    /// it has grown.
    last_inflight: AtomicU32,
    growing: AtomicU32,
    /// The bucket the flood bound holds until (0: never engaged), whether it holds, and
    /// the in-flight count it last engaged at.
    flood_until: AtomicU32,
    flood: AtomicU32,
    flood_held: AtomicU32,
    /// Whether the last poll found a class bounded (armed, or a flood bound): the first
    /// bounded poll after an unbounded one is where the cap starts.
    bounded: AtomicU32,
    /// The last poll's search pool (threads, active, queue; `u32::MAX` threads: none) and
    /// refused share.
    pool: [AtomicU32; 3],
    refused_percent: AtomicU32,
    window: Window,
}

impl Limiter {
    pub(crate) const fn new(initial: u32) -> Limiter {
        let initial = if initial == 0 { 1 } else { initial };
        Limiter {
            inflight: AtomicU32::new(0),
            fine: AtomicU32::new(initial.saturating_mul(256)),
            initial: AtomicU32::new(initial),
            learned: AtomicU32::new(0),
            completed: AtomicU32::new(0),
            completed_seen: AtomicU32::new(0),
            refused: AtomicU32::new(0),
            refused_seen: AtomicU32::new(0),
            learned_at: AtomicU32::new(0),
            last_inflight: AtomicU32::new(0),
            growing: AtomicU32::new(0),
            flood_until: AtomicU32::new(0),
            flood: AtomicU32::new(0),
            flood_held: AtomicU32::new(0),
            bounded: AtomicU32::new(0),
            pool: [
                AtomicU32::new(u32::MAX),
                AtomicU32::new(0),
                AtomicU32::new(0),
            ],
            refused_percent: AtomicU32::new(0),
            window: Window::new(),
        }
    }

    /// Whether the last poll reported the cluster's search queue: then the fleet law holds.
    #[inline]
    fn pool_known(&self) -> bool {
        self.pool[0].load(Ordering::Relaxed) != u32::MAX
    }

    /// The in-flight count a new request may find at `now` (`None`: no clock, no probe and
    /// no fraction). Armed, or a flood bounded: the cap (a fraction of a request is one
    /// more that share of the time; without the cluster's queue, half the cap during a
    /// probe, never below the initial cap). Disarmed: without bound when the cluster's queue is known, else the ceiling
    /// of the cap.
    #[inline]
    pub(crate) fn limit(&self, armed: bool, now: Option<Instant>) -> u32 {
        let known = self.pool_known();
        let mut fine = self.fine.load(Ordering::Relaxed);
        if !known
            && let Some(now) = now
            && self.stale(now)
        {
            fine = self.initial.load(Ordering::Relaxed).saturating_mul(256);
        }
        if !armed && !self.flooding() {
            return if known { u32::MAX } else { ceiling(fine >> 8) };
        }
        // The first `frac` milliseconds of every 256: the allowed concurrency averages the
        // fraction, whatever the arrival rate.
        let extra = now.is_some_and(|now| ((now.as_millis() % 256) as u32) < (fine & 0xFF));
        let cap = (fine >> 8) + u32::from(extra);
        if !known && now.is_some_and(probing) {
            (cap / 2).max(self.initial.load(Ordering::Relaxed))
        } else {
            cap
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

    /// Counts a request refused at the limit: the demand the fleet law weighs its growth by.
    #[inline]
    pub(crate) fn refuse(&self) {
        self.refused.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a request in, whatever the limit (monitor mode).
    pub(crate) fn enter(&self) {
        self.inflight.fetch_add(1, Ordering::Relaxed);
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
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok()
    }

    /// Once a bucket, at its first completion: the cap and the flood bound.
    ///
    /// The cap follows the window's estimate (Little's law) while disarmed, and always
    /// without the cluster's queue; armed with it, the poll adjusts the cap instead. The
    /// estimate is never above the ceiling of what is in flight or allowed now: however a
    /// bucket's completions line up (requests held for a minute, then completed together),
    /// the cap grows by at most the ceiling's factor a bucket, as fast as real load needs,
    /// not to what no load ever held. Without the cluster's queue it is never below the
    /// initial cap, and an empty window (no completion for a second) starts over from it,
    /// so that a step in load after a quiet spell meets the cold start's bound.
    ///
    /// A flood, while disarmed (armed, the cap bounds the class already): the in-flight
    /// count grew at each of the last [`FLOOD_BUCKETS`] buckets, by more than noise, and is
    /// above the ceiling of the cap. A burst does not: it arrives at once and then drains.
    fn learn(&self, now: Instant, armed: bool) {
        let known = self.pool_known();
        let bounded = armed || self.flooding();
        let initial = self.initial.load(Ordering::Relaxed);
        let held = self.inflight.load(Ordering::Relaxed);
        let fine = self.fine.load(Ordering::Relaxed);
        let fine = match self.window.estimate(now) {
            None => {
                self.learned.store(0, Ordering::Relaxed);
                initial.saturating_mul(256)
            }
            Some(_) if known && bounded && self.learned.load(Ordering::Relaxed) != 0 => fine,
            Some(estimate) => {
                self.learned.store(1, Ordering::Relaxed);
                let floor = if known { 1 } else { initial };
                let bound = ceiling(held.max(fine >> 8));
                estimate
                    .in_flight()
                    .min(bound)
                    .max(floor)
                    .saturating_mul(256)
            }
        };
        self.fine.store(fine, Ordering::Relaxed);
        let epoch = Window::epoch(now);
        self.learned_at.store(epoch, Ordering::Relaxed);

        let cap = (fine >> 8).max(1);
        let before = self.last_inflight.swap(held, Ordering::Relaxed);
        let growing = if held >= before.saturating_add(2 + cap / 4) {
            self.growing
                .fetch_add(1, Ordering::Relaxed)
                .saturating_add(1)
        } else {
            self.growing.store(0, Ordering::Relaxed);
            0
        };
        // Armed, the class is bounded already: a flood is what the CPU has not seen yet.
        if !armed && growing >= FLOOD_BUCKETS && held > ceiling(cap) {
            if !self.flooding() {
                self.flood_held.store(held, Ordering::Relaxed);
            }
            self.flood_until
                .store(epoch.wrapping_add(FLOOD_HOLD), Ordering::Relaxed);
        }
        let until = self.flood_until.load(Ordering::Relaxed);
        let holding = until != 0 && (until.wrapping_sub(epoch) as i32) > 0;
        self.flood.store(u32::from(holding), Ordering::Relaxed);
    }

    /// A poll's reading of the busiest node's search pool (`None`: the poll did not report
    /// one). While bounded (`armed`, or a flood), the fleet law adjusts the cap once:
    ///
    /// `cap × (1 + (GROW + idle) × refused − SHRINK × queue / max(threads, 8))`,
    ///
    /// within a factor of [`STEP`] either way: it grows with the share of this front end's
    /// demand refused since the last poll (faster while the busiest node has idle threads)
    /// and shrinks with the queue standing there. Every front end of a fleet reads the same
    /// queue, and each grows by its own refused share: at equilibrium each refuses the same
    /// share of its demand, and the cluster holds a small queue.
    pub(crate) fn on_poll(&self, bounded: bool, pool: Option<SearchPool>) {
        let completed = self.completed.load(Ordering::Relaxed);
        let completed_since =
            completed.wrapping_sub(self.completed_seen.swap(completed, Ordering::Relaxed));
        let refused = self.refused.load(Ordering::Relaxed);
        let refused_since =
            refused.wrapping_sub(self.refused_seen.swap(refused, Ordering::Relaxed));
        let demand = f64::from(refused_since) + f64::from(completed_since);
        let unmet = if demand > 0.0 {
            f64::from(refused_since) / demand
        } else {
            0.0
        };
        self.refused_percent
            .store((unmet * 100.0) as u32, Ordering::Relaxed);
        let Some(pool) = pool else {
            self.pool[0].store(u32::MAX, Ordering::Relaxed);
            return;
        };
        self.pool[0].store(pool.threads.min(u32::MAX - 1), Ordering::Relaxed);
        self.pool[1].store(pool.active, Ordering::Relaxed);
        self.pool[2].store(pool.queue, Ordering::Relaxed);
        let bounded = bounded || self.flooding();
        let was_bounded = self.bounded.swap(u32::from(bounded), Ordering::Relaxed) != 0;
        if !bounded {
            return;
        }
        if !was_bounded && pool.queue == 0 {
            // Armed with no queue at the busiest node: the CPU crossed the threshold, the
            // search pool keeps up. The cap the completions gave is their mean in flight;
            // it starts three deviations of a Poisson count above, so that the arrivals
            // that kept up so far still fit (without, a light load armed by a noisy CPU
            // reading is shed at its own mean), and the queue brings it down if it builds.
            let fine = self.fine.load(Ordering::Relaxed);
            let cap = (fine >> 8).max(1);
            self.fine.store(
                fine.saturating_add(deviations(cap).saturating_mul(256)),
                Ordering::Relaxed,
            );
        }
        let threads = f64::from(pool.threads.max(1));
        let idle = ((threads - f64::from(pool.active)) / threads).clamp(0.0, 1.0);
        let standing = f64::from(pool.queue) / threads.max(MIN_THREADS);
        let factor = (1.0 + (GROW + idle) * unmet - SHRINK * standing).clamp(1.0 / STEP, STEP);
        // Growth never beyond the ceiling of what is in flight or allowed now, as Little's
        // law's: refusals come from requests that found the cap full.
        let held = self.inflight.load(Ordering::Relaxed);
        let fine = self.fine.load(Ordering::Relaxed);
        let bound = f64::from(ceiling(held.max(fine >> 8).max(1))) * 256.0;
        let next = f64::from(fine) * factor;
        let next = if factor > 1.0 { next.min(bound) } else { next };
        // Within `MIN_FINE..=u32::MAX` by the clamps, so the conversion is exact enough.
        self.fine
            .store(next.max(f64::from(MIN_FINE)) as u32, Ordering::Relaxed);
        self.learned.store(1, Ordering::Relaxed);
    }

    /// What the last poll told the fleet law.
    pub(crate) fn reading(&self) -> PollReading {
        let threads = self.pool[0].load(Ordering::Relaxed);
        PollReading {
            pool: (threads != u32::MAX).then(|| SearchPool {
                threads,
                active: self.pool[1].load(Ordering::Relaxed),
                queue: self.pool[2].load(Ordering::Relaxed),
            }),
            refused_percent: self.refused_percent.load(Ordering::Relaxed).min(100) as u8,
        }
    }

    /// A new initial cap (and the cap, if nothing was learnt yet; without the cluster's
    /// queue, the cap is never below it).
    pub(crate) fn set_initial(&self, initial: u32) {
        let initial = initial.max(1);
        self.initial.store(initial, Ordering::Relaxed);
        let fine = initial.saturating_mul(256);
        if self.learned.load(Ordering::Relaxed) == 0 {
            self.fine.store(fine, Ordering::Relaxed);
        } else if !self.pool_known() {
            let _ = self
                .fine
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |cap| {
                    Some(cap.max(fine))
                });
        }
    }

    pub(crate) fn in_flight(&self) -> u32 {
        self.inflight.load(Ordering::Relaxed)
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

    /// Without the cluster's search pool: the single front end's law of v0.3.
    #[test]
    fn without_the_pool_the_cap_starts_at_the_initial_one_and_follows_completions() {
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
            limiter.leave(ms(0), ms(100), true);
        }
        // The next bucket's first completion learns from it, growing by at most the
        // ceiling of the cap (4) at a time: 17, then 44 a bucket later.
        limiter.enter();
        limiter.leave(ms(110), ms(210), true);
        assert!(limiter.learned());
        assert_eq!(limiter.cap(), 17);
        limiter.enter();
        limiter.leave(ms(200), ms(300), true);
        assert_eq!(limiter.cap(), 44);
        assert_eq!(limiter.in_flight(), 0);
        assert_eq!(limiter.completed(), 46);
        assert_eq!(limiter.limit(true, Some(ms(350))), 44);
        // No completion for more than a window: the initial cap again, until one comes.
        assert_eq!(limiter.limit(true, Some(ms(1_400))), 4);
        assert_eq!(limiter.limit(false, Some(ms(1_400))), 17);
        // Armed, the first 200 ms of every 10 s halve the cap (a probe).
        for _ in 0..44 {
            limiter.enter();
        }
        for _ in 0..44 {
            limiter.leave(ms(9_800), ms(9_900), true);
        }
        // (After the quiet spell the window started over from the initial cap: 4, 17, 44.)
        limiter.enter();
        limiter.leave(ms(9_950), ms(10_050), true);
        assert_eq!(limiter.cap(), 17);
        limiter.enter();
        limiter.leave(ms(10_000), ms(10_100), true);
        assert_eq!(limiter.cap(), 44);
        assert_eq!(limiter.limit(true, Some(ms(10_110))), 22);
        assert_eq!(limiter.limit(true, Some(ms(10_250))), 44);
        limiter.set_initial(100);
        assert_eq!(
            limiter.cap(),
            100,
            "never below the initial cap without the pool"
        );
    }

    fn pool(threads: u32, active: u32, queue: u32) -> Option<SearchPool> {
        Some(SearchPool {
            threads,
            active,
            queue,
        })
    }

    /// With the cluster's search pool, each poll moves the cap by the law's factor: up with
    /// the refused share (faster with idle threads), down with the queue per thread (at
    /// least eight threads counted), by at most 1.4 times either way.
    #[test]
    fn with_the_pool_each_poll_adjusts_the_cap() {
        let limiter = Limiter::new(10);
        limiter.on_poll(true, pool(16, 16, 0));
        assert!(limiter.pool_known());
        assert_eq!(
            limiter.cap_hundredths(),
            2000,
            "armed without a queue: 10 + ceil(3 sqrt 10), then nothing refused, no queue"
        );
        // The completions find no estimate in the window yet: the cap starts over from the
        // initial one. Half the demand refused, the pool busy without a queue: x 1.5, within 1.4.
        for _ in 0..10 {
            limiter.refuse();
            limiter.enter();
            limiter.leave(ms(0), ms(10), true);
        }
        limiter.on_poll(true, pool(16, 16, 0));
        assert_eq!(limiter.cap_hundredths(), 1400);
        assert_eq!(limiter.reading().refused_percent, 50);
        // A quarter of the demand refused, 8 of 16 threads idle: 1 + 1.5 x 0.25 = 1.375.
        for n in 0..4 {
            if n == 0 {
                limiter.refuse();
            } else {
                limiter.enter();
                limiter.leave(ms(20), ms(30), true);
            }
        }
        limiter.on_poll(true, pool(16, 8, 0));
        assert_eq!(limiter.cap_hundredths(), 1925);
        // Nothing refused, a queue of 16 on 16 threads: 1 - 0.7 = 0.3, within 1 / 1.4.
        limiter.enter();
        limiter.leave(ms(40), ms(50), true);
        limiter.on_poll(true, pool(16, 16, 16));
        assert_eq!(limiter.cap_hundredths(), 1375);
        // A queue of 2 on 2 threads counts as on 8: 1 - 0.7 x 0.25 = 0.825.
        limiter.on_poll(true, pool(2, 2, 2));
        assert_eq!(limiter.cap_hundredths(), 1134);
        // Disarmed, the poll leaves the cap alone and there is no in-flight bound.
        limiter.on_poll(false, pool(2, 2, 50));
        assert_eq!(limiter.cap_hundredths(), 1134);
        assert_eq!(limiter.limit(false, Some(ms(60))), u32::MAX);
        // Down to an eighth of a request at least, never to nothing.
        for _ in 0..40 {
            limiter.on_poll(true, pool(8, 8, 80));
        }
        assert_eq!(limiter.cap_hundredths(), 12);
        assert_eq!(limiter.cap(), 1);
        // A poll without the pool: back to the single front end's law.
        limiter.on_poll(true, None);
        assert!(!limiter.pool_known());
        assert_eq!(limiter.reading().pool, None);
    }

    /// Armed with no queue at the busiest node (a CPU reading over the threshold while the
    /// search pool keeps up), the cap starts three deviations of a Poisson count above the
    /// completions' mean in flight; armed with a queue, at that mean. Each arming starts
    /// over, and a flood bound is an arming too.
    #[test]
    fn armed_without_a_queue_the_cap_starts_with_room_for_the_arrivals_that_fit() {
        let limiter = Limiter::new(4);
        limiter.on_poll(false, pool(8, 1, 0));
        assert_eq!(limiter.cap_hundredths(), 400, "disarmed: left alone");
        limiter.on_poll(true, pool(8, 1, 0));
        assert_eq!(limiter.cap_hundredths(), 1000, "4 + ceil(3 sqrt 4)");
        limiter.on_poll(true, pool(8, 1, 0));
        assert_eq!(limiter.cap_hundredths(), 1000, "once per arming");
        limiter.on_poll(false, pool(8, 1, 0));
        limiter.fine.store(4 * 256, Ordering::Relaxed);
        // Armed with a queue of 1 on 8 threads: 1 - 0.7 / 8, no headroom.
        limiter.on_poll(true, pool(8, 8, 1));
        assert_eq!(limiter.cap_hundredths(), 364);
        limiter.on_poll(false, pool(8, 1, 0));
        limiter.fine.store(256, Ordering::Relaxed);
        limiter.on_poll(true, pool(8, 1, 0));
        assert_eq!(limiter.cap_hundredths(), 400, "1 + ceil(3 sqrt 1)");
    }

    /// A fraction of a request is one more request that share of the time: the first
    /// `frac` milliseconds of every 256.
    #[test]
    fn a_fraction_of_a_request_is_one_more_that_share_of_the_time() {
        let limiter = Limiter::new(1);
        limiter.on_poll(true, pool(8, 8, 0));
        limiter.fine.store(256 + 64, Ordering::Relaxed); // 1.25
        let admitted = (0..256)
            .filter(|ms_| limiter.limit(true, Some(ms(*ms_))) == 2)
            .count();
        assert_eq!(admitted, 64);
        assert_eq!(limiter.limit(true, None), 1, "no clock, no fraction");
    }

    /// While disarmed with the pool: a burst arrives at once and drains, and is no flood;
    /// an in-flight count growing by more than noise for three buckets in a row, above the
    /// ceiling of the cap, is one, and the cap applies for three seconds.
    #[test]
    fn a_growing_load_is_a_flood_and_a_burst_is_not() {
        let limiter = Limiter::new(2);
        limiter.on_poll(false, pool(8, 2, 0));
        // A burst of 100, then completions: the count only falls after it arrived.
        for _ in 0..100 {
            assert!(limiter.try_enter(limiter.limit(false, Some(ms(0)))));
        }
        for bucket in 1..10 {
            for _ in 0..10 {
                limiter.leave(ms(bucket * 100 - 50), ms(bucket * 100), false);
            }
        }
        assert!(!limiter.flooding(), "a burst is no flood");
        // A flood: 30 more in flight at each bucket, for three buckets.
        for bucket in 10..14 {
            for _ in 0..40 {
                limiter.enter();
            }
            for _ in 0..10 {
                limiter.leave(ms(bucket * 100 - 50), ms(bucket * 100), false);
            }
        }
        assert!(limiter.flooding(), "in flight: {}", limiter.in_flight());
        assert!(
            limiter.limit(false, Some(ms(1_450))) < 50,
            "bounded by the cap"
        );
        // It holds for 3 s after the last growth, then lapses.
        limiter.leave(ms(4_000), ms(4_100), false);
        assert!(limiter.flooding());
        limiter.leave(ms(4_500), ms(4_500), false);
        assert!(!limiter.flooding());
        assert_eq!(limiter.limit(false, Some(ms(4_600))), u32::MAX);
    }
}
