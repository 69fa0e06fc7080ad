//! The progress bar on stderr: shown only on a terminal whose size is
//! known, only once the work has taken a second, never with
//! `--no-progress`, never on stdout; it fits the terminal's width, so it
//! never wraps.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use fastsum::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long work runs before the bar appears.
const DELAY: Duration = Duration::from_secs(1);
const REFRESH: Duration = Duration::from_millis(100);

/// The widest bar; it gives way to the words on a narrow terminal.
const BAR: usize = 30;
/// The room the words after the bar take at most before the bar narrows
/// (`hashing: 1234/5000 files, 1.23 GiB/4.56 GiB at 456.78 MiB/s, ETA 12
/// minutes`: 68; a 100-column terminal keeps the full bar).
const WORDS: usize = 68;
/// Below this width no bar is drawn (it would be words cut short).
const NARROWEST: u16 = 20;

/// Whether to show a bar at all: stderr is a terminal of a known size (a
/// pseudo-terminal of 0x0 gets no cursor motion) and it was not refused.
pub fn wanted(no_progress: bool) -> bool {
    !no_progress
        && std::io::IsTerminal::is_terminal(&std::io::stderr())
        && columns().is_some_and(|c| c >= NARROWEST)
}

/// The width of the terminal on stderr, as the kernel has it (`None`: not
/// a terminal, or a size of 0, as a pseudo-terminal nobody sized has).
#[cfg(unix)]
fn columns() -> Option<u16> {
    // SAFETY: winsize is plain data; TIOCGWINSZ writes at most one into it
    // and only reads the descriptor number.
    let size = unsafe {
        let mut size: libc::winsize = std::mem::zeroed();
        (libc::ioctl(2, libc::TIOCGWINSZ, &mut size) == 0).then_some(size)
    };
    size.map(|s| s.ws_col).filter(|&c| c > 0)
}

/// Elsewhere the console's own width (indicatif asks it; 80 if unknown).
#[cfg(not(unix))]
fn columns() -> Option<u16> {
    Some(80)
}

/// The bar's width and the words' room on a terminal `columns` wide: the
/// whole line stays one column short of the edge, so it never wraps.
fn layout(columns: u16) -> (usize, usize) {
    let usable = usize::from(columns).saturating_sub(1);
    let bar = usable.saturating_sub(1 + WORDS).max(usable / 4).min(BAR);
    (bar, usable.saturating_sub(bar + 1))
}

/// `words` cut to `room` columns (they are ASCII).
fn fit(mut words: String, room: usize) -> String {
    words.truncate(room);
    words
}

/// What the counters said at one drawing.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Reading {
    /// The stage's name (empty: a run of one stage).
    stage: &'static str,
    found: u64,
    done: u64,
    /// The stage's bytes read, and in all (0: not known).
    bytes: u64,
    bytes_total: u64,
    /// Whether `found` (and `bytes_total`) are final: the walk is over
    /// and no more is to come.
    total_final: bool,
}

impl Reading {
    fn of(progress: &Progress) -> Reading {
        let final_ = progress.walk_done.load(Ordering::Acquire)
            && !progress.more_to_come.load(Ordering::Acquire);
        let from = progress.stage_bytes_from.load(Ordering::Relaxed);
        Reading {
            stage: progress.stage(),
            found: progress.files_found.load(Ordering::Relaxed),
            done: progress.files_done.load(Ordering::Relaxed),
            bytes: progress
                .bytes_done
                .load(Ordering::Relaxed)
                .saturating_sub(from),
            bytes_total: progress.bytes_total.load(Ordering::Relaxed),
            total_final: final_,
        }
    }

    /// The bar's (position, length): by bytes where their total is known,
    /// else by files once their total is final; else empty (a total that
    /// grows would move the bar back).
    fn bar(&self) -> (u64, u64) {
        match (self.bytes_total > 0, self.total_final) {
            (true, _) => (self.bytes.min(self.bytes_total), self.bytes_total),
            (false, true) => (self.done, self.found.max(1)),
            (false, false) => (0, 1),
        }
    }
}

