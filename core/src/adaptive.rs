//! The adaptive gate: background work waits while this machine's CPU is at or above a
//! threshold, and resumes by itself when a sample below it arrives.

use crate::GateThreshold;
use crate::atomic::{AtomicBool, AtomicU8, Ordering};
use core::fmt;
use core::future::Future;
use core::pin::{Pin, pin};
use core::task::{Context, Poll};
use core::time::Duration;

use embassy_sync::blocking_mutex::raw::{CriticalSectionRawMutex, RawMutex};
use futures::future::{Either, select};

use crate::waiters::{Registration, WaitList};
use crate::{Clock, CpuPercent, Instant, gauge::CpuGauge, time::Sleep};

/// How a wait on an [`AdaptiveGate`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[must_use = "a stopped gate means the work should end"]
pub enum Pass {
    /// The gate is open: do the next unit of work.
    Proceed,
    /// The timeout passed first (timed waits only).
    TimedOut,
    /// The gate was stopped ([`AdaptiveGate::stop`]): end the work.
    Stopped,
}

impl Pass {
    /// Whether work may proceed.
    #[must_use]
    pub const fn is_proceed(self) -> bool {
        matches!(self, Pass::Proceed)
    }

    /// Whether the gate was stopped.
    #[must_use]
    pub const fn is_stopped(self) -> bool {
        matches!(self, Pass::Stopped)
    }
}

/// Pauses background work while the local CPU is at or above a threshold.
///
/// A sampler (the monitor loop with a local [`crate::CpuSource`]) calls
/// [`AdaptiveGate::store`] with each sample; workers `await` [`AdaptiveGate::wait`] before
/// each unit of work. A wait completes at once when the gate is disabled (its threshold
/// off: `<= 0` or above 100), when the CPU is unknown, or when it is below the threshold; otherwise it sleeps
/// until a sample below the threshold is stored, or until the gate is stopped.
///
/// # Stopping
///
/// [`AdaptiveGate::stop`] releases every waiter at once with [`Pass::Stopped`], and every
/// later wait returns it at once: background work sees that it should end, even while the
/// CPU is high.
///
/// # Waking without polling or allocation
///
/// Waiters are not re-polled on a timer (Fess wakes every thread every second): they sleep
/// until the gate opens, and any number of them cost one sampler. The gate holds a small
/// fixed table of waker slots; a new waiter takes over a slot and carries the waker it
/// displaced inside its own future, which it wakes when it completes or is dropped. The
/// wakers form chains through the waiting futures themselves, so 10,000 waiters need no
/// allocation and no `unsafe`, and an opening wakes each of them exactly once.
///
/// The lock (an embassy-sync blocking mutex, a critical section by default) is only taken
/// by waiters that must sleep and by the sampler, never by a wait that passes.
///
/// ```
/// use load_core::{AdaptiveGate, CpuPercent, GateThreshold, Pass};
/// # futures::executor::block_on(async {
/// static GATE: AdaptiveGate = AdaptiveGate::new(GateThreshold::from_fess(50));
///
/// GATE.store(CpuPercent::new(30));
/// assert_eq!(GATE.wait().await, Pass::Proceed); // below 50 %: passes at once
///
/// GATE.store(CpuPercent::new(80));
/// assert!(!GATE.is_open()); // a `wait()` now sleeps until a sample below 50 % is stored
///
/// GATE.stop(); // ... or until the gate is stopped
/// assert_eq!(GATE.wait().await, Pass::Stopped);
/// # });
/// ```
pub struct AdaptiveGate<M: RawMutex = CriticalSectionRawMutex> {
    /// [`GateThreshold::get`]: Fess's integer, `0` when off.
    threshold: AtomicU8,
    gauge: CpuGauge,
    stopped: AtomicBool,
    waiters: WaitList<M>,
}

impl<M: RawMutex> AdaptiveGate<M> {
    /// A gate at `threshold` (`adaptive.load.control`; off, it never closes). Its CPU
    /// reads 0 % until the first sample.
    #[must_use]
    pub const fn new(threshold: GateThreshold) -> AdaptiveGate<M> {
        AdaptiveGate {
            threshold: AtomicU8::new(threshold.get()),
            gauge: CpuGauge::new(),
            stopped: AtomicBool::new(false),
            waiters: WaitList::new(),
        }
    }

    /// The threshold.
    #[must_use]
    pub fn threshold(&self) -> GateThreshold {
        GateThreshold::from_fess(i32::from(self.threshold.load(Ordering::Relaxed)))
    }

    /// Changes the threshold at run time; waiters that it lets through are woken at once.
    pub fn set_threshold(&self, threshold: GateThreshold) {
        self.threshold.store(threshold.get(), Ordering::Relaxed);
        if self.is_open() {
            self.waiters.wake_all();
        }
    }

