//! [`RequestPermit`]: a served request's permit from a [`crate::LoadGuard`], and
//! [`PendingPermit`], which records it only when the answer is complete.

use std::fmt;
use std::sync::Arc;

use load_core::{Clock, control::Ticket};

use crate::guard::GuardShared;

/// A served request's permit from [`crate::LoadGuard::admit`]: owned, `Send` and
/// `'static`, so it can be held across `.await` and moved into a response future. Dropping
/// it, when the answer is complete, counts the request out and records its latency
/// (`load.control.admission=limit`).
///
/// In Fess's mode (the default) it holds nothing and its drop does nothing: admitting
/// costs what [`crate::LoadGuard::check`] costs.
///
/// The permit family: the core's `Ticket` is what the count needs, its `Permit` borrows a
/// `LoadControl`; a [`RequestPermit`] owns its guard (`'static`), and a [`PendingPermit`]
/// wraps one and records the completion only when [`PendingPermit::complete`] is called
/// (dropped before, it abandons).
#[must_use = "dropping the permit at once records a request that took no time"]
pub struct RequestPermit {
    /// The guard and the ticket, for a counted request only (an uncounted one does not
    /// even touch the guard's reference count).
    counted: Option<(Arc<GuardShared>, Ticket)>,
}

impl RequestPermit {
    /// A permit that counts nothing.
    pub(crate) const UNCOUNTED: RequestPermit = RequestPermit { counted: None };

    pub(crate) fn counted(shared: Arc<GuardShared>, ticket: Ticket) -> RequestPermit {
        RequestPermit {
            counted: Some((shared, ticket)),
        }
    }

    /// Whether the request is counted in flight.
    #[must_use]
    pub fn is_counted(&self) -> bool {
        self.counted.is_some()
    }

    /// Counts the request out without recording it as a completion
    /// ([`load_core::LoadControl::abandon`]): call it when the client went away before the
    /// answer, or when the request was answered without the cluster (a 404 of your own, a
    /// cache hit), whose latency would teach the in-flight cap one the cluster never gave.
    pub fn abandon(mut self) {
        if let Some((shared, ticket)) = self.counted.take() {
            shared.control.abandon(ticket);
        }
    }
}

impl Drop for RequestPermit {
    fn drop(&mut self) {
        if let Some((shared, ticket)) = self.counted.take() {
            shared.control.release(ticket, shared.clock.now());
        }
    }
}

impl fmt::Debug for RequestPermit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestPermit")
            .field("counted", &self.is_counted())
            .finish()
    }
}

/// A permit held until the answer is ready: [`PendingPermit::complete`] counts the request
/// out and records its latency; dropped before that (the client went away, the future was
/// cancelled, the handler panicked), it abandons the permit ([`RequestPermit::abandon`]),
/// so that a latency the client chose never teaches the in-flight cap. What a response
/// future holds: the tower layer of `load-tokio` and the demo's handler do.
///
/// ```
/// # use load_runtime::{PendingPermit, RequestPermit};
/// # fn admitted() -> RequestPermit { unimplemented!() }
/// # fn _doc() {
/// let mut pending = PendingPermit::new(admitted());
/// // ... the answer is produced, across `.await` ...
/// pending.complete(); // recorded; had the future been dropped first: abandoned
/// # }
/// ```
/// The permit family: the core's `Ticket` is what the count needs, its `Permit` borrows a
/// `LoadControl`; a [`RequestPermit`] owns its guard (`'static`), and a [`PendingPermit`]
/// wraps one and records the completion only when [`PendingPermit::complete`] is called
/// (dropped before, it abandons).
#[derive(Debug)]
#[must_use = "a pending permit dropped at once abandons its request"]
pub struct PendingPermit(Option<RequestPermit>);

impl PendingPermit {
    /// Holds `permit` until [`PendingPermit::complete`].
    pub fn new(permit: RequestPermit) -> PendingPermit {
        PendingPermit(Some(permit))
    }

    /// The answer is complete: counts the request out and records its latency, once.
    pub fn complete(&mut self) {
        drop(self.0.take());
    }

    /// The answer is complete but did none of the work the cap bounds (a 404, a cache hit):
    /// counts the request out without recording it ([`RequestPermit::abandon`]), once.
    pub fn abandon(&mut self) {
        if let Some(permit) = self.0.take() {
            permit.abandon();
        }
    }
}

impl Drop for PendingPermit {
    fn drop(&mut self) {
        if let Some(permit) = self.0.take() {
            permit.abandon();
        }
    }
}
