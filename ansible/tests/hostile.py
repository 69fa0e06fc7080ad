"""A hostile pass over fastsum.deploy.copy (run by differential.py).

Each check tries to make the task lie (report success while the host holds
other bytes, write outside dest, change something in check mode) and
asserts it cannot:

- links on the host: a file in dest that is a symlink to a file outside,
  dest itself a symlink (followed, as builtin copy and rsync follow it),
  the tree's own name inside dest a symlink to a directory outside
  (refused: builtin copy writes through it);
- a program first on the host's PATH that says it is fastsum and replays
  an old listing, or prints garbage: the task fails, nothing is changed;
- a FIFO in the source: not copied, and said (not_copied, a warning);
- SIGKILL of the host's unpacking at several points: every file is the old
  or the new one, whole; the next run converges and removes the temporary
  files the killed run left;
- two runs into one dest at once, with delete: both succeed;
- --check with mode and owner changes: reported as builtin copy reports
  them, nothing changed.
"""

import os
import shutil
import subprocess
import threading
import time

from harness import Ansible, snapshot, write


def apply_processes():
    """Process ids of the host's unpacking (python3 -c <bootstrap> apply -)."""
    found = []
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            with open('/proc/%s/cmdline' % pid, 'rb') as handle:
                argv = handle.read().split(b'\0')
        except OSError:
            continue
        if len(argv) >= 4 and argv[1] == b'-c' and argv[2].startswith(b'import base64,zlib;exec(') \
                and argv[3] == b'apply':
            found.append(int(pid))
    return found


def killer(ready, killed):
    """Kill the unpacking once READY() holds (within 60 s of its start)."""
    deadline = time.time() + 60
    while time.time() < deadline:
        pids = apply_processes()
        if pids and ready():
            for pid in pids:
                try:
                    os.kill(pid, 9)
                    killed.append(pid)
                except ProcessLookupError:
                    pass
            return
        time.sleep(0.001)


def data(tree):
    """A snapshot's kinds and bytes (modes left out)."""
    return {rel: (entry[0], entry[2]) for rel, entry in tree.items()}


def progress(dest, new):
    """(temporary files, files already new) under DEST."""
    temps, done = 0, 0
    for top, _, files in os.walk(dest):
        for name in files:
            if name.startswith('.fastsum-deploy.'):
                temps += 1
            elif os.path.getsize(os.path.join(top, name)) == len(new.get(os.path.relpath(
                    os.path.join(top, name), dest), b'')):
                done += 1
    return temps, done


