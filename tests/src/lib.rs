//! Shared helpers of the integration tests: the OpenSearch fixtures of `tests/fixtures`,
//! a loopback OpenSearch stub that serves them, and a log capture.

use std::path::PathBuf;

/// The repository's README, whose Rust examples run as this crate's doc tests.
#[doc = include_str!("../../README.md")]
#[cfg(doctest)]
pub struct ReadmeExamples;

pub mod browser;
pub mod logs;
pub mod recorded;
pub mod stub;

pub use recorded::{Poll, PollLog, Recorded};
pub use stub::{Reply, Stub};

/// `http://127.0.0.1:PORT` of a loopback port with nothing listening: connecting to it is
/// refused at once.
///
/// # Panics
///
/// When no loopback port can be bound.
#[must_use]
pub fn dead_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    format!("http://{addr}")
}

/// The variable that names the real cluster for the tests that need one.
pub const OPENSEARCH_URL_VAR: &str = "LOAD_OPENSEARCH_URL";

/// Checks a real cluster's address as `tests/opensearch/cluster.sh start` prints it: one
/// `http(s)://host:port` (a trailing `/` is dropped) and nothing else. The error names the
/// value, escapes shown, so that a captured colour code or a second line is seen at once.
///
/// # Errors
///
/// A message naming the value and what is wrong with it.
pub fn check_cluster_url(value: &str) -> Result<&str, String> {
    let url = value.strip_suffix('/').unwrap_or(value);
    let parsed = load_core::config::NodeUrl::parse(url).map_err(|e| {
        format!(
            "{OPENSEARCH_URL_VAR}={value:?} is not a cluster URL ({e}); expected http://HOST:PORT"
        )
    })?;
    if parsed.credentials().is_some() || url.matches('/').count() != 2 {
        return Err(format!(
            "{OPENSEARCH_URL_VAR}={value:?} is not a cluster URL (a path or credentials); \
             expected http://HOST:PORT"
        ));
    }
    Ok(url)
}

/// The real cluster's address from [`OPENSEARCH_URL_VAR`], checked once per process with
/// [`check_cluster_url`].
///
/// # Panics
///
/// At once, in every test that asks, when the variable is unset or not a cluster URL: a
/// test must never wait for a cluster at an address that cannot be one.
#[must_use]
pub fn opensearch_url() -> &'static str {
    static CHECKED: std::sync::OnceLock<Result<String, String>> = std::sync::OnceLock::new();
    let checked = CHECKED.get_or_init(|| match std::env::var(OPENSEARCH_URL_VAR) {
        Ok(value) => check_cluster_url(&value).map(str::to_owned),
        Err(_) => Err(format!(
            "{OPENSEARCH_URL_VAR} is not set: start a cluster with tests/opensearch/cluster.sh \
             start and export {OPENSEARCH_URL_VAR}=$(tests/opensearch/cluster.sh url)"
        )),
    });
    match checked {
        Ok(url) => url,
        Err(message) => panic!("{message}"),
    }
}

/// Polls `condition` every 10 ms until it holds or `timeout` passes; whether it held.
/// For conditions that other threads make true (a server, a monitor).
pub fn wait_until(timeout: std::time::Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + timeout;
    while std::time::Instant::now() < deadline {
        if condition() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    condition()
}

/// Polls `condition` every 10 ms on runtime `R`'s timer until it holds or `timeout` passes;
/// whether it held. The async counterpart of [`wait_until`], for scenarios on a runtime.
pub async fn eventually<R: load_runtime::Runtime + Default>(
    timeout: std::time::Duration,
    mut condition: impl FnMut() -> bool,
) -> bool {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if condition() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        load_core::time::Sleep::sleep(&R::default(), std::time::Duration::from_millis(10)).await;
    }
}

/// Runs each listed `async fn name<R>()` scenario as a `#[test]` on smol (`on_smol::name`)
/// and on async-std (`on_async_std::name`), under that runtime's executor. The calling
/// test crate needs `smol`, `async-std`, `load-smol` and `load-async-std`.
#[macro_export]
macro_rules! on_both_runtimes {
    ($($name:ident),* $(,)?) => {
        mod on_smol {
            $(#[test]
            fn $name() {
                ::smol::block_on(super::$name::<::load_smol::Smol>());
            })*
        }
        mod on_async_std {
            $(#[test]
            fn $name() {
                ::async_std::task::block_on(super::$name::<::load_async_std::AsyncStd>());
            })*
        }
    };
}

