//! `fastsum bench`: ways of checksumming the same files, timed side by side
//! and shown as Perl's `Benchmark::cmpthese` shows them.
//!
//! * A [`Strategy`] turns a list of files into one digest per file. The
//!   built-in ones are in-process ([`Slurp`], [`Streamed`], [`Mapped`],
//!   [`Default`](FastsumDefault)); [`External`] runs a system tool.
//! * [`run_strategy`] times iterations through a [`Clock`] (a real one, or a
//!   fake one in tests), after a warm-up.
//! * [`disagreements`] compares every strategy's digests with the first's:
//!   a benchmark of wrong answers is worthless.
//! * [`render_table`] is a pure function of the measurements, so the layout,
//!   the order and the percentage matrix are tested exactly.

use std::fmt::Write as _;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::engine::{self, Operand, Outcome, Progress, TreeOptions};
use crate::error::{Error, ErrorKind, Result};
use crate::io::{FileHasher, ReadStrategy};

/// A way of computing one digest per file.
pub trait Strategy: Sync {
    /// Its name in the table.
    fn name(&self) -> String;
    /// The digest of every file of `files`, in order.
    fn digests(&self, algorithm: Algorithm, files: &[PathBuf]) -> Result<Vec<Digest>>;
}

/// Read the whole file into memory, then hash it (Go's `ReadFile`, Perl's
/// slurp): memory grows with the file.
pub struct Slurp;

impl Strategy for Slurp {
    fn name(&self) -> String {
        "slurp".into()
    }
    fn digests(&self, algorithm: Algorithm, files: &[PathBuf]) -> Result<Vec<Digest>> {
        files
            .iter()
            .map(|path| {
                let bytes = std::fs::read(path).map_err(|e| Error::with_path(path, e))?;
                Ok(algorithm.hash_bytes(&bytes))
            })
            .collect()
    }
}

/// `read(2)` into one reusable buffer of a given size.
pub struct Streamed(pub usize);

impl Strategy for Streamed {
    fn name(&self) -> String {
        format!("read-{}", human_size(self.0))
    }
    fn digests(&self, algorithm: Algorithm, files: &[PathBuf]) -> Result<Vec<Digest>> {
        let mut hasher = FileHasher::with_strategy(ReadStrategy::Read {
            buffer_size: self.0,
        });
        files
            .iter()
            .map(|path| {
                let file = File::open(path).map_err(|e| Error::with_path(path, e))?;
                hasher
                    .hash_reader(algorithm, &file)
                    .map_err(|e| Error::with_path(path, e))
            })
            .collect()
    }
}

/// Every file mapped (in bounded windows).
pub struct Mapped;

impl Strategy for Mapped {
    fn name(&self) -> String {
        "mmap".into()
    }
    fn digests(&self, algorithm: Algorithm, files: &[PathBuf]) -> Result<Vec<Digest>> {
        let mut hasher = FileHasher::with_strategy(ReadStrategy::Mmap);
        files
            .iter()
            .map(|path| hasher.hash_path(algorithm, path))
            .collect()
    }
}

/// What `fastsum` itself does, on `threads` threads.
pub struct FastsumDefault {
    /// Hashing threads.
    pub threads: usize,
}

impl Strategy for FastsumDefault {
    fn name(&self) -> String {
        if self.threads == 1 {
            "fastsum".into()
        } else {
            format!("fastsum-j{}", self.threads)
        }
    }
    fn digests(&self, algorithm: Algorithm, files: &[PathBuf]) -> Result<Vec<Digest>> {
        let mut options = TreeOptions::new(algorithm);
        options.threads = self.threads;
        let operands: Vec<Operand> = files.iter().cloned().map(Operand::Path).collect();
        let mut digests = Vec::with_capacity(files.len());
        let mut failure = None;
        engine::hash_operands(
            &options,
            &operands,
            &Progress::default(),
            |record| match record.outcome {
                Outcome::Hashed(h) => digests.push(h.digest),
                Outcome::Failed(kind) | Outcome::WalkFailed(kind) => {
                    failure.get_or_insert(Error::with_path(record.path, kind));
                }
                Outcome::Skipped(_) => {}
            },
        )?;
        match failure {
            Some(e) => Err(e),
            None => Ok(digests),
        }
    }
}

