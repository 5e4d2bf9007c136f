//! Against a real OpenSearch cluster of 3 nodes on 127.0.0.1, started by
//! `tests/opensearch/cluster.sh start`. Every test here is ignored by default (a machine
//! without Java stays green); `.ci/run` starts the cluster and runs them with `--ignored`.
//! Without `LOAD_OPENSEARCH_URL` they fail, they never pass silently.
//!
//! The tests steer the cluster (close nodes, stop it, freeze its JVM), so they take a lock
//! and run one at a time, and each leaves the cluster with all its nodes.
#![allow(clippy::extra_unused_type_parameters)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures::future::Either;
use load_async_std::AsyncStd;
use load_core::node_stats::{NODE_STATS_PATH, parse_node_stats};
use load_core::{Config, CpuPercent, CpuSource, FixedSource, config::NodeUrl};
use load_examples::app::App;
use load_examples::server::{Serve, bind, start_app};
use load_opensearch::{OpenSearchOptions, OpenSearchSource};
use load_runtime::{LoadGuard, Runtime};
use load_smol::Smol;
use load_tests::{Poll, Recorded, eventually, logs};

/// Runs each scenario on both runtimes as an ignored test.
macro_rules! real_cluster_on_both_runtimes {
    ($($name:ident),* $(,)?) => {
        mod on_smol {
            $(#[test]
            #[ignore = "needs a real cluster: tests/opensearch/cluster.sh start; LOAD_OPENSEARCH_URL=$(tests/opensearch/cluster.sh url)"]
            fn $name() {
                let _serial = super::serial();
                ::smol::block_on(super::$name::<::load_smol::Smol>());
            })*
        }
        mod on_async_std {
            $(#[test]
            #[ignore = "needs a real cluster: tests/opensearch/cluster.sh start; LOAD_OPENSEARCH_URL=$(tests/opensearch/cluster.sh url)"]
            fn $name() {
                let _serial = super::serial();
                ::async_std::task::block_on(super::$name::<::load_async_std::AsyncStd>());
            })*
        }
    };
}

fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The running cluster, as `cluster.sh` describes it.
struct Cluster {
    url: String,
    dir: PathBuf,
}

/// Where `cluster.sh` keeps its state: `$LOAD_CLUSTER_DIR`, or `target/opensearch`.
fn state_dir() -> PathBuf {
    std::env::var_os("LOAD_CLUSTER_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/opensearch"),
        PathBuf::from,
    )
}

fn cluster() -> Cluster {
    let cluster = Cluster {
        url: load_tests::opensearch_url().to_owned(),
        dir: state_dir().join("cluster"),
    };
    cluster.wait_for_nodes(3, Duration::from_secs(120));
    cluster
}

impl Cluster {
    fn source(&self, timeout: Duration) -> OpenSearchSource {
        self.source_at(&self.url, timeout)
    }

    /// A source polling the node at `url` (one of [`Cluster::node_url`]).
    fn source_at(&self, url: &str, timeout: Duration) -> OpenSearchSource {
        let url = NodeUrl::parse(url).expect("node url");
        OpenSearchSource::with_options(&url, OpenSearchOptions::new().timeout(timeout))
            .expect("source")
    }

    /// Node `n`'s address (from 1), as the runner wrote them, one a line, to `urls`.
    fn node_url(&self, n: usize) -> String {
        let urls = std::fs::read_to_string(self.dir.join("urls")).expect("the cluster's urls file");
        urls.lines()
            .nth(n - 1)
            .unwrap_or_else(|| panic!("no node {n} in {urls:?}"))
            .to_owned()
    }

    /// `GET path` with a plain blocking client: status and body.
    fn get(&self, path: &str) -> std::io::Result<(u16, Vec<u8>)> {
        self.get_at(&self.url, path)
    }

    /// `GET path` of the node at `url`.
    fn get_at(&self, url: &str, path: &str) -> std::io::Result<(u16, Vec<u8>)> {
        let authority = url.trim_start_matches("http://");
        let answer = load_tests::try_get(authority, path, Duration::from_secs(10))?;
        Ok((answer.status, answer.body))
    }

    fn json(&self, path: &str) -> serde_json::Value {
        let (status, body) = self.get(path).unwrap_or_else(|e| panic!("GET {path}: {e}"));
        assert_eq!(
            status,
            200,
            "GET {path}: {}",
            String::from_utf8_lossy(&body)
        );
        serde_json::from_slice(&body).expect("JSON")
    }

