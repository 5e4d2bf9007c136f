//! Java properties files, read as `java.util.Properties.load` reads them: no_std, without
//! allocating, one `(line, key, value)` entry at a time.
//!
//! The rules are Java's (`Properties.LineReader` and `loadConvert`, JDK 9 and later):
//!
//! - Physical lines end at `\n`, `\r` or `\r\n`. A line ending in an odd number of
//!   backslashes continues on the next one, whose leading whitespace (space, tab, form
//!   feed) is dropped. The logical line is joined first and its escapes decoded after, so a
//!   `\uXXXX` escape may be split across a continuation.
//! - While a logical line is still empty (at its start, or after a continuation that added
//!   nothing), a `#` or `!` starts a comment that runs to the end of its physical line, and
//!   a blank physical line is skipped.
//! - The key ends at the first unescaped `=`, `:` or whitespace; then whitespace, at most
//!   one `=` or `:` (if the key ended at whitespace), and whitespace again; the value is the
//!   rest of the logical line, trailing whitespace included.
//! - Escapes: `\t \n \r \f`, `\uXXXX` (a surrogate pair combines into one character; a
//!   lone surrogate becomes U+FFFD, which Rust strings cannot hold otherwise), and `\x` for
//!   any other `x` is `x`. A `\u` not followed by four hex digits makes the file invalid,
//!   as in Java.
//! - Bytes: UTF-8 when they are valid UTF-8 (a leading byte-order mark is dropped; Java
//!   would make it part of the first key), otherwise ISO-8859-1, one character per byte.
//!   Java's `load(InputStream)` reads ISO-8859-1 and its resource bundles read UTF-8 and
//!   fall back to ISO-8859-1: this is the latter.
//!
//! Keys longer than [`Entry::KEY_CAPACITY`] bytes and values longer than
//! [`Entry::VALUE_CAPACITY`] bytes (in UTF-8) are read whole but kept only in part, and
//! say so ([`Entry::key_is_complete`], [`Entry::value_is_complete`]): never a silently
//! shorter value.
//!
//! ```
//! use load_core::properties::{Encoding, Properties};
//!
//! let text = b"# Fess\nweb.load.control = 80\napi.load.control:\\\n    90\nlabel=caf\xe9\n";
//! let mut properties = Properties::new(text);
//! assert_eq!(properties.encoding(), Encoding::Latin1);
//! let entries: Vec<(u32, String, String)> = properties
//!     .map(|entry| entry.map(|e| (e.line(), e.key().to_owned(), e.value().to_owned())))
//!     .collect::<Result<_, _>>()?;
//! assert_eq!(entries[0], (2, "web.load.control".into(), "80".into()));
//! assert_eq!(entries[1], (3, "api.load.control".into(), "90".into()));
//! assert_eq!(entries[2], (5, "label".into(), "café".into()));
//! # Ok::<(), load_core::properties::EscapeError>(())
//! ```
//!
//! The reader's one error is its own ([`EscapeError`]); the configuration, which reads
//! through it, wraps it in a [`crate::ConfigError`].

use core::fmt;

use crate::text::Snippet;

/// A `\u` escape that is not four hex digits naming a character: the file is invalid, as
/// in Java. Says on which line (where the logical line starts) and shows the rest of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct EscapeError {
    /// The line the entry starts on (1-based).
    pub line: u32,
    /// The rest of the line from where the reader stopped, shortened and escaped.
    pub text: Snippet,
}

impl fmt::Display for EscapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}: malformed \\uXXXX escape in {:?}",
            self.line,
            self.text.as_str()
        )
    }
}

impl core::error::Error for EscapeError {}

/// How the bytes of a properties file were read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// Valid UTF-8.
    Utf8,
    /// Not valid UTF-8, so ISO-8859-1: each byte is the character of the same number.
    Latin1,
}

impl Encoding {
    /// `"UTF-8"` or `"ISO-8859-1"`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 => "UTF-8",
            Encoding::Latin1 => "ISO-8859-1",
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One `key = value` entry, escapes resolved.
#[derive(Clone)]
pub struct Entry {
    line: u32,
    key: [u8; Entry::KEY_CAPACITY],
    key_len: usize,
    key_complete: bool,
    value: [u8; Entry::VALUE_CAPACITY],
    value_len: usize,
    value_complete: bool,
}

impl Entry {
    /// The most bytes of a key kept.
    pub const KEY_CAPACITY: usize = 64;
    /// The most bytes of a value kept (the longest cluster address accepted).
    pub const VALUE_CAPACITY: usize = 512;

