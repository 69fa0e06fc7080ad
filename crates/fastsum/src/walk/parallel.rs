//! The unordered walk (`--unordered`): several threads share a stack of
//! directories, and items go to the sink as each thread finds them.

use std::path::Path;
use std::sync::{Condvar, Mutex};

use super::{error_at, Directory, Found, WalkItem, WalkOptions, Walker};
use crate::error::Result;

/// [`WalkOptions::walk`].
pub(super) fn walk(
    root: &Path,
    options: &WalkOptions,
    sink: &(dyn Fn(WalkItem) + Sync),
) -> Result<()> {
    let (walker, top) = match Walker::new(root, options)? {
        Ok(start) => start,
        Err(item) => {
            sink(item);
            return Ok(());
        }
    };
    let walk = ParallelWalk {
        walker: &walker,
        sink,
        queue: Mutex::new(Queue {
            directories: vec![top],
            busy: 0,
        }),
        ready: Condvar::new(),
    };
    let threads = match options.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get().min(8)),
        n => n,
    };
    if threads == 1 {
        walk.run();
    } else {
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| walk.run());
            }
        });
    }
    Ok(())
}

/// The directories waiting, and how many threads are reading one (the walk
/// is over when none wait and none are busy).
struct Queue {
    directories: Vec<Directory>,
    busy: usize,
}

/// A walk on several threads, sharing a stack of directories.
struct ParallelWalk<'a> {
    walker: &'a Walker<'a>,
    sink: &'a (dyn Fn(WalkItem) + Sync),
    queue: Mutex<Queue>,
    ready: Condvar,
}

impl ParallelWalk<'_> {
    /// One walker thread: reads directories until there are none left.
    fn run(&self) {
        let mut found = Vec::new();
        let mut queue = self.queue.lock().expect("walk queue");
        loop {
            let Some(directory) = queue.directories.pop() else {
                if queue.busy == 0 {
                    self.ready.notify_all();
                    return;
                }
                queue = self.ready.wait(queue).expect("walk queue");
                continue;
            };
            queue.busy += 1;
            drop(queue);
            let read = self
                .walker
                .read(&directory, &mut |name, _, entry| match entry {
                    Found::File { size, ino } => (self.sink)(WalkItem::File {
                        path: super::child_path(&directory.path, name),
                        size,
                        ino,
                    }),
                    Found::Item(item) => (self.sink)(item),
                    Found::Directory(child) => {
                        if self.walker.options.directories {
                            let path = crate::fs::name::path_buf(child.path.clone());
                            (self.sink)(WalkItem::Directory { path });
                        }
                        found.push(child)
                    }
                });
            if let Err(e) = read {
                (self.sink)(error_at(&directory.path, e));
            }
            queue = self.queue.lock().expect("walk queue");
            queue.busy -= 1;
            let more = !found.is_empty();
            queue.directories.append(&mut found);
            if more || queue.busy == 0 {
                self.ready.notify_all();
            }
        }
    }
}
