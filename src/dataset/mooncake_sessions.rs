//! A mooncake trace's lines as conversations, as AIPerf 0.13 reads them: lines that share a
//! `session_id` are the turns of one session in file order, each sent after the previous
//! answer and its `delay` (ms), over the conversation so far; sessions keep the order of their
//! first lines, and a line without an id is a session of its own. A first turn's `timestamp`
//! puts its session on a fixed schedule. A trace without session ids stays a list of requests.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Result, bail};

use super::fields::Record;
use super::trace_links::{TraceLink, attach_sessions};
use super::{DatasetEntry, FileTurn};

/// Where a line stands in time and in a session.
pub struct LinePlace {
    session: Option<String>,
    timestamp_ms: Option<f64>,
    delay_ms: Option<f64>,
}

impl LinePlace {
    pub fn read(request: &Record) -> Result<Self> {
        let at = &request.at;
        let timestamp_ms = request.opt_number("timestamp")?;
        let delay_ms = request.opt_number("delay")?;
        if delay_ms.is_some_and(|delay| delay < 0.0) {
            bail!("{at}: \"delay\" cannot be negative");
        }
        // AIPerf's rule: both set and neither zero.
        if timestamp_ms.is_some_and(|t| t != 0.0) && delay_ms.is_some_and(|d| d != 0.0) {
            bail!("{at}: \"timestamp\" and \"delay\" cannot be set together");
        }
        let session = if request.has("session_id") { Some(request.string("session_id")?.to_string()) } else { None };
        Ok(Self { session, timestamp_ms, delay_ms })
    }
}

/// One line of the trace: its entry and its place.
pub struct TraceLine {
    at: String,
    entry: DatasetEntry,
    place: LinePlace,
}

impl TraceLine {
    pub fn read(request: &Record, entry: DatasetEntry) -> Result<Self> {
        Ok(Self { at: request.at.clone(), entry, place: LinePlace::read(request)? })
    }

    /// Sends a whole conversation of its own (chat `messages` or a `payload`) in every turn.
    fn is_self_contained(&self) -> bool {
        self.entry.own_body.as_ref().is_some_and(|body| body.is_whole_conversation())
    }
}

/// The entries of `lines`, session by session when any line names a session.
pub fn into_sessions(path: &Path, lines: Vec<TraceLine>) -> Result<Vec<DatasetEntry>> {
    if lines.iter().all(|line| line.place.session.is_none()) {
        return Ok(lines.into_iter().map(|line| line.entry).collect());
    }
    let mut sessions: Vec<Vec<TraceLine>> = Vec::new();
    let mut by_id: HashMap<String, usize> = HashMap::new();
    for line in lines {
        match line.place.session.clone() {
            Some(id) => match by_id.get(&id) {
                Some(&index) => sessions[index].push(line),
                None => {
                    by_id.insert(id, sessions.len());
                    sessions.push(vec![line]);
                }
            },
            None => sessions.push(vec![line]),
        }
    }
    let mut entries = Vec::new();
    let mut links = Vec::new();
    let mut timed = false;
    for turns in sessions {
        let self_contained = turns.iter().filter(|line| line.is_self_contained()).count();
        if self_contained > 0 && self_contained < turns.len() {
            bail!(
                "{}: session `{}` mixes lines that send their own `messages` or `payload` with lines whose prompt is \
                 made (input_length, text_input); give each session one kind",
                turns[0].at,
                turns[0].place.session.as_deref().unwrap_or_default()
            );
        }
        let conversation: Option<Arc<str>> = turns[0].place.session.as_deref().map(Arc::from);
        links.push(TraceLink {
            id: turns[0].place.session.clone().unwrap_or_else(|| turns[0].at.clone()),
            ..TraceLink::default()
        });
        for (index, line) in turns.into_iter().enumerate() {
            let mut entry = line.entry;
            timed |= line.place.timestamp_ms.is_some();
            entry.turn = Some(FileTurn {
                index: index as u32,
                delay_ms: line.place.delay_ms,
                timestamp_ms: line.place.timestamp_ms,
            });
            entry.conversation = conversation.clone();
            entries.push(entry);
        }
    }
    if timed {
        attach_sessions(path, &links, &mut entries)?;
    }
    Ok(entries)
}
