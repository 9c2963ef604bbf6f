//! A baseline JPEG writer for synthetic images: JFIF, YCbCr with no chroma subsampling (4:4:4),
//! an 8×8 forward DCT per block, the example quantization tables of the JPEG standard (Annex K.1)
//! scaled by a quality from 1 to 100, zig-zag order, and the standard Huffman tables of Annex K.3.
//! Edge blocks of sizes that are not multiples of 8 repeat the last row and column.

use std::f32::consts::PI;

/// Annex K.1, table K.1: luminance quantization, row by row.
const LUMA_QUANT: [u16; 64] = [
    16, 11, 10, 16, 24, 40, 51, 61, //
    12, 12, 14, 19, 26, 58, 60, 55, //
    14, 13, 16, 24, 40, 57, 69, 56, //
    14, 17, 22, 29, 51, 87, 80, 62, //
    18, 22, 37, 56, 68, 109, 103, 77, //
    24, 35, 55, 64, 81, 104, 113, 92, //
    49, 64, 78, 87, 103, 121, 120, 101, //
    72, 92, 95, 98, 112, 100, 103, 99,
];

/// Annex K.1, table K.2: chrominance quantization, row by row.
const CHROMA_QUANT: [u16; 64] = [
    17, 18, 24, 47, 99, 99, 99, 99, //
    18, 21, 26, 66, 99, 99, 99, 99, //
    24, 26, 56, 99, 99, 99, 99, 99, //
    47, 66, 99, 99, 99, 99, 99, 99, //
    99, 99, 99, 99, 99, 99, 99, 99, //
    99, 99, 99, 99, 99, 99, 99, 99, //
    99, 99, 99, 99, 99, 99, 99, 99, //
    99, 99, 99, 99, 99, 99, 99, 99,
];

/// Annex K.3: codes per length (1 to 16 bits) and the symbols in code order.
struct HuffmanSpec {
    counts: [u8; 16],
    symbols: &'static [u8],
}

const DC_SYMBOLS: [u8; 12] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];

const LUMA_DC: HuffmanSpec =
    HuffmanSpec { counts: [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0], symbols: &DC_SYMBOLS };

const CHROMA_DC: HuffmanSpec =
    HuffmanSpec { counts: [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0], symbols: &DC_SYMBOLS };

const LUMA_AC: HuffmanSpec = HuffmanSpec {
    counts: [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d],
    symbols: &[
        0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07, //
        0x22, 0x71, 0x14, 0x32, 0x81, 0x91, 0xa1, 0x08, 0x23, 0x42, 0xb1, 0xc1, 0x15, 0x52, 0xd1, 0xf0, //
        0x24, 0x33, 0x62, 0x72, 0x82, 0x09, 0x0a, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x25, 0x26, 0x27, 0x28, //
        0x29, 0x2a, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, //
        0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, //
        0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, //
        0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, //
        0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, 0xc4, 0xc5, //
        0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xe1, 0xe2, //
        0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, //
        0xf9, 0xfa,
    ],
};

const CHROMA_AC: HuffmanSpec = HuffmanSpec {
    counts: [0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77],
    symbols: &[
        0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71, //
        0x13, 0x22, 0x32, 0x81, 0x08, 0x14, 0x42, 0x91, 0xa1, 0xb1, 0xc1, 0x09, 0x23, 0x33, 0x52, 0xf0, //
        0x15, 0x62, 0x72, 0xd1, 0x0a, 0x16, 0x24, 0x34, 0xe1, 0x25, 0xf1, 0x17, 0x18, 0x19, 0x1a, 0x26, //
        0x27, 0x28, 0x29, 0x2a, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3a, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, //
        0x49, 0x4a, 0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, //
        0x69, 0x6a, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, //
        0x88, 0x89, 0x8a, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a, 0xa2, 0xa3, 0xa4, 0xa5, //
        0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xc2, 0xc3, //
        0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xca, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, //
        0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xea, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, //
        0xf9, 0xfa,
    ],
};

