//! The I/O floor of hashing many files: open, read and close every file of
//! a NUL-separated list on N threads, hashing nothing, three ways:
//! `sys` (open, fstat, read to fstat's length, close), `nostat` (read to a
//! short read) and `uring` (io_uring: `openat` into a fixed slot,
//! hard-linked to two reads, IN_FLIGHT files per thread; the slot is reused
//! by the next open, so no close). Prints the wall time.

use io_uring::{opcode, squeue, types, IoUring};
use std::ffi::CString;

use std::sync::atomic::{AtomicUsize, Ordering};

const BUF: usize = 64 * 1024;

fn load(list: &str) -> Vec<CString> {
    std::fs::read(list).unwrap().split(|&b| b == 0).filter(|s| !s.is_empty())
        .map(|s| CString::new(s).unwrap()).collect()
}

fn sys(names: &[CString], next: &AtomicUsize, fstat: bool) -> u64 {
    let mut buf = vec![0u8; 4 * BUF];
    let mut sum = 0u64;
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= names.len() { return sum; }
        unsafe {
            let fd = libc::open(names[i].as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
            if fd < 0 { continue; }
            let mut size = i64::MAX;
            if fstat { let mut st: libc::stat = std::mem::zeroed(); libc::fstat(fd, &mut st); size = st.st_size; }
            let mut total = 0i64;
            while total < size {
                let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
                if n <= 0 { break; }
                total += n as i64; sum += buf[0] as u64;
            }
            libc::close(fd);
        }
    }
}

fn uring(names: &[CString], next: &AtomicUsize, k: usize) -> u64 {
    let mut ring = IoUring::builder().setup_single_issuer().build((4 * k) as u32).unwrap();
    ring.submitter().register_files_sparse(k as u32).unwrap();
    let mut bufs = vec![0u8; 2 * BUF * k];
    let mut sum = 0u64;
    // per slot: (file index, offset)
    let mut offs = vec![0u64; k];
    let mut busy = 0usize;
    let mut done_names = false;
    let mut free: Vec<usize> = (0..k).collect();
    loop {
        // fill free slots
        while let Some(slot) = free.pop() {
            if done_names { break; }
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= names.len() { done_names = true; free.push(slot); break; }
            let buf = unsafe { bufs.as_mut_ptr().add(slot * 2 * BUF) };
            let open = opcode::OpenAt::new(types::Fd(libc::AT_FDCWD), names[i].as_ptr())
                .flags(libc::O_RDONLY)
                .file_index(Some(types::DestinationSlot::try_from_slot_target(slot as u32).unwrap()))
                .build().flags(squeue::Flags::IO_HARDLINK).user_data((slot as u64) << 8 | 1);
            let r1 = opcode::Read::new(types::Fixed(slot as u32), buf, BUF as u32).offset(0)
                .build().flags(squeue::Flags::IO_HARDLINK).user_data((slot as u64) << 8 | 2);
            let r2 = opcode::Read::new(types::Fixed(slot as u32), unsafe { buf.add(BUF) }, BUF as u32).offset(BUF as u64)
                .build().user_data((slot as u64) << 8 | 3);
            offs[slot] = 0;
            unsafe { let mut sq = ring.submission(); sq.push(&open).unwrap(); sq.push(&r1).unwrap(); sq.push(&r2).unwrap(); }
            busy += 1;
        }
        if busy == 0 { return sum; }
        ring.submit_and_wait(1).unwrap();
        let cqes: Vec<(u64, i32)> = ring.completion().map(|c: io_uring::cqueue::Entry| (c.user_data(), c.result())).collect();
        for (ud, res) in cqes {
            let slot = (ud >> 8) as usize; let kind = ud & 0xff;
            let buf = unsafe { bufs.as_mut_ptr().add(slot * 2 * BUF) };
            match kind {
                1 => { if res < 0 { static ONCE: std::sync::Once = std::sync::Once::new(); ONCE.call_once(|| eprintln!("open err {}", res)); } }
                2 => { if res > 0 { sum += unsafe { *buf } as u64; } }
                3 | 4 => {
                    if res > 0 {
                        sum += unsafe { *buf } as u64;
                        // more to read
                        let off = if kind == 3 { 2 * BUF as u64 } else { offs[slot] + res as u64 };
                        offs[slot] = off;
                        let r = opcode::Read::new(types::Fixed(slot as u32), buf, BUF as u32).offset(off)
                            .build().user_data((slot as u64) << 8 | 4);
                        unsafe { ring.submission().push(&r).unwrap(); }
                    } else { busy -= 1; free.push(slot); }
                }
                _ => unreachable!(),
            }
        }
    }
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let names = load(&a[1]);
    let threads: usize = a[2].parse().unwrap();
    let mode = a[3].clone();
    let k: usize = a.get(4).map(|s| s.parse().unwrap()).unwrap_or(32);
    let next = AtomicUsize::new(0);
    let t = std::time::Instant::now();
    let total: u64 = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads).map(|_| s.spawn(|| match mode.as_str() {
            "sys" => sys(&names, &next, true), "nostat" => sys(&names, &next, false), "uring" => uring(&names, &next, k), _ => panic!() })).collect();
        hs.into_iter().map(|h| h.join().unwrap()).sum()
    });
    eprintln!("{} {:?} {}", mode, t.elapsed(), total);
}
