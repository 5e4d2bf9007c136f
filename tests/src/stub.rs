//! A scriptable OpenSearch stand-in on 127.0.0.1: HTTP/1.1 with keep-alive, one thread per
//! connection, bounded in time, stopped on drop.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::fixture;

/// How the stub answers one request.
#[derive(Clone, Debug)]
pub struct Reply {
    /// Status code.
    pub status: u16,
    /// Headers besides `content-length`.
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
    /// Wait before sending anything.
    pub delay: Duration,
    /// Send this many body bytes, then stall for the duration.
    pub stall: Option<(usize, Duration)>,
    /// Close the connection instead of answering.
    pub reset: bool,
    /// Announce the whole body but close the connection after this many bytes of it.
    pub cut: Option<usize>,
    /// Send these bytes instead of an HTTP answer (status, headers and body are unused),
    /// then close the connection.
    pub raw: Option<Vec<u8>>,
}

impl Reply {
    /// A fixture of `tests/fixtures/opensearch`, served as the real server would.
    #[must_use]
    pub fn fixture(name: &str) -> Reply {
        let fixture = fixture(name);
        Reply {
            status: fixture.status,
            headers: fixture.headers,
            body: fixture.body,
            ..Reply::json(200, "{}")
        }
    }

    /// A JSON body with this status.
    #[must_use]
    pub fn json(status: u16, body: &str) -> Reply {
        Reply {
            status,
            headers: vec![(
                "content-type".into(),
                "application/json; charset=UTF-8".into(),
            )],
            body: body.as_bytes().to_vec(),
            delay: Duration::ZERO,
            stall: None,
            reset: false,
            cut: None,
            raw: None,
        }
    }

    /// A filtered stats body with one node per percent (`-1`: cannot measure).
    #[must_use]
    pub fn cpu(percents: &[i64]) -> Reply {
        Reply::json(200, &nodes_body(percents, 0))
    }

    /// `n` MiB of a valid-looking body (whitespace inside an object).
    #[must_use]
    pub fn megabytes(n: usize) -> Reply {
        let mut body = vec![b' '; n << 20];
        body[0] = b'{';
        if let Some(last) = body.last_mut() {
            *last = b'}';
        }
        Reply::json(200, "").with_body(body)
    }

    /// JSON nested `depth` arrays deep.
    #[must_use]
    pub fn nested(depth: usize) -> Reply {
        let mut body = String::from("{\"nodes\":");
        body.extend(std::iter::repeat_n('[', depth));
        body.extend(std::iter::repeat_n(']', depth));
        body.push('}');
        Reply::json(200, &body)
    }

    /// Bytes that are not JSON.
    #[must_use]
    pub fn garbage() -> Reply {
        Reply::json(200, "").with_body((0u8..=255).cycle().take(4096).collect())
    }

    /// Bytes that are no HTTP answer (a server of another protocol on the port, or bytes
    /// out of step), then the connection closes.
    #[must_use]
    pub fn not_http(bytes: &[u8]) -> Reply {
        Reply {
            raw: Some(bytes.to_vec()),
            ..Reply::json(200, "")
        }
    }

    /// Close the connection without answering.
    #[must_use]
    pub fn reset() -> Reply {
        Reply {
            reset: true,
            ..Reply::json(200, "")
        }
    }

