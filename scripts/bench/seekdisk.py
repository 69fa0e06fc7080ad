#!/usr/bin/env python3
"""A rotational disk, emulated, to measure read ordering where no such disk
is at hand. Benchmarks only: never used by the tests.

    seekdisk.py IMAGE MOUNTPOINT [--seek-ms 8.5] [--rpm 7200] [--mbps 150]

Serves IMAGE (best kept on tmpfs, so that the real device and the page
cache play no part) as MOUNTPOINT/disk.img through FUSE, read-only, one
request at a time (one actuator), and before answering a read sleeps as
long as a disk would take to serve it:

  * a read that starts where the last one ended: transfer time only;
  * a short skip forward (under 1 MiB, on the same track or the next):
    the skipped bytes pass under the head, as transfer time;
  * anything else: a seek (track-to-track 1 ms up to `--seek-ms` for a
    full stroke, growing as the square root of the distance, as an arm
    accelerates) plus half a revolution of rotational latency, then the
    transfer.

`scripts/bench/rotational` attaches the image to a loop device marked
rotational and mounts the file system in it; every read fastsum makes of
a file there is then a read of disk.img, timed by this model. The model
is a simplification (no command queueing on the drive, no zones), stated
as such beside every figure it gives.
"""
import argparse
import errno
import math
import os
import stat
import sys
import threading
import time

sys.path.insert(0, os.environ.get("FUSEPY_DIR", "/tmp/fusepy-3.0.1"))
from fuse import FUSE, FuseOSError, Operations  # noqa: E402

NAME = "/disk.img"


class SeekDisk(Operations):
    def __init__(self, image, seek_ms, rpm, mbps):
        self.fd = os.open(image, os.O_RDONLY)
        self.size = os.fstat(self.fd).st_size
        self.full_seek = seek_ms / 1000.0
        self.half_turn = 30.0 / rpm
        self.rate = mbps * 1e6
        self.head = 0
        self.mutex = threading.Lock()
        self.stats = {"reads": 0, "seeks": 0, "bytes": 0, "busy": 0.0}

    def cost(self, offset, length):
        distance = offset - self.head
        if distance == 0:
            positioning = 0.0
        elif 0 < distance < (1 << 20):
            positioning = distance / self.rate
        else:
            self.stats["seeks"] += 1
            fraction = min(1.0, abs(distance) / max(self.size, 1))
            positioning = 0.001 + (self.full_seek - 0.001) * math.sqrt(fraction)
            positioning += self.half_turn
        return positioning + length / self.rate

    def getattr(self, path, fh=None):
        now = time.time()
        if path == "/":
            return dict(st_mode=stat.S_IFDIR | 0o555, st_nlink=2,
                        st_ctime=now, st_mtime=now, st_atime=now)
        if path == NAME:
            return dict(st_mode=stat.S_IFREG | 0o444, st_nlink=1, st_size=self.size,
                        st_ctime=now, st_mtime=now, st_atime=now)
        if path == "/stats":
            return dict(st_mode=stat.S_IFREG | 0o444, st_nlink=1, st_size=4096,
                        st_ctime=now, st_mtime=now, st_atime=now)
        raise FuseOSError(errno.ENOENT)

    def readdir(self, path, fh):
        return [".", "..", NAME[1:], "stats"]

    def open(self, path, flags):
        if path not in (NAME, "/stats"):
            raise FuseOSError(errno.ENOENT)
        if flags & (os.O_WRONLY | os.O_RDWR):
            raise FuseOSError(errno.EROFS)
        return 0

    def read(self, path, size, offset, fh):
        if path == "/stats":
            text = " ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}"
                            for k, v in self.stats.items()) + "\n"
            return text.encode()[offset:offset + size]
        with self.mutex:
            delay = self.cost(offset, size)
            self.stats["reads"] += 1
            self.stats["bytes"] += size
            self.stats["busy"] += delay
            data = os.pread(self.fd, size, offset)
            self.head = offset + len(data)
            time.sleep(delay)
            return data


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("image")
    parser.add_argument("mountpoint")
    parser.add_argument("--seek-ms", type=float, default=8.5)
    parser.add_argument("--rpm", type=float, default=7200)
    parser.add_argument("--mbps", type=float, default=150)
    args = parser.parse_args()
    disk = SeekDisk(args.image, args.seek_ms, args.rpm, args.mbps)
    FUSE(disk, args.mountpoint, foreground=True, nothreads=True, ro=True,
         direct_io=True, allow_other=True)


if __name__ == "__main__":
    main()
