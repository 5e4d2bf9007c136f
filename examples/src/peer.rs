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

/// The peer deciding for the library's layer instead of the guard's law (benchmarks only),
/// through the layer's seam for a limiter of one's own ([`load_runtime::tower::Decide`]):
/// the guard classifies the target (an excluded page or an uncontrolled path goes through
/// without a token) and answers a refusal with its busy response. A target read as either
/// class is answered as a web request.
#[derive(Clone, Debug)]
pub struct PeerDecides(pub Arc<Peer>);

/// An admitted request's token, if it was controlled.
#[derive(Debug)]
pub struct PeerPermit(Option<PeerToken>);

impl load_runtime::tower::Settle for PeerPermit {
    fn complete(&mut self) {
        if let Some(token) = self.0.take() {
            token.complete();
        }
    }

    fn abandon(&mut self) {
        // Released without a sample.
        drop(self.0.take());
    }
}

impl<R: load_smol::Runtime, S> load_runtime::tower::Decide<R, S> for PeerDecides {
    type Permit = PeerPermit;

    fn decide(
        &self,
        guard: &load_runtime::LoadGuard<R, S>,
        target: &str,
    ) -> Result<PeerPermit, load_smol::Class> {
        match guard.control().paths().classify(target) {
            load_smol::Class::Excluded => Ok(PeerPermit(None)),
            class => self
                .0
                .try_acquire()
                .map(|token| PeerPermit(Some(token)))
                .ok_or(class),
        }
    }
}
