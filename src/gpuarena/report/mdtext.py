"""Text from data (a bundle, a server, a user) made inert in Markdown: HTML would be rendered and a pipe
would end a table cell, so both become entities or escapes; one line."""

from __future__ import annotations


def escape(text) -> str:
    """A cell of GitHub-flavoured Markdown: ``&``, ``<`` and ``>`` as entities, ``|`` escaped, one line."""
    s = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return s.replace("|", "\\|").replace("\r", " ").replace("\n", " ").strip()


def inert(text) -> str:
    """``escape`` with a link's ``](`` broken (``]\\(``): no ``[text](url)`` link or image from data (a
    bracket alone stays as it is: it links nothing without a definition, which a line of data cannot start)."""
    return escape(text).replace("](", "]\\(")
