//! The README's quick start as written: its first command, read from the README (no
//! `--listen`: the default address), started from the checkout's root, and each URL of
//! *What to try* fetched from it. The other tests start the server on an ephemeral port;
//! this one binds 127.0.0.1:8080, which a reader's own demo (the README's first command,
//! left running while the second runs the tests) or another program may hold, so it is
//! ignored by `cargo test --workspace` and `.ci/run` runs it alone; it fails with the
//! server's own error if the port is held.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_search-server");

fn readme() -> String {
    std::fs::read_to_string(load_tests::checkout_root().join("README.md")).expect("README.md")
}

/// The URLs the README's *What to try* fetches, in order.
fn readme_urls(readme: &str) -> Vec<String> {
    let section = readme
        .split("### What to try")
        .nth(1)
        .expect("a *What to try* section");
    let section = section.split("\n### ").next().unwrap_or(section);
    let mut urls = Vec::new();
    for piece in section.split("http://127.0.0.1:8080").skip(1) {
        let end = piece
            .find(|c: char| c.is_whitespace() || matches!(c, '\'' | '>' | ')'))
            .unwrap_or(piece.len());
        let path = piece[..end].to_owned();
        if !urls.contains(&path) {
            urls.push(path);
        }
    }
    urls
}

/// The server, killed if an assertion fails before it is stopped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A GET of `path` on the README's address: the status, the content type and the body.
fn get(path: &str) -> (u16, String, String) {
    let answer = load_tests::raw_get(SocketAddr::from(([127, 0, 0, 1], 8080)), path);
    let content_type = answer.header("content-type").unwrap_or_default().to_owned();
    (answer.status, content_type, answer.text())
}

#[test]
#[ignore = "binds the README's address, 127.0.0.1:8080: `.ci/run` runs it alone"]
fn the_readme_first_command_serves_what_to_try_on_its_default_address() {
    let readme = readme();
    // As the README writes it, run from the checkout's root.
    let args = load_tests::readme_command("--bin search-server -- ");
    let root = load_tests::checkout_root().display().to_string();
    assert_eq!(
        args,
        [
            "--config",
            &format!("{root}/examples/fess_config.properties")
        ]
    );
    let urls = readme_urls(&readme);
    assert_eq!(
        urls,
        [
            "/api/v1/documents?q=load",
            "/search?q=load",
            "/admin/stats",
            "/admin/load"
        ]
    );

    let mut child = Command::new(BIN)
        .args(&args)
        .current_dir(load_tests::checkout_root())
        .env_remove("SEARCH_ENGINE_HTTP_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start search-server");
    let stdout = child.stdout.take().expect("stdout");
    let mut server = Server(child);
    let mut line = String::new();
    let read = BufReader::new(stdout).read_line(&mut line).expect("read");
    if read == 0 {
        let _ = server.0.wait();
        let mut stderr = String::new();
        if let Some(mut err) = server.0.stderr.take() {
            let _ = err.read_to_string(&mut stderr);
        }
        panic!("the server exited before listening: {stderr}");
    }
    assert_eq!(line.trim(), "listening on http://127.0.0.1:8080");

    // The box's own CPU is the single box's signal, and other tests load it: a controlled
    // request may be refused (429) in its class's own format; the admin pages never are.
    let (status, content_type, body) = get(&urls[0]);
    assert!(matches!(status, 200 | 429), "the API: {status}");
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
    assert!(body.trim_start().starts_with('{'), "JSON: {body:?}");
    let (status, content_type, _) = get(&urls[1]);
    assert!(matches!(status, 200 | 429), "the web page: {status}");
    assert!(content_type.starts_with("text/html"), "{content_type}");
    let (status, content_type, body) = get(&urls[2]);
    assert_eq!(status, 200, "/admin/stats");
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
    assert!(body.contains("\"cpu\""), "the CPU in the stats: {body:?}");
    let (status, content_type, body) = get(&urls[3]);
    assert_eq!(status, 200, "/admin/load");
    assert!(content_type.starts_with("text/html"), "{content_type}");
    assert!(body.contains("<html") || body.contains("<!doctype") || body.contains("<!DOCTYPE"));

    // Stopped as Ctrl-C stops it: it exits by itself, successfully.
    let _ = Command::new("kill")
        .args(["-INT", &server.0.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = server.0.try_wait().expect("try_wait") {
            break status;
        }
        assert!(Instant::now() < deadline, "still running 10 s after SIGINT");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "exit: {status}");
}
