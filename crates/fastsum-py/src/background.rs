//! Library runs on a thread of their own, their results taken by Python
//! through a bounded channel: the GIL is released while Python waits,
//! Ctrl-C is seen within a tenth of a second (signals are checked between
//! waits), and a consumer that stops (a generator closed or dropped) stops
//! the run: its stop flag is set, the channel closed, the thread joined.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use pyo3::prelude::*;

/// How often a waiting Python thread looks for signals.
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// Results a run has not handed to Python yet: a slow consumer holds the
/// run back rather than let results pile up.
pub const QUEUE: usize = 1024;

/// A run on its own thread.
pub struct Background<T> {
    results: Receiver<T>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<(), fastsum::Error>>>,
}

impl<T: Send + 'static> Background<T> {
    /// Starts `run`, which sends its results and ends early when the flag
    /// it is given is set.
    pub fn start(
        run: impl FnOnce(Sender<T>, Arc<AtomicBool>) -> Result<(), fastsum::Error> + Send + 'static,
    ) -> Self {
        let (tx, results) = crossbeam_channel::bounded(QUEUE);
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || run(tx, flag));
        Background {
            results,
            stop,
            thread: Some(thread),
        }
    }

    /// The next result, or `None` when the run is over (then its error,
    /// if it failed as a whole). `KeyboardInterrupt` (or whatever a signal
    /// handler raises) stops the run and is raised.
    pub fn next(&mut self, py: Python<'_>) -> Result<Option<T>, Stopped> {
        loop {
            let results = &self.results;
            match py.detach(|| results.recv_timeout(SIGNAL_CHECK)) {
                Ok(item) => return Ok(Some(item)),
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(e) = py.check_signals() {
                        // Ctrl-C answers at once: the run's threads see
                        // the flag within a batch and end on their own.
                        self.halt(Duration::ZERO);
                        return Err(Stopped::Python(e));
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return match self.join(py) {
                        Some(Err(e)) => Err(Stopped::Library(e)),
                        _ => Ok(None),
                    };
                }
            }
        }
    }

    /// Every result there is, without waiting: a batch for the caller.
    pub fn drain(&mut self, into: &mut Vec<T>) {
        into.extend(self.results.try_iter());
    }

    /// Stops the run and waits for its thread.
    pub fn stop(&mut self, py: Python<'_>) {
        py.detach(|| self.halt(STOP_WAIT));
    }

    fn join(&mut self, py: Python<'_>) -> Option<Result<(), fastsum::Error>> {
        let thread = self.thread.take()?;
        let joined = py.detach(|| join_within(thread, STOP_WAIT))?;
        Some(joined.unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
    }
}

/// How long a stopped run may take to end. Its threads end within a batch
/// unless one is blocked in the kernel (a FIFO named as a file waits for a
/// writer, as md5sum's would): then the run is left to end on its own
/// rather than hang Python.
const STOP_WAIT: Duration = Duration::from_secs(5);

/// Joins `thread` if it ends within `wait`.
fn join_within<R>(thread: JoinHandle<R>, wait: Duration) -> Option<std::thread::Result<R>> {
    let until = std::time::Instant::now() + wait;
    while !thread.is_finished() {
        if std::time::Instant::now() >= until {
            return None;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Some(thread.join())
}

impl<T> Background<T> {
    /// Sets the stop flag, closes the channel (a sender blocked on a full
    /// one wakes) and waits up to `wait` for the thread.
    fn halt(&mut self, wait: Duration) {
        self.stop.store(true, Ordering::Relaxed);
        self.results = crossbeam_channel::never();
        if let Some(thread) = self.thread.take() {
            let _ = join_within(thread, wait);
        }
    }
}

impl<T> Drop for Background<T> {
    fn drop(&mut self) {
        // The run's threads never need the GIL, so waiting for them with
        // it held cannot deadlock.
        self.halt(STOP_WAIT);
    }
}

/// Why a run ended early.
pub enum Stopped {
    /// A signal handler raised (Ctrl-C: `KeyboardInterrupt`).
    Python(PyErr),
    /// The run failed as a whole (an invalid exclude, an unreadable manifest).
    Library(fastsum::Error),
}

impl Stopped {
    /// As a Python exception.
    pub fn into_err(self, py: Python<'_>, bytes_paths: bool) -> PyErr {
        match self {
            Stopped::Python(e) => e,
            Stopped::Library(e) => crate::errors::to_err(py, &e, bytes_paths),
        }
    }
}

/// Runs `run` on a thread of its own to its end and returns what it
/// returns, the GIL released meanwhile; Ctrl-C sets the stop flag it was
/// given and raises at once (the thread ends on its own within a batch).
/// For calls that return everything at once, this spares a channel hop
/// per result.
pub fn run_to_end<R: Send + 'static>(
    py: Python<'_>,
    run: impl FnOnce(Arc<AtomicBool>) -> R + Send + 'static,
) -> PyResult<R> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let (done_tx, done) = crossbeam_channel::bounded::<()>(1);
    let thread = std::thread::spawn(move || {
        let result = run(flag);
        let _ = done_tx.send(());
        result
    });
    loop {
        match py.detach(|| done.recv_timeout(SIGNAL_CHECK)) {
            Err(RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals() {
                    stop.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
            // Done (or the thread panicked and dropped its sender).
            _ => {
                let joined = py.detach(|| thread.join());
                return Ok(joined.unwrap_or_else(|panic| std::panic::resume_unwind(panic)));
            }
        }
    }
}
