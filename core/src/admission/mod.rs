//! Admission with a permit: a request admitted holds it while it is served, and dropping it
//! records the completion. In `load.control.admission=limit` the cluster poll arms a class
//! and, while armed, the front end admits only while its own in-flight count is under a cap
//! learnt from its completions and, when the poll reports the cluster's search thread pool,
//! adjusted by the queue standing there: the law a fleet of front ends shares.
//!
//! # The law
//!
//! - **Arming.** A class is armed while the cluster CPU is at or above its threshold (the
//!   poll decides, with Fess's rule and any hysteresis), and for a cool-off of
//!   `load.control.admission.cooloff` polls (default 2) after it falls below. A failed poll
//!   disarms at once (fail-open). The API class keeps its own, later threshold.
//! - **The shared signal.** The poll asks every node's search thread pool besides its CPU
//!   (`_nodes/stats/os,thread_pool`, filtered to `threads`, `active` and `queue`) and keeps
//!   the most loaded node's. Every front end of a fleet polls the same cluster, so each reads
//!   the same queue, with no coordinator and no clock in common.
//! - **The cap while armed** (with the pool): once a poll,
//!   `cap × (1 + (1 + idle) × refused − 0.7 × queue / max(threads, 8))`, within a factor of
//!   1.4 either way, where `refused` is the share of this front end's demand it refused
//!   since the last poll and `idle` the busiest node's idle share of threads. Each front end
//!   shrinks with the one queue they all see and grows with its own unmet demand: at
//!   equilibrium every front end refuses the same share of its demand (Jain's index of
//!   admitted over demand at least 0.985 in the simulation, skewed demand included) and the cluster
//!   keeps a small queue, a share of its threads, so that it never idles. The queue is
//!   counted against at least eight threads: one sample of a two-thread pool jumps by half a
//!   thread per task, and weighed in full it drove caps apart. A cap is kept in 256ths of a
//!   request, never below an eighth; a fraction is one more request that share of the time
//!   (the first `frac` milliseconds of every 256). It starts, when the class arms, from the
//!   cap Little's law gave while disarmed, and grows by at most the ceiling of what is in
//!   flight each poll.
//! - **Disarmed** (with the pool), there is no in-flight bound: a burst at light load is
//!   never shed (v0.3 bounded it at twice the cap and shed 38 of the first burst of 100 a
//!   user tried). Only a **flood** is bounded: when the in-flight count grew by more than
//!   noise (2 plus a quarter of the cap) at each of three buckets of 100 ms in a row and
//!   ended above the ceiling of the cap, `2 cap + ⌈3 √(2 cap)⌉`, the cap applies as if armed
//!   for the next three seconds (the cluster's CPU, reported a second late and polled once a
//!   second, arms the class in that time). A burst arrives at once and then drains; a step
//!   to twice the capacity grows at every bucket. Requests the flood bound refuses are
//!   counted apart from the CPU's rejections ([`crate::AdmissionStats::rejected_flood`]) and
//!   logged with their reason.
//! - **Little's law** gives the cap while disarmed, and always when the poll does not report
//!   the pool (a proxy that filters it, another engine): the completions per second of the
//!   busiest 100 ms bucket of the last second, times the least per-bucket mean latency of
//!   the last ten seconds. It is learnt at the first completion of every bucket and grows by
//!   at most the ceiling's factor at a time, so completions that line up (requests held for
//!   a minute, completed together) cannot teach it what no load held.
//! - **Without the pool** the single front end's law of v0.3 holds unchanged: the cap is
//!   never below `load.control.admission.initial` (default 8), starts over from it after a
//!   second without completions, is halved for the first 200 ms of every ten seconds while
//!   armed (a probe, after BBR's ProbeRTT, so that the latency it assumes is measured again
//!   without a queue), and a disarmed class is bounded by the ceiling of the cap. A fleet
//!   then adds up its front ends' floors and probes out of step: run it with the pool.
//! - **What is recorded** is the cluster's latency: a request whose latency is not the
//!   cluster's is abandoned ([`crate::LoadControl::abandon`], [`crate::Permit::abandon`]) instead,
//!   counted out without a completion (the client went away; a 404 of the front end's own).
//! - Only controlled requests count (not excluded ones, nor a class whose threshold is off).
//!   The rest are answered with the same busy response as Fess's mode.
//!
//! # Why this law
//!
//! Chosen in a simulation of the loop (`tests/tests/admission_sim.rs`: a fleet of real
//! `LoadControl`s with clocks a day apart and polls at unrelated phases, one cluster whose
//! CPU is reported a second late, Poisson arrivals split equally or skewed 5 : 1, five
//! cluster shapes, one a mix of cheap and costly searches), against designs that failed
//! there, on the small cluster unless said:
//!
//! - **v0.3's law in each front end** (Little's law per front end, its floor of 8, probes
//!   on each front end's own clock): fine alone, but the floors add up (8 front ends hold 64
//!   on a 4-server cluster) and a probe cannot drain the queue the others keep. Four front
//!   ends kept 0.65 and 0.50 of the peak goodput at 2x and 3x and took 3 s to recover from
//!   a step; eight kept none; two with skewed demand scored 0.87 and 0.77 on Jain's index.
//! - **The same with probes lined up on a shared clock**: no better (four front ends, 0.65
//!   and 0.59), since the floors still add up. Scaling each floor by the front end's share
//!   fixed the tail but not the fairness under skew (0.79 to 0.95).
//! - **A rejection probability from the standing delay** each front end sees (its
//!   completions' least latency over a baseline): fair by construction, but it needs a
//!   clean baseline, and a front end that starts under overload has none; the p99 at 2x
//!   was 9 to 10 times the light-load one.
//! - **The chosen law with the queue counted against the real thread count**: tails and
//!   goodput as now, but Jain's index fell to 0.87 to 0.95 on a two-thread cluster,
//!   because each front end's one sample of a small queue moved its cap by half or double.
//!   Lining the polls up on a shared clock made them fair (≥ 0.96 with up to 10 ms of skew)
//!   but moved every cap at once, and the fleet oscillated (4 to 19 s to recover from a
//!   step). Counting the queue against at least eight threads was fair and stable, with no
//!   clock in common at all.
//!
//! The limit mode then met every goal for 1, 2, 4 and 8 front ends, equal and skewed, on
//! all five shapes: admitted p99 at 2x and 3x within 1.92 times the 0.5x one, p99.9 at 3x
//! within 2.4, goodput at least 0.98 of the peak, nothing shed at 0.25x and 0.5x, back
//! under three times the light tail within 2 s of a step, Jain's index at least 0.985.
//! Beside it, congestion-limiter's Vegas (each front end its own) kept the tail of one front
//! end better (1.24 against 1.33 at 2x) but shed at 0.5x, and with four front ends kept
//! none of the goodput at 3x.
//!
//! # Cost
//!
//! In Fess's mode ([`crate::AdmissionMode::Threshold`], the default) a permit is a value
//! with nothing to do: admitting reads what [`crate::LoadControl::check`] reads and nothing
//! more, and dropping the permit does nothing. In the limit mode an admitted request does an
//! atomic increment and a clock read; a refused one an atomic increment; its permit, when
//! dropped, a clock read, a decrement and two additions to its bucket; abandoned, a
//! decrement. The poll's arithmetic runs on the monitor, once a second.

mod limit;
mod window;

pub(crate) use limit::Limiter;
