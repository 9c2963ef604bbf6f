//! What a plan's dataset sends ahead of each prompt (a verbatim system prompt, a conversation's
//! user context) checked against each other and against the endpoint kind that must carry it.

use super::{Dataset, EndpointKind};

impl Dataset {
    /// Why the system prompt or user context cannot be sent as asked, if it cannot.
    pub fn openings_problem(&self, kind: EndpointKind) -> Option<String> {
        let carried = matches!(
            kind,
            EndpointKind::Chat
                | EndpointKind::Completions
                | EndpointKind::Responses
                | EndpointKind::Messages
                | EndpointKind::ChatEmbeddings
        );
        let kinds = "chat, completions, responses, messages or chat_embeddings";
        if let Some(text) = self.system_prompt() {
            if text.trim().is_empty() {
                return Some(
                    "`system_prompt` (--system-prompt) is empty or only whitespace; leave it out to send none".into(),
                );
            }
            if !carried {
                return Some(format!(
                    "a verbatim `system_prompt` (--system-prompt) is sent to {kinds} endpoints only, not \"{}\"",
                    kind.as_str()
                ));
            }
        }
        let Dataset::Synthetic(spec) = self else { return None };
        let options = &spec.options;
        if options.system_prompt.is_some() && (options.system_prompt_tokens.is_some() || options.prefix_pool.is_some())
        {
            return Some(
                "a verbatim `system_prompt` (--system-prompt) takes the place of a synthetic one: leave out its tokens \
                 (--shared-system-prompt-length) and the prefix pool (--num-prefix-prompts)"
                    .into(),
            );
        }
        match options.user_context_tokens {
            Some(0) => Some("`user_context` (--user-context-prompt-length) must be at least 1 token".into()),
            Some(_) if options.prefix_pool.is_some() => Some(
                "`user_context` (--user-context-prompt-length) and a prefix pool (--num-prefix-prompts) are exclusive"
                    .into(),
            ),
            Some(_) if !carried => Some(format!(
                "`user_context` (--user-context-prompt-length) is sent to {kinds} endpoints only, not \"{}\"",
                kind.as_str()
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Dist, PrefixPool, SyntheticDataset};

    fn synthetic(edit: impl FnOnce(&mut SyntheticDataset)) -> Dataset {
        let mut spec = SyntheticDataset::new(Dist::fixed(8.0), Dist::fixed(8.0), 0, 4);
        edit(&mut spec);
        Dataset::Synthetic(spec)
    }

    #[test]
    fn what_cannot_be_sent_is_named() {
        let verbatim = synthetic(|spec| spec.options.system_prompt = Some("Be brief.".into()));
        assert_eq!(verbatim.openings_problem(EndpointKind::Chat), None);
        assert_eq!(verbatim.openings_problem(EndpointKind::Completions), None);
        assert!(verbatim.openings_problem(EndpointKind::Embeddings).unwrap().contains("not \"embeddings\""));
        let blank = synthetic(|spec| spec.options.system_prompt = Some(" \n".into()));
        assert!(blank.openings_problem(EndpointKind::Chat).unwrap().contains("empty"));
        let both = synthetic(|spec| {
            spec.options.system_prompt = Some("Be brief.".into());
            spec.options.system_prompt_tokens = Some(10);
        });
        assert!(both.openings_problem(EndpointKind::Chat).unwrap().contains("takes the place"));
        let pooled = synthetic(|spec| {
            spec.options.user_context_tokens = Some(16);
            spec.options.prefix_pool = Some(PrefixPool { prefixes: 2, length: 4 });
        });
        assert!(pooled.openings_problem(EndpointKind::Chat).unwrap().contains("exclusive"));
        let context = synthetic(|spec| spec.options.user_context_tokens = Some(16));
        assert!(context.openings_problem(EndpointKind::CohereRankings).unwrap().contains("cohere_rankings"));
    }
}
