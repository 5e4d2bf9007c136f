//! The background gate's threshold as Fess reads `adaptive.load.control`: off, or a percent.

use core::fmt;

use crate::CpuPercent;

/// The local CPU at or above which background work waits, read from Fess's integer
/// (`adaptive.load.control`) with Fess's meaning:
///
/// - `0` or less: **off**, work never waits;
/// - `1` to `100`: a **percent**, reached when the CPU is at or above it (at `100`, work
///   waits only while the CPU is fully busy);
/// - more than `100`: **off** too, as no CPU reading reaches it.
///
/// One value says which, so no caller tests "above 0". [`fmt::Display`] writes Fess's
/// integer back: the percent, or `0` when off (a file that said `150` reads back `0`,
/// which means the same).
///
/// ```
/// use load_core::{CpuPercent, GateThreshold};
///
/// let off = GateThreshold::from_fess(0);
/// assert!(off.is_off() && !off.is_reached(CpuPercent::MAX));
/// let half = GateThreshold::from_fess(50);
/// assert!(half.is_reached(CpuPercent::new(50).unwrap()), "equality waits");
/// assert!(!half.is_reached(CpuPercent::new(49).unwrap()));
/// let full = GateThreshold::from_fess(100);
/// assert!(!full.is_off() && full.is_reached(CpuPercent::MAX));
/// assert!(!full.is_reached(CpuPercent::new(99).unwrap()));
/// let beyond = GateThreshold::from_fess(101);
/// assert!(beyond.is_off(), "no reading reaches 101 %");
/// assert_eq!((half.to_string(), beyond.to_string()), ("50".to_owned(), "0".to_owned()));
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
// No ordering: off is the loosest setting but would sort below 1 %.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct GateThreshold(u8);

impl GateThreshold {
    /// Work never waits (Fess: `<= 0`).
    pub const OFF: GateThreshold = GateThreshold(0);
    /// Fess's default, 50 %.
    pub const DEFAULT: GateThreshold = GateThreshold(50);

    /// The threshold Fess's integer means.
    #[must_use]
    pub const fn from_fess(value: i32) -> GateThreshold {
        if value <= 0 || value > 100 {
            GateThreshold::OFF
        } else {
            GateThreshold(value as u8)
        }
    }

    /// Whether work never waits.
    #[must_use]
    pub const fn is_off(self) -> bool {
        self.0 == 0
    }

    /// The percent, `1..=100`; `None` when off.
    #[must_use]
    pub const fn percent(self) -> Option<u8> {
        if self.is_off() { None } else { Some(self.0) }
    }

    /// Fess's integer for it, in `0..=100`: `0` when off.
    #[must_use]
    pub const fn get(self) -> u8 {
        self.0
    }

    /// Whether `cpu` reaches it: at or above the percent, never when off.
    #[must_use]
    pub const fn is_reached(self, cpu: CpuPercent) -> bool {
        !self.is_off() && cpu.get() >= self.0
    }
}

/// Fess's default, 50 %.
impl Default for GateThreshold {
    fn default() -> Self {
        GateThreshold::DEFAULT
    }
}

impl From<i32> for GateThreshold {
    fn from(value: i32) -> Self {
        GateThreshold::from_fess(value)
    }
}

/// Fess's integer, as a properties file would write it (`0` when off).
impl fmt::Display for GateThreshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl fmt::Debug for GateThreshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.percent() {
            None => f.write_str("GateThreshold::OFF"),
            Some(percent) => write!(f, "GateThreshold({percent}%)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fess_integers_map_to_off_or_a_percent() {
        for (value, get, off) in [
            (i32::MIN, 0, true),
            (-1, 0, true),
            (0, 0, true),
            (1, 1, false),
            (50, 50, false),
            (100, 100, false),
            (101, 0, true),
            (i32::MAX, 0, true),
        ] {
            let threshold = GateThreshold::from_fess(value);
            assert_eq!((threshold.get(), threshold.is_off()), (get, off), "{value}");
        }
        assert!(!GateThreshold::OFF.is_reached(CpuPercent::MAX));
        assert!(GateThreshold::from_fess(1).is_reached(CpuPercent::new(1).unwrap()));
        assert!(!GateThreshold::from_fess(1).is_reached(CpuPercent::ZERO));
        assert_eq!(GateThreshold::default().get(), 50);
        assert_eq!(
            format!("{:?}", GateThreshold::from_fess(70)),
            "GateThreshold(70%)"
        );
        assert_eq!(format!("{:?}", GateThreshold::OFF), "GateThreshold::OFF");
    }
}