/// The least of a stage's bytes read, and of the time it ran, before its
/// pace is taken for an ETA: the first files' pace says little (a file
/// that took long last held "ETA 2 seconds" for 6 seconds).
const ETA_AFTER: Duration = Duration::from_secs(3);
const ETA_AFTER_SHARE: f64 = 0.05;

/// The words after the bar: the stage, what is done of what is known,
/// the rate, and an ETA only when there is an honest one: from bytes
/// whose total is known and final, once the stage has run `ETA_AFTER`
/// and read a twentieth of them. Files alone give none: their sizes are
/// not known (the walk does not stat), and a large one makes their pace
/// a lie.
fn status_line(r: &Reading, elapsed: Duration, stage_elapsed: Duration) -> String {
    // The stage's own pace (its clock starts when the bar sees it begin).
    let seconds = stage_elapsed.min(elapsed).as_secs_f64().max(1e-3);
    let rate = indicatif::BinaryBytes((r.bytes as f64 / seconds) as u64);
    let mut line = match r.stage {
        "" => String::new(),
        stage => format!("{stage}: "),
    };
    let files = match (r.total_final, r.done) {
        (true, _) => format!("{}/{} files", r.done, r.found),
        // A walk (dupes' first stage): nothing is done but finding.
        (false, 0) => format!("{} files found so far", r.found),
        (false, done) => format!("{done} files done, {} found so far", r.found),
    };
    if r.bytes_total > 0 {
        line.push_str(&format!(
            "{files}, {}/{} at {rate}/s",
            indicatif::BinaryBytes(r.bytes),
            indicatif::BinaryBytes(r.bytes_total)
        ));
    } else {
        line.push_str(&format!(
            "{files}, {} at {rate}/s",
            indicatif::BinaryBytes(r.bytes)
        ));
    }
    let share = r.bytes as f64 / r.bytes_total.max(1) as f64;
    let honest = r.bytes_total > 0
        && r.total_final
        && stage_elapsed >= ETA_AFTER
        && share >= ETA_AFTER_SHARE
        && r.bytes < r.bytes_total;
    if honest {
        let left = stage_elapsed.mul_f64((r.bytes_total - r.bytes) as f64 / r.bytes as f64);
        if left >= Duration::from_secs(1) {
            line.push_str(&format!(", ETA {}", indicatif::HumanDuration(left)));
        }
    }
    line
}

/// A bar that a display thread draws while the work goes on.
#[derive(Default)]
pub struct Display {
    bar: Mutex<Option<ProgressBar>>,
    finished: AtomicBool,
}

impl Display {
    /// Draws from `progress` until [`Display::finish`]; run on its own thread.
    pub fn run(&self, progress: &Progress) {
        let start = Instant::now();
        while start.elapsed() < DELAY {
            if self.finished.load(Ordering::Acquire) {
                return;
            }
            std::thread::sleep(REFRESH);
        }
        // Bytes where their total is known (dupes' stages), else files
        // (the walk does not stat: that would cost a path lookup a file);
        // see `Reading::bar`. A bar of fixed width, so the line does not
        // jump as the figures grow.
        let style = |bar: usize| {
            ProgressStyle::with_template(&format!("{{bar:{bar}}} {{msg}}"))
                .expect("the template is valid")
        };
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        let mut width = None;
        let (mut stage_seen, mut stage_start) = (("", 0), start);
        let mut update = |bar: &ProgressBar| {
            // The terminal may have been resized: the bar follows it.
            let (bar_width, room) = layout(columns().unwrap_or(80));
            if width != Some(bar_width) {
                bar.set_style(style(bar_width));
                width = Some(bar_width);
            }
            let reading = Reading::of(progress);
            if (reading.stage, reading.bytes_total) != stage_seen {
                // A new stage: its pace is its own.
                stage_seen = (reading.stage, reading.bytes_total);
                stage_start = Instant::now();
            }
            let (position, length) = reading.bar();
            bar.set_length(length);
            bar.set_position(position);
            let words = status_line(&reading, start.elapsed(), stage_start.elapsed());
            bar.set_message(fit(words, room));
        };
        update(&bar);
        bar.set_draw_target(ProgressDrawTarget::stderr());
        *self.bar.lock().expect("not poisoned") = Some(bar.clone());
        while !self.finished.load(Ordering::Acquire) {
            update(&bar);
            std::thread::sleep(REFRESH);
        }
        bar.finish_and_clear();
    }