/// AC symbol for the end of a block (the rest are zeros).
const END_OF_BLOCK: u8 = 0x00;
/// AC symbol for a run of sixteen zeros.
const ZERO_RUN_16: u8 = 0xf0;

const SOI: u16 = 0xffd8;
const APP0: u16 = 0xffe0;
const DQT: u16 = 0xffdb;
const SOF0: u16 = 0xffc0;
const DHT: u16 = 0xffc4;
const SOS: u16 = 0xffda;
const EOI: u16 = 0xffd9;

/// `ZIGZAG[k]` is the row-major index of the `k`-th coefficient in zig-zag order.
const ZIGZAG: [usize; 64] = zigzag();

/// Walks the anti-diagonals of the 8×8 block, alternating direction: up-right on even ones.
const fn zigzag() -> [usize; 64] {
    let mut order = [0; 64];
    let mut k = 0;
    let mut diagonal = 0;
    while diagonal < 15 {
        let first_row = if diagonal < 8 { 0 } else { diagonal - 7 };
        let last_row = if diagonal < 8 { diagonal } else { 7 };
        let mut step = 0;
        while step <= last_row - first_row {
            let row = if diagonal % 2 == 0 { last_row - step } else { first_row + step };
            order[k] = row * 8 + (diagonal - row);
            k += 1;
            step += 1;
        }
        diagonal += 1;
    }
    order
}

/// A JPEG of `width` × `height` pixels (both at least 1, at most 65,535) at `quality` (1 to
/// 100, clamped); `rgb` holds 3 bytes per pixel, row by row.
pub fn encode_rgb(width: u32, height: u32, rgb: &[u8], quality: u8) -> Vec<u8> {
    let tables = [scaled_table(&LUMA_QUANT, quality), scaled_table(&CHROMA_QUANT, quality)];
    let mut jpeg = Vec::with_capacity(1024 + width as usize * height as usize / 2);
    put_u16(&mut jpeg, SOI);
    write_jfif_header(&mut jpeg);
    write_quant_tables(&mut jpeg, &tables);
    write_frame_header(&mut jpeg, width as u16, height as u16);
    write_huffman_tables(&mut jpeg);
    write_scan_header(&mut jpeg);
    let planes = ycbcr_planes(width as usize, height as usize, rgb);
    write_scan(&mut jpeg, &planes, width as usize, height as usize, &tables);
    put_u16(&mut jpeg, EOI);
    jpeg
}

/// `base` scaled as the IJG library does: quality 50 is the table itself, 100 all ones.
fn scaled_table(base: &[u16; 64], quality: u8) -> [u16; 64] {
    let quality = u32::from(quality.clamp(1, 100));
    let scale = if quality < 50 { 5000 / quality } else { 200 - 2 * quality };
    base.map(|value| ((u32::from(value) * scale + 50) / 100).clamp(1, 255) as u16)
}

fn put_u16(out: &mut Vec<u8>, value: u16) {
    out.extend_from_slice(&value.to_be_bytes());
}

/// A marker segment: the marker, then the length (which counts itself) and `data`.
fn put_segment(out: &mut Vec<u8>, marker: u16, data: &[u8]) {
    put_u16(out, marker);
    put_u16(out, (data.len() + 2) as u16);
    out.extend_from_slice(data);
}

