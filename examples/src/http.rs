//! The server's HTTP edge on hyper 1, for smol and async-std alike: a futures-io stream as
//! hyper's IO, async-io's timer as hyper's timer, and an accept loop that holds under abuse
//! (accept errors, descriptor exhaustion, idle and slow connections).

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::future::{Either, select};
use futures::io::{AsyncRead, AsyncWrite};
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};

/// How the server treats connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Connections served at once; more wait in the listen backlog.
    pub max_connections: usize,
    /// Longest wait for a request's head, for the next request on a kept-alive connection
    /// (an idle connection is closed after this), and for a write to make progress (a
    /// client that stops reading is cut off after this).
    pub idle_timeout: Duration,
    /// Requests served on one connection before it is closed (`Connection: close` on the
    /// last response), so that no client holds one connection forever.
    pub max_requests_per_connection: u32,
}

impl Limits {
    /// Descriptors kept for the process's own work (the cluster poll, files, logs).
    pub const RESERVED_DESCRIPTORS: u64 = 64;

    /// Connections served at once by default, whatever the open-files limit: each can hold
    /// up to [`MAX_HEAD`] of buffered head and the kernel's socket buffers, so an unbounded
    /// limit would let a flood take the memory instead.
    pub const DEFAULT_MAX_CONNECTIONS: u64 = 4_096;

    /// The defaults, with the connection limit below `open_files` (the soft
    /// `RLIMIT_NOFILE`): three quarters of it, at least [`Self::RESERVED_DESCRIPTORS`]
    /// below it, and at most [`Self::DEFAULT_MAX_CONNECTIONS`].
    #[must_use]
    pub fn for_open_files(open_files: u64) -> Limits {
        let below = open_files.saturating_sub(Self::RESERVED_DESCRIPTORS);
        let share = open_files / 4 * 3;
        let max = below.min(share).clamp(8, Self::DEFAULT_MAX_CONNECTIONS);
        Limits {
            max_connections: usize::try_from(max).unwrap_or(usize::MAX),
            idle_timeout: Duration::from_secs(60),
            max_requests_per_connection: 10_000,
        }
    }
}

/// The soft limit on open files of this process (`RLIMIT_NOFILE`), `None` where it cannot
/// be read.
#[must_use]
pub fn open_files_limit() -> Option<u64> {
    rlimit::Resource::NOFILE.get_soft().ok()
}

/// A futures-io stream as hyper's IO, with a deadline on write progress: a write or flush
/// that makes no progress for the deadline (a client that pipelines requests and never
/// reads the answers, so the socket's buffers fill) fails with `TimedOut`, which closes the
/// connection and frees its slot.
#[derive(Debug)]
pub struct Io<S> {
    stream: S,
    deadline: Duration,
    stalled: Option<async_io::Timer>,
}

impl<S> Io<S> {
    /// `stream`, whose writes must progress within `deadline`.
    pub fn new(stream: S, deadline: Duration) -> Io<S> {
        Io {
            stream,
            deadline,
            stalled: None,
        }
    }

    /// A write's outcome: progress clears the stall timer; no progress starts it, and
    /// fails once it fires.
    fn progressed<T>(
        &mut self,
        result: Poll<io::Result<T>>,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<T>> {
        if result.is_ready() {
            self.stalled = None;
            return result;
        }
        let deadline = self.deadline;
        let timer = self
            .stalled
            .get_or_insert_with(|| async_io::Timer::after(deadline));
        match Pin::new(timer).poll(cx) {
            Poll::Ready(_) => {
                self.stalled = None;
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the client read nothing within the deadline",
                )))
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S: AsyncRead + Unpin> hyper::rt::Read for Io<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        // Through a stack buffer: filling hyper's uninitialised buffer directly needs
        // `unsafe`, which this workspace does not allow. One copy of each read.
        let mut chunk = [0u8; 8192];
        let want = buf.remaining().min(chunk.len());
        match Pin::new(&mut self.stream).poll_read(cx, &mut chunk[..want]) {
            Poll::Ready(Ok(n)) => {
                buf.put_slice(&chunk[..n]);
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl<S: AsyncWrite + Unpin> hyper::rt::Write for Io<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let result = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.progressed(result, cx)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let result = Pin::new(&mut self.stream).poll_flush(cx);
        self.progressed(result, cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_close(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let result = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.progressed(result, cx)
    }
}

/// async-io's timer (the reactor under both smol and async-std) as hyper's timer.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timer;

struct Sleep(async_io::Timer);

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        Pin::new(&mut self.0).poll(cx).map(drop)
    }
}

impl hyper::rt::Sleep for Sleep {}

impl hyper::rt::Timer for Timer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(Sleep(async_io::Timer::after(duration)))
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(Sleep(async_io::Timer::at(deadline)))
    }
}

