//! A trace of a front end's law while a load runs: its `/admin/stats` read every
//! [`EVERY`] from a thread of its own, each reading reduced to what the law acts on (armed,
//! the CPU it reads, the cap, the flood bound, in flight, the refused share, the pool), as
//! the node's traces keep them. Admin paths are uncontrolled, so the reading neither counts
//! as a request nor is refused.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::closed_loop::client;

/// How often the stats are read.
pub const EVERY: Duration = Duration::from_millis(250);

/// A trace being taken; [`Trace::finish`] stops it and gives the rows.
#[derive(Debug)]
pub struct Trace {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Vec<Value>>,
}

impl Trace {
    /// Starts reading `addr`'s `/admin/stats` now; each row's `t` is in seconds from
    /// `origin` (the load's start).
    #[must_use]
    pub fn start(addr: SocketAddr, origin: Instant) -> Trace {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut rows = Vec::new();
            let mut next = Instant::now();
            while !stopped.load(Ordering::Relaxed) {
                let t = origin.elapsed().as_secs_f64();
                if let Some(stats) = client::get_json(addr, "/admin/stats") {
                    rows.push(row(t, &stats));
                }
                next += EVERY;
                std::thread::sleep(next.saturating_duration_since(Instant::now()));
            }
            rows
        });
        Trace { stop, thread }
    }

    /// Stops the trace and gives its rows (none if its thread failed).
    #[must_use]
    pub fn finish(self) -> Vec<Value> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or_default()
    }
}

/// One reading of `/admin/stats`, reduced: `t` (s), `cpu` (what decisions use) and
/// `raw_cpu` (%), `armed`, `cap` (requests, hundredths kept), `ceiling` (`null`: none),
/// `in_flight`, `flood`, `refused_percent`, `saturated`, `learned`, `own_cores`, the
/// `pool` (active, queue, threads) when the poll read a node's, the running counts
/// `completed`, `rejected` and `rejected_flood`, and `engaged_at`, the in-flight count the
/// flood bound last engaged at (0: never).
///
/// Two shapes are read: the library's `Stats` as serde writes it (the `cpu_service`
/// example's, on the local loop) and the demo's (`search-server`'s, on the node), which
/// groups the same figures under names of its own (`armed.web`, `admission.flood.bounded`,
/// `admission.fleet.cluster_search_pool`, ...). A figure the reading lacks is `null`.
#[must_use]
pub fn row(t: f64, stats: &Value) -> Value {
    let admission = &stats["admission"];
    // The first of `values` that is there.
    let either = |values: [&Value; 2]| {
        values
            .into_iter()
            .find(|v| !v.is_null())
            .cloned()
            .unwrap_or(Value::Null)
    };
    let cap = admission["cap_hundredths"]
        .as_f64()
        .map(|hundredths| hundredths / 100.0)
        .or_else(|| admission["cap"].as_f64());
    let ceiling = admission["ceiling"]
        .as_u64()
        .filter(|&ceiling| ceiling < u64::from(u32::MAX));
    let (flood, fleet) = (&admission["flood"], &admission["fleet"]);
    let pool = either([&admission["search_pool"], &fleet["cluster_search_pool"]]);
    json!({
        "t": (t * 1000.0).round() / 1000.0,
        "cpu": stats["cpu"],
        "raw_cpu": stats["raw_cpu"],
        "armed": either([&stats["armed_web"], &stats["armed"]["web"]]),
        "cap": cap,
        "ceiling": ceiling,
        "in_flight": admission["in_flight"],
        "flood": either([&admission["flooding"], &flood["bounded"]]),
        "refused_percent": either([&admission["refused_percent"], &fleet["refused_share_percent"]]),
        "saturated": either([&admission["saturated"], &fleet["saturated"]]),
        "learned": either([&admission["learned"], &admission["cap_learned"]]),
        "own_cores": either([&admission["own_cores"], &fleet["own_cores"]]),
        "pool": if pool.is_object() {
            json!({"active": pool["active"], "queue": pool["queue"], "threads": pool["threads"]})
        } else {
            Value::Null
        },
        "completed": admission["completed"],
        "rejected": stats["rejected_web"],
        "rejected_flood": either([&admission["rejected_flood"], &flood["refused"]]),
        "engaged_at": either([&admission["flood_engaged_at"], &flood["engaged_at_in_flight"]]),
    })
}