/// JFIF 1.01, no density units (1:1 aspect), no thumbnail.
fn write_jfif_header(out: &mut Vec<u8>) {
    put_segment(out, APP0, &[b'J', b'F', b'I', b'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
}

/// Table 0 for luminance, table 1 for chrominance: 8-bit entries in zig-zag order.
fn write_quant_tables(out: &mut Vec<u8>, tables: &[[u16; 64]; 2]) {
    let mut data = Vec::with_capacity(2 * 65);
    for (id, table) in tables.iter().enumerate() {
        data.push(id as u8);
        data.extend(ZIGZAG.iter().map(|&natural| table[natural] as u8));
    }
    put_segment(out, DQT, &data);
}

/// Baseline, 8-bit samples, three components (Y, Cb, Cr) at full resolution.
fn write_frame_header(out: &mut Vec<u8>, width: u16, height: u16) {
    let mut data = vec![8];
    data.extend_from_slice(&height.to_be_bytes());
    data.extend_from_slice(&width.to_be_bytes());
    data.push(3);
    for (id, quant_table) in [(1, 0), (2, 1), (3, 1)] {
        data.extend_from_slice(&[id, 0x11, quant_table]);
    }
    put_segment(out, SOF0, &data);
}

/// The four standard tables: class (0 DC, 1 AC) in the high nibble, id in the low one.
fn write_huffman_tables(out: &mut Vec<u8>) {
    let mut data = Vec::new();
    for (class_and_id, spec) in [(0x00, &LUMA_DC), (0x10, &LUMA_AC), (0x01, &CHROMA_DC), (0x11, &CHROMA_AC)] {
        data.push(class_and_id);
        data.extend_from_slice(&spec.counts);
        data.extend_from_slice(spec.symbols);
    }
    put_segment(out, DHT, &data);
}

/// One interleaved scan of all three components over the whole spectrum.
fn write_scan_header(out: &mut Vec<u8>) {
    put_segment(out, SOS, &[3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0]);
}

/// The image as Y, Cb and Cr planes (JFIF's conversion), each sample level-shifted by −128.
fn ycbcr_planes(width: usize, height: usize, rgb: &[u8]) -> [Vec<f32>; 3] {
    let pixels = width * height;
    let mut planes = [Vec::with_capacity(pixels), Vec::with_capacity(pixels), Vec::with_capacity(pixels)];
    for pixel in rgb.chunks_exact(3).take(pixels) {
        let [r, g, b] = [pixel[0], pixel[1], pixel[2]].map(f32::from);
        planes[0].push(0.299 * r + 0.587 * g + 0.114 * b - 128.0);
        planes[1].push(-0.168_736 * r - 0.331_264 * g + 0.5 * b);
        planes[2].push(0.5 * r - 0.418_688 * g - 0.081_312 * b);
    }
    for plane in &mut planes {
        plane.resize(pixels, 0.0);
    }
    planes
}

/// A Huffman table as (code, length) per symbol, built as Annex C says.
struct HuffmanCodes([(u16, u8); 256]);

impl HuffmanCodes {
    fn of(spec: &HuffmanSpec) -> Self {
        let mut codes = [(0, 0); 256];
        let mut symbols = spec.symbols.iter();
        let mut code = 0u16;
        for (length, &count) in (1..=16u8).zip(&spec.counts) {
            for symbol in symbols.by_ref().take(usize::from(count)) {
                codes[usize::from(*symbol)] = (code, length);
                code += 1;
            }
            code <<= 1;
        }
        Self(codes)
    }
}

/// The Huffman codes and running DC value of one component.
struct ComponentCoder {
    dc: HuffmanCodes,
    ac: HuffmanCodes,
    previous_dc: i32,
}

/// Packs bits most significant first; a 0xFF byte is followed by a stuffed 0x00.
struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    bits: u32,
    pending: u8,
}

impl BitWriter<'_> {
    /// The low `length` bits of `value` (at most 16).
    fn put(&mut self, value: u16, length: u8) {
        for shift in (0..length).rev() {
            self.bits = (self.bits << 1) | u32::from((value >> shift) & 1);
            self.pending += 1;
            if self.pending == 8 {
                let byte = self.bits as u8;
                self.out.push(byte);
                if byte == 0xff {
                    self.out.push(0);
                }
                self.bits = 0;
                self.pending = 0;
            }
        }
    }

    fn put_symbol(&mut self, codes: &HuffmanCodes, symbol: u8) {
        let (code, length) = codes.0[usize::from(symbol)];
        self.put(code, length);
    }

    /// Fills the last byte with one bits, as the standard asks.
    fn finish(&mut self) {
        if self.pending > 0 {
            self.put(0xff, 8 - self.pending);
        }
    }
}

