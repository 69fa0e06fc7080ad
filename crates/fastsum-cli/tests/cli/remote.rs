//! Remote trees over SSH against a real OpenSSH server that the
//! test starts on 127.0.0.1 at a free port, with its own host key, a
//! generated user key, authorized_keys and known_hosts in a temporary
//! directory; no other address is contacted.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::sshd;
use sshd::{keygen, start_sshd};

use fastsum::remote::{Method, Remote, RemoteOptions, RemoteRecord};
use fastsum::{Algorithm, Error, FileHasher};

/// What a remote run answered, its records held (the library's one entry
/// point streams them).
#[derive(Debug)]
struct Listing {
    method: Method,
    uploaded: bool,
    records: Vec<RemoteRecord>,
}

fn hash_remote(
    remote: &Remote,
    algorithm: Algorithm,
    options: &RemoteOptions,
) -> Result<Listing, Error> {
    let mut records = Vec::new();
    let run = remote.hash(algorithm, options, &mut |r| records.push(r))?;
    Ok(Listing {
        method: run.method,
        uploaded: run.uploaded,
        records,
    })
}

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let names: &[&[u8]] = &[
        b"plain.txt",
        b"$(touch PWNED)",
        b"'; touch PWNED; '",
        b"`touch PWNED`",
        b"semi;amp&pipe|star*",
        b"new\nline",
        b"-leading-dash",
        b"quote\"dq",
        b"sub/deeper/\xff\xfe-not-utf8",
        b"sub/back\\slash",
        b"empty",
    ];
    for (i, name) in names.iter().enumerate() {
        let path = dir.path().join(OsStr::from_bytes(name));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            if *name == b"empty" {
                vec![]
            } else {
                vec![i as u8; 1000 * i + 1]
            },
        )
        .unwrap();
    }
    dir
}

/// Every regular file under root with its local digest, by path bytes.
fn local(root: &Path, algorithm: Algorithm) -> Vec<(Vec<u8>, String)> {
    let mut out = Vec::new();
    fastsum::walk::WalkOptions::default()
        .walk_sorted(root, &mut |item| {
            if let fastsum::walk::WalkItem::File { path, .. } = item {
                let d = FileHasher::new().hash_path(algorithm, &path).unwrap();
                out.push((path.as_os_str().as_bytes().to_vec(), d.to_hex()));
            }
        })
        .unwrap();
    out
}

fn pwned_anywhere(dirs: &[&Path]) -> bool {
    dirs.iter().any(|d| {
        walkdir(d)
            .iter()
            .any(|p| p.file_name().is_some_and(|n| n == "PWNED"))
    })
}

fn walkdir(d: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(d) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() && !p.is_symlink() {
                out.extend(walkdir(&p));
            }
            out.push(p);
        }
    }
    out
}

/// Options that force `method` through the test's sshd, with this
/// fastsum for the fastsum method (it is not on the remote PATH).
fn forced(sshd: &sshd::Sshd, method: Method) -> RemoteOptions {
    RemoteOptions {
        rsh: sshd.ssh(),
        method: Some(method),
        remote_fastsum: Some(crate::testenv::fastsum_bin().to_string()),
        ..Default::default()
    }
}

#[test]
fn every_method_gives_the_local_digests_and_no_name_is_ever_run() {
    let sshd = start_sshd();
    let tree = tree();
    // the home the suite's sshd sessions run in: the user's own, not the suite's
    let home =
        PathBuf::from(std::env::var("FASTSUM_TEST_USER_HOME").unwrap_or_else(|_| "/root".into()));
    let remote =
        Remote::parse(format!("{}:{}", sshd.host(), tree.path().display()).as_bytes()).unwrap();
    for algorithm in [Algorithm::Md5, Algorithm::Sha256] {
        let want = local(tree.path(), algorithm);
        // BSD's tools are not on this host: that method has its own test.
        for method in Method::ALL.into_iter().filter(|&m| m != Method::Bsd) {
            let options = forced(&sshd, method);
            let got = hash_remote(&remote, algorithm, &options)
                .unwrap_or_else(|e| panic!("{method:?} {algorithm}: {e}"));
            assert_eq!(got.method, method);
            let got: Vec<(Vec<u8>, String)> = got
                .records
                .into_iter()
                .map(|r| (r.path, r.digest.map(|d| d.to_hex()).unwrap_or_else(|e| e)))
                .collect();
            assert_eq!(got, want, "{method:?} {algorithm}");
        }
    }
    // Without a forced method, the first that applies: fastsum when it is
    // on the remote PATH (here it is not, so coreutils).
    let options = RemoteOptions {
        rsh: sshd.ssh(),
        ..Default::default()
    };
    assert_eq!(
        hash_remote(&remote, Algorithm::Md5, &options)
            .unwrap()
            .method,
        Method::Coreutils
    );
    assert!(!pwned_anywhere(&[tree.path(), &home, sshd.dir.path()]));
}

