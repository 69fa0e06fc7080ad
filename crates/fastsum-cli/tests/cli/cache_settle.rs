//! When the cache may trust a stamp. A write through a shared
//! mapping moves mtime only when it first dirties a clean page: later
//! writes to that page move nothing until the kernel writes it back. So
//! by default an entry is stored only for a file whose stamp is older than
//! the kernel's dirty expiry plus its writeback interval (35 s), and never
//! on tmpfs, which is never written back. These tests run fastsum without
//! the suites' `FASTSUM_SETTLE_SECONDS=2`.

use std::path::Path;
use std::process::Command;

use crate::testenv::TestEnv;

/// `fastsum ARGS` in `dir` with the default settle window.
fn fastsum(dir: &Path, args: &[&str], settle: Option<&str>) -> (String, String) {
    let mut command = Command::new(crate::testenv::fastsum_bin());
    command
        .args(args)
        .current_dir(dir)
        .env_remove("FASTSUM_SETTLE_SECONDS");
    if let Some(seconds) = settle {
        command.env("FASTSUM_SETTLE_SECONDS", seconds);
    }
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn stamp(path: &Path) -> (i64, i64, i64, i64) {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).unwrap();
    (m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec())
}

fn reference_md5(path: &Path) -> String {
    let out = Command::new("md5sum").arg(path).output().unwrap();
    String::from_utf8_lossy(&out.stdout)[..32].to_owned()
}

#[test]
fn a_write_through_a_mapping_that_no_stamp_sees_is_never_answered_from_the_cache() {
    let env = TestEnv::new();
    env.mkdir("t");
    let file = env.file(b"t/mapped", &[b'a'; 4096]);
    let handle = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&file)
        .unwrap();
    use std::os::unix::io::AsRawFd;
    // SAFETY: a shared mapping of 4096 bytes of a file we hold open; it is
    // written within its length and unmapped before the test ends.
    let map = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            handle.as_raw_fd(),
            0,
        )
    };
    assert_ne!(map, libc::MAP_FAILED);
    let bytes = map.cast::<u8>();
    // SAFETY: offset 0 lies within the mapping.
    unsafe { bytes.write_volatile(b'X') }; // dirties the page: mtime moves
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let (first, _) = fastsum(env.path(), &["-r", "--cache=c.db", "t"], None);
    assert!(first.starts_with(&reference_md5(&file)), "{first}");
    let before = stamp(&file);
    // SAFETY: offset 1 lies within the mapping.
    unsafe { bytes.add(1).write_volatile(b'Y') }; // the page is dirty already
    assert_eq!(
        stamp(&file),
        before,
        "the second write moved the stamp: no case to test"
    );
    let (second, said) = fastsum(
        env.path(),
        &["-r", "--cache=c.db", "--cache-stats", "t"],
        None,
    );
    let now = reference_md5(&file);
    assert_ne!(first, second, "the cache answered the old bytes");
    assert!(second.starts_with(&now), "{second} vs {now}");
    assert!(said.contains("0 hits"), "{said}");
    // SAFETY: the mapping made above, unmapped once.
    unsafe { libc::munmap(map, 4096) };
}

#[test]
fn nothing_on_tmpfs_is_cached_or_stamped() {
    let env = TestEnv::new();
    let mnt = env.mkdir("mnt");
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=4m", "none"])
        .arg(&mnt)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        crate::testenv::skip("no tmpfs mount here (needs root)");
        return;
    }
    std::fs::write(mnt.join("f"), b"in memory\n").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2300));
    // Even with the suites' 2 s window: tmpfs is never written back.
    let two = Some("2");
    fastsum(env.path(), &["-r", "--cache=c.db", "mnt"], two);
    let (_, said) = fastsum(
        env.path(),
        &["-r", "--cache=c.db", "--cache-stats", "mnt"],
        two,
    );
    let (listed, _) = fastsum(env.path(), &["-r", "--json", "--stamps", "mnt"], two);
    let _ = Command::new("umount").arg(&mnt).status();
    assert!(said.contains("0 hits, 1 miss"), "{said}");
    // And the stats say why.
    assert!(
        said.contains("; 1 file not kept (no stamp to trust: tmpfs"),
        "{said}"
    );
    assert!(!listed.contains("mtime_ns"), "{listed}");
}

#[test]
fn the_default_window_is_the_kernels_writeback_and_the_suites_is_two_seconds() {
    let env = TestEnv::new();
    env.mkdir("t");
    env.file(b"t/f", b"written 2.3 s before the run\n");
    std::thread::sleep(std::time::Duration::from_millis(2300));
    // Default (35 s here): not stored; 2 s: stored.
    fastsum(env.path(), &["-r", "--cache=d.db", "t"], None);
    let (_, said) = fastsum(
        env.path(),
        &["-r", "--cache=d.db", "--cache-stats", "t"],
        None,
    );
    assert!(said.contains("0 hits, 1 miss"), "{said}");
    fastsum(env.path(), &["-r", "--cache=s.db", "t"], Some("2"));
    let (_, said) = fastsum(
        env.path(),
        &["-r", "--cache=s.db", "--cache-stats", "t"],
        Some("2"),
    );
    assert!(said.contains("1 hit, 0 misses"), "{said}");
}
