//! Where a run sits in a sweep (sweep id, variation, trial) and the artifact folder that follows
//! from it (`artifact_dir_of`: the folder a run's name gives): the coordinates that `run_info`
//! reports.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value};

use crate::python_text::python_text;
use crate::rng::SeededRng;

/// The variation label of a run that is not part of a sweep.
pub const BASE_VARIATION: &str = "base";

/// A run's place in a sweep. The default is a lone run: no sweep, trial 0, variation "base".
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunCoordinates {
    /// UUID4 shared by every variation and trial of one sweep.
    pub sweep_id: Option<String>,
    /// Zero-based trial index within the variation.
    pub trial: u64,
    /// `run_0001` for a trial (a sweep variation's one trial too, as AIPerf labels it), the
    /// variation's folder name for a sweep cell's combined result; the run's name otherwise.
    pub run_label: Option<String>,
    /// `users_8` (AIPerf's `phases.profiling.concurrency=4` where the sweep reports so), or
    /// `None` for "base".
    pub variation_label: Option<String>,
    pub variation_index: u64,
    /// The sweep's parameter point, e.g. `{"users": 8}`.
    pub variation_values: Map<String, Value>,
    /// Folders between the artifact root and the run's own folder (e.g. the sweep's and the
    /// variation's); each is made safe for a folder name.
    pub parent_folders: Vec<String>,
    /// The run's own folder when it is not named by its run label (a sweep's trial folder,
    /// `trial_0001`, holds the trial labelled `run_0001`, as in AIPerf).
    pub folder: Option<String>,
    /// The order of a sweep's runs with several trials each (AIPerf's `sweep_mode`).
    pub sweep_mode: Option<SweepOrder>,
}

/// The order of a sweep's runs when each variation runs several trials (AIPerf's
/// `iteration_order`), which also places their folders.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SweepOrder {
    /// Trial 1 of every variation, then trial 2 of every variation, …:
    /// `profile_runs/trial_0001/<variation>/`, `aggregate/<variation>/`.
    #[default]
    Repeated,
    /// Every trial of a variation before the next variation:
    /// `<variation>/profile_runs/trial_0001/`, `<variation>/aggregate/`.
    Independent,
}

impl SweepOrder {
    pub fn as_str(self) -> &'static str {
        match self {
            SweepOrder::Repeated => "repeated",
            SweepOrder::Independent => "independent",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "repeated" => Some(SweepOrder::Repeated),
            "independent" => Some(SweepOrder::Independent),
            _ => None,
        }
    }
}

impl RunCoordinates {
    /// The run's artifact folder: `<root>/<parent folders…>/<folder, run label or name>`.
    pub fn artifact_dir(&self, root: &Path, name: &str) -> PathBuf {
        let own = self.folder.as_deref().or(self.run_label.as_deref()).unwrap_or(name);
        artifact_dir_of(&folder_under(root, &self.parent_folders), own)
    }

    /// The variation label, "base" outside a sweep.
    pub fn variation_label(&self) -> &str {
        self.variation_label.as_deref().unwrap_or(BASE_VARIATION)
    }
}

/// `folders` joined under `root`, each made safe for a folder name.
pub fn folder_under(root: &Path, folders: &[String]) -> PathBuf {
    folders.iter().fold(root.to_path_buf(), |dir, folder| artifact_dir_of(&dir, folder))
}

/// A run name made safe for a folder name.
fn sanitize_dir_name(name: &str) -> String {
    let cleaned: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
    if cleaned.trim_matches('.').is_empty() { "run".to_string() } else { cleaned }
}

/// Where the artifacts of a run named `name` go.
pub fn artifact_dir_of(root: &Path, name: &str) -> PathBuf {
    root.join(sanitize_dir_name(name))
}

/// `users_8_isl_512`: a variation's values as a label (strings unquoted, floats as written).
pub fn label_of(values: &Map<String, Value>) -> String {
    let parts: Vec<String> = values
        .iter()
        .map(|(name, value)| match value {
            Value::String(text) => format!("{name}_{text}"),
            other => format!("{name}_{other}"),
        })
        .collect();
    if parts.is_empty() { BASE_VARIATION.to_string() } else { parts.join("_") }
}

