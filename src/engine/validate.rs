//! The mistakes a user can make in a plan, found before anything starts: each named with the
//! run, phase or key it is in.

use anyhow::{Result, bail};

use crate::dataset::exact_length::{MAX_PROMPT_TOKENS, prompt_length_problem};
use crate::load;
use crate::metrics::token_checks::TokenCheckThresholds;
use crate::plan::{ConversationShape, Dataset, Dist, EndpointKind, Plan, SyntheticDataset};

/// Check a plan for mistakes a user can make, before anything starts.
pub fn validate(plan: &Plan) -> Result<()> {
    if plan.name.trim().is_empty() {
        bail!("the run needs a non-empty name");
    }
    if plan.phases.is_empty() {
        bail!("run `{}` has no phases: add at least one, e.g. concurrency(#{{ users: 4, requests: 100 }})", plan.name);
    }
    if !plan.phases.iter().any(|p| p.results) {
        bail!(
            "run `{}` has no phase that feeds the results: add a profiling phase such as concurrency(#{{ .. }})",
            plan.name
        );
    }
    // AIPerf's metric thresholds from its environment, refused at the start as AIPerf refuses them.
    TokenCheckThresholds::from_env(|name| std::env::var(name).ok()).map_err(anyhow::Error::msg)?;
    for phase in &plan.phases {
        load::check_phase(phase).map_err(anyhow::Error::msg)?;
        if phase.requests == Some(0) {
            bail!("phase `{}`: `requests` must be at least 1", phase.name);
        }
        if phase.duration_s.is_some_and(|d| d.is_nan() || d <= 0.0) {
            bail!("phase `{}`: `duration` must be positive", phase.name);
        }
    }
    if let Some(problem) = crate::plan::per_chunk_usage_problem(&plan.endpoint, plan.use_server_token_count) {
        bail!("endpoint: {problem}");
    }
    if let Some(interval) = plan.endpoint.request.video_poll_interval_s {
        let range = crate::plan::RequestOptions::VIDEO_POLL_INTERVAL_RANGE_S;
        if !range.contains(&interval) {
            bail!(
                "endpoint: video_poll_interval (AIPERF_HTTP_VIDEO_POLL_INTERVAL) must be between {} and {} s, got {interval}",
                range.start(),
                range.end()
            );
        }
        if plan.endpoint.kind != EndpointKind::VideoGeneration {
            bail!("endpoint: video_poll_interval is for kind video_generation only");
        }
    }
    if plan.endpoint.request.form_data {
        if !crate::request_bodies::may_send_a_form(plan.endpoint.kind) {
            bail!(
                "endpoint: request_content_type multipart/form-data (--request-content-type) is for kinds \
                 video_generation and image_generation, whose fields are flat; `{}` sends JSON",
                plan.endpoint.kind.as_str()
            );
        }
        if let Err(problem) = crate::request_bodies::form_of(&plan.endpoint.extra) {
            bail!("endpoint: extra fields as multipart/form-data: {problem}");
        }
    }
    let names = crate::export::ArtifactNames::new(plan.export.prefix.as_deref());
    if plan.export.outputs_json && names.summary_json() == crate::export::outputs_json::OUTPUTS_JSON {
        bail!(
            "export_prefix (--profile-export-prefix) `{}` names the summary {}, which export_outputs_json \
             (--export-outputs-json) writes too; choose another prefix",
            plan.export.prefix.as_deref().unwrap_or_default(),
            crate::export::outputs_json::OUTPUTS_JSON
        );
    }
    if let Some(problem) = plan.network_latency.problem() {
        bail!("{problem}");
    }
    if let Some(problem) = plan.span_problem() {
        bail!("{problem}");
    }
    if let Some(problem) = plan.server_control.problem() {
        bail!("{problem}");
    }
    if plan.failed_request_threshold.is_some_and(|threshold| !(0.0..=1.0).contains(&threshold)) {
        bail!("failed_request_threshold must be between 0 and 1 (a share of the requests)");
    }
    if let Some(problem) = plan.endpoint.urls().find_map(crate::client::credentials_problem) {
        bail!("{problem}");
    }
    crate::metrics::goodput::Slos::from_plan(&plan.slos).map_err(anyhow::Error::msg)?;
    if plan.slos.is_empty()
        && let Some(t) = plan.thresholds.iter().find(|t| crate::thresholds::needs_slos(t))
    {
        bail!("threshold \"{}\" needs `slos` in the same run (goodput counts requests that meet them)", t.expression);
    }
    match &plan.dataset {
        Dataset::Synthetic(spec) => {
            if let Some(problem) = spec.isl.problem().or(spec.osl.as_ref().and_then(Dist::problem)) {
                bail!("synthetic dataset: {problem}");
            }
            if let Some(problem) = prompt_lengths_problem(spec).or_else(|| dataset_size_problem(spec)) {
                bail!("synthetic dataset: {problem}");
            }
            let below_one = |dist: &Dist| dist.mean().is_nan() || dist.mean() < 1.0;
            if below_one(&spec.isl) || spec.osl.as_ref().is_some_and(below_one) {
                bail!("synthetic dataset: isl and osl need a mean of at least 1 token");
            }
            if let Some(problem) = spec.options.conversation.as_ref().and_then(ConversationShape::problem) {
                bail!("synthetic dataset: {problem}");
            }
        }
        Dataset::File(spec) => {
            if spec.path.trim().is_empty() {
                bail!("file dataset: `path` cannot be empty");
            }
            if spec.block_size == 0 {
                bail!("file dataset: `block_size` must be at least 1 token");
            }
        }
    }
    if let Some(problem) = plan.dataset.openings_problem(plan.endpoint.kind) {
        bail!("dataset: {problem}");
    }
    if plan.endpoint.is_mock() && !plan.endpoint.more_urls.is_empty() {
        bail!("endpoint url \"mock\" is the one built-in server and cannot be listed with other urls");
    }
    for url in plan.endpoint.urls().filter(|_| !plan.endpoint.is_mock()) {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            bail!("endpoint url `{url}` must start with http:// or https:// (or be \"mock\" for the built-in server)");
        }
    }
    if plan.request_timeout_s.is_nan() || plan.request_timeout_s <= 0.0 {
        bail!("request_timeout must be positive");
    }
    if let Dataset::Synthetic(SyntheticDataset { images: Some(_), .. }) = &plan.dataset
        && !plan.endpoint.kind.takes_images()
    {
        bail!(
            "synthetic `images` need a chat endpoint (kind: \"chat\" or \"chat_embeddings\"), or an image_edit or image_retrieval one"
        );
    }
    if let Dataset::Synthetic(synthetic) = &plan.dataset
        && synthetic.options.audio.is_some()
        && !plan.endpoint.kind.takes_audio()
    {
        bail!(
            "synthetic `audio` needs an audio_transcription or chat endpoint (kind: \"audio_transcription\" or \"chat\"), not \"{}\"",
            plan.endpoint.kind.as_str()
        );
    }
    if let Dataset::Synthetic(synthetic) = &plan.dataset
        && synthetic.options.video.is_some()
        && plan.endpoint.kind != EndpointKind::Chat
    {
        bail!("synthetic `video` needs a chat endpoint (kind: \"chat\"), not \"{}\"", plan.endpoint.kind.as_str());
    }
    Ok(())
}

