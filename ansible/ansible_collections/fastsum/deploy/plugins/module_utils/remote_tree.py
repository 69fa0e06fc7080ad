# -*- coding: utf-8 -*-
# Copyright: fastsum contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host's side of fastsum.deploy.copy: list a tree, and modes.

Standard library only: the same file runs inside the copy module (the
Python fallback, one module run) and as ``python3 -c`` through a raw
command where the host has fastsum. Every name travels as bytes (base64
on the wire), every file is reached through directory descriptors opened
with O_NOFOLLOW below the root, so a symlink inside the tree is reported
as a symlink and never followed out of it.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import errno
import grp
import hashlib
import os
import pwd
import re
import stat
from concurrent.futures import ThreadPoolExecutor

# Files above this size are hashed by the thread pool (hashlib releases the
# GIL on buffers above 2 KiB); smaller ones inline, where a thread costs
# more than the hash.
THREAD_MIN_SIZE = 256 * 1024
CHUNK = 1024 * 1024
DIR_FLAGS = os.O_RDONLY | getattr(os, 'O_DIRECTORY', 0) | getattr(os, 'O_NOFOLLOW', 0)
# O_NONBLOCK: a FIFO put where a file was listed is opened at once (and
# refused as not a regular file), never waited on for a writer.
FILE_FLAGS = os.O_RDONLY | getattr(os, 'O_NOFOLLOW', 0) | getattr(os, 'O_NONBLOCK', 0)
# The temporary names remote_apply.py writes under (a file, a link, a
# directory), with the writer's process id: one whose writer is gone was
# left by an interrupted run, and the next run removes it.
TMP_PREFIX = '.fastsum-deploy.'
# (the microseconds since 1970 in the name: 16 digits since 2001).
# A file's may end in its own extension (for validate).
_TMP_NAME = re.compile(br'^\.fastsum-deploy\.(\d+)\.\d{16,}\.(?:\d+(?:\.[^/]{1,32})?|link|dir)$', re.S)


def b64(data):
    return base64.b64encode(data).decode('ascii')


def unb64(text):
    return base64.b64decode(text.encode('ascii'))


def kind_of(mode):
    """One letter: f file, d directory, l symlink, o anything else."""
    if stat.S_ISREG(mode):
        return 'f'
    if stat.S_ISDIR(mode):
        return 'd'
    if stat.S_ISLNK(mode):
        return 'l'
    return 'o'


def resolve_owner(owner):
    """The uid of a user name or number, None when not given."""
    if owner is None or owner == '':
        return None
    try:
        return int(owner)
    except ValueError:
        return pwd.getpwnam(owner).pw_uid


def resolve_group(group):
    if group is None or group == '':
        return None
    try:
        return int(group)
    except ValueError:
        return grp.getgrnam(group).gr_gid


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


_CLAUSE = re.compile(r'^([ugoa]*)((?:[-+=][rwxXst]*)+)$')
_BITS = {
    'u': {'r': 0o400, 'w': 0o200, 'x': 0o100, 's': 0o4000, 't': 0},
    'g': {'r': 0o040, 'w': 0o020, 'x': 0o010, 's': 0o2000, 't': 0},
    'o': {'r': 0o004, 'w': 0o002, 'x': 0o001, 's': 0, 't': 0o1000},
}
_WHO_ALL = {'u': 0o4700, 'g': 0o2070, 'o': 0o1007}


def _clause_bits(who, perms, current, is_dir):
    mask = 0
    for person in who:
        for perm in perms:
            if perm == 'X':
                if is_dir or current & 0o111:
                    mask |= _BITS[person]['x']
            else:
                mask |= _BITS[person][perm]
    return mask


