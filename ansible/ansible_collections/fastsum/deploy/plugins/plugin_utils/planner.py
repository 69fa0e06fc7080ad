# -*- coding: utf-8 -*-
# Copyright: fastsum contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What fastsum.deploy.copy does to the host: a pure function of the two
listings and the task's options, so it is the same in check mode and in a
real run, and unit-tested without a host."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import base64
import fnmatch
import re

from ansible_collections.fastsum.deploy.plugins.module_utils.remote_tree import mode_for, temp_name


def b64(data):
    return base64.b64encode(data).decode('ascii')


def _glob_regex(glob):
    """A gitignore glob as a regex over a relative path (bytes)."""
    anchored = glob.startswith('/') or '/' in glob.rstrip('/')
    body = glob.strip('/')
    parts = []
    for piece in re.split(r'(\*\*/|/\*\*|\*\*)', body):
        if piece in ('**/', '/**', '**'):
            parts.append({'**/': '(?:.*/)?', '/**': '(?:/.*)?', '**': '.*'}[piece])
        else:
            parts.append(fnmatch.translate(piece).replace('\\Z', '').replace('(?s:', '(?:')
                         .replace('.*', '[^/]*'))
    prefix = '' if anchored else '(?:.*/)?'
    return re.compile(('^' + prefix + ''.join(parts) + '$').encode('utf-8'), re.S)


def excluded(rel, is_dir, globs):
    """Whether REL (or a directory above it) matches one of GLOBS."""
    parts = rel.split(b'/')
    for glob in globs:
        if glob.startswith('!'):
            continue
        pattern = _glob_regex(glob)
        dirs_only = glob.endswith('/')
        for depth in range(1, len(parts) + 1):
            last = depth == len(parts)
            if dirs_only and last and not is_dir:
                continue
            if pattern.match(b'/'.join(parts[:depth])):
                return True
    return False


class Options:
    """The task's options that decide the plan (see the module's docs)."""

    def __init__(self, args, owner_id=None, group_id=None):
        self.mode = args.get('mode')
        self.directory_mode = args.get('directory_mode')
        self.force = args.get('force', True)
        self.backup = args.get('backup', False)
        self.delete = args.get('delete', False)
        self.exclude = args.get('exclude') or []
        self.owner_id = owner_id
        self.group_id = group_id
        self.owner = args.get('owner')
        self.group = args.get('group')
        # The host's paths the controller's fastsum found excluded (see
        # local_tree.excluded_by_fastsum); None: matched here by the globs.
        self.excluded_paths = None

    def is_excluded(self, rel, is_dir):
        if self.excluded_paths is not None:
            return rel in self.excluded_paths
        return excluded(rel, is_dir, self.exclude)


def removal_candidates(local, remote, stale=()):
    """{rel: is_dir} of the host's paths that delete or the cleaning of
    stale temporary files could remove: what exclude must be asked about."""
    found = dict((rel, remote[rel]['kind'] == 'd') for rel in remote
                 if rel != b'' and (rel not in local or (local[rel]['kind'] != 'd' and remote[rel]['kind'] == 'd')))
    found.update((rel, (remote.get(rel) or {}).get('kind') == 'd') for rel in stale)
    return found


def _owner_differs(opts, remote):
    return (opts.owner_id is not None and remote['uid'] != opts.owner_id) or \
        (opts.group_id is not None and remote['gid'] != opts.group_id)


def _file_mode_spec(opts, local):
    if opts.mode == 'preserve':
        return local['mode']
    return opts.mode


