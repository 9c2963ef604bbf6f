//! GPT-2's byte-level alphabet: the character that stands for each byte in a byte-level BPE
//! vocabulary. Printable bytes stand for themselves; the others (0–32, 127–160 and 173) take
//! the characters from U+0100 on, in byte order. `build.rs` reads tokens back into bytes with
//! it, and the ASCII path (`ascii_path`) spells words in it for the model.

/// The character of each byte.
pub(crate) const ALPHABET: [char; 256] = alphabet();

const fn alphabet() -> [char; 256] {
    let mut alphabet = ['\0'; 256];
    let mut next_stand_in = 0x100;
    let mut byte = 0;
    while byte < 256 {
        let printable = matches!(byte, 0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF);
        let code = if printable {
            byte
        } else {
            next_stand_in += 1;
            next_stand_in - 1
        };
        alphabet[byte as usize] = match char::from_u32(code) {
            Some(c) => c,
            None => panic!("below U+0200, every code is a char"),
        };
        byte += 1;
    }
    alphabet
}
