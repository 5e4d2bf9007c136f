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
use super::flood::{SPAN_MS, Span};
use super::law::{FloodBase, Law, OwnGate, Start};
use super::window::BUCKET_MS;
use crate::node_stats::SearchPool;

/// Polls in a row without the search pool that keep the fleet law as it was (the cap
/// unchanged, the counts kept for the next poll that has it), before the law without the
/// pool takes over.
pub(crate) const POOL_GRACE: u32 = 3;

/// What only the poll touches, between one poll and the next.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct PollState {
    /// The busiest node's CPU, smoothed ([`Law::smooth`]), in thousandths of a percent
    /// (`None`: no poll yet).
    pub(crate) cpu_milli: Option<u32>,
    /// Whether the smoothed CPU says the cluster is saturated.
    pub(crate) saturated: bool,
    /// Whether the last poll found the class bounded (armed or a flood bounded): the first
    /// bounded poll after an unbounded one is where the cap starts.
    pub(crate) bounded: bool,
    /// Whether the fleet law holds (a poll reported the search pool within the grace).
    pub(crate) fleet: bool,
    /// Polls in a row without the pool.
    pub(crate) missed: u32,
    /// The last poll's search pool (`None`: none, or none within the grace), for the stats.
    pub(crate) pool: Option<SearchPool>,
    /// The CPUs of a machine whose CPU is the front end's own, when the last poll read its
    /// own load over them as the pool ([`own_pool`]), for the stats.
    pub(crate) own_cores: Option<u32>,
    /// The completion and refusal counts (wrapping) the last poll took, and the requests
    /// in flight then.
    pub(crate) completed_seen: u32,
    pub(crate) refused_seen: u32,
    pub(crate) in_flight_seen: u32,
    /// On a machine's own load with [`OwnGate::Demand`]: the CPU its demand would take and
    /// the requests that arrived, averaged over the polls (`None`: no poll that served a
    /// request yet).
    pub(crate) demand: Option<Averaged>,
    /// The share of this front end's demand refused between the last two polls that took
    /// the counts, in percent.
    pub(crate) refused_percent: u8,
    /// The start of the flood bound's span the last poll found ([`Poll::span`]): the
    /// arrivals since are measured from it.
    pub(crate) span: Option<Span>,
    /// This front end's share of the busiest node's load (its mean in flight over the
    /// node's tasks, on average since the poll before) at the last poll that left its
    /// class unbounded with the node at or below the operating point (`None`: none yet).
    pub(crate) share: Option<f32>,
    /// What the front end held when the poll now answering was sent (`None`: the monitor
    /// did not say it sent one, or the last answer took it).
    pub(crate) sent: Option<Sent>,
}

/// What the front end held when a poll was sent ([`PollState::sent`]): a node reads its
/// stats about then, and its answer may come late (in a surge on a fresh front end, behind
/// the surge's own connections), when what the front end holds is the surge's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sent {
    /// The cap, the mean in flight or the recent peak, whichever is more, in 1/256ths.
    pub(crate) holds: u32,
    /// The requests in flight on average over the second before, in 1/256ths.
    pub(crate) mean_fine: u32,
}

impl Sent {
    /// What a front end holds with the cap `fine`, `mean_fine` in flight on average and a
    /// recent peak of `peak`: the cap, the mean or the peak, whichever is more.
    pub(crate) fn holds(fine: u32, mean_fine: u32, peak: u32) -> u32 {
        fine.max(mean_fine).max(peak.saturating_mul(256))
    }
}

impl PollState {
    /// Before the first poll.
    pub(crate) const NEW: PollState = PollState {
        cpu_milli: None,
        saturated: false,
        bounded: false,
        fleet: false,
        missed: 0,
        pool: None,
        own_cores: None,
        completed_seen: 0,
        refused_seen: 0,
        in_flight_seen: 0,
        demand: None,
        refused_percent: 0,
        span: None,
        share: None,
        sent: None,
    };
}

/// The CPU a machine's demand would take ([`Law::demand_cpu`]) and the requests that
/// arrived a poll, each averaged over the polls a quarter of the way at each, and the sum
/// of the squares of the average's weights (1 at the first poll, 1/7 in the long run): its
/// noise is that of `1 / squares` polls.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Averaged {
    pub(crate) demand: f32,
    pub(crate) arrived: f32,
    pub(crate) squares: f32,
}

