#!/usr/bin/env python3
"""A/B runs on a noisy machine: runs each command RUNS times, alternating
the order every round (so drift hits all alike), and prints the median
wall time and the median user+system CPU of each (CPU is steadier than
wall on a shared machine). Output goes to /dev/null.

    scripts/bench/ab.py 20 'target/release/fastsum -r small' '/tmp/old -r small'
"""
import os, sys, time, subprocess, statistics, shlex
runs = int(sys.argv[1]); cmds = sys.argv[2:]
res = {c: ([], []) for c in cmds}
devnull = os.open(os.devnull, os.O_WRONLY)
for c in cmds:  # warmup
    subprocess.run(shlex.split(c), stdout=devnull, stderr=devnull)
for i in range(runs):
    for c in (cmds if i % 2 == 0 else cmds[::-1]):
        t = time.perf_counter()
        p = subprocess.Popen(shlex.split(c), stdout=devnull, stderr=devnull)
        _, status, ru = os.wait4(p.pid, 0)
        w = time.perf_counter() - t
        res[c][0].append(w * 1000); res[c][1].append((ru.ru_utime + ru.ru_stime) * 1000)
for c in cmds:
    w, u = res[c]
    print(f"{statistics.median(w):8.1f} ms wall  {statistics.median(u):8.1f} ms cpu  (min {min(w):.1f})  {c}")
