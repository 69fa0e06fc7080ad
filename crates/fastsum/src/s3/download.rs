//! `--download`: an object whose only digest is opaque is streamed and
//! compared with the local file as it comes (`diff`), or hashed as it
//! comes (`fastsum -r s3://`), never stored.

use std::io::Read;
use std::path::Path;

use super::http::Client;

/// Reads until `buffer` is full or the stream ends.
fn fill(reader: &mut dyn Read, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match reader.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Whether the object `key` holds the bytes of the file at `path`.
pub(crate) fn same_bytes(client: &Client, key: &str, path: &Path) -> Result<bool, String> {
    let mut file = crate::fs::regular::open_regular(path).map_err(|e| e.to_string())?;
    let body = client.get(key)?;
    let mut object = body.into_reader();
    let (mut a, mut b) = (vec![0u8; 256 * 1024], vec![0u8; 256 * 1024]);
    loop {
        let n = fill(&mut object, &mut a).map_err(|e| format!("GetObject: {e}"))?;
        let m = fill(&mut file, &mut b).map_err(|e| format!("{}: {e}", path.display()))?;
        if n != m || a[..n] != b[..m] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

/// The digest of the object `key`'s bytes in `algorithm`, streamed; an
/// object whose length is not the `size` listed changed meanwhile.
pub(crate) fn digest_of(
    client: &Client,
    key: &str,
    size: u64,
    algorithm: crate::algo::Algorithm,
) -> Result<crate::digest::Digest, String> {
    let mut object = client.get(key)?.into_reader();
    let mut hasher = crate::algo::Hasher::new(algorithm);
    let mut buffer = vec![0u8; 256 * 1024];
    let mut read = 0u64;
    loop {
        let n = fill(&mut object, &mut buffer).map_err(|e| format!("GetObject: {e}"))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        read += n as u64;
    }
    if read != size {
        return Err(format!(
            "GetObject gave {read} bytes, the listing {size}: the object changed"
        ));
    }
    Ok(hasher.digest())
}
