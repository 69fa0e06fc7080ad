"""What the collection's tests stand on: a real OpenSSH server on 127.0.0.1
(its own host key, a user key, known_hosts; nothing else contacted), an
inventory reaching it through Ansible's ssh connection (and the local
connection), ad-hoc runs whose results come back as JSON, and trees read
back as data (bytes, modes, owners) to compare."""

import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
VENV_BIN = os.path.dirname(sys.executable)
HOST_PYTHON = '/usr/bin/python3' if os.path.exists('/usr/bin/python3') else sys.executable


class Sshd:
    """sshd -D on a free port of 127.0.0.1, stopped by stop()."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix='fastsum-ansible-sshd.')
        for key in ('host_key', 'user_key'):
            subprocess.run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', os.path.join(self.dir, key)],
                           check=True)
        shutil.copy(os.path.join(self.dir, 'user_key.pub'), os.path.join(self.dir, 'authorized_keys'))
        os.makedirs('/run/sshd', exist_ok=True)
        with socket.socket() as probe:
            probe.bind(('127.0.0.1', 0))
            self.port = probe.getsockname()[1]
        with open(os.path.join(self.dir, 'sshd_config'), 'w') as conf:
            conf.write('\n'.join([
                'ListenAddress 127.0.0.1', 'Port %d' % self.port,
                'HostKey %s/host_key' % self.dir, 'AuthorizedKeysFile %s/authorized_keys' % self.dir,
                'PasswordAuthentication no', 'KbdInteractiveAuthentication no', 'PubkeyAuthentication yes',
                'PermitRootLogin prohibit-password', 'StrictModes no', 'UsePAM no',
                'PidFile %s/sshd.pid' % self.dir, 'Subsystem sftp /usr/lib/openssh/sftp-server',
                'MaxStartups 1000', 'PerSourceMaxStartups none', 'MaxSessions 1000', '']))
        self.proc = subprocess.Popen(['/usr/sbin/sshd', '-D', '-e', '-f', os.path.join(self.dir, 'sshd_config')],
                                     stderr=open(os.path.join(self.dir, 'sshd.log'), 'w'))
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                with socket.create_connection(('127.0.0.1', self.port), timeout=1) as conn:
                    if conn.recv(4) == b'SSH-':
                        break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError('sshd did not start: see %s/sshd.log' % self.dir)
        with open(os.path.join(self.dir, 'host_key.pub')) as pub:
            kind, key = pub.read().split()[:2]
        with open(os.path.join(self.dir, 'known_hosts'), 'w') as known:
            known.write('[127.0.0.1]:%d %s %s\n' % (self.port, kind, key))

    def inventory(self):
        """An inventory file: host `ssh` through this server, host `local`."""
        path = os.path.join(self.dir, 'inventory.ini')
        user = os.environ.get('USER') or 'root'
        with open(path, 'w') as inv:
            inv.write('ssh ansible_host=127.0.0.1 ansible_port=%d ansible_user=%s '
                      'ansible_ssh_private_key_file=%s/user_key ansible_python_interpreter=%s '
                      'ansible_ssh_common_args="-F /dev/null -o UserKnownHostsFile=%s/known_hosts '
                      '-o StrictHostKeyChecking=yes -o IdentitiesOnly=yes"\n'
                      % (self.port, user, self.dir, HOST_PYTHON, self.dir))
            inv.write('local ansible_connection=local ansible_python_interpreter=%s\n' % HOST_PYTHON)
        return path

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


class Ansible:
    """Ad-hoc runs of one module on one host; the result as a dict."""

    def __init__(self, inventory, collections, env=None):
        self.inventory = inventory
        self.env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections, ANSIBLE_HOST_KEY_CHECKING='True',
                        ANSIBLE_LOAD_CALLBACK_PLUGINS='1', ANSIBLE_STDOUT_CALLBACK='oneline',
                        ANSIBLE_DEPRECATION_WARNINGS='0', ANSIBLE_NOCOLOR='1',
                        ANSIBLE_LOCALHOST_WARNING='0', ANSIBLE_SYSTEM_WARNINGS='0',
                        ANSIBLE_SSH_CONTROL_PATH_DIR=tempfile.mkdtemp(prefix='fastsum-ansible-cp.'),
                        **(env or {}))

    def run(self, host, module, args, *flags):
        command = [os.path.join(VENV_BIN, 'ansible'), host, '-i', self.inventory, '-m', module,
                   '-a', json.dumps(args)] + list(flags)
        proc = subprocess.run(command, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
        out = proc.stdout.decode('utf-8', 'replace')
        match = re.search(r'^\S+ \| [A-Z!]+ => (\{.*\})\s*$', out, re.M)
        if not match:
            raise AssertionError('no result from %s:\n%s\n%s' % (command, out, proc.stderr.decode('utf-8', 'replace')))
        return json.loads(match.group(1))


    def play(self, tasks, *flags):
        """One ansible-playbook run on host `local` of TASKS [(module, args,
        delegate_to or None[, task vars])]: one start of Ansible for all;
        their results."""
        plays = [{'hosts': 'local', 'gather_facts': False, 'tasks': [
            dict({module: args, 'ignore_errors': True}, **({'delegate_to': task[2]} if task[2] else {}),
                 **({'vars': task[3]} if len(task) > 3 else {}))
            for task in tasks for module, args in [task[:2]]]}]
        with tempfile.NamedTemporaryFile('w', suffix='.yml', delete=False) as handle:
            json.dump(plays, handle)
        try:
            command = [os.path.join(VENV_BIN, 'ansible-playbook'), '-i', self.inventory, handle.name] + list(flags)
            # A hang (a FIFO read, say) fails the test instead of CI.
            proc = subprocess.run(command, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False,
                                  timeout=600)
        finally:
            os.unlink(handle.name)
        out = proc.stdout.decode('utf-8', 'replace')
        # The callback drops `failed` from a result: its status word says it.
        results = [dict(json.loads(m), failed=status == 'FAILED!') for status, m in
                   re.findall(r'^\S+(?: -> \S+)? \| ([A-Z!]+) => (\{.*\})\s*$', out, re.M)]
        if len(results) != len(tasks):
            raise AssertionError('%d results of %d tasks:\n%s\n%s' % (
                len(results), len(tasks), out, proc.stderr.decode('utf-8', 'replace')))
        return results


class Pair:
    """Checks that run our task two ways: over ssh with fastsum on the
    host (F), through the local connection with the Python fallback (P)."""

    def __init__(self, ansible, work, fastsum, check):
        self.ansible = ansible
        self.work = work
        self.fastsum = fastsum
        self.check = check
        os.makedirs(self.work)

    def ours(self, src, dests, **args):
        """The task for F and for P, into DESTS['F'] and DESTS['P']."""
        return [('fastsum.deploy.copy', dict(args, src=src, dest=dests['F'], fastsum_path=self.fastsum,
                                             fastsum_controller=self.fastsum), 'ssh'),
                ('fastsum.deploy.copy', dict(args, src=src, dest=dests['P'], use_fastsum='never',
                                             fastsum_controller=self.fastsum), None)]

    def dests(self, name, keys='FP'):
        return {key: os.path.join(self.work, '%s-%s' % (name, key)) for key in keys}


BACKUP = re.compile(rb'\.\d+\.\d{4}-\d\d-\d\d@\d\d:\d\d:\d\d~$')


def snapshot(root, owners=False):
    """{rel: (kind, mode, bytes or link target[, uid, gid])} of the tree at ROOT
    (backup names with their stamp replaced by .BACKUP~)."""
    tree = {}
    root = os.fsencode(root)
    for top, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(top, name)
            rel = BACKUP.sub(b'.BACKUP~', os.path.relpath(path, root))
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                data = os.readlink(path)
            elif stat.S_ISREG(st.st_mode):
                with open(path, 'rb') as handle:
                    data = handle.read()
            else:
                data = None
            entry = (stat.S_IFMT(st.st_mode), oct(stat.S_IMODE(st.st_mode)), data)
            tree[rel] = entry + ((st.st_uid, st.st_gid) if owners else ())
    return tree


def tree_diff(left, right):
    """A short account of how two snapshots differ ('' when equal)."""
    lines = []
    for rel in sorted(set(left) | set(right)):
        if left.get(rel) != right.get(rel):
            lines.append('%r: %r != %r' % (rel, left.get(rel) and left[rel][:2], right.get(rel) and right[rel][:2]))
    return '\n'.join(lines[:20])


def write(path, data, mode=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'wb') as handle:
        handle.write(data)
    if mode is not None:
        os.chmod(path, mode)
