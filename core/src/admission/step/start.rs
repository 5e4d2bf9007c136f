//! Where the cap starts, at the first bounded poll (or the one that released a flood while
//! armed): step 6 of [`Law::step`].

use super::{Poll, PollState};
use crate::admission::cap::{MIN_FINE, ceiling};
use crate::admission::law::{Law, Start};
use crate::node_stats::SearchPool;

/// Where the node and the front end stand at the poll that starts the cap.
pub(super) struct Starting {
    /// The operating point in tasks per core the start aims at (with the relief, unless the
    /// front end refused beyond its reach).
    pub(super) target: f64,
    /// The busiest node's tasks per core on average since the last poll, and its tasks now.
    pub(super) load: f64,
    pub(super) queued_now: u64,
    /// The law's error at this poll ([`Law::error`]): [`Start::Room`]'s.
    #[cfg(any(test, feature = "designs"))]
    pub(super) error: f64,
    /// Whether the CPU says the cluster is saturated.
    pub(super) saturated: bool,
    /// Whether a flood bound holds after this poll: [`Start::Room`]'s.
    #[cfg(any(test, feature = "designs"))]
    pub(super) flooding: bool,
}

impl Law {
    /// The cap a bounded class starts at, in 1/256ths (`None`: with [`Start::Room`], none
    /// yet), by [`Law::start`]; `self` is the law on the node's cores.
    pub(super) fn start_fine(
        &self,
        before: &PollState,
        poll: &Poll,
        pool: &SearchPool,
        at: &Starting,
    ) -> Option<u32> {
        let room = ceiling((poll.fine >> 8).max(poll.peak).max(1)).saturating_mul(256);
        let scaled = || {
            // The ceiling of what is in flight or of the recent peak bounds it, as
            // growth is bounded.
            let most = ceiling(poll.in_flight.max(poll.peak).max(1)).saturating_mul(256);
            let scaled = f64::from(poll.mean_fine) * at.target / at.load.max(1e-3);
            (scaled.min(f64::from(most)) as u32).max(MIN_FINE)
        };
        // Over the point on average since the last poll, or (with the share start) now:
        // a surge the node's means have not caught up with already queues (on the node,
        // two front ends armed with 31 tasks queued on one core, 8 on average since the
        // poll before, and started from the room of their peaks at 23).
        let load_now = at.queued_now as f64 / f64::from(pool.cores());
        let over_now = self.start == Start::Share && load_now > at.target;
        let over = (at.load > at.target || over_now) && at.saturated;
        let fine = match self.start {
            #[cfg(any(test, feature = "designs"))]
            Start::Room => ((at.error < 0.0 || !at.saturated) && !at.flooding).then_some(room),
            #[cfg(any(test, feature = "designs"))]
            Start::Scaled if over || poll.flooding => Some(scaled()),
            #[cfg(any(test, feature = "designs"))]
            Start::Scaled => Some(room),
            #[cfg(any(test, feature = "designs"))]
            Start::Held if over || poll.flooding => Some(scaled()),
            start if start.holds_now() && (over || poll.flooding) => {
                // What it holds now, scaled by the point over the node's load now or
                // on average, whichever is more: in a surge the mean, learnt from
                // completions the node's queue delays, is not yet the surge's.
                let most = ceiling(poll.in_flight.max(poll.peak).max(1)).saturating_mul(256);
                let holds = poll.mean_fine.max(poll.in_flight.saturating_mul(256));
                let scaled = f64::from(holds) * at.target / at.load.max(load_now).max(1e-3);
                Some((scaled.min(f64::from(most)) as u32).max(MIN_FINE))
            }
            _ => {
                let held = ceiling(poll.mean_fine.div_ceil(256).max(1)).saturating_mul(256);
                Some(scaled().max(held).min(room))
            }
        };
        // Over the point and saturated, or flooding, or with the node queueing over the
        // point now whatever its CPU, at most its share of the node at quiet times the
        // point, and what it held at quiet: its in-flight count and peak are the surge's
        // (below the point the start has room already, within the ceiling of its mean).
        // Under the gate the room is a surge's mean in flight: in the model a class armed
        // at 88 % CPU with 16 tasks on one core started at 67 where its cap had been 1.63
        // (the short loop, mixed searches, seed 1 at 1.25x). Not on a machine's own load,
        // whose pool is the front end's own in-flight count: no share to take, and the
        // demand, not the CPU a second late, arms it.
        match self.start {
            Start::Share if poll.pool.is_some() && (over || over_now || poll.flooding) => {
                fine.map(|fine| {
                    let point = at.target * f64::from(pool.cores()) * 256.0;
                    let share = before.share.map_or(f64::INFINITY, f64::from);
                    let most = f64::from(poll.held).min(share * point);
                    f64::from(fine).min(most).max(f64::from(MIN_FINE)) as u32
                })
            }
            _ => fine,
        }
    }
}
