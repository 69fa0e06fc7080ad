# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host's side: modes against chmod(1), listing and applying in a
temporary directory (symlinks replaced, never followed; names as bytes)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import io
import json
import os
import stat
import subprocess
import tarfile

import pytest

from ansible_collections.fastsum.deploy.plugins.module_utils.remote_tree import (
    _hash_big, hash_at, list_tree, mode_for, peek_files, stale_temp)
from ansible_collections.fastsum.deploy.plugins.module_utils.remote_apply import Placer, apply_archive


@pytest.mark.parametrize('spec', ['u=rw,g=r,o=', 'u+x', 'go-w', 'a=rX', 'u=rwx,g+s', 'o+t', '=r', 'ug+w,o-r'])
@pytest.mark.parametrize('start', [0o644, 0o755, 0o600])
def test_symbolic_modes_match_chmod(tmp_path, spec, start):
    path = tmp_path / 'f'
    path.write_bytes(b'')
    os.chmod(str(path), start)
    old_umask = os.umask(0)
    try:
        subprocess.run(['chmod', spec, str(path)], check=True)
    finally:
        os.umask(old_umask)
    assert mode_for(spec, start) == stat.S_IMODE(os.stat(str(path)).st_mode)


def test_octal_modes():
    assert mode_for('0640', 0o777) == 0o640
    assert mode_for('1777', 0) == 0o1777
    assert mode_for(0o600, 0o777) == 0o600
    assert mode_for(None, 0o644) == 0o644
    with pytest.raises(ValueError):
        mode_for('u~x', 0o644)


def b64(data):
    return base64.b64encode(data).decode('ascii')


def archive(path, plan, contents):
    with tarfile.open(str(path), 'w') as tar:
        for name, data in [('plan.json', json.dumps(plan).encode())] + \
                [('f%d' % i, c) for i, c in enumerate(contents)]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_apply_replaces_links_and_keeps_outside(tmp_path):
    root = tmp_path / 'root'
    outside = tmp_path / 'outside'
    outside.mkdir()
    (outside / 'x').write_bytes(b'keep')
    root.mkdir()
    os.symlink(str(outside), str(root / 'sub'))
    name = b'sub/bad\xff$(x)\nname'
    plan = {'root': b64(os.fsencode(str(root))), 'mkdirs': [{'path': b64(b'sub'), 'mode': '0700'}],
            'files': [{'path': b64(name), 'mode': None}, {'path': b64(b'sub/x'), 'mode': 'u=rw'}]}
    archive(tmp_path / 'a.tar', plan, [b'one', b'two'])
    result = apply_archive(str(tmp_path / 'a.tar'))
    assert result['failed'] == []
    assert not os.path.islink(str(root / 'sub'))
    assert (outside / 'x').read_bytes() == b'keep'
    assert open(os.path.join(os.fsencode(str(root)), name), 'rb').read() == b'one'
    assert stat.S_IMODE(os.stat(str(root / 'sub')).st_mode) == 0o700
    assert not [n for n in os.listdir(str(root / 'sub')) if n.startswith('.fastsum-deploy.')]
    listing = list_tree({'dest': b64(os.fsencode(str(root))), 'algorithm': 'sha1'})
    kinds = dict((base64.b64decode(e[0]), e[1]) for e in listing['entries'])
    assert kinds[name] == 'f' and kinds[b'sub'] == 'd' and kinds[b''] == 'd'


def test_apply_fails_one_file_under_a_directory_and_does_the_rest(tmp_path):
    root = tmp_path / 'root'
    (root / 'taken').mkdir(parents=True)
    plan = {'root': b64(os.fsencode(str(root))),
            'files': [{'path': b64(b'taken'), 'mode': None}, {'path': b64(b'fine'), 'mode': None}]}
    archive(tmp_path / 'a.tar', plan, [b'1', b'2'])
    result = apply_archive(str(tmp_path / 'a.tar'))
    assert [f[0] for f in result['failed']] == [b64(b'taken')]
    assert (root / 'fine').read_bytes() == b'2'


