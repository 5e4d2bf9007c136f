//! The server's own HTTP edge, tried from outside against the built binary on both runtimes:
//! pipelining, malformed requests, descriptor exhaustion, idle connections, a connection
//! flood, and secrets in logs. Loopback only; every loop is bounded.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use load_tests::wait_until;

const BIN: &str = env!("CARGO_BIN_EXE_search-server");
const RUNTIMES: [&str; 2] = ["smol", "async-std"];

/// The binary, started with `args` (and `ulimit -n` when given), stopped with SIGTERM.
struct Server {
    child: Child,
    addr: SocketAddr,
}

/// A failed assertion must not leave the server running.
impl Drop for Server {
    fn drop(&mut self) {
        if self.alive() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Server {
    fn start(runtime: &str, args: &[&str], open_files: Option<u32>) -> Server {
        Server::start_with_env(runtime, args, open_files, &[])
    }

    fn start_with_env(
        runtime: &str,
        args: &[&str],
        open_files: Option<u32>,
        env: &[(&str, &str)],
    ) -> Server {
        let mut command = match open_files {
            Some(n) => {
                let mut command = Command::new("bash");
                command
                    .arg("-c")
                    .arg(format!("ulimit -n {n} && exec \"$0\" \"$@\""))
                    .arg(BIN);
                command
            }
            None => Command::new(BIN),
        };
        command
            .args(["--listen", "127.0.0.1:0", "--runtime", runtime])
            .args(args)
            .env_remove("SEARCH_ENGINE_HTTP_URL")
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("start search-server");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the first line");
        let addr = line
            .trim()
            .strip_prefix("listening on http://")
            .unwrap_or_else(|| panic!("unexpected first line: {line:?}"))
            .parse()
            .expect("address");
        Server { child, addr }
    }

    fn alive(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_none()
    }

    fn rss_kib(&self) -> u64 {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).expect("status");
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
            .expect("VmRSS")
    }

    /// Stops it with SIGTERM; its standard error.
    fn stop(mut self) -> String {
        self.terminate()
    }

    fn terminate(&mut self) -> String {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.alive() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let output =
            std::mem::replace(&mut self.child, Command::new("true").spawn().expect("true"))
                .wait_with_output()
                .expect("output");
        String::from_utf8_lossy(&output.stderr).into_owned()
    }
}

/// Sends `bytes` on a fresh connection and reads until the server closes it or `wait`
/// passes without a byte.
fn exchange(addr: SocketAddr, bytes: &[u8], wait: Duration) -> Vec<u8> {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(wait)).expect("timeout");
    let _ = stream.write_all(bytes);
    let mut out = Vec::new();
    let mut buf = [0u8; 65536];
    loop {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return out,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
}

fn status_of(response: &[u8]) -> Option<u16> {
    let text = String::from_utf8_lossy(response.get(..12)?).into_owned();
    text.strip_prefix("HTTP/1.1 ")?.get(..3)?.parse().ok()
}

fn get(addr: SocketAddr, target: &str) -> Option<u16> {
    let request = format!("GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    status_of(&exchange(addr, request.as_bytes(), Duration::from_secs(5)))
}

#[test]
fn pipelined_requests_are_all_answered_in_order() {
    for runtime in RUNTIMES {
        let server = Server::start(runtime, &[], None);
        let mut requests = String::new();
        for i in 0..10 {
            requests.push_str(&format!("GET /search?q=n{i} HTTP/1.1\r\nHost: x\r\n\r\n"));
        }
        requests.push_str(
            "GET /api/v1/documents?q=last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        );
        let answer = exchange(server.addr, requests.as_bytes(), Duration::from_secs(5));
        let text = String::from_utf8_lossy(&answer);
        assert_eq!(
            text.matches("HTTP/1.1 200 OK").count(),
            11,
            "{runtime}: {text}"
        );
        let order: Vec<usize> = (0..10)
            .map(|i| {
                text.find(&format!("value=\"n{i}\""))
                    .expect("each query echoed")
            })
            .collect();
        assert!(
            order.windows(2).all(|w| w[0] < w[1]),
            "{runtime}: out of order"
        );
        assert!(
            text.ends_with("}}") || text.contains("\"q\":\"last\""),
            "{runtime}"
        );
        server.stop();
    }
}

/// README, *The HTTP edge*: a connection is closed after 10,000 requests (`Connection:
/// close` on the last answer), so that no client holds one forever. 10,001 requests
/// pipelined on one connection, written while the answers are read: 10,000 answers, the
/// last one saying close, then the end of the stream.
#[test]
fn a_connection_is_closed_after_ten_thousand_requests() {
    let server = Server::start("smol", &[], None);
    let stream = TcpStream::connect(server.addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut writer = stream.try_clone().expect("clone");
    let sender = std::thread::spawn(move || {
        let request = b"GET /no-such-page HTTP/1.1\r\nHost: x\r\n\r\n";
        for _ in 0..10_001 {
            if writer.write_all(request).is_err() {
                break;
            }
        }
    });
    let mut reader = BufReader::new(stream);
    let (mut answers, mut closed_on) = (0u32, None);
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if line.starts_with("HTTP/1.1 ") {
            answers += 1;
            // The head, then a body of Content-Length bytes.
            let mut length = 0usize;
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) == 0 {
                    break;
                }
                let header = header.trim_end().to_ascii_lowercase();
                if header.is_empty() {
                    break;
                }
                if let Some(value) = header.strip_prefix("content-length:") {
                    length = value.trim().parse().expect("a length");
                }
                if header == "connection: close" {
                    closed_on.get_or_insert(answers);
                }
            }
            let mut body = vec![0u8; length];
            reader.read_exact(&mut body).expect("a body");
        }
    }
    let _ = sender.join();
    assert_eq!(answers, 10_000, "answers on one connection");
    assert_eq!(closed_on, Some(10_000), "the last answer says close");
    server.stop();
}

#[test]
fn malformed_requests_get_their_status_and_the_server_keeps_serving() {
    let long_target = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(8 * 1024));
    let huge_target = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(64 * 1024));
    let huge_header = format!(
        "GET / HTTP/1.1\r\nHost: x\r\nX-A: {}\r\n\r\n",
        "a".repeat(1 << 20)
    );
    let garbage: Vec<u8> = (0..=255u8).cycle().take(1024).collect();
    let cases: [(&str, &[u8], u16); 10] = [
        ("HTTP/1.1 without Host", b"GET /search HTTP/1.1\r\n\r\n", 400),
        (
            "two Host headers",
            b"GET /search HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
            400,
        ),
        ("CONNECT", b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", 405),
        ("an 8 KiB request-target", long_target.as_bytes(), 414),
        ("a 64 KiB request-target", huge_target.as_bytes(), 414),
        ("a 1 MiB header", huge_header.as_bytes(), 431),
        ("garbage bytes", &garbage, 400),
        ("HTTP/0.9", b"GET /\r\n\r\n", 400),
        (
            "two different Content-Length headers",
            b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nabcde",
            400,
        ),
        ("LF-only line ends (served)", b"GET /search HTTP/1.1\nHost: x\nConnection: close\n\n", 200),
    ];
    for runtime in RUNTIMES {
        let mut server = Server::start(runtime, &[], None);
        for (what, bytes, status) in cases {
            let answer = exchange(server.addr, bytes, Duration::from_secs(5));
            assert_eq!(
                status_of(&answer),
                Some(status),
                "{runtime}: {what}: {:?}",
                String::from_utf8_lossy(&answer[..answer.len().min(200)])
            );
            assert!(server.alive(), "{runtime}: {what} ended the server");
            assert_eq!(
                get(server.addr, "/search?q=x"),
                Some(200),
                "{runtime}: after {what}"
            );
        }
        server.stop();
    }
}

