"""Go's ``net/url`` parsing and rendering, as far as KServe's discovered URLs depend on it.

KServe builds every advertised URL as a string, parses it with ``url.Parse`` and stores the parsed
value's ``String()``; classification then reads ``Hostname()`` and ``Path``. Python's ``urllib`` differs
in what it accepts, how it escapes and what its errors say, so this module reproduces the Go behaviour
for the shapes that occur here (``scheme://[userinfo@]host[:port]/path[?query][#fragment]``). Strings
are treated as UTF-8; every non-ASCII byte is escaped on output, as Go does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from llmisvc_core.errors import InvalidInputError
from llmisvc_core.gocompat.gofmt import quote

_HOST_SUB_DELIMS = frozenset("!$&'()*+,;=:[]<>\"")
_UNRESERVED_MARKS = frozenset("-_.~")
_RESERVED = frozenset("$&+,/:;=?@")
_FRAGMENT_KEEP = frozenset("!()*")
_VALID_ENCODED_EXTRA = frozenset("!$&'()*+,;=:@[]%")
_USERINFO_EXTRA = frozenset("-._:~!$&'()*+,;=%@")
_HEX = frozenset("0123456789abcdefABCDEF")

PATH, HOST, ZONE, USERINFO, FRAGMENT = "path", "host", "zone", "userinfo", "fragment"


class GoURLError(InvalidInputError):
    """A parse failure; ``str()`` is Go's ``*url.Error`` text: ``parse "://h/": missing protocol scheme``."""


class _ReasonError(Exception):
    """The inner error of a parse failure, before Go wraps it with the operation and the URL."""


@dataclass(frozen=True)
class GoURL:
    """A parsed URL with Go's field semantics: ``host`` and ``path`` are unescaped."""

    scheme: str = ""
    opaque: str = ""
    user: str | None = None  # userinfo as Go re-renders it
    host: str = ""
    path: str = ""
    raw_path: str = ""
    force_query: bool = False
    raw_query: str = ""
    fragment: str = ""
    raw_fragment: str = ""

    def hostname(self) -> str:
        """Go's ``URL.Hostname()``: the host without a valid ``:port`` suffix and without IPv6 brackets."""
        host = self.host
        colon = host.rfind(":")
        if colon != -1 and _is_optional_port(host[colon:]):
            host = host[:colon]
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        return host

    def escaped_path(self) -> str:
        if _is_valid_spelling(self.raw_path, self.path, PATH):
            return self.raw_path
        return "*" if self.path == "*" else _escape(self.path, PATH)

    def __str__(self) -> str:
        out = f"{self.scheme}:" if self.scheme else ""
        if self.opaque:
            out += self.opaque
        else:
            out += self._authority()
            path = self.escaped_path()
            if path and path[0] != "/" and self.host:
                out += "/"
            if not out and ":" in path.partition("/")[0]:
                out += "./"  # a relative path whose first segment has a colon would read as a scheme
            out += path
        if self.force_query or self.raw_query:
            out += "?" + self.raw_query
        if self.fragment:
            valid = _is_valid_spelling(self.raw_fragment, self.fragment, FRAGMENT)
            out += "#" + (self.raw_fragment if valid else _escape(self.fragment, FRAGMENT))
        return out

    def _authority(self) -> str:
        if not (self.scheme or self.host or self.user is not None):
            return ""
        out = "//" if self.host or self.path or self.user is not None else ""
        if self.user is not None:
            out += self.user + "@"
        return out + _escape(self.host, HOST)


def parse(raw: str) -> GoURL:
    """Go's ``url.Parse``; raises :class:`GoURLError` with Go's message."""
    head, _, frag = raw.partition("#")
    try:
        url = _parse(head)
    except _ReasonError as reason:
        raise GoURLError(f"parse {quote(head)}: {reason}") from None
    if not frag:
        return url
    try:
        fragment = _unescape(frag, FRAGMENT)
    except _ReasonError as reason:
        raise GoURLError(f"parse {quote(raw)}: {reason}") from None
    raw_fragment = "" if _escape(fragment, FRAGMENT) == frag else frag
    return replace(url, fragment=fragment, raw_fragment=raw_fragment)


