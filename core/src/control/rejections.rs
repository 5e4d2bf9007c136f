//! Rejections per class, counted on the request path.

use crate::Route;
use crate::atomic::{AtomicU32, Ordering};

/// Rejections of each class (in monitor mode: that would have been), wrapping at 2^32.
pub(super) struct RejectionCounters {
    web: AtomicU32,
    api: AtomicU32,
}

impl RejectionCounters {
    pub(super) const fn new() -> RejectionCounters {
        RejectionCounters {
            web: AtomicU32::new(0),
            api: AtomicU32::new(0),
        }
    }

    fn counter(&self, route: Route) -> &AtomicU32 {
        match route {
            Route::Api => &self.api,
            _ => &self.web,
        }
    }

    #[cold]
    pub(super) fn count(&self, route: Route) {
        self.counter(route).fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn total(&self, route: Route) -> u32 {
        self.counter(route).load(Ordering::Relaxed)
    }
}
