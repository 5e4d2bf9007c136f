//! A simulated OpenSearch cluster in front of a fleet of real `LoadControl`s and their
//! permits, each on a clock of its own.
//!
//! The cluster is shaped as OpenSearch is: `nodes` nodes of `cores` cores, each with a
//! search thread pool of `threads` threads (OpenSearch sizes it `⌊1.5 × cores⌋ + 1`) in front
//! of a FIFO queue. Active threads share their node's cores (processor sharing: with more
//! active threads than cores each runs slower), so the pool's queue only starts once the
//! CPU is saturated, and a search is slower before any task waits. Each search fans out to
//! shard tasks on `fanout` distinct nodes and is answered when its slowest shard is; the
//! front end adds time of its own before and after (`overhead_us`). A poll reads the busiest
//! node's CPU and the most loaded node's search pool, as `load_core::node_stats` does, and
//! may miss the pool (a proxy that filters it, a node that did not report it).
//!
//! What the real node was traced doing ([`NodeFacts::MEASURED`], from
//! `sim/fixtures/traces-af42c7f/`) is in the model, each with a switch: a search is a query
//! task and then a fetch task that queues again; each front end keeps 16 connections to a
//! node and a search beyond them waits at the front end, unseen by the node's pool; a new
//! connection costs the node CPU outside the pool; the CPU figure is the last second's,
//! refreshed once a second at the node's own phase; and a front end's first poll comes with
//! its first request. [`NodeFacts::BEFORE`] is the model without them, on which the law was
//! designed: it never showed the cap's jump at the onset that the node shows.
//!
//! Open-loop Poisson arrivals at fractions and multiples of the load at which the cluster's
//! CPU first reaches 90 % (the real loop's `1x`), split among the front ends by weight;
//! front ends may join late (their monitor starts with their first request, as the lazy
//! start does) or idle for a while. Each front end polls at its own phase within the
//! second (with [`NodeFacts::poll_at_first_request`], the phase of its first request), and
//! its clock counts from an epoch of its own (a process's monotonic clock), so nothing lines
//! the front ends up but the cluster they share and the traffic that starts them.
//!
//! [`short`] runs the node's short loop (`bench/closed_loop.sh --short`) in the model, with the
//! same steps, figures and goals.
//!
//! Deterministic for a seed.

pub mod kept;
pub mod mean_value;
pub mod short;

use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::fmt::Write as _;
use std::time::Duration;

use congestion_limiter::limiter::{DefaultLimiter, Limiter, Outcome, Token};
use load_core::admission::{FloodBase, Law, Start, Watch};
use load_core::monitor::{ClusterSink, Sink};
use load_core::node_stats::{PoolCounters, PoolTracker, SearchPool};
use load_core::{
    Admission, AdmissionMode, Clock, ClusterStatus, ControlConfig, CpuPercent, CpuSample, Instant,
    LoadControl, Permit, Threshold, config::Smoothing,
};

/// The web threshold, as in the real experiment.
pub const THRESHOLD: i32 = 70;

/// How a node reports its CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuReport {
    /// Over the second before its last refresh, refreshed once a second at a phase of the
    /// node's own. OpenSearch caches its OS stats for `monitor.os.refresh_interval` (1 s)
    /// and refreshes them at the first stats request that finds them older, and the JVM's
    /// CPU load counts from its call before: with a client polling it more often than the
    /// front ends (a monitoring agent; the real loop's CPU sampler, every 0.5 s), the
    /// figure is the last second's, at most a second old. The real node's reading changed
    /// about a second after a surge began, and the front ends armed about 2 s after it
    /// (`../shared/traces/af42c7f/`).
    EverySecond,
    /// Over the whole second before last, refreshed at each second's start: the model
    /// before the real node was traced, a second slower than the node.
    SecondBeforeLast,
    /// Over the time since the poll before, as a cgroup's usage read at each poll
    /// (`load_source_system::CgroupSource`, each sample the usage since the one before):
    /// a service's own CPU, read by its one front end.
    SincePoll,
}

/// What a real node and front end do that the model may leave out: the facts the traces
/// of a real node (`../shared/traces/af42c7f/`) showed, with a switch each, so that a table
/// can show what each one changes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeFacts {
    /// The share of a shard's CPU time spent in its fetch task: a search is a query task
    /// per shard, and, once every shard's query is done, a fetch task per shard, which
    /// queues again behind whatever arrived meanwhile. The node's `completed` count grows by
    /// two per search (the traces: `query_total` = `fetch_total`), and `fetch_time_in_millis`
    /// is 24–34 % of the query and fetch time together in the captured node stats
    /// (`tests/fixtures/opensearch/os-2.19.1-real-filtered*.json`). 0: one task per shard.
    pub fetch_share: f64,
    /// Connections each front end keeps to each node (the demo's `ClusterClient` keeps
    /// `DEFAULT_CONNECTIONS`, 16): a search sent with every one of them busy waits at the
    /// front end, where the node's pool does not count it. The traces: with 124 searches
    /// in flight at two front ends, the node's pool read 2 active and 30 queued (32 = 2 ×
    /// 16); with one front end, at most 16. `None`: every admitted search reaches the node.
    pub connections: Option<usize>,
    /// How the CPU is reported.
    pub cpu: CpuReport,
    /// The node's CPU time to take a new connection and its first request, in µs, outside
    /// the search pool (OpenSearch's HTTP workers share the cores with the pool's threads):
    /// a front end opens its connections as searches need them, the first of each waiting
    /// for it. In the traces, the first 0.27 s of a surge on fresh front ends completed
    /// 0.26 to 0.98 times the tasks a second the same node completed later (0.26 to 0.80
    /// with two front ends opening 32 connections), its pool full all the while.
    pub connect_us: f64,
    /// Whether a front end's first poll starts with its first request, as the lazy start
    /// does (`load.control.monitor.jitter` is 0 by default), [`POLL_LATENCY_US`] later;
    /// then one each second. Else it comes at a random phase in the second after the front
    /// end joins (the model before the node was traced). Front ends started by one surge
    /// poll nearly in phase: in the traces, both front ends armed at the same poll, 2.1 s
    /// after the surge.
    pub poll_at_first_request: bool,
}

/// [`NodeFacts::connect_us`] as measured: the median over the real node's traces of the CPU
/// its first 0.27 s of a surge lacked, per connection the fresh front ends opened (4.8 ms;
/// from -0.9 to 11.5 over ten runs; `sim/tests/onset.rs` computes it from the fixtures and
/// holds this to it).
pub const CONNECT_US: f64 = 4_800.0;

