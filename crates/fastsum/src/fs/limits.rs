//! The process's limit on open files.

/// Whether `threads` workers may each hold `lanes` files open at once,
/// with room to spare for directories and the rest: raises the soft limit
/// on open files toward the hard one if that is what it takes. Without
/// this, `-j 4` under `ulimit -n 64` failed files with "Too many open
/// files"; now such a run hashes one file at a time per worker.
#[cfg(unix)]
pub(crate) fn descriptors_for(threads: usize, lanes: usize) -> bool {
    let needed = (threads.max(1) * (lanes + 8) + 256) as libc::rlim_t;
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given and nothing else.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return false;
    }
    if limit.rlim_cur >= needed {
        return true;
    }
    if limit.rlim_max < needed {
        return false;
    }
    limit.rlim_cur = needed;
    // SAFETY: setrlimit reads the struct it is given; raising the soft
    // limit up to the hard one needs no privilege.
    unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 }
}

/// Elsewhere (Windows) the limit on open handles is far above what the
/// lanes hold.
#[cfg(not(unix))]
pub(crate) fn descriptors_for(_threads: usize, _lanes: usize) -> bool {
    true
}
