//! The request hot path: `LoadControl::check` against the physical floor of a decision and
//! against a hand-written port of Fess's filter, in one group so results read as ratios.

use std::hint::black_box;
use std::sync::Barrier;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use load_bench::{API_THRESHOLD, PATHS, WEB_THRESHOLD, naive_check};
use load_core::{CpuPercent, LoadControl};

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
    group.bench_function("admitted_web_1_thread", |b| {
        b.iter_custom(|iters| run_on_threads(&control, path, iters, 1))
    });
    group.throughput(Throughput::Elements(2));
    group.bench_function("admitted_web_2_threads", |b| {
        b.iter_custom(|iters| run_on_threads(&control, path, iters, 2))
    });
    group.finish();
}

/// `iters` checks on each of `threads` threads started together; the wall time.
fn run_on_threads(control: &LoadControl, path: &str, iters: u64, threads: usize) -> Duration {
    let barrier = Barrier::new(threads + 1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let barrier = &barrier;
                scope.spawn(move || {
                    barrier.wait();
                    let started = Instant::now();
                    for _ in 0..iters {
                        let _ = black_box(control.check(black_box(path)));
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

criterion_group!(benches, check);
criterion_main!(benches);
