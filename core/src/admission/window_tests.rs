//! Tests of [`super`]: the estimate, the slots' reuse and wrap, the least latency over
//! quiet spells.

use super::*;

fn ms(n: u64) -> Instant {
    Instant::from_millis(n)
}

#[test]
fn the_estimate_is_the_busiest_rate_and_the_least_mean_latency_of_complete_buckets() {
    let window = Window::new();
    assert_eq!(window.estimate(ms(0)), None);
    // Bucket 0: 3 completions of 20 ms; bucket 1: 5 of 40 ms; bucket 2 is current.
    for _ in 0..3 {
        window.record(ms(10), 20_000);
    }
    for _ in 0..5 {
        window.record(ms(150), 40_000);
    }
    window.record(ms(250), 1_000);
    let estimate = window.estimate(ms(250)).unwrap();
    assert_eq!(estimate.rate_per_s, 50, "5 in 100 ms");
    assert_eq!(estimate.latency_us, 20_000, "the least mean");
    assert_eq!(estimate.in_flight(), 1);
    // A second later the first two buckets are out of the window, then the third.
    assert_eq!(window.estimate(ms(1_200)).unwrap().rate_per_s, 10);
    assert_eq!(window.estimate(ms(1_300)), None);
}

#[test]
fn a_reused_slot_starts_over_and_says_so() {
    let window = Window::new();
    assert!(window.record(ms(0), 1_000));
    assert!(!window.record(ms(50), 1_000));
    // The same slot, one window later.
    assert!(window.record(ms(1_000), 9_000));
    assert_eq!(window.buckets[1].mean_us(), Some(9_000));
    let estimate = window.estimate(ms(1_100)).unwrap();
    // One completion in 100 ms; the least mean is still the first second's, which the
    // slot held before it was reused.
    assert_eq!((estimate.rate_per_s, estimate.latency_us), (10, 1_000));
}

#[test]
fn any_epoch_works_even_where_bucket_numbers_wrap() {
    // A clock may count from any epoch (the Unix epoch, say): bucket numbers are 32
    // bits and wrap every 13.6 years of its instants; around the wrap, the window
    // neither panics nor stops learning.
    let wrap = u64::from(u32::MAX) * BUCKET_MS;
    for start in [wrap - 2_000, wrap - 100, wrap - 1, wrap, 1_764_547_200_000] {
        let window = Window::new();
        let mut learned = 0;
        for step in 0..40 {
            let now = ms(start + step * 50);
            window.record(now, 2_000);
            if window.estimate(now).is_some() {
                learned += 1;
            }
        }
        assert!(
            learned > 30,
            "from {start}: an estimate in {learned} of 40 steps"
        );
    }
}

#[test]
fn huge_latencies_saturate_instead_of_wrapping() {
    let window = Window::new();
    for _ in 0..1000 {
        window.record(ms(0), u64::MAX);
    }
    let estimate = window.estimate(ms(100)).unwrap();
    assert_eq!(estimate.latency_us, 10_000_000, "clamped to 10 s");
    assert_eq!(estimate.in_flight(), 100_000);
    // Beyond what 32 bits hold (42,949 of 10 s), the sum saturates instead of wrapping
    // to a small mean.
    for _ in 0..49_000 {
        window.record(ms(150), 60_000_000);
    }
    let mean = window.buckets[2].mean_us().unwrap();
    assert!(mean > 8_000_000, "{mean} µs");
}

#[test]
fn the_first_bucket_of_a_second_counts_in_its_least_mean() {
    let window = Window::new();
    // Second 1: its first bucket 1 ms, the others 100 ms; then seconds 2 and 3.
    for _ in 0..10 {
        window.record(ms(1_000), 1_000);
    }
    for at in (1_100..4_000).step_by(100) {
        window.record(ms(at), 100_000);
    }
    let estimate = window.estimate(ms(4_000)).unwrap();
    assert_eq!(estimate.latency_us, 1_000, "second 1's least bucket mean");
}

#[test]
fn a_quiet_spell_forgets_the_rate_but_not_the_least_latency() {
    let window = Window::new();
    for at in (0..3_000).step_by(10) {
        window.record(ms(at), 3_000);
    }
    assert_eq!(window.least_latency_us(ms(3_000)), Some(3_000));
    // Five seconds without a completion: no rate, the latency of the seconds before.
    assert_eq!(window.estimate(ms(8_000)), None);
    assert_eq!(window.least_latency_us(ms(8_000)), Some(3_000));
    // Past ten seconds, nothing.
    assert_eq!(window.least_latency_us(ms(14_000)), None);
    assert_eq!(Window::new().least_latency_us(ms(0)), None);
}

/// A second that no completion closed keeps its latency all the same: on a machine
/// whose CPU is the front end's own, a burst sent after a quiet spell completes nothing
/// until it has drained, and the flood bound measures the arrivals against what the
/// cores serve, its cores over this latency, at every look until then.
#[test]
fn a_second_no_completion_closed_keeps_its_least_latency() {
    let window = Window::new();
    for at in (0..580).step_by(17) {
        window.record(ms(at), 5_000);
    }
    for now in [700, 1_615, 2_500, 9_900] {
        assert_eq!(window.least_latency_us(ms(now)), Some(5_000), "at {now} ms");
    }
    assert_eq!(
        window.least_latency_us(ms(11_000)),
        None,
        "past ten seconds"
    );
}

/// Completions after a quiet spell reuse the buckets of the seconds before it: their
/// latencies are kept as their seconds' before the buckets are reset.
#[test]
fn completions_after_a_quiet_spell_keep_the_latency_before_it() {
    let window = Window::new();
    for at in (0..580).step_by(17) {
        window.record(ms(at), 5_000);
    }
    for at in (4_000..4_600).step_by(10) {
        window.record(ms(at), 370_000);
    }
    assert_eq!(window.least_latency_us(ms(4_700)), Some(5_000));
    assert_eq!(
        window.least_latency_us(ms(11_500)),
        Some(370_000),
        "second 0 forgotten"
    );
}