/// How a sweep variation is reported and where its folder is, when a face names it apart from
/// its parameters (AIPerf's sweeps: `run_info.variation_label` `phases.profiling.concurrency=4`,
/// folder `concurrency_4`, `variation_values` under the dotted paths).
#[derive(Debug, Clone, PartialEq)]
pub struct ReportedVariation {
    pub label: String,
    pub folder: String,
    pub values: Map<String, Value>,
}

impl ReportedVariation {
    /// A grid or zip point as AIPerf reports it: its label and folder from its values.
    pub fn of_point(values: Map<String, Value>, index: usize) -> Self {
        let label = aiperf_label_of(&values);
        let folder = aiperf_dir_name(&values).unwrap_or_else(|| aiperf_label_folder(&label, index));
        Self { label, folder, values }
    }

    /// A named run (a scenario sweep's) as AIPerf reports it: labelled by its name, its folder
    /// from its values where they are plain, else from its name.
    pub fn of_named(name: String, values: Map<String, Value>, index: usize) -> Self {
        let folder = aiperf_dir_name(&values).unwrap_or_else(|| aiperf_label_folder(&name, index));
        Self { label: name, folder, values }
    }
}

/// AIPerf's folder of a variation named by its label: the label without the characters AIPerf
/// strips, `variation_<index>` when nothing is left.
fn aiperf_label_folder(label: &str, index: usize) -> String {
    aiperf_segment(label).unwrap_or_else(|| format!("variation_{index}"))
}

/// A folder name without what AIPerf strips (`/`, `\`, `..`, `<>:"|?*`); None when only dots
/// (or nothing) are left.
fn aiperf_segment(text: &str) -> Option<String> {
    let name = text.replace(['/', '\\'], "").replace("..", "");
    let name: String = name.chars().filter(|c| !"<>:\"|?*".contains(*c)).collect();
    (!name.chars().all(|c| c == '.')).then_some(name)
}

/// A variation's values keyed as AIPerf names its sweep parameters and folders
/// (`concurrency_4`): each dotted path by its last key, unless two paths share it.
pub fn short_names(values: Map<String, Value>) -> Map<String, Value> {
    let leaf = |path: &str| path.rsplit('.').next().unwrap_or(path).to_string();
    let mut leaves: Vec<String> = values.keys().map(|path| leaf(path)).collect();
    leaves.sort();
    if leaves.windows(2).any(|pair| pair[0] == pair[1]) {
        return values;
    }
    values.into_iter().map(|(path, value)| (leaf(&path), value)).collect()
}

/// AIPerf's variation label: `name=value` for each parameter, joined by `, `, each value as
/// Python writes it (`phases.profiling.concurrency=4`, `rate=2.5, streaming=True`).
pub fn aiperf_label_of(values: &Map<String, Value>) -> String {
    if values.is_empty() {
        return BASE_VARIATION.to_string();
    }
    let parts: Vec<String> = values.iter().map(|(name, value)| format!("{name}={}", python_text(value))).collect();
    parts.join(", ")
}

/// AIPerf's folder name of a variation: `last_key_value` for each parameter (by its dotted
/// path's last key), joined by `__` (`mean_32__rate_20.0`), without the characters AIPerf
/// strips; None when a value is a list or a mapping, or nothing is left (AIPerf falls back to the
/// variation's label).
fn aiperf_dir_name(values: &Map<String, Value>) -> Option<String> {
    if values.is_empty() || values.values().any(|value| value.is_array() || value.is_object()) {
        return None;
    }
    let parts: Vec<String> = values
        .iter()
        .map(|(path, value)| format!("{}_{}", path.rsplit('.').next().unwrap_or(path), python_text(value)))
        .collect();
    aiperf_segment(&parts.join("__"))
}

/// Sweep ids made so far by this process, so two made in the same nanosecond still differ.
static SWEEP_IDS_MADE: AtomicU64 = AtomicU64::new(0);

