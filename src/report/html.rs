//! The page as one self-contained HTML file: inline CSS, inline SVG charts and inline script;
//! nothing is fetched, so it opens offline and can be mailed as one file. A script error is
//! recorded on the root element (`data-js-errors`), and the page marks itself ready
//! (`data-ready` on the body, the number of charts) once its script has run.

use super::page::{Page, Section};
use super::svg::{self, escape};
use super::theme::Theme;

const STYLE: &str = include_str!("report.css");
const SCRIPT: &str = include_str!("report.js");
const ERROR_HOOK: &str = "window.addEventListener('error',function(e){var d=document.documentElement;d.setAttribute('data-js-errors',(d.getAttribute('data-js-errors')||'')+e.message+';');});";

pub fn render(page: &Page, theme: Theme) -> String {
    let mut html = String::with_capacity(1 << 20);
    html.push_str(&format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>{title}</title><script>{ERROR_HOOK}</script><style>{STYLE}</style></head><body{body}><header><h1>{title}</h1><p class=\"note\">Hover a point or bar for its value; drag across a chart to zoom its time or x axis, double-click to reset. Written by aiperf {version}.</p></header>",
        title = escape(&page.title),
        version = env!("CARGO_PKG_VERSION"),
        body = theme.body_attributes(),
    ));
    if let Some((table, charts)) = &page.comparison {
        html.push_str(
            "<section id=\"comparison\"><h2>Comparison</h2><p class=\"note\">Changes are against the first run.</p>",
        );
        html.push_str(table);
        html.push_str("<div class=\"grid\">");
        for chart in charts {
            figure(&mut html, chart, theme);
        }
        html.push_str("</div></section>");
    }
    let several = page.runs.len() > 1;
    for (index, run) in page.runs.iter().enumerate() {
        html.push_str(&format!("<section class=\"run\" id=\"run-{}\">", index + 1));
        if several {
            // The first run unfolded: its cards and charts are in view below the comparison.
            let open = if index == 0 { " open" } else { "" };
            html.push_str(&format!("<details{open}><summary>{}</summary>", escape(&run.label)));
        } else {
            html.push_str(&format!("<h2>{}</h2>", escape(&run.label)));
        }
        html.push_str(&format!("<p class=\"note\">{}</p>", escape(&run.dir)));
        html.push_str(&run.cards_html);
        for section in &run.sections {
            render_section(&mut html, section, theme);
        }
        html.push_str(if several { "</details></section>" } else { "</section>" });
    }
    html.push_str(&format!("<div id=\"tip\"></div><script>{SCRIPT}</script></body></html>\n"));
    html
}

fn render_section(html: &mut String, section: &Section, theme: Theme) {
    html.push_str(&format!("<h3>{}</h3>", escape(&section.title)));
    if let Some(note) = &section.note {
        html.push_str(&format!("<p class=\"note\">{}</p>", escape(note)));
    }
    html.push_str("<div class=\"grid\">");
    for chart in &section.charts {
        figure(html, chart, theme);
    }
    html.push_str("</div>");
}

fn figure(html: &mut String, chart: &super::chart::Chart, theme: Theme) {
    html.push_str(&format!("<figure class=\"panel\" data-chart=\"{}\">", escape(&chart.id)));
    html.push_str(&svg::render(chart, theme));
    html.push_str("</figure>");
}
