"""What the guest benchmarks (bench/guest.py, bench/bpftrace_fork.py) share."""
import os


def tracing_links(pid):
    """The tracing BPF links process `pid` holds (its fdinfo's link_type),
    -1 when the process is gone."""
    n = 0
    d = f"/proc/{pid}/fdinfo"
    try:
        fds = os.listdir(d)
    except OSError:
        return -1
    for fd in fds:
        try:
            with open(f"{d}/{fd}") as f:
                if "link_type:\ttracing" in f.read():
                    n += 1
        except OSError:
            pass
    return n
