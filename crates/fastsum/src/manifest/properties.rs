//! Property tests for the check-line parsers: they never panic on any
//! bytes, and what the writers print reads back as what was written.
//! (Here, not in tests/: the line parsers and writers are the library's
//! own, not its API.)

use super::{b3sum, gnu, xxhsum};
use crate::Algorithm;
use proptest::prelude::*;

fn algorithm() -> impl Strategy<Value = Algorithm> {
    (0..Algorithm::ALL.len()).prop_map(|i| Algorithm::ALL[i])
}

/// The algorithms whose lines `-c` reads (not cksum's crc, bsd, sysv).
fn checkable_algorithm() -> impl Strategy<Value = Algorithm> {
    algorithm().prop_filter("checkable", |a| !a.is_legacy())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn gnu_parser_never_panics(line in proptest::collection::vec(any::<u8>(), 0..200), a in algorithm(), any_tag in any::<bool>()) {
        let policy = if any_tag { gnu::TagPolicy::Any(a) } else { gnu::TagPolicy::Only(a) };
        for policy in [policy, gnu::TagPolicy::CoreutilsTagged] {
            let mut parser = gnu::CheckParser::new(policy);
            let _ = parser.parse(&line);
            let _ = parser.parse(&line);
        }
    }

    #[test]
    fn gnu_parser_never_panics_on_near_misses(prefix in "(\\\\)?(MD5|SHA1|BLAKE2b|BLAKE2b-[0-9x]{1,4}|XXH3|XXH32)? ?\\(?", rest in "[ -~]{0,80}") {
        let line = format!("{prefix}{rest}");
        for a in Algorithm::ALL {
            for policy in [gnu::TagPolicy::Any(a), gnu::TagPolicy::Only(a), gnu::TagPolicy::CoreutilsTagged] {
                let mut parser = gnu::CheckParser::new(policy);
                let _ = parser.parse(line.as_bytes());
            }
        }
    }

    /// A tag with nothing after it (coreutils' b2sum.sh feeds "BLAKE2b"
    /// alone to `cksum -a blake2b -c`): improperly formatted, not a panic.
    #[test]
    fn gnu_parser_reads_a_bare_tag_as_misformatted(a in checkable_algorithm(), escaped in any::<bool>()) {
        let line = format!("{}{}", if escaped { "\\" } else { "" }, a.tag());
        for policy in [gnu::TagPolicy::Any(a), gnu::TagPolicy::Only(a), gnu::TagPolicy::CoreutilsTagged] {
            let mut parser = gnu::CheckParser::new(policy);
            prop_assert!(parser.parse(line.as_bytes()).is_none(), "{line:?} parsed");
        }
    }

    #[test]
    fn xxhsum_and_b3sum_parsers_never_panic(line in proptest::collection::vec(any::<u8>(), 0..200), le in any::<bool>()) {
        let _ = xxhsum::parse_line(&line, le);
        let _ = b3sum::parse_line(&String::from_utf8_lossy(&line));
    }

    #[cfg(feature = "tree")]
    #[test]
    fn gnu_lines_round_trip(name in proptest::collection::vec(1u8..=255, 1..40), a in checkable_algorithm(), tagged in any::<bool>(), binary in any::<bool>()) {
        let digest = a.hash_bytes(&name);
        let style = if tagged { gnu::LineStyle::Tagged } else { gnu::LineStyle::Untagged { binary } };
        let mut line = Vec::new();
        gnu::write_line(&mut line, a, (&digest, gnu::Encoding::Hex), &name, style, b'\n');
        line.pop();
        let parsed = gnu::CheckParser::new(gnu::TagPolicy::Any(a)).parse(&line);
        // Whatever the name (spaces, '*', ')', newlines, invalid UTF-8),
        // a written line must read back as the same file and digest.
        let parsed = parsed.expect("written line parses");
        prop_assert_eq!(parsed.algorithm, a);
        prop_assert_eq!(parsed.expected, digest);
        prop_assert_eq!(parsed.name.as_ref(), &name[..]);
    }
}