/// The size category of `value` (bits of its magnitude) and its bits as the standard writes
/// them: negative values as their ones' complement.
fn category_and_bits(value: i32) -> (u8, u16) {
    let size = (32 - value.unsigned_abs().leading_zeros()) as u8;
    let bits = if value < 0 { value - 1 } else { value };
    (size, (bits & ((1 << size) - 1)) as u16)
}

/// Every 8×8 block, left to right and top to bottom, its Y, Cb and Cr blocks interleaved.
fn write_scan(out: &mut Vec<u8>, planes: &[Vec<f32>; 3], width: usize, height: usize, tables: &[[u16; 64]; 2]) {
    let cosines = dct_cosines();
    let mut coders = [
        ComponentCoder { dc: HuffmanCodes::of(&LUMA_DC), ac: HuffmanCodes::of(&LUMA_AC), previous_dc: 0 },
        ComponentCoder { dc: HuffmanCodes::of(&CHROMA_DC), ac: HuffmanCodes::of(&CHROMA_AC), previous_dc: 0 },
        ComponentCoder { dc: HuffmanCodes::of(&CHROMA_DC), ac: HuffmanCodes::of(&CHROMA_AC), previous_dc: 0 },
    ];
    let mut writer = BitWriter { out, bits: 0, pending: 0 };
    let mut samples = [0f32; 64];
    for block_y in (0..height).step_by(8) {
        for block_x in (0..width).step_by(8) {
            for (component, (plane, coder)) in planes.iter().zip(&mut coders).enumerate() {
                for (index, sample) in samples.iter_mut().enumerate() {
                    let x = (block_x + index % 8).min(width - 1);
                    let y = (block_y + index / 8).min(height - 1);
                    *sample = plane[y * width + x];
                }
                let quantized = quantize(&forward_dct(&samples, &cosines), &tables[component.min(1)]);
                encode_block(&mut writer, coder, &quantized);
            }
        }
    }
    writer.finish();
}

/// `cosines[u][x]` = C(u)/2 · cos((2x + 1)uπ/16), so the 2-D DCT is two passes of 1-D sums.
fn dct_cosines() -> [[f32; 8]; 8] {
    let mut cosines = [[0.0; 8]; 8];
    for (u, row) in cosines.iter_mut().enumerate() {
        let scale = if u == 0 { std::f32::consts::FRAC_1_SQRT_2 } else { 1.0 } / 2.0;
        for (x, value) in row.iter_mut().enumerate() {
            *value = scale * ((2 * x + 1) as f32 * u as f32 * PI / 16.0).cos();
        }
    }
    cosines
}

/// The separable 8×8 DCT-II of a block of samples, row-major in and out.
fn forward_dct(samples: &[f32; 64], cosines: &[[f32; 8]; 8]) -> [f32; 64] {
    let mut rows = [0f32; 64];
    for y in 0..8 {
        for u in 0..8 {
            rows[y * 8 + u] = (0..8).map(|x| cosines[u][x] * samples[y * 8 + x]).sum();
        }
    }
    let mut coefficients = [0f32; 64];
    for v in 0..8 {
        for u in 0..8 {
            coefficients[v * 8 + u] = (0..8).map(|y| cosines[v][y] * rows[y * 8 + u]).sum();
        }
    }
    coefficients
}

/// Coefficients divided by the table and rounded, in zig-zag order.
fn quantize(coefficients: &[f32; 64], table: &[u16; 64]) -> [i32; 64] {
    ZIGZAG.map(|natural| (coefficients[natural] / f32::from(table[natural])).round() as i32)
}

