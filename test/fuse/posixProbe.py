"""
Probes POSIX behaviour in the current directory and prints what a program observes, as JSON.
test/fuse/differential.test.ts runs it in a vault mount and in a plain directory and compares.

Times are reported to the nanosecond, as decimal strings (JSON numbers would lose digits in JS).
Times that the system takes from its clock (UTIME_NOW, a write) are reported as "in the call's
window". A failing call is reported as its errno name.
"""
import ctypes
import ctypes.util
import errno
import json
import os
import shutil
import socket
import stat
import threading
import time

libc = ctypes.CDLL(ctypes.util.find_library('c'), use_errno=True)


class Timespec(ctypes.Structure):
    _fields_ = [('tv_sec', ctypes.c_long), ('tv_nsec', ctypes.c_long)]


UTIME_NOW = (1 << 30) - 1
UTIME_OMIT = (1 << 30) - 2
AT_FDCWD = -100
MS = 10**6
# The kernel stamps UTIME_NOW with its coarse clock, which may lag time.time_ns() by a tick.
SLACK = 50 * MS


def utimensat(path, atime, mtime, fd=None):
    ts = (Timespec * 2)()
    for i, v in enumerate((atime, mtime)):
        if v == 'now':
            ts[i] = Timespec(0, UTIME_NOW)
        elif v == 'omit':
            ts[i] = Timespec(0, UTIME_OMIT)
        else:
            ts[i] = Timespec(v // 10**9, v % 10**9)
    rc = libc.futimens(fd, ts) if fd is not None else libc.utimensat(AT_FDCWD, path.encode(), ts, 0)
    if rc != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def ns(t):
    """A time as the probe reports it: exact nanoseconds, as a string."""
    return str(t)


def window():
    t0 = time.time_ns()
    return lambda ns: t0 - SLACK <= ns <= time.time_ns() + SLACK


out = {}


def case(name):
    def run(fn):
        try:
            out[name] = fn()
        except OSError as e:
            out[name] = errno.errorcode.get(e.errno, str(e.errno))
        return fn
    return run


A = 1262304000_123456789   # 2010-01-01T00:00:00.123456789Z
M = 1577836800_987654321   # 2020-01-01T00:00:00.987654321Z
A2 = 1262304000_000000001  # 1 ns past 2010-01-01
M2 = 1600000000_999999999  # 2020-09-13T12:26:40.999999999Z
FAR_A = 2**32 * 10**9 + 5 * MS + 123     # 2106, past the unsigned 32-bit second counter
FAR_M = 2**33 * 10**9 + 777 * MS + 456  # year 2242 (ext4 keeps times up to 2446)
OLD_A = -1234567890_123456789            # 1930-11-18T00:28:29.876543211Z, before the epoch
OLD_M = -1                               # 1969-12-31T23:59:59.999999999Z
os.umask(0o022)


@case('futimens after writes survives close')
def _():
    fd = os.open('after', os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(fd, b'x' * 300_000)
    utimensat(None, A, M, fd=fd)
    os.close(fd)
    st = os.stat('after')
    return [ns(st.st_atime_ns), ns(st.st_mtime_ns), st.st_size]


@case('futimens before writes: the writes move mtime, atime stays')
def _():
    fd = os.open('before', os.O_CREAT | os.O_WRONLY, 0o644)
    utimensat(None, A, M, fd=fd)
    inside = window()
    os.write(fd, b'y' * 70_000)
    os.close(fd)
    st = os.stat('before')
    return [ns(st.st_atime_ns), inside(st.st_mtime_ns), st.st_size]


@case('futimens far-future on an open descriptor after writes')
def _():
    fd = os.open('far-fd', os.O_CREAT | os.O_RDWR, 0o644)
    os.write(fd, b'z' * 10)
    utimensat(None, FAR_A, FAR_M, fd=fd)
    st_open = os.fstat(fd)
    os.close(fd)
    st = os.stat('far-fd')
    return [ns(st_open.st_atime_ns), ns(st_open.st_mtime_ns), ns(st.st_atime_ns), ns(st.st_mtime_ns)]


@case('utimensat with explicit ns: both times set, ctime moves to now')
def _():
    open('t', 'w').close()
    inside = window()
    utimensat('t', A, M)
    st = os.stat('t')
    return [ns(st.st_atime_ns), ns(st.st_mtime_ns), inside(st.st_ctime_ns)]


@case('utimensat far-future times are kept')
def _():
    utimensat('t', FAR_A, FAR_M)
    st = os.stat('t')
    return [ns(st.st_atime_ns), ns(st.st_mtime_ns), st.st_mtime_ns // 10**9]


@case('UTIME_NOW for both')
def _():
    utimensat('t', A, M)
    inside = window()
    utimensat('t', 'now', 'now')
    st = os.stat('t')
    return [inside(st.st_atime_ns), inside(st.st_mtime_ns)]


@case('UTIME_NOW for atime, explicit mtime')
def _():
    inside = window()
    utimensat('t', 'now', M)
    st = os.stat('t')
    return [inside(st.st_atime_ns), ns(st.st_mtime_ns)]


@case('explicit atime, UTIME_NOW for mtime')
def _():
    inside = window()
    utimensat('t', A, 'now')
    st = os.stat('t')
    return [ns(st.st_atime_ns), inside(st.st_mtime_ns)]


@case('UTIME_OMIT for both changes nothing')
def _():
    utimensat('t', A, M)
    utimensat('t', 'omit', 'omit')
    st = os.stat('t')
    return [ns(st.st_atime_ns), ns(st.st_mtime_ns)]


@case('UTIME_OMIT for atime, explicit mtime (tar x): atime stays, ctime moves')
def _():
    utimensat('t', A, M)
    inside = window()
    utimensat('t', 'omit', M2)
    st = os.stat('t')
    return [ns(st.st_atime_ns), ns(st.st_mtime_ns), inside(st.st_ctime_ns)]


@case('explicit atime, UTIME_OMIT for mtime: mtime stays')
def _():
    utimensat('t', A, M)
    utimensat('t', A2, 'omit')
    st = os.stat('t')
    return [ns(st.st_atime_ns), ns(st.st_mtime_ns)]


@case('UTIME_OMIT for atime, UTIME_NOW for mtime (touch -m)')
def _():
    utimensat('t', A, M)
    inside = window()
    utimensat('t', 'omit', 'now')
    st = os.stat('t')
    return [ns(st.st_atime_ns), inside(st.st_mtime_ns)]


@case('UTIME_NOW for atime, UTIME_OMIT for mtime (touch -a)')
def _():
    utimensat('t', A, M)
    inside = window()
    utimensat('t', 'now', 'omit')
    st = os.stat('t')
    return [inside(st.st_atime_ns), ns(st.st_mtime_ns)]


@case('futimens with UTIME_OMIT for atime on an open descriptor after writes')
def _():
    fd = os.open('omit-fd', os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(fd, b'w' * 200_000)
    before = os.fstat(fd).st_atime_ns
    utimensat(None, 'omit', M, fd=fd)
    os.close(fd)
    st = os.stat('omit-fd')
    return [st.st_atime_ns == before, ns(st.st_mtime_ns), st.st_size]


@case('nanoseconds round-trip (os.utime ns=, stat st_*time_ns)')
def _():
    got = []
    for a, m in ((A, M), (A2, M2), (10**9 + 1, 2 * 10**9 + 999_999_999)):
        os.utime('t', ns=(a, m))
        st = os.stat('t')
        got.append([ns(st.st_atime_ns), ns(st.st_mtime_ns)])
    return got


@case('times before 1970')
def _():
    os.utime('t', ns=(OLD_A, OLD_M))
    st = os.stat('t')
    utimensat('t', 'omit', OLD_A)
    st2 = os.stat('t')
    return [ns(st.st_atime_ns), ns(st.st_mtime_ns), ns(st2.st_atime_ns), ns(st2.st_mtime_ns)]


@case('a set-group-ID directory gives what is made in it its group, and new directories the bit')
def _():
    os.mkdir('sgid')
    os.chown('sgid', -1, 65534)
    os.chmod('sgid', 0o2775)
    open('sgid/f', 'w').close()
    os.mkdir('sgid/d')
    os.mkfifo('sgid/p')
    os.symlink('f', 'sgid/l')
    os.mkdir('plain')
    open('plain/f', 'w').close()
    out = {}
    for name in ('sgid/f', 'sgid/d', 'sgid/p', 'sgid/l', 'plain/f'):
        st = os.lstat(name)
        out[name] = [st.st_gid, oct(stat.S_IMODE(st.st_mode))]
    return out


@case('os.utime with times in seconds (utimes)')
def _():
    os.utime('t', (1000000000.5, 1100000000.25))
    st = os.stat('t')
    return [ns(st.st_atime_ns), ns(st.st_mtime_ns)]


@case('mkfifo: type, mode, and bytes through it')
def _():
    os.mkfifo('fifo', 0o640)
    st = os.lstat('fifo')
    got = []
    reader = threading.Thread(target=lambda: got.append(open('fifo', 'rb').read().decode()))
    reader.start()
    with open('fifo', 'wb') as w:
        w.write(b'through the pipe')
    reader.join(10)
    return [stat.S_ISFIFO(st.st_mode), oct(stat.S_IMODE(st.st_mode)), st.st_size, got, sorted(os.listdir('.')).count('fifo')]


@case('mkfifo over an existing name')
def _():
    os.mkfifo('t')


@case('Unix socket: bind, connect, send; the socket file stays after close')
def _():
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind('sock')
    srv.listen(1)
    cli = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    cli.connect('sock')
    conn, _ = srv.accept()
    cli.sendall(b'ping')
    data = conn.recv(16)
    for s in (conn, cli, srv):
        s.close()
    st = os.lstat('sock')
    try:
        socket.socket(socket.AF_UNIX).connect('sock')
        refused = 'connected'
    except OSError as e:
        refused = errno.errorcode[e.errno]
    os.unlink('sock')
    return [data.decode(), stat.S_ISSOCK(st.st_mode), refused, os.path.exists('sock')]


@case('bind over an existing name')
def _():
    socket.socket(socket.AF_UNIX).bind('t')


N255, N256, N1024, N1100 = 'n' * 255, 'n' * 256, 'n' * 1024, 'n' * 1100


def errname(fn):
    try:
        fn()
        return 'ok'
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


@case('name of 255 bytes works; longer names give ENAMETOOLONG for every call taking a path')
def _():
    os.mkdir('names')
    os.chdir('names')
    try:
        res = {'create 255': errname(lambda: open(N255, 'w').close()), 'stat 255': errname(lambda: os.stat(N255))}
        for label, name in (('256', N256), ('1024', N1024), ('1100', N1100)):
            res[label] = [
                errname(lambda: open(name).close()),
                errname(lambda: open(name, 'w').close()),
                errname(lambda: os.stat(name)),
                errname(lambda: os.lstat(name)),
                errname(lambda: os.mkdir(name)),
                errname(lambda: os.rmdir(name)),
                errname(lambda: os.unlink(name)),
                errname(lambda: os.rename(N255, name)),
                errname(lambda: os.rename(name, 'x')),
                errname(lambda: os.link(N255, name)),
                errname(lambda: os.symlink('target', name)),
                errname(lambda: os.readlink(name)),
                errname(lambda: os.chmod(name, 0o600)),
                errname(lambda: os.utime(name)),
                errname(lambda: os.truncate(name, 0)),
                errname(lambda: os.mkfifo(name)),
                errname(lambda: os.access(name, os.R_OK)),
                errname(lambda: os.listdir(name)),
                errname(lambda: os.stat(name + '/x')),
                errname(lambda: os.mkdir(N255 + '/' + name)),
            ]
        res['listing'] = sorted(os.listdir('.'))
        return res
    finally:
        os.chdir('..')


@case('a relative path under PATH_MAX reaches a file whose full path is longer than 4,096 bytes')
def _():
    os.mkdir('sub')
    os.chdir('sub')
    try:
        rel = '/'.join(['%03d' % i + 'd' * 197 for i in range(20)])  # 4,019 bytes
        os.makedirs(rel)
        name = rel + '/' + 'f' * 70  # 4,090 bytes
        with open(name, 'w') as f:
            f.write('deep')
        os.chdir(rel)
        # From here, the directory itself goes deeper still.
        os.mkdir('e' * 250)
        with open('e' * 250 + '/g', 'w') as f:
            f.write('deeper')
        deeper = open('e' * 250 + '/g').read()
        os.utime('e' * 250 + '/g', ns=(A, M))
        st = os.stat('e' * 250 + '/g')
        os.chdir(os.path.join(*(['..'] * 20)))
        result = [len(name.encode()), open(name).read(), deeper, ns(st.st_mtime_ns), sorted(os.listdir(rel))]
        shutil.rmtree(rel.split('/')[0])
        return result
    finally:
        os.chdir('..')


print(json.dumps(out, indent=1, sort_keys=True))
