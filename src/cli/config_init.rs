//! `aiperf config init`: list, search and write the config templates bundled in the binary
//! (AIPerf 0.13's names and workloads, our own text), with `--model` / `--url` filled in.

use std::io::Write;
use std::path::PathBuf;

use super::exit_code;

#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// Template name to write (e.g. `minimal`, `goodput_slo`)
    #[arg(short, long)]
    pub template: Option<String>,
    /// List the bundled templates and exit
    #[arg(short, long)]
    pub list: bool,
    /// Show the templates whose name, title, description, category, tags or features hold this word
    #[arg(short, long)]
    pub search: Option<String>,
    /// With --list: only the categories holding this text
    #[arg(short, long)]
    pub category: Option<String>,
    /// The model name to put in the template
    #[arg(short, long)]
    pub model: Option<String>,
    /// The endpoint URL to put in the template
    #[arg(short, long)]
    pub url: Option<String>,
    /// Write here instead of printing on stdout
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

/// The categories in the order the listing shows them (AIPerf's).
const CATEGORY_ORDER: [&str; 7] = [
    "Getting Started",
    "Load Testing",
    "Datasets",
    "Sweep & Multi-Run",
    "Advanced",
    "Multimodal",
    "Specialized Endpoints",
];

macro_rules! bundled {
    ($($name:literal),* $(,)?) => {
        [$(($name, include_str!(concat!("../../assets/config-templates/", $name, ".yaml")))),*]
    };
}

/// Every template: (name, YAML text).
pub const TEMPLATES: [(&str, &str); 27] = bundled!(
    "audio_multimodal",
    "embeddings",
    "env_var_production",
    "fixed_schedule",
    "goodput_slo",
    "gpu_telemetry",
    "http_trace_metrics",
    "inline_dataset",
    "jinja2_variables",
    "kv_cache_test",
    "latency_test",
    "long_context",
    "minimal",
    "multi_turn_conversation",
    "multi_url_load_balancing",
    "multimodal_vision",
    "public_dataset",
    "ramping",
    "request_cancellation",
    "scenario_workload_profiles",
    "speed_bench_sweep",
    "sweep_distributions",
    "sweep_with_plot",
    "time_based_soak",
    "trace_replay",
    "user_files",
    "warmup_profiling",
);

/// A template's `# @template` block: `# key: value` lines up to the first other line.
#[derive(Debug, Default, Clone)]
struct TemplateInfo {
    name: &'static str,
    title: String,
    description: String,
    category: String,
    tags: Vec<String>,
    difficulty: String,
    features: Vec<String>,
}

impl TemplateInfo {
    fn of(name: &'static str, text: &str) -> Self {
        let mut info = Self { name, difficulty: "beginner".to_string(), ..Self::default() };
        let block = text.lines().skip_while(|line| line.trim() != "# @template").skip(1);
        for line in block {
            let Some((key, value)) = line.trim().strip_prefix("# ").and_then(|rest| rest.split_once(": ")) else {
                break;
            };
            let list = || value.split(',').map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).collect();
            match key.trim() {
                "title" => info.title = value.trim().to_string(),
                "description" => info.description = value.trim().to_string(),
                "category" => info.category = value.trim().to_string(),
                "difficulty" => info.difficulty = value.trim().to_string(),
                "tags" => info.tags = list(),
                "features" => info.features = list(),
                _ => {}
            }
        }
        info
    }

    fn matches(&self, word: &str) -> bool {
        let word = word.to_lowercase();
        [&self.title, &self.description, &self.category]
            .into_iter()
            .chain(&self.tags)
            .chain(&self.features)
            .chain(std::iter::once(&self.name.to_string()))
            .any(|field| field.to_lowercase().contains(&word))
    }
}

/// Every template's metadata, by category order then name.
fn catalogue() -> Vec<TemplateInfo> {
    let rank = |category: &str| CATEGORY_ORDER.iter().position(|c| *c == category).unwrap_or(CATEGORY_ORDER.len());
    let mut infos: Vec<TemplateInfo> = TEMPLATES.iter().map(|(name, text)| TemplateInfo::of(name, text)).collect();
    infos.sort_by(|a, b| (rank(&a.category), a.name).cmp(&(rank(&b.category), b.name)));
    infos
}

