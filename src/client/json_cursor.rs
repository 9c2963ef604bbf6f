//! A strict, forward-only reader of JSON bytes for the hot path's fast readers: it returns
//! strings (borrowed when they have no escapes), reads small unsigned integers and skips any
//! other value, checking it as `serde_json` would. Every method answers `None` for what it
//! does not take (a surrogate escape in a string it returns, a number that is not a plain
//! `u64`, a key with escapes, text that is not JSON), and the caller then reads the payload
//! with `serde_json`, which gives the answer or the error: so a fast reader only needs to be
//! right on what it accepts.

use std::borrow::Cow;

/// Deeper nesting than this is left to `serde_json` (whose own limit is 128).
const MAX_DEPTH: usize = 100;

/// Bytes that may stand in a string as they are: not `"`, not `\`, not a control character.
const PLAIN_IN_STRING: [bool; 256] = {
    let mut table = [true; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = false;
        byte += 1;
    }
    table[b'"' as usize] = false;
    table[b'\\' as usize] = false;
    table
};

pub(crate) struct JsonCursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> JsonCursor<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        JsonCursor { bytes, at: 0 }
    }

    /// A cursor at `at` inside an object whose first member has been read (`at` is where
    /// another reading of the same bytes stood, right after a member's value).
    pub fn inside_object(bytes: &'a [u8], at: usize) -> (Self, Members) {
        (JsonCursor { bytes, at }, Members { first: false })
    }

    /// How many bytes have been read.
    pub fn position(&self) -> usize {
        self.at
    }

    /// The next byte that is not whitespace, not consumed.
    #[inline]
    pub fn peek(&mut self) -> Option<u8> {
        let byte = *self.bytes.get(self.at)?;
        if byte > b' ' { Some(byte) } else { self.peek_past_whitespace() }
    }

    #[cold]
    fn peek_past_whitespace(&mut self) -> Option<u8> {
        let mut at = self.at;
        while let Some(&byte) = self.bytes.get(at) {
            if !matches!(byte, b' ' | b'\n' | b'\t' | b'\r') {
                self.at = at;
                return Some(byte);
            }
            at += 1;
        }
        self.at = at;
        None
    }

    /// Consume `byte` if it comes next (after whitespace).
    #[inline]
    pub fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        self.at += usize::from(found);
        found
    }

    /// Consume `null` if it comes next.
    pub fn null(&mut self) -> bool {
        self.literal(b"null")
    }

    /// Nothing but whitespace is left.
    pub fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    /// Opens an object: `Some` when `{` came next.
    pub fn object(&mut self) -> Option<Members> {
        self.eat(b'{').then_some(Members { first: true })
    }

    /// The next member's key of the object `members` reads (its `:` consumed), `Some(None)`
    /// at the object's end. Its bytes, to compare with names: a key with escapes is `None`, and
    /// so is one that is not UTF-8, which `serde_json` refuses.
    #[inline]
    pub fn key(&mut self, members: &mut Members) -> Option<Option<&'a [u8]>> {
        if self.eat(b'}') {
            return Some(None);
        }
        if !std::mem::take(&mut members.first) && !self.eat(b',') {
            return None;
        }
        let (key, ascii) = self.plain_string()?;
        if !ascii {
            std::str::from_utf8(key).ok()?;
        }
        self.eat(b':').then_some(Some(key))
    }

    /// A string, borrowed when it has no escapes and otherwise with them undone; its UTF-8
    /// checked, as `serde_json` checks the strings it returns. (A `\u` escape of a surrogate
    /// is left to `serde_json`.)
    #[inline]
    pub fn string(&mut self) -> Option<Cow<'a, str>> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.at;
        let end = plain_run_end(self.bytes, start)?.0;
        match self.bytes[end] {
            b'"' => {
                self.at = end + 1;
                std::str::from_utf8(&self.bytes[start..end]).ok().map(Cow::Borrowed)
            }
            b'\\' => self.unescaped(start, end).map(Cow::Owned),
            _ => None,
        }
    }

    /// The string from `start`, whose first escape is at `escape`, with its escapes undone.
    /// The runs between escapes are checked for UTF-8 one by one: an escape puts whole
    /// characters between them, so a run cut inside a character fails alone as it would
    /// with its neighbours.
    #[cold]
    fn unescaped(&mut self, start: usize, mut escape: usize) -> Option<String> {
        let bytes = self.bytes;
        let mut text = String::with_capacity(escape - start + 16);
        let mut run_start = start;
        loop {
            text.push_str(std::str::from_utf8(&bytes[run_start..escape]).ok()?);
            run_start = escape + 2;
            text.push(match *bytes.get(escape + 1)? {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => {
                    let hex = bytes.get(run_start..run_start + 4)?;
                    run_start += 4;
                    let code =
                        hex.iter().try_fold(0, |code, digit| Some(code * 16 + (*digit as char).to_digit(16)?))?;
                    char::from_u32(code)?
                }
                _ => return None,
            });
            let end = plain_run_end(bytes, run_start)?.0;
            match bytes[end] {
                b'"' => {
                    text.push_str(std::str::from_utf8(&bytes[run_start..end]).ok()?);
                    self.at = end + 1;
                    return Some(text);
                }
                b'\\' => escape = end,
                _ => return None,
            }
        }
    }

    /// The bytes of a string without escapes or control characters, and whether all of them
    /// are ASCII.
    #[inline]
    fn plain_string(&mut self) -> Option<(&'a [u8], bool)> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.at;
        let (end, ascii) = plain_run_end(self.bytes, start)?;
        if self.bytes[end] != b'"' {
            return None;
        }
        self.at = end + 1;
        Some((&self.bytes[start..end], ascii))
    }

    /// A `null` (`Some(None)`) or a string.
    pub fn optional_string(&mut self) -> Option<Option<Cow<'a, str>>> {
        if self.null() { Some(None) } else { self.string().map(Some) }
    }

    /// A `null` (`Some(None)`) or an integer from 0 to `u64::MAX` written plainly.
    pub fn optional_u64(&mut self) -> Option<Option<u64>> {
        if self.null() {
            return Some(None);
        }
        self.peek()?;
        let value = match self.digits() {
            [] | [b'0', _, ..] => return None,
            digits => digits
                .iter()
                .try_fold(0u64, |value, digit| value.checked_mul(10)?.checked_add(u64::from(digit - b'0')))?,
        };
        // A fraction or an exponent makes it a float, which a count does not take.
        (!matches!(self.bytes.get(self.at), Some(b'.' | b'e' | b'E'))).then_some(Some(value))
    }

    /// Skip one value of any kind, checking it is JSON.
    pub fn skip_value(&mut self) -> Option<()> {
        self.skip_nested(0)
    }

    fn skip_nested(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' if depth < MAX_DEPTH => {
                let mut members = self.object()?;
                while self.key(&mut members)?.is_some() {
                    self.skip_nested(depth + 1)?;
                }
                Some(())
            }
            b'[' if depth < MAX_DEPTH => {
                self.at += 1;
                if self.eat(b']') {
                    return Some(());
                }
                loop {
                    self.skip_nested(depth + 1)?;
                    if self.eat(b']') {
                        return Some(());
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                }
            }
            b't' => self.literal(b"true").then_some(()),
            b'f' => self.literal(b"false").then_some(()),
            b'n' => self.null().then_some(()),
            b'-' | b'0'..=b'9' => self.skip_number(),
            _ => None,
        }
    }

    /// A string, with its escapes checked as `serde_json` checks those of a skipped string
    /// (and, like it, not its UTF-8).
    fn skip_string(&mut self) -> Option<()> {
        let mut at = self.at + 1;
        loop {
            at = plain_run_end(self.bytes, at)?.0;
            match self.bytes[at] {
                b'"' => {
                    self.at = at + 1;
                    return Some(());
                }
                b'\\' => {
                    at += 2;
                    match *self.bytes.get(at - 1)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                        b'u' => {
                            let hex = self.bytes.get(at..at + 4)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return None;
                            }
                            at += 4;
                        }
                        _ => return None,
                    }
                }
                _ => return None,
            }
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    fn skip_number(&mut self) -> Option<()> {
        self.next_is(b'-');
        if let [] | [b'0', _, ..] = self.digits() {
            return None;
        }
        if self.next_is(b'.') && self.digits().is_empty() {
            return None;
        }
        if self.next_is(b'e') || self.next_is(b'E') {
            if !self.next_is(b'+') {
                self.next_is(b'-');
            }
            if self.digits().is_empty() {
                return None;
            }
        }
        Some(())
    }

    /// The ASCII digits from here on, consumed.
    fn digits(&mut self) -> &'a [u8] {
        let start = self.at;
        let mut at = start;
        while self.bytes.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        self.at = at;
        &self.bytes[start..at]
    }

    /// Consume `byte` if it is the very next one (no whitespace before it).
    fn next_is(&mut self, byte: u8) -> bool {
        let found = self.bytes.get(self.at) == Some(&byte);
        self.at += usize::from(found);
        found
    }

    fn literal(&mut self, word: &[u8]) -> bool {
        self.peek();
        let found = self.bytes[self.at..].starts_with(word);
        self.at += if found { word.len() } else { 0 };
        found
    }
}

