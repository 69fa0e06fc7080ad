//! `HOST:PATH` operands in fastsum's own mode: hashed on the remote host
//! (`fastsum::remote`), printed as local records are, the path spelled as
//! given (`web1:/srv/www/index.html`); `s3://` ones are `s3.rs`'s.

use fastsum::pipeline::{Outcome, Record};
use fastsum::remote::{Remote, RemoteRecord, RemoteSink};
use fastsum::s3::S3Url;
use fastsum::stage::Hashed;
use fastsum::ErrorKind;

use crate::mode::hash::{hash_operands, print_record};
use crate::mode::options::Options;
use crate::mode::run::Run;

/// Hashes every operand in order: `HOST:PATH` ones on their host (fastsum's
/// own mode), runs of local ones through the pipeline.
pub(super) fn hash_operands_and_remotes(run: &mut Run, o: &Options, names: &[Vec<u8>]) -> bool {
    if !names.iter().any(|n| elsewhere(run, o, n)) {
        return hash_operands(run, o, names);
    }
    let mut ok = true;
    let mut local: Vec<Vec<u8>> = Vec::new();
    for name in names {
        let (s3, remote) = (S3Url::parse(name), Remote::parse(name));
        if s3.is_none() && remote.is_none() {
            local.push(name.clone());
            continue;
        }
        if !local.is_empty() {
            ok &= hash_operands(run, o, &std::mem::take(&mut local));
        }
        if let Some(url) = s3 {
            ok &= crate::mode::s3::hash_s3_operand(run, o, name, &url);
        } else if let Some(remote) = remote {
            ok &= hash_remote_operand(run, o, name, &remote);
        }
    }
    if !local.is_empty() {
        ok &= hash_operands(run, o, &local);
    }
    ok
}

/// Whether `name` is an `s3://` or `HOST:PATH` operand, as fastsum's own
/// mode reads them with `-r`. (s3://B/P would read as the host "s3", a
/// colon before the first slash: it is S3's, never ssh's.)
pub(super) fn elsewhere(run: &Run, o: &Options, name: &[u8]) -> bool {
    run.tool.policy().remote_operands
        && o.tree.recursive
        && (S3Url::parse(name).is_some() || Remote::parse(name).is_some())
}

/// Hashes one remote operand and prints its records; false if anything
/// failed (the transport, the method, or a file).
pub(super) fn hash_remote_operand(
    run: &mut Run,
    o: &Options,
    name: &[u8],
    remote: &Remote,
) -> bool {
    // The remote methods give no sizes yet (a JSON record's size must be
    // true), nor directories.
    let unavailable = [
        (o.json, "--json"),
        (o.tree.walk.directories, "--dirs"),
        (o.hashdeep, "--format=hashdeep"),
    ];
    if let Some((_, option)) = unavailable.iter().find(|(given, _)| *given) {
        let mut m = name.to_vec();
        m.extend_from_slice(
            format!(": {option} is not available for HOST:PATH operands yet").as_bytes(),
        );
        run.error(&m);
        return false;
    }
    // Records are printed as the host sends them (memory does not grow
    // with the listing); a stream that goes wrong part way ends in an
    // error and a failing exit, as a read error does for md5sum.
    let mut printer = RemotePrinter {
        run,
        o,
        prefix: &name[..name.len() - remote.path.len()],
        seq: 0,
        ok: true,
    };
    let ran = remote.hash(o.algorithms.one(), &o.remote, &mut printer);
    let ok = printer.ok;
    let ran = match ran {
        Ok(ran) => ran,
        Err(e) => {
            run.error(e.to_string().as_bytes());
            return false;
        }
    };
    if let Some(why) = &ran.upload_failed {
        let mut m = remote.host.as_bytes().to_vec();
        m.extend_from_slice(
            format!(": {why}; the {} method ran instead", ran.method.name()).as_bytes(),
        );
        run.error(&m);
    }
    if ran.symlinks_left_out > 0 {
        let what = crate::term::count(ran.symlinks_left_out, "symbolic link", "symbolic links");
        let mut m = name.to_vec();
        m.extend_from_slice(
            format!(": {what} left out (remote listings hold regular files only)").as_bytes(),
        );
        run.notice(&m);
    }
    if o.verbose {
        let host = remote.host.as_bytes();
        let mut m = host.to_vec();
        let how = if ran.uploaded { " (uploaded)" } else { "" };
        m.extend_from_slice(format!(": the {} method ran{how}", ran.method.name()).as_bytes());
        run.error(&m);
    }
    ok
}

/// Prints a remote listing's records as they come, flushing what it holds
/// whenever the host keeps the listing waiting.
struct RemotePrinter<'a> {
    run: &'a mut Run,
    o: &'a Options,
    /// The operand up to the remote path (`host:`), before every path.
    prefix: &'a [u8],
    seq: u64,
    ok: bool,
}

impl RemoteSink for RemotePrinter<'_> {
    fn record(&mut self, record: RemoteRecord) {
        let mut path = self.prefix.to_vec();
        path.extend_from_slice(&record.path);
        let outcome = match record.digest {
            Ok(digest) => Outcome::Hashed(Hashed::new(digest, 0)),
            Err(why) => {
                self.ok = false;
                Outcome::Failed(ErrorKind::Io(std::io::Error::other(why)))
            }
        };
        let record = Record {
            operand: 0,
            seq: self.seq,
            path: fastsum::name::path(&path).into_owned(),
            outcome,
        };
        self.seq += 1;
        print_record(self.run, self.o, &record);
    }

    fn idle(&mut self) {
        self.run.out.flush_held();
    }
}
