//! A simulated cluster in front of a fleet of real `LoadControl`s and their permits, on
//! manual clocks: `c` servers with random service times from a fixed seed, one FIFO queue
//! they all share, and the busiest-node CPU reported once a second with a second's delay,
//! as node stats are. Open-loop Poisson arrivals at fractions and multiples of the
//! cluster's capacity, split among the front ends by weight; each front end polls at its
//! own phase within the second, and its clock counts from an epoch of its own (a process's
//! monotonic clock), so nothing lines the front ends up but the cluster they share.
//!
//! Deterministic for a seed, and fast: a 40 s run of a 4-server cluster at 3x takes tens of
//! milliseconds in a release build.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Duration;

use congestion_limiter::limiter::{DefaultLimiter, Limiter, Outcome, Token};
use load_core::monitor::{ClusterSink, Sink};
use load_core::node_stats::SearchPool;
use load_core::{
    Admission, AdmissionMode, Clock, ClusterStatus, ControlConfig, CpuPercent, CpuSample, Instant,
    LoadControl, ManualClock, Permit, Smoothing, Threshold,
};

/// The web threshold, as in the real experiment.
pub const THRESHOLD: i32 = 70;

/// How service times vary.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Service {
    /// Exponential: as variable as a search mix gets.
    Exponential,
    /// Erlang-4 (the sum of four exponentials): steadier, as one kind of query is.
    Erlang4,
    /// A mix of cheap and costly searches: `costly_share` of them cost `ratio` times the
    /// cheap ones (each Erlang-4), the mean staying the model's.
    Mix {
        /// The share of costly searches.
        costly_share: f64,
        /// How many times a cheap one a costly one costs.
        ratio: f64,
    },
}

/// A simulated cluster: servers, and their service times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    /// Searches served at once.
    pub servers: usize,
    /// The mean service time, in microseconds.
    pub service_us: f64,
    /// How service times vary.
    pub service: Service,
}

impl Model {
    /// 4 servers, exponential service of 10 ms.
    pub const SMALL: Model = Model {
        servers: 4,
        service_us: 10_000.0,
        service: Service::Exponential,
    };
    /// A wider cluster with steadier, slower searches.
    pub const WIDE: Model = Model {
        servers: 16,
        service_us: 20_000.0,
        service: Service::Erlang4,
    };
    /// A narrow one with fast searches.
    pub const NARROW: Model = Model {
        servers: 2,
        service_us: 4_000.0,
        service: Service::Exponential,
    };
    /// Many slow searches at once: at light load more are in flight than a small initial
    /// bound allows.
    pub const DEEP: Model = Model {
        servers: 64,
        service_us: 50_000.0,
        service: Service::Erlang4,
    };
    /// A spread of costs, as the real loop's mixed workload: 70 % cheap searches, 30 % that
    /// cost four times as much (two words against eight).
    pub const MIXED: Model = Model {
        servers: 4,
        service_us: 10_000.0,
        service: Service::Mix {
            costly_share: 0.3,
            ratio: 4.0,
        },
    };

    /// Every model the goals hold on.
    pub const ALL: [Model; 5] = [
        Model::SMALL,
        Model::WIDE,
        Model::NARROW,
        Model::DEEP,
        Model::MIXED,
    ];

    /// Requests per second the cluster serves at 100 % CPU.
    #[must_use]
    pub fn capacity(self) -> f64 {
        self.servers as f64 * 1e6 / self.service_us
    }

    fn service(self, rng: &mut Rng) -> u64 {
        let erlang4 =
            |rng: &mut Rng, mean: f64| -> f64 { (0..4).map(|_| rng.exp(mean / 4.0)).sum() };
        let sample = match self.service {
            Service::Exponential => rng.exp(self.service_us),
            Service::Erlang4 => erlang4(rng, self.service_us),
            Service::Mix {
                costly_share,
                ratio,
            } => {
                let cheap = self.service_us / (1.0 - costly_share + costly_share * ratio);
                let mean = if rng.unit() <= costly_share {
                    cheap * ratio
                } else {
                    cheap
                };
                erlang4(rng, mean)
            }
        };
        sample.max(1.0) as u64
    }

