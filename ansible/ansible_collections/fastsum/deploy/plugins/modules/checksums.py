#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: fastsum contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: checksums
short_description: Digests of many remote files in one module run
version_added: 0.1.0
author: fastsum contributors (@fastsum)
description:
  - What M(ansible.builtin.stat)'s C(checksum) gives for one file, for many files at once, in one module
    run, for the paths in O(paths), or every regular file under O(path) with O(recurse=true).
  - Python's C(hashlib) computes them on the host (files above 256 KiB on a thread pool); V(blake3) and
    V(xxh128) are computed by C(fastsum) on the host (on its C(PATH), or O(fastsum_path)).
  - A path that is not a regular file, or cannot be read, gets an entry in RV(errors), not a digest;
    symlinks met inside a tree are not followed (as C(find -P)), nor is a path in O(paths) that is a
    symlink (as M(ansible.builtin.stat) gives no checksum of a link); a FIFO is never waited on.
options:
  paths:
    description: The files to hash.
    type: list
    elements: path
  path:
    description: A file, or with O(recurse=true) a directory whose regular files are hashed.
    type: path
  recurse:
    description: Hash every regular file under O(path).
    type: bool
    default: false
  algorithm:
    description: The digest.
    type: str
    default: sha1
    choices: [md5, sha1, sha224, sha256, sha384, sha512, blake2b, blake3, xxh128]
  fastsum_path:
    description: The C(fastsum) program on the host, for V(blake3) and V(xxh128).
    type: str
attributes:
  check_mode:
    description: Reads only, so it runs the same in check mode.
    support: full
  diff_mode:
    description: Nothing to show.
    support: none
  platform:
    description: POSIX hosts.
    support: full
    platforms: posix
seealso:
  - module: ansible.builtin.stat
  - module: fastsum.deploy.copy
'''

EXAMPLES = r'''
- name: Digests of a few files
  fastsum.deploy.checksums:
    paths: [/etc/passwd, /etc/group]
    algorithm: sha256
  register: sums

- name: Every file of a tree
  fastsum.deploy.checksums:
    path: /srv/www
    recurse: true
  register: tree
'''

RETURN = r'''
checksums:
  description:
    - Path to lower-case hex digest, for each regular file read.
    - A byte of a name that is not UTF-8 is written C(\\xNN).
  returned: always
  type: dict
  sample: {"/etc/passwd": "1f0c4f..."}
errors:
  description: Path to why it has no digest (missing, not a regular file, unreadable).
  returned: always
  type: dict
algorithm:
  description: The algorithm used.
  returned: always
  type: str
'''

import json
import os
import stat

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_bytes, to_text
from ansible_collections.fastsum.deploy.plugins.module_utils.remote_tree import THREAD_MIN_SIZE, _hash_path

HASHLIB = ('md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512', 'blake2b')


def tree_files(root):
    """Every regular file under ROOT (bytes), symlinks not followed."""
    found = []
    for top, dirs, files in os.walk(root):
        for name in files:
            path = os.path.join(top, name)
            if stat.S_ISREG(os.lstat(path).st_mode):
                found.append(path)
    return sorted(found)


def by_hashlib(paths, algorithm, sums, errors):
    from concurrent.futures import ThreadPoolExecutor

    def one(path):
        try:
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                return path, None, 'a symbolic link (not followed)'
            if not stat.S_ISREG(st.st_mode):
                return path, None, 'not a regular file'
            return path, _hash_path(path, algorithm), None
        except OSError as err:
            return path, None, err.strerror

    big = [p for p in paths if os.path.isfile(p) and os.path.getsize(p) >= THREAD_MIN_SIZE]
    small = [p for p in paths if p not in set(big)]
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 2)) as pool:
        results = [one(p) for p in small] + list(pool.map(one, big))
    for path, digest, why in results:
        if digest is not None:
            sums[path] = digest
        else:
            errors[path] = why


def by_fastsum(module, program, paths, algorithm, sums, errors):
    # fastsum reads a FIFO operand as md5sum does (and waits for a writer),
    # and follows a link operand: only regular files go to it.
    regular = []
    for path in paths:
        try:
            st = os.lstat(path)
        except OSError as err:
            errors[path] = err.strerror
            continue
        if stat.S_ISLNK(st.st_mode):
            errors[path] = 'a symbolic link (not followed)'
        elif not stat.S_ISREG(st.st_mode):
            errors[path] = 'not a regular file'
        else:
            regular.append(path)
    paths = regular
    if not paths:
        return
    rc, out, err = module.run_command([program, '--json', '--no-progress', '-a', algorithm, '--'] + paths,
                                      encoding=None)
    for line in out.splitlines():
        record = json.loads(line)
        path = to_bytes(record['path'], errors='surrogate_or_strict')
        if 'path_base64' in record:
            import base64
            path = base64.b64decode(record['path_base64'])
        if 'digest' in record:
            sums[path] = record['digest']
        else:
            errors[path] = record.get('error') or record.get('skipped') or 'not hashed'
    for path in paths:
        if path not in sums and path not in errors:
            errors[path] = to_text(err, errors='replace').strip() or 'not hashed'


def main():
    module = AnsibleModule(
        argument_spec=dict(
            paths=dict(type='list', elements='path'),
            path=dict(type='path'),
            recurse=dict(type='bool', default=False),
            algorithm=dict(type='str', default='sha1', choices=list(HASHLIB) + ['blake3', 'xxh128']),
            fastsum_path=dict(type='str'),
        ),
        mutually_exclusive=[('paths', 'path')],
        required_one_of=[('paths', 'path')],
        supports_check_mode=True,
    )
    algorithm = module.params['algorithm']
    if module.params['path'] is not None:
        root = to_bytes(module.params['path'], errors='surrogate_or_strict')
        paths = tree_files(root) if module.params['recurse'] and os.path.isdir(root) else [root]
    else:
        paths = [to_bytes(p, errors='surrogate_or_strict') for p in module.params['paths']]
    sums, errors = {}, {}
    if algorithm in HASHLIB:
        by_hashlib(paths, algorithm, sums, errors)
    else:
        program = module.params['fastsum_path'] or module.get_bin_path('fastsum')
        if not program:
            module.fail_json(msg='algorithm %s needs fastsum on the host (fastsum_path)' % algorithm)
        by_fastsum(module, program, paths, algorithm, sums, errors)
    # Two paths whose names read alike as text (b'a\\xff', not UTF-8, and
    # 'a\\\\xff') get no digest rather than one another's.
    count = {}
    for path in set(sums) | set(errors):
        count[shown(path)] = count.get(shown(path), 0) + 1
    texts = dict((shown(k), v) for k, v in errors.items())
    texts.update((shown(k), 'two paths read as this name (one of them is not UTF-8): ask for each alone')
                 for k in set(sums) | set(errors) if count[shown(k)] > 1)
    module.exit_json(changed=False, algorithm=algorithm, errors=texts,
                     checksums=dict((shown(k), v) for k, v in sums.items() if count[shown(k)] == 1))


def shown(path):
    """A path as text: bytes that are not UTF-8 as \\xNN (JSON carries text only)."""
    return path.decode('utf-8', 'backslashreplace')


if __name__ == '__main__':
    main()
