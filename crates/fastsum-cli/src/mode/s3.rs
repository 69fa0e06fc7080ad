//! `fastsum -r s3://BUCKET/PREFIX`: what S3 holds below the prefix as
//! fastsum's lines, named relative to the prefix, each digest one S3
//! keeps in the algorithm asked for (`-a`, `--part-size`), or without
//! `-a` each object's best in its own algorithm, tagged
//! (`fastsum::s3::objects::object_digests` decides). An object with none is named
//! on stderr with the cause and the exit is 1; `--download` streams and
//! hashes it instead.

use fastsum::output::render::Format;
use fastsum::pipeline::{Outcome, Record};
use fastsum::s3::{S3Options, S3Url};
use fastsum::stage::Hashed;

use crate::mode::options::Options;
use crate::mode::run::Run;

/// Prints the lines of one `s3://` operand; false if any object had
/// none, or the listing failed.
pub(super) fn hash_s3_operand(run: &mut Run, o: &Options, name: &[u8], url: &S3Url) -> bool {
    let unavailable = [
        (o.tree.walk.directories, "--dirs"),
        (o.hashdeep, "--format=hashdeep"),
        (o.update.is_some(), "--update"),
        (o.prune.is_some(), "--prune-matching"),
    ];
    if let Some((_, option)) = unavailable.iter().find(|(given, _)| *given) {
        let mut err = Vec::new();
        let cause = format!("{option} is not available for s3:// operands");
        o.renderer.message(&mut err, name, &cause);
        run.out.err_raw(&err);
        return false;
    }
    let chosen = o.algorithms.one();
    let asked = o.algorithms.specified() || chosen.part_layout().is_some();
    let want = asked.then_some(chosen);
    let options = S3Options {
        download: o.s3_download,
        path_style: o.s3_path_style,
        cache: o.cache.as_deref().map(crate::term::cache::s3_claims),
        ..S3Options::default()
    };
    let mut ok = true;
    let mut seq = 0;
    let listed = fastsum::s3::objects::object_digests(url, want, &options, &mut |object| {
        let (algorithm, digest) = match object.digest {
            Ok(line) => line,
            Err(why) => {
                ok = false;
                let mut err = Vec::new();
                let shown = fastsum::name::path_bytes(&object.url);
                o.renderer.message(&mut err, shown, &why);
                run.out.err_raw(&err);
                return;
            }
        };
        let mut renderer = o.renderer.clone();
        renderer.algorithm = algorithm;
        if want.is_none() && matches!(renderer.format, Format::Untagged { .. }) {
            // Each line names its own algorithm, so that -c knows it.
            renderer.format = Format::Tagged {
                base64: o.algorithms.base64(),
            };
        }
        let record = Record {
            operand: 0,
            seq,
            path: fastsum::name::path(&object.name).into_owned(),
            outcome: Outcome::Hashed(Hashed::new(digest, object.size)),
        };
        seq += 1;
        let mut err = Vec::new();
        renderer.render(&record, run.out.stdout_buf(), &mut err);
        run.out.commit();
        run.stop_if_unwritable();
        if !err.is_empty() {
            run.out.err_raw(&err);
        }
    });
    if let Err(e) = listed {
        run.error(e.to_string().as_bytes());
        return false;
    }
    ok
}