/// The longest request-target served; a longer one gets 414 (RFC 9112 recommends
/// supporting at least 8,000 octets).
pub const MAX_TARGET: usize = 8_000;

/// The largest request head read (request line and header fields); a larger one gets 431.
pub const MAX_HEAD: usize = 80 * 1024;

/// A refusal of the edge itself; the connection is closed after it, as hyper does after
/// the requests it cannot parse.
fn plain(status: hyper::StatusCode, text: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain;charset=UTF-8"),
    );
    headers.insert(
        hyper::header::CONNECTION,
        hyper::header::HeaderValue::from_static("close"),
    );
    response
}

/// What answers one request.
pub type Handler = dyn Fn(
        Request<hyper::body::Incoming>,
    ) -> Pin<Box<dyn Future<Output = Response<Full<Bytes>>> + Send>>
    + Send
    + Sync;

/// Serves every request on one connection with `handle`, within `limits`, until the client
/// closes it, it stays idle past the idle timeout, or it reaches the request limit.
pub async fn serve_connection<S>(stream: S, handle: Arc<Handler>, limits: Limits)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let served = Arc::new(AtomicU32::new(0));
    let service = service_fn(move |request: Request<hyper::body::Incoming>| {
        let count = served.fetch_add(1, Ordering::Relaxed) + 1;
        let target = request
            .uri()
            .path_and_query()
            .map_or(0, |t| t.as_str().len());
        let hosts = request
            .headers()
            .get_all(hyper::header::HOST)
            .iter()
            .count();
        let early = if target > MAX_TARGET {
            Some(plain(
                hyper::StatusCode::URI_TOO_LONG,
                "Request-target too long.\n",
            ))
        } else if request.version() == hyper::Version::HTTP_11 && hosts != 1 {
            // RFC 9112, 3.2: exactly one Host header field in an HTTP/1.1 request.
            Some(plain(
                hyper::StatusCode::BAD_REQUEST,
                "An HTTP/1.1 request needs exactly one Host header.\n",
            ))
        } else if request.method() == hyper::Method::CONNECT {
            Some(plain(
                hyper::StatusCode::METHOD_NOT_ALLOWED,
                "This server is no proxy.\n",
            ))
        } else {
            None
        };
        let pending = match early {
            Some(response) => Either::Left(std::future::ready(response)),
            None => Either::Right(handle(request)),
        };
        let last = count >= limits.max_requests_per_connection;
        async move {
            let mut response = pending.await;
            if last {
                response.headers_mut().insert(
                    hyper::header::CONNECTION,
                    hyper::header::HeaderValue::from_static("close"),
                );
            }
            Ok::<_, Infallible>(response)
        }
    });
    let connection = http1::Builder::new()
        .timer(Timer)
        // A head larger than this is refused with 431; a request-target over 65,534 bytes
        // (hyper's own limit) with 414.
        .max_buf_size(MAX_HEAD)
        // Also the idle timeout: hyper waits at most this long for the next request's head.
        .header_read_timeout(limits.idle_timeout)
        .keep_alive(true)
        .serve_connection(Io::new(stream, limits.idle_timeout), service);
    if let Err(error) = connection.await {
        log::debug!("connection ended: {error}");
    }
}

