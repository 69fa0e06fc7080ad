//! Timing a strategy: a [`Clock`] (real, or fake in tests), the iterations
//! and their statistics, the comparison of digests, and what a child
//! process or this one used (peak RSS), the page cache evicted for `--cold`.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fastsum::{Algorithm, Digest, Error, ErrorKind};

use super::Result;

use super::strategies::Strategy;

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
    /// The default: iterations until this much time has been spent, at
    /// least 2 (a share of the whole run's few seconds).
    Share(Duration),
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
            Budget::Share(limit) => times.len() >= 2 && clock.now() - started >= limit,
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

/// `--cold` off Linux: refused, there being no unprivileged way to evict
/// a file's pages there.
#[cfg(not(target_os = "linux"))]
pub fn evict_from_cache(path: &Path) -> Result<()> {
    Err(Error::with_path(
        path,
        ErrorKind::Io(std::io::Error::other(
            "--cold evicts files from the page cache on Linux only",
        )),
    ))
}

/// Evicts `path`'s pages from the page cache (for `--cold`), as far as the
/// kernel allows without privileges: `posix_fadvise(DONTNEED)` drops clean
/// pages that are not mapped.
#[cfg(target_os = "linux")]
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

/// Waits for a child; off Unix there is no `wait4`, and the peak RSS is
/// reported as 0 (unknown).
#[cfg(not(unix))]
pub fn wait_for_peak_rss(
    mut child: std::process::Child,
) -> Result<(std::process::ExitStatus, u64)> {
    Ok((child.wait().map_err(Error::new)?, 0))
}

/// Reads the peak RSS a finished child reported (`wait4`'s rusage).
#[cfg(unix)]
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

/// The CPU time this process (every thread) has had so far, user and
/// system: against the wall clock, how much of a run it got to run.
#[cfg(unix)]
pub fn own_cpu_time() -> Option<Duration> {
    // SAFETY: rusage is plain data that getrusage fills in.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        (libc::getrusage(libc::RUSAGE_SELF, &mut usage) == 0).then_some(usage)
    }?;
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    Some(time(usage.ru_utime) + time(usage.ru_stime))
}

/// Elsewhere unknown (no "too busy" said).
#[cfg(not(unix))]
pub fn own_cpu_time() -> Option<Duration> {
    None
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
