//! The limit mode's edge cases a review found, each written first as a test that failed:
//! a poll that misses the search pool, a front end with no traffic of its own while the
//! others keep the cluster busy, and a flood bound under a long poll interval.

use std::time::Duration;

use load_core::admission::Law;
use load_core::node_stats::SearchPool;
use load_core::{
    Admission, AdmissionMode, Clock, ControlConfig, CpuPercent, Instant, LoadControl, Outcome,
    Threshold, time::ManualClock,
};

fn limit_mode(interval: Duration) -> LoadControl {
    LoadControl::from_config(&limit_config(interval))
}

fn limit_config(interval: Duration) -> ControlConfig {
    let mut config = ControlConfig::new();
    config.web_threshold = Threshold::from_fess(70);
    config.admission = AdmissionMode::Limit;
    config.admission_initial = 8;
    config.monitor_interval = interval;
    config
}

/// The limit mode with the node's CPU as its gate (`Law::demand_on_node` off), for the
/// cases [`overloaded`] drives: at 99 % its node is saturated whatever this front end's
/// demand, and the cap comes down. With the default gate a node that serves this front
/// end's demand (all of it admitted, as here) is not saturated, and the cap holds.
fn limit_mode_cpu_gate(interval: Duration) -> LoadControl {
    let law = Law {
        demand_on_node: false,
        ..Law::DEFAULT
    };
    LoadControl::from_config_with_law(&limit_config(interval), law)
}

/// The operating point on the pool below (two threads: a one-core node), in tasks per
/// core: `cores + max(3, cores / 4)` tasks.
const POINT: f64 = 4.0;

/// A busy pool: two threads, both running, and (from the second poll on) `load` tasks per
/// core run and waiting on average.
fn pool(load: f64) -> SearchPool {
    let milli = (load * 1000.0) as u32;
    SearchPool::new(2, 2, 0).with_means(milli.min(1000), milli.saturating_sub(1000))
}

/// A poll at `cpu` percent, with `pool` or without one.
fn poll(control: &LoadControl, clock: &ManualClock, cpu: u8, pool: Option<SearchPool>) {
    let _ = control.update(clock.now(), Outcome::Sample(CpuPercent::new(cpu)));
    control.observe_pool(pool);
}

/// One second of traffic: `offered` requests spread over it, each answered after 10 ms
/// (or before the next arrives) if admitted; the clock ends a second later. Returns how
/// many were admitted.
fn second(control: &LoadControl, clock: &ManualClock, offered: u32) -> u32 {
    let spacing = Duration::from_secs(1) / offered.max(1);
    let hold = spacing.min(Duration::from_millis(10));
    let mut admitted = 0;
    for _ in 0..offered {
        if let Admission::Admitted(permit) = control.admit("/search?q=x", clock) {
            admitted += 1;
            clock.advance(hold);
            drop(permit);
        } else {
            clock.advance(hold);
        }
        clock.advance(spacing - hold);
    }
    admitted
}

/// Arms the web class at a saturated cluster and drives the cap down with a load per core
/// three times the operating point for `polls` polls, 100 requests offered a
/// second ([`limit_mode_cpu_gate`]). Returns the cap in hundredths.
fn overloaded(control: &LoadControl, clock: &ManualClock, polls: u32) -> u32 {
    // Light load first, so that the cap is learnt from completions.
    for _ in 0..3 {
        second(control, clock, 50);
    }
    for _ in 0..polls {
        second(control, clock, 100);
        poll(control, clock, 99, Some(pool(3.0 * POINT)));
    }
    control.admission().cap_hundredths
}

/// A poll that misses the search pool (a node that did not report it, a proxy's hiccup)
/// used to switch the front end to the law without the pool: the next completions rebuilt
/// its cap at that law's floor of 8, in every front end of the fleet at once, and the
/// floors added up again.
#[test]
fn a_poll_without_the_pool_keeps_the_cap_where_the_fleet_law_left_it() {
    let clock = ManualClock::new(Instant::from_secs(1_000));
    let control = limit_mode_cpu_gate(Duration::from_secs(1));
    let before = overloaded(&control, &clock, 8);
    assert!(before < 800, "the law drove the cap below 8: {before}");
    poll(&control, &clock, 99, None);
    second(&control, &clock, 100);
    let after = control.admission().cap_hundredths;
    assert!(
        after <= before,
        "one poll without the pool: the cap went from {before} to {after} hundredths"
    );
}

