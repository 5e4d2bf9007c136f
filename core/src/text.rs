//! Text kept inline, so that [`crate::Config`] stays a small-enough `Copy` value without
//! allocation: [`Text`] for plain values, [`Secret`] for a password, [`Snippet`] for a short
//! piece of a bad value in an error.

pub use crate::snippet::Snippet;

use core::fmt;

/// Up to `N` bytes of text, stored inline and never cut: [`Text::new`] refuses longer text.
///
/// ```
/// use load_core::text::Text;
///
/// let path = Text::<16>::new("/etc/ca.pem").expect("fits");
/// assert_eq!(path.as_str(), "/etc/ca.pem");
/// assert!(Text::<4>::new("too long").is_none());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Text<const N: usize> {
    bytes: [u8; N],
    len: u16,
}

impl<const N: usize> Text<N> {
    /// The most bytes it holds.
    pub const CAPACITY: usize = N;

    /// `text`, or `None` when it is longer than `N` bytes.
    #[must_use]
    pub fn new(text: &str) -> Option<Text<N>> {
        const { assert!(N <= u16::MAX as usize, "a text holds at most 65535 bytes") };
        if text.len() > N {
            return None;
        }
        let mut bytes = [0; N];
        bytes[..text.len()].copy_from_slice(text.as_bytes());
        Some(Text {
            bytes,
            len: text.len() as u16,
        })
    }

    /// The text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        // Copied from a `&str` whole.
        core::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl<const N: usize> fmt::Display for Text<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<const N: usize> fmt::Debug for Text<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// A password: up to [`Secret::CAPACITY`] bytes, stored inline, shown as `***` by `Debug`
/// and `Display`. Only [`Secret::expose`] gives it out.
///
/// ```
/// use load_core::text::Secret;
///
/// let password = Secret::new("hunter2").expect("fits");
/// assert_eq!(format!("{password} {password:?}"), "*** Secret(***)");
/// assert_eq!(password.expose(), "hunter2");
/// ```
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Secret(Text<256>);

impl Secret {
    /// The most bytes a secret holds.
    pub const CAPACITY: usize = 256;

    /// `text`, or `None` when it is longer than [`Secret::CAPACITY`] bytes.
    #[must_use]
    pub fn new(text: &str) -> Option<Secret> {
        Text::new(text).map(Secret)
    }

    /// The secret itself: for an `Authorization` header, never for a log line.
    #[must_use]
    pub fn expose(&self) -> &str {
        self.0.as_str()
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}
