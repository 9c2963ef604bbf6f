//! A minimal PNG writer for synthetic images: 8-bit RGB, no interlace, the pixels in stored
//! (uncompressed) deflate blocks, with the CRC-32 and Adler-32 checksums PNG requires.

const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1A, b'\n'];
/// zlib header: deflate, 32 KiB window, no preset dictionary, checksum-valid FLG.
const ZLIB_HEADER: [u8; 2] = [0x78, 0x01];
/// The most bytes one stored deflate block holds.
const MAX_STORED_BLOCK: usize = 65_535;
const BIT_DEPTH: u8 = 8;
const COLOR_TYPE_RGB: u8 = 2;
const FILTER_NONE: u8 = 0;

/// A PNG of `width` × `height` pixels; `rgb` holds 3 bytes per pixel, row by row.
pub fn encode_rgb(width: u32, height: u32, rgb: &[u8]) -> Vec<u8> {
    let row_bytes = width as usize * 3;
    let mut scanlines = Vec::with_capacity((row_bytes + 1) * height as usize);
    for row in rgb.chunks(row_bytes.max(1)).take(height as usize) {
        scanlines.push(FILTER_NONE);
        scanlines.extend_from_slice(row);
    }
    let mut header = Vec::with_capacity(13);
    header.extend_from_slice(&width.to_be_bytes());
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[BIT_DEPTH, COLOR_TYPE_RGB, 0, 0, 0]);

    let mut png = SIGNATURE.to_vec();
    write_chunk(&mut png, b"IHDR", &header);
    write_chunk(&mut png, b"IDAT", &zlib_stored(&scanlines));
    write_chunk(&mut png, b"IEND", &[]);
    png
}

/// Length, type, data, and CRC-32 of type and data.
fn write_chunk(png: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    png.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let crc_start = png.len();
    png.extend_from_slice(kind);
    png.extend_from_slice(data);
    let crc = crc32(&png[crc_start..]);
    png.extend_from_slice(&crc.to_be_bytes());
}

/// `data` (not empty) as a zlib stream of stored deflate blocks.
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let blocks = data.len().div_ceil(MAX_STORED_BLOCK);
    let mut out = Vec::with_capacity(data.len() + blocks * 5 + 6);
    out.extend_from_slice(&ZLIB_HEADER);
    let mut chunks = data.chunks(MAX_STORED_BLOCK).peekable();
    while let Some(block) = chunks.next() {
        let is_final = chunks.peek().is_none();
        let len = block.len() as u16;
        out.push(u8::from(is_final));
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    out.extend_from_slice(&adler32(data).to_be_bytes());
    out
}

/// CRC-32 (ISO-HDLC, reflected polynomial 0xEDB88320), as PNG chunks use it.
pub fn crc32(data: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut table = [0u32; 256];
        for (n, entry) in table.iter_mut().enumerate() {
            let mut c = n as u32;
            for _ in 0..8 {
                c = if c & 1 == 1 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
            }
            *entry = c;
        }
        table
    });
    !data.iter().fold(!0u32, |crc, &byte| table[((crc ^ u32::from(byte)) & 0xFF) as usize] ^ (crc >> 8))
}

/// Adler-32, as zlib streams end with it.
pub fn adler32(data: &[u8]) -> u32 {
    const MOD_ADLER: u32 = 65_521;
    // 5552 bytes is the most that can be summed before the u32 sums may overflow.
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in data.chunks(5552) {
        for &byte in chunk {
            a += u32::from(byte);
            b += a;
        }
        a %= MOD_ADLER;
        b %= MOD_ADLER;
    }
    (b << 16) | a
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chunks of a PNG as (type, data), checking each CRC on the way.
    fn chunks(png: &[u8]) -> Vec<(String, Vec<u8>)> {
        assert_eq!(&png[..8], &SIGNATURE);
        let mut chunks = Vec::new();
        let mut at = 8;
        while at < png.len() {
            let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
            let body = &png[at + 4..at + 8 + len];
            let crc = u32::from_be_bytes(png[at + 8 + len..at + 12 + len].try_into().unwrap());
            assert_eq!(crc32(body), crc, "CRC of chunk at {at}");
            chunks.push((String::from_utf8(body[..4].to_vec()).unwrap(), body[4..].to_vec()));
            at += 12 + len;
        }
        chunks
    }

    /// The bytes of a zlib stream of stored blocks, checking its header and Adler-32.
    fn inflate_stored(stream: &[u8]) -> Vec<u8> {
        assert_eq!(u16::from_be_bytes([stream[0], stream[1]]) % 31, 0, "zlib FCHECK");
        let mut out = Vec::new();
        let mut at = 2;
        loop {
            let is_final = stream[at] & 1 == 1;
            assert_eq!(stream[at] >> 1, 0, "a stored block");
            let len = u16::from_le_bytes([stream[at + 1], stream[at + 2]]);
            assert_eq!(!len, u16::from_le_bytes([stream[at + 3], stream[at + 4]]));
            out.extend_from_slice(&stream[at + 5..at + 5 + len as usize]);
            at += 5 + len as usize;
            if is_final {
                break;
            }
        }
        assert_eq!(u32::from_be_bytes(stream[at..at + 4].try_into().unwrap()), adler32(&out));
        assert_eq!(at + 4, stream.len());
        out
    }

    #[test]
    fn checksums_match_their_reference_values() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b"IEND"), 0xAE42_6082);
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        assert_eq!(adler32(&[]), 1);
        // Long input: the modulo must keep up (65521 × 255 bytes of 0xFF).
        let long = vec![0xFF; 200_000];
        let (mut a, mut b) = (1u64, 0u64);
        for &byte in &long {
            a = (a + u64::from(byte)) % 65_521;
            b = (b + a) % 65_521;
        }
        assert_eq!(adler32(&long), ((b << 16) | a) as u32);
    }

    #[test]
    fn a_png_holds_its_header_and_every_pixel_row() {
        // 300 × 100 RGB: 90,100 bytes of scanlines, two stored blocks.
        let (width, height) = (300u32, 100u32);
        let rgb: Vec<u8> = (0..width * height * 3).map(|i| (i % 251) as u8).collect();
        let png = encode_rgb(width, height, &rgb);
        let chunks = chunks(&png);
        let kinds: Vec<&str> = chunks.iter().map(|(kind, _)| kind.as_str()).collect();
        assert_eq!(kinds, ["IHDR", "IDAT", "IEND"]);
        assert_eq!(chunks[0].1, [0, 0, 1, 44, 0, 0, 0, 100, 8, 2, 0, 0, 0]);
        let scanlines = inflate_stored(&chunks[1].1);
        assert_eq!(scanlines.len(), (1 + 900) * 100);
        for (row, line) in scanlines.chunks(901).enumerate() {
            assert_eq!(line[0], FILTER_NONE);
            assert_eq!(&line[1..], &rgb[row * 900..(row + 1) * 900]);
        }
    }

    #[test]
    fn a_one_pixel_png_is_valid() {
        let png = encode_rgb(1, 1, &[10, 20, 30]);
        let chunks = chunks(&png);
        assert_eq!(inflate_stored(&chunks[1].1), [0, 10, 20, 30]);
    }
}