/// The law the node ran when its traces (`sim/fixtures/traces-af42c7f/`) and its first short
/// loops were taken: the first operating-point law (165a8a2), the cap started with room and
/// the operating point at 1.25 tasks per core. The tests that hold the model to those runs
/// run it.
pub const TRACED: Law = Law {
    start: Start::Room,
    slack: 0.0,
    relief: 0.0,
    relief_until: 0.0,
    flood: FloodBase::Now,
    watch: Watch::Completions,
    quick_looks: 0,
    flood_point: false,
    veto: false,
    demand_on_node: false,
    release_by_demand: false,
    ..Law::DEFAULT
};

/// How long a poll of the node stats takes to read, in µs: the pool and CPU it reports are
/// the node's at its start plus this.
pub const POLL_LATENCY_US: u64 = 3_000;

impl NodeFacts {
    /// What the real node was measured to do.
    pub const MEASURED: NodeFacts = NodeFacts {
        fetch_share: 0.25,
        connections: Some(16),
        cpu: CpuReport::EverySecond,
        connect_us: CONNECT_US,
        poll_at_first_request: true,
    };
    /// The model before the real node was traced: one task per shard, no connection
    /// limit, the CPU of the second before last.
    pub const BEFORE: NodeFacts = NodeFacts {
        fetch_share: 0.0,
        connections: None,
        cpu: CpuReport::SecondBeforeLast,
        connect_us: 0.0,
        poll_at_first_request: false,
    };
}

/// How the CPU time of a shard task varies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Service {
    /// Exponential: as variable as a search mix gets.
    Exponential,
    /// Erlang-4 (the sum of four exponentials): steadier, as one kind of query is.
    Erlang4,
    /// Log-normal with this `sigma`: mostly steady, with a long tail (the real node's
    /// searches: p99 1.6 times p50 at light load, and now and then one far slower).
    LogNormal {
        /// The spread of the logarithm.
        sigma: f64,
    },
    /// A mix of cheap and costly searches: `costly_share` of them cost `ratio` times the
    /// cheap ones (each Erlang-4 on every shard), the mean staying the model's.
    Mix {
        /// The share of costly searches.
        costly_share: f64,
        /// How many times a cheap one a costly one costs.
        ratio: f64,
    },
}

/// A simulated cluster.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    /// A short name for tables.
    pub name: &'static str,
    /// Nodes in the cluster.
    pub nodes: usize,
    /// Cores per node.
    pub cores: u32,
    /// Search threads per node.
    pub threads: usize,
    /// Shard tasks per search, each on a distinct node.
    pub fanout: usize,
    /// The mean CPU time of one shard task, in microseconds.
    pub work_us: f64,
    /// How it varies.
    pub service: Service,
    /// The front end's own time per search (its parsing, the network, the coordinating
    /// node's merge), in microseconds: half before the shards start, half after the last.
    pub overhead_us: u64,
}

/// OpenSearch's search pool size for a node of `cores` cores: `⌊1.5 × cores⌋ + 1`.
#[must_use]
pub const fn opensearch_threads(cores: u32) -> usize {
    (cores as usize * 3) / 2 + 1
}

impl Model {
    /// The real loop's node: one core, two search threads, searches of 5 ms of CPU with a
    /// long tail, and 3 ms of the front end's and the network's (light load's p50 is 8 ms,
    /// as on the real node, where the node serves at most about 210 searches a second).
    pub const ONE_CORE: Model = Model {
        name: "one-core",
        nodes: 1,
        cores: 1,
        threads: opensearch_threads(1),
        fanout: 1,
        work_us: 5_000.0,
        service: Service::LogNormal { sigma: 0.35 },
        overhead_us: 3_000,
    };
    /// The same node with the real loop's mixed workload: 70 % two-word searches, 30 %
    /// eight-word ones that cost four times as much.
    pub const ONE_CORE_MIXED: Model = Model {
        name: "one-core-mixed",
        nodes: 1,
        cores: 1,
        threads: opensearch_threads(1),
        fanout: 1,
        work_us: 5_000.0,
        service: Service::Mix {
            costly_share: 0.3,
            ratio: 4.0,
        },
        overhead_us: 3_000,
    };
    /// A four-core node (seven threads), exponential searches.
    pub const FOUR_CORES: Model = Model {
        name: "four-cores",
        nodes: 1,
        cores: 4,
        threads: opensearch_threads(4),
        fanout: 1,
        work_us: 10_000.0,
        service: Service::Exponential,
        overhead_us: 1_500,
    };
    /// A sixteen-core node (25 threads), steadier and slower searches.
    pub const SIXTEEN_CORES: Model = Model {
        name: "sixteen-cores",
        nodes: 1,
        cores: 16,
        threads: opensearch_threads(16),
        fanout: 1,
        work_us: 20_000.0,
        service: Service::Erlang4,
        overhead_us: 1_500,
    };
    /// Three two-core nodes, each search on a shard of every node (answered by the
    /// slowest).
    pub const THREE_NODES: Model = Model {
        name: "three-nodes",
        nodes: 3,
        cores: 2,
        threads: opensearch_threads(2),
        fanout: 3,
        work_us: 5_000.0,
        service: Service::LogNormal { sigma: 0.5 },
        overhead_us: 2_000,
    };
    /// Six four-core nodes, each search on two of them (a shard and a replica spread).
    pub const SIX_NODES: Model = Model {
        name: "six-nodes",
        nodes: 6,
        cores: 4,
        threads: opensearch_threads(4),
        fanout: 2,
        work_us: 10_000.0,
        service: Service::Exponential,
        overhead_us: 2_000,
    };

    /// Every model the goals hold on.
    pub const ALL: [Model; 6] = [
        Model::ONE_CORE,
        Model::ONE_CORE_MIXED,
        Model::FOUR_CORES,
        Model::SIXTEEN_CORES,
        Model::THREE_NODES,
        Model::SIX_NODES,
    ];

    /// Searches per second the cluster serves with every core busy.
    #[must_use]
    pub fn capacity(self) -> f64 {
        self.nodes as f64 * f64::from(self.cores) * 1e6 / (self.fanout as f64 * self.work_us)
    }

    /// The real loop's `1x`: the load at which the cluster's CPU first reaches 90 %.
    #[must_use]
    pub fn one_x(self) -> f64 {
        0.9 * self.capacity()
    }

    /// One search's shard tasks: their CPU time each.
    fn search(self, rng: &mut Rng, shards: &mut Vec<f64>) {
        shards.clear();
        let erlang4 =
            |rng: &mut Rng, mean: f64| -> f64 { (0..4).map(|_| rng.exp(mean / 4.0)).sum() };
        let mean = match self.service {
            Service::Mix {
                costly_share,
                ratio,
            } => {
                let cheap = self.work_us / (1.0 - costly_share + costly_share * ratio);
                if rng.unit() <= costly_share {
                    cheap * ratio
                } else {
                    cheap
                }
            }
            _ => self.work_us,
        };
        for _ in 0..self.fanout {
            let work = match self.service {
                Service::Exponential => rng.exp(mean),
                Service::Erlang4 | Service::Mix { .. } => erlang4(rng, mean),
                Service::LogNormal { sigma } => {
                    (mean.ln() - sigma * sigma / 2.0 + sigma * rng.normal()).exp()
                }
            };
            shards.push(work.max(1.0));
        }
    }
}

