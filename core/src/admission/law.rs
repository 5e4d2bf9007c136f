//! The limit mode's law, poll by poll: how the cap moves with what the poll says of the
//! cluster's busiest node and of this front end's own demand. One value holds the law's
//! constants, so that the simulation can hold the designs that lost beside the one that
//! won (`sim/tests/admission_sim.rs`); a server never sets it.

// Public for the `designs` feature, which exports them; crate-private without it.
#![cfg_attr(not(feature = "designs"), allow(unreachable_pub))]

/// What the law holds the busiest node at, and how it moves the cap there. The default
/// ([`Law::DEFAULT`]) is the law of `load.control.admission=limit`; the other designs exist
/// for the simulation that chose it ([`crate::admission`] says why it won).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Law {
    /// The weight of the refused share in a poll's move of the cap (`cap × (1 + grow ×
    /// refused − shrink × error)`): the share of its demand a front end refused pulls its cap
    /// up.
    pub grow: f32,
    /// The weight of the error: the node's distance from the operating point pulls every
    /// front end's cap down.
    pub shrink: f32,
    /// The tasks per core the busiest node runs and has waiting on average at the
    /// operating point.
    pub target: f32,
    /// Tasks the busiest node has beyond one per core at least, whatever its cores: the
    /// operating point is `max(target, 1 + slack / cores)` per core (`0`: `target`).
    pub slack: f32,
    /// Tasks the operating point the cap starts from rises by, beyond the slack, for a
    /// front end that refused nothing since the last poll, falling linearly to none at a
    /// refused share of `relief_until`: at the onset of a load the node can serve, room for
    /// the arrivals' variance; after a flood bound that was refusing, none. The point the
    /// cap then moves to has no relief: every front end of a fleet holds the node at the
    /// same point, whatever share of its own demand it refuses.
    pub relief: f32,
    /// See [`Law::relief`] (`0`: no relief).
    pub relief_until: f32,
    /// The slack and the relief on a machine whose CPU is the front end's own, where its
    /// own requests in flight over its cores are the pool: each of them is a task on a
    /// core while it runs, and the async worker that answers them shares those cores, so
    /// that a task waiting there costs the latency a node's search pool, with its threads'
    /// I/O and variance, does not.
    pub own_slack: f32,
    /// See [`Law::own_slack`].
    pub own_relief: f32,
    /// What says a machine whose CPU is the front end's own is saturated.
    pub own_gate: OwnGate,
    /// What the flood bound is measured against.
    pub flood: FloodBase,
    /// Whether a flood is measured against what the front end held at quiet, at most the
    /// busiest node's operating point in tasks (without relief: 4 on one core, 7 on four),
    /// and bounded at most at the point, as on a machine's own cores: measured
    /// against what a warm front end held (14 to 28 on a one-core node), a flood had to
    /// pass 44 to 80 in flight before the bound engaged, and the bound then let 28 to 56
    /// searches into the node's queue until the class armed (`bench/closed-loop/onset/`).
    pub flood_point: bool,
    /// When the flood bound looks at the in-flight count.
    pub watch: Watch,
    /// Quick looks in a row, a quarter of a bucket apart, whose in-flight count grew at
    /// each by more than noise, that tell a flood before the bucket's looks do (`0`: none),
    /// on the front end of a cluster. A bucket's two looks let a surge at twice what a
    /// one-core node serves put 86 to 109 searches in flight before the bound engaged
    /// (`bench/closed-loop/onset/`); a growth that a quarter of a bucket shows above the
    /// noise is four times the rate a bucket's must be, so that quick looks tell only a
    /// strong surge, and the bucket's tell the rest as before.
    pub quick_looks: u8,
    /// The busiest node's CPU (smoothed) at and above which it is saturated; below, the
    /// cap grows whatever the load (`0`: no such gate).
    pub saturated: u8,
    /// How fast the smoothed CPU follows a falling reading (it follows a rising one at
    /// once); `1`: not smoothed.
    pub cpu_smoothing: f32,
    /// The weight of the CPU's distance from `saturated`, above it and below it, in the
    /// error (per 100 % of CPU).
    pub cpu_gain: [f32; 2],
    /// Whether the CPU only vetoes a shrink: below `saturated`, a node over the operating
    /// point holds the cap (no error: the refused share alone grows it) instead of growing
    /// it by the CPU's distance below the gate. On the node a one-core node queueing 8 to
    /// 16 tasks read 78 to 90 % CPU, and caps grew 1.4 times a poll to 47 and 49.86. Not
    /// on a machine's own load, whose gate is its demand ([`OwnGate::Demand`]).
    pub veto: bool,
    /// Where the cap starts when a class is first bounded, or when a flood bound is
    /// released while it is armed.
    pub start: Start,
    /// Whether a node's front end, too, is saturated by the CPU its demand would take (as
    /// a machine's own load is with [`OwnGate::Demand`]: the node's CPU over the searches
    /// this front end had served since the last poll, times those that arrived) rather
    /// than by the node's CPU at [`Law::saturated`]. A fleet's node read 75 to 100 % at
    /// 1x, a load it served: the CPU gate closed at each reading of 93 % or more and held
    /// the node at its operating point, which sheds about 16 % of such a load. On the node,
    /// alternating with that gate in the same runs (`bench/closed-loop/short/candidate-6bc8012/`),
    /// two front ends shed 0.5 and 0.7 % at 1x where it shed 14.4 and 1.2 %, one front end
    /// 8.3 % where it shed 29.0 %, with the tail at 2x-4x alike.
    pub demand_on_node: bool,
    /// Whether a poll releases a flood bound only if the busiest node would be below the
    /// operating point, on average and now, with what this front end refused since the
    /// last poll on it too (its load and queue over the share admitted, the refused counted
    /// at most as much again as the admitted), and whether the poll that arms the class
    /// while a flood bound holds keeps the cap rather than grow it by the bound's refusals.
    /// The node's pool is what the bound let through: on the node a bound that had refused
    /// half a surge was released by a poll that read 2 searches running and 1 queued, and
    /// the front end held 226 in flight before the class armed 1 s later
    /// (`bench/closed-loop/onset/candidate-a49e136/`; `sim/tests/warm_idle.rs` reproduces
    /// it; `docs/admission.md`, *A flood bound released by the demand*). Without it, a pool
    /// below the point releases the bound whatever it refused.
    pub release_by_demand: bool,
}

