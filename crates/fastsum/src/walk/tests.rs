//! The walk's tests: real directories in temp dirs.

use super::*;
use std::sync::Mutex;

fn collect(root: &Path, options: &WalkOptions) -> (Vec<PathBuf>, Vec<String>) {
    let items = Mutex::new(Vec::new());
    options
        .walk(root, &|item| items.lock().unwrap().push(item))
        .unwrap();
    let (mut files, mut other) = (Vec::new(), Vec::new());
    for item in items.into_inner().unwrap() {
        match item {
            WalkItem::File { path, .. } => {
                files.push(path.strip_prefix(root).unwrap().to_path_buf())
            }
            WalkItem::Special { path, kind } => other.push(format!(
                "{} {}",
                path.strip_prefix(root).unwrap().display(),
                kind.describe()
            )),
            WalkItem::Error(e) => other.push(format!("{:?}", e.kind())),
            WalkItem::Directory { path } => other.push(format!(
                "{} directory",
                path.strip_prefix(root).unwrap().display()
            )),
        }
    }
    files.sort();
    other.sort();
    (files, other)
}

#[test]
fn any_number_of_threads_finds_every_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut expected = Vec::new();
    for a in 0..6 {
        for b in 0..5 {
            let sub = PathBuf::from(format!("d{a}/e{b}"));
            std::fs::create_dir_all(root.join(&sub)).unwrap();
            for f in 0..7 {
                let file = sub.join(format!("f{f}"));
                std::fs::write(root.join(&file), "x").unwrap();
                expected.push(file);
            }
        }
        std::fs::write(root.join(format!("top{a}")), "x").unwrap();
        expected.push(PathBuf::from(format!("top{a}")));
    }
    expected.sort();
    for threads in [1, 2, 4, 7] {
        let options = WalkOptions {
            threads,
            ..WalkOptions::default()
        };
        let (files, other) = collect(root, &options);
        assert_eq!(files, expected, "{threads} threads");
        assert!(other.is_empty());
    }
}

#[test]
fn the_sorted_walk_gives_the_order_of_sorting_every_path() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // Names that sort around `/` (0x2f): ' ', '-', '.', '0', 'A', and
    // bytes past ASCII.
    let dirs: [&[u8]; 6] = [b"a", b"a b", b"a.d", b"a/b", b"a/b.c", b"z\xff"];
    let files: [&[u8]; 13] = [
        b"a.txt",
        b"a-",
        b"a0",
        b"A",
        b"a b/x",
        b"a.d/y",
        b"a/b/c",
        b"a/b.c/d",
        b"a/b/c.txt",
        b"a/b-",
        b"a/b0",
        b"z\xff/q",
        b"\xc3\xa9",
    ];
    for d in dirs {
        std::fs::create_dir_all(root.join(OsStr::from_bytes(d))).unwrap();
    }
    for f in files {
        std::fs::write(root.join(OsStr::from_bytes(f)), "x").unwrap();
    }
    let mut expected: Vec<Vec<u8>> = files
        .iter()
        .map(|f| root.join(OsStr::from_bytes(f)).into_os_string().into_vec())
        .collect();
    expected.sort();
    let mut walked = Vec::new();
    WalkOptions::default()
        .walk_sorted(root, &mut |item| {
            if let WalkItem::File { path, .. } = item {
                walked.push(path.into_os_string().into_vec());
            }
        })
        .unwrap();
    assert_eq!(walked, expected);
}

#[test]
fn paths_are_spelled_from_the_root_as_given() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("r")).unwrap();
    std::fs::write(dir.path().join("r/a"), "x").unwrap();
    std::os::unix::fs::symlink("r", dir.path().join("link")).unwrap();
    for (root, expected) in [("r/", "r/a"), ("r", "r/a"), ("link", "link/a")] {
        let root = dir.path().join(root);
        let items = Mutex::new(Vec::new());
        WalkOptions::default()
            .walk(&root, &|item| {
                if let WalkItem::File { path, .. } = item {
                    items.lock().unwrap().push(path);
                }
            })
            .unwrap();
        let expected = PathBuf::from(format!("{}/{expected}", dir.path().display()));
        assert_eq!(items.into_inner().unwrap(), [expected]);
    }
}

