//! Cluster addresses: one [`NodeUrl`], or the comma-separated list of `search_engine.http.url`
//! ([`ClusterUrls`]).

use core::fmt;

use crate::text::Snippet;

/// Why a cluster address was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum UrlError {
    /// Not `http://` or `https://`.
    UnsupportedScheme,
    /// Nothing between the scheme and the path.
    MissingHost,
    /// The port is not a number from 1 to 65535.
    InvalidPort,
    /// Whitespace or control characters, or a comma in one address (a list of addresses
    /// is a [`ClusterUrls`]).
    InvalidCharacter,
    /// Longer than [`NodeUrl::CAPACITY`] bytes.
    TooLong,
    /// A list with an empty item (`http://a:9200,,http://b:9200`, or a trailing comma).
    EmptyItem,
    /// A list of more than [`ClusterUrls::MAX`] addresses.
    TooMany,
}

impl fmt::Display for UrlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            UrlError::UnsupportedScheme => "expected http:// or https://",
            UrlError::MissingHost => "no host",
            UrlError::InvalidPort => "the port is not a number from 1 to 65535",
            UrlError::InvalidCharacter => {
                "contains whitespace, a control character, or a comma inside one address"
            }
            UrlError::TooLong => "longer than 512 bytes",
            UrlError::EmptyItem => "an empty address in the comma-separated list",
            UrlError::TooMany => "more than 8 addresses in the list",
        })
    }
}

impl core::error::Error for UrlError {}

/// A cluster address (`http(s)://[user:password@]host[:port][/path]`), checked and stored
/// inline, without allocation.
///
/// Its `Debug` and `Display` hide any password: `https://admin:***@host:9200`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct NodeUrl {
    bytes: [u8; NodeUrl::CAPACITY],
    len: u16,
}

impl NodeUrl {
    /// The longest address accepted, in bytes.
    pub const CAPACITY: usize = 512;

    /// No address (only a placeholder, never a parse result).
    const EMPTY: NodeUrl = NodeUrl {
        bytes: [0; Self::CAPACITY],
        len: 0,
    };

    /// Checks and stores an address.
    ///
    /// # Errors
    ///
    /// A [`UrlError`] when the scheme is not `http`/`https`, the host is empty, the port is
    /// not a number, it contains whitespace, control characters or a comma, or it is longer
    /// than [`NodeUrl::CAPACITY`].
    pub fn parse(text: &str) -> Result<NodeUrl, UrlError> {
        if text.len() > Self::CAPACITY {
            return Err(UrlError::TooLong);
        }
        if text
            .bytes()
            .any(|b| b.is_ascii_whitespace() || b.is_ascii_control() || b == b',')
        {
            return Err(UrlError::InvalidCharacter);
        }
        // Compared as bytes: the text may hold a multi-byte character where a prefix ends.
        let lower_starts = |prefix: &str| {
            text.as_bytes()
                .get(..prefix.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
        };
        let rest = if lower_starts("http://") {
            &text[7..]
        } else if lower_starts("https://") {
            &text[8..]
        } else {
            return Err(UrlError::UnsupportedScheme);
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        let host_port = authority.rsplit('@').next().unwrap_or_default();
        let (host, port) = match host_port.rfind(':') {
            Some(colon) if !host_port[colon..].contains(']') => {
                (&host_port[..colon], Some(&host_port[colon + 1..]))
            }
            _ => (host_port, None),
        };
        if host.is_empty() {
            return Err(UrlError::MissingHost);
        }
        if let Some(port) = port
            && !matches!(port.parse::<u16>(), Ok(p) if p > 0 && port.bytes().all(|b| b.is_ascii_digit()))
        {
            return Err(UrlError::InvalidPort);
        }
        let mut bytes = [0; Self::CAPACITY];
        bytes[..text.len()].copy_from_slice(text.as_bytes());
        Ok(NodeUrl {
            bytes,
            len: text.len() as u16,
        })
    }

    /// The address as given, credentials included: hand it to an HTTP client, never to a
    /// log line.
    #[must_use]
    pub fn as_str(&self) -> &str {
        // Copied from a `&str` whole.
        core::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }

    /// The address with any userinfo removed.
    ///
    /// ```
    /// use load_core::config::NodeUrl;
    ///
    /// let url = NodeUrl::parse("https://admin:secret@host:9200/").expect("url");
    /// assert_eq!(url.without_credentials().as_str(), "https://host:9200/");
    /// ```
    #[must_use]
    pub fn without_credentials(&self) -> NodeUrl {
        let (scheme, rest) = self.split_credentials();
        let mut bytes = [0; Self::CAPACITY];
        bytes[..scheme.len()].copy_from_slice(scheme.as_bytes());
        bytes[scheme.len()..scheme.len() + rest.len()].copy_from_slice(rest.as_bytes());
        NodeUrl {
            bytes,
            len: (scheme.len() + rest.len()) as u16,
        }
    }

    /// The text before the userinfo (`https://`) and after it (`host:9200/`); the whole
    /// text and `""` when there is none.
    fn split_credentials(&self) -> (&str, &str) {
        let text = self.as_str();
        let scheme_end = text.find("://").map_or(0, |i| i + 3);
        let authority_end = text[scheme_end..]
            .find(['/', '?', '#'])
            .map_or(text.len(), |i| scheme_end + i);
        match text[scheme_end..authority_end].rfind('@') {
            Some(at) => (&text[..scheme_end], &text[scheme_end + at + 1..]),
            None => (text, ""),
        }
    }

    /// The `user` and `password` of `http(s)://user:password@host`, if present (still
    /// percent-encoded as written).
    #[must_use]
    pub fn credentials(&self) -> Option<(&str, &str)> {
        let text = self.as_str();
        let scheme_end = text.find("://")? + 3;
        let authority = text[scheme_end..].split(['/', '?', '#']).next()?;
        let at = authority.rfind('@')?;
        let userinfo = &authority[..at];
        Some(userinfo.split_once(':').unwrap_or((userinfo, "")))
    }
}

impl fmt::Display for NodeUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (scheme, rest) = self.split_credentials();
        match self.credentials() {
            Some((user, _)) => write!(f, "{scheme}{user}:***@{rest}"),
            None => f.write_str(scheme),
        }
    }
}

