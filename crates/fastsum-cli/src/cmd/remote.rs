//! `fastsum remote-command PATH`: the command that lists and hashes a tree
//! on a host, printed for a deploy tool to run there over its own
//! connection; its output goes back to `fastsum diff --remote-listing`.
//! The stable interface is described in docs/REMOTE.md.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use clap::{CommandFactory, Parser};
use fastsum::remote::{Method, RemoteOptions};
use fastsum::Algorithm;

/// Print the command that lists and hashes the tree at PATH on a remote
/// host, for a tool that runs commands there over its own connection (Rex,
/// Ansible, salt). Run it on the host with its login shell; give what it
/// printed to `fastsum diff --remote-listing FILE HOST:PATH ...`.
#[derive(Parser, Debug)]
#[command(name = "fastsum remote-command", version)]
#[command(mut_arg("algorithm", |a| a.help("The algorithm the host hashes with").default_value("md5")))]
struct RemoteCommandArgs {
    /// The tree (or file) on the host, as that host names it; several
    /// (with --text) give one listing after another, in their order.
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    #[command(flatten)]
    algorithm: crate::cmd::args::AlgorithmArg,
    /// Make everything the command prints printable ASCII lines (hex), for
    /// a runner that reads lines, changes line ends or uses a terminal.
    #[arg(long)]
    text: bool,
    /// Hash by this method only: fastsum, coreutils, bsd, perl or python
    /// (default: the first the host has, in that order).
    #[arg(long, value_name = "NAME", value_parser = ["fastsum", "coreutils", "bsd", "perl", "python"])]
    remote_method: Option<String>,
    /// The fastsum to run on the host, if it has one.
    #[arg(long, value_name = "PATH")]
    remote_fastsum: Option<String>,
    /// Let a fastsum on the host answer from its own checksum cache.
    #[arg(long)]
    cache: bool,
}

/// `fastsum remote-command`'s arguments, for the man page and the completions.
pub fn command() -> clap::Command {
    RemoteCommandArgs::command()
}

/// Runs `fastsum remote-command` with `args` (after its first word).
pub fn run(args: Vec<OsString>) -> i32 {
    let args: RemoteCommandArgs =
        match crate::term::parse_subcommand("fastsum remote-command", args) {
            Ok(args) => args,
            Err(status) => return status,
        };
    let algorithm = args.algorithm.or(Algorithm::Md5);
    let options = RemoteOptions {
        method: args.remote_method.as_deref().and_then(Method::from_name),
        remote_fastsum: args.remote_fastsum.clone(),
        cache: args.cache,
        ..RemoteOptions::default()
    };
    let paths: Vec<&[u8]> = args
        .paths
        .iter()
        .map(|p| fastsum::name::path_bytes(p))
        .collect();
    let mut command = match options.command(&paths, algorithm, args.text) {
        Ok(command) => command,
        Err(why) => {
            eprintln!("fastsum remote-command: {why}");
            return 2;
        }
    };
    command.push(b'\n');
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(&command).and_then(|()| out.flush()) {
        eprintln!(
            "fastsum remote-command: write error: {}",
            fastsum::Error::os_message(&e)
        );
        return 2;
    }
    0
}
