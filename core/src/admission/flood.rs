//! The flood bound: while a class is disarmed nothing bounds a request, but a load whose
//! in-flight count keeps growing (a flood the cluster's CPU, reported a second late, has not
//! seen yet) is bounded until the poll can arm the class. A burst is not a flood: it
//! arrives at once and then drains; so a flood is demand, arrivals above the rate the front
//! end received before, as well as growth, and the bound lets go at the first bucket whose
//! arrivals are back to that rate. While a burst drains the in-flight count still grows
//! where the cores share themselves among everything in flight (the burst and the ordinary
//! requests after it complete together at its end), but the arrivals are the light
//! traffic's again.

use core::time::Duration;

use super::cap::{self, MIN_FINE, ceiling};
use super::window::BUCKET_MS;
use crate::Instant;
use crate::atomic::{AtomicU32, Ordering};

mod demand;

pub(crate) use demand::SPAN_MS;
use demand::{Demand, OWN_SPAN_MS, demand, demand_within};

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

/// A gap between two looks longer than this, in milliseconds, is a quiet spell: nothing
/// completed for the window's second. Rates are measured over the time without them.
pub(crate) const QUIET_MS: u32 = 1_000;

/// Where a span of the flood bound's started, for a poll to measure the arrivals per bucket
/// from one start to a later one ([`super::step::Step::rate`]). All wrap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    /// When, in milliseconds of the clock.
    pub(crate) ms: u32,
    /// Requests that had arrived in all then.
    pub(crate) arrived: u32,
    /// The milliseconds of quiet spells ([`QUIET_MS`]) until then, in all: a span that a
    /// quiet spell fills measures almost nothing, and the light traffic that resumes after
    /// it, a burst with it, is no surge for that.
    pub(crate) quiet_ms: u32,
}

/// What a bucket tells the flood bound.
pub(crate) struct Seen {
    /// The bucket's number ([`super::window::Window::epoch`]).
    pub(crate) epoch: u32,
    /// Requests in flight at its first completion.
    pub(crate) held: u32,
    /// Requests that arrived in all, admitted or refused (wrapping).
    pub(crate) arrived: u32,
    /// When, in milliseconds of the clock (wrapping).
    pub(crate) ms: u32,
    /// What a machine whose CPU is the front end's own serves in a bucket, in 256ths of a
    /// request (`None`: not its own CPU, or not known yet): demand is measured against it
    /// instead of the rate before.
    pub(crate) capacity: Option<u32>,
    /// What a flood is measured against, in whole requests: what the front end held at
    /// the last poll that left its class unbounded (`FloodBase::Quiet`), or
    /// the cap of now.
    pub(crate) cap: u32,
    /// Whether the class is capped (armed): then it is bounded already.
    pub(crate) capped: bool,
    /// Whether this is the bucket's first look: the bucket's growth is measured from one
    /// such look to the next.
    pub(crate) bucket: bool,
    /// Quick looks in a row with growth that tell a flood ([`crate::admission::Law::quick_looks`];
    /// 0: none).
    pub(crate) quick: u32,
}

/// Whether a flood is bounded, since when, and at what.
pub(crate) struct Flood {
    /// The in-flight count when the last bucket opened, and for how many buckets in a row
    /// it has grown.
    last_inflight: AtomicU32,
    growing: AtomicU32,
    /// The same at every look, quick or a bucket's first, and whether the last verdict on
    /// the demand was a surge.
    quick_last: AtomicU32,
    quick_growing: AtomicU32,
    surged: AtomicU32,
    /// The bucket the bound holds until (0: never engaged), whether it holds, the in-flight
    /// count it last engaged at, and how many buckets it holds for.
    until: AtomicU32,
    holding: AtomicU32,
    engaged_at: AtomicU32,
    hold: AtomicU32,
    /// The bound, in 1/256ths of a request, fixed when it engages.
    fine: AtomicU32,
    /// Whether the arrivals were counted yet, when (in milliseconds), and how many had
    /// arrived in all then: the start of the span the next rate is measured over.
    counted: AtomicU32,
    counted_ms: AtomicU32,
    arrived: AtomicU32,
    /// When the last look came (in milliseconds of the clock), and the milliseconds of
    /// quiet spells in all when the span started and now.
    looked_ms: AtomicU32,
    span_quiet_ms: AtomicU32,
    quiet_ms: AtomicU32,
    /// The rate a flood is measured against, in arrivals per bucket in 256ths (0: none
    /// yet), as the last poll that left the class unbounded measured it
    /// ([`super::step::Step::rate`]).
    before: AtomicU32,
}