    fn wait_for_nodes(&self, n: u64, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            let nodes = self
                .get("/_cluster/health")
                .ok()
                .filter(|(status, _)| *status == 200)
                .and_then(|(_, body)| serde_json::from_slice::<serde_json::Value>(&body).ok())
                .and_then(|health| health["number_of_nodes"].as_u64());
            if nodes == Some(n) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the cluster at {} did not have {n} nodes within {timeout:?} (has {nodes:?})",
                self.url
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// Carries out a command of the cluster runner (see `Cluster.java`) and waits for it.
    fn command(&self, command: &str) {
        self.send(command);
        self.finish(command);
    }

    /// Hands a command to the cluster runner.
    fn send(&self, command: &str) {
        let _ = std::fs::remove_file(self.dir.join("done").join(command));
        std::fs::write(self.dir.join("control").join(command), b"")
            .unwrap_or_else(|e| panic!("cannot write the {command} command: {e}"));
    }

    /// Waits until the cluster runner has carried out `command`.
    fn finish(&self, command: &str) {
        let done = self.dir.join("done").join(command);
        let deadline = Instant::now() + Duration::from_secs(180);
        while !done.exists() {
            assert!(Instant::now() < deadline, "{command} never finished");
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = std::fs::remove_file(&done);
    }

    fn pid(&self) -> String {
        std::fs::read_to_string(self.dir.join("pid"))
            .expect("the cluster's pid file")
            .trim()
            .to_owned()
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([format!("-{signal}"), self.pid()])
            .status()
            .expect("kill");
        assert!(status.success(), "kill -{signal}");
    }
}

fn node_ids(stats: &serde_json::Value) -> Vec<String> {
    let mut ids: Vec<String> = stats["nodes"]
        .as_object()
        .expect("nodes")
        .keys()
        .cloned()
        .collect();
    ids.sort();
    ids
}

// ---- 1. the source polls it -------------------------------------------------------------

async fn the_source_reads_every_node<R: Runtime + Default>() {
    let cluster = cluster();
    let sample = cluster
        .source(Duration::from_secs(10))
        .sample()
        .await
        .expect("a poll of the real cluster");
    assert_eq!((sample.nodes, sample.failed), (3, 0), "{sample:?}");
    let cpu = sample.cpu.expect("a cluster CPU").get();
    assert!(cpu <= 100);

    let unfiltered = cluster.json("/_nodes/stats/os");
    let filtered = cluster.json(NODE_STATS_PATH);
    assert_eq!(node_ids(&filtered), node_ids(&unfiltered));
    assert_eq!(node_ids(&unfiltered).len(), 3);
    println!("3 nodes answered, 0 failed, busiest node at {cpu} %");

    // And through the guard, as a server uses it.
    let mut config = Config::new();
    config.control.web_threshold = (100 - 1).into();
    config.control.monitor_interval = Duration::from_millis(200);
    let guard =
        LoadGuard::<R, _>::with_source(&config.control, cluster.source(Duration::from_secs(10)));
    let _ = guard.check("/search");
    assert!(eventually::<R>(Duration::from_secs(10), || guard.stats().polls >= 2).await);
    let stats = guard.stats();
    assert_eq!(
        (stats.nodes, stats.failed_nodes, stats.total_failures),
        (3, 0, 0),
        "{stats:?}"
    );
    guard.shutdown().await;
}

// ---- 2. the captured fixtures are this version's responses -----------------------------------

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/opensearch")
}

#[test]
#[ignore = "needs a real cluster: tests/opensearch/cluster.sh start; LOAD_OPENSEARCH_URL=$(tests/opensearch/cluster.sh url)"]
fn the_committed_captures_are_this_versions_responses() {
    let _serial = serial();
    let cluster = cluster();
    let version = cluster.json("/")["version"]["number"]
        .as_str()
        .expect("version")
        .to_owned();
    for (kind, path) in [("filtered", NODE_STATS_PATH), ("full", "/_nodes/stats/os")] {
        let file = fixture_dir().join(format!("os-{version}-real-{kind}.json"));
        let committed = std::fs::read(&file).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; capture it with tests/opensearch/cluster.sh capture tests/fixtures/opensearch",
                file.display()
            )
        });
        let (status, live) = cluster.get(path).expect("GET");
        assert_eq!(status, 200);
        let committed_stats = parse_node_stats(&committed).expect("the committed capture parses");
        let live_stats = parse_node_stats(&live).expect("the live response parses");
        assert_eq!(
            (
                committed_stats.nodes,
                committed_stats.measured,
                committed_stats.total
            ),
            (live_stats.nodes, live_stats.measured, live_stats.total),
            "{kind}"
        );
        // The same shape: the same fields in every node's `os` object.
        let shape = |body: &[u8]| -> Vec<Vec<String>> {
            let value: serde_json::Value = serde_json::from_slice(body).expect("JSON");
            let mut shapes: Vec<Vec<String>> = value["nodes"]
                .as_object()
                .expect("nodes")
                .values()
                .map(|node| {
                    let mut keys: Vec<String> = node["os"]
                        .as_object()
                        .expect("os")
                        .keys()
                        .cloned()
                        .collect();
                    keys.sort();
                    keys
                })
                .collect();
            shapes.sort();
            shapes
        };
        assert_eq!(shape(&committed), shape(&live), "{kind}");
    }
}

// ---- both runtimes at once ------------------------------------------------------------------

/// The scenarios that steer the cluster (real CPU, a node lost, an outage, a frozen JVM) take
/// tens of seconds each and watch what the runtime does with time: they run one guard or
/// server of each runtime at once, so that the cluster is steered once for both.
const RUNTIMES: [&str; 2] = ["smol", "async-std"];

/// What a scenario reads of a guard, whatever its runtime.
trait Watched {
    fn stats(&self) -> load_core::Stats;
    fn status(&self) -> &load_core::ClusterStatus;
    fn cpu(&self) -> Option<CpuPercent>;
    fn check(&self, target: &str) -> load_core::Decision;
}

impl<R: Runtime, S: CpuSource + Send + 'static> Watched for LoadGuard<R, S> {
    fn stats(&self) -> load_core::Stats {
        LoadGuard::stats(self)
    }
    fn status(&self) -> &load_core::ClusterStatus {
        LoadGuard::status(self)
    }
    fn cpu(&self) -> Option<CpuPercent> {
        LoadGuard::cpu(self)
    }
    fn check(&self, target: &str) -> load_core::Decision {
        LoadGuard::check(self, target)
    }
}