    /// The 1-based line where the entry starts.
    #[must_use]
    pub const fn line(&self) -> u32 {
        self.line
    }

    /// The key (its first [`Entry::KEY_CAPACITY`] bytes).
    #[must_use]
    pub fn key(&self) -> &str {
        core::str::from_utf8(&self.key[..self.key_len]).unwrap_or_default()
    }

    /// The value as Java reads it, trailing whitespace included (its first
    /// [`Entry::VALUE_CAPACITY`] bytes).
    #[must_use]
    pub fn value(&self) -> &str {
        core::str::from_utf8(&self.value[..self.value_len]).unwrap_or_default()
    }

    /// Whether the whole key was kept.
    #[must_use]
    pub const fn key_is_complete(&self) -> bool {
        self.key_complete
    }

    /// Whether the whole value was kept.
    #[must_use]
    pub const fn value_is_complete(&self) -> bool {
        self.value_complete
    }
}

impl fmt::Debug for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entry")
            .field("line", &self.line)
            .field("key", &self.key())
            .field("value", &self.value())
            .field("key_complete", &self.key_complete)
            .field("value_complete", &self.value_complete)
            .finish()
    }
}

/// Pushes a character into a fixed buffer, or records that it did not fit.
fn push(buf: &mut [u8], len: &mut usize, complete: &mut bool, c: char) {
    let mut utf8 = [0; 4];
    let encoded = c.encode_utf8(&mut utf8).as_bytes();
    match buf.get_mut(*len..*len + encoded.len()) {
        Some(slot) if *complete => {
            slot.copy_from_slice(encoded);
            *len += encoded.len();
        }
        _ => *complete = false,
    }
}

#[derive(Clone, Copy)]
enum Source<'a> {
    Utf8(&'a str),
    Latin1(&'a [u8]),
}

/// A place in the file to read from again: see [`Properties::position`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pos: usize,
    line: u32,
}

/// The entries of a properties file, in order (duplicates included: Java keeps the last).
#[derive(Clone)]
pub struct Properties<'a> {
    source: Source<'a>,
    pos: usize,
    line: u32,
    failed: bool,
}

impl fmt::Debug for Properties<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Properties")
            .field("encoding", &self.encoding())
            .field("line", &self.line)
            .finish_non_exhaustive()
    }
}

