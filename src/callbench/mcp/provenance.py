"""The package a stdio MCP server was started from, where the command says it or this Python knows it.

Read from the command, never guessed:

* a console script of a distribution installed in this Python (``mcp-server-git``): the distribution
  whose ``console_scripts`` entry point has the program's name *and* whose files hold that very script;
* ``python -m MODULE`` with this Python's own interpreter: the distribution of the module's
  top-level package;
* ``npx [-y] @scope/pkg@1.2.3``, ``npx -p pkg@1.2.3 CMD``, ``uvx pkg==1.2`` / ``uvx pkg@1.2``,
  ``uvx --from pkg==1.2 CMD``, ``uv tool run ...``, ``pipx run [--spec] pkg==1.2``: the package
  named, with the version the spec pins (none pinned: the version is unknown, whatever was
  latest that day);
* ``node SCRIPT`` where SCRIPT is a file of an installed npm package
  (``.../node_modules/[@scope/]pkg/...``): that package and the version its ``package.json`` says.

Anything else (a script path, another interpreter, ``node server.js`` outside ``node_modules``, an
HTTP server) is unknown.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PackageRef:
    """A package a server came from: its name, its version (``None``: unknown), and how it was found."""

    name: str
    version: str | None
    via: str


_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?(\.exe)?$")
_PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*(==|@)\s*(?P<version>[^\s,;]+)$")
_BARE = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?$")
_NPX_VALUE_FLAGS = {"-p", "--package", "-c", "--call", "--registry", "--cache", "--userconfig"}
_UVX_VALUE_FLAGS = {
    "--from", "--with", "-w", "--python", "-p", "--index", "--index-url", "--extra-index-url",
    "--default-index", "--with-requirements", "--constraints", "-c", "--overrides", "--cache-dir",
}  # fmt: skip


def command_package(command: Sequence[str], env: Mapping[str, str] | None = None) -> PackageRef | None:
    """The package the stdio command ``command`` starts (``None``: unknown)."""
    if not command:
        return None
    program, args = command[0], list(command[1:])
    base = os.path.basename(program).lower().removesuffix(".cmd").removesuffix(".exe")
    if base == "npx":
        return _npx(args)
    if base == "uvx":
        return _uvx(args)
    if base == "uv" and args[:2] == ["tool", "run"]:
        return _uvx(args[2:])
    if base == "pipx" and args[:1] == ["run"]:
        return _pipx(args[1:])
    if base in ("node", "nodejs"):
        return _node_script(args)
    path = shutil.which(program, path=(env or {}).get("PATH"))
    if path is None:
        return None
    if _PYTHON.match(base):
        return _python_module(path, args)
    return _console_script(Path(path))


def _npx(args: list[str]) -> PackageRef | None:
    spec: str | None = None
    rest = iter(args)
    for word in rest:
        if word in ("-p", "--package"):
            spec = next(rest, None)
            break
        if word.startswith("--package="):
            spec = word.split("=", 1)[1]
            break
        if word in _NPX_VALUE_FLAGS:
            next(rest, None)
            continue
        if word.startswith("-"):
            continue
        spec = word
        break
    if not spec:
        return None
    # @scope/name@1.2.3, name@1.2.3, name: the version is after the last '@' that is not the first char
    at = spec.rfind("@")
    name, version = (spec[:at], spec[at + 1 :]) if at > 0 else (spec, None)
    if not name or name.startswith((".", "/")) or "://" in spec:  # a folder or a URL, not a package
        return None
    return PackageRef(name=name, version=version or None, via="npx")


def _node_script(args: list[str]) -> PackageRef | None:
    """``node [OPTIONS] SCRIPT``: the npm package under ``node_modules`` whose file SCRIPT is."""
    script = next((word for word in args if not word.startswith("-")), None)
    if script is None:
        return None
    parts = Path(script).parts
    if "node_modules" not in parts:
        return None
    at = len(parts) - 1 - parts[::-1].index("node_modules")  # the innermost package holds the script
    depth = 2 if at + 1 < len(parts) and parts[at + 1].startswith("@") else 1
    folder = Path(*parts[: at + 1 + depth])
    try:
        meta = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or meta.get("name") != "/".join(parts[at + 1 : at + 1 + depth]):
        return None  # not the package folder it seems to be
    name, version = str(meta["name"]), meta.get("version")
    return PackageRef(name=name, version=str(version) if version else None, via="node")


def _pip_spec(spec: str, via: str) -> PackageRef | None:
    pinned = _PIN.match(spec.strip())
    if pinned:
        return PackageRef(name=pinned["name"], version=pinned["version"], via=via)
    bare = _BARE.match(spec.strip())
    return PackageRef(name=bare["name"], version=None, via=via) if bare else None


def _uvx(args: list[str]) -> PackageRef | None:
    rest = iter(args)
    for word in rest:
        if word == "--from":
            value = next(rest, None)
            return _pip_spec(value, "uvx") if value else None
        if word.startswith("--from="):
            return _pip_spec(word.split("=", 1)[1], "uvx")
        if word in _UVX_VALUE_FLAGS:
            next(rest, None)
            continue
        if word.startswith("-"):
            continue
        return _pip_spec(word, "uvx")
    return None


def _pipx(args: list[str]) -> PackageRef | None:
    rest = iter(args)
    for word in rest:
        if word == "--spec":
            value = next(rest, None)
            return _pip_spec(value, "pipx") if value else None
        if word.startswith("--spec="):
            return _pip_spec(word.split("=", 1)[1], "pipx")
        if word.startswith("-"):
            continue
        return _pip_spec(word, "pipx")
    return None


def _python_module(path: str, args: list[str]) -> PackageRef | None:
    """``python -m MODULE`` run by this very interpreter (another one's packages are not known here)."""
    if os.path.abspath(path) != os.path.abspath(sys.executable):
        return None
    if "-m" not in args:
        return None
    index = args.index("-m")
    if index + 1 >= len(args):
        return None
    top = args[index + 1].split(".", 1)[0]
    from importlib import metadata

    names = metadata.packages_distributions().get(top) or []
    if len(set(names)) != 1:  # none, or several distributions share the package: not known
        return None
    name = names[0]
    try:
        return PackageRef(name=name, version=metadata.version(name), via="python -m")
    except metadata.PackageNotFoundError:
        return None


def _console_script(path: Path) -> PackageRef | None:
    """The installed distribution whose console script ``path`` is."""
    from importlib import metadata

    target = _resolved(path)
    for entry in metadata.entry_points(group="console_scripts", name=path.name.removesuffix(".exe")):
        dist = entry.dist
        if dist is None:
            continue
        for file in dist.files or ():
            if (
                file.name in (path.name, path.name + ".exe")
                and _resolved(Path(str(dist.locate_file(file)))) == target
            ):
                return PackageRef(name=dist.metadata["Name"], version=dist.version, via="console script")
    return None


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except OSError:
        return path.absolute()
