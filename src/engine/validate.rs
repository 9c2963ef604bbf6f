//! The mistakes a user can make in a plan, found before anything starts: each named with the
//! run, phase or key it is in.

use anyhow::{Result, bail};

use crate::load;
use crate::metrics::token_checks::TokenCheckThresholds;
use crate::plan::{ConversationShape, Dataset, Dist, EndpointKind, LoadMode, Plan, SyntheticDataset};

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
    let scripted_results =
        plan.phases.iter().filter(|phase| phase.results && matches!(phase.mode, LoadMode::Scripted { .. })).count();
    if scripted_results != 1
        && let Some(t) = plan.thresholds.iter().find(|t| crate::thresholds::on_sessions(t))
    {
        bail!(
            "threshold \"{}\" is on the session metrics of a run's one results phase of scripted sessions; this run has {scripted_results}",
            t.expression
        );
    }
    match &plan.dataset {
        Dataset::Synthetic(spec) => {
            if let Some(problem) = spec.isl.problem().or(spec.osl.as_ref().and_then(Dist::problem)) {
                bail!("synthetic dataset: {problem}");
            }
            if let Some(problem) = spec.size_problem() {
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
