//! The swim lanes of a finished run, read from its `profile_export.jsonl`: each session
//! (a session tree, with its sub-agents) in a lane of its own slot, slots reused once their
//! session ended, its requests as bars and the waits between them shaded; under them the
//! requests in flight and the idle sessions over time. Drawn as SVG, then PNG or HTML.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use anyhow::{Result, bail};
use serde_json::Value;

use crate::report::{escape, nice_ticks, series_color, short_number};

/// One request of a session, seconds from the run's first request.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub start_s: f64,
    pub end_s: f64,
    pub ttft_ms: Option<f64>,
    pub failed: bool,
    /// Row within its lane, so that requests of a session in flight together do not overlap.
    pub row: usize,
}

/// A session and the slot it ran in.
#[derive(Debug, Clone)]
pub struct Session {
    pub id: String,
    pub turns: Vec<Turn>,
    pub slot: usize,
}

impl Session {
    fn span(&self) -> (f64, f64) {
        let start = self.turns.iter().map(|t| t.start_s).fold(f64::INFINITY, f64::min);
        let end = self.turns.iter().map(|t| t.end_s).fold(f64::NEG_INFINITY, f64::max);
        (start, end)
    }

    fn rows(&self) -> usize {
        self.turns.iter().map(|t| t.row + 1).max().unwrap_or(1)
    }
}

/// The lanes of a run.
#[derive(Debug)]
pub struct SwimLanes {
    pub sessions: Vec<Session>,
    pub slots: usize,
    /// Rows each slot takes (its most requests of one session in flight at once).
    pub slot_rows: Vec<usize>,
    pub end_s: f64,
    /// The requests in flight over time: (time, count) steps.
    pub active: Vec<(f64, f64)>,
    /// Sessions started and not ended but with no request in flight: (time, count) steps.
    pub idle: Vec<(f64, f64)>,
}

/// What is drawn besides the lanes.
#[derive(Debug, Default, Clone)]
pub struct Marks {
    pub title: String,
    /// The target concurrency, a line in the lower panel.
    pub concurrency: Option<u64>,
    /// When the ramp ended, seconds from the first request.
    pub ramp_s: Option<f64>,
    /// When the benchmark ended, seconds from the first request.
    pub benchmark_end_s: Option<f64>,
}

/// Each session's requests: (start, end in ns since the epoch, TTFT in ms, whether it failed).
type SessionRequests = BTreeMap<String, Vec<(u64, u64, Option<f64>, bool)>>;

/// The sessions of `profile_export.jsonl` (cancelled requests and requests without an end
/// left out), grouped by their session tree's root (`root_correlation_id`), else their
/// `x_correlation_id`, else their conversation.
pub fn read(path: &Path) -> Result<SwimLanes> {
    let mut groups: SessionRequests = BTreeMap::new();
    super::for_each_record(path, |index, record| {
        let meta = &record["metadata"];
        if meta["was_cancelled"].as_bool() == Some(true) {
            return;
        }
        let (Some(start), Some(end)) = (meta["request_start_ns"].as_u64(), meta["request_end_ns"].as_u64()) else {
            return;
        };
        let key = ["root_correlation_id", "x_correlation_id", "conversation_id"]
            .iter()
            .find_map(|name| meta[*name].as_str().filter(|id| !id.is_empty()))
            .map_or_else(|| format!("request {}", index + 1), str::to_string);
        let ttft = record["metrics"]["time_to_first_token"]["value"].as_f64();
        let failed = !record["error"].is_null();
        groups.entry(key).or_default().push((start, end.max(start), ttft, failed));
    })?;
    if groups.is_empty() {
        bail!("no finished request in {}", path.display());
    }
    Ok(lay_out(groups))
}