    /// Whether the gate ever closes: its threshold is not off.
    #[must_use]
    pub fn is_enabled(&self) -> bool {
        !self.threshold().is_off()
    }

    /// The latest local CPU sample.
    #[must_use]
    pub const fn gauge(&self) -> &CpuGauge {
        &self.gauge
    }

    /// Whether work may proceed now: disabled, CPU unknown, or CPU below the threshold.
    /// A stopped gate is not open.
    #[must_use]
    pub fn is_open(&self) -> bool {
        !self.is_stopped() && self.open_for(self.gauge.cpu())
    }

    /// Stops the gate for good: every waiter, sleeping now or later, gets
    /// [`Pass::Stopped`]. Sticky.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
        self.waiters.wake_all();
    }

    /// Whether [`AdaptiveGate::stop`] was called.
    #[must_use]
    pub fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    fn open_for(&self, cpu: Option<CpuPercent>) -> bool {
        cpu.is_none_or(|cpu| !self.threshold().is_reached(cpu))
    }

    /// How many [`AdaptiveGate::wait`]s are sleeping now.
    #[must_use]
    pub fn waiting(&self) -> u32 {
        self.waiters.waiting()
    }

    /// Records a sample of the local CPU (`None`: cannot measure). A sample that opens the
    /// gate wakes every waiter. A sample that keeps it closed while work waits logs, at
    /// INFO, `Cpu Load XX% is greater than YY%. N waiting thread(s).`: once per sample,
    /// however many waiters there are.
    pub fn store(&self, cpu: Option<CpuPercent>) {
        self.gauge.store(cpu);
        if self.open_for(cpu) {
            self.waiters.wake_all();
        } else if let (Some(cpu), n @ 1..) = (cpu, self.waiting()) {
            log::info!(
                "Cpu Load {}% is greater than {}%. {} waiting thread(s).",
                cpu.get(),
                self.threshold(),
                n
            );
        }
    }

    /// Waits until work may proceed ([`Pass::Proceed`], see [`AdaptiveGate::is_open`]) or
    /// the gate is stopped ([`Pass::Stopped`]).
    ///
    /// Cancel-safe: dropping the future leaves the gate consistent.
    pub fn wait(&self) -> Wait<'_, M> {
        Wait {
            gate: self,
            registration: Registration::new(),
        }
    }

    /// Waits until work may proceed, the gate is stopped or `deadline` passes, whichever
    /// comes first (Fess's timed wait).
    ///
    /// A gate that is open returns [`Pass::Proceed`] at once, even after the deadline.
    pub async fn wait_until<C: Clock, S: Sleep>(
        &self,
        clock: &C,
        sleep: &S,
        deadline: Instant,
    ) -> Pass {
        if let Some(pass) = self.pass_now() {
            return pass;
        }
        let remaining = deadline.saturating_duration_since(clock.now());
        if remaining.is_zero() {
            return Pass::TimedOut;
        }
        self.wait_timeout(sleep, remaining).await
    }

    /// [`AdaptiveGate::wait_until`] with a relative timeout.
    pub async fn wait_timeout<S: Sleep>(&self, sleep: &S, timeout: Duration) -> Pass {
        if let Some(pass) = self.pass_now() {
            return pass;
        }
        let wait = pin!(self.wait());
        let timer = pin!(sleep.sleep(timeout));
        match select(wait, timer).await {
            Either::Left((pass, _)) => pass,
            Either::Right(((), _)) => self.pass_now().unwrap_or(Pass::TimedOut),
        }
    }

    /// The outcome of a wait that would not sleep, if it would not.
    fn pass_now(&self) -> Option<Pass> {
        if self.is_stopped() {
            Some(Pass::Stopped)
        } else if self.is_open() {
            Some(Pass::Proceed)
        } else {
            None
        }
    }
}

impl<M: RawMutex> fmt::Debug for AdaptiveGate<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdaptiveGate")
            .field("threshold", &self.threshold())
            .field("cpu", &self.gauge.cpu())
            .field("waiting", &self.waiting())
            .field("stopped", &self.is_stopped())
            .finish()
    }
}

/// The future of [`AdaptiveGate::wait`].
#[must_use = "futures do nothing unless awaited"]
pub struct Wait<'a, M: RawMutex = CriticalSectionRawMutex> {
    gate: &'a AdaptiveGate<M>,
    registration: Registration,
}

impl<M: RawMutex> Future for Wait<'_, M> {
    type Output = Pass;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Pass> {
        let this = &mut *self;
        let gate = this.gate;
        this.registration
            .poll(&gate.waiters, cx, || gate.pass_now().is_some())
            .map(|()| gate.pass_now().unwrap_or(Pass::Proceed))
    }
}

