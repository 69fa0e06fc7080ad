//! The rule for threads that cannot start: a resource the process lacks
//! (address space under `ulimit -v`, processes under `ulimit -u` or a
//! cgroup's pids limit), never a bug, so an error naming the cause with
//! the run's trouble status (1 in the hashing tools, as GNU's; 2 in the
//! subcommands), not a panic's exit 101 and a backtrace. The library
//! says a refused worker in the same words
//! (`fastsum::Error::thread_refused`).
//!
//! Threads are started where they are needed (the pipeline's readers, a
//! walk's, a progress display, rayon's pool on its first use), each
//! through a spawn that panics when the system refuses it. The panic hook
//! installed here turns those panics, and only those, into the message
//! and the exit status, whichever thread met them. (The pool is not built
//! ahead of time: `md5sum FILE` would start a thread per core for nothing.)

use std::sync::OnceLock;

/// The program's name, for the message.
static PROGRAM: OnceLock<String> = OnceLock::new();

/// Installs the hook (every other panic keeps the default hook): a refused
/// thread ends the run with `trouble`.
pub fn install(program: &str, trouble: i32) {
    let _ = PROGRAM.set(program.to_string());
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        match refusal(message) {
            Some(why) => {
                let program = PROGRAM.get().map_or("fastsum", String::as_str);
                eprintln!(
                    "{program}: cannot start a thread ({why}): the process is short of memory \
                     or of processes (ulimit -v, ulimit -u)"
                );
                std::process::exit(trouble)
            }
            None => default(info),
        }
    }));
}

/// The system's reason, when `message` is a panic for a thread it refused
/// to start: std's `thread::spawn` and `Scope::spawn` unwrap
/// `Builder::spawn`'s error as "failed to spawn thread: {err:?}", and
/// rayon's pool, failing to start on its first use, panics with "The
/// global thread pool has not been initialized.: {err:?}" holding an I/O
/// error. The reason is the OS error's words where the text holds them.
fn refusal(message: &str) -> Option<&str> {
    let rest = message
        .strip_prefix("failed to spawn thread: ")
        .or_else(|| {
            message
                .strip_prefix("The global thread pool has not been initialized.: ")
                .filter(|rest| rest.contains("IOError"))
        })?;
    let words = rest
        .split_once("message: \"")
        .and_then(|(_, tail)| tail.split_once('"'))
        .map(|(words, _)| words);
    Some(words.unwrap_or(rest))
}

#[cfg(test)]
mod tests {
    use super::refusal;

    #[test]
    fn only_a_refused_thread_is_a_refusal() {
        let os =
            r#"Os { code: 11, kind: WouldBlock, message: "Resource temporarily unavailable" }"#;
        assert_eq!(
            refusal(&format!("failed to spawn thread: {os}")),
            Some("Resource temporarily unavailable")
        );
        let rayon = format!(
            "The global thread pool has not been initialized.: ThreadPoolBuildError {{ kind: IOError({os}) }}"
        );
        assert_eq!(refusal(&rayon), Some("Resource temporarily unavailable"));
        let twice = "The global thread pool has not been initialized.: ThreadPoolBuildError { kind: GlobalPoolAlreadyInitialized }";
        assert_eq!(refusal(twice), None);
        assert_eq!(
            refusal("index out of bounds: the len is 3 but the index is 7"),
            None
        );
        assert_eq!(refusal(""), None);
    }
}
