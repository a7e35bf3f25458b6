"""Reading and writing files a user names, safely: one place for the rules.

Reading (read_bytes, and read_text, read_json, read_csv over it): a path is
opened without blocking, checked as a regular file on that descriptor, and
read under a size cap counted while reading (never trusted from stat); YAML is parsed without aliases (an alias bomb
expands a 1 KB file past gigabytes before any size check could see it) and
with a nesting bound (a deep file would overflow Python's stack).

Writing: never over a file that must survive (the database and its journal),
never a rename over something that is not a regular file (a device is
streamed to, a FIFO only while a process reads it; a folder is refused), never
over a symbolic link (the file it names is written), and a regular file is
replaced atomically (temporary file in the same folder, fsync, rename) so a
full disk leaves the previous file whole; a new file's mode follows the umask.
Every failure is one UserError line.
"""

from __future__ import annotations

import errno
import math
import os
import stat
import tempfile

from gpuarena import strictjson
from gpuarena.errors import UserError

MAX_DEPTH = 64


def _oserror(what: str, exc: OSError) -> UserError:
    reason = exc.strerror or exc.__class__.__name__
    if exc.errno == errno.ENAMETOOLONG:
        reason = "the path is too long"
    return UserError(f"{what}: {reason}")


def read_bytes(path: str, what: str, max_bytes: int, kind: str = "") -> bytes:
    """The bytes of a regular file, read through one descriptor: opened without blocking (a FIFO
    with no writer would wait forever), checked as a regular file on that descriptor (a device
    such as /dev/zero reports size 0 and never ends), and read up to max_bytes + 1, so the size
    limit holds whatever stat said or a writer does meanwhile."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise UserError(f"{what}: no such file (it does not exist)") from None
        if exc.errno == errno.EISDIR:
            raise UserError(f"{what}: not a regular file (a folder)") from None
        raise _oserror(what, exc) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UserError(f"{what}: not a regular file")
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise _oserror(what, exc) from None
    finally:
        os.close(fd)
    if size > max_bytes:
        raise UserError(f"{what}: larger than {max_bytes} bytes, the {kind + ' ' if kind else ''}limit")
    return b"".join(chunks)


def read_text(path: str, what: str, max_bytes: int, encoding: str = "utf-8", kind: str = "") -> str:
    """A regular file's text (utf-8-sig drops a spreadsheet's byte-order mark); kind names the
    file in the messages ("bundle": "not a bundle: invalid UTF-8 ...")."""
    data = read_bytes(path, what, max_bytes, kind)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise UserError(f"{what}: not a{' JSON ' + kind if kind == 'bundle' else ' text file'} "
                        f"(invalid UTF-8 at byte {exc.start})") from None


def read_json(path: str, what: str, max_bytes: int):
    """A JSON file's value: strict JSON (no NaN or Infinity), nesting bounded; UserError (one line)."""
    text = read_text(path, what, max_bytes)
    try:
        data = strictjson.loads(text)
    except ValueError as exc:
        raise UserError(f"{what}: not valid JSON ({str(exc).splitlines()[0][:200]})") from None
    except RecursionError:
        raise UserError(f"{what}: not valid JSON (nested too deeply)") from None
    if depth(data) > MAX_DEPTH:
        raise UserError(f"{what}: not valid JSON (nested deeper than {MAX_DEPTH} levels)")
    return data


# --- YAML --------------------------------------------------------------------

def _loader():
    import yaml

    class BoundedLoader(yaml.SafeLoader):
        """SafeLoader without aliases and with a nesting bound, checked while composing."""

        depth = 0

        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                mark = self.peek_event().start_mark
                raise yaml.composer.ComposerError(None, None, "aliases (*name) are not accepted", mark)
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(None, None, f"nested too deeply (over {MAX_DEPTH} levels)",
                                                  self.peek_event().start_mark)
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    return BoundedLoader


def load_yaml(text: str, origin: str):
    """yaml.safe_load without aliases and with bounded nesting; UserError (one line) for a bad file."""
    import yaml

    loader = _loader()(text)  # a SafeLoader subclass: no tags that construct objects
    try:
        return loader.get_single_data()
    except yaml.YAMLError as exc:
        first = " ".join(str(exc).split())[:200]
        raise UserError(f"{origin}: not valid YAML ({first})") from None
    except RecursionError:
        raise UserError(f"{origin}: not valid YAML (nested too deeply)") from None
    finally:
        loader.dispose()


