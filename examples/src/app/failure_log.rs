//! Failed searches, logged at a rate an outage cannot flood.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::search::SearchError;

/// Seconds between two lines.
const EVERY_S: u64 = 10;

/// Logs failed searches at WARN, at most once every 10 s with the count in between: an
/// outage must not flood the log at the request rate.
#[derive(Debug, Default)]
pub(crate) struct FailureLog {
    /// Seconds since `UNIX_EPOCH` of the last line.
    last: AtomicU64,
    suppressed: AtomicU64,
}

impl FailureLog {
    pub(crate) fn failed(&self, error: &SearchError) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if let Some(more) = self.line_due(now) {
            log::warn!("Search failed: {error} ({more} more failure(s) since the last line)");
        }
    }

    /// A failure at `now` (seconds): `Some` with the failures left unlogged since the last
    /// line when a line is due (the first, or 10 s after the last), else `None` (counted).
    fn line_due(&self, now: u64) -> Option<u64> {
        let last = self.last.load(Ordering::Relaxed);
        if now >= last.saturating_add(EVERY_S)
            && self
                .last
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            Some(self.suppressed.swap(0, Ordering::Relaxed))
        } else {
            self.suppressed.fetch_add(1, Ordering::Relaxed);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::FailureLog;

    /// README, *Run the demo*: failed searches log at most one WARN line every 10 s, with
    /// the count of those in between.
    #[test]
    fn one_line_every_ten_seconds_with_the_count_between() {
        let log = FailureLog::default();
        let start = 1_800_000_000;
        // A failure every 100 ms for 25 s.
        let lines: Vec<(u64, u64)> = (0..250)
            .filter_map(|tenth| {
                let now = start + tenth / 10;
                log.line_due(now).map(|more| (now - start, more))
            })
            .collect();
        assert_eq!(lines, [(0, 0), (10, 99), (20, 99)]);
    }
}