def test_listing_does_not_follow_links(tmp_path):
    (tmp_path / 'out').mkdir()
    (tmp_path / 'out' / 'secret').write_bytes(b's')
    (tmp_path / 'root').mkdir()
    os.symlink(str(tmp_path / 'out'), str(tmp_path / 'root' / 'l'))
    listing = list_tree({'dest': b64(os.fsencode(str(tmp_path / 'root'))), 'algorithm': 'md5'})
    names = [base64.b64decode(e[0]) for e in listing['entries']]
    assert names == [b'', b'l']
    assert listing['entries'][1][1] == 'l'


@pytest.mark.parametrize('content, ok', [(b'ok\n', True), (b'bad\n', False)])
def test_validate_runs_on_the_temporary_file(tmp_path, content, ok):
    (tmp_path / 'root').mkdir()
    (tmp_path / 'root' / 'f').write_bytes(b'old\n')
    plan = {'root': b64(os.fsencode(str(tmp_path / 'root' / 'f'))), 'single': True,
            'validate': 'grep -q ok %s', 'files': [{'path': b64(b''), 'mode': None, 'backup': True}]}
    archive(tmp_path / 'a.tar', plan, [content])
    result = apply_archive(str(tmp_path / 'a.tar'))
    assert (tmp_path / 'root' / 'f').read_bytes() == (content if ok else b'old\n')
    assert bool(result['failed']) != ok
    assert len(result['done']['backups']) == (1 if ok else 0)
    assert not [n for n in os.listdir(str(tmp_path / 'root')) if n.startswith('.fastsum-deploy.')]


def test_a_fifo_is_never_waited_on(tmp_path):
    """A FIFO where a file was (swapped in after the walk saw a file) is
    refused at once, not read: the open does not wait for a writer."""
    os.mkfifo(str(tmp_path / 'p'))
    fd = os.open(str(tmp_path), os.O_RDONLY)
    try:
        with pytest.raises(OSError) as err:
            hash_at(fd, 'p', 'sha1')
        assert 'not a regular file' in str(err.value)
    finally:
        os.close(fd)
    assert peek_files({'root': b64(os.fsencode(str(tmp_path))), 'paths': [b64(b'p')]}) == {'files': [['absent', None]]}


def test_big_files_are_hashed_without_passing_a_swapped_link(tmp_path):
    """The big files are hashed after the walk: a directory swapped for a
    link to outside in between is not passed through."""
    (tmp_path / 'root' / 'd').mkdir(parents=True)
    (tmp_path / 'out').mkdir()
    (tmp_path / 'out' / 'big').write_bytes(b'outside')
    os.rmdir(str(tmp_path / 'root' / 'd'))
    os.symlink(str(tmp_path / 'out'), str(tmp_path / 'root' / 'd'))
    entry, errors = [b64(b'd/big'), 'f', 0o644, 0, 0, None, None, 7], []
    _hash_big(os.fsencode(str(tmp_path / 'root')), [(entry, b'd/big')], 'sha1', errors)
    assert entry[5] is None and [e[0] for e in errors] == [b64(b'd/big')]


def test_stale_temporary_names(tmp_path):
    """Only this module's temporary names whose writer is gone are stale."""
    dead = subprocess.Popen(['true'])
    dead.wait()
    assert stale_temp(b'.fastsum-deploy.%d.1700000000000000.0' % dead.pid)
    assert stale_temp(b'.fastsum-deploy.%d.1700000000000000.dir' % dead.pid)
    assert not stale_temp(b'.fastsum-deploy.%d.1700000000000000.0' % os.getpid())
    assert not stale_temp(b'.fastsum-deploy.%d.17.0.x' % dead.pid)
    assert not stale_temp(b'fastsum-deploy.%d.17.0' % dead.pid)
    (tmp_path / 'd').mkdir()
    assert not stale_temp(b'.fastsum-deploy.%d.1.2' % dead.pid)  # a user's name: no time in it
    (tmp_path / 'd' / ('.fastsum-deploy.%d.1700000000000005.1' % dead.pid)).write_bytes(b'half')
    listing = list_tree({'dest': b64(os.fsencode(str(tmp_path))), 'algorithm': 'md5'})
    assert listing['stale'] == [b64(b'd/.fastsum-deploy.%d.1700000000000005.1' % dead.pid)]


