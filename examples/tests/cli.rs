//! The `search-server` binary: bad configuration exits non-zero with one clear line, and
//! SIGTERM stops it cleanly.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_search-server");

/// Runs the binary to its exit; one that is still running after 30 s (it started when it
/// should have refused) is killed, and its output returned as it was.
fn run(args: &[&str], env_url: Option<&str>) -> Output {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .env_remove("SEARCH_ENGINE_HTTP_URL")
        .env_remove("SEARCH_ENGINE_USERNAME")
        .env_remove("SEARCH_ENGINE_PASSWORD")
        .env_remove("RUST_LOG");
    if let Some(url) = env_url {
        command.env("SEARCH_ENGINE_HTTP_URL", url);
    }
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run search-server");
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().expect("wait").is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    child.wait_with_output().expect("output")
}

fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("search-server-{}-{name}", std::process::id()));
    std::fs::write(&path, text).expect("write temp file");
    path
}

/// Runs with bad input and checks: non-zero exit, exactly one line on stderr, containing
/// `needle`, and no panic.
fn fails_with(args: &[&str], env_url: Option<&str>, needle: &str) {
    let output = run(args, env_url);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{args:?} succeeded");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{args:?}: one line expected:\n{stderr}");
    assert!(lines[0].starts_with("search-server: error: "), "{stderr}");
    assert!(
        lines[0].contains(needle),
        "{args:?}: {needle:?} not in {stderr}"
    );
    assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "{stderr}"
    );
}

#[test]
fn bad_configuration_exits_with_one_clear_line() {
    fails_with(
        &["--runtime", "tokio"],
        None,
        "--runtime 'tokio' is not one of: smol, async-std",
    );
    fails_with(
        &["--config", "/nonexistent/fess_config.properties"],
        None,
        "cannot read /nonexistent/fess_config.properties",
    );
    let bad = temp_file("bad.properties", "# tuning\nweb.load.control=eighty\n");
    fails_with(
        &["--config", bad.to_str().expect("utf-8 path")],
        None,
        "bad.properties: line 2: web.load.control = \"eighty\": not an integer",
    );
    let interval = temp_file("interval.properties", "load.control.monitor.interval=0\n");
    fails_with(
        &["--config", interval.to_str().expect("utf-8 path")],
        None,
        "out of range (expected 1 to 86400)",
    );
    fails_with(
        &["--opensearch", "localhost:9200"],
        None,
        "--opensearch 'localhost:9200': expected http:// or https://",
    );
    fails_with(
        &[],
        Some("http://a:9200,,http://b:9200"),
        "environment variable SEARCH_ENGINE_HTTP_URL: search_engine.http.url = \"http://a:9200,,http://b:9200\": invalid URL: an empty address",
    );
    fails_with(
        &["--listen", "nowhere"],
        None,
        "--listen 'nowhere' is not an address",
    );
    fails_with(&["--bogus"], None, "unknown argument '--bogus'");
    fails_with(&["--max-connections", "0"], None, "--max-connections '0'");
    fails_with(&["--idle-timeout", "never"], None, "--idle-timeout 'never'");

    // A password with an unescaped `/`, `#` or `?` is never echoed, wherever the URL came from.
    for password in ["Zq/Xw", "Zq#Xw", "Zq?Xw", "Zq:Xw/x?y#z"] {
        let url = format!("http://admin:{password}@search.example:9200");
        let from_flag = run(&["--opensearch", &url], None);
        let from_env = run(&[], Some(&url));
        let file = temp_file("url.properties", &format!("search_engine.http.url={url}\n"));
        let from_file = run(&["--config", file.to_str().expect("utf-8 path")], None);
        let _ = std::fs::remove_file(file);
        for output in [from_flag, from_env, from_file] {
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(!output.status.success(), "{url}: {stderr}");
            assert!(stderr.contains("admin:***@"), "{url}: {stderr}");
            assert!(
                !stderr.contains("Zq") && !stderr.contains("Xw"),
                "{url}: {stderr}"
            );
        }
    }

    let taken = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("addr").to_string();
    fails_with(
        &["--listen", &addr],
        None,
        &format!("cannot listen on {addr}"),
    );
    let _ = std::fs::remove_file(bad);
    let _ = std::fs::remove_file(interval);
}