/// A system tool run as a child process on all the files at once; its
/// output is parsed for one digest per line, in order.
pub struct External {
    /// The name in the table.
    pub label: String,
    /// The program and the arguments before the file names.
    pub command: Vec<String>,
}

impl External {
    /// The peers on `PATH` for `algorithm` (md5sum, `openssl dgst`, b3sum,
    /// xxhsum ...), as they are invoked.
    pub fn peers(algorithm: Algorithm) -> Vec<External> {
        let mut candidates: Vec<(&str, Vec<&str>)> = Vec::new();
        let gnu = match algorithm {
            Algorithm::Md5 => Some("md5sum"),
            Algorithm::Sha1 => Some("sha1sum"),
            Algorithm::Sha224 => Some("sha224sum"),
            Algorithm::Sha256 => Some("sha256sum"),
            Algorithm::Sha384 => Some("sha384sum"),
            Algorithm::Sha512 => Some("sha512sum"),
            Algorithm::Blake2b { output_len: 64 } => Some("b2sum"),
            _ => None,
        };
        if let Some(tool) = gnu {
            candidates.push((tool, vec![tool]));
        }
        let openssl = match algorithm {
            Algorithm::Md5 => Some("-md5"),
            Algorithm::Sha1 => Some("-sha1"),
            Algorithm::Sha224 => Some("-sha224"),
            Algorithm::Sha256 => Some("-sha256"),
            Algorithm::Sha384 => Some("-sha384"),
            Algorithm::Sha512 => Some("-sha512"),
            Algorithm::Blake2b { output_len: 64 } => Some("-blake2b512"),
            _ => None,
        };
        if let Some(flag) = openssl {
            candidates.push(("openssl", vec!["openssl", "dgst", flag, "-r"]));
        }
        match algorithm {
            Algorithm::Blake3 => candidates.push(("b3sum", vec!["b3sum"])),
            Algorithm::Xxh32 => candidates.push(("xxhsum", vec!["xxhsum", "-H0"])),
            Algorithm::Xxh64 => candidates.push(("xxhsum", vec!["xxhsum", "-H1"])),
            Algorithm::Xxh128 => candidates.push(("xxhsum", vec!["xxhsum", "-H2"])),
            _ => {}
        }
        candidates
            .into_iter()
            .filter(|(program, _)| on_path(program))
            .map(|(label, command)| External {
                label: label.to_string(),
                command: command.into_iter().map(String::from).collect(),
            })
            .collect()
    }

    /// The child process for `files`.
    pub fn command(&self, files: &[PathBuf]) -> Command {
        let mut cmd = Command::new(&self.command[0]);
        cmd.args(&self.command[1..]).args(files);
        cmd
    }
}

/// Files per child process of an [`External`] strategy, as `xargs -n 1000`
/// would pass them: a whole tree does not fit in one argument list.
pub const EXTERNAL_FILES_PER_RUN: usize = 1000;

impl Strategy for External {
    fn name(&self) -> String {
        self.label.clone()
    }
    fn digests(&self, algorithm: Algorithm, files: &[PathBuf]) -> Result<Vec<Digest>> {
        let mut digests = Vec::with_capacity(files.len());
        for chunk in files.chunks(EXTERNAL_FILES_PER_RUN) {
            digests.extend(self.digests_of_chunk(algorithm, chunk)?);
        }
        Ok(digests)
    }
}

