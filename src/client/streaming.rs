//! Reading a `text/event-stream` response into a record: SSE events become text, chunk
//! arrival times, usage and finish_reason; `[DONE]`, error events and early ends are judged.

use std::ops::ControlFlow;
use std::time::Duration;

use super::traced_body::TracedBody;
use http_body_util::BodyExt;

use crate::clock::RunClock;
use crate::plan::ResponseLimits;
use crate::record::RequestRecord;

use super::FirstToken;
use super::failure;
use super::fast_payload::SkippedPrefix;
use super::response::{self, PayloadFormat};
use super::sse::{EventTooLarge, SseEvent, SseParser};

/// How long the rest of a body is drained after `[DONE]`: a server that then never ends it
/// loses the connection instead of holding the request to its timeout.
const DRAIN_AFTER_DONE: Duration = Duration::from_secs(1);

/// Read the whole stream into `record`. `completed` turns true once `[DONE]` arrives, after
/// which the rest of the body is only drained (so the connection can go back to the pool),
/// for at most `DRAIN_AFTER_DONE`; the response then ends at `[DONE]`.
pub(crate) async fn read_event_stream(
    mut body: TracedBody<'_>,
    format: &PayloadFormat,
    limits: ResponseLimits,
    clock: &RunClock,
    record: &mut RequestRecord,
    completed: &mut bool,
    first_token: &mut Option<FirstToken>,
) {
    let mut stream = EventStream::new(format.clone(), limits);
    loop {
        let frame = body.frame().await;
        let frame_ns = clock.now_ns();
        record.end_ns = frame_ns;
        match frame {
            None => return stream.finish(None, record),
            Some(Err(error)) => return stream.finish(Some(failure::root_cause(&error)), record),
            Some(Ok(frame)) => {
                let Some(bytes) = frame.data_ref() else { continue };
                let flow = stream.feed(bytes, frame_ns, record);
                if !record.chunks.is_empty()
                    && let Some(signal) = first_token.take()
                {
                    let _ = signal.send(());
                }
                if flow.is_break() {
                    break;
                }
            }
        }
    }
    if stream.is_done() {
        *completed = true;
        let drained = tokio::time::timeout(DRAIN_AFTER_DONE, async { while let Some(Ok(_)) = body.frame().await {} });
        if drained.await.is_ok() {
            record.end_ns = clock.now_ns();
        }
    }
}

/// The parsing state of one response stream, independent of where its bytes come from.
pub(crate) struct EventStream {
    parser: SseParser,
    events: EventSink,
    /// Body bytes fed so far, and the most the stream may have.
    bytes_fed: usize,
    max_response_bytes: usize,
}

/// Applies parsed events to the record and remembers how the stream is going.
struct EventSink {
    format: PayloadFormat,
    /// Data events received (not counting `[DONE]`).
    received: u64,
    /// `[DONE]` arrived.
    done: bool,
    /// What the stream's chat or completions chunks share, read once.
    skipped: SkippedPrefix,
}

impl EventStream {
    pub fn new(format: impl Into<PayloadFormat>, limits: ResponseLimits) -> Self {
        let format = format.into();
        Self {
            parser: SseParser::new(limits.max_event_bytes),
            events: EventSink { format, received: 0, done: false, skipped: SkippedPrefix::default() },
            bytes_fed: 0,
            max_response_bytes: limits.max_response_bytes,
        }
    }

    /// One body frame that arrived at `frame_ns` (the time every event it completes gets).
    /// `Break` once the stream is over: `[DONE]`, or an error now in `record.error` (among
    /// them an event or a body past its cap).
    pub fn feed(&mut self, bytes: &[u8], frame_ns: u64, record: &mut RequestRecord) -> ControlFlow<()> {
        self.bytes_fed = self.bytes_fed.saturating_add(bytes.len());
        if self.bytes_fed > self.max_response_bytes {
            record.error = Some(failure::response_too_large(self.max_response_bytes));
            return ControlFlow::Break(());
        }
        match self.parser.feed(bytes, |event| self.events.take(event, frame_ns, record)) {
            Ok(flow) => flow,
            Err(EventTooLarge) => {
                record.error = Some(failure::event_too_large(self.parser.max_event_bytes()));
                ControlFlow::Break(())
            }
        }
    }

    /// The body ended, cleanly or (`broken_by`) with an error, before `[DONE]` or an error
    /// (a clean end completes the stream of a kind that has no end marker).
    pub fn finish(&mut self, broken_by: Option<String>, record: &mut RequestRecord) {
        let end_ns = record.end_ns;
        if self.parser.finish(|event| self.events.take(event, end_ns, record)).is_break()
            || record.finish_reason.is_some()
            || (broken_by.is_none() && self.events.format.ends_with_the_body())
        {
            return;
        }
        let mut message = format!("stream ended before [DONE] after {} events", self.events.received);
        if let Some(cause) = broken_by {
            message.push_str(": ");
            message.push_str(&cause);
        }
        record.error = Some(failure::stream_error(message));
    }