/// What says a machine whose CPU is the front end's own is saturated ([`Law::own_gate`]),
/// and a node's front end with [`Law::demand_on_node`].
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnGate {
    #[cfg(any(test, feature = "designs"))]
    /// Its CPU, smoothed, as a node's ([`Law::saturated`]). At the load the cores serve
    /// flat out less a few per cent the CPU reads about the gate, every dip below it grows
    /// the cap and every reading above it shrinks it to the operating point, which refuses
    /// a tenth of a Poisson load the cores could serve (the local loop's 1x, 7-11 %).
    Cpu,
    /// The CPU its demand would take: the CPU over the requests it served, times the
    /// requests that arrived since the last poll (served, refused, and the change in
    /// flight). Saturated when that is beyond the cores (100 %) by more than three
    /// standard deviations of a Poisson count of the poll's arrivals, or, averaged over
    /// polls, by more than two of the average's; below, the cap grows. Refusing lowers the
    /// CPU and the served count alike, so the gate reads the demand whatever the cap
    /// refuses.
    Demand,
}

/// Where the cap starts.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    #[cfg(any(test, feature = "designs"))]
    /// With room: below the operating point or below saturation, at the ceiling of the cap
    /// or of the recent peak in flight; above it (or flooding), where it is (Little's
    /// law's). The first operating-point law's (165a8a2): at the onset of an overload the
    /// peak and Little's law are the surge's own, and the cap started at 24 to 47 on a
    /// one-core node that holds 2 to 4.
    Room,
    #[cfg(any(test, feature = "designs"))]
    /// Scaled to the operating point while the busiest node is saturated and over it, or a
    /// flood is bounded: at what the front end had in flight on average over the last
    /// second, `× target / load`, within an eighth of a request and the ceiling of the
    /// recent peak. Each front end of a fleet scales its own share of the node's load by
    /// the same factor, so that their sum starts at the operating point. Otherwise with
    /// room, as [`Start::Room`]. The law of c76fb67 to 80952dd: below the point the
    /// ceiling of a surge's peak still seeded the cap.
    Scaled,
    #[cfg(any(test, feature = "designs"))]
    /// From what the front end held, never from a peak: as [`Start::Scaled`] over the
    /// operating point and saturated, or flooding; otherwise the larger of the scaled mean
    /// and the ceiling of the mean in flight over the last second (room for a load that
    /// doubles), within the ceiling of the cap or of the recent peak. The point it scales
    /// to has the relief ([`Law::relief`]). The law of 67b5c01: flooding, the mean in
    /// flight is learnt from completions, which a surge's queue delays, and was near 0 on
    /// front ends of eight that each held 31 to 34 searches: their caps started at an
    /// eighth of a request, the node idled, and the flood's release then started them from
    /// the surge's peak (67 and 69 on two of them, an eighth on the others).
    Held,
    #[cfg(any(test, feature = "designs"))]
    /// As [`Start::Held`], but over the operating point and saturated, or flooding, from
    /// what the front end holds now (the larger of the mean and the in-flight count),
    /// scaled by the point over the node's load now or on average, whichever is more.
    InFlight,
    /// As [`Start::InFlight`], but at most the front end's share of the node's load at
    /// quiet times the operating point, and never above what the front end held at its
    /// last poll that left its class unbounded (the initial cap before any). The share is its mean in flight over the node's tasks, both on
    /// average since the poll before, at the last such poll with the node at or below
    /// the operating point (none yet: the scaled start alone). In a surge the in-flight
    /// count and the node's pool are the surge's, and the pool sees a front end's
    /// connections only (16 of its 50 searches in the model), so that scaled by it a warm
    /// front end's cap started at 31 on a one-core node whose operating point is 4; what
    /// each front end of a fleet held of the node before the surge is what it holds of
    /// the surge, as far as a front end alone can tell. With a node's pool, the cap does
    /// not grow while a flood bound alone holds the class: the bound refuses, not the cap.
    Share,
}

