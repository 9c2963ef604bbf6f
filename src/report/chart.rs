//! The chart model every panel of the report is built as, and the one SVG drawing of it
//! (`svg.rs`) serves the HTML page, `--format svg` and `--format png` alike.

/// One chart: a title, two axes and what is drawn between them.
#[derive(Debug, Clone)]
pub struct Chart {
    /// A file-name-safe id: the element id in the page, the stem of its SVG/PNG file.
    pub id: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub body: ChartBody,
    /// Vertical lines across the plot at x, each with a label (phase boundaries).
    pub marks: Vec<(f64, String)>,
}

/// What a chart draws.
#[derive(Debug, Clone)]
pub enum ChartBody {
    /// Series over numeric x and y axes.
    Xy(Vec<Series>),
    /// One stacked bar per category, one layer per named part.
    StackedBars { categories: Vec<String>, layers: Vec<(String, Vec<f64>)> },
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Style {
    Line,
    /// A step function: each value holds until the next point.
    Steps,
    Points,
    /// Columns centred on each x, `width` in x units.
    Columns {
        width: f64,
    },
}

/// A named sequence of (x, y) points.
#[derive(Debug, Clone)]
pub struct Series {
    pub name: String,
    pub style: Style,
    pub points: Vec<(f64, f64)>,
    /// Each point's confidence half-widths (x, y), when its point is a mean over trials:
    /// drawn as error bars. Empty, or one per point.
    pub errors: Vec<(f64, f64)>,
    /// Each point's name in its tooltip (a search's "#3"). Empty, or one per point.
    pub point_labels: Vec<String>,
}

impl Series {
    pub fn new(name: impl Into<String>, style: Style, points: Vec<(f64, f64)>) -> Self {
        Self { name: name.into(), style, points, errors: Vec::new(), point_labels: Vec::new() }
    }

    /// Points with their confidence half-widths: ((x, y), (x half-width, y half-width)).
    pub fn with_errors(name: impl Into<String>, style: Style, points: Vec<((f64, f64), (f64, f64))>) -> Self {
        let (points, errors) = points.into_iter().unzip();
        Self { name: name.into(), style, points, errors, point_labels: Vec::new() }
    }
}

impl Chart {
    pub fn xy(id: &str, title: &str, x_label: &str, y_label: &str, series: Vec<Series>) -> Self {
        Self {
            id: id.to_string(),
            title: title.to_string(),
            x_label: x_label.to_string(),
            y_label: y_label.to_string(),
            body: ChartBody::Xy(series),
            marks: Vec::new(),
        }
    }

