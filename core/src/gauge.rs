//! The latest CPU sample in one atomic word, and the consecutive-failure rule.

use crate::atomic::{AtomicU32, Ordering};
use core::fmt;

/// A CPU usage percentage, `0..=100`.
///
/// An unknown reading (a node reporting `-1`, a machine that cannot measure) is
/// `Option::<CpuPercent>::None`, never a magic number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CpuPercent(u8);

impl CpuPercent {
    /// 0 %: the reading of an idle machine, and the fail-open value.
    pub const ZERO: CpuPercent = CpuPercent(0);
    /// 100 %.
    pub const MAX: CpuPercent = CpuPercent(100);

    /// `percent` if it is within `0..=100`.
    #[must_use]
    pub const fn new(percent: u8) -> Option<CpuPercent> {
        if percent <= 100 {
            Some(CpuPercent(percent))
        } else {
            None
        }
    }

    /// `percent`, clamped into `0..=100`.
    #[must_use]
    pub const fn saturating(percent: u8) -> CpuPercent {
        if percent <= 100 {
            CpuPercent(percent)
        } else {
            CpuPercent(100)
        }
    }

    /// Rounds a floating-point usage (as sysinfo reports it) to the nearest whole percent,
    /// clamped into `0..=100`. Not-a-number reads as unknown.
    #[must_use]
    pub fn from_f32(percent: f32) -> Option<CpuPercent> {
        if percent.is_nan() {
            return None;
        }
        let clamped = percent.clamp(0.0, 100.0);
        // `clamped + 0.5` is within 0.5..=100.5, so the cast cannot truncate out of range.
        Some(CpuPercent((clamped + 0.5) as u8).min(CpuPercent::MAX))
    }

    /// The percentage as a number.
    #[must_use]
    pub const fn get(self) -> u8 {
        self.0
    }
}

impl fmt::Display for CpuPercent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}%", self.0)
    }
}

const UNKNOWN: u32 = 0xFF;
const VALUE_BITS: u32 = 8;
const VALUE_MASK: u32 = (1 << VALUE_BITS) - 1;

/// One consistent reading of a [`CpuGauge`]: the value and the sequence number of the store
/// that wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reading {
    /// The stored CPU, `None` when unknown.
    pub cpu: Option<CpuPercent>,
    /// How many stores the gauge has seen, modulo 2^24; `0` until the first store. Compare
    /// two readings' sequences to tell whether a new sample arrived in between, without a
    /// clock.
    pub sequence: u32,
}

/// The latest CPU sample, shared between one writer (a monitor) and any number of readers.
///
/// Value and sequence live in a single `AtomicU32` (the sequence in the upper 24 bits), so a
/// reader always sees a matching pair, and the type works on targets with only 32-bit
/// atomics. Reading is one relaxed load.
///
/// A new gauge reads `0 %` (Fess: until the first poll completes, the recorded CPU is 0).
///
/// ```
/// use load_core::{CpuGauge, CpuPercent};
///
/// static GAUGE: CpuGauge = CpuGauge::new();
/// assert_eq!(GAUGE.cpu(), Some(CpuPercent::ZERO));
/// GAUGE.store(CpuPercent::new(87));
/// assert_eq!(GAUGE.percent_or_zero(), 87);
/// assert_eq!(GAUGE.reading().sequence, 1);
/// ```
pub struct CpuGauge {
    word: AtomicU32,
}

impl CpuGauge {
    /// A gauge reading `0 %` with sequence `0`.
    #[must_use]
    pub const fn new() -> CpuGauge {
        CpuGauge {
            word: AtomicU32::new(0),
        }
    }

    /// A gauge reading `cpu` (`None`: unknown) with sequence `0`.
    #[must_use]
    pub const fn with(cpu: Option<CpuPercent>) -> CpuGauge {
        CpuGauge {
            word: AtomicU32::new(match cpu {
                Some(cpu) => cpu.0 as u32,
                None => UNKNOWN,
            }),
        }
    }

    /// Records a new sample (`None`: unknown) and advances the sequence.
    pub fn store(&self, cpu: Option<CpuPercent>) {
        let value = match cpu {
            Some(cpu) => u32::from(cpu.get()),
            None => UNKNOWN,
        };
        // A CAS loop keeps the sequence exact even if two writers ever race; the single
        // monitor that normally writes succeeds on the first try.
        let _ = self
            .word
            .fetch_update(Ordering::Release, Ordering::Relaxed, |word| {
                let sequence = (word >> VALUE_BITS).wrapping_add(1);
                Some((sequence << VALUE_BITS) | value)
            });
    }