/// What the flood bound is measured against: when the in-flight count is a flood, and what
/// it is then held to.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloodBase {
    #[cfg(any(test, feature = "designs"))]
    /// The cap and the mean in flight of now (to 80952dd): a flood is an in-flight count
    /// growing above the ceiling of the window's cap, held to twice the last second's mean
    /// in flight. The window learns from the surge's own completions and the mean is the
    /// surge's, so that on a real node each front end held 18 to 103 searches within 0.3 s
    /// and some were never bounded (`sim/fixtures/traces-af42c7f/`).
    Now,
    #[cfg(any(test, feature = "designs"))]
    /// What the front end held at the last poll that left its class unbounded: the
    /// window's cap, the mean in flight or the recent peak then, whichever is more (the
    /// initial cap before the first poll). A surge cannot move it before a poll does: a flood is an in-flight count
    /// growing above its ceiling, held to twice it. The law of 67b5c01: a poll while the
    /// CPU, reported a second late, had not yet armed the class took the surge's own
    /// in-flight count as what the front end held (169 in the model's fleet of four at 4x),
    /// and no flood was seen after it.
    Quiet,
    /// As [`FloodBase::Quiet`], from a poll that left the class unbounded with the busiest
    /// node at or below its operating point, on average since the poll before and now: a
    /// poll that finds the node queueing more than that keeps what the front end held
    /// before.
    Below,
}

