# -*- coding: utf-8 -*-
# Copyright: fastsum contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host's side of fastsum.deploy.copy: put an archive's files in place.

The archive (plain tar, written by the controller) holds ``plan.json``
first, then the files to write as members ``f0``, ``f1``, ... in the plan's
order: it is read as a stream, each file written while its member passes.
Every directory below the root is opened with O_NOFOLLOW, one component at
a time, so a symlink on the host is replaced (as rsync does), never
followed; each file is written under a fresh temporary name beside its
place, given its owner and mode there, and renamed over its place in one
step: a file in place is always the old one or the new one, whole.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import errno
import json
import os
import shlex
import stat
import subprocess
import sys
import tarfile
import time

from ansible_collections.fastsum.deploy.plugins.module_utils.remote_tree import (
    DIR_FLAGS, TMP_PREFIX, b64, current_umask, descend, mode_for, resolve_group, resolve_owner, unb64)


class Placer:
    """Applies one plan under ROOT; collects what was done and what failed."""

    def __init__(self, plan):
        self.plan = plan
        self.root = unb64(plan['root'])
        self.uid = resolve_owner(plan.get('owner'))
        self.gid = resolve_group(plan.get('group'))
        self.umask = current_umask()
        self.done = {'created': [], 'updated': [], 'removed': [], 'attributes': [], 'backups': []}
        self.failed = []
        self.root_fd = None

    # -- directories ---------------------------------------------------
    def open_parent(self, rel):
        """(descriptor of REL's directory, REL's last name), never via a link."""
        return descend(os.dup(self.root_fd), rel)

    def make_dir(self, rel, mode):
        fd, name = self.open_parent(rel)
        try:
            try:
                st = os.lstat(name, dir_fd=fd)
            except FileNotFoundError:
                st = None
            if st is not None and stat.S_ISDIR(st.st_mode):
                return
            # Made under a temporary name and given its owner and mode
            # there, then renamed into place: an interrupted run leaves no
            # directory with the wrong mode (directory_mode is for new
            # directories only, so the next run would not mend it), only
            # a temporary one that the next run removes.
            tmp = '%s%d.%d.dir' % (TMP_PREFIX, os.getpid(), int(time.time() * 1e6))
            os.mkdir(tmp, 0o700, dir_fd=fd)
            try:
                self.set_attributes(fd, tmp, mode, 0o777 & ~self.umask, True, fresh=True)
                if st is not None:
                    # A file or a symlink where a directory goes: the thing
                    # itself goes (never what a link points to).
                    os.unlink(name, dir_fd=fd)
                os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
            except OSError as err:
                os.rmdir(tmp, dir_fd=fd)
                if err.errno in (errno.ENOTEMPTY, errno.EEXIST) and \
                        stat.S_ISDIR(os.lstat(name, dir_fd=fd).st_mode):
                    return  # another run made it (and is filling it) meanwhile
                raise
        finally:
            os.close(fd)

    def set_attributes(self, fd, name, spec, current, is_dir, fresh=False):
        if self.uid is not None or self.gid is not None:
            os.chown(name, -1 if self.uid is None else self.uid, -1 if self.gid is None else self.gid,
                     dir_fd=fd, follow_symlinks=False)
        wanted = mode_for(spec, current, is_dir)
        if fresh or wanted != current or spec is not None:
            os.chmod(name, wanted, dir_fd=fd)

    # -- files ---------------------------------------------------------
    def temp_in(self, fd, suffix=b''):
        """A fresh temporary name in FD (ending in SUFFIX, the file's own
        extension, for a validate command that reads it), opened."""
        for attempt in range(100):
            name = os.fsencode('%s%d.%d.%d' % (TMP_PREFIX, os.getpid(), int(time.time() * 1e6), attempt)) + suffix
            try:
                return name, os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, 'O_NOFOLLOW', 0),
                                     0o600, dir_fd=fd)
            except FileExistsError:
                continue
        raise OSError('no temporary name could be made')

    def write_file(self, item, stream):
        rel = unb64(item['path'])
        fd, name = self.open_parent(rel)
        tmp = None
        try:
            try:
                old = os.lstat(name, dir_fd=fd)
            except FileNotFoundError:
                old = None
            if old is not None and stat.S_ISDIR(old.st_mode):
                raise OSError('a directory is there')
            tmp, out = self.temp_in(fd, os.path.splitext(name)[1][:32] if self.plan.get('validate') else b'')
            try:
                write_all(out, stream)
            finally:
                os.close(out)
            existing = old is not None and stat.S_ISREG(old.st_mode)
            if existing and self.uid is None and self.gid is None:
                try:
                    os.chown(tmp, old.st_uid, old.st_gid, dir_fd=fd)
                except OSError:
                    pass
            current = stat.S_IMODE(old.st_mode) if existing else 0o666 & ~self.umask
            # The temporary file is 0600 until here: it always gets its mode.
            self.set_attributes(fd, tmp, item.get('mode'), current, False, fresh=True)
            self.validate(os.path.join(self.root, os.path.dirname(rel), tmp))
            if existing and item.get('backup'):
                backup = '%s.%d.%s~' % (os.fsdecode(name), os.getpid(),
                                        time.strftime('%Y-%m-%d@%H:%M:%S', time.localtime()))
                os.link(name, backup, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)
                self.done['backups'].append(b64(os.path.join(os.path.dirname(rel), os.fsencode(backup))))
            os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
            tmp = None
            self.done['updated' if old is not None else 'created'].append(item['path'])
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp, dir_fd=fd)
                except OSError:
                    pass
            os.close(fd)

    def validate(self, path):
        """Run the plan's validate command on the temporary file at PATH
        (its whole path, as builtin copy gives one: a validator that runs
        a child, or sudo, reads it too)."""
        command = self.plan.get('validate')
        if not command:
            return
        if '%s' not in command:
            raise OSError('validate must contain %%s: %s' % command)
        path = os.fsdecode(path)
        args = [path if word == '%s' else word.replace('%s', path) for word in shlex.split(command)]
        proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
        if proc.returncode != 0:
            raise OSError('failed to validate: %s' % proc.stdout.decode('utf-8', 'replace').strip())

    def write_link(self, item):
        rel = unb64(item['path'])
        fd, name = self.open_parent(rel)
        try:
            tmp = '%s%d.%d.link' % (TMP_PREFIX, os.getpid(), int(time.time() * 1e6))
            os.symlink(unb64(item['target']), tmp, dir_fd=fd)
            try:
                old = os.lstat(name, dir_fd=fd)
            except FileNotFoundError:
                old = None
            if old is not None and stat.S_ISDIR(old.st_mode):
                os.unlink(tmp, dir_fd=fd)
                raise OSError('a directory is there')
            os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
            self.done['updated' if old is not None else 'created'].append(item['path'])
        finally:
            os.close(fd)

    def fix_attributes(self, item):
        rel = unb64(item['path'])
        fd, name = self.open_parent(rel) if rel else (os.dup(self.root_fd), '.')
        try:
            st = os.lstat(name, dir_fd=fd)
            self.set_attributes(fd, name, item.get('mode'), stat.S_IMODE(st.st_mode), stat.S_ISDIR(st.st_mode))
            self.done['attributes'].append(item['path'])
        finally:
            os.close(fd)

    def remove(self, rel):
        """Remove REL; already gone (another run removed it) is done."""
        try:
            fd, name = self.open_parent(rel)
        except FileNotFoundError:
            return
        try:
            remove_at(fd, name)
        finally:
            os.close(fd)

    # -- the whole plan ------------------------------------------------
    def guard(self, what, path, step, *args):
        """Run STEP; a failure is kept for the answer. Whether it ran."""
        try:
            step(*args)
        except (OSError, ValueError) as err:
            self.failed.append([path, '%s: %s' % (what, getattr(err, 'strerror', None) or err)])
            return False
        return True

    def open_root(self):
        if self.plan.get('single'):
            parent, name = os.path.split(self.root)
            self.root = parent or b'.'
            for item in self.plan.get('files', []) + self.plan.get('attributes', []):
                item['path'] = b64(name) if unb64(item['path']) == b'' else item['path']
        if not os.path.isdir(self.root):
            missing, path = [], self.root.rstrip(b'/') or b'/'
            while path and not os.path.isdir(path):
                missing.append(path)
                path = os.path.dirname(path)
            os.makedirs(self.root)
            if not self.plan.get('single'):
                # Each directory this run makes (the root and the parents it
                # lacked) gets the tree's owner and group, as builtin copy
                # gives them, then its mode.
                for made in reversed(missing):
                    if self.uid is not None or self.gid is not None:
                        os.chown(made, -1 if self.uid is None else self.uid, -1 if self.gid is None else self.gid,
                                 follow_symlinks=False)
                    st = os.stat(made)
                    os.chmod(made, mode_for(self.plan.get('root_mode'), stat.S_IMODE(st.st_mode), True))
        self.root_fd = os.open(self.root, DIR_FLAGS if self.plan.get('inside') else
                               os.O_RDONLY | getattr(os, 'O_DIRECTORY', 0))

    def run(self, members):
        """Apply the plan; MEMBERS yields each file's bytes in plan order."""
        self.open_root()
        try:
            for rel in self.plan.get('remove', []):
                if self.guard('could not remove', rel, self.remove, unb64(rel)):
                    self.done['removed'].append(rel)
            for item in self.plan.get('mkdirs', []):
                if self.guard('could not make the directory', item['path'], self.make_dir,
                              unb64(item['path']), item.get('mode')):
                    self.done['created'].append(item['path'])
            for item in self.plan.get('files', []):
                stream = next(members, None)
                if stream is None:
                    self.failed.append([item['path'], 'the archive ended before it'])
                    continue
                self.guard('could not write', item['path'], self.write_file, item, stream)
            for item in self.plan.get('links', []):
                self.guard('could not make the link', item['path'], self.write_link, item)
            for item in self.plan.get('attributes', []):
                self.guard('could not set owner or mode', item['path'], self.fix_attributes, item)
        finally:
            os.close(self.root_fd)
        return {'done': self.done, 'failed': self.failed}


