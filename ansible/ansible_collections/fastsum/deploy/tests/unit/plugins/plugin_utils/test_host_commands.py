# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host's fastsum listing read back for the size check (a listing that
disagrees with the host's files is refused, see HostCommands.check_sizes),
and an archive the host did not take whole (HostCommands.apply)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json

import pytest

from ansible.errors import AnsibleActionFail, AnsibleConnectionFailure
from ansible_collections.fastsum.deploy.plugins.plugin_utils.host_commands import HostCommands, listed_sizes


def text_of(records, root=b'/srv/t'):
    """What `fastsum remote-command --text` sends back: od's hex lines."""
    body = b'fastsum-remote-method fastsum sorted\n' + b''.join(
        json.dumps(r).encode() + b'\n' for r in records) + b'\0fastsum-remote-end\0'
    hexes = [' '.join('%02x' % b for b in body[i:i + 16]) for i in range(0, len(body), 16)]
    return ('banner\nfastsum-remote-text 1\n' + '\n'.join(' ' + h for h in hexes) +
            '\nfastsum-remote-stderr\n').encode()


def test_sizes_of_a_listing():
    text = text_of([{'path': '/srv/t/a', 'digest': '00', 'size': 3},
                    {'path': '/srv/t/d/b', 'path_base64': 'L3Nydi90L2QvYv8=', 'digest': '11', 'size': 5},
                    {'path': '/srv/t/l', 'skipped': 'symbolic link'}])
    assert listed_sizes(text, b'/srv/t') == {b'a': 3, b'd/b\xff': 5}
    assert listed_sizes(text, b'/srv/t/') == {b'a': 3, b'd/b\xff': 5}


def test_a_record_outside_the_root_is_refused():
    with pytest.raises(ValueError):
        listed_sizes(text_of([{'path': '/srv/tx/a', 'digest': '00', 'size': 3}]), b'/srv/t')


def test_no_listing_no_sizes():
    assert listed_sizes(b'', b'/srv/t') == {}


class BrokenPipe:
    """An action whose connection breaks while the archive is sent (the
    unpacking on the host ended before reading it all: Ansible's ssh
    connection gets EPIPE and raises AnsibleConnectionFailure)."""

    def __init__(self):
        self._connection = type('Connection', (), {'become': None})()
        self._play_context = type('PlayContext', (), {'become': False})()
        self.sent = []

    def _low_level_execute_command(self, command, sudoable=True, in_data=None):
        self.sent.append(in_data)
        raise AnsibleConnectionFailure('Data could not be sent to remote host "127.0.0.1": [Errno 32] Broken pipe')


def test_an_archive_not_taken_whole_fails_the_task(tmp_path):
    archive = tmp_path / 'fastsum-deploy.tar'
    archive.write_bytes(b'\0' * 4096)
    action = BrokenPipe()
    commands = HostCommands(action, {}, {})
    commands.method = 'fastsum'
    with pytest.raises(AnsibleActionFail) as failed:
        commands.apply(str(archive))
    # A failed task (each file old or new), not an unreachable host.
    assert not isinstance(failed.value, AnsibleConnectionFailure)
    assert 'unpacking on the host failed' in str(failed.value)
    assert '4096 bytes' in str(failed.value) and 'Broken pipe' in str(failed.value)
    assert action.sent == [b'\0' * 4096]
