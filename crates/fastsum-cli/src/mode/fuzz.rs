//! The option parser fuzzed: argument vectors (an input split
//! at NUL) through getopt with each tool's option table, and every value
//! through the number and size parsers the options use. No panic, on any
//! input; the harness is the library's (`fastsum::fuzzing`).

use crate::mode::flags::specs;
use crate::mode::options::{parse_decimal, parse_size};
use crate::personality::ToolKind;
use crate::term::getopt::Getopt;

#[test]
fn argv() {
    let seeds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz-seeds");
    fastsum::fuzzing::fuzz(&seeds, "argv", |input| {
        let args: Vec<Vec<u8>> = input.split(|&b| b == 0).map(<[u8]>::to_vec).collect();
        for kind in [
            ToolKind::Fixed,
            ToolKind::Blake2,
            ToolKind::Fastsum,
            ToolKind::Cksum,
            ToolKind::Sum,
        ] {
            let specs = specs(kind);
            let mut getopt = Getopt::new(&args, &specs);
            for opt in getopt.by_ref().flatten() {
                if let Some(value) = opt.value {
                    let _ = parse_decimal(&value);
                    let _ = parse_size(&value);
                    let _ = String::from_utf8_lossy(&value).parse::<fastsum::Algorithm>();
                }
            }
            let _ = getopt.into_operands();
        }
    });
}