def mode_for(spec, current, is_dir=False):
    """The permission bits SPEC gives a file whose bits are CURRENT.

    SPEC: None (keep CURRENT), an int (the bits, as Ansible takes an int),
    a string of octal digits, or symbolic clauses (u+rwx,g=rx,o-w, X, s, t)
    as chmod and ansible.builtin.file take them. ValueError when invalid.
    """
    if spec is None:
        return current
    if isinstance(spec, int):
        return spec & 0o7777
    text = str(spec)
    if re.match(r'^0?[0-7]{1,4}$', text):
        return int(text, 8)
    mode = current & 0o7777
    for clause in text.split(','):
        match = _CLAUSE.match(clause)
        if not match:
            raise ValueError('bad symbolic permission for mode: %s' % text)
        who = match.group(1).replace('a', 'ugo') or 'ugo'
        for op, perms in re.findall(r'([-+=])([rwxXst]*)', match.group(2)):
            bits = _clause_bits(who, perms, mode, is_dir)
            if op == '+':
                mode |= bits
            elif op == '-':
                mode &= ~bits
            else:
                for person in set(who):
                    mode &= ~_WHO_ALL[person]
                mode |= bits
    return mode


def stale_temp(name):
    """Whether NAME (bytes) is a temporary name of remote_apply.py whose
    writer no longer runs on this host."""
    match = _TMP_NAME.match(name)
    if not match:
        return False
    try:
        os.kill(int(match.group(1)), 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):
        return False
    return False


def temp_name(name):
    """Whether NAME (bytes) is a temporary name of remote_apply.py (its
    writer running or not)."""
    return _TMP_NAME.match(name) is not None


def open_under(root, rel):
    """(descriptor of the directory holding REL under ROOT, REL's last
    name): every component below ROOT opened with O_NOFOLLOW, so a
    directory swapped for a symlink is never passed through."""
    return descend(os.open(root, os.O_RDONLY | getattr(os, 'O_DIRECTORY', 0)), rel)


def descend(fd, rel):
    """open_under from the directory descriptor FD (taken: closed, or
    returned as the answer's descriptor)."""
    parts = rel.split(b'/')
    try:
        for part in parts[:-1]:
            sub = os.open(part, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = sub
    except OSError:
        os.close(fd)
        raise
    return fd, parts[-1]


def hash_at(dir_fd, name, algorithm):
    """Hex digest of the regular file NAME in DIR_FD, never through a link,
    never blocking (OSError when NAME is not a regular file)."""
    fd = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, 'not a regular file')
        digest = hashlib.new(algorithm)
        while True:
            block = os.read(fd, CHUNK)
            if not block:
                break
            digest.update(block)
        return digest.hexdigest()
    finally:
        os.close(fd)


def _hash_path(path, algorithm):
    """Hex digest of the regular file at PATH, never through a link."""
    return hash_at(None, path, algorithm)


def _walk(dir_fd, prefix, out, big, algorithm, errors, stale):
    for name in sorted(os.listdir(dir_fd)):
        raw = os.fsencode(name)
        rel = prefix + raw
        try:
            st = os.lstat(name, dir_fd=dir_fd)
        except OSError as err:
            errors.append([b64(rel), err.strerror])
            continue
        kind = kind_of(st.st_mode)
        if stale_temp(raw) and kind != 'd':
            stale.append(b64(rel))
        entry = [b64(rel), kind, stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, None, None, st.st_size]
        out.append(entry)
        if kind == 'l':
            entry[6] = b64(os.fsencode(os.readlink(name, dir_fd=dir_fd)))
        elif kind == 'f' and algorithm:
            if st.st_size >= THREAD_MIN_SIZE:
                big.append((entry, rel))
            else:
                try:
                    entry[5] = hash_at(dir_fd, name, algorithm)
                except OSError as err:
                    errors.append([b64(rel), err.strerror])
        elif kind == 'd':
            try:
                sub = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
            except OSError as err:
                errors.append([b64(rel), err.strerror])
                continue
            try:
                if stale_temp(raw) and not os.listdir(sub):
                    # A directory made under a temporary name is renamed
                    # before anything is put in it: one that holds
                    # something is not this module's to remove.
                    stale.append(b64(rel))
                _walk(sub, rel + b'/', out, big, algorithm, errors, stale)
            finally:
                os.close(sub)