def test_a_directory_appears_with_its_mode_or_not_at_all(tmp_path):
    """make_dir renames a directory into place after its mode is set: no
    directory with another mode is ever at its name (an interrupted run
    would leave it, and directory_mode is for new directories only)."""
    root = tmp_path / 'root'
    root.mkdir()
    (root / 'was-a-file').write_bytes(b'x')
    plan = {'root': b64(os.fsencode(str(root))), 'mkdirs': [
        {'path': b64(b'new'), 'mode': '0751'}, {'path': b64(b'was-a-file'), 'mode': 'u=rwx,g=,o='}]}
    archive(tmp_path / 'a.tar', plan, [])
    result = apply_archive(str(tmp_path / 'a.tar'))
    assert result['failed'] == []
    assert stat.S_IMODE(os.stat(str(root / 'new')).st_mode) == 0o751
    assert stat.S_IMODE(os.stat(str(root / 'was-a-file')).st_mode) == 0o700
    assert sorted(os.listdir(str(root))) == ['new', 'was-a-file']


def test_what_another_run_removed_or_made_meanwhile_is_done(tmp_path):
    """Two runs into one dest: a path the other run removed first, and a
    directory it made (and filled) first, are not failures."""
    root = tmp_path / 'root'
    (root / 'made' / 'by-other').mkdir(parents=True)
    (root / 'made' / 'by-other' / 'f').write_bytes(b'x')
    placer = Placer({'root': b64(os.fsencode(str(root)))})
    placer.open_root()
    try:
        placer.remove(b'gone')
        placer.remove(b'gone-dir/deeper')
        real_lstat = os.lstat
        calls = []

        def missing_once(name, dir_fd=None):
            calls.append(name)
            if len(calls) == 1:
                raise FileNotFoundError(name)
            return real_lstat(name, dir_fd=dir_fd)
        os.lstat = missing_once
        try:
            placer.make_dir(b'made/by-other', None)
        finally:
            os.lstat = real_lstat
    finally:
        os.close(placer.root_fd)
    assert placer.failed == [] and (root / 'made' / 'by-other' / 'f').read_bytes() == b'x'
    assert sorted(os.listdir(str(root / 'made'))) == ['by-other']


def test_a_full_disk_fails_the_file_never_cuts_it(tmp_path):
    """write(2) on a full disk writes what fits and returns its count: the
    rest must be written again (and fail with ENOSPC), never dropped."""
    import errno
    from ansible_collections.fastsum.deploy.plugins.module_utils import remote_apply
    real_write, written = os.write, []

    def short_then_full(fd, data):
        if written:
            raise OSError(errno.ENOSPC, 'No space left on device')
        written.append(real_write(fd, bytes(data[:1000])))
        return 1000
    root = tmp_path / 'root'
    root.mkdir()
    (root / 'f').write_bytes(b'old')
    plan = {'root': b64(os.fsencode(str(root))), 'files': [{'path': b64(b'f'), 'mode': None}]}
    archive(tmp_path / 'a.tar', plan, [b'N' * 600000])
    remote_apply.os.write = short_then_full
    try:
        result = apply_archive(str(tmp_path / 'a.tar'))
    finally:
        remote_apply.os.write = real_write
    assert [f[0] for f in result['failed']] == [b64(b'f')] and 'No space' in result['failed'][0][1]
    assert (root / 'f').read_bytes() == b'old' and os.listdir(str(root)) == ['f']
