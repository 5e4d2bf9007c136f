//! Time as the core sees it: an [`Instant`] handed in by a [`Clock`], never read from the OS.

use core::cell::Cell;
use core::fmt;
use core::future::Future;
use core::time::Duration;

use embassy_sync::blocking_mutex::CriticalSectionMutex;

/// A point in time, in whole microseconds since an arbitrary epoch chosen by the [`Clock`]
/// (fine enough for the latency of a request; 64 bits last half a million years).
///
/// The core never asks the operating system for the time: callers pass instants in, which
/// keeps every decision deterministic under test (the smoltcp and quinn-proto approach).
/// Arithmetic saturates instead of panicking.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(u64);

impl Instant {
    /// The epoch of the clock.
    pub const ZERO: Instant = Instant(0);

    /// An instant `micros` microseconds after the clock's epoch.
    #[must_use]
    pub const fn from_micros(micros: u64) -> Instant {
        Instant(micros)
    }

    /// An instant `millis` milliseconds after the clock's epoch (saturating).
    #[must_use]
    pub const fn from_millis(millis: u64) -> Instant {
        Instant(millis.saturating_mul(1000))
    }

    /// An instant `secs` seconds after the clock's epoch (saturating).
    #[must_use]
    pub const fn from_secs(secs: u64) -> Instant {
        Instant(secs.saturating_mul(1_000_000))
    }

    /// Microseconds since the clock's epoch.
    #[must_use]
    pub const fn as_micros(self) -> u64 {
        self.0
    }

    /// Whole milliseconds since the clock's epoch.
    #[must_use]
    pub const fn as_millis(self) -> u64 {
        self.0 / 1000
    }

    /// `self + duration`, saturating at the end of time.
    #[must_use]
    pub const fn saturating_add(self, duration: Duration) -> Instant {
        Instant(self.0.saturating_add(duration_micros(duration)))
    }

    /// The time elapsed from `earlier` to `self`, or zero if `earlier` is later.
    #[must_use]
    pub const fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_micros(self.0.saturating_sub(earlier.0))
    }
}

impl core::ops::Add<Duration> for Instant {
    type Output = Instant;

    fn add(self, rhs: Duration) -> Instant {
        self.saturating_add(rhs)
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:03}s", self.0 / 1_000_000, self.0 / 1000 % 1000)
    }
}

/// Whole microseconds of a duration, saturating (smaller parts round down).
pub(crate) const fn duration_micros(duration: Duration) -> u64 {
    let micros = duration.as_micros();
    if micros > u64::MAX as u128 {
        u64::MAX
    } else {
        micros as u64
    }
}

/// Whole milliseconds of a duration, saturating (sub-millisecond parts round down).
pub(crate) const fn duration_millis(duration: Duration) -> u64 {
    let millis = duration.as_millis();
    if millis > u64::MAX as u128 {
        u64::MAX
    } else {
        millis as u64
    }
}

/// A source of [`Instant`]s.
///
/// Used by the monitor loop and by timeouts, never on the request hot path: reading a real
/// clock costs tens of nanoseconds, many times the decision itself.
///
/// # Example
///
/// A clock on top of `std::time::Instant`:
///
/// ```
/// use load_core::{Clock, Instant};
///
/// struct StdClock(std::time::Instant);
///
/// impl Clock for StdClock {
///     fn now(&self) -> Instant {
///         Instant::from_micros(self.0.elapsed().as_micros() as u64)
///     }
/// }
///
/// let clock = StdClock(std::time::Instant::now());
/// assert!(clock.now() < Instant::from_secs(60));
/// ```
pub trait Clock {
    /// The current instant. Must never go backwards.
    fn now(&self) -> Instant;
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now(&self) -> Instant {
        (**self).now()
    }
}

/// Sleeping, as a runtime provides it: each runtime adapter implements this on its timer.
///
/// # Example
///
/// A sleep for a runtime built on `async-io` (what `smol` uses):
///
/// ```ignore
/// struct SmolSleep;
///
/// impl load_core::time::Sleep for SmolSleep {
///     async fn sleep(&self, duration: core::time::Duration) {
///         async_io::Timer::after(duration).await;
///     }
/// }
/// ```
///
/// The test double [`ManualClock`] implements it by moving its own time forward, so code
/// under test "sleeps" in simulated time:
///
/// ```
/// use core::time::Duration;
/// use load_core::{Clock, Instant, time::{ManualClock, Sleep}};
///
/// let clock = ManualClock::new(Instant::ZERO);
/// futures::executor::block_on(clock.sleep(Duration::from_secs(5)));
/// assert_eq!(clock.now(), Instant::from_secs(5));
/// ```
pub trait Sleep {
    /// Completes after `duration` has passed.
    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send;
}

