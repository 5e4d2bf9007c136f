//! The server under test: the release `search-server` as a child process, its settings in
//! a file it reloads on `SIGHUP`, switched between the modes the experiment compares.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use super::client;

/// Load control's web threshold in every controlled mode (Fess's example setting).
pub const THRESHOLD: u32 = 70;
/// The crawler's adaptive threshold, in every mode. The adaptive gate reads this machine's
/// CPU over both CPUs, while the crawler's `_bulk` requests cost the cluster's: 30 % of the
/// machine is about 45 % of the cluster's CPU with the front end's 15 %, so background work
/// yields before searches are shed at 70 %.
pub const ADAPTIVE: u32 = 30;
/// The EWMA mode's time constant, in seconds.
pub const TAU: u32 = 3;

/// A configuration of the server under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `web.load.control=100`: no control (calibration only).
    Off,
    /// `web.load.control=70`: Fess's rule, the default.
    Fess,
    /// Fess's rule on an EWMA of the CPU (`load.control.smoothing=ewma`, tau 3 s).
    Ewma,
    /// `load.control.admission=limit`: the poll arms an in-flight cap.
    Limit,
    /// The peer: congestion-limiter's Vegas decides (`--peer-limiter vegas`).
    Vegas,
    /// The limit mode in another build of the server (`--candidate BINARY`): a change to
    /// the law judged beside the law in force, on the same node, rate and minutes.
    Candidate,
}

impl Mode {
    /// The modes compared, in the order of the first factor (rotated for each next one).
    pub const COMPARED: [Mode; 3] = [Mode::Fess, Mode::Limit, Mode::Vegas];

    /// The name in the tables and `results.json`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::Fess => "fess",
            Mode::Ewma => "ewma",
            Mode::Limit => "limit",
            Mode::Vegas => "vegas",
            Mode::Candidate => "candidate",
        }
    }

    /// The mode named `name`.
    #[must_use]
    pub fn named(name: &str) -> Option<Mode> {
        [
            Mode::Off,
            Mode::Fess,
            Mode::Ewma,
            Mode::Limit,
            Mode::Vegas,
            Mode::Candidate,
        ]
        .into_iter()
        .find(|mode| mode.name() == name)
    }

    /// The server's arguments for this mode besides its settings: the peer's limiter.
    #[must_use]
    pub fn args(self) -> &'static [&'static str] {
        if self == Mode::Vegas {
            &["--peer-limiter", "vegas"]
        } else {
            &[]
        }
    }

    fn threshold(self) -> u32 {
        if self == Mode::Off { 100 } else { THRESHOLD }
    }

    fn smoothing(self) -> &'static str {
        if self == Mode::Ewma { "ewma" } else { "none" }
    }

    fn admission(self) -> &'static str {
        if matches!(self, Mode::Limit | Mode::Candidate) {
            "limit"
        } else {
            "threshold"
        }
    }

    /// The server's settings in this mode.
    #[must_use]
    pub fn properties(self, cluster: &str) -> String {
        format!(
            "search_engine.http.url={cluster}\nweb.load.control={threshold}\n\
             api.load.control={threshold}\nload.control.monitor.interval=1\n\
             adaptive.load.control={ADAPTIVE}\nload.control.smoothing={smoothing}\n\
             load.control.smoothing.tau={TAU}\nload.control.admission={admission}\n",
            threshold = self.threshold(),
            smoothing = self.smoothing(),
            admission = self.admission(),
        )
    }

    /// The rows of `/admin/load`'s settings table that show the server runs in this mode.
    fn shown(self) -> [String; 3] {
        let row = |key: &str, value: &str| format!("<tr><th>{key}</th><td>{value}</td></tr>");
        [
            row("web.load.control", &self.threshold().to_string()),
            row("load.control.smoothing", self.smoothing()),
            row("load.control.admission", self.admission()),
        ]
    }
}

/// A fleet of `search-server`s on one cluster, all in one mode, each its own process.
#[derive(Debug)]
pub struct Fleet {
    /// The servers.
    pub servers: Vec<Server>,
    /// The mode they run in.
    pub mode: Mode,
}

impl Fleet {
    /// Starts `n` servers in `mode`, crawlers off (see [`Server::start_as`]).
    ///
    /// # Errors
    ///
    /// A server does not start (the others are stopped).
    pub fn start(
        binary: &str,
        cluster: &str,
        index: &str,
        n: usize,
        mode: Mode,
    ) -> Result<Fleet, String> {
        let servers = (0..n)
            .map(|id| Server::start_as(binary, cluster, index, 1, mode, false, id))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Fleet { servers, mode })
    }

    /// The servers' addresses.
    #[must_use]
    pub fn addrs(&self) -> Vec<SocketAddr> {
        self.servers.iter().map(|server| server.addr).collect()
    }
}