/// When the flood bound looks at the in-flight count: once a bucket of
/// [`super::window::BUCKET_MS`] milliseconds, at the first of what it names. On a machine
/// whose CPU is the front end's own, requests too whatever the law says: its cores share
/// themselves among everything in flight, and a surge stalls their completions.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watch {
    /// The bucket's first completion (to 67b5c01). At a surge's onset the cluster's queue
    /// delays every completion: in the model, the first came 0.3 to 0.6 s into a surge at
    /// 4x, with 52 to 112 searches in flight on each front end of four, and some were
    /// never bounded before the CPU armed them.
    Completions,
    #[cfg(any(test, feature = "designs"))]
    /// The bucket's first request, admitted or not, or its first completion: a surge's
    /// arrivals are seen as they come.
    Requests,
}

impl Start {
    /// Whether over the point, or flooding, the start scales what the front end holds now
    /// ([`Start::InFlight`], [`Start::Share`]).
    pub(crate) const fn holds_now(self) -> bool {
        #[cfg(any(test, feature = "designs"))]
        if let Start::InFlight = self {
            return true;
        }
        matches!(self, Start::Share)
    }
}

impl FloodBase {
    /// Whether a flood is measured against the cap and mean of now ([`FloodBase::Now`]).
    pub(crate) const fn is_now(self) -> bool {
        #[cfg(any(test, feature = "designs"))]
        if let FloodBase::Now = self {
            return true;
        }
        false
    }
}

impl Watch {
    /// Whether the flood bound looks at requests as well ([`Watch::Requests`]).
    pub(crate) const fn requests(self) -> bool {
        #[cfg(any(test, feature = "designs"))]
        if let Watch::Requests = self {
            return true;
        }
        false
    }
}

/// The cap moves by at most this factor a poll either way (more, up, when the busiest node
/// is far below the operating point).
pub(crate) const STEP: f64 = 1.4;

impl Law {
    /// The limit mode's law: the busiest node held at its operating point, `cores +
    /// max(3, cores / 4)` tasks run and waiting (4 on one core, 7 on four, 20 on sixteen:
    /// every core busy and room for the arrivals' variance), while the CPU this front
    /// end's demand would take is beyond the node's (its CPU over the searches it served,
    /// times those that arrived, beyond 100 % by more than the arrivals' noise);
    /// the cap moving by the refused share and the distance from that point alike. At the
    /// onset of an overload the cap starts from what the front end held, scaled to the
    /// point (with 6 tasks of relief for a front end that refused nothing yet), at most
    /// its share of the node at quiet times that point and a step over what it held then,
    /// never from the peak a surge made; before the CPU says so, a flood is measured
    /// against what the front end held at the last poll that left it unbounded with the
    /// node at or below the point, at most the point, looked at every 25 ms at
    /// completions as well as once a bucket, and bounded at most at the point.
    pub const DEFAULT: Law = Law {
        grow: 1.0,
        shrink: 1.0,
        target: 1.25,
        slack: 3.0,
        relief: 6.0,
        relief_until: 0.3,
        own_slack: 1.0,
        own_relief: 2.0,
        own_gate: OwnGate::Demand,
        flood: FloodBase::Below,
        flood_point: true,
        watch: Watch::Completions,
        quick_looks: 3,
        saturated: 93,
        cpu_smoothing: 0.15,
        cpu_gain: [60.0, 5.0],
        veto: true,
        start: Start::Share,
        demand_on_node: true,
        release_by_demand: true,
    };

