//! `fastsum cache stats | prune | clear [--cache PATH]`.

use std::path::PathBuf;

use clap::{CommandFactory, Parser, Subcommand};
use fastsum::cache::Cache;

use crate::term::count;

/// Look after fastsum's checksum cache.
#[derive(Parser, Debug)]
#[command(name = "fastsum cache")]
struct CacheArgs {
    #[command(subcommand)]
    action: Action,
    /// The cache file (default: $XDG_CACHE_HOME/fastsum/cache.sqlite).
    /// Written --cache=PATH as elsewhere; here a space works too, since
    /// the path is required (the other commands' --cache takes an
    /// optional one, so only `=` can give it there).
    #[arg(long, global = true, value_name = "PATH")]
    cache: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum Action {
    /// Entries, size on disk, and the hit rate of the last run.
    Stats,
    /// Drop entries whose files are gone.
    Prune,
    /// Drop every entry.
    Clear,
}

/// `fastsum cache`'s arguments, for the man page and the completions.
pub fn command() -> clap::Command {
    CacheArgs::command()
}

/// Runs `fastsum cache` with `args` (after the word `cache`).
pub fn run(args: Vec<std::ffi::OsString>) -> i32 {
    let args: CacheArgs = match crate::term::parse_subcommand("fastsum cache", args) {
        Ok(args) => args,
        Err(status) => return status,
    };
    let path = match crate::term::cache::path(args.cache) {
        Ok(path) => path,
        Err(m) => {
            eprintln!("fastsum cache: {m}");
            return 1;
        }
    };
    // Reading and tidying a cache that is not there would create one (a
    // typo in --cache made a new empty database): say so instead.
    if !path.exists() {
        eprintln!(
            "fastsum cache: {}: no cache there (one is made by a run with --cache)",
            path.display()
        );
        return 1;
    }
    let mut cache = match Cache::open(&path) {
        Ok(cache) => cache,
        Err(e) => {
            eprintln!("fastsum cache: {e}");
            return 1;
        }
    };
    if let Some(notice) = cache.take_notice() {
        eprintln!("fastsum: {notice}");
    }
    use std::fmt::Write as _;
    let mut text = String::new();
    let outcome = match args.action {
        Action::Stats => cache.summary().map(|s| {
            let _ = writeln!(text, "cache: {}", path.display());
            let _ = writeln!(text, "entries: {}", s.entries);
            let _ = writeln!(text, "size on disk: {} bytes", s.bytes_on_disk);
            let _ = match s.last_run {
                Some((hits, misses)) if hits + misses > 0 => writeln!(
                    text,
                    "last run: {}, {} ({:.1}% hit rate)",
                    count(hits, "hit", "hits"),
                    count(misses, "miss", "misses"),
                    100.0 * hits as f64 / (hits + misses) as f64
                ),
                _ => writeln!(text, "last run: none recorded"),
            };
        }),
        Action::Prune => cache.prune().map(|n| {
            let _ = writeln!(text, "pruned {}", count(n, "entry", "entries"));
        }),
        Action::Clear => cache.clear().map(|n| {
            let _ = writeln!(text, "cleared {}", count(n, "entry", "entries"));
        }),
    };
    match outcome {
        Ok(()) => crate::term::print_all("fastsum cache", text.as_bytes(), 0),
        Err(e) => {
            eprintln!("fastsum cache: {e}");
            1
        }
    }
}