impl<'a> Properties<'a> {
    /// The entries of `bytes`: UTF-8 if they are valid UTF-8, else ISO-8859-1.
    #[must_use]
    pub fn new(bytes: &'a [u8]) -> Properties<'a> {
        match core::str::from_utf8(bytes) {
            Ok(text) => Properties::from_text(text),
            Err(_) => Properties {
                source: Source::Latin1(bytes),
                pos: 0,
                line: 1,
                failed: false,
            },
        }
    }

    /// The entries of `text`.
    #[must_use]
    pub fn from_text(text: &'a str) -> Properties<'a> {
        Properties {
            source: Source::Utf8(text.strip_prefix('\u{feff}').unwrap_or(text)),
            pos: 0,
            line: 1,
            failed: false,
        }
    }

    /// How the bytes are read.
    #[must_use]
    pub const fn encoding(&self) -> Encoding {
        match self.source {
            Source::Utf8(_) => Encoding::Utf8,
            Source::Latin1(_) => Encoding::Latin1,
        }
    }

    /// Where the next entry starts (blank and comment lines before it included).
    #[must_use]
    pub const fn position(&self) -> Position {
        Position {
            pos: self.pos,
            line: self.line,
        }
    }

    /// The entries from `position` on (a position of these same bytes).
    #[must_use]
    pub fn at(&self, position: Position) -> Properties<'a> {
        Properties {
            source: self.source,
            pos: position.pos,
            line: position.line,
            failed: false,
        }
    }

    fn peek(&self) -> Option<char> {
        match self.source {
            Source::Utf8(text) => text.get(self.pos..)?.chars().next(),
            Source::Latin1(bytes) => bytes.get(self.pos).map(|&b| char::from(b)),
        }
    }

    /// The character after the next one.
    fn peek_second(&self) -> Option<char> {
        match self.source {
            Source::Utf8(text) => text.get(self.pos..)?.chars().nth(1),
            Source::Latin1(bytes) => bytes.get(self.pos + 1).map(|&b| char::from(b)),
        }
    }

    fn bump(&mut self, c: char) {
        self.pos += match self.source {
            Source::Utf8(_) => c.len_utf8(),
            Source::Latin1(_) => 1,
        };
    }

    /// Consumes a line terminator (`\n`, `\r` or `\r\n`) if one is next.
    fn eat_newline(&mut self) -> bool {
        match self.peek() {
            Some('\n') => self.pos += 1,
            Some('\r') => {
                self.pos += 1;
                if self.peek() == Some('\n') {
                    self.pos += 1;
                }
            }
            _ => return false,
        }
        self.line += 1;
        true
    }

    /// The rest of the physical line, for an error message.
    fn rest_of_line(&self) -> Snippet {
        let mut shown = heapless::String::<{ Snippet::<48>::CAPACITY }>::new();
        let mut copy = self.clone();
        while let Some(c) = copy.peek() {
            if c == '\n' || c == '\r' || shown.push(c).is_err() {
                break;
            }
            copy.bump(c);
        }
        Snippet::new(&shown)
    }

    fn next_entry(&mut self) -> Result<Option<Entry>, EscapeError> {
        let mut line = Logical::new(self);
        let Some(first) = line.unit()? else {
            return Ok(None);
        };
        let mut entry = Entry {
            line: line.start_line,
            key: [0; Entry::KEY_CAPACITY],
            key_len: 0,
            key_complete: true,
            value: [0; Entry::VALUE_CAPACITY],
            value_len: 0,
            value_complete: true,
        };
        // The key runs to the first unescaped separator.
        let mut separator = None;
        let mut next = Some(first);
        while let Some(unit) = next {
            if !unit.escaped && matches!(unit.c, '=' | ':' | ' ' | '\t' | '\u{c}') {
                separator = Some(unit.c);
                break;
            }
            push(
                &mut entry.key,
                &mut entry.key_len,
                &mut entry.key_complete,
                unit.c,
            );
            next = line.unit()?;
        }
        if let Some(separator) = separator {
            let mut may_take_separator = !matches!(separator, '=' | ':');
            let mut in_value = false;
            while let Some(unit) = line.unit()? {
                if !in_value && !unit.escaped {
                    if matches!(unit.c, ' ' | '\t' | '\u{c}') {
                        continue;
                    }
                    if may_take_separator && matches!(unit.c, '=' | ':') {
                        may_take_separator = false;
                        continue;
                    }
                }
                in_value = true;
                push(
                    &mut entry.value,
                    &mut entry.value_len,
                    &mut entry.value_complete,
                    unit.c,
                );
            }
        }
        Ok(Some(entry))
    }
}

impl Iterator for Properties<'_> {
    type Item = Result<Entry, EscapeError>;

    /// The next entry; after an error (a malformed `\u` escape) the iteration ends.
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        match self.next_entry() {
            Ok(entry) => entry.map(Ok),
            Err(error) => {
                self.failed = true;
                Some(Err(error))
            }
        }
    }
}

/// A character of a logical line, and whether it was written as an escape.
#[derive(Clone, Copy)]
struct Unit {
    c: char,
    escaped: bool,
}

/// The characters of one logical line, joined as Java's `LineReader` joins them, then
/// decoded as its `loadConvert` decodes them.
struct Logical<'p, 'a> {
    reader: &'p mut Properties<'a>,
    /// Raw characters of this logical line so far.
    raw: usize,
    /// Consecutive backslashes at the end of those.
    backslashes: usize,
    skip_blank: bool,
    done: bool,
    start_line: u32,
}

impl<'p, 'a> Logical<'p, 'a> {
    fn new(reader: &'p mut Properties<'a>) -> Logical<'p, 'a> {
        let start_line = reader.line;
        Logical {
            reader,
            raw: 0,
            backslashes: 0,
            skip_blank: true,
            done: false,
            start_line,
        }
    }

