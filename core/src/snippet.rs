//! A short piece of text kept inline, so that errors stay small `Copy` values.

use core::fmt;

/// Up to `N` bytes of text (48 by default), cut at a character boundary; `Display` marks a
/// cut with `…`.
///
/// ```
/// use load_core::text::Snippet;
///
/// let short = Snippet::<4>::new("hé€");
/// assert_eq!(short.as_str(), "hé"); // `€` (3 bytes) does not fit
/// assert!(short.is_truncated());
/// assert_eq!(short.to_string(), "hé…");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Snippet<const N: usize = 48> {
    bytes: [u8; N],
    len: u8,
    truncated: bool,
}

impl<const N: usize> Snippet<N> {
    /// The most bytes a snippet keeps.
    pub const CAPACITY: usize = N;

    /// No text.
    pub const EMPTY: Snippet<N> = Snippet {
        bytes: [0; N],
        len: 0,
        truncated: false,
    };

    /// Keeps up to `N` bytes of `text`.
    #[must_use]
    pub fn new(text: &str) -> Snippet<N> {
        const { assert!(N <= u8::MAX as usize, "a snippet holds at most 255 bytes") };
        let mut len = text.len().min(N);
        while !text.is_char_boundary(len) {
            len -= 1;
        }
        let mut bytes = [0; N];
        bytes[..len].copy_from_slice(&text.as_bytes()[..len]);
        Snippet {
            bytes,
            // `len <= N <= 255`, checked at compile time above.
            len: len as u8,
            truncated: len < text.len(),
        }
    }

    /// The kept text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        // Built from a `&str` cut at a character boundary, so this never fails.
        core::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }

    /// Whether the original was longer than what is kept.
    #[must_use]
    pub const fn is_truncated(&self) -> bool {
        self.truncated
    }

    /// Whether nothing is kept.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<const N: usize> Default for Snippet<N> {
    fn default() -> Self {
        Snippet::EMPTY
    }
}

impl<const N: usize> fmt::Display for Snippet<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())?;
        if self.truncated {
            f.write_str("…")?;
        }
        Ok(())
    }
}

impl<const N: usize> fmt::Debug for Snippet<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\"{self}\"")
    }
}
