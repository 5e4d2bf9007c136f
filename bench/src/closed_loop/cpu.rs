//! The cluster's CPU as the front end sees it: the busiest node's `os.cpu.percent`, read
//! from the node stats every 500 ms in a thread of its own, for the report and the plots.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::client;

/// The node stats path the sampler reads (what the monitor reads, filtered).
const PATH: &str = "/_nodes/stats/os?filter_path=nodes.*.os.cpu.percent";

/// The busiest node's CPU in a node-stats answer.
#[must_use]
pub fn busiest(stats: &serde_json::Value) -> Option<u32> {
    stats["nodes"]
        .as_object()?
        .values()
        .filter_map(|node| node["os"]["cpu"]["percent"].as_u64())
        .max()
        .map(|max| u32::try_from(max).unwrap_or(100))
}

/// The busiest node's CPU now.
#[must_use]
pub fn read(cluster: SocketAddr) -> Option<u32> {
    busiest(&client::get_json(cluster, PATH)?)
}

/// The samples `(seconds since the origin, percent)`, taken until dropped.
#[derive(Debug)]
pub struct CpuLog {
    samples: Arc<Mutex<Vec<(f64, u32)>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl CpuLog {
    /// Starts sampling `cluster`, timing samples from `origin`.
    #[must_use]
    pub fn start(cluster: SocketAddr, origin: Instant) -> CpuLog {
        let samples = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (thread_samples, thread_stop) = (Arc::clone(&samples), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            while !thread_stop.load(Ordering::Relaxed) {
                if let Some(cpu) = read(cluster) {
                    let at = origin.elapsed().as_secs_f64();
                    if let Ok(mut samples) = thread_samples.lock() {
                        samples.push((at, cpu));
                    }
                }
                std::thread::sleep(Duration::from_millis(500));
            }
        });
        CpuLog {
            samples,
            stop,
            thread: Some(thread),
        }
    }

    /// The mean over `[from, to)` seconds since the origin (0 without a sample).
    #[must_use]
    pub fn mean(&self, from: f64, to: f64) -> f64 {
        let samples = self.all();
        let window: Vec<f64> = samples
            .iter()
            .filter(|(at, _)| *at >= from && *at < to)
            .map(|(_, cpu)| f64::from(*cpu))
            .collect();
        if window.is_empty() {
            0.0
        } else {
            window.iter().sum::<f64>() / window.len() as f64
        }
    }

    /// Every sample so far.
    #[must_use]
    pub fn all(&self) -> Vec<(f64, u32)> {
        self.samples.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl Drop for CpuLog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busiest_node_counts_and_odd_values_do_not() {
        let stats = serde_json::json!({"nodes": {
            "a": {"os": {"cpu": {"percent": 12}}},
            "b": {"os": {"cpu": {"percent": 71}}},
            "c": {"os": {"cpu": {"percent": -1}}},
        }});
        assert_eq!(busiest(&stats), Some(71));
        assert_eq!(busiest(&serde_json::json!({"nodes": {}})), None);
        assert_eq!(busiest(&serde_json::json!({"error": "x"})), None);
    }
}
