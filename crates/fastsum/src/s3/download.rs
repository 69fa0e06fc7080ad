//! `--download`: an object whose only digest is opaque is streamed and
//! compared with the local file as it comes (`diff`), or hashed as it
//! comes (`fastsum -r s3://`), never stored.

use std::io::Read;
use std::path::Path;

use super::http::Client;
use super::xml::Listed;

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

/// Whether the object `listed` holds the bytes of the file at `path`.
/// Its body must be the listing's size: one that ends short or runs on
/// is an error, never an answer (a body cut where the local file ends
/// would otherwise read as the same bytes).
pub(crate) fn same_bytes(client: &Client, listed: &Listed, path: &Path) -> Result<bool, String> {
    let mut file = crate::fs::regular::open_regular(path).map_err(|e| e.to_string())?;
    let mut object = body(client, listed)?;
    let (mut a, mut b) = (vec![0u8; 256 * 1024], vec![0u8; 256 * 1024]);
    loop {
        let n = object.next(&mut a)?;
        let m = fill(&mut file, &mut b).map_err(|e| format!("{}: {e}", path.display()))?;
        if n != m || a[..n] != b[..m] {
            if n < m {
                // The body may have ended short: that is an error, not
                // an answer.
                object.next(&mut a)?;
            }
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

/// An object's body as it is read, held to the size the listing gave.
struct Body {
    reader: Box<dyn Read + Send>,
    expected: u64,
    read: u64,
}

fn body(client: &Client, listed: &Listed) -> Result<Body, String> {
    let key = std::str::from_utf8(&listed.key).map_err(|_| "the key is not UTF-8".to_string())?;
    let reader = client.get(key, &listed.etag)?.into_reader();
    Ok(Body {
        reader: Box::new(reader),
        expected: listed.size,
        read: 0,
    })
}

impl Body {
    /// The next bytes into `buffer` (0 at the end); an error once the
    /// body runs past the listed size or ends before it.
    fn next(&mut self, buffer: &mut [u8]) -> Result<usize, String> {
        let n = fill(&mut self.reader, buffer).map_err(|e| format!("GetObject: {e}"))?;
        self.read += n as u64;
        let (read, expected) = (self.read, self.expected);
        match (n, read.cmp(&expected)) {
            (_, std::cmp::Ordering::Greater) | (0, std::cmp::Ordering::Less) => Err(format!(
                "GetObject gave {}{read} bytes, the listing {expected}: the object changed",
                if n == 0 { "" } else { "at least " }
            )),
            _ => Ok(n),
        }
    }
}

/// The digest of the object `listed`'s bytes in `algorithm`, streamed
/// from the version listed, its length the listed size.
pub(crate) fn digest_of(
    client: &Client,
    listed: &Listed,
    algorithm: crate::algo::Algorithm,
) -> Result<crate::digest::Digest, String> {
    let mut object = body(client, listed)?;
    let mut hasher = crate::algo::Hasher::new(algorithm);
    let mut buffer = vec![0u8; 256 * 1024];
    loop {
        let n = object.next(&mut buffer)?;
        if n == 0 {
            return Ok(hasher.digest());
        }
        hasher.update(&buffer[..n]);
    }
}