/// A fixture of `tests/fixtures/opensearch`, as a server would send it.
#[derive(Clone, Debug)]
pub struct Fixture {
    /// File name without `.json`.
    pub name: String,
    /// HTTP status to answer with.
    pub status: u16,
    /// Response headers (lower-case names).
    pub headers: Vec<(String, String)>,
    /// The exact body bytes.
    pub body: Vec<u8>,
}

/// The fixture directory, `tests/fixtures/opensearch` in this repository: real responses
/// captured by `tests/opensearch/cluster.sh capture` (`os-VERSION-real-*`) and responses
/// constructed from the servers' source where no real cluster gives them on demand (its
/// README says which is which).
#[must_use]
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/opensearch")
}

/// Loads one fixture by name (`"os-2x-3nodes"`, `"os-3.4.0-real-401"`).
///
/// Success files are raw bodies served with status 200; error files are wrappers
/// `{"request", "status", "headers", "body"}` whose string body is sent as plain text and
/// whose JSON body is serialised.
///
/// # Panics
///
/// When the file is missing or is not JSON: the fixtures are part of the repository.
#[must_use]
pub fn fixture(name: &str) -> Fixture {
    let path = fixtures_dir().join(format!("{name}.json"));
    let raw = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let value: serde_json::Value =
        serde_json::from_slice(&raw).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let wrapper = value.as_object().filter(|o| {
        o.contains_key("status") && o.contains_key("body") && o.contains_key("request")
    });
    match wrapper {
        Some(wrapper) => Fixture {
            name: name.to_owned(),
            status: wrapper["status"]
                .as_u64()
                .and_then(|s| u16::try_from(s).ok())
                .unwrap_or_else(|| panic!("{name}: bad status")),
            headers: wrapper["headers"]
                .as_object()
                .map(|h| {
                    h.iter()
                        .map(|(k, v)| {
                            (
                                k.to_ascii_lowercase(),
                                v.as_str().unwrap_or_default().to_owned(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default(),
            body: match &wrapper["body"] {
                serde_json::Value::String(text) => text.clone().into_bytes(),
                json => json.to_string().into_bytes(),
            },
        },
        None => Fixture {
            name: name.to_owned(),
            status: 200,
            headers: vec![(
                "content-type".to_owned(),
                "application/json; charset=UTF-8".to_owned(),
            )],
            body: raw,
        },
    }
}

/// Names (without `.json`) of every fixture file, sorted: the constructed ones and the real
/// captures.
///
/// # Panics
///
/// When the directory cannot be read.
#[must_use]
pub fn fixture_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures_dir())
        .expect("fixture directory")
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".json").map(str::to_owned)
        })
        .collect();
    names.sort();
    names
}

/// The OpenSearch versions the repository holds real captures of (`os-VERSION-real-full`),
/// sorted: one of each line the project tests against (2.x for Fess 14, 3.x for Fess 15).
///
/// # Panics
///
/// When the directory cannot be read.
#[must_use]
pub fn captured_versions() -> Vec<String> {
    let mut versions: Vec<String> = fixture_names()
        .iter()
        .filter_map(|name| {
            name.strip_prefix("os-")?
                .strip_suffix("-real-full")
                .map(str::to_owned)
        })
        .collect();
    versions.sort();
    versions
}

/// The real capture `os-VERSION-real-KIND` of every captured version, as a server sent it:
/// `(version, fixture)`.
///
/// # Panics
///
/// When a version lacks that capture: `cluster.sh capture` takes every kind of each.
#[must_use]
pub fn captured(kind: &str) -> Vec<(String, Fixture)> {
    captured_versions()
        .into_iter()
        .map(|version| {
            let fixture = fixture(&format!("os-{version}-real-{kind}"));
            (version, fixture)
        })
        .collect()
}

/// Successful `_nodes/stats/os` bodies captured from a real cluster
/// (`tests/opensearch/cluster.sh capture`), the filtered and the full request of each
/// version: `(file name without .json, body)`, sorted.
///
/// # Panics
///
/// When the directory cannot be read, or holds none.
#[must_use]
pub fn captured_fixtures() -> Vec<(String, Vec<u8>)> {
    let mut captures: Vec<(String, Vec<u8>)> = ["filtered", "full"]
        .iter()
        .flat_map(|kind| captured(kind))
        .map(|(_, fixture)| (fixture.name, fixture.body))
        .collect();
    assert!(
        !captures.is_empty(),
        "no captures in {}",
        fixtures_dir().display()
    );
    captures.sort();
    captures
}

/// Sends `GET target` exactly as written (no client-side normalisation) over HTTP/1.1 with
/// `Connection: close`, and returns the raw response.
///
/// # Panics
///
/// When the server cannot be reached or does not answer within 10 s.
#[must_use]
pub fn raw_exchange(addr: std::net::SocketAddr, target: &str) -> Vec<u8> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .expect("timeout");
    write!(
        stream,
        "GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read");
    raw
}

