"""Go ``net/url`` parsing and rendering as discovery uses it (R-DISC-8 URL strings, R-CLS-1 hostnames)."""

from __future__ import annotations

import pytest

from llmisvc_core.gocompat import gourl


@pytest.mark.parametrize(
    ("raw", "rendered", "hostname", "path"),
    [
        ("http://203.0.113.1/", "http://203.0.113.1/", "203.0.113.1", "/"),
        ("http://203.0.113.1:8080/", "http://203.0.113.1:8080/", "203.0.113.1", "/"),
        ("http://[2001:db8::1]/", "http://[2001:db8::1]/", "2001:db8::1", "/"),
        ("https://[2001:db8::1]:8443/x", "https://[2001:db8::1]:8443/x", "2001:db8::1", "/x"),
        ("HTTP://h/", "http://h/", "h", "/"),
        ("http://h", "http://h", "h", ""),
        ("http://*.example.com/", "http://*.example.com/", "*.example.com", "/"),
        ("http://h/a b", "http://h/a%20b", "h", "/a b"),
        ("http://h/a%2Fb", "http://h/a%2Fb", "h", "/a/b"),
        ("http://h/%41", "http://h/%41", "h", "/A"),
        ("http://héllo/ü", "http://h%C3%A9llo/%C3%BC", "héllo", "/ü"),
        ("http://u:p@h:1/", "http://u:p@h:1/", "h", "/"),
        ("http://h/p?q=1#f g", "http://h/p?q=1#f%20g", "h", "/p"),
        ("http://h:/", "http://h:/", "h", "/"),
        ("http://[fe80::1%25eth0]/", "http://[fe80::1%25eth0]/", "fe80::1%eth0", "/"),
    ],
    ids=[
        "ipv4",
        "port",
        "ipv6",
        "ipv6_port",
        "scheme_lowercased",
        "no_path",
        "wildcard_host_accepted",
        "space_escaped",
        "valid_escape_kept",
        "unneeded_escape_kept",
        "non_ascii_escaped",
        "userinfo",
        "query_and_fragment",
        "empty_port",
        "zone",
    ],
)
def test_r_disc_8_parse_and_render_like_go(raw: str, rendered: str, hostname: str, path: str) -> None:
    parsed = gourl.parse(raw)
    assert (str(parsed), parsed.hostname(), parsed.path) == (rendered, hostname, path)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("://host/", 'parse "://host/": missing protocol scheme'),
        ("http://a b/", 'parse "http://a b/": invalid character " " in host name'),
        ("http://h:abc/", 'parse "http://h:abc/": invalid port ":abc" after host'),
        ("http://[::1/", "parse \"http://[::1/\": missing ']' in host"),
        ("http://[::1]x/", 'parse "http://[::1]x/": invalid port "x" after host'),
        ("http://h/%zz", 'parse "http://h/%zz": invalid URL escape "%zz"'),
        ("http://h/%4", 'parse "http://h/%4": invalid URL escape "%4"'),
        ("http://h%41/", 'parse "http://h%41/": invalid URL escape "%41"'),
        ("http://h/\x01", 'parse "http://h/\\x01": net/url: invalid control character in URL'),
        ("http://a<b@h/", 'parse "http://a<b@h/": net/url: invalid userinfo'),
        ("1http://h/", 'parse "1http://h/": first path segment in URL cannot contain colon'),
    ],
    ids=[
        "missing_scheme",
        "space_in_host",
        "bad_port",
        "unclosed_bracket",
        "junk_after_bracket",
        "bad_escape",
        "short_escape",
        "ascii_escape_in_host",
        "control_character",
        "bad_userinfo",
        "scheme_starting_with_digit",
    ],
)
def test_r_disc_8_parse_errors_use_go_texts(raw: str, message: str) -> None:
    with pytest.raises(gourl.GoURLError) as err:
        gourl.parse(raw)
    assert str(err.value) == message
