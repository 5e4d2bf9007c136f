//! The cluster's HTTP/1.1 connections behind surf: one pool per address, and a connection
//! goes back to its pool only once its answer was read to the end.
//!
//! surf's own HTTP/1 client (http-client's `H1Client`) returns a connection to its pool
//! whenever the answer is dropped, read or not, and checks an idle one by reading up to four
//! bytes of it and throwing them away. A request abandoned after it was sent (a client that
//! went away, a timeout) thus left its connection for the next exchange, which read the late
//! answer of the other request as its own, or its tail after four lost bytes (`invalid HTTP
//! version`). Here an exchange that is dropped, fails, or leaves any of its answer unread
//! closes its connection, and an idle connection with bytes waiting in it is closed too.

use std::fmt;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use async_lock::{Semaphore, SemaphoreGuardArc};
use async_native_tls::{TlsConnector, TlsStream};
use async_net::TcpStream;
use futures::io::{AsyncBufRead, AsyncRead, AsyncWrite};
use surf::http::{Body, Request, Response, StatusCode, Url};

use crate::http10::Upgrade;

/// Why an exchange got no answer, by when it failed: what [`crate::errors`] turns into a
/// `SourceError`. Carried inside the `surf::Error` that surf hands back.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) phase: Phase,
    pub(crate) cause: String,
}

/// When an exchange failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Resolving, connecting or the TLS handshake: no connection.
    Connect,
    /// Connected, but the request could not be sent or the connection closed before a
    /// byte of the answer came.
    Closed,
    /// Bytes came that are not an HTTP answer's head.
    NotHttp,
    /// The request's address is none of the cluster's (not sent).
    Elsewhere,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.cause)
    }
}

impl std::error::Error for Failure {}

fn failure(phase: Phase, cause: impl fmt::Display) -> surf::Error {
    surf::Error::new(
        StatusCode::BadGateway,
        Failure {
            phase,
            cause: cause.to_string(),
        },
    )
}

/// The pools of the cluster's addresses, as surf's HTTP client.
pub(crate) struct Connections {
    pools: Vec<Arc<Pool>>,
    tls: TlsConnector,
    config: http_client::Config,
}

impl Connections {
    /// A pool for each distinct address of `bases`, at most `per_host` connections each,
    /// TLS with `tls` for `https` ones.
    pub(crate) fn new<'a>(
        bases: impl IntoIterator<Item = &'a Url>,
        per_host: usize,
        tls: TlsConnector,
    ) -> Connections {
        let mut pools: Vec<Arc<Pool>> = Vec::new();
        for base in bases {
            let Some(origin) = Origin::of(base) else {
                continue;
            };
            if !pools.iter().any(|pool| pool.origin == origin) {
                pools.push(Arc::new(Pool {
                    origin,
                    idle: Mutex::new(Vec::new()),
                    slots: Arc::new(Semaphore::new(per_host.max(1))),
                }));
            }
        }
        Connections {
            pools,
            tls,
            config: http_client::Config::new(),
        }
    }

    /// Connections kept open and idle, over every address.
    #[cfg(test)]
    fn idle(&self) -> usize {
        self.pools.iter().map(|pool| pool.idle_len()).sum()
    }

    async fn exchange(&self, request: Request) -> Result<Response, surf::Error> {
        let Some(pool) = Origin::of(request.url())
            .and_then(|origin| self.pools.iter().find(|pool| pool.origin == origin))
        else {
            return Err(failure(
                Phase::Elsewhere,
                format_args!("{} is none of the cluster's addresses", request.url()),
            ));
        };
        let slot = pool.slots.acquire_arc().await;
        let stream = match pool.take_idle() {
            Some(stream) => stream,
            None => {
                log::trace!("opening a connection to {}", pool.origin);
                pool.origin
                    .connect(&self.tls)
                    .await
                    .map_err(|e| failure(Phase::Connect, e))?
            }
        };
        let state = Arc::new(LeaseState::default());
        let lease = Lease {
            stream: Some(stream),
            upgrade: Upgrade::default(),
            pool: Arc::clone(pool),
            state: Arc::clone(&state),
            _slot: slot,
        };
        let mut response = async_h1::client::connect(lease, request)
            .await
            .map_err(|e| {
                let phase = if state.read.load(Ordering::Relaxed) == 0 {
                    Phase::Closed
                } else {
                    Phase::NotHttp
                };
                failure(phase, e)
            })?;
        // The body holds the connection: it goes back to the pool only if the body is read
        // to its end (then dropped); dropped before, it closes.
        let len = response.len();
        let body = response.take_body().into_reader();
        response.set_body(Body::from_reader(ToTheEnd { body, state }, len));
        Ok(response)
    }
}