def _hash_big(root, big, algorithm, errors):
    if not big:
        return

    def one(item):
        entry, rel = item
        try:
            fd, name = open_under(root, rel)
            try:
                entry[5] = hash_at(fd, name, algorithm)
            finally:
                os.close(fd)
        except OSError as err:
            errors.append([b64(rel), err.strerror])

    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 2)) as pool:
        list(pool.map(one, big))


def _root_of(request):
    """The path the tree goes to, and whether it names a directory there."""
    dest = unb64(request['dest'])
    name = unb64(request['name']) if request.get('name') else None
    if name is not None:
        # A single file: into DEST when DEST is a directory (or ends in /).
        if dest.endswith(b'/') or os.path.isdir(dest):
            dest = os.path.join(dest, name)
        if request.get('follow') and os.path.islink(dest):
            dest = os.path.realpath(dest)
    return dest


def list_tree(request):
    """What the host has at the request's destination (see README)."""
    root = _root_of(request)
    algorithm = request.get('algorithm')
    answer = {'root': b64(root), 'entries': [], 'errors': [], 'stale': [], 'umask': current_umask(),
              'uid': os.geteuid(), 'gid': os.getegid(), 'inside': bool(request.get('inside'))}
    for key, resolve in (('owner', resolve_owner), ('group', resolve_group)):
        try:
            answer[key + '_id'] = resolve(request.get(key))
        except KeyError:
            answer['errors'].append(['', 'no such %s: %s' % (key, request.get(key))])
    try:
        # A single file's own name, and a tree's root that is a name inside
        # dest (src without a trailing /), are not followed: a symlink
        # there is reported as one (and refused), never written through.
        st = os.lstat(root) if request.get('name') or request.get('inside') else os.stat(root)
    except OSError:
        # Missing, or a link that leads nowhere (reported as a link: the
        # tree is not made through it).
        answer['root_kind'] = 'l' if os.path.islink(root) else 'm'
        return answer
    answer['root_kind'] = kind_of(st.st_mode)
    top = [b64(b''), answer['root_kind'], stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, None, None,
           st.st_size]
    answer['entries'].append(top)
    if answer['root_kind'] == 'f' and algorithm:
        try:
            top[5] = _hash_path(root, algorithm)
        except OSError as err:
            answer['errors'].append([b64(b''), err.strerror])
    elif answer['root_kind'] == 'l':
        top[6] = b64(os.readlink(root))
    elif answer['root_kind'] == 'd' and not request.get('name'):
        big = []
        fd = os.open(root, os.O_RDONLY | getattr(os, 'O_DIRECTORY', 0))
        try:
            _walk(fd, b'', answer['entries'], big, algorithm, answer['errors'], answer['stale'])
        finally:
            os.close(fd)
        _hash_big(root, big, algorithm, answer['errors'])
    return answer


def _peek_one(root, rel, limit):
    """What diff mode shows of the file REL under ROOT before it is
    replaced, as builtin copy's diff peek decides it: [state, base64 bytes]
    with state absent (or not a regular file), binary (a NUL in its first
    8 KiB), larger (above LIMIT bytes) or text. Never through a link."""
    try:
        fd, name = open_under(root, rel)
    except OSError:
        return ['absent', None]
    try:
        st = os.lstat(name, dir_fd=fd)
        if not stat.S_ISREG(st.st_mode):
            return ['absent', None]
        handle = os.open(name, FILE_FLAGS, dir_fd=fd)
        try:
            if not stat.S_ISREG(os.fstat(handle).st_mode):
                return ['absent', None]
            data = os.read(handle, 8192)
            if b'\0' in data:
                return ['binary', None]
            if st.st_size and 0 < limit < st.st_size:
                return ['larger', None]
            while True:
                block = os.read(handle, CHUNK)
                if not block:
                    break
                data += block
            return ['text', b64(data)]
        finally:
            os.close(handle)
    except OSError:
        return ['absent', None]
    finally:
        os.close(fd)


def peek_files(request):
    """Diff mode's look at the files about to be replaced: {'files': [...]}
    in the order of request['paths'] (see _peek_one)."""
    root = unb64(request['root'])
    return {'files': [_peek_one(root, unb64(rel), int(request.get('max', 0))) for rel in request['paths']]}
