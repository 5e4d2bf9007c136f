//! `/admin/load` in a real browser (Debian's headless Chromium, over DevTools) during a
//! scripted load episode on the search-server: the cluster stub goes from 20 % to 95 % and
//! back while requests arrive.
//!
//! Asserted on the rendered page: the threshold lines at their heights in the laid-out
//! chart, the rejecting period shaded while it lasts and closed after, the page refreshing
//! itself, no console error or exception (the page's CSP would report any script or
//! external asset), no sideways scrolling on a phone, and the dark scheme. Screenshots are
//! saved under `target/tmp/dashboard/`.
//!
//! Ignored by default because it needs Chromium: `.ci/run` installs it and runs
//! `cargo test -p load-tests --test dashboard_browser -- --ignored`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use load_examples::app::{DemoOptions, SearchMode};
use load_examples::cli::{ConfigFrom, Options};
use load_examples::server::{RunningServer, start};
use load_tests::browser::{Browser, Page};
use load_tests::{Reply, Stub, wait_until};
use serde_json::Value;

fn serve(stub: &Stub) -> RunningServer {
    let dir = std::env::temp_dir().join(format!("load-dashboard-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("fess_config.properties");
    std::fs::write(
        &path,
        format!(
            "web.load.control=70\napi.load.control=90\nload.control.monitor.interval=1\n\
             adaptive.load.control=95\nsearch_engine.http.url={}\n",
            stub.url()
        ),
    )
    .expect("write the config");
    let options = Options {
        config: ConfigFrom::File(path),
        listen: "127.0.0.1:0".parse().expect("addr"),
        // The stub stands in for the cluster's node stats only.
        demo: DemoOptions {
            search: SearchMode::Builtin,
            ..DemoOptions::default()
        },
        ..Options::default()
    };
    start(&options).expect("server starts")
}

fn status(addr: SocketAddr, target: &str) -> u16 {
    load_tests::raw_get(addr, target).status
}

fn polls(addr: SocketAddr) -> u64 {
    let stats: Value =
        serde_json::from_str(&load_tests::raw_get(addr, "/admin/stats").text()).expect("JSON");
    stats["polls"].as_u64().unwrap_or(0)
}

/// Waits for `n` more polls of the cluster monitor.
fn wait_polls(addr: SocketAddr, n: u64) {
    let target = polls(addr) + n;
    assert!(
        wait_until(Duration::from_secs(15), || polls(addr) >= target),
        "the monitor did not poll {n} more time(s)"
    );
}

fn artifact(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("dashboard")
        .join(name)
}

/// The chart geometry as laid out: for each threshold line, where it sits in the plot
/// area (0 at the top, 1 at the bottom); for each shaded period, its left and right edges
/// in the same terms across.
const GEOMETRY: &str = r#"(() => {
  const chart = document.querySelector('#cluster-cpu');
  const plot = chart.querySelector('rect.plot').getBoundingClientRect();
  const down = (el) => (el.getBoundingClientRect().top - plot.top) / plot.height;
  const across = (x) => (x - plot.left) / plot.width;
  const shades = (cls) => [...chart.querySelectorAll('rect.shade.' + cls)].map((el) => {
    const r = el.getBoundingClientRect();
    return [across(r.left), across(r.right)];
  });
  const rates = document.querySelector('#rejections path.series.web');
  return {
    web: [...chart.querySelectorAll('line.threshold.web')].map(down),
    api: [...chart.querySelectorAll('line.threshold.api')].map(down),
    webShades: shades('web'),
    apiShades: shades('api'),
    webState: document.querySelector('#web-state').textContent,
    rateMax: Number(rates.getAttribute('data-max')),
    rateLength: rates.getTotalLength(),
    refresh: document.querySelector('meta[http-equiv="refresh"]')?.content ?? null,
  };
})()"#;

fn geometry(page: &mut Page) -> Value {
    page.eval(GEOMETRY)
}

fn close(value: &Value, expected: f64) -> bool {
    value.as_f64().is_some_and(|v| (v - expected).abs() < 0.01)
}