/// The demand of the poll interval that missed the pool used to be dropped: the share
/// refused then never reached the law, which grows the cap by it.
#[test]
fn the_demand_of_a_poll_without_the_pool_counts_at_the_next_one() {
    let clock = ManualClock::new(Instant::from_secs(1_000));
    let control = limit_mode_cpu_gate(Duration::from_secs(1));
    overloaded(&control, &clock, 8);
    // Most of a second's demand refused, and the poll misses the pool.
    second(&control, &clock, 400);
    poll(&control, &clock, 99, None);
    let before = control.admission().cap_hundredths;
    // The next poll has it, with the busiest node at the operating point: the cap grows by
    // the share refused since the last poll that had the pool.
    poll(&control, &clock, 99, Some(pool(POINT)));
    let after = control.admission().cap_hundredths;
    assert!(
        after > before,
        "the refusals before the missing poll were dropped: {before} -> {after}"
    );
}

/// A front end with no traffic of its own while the others keep the cluster loaded used
/// to shrink by the cluster's load every poll, to an eighth of a request, and then admit
/// nothing for 224 ms of every 256 when its traffic came back.
#[test]
fn a_front_end_without_traffic_keeps_its_cap() {
    let clock = ManualClock::new(Instant::from_secs(1_000));
    let control = limit_mode_cpu_gate(Duration::from_secs(1));
    let before = overloaded(&control, &clock, 3);
    for _ in 0..30 {
        clock.advance(Duration::from_secs(1));
        poll(&control, &clock, 99, Some(pool(3.0 * POINT)));
    }
    let after = control.admission().cap_hundredths;
    assert_eq!(after, before, "30 idle polls moved the cap");
    // Its traffic comes back: admitted as before the idle spell. Its share of the node at
    // three times the operating point is a fraction of a request, one request the first
    // `fraction` ms of every 256: the first is admitted within 256 ms.
    (0..256)
        .position(|_| {
            let admitted = control.admit("/search?q=x", &clock).is_admitted();
            clock.advance(Duration::from_millis(1));
            admitted
        })
        .expect("a request admitted within 256 ms");
}

/// The flood bound held for 3 s, the time the CPU takes to arm a class with polls every
/// second; with a longer poll interval the flood came back unbounded before the CPU could
/// arm. While the flood's demand goes on, it holds for two intervals and a second.
#[test]
fn the_flood_bound_holds_until_a_poll_can_arm_the_class() {
    for (interval, still) in [(1, 2_500), (10, 20_000)] {
        let clock = ManualClock::new(Instant::from_secs(1_000));
        let control = limit_mode(Duration::from_secs(interval));
        poll(&control, &clock, 10, Some(pool(0.2)));
        // Light load, then a flood: 40 more in flight every 100 ms, 10 answered.
        second(&control, &clock, 50);
        let mut held = Vec::new();
        for _ in 0..6 {
            for _ in 0..40 {
                if let Admission::Admitted(permit) = control.admit("/search?q=x", &clock) {
                    held.push(permit);
                }
            }
            clock.advance(Duration::from_millis(100));
            for _ in 0..10 {
                held.pop();
            }
        }
        assert!(
            control.admission().flooding,
            "{interval} s: a flood is bounded"
        );
        // The flood drains while its demand goes on, 40 every 100 ms, for `still` ms; each
        // bucket's first completion looks at the bound again.
        held.clear();
        for _ in 0..still / 100 {
            for _ in 0..40 {
                let _ = control.admit("/search?q=x", &clock);
            }
            clock.advance(Duration::from_millis(100));
        }
        assert!(
            control.admission().flooding,
            "polls every {interval} s: the flood bound lapsed {still} ms later"
        );
    }
}