fn lay_out(groups: SessionRequests) -> SwimLanes {
    let first_ns = groups.values().flatten().map(|r| r.0).min().unwrap_or(0);
    let seconds = |ns: u64| (ns - first_ns) as f64 / 1e9;
    let mut sessions: Vec<Session> = groups
        .into_iter()
        .map(|(id, mut requests)| {
            requests.sort_by_key(|r| (r.0, r.1));
            let mut row_ends: Vec<u64> = Vec::new();
            let turns = requests
                .into_iter()
                .map(|(start, end, ttft_ms, failed)| {
                    let row = match row_ends.iter().position(|&row_end| row_end <= start) {
                        Some(row) => row,
                        None => {
                            row_ends.push(0);
                            row_ends.len() - 1
                        }
                    };
                    row_ends[row] = end;
                    Turn { start_s: seconds(start), end_s: seconds(end), ttft_ms, failed, row }
                })
                .collect();
            Session { id, turns, slot: 0 }
        })
        .collect();
    sessions.sort_by(|a, b| a.span().0.total_cmp(&b.span().0).then_with(|| a.id.cmp(&b.id)));
    // A slot is reused by the next session starting after its last one ended.
    let mut slot_ends: Vec<f64> = Vec::new();
    let mut slot_rows: Vec<usize> = Vec::new();
    for session in &mut sessions {
        let (start, end) = session.span();
        let slot = slot_ends.iter().position(|&slot_end| slot_end <= start).unwrap_or_else(|| {
            slot_ends.push(f64::NEG_INFINITY);
            slot_rows.push(1);
            slot_ends.len() - 1
        });
        slot_ends[slot] = end;
        slot_rows[slot] = slot_rows[slot].max(session.rows());
        session.slot = slot;
    }
    let requests: Vec<(f64, f64)> =
        sessions.iter().flat_map(|s| s.turns.iter().map(|t| (t.start_s, t.end_s))).collect();
    let spans: Vec<(f64, f64)> = sessions.iter().map(Session::span).collect();
    let active = in_flight(&requests);
    let alive = in_flight(&spans);
    let idle = difference(&alive, &active);
    let end_s = requests.iter().map(|r| r.1).fold(0.0, f64::max);
    SwimLanes { slots: slot_ends.len(), slot_rows, sessions, end_s, active, idle }
}

/// How many of `intervals` are open over time, as (time, count) steps.
fn in_flight(intervals: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut events: Vec<(f64, i64)> = intervals.iter().flat_map(|&(start, end)| [(start, 1), (end, -1)]).collect();
    // Ends before starts at the same instant: a slot handed over is not counted twice.
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut steps: Vec<(f64, f64)> = vec![(0.0, 0.0)];
    let mut open = 0i64;
    for (time, change) in events {
        open += change;
        match steps.last_mut() {
            Some(last) if last.0 == time => last.1 = open as f64,
            _ => steps.push((time, open as f64)),
        }
    }
    steps
}

/// `a - b` for two step functions, never below zero.
fn difference(a: &[(f64, f64)], b: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let value_at =
        |steps: &[(f64, f64)], time: f64| steps.iter().take_while(|(t, _)| *t <= time).last().map_or(0.0, |(_, v)| *v);
    let mut times: Vec<f64> = a.iter().chain(b).map(|(t, _)| *t).collect();
    times.sort_by(f64::total_cmp);
    times.dedup();
    times.into_iter().map(|t| (t, (value_at(a, t) - value_at(b, t)).max(0.0))).collect()
}

const WIDTH: f64 = 1200.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 56.0;
const CURVE_HEIGHT: f64 = 160.0;
const GAP: f64 = 44.0;
const BOTTOM: f64 = 64.0;
/// The lane markers' column, left of the lanes: one mark per lane, a gap between two.
pub const LANE_MARK_X: f64 = LEFT - 14.0;
const LANE_MARK_WIDTH: f64 = 8.0;

impl SwimLanes {
    fn total_rows(&self) -> usize {
        self.slot_rows.iter().sum()
    }

    /// Pixels per lane row: lanes stay readable up to a few hundred rows.
    fn row_height(&self) -> f64 {
        (640.0 / self.total_rows().max(1) as f64).clamp(4.0, 22.0)
    }

