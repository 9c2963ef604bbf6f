//! Dataset entries as prepared requests (`PreparedRequest`, what the load phases send): the
//! endpoint kind's body for the prompt (naming the model chosen for it) with its system
//! prompt, then what an entry brings of its own: a rankings entry's query and passages, and its
//! images as `image_url` parts and its audio as `input_audio` parts (chat only). Keeps how many
//! images each request carries, for the metrics.

use std::sync::Arc;

use anyhow::{Context, Result, bail};
use bytes::Bytes;

use super::{
    DatasetEntry, FileTurn, PresetMessages, SystemPrompt, image_uuids, input_texts::input_texts,
    model_selection::ModelChoice, own_body::OwnBody, tokenizer::Tokenizer, trace_session::TraceSession,
};
use crate::plan::segment::ExecutionSegment;
use crate::plan::{Dataset, Endpoint, EndpointKind};
use crate::request_bodies::{
    AudioUpload, InputAudio, media_request_body, rankings_request_body, request_body, responses_with_openings,
    with_media_parts, with_messages_system, with_system_prompt, with_user_context,
};

/// A request body built before the run, so the hot path only clones a `Bytes`.
#[derive(Debug, Clone)]
pub struct PreparedRequest {
    pub body: Bytes,
    pub input_tokens: u64,
    /// The output length the request asks for (none for kinds that ask none).
    pub max_tokens: Option<u64>,
    /// The system prompt the body opens with (a conversation keeps it first).
    pub system_prompt: Option<Arc<SystemPrompt>>,
    /// The conversation's user context, after the system prompt (kept there in every turn).
    pub user_context: Option<Arc<SystemPrompt>>,
    /// Its place in a session of a multi-turn file (a `users` phase replays those sessions).
    pub turn: Option<FileTurn>,
    /// Seconds of the first audio clip it sends (RTFx reads it).
    pub audio_seconds: Option<f64>,
    /// Its conversation in a recorded agentic trace (agentic replay reads the tree).
    pub trace: Option<Arc<TraceSession>>,
    /// Sent as it is in every turn: the body carries its conversation's history itself.
    pub verbatim: bool,
    /// Headers of its own, sent with it (a recorded call's session id).
    pub headers: Option<Arc<http::HeaderMap>>,
    /// Its conversation's name in `inputs.json` and in its records' `conversation_id`: the id
    /// the file gives it, else `session_<n>` (`name_conversations`).
    pub conversation: Option<Arc<str>>,
    /// A chat or Messages turn: the earlier answers go back as content parts (the endpoint's
    /// `content_parts`).
    pub answers_as_parts: bool,
    /// What joining its texts by spaces, as AIPerf counts a request's input, changes in the
    /// counts a later turn builds on.
    pub joins: Joins,
}

/// The tokens a prepared body's texts gain where each follows other text and a space
/// (`Tokenizer::join_delta`), for a later turn, which sends the body after its history.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Joins {
    /// The user context's, after the system prompt (0 unless the body sends both apart).
    pub opening: i64,
    /// The body's first text's: what it gains when a history comes before it.
    pub lead: i64,
}

impl PreparedRequest {
    /// The request that sends `entry` to `endpoint` (a system prompt and a user context as
    /// the kind takes them; a raw body as given).
    pub fn of(endpoint: &Endpoint, entry: DatasetEntry) -> Self {
        let body = match &entry.own_body {
            Some(own) => own.body(endpoint, &entry.prompt, entry.max_tokens),
            None => Bytes::from(kind_body(endpoint, &entry)),
        };
        Self {
            verbatim: entry.own_body.as_ref().is_some_and(OwnBody::is_whole_conversation),
            headers: entry.own_body.as_ref().and_then(OwnBody::headers).cloned().map(Arc::new),
            body,
            input_tokens: entry.input_tokens,
            // A kind whose requests ask no length is not held to one.
            max_tokens: entry.max_tokens.filter(|_| endpoint.kind.asks_output_length()),
            system_prompt: entry.system_prompt,
            user_context: entry.user_context,
            turn: entry.turn,
            audio_seconds: None,
            trace: entry.trace,
            conversation: entry.conversation,
            answers_as_parts: matches!(endpoint.kind, EndpointKind::Chat | EndpointKind::Messages)
                && endpoint.request.content_parts,
            joins: Joins::default(),
        }
    }
}

