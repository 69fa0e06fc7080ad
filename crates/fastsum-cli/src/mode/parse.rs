//! The command line of the coreutils personality, read as getopt reads
//! it (glibc's rules, `term::getopt`): each option applied to the
//! settings as given, in order, by its definition (`flags/defs.rs`),
//! nothing yet checked against the others (that is `resolve.rs`).

use crate::mode::flags::{self, Asked, Parsed};
use crate::mode::help;
use crate::mode::run::Ended;
use crate::mode::run::Run;
use crate::term::getopt::Getopt;

/// Reads `args` as `run.tool` takes them; `Err(status)` when the run ends
/// here (a usage error, `--help`, `--version`: printed where given, as
/// coreutils does, before any later option is read).
pub(super) fn parse(run: &mut Run, args: &[Vec<u8>]) -> Result<Parsed, Ended> {
    let tool = run.tool;
    let mut p = Parsed::new(tool);
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
        if let Some(asked) = p.info.take() {
            let text = match asked {
                Asked::Help => help::gnu_help(run.tool, &run.program),
                Asked::Version => help::version(run.tool.name),
            };
            run.out.out(text.as_bytes());
            // Found at exit by close_stdout, with no cause.
            run.write_error_cause = false;
            run.working = true;
            return Err(run.ended_by_finish(0));
        }
    }
    p.operands = getopt.into_operands();
    p.o.names_given = !p.operands.is_empty();
    Ok(p)
}