/// A prompt length of `spec` that can exceed what a prompt may have (the ISL's reach, each mix
/// pair's, a rankings query's or passage's, the shared system prompt, the user context, the
/// prefixes).
fn prompt_lengths_problem(spec: &SyntheticDataset) -> Option<String> {
    let options = &spec.options;
    let rankings = options.rankings.iter().flat_map(|rankings| {
        [("rankings query_tokens", &rankings.query_tokens), ("rankings passage_tokens", &rankings.passage_tokens)]
    });
    let drawn = std::iter::once(("isl", &spec.isl))
        .chain(options.mix.iter().map(|pair| ("mix isl", &pair.isl)))
        .chain(rankings);
    for (name, dist) in drawn {
        let longest = dist.reach();
        if longest > MAX_PROMPT_TOKENS as f64 {
            return Some(format!(
                "{name} draws prompts of up to {longest:.0} tokens, more than a prompt may have here \
                 ({MAX_PROMPT_TOKENS}); lower its mean or spread, or give it a `max`"
            ));
        }
    }
    let fixed = [
        ("system_prompt_tokens", options.system_prompt_tokens),
        ("user_context_tokens", options.user_context_tokens),
        ("prefix_pool length", options.prefix_pool.map(|pool| pool.length)),
    ];
    fixed
        .into_iter()
        .find_map(|(name, tokens)| tokens.and_then(prompt_length_problem).map(|problem| format!("{name}: {problem}")))
}