impl fmt::Debug for Connections {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connections")
            .field(
                "pools",
                &self
                    .pools
                    .iter()
                    .map(|pool| (&pool.origin, pool.idle_len()))
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl http_client::HttpClient for Connections {
    fn send<'a, 'b>(
        &'a self,
        request: Request,
    ) -> Pin<Box<dyn Future<Output = Result<Response, surf::Error>> + Send + 'b>>
    where
        'a: 'b,
        Self: 'b,
    {
        Box::pin(self.exchange(request))
    }

    fn config(&self) -> &http_client::Config {
        &self.config
    }
}

/// Where a pool's connections go: scheme, host and port of an address.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Origin {
    tls: bool,
    host: Host,
    port: u16,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Host {
    Name(String),
    Ip(IpAddr),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.tls { "https" } else { "http" };
        match &self.host {
            Host::Name(name) => write!(f, "{scheme}://{name}:{}", self.port),
            Host::Ip(IpAddr::V6(ip)) => write!(f, "{scheme}://[{ip}]:{}", self.port),
            Host::Ip(ip) => write!(f, "{scheme}://{ip}:{}", self.port),
        }
    }
}

impl Origin {
    fn of(url: &Url) -> Option<Origin> {
        let tls = match url.scheme() {
            "http" => false,
            "https" => true,
            _ => return None,
        };
        let host = match url.host()? {
            surf::http::url::Host::Domain(name) => Host::Name(name.to_owned()),
            surf::http::url::Host::Ipv4(ip) => Host::Ip(IpAddr::V4(ip)),
            surf::http::url::Host::Ipv6(ip) => Host::Ip(IpAddr::V6(ip)),
        };
        Some(Origin {
            tls,
            host,
            port: url.port_or_known_default()?,
        })
    }

    /// A new connection: resolved, connected (no Nagle delay: a request's head and body
    /// leave in two writes), and TLS when the address says `https`.
    async fn connect(&self, tls: &TlsConnector) -> io::Result<Stream> {
        let tcp = match &self.host {
            Host::Name(name) => TcpStream::connect((name.as_str(), self.port)).await?,
            Host::Ip(ip) => TcpStream::connect((*ip, self.port)).await?,
        };
        tcp.set_nodelay(true)?;
        if !self.tls {
            return Ok(Stream::Plain(tcp));
        }
        let domain = match &self.host {
            Host::Name(name) => name.clone(),
            Host::Ip(ip) => ip.to_string(),
        };
        let stream = tls
            .connect(&domain, tcp)
            .await
            .map_err(|e| io::Error::other(format!("TLS handshake: {e}")))?;
        Ok(Stream::Tls(Box::new(stream)))
    }
}

/// One address's connections: the idle ones, and a slot for each connection that may be
/// open at once.
struct Pool {
    origin: Origin,
    idle: Mutex<Vec<Stream>>,
    slots: Arc<Semaphore>,
}

impl Pool {
    fn idle_len(&self) -> usize {
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// The most recently used idle connection that is still open and has nothing waiting
    /// in it; the others found on the way are closed.
    fn take_idle(&self) -> Option<Stream> {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        while let Some(mut stream) = idle.pop() {
            if stream.is_quiet() {
                return Some(stream);
            }
            log::trace!(
                "closing an idle connection to {}: closed by the peer, or bytes nobody asked for",
                self.origin
            );
        }
        None
    }

    fn put_back(&self, stream: Stream) {
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(stream);
    }
}

/// A connection, plain or TLS.
enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl Stream {
    /// Whether an idle connection is open with no byte waiting in it. A byte waiting is
    /// an answer nobody asked for (or the tail of one): such a connection is out of step
    /// and must not carry another exchange. Reads at most one byte, and only when it would
    /// not wait; a connection it read from is closed.
    fn is_quiet(&mut self) -> bool {
        let mut byte = [0u8; 1];
        let mut cx = Context::from_waker(futures::task::noop_waker_ref());
        matches!(Pin::new(self).poll_read(&mut cx, &mut byte), Poll::Pending)
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_close(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_close(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_close(cx),
        }
    }
}

/// What an exchange's connection knows of its answer.
#[derive(Default)]
struct LeaseState {
    /// Bytes read from the connection.
    read: AtomicU64,
    /// The answer's body was read to its end: the connection is in step.
    clean: AtomicBool,
}

/// A connection lent to one exchange, with its slot. Dropped after its answer was read to
/// the end, it goes back to the pool; dropped at any other time, it closes.
struct Lease {
    stream: Option<Stream>,
    /// The answer as the decoder reads it: an HTTP/1.0 one as HTTP/1.1.
    upgrade: Upgrade,
    pool: Arc<Pool>,
    state: Arc<LeaseState>,
    _slot: SemaphoreGuardArc,
}

impl Lease {
    fn stream(&mut self) -> io::Result<&mut Stream> {
        self.stream
            .as_mut()
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotConnected))
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let Some(stream) = self.stream.take() else {
            return;
        };
        if self.upgrade.was_http10() {
            log::trace!(
                "closing a connection to {}: it answered HTTP/1.0",
                self.pool.origin
            );
        } else if self.state.clean.load(Ordering::Acquire) {
            self.pool.put_back(stream);
        } else {
            log::trace!(
                "closing a connection to {}: its exchange ended before its answer did",
                self.pool.origin
            );
        }
    }
}

impl AsyncRead for Lease {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let Some(stream) = this.stream.as_mut() else {
            return Poll::Ready(Err(io::Error::from(io::ErrorKind::NotConnected)));
        };
        let polled = this.upgrade.poll_read(stream, cx, buf);
        if let Poll::Ready(Ok(n)) = polled {
            self.state.read.fetch_add(n as u64, Ordering::Relaxed);
        }
        polled
    }
}