/// Holds `n` idle connections open (as many as the server's backlog takes).
fn hold(addr: SocketAddr, n: usize) -> Vec<TcpStream> {
    (0..n)
        .filter_map(|_| TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok())
        .collect()
}

#[test]
fn running_out_of_descriptors_never_ends_the_server() {
    for runtime in RUNTIMES {
        // A connection limit above the descriptor limit: accept fails with EMFILE.
        let mut server = Server::start(runtime, &["--max-connections", "1000"], Some(256));
        let held = hold(server.addr, 300);
        std::thread::sleep(Duration::from_millis(500));
        assert!(server.alive(), "{runtime}: EMFILE ended the server");
        drop(held);
        assert!(
            wait_until(Duration::from_secs(10), || get(server.addr, "/search")
                == Some(200)),
            "{runtime}: not serving again once the idle connections closed"
        );
        let stderr = server.stop();
        let warnings = stderr.matches("accept failed").count();
        assert_eq!(warnings, 1, "{runtime}: one line per burst:\n{stderr}");
        assert!(stderr.contains("Too many open files"), "{stderr}");
        assert!(
            stderr.contains("accepting connections again after"),
            "{stderr}"
        );

        // The default limit stays below the descriptor limit: no EMFILE at all.
        let mut server = Server::start(runtime, &[], Some(256));
        let held = hold(server.addr, 300);
        std::thread::sleep(Duration::from_millis(500));
        assert!(server.alive());
        drop(held);
        assert!(
            wait_until(Duration::from_secs(10), || get(server.addr, "/search")
                == Some(200)),
            "{runtime}"
        );
        let stderr = server.stop();
        assert!(
            stderr.contains("Serving at most 192 connections at once (open files limit: 256)"),
            "{stderr}"
        );
        assert!(!stderr.contains("accept failed"), "{runtime}: {stderr}");
    }
}

