//! The listing of a prefix as both `diff` and `fastsum -r s3://` take it:
//! every page, in order and without repeats (else an error naming the
//! key: a server that lies is not believed), each key made relative to
//! the prefix where it is safe (`keys.rs`).

use std::path::PathBuf;

use super::http::Client;
use super::xml::Listed;
use super::S3Url;
use crate::error::{Error, ErrorKind, Result};

/// Requests in flight when `-j` does not say: S3 answers in tens of
/// milliseconds, so far more than the cores.
pub(crate) const DEFAULT_REQUESTS: usize = 32;

/// An error of the S3 side as an I/O error with `message`.
pub(crate) fn io_error(message: String) -> ErrorKind {
    ErrorKind::Io(std::io::Error::other(message))
}

/// `s3://bucket/key` as a path, for messages (escaped where printed).
pub(crate) fn shown(url: &S3Url, key: &[u8]) -> PathBuf {
    let mut name = format!("s3://{}/", url.bucket).into_bytes();
    name.extend_from_slice(key);
    crate::fs::name::path(&name).into_owned()
}

/// One listed object: its key below the prefix, or why the key is refused.
pub(crate) type Entry = (Listed, std::result::Result<String, String>);

/// Every object below the prefix in the listing's order (directory
/// markers left out), each with its relative key or why it is refused.
pub(crate) fn listing(client: &Client, url: &S3Url) -> Result<Vec<Entry>> {
    let objects = client
        .list(&url.prefix)
        .map_err(|e| Error::with_path(url.to_string(), io_error(e)))?;
    for pair in objects.windows(2) {
        if pair[1].key <= pair[0].key {
            let what = match pair[1].key == pair[0].key {
                true => "the listing gives this key twice",
                false => "the listing goes backwards at this key",
            };
            return Err(Error::with_path(
                shown(url, &pair[1].key),
                io_error(what.into()),
            ));
        }
    }
    let mut out = Vec::with_capacity(objects.len());
    for object in objects {
        let relative = match url.relative(&object.key) {
            Ok(Some(relative)) => Ok(relative.to_string()),
            // A folder marker holds nothing; a key ending in '/' that
            // holds bytes is an object no file can match: said, never
            // passed over.
            Ok(None) if object.size == 0 => continue,
            Ok(None) => Err(format!(
                "a key ending in '/' holds {} bytes: no file has its name",
                object.size
            )),
            Err(why) => Err(why),
        };
        out.push((object, relative));
    }
    Ok(out)
}

/// `f` of every item, `jobs` at a time (0: `default`), in their order.
pub(crate) fn in_parallel<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    default: usize,
    f: &(dyn Fn(&T) -> R + Sync),
) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    let jobs = match jobs {
        0 => default,
        n => n,
    }
    .min(items.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let result = f(item);
                results.lock().expect("no worker panics holding it")[i] = Some(result);
            });
        }
    });
    results
        .into_inner()
        .expect("no worker panics holding it")
        .into_iter()
        .map(|r| r.expect("every item was taken by a worker"))
        .collect()
}
