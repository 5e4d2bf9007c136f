//! An HTTP/1.0 answer, read as the HTTP/1.1 one it means.
//!
//! surf's HTTP/1 decoder (async-h1) refuses any answer whose head does not start with
//! `HTTP/1.1` ("Unsupported HTTP version"), but a server in front of the cluster may answer
//! HTTP/1.0 (Python's `http.server`, some proxies and test stand-ins do): its body is
//! delimited by its `Content-Length`, or, without one, by the end of the connection, which
//! then closes. [`Upgrade`] sits between the connection and the decoder: an answer that
//! starts with `HTTP/1.0` is handed on as `HTTP/1.1`, a body delimited by the connection's
//! end is handed on chunked (so that the decoder reads it to that end, within the body's
//! cap, instead of taking it for empty), and the connection is never used again. Any other
//! answer passes as it came.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures::io::AsyncRead;

/// What an answer's head may take at most before the decoder refuses it (async-h1's limit).
const MOST_HEAD: usize = 8 * 1024;

/// How an HTTP/1.0 answer starts.
const HTTP10: &[u8] = b"HTTP/1.0";

/// How much of the connection's end-delimited body one chunk carries at most.
const CHUNK: usize = 8 * 1024;

/// Where an answer stands.
#[derive(Debug)]
enum Stage {
    /// The first bytes, until they say which version answers (held only while they may
    /// be the start of `HTTP/1.0`).
    Sniff,
    /// An HTTP/1.0 head, until its blank line.
    Head,
    /// Bytes as they come (after `pending`).
    Pass,
    /// An end-delimited body, handed on in chunks until the connection's end.
    Chunked,
    /// The last chunk was handed on: nothing more.
    Done,
}

/// The answer's reader between a connection and the decoder (see the module's docs).
#[derive(Debug)]
pub(crate) struct Upgrade {
    stage: Stage,
    /// Bytes read and held: a start that may be `HTTP/1.0`, or an HTTP/1.0 head.
    held: Vec<u8>,
    /// Bytes to hand on before reading more, from `pending[at..]`.
    pending: Vec<u8>,
    at: usize,
    http10: bool,
}

impl Default for Upgrade {
    fn default() -> Upgrade {
        Upgrade {
            stage: Stage::Sniff,
            held: Vec::new(),
            pending: Vec::new(),
            at: 0,
            http10: false,
        }
    }
}

impl Upgrade {
    /// Whether the answer was HTTP/1.0: its connection must not carry another exchange.
    pub(crate) const fn was_http10(&self) -> bool {
        self.http10
    }

    /// Reads the answer from `inner` into `buf`, as the decoder should see it.
    pub(crate) fn poll_read<R: AsyncRead + Unpin>(
        &mut self,
        inner: &mut R,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            if self.at < self.pending.len() {
                let n = buf.len().min(self.pending.len() - self.at);
                buf[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
                self.at += n;
                return Poll::Ready(Ok(n));
            }
            match self.stage {
                Stage::Pass => return Pin::new(inner).poll_read(cx, buf),
                Stage::Done => return Poll::Ready(Ok(0)),
                Stage::Sniff => {
                    // Straight into the decoder's buffer: an HTTP/1.1 answer passes with no
                    // copy, no allocation and no read more than it would take.
                    let n = ready!(Pin::new(&mut *inner).poll_read(cx, buf))?;
                    if self.held.is_empty() && (n == 0 || !HTTP10.starts_with(&buf[..n.min(8)])) {
                        self.stage = Stage::Pass;
                        return Poll::Ready(Ok(n));
                    }
                    if n == 0 {
                        // The connection ended first: hand on what came, as it came.
                        self.pass_held();
                        continue;
                    }
                    self.held.extend_from_slice(&buf[..n]);
                    self.advance();
                }
                Stage::Head => {
                    let mut chunk = [0u8; 512];
                    let n = ready!(Pin::new(&mut *inner).poll_read(cx, &mut chunk))?;
                    if n == 0 {
                        self.pass_held();
                        continue;
                    }
                    self.held.extend_from_slice(&chunk[..n]);
                    self.advance();
                }
                Stage::Chunked => {
                    let mut data = [0u8; CHUNK];
                    let n = ready!(Pin::new(&mut *inner).poll_read(cx, &mut data))?;
                    self.pending.clear();
                    self.at = 0;
                    if n == 0 {
                        self.pending.extend_from_slice(b"0\r\n\r\n");
                        self.stage = Stage::Done;
                    } else {
                        self.pending
                            .extend_from_slice(format!("{n:x}\r\n").as_bytes());
                        self.pending.extend_from_slice(&data[..n]);
                        self.pending.extend_from_slice(b"\r\n");
                    }
                }
            }
        }
    }

    /// Hands on what is held as it came, and the rest as it comes.
    fn pass_held(&mut self) {
        self.pending = core::mem::take(&mut self.held);
        self.at = 0;
        self.stage = Stage::Pass;
    }

    /// Moves on once what is held says enough.
    fn advance(&mut self) {
        match self.stage {
            Stage::Sniff if self.held.starts_with(HTTP10) => {
                self.http10 = true;
                self.stage = Stage::Head;
                self.advance();
            }
            // Not the start of an HTTP/1.0 answer (a prefix of one waits for more).
            Stage::Sniff if !HTTP10.starts_with(&self.held[..self.held.len().min(8)]) => {
                self.pass_held();
            }
            Stage::Head => {
                if let Some(end) = head_end(&self.held) {
                    self.upgrade_head(end);
                } else if self.held.len() > MOST_HEAD {
                    // Too long a head: the decoder says so.
                    self.pass_held();
                }
            }
            _ => {}
        }
    }

