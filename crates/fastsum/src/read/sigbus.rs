//! The SIGBUS guard under mapped windows.
//!
//! If another process shrinks the file while it is
//! mapped, touching a page past the new end raises SIGBUS, which would kill
//! the process. A process-wide SIGBUS handler checks whether the faulting
//! address lies in a window this module registered; if so it maps a zero
//! page over it (so the faulting load completes), marks the window as
//! faulted, and the hash is reported as `ErrorKind::ChangedWhileReading`
//! rather than a digest of bytes that were never read. Faults anywhere else
//! go to the previous handler (by default: the usual crash).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Windows that can be mapped at once across all threads.
const SLOT_COUNT: usize = 64;

struct Slot {
    start: AtomicUsize,
    len: AtomicUsize,
    faulted: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY_SLOT: Slot = Slot {
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    faulted: AtomicBool::new(false),
};
static SLOTS: [Slot; SLOT_COUNT] = [EMPTY_SLOT; SLOT_COUNT];
static PREVIOUS_ACTION: OnceLock<libc::sigaction> = OnceLock::new();
static HANDLER_READY: OnceLock<bool> = OnceLock::new();
/// The page size, read once before the handler is installed: the handler
/// may only call async-signal-safe functions, and `sysconf` is not one.
static PAGE_SIZE: AtomicUsize = AtomicUsize::new(4096);

/// A registered window: while it lives, SIGBUS inside it is caught.
pub(super) struct Guard {
    slot: &'static Slot,
}

impl Guard {
    pub(super) fn register(start: usize, len: usize) -> Option<Guard> {
        if !*HANDLER_READY.get_or_init(install_handler) {
            return None;
        }
        for slot in &SLOTS {
            if slot
                .start
                .compare_exchange(0, start, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                slot.faulted.store(false, Ordering::Release);
                slot.len.store(len, Ordering::Release);
                return Some(Guard { slot });
            }
        }
        None
    }

    pub(super) fn faulted(&self) -> bool {
        self.slot.faulted.load(Ordering::Acquire)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.slot.len.store(0, Ordering::Release);
        self.slot.start.store(0, Ordering::Release);
    }
}

fn install_handler() -> bool {
    PAGE_SIZE.store(page_size(), Ordering::Release);
    // SAFETY: a zeroed `sigaction` is a valid "no flags, empty mask" value;
    // we fill in the handler and flags before passing it to the kernel, and
    // `previous` is a valid out-pointer for the old action.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigbus as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_NODEFER;
        libc::sigemptyset(&mut action.sa_mask);
        let mut previous: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGBUS, &action, &mut previous) != 0 {
            return false;
        }
        let _ = PREVIOUS_ACTION.set(previous);
    }
    true
}

extern "C" fn on_sigbus(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    // SAFETY: the kernel passes a valid siginfo_t for an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    for slot in &SLOTS {
        let start = slot.start.load(Ordering::Acquire);
        let len = slot.len.load(Ordering::Acquire);
        if start != 0 && addr >= start && addr < start + len {
            let page = PAGE_SIZE.load(Ordering::Acquire);
            let page_start = addr & !(page - 1);
            // SAFETY: the page lies inside a window this module mapped and
            // still owns (the slot is registered until the Guard drops, which
            // happens before the unmap). MAP_FIXED replaces that page of the
            // file mapping with an anonymous zero page, so the faulting load
            // can complete; the window is then reported as faulted and its
            // bytes are never used for a digest. mmap is a plain syscall and
            // is safe to call from a signal handler on Linux.
            let replaced = unsafe {
                libc::mmap(
                    page_start as *mut libc::c_void,
                    page,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            slot.faulted.store(true, Ordering::Release);
            if replaced != libc::MAP_FAILED {
                return;
            }
        }
    }
    // Not ours: hand over to whatever handled SIGBUS before us.
    match PREVIOUS_ACTION.get() {
        Some(previous)
            if previous.sa_sigaction != libc::SIG_DFL && previous.sa_sigaction != libc::SIG_IGN =>
        {
            if previous.sa_flags & libc::SA_SIGINFO != 0 {
                // SAFETY: the previous handler was installed as an
                // SA_SIGINFO handler, so it has this signature.
                let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                    unsafe { std::mem::transmute(previous.sa_sigaction) };
                f(signal, info, context);
            } else {
                // SAFETY: a non-SA_SIGINFO handler takes just the signal number.
                let f: extern "C" fn(libc::c_int) =
                    unsafe { std::mem::transmute(previous.sa_sigaction) };
                f(signal);
            }
        }
        _ => {
            // SAFETY: restoring the default action, then returning, re-runs
            // the faulting instruction, which now terminates the process
            // with SIGBUS exactly as if we had never installed a handler.
            unsafe {
                libc::signal(libc::SIGBUS, libc::SIG_DFL);
            }
        }
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 {
        size as usize
    } else {
        4096
    }
}
