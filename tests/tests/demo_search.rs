//! The demo's searches when the cluster misbehaves, with a stand-in cluster (faults a real
//! one cannot be made to produce on demand): an error status, a body that is no search
//! answer, no answer at all. Each becomes a clear 502 or 503, as a page or as Fess's API
//! JSON, and the server goes on. Searches on the real cluster are in `real_cluster.rs`.

use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::time::Duration;

use load_examples::cli::{ConfigFrom, Options};
use load_examples::server::{RunningServer, start};
use load_tests::{Reply, Stub, wait_until};
use serde_json::Value;

fn serve(url: &str) -> RunningServer {
    let dir = std::env::temp_dir().join(format!("load-demo-search-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    // One file per cluster address: the tests run in parallel.
    let name: String = url
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let path: PathBuf = dir.join(format!("{name}.properties"));
    std::fs::write(
        &path,
        format!("web.load.control=80\nadaptive.load.control=0\nsearch_engine.http.url={url}\n"),
    )
    .expect("config");
    let options = Options {
        config: ConfigFrom::File(path),
        listen: "127.0.0.1:0".parse().expect("addr"),
        ..Options::default()
    };
    start(&options).expect("server starts")
}

fn get(addr: SocketAddr, target: &str) -> (u16, String) {
    let answer = load_tests::raw_get(addr, target);
    (answer.status, answer.text())
}

fn api_message(body: &str) -> (i64, String) {
    let value: Value = serde_json::from_str(body).expect("JSON");
    (
        value["response"]["status"].as_i64().unwrap_or(-1),
        value["response"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

#[test]
fn an_error_status_is_a_502() {
    let stub = Stub::start(Reply::cpu(&[10]));
    let server = serve(&stub.url());
    stub.set(Reply::json(
        500,
        r#"{"error":{"type":"search_phase_execution_exception","reason":"all shards failed"},"status":500}"#,
    ));
    let (status, page) = get(server.addr(), "/search?q=kalo");
    assert_eq!(status, 502, "{page}");
    assert!(page.contains("could not answer this search"), "{page}");
    assert!(
        page.contains("value=\"kalo\""),
        "the form keeps the query: {page}"
    );
    let (status, body) = get(server.addr(), "/api/v1/documents?q=kalo");
    assert_eq!(status, 502);
    assert_eq!(api_message(&body).0, 1, "{body}");
    // The server goes on: an empty query needs no cluster.
    assert_eq!(get(server.addr(), "/search").0, 200);
}

#[test]
fn an_answer_that_is_no_search_is_a_502() {
    // The node stats body, not a search answer.
    let stub = Stub::start(Reply::cpu(&[10]));
    let server = serve(&stub.url());
    let (status, page) = get(server.addr(), "/search?q=kalo");
    assert_eq!(status, 502, "{page}");
    stub.set(Reply::garbage());
    let (status, body) = get(server.addr(), "/api/v1/documents?q=kalo");
    assert_eq!(status, 502, "{body}");
}

#[test]
fn no_cluster_is_a_503_and_the_page_says_so() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let dead = listener.local_addr().expect("addr");
    drop(listener);
    let server = serve(&format!("http://admin:Hunter2-pw@{dead}"));
    let (status, page) = get(server.addr(), "/search?q=kalo");
    assert_eq!(status, 503, "{page}");
    assert!(page.contains("unavailable"), "{page}");
    assert!(
        !page.contains(&dead.to_string()),
        "no address for visitors: {page}"
    );
    let (status, body) = get(server.addr(), "/api/v1/documents?q=kalo");
    assert_eq!(status, 503);
    let (code, message) = api_message(&body);
    assert_eq!(code, 1);
    assert!(message.contains("unavailable"), "{body}");
    assert!(!body.contains("Hunter2"));
}

#[test]
fn hits_from_the_cluster_are_shown_escaped() {
    let stub = Stub::start(Reply::cpu(&[10]));
    let server = serve(&stub.url());
    stub.set(Reply::json(
        200,
        r#"{"took":4,"hits":{"total":{"value":1,"relation":"eq"},"hits":[
            {"_id":"9","_score":2.0,"_source":{"title":"<b>kalo</b>","url":"https://docs.example/k/9.html"},
             "highlight":{"content":["the \ue000kalo\ue001 <script>"]}}]}}"#,
    ));
    let (status, page) = get(server.addr(), "/search?q=kalo");
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("1 document(s), 4 ms."), "{page}");
    assert!(page.contains("&lt;b&gt;kalo&lt;/b&gt;"), "{page}");
    assert!(page.contains("the <em>kalo</em> &lt;script&gt;"), "{page}");
    let (status, body) = get(server.addr(), "/api/v1/documents?q=kalo");
    assert_eq!(status, 200);
    let value: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(value["response"]["record_count"], 1);
    assert_eq!(value["response"]["result"][0]["doc_id"], "9");
    assert_eq!(
        value["response"]["result"][0]["content_description"],
        "the kalo <script>"
    );
    // What went to the cluster: a search on the demo index, with the query.
    assert!(wait_until(Duration::from_secs(5), || {
        stub.seen().iter().any(|seen| {
            seen.method == "POST"
                && seen.target == "/load-control-demo/_search"
                && String::from_utf8_lossy(&seen.body).contains("\"query\":\"kalo\"")
        })
    }));
}

/// A document's address comes from the index, which others may write: only an `http` or
/// `https` address becomes a link (a `javascript:` one would run in the visitor's page),
/// and search pages forbid scripts.
#[test]
fn only_web_addresses_become_links() {
    let stub = Stub::start(Reply::cpu(&[10]));
    let server = serve(&stub.url());
    stub.set(Reply::json(
        200,
        r#"{"took":1,"hits":{"total":{"value":2,"relation":"eq"},"hits":[
            {"_id":"1","_score":1.0,"_source":{"title":"bad","url":"javascript:alert(document.cookie)"}},
            {"_id":"2","_score":1.0,"_source":{"title":"good","url":"https://docs.example/2.html"}}]}}"#,
    ));
    let answer = load_tests::raw_get(server.addr(), "/search?q=kalo");
    let page = answer.text();
    assert_eq!(answer.status, 200, "{page}");
    assert!(!page.contains("href=\"javascript"), "{page}");
    assert!(
        page.contains("href=\"https://docs.example/2.html\""),
        "{page}"
    );
    let policy = answer
        .header("content-security-policy")
        .unwrap_or_default()
        .to_owned();
    assert!(policy.contains("script-src 'none'"), "{policy:?}");
}

/// The cluster's own overload answers (429, 503) are passed on as 503 with
/// `Retry-After`: the visitor should come back, not report a broken search engine.
#[test]
fn a_busy_cluster_is_a_503_with_retry_after() {
    let stub = Stub::start(Reply::cpu(&[10]));
    let server = serve(&stub.url());
    for status in [429, 503] {
        stub.set(Reply::json(
            status,
            r#"{"error":{"type":"rejected_execution_exception","reason":"queue full"},"status":429}"#,
        ));
        let answer = load_tests::raw_get(server.addr(), "/api/v1/documents?q=kalo");
        assert_eq!(answer.status, 503, "{status}: {}", answer.text());
        assert!(answer.header("retry-after").is_some(), "{status}");
    }
}