    pub fn is_done(&self) -> bool {
        self.events.done
    }
}

impl EventSink {
    fn take(&mut self, event: SseEvent<'_>, arrival_ns: u64, record: &mut RequestRecord) -> ControlFlow<()> {
        if let Some(raw) = &mut record.raw {
            raw.push(arrival_ns, event.event_type, event.data);
        }
        if event.event_type == b"error" {
            record.error = Some(failure::stream_error(failure::message_from_body(event.data)));
            return ControlFlow::Break(());
        }
        if event.data.trim_ascii() == b"[DONE]" {
            self.done = true;
            return ControlFlow::Break(());
        }
        let fields = match response::parse_stream_event(&self.format, event.data, &mut self.skipped) {
            Ok(fields) => fields,
            Err(_) => {
                record.error = Some(failure::invalid_response("stream event", event.data));
                return ControlFlow::Break(());
            }
        };
        self.received += 1;
        if let Some(error) = &fields.error {
            record.error = Some(failure::stream_error(failure::error_message(error)));
            return ControlFlow::Break(());
        }
        fields.record_into(record, arrival_ns);
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::EndpointKind;
    use crate::record::{RequestOrigin, ResponseChunk, Usage};

    fn record() -> RequestRecord {
        RequestRecord::new(RequestOrigin::first_profiling(), "req-1".into(), 0, 10, Some(8))
    }

    fn delta(content: &str) -> String {
        format!("data: {{\"choices\":[{{\"delta\":{{\"content\":{content:?}}}}}]}}\n\n")
    }

    #[test]
    fn events_completed_by_one_frame_share_its_time_and_empty_events_push_nothing() {
        let mut record = record();
        let mut stream = EventStream::new(EndpointKind::Chat, ResponseLimits::default());
        let role = "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n";
        let first_frame = format!("{role}{}{}", delta("A"), &delta("B")[..10]);
        assert!(stream.feed(first_frame.as_bytes(), 100, &mut record).is_continue());
        let second_frame = format!("{}{}", &delta("B")[10..], delta("C"));
        assert!(stream.feed(second_frame.as_bytes(), 200, &mut record).is_continue());
        let last_frame = "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"completion_tokens\":3}}\n\ndata: [DONE]\n\n";
        assert!(stream.feed(last_frame.as_bytes(), 300, &mut record).is_break());
        assert!(stream.is_done());
        assert_eq!(record.content, "ABC");
        let times: Vec<u64> = record.chunks.iter().map(|chunk| chunk.ns).collect();
        assert_eq!(times, vec![100, 200, 200]);
        assert_eq!(record.finish_reason.as_deref(), Some("stop"));
        assert_eq!(record.usage, Some(Usage { completion_tokens: Some(3), ..Default::default() }));
        assert!(record.error.is_none());
    }

    #[test]
    fn raw_events_are_kept_as_they_arrived_only_when_asked() {
        let frame = format!("{}event: ping\ndata: {{}}\n\ndata: [DONE]\n\n", delta("A"));
        let mut record = record();
        record.raw = Some(Box::default());
        let mut stream = EventStream::new(EndpointKind::Chat, ResponseLimits::default());
        assert!(stream.feed(frame.as_bytes(), 7, &mut record).is_break());
        let raw = record.raw.unwrap();
        let kept: Vec<(u64, Option<&str>, &str)> =
            raw.responses.iter().map(|r| (r.ns, r.event_type.as_deref(), r.data.as_str())).collect();
        let first = r#"{"choices":[{"delta":{"content":"A"}}]}"#;
        assert_eq!(kept, [(7, None, first), (7, Some("ping"), "{}"), (7, None, "[DONE]")]);

        let mut record = self::record();
        let mut stream = EventStream::new(EndpointKind::Chat, ResponseLimits::default());
        assert!(stream.feed(frame.as_bytes(), 7, &mut record).is_break());
        assert!(record.raw.is_none());
    }

    #[test]
    fn reasoning_chunks_are_marked() {
        let mut record = record();
        let mut stream = EventStream::new(EndpointKind::Chat, ResponseLimits::default());
        let frame = b"data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"hm\"}}]}\n\n";
        assert!(stream.feed(frame, 5, &mut record).is_continue());
        assert_eq!(record.chunks, vec![ResponseChunk { ns: 5, has_content: false, has_reasoning: true }]);
        assert_eq!(record.reasoning, "hm");
    }

    #[test]
    fn the_first_chunk_with_output_and_usage_gives_the_tokens_delivered_by_then() {
        let usage = |completion: u64| format!(r#""usage":{{"prompt_tokens":4,"completion_tokens":{completion}}}"#);
        let event = |content: &str, usage: &str| {
            format!("data: {{\"choices\":[{{\"delta\":{{\"content\":{content:?}}}}}],{usage}}}\n\n")
        };
        let continuous = [event("", &usage(0)), event("abc", &usage(3)), event("d", &usage(4))].concat();
        let mut record = record();
        let mut stream = EventStream::new(EndpointKind::Chat, ResponseLimits::default());
        assert!(stream.feed(continuous.as_bytes(), 1, &mut record).is_continue());
        assert_eq!(record.first_chunk_usage_tokens, Some(3), "the opening chunk has no output");
        assert_eq!(record.usage.and_then(|usage| usage.completion_tokens), Some(4));

        let final_only = format!("{}{}data: {{\"choices\":[],{}}}\n\n", delta("a"), delta("b"), usage(2));
        let mut record = self::record();
        let mut stream = EventStream::new(EndpointKind::Chat, ResponseLimits::default());
        assert!(stream.feed(final_only.as_bytes(), 1, &mut record).is_continue());
        assert_eq!(record.first_chunk_usage_tokens, None, "usage only at the end says nothing of the first chunk");
    }

    #[test]
    fn the_last_usage_that_is_not_null_is_kept() {
        let mut record = record();
        let mut stream = EventStream::new(EndpointKind::Completions, ResponseLimits::default());
        let frame = b"data: {\"choices\":[{\"text\":\"a\"}],\"usage\":{\"total_tokens\":1}}\n\ndata: {\"choices\":[{\"text\":\"b\"}],\"usage\":null}\n\n";
        assert!(stream.feed(frame, 1, &mut record).is_continue());
        assert_eq!(record.usage.and_then(|usage| usage.total_tokens), Some(1));
    }

    #[test]
    fn an_error_payload_or_error_event_is_a_stream_error() {
        let mut record = record();
        let mut stream = EventStream::new(EndpointKind::Chat, ResponseLimits::default());
        assert!(stream.feed(b"data: {\"error\":{\"message\":\"out of memory\"}}\n\n", 1, &mut record).is_break());
        let error = record.error.unwrap();
        assert_eq!((error.kind.as_str(), error.message.as_str()), ("stream_error", "out of memory"));

        let mut record = self::record();
        let mut stream = EventStream::new(EndpointKind::Chat, ResponseLimits::default());
        assert!(stream.feed(b"event: error\ndata: upstream went away\n\n", 1, &mut record).is_break());
        assert_eq!(record.error.unwrap().message, "upstream went away");
    }

    #[test]
    fn unparseable_json_is_an_invalid_response_that_quotes_it() {
        let mut record = record();
        let mut stream = EventStream::new(EndpointKind::Chat, ResponseLimits::default());
        assert!(stream.feed(b"data: {not json\n\n", 1, &mut record).is_break());
        let error = record.error.unwrap();
        assert_eq!(error.kind, "invalid_response");
        assert!(error.message.contains("{not json"), "{}", error.message);
    }

    #[test]
    fn an_end_before_done_is_an_error_unless_a_finish_reason_came() {
        let mut record = record();
        let mut stream = EventStream::new(EndpointKind::Chat, ResponseLimits::default());
        assert!(stream.feed(delta("A").as_bytes(), 1, &mut record).is_continue());
        stream.finish(Some("connection reset by peer".into()), &mut record);
        let error = record.error.clone().unwrap();
        assert_eq!(error.kind, "stream_error");
        assert_eq!(error.message, "stream ended before [DONE] after 1 events: connection reset by peer");
        assert_eq!(record.content, "A");

        let mut record = self::record();
        let mut stream = EventStream::new(EndpointKind::Completions, ResponseLimits::default());
        assert!(
            stream
                .feed(b"data: {\"choices\":[{\"text\":\"x\",\"finish_reason\":\"length\"}]}", 1, &mut record)
                .is_continue()
        );
        stream.finish(None, &mut record);
        assert!(record.error.is_none(), "{:?}", record.error);
        assert_eq!(record.content, "x", "the last event counts even without a blank line");
    }

    #[test]
    fn an_event_or_a_body_past_its_cap_is_a_response_too_large_error() {
        let small_events = ResponseLimits { max_event_bytes: 64, max_response_bytes: 1 << 20 };
        let mut record = record();
        let mut stream = EventStream::new(EndpointKind::Chat, small_events);
        assert!(stream.feed(delta("A").as_bytes(), 1, &mut record).is_continue());
        assert!(stream.feed(delta(&"x".repeat(100)).as_bytes(), 2, &mut record).is_break());
        let error = record.error.unwrap();
        assert_eq!(error.kind, "response_too_large");
        assert!(error.message.contains("max_event_bytes (64 bytes)"), "{}", error.message);

        let small_body = ResponseLimits { max_event_bytes: 1 << 20, max_response_bytes: 100 };
        let mut record = self::record();
        let mut stream = EventStream::new(EndpointKind::Chat, small_body);
        assert!(stream.feed(delta("A").as_bytes(), 1, &mut record).is_continue());
        assert!(stream.feed(delta("B").as_bytes(), 2, &mut record).is_continue());
        assert!(stream.feed(delta("C").as_bytes(), 3, &mut record).is_break());
        let error = record.error.unwrap();
        assert!(error.message.contains("max_response_bytes (100 bytes)"), "{}", error.message);
        assert_eq!(record.content, "AB", "what arrived within the cap is kept");
    }
}
