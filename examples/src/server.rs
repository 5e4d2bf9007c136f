//! Serving: bind, accept, hand each connection to hyper, stop cleanly. The only part that
//! differs between runtimes is here, in [`Serve`]; the HTTP edge itself is [`crate::http`].

use std::future::Future;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use load_async_std::AsyncStd;
use load_smol::Runtime;
use load_smol::Smol;
use load_smol::monitor::Stop;

use crate::app::App;
use crate::cli::{CliError, Options, RuntimeKind, load_config};
use crate::http::{self, Handler, Limits};

/// A runtime that can run the server: block on a future, and accept connections.
pub trait Serve: Runtime + Default {
    /// Runs `future` to completion on this thread.
    fn block_on<F: Future>(future: F) -> F::Output;

    /// Accepts connections on `listener` and serves them with `app` within `limits` until
    /// `stop`. Accept errors never end it.
    fn accept_loop(
        app: Arc<App<Self>>,
        listener: TcpListener,
        limits: Limits,
        stop: Arc<Stop>,
    ) -> impl Future<Output = io::Result<()>> + Send;
}

fn handler<R: Runtime + Default + Sync>(app: Arc<App<R>>) -> Arc<Handler> {
    Arc::new(move |request| {
        let app = Arc::clone(&app);
        Box::pin(async move { app.handle(request).await })
    })
}

impl Serve for Smol {
    fn block_on<F: Future>(future: F) -> F::Output {
        ::smol::block_on(future)
    }

    async fn accept_loop(
        app: Arc<App<Self>>,
        listener: TcpListener,
        limits: Limits,
        stop: Arc<Stop>,
    ) -> io::Result<()> {
        let listener = ::smol::net::TcpListener::try_from(listener)?;
        let accept = move || {
            let listener = listener.clone();
            async move {
                let (stream, _) = listener.accept().await?;
                // Small responses leave at once, not after a delayed ACK.
                let _ = stream.set_nodelay(true);
                Ok(stream)
            }
        };
        let serve = http::accept_loop(
            accept,
            limits,
            handler(app),
            |connection| ::smol::spawn(connection).detach(),
            |pause: Duration| async move {
                ::smol::Timer::after(pause).await;
            },
        );
        http::until(serve, stop.wait()).await;
        Ok(())
    }
}

impl Serve for AsyncStd {
    fn block_on<F: Future>(future: F) -> F::Output {
        ::async_std::task::block_on(future)
    }

    async fn accept_loop(
        app: Arc<App<Self>>,
        listener: TcpListener,
        limits: Limits,
        stop: Arc<Stop>,
    ) -> io::Result<()> {
        let listener = Arc::new(::async_std::net::TcpListener::from(listener));
        let accept = move || {
            let listener = Arc::clone(&listener);
            async move {
                let (stream, _) = listener.accept().await?;
                // See the smol loop: no Nagle delay on responses.
                let _ = stream.set_nodelay(true);
                Ok(stream)
            }
        };
        let serve = http::accept_loop(
            accept,
            limits,
            handler(app),
            |connection| drop(::async_std::task::spawn(connection)),
            ::async_std::task::sleep,
        );
        http::until(serve, stop.wait()).await;
        Ok(())
    }
}

/// Applies a reloaded configuration to a running app.
type Reload = Box<dyn Fn(&load_smol::Config) + Send + Sync>;

/// A server running on its own thread. Dropping it stops it.
pub struct RunningServer {
    addr: SocketAddr,
    stop: Arc<Stop>,
    reload: Reload,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl std::fmt::Debug for RunningServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningServer")
            .field("addr", &self.addr)
            .field("stopped", &self.has_stopped())
            .finish_non_exhaustive()
    }
}

impl RunningServer {
    /// The address it listens on.
    #[must_use]
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Applies a new configuration at run time (see [`App::reload`]).
    pub fn reload(&self, config: &load_smol::Config) {
        (self.reload)(config);
    }