impl<S: Sleep + Sync + ?Sized> Sleep for &S {
    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send {
        (**self).sleep(duration)
    }
}

/// A clock that only moves when told to: the test double for everything time-driven.
///
/// It is `Sync` and `const`-constructible, so it can be shared between the monitor under
/// test and the test itself (it is used that way by this crate's own tests and benches).
///
/// ```
/// use core::time::Duration;
/// use load_core::{Clock, Instant, time::ManualClock};
///
/// let clock = ManualClock::new(Instant::ZERO);
/// clock.advance(Duration::from_millis(1500));
/// assert_eq!(clock.now(), Instant::from_millis(1500));
/// ```
pub struct ManualClock {
    now: CriticalSectionMutex<Cell<u64>>,
}

impl ManualClock {
    /// A clock showing `start`.
    #[must_use]
    pub const fn new(start: Instant) -> ManualClock {
        ManualClock {
            now: CriticalSectionMutex::new(Cell::new(start.0)),
        }
    }

    /// Moves the clock forward by `by` (saturating).
    pub fn advance(&self, by: Duration) {
        self.now
            .lock(|now| now.set(now.get().saturating_add(duration_micros(by))));
    }

    /// Sets the clock to `to`, if that is not earlier than it shows (clocks never go back).
    pub fn set(&self, to: Instant) {
        self.now.lock(|now| now.set(now.get().max(to.0)));
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        Instant(self.now.lock(Cell::get))
    }
}

impl Sleep for ManualClock {
    /// Moves the clock forward by `duration`, then yields once so that other tasks run.
    fn sleep(&self, duration: Duration) -> impl Future<Output = ()> + Send {
        self.advance(duration);
        YieldNow(false)
    }
}

/// Returns `Pending` once (waking itself), then `Ready`.
struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();

    fn poll(
        mut self: core::pin::Pin<&mut Self>,
        cx: &mut core::task::Context<'_>,
    ) -> core::task::Poll<()> {
        if self.0 {
            core::task::Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            core::task::Poll::Pending
        }
    }
}

impl fmt::Debug for ManualClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManualClock")
            .field("now", &self.now())
            .finish()
    }
}

/// A [`Clock`] on `std::time::Instant`, counting from its creation.
#[cfg(feature = "std")]
#[derive(Clone, Copy, Debug)]
pub struct StdClock {
    base: std::time::Instant,
}

#[cfg(feature = "std")]
impl StdClock {
    /// A clock whose epoch is now.
    #[must_use]
    pub fn new() -> StdClock {
        StdClock {
            base: std::time::Instant::now(),
        }
    }
}

#[cfg(feature = "std")]
impl Default for StdClock {
    fn default() -> Self {
        StdClock::new()
    }
}

#[cfg(feature = "std")]
impl Clock for StdClock {
    fn now(&self) -> Instant {
        Instant::from_micros(u64::try_from(self.base.elapsed().as_micros()).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instant_arithmetic_saturates() {
        let end = Instant::from_millis(u64::MAX);
        assert_eq!(end + Duration::from_secs(1), end);
        assert_eq!(Instant::from_secs(u64::MAX), end);
        assert_eq!(
            Instant::ZERO.saturating_duration_since(Instant::from_secs(1)),
            Duration::ZERO
        );
        assert_eq!(
            Instant::from_secs(3).saturating_duration_since(Instant::from_millis(500)),
            Duration::from_millis(2500)
        );
    }

    #[test]
    fn manual_clock_moves_only_forward() {
        let clock = ManualClock::new(Instant::from_secs(10));
        clock.set(Instant::from_secs(5));
        assert_eq!(clock.now(), Instant::from_secs(10));
        clock.set(Instant::from_secs(12));
        clock.advance(Duration::from_millis(250));
        assert_eq!(clock.now(), Instant::from_millis(12_250));
        assert_eq!(clock.now().to_string_for_test(), "12.250s");
    }

    impl Instant {
        fn to_string_for_test(self) -> heapless::String<32> {
            use core::fmt::Write;
            let mut s = heapless::String::new();
            let _ = write!(s, "{self}");
            s
        }
    }
}