/// An HTTP/1.1 response as its bytes came: status, headers (lower-case names), body (a
/// chunked body decoded).
#[derive(Clone, Debug)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// The headers, names in lower case, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Answer {
    /// Parses a whole response.
    ///
    /// # Panics
    ///
    /// When `raw` has no head or no status line.
    #[must_use]
    pub fn parse(raw: &[u8]) -> Answer {
        Answer::read_from(&mut std::io::BufReader::new(raw)).expect("a response")
    }

    /// Reads one response from `reader`: the head, then a body of `Content-Length` bytes, a
    /// chunked body, or (neither given) everything to the end. On a kept-alive connection
    /// the next response can be read after it.
    ///
    /// # Errors
    ///
    /// The reader's error, or [`std::io::ErrorKind::InvalidData`] for a response that is
    /// not HTTP/1.1 (no status line, a head cut short).
    pub fn read_from(reader: &mut impl std::io::BufRead) -> std::io::Result<Answer> {
        let invalid = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidData, why);
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Err(invalid("the connection closed before a response".into()));
        }
        let status = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| invalid(format!("bad status line {line:?}")))?;
        let mut headers = Vec::new();
        loop {
            line.clear();
            if reader.read_line(&mut line)? == 0 {
                return Err(invalid("the connection closed in the head".into()));
            }
            let trimmed = line.trim_end();
            if trimmed.is_empty() {
                break;
            }
            if let Some((name, value)) = trimmed.split_once(':') {
                headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
            }
        }
        let mut answer = Answer {
            status,
            headers,
            body: Vec::new(),
        };
        let chunked = answer
            .header("transfer-encoding")
            .is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
        if chunked {
            answer.body = read_chunked(reader)?;
        } else if let Some(length) = answer.header("content-length") {
            let length = length
                .parse()
                .map_err(|_| invalid(format!("bad content-length {length:?}")))?;
            answer.body = vec![0; length];
            reader.read_exact(&mut answer.body)?;
        } else {
            reader.read_to_end(&mut answer.body)?;
        }
        Ok(answer)
    }

    /// The first value of header `name` (lower case).
    #[must_use]
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the server closes the connection after this response.
    #[must_use]
    pub fn closes(&self) -> bool {
        self.header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }

    /// The body as text.
    #[must_use]
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// A chunked body, decoded.
fn read_chunked(reader: &mut impl std::io::BufRead) -> std::io::Result<Vec<u8>> {
    let mut body = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(body);
        }
        let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16).map_err(
            |_| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("bad chunk {line:?}"),
                )
            },
        )?;
        if size == 0 {
            // The trailer, up to its empty line.
            loop {
                line.clear();
                if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
                    return Ok(body);
                }
            }
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        line.clear();
        reader.read_line(&mut line)?;
    }
}

/// [`raw_exchange`], parsed.
#[must_use]
pub fn raw_get(addr: std::net::SocketAddr, target: &str) -> Answer {
    Answer::parse(&raw_exchange(addr, target))
}

