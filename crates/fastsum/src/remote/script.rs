//! The script sent to the remote `sh`. Every method's records are
//! NUL-separated (names may hold any byte but NUL), the first line names
//! the method, and a trailer closes a complete stream (read by
//! `stream.rs`).

use super::{Method, Remote, RemoteOptions};
use crate::algo::Algorithm;

/// `bytes` quoted for POSIX `sh`: in single quotes, each `'` as `'\''`.
/// Nothing inside single quotes is special to the shell, so any name
/// (quotes, `$(...)`, backticks, `;`, newlines, bytes that are not UTF-8)
/// arrives as data.
pub(crate) fn sh_quote(bytes: &[u8]) -> Vec<u8> {
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
pub(super) fn library_name(algorithm: Algorithm) -> Option<&'static str> {
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
pub(super) fn spelled(path: &[u8]) -> (Vec<u8>, bool) {
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

/// The helpers every listing uses: which methods the host has.
const DEFS: &[u8] = br#"have() { command -v "$1" >/dev/null 2>&1; }
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
"#;

/// One path's listing (of `$P`): the method chosen, the tree listed and
/// hashed, the trailer.
const BODY: &[u8] = br#"if [ -z "$M" ]; then
  for m in fastsum coreutils bsd perl python; do
    if ok_$m; then M=$m; break; fi
  done
  if [ -z "$M" ]; then printf 'fastsum-remote-none\n'; exit 0; fi
elif ! ok_$M; then printf 'fastsum-remote-unavailable %s\n' "$M"; exit 0
fi
if [ ! -e "$P" ]; then printf 'fastsum-remote-missing\n'; exit 0; fi
# A root that is neither a file nor a directory (a FIFO, a socket, a
# device) is never opened: reading a FIFO waits for a writer forever.
if [ ! -f "$P" ] && [ ! -d "$P" ]; then printf 'fastsum-remote-special\n'; exit 0; fi
# The listing goes out in byte order where the host's sort has -z (GNU,
# BSD, busybox), so that fastsum takes it as it streams ("sorted" on the
# method line; fastsum's own walk is in that order); else fastsum sorts.
S=
if [ "$M" = fastsum ] || [ "$(printf 'b\0a\0' | LC_ALL=C sort -z 2>/dev/null | tr '\0' ,)" = a,b, ]; then S=sorted; fi
printf 'fastsum-remote-method %s%s\n' "$M" "${S:+ $S}"
# The root is followed as the local walk follows an operand (-H), links
# below it are not: they are counted (a batch's count, "lN ", on fd 4) and
# the total goes out in the trailer. find's status is carried out of a
# pipe on fd 4 too ("sN"; sh has no pipefail): a directory it could not
# read fails the listing.
exec 3>&1
LINKS=
ordered() { if [ -n "$S" ]; then LC_ALL=C sort -z; else cat; fi; }
listed() { { find -H "$P" \( -type f -print0 \) -o \( -type l -exec sh -c 'printf "l%s " $# >&4' sh {} + \)
  printf 's%s' $? >&4; } | ordered; }
piped() { f=$( { listed | "$@" >&3; } 4>&1 ); s=$?; LINKS=0; st=
  for w in $f; do case $w in l*) LINKS=$((LINKS + ${w#l})) ;; s*) st=${w#s} ;; esac; done
  [ "$st" = 0 ] && [ $s -eq 0 ]; }
case $M in
  # fastsum's own records say which links it left out.
  # With offers on stdin (diff's directory digests) a fastsum that knows
  # --prune-matching leaves out the sub-trees they match.
  fastsum) if [ -n "$PRUNE" ] && "$FS" --help 2>/dev/null | grep -q -e --prune-matching; then
      "$FS" -a "$A" -r --json --prune-matching=- $CACHE -- "$P"
    else "$FS" -a "$A" -r --json $CACHE -- "$P"; fi; s=$?; [ $s -le 1 ] ;;
  # A batch at a time: its names, then its hashes (a file the tool could
  # not read has none), so neither side holds the whole listing.
  coreutils) piped xargs -0 -r sh -c 'printf "%s\0" "$@"; printf "\0fastsum-remote-hashes\0"
    "$0" -z -- "$@"; printf "\0fastsum-remote-batch\0"' "$T" ;;
  bsd) piped xargs -0 sh -c '
    out=$('"$BT"' "$@" 2>/dev/null) && [ $(printf "%s\n" "$out" | wc -l) -eq $# ] || out=
    if [ -n "$out" ]; then printf "%s\n" "$out" | for f do IFS= read -r d; d=${d#\\}; printf "D%s\0%s\0" "${d%% *}" "$f"; done
    else for f do
      if d=$('"$BT"' "$f" 2>/dev/null) && [ -n "$d" ]; then d=${d#\\}; printf "D%s\0%s\0" "${d%% *}" "$f"
      else printf "Ecould not be read\0%s\0" "$f"; fi; done
    fi' sh ;;
  perl) piped perl -e "$PERL" "$L" ;;
  python) piped python3 -c "$PY" "$L" ;;
esac
if [ $? -ne 0 ]; then printf '\0fastsum-remote-failed\0'
elif [ -n "$LINKS" ]; then printf '\0fastsum-remote-links\0%s\0fastsum-remote-end\0' "$LINKS"
else printf '\0fastsum-remote-end\0'; fi
"#;

/// The script that lists the trees at `paths` (as the caller gave them),
/// with `upload` (one path only) the upload of this fastsum first; with
/// `text` (several paths) each path's stream in text (`text::wrap`).
pub(super) fn build(
    paths: &[&[u8]],
    algorithm: Algorithm,
    options: &RemoteOptions,
    upload: bool,
    text: bool,
) -> Result<Vec<u8>, String> {
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
    line(&[b"A=", algorithm.to_string().as_bytes()]);
    line(&[b"FS=", &sh_quote(fastsum.as_bytes())]);
    line(&[b"T=", tool.unwrap_or("").as_bytes()]);
    line(&[b"L=", lib.unwrap_or("").as_bytes()]);
    line(&[b"M=", forced.map_or("", Method::name).as_bytes()]);
    line(&[b"CACHE=", if options.cache { b"--cache" } else { b"" }]);
    let prune = options.offers.is_some() && !upload && paths.len() == 1;
    line(&[b"PRUNE=", if prune { b"1" } else { b"" }]);
    line(&[b"PERL=", &sh_quote(PERL.as_bytes())]);
    line(&[b"PY=", &sh_quote(PYTHON.as_bytes())]);
    if upload {
        s.extend_from_slice(UPLOAD);
    }
    s.extend_from_slice(DEFS);
    match paths {
        [] => return Err("no path to list".into()),
        // One path: as it always ran (the upload's trap, `exit` at the end).
        [path] => {
            s.extend_from_slice(&[b"P=", &sh_quote(&spelled(path).0)[..], b"\n"].concat());
            s.extend_from_slice(BODY);
        }
        // Several: the same body once for each, in a subshell (its `exit`
        // ends that path's stream only), each stream whole in itself.
        _ => {
            s.extend_from_slice(b"for P in");
            for path in paths {
                s.push(b' ');
                s.extend_from_slice(&sh_quote(&spelled(path).0));
            }
            s.extend_from_slice(b"; do\n");
            let body = [b"(\n", BODY, b")"].concat();
            match text {
                true => s.extend_from_slice(&super::text::wrap(&body)),
                false => s.extend_from_slice(&body),
            }
            s.extend_from_slice(b"\ndone\n");
        }
    }
    // The whole script is one argument for the remote login shell to run.
    let mut command = b"sh -c ".to_vec();
    command.extend_from_slice(&sh_quote(&s));
    Ok(command)
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
}
