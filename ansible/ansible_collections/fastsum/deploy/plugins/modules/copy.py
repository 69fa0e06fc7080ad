#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: fastsum contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
module: copy
short_description: Copy a file or a directory tree to hosts, sending only what changed
version_added: 0.1.0
author: fastsum contributors (@fastsum)
description:
  - The arguments, results and behaviour of M(ansible.builtin.copy) for a O(src) on the controller
    that is a file or a directory, in about three remote operations whatever the number of files,
    where M(ansible.builtin.copy) needs six to eight a file.
  - The controller hashes O(src) with the C(fastsum) program and compares it with one listing of the
    host's tree. Where the host has C(fastsum) (on its C(PATH), or O(fastsum_path)), the listing and the
    unpacking are raw commands through the connection, with C(fastsum diff --plan) deciding what to
    send; otherwise one run of this module lists and hashes the tree with Python's C(hashlib).
  - The files that differ travel in one tar archive through the connection's C(put_file); each is
    written under a temporary name beside its place and renamed into place, so a file is always the
    old one or the new one, whole.
  - A symlink on the host inside the destination is never followed; where the source has a file or a
    directory, the link itself is replaced (as C(rsync) does).
  - The deliberate differences from M(ansible.builtin.copy) are listed in the collection's README.
options:
  src:
    description:
      - Local path to a file or a directory to copy. A directory is copied recursively; with a
        trailing C(/) only its contents are copied into O(dest), as C(rsync) does. Required.
      - Relative paths are looked up in the role's or playbook's C(files) directory.
    type: path
  dest:
    description:
      - Remote absolute path where the file or the tree goes. For a directory O(src), a directory.
        Required.
    type: path
  mode:
    description:
      - The permissions of the files written or already in place, octal (V('0644'), V('01777'))
        or symbolic (V('u=rw,g=r,o=r'), V('u+rwx,g-w')), or V(preserve) for each source file's mode.
      - When not given, a new file gets the host's default (0666 less the umask) and a replaced
        file keeps its mode, as M(ansible.builtin.copy) does.
    type: raw
  directory_mode:
    description:
      - The permissions of directories this task creates; directories already on the host are left
        as they are (M(ansible.builtin.copy) sets them on every run, unlike its documentation).
    type: raw
  owner:
    description: The user that owns the files and directories of the tree (name or uid).
    type: str
  group:
    description: The group that owns the files and directories of the tree (name or gid).
    type: str
  force:
    description: When V(false), a file is only sent if nothing is at its place on the host.
    type: bool
    default: true
  backup:
    description:
      - Keep the file being replaced as C(NAME.PID.YYYY-MM-DD@HH:MM:SS~) beside it (a hard link to
        the old bytes), as M(ansible.builtin.copy) names it.
    type: bool
    default: false
  follow:
    description:
      - For a file O(src), when O(dest) is a symlink on the host, write the file it points to
        instead of replacing the link. Links inside a directory destination are never followed.
    type: bool
    default: false
  local_follow:
    description:
      - Follow symlinks in O(src) (send what they point to). With V(false) they are made symlinks on
        the host with the same target.
    type: bool
    default: true
  validate:
    description:
      - A command to run on each file's temporary copy before it is moved into place (every file
        sent, for a directory O(src), as M(ansible.builtin.copy) runs it on each);
        C(%s) stands for its path. A file is not put in place when the command fails, and the task fails.
    type: str
  remote_src:
    description:
      - V(true) (a source on the host) hands the whole task to M(ansible.builtin.copy), which does it
        its own way; O(delete) and O(exclude) are refused with it.
    type: bool
    default: false
  delete:
    description:
      - For a directory O(src), remove what the destination has and O(src) lacks (files, links,
        directories), except what O(exclude) matches, as C(ansible.posix.synchronize)'s C(delete).
    type: bool
    default: false
  exclude:
    description:
      - Paths to leave alone on both sides, gitignore syntax (V('*.tmp'), V('/build/'), V('**/cache')).
    type: list
    elements: str
    default: []
  checksum_algorithm:
    description:
      - The digest that compares the files. V(blake3) and V(xxh128) need C(fastsum) on the host;
        the others come from Python's C(hashlib) there otherwise.
    type: str
    default: sha1
    choices: [md5, sha1, sha224, sha256, sha384, sha512, blake2b, blake3, xxh128]
  fastsum_path:
    description:
      - The C(fastsum) program on the host. Default C(fastsum) on the host's C(PATH); where there is
        none, the module's Python fallback runs.
    type: str
  fastsum_controller:
    description:
      - The C(fastsum) program on the controller. Default the environment's C(FASTSUM), else
        C(fastsum) on C(PATH).
    type: str
  use_fastsum:
    description:
      - V(auto) uses C(fastsum) on the host when it is there; V(never) always runs the Python fallback.
    type: str
    default: auto
    choices: [auto, never]