    /// A short name for tables.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            m if m == Model::SMALL => "small",
            m if m == Model::WIDE => "wide",
            m if m == Model::NARROW => "narrow",
            m if m == Model::DEEP => "deep",
            m if m == Model::MIXED => "mixed",
            _ => "custom",
        }
    }
}

/// splitmix64: a fixed seed gives the same run everywhere.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1].
    pub fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }

    /// Exponential with this mean.
    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * self.unit().ln()
    }
}

/// How a front end decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Fess's rule, the default.
    Fess,
    /// Fess's rule on the EWMA of the samples (`tau` 3 s), as the real experiment runs it.
    Ewma,
    /// `load.control.admission=limit`.
    Limit,
    /// A peer: congestion-limiter's Vegas (each front end its own limiter, windowed at the
    /// 90th percentile as its docs advise, initial limit 10 as its README's example).
    Vegas,
    /// A peer: congestion-limiter's Gradient (each front end its own, windowed on the mean).
    Gradient,
}

impl Policy {
    /// The policy's settings.
    #[must_use]
    pub fn config(self) -> ControlConfig {
        let mut config = ControlConfig::new();
        config.web_threshold = Threshold::from_fess(THRESHOLD);
        match self {
            Policy::Fess => {}
            Policy::Ewma => {
                config.smoothing = Smoothing::Ewma {
                    tau: Duration::from_secs(3),
                };
            }
            Policy::Limit => config.admission = AdmissionMode::Limit,
            // The peers decide with their own limiter; the control sees no threshold.
            Policy::Vegas | Policy::Gradient => config.web_threshold = Threshold::OFF,
        }
        config
    }

    /// Whether a peer's limiter decides.
    #[must_use]
    pub fn is_peer(self) -> bool {
        matches!(self, Policy::Vegas | Policy::Gradient)
    }

    /// A peer's limiter for one front end.
    fn peer(self) -> Option<Box<dyn Limiter + Send + Sync>> {
        use congestion_limiter::aggregation::{Average, Percentile};
        use congestion_limiter::limits::{Gradient, Vegas, Windowed};
        match self {
            Policy::Vegas => Some(Box::new(DefaultLimiter::new(Windowed::new(
                Vegas::new_with_initial_limit(10),
                Percentile::new(0.9),
            )))),
            Policy::Gradient => Some(Box::new(DefaultLimiter::new(Windowed::new(
                Gradient::new_with_initial_limit(10),
                Average::default(),
            )))),
            _ => None,
        }
    }
}

/// The front ends: how the arrivals split among them.
#[derive(Clone, Debug, PartialEq)]
pub struct Fleet {
    /// Each front end's share of the arrivals, relative to the others'.
    pub weights: Vec<f64>,
}

impl Fleet {
    /// `n` front ends with equal demand.
    #[must_use]
    pub fn equal(n: usize) -> Fleet {
        Fleet {
            weights: vec![1.0; n.max(1)],
        }
    }

    /// `n` front ends, the first with 5 times each other's demand.
    #[must_use]
    pub fn skewed(n: usize) -> Fleet {
        let mut weights = vec![1.0; n.max(1)];
        weights[0] = 5.0;
        Fleet { weights }
    }

    /// How many front ends.
    #[must_use]
    pub fn len(&self) -> usize {
        self.weights.len()
    }

    /// Whether it has none (never).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.weights.is_empty()
    }

    /// Which front end an arrival goes to, for a uniform `u` in (0, 1].
    fn pick(&self, u: f64) -> usize {
        let total: f64 = self.weights.iter().sum();
        let mut at = u * total;
        for (i, weight) in self.weights.iter().enumerate() {
            if at <= *weight {
                return i;
            }
            at -= weight;
        }
        self.weights.len() - 1
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// A request arrives at the fleet.
    Arrival,
    /// A burst of requests arrives at front end 0 at once.
    Burst,
    /// The server finishes its request.
    Done { server: usize },
    /// A front end polls the cluster.
    Poll { front_end: usize },
}

/// What an admitted request holds: a permit of the control, or a peer's token.
enum Held<'a> {
    Permit(Permit<'a, ManualClock>),
    Token(Token),
}