    /// This reply, after waiting `delay` before the headers.
    #[must_use]
    pub fn delayed(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    /// This reply, stalling for `stall` after `after` body bytes.
    #[must_use]
    pub fn stalled(mut self, after: usize, stall: Duration) -> Reply {
        self.stall = Some((after, stall));
        self
    }

    /// This reply, cut off after `after` body bytes (the head announces the whole body).
    #[must_use]
    pub fn cut_after(mut self, after: usize) -> Reply {
        self.cut = Some(after);
        self
    }

    /// This reply with another body.
    #[must_use]
    pub fn with_body(mut self, body: Vec<u8>) -> Reply {
        self.body = body;
        self
    }
}

/// A filtered `_nodes/stats/os` body: `percents` as nodes, `failed` failed nodes.
#[must_use]
pub fn nodes_body(percents: &[i64], failed: usize) -> String {
    let nodes: Vec<String> = percents
        .iter()
        .enumerate()
        .map(|(i, p)| format!("\"node{i}\":{{\"os\":{{\"cpu\":{{\"percent\":{p}}}}}}}"))
        .collect();
    format!(
        "{{\"_nodes\":{{\"total\":{},\"successful\":{},\"failed\":{failed}}},\"nodes\":{{{}}}}}",
        percents.len() + failed,
        percents.len(),
        nodes.join(",")
    )
}

/// What the stub saw of one request.
#[derive(Clone, Debug)]
pub struct Seen {
    /// The request method.
    pub method: String,
    /// The request target.
    pub target: String,
    /// The request body (read by its `Content-Length`).
    pub body: Vec<u8>,
    /// The `Authorization` header, if any.
    pub authorization: Option<String>,
    /// Whether the client asked to close the connection after this request.
    pub close: bool,
    /// Bytes of the request head (request line and headers).
    pub bytes: usize,
    /// When it arrived.
    pub at: Instant,
}

#[derive(Default)]
struct Script {
    queue: VecDeque<Reply>,
    default: Option<Reply>,
    seen: Vec<Seen>,
}

struct Shared {
    script: Mutex<Script>,
    stopping: AtomicBool,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    connections: AtomicUsize,
}

/// The stub server. Dropping it stops it.
pub struct Stub {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

/// The largest request body the stub reads.
const MAX_BODY: usize = 1 << 20;

/// The longest any connection thread lives, whatever the script says.
const MAX_CONNECTION_LIFETIME: Duration = Duration::from_secs(30);

impl Stub {
    /// Starts a stub on an ephemeral port of 127.0.0.1 answering `default` to every request.
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound.
    #[must_use]
    pub fn start(default: Reply) -> Stub {
        Stub::start_on("127.0.0.1:0", default)
    }

    /// [`Stub::start`] on `addr` (`"[::1]:0"` for IPv6 loopback).
    ///
    /// # Panics
    ///
    /// When `addr` cannot be bound.
    #[must_use]
    pub fn start_on(addr: &str, default: Reply) -> Stub {
        let listener = TcpListener::bind(addr).unwrap_or_else(|e| panic!("bind {addr}: {e}"));
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared {
            script: Mutex::new(Script {
                default: Some(default),
                ..Script::default()
            }),
            stopping: AtomicBool::new(false),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            connections: AtomicUsize::new(0),
        });
        let acceptor_shared = Arc::clone(&shared);
        let acceptor = thread::spawn(move || {
            for stream in listener.incoming() {
                if acceptor_shared.stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                acceptor_shared.connections.fetch_add(1, Ordering::SeqCst);
                let shared = Arc::clone(&acceptor_shared);
                thread::spawn(move || serve(stream, &shared));
            }
        });
        Stub {
            addr,
            shared,
            acceptor: Some(acceptor),
        }
    }

    /// `http://127.0.0.1:PORT` (`http://[::1]:PORT` on IPv6).
    #[must_use]
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://user:password@127.0.0.1:PORT`.
    #[must_use]
    pub fn url_with_credentials(&self, user: &str, password: &str) -> String {
        format!("http://{user}:{password}@{}", self.addr)
    }

    /// The answer to every request from now on (after queued ones).
    pub fn set(&self, reply: Reply) {
        self.script().default = Some(reply);
    }

    /// An answer for the next request only; queued answers go first, in order.
    pub fn push(&self, reply: Reply) {
        self.script().queue.push_back(reply);
    }

    /// Requests seen so far.
    #[must_use]
    pub fn seen(&self) -> Vec<Seen> {
        self.script().seen.clone()
    }

