//! The per-poll law as one pure step: what a poll of the cluster does to the limit mode's
//! state, given what the request side counted since the last one. Everything the step
//! reads is in its arguments and everything it changes is in its result, so that every
//! rule of the law is here, in one function, and a test can drive it poll by poll without
//! requests, clocks or atomics.
//!
//! [`PollState`] is what only the poll touches (the smoothed CPU, the counts the last poll
//! took, the last pool); the [`super::limit::Limiter`] keeps it under the poll's
//! lock, which no request takes. [`Poll`] is one poll's reading and a snapshot of what the
//! requests share with it (the cap, the in-flight count and its recent peak, the flood
//! bound, the completion and refusal counts). [`Step`] is the next state and what the
//! requests will see: the cap, the flood bound released, the cap learnt.

use super::cap::{MIN_FINE, ceiling};
use super::flood::SPAN_MS;
use super::law::{FloodBase, Law, Start};
use super::window::BUCKET_MS;
use crate::node_stats::SearchPool;

mod demand;
mod own;
mod start;

mod state;

pub(crate) use demand::Averaged;
use own::own_pool;
use start::Starting;
pub(crate) use state::{Poll, PollState, Sent, Step};

/// Polls in a row without the search pool that keep the fleet law as it was (the cap
/// unchanged, the counts kept for the next poll that has it), before the law without the
/// pool takes over.
pub(crate) const POOL_GRACE: u32 = 3;

/// The busiest node's tasks per core, run and waiting: on average since the last poll,
/// or, without the means (a node's first poll), now.
fn load_per_core(pool: &SearchPool) -> f64 {
    let milli = pool.load_per_core_milli().unwrap_or_else(|| {
        let now = (u64::from(pool.active) + u64::from(pool.queue)) * 1000 / u64::from(pool.cores());
        u32::try_from(now).unwrap_or(u32::MAX)
    });
    f64::from(milli) / 1000.0
}