/// Where the run of plain string bytes from `at` ends: the index of the first `"`, `\` or
/// control character (`None` past the end), and whether the run was all ASCII; eight bytes at
/// a time while eight are left.
#[inline(always)]
fn plain_run_end(bytes: &[u8], mut at: usize) -> Option<(usize, bool)> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    // A byte's high bit set where it is zero (or below `n`, for `n` ≤ 0x80): exact for the
    // lowest such byte, which is all that is asked.
    let zero = |word: u64| word.wrapping_sub(ONES) & !word & HIGHS;
    let below = |word: u64, n: u8| word.wrapping_sub(ONES * u64::from(n)) & !word & HIGHS;
    let mut high_bits = 0;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let word = u64::from_le_bytes(chunk.try_into().ok()?);
        let special =
            zero(word ^ (ONES * u64::from(b'"'))) | zero(word ^ (ONES * u64::from(b'\\'))) | below(word, 0x20);
        if special != 0 {
            // The high bits of the bytes before the first special one.
            let before = (special & special.wrapping_neg()) - 1;
            high_bits |= word & HIGHS & before;
            return Some((at + (special.trailing_zeros() / 8) as usize, high_bits == 0));
        }
        high_bits |= word & HIGHS;
        at += 8;
    }
    let mut ascii = high_bits == 0;
    while PLAIN_IN_STRING[*bytes.get(at)? as usize] {
        ascii &= bytes[at].is_ascii();
        at += 1;
    }
    Some((at, ascii))
}

