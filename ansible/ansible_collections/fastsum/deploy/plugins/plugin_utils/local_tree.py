# -*- coding: utf-8 -*-
# Copyright: fastsum contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controller's side of fastsum.deploy.copy: the source tree, by fastsum.

The source is hashed by the ``fastsum`` program (``-r --json --dirs``),
the same program that makes the host's listing command and compares it
(``fastsum diff --plan --remote-listing``): one implementation of walking,
excluding (gitignore syntax) and comparing, and the digests of its cache.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import io
import json
import os
import shutil
import stat
import subprocess
import tarfile
import tempfile

FASTSUM_ALGORITHMS = ('md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512', 'blake2b', 'blake3', 'xxh128')
HASHLIB_ALGORITHMS = ('md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512', 'blake2b')


class SourceError(Exception):
    """The source could not be listed or hashed; the message says why."""


def fastsum_program(option):
    """The controller's fastsum: the option, $FASTSUM, or fastsum on PATH."""
    program = option or os.environ.get('FASTSUM') or shutil.which('fastsum')
    if not program:
        raise SourceError('the fastsum program is not on the controller: install it (cargo install --path '
                          'crates/fastsum-cli) or set fastsum_controller or $FASTSUM')
    return program


def run_fastsum(program, args, cwd=None):
    """(exit status, stdout bytes, stderr text); no shell is involved."""
    proc = subprocess.run([program] + list(args), cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, check=False)
    return proc.returncode, proc.stdout, proc.stderr.decode('utf-8', 'replace')


def record_path(record):
    """The exact bytes of a JSON record's path (path_base64 when not UTF-8)."""
    if 'path_base64' in record:
        return base64.b64decode(record['path_base64'])
    return record['path'].encode('utf-8')


def filter_args(follow, excludes):
    args = ['-L'] if follow else []
    return args + ['--exclude=%s' % glob for glob in excludes]


def list_source(program, src, algorithm, follow, excludes, skipped=None):
    """Every entry under the directory SRC: {rel: entry}, rel bytes, b'' the root.

    An entry: {'kind': f|d|l, 'mode', 'digest' (files), 'target' (links),
    'path' (the local path)}. SourceError when anything could not be read.
    A FIFO, socket or device is not copied: (rel, why) in SKIPPED.
    """
    status, out, err = run_fastsum(program, ['-r', '--json', '--dirs', '--no-progress', '--cache', '-a', algorithm]
                                   + filter_args(follow, excludes) + ['--', '.'], cwd=src)
    if status not in (0, 1) or not out:
        raise SourceError('fastsum could not list %s: %s' % (src, err.strip()))
    entries, problems = {}, []
    for line in out.splitlines():
        record = json.loads(line)
        rel = record_path(record)
        rel = rel[2:] if rel.startswith(b'./') else (b'' if rel in (b'.', b'./') else rel)
        if 'error' in record:
            problems.append('%s: %s' % (os.path.join(src, rel.decode('utf-8', 'replace')), record['error']))
            continue
        local = os.path.join(os.fsencode(src), rel)
        if 'directory_digest' in record:
            rel = rel.rstrip(b'/')
            entries[rel] = {'kind': 'd', 'mode': _mode(local, True), 'path': local}
        elif 'digest' in record:
            entries[rel] = {'kind': 'f', 'mode': _mode(local, follow), 'digest': record['digest'],
                            'path': local, 'size': record.get('size', 0)}
        elif record.get('skipped') == 'symbolic link':
            entries[rel] = {'kind': 'l', 'mode': 0o777, 'target': os.readlink(local), 'path': local}
        elif record.get('skipped') and skipped is not None:
            skipped.append((rel, record['skipped']))
    if problems:
        raise SourceError('; '.join(problems))
    return entries