/// The rows as a fixed-width text table, one line a reading.
#[must_use]
pub fn text(rows: &[Value]) -> String {
    let mut out = String::from(
        "     t   cpu  raw armed    cap ceiling in_flight flood engaged_at refused% saturated rejected\n",
    );
    for r in rows {
        let show = |v: &Value| match v {
            Value::Null => "-".to_owned(),
            Value::Bool(b) => if *b { "y" } else { "n" }.to_owned(),
            other => other.to_string(),
        };
        out.push_str(&format!(
            "{:>6.2} {:>5} {:>4} {:>5} {:>6} {:>7} {:>9} {:>5} {:>10} {:>8} {:>9} {:>8}\n",
            r["t"].as_f64().unwrap_or(0.0),
            show(&r["cpu"]),
            show(&r["raw_cpu"]),
            show(&r["armed"]),
            show(&r["cap"]),
            show(&r["ceiling"]),
            show(&r["in_flight"]),
            show(&r["flood"]),
            show(&r["engaged_at"]),
            show(&r["refused_percent"]),
            show(&r["saturated"]),
            show(&r["rejected"]),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reading_keeps_what_the_law_acts_on() {
        let stats = json!({
            "cpu": 93, "raw_cpu": 97, "armed_web": true, "rejected_web": 12,
            "admission": {
                "cap_hundredths": 250, "ceiling": u32::MAX, "in_flight": 3, "flooding": false,
                "refused_percent": 40, "saturated": true, "learned": true, "own_cores": 1,
                "search_pool": null, "completed": 900, "rejected_flood": 0,
            },
        });
        let r = row(1.23456, &stats);
        assert_eq!(r["t"], json!(1.235));
        assert_eq!(r["cap"], json!(2.5));
        assert_eq!(r["ceiling"], Value::Null, "u32::MAX is no ceiling");
        assert_eq!(r["armed"], json!(true));
        assert_eq!(r["pool"], Value::Null);
        assert_eq!(r["own_cores"], json!(1));
        let line = text(&[r]);
        assert!(line.lines().nth(1).unwrap().contains("2.5"), "{line}");
    }

    #[test]
    fn a_flood_bound_and_a_nodes_pool_are_kept() {
        let stats = json!({
            "cpu": 20, "raw_cpu": 20, "armed_web": false, "rejected_web": 0,
            "admission": {
                "cap_hundredths": 101, "ceiling": 4, "in_flight": 4, "flooding": true,
                "refused_percent": 0, "saturated": false, "learned": false, "own_cores": null,
                "search_pool": {"active": 2, "queue": 7, "threads": 4}, "completed": 5,
                "rejected_flood": 30,
            },
        });
        let r = row(0.0, &stats);
        assert_eq!(r["ceiling"], json!(4));
        assert_eq!(r["pool"], json!({"active": 2, "queue": 7, "threads": 4}));
        assert_eq!(r["rejected_flood"], json!(30));
    }

    /// The demo's `/admin/stats` (the node's front ends) reads as the library's `Stats`
    /// does: a trace taken on it once read every figure but the in-flight count as `null`.
    #[test]
    fn the_demos_stats_read_as_the_librarys() {
        let demo = json!({
            "cpu": 20, "raw_cpu": 21, "rejected_web": 3,
            "armed": {"web": true, "api": false},
            "admission": {
                "mode": "limit", "cap": 2.5, "ceiling": 4, "cap_learned": true,
                "in_flight": 4, "completed": 5,
                "flood": {"bounded": true, "refused": 30, "engaged_at_in_flight": 37},
                "fleet": {
                    "refused_share_percent": 40, "saturated": true, "own_cores": null,
                    "cluster_search_pool": {"threads": 4, "active": 2, "queue": 7},
                },
            },
        });
        let library = json!({
            "cpu": 20, "raw_cpu": 21, "armed_web": true, "rejected_web": 3,
            "admission": {
                "cap_hundredths": 250, "ceiling": 4, "in_flight": 4, "flooding": true,
                "refused_percent": 40, "saturated": true, "learned": true, "own_cores": null,
                "search_pool": {"active": 2, "queue": 7, "threads": 4}, "completed": 5,
                "rejected_flood": 30, "flood_engaged_at": 37,
            },
        });
        let (demo, library) = (row(1.0, &demo), row(1.0, &library));
        assert_eq!(demo, library);
        for key in [
            "armed",
            "cap",
            "flood",
            "refused_percent",
            "saturated",
            "learned",
            "pool",
            "rejected_flood",
            "engaged_at",
        ] {
            assert!(!demo[key].is_null(), "{key} read as null");
        }
    }
}
