//! Every open in the sources, reviewed, so that no list can make fastsum
//! wait on a FIFO or read a device: a path taken from a list, a cache or a
//! manifest must be opened through `fastsum::open_regular` (regular files
//! only, never waiting) or the pipeline's listed jobs. This test counts the
//! other opens file by file; a new one fails it until it is added here with
//! the reason it is not such a path.

use std::collections::BTreeMap;
use std::path::Path;

/// Each file's opens by another way, and why each is allowed.
const REVIEWED: &[(&str, usize, &str)] = &[
    ("fastsum-cli/src/cmd/audit.rs", 2, "the list operand (a pipe is spooled), the private spool file"),
    ("fastsum-cli/src/personality/b3sum.rs", 2, "b3sum's operands and check file; b3sum -c reads what the list names, as b3sum does"),
    ("fastsum-cli/src/cmd/bench/strategies.rs", 1, "the bench's own operand"),
    ("fastsum-cli/src/cmd/bench/timer.rs", 2, "the bench's own operand"),
    ("fastsum-cli/src/mode/check/read.rs", 1, "the check file itself (an operand; md5sum -c reads a FIFO list)"),
    ("fastsum-cli/src/mode/files0.rs", 1, "the --files0-from list itself"),
    ("fastsum-cli/src/mode/hash.rs", 1, "the GNU personalities' -c opens what the list names as coreutils does; fastsum's own -c uses hash_listed"),
    ("fastsum-cli/src/mode/multi.rs", 2, "operands of several -a"),
    ("fastsum-cli/src/mode/prune.rs", 1, "the --prune-matching list itself"),
    ("fastsum-cli/src/mode/update/mod.rs", 3, "the manifest being updated"),
    ("fastsum-cli/src/mode/update/file.rs", 1, "the new list, created"),
    ("fastsum-cli/src/cmd/scrub.rs", 1, "the --manifest list itself"),
    ("fastsum-cli/src/term/exclude_file.rs", 1, "the --exclude-from file itself (an operand; a pipe such as <(...) is read, at most 16 MiB)"),
    ("fastsum-cli/src/personality/xxhsum/check.rs", 2, "the check file; xxhsum -c reads what the list names, as xxhsum does"),
    ("fastsum-cli/src/personality/xxhsum/mod.rs", 1, "xxhsum's operands"),
    ("fastsum-py/src/questions.rs", 1, "the manifest a Python caller names"),
    ("fastsum/src/diff/compare.rs", 2, "a test's two files"),
    ("fastsum/src/diff/manifest_side.rs", 1, "the manifest side itself"),
    ("fastsum/src/contained/tests.rs", 1, "a test rewriting its file behind the mtime"),
    ("fastsum/src/dupes/actions/tests.rs", 1, "a test writing its file"),
    ("fastsum/src/dupes/entry.rs", 2, "a member's directory (O_DIRECTORY), held for the act, its real path checked against the operands; the member itself through that directory (O_NOFOLLOW, O_NONBLOCK), only to hold its lock"),
    ("fastsum/src/dupes/reflink.rs", 1, "a member about to be deduplicated, checked by identity before and after"),
    ("fastsum/src/fs/dir.rs", 2, "directories; the listed open itself (O_NONBLOCK, the caller fstats)"),
    ("fastsum/src/fs/residency.rs", 2, "open_nonblocking itself"),
    ("fastsum/src/fs/stat.rs", 1, "Windows' handle stat of an operand"),
    ("fastsum/src/read/blake3_tree.rs", 2, "tests' files"),
    ("fastsum/src/read/mmap.rs", 2, "tests' files"),
    ("fastsum/src/read/mod.rs", 1, "FileHasher::hash_path: an operand (hash_listed is the list's)"),
    ("fastsum/src/remote/captured.rs", 1, "a captured listing the user names"),
    ("fastsum/src/stage/lanes/tests.rs", 1, "tests' files"),
    ("fastsum/src/stage/scalar.rs", 1, "a job that is not listed: an operand (listed jobs open through fs/dir.rs)"),
];

fn opens(text: &str) -> usize {
    ["File::open(", "OpenOptions::new()", "File::options()"]
        .iter()
        .map(|needle| text.matches(needle).count())
        .sum()
}

fn walk(dir: &Path, crates: &Path, found: &mut BTreeMap<String, usize>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(&path, crates, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let n = opens(&std::fs::read_to_string(&path).unwrap());
            if n > 0 {
                let name = path
                    .strip_prefix(crates)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                found.insert(name, n);
            }
        }
    }
}

#[test]
fn every_open_outside_the_one_listed_open_is_reviewed() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut found = BTreeMap::new();
    for krate in ["fastsum", "fastsum-cli", "fastsum-py"] {
        walk(&crates.join(krate).join("src"), crates, &mut found);
    }
    let reviewed: BTreeMap<String, usize> = REVIEWED
        .iter()
        .map(|(f, n, _)| (f.to_string(), *n))
        .collect();
    for (file, n) in &found {
        let allowed = reviewed.get(file).copied().unwrap_or(0);
        assert!(
            *n <= allowed,
            "{file}: {n} opens, {allowed} reviewed: a path taken from a list, a cache or a \
             manifest must go through fastsum::open_regular; otherwise add the open to \
             tests/cli/opens.rs with its reason"
        );
    }
}
