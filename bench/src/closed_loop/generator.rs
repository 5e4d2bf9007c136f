//! The open-loop load: searches due at Poisson arrival times, whatever happened to the
//! earlier ones (rejections never speed it up), sent by a pool of workers with kept-alive
//! connections. A request's latency counts from its due time, so a backlog in the generator
//! is latency too; one due longer ago than [`GIVE_UP`] when a worker is free is not sent.
//! A burst is sent as users send one: its clients open their connections first and write
//! every request together, not dealt out to the workers over hundreds of milliseconds.

use std::net::SocketAddr;
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex};
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

/// One request: when it was due (since the start of the load), which front end it went to,
/// and its outcome.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sent {
    /// Its due time, from the start of the load.
    pub due: Duration,
    /// What happened.
    pub outcome: Outcome,
    /// The front end it went to (an index into the load's front ends).
    pub front_end: usize,
    /// Whether it was part of a burst.
    pub burst: bool,
}

/// A burst: this many requests due at once, at `at` seconds, to one front end.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Burst {
    /// When, in seconds from the start of the load.
    pub at: f64,
    /// How many requests.
    pub count: usize,
    /// To which front end.
    pub front_end: usize,
}

/// An open-loop load on a fleet of front ends.
#[derive(Clone, Debug)]
pub struct Load<'a> {
    /// The front ends' addresses.
    pub front_ends: &'a [SocketAddr],
    /// Each front end's share of the arrivals, relative to the others'.
    pub weights: &'a [f64],
    /// The Poisson phases, in all.
    pub phases: &'a [Phase],
    /// Bursts besides.
    pub bursts: &'a [Burst],
    /// The seed of the arrivals, the queries and the split.
    pub seed: u64,
    /// How long a client waits for an answer before it hangs up.
    pub timeout: Duration,
    /// Clients at once.
    pub workers: usize,
}

impl<'a> Load<'a> {
    /// `phases` on one front end, 15 s timeout, [`WORKERS`] clients.
    #[must_use]
    pub fn on(front_ends: &'a [SocketAddr], phases: &'a [Phase], seed: u64) -> Load<'a> {
        Load {
            front_ends,
            weights: &[],
            phases,
            bursts: &[],
            seed,
            timeout: Duration::from_secs(15),
            workers: WORKERS,
        }
    }
}

/// One phase of the load: a rate held for a time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Phase {
    /// Searches per second (the Poisson process's mean).
    pub rate: f64,
    /// How long, in seconds.
    pub seconds: f64,
}

/// The searches: queries from the corpus's vocabulary, of a fixed number of words, or a
/// mix of cheap and costly ones.
#[derive(Debug)]
pub struct Queries {
    corpus: Corpus,
    words: usize,
    /// The mixed workload: this share (in percent) of the searches have `costly` words, the
    /// rest `words`.
    costly: Option<(u64, usize)>,
}

impl Queries {
    /// Queries of `words` words over `corpus`.
    #[must_use]
    pub fn new(corpus: Corpus, words: usize) -> Queries {
        Queries {
            corpus,
            words,
            costly: None,
        }
    }

    /// The mixed workload: 70 % two-word searches, 30 % eight-word ones (a spread of costs).
    #[must_use]
    pub fn mixed(corpus: Corpus) -> Queries {
        Queries {
            corpus,
            words: 2,
            costly: Some((30, 8)),
        }
    }