    /// True when there is nothing to draw (no point, or no bar).
    pub fn is_empty(&self) -> bool {
        match &self.body {
            ChartBody::Xy(series) => series.iter().all(|s| s.points.is_empty()),
            ChartBody::StackedBars { categories, layers } => categories.is_empty() || layers.is_empty(),
        }
    }
}

/// Round tick positions covering `[low, high]`: 1, 2 or 5 times a power of ten apart.
pub fn nice_ticks(low: f64, high: f64, wanted: usize) -> Vec<f64> {
    if !(low.is_finite() && high.is_finite()) || high <= low {
        return vec![low];
    }
    let raw_step = (high - low) / wanted.max(1) as f64;
    let power = 10f64.powf(raw_step.log10().floor());
    // The finest round step that gives at most half again as many ticks as wanted.
    let limit = wanted.max(1) as f64 * 1.5;
    let step =
        [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * power).find(|s| (high - low) / s <= limit).unwrap_or(10.0 * power);
    let first = (low / step).ceil() as i64;
    let last = (high / step).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

/// The extent of a chart's axes: (x_low, x_high, y_low, y_high), padded so that points on the
/// edges stay visible, y starting at zero for non-negative data.
pub fn extent(series: &[Series], marks: &[(f64, String)]) -> (f64, f64, f64, f64) {
    let mut x = (f64::INFINITY, f64::NEG_INFINITY);
    let mut y = (f64::INFINITY, f64::NEG_INFINITY);
    // The lowest point itself, error bars aside: non-negative data keeps its zero baseline.
    let mut lowest_point = f64::INFINITY;
    for s in series {
        let half = match s.style {
            Style::Columns { width } => width / 2.0,
            _ => 0.0,
        };
        for (i, &(px, py)) in s.points.iter().enumerate().filter(|(_, (px, py))| px.is_finite() && py.is_finite()) {
            let (ex, ey) =
                s.errors.get(i).copied().filter(|(ex, ey)| ex.is_finite() && ey.is_finite()).unwrap_or((0.0, 0.0));
            x = (x.0.min(px - half - ex), x.1.max(px + half + ex));
            y = (y.0.min(py - ey), y.1.max(py + ey));
            lowest_point = lowest_point.min(py);
        }
    }
    for (mark, _) in marks {
        x = (x.0.min(*mark), x.1.max(*mark));
    }
    if !x.0.is_finite() {
        return (0.0, 1.0, 0.0, 1.0);
    }
    if lowest_point >= 0.0 {
        y.0 = 0.0;
    }
    if x.1 <= x.0 {
        x = (x.0 - 1.0, x.1 + 1.0);
    } else if series.iter().any(|s| s.style == Style::Points || !s.errors.is_empty()) {
        // Points (and error bars) on the edges stay whole.
        let pad = (x.1 - x.0) * 0.03;
        x = (x.0 - pad, x.1 + pad);
    }
    if y.1 <= y.0 {
        y.1 = y.0 + 1.0;
    }
    (x.0, x.1, y.0, y.1 + (y.1 - y.0) * 0.05)
}

/// Labels for evenly spaced `ticks`, each with the decimals their step needs (ticks 500.1 and
/// 500.2 read "500.1" and "500.2", not "500" twice), in k or M once the step allows it.
pub fn tick_labels(ticks: &[f64]) -> Vec<String> {
    let step = match ticks {
        [first, second, ..] => (second - first).abs(),
        _ => return ticks.iter().map(|t| short_number(*t)).collect(),
    };
    let largest = ticks.iter().fold(0.0f64, |m, t| m.max(t.abs()));
    let (scale, unit) = if largest >= 1e6 && step >= 1e5 {
        (1e6, "M")
    } else if largest >= 1e4 && step >= 100.0 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let decimals = if step > 0.0 { (-(step / scale).log10() - 1e-9).ceil().max(0.0) as usize } else { 0 };
    ticks
        .iter()
        .map(|tick| {
            let value = tick / scale;
            // -0.0 reads as 0.
            let value = if value.abs() < 0.5 * 10f64.powi(-(decimals as i32)) { 0.0 } else { value };
            format!("{value:.decimals$}{unit}")
        })
        .collect()
}

/// A number as a short label: 3 significant digits, k/M for large values.
pub fn short_number(value: f64) -> String {
    // Sums of nothing are -0.0: print them as 0.
    let value = if value == 0.0 { 0.0 } else { value };
    let magnitude = value.abs();
    if magnitude >= 1e6 {
        format!("{}M", trim(value / 1e6))
    } else if magnitude >= 1e4 {
        format!("{}k", trim(value / 1e3))
    } else {
        trim(value)
    }
}

fn trim(value: f64) -> String {
    let magnitude = value.abs();
    let text = if magnitude >= 100.0 || value == 0.0 {
        format!("{value:.0}")
    } else if magnitude >= 10.0 {
        format!("{value:.1}")
    } else if magnitude >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    };
    if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_string() } else { text }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_inside_the_range() {
        assert_eq!(nice_ticks(0.0, 10.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let ticks = nice_ticks(3.2, 97.0, 4);
        assert_eq!(ticks, vec![20.0, 40.0, 60.0, 80.0]);
        assert_eq!(nice_ticks(5.0, 5.0, 4), vec![5.0]);
    }

    #[test]
    fn tick_labels_have_the_precision_their_step_needs() {
        assert_eq!(tick_labels(&[500.1, 500.2, 500.3]), ["500.1", "500.2", "500.3"]);
        assert_eq!(tick_labels(&[2.0, 2.002, 2.004]), ["2.000", "2.002", "2.004"]);
        assert_eq!(tick_labels(&[0.0, 20_000.0, 40_000.0]), ["0k", "20k", "40k"]);
        assert_eq!(tick_labels(&[10_000.0, 10_050.0, 10_100.0]), ["10000", "10050", "10100"]);
        assert_eq!(tick_labels(&[0.0, 0.5, 1.0]), ["0.0", "0.5", "1.0"]);
        assert_eq!(tick_labels(&[-0.1, 0.0, 0.1]), ["-0.1", "0.0", "0.1"]);
        assert_eq!(tick_labels(&[2_000_000.0, 2_500_000.0]), ["2.0M", "2.5M"]);
        assert_eq!(tick_labels(&[7.0]), ["7"]);
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(short_number(1234567.0), "1.23M");
        assert_eq!(short_number(45_000.0), "45k");
        assert_eq!(short_number(12.345), "12.3");
        assert_eq!(short_number(0.5), "0.5");
        assert_eq!(short_number(0.0), "0");
    }

    #[test]
    fn extents_start_at_zero_and_cover_columns() {
        let series = vec![Series::new("a", Style::Columns { width: 2.0 }, vec![(5.0, 3.0), (7.0, 10.0)])];
        let (x0, x1, y0, y1) = extent(&series, &[]);
        assert_eq!((x0, x1, y0), (4.0, 8.0, 0.0));
        assert!(y1 > 10.0);
    }
}