#[test]
#[ignore = "needs Chromium (Debian's `chromium`); .ci/run installs it and runs this"]
fn the_dashboard_in_a_real_browser() {
    let started = Instant::now();
    let stub = Stub::start(Reply::cpu(&[20]));
    let server = serve(&stub);
    let addr = server.addr();
    let base = format!("http://{addr}");

    // Calm: the first controlled request starts the monitor.
    assert_eq!(status(addr, "/search?q=calm"), 200);
    wait_polls(addr, 2);

    let browser = Browser::start();
    let mut page = browser.page();
    page.viewport(1000, 1300, false);

    // The episode: the cluster at 95 %, requests arriving (rejected at 70 % for web and
    // 90 % for the API).
    stub.set(Reply::cpu(&[95]));
    assert!(
        wait_until(Duration::from_secs(15), || status(addr, "/search?q=busy")
            == 429),
        "web requests were not rejected"
    );
    for _ in 0..20 {
        assert_eq!(status(addr, "/search?q=busy"), 429);
        assert_eq!(status(addr, "/api/v1/documents?q=busy"), 429);
    }
    wait_polls(addr, 2);

    // During: the lines where the thresholds say, and a shaded period still open at "now".
    page.navigate(&format!("{base}/admin/load?refresh=0"));
    let during = geometry(&mut page);
    assert!(close(&during["web"][0], 0.30), "web line: {during}");
    assert!(close(&during["api"][0], 0.10), "API line: {during}");
    let open_web = &during["webShades"][0];
    assert!(close(&open_web[1], 1.0), "open web period: {during}");
    assert!(
        !during["apiShades"].as_array().unwrap().is_empty(),
        "{during}"
    );
    assert!(
        during["webState"].as_str().unwrap().contains("rejecting"),
        "{during}"
    );
    assert_eq!(during["refresh"], Value::Null, "refresh=0 has no refresh");
    page.screenshot(&artifact("during.png"));

    // After: the cluster calms down; the rejecting period is closed before "now".
    stub.set(Reply::cpu(&[20]));
    assert!(
        wait_until(Duration::from_secs(15), || status(addr, "/search?q=calm")
            == 200),
        "web requests were not admitted again"
    );
    wait_polls(addr, 3);
    page.navigate(&format!("{base}/admin/load"));
    // The page refreshes itself: a second load without navigating.
    let refresh = page.eval(r#"document.querySelector('meta[http-equiv="refresh"]').content"#);
    assert_eq!(refresh, "2");
    let mark = page.event_count();
    page.wait_for_event("Page.loadEventFired", mark, Duration::from_secs(6));
    // The geometry on a page that stays put (a reload in the middle of an evaluation
    // would end it).
    page.navigate(&format!("{base}/admin/load?refresh=0"));
    let after = geometry(&mut page);
    assert!(close(&after["web"][0], 0.30), "{after}");
    let closed = &after["webShades"][0];
    let (left, right) = (closed[0].as_f64().unwrap(), closed[1].as_f64().unwrap());
    assert!(
        left > 0.0 && right > left && right < 0.999,
        "a closed web period: {after}"
    );
    assert!(
        after["webState"].as_str().unwrap().contains("admitting"),
        "{after}"
    );
    assert!(after["rateMax"].as_f64().unwrap() >= 1.0, "{after}");
    assert!(after["rateLength"].as_f64().unwrap() > 0.0, "{after}");
    page.screenshot(&artifact("after.png"));

    // A phone: no sideways scrolling, the chart as wide as the screen.
    page.viewport(390, 844, true);
    page.navigate(&format!("{base}/admin/load?refresh=0"));
    let phone = page.eval(
        "({scroll: document.documentElement.scrollWidth, inner: window.innerWidth, \
          chart: document.querySelector('#cluster-cpu').getBoundingClientRect().width, \
          tick: document.querySelector('#cluster-cpu text.tick').getBoundingClientRect().height})",
    );
    // Axis labels of at least 9 CSS pixels, though the chart is scaled down.
    assert!(phone["tick"].as_f64().unwrap() >= 9.0, "{phone}");
    let inner = phone["inner"].as_f64().unwrap();
    assert!(phone["scroll"].as_f64().unwrap() <= inner, "{phone}");
    assert!(phone["chart"].as_f64().unwrap() > inner * 0.8, "{phone}");
    page.screenshot(&artifact("phone.png"));

    // The dark scheme.
    page.viewport(1000, 1300, false);
    page.color_scheme("dark");
    page.navigate(&format!("{base}/admin/load?refresh=0"));
    let background = page.eval("getComputedStyle(document.body).backgroundColor");
    assert_eq!(background, "rgb(13, 17, 23)");
    page.screenshot(&artifact("dark.png"));

    assert_eq!(page.errors(), Vec::<String>::new(), "console errors");
    drop(page);
    drop(browser);
    server.stop().expect("server stops");
    println!(
        "dashboard browser test: {:.1} s; screenshots in {}",
        started.elapsed().as_secs_f64(),
        artifact("").display()
    );
}

/// Serves `render()`'s page on `listener` to each connection until `stop` is set: the page
/// as a server without background work answers it, through nothing but a socket.
fn serve_page(
    listener: std::net::TcpListener,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    render: impl Fn() -> String + Send + 'static,
) -> std::thread::JoinHandle<()> {
    use std::io::{BufRead as _, BufReader, Write as _};
    use std::sync::atomic::Ordering;
    listener.set_nonblocking(true).expect("nonblocking");
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            let Ok((stream, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            };
            stream.set_nonblocking(false).expect("blocking");
            stream
                .set_read_timeout(Some(Duration::from_secs(5)))
                .expect("timeout");
            let mut reader = BufReader::new(&stream);
            let mut request_line = String::new();
            let _ = reader.read_line(&mut request_line);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            // The page and nothing else (the browser's favicon request gets no content).
            let (status, body) = if request_line.starts_with("GET / ") {
                ("200 OK", render())
            } else {
                ("204 No Content", String::new())
            };
            let mut head = format!(
                "HTTP/1.1 {status}\r\ncontent-type: {}\r\ncontent-length: {}\r\nconnection: close\r\n",
                load_runtime::dashboard::CONTENT_TYPE,
                body.len()
            );
            for (name, value) in load_runtime::dashboard::HEADERS {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            let mut stream = &stream;
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(body.as_bytes());
        }
    })
}

