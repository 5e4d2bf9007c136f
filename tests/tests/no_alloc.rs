//! The hot path and the parser never allocate: proven with a counting global allocator.
//!
//! The one place in the project with `unsafe`: a global allocator cannot be written without.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use load_core::node_stats::parse_node_stats;
use load_core::{CpuPercent, LoadControl};
use load_tests::fixture;

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards to `System` unchanged; only counts calls on the current thread.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
        // SAFETY: the caller's contract is passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations_during(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

/// The paths of the `check` benchmark.
fn bench_paths() -> Vec<String> {
    let mut long = String::from("/search/");
    while long.len() < 256 {
        long.push_str("segment/");
    }
    long.truncate(256);
    vec![
        "/search?q=rust".into(),
        "/api/v1/documents?q=x".into(),
        "/css/style.css".into(),
        "/admin/dashboard/".into(),
        long,
        "/admin/../api/v1/./x;jsessionid=1".into(),
    ]
}

#[test]
fn the_allocator_counts() {
    // Through black_box: optimised, an allocation nobody reads may be left out.
    assert_eq!(
        allocations_during(|| drop(std::hint::black_box(Box::new(1u64)))),
        1
    );
}

#[test]
fn check_never_allocates() {
    let paths = bench_paths();
    for cpu in [0, 85, 100] {
        let control = LoadControl::new(80, 90);
        control.update(
            load_core::Instant::ZERO,
            load_core::Outcome::Sample(CpuPercent::new(cpu)),
        );
        for path in &paths {
            let n = allocations_during(|| {
                for _ in 0..100 {
                    let _ = std::hint::black_box(control.check(std::hint::black_box(path)));
                }
            });
            assert_eq!(n, 0, "check({path}) at {cpu}% allocated");
        }
        let _ = control.take_start();
    }
}

/// The limit mode's request path (README, *Admission under overload*: "no lock, no
/// allocation"): `admit` and the permit's drop, admitted and refused, armed and not, with and
/// without a poll's search pool.
#[test]
fn the_limit_modes_admit_and_drop_never_allocate() {
    use load_core::node_stats::SearchPool;
    use load_core::time::ManualClock;
    use load_core::{AdmissionMode, Clock, ControlConfig, Instant, Outcome, Threshold};
    let paths = bench_paths();
    for (cpu, pool) in [
        (10, None),
        (99, None),
        (10, Some(SearchPool::new(2, 1, 0))),
        (99, Some(SearchPool::new(2, 2, 30))),
    ] {
        let mut config = ControlConfig::new();
        config.web_threshold = Threshold::from_fess(70);
        config.api_threshold = Threshold::from_fess(70);
        config.admission = AdmissionMode::Limit;
        let control = LoadControl::from_config(&config);
        let clock = ManualClock::new(Instant::from_secs(1_000));
        // The permits held across each round: the in-flight cap refuses some.
        let mut held = Vec::with_capacity(1_000);
        for second in 0..3 {
            control.poll_sent();
            let _ = control.update(clock.now(), Outcome::Sample(CpuPercent::new(cpu)));
            control.observe_pool(pool);
            for path in &paths {
                let n = allocations_during(|| {
                    for _ in 0..100 {
                        let admission = control.admit(std::hint::black_box(path), &clock);
                        if let load_core::Admission::Admitted(permit) = admission {
                            held.push(permit);
                        }
                        clock.advance(std::time::Duration::from_millis(1));
                    }
                    held.clear();
                });
                assert_eq!(
                    n, 0,
                    "admit({path}) at {cpu}% ({pool:?}), second {second}, allocated"
                );
            }
        }
    }
}

#[test]
fn parsing_success_fixtures_never_allocates() {
    for name in [
        "os-2x-3nodes",
        "os-edge-cases",
        "os-partial-failure",
        "os-all-failed",
        "os-filter-path",
        "os-filter-path-partial-failure",
        "os-filter-path-empty",
    ] {
        let body = fixture(name).body;
        let mut result = None;
        let n = allocations_during(|| result = Some(parse_node_stats(&body)));
        assert_eq!(n, 0, "{name} allocated");
        assert!(result.is_some_and(|r| r.is_ok()), "{name}");
    }
    for (name, body) in load_tests::captured_fixtures() {
        let mut result = None;
        let n = allocations_during(|| result = Some(parse_node_stats(&body)));
        assert_eq!(n, 0, "{name} allocated");
        assert!(result.is_some_and(|r| r.is_ok()), "{name}");
    }
}
