//! A real browser for page tests: Debian's headless Chromium, driven over the Chrome
//! DevTools Protocol (one WebSocket to one page, blocking, every wait bounded).
//!
//! [`Browser::start`] launches `chromium` with a fresh profile and a free debugging port;
//! dropping the [`Browser`] kills it and removes the profile. [`Page`] navigates, evaluates
//! JavaScript, emulates a device or colour scheme, takes screenshots and collects console
//! errors and uncaught exceptions.

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

/// The flags every test run uses: no sandbox (CI runs as root), no GPU, and nothing that
/// talks to the network or changes the profile behind the test's back.
pub const FLAGS: [&str; 7] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
];

/// Where the browser binary is: `$CHROMIUM`, else Debian's `/usr/bin/chromium`.
#[must_use]
pub fn binary() -> PathBuf {
    std::env::var_os("CHROMIUM").map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from)
}

/// A running headless Chromium.
#[derive(Debug)]
pub struct Browser {
    child: Child,
    port: u16,
    profile: PathBuf,
}

impl Browser {
    /// Starts Chromium and waits (up to 30 s) until its DevTools endpoint listens.
    ///
    /// # Panics
    ///
    /// When the binary is missing (the message says how to install it) or does not come up.
    #[must_use]
    pub fn start() -> Browser {
        let binary = binary();
        assert!(
            binary.exists(),
            "{} not found: install Debian's `chromium` (apt-get install chromium), or set \
             CHROMIUM to a Chromium binary",
            binary.display()
        );
        static STARTED: AtomicU32 = AtomicU32::new(0);
        let profile = std::env::temp_dir().join(format!(
            "load-tests-chromium-{}-{}",
            std::process::id(),
            STARTED.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&profile);
        std::fs::create_dir_all(&profile).expect("profile dir");
        let mut child = Command::new(&binary)
            .args(FLAGS)
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("--remote-debugging-port=0")
            .arg("--remote-debugging-address=127.0.0.1")
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start chromium");
        // Chromium prints "DevTools listening on ws://127.0.0.1:PORT/..." on stderr.
        let stderr = child.stderr.take().expect("stderr");
        let (found, port) = mpsc::channel();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if !sent
                    && let Some(rest) = line.split("ws://127.0.0.1:").nth(1)
                    && let Some(port) = rest.split('/').next().and_then(|p| p.parse().ok())
                {
                    let _ = found.send(port);
                    sent = true;
                }
            }
        });
        let port: u16 = match port.recv_timeout(Duration::from_secs(30)) {
            Ok(port) => port,
            Err(_) => {
                let _ = child.kill();
                panic!("chromium printed no DevTools address in 30 s");
            }
        };
        Browser {
            child,
            port,
            profile,
        }
    }

    /// Opens a connection to the browser's first page (`about:blank`).
    ///
    /// # Panics
    ///
    /// When the DevTools endpoint answers unexpectedly.
    #[must_use]
    pub fn page(&self) -> Page {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], self.port));
        let deadline = Instant::now() + Duration::from_secs(10);
        let url = loop {
            let targets: Value =
                serde_json::from_slice(&devtools_get(addr, "/json/list")).unwrap_or(Value::Null);
            let page = targets
                .as_array()
                .into_iter()
                .flatten()
                .find(|t| t["type"] == "page")
                .and_then(|t| t["webSocketDebuggerUrl"].as_str().map(str::to_owned));
            if let Some(url) = page {
                break url;
            }
            assert!(Instant::now() < deadline, "no page target: {targets}");
            std::thread::sleep(Duration::from_millis(50));
        };
        let (socket, _) = tungstenite::connect(&url).expect("connect to the page");
        if let MaybeTlsStream::Plain(stream) = socket.get_ref() {
            stream
                .set_read_timeout(Some(Duration::from_millis(200)))
                .expect("read timeout");
        }
        let mut page = Page {
            socket,
            next_id: 0,
            events: Vec::new(),
        };
        for domain in ["Page", "Runtime", "Log"] {
            page.call(&format!("{domain}.enable"), json!({}));
        }
        page
    }
}

/// A GET to the DevTools HTTP endpoint, which keeps the connection open after its answer:
/// the body is read by its `Content-Length`.
fn devtools_get(addr: std::net::SocketAddr, target: &str) -> Vec<u8> {
    use std::io::{Read, Write};
    let mut stream = TcpStream::connect(addr).expect("connect to DevTools");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    write!(stream, "GET {target} HTTP/1.1\r\nHost: {addr}\r\n\r\n").expect("send");
    let mut reader = BufReader::new(stream);
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("DevTools answer head");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().expect("Content-Length");
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).expect("DevTools answer body");
    body
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// One page of the browser, over its DevTools WebSocket.
#[derive(Debug)]
pub struct Page {
    socket: WebSocket<MaybeTlsStream<TcpStream>>,
    next_id: u64,
    /// Every event received so far, in order.
    events: Vec<Value>,
}

