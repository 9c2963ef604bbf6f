//! The frames of a synthetic video as RGB pictures: AIPerf's moving shapes, grid clock and
//! noise, drawn with a few primitives (filled circles and boxes, thick lines, digits).

use crate::plan::{VideoSettings, VideoSynth};
use crate::rng::SeededRng;

type Rgb = [u8; 3];

/// An RGB picture, 3 bytes a pixel, row by row.
pub struct Canvas {
    pub width: usize,
    pub height: usize,
    pub rgb: Vec<u8>,
}

/// Paints frame `index` of `settings`' video (of `frames` frames) on `canvas`; `rng` feeds
/// the noise type only.
pub fn paint(settings: &VideoSettings, index: u32, frames: u32, rng: &mut SeededRng, canvas: &mut Canvas) {
    match settings.synth {
        VideoSynth::MovingShapes => moving_shapes(index, frames, canvas),
        VideoSynth::GridClock => grid_clock(index, frames, canvas),
        VideoSynth::Noise => noise(rng, canvas),
    }
}

impl Canvas {
    pub fn new(width: usize, height: usize) -> Self {
        Canvas { width, height, rgb: vec![0; width * height * 3] }
    }

    fn fill(&mut self, color: Rgb) {
        for pixel in self.rgb.chunks_exact_mut(3) {
            pixel.copy_from_slice(&color);
        }
    }

    fn put(&mut self, x: i64, y: i64, color: Rgb) {
        if (0..self.width as i64).contains(&x) && (0..self.height as i64).contains(&y) {
            let at = (y as usize * self.width + x as usize) * 3;
            self.rgb[at..at + 3].copy_from_slice(&color);
        }
    }

    /// Every pixel whose centre lies within `half` of (`cx`, `cy`) and passes `inside`.
    fn shape(&mut self, cx: f64, cy: f64, half: f64, color: Rgb, inside: impl Fn(f64, f64) -> bool) {
        for y in (cy - half).floor() as i64..=(cy + half).ceil() as i64 {
            for x in (cx - half).floor() as i64..=(cx + half).ceil() as i64 {
                if inside(x as f64 - cx, y as f64 - cy) {
                    self.put(x, y, color);
                }
            }
        }
    }

    fn disc(&mut self, cx: f64, cy: f64, radius: f64, color: Rgb) {
        self.shape(cx, cy, radius, color, |dx, dy| dx * dx + dy * dy <= radius * radius);
    }

    fn square(&mut self, cx: f64, cy: f64, half: f64, color: Rgb) {
        self.shape(cx, cy, half, color, |dx, dy| dx.abs() <= half && dy.abs() <= half);
    }

    fn ring(&mut self, cx: f64, cy: f64, radius: f64, thickness: f64, color: Rgb) {
        let inner = radius - thickness;
        self.shape(cx, cy, radius, color, |dx, dy| (inner * inner..=radius * radius).contains(&(dx * dx + dy * dy)));
    }

    /// A line `thickness` pixels wide from (x0, y0) to (x1, y1).
    fn line(&mut self, (x0, y0): (f64, f64), (x1, y1): (f64, f64), thickness: f64, color: Rgb) {
        let (dx, dy) = (x1 - x0, y1 - y0);
        let length_sq = (dx * dx + dy * dy).max(f64::EPSILON);
        let half = thickness / 2.0;
        for y in (y0.min(y1) - half).floor() as i64..=(y0.max(y1) + half).ceil() as i64 {
            for x in (x0.min(x1) - half).floor() as i64..=(x0.max(x1) + half).ceil() as i64 {
                let (px, py) = (x as f64 - x0, y as f64 - y0);
                let along = ((px * dx + py * dy) / length_sq).clamp(0.0, 1.0);
                let (ox, oy) = (px - along * dx, py - along * dy);
                if ox * ox + oy * oy <= half * half {
                    self.put(x, y, color);
                }
            }
        }
    }

    /// `number` in 3x5-cell digits, each cell `scale` pixels, its top left at (x, y).
    fn digits(&mut self, number: u32, x: i64, y: i64, scale: i64, color: Rgb) {
        for (place, digit) in number.to_string().bytes().enumerate() {
            let glyph = DIGITS[usize::from(digit - b'0')];
            let left = x + place as i64 * 4 * scale;
            for (row, bits) in glyph.iter().enumerate() {
                for column in 0..3 {
                    if bits >> (2 - column) & 1 == 1 {
                        for (sy, sx) in (0..scale).flat_map(|sy| (0..scale).map(move |sx| (sy, sx))) {
                            self.put(left + column * scale + sx, y + row as i64 * scale + sy, color);
                        }
                    }
                }
            }
        }
    }
}

/// The digits 0-9 as five rows of three bits.
const DIGITS: [[u8; 5]; 10] = [
    [0b111, 0b101, 0b101, 0b101, 0b111],
    [0b010, 0b110, 0b010, 0b010, 0b111],
    [0b111, 0b001, 0b111, 0b100, 0b111],
    [0b111, 0b001, 0b111, 0b001, 0b111],
    [0b101, 0b101, 0b111, 0b001, 0b001],
    [0b111, 0b100, 0b111, 0b001, 0b111],
    [0b111, 0b100, 0b111, 0b101, 0b111],
    [0b111, 0b001, 0b010, 0b010, 0b010],
    [0b111, 0b101, 0b111, 0b101, 0b111],
    [0b111, 0b101, 0b111, 0b001, 0b111],
];