    /// Whether its thread has ended (after [`RunningServer::stop`]; accept errors never end
    /// it).
    #[must_use]
    pub fn has_stopped(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Stops accepting, stops the crawler and the monitors, and waits for all of it.
    ///
    /// # Errors
    ///
    /// The error that ended the accept loop, if one did.
    pub fn stop(mut self) -> io::Result<()> {
        self.stop_and_join()
    }

    fn stop_and_join(&mut self) -> io::Result<()> {
        self.stop.request();
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(io::Error::other("the server thread panicked")),
            None => Ok(()),
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        let _ = self.stop_and_join();
    }
}

/// The listen queue asked for: room for a burst that opens its connections before the
/// server accepts them (the kernel grants at most `net.core.somaxconn`, 4096 on Linux since
/// 5.4). The standard library asks for 128, and a connection beyond the queue is dropped for
/// the client to retry a second later.
pub const LISTEN_BACKLOG: i32 = 4_096;

/// Binds `listen` with a clear error ("address in use" names the address), listening with
/// a queue of [`LISTEN_BACKLOG`] connections.
///
/// # Errors
///
/// [`CliError::Setup`] when the address cannot be bound.
pub fn bind(listen: SocketAddr) -> Result<TcpListener, CliError> {
    use socket2::{Domain, Protocol, Socket, Type};
    let setup = |e: io::Error| CliError::Setup(format!("cannot listen on {listen}: {e}"));
    let socket = Socket::new(
        Domain::for_address(listen),
        Type::STREAM,
        Some(Protocol::TCP),
    )
    .map_err(setup)?;
    // What `TcpListener::bind` does on Unix: a restarted server binds at once.
    #[cfg(unix)]
    socket.set_reuse_address(true).map_err(setup)?;
    socket.bind(&listen.into()).map_err(setup)?;
    socket.listen(LISTEN_BACKLOG).map_err(setup)?;
    socket.set_nonblocking(true).map_err(setup)?;
    Ok(socket.into())
}

/// Serves `app` on `listener` from a new thread running runtime `R`.
///
/// # Errors
///
/// [`CliError::Setup`] when the listener's address cannot be read or the thread cannot be
/// started.
pub fn start_app<R: Serve>(
    app: Arc<App<R>>,
    listener: TcpListener,
) -> Result<RunningServer, CliError> {
    start_app_with(app, listener, default_limits())
}

/// The limits for this process: the connection limit below its open-files limit.
#[must_use]
pub fn default_limits() -> Limits {
    Limits::for_open_files(http::open_files_limit().unwrap_or(1024))
}

/// [`start_app`] with explicit [`Limits`].
///
/// # Errors
///
/// As [`start_app`].
pub fn start_app_with<R: Serve>(
    app: Arc<App<R>>,
    listener: TcpListener,
    limits: Limits,
) -> Result<RunningServer, CliError> {
    let addr = listener
        .local_addr()
        .map_err(|e| CliError::Setup(format!("cannot read the listening address: {e}")))?;
    let stop = Arc::new(Stop::new());
    let thread_stop = Arc::clone(&stop);
    let reload_app = Arc::clone(&app);
    let reload: Reload = Box::new(move |config| reload_app.reload(config));
    let thread = std::thread::Builder::new()
        .name("search-server".into())
        .spawn(move || {
            R::block_on(async move {
                let crawler = Arc::clone(&app);
                R::default().spawn(async move { crawler.crawl().await });
                let result = R::accept_loop(Arc::clone(&app), listener, limits, thread_stop).await;
                app.shutdown().await;
                result
            })
        })
        .map_err(|e| CliError::Setup(format!("cannot start the server thread: {e}")))?;
    Ok(RunningServer {
        addr,
        stop,
        reload,
        thread: Some(thread),
    })
}

/// Reads the configuration, binds, builds the app for the chosen runtime and starts it.
///
/// # Errors
///
/// [`CliError::Setup`] with one line naming what is wrong.
pub fn start(options: &Options) -> Result<RunningServer, CliError> {
    let config = load_config(options)?;
    let listener = bind(options.listen)?;
    describe(&config, options.runtime);
    let open_files = http::open_files_limit();
    let mut limits = Limits::for_open_files(open_files.unwrap_or(1024));
    if let Some(max) = options.max_connections {
        limits.max_connections = max;
    }
    if let Some(idle) = options.idle_timeout {
        limits.idle_timeout = idle;
    }
    log::info!(
        "Serving at most {} connections at once (open files limit: {}); a connection idle for \
         {:?} is closed, and one is closed after {} requests",
        limits.max_connections,
        open_files.map_or_else(|| "unknown".to_owned(), |n| n.to_string()),
        limits.idle_timeout,
        limits.max_requests_per_connection
    );
    match options.runtime {
        RuntimeKind::Smol => start_app_with(
            App::<Smol>::new_with(config, &options.demo).map_err(CliError::Setup)?,
            listener,
            limits,
        ),
        RuntimeKind::AsyncStd => start_app_with(
            App::<AsyncStd>::new_with(config, &options.demo).map_err(CliError::Setup)?,
            listener,
            limits,
        ),
    }
}

/// Logs what the configuration means, once, at start-up.
fn describe(config: &load_smol::Config, runtime: RuntimeKind) {
    log::info!("Runtime: {}", runtime.name());
    match &config.cluster.urls {
        Some(url) => log::info!("Search engine: {url}"),
        None => log::info!(
            "No search_engine.http.url: the cluster CPU signal is this machine's own CPU \
             (single-box mode, as when the search engine runs on this host)"
        ),
    }
    if config.control.http_control_enabled()
        && config.control.admission == load_smol::AdmissionMode::Limit
    {
        log::info!(
            "HTTP load control (load.control.admission=limit): at cluster CPU >= {}% (web) and \
             >= {}% (API), and for {} polls after, requests are admitted under an in-flight cap \
             learnt from their completions (initially {}), the rest get 429 (>= 100 means \
             never); polled every {:?} from the first controlled request",
            config.control.web_threshold,
            config.control.api_threshold,
            config.control.admission_cooloff,
            config.control.admission_initial,
            config.control.monitor_interval
        );
    } else if config.control.http_control_enabled() {
        log::info!(
            "HTTP load control: web requests get 429 at cluster CPU >= {}%, API requests at >= {}% \
             (>= 100 means never); polled every {:?} from the first controlled request",
            config.control.web_threshold,
            config.control.api_threshold,
            config.control.monitor_interval
        );
    } else {
        log::info!("HTTP load control is off (web.load.control and api.load.control are >= 100)");
    }
    if config.control.adaptive_enabled() {
        log::info!(
            "Adaptive load control: background work waits while this machine's CPU is >= {}%",
            config.control.adaptive_threshold
        );
    } else {
        log::info!("Adaptive load control is off (adaptive.load.control <= 0 or above 100)");
    }
}
