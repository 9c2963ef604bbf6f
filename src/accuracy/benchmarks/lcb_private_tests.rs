//! LiveCodeBench's compressed private tests: base64 of zlib of a Python pickle of one string,
//! the tests' JSON (what lighteval's `translate_private_test_cases` undoes). The pickle is read
//! by a reader of the few opcodes that pickle a lone string; nothing is executed.

use std::io::Read;

use anyhow::{Context, Result, bail};
use base64::Engine as _;

/// The JSON text inside `encoded`.
pub fn decode(encoded: &str) -> Result<String> {
    let compact: String = encoded.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let compressed = base64::engine::general_purpose::STANDARD.decode(compact).context("not base64")?;
    let mut pickled = Vec::new();
    flate2::read::ZlibDecoder::new(compressed.as_slice()).read_to_end(&mut pickled).context("not zlib data")?;
    pickled_string(&pickled)
}

/// The one string a pickle (protocol 2 to 5) holds.
fn pickled_string(pickle: &[u8]) -> Result<String> {
    let mut at = 0;
    let mut take = |count: usize| -> Result<&[u8]> {
        let bytes = pickle.get(at..at + count).context("the pickle ends early")?;
        at += count;
        Ok(bytes)
    };
    let length = |bytes: &[u8]| bytes.iter().rev().fold(0usize, |length, &byte| length << 8 | usize::from(byte));
    let mut text = None;
    loop {
        let opcode = take(1)?[0];
        match opcode {
            0x80 => drop(take(1)?), // PROTO
            0x95 => drop(take(8)?), // FRAME
            0x94 => {}              // MEMOIZE
            b'q' => drop(take(1)?), // BINPUT
            b'r' => drop(take(4)?), // LONG_BINPUT
            0x8c | b'X' | 0x8d => {
                // SHORT_BINUNICODE, BINUNICODE, BINUNICODE8: a length, then UTF-8
                let width = match opcode {
                    0x8c => 1,
                    b'X' => 4,
                    _ => 8,
                };
                let size = length(take(width)?);
                let bytes = take(size)?;
                if text.is_some() {
                    bail!("the pickle holds more than one string");
                }
                text = Some(String::from_utf8(bytes.to_vec()).context("the pickled string is not UTF-8")?);
            }
            b'.' => return text.context("the pickle holds no string"), // STOP
            other => bail!("the pickle holds more than a string (opcode 0x{other:02x})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests), protocol=p)))` from
    /// CPython 3.11, for protocols 3, 4 and 5.
    #[test]
    fn lightevals_encoding_is_undone() {
        for encoded in ENCODED {
            let json = decode(encoded).unwrap();
            assert_eq!(json, r#"[{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}]"#);
        }
        assert!(decode("bm90IHpsaWI=").unwrap_err().to_string().contains("zlib"));
    }

    const ENCODED: [&str; 3] = [
        "eJxrYI6wYmBgiK5WyswrKC1RslJQMlQwislT0lFQyi8tgQoZQwRKUotLSioLUkFCxSUpmXlKtbGFDHoAe58Tcg==",
        "eJxrYJlqxwABPVbR1UqZeQWlJUpWCkqGCkYxeUo6Ckr5pSVQIWOIQElqcUlJZUEqSKi4JCUzT6k2dooeALEqFJ0=",
        "eJxrYJ1qxwABPVbR1UqZeQWlJUpWCkqGCkYxeUo6Ckr5pSVQIWOIQElqcUlJZUEqSKi4JCUzT6k2dooeALFyFJ4=",
    ];
}
