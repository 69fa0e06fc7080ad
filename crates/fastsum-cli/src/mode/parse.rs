//! The command line of the coreutils personality, read as getopt reads
//! it (glibc's rules, `term::getopt`): each option applied to the
//! settings as given, in order, by its definition (`flags/defs.rs`),
//! nothing yet checked against the others (that is `resolve.rs`).

use crate::mode::algorithms::Chosen;
use crate::mode::flags;
use crate::mode::options::Options;
use crate::mode::run::Run;
use crate::term::getopt::Getopt;

/// What the command line said, before the settings are resolved.
pub(super) struct Parsed {
    pub(super) o: Options,
    /// `-a`, `-l`, `--part-size`, `--base64`: resolved into
    /// `o.algorithms` (`algorithms.rs`).
    pub(super) algorithms: Chosen,
    pub(super) read_size: Option<usize>,
    pub(super) io_mode: String,
    /// `--cache` without `=PATH`.
    pub(super) cache_without_path: bool,
    /// `--files0-from=F`: the operands are F's NUL-terminated names.
    pub(super) files0_from: Option<Vec<u8>>,
    /// `--update=MANIFEST`.
    pub(super) update: Option<Vec<u8>>,
    /// `--prune-matching=FILE`.
    pub(super) prune: Option<Vec<u8>>,
    pub(super) operands: Vec<Vec<u8>>,
}

/// Reads `args` as `run.tool` takes them; `Err(status)` when the run ends
/// here (a usage error, `--help`, `--version`).
pub(super) fn parse(run: &mut Run, args: &[Vec<u8>]) -> Result<Parsed, i32> {
    let tool = run.tool;
    let mut p = Parsed {
        o: Options::new(tool),
        algorithms: Chosen::default(),
        read_size: None,
        io_mode: "auto".to_string(),
        cache_without_path: false,
        files0_from: None,
        update: None,
        prune: None,
        operands: Vec::new(),
    };
    let specs = flags::specs(tool.kind);
    let mut getopt = Getopt::new(args, &specs);
    for item in getopt.by_ref() {
        let opt = match item {
            Ok(opt) => opt,
            Err(message) => return Err(run.getopt_error(&message)),
        };
        // The table was made from the definitions: each key has one.
        if let Some(flag) = flags::flag(tool.kind, opt.key) {
            (flag.apply)(run, &mut p, opt.value.unwrap_or_default())?;
        }
    }
    p.operands = getopt.into_operands();
    p.o.names_given = !p.operands.is_empty();
    Ok(p)
}