/// An object being read: whether its first member is still to come.
pub(crate) struct Members {
    first: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the cursor makes of a whole text as one skipped value, against `serde_json`.
    fn skips(text: &str) -> bool {
        let mut cursor = JsonCursor::new(text.as_bytes());
        cursor.skip_value().is_some() && cursor.at_end()
    }

    #[test]
    fn skipping_accepts_only_what_serde_json_accepts() {
        let texts = [
            r#"{"a":[1,-2.5e+3,0,0.0,1E9,true,false,null,"x\"\\\/\b\f\n\r\t\u00e9y"],"b":{}}"#,
            " [ ] ",
            "{\"é\":\"ü\"}",
            "01",
            "1.",
            "-",
            "1e",
            "1e+",
            "[1,]",
            "{\"a\":1,}",
            "{,}",
            "{\"a\" 1}",
            "[1 2]",
            "\"\\q\"",
            "\"\\u12g4\"",
            "\"\\u12\"",
            "\"a\u{1}b\"",
            "\"open",
            "tru",
            "nul",
            "{\"a\":}",
            "+1",
            ".5",
            "[",
            "{",
            "{1:2}",
            "NaN",
        ];
        for text in texts {
            let serde = serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok();
            assert_eq!(skips(text), serde, "{text}");
        }
    }

    #[test]
    fn nesting_deeper_than_the_limit_is_left_to_serde_json() {
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(!skips(&deep));
        let shallow = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(skips(&shallow));
    }

    #[test]
    fn strings_are_borrowed_without_escapes_and_unescaped_with_them() {
        fn read(text: &str) -> Option<Cow<'_, str>> {
            JsonCursor::new(text.as_bytes()).string()
        }
        assert!(matches!(read(r#" "plain é" "#), Some(Cow::Borrowed("plain é"))));
        let escaped = read(r#""a\nb \"q\" \\ \/ \b\f\r\t \u00e9\u20AC é""#);
        assert!(matches!(escaped, Some(Cow::Owned(ref text)) if text == "a\nb \"q\" \\ / \u{8}\u{c}\r\t é€ é"));
        for refused in ["\"a\tb\"", r#""\ud83d\ude00""#, r#""\u+0e9""#, r#""\q""#, r#""a\"#, "\"\\u00\""] {
            assert_eq!(read(refused), None, "{refused}");
        }
        assert_eq!(JsonCursor::new(b"null").optional_string(), Some(None));
        assert_eq!(JsonCursor::new(b"7").optional_string(), None);
        for text in [r#""a\nb""#, r#""\u00e9\u0000x""#, r#""\\\"""#, r#""x\/""#] {
            assert_eq!(read(text).as_deref(), Some(serde_json::from_str::<String>(text).unwrap().as_str()), "{text}");
        }
    }

    #[test]
    fn counts_are_plain_unsigned_integers() {
        let read = |text: &str| JsonCursor::new(text.as_bytes()).optional_u64();
        assert_eq!(read("0"), Some(Some(0)));
        assert_eq!(read(" 18446744073709551615"), Some(Some(u64::MAX)));
        assert_eq!(read("null"), Some(None));
        for refused in ["18446744073709551616", "-1", "1.0", "1e3", "01", "\"1\"", ""] {
            assert_eq!(read(refused), None, "{refused}");
        }
    }

    #[test]
    fn members_are_read_in_order_with_their_separators_checked() {
        let mut cursor = JsonCursor::new(br#"{"a":1, "b" : 2}"#);
        let mut members = cursor.object().unwrap();
        assert_eq!(cursor.key(&mut members), Some(Some(&b"a"[..])));
        assert_eq!(cursor.optional_u64(), Some(Some(1)));
        assert_eq!(cursor.key(&mut members), Some(Some(&b"b"[..])));
        assert_eq!(cursor.optional_u64(), Some(Some(2)));
        assert_eq!(cursor.key(&mut members), Some(None));
        assert!(cursor.at_end());

        let mut missing_comma = JsonCursor::new(br#"{"a":1 "b":2}"#);
        let mut members = missing_comma.object().unwrap();
        missing_comma.key(&mut members).unwrap();
        missing_comma.skip_value().unwrap();
        assert_eq!(missing_comma.key(&mut members), None);
    }
}
