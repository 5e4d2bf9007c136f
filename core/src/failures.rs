//! Consecutive and total monitor failures, and Fess's rule for how loudly to log them.

use crate::atomic::{AtomicU32, Ordering};
use core::fmt;

/// How loudly a monitor failure is logged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureLevel {
    /// One of the first [`FailureCounter::WARN_LIMIT`] consecutive failures.
    Warn,
    /// Any later consecutive failure: logged at DEBUG so an outage does not flood the log.
    Debug,
}

impl FailureLevel {
    /// The `log` level for this failure.
    #[must_use]
    pub const fn log_level(self) -> log::Level {
        match self {
            FailureLevel::Warn => log::Level::Warn,
            FailureLevel::Debug => log::Level::Debug,
        }
    }
}

/// Consecutive and total monitor failures, with Fess's rule for how loudly to log them:
/// failures 1 to 3 of a streak at WARN, from the 4th on at DEBUG; any success ends the
/// streak. Atomic, so it never races however the monitor is driven.
///
/// ```
/// use load_core::{failures::{FailureCounter, FailureLevel}};
///
/// let counter = FailureCounter::new();
/// let levels: Vec<_> = (0..5).map(|_| counter.count_failure()).collect();
/// assert_eq!(levels[2], FailureLevel::Warn);
/// assert_eq!(levels[3], FailureLevel::Debug);
/// counter.count_success();
/// assert_eq!(counter.consecutive(), 0);
/// assert_eq!(counter.total(), 5);
/// ```
pub struct FailureCounter {
    consecutive: AtomicU32,
    total: AtomicU32,
}

impl FailureCounter {
    /// Consecutive failures logged at WARN before dropping to DEBUG (Fess: 3).
    pub const WARN_LIMIT: u32 = 3;

    /// A counter at zero.
    #[must_use]
    pub const fn new() -> FailureCounter {
        FailureCounter {
            consecutive: AtomicU32::new(0),
            total: AtomicU32::new(0),
        }
    }

    /// Counts a failure and says how loudly to log it.
    pub fn count_failure(&self) -> FailureLevel {
        let _ = self
            .total
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                Some(n.saturating_add(1))
            });
        let previous = self
            .consecutive
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                Some(n.saturating_add(1))
            })
            .unwrap_or(u32::MAX);
        if previous < Self::WARN_LIMIT {
            FailureLevel::Warn
        } else {
            FailureLevel::Debug
        }
    }

    /// Ends a streak; returns how many consecutive failures it had.
    pub fn count_success(&self) -> u32 {
        self.consecutive.swap(0, Ordering::Relaxed)
    }

    /// Failures since the last success.
    #[must_use]
    pub fn consecutive(&self) -> u32 {
        self.consecutive.load(Ordering::Relaxed)
    }

    /// Failures since the counter was created (saturating).
    #[must_use]
    pub fn total(&self) -> u32 {
        self.total.load(Ordering::Relaxed)
    }
}

impl Default for FailureCounter {
    fn default() -> Self {
        FailureCounter::new()
    }
}

impl fmt::Debug for FailureCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FailureCounter")
            .field("consecutive", &self.consecutive())
            .field("total", &self.total())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_levels_follow_the_fess_rule() {
        let counter = FailureCounter::new();
        for n in 1..=3 {
            assert_eq!(counter.count_failure(), FailureLevel::Warn, "failure {n}");
        }
        for n in 4..=10 {
            assert_eq!(counter.count_failure(), FailureLevel::Debug, "failure {n}");
        }
        assert_eq!(counter.count_success(), 10);
        assert_eq!(counter.count_failure(), FailureLevel::Warn);
        assert_eq!(counter.total(), 11);
        assert_eq!(FailureLevel::Debug.log_level(), log::Level::Debug);
    }
}
