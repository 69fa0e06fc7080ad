//! `fastsum man` and `fastsum completions SHELL`: the manual page and the
//! shell completions, made at run time from the option table the parser
//! uses and the `--help` words (`mode::flags`), and from the table of
//! subcommands (`crate::SUBCOMMANDS`) with their clap definitions, so they
//! cannot drift from the program.

mod completions;
mod man;

use fastsum::Algorithm;

/// The clap definition of a subcommand, for those that have one.
fn subcommand(name: &str) -> Option<clap::Command> {
    crate::SUBCOMMANDS
        .iter()
        .find(|s| s.name == name)
        .and_then(|s| s.command)
        .map(|command| command())
}

/// Each subcommand's name and what it does.
fn subcommands() -> impl Iterator<Item = (&'static str, &'static str)> {
    crate::SUBCOMMANDS.iter().map(|s| (s.name, s.about))
}

/// The `-a` names.
fn algorithm_names() -> Vec<String> {
    Algorithm::ALL
        .iter()
        .map(|a| a.name().to_string())
        .collect()
}

/// The long options of a clap command, hidden ones left out: (long,
/// short, the value's name if it takes one, help), in the order `--help`
/// lists them (an option a command describes with `mut_arg`, as the
/// shared groups of `cmd::args` are, moves to the end of
/// `get_arguments` but keeps its place in the help).
fn clap_options(command: &clap::Command) -> Vec<(String, Option<char>, Option<String>, String)> {
    let mut arguments: Vec<&clap::Arg> = command.get_arguments().collect();
    arguments.sort_by_key(|arg| arg.get_display_order());
    arguments
        .into_iter()
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
