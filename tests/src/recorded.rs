//! A source wrapper that records each poll the way the poller made it, seen from the poller's
//! side: a server only learns that a client gave up when it next looks at the socket, so a
//! count kept there can see an abandoned poll and its successor overlap when the poller never
//! ran them together.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use load_core::{CpuSample, CpuSource, SourceError};

/// One poll: when it started, how long it took, whether it gave a sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Poll {
    /// When `sample` was called.
    pub started: Instant,
    /// Until its future finished.
    pub took: Duration,
    /// Whether it gave a sample.
    pub ok: bool,
}

/// What a [`Recorded`] source saw; shared with the test that reads it.
#[derive(Debug, Default)]
pub struct PollLog {
    polls: Mutex<Vec<Poll>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

impl PollLog {
    /// The polls that finished, in the order they finished.
    pub fn polls(&self) -> Vec<Poll> {
        self.polls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The most polls that were in flight at once (a poll whose future was dropped stops
    /// counting when it is dropped).
    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight.load(Ordering::SeqCst)
    }
}

/// `inner`, recording each of its polls in a [`PollLog`].
#[derive(Debug)]
pub struct Recorded<S> {
    inner: S,
    log: Arc<PollLog>,
}

impl<S> Recorded<S> {
    /// Wraps `inner`; the log to read.
    pub fn new(inner: S) -> (Self, Arc<PollLog>) {
        let log = Arc::new(PollLog::default());
        (
            Self {
                inner,
                log: Arc::clone(&log),
            },
            log,
        )
    }
}

/// Counts a poll in flight until dropped, also when the poll's future is.
struct InFlight<'a>(&'a PollLog);

impl<'a> InFlight<'a> {
    fn enter(log: &'a PollLog) -> Self {
        let now = log.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        log.max_in_flight.fetch_max(now, Ordering::SeqCst);
        Self(log)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

impl<S: CpuSource + Send> CpuSource for Recorded<S> {
    async fn sample(&mut self) -> Result<CpuSample, SourceError> {
        let in_flight = InFlight::enter(&self.log);
        let started = Instant::now();
        let outcome = self.inner.sample().await;
        drop(in_flight);
        self.log
            .polls
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(Poll {
                started,
                took: started.elapsed(),
                ok: outcome.is_ok(),
            });
        outcome
    }

    fn kind(&self) -> load_core::source::SourceKind {
        self.inner.kind()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt as _;
    use load_core::CpuPercent;

    /// Answers 40 % on its second poll: the first is `Pending` (and wakes at once).
    struct YieldsOnce;

    impl CpuSource for YieldsOnce {
        async fn sample(&mut self) -> Result<CpuSample, SourceError> {
            let mut yielded = false;
            std::future::poll_fn(|cx| {
                if yielded {
                    std::task::Poll::Ready(())
                } else {
                    yielded = true;
                    cx.waker().wake_by_ref();
                    std::task::Poll::Pending
                }
            })
            .await;
            Ok(CpuSample::local(CpuPercent::new(40)))
        }
    }

    #[test]
    fn counts_polls_that_overlap_and_stops_counting_one_dropped_mid_way() {
        let (mut a, log) = Recorded::new(YieldsOnce);
        let mut b = Recorded {
            inner: YieldsOnce,
            log: Arc::clone(&log),
        };
        futures::executor::block_on(async {
            assert!(a.sample().await.is_ok());
            assert_eq!(log.max_in_flight(), 1, "one after the other");
            let (x, y) = futures::join!(a.sample(), b.sample());
            assert!(x.is_ok() && y.is_ok());
            assert_eq!(log.max_in_flight(), 2, "both started before either ended");

            let mut dropped = Box::pin(a.sample());
            assert!(dropped.as_mut().now_or_never().is_none());
            assert_eq!(log.in_flight.load(Ordering::SeqCst), 1);
            drop(dropped);
            assert_eq!(log.in_flight.load(Ordering::SeqCst), 0);
        });
        let polls = log.polls();
        assert_eq!(polls.len(), 3, "the dropped poll never finished: {polls:?}");
        assert!(polls.iter().all(|poll| poll.ok));
    }
}
