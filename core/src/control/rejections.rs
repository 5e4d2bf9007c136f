//! Rejections per class and reason, counted on the request path.

use crate::atomic::{AtomicU32, Ordering};
use crate::{Class, RejectReason, Rejections};

/// Rejections of each class by each reason (in monitor mode: that would have been),
/// wrapping at 2^32. An ambiguous request is counted under the class that rejected it.
pub(super) struct RejectionCounters {
    /// Web, then API; each by [`RejectReason::index`].
    counts: [[AtomicU32; 3]; 2],
}

impl RejectionCounters {
    pub(super) const fn new() -> RejectionCounters {
        RejectionCounters {
            counts: [
                [AtomicU32::new(0), AtomicU32::new(0), AtomicU32::new(0)],
                [AtomicU32::new(0), AtomicU32::new(0), AtomicU32::new(0)],
            ],
        }
    }

    fn class(&self, class: Class) -> &[AtomicU32; 3] {
        match class {
            Class::Api => &self.counts[1],
            _ => &self.counts[0],
        }
    }

    #[cold]
    pub(super) fn count(&self, class: Class, reason: RejectReason) {
        self.class(class)[reason.index()].fetch_add(1, Ordering::Relaxed);
    }

    /// The rejections of `class`'s class, by reason.
    pub(super) fn of(&self, class: Class) -> Rejections {
        let class = self.class(class);
        Rejections::from_array([
            class[0].load(Ordering::Relaxed),
            class[1].load(Ordering::Relaxed),
            class[2].load(Ordering::Relaxed),
        ])
    }

    /// The flood bound's rejections, both classes.
    pub(super) fn flood(&self) -> u32 {
        self.of(Class::Web)
            .flood
            .wrapping_add(self.of(Class::Api).flood)
    }
}