/// One request the cluster has: when it arrived, from which front end, and what it holds.
struct Request<'a> {
    arrived_us: u64,
    front_end: usize,
    held: Held<'a>,
}

/// What one front end saw, after the warm-up.
#[derive(Clone, Debug, Default)]
pub struct FrontEnd {
    /// Requests that arrived.
    pub arrived: u64,
    /// Requests admitted.
    pub admitted: u64,
}

/// What a run measured, after its warm-up.
#[derive(Debug, Default)]
pub struct Run {
    /// Latencies of admitted requests (µs), by arrival time (s).
    pub latencies: Vec<(f64, u64)>,
    /// Requests rejected.
    pub rejected: u64,
    /// Requests that arrived.
    pub arrived: u64,
    /// The measured length, in seconds.
    pub seconds: f64,
    /// The reported CPU at each of front end 0's polls.
    pub cpu: Vec<u8>,
    /// Each front end's counts.
    pub front_ends: Vec<FrontEnd>,
    /// Of the bursts: requests in them, and how many were rejected.
    pub burst: (u64, u64),
}

impl Run {
    fn sorted(&self) -> Vec<u64> {
        let mut sorted: Vec<u64> = self.latencies.iter().map(|(_, l)| *l).collect();
        sorted.sort_unstable();
        sorted
    }

    /// The admitted latency's percentile `p`, in µs.
    #[must_use]
    pub fn percentile(&self, p: f64) -> f64 {
        percentile(&self.sorted(), p)
    }

    /// Admitted requests answered within `slo_us`, per second.
    #[must_use]
    pub fn goodput(&self, slo_us: f64) -> f64 {
        self.latencies
            .iter()
            .filter(|(_, l)| (*l as f64) <= slo_us)
            .count() as f64
            / self.seconds
    }

    /// The share of arrivals rejected.
    #[must_use]
    pub fn shed(&self) -> f64 {
        self.rejected as f64 / self.arrived.max(1) as f64
    }

    /// Jain's fairness index of what each front end got admitted relative to its demand:
    /// 1 when every front end admits the same share of its arrivals.
    #[must_use]
    pub fn fairness(&self) -> f64 {
        let shares: Vec<f64> = self
            .front_ends
            .iter()
            .filter(|f| f.arrived > 0)
            .map(|f| f.admitted as f64 / f.arrived as f64)
            .collect();
        let sum: f64 = shares.iter().sum();
        let squares: f64 = shares.iter().map(|x| x * x).sum();
        if squares == 0.0 {
            return 1.0;
        }
        sum * sum / (shares.len() as f64 * squares)
    }
}

/// The `p` percentile of sorted values.
#[must_use]
pub fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[index] as f64
}

/// One run's setting.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The cluster.
    pub model: Model,
    /// How every front end decides.
    pub policy: Policy,
    /// The front ends.
    pub fleet: Fleet,
    /// The run's length and warm-up, in seconds.
    pub seconds: f64,
    /// See [`Scenario::seconds`].
    pub warmup: f64,
    /// The random seed.
    pub seed: u64,
    /// Bursts of this many requests at once to front end 0, at these times (s).
    pub bursts: (u64, Vec<f64>),
    /// Whether the poll reports the busiest node's search pool (the fleet law's signal);
    /// without it the limit mode keeps its single front end's law.
    pub pool: bool,
}

impl Scenario {
    /// `policy` on `model` with `fleet`, 40 s of which 10 s warm-up, no bursts.
    #[must_use]
    pub fn new(model: Model, policy: Policy, fleet: Fleet) -> Scenario {
        Scenario {
            model,
            policy,
            fleet,
            seconds: 40.0,
            warmup: 10.0,
            seed: 7,
            bursts: (0, Vec::new()),
            pool: true,
        }
    }
}

/// Runs `scenario` with `rate(t)` requests a second (Poisson) in all; statistics from its
/// warm-up on. A rate of zero is a quiet spell.
///
/// # Panics
///
/// When the runtime the peers' limiters need cannot be built.
#[must_use]
pub fn simulate(scenario: &Scenario, rate: impl Fn(f64) -> f64) -> Run {
    // The peers' limiters read tokio's clock: a paused one, advanced with the simulation's.
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime")
        .block_on(run(scenario, rate))
}