/// A fresh random UUID4 (seeded from the clock, the process id and a counter), in its usual
/// text form.
pub fn new_sweep_id() -> String {
    let now_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_nanos() as u64);
    let made = SWEEP_IDS_MADE.fetch_add(1, Ordering::Relaxed);
    let mut rng = SeededRng::new(now_ns ^ (u64::from(std::process::id()) << 32) ^ made.rotate_right(16));
    let high = (rng.next_u64() & !0xf000) | 0x4000; // version 4
    let low = (rng.next_u64() & !(0b11 << 62)) | (0b10 << 62); // RFC 4122 variant
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        high >> 32,
        (high >> 16) & 0xffff,
        high & 0xffff,
        low >> 48,
        low & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_lone_run_writes_into_its_named_folder() {
        let lone = RunCoordinates::default();
        assert_eq!(lone.artifact_dir(Path::new("/a"), "chat"), Path::new("/a/chat"));
        assert_eq!(lone.variation_label(), "base");
    }

    #[test]
    fn a_trial_of_a_sweep_cell_nests_under_the_sweep_and_the_variation() {
        let trial = RunCoordinates {
            run_label: Some("run_0002".into()),
            parent_folders: vec!["users sweep".into(), "users_8".into(), "profile_runs".into()],
            ..Default::default()
        };
        assert_eq!(
            trial.artifact_dir(Path::new("/a"), "ignored"),
            Path::new("/a/users_sweep/users_8/profile_runs/run_0002")
        );
    }

    #[test]
    fn a_trial_folder_may_be_named_apart_from_its_run_label() {
        let trial = RunCoordinates {
            run_label: Some("run_0002".into()),
            folder: Some("trial_0002".into()),
            parent_folders: vec!["sweep".into(), "profile_runs".into()],
            ..Default::default()
        };
        assert_eq!(trial.artifact_dir(Path::new("/a"), "ignored"), Path::new("/a/sweep/profile_runs/trial_0002"));
    }

    #[test]
    fn labels_join_names_and_values() {
        let values = json!({"users": 8, "isl": 512, "kind": "chat", "rate": 2.5});
        let Value::Object(values) = values else { unreachable!() };
        assert_eq!(label_of(&values), "users_8_isl_512_kind_chat_rate_2.5");
        assert_eq!(label_of(&Map::new()), "base");
    }

    #[test]
    fn aiperf_labels_write_each_value_as_python_does() {
        let values = json!({"phases.profiling.concurrency": 4, "rate": 2.0, "streaming": true, "kind": "chat",
                            "extra": {"a": [1, null, "x"]}});
        let Value::Object(values) = values else { unreachable!() };
        assert_eq!(
            aiperf_label_of(&values),
            "phases.profiling.concurrency=4, rate=2.0, streaming=True, kind=chat, extra={'a': [1, None, 'x']}"
        );
        assert_eq!(aiperf_label_of(&Map::new()), "base");
    }

    #[test]
    fn aiperf_folder_names_take_each_paths_last_key() {
        let values = json!({"datasets.main.prompts.isl.mean": 32, "phases.profiling.rate": 20.0});
        let Value::Object(values) = values else { unreachable!() };
        assert_eq!(aiperf_dir_name(&values).as_deref(), Some("mean_32__rate_20.0"));
        let Value::Object(one) = json!({"phases.profiling.concurrency": 4}) else { unreachable!() };
        assert_eq!(aiperf_dir_name(&one).as_deref(), Some("concurrency_4"));
        let Value::Object(odd) = json!({"model": "org/name:v1", "flag": true}) else { unreachable!() };
        assert_eq!(aiperf_dir_name(&odd).as_deref(), Some("model_orgnamev1__flag_True"));
        let Value::Object(nested) = json!({"phases": [1]}) else { unreachable!() };
        assert_eq!(aiperf_dir_name(&nested), None);
    }

    #[test]
    fn sweep_ids_are_distinct_uuid4s() {
        let (a, b) = (new_sweep_id(), new_sweep_id());
        assert_ne!(a, b);
        let groups: Vec<usize> = a.split('-').map(str::len).collect();
        assert_eq!(groups, [8, 4, 4, 4, 12]);
        assert_eq!(&a[14..15], "4");
        assert!("89ab".contains(&a[19..20]), "{a}");
    }
}