    /// The next raw character of the logical line; `None` at its end.
    fn raw(&mut self) -> Option<char> {
        if self.done {
            return None;
        }
        loop {
            let Some(c) = self.reader.peek() else {
                self.done = true;
                return None;
            };
            if self.skip_blank {
                if matches!(c, ' ' | '\t' | '\u{c}') {
                    self.reader.bump(c);
                    continue;
                }
                self.skip_blank = false;
            }
            if self.raw == 0 && matches!(c, '#' | '!') {
                // A comment: its physical line goes, whatever it ends with.
                while let Some(c) = self.reader.peek() {
                    if c == '\n' || c == '\r' {
                        break;
                    }
                    self.reader.bump(c);
                }
                self.reader.eat_newline();
                self.skip_blank = true;
                continue;
            }
            if c == '\n' || c == '\r' {
                self.reader.eat_newline();
                if self.raw == 0 {
                    // Nothing yet: a blank line, skipped.
                    self.skip_blank = true;
                    continue;
                }
                self.done = true;
                return None;
            }
            if self.raw == 0 {
                self.start_line = self.reader.line;
            }
            if c == '\\' && self.backslashes.is_multiple_of(2) {
                match self.reader.peek_second() {
                    // A trailing backslash at the end of the file is dropped.
                    None => {
                        self.reader.bump(c);
                        self.done = true;
                        return None;
                    }
                    Some('\n' | '\r') => {
                        self.reader.bump(c);
                        self.reader.eat_newline();
                        self.skip_blank = true;
                        continue;
                    }
                    Some(_) => {}
                }
            }
            self.reader.bump(c);
            self.raw += 1;
            self.backslashes = if c == '\\' { self.backslashes + 1 } else { 0 };
            return Some(c);
        }
    }

    /// Where the logical line is, to read ahead and come back.
    fn mark(&self) -> (Position, usize, usize, bool, bool) {
        (
            Properties::position(self.reader),
            self.raw,
            self.backslashes,
            self.skip_blank,
            self.done,
        )
    }

    fn reset(
        &mut self,
        (position, raw, backslashes, skip_blank, done): (Position, usize, usize, bool, bool),
    ) {
        (self.reader.pos, self.reader.line) = (position.pos, position.line);
        (self.raw, self.backslashes, self.skip_blank, self.done) =
            (raw, backslashes, skip_blank, done);
    }

    /// The next decoded character of the logical line; `None` at its end.
    fn unit(&mut self) -> Result<Option<Unit>, EscapeError> {
        let Some(c) = self.raw() else {
            return Ok(None);
        };
        if c != '\\' {
            return Ok(Some(Unit { c, escaped: false }));
        }
        let Some(next) = self.raw() else {
            return Ok(None);
        };
        let c = match next {
            't' => '\t',
            'n' => '\n',
            'r' => '\r',
            'f' => '\u{c}',
            'u' => self.unicode_escape()?,
            other => other,
        };
        Ok(Some(Unit { c, escaped: true }))
    }

    /// The four hex digits of a `\u` escape, as a UTF-16 code unit.
    fn code_unit(&mut self) -> Result<u16, EscapeError> {
        let mut unit = 0u16;
        for _ in 0..4 {
            let digit = self
                .raw()
                .and_then(|c| c.to_digit(16))
                .ok_or_else(|| self.malformed())?;
            unit = unit << 4 | digit as u16;
        }
        Ok(unit)
    }