    #[cfg(any(test, feature = "designs"))]
    /// The law of 92f34e1, not taken: the flood watched at every request
    /// ([`Watch::Requests`]), against what the front end held below the operating point
    /// ([`FloodBase::Below`]), the start from what it holds now ([`Start::InFlight`]). It
    /// bounded fleets of four within 0.6 s of a surge where the default waits for the CPU,
    /// 2 s, and held 90 goals of the model's short loop to the default's 83; but an
    /// in-flight count watched before the first completion cannot tell a load's ramp from
    /// a flood, and a fresh front end at 71 searches a second of 407 ms each was refused
    /// at light load (`tests/tests/admission_edges.rs` found it). Counting growth only from
    /// the first completion on held 81 goals.
    pub const ARRIVALS: Law = Law {
        flood: FloodBase::Below,
        watch: Watch::Requests,
        start: Start::InFlight,
        veto: false,
        quick_looks: 0,
        flood_point: false,
        demand_on_node: false,
        release_by_demand: false,
        ..Law::DEFAULT
    };

    /// The law on a machine whose CPU is the front end's own: its slack and relief
    /// ([`Law::own_slack`]) for the node's.
    #[must_use]
    pub(crate) fn on_own_load(&self) -> Law {
        Law {
            slack: self.own_slack,
            relief: self.own_relief,
            veto: false,
            ..*self
        }
    }

    /// The law on a node of `cores` cores: its operating point with the slack, without
    /// the relief (the point the cap moves to).
    #[must_use]
    pub(crate) fn on_cores(&self, cores: u32) -> Law {
        self.on(cores, f64::INFINITY)
    }

    /// The law on a node of `cores` cores for a front end that refused the share
    /// `refused` of its demand since the last poll: its operating point with the slack and
    /// the relief.
    #[must_use]
    pub(crate) fn on(&self, cores: u32, refused: f64) -> Law {
        let relief = if self.relief_until > 0.0 {
            self.relief * (1.0 - refused as f32 / self.relief_until).max(0.0)
        } else {
            0.0
        };
        let floor = 1.0 + (self.slack + relief) / cores.max(1) as f32;
        Law {
            target: self.target.max(floor),
            ..*self
        }
    }

    /// On a machine whose CPU is the front end's own ([`OwnGate::Demand`]): the CPU, in
    /// per cent, that the requests which `arrived` since the last poll would take, the
    /// `cpu` read over the `served` ones times the arrivals (over 100: more than the cores
    /// serve); and the gate it is saturated at, 100 % and `deviations` standard deviations
    /// of a Poisson count of the arrivals (at three, 117 % at 300 a poll, 160 % at
    /// 30), so that the noise of a load the cores serve is not taken for more. Without a request served
    /// the CPU is all a poll knows: a stall in a poll too short to tell, or no load.
    pub(crate) fn demand_cpu(cpu: u8, served: u32, arrived: u64, deviations: u64) -> (f64, u8) {
        // 100 % times 1 + deviations / √arrived, with the root rounded down (no_std has no
        // float root; rounded down is the wider gate).
        let gate = (100 + deviations * 100 / arrived.max(1).isqrt()).min(250) as u8;
        let demand = f64::from(cpu) * arrived as f64 / f64::from(served.max(1));
        (demand.min(1e6), gate)
    }

    /// The smoothed CPU after a reading of `cpu` (the previous smoothed value `before`,
    /// negative before any): it follows a rising reading at once and a falling one by
    /// `cpu_smoothing` of the way a poll.
    pub(crate) fn smooth(&self, before: f64, cpu: u8) -> f64 {
        let cpu = f64::from(cpu);
        if before < 0.0 {
            return cpu;
        }
        let alpha = f64::from(self.cpu_smoothing);
        (alpha * cpu + (1.0 - alpha) * before).max(cpu)
    }