#[test]
fn a_link_that_cannot_be_followed_is_an_error_and_the_walk_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::os::unix::fs::symlink("self", root.join("self")).unwrap();
    std::os::unix::fs::symlink("nowhere", root.join("broken")).unwrap();
    std::fs::write(root.join("file"), "x").unwrap();
    let follow = WalkOptions {
        follow_links: true,
        ..WalkOptions::default()
    };
    let items = Mutex::new(Vec::new());
    follow
        .walk(root, &|item| items.lock().unwrap().push(item))
        .unwrap();
    let mut seen: Vec<String> = items
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|item| match item {
            WalkItem::File { path, .. } => format!("file {}", path.display()),
            WalkItem::Special { path, .. } => format!("special {}", path.display()),
            WalkItem::Directory { path } => format!("directory {}", path.display()),
            WalkItem::Error(e) => {
                format!("error {} {:?}", e.path().unwrap().display(), e.kind())
            }
        })
        .collect();
    seen.sort();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert_eq!(
        seen[0],
        format!(
            "error {}/broken {:?}",
            root.display(),
            ErrorKind::from(io::Error::from_raw_os_error(libc::ENOENT))
        )
    );
    assert!(
        seen[1].starts_with(&format!("error {}/self ", root.display())),
        "{seen:?}"
    );
    assert_eq!(seen[2], format!("file {}/file", root.display()));
}

#[test]
fn hidden_and_gitignored_files_are_walked() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join(".git")).unwrap();
    std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
    std::fs::write(root.join("a.log"), "x").unwrap();
    std::fs::write(root.join(".hidden"), "x").unwrap();
    let (files, other) = collect(root, &WalkOptions::default());
    let names: Vec<_> = files.iter().map(|p| p.to_str().unwrap()).collect();
    assert_eq!(names, [".gitignore", ".hidden", "a.log"]);
    assert!(other.is_empty());
}

#[test]
fn excludes_prune_files_and_directories() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("build/deep")).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    for f in ["build/deep/x.c", "src/a.c", "src/a.o", "top.o"] {
        std::fs::write(root.join(f), "x").unwrap();
    }
    let options = WalkOptions {
        excludes: vec!["*.o".into(), "build/".into()],
        ..WalkOptions::default()
    };
    let (files, _) = collect(root, &options);
    assert_eq!(files, [PathBuf::from("src/a.c")]);
}

#[test]
fn fifos_are_reported_not_opened() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let fifo = root.join("pipe");
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: c_path is a valid NUL-terminated path for the call's duration.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) }, 0);
    std::fs::write(root.join("file"), "x").unwrap();
    let (files, other) = collect(root, &WalkOptions::default());
    assert_eq!(files, [PathBuf::from("file")]);
    assert_eq!(other, ["pipe fifo"]);
}

#[test]
fn symlinks_are_followed_only_when_asked_and_loops_end() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir(root.join("d")).unwrap();
    std::fs::write(root.join("d/f"), "x").unwrap();
    std::os::unix::fs::symlink("../d", root.join("d/loop")).unwrap();
    std::os::unix::fs::symlink("d/f", root.join("link")).unwrap();
    let (files, other) = collect(root, &WalkOptions::default());
    assert_eq!(files, [PathBuf::from("d/f")]);
    assert_eq!(other, ["d/loop symbolic link", "link symbolic link"]);
    let follow = WalkOptions {
        follow_links: true,
        ..WalkOptions::default()
    };
    let (files, other) = collect(root, &follow);
    assert_eq!(files, [PathBuf::from("d/f"), PathBuf::from("link")]);
    assert_eq!(other.len(), 1, "{other:?}");
    assert!(other[0].starts_with("FilesystemLoop"), "{other:?}");
}