impl Flood {
    pub(crate) const fn new(interval: Duration) -> Flood {
        Flood {
            last_inflight: AtomicU32::new(0),
            growing: AtomicU32::new(0),
            quick_last: AtomicU32::new(0),
            quick_growing: AtomicU32::new(0),
            surged: AtomicU32::new(0),
            until: AtomicU32::new(0),
            holding: AtomicU32::new(0),
            engaged_at: AtomicU32::new(0),
            hold: AtomicU32::new(flood_hold(interval)),
            fine: AtomicU32::new(0),
            counted: AtomicU32::new(0),
            counted_ms: AtomicU32::new(0),
            arrived: AtomicU32::new(0),
            looked_ms: AtomicU32::new(0),
            span_quiet_ms: AtomicU32::new(0),
            quiet_ms: AtomicU32::new(0),
            before: AtomicU32::new(0),
        }
    }

    /// The arrivals per bucket a flood is measured against, in 256ths.
    #[cfg(test)]
    pub(crate) fn rate_before(&self) -> u32 {
        self.before.load(Ordering::Relaxed)
    }

    /// Where the span now started (`None`: no look yet). A poll measures the rate from one
    /// such start to the next ([`super::step::Step::rate`]).
    pub(crate) fn span(&self) -> Option<Span> {
        (self.counted.load(Ordering::Relaxed) != 0).then(|| Span {
            ms: self.counted_ms.load(Ordering::Relaxed),
            arrived: self.arrived.load(Ordering::Relaxed),
            quiet_ms: self.span_quiet_ms.load(Ordering::Relaxed),
        })
    }