#[test]
fn help_exits_zero() {
    let output = run(&["--help"], None);
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("usage: search-server"));
}

/// Starts the server on an ephemeral port; the child and the address it listens on.
fn spawn(args: &[&str]) -> (std::process::Child, String) {
    let mut child = Command::new(BIN)
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .env_remove("SEARCH_ENGINE_HTTP_URL")
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start search-server");
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut first)
        .expect("read stdout");
    let addr = first
        .trim()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("first line: {first:?}"))
        .to_owned();
    (child, addr)
}

#[test]
fn sigterm_stops_it_cleanly() {
    for runtime in ["smol", "async-std"] {
        let (mut child, addr) = spawn(&["--runtime", runtime]);
        assert!(addr.starts_with("127.0.0.1:"), "{addr}");
        // Single-box: request control measures this service's own CPU (its cgroup where it
        // limits the service, the host otherwise), and the stats say which.
        let stats = answer(&addr, "/admin/stats");
        assert!(
            stats.contains("\"requests\":\"this service's "),
            "{runtime}: {stats}"
        );

        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(10);
        let exit = loop {
            if let Some(exit) = child.try_wait().expect("wait") {
                break exit;
            }
            assert!(
                Instant::now() < deadline,
                "{runtime}: did not stop within 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let output = child.wait_with_output().expect("output");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(exit.success(), "{runtime}: {exit:?}\n{stderr}");
        assert!(stderr.contains(&format!("Runtime: {runtime}")), "{stderr}");
        assert!(stderr.contains("single-box mode"), "{stderr}");
        assert!(
            stderr.contains("Request load control measures the "),
            "{stderr}"
        );
        assert!(stderr.contains("Stopped"), "{stderr}");
    }
}

/// `GET target` on a fresh connection; the whole answer, head and body.
fn answer(addr: &str, target: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    write!(
        stream,
        "GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("answer");
    String::from_utf8_lossy(&raw).into_owned()
}

/// `GET target` on a fresh connection; the status code.
fn status(addr: &str, target: &str) -> u16 {
    let answer = answer(addr, target);
    answer
        .get(9..12)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {answer:?}"))
}

fn wait_for(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    condition()
}

#[test]
fn sighup_reloads_the_configuration_and_refuses_an_invalid_file() {
    let config = temp_file(
        "reload.properties",
        "web.load.control=100\nadaptive.load.control=0\n",
    );
    let (child, addr) = spawn(&["--config", config.to_str().expect("utf-8 path")]);
    let hangup = |pid: u32| {
        let status = Command::new("kill")
            .args(["-HUP", &pid.to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
    };
    assert_eq!(status(&addr, "/search"), 200, "web control off");

    // web.load.control=0 rejects every web request, whatever the CPU.
    std::fs::write(&config, "web.load.control=0\nadaptive.load.control=0\n").expect("rewrite");
    hangup(child.id());
    assert!(
        wait_for(Duration::from_secs(5), || status(&addr, "/search") == 429),
        "reloaded"
    );
    assert_eq!(status(&addr, "/admin/"), 200);

    // An invalid file is refused whole: the API line would be valid, but nothing applies.
    std::fs::write(&config, "api.load.control=0\nweb.load.control=lots\n").expect("rewrite");
    hangup(child.id());
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(status(&addr, "/search"), 429, "old settings stay");
    assert_eq!(
        status(&addr, "/api/v1/documents"),
        200,
        "no half-applied file"
    );

    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let output = child.wait_with_output().expect("output");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("web.load.control: 100 -> 0"), "{stderr}");
    assert!(
        stderr.contains("Reload failed, keeping the current settings: ")
            && stderr.contains("line 2: web.load.control = \"lots\": not an integer"),
        "{stderr}"
    );
    let _ = std::fs::remove_file(config);
}