/// A fresh front end's first poll goes out with its first request, a surge's. On the node
/// its answer came about 0.2 s later, behind the surge's own connections, with a pool from
/// before the surge: weighed against what the front end held by then (the surge's peak in
/// flight), that poll took the surge for what the front end holds at quiet, and the cap
/// started from it when the flood bound engaged (15.71, where the node's point is 4).
/// Weighed against what it held when the poll was sent, the start is at most the initial
/// cap. Returns the cap, in hundredths, after the first bounded poll under `law`, with the poll marked
/// as sent or not, and the in-flight count the flood bound engaged at.
fn start_after_a_late_first_answer(marked: bool, law: load_core::admission::Law) -> (u32, u32) {
    let clock = ManualClock::new(Instant::from_secs(1_000));
    let mut config = ControlConfig::new();
    config.web_threshold = Threshold::from_fess(70);
    config.admission = AdmissionMode::Limit;
    config.admission_initial = 8;
    config.monitor_interval = Duration::from_secs(1);
    let control = LoadControl::from_config_with_law(&config, law);
    if marked {
        control.poll_sent();
    }
    // The surge at about twice what the node serves: 7 arrive every 20 ms, 3 answered.
    let mut held = Vec::new();
    let mut surge = |ms: u64| {
        for _ in 0..ms / 20 {
            for _ in 0..7 {
                if let Admission::Admitted(permit) = control.admit("/search?q=x", &clock) {
                    held.push(permit);
                }
            }
            clock.advance(Duration::from_millis(20));
            for _ in 0..3 {
                held.pop();
            }
        }
    };
    surge(200);
    // The answer: the pool from before the surge, one task running, one waiting.
    poll(&control, &clock, 6, Some(SearchPool::new(2, 1, 1)));
    // A second later the node is saturated, at three times its point.
    surge(1_000);
    poll(&control, &clock, 99, Some(pool(3.0 * POINT)));
    let admission = control.admission();
    (admission.cap_hundredths, admission.flood_engaged_at)
}

