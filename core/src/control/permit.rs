//! The permits: what a request admitted holds while it is served ([`Permit`]), what it is
//! built of ([`Ticket`]), and the decision that hands one out ([`Admission`]). The runtime
//! layer wraps a ticket in its own owned permits (`RequestPermit`, `PendingPermit`).

use core::fmt;

use crate::{Class, Clock, Instant, LoadControl};

/// A request admitted under [`crate::AdmissionMode::Limit`], or not counted at all: what
/// [`LoadControl::release`] needs to count it out. The building block of the permits; hold
/// a [`Permit`] (or a runtime layer's) instead, which releases it when dropped.
///
/// The permit family: a [`Ticket`] is what the count needs (no borrow, no drop); a
/// [`Permit`] borrows its `LoadControl` and clock and releases its ticket when dropped; the
/// runtime layer's `RequestPermit` owns its guard instead (`'static`, for async servers),
/// and its `PendingPermit` records the completion only when told the answer is complete.
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
    Rejected(Class),
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
/// The permit family: a [`Ticket`] is what the count needs (no borrow, no drop); a
/// [`Permit`] borrows its `LoadControl` and clock and releases its ticket when dropped; the
/// runtime layer's `RequestPermit` owns its guard instead (`'static`, for async servers),
/// and its `PendingPermit` records the completion only when told the answer is complete.
///
/// ```
/// use load_core::{Admission, AdmissionMode, ControlConfig, LoadControl, Instant, time::ManualClock};
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