    /// How many requests were seen.
    #[must_use]
    pub fn requests(&self) -> usize {
        self.script().seen.len()
    }

    /// The most requests ever being answered at the same time: each counts from when it was
    /// read until its answer's last bytes are written, or until the stub sees that the client
    /// hung up, which can be a scheduling slice after the client gave up (count a poller's
    /// polls on its side for that: [`Recorded`](crate::Recorded)).
    #[must_use]
    pub fn max_in_flight(&self) -> usize {
        self.shared.max_in_flight.load(Ordering::SeqCst)
    }

    /// How many TCP connections were accepted.
    #[must_use]
    pub fn connections(&self) -> usize {
        self.shared.connections.load(Ordering::SeqCst)
    }

    /// Waits until `n` requests were seen or `timeout` passed; returns whether they were.
    #[must_use]
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if self.requests() >= n {
                return true;
            }
            thread::sleep(Duration::from_millis(5));
        }
        self.requests() >= n
    }

    fn script(&self) -> std::sync::MutexGuard<'_, Script> {
        self.shared
            .script
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl std::fmt::Debug for Stub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stub")
            .field("addr", &self.addr)
            .field("requests", &self.requests())
            .finish()
    }
}

impl Drop for Stub {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        // Unblock `accept`.
        let _ = TcpStream::connect(self.addr);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

/// Answers requests on one connection until the client closes it or the stub stops.
fn serve(stream: TcpStream, shared: &Shared) {
    let started = Instant::now();
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    // As OpenSearch (Netty) does: answers leave at once, not after a delayed ACK.
    let _ = stream.set_nodelay(true);
    let Ok(write_half) = stream.try_clone() else {
        return;
    };
    let mut writer = write_half;
    let mut reader = BufReader::new(stream);
    while !shared.stopping.load(Ordering::SeqCst) && started.elapsed() < MAX_CONNECTION_LIFETIME {
        let Some(Head {
            method,
            target,
            body,
            authorization,
            close,
            bytes,
        }) = read_request(&mut reader, shared)
        else {
            return;
        };
        let head_only = method == "HEAD";
        let reply = {
            let mut script = shared
                .script
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            script.seen.push(Seen {
                method,
                target,
                body,
                authorization,
                close,
                bytes,
                at: Instant::now(),
            });
            let queued = script.queue.pop_front();
            queued.or_else(|| script.default.clone())
        };
        let Some(reply) = reply else { return };
        let mut busy = Busy::start(shared);
        let keep_open = answer(&mut writer, reader.get_ref(), &reply, &mut busy, head_only);
        drop(busy);
        if !keep_open || close {
            let _ = writer.shutdown(Shutdown::Both);
            return;
        }
    }
}

/// What the stub keeps of a request head.
struct Head {
    method: String,
    target: String,
    body: Vec<u8>,
    authorization: Option<String>,
    close: bool,
    bytes: usize,
}

/// Reads one request head; `None` when the connection ends.
fn read_request(reader: &mut BufReader<TcpStream>, shared: &Shared) -> Option<Head> {
    let mut request_line = String::new();
    loop {
        match reader.read_line(&mut request_line) {
            Ok(0) => return None,
            Ok(_) => break,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if shared.stopping.load(Ordering::SeqCst) {
                    return None;
                }
            }
            Err(_) => return None,
        }
    }
    let method = request_line.split_whitespace().next()?.to_owned();
    let target = request_line.split_whitespace().nth(1)?.to_owned();
    let mut authorization = None;
    let mut close = false;
    let mut length = 0usize;
    let mut bytes = request_line.len();
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) => return None,
            Ok(n) if line.trim().is_empty() => {
                bytes += n;
                break;
            }
            Ok(n) => {
                bytes += n;
                if let Some((name, value)) = line.split_once(':') {
                    if name.eq_ignore_ascii_case("authorization") {
                        authorization = Some(value.trim().to_owned());
                    } else if name.eq_ignore_ascii_case("connection") {
                        close = value.trim().eq_ignore_ascii_case("close");
                    } else if name.eq_ignore_ascii_case("content-length") {
                        // Bodies here are small: a bigger one is not read (and the
                        // connection closes after the answer).
                        length = value.trim().parse().unwrap_or(usize::MAX);
                    }
                }
            }
            Err(_) => return None,
        }
    }
    let mut body = Vec::new();
    if length > MAX_BODY {
        close = true;
    } else if length > 0 {
        body = vec![0; length];
        std::io::Read::read_exact(reader, &mut body).ok()?;
    }
    Some(Head {
        method,
        target,
        body,
        authorization,
        close,
        bytes,
    })
}