#[test]
fn only_top_walks_one_root_entry_with_excludes_from_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for path in ["a/x", "a/skip/y", "b/a/z", "a.txt", "c/a/x"] {
        std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
        std::fs::write(root.join(path), "x").unwrap();
    }
    let sorted = |only: Option<&str>| {
        let options = WalkOptions {
            // Anchored at the root: "/a/skip" must not match under b/ or c/.
            excludes: vec!["/a/skip".into()],
            only_top: only.map(OsString::from),
            ..WalkOptions::default()
        };
        let mut found = Vec::new();
        options
            .walk_sorted(root, &mut |item| {
                if let WalkItem::File { path, .. } = item {
                    found.push(path.strip_prefix(root).unwrap().display().to_string());
                }
            })
            .unwrap();
        found
    };
    assert_eq!(sorted(Some("a")), ["a/x"]);
    assert_eq!(sorted(Some("b")), ["b/a/z"]);
    assert_eq!(sorted(Some("a.txt")), ["a.txt"]);
    assert!(sorted(Some("nothing")).is_empty());
    // The shards, concatenated in the order of their names as the walk
    // sorts them, are the whole walk.
    let whole = sorted(None);
    let shards: Vec<String> = ["a.txt", "a", "b", "c"]
        .into_iter()
        .flat_map(|top| sorted(Some(top)))
        .collect();
    assert_eq!(shards, whole);
}

#[test]
fn max_depth_counts_levels_below_the_root_as_find_does() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for path in ["top", "a/one", "a/b/two", "a/b/c/three"] {
        std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
        std::fs::write(root.join(path), "x").unwrap();
    }
    let files_at = |depth: Option<usize>| {
        let options = WalkOptions {
            max_depth: depth,
            ..WalkOptions::default()
        };
        let parallel = collect(root, &options).0;
        let mut sorted = Vec::new();
        options
            .walk_sorted(root, &mut |item| {
                if let WalkItem::File { path, .. } = item {
                    sorted.push(path.strip_prefix(root).unwrap().to_path_buf());
                }
            })
            .unwrap();
        let mut sorted_set = sorted.clone();
        sorted_set.sort();
        assert_eq!(parallel, sorted_set, "both walks agree at {depth:?}");
        sorted
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
    };
    assert!(files_at(Some(0)).is_empty());
    assert_eq!(files_at(Some(1)), ["top"]);
    assert_eq!(files_at(Some(2)), ["a/one", "top"]);
    assert_eq!(files_at(Some(3)), ["a/b/two", "a/one", "top"]);
    assert_eq!(files_at(None).len(), 4);
    assert_eq!(files_at(Some(99)).len(), 4);
}

#[test]
fn directories_are_reported_once_by_both_walks_and_in_place_by_the_sorted_one() {
    let dir = tempfile::tempdir().unwrap();
    for d in ["a/deep", "a0", "empty"] {
        std::fs::create_dir_all(dir.path().join(d)).unwrap();
    }
    for f in ["a.txt", "a/x", "a/deep/y", "a0/z"] {
        std::fs::write(dir.path().join(f), f).unwrap();
    }
    let options = WalkOptions {
        directories: true,
        ..WalkOptions::default()
    };
    let name = |item: &WalkItem| match item {
        WalkItem::File { path, .. } => path.strip_prefix(dir.path()).unwrap().display().to_string(),
        WalkItem::Directory { path } => {
            format!("{}/", path.strip_prefix(dir.path()).unwrap().display())
        }
        _ => "other".into(),
    };
    let mut sorted = Vec::new();
    options
        .walk_sorted(dir.path(), &mut |item| sorted.push(name(&item)))
        .unwrap();
    assert_eq!(
        sorted,
        ["a.txt", "a/", "a/deep/", "a/deep/y", "a/x", "a0/", "a0/z", "empty/"]
    );
    let parallel = std::sync::Mutex::new(Vec::new());
    options
        .walk(dir.path(), &|item| {
            parallel.lock().unwrap().push(name(&item))
        })
        .unwrap();
    let mut parallel = parallel.into_inner().unwrap();
    parallel.sort();
    let mut want = sorted.clone();
    want.sort();
    assert_eq!(parallel, want);
    // Without the option, none.
    let mut plain = Vec::new();
    WalkOptions::default()
        .walk_sorted(dir.path(), &mut |item| plain.push(name(&item)))
        .unwrap();
    assert!(plain.iter().all(|n| !n.ends_with('/')), "{plain:?}");
}
