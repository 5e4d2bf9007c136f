//! The limit mode's state as one snapshot: what `LoadControl::admission` returns and
//! `Stats` carries. A module of its own, so that neither the control nor the stats need the
//! other for it.

/// The limit mode's state, as one snapshot ([`crate::LoadControl::admission`]).
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AdmissionStats {
    /// The in-flight cap while armed, in whole requests (at least one).
    pub cap: u32,
    /// The same cap in hundredths of a request: with the cluster's search pool the fleet
    /// law adjusts it by fractions (a fraction is one more request that share of the time).
    pub cap_hundredths: u32,
    /// The in-flight bound of a class that is not armed: `u32::MAX` (none) unless the flood
    /// bound holds, then the flood bound (twice what the front end held at its last quiet
    /// poll; one more for a fraction of the time).
    pub ceiling: u32,
    /// Whether the cap was learnt from completions (else it is the initial one).
    pub learned: bool,
    /// Admitted, counted requests in flight now.
    pub in_flight: u32,
    /// Counted requests completed in all (wrapping).
    pub completed: u32,
    /// Whether the flood bound holds: the in-flight count kept growing above what the
    /// front end held at its last quiet poll while no class was armed, so the flood bound
    /// ([`AdmissionStats::ceiling`]) applies for a few seconds.
    pub flooding: bool,
    /// The in-flight count the flood bound last engaged at (0: never engaged).
    pub flood_engaged_at: u32,
    /// Requests refused by the flood bound in all, both classes (wrapping): the
    /// [`crate::RejectReason::Flood`] share of [`crate::LoadControl::rejected`].
    pub rejected_flood: u32,
    /// The busiest node's search thread pool at the last poll, when the poll reported one:
    /// the shared signal of the fleet law.
    pub search_pool: Option<crate::node_stats::SearchPool>,
    /// The CPUs of a machine whose CPU is the front end's own
    /// ([`crate::CpuSample::own_cores`]), when the last poll reported no search pool: the
    /// law then reads this front end's own requests in flight over them as the pool
    /// (`None`: a cluster's pool, or neither).
    pub own_cores: Option<u32>,
    /// The share of this front end's demand refused between the last two polls, in
    /// percent: what the fleet law grows the cap by.
    pub refused_percent: u8,
    /// Whether the busiest node's CPU, smoothed (it follows a rise at once and a fall
    /// slowly), says the cluster is saturated: at 93 % or more. Below, an armed class's
    /// cap grows whatever the load.
    pub saturated: bool,
}