    /// The error: the busiest node's load per core above the operating point, but never
    /// above what its CPU says (`cpu`, smoothed). Below saturation, with [`Law::veto`],
    /// a node over the point holds the cap (no error) and one at or below it grows it;
    /// without, the error is negative and the cap grows, however long a queue a load below
    /// the cluster's capacity keeps.
    pub(crate) fn error(&self, load: f64, cpu: f64) -> f64 {
        let over_target = load - f64::from(self.target);
        if self.saturated == 0 {
            return over_target;
        }
        let over = cpu - f64::from(self.saturated);
        if self.veto && over < 0.0 && over_target > 0.0 {
            return 0.0;
        }
        let gain = if over >= 0.0 {
            self.cpu_gain[0]
        } else {
            self.cpu_gain[1]
        };
        over_target.min(f64::from(gain) * over / 100.0)
    }

    /// The factor a poll moves the cap by, given the refused share `refused`, the error
    /// and the busiest node's load per core: `1 + grow × refused − shrink × error`, within
    /// 1/1.4 and 1.4, or up to `target / load` at once when the node is far below the
    /// operating point (a load that fell away).
    pub(crate) fn factor(&self, refused: f64, error: f64, load: f64) -> f64 {
        let factor = 1.0 + f64::from(self.grow) * refused - f64::from(self.shrink) * error;
        factor.clamp(1.0 / STEP, self.most_growth(load))
    }

    /// The most a poll grows the cap by, with the busiest node at `load` tasks per core:
    /// [`STEP`], or the operating point over the load when the node is far below it (a
    /// load that fell away), or four steps on an idle node.
    pub(crate) fn most_growth(&self, load: f64) -> f64 {
        if load > 0.0 {
            (f64::from(self.target) / load).max(STEP)
        } else {
            STEP * 4.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_follows_a_rise_at_once_and_a_fall_slowly() {
        let law = Law::DEFAULT;
        assert_eq!(law.smooth(-1.0, 40), 40.0);
        assert_eq!(law.smooth(40.0, 100), 100.0);
        let fallen = law.smooth(100.0, 60);
        assert!((fallen - 94.0).abs() < 1e-4, "{fallen}");
    }

    #[test]
    fn the_error_is_the_load_over_the_target_within_what_the_cpu_allows() {
        let law = Law::DEFAULT;
        // Saturated at 100 %: the load decides, up to 60 x 7 / 100 = 4.2.
        assert!((law.error(2.0, 100.0) - 0.75).abs() < 1e-9);
        assert!((law.error(9.0, 100.0) - 4.2).abs() < 1e-9);
        // At 93 % nothing shrinks; below, over the point, the CPU vetoes the shrink and
        // nothing grows the cap but the refused share (the node queues: it is not idle).
        assert_eq!(law.error(9.0, 93.0), 0.0);
        assert_eq!(law.error(9.0, 73.0), 0.0);
        assert_eq!(law.error(9.0, 85.0), 0.0);
        // Below the point and below the gate, the cap grows by 5 % a 100 % of CPU, or by
        // the load's distance under the point, whichever is more.
        assert!((law.error(0.25, 73.0) + 1.0).abs() < 1e-9, "the lower wins");
        assert!((law.error(0.5, 93.0) + 0.75).abs() < 1e-9);
        // Without the veto (the laws before), the CPU under the gate grows the cap
        // whatever the queue.
        let before = Law { veto: false, ..law };
        assert!((before.error(9.0, 73.0) + 1.0).abs() < 1e-9);
    }

    #[test]
    fn the_factor_is_the_refused_share_less_the_error_within_a_step() {
        let law = Law::DEFAULT;
        // Half refused, the node on its operating point: up by half, within 1.4.
        assert!((law.factor(0.5, 0.0, 1.25) - 1.4).abs() < 1e-9);
        assert!((law.factor(0.2, 0.0, 1.25) - 1.2).abs() < 1e-9);
        // Far over: down by at most 1.4.
        assert!((law.factor(0.0, 3.0, 4.25) - 1.0 / 1.4).abs() < 1e-9);
        // Far under (a load that fell to a fifth of the target): up to 5 at once.
        assert!((law.factor(0.5, -4.0, 0.25) - 5.0).abs() < 1e-9);
    }
}
