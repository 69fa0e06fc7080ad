//! `fastsum bench PATH...`: compares ways of checksumming the user's own
//! files: [`strategies`] (what is timed), [`timer`] (timing, peak RSS,
//! digest agreement), [`export`] (the table and JSON); this file is the
//! command's arguments and the runs.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Mutex;
use std::time::Duration;

use clap::{CommandFactory, Parser};
use fastsum::walk::{WalkItem, WalkOptions};
use fastsum::Algorithm;

/// The bench's results fail with the library's one error type.
type Result<T, E = fastsum::Error> = std::result::Result<T, E>;

mod export;
mod strategies;
#[cfg(test)]
mod tests;
mod timer;

use export::{render_json, render_table, Report};
use strategies::{
    External, FastsumDefault, Mapped, Slurp, Strategy, Streamed, EXTERNAL_FILES_PER_RUN,
};
use timer::{
    check_readable, disagreements, evict_from_cache, own_cpu_time, own_peak_rss, run_strategy,
    total_bytes, wait_for_peak_rss, Budget, Measurement, SystemClock,
};

/// The default time all strategies share (`--time` gives each its own):
/// with a first warm-up and each one's peak-memory run, `fastsum bench` on
/// a 146 MB file takes under 10 s (it took 35 s at 2 s each).
const SHARED_TIME: Duration = Duration::from_secs(5);

/// The strategy left out unless named: 64-byte reads show what tiny reads
/// cost, and alone took longer than every other strategy together.
const SLOW_BY_DESIGN: &str = "read-64B";

/// Below this share of the wall clock spent running, the machine was too
/// busy for the figures to tell strategies apart (one thread, warm cache:
/// a quiet machine gives 0.95 to 1.0).
const BUSY_SHARE: f64 = 0.8;
/// Compare ways of checksumming your files on this machine: streamed reads
/// at several sizes, whole-file reads, mmap, fastsum's default, and the
/// system tools, in a cmpthese-style table with time and peak memory.
#[derive(Parser, Debug)]
#[command(name = "fastsum bench", version)]
struct BenchArgs {
    /// Algorithm to benchmark (repeatable).
    #[arg(short = 'a', long = "algorithm", value_name = "NAME", default_values_t = vec!["md5".to_string()])]
    algorithms: Vec<String>,
    /// Only these strategies (repeatable), e.g. fastsum, slurp, read-4K, mmap, md5sum.
    #[arg(long = "strategy", value_name = "NAME")]
    strategies: Vec<String>,
    /// Seconds to spend timing each strategy (at least 3 iterations).
    /// Default: 5 s shared among the strategies (at least 2 iterations
    /// each), so that a first try takes seconds, not minutes.
    #[arg(long, value_name = "SECS", conflicts_with = "iterations")]
    time: Option<f64>,
    /// Exactly this many timed iterations per strategy (at least 1).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    iterations: Option<u32>,
    /// Drop the files from the page cache before every iteration.
    #[arg(long)]
    cold: bool,
    /// Print the figures as JSON (one object per algorithm).
    #[arg(long)]
    json: bool,
    /// Internal: run one strategy once, for the peak-memory measurement.
    #[arg(long, hide = true, value_name = "STRATEGY")]
    run_once: Option<String>,
    /// Files or directories (walked recursively).
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
}

/// `fastsum bench`'s arguments, for the man page and the completions.
pub fn command() -> clap::Command {
    BenchArgs::command()
}

/// Runs `fastsum bench` with `args` (after the word `bench`).
pub fn run(args: Vec<std::ffi::OsString>) -> i32 {
    let args: BenchArgs = match crate::term::parse_subcommand("fastsum bench", args) {
        Ok(args) => args,
        Err(status) => return status,
    };
    match bench_main(args) {
        Ok(status) => status,
        Err(message) => {
            eprintln!("fastsum bench: {message}");
            1
        }
    }
}

