//! Which classes started or stopped being rejected at one update.

use crate::Route;

/// The classes whose armed state an update changed: for each of web and API, whether
/// it changed and to what. Small and `Copy`; [`Transitions::entered`] counts the classes
/// that started being rejected.
///
/// ```
/// use load_core::{CpuPercent, Instant, LoadControl, Outcome, Route};
///
/// let control = LoadControl::new(70, 90);
/// let changed = control.update(Instant::ZERO, Outcome::Sample(CpuPercent::new(95)));
/// assert_eq!(changed.entered(), 2);
/// let changed = control.update(Instant::ZERO, Outcome::Sample(CpuPercent::new(80)));
/// assert_eq!(changed.iter().collect::<Vec<_>>(), [(Route::Api, false)]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Transitions {
    /// Bits: web changed, web now armed, API changed, API now armed.
    bits: u8,
}

impl Transitions {
    /// No class changed.
    pub const NONE: Transitions = Transitions { bits: 0 };

    const fn shift(route: Route) -> u8 {
        match route {
            Route::Api => 2,
            _ => 0,
        }
    }

    /// The same, with `route` now `armed` (web or API; others count as web).
    #[must_use]
    pub const fn with(self, route: Route, armed: bool) -> Transitions {
        let shift = Self::shift(route);
        Transitions {
            bits: self.bits & !(0b11 << shift) | (1 | if armed { 2 } else { 0 }) << shift,
        }
    }

    /// What changed: `(class, armed now)`, web first.
    pub fn iter(self) -> impl Iterator<Item = (Route, bool)> {
        [Route::Web, Route::Api]
            .into_iter()
            .filter_map(move |route| {
                let bits = self.bits >> Self::shift(route);
                (bits & 1 != 0).then_some((route, bits & 2 != 0))
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
