//! Where `dupes` acts (issue 63.12): never on a file outside every
//! operand's real path (a symbolic link followed by `-L` led out), never
//! on a path that is itself a symbolic link, never on one file seen twice
//! through an overlay (the merged view and a layer under it), and the dry
//! run says exactly what the run then does.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::testenv::{self, TestEnv};

/// Every path under `root` with its kind, inode and bytes (a link's
/// target), sorted: what a run may not change outside what it acts on.
fn held(root: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let m = std::fs::symlink_metadata(&path).unwrap();
            let what = if m.file_type().is_symlink() {
                format!("link {:?}", std::fs::read_link(&path).unwrap())
            } else if m.is_dir() {
                stack.push(path.clone());
                "dir".to_string()
            } else {
                let bytes = std::fs::read(&path).unwrap();
                format!("file {} {:?}", m.ino(), String::from_utf8_lossy(&bytes))
            };
            out.push((path, what));
        }
    }
    out.sort();
    out
}

/// `fastsum dupes ARGS` in `env`, killed past a minute.
fn dupes(env: &TestEnv, args: &[&str]) -> testenv::Outcome {
    let mut all: Vec<&[u8]> = vec![b"dupes"];
    all.extend(args.iter().map(|a| a.as_bytes()));
    env.fastsum_within(Duration::from_secs(60), &all)
}

/// Runs `args` with `--dry-run`, then without, and asserts they said the
/// same (stdout's `would ACTION: ` is the run's `ACTION: `), with the
/// same exit; returns the run.
fn dry_run_then_run(env: &TestEnv, args: &[&str]) -> testenv::Outcome {
    let mut dry_args = args.to_vec();
    dry_args.push("--dry-run");
    let dry = dupes(env, &dry_args);
    let run = dupes(env, args);
    assert_eq!(
        dry.stdout_str().replace("would ", ""),
        run.stdout_str(),
        "{args:?}: the dry run said other than the run did"
    );
    assert_eq!(dry.stderr_str(), run.stderr_str(), "{args:?}");
    assert_eq!(dry.status, run.status, "{args:?}");
    run
}

#[test]
fn dupes_l_never_acts_outside_its_operands_and_its_dry_run_says_so() {
    for action in ["--remove", "--link", "--symlink"] {
        let env = TestEnv::new();
        env.mkdir("op");
        env.mkdir("op/sub");
        env.mkdir("outside");
        env.file(b"op/a", b"same\n");
        env.file(b"op/d", b"same\n");
        env.file(b"op/sub/c", b"same\n");
        env.file(b"outside/b", b"same\n");
        env.file(b"outside/only", b"same\n");
        // A directory link out of the operand, one inside it, and links
        // to single files: one out, one in.
        std::os::unix::fs::symlink("../outside", env.path().join("op/out")).unwrap();
        std::os::unix::fs::symlink("sub", env.path().join("op/in")).unwrap();
        std::os::unix::fs::symlink("../outside/only", env.path().join("op/fout")).unwrap();
        std::os::unix::fs::symlink("d", env.path().join("op/fin")).unwrap();
        let outside = held(&env.path().join("outside"));
        let run = dry_run_then_run(&env, &["-L", action, "op"]);
        assert_eq!(run.status, 1, "{action}: {}", run.stderr_str());
        let err = run.stderr_str();
        assert!(
            err.contains("op/out/b: skipped: its real path")
                && err.contains("is outside every operand"),
            "{action}: {err}"
        );
        assert!(
            err.contains("op/fout: skipped: it is a symbolic link"),
            "{action}: {err}"
        );
        // Nothing outside moved, not even its inode.
        assert_eq!(held(&env.path().join("outside")), outside, "{action}");
        // The copies inside the operand were acted on.
        let d = std::fs::symlink_metadata(env.path().join("op/d"));
        match action {
            "--remove" => assert!(d.is_err(), "op/d was not removed"),
            "--link" => assert_eq!(
                d.unwrap().ino(),
                std::fs::metadata(env.path().join("op/a")).unwrap().ino()
            ),
            _ => assert!(d.unwrap().file_type().is_symlink()),
        }
        assert_eq!(std::fs::read(env.path().join("op/a")).unwrap(), b"same\n");
        // The links themselves are as they were.
        for (link, target) in [("op/out", "../outside"), ("op/fout", "../outside/only")] {
            assert_eq!(
                std::fs::read_link(env.path().join(link)).unwrap(),
                Path::new(target),
                "{action}"
            );
        }
    }
}

