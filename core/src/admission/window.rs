//! The front end's own completions over a rolling window, and the in-flight cap they give
//! by Little's law.

use crate::Instant;
use crate::atomic::{AtomicU32, Ordering};

/// Buckets in the window.
pub(crate) const BUCKETS: usize = 10;
/// One bucket's span, in milliseconds: the window is one second, a poll's worth.
pub(crate) const BUCKET_MS: u64 = 100;
/// Seconds of latencies kept: the latency the cap assumes is the least per-bucket mean of
/// them, a latency without a queue as long as one of their buckets had none.
pub(crate) const SECONDS: usize = 10;
/// Latencies are summed in units of 100 µs, each clamped to ten seconds: a bucket's sum
/// stays within 32 bits for 42,949 completions of ten seconds each, and saturates beyond.
const TICK_US: u64 = 100;
const MAX_TICKS: u32 = 100_000;

/// One bucket: which bucket of time it holds, its completions and their summed latency.
struct Bucket {
    /// The bucket's number (`ms / BUCKET_MS`), plus one; 0 is "never used".
    epoch: AtomicU32,
    completions: AtomicU32,
    ticks: AtomicU32,
}

impl Bucket {
    const fn new() -> Bucket {
        Bucket {
            epoch: AtomicU32::new(0),
            completions: AtomicU32::new(0),
            ticks: AtomicU32::new(0),
        }
    }

    /// The mean latency of its completions, in microseconds; `None` without any.
    fn mean_us(&self) -> Option<u32> {
        let completions = self.completions.load(Ordering::Relaxed);
        if completions == 0 {
            return None;
        }
        let ticks = u64::from(self.ticks.load(Ordering::Relaxed)) / u64::from(completions);
        Some(u32::try_from(ticks.max(1) * TICK_US).unwrap_or(u32::MAX))
    }
}

/// One second's least per-bucket mean latency.
struct Second {
    /// The second's number plus one; 0 is "never used".
    epoch: AtomicU32,
    mean_us: AtomicU32,
}

impl Second {
    const fn new() -> Second {
        Second {
            epoch: AtomicU32::new(0),
            mean_us: AtomicU32::new(0),
        }
    }
}

/// What the window says the cluster serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Estimate {
    /// Completions per second in the busiest bucket of the last second.
    pub(crate) rate_per_s: u32,
    /// The least mean latency the window keeps ([`Window::least_latency_us`]), in
    /// microseconds.
    pub(crate) latency_us: u32,
}

impl Estimate {
    /// Little's law: the requests in flight at that rate and latency, rounded up.
    pub(crate) fn in_flight(self) -> u32 {
        let product = u64::from(self.rate_per_s) * u64::from(self.latency_us);
        u32::try_from(product.div_ceil(1_000_000)).unwrap_or(u32::MAX)
    }

    /// The same in 1/256ths of a request, rounded up.
    pub(crate) fn in_flight_fine(self) -> u32 {
        let product = u64::from(self.rate_per_s) * u64::from(self.latency_us) * 256;
        u32::try_from(product.div_ceil(1_000_000)).unwrap_or(u32::MAX)
    }
}

/// Completions in the last [`BUCKETS`] buckets of [`BUCKET_MS`], lock-free: a completion
/// adds to its bucket; the first completion of a new bucket resets it, and is told so, to
/// recompute the cap from the buckets that are complete. Each second's mean latency is kept
/// for [`SECONDS`] seconds.
pub(crate) struct Window {
    buckets: [Bucket; BUCKETS],
    seconds: [Second; SECONDS],
}

/// Buckets in a second.
const PER_SECOND: u32 = (1000 / BUCKET_MS) as u32;

impl Window {
    pub(crate) const fn new() -> Window {
        Window {
            buckets: [const { Bucket::new() }; BUCKETS],
            seconds: [const { Second::new() }; SECONDS],
        }
    }

    /// Keeps `mean_us`, the mean latency of the bucket `epoch` whose slot is being reused,
    /// as its second's least while no later second holds the slot: a second's latency
    /// outlives its buckets, whenever they are reused (the next second, or the first
    /// completion after a quiet spell). Two buckets of one second retired at once may keep
    /// the greater of their means: a second is an estimate, as a bucket is.
    fn keep(&self, epoch: u32, mean_us: u32) {
        // Buckets are numbered from 1: bucket `e` covers `[(e - 1), e) x 100 ms`, in the
        // second `(e - 1) / PER_SECOND`, numbered from 1 here too.
        let second = (epoch - 1) / PER_SECOND + 1;
        let slot = &self.seconds[second as usize % SECONDS];
        loop {
            let held = slot.epoch.load(Ordering::Acquire);
            if held == second {
                slot.mean_us.fetch_min(mean_us, Ordering::Relaxed);
                return;
            }
            // The slot holds a later second (the numbers wrap every 13.6 years).
            if held != 0 && (second.wrapping_sub(held) as i32) < 0 {
                return;
            }
            if slot
                .epoch
                .compare_exchange(held, second, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                slot.mean_us.store(mean_us, Ordering::Relaxed);
                return;
            }
        }
    }

    /// The bucket number of `at`, plus one (so that 0 means unused): in `1..=u32::MAX`,
    /// wrapping every 13.6 years of the clock's instants (a clock may count from any epoch).
    pub(crate) fn epoch(at: Instant) -> u32 {
        // Below u32::MAX, so that the cast keeps it and the addition cannot overflow.
        ((at.as_millis() / BUCKET_MS) % u64::from(u32::MAX)) as u32 + 1
    }