def write_all(out, stream):
    """Every byte of STREAM to OUT. write(2) may write part of a block (a
    full disk writes what fits and returns its count): the rest is written
    again, so that a full disk raises ENOSPC instead of leaving the file
    short."""
    while True:
        block = stream.read(1024 * 1024)
        if not block:
            return
        view = memoryview(block)
        while view:
            view = view[os.write(out, view):]


def remove_at(fd, name):
    """Remove NAME in FD: a file, a link (not what it points to), or a tree.
    What is already gone (removed by another run meanwhile) is done."""
    try:
        st = os.lstat(name, dir_fd=fd)
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(name, dir_fd=fd)
            return
        sub = os.open(name, DIR_FLAGS, dir_fd=fd)
        try:
            for entry in os.listdir(sub):
                remove_at(sub, entry)
        finally:
            os.close(sub)
        os.rmdir(name, dir_fd=fd)
    except FileNotFoundError:
        return


def apply_archive(path):
    """Apply the archive at PATH, - for standard input (plan.json first,
    then the files)."""
    stream = sys.stdin.buffer if path == '-' else None
    with tarfile.open(None if stream else path, 'r|', fileobj=stream) as archive:
        first = archive.next()
        if first is None or first.name != 'plan.json':
            raise ValueError('%s: not an archive of fastsum.deploy.copy' % path)
        plan = json.loads(archive.extractfile(first).read().decode('utf-8'))

        def members():
            while True:
                member = archive.next()
                if member is None:
                    return
                yield archive.extractfile(member)

        return Placer(plan).run(members())
