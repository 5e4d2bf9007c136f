//! A one-core node under a fixed in-flight cap, by mean values: what any cap can hold, so
//! that a goal the law misses can be told from a goal no cap can meet.
//!
//! The node is one server (its core; the search pool's threads share it, so it is busy
//! whenever a search is in flight), searches arrive as a Poisson stream at `load` times
//! what it serves with the core always busy, and a front end caps the searches in flight at
//! `cap`: one that finds `cap` in flight is refused. That is the M/M/1/N queue: the number in
//! flight is `n` with probability `ρⁿ / (1 + ρ + … + ρᴺ)`, whatever the order the node
//! serves them in (and, with the threads sharing the core, whatever the distribution of the
//! searches' cost). The figures are exact for that model; a mean, not a percentile.
//!
//! ```
//! use load_sim::mean_value::Capped;
//!
//! // At exactly the node's capacity, a cap of N refuses 1 / (N + 1) of the searches.
//! let at_capacity = Capped::new(1.0, 4);
//! assert!((at_capacity.shed - 0.2).abs() < 1e-12);
//! assert!((at_capacity.busy - 0.8).abs() < 1e-12);
//! ```

/// The node's figures under a cap.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capped {
    /// The offered load over what the node serves with its core always busy (`ρ`).
    pub load: f64,
    /// The cap: searches in flight at most.
    pub cap: u32,
    /// The share of the time the core is busy (the goodput, over the node's capacity).
    pub busy: f64,
    /// The share of the searches refused.
    pub shed: f64,
    /// The searches in flight on average.
    pub in_flight: f64,
    /// An admitted search's mean time in flight, in units of its mean cost alone.
    pub response: f64,
}

impl Capped {
    /// The figures at `load` (`ρ`, more than 0) under `cap` (at least 1).
    ///
    /// # Panics
    ///
    /// When `load` is not more than 0 or `cap` is 0.
    #[must_use]
    pub fn new(load: f64, cap: u32) -> Capped {
        assert!(load > 0.0, "load {load}");
        assert!(cap > 0, "a cap of 0 admits nothing");
        // Weights ρⁿ, from n = 0, summed in order (exact enough for caps in the hundreds).
        let (mut weight, mut total, mut moment) = (1.0_f64, 1.0_f64, 0.0_f64);
        for n in 1..=cap {
            weight *= load;
            total += weight;
            moment += f64::from(n) * weight;
        }
        let shed = weight / total;
        let busy = 1.0 - 1.0 / total;
        let in_flight = moment / total;
        Capped {
            load,
            cap,
            busy,
            shed,
            in_flight,
            // Little's law over the admitted rate, ρ (1 - shed) = busy.
            response: in_flight / busy,
        }
    }

    /// The mean response of an uncapped node at `load` (below 1), in units of a search's
    /// mean cost: `1 / (1 - ρ)`.
    ///
    /// # Panics
    ///
    /// When `load` is not within `0..1`.
    #[must_use]
    pub fn uncapped_response(load: f64) -> f64 {
        assert!(
            (0.0..1.0).contains(&load),
            "an uncapped node at {load} has no mean"
        );
        1.0 / (1.0 - load)
    }

    /// The least cap from 1 to `most` for which `holds` is true of the figures (`None`:
    /// none of them).
    pub fn least(load: f64, most: u32, holds: impl Fn(&Capped) -> bool) -> Option<Capped> {
        (1..=most).map(|cap| Capped::new(load, cap)).find(holds)
    }

    /// The greatest cap from 1 to `most` for which `holds` is true of the figures (`None`:
    /// none of them).
    pub fn greatest(load: f64, most: u32, holds: impl Fn(&Capped) -> bool) -> Option<Capped> {
        (1..=most)
            .rev()
            .map(|cap| Capped::new(load, cap))
            .find(holds)
    }
}
