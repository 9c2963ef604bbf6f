//! `aiperf kube manifest`: the Kubernetes objects of a distributed run, as one YAML stream: a
//! ConfigMap with the scenario and the files it imports, a PersistentVolumeClaim shared by every
//! pod for the segment folders, an Indexed Job whose pod `i` runs execution segment `i`
//! (`JOB_COMPLETION_INDEX`), and a merge Job whose init container waits until every segment
//! pod is done, then merges each run's segments. No controller of our own runs in the cluster.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// Where the pods mount the scenario and the shared results.
const SCENARIO_MOUNT: &str = "/scenario";
const RESULTS_MOUNT: &str = "/results";
/// The file each segment pod leaves in the results volume when its `aiperf run` has ended.
const DONE_MARKER: &str = ".segment-done-";

/// What the manifest is made of.
#[derive(Debug, Clone)]
pub struct ManifestSpec {
    pub scenario: PathBuf,
    pub workers: u32,
    pub image: String,
    /// The objects' base name (default: from the scenario's file name).
    pub name: Option<String>,
    /// Size requested for the shared results volume, e.g. `1Gi`.
    pub storage: String,
    pub storage_class: Option<String>,
    /// `--start-at` handed to every segment.
    pub start_at: Option<String>,
    /// `KEY=VALUE` environment of the aiperf containers (e.g. AIPERF_URL).
    pub env: Vec<String>,
}

/// The YAML stream of the run's objects.
pub fn manifest(spec: &ManifestSpec) -> Result<String> {
    if spec.workers == 0 {
        bail!("--workers must be at least 1");
    }
    if let Some(start_at) = &spec.start_at {
        crate::start_at::parse(start_at).map_err(anyhow::Error::msg)?;
    }
    let name = object_name(spec.name.as_deref().unwrap_or(&file_stem(&spec.scenario)))?;
    let files = scenario_files(&spec.scenario)?;
    let env = container_env(&spec.env)?;
    let documents = [
        config_map(&name, &files),
        volume_claim(&name, spec),
        segment_job(&name, spec, &files, &env),
        merge_job(&name, spec),
    ];
    let mut yaml = String::new();
    for document in documents {
        yaml.push_str("---\n");
        yaml.push_str(&serde_yaml::to_string(&document).context("writing the manifest")?);
    }
    Ok(yaml)
}

fn file_stem(path: &Path) -> String {
    path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default()
}

/// `aiperf-<name>`, lowercase letters, digits and dashes (a DNS label with room for suffixes).
fn object_name(base: &str) -> Result<String> {
    let mut label: String =
        base.to_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    label.truncate(40);
    let label = label.trim_matches('-');
    if label.is_empty() {
        bail!("`{base}` gives no usable Kubernetes name: pass --name");
    }
    Ok(format!("aiperf-{label}"))
}

/// The scenario and every file it imports from its folder, as (path in the folder, text).
fn scenario_files(scenario: &Path) -> Result<Vec<(String, String)>> {
    let root = scenario.parent().unwrap_or(Path::new("")).to_path_buf();
    let import = regex::Regex::new(r#"\bimport\s+"([^"]+)""#).expect("a valid pattern");
    let mut files: Vec<(String, String)> = Vec::new();
    let mut pending = vec![(file_name(scenario)?, scenario.to_path_buf())];
    while let Some((relative, path)) = pending.pop() {
        if files.iter().any(|(seen, _)| *seen == relative) {
            continue;
        }
        let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let folder = Path::new(&relative).parent().unwrap_or(Path::new("")).to_path_buf();
        for captures in import.captures_iter(&text) {
            let module = &captures[1];
            if module.starts_with("aiperf/") {
                continue; // the stdlib is in the binary
            }
            let module_path = folder.join(Path::new(module).with_extension("rhai"));
            let inside = module_path.components().all(|c| matches!(c, std::path::Component::Normal(_)));
            if !inside || !root.join(&module_path).is_file() {
                bail!(
                    "{}: import \"{module}\" is not a file in the scenario's folder {}; the manifest carries that folder's imports only",
                    path.display(),
                    root.display()
                );
            }
            pending.push((module_path.to_string_lossy().into_owned(), root.join(&module_path)));
        }
        files.push((relative, text));
    }
    files.sort();
    Ok(files)
}

fn file_name(path: &Path) -> Result<String> {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .with_context(|| format!("{} is not a scenario file", path.display()))
}

/// A ConfigMap key for a file path (keys allow letters, digits, `-`, `_` and `.`).
fn config_key(relative: &str) -> String {
    relative.replace('/', "__")
}

fn container_env(pairs: &[String]) -> Result<Vec<Value>> {
    pairs
        .iter()
        .map(|pair| match pair.split_once('=') {
            Some((key, value)) if !key.is_empty() => Ok(json!({ "name": key, "value": value })),
            _ => bail!("--env `{pair}`: expected KEY=VALUE"),
        })
        .collect()
}

fn labels(name: &str) -> Value {
    json!({ "app.kubernetes.io/name": "aiperf", "app.kubernetes.io/instance": name })
}

fn config_map(name: &str, files: &[(String, String)]) -> Value {
    let data: serde_json::Map<String, Value> =
        files.iter().map(|(relative, text)| (config_key(relative), Value::String(text.clone()))).collect();
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": { "name": format!("{name}-scenario"), "labels": labels(name) },
        "data": data,
    })
}

