//! Hashing regular files through memory maps, in bounded windows, safely.
//!
//! Why: the copy that `read(2)` makes from the page cache costs about as
//! much as the hash itself for the memory-speed algorithms (xxHash, BLAKE3)
//! and 4-13% of MD5 and SHA; a map hands the hasher the page cache directly.
//! The sweep in `bench/results/BENCHMARKS-LOG.md` measures the gain and places the
//! threshold ([`super::MMAP_THRESHOLD`]).
//!
//! Bounded: the file is mapped [`WINDOW`] bytes at a time and each window is
//! unmapped before the next, so mapped pages (which count in RSS) never
//! exceed one window, whatever the file size. b3sum maps the whole file and
//! needs over 5 GiB of RSS for a 5 GiB file; fastsum does not.
//!
//! Safe against truncation: each window is registered with [`super::sigbus`]
//! while it is mapped, so a file shrunk under the map is reported as
//! [`ErrorKind::ChangedWhileReading`] rather than a crash or a digest of
//! bytes that were never read.

use super::Meter;
use std::fs::File;

use crate::algo::{Algorithm, StreamHasher};
use crate::digest::Digest;
use crate::error::ErrorKind;

use super::sigbus::Guard;

/// Bytes mapped at a time: 8 MiB keeps RSS well under the 32 MiB bound
/// while making the per-window map/unmap cost negligible (under 1% at
/// 10 GB/s, measured in `bench/results/BENCHMARKS-LOG.md`).
pub const WINDOW: usize = 8 * 1024 * 1024;

/// Bytes past the window being mapped that the prefetching helper asks the
/// kernel to read (`posix_fadvise(WILLNEED)`), for cold files.
const READ_AHEAD: u64 = 4 * WINDOW as u64;

/// Hashes the first `len` bytes of `file` through mapped windows.
///
/// Returns `Ok(None)` when the file cannot be mapped at all (the caller then
/// reads it), and [`ErrorKind::ChangedWhileReading`] when the file shrank or
/// grew while it was being hashed. `progress`, if given, counts the bytes
/// hashed as each window is done.
///
/// With `prefetch`, a helper thread maps (and populates) the next window
/// while this one hashes the current: for one large file on an otherwise
/// idle core, the page-table work leaves the hashing thread's path.
pub fn hash_mapped(
    algorithm: Algorithm,
    file: &File,
    len: u64,
    meter: &Meter,
    prefetch: bool,
) -> Result<Option<Digest>, ErrorKind> {
    if len <= WINDOW as u64 {
        // One window: the one-shot function, which for xxHash beats the
        // streaming state.
        return crate::algo::dispatch!(algorithm, H => {
            match map_window(file, 0, len as usize, true, |bytes| H::oneshot(algorithm, bytes))? {
                Window::Unmapped(_) => Ok(None),
                Window::Absorbed(digest) => {
                    if file.metadata()?.len() != len {
                        return Err(ErrorKind::ChangedWhileReading);
                    }
                    meter.add(len);
                    Ok(Some(digest))
                }
            }
        });
    }
    crate::algo::dispatch!(algorithm, H => {
        let mut hasher = H::new(algorithm);
        let mapped = if prefetch {
            for_each_window_prefetched(file, len, meter, |window| hasher.update(window))?
        } else {
            for_each_window(file, len, meter, |window| hasher.update(window))?
        };
        Ok(mapped.then(|| hasher.finalize()))
    })
}

/// What became of one window.
enum Window<R> {
    /// Mapped, absorbed, unmapped, no fault.
    Absorbed(R),
    /// Never mapped (or no guard slot free): nothing was touched.
    Unmapped(ErrorKind),
}