class Hostile:
    """The checks, over ssh with fastsum on the host (F) and through the
    local connection with the Python fallback (P), against builtin copy (B)
    where it is the reference."""

    def __init__(self, inventory, collections, env, work, fastsum, check):
        self.ansible = Ansible(inventory, collections, env)
        self.work = os.path.join(work, 'hostile-pass')
        self.fastsum = fastsum
        self.check = check
        os.makedirs(self.work)

    def ours(self, src, dests, **args):
        return [('fastsum.deploy.copy', dict(args, src=src, dest=dests['F'], fastsum_path=self.fastsum,
                                             fastsum_controller=self.fastsum), 'ssh'),
                ('fastsum.deploy.copy', dict(args, src=src, dest=dests['P'], use_fastsum='never',
                                             fastsum_controller=self.fastsum), None)]

    def dests(self, name, keys='FP'):
        return {key: os.path.join(self.work, '%s-%s' % (name, key)) for key in keys}

    def run_all(self):
        self.links()
        self.fake_fastsum()
        self.killed_unpack()
        self.concurrent_runs()
        self.check_mode_attributes()

    def concurrent_runs(self):
        """Two runs into one dest at once (fastsum over ssh, the Python
        fallback), with delete: neither removes the other's files in the
        making, both succeed, the tree is the source's."""
        src = os.path.join(self.work, 'rsrc')
        dest = os.path.join(self.work, 'race-dest')
        for number in range(80):
            rel = 'n%d/sub/f%02d' % (number % 5, number)
            write(os.path.join(src, rel), (b'new %d\n' % number) * (2000 + 50 * number), 0o644)
            write(os.path.join(dest, rel.replace('n', 'o', 1)), b'old\n', 0o644)
        write(os.path.join(dest, 'n0/stale'), b'stale\n')
        tasks = self.ours(src + '/', {'F': dest, 'P': dest}, delete=True)
        results = [None, None]

        def one(index):
            results[index] = self.ansible.play([tasks[index]])[0]
        threads = [threading.Thread(target=one, args=(i,)) for i in (0, 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        leftover = [rel for rel in snapshot(dest) if os.path.basename(rel).startswith(b'.fastsum-deploy.')]
        self.check(not any(r.get('failed') for r in results) and data(snapshot(dest)) == data(snapshot(src))
                   and not leftover, 'two runs at once into one dest: both succeed, the source\'s tree (%s)' % [
                       r.get('msg', '')[:300] for r in results])

    def links(self):
        src = os.path.join(self.work, 'lsrc')
        for rel in ('f', 'd/g'):
            write(os.path.join(src, rel), b'new ' + rel.encode() + b'\n', 0o644)
        outside = os.path.join(self.work, 'outside')
        write(os.path.join(outside, 'secret'), b'must stay\n')
        write(os.path.join(outside, 'f'), b'must stay\n')
        base = self.dests('links', 'BFP')
        real = {k: d + '.real' for k, d in base.items()}
        for key, dest in base.items():
            os.makedirs(real[key])
            # dest itself a symlink to a directory; inside it, f a link to
            # a file outside and d a link to a directory outside.
            os.symlink(real[key], dest)
            os.symlink(os.path.join(outside, 'secret'), os.path.join(real[key], 'f'))
            # The tree's own name (src without a trailing /) a link out.
            os.makedirs(os.path.join(real[key], 'into'))
            os.symlink(outside, os.path.join(real[key], 'into', 'lsrc'))
        tasks = [('ansible.builtin.copy', {'src': src + '/', 'dest': base['B']}, None)]
        tasks += self.ours(src + '/', base)
        tasks += self.ours(src, {k: os.path.join(d, 'into') for k, d in base.items()})
        results = self.ansible.play(tasks)
        trees = {k: snapshot(d) for k, d in real.items()}
        intact = sorted(os.listdir(outside)) == ['f', 'secret'] and all(
            open(os.path.join(outside, n), 'rb').read() == b'must stay\n' for n in ('f', 'secret'))
        for key in 'FP':
            self.check(not results[1 + (key == 'P')].get('failed') and trees[key] == trees['B'] and
                       all(os.path.islink(base[k]) for k in 'BFP'),
                       'links %s: dest a symlink is followed, a file link in it replaced, as builtin copy (%s)'
                       % (key, results[1 + (key == 'P')].get('msg', '')))
            into = results[3 + (key == 'P')]
            self.check(into.get('failed') and 'is not a directory (a symlink)' in into.get('msg', '') and
                       os.path.islink(os.path.join(real[key], 'into', 'lsrc')),
                       'links %s: the tree\'s own name a link out of dest: refused (%s)' % (key, into.get('msg')))
        self.check(intact, 'links: nothing outside dest written (%s)' % sorted(os.listdir(outside)))

    def fake_fastsum(self):
        """A `fastsum` that is not: it replays a listing taken before the
        host's file was changed, or prints garbage. Either way the task
        fails and changes nothing; the real fastsum then converges."""
        src = os.path.join(self.work, 'fsrc')
        write(os.path.join(src, 'a.txt'), b'alpha\n', 0o644)
        write(os.path.join(src, 'd/b.txt'), b'beta\n', 0o644)
        dest = os.path.join(self.work, 'fake-dest')
        shutil.copytree(src, dest)
        replay = os.path.join(self.work, 'replay.json')
        with open(replay, 'wb') as handle:
            subprocess.run([self.fastsum, '-a', 'sha1', '-r', '--json', '--', dest], stdout=handle, check=True)
        write(os.path.join(dest, 'a.txt'), b'tampered on the host\n')
        fakes = {}
        for name, body in (('replay', 'cat %s' % replay), ('garbage', 'echo garbage; echo "{\\"path\\": 1}"')):
            fakes[name] = os.path.join(self.work, 'fake-%s' % name, 'fastsum')
            write(fakes[name], ('#!/bin/sh\ncase "$1" in --version) echo "fastsum 9.9.9"; exit 0;; '
                                '--help) exit 0;; esac\n%s\n' % body).encode(), 0o755)
        before = snapshot(dest)
        tasks = [('fastsum.deploy.copy', dict(src=src + '/', dest=dest, fastsum_path=fakes[n],
                                              fastsum_controller=self.fastsum), 'ssh') for n in sorted(fakes)]
        results = self.ansible.play(tasks)
        for name, result in zip(sorted(fakes), results):
            self.check(result.get('failed') and not result.get('changed') and snapshot(dest) == before,
                       'a fake fastsum (%s) on the host: the task fails, nothing changed (%s)'
                       % (name, result.get('msg', '')[:300]))
        # A FIFO in the source is not copied, and said (as rsync says it).
        os.mkfifo(os.path.join(src, 'pipe'))
        result = self.ansible.play([('fastsum.deploy.copy', dict(
            src=src + '/', dest=dest, fastsum_path=self.fastsum, fastsum_controller=self.fastsum), 'ssh')])[0]
        wanted = dict((rel, entry) for rel, entry in snapshot(src).items() if rel != b'pipe')
        self.check(result.get('updated') == ['a.txt'] and snapshot(dest) == wanted,
                   'the real fastsum then converges (%s)' % result.get('updated'))
        self.check(result.get('not_copied') == ['pipe (fifo)'],
                   'a FIFO in the source: not copied, said (%s)' % result.get('not_copied'))

    def killed_unpack(self):
        """SIGKILL of the unpacking on the host at three points."""
        src = os.path.join(self.work, 'ksrc')
        dest = os.path.join(self.work, 'kill-dest')
        old, new = {}, {}
        for number in range(120):
            rel = 'd%d/f%03d' % (number % 4, number)
            old[rel] = (b'old %d ' % number) * (30000 + number)
            new[rel] = (b'NEW %d.' % number) * (40000 + number)
            write(os.path.join(dest, rel), old[rel], 0o644)
            write(os.path.join(src, rel), new[rel], 0o640)
        task = [('fastsum.deploy.copy', dict(src=src + '/', dest=dest, fastsum_path=self.fastsum,
                                             fastsum_controller=self.fastsum, directory_mode='0750'), 'ssh')]
        # Killed as it starts, while its first file is being written, and
        # once 40 files are in place.
        points = {'at start': lambda: True, 'mid-file': lambda: progress(dest, new)[0] > 0,
                  'after 40 files': lambda: progress(dest, new)[1] >= 40}
        hits, whole, mixed = [], True, False
        for point, ready in points.items():
            killed = []
            thread = threading.Thread(target=killer, args=(ready, killed))
            thread.start()
            result = self.ansible.play(task)[0]
            thread.join()
            states, litter = set(), set()
            for rel, entry in snapshot(dest).items():
                if os.path.basename(rel).startswith(b'.fastsum-deploy.'):
                    litter.add(rel)
                elif entry[2] is not None:
                    text = rel.decode()
                    states.add('old' if entry[2] == old[text] else 'new' if entry[2] == new[text] else 'torn')
            whole = whole and 'torn' not in states
            mixed = mixed or states == {'old', 'new'}
            hits.append((point, bool(killed), bool(result.get('failed')), sorted(states), len(litter)))
        self.check(whole and mixed and all(k and f for _, k, f, _, _ in hits),
                   'SIGKILL of the unpacking: each file old or new, whole; the run fails %s' % hits)
        result = self.ansible.play(task)[0]
        leftover = [rel for rel in snapshot(dest) if os.path.basename(rel).startswith(b'.fastsum-deploy.')]
        self.check(not result.get('failed') and data(snapshot(dest)) == data(snapshot(src)) and not leftover and
                   len(result.get('cleaned', [])) == len(litter),
                   'after SIGKILL, the next run converges and cleans %d temporary files (%s cleaned: %s)' % (
                       len(litter), len(result.get('cleaned', [])), result.get('msg', '')))

    def check_mode_attributes(self):
        """--check with a mode and an owner to change: changed as builtin
        copy says it, nothing changed; then the real run sets them."""
        src = os.path.join(self.work, 'csrc')
        for rel in ('a', 'd/b'):
            write(os.path.join(src, rel), rel.encode() + b'\n', 0o644)
        dests = self.dests('cmode', 'BFP')
        for dest in dests.values():
            shutil.copytree(src, dest)
        owner = {'owner': 'nobody'} if os.geteuid() == 0 else {}
        tasks = [('ansible.builtin.copy', dict(src=src + '/', dest=dests['B'], mode='0600', **owner), None)]
        tasks += self.ours(src + '/', dests, mode='0600', **owner)
        before = {k: snapshot(d, owners=True) for k, d in dests.items()}
        results = self.ansible.play(tasks, '--check')
        self.check([bool(r.get('changed')) for r in results] == [True] * 3 and
                   all(snapshot(d, owners=True) == before[k] for k, d in dests.items()) and
                   all(sorted(r.get('updated', [])) == sorted(['a', 'd/b'] + ['d/'] * bool(owner)) for r in results[1:]),
                   '--check with mode%s to change: changed, updated listed, nothing changed (%s)' % (
                       ' and owner' if owner else '', [r.get('updated') for r in results[1:]]))
        results = self.ansible.play(tasks)
        trees = {k: snapshot(d, owners=True) for k, d in dests.items()}
        self.check(trees['B'] == trees['F'] == trees['P'] and trees['B'] != before['B'] and
                   [bool(r.get('changed')) for r in results] == [True] * 3,
                   'then the real run: the same modes%s as builtin copy' % (' and owners' if owner else ''))
