//! A `Chart` drawn as one standalone SVG document: axes with round ticks, a legend, the
//! series, and phase marks. Every drawn value carries a `data-tip` for the page's hover
//! tooltips; the plot group and the x-axis carry their data range (`data-x0`, `data-x1`,
//! `data-px0`, `data-px1`) so that the page's script can zoom the x axis. The same text is
//! written as `--format svg` and rasterised for `--format png`.

use std::fmt::Write;

use super::chart::{Chart, ChartBody, Series, Style, extent, nice_ticks, short_number, tick_labels};
use super::theme::{ChartColours, Theme};

pub const WIDTH: f64 = 720.0;
pub const HEIGHT: f64 = 360.0;
const LEFT: f64 = 72.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 52.0;
const BOTTOM: f64 = 46.0;
const PALETTE: [&str; 8] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
/// Lines with more vertices than this get no per-vertex hover targets (the page stays small).
const MAX_LINE_TIPS: usize = 600;

/// The colour of the `index`-th series or layer.
pub fn color(index: usize) -> &'static str {
    PALETTE[index % PALETTE.len()]
}

/// Text made safe inside an SVG/HTML element or attribute.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The chart as an SVG document.
pub fn render(chart: &Chart, theme: Theme) -> String {
    let colours = theme.chart_colours();
    let mut out = String::with_capacity(16 * 1024);
    let category_labels = match &chart.body {
        ChartBody::StackedBars { categories, .. } => Some(CategoryLabels::fit(categories)),
        ChartBody::Xy(_) => None,
    };
    let height = HEIGHT + category_labels.as_ref().map_or(0.0, |labels| labels.extra_height);
    let _ = write!(
        out,
        r##"<svg{root} xmlns="http://www.w3.org/2000/svg" class="chart" id="chart-{id}" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" font-family="DejaVu Sans, Verdana, sans-serif" font-size="11"><rect width="{WIDTH}" height="{height}" fill="{background}"/><text x="{cx}" y="18" text-anchor="middle" font-size="14" font-weight="bold">{title}</text>"##,
        root = colours.root,
        background = colours.background,
        id = escape(&chart.id),
        cx = WIDTH / 2.0,
        title = escape(&chart.title),
    );
    match &chart.body {
        ChartBody::Xy(series) => draw_xy(&mut out, chart, series, &colours),
        ChartBody::StackedBars { categories, layers } => {
            let labels = category_labels.unwrap_or_else(|| CategoryLabels::fit(categories));
            draw_stacked_bars(&mut out, chart, categories, layers, &labels, &colours);
        }
    }
    let _ = write!(
        out,
        r#"<text x="{cx}" y="{xy}" text-anchor="middle">{x_label}</text><text transform="translate(16 {cy}) rotate(-90)" text-anchor="middle">{y_label}</text></svg>"#,
        cx = LEFT + plot_width() / 2.0,
        xy = height - 8.0,
        cy = TOP + plot_height() / 2.0,
        x_label = escape(&chart.x_label),
        y_label = escape(&chart.y_label),
    );
    out
}

fn plot_width() -> f64 {
    WIDTH - LEFT - RIGHT
}

fn plot_height() -> f64 {
    HEIGHT - TOP - BOTTOM
}

/// Where the x axis' labels sit: low enough that the first one clears the y axis' lowest.
fn x_tick_baseline() -> f64 {
    TOP + plot_height() + 18.0
}

/// Maps data coordinates onto the plot area.
struct Frame {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Frame {
    fn px(&self, x: f64) -> f64 {
        LEFT + (x - self.x0) / (self.x1 - self.x0) * plot_width()
    }

