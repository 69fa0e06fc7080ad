# -*- coding: utf-8 -*-
# Copyright: fastsum contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""How fastsum.deploy.copy talks to the host, through the task's connection.

Where the host has fastsum (and a Python), the listing is one raw command:
``fastsum remote-command``'s listing (fastsum hashes the tree there) then
this collection's lister (remote_tree.py, sent compressed in the command
line: kinds, modes and owners, never through a symlink), and the unpacking
another raw command running remote_apply.py on the uploaded archive.
Otherwise the copy module runs twice (list with hashlib, apply): the same
two files, as module_utils. Every word of a command is quoted by
shlex.quote; names travel base64 inside JSON, never as shell text; the
output is parsed from marker lines, so a login banner, sudo's prompt line
or a terminal's \\r cost nothing.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import json
import os
import re
import shlex
import zlib

from ansible.errors import AnsibleActionFail, AnsibleConnectionFailure
from ansible.module_utils.common.text.converters import to_bytes, to_text

from ansible_collections.fastsum.deploy.plugins.plugin_utils import local_tree

MODULE = 'fastsum.deploy.copy'
# Archives up to this size go on the apply command's standard input; bigger
# ones through put_file into a temporary directory (not held in memory).
PIPE_LIMIT = 64 * 1024 * 1024
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bootstrap_code():
    """remote_tree.py + remote_apply.py + an entry point, as one script."""
    parts = []
    for name in ('remote_tree.py', 'remote_apply.py'):
        with open(os.path.join(_HERE, 'module_utils', name), 'r') as handle:
            text = handle.read()
        text = re.sub(r'^from __future__ import [^\n]*\n|^__metaclass__ = type\n', '', text, flags=re.M)
        text = re.sub(r'^from ansible_collections[^)]*\)\n', '', text, flags=re.M)
        parts.append(text)
    parts.append('''
import sys as _sys
def _main(op, arg):
    if op == 'list':
        out = list_tree(json.loads(base64.b64decode(arg).decode('utf-8')))
    elif op == 'peek':
        out = peek_files(json.loads(_sys.stdin.buffer.read().decode('utf-8')))
    else:
        out = apply_archive(arg)
    _sys.stdout.write('\\nfastsum-deploy-' + op + ' ' + json.dumps(out) + '\\n')
_main(_sys.argv[1], _sys.argv[2])
''')
    return 'import base64\n' + '\n'.join(parts)


def python_command(python, op, arg):
    packed = base64.b64encode(zlib.compress(bootstrap_code().encode('utf-8'), 9)).decode('ascii')
    code = 'import base64,zlib;exec(zlib.decompress(base64.b64decode("%s")))' % packed
    return ' '.join(shlex.quote(word) for word in (python, '-c', code, op, arg))


def marked(stdout, marker):
    """The JSON after MARKER in a raw command's output, or None."""
    match = re.search(r'(?m)^' + re.escape(marker) + r' (\{.*\})\r?$', stdout)
    return json.loads(match.group(1)) if match else None


def listed_sizes(text, root):
    """{rel: size} of the files in the host's fastsum listing TEXT (what
    ``fastsum remote-command --text`` prints: hex lines after its marker),
    rel relative to ROOT; ValueError when a record is not under ROOT."""
    lines = text.split(b'\n')
    if b'fastsum-remote-text 1' not in lines:
        return {}
    hexes = []
    for line in lines[lines.index(b'fastsum-remote-text 1') + 1:]:
        if line.startswith(b'fastsum-remote-'):
            break
        hexes.append(line)
    body = bytes.fromhex(b''.join(hexes).decode('ascii')).split(b'\0', 1)[0]
    prefix = root.rstrip(b'/') + b'/'
    sizes = {}
    for line in body.split(b'\n'):
        if not line.startswith(b'{'):
            continue
        record = json.loads(line)
        if 'digest' not in record:
            continue
        path = local_tree.record_path(record)
        if not path.startswith(prefix):
            raise ValueError('%s is not under %s' % (path, root))
        sizes[path[len(prefix):]] = record.get('size')
    return sizes


