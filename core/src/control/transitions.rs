//! Which classes started or stopped being rejected at one update.

use crate::Class;

/// The classes whose armed state an update changed: for each of web and API, whether
/// it changed and to what. Small and `Copy`; [`Transitions::entered`] counts the classes
/// that started being rejected.
///
/// ```
/// use load_core::{CpuPercent, Instant, LoadControl, Outcome, Class};
///
/// let control = LoadControl::new(70, 90);
/// let changed = control.update(Instant::ZERO, Outcome::Sample(CpuPercent::new(95)));
/// assert_eq!(changed.entered(), 2);
/// let changed = control.update(Instant::ZERO, Outcome::Sample(CpuPercent::new(80)));
/// assert_eq!(changed.iter().collect::<Vec<_>>(), [(Class::Api, false)]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Transitions {
    /// Bits: web changed, web now armed, API changed, API now armed.
    bits: u8,
}

impl Transitions {
    /// No class changed.
    pub const NONE: Transitions = Transitions { bits: 0 };

    const fn shift(class: Class) -> u8 {
        match class {
            Class::Api => 2,
            _ => 0,
        }
    }

    /// The same, with `class` now `armed` (web or API; others count as web).
    #[must_use]
    pub const fn with(self, class: Class, armed: bool) -> Transitions {
        let shift = Self::shift(class);
        Transitions {
            bits: self.bits & !(0b11 << shift) | (1 | if armed { 2 } else { 0 }) << shift,
        }
    }

    /// What changed: `(class, armed now)`, web first.
    pub fn iter(self) -> impl Iterator<Item = (Class, bool)> {
        [Class::Web, Class::Api]
            .into_iter()
            .filter_map(move |class| {
                let bits = self.bits >> Self::shift(class);
                (bits & 1 != 0).then_some((class, bits & 2 != 0))
            })
    }

    /// How many classes started being rejected.
    #[must_use]
    pub fn entered(self) -> u32 {
        self.iter().filter(|&(_, armed)| armed).count() as u32
    }

    /// Whether no class changed.
    #[must_use]
    pub const fn is_empty(self) -> bool {
        self.bits == 0
    }
}
