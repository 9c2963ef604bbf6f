//! Incremental parser for `text/event-stream` bodies: fed the bytes of each read as they
//! arrive, it calls back once per complete event and reuses its buffers across reads. It never
//! holds more than one event's worth of bytes (its cap) however the server splits or pads them.

use std::ops::ControlFlow;

/// One complete event; it borrows the parser's buffers until the callback returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEvent<'a> {
    /// The `event:` field; empty for the default (`message`) type.
    pub event_type: &'a [u8],
    /// The `data:` lines of the event, joined by `\n`.
    pub data: &'a [u8],
}

/// Turns a byte stream, split anywhere, into events.
#[derive(Debug)]
pub struct SseParser {
    /// Bytes of a line whose end has not arrived yet.
    partial_line: Vec<u8>,
    /// The last read ended with `\r`: a `\n` opening the next read completes that line end.
    pending_cr: bool,
    event: PendingEvent,
    /// Most bytes the event being assembled may hold: its data so far plus the line pending.
    max_event_bytes: usize,
}

/// An event grew past the parser's cap; the parser is of no further use for this stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventTooLarge;

/// The fields of the event being assembled.
#[derive(Debug, Default)]
struct PendingEvent {
    event_type: Vec<u8>,
    data: Vec<u8>,
    has_data: bool,
}

impl SseParser {
    /// A parser that refuses events of more than `max_event_bytes`.
    pub fn new(max_event_bytes: usize) -> Self {
        Self { partial_line: Vec::new(), pending_cr: false, event: PendingEvent::default(), max_event_bytes }
    }

