//! Remote trees over SSH (issue 17) against a real OpenSSH server that the
//! test starts on 127.0.0.1 at a free port, with its own host key, a
//! generated user key, authorized_keys and known_hosts in a temporary
//! directory; no other address is contacted.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fastsum::remote::{hash_remote, Method, Remote, RemoteOptions};
use fastsum::{Algorithm, FileHasher};

struct Sshd {
    dir: tempfile::TempDir,
    port: u16,
    child: Child,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn keygen(path: &Path) {
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .status()
        .expect("ssh-keygen (openssh-client) is installed by scripts/install-peers");
    assert!(ok.success());
}

fn start_sshd() -> Sshd {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    keygen(&d.join("host_key"));
    keygen(&d.join("user_key"));
    std::fs::copy(d.join("user_key.pub"), d.join("authorized_keys")).unwrap();
    let _ = std::fs::create_dir_all("/run/sshd");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = format!(
        "ListenAddress 127.0.0.1\nPort {port}\nHostKey {d}/host_key\nAuthorizedKeysFile {d}/authorized_keys\n\
         PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
         PermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\nPidFile {d}/sshd.pid\n",
        d = d.display()
    );
    std::fs::write(d.join("sshd_config"), config).unwrap();
    let host_key = std::fs::read_to_string(d.join("host_key.pub")).unwrap();
    let mut fields = host_key.split_whitespace();
    let (kind, key) = (fields.next().unwrap(), fields.next().unwrap());
    std::fs::write(
        d.join("known_hosts"),
        format!("[127.0.0.1]:{port} {kind} {key}\n"),
    )
    .unwrap();
    let child = Command::new("/usr/sbin/sshd")
        .arg("-f")
        .arg(d.join("sshd_config"))
        .args(["-D", "-e"])
        .stderr(Stdio::null())
        .spawn()
        .expect("sshd (openssh-server) is installed by scripts/install-peers");
    let until = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < until, "sshd did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    Sshd { dir, port, child }
}

impl Sshd {
    fn ssh(&self) -> Vec<String> {
        let d = self.dir.path().display();
        [
            "ssh",
            "-F",
            "/dev/null",
            "-p",
            &self.port.to_string(),
            "-i",
            &format!("{d}/user_key"),
            "-o",
            &format!("UserKnownHostsFile={d}/known_hosts"),
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "BatchMode=yes",
            "-o",
            "IdentitiesOnly=yes",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }

    fn host(&self) -> String {
        let user = Command::new("id").arg("-un").output().unwrap().stdout;
        format!("{}@127.0.0.1", String::from_utf8_lossy(&user).trim())
    }
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
    fastsum::walk::walk_sorted(root, &Default::default(), &mut |item| {
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

#[test]
fn every_method_gives_the_local_digests_and_no_name_is_ever_run() {
    let sshd = start_sshd();
    let tree = tree();
    let home = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()));
    let remote =
        Remote::parse(format!("{}:{}", sshd.host(), tree.path().display()).as_bytes()).unwrap();
    for algorithm in [Algorithm::Md5, Algorithm::Sha256] {
        let want = local(tree.path(), algorithm);
        for method in Method::ALL {
            let options = RemoteOptions {
                rsh: sshd.ssh(),
                method: Some(method),
                remote_fastsum: Some(env!("CARGO_BIN_EXE_fastsum").to_string()),
            };
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
    assert!(e.contains("no way to compute blake3"), "{e}");
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
            remote_fastsum: None,
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
    let local = Command::new(env!("CARGO_BIN_EXE_fastsum"))
        .args(["-r", &root])
        .output()
        .unwrap();
    assert!(local.status.success());
    let host = sshd.host();
    let want = String::from_utf8_lossy(&local.stdout)
        .replace(&format!("  {root}"), &format!("  {host}:{root}"))
        .into_bytes();
    for method in ["coreutils", "perl", "python"] {
        let out = Command::new(env!("CARGO_BIN_EXE_fastsum"))
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
    let out = Command::new(env!("CARGO_BIN_EXE_fastsum"))
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