/// How long one DevTools call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

impl Page {
    /// Sends one DevTools command and returns its result, keeping the events that arrive
    /// meanwhile.
    ///
    /// # Panics
    ///
    /// On a protocol error, a closed socket or no answer in 30 s.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({"id": id, "method": method, "params": params});
        self.socket
            .send(Message::text(request.to_string()))
            .expect("send a DevTools command");
        let deadline = Instant::now() + CALL_TIMEOUT;
        loop {
            assert!(Instant::now() < deadline, "{method}: no answer in 30 s");
            let Some(message) = self.receive() else {
                continue;
            };
            if message["id"] == id {
                if let Some(error) = message.get("error") {
                    panic!("{method}: {error}");
                }
                return message["result"].clone();
            }
            self.events.push(message);
        }
    }

    /// One message, or `None` after the read timeout.
    fn receive(&mut self) -> Option<Value> {
        match self.socket.read() {
            Ok(Message::Text(text)) => serde_json::from_str(text.as_str()).ok(),
            Ok(_) => None,
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                None
            }
            Err(e) => panic!("DevTools socket: {e}"),
        }
    }

    /// Waits up to `timeout` for an event named `method` after the first `after` events;
    /// returns its index.
    ///
    /// # Panics
    ///
    /// When none arrives in time.
    pub fn wait_for_event(&mut self, method: &str, after: usize, timeout: Duration) -> usize {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(index) = self.events[after.min(self.events.len())..]
                .iter()
                .position(|event| event["method"] == method)
            {
                return after + index;
            }
            assert!(
                Instant::now() < deadline,
                "no {method} event in {timeout:?}"
            );
            if let Some(message) = self.receive() {
                self.events.push(message);
            }
        }
    }

    /// How many events arrived so far (a mark for [`Page::wait_for_event`]).
    #[must_use]
    pub fn event_count(&self) -> usize {
        self.events.len()
    }

    /// Loads `url` and waits (up to 30 s) for its `load` event.
    pub fn navigate(&mut self, url: &str) {
        let mark = self.events.len();
        let result = self.call("Page.navigate", json!({"url": url}));
        assert!(
            result.get("errorText").is_none(),
            "navigate {url}: {result}"
        );
        self.wait_for_event("Page.loadEventFired", mark, Duration::from_secs(30));
    }

    /// Evaluates `expression` in the page and returns its value (JSON-serialisable).
    ///
    /// # Panics
    ///
    /// When the expression throws.
    pub fn eval(&mut self, expression: &str) -> Value {
        let result = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        if let Some(exception) = result.get("exceptionDetails") {
            panic!("{expression}: {exception}");
        }
        result["result"]["value"].clone()
    }

    /// Sets the viewport (CSS pixels) and whether it is a phone.
    pub fn viewport(&mut self, width: u32, height: u32, mobile: bool) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}),
        );
    }

    /// Emulates `prefers-color-scheme: scheme` ("light" or "dark").
    pub fn color_scheme(&mut self, scheme: &str) {
        self.call(
            "Emulation.setEmulatedMedia",
            json!({"features": [{"name": "prefers-color-scheme", "value": scheme}]}),
        );
    }

    /// Saves a PNG of the whole page to `path`.
    ///
    /// # Panics
    ///
    /// When the screenshot cannot be taken or written.
    pub fn screenshot(&mut self, path: &Path) {
        let result = self.call(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true}),
        );
        let data = result["data"].as_str().expect("screenshot data");
        let png = data_encoding::BASE64
            .decode(data.as_bytes())
            .expect("base64 screenshot");
        assert!(png.starts_with(b"\x89PNG"), "not a PNG");
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("artifact dir");
        }
        std::fs::write(path, png).expect("write the screenshot");
    }

    /// Console errors, `console.error` calls and uncaught exceptions seen so far, as text.
    #[must_use]
    pub fn errors(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|event| {
                let params = &event["params"];
                match event["method"].as_str()? {
                    "Runtime.exceptionThrown" => Some(params["exceptionDetails"].to_string()),
                    "Runtime.consoleAPICalled" if params["type"] == "error" => {
                        Some(params["args"].to_string())
                    }
                    "Log.entryAdded" if params["entry"]["level"] == "error" => {
                        Some(params["entry"].to_string())
                    }
                    _ => None,
                }
            })
            .collect()
    }
}