impl fmt::Debug for NodeUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NodeUrl(\"{self}\")")
    }
}

/// The cluster's addresses, as Fess's `search_engine.http.url` gives them: a
/// comma-separated list of up to [`ClusterUrls::MAX`] addresses (`http://node1:9200,
/// http://node2:9200`), each a [`NodeUrl`], stored inline (512 bytes in all).
///
/// Any node answers node stats for the whole cluster, so a monitor polls one address at a
/// time and moves to the next after a failure.
///
/// `Display` and `Debug` hide every password.
///
/// ```
/// use load_core::config::ClusterUrls;
///
/// let urls = ClusterUrls::parse("http://node1:9200, https://admin:pw@[::1]:9200")?;
/// assert_eq!(urls.len(), 2);
/// assert_eq!(urls.get(1).map(|u| u.to_string()).as_deref(), Some("https://admin:***@[::1]:9200"));
/// assert_eq!(urls.to_string(), "http://node1:9200,https://admin:***@[::1]:9200");
/// # Ok::<(), load_core::config::UrlError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ClusterUrls {
    text: [u8; NodeUrl::CAPACITY],
    spans: [(u16, u16); ClusterUrls::MAX],
    count: u8,
}

impl ClusterUrls {
    /// The most addresses a list holds.
    pub const MAX: usize = 8;

    /// Checks and stores a comma-separated list; whitespace around each address is dropped.
    ///
    /// # Errors
    ///
    /// The [`UrlError`] of the first address that [`NodeUrl::parse`] refuses, or
    /// [`UrlError::EmptyItem`], [`UrlError::TooMany`], [`UrlError::TooLong`] for the list.
    pub fn parse(text: &str) -> Result<ClusterUrls, UrlError> {
        if text.len() > NodeUrl::CAPACITY {
            return Err(UrlError::TooLong);
        }
        let mut urls = ClusterUrls {
            text: [0; NodeUrl::CAPACITY],
            spans: [(0, 0); ClusterUrls::MAX],
            count: 0,
        };
        urls.text[..text.len()].copy_from_slice(text.as_bytes());
        let mut start = 0;
        for item in text.split(',') {
            let lead = item.len() - item.trim_start().len();
            let trimmed = item.trim();
            let at = start + lead;
            start += item.len() + 1;
            if trimmed.is_empty() {
                return Err(UrlError::EmptyItem);
            }
            NodeUrl::parse(trimmed)?;
            if usize::from(urls.count) == Self::MAX {
                return Err(UrlError::TooMany);
            }
            urls.spans[usize::from(urls.count)] = (at as u16, (at + trimmed.len()) as u16);
            urls.count += 1;
        }
        Ok(urls)
    }