def _parse(raw: str) -> GoURL:
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw):
        raise _ReasonError("net/url: invalid control character in URL")
    if raw == "*":
        return GoURL(path="*")
    scheme, rest = _split_scheme(raw)
    force_query, raw_query = False, ""
    if rest.endswith("?") and rest.count("?") == 1:
        force_query, rest = True, rest[:-1]
    else:
        rest, _, raw_query = rest.partition("?")
    if not rest.startswith("/"):
        if scheme:
            return GoURL(scheme=scheme, opaque=rest, force_query=force_query, raw_query=raw_query)
        if ":" in rest.partition("/")[0]:
            raise _ReasonError("first path segment in URL cannot contain colon")
    user, host = None, ""
    if rest.startswith("//") and (scheme or not rest.startswith("///")):
        authority, slash, tail = rest[2:].partition("/")
        user, host = _parse_authority(authority)
        rest = slash + tail
    path = _unescape(rest, PATH)
    raw_path = "" if _escape(path, PATH) == rest else rest
    return GoURL(scheme, "", user, host, path, raw_path, force_query, raw_query)


def _split_scheme(raw: str) -> tuple[str, str]:
    for i, c in enumerate(raw):
        if c.isascii() and c.isalpha():
            continue
        if c.isascii() and (c.isdigit() or c in "+-."):
            if i == 0:
                return "", raw
            continue
        if c == ":":
            if i == 0:
                raise _ReasonError("missing protocol scheme")
            return raw[:i].lower(), raw[i + 1 :]
        return "", raw
    return "", raw


def _parse_authority(authority: str) -> tuple[str | None, str]:
    at = authority.rfind("@")
    host = _parse_host(authority[at + 1 :])
    if at < 0:
        return None, host
    userinfo = authority[:at]
    if not all((c.isascii() and c.isalnum()) or c in _USERINFO_EXTRA for c in userinfo):
        raise _ReasonError("net/url: invalid userinfo")
    username, colon, password = userinfo.partition(":")
    rendered = _escape(_unescape(username, USERINFO), USERINFO)
    if colon:
        rendered += ":" + _escape(_unescape(password, USERINFO), USERINFO)
    return rendered, host


def _parse_host(host: str) -> str:
    if host.startswith("["):
        end = host.rfind("]")
        if end < 0:
            raise _ReasonError("missing ']' in host")
        _check_port(host[end + 1 :])
        zone = host.find("%25", 0, end)
        if zone >= 0:
            return (
                _unescape(host[:zone], HOST) + _unescape(host[zone:end], ZONE) + _unescape(host[end:], HOST)
            )
    elif (colon := host.rfind(":")) != -1:
        _check_port(host[colon:])
    return _unescape(host, HOST)


def _check_port(colon_port: str) -> None:
    if not _is_optional_port(colon_port):
        raise _ReasonError(f"invalid port {quote(colon_port)} after host")


def _is_optional_port(port: str) -> bool:
    return port == "" or (port[0] == ":" and all("0" <= c <= "9" for c in port[1:]))


def _should_escape(c: str, mode: str) -> bool:
    if c.isascii() and c.isalnum():
        return False
    if mode in (HOST, ZONE) and c in _HOST_SUB_DELIMS:
        return False
    if c in _UNRESERVED_MARKS:
        return False
    if c in _RESERVED:
        if mode == PATH:
            return c == "?"
        if mode == USERINFO:
            return c in "@/?:"
        return mode != FRAGMENT
    return not (mode == FRAGMENT and c in _FRAGMENT_KEEP)


def _unescape(text: str, mode: str) -> str:
    out, i = bytearray(), 0
    while i < len(text):
        c = text[i]
        if c == "%":
            seq = text[i : i + 3]
            if len(seq) < 3 or seq[1] not in _HEX or seq[2] not in _HEX:
                raise _ReasonError(f"invalid URL escape {quote(seq)}")
            value = int(seq[1:], 16)
            if mode == HOST and value < 0x80 and seq != "%25":
                raise _ReasonError(f"invalid URL escape {quote(seq)}")
            if mode == ZONE and seq != "%25" and value != 0x20 and _should_escape(chr(value), HOST):
                raise _ReasonError(f"invalid URL escape {quote(seq)}")
            out.append(value)
            i += 3
            continue
        if mode in (HOST, ZONE) and c.isascii() and _should_escape(c, mode):
            raise _ReasonError(f"invalid character {quote(c)} in host name")
        out += c.encode("utf-8", "surrogateescape")
        i += 1
    return out.decode("utf-8", "surrogateescape")


def _escape(text: str, mode: str) -> str:
    parts: list[str] = []
    for c in text:
        if _should_escape(c, mode):
            parts.extend(f"%{b:02X}" for b in c.encode("utf-8", "surrogateescape"))
        else:
            parts.append(c)
    return "".join(parts)


def _is_valid_spelling(raw: str, decoded: str, mode: str) -> bool:
    """Whether Go's ``EscapedPath``/``EscapedFragment`` keeps the original spelling ``raw``."""
    if not raw or not all(c in _VALID_ENCODED_EXTRA or not _should_escape(c, mode) for c in raw):
        return False
    try:
        return _unescape(raw, mode) == decoded
    except _ReasonError:
        return False
