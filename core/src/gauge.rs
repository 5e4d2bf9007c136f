//! The latest CPU sample in one atomic word, shared by one writer and many readers.

use crate::atomic::{AtomicU32, Ordering};
use core::fmt;

use crate::CpuPercent;

const UNKNOWN: u32 = 0xFF;
const VALUE_BITS: u32 = 8;
const VALUE_MASK: u32 = (1 << VALUE_BITS) - 1;

/// One consistent reading of a [`CpuGauge`]: the value and the sequence number of the store
/// that wrote it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
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
/// use load_core::{CpuPercent, gauge::CpuGauge};
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
        decode(self.word.load(Ordering::Acquire)).cpu
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
