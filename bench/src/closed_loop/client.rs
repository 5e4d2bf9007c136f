//! The experiment's HTTP client: plain HTTP/1.1 over loopback, one request at a time on a
//! kept-alive connection, answers read by `load_tests::Answer` (the tests' one reader).

use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// One `GET` on a fresh connection: status and body.
///
/// # Errors
///
/// No connection, or no whole answer within `timeout`.
pub fn get(addr: SocketAddr, target: &str, timeout: Duration) -> std::io::Result<(u16, Vec<u8>)> {
    let answer = load_tests::try_get(addr, target, timeout)?;
    Ok((answer.status, answer.body))
}

/// `GET target` as JSON, when it answers 200 with JSON.
#[must_use]
pub fn get_json(addr: SocketAddr, target: &str) -> Option<serde_json::Value> {
    match get(addr, target, Duration::from_secs(5)) {
        Ok((200, body)) => serde_json::from_slice(&body).ok(),
        _ => None,
    }
}

/// A generator worker's connection to the server, opened when needed and kept alive while
/// the server keeps it.
#[derive(Debug)]
pub struct Connection {
    server: SocketAddr,
    reader: Option<BufReader<TcpStream>>,
    timeout: Duration,
}

impl Connection {
    /// A connection to `server`, opened at the first request, that waits at most 15 s for
    /// an answer.
    #[must_use]
    pub fn new(server: SocketAddr) -> Connection {
        Connection::with_timeout(server, Duration::from_secs(15))
    }

    /// The same, waiting at most `timeout` for an answer (then it hangs up, as a user's
    /// client does).
    #[must_use]
    pub fn with_timeout(server: SocketAddr, timeout: Duration) -> Connection {
        Connection {
            server,
            reader: None,
            timeout,
        }
    }

    /// `GET target`: the answer's status. After an error the connection is dropped, and
    /// the next request opens a new one.
    ///
    /// # Errors
    ///
    /// No connection, a reset, or no whole answer within the timeout.
    pub fn get(&mut self, target: &str) -> std::io::Result<u16> {
        let result = self.try_get(target);
        if result.is_err() {
            self.reader = None;
        }
        result
    }

    /// Opens the connection now if it is not open: a burst's clients connect before they
    /// send, as a browser's or a proxy's pool does.
    ///
    /// # Errors
    ///
    /// No connection within 5 s.
    pub fn open(&mut self) -> std::io::Result<()> {
        if self.reader.is_none() {
            let stream = TcpStream::connect_timeout(&self.server, Duration::from_secs(5))?;
            stream.set_read_timeout(Some(self.timeout))?;
            stream.set_nodelay(true)?;
            self.reader = Some(BufReader::new(stream));
        }
        Ok(())
    }

    fn try_get(&mut self, target: &str) -> std::io::Result<u16> {
        self.open()?;
        let Some(reader) = self.reader.as_mut() else {
            return Err(std::io::Error::other("no connection"));
        };
        write!(
            reader.get_mut(),
            "GET {target} HTTP/1.1\r\nHost: {}\r\n\r\n",
            self.server
        )?;
        let answer = load_tests::Answer::read_from(reader)?;
        if answer.closes() {
            self.reader = None;
        }
        Ok(answer.status)
    }
}