/// The endpoint kind's body for `entry`'s prompt, with its system prompt and user context.
fn kind_body(endpoint: &Endpoint, entry: &DatasetEntry) -> Vec<u8> {
    let body = request_body(endpoint, &entry.prompt, entry.max_tokens);
    let system = entry.system_prompt.as_ref().map(|system| system.text.as_str());
    let context = entry.user_context.as_ref().map(|context| context.text.as_str());
    match endpoint.kind {
        EndpointKind::Raw => body,
        EndpointKind::Responses => responses_with_openings(body, system, context),
        kind => {
            let body = match context {
                Some(context) => with_user_context(body, context),
                None => body,
            };
            match (system, kind) {
                (None, _) => body,
                (Some(system), EndpointKind::Messages) => with_messages_system(body, system),
                (Some(system), _) => with_system_prompt(body, system),
            }
        }
    }
}

/// The requests grouped into conversations: a multi-turn file's sessions, every other
/// request a conversation of its own.
pub fn conversations(requests: &[PreparedRequest]) -> impl Iterator<Item = &[PreparedRequest]> {
    requests.chunk_by(continues_conversation)
}

/// Whether `next` is a later turn of the conversation of the request before it.
fn continues_conversation(_: &PreparedRequest, next: &PreparedRequest) -> bool {
    next.turn.is_some_and(|turn| turn.index > 0)
}

/// The requests of a dataset, in dataset order.
pub struct Prepared {
    pub requests: Vec<PreparedRequest>,
    /// Images sent with each request, by its index in `requests`.
    pub images: Vec<u32>,
}

impl Prepared {
    /// Each request's (hit, all) hash blocks under its trace's theoretical prefix cache, by
    /// index ((0, 0) where its trace has none); empty when no request has any.
    pub fn theoretical_prefix_blocks(&self) -> std::sync::Arc<[(u32, u32)]> {
        let of = |request: &PreparedRequest| {
            let (trace, turn) = (request.trace.as_ref()?, request.turn?);
            trace.theoretical_prefix_blocks.get(turn.index as usize).copied()
        };
        if !self.requests.iter().any(|request| of(request).is_some()) {
            return std::sync::Arc::from([]);
        }
        self.requests.iter().map(|request| of(request).unwrap_or((0, 0))).collect()
    }

    /// The part of the dataset that execution segment `segment` sends: conversation `k` (a
    /// multi-turn file's session, or any other single request) when `segment.keeps(k)`, with
    /// each kept request's index in the whole dataset. A dataset of fewer conversations than
    /// segments is kept whole by every segment.
    pub fn segment_share(self, segment: ExecutionSegment) -> (Self, Vec<usize>) {
        let sizes: Vec<usize> = conversations(&self.requests).map(<[_]>::len).collect();
        if (sizes.len() as u64) < u64::from(segment.count) {
            let whole_index = (0..self.requests.len()).collect();
            return (self, whole_index);
        }
        let conversation_of =
            sizes.iter().enumerate().flat_map(|(conversation, &turns)| std::iter::repeat_n(conversation as u64, turns));
        let mut share = Prepared { requests: Vec::new(), images: Vec::new() };
        let mut whole_index = Vec::new();
        let kept = self.requests.into_iter().zip(self.images).zip(conversation_of).enumerate();
        for (index, ((request, images), conversation)) in kept {
            if segment.keeps(conversation) {
                share.requests.push(request);
                share.images.push(images);
                whole_index.push(index);
            }
        }
        (share, whole_index)
    }
}