impl External {
    fn digests_of_chunk(&self, _: Algorithm, files: &[PathBuf]) -> Result<Vec<Digest>> {
        let output = self
            .command(files)
            .output()
            .map_err(|e| Error::with_path(&self.command[0], e))?;
        let failed = |why: String| {
            Error::with_path(
                &self.command[0],
                std::io::Error::other(format!("{} {why}", self.label)),
            )
        };
        if !output.status.success() {
            return Err(failed(format!("exited with {}", output.status)));
        }
        let digests: Vec<Digest> = output
            .stdout
            .split(|&b| b == b'\n')
            .filter(|line| !line.is_empty())
            .map(|line| {
                let line = line.strip_prefix(b"\\").unwrap_or(line);
                let hex = line.split(|&b| b == b' ').next().unwrap_or_default();
                std::str::from_utf8(hex)
                    .ok()
                    .and_then(|h| Digest::from_hex(h).ok())
            })
            .collect::<Option<_>>()
            .ok_or_else(|| failed("printed a line without a digest".into()))?;
        if digests.len() != files.len() {
            return Err(failed(format!(
                "printed {} digests for {} files",
                digests.len(),
                files.len()
            )));
        }
        Ok(digests)
    }
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// "64B", "4K", "1M": a byte count as a strategy name says it.
pub fn human_size(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{}M", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{}K", b >> 10),
        b => format!("{b}B"),
    }
}

/// Where time comes from: the real monotonic clock, or a fake in tests.
pub trait Clock {
    /// Time since some fixed point.
    fn now(&mut self) -> Duration;
}

/// The monotonic system clock.
pub struct SystemClock(Instant);

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock(Instant::now())
    }
}

impl Clock for SystemClock {
    fn now(&mut self) -> Duration {
        self.0.elapsed()
    }
}

/// How long to measure each strategy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Budget {
    /// Exactly this many timed iterations.
    Iterations(u32),
    /// Iterations until this much time has been spent (at least 3).
    Time(Duration),
}

/// What one strategy measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    /// The strategy's name.
    pub name: String,
    /// Wall time of each timed iteration.
    pub times: Vec<Duration>,
    /// Peak RSS of a fresh process running it once, in bytes, if measured.
    pub peak_rss: Option<u64>,
}

impl Measurement {
    /// The median iteration time.
    pub fn median(&self) -> Duration {
        let mut sorted = self.times.clone();
        sorted.sort_unstable();
        let n = sorted.len();
        match n {
            0 => Duration::ZERO,
            _ if n % 2 == 1 => sorted[n / 2],
            _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2,
        }
    }

    /// (slowest - fastest) / median, in percent: how noisy the runs were.
    pub fn spread_percent(&self) -> f64 {
        let (Some(min), Some(max)) = (self.times.iter().min(), self.times.iter().max()) else {
            return 0.0;
        };
        let median = self.median().as_secs_f64();
        if median == 0.0 {
            return 0.0;
        }
        100.0 * (max.as_secs_f64() - min.as_secs_f64()) / median
    }
}

/// Runs `strategy` once to warm up (unless `warm_up` is false), then times
/// it per `budget` with `clock`, calling `before_each` before every timed
/// iteration (to drop the page cache for `--cold`). Returns the times and
/// the digests of the last iteration.
pub fn run_strategy(
    strategy: &dyn Strategy,
    algorithm: Algorithm,
    files: &[PathBuf],
    budget: Budget,
    warm_up: bool,
    clock: &mut dyn Clock,
    before_each: &mut dyn FnMut(),
) -> Result<(Vec<Duration>, Vec<Digest>)> {
    let mut digests = if warm_up {
        strategy.digests(algorithm, files)?
    } else {
        Vec::new()
    };
    let mut times = Vec::new();
    let started = clock.now();
    loop {
        let done = match budget {
            Budget::Iterations(n) => times.len() >= n.max(1) as usize,
            Budget::Time(limit) => times.len() >= 3 && clock.now() - started >= limit,
        };
        if done {
            break;
        }
        before_each();
        let t0 = clock.now();
        digests = strategy.digests(algorithm, files)?;
        times.push(clock.now() - t0);
    }
    Ok((times, digests))
}