fn bench_main(args: BenchArgs) -> Result<i32, String> {
    let algorithms: Vec<Algorithm> = args
        .algorithms
        .iter()
        .map(|name| name.parse::<Algorithm>().map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let files = collect_files(&args.paths)?;
    if files.is_empty() {
        return Err("no regular files to benchmark".into());
    }
    if let Some(name) = &args.run_once {
        let peak = run_once(name, algorithms[0], &files)?;
        return Ok(crate::term::print_all(
            "fastsum bench",
            format!("{peak}\n").as_bytes(),
            0,
        ));
    }
    let bytes = total_bytes(&files).map_err(|e| e.to_string())?;
    let mut status = 0;
    for algorithm in algorithms {
        let chosen = chosen_strategies(algorithm, files.len(), &args.strategies)?;
        let (measurements, results, cold, share) = measure(&args, algorithm, &chosen, &files)?;
        let report = Report {
            algorithm,
            files: files.len() as u64,
            bytes,
            measurements,
        };
        let text = if args.json {
            render_json(&report)
        } else {
            format!(
                "{algorithm}: {} file{}, {} bytes{}\n{}",
                files.len(),
                if files.len() == 1 { "" } else { "s" },
                bytes,
                if cold { ", cold cache" } else { ", warm cache" },
                render_table(&report, crate::term::stdout_width())
            )
        };
        if crate::term::print_all("fastsum bench", text.as_bytes(), 0) != 0 {
            return Ok(1);
        }
        if !say_disagreements(&files, &results) {
            status = 1;
        }
        if let Some(share) = share.filter(|&s| s < BUSY_SHARE) {
            eprintln!(
                "fastsum bench: the machine was too busy to tell: the timed runs had a CPU {:.0}% \
                 of the time (other programs had the rest), so the rates are low and their \
                 differences may be noise; run it again when the machine is quieter",
                share * 100.0
            );
        }
    }
    Ok(status)
}

/// `--run-once NAME`: a fresh process measuring one strategy or peer
/// tool; its peak RSS.
fn run_once(name: &str, algorithm: Algorithm, files: &[PathBuf]) -> Result<u64, String> {
    let Some(peer) = External::peers(algorithm)
        .into_iter()
        .find(|p| p.label == *name)
    else {
        let strategy = strategies(algorithm, files.len())
            .into_iter()
            .find(|s| s.name() == *name)
            .ok_or_else(|| format!("unknown strategy {name}"))?;
        strategy
            .digests(algorithm, files)
            .map_err(|e| e.to_string())?;
        return own_peak_rss().map_err(|e| e.to_string());
    };
    // The tool is spawned from this small process, so the peak the kernel
    // reports for it is the tool's own (plus this process's few MiB if
    // the tool is smaller still).
    let child = peer
        .command(&files[..files.len().min(EXTERNAL_FILES_PER_RUN)])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{name}: {e}"))?;
    let (status, rss) = wait_for_peak_rss(child).map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("{name} exited with {status}"));
    }
    Ok(rss)
}

/// The strategies `--strategy` names (all with none), each known.
fn chosen_strategies(
    algorithm: Algorithm,
    files: usize,
    wanted: &[String],
) -> Result<Vec<Box<dyn Strategy>>, String> {
    let mut chosen = strategies(algorithm, files);
    if wanted.is_empty() {
        chosen.retain(|s| s.name() != SLOW_BY_DESIGN);
        return Ok(chosen);
    }
    let known: Vec<String> = chosen.iter().map(|s| s.name()).collect();
    if let Some(unknown) = wanted.iter().find(|w| !known.contains(w)) {
        return Err(format!(
            "unknown strategy '{unknown}' for {algorithm} (available: {})",
            known.join(", ")
        ));
    }
    chosen.retain(|s| wanted.contains(&s.name()));
    Ok(chosen)
}

/// Each strategy's times and peak RSS, and the digests each gave (for
/// the agreement check); whether the runs were cold (`--cold`, unless the
/// page cache could not be dropped); the share of the wall clock the
/// in-process single-thread strategies got to run (warm runs only).
#[allow(clippy::type_complexity)] // measurements, digests, cold, share: one run's results
fn measure(
    args: &BenchArgs,
    algorithm: Algorithm,
    chosen: &[Box<dyn Strategy>],
    files: &[PathBuf],
) -> Result<
    (
        Vec<Measurement>,
        Vec<(String, Vec<fastsum::Digest>)>,
        bool,
        Option<f64>,
    ),
    String,
> {
    let budget = match (args.iterations, args.time) {
        (Some(n), _) => Budget::Iterations(n),
        (None, Some(time)) => Budget::Time(Duration::from_secs_f64(time.max(0.0))),
        (None, None) => Budget::Share(SHARED_TIME / chosen.len().max(1) as u32),
    };
    // One thread's CPU time against the wall clock: (ran, waited).
    let mut busy = (Duration::ZERO, Duration::ZERO);
    let mut cold_failed = false;
    let mut evict = || {
        if args.cold && !cold_failed {
            for file in files {
                if let Err(e) = evict_from_cache(file) {
                    eprintln!(
                        "fastsum bench: --cold: cannot drop the page cache ({e}); measuring warm"
                    );
                    cold_failed = true;
                    break;
                }
            }
        }
    };
    let mut measurements = Vec::new();
    let mut results = Vec::new();
    let show_status = !args.json && crate::term::progress::wanted(false);
    for strategy in chosen {
        if show_status {
            eprint!(
                "\x1b[2Kfastsum bench: {algorithm}: {} ...\r",
                strategy.name()
            );
        }
        let (wall, cpu) = (std::time::Instant::now(), own_cpu_time());
        // The page cache is warmed once, by the first strategy's warm-up.
        let warm_up = !args.cold && measurements.is_empty();
        let (times, digests) = run_strategy(
            strategy.as_ref(),
            algorithm,
            files,
            budget,
            warm_up,
            &mut SystemClock::default(),
            &mut evict,
        )
        .map_err(|e| format!("{}: {e}", strategy.name()))?;
        if let (Some(before), Some(after)) = (cpu, own_cpu_time()) {
            if !args.cold && one_thread_in_process(&strategy.name()) {
                busy.0 += after.saturating_sub(before);
                busy.1 += wall.elapsed();
            }
        }
        let peak_rss = peak_rss(strategy.as_ref(), algorithm, &args.paths);
        measurements.push(Measurement {
            name: strategy.name(),
            times,
            peak_rss,
        });
        results.push((strategy.name(), digests));
    }
    if show_status {
        eprint!("\x1b[2K");
    }
    let share =
        (busy.1 > Duration::from_millis(200)).then(|| busy.0.as_secs_f64() / busy.1.as_secs_f64());
    Ok((measurements, results, args.cold && !cold_failed, share))
}