impl AsyncWrite for Lease {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.stream() {
            Ok(stream) => Pin::new(stream).poll_write(cx, buf),
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.stream() {
            Ok(stream) => Pin::new(stream).poll_flush(cx),
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    fn poll_close(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.stream() {
            Ok(stream) => Pin::new(stream).poll_close(cx),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
}

/// An answer's body that marks its connection in step once read to its end.
struct ToTheEnd {
    body: Box<dyn AsyncBufRead + Unpin + Send + Sync + 'static>,
    state: Arc<LeaseState>,
}

impl AsyncRead for ToTheEnd {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.body).poll_read(cx, buf);
        if let Poll::Ready(Ok(0)) = polled
            && !buf.is_empty()
        {
            self.state.clean.store(true, Ordering::Release);
        }
        polled
    }
}

impl AsyncBufRead for ToTheEnd {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.body).poll_fill_buf(cx);
        if let Poll::Ready(Ok([])) = polled {
            this.state.clean.store(true, Ordering::Release);
        }
        polled
    }

    fn consume(mut self: Pin<&mut Self>, amt: usize) {
        Pin::new(&mut self.body).consume(amt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn one_pool_per_address() {
        let bases = [
            url("http://a:9200/"),
            url("http://a:9200/prefix/"),
            url("https://a:9200/"),
            url("http://[::1]:9200/"),
            url("http://127.0.0.1/"),
        ];
        let connections = Connections::new(&bases, 4, TlsConnector::new());
        assert_eq!(connections.pools.len(), 4);
        assert_eq!(
            connections.pools[2].origin,
            Origin {
                tls: false,
                host: Host::Ip("::1".parse().unwrap()),
                port: 9200
            }
        );
        assert_eq!(connections.pools[3].origin.port, 80);
        assert_eq!(connections.pools[2].origin.to_string(), "http://[::1]:9200");
        assert_eq!(connections.pools[1].origin.to_string(), "https://a:9200");
        assert_eq!(connections.idle(), 0);
    }

    #[test]
    fn a_request_elsewhere_is_not_sent() {
        let connections = Connections::new(&[url("http://a:9200/")], 1, TlsConnector::new());
        let request = Request::new(surf::http::Method::Get, url("http://b:9200/x"));
        let error = futures::executor::block_on(connections.exchange(request)).unwrap_err();
        let failure = error.downcast_ref::<Failure>().expect("ours");
        assert_eq!(failure.phase, Phase::Elsewhere);
    }
}
