//! `aiperf profile --help`: the flags in AIPerf's groups, each with its aliases and one line;
//! flags that only earn a note or are refused say so.

use super::flags::{Action, Arity};
use super::groups::GROUPS;

pub fn render() -> String {
    let mut out = String::from(
        "Usage: aiperf profile [OPTIONS]\n\n\
         Benchmark a server with AIPerf's `aiperf profile` flags (or --config FILE.yaml, which the flags\n\
         override). The flags build the same plan a Rhai scenario builds and run it through the same engine;\n\
         --emit-scenario writes that scenario. Flags marked (note) are accepted and do nothing here.\n",
    );
    for group in GROUPS {
        out.push_str(&format!("\n{}:\n", group.title));
        let width = group.flags.iter().map(|flag| names_of(flag.names, flag.arity).len()).max().unwrap_or(0);
        for flag in group.flags {
            let marker = if matches!(flag.action, Action::Note(_)) { "(note) " } else { "" };
            out.push_str(&format!("  {:width$}  {marker}{}\n", names_of(flag.names, flag.arity), flag.help));
        }
    }
    out.push_str(
        "\nExamples:\n  aiperf profile --model m --url mock --endpoint-type chat --streaming --concurrency 4 --request-count 20\n  \
         aiperf profile --config benchmark.yaml --concurrency 1,4,16 --dry-run\n  \
         aiperf profile --model m --url http://127.0.0.1:8000 --request-rate 10 --benchmark-duration 60 --emit-scenario bench.rhai\n",
    );
    out
}

fn names_of(names: &[&str], arity: Arity) -> String {
    let value = match arity {
        Arity::Switch => "",
        Arity::One => " VALUE",
        Arity::Many => " VALUE…",
    };
    format!("{}{value}", names.join(" "))
}