    /// The SVG document: lanes above, concurrency below, sharing the time axis.
    pub fn svg(&self, marks: &Marks) -> String {
        let row_height = self.row_height();
        let lanes_height = row_height * self.total_rows() as f64;
        let curve_top = TOP + lanes_height + GAP;
        let height = curve_top + CURVE_HEIGHT + BOTTOM;
        let x_end = (self.end_s * 1.01).max(1e-3);
        let plot_width = WIDTH - LEFT - RIGHT;
        let px = |t: f64| LEFT + t / x_end * plot_width;
        let mut out = String::with_capacity(64 * 1024);
        let _ = write!(
            out,
            r##"<svg xmlns="http://www.w3.org/2000/svg" class="swim-lane" viewBox="0 0 {WIDTH} {height:.0}" width="{WIDTH}" height="{height:.0}" font-family="DejaVu Sans, Verdana, sans-serif" font-size="11"><rect width="{WIDTH}" height="{height:.0}" fill="#ffffff"/><text x="{cx}" y="20" text-anchor="middle" font-size="15" font-weight="bold">{title}</text><text x="{cx}" y="38" text-anchor="middle" fill="#555555">{summary}</text>"##,
            cx = WIDTH / 2.0,
            title = escape(&marks.title),
            summary = escape(&format!(
                "{} sessions in {} slots · bars: requests · shaded: waits between a session's requests · black tick: a new session in its slot",
                self.sessions.len(),
                self.slots
            )),
        );
        // Each slot's band, and its marker in the lane column.
        let mut slot_top = Vec::with_capacity(self.slots);
        let mut y = TOP;
        for (slot, rows) in self.slot_rows.iter().enumerate() {
            slot_top.push(y);
            let band = *rows as f64 * row_height;
            let _ = write!(
                out,
                r##"<g class="lane" data-slot="{slot}"><rect x="{LEFT}" y="{y:.2}" width="{plot_width}" height="{h:.2}" fill="{fill}"/><rect class="lane-mark" x="{LANE_MARK_X}" y="{my:.2}" width="{LANE_MARK_WIDTH}" height="{mh:.2}" fill="{mark}"/></g>"##,
                h = band,
                fill = if slot % 2 == 0 { "#f6f6f6" } else { "#ffffff" },
                my = y + band * 0.1,
                mh = (band * 0.8).max(1.0),
                mark = series_color(slot),
            );
            y += band;
        }
        let stride = (self.slots / 30).max(1);
        for slot in (0..self.slots).step_by(stride) {
            let _ = write!(
                out,
                r#"<text x="{x}" y="{y:.2}" text-anchor="end" font-size="{size:.1}">{slot}</text>"#,
                x = LANE_MARK_X - 4.0,
                y = slot_top[slot] + self.slot_rows[slot] as f64 * row_height / 2.0 + 4.0,
                size = (row_height * 0.9).clamp(7.0, 11.0),
            );
        }
        let mut first_in_slot = vec![true; self.slots];
        for (index, session) in self.sessions.iter().enumerate() {
            let color = series_color(index);
            let top = slot_top[session.slot];
            let _ = write!(
                out,
                r#"<g class="session" data-session="{}" data-slot="{}">"#,
                escape(&session.id),
                session.slot
            );
            let mut turns: Vec<&Turn> = session.turns.iter().collect();
            turns.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
            // The waits between the session's requests (where none was in flight).
            let mut busy_until = turns.first().map_or(0.0, |t| t.end_s);
            for turn in &turns[1.min(turns.len())..] {
                if turn.start_s > busy_until {
                    let _ = write!(
                        out,
                        r#"<rect class="wait" x="{x:.2}" y="{y:.2}" width="{w:.2}" height="{h:.2}" fill="{color}" fill-opacity="0.22"/>"#,
                        x = px(busy_until),
                        y = top + row_height * 0.15,
                        w = px(turn.start_s) - px(busy_until),
                        h = (session.rows() as f64 - 0.3) * row_height,
                    );
                }
                busy_until = busy_until.max(turn.end_s);
            }
            for (number, turn) in session.turns.iter().enumerate() {
                let tip = format!(
                    "{} · request {} · {:.3}–{:.3} s{}{}",
                    session.id,
                    number + 1,
                    turn.start_s,
                    turn.end_s,
                    turn.ttft_ms.map_or(String::new(), |ttft| format!(" · TTFT {} ms", short_number(ttft))),
                    if turn.failed { " · failed" } else { "" }
                );
                let _ = write!(
                    out,
                    r##"<rect class="turn" x="{x:.2}" y="{y:.2}" width="{w:.2}" height="{h:.2}" fill="{fill}" data-tip="{t}"><title>{t}</title></rect>"##,
                    x = px(turn.start_s),
                    y = top + (turn.row as f64 + 0.15) * row_height,
                    w = (px(turn.end_s) - px(turn.start_s)).max(0.5),
                    h = row_height * 0.7,
                    fill = if turn.failed { "#d62728" } else { color },
                    t = escape(&tip),
                );
            }
            if !std::mem::replace(&mut first_in_slot[session.slot], false) {
                let _ = write!(
                    out,
                    r##"<path class="reuse" d="M{x:.2} {y0:.2}V{y1:.2}" stroke="#000000" stroke-width="1.5"/>"##,
                    x = px(session.span().0),
                    y0 = top,
                    y1 = top + self.slot_rows[session.slot] as f64 * row_height,
                );
            }
            out.push_str("</g>");
        }
        self.curves(&mut out, marks, curve_top, &px);
        self.time_axis(&mut out, marks, (TOP, curve_top + CURVE_HEIGHT), x_end, &px);
        out.push_str("</svg>");
        out
    }