class HostCommands:
    """The listing and the applying, by raw commands or module runs."""

    def __init__(self, action, task_vars, args):
        self.action = action
        self.task_vars = task_vars
        self.args = args
        self.method = None
        self.fastsum_listing = None
        self.tmpdir = None
        python = task_vars.get('ansible_python_interpreter') or \
            task_vars.get('ansible_facts', {}).get('discovered_interpreter_python') or 'python3'
        self.python = 'python3' if 'auto' in str(python) or '{{' in str(python) else str(python)

    def _raw(self, command):
        res = self.action._low_level_execute_command(command, sudoable=True)
        return res.get('rc'), to_text(res.get('stdout', ''), errors='surrogate_or_strict'), \
            to_text(res.get('stderr', ''), errors='surrogate_or_strict')

    def list(self, request, directory):
        """The host's listing (remote_tree.list_tree's answer)."""
        algorithm = self.args['checksum_algorithm']
        request = dict(request, owner=self.args.get('owner'), group=self.args.get('group'))
        if self.args.get('use_fastsum', 'auto') == 'auto':
            listing = self._list_raw(dict(request), directory, algorithm)
            if listing is not None:
                return listing
        self.method = 'python'
        request = dict(request)
        if directory:
            request['algorithm'] = algorithm if algorithm in local_tree.HASHLIB_ALGORITHMS else 'sha1'
        res = self.action._execute_module(module_name=MODULE, task_vars=self.task_vars, module_args={
            '_fastsum_op': 'list', '_fastsum_request': request})
        if res.get('failed') or 'listing' not in res:
            raise AnsibleActionFail('fastsum.deploy.copy: the host could not be listed: %s'
                                    % (res.get('msg') or res.get('module_stderr') or res))
        return res['listing']

    def _list_raw(self, request, directory, algorithm):
        fastsum = self.args.get('fastsum_path') or 'fastsum'
        steps = []
        if directory:
            program = local_tree.fastsum_program(self.args.get('fastsum_controller'))
            root = base64.b64decode(request['dest'])
            status, out, err = local_tree.run_fastsum(program, [
                'remote-command', '--text', '-a', algorithm, '--remote-method', 'fastsum',
                '--remote-fastsum', fastsum, '--', root])
            if status != 0:
                raise AnsibleActionFail('fastsum remote-command: %s' % err)
            # Only for a directory: fastsum reads an operand that is a FIFO
            # (and blocks); a dest that is not a directory is refused.
            steps.append('if [ -d %s ]; then\n%s\nfi' % (
                shlex.quote(to_text(root, errors='surrogate_or_strict')),
                to_text(out, errors='surrogate_or_strict').rstrip('\n')))
            steps.append('echo')
        steps.append(python_command(self.python, 'list', base64.b64encode(
            json.dumps(request).encode('utf-8')).decode('ascii')))
        command = 'if command -v %s >/dev/null 2>&1 && command -v %s >/dev/null 2>&1; then ' \
            'echo fastsum-deploy-has; %s; else echo fastsum-deploy-none; fi' % (
                shlex.quote(fastsum), shlex.quote(self.python), '\n'.join(steps))
        rc, out, err = self._raw(command)
        if 'fastsum-deploy-none' in out and 'fastsum-deploy-has' not in out:
            return None
        listing = marked(out, 'fastsum-deploy-list')
        if listing is None:
            raise AnsibleActionFail('fastsum.deploy.copy: the host sent no listing (exit %s): %s %s'
                                    % (rc, out[-2000:], err[-2000:]))
        self.method = 'fastsum'
        if directory:
            text = out[out.index('fastsum-deploy-has'):]
            text = text[text.index('\n') + 1:text.rindex('fastsum-deploy-list')]
            self.fastsum_listing = to_bytes(text.replace('\r\n', '\n'), errors='surrogate_or_strict')
        return listing

    def check_sizes(self, listing, root, local):
        """Refuse a fastsum listing that disagrees with the host's files.

        The bytes of a file the source has are judged by the host's fastsum
        (fastsum diff of its listing): a program that is not fastsum first
        on the host's PATH, a replayed listing, or a file rewritten while
        it was listed would have files left out of the copy. Each such
        file's size there must be the size the lister found on the disk.
        """
        try:
            sizes = listed_sizes(self.fastsum_listing or b'', root)
        except (ValueError, KeyError, TypeError) as err:
            sizes, bad = {}, [(b'', 'a record it could not have made (%s)' % err)]
        else:
            bad = []
        files = self.entries(listing)
        for rel, size in sorted(sizes.items()):
            there = files.get(rel)
            if rel in local and (there is None or there['kind'] != 'f' or there['size'] != size):
                bad.append((rel, 'listed with %s bytes, %s on the disk' % (
                    size, 'not a file' if there is None or there['kind'] != 'f' else there['size'])))
        if bad:
            raise AnsibleActionFail(
                'fastsum.deploy.copy: the listing of the host\'s fastsum (%s) disagrees with its files, nothing '
                'was changed (a file changed while it was listed, or that program is not fastsum): %s' % (
                    self.args.get('fastsum_path') or 'fastsum', '; '.join(
                        '%s: %s' % (rel.decode('utf-8', 'backslashreplace') or '.', why) for rel, why in bad[:10])))

    @staticmethod
    def entries(listing):
        """The listing's entries as {rel bytes: entry}."""
        found = {}
        for rel, kind, mode, uid, gid, digest, target, size in listing['entries']:
            found[base64.b64decode(rel)] = {
                'kind': kind, 'mode': mode, 'uid': uid, 'gid': gid, 'digest': digest, 'size': size,
                'target': base64.b64decode(target) if target else None}
        return found

    def _can_pipe(self, archive):
        """Whether the archive can go on the apply command's standard input
        (one round trip, no temporary directory): not when become waits for
        a password on it, nor for archives too big to hold in memory."""
        become = getattr(self.action._connection, 'become', None)
        if become is not None and self.action._play_context.become and become.expect_prompt():
            return False
        return os.path.getsize(archive) <= PIPE_LIMIT

    def apply(self, archive):
        """Send ARCHIVE and put its files in place; remote_apply's answer."""
        action = self.action
        if self.method == 'fastsum' and self._can_pipe(archive):
            with open(archive, 'rb') as handle:
                data = handle.read()
            try:
                res = action._low_level_execute_command(python_command(self.python, 'apply', '-'), sudoable=True,
                                                        in_data=data)
            except AnsibleConnectionFailure as err:
                # The host was listed moments ago: an archive not taken
                # whole (the unpacking ended before it read it, killed or
                # refused, or the connection broke on the way) is this
                # task failing, each file old or new, not the host being
                # unreachable (which Ansible would say and stop the play).
                raise AnsibleActionFail(
                    'fastsum.deploy.copy: unpacking on the host failed: the archive (%d bytes) could not all be sent '
                    '(the unpacking ended before it read it all, or the connection broke); each file there is as '
                    'it was or as the source has it, and the next run converges: %s' % (len(data), err))
            out = to_text(res.get('stdout', ''), errors='surrogate_or_strict')
            applied = marked(out, 'fastsum-deploy-apply')
            if applied is None:
                raise AnsibleActionFail('fastsum.deploy.copy: unpacking on the host failed (exit %s): %s %s' % (
                    res.get('rc'), out[-2000:], to_text(res.get('stderr', ''))[-2000:]))
            return applied
        self.tmpdir = action._connection._shell.tmpdir or action._make_tmp_path()
        remote = action._connection._shell.join_path(self.tmpdir, 'fastsum-deploy.tar')
        action._transfer_file(archive, remote)
        action._fixup_perms2((self.tmpdir, remote))
        if self.method == 'fastsum':
            rc, out, err = self._raw(python_command(self.python, 'apply', remote))
            applied = marked(out, 'fastsum-deploy-apply')
            if applied is None:
                raise AnsibleActionFail('fastsum.deploy.copy: unpacking on the host failed (exit %s): %s %s'
                                        % (rc, out[-2000:], err[-2000:]))
            return applied
        res = action._execute_module(module_name=MODULE, task_vars=self.task_vars, module_args={
            '_fastsum_op': 'apply', 'src': remote})
        if res.get('failed') or 'applied' not in res:
            raise AnsibleActionFail('fastsum.deploy.copy: unpacking on the host failed: %s'
                                    % (res.get('msg') or res.get('module_stderr') or res))
        return res['applied']

    def peek(self, request):
        """Diff mode: the host's files about to be replaced (remote_tree.peek_files)."""
        if self.method == 'fastsum':
            res = self.action._low_level_execute_command(
                python_command(self.python, 'peek', '-'), sudoable=True,
                in_data=json.dumps(request).encode('utf-8'))
            peeked = marked(to_text(res.get('stdout', ''), errors='surrogate_or_strict'), 'fastsum-deploy-peek')
        else:
            res = self.action._execute_module(module_name=MODULE, task_vars=self.task_vars, module_args={
                '_fastsum_op': 'peek', '_fastsum_request': request})
            peeked = res.get('peek')
        if peeked is None:
            raise AnsibleActionFail('fastsum.deploy.copy: the host could not show the files for --diff: %s'
                                    % (res.get('msg') or res.get('stderr') or res.get('module_stderr') or res))
        return peeked['files']

    def cleanup(self):
        tmpdir = self.action._connection._shell.tmpdir
        if tmpdir:
            self.action._remove_tmp_path(tmpdir)
