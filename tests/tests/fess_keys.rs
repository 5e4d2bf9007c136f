//! Fess users' connection keys and variables, end to end on the search-server: credentials
//! from `search_engine.username`/`search_engine.password` and from the environment, a
//! comma-separated list with its first node down (round robin), IPv6 loopback, and the
//! password in no log line, `/admin/stats` or `/metrics`.
//!
//! One test runs the scenarios in turn, because the log capture is global to this binary.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use load_examples::app::{DemoOptions, SearchMode};
use load_examples::cli::{ConfigFrom, Options};
use load_examples::server::{RunningServer, start};
use load_tests::logs;
use load_tests::{Reply, Stub, dead_url, wait_until};

const PASSWORD: &str = "Zq-s3cr#t,pw";

fn basic(user: &str, password: &str) -> String {
    surf::http::auth::BasicAuth::new(user, password)
        .value()
        .to_string()
}

/// A properties file in a fresh directory.
fn file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("load-fess-keys-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("fess_config.properties");
    std::fs::write(&path, text).expect("write");
    path
}

fn serve(config: PathBuf, env: &[(&'static str, &str)]) -> RunningServer {
    let options = Options {
        config: ConfigFrom::File(config),
        listen: "127.0.0.1:0".parse().expect("addr"),
        env: env.iter().map(|(k, v)| (*k, (*v).to_owned())).collect(),
        // The stub stands in for the cluster's node stats only.
        demo: DemoOptions {
            search: SearchMode::Builtin,
            ..DemoOptions::default()
        },
        ..Options::default()
    };
    start(&options).expect("server starts")
}

fn get(addr: SocketAddr, target: &str) -> (u16, String) {
    let answer = load_tests::raw_get(addr, target);
    (answer.status, answer.text())
}

fn stats(server: &RunningServer) -> serde_json::Value {
    let (status, body) = get(server.addr(), "/admin/stats");
    assert_eq!(status, 200);
    serde_json::from_str(&body).expect("stats JSON")
}

/// Asserts the server's views never show the password, and that the last poll was
/// answered by `answered`.
fn shows_no_password(server: &RunningServer, answered: &str) {
    let stats = stats(server);
    assert_eq!(stats["cluster_answered"], answered, "{stats}");
    let (_, metrics) = get(server.addr(), "/metrics");
    assert!(
        metrics.contains(&format!(
            "load_control_cluster_answered{{url=\"{answered}\"}} 1"
        )),
        "{metrics}"
    );
    for shown in [stats.to_string(), metrics] {
        assert!(!shown.contains("Zq-s3cr"), "{shown}");
    }
}

#[test]
fn fess_connection_keys_end_to_end() {
    logs::start();

    // 1. Credentials from the keys (the bug: ignored, every poll got 401).
    let stub = Stub::start(Reply::cpu(&[10]));
    let config = file(
        "keys",
        &format!(
            "web.load.control=80\nsearch_engine.http.url={}\n\
             search_engine.username=admin\nsearch_engine.password={PASSWORD}\n",
            stub.url()
        ),
    );
    let server = serve(config, &[]);
    assert_eq!(get(server.addr(), "/search?q=a").0, 200);
    assert!(stub.wait_for_requests(1, Duration::from_secs(10)));
    assert_eq!(
        stub.seen()[0].authorization.as_deref(),
        Some(basic("admin", PASSWORD).as_str())
    );
    assert!(wait_until(Duration::from_secs(10), || {
        stats(&server)["polls"].as_u64().is_some_and(|n| n >= 1)
    }));
    shows_no_password(&server, &stub.url());
    drop(server);

    // 2. Credentials from Fess's environment variables, over the file's.
    let stub = Stub::start(Reply::cpu(&[10]));
    let config = file(
        "env",
        "web.load.control=80\nsearch_engine.http.url=http://file.invalid:9200\n\
         search_engine.username=fileuser\nsearch_engine.password=filepass\n",
    );
    let server = serve(
        config,
        &[
            ("SEARCH_ENGINE_HTTP_URL", &stub.url()),
            ("SEARCH_ENGINE_USERNAME", "envuser"),
            ("SEARCH_ENGINE_PASSWORD", PASSWORD),
        ],
    );
    assert_eq!(get(server.addr(), "/search?q=a").0, 200);
    assert!(stub.wait_for_requests(1, Duration::from_secs(10)));
    assert_eq!(
        stub.seen()[0].authorization.as_deref(),
        Some(basic("envuser", PASSWORD).as_str())
    );
    drop(server);

    // 3. Three addresses, the first down: the monitor moves on, round robin, and keeps
    // deciding; the failure names the dead address.
    let second = Stub::start(Reply::cpu(&[95]));
    let third = Stub::start(Reply::cpu(&[96]));
    let dead = dead_url();
    let config = file(
        "list",
        &format!(
            "web.load.control=80\nsearch_engine.http.url={dead}, {}, {}\n",
            second.url(),
            third.url()
        ),
    );
    let server = serve(config, &[]);
    let _ = get(server.addr(), "/search?q=a");
    assert!(
        wait_until(Duration::from_secs(10), || stats(&server)["cpu"] == 95),
        "the second node answers after the first failed: {}",
        stats(&server)
    );
    assert_eq!(get(server.addr(), "/search?q=a").0, 429);
    shows_no_password(&server, &second.url());
    assert_eq!(stats(&server)["monitor_failures_total"], 1);
    // The second goes down too: the next poll goes to the third.
    second.set(Reply::json(503, "{}"));
    assert!(
        wait_until(Duration::from_secs(10), || stats(&server)["cpu"] == 96),
        "{}",
        stats(&server)
    );
    shows_no_password(&server, &third.url());
    drop(server);
    let records = logs::records();
    let failures: Vec<_> = records
        .iter()
        .filter(|r| {
            r.message
                .starts_with("Failed to get search engine CPU stats")
        })
        .collect();
    assert!(
        failures
            .iter()
            .any(|r| r.message.contains(&dead) && r.level == log::Level::Warn),
        "{failures:#?}"
    );
    assert!(
        failures
            .iter()
            .any(|r| r.message.contains(&second.url()) && r.message.contains("503")),
        "{failures:#?}"
    );

    // 4. IPv6 loopback, in brackets as Fess writes it.
    let v6 = Stub::start_on("[::1]:0", Reply::cpu(&[91]));
    assert!(v6.url().starts_with("http://[::1]:"), "{}", v6.url());
    let config = file(
        "v6",
        &format!("web.load.control=80\nsearch_engine.http.url={}\n", v6.url()),
    );
    let server = serve(config, &[]);
    let _ = get(server.addr(), "/search?q=a");
    assert!(wait_until(
        Duration::from_secs(10),
        || stats(&server)["cpu"] == 91
    ));
    assert_eq!(get(server.addr(), "/search?q=a").0, 429);
    drop(server);

    // 5. Both userinfo and the user key: a start-up error naming both, without the password.
    let config = file(
        "conflict",
        "search_engine.http.url=http://admin:Zq-s3cr3t@127.0.0.1:9\nsearch_engine.username=admin\n",
    );
    let options = Options {
        config: ConfigFrom::File(config),
        listen: "127.0.0.1:0".parse().expect("addr"),
        ..Options::default()
    };
    let error = start(&options).expect_err("refused").to_string();
    assert!(
        error.contains("search_engine.http.url") && error.contains("search_engine.username"),
        "{error}"
    );
    assert!(!error.contains("Zq-s3cr"), "{error}");

    // 6. Which encoding a file was read in is logged (README, *Configuration*): UTF-8 when
    // its bytes are valid UTF-8, else ISO-8859-1, as Java's resource bundles read it.
    let latin1 = {
        let path = file("latin1", "");
        std::fs::write(&path, b"# caf\xe9\nweb.load.control=80\n").expect("write");
        path
    };
    let options = Options {
        config: ConfigFrom::File(latin1.clone()),
        listen: "127.0.0.1:0".parse().expect("addr"),
        ..Options::default()
    };
    drop(start(&options).expect("a Latin-1 file is read"));
    let records = logs::records();
    let read = |path: &PathBuf, how: &str| {
        let line = format!("Read {} as {how}", path.display());
        records
            .iter()
            .any(|r| r.level == log::Level::Info && r.message == line)
    };
    assert!(
        read(&latin1, "ISO-8859-1: its bytes are not valid UTF-8"),
        "{records:#?}"
    );
    // The file of step 1, valid UTF-8.
    let utf8 = std::env::temp_dir()
        .join(format!("load-fess-keys-{}-keys", std::process::id()))
        .join("fess_config.properties");
    assert!(read(&utf8, "UTF-8"), "{records:#?}");

    // No log line of this crate or the demo shows the password. (surf's HTTP/1 client logs
    // request headers at TRACE under `async_h1`; the demo's logger drops that target.)
    let records = logs::records();
    for record in records.iter().filter(|r| !r.target.starts_with("async_h1")) {
        assert!(!record.message.contains("Zq-s3cr"), "{record:?}");
    }
}
