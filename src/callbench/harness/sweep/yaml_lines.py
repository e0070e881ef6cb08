"""YAML with line numbers: the plain value of a document and the line of every key and item in it.

A sweep file's errors name the line they are on, so the file is read twice from one parse: PyYAML's
node tree (whose marks hold the lines) and the values built from it. Paths are tuples of keys and
list indexes: ``("models", 2, "settings", "temperature")``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from callbench.errors import ConfigError

Path_ = tuple[str | int, ...]


class SweepError(ConfigError):
    """A bad sweep file: one line ``FILE:LINE: field 'PATH': what is wrong``."""


def field_name(path: Path_) -> str:
    """``models[2].settings.temperature`` for ``("models", 2, "settings", "temperature")``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


@dataclass
class Located:
    """A parsed YAML document: ``value``, and ``lines`` from a path to the line (1-based) it starts on."""

    file: Path
    value: Any
    lines: dict[Path_, int] = field(default_factory=dict)

    def line(self, path: Path_) -> int:
        """The line of ``path``, or of its closest enclosing key that has one (1 for the whole file)."""
        for end in range(len(path), 0, -1):
            if path[:end] in self.lines:
                return self.lines[path[:end]]
        return 1

    def error(self, path: Path_, message: str) -> SweepError:
        """The one-line error for the value at ``path``."""
        where = f" field {field_name(path)!r}:" if path else ""
        return SweepError(f"{self.file}:{self.line(path)}:{where} {message}")


def load_located(file: Path, text: str) -> Located:
    """Parse ``text`` (the content of ``file``); invalid YAML and duplicate keys are one line each."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise SweepError(f"{file}:1: the sweep file is empty")
        lines: dict[Path_, int] = {}
        _walk(file, node, (), lines)
        value = loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SweepError(f"{file}:{line}: not valid YAML: {problem}") from None
    finally:
        loader.dispose()
    return Located(file, value, lines)


def _walk(file: Path, node: yaml.Node, path: Path_, lines: dict[Path_, int]) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = str(key_node.value)
            line = key_node.start_mark.line + 1
            if key in seen:  # PyYAML keeps the last silently; a sweep must not lose a setting that way
                where = field_name((*path, key))
                raise SweepError(f"{file}:{line}: field {where!r}: given twice (first on line {seen[key]})")
            seen[key] = line
            lines[(*path, key)] = line
            _walk(file, value_node, (*path, key), lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(file, item, (*path, index), lines)