/// Sleeps up to `duration`, returning early (with `false`) if the client hung up.
fn pause(stream: &TcpStream, duration: Duration, shared: &Shared) -> bool {
    let deadline = Instant::now() + duration;
    let _ = stream.set_read_timeout(Some(Duration::from_millis(10)));
    let mut probe = [0u8; 1];
    let alive = loop {
        if Instant::now() >= deadline {
            break true;
        }
        if shared.stopping.load(Ordering::SeqCst) {
            break false;
        }
        match stream.peek(&mut probe) {
            Ok(0) => break false,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Ok(_) => thread::sleep(Duration::from_millis(10)),
            Err(_) => break false,
        }
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    alive
}

/// Counts a request in flight from when it was read until its answer's last bytes go out
/// (or the exchange ends otherwise): counted before they are written, since a client that has
/// them may send its next request before this thread runs again.
struct Busy<'a> {
    shared: &'a Shared,
    counted: bool,
}

impl<'a> Busy<'a> {
    fn start(shared: &'a Shared) -> Self {
        let now = shared.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        shared.max_in_flight.fetch_max(now, Ordering::SeqCst);
        Busy {
            shared,
            counted: true,
        }
    }

    fn done(&mut self) {
        if std::mem::take(&mut self.counted) {
            self.shared.in_flight.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.done();
    }
}

/// Sends one reply; whether the connection may stay open.
fn answer(
    writer: &mut TcpStream,
    stream: &TcpStream,
    reply: &Reply,
    busy: &mut Busy<'_>,
    head_only: bool,
) -> bool {
    let shared = busy.shared;
    if !reply.delay.is_zero() && !pause(stream, reply.delay, shared) {
        return false;
    }
    if reply.reset {
        return false;
    }
    if let Some(raw) = &reply.raw {
        busy.done();
        let _ = writer.write_all(raw).and_then(|()| writer.flush());
        return false;
    }
    let mut head = format!("HTTP/1.1 {} {}\r\n", reply.status, reason(reply.status));
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("content-length: {}\r\n\r\n", reply.body.len()));
    if head_only {
        // An answer to HEAD has the length of the body it would have, and no body.
        busy.done();
        return writer.write_all(head.as_bytes()).is_ok() && writer.flush().is_ok();
    }
    if writer.write_all(head.as_bytes()).is_err() {
        return false;
    }
    if let Some(cut) = reply.cut {
        busy.done();
        let _ = writer.write_all(&reply.body[..cut.min(reply.body.len())]);
        let _ = writer.flush();
        return false;
    }
    let (first, rest) = match reply.stall {
        Some((after, _)) => reply.body.split_at(after.min(reply.body.len())),
        None => (&reply.body[..], &[][..]),
    };
    if reply.stall.is_none() {
        busy.done();
    }
    if writer
        .write_all(first)
        .and_then(|()| writer.flush())
        .is_err()
    {
        return false;
    }
    if let Some((_, stall)) = reply.stall {
        if !pause(stream, stall, shared) {
            return false;
        }
        busy.done();
        if writer.write_all(rest).is_err() {
            return false;
        }
    }
    writer.flush().is_ok()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        503 => "Service Unavailable",
        _ => "Status",
    }
}
