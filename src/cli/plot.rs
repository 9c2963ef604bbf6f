//! `aiperf plot [DIR...] [--output OUT] [--format html,png,svg] [--theme light|dark]
//! [--dashboard] [--mlflow-upload]`: the report of the runs found under the folders, with
//! AIPerf's command name and flags (`./artifacts` when no folder is given).

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use super::exit_code;
use crate::outputs::mlflow;
use crate::plan::REDACTED;
use crate::report::{self, Formats, Theme};

#[derive(Debug, clap::Args)]
pub struct PlotArgs {
    /// Run folders, sweep folders, or folders above them (every run found below is drawn) [default: artifacts]
    pub dirs: Vec<PathBuf>,
    /// AIPerf's `--paths` spelling of the folders
    #[arg(long = "paths", hide = true, num_args = 1..)]
    pub named_dirs: Vec<PathBuf>,
    /// Where the report goes (default: <first DIR>/plots)
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// What to write: html (one self-contained report.html), png and svg (one file per chart)
    #[arg(long, default_value = "html")]
    pub format: String,
    /// The page's and the charts' colours
    #[arg(long, value_enum, default_value_t = ThemeName::Light)]
    pub theme: ThemeName,
    /// Serve the report over HTTP (at --host:--port) until Ctrl-C, instead of only writing it
    #[arg(long, overrides_with = "no_dashboard")]
    pub dashboard: bool,
    #[arg(long, hide = true)]
    pub no_dashboard: bool,
    /// The dashboard's address
    #[arg(long, default_value = "127.0.0.1")]
    pub host: IpAddr,
    /// The dashboard's port
    #[arg(long, default_value_t = 8050)]
    pub port: u16,
    /// Upload the files written to the run's MLflow run (its mlflow_export.json, or --mlflow-tracking-uri and --mlflow-run-id); one DIR
    #[arg(long, overrides_with = "no_mlflow_upload")]
    pub mlflow_upload: bool,
    #[arg(long, hide = true)]
    pub no_mlflow_upload: bool,
    /// The tracking server to upload to (default: the run's mlflow_export.json `tracking_uri`)
    #[arg(long)]
    pub mlflow_tracking_uri: Option<String>,
    /// The run to upload into (default: the run's mlflow_export.json `run_id`)
    #[arg(long)]
    pub mlflow_run_id: Option<String>,
    /// AIPerf's plot config (which Plotly figures it draws): no effect here, the report draws its own charts
    #[arg(long)]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ThemeName {
    Light,
    Dark,
}

/// AIPerf's default folder of runs.
const DEFAULT_DIR: &str = "artifacts";

pub fn plot(args: PlotArgs) -> i32 {
    let formats = match Formats::parse(&args.format) {
        Ok(formats) => formats,
        Err(e) => return refuse(format!("--format: {e}")),
    };
    if args.dashboard && args.mlflow_upload {
        return refuse("--dashboard and --mlflow-upload go apart: serve the report, or upload its files".into());
    }
    let given = [&args.dirs[..], &args.named_dirs].concat();
    let dirs = if given.is_empty() { vec![PathBuf::from(DEFAULT_DIR)] } else { given };
    let upload_target = match args.mlflow_upload.then(|| upload_target(&dirs, &args)).transpose() {
        Ok(target) => target,
        Err(message) => return refuse(message),
    };
    if let Some(config) = &args.config {
        eprintln!(
            "note: --config {} (AIPerf's plot config: which Plotly figures it draws) has no effect here; the report draws its own charts (docs/report.md)",
            config.display()
        );
    }
    let theme = match args.theme {
        ThemeName::Light => Theme::Light,
        ThemeName::Dark => Theme::Dark,
    };
    // The dashboard serves the page, so it writes one.
    let formats = Formats { html: formats.html || args.dashboard, ..formats };
    let output = args.output.clone().unwrap_or_else(|| dirs[0].join("plots"));
    let written = match report::write(&dirs, &output, formats, theme) {
        Ok(written) => written,
        Err(e) => {
            eprintln!("error: {e:#}");
            return exit_code::FAILURE;
        }
    };
    println!(
        "{} chart(s) of {} run(s): {} file(s) in {}",
        written.charts,
        written.runs,
        written.files.len(),
        output.display()
    );
    if formats.html {
        println!("report: {}", output.join(report::REPORT_FILE).display());
    }
    if upload_target.is_none() && !args.dashboard {
        return exit_code::OK;
    }
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return exit_code::FAILURE;
        }
    };
    if let Some((tracking_uri, run_id)) = upload_target {
        let files: Vec<PathBuf> =
            written.files.iter().filter_map(|file| file.strip_prefix(&output).ok().map(Path::to_path_buf)).collect();
        return match runtime.block_on(mlflow::upload_files_to_run(&tracking_uri, &run_id, &output, &files)) {
            Ok(uploaded) => {
                let noun = if uploaded.len() == 1 { "artifact" } else { "artifacts" };
                println!("Uploaded {} plot {noun} to MLflow run {run_id}.", uploaded.len());
                exit_code::OK
            }
            Err(e) => {
                eprintln!("error: MLflow upload: {e:#}");
                exit_code::FAILURE
            }
        };
    }
    if args.dashboard {
        let address = SocketAddr::new(args.host, args.port);
        let served = runtime.block_on(report::serve_dashboard(output, address, |bound| {
            println!("dashboard: http://{bound}/ (Ctrl-C to stop)");
        }));
        if let Err(e) = served {
            eprintln!("error: {e:#}");
            return exit_code::FAILURE;
        }
    }
    exit_code::OK
}

/// The tracking server and run an upload goes to, as AIPerf finds them: the flags, else the one
/// run folder's `mlflow_export.json`.
fn upload_target(dirs: &[PathBuf], args: &PlotArgs) -> Result<(String, String), String> {
    let [dir] = dirs else {
        return Err("--mlflow-upload needs exactly one run folder, whose MLflow run the files go to".into());
    };
    let metadata_file = dir.join(mlflow::EXPORT_METADATA_FILE);
    let metadata: serde_json::Value = match std::fs::read(&metadata_file) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| format!("{}: not the JSON of an MLflow upload: {e}", metadata_file.display()))?,
        Err(_) => serde_json::Value::Null,
    };
    let recorded = |key: &str| metadata.get(key).and_then(serde_json::Value::as_str).map(str::to_string);
    if args.mlflow_tracking_uri.is_none() && recorded("tracking_uri").is_some_and(|uri| uri.contains(REDACTED)) {
        return Err(format!(
            "{} records the tracking server with its credentials redacted (an AIPerf run's): give --mlflow-tracking-uri",
            metadata_file.display()
        ));
    }
    let tracking_uri = args.mlflow_tracking_uri.clone().or_else(|| recorded("tracking_uri")).ok_or_else(|| {
        format!(
            "--mlflow-upload needs a tracking server: give --mlflow-tracking-uri, or plot a run whose {} names one",
            metadata_file.display()
        )
    })?;
    let run_id = args.mlflow_run_id.clone().or_else(|| recorded("run_id")).ok_or_else(|| {
        format!(
            "--mlflow-upload needs a run: give --mlflow-run-id, or plot a run whose {} names one",
            metadata_file.display()
        )
    })?;
    Ok((tracking_uri, run_id))
}

fn refuse(message: String) -> i32 {
    eprintln!("error: {message}");
    exit_code::SCRIPT_ERROR
}
