"""A keep-alive HTTPS client for the proxy's tests, and the answers it reads."""

from __future__ import annotations

import http.client
import json
import ssl
from dataclasses import dataclass
from typing import Any


@dataclass
class Answer:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Client:
    """One persistent connection (as a pooled urllib3 connection is): requests go one after another."""

    def __init__(self, url: str, ca_file: str, agent: str = "proxy-test") -> None:
        host, port = url.removeprefix("https://").split(":")
        self.context = ssl.create_default_context(cafile=ca_file)
        self.connection = http.client.HTTPSConnection(host, int(port), context=self.context, timeout=10)
        self.agent = agent

    def request(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> Answer:
        data = json.dumps(body).encode() if body is not None and not isinstance(body, bytes) else body
        sent = {"User-Agent": self.agent, **({"Content-Type": "application/json"} if data else {})}
        self.connection.request(method, path, body=data, headers={**sent, **(headers or {})})
        response = self.connection.getresponse()
        return Answer(response.status, response.msg, response.read())

    def get(self, path: str, **headers: str) -> Answer:
        return self.request("GET", path, headers=headers)

    def open(self, method: str, path: str, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
        """Start a request and return the response unread (a watch, read event by event)."""
        self.connection.request(method, path, headers={"User-Agent": self.agent, **(headers or {})})
        return self.connection.getresponse()

    def close(self) -> None:
        self.connection.close()
