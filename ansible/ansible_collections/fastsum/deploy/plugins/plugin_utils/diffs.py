# -*- coding: utf-8 -*-
# Copyright: fastsum contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Diff mode of fastsum.deploy.copy: each file about to get new bytes as
ansible.builtin.copy shows it (ActionBase._get_diff_data: the same keys,
the same size limit, max_file_size_for_diff, the same tests for binary),
after the list of changes for a directory src."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import os
import stat
import unicodedata

from ansible import constants as C
from ansible.errors import AnsibleActionFail
from ansible.module_utils.common.text.converters import to_native, to_text


def escaped(path):
    """PATH on one line: a backslash as \\\\, a newline and a carriage
    return as \\n and \\r, any other control character (C0, DEL, C1: a
    vertical tab, ESC, NEL) as \\xHH, a line or paragraph separator as
    \\uHHHH, so that no name can forge a line or move a terminal's cursor."""
    out = []
    for char in path.replace('\\', '\\\\').replace('\n', '\\n').replace('\r', '\\r'):
        category = unicodedata.category(char)
        if category == 'Cc':
            out.append('\\x%02x' % ord(char))
        elif category in ('Zl', 'Zp'):
            out.append('\\u%04x' % ord(char))
        else:
            out.append(char)
    return ''.join(out)


def change_list(dest, outcome):
    """The list of changes (+ created, ~ updated, - removed or cleaned) as
    one diff."""
    lines = ['%s %s' % (sign, escaped(path)) for key, sign in (('created', '+'), ('updated', '~'), ('removed', '-'),
                                                               ('cleaned', '-')) for path in outcome.get(key, [])]
    return {'before_header': dest, 'after_header': dest, 'prepared': '\n'.join(lines) + '\n'}


def _after(diff, source):
    """The source's half, as builtin copy reads it (the whole file)."""
    limit = C.MAX_FILE_SIZE_FOR_DIFF
    if limit > 0 and os.stat(source)[stat.ST_SIZE] > limit:
        diff['src_larger'] = limit
        return
    try:
        with open(source, 'rb') as handle:
            data = handle.read()
    except OSError as err:
        raise AnsibleActionFail('Unexpected error while reading source (%s) for diff: %s '
                                % (to_text(source), to_native(err)))
    if b'\x00' in data:
        diff['src_binary'] = 1
    else:
        diff['after_header'] = to_text(source, errors='surrogate_or_strict')
        diff['after'] = to_text(data, errors='surrogate_or_strict')


def file_diffs(peeked, targets, no_log, escape=False):
    """One diff per file: PEEKED the host's answer for each of TARGETS,
    [(remote path text, local source path)], in order; ESCAPE: both
    headers escaped (a directory src: see escaped())."""
    diffs = []
    for (state, data), (destination, source) in zip(peeked, targets):
        diff = {}
        if state == 'absent':
            diff['before'] = u''
        elif state == 'binary':
            diff['dst_binary'] = 1
        elif state == 'larger':
            diff['dst_larger'] = C.MAX_FILE_SIZE_FOR_DIFF
        else:
            diff['before_header'] = destination
            diff['before'] = to_text(base64.b64decode(data), errors='surrogate_or_strict')
        _after(diff, source)
        if escape:
            for key in ('before_header', 'after_header'):
                if key in diff:
                    diff[key] = escaped(diff[key])
        if no_log:
            if 'before' in diff:
                diff['before'] = u''
            if 'after' in diff:
                diff['after'] = u" [[ Diff output has been hidden because 'no_log: true' was specified for this result ]]\n"
        diffs.append(diff)
    return diffs
