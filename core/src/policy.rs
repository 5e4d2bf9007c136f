//! From raw cluster samples to decisions: failure policy and staleness, smoothing, and
//! per-class hysteresis. Pure logic on injected instants; the monitor drives it.

use core::time::Duration;

use crate::{
    ControlConfig, CpuPercent, Instant, Threshold, config::FailurePolicy, config::Smoothing,
};

/// What one poll produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A sample: the CPU, or `None` when the source answered but could not measure.
    Sample(Option<CpuPercent>),
    /// The poll failed.
    Failed,
}

/// The signal settings of a [`ControlConfig`]: how the monitor side turns samples into
/// each class's armed state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SignalPolicy {
    /// See [`ControlConfig::failure_policy`].
    pub(crate) failure_policy: FailurePolicy,
    /// See [`ControlConfig::stale_after`].
    pub(crate) stale_after: Duration,
    /// See [`ControlConfig::smoothing`].
    pub(crate) smoothing: Smoothing,
    /// See [`ControlConfig::enter_samples`].
    pub(crate) enter_samples: u32,
    /// See [`ControlConfig::exit_margin`].
    pub(crate) exit_margin: u8,
    /// See [`ControlConfig::min_hold`].
    pub(crate) min_hold: Duration,
}

impl SignalPolicy {
    /// Fess's behaviour: fail open, no smoothing, no hysteresis.
    #[cfg(test)]
    pub(crate) const FESS: SignalPolicy = SignalPolicy::from_config(&ControlConfig::DEFAULT);

    /// The signal settings of `config`.
    #[must_use]
    pub(crate) const fn from_config(config: &ControlConfig) -> SignalPolicy {
        SignalPolicy {
            failure_policy: config.failure_policy,
            stale_after: config.stale_after,
            smoothing: config.smoothing,
            enter_samples: if config.enter_samples == 0 {
                1
            } else {
                config.enter_samples
            },
            exit_margin: config.exit_margin,
            min_hold: config.min_hold,
        }
    }
}

/// The effective CPU after failure policy, staleness and smoothing.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Signal {
    /// When the last successful sample arrived.
    last_good: Option<Instant>,
    /// The smoothed value and when it was last updated.
    ewma: Option<(Instant, f32)>,
}

impl Signal {
    pub(crate) const NEW: Signal = Signal {
        last_good: None,
        ewma: None,
    };

    /// Takes one outcome; returns the effective CPU (`None`: unknown) and the raw sample.
    pub(crate) fn update(
        &mut self,
        now: Instant,
        outcome: Outcome,
        config: &SignalPolicy,
    ) -> (Option<CpuPercent>, Option<CpuPercent>) {
        if let Outcome::Sample(Some(raw)) = outcome {
            self.last_good = Some(now);
            let value = match (config.smoothing, self.ewma) {
                (Smoothing::Ewma { tau }, Some((then, previous))) if !tau.is_zero() => {
                    let dt = now.saturating_duration_since(then).as_secs_f32();
                    let alpha = 1.0 - libm::expf(-dt / tau.as_secs_f32());
                    previous + alpha * (f32::from(raw.get()) - previous)
                }
                // Seeded with the first sample, not with 0.
                _ => f32::from(raw.get()),
            };
            self.ewma = Some((now, value));
            return (CpuPercent::from_f32(value), Some(raw));
        }
        // A failure, or a source that cannot measure.
        let fresh = self
            .last_good
            .is_some_and(|then| now.saturating_duration_since(then) <= config.stale_after);
        let held = self.ewma.and_then(|(_, value)| CpuPercent::from_f32(value));
        let effective = match config.failure_policy {
            FailurePolicy::Hold | FailurePolicy::Closed if fresh && held.is_some() => held,
            FailurePolicy::Closed => None,
            FailurePolicy::Open | FailurePolicy::Hold => Some(CpuPercent::ZERO),
        };
        if effective != held {
            // The held value is gone: the next success seeds smoothing afresh.
            self.ewma = None;
        }
        (effective, None)
    }

    /// When the last successful sample arrived.
    pub(crate) fn last_good(&self) -> Option<Instant> {
        self.last_good
    }

