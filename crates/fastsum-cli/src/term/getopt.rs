//! Command-line parsing with glibc `getopt_long`'s exact behaviour and
//! messages, so that a personality (`md5sum` ...) reports a bad option
//! byte-for-byte as the original does: option permutation, `--`, bundled
//! short options, unambiguous long-option prefixes, `POSIXLY_CORRECT`.
//!
//! clap cannot do this: its messages and its rules for prefixes differ.

/// Whether an option takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HasArg {
    /// A flag.
    No,
    /// Needs a value (`-l 256`, `-l256`, `--length=256`, `--length 256`).
    Required,
    /// Takes a value only as `--cache=PATH` (glibc's `optional_argument`;
    /// long options only here).
    Optional,
}

/// An option, named by the key the caller matches on.
#[derive(Clone, Copy, Debug)]
pub struct OptSpec {
    /// The short letter, if any.
    pub short: Option<u8>,
    /// The long name, if any.
    pub long: Option<&'static str>,
    /// Whether it takes a value.
    pub has_arg: HasArg,
    /// What the caller calls it.
    pub key: &'static str,
}

/// One recognised option and its value.
#[derive(Debug, PartialEq, Eq)]
pub struct Opt {
    /// The option's key.
    pub key: &'static str,
    /// Its value, for options that take one.
    pub value: Option<Vec<u8>>,
}

/// Walks the arguments in order, yielding options (or getopt's error
/// message for a bad one) and collecting operands.
pub struct Getopt<'a> {
    args: &'a [Vec<u8>],
    specs: &'a [OptSpec],
    index: usize,
    /// Position inside a bundle of short options (`-bz`).
    cluster: Option<usize>,
    operands: Vec<Vec<u8>>,
    posix: bool,
    finished: bool,
}

impl<'a> Getopt<'a> {
    /// Parses `args` (without the program name) against `specs`.
    pub fn new(args: &'a [Vec<u8>], specs: &'a [OptSpec]) -> Self {
        let posix = std::env::var_os("POSIXLY_CORRECT").is_some();
        Getopt {
            args,
            specs,
            index: 0,
            cluster: None,
            operands: Vec::new(),
            posix,
            finished: false,
        }
    }

    /// The operands (non-option arguments) seen so far; all of them once
    /// the iterator is exhausted.
    pub fn into_operands(self) -> Vec<Vec<u8>> {
        self.operands
    }

    fn short(&mut self, arg: &'a [u8], pos: usize) -> Result<Opt, Vec<u8>> {
        let letter = arg[pos];
        let spec = self.specs.iter().find(|s| s.short == Some(letter));
        let at_end = pos + 1 >= arg.len();
        let Some(spec) = spec else {
            self.advance_cluster(at_end, pos);
            // glibc writes the byte itself (`%c`), not a character.
            return Err([&b"invalid option -- '"[..], &[letter], b"'"].concat());
        };
        match spec.has_arg {
            HasArg::No => {
                self.advance_cluster(at_end, pos);
                Ok(Opt {
                    key: spec.key,
                    value: None,
                })
            }
            HasArg::Required | HasArg::Optional => {
                self.cluster = None;
                self.index += 1;
                if !at_end {
                    return Ok(Opt {
                        key: spec.key,
                        value: Some(arg[pos + 1..].to_vec()),
                    });
                }
                match self.args.get(self.index) {
                    Some(value) => {
                        self.index += 1;
                        Ok(Opt {
                            key: spec.key,
                            value: Some(value.clone()),
                        })
                    }
                    None => {
                        Err([&b"option requires an argument -- '"[..], &[letter], b"'"].concat())
                    }
                }
            }
        }
    }

    fn advance_cluster(&mut self, at_end: bool, pos: usize) {
        if at_end {
            self.cluster = None;
            self.index += 1;
        } else {
            self.cluster = Some(pos + 1);
        }
    }

    fn long(&mut self, body: &'a [u8]) -> Result<Opt, Vec<u8>> {
        self.index += 1;
        let (name, inline_value) = match body.iter().position(|&b| b == b'=') {
            Some(eq) => (&body[..eq], Some(&body[eq + 1..])),
            None => (body, None),
        };
        let exact = self
            .specs
            .iter()
            .find(|s| s.long.is_some_and(|l| l.as_bytes() == name));
        let spec: OptSpec = match exact {
            Some(spec) => *spec,
            None => {
                let matches: Vec<&OptSpec> = self
                    .specs
                    .iter()
                    .filter(|s| s.long.is_some_and(|l| l.as_bytes().starts_with(name)))
                    .collect();
                match matches.as_slice() {
                    [] => return Err([&b"unrecognized option '--"[..], body, b"'"].concat()),
                    [one] => **one,
                    many => {
                        // glibc names the whole argument, `=VALUE` too.
                        let mut message =
                            [&b"option '--"[..], body, b"' is ambiguous; possibilities:"].concat();
                        for s in many {
                            message.extend_from_slice(
                                format!(" '--{}'", s.long.unwrap_or_default()).as_bytes(),
                            );
                        }
                        return Err(message);
                    }
                }
            }
        };
        let full = spec.long.unwrap_or_default();
        match (spec.has_arg, inline_value) {
            (HasArg::No, Some(_)) => {
                Err(format!("option '--{full}' doesn't allow an argument").into_bytes())
            }
            (HasArg::No | HasArg::Optional, None) => Ok(Opt {
                key: spec.key,
                value: None,
            }),
            (HasArg::Optional, Some(v)) => Ok(Opt {
                key: spec.key,
                value: Some(v.to_vec()),
            }),
            (HasArg::Required, Some(v)) => Ok(Opt {
                key: spec.key,
                value: Some(v.to_vec()),
            }),
            (HasArg::Required, None) => match self.args.get(self.index) {
                Some(v) => {
                    self.index += 1;
                    Ok(Opt {
                        key: spec.key,
                        value: Some(v.clone()),
                    })
                }
                None => Err(format!("option '--{full}' requires an argument").into_bytes()),
            },
        }
    }
}