/// One file on which two strategies gave different digests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disagreement {
    /// The file.
    pub path: PathBuf,
    /// The reference strategy (the first) and its digest (if it gave one).
    pub reference: (String, Option<Digest>),
    /// The strategy that disagrees and its digest (if it gave one).
    pub other: (String, Option<Digest>),
}

/// Every file on which a strategy's digest differs from the first
/// strategy's.
pub fn disagreements(files: &[PathBuf], results: &[(String, Vec<Digest>)]) -> Vec<Disagreement> {
    let Some((reference_name, reference)) = results.first() else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (name, digests) in &results[1..] {
        for (i, path) in files.iter().enumerate() {
            let (expected, actual) = (reference.get(i), digests.get(i));
            if expected != actual {
                found.push(Disagreement {
                    path: path.clone(),
                    reference: (reference_name.clone(), expected.copied()),
                    other: (name.clone(), actual.copied()),
                });
            }
        }
    }
    found
}

/// What was measured: the input and each strategy.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Files hashed per iteration.
    pub files: u64,
    /// Bytes hashed per iteration.
    pub bytes: u64,
    /// Each strategy's measurement.
    pub measurements: Vec<Measurement>,
}

impl Report {
    /// The measurements sorted slowest first (by median).
    pub fn slowest_first(&self) -> Vec<&Measurement> {
        let mut rows: Vec<&Measurement> = self.measurements.iter().collect();
        rows.sort_by(|a, b| b.median().cmp(&a.median()).then(a.name.cmp(&b.name)));
        rows
    }

    fn rate(&self, m: &Measurement) -> f64 {
        let seconds = m.median().as_secs_f64();
        if seconds == 0.0 {
            return f64::INFINITY;
        }
        self.bytes as f64 / 1e6 / seconds
    }
}

/// Perl's rate formatting: fewer decimals as the number grows.
fn format_rate(rate: f64) -> String {
    if rate >= 100.0 {
        format!("{rate:.0}")
    } else if rate >= 10.0 {
        format!("{rate:.1}")
    } else if rate >= 1.0 {
        format!("{rate:.2}")
    } else {
        format!("{rate:.3}")
    }
}

fn format_duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

