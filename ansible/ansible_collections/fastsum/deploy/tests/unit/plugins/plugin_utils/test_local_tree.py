# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The archive of changed files: whole files, or nothing when one changes
while it is read (a writer on the controller at the same time)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import tarfile

import pytest

from ansible_collections.fastsum.deploy.plugins.plugin_utils import local_tree


def archived(path):
    with tarfile.open(path) as archive:
        return dict((m.name, archive.extractfile(m).read()) for m in archive.getmembers())


def test_the_archive_holds_the_plan_then_each_file(tmp_path):
    one, two = tmp_path / 'one', tmp_path / 'two'
    one.write_bytes(b'1' * 3000)
    two.write_bytes(b'')
    local_tree.build_archive(str(tmp_path / 'a.tar'), {'files': [1, 2]}, [str(one), str(two)])
    got = archived(str(tmp_path / 'a.tar'))
    assert json.loads(got.pop('plan.json')) == {'files': [1, 2]}
    assert got == {'f0': b'1' * 3000, 'f1': b''}


@pytest.mark.parametrize('change', ['grow', 'shrink', 'rewrite'])
def test_a_file_changed_while_archived_fails_naming_it(tmp_path, mocker, change):
    path = tmp_path / 'busy'
    path.write_bytes(b'a' * 5000)
    real = os.fstat
    calls = []

    def writer_between(fd):
        # The first fstat is the size the member gets; the file changes
        # right after it, as another writer's would.
        st = real(fd)
        if not calls:
            with open(str(path), 'r+b') as handle:
                if change == 'grow':
                    handle.seek(0, 2)
                    handle.write(b'b')
                elif change == 'shrink':
                    handle.truncate(10)
                else:
                    handle.write(b'z')
                    os.utime(str(path), ns=(st.st_atime_ns, st.st_mtime_ns + 10 ** 9))
        calls.append(fd)
        return st if not calls[1:] else real(fd)

    mocker.patch.object(local_tree.os, 'fstat', side_effect=writer_between)
    with pytest.raises(local_tree.SourceError, match='busy changed while it was being archived'):
        local_tree.build_archive(str(tmp_path / 'a.tar'), {'files': [1]}, [str(path)])
