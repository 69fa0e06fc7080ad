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
    // SAFETY: isatty only inspects the descriptor number.
    !no_progress && unsafe { libc::isatty(2) } == 1
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
        // shown as they are read.
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{wide_bar} {pos}/{len} files, {msg}, ETA {eta}")
                .expect("the template is valid"),
        );
        *self.bar.lock().expect("not poisoned") = Some(bar.clone());
        while !self.finished.load(Ordering::Acquire) {
            let bytes = progress.bytes_done.load(Ordering::Relaxed);
            let seconds = start.elapsed().as_secs_f64();
            bar.set_length(progress.files_found.load(Ordering::Relaxed));
            bar.set_position(progress.files_done.load(Ordering::Relaxed));
            bar.set_message(format!(
                "{} at {}/s",
                indicatif::BinaryBytes(bytes),
                indicatif::BinaryBytes((bytes as f64 / seconds) as u64)
            ));
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
