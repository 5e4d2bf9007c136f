use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::Response;
use pin_project_lite::pin_project;

use super::{Settle, Unrecorded};
use crate::PendingPermit;

pin_project! {
    /// The response future of [`super::LoadControlService`]: an admitted request's inner
    /// future holding its permit until it is ready, or a rejected request's busy response.
    ///
    /// Dropped before the inner future is ready (the client went away, or the inner service
    /// panicked), it drops the permit unsettled: the guard's abandons it
    /// ([`crate::RequestPermit::abandon`]): counted out, but its latency, which is the
    /// client's choice and not the cluster's, is not recorded.
    pub struct ResponseFuture<F, B, P = PendingPermit> {
        #[pin]
        state: State<F, B, P>,
    }
}

pin_project! {
    #[project = StateProj]
    enum State<F, B, P> {
        Admitted {
            #[pin]
            inner: F,
            permit: P,
        },
        Rejected {
            busy: Option<Response<B>>,
        },
    }
}

impl<F, B, P> ResponseFuture<F, B, P> {
    pub(super) fn admitted(inner: F, permit: P) -> Self {
        ResponseFuture {
            state: State::Admitted { inner, permit },
        }
    }

    pub(super) fn rejected(busy: Response<B>) -> Self {
        ResponseFuture {
            state: State::Rejected { busy: Some(busy) },
        }
    }
}

impl<F, B, E, P: Settle> Future for ResponseFuture<F, B, P>
where
    F: Future<Output = Result<Response<B>, E>>,
{
    type Output = Result<Response<B>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project().state.project() {
            StateProj::Admitted { inner, permit } => {
                let mut output = std::task::ready!(inner.poll(cx));
                // The answer is complete: counted out now, and recorded unless the inner
                // service marked it as having done none of the work.
                let unrecorded = output.as_mut().is_ok_and(|response| {
                    response.extensions_mut().remove::<Unrecorded>().is_some()
                });
                if unrecorded {
                    permit.abandon();
                } else {
                    permit.complete();
                }
                Poll::Ready(output)
            }
            StateProj::Rejected { busy } => match busy.take() {
                Some(busy) => Poll::Ready(Ok(busy)),
                None => panic!("`ResponseFuture` polled after completion"),
            },
        }
    }
}

impl<F, B, P> fmt::Debug for ResponseFuture<F, B, P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.state {
            State::Admitted { .. } => f
                .debug_struct("ResponseFuture")
                .field("admitted", &true)
                .finish_non_exhaustive(),
            State::Rejected { .. } => f
                .debug_struct("ResponseFuture")
                .field("rejected", &true)
                .finish(),
        }
    }
}