def make_plan(local, remote, differ, opts, stale=()):
    """The plan for the host and the report.

    LOCAL, REMOTE: {rel: entry} (remote entries have kind, mode, uid, gid,
    digest?, target?). DIFFER: the set of rel paths whose bytes differ (from
    fastsum diff), or None to compare digests here. STALE: rel paths of
    temporary files an interrupted run left on the host (removed, reported
    as cleaned, unless the source has that very name). Returns (plan,
    report, sources): plan as remote_apply takes it (without root), report
    lists of rel bytes, sources the local paths of plan['files'] in order.
    """
    plan = {'mkdirs': [], 'files': [], 'links': [], 'attributes': [], 'remove': []}
    report = {'created': [], 'updated': [], 'removed': [], 'unchanged': [], 'cleaned': []}
    sources = []
    for rel in sorted(stale):
        if rel not in local and not any(rel.startswith(c + b'/') for c in report['cleaned']) \
                and not opts.is_excluded(rel, (remote.get(rel) or {}).get('kind') == 'd'):
            plan['remove'].append(b64(rel))
            report['cleaned'].append(rel)
    for rel in sorted(local):
        entry, there = local[rel], remote.get(rel)
        if entry['kind'] == 'd':
            _plan_dir(rel, there, opts, plan, report)
        elif entry['kind'] == 'l':
            if there is not None and there['kind'] == 'l' and there.get('target') == entry['target']:
                report['unchanged'].append(rel)
            elif there is None or opts.force:
                plan['links'].append({'path': b64(rel), 'target': b64(entry['target'])})
                report['updated' if there else 'created'].append(rel)
            else:
                report['unchanged'].append(rel)
        else:
            _plan_file(rel, entry, there, differ, opts, plan, report, sources)
    if opts.delete:
        _plan_removals(local, remote, opts, plan, report)
    return plan, report, sources


def _plan_dir(rel, there, opts, plan, report):
    if rel == b'':
        # The tree's root (dest, or dest/NAME for src without a trailing
        # /) keeps its owner when it is there, as builtin copy leaves it
        # (tested side by side); when missing it is made with
        # directory_mode, owner and group (remote_apply's open_root).
        return
    if there is not None and there['kind'] == 'd':
        if _owner_differs(opts, there):
            plan['attributes'].append({'path': b64(rel), 'mode': None})
            report['updated'].append(rel + b'/')
        return
    plan['mkdirs'].append({'path': b64(rel), 'mode': opts.directory_mode})
    report['created'].append(rel + b'/')


def _plan_file(rel, entry, there, differ, opts, plan, report, sources):
    spec = _file_mode_spec(opts, entry)
    if there is not None and not opts.force:
        report['unchanged'].append(rel)
        return
    same = there is not None and there['kind'] == 'f' and (
        rel not in differ if differ is not None else there.get('digest') == entry['digest'])
    if same:
        wanted = mode_for(spec, there['mode'], False)
        if wanted != there['mode'] or _owner_differs(opts, there):
            plan['attributes'].append({'path': b64(rel), 'mode': spec})
            report['updated'].append(rel)
        else:
            report['unchanged'].append(rel)
        return
    plan['files'].append({'path': b64(rel), 'mode': spec, 'backup': bool(opts.backup)})
    sources.append(entry['path'])
    report['updated' if there is not None else 'created'].append(rel)


def _plan_removals(local, remote, opts, plan, report):
    gone = list(report['cleaned'])
    for rel in sorted(remote):
        if rel == b'' or rel in local or rel in report['cleaned']:
            continue
        if temp_name(rel.rsplit(b'/', 1)[-1]):
            # Another run's file in the making (its writer runs: a stale
            # one is cleaned above): removing it would fail that run.
            continue
        if local.get(rel) is None and any(rel.startswith(g + b'/') for g in gone):
            continue
        if opts.is_excluded(rel, remote[rel]['kind'] == 'd'):
            continue
        parent = rel.rsplit(b'/', 1)[0] if b'/' in rel else None
        if parent is not None and parent in local and local[parent]['kind'] != 'd':
            continue
        if remote[rel]['kind'] == 'd' and _holds_excluded(rel, remote, opts):
            # As rsync: what is excluded below stays, so the directory
            # does; the rest below it is removed path by path.
            continue
        gone.append(rel)
        plan['remove'].append(b64(rel))
        report['removed'].append(rel + (b'/' if remote[rel]['kind'] == 'd' else b''))
    # A host's directory where the source has a file goes too: the file
    # takes its place.
    for rel in sorted(local):
        there = remote.get(rel)
        if local[rel]['kind'] != 'd' and there is not None and there['kind'] == 'd' \
                and not opts.is_excluded(rel, True) and not _holds_excluded(rel, remote, opts):
            plan['remove'].append(b64(rel))
            report['removed'].append(rel + b'/')


def _holds_excluded(rel, remote, opts):
    """Whether a path below the host's directory REL is excluded."""
    prefix = rel + b'/'
    if opts.excluded_paths is not None:
        return any(other.startswith(prefix) for other in opts.excluded_paths)
    return any(opts.is_excluded(other, remote[other]['kind'] == 'd') for other in remote if other.startswith(prefix))
