//! Admission with a permit: a request admitted holds it while it is served, and dropping it
//! records the completion. In `load.control.admission=limit` the cluster poll arms a class
//! and, while armed, the front end admits only while its own in-flight count is under a cap
//! learnt from its completions.
//!
//! # The law
//!
//! - **Arming.** A class is armed while the cluster CPU is at or above its threshold (the
//!   poll decides, with Fess's rule and any hysteresis), and for a cool-off of
//!   `load.control.admission.cooloff` polls (default 2) after it falls below. A failed poll
//!   disarms at once (fail-open). The API class keeps its own, later threshold.
//! - **The cap** is Little's law over the front end's own completions: the completions per
//!   second of the busiest 100 ms bucket of the last second, times the least per-bucket mean
//!   latency of the last ten seconds, never below `load.control.admission.initial`
//!   (default 8). That is what the cluster serves, in flight, without a queue: a queue that
//!   built up since is not taken for the cluster's latency, and a per-request minimum
//!   (which tends to zero and would starve the cluster) is not used. The cap is learnt at
//!   the first completion of every bucket, and grows by at most the ceiling's factor at a
//!   time (never above the ceiling of what is in flight or allowed then), so completions
//!   that line up (requests held for a minute, completed together) cannot teach it what
//!   no load held. A window without a completion for a second starts over from the floor,
//!   and so does a cap learnt more than a second ago: a step in load after a quiet spell
//!   meets the cold start's bound.
//! - **What is recorded** is the cluster's latency: a request whose latency is not the
//!   cluster's is abandoned ([`LoadControl::abandon`], [`Permit::abandon`]) instead, counted
//!   out without a completion. The tower layer abandons a response future dropped before
//!   it was ready (the client went away, or the service panicked); the demo abandons its
//!   404s. Recorded, many instant answers would lower the least latency, and the cap with
//!   it, for the ten seconds it is kept: the estimator's one lever a client holds, as in
//!   the shedders it follows.
//! - **Armed**, a request is admitted while fewer than the cap are in flight; the first
//!   200 ms of every ten seconds, fewer than half of it (a probe, after BBR's ProbeRTT: the
//!   queue the cap allows drains, and the latency the cap assumes is measured again).
//! - **Disarmed**, while fewer than the ceiling are: twice the cap plus three standard
//!   deviations of a Poisson count of that mean, `2 cap + ⌈3 √(2 cap)⌉`. It never binds at
//!   light load (the load that taught the cap fits twice over, with its bursts), but it
//!   bounds the flood that would follow when the CPU dips under the threshold and, from the
//!   start, the work a step in load lets in before the cluster's CPU shows it: before the
//!   first completion the cap is the initial one (8 by default: at most 28 in flight), and
//!   it grows only as completions teach it.
//! - Only controlled requests count (not excluded ones, nor a class whose threshold is off).
//!   The rest are answered with the same busy response as Fess's mode.
//!
//! The law was chosen in a simulation of this loop (`tests/tests/admission_sim.rs`: a
//! cluster whose CPU is reported a second late, open-loop Poisson arrivals, four cluster
//! shapes) against the alternatives that failed there: the least bucket mean of the last
//! second only (a queue let in before the CPU showed it became the latency, and stayed), a
//! gain above one on the cap (the queue grows without end: Little's law returns the in-flight
//! count once a queue stands), and learning only while the ceiling does not bind (a light
//! load above the initial ceiling is never learnt).
//!
//! # Cost
//!
//! In Fess's mode ([`crate::AdmissionMode::Threshold`], the default) a permit is a value
//! with nothing to do: admitting reads what [`crate::LoadControl::check`] reads and nothing
//! more, and dropping the permit does nothing. In the limit mode an admitted request does an
//! atomic increment and a clock read; its permit, when dropped, a clock read, a decrement
//! and two additions to its bucket; abandoned, a decrement.

mod limit;
mod window;

use core::fmt;

pub(crate) use limit::Limiter;

use crate::{Clock, Instant, LoadControl, Route};

/// A request admitted under [`crate::AdmissionMode::Limit`], or not counted at all: what
/// [`LoadControl::release`] needs to count it out. The building block of the permits; hold
/// a [`Permit`] (or a runtime layer's) instead, which releases it when dropped.
#[derive(PartialEq, Eq)]
#[must_use = "a ticket that is never released keeps its request in flight forever"]
pub struct Ticket {
    /// When it was admitted, in microseconds of its clock; [`UNCOUNTED`] when it counts
    /// nothing. Eight bytes, so that a permit is three words and an `Admission` of it no
    /// more (what Fess's mode moves around for every request).
    started: u64,
}

/// [`Ticket::started`]'s "not counted". A counted start at that instant (584,000 years
/// into a clock) is kept one microsecond earlier.
const UNCOUNTED: u64 = u64::MAX;

impl Ticket {
    /// A ticket that counts nothing (Fess's mode, excluded and uncontrolled requests).
    pub const UNCOUNTED: Ticket = Ticket { started: UNCOUNTED };

