//! The script sent to the remote `sh`, and the reading of what it sends
//! back. Every method's records are NUL-separated (names may hold any
//! byte but NUL), the first line names the method, and a trailer closes a
//! complete stream.

use super::{Method, Remote, RemoteListing, RemoteOptions, RemoteRecord};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::manifest::json_read::{parse_object, Value};
use crate::manifest::read::decode_base64;

const END: &[u8] = b"\0fastsum-remote-end\0";
const FAILED: &[u8] = b"\0fastsum-remote-failed\0";
const HASHES: &[u8] = b"\0fastsum-remote-hashes\0";

/// `bytes` quoted for POSIX `sh`: in single quotes, each `'` as `'\''`.
/// Nothing inside single quotes is special to the shell, so any name
/// (quotes, `$(...)`, backticks, `;`, newlines, bytes that are not UTF-8)
/// arrives as data.
pub fn sh_quote(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 2);
    out.push(b'\'');
    for &b in bytes {
        if b == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(b);
        }
    }
    out.push(b'\'');
    out
}

/// What Perl's core modules and Python's hashlib call it: fastsum's own
/// name, for the algorithms both have.
fn library_name(algorithm: Algorithm) -> Option<&'static str> {
    use Algorithm::*;
    matches!(algorithm, Md5 | Sha1 | Sha224 | Sha256 | Sha384 | Sha512).then(|| algorithm.name())
}

/// Reads NUL-separated paths on stdin; for each, `D<hex>\0<path>\0` or
/// `E<why>\0<path>\0`. `addfile` on a binmode handle streams the file.
const PERL: &str = r#"use strict; use Digest::MD5; use Digest::SHA;
my $alg = shift; $/ = "\0"; binmode STDIN; binmode STDOUT;
while (my $p = <STDIN>) {
  chomp $p;
  my $d = $alg eq "md5" ? Digest::MD5->new : Digest::SHA->new(substr($alg, 3));
  my $fh;
  if (open($fh, "<", $p)) {
    binmode $fh;
    if (eval { $d->addfile($fh); 1 }) { print "D", $d->hexdigest, "\0", $p, "\0" }
    else { print "E", ($! || "read error"), "\0", $p, "\0" }
    close $fh;
  } else { print "E", $!, "\0", $p, "\0" }
}
"#;

