//! Which files hold a run's per-request records: profile_export.jsonl (AIPerf's), and
//! profile_export.parquet (compact, zstd, one row a record).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub struct RecordFormats {
    pub jsonl: bool,
    pub parquet: bool,
}

impl Default for RecordFormats {
    fn default() -> Self {
        Self { jsonl: true, parquet: false }
    }
}

impl RecordFormats {
    /// The formats named in `names` (`jsonl`, `parquet`); at least one.
    pub fn named<S: AsRef<str>>(names: &[S]) -> Result<Self, String> {
        let mut formats = Self { jsonl: false, parquet: false };
        for name in names {
            match name.as_ref() {
                "jsonl" => formats.jsonl = true,
                "parquet" => formats.parquet = true,
                other => return Err(format!("`{other}` is not a record format; jsonl or parquet")),
            }
        }
        if !formats.jsonl && !formats.parquet {
            return Err("names no format; jsonl, parquet or both (no records at all: export level summary)".into());
        }
        Ok(formats)
    }

    /// The names of the formats, in `named`'s spelling.
    pub fn names(self) -> Vec<&'static str> {
        [(self.jsonl, "jsonl"), (self.parquet, "parquet")].into_iter().filter(|(on, _)| *on).map(|(_, n)| n).collect()
    }

    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_and_bad_ones_are_refused() {
        let both = RecordFormats::named(&["parquet", "jsonl"]).unwrap();
        assert_eq!(both, RecordFormats { jsonl: true, parquet: true });
        assert_eq!(both.names(), ["jsonl", "parquet"]);
        assert_eq!(RecordFormats::named(&["jsonl"]).unwrap(), RecordFormats::default());
        assert!(RecordFormats::named(&["csv"]).unwrap_err().contains("`csv`"));
        assert!(RecordFormats::named::<&str>(&[]).unwrap_err().contains("summary"));
    }
}
