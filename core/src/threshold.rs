//! A class's threshold as Fess reads its integer: off, reject-all, or a percent.

use core::fmt;

use crate::CpuPercent;

/// The cluster CPU at or above which a class of requests is rejected, read from Fess's
/// integer (`web.load.control`, `api.load.control`) with Fess's meaning:
///
/// - `100` or more: **off**, the class is not controlled (and the monitor does not start for
///   it);
/// - `0` or less: **reject all**, every request of the class is rejected;
/// - `1` to `99`: a **percent**, reached when the CPU is at or above it.
///
/// One value says which, so no caller re-checks "100 means off".
///
/// ```
/// use load_core::{CpuPercent, Threshold};
///
/// assert!(Threshold::from_fess(250).is_off());
/// assert!(Threshold::from_fess(-5).rejects_all());
/// let web = Threshold::from_fess(80);
/// assert!(web.is_reached(CpuPercent::new(80).unwrap()), "equality rejects");
/// assert!(!web.is_reached(CpuPercent::new(79).unwrap()));
/// assert!(!Threshold::OFF.is_reached(CpuPercent::MAX));
/// assert_eq!(web.to_string(), "80");
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Threshold(u8);

impl Threshold {
    /// Not controlled (Fess: `>= 100`; the default).
    pub const OFF: Threshold = Threshold(100);
    /// Every request rejected (Fess: `<= 0`).
    pub const REJECT_ALL: Threshold = Threshold(0);

    /// The threshold Fess's integer means.
    #[must_use]
    pub const fn from_fess(value: i32) -> Threshold {
        if value >= 100 {
            Threshold::OFF
        } else if value <= 0 {
            Threshold::REJECT_ALL
        } else {
            Threshold(value as u8)
        }
    }

    /// The threshold whose [`Threshold::get`] is `byte`, as the control's word stores it
    /// (`0..=100`): the type's atomic form, read back without decoding Fess's integer again.
    #[must_use]
    pub(crate) const fn from_stored(byte: u8) -> Threshold {
        Threshold(if byte > 100 { 100 } else { byte })
    }

    /// Whether the class is not controlled.
    #[must_use]
    pub const fn is_off(self) -> bool {
        self.0 >= 100
    }

    /// Whether every request of the class is rejected.
    #[must_use]
    pub const fn rejects_all(self) -> bool {
        self.0 == 0
    }

    /// The percent, `1..=99`; `None` when off or rejecting all.
    #[must_use]
    pub const fn percent(self) -> Option<u8> {
        if self.is_off() || self.rejects_all() {
            None
        } else {
            Some(self.0)
        }
    }

    /// Fess's integer for it, in `0..=100`: `100` when off, `0` when rejecting all.
    #[must_use]
    pub const fn get(self) -> u8 {
        self.0
    }

    /// Whether `cpu` reaches it: at or above the percent (always when rejecting all,
    /// never when off).
    #[must_use]
    pub const fn is_reached(self, cpu: CpuPercent) -> bool {
        !self.is_off() && cpu.get() >= self.0
    }
}

impl Default for Threshold {
    fn default() -> Self {
        Threshold::OFF
    }
}

impl From<i32> for Threshold {
    fn from(value: i32) -> Self {
        Threshold::from_fess(value)
    }
}

/// Fess's integer, as a properties file would write it.
impl fmt::Display for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl fmt::Debug for Threshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.percent() {
            None if self.is_off() => f.write_str("Threshold::OFF"),
            None => f.write_str("Threshold::REJECT_ALL"),
            Some(percent) => write!(f, "Threshold({percent}%)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the control's word stores reads back as the same threshold, whatever Fess's
    /// integer was: the word never decodes Fess's integer again.
    #[test]
    fn a_stored_threshold_reads_back_as_itself() {
        for value in -300..=300 {
            let threshold = Threshold::from_fess(value);
            assert_eq!(
                Threshold::from_stored(threshold.get()),
                threshold,
                "{value}"
            );
        }
        assert_eq!(Threshold::from_stored(u8::MAX), Threshold::OFF);
    }

    #[test]
    fn fess_integers_map_to_the_three_states() {
        for (value, get, off, all) in [
            (i32::MIN, 0, false, true),
            (-1, 0, false, true),
            (0, 0, false, true),
            (1, 1, false, false),
            (99, 99, false, false),
            (100, 100, true, false),
            (i32::MAX, 100, true, false),
        ] {
            let threshold = Threshold::from_fess(value);
            assert_eq!(
                (threshold.get(), threshold.is_off(), threshold.rejects_all()),
                (get, off, all),
                "{value}"
            );
        }
        assert!(Threshold::REJECT_ALL.is_reached(CpuPercent::ZERO));
        assert_eq!(Threshold::default(), Threshold::OFF);
        assert_eq!(format!("{:?}", Threshold::from_fess(70)), "Threshold(70%)");
    }
}
