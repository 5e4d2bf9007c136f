//! `ClusterClient`, the requests of your own to the monitored cluster, against the stub:
//! what it sends, error statuses as answers, credentials, a dead address, a timeout and a
//! body over the cap. Its real-cluster use (index, bulk, search) is in `real_cluster.rs`.

use std::time::Duration;

use load_core::{config::ClusterUrls, source::SourceErrorKind};
use load_opensearch::OpenSearchOptions;
use load_opensearch::{ClusterClient, Method};
use load_tests::stub::nodes_body;
use load_tests::{Reply, Stub, dead_url};

fn urls(text: &str) -> ClusterUrls {
    ClusterUrls::parse(text).expect("urls")
}

#[test]
fn sends_json_and_returns_any_status_with_its_error() {
    let stub = Stub::start(Reply::json(200, r#"{"hits":{"hits":[]}}"#));
    stub.push(Reply::json(
        404,
        r#"{"error":{"type":"index_not_found_exception","reason":"no such index [docs]"},"status":404}"#,
    ));
    let client =
        ClusterClient::cluster(&urls(&stub.url()), &OpenSearchOptions::new()).expect("client");
    let query = br#"{"query":{"match":{"content":"load"}}}"#;
    let missing = smol::block_on(client.request(Method::Post, "/docs/_search", Some(query)))
        .expect("an answer");
    assert_eq!(missing.status, 404);
    assert!(!missing.is_success());
    assert_eq!(
        missing.error_summary(),
        "index_not_found_exception: no such index [docs]"
    );
    let found = smol::block_on(client.request(Method::Get, "/docs/_search?size=1", None))
        .expect("an answer");
    assert!(found.is_success());
    assert_eq!(found.body, br#"{"hits":{"hits":[]}}"#);

    let seen = stub.seen();
    assert_eq!(
        (seen[0].method.as_str(), seen[0].target.as_str()),
        ("POST", "/docs/_search")
    );
    assert_eq!(seen[0].body, query);
    assert_eq!(
        (seen[1].method.as_str(), seen[1].target.as_str()),
        ("GET", "/docs/_search?size=1")
    );
    // Both on one kept-alive connection.
    assert_eq!(stub.connections(), 1);
}

#[test]
fn credentials_are_sent_and_never_shown() {
    let stub = Stub::start(Reply::json(200, "{}"));
    let options = OpenSearchOptions::new().credentials("admin", "Hunter2-pw");
    let client = ClusterClient::cluster(&urls(&stub.url()), &options).expect("client");
    smol::block_on(client.request(Method::Get, "/", None)).expect("an answer");
    assert_eq!(
        stub.seen()[0].authorization.as_deref(),
        Some("Basic YWRtaW46SHVudGVyMi1wdw==")
    );
    assert!(!format!("{client:?}").contains("Hunter2"));

    let dead = dead_url().replace("http://", "http://admin:Hunter2-pw@");
    let client = ClusterClient::cluster(&urls(&dead), &OpenSearchOptions::new()).expect("client");
    let error = smol::block_on(client.request(Method::Get, "/", None)).expect_err("dead");
    assert_eq!(error.kind(), SourceErrorKind::Connect);
    assert!(!error.to_string().contains("Hunter2"), "{error}");
}

#[test]
fn a_dead_address_fails_once_then_the_next_answers() {
    let stub = Stub::start(Reply::json(200, "{}"));
    let dead = dead_url();
    let client = ClusterClient::cluster(
        &urls(&format!("{dead},{}", stub.url())),
        &OpenSearchOptions::new(),
    )
    .expect("client");
    assert_eq!(client.endpoints(), 2);
    let error = smol::block_on(client.request(Method::Get, "/", None)).expect_err("dead");
    assert!(error.to_string().contains(&dead), "{error}");
    let answer = smol::block_on(client.request(Method::Get, "/", None)).expect("the next");
    assert_eq!((answer.status, answer.endpoint), (200, 1));
}

#[test]
fn the_timeout_covers_the_whole_exchange_and_closes_its_connection() {
    let stub = Stub::start(Reply::json(200, "{}"));
    stub.push(Reply::json(200, "{}").delayed(Duration::from_secs(3)));
    let options = OpenSearchOptions::new().timeout(Duration::from_millis(300));
    let client = ClusterClient::cluster(&urls(&stub.url()), &options).expect("client");
    let error = smol::block_on(client.request(Method::Get, "/slow", None)).expect_err("slow");
    assert_eq!(error.kind(), SourceErrorKind::Timeout);
    // The next request does not wait behind the stuck connection: a new one answers.
    let answer = smol::block_on(client.request(Method::Get, "/next", None)).expect("next");
    assert_eq!(answer.status, 200);
    assert_eq!(stub.connections(), 2);
}

/// Found from outside: under a flood with control off, the demo abandoned searches whose
/// client had gone away, and the pool handed their connections to later searches, which
/// then read the late answer of another request (`invalid HTTP version`, logged as "cannot
/// connect"). A connection whose exchange was abandoned is never used again.
#[test]
fn an_abandoned_exchange_never_leaves_its_connection_for_the_next() {
    let stub = Stub::start(Reply::json(200, r#"{"answer":"second"}"#));
    stub.push(Reply::json(200, r#"{"answer":"first"}"#).delayed(Duration::from_millis(300)));
    // One connection, so that the next exchange would take the abandoned one's.
    let client = ClusterClient::with_connections(&urls(&stub.url()), &OpenSearchOptions::new(), 1)
        .expect("client");
    smol::block_on(async {
        let first = client.request(Method::Get, "/first", None);
        let gave_up = async {
            smol::Timer::after(Duration::from_millis(100)).await;
            None
        };
        // The client gives up after 100 ms: the exchange is dropped with its request sent.
        let outcome = smol::future::or(async { Some(first.await) }, gave_up).await;
        assert!(outcome.is_none(), "{outcome:?}");
        // The late answer reaches the connection.
        smol::Timer::after(Duration::from_millis(400)).await;
        for _ in 0..3 {
            let answer = client
                .request(Method::Get, "/second", None)
                .await
                .expect("an answer of its own");
            assert_eq!(answer.body, br#"{"answer":"second"}"#);
        }
    });
    assert_eq!(stub.requests(), 4);
}

/// Bytes that are no HTTP answer come from a connection that was made: the error says the
/// answer could not be read, with the node's address, never that it could not connect.
#[test]
fn an_answer_that_is_not_http_is_unreadable_not_a_connect_failure() {
    for bytes in [
        &b"SSH-2.0-OpenSSH_9.2\r\n\r\n"[..],
        b"/1.1 200 OK\r\n\r\n",
        b"\x00\x01garbage\n\n",
    ] {
        let stub = Stub::start(Reply::not_http(bytes));
        let client =
            ClusterClient::cluster(&urls(&stub.url()), &OpenSearchOptions::new()).expect("client");
        let error = smol::block_on(client.request(Method::Get, "/", None)).expect_err("not HTTP");
        let message = error.to_string();
        assert_ne!(error.kind(), SourceErrorKind::Connect, "{message}");
        assert!(!message.contains("connect"), "{message}");
        assert!(
            message.starts_with(&format!("{}: ", stub.url())),
            "{message}"
        );
    }
}

#[test]
fn a_body_over_the_cap_is_an_error() {
    let stub = Stub::start(Reply::megabytes(1));
    let options = OpenSearchOptions::new().max_body(64 * 1024);
    let client = ClusterClient::cluster(&urls(&stub.url()), &options).expect("client");
    let error = smol::block_on(client.request(Method::Get, "/big", None)).expect_err("big");
    assert!(matches!(error.kind(), SourceErrorKind::Body(_)), "{error}");
}

/// A request with a body is one write, or the two writes go out at once: with Nagle's
/// algorithm on, the body waits for the ACK of the head, which the peer delays by ~40 ms
/// on Linux, so every search would take 40 ms more (this capped the demo at 400 searches/s
/// over its 16 connections). Twenty POSTs in a row take about 20 × 40 ms = 800 ms with
/// the stall and a few milliseconds without; the bound sits far from both.
#[test]
fn posts_do_not_stall_on_nagle_and_delayed_acks() {
    let stub = Stub::start(Reply::json(200, r#"{"hits":{"hits":[]}}"#));
    let client =
        ClusterClient::cluster(&urls(&stub.url()), &OpenSearchOptions::new()).expect("client");
    let query = br#"{"query":{"match":{"content":"load"}}}"#;
    // The first exchange opens the connection (and runs in quick-ACK mode).
    smol::block_on(client.request(Method::Post, "/docs/_search", Some(query))).expect("first");
    let started = std::time::Instant::now();
    for _ in 0..20 {
        smol::block_on(client.request(Method::Post, "/docs/_search", Some(query)))
            .expect("an answer");
    }
    let took = started.elapsed();
    assert_eq!(stub.connections(), 1, "one kept-alive connection");
    assert!(took < Duration::from_millis(400), "20 POSTs took {took:?}");
}

/// A path is always a path on the cluster's own address: one that looks like a URL of its
/// own (`https://…`, `\\host`, `//host`) must not send the request, and with it the
/// `Authorization` header, anywhere else; nor may `..` climb out of an address's path
/// prefix (a cluster behind a proxy at `/search-engine/`).
#[test]
fn a_path_never_leaves_the_clusters_address() {
    let cluster = Stub::start(Reply::json(200, "{}"));
    let elsewhere = Stub::start(Reply::json(200, "{}"));
    let other = elsewhere.url().trim_start_matches("http://").to_owned();
    let options = OpenSearchOptions::new().credentials("admin", "Hunter2-pw");
    let client = ClusterClient::cluster(&urls(&cluster.url()), &options).expect("client");
    for path in [
        format!("/http://{other}/x"),
        format!("/\\\\{other}/x"),
        format!("//{other}/x"),
        format!("/\\/{other}/x"),
    ] {
        let outcome = smol::block_on(client.request(Method::Get, &path, None));
        if let Ok(answer) = &outcome {
            assert_eq!(answer.endpoint, 0, "{path}");
        }
        assert_eq!(elsewhere.requests(), 0, "{path} reached another address");
    }
    // Every request that was sent went to the cluster.
    assert!(cluster.requests() <= 4);

    let prefixed = ClusterClient::cluster(
        &urls(&format!("{}/search-engine/", cluster.url())),
        &OpenSearchOptions::new(),
    )
    .expect("client");
    let before = cluster.requests();
    let outcome = smol::block_on(prefixed.request(Method::Get, "/../admin", None));
    assert!(outcome.is_err(), "{outcome:?}");
    assert_eq!(cluster.requests(), before, "nothing sent");
    smol::block_on(prefixed.request(Method::Get, "/docs/_search", None)).expect("answer");
    assert_eq!(
        cluster.seen().last().map(|s| s.target.clone()).as_deref(),
        Some("/search-engine/docs/_search")
    );
}

/// A server in front of the cluster may answer HTTP/1.0 (Python's `http.server` does, and
/// so do some proxies): its answer is read, with its body delimited by its length or by the
/// connection's end, and its connection is not used again.
#[test]
fn an_http10_answer_is_read_and_its_connection_not_kept() {
    let body = nodes_body(&[37, 81], 0);
    let with_length = format!(
        "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let to_the_end = format!("HTTP/1.0 200 OK\nServer: SimpleHTTP/0.6 Python/3.12\n\n{body}");
    for answer in [with_length, to_the_end] {
        let stub = Stub::start(Reply::not_http(answer.as_bytes()));
        let client =
            ClusterClient::cluster(&urls(&stub.url()), &OpenSearchOptions::new()).expect("client");
        for _ in 0..2 {
            let answer = smol::block_on(client.request(Method::Get, "/_nodes/stats", None))
                .unwrap_or_else(|e| panic!("{answer:?}: {e}"));
            assert_eq!(
                (answer.status, answer.body.as_slice()),
                (200, body.as_bytes())
            );
        }
        assert_eq!(stub.connections(), 2, "{answer:?}: a connection each");
    }
}
