"""What the fault tests read of processes in /proc: a process's children, and whether it is
gone (not even a zombie)."""

from __future__ import annotations

from pathlib import Path


def _proc_state(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a process, None if it does not exist."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1])


def children_of(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            st = _proc_state(int(d.name))
            if st and st[1] == pid:
                out.append(int(d.name))
    return out


def gone(pid: int) -> bool:
    """No such process, not even a zombie: PostgreSQL's lock files name the old postmaster's
    pid, and a new postmaster refuses to start while kill(pid, 0) finds it (a zombie counts
    until its new parent, init, reaps it)."""
    return _proc_state(pid) is None
