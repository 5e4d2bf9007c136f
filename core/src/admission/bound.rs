//! What bounds a request now: nothing, the cap or the flood bound.

/// What bounds a request now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    /// Nothing: the class is below saturation (or disarmed) and no flood is seen.
    None,
    /// The cap, while the class is armed and the cluster saturated.
    Cap(u32),
    /// The cap, as a flood bound.
    Flood(u32),
}

impl core::fmt::Display for Bound {
    /// What a request meets, for the log: `in-flight cap 3`, `flood bound 3`, or, with
    /// nothing, `no in-flight bound but the flood bound`.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Bound::None => f.write_str("no in-flight bound but the flood bound"),
            Bound::Cap(cap) => write!(f, "in-flight cap {cap}"),
            Bound::Flood(cap) => write!(f, "flood bound {cap}"),
        }
    }
}

impl Bound {
    /// The in-flight count a request may find.
    #[inline]
    pub(crate) const fn limit(self) -> u32 {
        match self {
            Bound::None => u32::MAX,
            Bound::Cap(limit) | Bound::Flood(limit) => limit,
        }
    }
}
