//! A real OpenSSH server for the remote tests, started on 127.0.0.1 at a
//! free port with its own host key, a generated user key, authorized_keys
//! and known_hosts in a temporary directory; stopped when dropped. No
//! other address is ever contacted.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Sshd {
    pub dir: tempfile::TempDir,
    pub port: u16,
    child: Child,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn keygen(path: &Path) {
    let ok = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .status()
        .expect("ssh-keygen (openssh-client) is installed by scripts/tests/install-peers");
    assert!(ok.success());
}

pub fn start_sshd() -> Sshd {
    // A port picked free may be taken again before sshd binds it (by
    // another test's sshd: ours then exits), so a start is checked and,
    // if it did not hold, tried again on another port.
    for _ in 0..5 {
        if let Some(sshd) = try_start_sshd() {
            return sshd;
        }
    }
    panic!("sshd did not start on any of 5 ports");
}

/// Whether an SSH server answers on `port`: its banner, read within a
/// second (a bare connect can also succeed by the kernel connecting a
/// socket to itself when nothing listens).
fn answers_ssh(port: u16) -> bool {
    use std::io::Read;
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let mut banner = [0u8; 4];
    stream.read_exact(&mut banner).is_ok() && &banner == b"SSH-"
}

fn try_start_sshd() -> Option<Sshd> {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    keygen(&d.join("host_key"));
    keygen(&d.join("user_key"));
    // Every session's PATH starts with the suite's own `bin`, whose
    // `fastsum` is not one (it answers nothing): the host has no fastsum
    // unless a test puts one first (`ssh_with_path`), whatever the user's
    // ~/.bashrc adds (the README's install puts one in ~/.cargo/bin, and a
    // .deb in /usr/bin). A forced command runs after the shell's start-up
    // files, then the command the client sent, as the shell would have.
    let bin = d.join("bin");
    std::fs::create_dir(&bin).unwrap();
    shim(&bin, "fastsum", "exit 127\n");
    let user_key = std::fs::read_to_string(d.join("user_key.pub")).unwrap();
    std::fs::write(
        d.join("authorized_keys"),
        format!(
            "command=\"PATH={}:$PATH; export PATH; eval \\\"$SSH_ORIGINAL_COMMAND\\\"\" {user_key}",
            bin.display()
        ),
    )
    .unwrap();
    let _ = std::fs::create_dir_all("/run/sshd");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = format!(
        "ListenAddress 127.0.0.1\nPort {port}\nHostKey {d}/host_key\nAuthorizedKeysFile {d}/authorized_keys\n\
         PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
         PermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\nPidFile {d}/sshd.pid\n\
         MaxStartups 1000\nPerSourceMaxStartups none\nLoginGraceTime 120\nMaxSessions 1000\n",
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
        .expect("sshd (openssh-server) is installed by scripts/tests/install-peers");
    let mut sshd = Sshd { dir, port, child };
    let until = Instant::now() + Duration::from_secs(20);
    while !answers_ssh(port) {
        if sshd.child.try_wait().unwrap().is_some() {
            return None;
        }
        assert!(Instant::now() < until, "sshd did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    // An sshd that could not bind exits within moments of starting.
    std::thread::sleep(Duration::from_millis(200));
    if sshd.child.try_wait().unwrap().is_some() {
        return None;
    }
    Some(sshd)
}

impl Sshd {
    pub fn ssh(&self) -> Vec<String> {
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

    pub fn host(&self) -> String {
        let user = Command::new("id").arg("-un").output().unwrap().stdout;
        format!("{}@127.0.0.1", String::from_utf8_lossy(&user).trim())
    }
}

impl Sshd {
    /// A transport that puts `dir` first on the remote PATH (shims of the
    /// tools a host has or lacks) before the command fastsum sends.
    pub fn ssh_with_path(&self, dir: &Path) -> Vec<String> {
        self.ssh_with_prefix(&format!("PATH={}:\\$PATH; export PATH;", dir.display()))
    }

    /// A transport that runs `prefix` (shell words: variables set there)
    /// before the command fastsum sends.
    pub fn ssh_with_prefix(&self, prefix: &str) -> Vec<String> {
        let ssh = self.ssh().join(" ");
        vec![
            "sh".into(),
            "-c".into(),
            format!("exec {ssh} \"$1\" \"$2\" \"{prefix} $3\""),
            "sh".into(),
        ]
    }

    /// Kills every session the server has forked (and what runs under
    /// them), as a host that drops the connection would: the listener
    /// itself stays.
    pub fn kill_sessions(&self) -> usize {
        let mut killed = 0;
        for pid in descendants(self.child.id()) {
            // SAFETY: kill only sends a signal to a process id.
            if unsafe { libc::kill(pid as i32, libc::SIGKILL) } == 0 {
                killed += 1;
            }
        }
        killed
    }
}

/// Every process below `root`, children before their own children.
fn descendants(root: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces, so after ')'.
        let after = &stat[stat.rfind(')').map_or(0, |i| i + 1)..];
        if let Some(ppid) = after.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
            parents.push((pid, ppid));
        }
    }
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for &(pid, ppid) in &parents {
            if ppid == p {
                out.push(pid);
                frontier.push(pid);
            }
        }
    }
    out
}

/// Writes an executable shell script `name` in `dir`.
pub fn shim(dir: &Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `bytes` quoted for POSIX `sh` (single quotes, each `'` as `'\''`): the
/// tests' own, written apart from the library's.
#[allow(dead_code)]
pub fn sh_quote(bytes: &[u8]) -> Vec<u8> {
    let mut out = b"'".to_vec();
    for part in bytes.split(|&b| b == b'\'').enumerate() {
        if part.0 > 0 {
            out.extend_from_slice(b"'\\''");
        }
        out.extend_from_slice(part.1);
    }
    out.push(b'\'');
    out
}
