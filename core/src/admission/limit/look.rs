//! The flood bound's look from the limiter: once a bucket, what the front end holds and
//! receives, measured against what it held before or what its cores serve.

use super::Limiter;
use crate::Instant;
use crate::admission::flood::{FLOOD_STRETCH, Seen};
use crate::atomic::Ordering;

impl Limiter {
    /// What a machine whose CPU is the front end's own serves in a bucket, in 256ths of a
    /// request: its CPUs over the least latency the window keeps, ten seconds of it, so
    /// that a quiet spell forgets nothing (`None`: not its own CPU, or no latency yet).
    fn capacity(&self, now: Instant) -> Option<u32> {
        let cores = self.own_cores.load(Ordering::Relaxed);
        if cores == 0 {
            return None;
        }
        let latency_us = self.window.least_latency_us(now)?;
        let fine = u64::from(cores) * crate::admission::window::BUCKET_MS * 1_000 * 256
            / u64::from(latency_us.max(1));
        Some(u32::try_from(fine).unwrap_or(u32::MAX))
    }

    /// The operating point of a machine's `cores` in tasks, in 256ths of a request: the
    /// law's point on its own load with the relief of a front end that refused nothing
    /// ([`crate::admission::Law::on`]; 4 on one core, 7 on four). Its cores share
    /// themselves among everything in flight, so that each request takes as many times its
    /// work as there are in flight: on the local loop's step a flood bound of twice what
    /// the light traffic held (10 to 16 on one core at half what it serves) held the 0.1-s
    /// windows of the surge's first second at 94 to 180 ms of p99 until the class armed,
    /// where the point held them at 22 to 44 ms (`docs/admission.md`).
    fn own_point_fine(&self, cores: u32) -> u32 {
        let point = self.law.on_own_load().on(cores, 0.0).target * cores as f32 * 256.0;
        // `as` saturates: within `0..=u32::MAX` whatever the law.
        point as u32
    }

    /// The busiest node's operating point in tasks, in 256ths of a request, without the
    /// relief of a front end that refused nothing ([`crate::admission::Law::on`]; 4 on one
    /// core, 7 on four): every core busy and a few waiting.
    fn node_point_fine(&self, cores: u32) -> u32 {
        let point = self.law.on(cores, 1.0).target * cores as f32 * 256.0;
        // `as` saturates: within `0..=u32::MAX` whatever the law.
        point as u32
    }

    /// The flood bound's look at the in-flight count, in the bucket `epoch`: a flood, while
    /// not capped ([`crate::admission::flood::Flood::observe`]), is an in-flight count that grew at each of the last
    /// [`crate::admission::flood::FLOOD_BUCKETS`] buckets, or of the last quick looks
    /// ([`crate::admission::Law::quick_looks`]), by more than noise, and is above the ceiling
    /// of what the front end held at the last poll that left it unbounded (a surge cannot
    /// move it before a poll does; with
    /// `FloodBase::Below`, only a poll that finds the
    /// busiest node at or below its operating point; with
    /// [`crate::admission::Law::flood_point`], at most that point) or finds the cluster
    /// queueing (a cluster's front end only: the last bucket's mean latency at least
    /// [`FLOOD_STRETCH`] times the least);
    /// the bound then holds it at twice that. A burst is not a flood: it arrives at once and
    /// then drains.
    ///
    /// A look at an `arrival` on a machine whose CPU is the front end's own waits for the
    /// capacity of its cores to be known (a completion in the window): before it, growth
    /// alone would tell a ramp of slow requests from a flood no better than a node's
    /// front end could (`Law::ARRIVALS`).
    #[cold]
    pub(super) fn look(&self, now: Instant, epoch: u32, armed: bool, arrival: bool) {
        let capped = armed;
        let capacity = self.capacity(now);
        if arrival && !self.law.watch.requests() && capacity.is_none() {
            return;
        }
        let held = self.counts.in_flight();
        let estimate = self.window.estimate(now);
        // Capped, the class is bounded already: a flood is what the CPU has not seen yet.
        // What the front end held at quiet, with `Law::flood_point` at most the busiest
        // node's operating point (a warm front end's 14 to 28, where the point of a one-core
        // node is 4, put the ceiling a flood must pass at 44 to 80 in flight), and bounded
        // at most at the point (half of it, doubled, below).
        let point = match (
            self.own_cores.load(Ordering::Relaxed),
            self.node_cores.load(Ordering::Relaxed),
        ) {
            (0, cores) if cores != 0 && self.law.flood_point => self.node_point_fine(cores),
            _ => u32::MAX,
        };
        let quiet = self.quiet.load(Ordering::Relaxed).min(point);
        let seen = Seen {
            epoch,
            held,
            arrived: self.counts.arrived(),
            ms: now.as_millis() as u32,
            capacity,
            cap: if !self.law.flood.is_now() {
                (quiet >> 8).max(1)
            } else {
                self.cap()
            },
            capped,
            bucket: self.looked.swap(epoch, Ordering::Relaxed) != epoch,
            quick: if self.quick() {
                u32::from(self.law.quick_looks)
            } else {
                0
            },
        };
        // A cluster queues what a fleet sends, which a front end's own in-flight count does
        // not show; a machine's own cores queue only what the front end holds, which its
        // count shows, and there one long request makes a bucket slow (work exponential at
        // 45 % of a core made a bucket's mean 8 times the least, and the bound refused
        // light traffic, once in about two thousand 20-s runs).
        let queueing = || {
            self.own_cores.load(Ordering::Relaxed) == 0
                && estimate.is_some_and(|estimate| {
                    self.window.last_mean_us(now).is_some_and(|mean| {
                        u64::from(mean) >= FLOOD_STRETCH * u64::from(estimate.latency_us)
                    })
                })
        };
        // Twice what the front end held at the last poll that set it (with
        // `Law::flood_point`, at most the busiest node's operating point), on a machine
        // whose CPU is its own at most the operating point of its cores in tasks; with
        // `FloodBase::Now`, twice what was in flight on average over the last second (the
        // flood's first buckets in it) or what Little's law gave, whichever is more.
        let base = || {
            if !self.law.flood.is_now() {
                return match self.own_cores.load(Ordering::Relaxed) {
                    0 => quiet.min(point / 2),
                    cores => quiet.min(self.own_point_fine(cores) / 2),
                };
            }
            let area = self.window.mean_in_flight_fine(now);
            area.max(estimate.map_or(0, |e| e.in_flight_fine()))
        };
        self.flood.observe(&seen, queueing, base);
    }
}

#[cfg(test)]
#[path = "look_tests.rs"]
mod tests;
