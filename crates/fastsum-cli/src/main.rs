//! `fastsum`: the command-line glue. Which tool to be is decided by the
//! name it was invoked under (`md5sum`, `b3sum`, `xxhsum` ...); everything
//! else is in the personality modules and the `fastsum` library.

mod cmd;
mod mode;
mod personality;
mod term;

use cmd::{audit, bench, cache, contained, diff, dupes, help, manual, remote, scrub, tree_digest};
use personality::{b3sum, xxhsum};

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    match run() {
        Ok(status) => ExitCode::from(status),
        Err(e) => {
            eprintln!("fastsum: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn run() -> anyhow::Result<u8> {
    // Die quietly on a closed pipe, exactly as the C tools do (`fastsum |
    // head` is not an error worth a message). Windows has no SIGPIPE.
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to the default is always
    // sound; no Rust code relies on SIGPIPE being ignored after this point.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let argv: Vec<OsString> = std::env::args_os().collect();
    let program =
        fastsum::name::path_bytes(argv.first().map_or("fastsum".as_ref(), Path::new)).to_vec();
    let base = program_base(&program);
    // Messages start with the program's name: GNU's is argv[0] as typed;
    // Windows passes the full path of the .exe, so its base is used there.
    let program = if cfg!(windows) {
        base.as_bytes().to_vec()
    } else {
        program
    };
    let args: Vec<Vec<u8>> = argv
        .iter()
        .skip(1)
        .map(|a| fastsum::name::path_bytes(Path::new(a)).to_vec())
        .collect();
    let subcommand = args.first().and_then(|a| {
        SUBCOMMANDS
            .iter()
            .find(|s| s.name.as_bytes() == a.as_slice())
    });
    let personality = personality::Tool::from_program_name(&base);
    let xxhsum = base.contains("xxh") && base.ends_with("sum");
    // Trouble exits 1 in the hashing tools (as GNU's, b3sum and xxhsum
    // do), and a subcommand's own status in a subcommand.
    let trouble = match (&personality, base.as_str(), xxhsum, subcommand) {
        (None, "b3sum", ..) | (None, _, true, _) | (Some(_), ..) | (None, _, _, None) => 1,
        (None, _, _, Some(sub)) => sub.trouble,
    };
    term::threads::install(&base, trouble);
    let status = if let Some(tool) = personality {
        mode::run(tool, program, &args)
    } else if base == "b3sum" {
        b3sum::run(argv)
    } else if xxhsum {
        xxhsum::run(&program, &args)
    } else if let Some(sub) = subcommand {
        // `fastsum diff OLD NEW` ... (a file named so: `fastsum ./diff`
        // or `fastsum -- diff`; `fastsum help` too).
        (sub.run)(argv.into_iter().skip(2).collect())
    } else {
        let words: Vec<&'static str> = SUBCOMMANDS.iter().map(|s| s.name).collect();
        mode::run_fastsum(program, &args, &words)
    };
    Ok(u8::try_from(status).unwrap_or(1))
}

/// One of fastsum's subcommands: the word that starts it, what it does
/// (the man page and the completions say it), how it runs, and its clap
/// definition (for the man page's options and the completions).
pub(crate) struct Subcommand {
    pub(crate) name: &'static str,
    pub(crate) about: &'static str,
    pub(crate) run: fn(Vec<OsString>) -> i32,
    pub(crate) command: Option<fn() -> clap::Command>,
    /// Its exit status on trouble (a thread the system refuses ends a run
    /// with it: `term::threads`).
    pub(crate) trouble: i32,
}

/// Every subcommand, in the order `--help`, the man page and the
/// completions list them: the one table dispatch and documentation read.
pub(crate) const SUBCOMMANDS: [Subcommand; 12] = [
    Subcommand {
        name: "diff",
        about: "show what changed between two trees, manifests or remote trees",
        run: diff::run,
        command: Some(diff::command),
        trouble: 2,
    },
    Subcommand {
        name: "dupes",
        about: "find identical files, and act on them safely",
        run: dupes::run,
        command: Some(dupes::command),
        trouble: 2,
    },
    Subcommand {
        name: "contained",
        about: "tell whether every file of a tree has a copy of its bytes in other trees or lists",
        run: contained::run,
        command: Some(contained::command),
        trouble: 2,
    },
    Subcommand {
        name: "audit",
        about: "audit a tree against a list (as hashdeep -a): matched, moved, new, missing",
        run: audit::run,
        command: Some(audit::command),
        trouble: 2,
    },
    Subcommand {
        name: "scrub",
        about: "find silent corruption: files whose bytes changed behind the file system",
        run: scrub::run,
        command: Some(scrub::command),
        trouble: 2,
    },
    Subcommand {
        name: "tree-digest",
        about: "print one digest for each whole directory tree",
        run: tree_digest::run,
        command: Some(tree_digest::command),
        trouble: 1,
    },
    Subcommand {
        name: "remote-command",
        about: "print the listing command a deploy tool runs on a host itself",
        run: remote::run,
        command: Some(remote::command),
        trouble: 2,
    },
    Subcommand {
        name: "bench",
        about: "time ways of checksumming your files, side by side",
        run: bench::run,
        command: Some(bench::command),
        trouble: 1,
    },
    Subcommand {
        name: "cache",
        about: "look after the checksum cache: stats, prune, clear",
        run: cache::run,
        command: Some(cache::command),
        trouble: 1,
    },
    Subcommand {
        name: "completions",
        about: "print the completion script for bash, zsh or fish",
        run: |args| manual::run_completions(&as_bytes(args)),
        command: None,
        trouble: 1,
    },
    Subcommand {
        name: "man",
        about: "print this manual page (roff)",
        run: |args| manual::run_man(&as_bytes(args)),
        command: None,
        trouble: 1,
    },
    Subcommand {
        name: "help",
        about: "print this help, or a subcommand's (fastsum help diff)",
        run: help::run,
        command: None,
        trouble: 1,
    },
];

fn as_bytes(args: Vec<OsString>) -> Vec<Vec<u8>> {
    args.iter()
        .map(|a| fastsum::name::path_bytes(Path::new(a)).to_vec())
        .collect()
}

/// The name the program was called by, which picks the personality: the
/// last component of `argv[0]`, without Windows' `.exe`.
fn program_base(program: &[u8]) -> String {
    let base = program
        .rsplit(|&b| std::path::is_separator(char::from(b)))
        .next()
        .unwrap_or(program);
    let base = String::from_utf8_lossy(base).into_owned();
    match base.len().checked_sub(4) {
        Some(cut) if cfg!(windows) && base[cut..].eq_ignore_ascii_case(".exe") => {
            base[..cut].to_string()
        }
        _ => base,
    }
}
