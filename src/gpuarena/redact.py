"""Secrets out of everything gpuarena shows or keeps: the one function every output, message,
stored row and bundle passes a text through.

A password reaches gpuarena inside a URL (``--db postgresql://alice:PW@host/db``, an endpoint's
``base_url``) or as a ``password=`` parameter (a URL's query, a libpq connection string, a
driver's message that repeats either).  ``redact`` masks each form, whatever the scheme's case
and whether or not the password was percent-encoded: an unencoded ``#``, ``/``, ``?`` or ``@``
in a password is taken as part of it (the userinfo runs to the URL's last ``@``), so the mask
may cover more than the password, never less.  A caller that knows the password (the URL it
was given) also passes it, so a driver's message that quotes it decoded is masked too.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

MASK = "***"
SECRET_KEYS = ("password", "sslpassword", "passwd", "pwd")

# scheme:// and what follows up to a space, a quote or an angle bracket (a URL inside a message)
_URL = re.compile(r"(?i)([a-z][a-z0-9+.\-]*://)([^\s'\"<>`]*)")
# key=value outside a URL (a libpq connection string, a driver's message); quoted values whole
_KEYVAL = re.compile(r"(?i)(?<![a-z0-9_])((?:ssl)?pass(?:word|wd)|pwd)(\s*=\s*)('(?:[^'\\]|\\.)*'?|[^\s&'\"\\]+)")


def _url(m: re.Match) -> str:
    scheme, rest = m.group(1), m.group(2)
    at = rest.rfind("@")
    if at > 0:
        colon = rest.find(":", 0, at)
        if colon >= 0:
            rest = rest[:colon + 1] + MASK + rest[at:]
    head, q, query = rest.partition("?")
    if q:
        parts = []
        for item in query.split("&"):
            key, eq, _ = item.partition("=")
            secret = eq and unquote(key).strip().lower() in SECRET_KEYS
            parts.append(f"{key}={MASK}" if secret else item)
        rest = head + "?" + "&".join(parts)
    return scheme + rest


def passwords(url: str) -> list[str]:
    """The password(s) a URL carries, as written and decoded: what a driver may quote back."""
    found = []
    for m in _URL.finditer(url) if isinstance(url, str) else ():
        rest = m.group(2)
        at = rest.rfind("@")
        colon = rest.find(":", 0, at) if at > 0 else -1
        if colon >= 0:
            found.append(rest[colon + 1:at])
        for item in rest.partition("?")[2].split("&"):
            key, eq, value = item.partition("=")
            if eq and unquote(key).strip().lower() in SECRET_KEYS:
                found.append(value)
    return [s for p in found if p for s in {p, unquote(p)} if len(s) >= 4]


def redact(text, known: tuple[str, ...] | list[str] = ()) -> str:
    """text with every password masked: URL userinfo, ``password=`` in a query or a connection
    string, and each of ``known`` (the passwords the caller was given) wherever it appears."""
    s = str(text)
    for secret in sorted(known, key=len, reverse=True):
        if secret:
            s = s.replace(secret, MASK)
    if "://" in s:
        s = _URL.sub(_url, s)
    if "=" in s:
        s = _KEYVAL.sub(lambda m: m.group(1) + m.group(2) + MASK, s)
    return s


def has_secret(text) -> bool:
    """Whether redact would change text."""
    return isinstance(text, str) and redact(text) != text


def redact_tree(value):
    """A JSON-like value with every string redacted (dict keys included); the same object when
    nothing in it holds a secret, so a large clean result costs one walk and no copy."""
    if isinstance(value, str):
        if "://" not in value and "=" not in value:
            return value
        masked = redact(value)
        return value if masked == value else masked
    if isinstance(value, dict):
        out, changed = {}, False
        for k, v in value.items():
            k2, v2 = redact_tree(k), redact_tree(v)
            changed = changed or k2 is not k or v2 is not v
            out[k2] = v2
        return out if changed else value
    if isinstance(value, (list, tuple)):
        items = [redact_tree(v) for v in value]
        return type(value)(items) if any(a is not b for a, b in zip(items, value)) else value
    return value
