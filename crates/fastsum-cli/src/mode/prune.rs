//! `fastsum -r --json --prune-matching=F DIR`: the listing a remote host
//! sends `fastsum diff` when the local side offered its own directory
//! digests (F, `-` for standard input, as `Offers::to_bytes` writes
//! them). A directory whose digest matches the offer is one
//! `directory_digest` record instead of its files (its symbolic links
//! still come, to be counted); the rest is listed as `-r --json` lists it.

use crate::mode::run::Ended;
use std::io::Read;

use fastsum::dirdigest::Offers;
use fastsum::pipeline::Order;

use crate::mode::options::Options;
use crate::mode::run::Run;

/// The most an offer may take: 16 Mi directories of the longest digests
/// and long paths fit in far less.
const LIMIT: u64 = 4 << 30;

/// Reads the offers from `source` and sets the run up to prune by them.
/// `Err` is the exit status, said.
pub(super) fn adopt(
    run: &mut Run,
    o: &mut Options,
    source: &[u8],
    operands: &[Vec<u8>],
) -> Result<(), Ended> {
    let refused = [
        (
            !o.tree.recursive || !o.json,
            "--prune-matching needs -r and --json",
        ),
        (o.check, "--prune-matching and -c do not go together"),
        (operands.len() != 1, "--prune-matching lists one directory"),
        (
            o.update.is_some(),
            "--prune-matching and --update do not go together",
        ),
        (
            o.tree.walk.directories,
            "--prune-matching and --dirs do not go together (it sends matched directories only)",
        ),
        (
            o.tree.order == Order::Unordered || o.tree.walk.max_depth.is_some(),
            "--prune-matching needs the whole sorted walk (no --unordered, no --max-depth)",
        ),
    ];
    run.refuse_first(&refused)?;
    if let Some(why) = o.algorithms.one().directory_digest_refusal() {
        run.error(why.as_bytes());
        return Err(Ended(1));
    }
    run.working = true;
    let mut bytes = Vec::new();
    let read = match source {
        b"-" => std::io::stdin().lock().take(LIMIT).read_to_end(&mut bytes),
        path => std::fs::File::open(&*fastsum::name::path(path))
            .and_then(|f| f.take(LIMIT).read_to_end(&mut bytes)),
    };
    let offers = read
        .map_err(|e| fastsum::Error::os_message(&e))
        .and_then(|_| Offers::parse(&bytes, o.algorithms.one()));
    match offers {
        Ok(offers) => {
            o.prune = Some(offers);
            o.tree.walk.directories = true;
            Ok(())
        }
        Err(why) => {
            let mut m = run.quoting.quote(source);
            m.extend_from_slice(format!(": {why}").as_bytes());
            run.error(&m);
            Err(Ended(1))
        }
    }
}
