//! `--files0-from=F`: the operands as NUL-terminated names read from F
//! (`-`: standard input), coreutils' convention for `du` and `wc`, so that
//! `find ... -print0 | fastsum --files0-from=-` takes any name.

use std::io::Read;

use super::run::Run;

/// The names `source` lists. An empty name is said (`F:N: invalid
/// zero-length file name`, as du says it) and left out, as is a name `-`
/// when the list is standard input; `failed` is set.
/// `Err(status)` if the list cannot be read at all.
pub(super) fn read_names(
    run: &mut Run,
    source: &[u8],
    failed: &mut bool,
) -> Result<Vec<Vec<u8>>, i32> {
    let mut bytes = Vec::new();
    let read = match source {
        b"-" => std::io::stdin().lock().read_to_end(&mut bytes),
        path => std::fs::File::open(&*fastsum::name::path(path))
            .and_then(|mut f| f.read_to_end(&mut bytes)),
    };
    if let Err(e) = read {
        let mut m = b"cannot open ".to_vec();
        m.extend(run.quoting.quote(source));
        m.extend_from_slice(b" for reading: ");
        m.extend_from_slice(fastsum::Error::os_message(&e).as_bytes());
        run.error(&m);
        return Err(1);
    }
    if bytes.last() == Some(&0) {
        bytes.pop();
    }
    let mut names = Vec::new();
    if bytes.is_empty() {
        return Ok(names);
    }
    for (i, name) in bytes.split(|&b| b == 0).enumerate() {
        if name.is_empty() {
            let mut m = match source {
                b"-" => b"-".to_vec(),
                _ => run.quoting.quote(source),
            };
            m.extend_from_slice(format!(":{}: invalid zero-length file name", i + 1).as_bytes());
            run.error(&m);
            *failed = true;
            continue;
        }
        if name == b"-" && source == b"-" {
            // Standard input is the list: it cannot be an operand too
            // (issue 51.19; du's and wc's words).
            run.error(b"when reading file names from stdin, no file name of '-' allowed");
            *failed = true;
            continue;
        }
        names.push(name.to_vec());
    }
    Ok(names)
}