async fn run(scenario: &Scenario, rate: impl Fn(f64) -> f64) -> Run {
    let Scenario {
        model,
        policy,
        fleet,
        seconds,
        warmup,
        seed,
        bursts,
        pool,
    } = scenario;
    let (model, seconds, warmup) = (*model, *seconds, *warmup);
    let n = fleet.len();
    let config = policy.config();
    let controls: Vec<LoadControl> = (0..n).map(|_| LoadControl::from_config(&config)).collect();
    let statuses: Vec<ClusterStatus> = (0..n).map(|_| ClusterStatus::new()).collect();
    let peers: Vec<Option<Box<dyn Limiter + Send + Sync>>> =
        (0..n).map(|_| policy.peer()).collect();
    let mut advanced_us = 0u64;
    let sinks: Vec<ClusterSink<'_>> = controls
        .iter()
        .zip(&statuses)
        .map(|(control, status)| ClusterSink::new(control, status))
        .collect();
    let mut rng = Rng(*seed);
    // Each front end's clock counts from an epoch of its own (up to a day apart), and it
    // polls at a phase of its own within the second: nothing lines them up.
    let offsets: Vec<u64> = (0..n)
        .map(|i| {
            if i == 0 {
                0
            } else {
                rng.next_u64() % 86_400_000_000
            }
        })
        .collect();
    let phases: Vec<u64> = (0..n)
        .map(|i| {
            if i == 0 {
                0
            } else {
                rng.next_u64() % 1_000_000
            }
        })
        .collect();
    let clocks: Vec<ManualClock> = offsets
        .iter()
        .map(|&offset| ManualClock::new(Instant::from_micros(offset)))
        .collect();
    let end_us = (seconds * 1e6) as u64;
    let mut events: BinaryHeap<Reverse<(u64, u64, Event)>> = BinaryHeap::new();
    let mut sequence = 0u64;
    let mut push = |events: &mut BinaryHeap<_>, at: u64, event: Event| {
        sequence += 1;
        events.push(Reverse((at, sequence, event)));
    };
    push(&mut events, 0, Event::Arrival);
    for (front_end, phase) in phases.iter().enumerate() {
        push(&mut events, 1_000_000 + phase, Event::Poll { front_end });
    }
    for at in &bursts.1 {
        push(&mut events, (at * 1e6) as u64, Event::Burst);
    }
    let mut queue: VecDeque<Request<'_>> = VecDeque::new();
    let mut servers: Vec<Option<Request<'_>>> = (0..model.servers).map(|_| None).collect();
    // Busy server-microseconds in each second, for the CPU the nodes report.
    let mut busy = vec![0u64; seconds as usize + 2];
    let mut busy_since = vec![0u64; model.servers];
    let mut run = Run {
        seconds: seconds - warmup,
        front_ends: vec![FrontEnd::default(); n],
        ..Run::default()
    };
    let account = |busy: &mut Vec<u64>, from: u64, to: u64| {
        let mut at = from;
        while at < to {
            let second = (at / 1_000_000) as usize;
            let edge = ((second as u64) + 1) * 1_000_000;
            let until = edge.min(to);
            if let Some(slot) = busy.get_mut(second) {
                *slot += until - at;
            }
            at = until;
        }
    };
    while let Some(Reverse((now, _, event))) = events.pop() {
        if now > end_us {
            break;
        }
        for (clock, offset) in clocks.iter().zip(&offsets) {
            clock.set(Instant::from_micros(now + offset));
        }
        if policy.is_peer() && now > advanced_us {
            tokio::time::advance(Duration::from_micros(now - advanced_us)).await;
            advanced_us = now;
        }
        let measured = now as f64 / 1e6 >= warmup;
        let arrivals = match event {
            Event::Arrival => {
                let r = rate(now as f64 / 1e6);
                if r > 0.0 {
                    let next = now + rng.exp(1e6 / r).max(1.0) as u64;
                    push(&mut events, next, Event::Arrival);
                    vec![(fleet.pick(rng.unit()), false)]
                } else {
                    // A quiet spell: look again in 10 ms.
                    push(&mut events, now + 10_000, Event::Arrival);
                    Vec::new()
                }
            }
            Event::Burst => vec![(0, true); bursts.0 as usize],
            _ => Vec::new(),
        };
        for (front_end, in_burst) in arrivals {
            if measured {
                run.arrived += 1;
                run.front_ends[front_end].arrived += 1;
            }
            let held = match &peers[front_end] {
                Some(limiter) => limiter.try_acquire().await.map(Held::Token),
                None => match controls[front_end].admit("/search?q=x", &clocks[front_end]) {
                    Admission::Admitted(permit) => Some(Held::Permit(permit)),
                    Admission::Rejected(_) => None,
                },
            };
            match held {
                Some(held) => {
                    if measured {
                        run.front_ends[front_end].admitted += 1;
                    }
                    if in_burst {
                        run.burst.0 += 1;
                    }
                    let request = Request {
                        arrived_us: now,
                        front_end,
                        held,
                    };
                    if let Some(free) = servers.iter().position(Option::is_none) {
                        servers[free] = Some(request);
                        busy_since[free] = now;
                        let service = model.service(&mut rng);
                        push(&mut events, now + service, Event::Done { server: free });
                    } else {
                        queue.push_back(request);
                    }
                }
                None => {
                    if measured {
                        run.rejected += 1;
                    }
                    if in_burst {
                        run.burst.0 += 1;
                        run.burst.1 += 1;
                    }
                }
            }
        }
        match event {
            Event::Done { server } => {
                let request = servers[server].take().expect("a request in service");
                account(&mut busy, busy_since[server], now);
                if request.arrived_us as f64 / 1e6 >= warmup {
                    run.latencies
                        .push((request.arrived_us as f64 / 1e6, now - request.arrived_us));
                }
                // The answer is complete: counted out.
                match request.held {
                    Held::Permit(permit) => drop(permit),
                    Held::Token(token) => {
                        if let Some(limiter) = &peers[request.front_end] {
                            limiter.release(token, Some(Outcome::Success)).await;
                            // The limiter may shrink in a task of its own: let it run.
                            tokio::task::yield_now().await;
                        }
                    }
                }
                if let Some(next) = queue.pop_front() {
                    servers[server] = Some(next);
                    busy_since[server] = now;
                    let service = model.service(&mut rng);
                    push(&mut events, now + service, Event::Done { server });
                }
            }
            Event::Poll { front_end } => {
                // The node refreshes its CPU figure once a second, over the second before
                // last (a second's delay); every front end reads the same figure.
                let second = (now / 1_000_000) as usize;
                let reported = if second >= 2 {
                    let busy_us = busy[second - 2] as f64;
                    (busy_us / (model.servers as f64 * 1e6) * 100.0)
                        .round()
                        .min(100.0) as u8
                } else {
                    0
                };
                // The busiest node's search pool at this instant: each front end reads it
                // when it polls.
                let busy_servers = servers.iter().filter(|s| s.is_some()).count();
                let mut sample = CpuSample::local(CpuPercent::new(reported));
                if *pool {
                    sample = sample.with_search_pool(SearchPool {
                        threads: u32::try_from(model.servers).unwrap_or(u32::MAX),
                        active: u32::try_from(busy_servers).unwrap_or(u32::MAX),
                        queue: u32::try_from(queue.len()).unwrap_or(u32::MAX),
                    });
                }
                sinks[front_end].on_sample(clocks[front_end].now(), &sample);
                if front_end == 0 {
                    run.cpu.push(reported);
                }
                push(&mut events, now + 1_000_000, Event::Poll { front_end });
            }
            Event::Arrival | Event::Burst => {}
        }
        // Servers still busy count toward the CPU up to now.
        for (server, since) in busy_since.iter_mut().enumerate() {
            if servers[server].is_some() && *since < now {
                account(&mut busy, *since, now);
                *since = now;
            }
        }
    }
    // Requests still queued or in service keep their permits until here.
    drop(queue);
    drop(servers);
    run
}

