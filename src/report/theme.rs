//! The report's two looks, AIPerf's `aiperf plot --theme light | dark`: the charts as drawn, or
//! with their background, grid, frame and text in dark colours (the series keep theirs) on a
//! dark page.

/// How the page and its charts are coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Theme {
    #[default]
    Light,
    Dark,
}

/// A light chart's own colours (background, grid lines, frame, marks) and their dark ones.
const DARK_CHART_COLOURS: [(&str, &str); 4] = [
    ("fill=\"#ffffff\"", "fill=\"#1e1f24\""),
    ("stroke=\"#e4e4e4\"", "stroke=\"#34373f\""),
    ("\"#888888\"", "\"#8a8f99\""),
    ("\"#555555\"", "\"#b8bcc6\""),
];

/// The text colour of a dark chart (a light chart's text is the default black).
const DARK_TEXT: &str = "#dcdfe4";

impl Theme {
    /// `svg` (a chart drawn light) in this theme.
    pub fn chart(self, svg: String) -> String {
        match self {
            Theme::Light => svg,
            Theme::Dark => {
                let swapped = DARK_CHART_COLOURS.iter().fold(svg, |svg, (light, dark)| svg.replace(light, dark));
                swapped.replacen("<svg ", &format!("<svg fill=\"{DARK_TEXT}\" "), 1)
            }
        }
    }

    /// The page body's attributes in this theme (`report.css` styles `body.dark`).
    pub fn body_attributes(self) -> &'static str {
        match self {
            Theme::Light => "",
            Theme::Dark => " class=\"dark\"",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dark_chart_swaps_its_own_colours_and_keeps_the_series() {
        let light = r##"<svg xmlns="http://www.w3.org/2000/svg" class="chart"><rect width="10" height="10" fill="#ffffff"/><line stroke="#e4e4e4"/><path stroke="#1f77b4"/><text fill="#555555">m</text></svg>"##;
        assert_eq!(Theme::Light.chart(light.to_string()), light);
        let dark = Theme::Dark.chart(light.to_string());
        assert!(dark.starts_with(r##"<svg fill="#dcdfe4" xmlns"##), "{dark}");
        assert!(dark.contains(r##"fill="#1e1f24""##) && dark.contains(r##"stroke="#34373f""##), "{dark}");
        assert!(dark.contains(r##"stroke="#1f77b4""##) && dark.contains(r##"fill="#b8bcc6""##), "{dark}");
        assert!(!dark.contains("#ffffff") && !dark.contains("#555555"), "{dark}");
    }
}