/// One poll, and what the requests share with it at that moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Poll {
    /// Whether a class is armed.
    pub(crate) armed: bool,
    /// The busiest node's CPU, as the poll read it.
    pub(crate) cpu: u8,
    /// The busiest node's search pool (`None`: the poll did not report one).
    pub(crate) pool: Option<SearchPool>,
    /// Without a pool, the CPUs of a machine whose CPU is the front end's own: its own
    /// requests in flight are the load on them ([`own_pool`]).
    pub(crate) own_cores: Option<u32>,
    /// The front end's completions and refusals at the limit in all (wrapping).
    pub(crate) completed: u32,
    pub(crate) refused: u32,
    /// Requests in flight now.
    pub(crate) in_flight: u32,
    /// The recent peak of the in-flight count.
    pub(crate) peak: u32,
    /// The requests in flight on average over the last second, in 1/256ths.
    pub(crate) mean_fine: u32,
    /// The cap now, in 1/256ths of a request.
    pub(crate) fine: u32,
    /// Whether the flood bound holds.
    pub(crate) flooding: bool,
    /// The start of the flood bound's span now (`None`: no look yet).
    pub(crate) span: Option<Span>,
    /// What the front end held at its last poll that left its class unbounded (with
    /// [`FloodBase::Below`], one that found the node at or below its operating point; the
    /// initial cap before any), in 1/256ths: what a flood is measured against, and the
    /// most [`Start::Share`] starts the cap at.
    pub(crate) held: u32,
}

/// What a poll changes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Step {
    /// The state for the next poll.
    pub(crate) state: PollState,
    /// The new cap, in 1/256ths (`None`: left as it is).
    pub(crate) fine: Option<u32>,
    /// Whether the flood bound is released.
    pub(crate) release: bool,
    /// Whether the cap now comes from the law (it is learnt).
    pub(crate) learned: bool,
    /// What a flood is measured against from now on, in 256ths (`None`: as it was): what
    /// the front end holds at a poll that leaves its class unbounded
    /// ([`FloodBase::Quiet`]).
    pub(crate) quiet: Option<u32>,
    /// The arrivals per bucket a flood is measured against from now on, in 256ths (`None`:
    /// as it was): what the front end received since the last poll, taken at a poll that
    /// leaves the class unbounded as what it holds is, and without a pool at any such poll.
    pub(crate) rate: Option<u32>,
}

/// The busiest node's tasks per core, run and waiting: on average since the last poll,
/// or, without the means (a node's first poll), now.
fn load_per_core(pool: &SearchPool) -> f64 {
    let milli = pool.load_per_core_milli().unwrap_or_else(|| {
        let now = (u64::from(pool.active) + u64::from(pool.queue)) * 1000 / u64::from(pool.cores());
        u32::try_from(now).unwrap_or(u32::MAX)
    });
    f64::from(milli) / 1000.0
}

