# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan: what is created, updated, removed, left, from two listings."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64

from ansible_collections.fastsum.deploy.plugins.plugin_utils.planner import Options, excluded, make_plan


def local_file(digest, mode=0o644):
    return {'kind': 'f', 'mode': mode, 'digest': digest, 'path': b'/src/x'}


def remote_file(digest, mode=0o644, uid=0, gid=0):
    return {'kind': 'f', 'mode': mode, 'digest': digest, 'uid': uid, 'gid': gid}


def names(items):
    return [base64.b64decode(i['path'] if isinstance(i, dict) else i) for i in items]


def test_unchanged_changed_created():
    local = {b'': {'kind': 'd', 'mode': 0o755}, b'a': local_file('1'), b'b': local_file('2'),
             b'd': {'kind': 'd', 'mode': 0o755}, b'd/c': local_file('3')}
    remote = {b'': {'kind': 'd', 'mode': 0o755, 'uid': 0, 'gid': 0}, b'a': remote_file('1'),
              b'b': remote_file('9')}
    plan, report, sources = make_plan(local, remote, None, Options({}))
    assert report['unchanged'] == [b'a']
    assert report['updated'] == [b'b']
    assert report['created'] == [b'd/', b'd/c']
    assert names(plan['files']) == [b'b', b'd/c'] and len(sources) == 2
    assert names(plan['mkdirs']) == [b'd']


def test_mode_change_alone_is_an_update_without_sending():
    local = {b'a': local_file('1', 0o600)}
    remote = {b'a': remote_file('1', 0o644)}
    plan, report, dummy = make_plan(local, remote, None, Options({'mode': 'preserve'}))
    assert plan['files'] == [] and names(plan['attributes']) == [b'a'] and report['updated'] == [b'a']
    plan, report, dummy = make_plan(local, remote, None, Options({}))
    assert report['unchanged'] == [b'a'] and not plan['attributes']


def test_force_false_leaves_what_is_there():
    plan, report, dummy = make_plan({b'a': local_file('1')}, {b'a': remote_file('2')}, None, Options({'force': False}))
    assert plan['files'] == [] and report['unchanged'] == [b'a']


def test_delete_spares_excluded_and_removes_trees_once():
    local = {b'': {'kind': 'd', 'mode': 0o755}}
    remote = {b'': {'kind': 'd'}, b'old': {'kind': 'd'}, b'old/x': remote_file('1'),
              b'keep.local': remote_file('2'), b'stale': remote_file('3')}
    plan, report, dummy = make_plan(local, remote, None, Options({'delete': True, 'exclude': ['*.local']}))
    assert names(plan['remove']) == [b'old', b'stale']
    assert report['removed'] == [b'old/', b'stale']


def test_fastsum_plan_decides_bytes():
    local = {b'a': local_file('1'), b'b': local_file('2')}
    remote = {b'a': remote_file(None), b'b': remote_file(None)}
    dummy, report, dummy2 = make_plan(local, remote, {b'b'}, Options({}))
    assert report['unchanged'] == [b'a'] and report['updated'] == [b'b']


def test_gitignore_globs():
    assert excluded(b'a/b/c.tmp', False, ['*.tmp'])
    assert excluded(b'build/x', False, ['/build/'])
    assert not excluded(b'src/build', False, ['/build/'])
    assert excluded(b'x/cache/y', False, ['**/cache'])
    assert not excluded(b'build', False, ['build/'])


def test_stale_temporaries_are_cleaned_unless_the_source_has_them():
    """What an interrupted run left is removed and reported as cleaned,
    with or without delete; a source file of that very name is kept."""
    local = {b'': {'kind': 'd', 'mode': 0o755}, b'a': local_file('1'), b'.fastsum-deploy.9.9.9': local_file('2')}
    remote = {b'': {'kind': 'd', 'mode': 0o755, 'uid': 0, 'gid': 0}, b'a': remote_file('1'),
              b'.fastsum-deploy.9.9.9': remote_file('2'), b'.fastsum-deploy.8.8.dir': {'kind': 'd', 'mode': 0o700,
                                                                                       'uid': 0, 'gid': 0},
              b'.fastsum-deploy.8.8.dir/x': remote_file('3'), b'.fastsum-deploy.7.7.0': remote_file('4')}
    stale = [b'.fastsum-deploy.9.9.9', b'.fastsum-deploy.8.8.dir', b'.fastsum-deploy.7.7.0']
    for delete in (False, True):
        plan, report = make_plan(local, remote, None, Options({'delete': delete}), stale)[:2]
        assert report['cleaned'] == [b'.fastsum-deploy.7.7.0', b'.fastsum-deploy.8.8.dir']
        assert names(plan['remove']) == report['cleaned'] and report['removed'] == []
        assert sorted(report['unchanged']) == [b'.fastsum-deploy.9.9.9', b'a']


def test_delete_leaves_a_running_writer_s_temporary_file():
    """Two runs into one dest: the other run's file in the making (its
    writer runs, so it is not stale) is not removed by delete."""
    local = {b'': {'kind': 'd', 'mode': 0o755}, b'a': local_file('1')}
    remote = {b'': {'kind': 'd', 'mode': 0o755, 'uid': 0, 'gid': 0}, b'a': remote_file('1'),
              b'.fastsum-deploy.5.1700000000000006.0': remote_file('2'), b'stale': remote_file('3')}
    plan, report = make_plan(local, remote, None, Options({'delete': True}))[:2]
    assert report['removed'] == [b'stale'] and names(plan['remove']) == [b'stale']


def test_delete_keeps_a_directory_holding_an_excluded_path():
    """As rsync: what exclude protects below a directory the source lacks
    stays, so does the directory; the rest below it goes path by path.
    The excluded paths may come from fastsum (excluded_paths)."""
    local = {b'': {'kind': 'd', 'mode': 0o755}, b'a': local_file('1'), b'f': local_file('2')}
    remote = {b'': {'kind': 'd', 'mode': 0o755, 'uid': 0, 'gid': 0}, b'a': remote_file('1'),
              b'old': {'kind': 'd', 'mode': 0o755, 'uid': 0, 'gid': 0}, b'old/data.keep': remote_file('3'),
              b'old/junk': remote_file('4'), b'f': {'kind': 'd', 'mode': 0o755, 'uid': 0, 'gid': 0},
              b'f/x.keep': remote_file('5')}
    for given in (None, {b'old/data.keep', b'f/x.keep'}):
        opts = Options({'delete': True, 'exclude': ['*.keep']})
        opts.excluded_paths = given
        plan, report = make_plan(local, remote, None, opts)[:2]
        assert report['removed'] == [b'old/junk'] and names(plan['remove']) == [b'old/junk']


def test_the_tree_s_root_keeps_its_owner_when_it_is_there():
    """As builtin copy (differential.py, 'owner and group'): an existing
    root keeps its owner; the tree below gets the one asked."""
    local = {b'': {'kind': 'd', 'mode': 0o755}, b'a': local_file('1')}
    remote = {b'': {'kind': 'd', 'mode': 0o755, 'uid': 0, 'gid': 0}, b'a': remote_file('1', uid=0)}
    assert make_plan(local, remote, None, Options({'owner': 'x'}, owner_id=7))[1]['updated'] == [b'a']
