//! Admission with a permit: a request admitted holds it while it is served, and dropping it
//! records the completion. In `load.control.admission=limit` the cluster poll arms a class
//! and, while armed, the front end admits only while its own in-flight count is under a cap.
//! When the poll reports the cluster's search thread pools, each poll moves the cap toward
//! an operating point of the busiest node: the law a fleet of front ends shares.
//!
//! # The law
//!
//! - **Arming.** A class is armed while the cluster CPU is at or above its threshold (the
//!   poll decides, with Fess's rule and any hysteresis), and for a cool-off of
//!   `load.control.admission.cooloff` polls (default 2) after it falls below. A failed poll
//!   disarms at once (fail-open). The API class keeps its own, later threshold.
//! - **The shared signal.** The poll asks every node's search thread pool and search
//!   counters besides its CPU ([`crate::node_stats::NODE_STATS_PATH`]: the pool's
//!   `threads`, `active`, `queue` and `total_wait_time_in_nanos`, the node's `timestamp`,
//!   and `indices.search.query_time_in_millis` and `fetch_time_in_millis`). Between two
//!   polls the counters give each node's mean tasks running and waiting
//!   ([`crate::node_stats::PoolTracker`]); divided by the node's cores (OpenSearch sizes the
//!   pool `⌊1.5 × cores⌋ + 1`, inverted by [`crate::node_stats::SearchPool::cores`]) that is
//!   its **load per core**, and the busiest node by it is kept. Every front end of a fleet
//!   polls the same cluster, so each reads the same busiest node, with no coordinator and no
//!   clock in common. Without the counters (the first poll, a node that restarted), the
//!   pool's snapshot stands in.
//! - **The operating point** is `cores + max(3, cores / 4)` tasks at the busiest node
//!   (`max(1.25, 1 + 3 / cores)` per core): every core busy and room for the arrivals'
//!   variance, so that the node never idles for want of work. 4 tasks on one core, 7 on
//!   four, 20 on sixteen; until now it was 1.25 per core on any node, which on one core
//!   left no room for a search's two tasks. On a machine whose CPU is the front end's own
//!   (its requests in flight the tasks) it is `max(1.25, 1 + 1 / cores)` per core (2 tasks
//!   on one core, 5 on four): its requests do not wait on I/O as a
//!   node's search threads do, and the async worker that answers them shares the cores. It
//!   is held only while the node is saturated by this front end's demand (on a machine
//!   whose CPU is the front end's own, by the demand beyond its cores): the node's CPU
//!   over the requests it served since the last poll, times the requests that arrived
//!   (served, refused, and the change in flight), beyond 100 % by more than three
//!   standard deviations of a Poisson count of those arrivals, or, averaged over polls (a
//!   quarter of the way a poll), by more than two of theirs. A load its cores serve at
//!   93 % CPU is no longer taken for more, and the cap grows instead of refusing its
//!   variance; refusing lowers the CPU and the served count alike, so the gate reads the
//!   demand whatever the cap refuses. The node's CPU at 93 % (smoothed) was the gate until
//!   a fleet's node, reading 75 to 100 % at a load it served, was held at its operating
//!   point there and shed 14 to 29 % of it. The error a poll acts on is the load per core
//!   over the point, but never more than `0.6 × (demand − gate)` above saturation and
//!   `0.05 × (demand − gate)` below it (the demand and the gate in per cent, as above).
//!   Below saturation a node at or below the point grows the cap (OpenSearch's pool
//!   has more threads than cores, so a busy pool is not yet a saturated node), and one over
//!   it holds the cap: the CPU vetoes a shrink but does not grow it while the node queues
//!   (on the node, one core queueing 8 to 16 tasks read 78 to 90 % CPU). A machine's own
//!   load, saturated by its demand, has no such veto.
//! - **The cap while armed** (with the pool): once a poll, `cap × (1 + refused − error)`,
//!   within 1/1.4 and 1.4 (up to `point / load` at once when the node is far below the
//!   operating point), where `refused` is the share of this front end's demand it refused
//!   since the last poll. Each front end shrinks with the one error they all see and grows
//!   with its own unmet demand, so at equilibrium each refuses the same share of its
//!   demand. Guards: a front end with no demand since the last poll keeps its cap (it has
//!   learnt nothing of its share: before, it decayed to an eighth of a request while the
//!   others kept a queue); one with a backlog above the ceiling of its cap does not shrink
//!   it further; growth stops at the ceiling of the recent peak in flight, `2 p + ⌈3 √(2 p)⌉`
//!   (a cap nothing fills would take many polls to come down at a step). A cap is kept in
//!   256ths of a request, never below an eighth; a fraction is one more request that share
//!   of the time (the first `frac` milliseconds of every 256).
//! - **Where the cap starts.** When a class arms (or a flood bound is released while it is
//!   armed) with the node saturated and over the operating point, or while a flood bound
//!   holds, the cap starts at what this front end had in flight on average over the last
//!   second, scaled by `point / load`, within the ceiling of the recent peak in flight: each
//!   front end of a fleet scales its own share of the node's load by the same factor, so that
//!   their sum starts at the point. The first operating-point law (165a8a2) started it at
//!   Little's law's cap or at the ceiling of the surge's own peak (24 to 47 on a one-core
//!   node that holds 2 to 4), and came down by 1/1.4 a poll: the onset that held the real
//!   node's tail. Below the operating point or below saturation it starts with room from
//!   what the front end held: the larger of the scaled mean and the ceiling of the mean in
//!   flight (room for twice the arrivals that kept up), within the ceiling of the cap or of
//!   the recent peak; the law before started it at that ceiling, a surge's own peak. The
//!   point a cap starts from is 6 tasks higher for a front end that refused nothing since
//!   the last poll (none at 30 % refused or more): at the onset of a load the node can
//!   serve, room for the arrivals' variance. No start is above the larger of the scaled
//!   mean and the ceiling of the mean. Over the point or flooding, a front end with a
//!   node's pool starts at what it holds now (its mean or its in-flight count, whichever is
//!   more) scaled by the node's load now or on average, whichever is more, and never above
//!   its **share of the node at quiet** times the point, nor above what it held then: its
//!   mean in flight over the node's tasks, both on average, at the last poll that left its
//!   class unbounded with the node at or below the point. In a surge both the in-flight
//!   count and the node's pool are the surge's, and the pool sees only a front end's
//!   connections (16 in the demo): scaled by it, a warmed and then idle front end's cap
//!   started at 34 on a one-core node whose point is 4 (the node's onset test at 302c148;
//!   `sim/tests/warm_idle.rs` reproduces it and holds the law to the goals). While a flood
//!   bound alone holds the class, the cap does not grow: the bound refuses, not the cap,
//!   and the CPU, a second late, has not seen the surge.
//! - **A poll without the pool** (a filtering proxy, a node that did not answer in time)
//!   keeps the law as it was for up to three polls in a row: the cap stays and the poll's
//!   counts wait for the next poll that has it (before, such a poll discarded them and the
//!   next rebuilt every front end's cap at the floor of 8, and a fleet's floors added up).
//! - **Disarmed**, there is no in-flight bound: a burst at light load is never shed. Only a
//!   **flood** is bounded, measured against what the front end held at its last poll that
//!   left the class unbounded with the busiest node at or below the operating point (the
//!   cap, the mean in flight or the recent peak then, whichever is more: a surge cannot move
//!   it before a poll does, nor a poll that falls in a surge's first moments, before the
//!   CPU arms the class; on a cluster's front end at most the busiest node's operating
//!   point): the in-flight count grew by more than noise (2 plus a
//!   quarter of that) at each of two buckets of 100 ms in a row, or, on a cluster's front
//!   end, at each of three looks at completions at least 25 ms apart, and is above its
//!   ceiling, or finds the cluster queueing (the last bucket's mean latency
//!   at least 8 times the least of the window), while the front end's arrivals surge: beyond
//!   the rate it received up to the last poll that left the class unbounded (since the
//!   poll before it, over the time without quiet spells: a second or more without a
//!   completion), or, on a machine whose CPU is its own, beyond what its cores serve (its
//!   cores over the least latency of the last ten seconds), by a quarter and two requests a
//!   bucket (without either, below one request a bucket, growth alone decides). A burst's
//!   drain grows the count; it does not bring arrivals. The bound, twice what the front end
//!   held (on a cluster's front end at most the operating point), then holds for two poll intervals and a second (at least 3 s; before, 3 s
//!   whatever the interval, which the interval's 86,400 s limit made meaningless) so that
//!   the CPU, reported a second late, can arm the class. A poll that finds the busiest node
//!   below the operating point, on average since the last poll and now, with what this
//!   front end refused since the poll before on it too (its load and its tasks now over
//!   the share it admitted), releases it: a run of arrivals is not a flood, but the pool is
//!   what the bound let through, and a bound that refused half a surge keeps the node
//!   below the point (on the node such a poll let 226 searches in before the class armed
//!   1 s later). So does a look that finds the arrivals calm again over a
//!   span long enough to tell (8 requests at the rate before, half a bucket at least). The
//!   poll that arms the class while the bound holds keeps the cap as it is: the refusals
//!   since the poll before were the bound's, not the cap's.
//!   Requests the flood bound refuses are counted under their own reason
//!   ([`crate::RejectReason::Flood`]) and logged with it.
//! - **Little's law** gives the cap while disarmed, and always when the poll does not report
//!   the pool: the completions per second of the busiest 100 ms bucket of the last second,
//!   times the least mean latency of the last ten seconds. It is learnt at the first
//!   completion of every bucket and grows by at most the ceiling's factor at a time, so
//!   completions that line up (requests held for a minute, completed together) cannot teach
//!   it what no load held. A poll's update and a bucket's learning never undo each other:
//!   each stores its cap only if the cap it loaded is still there.
//! - **Without the pool** the single front end's law of v0.3 holds: the cap never below
//!   `load.control.admission.initial` (default 8), starting over from it after a second
//!   without completions, halved for the first 200 ms of every ten seconds while armed (a
//!   probe, after BBR's ProbeRTT). A fleet then adds up its front ends' floors: run it with
//!   the pool.
//! - **A configuration reload** hands the cap only what was configured, never what a surge
//!   made: a new `load.control.admission.initial` is the cap until anything is learnt (as
//!   at start); once a poll with the pool has set the cap, the reload leaves it and what a
//!   flood is measured against; without the pool it is the floor, and the cap is raised
//!   to it and no further.
//! - **What is recorded** is the cluster's latency: a request whose latency is not the
//!   cluster's is abandoned ([`crate::LoadControl::abandon`], [`crate::Permit::abandon`])
//!   instead, counted out without a completion (the client went away; a 404 of the front
//!   end's own).
//! - Only controlled requests count (not excluded ones, nor a class whose threshold is off).
//!   The rest are answered with the same busy response as Fess's mode.
//!
//! # Why this law
//!
//! It was chosen in a simulation of the loop (`sim/`) and judged on a real node
//! (`bench/closed_loop.sh --short`); the designs that lost, their figures and the node's
//! verdicts are in the repository's `docs/admission.md`.

//! # Cost
//!
//! In Fess's mode ([`crate::AdmissionMode::Threshold`], the default) a permit is a value
//! with nothing to do: admitting reads what [`crate::LoadControl::check`] reads and nothing
//! more, and dropping the permit does nothing. In the limit mode an admitted request does an
//! atomic increment and a clock read; a refused one an atomic increment; its permit, when
//! dropped, a clock read, a decrement and two additions to its bucket; abandoned, a
//! decrement. The poll's arithmetic runs on the monitor, once a second.

mod bound;
mod cap;
mod count;
mod flood;
mod law;
mod limit;
mod step;
mod window;

pub(crate) use bound::Bound;
#[cfg(not(feature = "designs"))]
pub(crate) use law::Law;
#[cfg(feature = "designs")]
pub use law::{FloodBase, Law, OwnGate, Start, Watch};
pub(crate) use limit::Limiter;
