//! Where the cap starts and what a poll hands it: the bound on every transition, what the
//! front end held at quiet, its share of the node, and the flood bound alone.

use super::*;

/// What any poll of the default law may hand the cap, in 256ths: a start (the first
/// bounded poll, or a flood bound's release) at most the largest of the mean in flight
/// scaled to the point, what the front end holds now (the larger of the mean and the
/// in-flight count) scaled to the point by the node's load now or on average, whichever is
/// more, and the ceiling of the mean, never from a peak; any other poll at
/// most a poll's growth ([`Law::most_growth`]) from the cap in force. The docs state this
/// bound (`docs/admission.md`, "Transitions").
fn most_handed(before: &PollState, poll: &Poll, step: &Step) -> f64 {
    let pool = poll.pool.expect("a poll that moves the cap has the pool");
    let load = load_per_core(&pool);
    let demand = poll.completed.wrapping_sub(before.completed_seen)
        + poll.refused.wrapping_sub(before.refused_seen);
    let refused = if demand == 0 {
        0.0
    } else {
        f64::from(poll.refused.wrapping_sub(before.refused_seen)) / f64::from(demand)
    };
    let law = Law::DEFAULT;
    let start = !before.bounded || step.release;
    let most = if start {
        let point = f64::from(law.on(pool.cores(), refused).target);
        let scaled = f64::from(poll.mean_fine) * point / load.max(1e-3);
        let load_now = f64::from(pool.active + pool.queue) / f64::from(pool.cores());
        let holds = poll.mean_fine.max(poll.in_flight.saturating_mul(256));
        let scaled_now = f64::from(holds) * point / load.max(load_now).max(1e-3);
        let held = f64::from(ceiling(poll.mean_fine.div_ceil(256).max(1))) * 256.0;
        scaled.max(scaled_now).max(held)
    } else {
        f64::from(poll.fine) * law.on_cores(pool.cores()).most_growth(load)
    };
    most.max(f64::from(MIN_FINE)) + 1.0
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]

    /// Every transition — arming (while a flood bound holds too), a flood bound engaging or
    /// released, armed or not, a poll after a missing pool, a fresh state — hands the cap at most
    /// [`most_handed`], whatever the surge's peak and in-flight count.
    #[test]
    fn no_poll_hands_the_cap_more_than_the_stated_bound(
        bounded in proptest::bool::ANY,
        fleet in proptest::bool::ANY,
        missed in 0u32..6,
        seen in (0u32..1_000, 0u32..1_000),
        armed in proptest::bool::ANY,
        armed_before in proptest::bool::ANY,
        flooding in proptest::bool::ANY,
        cpu in 0u8..=100,
        threads in 1u32..64,
        pool in (0u32..200, 0u32..2_000, 0u32..200_000, 0u32..2_000_000),
        counts in (0u32..2_000, 0u32..2_000),
        in_flight in 0u32..500,
        peak in 0u32..500,
        mean_fine in 0u32..200 * 256,
        fine in 32u32..100 * 256,
        held in 0u32..100 * 256,
        share in proptest::option::of(0.0f32..=1.0),
        sent in proptest::option::of((0u32..200 * 256, 0u32..200 * 256)),
        smoothed in proptest::option::of(0u32..100_000),
        spans in (
            proptest::option::of(proptest::prelude::any::<(u32, u32, u32)>()),
            proptest::option::of(proptest::prelude::any::<(u32, u32, u32)>()),
        ),
    ) {
        let before = PollState {
            cpu_milli: smoothed,
            saturated: smoothed.is_some_and(|cpu| cpu >= 93_000),
            bounded,
            armed: armed_before,
            fleet,
            missed,
            pool: None,
            own_cores: None,
            completed_seen: seen.0,
            refused_seen: seen.1,
            in_flight_seen: 0,
            demand: None,
            refused_percent: 0,
            span: None,
            share,
            sent: sent.map(|(holds, mean_fine)| Sent { holds, mean_fine }),
        };
        let (active, queue, active_milli, queue_milli) = pool;
        let pool = SearchPool::new(threads, active.min(threads), queue)
            .with_means(active_milli, queue_milli);
        let poll = Poll {
            armed,
            cpu,
            pool: Some(pool),
            own_cores: None,
            completed: seen.0 + counts.0,
            refused: seen.1 + counts.1,
            in_flight,
            peak,
            mean_fine,
            fine,
            flooding,
            span: spans.1.map(|(ms, arrived, quiet_ms)| Span { ms, arrived, quiet_ms }),
            held,
        };
        let before = PollState {
            span: spans.0.map(|(ms, arrived, quiet_ms)| Span { ms, arrived, quiet_ms }),
            ..before
        };
        for law in [Law::DEFAULT, Law::ARRIVALS, HELD] {
            let step = law.step(&before, &poll);
            if let Some(next) = step.fine {
                let most = most_handed(&before, &poll, &step);
                if law.start == Start::Share && poll.flooding && (!before.bounded || step.release) {
                    // A start in a flood: at most what the front end held at quiet.
                    let most = f64::from(held).max(f64::from(MIN_FINE)) + 1.0;
                    proptest::prop_assert!(
                        f64::from(next) <= most,
                        "a start of {} > {most}: {before:?} {poll:?}",
                        next
                    );
                }
                proptest::prop_assert!(
                    f64::from(next) <= most,
                    "{} > {most}: {law:?} {before:?} {poll:?}",
                    next
                );
            }
        }
    }
}