#[test]
fn a_client_that_never_reads_its_answers_is_cut_off() {
    for runtime in RUNTIMES {
        let server = Server::start(
            runtime,
            &["--max-connections", "1", "--idle-timeout", "1"],
            None,
        );
        // The only slot: a client that pipelines 20,000 requests and reads nothing, so the
        // server's writes stall once the socket buffers are full.
        let hog = TcpStream::connect(server.addr).expect("connect");
        let mut writer = hog.try_clone().expect("clone");
        let flood = std::thread::spawn(move || {
            let _ = writer.set_write_timeout(Some(Duration::from_secs(15)));
            let request = b"GET /search?q=load HTTP/1.1\r\nHost: x\r\n\r\n";
            for _ in 0..20_000 {
                if writer.write_all(request).is_err() {
                    break;
                }
            }
        });
        std::thread::sleep(Duration::from_millis(500));
        // A second client waits for the slot: it is served once the first is cut off.
        let started = Instant::now();
        assert_eq!(get(server.addr, "/search"), Some(200), "{runtime}");
        let waited = started.elapsed();
        assert!(
            waited < Duration::from_secs(5),
            "{runtime}: waited {waited:?}"
        );
        drop(hog);
        let _ = flood.join();
        server.stop();
    }
}

#[test]
fn idle_connections_are_closed_after_the_idle_timeout() {
    for runtime in RUNTIMES {
        let server = Server::start(runtime, &["--idle-timeout", "1"], None);
        // Never a byte sent.
        let started = Instant::now();
        let answer = exchange(server.addr, b"", Duration::from_secs(10));
        let took = started.elapsed();
        assert!(answer.is_empty(), "{runtime}");
        assert!(
            took >= Duration::from_millis(900) && took < Duration::from_secs(4),
            "{runtime}: {took:?}"
        );
        // Kept alive after a request, then idle.
        let started = Instant::now();
        let answer = exchange(
            server.addr,
            b"GET /search HTTP/1.1\r\nHost: x\r\n\r\n",
            Duration::from_secs(10),
        );
        let took = started.elapsed();
        assert_eq!(status_of(&answer), Some(200), "{runtime}");
        assert!(
            took >= Duration::from_millis(900) && took < Duration::from_secs(4),
            "{runtime}: {took:?}"
        );
        server.stop();
    }
}

#[test]
fn memory_returns_after_a_flood_of_connections() {
    // 3,000 client sockets and as many on the server: room for both.
    let (soft, hard) = rlimit::Resource::NOFILE.get().expect("getrlimit");
    if soft < 8_192 {
        rlimit::Resource::NOFILE
            .set(hard.min(8_192), hard)
            .expect("raise the open-files limit");
    }
    for runtime in RUNTIMES {
        let server = Server::start(runtime, &[], None);
        assert_eq!(get(server.addr, "/search?q=load"), Some(200));
        std::thread::sleep(Duration::from_millis(300));
        let before = server.rss_kib();
        let mut flood: Vec<TcpStream> = (0..3_000)
            .map(|_| TcpStream::connect(server.addr).expect("connect"))
            .collect();
        for stream in &mut flood {
            stream
                .write_all(b"GET /search?q=load HTTP/1.1\r\nHost: x\r\n\r\n")
                .expect("write");
        }
        for stream in &mut flood {
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .expect("timeout");
            let mut head = [0u8; 12];
            stream.read_exact(&mut head).expect("a response");
            assert_eq!(&head, b"HTTP/1.1 200");
        }
        let peak = server.rss_kib();
        drop(flood);
        let mut after = peak;
        let settled = wait_until(Duration::from_secs(30), || {
            after = server.rss_kib();
            after <= before * 2
        });
        println!(
            "{runtime}: RSS {before} KiB before, {peak} KiB with 3,000 connections, {after} KiB after"
        );
        assert!(
            settled,
            "{runtime}: RSS {before} KiB before, {after} KiB 30 s after the flood"
        );
        server.stop();
    }
}

