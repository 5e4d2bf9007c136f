//! The poll's side of the limiter: what a poll is weighed against when it is sent, what
//! its answer changes (the law's step under the poll's lock), and what it told the law.

use core::time::Duration;

use super::Limiter;
use crate::admission::step::{Poll, PollState, Sent};
use crate::atomic::Ordering;
use crate::node_stats::SearchPool;

/// What the last poll told the law, for the stats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PollReading {
    /// The busiest node's search pool, when the poll reported one.
    pub(crate) pool: Option<SearchPool>,
    /// The share of this front end's demand refused since the poll before, in percent.
    pub(crate) refused_percent: u8,
    /// The CPUs of a machine whose CPU is the front end's own, when the poll read its own
    /// load over them as the pool.
    pub(crate) own_cores: Option<u32>,
}

impl Limiter {
    /// A poll is sent: what the front end holds now is what its answer's pool is weighed
    /// against ([`Sent`]), under the poll's lock.
    pub(crate) fn poll_sent(&self) {
        let sent = Sent {
            holds: Sent::holds(
                self.fine.load(Ordering::Relaxed),
                self.mean.load(Ordering::Relaxed),
                self.peak.load(Ordering::Relaxed),
            ),
            mean_fine: self.mean.load(Ordering::Relaxed),
        };
        self.poll.lock(|cell| {
            cell.set(PollState {
                sent: Some(sent),
                ..cell.get()
            });
        });
    }

    /// A poll: the busiest node's CPU, its search pool (`None`: the poll did not report
    /// one) and whether a class is `armed`. The law's step ([`crate::admission::Law::step`]) runs under the
    /// poll's lock on a snapshot of what the requests share with it, and what it changes
    /// is stored back: the cap, the flood bound released, the cap learnt, the fleet law.
    pub(crate) fn on_poll(
        &self,
        armed: bool,
        cpu: u8,
        pool: Option<SearchPool>,
        own_cores: Option<u32>,
    ) {
        self.poll.lock(|cell| {
            let poll = Poll {
                armed,
                cpu,
                pool,
                own_cores,
                completed: self.counts.completed(),
                refused: self.counts.refused(),
                in_flight: self.counts.in_flight(),
                peak: self.peak.load(Ordering::Relaxed),
                mean_fine: self.mean.load(Ordering::Relaxed),
                fine: self.fine.load(Ordering::Relaxed),
                flooding: self.flooding(),
                span: self.flood.span(),
                held: self.quiet.load(Ordering::Relaxed),
            };
            let step = self.law.step(&cell.get(), &poll);
            cell.set(step.state);
            self.fleet
                .store(u32::from(step.state.fleet), Ordering::Relaxed);
            self.own_cores.store(
                own_cores.filter(|_| pool.is_none()).unwrap_or(0),
                Ordering::Relaxed,
            );
            if let Some(pool) = pool {
                self.node_cores.store(pool.cores(), Ordering::Relaxed);
            }
            if step.release {
                self.flood.release();
            }
            if let Some(fine) = step.fine {
                self.fine.store(fine, Ordering::Relaxed);
            }
            if let Some(quiet) = step.quiet {
                self.quiet.store(quiet, Ordering::Relaxed);
            }
            if let Some(rate) = step.rate {
                self.flood.set_rate(rate);
            }
            if step.learned {
                self.learned.store(1, Ordering::Relaxed);
            }
        });
    }

    /// A new poll interval: the flood bound holds for two of them and a second.
    pub(crate) fn set_interval(&self, interval: Duration) {
        self.flood.set_interval(interval);
    }

    /// What the last poll told the law.
    pub(crate) fn reading(&self) -> PollReading {
        self.poll.lock(|state| {
            let state = state.get();
            PollReading {
                pool: state.pool,
                refused_percent: state.refused_percent,
                own_cores: state.own_cores,
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
            self.quiet.store(fine, Ordering::Relaxed);
        } else if !self.fleet() {
            let _ = self
                .fine
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |cap| {
                    Some(cap.max(fine))
                });
        }
    }
}