/// A root that is a FIFO (or a link to one) is refused by every method
/// before anything reads it: `fastsum -r -- FIFO` on the host would wait for
/// a writer forever. A run that has not answered in a minute has hung.
#[test]
fn a_fifo_root_is_refused_by_every_method_and_never_waited_on() {
    let sshd = start_sshd();
    let tree = tree();
    let fifo = tree.path().join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    std::os::unix::fs::symlink(&fifo, tree.path().join("to-fifo")).unwrap();
    for name in ["fifo", "to-fifo"] {
        let spec = format!("{}:{}/{name}", sshd.host(), tree.path().display());
        for method in Method::ALL.into_iter().filter(|&m| m != Method::Bsd) {
            let options = forced(&sshd, method);
            let remote = Remote::parse(spec.as_bytes()).unwrap();
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let _ = tx
                    .send(hash_remote(&remote, Algorithm::Md5, &options).map(|l| l.records.len()));
            });
            let got = rx
                .recv_timeout(std::time::Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("{method:?} {name}: still waiting after 60 s"));
            let e = got.expect_err(&format!("{method:?} {name}")).to_string();
            assert!(
                e.contains(name) && e.contains("neither a regular file nor a directory"),
                "{method:?} {name}: {e}"
            );
        }
    }
}

#[test]
fn failures_name_the_host_and_path_and_never_look_complete() {
    let sshd = start_sshd();
    let tree = tree();
    let options = RemoteOptions {
        rsh: sshd.ssh(),
        ..Default::default()
    };
    // A missing remote path.
    let missing =
        Remote::parse(format!("{}:{}/nothing", sshd.host(), tree.path().display()).as_bytes())
            .unwrap();
    let e = hash_remote(&missing, Algorithm::Md5, &options)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("127.0.0.1:") && e.contains("nothing") && e.contains("No such file"),
        "{e}"
    );
    // blake3 only fastsum can compute.
    let remote =
        Remote::parse(format!("{}:{}", sshd.host(), tree.path().display()).as_bytes()).unwrap();
    let forced = RemoteOptions {
        method: Some(Method::Perl),
        ..options.clone()
    };
    let e = hash_remote(&remote, Algorithm::Blake3, &forced)
        .unwrap_err()
        .to_string();
    assert!(e.contains("only the fastsum method"), "{e}");
    let e = hash_remote(&remote, Algorithm::Blake3, &options)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no way to compute blake3") && e.contains("only fastsum can"),
        "{e}"
    );
    // Refused authentication: another key.
    let mut wrong = sshd.ssh();
    let key = sshd.dir.path().join("other_key");
    keygen(&key);
    let i = wrong.iter().position(|a| a == "-i").unwrap();
    wrong[i + 1] = key.display().to_string();
    let e = hash_remote(
        &remote,
        Algorithm::Md5,
        &RemoteOptions {
            rsh: wrong,
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("Permission denied"), "{e}");
    // A connection cut mid-stream: never a shorter tree.
    let ssh = sshd.ssh().join(" ");
    let cut = vec![
        "sh".into(),
        "-c".into(),
        format!("{ssh} \"$@\" | head -c 300"),
        "sh".into(),
    ];
    let e = hash_remote(
        &remote,
        Algorithm::Md5,
        &RemoteOptions {
            rsh: cut,
            method: Some(Method::Python),
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("incomplete"), "{e}");
    // An unreachable host (the port closed).
    drop(sshd);
    let e = hash_remote(&remote, Algorithm::Md5, &options)
        .unwrap_err()
        .to_string();
    assert!(e.contains("ssh:") && e.contains("127.0.0.1"), "{e}");
}

#[test]
fn the_cli_prints_a_remote_tree_as_it_prints_the_local_one() {
    let sshd = start_sshd();
    let tree = tree();
    let root = tree.path().display().to_string();
    let local = Command::new(crate::testenv::fastsum_bin())
        .args(["-r", &root])
        .output()
        .unwrap();
    assert!(local.status.success());
    let host = sshd.host();
    let want = String::from_utf8_lossy(&local.stdout)
        .replace(&format!("  {root}"), &format!("  {host}:{root}"))
        .into_bytes();
    for method in ["coreutils", "perl", "python"] {
        let out = Command::new(crate::testenv::fastsum_bin())
            .args([
                "-r",
                "-v",
                "--remote-method",
                method,
                "-e",
                &sshd.ssh().join(" "),
            ])
            .arg(format!("{host}:{root}"))
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&want),
            "{method}"
        );
        assert!(
            out.status.success(),
            "{method}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains(&format!("the {method} method ran")), "{said}");
    }
    // FASTSUM_RSH is the default transport; a missing path is an error
    // naming the host and the path, exit 1, nothing on stdout.
    let out = Command::new(crate::testenv::fastsum_bin())
        .env("FASTSUM_RSH", sshd.ssh().join(" "))
        .args(["-r", &format!("{host}:{root}/nothing")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!("{host}:{root}/nothing")) && said.contains("No such file"),
        "{said}"
    );
}