/// How long after its start each of `n` conditions first held, checked every 10 ms (in the
/// order given, so a later one may read what an earlier one saw) until all have or
/// `timeout` has passed; `None` for one that never did.
async fn first_each(
    timeout: Duration,
    n: usize,
    mut condition: impl FnMut(usize) -> bool,
) -> Vec<Option<Duration>> {
    let started = Instant::now();
    let mut held = vec![None; n];
    loop {
        for (i, at) in held.iter_mut().enumerate() {
            if at.is_none() && condition(i) {
                *at = Some(started.elapsed());
            }
        }
        if held.iter().all(Option::is_some) || started.elapsed() >= timeout {
            return held;
        }
        load_core::time::Sleep::sleep(&Smol, Duration::from_millis(10)).await;
    }
}

/// Every condition held within `timeout` (see [`first_each`]).
async fn each_within(timeout: Duration, n: usize, condition: impl FnMut(usize) -> bool) -> bool {
    first_each(timeout, n, condition)
        .await
        .iter()
        .all(Option::is_some)
}

// ---- 3. real CPU drives 429 -------------------------------------------------------------------

/// At most 2 busy processes, each ended after at most 20 s by `timeout` even if the test dies.
struct Burners(Vec<Child>);

impl Burners {
    fn start() -> Burners {
        Burners(
            (0..2)
                .map(|_| {
                    Command::new("timeout")
                        .args(["20", "sh", "-c", "while :; do :; done"])
                        .stdout(Stdio::null())
                        .spawn()
                        .expect("a CPU burner")
                })
                .collect(),
        )
    }
}

impl Drop for Burners {
    fn drop(&mut self) {
        for child in &mut self.0 {
            // `timeout` forwards the signal to its child.
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let _ = child.wait();
        }
    }
}

fn status_of(addr: std::net::SocketAddr, target: &str) -> u16 {
    load_tests::raw_get(addr, target).status
}