/// The cmpthese table: rows and columns slowest to fastest, a `Rate` column
/// (MB/s, and files/s when more than one file), the percentage matrix
/// (`--` on the diagonal; cell = row rate / column rate - 1), then median,
/// spread and peak RSS per strategy; every column right-aligned and joined
/// by one space, as Perl prints it. Ends with a recommendation line.
pub fn render_table(report: &Report) -> String {
    let rows = report.slowest_first();
    let many_files = report.files > 1;
    let mut header = vec![String::new(), "Rate".to_string()];
    if many_files {
        header.push("Files".into());
    }
    header.extend(rows.iter().map(|m| m.name.clone()));
    header.extend(["median".into(), "spread".into(), "peak RSS".into()]);
    let mut table = vec![header];
    for row in &rows {
        let rate = report.rate(row);
        let mut cells = vec![row.name.clone(), format!("{} MB/s", format_rate(rate))];
        if many_files {
            let per_second = report.files as f64 / row.median().as_secs_f64();
            cells.push(format!("{}/s", format_rate(per_second)));
        }
        for column in &rows {
            cells.push(if std::ptr::eq(*row, *column) {
                "--".into()
            } else {
                format!("{:.0}%", 100.0 * (rate / report.rate(column) - 1.0))
            });
        }
        cells.push(format_duration(row.median()));
        cells.push(format!("±{:.0}%", row.spread_percent()));
        cells.push(match row.peak_rss {
            Some(bytes) => format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0)),
            None => "-".into(),
        });
        table.push(cells);
    }
    let widths: Vec<usize> = (0..table[0].len())
        .map(|c| {
            table
                .iter()
                .map(|r| r[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in &table {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, &w)| format!("{cell:>w$}"))
            .collect();
        out.push_str(line.join(" ").trim_end());
        out.push('\n');
    }
    if let Some(fastest) = rows.last() {
        let _ = write!(
            out,
            "\nFastest: {} ({} MB/s",
            fastest.name,
            format_rate(report.rate(fastest))
        );
        if let Some(slowest) = rows.first().filter(|s| s.name != fastest.name) {
            let _ = write!(
                out,
                ", {:.1}x {}",
                report.rate(fastest) / report.rate(slowest),
                slowest.name
            );
        }
        out.push(')');
        let frugal = rows
            .iter()
            .filter_map(|m| m.peak_rss.map(|rss| (rss, m)))
            .min_by_key(|(rss, _)| *rss);
        if let (Some((rss, m)), Some(fastest_rss)) = (frugal, fastest.peak_rss) {
            if m.name != fastest.name {
                let _ = write!(
                    out,
                    "; least memory: {} ({:.1} MiB vs {:.1} MiB)",
                    m.name,
                    rss as f64 / 1048576.0,
                    fastest_rss as f64 / 1048576.0
                );
            }
        }
        out.push_str(".\n");
    }
    out
}

/// The same figures as JSON, for programs.
pub fn render_json(report: &Report) -> String {
    let mut out = format!(
        "{{\"algorithm\":\"{}\",\"files\":{},\"bytes\":{},\"strategies\":[",
        report.algorithm.name(),
        report.files,
        report.bytes
    );
    for (i, m) in report.slowest_first().iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let times: Vec<String> = m
            .times
            .iter()
            .map(|t| format!("{:.9}", t.as_secs_f64()))
            .collect();
        let _ = write!(
            out,
            "{{\"name\":\"{}\",\"median_seconds\":{:.9},\"mb_per_second\":{:.3},\"spread_percent\":{:.3},\"peak_rss_bytes\":{},\"times_seconds\":[{}]}}",
            m.name.replace('\\', "\\\\").replace('"', "\\\""),
            m.median().as_secs_f64(),
            report.rate(m),
            m.spread_percent(),
            m.peak_rss.map_or("null".to_string(), |r| r.to_string()),
            times.join(",")
        );
    }
    out.push_str("]}\n");
    out
}

/// Evicts `path`'s pages from the page cache (for `--cold`), as far as the
/// kernel allows without privileges: `posix_fadvise(DONTNEED)` drops clean
/// pages that are not mapped.
pub fn evict_from_cache(path: &Path) -> Result<()> {
    use std::os::unix::io::AsRawFd;
    let file = File::open(path).map_err(|e| Error::with_path(path, e))?;
    // SAFETY: posix_fadvise only reads the descriptor and flags; `file`
    // keeps the descriptor open for the call.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(Error::with_path(
            path,
            ErrorKind::Io(std::io::Error::from_raw_os_error(rc)),
        ));
    }
    Ok(())
}

/// Reads the peak RSS a finished child reported (`wait4`'s rusage).
pub fn wait_for_peak_rss(child: std::process::Child) -> Result<(std::process::ExitStatus, u64)> {
    use std::os::unix::process::ExitStatusExt;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid out-value; wait4 fills it and
    // `status` for our own child `pid`, which nothing else waits for (the
    // `Child` is forgotten below, so it never waits or reaps it again).
    let (rc, usage) = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        let rc = libc::wait4(pid, &mut status, 0, &mut usage);
        (rc, usage)
    };
    std::mem::forget(child);
    if rc < 0 {
        return Err(Error::new(std::io::Error::last_os_error()));
    }
    // Linux reports ru_maxrss in KiB.
    Ok((
        std::process::ExitStatus::from_raw(status),
        usage.ru_maxrss as u64 * 1024,
    ))
}