/// The request of every entry of `dataset` for `endpoint`.
pub fn prepare(
    dataset: &Dataset,
    endpoint: &Endpoint,
    tokenizer: &Tokenizer,
    mut entries: Vec<DatasetEntry>,
) -> Result<Prepared> {
    crate::accuracy::fit_to_endpoint(dataset, endpoint.kind, tokenizer, &mut entries);
    check_kind(dataset, endpoint, &entries)?;
    if endpoint.request.uuid_and_strip {
        image_uuids::check_strippable(dataset)?;
        image_uuids::strip_repeated(&mut entries);
    }
    let mut prepared =
        Prepared { requests: Vec::with_capacity(entries.len()), images: Vec::with_capacity(entries.len()) };
    let mut models = ModelChoice::new(endpoint, dataset);
    for (index, mut entry) in entries.into_iter().enumerate() {
        let ranked = entry.trace.as_ref().zip(entry.turn).and_then(|(trace, turn)| trace.model_rank(turn.index));
        let endpoint = match ranked {
            Some(rank) => models.of_rank(rank),
            None => models.of_request(entry.file_place),
        };
        if entry.own_body.is_some() {
            prepared.images.push(0);
            prepared.requests.push(PreparedRequest::of(endpoint, entry));
            continue;
        }
        let images = std::mem::take(&mut entry.images);
        let uuids = std::mem::take(&mut entry.image_uuids);
        let ranking = entry.ranking.take();
        let batch = std::mem::take(&mut entry.batch);
        let audio = std::mem::take(&mut entry.audio);
        let preset = entry.messages.take();
        // A body of one text outside a conversation has nothing to join.
        let openings = entry.system_prompt.is_some() || entry.user_context.is_some();
        let joins_texts = openings || entry.turn.is_some() || ranking.is_some() || !batch.is_empty();
        // A trace turn's messages were counted joined already, as AIPerf counts a body; the
        // system prompt and user context before them, and its first message, each alone.
        let preset_given = preset.is_some();
        let counted_alone = if preset_given {
            usize::from(entry.system_prompt.is_some()) + usize::from(entry.user_context.is_some()) + 1
        } else {
            usize::MAX
        };
        let videos = std::mem::take(&mut entry.videos);
        let media_body = media_request_body(
            endpoint,
            &entry.prompt,
            &images,
            audio.first().map(|clip| AudioUpload {
                bytes: &clip.bytes,
                file_name: clip.file_name(),
                media_type: clip.media_type(),
            }),
        )
        .with_context(|| format!("request {index} of the dataset"))?;
        let mut request = PreparedRequest::of(endpoint, entry);
        request.audio_seconds = audio.first().map(|clip| clip.seconds);
        if let Some(preset) = preset {
            request.body = Bytes::from(with_preset_messages(&request.body, *preset)?);
        }
        if let Some(ranking) = ranking {
            request.body = Bytes::from(rankings_request_body(endpoint, &ranking.query, &ranking.passages));
        }
        if !batch.is_empty() {
            request.body = Bytes::from(with_batch(&request.body, batch)?);
        }
        if let Some(body) = media_body {
            request.body = Bytes::from(body);
        } else if !images.is_empty() || !audio.is_empty() || !videos.is_empty() {
            let audio: Vec<InputAudio<'_>> =
                audio.iter().map(|clip| InputAudio { bytes: &clip.bytes, format: clip.format_name() }).collect();
            let Some(body) = with_media_parts(&request.body, &images, &audio, &videos)
                .with_context(|| format!("adding images, audio or videos to request {index} of the dataset"))?
            else {
                bail!(
                    "images, audio and videos need a chat endpoint (kind: \"chat\"); request {index} has no `messages`"
                );
            };
            request.body = Bytes::from(body);
        }
        if !uuids.is_empty() && endpoint.kind == EndpointKind::Chat {
            request.body = Bytes::from(
                image_uuids::with_uuids(&request.body, &uuids)
                    .with_context(|| format!("adding image ids to request {index} of the dataset"))?,
            );
        }
        if joins_texts || preset_given {
            count_joins(tokenizer, &mut request, counted_alone);
        }
        prepared.images.push(images.len() as u32);
        prepared.requests.push(request);
    }
    name_conversations(&mut prepared.requests);
    Ok(prepared)
}

