//! The runtime layer's tower layer on smol: the demo's own HTTP stack (hyper 1 on smol, its
//! connection limits and timeouts) with `LoadControlLayer` in front of a tower service,
//! asked over real loopback connections.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use futures::{AsyncReadExt, AsyncWriteExt};
use http_body_util::Full;
use hyper::{Request, Response};
use load_examples::http::{Handler, serve_connection};
use load_examples::server::default_limits;
use load_smol::{
    ControlConfig, CpuPercent, FixedSource, Instant, LoadControlLayer, LoadGuard, Outcome,
};
use tower::{Layer, Service, ServiceExt, service_fn};

static CLUSTER: FixedSource = FixedSource::new(CpuPercent::new(95));

/// The status line and body of `GET target` on a fresh connection.
async fn get(addr: SocketAddr, target: &str) -> (String, String) {
    let mut stream = smol::net::TcpStream::connect(addr).await.expect("connect");
    let request = format!("GET {target} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("send");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.expect("answer");
    let status = answer.lines().next().unwrap_or_default().to_string();
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default();
    (status, body)
}

#[test]
fn the_tower_layer_runs_in_front_of_hyper_on_smol() {
    let mut config = ControlConfig::new();
    config.web_threshold = 80.into();
    let guard: LoadGuard<&FixedSource> = LoadGuard::with_source(&config, &CLUSTER);
    let inner = service_fn(|_: Request<hyper::body::Incoming>| async {
        Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(b"results"))))
    });
    let service = LoadControlLayer::new(guard.clone()).layer(inner);
    let handle: Arc<Handler> = Arc::new(move |request| {
        let mut service = service.clone();
        Box::pin(async move {
            match service.call(request).await {
                Ok(response) => response,
                Err(never) => match never {},
            }
        })
    });
    smol::block_on(async {
        let listener = smol::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("address");
        let server = smol::spawn(async move {
            loop {
                let (stream, _) = listener.accept().await.expect("accept");
                smol::spawn(serve_connection(stream, handle.clone(), default_limits())).detach();
            }
        });

        // Before any sample (lazy start, fail-open) a search is served.
        let (status, body) = get(addr, "/search?q=rust").await;
        assert_eq!(
            (status.as_str(), body.as_str()),
            ("HTTP/1.1 200 OK", "results")
        );
        // The cluster at 95 %: the layer answers with Fess's busy page; the admin pages and
        // static files still go through.
        guard
            .control()
            .update(Instant::ZERO, Outcome::Sample(CpuPercent::new(95)));
        let (status, body) = get(addr, "/search?q=rust").await;
        assert_eq!(status, "HTTP/1.1 429 Too Many Requests");
        assert_eq!(
            body.as_bytes(),
            guard.busy_response(load_smol::Class::Web).body()
        );
        for target in ["/admin/", "/css/style.css"] {
            let (status, body) = get(addr, target).await;
            assert_eq!(
                (status.as_str(), body.as_str()),
                ("HTTP/1.1 200 OK", "results"),
                "{target}"
            );
        }
        assert_eq!(guard.stats().rejected_web, 1);
        drop(server);
    });
}

/// A server that answers each connection in a task of its own compiles with a borrowed
/// `'static` source, as with an owned one. The layer's service once asked the source to be
/// `CpuSource + Send + 'static`; proving a task `Send`, rustc asks that of every lifetime
/// the borrow could have, and a server on `&'static FixedSource` failed to compile
/// ("implementation of `CpuSource` is not general enough"). The service now asks nothing of
/// the source: the monitor's start is fixed where the guard is built.
#[test]
fn a_borrowed_static_source_answers_from_a_spawned_task() {
    let mut config = ControlConfig::new();
    config.web_threshold = 80.into();
    let guard: LoadGuard<&'static FixedSource> = LoadGuard::with_source(&config, &CLUSTER);
    let _ = guard
        .control()
        .update(Instant::ZERO, Outcome::Sample(CpuPercent::new(95)));
    let service = LoadControlLayer::new(guard).layer(service_fn(|_: Request<String>| async {
        Ok::<_, Infallible>(Response::new(Full::new(Bytes::from_static(b"results"))))
    }));
    // As hyper's connection does, the task holds the service's future by its projection
    // (`Oneshot` keeps `<S as Service>::Future`), which rustc normalizes with the task's
    // lifetimes erased.
    let status = smol::block_on(smol::spawn(async move {
        let request = Request::get("/search?q=rust")
            .body(String::new())
            .expect("request");
        let answer = service.oneshot(request).await;
        answer.map(|answer| answer.status().as_u16())
    }));
    assert_eq!(status, Ok(429), "armed at 95 %: the busy answer");
}
