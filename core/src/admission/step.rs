//! The per-poll law as one pure step: what a poll of the cluster does to the limit mode's
//! state, given what the request side counted since the last one. Everything the step
//! reads is in its arguments and everything it changes is in its result, so that every
//! rule of the law is here, in one function, and a test can drive it poll by poll without
//! requests, clocks or atomics.
//!
//! [`PollState`] is what only the poll touches (the smoothed CPU, the price, the counts the
//! last poll took, the last pool); the [`super::limit::Limiter`] keeps it under the poll's
//! lock, which no request takes. [`Poll`] is one poll's reading and a snapshot of what the
//! requests share with it (the cap, the in-flight count and its recent peak, the flood
//! bound, the completion and refusal counts). [`Step`] is the next state and what the
//! requests will see: the cap, the flood bound released, the cap learnt.

use super::cap::{MIN_FINE, ceiling};
use super::law::Law;
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
    /// The completion and refusal counts (wrapping) the last poll took.
    pub(crate) completed_seen: u32,
    pub(crate) refused_seen: u32,
    /// The share of this front end's demand refused between the last two polls that took
    /// the counts, in percent.
    pub(crate) refused_percent: u8,
    /// The price of [`super::law::Rule::Price`], in thousandths.
    pub(crate) price_milli: u32,
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
        completed_seen: 0,
        refused_seen: 0,
        refused_percent: 0,
        price_milli: 0,
    };
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
    /// The front end's completions and refusals at the limit in all (wrapping).
    pub(crate) completed: u32,
    pub(crate) refused: u32,
    /// Requests in flight now.
    pub(crate) in_flight: u32,
    /// The recent peak of the in-flight count.
    pub(crate) peak: u32,
    /// The cap now, in 1/256ths of a request.
    pub(crate) fine: u32,
    /// Whether the flood bound holds.
    pub(crate) flooding: bool,
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