/// The same in Python, a MiB at a time.
const PYTHON: &str = r#"import sys, hashlib
alg = sys.argv[1]; out = sys.stdout.buffer; buf = b""
def one(p):
    try:
        h = hashlib.new(alg)
        with open(p, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        out.write(b"D" + h.hexdigest().encode() + b"\0" + p + b"\0")
    except OSError as e:
        out.write(b"E" + (e.strerror or str(e)).encode() + b"\0" + p + b"\0")
for block in iter(lambda: sys.stdin.buffer.read(1 << 16), b""):
    buf += block
    *names, buf = buf.split(b"\0")
    for p in names:
        one(p)
"#;

/// `--upload-self`: the host says what it is, then reads the binary on
/// standard input (nothing, when it could not run there) into a private
/// temporary directory removed on exit; a binary that arrived is the
/// fastsum the method order tries first.
const UPLOAD: &[u8] = br#"printf 'fastsum-remote-uname %s\n' "$(uname -sm 2>/dev/null)"
if d=$(mktemp -d "${TMPDIR:-/tmp}/fastsum.XXXXXX"); then
  trap 'rm -rf "$d"' EXIT
  trap 'exit 1' HUP INT TERM PIPE
  cat > "$d/fastsum"
  if [ -s "$d/fastsum" ] && chmod 700 "$d/fastsum"; then FS="$d/fastsum"; fi
else cat > /dev/null
fi
"#;

/// The path as the script spells it: `.` for an empty one (the login
/// directory), `./` before a leading `-` (find and the tools would read it
/// as an option); `true` when it differs from the path given.
fn spelled(path: &[u8]) -> (Vec<u8>, bool) {
    match path.first() {
        None => (b".".to_vec(), true),
        Some(b'-') => ([b"./", path].concat(), true),
        Some(_) => (path.to_vec(), false),
    }
}

/// A path the remote reported, back in the spelling the caller gave: the
/// `./` the script added is taken off again.
pub(super) fn as_given(remote: &Remote, reported: Vec<u8>) -> Vec<u8> {
    match reported.strip_prefix(b"./") {
        Some(rest) if spelled(&remote.path).1 => rest.to_vec(),
        _ => reported,
    }
}

/// The script for `remote`.
pub(super) fn build(
    remote: &Remote,
    algorithm: Algorithm,
    options: &RemoteOptions,
    upload: bool,
) -> Result<Vec<u8>, String> {
    let (path, _) = spelled(&remote.path);
    let tool = algorithm.gnu_tool();
    let lib = library_name(algorithm);
    let forced = options.method;
    match (forced, tool, lib) {
        (Some(Method::Coreutils), None, _)
        | (Some(Method::Bsd | Method::Perl | Method::Python), _, None) => {
            return Err(format!(
                "the {} method cannot compute {algorithm} (only the fastsum method can)",
                forced.expect("forced").name()
            ))
        }
        _ => {}
    }
    let fastsum = options.remote_fastsum.as_deref().unwrap_or("fastsum");
    let mut s = Vec::new();
    let mut line = |parts: &[&[u8]]| {
        for p in parts {
            s.extend_from_slice(p);
        }
        s.push(b'\n');
    };
    line(&[b"P=", &sh_quote(&path)]);
    line(&[b"A=", algorithm.to_string().as_bytes()]);
    line(&[b"FS=", &sh_quote(fastsum.as_bytes())]);
    line(&[b"T=", tool.unwrap_or("").as_bytes()]);
    line(&[b"L=", lib.unwrap_or("").as_bytes()]);
    line(&[b"M=", forced.map_or("", Method::name).as_bytes()]);
    line(&[b"CACHE=", if options.cache { b"--cache" } else { b"" }]);
    line(&[b"PERL=", &sh_quote(PERL.as_bytes())]);
    line(&[b"PY=", &sh_quote(PYTHON.as_bytes())]);
    if upload {
        s.extend_from_slice(UPLOAD);
    }
    s.extend_from_slice(
        br#"have() { command -v "$1" >/dev/null 2>&1; }
ok_fastsum() { have "$FS" && "$FS" --version 2>/dev/null | grep -q '^fastsum '; }
ok_coreutils() { [ -n "$T" ] && have find && have xargs && have "$T" && "$T" --version 2>/dev/null | grep -q GNU; }
ok_perl() { [ -n "$L" ] && have find && have perl && perl -MDigest::MD5 -MDigest::SHA -e 1 2>/dev/null; }
ok_bsd() { have find && have xargs && case $A in
  md5) have md5 && BT='md5 -q' ;;
  sha1|sha224|sha256|sha384|sha512)
    if have shasum; then BT="shasum -a ${A#sha}"; elif have "$A"; then BT="$A -q"; else return 1; fi ;;
  *) return 1 ;;
  esac; }
ok_python() { [ -n "$L" ] && have find && have python3; }
if [ -z "$M" ]; then
  for m in fastsum coreutils bsd perl python; do
    if ok_$m; then M=$m; break; fi
  done
  if [ -z "$M" ]; then printf 'fastsum-remote-none\n'; exit 0; fi