/// The `Joins` a later turn of `request` builds on, and its input tokens as AIPerf counts them,
/// its body's texts joined by spaces: the entry counted its first `counted_alone` texts each
/// alone (`input_tokens`: the prompt's, the system prompt's, each passage's, ...; the rest were
/// counted joined), so each of them after the first adds what the join changes in it.
fn count_joins(tokenizer: &Tokenizer, request: &mut PreparedRequest, counted_alone: usize) {
    let Ok(body) = serde_json::from_slice::<serde_json::Value>(&request.body) else { return };
    let texts = input_texts(&body);
    let Some(first) = texts.first() else { return };
    let alone = &texts[1..counted_alone.clamp(1, texts.len())];
    let later: i64 = alone.iter().map(|text| tokenizer.join_delta(text)).sum();
    request.input_tokens = request.input_tokens.saturating_add_signed(later);
    let opening = match (&request.system_prompt, &request.user_context) {
        (Some(_), Some(context)) if texts.len() > 1 => tokenizer.join_delta(&context.text),
        _ => 0,
    };
    request.joins = Joins { opening, lead: tokenizer.join_delta(first) };
}

/// Every request named by its conversation, as AIPerf names a dataset's conversations: the id
/// the file gives it, else `session_<n>` for the n-th conversation of the dataset (0-based,
/// six digits).
fn name_conversations(requests: &mut [PreparedRequest]) {
    for (index, turns) in requests.chunk_by_mut(continues_conversation).enumerate() {
        let name = turns[0].conversation.clone().unwrap_or_else(|| Arc::from(format!("session_{index:06}")));
        turns.iter_mut().for_each(|turn| turn.conversation = Some(name.clone()));
    }
}

/// A chat body whose prompt message is replaced by a trace turn's own messages (after the
/// system prompt and user context, if any), with its tools and further fields; a body without
/// messages takes the further fields alone when no messages are given.
fn with_preset_messages(body: &[u8], preset: PresetMessages) -> Result<Vec<u8>> {
    let mut body: serde_json::Value = serde_json::from_slice(body).context("a request body")?;
    match body.get_mut("messages").and_then(serde_json::Value::as_array_mut) {
        Some(messages) => {
            messages.pop();
            messages.extend(preset.messages);
        }
        None if preset.messages.is_empty() => {}
        None => bail!("turns of chat messages need a chat body with `messages`"),
    }
    if let Some(tools) = preset.tools {
        body["tools"] = serde_json::Value::Array(tools);
    }
    if let Some(fields) = body.as_object_mut() {
        fields.extend(preset.extra);
    }
    Ok(body.to_string().into_bytes())
}

/// An embeddings body with the entry's further texts after its prompt in `input`.
fn with_batch(body: &[u8], batch: Vec<String>) -> Result<Vec<u8>> {
    let mut body: serde_json::Value = serde_json::from_slice(body).context("an embeddings body")?;
    let Some(inputs) = body.get_mut("input").and_then(serde_json::Value::as_array_mut) else {
        bail!("a batch of texts needs an embeddings body with an `input` list");
    };
    inputs.extend(batch.into_iter().map(serde_json::Value::from));
    Ok(body.to_string().into_bytes())
}

