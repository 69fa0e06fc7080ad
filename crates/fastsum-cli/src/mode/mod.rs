//! The coreutils personality: `md5sum`, `sha1sum`, `sha224sum`,
//! `sha256sum`, `sha384sum`, `sha512sum`, `b2sum`, and fastsum's own
//! interface, which is the same with `-a ALGORITHM` added.
//!
//! This follows coreutils 9.10 `src/cksum.c` step by step: option order and
//! conflicts, which errors end the run and which only fail one file, the
//! per-line check output, the WARNING summaries and the exit status.

use std::sync::Arc;

use crate::personality::Tool;

mod algorithms;
mod check;
mod files0;
pub mod flags;
#[cfg(test)]
mod fuzz;
mod hash;
mod help;
mod hint;
mod multi;
mod options;
mod own_files;
mod parse;
mod prune;
mod remote;
mod resolve;
mod run;
mod s3;
mod update;

use check::check_file;
use options::*;
use remote::hash_operands_and_remotes;
use run::{print_cache_stats, say_notices, Run};

/// The most threads `-j` asks for: far past any core count, and short of
/// the thread limits a machine meets (`-j 20000` failed to spawn).
pub(crate) const MAX_THREADS: usize = 1024;

/// The largest `--read-size`: one buffer per worker is allocated.
const MAX_READ_SIZE: usize = 256 << 20;

/// Runs `tool` with `args` (without `argv[0]`); returns the exit status:
/// the command line parsed (`parse.rs`), resolved (`resolve.rs`), run.
pub fn run(tool: Tool, program: Vec<u8>, args: &[Vec<u8>]) -> i32 {
    run_with(tool, program, args, &[])
}

/// fastsum's own `--help` text (what `fastsum help` prints).
pub fn fastsum_help() -> String {
    help::gnu_help(Tool::FASTSUM, b"fastsum")
}

/// fastsum's own main mode: [`run`], where a command line refused is exit
/// status 2 as the subcommands' (clap's) are, and a failed operand's
/// message may end in a hint (`hint.rs`): `subcommands` are the words
/// that start a subcommand, for the hint on a mistyped one.
pub fn run_fastsum(program: Vec<u8>, args: &[Vec<u8>], subcommands: &[&'static str]) -> i32 {
    run_with(Tool::FASTSUM, program, args, subcommands)
}

fn run_with(tool: Tool, program: Vec<u8>, args: &[Vec<u8>], subcommands: &[&'static str]) -> i32 {
    let mut run = Run::new(tool, program);
    // A usage error: GNU's status 1 for the personalities, 2 for fastsum.
    let refused = |run: &Run, run::Ended(status)| match tool.policy().usage_exits_2 {
        true if status != 0 && !run.working => 2,
        _ => status,
    };
    let parsed = match parse::parse(&mut run, args) {
        Ok(parsed) => parsed,
        Err(status) => return refused(&run, status),
    };
    let (o, operands, rest) = match resolve::resolve(&mut run, parsed) {
        Ok(resolved) => resolved,
        Err(status) => return refused(&run, status),
    };
    if tool.policy().quiet_silences_notices {
        // -q silences notices in every mode (as well as -c's OK lines).
        crate::term::set_quiet(o.quiet);
    }
    if tool.policy().hints && !o.check {
        let first = args.first().map(Vec::as_slice);
        run.hints = hint::Hints::new(o.tree.recursive, first, subcommands);
    }
    if o.hashdeep && o.update.is_none() {
        hash::hashdeep_header(&mut run, &o, args);
    }
    let mut ok = match (o.check, o.algorithms.several()) {
        (true, _) => check_all(&mut run, &o, &operands),
        (false, _) if o.update.is_some() => update::run_update(&mut run, &o, &operands, args),
        (false, true) => multi::hash_operands(&mut run, &o, &operands),
        (false, false) => hash_operands_and_remotes(&mut run, &o, &operands),
    };
    if let Some(rest) = rest {
        drop(operands);
        ok &= hash_the_rest(&mut run, &o, rest);
    }
    let ok = ok && !run.operand_errors;
    let status = match (run.signature_refused, ok) {
        (true, _) => 2,
        (false, true) => 0,
        (false, false) => 1,
    };
    run.finish(status)
}

/// The rest of a `--files0-from` list, hashed and printed a batch at a
/// time in the list's order (memory does not grow with the list).
fn hash_the_rest(run: &mut Run, o: &Options, mut rest: files0::Names) -> bool {
    let mut ok = true;
    loop {
        let batch = match rest.next_batch(run) {
            Ok(batch) => batch,
            Err(_) => return false,
        };
        if batch.is_empty() {
            return ok;
        }
        ok &= match o.algorithms.several() {
            true => multi::hash_operands(run, o, &batch),
            false => hash_operands_and_remotes(run, o, &batch),
        };
    }
}

/// `-c`: every list checked, with the cache's sessions (one per
/// algorithm met) finished and counted at the end.
fn check_all(run: &mut Run, o: &Options, operands: &[Vec<u8>]) -> bool {
    if let Some(path) = &o.cache {
        let mut cache = fastsum::cache::CacheRun::open_file(path);
        say_notices(run, &mut cache);
        run.check_cache = cache.is_open().then_some(cache);
    }
    let mut ok = true;
    let mut parser = check::parser(run, o);
    // fastsum's own -c shows the bar -r shows (after a second, on a
    // terminal's stderr); the GNU tools show none, as theirs.
    let show = run.tool.policy().progress_bar && crate::term::progress::wanted(o.no_progress);
    let display = Arc::new(crate::term::progress::Display::default());
    let counters = Arc::new(fastsum::Progress::default());
    if show {
        run.progress = Some((counters.clone(), display.clone()));
    }
    std::thread::scope(|scope| {
        if show {
            scope.spawn(|| display.run(&counters));
        }
        for name in operands {
            ok &= check_file(run, o, &mut parser, name);
        }
        display.finish();
    });
    run.progress = None;
    if let Some(mut cache) = run.check_cache.take() {
        let total = cache.finish().unwrap_or_default();
        say_notices(run, &mut cache);
        if o.cache_stats {
            print_cache_stats(run, &total);
        }
    }
    ok
}