/// A machine's own load as a pool, for a front end whose CPU is its own over `cores`
/// CPUs: its requests in flight (now, and on average over the last second) run up to one a
/// CPU and the rest wait, as a node's search pool reports its tasks. The pool has the
/// threads OpenSearch would give those cores, so that [`SearchPool::cores`] gives them back.
fn own_pool(cores: u32, in_flight: u32, mean_fine: u32) -> SearchPool {
    let cores = cores.max(1);
    let threads = cores.saturating_mul(3) / 2 + 1;
    let active = in_flight.min(cores);
    let mean_milli = u64::from(mean_fine) * 1000 / 256;
    let active_milli = mean_milli.min(u64::from(cores) * 1000);
    let milli = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    SearchPool::new(threads, active, in_flight - active)
        .with_means(milli(active_milli), milli(mean_milli - active_milli))
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
    ///    released: a run of arrivals is not a flood. Disarmed, the class is unbounded
    ///    again (as in 3). Not on a machine's own load, whose pool is the in-flight count
    ///    the bound holds down: there the bound lets go when the demand falls back
    ///    ([`super::flood`]).
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
    ///    bound alone holds the class; never below [`MIN_FINE`].
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
        let quiet = (self.flood != FloodBase::Now).then_some(sent.holds);

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
        let in_flight_before = before.in_flight_seen;
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
        let Some(pool) = pool else {
            return Step {
                rate: rate.filter(|_| !bounded && self.flood != FloodBase::Now),
                ..unchanged(state)
            };
        };

        // On a machine's own load, its own slack and relief, and (with `OwnGate::Demand`)
        // saturated by the CPU its demand would take rather than by the CPU it is given.
        let (this, cpu) = if poll.pool.is_none() {
            let own = self.on_own_load();
            match self.own_gate {
                OwnGate::Cpu => (own, cpu),
                OwnGate::Demand => {
                    let arrived = (u64::from(completed)
                        + u64::from(refused_since)
                        + u64::from(poll.in_flight))
                    .saturating_sub(u64::from(in_flight_before));
                    // A poll's demand beyond three standard deviations of its arrivals (a
                    // surge, told at once); or, averaged over polls, whose noise is that of
                    // seven polls' arrivals ((2 - 1/4) / (1/4)), beyond two: a load just
                    // beyond the cores, within one poll's noise, is told within a few. A
                    // fresh load's first second, its queue growing from nothing, is within
                    // the first.
                    let (demand, gate) = Law::demand_cpu(poll.cpu, completed, arrived, 3);
                    // A poll with nothing served (a fresh front end's first, at its first
                    // request) says nothing of the demand's CPU: the average starts at the
                    // first that served a request. Its noise is that of `1 / q` polls'
                    // arrivals, `q` the sum of its weights' squares.
                    let averaged = match before.demand {
                        _ if completed == 0 => before.demand,
                        None => Some(Averaged {
                            demand: demand as f32,
                            arrived: arrived as f32,
                            squares: 1.0,
                        }),
                        Some(a) => Some(Averaged {
                            demand: a.demand + (demand as f32 - a.demand) / 4.0,
                            arrived: a.arrived + (arrived as f32 - a.arrived) / 4.0,
                            squares: a.squares * (9.0 / 16.0) + 1.0 / 16.0,
                        }),
                    };
                    state.demand = averaged;
                    let (demand, gate) = match averaged {
                        Some(a) if demand < f64::from(gate) => {
                            let polls = a.arrived / a.squares;
                            let (_, gate) = Law::demand_cpu(0, 1, polls as u64, 2);
                            (f64::from(a.demand), gate)
                        }
                        _ => (demand, gate),
                    };
                    state.saturated = demand >= f64::from(gate);
                    (
                        Law {
                            saturated: gate,
                            ..own
                        },
                        demand,
                    )
                }
            }
        } else {
            (*self, cpu)
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

        // 5. A flood over a node below the operating point. Not on a machine's own load:
        // its pool is the in-flight count the flood bound holds down, below the point
        // because the bound holds it there.
        let release = poll.flooding && error < 0.0 && idle_now && poll.pool.is_some();
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
            let room = ceiling((fine >> 8).max(poll.peak).max(1)).saturating_mul(256);
            let scaled = || {
                // The ceiling of what is in flight or of the recent peak bounds it, as
                // growth is bounded.
                let most = ceiling(poll.in_flight.max(poll.peak).max(1)).saturating_mul(256);
                let scaled = f64::from(poll.mean_fine) * start_target / load.max(1e-3);
                (scaled.min(f64::from(most)) as u32).max(MIN_FINE)
            };
            // Over the point on average since the last poll, or (with the share start) now:
            // a surge the node's means have not caught up with already queues (on the
            // node, two front ends armed with 31 tasks queued on one core, 8 on average
            // since the poll before, and started from the room of their peaks at 23).
            let load_now = queued_now as f64 / f64::from(pool.cores());
            let over_now = law.start == Start::Share && load_now > start_target;
            let over = (load > start_target || over_now) && saturated;
            let fine = match law.start {
                Start::Room => ((error < 0.0 || !saturated) && !flooding).then_some(room),
                Start::Scaled if over || poll.flooding => Some(scaled()),
                Start::Scaled => Some(room),
                Start::Held if over || poll.flooding => Some(scaled()),
                Start::InFlight | Start::Share if over || poll.flooding => {
                    // What it holds now, scaled by the point over the node's load now or
                    // on average, whichever is more: in a surge the mean, learnt from
                    // completions the node's queue delays, is not yet the surge's.
                    let most = ceiling(poll.in_flight.max(poll.peak).max(1)).saturating_mul(256);
                    let holds = poll.mean_fine.max(poll.in_flight.saturating_mul(256));
                    let scaled = f64::from(holds) * start_target / load.max(load_now).max(1e-3);
                    Some((scaled.min(f64::from(most)) as u32).max(MIN_FINE))
                }
                Start::Held | Start::InFlight | Start::Share => {
                    let held = ceiling(poll.mean_fine.div_ceil(256).max(1)).saturating_mul(256);
                    Some(scaled().max(held).min(room))
                }
            };
            // Over the point and saturated, or flooding, at most its share of the node at
            // quiet times the point, and what it held at quiet: its in-flight count and peak
            // are the surge's (below the point the start has room already, within the
            // ceiling of its mean). Not on a machine's own load, whose pool is the front
            // end's own in-flight count: no share to take, and the demand, not the CPU a
            // second late, arms it.
            let fine = match law.start {
                Start::Share if poll.pool.is_some() && (over || poll.flooding) => {
                    fine.map(|fine| {
                        let point = start_target * f64::from(pool.cores()) * 256.0;
                        let share = before.share.map_or(f64::INFINITY, f64::from);
                        let most = f64::from(poll.held).min(share * point);
                        f64::from(fine).min(most).max(f64::from(MIN_FINE)) as u32
                    })
                }
                _ => fine,
            };
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
        if flooding && !poll.armed && law.start == Start::Share && poll.pool.is_some() {
            // The flood bound refuses, not the cap: its refused share says nothing of the
            // cap's room, and the node's CPU, a second late, says nothing of the surge yet.
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
#[path = "step_tests.rs"]
mod tests;
