//! The `Retry-After` a rejection answers with, and its jitter.

use crate::atomic::{AtomicU32, Ordering};
use crate::config::{MAX_JITTER, MAX_SECONDS};

/// The `Retry-After` a rejection answers with: a base and a jitter, packed in one word so
/// that a reconfiguration changes both at once, and the jitter's pseudo-random state.
pub(super) struct RetryAfter {
    /// Base (low 17 bits) and jitter (high 15 bits), in seconds.
    packed: AtomicU32,
    /// xorshift32 state for the jitter.
    rng: AtomicU32,
}

const _: () = assert!(MAX_SECONDS < 1 << 17 && MAX_JITTER < 1 << 15);

impl RetryAfter {
    pub(super) const fn new(base: u32, jitter: u32) -> RetryAfter {
        RetryAfter {
            packed: AtomicU32::new(Self::pack(base, jitter)),
            rng: AtomicU32::new(0x9E37_79B9),
        }
    }

    const fn pack(base: u32, jitter: u32) -> u32 {
        let base = if base > MAX_SECONDS {
            MAX_SECONDS
        } else {
            base
        };
        let jitter = if jitter > MAX_JITTER {
            MAX_JITTER
        } else {
            jitter
        };
        base | jitter << 17
    }

    pub(super) fn set(&self, base: u32, jitter: u32) {
        self.packed
            .store(Self::pack(base, jitter), Ordering::Relaxed);
    }

    /// One rejection's value: the base, plus a pseudo-random `0..=jitter`.
    pub(super) fn next(&self) -> u32 {
        let packed = self.packed.load(Ordering::Relaxed);
        let (base, jitter) = (packed & ((1 << 17) - 1), packed >> 17);
        if jitter == 0 {
            return base;
        }
        let step = |mut x: u32| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        let state = self
            .rng
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |x| Some(step(x)))
            .map_or(1, step);
        base + state % (jitter + 1)
    }
}