/// splitmix64: a fixed seed gives the same run everywhere.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(load_core::monitor::SPLITMIX64_GAMMA);
        load_core::monitor::mix64(self.0)
    }

    /// Uniform in (0, 1].
    pub fn unit(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64
    }

    /// Exponential with this mean.
    pub fn exp(&mut self, mean: f64) -> f64 {
        -mean * self.unit().ln()
    }

    /// Standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit(), self.unit());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// How a front end decides.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Policy {
    /// No control: every request admitted (the real loop's baseline).
    Off,
    /// Fess's rule, the default.
    Fess,
    /// Fess's rule on the EWMA of the samples (`tau` 3 s).
    Ewma,
    /// `load.control.admission=limit`.
    Limit,
    /// The limit mode with a law of another design (the ones the default beat).
    Design(Law),
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
            Policy::Limit | Policy::Design(_) => config.admission = AdmissionMode::Limit,
            // The peers decide with their own limiter; the control sees no threshold.
            Policy::Off | Policy::Vegas | Policy::Gradient => {
                config.web_threshold = Threshold::OFF;
            }
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

/// The front ends: how the arrivals split among them, and when each takes part.
#[derive(Clone, Debug, PartialEq)]
pub struct Fleet {
    /// Each front end's share of the arrivals, relative to the others'.
    pub weights: Vec<f64>,
    /// When each front end starts (s): before, it gets no request and does not poll (its
    /// monitor starts with its first request).
    pub joins: Vec<f64>,
    /// A spell (s, from and until) during which a front end gets no request but keeps
    /// polling, if any.
    pub idle: Vec<Option<(f64, f64)>>,
}

impl Fleet {
    /// `n` front ends with equal demand.
    #[must_use]
    pub fn equal(n: usize) -> Fleet {
        let n = n.max(1);
        Fleet {
            weights: vec![1.0; n],
            joins: vec![0.0; n],
            idle: vec![None; n],
        }
    }

    /// `n` front ends, the first with 5 times each other's demand.
    #[must_use]
    pub fn skewed(n: usize) -> Fleet {
        let mut fleet = Fleet::equal(n);
        fleet.weights[0] = 5.0;
        fleet
    }

    /// `n` equal front ends, the last of which starts at `at` seconds.
    #[must_use]
    pub fn late(n: usize, at: f64) -> Fleet {
        let mut fleet = Fleet::equal(n);
        if let Some(last) = fleet.joins.last_mut() {
            *last = at;
        }
        fleet
    }

    /// `n` equal front ends, the last of which gets nothing from `from` to `until` seconds.
    #[must_use]
    pub fn idling(n: usize, from: f64, until: f64) -> Fleet {
        let mut fleet = Fleet::equal(n);
        if let Some(last) = fleet.idle.last_mut() {
            *last = Some((from, until));
        }
        fleet
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

    /// A short description for tables.
    #[must_use]
    pub fn describe(&self) -> String {
        let mut text = format!("{} FE", self.len());
        if self.weights.iter().any(|w| *w != self.weights[0]) {
            text.push_str(", skewed 5:1");
        }
        if let Some(at) = self.joins.iter().find(|at| **at > 0.0) {
            let _ = write!(text, ", one joins at {at} s");
        }
        if let Some((from, until)) = self.idle.iter().flatten().next() {
            let _ = write!(text, ", one idle {from}-{until} s");
        }
        text
    }

    /// The weight of front end `i` at `t` seconds.
    fn weight(&self, i: usize, t: f64) -> f64 {
        let idle = self.idle[i].is_some_and(|(from, until)| (from..until).contains(&t));
        if t < self.joins[i] || idle {
            0.0
        } else {
            self.weights[i]
        }
    }

    /// Which front end an arrival at `t` goes to, for a uniform `u` in (0, 1].
    fn pick(&self, t: f64, u: f64) -> usize {
        let total: f64 = (0..self.len()).map(|i| self.weight(i, t)).sum();
        let mut at = u * total;
        let mut last = 0;
        for i in 0..self.len() {
            let weight = self.weight(i, t);
            if weight > 0.0 {
                if at <= weight {
                    return i;
                }
                at -= weight;
                last = i;
            }
        }
        last
    }
}

/// A front end's clock: what `load_core::time::ManualClock` shows, without its lock. One thread
/// runs a simulation, and `ManualClock`'s critical section is one process-wide mutex that
/// every test thread's every event would take.
#[derive(Debug)]
struct FrontEndClock(Cell<u64>);

impl FrontEndClock {
    /// A clock showing `micros`.
    fn new(micros: u64) -> FrontEndClock {
        FrontEndClock(Cell::new(micros))
    }

