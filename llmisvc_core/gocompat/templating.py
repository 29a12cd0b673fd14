"""Template variables of LLMInferenceServiceConfig specs, rendered strictly (KServe's ``ReplaceVariables``).

KServe runs the merged config through Go's ``text/template`` with the service and a few global settings
as data. This renderer implements exactly the part of that language KServe's shipped configs and its
documentation use, and refuses anything else with an error naming the config and the expression:

* ``{{ .ObjectMeta.Name }}``, ``{{ .ObjectMeta.Namespace }}`` (also ``.Name``, ``.Namespace``);
* ``{{ .Spec.<Field>... }}``: the service's own spec (Go field names, e.g. ``.Spec.Model.Name``);
* ``{{ .GlobalConfig.<Field> }}`` for the fields KServe exposes (:data:`GLOBAL_FIELDS`);
* ``{{ ChildName <value> "-suffix" }}`` (string literals in double quotes or backquotes);
* ``{{ if <value> }}…{{ else }}…{{ end }}`` with Go's truthiness, and ``{{-``/``-}}`` whitespace trimming.

Printing a value that is absent is an error (Go would print ``<nil>`` into the object); ``if`` treats it
as false, as Go does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from llmisvc_core import naming
from llmisvc_core.errors import InvalidInputError

#: ``templateGlobalConfig``: the only settings KServe exposes to templates.
GLOBAL_FIELDS = (
    "SystemNamespace",
    "IngressGatewayName",
    "IngressGatewayNamespace",
    "EnableTLS",
    "ModelBasedRoutingHeaderName",
    "InferencePoolNamespacedName",
)
#: Go field names whose JSON name is not the name with a lowercase first letter.
_JSON_NAMES = {"URI": "uri", "LoRA": "lora", "HTTP": "http", "KVCacheOffloading": "kvCacheOffloading"}
_ACTION = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.DOTALL)
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|`[^`]*`|\S+')


class TemplateError(InvalidInputError):
    """A template the renderer does not support, or a value it cannot print."""


@dataclass(frozen=True)
class TemplateData:
    """What templates see: the service's name, namespace and spec, and the global settings."""

    name: str
    namespace: str
    spec: dict[str, Any]
    global_config: dict[str, Any]


def render_tree(value: Any, data: TemplateData, source: str) -> Any:
    """Every string in ``value`` rendered; ``source`` names the config in errors."""
    if isinstance(value, dict):
        return {k: render_tree(v, data, source) for k, v in value.items()}
    if isinstance(value, list):
        return [render_tree(v, data, source) for v in value]
    if isinstance(value, str) and "{{" in value:
        return render(value, data, source)
    return value


def render(text: str, data: TemplateData, source: str) -> str:
    parts = _split(text, source)
    out, rest = _render_block(parts, data, source, stop=())
    if rest:
        raise TemplateError(f"{source}: template {text!r}: unexpected {{{{ {rest[0][1]} }}}}")
    return out


def _split(text: str, source: str) -> list[tuple[str, str]]:
    """Text and actions in order: ``("text", s)`` or ``("action", expression)``, trims applied."""
    parts: list[tuple[str, str]] = []
    pos = 0
    for match in _ACTION.finditer(text):
        chunk = text[pos : match.start()]
        if match.group(1):
            chunk = chunk.rstrip()
        parts.append(("text", chunk))
        parts.append(("action", match.group(2).strip()))
        pos = match.end()
        if match.group(3):
            rest = text[pos:]
            pos += len(rest) - len(rest.lstrip())
    tail = text[pos:]
    if "{{" in tail or "}}" in tail:
        raise TemplateError(f"{source}: template {text!r}: unclosed action")
    parts.append(("text", tail))
    return parts


def _render_block(
    parts: list[tuple[str, str]], data: TemplateData, source: str, stop: tuple[str, ...]
) -> tuple[str, list[tuple[str, str]]]:
    """Render until an action in ``stop``; returns the text and the parts from that action on."""
    out: list[str] = []
    while parts:
        kind, body = parts[0]
        if kind == "text":
            out.append(body)
            parts = parts[1:]
            continue
        word = body.split(maxsplit=1)[0] if body else ""
        if word in stop:
            return "".join(out), parts
        if word == "if":
            text, parts = _render_if(body[2:].strip(), parts[1:], data, source)
            out.append(text)
            continue
        if word in ("else", "end"):
            raise TemplateError(f"{source}: unexpected {{{{ {body} }}}}")
        out.append(_print(_evaluate(body, data, source), body, source))
        parts = parts[1:]
    if stop:
        raise TemplateError(f"{source}: missing {{{{ end }}}}")
    return "".join(out), parts


def _render_if(
    condition: str, parts: list[tuple[str, str]], data: TemplateData, source: str
) -> tuple[str, list[tuple[str, str]]]:
    then, parts = _render_block(parts, data, source, stop=("else", "end"))
    otherwise = ""
    if parts[0][1] == "else":
        otherwise, parts = _render_block(parts[1:], data, source, stop=("end",))
    if parts[0][1] != "end":
        raise TemplateError(f"{source}: unexpected {{{{ {parts[0][1]} }}}}")
    chosen = then if _truthy(_evaluate(condition, data, source)) else otherwise
    return chosen, parts[1:]


def _evaluate(expression: str, data: TemplateData, source: str) -> Any:
    tokens = _TOKEN.findall(expression)
    if tokens and tokens[0] == "ChildName" and len(tokens) == 3:
        parent, suffix = (_operand(t, data, source, expression) for t in tokens[1:])
        if not isinstance(parent, str) or not isinstance(suffix, str):
            raise TemplateError(f"{source}: {{{{ {expression} }}}}: ChildName takes two strings")
        return naming.child_name(parent, suffix)
    if len(tokens) == 1:
        return _operand(tokens[0], data, source, expression)
    raise TemplateError(f"{source}: unsupported template expression {{{{ {expression} }}}}")


def _operand(token: str, data: TemplateData, source: str, expression: str) -> Any:
    if token[0] in '"`' and len(token) >= 2 and token[-1] == token[0]:
        return token[1:-1]
    if not token.startswith("."):
        raise TemplateError(f"{source}: unsupported template expression {{{{ {expression} }}}}")
    path = token[1:].split(".")
    head = path[0]
    if head == "ObjectMeta" and len(path) == 2 and path[1] in ("Name", "Namespace"):
        head, path = path[1], path[1:]
    if head in ("Name", "Namespace") and len(path) == 1:
        return data.name if head == "Name" else data.namespace
    if head == "GlobalConfig" and len(path) == 2 and path[1] in GLOBAL_FIELDS:
        return data.global_config.get(path[1])
    if head == "Spec" and len(path) >= 1:
        return _lookup(data.spec, path[1:])
    raise TemplateError(f"{source}: unsupported template expression {{{{ {expression} }}}}")


def _lookup(value: Any, path: list[str]) -> Any:
    for field in path:
        if not isinstance(value, dict):
            return None
        value = value.get(_JSON_NAMES.get(field, field[:1].lower() + field[1:]))
    return value


def _truthy(value: Any) -> bool:
    """Go's truth: false, 0, nil and empty strings, maps and lists are false."""
    return value is not None and value is not False and value not in (0, "", {}, [])


def _print(value: Any, expression: str, source: str) -> str:
    if value is None:
        raise TemplateError(f"{source}: {{{{ {expression} }}}} has no value")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value)
    raise TemplateError(f"{source}: {{{{ {expression} }}}} is not a printable value")
