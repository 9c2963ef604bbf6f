//! `aiperf plot`: the report of one or more runs, read from their artifact folders. One
//! self-contained `report.html` (charts drawn here as SVG, made interactive by a little inline
//! script) and, on request, each chart as an SVG and a PNG file. Large runs are downsampled so
//! that the page stays a few MB.

mod artifacts;
mod branch_counts;
mod cards;
mod chart;
mod comparison;
mod dashboard;
mod distributions;
mod downsample;
mod html;
mod http_trace;
mod in_flight_counts;
mod live_records;
mod over_time;
mod page;
mod parquet_records;
mod png;
mod record_row;
mod record_sample;
mod records;
mod scrapes;
mod search_chart;
mod server_panels;
mod sessions_table;
mod svg;
mod theme;
mod time_axis;
mod variations;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

pub use live_records::{Armed, LiveRecords};

/// What `aiperf analyze` draws with: the axis helpers, the palette, the PNG renderer.
pub use chart::{nice_ticks, short_number};
pub use dashboard::serve as serve_dashboard;
pub use png::PngRenderer;
pub use svg::{color as series_color, escape};
pub use theme::Theme;

/// The page's file name in the output folder.
pub const REPORT_FILE: &str = "report.html";

/// What `aiperf plot` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Formats {
    pub html: bool,
    pub png: bool,
    pub svg: bool,
}

impl Formats {
    /// `"html,png,svg"` (any of them, in any order).
    pub fn parse(text: &str) -> Result<Self> {
        let mut formats = Self::default();
        for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            match word.to_ascii_lowercase().as_str() {
                "html" => formats.html = true,
                "png" => formats.png = true,
                "svg" => formats.svg = true,
                other => bail!("unknown format `{other}`: use html, png or svg (e.g. --format html,png)"),
            }
        }
        if formats == Self::default() {
            bail!("no format given: use html, png or svg (e.g. --format html,png)");
        }
        Ok(formats)
    }
}

/// The files written and the number of charts drawn.
#[derive(Debug)]
pub struct Written {
    pub files: Vec<PathBuf>,
    pub charts: usize,
    pub runs: usize,
}

/// Read the runs under `dirs` and write their report into `output` in `formats`.
pub fn write(dirs: &[PathBuf], output: &Path, formats: Formats, theme: Theme) -> Result<Written> {
    write_with(dirs, output, formats, theme, Default::default())
}

/// `write`, the runs in `collected` (by canonical folder) drawn from those records instead of
/// their record files.
fn write_with(
    dirs: &[PathBuf],
    output: &Path,
    formats: Formats,
    theme: Theme,
    collected: std::collections::HashMap<PathBuf, record_sample::Records>,
) -> Result<Written> {
    let input = artifacts::read(dirs, collected)?;
    let page = page::build(&input);
    std::fs::create_dir_all(output).with_context(|| format!("cannot create {}", output.display()))?;
    let mut files = Vec::new();
    let mut save = |name: String, bytes: &[u8]| -> Result<()> {
        let path = output.join(name);
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
        files.push(path);
        Ok(())
    };
    if formats.html {
        save(REPORT_FILE.to_string(), html::render(&page, theme).as_bytes())?;
    }
    let renderer = formats.png.then(png::PngRenderer::new);
    for chart in page.charts() {
        let drawn = svg::render(chart, theme);
        if formats.svg {
            save(format!("{}.svg", chart.id), drawn.as_bytes())?;
        }
        if let Some(renderer) = &renderer {
            let png = renderer.render(&drawn).with_context(|| format!("chart `{}`", chart.id))?;
            save(format!("{}.png", chart.id), &png)?;
        }
    }
    Ok(Written { files, charts: page.charts().count(), runs: input.runs.len() })
}

/// The report of one run or sweep folder, written into it (`report: true`, `--report`): the
/// runs whose records `live` collected are drawn from those, the others from their files.
pub fn write_into(dir: &Path, live: &LiveRecords) -> Result<PathBuf> {
    let formats = Formats { html: true, ..Default::default() };
    write_with(&[dir.to_path_buf()], dir, formats, Theme::Light, live.take_under(dir))?;
    Ok(dir.join(REPORT_FILE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse_and_bad_ones_are_named() {
        assert_eq!(Formats::parse("html").unwrap(), Formats { html: true, png: false, svg: false });
        assert_eq!(Formats::parse("PNG, svg").unwrap(), Formats { html: false, png: true, svg: true });
        assert!(format!("{}", Formats::parse("html,pdf").unwrap_err()).contains("unknown format `pdf`"));
        assert!(Formats::parse(" , ").is_err());
    }
}
