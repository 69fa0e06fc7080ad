//! `remove`'s guarantees between the scan and the act: a file (either
//! side) that changed after the scan is never removed, in a dry run
//! neither; and `verify`'s, where a digest said "the same" and the bytes
//! do not.

use std::path::{Path, PathBuf};

use super::{Archive, ContainedOptions, ContainedReport};
use crate::dupes::actions::{Acted, ActionOutcome};

fn scan(dir: &Path) -> ContainedReport {
    let report = ContainedOptions::default()
        .find_contained(&[dir.join("src")], &[Archive::Tree(dir.join("arc"))])
        .unwrap();
    assert_eq!(report.summary().contained_files, 1, "{:?}", report.problems);
    report
}

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for side in ["src", "arc"] {
        std::fs::create_dir(dir.path().join(side)).unwrap();
    }
    let bytes: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(dir.path().join("src/file"), &bytes).unwrap();
    std::fs::write(dir.path().join("arc/copy"), &bytes).unwrap();
    dir
}

fn remove(report: &ContainedReport, dry_run: bool) -> Vec<Acted> {
    let mut acted = Vec::new();
    report.remove(dry_run, &mut |a| acted.push(a)).unwrap();
    acted
}

/// Rewrites `path` with its own bytes, one flipped, its mtime put back:
/// only the ctime says so.
fn rewrite_behind(path: &Path) {
    let mtime = std::fs::metadata(path).unwrap().modified().unwrap();
    let mut bytes = std::fs::read(path).unwrap();
    bytes[5000] ^= 1;
    std::fs::write(path, &bytes).unwrap();
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(mtime).unwrap();
}

fn skipped(acted: &[Acted], why: &str) {
    assert_eq!(acted.len(), 1);
    match &acted[0].outcome {
        ActionOutcome::Skipped(w) => assert!(w.contains(why), "{w}"),
        other => panic!("not skipped: {other:?}"),
    }
}

#[test]
fn the_archive_copy_changed_after_the_scan_keeps_the_source_file() {
    let dir = tree();
    let report = scan(dir.path());
    rewrite_behind(&dir.path().join("arc/copy"));
    skipped(&remove(&report, true), "the kept file changed");
    skipped(&remove(&report, false), "the kept file changed");
    assert!(dir.path().join("src/file").exists());
}

#[test]
fn the_source_file_changed_after_the_scan_is_not_removed() {
    let dir = tree();
    let report = scan(dir.path());
    rewrite_behind(&dir.path().join("src/file"));
    skipped(&remove(&report, true), "it changed");
    skipped(&remove(&report, false), "it changed");
    assert!(dir.path().join("src/file").exists());
}

#[test]
fn an_unchanged_contained_file_is_removed_and_its_copy_stays() {
    let dir = tree();
    let report = scan(dir.path());
    let dry = remove(&report, true);
    assert_eq!(dry[0].outcome, ActionOutcome::Done);
    assert!(
        dir.path().join("src/file").exists(),
        "a dry run touches nothing"
    );
    let run = remove(&report, false);
    assert_eq!(run[0].outcome, ActionOutcome::Done);
    assert!(!dir.path().join("src/file").exists());
    assert_eq!(
        std::fs::read(dir.path().join("arc/copy")).unwrap().len(),
        10_000
    );
}

#[test]
fn a_manifest_archive_refuses_removal() {
    let dir = tree();
    let list: PathBuf = dir.path().join("list.md5");
    std::fs::write(&list, "00000000000000000000000000000000  x\n").unwrap();
    let report = ContainedOptions::default()
        .find_contained(&[dir.path().join("src")], &[Archive::Manifest(list)])
        .unwrap();
    let refused = report.remove(false, &mut |_| panic!("nothing may be acted on"));
    assert!(refused.unwrap_err().contains("is a manifest"));
}

/// A whole-file digest that matched bytes that differ (XXH3-128 can
/// collide; nothing here can make it, so the stage's answer is forged):
/// `verify` turns it into a problem, never "contained".
#[test]
fn verify_withholds_a_copy_whose_bytes_differ() {
    use super::answers::{Answers, Problems};
    use super::ArchiveCopy;
    use crate::dupes::items::Candidates;
    let dir = tree();
    std::fs::write(dir.path().join("arc/other"), vec![7u8; 10_000]).unwrap();
    let mut src = Candidates::default();
    let stamp_of = |p: &Path| crate::fs::FileStamp::of(&std::fs::symlink_metadata(p).unwrap());
    for name in ["src/file", "src/file"] {
        let path = dir.path().join(name);
        src.order.push(src.paths.len() as u32);
        src.paths.push(&path);
        src.stamps.push(stamp_of(&path));
    }
    let copy = |name: &str| {
        let path = dir.path().join(name);
        Some(ArchiveCopy {
            archive: 0,
            stamp: Some(stamp_of(&path)),
            path,
        })
    };
    let mut answers = Answers::new(2);
    answers.copies = vec![copy("arc/copy"), copy("arc/other")];
    let problems = Problems::default();
    super::stages::verify_copies(&src, &mut answers, &problems);
    assert!(answers.copies[0].is_some() && !answers.trouble[0]);
    assert!(answers.copies[1].is_none() && answers.trouble[1]);
    let problems = problems.sorted();
    assert_eq!(problems.len(), 1);
    assert!(problems[0].error.contains("other bytes"), "{problems:?}");
}

#[test]
fn an_archive_bind_mounted_inside_the_source_refuses_the_removal_whole() {
    // src/m is a bind mount of
    // arc, which holds h and its hard link hl. No path up from either
    // operand sees it; the shared directory does.
    let dir = tempfile::tempdir().unwrap();
    let (src, arc) = (dir.path().join("src"), dir.path().join("arc"));
    std::fs::create_dir_all(src.join("m")).unwrap();
    std::fs::create_dir_all(&arc).unwrap();
    std::fs::write(arc.join("h"), b"hello").unwrap();
    std::fs::hard_link(arc.join("h"), arc.join("hl")).unwrap();
    let bound = std::process::Command::new("mount")
        .arg("--bind")
        .arg(&arc)
        .arg(src.join("m"))
        .output()
        .is_ok_and(|o| o.status.success());
    if !bound {
        eprintln!("skipped: no bind mount can be made here (needs root)");
        return;
    }
    let report = ContainedOptions::default()
        .find_contained(std::slice::from_ref(&src), &[Archive::Tree(arc.clone())]);
    let refused = report.map(|r| r.remove(false, &mut |_| {}));
    let _ = std::process::Command::new("umount")
        .arg(src.join("m"))
        .output();
    match refused {
        Ok(Err(why)) => assert!(why.contains("share the directory"), "{why}"),
        other => panic!("not refused: {other:?}"),
    }
    assert!(arc.join("h").exists() && arc.join("hl").exists());
}
