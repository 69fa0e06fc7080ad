//! `fastsum help [SUBCOMMAND]`: the help, as `git help` and `cargo help`
//! give it. A file named `help` is still hashed: `fastsum -- help` or
//! `fastsum ./help` (as for a file named after any subcommand).

use std::ffi::OsString;

/// What `fastsum help --help` says.
const USAGE: &str = "Usage: fastsum help [SUBCOMMAND]\n\
                     Print fastsum's help, or SUBCOMMAND's (the same as fastsum SUBCOMMAND --help).\n\
                     A file named help is hashed with fastsum -- help, or fastsum ./help.\n";

/// Runs `fastsum help` (`args` after the word `help`).
pub fn run(args: Vec<OsString>) -> i32 {
    let args: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    match args.as_slice() {
        [] => crate::term::print_all("fastsum help", crate::mode::fastsum_help().as_bytes(), 0),
        [flag] if flag == "--help" || flag == "-h" || flag == "help" => {
            crate::term::print_all("fastsum help", USAGE.as_bytes(), 0)
        }
        [name] => match crate::SUBCOMMANDS.iter().find(|s| s.name == name) {
            Some(sub) if sub.command.is_some() => (sub.run)(vec!["--help".into()]),
            Some(sub) => {
                let text = format!("fastsum {}: {}\n", sub.name, sub.about);
                crate::term::print_all("fastsum help", text.as_bytes(), 0)
            }
            None => unknown(name),
        },
        _ => {
            eprint!("fastsum help: takes one SUBCOMMAND at most\n{USAGE}");
            2
        }
    }
}

/// `fastsum help NAME` for a NAME that is no subcommand: said, status 2.
fn unknown(name: &str) -> i32 {
    let names: Vec<&str> = crate::SUBCOMMANDS.iter().map(|s| s.name).collect();
    eprintln!(
        "fastsum help: no subcommand '{name}' (the subcommands: {})",
        names.join(", ")
    );
    2
}