    /// The list as written, credentials included: never for a log line.
    #[must_use]
    pub fn as_str(&self) -> &str {
        let end = usize::from(self.spans[self.len() - 1].1);
        core::str::from_utf8(&self.text[..end]).unwrap_or_default()
    }

    /// How many addresses (at least 1).
    #[must_use]
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        usize::from(self.count)
    }

    /// The address at `index`.
    #[must_use]
    pub fn get(&self, index: usize) -> Option<NodeUrl> {
        let &(start, end) = self.spans[..self.len()].get(index)?;
        let text = core::str::from_utf8(&self.text[usize::from(start)..usize::from(end)]).ok()?;
        NodeUrl::parse(text).ok()
    }

    /// The first address.
    #[must_use]
    pub fn first(&self) -> NodeUrl {
        // A list holds at least one valid address.
        self.get(0).unwrap_or(NodeUrl::EMPTY)
    }

    /// Every address, in order.
    pub fn iter(&self) -> impl Iterator<Item = NodeUrl> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }

    /// `text` (an address or a list, perhaps refused) for an error message: each address
    /// with any password replaced by `***`, cut at 48 bytes. A piece without a scheme that
    /// holds an `@` is shown as `…`.
    ///
    /// ```
    /// use load_core::config::ClusterUrls;
    ///
    /// let shown = ClusterUrls::redact("http://a:9200, https://admin:pa,ss@b:99999");
    /// assert_eq!(shown.as_str(), "http://a:9200,https://admin:***@b:99999");
    /// ```
    #[must_use]
    pub fn redact(text: &str) -> Snippet {
        redacted_url(text)
    }

    /// Whether any address has userinfo (`user:password@`).
    #[must_use]
    pub fn has_credentials(&self) -> bool {
        self.iter().any(|url| url.credentials().is_some())
    }
}

impl From<NodeUrl> for ClusterUrls {
    fn from(url: NodeUrl) -> Self {
        let mut text = [0; NodeUrl::CAPACITY];
        let len = url.as_str().len();
        text[..len].copy_from_slice(url.as_str().as_bytes());
        let mut spans = [(0, 0); ClusterUrls::MAX];
        spans[0] = (0, len as u16);
        ClusterUrls {
            text,
            spans,
            count: 1,
        }
    }
}

impl fmt::Display for ClusterUrls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, url) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            fmt::Display::fmt(&url, f)?;
        }
        Ok(())
    }
}

impl fmt::Debug for ClusterUrls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ClusterUrls(\"{self}\")")
    }
}

/// Addresses for an error message, each with everything between its scheme and its last
/// `@` (a password may hold an unescaped `/`, `?`, `#` or `,`) replaced by the user and
/// `:***`. The list is split only at commas followed by a scheme, so a comma inside a
/// password keeps its address whole; a piece without a scheme is shown only when it has no
/// `@`.
pub(crate) fn redacted_url(text: &str) -> Snippet {
    let text = text.trim();
    let mut shown = heapless::String::<{ Snippet::<48>::CAPACITY + 8 }>::new();
    let starts_item = |rest: &str| {
        let rest = rest.trim_start().as_bytes();
        [&b"http://"[..], b"https://"].iter().any(|scheme| {
            rest.get(..scheme.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(scheme))
        })
    };
    let mut start = 0;
    let mut first = true;
    for (i, _) in text.match_indices(',').chain([(text.len(), "")]) {
        if i < text.len() && !starts_item(&text[i + 1..]) {
            continue;
        }
        if !first && shown.push(',').is_err() {
            break;
        }
        first = false;
        if !redact_one(text[start..i].trim(), &mut shown) {
            break;
        }
        start = i + 1;
    }
    Snippet::new(&shown)
}

/// Appends one redacted address; `false` when `shown` is full.
fn redact_one<const N: usize>(text: &str, shown: &mut heapless::String<N>) -> bool {
    let Some(start) = text.find("://").map(|i| i + 3) else {
        let piece = if text.contains('@') { "…" } else { text };
        return shown.push_str(piece).is_ok();
    };
    let pieces: [&str; 4] = match text[start..].rfind('@') {
        Some(at) => {
            let user = text[start..start + at]
                .split([':', '/', '?', '#'])
                .next()
                .unwrap_or_default();
            [&text[..start], user, ":***@", &text[start + at + 1..]]
        }
        None => [text, "", "", ""],
    };
    for piece in pieces {
        for c in piece.chars() {
            if shown.push(c).is_err() {
                return false;
            }
        }
    }
    true
}
