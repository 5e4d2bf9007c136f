//! A request to stop, that any number of tasks can wait on.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

use embassy_sync::blocking_mutex::raw::CriticalSectionRawMutex;

use crate::atomic::{AtomicBool, Ordering};
use crate::waiters::{Registration, WaitList};

/// A request to stop, shared between a monitor (or any task) and its owners: any number of
/// tasks may wait on it at once, and a request wakes all of them.
///
/// `const`-constructible; [`Stop::request`] is sticky.
///
/// ```
/// use load_core::monitor::Stop;
///
/// static STOP: Stop = Stop::new();
/// assert!(!STOP.is_requested());
/// STOP.request();
/// futures::executor::block_on(STOP.wait()); // completes at once
/// ```
pub struct Stop {
    requested: AtomicBool,
    waiters: WaitList<CriticalSectionRawMutex>,
}

impl Stop {
    /// A stop not yet requested.
    #[must_use]
    pub const fn new() -> Stop {
        Stop {
            requested: AtomicBool::new(false),
            waiters: WaitList::new(),
        }
    }

    /// Asks to stop, and wakes every task waiting in [`Stop::wait`]. A monitor stops at its
    /// next step (mid-poll or mid-sleep).
    pub fn request(&self) {
        self.requested.store(true, Ordering::Release);
        self.waiters.wake_all();
    }

    /// Whether a stop was requested.
    #[must_use]
    pub fn is_requested(&self) -> bool {
        self.requested.load(Ordering::Acquire)
    }

    /// Completes once a stop is requested. Any number of tasks may wait at once, without
    /// allocation; cancel-safe.
    pub fn wait(&self) -> StopWait<'_> {
        StopWait {
            stop: self,
            registration: Registration::new(),
        }
    }

    /// How many [`Stop::wait`]s are sleeping now.
    #[must_use]
    pub fn waiting(&self) -> u32 {
        self.waiters.waiting()
    }
}

impl Default for Stop {
    fn default() -> Self {
        Stop::new()
    }
}

impl fmt::Debug for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stop")
            .field("requested", &self.is_requested())
            .field("waiting", &self.waiting())
            .finish()
    }
}

/// The future of [`Stop::wait`].
#[must_use = "futures do nothing unless awaited"]
pub struct StopWait<'a> {
    stop: &'a Stop,
    registration: Registration,
}

impl Future for StopWait<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        let stop = this.stop;
        this.registration
            .poll(&stop.waiters, cx, || stop.is_requested())
    }
}

impl Drop for StopWait<'_> {
    fn drop(&mut self) {
        self.registration.release(&self.stop.waiters);
    }
}

impl fmt::Debug for StopWait<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StopWait")
            .field("requested", &self.stop.is_requested())
            .finish()
    }
}
