//! The poll loop: sample a [`CpuSource`] at a fixed rate, hand each outcome to a [`Sink`],
//! apply the failure rule, log. One loop serves the cluster monitor and the local sampler.

use core::future::poll_fn;
use core::pin::pin;
use core::task::Poll;
use core::time::Duration;

use futures::future::{Either, select};

use crate::{Clock, CpuSource, failures::FailureCounter, time::Sleep};

mod outcome;
mod sink;
mod stop;

pub use outcome::handle_outcome;
pub use sink::{ClusterSink, LocalSink, Sink};
pub use stop::{Stop, StopWait};

/// What a monitor needs besides its source and sink ([`Schedule::new`], a later version may
/// add to it).
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Schedule<'a, C, Z> {
    /// Time between the starts of two polls.
    pub interval: Duration,
    /// Where the time comes from.
    pub clock: &'a C,
    /// How to wait.
    pub sleep: &'a Z,
    /// Ends the loop when requested.
    pub stop: &'a Stop,
    /// A wait before the first poll (see [`start_delay`]); zero for none.
    pub start_delay: Duration,
}

impl<'a, C, Z> Schedule<'a, C, Z> {
    /// Polls every `interval` on `clock`, waiting with `sleep`, until `stop`; the first
    /// at once ([`Schedule::with_start_delay`] for a wait before it).
    #[must_use]
    pub const fn new(interval: Duration, clock: &'a C, sleep: &'a Z, stop: &'a Stop) -> Self {
        Schedule {
            interval,
            clock,
            sleep,
            stop,
            start_delay: Duration::ZERO,
        }
    }

    /// The same schedule, its first poll after `delay` ([`start_delay`]).
    #[must_use]
    pub const fn with_start_delay(self, delay: Duration) -> Self {
        Schedule {
            start_delay: delay,
            ..self
        }
    }
}

/// A pseudo-random delay in `0..window` for a fleet member's first poll, from `seed` (any
/// per-instance value: a random number, a host id). Instances started together then poll
/// spread over the window instead of in lockstep; each keeps its own fixed rate after.
///
/// ```
/// use core::time::Duration;
/// use load_core::monitor::start_delay;
///
/// let window = Duration::from_secs(1);
/// assert!(start_delay(window, 42) < window);
/// assert_eq!(start_delay(Duration::ZERO, 42), Duration::ZERO);
/// ```
#[must_use]
pub fn start_delay(window: Duration, seed: u64) -> Duration {
    let window_ms = crate::time::duration_millis(window);
    if window_ms == 0 {
        return Duration::ZERO;
    }
    // splitmix64: a seed of any quality comes out evenly spread.
    let z = mix64(seed.wrapping_add(SPLITMIX64_GAMMA));
    Duration::from_millis(z % window_ms)
}

/// SplitMix64's increment: the generator adds it to its state before each [`mix64`].
#[doc(hidden)]
pub const SPLITMIX64_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's finaliser, written once for the workspace (the start's jitter here, the
/// simulation's generator, the local loop's service's work): each bit of `z` spread over
/// all the output's.
#[doc(hidden)]
#[must_use]
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Polls `source` until `stop` is requested, storing each outcome into `sink`.
///
/// - **Fixed rate.** The first poll starts at once (or after `schedule.start_delay`); each next one starts `interval` after
///   the previous start. A poll that overruns its interval makes the next start late (it
///   starts as soon as the overrunning poll ends, and the rate continues from there): there
///   is never more than one poll in flight, and the period does not drift by the poll's
///   duration as Fess's does.
/// - **Each poll** tells the sink it is sent ([`Sink::on_poll_sent`]) before the source's
///   request, and hands it the outcome when it completes ([`handle_outcome`]).
/// - **Failures** go through `failures` ([`FailureCounter`]): the sink records the failure
///   ([`crate::Outcome::Failed`] to [`Sink::on_outcome`]), and `Failed to get <source> CPU stats: <cause>` is logged at
///   WARN for failures 1 to 3 of a streak, at DEBUG after. A success ends the streak and
///   logs `<name>: N%` at DEBUG.
/// - **Stopping** is checked before each poll and interrupts a poll or a sleep in
///   progress.
/// - **Fairness.** The loop yields to its executor after every poll, and an interval below
///   [`MIN_INTERVAL`] (1 ms; only code can set one) runs at 1 ms: a source that answers at
///   once never holds a single-threaded executor.
///
/// `no_std`: the runtime provides the [`Sleep`], the caller the [`Clock`].
pub async fn run<S, K, C, Z>(
    mut source: S,
    sink: &K,
    failures: &FailureCounter,
    schedule: Schedule<'_, C, Z>,
) where
    S: CpuSource,
    K: Sink + ?Sized,
    C: Clock,
    Z: Sleep,
{
    let Schedule {
        interval,
        clock,
        sleep,
        stop,
        start_delay,
    } = schedule;
    if !start_delay.is_zero() {
        let pause = pin!(sleep.sleep(start_delay));
        if let Either::Right(_) = select(pause, pin!(stop.wait())).await {
            return;
        }
    }
    // A loop that never waited would hold its executor: the interval has a floor, and the
    // loop yields after every poll (one extra wake per poll, once a second by default).
    let interval = interval.max(MIN_INTERVAL);
    let mut next_start = clock.now();
    while !stop.is_requested() {
        let outcome = {
            sink.on_poll_sent(clock.now());
            let poll = pin!(source.sample());
            match select(poll, pin!(stop.wait())).await {
                Either::Left((outcome, _)) => outcome,
                Either::Right(((), _)) => break,
            }
        };
        handle_outcome(sink, failures, clock.now(), outcome);
        yield_now().await;

        next_start = next_start + interval;
        let now = clock.now();
        if next_start <= now {
            // The poll overran: start the next one now, and keep the rate from here.
            next_start = now;
            continue;
        }
        let pause = pin!(sleep.sleep(next_start.saturating_duration_since(now)));
        if let Either::Right(_) = select(pause, pin!(stop.wait())).await {
            break;
        }
    }
}

