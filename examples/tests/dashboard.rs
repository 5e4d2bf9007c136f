//! `/admin/load` of the demo app: what a running server's page shows (the browser test is
//! `tests/tests/dashboard_browser.rs`; the page's own tests are load-runtime's).

use std::time::Duration;

use load_examples::app::App;
use load_smol::Config;

/// The page of a running app: its last poll error names the address without the
/// password, and the settings table hides it too.
#[test]
fn the_last_poll_error_shows_no_password() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let dead = listener.local_addr().expect("addr");
    drop(listener);
    let mut config = Config::from_properties(&format!(
        "web.load.control=70\nsearch_engine.http.url=http://admin:Hunter2-pw@{dead}\n"
    ))
    .expect("config");
    config.control.monitor_interval = Duration::from_secs(1);
    let app = App::<load_smol::Smol>::new(config).expect("app");
    let _ = smol::block_on(app.handle(hyper::Request::get("/search").body(()).expect("request")));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while app.guard().history().last_error().is_none() {
        assert!(std::time::Instant::now() < deadline, "no poll failed");
        std::thread::sleep(Duration::from_millis(20));
    }
    let page = app.dashboard(2);
    assert!(!page.contains("Hunter2"), "{page}");
    assert!(page.contains("cannot connect"), "{page}");
    assert!(page.contains(&dead.to_string()), "{page}");
    smol::block_on(app.shutdown());
}
