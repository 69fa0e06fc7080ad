//! The checksum cache as every command asks for it: `--cache[=PATH]` as
//! a [`CacheChoice`], its path resolved ([`path`], the library's
//! `Cache::resolve_path`: one message when there is no home for the
//! default), and the library's [`CacheRun`] opened for a subcommand
//! ([`open`]) and finished ([`finish`]), its notices said with the
//! command's name. The coreutils front end says them its own way
//! (`mode/run.rs`).

use std::path::{Path, PathBuf};

use fastsum::cache::{Cache, CacheRun};
use fastsum::Algorithm;

/// `--cache[=PATH]`: no cache, the default file, or the one named.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum CacheChoice {
    /// No `--cache`.
    #[default]
    Off,
    /// `--cache`: the default file (`$XDG_CACHE_HOME/fastsum/...`).
    Default,
    /// `--cache=PATH`.
    At(PathBuf),
}

impl CacheChoice {
    /// Whether a cache is asked for.
    pub fn is_on(&self) -> bool {
        *self != CacheChoice::Off
    }

    /// The file asked for: `None` when off; `Err` is the message when
    /// the default is asked and there is no home for it.
    pub fn path(&self) -> Result<Option<PathBuf>, String> {
        match self {
            CacheChoice::Off => Ok(None),
            CacheChoice::Default => path(None).map(Some),
            CacheChoice::At(given) => path(Some(given.clone())).map(Some),
        }
    }
}

impl From<Option<Option<PathBuf>>> for CacheChoice {
    /// clap's reading of an optional value after `=`.
    fn from(asked: Option<Option<PathBuf>>) -> Self {
        match asked {
            None => CacheChoice::Off,
            Some(None) => CacheChoice::Default,
            Some(Some(path)) => CacheChoice::At(path),
        }
    }
}

/// The cache file a command uses: `given` (`--cache=PATH`), else the
/// default; `Err` is the message (`cache: no $XDG_CACHE_HOME ...`) when
/// there is no home for the default.
pub fn path(given: Option<PathBuf>) -> Result<PathBuf, String> {
    Cache::resolve_path(given).map_err(|e| format!("cache: {e}"))
}

/// Where what S3 said of its objects is kept: beside the digest cache at
/// `path`, as `PATH.s3` (`diff s3://` and `-r s3://` share it).
pub fn s3_claims(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".s3");
    PathBuf::from(name)
}

/// Says what `cache` has to tell, with `say`, each once.
pub fn say_notices(cache: &mut CacheRun, say: &mut dyn FnMut(&str)) {
    for notice in cache.take_notices() {
        say(&notice);
    }
}

/// A subcommand's cache (`who`: `fastsum diff`) as `choice` asks, for a
/// run of `algorithm` over `roots`: off when not asked for; one that
/// cannot be opened or loaded is said and the run goes on uncached.
/// `None` when `--cache` asks for the default and there is no home for
/// it: said, and the command ends with its trouble status.
pub fn open(
    who: &str,
    choice: &CacheChoice,
    algorithm: Algorithm,
    roots: &[PathBuf],
) -> Option<CacheRun> {
    let say = &mut |m: &str| eprintln!("{who}: {m}");
    let path = match choice.path() {
        Ok(Some(path)) => path,
        Ok(None) => return Some(CacheRun::off()),
        Err(m) => {
            say(&m);
            return None;
        }
    };
    let mut cache = CacheRun::open(&path, algorithm, roots);
    say_notices(&mut cache, say);
    Some(cache)
}

/// Stores what a subcommand's runs learnt, saying what went wrong.
pub fn finish(who: &str, mut cache: CacheRun) {
    cache.finish();
    say_notices(&mut cache, &mut |m| eprintln!("{who}: {m}"));
}
