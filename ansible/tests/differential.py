"""fastsum.deploy.copy against ansible.builtin.copy, through a real sshd.

Every scenario runs the same task three times: ansible.builtin.copy (dest
B), fastsum.deploy.copy where the host has fastsum (F, raw commands) and
with the Python fallback (P, module runs); after each, the three trees must
be byte-, mode- (and where asked owner-) identical and `changed` agree.
Then what builtin copy cannot do (names that are not UTF-8, links in the
destination, delete, become_user) against the source tree itself.
Usage: differential.py WORKDIR (FASTSUM: the fastsum binary for both ends).
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import traceback

from extra import Extra
from harness import Ansible, Sshd, snapshot, tree_diff, write
from hostile import Hostile

FASTSUM = os.path.realpath(os.environ.get('FASTSUM', 'target/release/fastsum'))
COLLECTIONS = os.path.realpath(os.path.join(os.path.dirname(__file__), '..'))
FAILURES = []
# Builtin copy costs ~1 s a file over ssh here: through the local
# connection it gives the same trees in a fraction of the time (the
# fastsum runs go through the sshd).
BUILTIN_HOST = os.environ.get('BUILTIN_HOST', 'local')


def check(ok, what):
    print(('ok     ' if ok else 'FAILED ') + what, flush=True)
    if not ok:
        FAILURES.append(what)


def make_source(src):
    """~25 entries: nested directories, modes 0600/0640/0755, an empty file,
    an empty directory, names with spaces, quotes, $(...), backticks, a
    leading '-' (all of which builtin copy handles)."""
    files = {
        'a.txt': (b'alpha\n', 0o644), 'bin/run.sh': (b'#!/bin/sh\necho hi\n', 0o755),
        'etc/secret': (b'pw\n', 0o600), 'etc/conf': (b'key=1\n', 0o640), 'empty': (b'', 0o644),
        'with space.txt': (b'sp\n', 0o644), 'q\'uote"s': (b'q\n', 0o644), '$(touch pwned)': (b'd\n', 0o644),
        '`tick`': (b't\n', 0o644), '-leading': (b'l\n', 0o644), 'deep/a/b/c/d.txt': (b'deep\n', 0o640),
        'deep/a/x': (b'x' * 5000, 0o644),
    }
    for number in range(10):
        files['many/f%02d' % number] = (b'file %d\n' % number * (number + 1), 0o644)
    for rel, (data, mode) in files.items():
        write(os.path.join(src, rel), data, mode)
    os.makedirs(os.path.join(src, 'emptydir'), exist_ok=True)


class Trio:
    """One task, three ways, compared."""

    def __init__(self, ansible, work):
        self.ansible = ansible
        self.work = work
        self.dests = {key: os.path.join(work, 'dest-' + key) for key in 'BFP'}
        for path in self.dests.values():
            os.makedirs(path, exist_ok=True)

    def run(self, name, args, flags=(), sub='', builtin=True):
        """Without BUILTIN, builtin copy's tree is the last one and its
        `changed` taken as False (a re-run that changes nothing)."""
        tasks, keys = [], []
        for key, host, module, extra in (
                ('B', BUILTIN_HOST if builtin else None, 'ansible.builtin.copy', {}),
                ('F', 'ssh', 'fastsum.deploy.copy', {'fastsum_path': FASTSUM, 'fastsum_controller': FASTSUM}),
                ('P', 'local', 'fastsum.deploy.copy', {'use_fastsum': 'never', 'fastsum_controller': FASTSUM})):
            if host is None:
                continue
            task = dict(args, dest=os.path.join(self.dests[key], sub, '') if args['dest'].endswith('/')
                        else os.path.join(self.dests[key], sub),
                        **extra)
            tasks.append((module, task, None if host == 'local' else host))
            keys.append(key)
        # Each of the three in a playbook run of its own, side by side:
        # builtin copy runs a module a file, and took most of the time.
        results = dict(zip(keys, parallel(lambda task: self.ansible.play([task], *flags)[0], tasks)))
        results.setdefault('B', {'changed': False})
        for key in 'FP':
            check(not results[key].get('failed'), '%s: %s ran (%s)' % (name, key, results[key].get('msg', '')))
        method = results['F'].get('method'), results['P'].get('method')
        check(method == ('fastsum', 'python'), '%s: methods %s' % (name, method))
        changed = [bool(results[k].get('changed')) for k in 'BFP']
        check(len(set(changed)) == 1, '%s: changed agrees (builtin, fastsum, python: %s)' % (name, changed))
        self.compare(name)
        return results

    def compare(self, name, owners=False):
        trees = {key: snapshot(path, owners) for key, path in self.dests.items()}
        for key in 'FP':
            difference = tree_diff(trees['B'], trees[key])
            check(not difference, '%s: tree %s equals builtin copy\'s%s' % (name, key, '\n' + difference if difference else ''))
        return trees


def differential(ansible, work):
    src = os.path.join(work, 'src')
    make_source(src)
    trio = Trio(ansible, work)
    base = {'src': src, 'dest': 'x/'}
    results = trio.run('first copy', base)
    check(all(results[k]['changed'] for k in 'BFP'), 'first copy: changed')
    check(len(results['F']['created']) >= 25, 'first copy: created lists every entry')
    results = trio.run('unchanged re-run', base)
    check(not results['F']['changed'] and len(results['F']['unchanged']) == 22, 'unchanged re-run: all unchanged')
    write(os.path.join(src, 'a.txt'), b'alpha, longer now\n')
    conf = os.path.join(src, 'etc/conf')
    before = os.stat(conf)
    write(conf, b'key=2\n')
    os.utime(conf, ns=(before.st_atime_ns, before.st_mtime_ns))
    write(os.path.join(src, 'new/nested/file'), b'new\n')
    results = trio.run('edits (one same size, mtime put back)', base)
    check(sorted(results['F']['updated']) == ['a.txt', 'etc/conf'], 'edits: updated %s' % results['F']['updated'])
    trio.run('mode preserve', dict(base, mode='preserve'))
    trio.run('mode preserve again', dict(base, mode='preserve'), builtin=False)
    trio.run('mode u=rw,g=r,o=', dict(base, mode='u=rw,g=r,o='))
    write(os.path.join(src, 'a.txt'), b'checked\n')
    snaps = {k: snapshot(p) for k, p in trio.dests.items()}
    results = trio.run('--check --diff', base, ('--check', '--diff'))
    check(all(snapshot(p) == snaps[k] for k, p in trio.dests.items()), '--check: nothing changed')
    check(results['F'].get('updated') == ['a.txt'] == results['P'].get('updated'),
          '--check: reports the update')
    results = trio.run('backup, mode 0640', dict(base, backup=True, mode='0640'))
    check(len(results['F'].get('backup_files', [])) == 1, 'backup: one backup file')
    os.unlink(os.path.join(src, 'many/f00'))
    trio.run('owner and group, a source file deleted (no delete: it stays)',
             dict(base, mode='0640', owner='nobody', group='nogroup'))
    trio.compare('owner and group', owners=True)
    trio.run('owner and group again', dict(base, mode='0640', owner='nobody', group='nogroup'), builtin=False)
    trio.run('trailing slash', {'src': src + '/deep/', 'dest': 'y/'}, sub='y')
    one = {'src': os.path.join(src, 'a.txt'), 'dest': 'z/'}
    trio.run('one file into a directory', one, sub='z')
    trio.run('one file again', one, sub='z', builtin=False)
    trio.run('one file to a name', {'src': os.path.join(src, 'bin/run.sh'), 'dest': 'z/renamed'},
             sub='z/renamed')
    return src


def fastsum_only(ansible, work, src):
    """What builtin copy gets wrong or cannot do, against the source: each
    step once over ssh (fastsum on the host) and once through the local
    connection (the Python fallback), in one playbook run."""
    hostile = os.path.join(work, 'hostile')
    shutil.copytree(src, hostile, symlinks=True)
    write(os.path.join(os.fsencode(hostile), b'bad\xffname'), b'latin\n')
    write(os.path.join(hostile, 'nl\nname'), b'newline\n')
    write(os.path.join(hostile, 'x' * 255), b'long\n')
    outside = os.path.join(work, 'outside')
    write(os.path.join(outside, 'x'), b'must stay\n')
    dests = {'ssh': os.path.join(work, 'only', 'ssh'), 'local': os.path.join(work, 'only', 'local')}
    base = {'ssh': dict(src=hostile + '/', dest=dests['ssh'], fastsum_controller=FASTSUM, mode='preserve',
                        fastsum_path=FASTSUM),
            'local': dict(src=hostile + '/', dest=dests['local'], fastsum_controller=FASTSUM, mode='preserve',
                          use_fastsum='never')}

    def both(**extra):
        results = ansible.play([('fastsum.deploy.copy', dict(base[h], **extra), None if h == 'local' else h)
                                for h in ('ssh', 'local')])
        return dict(zip(('ssh', 'local'), results))

    results = both()
    for host, dest in dests.items():
        check(not results[host].get('failed') and snapshot(hostile) == snapshot(dest),
              '%s: hostile names byte-exact (%s)' % (host, results[host].get('msg', '')))
        link = os.path.join(dest, 'deep/a')
        shutil.rmtree(link)
        os.symlink(outside, link)
    os.unlink(os.path.join(hostile, 'deep/a/x'))
    write(os.path.join(hostile, 'deep/a/x'), b'changed\n')
    results = both()
    for host, dest in dests.items():
        link = os.path.join(dest, 'deep/a')
        check(open(os.path.join(outside, 'x'), 'rb').read() == b'must stay\n' and not os.path.islink(link),
              '%s: a symlink in dest is replaced, never followed (%s)' % (host, results[host].get('msg', '')))
        check(snapshot(hostile) == snapshot(dest), '%s: converged after the symlink' % host)
        os.makedirs(os.path.join(dest, 'gone/deeper'))
        write(os.path.join(dest, 'stale'), b's')
        write(os.path.join(dest, 'keep.local'), b'k')
    results = both(delete=True, exclude=['*.local'])
    for host, dest in dests.items():
        removed = sorted(results[host].get('removed', []))
        check(removed == ['gone/', 'stale'], '%s: delete removed %s' % (host, removed))
        got = snapshot(dest)
        check(got.pop(b'keep.local', None) is not None and got == snapshot(hostile),
              '%s: delete mirrors, exclude kept' % host)
        os.chmod(os.path.join(dest, 'deep'), 0o711)
    write(os.path.join(hostile, 'newdir/f'), b'n')
    results = both(directory_mode='0700')
    for host, dest in dests.items():
        modes = [oct(os.stat(os.path.join(dest, d)).st_mode & 0o777) if os.path.isdir(os.path.join(dest, d))
                 else 'missing' for d in ('deep', 'newdir')]
        check(modes == ['0o711', '0o700'], '%s: directory_mode for new directories only %s (%s)'
              % (host, modes, results[host].get('msg', results[host].get('changed'))))
    checksums(ansible, hostile)
    become(ansible, work, src)
    result = ansible.run('local', 'fastsum.deploy.copy', {'src': src, 'dest': dests['local'],
                                                          'fastsum_controller': FASTSUM},
                         '-e', 'ansible_shell_type=powershell')
    check('does not support Windows' in result.get('msg', ''), 'Windows hosts refused: %s' % result.get('msg'))


def checksums(ansible, tree):
    """fastsum.deploy.checksums against hashlib, over ssh."""
    expected = {}
    for top, dirs, files in os.walk(tree):
        for name in files:
            path = os.path.join(top, name)
            with open(path, 'rb') as handle:
                data = handle.read()
            if path.isprintable():
                expected[path] = {a: hashlib.new(a, data).hexdigest() for a in ('md5', 'sha256')}
    tasks = [('fastsum.deploy.checksums', {'path': tree, 'recurse': True, 'algorithm': a}, 'ssh')
             for a in ('md5', 'sha256')]
    tasks.append(('fastsum.deploy.checksums', {'paths': [tree + '/a.txt', tree + '/missing', tree],
                                               'algorithm': 'xxh128', 'fastsum_path': FASTSUM}, 'ssh'))
    # A FIFO and a symlink named in paths: errors, never a wait, never followed.
    odd = os.path.join(os.path.dirname(tree), 'checksums-odd')
    os.makedirs(odd)
    os.mkfifo(os.path.join(odd, 'fifo'))
    os.symlink(os.path.join(tree, 'a.txt'), os.path.join(odd, 'link'))
    tasks.append(('fastsum.deploy.checksums', {'paths': [os.path.join(odd, n) for n in ('fifo', 'link')]
                                               + [tree + '/a.txt'], 'algorithm': 'sha1'}, 'ssh'))
    results = ansible.play(tasks)
    errors = results[3].get('errors', {})
    check(errors.get(odd + '/fifo') == 'not a regular file' and 'symbolic link' in errors.get(odd + '/link', '')
          and list(results[3].get('checksums', {})) == [tree + '/a.txt'],
          'checksums: a FIFO and a symlink in paths are errors (%s)' % errors)
    for algorithm, result in zip(('md5', 'sha256'), results):
        got = {k: v for k, v in result.get('checksums', {}).items() if k in expected}
        check(got == {k: v[algorithm] for k, v in expected.items()} and len(got) > 20,
              'checksums %s agrees with hashlib (%d files)' % (algorithm, len(got)))
    check(set(results[2].get('errors', {})) == {tree + '/missing', tree} and len(results[2].get('checksums', {})) == 1,
          'checksums: errors per path, xxh128 by fastsum: %s' % results[2].get('errors'))


def become(ansible, work, src):
    """become_user other than root, through sudo, over ssh."""
    if os.geteuid() != 0 or not shutil.which('sudo'):
        print('skip   become: not root or no sudo')
        return
    dest = os.path.join(work, 'become')
    os.makedirs(dest)
    shutil.chown(dest, 'nobody', 'nogroup')
    os.chmod(work, 0o755)
    tasks = []
    for how, extra in (('fastsum', {'fastsum_path': FASTSUM}), ('python', {'use_fastsum': 'never'})):
        tasks.append(('fastsum.deploy.copy', dict(src=src + '/', dest=os.path.join(dest, how),
                                                  fastsum_controller=FASTSUM, **extra), 'ssh'))
    results = ansible.play(tasks, '-b', '--become-user', 'nobody')
    for (module, args, host), result in zip(tasks, results):
        owners = {os.stat(os.path.join(args['dest'], name)).st_uid for name in os.listdir(args['dest'])}
        check(not result.get('failed') and owners == {65534},
              'become_user nobody (%s): files owned by nobody (%s)' % (result.get('method'), result.get('msg', '')))


def integration_over_ssh(inventory, env):
    """The integration target (tests/integration/targets/copy) through
    the sshd, with fastsum on the host (module_defaults): ansible-test runs
    it through the local connection with the Python fallback (the
    fallback over ssh is the become test's). ~23 s."""
    target = os.path.join(COLLECTIONS, 'ansible_collections/fastsum/deploy/tests/integration/targets/copy/tasks/main.yml')
    plays = [{'hosts': 'ssh', 'gather_facts': False, 'vars': {'expected_method': method},
              'module_defaults': {'fastsum.deploy.copy': defaults},
              'tasks': [{'ansible.builtin.include_tasks': target}]}
             for method, defaults in (('fastsum', {'fastsum_path': FASTSUM}),)]
    path = os.path.join(os.path.dirname(inventory), 'integration.yml')
    with open(path, 'w') as handle:
        json.dump(plays, handle)
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', inventory, path],
                          env=dict(Ansible(inventory, COLLECTIONS, env).env, ANSIBLE_STDOUT_CALLBACK='default'),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False, timeout=600)
    out = proc.stdout.decode('utf-8', 'replace')
    check(proc.returncode == 0 and out.count('failed=0') == 1 and 'ok=' in out,
          'the integration target over ssh, fastsum on the host%s' % (
              '' if proc.returncode == 0 else ':\n' + out[-3000:]))