def excluded_by_fastsum(program, candidates, excludes):
    """The paths of CANDIDATES ({rel: is_dir}, the host's) that EXCLUDES
    leave out, as the controller's fastsum decides it (the same matcher
    that left them out of the source): the names are made, empty, in a
    temporary directory and walked with the excludes; what the walk does
    not report is excluded."""
    if not candidates or not excludes:
        return set()
    # A short root: the host's paths are made below it, and one near the
    # host's PATH_MAX must still fit.
    skeleton = tempfile.mkdtemp(prefix='fd.')
    try:
        root = os.fsencode(skeleton)
        try:
            for rel in sorted(candidates):
                path = os.path.join(root, rel)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                if candidates[rel]:
                    os.makedirs(path, exist_ok=True)
                elif not os.path.isdir(path):
                    open(path, 'wb').close()
        except OSError as err:
            raise SourceError('the excludes could not be matched against the host\'s paths on the controller '
                              '(%s), nothing was changed' % err)
        status, out, err = run_fastsum(program, ['-r', '--json', '--dirs', '--no-progress', '-a', 'md5']
                                       + filter_args(False, excludes) + ['--', '.'], cwd=skeleton)
        if status != 0:
            raise SourceError('fastsum could not match the excludes: %s' % err.strip())
        seen = set()
        for line in out.splitlines():
            rel = record_path(json.loads(line))
            seen.add(rel[2:].rstrip(b'/') if rel.startswith(b'./') else rel.rstrip(b'/'))
        return set(rel for rel in candidates if rel not in seen)
    finally:
        shutil.rmtree(skeleton, ignore_errors=True)


def hash_file(program, path, algorithm):
    """One local file's digest, by fastsum."""
    status, out, err = run_fastsum(program, ['--json', '--no-progress', '-a', algorithm, '--', path])
    record = json.loads(out.splitlines()[0]) if out else {}
    if status != 0 or 'digest' not in record:
        raise SourceError('%s: %s' % (path, record.get('error') or err.strip()))
    return record['digest']


def _mode(path, follow):
    st = os.stat(path) if follow else os.lstat(path)
    return stat.S_IMODE(st.st_mode)


def remote_plan(program, listing_text, dest_root, src, algorithm, follow, excludes):
    """`fastsum diff --plan` of the host's listing against SRC: the set of
    relative paths (bytes) the host lacks or holds other bytes of."""
    label = b'ansible:' + dest_root
    args = ['diff', '--plan', '--no-progress', '--cache', '-a', algorithm, '--remote-listing', '-'] + \
        filter_args(follow, excludes) + ['--', label, os.fsencode(src)]
    proc = subprocess.run([program] + args, input=listing_text, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, check=False)
    err = proc.stderr.decode('utf-8', 'replace').strip()
    if proc.returncode > 1 or not proc.stdout:
        raise SourceError('fastsum diff could not compare with the host: %s' % err)
    plan = json.loads(proc.stdout)
    if not plan.get('complete'):
        why = '; '.join('%s: %s' % (p.get('path'), p.get('error')) for p in plan.get('problems', []))
        raise SourceError('the listing of the host is incomplete, nothing was sent: %s %s' % (why, err))
    send = set()
    for entry in plan.get('send', []):
        send.add(record_path(entry))
    for entry in plan.get('moved', []):
        send.add(base64.b64decode(entry['to_base64']) if 'to_base64' in entry else entry['to'].encode('utf-8'))
    return send


def build_archive(path, plan, files):
    """A tar at PATH: plan.json, then each of FILES (local paths) as f0, f1, ..."""
    with tarfile.open(path, 'w', format=tarfile.PAX_FORMAT) as archive:
        data = json.dumps(plan).encode('utf-8')
        info = tarfile.TarInfo('plan.json')
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
        for number, local in enumerate(files):
            _add_member(archive, 'f%d' % number, local)


def _add_member(archive, name, local):
    """LOCAL's bytes as member NAME; SourceError when the file changes
    while it is read (a tar member's size is written before its bytes: a
    file that grew would go cut, one that shrank would break the archive)."""
    changed = '%s changed while it was being archived: nothing was sent (run the task again)' \
        % os.fsdecode(local)
    with open(local, 'rb') as handle:
        before = os.fstat(handle.fileno())
        info = tarfile.TarInfo(name)
        info.size = before.st_size
        info.mode = 0o600
        try:
            archive.addfile(info, handle)
        except OSError as err:
            raise SourceError('%s (%s)' % (changed, err))
        more = handle.read(1)
        after = os.fstat(handle.fileno())
    if more or (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
        raise SourceError(changed)