    /// Forgets the smoothing history (when the smoothing settings change).
    pub(crate) fn reset_smoothing(&mut self) {
        self.ewma = None;
    }
}

/// Whether one class (web or API) is being rejected, with hysteresis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hysteresis {
    pub(crate) armed: bool,
    /// Consecutive samples at or above the threshold while not armed.
    streak: u32,
    /// When the class was armed.
    since: Instant,
}

impl Hysteresis {
    pub(crate) const fn new(armed: bool) -> Hysteresis {
        Hysteresis {
            armed,
            streak: 0,
            since: Instant::ZERO,
        }
    }

    /// The state with nothing observed yet for `threshold` (Fess: the CPU reads 0 until the
    /// first poll, so only a threshold that rejects all rejects).
    pub(crate) const fn initial(threshold: Threshold) -> Hysteresis {
        Hysteresis::new(threshold.rejects_all())
    }

    /// Takes the effective CPU for a class with `threshold`. Returns whether the class is
    /// rejected now.
    ///
    /// Entering needs `enter_samples` consecutive samples at or above the threshold; leaving
    /// needs a sample below `threshold - exit_margin` (never below 1 %) after at least
    /// `min_hold` in the state. With Fess's settings (1, 0, 0) this is `cpu >= threshold`.
    /// An unknown CPU (the `closed` policy) rejects without touching the state.
    pub(crate) fn update(
        &mut self,
        now: Instant,
        cpu: Option<CpuPercent>,
        threshold: Threshold,
        config: &SignalPolicy,
    ) -> bool {
        if threshold.is_off() {
            *self = Hysteresis::new(false);
            return false;
        }
        let Some(cpu) = cpu else {
            return true;
        };
        if self.armed {
            let exit_below = threshold.get().saturating_sub(config.exit_margin).max(1);
            let held_long_enough = now.saturating_duration_since(self.since) >= config.min_hold;
            if cpu.get() < exit_below && held_long_enough && !threshold.rejects_all() {
                *self = Hysteresis::new(false);
            }
        } else if threshold.is_reached(cpu) {
            self.streak += 1;
            if self.streak >= config.enter_samples || threshold.rejects_all() {
                self.armed = true;
                self.streak = 0;
                self.since = now;
            }
        } else {
            self.streak = 0;
        }
        self.armed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(n: u8) -> Option<CpuPercent> {
        CpuPercent::new(n)
    }

    fn t(n: i32) -> Threshold {
        Threshold::from_fess(n)
    }

    fn secs(n: u64) -> Instant {
        Instant::from_secs(n)
    }

    fn config() -> SignalPolicy {
        SignalPolicy::FESS
    }

    #[test]
    fn fess_signal_is_the_raw_sample_and_zero_on_failure() {
        let mut signal = Signal::NEW;
        let c = config();
        assert_eq!(
            signal.update(secs(0), Outcome::Sample(cpu(80)), &c),
            (cpu(80), cpu(80))
        );
        assert_eq!(signal.update(secs(1), Outcome::Failed, &c), (cpu(0), None));
        assert_eq!(
            signal.update(secs(2), Outcome::Sample(cpu(30)), &c).0,
            cpu(30)
        );
        assert_eq!(signal.update(secs(3), Outcome::Sample(None), &c).0, cpu(0));
    }

    #[test]
    fn hold_keeps_the_last_good_sample_until_stale() {
        let mut signal = Signal::NEW;
        let c = SignalPolicy {
            failure_policy: FailurePolicy::Hold,
            stale_after: Duration::from_secs(5),
            ..config()
        };
        assert_eq!(
            signal.update(secs(0), Outcome::Failed, &c).0,
            cpu(0),
            "nothing to hold"
        );
        signal.update(secs(10), Outcome::Sample(cpu(90)), &c);
        assert_eq!(signal.update(secs(12), Outcome::Failed, &c).0, cpu(90));
        assert_eq!(signal.update(secs(15), Outcome::Failed, &c).0, cpu(90));
        assert_eq!(
            signal.update(secs(16), Outcome::Failed, &c).0,
            cpu(0),
            "stale: open"
        );
        assert_eq!(signal.update(secs(17), Outcome::Failed, &c).0, cpu(0));
    }

    #[test]
    fn closed_is_unknown_once_stale_or_with_nothing_held() {
        let mut signal = Signal::NEW;
        let c = SignalPolicy {
            failure_policy: FailurePolicy::Closed,
            stale_after: Duration::from_secs(5),
            ..config()
        };
        assert_eq!(signal.update(secs(0), Outcome::Failed, &c).0, None);
        signal.update(secs(1), Outcome::Sample(cpu(20)), &c);
        assert_eq!(signal.update(secs(3), Outcome::Failed, &c).0, cpu(20));
        assert_eq!(signal.update(secs(7), Outcome::Failed, &c).0, None);
        assert_eq!(
            signal.update(secs(8), Outcome::Sample(cpu(25)), &c).0,
            cpu(25)
        );
    }

    #[test]
    fn ewma_is_time_aware_and_seeded_with_the_first_sample() {
        let c = SignalPolicy {
            smoothing: Smoothing::Ewma {
                tau: Duration::from_secs(10),
            },
            ..config()
        };
        let mut signal = Signal::NEW;
        assert_eq!(
            signal.update(secs(0), Outcome::Sample(cpu(80)), &c).0,
            cpu(80),
            "seed"
        );
        // After one tau, the new sample has weight 1 - 1/e = 0.632.
        let (smoothed, raw) = signal.update(secs(10), Outcome::Sample(cpu(0)), &c);
        assert_eq!(raw, cpu(0));
        assert_eq!(smoothed, cpu(29)); // 80 * 0.368 = 29.4
        // Two polls half a tau apart weigh the same as one a whole tau later.
        let mut split = Signal::NEW;
        split.update(secs(0), Outcome::Sample(cpu(80)), &c);
        split.update(secs(5), Outcome::Sample(cpu(0)), &c);
        assert_eq!(
            split.update(secs(10), Outcome::Sample(cpu(0)), &c).0,
            cpu(29)
        );
    }

    #[test]
    fn fess_hysteresis_is_the_plain_comparison() {
        let c = config();
        let mut h = Hysteresis::initial(t(80));
        for (n, want) in [
            (79, false),
            (80, true),
            (81, true),
            (79, false),
            (100, true),
            (0, false),
        ] {
            assert_eq!(h.update(secs(0), cpu(n), t(80), &c), want, "{n}");
        }
        let mut zero = Hysteresis::initial(t(0));
        assert!(zero.armed);
        assert!(zero.update(secs(0), cpu(0), t(0), &c));
        let mut off = Hysteresis::initial(t(100));
        assert!(!off.update(secs(0), cpu(100), t(100), &c));
    }

    #[test]
    fn enter_samples_exit_margin_and_min_hold() {
        let c = SignalPolicy {
            enter_samples: 3,
            exit_margin: 10,
            min_hold: Duration::from_secs(30),
            ..config()
        };
        let mut h = Hysteresis::initial(t(80));
        assert!(!h.update(secs(0), cpu(90), t(80), &c));
        assert!(!h.update(secs(1), cpu(90), t(80), &c));
        assert!(!h.update(secs(2), cpu(70), t(80), &c), "the streak breaks");
        assert!(!h.update(secs(3), cpu(85), t(80), &c));
        assert!(!h.update(secs(4), cpu(85), t(80), &c));
        assert!(h.update(secs(5), cpu(85), t(80), &c), "third in a row");
        assert!(h.update(secs(10), cpu(60), t(80), &c), "min hold: 30 s");
        assert!(
            h.update(secs(40), cpu(75), t(80), &c),
            "75 is not below 80 - 10"
        );
        assert!(!h.update(secs(41), cpu(69), t(80), &c));
    }

    #[test]
    fn unknown_rejects_without_changing_state() {
        let c = config();
        let mut h = Hysteresis::initial(t(80));
        assert!(h.update(secs(0), None, t(80), &c));
        assert!(!h.armed);
        assert!(!h.update(secs(1), cpu(10), t(80), &c));
    }
}