fn records(listing: Listing) -> Vec<(Vec<u8>, String)> {
    listing
        .records
        .into_iter()
        .map(|r| (r.path, r.digest.map(|d| d.to_hex()).unwrap_or_else(|e| e)))
        .collect()
}

#[test]
fn the_bsd_method_pairs_digests_with_the_names_it_listed() {
    // `shasum` is Perl's real tool (macOS has it; Debian's perl ships it).
    // BSD's `md5` is not on Linux: a shim stands in for `md5 -q FILE`,
    // printing only the digest, as FreeBSD's and macOS's do.
    let sshd = start_sshd();
    let tree = tree();
    let shims = tempfile::tempdir().unwrap();
    sshd::shim(
        shims.path(),
        "md5",
        "[ \"$1\" = -q ] || exit 64\nshift\nfor f do r=$(md5sum < \"$f\") || exit 1; printf '%s\\n' \"${r%% *}\"; done\n",
    );
    let remote =
        Remote::parse(format!("{}:{}", sshd.host(), tree.path().display()).as_bytes()).unwrap();
    for algorithm in [
        Algorithm::Md5,
        Algorithm::Sha1,
        Algorithm::Sha256,
        Algorithm::Sha512,
    ] {
        let options = RemoteOptions {
            rsh: sshd.ssh_with_path(shims.path()),
            method: Some(Method::Bsd),
            ..Default::default()
        };
        let got = hash_remote(&remote, algorithm, &options)
            .unwrap_or_else(|e| panic!("bsd {algorithm}: {e}"));
        assert_eq!(got.method, Method::Bsd);
        assert_eq!(
            records(got),
            local(tree.path(), algorithm),
            "bsd {algorithm}"
        );
    }
    // A file the tool cannot read (a stand-in that fails on one name, as
    // root reads everything): the batch goes again one file at a time,
    // that file is an error at its name, the others keep their digests.
    let failing = tempfile::tempdir().unwrap();
    sshd::shim(
        failing.path(),
        "md5",
        "shift\nfor f do case $f in *plain.txt) echo \"md5: $f: Permission denied\" >&2; exit 1;; esac; done\n\
         for f do r=$(md5sum < \"$f\") || exit 1; printf '%s\\n' \"${r%% *}\"; done\n",
    );
    let options = RemoteOptions {
        rsh: sshd.ssh_with_path(failing.path()),
        method: Some(Method::Bsd),
        ..Default::default()
    };
    let got = records(hash_remote(&remote, Algorithm::Md5, &options).unwrap());
    let want = local(tree.path(), Algorithm::Md5);
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.0, w.0);
        if g.0.ends_with(b"plain.txt") {
            assert!(g.1.contains("could not be read"), "{g:?}");
        } else {
            assert_eq!(g.1, w.1);
        }
    }
    // Without the shim this host has no md5: the forced method says so.
    let e = hash_remote(
        &remote,
        Algorithm::Md5,
        &RemoteOptions {
            rsh: sshd.ssh(),
            method: Some(Method::Bsd),
            ..Default::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("the bsd method is not available"), "{e}");
}