    /// Parse one read. `on_event` runs for every event the read completes; once it returns
    /// `Break`, the rest of the read is dropped and `Break` is returned. An event that would
    /// pass the cap stops the parse with `EventTooLarge` before its bytes are copied.
    pub fn feed<F>(&mut self, mut input: &[u8], mut on_event: F) -> Result<ControlFlow<()>, EventTooLarge>
    where
        F: FnMut(SseEvent<'_>) -> ControlFlow<()>,
    {
        if self.pending_cr && !input.is_empty() {
            self.pending_cr = false;
            if input[0] == b'\n' {
                input = &input[1..];
            }
        }
        // The data of the event being assembled while it is a single `data:` line of this
        // read: borrowed from `input`, copied into `event.data` only if the event outlives it.
        let mut borrowed_data = None;
        while let Some(line_end) = memchr::memchr2(b'\n', b'\r', input) {
            self.check_room_for(line_end, borrowed_data)?;
            let flow = if self.partial_line.is_empty() {
                self.event.take_line(&input[..line_end], &mut borrowed_data, &mut on_event)
            } else {
                self.partial_line.extend_from_slice(&input[..line_end]);
                let flow = self.event.take_own_line(&self.partial_line, &mut on_event);
                self.partial_line.clear();
                flow
            };
            let ended_with_cr = input[line_end] == b'\r';
            input = &input[line_end + 1..];
            if ended_with_cr {
                match input.first() {
                    Some(b'\n') => input = &input[1..],
                    Some(_) => {}
                    None => self.pending_cr = true,
                }
            }
            if flow.is_break() {
                return Ok(flow);
            }
        }
        self.check_room_for(input.len(), borrowed_data)?;
        if let Some(data) = borrowed_data {
            self.event.data.extend_from_slice(data);
        }
        self.partial_line.extend_from_slice(input);
        Ok(ControlFlow::Continue(()))
    }

    pub fn max_event_bytes(&self) -> usize {
        self.max_event_bytes
    }

    /// `more` bytes of the current line may still join the event (its data so far in
    /// `event.data` or `borrowed_data`) without passing the cap.
    fn check_room_for(&self, more: usize, borrowed_data: Option<&[u8]>) -> Result<(), EventTooLarge> {
        let held = self.event.data.len() + borrowed_data.map_or(0, <[u8]>::len) + self.partial_line.len();
        if held.saturating_add(more) > self.max_event_bytes { Err(EventTooLarge) } else { Ok(()) }
    }

    /// The stream ended: a last line without a line end, and a last event without the blank
    /// line that should close it, still count.
    pub fn finish<F>(&mut self, mut on_event: F) -> ControlFlow<()>
    where
        F: FnMut(SseEvent<'_>) -> ControlFlow<()>,
    {
        self.pending_cr = false;
        if !self.partial_line.is_empty() {
            let flow = self.event.take_own_line(&self.partial_line, &mut on_event);
            self.partial_line.clear();
            if flow.is_break() {
                return flow;
            }
        }
        self.event.dispatch(None, &mut on_event)
    }
}

impl PendingEvent {
    /// Apply a line that no borrowed data may outlive (one assembled across reads).
    fn take_own_line<F>(&mut self, line: &[u8], on_event: &mut F) -> ControlFlow<()>
    where
        F: FnMut(SseEvent<'_>) -> ControlFlow<()>,
    {
        let mut borrowed_data = None;
        let flow = self.take_line(line, &mut borrowed_data, on_event);
        if let Some(data) = borrowed_data {
            self.data.extend_from_slice(data);
        }
        flow
    }

    /// Apply one line (without its line end) to the event; a blank line dispatches it. The
    /// event's first `data:` value is only noted in `borrowed_data` (while `data` stays empty);
    /// a second one copies it into `data` before joining.
    fn take_line<'line, F>(
        &mut self,
        line: &'line [u8],
        borrowed_data: &mut Option<&'line [u8]>,
        on_event: &mut F,
    ) -> ControlFlow<()>
    where
        F: FnMut(SseEvent<'_>) -> ControlFlow<()>,
    {
        if line.is_empty() {
            return self.dispatch(borrowed_data.take(), on_event);
        }
        if line[0] == b':' {
            return ControlFlow::Continue(());
        }
        let (field, value) = match line.iter().position(|&byte| byte == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &line[line.len()..]),
        };
        match field {
            b"data" if !self.has_data => {
                *borrowed_data = Some(value);
                self.has_data = true;
            }
            b"data" => {
                if let Some(first) = borrowed_data.take() {
                    self.data.extend_from_slice(first);
                }
                self.data.push(b'\n');
                self.data.extend_from_slice(value);
            }
            b"event" => {
                self.event_type.clear();
                self.event_type.extend_from_slice(value);
            }
            // `id`, `retry` and unknown fields mean nothing to a single request's stream.
            _ => {}
        }
        ControlFlow::Continue(())
    }

    /// Hand the assembled event (its data borrowed, or else in `data`) to `on_event` if it
    /// carried data, and start a new one.
    fn dispatch<F>(&mut self, borrowed_data: Option<&[u8]>, on_event: &mut F) -> ControlFlow<()>
    where
        F: FnMut(SseEvent<'_>) -> ControlFlow<()>,
    {
        let data = borrowed_data.unwrap_or(&self.data);
        let flow = if data.is_empty() {
            ControlFlow::Continue(())
        } else {
            on_event(SseEvent { event_type: &self.event_type, data })
        };
        self.event_type.clear();
        self.data.clear();
        self.has_data = false;
        flow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cap far above any event of these tests.
    const CAP: usize = 1 << 20;

    /// (event type, data) of each event, as owned strings.
    type Collected = Vec<(String, String)>;

    fn collect(parser: &mut SseParser, input: &[u8], events: &mut Collected) {
        let flow = parser.feed(input, |event| {
            events.push((String::from_utf8_lossy(event.event_type).into(), String::from_utf8_lossy(event.data).into()));
            ControlFlow::Continue(())
        });
        assert_eq!(flow, Ok(ControlFlow::Continue(())));
    }

    fn finish(parser: &mut SseParser, events: &mut Collected) {
        let flow = parser.finish(|event| {
            events.push((String::from_utf8_lossy(event.event_type).into(), String::from_utf8_lossy(event.data).into()));
            ControlFlow::Continue(())
        });
        assert!(flow.is_continue());
    }

    fn parse_in_reads(reads: &[&[u8]]) -> Collected {
        let mut parser = SseParser::new(CAP);
        let mut events = Vec::new();
        for read in reads {
            collect(&mut parser, read, &mut events);
        }
        finish(&mut parser, &mut events);
        events
    }

    fn data_only(events: &Collected) -> Vec<&str> {
        events.iter().map(|(_, data)| data.as_str()).collect()
    }

    const SAMPLE: &[u8] = b": keep-alive\n\nevent: message\nid: 7\nretry: 1000\ndata: {\"a\":1}\n\ndata: first\ndata: second\n\r\ndata:no-space\r\rdata: [DONE]\n\n";

    #[test]
    fn a_sample_stream_split_at_every_byte_boundary_gives_the_same_events() {
        let whole = parse_in_reads(&[SAMPLE]);
        assert_eq!(data_only(&whole), vec!["{\"a\":1}", "first\nsecond", "no-space", "[DONE]"]);
        assert_eq!(whole[0].0, "message");
        assert_eq!(whole[1].0, "", "the event type resets after each event");
        for split_at in 0..=SAMPLE.len() {
            let (head, tail) = SAMPLE.split_at(split_at);
            assert_eq!(parse_in_reads(&[head, tail]), whole, "split at byte {split_at}");
        }
        let one_byte_reads: Vec<&[u8]> = SAMPLE.chunks(1).collect();
        assert_eq!(parse_in_reads(&one_byte_reads), whole);
    }

    #[test]
    fn several_events_in_one_read_all_come_out_in_order() {
        let events = parse_in_reads(&[b"data: 1\n\ndata: 2\n\ndata: 3\n\n"]);
        assert_eq!(data_only(&events), vec!["1", "2", "3"]);
    }

    #[test]
    fn comments_and_field_only_lines_are_not_events() {
        let events = parse_in_reads(&[b": ping\n\n:another\nid: 3\n\nretry: 5\n\ndata: x\n\n"]);
        assert_eq!(data_only(&events), vec!["x"]);
    }

    #[test]
    fn crlf_and_cr_line_endings_work_even_when_split_between_reads() {
        assert_eq!(data_only(&parse_in_reads(&[b"data: a\r\n\r\ndata: b\r\n\r\n"])), vec!["a", "b"]);
        assert_eq!(data_only(&parse_in_reads(&[b"data: a\r\rdata: b\r\r"])), vec!["a", "b"]);
        assert_eq!(data_only(&parse_in_reads(&[b"data: a\r", b"\n\r", b"\ndata: b\r", b"\r"])), vec!["a", "b"]);
    }

    #[test]
    fn multi_line_data_is_joined_by_newlines_and_only_one_leading_space_is_dropped() {
        let events = parse_in_reads(&[b"data: one\ndata:  two\ndata\ndata: three\n\n"]);
        assert_eq!(data_only(&events), vec!["one\n two\n\nthree"]);
    }

    #[test]
    fn a_last_event_without_a_blank_line_or_line_end_still_counts_at_eof() {
        assert_eq!(data_only(&parse_in_reads(&[b"data: a\n\ndata: b\n"])), vec!["a", "b"]);
        assert_eq!(data_only(&parse_in_reads(&[b"data: a\n\ndata: [DONE]"])), vec!["a", "[DONE]"]);
        assert_eq!(data_only(&parse_in_reads(&[b"data: a\r"])), vec!["a"]);
    }

    #[test]
    fn break_from_the_callback_stops_the_read() {
        let mut parser = SseParser::new(CAP);
        let mut seen = Vec::new();
        let flow = parser.feed(b"data: 1\n\ndata: [DONE]\n\ndata: 3\n\n", |event| {
            seen.push(event.data.to_vec());
            if event.data == b"[DONE]" { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        });
        assert_eq!(flow, Ok(ControlFlow::Break(())));
        assert_eq!(seen, vec![b"1".to_vec(), b"[DONE]".to_vec()]);
    }

    #[test]
    fn buffers_are_reused_across_events() {
        let mut parser = SseParser::new(CAP);
        let mut events = Vec::new();
        collect(&mut parser, b"data: a fairly long first event to grow the buffer\n\n", &mut events);
        let capacity = parser.event.data.capacity();
        collect(&mut parser, b"data: short\n\n", &mut events);
        assert_eq!(parser.event.data.capacity(), capacity);
        assert_eq!(events.len(), 2);
    }

    #[test]
    fn a_data_line_whole_in_its_read_is_handed_over_without_a_copy() {
        let read = b"data: {\"a\":1}\n\ndata: spans\n";
        let mut parser = SseParser::new(CAP);
        let mut borrowed_from_the_read = Vec::new();
        let flow = parser.feed(read, |event| {
            borrowed_from_the_read.push(read.as_ptr_range().contains(&event.data.as_ptr()));
            ControlFlow::Continue(())
        });
        assert_eq!(flow, Ok(ControlFlow::Continue(())));
        assert_eq!(borrowed_from_the_read, vec![true]);
        let mut events = Vec::new();
        collect(&mut parser, b"\n", &mut events);
        assert_eq!(data_only(&events), vec!["spans"], "data kept across reads is copied");
    }

    #[test]
    fn an_event_past_the_cap_is_refused_whether_it_comes_in_one_line_many_lines_or_many_reads() {
        let mut parser = SseParser::new(12);
        let mut events = Vec::new();
        collect(&mut parser, b"data: 123\n\n", &mut events);
        assert_eq!(data_only(&events), vec!["123"], "an event within the cap passes");

        let refused = |reads: &[&[u8]]| {
            let mut parser = SseParser::new(12);
            reads.iter().map(|read| parser.feed(read, |_| ControlFlow::Continue(()))).find(Result::is_err)
        };
        assert_eq!(refused(&[b"data: 0123456789\n\n"]), Some(Err(EventTooLarge)), "one long line");
        assert_eq!(refused(&[b"data: 01234\ndata: 56789\n"]), Some(Err(EventTooLarge)), "several data lines");
        let many_reads: Vec<&[u8]> = vec![b"data: 0123"; 3];
        assert_eq!(refused(&many_reads), Some(Err(EventTooLarge)), "a line that never ends");
        assert_eq!(refused(&[b"data: 1\n\ndata: 2\n\ndata: 3\n\n"]), None, "small events never add up");
    }
}