    /// The value and sequence of the latest store.
    #[must_use]
    pub fn reading(&self) -> Reading {
        decode(self.word.load(Ordering::Acquire))
    }

    /// The latest value, `None` when unknown.
    #[must_use]
    pub fn cpu(&self) -> Option<CpuPercent> {
        decode(self.word.load(Ordering::Relaxed)).cpu
    }

    /// The latest value as a number, unknown reading as `0` (fail-open).
    ///
    /// # Performance
    ///
    /// One relaxed atomic load and a compare.
    #[inline]
    #[must_use]
    pub fn percent_or_zero(&self) -> u8 {
        let value = self.word.load(Ordering::Relaxed) & VALUE_MASK;
        if value == UNKNOWN { 0 } else { value as u8 }
    }
}

impl Default for CpuGauge {
    fn default() -> Self {
        CpuGauge::new()
    }
}

impl fmt::Debug for CpuGauge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let reading = self.reading();
        f.debug_struct("CpuGauge")
            .field("cpu", &reading.cpu)
            .field("sequence", &reading.sequence)
            .finish()
    }
}

fn decode(word: u32) -> Reading {
    let value = word & VALUE_MASK;
    Reading {
        cpu: if value == UNKNOWN {
            None
        } else {
            // Only `store` writes the word, and it writes 0..=100 or UNKNOWN.
            CpuPercent::new(value as u8)
        },
        sequence: word >> VALUE_BITS,
    }
}

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
/// use load_core::{FailureCounter, FailureLevel};
///
/// let counter = FailureCounter::new();
/// let levels: Vec<_> = (0..5).map(|_| counter.record_failure()).collect();
/// assert_eq!(levels[2], FailureLevel::Warn);
/// assert_eq!(levels[3], FailureLevel::Debug);
/// counter.record_success();
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
    pub fn record_failure(&self) -> FailureLevel {
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
    pub fn record_success(&self) -> u32 {
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
    fn percent_constructors_keep_the_range() {
        assert_eq!(CpuPercent::new(101), None);
        assert_eq!(CpuPercent::saturating(250), CpuPercent::MAX);
        assert_eq!(CpuPercent::from_f32(f32::NAN), None);
        assert_eq!(CpuPercent::from_f32(-3.0), Some(CpuPercent::ZERO));
        assert_eq!(CpuPercent::from_f32(49.5).map(CpuPercent::get), Some(50));
        assert_eq!(CpuPercent::from_f32(49.4).map(CpuPercent::get), Some(49));
        assert_eq!(CpuPercent::from_f32(1e9), Some(CpuPercent::MAX));
    }

    #[test]
    fn gauge_starts_at_zero_and_counts_stores() {
        let gauge = CpuGauge::new();
        assert_eq!(
            gauge.reading(),
            Reading {
                cpu: Some(CpuPercent::ZERO),
                sequence: 0
            }
        );
        gauge.store(None);
        assert_eq!(gauge.cpu(), None);
        assert_eq!(gauge.percent_or_zero(), 0, "unknown fails open");
        gauge.store(CpuPercent::new(100));
        assert_eq!(gauge.percent_or_zero(), 100);
        assert_eq!(gauge.reading().sequence, 2);
    }

    #[test]
    fn gauge_sequence_wraps_without_touching_the_value() {
        let gauge = CpuGauge {
            word: AtomicU32::new(!VALUE_MASK),
        };
        gauge.store(CpuPercent::new(42));
        assert_eq!(gauge.reading().sequence, 0);
        assert_eq!(gauge.percent_or_zero(), 42);
    }

    #[test]
    fn failure_levels_follow_the_fess_rule() {
        let counter = FailureCounter::new();
        for n in 1..=3 {
            assert_eq!(counter.record_failure(), FailureLevel::Warn, "failure {n}");
        }
        for n in 4..=10 {
            assert_eq!(counter.record_failure(), FailureLevel::Debug, "failure {n}");
        }
        assert_eq!(counter.record_success(), 10);
        assert_eq!(counter.record_failure(), FailureLevel::Warn);
        assert_eq!(counter.total(), 11);
        assert_eq!(FailureLevel::Debug.log_level(), log::Level::Debug);
    }
}