/// With [`FloodBase::Below`] (the law of 92f34e1), a poll that leaves the class unbounded
/// keeps what the front end holds as what a flood is measured against, unless it finds
/// the busiest node over the operating point: a surge the CPU has not armed yet is not what
/// the front end held at quiet. The default takes it at any unbounded poll.
#[test]
fn a_poll_that_finds_the_node_queueing_keeps_the_quiet_base() {
    let unbounded = |pool| Poll {
        peak: 40,
        in_flight: 40,
        ..poll(false, 40, pool, 8 * 256)
    };
    let below = Law::ARRIVALS;
    let (_, steps) = run_with(&below, &[unbounded(node(1_000))]);
    assert_eq!(steps[0].quiet, Some(40 * 256));
    let (_, steps) = run_with(&below, &[unbounded(node(30_000))]);
    assert_eq!(steps[0].quiet, None, "the node queues 30 tasks: a surge's");
    let (_, steps) = run_with(&Law::DEFAULT, &[unbounded(node(30_000))]);
    assert_eq!(steps[0].quiet, None, "the default keeps it too");
    let (_, steps) = run_with(&HELD, &[unbounded(node(30_000))]);
    assert_eq!(steps[0].quiet, Some(40 * 256), "the law of 16f2a35 took it");
}

/// The default's start ([`Start::Share`]): a front end's share of the node at its last
/// quiet poll times the operating point, within what it held then; without a share (a
/// fresh front end), the scaled start within what it held (the initial cap).
#[test]
fn the_cap_starts_at_the_share_of_the_point_the_front_end_held_at_quiet() {
    // At quiet: half a request in flight on average, the node one task on average.
    let quiet = Poll {
        mean_fine: 128,
        ..poll(false, 40, node(1_000), 8 * 256)
    };
    // The surge, armed and saturated: 50 in flight, the node's pool 16 (its connections).
    let surge = Poll {
        in_flight: 50,
        peak: 50,
        mean_fine: 20 * 256,
        ..refusing(poll(true, 99, node(16_000), 8 * 256))
    };
    let (state, steps) = run_with(&Law::DEFAULT, &[quiet]);
    assert_eq!(state.share, Some(0.5));
    assert_eq!(steps[0].fine, None);
    // 0.5 x 4 tasks (no relief: it refused 30 %) = 2, below 50 x 4 / 16 and 8.
    let (_, steps) = run_with(&Law::DEFAULT, &[quiet, surge]);
    assert_eq!(steps[1].fine, Some(2 * 256));
    // One that refused nothing yet: 0.5 x 10 tasks = 5.
    let unrefused = Poll {
        completed: 10,
        refused: 0,
        ..surge
    };
    let (_, steps) = run_with(&Law::DEFAULT, &[quiet, unrefused]);
    assert_eq!(steps[1].fine, Some(5 * 256));
    // Fresh: min(max(20, 50) x 4 / 16, 8) = 8, what it held (the initial cap); the law of
    // 16f2a35 started at 20 x 4 / 16 = 5 from the mean, and from the surge's 50 in flight
    // (the law of 92f34e1) at 12.5.
    let (_, steps) = run_with(&Law::DEFAULT, &[surge]);
    assert_eq!(steps[0].fine, Some(8 * 256));
    let (_, steps) = run_with(&Law::ARRIVALS, &[surge]);
    assert_eq!(steps[0].fine, Some(12 * 256 + 128));
    // A poll that finds the node over the point takes no share: the surge's is not quiet.
    let (state, _) = run_with(
        &Law::DEFAULT,
        &[Poll {
            mean_fine: 40 * 256,
            ..poll(false, 40, node(30_000), 8 * 256)
        }],
    );
    assert_eq!(state.share, None);
}