    /// The lower panel: requests in flight, idle sessions, the slot count and the target.
    fn curves(&self, out: &mut String, marks: &Marks, top: f64, px: &dyn Fn(f64) -> f64) {
        let peak = self.active.iter().map(|p| p.1).fold(0.0, f64::max);
        let y_max = (peak.max(self.slots as f64).max(marks.concurrency.unwrap_or(0) as f64) * 1.15).max(1.0);
        let py = |v: f64| top + CURVE_HEIGHT - v / y_max * CURVE_HEIGHT;
        let plot_width = WIDTH - LEFT - RIGHT;
        let _ = write!(
            out,
            r##"<rect x="{LEFT}" y="{top}" width="{plot_width}" height="{CURVE_HEIGHT}" fill="none" stroke="#888888"/>"##
        );
        for tick in nice_ticks(0.0, y_max, 4) {
            let _ = write!(
                out,
                r##"<line x1="{LEFT}" x2="{x2}" y1="{y:.2}" y2="{y:.2}" stroke="#e4e4e4"/><text x="{tx}" y="{ty:.2}" text-anchor="end">{label}</text>"##,
                x2 = LEFT + plot_width,
                y = py(tick),
                tx = LEFT - 6.0,
                ty = py(tick) + 4.0,
                label = short_number(tick),
            );
        }
        let steps = |points: &[(f64, f64)]| {
            let mut d = String::new();
            for (i, (t, v)) in points.iter().enumerate() {
                let _ = if i == 0 {
                    write!(d, "M{:.2} {:.2}", px(*t), py(*v))
                } else {
                    write!(d, "H{:.2}V{:.2}", px(*t), py(*v))
                };
            }
            d
        };
        let _ = write!(
            out,
            r##"<path class="active" d="{d}" fill="none" stroke="#2196f3" stroke-width="1.2"/><path class="idle" d="{i}" fill="none" stroke="#999999" stroke-width="1"/>"##,
            d = steps(&self.active),
            i = steps(&self.idle),
        );
        let mut legend = vec![
            ("#2196f3", format!("requests in flight (peak {})", peak as u64)),
            ("#999999", "idle sessions (between requests)".to_string()),
            ("#d62728", format!("slots ({})", self.slots)),
        ];
        let mut horizontal = |value: f64, color: &str, dash: &str| {
            let _ = write!(
                out,
                r##"<path d="M{LEFT} {y:.2}h{plot_width}" stroke="{color}" stroke-dasharray="{dash}"/>"##,
                y = py(value)
            );
        };
        horizontal(self.slots as f64, "#d62728", "2 3");
        if let Some(target) = marks.concurrency {
            horizontal(target as f64, "#2ca02c", "6 3");
            legend.push(("#2ca02c", format!("target concurrency ({target})")));
        }
        let mut x = LEFT;
        for (color, label) in legend {
            let _ = write!(
                out,
                r#"<rect x="{x:.1}" y="{y}" width="12" height="3" fill="{color}"/><text x="{tx:.1}" y="{ty}">{l}</text>"#,
                y = top - 12.0,
                tx = x + 16.0,
                ty = top - 8.0,
                l = escape(&label),
            );
            x += 30.0 + 6.2 * label.chars().count() as f64;
        }
        let _ = write!(
            out,
            r#"<text transform="translate(16 {cy:.1}) rotate(-90)" text-anchor="middle">sessions</text>"#,
            cy = top + CURVE_HEIGHT / 2.0
        );
    }

