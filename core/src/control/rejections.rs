//! Rejections per class, counted on the request path.

use crate::Route;
use crate::atomic::{AtomicU32, Ordering};

/// Rejections of each class by the cluster's CPU (in monitor mode: that would have been),
/// and of both by the limit mode's flood bound, wrapping at 2^32.
pub(super) struct RejectionCounters {
    web: AtomicU32,
    api: AtomicU32,
    flood: AtomicU32,
}

impl RejectionCounters {
    pub(super) const fn new() -> RejectionCounters {
        RejectionCounters {
            web: AtomicU32::new(0),
            api: AtomicU32::new(0),
            flood: AtomicU32::new(0),
        }
    }

    #[cold]
    pub(super) fn count_flood(&self) {
        self.flood.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn flood(&self) -> u32 {
        self.flood.load(Ordering::Relaxed)
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