    /// Records a completion at `now` that took `latency_us`; returns whether it opened a new
    /// bucket (then the caller recomputes the estimate).
    pub(crate) fn record(&self, now: Instant, latency_us: u64) -> bool {
        let epoch = Self::epoch(now);
        let bucket = &self.buckets[epoch as usize % BUCKETS];
        let seen = bucket.epoch.load(Ordering::Acquire);
        // What the bucket held, read before it is reset, to be kept as its second's.
        let retired = (seen != epoch && seen != 0)
            .then(|| bucket.mean_us())
            .flatten();
        let opened = seen != epoch
            && bucket
                .epoch
                .compare_exchange(seen, epoch, Ordering::AcqRel, Ordering::Acquire)
                .is_ok();
        if opened {
            if let Some(mean_us) = retired {
                self.keep(seen, mean_us);
            }
            // Completions that race with the reset may be lost or kept: a bucket is an
            // estimate, and only its winner resets it.
            bucket.completions.store(0, Ordering::Relaxed);
            bucket.ticks.store(0, Ordering::Relaxed);
        }
        let ticks = u32::try_from(latency_us.div_ceil(TICK_US))
            .unwrap_or(MAX_TICKS)
            .min(MAX_TICKS);
        bucket.completions.fetch_add(1, Ordering::Relaxed);
        if bucket
            .ticks
            .fetch_add(ticks, Ordering::Relaxed)
            .checked_add(ticks)
            .is_none()
        {
            // Wrapped: saturate (a racing addition may wrap it again, and is caught so).
            bucket.ticks.store(u32::MAX, Ordering::Relaxed);
        }
        opened
    }

    /// The requests in flight on average over the complete buckets before the one of `now`
    /// (Little's law as an area: their completions' latencies summed, over the time they
    /// cover), in 1/256ths of a request.
    pub(crate) fn mean_in_flight_fine(&self, now: Instant) -> u32 {
        let current = Self::epoch(now);
        let mut ticks: u64 = 0;
        let mut buckets: u64 = 0;
        for bucket in &self.buckets {
            let epoch = bucket.epoch.load(Ordering::Acquire);
            let age = current.wrapping_sub(epoch);
            if epoch == 0 || age == 0 || age as usize > BUCKETS {
                continue;
            }
            buckets += 1;
            ticks += u64::from(bucket.ticks.load(Ordering::Relaxed));
        }
        if buckets == 0 {
            return 0;
        }
        // ticks x 100 µs of latency over buckets x 100 ms, in 256ths.
        let fine = ticks * TICK_US * 256 / (buckets * BUCKET_MS * 1000);
        u32::try_from(fine).unwrap_or(u32::MAX)
    }

    /// The mean latency of the bucket before the one of `now`, in microseconds; `None`
    /// without a completion in it.
    pub(crate) fn last_mean_us(&self, now: Instant) -> Option<u32> {
        let last = Self::epoch(now).wrapping_sub(1);
        let bucket = &self.buckets[last as usize % BUCKETS];
        if bucket.epoch.load(Ordering::Acquire) != last {
            return None;
        }
        bucket.mean_us()
    }

    /// The busiest complete bucket's rate and the least latency ([`Window::least_latency_us`]),
    /// over the buckets before the one of `now`; `None` when none of them has a completion.
    pub(crate) fn estimate(&self, now: Instant) -> Option<Estimate> {
        let current = Self::epoch(now);
        let most = self
            .complete(current)
            .map(|bucket| bucket.completions.load(Ordering::Relaxed))
            .max()
            .filter(|most| *most != 0)?;
        Some(Estimate {
            rate_per_s: most.saturating_mul(PER_SECOND),
            latency_us: self.least_latency_us(now)?,
        })
    }

    /// The buckets of the second before bucket `current`.
    fn complete(&self, current: u32) -> impl Iterator<Item = &Bucket> {
        self.buckets.iter().filter(move |bucket| {
            let epoch = bucket.epoch.load(Ordering::Acquire);
            let age = current.wrapping_sub(epoch);
            epoch != 0 && age != 0 && age as usize <= BUCKETS
        })
    }

    /// The least mean latency the window keeps, in microseconds: of the complete buckets
    /// still in the window and of the seconds whose buckets were reused, over the last
    /// [`SECONDS`] seconds, so that a quiet spell of a few seconds forgets no latency, nor
    /// a second that no completion after it closed (`None`: no completion in them).
    pub(crate) fn least_latency_us(&self, now: Instant) -> Option<u32> {
        let current = Self::epoch(now);
        let buckets = self
            .buckets
            .iter()
            .filter(|bucket| {
                let epoch = bucket.epoch.load(Ordering::Acquire);
                let age = current.wrapping_sub(epoch);
                epoch != 0 && age != 0 && age <= SECONDS as u32 * PER_SECOND
            })
            .filter_map(Bucket::mean_us)
            .min();
        let this_second = (current - 1) / PER_SECOND + 1;
        let seconds = self
            .seconds
            .iter()
            .filter_map(|second| {
                let epoch = second.epoch.load(Ordering::Acquire);
                let age = this_second.wrapping_sub(epoch);
                let mean = second.mean_us.load(Ordering::Relaxed);
                (epoch != 0 && age as usize <= SECONDS && mean != 0).then_some(mean)
            })
            .min();
        match (buckets, seconds) {
            (Some(bucket), Some(second)) => Some(bucket.min(second)),
            (bucket, second) => bucket.or(second),
        }
    }
}

#[cfg(test)]
#[path = "window_tests.rs"]
mod tests;