impl<M: RawMutex> Drop for Wait<'_, M> {
    fn drop(&mut self) {
        self.registration.release(&self.gate.waiters);
    }
}

impl<M: RawMutex> fmt::Debug for Wait<'_, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Wait")
            .field("registered", &self.registration.is_registered())
            .field("carries_waker", &self.registration.carries_waker())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;
    use std::task::{Wake, Waker};
    use std::vec::Vec;

    use super::*;
    use crate::time::ManualClock;

    /// A waker that counts how often it was woken.
    #[derive(Default)]
    struct Counter(AtomicUsize);

    impl Wake for Counter {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    impl Counter {
        fn wakes(&self) -> usize {
            self.0.load(Ordering::SeqCst)
        }
    }

    struct Task<'a> {
        wait: Pin<std::boxed::Box<Wait<'a>>>,
        counter: Arc<Counter>,
        done: bool,
    }

    impl<'a> Task<'a> {
        fn new(gate: &'a AdaptiveGate) -> Self {
            Task {
                wait: std::boxed::Box::pin(gate.wait()),
                counter: Arc::default(),
                done: false,
            }
        }

        fn poll(&mut self) -> bool {
            let waker = Waker::from(self.counter.clone());
            let ready = self
                .wait
                .as_mut()
                .poll(&mut Context::from_waker(&waker))
                .is_ready();
            self.done |= ready;
            ready
        }
    }

    /// Polls every unfinished task that was woken since its last poll, until none is.
    fn run_woken(tasks: &mut [Task<'_>], seen: &mut [usize]) -> usize {
        let mut polls = 0;
        loop {
            let mut progressed = false;
            for (task, seen) in tasks.iter_mut().zip(seen.iter_mut()) {
                let wakes = task.counter.wakes();
                if !task.done && wakes > *seen {
                    *seen = wakes;
                    task.poll();
                    polls += 1;
                    progressed = true;
                }
            }
            if !progressed {
                return polls;
            }
        }
    }

    fn cpu(n: u8) -> Option<CpuPercent> {
        CpuPercent::new(n)
    }

    #[test]
    fn open_gate_passes_without_registering() {
        let gate: AdaptiveGate = AdaptiveGate::new(GateThreshold::from_fess(50));
        let mut task = Task::new(&gate);
        assert!(task.poll(), "0 % before any sample");
        gate.store(cpu(49));
        assert!(Task::new(&gate).poll());
        gate.store(None);
        assert!(Task::new(&gate).poll(), "unknown CPU lets work proceed");
        assert_eq!(gate.waiting(), 0);
    }

    #[test]
    fn disabled_gate_never_waits() {
        for threshold in [0, -1, 101, i32::MAX] {
            let gate: AdaptiveGate = AdaptiveGate::new(GateThreshold::from_fess(threshold));
            gate.store(cpu(100));
            assert!(gate.is_open());
            assert!(!gate.is_enabled());
            assert!(Task::new(&gate).poll());
        }
    }

    #[test]
    fn closed_gate_sleeps_until_a_sample_below_the_threshold() {
        let gate: AdaptiveGate = AdaptiveGate::new(GateThreshold::from_fess(50));
        gate.store(cpu(50)); // equality closes
        let mut task = Task::new(&gate);
        assert!(!task.poll());
        assert_eq!(gate.waiting(), 1);
        gate.store(cpu(90));
        gate.store(cpu(51));
        assert_eq!(task.counter.wakes(), 0, "no wake while the CPU stays high");
        gate.store(cpu(49));
        assert_eq!(task.counter.wakes(), 1);
        assert!(task.poll());
        assert_eq!(gate.waiting(), 0);
    }

    #[test]
    fn ten_thousand_waiters_wake_once_each_without_polling() {
        let gate: AdaptiveGate = AdaptiveGate::new(GateThreshold::from_fess(50));
        gate.store(cpu(80));
        let mut tasks: Vec<Task<'_>> = (0..10_000).map(|_| Task::new(&gate)).collect();
        for task in &mut tasks {
            assert!(!task.poll());
        }
        assert_eq!(gate.waiting(), 10_000);
        for _ in 0..5 {
            gate.store(cpu(95));
        }
        assert!(
            tasks.iter().all(|t| t.counter.wakes() == 0),
            "sleeping costs nothing"
        );

        gate.store(cpu(10));
        let mut seen = std::vec![0; tasks.len()];
        let polls = run_woken(&mut tasks, &mut seen);
        assert!(tasks.iter().all(|t| t.done), "every waiter resumed");
        assert_eq!(polls, 10_000, "each waiter polled once");
        assert!(tasks.iter().all(|t| t.counter.wakes() == 1));
        assert_eq!(gate.waiting(), 0);
    }

    #[test]
    fn dropped_waiters_do_not_strand_the_others() {
        let gate: AdaptiveGate = AdaptiveGate::new(GateThreshold::from_fess(50));
        gate.store(cpu(80));
        let mut tasks: Vec<Task<'_>> = (0..100).map(|_| Task::new(&gate)).collect();
        for task in &mut tasks {
            task.poll();
        }
        // Cancel every third waiter, as timeouts would.
        let mut kept = Vec::new();
        for (i, task) in tasks.into_iter().enumerate() {
            if i % 3 == 0 {
                drop(task);
            } else {
                kept.push(task);
            }
        }
        let mut seen = std::vec![0; kept.len()];
        run_woken(&mut kept, &mut seen); // the repairs
        assert_eq!(gate.waiting(), kept.len() as u32);
        assert!(kept.iter().all(|t| !t.done));

        gate.store(cpu(20));
        run_woken(&mut kept, &mut seen);
        assert!(kept.iter().all(|t| t.done), "all remaining waiters resumed");
        assert_eq!(gate.waiting(), 0);
    }

    #[test]
    fn reopening_and_closing_between_polls_loses_nobody() {
        let gate: AdaptiveGate = AdaptiveGate::new(GateThreshold::from_fess(50));
        gate.store(cpu(80));
        let mut tasks: Vec<Task<'_>> = (0..64).map(|_| Task::new(&gate)).collect();
        for task in &mut tasks {
            task.poll();
        }
        gate.store(cpu(10));
        gate.store(cpu(90)); // closed again before anyone ran
        let mut seen = std::vec![0; tasks.len()];
        run_woken(&mut tasks, &mut seen);
        assert!(tasks.iter().all(|t| !t.done));
        gate.store(cpu(10));
        run_woken(&mut tasks, &mut seen);
        assert!(tasks.iter().all(|t| t.done));
    }

    #[test]
    fn raising_the_threshold_releases_waiters_at_once() {
        let gate: AdaptiveGate = AdaptiveGate::new(GateThreshold::from_fess(50));
        gate.store(cpu(70));
        let mut task = Task::new(&gate);
        assert!(!task.poll());
        gate.set_threshold(GateThreshold::from_fess(60));
        assert_eq!(task.counter.wakes(), 0, "70 % is still at or above 60 %");
        gate.set_threshold(GateThreshold::from_fess(80));
        assert_eq!(task.counter.wakes(), 1);
        assert!(task.poll());
        gate.set_threshold(GateThreshold::from_fess(0));
        assert!(!gate.is_enabled());
    }

    #[test]
    fn wait_timeout_gives_up_at_the_deadline() {
        let gate: AdaptiveGate = AdaptiveGate::new(GateThreshold::from_fess(50));
        let clock = ManualClock::new(Instant::ZERO);
        gate.store(cpu(75));
        let pass =
            futures::executor::block_on(gate.wait_until(&clock, &clock, Instant::from_secs(3)));
        assert_eq!(pass, Pass::TimedOut);
        assert_eq!(clock.now(), Instant::from_secs(3));
        assert_eq!(gate.waiting(), 0, "the timed-out waiter is gone");
        assert_eq!(
            futures::executor::block_on(gate.wait_until(&clock, &clock, Instant::from_secs(1))),
            Pass::TimedOut
        );
        gate.store(cpu(5));
        assert_eq!(
            futures::executor::block_on(gate.wait_timeout(&clock, Duration::ZERO)),
            Pass::Proceed
        );
    }

    #[test]
    fn stopping_releases_every_waiter_with_stopped() {
        let gate: AdaptiveGate = AdaptiveGate::new(GateThreshold::from_fess(50));
        gate.store(cpu(90));
        let mut tasks: Vec<Task<'_>> = (0..1_000).map(|_| Task::new(&gate)).collect();
        for task in &mut tasks {
            assert!(!task.poll());
        }
        assert_eq!(gate.waiting(), 1_000);
        gate.stop();
        let mut seen = std::vec![0; tasks.len()];
        run_woken(&mut tasks, &mut seen);
        assert!(tasks.iter().all(|t| t.done), "every waiter released");
        assert_eq!(gate.waiting(), 0);
        // Later waits, timed or not, end at once with Stopped, though the CPU is high.
        assert!(!gate.is_open());
        assert_eq!(futures::executor::block_on(gate.wait()), Pass::Stopped);
        let clock = ManualClock::new(Instant::ZERO);
        assert_eq!(
            futures::executor::block_on(gate.wait_timeout(&clock, Duration::from_secs(5))),
            Pass::Stopped
        );
        assert_eq!(clock.now(), Instant::ZERO, "no sleep");
        // A low sample does not undo the stop.
        gate.store(cpu(1));
        assert_eq!(futures::executor::block_on(gate.wait()), Pass::Stopped);
    }
}