#[test]
fn a_poll_answered_late_in_a_surge_is_weighed_against_what_was_held_when_sent() {
    // Unmarked, the path the node showed, on the law before the flood bound's quick looks
    // and its measure at the node's point: the start and the flood bound from the surge.
    let before = load_core::admission::Law {
        quick_looks: 0,
        flood_point: false,
        ..load_core::admission::Law::DEFAULT
    };
    let (late, late_flood) = start_after_a_late_first_answer(false, before);

    assert!(
        late > 800,
        "the late answer took the surge for what was held: {late}"
    );
    let (sent, flood) = start_after_a_late_first_answer(true, before);
    assert!(
        sent <= 800,
        "weighed against what was held when sent, the cap started at {sent} hundredths"
    );
    assert!(
        flood < late_flood,
        "the flood bound engaged at {flood} in flight, unmarked at {late_flood}"
    );
    // The default's flood bound, measured against at most the node's operating point and
    // quick to look, guards the unmarked path too (2.37 and 25 in flight when written;
    // the law before it: 27.00 and 122).
    let (default, default_flood) =
        start_after_a_late_first_answer(false, load_core::admission::Law::DEFAULT);
    assert!(
        default <= 800 && default_flood < late_flood,
        "the default, unmarked: the cap at {default} hundredths, the bound at {default_flood}"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Any source without a search pool (a machine's own CPU, a test double, a proxy that
    /// filters the pool), below the threshold: after any light traffic, a burst of any size
    /// sent at once is admitted whole, mid-stream or after any quiet spell (issue 36: the
    /// disarmed ceiling of v0.4's law without a pool refused 55 to 70 of 100 at 50 % CPU).
    #[test]
    fn a_burst_below_the_threshold_is_never_shed_without_a_pool(
        rate in 1u64..200,
        latency in 1u64..500,
        warm in 1u64..20,
        quiet in 0u64..20_000,
        burst in 1usize..1_000,
        cpu in 0u8..70,
    ) {
        use load_core::{Admission, AdmissionMode, Clock, ControlConfig, CpuPercent, Instant, LoadControl, Outcome, Threshold, time::ManualClock};
        use std::time::Duration;
        let mut config = ControlConfig::new();
        config.web_threshold = Threshold::from_fess(70);
        config.admission = AdmissionMode::Limit;
        let control = LoadControl::from_config(&config);
        let clock = ManualClock::new(Instant::from_secs(1_000));
        let poll = |control: &LoadControl, clock: &ManualClock| {
            let _ = control.update(clock.now(), Outcome::Sample(CpuPercent::new(cpu)));
        };
        poll(&control, &clock);
        // Light traffic: `rate` a second, each answered after `latency` ms, for `warm` s.
        let mut held = std::collections::VecDeque::new();
        let step = 1_000 / rate;
        for ms in (0..warm * 1_000).step_by(usize::try_from(step).expect("small")) {
            clock.set(Instant::from_millis(1_000_000 + ms));
            while held.front().is_some_and(|(end, _)| *end <= ms) {
                held.pop_front();
            }
            if ms % 1_000 < step {
                poll(&control, &clock);
            }
            let permit = control.admit("/search?q=x", &clock).permit();
            proptest::prop_assert!(permit.is_some(), "light traffic refused: {:?}", control.admission());
            held.push_back((ms + latency, permit));
        }
        clock.advance(Duration::from_millis(quiet));
        if quiet >= 1_000 {
            drop(held);
            poll(&control, &clock);
        }
        let answers: Vec<_> = (0..burst).map(|_| control.admit("/search?q=x", &clock)).collect();
        let admitted = answers.iter().filter(|a| matches!(a, Admission::Admitted(_))).count();
        proptest::prop_assert_eq!(admitted, burst, "{:?}", control.admission());
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

    /// The property above over every source a test can give: with or without the busiest
    /// node's search pool (at any load per core below the one-core node's operating point,
    /// as a test double reports it), one front end or a fleet of up to four sharing one
    /// scripted node, each on its own clock: after any light traffic, a burst of any size
    /// sent at once to one front end is admitted whole, and the ordinary requests after it
    /// too (the flood bound engages only on a load that keeps growing, and a burst does not).
    #[test]
    fn a_burst_below_the_threshold_is_admitted_whole_with_any_source(
        rate in 1u64..100,
        latency in 1u64..300,
        warm in 1u64..10,
        burst in 1usize..500,
        cpu in 0u8..70,
        fleet in 1usize..=4,
        load_milli in proptest::option::of(0u32..4_000),
    ) {
        let node = load_milli.map(|milli| pool(f64::from(milli) / 1_000.0));
        // Each front end's clock is a day apart from the others', its polls at its own phase.
        let fronts: Vec<(LoadControl, ManualClock, u64)> = (0..fleet as u64)
            .map(|n| {
                let clock = ManualClock::new(Instant::from_secs(1_000 + 86_400 * n));
                (limit_mode(Duration::from_secs(1)), clock, 1_000_000 + 86_400_000 * n)
            })
            .collect();
        let poll = |control: &LoadControl, clock: &ManualClock| poll(control, clock, cpu, node);
        for (control, clock, _) in &fronts {
            poll(control, clock);
        }
        // Light traffic at every front end: `rate` a second each, answered after `latency`
        // ms, for `warm` s; each polls once a second at its own phase.
        let mut held: Vec<std::collections::VecDeque<(u64, Option<load_core::Permit<'_, ManualClock>>)>> =
            (0..fleet).map(|_| std::collections::VecDeque::new()).collect();
        let step = 1_000 / rate;
        for ms in (0..warm * 1_000).step_by(usize::try_from(step).expect("small")) {
            for (n, (control, clock, epoch)) in fronts.iter().enumerate() {
                clock.set(Instant::from_millis(epoch + ms));
                while held[n].front().is_some_and(|(end, _)| *end <= ms) {
                    held[n].pop_front();
                }
                if (ms + 250 * n as u64) % 1_000 < step {
                    poll(control, clock);
                }
                let permit = control.admit("/search?q=x", clock).permit();
                proptest::prop_assert!(permit.is_some(), "light traffic refused at front end {}: {:?}", n, control.admission());
                held[n].push_back((ms + latency, permit));
            }
        }
        let (control, clock, _) = &fronts[0];
        let answers: Vec<_> = (0..burst).map(|_| control.admit("/search?q=x", clock)).collect();
        let admitted = answers.iter().filter(|a| matches!(a, Admission::Admitted(_))).count();
        proptest::prop_assert_eq!(admitted, burst, "{:?}", control.admission());
        // The burst is answered within `latency` ms; ordinary traffic goes on for 3 s.
        clock.advance(Duration::from_millis(latency));
        drop(answers);
        for ms in (0..3_000).step_by(usize::try_from(step).expect("small")) {
            clock.advance(Duration::from_millis(step));
            while held[0].front().is_some_and(|(end, _)| *end <= warm * 1_000 + latency + ms) {
                held[0].pop_front();
            }
            if ms % 1_000 < step {
                poll(control, clock);
            }
            let permit = control.admit("/search?q=x", clock).permit();
            proptest::prop_assert!(permit.is_some(), "an ordinary request refused {} ms after the burst: {:?}", ms, control.admission());
            held[0].push_back((warm * 1_000 + latency + ms + latency, permit));
        }
        proptest::prop_assert!(
            !control.admission().flooding,
            "a burst engaged the flood bound: {:?}", control.admission()
        );
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

    /// The other half: a load that keeps growing below the threshold is bounded, with or
    /// without the pool, whatever the light traffic before it. Each 100 ms `growth` more
    /// searches stay in flight (a cluster that stopped answering them) while a tenth of the
    /// arrivals complete; within a second the flood bound holds, and the in-flight count
    /// stops growing.
    #[test]
    fn a_load_that_keeps_growing_below_the_threshold_is_bounded_with_any_source(
        rate in 1u64..100,
        latency in 1u64..300,
        warm in 1u64..10,
        growth in 20u32..200,
        cpu in 0u8..70,
        load_milli in proptest::option::of(0u32..4_000),
    ) {
        let control = limit_mode(Duration::from_secs(1));
        let clock = ManualClock::new(Instant::from_secs(1_000));
        let node = load_milli.map(|milli| pool(f64::from(milli) / 1_000.0));
        let poll = |control: &LoadControl, clock: &ManualClock| poll(control, clock, cpu, node);
        poll(&control, &clock);
        let mut held = std::collections::VecDeque::new();
        let step = 1_000 / rate;
        for ms in (0..warm * 1_000).step_by(usize::try_from(step).expect("small")) {
            clock.set(Instant::from_millis(1_000_000 + ms));
            while held.front().is_some_and(|(end, _)| *end <= ms) {
                held.pop_front();
            }
            if ms % 1_000 < step {
                poll(&control, &clock);
            }
            held.push_back((ms + latency, control.admit("/search?q=x", &clock).permit()));
        }
        drop(held);
        // The flood: `growth` arrivals each 100 ms, a tenth of what is in flight answered.
        let mut stuck = Vec::new();
        let mut peak_after = 0;
        for tick in 0..20 {
            clock.advance(Duration::from_millis(100));
            let answered = stuck.len() / 10;
            stuck.drain(..answered);
            for _ in 0..growth {
                if let Admission::Admitted(permit) = control.admit("/search?q=x", &clock) {
                    stuck.push(permit);
                }
            }
            if tick >= 10 {
                peak_after = peak_after.max(stuck.len());
            }
        }
        let stats = control.admission();
        proptest::prop_assert!(stats.flooding, "never bounded: {} in flight, {:?}", stuck.len(), stats);
        proptest::prop_assert!(
            peak_after < (20 * growth) as usize / 2,
            "still growing: {} in flight after 2 s of {} a tick, {:?}", peak_after, growth, stats
        );
    }
}

/// Where a burst's requests wait: answered one after another (a node's queue: the first
/// soon, the last at the end of the drain), or all at the end of the drain, with every
/// ordinary request that arrives during it (a service whose cores share themselves among
/// everything in flight: the local loop's service, 100 hashing requests on one core).
#[derive(Clone, Copy, Debug)]
enum Drain {
    Queue,
    Shared,
}

/// What ordinary traffic met through a burst: each refusal's time and kind, and when the
/// flood bound held.
struct Through {
    refused: Vec<(u64, &'static str)>,
    flooding: Vec<u64>,
    /// When the burst began and its drain ended, in ms from the start.
    begins: u64,
    ends: u64,
}

/// Light traffic at `rate` a second, each answered after `latency` ms, for `warm` s and
/// `offset` ms; a burst of `burst` requests spread evenly over `spread` ms, each taking
/// `per` ms of a core, drained as `drain` says; the light traffic goes on through it and
/// for 3 s after. Polls once a second at `cpu` %, with a node's `pool`, or a machine's
/// `own` cores, or neither.
fn through_a_burst(
    light: (u64, u64, u64, u64),
    burst: (u64, u64, u64, Drain),
    cpu: u8,
    pool: Option<SearchPool>,
    own: Option<u32>,
) -> Through {
    through_a_burst_after(light, 0, burst, cpu, pool, own)
}

/// [`through_a_burst`] with `quiet` ms without any request before the burst (the light
/// traffic's warm-up and offset in ms here, `warm` ms).
fn through_a_burst_after(
    (rate, latency, warm, offset): (u64, u64, u64, u64),
    quiet: u64,
    (burst, spread, per, drain): (u64, u64, u64, Drain),
    cpu: u8,
    pool: Option<SearchPool>,
    own: Option<u32>,
) -> Through {
    let control = limit_mode(Duration::from_secs(1));
    let start = 1_000_000;
    let clock = ManualClock::new(Instant::from_millis(start));
    let poll = |control: &LoadControl, clock: &ManualClock| {
        let _ = control.update(clock.now(), Outcome::Sample(CpuPercent::new(cpu)));
        control.observe_load(pool, own);
    };
    poll(&control, &clock);
    let step = 1_000 / rate;
    let begins = warm * 1_000 + offset + quiet;
    let ends = begins + spread + burst * per;
    let silent = (begins - quiet)..begins;
    let mut through = Through {
        refused: Vec::new(),
        flooding: Vec::new(),
        begins,
        ends,
    };
    let mut held: Vec<(u64, load_core::Permit<'_, ManualClock>)> = Vec::new();
    for ms in 0..ends + 3_000 {
        clock.set(Instant::from_millis(start + ms));
        held.retain(|(end, _)| *end > ms);
        if ms % 1_000 == 0 {
            poll(&control, &clock);
        }
        let mut arrivals = Vec::new();
        if ms % step == 0 && !silent.contains(&ms) {
            let answered = match drain {
                Drain::Shared if (begins..ends).contains(&ms) => ends.max(ms + latency),
                _ => ms + latency,
            };
            arrivals.push(("ordinary", answered));
        }
        for k in 0..burst {
            if begins + k * spread / burst == ms {
                let answered = match drain {
                    Drain::Queue => begins + spread + (k + 1) * per,
                    Drain::Shared => ends,
                };
                arrivals.push(("burst", answered.max(ms + 1)));
            }
        }
        for (what, answered) in arrivals {
            match control.admit("/search?q=x", &clock).permit() {
                Some(permit) => held.push((answered, permit)),
                None => through.refused.push((ms, what)),
            }
        }
        if control.admission().flooding {
            through.flooding.push(ms);
        }
    }
    through
}

fn drains() -> impl proptest::strategy::Strategy<Value = Drain> {
    proptest::prop_oneof![
        proptest::strategy::Just(Drain::Queue),
        proptest::strategy::Just(Drain::Shared)
    ]
}

/// No pool, a machine's own cores, or a node's pool below its operating point.
fn sources() -> impl proptest::strategy::Strategy<Value = (Option<SearchPool>, Option<u32>)> {
    proptest::prop_oneof![
        proptest::strategy::Just((None, None)),
        (1u32..=4).prop_map(|cores| (None, Some(cores))),
        (0u32..4_000).prop_map(|milli| (Some(pool(f64::from(milli) / 1_000.0)), None)),
    ]
}

use proptest::strategy::Strategy as _;

/// How a burst was sent, for what [`let_go`] allows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Burst {
    /// At once: none of it refused, and at most the light traffic of the span that tells.
    SentAtOnce,
    /// Spread over looks: it may be bounded as a flood.
    Spread,
}

/// What a burst may cost at `rate` a second of light traffic: nothing refused from the time
/// the flood bound takes to tell after the drain on ([`telling`]), the bound let go by
/// then, and, for a burst sent at once, none of it refused and at most that span's light
/// traffic.
fn let_go(
    through: &Through,
    rate: u64,
    burst: Burst,
) -> Result<(), proptest::test_runner::TestCaseError> {
    let late = through.ends + telling(rate);
    let at_once = burst == Burst::SentAtOnce;
    proptest::prop_assert!(
        !through
            .refused
            .iter()
            .any(|(ms, what)| (at_once && *what == "burst") || *ms >= late)
            && (!at_once || through.refused.len() as u64 <= rate * telling(rate) / 1_000 + 1),
        "refused {:?}, the flood bound from {:?} (burst {}..{} ms)",
        through.refused,
        through.flooding.first(),
        through.begins,
        through.ends
    );
    proptest::prop_assert!(
        !through.flooding.iter().any(|ms| *ms >= late),
        "the flood bound still held at {:?} (burst {}..{} ms)",
        through.flooding.last(),
        through.begins,
        through.ends
    );
    Ok(())
}

/// How long, in ms, the flood bound takes to tell that the demand is the light traffic's
/// again at `rate` a second: two buckets, or the time 8 of its requests take and a bucket,
/// and the time between two of its requests (a look comes at a bucket's first completion:
/// a span that ends just after one waits for the next bucket's); and, where 8 requests take
/// longer than a bucket, the look that starts that span, which comes at the first
/// completion after the drain, up to a bucket and a request's gap after it (a case of
/// `after_a_quiet_spell_a_burst_is_let_go_with_any_source` at 59 a second let go 273 ms
/// after the drain: the span began at the look 81 ms after it, and took its 136 ms and the
/// wait for the next bucket's look).
fn telling(rate: u64) -> u64 {
    let gap = 1_000 / rate;
    let span = 8_000 / rate;
    let start = if span > 100 { 100 + gap } else { 0 };
    200.max(span + 100) + gap + start
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Ordinary traffic goes on while a burst sent at once (within 5 ms) is answered (issue
    /// 45: on a service limited by its own CPU the flood bound engaged after a burst and
    /// refused 14 to 23 ordinary requests, the service's cores shared among the burst and
    /// the requests after it, so that the in-flight count grew while nothing completed).
    /// The demand after a burst is the light traffic's: the burst is admitted whole, and
    /// the ordinary requests through its drain and after it too, but where a look of the
    /// flood bound (a bucket's first completion) falls while the burst arrives: its two
    /// halves are then a flood's first two looks, and the bound holds until the next look,
    /// that can tell the arrivals are back to the light traffic's (a span long enough for
    /// 8 of its requests). Until then some of the light traffic may be refused, none from
    /// that long after the drain on.
    #[test]
    fn ordinary_traffic_through_a_burst_is_refused_at_most_for_a_look(
        rate in 20u64..150,
        latency in 1u64..20,
        warm in 2u64..6,
        offset in 0u64..1_000,
        burst in 10u64..200,
        spread in 0u64..5,
        per in 1u64..5,
        drain in drains(),
        cpu in 0u8..70,
        (pool, own) in sources(),
    ) {
        // A machine's own cores serve the light traffic: its latency is their work.
        proptest::prop_assume!(own.is_none_or(|cores| rate * latency <= 750 * u64::from(cores)));
        let through = through_a_burst((rate, latency, warm, offset), (burst, spread, per, drain), cpu, pool, own);
        let_go(&through, rate, Burst::SentAtOnce)?;
    }

    /// A burst spread over up to 100 ms (a generator's workers) may span two looks and be
    /// bounded as a flood; the bound lets go all the same when the arrivals fall back,
    /// nothing refused from the time that takes after the drain on.
    #[test]
    fn a_burst_spread_over_looks_is_let_go_when_the_demand_falls_back(
        rate in 20u64..150,
        latency in 1u64..20,
        warm in 2u64..6,
        offset in 0u64..1_000,
        burst in 10u64..200,
        spread in 0u64..100,
        per in 1u64..5,
        drain in drains(),
        cpu in 0u8..70,
        (pool, own) in sources(),
    ) {
        // A machine's own cores serve the light traffic: its latency is their work.
        proptest::prop_assume!(own.is_none_or(|cores| rate * latency <= 750 * u64::from(cores)));
        let through = through_a_burst((rate, latency, warm, offset), (burst, spread, per, drain), cpu, pool, own);
        let_go(&through, rate, Burst::Spread)?;
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// On a machine whose CPU is the front end's own, demand is measured against what its
    /// cores serve (its cores over the least latency): a burst sent at once is told from a
    /// flood even where no rate before is known, in a fresh front end's first second or
    /// after a quiet spell (the local loop's burst test: a fresh service's burst at 2 s, and
    /// one after 4 s of quiet). As long as the light traffic is within what the cores serve,
    /// nothing is refused but where a look splits the burst (then as in
    /// `ordinary_traffic_through_a_burst_is_refused_at_most_for_a_look`).
    #[test]
    fn on_its_own_cores_a_burst_after_quiet_or_on_a_fresh_front_end_is_told_from_a_flood(
        rate in 20u64..150,
        latency in 1u64..20,
        warm_ms in 200u64..3_000,
        quiet in proptest::prop_oneof![proptest::strategy::Just(0u64), 0u64..6_000],
        burst in 10u64..200,
        spread in 0u64..5,
        per in 1u64..5,
        drain in drains(),
        cpu in 0u8..70,
        cores in 1u32..=4,
    ) {
        proptest::prop_assume!(rate * latency <= 750 * u64::from(cores));
        let through = through_a_burst_after(
            (rate, latency, 0, warm_ms), quiet, (burst, spread, per, drain), cpu, None, Some(cores),
        );
        let_go(&through, rate, Burst::SentAtOnce)?;
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// After a quiet spell, a burst that reaches the front end over up to 100 ms as its
    /// light traffic resumes (the local loop's burst test, where the service accepts the
    /// burst's connections over 40 to 100 ms): a poll that falls in the burst's first
    /// milliseconds measures the quiet spell's rate, almost nothing, and the light traffic
    /// that follows is no surge for all that. Whatever the source, the bound lets go when
    /// the demand falls back, nothing refused from the time that takes after the drain on.
    #[test]
    fn after_a_quiet_spell_a_burst_is_let_go_with_any_source(
        rate in 20u64..150,
        latency in 1u64..20,
        warm in 2u64..6,
        offset in 0u64..1_000,
        quiet in 1_000u64..6_000,
        burst in 10u64..200,
        spread in 0u64..100,
        per in 1u64..5,
        drain in drains(),
        cpu in 0u8..70,
        (pool, own) in sources(),
    ) {
        proptest::prop_assume!(own.is_none_or(|cores| rate * latency <= 750 * u64::from(cores)));
        let through = through_a_burst_after(
            (rate, latency, warm, offset), quiet, (burst, spread, per, drain), cpu, pool, own,
        );
        let_go(&through, rate, Burst::Spread)?;
    }
}

/// A source that says its CPU is the service's own, over two cores.
struct OwnCpu;

impl load_core::CpuSource for OwnCpu {
    async fn sample(&mut self) -> Result<load_core::CpuSample, load_core::SourceError> {
        Ok(load_core::CpuSample::local(CpuPercent::new(20)).with_own_cores(2))
    }
}

/// The stats and the metrics say when the law reads the service's own load (issue 45: on a
/// service limited by its own CPU, `/admin/stats` showed no search pool and nothing else of
/// what the law acts on): the cores it reads its requests in flight over, and none where a
/// node's pool is the signal.
#[test]
fn the_stats_say_when_the_law_reads_the_services_own_load() {
    let control = limit_mode(Duration::from_secs(1));
    assert_eq!(control.admission().own_cores, None, "no poll yet");
    control.observe_load(None, Some(4));
    assert_eq!(control.admission().own_cores, Some(4));
    control.observe_load(Some(pool(1.0)), Some(4));
    assert_eq!(control.admission().own_cores, None, "a node's pool wins");

    let mut config = load_core::Config::new();
    config.control.web_threshold = Threshold::from_fess(70);
    config.control.admission = AdmissionMode::Limit;
    config.control.monitor_interval = Duration::from_millis(20);
    let guard = load_runtime::LoadGuard::<load_smol::Smol, _>::with_source(&config.control, OwnCpu);
    let _ = guard.check("/search");
    assert!(
        load_tests::wait_until(Duration::from_secs(5), || guard.stats().admission.own_cores
            == Some(2)),
        "{:?}",
        guard.stats().admission
    );
    let mut registry = prometheus_client::registry::Registry::default();
    load_runtime::prometheus::LoadCollector::new()
        .guard(&guard)
        .register(&mut registry);
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry).expect("encoded");
    assert!(
        text.lines().any(|l| l == "load_control_own_cores 2"),
        "{text}"
    );
    assert!(!text.contains("load_control_cluster_search_pool"), "{text}");
}