/// An overlay mounted for a test (root and overlayfs only; `None`, said,
/// elsewhere): `merged` over `lower` with `upper`, unmounted on drop with
/// every bind mount made of it.
struct Overlay {
    merged: PathBuf,
    mounts: Vec<PathBuf>,
}

impl Overlay {
    fn new(env: &TestEnv, merged: &str, lower: &str) -> Option<Overlay> {
        for d in [merged, lower, "upper", "work"] {
            env.mkdir(d);
        }
        let p = |d: &str| env.path().join(d);
        let options = format!(
            "lowerdir={},upperdir={},workdir={}",
            p(lower).display(),
            p("upper").display(),
            p("work").display()
        );
        let mounted = std::process::Command::new("mount")
            .args(["-t", "overlay", "overlay", "-o", &options])
            .arg(p(merged))
            .output()
            .is_ok_and(|o| o.status.success());
        if !mounted {
            testenv::skip("no overlay file system can be mounted here (needs root and overlayfs)");
            return None;
        }
        Some(Overlay {
            merged: p(merged),
            mounts: vec![p(merged)],
        })
    }

    fn bind(&mut self, from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        let out = std::process::Command::new("mount")
            .arg("--bind")
            .arg(from)
            .arg(to)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        self.mounts.push(to.to_path_buf());
    }
}

impl Drop for Overlay {
    fn drop(&mut self) {
        for m in self.mounts.iter().rev() {
            let _ = std::process::Command::new("umount").arg(m).output();
        }
    }
}

#[test]
fn dupes_never_acts_on_a_file_and_its_overlays_view_of_it() {
    let env = TestEnv::new();
    env.mkdir("b-lower");
    env.file(b"b-lower/f", b"the only copy\n");
    env.file(b"b-lower/twin", b"a real twin\n");
    env.mkdir("d-plain");
    env.file(b"d-plain/twin", b"a real twin\n");
    // "a-merged" sorts first: its file is the kept one, the lower layer's
    // the "duplicate" (removing it takes the merged view's with it).
    let Some(mut overlay) = Overlay::new(&env, "a-merged", "b-lower") else {
        return;
    };
    let merged = overlay.merged.clone();
    overlay.bind(&env.path().join("b-lower"), &env.path().join("c-bound"));
    let read = |p: &str| std::fs::read(env.path().join(p)).unwrap();
    for operands in [["a-merged", "b-lower"], ["a-merged", "c-bound"]] {
        for action in ["--remove", "--link", "--symlink"] {
            let mut args = vec![action];
            args.extend(operands);
            let run = dry_run_then_run(&env, &args);
            let err = run.stderr_str();
            assert!(
                err.contains(&format!(
                    "{}/f: skipped: it and the kept file are one file seen twice: it is in a \
                     layer of the overlay at {}, the kept file in its merged view",
                    operands[1],
                    merged.display()
                )),
                "{args:?}: {err}"
            );
            assert_eq!(run.status, 1, "{args:?}");
            assert_eq!(read("a-merged/f"), b"the only copy\n", "{args:?}");
            assert_eq!(read("b-lower/f"), b"the only copy\n", "{args:?}");
            assert!(
                !std::fs::symlink_metadata(env.path().join("b-lower/f"))
                    .unwrap()
                    .file_type()
                    .is_symlink(),
                "{args:?}"
            );
        }
    }
    // A true copy beside the layer (same file system, not in a layer) is
    // still acted on; the layer's twin, seen through the view, is not.
    let run = dupes(&env, &["--remove", "a-merged", "d-plain"]);
    let err = run.stderr_str();
    assert!(!err.contains("d-plain"), "{err}");
    assert!(
        !env.path().join("d-plain/twin").exists(),
        "d-plain/twin stayed"
    );
    assert_eq!(read("a-merged/twin"), b"a real twin\n");
    assert_eq!(read("b-lower/twin"), b"a real twin\n");
    // Grouped still (a report is no harm): the pair is one group.
    let report = dupes(&env, &["a-merged", "b-lower"]).stdout_str();
    assert!(
        report.contains("a-merged/f") && report.contains("b-lower/f"),
        "{report}"
    );
}
