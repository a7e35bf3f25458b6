"""Reading and writing files a user names, safely: one place for the rules.

Reading: a path is checked (exists, is a regular file, its name not too long)
and read under a size cap; YAML is parsed without aliases (an alias bomb
expands a 1 KB file past gigabytes before any size check could see it) and
with a nesting bound (a deep file would overflow Python's stack).

Writing: never over a file that must survive (the database and its journal),
never a rename over something that is not a regular file (a device is
streamed to; a folder is refused), and a regular file is replaced atomically
(temporary file in the same folder, fsync, rename) so a full disk leaves the
previous file whole.  Every failure is one UserError line.
"""

from __future__ import annotations

import errno
import math
import os
import stat
import tempfile

from gpuarena.errors import UserError

MAX_DEPTH = 64


def _oserror(what: str, exc: OSError) -> UserError:
    reason = exc.strerror or exc.__class__.__name__
    if exc.errno == errno.ENAMETOOLONG:
        reason = "the path is too long"
    return UserError(f"{what}: {reason}")


def check_readable(path: str, what: str, max_bytes: int, kind: str = "") -> int:
    """The size of a regular file at path; a UserError for anything else."""
    try:
        st = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise UserError(f"{what}: no such file (it does not exist)") from None
        raise _oserror(what, exc) from None
    if not stat.S_ISREG(st.st_mode):
        raise UserError(f"{what}: not a regular file")
    if st.st_size > max_bytes:
        raise UserError(f"{what}: {st.st_size} bytes is larger than {max_bytes} bytes, the {kind}limit")
    return st.st_size


def read_text(path: str, what: str, max_bytes: int, encoding: str = "utf-8", kind: str = "") -> str:
    """A regular file's text (utf-8-sig drops a spreadsheet's byte-order mark); kind names the
    file in the messages ("bundle": "not a bundle: invalid UTF-8 ...")."""
    check_readable(path, what, max_bytes, kind + " " if kind else "")
    try:
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as exc:
        raise _oserror(what, exc) from None
    if len(data) > max_bytes:
        raise UserError(f"{what}: larger than the {max_bytes}-byte limit")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise UserError(f"{what}: not a{' JSON ' + kind if kind == 'bundle' else ' text file'} "
                        f"(invalid UTF-8 at byte {exc.start})") from None


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

def finite(x: float | None, what: str, positive: bool = True, cap: float = 1e15) -> float | None:
    """A number a user gave, refused when NaN, infinite, out of range or (positive) <= 0."""
    if x is None:
        return x
    if not math.isfinite(x) or (positive and x <= 0) or abs(x) > cap:
        raise UserError(f"{what} {x!r}: expected a finite number{' above 0' if positive else ''} "
                        f"no larger than {cap:g}")
    return x


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def write_text(path: str, text: str, what: str = "-o", protect: tuple[str, ...] = ()) -> str:
    """Write text to path as described in the module docstring; returns path."""
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
    if st is not None and not stat.S_ISREG(st.st_mode):
        # A device or a pipe (/dev/null, /dev/stdout): stream to it, never rename over it.
        try:
            with open(path, "wb") as f:
                f.write(data)
        except OSError as exc:
            raise _oserror(label, exc) from None
        return path
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UserError(f"{label}: folder {folder} does not exist")
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".gpuarena-", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if st is not None:
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise _oserror(label, exc) from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return path


_CONTROL = {c: None for c in range(32) if c not in (9, 10)}
_CONTROL.update({127: None, **{c: None for c in range(0x80, 0xA0)}})


def printable(text: str) -> str:
    """Text without control characters (terminal escape codes); newlines and tabs kept."""
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
