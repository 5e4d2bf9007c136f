//! The open-loop load: searches due at Poisson arrival times, whatever happened to the
//! earlier ones (rejections never speed it up), sent by a pool of workers with kept-alive
//! connections. A request's latency counts from its due time, so a backlog in the generator
//! is latency too; one due longer ago than [`GIVE_UP`] when a worker is free is not sent.

use std::net::SocketAddr;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use load_examples::corpus::{Corpus, Rng};

use super::client::Connection;

/// Worker threads: requests in flight at most.
pub const WORKERS: usize = 256;
/// A request due longer ago than this when a worker gets to it is given up.
pub const GIVE_UP: Duration = Duration::from_secs(5);

/// What happened to one due request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outcome {
    /// The status, and the latency from the due time.
    Answered(u16, Duration),
    /// No answer (connection refused, reset, timed out).
    Failed,
    /// Due too long ago when a worker got to it: the generator itself fell behind.
    Dropped,
}

/// One request: when it was due (since the start of the load) and its outcome.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sent {
    /// Its due time, from the start of the load.
    pub due: Duration,
    /// What happened.
    pub outcome: Outcome,
}

/// One phase of the load: a rate held for a time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Phase {
    /// Searches per second (the Poisson process's mean).
    pub rate: f64,
    /// How long, in seconds.
    pub seconds: f64,
}

/// The searches: queries of a fixed number of words from the corpus's vocabulary.
#[derive(Debug)]
pub struct Queries {
    corpus: Corpus,
    words: usize,
}

impl Queries {
    /// Queries of `words` words over `corpus`.
    #[must_use]
    pub fn new(corpus: Corpus, words: usize) -> Queries {
        Queries { corpus, words }
    }

    /// Search target number `n`.
    #[must_use]
    pub fn target(&self, n: u64) -> String {
        format!(
            "/search?q={}",
            self.corpus.query_words(n, self.words).replace(' ', "+")
        )
    }
}

/// The due times of `phases` from a Poisson process seeded with `seed`, from 0.
#[must_use]
pub fn arrivals(phases: &[Phase], seed: u64) -> Vec<Duration> {
    let mut rng = Rng::new(seed);
    let mut due = Vec::new();
    let mut start = 0.0;
    for phase in phases {
        let end = start + phase.seconds;
        let mut at = start;
        if phase.rate > 0.0 {
            loop {
                // Exponential gaps: -ln(1 - u) / rate, u in [0, 1).
                at += -(1.0 - rng.unit()).ln() / phase.rate;
                if at >= end {
                    break;
                }
                due.push(Duration::from_secs_f64(at));
            }
        }
        start = end;
    }
    due
}

/// Offers `phases` to `server`, open loop; every request due, in due order. A request
/// waits at most 15 s for its answer.
#[must_use]
pub fn offer(server: SocketAddr, queries: &Queries, phases: &[Phase], seed: u64) -> Vec<Sent> {
    offer_within(
        server,
        queries,
        phases,
        seed,
        Duration::from_secs(15),
        WORKERS,
    )
}

/// [`offer`] with `workers` clients, each request waiting at most `timeout` for its answer
/// before its client hangs up (and counts it [`Outcome::Failed`]).
#[must_use]
pub fn offer_within(
    server: SocketAddr,
    queries: &Queries,
    phases: &[Phase],
    seed: u64,
    timeout: Duration,
    workers: usize,
) -> Vec<Sent> {
    let (tickets, receiver) = mpsc::channel::<(Duration, Instant, String)>();
    let receiver = Arc::new(Mutex::new(receiver));
    let results = Arc::new(Mutex::new(Vec::new()));
    let start = Instant::now() + Duration::from_millis(50);
    let workers: Vec<_> = (0..workers)
        .map(|_| {
            let (receiver, results) = (Arc::clone(&receiver), Arc::clone(&results));
            std::thread::spawn(move || {
                let mut connection = Connection::with_timeout(server, timeout);
                loop {
                    let ticket = receiver.lock().ok().and_then(|r| r.recv().ok());
                    let Some((offset, due, target)) = ticket else {
                        break;
                    };
                    let outcome = if due.elapsed() > GIVE_UP {
                        Outcome::Dropped
                    } else {
                        match connection.get(&target) {
                            Ok(status) => Outcome::Answered(status, due.elapsed()),
                            Err(_) => Outcome::Failed,
                        }
                    };
                    if let Ok(mut results) = results.lock() {
                        results.push(Sent {
                            due: offset,
                            outcome,
                        });
                    }
                }
            })
        })
        .collect();
    for (n, offset) in arrivals(phases, seed).into_iter().enumerate() {
        let due = start + offset;
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let target = queries.target(seed.wrapping_mul(1_000_003).wrapping_add(n as u64));
        if tickets.send((offset, due, target)).is_err() {
            break;
        }
    }
    drop(tickets);
    for worker in workers {
        let _ = worker.join();
    }
    let mut sent = results.lock().map(|r| r.clone()).unwrap_or_default();
    sent.sort_by_key(|s| s.due);
    sent
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrivals_follow_each_phase_rate() {
        let phases = [
            Phase {
                rate: 100.0,
                seconds: 20.0,
            },
            Phase {
                rate: 400.0,
                seconds: 20.0,
            },
        ];
        let due = arrivals(&phases, 7);
        let first = due.iter().filter(|d| d.as_secs_f64() < 20.0).count();
        let second = due.len() - first;
        // Poisson counts: 2,000 and 8,000, within five standard deviations.
        assert!((2000_i64 - first as i64).abs() < 5 * 45, "{first}");
        assert!((8000_i64 - second as i64).abs() < 5 * 90, "{second}");
        assert!(due.windows(2).all(|w| w[0] <= w[1]), "in order");
        assert_eq!(due, arrivals(&phases, 7), "the same for the same seed");
        assert!(
            arrivals(
                &[Phase {
                    rate: 0.0,
                    seconds: 5.0
                }],
                1
            )
            .is_empty()
        );
    }

    #[test]
    fn queries_have_the_words_asked_for() {
        let queries = Queries::new(Corpus::new(10), 5);
        let target = queries.target(3);
        assert!(target.starts_with("/search?q="), "{target}");
        assert_eq!(target["/search?q=".len()..].split('+').count(), 5);
    }
}