/// The steady-state runs of a scenario: 40 s per factor of capacity, 10 s of warm-up.
#[must_use]
pub fn steady(scenario: &Scenario, factors: &[f64]) -> Vec<(f64, Run)> {
    factors
        .iter()
        .map(|&factor| {
            let scenario = Scenario {
                seed: scenario.seed + (factor * 100.0) as u64,
                ..scenario.clone()
            };
            let capacity = scenario.model.capacity();
            (factor, simulate(&scenario, |_| factor * capacity))
        })
        .collect()
}

/// The goals' ratios within one scenario's runs.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Admitted p99 at 2x and 3x over p99 at 0.5x.
    pub p99_ratio: [f64; 2],
    /// p99.9 at 3x over p99 at 0.5x.
    pub p999_ratio_3x: f64,
    /// Goodput (answered within 10 x the 0.5x p50) at 2x and 3x over the peak.
    pub goodput_ratio: [f64; 2],
    /// The share shed at 0.25x and 0.5x.
    pub shed_light: [f64; 2],
    /// Jain's index of admitted over demand per front end, at 2x and 3x.
    pub fairness: [f64; 2],
}

/// The factors of capacity a summary runs.
pub const FACTORS: [f64; 7] = [0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0];

/// Runs `scenario` at every factor of [`FACTORS`] and sums it up.
#[must_use]
pub fn summary(scenario: &Scenario) -> Summary {
    let runs = steady(scenario, &FACTORS);
    let at = |factor: f64| &runs.iter().find(|(f, _)| *f == factor).expect("run").1;
    let light_p99 = at(0.5).percentile(0.99);
    let slo = 10.0 * at(0.5).percentile(0.50);
    let peak = runs
        .iter()
        .map(|(_, run)| run.goodput(slo))
        .fold(0.0, f64::max);
    for (factor, run) in &runs {
        eprintln!(
            "{} {:?} x{} {factor}x: p50 {:.1} ms, p99 {:.1} ms, p99.9 {:.1} ms, goodput {:.0}/s, \
             shed {:.1} %, fairness {:.3}, cpu {:?}",
            scenario.model.name(),
            scenario.policy,
            scenario.fleet.len(),
            run.percentile(0.5) / 1e3,
            run.percentile(0.99) / 1e3,
            run.percentile(0.999) / 1e3,
            run.goodput(slo),
            run.shed() * 100.0,
            run.fairness(),
            &run.cpu[run.cpu.len().saturating_sub(6)..]
        );
    }
    Summary {
        p99_ratio: [2.0, 3.0].map(|f| at(f).percentile(0.99) / light_p99),
        p999_ratio_3x: at(3.0).percentile(0.999) / light_p99,
        goodput_ratio: [2.0, 3.0].map(|f| at(f).goodput(slo) / peak),
        shed_light: [0.25, 0.5].map(|f| at(f).shed()),
        fairness: [2.0, 3.0].map(|f| at(f).fairness()),
    }
}

/// Seconds after a step from 0.5x to 2x (at 20 s) until the admitted p99 over 1 s windows
/// stays under 3 x its 0.5x value.
#[must_use]
pub fn recovery_after_step(scenario: &Scenario) -> f64 {
    let step_at = 20.0;
    let scenario = Scenario {
        warmup: 5.0,
        seed: 99,
        ..scenario.clone()
    };
    let capacity = scenario.model.capacity();
    let run = simulate(&scenario, |t| {
        (if t < step_at { 0.5 } else { 2.0 }) * capacity
    });
    let window = |from: f64| {
        let mut latencies: Vec<u64> = run
            .latencies
            .iter()
            .filter(|(at, _)| *at >= from && *at < from + 1.0)
            .map(|(_, l)| *l)
            .collect();
        latencies.sort_unstable();
        percentile(&latencies, 0.99)
    };
    let light: f64 = (5..20).map(|s| window(f64::from(s))).sum::<f64>() / 15.0;
    let mut last_bad = step_at;
    for s in 20..39 {
        let second = f64::from(s);
        if window(second) > 3.0 * light {
            last_bad = second + 1.0;
        }
    }
    last_bad - step_at
}
