//! The gate a front end is saturated at by its demand ([`OwnGate::Demand`]): the CPU over
//! the requests it served since the last poll, times the requests that arrived, beyond what
//! the CPU serves by more than the arrivals' noise ([`Law::demand_cpu`]). A machine's own
//! load is gated so, and a node's front end with [`Law::demand_on_node`], over the node's
//! CPU.

use super::{Poll, PollState};
use crate::admission::law::{Law, OwnGate};

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

impl Law {
    /// `law` (a machine's own load's, or with [`Law::demand_on_node`] a node's) with the
    /// gate it is saturated at, and the CPU it reads saturation by: with
    /// [`OwnGate::Demand`] the CPU its demand would take, averaged into `state.demand`, or
    /// the CPU `cpu` as smoothed; `state.saturated` says whether it is saturated.
    // `cpu` is read by the design that lost only ([`OwnGate::Cpu`]).
    #[cfg_attr(not(any(test, feature = "designs")), allow(unused_variables))]
    pub(super) fn saturated_by_demand(
        &self,
        law: Law,
        before: &PollState,
        poll: &Poll,
        cpu: f64,
        state: &mut PollState,
    ) -> (Law, f64) {
        let completed = poll.completed.wrapping_sub(before.completed_seen);
        let refused_since = poll.refused.wrapping_sub(before.refused_seen);
        let in_flight_before = before.in_flight_seen;
        match self.own_gate {
            #[cfg(any(test, feature = "designs"))]
            OwnGate::Cpu => (law, cpu),
            OwnGate::Demand => {
                let arrived =
                    (u64::from(completed) + u64::from(refused_since) + u64::from(poll.in_flight))
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
                        ..law
                    },
                    demand,
                )
            }
        }
    }
}