/// Maps `len` bytes of `file` at `offset` (a multiple of the page size),
/// registers the SIGBUS guard before any byte is touched, hands the bytes to
/// `absorb`, and unmaps them. With `populate`, the kernel fills the page
/// table in one go (cheapest for a single reader); without, pages fault in
/// as they are touched. A window that faulted (the file shrank) is
/// [`ErrorKind::ChangedWhileReading`], whatever `absorb` returned.
fn map_window<R>(
    file: &File,
    offset: u64,
    len: usize,
    populate: bool,
    absorb: impl FnOnce(&[u8]) -> R,
) -> Result<Window<R>, ErrorKind> {
    // SAFETY: mapping a file is unsafe because another process may change
    // it underneath us. Changes in place can only make the digest stale (as
    // with read(2)); truncation, which would otherwise crash, is caught by
    // the SIGBUS guard registered below before any byte is touched, and
    // callers re-check the size after the last window.
    let map = unsafe {
        let mut options = memmap2::MmapOptions::new();
        options.offset(offset).len(len);
        if populate {
            options.populate();
        }
        options.map(file)
    };
    let map = match map {
        Ok(map) => map,
        Err(e) => return Ok(Window::Unmapped(ErrorKind::Io(e))),
    };
    let Some(guard) = Guard::register(map.as_ptr() as usize, map.len()) else {
        return Ok(Window::Unmapped(ErrorKind::ChangedWhileReading));
    };
    let _ = map.advise(memmap2::Advice::Sequential);
    let result = absorb(&map);
    let faulted = guard.faulted();
    drop(guard);
    drop(map);
    if faulted {
        return Err(ErrorKind::ChangedWhileReading);
    }
    Ok(Window::Absorbed(result))
}

/// Maps `len` bytes of `file` at `offset` (a multiple of the page size),
/// hands them to `absorb`, and unmaps them; pages fault in as touched (by
/// the calling thread: several threads can each map their own window).
#[cfg(feature = "tree")]
pub fn with_window<R>(
    file: &File,
    offset: u64,
    len: usize,
    absorb: impl FnOnce(&[u8]) -> R,
) -> Result<R, ErrorKind> {
    match map_window(file, offset, len, false, absorb)? {
        Window::Absorbed(result) => Ok(result),
        Window::Unmapped(error) => Err(error),
    }
}

/// Maps `file` [`WINDOW`] bytes at a time (page tables populated), up to
/// `len`, and hands each window to `absorb`, unmapping it before the next.
///
/// Returns `Ok(false)`, having absorbed nothing, when the file cannot be
/// mapped at all; [`ErrorKind::ChangedWhileReading`] when a window faulted
/// (the file shrank) or the size differs at the end. Only on `Ok(true)` did
/// `absorb` see exactly the file's `len` bytes.
fn for_each_window(
    file: &File,
    len: u64,
    meter: &Meter,
    mut absorb: impl FnMut(&[u8]),
) -> Result<bool, ErrorKind> {
    let mut offset = 0u64;
    while offset < len {
        let window = (len - offset).min(WINDOW as u64) as usize;
        match map_window(file, offset, window, true, &mut absorb)? {
            Window::Absorbed(()) => {}
            Window::Unmapped(_) if offset == 0 => return Ok(false),
            Window::Unmapped(error) => return Err(error),
        }
        offset += window as u64;
        meter.add(window as u64);
    }
    if file.metadata()?.len() != len {
        return Err(ErrorKind::ChangedWhileReading);
    }
    Ok(true)
}

