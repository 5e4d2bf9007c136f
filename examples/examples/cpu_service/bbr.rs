//! A port of Kratos' BBR limiter (`go-kratos/aegis`, `ratelimit/bbr/bbr.go`), the shedder a
//! Go service would pick, as the local loop's peer: the same rules, written anew.
//!
//! - The CPU: this service's own (the same cgroup-aware reading the library's layer takes),
//!   sampled every 500 ms into an EWMA that keeps 0.95 of the old value, in per mille.
//! - A window of 10 s in 100 buckets of 100 ms: requests passed (completed) per bucket, and
//!   their response times in whole ms (each rounded up; 0 ms is not recorded).
//! - `max_pass`: the most completions of one bucket, `min_rt`: the least mean response time
//!   of one bucket (at least 1 ms), both over the window's buckets before the current one
//!   and cached for a bucket; the most in flight is `max_pass × min_rt × buckets per second
//!   / 1000`, rounded.
//! - A request is dropped when in flight is above 1 and above that most, while the CPU is at
//!   or above the threshold (800 per mille), or within a second of the last time dropping
//!   started; below the threshold and later than that, nothing is dropped.

use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

/// Buckets in the window.
const BUCKETS: usize = 100;
/// One bucket's length.
const BUCKET: Duration = Duration::from_millis(100);
/// The EWMA's weight of the old CPU value.
const DECAY: f64 = 0.95;
/// The CPU threshold, in per mille.
pub(crate) const CPU_THRESHOLD: i64 = 800;

#[derive(Clone, Copy, Default)]
struct Bucket {
    /// The bucket's number since the limiter started (a bucket of another number is stale).
    number: u64,
    passed: u64,
    rt_sum_ms: u64,
    rt_count: u64,
}

struct Window {
    buckets: [Bucket; BUCKETS],
    /// `max_pass` and `min_rt` as computed in the bucket of this number.
    cached: Option<(u64, i64, i64)>,
    /// When dropping last started (`None`: not dropping).
    drop_started: Option<Instant>,
}

/// The limiter.
pub(crate) struct Bbr {
    started: Instant,
    /// The CPU's EWMA, in per mille.
    cpu: AtomicI64,
    in_flight: AtomicI64,
    window: Mutex<Window>,
}

/// A request let through: dropping it records its response time and its completion.
pub(crate) struct Pass<'a> {
    bbr: &'a Bbr,
    start: Instant,
}

impl Bbr {
    pub(crate) fn new() -> Bbr {
        Bbr {
            started: Instant::now(),
            cpu: AtomicI64::new(0),
            in_flight: AtomicI64::new(0),
            window: Mutex::new(Window {
                buckets: [Bucket::default(); BUCKETS],
                cached: None,
                drop_started: None,
            }),
        }
    }

    /// A CPU sample (percent), folded into the EWMA; call it every 500 ms.
    pub(crate) fn sample_cpu(&self, percent: f64) {
        let usage = (percent * 10.0).clamp(0.0, 1000.0);
        let before = self.cpu.load(Ordering::Relaxed) as f64;
        self.cpu.store(
            (before * DECAY + usage * (1.0 - DECAY)) as i64,
            Ordering::Relaxed,
        );
    }

    fn number(&self, at: Instant) -> u64 {
        (at.duration_since(self.started).as_nanos() / BUCKET.as_nanos()) as u64
    }

    /// The most requests in flight the window's figures allow.
    fn max_in_flight(&self, window: &mut Window, now: Instant) -> i64 {
        let current = self.number(now);
        let (max_pass, min_rt) = match window.cached {
            Some((at, max_pass, min_rt)) if at == current => (max_pass, min_rt),
            _ => {
                // The window's buckets before the current one (a bucket never written has
                // number 0 and counts nothing).
                let earlier = window
                    .buckets
                    .iter()
                    .filter(|b| b.number < current && current - b.number < BUCKETS as u64);
                let mut max_pass = 1u64;
                let mut min_rt = f64::MAX;
                for bucket in earlier {
                    max_pass = max_pass.max(bucket.passed);
                    if bucket.rt_count > 0 {
                        min_rt = min_rt.min(bucket.rt_sum_ms as f64 / bucket.rt_count as f64);
                    }
                }
                let min_rt = if min_rt == f64::MAX {
                    1
                } else {
                    (min_rt.ceil() as i64).max(1)
                };
                let max_pass = i64::try_from(max_pass).unwrap_or(i64::MAX);
                window.cached = Some((current, max_pass, min_rt));
                (max_pass, min_rt)
            }
        };
        let per_second = (Duration::from_secs(1).as_nanos() / BUCKET.as_nanos()) as i64;
        ((max_pass * min_rt * per_second) as f64 / 1000.0 + 0.5).floor() as i64
    }

    /// Lets the request through, or not (drop it: answer 429).
    pub(crate) fn allow(&self) -> Option<Pass<'_>> {
        let now = Instant::now();
        let cpu = self.cpu.load(Ordering::Relaxed);
        let in_flight = self.in_flight.load(Ordering::Relaxed);
        let mut window = self.window.lock().ok()?;
        let over =
            |window: &mut Window| in_flight > 1 && in_flight > self.max_in_flight(window, now);
        let dropping = if cpu < CPU_THRESHOLD {
            match window.drop_started {
                None => false,
                Some(at) if now.duration_since(at) <= Duration::from_secs(1) => over(&mut window),
                Some(_) => {
                    window.drop_started = None;
                    false
                }
            }
        } else {
            let dropping = over(&mut window);
            if dropping && window.drop_started.is_none() {
                window.drop_started = Some(now);
            }
            dropping
        };
        drop(window);
        if dropping {
            return None;
        }
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        Some(Pass {
            bbr: self,
            start: now,
        })
    }
}

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        let now = Instant::now();
        let rt_ms = (now.duration_since(self.start).as_secs_f64() * 1000.0).ceil() as u64;
        let number = self.bbr.number(now);
        if let Ok(mut window) = self.bbr.window.lock() {
            let bucket = &mut window.buckets[(number % BUCKETS as u64) as usize];
            if bucket.number != number {
                *bucket = Bucket {
                    number,
                    ..Bucket::default()
                };
            }
            if rt_ms > 0 {
                bucket.rt_sum_ms += rt_ms;
                bucket.rt_count += 1;
            }
            bucket.passed += 1;
        }
        self.bbr.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}