    /// Search target number `n`.
    #[must_use]
    pub fn target(&self, n: u64) -> String {
        let words = match self.costly {
            Some((percent, costly)) if Rng::new(n ^ 0xC057).unit() * 100.0 < percent as f64 => {
                costly
            }
            _ => self.words,
        };
        format!(
            "/search?q={}",
            self.corpus.query_words(n, words).replace(' ', "+")
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
    offer_load(queries, &Load::on(&[server], phases, seed))
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
    offer_load(
        queries,
        &Load {
            timeout,
            workers,
            ..Load::on(&[server], phases, seed)
        },
    )
}

/// How long after [`offer_load`] is called its load begins: a request due at 0 s is sent
/// that long after the call.
pub const LEAD: Duration = Duration::from_millis(50);

/// Offers `load`, open loop: each arrival goes to a front end drawn by weight (equal without
/// weights), every one due, in due order, by a pool of workers with a kept-alive connection
/// to each front end. Each burst has clients of its own, one a request, each with its
/// connection open from the start, released together at the burst's time.
#[must_use]
pub fn offer_load(queries: &Queries, load: &Load<'_>) -> Vec<Sent> {
    struct Ticket {
        offset: Duration,
        due: Instant,
        target: String,
        front_end: usize,
    }
    let (tickets, receiver) = mpsc::channel::<Ticket>();
    let receiver = Arc::new(Mutex::new(receiver));
    let results = Arc::new(Mutex::new(Vec::new()));
    let start = Instant::now() + LEAD;
    let (front_ends, timeout) = (load.front_ends.to_vec(), load.timeout);
    let record = |results: &Mutex<Vec<Sent>>, sent: Sent| {
        if let Ok(mut results) = results.lock() {
            results.push(sent);
        }
    };
    let workers: Vec<_> = (0..load.workers)
        .map(|_| {
            let (receiver, results) = (Arc::clone(&receiver), Arc::clone(&results));
            let front_ends = front_ends.clone();
            std::thread::spawn(move || {
                let mut connections: Vec<Connection> = front_ends
                    .iter()
                    .map(|addr| Connection::with_timeout(*addr, timeout))
                    .collect();
                loop {
                    let ticket = receiver.lock().ok().and_then(|r| r.recv().ok());
                    let Some(ticket) = ticket else {
                        break;
                    };
                    let outcome = if ticket.due.elapsed() > GIVE_UP {
                        Outcome::Dropped
                    } else {
                        match connections[ticket.front_end].get(&ticket.target) {
                            Ok(status) => Outcome::Answered(status, ticket.due.elapsed()),
                            Err(_) => Outcome::Failed,
                        }
                    };
                    record(
                        &results,
                        Sent {
                            due: ticket.offset,
                            outcome,
                            front_end: ticket.front_end,
                            burst: false,
                        },
                    );
                }
            })
        })
        .collect();
    let bursts: Vec<_> = load
        .bursts
        .iter()
        .enumerate()
        .flat_map(|(b, burst)| {
            let front_end = burst.front_end.min(front_ends.len() - 1);
            let addr = front_ends[front_end];
            let offset = Duration::from_secs_f64(burst.at);
            let due_at = start + offset;
            let gate = Arc::new(Barrier::new(burst.count + 1));
            let mut threads: Vec<_> = (0..burst.count)
                .map(|k| {
                    let (gate, results) = (Arc::clone(&gate), Arc::clone(&results));
                    let target = queries.target(
                        (load.seed ^ 0xB0_0575)
                            .wrapping_mul(1_000_003)
                            .wrapping_add((b * burst.count + k) as u64),
                    );
                    std::thread::spawn(move || {
                        let mut connection = Connection::with_timeout(addr, timeout);
                        let opened = connection.open();
                        gate.wait();
                        let outcome = match opened.and_then(|()| connection.get(&target)) {
                            Ok(status) => Outcome::Answered(status, due_at.elapsed()),
                            Err(_) => Outcome::Failed,
                        };
                        record(
                            &results,
                            Sent {
                                due: offset,
                                outcome,
                                front_end,
                                burst: true,
                            },
                        );
                    })
                })
                .collect();
            threads.push(std::thread::spawn(move || {
                if let Some(wait) = due_at.checked_duration_since(Instant::now()) {
                    std::thread::sleep(wait);
                }
                gate.wait();
            }));
            threads
        })
        .collect();
    // The arrivals in due order; the split drawn from its own generator.
    let mut split = Rng::new(load.seed ^ 0x5EED);
    let total: f64 = load.weights.iter().sum();
    let pick = |split: &mut Rng| -> usize {
        if load.weights.len() < 2 || total <= 0.0 {
            return (split.unit() * front_ends.len() as f64) as usize % front_ends.len();
        }
        let mut at = split.unit() * total;
        for (i, weight) in load.weights.iter().enumerate() {
            if at < *weight {
                return i;
            }
            at -= weight;
        }
        load.weights.len() - 1
    };
    for (n, offset) in arrivals(load.phases, load.seed).into_iter().enumerate() {
        let due_at = start + offset;
        if let Some(wait) = due_at.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let target = queries.target(load.seed.wrapping_mul(1_000_003).wrapping_add(n as u64));
        let ticket = Ticket {
            offset,
            due: due_at,
            target,
            front_end: pick(&mut split).min(front_ends.len() - 1),
        };
        if tickets.send(ticket).is_err() {
            break;
        }
    }
    drop(tickets);
    for thread in workers.into_iter().chain(bursts) {
        let _ = thread.join();
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

    /// A server on loopback answering every request 200 on every connection, counting the
    /// connections it accepted.
    fn answering_server() -> (SocketAddr, Arc<std::sync::atomic::AtomicUsize>) {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = Arc::clone(&accepted);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream);
                    let mut line = String::new();
                    loop {
                        line.clear();
                        match reader.read_line(&mut line) {
                            Ok(0) | Err(_) => return,
                            Ok(_) if line == "\r\n" => {
                                let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
                                if reader.get_mut().write_all(answer).is_err() {
                                    return;
                                }
                            }
                            Ok(_) => {}
                        }
                    }
                });
            }
        });
        (addr, accepted)
    }

    #[test]
    fn a_burst_has_a_connection_a_request_and_each_is_recorded() {
        let (addr, accepted) = answering_server();
        let queries = Queries::new(Corpus::new(10), 2);
        let bursts = [
            Burst {
                at: 0.2,
                count: 30,
                front_end: 0,
            },
            Burst {
                at: 0.4,
                count: 20,
                front_end: 0,
            },
        ];
        let phases = [Phase {
            rate: 0.0,
            seconds: 0.5,
        }];
        let front_ends = [addr];
        let load = Load {
            bursts: &bursts,
            workers: 2,
            ..Load::on(&front_ends, &phases, 9)
        };
        let sent = offer_load(&queries, &load);
        assert_eq!(sent.len(), 50);
        assert!(sent.iter().all(|s| s.burst && s.front_end == 0), "{sent:?}");
        assert!(
            sent.iter()
                .all(|s| matches!(s.outcome, Outcome::Answered(200, _))),
            "{sent:?}"
        );
        let at = |due: f64| {
            sent.iter()
                .filter(|s| s.due == Duration::from_secs_f64(due))
                .count()
        };
        assert_eq!((at(0.2), at(0.4)), (30, 20));
        // Its own connection for each burst request; the idle workers opened none.
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 50);
    }

    #[test]
    fn queries_have_the_words_asked_for() {
        let queries = Queries::new(Corpus::new(10), 5);
        let target = queries.target(3);
        assert!(target.starts_with("/search?q="), "{target}");
        assert_eq!(target["/search?q=".len()..].split('+').count(), 5);
    }
}
