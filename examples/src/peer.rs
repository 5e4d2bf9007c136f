//! A peer admission law, for the benchmarks only (`--peer-limiter vegas`): the Rust port of
//! Netflix's concurrency limiters (congestion-limiter's Vegas, each front end its own, as its
//! docs configure it for a server) decides instead of the limit mode, so that the closed
//! loop can measure both in the same runs. Excluded requests (admin, login, static files)
//! are never controlled, as in every mode.
//!
//! congestion-limiter needs tokio: its limiter shrinks in a task of its own. The peer keeps
//! a one-thread tokio runtime for that, beside the demo's own runtime.

use std::sync::Arc;

use congestion_limiter::aggregation::Percentile;
use congestion_limiter::limiter::{DefaultLimiter, Limiter, Outcome, Token};
use congestion_limiter::limits::{Vegas, Windowed};
use futures::FutureExt;

/// A peer's admission law, chosen with `--peer-limiter`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerLaw {
    /// congestion-limiter's Vegas, windowed at the 90th percentile (its docs' advice for
    /// stability), initial limit 10 (its README's example). Its Gradient is not offered:
    /// congestion-limiter 0.1.0 panics in it at the first latency below its moving average.
    Vegas,
}

/// The peer's limiter, and the runtime its releases run on.
pub struct Peer {
    limiter: Arc<DefaultLimiter<Windowed<Vegas, Percentile>>>,
    runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peer")
            .field("limit", &self.limiter.state().limit())
            .field("in_flight", &self.limiter.state().in_flight())
            .finish()
    }
}

impl Peer {
    /// The peer for `law`.
    ///
    /// # Errors
    ///
    /// The runtime cannot be built.
    pub fn new(law: PeerLaw) -> Result<Peer, String> {
        match law {
            PeerLaw::Vegas => {}
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("peer-limiter")
            .enable_time()
            .build()
            .map_err(|e| format!("the peer limiter's runtime: {e}"))?;
        Ok(Peer {
            limiter: Arc::new(DefaultLimiter::new(Windowed::new(
                Vegas::new_with_initial_limit(10),
                Percentile::new(0.9),
            ))),
            runtime,
        })
    }

    /// A token if the limiter admits a request now (it never waits).
    pub fn try_acquire(&self) -> Option<PeerToken> {
        let token = self.limiter.try_acquire().now_or_never().flatten()?;
        Some(PeerToken {
            token: Some(token),
            limiter: Arc::clone(&self.limiter),
            handle: self.runtime.handle().clone(),
        })
    }

    /// The limiter's limit and requests in flight now.
    #[must_use]
    pub fn state(&self) -> (usize, usize) {
        let state = self.limiter.state();
        (state.limit(), state.in_flight())
    }
}

/// An admitted request's token: [`PeerToken::complete`] records its latency; dropped
/// before, it is released without a sample (the client went away).
pub struct PeerToken {
    token: Option<Token>,
    limiter: Arc<DefaultLimiter<Windowed<Vegas, Percentile>>>,
    handle: tokio::runtime::Handle,
}

impl std::fmt::Debug for PeerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerToken").finish_non_exhaustive()
    }
}

impl PeerToken {
    /// The answer is complete: released with its latency, a success.
    pub fn complete(mut self) {
        self.release(Some(Outcome::Success));
    }

    fn release(&mut self, outcome: Option<Outcome>) {
        if let Some(token) = self.token.take() {
            let limiter = Arc::clone(&self.limiter);
            self.handle.spawn(async move {
                limiter.release(token, outcome).await;
            });
        }
    }
}

impl Drop for PeerToken {
    fn drop(&mut self) {
        self.release(None);
    }
}

/// Answers `request` with the peer deciding instead of the limit mode (benchmarks only):
/// the guard's classification of the target as received (an excluded page goes through),
/// the peer's token for a controlled one or the guard's busy response, the routes, and the
/// token released with a sample unless the routes marked the answer
/// [`load_runtime::tower::Unrecorded`] (as the layer records a permit). A target read as
/// either class is answered as a web request.
pub(crate) async fn through_the_peer<R, B>(
    app: Arc<crate::app::App<R>>,
    mut routes: crate::app::service::Routes<R>,
    request: hyper::Request<B>,
) -> hyper::Response<http_body_util::Full<bytes::Bytes>>
where
    R: load_smol::Runtime + Default + Sync + Send + 'static,
{
    use tower_service::Service as _;
    let target = request
        .uri()
        .path_and_query()
        .map_or("/", |target| target.as_str());
    let class = app.guard().control().paths().classify(target);
    let token = match (class, app.peer()) {
        (load_smol::Class::Excluded, _) | (_, None) => None,
        (class, Some(peer)) => match peer.try_acquire() {
            Some(token) => Some(token),
            None => return app.guard().busy_http_response(class),
        },
    };
    let mut response = match routes.call(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    };
    let unrecorded = response
        .extensions_mut()
        .remove::<load_runtime::tower::Unrecorded>()
        .is_some();
    match token {
        Some(token) if !unrecorded => token.complete(),
        // Released without a sample when dropped.
        _ => {}
    }
    response
}