/// The most prompt tokens a synthetic dataset may hold (2^31, ~10 GB of text): it is made
/// before the first request, and requests cycle through its entries.
const MAX_DATASET_TOKENS: f64 = (1u64 << 31) as f64;
/// The most entries a synthetic dataset may have, whatever their length (each costs a few
/// hundred bytes beside its text).
const MAX_DATASET_ENTRIES: usize = 10_000_000;
/// How to give fewer entries, on every face: a dataset's entries default to the requests asked for.
const FEWER_ENTRIES: &str =
    "`entries`, --num-dataset-entries, else they follow the requests; requests cycle through them";
/// The most texts one request may carry (an embeddings `input` list; OpenAI's takes 2,048).
const MAX_BATCH_SIZE: u32 = 65_536;

/// Whether `spec`'s prompts, made up front, would be more text than a dataset may hold: its
/// entries' turns (each a batch of texts) at their mean length, each conversation's user
/// context, the prefixes; or a batch larger than a request may carry.
fn dataset_size_problem(spec: &SyntheticDataset) -> Option<String> {
    if spec.entries > MAX_DATASET_ENTRIES {
        return Some(format!(
            "{} entries are more than a dataset may have here ({MAX_DATASET_ENTRIES}); give fewer ({FEWER_ENTRIES})",
            spec.entries
        ));
    }
    let options = &spec.options;
    let batch = options.batch_size.unwrap_or(1);
    if batch > MAX_BATCH_SIZE {
        return Some(format!("batch_size {batch} is more texts than a request may carry here ({MAX_BATCH_SIZE})"));
    }
    let isl = match options.mix.as_slice() {
        [] => spec.isl.mean(),
        mix => {
            let total: f64 = mix.iter().map(|pair| pair.weight).sum();
            mix.iter().map(|pair| pair.isl.mean() * pair.weight).sum::<f64>() / total
        }
    };
    let turns = options.conversation.as_ref().map_or(1.0, |shape| shape.turns.mean().max(1.0));
    let entries = spec.entries as f64;
    let context = options.user_context_tokens.unwrap_or(0) as f64;
    let prefixes = options.prefix_pool.map_or(0.0, |pool| pool.prefixes as f64 * pool.length as f64);
    let tokens = entries * (turns * isl * batch as f64 + context) + prefixes;
    (tokens > MAX_DATASET_TOKENS).then(|| {
        let texts = if batch > 1 { format!(" in batches of {batch}") } else { String::new() };
        let held = match options.conversation {
            Some(_) => format!("{} conversations of ~{turns:.1} turns of ~{isl:.0} tokens{texts}", spec.entries),
            None => format!("{} prompts of ~{isl:.0} tokens{texts}", spec.entries),
        };
        let prefixes = options
            .prefix_pool
            .map(|pool| format!(" and {} prefixes of {}", pool.prefixes, pool.length))
            .unwrap_or_default();
        format!(
            "{held}{prefixes} are ~{tokens:.3e} prompt tokens, more than a dataset may hold here \
             ({MAX_DATASET_TOKENS:.0}); give fewer entries ({FEWER_ENTRIES}) or fewer prefixes"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Endpoint, Phase, PrefixPool};

    fn plan(dataset: SyntheticDataset) -> Plan {
        let endpoint: Endpoint = serde_json::from_value(
            serde_json::json!({ "url": "mock", "model": "m", "type": "chat", "streaming": true }),
        )
        .unwrap();
        Plan::new("lengths", endpoint, Dataset::Synthetic(dataset), vec![Phase::profiling(1, Some(1))], 60.0)
    }

    #[test]
    fn a_prompt_length_no_prompt_can_have_is_refused_before_anything_is_made() {
        let synthetic = |isl: Dist| SyntheticDataset::new(isl, Dist::fixed(4.0), 1, 10);
        let refusal = |dataset| validate(&plan(dataset)).unwrap_err().to_string();
        assert!(validate(&plan(synthetic(Dist::fixed(MAX_PROMPT_TOKENS as f64)))).is_ok());
        assert_eq!(
            refusal(synthetic(Dist::fixed(1e10))),
            "synthetic dataset: isl draws prompts of up to 10000000000 tokens, more than a prompt may have here \
             (16777216); lower its mean or spread, or give it a `max`"
        );
        assert!(refusal(synthetic(Dist::normal(100.0, 1e7))).contains("up to 60000100 tokens"));
        let capped = Dist { max: Some(4096.0), ..Dist::normal(100.0, 1e7) };
        assert!(validate(&plan(synthetic(capped))).is_ok(), "a max bounds the draws");
        let mut prefixed = synthetic(Dist::fixed(100.0));
        prefixed.options.prefix_pool = Some(PrefixPool { prefixes: 2, length: 20_000_000 });
        assert_eq!(
            refusal(prefixed),
            "synthetic dataset: prefix_pool length: 20000000 tokens is more than a prompt may have here (16777216)"
        );
    }

    #[test]
    fn a_dataset_too_large_to_make_up_front_is_refused() {
        let entries = |count: usize| SyntheticDataset::new(Dist::fixed(1000.0), Dist::fixed(4.0), 1, count);
        assert!(validate(&plan(entries(2_000_000))).is_ok(), "2 G tokens is allowed");
        assert_eq!(
            validate(&plan(entries(3_000_000))).unwrap_err().to_string(),
            "synthetic dataset: 3000000 prompts of ~1000 tokens are ~3.000e9 prompt tokens, more than a dataset \
             may hold here (2147483648); give fewer entries (`entries`, --num-dataset-entries, else they follow the \
             requests; requests cycle through them) or fewer prefixes"
        );
        let short = SyntheticDataset::new(Dist::fixed(10.0), Dist::fixed(4.0), 1, 20_000_000);
        assert_eq!(
            validate(&plan(short)).unwrap_err().to_string(),
            "synthetic dataset: 20000000 entries are more than a dataset may have here (10000000); give fewer \
             (`entries`, --num-dataset-entries, else they follow the requests; requests cycle through them)"
        );
        let mut prefixed = entries(10);
        prefixed.options.prefix_pool = Some(PrefixPool { prefixes: 1_000_000_000, length: 10 });
        assert!(validate(&plan(prefixed)).unwrap_err().to_string().contains("and 1000000000 prefixes of 10"));
        let mut batched = entries(1_000);
        batched.options.batch_size = Some(4_000);
        assert!(
            validate(&plan(batched.clone()))
                .unwrap_err()
                .to_string()
                .contains("1000 prompts of ~1000 tokens in batches of 4000")
        );
        batched.options.batch_size = Some(100_000);
        assert_eq!(
            validate(&plan(batched)).unwrap_err().to_string(),
            "synthetic dataset: batch_size 100000 is more texts than a request may carry here (65536)"
        );
    }
}