def parallel(function, items):
    """function(item) for each item, each in a thread of its own; the
    results in the items' order (an exception is raised again here)."""
    results = [None] * len(items)
    errors = []

    def one(index, item):
        try:
            results[index] = function(item)
        except Exception as error:  # pylint: disable=broad-except
            errors.append(error)

    threads = [threading.Thread(target=one, args=pair) for pair in enumerate(items)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


def side_by_side(groups):
    """Runs each (name, function) in a thread of its own; a group that
    raises is a failure (the others run to their end). Prints each one's
    seconds."""
    def timed(name, function):
        began = time.time()
        try:
            function()
        except Exception:  # pylint: disable=broad-except
            check(False, '%s: raised\n%s' % (name, traceback.format_exc()))
        print('=== %s: %.0f s' % (name, time.time() - began), flush=True)

    threads = [threading.Thread(target=timed, args=group) for group in groups]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def main():
    work = os.path.realpath(sys.argv[1])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    sshd = Sshd()
    started = time.time()
    try:
        env = {'PATH': os.path.dirname(FASTSUM) + ':' + os.environ['PATH']}
        ansible = Ansible(sshd.inventory(), COLLECTIONS, env)
        extra = Extra(sshd.inventory(), COLLECTIONS, env, work, FASTSUM, check)
        hostile = Hostile(sshd.inventory(), COLLECTIONS, env, work, FASTSUM, check)
        if os.environ.get('ONLY_INTEGRATION'):
            integration_over_ssh(sshd.inventory(), env)
        elif os.environ.get('ONLY_HOSTILE'):
            # ONLY_HOSTILE=1: all of hostile.py; or the names of its checks
            # (ONLY_HOSTILE=unread_archive,links).
            names = os.environ['ONLY_HOSTILE']
            for name in names.split(',') if names != '1' else []:
                getattr(hostile, name)()
            if names == '1':
                hostile.run_all()
        elif os.environ.get('ONLY_EXTRA'):
            extra.run_all()
        else:
            # Four groups that share nothing but the sshd (each its own
            # source, work directories and ssh control path), side by
            # side: Ansible is mostly Python starting up, one core each
            # (the groups one after another took 472 s of this suite's 652
            # locally).
            def fastsum_alone():
                src = os.path.join(work, 'src-alone')
                make_source(src)
                fastsum_only(Ansible(sshd.inventory(), COLLECTIONS, env), work, src)

            def hostile_and_integration():
                hostile.run_all()
                integration_over_ssh(sshd.inventory(), env)

            side_by_side([('differential', lambda: differential(ansible, work)),
                          ('fastsum only', fastsum_alone), ('extra', extra.run_all),
                          ('hostile', hostile_and_integration)])
    finally:
        sshd.stop()
    print('%d checks failed, %.0f s' % (len(FAILURES), time.time() - started))
    return 1 if FAILURES else 0


if __name__ == '__main__':
    sys.exit(main())