attributes:
  check_mode:
    description: Reports what would change (the same lists) and changes nothing.
    support: full
  diff_mode:
    description:
      - Shows the list of files created, updated and removed, then each file that gets new bytes as
        M(ansible.builtin.copy) shows it (the same before and after, C(max_file_size_for_diff), binary
        files skipped); for a file O(src), exactly what M(ansible.builtin.copy) shows.
    support: full
  platform:
    description: POSIX hosts; Windows hosts are refused.
    support: full
    platforms: posix
notes:
  - Windows hosts are refused with a message; use M(ansible.windows.win_copy).
  - A task with C(content) or O(remote_src=true) is handed to M(ansible.builtin.copy) (its behaviour
    exactly); O(delete) and O(exclude) are refused with them.
  - An invalid O(mode) or O(directory_mode), or a O(dest) that is not a directory for a directory
    O(src), fails the task before anything on the host is changed.
seealso:
  - module: ansible.builtin.copy
  - module: ansible.posix.synchronize
  - module: fastsum.deploy.checksums
'''

EXAMPLES = r'''
- name: Deploy a site, sending only the files that changed
  fastsum.deploy.copy:
    src: site/
    dest: /srv/www/site
    owner: www-data
    mode: u=rw,g=r,o=r
    directory_mode: '0755'

- name: Mirror a tree, removing what the source no longer has
  fastsum.deploy.copy:
    src: conf.d
    dest: /etc/myapp/
    delete: true
    exclude: ['*.local']
  notify: reload myapp

- name: One file, validated before it goes in place
  fastsum.deploy.copy:
    src: sudoers
    dest: /etc/sudoers
    validate: /usr/sbin/visudo -csf %s
    backup: true
'''

RETURN = r'''
dest:
  description: The destination (the directory the tree went into, or the file).
  returned: success
  type: str
  sample: /srv/www/site/
changed:
  description: Whether anything on the host changed (or would, in check mode).
  returned: always
  type: bool
created:
  description: Paths (relative to the destination) of files, links and directories created.
  returned: success
  type: list
  elements: str
  sample: [index.html, css/]
updated:
  description: Paths of files whose bytes were replaced, or whose owner or mode were set.
  returned: success
  type: list
  elements: str
removed:
  description: Paths removed because of O(delete).
  returned: success
  type: list
  elements: str
cleaned:
  description:
    - Temporary files and directories (C(.fastsum-deploy.*)) that an interrupted run of this module left on the
      host, whose writer no longer runs; this run removes them, with or without O(delete).
  returned: success
  type: list
  elements: str
not_copied:
  description: Paths in a directory O(src) that are not copied (a FIFO, a socket, a device), with what they are.
  returned: when there are some
  type: list
  elements: str
  sample: ['run/app.sock (socket)']
unchanged:
  description: Paths of files already right on the host.
  returned: success
  type: list
  elements: str
backup_files:
  description: Paths of the backups made (O(backup=true)).
  returned: when a backup was made
  type: list
  elements: str
checksum:
  description: For a file O(src), its SHA-1, as M(ansible.builtin.copy) returns it.
  returned: for a file O(src)
  type: str
method:
  description: How the host was listed and written, V(fastsum) (raw commands) or V(python) (module runs).
  returned: success
  type: str
'''

import traceback

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.fastsum.deploy.plugins.module_utils.remote_tree import list_tree, peek_files
from ansible_collections.fastsum.deploy.plugins.module_utils.remote_apply import apply_archive


def main():
    module = AnsibleModule(
        argument_spec=dict(
            src=dict(type='path'),
            dest=dict(type='path'),
            mode=dict(type='raw'),
            directory_mode=dict(type='raw'),
            owner=dict(type='str'),
            group=dict(type='str'),
            force=dict(type='bool', default=True),
            backup=dict(type='bool', default=False),
            follow=dict(type='bool', default=False),
            local_follow=dict(type='bool', default=True),
            validate=dict(type='str'),
            remote_src=dict(type='bool', default=False),
            delete=dict(type='bool', default=False),
            exclude=dict(type='list', elements='str', default=[]),
            checksum_algorithm=dict(type='str', default='sha1',
                                    choices=['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512',
                                             'blake2b', 'blake3', 'xxh128']),
            fastsum_path=dict(type='str'),
            fastsum_controller=dict(type='str'),
            use_fastsum=dict(type='str', default='auto', choices=['auto', 'never']),
            _fastsum_op=dict(type='str'),
            _fastsum_request=dict(type='dict'),
        ),
        supports_check_mode=True,
    )
    op = module.params['_fastsum_op']
    if op is None:
        module.fail_json(msg='fastsum.deploy.copy runs through its action plugin (use it as a task)')
    try:
        if op == 'list':
            module.exit_json(changed=False, listing=list_tree(module.params['_fastsum_request']))
        if op == 'peek':
            module.exit_json(changed=False, peek=peek_files(module.params['_fastsum_request']))
        if module.check_mode:
            module.fail_json(msg='fastsum.deploy.copy: nothing is applied in check mode')
        applied = apply_archive(module.params['src'])
        module.exit_json(changed=True, applied=applied)
    except Exception as err:  # pylint: disable=broad-except
        module.fail_json(msg='fastsum.deploy.copy: %s' % err, exception=traceback.format_exc())


if __name__ == '__main__':
    main()
