//! The limit mode's law, poll by poll: how the cap moves with what the poll says of the
//! cluster's busiest node and of this front end's own demand. One value holds the law's
//! constants, so that the simulation can hold the designs that lost beside the one that
//! won (`sim/tests/admission_sim.rs`); a server never sets it.

/// What the law holds the busiest node at, and how it moves the cap there. The default
/// ([`Law::DEFAULT`]) is the law of `load.control.admission=limit`; the other designs exist
/// for the simulation that chose it ([`crate::admission`] says why it won).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Law {
    /// How the cap moves.
    pub rule: Rule,
    /// The tasks per core the busiest node runs and has waiting on average at the
    /// operating point.
    pub target: f32,
    /// The busiest node's CPU (smoothed) at and above which it is saturated; below, the
    /// cap grows whatever the load (`0`: no such gate).
    pub saturated: u8,
    /// How fast the smoothed CPU follows a falling reading (it follows a rising one at
    /// once); `1`: not smoothed.
    pub cpu_smoothing: f32,
    /// The weight of the CPU's distance from `saturated`, above it and below it, in the
    /// error (per 100 % of CPU).
    pub cpu_gain: [f32; 2],
}

/// How a poll moves the cap.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    /// `cap × (1 + grow × refused − shrink × error)`, within `step` either way: the share
    /// of its demand a front end refused pulls its cap up, the node's distance from the
    /// operating point pulls every front end's down.
    Proportional {
        /// The weight of the refused share.
        grow: f32,
        /// The weight of the error.
        shrink: f32,
    },
    /// A price integrates the error (`price ← leak × price + gain × error`) and every
    /// front end refuses the share `price / (1 + price)` of its demand: the cap moves by
    /// `grow × (refused − share)`.
    Price {
        /// How much of the price a poll keeps.
        leak: f32,
        /// The weight of the error.
        gain: f32,
        /// The weight of the refused share's distance from the price's.
        grow: f32,
    },
    /// v0.4's fleet law: `cap × (1 + (1 + idle) × refused − 0.7 × queue / max(threads, 8))`
    /// on the busiest node's search pool now, with no operating point of its own.
    V04,
}

/// The cap moves by at most this factor a poll either way (more, up, when the busiest node
/// is far below the operating point).
pub(crate) const STEP: f64 = 1.4;

impl Law {
    /// The limit mode's law: the busiest node held at 1.25 tasks per core (every core busy
    /// and a quarter of a task more) while its CPU says it is saturated (93 % or more,
    /// smoothed so that a dip does not open the gate at once), the cap moving by the
    /// refused share and the distance from that point alike.
    pub const DEFAULT: Law = Law {
        rule: Rule::Proportional {
            grow: 1.0,
            shrink: 1.0,
        },
        target: 1.25,
        saturated: 93,
        cpu_smoothing: 0.15,
        cpu_gain: [60.0, 5.0],
    };

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
    /// above what its CPU says (`cpu`, smoothed): below saturation the error is negative
    /// and the cap grows, however long a queue a load below the cluster's capacity keeps.
    pub(crate) fn error(&self, load: f64, cpu: f64) -> f64 {
        let over_target = load - f64::from(self.target);
        if self.saturated == 0 {
            return over_target;
        }
        let over = cpu - f64::from(self.saturated);
        let gain = if over >= 0.0 {
            self.cpu_gain[0]
        } else {
            self.cpu_gain[1]
        };
        over_target.min(f64::from(gain) * over / 100.0)
    }

    /// The factor a poll moves the cap by, given the refused share `refused`, the error,
    /// the busiest node's load per core, its pool now (for v0.4's law) and the price before
    /// (updated in place, for the price rule).
    pub(crate) fn factor(
        &self,
        refused: f64,
        error: f64,
        load: f64,
        pool: &crate::node_stats::SearchPool,
        price: &mut f64,
    ) -> f64 {
        // Far below the operating point (a load that fell away), growth may reach the
        // ratio of the two at once.
        let target = f64::from(self.target);
        let up = if load > 0.0 {
            (target / load).max(STEP)
        } else {
            STEP * 4.0
        };
        let factor = match self.rule {
            Rule::Proportional { grow, shrink } => {
                1.0 + f64::from(grow) * refused - f64::from(shrink) * error
            }
            Rule::Price { leak, gain, grow } => {
                *price = (f64::from(leak) * *price + f64::from(gain) * error).clamp(0.0, 50.0);
                let share = *price / (1.0 + *price);
                1.0 + f64::from(grow) * (refused - share)
            }
            Rule::V04 => {
                let threads = f64::from(pool.threads.max(1));
                let idle = ((threads - f64::from(pool.active)) / threads).clamp(0.0, 1.0);
                let standing = f64::from(pool.queue) / threads.max(8.0);
                return (1.0 + (1.0 + idle) * refused - 0.7 * standing).clamp(1.0 / STEP, STEP);
            }
        };
        factor.clamp(1.0 / STEP, up)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node_stats::SearchPool;

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
        // At 93 % nothing shrinks; below, the cap grows by 5 % a 100 % of CPU.
        assert_eq!(law.error(9.0, 93.0), 0.0);
        assert!((law.error(9.0, 73.0) + 1.0).abs() < 1e-9);
        assert!((law.error(0.25, 73.0) + 1.0).abs() < 1e-9, "the lower wins");
    }

    #[test]
    fn the_factor_is_the_refused_share_less_the_error_within_a_step() {
        let law = Law::DEFAULT;
        let pool = SearchPool::new(2, 2, 0);
        let mut price = 0.0;
        // Half refused, the node on its operating point: up by half, within 1.4.
        assert!((law.factor(0.5, 0.0, 1.25, &pool, &mut price) - 1.4).abs() < 1e-9);
        assert!((law.factor(0.2, 0.0, 1.25, &pool, &mut price) - 1.2).abs() < 1e-9);
        // Far over: down by at most 1.4.
        assert!((law.factor(0.0, 3.0, 4.25, &pool, &mut price) - 1.0 / 1.4).abs() < 1e-9);
        // Far under (a load that fell to a fifth of the target): up to 5 at once.
        assert!((law.factor(0.5, -4.0, 0.25, &pool, &mut price) - 5.0).abs() < 1e-9);
    }
}