    /// Time ticks under both panels, and the ramp and benchmark-end lines across them.
    fn time_axis(
        &self,
        out: &mut String,
        marks: &Marks,
        (top, bottom): (f64, f64),
        x_end: f64,
        px: &dyn Fn(f64) -> f64,
    ) {
        for tick in nice_ticks(0.0, x_end, 10) {
            let _ = write!(
                out,
                r##"<text class="xtick" x="{x:.2}" y="{y}" text-anchor="middle">{label}</text><path d="M{x:.2} {top}V{bottom}" stroke="#000000" stroke-opacity="0.06"/>"##,
                x = px(tick),
                y = bottom + 16.0,
                label = short_number(tick),
            );
        }
        let _ = write!(
            out,
            r#"<text x="{cx}" y="{y}" text-anchor="middle">time since the first request (s)</text>"#,
            cx = LEFT + (WIDTH - LEFT - RIGHT) / 2.0,
            y = bottom + 36.0,
        );
        for (at, color, label) in
            [(marks.ramp_s, "#ff7f0e", "ramp done"), (marks.benchmark_end_s, "#d62728", "benchmark end")]
        {
            let Some(at) = at.filter(|t| t.is_finite() && *t >= 0.0) else { continue };
            // Near the right edge the label reads leftwards, so that it stays on the page.
            let (tx, anchor) = if px(at) > WIDTH - 160.0 { (px(at) - 3.0, "end") } else { (px(at) + 3.0, "start") };
            let _ = write!(
                out,
                r##"<path d="M{x:.2} {top}V{bottom}" stroke="{color}" stroke-dasharray="6 4" stroke-width="1.5"/><text x="{tx:.2}" y="{ty}" fill="{color}" text-anchor="{anchor}">{label} ({at} s)</text>"##,
                x = px(at),
                ty = top - 4.0,
                at = short_number(at),
            );
        }
    }
}

/// The ramp's duration and the benchmark's, seconds, from the run's summary
/// (`profile_export_aiperf.json`) when it is there.
pub fn summary_marks(run_dir: &Path) -> (Option<f64>, Option<f64>) {
    let Ok(text) = std::fs::read_to_string(run_dir.join("profile_export_aiperf.json")) else { return (None, None) };
    let Ok(summary) = serde_json::from_str::<Value>(&text) else { return (None, None) };
    let phases = summary["input_config"]["phases"].as_array().cloned().unwrap_or_default();
    let ramp = phases
        .iter()
        .filter(|phase| phase["exclude_from_results"].as_bool() != Some(true))
        .find_map(|phase| phase["concurrency_ramp"]["duration"].as_f64())
        .or_else(|| summary["input_config"]["loadgen"]["concurrency_ramp_duration"].as_f64());
    let duration = &summary["benchmark_duration"];
    let end = duration["avg"].as_f64().or_else(|| duration.as_f64());
    (ramp, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(requests: &[(&str, u64, u64)]) -> SessionRequests {
        let mut groups = SessionRequests::new();
        for (id, start, end) in requests {
            groups.entry(id.to_string()).or_default().push((start * 1_000_000_000, end * 1_000_000_000, None, false));
        }
        groups
    }

    #[test]
    fn slots_are_reused_after_a_session_ends_and_parallel_requests_get_rows() {
        // a: 0-2 and 3-4 (a wait between); b: 1-5; c starts at 4 when a is done, d at 5 when
        // b is, with two requests at once.
        let lanes = lay_out(group(&[("a", 0, 2), ("a", 3, 4), ("b", 1, 5), ("c", 4, 6), ("d", 5, 7), ("d", 6, 7)]));
        let slot = |id: &str| lanes.sessions.iter().find(|s| s.id == id).unwrap().slot;
        assert_eq!(lanes.slots, 2);
        assert_eq!(slot("c"), slot("a"), "c takes a's slot");
        assert_eq!(slot("d"), slot("b"), "d takes b's slot");
        assert_eq!(lanes.slot_rows[slot("d")], 2, "d's two requests in flight at once take two rows");
        let at = |steps: &[(f64, f64)], t: f64| steps.iter().take_while(|p| p.0 <= t).last().unwrap().1;
        assert_eq!(at(&lanes.active, 2.5), 1.0, "b alone");
        assert_eq!(at(&lanes.idle, 2.5), 1.0, "a waits between its requests");
        assert_eq!(at(&lanes.active, 6.5), 2.0, "d's two");
        assert_eq!(at(&lanes.active, 7.5), 0.0);
        let svg = lanes.svg(&Marks { title: "t".into(), concurrency: Some(3), ..Marks::default() });
        assert_eq!(svg.matches("class=\"lane\"").count(), 2);
        assert_eq!(svg.matches("class=\"turn\"").count(), 6);
        assert_eq!(svg.matches("class=\"wait\"").count(), 1);
        assert_eq!(svg.matches("class=\"reuse\"").count(), 2);
    }
}