    /// After `\u`: the character, combining a surrogate pair written as two escapes.
    fn unicode_escape(&mut self) -> Result<char, EscapeError> {
        let unit = self.code_unit()?;
        if (0xDC00..=0xDFFF).contains(&unit) {
            return Ok(char::REPLACEMENT_CHARACTER);
        }
        if !(0xD800..=0xDBFF).contains(&unit) {
            return Ok(char::from_u32(u32::from(unit)).unwrap_or(char::REPLACEMENT_CHARACTER));
        }
        // A high surrogate: a low one must follow as `\uXXXX`, else it stands alone.
        let saved = self.mark();
        if self.raw() == Some('\\') && self.raw() == Some('u') {
            let low = self.code_unit()?;
            if (0xDC00..=0xDFFF).contains(&low) {
                let c = 0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
                return Ok(char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER));
            }
        }
        self.reset(saved);
        Ok(char::REPLACEMENT_CHARACTER)
    }

    fn malformed(&self) -> EscapeError {
        EscapeError {
            line: self.start_line,
            text: self.reader.rest_of_line(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::{String, ToString};
    use std::vec::Vec;

    fn entries(bytes: &[u8]) -> Vec<(u32, String, String)> {
        Properties::new(bytes)
            .map(|e| {
                let e = e.unwrap_or_else(|e| panic!("{:?}: {e}", String::from_utf8_lossy(bytes)));
                (e.line(), e.key().to_string(), e.value().to_string())
            })
            .collect()
    }

    fn one(bytes: &[u8]) -> (String, String) {
        let all = entries(bytes);
        assert_eq!(
            all.len(),
            1,
            "{:?}: {all:?}",
            String::from_utf8_lossy(bytes)
        );
        (all[0].1.clone(), all[0].2.clone())
    }

    #[test]
    fn surrogate_pairs_combine_and_lone_ones_are_replaced() {
        assert_eq!(one(br"label.emoji=\uD83D\uDE00").1, "\u{1F600}");
        assert_eq!(one(br"a=\uD83Dx").1, "\u{FFFD}x");
        assert_eq!(one(br"a=\uDE00").1, "\u{FFFD}");
        assert_eq!(one(br"a=\uD83D\n").1, "\u{FFFD}\n");
        assert_eq!(one(br"a=\uD83D\u0041").1, "\u{FFFD}A");
        // The pair may be split by a continuation, as Java joins before decoding.
        assert_eq!(one(b"a=\\uD83D\\\n   \\uDE00").1, "\u{1F600}");
    }

    #[test]
    fn continuations_join_before_escapes_are_decoded() {
        assert_eq!(one(b"a=\\u00\\\n   41").1, "A");
        // An even run of backslashes at the end of a line is no continuation.
        assert_eq!(
            entries(b"a=x\\\\\nb=y"),
            [(1, "a".into(), "x\\".into()), (2, "b".into(), "y".into())]
        );
    }

    #[test]
    fn a_comment_inside_an_empty_continuation_is_a_comment() {
        let all = entries(b"\\\n# c \\\nweb.load.control=42\n");
        assert_eq!(all, [(3, "web.load.control".into(), "42".into())]);
        let all = entries(b"\\\n\n  ! c\nkey = v\n");
        assert_eq!(all, [(4, "key".into(), "v".into())]);
        // Once the logical line has content, `#` is content.
        assert_eq!(one(b"a=\\\n#b").1, "#b");
        // A blank line ends a continued line that has content.
        assert_eq!(entries(b"a=1\\\n\nb=2\n").len(), 2);
    }

    #[test]
    fn values_keep_trailing_whitespace_and_say_when_cut() {
        assert_eq!(one(b"a = 70   ").1, "70   ");
        let mut long = b"a=".to_vec();
        long.extend(core::iter::repeat_n(b'0', 600));
        let entry = Properties::new(&long).next().expect("one").expect("ok");
        assert!(!entry.value_is_complete());
        assert_eq!(entry.value().len(), Entry::VALUE_CAPACITY);
    }

    #[test]
    fn latin1_when_not_utf8() {
        let mut properties = Properties::new(b"label=caf\xe9\n");
        assert_eq!(properties.encoding(), Encoding::Latin1);
        assert_eq!(properties.next().expect("one").expect("ok").value(), "café");
        assert_eq!(
            Properties::new("label=café".as_bytes()).encoding(),
            Encoding::Utf8
        );
        assert_eq!(one("\u{feff}a=1".as_bytes()).0, "a");
    }

    #[test]
    fn malformed_escapes_fail_with_the_line() {
        let error = Properties::new(b"ok=1\nfoo=\\u12G4\n")
            .find_map(Result::err)
            .expect("an error");
        assert_eq!(error.line, 2);
        let error = Properties::new(b"a=\\u12")
            .find_map(Result::err)
            .expect("error");
        assert_eq!(error.line, 1);
    }

    #[test]
    fn positions_read_again() {
        let text = b"# c\na=1\n\nb=2\n";
        let mut properties = Properties::new(text);
        let _ = properties.next();
        let at = properties.position();
        let b = properties.next().expect("b").expect("ok");
        let again = properties.at(at).next().expect("b").expect("ok");
        assert_eq!(
            (b.line(), b.key(), b.value()),
            (again.line(), again.key(), again.value())
        );
        assert_eq!(again.line(), 4);
    }
}