def depth(x, limit: int = MAX_DEPTH) -> int:
    """Nesting depth of lists and dicts, counted without recursion (stops past limit)."""
    best, stack = 0, [(x, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            best = max(best, d)
            if best > limit:
                return best
            stack.extend((c, d + 1) for c in (v.values() if isinstance(v, dict) else v))
    return best


# --- writing -------------------------------------------------------------------

# The smallest magnitude a figure a user gives may have: a billionth of its unit (items/s, GB/s,
# dollars, hours).  Below it a value is no measurement, and its reciprocal (5e-324 is subnormal:
# 1/5e-324 is infinite) would print Infinity where a figure belongs.
MIN_MAGNITUDE = 1e-9


def finite(x: float | None, what: str, positive: bool = True, cap: float = 1e15) -> float | None:
    """A number a user gave, refused when NaN, infinite, out of range, (positive) <= 0, or a
    magnitude below MIN_MAGNITUDE that is not zero."""
    if x is None:
        return x
    if (not math.isfinite(x) or (positive and x <= 0) or abs(x) > cap
            or (x != 0 and abs(x) < MIN_MAGNITUDE)):
        raise UserError(f"{what} {x!r}: expected a finite number{' above 0' if positive else ''} "
                        f"from {MIN_MAGNITUDE:g} to {cap:g}")
    return x


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def write_text(path: str, text: str, what: str = "-o", protect: tuple[str, ...] = ()) -> str:
    """Write text to path as described in the module docstring; returns path.  A symbolic
    link is written through, never replaced; a new file gets the mode umask allows, as any
    file a program creates (a shared report stays readable)."""
    label = f"{what} {path}"
    for p in protect:
        for guarded in (p, p + "-wal", p + "-shm", p + "-journal"):
            if os.path.exists(guarded) and _same(path, guarded):
                raise UserError(f"{label}: that is the database; choose another file")
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise _oserror(label, exc) from None
    data = text.encode("utf-8")
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise UserError(f"{label}: is a folder; name a file")
    target = path
    if os.path.islink(path):
        real = os.path.realpath(path)
        if st is None or (stat.S_ISREG(st.st_mode) and os.path.exists(real) and _same(real, path)):
            target = real                     # the file the link names is replaced; the link stays
        elif stat.S_ISREG(st.st_mode):
            _stream(path, data, label, st)    # a file with no name to replace (a deleted one's fd)
            return path
    if st is not None and not stat.S_ISREG(st.st_mode):
        _stream(path, data, label, st)       # a device or a pipe (/dev/null, /dev/stdout)
        return path
    _replace(target, data, label, st)
    return path


def _stream(path: str, data: bytes, label: str, st) -> None:
    """Write to what is already there; a FIFO nobody reads is refused, not waited on forever."""
    import fcntl

    fifo = st is not None and stat.S_ISFIFO(st.st_mode)
    regular = st is not None and stat.S_ISREG(st.st_mode)
    try:
        fd = os.open(path, os.O_WRONLY | (os.O_NONBLOCK if fifo else 0) | (os.O_TRUNC if regular else 0)
                     | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise UserError(f"{label}: a FIFO that no process is reading; start the reader first") from None
        raise _oserror(label, exc) from None
    try:
        if fifo:
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except OSError as exc:
        raise _oserror(label, exc) from None
    finally:
        os.close(fd)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _replace(target: str, data: bytes, label: str, st) -> None:
    """A regular file replaced atomically: temporary file beside it, fsync, rename."""
    folder = os.path.dirname(os.path.abspath(target))
    if not os.path.isdir(folder):
        raise UserError(f"{label}: folder {folder} does not exist")
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".gpuarena-", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask())
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise _oserror(label, exc) from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


_CONTROL = {c: None for c in range(32) if c not in (9, 10)}
_CONTROL.update({127: None, **{c: None for c in range(0x80, 0xA0)}})
_CONTROL.update({c: None for c in (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))})


def printable(text: str) -> str:
    """Text without control characters (terminal escape codes) nor bidi controls (U+202E shows
    "gpu.exe" as "exe.upg"); newlines and tabs kept."""
    return text.translate(_CONTROL)


def read_csv(path: str, what: str, max_bytes: int, required: tuple[str, ...]) -> list[dict]:
    """Rows of a CSV file a user names: UTF-8 with or without a spreadsheet's byte-order mark,
    fields bounded, the required columns present; UserError (one line) for anything else."""
    import csv
    import io

    text = read_text(path, what, max_bytes, encoding="utf-8-sig")
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        missing = [c for c in required if c not in [f.strip() for f in reader.fieldnames or []]]
        if missing:
            raise UserError(f"{what}: missing column(s) {', '.join(missing)}; need {','.join(required)}")
        rows = [{(k or "").strip(): v for k, v in r.items()} for r in reader]
    except csv.Error as exc:
        raise UserError(f"{what}: not a CSV file ({str(exc)[:200]})") from None
    if not rows:
        raise UserError(f"{what}: no rows")
    return rows
