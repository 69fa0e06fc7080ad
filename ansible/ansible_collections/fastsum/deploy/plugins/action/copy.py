# -*- coding: utf-8 -*-
# Copyright: fastsum contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""fastsum.deploy.copy on the controller: list, plan, send one archive, apply.

Where the host has fastsum: two raw commands through the connection (the
listing, then the unpacking) and one put_file, whatever the number of
files. Otherwise the copy module runs twice (list, apply) with Python's
hashlib on the host. See the module's documentation and the README.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import os
import tempfile

from ansible import constants as C
from ansible.errors import AnsibleActionFail, AnsibleError
from ansible.module_utils.common.text.converters import to_bytes, to_text
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase

from ansible_collections.fastsum.deploy.plugins.plugin_utils import local_tree
from ansible_collections.fastsum.deploy.plugins.plugin_utils.diffs import change_list, file_diffs
from ansible_collections.fastsum.deploy.plugins.plugin_utils.host_commands import HostCommands
from ansible_collections.fastsum.deploy.plugins.plugin_utils.planner import Options, make_plan, removal_candidates
from ansible_collections.fastsum.deploy.plugins.module_utils.remote_tree import mode_for

BOOLEANS = {'force': True, 'backup': False, 'follow': False, 'local_follow': True,
            'remote_src': False, 'delete': False}
# How this collection's way goes (dropped when a task with content or
# remote_src=true is handed to ansible.builtin.copy: see _builtin).
OWN_WAY = ('checksum_algorithm', 'fastsum_path', 'fastsum_controller', 'use_fastsum')
KNOWN = set(BOOLEANS) | {'src', 'dest', 'mode', 'directory_mode', 'owner', 'group', 'validate',
                         'exclude', 'checksum_algorithm', 'fastsum_path', 'fastsum_controller',
                         'use_fastsum'}


def shown(rel):
    """A relative path for the report (not UTF-8: escaped, never lost)."""
    return rel.decode('utf-8', 'backslashreplace')


