//! The report's two looks, AIPerf's `aiperf plot --theme light | dark`: the colours a chart
//! draws its background, grid, frame, marks and text in (the series keep theirs), and the
//! page's (`report.css` styles `body.dark`).

/// How the page and its charts are coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Theme {
    #[default]
    Light,
    Dark,
}

/// A chart's own colours in a theme.
pub struct ChartColours {
    /// Attributes of the `<svg>` element (the text colour of a dark chart; a light chart's text
    /// is the default black).
    pub root: &'static str,
    pub background: &'static str,
    pub grid: &'static str,
    pub frame: &'static str,
    pub marks: &'static str,
}

impl Theme {
    pub fn chart_colours(self) -> ChartColours {
        match self {
            Theme::Light => {
                ChartColours { root: "", background: "#ffffff", grid: "#e4e4e4", frame: "#888888", marks: "#555555" }
            }
            Theme::Dark => ChartColours {
                root: r##" fill="#dcdfe4""##,
                background: "#1e1f24",
                grid: "#34373f",
                frame: "#8a8f99",
                marks: "#b8bcc6",
            },
        }
    }

    /// The page body's attributes in this theme.
    pub fn body_attributes(self) -> &'static str {
        match self {
            Theme::Light => "",
            Theme::Dark => " class=\"dark\"",
        }
    }
}