    fn py(&self, y: f64) -> f64 {
        TOP + plot_height() - (y - self.y0) / (self.y1 - self.y0) * plot_height()
    }
}

fn legend(out: &mut String, names: &[&str]) {
    let mut x = LEFT;
    for (index, name) in names.iter().enumerate() {
        let _ = write!(
            out,
            r#"<rect x="{x:.1}" y="28" width="10" height="10" fill="{c}"/><text x="{tx:.1}" y="37">{n}</text>"#,
            c = color(index),
            tx = x + 14.0,
            n = escape(name),
        );
        x += 24.0 + 6.5 * name.chars().count() as f64;
    }
}

fn y_axis(out: &mut String, frame: &Frame, colours: &ChartColours) {
    let ticks = nice_ticks(frame.y0, frame.y1, 5);
    for (tick, label) in ticks.iter().zip(tick_labels(&ticks)) {
        let y = frame.py(*tick);
        let _ = write!(
            out,
            r##"<line x1="{LEFT}" x2="{x2}" y1="{y:.1}" y2="{y:.1}" stroke="{grid}"/><text class="tick" x="{tx}" y="{ty:.1}" text-anchor="end">{label}</text>"##,
            grid = colours.grid,
            x2 = LEFT + plot_width(),
            tx = LEFT - 6.0,
            ty = y + 4.0,
        );
    }
    let _ = write!(
        out,
        r##"<rect x="{LEFT}" y="{TOP}" width="{w}" height="{h}" fill="none" stroke="{frame}"/>"##,
        frame = colours.frame,
        w = plot_width(),
        h = plot_height()
    );
}

fn draw_xy(out: &mut String, chart: &Chart, series: &[Series], colours: &ChartColours) {
    let (x0, x1, y0, y1) = extent(series, &chart.marks);
    let frame = Frame { x0, x1, y0, y1 };
    legend(out, &series.iter().map(|s| s.name.as_str()).collect::<Vec<_>>());
    y_axis(out, &frame, colours);
    let id = escape(&chart.id);
    let _ = write!(
        out,
        r#"<g class="xticks" data-x0="{x0}" data-x1="{x1}" data-px0="{LEFT}" data-px1="{px1}" data-y="{ty}">"#,
        px1 = LEFT + plot_width(),
        ty = x_tick_baseline()
    );
    let ticks = nice_ticks(x0, x1, 8);
    for (tick, label) in ticks.iter().zip(tick_labels(&ticks)) {
        let _ = write!(
            out,
            r#"<text class="tick" x="{x:.1}" y="{y}" text-anchor="middle">{label}</text>"#,
            x = frame.px(*tick),
            y = x_tick_baseline(),
        );
    }
    out.push_str("</g>");
    for (x, label) in &chart.marks {
        let _ = write!(
            out,
            r##"<text class="mark" data-x="{x}" x="{px:.1}" y="{y}" font-size="10" fill="{marks}">{l}</text>"##,
            marks = colours.marks,
            px = frame.px(*x) + 3.0,
            y = TOP + 10.0,
            l = escape(label)
        );
    }
    let _ = write!(
        out,
        r#"<clipPath id="clip-{id}"><rect x="{LEFT}" y="{TOP}" width="{w}" height="{h}"/></clipPath><g clip-path="url(#clip-{id})"><g class="plot">"#,
        w = plot_width(),
        h = plot_height()
    );
    for (x, _) in &chart.marks {
        let px = frame.px(*x);
        let _ = write!(
            out,
            r##"<path d="M{px:.1} {TOP}V{b}" stroke="{marks}" stroke-dasharray="4 3" vector-effect="non-scaling-stroke"/>"##,
            marks = colours.marks,
            b = TOP + plot_height()
        );
    }
    // Points over lines, each series keeping its legend colour.
    let mut order: Vec<usize> = (0..series.len()).collect();
    order.sort_by_key(|&i| series[i].style == Style::Points);
    for index in order {
        draw_series(out, &frame, &series[index], color(index), &chart.x_label, &chart.y_label);
    }
    out.push_str("</g></g>");
}

fn tip(series: &str, x_label: &str, x: f64, y_label: &str, y: f64) -> String {
    escape(&format!("{series}: {x_label} {} · {y_label} {}", short_number(x), short_number(y)))
}

/// A series' confidence intervals: a whisker each way from every point that has one, with caps.
fn draw_error_bars(out: &mut String, frame: &Frame, series: &Series, color: &str) {
    let mut d = String::new();
    for (&(x, y), &(ex, ey)) in series.points.iter().zip(&series.errors) {
        if !(x.is_finite() && y.is_finite()) {
            continue;
        }
        if ey.is_finite() && ey > 0.0 {
            let (px, top, bottom) = (frame.px(x), frame.py(y + ey), frame.py(y - ey));
            let _ = write!(d, "M{px:.1} {top:.1}V{bottom:.1}M{l:.1} {top:.1}h8M{l:.1} {bottom:.1}h8", l = px - 4.0);
        }
        if ex.is_finite() && ex > 0.0 {
            let (py, left, right) = (frame.py(y), frame.px(x - ex), frame.px(x + ex));
            let _ = write!(d, "M{left:.1} {py:.1}H{right:.1}M{left:.1} {t:.1}v8M{right:.1} {t:.1}v8", t = py - 4.0);
        }
    }
    if !d.is_empty() {
        let _ = write!(
            out,
            r#"<path class="error-bars" data-series="{n}" d="{d}" fill="none" stroke="{color}" stroke-width="1.2" vector-effect="non-scaling-stroke"/>"#,
            n = escape(&series.name)
        );
    }
}

fn draw_series(out: &mut String, frame: &Frame, series: &Series, color: &str, x_label: &str, y_label: &str) {
    draw_error_bars(out, frame, series, color);
    let points: Vec<(f64, f64)> =
        series.points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
    match series.style {
        Style::Line | Style::Steps => {
            let mut d = String::with_capacity(points.len() * 14);
            for (i, &(x, y)) in points.iter().enumerate() {
                let (px, py) = (frame.px(x), frame.py(y));
                let _ = if i == 0 {
                    write!(d, "M{px:.1} {py:.1}")
                } else if series.style == Style::Steps {
                    write!(d, "H{px:.1}V{py:.1}")
                } else {
                    write!(d, "L{px:.1} {py:.1}")
                };
            }
            let _ = write!(
                out,
                r#"<path class="line" data-series="{n}" d="{d}" fill="none" stroke="{color}" stroke-width="1.8" vector-effect="non-scaling-stroke"/>"#,
                n = escape(&series.name)
            );
            if points.len() <= MAX_LINE_TIPS {
                draw_points(out, frame, &series.name, &points, color, x_label, y_label, 0.0);
            }
        }
        Style::Points => {
            let _ = write!(out, r#"<g class="points" data-series="{}">"#, escape(&series.name));
            if series.point_labels.is_empty() {
                draw_points(out, frame, &series.name, &points, color, x_label, y_label, 0.75);
            }
            let labelled =
                series.points.iter().zip(&series.point_labels).filter(|((x, y), _)| x.is_finite() && y.is_finite());
            for (&point, label) in labelled {
                let name = format!("{} {label}", series.name);
                draw_points(out, frame, &name, &[point], color, x_label, y_label, 0.75);
            }
            out.push_str("</g>");
        }
        Style::Columns { width } => {
            let _ = write!(out, r#"<g fill="{color}" fill-opacity="0.8">"#);
            for &(x, y) in points.iter().filter(|(_, y)| *y > 0.0) {
                let left = frame.px(x - width / 2.0);
                let right = frame.px(x + width / 2.0);
                let (top, base) = (frame.py(y.max(frame.y0)), frame.py(frame.y0.max(0.0)));
                let _ = write!(
                    out,
                    r#"<rect x="{left:.2}" y="{top:.1}" width="{w:.2}" height="{h:.1}" data-tip="{t}"/>"#,
                    w = (right - left - 0.5).max(0.5),
                    h = (base - top).max(0.1),
                    t = tip(&series.name, x_label, x, y_label, y)
                );
            }
            out.push_str("</g>");
        }
    }
}

/// Points as zero-length round-capped strokes: they stay round when the page's script
/// stretches the x axis (`vector-effect`). `opacity` 0 draws invisible hover targets.
#[allow(clippy::too_many_arguments)]
fn draw_points(
    out: &mut String,
    frame: &Frame,
    name: &str,
    points: &[(f64, f64)],
    color: &str,
    x_label: &str,
    y_label: &str,
    opacity: f64,
) {
    let _ = write!(
        out,
        r#"<g stroke="{color}" stroke-opacity="{opacity}" stroke-width="{w}" stroke-linecap="round" fill="none">"#,
        w = if opacity > 0.0 { 5 } else { 8 }
    );
    for &(x, y) in points {
        let _ = write!(
            out,
            r#"<path d="M{px:.1} {py:.1}h0.01" vector-effect="non-scaling-stroke" data-tip="{t}"/>"#,
            px = frame.px(x),
            py = frame.py(y),
            t = tip(name, x_label, x, y_label, y)
        );
    }
    out.push_str("</g>");
}

/// Width of one character of the 11-px labels, generously (DejaVu Sans averages ~6.1).
const CHAR_WIDTH: f64 = 6.6;
/// Height a label's line takes, and the least room between two rotated labels.
const LINE_HEIGHT: f64 = 13.0;
/// Longest category label shown whole; longer ones are cut with "…", their full text in a tooltip.
const MAX_LABEL_CHARS: usize = 24;
/// The angle of rotated labels, degrees below the horizontal.
const LABEL_ANGLE: f64 = 40.0;

/// How a bar chart's category labels are laid out so that no two overlap: level when they
/// fit their bands, else rotated; cut when long; only every `stride`-th when even rotated
/// labels would touch.
struct CategoryLabels {
    rotated: bool,
    stride: usize,
    /// Each category's label as drawn.
    texts: Vec<String>,
    /// Room the rotated labels need below the chart's usual height.
    extra_height: f64,
}

impl CategoryLabels {
    fn fit(categories: &[String]) -> Self {
        let band = plot_width() / categories.len().max(1) as f64;
        let texts: Vec<String> = categories
            .iter()
            .map(|c| {
                if c.chars().count() > MAX_LABEL_CHARS {
                    format!("{}…", c.chars().take(MAX_LABEL_CHARS - 1).collect::<String>())
                } else {
                    c.clone()
                }
            })
            .collect();
        let widest = texts.iter().map(|t| t.chars().count() as f64 * CHAR_WIDTH).fold(0.0, f64::max);
        if widest + 6.0 <= band {
            return Self { rotated: false, stride: 1, texts, extra_height: 0.0 };
        }
        // Rotated labels sit one line apart measured across their slope.
        let across = band * LABEL_ANGLE.to_radians().sin();
        let stride = (LINE_HEIGHT / across).ceil().max(1.0) as usize;
        let extra_height = (widest * LABEL_ANGLE.to_radians().sin() - 10.0).max(0.0);
        Self { rotated: true, stride, texts, extra_height }
    }
}

fn draw_stacked_bars(
    out: &mut String,
    chart: &Chart,
    categories: &[String],
    layers: &[(String, Vec<f64>)],
    labels: &CategoryLabels,
    colours: &ChartColours,
) {
    let totals: Vec<f64> = (0..categories.len())
        .map(|i| layers.iter().map(|(_, v)| v.get(i).copied().unwrap_or(0.0).max(0.0)).sum())
        .collect();
    let high = totals.iter().copied().fold(0.0, f64::max);
    let frame =
        Frame { x0: 0.0, x1: categories.len().max(1) as f64, y0: 0.0, y1: if high > 0.0 { high * 1.05 } else { 1.0 } };
    legend(out, &layers.iter().map(|(name, _)| name.as_str()).collect::<Vec<_>>());
    y_axis(out, &frame, colours);
    let band = plot_width() / categories.len().max(1) as f64;
    for (i, category) in categories.iter().enumerate() {
        let left = LEFT + i as f64 * band + band * 0.15;
        let centre = left + band * 0.35;
        if i % labels.stride == 0 {
            let y = x_tick_baseline();
            let placement = if labels.rotated {
                format!(
                    r#"x="{centre:.1}" y="{y}" text-anchor="end" transform="rotate(-{LABEL_ANGLE} {centre:.1} {y})""#
                )
            } else {
                format!(r#"x="{centre:.1}" y="{y}" text-anchor="middle""#)
            };
            let _ = write!(
                out,
                r#"<text class="category" {placement}><title>{full}</title>{shown}</text>"#,
                full = escape(category),
                shown = escape(&labels.texts[i]),
            );
        }
        let mut base = 0.0;
        for (index, (name, values)) in layers.iter().enumerate() {
            let value = values.get(i).copied().unwrap_or(0.0).max(0.0);
            if value <= 0.0 {
                continue;
            }
            let (top, bottom) = (frame.py(base + value), frame.py(base));
            let _ = write!(
                out,
                r#"<rect x="{left:.1}" y="{top:.1}" width="{w:.1}" height="{h:.1}" fill="{c}" data-tip="{t}"/>"#,
                w = band * 0.7,
                // A layer too thin to see keeps a sliver (0.1 px): a zero height is invalid SVG
                // to renderers such as resvg, which skip it with a warning.
                h = (bottom - top).max(0.1),
                c = color(index),
                t = escape(&format!("{category} · {name}: {} {}", short_number(value), chart.y_label))
            );
            base += value;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_point_is_drawn_with_its_tip() {
        let chart = Chart::xy(
            "ttft",
            "TTFT <ms>",
            "time (s)",
            "ms",
            vec![Series::new("requests", Style::Points, vec![(0.0, 1.0), (1.0, 2.5), (2.0, f64::NAN)])],
        );
        let svg = render(&chart, Theme::Light);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert_eq!(svg.matches("data-tip=").count(), 2, "the NaN point is skipped");
        assert!(svg.contains("TTFT &lt;ms&gt;"));
        assert!(svg.contains("requests: time (s) 1 · ms 2.5"));
    }

    #[test]
    fn a_dark_chart_has_dark_colours_of_its_own_and_keeps_the_series() {
        let mut chart =
            Chart::xy("t", "T", "s", "ms", vec![Series::new("requests", Style::Line, vec![(0.0, 1.0), (1.0, 2.0)])]);
        chart.marks.push((0.5, "profiling".into()));
        let light = render(&chart, Theme::Light);
        assert!(light.starts_with(r##"<svg xmlns"##) && light.contains(r##"fill="#ffffff""##), "{light}");
        let dark = render(&chart, Theme::Dark);
        assert!(dark.starts_with(r##"<svg fill="#dcdfe4" xmlns"##), "{dark}");
        assert!(dark.contains(r##"fill="#1e1f24""##) && dark.contains(r##"stroke="#34373f""##), "{dark}");
        assert!(dark.contains(&format!(r#"stroke="{}""#, color(0))) && dark.contains(r##"fill="#b8bcc6""##), "{dark}");
        assert!(!dark.contains("#ffffff") && !dark.contains("#555555"), "{dark}");
    }

    #[test]
    fn crowded_category_labels_are_rotated_cut_and_thinned_so_none_overlap() {
        let few = CategoryLabels::fit(&["avg".into(), "p99".into()]);
        assert!(!few.rotated && few.stride == 1 && few.extra_height == 0.0);
        let many: Vec<String> = (0..60).map(|i| format!("isl_{i}_rate_40/profile_runs/run_0003")).collect();
        let labels = CategoryLabels::fit(&many);
        assert!(labels.rotated && labels.extra_height > 0.0);
        assert!(labels.texts.iter().all(|t| t.chars().count() <= MAX_LABEL_CHARS && t.ends_with('…')));
        // Two shown labels are at least a line apart across their slope.
        let band = plot_width() / many.len() as f64;
        let across = band * labels.stride as f64 * LABEL_ANGLE.to_radians().sin();
        assert!(across >= LINE_HEIGHT, "{across}");
        let chart = Chart {
            body: ChartBody::StackedBars { categories: many.clone(), layers: vec![("waiting".into(), vec![1.0; 60])] },
            ..Chart::xy("trace", "HTTP", "", "ms", Vec::new())
        };
        let svg = render(&chart, Theme::Light);
        assert_eq!(svg.matches("class=\"category\"").count(), 60usize.div_ceil(labels.stride));
        assert!(svg.contains("<title>isl_0_rate_40/profile_runs/run_0003</title>"), "the full label as a tooltip");
        assert!(svg.contains(&format!("height=\"{}\"", HEIGHT + labels.extra_height)), "room below for the labels");
    }

    #[test]
    fn stacked_bars_draw_one_rect_per_layer_and_category() {
        let chart = Chart {
            body: ChartBody::StackedBars {
                categories: vec!["avg".into(), "p99".into()],
                layers: vec![("waiting".into(), vec![1.0, 2.0]), ("receiving".into(), vec![3.0, 4.0])],
            },
            ..Chart::xy("trace", "HTTP", "", "ms", Vec::new())
        };
        let svg = render(&chart, Theme::Light);
        assert_eq!(svg.matches("data-tip=").count(), 4);
        assert!(svg.contains("p99 · receiving: 4 ms"));
    }
}
