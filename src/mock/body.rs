//! Response bodies: a whole buffer, or a token stream that releases each SSE event when its
//! token is due, timed against absolute deadlines so delays never drift.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::time::Instant;

use super::chunks::ResponseWriter;
use super::fine_timer::FineWait;
use super::generation::Generation;
use super::request::Usage;

pub enum MockBody {
    Whole(Option<Bytes>),
    Tokens(Box<TokenStream>),
}

impl MockBody {
    pub fn whole(content: impl Into<Bytes>) -> Self {
        MockBody::Whole(Some(content.into()))
    }
}

/// A streamed generation. Each poll sends everything due by then in one frame: with zero
/// delays that is the whole stream at once; otherwise one token per frame, as it comes due.
pub struct TokenStream {
    /// `None` once the last event went out (which frees the running slot right away).
    generation: Option<Generation>,
    writer: ResponseWriter,
    include_usage: bool,
    opening_sent: bool,
    wait: FineWait,
    /// Each token's events when they are not the writer's text tokens (a tool call's).
    token_events: Option<Vec<String>>,
    /// Tokens a text chunk carries (a server's stream interval; the last may carry fewer).
    interval: u64,
    /// Every chat and completions chunk carries the usage so far (`continuous_usage_stats`).
    continuous_usage: bool,
    /// Tokens whose events went out.
    sent: u64,
}

impl TokenStream {
    pub fn new(generation: Generation, writer: ResponseWriter, include_usage: bool) -> Self {
        Self {
            generation: Some(generation),
            writer,
            include_usage,
            opening_sent: false,
            wait: FineWait::default(),
            token_events: None,
            interval: 1,
            continuous_usage: false,
            sent: 0,
        }
    }

    /// Text chunks of `interval` tokens each (at least one), each carrying the usage so far
    /// when `continuous_usage`.
    pub fn with_chunking(mut self, interval: u64, continuous_usage: bool) -> Self {
        self.interval = interval.max(1);
        self.continuous_usage = continuous_usage;
        self
    }

    /// The usage after `completed` tokens of `generation`.
    fn usage_after(generation: &Generation, completed: u64) -> Usage {
        let job = generation.job();
        Usage { prompt_tokens: job.prompt_tokens, completion_tokens: completed, prompt_cache: job.prompt_cache }
    }

    /// A stream that sends `token_events[i]` for token `i` (one entry per output token).
    pub fn with_token_events(mut self, token_events: Vec<String>) -> Self {
        self.token_events = Some(token_events);
        self
    }

    fn poll_next_events(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        loop {
            let Some(generation) = self.generation.as_mut() else {
                return Poll::Ready(None);
            };
            let now = Instant::now();
            let due_count = generation.tokens_due_by(now);
            let mut events = String::new();
            if !self.opening_sent {
                self.opening_sent = true;
                let usage = self.continuous_usage.then(|| Self::usage_after(generation, 0));
                self.writer.push_opening_chunk(&mut events, usage);
            }
            if due_count > 0 {
                let output_tokens = generation.job().output_tokens;
                events.reserve(due_count as usize * 160);
                generation.emit(due_count, now);
                let emitted = generation.emitted();
                if let Some(token_events) = &self.token_events {
                    for index in self.sent..emitted {
                        events.push_str(token_events.get(index as usize).map_or("", String::as_str));
                    }
                    self.sent = emitted;
                }
                while self.sent < emitted {
                    let end = (self.sent + self.interval).min(output_tokens);
                    if end > emitted {
                        break;
                    }
                    let usage = self.continuous_usage.then(|| Self::usage_after(generation, end));
                    self.writer.push_tokens(&mut events, self.sent, end, output_tokens, usage);
                    self.sent = end;
                }
                if generation.is_complete() {
                    if self.include_usage {
                        self.writer.push_usage_chunk(&mut events, Self::usage_after(generation, output_tokens));
                    }
                    self.writer.push_done(&mut events);
                    self.generation = None;
                }
            }
            if !events.is_empty() {
                return Poll::Ready(Some(Bytes::from(events)));
            }
            let Some(generation) = self.generation.as_ref() else {
                return Poll::Ready(None);
            };
            // The token whose time sends the next frame: the next chunk's last (with one token a
            // chunk, the next token; the tokens before it in a chunk send nothing).
            let next_index = (self.sent + self.interval).min(generation.job().output_tokens).saturating_sub(1);
            let next_due = generation.due(next_index);
            // The first two frames on time (what TTFT and TTST read), the later ones on tokio's
            // millisecond ticks: waking for each token apart costs a wake-up of a thread and a
            // task per token (`fine_timer.rs`), where a tick wakes once for every stream.
            let waited = if self.sent < 2 * self.interval {
                self.wait.poll_until(next_due, cx)
            } else {
                self.wait.poll_on_tick(next_due, cx)
            };
            if waited.is_pending() {
                return Poll::Pending;
            }
        }
    }
}

impl Body for MockBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let next = match self.get_mut() {
            MockBody::Whole(content) => Poll::Ready(content.take()),
            MockBody::Tokens(stream) => stream.poll_next_events(cx),
        };
        next.map(|data| data.map(|bytes| Ok(Frame::data(bytes))))
    }

    fn is_end_stream(&self) -> bool {
        match self {
            MockBody::Whole(content) => content.is_none(),
            MockBody::Tokens(stream) => stream.generation.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            MockBody::Whole(content) => SizeHint::with_exact(content.as_ref().map_or(0, |bytes| bytes.len() as u64)),
            MockBody::Tokens(_) => SizeHint::default(),
        }
    }
}