/// `fastsum.*` directories in /tmp (what --upload-self makes and removes).
fn uploads() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir("/tmp")
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("fastsum."))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn upload_self_runs_this_fastsum_there_and_leaves_nothing_behind() {
    let sshd = start_sshd();
    let tree = tree();
    let root = tree.path().display().to_string();
    let host = sshd.host();
    let local_out = Command::new(crate::testenv::fastsum_bin())
        .args(["-r", "-a", "blake3", &root])
        .output()
        .unwrap();
    let want = String::from_utf8_lossy(&local_out.stdout).replace(&root, &format!("{host}:{root}"));
    // blake3: only a fastsum can compute it, and none is on the remote
    // PATH; the uploaded one is.
    let before = uploads();
    let out = Command::new(crate::testenv::fastsum_bin())
        .args([
            "-r",
            "-v",
            "-a",
            "blake3",
            "--upload-self",
            "-e",
            &sshd.ssh().join(" "),
        ])
        .arg(format!("{host}:{root}"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("the fastsum method ran (uploaded)"), "{said}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), want);
    assert_eq!(uploads(), before, "the uploaded copy is removed");
    // A host whose `uname -sm` differs gets nothing; its own tools run.
    let shims = tempfile::tempdir().unwrap();
    sshd::shim(shims.path(), "uname", "echo Plan9 mips\n");
    let remote = Remote::parse(format!("{host}:{root}").as_bytes()).unwrap();
    let options = RemoteOptions {
        rsh: sshd.ssh_with_path(shims.path()),
        upload_self: Some(crate::testenv::fastsum_bin().into()),
        ..Default::default()
    };
    let got = hash_remote(&remote, Algorithm::Md5, &options).unwrap();
    assert_eq!((got.method, got.uploaded), (Method::Coreutils, false));
    assert_eq!(records(got), local(tree.path(), Algorithm::Md5));
    assert_eq!(uploads(), before);
}

#[test]
fn a_sorted_remote_listing_is_printed_as_it_streams() {
    // The listing was once read whole before anything was parsed
    // (a 1 GB stream, 981 MB of memory). A host that sends its listing in
    // order (sort -z) has it printed as it comes: here the host sends two
    // records, then waits until their lines have been seen.
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("go-on");
    let d = "900150983cd24fb0d6963f7d28e17f72";
    let transport = dir.path().join("host");
    std::fs::write(
        &transport,
        format!(
            "#!/bin/sh\nprintf 'fastsum-remote-method perl sorted\\nD{d}\\0r/a\\0D{d}\\0r/b\\0'\n\
             while [ ! -e '{}' ]; do sleep 0.05; done\n\
             printf 'D{d}\\0r/c\\0\\0fastsum-remote-end\\0'\n",
            mark.display()
        ),
    )
    .unwrap();
    let mut child = Command::new(crate::testenv::fastsum_bin())
        .args(["-r", "-e", &format!("sh {}", transport.display()), "h:r"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let mut buffer = [0u8; 4096];
        while !String::from_utf8_lossy(&seen).contains("h:r/b\n") {
            match stdout.read(&mut buffer) {
                Ok(n @ 1..) => seen.extend_from_slice(&buffer[..n]),
                _ => return (seen, stdout, false),
            }
        }
        (seen, stdout, true)
    });
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !reader.is_finished() && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let streamed = reader.is_finished();
    std::fs::write(&mark, b"").unwrap();
    let (mut seen, mut stdout, _) = reader.join().unwrap();
    stdout.read_to_end(&mut seen).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(streamed, "nothing was printed while the host waited");
    assert_eq!(
        String::from_utf8_lossy(&seen),
        format!("{d}  h:r/a\n{d}  h:r/b\n{d}  h:r/c\n")
    );
}