    /// Sets the clock to `micros`, if that is not earlier than it shows.
    fn set(&self, micros: u64) {
        self.0.set(self.0.get().max(micros));
    }
}

impl Clock for FrontEndClock {
    fn now(&self) -> Instant {
        Instant::from_micros(self.0.get())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// A request arrives at the fleet.
    Arrival,
    /// A burst of requests arrives at front end 0 at once.
    Burst,
    /// One request of a burst spread over time arrives at front end 0.
    BurstOne,
    /// A request leaves its front end for the cluster: it takes a connection, or waits for
    /// one.
    Dispatch { request: usize },
    /// A node's next shard task may be done (stale when the node's generation moved on).
    NodeDone { node: usize, generation: u64 },
    /// A request's answer reaches its client: its permit is dropped.
    Answer { request: usize },
    /// A front end polls the cluster.
    Poll { front_end: usize },
    /// A node refreshes the CPU it reports ([`CpuReport::EverySecond`]).
    Refresh { node: usize },
}

/// What an admitted request holds: a permit of the control, or a peer's token.
enum Held<'a> {
    Permit(Permit<'a, FrontEndClock>),
    Token(Token),
}

/// One admitted request: when it arrived, from which front end, what it holds, its shards'
/// CPU time and nodes, how many of its tasks of the current phase are still running, and
/// whether that phase is the fetch.
struct Request<'a> {
    arrived_us: u64,
    front_end: usize,
    held: Held<'a>,
    shards: Vec<f64>,
    nodes: Vec<usize>,
    pending: usize,
    fetching: bool,
}

/// A shard task at a node: the request it belongs to, the CPU time it still needs, and
/// when it reached the node and got a thread.
struct Task {
    request: usize,
    remaining: f64,
    queued_us: u64,
    started_us: u64,
}

/// The CPU percent of `busy` core-microseconds in a second on `cores` cores.
fn percent(busy: f64, cores: f64) -> u8 {
    (busy / (cores * 1e6) * 100.0).round().min(100.0) as u8
}

/// One node: its active tasks sharing its cores, its queue, its busy time, and the CPU it
/// reports.
struct Node {
    active: Vec<Task>,
    /// Connections being opened: their CPU time left, sharing the cores with the active
    /// tasks but not the pool's threads (a [`Task`] whose request waits for it).
    opening: Vec<Task>,
    queue: VecDeque<Task>,
    /// When the active tasks' progress was last brought up to date.
    updated_us: u64,
    generation: u64,
    /// Busy core-microseconds in each second.
    busy: Vec<f64>,
    /// Busy core-microseconds in all, and their count at the last refresh of the reported
    /// CPU ([`CpuReport::EverySecond`]).
    busy_total: f64,
    refreshed: f64,
    /// The CPU it reports, in percent.
    reported: u8,
    /// Busy core-microseconds in all, and when, at the last poll ([`CpuReport::SincePoll`]).
    polled: (f64, u64),
    /// The time its tasks waited for a thread, in all (µs), added when a task gets one:
    /// what a node's `total_wait_time_in_nanos` counts.
    waited_us: u64,
    /// The time its tasks ran, in all (µs), added when a task is done: what its
    /// `query_time_in_millis` and `fetch_time_in_millis` count.
    ran_us: u64,
}

impl Node {
    fn new(seconds: usize) -> Node {
        Node {
            active: Vec::new(),
            opening: Vec::new(),
            queue: VecDeque::new(),
            updated_us: 0,
            generation: 0,
            busy: vec![0.0; seconds + 2],
            busy_total: 0.0,
            refreshed: 0.0,
            reported: 0,
            polled: (0.0, 0),
            waited_us: 0,
            ran_us: 0,
        }
    }

    /// Brings the active tasks' progress up to `now`: each runs at `min(1, cores /
    /// active)` of a core.
    fn advance(&mut self, now: u64, cores: f64) {
        let n = (self.active.len() + self.opening.len()) as f64;
        if n > 0.0 && now > self.updated_us {
            let rate = (cores / n).min(1.0);
            let elapsed = (now - self.updated_us) as f64;
            for task in self.active.iter_mut().chain(&mut self.opening) {
                task.remaining -= elapsed * rate;
            }
            // Busy cores, per second.
            let busy = n.min(cores);
            self.busy_total += (now - self.updated_us) as f64 * busy;
            let mut at = self.updated_us;
            while at < now {
                let second = (at / 1_000_000) as usize;
                let until = ((second as u64 + 1) * 1_000_000).min(now);
                if let Some(slot) = self.busy.get_mut(second) {
                    *slot += (until - at) as f64 * busy;
                }
                at = until;
            }
        }
        self.updated_us = now;
    }

    /// When the next active task is done, for a new generation.
    fn next_done(&mut self, now: u64, cores: f64) -> Option<(u64, u64)> {
        self.generation += 1;
        let n = (self.active.len() + self.opening.len()) as f64;
        let least = self
            .active
            .iter()
            .chain(&self.opening)
            .map(|task| task.remaining)
            .fold(f64::INFINITY, f64::min);
        if !least.is_finite() {
            return None;
        }
        let rate = (cores / n).min(1.0);
        let wait = (least.max(0.0) / rate).ceil() as u64;
        Some((now + wait.max(1), self.generation))
    }

    /// A task reaches the node at `now`: it gets a thread if one is free, else queues.
    /// The node's next completion, when the task started.
    fn take(&mut self, task: Task, now: u64, cores: f64, threads: usize) -> Option<(u64, u64)> {
        self.advance(now, cores);
        if self.active.len() < threads {
            self.active.push(task);
            self.next_done(now, cores)
        } else {
            self.queue.push_back(task);
            None
        }
    }

    /// A connection starts opening at `now` for `request`, which waits for it. The node's
    /// next completion.
    fn open(&mut self, request: usize, cpu_us: f64, now: u64, cores: f64) -> Option<(u64, u64)> {
        self.advance(now, cores);
        self.opening.push(Task {
            request,
            remaining: cpu_us.max(1.0),
            queued_us: now,
            started_us: now,
        });
        self.next_done(now, cores)
    }

    /// The CPU a stats request at `now` reads, in percent, as `report` says the node
    /// reports it.
    fn cpu(&mut self, now: u64, cores: f64, report: CpuReport) -> u8 {
        if report == CpuReport::SincePoll {
            self.advance(now, cores);
            let (busy, at) = self.polled;
            self.polled = (self.busy_total, now);
            let elapsed = now.saturating_sub(at).max(1) as f64;
            return percent((self.busy_total - busy) * 1e6 / elapsed, cores);
        }
        if report == CpuReport::SecondBeforeLast {
            self.advance(now, cores);
            let second = (now / 1_000_000) as usize;
            if second >= 2 {
                self.reported = percent(self.busy[second - 2], cores);
            }
        }
        self.reported
    }

    /// Refreshes the reported CPU at `now` over the second before
    /// ([`CpuReport::EverySecond`]).
    fn refresh(&mut self, now: u64, cores: f64) {
        self.advance(now, cores);
        self.reported = percent(self.busy_total - self.refreshed, cores);
        self.refreshed = self.busy_total;
    }
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
    /// Admitted requests: arrival time (s) and latency (µs).
    pub latencies: Vec<(f64, u64)>,
    /// Rejected requests' arrival times (s).
    pub rejections: Vec<f64>,
    /// Requests that arrived.
    pub arrived: u64,
    /// The measured length, in seconds.
    pub seconds: f64,
    /// The reported busiest-node CPU at each of front end 0's polls.
    pub cpu: Vec<u8>,
    /// Each front end's counts.
    pub front_ends: Vec<FrontEnd>,
    /// Of the bursts: requests in them, and how many were rejected.
    pub burst: (u64, u64),
    /// Every poll of every front end, warm-up included: what the law saw and held.
    pub polls: Vec<Polled>,
    /// Each front end's most searches in flight in each [`SLOT_US`] from the start,
    /// warm-up included.
    pub in_flight: Vec<Vec<u32>>,
    /// When each front end's flood bound was first seen engaged by an arrival, in seconds
    /// from the start (`None`: never).
    pub flood_from: Vec<Option<f64>>,
}

/// The span of [`Run::in_flight`]'s slots, in µs.
pub const SLOT_US: u64 = 50_000;

/// One front end's poll, as the node's traces record one (`../shared/traces/`): what it
/// read and what its law held right after.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Polled {
    /// When, in seconds from the start.
    pub t: f64,
    /// Which front end.
    pub front_end: usize,
    /// The busiest node's CPU it read.
    pub cpu: u8,
    /// The most loaded node's search pool it read (active, queued), if reported.
    pub pool: Option<(u32, u32)>,
    /// Whether the web class is armed.
    pub armed: bool,
    /// The in-flight cap.
    pub cap: f64,
    /// Searches in flight.
    pub in_flight: u32,
    /// Whether the flood bound is engaged.
    pub flooding: bool,
    /// The refused share the law computed, in percent.
    pub refused_percent: u8,
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