/// The strategies that run on this process's one thread (no child, no
/// workers), whose CPU time against the wall clock says how busy the
/// machine was: `fastsum`, `slurp`, `read-*`, `mmap`.
fn one_thread_in_process(name: &str) -> bool {
    matches!(name, "fastsum" | "slurp" | "mmap") || name.starts_with("read-")
}

/// Says every file on which two strategies gave different digests; false
/// if any did.
fn say_disagreements(files: &[PathBuf], results: &[(String, Vec<fastsum::Digest>)]) -> bool {
    let mut agree = true;
    for d in disagreements(files, results) {
        let hex = |digest: Option<fastsum::Digest>| digest.map_or("(none)".into(), |d| d.to_hex());
        eprintln!(
            "fastsum bench: DIGESTS DISAGREE on {}: {} says {}, {} says {}",
            d.path.display(),
            d.other.0,
            hex(d.other.1),
            d.reference.0,
            hex(d.reference.1)
        );
        agree = false;
    }
    agree
}

/// The strategies for `algorithm`: fastsum's default first (the reference
/// for digest agreement), then the in-process ways, then the system tools.
fn strategies(algorithm: Algorithm, files: usize) -> Vec<Box<dyn Strategy>> {
    let mut list: Vec<Box<dyn Strategy>> = vec![Box::new(FastsumDefault { threads: 1 })];
    let threads = fastsum::TreeOptions::available_threads();
    if files > 1 && threads > 1 {
        list.push(Box::new(FastsumDefault { threads }));
    }
    list.push(Box::new(Slurp));
    for size in [
        64,
        4 << 10,
        32 << 10,
        128 << 10,
        fastsum::ReadStrategy::DEFAULT_BUFFER_SIZE,
        1 << 20,
    ] {
        list.push(Box::new(Streamed(size)));
    }
    list.push(Box::new(Mapped));
    for peer in External::peers(algorithm) {
        list.push(Box::new(peer));
    }
    list
}

/// Peak RSS of one run of `strategy` in a fresh process (this binary in
/// `--run-once` mode, which reports its own high-water mark, or that of the
/// external tool it starts). Not the kernel's figure for a direct child:
/// a child started with vfork inherits this process's high-water mark,
/// which after the slurp strategy is the size of the largest file.
fn peak_rss(strategy: &dyn Strategy, algorithm: Algorithm, files: &[PathBuf]) -> Option<u64> {
    let output = std::process::Command::new(std::env::current_exe().ok()?)
        .args([
            "bench",
            "--run-once",
            &strategy.name(),
            "-a",
            algorithm.name(),
            "--",
        ])
        .args(files)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    String::from_utf8(output.stdout).ok()?.trim().parse().ok()
}

/// The regular files under `paths`, directories walked, in path order.
fn collect_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for path in paths {
        let metadata = std::fs::metadata(path)
            .map_err(|e| format!("{}: {}", path.display(), fastsum::Error::os_message(&e)))?;
        if metadata.is_file() {
            check_readable(path).map_err(|e| e.to_string())?;
            files.push(path.clone());
        } else if metadata.is_dir() {
            let found = Mutex::new(Vec::new());
            WalkOptions::default()
                .walk(path, &|item| match item {
                    WalkItem::File { path, .. } => found.lock().expect("not poisoned").push(path),
                    WalkItem::Special { .. } | WalkItem::Directory { .. } => {}
                    WalkItem::Error(e) => eprintln!("fastsum bench: {e}"),
                })
                .map_err(|e| e.to_string())?;
            let mut found = found.into_inner().expect("not poisoned");
            found.sort();
            files.extend(found);
        } else {
            return Err(format!(
                "{}: not a regular file or directory",
                path.display()
            ));
        }
    }
    Ok(files)
}
