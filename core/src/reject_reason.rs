//! Why a request was answered with the busy response: one word per cause, the same in the
//! log, the metrics and the stats, so that a 429 reads the same wherever it is looked up.

use core::fmt;

/// Why a request was rejected (answered with the busy response, or, in monitor mode,
/// would have been).
///
/// ```
/// use load_core::RejectReason;
///
/// let words: Vec<&str> = RejectReason::ALL.iter().map(|r| r.as_str()).collect();
/// assert_eq!(words, ["cpu", "cap", "flood"]);
/// assert_eq!(RejectReason::Flood.to_string(), "flood");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RejectReason {
    /// The cluster's CPU at or above the class's threshold: Fess's rule. In the limit mode,
    /// a request only checked ([`crate::LoadControl::check`], not admitted with a permit)
    /// while its class is armed.
    Cpu,
    /// The limit mode's in-flight cap, while the class is armed.
    Cap,
    /// The limit mode's flood bound, while the class is not armed: the in-flight count kept
    /// growing before the CPU showed an overload.
    Flood,
}

impl RejectReason {
    /// Every reason, in the order the stats and the metrics give them.
    pub const ALL: [RejectReason; 3] = [RejectReason::Cpu, RejectReason::Cap, RejectReason::Flood];

    /// The reason's word: `cpu`, `cap` or `flood`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            RejectReason::Cpu => "cpu",
            RejectReason::Cap => "cap",
            RejectReason::Flood => "flood",
        }
    }

    pub(crate) const fn index(self) -> usize {
        match self {
            RejectReason::Cpu => 0,
            RejectReason::Cap => 1,
            RejectReason::Flood => 2,
        }
    }
}

impl fmt::Display for RejectReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One class's rejections by reason, each wrapping at 2^32 (in monitor mode: those that
/// would have been).
///
/// ```
/// use load_core::{LoadControl, RejectReason, Class};
///
/// let control = LoadControl::new(80, 90);
/// control.update(
///     load_core::Instant::from_secs(1),
///     load_core::Outcome::Sample(load_core::CpuPercent::new(85)),
/// );
/// let _ = control.check("/search");
/// let web = control.rejections(Class::Web);
/// assert_eq!((web.get(RejectReason::Cpu), web.total()), (1, 1));
/// assert_eq!(control.rejected(Class::Web), web.total());
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rejections {
    /// By the CPU ([`RejectReason::Cpu`]).
    pub cpu: u32,
    /// By the in-flight cap ([`RejectReason::Cap`]).
    pub cap: u32,
    /// By the flood bound ([`RejectReason::Flood`]).
    pub flood: u32,
}

impl Rejections {
    /// The rejections for `reason`.
    #[must_use]
    pub const fn get(self, reason: RejectReason) -> u32 {
        match reason {
            RejectReason::Cpu => self.cpu,
            RejectReason::Cap => self.cap,
            RejectReason::Flood => self.flood,
        }
    }

    /// Every rejection, whatever its reason (wrapping).
    #[must_use]
    pub const fn total(self) -> u32 {
        self.cpu.wrapping_add(self.cap).wrapping_add(self.flood)
    }

    /// What was added since `before` (the counts wrap).
    #[must_use]
    pub const fn since(self, before: Rejections) -> Rejections {
        Rejections {
            cpu: self.cpu.wrapping_sub(before.cpu),
            cap: self.cap.wrapping_sub(before.cap),
            flood: self.flood.wrapping_sub(before.flood),
        }
    }

    pub(crate) const fn from_array(counts: [u32; 3]) -> Rejections {
        Rejections {
            cpu: counts[0],
            cap: counts[1],
            flood: counts[2],
        }
    }
}
