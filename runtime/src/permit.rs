//! [`RequestPermit`]: a served request's permit from a [`crate::LoadGuard`].

use std::fmt;
use std::sync::Arc;

use load_core::{Clock, Ticket};

use crate::guard::GuardShared;

/// A served request's permit from [`crate::LoadGuard::admit`]: owned, `Send` and
/// `'static`, so it can be held across `.await` and moved into a response future. Dropping
/// it, when the answer is complete, counts the request out and records its latency
/// (`load.control.admission=limit`).
///
/// In Fess's mode (the default) it holds nothing and its drop does nothing: admitting
/// costs what [`crate::LoadGuard::check`] costs.
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
