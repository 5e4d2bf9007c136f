//! What the limiter learns once a bucket, at its first completion: the cap from the
//! window's completions (Little's law), the recent peak and the mean in flight.

use super::Limiter;
use crate::Instant;
use crate::admission::cap::{MIN_FINE, ceiling};
use crate::admission::window::Window;
use crate::atomic::Ordering;

impl Limiter {
    /// Stores the cap `next` learnt from `loaded`, unless a poll moved the cap meanwhile:
    /// the poll's update wins, and the next bucket learns from it.
    pub(super) fn settle(&self, loaded: u32, next: u32) {
        let _ = self
            .fine
            .compare_exchange(loaded, next, Ordering::Relaxed, Ordering::Relaxed);
    }

    /// Once a bucket, at its first completion: the cap, the recent peak and the mean in
    /// flight.
    ///
    /// Unbounded, and always without the cluster's pool, the cap follows the window's
    /// estimate (Little's law); bounded with the pool, the poll moves it instead, and this
    /// leaves it alone. The estimate is never above the ceiling of what is in flight or
    /// allowed now: however a bucket's completions line up (requests held for a minute,
    /// then completed together), the cap grows by at most the ceiling's factor a bucket, as
    /// fast as real load needs, not to what no load ever held. Without the pool it is never
    /// below the initial cap, and an empty window (no completion for a second) starts over
    /// from it, so that a step in load after a quiet spell meets the cold start's bound.
    pub(super) fn learn(&self, now: Instant, armed: bool) {
        let fleet = self.fleet();
        let capped = armed;
        let bounded = capped || self.flooding();
        let held = self.counts.in_flight();
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
        self.mean
            .store(self.window.mean_in_flight_fine(now), Ordering::Relaxed);
    }
}
