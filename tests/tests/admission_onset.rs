//! The onset of an overload on a machine whose CPU is the front end's own (issues 45 and
//! 51): before the poll's CPU can arm a class, only the flood bound stands between a surge
//! and the cores' queue, and every look it waits for is a bucket of the surge's excess
//! queued. The local loop's step from 0.5x to 2x found the bound engaged at 47 to 71
//! requests in flight on one core (two looks into the surge), 150 to 210 ms of queue: the
//! onset's tail, 8 to 11 times the quiet p99.

use std::time::Duration;

use load_core::{
    AdmissionMode, Clock, ControlConfig, CpuPercent, Instant, LoadControl, Outcome, Permit,
    Threshold, time::ManualClock,
};

fn limit_mode() -> LoadControl {
    let mut config = ControlConfig::new();
    config.web_threshold = Threshold::from_fess(70);
    config.admission = AdmissionMode::Limit;
    config.monitor_interval = Duration::from_secs(1);
    LoadControl::from_config(&config)
}

/// What the front end met: the most requests in flight in the light traffic's last
/// second, and from the surge's start on, until the surge's first second is over.
struct Onset {
    before: u32,
    peak: u32,
    /// When, in ms from the surge's start, the in-flight count peaked.
    peak_at: u64,
    /// When, in ms from the surge's start, the flood bound first held (`None`: never).
    bounded_after: Option<u64>,
}

/// How the cores serve what is in flight.
#[derive(Clone, Copy, Debug)]
enum Drain {
    /// First come first served, a request a core at a time (a queue in front of the work).
    Queue,
    /// Shared among everything in flight, as an operating system shares its cores among
    /// the threads of a blocking pool: each request gets `cores / in flight` of a core, so
    /// that completions stall while the in-flight count grows.
    Shared,
}

/// A request in flight: its CPU left, in µs, or when a queue answers it, in ms.
struct Running<'a> {
    left_us: u64,
    answered: u64,
    _permit: Permit<'a, ManualClock>,
}

/// Light traffic at `light` a second for `warm` ms, then a surge at `surge` a second for a
/// second, each request `per` ms of `cores` cores, drained as `drain` says. Polls once a
/// second, the front end's own cores as the source, with the CPU they were busy over the
/// second before (the web threshold is 70 %).
fn onset(light: u64, surge: u64, warm: u64, per: u64, cores: u32, drain: Drain) -> Onset {
    let control = limit_mode();
    let start = 1_000_000;
    let clock = ManualClock::new(Instant::from_millis(start));
    let poll = |control: &LoadControl, clock: &ManualClock, busy_ms: u64| {
        let cpu = (busy_ms * 100 / (1_000 * u64::from(cores))).min(100) as u8;
        let _ = control.update(clock.now(), Outcome::Sample(CpuPercent::new(cpu)));
        control.observe_load(None, Some(cores));
    };
    poll(&control, &clock, 0);
    let mut busy_ms = 0;
    let mut free_at = vec![0u64; cores as usize];
    let mut held: Vec<Running<'_>> = Vec::new();
    let mut onset = Onset {
        before: 0,
        peak: 0,
        peak_at: 0,
        bounded_after: None,
    };
    // Arrivals in thousandths of a request, so that any rate spreads evenly.
    let mut due = 0u64;
    for ms in 0..warm + 1_000 {
        clock.set(Instant::from_millis(start + ms));
        match drain {
            Drain::Queue => {
                held.retain(|r| r.answered > ms);
                busy_ms += free_at.iter().filter(|&&free| free > ms).count() as u64;
            }
            Drain::Shared => {
                let n = held.len() as u64;
                if let Some(each_us) = (u64::from(cores) * 1_000).checked_div(n) {
                    let each_us = each_us.min(1_000);
                    for r in &mut held {
                        r.left_us = r.left_us.saturating_sub(each_us);
                    }
                    held.retain(|r| r.left_us > 0);
                    busy_ms += n.min(u64::from(cores));
                }
            }
        }
        if ms % 1_000 == 0 {
            poll(&control, &clock, busy_ms);
            busy_ms = 0;
        }
        due += if ms < warm { light } else { surge };
        while due >= 1_000 {
            due -= 1_000;
            if let Some(permit) = control.admit("/search?q=x", &clock).permit() {
                let core = (0..free_at.len())
                    .min_by_key(|&c| free_at[c])
                    .unwrap_or_default();
                let answered = free_at[core].max(ms) + per;
                if matches!(drain, Drain::Queue) {
                    free_at[core] = answered;
                }
                held.push(Running {
                    left_us: per * 1_000,
                    answered,
                    _permit: permit,
                });
            }
        }
        let in_flight = held.len() as u32;
        if ms + 1_000 >= warm && ms < warm {
            onset.before = onset.before.max(in_flight);
        } else if ms >= warm {
            if in_flight > onset.peak {
                onset.peak = in_flight;
                onset.peak_at = ms - warm;
            }
            if onset.bounded_after.is_none() && control.admission().flooding {
                onset.bounded_after = Some(ms - warm);
            }
        }
    }
    onset
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

    /// A surge of 1.5 to 4 times what the cores serve, after light traffic at a quarter to
    /// three quarters of it, is bounded within two looks (a bucket each): the requests in
    /// flight never exceed what a look tells from the light traffic's (twice what it held,
    /// and noise) by more than what the surge adds over two buckets and two requests' time
    /// (its excess over what the cores serve through a queue; all of it where they share
    /// themselves, as completions stall) and a request a core. Where the cores share
    /// themselves, a look that waits for a bucket's first completion may never come.
    #[test]
    fn on_its_own_cores_a_surge_is_bounded_within_two_looks(
        per in 2u64..6,
        cores in 1u32..=4,
        light_share in 25u64..75,
        surge_share in 150u64..400,
        warm in 3_000u64..5_000,
        drain in proptest::prop_oneof![
            proptest::strategy::Just(Drain::Queue),
            proptest::strategy::Just(Drain::Shared)
        ],
    ) {
        // What the cores serve, in requests a second.
        let serve = u64::from(cores) * 1_000 / per;
        let (light, surge) = (serve * light_share / 100, serve * surge_share / 100);
        let seen = onset(light, surge, warm, per, cores, drain);
        let adds_per_ms = match drain {
            Drain::Queue => (surge - serve) as f64 / 1_000.0,
            Drain::Shared => surge as f64 / 1_000.0,
        };
        // A look sees a flood once the in-flight count is above a load that doubled what
        // the light traffic held (and 3 deviations of it) and grew by more than noise (2
        // requests).
        let doubled = 2 * seen.before + (3.0 * f64::from(2 * seen.before).sqrt()).ceil() as u32;
        let bound = doubled
            + 2
            + (adds_per_ms * (200 + 2 * per) as f64).ceil() as u32
            + cores;
        proptest::prop_assert!(
            seen.peak <= bound,
            "{} in flight at the surge's peak, {} ms into it (bound {bound}; {} before, the \
             flood bound from {:?} ms)",
            seen.peak,
            seen.peak_at,
            seen.before,
            seen.bounded_after
        );
    }
}