/// The DC difference, then the AC coefficients as (zero run, size) symbols and their bits.
fn encode_block(writer: &mut BitWriter<'_>, coder: &mut ComponentCoder, block: &[i32; 64]) {
    let (size, bits) = category_and_bits(block[0] - coder.previous_dc);
    coder.previous_dc = block[0];
    writer.put_symbol(&coder.dc, size);
    writer.put(bits, size);
    let mut zeros = 0u8;
    for &coefficient in &block[1..] {
        if coefficient == 0 {
            zeros += 1;
            continue;
        }
        while zeros >= 16 {
            writer.put_symbol(&coder.ac, ZERO_RUN_16);
            zeros -= 16;
        }
        let (size, bits) = category_and_bits(coefficient);
        writer.put_symbol(&coder.ac, (zeros << 4) | size);
        writer.put(bits, size);
        zeros = 0;
    }
    if zeros > 0 {
        writer.put_symbol(&coder.ac, END_OF_BLOCK);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// A smooth gradient with a sharp square: something a JPEG should keep close.
    fn picture(width: u32, height: u32) -> Vec<u8> {
        let mut rgb = Vec::new();
        for y in 0..height {
            for x in 0..width {
                let square = (width / 4..width / 2).contains(&x) && (height / 4..height / 2).contains(&y);
                let shade = (x * 255 / width.max(1)) as u8;
                rgb.extend_from_slice(&if square { [250, 20, 30] } else { [shade, 128, 255 - shade] });
            }
        }
        rgb
    }

    /// The segments before the scan: (marker, payload).
    fn segments(jpeg: &[u8]) -> Vec<(u16, &[u8])> {
        let mut found = Vec::new();
        let mut at = 2;
        loop {
            let marker = u16::from_be_bytes([jpeg[at], jpeg[at + 1]]);
            let length = usize::from(u16::from_be_bytes([jpeg[at + 2], jpeg[at + 3]]));
            found.push((marker, &jpeg[at + 4..at + 2 + length]));
            at += 2 + length;
            if marker == SOS {
                return found;
            }
        }
    }

    #[test]
    fn zigzag_visits_every_coefficient_in_the_standard_order() {
        assert_eq!(ZIGZAG[..10], [0, 1, 8, 16, 9, 2, 3, 10, 17, 24]);
        assert_eq!(ZIGZAG[58..], [61, 54, 47, 55, 62, 63]);
        assert_eq!(ZIGZAG.iter().collect::<BTreeSet<_>>().len(), 64);
    }

    #[test]
    fn each_ac_table_codes_every_run_and_size_once() {
        let every: BTreeSet<u8> =
            (0..16u8).flat_map(|run| (1..=10u8).map(move |size| run << 4 | size)).chain([0x00, 0xf0]).collect();
        for spec in [&LUMA_AC, &CHROMA_AC] {
            assert_eq!(spec.counts.iter().map(|&n| usize::from(n)).sum::<usize>(), 162);
            assert_eq!(spec.symbols.iter().copied().collect::<BTreeSet<_>>(), every);
        }
        // The shortest luminance codes are 00 (0x01) and 01 (0x02); EOB is 1010.
        let luma = HuffmanCodes::of(&LUMA_AC);
        assert_eq!((luma.0[0x01], luma.0[0x02], luma.0[0x00]), ((0b00, 2), (0b01, 2), (0b1010, 4)));
        assert_eq!(HuffmanCodes::of(&LUMA_DC).0[0], (0b00, 2));
    }

    #[test]
    fn quality_scales_the_tables_as_ijg_does() {
        assert_eq!(scaled_table(&LUMA_QUANT, 50), LUMA_QUANT);
        assert_eq!(scaled_table(&LUMA_QUANT, 100), [1; 64]);
        assert_eq!(scaled_table(&LUMA_QUANT, 85)[..3], [5, 3, 3]);
        assert_eq!(scaled_table(&CHROMA_QUANT, 1), [255; 64]);
    }

    #[test]
    fn negative_values_are_written_as_ones_complement() {
        assert_eq!(category_and_bits(0), (0, 0));
        assert_eq!(category_and_bits(5), (3, 0b101));
        assert_eq!(category_and_bits(-5), (3, 0b010));
        assert_eq!(category_and_bits(-1), (1, 0));
        assert_eq!(category_and_bits(1023), (10, 1023));
    }

    #[test]
    fn the_file_has_jfif_tables_a_frame_with_its_size_and_ends_with_eoi() {
        let jpeg = encode_rgb(21, 13, &picture(21, 13), 85);
        assert_eq!(jpeg[..2], [0xff, 0xd8]);
        assert_eq!(jpeg[jpeg.len() - 2..], [0xff, 0xd9]);
        let segments = segments(&jpeg);
        let markers: Vec<u16> = segments.iter().map(|(marker, _)| *marker).collect();
        assert_eq!(markers, [APP0, DQT, SOF0, DHT, SOS]);
        assert_eq!(&segments[0].1[..5], b"JFIF\0");
        let frame = segments[2].1;
        assert_eq!(
            (frame[0], u16::from_be_bytes([frame[1], frame[2]]), u16::from_be_bytes([frame[3], frame[4]])),
            (8, 13, 21)
        );
        assert_eq!(frame[5], 3);
        // After the stuffing, no 0xFF in the scan is followed by anything but 0x00, until EOI.
        let scan_start = jpeg.windows(2).position(|pair| pair == [0xff, 0xda]).unwrap() + 14;
        let scan = &jpeg[scan_start..jpeg.len() - 2];
        assert!(scan.windows(2).all(|pair| pair[0] != 0xff || pair[1] == 0));
    }

    #[test]
    fn smooth_pictures_compress_and_quality_trades_size() {
        let rgb = picture(128, 96);
        let high = encode_rgb(128, 96, &rgb, 95);
        let default = encode_rgb(128, 96, &rgb, 85);
        let low = encode_rgb(128, 96, &rgb, 20);
        assert!(
            low.len() < default.len() && default.len() < high.len(),
            "{} {} {}",
            low.len(),
            default.len(),
            high.len()
        );
        assert!(default.len() < rgb.len() / 10, "{} of {} raw bytes", default.len(), rgb.len());
        assert_eq!(encode_rgb(128, 96, &rgb, 85), default, "deterministic");
    }

    /// Decodes with Pillow, when python3 has it, and compares the pixels with the source.
    #[test]
    fn pillow_decodes_it_close_to_the_source() {
        let has_pillow = std::process::Command::new("python3")
            .args(["-c", "import PIL"])
            .output()
            .is_ok_and(|output| output.status.success());
        if !has_pillow {
            eprintln!("note: python3 with Pillow not found; skipping the decode check (pip install pillow)");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        for (width, height) in [(37, 23), (8, 8), (1, 1), (64, 48)] {
            let rgb = picture(width, height);
            let path = dir.path().join(format!("{width}x{height}.jpg"));
            std::fs::write(&path, encode_rgb(width, height, &rgb, 90)).unwrap();
            let script = "import sys; from PIL import Image; im = Image.open(sys.argv[1]); im.load(); \
                          sys.stdout.write('%s %d %d\\n' % (im.format, *im.size)); \
                          sys.stdout.buffer.write(im.convert('RGB').tobytes())";
            let output = std::process::Command::new("python3").args(["-c", script]).arg(&path).output().unwrap();
            assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
            let split = output.stdout.iter().position(|&byte| byte == b'\n').unwrap();
            assert_eq!(String::from_utf8_lossy(&output.stdout[..split]), format!("JPEG {width} {height}"));
            let decoded = &output.stdout[split + 1..];
            assert_eq!(decoded.len(), rgb.len());
            let mean_error =
                decoded.iter().zip(&rgb).map(|(a, b)| a.abs_diff(*b) as f64).sum::<f64>() / rgb.len() as f64;
            assert!(mean_error < 6.0, "{width}x{height}: mean error {mean_error}");
        }
    }
}
