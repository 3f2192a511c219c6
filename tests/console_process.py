"""A child process whose console lines a thread collects, for the tests that boot a target
(the host build, QEMU): `ready` is set at the first line matching a pattern, or when it exits.
The child dies with the test process (litedav.sim.run.die_with_parent)."""
import subprocess
import threading

from litedav.sim.run import die_with_parent


class ConsoleProcess:
    def __init__(self, cmd, ready_line, what, env=None):
        self.what = what
        self.ready_line = ready_line
        self.console = []
        self.ready = threading.Event()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True, errors="replace",
                                     preexec_fn=die_with_parent, env=env)
        self.reader = threading.Thread(target=self._reader, daemon=True)
        self.reader.start()

    def _reader(self):
        for line in self.proc.stdout:
            line = line.rstrip("\r\n")
            self.console.append(line)
            if self.ready_line.match(line):
                self.ready.set()
        self.ready.set()  # exited: stop waiting

    def wait_ready(self, timeout):
        assert self.ready.wait(timeout) and self.proc.poll() is None, \
            f"{self.what} did not come up:\n" + "\n".join(self.console)