fn volume_claim(name: &str, spec: &ManifestSpec) -> Value {
    let mut claim = json!({
        "accessModes": ["ReadWriteMany"],
        "resources": { "requests": { "storage": spec.storage } },
    });
    if let Some(class) = &spec.storage_class {
        claim["storageClassName"] = json!(class);
    }
    json!({
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": { "name": format!("{name}-results"), "labels": labels(name) },
        "spec": claim,
    })
}

fn results_volume(name: &str) -> Value {
    json!({ "name": "results", "persistentVolumeClaim": { "claimName": format!("{name}-results") } })
}

fn results_mount() -> Value {
    json!({ "name": "results", "mountPath": RESULTS_MOUNT })
}

/// The Indexed Job: pod `i` runs segment `i` of `workers`, then leaves its done marker.
fn segment_job(name: &str, spec: &ManifestSpec, files: &[(String, String)], env: &[Value]) -> Value {
    let scenario = file_name(&spec.scenario).unwrap_or_default();
    let start_at = spec.start_at.as_ref().map(|at| format!(" --start-at '{at}'")).unwrap_or_default();
    let run = format!(
        "aiperf run {SCENARIO_MOUNT}/{scenario} --no-progress --artifact-dir {RESULTS_MOUNT} --segments {}{start_at}; \
         code=$?; touch {RESULTS_MOUNT}/{DONE_MARKER}$JOB_COMPLETION_INDEX; exit $code",
        spec.workers
    );
    let items: Vec<Value> =
        files.iter().map(|(relative, _)| json!({ "key": config_key(relative), "path": relative })).collect();
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": { "name": name, "labels": labels(name) },
        "spec": {
            "completionMode": "Indexed",
            "completions": spec.workers,
            "parallelism": spec.workers,
            "backoffLimit": 0,
            "template": {
                "metadata": { "labels": labels(name) },
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{
                        "name": "aiperf",
                        "image": spec.image,
                        "command": ["sh", "-c", run],
                        "env": env,
                        "volumeMounts": [
                            { "name": "scenario", "mountPath": SCENARIO_MOUNT, "readOnly": true },
                            results_mount(),
                        ],
                    }],
                    "volumes": [
                        { "name": "scenario", "configMap": { "name": format!("{name}-scenario"), "items": items } },
                        results_volume(name),
                    ],
                },
            },
        },
    })
}

/// The merge Job: waits for every segment's done marker, then merges each run's segments.
fn merge_job(name: &str, spec: &ManifestSpec) -> Value {
    let workers = spec.workers;
    let wait = format!(
        "until [ \"$(ls {RESULTS_MOUNT}/{DONE_MARKER}* 2>/dev/null | wc -l)\" -ge {workers} ]; do sleep 5; done"
    );
    let merge = format!(
        "for run in {RESULTS_MOUNT}/*/; do ls -d \"$run\"segment-*-of-{workers} >/dev/null 2>&1 || continue; \
         aiperf merge \"$run\"segment-*-of-{workers} -o \"$run\"merged || exit 1; done"
    );
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": { "name": format!("{name}-merge"), "labels": labels(name) },
        "spec": {
            "backoffLimit": 0,
            "template": {
                "metadata": { "labels": labels(name) },
                "spec": {
                    "restartPolicy": "Never",
                    "initContainers": [{
                        "name": "wait-for-segments",
                        "image": spec.image,
                        "command": ["sh", "-c", wait],
                        "volumeMounts": [results_mount()],
                    }],
                    "containers": [{
                        "name": "merge",
                        "image": spec.image,
                        "command": ["sh", "-c", merge],
                        "volumeMounts": [results_mount()],
                    }],
                    "volumes": [results_volume(name)],
                },
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_dns_labels() {
        assert_eq!(object_name("My_Scenario.v2").unwrap(), "aiperf-my-scenario-v2");
        assert!(object_name("__").unwrap_err().to_string().contains("--name"));
    }

    #[test]
    fn imports_from_the_folder_are_carried_and_others_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("lib")).unwrap();
        std::fs::write(dir.path().join("s.rhai"), "import \"aiperf/slo\" as slo;\nimport \"lib/a\" as a;").unwrap();
        std::fs::write(dir.path().join("lib/a.rhai"), "import \"b\" as b; fn f() { 1 }").unwrap();
        std::fs::write(dir.path().join("lib/b.rhai"), "fn g() { 2 }").unwrap();
        let files = scenario_files(&dir.path().join("s.rhai")).unwrap();
        let paths: Vec<&str> = files.iter().map(|(path, _)| path.as_str()).collect();
        assert_eq!(paths, vec!["lib/a.rhai", "lib/b.rhai", "s.rhai"]);
        std::fs::write(dir.path().join("t.rhai"), "import \"../elsewhere\" as e;").unwrap();
        let error = scenario_files(&dir.path().join("t.rhai")).unwrap_err().to_string();
        assert!(error.contains("import \"../elsewhere\" is not a file in the scenario's folder"), "{error}");
    }
}
