//! The suite's environment, set once before any test starts, so that
//! nothing a user or a machine set changes a verdict: the README's install
//! puts a `fastsum` on PATH (~/.cargo/bin, or /usr/bin from the .deb), a
//! user has ~/.cache, ~/.aws, XDG_* and FASTSUM_* settings of their own.
//!
//! - `fastsum` on PATH is the binary under test (`bin/` here, first).
//! - HOME is an empty directory of the run's own; the user's is kept in
//!   `FASTSUM_TEST_USER_HOME` only to find reference tools that
//!   `cargo install` put in ~/.cargo/bin (testenv::find_reference).
//! - Every `AWS_*` and `XDG_*` variable is removed, and every `FASTSUM_*`
//!   but the harness's own knobs ([`HARNESS`]).
//!
//! ssh never reads the user's ~/.ssh/config (the suite's transports say
//! `-F /dev/null`), and the suite's sshd gives every session a PATH whose
//! `fastsum` is not one (tests/cli/sshd.rs).

use std::path::PathBuf;

/// The `FASTSUM_*` variables the test scripts set on purpose: the settle
/// window, the portable file layer, OpenSSL on or off, the SIMD width a
/// suite forces, the reference builds, the skip policy and log, the seeds,
/// the binary under test (testenv::fastsum_bin).
const HARNESS: &[&str] = &[
    "FASTSUM_SETTLE_SECONDS",
    "FASTSUM_PORTABLE",
    "FASTSUM_OPENSSL",
    "FASTSUM_SIMD",
    "FASTSUM_GNU_BIN",
    "FASTSUM_FIXTURES",
    "FASTSUM_TESTS_REQUIRED",
    "FASTSUM_SKIP_LOG",
    "FASTSUM_TEST_SEED",
    "FASTSUM_SOAK_CASES",
    "FASTSUM_FUZZ_SECONDS",
    "FASTSUM_FUZZ_SEED",
    "FASTSUM_TEST_BIN",
];

// SAFETY: this runs before main, on the only thread the process has, so
// nothing reads the environment while it changes (set_var's requirement);
// it touches only the environment and the run's own scratch directory.
#[ctor::ctor(unsafe)]
fn hermetic() {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    forget_finished_runs(&tmp);
    let scratch = tmp.join(format!("cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let home = scratch.join("home");
    let bin = scratch.join("bin");
    if std::fs::create_dir_all(&home).is_err() || std::fs::create_dir_all(&bin).is_err() {
        return; // the tests that need them fail and say why
    }
    let _ = std::os::unix::fs::symlink(crate::testenv::fastsum_bin(), bin.join("fastsum"));
    let drop: Vec<_> = std::env::vars_os()
        .filter_map(|(k, _)| {
            let name = k.to_str()?.to_string();
            let user_setting = name.starts_with("AWS_")
                || name.starts_with("XDG_")
                || (name.starts_with("FASTSUM_") && !HARNESS.contains(&name.as_str()));
            user_setting.then_some(k)
        })
        .collect();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let path =
        std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(&path)))
            .unwrap_or(path);
    let user_home = std::env::var_os("HOME");
    // SAFETY: see the function's comment: one thread, before main.
    unsafe {
        for k in drop {
            std::env::remove_var(k);
        }
        if let Some(h) = user_home {
            std::env::set_var("FASTSUM_TEST_USER_HOME", h);
        }
        std::env::set_var("HOME", &home);
        std::env::set_var("PATH", path);
    }
}

/// Removes the scratch directories of earlier runs whose process is gone
/// (a run cannot remove its own at exit: the test harness exits without
/// running destructors).
fn forget_finished_runs(tmp: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("cli-")) else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !std::path::Path::new("/proc").join(pid).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