    /// Runs `write` with the bar (if drawn) cleared from the terminal.
    pub fn suspend<R>(&self, write: impl FnOnce() -> R) -> R {
        let bar = self.bar.lock().expect("not poisoned").clone();
        match bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }

    /// Whether a bar is on the screen.
    pub fn visible(&self) -> bool {
        self.bar.lock().expect("not poisoned").is_some()
    }

    /// Stops the display thread, which clears the bar.
    pub fn finish(&self) {
        self.finished.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_line_shows_only_what_is_known() {
        let second = Duration::from_secs(1);
        let line = |r: Reading, elapsed: Duration| status_line(&r, elapsed, elapsed);
        // The walk still going: no total, no fraction, an empty bar.
        let walking = Reading {
            found: 10,
            done: 5,
            bytes: 1024,
            ..Reading::default()
        };
        assert_eq!(
            line(walking, second),
            "5 files done, 10 found so far, 1.00 KiB at 1.00 KiB/s"
        );
        assert_eq!(walking.bar(), (0, 1));
        let only_found = Reading {
            stage: "walking",
            found: 7,
            ..Reading::default()
        };
        assert_eq!(
            line(only_found, second),
            "walking: 7 files found so far, 0 B at 0 B/s"
        );
        // The walk over, files only: a fraction of files, never an ETA
        // (the pace of files says nothing of the bytes to come).
        let walked = Reading {
            found: 3,
            done: 1,
            total_final: true,
            ..Reading::default()
        };
        assert_eq!(line(walked, 10 * second), "1/3 files, 0 B at 0 B/s");
        assert_eq!(walked.bar(), (1, 3));
        // Bytes known (a stage's candidates): the bar by bytes, the stage
        // named, and an ETA from the bytes' pace once it can be honest.
        let hashing = Reading {
            stage: "hashing",
            found: 4,
            done: 1,
            bytes: 1 << 30,
            bytes_total: 4 << 30,
            total_final: true,
        };
        assert_eq!(hashing.bar(), (1 << 30, 4 << 30));
        assert_eq!(
            line(hashing, 4 * second),
            "hashing: 1/4 files, 1.00 GiB/4.00 GiB at 256.00 MiB/s, ETA 12 seconds"
        );
        // Too soon after the stage began, or too little read: no ETA.
        assert!(!status_line(&hashing, 9 * second, 2 * second).contains("ETA"));
        let little = Reading {
            bytes: 100 << 20,
            ..hashing
        };
        assert!(!line(little, 10 * second).contains("ETA"));
        // A total not final (the files still being found): no ETA either.
        let growing = Reading {
            total_final: false,
            ..hashing
        };
        assert!(
            !line(growing, 10 * second).contains("ETA"),
            "{}",
            line(growing, 10 * second)
        );
        // Under a second to go: no "ETA 0 seconds".
        let nearly = Reading {
            bytes: (4 << 30) - 1,
            ..hashing
        };
        assert!(!line(nearly, 10 * second).contains("ETA"));
    }

    #[test]
    fn the_line_fits_the_terminal_one_column_short_of_the_edge() {
        assert_eq!(layout(200), (30, 168));
        assert_eq!(layout(80), (19, 59));
        for columns in NARROWEST..300 {
            let (bar, room) = layout(columns);
            assert!((1..=BAR).contains(&bar), "{columns}: {bar}");
            assert_eq!(bar + 1 + room, usize::from(columns) - 1, "{columns}");
        }
        assert_eq!(fit("0123456789".into(), 4), "0123");
    }
}