impl Law {
    /// One poll of the law: from the state `before` and the poll `poll`, the next state,
    /// and what the requests see from now on.
    ///
    /// In order:
    ///
    /// 1. The CPU is smoothed ([`Law::smooth`]) and says whether the cluster is saturated
    ///    (on a machine's own load with [`OwnGate::Demand`], the demand beyond its cores
    ///    says it instead, once the poll's counts are taken: [`Law::demand_cpu`]).
    /// 2. A poll with the pool (a node's, or, for a machine whose CPU is the front end's
    ///    own, its own requests in flight over its CPUs: [`own_pool`], with the slack and
    ///    relief of a machine's own load, [`Law::own_slack`]) starts the fleet law (or
    ///    keeps it); one without it holds the
    ///    law as it was for [`POOL_GRACE`] polls in a row (nothing else changes, the counts
    ///    wait for the next poll), and then gives way to the law without the pool, which
    ///    learns the cap from completions alone (the poll takes the counts, and the cap is
    ///    left to the window).
    /// 3. Unbounded (disarmed, no flood), the cap is the window's, and what the front end
    ///    holds (that cap, the mean in flight or the recent peak, whichever is more; with a
    ///    node's pool, when the poll was sent if the monitor said so, [`PollState::sent`]:
    ///    the node read its pool about then, and a late answer finds a surge's) and
    ///    the arrivals per bucket it receives (over the time without quiet spells) are
    ///    what a flood is measured against until
    ///    the next such poll (the arrivals also without a pool), if the busiest node is at
    ///    or below the operating point on average and now ([`FloodBase::Below`]: a poll
    ///    before the CPU armed a surge finds the node queueing, and keeps what the front
    ///    end held before it). Such a poll with a node's pool also takes the front end's
    ///    share of the node: its mean in flight (when the poll was sent, as above) over
    ///    the node's tasks, both on average.
    /// 4. The error: the load per core over the operating point, within the CPU's
    ///    ([`Law::error`]).
    /// 5. A flood bound over a node below the operating point, on average and now, is
    ///    released: a run of arrivals is not a flood. With [`Law::release_by_demand`] the
    ///    node is below it with what the front end refused since the last poll on it too
    ///    (its load and its tasks now over the share admitted): the pool is what the bound
    ///    let through. Disarmed, the class is unbounded again (as in 3). Not on a
    ///    machine's own load, whose pool is the in-flight count the bound holds down:
    ///    there the bound lets go when the demand falls back ([`super::flood`]).
    /// 6. The first bounded poll (or the one that released a flood while armed) starts the
    ///    cap ([`Law::start`]) from the point with the relief ([`Law::relief`]): with
    ///    [`Start::Held`], over that point and saturated (or flooding), at the mean in
    ///    flight over the last second times the point over the load, within the ceiling of
    ///    what is in flight or of the recent peak; otherwise at the larger of that and the
    ///    ceiling of the mean, within the ceiling of the cap or of the recent peak. No
    ///    start is above the larger of the scaled mean and the ceiling of the mean: a
    ///    surge's peak only bounds it. With [`Start::Share`] (the default) the start over
    ///    the point or flooding is from what it holds now, scaled by the node's load now
    ///    or on average, whichever is more, and at most the front end's share of the node
    ///    at its last quiet poll (taken in 3) times the point, and what it held then; it is
    ///    over the point if the node is on average or now.
    /// 7. A front end with no demand since the last poll keeps its cap.
    /// 8. Otherwise the cap moves by [`Law::factor`]: not down while a backlog above the
    ///    ceiling of the cap drains; not up beyond the ceiling of what is in flight or of
    ///    the recent peak, nor (with [`Start::Share`] and a node's pool) while a flood
    ///    bound alone holds the class, or (with [`Law::release_by_demand`]) at the poll
    ///    that arms it while a flood bound holds: the refusals since the last poll were
    ///    the bound's; never below [`MIN_FINE`].
    pub(crate) fn step(&self, before: &PollState, poll: &Poll) -> Step {
        let mut state = *before;
        // What the front end held when this poll was sent, if the monitor said so and the
        // answer is a node's pool (read at about that time); else what it holds now.
        state.sent = None;
        let sent = before.sent.filter(|_| poll.pool.is_some()).unwrap_or(Sent {
            holds: Sent::holds(poll.fine, poll.mean_fine, poll.peak),
            mean_fine: poll.mean_fine,
        });
        // The arrivals per bucket since the last poll's span start, over the time without
        // quiet spells between them, at least half a bucket of it (else the start stays,
        // and the next poll measures from it).
        let rate = match (before.span, poll.span) {
            (Some(from), Some(now)) => {
                let quiet = now.quiet_ms.wrapping_sub(from.quiet_ms);
                let elapsed = u64::from(now.ms.wrapping_sub(from.ms).saturating_sub(quiet));
                if elapsed < SPAN_MS {
                    None
                } else {
                    state.span = poll.span;
                    let arrived = now.arrived.wrapping_sub(from.arrived);
                    let per_bucket = u64::from(arrived) * 256 * BUCKET_MS / elapsed;
                    Some(u32::try_from(per_bucket).unwrap_or(u32::MAX))
                }
            }
            (None, span) => {
                state.span = span;
                None
            }
            (Some(_), None) => None,
        };
        let unchanged = |state: PollState| Step {
            state,
            fine: None,
            release: false,
            learned: false,
            quiet: None,
            rate: None,
        };
        // What the front end holds, for a poll that leaves its class unbounded: the cap,
        // the mean in flight or the recent peak, whichever is more, when the poll was sent.
        let quiet = (!self.flood.is_now()).then_some(sent.holds);

        // 1. The CPU.
        let smoothed = before
            .cpu_milli
            .map_or(-1.0, |milli| f64::from(milli) / 1000.0);
        let cpu = self.smooth(smoothed, poll.cpu);
        state.cpu_milli = Some((cpu * 1000.0) as u32);
        let saturated = self.saturated == 0 || cpu >= f64::from(self.saturated);
        state.saturated = saturated;

        // 2. The pool (a node's, or a machine's own load), or the grace without it.
        let own = poll
            .own_cores
            .filter(|_| poll.pool.is_none())
            .map(|cores| own_pool(cores, poll.in_flight, poll.mean_fine));
        let pool = poll.pool.or(own);
        match pool {
            Some(_) => {
                state.missed = 0;
                state.fleet = true;
                // What the stats show: a node's pool only.
                state.pool = poll.pool;
                state.own_cores = own.map(|_| poll.own_cores.unwrap_or(1).max(1));
            }
            None => {
                state.missed = before.missed.saturating_add(1);
                if before.fleet && state.missed <= POOL_GRACE {
                    return unchanged(state);
                }
                state.fleet = false;
                state.pool = None;
                state.own_cores = None;
            }
        }
        let completed = poll.completed.wrapping_sub(before.completed_seen);
        let refused_since = poll.refused.wrapping_sub(before.refused_seen);
        state.completed_seen = poll.completed;
        state.refused_seen = poll.refused;
        state.in_flight_seen = poll.in_flight;
        let demand = refused_since.saturating_add(completed);
        let refused = if demand > 0 {
            f64::from(refused_since) / f64::from(demand)
        } else {
            0.0
        };
        state.refused_percent = (refused * 100.0).min(100.0) as u8;
        let bounded = poll.armed || poll.flooding;
        state.bounded = bounded;
        state.armed = poll.armed;
        let Some(pool) = pool else {
            return Step {
                rate: rate.filter(|_| !bounded && !self.flood.is_now()),
                ..unchanged(state)
            };
        };

        // On a machine's own load, its own slack and relief, and (with `OwnGate::Demand`)
        // saturated by the CPU its demand would take rather than by the CPU it is given;
        // on a node's, that gate too with `demand_on_node`.
        let (this, cpu) = match poll.pool {
            None => self.saturated_by_demand(self.on_own_load(), before, poll, cpu, &mut state),
            Some(_) if self.demand_on_node => {
                self.saturated_by_demand(*self, before, poll, cpu, &mut state)
            }
            Some(_) => (*self, cpu),
        };
        let saturated = state.saturated;
        let law = this.on_cores(pool.cores());
        let load = load_per_core(&pool);
        let queued_now = u64::from(pool.active) + u64::from(pool.queue);
        let idle_now = (queued_now as f64) < f64::from(law.target) * f64::from(pool.cores());
        // The busiest node at or below the operating point, on average since the last poll
        // and now.
        let below = idle_now && load <= f64::from(law.target);

        // On a machine's own load, as with `FloodBase::Below`: its pool is what the front
        // end holds, so that a poll in a surge's first moments, before the flood bound
        // engages, would take the surge for what a flood is measured against.
        let quiet = if (self.flood == FloodBase::Below || poll.pool.is_none()) && !below {
            None
        } else {
            quiet
        };

        // This front end's share of the node at quiet: taken at a poll that leaves the
        // class unbounded below the point, from a node's pool with tasks on it.
        if !bounded && below && poll.pool.is_some() && load > 0.0 && sent.mean_fine > 0 {
            let tasks = load * f64::from(pool.cores());
            let share = f64::from(sent.mean_fine) / 256.0 / tasks;
            state.share = Some(share.min(1.0) as f32);
        }

        // 3. Unbounded.
        if !bounded {
            return Step {
                quiet,
                rate: rate.filter(|_| quiet.is_some()),
                ..unchanged(state)
            };
        }

        // 4. The error.
        let start_target = f64::from(this.on(pool.cores(), refused).target);
        let error = law.error(load, cpu);
        let fine = poll.fine;

        // 5. A flood over a node below the operating point, with what the front end
        // refused since the last poll on it too: the node's load and its queue now over
        // the share admitted (as if every front end of a fleet refused as much). The pool
        // is what the flood bound let through: a bound that refused half a surge keeps
        // the node below the point, and a poll that read that would let the surge in
        // before the CPU, a second late, arms the class. Not on a machine's own load: its
        // pool is the in-flight count the flood bound holds down, below the point because
        // the bound holds it there. The refused count at most as much again as the
        // admitted: a bound that admits a fraction of a request refuses nearly all of a
        // light load, and that is no surge.
        let admitted = if self.release_by_demand {
            (1.0 - refused).max(0.5)
        } else {
            1.0
        };
        let (demand_load, demand_now) = (load / admitted, queued_now as f64 / admitted);
        let release = poll.flooding
            && law.error(demand_load, cpu) < 0.0
            && demand_now < f64::from(law.target) * f64::from(pool.cores())
            && poll.pool.is_some();
        let flooding = poll.flooding && !release;
        if release && !poll.armed {
            state.bounded = false;
            return Step {
                release,
                quiet,
                rate: rate.filter(|_| quiet.is_some()),
                ..unchanged(state)
            };
        }

        // 6. Where the cap starts.
        if !before.bounded || release {
            let at = Starting {
                target: start_target,
                load,
                queued_now,
                #[cfg(any(test, feature = "designs"))]
                error,
                saturated,
                #[cfg(any(test, feature = "designs"))]
                flooding,
            };
            let fine = law.start_fine(before, poll, &pool, &at);
            return Step {
                state,
                fine,
                release,
                learned: true,
                quiet: None,
                rate: None,
            };
        }

        // 7. No demand of its own: nothing learnt of its share.
        if demand == 0 {
            return unchanged(state);
        }

        // 8. The cap moves.
        let mut factor = law.factor(refused, error, load);
        // The flood bound refused since the last poll, not the cap (the class was not armed
        // then, or, with `release_by_demand`, is not armed yet): its refused share says
        // nothing of the cap's room, and the node's CPU, a second late, says nothing of the
        // surge yet.
        let bound_refused = !poll.armed || (self.release_by_demand && !before.armed);
        if flooding && bound_refused && law.start == Start::Share && poll.pool.is_some() {
            factor = factor.min(1.0);
        }
        if factor < 1.0 && poll.in_flight > ceiling((fine >> 8).max(1)) {
            // More in flight than the cap admits: a backlog draining, which a smaller cap
            // would not drain faster.
            factor = 1.0;
        }
        // Growth never beyond the ceiling of what is in flight or allowed now, as Little's
        // law's: refusals come from requests that found the cap full. Nor beyond the
        // ceiling of the recent peak in flight: a cap that grows while nothing fills it
        // (armed below saturation) would take many polls to come down when the load steps
        // up.
        let bound = f64::from(ceiling(poll.in_flight.max(poll.peak).max(1))) * 256.0;
        let next = f64::from(fine) * factor;
        let next = if factor > 1.0 {
            next.min(bound.max(f64::from(fine)))
        } else {
            next
        };
        // Within `MIN_FINE..=u32::MAX` by the clamps, so the conversion is exact enough.
        Step {
            state,
            fine: Some(next.max(f64::from(MIN_FINE)) as u32),
            release: false,
            learned: true,
            quiet: None,
            rate: None,
        }
    }
}

#[cfg(test)]
mod tests;