    /// Admitted requests per second.
    #[must_use]
    pub fn served(&self) -> f64 {
        self.latencies.len() as f64 / self.seconds
    }

    /// The share of arrivals rejected.
    #[must_use]
    pub fn shed(&self) -> f64 {
        self.rejections.len() as f64 / self.arrived.max(1) as f64
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

    /// Latencies (µs) of the requests that arrived in `[from, until)` seconds, sorted.
    #[must_use]
    pub fn between(&self, from: f64, until: f64) -> Vec<u64> {
        let mut latencies: Vec<u64> = self
            .latencies
            .iter()
            .filter(|(at, _)| (from..until).contains(at))
            .map(|(_, l)| *l)
            .collect();
        latencies.sort_unstable();
        latencies
    }

    /// Requests rejected among those that arrived in `[from, until)` seconds.
    #[must_use]
    pub fn rejected_between(&self, from: f64, until: f64) -> usize {
        self.rejections
            .iter()
            .filter(|at| (from..until).contains(*at))
            .count()
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
    /// Over how many seconds a burst's requests arrive, evenly (0: all at once, as a client
    /// that opens its connections first and then sends every request sends them; a
    /// generator's workers or `xargs -P` spread them over hundreds of milliseconds).
    pub burst_spread: f64,
    /// The share of polls that report the busiest node's search pool (the fleet law's
    /// signal): 1 always, 0 never (a proxy that filters it).
    pub pool: f64,
    /// Whether each sample says that the CPU is the front end's own, over the model's
    /// cores ([`CpuSample::with_own_cores`]): with one front end and no pool, a service
    /// limited by its own CPU, whose requests in flight are the node's tasks.
    pub own_cores: bool,
    /// What the node and the front ends do beside the law.
    pub facts: NodeFacts,
}

impl Scenario {
    /// `policy` on `model` with `fleet`, 40 s of which 10 s warm-up, no bursts, the pool in
    /// every poll.
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
            burst_spread: 0.0,
            pool: 1.0,
            own_cores: false,
            facts: NodeFacts::MEASURED,
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

#[allow(clippy::too_many_lines)] // one event loop, read top to bottom
async fn run(scenario: &Scenario, rate: impl Fn(f64) -> f64) -> Run {
    let Scenario {
        model,
        policy,
        fleet,
        seconds,
        warmup,
        seed,
        bursts,
        burst_spread,
        pool,
        own_cores,
        facts,
    } = scenario;
    let (model, seconds, warmup) = (*model, *seconds, *warmup);
    let cores = f64::from(model.cores);
    let n = fleet.len();
    let config = policy.config();
    let law = match policy {
        Policy::Design(law) => *law,
        _ => Law::DEFAULT,
    };
    let controls: Vec<LoadControl> = (0..n)
        .map(|_| LoadControl::from_config_with_law(&config, law))
        .collect();
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
            if i == 0 && std::env::var_os("PHASE0").is_some() {
                0
            } else {
                rng.next_u64() % 1_000_000
            }
        })
        .collect();
    let clocks: Vec<FrontEndClock> = offsets
        .iter()
        .map(|&offset| FrontEndClock::new(offset))
        .collect();
    let end_us = (seconds * 1e6) as u64;
    let mut events: BinaryHeap<Reverse<(u64, u64, Event)>> = BinaryHeap::new();
    let mut sequence = 0u64;
    let mut push = |events: &mut BinaryHeap<_>, at: u64, event: Event| {
        sequence += 1;
        events.push(Reverse((at, sequence, event)));
    };
    push(&mut events, 0, Event::Arrival);
    // Whether each front end's monitor started.
    let mut started = vec![false; n];
    if !facts.poll_at_first_request {
        for (front_end, phase) in phases.iter().enumerate() {
            // The first poll in the second after the front end joins.
            let join = (fleet.joins[front_end] * 1e6) as u64;
            let first = (join / 1_000_000 + 1) * 1_000_000 + phase;
            push(&mut events, first, Event::Poll { front_end });
            started[front_end] = true;
        }
    }
    for at in &bursts.1 {
        if *burst_spread > 0.0 {
            for k in 0..bursts.0 {
                let offset = burst_spread * k as f64 / bursts.0 as f64;
                push(&mut events, ((at + offset) * 1e6) as u64, Event::BurstOne);
            }
        } else {
            push(&mut events, (at * 1e6) as u64, Event::Burst);
        }
    }
    let mut nodes: Vec<Node> = (0..model.nodes)
        .map(|_| Node::new(seconds as usize))
        .collect();
    if facts.cpu == CpuReport::EverySecond {
        for node in 0..model.nodes {
            push(
                &mut events,
                1 + rng.next_u64() % 1_000_000,
                Event::Refresh { node },
            );
        }
    }
    let mut requests: Vec<Option<Request<'_>>> = Vec::new();
    // Each front end's connections to the cluster in use, and the searches waiting for one.
    let connections = facts.connections.map(|per_node| per_node * model.nodes);
    let mut connected = vec![0usize; n];
    // The connections each front end opened so far (kept open).
    let mut opened = vec![0usize; n];
    let mut waiting: Vec<VecDeque<usize>> = vec![VecDeque::new(); n];
    let mut free: Vec<usize> = Vec::new();
    let mut shards = Vec::new();
    // Each front end keeps the nodes' counters from one poll to the next, as a source does.
    let trackers: Vec<PoolTracker> = (0..n).map(|_| PoolTracker::new()).collect();
    let node_ids: Vec<String> = (0..model.nodes).map(|i| format!("node-{i}")).collect();
    let trace = std::env::var_os("LOAD_SIM_TRACE").is_some();
    let mut run = Run {
        seconds: seconds - warmup,
        front_ends: vec![FrontEnd::default(); n],
        in_flight: vec![vec![0; (end_us / SLOT_US) as usize + 1]; n],
        flood_from: vec![None; n],
        ..Run::default()
    };
    // Each front end's searches in flight: admitted, not yet answered.
    let mut alive = vec![0u32; n];
    while let Some(Reverse((now, _, event))) = events.pop() {
        if now > end_us {
            break;
        }
        let t = now as f64 / 1e6;
        for (clock, offset) in clocks.iter().zip(&offsets) {
            clock.set(now + offset);
        }
        if policy.is_peer() && now > advanced_us {
            tokio::time::advance(Duration::from_micros(now - advanced_us)).await;
            advanced_us = now;
        }
        let measured = t >= warmup;
        let arrivals = match event {
            Event::Arrival => {
                let r = rate(t);
                if r > 0.0 {
                    let next = now + rng.exp(1e6 / r).max(1.0) as u64;
                    push(&mut events, next, Event::Arrival);
                    vec![(fleet.pick(t, rng.unit()), false)]
                } else {
                    // A quiet spell: look again in 10 ms.
                    push(&mut events, now + 10_000, Event::Arrival);
                    Vec::new()
                }
            }
            Event::Burst => vec![(0, true); bursts.0 as usize],
            Event::BurstOne => vec![(0, true)],
            _ => Vec::new(),
        };
        for (front_end, in_burst) in arrivals {
            if measured {
                run.arrived += 1;
                run.front_ends[front_end].arrived += 1;
            }
            if in_burst {
                run.burst.0 += 1;
            }
            if run.flood_from[front_end].is_none()
                && peers[front_end].is_none()
                && controls[front_end].admission().flooding
            {
                run.flood_from[front_end] = Some(t);
            }
            if !started[front_end] {
                // The lazy start: the monitor starts with the first request.
                started[front_end] = true;
                push(
                    &mut events,
                    now + POLL_LATENCY_US,
                    Event::Poll { front_end },
                );
            }
            let held = match &peers[front_end] {
                Some(limiter) => limiter.try_acquire().await.map(Held::Token),
                None => match controls[front_end].admit("/search?q=x", &clocks[front_end]) {
                    Admission::Admitted(permit) => Some(Held::Permit(permit)),
                    Admission::Rejected(_) => None,
                },
            };
            let Some(held) = held else {
                if measured {
                    run.rejections.push(t);
                }
                if in_burst {
                    run.burst.1 += 1;
                }
                continue;
            };
            if measured {
                run.front_ends[front_end].admitted += 1;
            }
            alive[front_end] += 1;
            if let Some(slot) = run.in_flight[front_end].get_mut((now / SLOT_US) as usize) {
                *slot = (*slot).max(alive[front_end]);
            }
            model.search(&mut rng, &mut shards);
            let request = Request {
                arrived_us: now,
                front_end,
                held,
                shards: shards.clone(),
                nodes: Vec::new(),
                pending: shards.len(),
                fetching: false,
            };
            let slot = if let Some(slot) = free.pop() {
                requests[slot] = Some(request);
                slot
            } else {
                requests.push(Some(request));
                requests.len() - 1
            };
            push(
                &mut events,
                now + model.overhead_us / 2,
                Event::Dispatch { request: slot },
            );
        }
        match event {
            Event::Dispatch { request } => {
                let front_end = requests[request].as_ref().map_or(0, |r| r.front_end);
                if connections.is_some_and(|most| connected[front_end] >= most) {
                    waiting[front_end].push_back(request);
                } else {
                    connected[front_end] += 1;
                    // Shards on distinct nodes, from a random first one.
                    let first = (rng.next_u64() % model.nodes as u64) as usize;
                    if let Some(r) = requests[request].as_mut() {
                        r.nodes = (0..r.shards.len())
                            .map(|k| (first + k) % model.nodes)
                            .collect();
                    }
                    if facts.connect_us > 0.0 && connected[front_end] > opened[front_end] {
                        // A connection to open first, at the coordinating node.
                        opened[front_end] += 1;
                        if let Some((at, generation)) =
                            nodes[first].open(request, facts.connect_us, now, cores)
                        {
                            push(
                                &mut events,
                                at,
                                Event::NodeDone {
                                    node: first,
                                    generation,
                                },
                            );
                        }
                    } else {
                        for (node, at, generation) in
                            send(&mut nodes, &requests, request, now, model, facts)
                        {
                            push(&mut events, at, Event::NodeDone { node, generation });
                        }
                    }
                }
            }
            Event::NodeDone { node, generation } => {
                let state = &mut nodes[node];
                if state.generation == generation {
                    state.advance(now, cores);
                    let mut finished = Vec::new();
                    let mut ran = 0;
                    state.active.retain(|task| {
                        if task.remaining <= 0.5 {
                            finished.push(task.request);
                            ran += now - task.started_us;
                            false
                        } else {
                            true
                        }
                    });
                    state.ran_us += ran;
                    let mut connected_now = Vec::new();
                    state.opening.retain(|task| {
                        if task.remaining <= 0.5 {
                            connected_now.push(task.request);
                            false
                        } else {
                            true
                        }
                    });
                    while state.active.len() < model.threads {
                        match state.queue.pop_front() {
                            Some(mut task) => {
                                state.waited_us += now - task.queued_us;
                                task.started_us = now;
                                state.active.push(task);
                            }
                            None => break,
                        }
                    }
                    if let Some((at, generation)) = state.next_done(now, cores) {
                        push(&mut events, at, Event::NodeDone { node, generation });
                    }
                    for request in connected_now {
                        for (node, at, generation) in
                            send(&mut nodes, &requests, request, now, model, facts)
                        {
                            push(&mut events, at, Event::NodeDone { node, generation });
                        }
                    }
                    for request in finished {
                        let Some(r) = requests[request].as_mut() else {
                            continue;
                        };
                        r.pending -= 1;
                        if r.pending > 0 {
                            continue;
                        }
                        if !r.fetching && facts.fetch_share > 0.0 {
                            // Every shard's query is done: the fetch tasks queue.
                            r.fetching = true;
                            r.pending = r.shards.len();
                            for (node, at, generation) in
                                send(&mut nodes, &requests, request, now, model, facts)
                            {
                                push(&mut events, at, Event::NodeDone { node, generation });
                            }
                            continue;
                        }
                        // Answered: its connection serves the next search waiting for one.
                        let front_end = r.front_end;
                        push(
                            &mut events,
                            now + model.overhead_us / 2,
                            Event::Answer { request },
                        );
                        connected[front_end] -= 1;
                        if let Some(next) = waiting[front_end].pop_front() {
                            push(&mut events, now, Event::Dispatch { request: next });
                        }
                    }
                }
            }
            Event::Answer { request } => {
                let Some(done) = requests[request].take() else {
                    continue;
                };
                free.push(request);
                alive[done.front_end] -= 1;
                let arrived = done.arrived_us as f64 / 1e6;
                if arrived >= warmup {
                    run.latencies.push((arrived, now - done.arrived_us));
                }
                // The answer is complete: counted out.
                match done.held {
                    Held::Permit(permit) => drop(permit),
                    Held::Token(token) => {
                        if let Some(limiter) = &peers[done.front_end] {
                            limiter.release(token, Some(Outcome::Success)).await;
                            // The limiter may shrink in a task of its own: let it run.
                            tokio::task::yield_now().await;
                        }
                    }
                }
            }
            Event::Poll { front_end } => {
                // Sent, as the monitor says it is (the model answers it at once).
                sinks[front_end].on_poll_sent(clocks[front_end].now());
                // Every node reports its CPU as `facts.cpu` says; the poll keeps the busiest.
                // The most loaded search pool (running and waiting tasks per thread) is read
                // at this instant.
                let mut busiest = 0u8;
                let mut loaded: Option<SearchPool> = None;
                let tracker = &trackers[front_end];
                tracker.start_poll();
                for (index, node) in nodes.iter_mut().enumerate() {
                    busiest = busiest.max(node.cpu(now, cores, facts.cpu));
                    let here = SearchPool::new(
                        u32::try_from(model.threads).unwrap_or(u32::MAX),
                        u32::try_from(node.active.len()).unwrap_or(u32::MAX),
                        u32::try_from(node.queue.len()).unwrap_or(u32::MAX),
                    );
                    let counters =
                        PoolCounters::new(now / 1_000, node.ran_us / 1_000, node.waited_us * 1_000);
                    let here = tracker.observe(node_ids[index].as_bytes(), here, counters);
                    if loaded.is_none_or(|l| here.busier_than(&l)) {
                        loaded = Some(here);
                    }
                }
                let mut sample = CpuSample::local(CpuPercent::new(busiest));
                let reported = *pool >= 1.0 || (*pool > 0.0 && rng.unit() <= *pool);
                if let (true, Some(loaded)) = (reported, loaded) {
                    sample = sample.with_search_pool(loaded);
                }
                if *own_cores {
                    sample = sample.with_own_cores(model.cores);
                }
                sinks[front_end].on_sample(clocks[front_end].now(), &sample);
                let a = controls[front_end].admission();
                let polled = Polled {
                    t,
                    front_end,
                    cpu: busiest,
                    pool: sample.search_pool.map(|p| (p.active, p.queue)),
                    armed: controls[front_end].is_armed(load_core::Class::Web),
                    cap: f64::from(a.cap_hundredths) / 100.0,
                    in_flight: a.in_flight,
                    flooding: a.flooding,
                    refused_percent: a.refused_percent,
                };
                if trace {
                    eprintln!(
                        "t {t:6.2} fe {front_end} cpu {busiest:3} pool {:?} armed {} cap {:6.2} in {:3} refused {:3}% flood {}",
                        polled.pool,
                        polled.armed,
                        polled.cap,
                        polled.in_flight,
                        polled.refused_percent,
                        polled.flooding
                    );
                }
                run.polls.push(polled);
                if front_end == 0 {
                    run.cpu.push(busiest);
                }
                push(&mut events, now + 1_000_000, Event::Poll { front_end });
            }
            Event::Refresh { node } => {
                nodes[node].refresh(now, cores);
                push(&mut events, now + 1_000_000, Event::Refresh { node });
            }
            Event::Arrival | Event::Burst | Event::BurstOne => {}
        }
    }
    // Requests still in the cluster keep their permits until here.
    drop(requests);
    run
}

/// Sends `request`'s tasks of its current phase to their nodes at `now`: the nodes whose
/// next completion changed, with when and its generation.
fn send(
    nodes: &mut [Node],
    requests: &[Option<Request<'_>>],
    request: usize,
    now: u64,
    model: Model,
    facts: &NodeFacts,
) -> Vec<(usize, u64, u64)> {
    let Some(r) = requests[request].as_ref() else {
        return Vec::new();
    };
    let share = if facts.fetch_share <= 0.0 {
        1.0
    } else if r.fetching {
        facts.fetch_share
    } else {
        1.0 - facts.fetch_share
    };
    let mut done = Vec::new();
    for (&index, &work) in r.nodes.iter().zip(&r.shards) {
        let task = Task {
            request,
            remaining: (work * share).max(1.0),
            queued_us: now,
            started_us: now,
        };
        if let Some((at, generation)) =
            nodes[index].take(task, now, f64::from(model.cores), model.threads)
        {
            done.push((index, at, generation));
        }
    }
    done
}

/// A scenario's runs at several factors of `1x`, steady, for one seed.
#[must_use]
pub fn steady(scenario: &Scenario, factors: &[f64]) -> Vec<(f64, Run)> {
    factors
        .iter()
        .map(|&factor| {
            let scenario = Scenario {
                seed: scenario.seed.wrapping_mul(1_000) + (factor * 100.0) as u64,
                ..scenario.clone()
            };
            let one_x = scenario.model.one_x();
            (factor, simulate(&scenario, |_| factor * one_x))
        })
        .collect()
}

/// The factors of `1x` a summary runs.
pub const FACTORS: [f64; 9] = [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0];
/// The overload factors the tail goals hold at.
pub const OVERLOAD: [f64; 3] = [2.0, 3.0, 4.0];
/// The factors the goodput goal holds at.
pub const SATURATED: [f64; 5] = [1.25, 1.5, 2.0, 3.0, 4.0];

/// The goals' figures for one seed's runs.
#[derive(Clone, Debug, Default)]
pub struct Figures {
    /// The worst admitted p99 at 2x, 3x and 4x over the p99 at 0.5x.
    pub p99: f64,
    /// The worst p99.9 at 2x, 3x and 4x over the p99 at 0.5x.
    pub p999: f64,
    /// The least goodput at 1.25x to 4x over the run's best (answers within 10 times the
    /// 0.5x p50).
    pub goodput: f64,
    /// The most shed at 0.25x, 0.5x and 0.75x.
    pub shed_light: f64,
    /// Shed at 1x beyond the share by which the load exceeds the best served rate.
    pub shed_1x_excess: f64,
    /// The least Jain's index at 2x, 3x and 4x.
    pub jain: f64,
}

impl Figures {
    /// The worse of two seeds' figures, goal by goal.
    #[must_use]
    pub fn worst(self, other: &Figures) -> Figures {
        Figures {
            p99: self.p99.max(other.p99),
            p999: self.p999.max(other.p999),
            goodput: self.goodput.min(other.goodput),
            shed_light: self.shed_light.max(other.shed_light),
            shed_1x_excess: self.shed_1x_excess.max(other.shed_1x_excess),
            jain: self.jain.min(other.jain),
        }
    }

    /// The best possible figures: the start of a worst-of fold.
    #[must_use]
    pub fn best() -> Figures {
        Figures {
            p99: 0.0,
            p999: 0.0,
            goodput: f64::INFINITY,
            shed_light: 0.0,
            shed_1x_excess: 0.0,
            jain: f64::INFINITY,
        }
    }
}

/// Runs `scenario` at every factor of [`FACTORS`] with its seed and sums the goals up.
#[must_use]
pub fn figures(scenario: &Scenario) -> Figures {
    let runs = steady(scenario, &FACTORS);
    let at = |factor: f64| &runs.iter().find(|(f, _)| *f == factor).expect("run").1;
    let light_p99 = at(0.5).percentile(0.99);
    let slo = 10.0 * at(0.5).percentile(0.50);
    let best = runs
        .iter()
        .map(|(_, run)| run.goodput(slo))
        .fold(0.0, f64::max);
    let best_served = runs.iter().map(|(_, run)| run.served()).fold(0.0, f64::max);
    if std::env::var_os("LOAD_SIM_VERBOSE").is_some() {
        for (factor, run) in &runs {
            eprintln!(
                "{} {:?} {} seed {} {factor}x: p50 {:.1} ms, p99 {:.1} ms, p99.9 {:.1} ms, \
                 goodput {:.0}/s, shed {:.1} %, Jain {:.3}, cpu {:?}",
                scenario.model.name,
                scenario.policy,
                scenario.fleet.describe(),
                scenario.seed,
                run.percentile(0.5) / 1e3,
                run.percentile(0.99) / 1e3,
                run.percentile(0.999) / 1e3,
                run.goodput(slo),
                run.shed() * 100.0,
                run.fairness(),
                &run.cpu[run.cpu.len().saturating_sub(6)..]
            );
        }
    }
    let offered_1x = scenario.model.one_x();
    Figures {
        p99: OVERLOAD
            .iter()
            .map(|f| at(*f).percentile(0.99) / light_p99)
            .fold(0.0, f64::max),
        p999: OVERLOAD
            .iter()
            .map(|f| at(*f).percentile(0.999) / light_p99)
            .fold(0.0, f64::max),
        goodput: SATURATED
            .iter()
            .map(|f| at(*f).goodput(slo) / best)
            .fold(f64::INFINITY, f64::min),
        shed_light: [0.25, 0.5, 0.75]
            .iter()
            .map(|f| at(*f).shed())
            .fold(0.0, f64::max),
        shed_1x_excess: (at(1.0).shed() - (1.0 - best_served / offered_1x).max(0.0)).max(0.0),
        jain: OVERLOAD
            .iter()
            .map(|f| at(*f).fairness())
            .fold(f64::INFINITY, f64::min),
    }
}

/// What a step does, for one seed: a run at 0.5x that steps to 3x at 20 s and back to
/// 0.5x at 40 s.
#[derive(Clone, Debug, Default)]
pub struct Step {
    /// Goodput in the second from 1 s after the step up, over the 3x goodput of 30-40 s.
    pub goodput_after_1s: f64,
    /// Seconds after the step up from which on the admitted p99 until the step down stays
    /// within twice the 0.5x p99 (of 5-20 s).
    pub tail_back: f64,
    /// Requests shed among those that arrived from 2 s after the step down.
    pub shed_after_down: usize,
}

/// Runs the step for `scenario` with its seed.
#[must_use]
pub fn step(scenario: &Scenario) -> Step {
    let (up, down) = (20.0, 40.0);
    let scenario = Scenario {
        seconds: 50.0,
        warmup: 5.0,
        seed: scenario.seed.wrapping_mul(1_000) + 99,
        ..scenario.clone()
    };
    let one_x = scenario.model.one_x();
    let run = simulate(&scenario, |t| {
        (if (up..down).contains(&t) { 3.0 } else { 0.5 }) * one_x
    });
    let light = run.between(5.0, up);
    let light_p99 = percentile(&light, 0.99);
    let slo = 10.0 * percentile(&light, 0.5);
    let good = |from: f64, until: f64| {
        run.between(from, until)
            .iter()
            .filter(|l| (**l as f64) <= slo)
            .count() as f64
            / (until - from)
    };
    // The first whole second from which on the admitted p99 until the step down stays
    // within twice the light one.
    let tail_back = (0..19)
        .find(|d| percentile(&run.between(up + f64::from(*d), down), 0.99) <= 2.0 * light_p99)
        .map_or(20.0, f64::from);
    Step {
        goodput_after_1s: good(up + 1.0, up + 2.0) / good(30.0, down).max(1e-9),
        tail_back,
        shed_after_down: run.rejected_between(down + 2.0, 50.0),
    }
}

/// One scenario's worst figures over its seeds, as a row of the results.
#[derive(Clone, Debug)]
pub struct Row {
    /// The cluster's name.
    pub model: &'static str,
    /// The fleet, described.
    pub fleet: String,
    /// The worst of every seed's figures.
    pub figures: Figures,
    /// The least goodput in the second from 1 s after a step to 3x, over the 3x one.
    pub step_goodput: f64,
    /// The most seconds after that step until the tail stayed within twice light load's.
    pub step_tail: f64,
    /// The most requests shed from 2 s after the step back to 0.5x.
    pub step_down: usize,
}

impl Row {
    /// The header of a table of rows.
    pub const HEADER: &'static str = "| cluster | front ends | p99 / 0.5x p99 (2x-4x) | p99.9 / 0.5x p99 | \
goodput / best (1.25x-4x) | shed at 0.25x-0.75x | shed at 1x beyond the excess | Jain (2x-4x) | \
goodput 1 s after 0.5x -> 3x | tail back (s) | shed 2 s after 3x -> 0.5x |\n\
|---|---|---|---|---|---|---|---|---|---|---|";

    /// The row in Markdown.
    #[must_use]
    pub fn markdown(&self) -> String {
        let f = &self.figures;
        format!(
            "| {} | {} | {:.2} | {:.2} | {:.2} | {:.2} % | {:.1} pts | {:.3} | {:.2} | {} | {} |",
            self.model,
            self.fleet,
            f.p99,
            f.p999,
            f.goodput,
            f.shed_light * 100.0,
            f.shed_1x_excess * 100.0,
            f.jain,
            self.step_goodput,
            self.step_tail,
            self.step_down
        )
    }
}

/// Runs `scenario` with seeds `1..=seeds`: the steady factors and the step, the worst of
/// each figure.
#[must_use]
pub fn row(scenario: &Scenario, seeds: u64) -> Row {
    let mut figures_ = Figures::best();
    let (mut step_goodput, mut step_tail, mut step_down) = (f64::INFINITY, 0.0f64, 0);
    for seed in 1..=seeds {
        let scenario = Scenario {
            seed,
            ..scenario.clone()
        };
        figures_ = figures_.worst(&figures(&scenario));
        let step = step(&scenario);
        step_goodput = step_goodput.min(step.goodput_after_1s);
        step_tail = step_tail.max(step.tail_back);
        step_down = step_down.max(step.shed_after_down);
    }
    Row {
        model: scenario.model.name,
        fleet: scenario.fleet.describe(),
        figures: figures_,
        step_goodput,
        step_tail,
        step_down,
    }
}