/// Images go to chat endpoints only, a file's queries and passages to rankings endpoints only,
/// batches of texts to embeddings endpoints only.
fn check_kind(dataset: &Dataset, endpoint: &Endpoint, entries: &[DatasetEntry]) -> Result<()> {
    let kind = endpoint.kind;
    if kind != EndpointKind::Embeddings && entries.iter().any(|entry| !entry.batch.is_empty()) {
        bail!(
            "synthetic `batch_size` above 1 needs an embeddings endpoint (kind: \"embeddings\"), not \"{}\"",
            kind.as_str()
        );
    }
    let Dataset::File(file) = dataset else { return Ok(()) };
    if kind != EndpointKind::Chat
        && entries.iter().any(|entry| entry.own_body.as_ref().is_some_and(OwnBody::sets_messages))
    {
        bail!(
            "dataset file {}: captured chat requests (\"messages\") need a chat endpoint (kind: \"chat\"), not \"{}\"",
            file.path,
            kind.as_str()
        );
    }
    if kind != EndpointKind::Chat
        && entries.iter().any(|entry| entry.messages.as_ref().is_some_and(|preset| !preset.messages.is_empty()))
    {
        bail!(
            "dataset file {}: turns of chat messages ({}) need a chat endpoint (kind: \"chat\"), not \"{}\"",
            file.path,
            file.format.name(),
            kind.as_str()
        );
    }
    if !kind.takes_images() && entries.iter().any(|entry| !entry.images.is_empty()) {
        bail!(
            "dataset file {}: entries with \"image\" or \"images\" need a chat endpoint (kind: \"chat\"), not \"{}\" (image_edit and image_retrieval take them too)",
            file.path,
            kind.as_str()
        );
    }
    let rankings = matches!(kind, EndpointKind::CohereRankings | EndpointKind::TeiRankings | EndpointKind::NimRankings);
    if !rankings && entries.iter().any(|entry| entry.ranking.is_some()) {
        bail!(
            "dataset file {}: entries with \"query\" and \"passages\" need a rankings endpoint (kind: \"rankings\"), not \"{}\"",
            file.path,
            kind.as_str()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::dataset::Ranking;
    use crate::dataset::tokenizer::Tokenizer;
    use crate::plan::{FileDataset, FileFormat};
    use crate::request_bodies::test_endpoint;

    fn file_dataset() -> Dataset {
        Dataset::File(FileDataset::of("data/mixed.jsonl", FileFormat::SingleTurn))
    }

    fn entry(prompt: &str, images: &[&str], ranking: Option<Ranking>) -> DatasetEntry {
        let mut entry = DatasetEntry::counted(&Tokenizer::shared_builtin(), prompt.into(), Some(3));
        entry.images = images.iter().map(|url| url.to_string()).collect();
        entry.ranking = ranking;
        entry
    }

    fn body(request: &PreparedRequest) -> Value {
        serde_json::from_slice(&request.body).unwrap()
    }

    #[test]
    fn chat_requests_carry_their_entry_s_images_and_count_them() {
        let entries =
            vec![entry("look", &["https://x/a.png", "data:image/gif;base64,R0"], None), entry("plain", &[], None)];
        let prepared =
            prepare(&file_dataset(), &test_endpoint(EndpointKind::Chat), &Tokenizer::builtin(), entries).unwrap();
        assert_eq!(prepared.images, [2, 0]);
        assert_eq!(
            body(&prepared.requests[0])["messages"][0]["content"],
            json!([{"type": "text", "text": "look"},
                   {"type": "image_url", "image_url": {"url": "https://x/a.png"}},
                   {"type": "image_url", "image_url": {"url": "data:image/gif;base64,R0"}}])
        );
        assert_eq!(body(&prepared.requests[1])["messages"][0]["content"], "plain");
    }

    #[test]
    fn only_kinds_that_ask_an_output_length_are_held_to_one() {
        for (kind, asked) in [
            (EndpointKind::Chat, Some(3)),
            (EndpointKind::Completions, Some(3)),
            (EndpointKind::SolidoRag, None),
            (EndpointKind::Embeddings, None),
            (EndpointKind::ImageGeneration, None),
        ] {
            let prepared =
                prepare(&file_dataset(), &test_endpoint(kind), &Tokenizer::builtin(), vec![entry("a b c", &[], None)])
                    .unwrap();
            assert_eq!(prepared.requests[0].max_tokens, asked, "{kind:?}");
        }
    }

    #[test]
    fn rankings_entries_send_their_own_passages_and_others_are_cut() {
        let ranking = Ranking { query: "q".into(), passages: vec!["p1".into(), "p2".into()] };
        let entries = vec![entry("q p1 p2", &[], Some(ranking)), entry("a b c d e", &[], None)];
        let prepared =
            prepare(&file_dataset(), &test_endpoint(EndpointKind::CohereRankings), &Tokenizer::builtin(), entries)
                .unwrap();
        assert_eq!(body(&prepared.requests[0]), json!({"model": "m", "query": "q", "documents": ["p1", "p2"]}));
        assert_eq!(body(&prepared.requests[1])["query"], "a");
        assert_eq!(prepared.images, [0, 0]);
    }

    #[test]
    fn images_and_rankings_entries_need_their_kinds() {
        let with_image = vec![entry("look", &["https://x/a.png"], None)];
        let error =
            prepare(&file_dataset(), &test_endpoint(EndpointKind::Embeddings), &Tokenizer::builtin(), with_image)
                .err()
                .unwrap();
        assert_eq!(
            error.to_string(),
            "dataset file data/mixed.jsonl: entries with \"image\" or \"images\" need a chat endpoint (kind: \"chat\"), not \"embeddings\" (image_edit and image_retrieval take them too)"
        );
        let ranking = Ranking { query: "q".into(), passages: vec!["p".into()] };
        let error = prepare(
            &file_dataset(),
            &test_endpoint(EndpointKind::Chat),
            &Tokenizer::builtin(),
            vec![entry("q p", &[], Some(ranking))],
        );
        assert!(
            error.err().unwrap().to_string().contains("need a rankings endpoint (kind: \"rankings\"), not \"chat\"")
        );
    }

    #[test]
    fn a_trace_turn_behind_a_system_prompt_counts_as_its_body_s_texts_joined() {
        let tokenizer = Tokenizer::builtin();
        let (system, first, second) = ("Answer tersely.", "Mississippi runs south?", "Mississippi: yes");
        // A trace reader counts the turn's own messages joined, the system prompt alone.
        let mut entry = DatasetEntry::counted(&tokenizer, format!("{first} {second}"), Some(3));
        let messages = vec![json!({"role": "user", "content": first}), json!({"role": "assistant", "content": second})];
        entry.messages = Some(Box::new(PresetMessages { messages, tools: None, extra: Default::default() }));
        let tokens = tokenizer.count(system) as u64;
        entry.input_tokens += tokens;
        entry.system_prompt = Some(Arc::new(SystemPrompt { tokens, text: system.into() }));
        let prepared = prepare(&file_dataset(), &test_endpoint(EndpointKind::Chat), &tokenizer, vec![entry]).unwrap();
        assert_eq!(input_texts(&body(&prepared.requests[0])), [system, first, second]);
        let joined = tokenizer.count(&format!("{system} {first} {second}")) as u64;
        assert_eq!(prepared.requests[0].input_tokens, joined);
        let apart = tokenizer.count(system) + tokenizer.count(&format!("{first} {second}"));
        assert_ne!(joined, apart as u64, "the join moves the count");
    }

    #[test]
    fn segments_are_dealt_whole_conversations_and_know_their_place_in_the_dataset() {
        // Sessions: [0, 1] (two turns), [2], [3, 4, 5] (three turns), [6].
        let turns = [Some(0), Some(1), None, Some(0), Some(1), Some(2), None];
        let entries = turns
            .iter()
            .enumerate()
            .map(|(index, turn)| {
                let mut entry = entry(&format!("prompt {index}"), &[], None);
                entry.turn = turn.map(|index| crate::dataset::FileTurn { index, delay_ms: None, timestamp_ms: None });
                entry
            })
            .collect();
        let whole =
            prepare(&file_dataset(), &test_endpoint(EndpointKind::Chat), &Tokenizer::builtin(), entries).unwrap();
        let texts = |prepared: &Prepared| -> Vec<String> {
            prepared.requests.iter().map(|r| body(r)["messages"][0]["content"].as_str().unwrap().to_string()).collect()
        };
        let segment = |index| ExecutionSegment::new(index, 2).unwrap();
        let (first, first_index) =
            Prepared { requests: whole.requests.clone(), images: whole.images.clone() }.segment_share(segment(0));
        assert_eq!(first_index, vec![0, 1, 3, 4, 5]);
        assert_eq!(texts(&first), ["prompt 0", "prompt 1", "prompt 3", "prompt 4", "prompt 5"]);
        let (second, second_index) = whole.segment_share(segment(1));
        assert_eq!(second_index, vec![2, 6]);
        assert_eq!(texts(&second), ["prompt 2", "prompt 6"]);
        assert_eq!(second.images.len(), 2);
        let (alone, alone_index) = prepare(
            &file_dataset(),
            &test_endpoint(EndpointKind::Chat),
            &Tokenizer::builtin(),
            vec![entry("one", &[], None)],
        )
        .unwrap()
        .segment_share(segment(1));
        assert_eq!((alone.requests.len(), alone_index), (1, vec![0]), "fewer conversations than segments: kept whole");
    }
}
