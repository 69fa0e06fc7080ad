//! The progress bar on stderr: shown only on a terminal, only once the work
//! has taken a second, never with `--no-progress`, never on stdout.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use fastsum::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long work runs before the bar appears.
const DELAY: Duration = Duration::from_secs(1);
const REFRESH: Duration = Duration::from_millis(100);

/// Whether to show a bar at all: stderr is a terminal and it was not refused.
pub fn wanted(no_progress: bool) -> bool {
    !no_progress && std::io::IsTerminal::is_terminal(&std::io::stderr())
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
        line.push_str(&format!(", ETA {}", indicatif::HumanDuration(left)));
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
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden()).with_style(
            ProgressStyle::with_template("{bar:30} {msg}").expect("the template is valid"),
        );
        let update = |bar: &ProgressBar| {
            let (found, done) = (
                progress.files_found.load(Ordering::Relaxed),
                progress.files_done.load(Ordering::Relaxed),
            );
            bar.set_length(found);
            bar.set_position(done);
            bar.set_message(status_line(
                found,
                done,
                progress.bytes_done.load(Ordering::Relaxed),
                start.elapsed(),
                progress.walk_done.load(Ordering::Acquire),
            ));
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
    }
}
