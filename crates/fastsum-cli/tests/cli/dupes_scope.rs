//! Where `dupes` acts: never on a file outside every
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

/// Overlays mounted for a test (root and overlayfs only; `None`, said,
/// elsewhere), unmounted on drop with every bind mount made, last first.
struct Overlay {
    merged: PathBuf,
    mounts: Vec<PathBuf>,
}

impl Overlay {
    /// `merged` over `lower` (names in `env`), with an upper and a work
    /// directory of its own.
    fn new(env: &TestEnv, merged: &str, lower: &str) -> Option<Overlay> {
        let mut overlay = Overlay {
            merged: env.path().join(merged),
            mounts: Vec::new(),
        };
        overlay.stack(env, merged, lower).then_some(overlay)
    }

    /// One more overlay, `merged` over `lower`; false (said) if none can be
    /// mounted here.
    fn stack(&mut self, env: &TestEnv, merged: &str, lower: &str) -> bool {
        let (upper, work) = (format!("{merged}.upper"), format!("{merged}.work"));
        for d in [merged, lower, &upper, &work] {
            std::fs::create_dir_all(env.path().join(d)).unwrap();
        }
        let p = |d: &str| env.path().join(d);
        let options = format!(
            "lowerdir={},upperdir={},workdir={}",
            p(lower).display(),
            p(&upper).display(),
            p(&work).display()
        );
        let mounted = std::process::Command::new("mount")
            .args(["-t", "overlay", "overlay", "-o", &options])
            .arg(p(merged))
            .output()
            .is_ok_and(|o| o.status.success());
        if !mounted {
            testenv::skip("no overlay file system can be mounted here (needs root and overlayfs)");
            return false;
        }
        self.mounts.push(p(merged));
        true
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

/// The helper's hostile pass: overlays the mount table misnames. The
/// lower directory renamed after the mount (an empty one in its place), a
/// nested overlay (the file two overlays down), and an overlay of another
/// mount namespace reached through /proc/PID/root: in each, the kept file
/// is the merged view's and the layer's file is never removed.
#[test]
fn dupes_never_acts_through_an_overlay_the_mount_table_misnames() {
    let check = |env: &TestEnv, operands: [&str; 2], view: &Path, layer: &Path| {
        let run = dry_run_then_run(env, &["--remove", operands[0], operands[1]]);
        assert_eq!(run.status, 1, "{operands:?}: {}", run.stderr_str());
        assert!(run.stderr_str().contains("skipped"), "{}", run.stderr_str());
        assert!(run.stdout.is_empty(), "{operands:?}: {}", run.stdout_str());
        assert_eq!(std::fs::read(view).unwrap(), b"precious\n", "{operands:?}");
        assert_eq!(std::fs::read(layer).unwrap(), b"precious\n", "{operands:?}");
    };
    // The lower directory renamed after the mount.
    let env = TestEnv::new();
    env.mkdir("b-lower");
    env.file(b"b-lower/f", b"precious\n");
    let Some(_overlay) = Overlay::new(&env, "a-merged", "b-lower") else {
        return;
    };
    std::fs::rename(env.path().join("b-lower"), env.path().join("c-moved")).unwrap();
    env.mkdir("b-lower");
    let (view, layer) = (env.path().join("a-merged/f"), env.path().join("c-moved/f"));
    check(&env, ["a-merged", "c-moved"], &view, &layer);
    // Nested: a-top over b-mid over c-low.
    let env = TestEnv::new();
    env.mkdir("c-low");
    env.file(b"c-low/f", b"precious\n");
    let Some(mut overlay) = Overlay::new(&env, "b-mid", "c-low") else {
        return;
    };
    assert!(overlay.stack(&env, "a-top", "b-mid"));
    let (view, layer) = (env.path().join("a-top/f"), env.path().join("c-low/f"));
    check(&env, ["a-top", "c-low"], &view, &layer);
    // Another mount namespace: the overlay is not in this process's
    // mount table at all.
    let env = TestEnv::new();
    for d in ["l", "u", "w", "m"] {
        env.mkdir(d);
    }
    env.file(b"l/f", b"precious\n");
    let p = |d: &str| env.path().join(d).display().to_string();
    let script = format!(
        "mount -t overlay overlay -o lowerdir={},upperdir={},workdir={} {} && echo ready && sleep 120",
        p("l"),
        p("u"),
        p("w"),
        p("m")
    );
    let mut holder = std::process::Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", &script])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("unshare");
    let mut ready = String::new();
    use std::io::BufRead as _;
    let _ = std::io::BufReader::new(holder.stdout.take().unwrap()).read_line(&mut ready);
    if ready.trim() != "ready" {
        let _ = holder.kill();
        let _ = holder.wait();
        testenv::skip("no overlay can be mounted in a mount namespace of its own here");
        return;
    }
    let view = PathBuf::from(format!("/proc/{}/root{}", holder.id(), p("m")));
    let layer = env.path().join("l/f");
    let view_operand = view.display().to_string();
    let run = dry_run_then_run(&env, &["--remove", &view_operand, "l"]);
    let _ = std::fs::read(view.join("f")).map(|b| assert_eq!(b, b"precious\n"));
    let kept_view = std::fs::read(view.join("f"));
    let _ = holder.kill();
    let _ = holder.wait();
    assert_eq!(run.status, 1, "{}", run.stderr_str());
    assert!(run.stdout.is_empty(), "{}", run.stdout_str());
    assert_eq!(kept_view.unwrap(), b"precious\n");
    assert_eq!(std::fs::read(layer).unwrap(), b"precious\n");
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
                    "{}/f: skipped: it is in a layer of the overlay at {} and the kept file is \
                     seen through that overlay: removing it may take the kept file with it",
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
    // A copy on another device than a view's file is never acted on
    // either: nothing here can tell it from a layer under that view (the
    // mount table may misname the layers); it is said, and stays.
    let run = dry_run_then_run(&env, &["--remove", "a-merged", "d-plain"]);
    let err = run.stderr_str();
    assert!(
        err.contains(
            "d-plain/twin: skipped: the kept file is seen through an overlay file system and it \
             is on another device"
        ),
        "{err}"
    );
    assert_eq!(run.status, 1);
    assert_eq!(read("d-plain/twin"), b"a real twin\n");
    // Two copies within the one view are acted on (a whiteout in the
    // upper layer hides the removed one; the lower layer is untouched).
    env.file(b"a-merged/twin2", b"a real twin\n");
    let run = dry_run_then_run(&env, &["--remove", "a-merged"]);
    assert_eq!(run.status, 0, "{}", run.stderr_str());
    assert_eq!(run.stdout_str(), "remove: a-merged/twin2\n");
    assert!(!env.path().join("a-merged/twin2").exists());
    assert_eq!(read("a-merged/twin"), b"a real twin\n");
    assert_eq!(read("b-lower/twin"), b"a real twin\n");
    // Grouped still (a report is no harm): the pair is one group.
    let report = dupes(&env, &["a-merged", "b-lower"]).stdout_str();
    assert!(
        report.contains("a-merged/f") && report.contains("b-lower/f"),
        "{report}"
    );
}

/// The helper's hostile pass: a directory and a bind mount of it are one
/// directory, so `bd/b` and `d/b` are one entry. The run removed `bd/b`
/// and then said `d/b` could not be resolved (exit 1) where the dry run
/// had said "would remove" of both; both now say the second is the same
/// entry, nothing more to do, exit 0. Two hard links in one directory are
/// two entries and both are acted on.
#[test]
fn one_entry_by_two_paths_is_acted_on_once_in_the_dry_run_and_the_run() {
    let env = TestEnv::new();
    env.mkdir("d");
    env.file(b"d/a", b"x\n");
    env.file(b"d/b", b"x\n");
    std::fs::hard_link(env.path().join("d/b"), env.path().join("d/c")).unwrap();
    let mut mounts = Overlay {
        merged: PathBuf::new(),
        mounts: Vec::new(),
    };
    let bound = std::process::Command::new("mount")
        .arg("--bind")
        .arg(env.path().join("d"))
        .arg(env.mkdir("bd"))
        .output()
        .is_ok_and(|o| o.status.success());
    if !bound {
        testenv::skip("no bind mount can be made here (needs root)");
        return;
    }
    mounts.mounts.push(env.path().join("bd"));
    let run = dry_run_then_run(&env, &["--remove", "bd", "d"]);
    assert_eq!(run.status, 0, "{}", run.stderr_str());
    assert_eq!(run.stdout_str(), "remove: bd/b\nremove: bd/c\n");
    let err = run.stderr_str();
    for (alias, of) in [("d/b", "bd/b"), ("d/c", "bd/c")] {
        assert!(
            err.contains(&format!(
                "fastsum dupes: {alias}: nothing more to do: it is {of} by another path to its \
                 directory (the same entry)"
            )),
            "{err}"
        );
    }
    assert_eq!(std::fs::read(env.path().join("d/a")).unwrap(), b"x\n");
    for gone in ["d/b", "d/c"] {
        assert!(!env.path().join(gone).exists(), "{gone}");
    }
}

/// dupes 07 of the hostile pass: the dry run promised what the file
/// systems cannot make. A hard link between two mounts of one file system
/// (a bind mount: one device, two mounts) fails with EXDEV, and a reflink
/// on ext4 or tmpfs is refused by the kernel; the dry run said "would
/// link" and "would reflink" of both. Both now say, as the run does, that
/// it cannot be made, and nothing changes.
#[test]
fn a_link_or_reflink_the_file_systems_cannot_make_is_said_alike_in_the_dry_run_and_the_run() {
    let env = TestEnv::new();
    env.mkdir("d");
    env.file(b"d/a", b"same bytes\n");
    env.file(b"d/b", b"same bytes\n");
    // What the test directory's file system is, asked of stat(1), not of
    // fastsum: ext2/ext3 (ext4's name there) and tmpfs make no reflinks.
    let kind = std::process::Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(env.path())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    if kind == "ext2/ext3" || kind == "tmpfs" {
        let run = dry_run_then_run(&env, &["--reflink", "d"]);
        assert_eq!(run.status, 1, "{}", run.stderr_str());
        assert!(
            run.stderr_str().contains("cannot make reflinks"),
            "{}",
            run.stderr_str()
        );
    } else {
        testenv::skip(&format!(
            "the test directory is on {kind}, which may make reflinks"
        ));
    }
    let mut mounts = Overlay {
        merged: PathBuf::new(),
        mounts: Vec::new(),
    };
    env.mkdir("e");
    env.file(b"e/b", b"same bytes\n");
    let bound = std::process::Command::new("mount")
        .arg("--bind")
        .arg(env.path().join("e"))
        .arg(env.mkdir("be"))
        .output()
        .is_ok_and(|o| o.status.success());
    if !bound {
        testenv::skip("no bind mount can be made here (needs root)");
        return;
    }
    mounts.mounts.push(env.path().join("be"));
    let run = dry_run_then_run(&env, &["--link", "d", "be"]);
    assert!(
        run.stderr_str().contains("a hard link cannot cross mounts"),
        "{}",
        run.stderr_str()
    );
    assert_eq!(run.status, 1, "{}", run.stderr_str());
    // The kept file is on one mount, the others on the other: none is
    // linked, each is named, and every file is as it was.
    use std::os::unix::fs::MetadataExt as _;
    let ino = |p: &str| std::fs::metadata(env.path().join(p)).unwrap().ino();
    let mut inodes = vec![ino("d/a"), ino("d/b"), ino("be/b")];
    inodes.dedup();
    assert_eq!(inodes.len(), 3, "nothing is linked across mounts");
    let skipped = run.stderr_str().matches("cannot cross mounts").count();
    assert_eq!(skipped, 2, "{}", run.stderr_str());
    for f in ["d/a", "d/b", "be/b"] {
        assert_eq!(
            std::fs::read(env.path().join(f)).unwrap(),
            b"same bytes\n",
            "{f}"
        );
    }
}

/// Two overlay cases. First: the view's file is the
/// duplicate and its own lower-layer file the kept one: removing the view's
/// file frees nothing (a whiteout hides it, the layer keeps its bytes) and
/// changes what the view shows, so it is never acted on. Second: an overlay
/// mounted with relative layer paths (`lowerdir=lower`, as mountinfo then
/// says): its layer's file, a duplicate of a real twin beside it, is still
/// known as a layer's and never changed under the mounted view.
#[test]
fn dupes_never_acts_on_a_view_over_its_kept_layer_nor_through_relative_layers() {
    let env = TestEnv::new();
    for d in ["a-layer", "z-view", "z-view.upper", "z-view.work"] {
        env.mkdir(d);
    }
    env.file(b"a-layer/f", b"the only copy\n");
    env.file(b"0-twin", b"a real twin\n");
    env.file(b"a-layer/twin", b"a real twin\n");
    // Relative layer paths, given from the test's directory.
    let mounted = std::process::Command::new("mount")
        .current_dir(env.path())
        .args(["-t", "overlay", "overlay", "-o"])
        .arg("lowerdir=a-layer,upperdir=z-view.upper,workdir=z-view.work")
        .arg("z-view")
        .output()
        .is_ok_and(|o| o.status.success());
    if !mounted {
        testenv::skip("no overlay file system can be mounted here (needs root and overlayfs)");
        return;
    }
    let _unmount = Overlay {
        merged: env.path().join("z-view"),
        mounts: vec![env.path().join("z-view")],
    };
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(info.contains("lowerdir=a-layer"), "{info}");
    let read = |p: &str| std::fs::read(env.path().join(p)).unwrap();
    for action in ["--remove", "--link", "--symlink"] {
        // 08: "a-layer/f" sorts first and is kept; "z-view/f" is its view.
        let run = dry_run_then_run(&env, &[action, "a-layer", "z-view"]);
        let err = run.stderr_str();
        assert!(
            err.contains("z-view/f: skipped: it is seen through an overlay"),
            "{action}: {err}"
        );
        assert!(
            !run.stdout_str().contains("z-view/f"),
            "{action}: {}",
            run.stdout_str()
        );
        assert_eq!(run.status, 1, "{action}: {err}");
        assert_eq!(read("z-view/f"), b"the only copy\n", "{action}");
        assert_eq!(read("a-layer/f"), b"the only copy\n", "{action}");
        // No whiteout, no copy-up: the upper layer is as it was.
        let upper: Vec<_> = std::fs::read_dir(env.path().join("z-view.upper"))
            .unwrap()
            .collect();
        assert!(upper.is_empty(), "{action}: {upper:?}");
        // 08b: the layer's twin is not changed for the real twin beside it.
        let run = dry_run_then_run(&env, &[action, "0-twin", "a-layer/twin"]);
        let err = run.stderr_str();
        assert!(
            err.contains("a-layer/twin: skipped: it is in a layer of the overlay at"),
            "{action}: {err}"
        );
        assert_eq!(run.status, 1, "{action}: {err}");
        assert!(run.stdout.is_empty(), "{action}: {}", run.stdout_str());
        assert_eq!(read("z-view/twin"), b"a real twin\n", "{action}");
        assert!(
            !std::fs::symlink_metadata(env.path().join("a-layer/twin"))
                .unwrap()
                .file_type()
                .is_symlink(),
            "{action}"
        );
        assert_eq!(
            std::fs::metadata(env.path().join("a-layer/twin"))
                .unwrap()
                .nlink(),
            1,
            "{action}"
        );
    }
}