/// The shortest interval [`run`] polls at: a shorter one (possible in code, never from a
/// file) runs at this.
pub const MIN_INTERVAL: Duration = Duration::from_millis(1);

/// Returns `Pending` once, after waking itself: lets the executor run other tasks.
async fn yield_now() {
    let mut yielded = false;
    poll_fn(|cx| {
        if yielded {
            Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::vec::Vec;

    use core::future::Future;

    use super::*;
    use crate::{
        AdaptiveGate, ClusterStatus, CpuPercent, CpuSample, FixedSource, Instant, LoadControl,
        SourceError,
        source::{ScriptedSource, SourceErrorKind},
        time::ManualClock,
    };

    /// A source that records when it was polled and takes `cost` of simulated time.
    struct Timed<'a> {
        clock: &'a ManualClock,
        starts: &'a Mutex<Vec<u64>>,
        cost: Duration,
        stop_after: usize,
        stop: &'a Stop,
    }

    impl CpuSource for Timed<'_> {
        async fn sample(&mut self) -> Result<CpuSample, SourceError> {
            let mut starts = self.starts.lock().unwrap();
            starts.push(self.clock.now().as_millis());
            if starts.len() >= self.stop_after {
                self.stop.request();
            }
            drop(starts);
            self.clock.advance(self.cost);
            Ok(CpuSample::local(CpuPercent::new(10)))
        }
    }

    fn starts(interval_ms: u64, cost_ms: u64, polls: usize) -> Vec<u64> {
        starts_after(0, interval_ms, cost_ms, polls)
    }

    fn starts_after(delay_ms: u64, interval_ms: u64, cost_ms: u64, polls: usize) -> Vec<u64> {
        let clock = ManualClock::new(Instant::ZERO);
        let stop = Stop::new();
        let starts = Mutex::new(Vec::new());
        let control = LoadControl::new(80, 80);
        let status = ClusterStatus::new();
        let source = Timed {
            clock: &clock,
            starts: &starts,
            cost: Duration::from_millis(cost_ms),
            stop_after: polls,
            stop: &stop,
        };
        futures::executor::block_on(run(
            source,
            &ClusterSink::new(&control, &status),
            status.failures(),
            Schedule {
                interval: Duration::from_millis(interval_ms),
                clock: &clock,
                sleep: &clock,
                stop: &stop,
                start_delay: Duration::from_millis(delay_ms),
            },
        ));
        starts.into_inner().unwrap()
    }

    #[test]
    fn polls_start_at_a_fixed_rate_whatever_they_cost() {
        assert_eq!(starts(1000, 0, 5), [0, 1000, 2000, 3000, 4000]);
        assert_eq!(starts(1000, 300, 5), [0, 1000, 2000, 3000, 4000]);
        assert_eq!(starts(1000, 999, 3), [0, 1000, 2000]);
    }

    #[test]
    fn a_start_delay_shifts_the_whole_schedule() {
        assert_eq!(starts_after(370, 1000, 200, 3), [370, 1370, 2370]);
    }

    #[test]
    fn start_delays_spread_over_the_window() {
        let window = Duration::from_millis(1000);
        let mut deciles = [0u32; 10];
        for seed in 0..10_000u64 {
            let delay = start_delay(window, seed);
            assert!(delay < window);
            deciles[(delay.as_millis() / 100) as usize] += 1;
        }
        // Evenly spread: every tenth of the window gets 1,000 +- 15 %.
        assert!(
            deciles.iter().all(|&n| (850..=1150).contains(&n)),
            "{deciles:?}"
        );
    }

    /// A sink that writes down, at each call, what it was told and when.
    struct Told<'a>(&'a Mutex<Vec<(&'static str, u64)>>);

    impl Sink for Told<'_> {
        const NAME: &'static str = "told";
        const SOURCE: &'static str = "told";

        fn on_outcome(&self, now: Instant, _outcome: crate::Outcome) {
            self.0.lock().unwrap().push(("outcome", now.as_millis()));
        }

        fn on_poll_sent(&self, now: Instant) {
            self.0.lock().unwrap().push(("sent", now.as_millis()));
        }
    }

    #[test]
    fn the_sink_hears_each_poll_sent_before_its_request_and_its_outcome_after() {
        let clock = ManualClock::new(Instant::ZERO);
        let stop = Stop::new();
        let starts = Mutex::new(Vec::new());
        let told = Mutex::new(Vec::new());
        let source = Timed {
            clock: &clock,
            starts: &starts,
            cost: Duration::from_millis(200),
            stop_after: 2,
            stop: &stop,
        };
        futures::executor::block_on(run(
            source,
            &Told(&told),
            &FailureCounter::new(),
            Schedule {
                interval: Duration::from_millis(1000),
                clock: &clock,
                sleep: &clock,
                stop: &stop,
                start_delay: Duration::ZERO,
            },
        ));
        assert_eq!(starts.into_inner().unwrap(), [0, 1000]);
        assert_eq!(
            told.into_inner().unwrap(),
            [
                ("sent", 0),
                ("outcome", 200),
                ("sent", 1000),
                ("outcome", 1200)
            ]
        );
    }

    #[test]
    fn an_overrun_makes_the_next_start_late_never_parallel() {
        // Each poll takes 2.5 intervals: the next starts when it ends.
        assert_eq!(starts(1000, 2500, 4), [0, 2500, 5000, 7500]);
    }

    #[test]
    fn failures_fail_open_and_successes_restore() {
        static SCRIPT: [Result<CpuSample, SourceError>; 3] = [
            Ok(CpuSample::local(CpuPercent::new(90))),
            Err(SourceError::of_const(SourceErrorKind::Timeout)),
            Ok(CpuSample::local(CpuPercent::new(70))),
        ];
        let source = ScriptedSource::new(&SCRIPT);
        let control = LoadControl::new(80, 80);
        let status = ClusterStatus::new();
        let (sink, failures) = (ClusterSink::new(&control, &status), status.failures());
        let mut seen = Vec::new();
        for _ in 0..3 {
            let outcome = futures::executor::block_on((&source).sample());
            handle_outcome(&sink, failures, Instant::ZERO, outcome);
            seen.push((
                control.cpu().map_or(0, CpuPercent::get),
                failures.consecutive(),
            ));
        }
        assert_eq!(seen, [(90, 0), (0, 1), (70, 0)]);
    }

    #[test]
    fn the_adaptive_sink_reads_a_failure_as_unknown() {
        let gate: AdaptiveGate = AdaptiveGate::new(crate::GateThreshold::from_fess(50));
        let failures = FailureCounter::new();
        let sink = LocalSink::new(&gate);
        handle_outcome(
            &sink,
            &failures,
            Instant::ZERO,
            Ok(CpuSample::local(CpuPercent::new(90))),
        );
        assert!(!gate.is_open());
        handle_outcome(
            &sink,
            &failures,
            Instant::ZERO,
            Err(SourceError::of(SourceErrorKind::Io)),
        );
        assert!(gate.is_open(), "unknown lets work proceed");
    }

    #[test]
    fn stop_interrupts_a_sleep() {
        // A real sleep that never ends: only the stop can end the loop.
        struct Forever;
        impl Sleep for Forever {
            fn sleep(&self, _: Duration) -> impl Future<Output = ()> + Send {
                core::future::pending()
            }
        }
        let clock = ManualClock::new(Instant::ZERO);
        let stop = Stop::new();
        let source = FixedSource::new(CpuPercent::new(5));
        let control = LoadControl::new(80, 80);
        let status = ClusterStatus::new();
        let sink = ClusterSink::new(&control, &status);
        let mut monitor = std::boxed::Box::pin(run(
            &source,
            &sink,
            status.failures(),
            Schedule {
                interval: Duration::from_secs(1),
                clock: &clock,
                sleep: &Forever,
                stop: &stop,
                start_delay: Duration::ZERO,
            },
        ));
        let waker = futures::task::noop_waker();
        let mut cx = core::task::Context::from_waker(&waker);
        assert!(monitor.as_mut().poll(&mut cx).is_pending());
        assert_eq!(source.taken(), 1);
        stop.request();
        assert!(monitor.as_mut().poll(&mut cx).is_ready());
        assert_eq!(source.taken(), 1);
    }

    #[test]
    fn a_stop_wakes_every_waiter_however_many() {
        use std::sync::Arc;
        use std::task::{Context, Wake, Waker};

        struct Count(std::sync::atomic::AtomicUsize);
        impl Wake for Count {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let stop = Stop::new();
        // Two owners waiting at once (the bug: one waker slot, the first was forgotten),
        // and many more behind them.
        let mut waits: Vec<_> = (0..100).map(|_| Box::pin(stop.wait())).collect();
        let counts: Vec<_> = (0..100)
            .map(|_| Arc::new(Count(std::sync::atomic::AtomicUsize::new(0))))
            .collect();
        for (wait, count) in waits.iter_mut().zip(&counts) {
            let waker = Waker::from(Arc::clone(count));
            assert!(
                wait.as_mut()
                    .poll(&mut Context::from_waker(&waker))
                    .is_pending()
            );
        }
        assert_eq!(stop.waiting(), 100);
        stop.request();
        // Each woken waiter, when polled, wakes the one it carries: poll until all are done.
        let mut done = [false; 100];
        loop {
            let mut progressed = false;
            for i in 0..100 {
                if !done[i] && counts[i].0.load(std::sync::atomic::Ordering::SeqCst) > 0 {
                    let waker = Waker::from(Arc::clone(&counts[i]));
                    done[i] = waits[i]
                        .as_mut()
                        .poll(&mut Context::from_waker(&waker))
                        .is_ready();
                    progressed |= done[i];
                }
            }
            if !progressed {
                break;
            }
        }
        assert!(
            done.iter().all(|d| *d),
            "every waiter was woken and finished"
        );
        assert_eq!(stop.waiting(), 0);
    }

    /// Found from outside: with an interval of zero (or 1 ns) and a source that answers at
    /// once, the loop never yielded, so it held a single-threaded executor forever (the
    /// other monitor starved and shutdown never returned).
    #[test]
    fn a_zero_interval_neither_starves_the_executor_nor_spins() {
        use std::cell::Cell;
        use std::rc::Rc;

        let clock = ManualClock::new(Instant::ZERO);
        let starts = Mutex::new(Vec::new());
        let stop = Stop::new();
        let failures = FailureCounter::new();
        let gate: crate::AdaptiveGate =
            crate::AdaptiveGate::new(crate::GateThreshold::from_fess(50));
        let gate_sink = LocalSink::new(&gate);
        let mut pool = futures::executor::LocalPool::new();
        let seen_by_other = Rc::new(Cell::new(None));
        let (clock_ref, starts_ref, stop_ref) = (&clock, &starts, &stop);
        let monitor = run(
            Timed {
                clock: clock_ref,
                starts: starts_ref,
                cost: Duration::ZERO,
                stop_after: 10_000,
                stop: stop_ref,
            },
            &gate_sink,
            &failures,
            Schedule {
                interval: Duration::ZERO,
                clock: clock_ref,
                sleep: clock_ref,
                stop: stop_ref,
                start_delay: Duration::ZERO,
            },
        );
        let other = {
            let seen = Rc::clone(&seen_by_other);
            async move { seen.set(Some(starts_ref.lock().unwrap().len())) }
        };
        // Both futures borrow locals: run them on this thread's pool, monitor first.
        let monitor: std::pin::Pin<std::boxed::Box<dyn Future<Output = ()> + '_>> =
            std::boxed::Box::pin(monitor);
        let other: std::pin::Pin<std::boxed::Box<dyn Future<Output = ()> + '_>> =
            std::boxed::Box::pin(other);
        let both = futures::future::join(monitor, other);
        pool.run_until(both);
        let polls_before_other = seen_by_other.get().expect("the other task ran");
        assert!(
            polls_before_other <= 1,
            "the other task waited for {polls_before_other} polls"
        );
        // And a zero interval runs at the 1 ms floor, not as fast as the source answers.
        let polls = starts.lock().unwrap().len() as u64;
        assert_eq!(polls, 10_000);
        assert!(
            clock.now().as_millis() >= (polls - 1),
            "{polls} polls in {} ms",
            clock.now().as_millis()
        );
    }
}