/// Runs `accept` forever: an accept error never ends it. At most `limits.max_connections`
/// connections are served at once (more wait in the listen backlog); on an error (out of
/// descriptors, an aborted handshake) it logs once per burst, backs off briefly and goes on.
pub async fn accept_loop<S, A, F, Sp, Sl, SlF>(
    mut accept: A,
    limits: Limits,
    handle: Arc<Handler>,
    spawn: Sp,
    sleep: Sl,
) where
    A: FnMut() -> F,
    F: Future<Output = io::Result<S>>,
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    Sp: Fn(Pin<Box<dyn Future<Output = ()> + Send>>),
    Sl: Fn(Duration) -> SlF,
    SlF: Future<Output = ()>,
{
    let slots = Arc::new(async_lock::Semaphore::new(limits.max_connections));
    let mut burst = Burst::default();
    loop {
        let permit = slots.acquire_arc().await;
        match accept().await {
            Ok(stream) => {
                burst.ended();
                let handle = Arc::clone(&handle);
                spawn(Box::pin(async move {
                    serve_connection(stream, handle, limits).await;
                    drop(permit);
                }));
            }
            Err(error) => {
                drop(permit);
                let pause = burst.failed(&error);
                sleep(pause).await;
            }
        }
    }
}

/// A run of accept errors: logged when it starts and when it ends, with a growing pause.
#[derive(Debug, Default)]
struct Burst {
    errors: u64,
    started: Option<Instant>,
}

impl Burst {
    const FIRST_PAUSE: Duration = Duration::from_millis(5);
    const MAX_PAUSE: Duration = Duration::from_secs(1);

    fn failed(&mut self, error: &io::Error) -> Duration {
        self.errors += 1;
        if self.started.is_none() {
            self.started = Some(Instant::now());
            log::warn!(
                "accept failed: {error}{}; still serving, retrying with back-off",
                if is_descriptor_exhaustion(error) {
                    " (out of file descriptors: lower --max-connections or raise `ulimit -n`)"
                } else {
                    ""
                }
            );
        }
        let doublings = u32::try_from(self.errors.saturating_sub(1).min(16)).unwrap_or(16);
        (Self::FIRST_PAUSE * 2u32.saturating_pow(doublings)).min(Self::MAX_PAUSE)
    }

    fn ended(&mut self) {
        if let Some(started) = self.started.take() {
            log::info!(
                "accepting connections again after {} failed accepts over {:.1} s",
                self.errors,
                started.elapsed().as_secs_f64()
            );
        }
        self.errors = 0;
    }
}

fn is_descriptor_exhaustion(error: &io::Error) -> bool {
    // EMFILE (24) and ENFILE (23) on Linux.
    matches!(error.raw_os_error(), Some(23 | 24))
}

/// Runs `serve` until `stop` completes.
pub async fn until<T>(serve: impl Future<Output = T>, stop: impl Future<Output = ()>) {
    futures::pin_mut!(serve);
    futures::pin_mut!(stop);
    match select(serve, stop).await {
        Either::Left(_) | Either::Right(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_keep_descriptors_for_the_process() {
        // The README's defaults for the rest: 60 s idle, 10,000 requests a connection.
        let limits = Limits::for_open_files(256);
        assert_eq!(limits.idle_timeout, Duration::from_secs(60));
        assert_eq!(limits.max_requests_per_connection, 10_000);
        assert_eq!(Limits::for_open_files(256).max_connections, 192);
        assert_eq!(Limits::for_open_files(1024).max_connections, 768);
        assert_eq!(Limits::for_open_files(100).max_connections, 36);
        assert_eq!(Limits::for_open_files(10).max_connections, 8);
        assert_eq!(Limits::for_open_files(20_000).max_connections, 4_096);
        assert_eq!(Limits::for_open_files(1 << 20).max_connections, 4_096);
    }

    #[test]
    fn a_burst_backs_off_and_logs_once() {
        let mut burst = Burst::default();
        let emfile = io::Error::from_raw_os_error(24);
        let pauses: Vec<Duration> = (0..12).map(|_| burst.failed(&emfile)).collect();
        assert_eq!(pauses[0], Duration::from_millis(5));
        assert_eq!(pauses[1], Duration::from_millis(10));
        assert_eq!(*pauses.last().expect("pauses"), Duration::from_secs(1));
        assert!(pauses.windows(2).all(|w| w[0] <= w[1]));
        assert!(burst.started.is_some());
        burst.ended();
        assert_eq!((burst.errors, burst.started), (0, None));
        assert_eq!(burst.failed(&emfile), Duration::from_millis(5));
    }
}