/// A red disc crossing left to right, a green square falling, a blue disc climbing to the top
/// left; each wraps at the edges.
fn moving_shapes(index: u32, frames: u32, canvas: &mut Canvas) {
    let (width, height) = (canvas.width as f64, canvas.height as f64);
    let (step, frames) = (f64::from(index), f64::from(frames));
    canvas.fill([0, 0, 0]);
    let at = |start: f64, speed: f64, side: f64| (start + speed * step).rem_euclid(side);
    canvas.disc(at(0.0, width / frames * 2.0, width), at(height / 2.0, 0.0, height), 15.0, [255, 0, 0]);
    canvas.square(at(width / 2.0, 0.0, width), at(0.0, height / frames * 2.0, height), 12.5, [0, 255, 0]);
    let (blue_x, blue_y) = (at(width, -width / frames * 1.5, width), at(height, -height / frames * 1.5, height));
    canvas.disc(blue_x, blue_y, 10.0, [0, 0, 255]);
}

/// A grey 32-pixel grid, a clock whose minute hand turns once over the video (the hour hand a
/// twelfth of that), and the frame number in the top left corner.
fn grid_clock(index: u32, frames: u32, canvas: &mut Canvas) {
    const GRID_PIXELS: usize = 32;
    canvas.fill([32, 32, 32]);
    let (width, height) = (canvas.width, canvas.height);
    for x in (0..width).step_by(GRID_PIXELS) {
        canvas.line((x as f64, 0.0), (x as f64, height as f64 - 1.0), 1.0, [64, 64, 64]);
    }
    for y in (0..height).step_by(GRID_PIXELS) {
        canvas.line((0.0, y as f64), (width as f64 - 1.0, y as f64), 1.0, [64, 64, 64]);
    }
    let (cx, cy) = ((width / 2) as f64, (height / 2) as f64);
    let radius = (width.min(height) / 4) as f64;
    let turn = f64::from(index) / f64::from(frames) * std::f64::consts::TAU;
    let hand = |angle: f64, reach: f64| {
        let angle = angle - std::f64::consts::FRAC_PI_2;
        (cx + radius * reach * angle.cos(), cy + radius * reach * angle.sin())
    };
    canvas.line((cx, cy), hand(turn / 12.0, 0.6), 3.0, [255, 255, 0]);
    canvas.line((cx, cy), hand(turn, 0.9), 2.0, [255, 255, 255]);
    canvas.ring(cx, cy, radius, 2.0, [128, 128, 128]);
    canvas.disc(cx, cy, 3.0, [255, 0, 0]);
    canvas.digits(index, 10, 10, 2, [255, 255, 255]);
}

fn noise(rng: &mut SeededRng, canvas: &mut Canvas) {
    for chunk in canvas.rgb.chunks_mut(8) {
        let random = rng.next_u64().to_le_bytes();
        chunk.copy_from_slice(&random[..chunk.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(synth: VideoSynth) -> VideoSettings {
        VideoSettings::checked(1, 64, 48, 4, 1.0, synth).unwrap()
    }

    fn pixel(canvas: &Canvas, x: usize, y: usize) -> Rgb {
        let at = (y * canvas.width + x) * 3;
        [canvas.rgb[at], canvas.rgb[at + 1], canvas.rgb[at + 2]]
    }

    #[test]
    fn the_shapes_move_from_frame_to_frame() {
        let mut rng = SeededRng::new(1);
        let mut first = Canvas::new(64, 48);
        paint(&settings(VideoSynth::MovingShapes), 0, 4, &mut rng, &mut first);
        assert_eq!(pixel(&first, 0, 24), [255, 0, 0], "the red disc starts at the left edge, half way down");
        assert_eq!(pixel(&first, 32, 0), [0, 255, 0], "the green square starts at the top, half way across");
        let mut later = Canvas::new(64, 48);
        paint(&settings(VideoSynth::MovingShapes), 1, 4, &mut rng, &mut later);
        assert_eq!(pixel(&later, 18, 24), [255, 0, 0], "a quarter of the way in, the red disc is at the middle");
        assert_eq!(pixel(&later, 0, 24), [0, 0, 0]);
    }

    #[test]
    fn the_clock_hand_turns_and_the_frame_number_shows() {
        let mut rng = SeededRng::new(1);
        let mut first = Canvas::new(64, 48);
        paint(&settings(VideoSynth::GridClock), 0, 4, &mut rng, &mut first);
        assert_eq!(pixel(&first, 32, 24 - 8), [255, 255, 255], "at frame 0 the minute hand points up");
        assert_eq!(pixel(&first, 10, 10), [255, 255, 255], "the top left of the digit 0");
        assert_eq!(pixel(&first, 12, 12), [32, 32, 32], "the hole in the 0");
        let mut quarter = Canvas::new(64, 48);
        paint(&settings(VideoSynth::GridClock), 1, 4, &mut rng, &mut quarter);
        assert_eq!(pixel(&quarter, 32 + 8, 24), [255, 255, 255], "a quarter in, the minute hand points right");
    }

    #[test]
    fn noise_comes_from_the_seed() {
        let frame = |seed| {
            let mut canvas = Canvas::new(64, 48);
            paint(&settings(VideoSynth::Noise), 0, 4, &mut SeededRng::new(seed), &mut canvas);
            canvas.rgb
        };
        assert_eq!(frame(7), frame(7));
        assert_ne!(frame(7), frame(8));
    }
}
