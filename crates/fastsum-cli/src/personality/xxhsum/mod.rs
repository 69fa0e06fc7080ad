//! The xxhsum personality: xxhsum 0.8.1 (`cli/xxhsum.c`), byte for byte.
//!
//! Its conventions differ from coreutils' and are kept as they are: options
//! end at the first file name; standard input is named `stdin`; messages
//! have their own wording (and trailing spaces); the check summary goes to
//! stdout; a read error ends the whole run; stdout is fully buffered.

mod check;
mod options;

use std::fs::File;
use std::io::{self, Read};

use fastsum::manifest::xxhsum as manifest;
use fastsum::{Algorithm, Digest, FileHasher};

use crate::term::output::{Buffering, Output};

struct Run {
    exe: String,
    out: Output,
    hasher: FileHasher,
    log_level: i32,
}

impl Run {
    /// A message on stderr; names in it are their bytes, as xxhsum
    /// prints them (never made valid UTF-8).
    fn log(&mut self, message: impl AsRef<[u8]>) {
        self.out.err_raw(message.as_ref());
    }

    fn bad_usage(&mut self) -> i32 {
        self.log("Wrong parameters\n\n");
        self.usage();
        1
    }

    fn usage(&mut self) {
        let exe = self.exe.clone();
        // xxhsum's own banner, kept byte for byte in usage output (scripts
        // compare it); `--version` says what this really is.
        self.log(format!("{exe} 0.8.1 by Yann Collet \n"));
        self.log("Print or verify checksums using fast non-cryptographic algorithm xxHash \n\n");
        self.log(format!("Usage: {exe} [options] [files] \n\n"));
        self.log("When no filename provided or when '-' is provided, uses stdin as input. \n");
        self.log("Options: \n");
        self.log("  -H#         algorithm selection: 0,1,2,3 or 32,64,128 (default: 1) \n");
        self.log("  -c, --check read xxHash checksum from [files] and check them \n");
        self.log("  -h, --help  display a long help page about advanced options \n");
    }

    fn usage_advanced(&mut self) {
        self.usage();
        self.log("Advanced :\n");
        self.log("  -V, --version        Display version information \n");
        self.log("      --tag            Produce BSD-style checksum lines \n");
        self.log("      --little-endian  Checksum values use little endian convention (default: big endian) \n");
        self.log("  -b                   Run benchmark \n");
        self.log("  -b#                  Bench only algorithm variant # \n");
        self.log("  -i#                  Number of times to run the benchmark (default: 3) \n");
        self.log("  -q, --quiet          Don't display version header in benchmark mode \n");
        self.log("\n");
        self.log("The following four options are useful only when verifying checksums (-c): \n");
        self.log("  -q, --quiet          Don't print OK for each successfully verified file \n");
        self.log("      --status         Don't output anything, status code shows success \n");
        self.log("      --strict         Exit non-zero for improperly formatted checksum lines \n");
        self.log("      --warn           Warn about improperly formatted checksum lines \n");
    }

    /// xxhsum's reaction to a read error: a message, then exit(1) (which
    /// still flushes stdout).
    fn read_failure(&mut self) -> ! {
        self.log("Error: a failure occurred reading the input file.\n");
        let _ = self.out.finish();
        std::process::exit(1);
    }

    fn hash(&mut self, algorithm: Algorithm, reader: &mut dyn Read) -> Digest {
        match self.hasher.hash_reader(algorithm, reader) {
            Ok(d) => d,
            Err(_) => self.read_failure(),
        }
    }
}

/// Runs the xxhsum personality; returns the exit status.
pub fn run(program: &[u8], args: &[Vec<u8>]) -> i32 {
    let exe = String::from_utf8_lossy(program.rsplit(|&b| b == b'/').next().unwrap_or(program))
        .into_owned();
    let mut run = Run {
        exe,
        out: Output::new(Buffering::Full),
        hasher: FileHasher::new(),
        log_level: 2,
    };
    let settings = match options::parse(&mut run, args) {
        Ok(settings) => settings,
        Err(status) => return status,
    };
    // SAFETY: isatty only inspects the descriptor number.
    let stdin_is_console = unsafe { libc::isatty(0) } == 1;
    if settings.files_start.is_none() && stdin_is_console && !settings.explicit_stdin {
        return run.bad_usage();
    }
    let files = settings.files_start.map(|s| &args[s..]).unwrap_or(&[]);
    let status = if settings.check {
        check::check_all(&mut run, files, &settings)
    } else {
        hash_all(&mut run, files, &settings)
    };
    match run.out.finish() {
        Ok(()) => status,
        // xxhsum 0.8.1 ignores a failed write and exits 0 with nothing
        // written; fastsum says so, in xxhsum's own error style.
        Err(e) => {
            run.log(format!(
                "Error: write error: {} \n",
                fastsum::Error::os_message(&e)
            ));
            1
        }
    }
}

/// Every file's line (standard input's without files); the status.
fn hash_all(run: &mut Run, files: &[Vec<u8>], settings: &options::Settings) -> i32 {
    let (algorithm, tagged, little_endian) =
        (settings.algorithm, settings.tagged, settings.little_endian);
    let mut failed = false;
    if files.is_empty() {
        failed |= !hash_file(run, None, algorithm, tagged, little_endian);
    } else {
        for f in files {
            failed |= !hash_file(run, Some(f), algorithm, tagged, little_endian);
        }
        if run.log_level >= 2 {
            run.log(format!("\r{:70}\r", ""));
        }
    }
    i32::from(failed)
}

fn hash_file(
    run: &mut Run,
    name: Option<&Vec<u8>>,
    algorithm: Algorithm,
    tagged: bool,
    little_endian: bool,
) -> bool {
    let (digest, shown): (Digest, &[u8]) = match name {
        None => {
            let stdin = io::stdin();
            let mut lock = stdin.lock();
            (run.hash(algorithm, &mut lock), b"stdin")
        }
        Some(name) => {
            let path = &*fastsum::name::path(name);
            if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
                run.log([b"xxhsum: ", name.as_slice(), b": Is a directory \n"].concat());
                return false;
            }
            let mut file = match File::open(path) {
                Ok(f) => f,
                Err(e) => {
                    run.log(
                        [
                            b"Error: Could not open '",
                            name.as_slice(),
                            format!("': {}. \n", fastsum::Error::os_message(&e)).as_bytes(),
                        ]
                        .concat(),
                    );
                    return false;
                }
            };
            (run.hash(algorithm, &mut file), name.as_slice())
        }
    };
    manifest::XxhLine::write(
        run.out.stdout_buf(),
        algorithm,
        &digest,
        shown,
        tagged,
        little_endian,
    );
    run.out.commit();
    true
}
