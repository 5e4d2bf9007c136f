//! A strict, iterative JSON validator (RFC 8259) that runs before the recursive parser.
//!
//! serde-json-core has no nesting limit, and it skips an ignored scalar up to the next `,`,
//! `}` or `]` without reading it, so a heuristic pre-scan cannot know how deep the parser
//! will go. This validator follows JSON's grammar exactly, byte by byte, with constant
//! stack: once a body passes it, the body is well-formed JSON whose nesting is at most the
//! limit, and the parser's skips land where the grammar says they do.

use core::fmt;

/// The deepest nesting any [`validate`] call accepts, whatever limit it is given: one bit of
/// a `u128` per open container (object or array).
pub(crate) const DEPTH_CEILING: usize = 128;

/// Why a body is not acceptable JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Invalid {
    /// Objects and arrays nest deeper than the limit (already capped at [`DEPTH_CEILING`]).
    TooDeep { limit: usize },
    /// The bytes break JSON's grammar at `offset`.
    Syntax(Syntax),
}

/// Where and how a body breaks JSON's grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Syntax {
    /// Byte offset of the first byte that does not fit.
    pub(crate) offset: usize,
    /// What the grammar allows there.
    pub(crate) expected: &'static str,
}

impl fmt::Display for Syntax {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "expected {} at byte {}", self.expected, self.offset)
    }
}

/// Checks that `body` is exactly one JSON value (surrounded by optional whitespace), in
/// UTF-8, nested at most `max_depth` levels (capped at [`DEPTH_CEILING`]).
pub(crate) fn validate(body: &[u8], max_depth: usize) -> Result<(), Invalid> {
    if let Err(e) = core::str::from_utf8(body) {
        return Err(syntax(e.valid_up_to(), "UTF-8"));
    }
    let limit = max_depth.min(DEPTH_CEILING);
    let mut cursor = Cursor { body, at: 0 };
    // Bit `d - 1` is set when the container open at depth `d` is an object.
    let mut objects: u128 = 0;
    let mut depth = 0usize;
    cursor.skip_whitespace();
    'value: loop {
        // A value starts here.
        match cursor.peek() {
            Some(open @ (b'{' | b'[')) => {
                if depth == limit {
                    return Err(Invalid::TooDeep { limit });
                }
                cursor.at += 1;
                let object = open == b'{';
                let close = if object { b'}' } else { b']' };
                cursor.skip_whitespace();
                if cursor.peek() == Some(close) {
                    cursor.at += 1;
                } else {
                    let bit = 1u128 << depth;
                    depth += 1;
                    if object {
                        objects |= bit;
                        cursor.member_key()?;
                    } else {
                        objects &= !bit;
                    }
                    continue 'value;
                }
            }
            Some(b'"') => cursor.string()?,
            Some(b'-' | b'0'..=b'9') => cursor.number()?,
            Some(b't') => cursor.literal(b"true")?,
            Some(b'f') => cursor.literal(b"false")?,
            Some(b'n') => cursor.literal(b"null")?,
            _ => return Err(syntax(cursor.at, "a JSON value")),
        }
        // A value ended: close containers until one continues, or the document ends.
        loop {
            cursor.skip_whitespace();
            if depth == 0 {
                return match cursor.peek() {
                    None => Ok(()),
                    Some(_) => Err(syntax(cursor.at, "the end of the body")),
                };
            }
            let object = objects & (1u128 << (depth - 1)) != 0;
            match (cursor.peek(), object) {
                (Some(b','), _) => {
                    cursor.at += 1;
                    cursor.skip_whitespace();
                    if object {
                        cursor.member_key()?;
                    }
                    continue 'value;
                }
                (Some(b'}'), true) | (Some(b']'), false) => {
                    cursor.at += 1;
                    depth -= 1;
                }
                (_, true) => return Err(syntax(cursor.at, "`,` or `}`")),
                (_, false) => return Err(syntax(cursor.at, "`,` or `]`")),
            }
        }
    }
}

fn syntax(offset: usize, expected: &'static str) -> Invalid {
    Invalid::Syntax(Syntax { offset, expected })
}