/// A cluster stand-in on loopback that answers every request with a node-stats body.
fn fake_cluster() -> (SocketAddr, Arc<AtomicBool>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = Arc::clone(&stop);
    listener.set_nonblocking(true).expect("nonblocking");
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !stopping.load(Ordering::SeqCst) && Instant::now() < deadline {
            let Ok((mut stream, _)) = listener.accept() else {
                std::thread::sleep(Duration::from_millis(10));
                continue;
            };
            let _ = stream.set_nonblocking(false);
            let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let body = r#"{"_nodes":{"total":1,"successful":1,"failed":0},"nodes":{"a":{"os":{"cpu":{"percent":12}}}}}"#;
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (addr, stop)
}

#[test]
fn trace_logging_never_prints_the_clusters_credentials() {
    let (cluster, stop) = fake_cluster();
    let password = "s3cr3t-Pa55";
    let url = format!("http://admin:{password}@{cluster}");
    // base64("admin:s3cr3t-Pa55"), what the Authorization header carries.
    let encoded = "YWRtaW46czNjcjN0LVBhNTU=";
    let config = std::env::temp_dir().join(format!("edge-{}.properties", std::process::id()));
    std::fs::write(&config, "web.load.control=80\n").expect("config");
    let config = config.to_str().expect("utf-8 path").to_owned();
    for runtime in RUNTIMES {
        let server = Server::start_with_env(
            runtime,
            &[
                "--opensearch",
                &url,
                "--config",
                &config,
                "--search",
                "builtin",
            ],
            None,
            &[("RUST_LOG", "trace")],
        );
        assert_eq!(get(server.addr, "/search"), Some(200));
        std::thread::sleep(Duration::from_millis(2_500));
        let stderr = server.stop();
        assert!(
            stderr.contains("Search Engine CPU: 12%"),
            "{runtime}: the poll worked:\n{stderr}"
        );
        assert!(stderr.contains("TRACE"), "{runtime}: trace logging was on");
        assert!(
            !stderr.contains(password),
            "{runtime}: the password in a log line"
        );
        assert!(
            !stderr.contains(encoded),
            "{runtime}: the Authorization header in a log line"
        );
    }
    stop.store(true, Ordering::SeqCst);
}

/// The connections each test opens at once, bounded by what the kernel grants a listener
/// (`net.core.somaxconn`).
fn burst_the_backlog_holds() -> usize {
    let granted = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|text| text.trim().parse::<usize>().ok())
        .unwrap_or(4_096);
    granted.min(1_000)
}

/// Found when CI's connection flood took 15 to 20 s to connect: the server listened with the
/// standard library's backlog of 128, so a burst that opens its connections before the
/// server accepts them overflowed the queue, and the kernel dropped each extra SYN for the
/// client to send again a second (then three) later. Here nobody accepts: every connection
/// of a burst of 1,000 must wait in the queue, not be dropped (a dropped SYN is retried only
/// after the kernel's first retransmission timeout, 1 s).
#[test]
fn a_burst_of_connections_waits_in_the_listen_queue() {
    let listener = load_examples::server::bind("127.0.0.1:0".parse().expect("addr")).expect("bind");
    let addr = listener.local_addr().expect("addr");
    let burst = burst_the_backlog_holds();
    let mut held = Vec::with_capacity(burst);
    for n in 0..burst {
        match TcpStream::connect_timeout(&addr, Duration::from_millis(900)) {
            Ok(stream) => held.push(stream),
            Err(error) => panic!("connection {n} of {burst} was not queued: {error}"),
        }
    }
    assert_eq!(held.len(), burst);
    drop(listener);
}

/// README, *Run the demo*: it logs at `info` unless `RUST_LOG` says otherwise, so that its
/// start says what it runs on; `RUST_LOG=warn` quiets those lines.
#[test]
fn the_demo_logs_at_info_unless_told_otherwise() {
    for (rust_log, info) in [(None, true), (Some("warn"), false)] {
        let mut command = Command::new(BIN);
        command
            .args(["--listen", "127.0.0.1:0"])
            .env_remove("SEARCH_ENGINE_HTTP_URL")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(level) = rust_log {
            command.env("RUST_LOG", level);
        }
        let child = command.spawn().expect("start search-server");
        let mut server = Server {
            child,
            addr: "127.0.0.1:1".parse().expect("addr"),
        };
        let stdout = server.child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the first line");
        assert!(line.starts_with("listening on http://"), "{line:?}");
        let stderr = server.stop();
        assert_eq!(
            stderr.contains("Runtime: "),
            info,
            "RUST_LOG={rust_log:?}:\n{stderr}"
        );
    }
}
