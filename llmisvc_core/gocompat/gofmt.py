"""Go's text formatting, reproduced where KServe's messages depend on it (spec Appendix C)."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

_SIMPLE_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def quote(text: str) -> str:
    """Go's ``%q`` of a string: double-quoted with Go escapes; printable Unicode kept as-is."""
    return '"' + "".join(_escape(ch) for ch in text) + '"'


def _escape(ch: str) -> str:
    if ch in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[ch]
    code = ord(ch)
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte smuggled in by surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    if ch.isprintable() or unicodedata.category(ch) == "Zs":
        return ch if code < 0x80 or ch.isprintable() else _unicode_escape(code)
    return _unicode_escape(code)


def _unicode_escape(code: int) -> str:
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def status_value(status: str) -> str:
    """Go's ``%#v`` of a condition status value: the status quoted, e.g. ``"False"``."""
    return quote(status)


def string_list(items: Iterable[str]) -> str:
    """Go's ``%v`` of a string slice: ``[a b c]``, items unquoted."""
    return "[" + " ".join(items) + "]"