class ActionModule(ActionBase):

    # False: ActionBase would make a temporary directory on the host before
    # run() and remove it after, two round trips an unchanged run does not
    # need (measured: 2.4 s against a raw command's 1.1 s at 1,000 files).
    # HostCommands.apply makes one when an archive goes through put_file.
    TRANSFERS_FILES = False

    def _arguments(self):
        args = dict(self._task.args)
        if 'content' in args or boolean(args.get('remote_src', False), strict=False):
            return None
        unknown = sorted(set(args) - KNOWN)
        if unknown:
            raise AnsibleActionFail('fastsum.deploy.copy: unsupported parameters: %s' % ', '.join(unknown))
        for key, default in BOOLEANS.items():
            args[key] = boolean(args.get(key, default), strict=False)
        if not args.get('src') or not args.get('dest'):
            raise AnsibleActionFail('fastsum.deploy.copy: src and dest are required')
        args['exclude'] = list(args.get('exclude') or [])
        args['checksum_algorithm'] = args.get('checksum_algorithm') or 'sha1'
        if args['checksum_algorithm'] not in local_tree.FASTSUM_ALGORITHMS:
            raise AnsibleActionFail('fastsum.deploy.copy: unknown checksum_algorithm %s'
                                    % args['checksum_algorithm'])
        for key, is_dir in (('mode', False), ('directory_mode', True)):
            if args.get(key) is None or (key == 'mode' and args[key] == 'preserve'):
                continue
            try:
                # Checked before anything is listed or written: the host
                # would otherwise fail file by file after making directories.
                mode_for(args[key], 0o644, is_dir)
            except (ValueError, TypeError) as err:
                raise AnsibleActionFail('fastsum.deploy.copy: %s %r is invalid (%s): nothing was changed'
                                        % (key, args[key], err))
        if getattr(self._connection._shell, '_IS_WINDOWS', False) or \
                getattr(self._connection._shell, 'SHELL_FAMILY', '') == 'powershell':
            raise AnsibleActionFail('fastsum.deploy.copy does not support Windows hosts; '
                                    'use ansible.windows.win_copy')
        return args

    def _builtin(self, task_vars):
        """content, remote_src=true: ansible.builtin.copy's own action does
        the task (its behaviour exactly: one file, as it writes it), given the
        same arguments less this collection's own."""
        args = dict((key, value) for key, value in self._task.args.items() if key not in OWN_WAY)
        mirror = sorted(key for key in ('delete', 'exclude') if args.pop(key, None) not in (None, False, []))
        if mirror:
            raise AnsibleActionFail('fastsum.deploy.copy: %s cannot go with content or remote_src=true '
                                    '(such a task is done by ansible.builtin.copy, which has no %s)'
                                    % (' and '.join(mirror), ' or '.join(mirror)))
        task = self._task.copy()
        task.args = args
        action = self._shared_loader_obj.action_loader.get(
            'ansible.legacy.copy', task=task, connection=self._connection, play_context=self._play_context,
            loader=self._loader, templar=self._templar, shared_loader_obj=self._shared_loader_obj)
        return action.run(task_vars=task_vars)

    def _source(self, src):
        trailing = src.endswith(os.path.sep)
        try:
            found = self._find_needle('files', src)
        except AnsibleError as err:
            raise AnsibleActionFail(to_text(err))
        found = found.rstrip(os.path.sep) or os.path.sep
        return found, trailing

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        args = self._arguments()
        if args is None:
            return self._builtin(task_vars)
        src, trailing = self._source(args['src'])
        program = local_tree.fastsum_program(args.get('fastsum_controller'))
        dest = self._remote_expand_user(args['dest'])
        host = HostCommands(self, task_vars, args)
        try:
            if os.path.isdir(src):
                outcome = self._copy_tree(host, program, src, trailing, dest, args)
            else:
                outcome = self._copy_file(host, program, src, dest, args)
        except local_tree.SourceError as err:
            raise AnsibleActionFail('fastsum.deploy.copy: %s' % err)
        finally:
            host.cleanup()
        result.update(outcome)
        return result

    def _copy_tree(self, host, program, src, trailing, dest, args):
        root = dest.rstrip('/') if trailing else '%s/%s' % (dest.rstrip('/'), os.path.basename(src))
        root_b = to_bytes(root, errors='surrogate_or_strict')
        listing = host.list({'dest': base64.b64encode(root_b).decode('ascii'), 'inside': not trailing},
                            directory=True)
        if listing['root_kind'] not in ('d', 'm'):
            what = {'f': 'a file', 'l': 'a symlink'}.get(listing['root_kind'], 'a special file')
            raise AnsibleActionFail('fastsum.deploy.copy: %s is not a directory (%s), nothing was changed: '
                                    'a directory src needs a directory dest' % (root, what))
        algorithm = args['checksum_algorithm']
        if host.method == 'python' and algorithm not in local_tree.HASHLIB_ALGORITHMS:
            algorithm = 'sha1'  # what the fallback hashed with (hashlib has no blake3, xxh128)
        skipped = []
        local = local_tree.list_source(program, src, algorithm, args['local_follow'], args['exclude'], skipped)
        differ = None
        if host.method == 'fastsum' and listing['root_kind'] == 'd':
            host.check_sizes(listing, root_b, local)
            differ = local_tree.remote_plan(program, host.fastsum_listing, root_b, src, algorithm,
                                            args['local_follow'], args['exclude'])
        elif host.method == 'fastsum':
            differ = set(local)
        outcome = self._finish(host, local, listing, differ, args, root_b, single=False,
                               dest=dest.rstrip('/') + '/', created_root=listing['root_kind'] != 'd')
        if skipped:
            # As rsync says "skipping non-regular file": not copied, said.
            outcome['not_copied'] = ['%s (%s)' % (shown(rel), why) for rel, why in skipped]
            outcome.setdefault('warnings', []).append('fastsum.deploy.copy: not copied, not a regular file, '
                                                      'directory or symlink: %s' % ', '.join(outcome['not_copied']))
        return outcome

    def _copy_file(self, host, program, src, dest, args):
        algorithm = args['checksum_algorithm']
        if algorithm not in local_tree.HASHLIB_ALGORITHMS:
            algorithm = 'sha1'
        name = os.path.basename(src)
        request = {'dest': base64.b64encode(to_bytes(dest, errors='surrogate_or_strict')).decode('ascii'),
                   'name': base64.b64encode(to_bytes(name, errors='surrogate_or_strict')).decode('ascii'),
                   'follow': args['follow'], 'algorithm': algorithm}
        listing = host.list(request, directory=False)
        st = os.stat(src)
        local = {b'': {'kind': 'f', 'mode': st.st_mode & 0o7777, 'path': to_bytes(src),
                       'digest': local_tree.hash_file(program, src, algorithm)}}
        root_b = base64.b64decode(listing['root'])
        outcome = self._finish(host, local, listing, None, args, root_b, single=True,
                               dest=to_text(root_b, errors='surrogate_or_strict'), created_root=False)
        outcome['checksum'] = local_tree.hash_file(program, src, 'sha1') if algorithm != 'sha1' \
            else local[b'']['digest']
        return outcome

    def _diffs(self, host, plan, sources, remote, root_b, single, dest, outcome):
        """Diff mode: the change list (a directory src), then each file that
        gets new bytes as builtin copy shows it. The host is asked only for
        the regular files already there (one more remote operation)."""
        base, rels = (os.path.dirname(root_b), [os.path.basename(root_b)] if plan['files'] else []) if single else \
            (root_b, [base64.b64decode(item['path']) for item in plan['files']])
        there = [rel for rel in rels if (remote.get(b'' if single else rel) or {}).get('kind') == 'f']
        peeked = dict(zip(there, host.peek({'root': base64.b64encode(base).decode('ascii'), 'paths': [
            base64.b64encode(rel).decode('ascii') for rel in there], 'max': C.MAX_FILE_SIZE_FOR_DIFF})
            if there else []))
        targets = [(to_text(os.path.join(base, rel), errors='surrogate_or_strict'), source)
                   for rel, source in zip(rels, sources)]
        # A directory src's names are escaped in the headers too, as in
        # the change list: a name cannot forge a header line.
        diffs = file_diffs([peeked.get(rel, ['absent', None]) for rel in rels], targets, self._task.no_log,
                           escape=not single)
        return diffs if single else [change_list(dest, outcome)] + diffs

    @staticmethod
    def _done_lists(done, report, remote, plan, single, name):
        """The result's lists from what the host reports done (a failed
        apply): directories with their /, the root as ./."""
        dirs = set(base64.b64decode(item['path']) for item in plan['mkdirs'])
        dirs.update(rel for rel, entry in remote.items() if entry['kind'] == 'd')
        cleaned = set(report['cleaned'])

        def rels(key):
            return [base64.b64decode(p) for p in done.get(key, [])]

        def text(rel):
            if single and rel in (b'', name):
                return shown(name)
            return shown(rel) + ('/' if rel in dirs and rel else '') if rel else './'
        updated = []
        for rel in rels('updated') + rels('attributes'):
            if text(rel) not in updated:
                updated.append(text(rel))
        return {'created': [text(rel) for rel in rels('created')], 'updated': updated,
                'removed': [text(rel) for rel in rels('removed') if rel not in cleaned],
                'cleaned': [text(rel) for rel in rels('removed') if rel in cleaned]}

    def _finish(self, host, local, listing, differ, args, root_b, single, dest, created_root):
        remote = host.entries(listing)
        if listing.get('errors'):
            raise AnsibleActionFail('fastsum.deploy.copy: the host could not list %s: %s' % (
                dest, '; '.join('%s: %s' % (shown(base64.b64decode(p)), why) for p, why in listing['errors'])))
        opts = Options(args, listing.get('owner_id'), listing.get('group_id'))
        stale = [base64.b64decode(rel) for rel in listing.get('stale', [])]
        if not single and opts.exclude and (opts.delete or stale):
            opts.excluded_paths = local_tree.excluded_by_fastsum(
                local_tree.fastsum_program(args.get('fastsum_controller')),
                removal_candidates(local, remote, stale), opts.exclude)
        plan, report, sources = make_plan(local, remote, differ, opts, stale)
        if created_root and not single:
            report['created'].insert(0, b'./')
        outcome = {'dest': dest, 'method': host.method, 'changed': False}
        name = os.path.basename(root_b)
        for key in report:
            outcome[key] = [shown(name if single and rel == b'' else rel) for rel in report[key]]
        changed = bool(report['created'] or report['updated'] or report['removed'] or report['cleaned'])
        outcome['changed'] = changed
        if self._task.diff and changed:
            outcome['diff'] = self._diffs(host, plan, sources, remote, root_b, single, dest, outcome)
        if not changed or self._task.check_mode:
            return outcome
        plan.update({'root': base64.b64encode(root_b).decode('ascii'), 'single': single,
                     'owner': args.get('owner'), 'group': args.get('group'),
                     'validate': args.get('validate'),
                     'root_mode': args.get('directory_mode'), 'inside': listing.get('inside', False)})
        fd, archive = tempfile.mkstemp(suffix='.tar', prefix='fastsum-deploy.')
        os.close(fd)
        try:
            local_tree.build_archive(archive, plan, sources)
            applied = host.apply(archive)
        finally:
            os.unlink(archive)
        backups = [shown(base64.b64decode(p)) for p in applied['done']['backups']]
        if backups:
            outcome['backup_files'] = backups
            if single:
                outcome['backup_file'] = to_text(os.path.join(os.path.dirname(root_b), base64.b64decode(
                    applied['done']['backups'][0])), errors='surrogate_or_strict')
        if applied['failed']:
            # What the host did, not what was planned: a run that wrote
            # nothing (a read-only file system) changed nothing, and the
            # lists name only what was done.
            outcome.update(self._done_lists(applied['done'], report, remote, plan, single, name))
            outcome['changed'] = any(outcome[key] for key in ('created', 'updated', 'removed', 'cleaned'))
            outcome['failed'] = True
            outcome['msg'] = 'fastsum.deploy.copy: not everything was put in place under %s: %s' % (
                dest, '; '.join('%s: %s' % (shown(base64.b64decode(p)) or '.', why) for p, why in applied['failed']))
        return outcome