    /// The rate a flood is measured against from now on, in arrivals per bucket in
    /// 256ths: a poll left the class unbounded.
    pub(crate) fn set_rate(&self, rate: u32) {
        self.before.store(rate, Ordering::Relaxed);
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

    /// What the arrivals since the start of the span say ([`demand()`]); a verdict other
    /// than [`Demand::Unknown`] ends the span, and the next starts here. Looks come at a
    /// bucket's first completion, which a queue delays, and two of them may be a
    /// millisecond apart: a span goes on over as many looks as it takes to tell (on a
    /// machine's own cores, at most [`OWN_SPAN_MS`]).
    fn demand(&self, seen: &Seen) -> Demand {
        let first = self.counted.swap(1, Ordering::Relaxed) == 0;
        let gap = seen
            .ms
            .wrapping_sub(self.looked_ms.swap(seen.ms, Ordering::Relaxed));
        let quiet_ms = if !first && gap > QUIET_MS {
            self.quiet_ms
                .fetch_add(gap, Ordering::Relaxed)
                .wrapping_add(gap)
        } else {
            self.quiet_ms.load(Ordering::Relaxed)
        };
        if first {
            self.counted_ms.store(seen.ms, Ordering::Relaxed);
            self.arrived.store(seen.arrived, Ordering::Relaxed);
            self.span_quiet_ms.store(quiet_ms, Ordering::Relaxed);
            return Demand::Unknown;
        }
        let elapsed = seen
            .ms
            .wrapping_sub(self.counted_ms.load(Ordering::Relaxed));
        let arrivals = seen
            .arrived
            .wrapping_sub(self.arrived.load(Ordering::Relaxed));
        let (arrivals, elapsed) = (u64::from(arrivals) * 256, u64::from(elapsed));
        let before = u64::from(self.before.load(Ordering::Relaxed));
        let verdict = match seen.capacity {
            Some(capacity) => {
                let capacity = u64::from(capacity);
                match demand_within(arrivals, elapsed, capacity) {
                    // More than the cores serve, and beyond the noise of a known rate before
                    // (a request a bucket or more): a surge from light traffic is told
                    // sooner than by the cores' noise alone, which a surge at twice what
                    // they serve barely passes.
                    Demand::Unknown
                        if before >= 256
                            && arrivals
                                > capacity.saturating_mul(elapsed.max(BUCKET_MS)) / BUCKET_MS
                            && demand(arrivals, elapsed, before) == Demand::Surge =>
                    {
                        Demand::Surge
                    }
                    verdict => verdict,
                }
            }
            None => demand(arrivals, elapsed, before),
        };
        // On a machine's own cores a span between what they serve and the noise above it
        // tells nothing however long it runs: it starts over after [`OWN_SPAN_MS`], so that
        // a surge is measured on its own arrivals, not on the seconds of light traffic
        // before it (light traffic at the capacity a loaded window underestimates held one
        // span open for the whole of its warm-up, and a surge at 1.5 times what the cores
        // serve then took 700 ms to tell).
        let restart = seen.capacity.is_some() && elapsed >= OWN_SPAN_MS;
        if verdict != Demand::Unknown || restart {
            self.arrived.store(seen.arrived, Ordering::Relaxed);
            self.counted_ms.store(seen.ms, Ordering::Relaxed);
            self.span_quiet_ms.store(quiet_ms, Ordering::Relaxed);
        }
        verdict
    }

    /// Once a bucket, or every quarter of one with quick looks: a flood, while not capped, is
    /// an in-flight count that grew at each of the last [`FLOOD_BUCKETS`] buckets' looks,
    /// or of the last [`Seen::quick`] looks, by more than noise (2 plus a quarter of what it
    /// is measured against, [`Seen::cap`]), with arrivals now a surge over the rate at the
    /// last poll that left the class unbounded ([`Demand::Surge`]; at quick looks, the last
    /// verdict a surge, since a quick span is often too short to tell), and above the ceiling
    /// of what it is measured against or finding the cluster `queueing`. It engages the
    /// bound at `base` (what the front end held before it, in 256ths) doubled, or extends
    /// it; the bound holds for its hold after the flood was last seen growing, and lets go
    /// at the first look that finds the demand calm again ([`Demand::Calm`]: it was a
    /// burst, or it went away).
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
            ..
        } = *seen;
        let demand = self.demand(seen);
        let noise = 2 + cap / 4;
        let grew = |last: &AtomicU32, growing: &AtomicU32| {
            if held >= last.swap(held, Ordering::Relaxed).saturating_add(noise) {
                growing.fetch_add(1, Ordering::Relaxed).saturating_add(1)
            } else {
                growing.store(0, Ordering::Relaxed);
                0
            }
        };
        let growing = if seen.bucket {
            grew(&self.last_inflight, &self.growing)
        } else {
            self.growing.load(Ordering::Relaxed)
        };
        // A quick look's span is often too short to tell: the last verdict stands until
        // another comes.
        let surging = match demand {
            Demand::Surge => {
                self.surged.store(1, Ordering::Relaxed);
                true
            }
            Demand::Calm => {
                self.surged.store(0, Ordering::Relaxed);
                false
            }
            Demand::Unknown => self.surged.load(Ordering::Relaxed) != 0,
        };
        let quick =
            seen.quick != 0 && grew(&self.quick_last, &self.quick_growing) >= seen.quick && surging;
        let was_holding = self.holding();
        let flood = !capped
            && ((growing >= FLOOD_BUCKETS && demand == Demand::Surge) || quick)
            && (held > ceiling(cap) || queueing());
        if flood && !was_holding {
            // With a rate to measure the demand against, at least a whole request: one in
            // flight completes, and its completion is the look that lets the bound go when
            // the demand falls back.
            let least = if seen.capacity.is_none() && self.before.load(Ordering::Relaxed) < 256 {
                MIN_FINE
            } else {
                256
            };
            self.engaged_at.store(held, Ordering::Relaxed);
            self.fine
                .store(base().saturating_mul(2).max(least), Ordering::Relaxed);
        } else if was_holding && !capped && demand == Demand::Calm {
            // The demand is back to the rate before: it was a burst, or it went away.
            self.until.store(0, Ordering::Relaxed);
        }
        if flood {
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
#[path = "flood_tests.rs"]
mod tests;
