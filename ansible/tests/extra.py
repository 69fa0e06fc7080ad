"""Issue 53's last points, each against a reference (run by differential.py).

- --diff: each file's diff equals ansible.builtin.copy's for that file (its
  own run on the same destination, --check --diff), with a small
  max_file_size_for_diff so that both "larger" cases show.
- delete: what ansible.posix.synchronize's delete removes (rsync, from the
  `ansible` package's wheel: $FASTSUM_ANSIBLE_POSIX) is what
  fastsum.deploy.copy removes: the same paths gone, the same left (excluded
  paths, nested directories, symlinks to outside), --check removes nothing.
- content and remote_src=true: the same file and `changed` as builtin copy.
- A hostile user: an invalid mode, a FIFO where dest goes, a dest whose name
  holds $(...), a newline and quotes; nothing changes where the task fails.
"""

import os
import shutil

from harness import Ansible, Pair, snapshot, write

DIFF_LIMIT = 2000


def names(tree):
    """{rel: kind} of a snapshot: what synchronize and fastsum must agree on
    (rsync -a also copies modes and times, which delete does not decide)."""
    return {rel: entry[0] for rel, entry in tree.items()}


class Extra(Pair):
    """The checks, on one Ansible (with ansible.posix when it is there)."""

    def __init__(self, inventory, collections, env, work, fastsum, check):
        posix = os.environ.get('FASTSUM_ANSIBLE_POSIX')
        self.posix = bool(posix)
        Pair.__init__(self, Ansible(inventory, collections + (':' + posix if posix else ''),
                                    dict(env, ANSIBLE_MAX_DIFF_SIZE=str(DIFF_LIMIT))),
                      os.path.join(work, 'extra'), fastsum, check)

    def run_all(self):
        self.diffs()
        self.content_and_remote_src()
        self.hostile()
        if self.posix:
            self.delete_like_synchronize()
        else:
            self.check(False, 'delete against synchronize: FASTSUM_ANSIBLE_POSIX is not set')

    def diffs(self):
        src = os.path.join(self.work, 'dsrc')
        dests = self.dests('diff')
        now = {'sub/n\xc3\xa9w f.txt': b'\xc3\xa9t\xc3\xa9\n', 'upd.txt': b'one\ntwo\n', 'same.txt': b'same\n',
               'bin.dat': b'a\0b', 'tobin.txt': b'text now\n', 'big.txt': b'x' * (DIFF_LIMIT + 1),
               'dstbig.txt': b'small\n'}
        was = {'upd.txt': b'one\nthree\n', 'same.txt': b'same\n', 'bin.dat': b'old text\n',
               'tobin.txt': b'\0old', 'big.txt': b'short\n', 'dstbig.txt': b'y' * (DIFF_LIMIT + 1)}
        for rel, data in now.items():
            write(os.path.join(src, rel), data)
        for dest in dests.values():
            for rel, data in was.items():
                write(os.path.join(dest, rel), data)
        changed = sorted(rel for rel in now if was.get(rel) != now[rel])
        tasks = [('ansible.builtin.copy', {'src': os.path.join(src, rel), 'dest': os.path.join(dests['F'], rel)},
                  None) for rel in changed]
        tasks += self.ours(src + '/', dests)
        # A file src: builtin copy's own task for upd.txt is the reference.
        one = {key: os.path.join(dest, 'upd.txt') for key, dest in dests.items()}
        tasks += self.ours(os.path.join(src, 'upd.txt'), one)
        before = {key: snapshot(dest) for key, dest in dests.items()}
        results = self.ansible.play(tasks, '--check', '--diff', '-vvv')
        builtin = [r.get('diff', [None])[0] for r in results[:len(changed)]]
        ours = {'F': results[len(changed)], 'P': results[len(changed) + 1]}
        for key, result in ours.items():
            got = result.get('diff', [])
            expected = [dict(d, before_header=d['before_header'].replace(dests['F'], dests[key]))
                        if 'before_header' in d else d for d in builtin]
            self.check(got[1:] == expected, '--diff %s: each file as builtin copy shows it (%d files)%s' % (
                key, len(expected), '' if got[1:] == expected else '\n%r\n!=\n%r' % (got[1:], expected)))
            listed = sorted(line[2:] for line in got[0].get('prepared', '').splitlines()) if got else []
            self.check(listed == sorted(changed + ['sub/']), '--diff %s: the change list %s' % (key, listed))
        builtin_one = results[changed.index('upd.txt')]
        fastsum_one, python_one = results[-2:]
        self.check(fastsum_one.get('diff') == builtin_one.get('diff') and python_one.get('diff') == [
            dict(builtin_one['diff'][0], before_header=one['P'])],
            '--diff of a file src: builtin copy\'s exactly (%r, %r)' % (
                fastsum_one.get('diff'), builtin_one.get('diff')))
        self.check(all(snapshot(d) == before[k] for k, d in dests.items()), '--check --diff: nothing changed')
        self.check(len([d for d in builtin if d and ('src_larger' in d or 'dst_larger' in d)]) == 2
                   and any(d and 'dst_binary' in d for d in builtin) and any(d and 'src_binary' in d for d in builtin),
                   '--diff: the scenario has both binary and both larger cases %r' % builtin)

    def content_and_remote_src(self):
        """Handed to builtin copy: the same file, mode and `changed` (twice:
        created, then unchanged), and delete refused with them."""
        dests = self.dests('content', 'BFP')
        for dest in dests.values():
            os.makedirs(dest)
        remote = os.path.join(self.work, 'remote-src.txt')
        write(remote, b'on the host\n')

        def tasks(key, host, module, extra):
            d = dests[key]
            return [(module, dict(extra, content='line 1\nline "2" $(x)\n', dest=d + '/c.txt', mode='0640'), host),
                    (module, dict(extra, src=remote, remote_src=True, dest=d + '/r.txt'), host)]
        own = {'fastsum_controller': self.fastsum}
        plan = tasks('B', None, 'ansible.builtin.copy', {}) + \
            tasks('F', 'ssh', 'fastsum.deploy.copy', dict(own, fastsum_path=self.fastsum)) + \
            tasks('P', None, 'fastsum.deploy.copy', dict(own, use_fastsum='never'))
        plan.append(('fastsum.deploy.copy', dict(content='x', dest=dests['F'] + '/no', delete=True), None))
        for run in ('first',):
            results = self.ansible.play(plan)
            changed = [[bool(r.get('changed')) for r in results[i:i + 2]] for i in (0, 2, 4)]
            failed = [r.get('msg') for r in results[:6] if r.get('failed')]
            self.check(not failed and changed[0] == changed[1] == changed[2] == [run == 'first'] * 2,
                       'content, remote_src (%s run): changed agrees with builtin copy %s %s' % (run, changed, failed))
            trees = {key: snapshot(dest) for key, dest in dests.items()}
            self.check(trees['B'] == trees['F'] == trees['P'] and len(trees['B']) == 2,
                       'content, remote_src (%s run): the same files as builtin copy' % run)
            self.check('delete cannot go with content' in results[6].get('msg', ''),
                       'content with delete refused: %s' % results[6].get('msg'))

    def hostile(self):
        src = os.path.join(self.work, 'hsrc')
        for rel in ('a', 'd/b'):
            write(os.path.join(src, rel), rel.encode() + b'\n', 0o644)
        # An invalid mode (and directory_mode): failed before anything is
        # made, in check mode too.
        for flags in ((), ('--check',)):
            dests = self.dests('badmode')
            results = self.ansible.play(self.ours(src + '/', dests, mode='u=rwq') +
                                        self.ours(src + '/', dests, mode='0644', directory_mode='bogus'), *flags)
            for result in results:
                self.check(not result.get('changed') and 'is invalid' in result.get('msg', ''),
                           'invalid mode %s: fails with a message: %s' % (flags, result.get('msg')))
            self.check(not any(os.path.lexists(d) for d in dests.values()), 'invalid mode: nothing made')
        # A FIFO where a directory src goes: refused, left alone; where a
        # file goes: replaced by the file, as builtin copy does (whose --diff
        # hangs reading it: ours reads no FIFO).
        dests = self.dests('fifo', 'BFP')
        for dest in dests.values():
            os.makedirs(dest)
            os.mkfifo(os.path.join(dest, 'pipe'))
            os.mkfifo(os.path.join(dest, 'tree'))
            os.mkfifo(os.path.join(dest, 'pipe2'))
        pipes = {k: os.path.join(d, 'pipe') for k, d in dests.items()}
        results = self.ansible.play([('ansible.builtin.copy', {'src': src + '/a', 'dest': pipes['B']}, None)] +
                                    self.ours(src + '/a', pipes) +
                                    self.ours(src + '/', {k: os.path.join(d, 'tree') for k, d in dests.items()}))
        shown = self.ansible.play(self.ours(src + '/a', {k: os.path.join(d, 'pipe2') for k, d in dests.items()}),
                                  '--diff', '-vvv')
        self.check([r.get('diff', [{}])[0].get('before') for r in shown] == [''] * 2,
                   'a FIFO at a file dest, --diff: shown as absent, not read')
        os.unlink(os.path.join(dests['B'], 'pipe2'))
        write(os.path.join(dests['B'], 'pipe2'), b'a\n', 0o644)
        trees = {key: snapshot(dest) for key, dest in dests.items()}
        self.check(trees['B'] == trees['F'] == trees['P'] and [r.get('changed') for r in results[:3]] == [True] * 3,
                   'a FIFO at a file dest is replaced as builtin copy does')
        self.check(all('is not a directory (a special file)' in r.get('msg', '')
                       for r in results[3:]) and all(trees[k][b'tree'][0] == 0o010000 for k in 'FP'),
                   'a FIFO at a directory dest: refused, left alone (%s)' % [r.get('msg') for r in results[3:]])
        self.hostile_dest_names(src)

    def hostile_dest_names(self, src):
        """A dest whose own name holds $(...), backticks, a newline and quotes."""
        base = self.dests('names')
        dests = {k: os.path.join(d, '$(touch PWNED) `touch PWNED2`\n\'q"; x') for k, d in base.items()}
        results = self.ansible.play(self.ours(src + '/', dests) + self.ours(src + '/a', {
            k: os.path.join(d, '-n e\nw') for k, d in dests.items()}, mode='u=rw,g=,o='))
        home = os.path.expanduser('~')
        pwned = [p for d in (home, self.work, os.getcwd()) for p in ('PWNED', 'PWNED2')
                 if os.path.lexists(os.path.join(d, p))]
        for key, dest in dests.items():
            got = snapshot(dest)
            single = got.pop(b'-n e\nw', None)
            self.check(got == snapshot(src) and single is not None and single[1:] == ('0o600', b'a\n'),
                       'dest named with $(), newline, quotes (%s): copied there %s' % (
                           key, [r.get('msg') for r in results if r.get('failed')]))
        self.check(not pwned, 'no name reached a shell: %s' % pwned)

    def delete_like_synchronize(self):
        """synchronize (rsync --delete, checksum) against delete: true."""
        src = os.path.join(self.work, 'msrc')
        for rel in ('a', 'd/b', 'd/e/c', 'keep/x', 'empty'):
            write(os.path.join(src, rel), rel.encode(), 0o644)
        outside = os.path.join(self.work, 'outside')
        write(os.path.join(outside, 'target'), b'must stay\n')
        dests = self.dests('mirror', 'SFP')
        for dest in dests.values():
            shutil.copytree(src, dest)
            for rel in ('stale', 'd/stale', 'gone/deeper/f', 'gone/g', 'keep.local', 'd/e/n.local',
                        'cache.local/inner', 'd/e/c.old'):
                write(os.path.join(dest, rel), b'extra\n')
            os.makedirs(os.path.join(dest, 'gone/emptydir'))
            os.symlink(os.path.join(outside, 'target'), os.path.join(dest, 'link-out'))
            os.symlink(outside, os.path.join(dest, 'd/dirlink'))
            os.symlink('nowhere', os.path.join(dest, 'dangling'))
            os.mkfifo(os.path.join(dest, 'd/fifo'))
        tasks = [('ansible.posix.synchronize', {'src': src + '/', 'dest': dests['S'], 'delete': True,
                                                'checksum': True, 'rsync_opts': ['--exclude=*.local']}, None)]
        tasks += self.ours(src + '/', dests, delete=True, exclude=['*.local'])
        before = {k: snapshot(d) for k, d in dests.items()}
        results = self.ansible.play(tasks, '--check')
        self.check(all(snapshot(d) == before[k] for k, d in dests.items()) and all(r.get('changed') for r in results),
                   'delete --check: reports a change, removes nothing (%s)' % [r.get('msg') for r in results])
        results = self.ansible.play(tasks)
        after = {k: snapshot(d) for k, d in dests.items()}
        gone = {k: sorted(set(before[k]) - set(after[k])) for k in dests}
        for key in 'FP':
            self.check(not results[1 + (key == 'P')].get('failed') and gone[key] == gone['S'] and
                       names(after[key]) == names(after['S']),
                       'delete %s: removes what synchronize removes (%d paths), leaves the same%s' % (
                           key, len(gone['S']), '' if gone[key] == gone['S'] else ': %r != %r' % (gone[key], gone['S'])))
        self.check(open(os.path.join(outside, 'target'), 'rb').read() == b'must stay\n' and
                   os.path.isdir(outside), 'delete: what links pointed to is left')
        results = self.ansible.play(tasks)
        self.check([bool(r.get('changed')) for r in results] == [False] * 3, 'delete again: nothing to do')