    pub(crate) const fn counted(started: Instant) -> Ticket {
        let micros = started.as_micros();
        Ticket {
            started: if micros == UNCOUNTED {
                UNCOUNTED - 1
            } else {
                micros
            },
        }
    }

    /// Whether the request is counted in flight (and its release reads the clock).
    #[must_use]
    pub const fn is_counted(&self) -> bool {
        self.started != UNCOUNTED
    }

    /// When it was admitted, if it is counted.
    #[must_use]
    pub const fn started(&self) -> Option<Instant> {
        if self.is_counted() {
            Some(Instant::from_micros(self.started))
        } else {
            None
        }
    }

    /// The ticket's contents, leaving an uncounted one in its place.
    pub(crate) fn take(&mut self) -> Option<Instant> {
        let started = self.started();
        self.started = UNCOUNTED;
        started
    }
}

impl fmt::Debug for Ticket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ticket")
            .field("started", &self.started())
            .finish()
    }
}

/// What to do with a request, with the permit to hold while serving it.
#[derive(Debug)]
#[must_use]
pub enum Admission<P> {
    /// Serve it, holding the permit until the answer is complete.
    Admitted(P),
    /// Answer with the busy response for this class ([`crate::busy::response`]).
    Rejected(Route),
}

impl<P> Admission<P> {
    /// Whether the request may be served.
    #[must_use]
    pub const fn is_admitted(&self) -> bool {
        matches!(self, Admission::Admitted(_))
    }

    /// The permit, if admitted.
    #[must_use = "a permit dropped at once counts its request out as complete: bind it for \
                  as long as the request is served"]
    pub fn permit(self) -> Option<P> {
        match self {
            Admission::Admitted(permit) => Some(permit),
            Admission::Rejected(_) => None,
        }
    }
}

/// A served request's permit, borrowed from its [`LoadControl`] and [`Clock`]: dropping it
/// counts the request out and records its latency. `Send` and `Sync` when the clock is
/// `Sync`, so it can be held across `.await` on a multi-threaded executor.
///
/// ```
/// use load_core::{Admission, AdmissionMode, ControlConfig, LoadControl, ManualClock, Instant};
/// use core::time::Duration;
///
/// let mut config = ControlConfig::new();
/// config.web_threshold = 70.into();
/// config.admission = AdmissionMode::Limit;
/// let control = LoadControl::from_config(&config);
/// let clock = ManualClock::new(Instant::ZERO);
///
/// let Admission::Admitted(permit) = control.admit("/search?q=rust", &clock) else {
///     panic!("admitted at 0 %");
/// };
/// assert_eq!(control.admission().in_flight, 1);
/// clock.advance(Duration::from_millis(20)); // ... the search runs ...
/// drop(permit); // counted out, its 20 ms recorded
/// assert_eq!(control.admission().in_flight, 0);
/// ```
pub struct Permit<'a, C: Clock + ?Sized> {
    control: &'a LoadControl,
    clock: &'a C,
    ticket: Ticket,
}

impl<'a, C: Clock + ?Sized> Permit<'a, C> {
    pub(crate) fn new(control: &'a LoadControl, clock: &'a C, ticket: Ticket) -> Self {
        Permit {
            control,
            clock,
            ticket,
        }
    }

    /// Whether the request is counted in flight.
    #[must_use]
    pub fn is_counted(&self) -> bool {
        self.ticket.is_counted()
    }

    /// Counts the request out without recording its latency ([`LoadControl::abandon`]):
    /// the client went away, or it was answered without the cluster.
    pub fn abandon(mut self) {
        let ticket = core::mem::replace(&mut self.ticket, Ticket::UNCOUNTED);
        self.control.abandon(ticket);
    }
}

impl<C: Clock + ?Sized> Drop for Permit<'_, C> {
    fn drop(&mut self) {
        if self.ticket.is_counted() {
            let ticket = core::mem::replace(&mut self.ticket, Ticket::UNCOUNTED);
            self.control.release(ticket, self.clock.now());
        }
    }
}

impl<C: Clock + ?Sized> fmt::Debug for Permit<'_, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit")
            .field("started", &self.ticket.started)
            .finish_non_exhaustive()
    }
}

/// The limit mode's state, as one snapshot ([`LoadControl::admission`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AdmissionStats {
    /// Whether the web class is armed (in the threshold mode: rejecting).
    pub armed_web: bool,
    /// Whether the API class is armed.
    pub armed_api: bool,
    /// The in-flight cap while armed.
    pub cap: u32,
    /// The in-flight ceiling while disarmed: `2 cap + ⌈3 √(2 cap)⌉`.
    pub ceiling: u32,
    /// Whether the cap was learnt from completions (else it is the initial one).
    pub learned: bool,
    /// Admitted, counted requests in flight now.
    pub in_flight: u32,
    /// Counted requests completed in all (wrapping).
    pub completed: u32,
}

#[cfg(test)]
mod tests;