/// A running `search-server`, killed when dropped.
#[derive(Debug)]
pub struct Server {
    child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
    config: PathBuf,
    cluster: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.config);
    }
}

impl Server {
    /// Starts `binary` on `cluster` in [`Mode::Off`], searching `index`, its crawler
    /// re-indexing the first `corpus` documents.
    ///
    /// # Errors
    ///
    /// The configuration cannot be written or the server does not start.
    pub fn start(
        binary: &str,
        cluster: &str,
        index: &str,
        corpus: usize,
    ) -> Result<Server, String> {
        Server::start_as(binary, cluster, index, corpus, Mode::Off, true, 0)
    }

    /// Starts `binary` on `cluster` in `mode`, searching `index`; the crawler re-indexes the
    /// first `corpus` documents when `crawler` is on, and is off (background work quiet)
    /// otherwise. `id` tells apart the configuration files of a fleet's servers.
    ///
    /// # Errors
    ///
    /// The configuration cannot be written or the server does not start.
    pub fn start_as(
        binary: &str,
        cluster: &str,
        index: &str,
        corpus: usize,
        mode: Mode,
        crawler: bool,
        id: usize,
    ) -> Result<Server, String> {
        let config = std::env::temp_dir().join(format!(
            "closed-loop-{}-{id}.properties",
            std::process::id()
        ));
        write(&config, &mode.properties(cluster))?;
        let corpus = corpus.to_string();
        let mut args = vec![
            "--index",
            index,
            "--corpus",
            &corpus,
            "--crawler",
            if crawler { "on" } else { "off" },
        ];
        args.extend(mode.args());
        let (child, addr) = crate::spawn_search_server(binary, &config, &args)?;
        Ok(Server {
            child,
            addr,
            config,
            cluster: cluster.to_owned(),
        })
    }

    /// `/admin/stats`, if it answers.
    #[must_use]
    pub fn stats(&self) -> Option<serde_json::Value> {
        client::get_json(self.addr, "/admin/stats")
    }

    /// Documents the crawler has indexed so far (0 when the stats do not answer).
    #[must_use]
    pub fn indexed(&self) -> u64 {
        self.stats()
            .and_then(|s| s["crawler"]["indexed"].as_u64())
            .unwrap_or(0)
    }

    /// Switches to `mode`: rewrites the file, sends `SIGHUP`, and waits until
    /// `/admin/load` shows the new settings.
    ///
    /// # Errors
    ///
    /// The file cannot be written, the signal not sent, or the page does not show the
    /// mode within 10 s.
    pub fn set_mode(&self, mode: Mode) -> Result<(), String> {
        write(&self.config, &mode.properties(&self.cluster))?;
        let status = Command::new("kill")
            .args(["-HUP", &self.child.id().to_string()])
            .status()
            .map_err(|e| format!("kill -HUP: {e}"))?;
        if !status.success() {
            return Err("kill -HUP failed".into());
        }
        let shown = mode.shown();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok((200, page)) =
                client::get(self.addr, "/admin/load?refresh=0", Duration::from_secs(5))
            {
                let page = String::from_utf8_lossy(&page);
                if shown.iter().all(|row| page.contains(row.as_str())) {
                    return Ok(());
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(format!("the server did not switch to {}", mode.name()))
    }
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each mode's file parses, and says what the mode is.
    #[test]
    fn each_mode_is_a_valid_configuration() {
        use load_core::{AdmissionMode, Config, config::Smoothing};
        for mode in [
            Mode::Off,
            Mode::Fess,
            Mode::Ewma,
            Mode::Limit,
            Mode::Candidate,
        ] {
            let config = Config::from_properties(&mode.properties("http://127.0.0.1:9200"))
                .unwrap_or_else(|e| panic!("{}: {e}", mode.name()));
            let control = config.control;
            assert_eq!(u32::from(control.web_threshold.get()), mode.threshold());
            assert_eq!(
                control.admission == AdmissionMode::Limit,
                matches!(mode, Mode::Limit | Mode::Candidate),
                "{}",
                mode.name()
            );
            assert_eq!(
                matches!(control.smoothing, Smoothing::Ewma { .. }),
                mode == Mode::Ewma,
                "{}",
                mode.name()
            );
        }
    }
}