struct Cursor<'a> {
    body: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.body.get(self.at).copied()
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8, expected: &'static str) -> Result<(), Invalid> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(syntax(self.at, expected))
        }
    }

    /// `"key"` `:` and the whitespace after it, leaving the cursor on the member's value.
    fn member_key(&mut self) -> Result<(), Invalid> {
        if self.peek() != Some(b'"') {
            return Err(syntax(self.at, "a string key"));
        }
        self.string()?;
        self.skip_whitespace();
        self.expect(b':', "`:`")?;
        self.skip_whitespace();
        Ok(())
    }

    /// A string, from its opening quote to just past its closing one.
    fn string(&mut self) -> Result<(), Invalid> {
        self.at += 1;
        loop {
            match self.peek() {
                None => return Err(syntax(self.at, "the closing `\"` of a string")),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.at += 1;
                    match self.peek() {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.at += 1;
                        }
                        Some(b'u') => {
                            self.at += 1;
                            for _ in 0..4 {
                                match self.peek() {
                                    Some(b) if b.is_ascii_hexdigit() => self.at += 1,
                                    _ => {
                                        return Err(syntax(
                                            self.at,
                                            "a hex digit of a `\\u` escape",
                                        ));
                                    }
                                }
                            }
                        }
                        _ => return Err(syntax(self.at, "a valid escape")),
                    }
                }
                Some(0x00..=0x1f) => {
                    return Err(syntax(self.at, "an escaped control character"));
                }
                Some(_) => self.at += 1,
            }
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    fn number(&mut self) -> Result<(), Invalid> {
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(syntax(self.at, "a digit")),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.some_digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            self.some_digits()?;
        }
        Ok(())
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
    }

    fn some_digits(&mut self) -> Result<(), Invalid> {
        match self.peek() {
            Some(b'0'..=b'9') => {
                self.digits();
                Ok(())
            }
            _ => Err(syntax(self.at, "a digit")),
        }
    }

    fn literal(&mut self, word: &'static [u8]) -> Result<(), Invalid> {
        if self.body[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(())
        } else {
            Err(syntax(self.at, "`true`, `false` or `null`"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(body: &str) {
        assert_eq!(validate(body.as_bytes(), 64), Ok(()), "{body:?}");
    }

    fn at(body: &str, offset: usize) {
        match validate(body.as_bytes(), 64) {
            Err(Invalid::Syntax(s)) => assert_eq!(s.offset, offset, "{body:?}: {s}"),
            other => panic!("{body:?}: {other:?}"),
        }
    }

    #[test]
    fn accepts_json() {
        for body in [
            "{}",
            " [ ] ",
            "0",
            "-0",
            "-0.5e-7",
            "1E+2",
            "\"\"",
            r#""\" \\ \/ \b \f \n \r \t \u00e9 \uD83D\uDE00""#,
            "true",
            "false",
            "null",
            r#"{"a":[1,{"b":null},[]],"c":{"d":"é"}}"#,
            "\t\r\n{ \"a\" : 1 , \"b\" : [ true , false ] }\n",
        ] {
            ok(body);
        }
    }

    #[test]
    fn refuses_what_is_not_json_where_it_breaks() {
        for (body, offset) in [
            ("", 0),
            ("{", 1),
            ("{\"a\"}", 4),
            ("{\"a\":}", 5),
            ("{\"a\":1,}", 7),
            ("[1,]", 3),
            ("[1 2]", 3),
            ("{} x", 3),
            (r#"{"cluster_name": hello world}"#, 17),
            ("+87", 0),
            ("087", 1),
            ("87.", 3),
            (".5", 0),
            ("1e", 2),
            ("-", 1),
            ("\"a\u{1}b\"", 2),
            (r#""\x""#, 2),
            (r#""\u12g4""#, 5),
            ("\"abc", 4),
            ("tru", 0),
            ("nul", 0),
            ("{1:2}", 1),
            ("[}", 1),
            ("{]", 1),
            ("{\"a\":0\",\"b\":1}", 6),
        ] {
            at(body, offset);
        }
        assert_eq!(
            validate(b"\"\xff\"", 64),
            Err(Invalid::Syntax(Syntax {
                offset: 1,
                expected: "UTF-8"
            }))
        );
    }

    #[test]
    fn depth_is_counted_exactly() {
        assert_eq!(validate(b"[[[1]]]", 3), Ok(()));
        assert_eq!(
            validate(b"[[[[1]]]]", 3),
            Err(Invalid::TooDeep { limit: 3 })
        );
        assert_eq!(validate(b"{\"a\":{\"b\":{}}}", 3), Ok(()));
        // An empty container is a level too.
        assert_eq!(
            validate(b"{\"a\":{\"b\":{}}}", 2),
            Err(Invalid::TooDeep { limit: 2 })
        );
        assert_eq!(validate(b"[[],[],[[]]]", 3), Ok(()));
        // Brackets in strings are not containers.
        assert_eq!(validate(br#"["[[[\"[[{{"]"#, 1), Ok(()));
        // The ceiling holds whatever the caller asks for.
        let mut deep = [b'['; 200];
        deep[199] = b']';
        assert_eq!(
            validate(&deep, usize::MAX),
            Err(Invalid::TooDeep {
                limit: DEPTH_CEILING
            })
        );
    }

    #[test]
    fn a_stray_quote_after_a_scalar_hides_nothing() {
        // What fooled a bracket-counting pre-scan: the `"` after `0` is not a string.
        let mut body = std::string::String::from(r#"{"a":0","b":"#);
        body.extend(core::iter::repeat_n('[', 100_000));
        body.extend(core::iter::repeat_n(']', 100_000));
        body.push('}');
        at(&body, 6);
    }
}
