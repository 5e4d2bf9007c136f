//! The request hot path: `LoadControl::check` against the physical floor of a decision and
//! against a hand-written port of Fess's filter, in one group so results read as ratios;
//! then `admit` with its permit, in Fess's mode and in `load.control.admission=limit`, as
//! ratios to the default mode's `check` in the same run.

use std::hint::black_box;
use std::sync::Barrier;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use load_bench::{API_THRESHOLD, PATHS, WEB_THRESHOLD, naive_check};
use load_core::{
    Admission, AdmissionMode, ControlConfig, CpuPercent, LoadControl, Outcome, time::StdClock,
};

/// Cluster CPU for a case: 95 % makes the API path rejected, 50 % admits everything else.
fn cpu_for(name: &str) -> u8 {
    if name.starts_with("rejected") { 95 } else { 50 }
}

fn check(c: &mut Criterion) {
    let mut group = c.benchmark_group("check");
    group.throughput(Throughput::Elements(1));

    let floor = AtomicU32::new(50);
    group.bench_function("floor", |b| {
        b.iter(|| black_box(&floor).load(Ordering::Relaxed) >= black_box(80))
    });

    for (name, path) in PATHS {
        let cpu = cpu_for(name);
        let control = LoadControl::new(WEB_THRESHOLD, API_THRESHOLD);
        control.update(
            load_core::Instant::ZERO,
            load_core::Outcome::Sample(CpuPercent::new(cpu)),
        );
        let _ = control.take_start();
        let naive_cpu = AtomicU32::new(u32::from(cpu));
        group.bench_with_input(BenchmarkId::new("check", name), path, |b, path| {
            b.iter(|| control.check(black_box(path)))
        });
        group.bench_with_input(BenchmarkId::new("naive", name), path, |b, path| {
            b.iter(|| naive_check(black_box(path), &naive_cpu))
        });
    }

    // Scaling: the admitted check on 1 thread, then on 2 threads at once. One iteration of
    // the 2-thread bench is one check on each thread: throughput scaling = 2 * t1 / t2.
    let control = LoadControl::new(WEB_THRESHOLD, API_THRESHOLD);
    control.update(
        load_core::Instant::ZERO,
        load_core::Outcome::Sample(CpuPercent::new(50)),
    );
    let _ = control.take_start();
    let path = PATHS[0].1;
    let checked = || {
        let _ = black_box(control.check(black_box(path)));
    };
    group.bench_function("admitted_web_1_thread", |b| {
        b.iter_custom(|iters| run_on_threads(&checked, iters, 1))
    });
    group.throughput(Throughput::Elements(2));
    group.bench_function("admitted_web_2_threads", |b| {
        b.iter_custom(|iters| run_on_threads(&checked, iters, 2))
    });
    group.finish();
}

/// A control at `cpu` in `admission` mode, with one poll behind it (armed at 95 %).
fn control_in(admission: AdmissionMode, cpu: u8) -> LoadControl {
    let mut config = ControlConfig::default();
    config.web_threshold = WEB_THRESHOLD.into();
    config.api_threshold = API_THRESHOLD.into();
    config.admission = admission;
    let control = LoadControl::from_config(&config);
    control.update(
        load_core::Instant::ZERO,
        Outcome::Sample(CpuPercent::new(cpu)),
    );
    let _ = control.take_start();
    control
}

