//! The progress bar on stderr: shown only on a terminal whose size is
//! known, only once the work has taken a second, never with
//! `--no-progress`, never on stdout; it fits the terminal's width, so it
//! never wraps (issue 55.4).

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
/// (`12345/50000 files, 1.23 GiB at 456.78 MiB/s, ETA 12 minutes`: 59).
const WORDS: usize = 60;
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

/// The words after the bar: files done of found, bytes and rate, and an
/// ETA only when there is an honest one: the walk is over (the total is
/// known) and a file is done to take the pace from. Files, not bytes: the
/// walk does not stat, so the bytes to come are unknown.
fn status_line(found: u64, done: u64, bytes: u64, elapsed: Duration, walk_done: bool) -> String {
    let seconds = elapsed.as_secs_f64().max(1e-3);
    let mut line = format!(
        "{done}/{found} files, {} at {}/s",
        indicatif::BinaryBytes(bytes),
        indicatif::BinaryBytes((bytes as f64 / seconds) as u64)
    );
    if walk_done && done > 0 && found > done {
        let left = elapsed.mul_f64((found - done) as f64 / done as f64);
        // Under a second the files' pace says nothing (a large file last
        // held "ETA 0 seconds" up for seconds): no ETA rather than a wrong one.
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
        // The walk does not stat files (that would cost a path lookup per
        // file), so the total is counted in files; bytes and throughput are
        // shown as they are read. A bar of fixed width, so the line does
        // not jump as the figures grow (issue 13).
        let style = |bar: usize| {
            ProgressStyle::with_template(&format!("{{bar:{bar}}} {{msg}}"))
                .expect("the template is valid")
        };
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        let mut width = None;
        let mut update = |bar: &ProgressBar| {
            // The terminal may have been resized: the bar follows it.
            let (bar_width, room) = layout(columns().unwrap_or(80));
            if width != Some(bar_width) {
                bar.set_style(style(bar_width));
                width = Some(bar_width);
            }
            let (found, done) = (
                progress.files_found.load(Ordering::Relaxed),
                progress.files_done.load(Ordering::Relaxed),
            );
            bar.set_length(found);
            bar.set_position(done);
            let words = status_line(
                found,
                done,
                progress.bytes_done.load(Ordering::Relaxed),
                start.elapsed(),
                progress.walk_done.load(Ordering::Acquire),
            );
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
        // Nothing done yet, or the walk still going: no ETA, no empty field.
        assert_eq!(
            status_line(3, 0, 0, second, true),
            "0/3 files, 0 B at 0 B/s"
        );
        assert_eq!(
            status_line(10, 5, 1024, second, false),
            "5/10 files, 1.00 KiB at 1.00 KiB/s"
        );
        // One of three done in 2 s: 4 s to go, from the files' pace.
        assert_eq!(
            status_line(3, 1, 0, 2 * second, true),
            "1/3 files, 0 B at 0 B/s, ETA 4 seconds"
        );
        // Under a second to go by the files' pace: no "ETA 0 seconds".
        assert_eq!(
            status_line(1000, 999, 0, 2 * second, true),
            "999/1000 files, 0 B at 0 B/s"
        );
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
