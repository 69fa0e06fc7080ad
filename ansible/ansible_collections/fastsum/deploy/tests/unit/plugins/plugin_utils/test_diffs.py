# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The change list of --diff: one line a path, whatever the name holds."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.fastsum.deploy.plugins.plugin_utils.diffs import change_list


def test_a_name_cannot_forge_a_line():
    outcome = {'created': ['ok\n- etc/passwd', 'back\\slash'], 'updated': ['cr\r~ x'], 'removed': [],
               'cleaned': ['.fastsum-deploy.1.2.0']}
    lines = change_list('/d', outcome)['prepared'].splitlines()
    assert lines == ['+ ok\\n- etc/passwd', '+ back\\\\slash', '~ cr\\r~ x', '- .fastsum-deploy.1.2.0']


def test_no_control_character_or_line_separator_passes():
    """A vertical tab, ESC (a cursor move), NEL and U+2028 break lines or
    move a terminal's cursor too: each is written as an escape."""
    outcome = {'created': ['v\x0b+++ a', 'e\x1b[1E+++ b', 'n\x85+++ c', 'l\u2028+++ d'], 'updated': [],
               'removed': []}
    text = change_list('/d', outcome)['prepared']
    assert text.splitlines() == ['+ v\\x0b+++ a', '+ e\\x1b[1E+++ b', '+ n\\x85+++ c', '+ l\\u2028+++ d']