/// `admit` and the permit's drop, for an admitted web request: in Fess's mode (the default:
/// the permit holds nothing, no clock is read), and in the limit mode disarmed (50 %) and
/// armed (95 %, under the cap), where the request is counted in and out; then the limit
/// mode's rejection at the cap, and its `check` (armed: rejected outright, as Fess's rule
/// does, since `check` cannot count). The
/// baseline is the default mode's `check` of the same path, in this group.
fn admit(c: &mut Criterion) {
    let mut group = c.benchmark_group("admit");
    group.throughput(Throughput::Elements(1));
    let path = PATHS[0].1;
    let clock = StdClock::new();

    // What the limit mode's admitted request is made of: two clock reads (the admission's
    // and the drop's) and five atomic read-modify-writes (the count in and out, the
    // completions, the bucket's count and latency sum).
    group.bench_function("clock_read", |b| {
        b.iter(|| load_core::Clock::now(black_box(&clock)))
    });
    let counter = AtomicU32::new(0);
    group.bench_function("atomic_add", |b| {
        b.iter(|| black_box(&counter).fetch_add(1, Ordering::Relaxed))
    });

    let fess = control_in(AdmissionMode::Threshold, 50);
    group.bench_function("check_default", |b| b.iter(|| fess.check(black_box(path))));
    group.bench_function("admit_default", |b| {
        b.iter(|| fess.admit(black_box(path), &clock))
    });
    // The decision alone: the permit dropped at once, never written out (the difference
    // from `admit_default` is moving the 24-byte permit through memory).
    group.bench_function("admit_default_decision", |b| {
        b.iter(|| fess.admit(black_box(path), &clock).is_admitted())
    });
    for (name, cpu) in [("admit_limit_disarmed", 50), ("admit_limit_armed", 95)] {
        let limit = control_in(AdmissionMode::Limit, cpu);
        group.bench_function(name, |b| b.iter(|| limit.admit(black_box(path), &clock)));
    }
    // On a machine whose CPU is the front end's own (no search pool, one core): the flood
    // bound also looks at requests as they come, so a request reads whether this bucket
    // was looked at (an atomic load, and once a bucket a look).
    for (name, cpu) in [
        ("admit_limit_disarmed_own_cores", 50),
        ("admit_limit_armed_own_cores", 95),
    ] {
        let limit = control_in(AdmissionMode::Limit, cpu);
        limit.observe_load(None, Some(1));
        group.bench_function(name, |b| b.iter(|| limit.admit(black_box(path), &clock)));
    }

    // Armed, with the initial cap (8) held: every further request is rejected.
    let full = control_in(AdmissionMode::Limit, 95);
    let held: Vec<_> = (0..8)
        .filter_map(|_| full.admit(path, &clock).permit())
        .collect();
    assert!(
        matches!(full.admit(path, &clock), Admission::Rejected(_)),
        "the cap is reached"
    );
    group.bench_function("admit_limit_rejected", |b| {
        b.iter(|| full.admit(black_box(path), &clock))
    });
    group.bench_function("check_limit_armed", |b| {
        b.iter(|| full.check(black_box(path)))
    });
    drop(held);

    // Scaling of the limit mode's admitted request (its count is shared memory) against
    // the default mode's admit, both on 2 threads at once.
    let limit = control_in(AdmissionMode::Limit, 95);
    let counted = || drop(black_box(limit.admit(black_box(path), &clock)));
    let uncounted = || drop(black_box(fess.admit(black_box(path), &clock)));
    group.throughput(Throughput::Elements(2));
    group.bench_function("admit_default_2_threads", |b| {
        b.iter_custom(|iters| run_on_threads(&uncounted, iters, 2))
    });
    group.bench_function("admit_limit_armed_2_threads", |b| {
        b.iter_custom(|iters| run_on_threads(&counted, iters, 2))
    });
    // Overload: the cap (8) all but full, two threads contending for the last slot, so
    // that refusals (the refusal counter) and admissions (the in-flight count) interleave:
    // what sharing a cache line between the two would cost.
    let contended = control_in(AdmissionMode::Limit, 95);
    let seven: Vec<_> = (0..7)
        .filter_map(|_| contended.admit(path, &clock).permit())
        .collect();
    let at_cap = || drop(black_box(contended.admit(black_box(path), &clock)));
    group.bench_function("admit_limit_at_cap_2_threads", |b| {
        b.iter_custom(|iters| run_on_threads(&at_cap, iters, 2))
    });
    drop(seven);
    group.finish();
}

/// `iters` calls of `work` on each of `threads` threads started together; the wall time.
fn run_on_threads(work: &(dyn Fn() + Sync), iters: u64, threads: usize) -> Duration {
    let barrier = Barrier::new(threads + 1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let barrier = &barrier;
                scope.spawn(move || {
                    barrier.wait();
                    let started = Instant::now();
                    for _ in 0..iters {
                        work();
                    }
                    started.elapsed()
                })
            })
            .collect();
        barrier.wait();
        workers
            .into_iter()
            .map(|w| w.join().expect("bench thread"))
            .max()
            .unwrap_or_default()
    })
}

criterion_group!(benches, check, admit);
criterion_main!(benches);
