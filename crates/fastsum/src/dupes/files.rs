//! Small file helpers of the dupes stages: byte comparison and the name
//! a path is deduplicated by.

use std::path::Path;

/// Whether two files hold the same bytes.
pub(super) fn same_bytes(a: &Path, b: &Path) -> bool {
    use std::io::Read;
    let (Ok(mut x), Ok(mut y)) = (std::fs::File::open(a), std::fs::File::open(b)) else {
        return false;
    };
    let (mut bx, mut by) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    loop {
        let n = read_full(&mut x, &mut bx);
        let m = read_full(&mut y, &mut by);
        match (n, m) {
            (Ok(n), Ok(m)) if n == m && bx[..n] == by[..m] => {
                if n < bx.len() {
                    return true;
                }
            }
            _ => return false,
        }
    }
    fn read_full(f: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut filled = 0;
        while filled < buf.len() {
            match f.read(&mut buf[filled..])? {
                0 => break,
                n => filled += n,
            }
        }
        Ok(filled)
    }
}

/// `path` made absolute against `cwd`, as bytes, with `.` components and
/// repeated slashes gone (`..` kept: it may cross a symlink).
pub(super) fn normalized(cwd: &Path, path: &Path) -> Vec<u8> {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let mut out = Vec::with_capacity(joined.as_os_str().len());
    for part in path_bytes(&joined).split(|&b| b == b'/') {
        if part.is_empty() || part == b"." {
            continue;
        }
        out.push(b'/');
        out.extend_from_slice(part);
    }
    out
}

/// A path's bytes.
pub(super) fn path_bytes(path: &Path) -> &[u8] {
    path.as_os_str().as_encoded_bytes()
}