/// This process's peak RSS in bytes (`VmHWM` in `/proc/self/status`: the
/// high-water mark of this process image alone, unlike `getrusage`).
pub fn own_peak_rss() -> Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|e| Error::with_path("/proc/self/status", e))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kib| kib.trim().parse::<u64>().ok())
        .map(|kib| kib * 1024)
        .ok_or_else(|| {
            Error::with_path("/proc/self/status", std::io::Error::other("no VmHWM line"))
        })
}

/// Total size of `files` (for the rate).
pub fn total_bytes(files: &[PathBuf]) -> Result<u64> {
    files.iter().try_fold(0u64, |sum, path| {
        let len = std::fs::metadata(path)
            .map_err(|e| Error::with_path(path, e))?
            .len();
        Ok(sum + len)
    })
}

/// Reads nothing, but proves `path` is a readable regular file (bench
/// refuses anything else up front, with a clear error).
pub fn check_readable(path: &Path) -> Result<()> {
    let mut file = File::open(path).map_err(|e| Error::with_path(path, e))?;
    let mut byte = [0u8; 1];
    file.read(&mut byte)
        .map_err(|e| Error::with_path(path, e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clock that advances by scripted steps each time it is read.
    struct FakeClock {
        now: Duration,
        steps: std::vec::IntoIter<Duration>,
    }

    impl Clock for FakeClock {
        fn now(&mut self) -> Duration {
            let now = self.now;
            self.now += self.steps.next().unwrap_or(Duration::ZERO);
            now
        }
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn measurement(name: &str, times_ms: &[u64], rss_mib: Option<u64>) -> Measurement {
        Measurement {
            name: name.into(),
            times: times_ms.iter().map(|&t| ms(t)).collect(),
            peak_rss: rss_mib.map(|m| m << 20),
        }
    }

    #[test]
    fn the_table_matches_a_hand_computed_cmpthese() {
        // 100 MB hashed: 1000 ms -> 100 MB/s, 625 ms -> 160 MB/s,
        // 400 ms -> 250 MB/s. Percentages by hand: 100/160-1 = -37.5%
        // ("-38%": Rust rounds half away from zero... -37.5 -> -38),
        // 100/250-1 = -60%, 160/100-1 = 60%, 160/250-1 = -36%,
        // 250/100-1 = 150%, 250/160-1 = 56.25%.
        let report = Report {
            algorithm: Algorithm::Md5,
            files: 1,
            bytes: 100_000_000,
            measurements: vec![
                measurement("mmap", &[400, 390, 410], Some(9)),
                measurement("slurp", &[1000, 1000, 1010], Some(97)),
                measurement("read-4K", &[625, 620, 630], Some(2)),
            ],
        };
        // Each column as wide as its widest cell, right-aligned, one space
        // between: Perl's layout.
        let expected = [
            "            Rate slurp read-4K mmap     median spread peak RSS",
            "  slurp 100 MB/s    --    -38% -60%    1.000 s    ±1% 97.0 MiB",
            "read-4K 160 MB/s   60%      -- -36% 625.000 ms    ±2%  2.0 MiB",
            "   mmap 250 MB/s  150%     56%   -- 400.000 ms    ±5%  9.0 MiB",
            "",
            "Fastest: mmap (250 MB/s, 2.5x slurp); least memory: read-4K (2.0 MiB vs 9.0 MiB).",
            "",
        ]
        .join("\n");
        assert_eq!(render_table(&report), expected);
    }

    #[test]
    fn trees_get_a_files_per_second_column() {
        let report = Report {
            algorithm: Algorithm::Xxh3,
            files: 50,
            bytes: 5_000_000,
            measurements: vec![
                measurement("a", &[100], None),
                measurement("b", &[50], None),
            ],
        };
        let table = render_table(&report);
        let lines: Vec<&str> = table.lines().collect();
        // 5 MB in 100 ms = 50 MB/s and 500 files/s; in 50 ms = 100 MB/s,
        // 1000 files/s; a/b - 1 = -50%, b/a - 1 = 100%.
        assert_eq!(
            lines[0],
            "       Rate  Files    a    b     median spread peak RSS"
        );
        assert_eq!(
            lines[1],
            "a 50.0 MB/s  500/s   -- -50% 100.000 ms    ±0%        -"
        );
        assert_eq!(
            lines[2],
            "b  100 MB/s 1000/s 100%   --  50.000 ms    ±0%        -"
        );
    }

    #[test]
    fn iterations_are_timed_with_the_clock() {
        struct Constant;
        impl Strategy for Constant {
            fn name(&self) -> String {
                "constant".into()
            }
            fn digests(&self, _: Algorithm, files: &[PathBuf]) -> Result<Vec<Digest>> {
                Ok(files.iter().map(|_| Digest::from_bytes(&[1])).collect())
            }
        }
        // Reads: start, then (t0, t1) per iteration.
        let mut clock = FakeClock {
            now: Duration::ZERO,
            steps: vec![ms(0), ms(7), ms(1), ms(5), ms(1), ms(9)].into_iter(),
        };
        let files = [PathBuf::from("x")];
        let mut evictions = 0;
        let (times, digests) = run_strategy(
            &Constant,
            Algorithm::Md5,
            &files,
            Budget::Iterations(3),
            true,
            &mut clock,
            &mut || evictions += 1,
        )
        .unwrap();
        assert_eq!(times, [ms(7), ms(5), ms(9)]);
        assert_eq!(digests.len(), 1);
        assert_eq!(evictions, 3);
        let m = Measurement {
            name: "c".into(),
            times,
            peak_rss: None,
        };
        assert_eq!(m.median(), ms(7));
        assert!((m.spread_percent() - 100.0 * 4.0 / 7.0).abs() < 1e-9);
    }

    #[test]
    fn a_lying_strategy_is_caught() {
        struct Liar;
        impl Strategy for Liar {
            fn name(&self) -> String {
                "liar".into()
            }
            fn digests(&self, algorithm: Algorithm, files: &[PathBuf]) -> Result<Vec<Digest>> {
                let mut d = Slurp.digests(algorithm, files)?;
                d[1] = algorithm.hash_bytes(b"not what the file holds");
                Ok(d)
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<PathBuf> = (0..3)
            .map(|i| {
                let p = dir.path().join(format!("f{i}"));
                std::fs::write(&p, vec![i as u8; 5000 * i]).unwrap();
                p
            })
            .collect();
        let strategies: Vec<Box<dyn Strategy>> = vec![
            Box::new(FastsumDefault { threads: 1 }),
            Box::new(Slurp),
            Box::new(Streamed(64)),
            Box::new(Mapped),
            Box::new(Liar),
        ];
        let results: Vec<(String, Vec<Digest>)> = strategies
            .iter()
            .map(|s| (s.name(), s.digests(Algorithm::Sha256, &files).unwrap()))
            .collect();
        let found = disagreements(&files, &results);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].path, files[1]);
        assert_eq!(found[0].other.0, "liar");
        assert_eq!(found[0].reference.0, "fastsum");
    }

    #[test]
    fn json_carries_the_same_figures() {
        let report = Report {
            algorithm: Algorithm::Md5,
            files: 1,
            bytes: 1_000_000,
            measurements: vec![
                measurement("slow", &[20], Some(1)),
                measurement("fast", &[10], None),
            ],
        };
        assert_eq!(
            render_json(&report),
            "{\"algorithm\":\"md5\",\"files\":1,\"bytes\":1000000,\"strategies\":[\
             {\"name\":\"slow\",\"median_seconds\":0.020000000,\"mb_per_second\":50.000,\"spread_percent\":0.000,\"peak_rss_bytes\":1048576,\"times_seconds\":[0.020000000]},\
             {\"name\":\"fast\",\"median_seconds\":0.010000000,\"mb_per_second\":100.000,\"spread_percent\":0.000,\"peak_rss_bytes\":null,\"times_seconds\":[0.010000000]}]}\n"
        );
    }
}
