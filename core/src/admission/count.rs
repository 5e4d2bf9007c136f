//! The front end's own requests in the limit mode: in flight, refused at the limit, and
//! completed. These are what every request writes; everything else the law keeps is
//! written once a bucket or once a poll.

use crate::atomic::{AtomicU32, Ordering};

/// An atomic alone on its cache line: the in-flight count and the refusal count change on
/// every request under overload, and neither should make the other's line bounce between
/// cores.
#[repr(align(64))]
struct Line(AtomicU32);

/// The in-flight, refusal and completion counts.
pub(crate) struct Counts {
    inflight: Line,
    /// Requests refused at the limit in all (wrapping): the demand the law weighs growth by.
    refused: Line,
    /// Completions in all (wrapping).
    completed: AtomicU32,
    /// Requests counted out without a completion in all (wrapping): with the others, what
    /// arrived ([`Counts::arrived`]).
    abandoned: AtomicU32,
}

impl Counts {
    pub(crate) const fn new() -> Counts {
        Counts {
            inflight: Line(AtomicU32::new(0)),
            refused: Line(AtomicU32::new(0)),
            completed: AtomicU32::new(0),
            abandoned: AtomicU32::new(0),
        }
    }

    /// Counts a request in if fewer than `limit` are in flight; whether it was. At the limit
    /// a load decides, so that a rejection writes nothing here.
    #[inline]
    pub(crate) fn try_enter(&self, limit: u32) -> bool {
        let inflight = &self.inflight.0;
        if inflight.load(Ordering::Relaxed) >= limit {
            return false;
        }
        let before = inflight.fetch_add(1, Ordering::Relaxed);
        if before < limit {
            return true;
        }
        inflight.fetch_sub(1, Ordering::Relaxed);
        false
    }

    /// Counts a request refused at the limit: the demand the law weighs its growth by.
    #[inline]
    pub(crate) fn refuse(&self) {
        self.refused.0.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a request in, whatever the limit (monitor mode).
    pub(crate) fn enter(&self) {
        self.inflight.0.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a request out that completed.
    pub(crate) fn complete(&self) {
        self.completed.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a request out; whether one was in flight. With nothing in flight (a ticket
    /// from another control) the count stays at zero instead of wrapping to `u32::MAX`,
    /// which would reject everything from then on. A completion is counted apart
    /// ([`Counts::complete`]).
    pub(crate) fn leave(&self) -> bool {
        self.inflight
            .0
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok()
    }

    /// Counts a request out without a completion (the client went away); whether one was
    /// in flight.
    pub(crate) fn abandon(&self) -> bool {
        let left = self.leave();
        if left {
            self.abandoned.fetch_add(1, Ordering::Relaxed);
        }
        left
    }

    /// Requests in flight now.
    pub(crate) fn in_flight(&self) -> u32 {
        self.inflight.0.load(Ordering::Relaxed)
    }

    /// Refusals at the limit in all (wrapping).
    pub(crate) fn refused(&self) -> u32 {
        self.refused.0.load(Ordering::Relaxed)
    }

    /// Completions in all (wrapping).
    pub(crate) fn completed(&self) -> u32 {
        self.completed.load(Ordering::Relaxed)
    }

    /// Requests that arrived in all, admitted or refused (wrapping): in flight, completed,
    /// abandoned and refused, each read once, so a request counted out between two reads
    /// may be counted twice or not at all (an estimate, read once a bucket). In monitor
    /// mode a would-be rejection is counted both refused and in flight.
    pub(crate) fn arrived(&self) -> u32 {
        self.in_flight()
            .wrapping_add(self.completed())
            .wrapping_add(self.abandoned.load(Ordering::Relaxed))
            .wrapping_add(self.refused())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entering_stops_at_the_limit_and_leaving_never_wraps() {
        let counts = Counts::new();
        assert!(counts.try_enter(2));
        assert!(counts.try_enter(2));
        assert!(!counts.try_enter(2), "at the limit");
        counts.refuse();
        assert_eq!((counts.in_flight(), counts.refused()), (2, 1));
        assert_eq!(counts.arrived(), 3);
        assert!(counts.leave());
        counts.complete();
        assert!(counts.abandon());
        assert!(!counts.abandon(), "nothing in flight: no wrap");
        assert!(!counts.leave(), "nothing in flight: no wrap");
        assert_eq!((counts.in_flight(), counts.completed()), (0, 1));
        assert_eq!(
            counts.arrived(),
            3,
            "completed, abandoned and refused, each once"
        );
    }
}