/// A server with request control alone (no background work), its source a fixed value
/// over the limit mode's threshold: the page names the source as it is, shows no machine's
/// CPU and no background work, links only what the server handed it, and draws the web
/// threshold where it is. Its screenshot is `docs/dashboard-requests-only.png`.
#[test]
#[ignore = "needs Chromium (Debian's `chromium`); .ci/run installs it and runs this"]
fn the_dashboard_of_a_server_without_background_work() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    static SOURCE: load_core::FixedSource =
        load_core::FixedSource::new(load_core::CpuPercent::new(85));
    let config = load_core::Config::from_properties(
        "web.load.control=70\napi.load.control=90\nload.control.monitor.interval=1\n\
         load.control.admission=limit\n",
    )
    .expect("config");
    let guard: load_runtime::LoadGuard<load_smol::Smol, _> =
        load_runtime::LoadGuard::with_source(&config.control, &SOURCE);
    // The first controlled request starts the monitor; a few polls follow.
    let _ = guard.check("/search?q=a");
    assert!(
        wait_until(Duration::from_secs(10), || guard.stats().polls >= 3),
        "the monitor did not poll"
    );
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let stop = Arc::new(AtomicBool::new(false));
    let page_guard = guard.clone();
    let server = serve_page(listener, Arc::clone(&stop), move || {
        let snapshot = load_runtime::dashboard::Snapshot::of(&page_guard);
        let view = snapshot
            .view(0)
            .with_settings(&config)
            .with_link("JSON stats", "/stats");
        load_runtime::dashboard::page(&view)
    });

    let browser = Browser::start();
    let mut page = browser.page();
    page.viewport(1000, 1000, false);
    page.navigate(&format!("http://{addr}/"));
    let seen = page.eval(
        r#"(() => {
  const chart = document.querySelector('#cluster-cpu');
  const plot = chart.querySelector('rect.plot').getBoundingClientRect();
  const web = chart.querySelector('line.threshold.web').getBoundingClientRect();
  return {
    source: document.querySelector('#cluster-now').textContent,
    heading: document.querySelector('h2').textContent,
    local: document.querySelector('#local-cpu') !== null,
    work: document.querySelector('#crawler-state') !== null,
    links: [...document.querySelectorAll('a')].map((a) => a.getAttribute('href')),
    web: (web.top - plot.top) / plot.height,
    reads: document.querySelector('#fleet').textContent,
  };
})()"#,
    );
    assert_eq!(seen["source"], "CPU (a fixed value): 85%", "{seen}");
    assert_eq!(seen["heading"], "CPU (a fixed value)", "{seen}");
    assert_eq!(seen["local"], false, "{seen}");
    assert_eq!(seen["work"], false, "{seen}");
    assert_eq!(seen["links"], serde_json::json!(["/stats"]), "{seen}");
    assert!(close(&seen["web"], 0.30), "web line: {seen}");
    assert!(
        seen["reads"]
            .as_str()
            .unwrap()
            .contains("What the limit mode reads"),
        "{seen}"
    );
    page.screenshot(&artifact("requests-only.png"));
    assert_eq!(page.errors(), Vec::<String>::new(), "console errors");
    drop(page);
    drop(browser);
    stop.store(true, Ordering::Relaxed);
    server.join().expect("the page's server");
    smol::block_on(guard.shutdown());
}