elif ! ok_$M; then printf 'fastsum-remote-unavailable %s\n' "$M"; exit 0
fi
if [ ! -e "$P" ] && [ ! -L "$P" ]; then printf 'fastsum-remote-missing\n'; exit 0; fi
printf 'fastsum-remote-method %s\n' "$M"
case $M in
  fastsum) "$FS" -a "$A" -r --json $CACHE -- "$P"; s=$?; [ $s -le 1 ] ;;
  coreutils) find "$P" -type f -print0 && printf '\0fastsum-remote-hashes\0' &&
    { find "$P" -type f -print0 | xargs -0 -r "$T" -z --; s=$?; [ $s -eq 0 ] || [ $s -eq 123 ]; } ;;
  bsd) find "$P" -type f -print0 | xargs -0 sh -c '
    out=$('"$BT"' "$@" 2>/dev/null) && [ $(printf "%s\n" "$out" | wc -l) -eq $# ] || out=
    if [ -n "$out" ]; then printf "%s\n" "$out" | for f do IFS= read -r d; d=${d#\\}; printf "D%s\0%s\0" "${d%% *}" "$f"; done
    else for f do
      if d=$('"$BT"' "$f" 2>/dev/null) && [ -n "$d" ]; then d=${d#\\}; printf "D%s\0%s\0" "${d%% *}" "$f"
      else printf "Ecould not be read\0%s\0" "$f"; fi; done
    fi' sh ;;
  perl) find "$P" -type f -print0 | perl -e "$PERL" "$L" ;;
  python) find "$P" -type f -print0 | python3 -c "$PY" "$L" ;;
esac
if [ $? -eq 0 ]; then printf '\0fastsum-remote-end\0'; else printf '\0fastsum-remote-failed\0'; fi
"#,
    );
    // The whole script is one argument for the remote login shell to run.
    let mut command = b"sh -c ".to_vec();
    command.extend_from_slice(&sh_quote(&s));
    Ok(command)
}

fn digest_of(hex: &[u8], algorithm: Algorithm) -> Result<Digest, String> {
    std::str::from_utf8(hex)
        .ok()
        .and_then(|h| Digest::from_hex(h).ok())
        .filter(|d| d.len() == algorithm.output_len())
        .ok_or_else(|| {
            format!(
                "bad digest from the remote: {}",
                String::from_utf8_lossy(hex)
            )
        })
}

/// Reads what the script sent back.
pub(super) fn parse(out: &[u8], algorithm: Algorithm) -> Result<RemoteListing, String> {
    let newline = out.iter().position(|&b| b == b'\n');
    let first = newline.map_or(out, |n| &out[..n]);
    let method = match first {
        b"fastsum-remote-none"
            if library_name(algorithm).is_none() && algorithm.gnu_tool().is_none() =>
        {
            return Err(format!(
                "no way to compute {algorithm} there: only fastsum can, and none is on its PATH \
                 (--remote-fastsum PATH names one; --upload-self sends this one)"
            ))
        }
        b"fastsum-remote-none" => {
            return Err(format!(
                "no way to compute {algorithm} there: it has neither fastsum, GNU coreutils, \
                 BSD md5/shasum, perl with Digest::MD5/SHA, nor python3"
            ))
        }
        b"fastsum-remote-missing" => return Err("No such file or directory".into()),
        _ => match first.strip_prefix(b"fastsum-remote-unavailable ") {
            Some(m) => {
                return Err(format!(
                    "the {} method is not available there",
                    String::from_utf8_lossy(m)
                ))
            }
            None => first
                .strip_prefix(b"fastsum-remote-method ")
                .and_then(|m| Method::from_name(std::str::from_utf8(m).ok()?))
                .ok_or("the connection ended before the remote answered")?,
        },
    };
    let body = &out[newline.expect("a method line") + 1..];
    let body = match body.strip_suffix(END) {
        Some(body) => body,
        None if body.ends_with(FAILED) => {
            return Err(format!(
                "the {} method failed on the remote host: the listing is incomplete",
                method.name()
            ))
        }
        None => {
            return Err(
                "the connection ended before the listing did: the result would be incomplete"
                    .into(),
            )
        }
    };
    let mut records = match method {
        Method::Fastsum => parse_json(body, algorithm)?,
        Method::Coreutils => parse_coreutils(body, algorithm)?,
        Method::Bsd | Method::Perl | Method::Python => parse_tagged(body, algorithm)?,
    };
    records.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(RemoteListing {
        method,
        records,
        uploaded: false,
    })
}

