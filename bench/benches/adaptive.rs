//! Waking background work: from storing a below-threshold sample to every waiter having
//! run, for the core's `AdaptiveGate` and for `event-listener` (the wake-all primitive smol
//! and async-std are built on), on the same single-threaded executor.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use event_listener::Event;
use futures::executor::LocalPool;
use futures::task::LocalSpawnExt;
use load_core::{AdaptiveGate, CpuPercent};

/// One measurement: `waiters` tasks asleep, then the time to wake them all and run them.
fn gate_wake(waiters: usize) -> Duration {
    let gate: Rc<AdaptiveGate> =
        Rc::new(AdaptiveGate::new(load_core::GateThreshold::from_fess(50)));
    gate.store(CpuPercent::new(90));
    let done = Rc::new(Cell::new(0usize));
    let mut pool = LocalPool::new();
    for _ in 0..waiters {
        let (gate, done) = (Rc::clone(&gate), Rc::clone(&done));
        pool.spawner()
            .spawn_local(async move {
                let _ = gate.wait().await;
                done.set(done.get() + 1);
            })
            .expect("spawn");
    }
    pool.run_until_stalled();
    assert_eq!(gate.waiting() as usize, waiters);
    let started = Instant::now();
    gate.store(CpuPercent::new(10));
    pool.run_until_stalled();
    let took = started.elapsed();
    assert_eq!(done.get(), waiters);
    took
}

fn event_listener_wake(waiters: usize) -> Duration {
    let event = Arc::new(Event::new());
    let open = Arc::new(AtomicBool::new(false));
    let done = Rc::new(Cell::new(0usize));
    let mut pool = LocalPool::new();
    for _ in 0..waiters {
        let (event, open, done) = (Arc::clone(&event), Arc::clone(&open), Rc::clone(&done));
        pool.spawner()
            .spawn_local(async move {
                while !open.load(Ordering::Acquire) {
                    let listener = event.listen();
                    if open.load(Ordering::Acquire) {
                        break;
                    }
                    listener.await;
                }
                done.set(done.get() + 1);
            })
            .expect("spawn");
    }
    pool.run_until_stalled();
    let started = Instant::now();
    open.store(true, Ordering::Release);
    event.notify(usize::MAX);
    pool.run_until_stalled();
    let took = started.elapsed();
    assert_eq!(done.get(), waiters);
    took
}

fn adaptive(c: &mut Criterion) {
    let mut group = c.benchmark_group("adaptive");
    group.sample_size(20);
    for waiters in [1, 100, 10_000] {
        group.throughput(Throughput::Elements(waiters as u64));
        group.bench_with_input(BenchmarkId::new("gate", waiters), &waiters, |b, &n| {
            b.iter_custom(|iters| (0..iters).map(|_| gate_wake(n)).sum())
        });
        group.bench_with_input(
            BenchmarkId::new("event_listener", waiters),
            &waiters,
            |b, &n| b.iter_custom(|iters| (0..iters).map(|_| event_listener_wake(n)).sum()),
        );
    }
    group.finish();
}

criterion_group!(benches, adaptive);
criterion_main!(benches);
