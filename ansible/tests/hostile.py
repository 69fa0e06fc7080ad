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

from harness import Ansible, Pair, Sshd, snapshot, write


def parent(pid):
    """The parent process id of PID (0 once it is gone)."""
    try:
        with open('/proc/%s/status' % pid) as handle:
            for line in handle:
                if line.startswith('PPid:'):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def descends(pid, ancestor):
    """PID is ANCESTOR or one of its descendants."""
    pid = int(pid)
    while pid > 1:
        if pid == ancestor:
            return True
        pid = parent(pid)
    return False


def apply_processes(sshd):
    """Process ids of the host's unpacking (python3 -c <bootstrap> apply -)
    under the sshd whose process id is SSHD: only this check's, never an
    unpacking of the checks running beside it through another server."""
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
                and argv[3] == b'apply' and descends(pid, sshd):
            found.append(int(pid))
    return found


def killer(ready, killed, sshd):
    """Kill the unpacking under the sshd SSHD (its process id) once READY()
    holds (within 60 s of its start)."""
    deadline = time.time() + 60
    while time.time() < deadline:
        pids = apply_processes(sshd)
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


class Hostile(Pair):
    """The checks, over ssh with fastsum on the host (F) and through the
    local connection with the Python fallback (P), against builtin copy (B)
    where it is the reference."""

    def __init__(self, inventory, collections, env, work, fastsum, check):
        Pair.__init__(self, Ansible(inventory, collections, env), os.path.join(work, 'hostile-pass'), fastsum, check)
        self.collections, self.env = collections, env

    def run_all(self):
        self.links()
        self.fake_fastsum()
        self.killed_unpack()
        self.unread_archive()
        self.concurrent_runs()
        self.check_mode_attributes()
        self.full_disk()
        self.validate_exclude_owner()
        self.checksums_names()
        self.diff_headers()
        self.third_pass()

    def third_pass(self):
        """A failed run names only what it did; a stale-looking directory
        that holds something stays; validate gets a whole path with the
        file's extension (a child of the validator reads it); the parents
        of a dest the task makes get its owner and mode, as builtin copy's."""
        src = os.path.join(self.work, 'tsrc')
        write(os.path.join(src, 'new'), b'new\n', 0o644)
        write(os.path.join(src, 'upd'), b'upd new\n', 0o644)
        fdests, sdests, vdests = self.dests('failed'), self.dests('staledir'), self.dests('vpath', 'BFP')
        stale = '.fastsum-deploy.999999999.1764320000000000.dir'
        for key in 'FP':
            write(os.path.join(fdests[key], 'upd'), b'old\n', 0o644)
            write(os.path.join(fdests[key], 'gone'), b'x\n', 0o644)
            write(os.path.join(sdests[key], stale, 'precious'), b'user data\n', 0o644)
        conf = os.path.join(self.work, 'app.conf')
        write(conf, b'good\n', 0o644)
        check = ("python3 -c 'import subprocess, sys; sys.exit(subprocess.call([\"grep\", \"-q\", \"good\", sys.argv[1]])"
                 " or not sys.argv[1].endswith(\".conf\"))' %s")
        tasks = self.ours(src + '/', fdests, delete=True, validate='/bin/false %s')
        tasks += self.ours(src + '/', sdests)
        tasks.append(('ansible.builtin.copy', dict(src=conf, dest=vdests['B'] + '/app.conf', validate=check), None))
        tasks += self.ours(conf, {k: vdests[k] + '/app.conf' for k in 'FP'}, validate=check)
        for dest in vdests.values():
            os.makedirs(dest)
        owner = {'owner': 'nobody', 'group': 'nogroup'} if os.geteuid() == 0 else {}
        pdests = {k: os.path.join(self.work, 'parents-' + k, 'new1', 'new2') for k in 'BFP'}
        if owner:
            tasks.append(('ansible.builtin.copy', dict(src=src + '/', dest=pdests['B'] + '/', directory_mode='0750',
                                                       **owner), None))
            tasks += self.ours(src + '/', {k: pdests[k] + '/' for k in 'FP'}, directory_mode='0750', **owner)
        results = self.ansible.play(tasks)
        for key, result in zip('FP', results[:2]):
            d = fdests[key]
            said = (sorted(result.get('created', [])), sorted(result.get('updated', [])), sorted(result.get('removed', [])))
            self.check(result.get('failed') and said == ([], [], ['gone']) and not os.path.exists(os.path.join(d, 'new'))
                       and not os.path.exists(os.path.join(d, 'gone')),
                       'a failed run %s names only what it did %s' % (key, said))
        for key, result in zip('FP', results[2:4]):
            self.check(not result.get('failed') and os.path.exists(os.path.join(sdests[key], stale, 'precious')),
                       'a stale-looking directory that holds something stays %s (%s)' % (key, result.get('cleaned')))
        self.check([bool(r.get('failed')) for r in results[4:7]] == [False] * 3 and all(
            os.path.exists(d + '/app.conf') for d in vdests.values()),
            'validate: a whole path with the extension, as builtin copy gives (%s)' % [
                r.get('msg', '')[:150] for r in results[4:7]])
        if owner:
            got = {k: [(os.stat(p).st_uid, oct(os.stat(p).st_mode & 0o777)) for p in (os.path.dirname(d), d)]
                   for k, d in pdests.items()}
            self.check(got['B'] == got['F'] == got['P'], 'the parents a dest lacked: owner and mode as builtin copy %s'
                       % got)

    def diff_headers(self):
        """--diff of a directory src: a name holding a newline cannot
        forge a line in the change list or in a file's headers."""
        src = os.path.join(self.work, 'hsrc2')
        names = ['x\n+++ after: /etc/shadow\n@@ forged @@', 'v\x0b+++ a', 'e\x1b[1E+++ b', 'n\x85+++ c', 'l\u2028+++ d']
        dests = self.dests('headers')
        for name in names:
            write(os.path.join(src, name), b'new\n', 0o644)
            for dest in dests.values():
                write(os.path.join(dest, name), b'old\n', 0o644)
        results = self.ansible.play(self.ours(src + '/', dests), '--check', '--diff', '-vvv')
        for key, result in zip('FP', results):
            texts = [d.get(k, '') for d in result.get('diff', []) for k in ('before_header', 'after_header', 'prepared')]
            lines = [line for text in texts for line in text.splitlines()]
            self.check(len(result.get('diff', [])) == 6 and not any(line.startswith(('+++', '@@')) for line in lines)
                       and not any('\x1b' in text for text in texts),
                       '--diff %s: a name cannot forge a header line (%r)' % (key, lines))

    def full_disk(self):
        """A file that does not fit: the task fails, the old file stays
        whole (write(2) wrote part of a block and the rest was dropped)."""
        if os.geteuid() != 0:
            print('skip   full disk: not root')
            return
        src = os.path.join(self.work, 'bsrc')
        write(os.path.join(src, 'big'), b'N' * 614400, 0o644)
        mounts = self.dests('full')
        for mnt in mounts.values():
            os.makedirs(mnt)
            if subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mnt]).returncode != 0:
                print('skip   full disk: no tmpfs mount')
                return
        try:
            for mnt in mounts.values():
                write(os.path.join(mnt, 'fill'), b'x' * 716800)
                write(os.path.join(mnt, 'd', 'big'), b'old\n', 0o644)
            results = self.ansible.play(self.ours(src + '/', {k: m + '/d' for k, m in mounts.items()}))
            for key, result in zip('FP', results):
                d = os.path.join(mounts[key], 'd')
                self.check(result.get('failed') and 'No space left' in result.get('msg', '') and
                           open(os.path.join(d, 'big'), 'rb').read() == b'old\n' and os.listdir(d) == ['big'],
                           'a full disk %s: the task fails, the old file whole (%s)' % (key, result.get('msg', '')[:200]))
        finally:
            for mnt in mounts.values():
                subprocess.run(['umount', mnt])

    def validate_exclude_owner(self):
        """validate runs on each file of a directory src (as builtin copy
        runs it); delete leaves what exclude names as fastsum matches it
        (escapes, [^...], a leading !) and the directories holding it; the
        tree's own directory inside dest gets the owner."""
        src = os.path.join(self.work, 'vsrc')
        write(os.path.join(src, 'sudoers.d', 'bad'), b'junk\n', 0o440)
        esrc = os.path.join(self.work, 'esrc')
        write(os.path.join(esrc, 'a'), b'a\n', 0o644)
        vdests, edests = self.dests('validate'), self.dests('exclude')
        kept = ['olddir/data.keep', 'xeep', '*', '!bang', 'a b', 'keepme/.fastsum-deploy.999999999.1700000000000000.0']
        for dest in edests.values():
            for rel in kept + ['olddir/junk', 'stale']:
                write(os.path.join(dest, rel), b'host data\n', 0o644)
        globs = ['*.keep', '[^k]eep', '\\*', '!bang', 'a\\ b', 'keepme/']
        tasks = self.ours(src + '/', vdests, validate='/bin/false %s')
        tasks += self.ours(esrc + '/', edests, delete=True, exclude=globs)
        owner = {'owner': 'nobody', 'group': 'nogroup'} if os.geteuid() == 0 else {}
        odests = self.dests('owner', 'BFP')
        if owner:
            tasks.append(('ansible.builtin.copy', dict(src=esrc, dest=odests['B'], **owner), None))
            tasks += self.ours(esrc, odests, **owner)
        results = self.ansible.play(tasks)
        for key, result in zip('FP', results):
            self.check(result.get('failed') and 'failed to validate' in result.get('msg', '') and
                       not os.path.exists(os.path.join(vdests[key], 'sudoers.d', 'bad')),
                       'validate on a directory src %s: the file is refused, the task fails (%s)' % (
                           key, result.get('msg', '')[:200]))
        for key, result in zip('FP', results[2:4]):
            left = sorted(k for k in kept if os.path.lexists(os.path.join(edests[key], k)))
            self.check(not result.get('failed') and left == sorted(kept) and
                       sorted(result.get('removed', [])) == ['olddir/junk', 'stale'],
                       'delete with exclude %s: what fastsum excludes stays %s, removed %s (%s)' % (
                           key, left, result.get('removed'), result.get('msg', '')[:200]))
        if owner:
            uids = [os.stat(os.path.join(odests[k], 'esrc')).st_uid for k in 'BFP']
            again = self.ansible.play(self.ours(esrc, odests, **owner))
            self.check(uids == [65534] * 3 and not any(r.get('changed') for r in again),
                       'the tree\'s own directory gets the owner, as builtin copy gives it %s' % uids)

    def checksums_names(self):
        """checksums: a FIFO and a link given to fastsum's algorithms are
        errors (no wait); two names that read alike get no digest."""
        base = os.fsencode(os.path.join(self.work, 'cnames'))
        os.makedirs(base)
        write(os.path.join(base, b'real'), b'secret\n')
        os.symlink(b'real', os.path.join(base, b'link'))
        os.mkfifo(os.path.join(base, b'fifo'))
        write(os.path.join(base, b'a\xff'), b'1')
        write(os.path.join(base, b'a\\xff'), b'2')
        text = base.decode()
        results = self.ansible.play([
            ('fastsum.deploy.checksums', {'paths': [text + '/fifo', text + '/link', text + '/real'],
                                          'algorithm': 'blake3', 'fastsum_path': self.fastsum}, 'ssh'),
            ('fastsum.deploy.checksums', {'path': text, 'recurse': True, 'algorithm': 'sha1'}, 'ssh')])
        errors = results[0].get('errors', {})
        self.check(sorted(errors) == [text + '/fifo', text + '/link'] and list(results[0].get('checksums', {})) ==
                   [text + '/real'], 'checksums blake3: a FIFO and a link are errors, no wait (%s)' % errors)
        self.check(text + '/a\\xff' in results[1].get('errors', {}) and
                   text + '/a\\xff' not in results[1].get('checksums', {}),
                   'checksums: two names that read alike get no digest (%s)' % results[1].get('errors'))

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
        # A server of its own: the killer kills only the unpacking under it
        # (the other groups of differential.py unpack beside this one).
        sshd = Sshd()
        try:
            self.kill_at_points(sshd, task, points, src, dest, old, new)
        finally:
            sshd.stop()

    def unread_archive(self):
        """The unpacking on the host ends before it has read the archive
        off its standard input (refused at once): the task fails, saying
        so, the host stays reachable and its files as they were. (When
        OpenSSH closes the channel before the archive is all written,
        Ansible gets EPIPE and raised the host unreachable, as in
        killed_unpack's at-start SIGKILL; here it mostly takes the rest
        and drops it: test_host_commands.py holds the broken pipe.)"""
        src = os.path.join(self.work, 'usrc')
        dest = os.path.join(self.work, 'unread-dest')
        # Bigger than a pipe's and an ssh channel's windows, not compressible.
        write(os.path.join(src, 'big'), os.urandom(24 << 20), 0o644)
        write(os.path.join(dest, 'big'), b'old\n', 0o644)
        python = os.path.join(self.work, 'unread-python', 'python3')
        write(python, b'#!/bin/sh\nif [ "$3" = apply ] && [ "$4" = - ]; then echo refused >&2; exit 3; fi\n'
                      b'exec python3 "$@"\n', 0o755)
        before = snapshot(dest)
        task = ('fastsum.deploy.copy', dict(src=src + '/', dest=dest, fastsum_path=self.fastsum,
                                            fastsum_controller=self.fastsum), 'ssh',
                {'ansible_python_interpreter': python})
        result = self.ansible.play([task])[0]
        self.check(result.get('failed') and 'unpacking on the host failed' in result.get('msg', '') and
                   snapshot(dest) == before,
                   'an archive the host does not read: the task fails, nothing changed (%s)'
                   % result.get('msg', '')[:300])
        result = self.ansible.play([task[:3]])[0]
        self.check(not result.get('failed') and snapshot(dest) == snapshot(src),
                   'then a run that unpacks converges (%s)' % result.get('msg', '')[:300])

    def kill_at_points(self, sshd, task, points, src, dest, old, new):  # pylint: disable=too-many-arguments
        """killed_unpack's runs, through SSHD."""
        ansible = Ansible(sshd.inventory(), self.collections, self.env)
        hits, whole, mixed = [], True, False
        for point, ready in points.items():
            killed = []
            thread = threading.Thread(target=killer, args=(ready, killed, sshd.proc.pid))
            thread.start()
            result = ansible.play(task)[0]
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