/// `verbose` is the global `-v`/`--verbose`: with --list or --search it adds each
/// template's tags and difficulty.
pub fn init(args: &InitArgs, verbose: bool) -> i32 {
    if args.list {
        let filter = args.category.as_deref().map(str::to_lowercase);
        let shown: Vec<TemplateInfo> = catalogue()
            .into_iter()
            .filter(|t| filter.as_ref().is_none_or(|f| t.category.to_lowercase().contains(f)))
            .collect();
        if shown.is_empty() {
            println!("No templates in category '{}'.", args.category.as_deref().unwrap_or_default());
        } else {
            print!("{}", table(&shown, verbose));
            println!("Use 'aiperf config init --template <name>' to write one.");
        }
        return exit_code::OK;
    }
    if let Some(word) = &args.search {
        let (by_name, others): (Vec<TemplateInfo>, Vec<TemplateInfo>) =
            catalogue().into_iter().filter(|t| t.matches(word)).partition(|t| t.name.contains(&word.to_lowercase()));
        let found: Vec<TemplateInfo> = by_name.into_iter().chain(others).collect();
        if found.is_empty() {
            println!("No templates match '{word}'.\nRun 'aiperf config init --list' to see them all.");
        } else {
            print!("{}", table(&found, verbose));
        }
        return exit_code::OK;
    }
    let Some(name) = &args.template else {
        eprintln!("error: name a template with --template, or see them with 'aiperf config init --list'");
        return exit_code::SCRIPT_ERROR;
    };
    let Some((_, text)) = TEMPLATES.iter().find(|(known, _)| known == name) else {
        let names: Vec<&str> = TEMPLATES.iter().map(|(known, _)| *known).collect();
        eprintln!("error: unknown template '{name}'; the templates are: {}", names.join(", "));
        return exit_code::FAILURE;
    };
    let filled = fill(text, args.model.as_deref(), args.url.as_deref());
    match &args.output {
        None => {
            let _ = std::io::stdout().write_all(filled.as_bytes());
            exit_code::OK
        }
        Some(path) => {
            let written = path
                .parent()
                .filter(|folder| !folder.as_os_str().is_empty())
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::write(path, &filled));
            match written {
                Ok(()) => {
                    println!("Wrote {name} template to {}", path.display());
                    exit_code::OK
                }
                Err(e) => {
                    eprintln!("error: cannot write {}: {e}", path.display());
                    exit_code::FAILURE
                }
            }
        }
    }
}

/// The templates as a plain table per category: name, title, description (and tags,
/// difficulty with `verbose`).
fn table(templates: &[TemplateInfo], verbose: bool) -> String {
    let name_width = templates.iter().map(|t| t.name.len()).max().unwrap_or(0).max(25);
    let title_width = templates.iter().map(|t| t.title.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    let mut category = None;
    for template in templates {
        if category != Some(&template.category) {
            if category.is_some() {
                out.push('\n');
            }
            out.push_str(&format!("{}\n", template.category));
            category = Some(&template.category);
        }
        out.push_str(&format!(
            "  {:name_width$}  {:title_width$}  {}",
            template.name, template.title, template.description
        ));
        if verbose {
            out.push_str(&format!("  [{}; {}]", template.tags.join(", "), template.difficulty));
        }
        out.push('\n');
    }
    out.push('\n');
    out
}

/// `text` with the benchmark's `model:` and its endpoint's `url:` replaced, comments and
/// layout kept. The templates write both on a line of their own (`  model:` under
/// `benchmark:`, `    url:` under `  endpoint:`); an endpoint's `urls:` list becomes the one
/// `url:` given.
fn fill(text: &str, model: Option<&str>, url: Option<&str>) -> String {
    let quoted = |value: &str| serde_json::to_string(value).unwrap_or_default();
    let mut section = "";
    let mut in_replaced_list = false;
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        let indent = line.len() - line.trim_start().len();
        let key = line.trim_start().split(':').next().unwrap_or_default();
        if in_replaced_list && indent > 4 && line.trim_start().starts_with("- ") {
            continue;
        }
        in_replaced_list = false;
        if indent == 2 && !line.trim_start().starts_with('#') {
            section = key;
        }
        let replacement = match (indent, key, section) {
            (2, "model", _) => model.map(|m| format!("  model: {}\n", quoted(m))),
            (4, "url", "endpoint") => url.map(|u| format!("    url: {}\n", quoted(u))),
            (4, "urls", "endpoint") => url.map(|u| {
                in_replaced_list = true;
                format!("    url: {}\n", quoted(u))
            }),
            _ => None,
        };
        out.push_str(replacement.as_deref().unwrap_or(line));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_has_its_metadata_in_a_known_category() {
        for info in catalogue() {
            assert!(!info.title.is_empty() && !info.description.is_empty(), "{}", info.name);
            assert!(CATEGORY_ORDER.contains(&info.category.as_str()), "{}: {}", info.name, info.category);
            assert!(!info.tags.is_empty(), "{}", info.name);
        }
    }

    #[test]
    fn model_and_url_land_in_every_template() {
        for (name, text) in TEMPLATES {
            let filled = fill(text, Some("org/my-model"), Some("http://10.0.0.1:9000"));
            let document: serde_yaml::Value = serde_yaml::from_str(&filled).unwrap_or_else(|e| panic!("{name}: {e}"));
            let benchmark = &document["benchmark"];
            assert_eq!(benchmark["model"].as_str(), Some("org/my-model"), "{name}");
            assert_eq!(benchmark["endpoint"]["url"].as_str(), Some("http://10.0.0.1:9000"), "{name}");
            assert_eq!(filled.matches("org/my-model").count(), 1, "{name}: one model line");
            assert_eq!(fill(text, None, None), text, "{name}: unchanged without overrides");
        }
    }

    #[test]
    fn search_finds_by_name_first_then_by_metadata() {
        let sweeps: Vec<&str> = catalogue().into_iter().filter(|t| t.matches("sweep")).map(|t| t.name).collect();
        assert!(sweeps.contains(&"sweep_with_plot") && sweeps.contains(&"scenario_workload_profiles"), "{sweeps:?}");
        assert!(catalogue().iter().any(|t| t.matches("MOONCAKE")));
        assert!(!catalogue().iter().any(|t| t.matches("no-such-word")));
    }
}
