//! The demo's routes as a tower service, and the library's layer in front of them: the
//! demo uses the layer it tells users to use.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response, StatusCode};
use load_runtime::tower::{Decide, LoadControlLayer, Unrecorded};
use load_smol::Runtime;
use tower_layer::Layer as _;
use tower_service::Service;

use super::routes::Routed;
use super::{App, ClusterSource};

/// The demo's routes, behind nothing: the pages and the searches. A 404 is marked
/// [`Unrecorded`] (a page that does not exist did no work: recorded, many instant 404s would
/// teach the in-flight cap a latency no search has).
pub struct Routes<R: Runtime + Default> {
    app: Arc<App<R>>,
}

impl<R: Runtime + Default> Routes<R> {
    /// The routes of `app`.
    #[must_use]
    pub fn new(app: Arc<App<R>>) -> Self {
        Routes { app }
    }
}

impl<R: Runtime + Default> std::fmt::Debug for Routes<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routes").field("app", &self.app).finish()
    }
}

impl<R: Runtime + Default> Clone for Routes<R> {
    fn clone(&self) -> Self {
        Routes {
            app: Arc::clone(&self.app),
        }
    }
}

impl<R, B> Service<Request<B>> for Routes<R>
where
    R: Runtime + Default + Sync + Send + 'static,
{
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let app = Arc::clone(&self.app);
        let uri = request.uri();
        let (path, query) = (
            uri.path().to_owned(),
            uri.query().unwrap_or_default().to_owned(),
        );
        drop(request);
        Box::pin(async move {
            let response = match app.route(&path, &query) {
                Routed::Ready(mut response) => {
                    if response.status() == StatusCode::NOT_FOUND {
                        response.extensions_mut().insert(Unrecorded);
                    }
                    response
                }
                Routed::Search { search, api, query } => app.searched(search, api, &query).await,
            };
            Ok(response)
        })
    }
}

/// Answers `request` through `layer` around `routes`.
pub(crate) async fn through<R, D, B>(
    layer: LoadControlLayer<R, ClusterSource, D>,
    routes: Routes<R>,
    request: Request<B>,
) -> Response<Full<Bytes>>
where
    R: Runtime + Default + Sync + Send + 'static,
    D: Decide<R, ClusterSource>,
{
    let mut service = layer.layer(routes);
    match service.call(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}
