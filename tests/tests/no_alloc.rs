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