/// `GET target` on a fresh connection to `addr` (`host:port`), `Connection: close`, with
/// `timeout` for connecting and for each read: the fallible [`raw_get`], for probes that
/// must not panic (a server still starting, a cluster node down).
///
/// # Errors
///
/// Connecting, sending or reading failed, or the answer is not HTTP/1.1.
pub fn try_get(
    addr: impl std::net::ToSocketAddrs,
    target: &str,
    timeout: std::time::Duration,
) -> std::io::Result<Answer> {
    use std::io::Write;
    let addr = addr
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| std::io::Error::other("no address"))?;
    let mut stream = std::net::TcpStream::connect_timeout(&addr, timeout)?;
    stream.set_read_timeout(Some(timeout))?;
    write!(
        stream,
        "GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    Answer::read_from(&mut std::io::BufReader::new(stream))
}

/// The checkout's root: where the README's commands run from.
#[must_use]
pub fn checkout_root() -> &'static std::path::Path {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate sits in the checkout's root")
}

/// The arguments of the README's command that follows `prefix`, each one naming a file of
/// the checkout made a path from its root, as a reader who runs the command from there
/// hands it over. A command on a line of its own (a code block's, starting `cargo `) ends
/// with its line; one in running text ends at its closing backtick, across a line break.
///
/// # Panics
///
/// The README has no such command.
#[must_use]
pub fn readme_command(prefix: &str) -> Vec<String> {
    let readme = std::fs::read_to_string(checkout_root().join("README.md")).expect("README.md");
    let at = readme
        .find(prefix)
        .unwrap_or_else(|| panic!("the README has no command {prefix:?}"))
        + prefix.len();
    let line_start = readme[..at].rfind('\n').map_or(0, |n| n + 1);
    let end = if readme[line_start..].starts_with("cargo ") {
        readme[at..].find('\n').unwrap_or(readme.len() - at)
    } else {
        readme[at..]
            .find('`')
            .expect("the command's closing backtick")
    };
    readme[at..at + end]
        .split_whitespace()
        .map(|arg| {
            let path = checkout_root().join(arg);
            if path.is_file() {
                path.display().to_string()
            } else {
                arg.to_owned()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::check_cluster_url;

    /// Found on a fresh machine: Maven's colour codes in front of the address that
    /// `cluster.sh start` printed made every real-cluster test wait 120 s, then fail.
    #[test]
    fn responses_are_read_by_length_chunks_or_to_the_end() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 429 Too Many\r\n\
            Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nbus\r\n1;x=y\r\ny\r\n0\r\n\r\n";
        let mut reader = std::io::BufReader::new(&raw[..]);
        let first = super::Answer::read_from(&mut reader).unwrap();
        assert_eq!(
            (first.status, first.text().as_str(), first.closes()),
            (200, "ok", false)
        );
        let second = super::Answer::read_from(&mut reader).unwrap();
        assert_eq!(
            (second.status, second.text().as_str(), second.closes()),
            (429, "busy", true)
        );
        let to_the_end = super::Answer::parse(b"HTTP/1.0 200 OK\r\n\r\nall of it");
        assert_eq!(to_the_end.text(), "all of it");
        assert!(super::Answer::read_from(&mut std::io::BufReader::new(&b"garbage"[..])).is_err());
    }

    #[test]
    fn a_captured_colour_code_is_refused_at_once_and_named() {
        let error = check_cluster_url("\u{1b}[0m\u{1b}[0mhttp://127.0.0.1:40901").unwrap_err();
        assert!(
            error.contains(r#""\u{1b}[0m\u{1b}[0mhttp://127.0.0.1:40901""#),
            "{error}"
        );
        for bad in [
            "",
            "http://127.0.0.1:40901\nhttp://127.0.0.1:40902",
            " http://127.0.0.1:40901",
            "127.0.0.1:40901",
            "http://127.0.0.1:40901/prefix",
            "http://u:p@127.0.0.1:40901",
        ] {
            assert!(check_cluster_url(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            check_cluster_url("http://127.0.0.1:40901/"),
            Ok("http://127.0.0.1:40901")
        );
        assert_eq!(
            check_cluster_url("http://127.0.0.1:40901"),
            Ok("http://127.0.0.1:40901")
        );
    }
}
