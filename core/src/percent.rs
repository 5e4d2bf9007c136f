//! A CPU usage percentage, `0..=100`.

use core::fmt;

/// A CPU usage percentage, `0..=100`.
///
/// An unknown reading (a node reporting `-1`, a machine that cannot measure) is
/// `Option::<CpuPercent>::None`, never a magic number.
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CpuPercent(pub(crate) u8);

impl CpuPercent {
    /// 0 %: the reading of an idle machine, and the fail-open value.
    pub const ZERO: CpuPercent = CpuPercent(0);
    /// 100 %.
    pub const MAX: CpuPercent = CpuPercent(100);

    /// `P` percent, checked when the code is compiled: for values known when it is written
    /// (a test's reading, a constant). `CpuPercent::of::<150>()` does not compile, where
    /// `CpuPercent::new(150)` is `None`, which a source reports as an unknown reading.
    ///
    /// ```
    /// use load_core::CpuPercent;
    ///
    /// const BUSY: CpuPercent = CpuPercent::of::<95>();
    /// assert_eq!(Some(BUSY), CpuPercent::new(95));
    /// ```
    ///
    /// ```compile_fail
    /// let _ = load_core::CpuPercent::of::<150>();
    /// ```
    #[must_use]
    pub const fn of<const P: u8>() -> CpuPercent {
        const { assert!(P <= 100, "a CPU percentage is within 0..=100") };
        CpuPercent(P)
    }

    /// `percent` if it is within `0..=100`: for values read at run time.
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
}