fn first<F: FnMut() -> bool>(timeout: Duration, mut condition: F) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < timeout {
        if condition() {
            return Some(started.elapsed());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

/// The demo's app on runtime `R`, deciding on the cluster's CPU.
fn serve_on<R: Serve>(cluster: &Cluster, config: &Config) -> load_examples::server::RunningServer {
    let source = cluster.source(Duration::from_secs(10));
    let local: &'static FixedSource = Box::leak(Box::new(FixedSource::new(CpuPercent::new(5))));
    let app = App::<R>::with_sources(config.clone(), Either::Left(source), local);
    start_app(
        app,
        bind("127.0.0.1:0".parse().expect("addr")).expect("bind"),
    )
    .expect("server")
}

#[test]
#[ignore = "needs a real cluster: tests/opensearch/cluster.sh start; LOAD_OPENSEARCH_URL=$(tests/opensearch/cluster.sh url)"]
fn real_cpu_drives_429() {
    let _serial = serial();
    smol::block_on(real_cpu_drives_429_on_both_runtimes());
}

async fn real_cpu_drives_429_on_both_runtimes() {
    let cluster = cluster();
    let mut config = Config::new();
    config.control.web_threshold = 50.into();
    config.control.monitor_interval = Duration::from_secs(1);
    let servers = [
        serve_on::<Smol>(&cluster, &config),
        serve_on::<AsyncStd>(&cluster, &config),
    ];
    let addrs: Vec<_> = servers.iter().map(|server| server.addr()).collect();

    // A quiet machine first (the cluster itself idles far below 50 %): 200s from both for 3 s
    // in a row, so that the first 429 below is the burners' doing.
    let mut quiet_since: Option<Instant> = None;
    let quiet = first(Duration::from_secs(90), || {
        if addrs
            .iter()
            .all(|&addr| status_of(addr, "/search?q=x") == 200)
        {
            quiet_since.get_or_insert_with(Instant::now).elapsed() >= Duration::from_secs(3)
        } else {
            quiet_since = None;
            false
        }
    });
    assert!(
        quiet.is_some(),
        "the cluster never read below 50 % CPU for 3 s"
    );

    let burners = Burners::start();
    let rise = first_each(Duration::from_secs(18), addrs.len(), |i| {
        status_of(addrs[i], "/search?q=x") == 429
    })
    .await;
    let admin: Vec<u16> = addrs.iter().map(|&a| status_of(a, "/admin/")).collect();
    let api: Vec<u16> = addrs
        .iter()
        .map(|&a| status_of(a, "/api/v1/documents?q=x"))
        .collect();
    drop(burners);
    let fall = first_each(Duration::from_secs(30), addrs.len(), |i| {
        status_of(addrs[i], "/search?q=x") == 200
    })
    .await;
    for (i, runtime) in RUNTIMES.iter().enumerate() {
        let rise = rise[i]
            .unwrap_or_else(|| panic!("{runtime}: no 429 while two burners kept both cores busy"));
        assert_eq!(admin[i], 200, "{runtime}: /admin/ is excluded");
        assert_eq!(api[i], 200, "{runtime}: API control is off (threshold 100)");
        let fall = fall[i]
            .unwrap_or_else(|| panic!("{runtime}: still 429 30 s after the burners stopped"));
        println!(
            "{runtime}: real CPU: first 429 {:.1} s after the burners started, first 200 {:.1} s after they stopped (interval 1 s)",
            rise.as_secs_f64(),
            fall.as_secs_f64()
        );
        // The rise: one interval, the node's 1 s OS refresh and its CPU window, one poll. The
        // fall also waits for whatever the cluster itself does right then (after the restart
        // test it may still be settling): observed 1 s to 12 s, bounded by the 30 s above.
        assert!(rise < Duration::from_secs(10), "{runtime}: {rise:?}");
    }
    for server in servers {
        server.stop().expect("clean stop");
    }
}

// ---- 4. a node lost, the whole cluster stopped, started again --------------------------------

#[test]
#[ignore = "needs a real cluster: tests/opensearch/cluster.sh start; LOAD_OPENSEARCH_URL=$(tests/opensearch/cluster.sh url)"]
fn a_lost_node_an_outage_and_a_restart() {
    let _serial = serial();
    smol::block_on(a_lost_node_an_outage_and_a_restart_on_both_runtimes());
}

/// The smol guard polls node 1 and the async-std guard node 2 (node 3 is the one closed), so
/// that each guard's log lines name its own address.
async fn a_lost_node_an_outage_and_a_restart_on_both_runtimes() {
    let cluster = cluster();
    logs::start();
    let mut config = Config::new();
    config.control.web_threshold = 99.into();
    config.control.monitor_interval = Duration::from_millis(300);
    let urls = [cluster.node_url(1), cluster.node_url(2)];
    let timeout = Duration::from_secs(3);
    let on_smol =
        LoadGuard::<Smol, _>::with_source(&config.control, cluster.source_at(&urls[0], timeout));
    let on_async_std = LoadGuard::<AsyncStd, _>::with_source(
        &config.control,
        cluster.source_at(&urls[1], timeout),
    );
    let guards: [&dyn Watched; 2] = [&on_smol, &on_async_std];
    for guard in guards {
        let _ = guard.check("/search");
    }
    assert!(each_within(Duration::from_secs(10), 2, |i| guards[i].stats().nodes == 3).await);

    cluster.command("stop-node-3");
    let polls: Vec<u32> = guards.iter().map(|guard| guard.stats().polls).collect();
    assert!(
        each_within(Duration::from_secs(30), 2, |i| {
            let stats = guards[i].stats();
            stats.polls >= polls[i] + 2 && stats.nodes == 2
        })
        .await,
        "{:?}",
        guards.map(|guard| guard.stats())
    );
    for (guard, runtime) in guards.iter().zip(RUNTIMES) {
        assert_eq!(
            guard.status().failures().consecutive(),
            0,
            "{runtime}: polls kept succeeding"
        );
        println!(
            "{runtime}: one node closed: polls succeed with {} nodes",
            guard.stats().nodes
        );
    }
    cluster.command("start-node-3");
    cluster.wait_for_nodes(3, Duration::from_secs(120));

    logs::start();
    cluster.command("stop-all");
    let stopped = Instant::now();
    assert!(
        each_within(Duration::from_secs(30), 2, |i| guards[i]
            .status()
            .failures()
            .consecutive()
            >= 5)
        .await,
        "{:?}",
        guards.map(|guard| guard.stats())
    );
    let records = logs::records();
    for ((guard, runtime), url) in guards.iter().zip(RUNTIMES).zip(&urls) {
        assert_eq!(
            guard.cpu(),
            CpuPercent::new(0),
            "{runtime}: fail-open reads 0 %"
        );
        assert!(guard.check("/search").is_allowed(), "{runtime}");
        let prefix = format!("Failed to get search engine CPU stats: {url}: ");
        let failures: Vec<&logs::Record> = records
            .iter()
            .filter(|r| r.message.starts_with(&prefix))
            .collect();
        let levels: Vec<log::Level> = failures.iter().map(|r| r.level).collect();
        assert!(levels.len() >= 5, "{runtime}: {failures:#?}");
        assert_eq!(
            &levels[..3],
            [log::Level::Warn; 3],
            "{runtime}: {failures:#?}"
        );
        assert!(
            levels[3..].iter().all(|&l| l == log::Level::Debug),
            "{runtime}: {failures:#?}"
        );
        println!(
            "{runtime}: cluster stopped: {} failed polls in {:.1} s, WARN x3 then DEBUG; first: {}",
            levels.len(),
            stopped.elapsed().as_secs_f64(),
            failures[0].message
        );
    }

    cluster.send("start-all");
    // From the moment each guard's node answers HTTP again to that guard's first success.
    let mut answering: [Option<Instant>; 2] = [None; 2];
    let mut succeeded: [Option<Instant>; 2] = [None; 2];
    let _ = first_each(Duration::from_secs(150), 2, |i| {
        if answering[i].is_none()
            && cluster
                .get_at(&urls[i], NODE_STATS_PATH)
                .is_ok_and(|(status, _)| status == 200)
        {
            answering[i] = Some(Instant::now());
        }
        if answering[i].is_some() && guards[i].status().failures().consecutive() == 0 {
            succeeded[i] = Some(Instant::now());
        }
        succeeded[i].is_some()
    })
    .await;
    for (i, runtime) in RUNTIMES.iter().enumerate() {
        let answered = answering[i]
            .unwrap_or_else(|| panic!("{runtime}: its node {} never answered again", urls[i]));
        let succeeded = succeeded[i].unwrap_or_else(|| {
            panic!(
                "{runtime}: no successful poll 150 s after start-all: {:?}",
                guards[i].stats()
            )
        });
        let recovered = succeeded.duration_since(answered);
        println!(
            "{runtime}: cluster started again: first successful poll {:.2} s after its node answered (interval 0.3 s)",
            recovered.as_secs_f64()
        );
        assert!(
            recovered < config.control.monitor_interval + Duration::from_secs(3),
            "{runtime}: within one interval and a poll: {recovered:?}"
        );
    }
    cluster.finish("start-all");
    cluster.wait_for_nodes(3, Duration::from_secs(120));
    on_smol.shutdown().await;
    on_async_std.shutdown().await;
}

// ---- 5. a frozen cluster ------------------------------------------------------------------

#[test]
#[ignore = "needs a real cluster: tests/opensearch/cluster.sh start; LOAD_OPENSEARCH_URL=$(tests/opensearch/cluster.sh url)"]
fn a_frozen_cluster_ends_each_poll_at_the_timeout_and_recovers() {
    let _serial = serial();
    smol::block_on(a_frozen_cluster_on_both_runtimes());
}

async fn a_frozen_cluster_on_both_runtimes() {
    let cluster = cluster();
    let timeout = Duration::from_secs(2);
    let interval = Duration::from_secs(1);
    let mut config = Config::new();
    config.control.web_threshold = 99.into();
    config.control.monitor_interval = interval;
    let (on_smol, smol_log) = Recorded::new(cluster.source(timeout));
    let (on_async_std, async_std_log) = Recorded::new(cluster.source(timeout));
    let on_smol = LoadGuard::<Smol, _>::with_source(&config.control, on_smol);
    let on_async_std = LoadGuard::<AsyncStd, _>::with_source(&config.control, on_async_std);
    let guards: [&dyn Watched; 2] = [&on_smol, &on_async_std];
    for guard in guards {
        let _ = guard.check("/search");
    }
    assert!(each_within(Duration::from_secs(10), 2, |i| guards[i].stats().polls >= 1).await);

    cluster.signal("STOP");
    let frozen = Instant::now();
    load_core::time::Sleep::sleep(&Smol, Duration::from_secs(15)).await;
    cluster.signal("CONT");
    let thawed = Instant::now();
    let recovered = first_each(Duration::from_secs(20), 2, |i| {
        guards[i].status().failures().consecutive() == 0
    })
    .await;
    on_smol.shutdown().await;
    on_async_std.shutdown().await;

    for (i, (runtime, log)) in RUNTIMES.iter().zip([smol_log, async_std_log]).enumerate() {
        let recovered = recovered[i]
            .unwrap_or_else(|| panic!("{runtime}: no successful poll within 20 s of SIGCONT"));
        let polls = log.polls();
        let during: Vec<&Poll> = polls
            .iter()
            .filter(|poll| poll.started >= frozen && poll.started + poll.took <= thawed)
            .collect();
        assert!(
            during.len() >= 3,
            "{runtime}: polls while frozen: {during:?}"
        );
        for poll in &during {
            assert!(
                !poll.ok,
                "{runtime}: a poll succeeded while the JVM was stopped"
            );
            assert!(
                poll.took >= timeout && poll.took < timeout + Duration::from_millis(500),
                "{runtime}: a poll of a frozen cluster ends at the outer timeout: {:?}",
                poll.took
            );
        }
        assert_eq!(
            log.max_in_flight(),
            1,
            "{runtime}: one poll in flight at most"
        );
        println!(
            "{runtime}: frozen 15 s: {} polls ended at the {timeout:?} timeout; first success {:.2} s after SIGCONT",
            during.len(),
            recovered.as_secs_f64()
        );
        assert!(
            recovered <= interval + timeout + Duration::from_millis(500),
            "{runtime}: recovered {recovered:?} after SIGCONT"
        );
    }
    cluster.wait_for_nodes(3, Duration::from_secs(120));
}

// ---- 6. the secured node: TLS with a custom CA, basic auth ------------------------------

/// The node `cluster.sh` started with the security plugin.
struct Secure {
    url: String,
    ca: PathBuf,
    password: String,
}

fn secure() -> Secure {
    let dir = state_dir().join("secure");
    let read = |name: &str| {
        std::fs::read_to_string(dir.join(name))
            .unwrap_or_else(|e| {
                panic!(
                    "{}: {e}; tests/opensearch/cluster.sh start starts the secured node",
                    dir.join(name).display()
                )
            })
            .trim()
            .to_owned()
    };
    Secure {
        url: read("url"),
        password: read("password"),
        ca: dir.join("certs/ca.pem"),
    }
}

async fn the_secured_node_takes_the_right_credentials_only<R: Runtime + Default>() {
    logs::start();
    let secure = secure();
    let url = NodeUrl::parse(&secure.url).expect("url");
    let options = || {
        OpenSearchOptions::new()
            .timeout(Duration::from_secs(10))
            .ca_certificate(&secure.ca)
    };
    let with = |user: &str, password: &str| {
        OpenSearchSource::with_options(&url, options().credentials(user, password)).expect("source")
    };

    // Right credentials, the CA of the test certificates: a sample of the one node.
    let sample = with("loadcontrol", &secure.password)
        .sample()
        .await
        .expect("right credentials");
    assert_eq!((sample.nodes, sample.failed), (1, 0));

    // The same credentials as the URL's userinfo.
    let userinfo = secure.url.replacen(
        "https://",
        &format!("https://loadcontrol:{}@", secure.password),
        1,
    );
    let mut from_url =
        OpenSearchSource::with_options(&NodeUrl::parse(&userinfo).expect("url"), options())
            .expect("source");
    assert_eq!(from_url.sample().await.expect("userinfo").nodes, 1);

    // A wrong password: an error naming 401.
    let error = with("loadcontrol", "not-the-password")
        .sample()
        .await
        .expect_err("a wrong password");
    assert_eq!(
        error.kind(),
        load_core::source::SourceErrorKind::Status(401),
        "{error}"
    );
    assert!(error.to_string().contains("401"), "{error}");
    let unauthorized = error.to_string();

    // Without the custom CA the certificate is not trusted.
    let error = OpenSearchSource::with_options(
        &url,
        OpenSearchOptions::new()
            .timeout(Duration::from_secs(10))
            .credentials("loadcontrol", &secure.password),
    )
    .expect("source")
    .sample()
    .await
    .expect_err("an untrusted certificate");
    assert_eq!(
        error.kind(),
        load_core::source::SourceErrorKind::Connect,
        "{error}"
    );
    println!(
        "secured node: right credentials 1 node; wrong password: {unauthorized}; no CA: {error}"
    );

    // Polls through a guard, every log level on: the password never reaches a log line,
    // neither as written nor as the header's base64.
    let mut config = Config::new();
    config.control.web_threshold = 99.into();
    config.control.monitor_interval = Duration::from_millis(100);
    let guard =
        LoadGuard::<R, _>::with_source(&config.control, with("loadcontrol", &secure.password));
    let _ = guard.check("/search");
    assert!(eventually::<R>(Duration::from_secs(10), || guard.stats().polls >= 3).await);
    guard.shutdown().await;
    let header = surf::http::auth::BasicAuth::new("loadcontrol", &secure.password)
        .value()
        .to_string();
    let base64 = header.trim_start_matches("Basic ");
    let records = logs::records();
    assert!(!records.is_empty(), "the capture saw no log line at all");
    // surf's HTTP/1 client (async-h1) logs every request it encodes, headers included, at
    // TRACE under its own target: a logger must keep `async_h1` below TRACE (the
    // OpenSearchSource docs say so). Every other line must be clean.
    let (transport, ours): (Vec<&logs::Record>, Vec<&logs::Record>) = records
        .iter()
        .partition(|r| r.target.starts_with("async_h1") && r.level == log::Level::Trace);
    assert!(
        transport.iter().any(|r| r.message.contains(base64)),
        "async-h1 no longer logs the header at TRACE: drop this exception"
    );
    for record in ours {
        assert!(
            !record.message.contains(&secure.password) && !record.message.contains(base64),
            "a credential in a log line: {record:?}"
        );
    }
}

/// `search_engine.http.ssl.certificate_authorities` is trusted besides the system's roots,
/// not instead of them (as the README's key table says). Each case runs in a child process
/// (this test binary again, `child_of_the_extra_ca_test`) whose OpenSSL reads its system
/// bundle from `SSL_CERT_FILE`, so that no other test sees it: with the secured node's CA
/// as the system's bundle and a CA that signed nothing as the extra one, the node is
/// reached; with an empty bundle (the system's certificate directory stays, and holds no
/// test CA) and the same extra CA, its certificate is refused.
#[test]
#[ignore = "needs a real cluster: tests/opensearch/cluster.sh start; LOAD_OPENSEARCH_URL=$(tests/opensearch/cluster.sh url)"]
fn the_extra_ca_is_trusted_besides_the_systems_roots() {
    let _serial = serial();
    let secure = secure();
    let empty = std::env::temp_dir().join(format!("load-no-roots-{}.pem", std::process::id()));
    std::fs::write(&empty, "").expect("an empty roots file");
    let child = |system_roots: &std::path::Path| {
        let out = Command::new(std::env::current_exe().expect("this test binary"))
            .args([
                "--ignored",
                "--exact",
                "child_of_the_extra_ca_test",
                "--nocapture",
            ])
            .env("SSL_CERT_FILE", system_roots)
            .env(
                EXTRA_CA_CHILD,
                PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/tls/unrelated-ca.pem"),
            )
            .output()
            .expect("the child runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success() && text.contains("1 passed"), text)
    };
    let (reached, text) = child(&secure.ca);
    assert!(
        reached,
        "the node's CA as the system's, another as the extra: {text}"
    );
    assert!(text.contains("extra CA child: 1 node"), "{text}");
    let (reached, text) = child(&empty);
    let _ = std::fs::remove_file(&empty);
    assert!(
        !reached,
        "an empty bundle, an extra CA that signed nothing: {text}"
    );
    assert!(
        text.contains("certificate verify failed"),
        "refused for its certificate: {text}"
    );
}

/// The child's flag: the extra CA it trusts.
const EXTRA_CA_CHILD: &str = "LOAD_TEST_EXTRA_CA_CHILD";

/// The child of `the_extra_ca_is_trusted_besides_the_systems_roots`: samples the secured
/// node trusting the extra CA its parent names. Run alone (no parent), it does nothing.
#[test]
#[ignore = "run by the_extra_ca_is_trusted_besides_the_systems_roots in a child process"]
fn child_of_the_extra_ca_test() {
    let Some(extra) = std::env::var_os(EXTRA_CA_CHILD) else {
        return;
    };
    let secure = secure();
    let url = NodeUrl::parse(&secure.url).expect("url");
    let mut source = OpenSearchSource::with_options(
        &url,
        OpenSearchOptions::new()
            .timeout(Duration::from_secs(10))
            .ca_certificate(PathBuf::from(extra))
            .credentials("loadcontrol", &secure.password),
    )
    .expect("source");
    let sample = smol::block_on(source.sample()).unwrap_or_else(|e| panic!("{e}"));
    println!("extra CA child: {} node", sample.nodes);
}

// ---- 6. the demo as Fess: searches and indexing on the cluster ----------------------------

/// The demo with a cluster: the crawler creates its index with the mapping and fills it,
/// `/search` and the API answer with highlighted hits from it; `ClusterClient` also works
/// with the secured node's CA and credentials, and a wrong password is an answer (401).
async fn the_demo_searches_and_indexes_on_the_cluster<R: Runtime + Default>() {
    let cluster = cluster();
    let index = format!(
        "load-demo-test-{}",
        std::any::type_name::<R>()
            .rsplit("::")
            .next()
            .unwrap_or("rt")
            .to_ascii_lowercase()
    );
    // A fresh index each run.
    let client = load_opensearch::ClusterClient::cluster(
        &load_core::config::ClusterUrls::parse(&cluster.url).expect("url"),
        &OpenSearchOptions::new(),
    )
    .expect("client");
    let deleted = client
        .request(load_opensearch::Method::Delete, &format!("/{index}"), None)
        .await
        .expect("delete");
    assert!(matches!(deleted.status, 200 | 404), "{deleted:?}");

    let dir = std::env::temp_dir().join(format!("load-demo-real-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join(format!("{index}.properties"));
    std::fs::write(
        &path,
        format!(
            "search_engine.http.url={}\nweb.load.control=100\nadaptive.load.control=0\n",
            cluster.url
        ),
    )
    .expect("config");
    let corpus = 200;
    let options = load_examples::cli::Options {
        config: load_examples::cli::ConfigFrom::File(path),
        listen: "127.0.0.1:0".parse().expect("addr"),
        demo: load_examples::app::DemoOptions {
            index: index.clone(),
            corpus,
            ..load_examples::app::DemoOptions::default()
        },
        ..load_examples::cli::Options::default()
    };
    let server = load_examples::server::start(&options).expect("server");
    let addr = server.addr();
    let stats = || -> serde_json::Value {
        serde_json::from_str(&load_tests::raw_get(addr, "/admin/stats").text()).expect("JSON")
    };
    let filled = first(Duration::from_secs(60), || {
        stats()["crawler"]["indexed"].as_u64().unwrap_or(0) >= corpus as u64
    });
    assert!(
        filled.is_some(),
        "the crawler did not index the corpus: {}",
        stats()
    );

    // The mapping the demo created, and every document in the index.
    let (status, mapping) = cluster.get(&format!("/{index}/_mapping")).expect("mapping");
    assert_eq!(status, 200);
    let mapping: serde_json::Value = serde_json::from_slice(&mapping).expect("JSON");
    let fields = &mapping[&index]["mappings"]["properties"];
    assert_eq!(fields["title"]["type"], "text", "{mapping}");
    assert_eq!(fields["url"]["type"], "keyword", "{mapping}");
    let counted = first(Duration::from_secs(10), || {
        let (_, body) = cluster.get(&format!("/{index}/_count")).expect("count");
        serde_json::from_slice::<serde_json::Value>(&body).expect("JSON")["count"] == corpus
    });
    assert!(
        counted.is_some(),
        "the index does not hold {corpus} documents"
    );

    // The first document's title finds it, its words highlighted.
    let corpus_docs = load_examples::corpus::Corpus::new(corpus);
    let title = corpus_docs.document(0).title;
    let word = title.split(' ').next().expect("a word").to_owned();
    let query = title.replace(' ', "+");
    let answer = load_tests::raw_get(addr, &format!("/search?q={query}"));
    let page = answer.text();
    assert_eq!(answer.status, 200, "{page}");
    assert!(page.contains("document(s)"), "{page}");
    assert!(page.contains(&format!("<em>{word}</em>")), "{page}");
    let answer = load_tests::raw_get(addr, &format!("/api/v1/documents?q={query}"));
    assert_eq!(answer.status, 200);
    let body: serde_json::Value = serde_json::from_str(&answer.text()).expect("JSON");
    let result = body["response"]["result"].as_array().expect("result");
    assert!(!result.is_empty() && result.len() <= 10, "{body}");
    assert!(
        result.iter().any(|hit| hit["doc_id"] == "0"),
        "document 0 among the hits for {title:?}: {body}"
    );
    server.stop().expect("clean stop");

    // The secured node through the same client type: its CA and credentials; a wrong
    // password is the cluster's answer, 401.
    let secure = secure();
    let urls = load_core::config::ClusterUrls::parse(&secure.url).expect("url");
    let with = |password: &str| {
        load_opensearch::ClusterClient::cluster(
            &urls,
            &OpenSearchOptions::new()
                .ca_certificate(&secure.ca)
                .credentials("loadcontrol", password),
        )
        .expect("client")
    };
    let health = with(&secure.password)
        .request(load_opensearch::Method::Get, "/_cluster/health", None)
        .await
        .expect("an answer");
    assert_eq!(health.status, 200, "{health:?}");
    let head = with(&secure.password)
        .request(load_opensearch::Method::Head, "/", None)
        .await
        .expect("HEAD answers without waiting for a body");
    assert_eq!(head.status, 200);
    let refused = with("not-the-password")
        .request(load_opensearch::Method::Get, "/_cluster/health", None)
        .await
        .expect("an answer");
    assert_eq!(refused.status, 401, "{refused:?}");
    println!(
        "demo on the cluster: {corpus} documents indexed in {:.1} s; secured node: 200, HEAD 200, wrong password {}",
        filled.unwrap_or_default().as_secs_f64(),
        refused.status
    );
}

/// One flood of `/search` at `addr` for `length`: `clients` threads, each sending searches
/// one after another and hanging up when an answer takes longer than a timeout of 10 to
/// 150 ms (the search is then abandoned by the front end, often while the cluster works on
/// it), and four patient clients that wait for every answer. Returns the statuses of every
/// answer that came and how many searches were given up on.
fn flood(addr: std::net::SocketAddr, clients: usize, length: Duration) -> (Vec<u16>, usize) {
    use std::io::{BufReader, Write};
    let words = [
        "load", "control", "search", "cluster", "node", "shed", "quiet", "fleet",
    ];
    let until = Instant::now() + length;
    let client = |n: usize, patient: bool| {
        std::thread::spawn(move || {
            let (mut statuses, mut gave_up) = (Vec::new(), 0);
            let mut i = n;
            while Instant::now() < until {
                i = i.wrapping_mul(31).wrapping_add(7);
                let Ok(stream) = std::net::TcpStream::connect(addr) else {
                    continue;
                };
                let timeout = if patient {
                    Duration::from_secs(30)
                } else {
                    Duration::from_millis(10 + (i % 141) as u64)
                };
                let _ = stream.set_read_timeout(Some(timeout));
                let mut reader = BufReader::new(stream);
                let target = format!(
                    "/search?q={}+{}",
                    words[i % words.len()],
                    words[(i / 8) % words.len()]
                );
                if write!(
                    reader.get_mut(),
                    "GET {target} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
                )
                .is_err()
                {
                    continue;
                }
                match load_tests::Answer::read_from(&mut reader) {
                    Ok(answer) => statuses.push(answer.status),
                    Err(_) => gave_up += 1,
                }
            }
            (statuses, gave_up)
        })
    };
    let threads: Vec<_> = (0..clients + 4).map(|n| client(n, n < 4)).collect();
    let mut answered = Vec::new();
    let mut gave_up = 0;
    for thread in threads {
        let (statuses, abandoned) = thread.join().expect("client");
        answered.extend(statuses);
        gave_up += abandoned;
    }
    (answered, gave_up)
}

/// Found from outside: under a flood with control off whose clients hang up, the demo's
/// cluster client reused the connections of abandoned searches and answered 503 ("cannot
/// connect: invalid HTTP version") to searches that read another's late answer; and once a
/// fresh front end after such floods served slowly. On the real cluster: floods with control
/// off and in Fess's mode never answer a search with a 5xx, and a fresh front end in the
/// limit mode then serves at once.
#[test]
#[ignore = "needs a real cluster: tests/opensearch/cluster.sh start; LOAD_OPENSEARCH_URL=$(tests/opensearch/cluster.sh url)"]
fn a_fresh_front_end_serves_at_once_after_floods() {
    let _serial = serial();
    let cluster = cluster();
    let index = "load-flood-test";
    let dir = std::env::temp_dir().join(format!("load-flood-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let start = |mode: &str| {
        let path = dir.join(format!("{mode}.properties"));
        std::fs::write(
            &path,
            format!(
                "search_engine.http.url={}\nadaptive.load.control=0\n{mode}\n",
                cluster.url
            ),
        )
        .expect("config");
        let options = load_examples::cli::Options {
            config: load_examples::cli::ConfigFrom::File(path),
            listen: "127.0.0.1:0".parse().expect("addr"),
            demo: load_examples::app::DemoOptions {
                index: index.to_owned(),
                corpus: 2_000,
                ..load_examples::app::DemoOptions::default()
            },
            ..load_examples::cli::Options::default()
        };
        load_examples::server::start(&options).expect("server")
    };
    let off = start("web.load.control=100");
    let addr = off.addr();
    let indexed = first(Duration::from_secs(90), || {
        let stats: serde_json::Value =
            serde_json::from_str(&load_tests::raw_get(addr, "/admin/stats").text()).expect("JSON");
        stats["crawler"]["indexed"].as_u64().unwrap_or(0) >= 2_000
    });
    assert!(
        indexed.is_some(),
        "the crawler did not index 2,000 documents"
    );
    let (answered, gave_up) = flood(addr, 200, Duration::from_secs(4));
    off.stop().expect("clean stop");
    let fess = start("web.load.control=80");
    let (answered_fess, gave_up_fess) = flood(fess.addr(), 200, Duration::from_secs(4));
    fess.stop().expect("clean stop");
    let tally = |statuses: &[u16]| {
        statuses
            .iter()
            .fold(std::collections::BTreeMap::new(), |mut m, s| {
                *m.entry(*s).or_insert(0) += 1;
                m
            })
    };
    println!(
        "floods: control off, answers {:?} and {gave_up} searches given up; Fess's mode, answers {:?} and {gave_up_fess} given up",
        tally(&answered),
        tally(&answered_fess),
    );
    assert!(gave_up > 100, "the flood abandoned only {gave_up} searches");
    assert!(
        answered.contains(&200),
        "no search was answered: {:?}",
        tally(&answered)
    );
    assert!(
        answered
            .iter()
            .chain(&answered_fess)
            .all(|&s| s == 200 || s == 429),
        "searches answered with an error: {:?} {:?}",
        tally(&answered),
        tally(&answered_fess)
    );

    // A fresh front end in the limit mode: its first searches answer at once.
    let fresh = start("web.load.control=80\nload.control.admission=limit");
    let started = Instant::now();
    let mut slowest = Duration::ZERO;
    for n in 0..20 {
        let asked = Instant::now();
        let answer = load_tests::raw_get(fresh.addr(), &format!("/search?q=load+{n}"));
        slowest = slowest.max(asked.elapsed());
        assert!(
            answer.status == 200 || answer.status == 429,
            "search {n}: {}",
            answer.status
        );
    }
    let took = started.elapsed();
    fresh.stop().expect("clean stop");
    println!("a fresh front end answered 20 searches in {took:?}, the slowest in {slowest:?}");
    assert!(
        slowest < Duration::from_secs(2),
        "the slowest of 20 searches took {slowest:?}"
    );
}

real_cluster_on_both_runtimes!(
    the_source_reads_every_node,
    the_secured_node_takes_the_right_credentials_only,
    the_demo_searches_and_indexes_on_the_cluster,
);
