//! `fastsum man` and `fastsum completions SHELL`: the manual page and the
//! shell completions, made at run time from the option table the parser
//! uses and the `--help` words (`gnu::documented`), and from the clap
//! definitions of `bench` and `cache`, so they cannot drift from the
//! program.

mod completions;
mod man;

use fastsum::Algorithm;

/// Subcommands fastsum's own mode takes as its first word.
const SUBCOMMANDS: [(&str, &str); 7] = [
    (
        "diff",
        "show what changed between two trees, manifests or remote trees",
    ),
    ("dupes", "find identical files, and act on them safely"),
    (
        "remote-command",
        "print the listing command a deploy tool runs on a host itself",
    ),
    (
        "bench",
        "time ways of checksumming your files, side by side",
    ),
    (
        "cache",
        "look after the checksum cache: stats, prune, clear",
    ),
    (
        "completions",
        "print the completion script for bash, zsh or fish",
    ),
    ("man", "print this manual page (roff)"),
];

/// The clap definition of a subcommand, for those that have one.
fn subcommand(name: &str) -> Option<clap::Command> {
    match name {
        "diff" => Some(crate::diff_cmd::command()),
        "dupes" => Some(crate::dupes_cmd::command()),
        "bench" => Some(crate::bench::command()),
        "cache" => Some(crate::cache_cmd::command()),
        "remote-command" => Some(crate::remote_cmd::command()),
        _ => None,
    }
}

/// The `-a` names.
fn algorithm_names() -> Vec<String> {
    Algorithm::ALL
        .iter()
        .map(|a| a.name().to_string())
        .collect()
}

/// The long options of a clap command, hidden ones left out: (long,
/// short, the value's name if it takes one, help).
fn clap_options(command: &clap::Command) -> Vec<(String, Option<char>, Option<String>, String)> {
    command
        .get_arguments()
        .filter(|arg| !arg.is_hide_set())
        .filter_map(|arg| {
            let long = arg.get_long()?.to_string();
            let value = arg.get_action().takes_values().then(|| {
                arg.get_value_names()
                    .and_then(|names| names.first())
                    .map_or("VALUE".to_string(), |n| n.to_string())
            });
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            Some((long, arg.get_short(), value, help))
        })
        .collect()
}

/// Runs `fastsum man` (`args` after the word `man`).
pub fn run_man(args: &[Vec<u8>]) -> i32 {
    if !args.is_empty() {
        eprintln!("fastsum man: takes no arguments (fastsum man > fastsum.1)");
        return 2;
    }
    crate::term::print_all("fastsum man", man::page().as_bytes(), 0)
}

/// Runs `fastsum completions SHELL`.
pub fn run_completions(args: &[Vec<u8>]) -> i32 {
    let script = match args {
        [shell] if shell == b"bash" => completions::bash(),
        [shell] if shell == b"zsh" => completions::zsh(),
        [shell] if shell == b"fish" => completions::fish(),
        _ => {
            eprintln!("usage: fastsum completions bash|zsh|fish");
            return 2;
        }
    };
    crate::term::print_all("fastsum completions", script.as_bytes(), 0)
}