/// [`for_each_window`] with a helper thread mapping window `k + 1` (page
/// tables populated) while the caller absorbs window `k`. The hand-over is
/// a rendezvous, so at most two windows are mapped at once (RSS stays
/// bounded); the SIGBUS guard is registered before the caller touches a
/// byte, as in [`map_window`].
///
/// The caller hands each absorbed window back and the helper unmaps it
/// before it maps the next: unmapping pages that were just read in (small
/// folios, each taken off the rmap and the LRU's books) took about 5% of
/// the hashing thread's time in a cold 1 GiB MD5 (80 ms, `perf record`),
/// while the helper has time to spare.
fn for_each_window_prefetched(
    file: &File,
    len: u64,
    meter: &Meter,
    mut absorb: impl FnMut(&[u8]),
) -> Result<bool, ErrorKind> {
    std::thread::scope(|scope| {
        let (windows_tx, windows_rx) = std::sync::mpsc::sync_channel(0);
        let (spent_tx, spent_rx) = std::sync::mpsc::channel::<memmap2::Mmap>();
        scope.spawn(move || {
            let mut offset = 0u64;
            while offset < len {
                // The window the caller finished before taking the last one
                // handed over is back by now: unmap it first (RSS stays at
                // two windows).
                while let Ok(spent) = spent_rx.try_recv() {
                    drop(spent);
                }
                let window = (len - offset).min(WINDOW as u64) as usize;
                // Cold, populating one window at a time keeps one window's
                // reads in flight; ask for the next few as well, so the
                // device has more queued. Cached pages make
                // this a no-op.
                let ahead = offset + window as u64;
                if ahead < len {
                    crate::fs::residency::will_need_range(file, ahead, READ_AHEAD.min(len - ahead));
                }
                // SAFETY: as in `map_window`: changes in place can only make
                // the digest stale; truncation is caught by the guard the
                // receiving thread registers before touching any byte.
                let map = unsafe {
                    memmap2::MmapOptions::new()
                        .offset(offset)
                        .len(window)
                        .populate()
                        .map(file)
                };
                if windows_tx.send((offset, map)).is_err() {
                    return;
                }
                offset += window as u64;
            }
            // No more windows: the caller's loop ends, and the last ones
            // come back until it drops its end.
            drop(windows_tx);
            for spent in spent_rx {
                drop(spent);
            }
        });
        for (offset, map) in windows_rx {
            let map = match map {
                Ok(map) => map,
                Err(_) if offset == 0 => return Ok(false),
                Err(e) => return Err(ErrorKind::Io(e)),
            };
            let Some(guard) = Guard::register(map.as_ptr() as usize, map.len()) else {
                if offset == 0 {
                    return Ok(false);
                }
                return Err(ErrorKind::ChangedWhileReading);
            };
            absorb(&map);
            let faulted = guard.faulted();
            drop(guard);
            let window = map.len() as u64;
            if let Err(unsent) = spent_tx.send(map) {
                drop(unsent.0);
            }
            if faulted {
                return Err(ErrorKind::ChangedWhileReading);
            }
            meter.add(window);
        }
        if file.metadata()?.len() != len {
            return Err(ErrorKind::ChangedWhileReading);
        }
        Ok(true)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn mapped_and_streamed_digests_agree_in_one_window_and_across_edges() {
        let data: Vec<u8> = (0..(WINDOW + 12_345)).map(|i| (i % 253) as u8).collect();
        for len in [1, 4096, 300_000, WINDOW, WINDOW + 12_345] {
            let mut f = tempfile::tempfile().unwrap();
            f.write_all(&data[..len]).unwrap();
            for algorithm in Algorithm::ALL {
                let mapped =
                    hash_mapped(algorithm, &f, len as u64, &Meter::default(), len > WINDOW)
                        .unwrap()
                        .unwrap();
                // The streaming state, fed in odd pieces, is the reference
                // for both the one-window one-shot and the windowed paths.
                let streamed = crate::algo::dispatch!(algorithm, H => {
                    let mut h = H::new(algorithm);
                    data[..len].chunks(77_777).for_each(|c| h.update(c));
                    h.finalize()
                });
                assert_eq!(mapped, streamed, "{algorithm} {len}");
            }
        }
    }

    #[test]
    fn windows_handed_back_to_the_helper_leave_the_digest_whole() {
        // Four windows, the last a few bytes: the helper unmaps windows the
        // hasher returns while it maps the next ones, and the last ones
        // after it has none left to map.
        let len = 3 * WINDOW + 5;
        let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&data).unwrap();
        for algorithm in [Algorithm::Md5, Algorithm::Xxh3] {
            let expected = crate::algo::dispatch!(algorithm, H => H::oneshot(algorithm, &data));
            use std::sync::atomic::{AtomicU64, Ordering};
            let progress = std::sync::Arc::new(AtomicU64::new(0));
            for prefetch in [true, false] {
                progress.store(0, Ordering::Relaxed);
                let meter = Meter::counting(progress.clone());
                let mapped = hash_mapped(algorithm, &f, len as u64, &meter, prefetch);
                assert_eq!(
                    mapped.unwrap(),
                    Some(expected),
                    "{algorithm} prefetch {prefetch}"
                );
                assert_eq!(progress.load(Ordering::Relaxed), len as u64);
            }
        }
    }

    #[test]
    fn a_file_truncated_under_the_map_is_an_error_not_a_crash() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shrinking");
        std::fs::write(&path, vec![7u8; 3 * WINDOW]).unwrap();
        let file = File::open(&path).unwrap();
        let len = file.metadata().unwrap().len();
        // Shrink the file after we learned its length: every window past
        // the new end faults.
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(4096)
            .unwrap();
        for prefetch in [false, true] {
            let result = hash_mapped(Algorithm::Xxh3, &file, len, &Meter::default(), prefetch);
            assert!(
                matches!(result, Err(ErrorKind::ChangedWhileReading) | Ok(None)),
                "prefetch {prefetch}: {result:?}"
            );
            assert!(
                !matches!(result, Ok(Some(_))),
                "a digest for bytes that were not read"
            );
        }
    }
}
