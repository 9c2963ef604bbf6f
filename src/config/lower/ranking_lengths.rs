//! `datasets.main.rankings` lowered: a rankings endpoint's synthetic entries are a query and
//! passages generated to their own lengths, as AIPerf's rankings composer makes them (its
//! defaults, 32 and 128 tokens and 10 passages, for what is left out).

use serde_json::Value;

use super::values::opt_dist;
use crate::config::ConfigError;
use crate::plan::{Dist, EndpointKind, RankingLengths};

pub fn lower(dataset: &Value, kind: EndpointKind) -> Result<Option<RankingLengths>, ConfigError> {
    let is_rankings =
        matches!(kind, EndpointKind::CohereRankings | EndpointKind::TeiRankings | EndpointKind::NimRankings);
    let no_settings = serde_json::json!({});
    let rankings = dataset.get("rankings").filter(|rankings| !rankings.is_null()).unwrap_or(&no_settings);
    let query_key = "datasets.main.rankings.query_tokens (--rankings-query-prompt-token-mean)";
    let passage_key = "datasets.main.rankings.passage_tokens (--rankings-passages-prompt-token-mean)";
    let query_tokens = opt_dist(rankings, "query_tokens", query_key)?;
    let passage_tokens = opt_dist(rankings, "passage_tokens", passage_key)?;
    if !is_rankings {
        if query_tokens.is_none() && passage_tokens.is_none() {
            return Ok(None);
        }
        return Err(ConfigError::new(format!(
            "{query_key}, {passage_key}: queries and passages are sent to rankings endpoints only"
        )));
    }
    for (dist, key) in [(&query_tokens, query_key), (&passage_tokens, passage_key)] {
        if let Some(mean) = dist.as_ref().map(Dist::mean).filter(|mean| mean.is_nan() || *mean < 1.0) {
            return Err(ConfigError::new(format!("{key}: the mean must be at least 1 token, got {mean}")));
        }
    }
    let passages_key = "datasets.main.rankings.passages (--rankings-passages-mean, --rankings-passages-stddev)";
    let (passages, passages_stddev) = match opt_dist(rankings, "passages", passages_key)? {
        None => (10, 0),
        Some(passages) => match passages.as_plain_normal() {
            // Whole passages, as AIPerf takes the mean and the spread.
            Some((mean, stddev)) if mean >= 1.0 && stddev >= 0.0 => (mean as usize, stddev as u64),
            _ => {
                return Err(ConfigError::new(format!(
                    "{passages_key}: a mean of at least 1 passage and a stddev of 0 or more"
                )));
            }
        },
    };
    Ok(Some(RankingLengths {
        query_tokens: query_tokens.unwrap_or(Dist::fixed(32.0)),
        passage_tokens: passage_tokens.unwrap_or(Dist::fixed(128.0)),
        passages,
        passages_stddev,
    }))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn rankings_entries_are_generated_queries_and_passages_with_aiperf_s_defaults() {
        let kind = EndpointKind::CohereRankings;
        let defaults = lower(&json!({}), kind).unwrap().unwrap();
        assert_eq!(
            (defaults.query_tokens.mean(), defaults.passage_tokens.mean(), defaults.passages),
            (32.0, 128.0, 10)
        );
        assert_eq!(lower(&json!({"rankings": {"passages": 3}}), kind).unwrap().unwrap().passages, 3);
        let spread = lower(&json!({"rankings": {"passages": {"mean": 3.7, "stddev": 2.5}}}), kind).unwrap().unwrap();
        assert_eq!((spread.passages, spread.passages_stddev), (3, 2), "whole passages, as AIPerf takes them");
        let error = lower(&json!({"rankings": {"passages": 0}}), kind).unwrap_err().to_string();
        assert!(error.contains("a mean of at least 1 passage"), "{error}");
        assert_eq!(lower(&json!({}), EndpointKind::Chat).unwrap(), None);
        let lengths = lower(&json!({"rankings": {"query_tokens": {"mean": 20}}}), kind).unwrap().unwrap();
        assert_eq!(lengths.query_tokens.mean(), 20.0);
        assert_eq!((lengths.passage_tokens.mean(), lengths.passages), (128.0, 10));
        let error = lower(&json!({"rankings": {"passage_tokens": 64}}), EndpointKind::Chat).unwrap_err().to_string();
        assert!(error.contains("rankings endpoints only"), "{error}");
    }
}