/// A poll answered late (a fresh front end's first, behind a surge's connections) brings a
/// pool the node read about when it was sent: what the front end held and its share are
/// taken from then, not from the surge its answer found. Without a node's pool (a
/// machine's own load, read at the answer) they are what it holds at the answer.
#[test]
fn what_was_held_is_taken_when_the_poll_was_sent() {
    let before = PollState {
        sent: Some(Sent {
            holds: 8 * 256,
            mean_fine: 128,
        }),
        ..PollState::NEW
    };
    let answered = Poll {
        in_flight: 40,
        peak: 40,
        mean_fine: 20 * 256,
        ..poll(false, 6, node(1_000), 8 * 256)
    };
    let step = Law::DEFAULT.step(&before, &answered);
    assert_eq!(step.quiet, Some(8 * 256));
    assert_eq!(step.state.share, Some(0.5), "0.5 in flight over one task");
    assert_eq!(step.state.sent, None, "the answer takes it");
    // Unmarked: the surge's.
    let step = Law::DEFAULT.step(&PollState::NEW, &answered);
    assert_eq!(step.quiet, Some(40 * 256));
    assert_eq!(step.state.share, Some(1.0));
    // On a machine's own load (four cores, one request in flight, a recent peak of 2):
    // what it holds at the answer.
    let own = Poll {
        pool: None,
        own_cores: Some(4),
        in_flight: 1,
        peak: 2,
        mean_fine: 256,
        ..poll(false, 6, None, 256)
    };
    let step = Law::DEFAULT.step(&before, &own);
    assert_eq!(step.quiet, Some(2 * 256));
}

/// On the node, two warm front ends armed 2.2 s into a surge with 31 tasks queued on one
/// core but 8 on average since the poll before (below the point with the relief, 10): the
/// start took the room of their peaks, 23, where the share start gives what they held at
/// quiet. Over the point now is over it, under the CPU gate too (88 %: the node's CPU is a
/// second late): in the model a class armed so at 88 % CPU with 16 tasks on one core
/// started from the room of a surge's mean in flight, tens of times the cap in force, and
/// the rule before gave that room here (34).
#[test]
fn a_node_queueing_now_over_the_point_starts_the_cap_at_the_share() {
    for cpu in [97, 88] {
        queueing_now_at(cpu);
    }
}

fn queueing_now_at(cpu: u8) {
    let quiet = Poll {
        mean_fine: 128,
        ..poll(false, 40, node(1_000), 8 * 256)
    };
    let arming = Poll {
        pool: Some(SearchPool::new(2, 2, 29).with_means(1_000, 7_000)),
        in_flight: 19,
        peak: 23,
        mean_fine: 10 * 256,
        completed: 10,
        ..poll(true, cpu, None, 8 * 256)
    };
    // 0.5 of the point with the relief (10 tasks): 5, within what it held (8).
    let (_, steps) = run_with(&Law::DEFAULT, &[quiet, arming]);
    assert_eq!(steps[1].fine, Some(5 * 256), "cpu {cpu}");
    // Below the point on average and now, the start has room: the ceiling of its mean,
    // 2 x 10 + ceil(3 sqrt 20) = 34.
    let calm = Poll {
        pool: Some(SearchPool::new(2, 2, 5).with_means(1_000, 7_000)),
        ..arming
    };
    let (_, steps) = run_with(&Law::DEFAULT, &[quiet, calm]);
    assert_eq!(steps[1].fine, Some(34 * 256), "cpu {cpu}");
}

/// While only a flood bound holds (the class not armed), the cap does not grow: the bound
/// refuses, not the cap, and the CPU, a second late, has not seen the surge.
#[test]
fn a_flood_bound_alone_does_not_grow_the_cap() {
    // The k-th poll, 30 % of the demand refused since the last.
    let flood = |k: u32| Poll {
        flooding: true,
        in_flight: 30,
        peak: 40,
        mean_fine: 6 * 256,
        completed: 7 * k,
        refused: 3 * k,
        ..poll(false, 20, node(16_000), 8 * 256)
    };
    let (_, steps) = run_with(&Law::DEFAULT, &[flood(1), flood(2)]);
    let start = steps[0].fine.expect("a start");
    assert_eq!(steps[1].fine, Some(start), "held where it started");
    let (_, steps) = run_with(&HELD, &[flood(1), flood(2)]);
    assert!(steps[1].fine > steps[0].fine, "the law of 16f2a35 grew it");
}
