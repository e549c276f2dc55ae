"""``python -I pdeathsig_exec.py PARENT_PID TOOL ARG...``: becomes ``TOOL ARG...`` (``execv``)
after asking Linux to SIGKILL this process when its parent dies (``prctl(PR_SET_PDEATHSIG)``,
which survives the exec). Exits 1 at once if the parent ``PARENT_PID`` is already gone (it died
before the request). Standard library only: started with ``-I``, it imports nothing of qmlir's.
"""

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def main() -> None:
    parent, tool, arguments = int(sys.argv[1]), sys.argv[2], sys.argv[2:]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)
    os.execv(tool, arguments)


if __name__ == "__main__":
    main()