    /// The HTTP/1.0 head `held[..end]` (its blank line included) as HTTP/1.1, and the body
    /// bytes that came with it.
    fn upgrade_head(&mut self, end: usize) {
        let held = core::mem::take(&mut self.held);
        let (head, body) = held.split_at(end);
        let text = String::from_utf8_lossy(head);
        let framed = text.lines().skip(1).any(|line| {
            let name = line.split(':').next().unwrap_or("").trim();
            name.eq_ignore_ascii_case("content-length")
                || name.eq_ignore_ascii_case("transfer-encoding")
        });
        let mut pending = Vec::with_capacity(head.len() + 32);
        pending.extend_from_slice(b"HTTP/1.1");
        // The head without its blank line, then the framing, then the blank line.
        let blank = if head.ends_with(b"\r\n\r\n") { 2 } else { 1 };
        pending.extend_from_slice(&head[8..head.len() - blank]);
        if framed {
            pending.extend_from_slice(&head[head.len() - blank..]);
            pending.extend_from_slice(body);
            self.stage = Stage::Pass;
        } else {
            pending.extend_from_slice(b"transfer-encoding: chunked\r\n\r\n");
            if !body.is_empty() {
                pending.extend_from_slice(format!("{:x}\r\n", body.len()).as_bytes());
                pending.extend_from_slice(body);
                pending.extend_from_slice(b"\r\n");
            }
            self.stage = Stage::Chunked;
        }
        self.pending = pending;
        self.at = 0;
    }
}

/// Where a head's blank line ends in `bytes`, if it came.
fn head_end(bytes: &[u8]) -> Option<usize> {
    let crlf = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 4);
    let lf = bytes.windows(2).position(|w| w == b"\n\n").map(|i| i + 2);
    match (crlf, lf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::io::{AsyncReadExt, Cursor};

    /// What the decoder reads of `answer`, a byte at a time when `one` (reads cut
    /// anywhere), and whether it was HTTP/1.0.
    fn through(answer: &[u8], one: bool) -> (Vec<u8>, bool) {
        struct Reader<'a> {
            upgrade: &'a mut Upgrade,
            inner: Cursor<Vec<u8>>,
            one: bool,
        }
        impl AsyncRead for Reader<'_> {
            fn poll_read(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &mut [u8],
            ) -> Poll<io::Result<usize>> {
                let this = &mut *self;
                let buf = if this.one { &mut buf[..1] } else { buf };
                this.upgrade.poll_read(&mut this.inner, cx, buf)
            }
        }
        let mut upgrade = Upgrade::default();
        let mut out = Vec::new();
        futures::executor::block_on(
            Reader {
                upgrade: &mut upgrade,
                inner: Cursor::new(answer.to_vec()),
                one,
            }
            .read_to_end(&mut out),
        )
        .expect("read");
        (out, upgrade.was_http10())
    }

    #[test]
    fn an_http11_answer_passes_as_it_came() {
        for answer in [
            &b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"[..],
            b"HTTP/1.",
            b"",
            b"SSH-2.0-OpenSSH_9.2\r\n\r\n",
        ] {
            for one in [false, true] {
                assert_eq!(through(answer, one), (answer.to_vec(), false));
            }
        }
    }

    #[test]
    fn an_http10_answer_with_a_length_is_the_http11_one() {
        let answer = b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok";
        for one in [false, true] {
            assert_eq!(
                through(answer, one),
                (
                    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".to_vec(),
                    true
                )
            );
        }
    }

    #[test]
    fn an_http10_body_to_the_connections_end_is_chunked() {
        let answer = b"HTTP/1.0 200 OK\nServer: SimpleHTTP/0.6\n\n{\"nodes\":{}}";
        for one in [false, true] {
            let (out, http10) = through(answer, one);
            assert!(http10);
            let text = String::from_utf8(out).expect("text");
            assert!(
                text.starts_with(
                    "HTTP/1.1 200 OK\nServer: SimpleHTTP/0.6\ntransfer-encoding: chunked\r\n\r\n"
                ),
                "{text}"
            );
            assert!(text.ends_with("0\r\n\r\n"), "{text}");
            let body: String = text
                .split("\r\n\r\n")
                .nth(1)
                .expect("a body")
                .split("\r\n")
                .enumerate()
                .filter(|(i, _)| i % 2 == 1)
                .map(|(_, data)| data)
                .collect();
            assert_eq!(body, "{\"nodes\":{}}");
        }
        let empty = through(b"HTTP/1.0 204 No Content\r\n\r\n", false);
        assert_eq!(
            empty.0,
            b"HTTP/1.1 204 No Content\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n"
        );
    }

    #[test]
    fn an_http10_head_without_its_end_passes_as_it_came() {
        let answer = b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n";
        assert_eq!(through(answer, false), (answer.to_vec(), true));
        let mut long = b"HTTP/1.0 200 OK\r\nx: ".to_vec();
        long.extend(std::iter::repeat_n(b'a', MOST_HEAD + 10));
        assert_eq!(through(&long, false), (long.clone(), true));
    }
}