impl Iterator for Getopt<'_> {
    type Item = Result<Opt, Vec<u8>>;

    fn next(&mut self) -> Option<Self::Item> {
        let args = self.args;
        if let Some(pos) = self.cluster {
            return Some(self.short(&args[self.index], pos));
        }
        loop {
            if self.finished || self.index >= args.len() {
                self.finished = true;
                return None;
            }
            let arg = &args[self.index];
            if arg.as_slice() == b"--" {
                self.operands.extend(args[self.index + 1..].iter().cloned());
                self.finished = true;
                return None;
            }
            if arg.len() < 2 || arg[0] != b'-' {
                if self.posix {
                    self.operands.extend(args[self.index..].iter().cloned());
                    self.finished = true;
                    return None;
                }
                self.operands.push(arg.clone());
                self.index += 1;
                continue;
            }
            if let Some(body) = arg.strip_prefix(b"--") {
                return Some(self.long(body));
            }
            return Some(self.short(arg, 1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[OptSpec] = &[
        OptSpec {
            short: Some(b'l'),
            long: Some("length"),
            has_arg: HasArg::Required,
            key: "l",
        },
        OptSpec {
            short: Some(b'c'),
            long: Some("check"),
            has_arg: HasArg::No,
            key: "c",
        },
        OptSpec {
            short: None,
            long: Some("status"),
            has_arg: HasArg::No,
            key: "status",
        },
        OptSpec {
            short: None,
            long: Some("strict"),
            has_arg: HasArg::No,
            key: "strict",
        },
        OptSpec {
            short: None,
            long: Some("tag"),
            has_arg: HasArg::No,
            key: "tag",
        },
    ];

    type Parsed = Result<(String, Option<String>), String>;

    fn run(args: &[&str]) -> (Vec<Parsed>, Vec<String>) {
        let args: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
        let mut g = Getopt::new(&args, SPECS);
        let opts = g
            .by_ref()
            .map(|r| {
                r.map(|o| {
                    (
                        o.key.to_string(),
                        o.value.map(|v| String::from_utf8(v).unwrap()),
                    )
                })
                .map_err(|e| String::from_utf8(e).unwrap())
            })
            .collect();
        (
            opts,
            g.into_operands()
                .into_iter()
                .map(|v| String::from_utf8(v).unwrap())
                .collect(),
        )
    }

    #[test]
    fn permutes_bundles_and_takes_values() {
        let (opts, operands) = run(&["a", "-cl256", "b", "--len=8", "--", "-c"]);
        assert_eq!(
            opts,
            vec![
                Ok(("c".into(), None)),
                Ok(("l".into(), Some("256".into()))),
                Ok(("l".into(), Some("8".into())))
            ]
        );
        assert_eq!(operands, vec!["a", "b", "-c"]);
    }

    #[test]
    fn reports_errors_as_glibc() {
        assert_eq!(
            run(&["--s"]).0,
            vec![Err(
                "option '--s' is ambiguous; possibilities: '--status' '--strict'".into()
            )]
        );
        assert_eq!(
            run(&["--ta=x"]).0,
            vec![Err("option '--tag' doesn't allow an argument".into())]
        );
        assert_eq!(
            run(&["--foo=bar"]).0,
            vec![Err("unrecognized option '--foo=bar'".into())]
        );
        assert_eq!(
            run(&["-cx"]).0,
            vec![Ok(("c".into(), None)), Err("invalid option -- 'x'".into())]
        );
        assert_eq!(
            run(&["-l"]).0,
            vec![Err("option requires an argument -- 'l'".into())]
        );
        assert_eq!(
            run(&["--length"]).0,
            vec![Err("option '--length' requires an argument".into())]
        );
        // glibc names the whole argument of an ambiguous one, `=VALUE` too.
        assert_eq!(
            run(&["--s=1"]).0,
            vec![Err(
                "option '--s=1' is ambiguous; possibilities: '--status' '--strict'".into()
            )]
        );
    }

    /// A byte that is not an option is written as the byte it is (glibc's
    /// `%c`), not re-encoded as the character of that number; the other
    /// messages keep every byte of the argument.
    #[test]
    fn messages_keep_the_arguments_bytes() {
        let args = vec![b"-\xc3".to_vec(), b"--\xffoo=\xfe".to_vec()];
        let errors: Vec<Vec<u8>> = Getopt::new(&args, SPECS).filter_map(Result::err).collect();
        assert_eq!(
            errors,
            vec![
                b"invalid option -- '\xc3'".to_vec(),
                b"unrecognized option '--\xffoo=\xfe'".to_vec()
            ]
        );
    }
}