fn parse_json(body: &[u8], algorithm: Algorithm) -> Result<Vec<RemoteRecord>, String> {
    let mut records = Vec::new();
    for line in body.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let text = std::str::from_utf8(line).map_err(|_| "a JSON line that is not UTF-8")?;
        let fields = parse_object(text)?;
        let get = |k: &str| {
            fields
                .iter()
                .find(|(n, _)| n == k)
                .and_then(|(_, v)| match v {
                    Value::Text(t) => Some(t.as_str()),
                    _ => None,
                })
        };
        if get("skipped").is_some() {
            continue; // symlinks and special files: left out, as -r does
        }
        let path = match (get("path_base64"), get("path")) {
            (Some(b64), _) => decode_base64(b64).ok_or("bad path_base64 from the remote")?,
            (None, Some(p)) => p.as_bytes().to_vec(),
            _ => return Err("a JSON record without a path".into()),
        };
        let digest = match (get("digest"), get("error")) {
            (Some(hex), _) => Ok(digest_of(hex.as_bytes(), algorithm)?),
            (None, Some(why)) => Err(why.to_string()),
            _ => return Err("a JSON record without a digest or an error".into()),
        };
        records.push(RemoteRecord { path, digest });
    }
    Ok(records)
}

fn parse_coreutils(body: &[u8], algorithm: Algorithm) -> Result<Vec<RemoteRecord>, String> {
    let at = body
        .windows(HASHES.len())
        .position(|w| w == HASHES)
        .ok_or("the listing ended early")?;
    let listed: Vec<&[u8]> = body[..at]
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .collect();
    let mut hashed = std::collections::HashMap::new();
    for line in body[at + HASHES.len()..]
        .split(|&b| b == 0)
        .filter(|l| !l.is_empty())
    {
        let width = 2 * algorithm.output_len();
        if line.len() < width + 2
            || &line[width..width + 2] != b"  " && &line[width..width + 2] != b" *"
        {
            return Err(format!(
                "unexpected line from the remote tool: {}",
                String::from_utf8_lossy(line)
            ));
        }
        hashed.insert(&line[width + 2..], digest_of(&line[..width], algorithm)?);
    }
    // A listed file the tool did not answer for could not be read (its
    // message went to the remote's stderr).
    Ok(listed
        .into_iter()
        .map(|p| RemoteRecord {
            path: p.to_vec(),
            digest: hashed
                .get(p)
                .copied()
                .ok_or_else(|| "could not be read on the remote host".to_string()),
        })
        .collect())
}

fn parse_tagged(body: &[u8], algorithm: Algorithm) -> Result<Vec<RemoteRecord>, String> {
    let mut fields = body.split(|&b| b == 0);
    let mut records = Vec::new();
    while let Some(head) = fields.next() {
        if head.is_empty() {
            break;
        }
        let path = fields.next().ok_or("a record without its path")?.to_vec();
        let digest = match head[0] {
            b'D' => Ok(digest_of(&head[1..], algorithm)?),
            b'E' => Err(String::from_utf8_lossy(&head[1..]).into_owned()),
            _ => return Err("an unexpected record from the remote script".into()),
        };
        records.push(RemoteRecord { path, digest });
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_every_byte_through_a_real_sh() {
        let nasty: &[&[u8]] = &[
            b"'; touch PWNED; '",
            b"$(touch PWNED)",
            b"`x`",
            b"a\nb",
            b"-rf",
            b"\xff\xfe*?",
            b"\"\\",
        ];
        for name in nasty {
            let mut script = b"printf '%s' ".to_vec();
            script.extend_from_slice(&sh_quote(name));
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(crate::fs::name::os_string(script))
                .output()
                .unwrap();
            assert_eq!(out.stdout, *name);
        }
    }

    #[test]
    fn a_stream_without_its_trailer_is_never_complete() {
        let good = b"fastsum-remote-method perl\nD900150983cd24fb0d6963f7d28e17f72\0a\0\0fastsum-remote-end\0";
        let listing = parse(good, Algorithm::Md5).unwrap();
        assert_eq!(listing.records.len(), 1);
        assert!(parse(&good[..good.len() - 5], Algorithm::Md5)
            .unwrap_err()
            .contains("incomplete"));
        assert!(parse(b"", Algorithm::Md5).is_err());
        // Nothing applies: the message says what was looked for.
        let none = |a| parse(b"fastsum-remote-none\n", a).unwrap_err();
        assert!(none(Algorithm::Md5).contains("BSD md5/shasum, perl"));
        assert!(none(Algorithm::Xxh128).contains("only fastsum can"));
    }
}
