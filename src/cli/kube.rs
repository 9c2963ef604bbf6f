//! `aiperf kube manifest SCENARIO --workers N --image IMAGE`: the Kubernetes objects of a
//! distributed run (`crate::kube`), printed or written to a file.

use super::{KubeCommand, exit_code};
use crate::kube::{self, ManifestSpec};

pub fn run(command: KubeCommand) -> i32 {
    let KubeCommand::Manifest(args) = command;
    let spec = ManifestSpec {
        scenario: args.scenario,
        workers: args.workers,
        image: args.image,
        name: args.name,
        storage: args.storage,
        storage_class: args.storage_class,
        start_at: args.start_at,
        env: args.env,
    };
    let yaml = match kube::manifest(&spec) {
        Ok(yaml) => yaml,
        Err(e) => {
            eprintln!("error: {e:#}");
            return exit_code::SCRIPT_ERROR;
        }
    };
    match args.out {
        Some(path) => match std::fs::write(&path, yaml) {
            Ok(()) => {
                eprintln!("wrote {}", path.display());
                exit_code::OK
            }
            Err(e) => {
                eprintln!("error: cannot write {}: {e}", path.display());
                exit_code::FAILURE
            }
        },
        None => {
            crate::ui::stdout::print(&yaml);
            exit_code::OK
        }
    }
}