impl Law {
    /// One poll of the law: from the state `before` and the poll `poll`, the next state,
    /// and what the requests see from now on.
    ///
    /// In order:
    ///
    /// 1. The CPU is smoothed ([`Law::smooth`]) and says whether the cluster is saturated.
    /// 2. A poll with the pool starts the fleet law (or keeps it); one without it holds the
    ///    law as it was for [`POOL_GRACE`] polls in a row (nothing else changes, the counts
    ///    wait for the next poll), and then gives way to the law without the pool, which
    ///    learns the cap from completions alone (the poll takes the counts, and the cap is
    ///    left to the window).
    /// 3. Unbounded (disarmed, no flood), the cap is the window's and the price resets.
    /// 4. The error: the load per core over the operating point, within the CPU's
    ///    ([`Law::error`]).
    /// 5. A flood bound over a node below the operating point, on average and now, is
    ///    released: a run of arrivals is not a flood. Disarmed, the class is unbounded
    ///    again.
    /// 6. The first bounded poll (or the one that released a flood while armed) starts the
    ///    cap: below the operating point or below saturation, at the ceiling of the cap or
    ///    of the recent peak in flight; above it, where it is.
    /// 7. A front end with no demand since the last poll keeps its cap.
    /// 8. Otherwise the cap moves by [`Law::factor`]: not down while a backlog above the
    ///    ceiling of the cap drains; not up beyond the ceiling of what is in flight or of
    ///    the recent peak; never below [`MIN_FINE`].
    pub(crate) fn step(&self, before: &PollState, poll: &Poll) -> Step {
        let mut state = *before;
        let unchanged = |state: PollState| Step {
            state,
            fine: None,
            release: false,
            learned: false,
        };

        // 1. The CPU.
        let smoothed = before
            .cpu_milli
            .map_or(-1.0, |milli| f64::from(milli) / 1000.0);
        let cpu = self.smooth(smoothed, poll.cpu);
        state.cpu_milli = Some((cpu * 1000.0) as u32);
        let saturated = self.saturated == 0 || cpu >= f64::from(self.saturated);
        state.saturated = saturated;

        // 2. The pool, or the grace without it.
        match poll.pool {
            Some(pool) => {
                state.missed = 0;
                state.fleet = true;
                state.pool = Some(pool);
            }
            None => {
                state.missed = before.missed.saturating_add(1);
                if before.fleet && state.missed <= POOL_GRACE {
                    return unchanged(state);
                }
                state.fleet = false;
                state.pool = None;
            }
        }
        let completed = poll.completed.wrapping_sub(before.completed_seen);
        let refused_since = poll.refused.wrapping_sub(before.refused_seen);
        state.completed_seen = poll.completed;
        state.refused_seen = poll.refused;
        let demand = refused_since.saturating_add(completed);
        let refused = if demand > 0 {
            f64::from(refused_since) / f64::from(demand)
        } else {
            0.0
        };
        state.refused_percent = (refused * 100.0).min(100.0) as u8;
        let bounded = poll.armed || poll.flooding;
        state.bounded = bounded;
        let Some(pool) = poll.pool else {
            return unchanged(state);
        };

        // 3. Unbounded.
        if !bounded {
            state.price_milli = 0;
            return unchanged(state);
        }

        // 4. The error.
        let load = load_per_core(&pool);
        let error = self.error(load, cpu);
        let fine = poll.fine;

        // 5. A flood over a node below the operating point.
        let queued_now = u64::from(pool.active) + u64::from(pool.queue);
        let idle_now = (queued_now as f64) < f64::from(self.target) * f64::from(pool.cores());
        let release = poll.flooding && error < 0.0 && idle_now;
        let flooding = poll.flooding && !release;
        if release && !poll.armed {
            state.bounded = false;
            return Step {
                release,
                ..unchanged(state)
            };
        }

        // 6. Where the cap starts.
        if !before.bounded || release {
            let fine = ((error < 0.0 || !saturated) && !flooding)
                .then(|| ceiling((fine >> 8).max(poll.peak).max(1)).saturating_mul(256));
            return Step {
                state,
                fine,
                release,
                learned: true,
            };
        }

        // 7. No demand of its own: nothing learnt of its share.
        if demand == 0 {
            return unchanged(state);
        }

        // 8. The cap moves.
        let mut price = f64::from(before.price_milli) / 1000.0;
        let mut factor = self.factor(refused, error, load, &pool, &mut price);
        state.price_milli = (price * 1000.0) as u32;
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
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-core node (two threads) with `load_milli` tasks per core on average since the
    /// last poll, and as many now.
    fn node(load_milli: u32) -> Option<SearchPool> {
        let now = load_milli / 1000;
        Some(
            SearchPool::new(2, now.min(2), now.saturating_sub(2))
                .with_means(load_milli.min(1000), load_milli.saturating_sub(1000)),
        )
    }

    fn poll(armed: bool, cpu: u8, pool: Option<SearchPool>, fine: u32) -> Poll {
        Poll {
            armed,
            cpu,
            pool,
            completed: 0,
            refused: 0,
            in_flight: 0,
            peak: 0,
            fine,
            flooding: false,
        }
    }

    /// Runs `polls` in order from a fresh state, carrying the cap and the counts on.
    fn run(polls: &[Poll]) -> (PollState, Vec<Step>) {
        let law = Law::DEFAULT;
        let mut state = PollState::NEW;
        let mut steps = Vec::new();
        let mut fine = polls.first().map_or(0, |p| p.fine);
        for poll in polls {
            let poll = Poll { fine, ..*poll };
            let step = law.step(&state, &poll);
            state = step.state;
            fine = step.fine.unwrap_or(fine);
            steps.push(step);
        }
        (state, steps)
    }

    #[test]
    fn unbounded_the_poll_only_reads_and_takes_the_counts() {
        let (state, steps) = run(&[Poll {
            completed: 30,
            refused: 10,
            ..poll(false, 99, node(3_000), 8 * 256)
        }]);
        assert_eq!(steps[0].fine, None);
        assert!(!steps[0].learned && !steps[0].release);
        assert!(state.fleet && state.saturated && !state.bounded);
        assert_eq!((state.completed_seen, state.refused_seen), (30, 10));
        assert_eq!(state.refused_percent, 25);
        assert_eq!(state.cpu_milli, Some(99_000));
    }

    /// Arming below saturation starts the cap at the ceiling of the cap or of the recent
    /// peak; arming above the operating point leaves it where it is.
    #[test]
    fn arming_starts_the_cap_by_where_the_node_is() {
        let (_, steps) = run(&[Poll {
            peak: 12,
            ..poll(true, 50, node(500), 4 * 256)
        }]);
        // ceiling(max(4, 12)) = 24 + ceil(3 sqrt 24) = 24 + 15 = 39.
        assert_eq!(steps[0].fine, Some(39 * 256));
        assert!(steps[0].learned);
        let (_, steps) = run(&[poll(true, 99, node(3_000), 4 * 256)]);
        assert_eq!(
            steps[0].fine, None,
            "saturated, over the point: from where it is"
        );
        assert!(steps[0].learned);
    }

    /// Armed, a poll moves the cap by the refused share less the error; with no demand it
    /// stays; with a backlog over the ceiling it does not shrink; never below an eighth.
    #[test]
    fn armed_the_cap_moves_by_the_refused_share_less_the_error() {
        let fine = 10 * 256;
        let at = |completed: u32, refused: u32, in_flight: u32, load: u32| Poll {
            completed,
            refused,
            in_flight,
            peak: 40,
            ..poll(true, 99, node(load), fine)
        };
        // 1 + 0.5 - (2 - 1.25) = 0.75.
        let (_, steps) = run(&[at(0, 0, 0, 1_250), at(10, 10, 0, 2_000)]);
        assert_eq!(steps[1].fine, Some((f64::from(fine) * 0.75) as u32));
        // No demand since the last poll: left alone.
        let (_, steps) = run(&[at(10, 10, 0, 1_250), at(10, 10, 0, 9_000)]);
        assert_eq!(steps[1].fine, None);
        assert!(!steps[1].learned);
        // A backlog above the ceiling of the cap (34 for 10): it does not shrink.
        let (_, steps) = run(&[at(0, 0, 0, 1_250), at(10, 0, 35, 9_000)]);
        assert_eq!(steps[1].fine, Some(fine));
        let (_, steps) = run(&[at(0, 0, 0, 1_250), at(10, 0, 34, 9_000)]);
        assert_eq!(steps[1].fine, Some((f64::from(fine) / 1.4) as u32));
        // Far over, poll after poll: down to an eighth of a request, not to nothing.
        let mut polls = vec![at(0, 0, 0, 1_250)];
        polls.extend((1..40).map(|n| at(n, 0, 0, 9_000)));
        let (_, steps) = run(&polls);
        assert_eq!(steps.last().unwrap().fine, Some(MIN_FINE));
    }

    /// Growth stops at the ceiling of what is in flight or of the recent peak.
    #[test]
    fn growth_stops_at_the_ceiling_of_the_peak() {
        let armed = |completed: u32, refused: u32| Poll {
            completed,
            refused,
            in_flight: 2,
            peak: 3,
            ..poll(true, 99, node(1_250), 16 * 256)
        };
        // Half refused at the operating point: 1.5, clamped to 1.4, but the ceiling of 3 is
        // 6 + 8 = 14, under the cap of 16: it stays.
        let (_, steps) = run(&[armed(0, 0), armed(10, 10)]);
        assert_eq!(steps[1].fine, Some(16 * 256));
    }

    /// A poll without the pool holds the fleet law for three polls (nothing changes, the
    /// counts wait), then the law without the pool takes over.
    #[test]
    fn without_the_pool_the_law_holds_for_the_grace() {
        let mut polls = vec![poll(true, 99, node(1_250), 8 * 256)];
        polls.extend((0..4).map(|n| Poll {
            completed: 10 * (n + 1),
            ..poll(true, 99, None, 8 * 256)
        }));
        let (state, steps) = run(&polls);
        for step in &steps[1..4] {
            assert!(step.state.fleet);
            assert_eq!(step.state.completed_seen, 0, "the counts wait");
            assert_eq!(step.fine, None);
        }
        assert!(!state.fleet, "the fourth miss ends it");
        assert_eq!(state.pool, None);
        assert_eq!(state.completed_seen, 40);
        assert_eq!(steps[4].fine, None, "the window's cap, not the law's");
    }

    /// A flood bound over a node below the operating point is released; disarmed, the
    /// class is unbounded again; armed, the cap starts as at arming.
    #[test]
    fn a_flood_over_an_idle_node_is_released() {
        let flood = |armed: bool| Poll {
            flooding: true,
            peak: 5,
            ..poll(armed, 20, node(300), 2 * 256)
        };
        let (state, steps) = run(&[flood(false)]);
        assert!(steps[0].release);
        assert!(!state.bounded && !steps[0].learned);
        assert_eq!(steps[0].fine, None);
        let (_, steps) = run(&[flood(true)]);
        assert!(steps[0].release && steps[0].learned);
        // ceiling(max(2, 5)) = 10 + ceil(3 sqrt 10) = 10 + 10 = 20.
        assert_eq!(steps[0].fine, Some(20 * 256));
        // Over a busy node it holds.
        let (_, steps) = run(&[Poll {
            pool: node(3_000),
            cpu: 99,
            ..flood(false)
        }]);
        assert!(!steps[0].release);
    }

    #[test]
    fn the_cpu_is_smoothed_across_polls() {
        let (state, _) = run(&[poll(false, 100, None, 256), poll(false, 60, None, 256)]);
        // 0.15 x 60 + 0.85 x 100 = 94: still saturated.
        let cpu = state.cpu_milli.unwrap();
        assert!((93_990..=94_000).contains(&cpu), "{cpu}");
        assert!(state.saturated);
    }
}
