"""API keys: read from environment variables or a keys file, and kept out of every output.

Keys are looked up by environment-variable name (``OPENAI_API_KEY``...). When the variable is
unset, the keys file is read: ``$CALLBENCH_KEYS_FILE`` or ``~/.config/callbench/keys.toml``, a TOML
file with one table ``[keys]`` mapping variable names to values. Every key handed out is
remembered so that :func:`scrub` can blank it from error messages, logs and records, and
:func:`scrub_data` from model replies: an endpoint that echoes the key inside a normal reply must
not get it into ``records.jsonl``, the response cache or ``--watch`` output (the model wrapper
scrubs every turn before anyone sees or stores it).
"""

from __future__ import annotations

import json
import logging
import os
import re
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import TypeVar, cast

from pydantic import BaseModel

from callbench.errors import ConfigError
from callbench.types.jsoncodec import load_model, model_json_bytes

KEYS_FILE_ENV = "CALLBENCH_KEYS_FILE"
_MASK = "***"
# Keys shorter than this are not scrubbed: replacing "a" everywhere would wreck the text and
# such strings are not real secrets (local servers often take a dummy key such as "EMPTY").
_MIN_SECRET_LEN = 8
_known: set[str] = set()
_ordered: tuple[str, ...] = ()
_ordered_json: tuple[bytes, ...] = ()
"""The secrets of ``_ordered`` as they appear inside a JSON string, UTF-8."""
T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


def keys_file() -> Path:
    """Return the path of the keys file (it may not exist)."""
    override = os.environ.get(KEYS_FILE_ENV)
    if override:
        return Path(override).expanduser()
    return Path("~/.config/callbench/keys.toml").expanduser()


def _read_keys_file(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read keys file ({type(exc).__name__})") from None
    table = data.get("keys", {})
    if not isinstance(table, dict):
        raise ConfigError(f'{path}: [keys] must be a table of NAME = "value"')
    return {str(k): str(v) for k, v in table.items()}


def get_key(env_var: str | None, *, required: bool = True, purpose: str = "") -> str | None:
    """Return the secret stored under ``env_var`` and remember it for scrubbing.

    Args:
        env_var: Environment variable name, also the name used in the keys file.
        required: Raise :class:`ConfigError` when the key is missing.
        purpose: Words for the error message, e.g. ``"the openai provider"``.

    Returns:
        The key, or ``None`` when it is missing and not required.
    """
    if not env_var:
        return None
    value = os.environ.get(env_var) or _read_keys_file(keys_file()).get(env_var)
    if value:
        register_secret(value)
        install_log_scrubbing()
        return value
    if required:
        where = f" for {purpose}" if purpose else ""
        raise ConfigError(
            f"missing API key{where}: set the environment variable {env_var} "
            f"or add it under [keys] in {keys_file()}"
        )
    return None


KEY_SUFFIXES = ("_API_KEY", "_ACCESS_TOKEN", "_AUTH_TOKEN", "_SECRET_KEY")
"""Environment variables whose names end so hold credentials by convention (``HF_ACCESS_TOKEN``...)."""


def register_environment_keys(names: Iterable[str] = ()) -> int:
    """Remember every credential callbench can see, so that :func:`scrub` blanks it wherever it
    lands: the values of ``names`` (the documented key variables) and of every variable named like a
    key (:data:`KEY_SUFFIXES`) that is set, and every value of the keys file. An agent under test, a
    tool or a tool server may print any of them, whichever key the run itself uses.

    Returns how many secrets are known afterwards. A keys file that cannot be read is left to the
    command that needs a key from it (this call never fails a run that uses none).
    """
    wanted = set(names) | {name for name in os.environ if name.upper().endswith(KEY_SUFFIXES)}
    for name in wanted:
        value = os.environ.get(name)
        if value:
            register_secret(value)
    try:
        stored = _read_keys_file(keys_file())
    except ConfigError:
        stored = {}
    for value in stored.values():
        register_secret(value)
    if _known:
        install_log_scrubbing()
    return len(_known)


def scrub_json_bytes(data: bytes) -> bytes | None:
    """``data`` (UTF-8 JSON text) with every known secret blanked, or ``None`` when it holds none.

    A secret is searched for as JSON writes it inside a string (quotes, backslashes and control
    characters escaped), so the result is still valid JSON.
    """
    found = None
    for encoded in _ordered_json:
        if encoded in data:
            data = found = data.replace(encoded, _MASK.encode())
    if _blank_urls and b"@" in data:
        blanked = _URL_CREDENTIALS_BYTES.sub(rb"\g<head>" + _MASK.encode() + b"@", data)
        if blanked != data:
            found = blanked
    return found


def scrub_model(model: M) -> M:
    """``model`` itself when its JSON holds no known secret, else a copy with them blanked."""
    if not _known:
        return model
    cleaned = scrub_json_bytes(model_json_bytes(model))
    return model if cleaned is None else load_model(type(model), cleaned)


def register_secret(value: str) -> None:
    """Remember ``value`` so that :func:`scrub` removes it from any text."""
    global _ordered, _ordered_json
    if value and len(value) >= _MIN_SECRET_LEN and value not in _known:
        _known.add(value)
        # Longest first: a key that contains another known key is blanked whole.
        _ordered = tuple(sorted(_known, key=len, reverse=True))
        _ordered_json = tuple(json.dumps(secret, ensure_ascii=False)[1:-1].encode() for secret in _ordered)


def scrub(text: str) -> str:
    """Return ``text`` with every known secret replaced by ``***`` (and, once a URL with a password
    was seen, every URL's password)."""
    for secret in _ordered:
        if secret in text:
            text = text.replace(secret, _MASK)
    return blank_url_credentials(text) if _blank_urls else text


def has_secrets() -> bool:
    """True once a key has been handed out or a URL with a password seen (until then nothing needs
    scrubbing)."""
    return bool(_known) or _blank_urls


_URL_CREDENTIALS = re.compile(
    r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@\"'<>]*:)(?P<password>[^\s/@\"'<>]+)@"
)
"""``scheme://user:password@``: the password part of a URL's credentials."""
_URL_CREDENTIALS_BYTES = re.compile(_URL_CREDENTIALS.pattern.encode())
_blank_urls = False


def register_url_credentials(text: str) -> bool:
    """Blank from now on the password of every URL in ``text`` (``https://user:pass@host``), and
    every password written into any URL of any later text: a base URL may carry credentials, and
    they are kept out of every output like keys. Returns whether ``text`` held one."""
    global _blank_urls
    found = False
    for match in _URL_CREDENTIALS.finditer(text):
        found = True
        register_secret(match["password"])  # also where it appears alone (an error message)
    if found:
        _blank_urls = True
        install_log_scrubbing()
    return found


def has_blanked_url_password(text: str) -> bool:
    """True when ``text`` holds a URL whose password was blanked (``https://user:***@host``)."""
    return any(match["password"] == _MASK for match in _URL_CREDENTIALS.finditer(text))


def blank_url_credentials(text: str) -> str:
    """``text`` with the password of every URL's credentials replaced by ``***``."""
    return _URL_CREDENTIALS.sub(rf"\g<head>{_MASK}@", text) if "@" in text else text


def scrub_data(value: T) -> T:
    """Return ``value`` with every known secret blanked in all its strings, keys included.

    Walks dicts, lists and tuples (JSON-like data, e.g. a model turn's ``model_dump()``). Returns
    ``value`` itself when nothing changed, so callers can tell with ``is`` whether to rebuild.
    """
    if not _known:
        return value
    return cast(T, _scrub_value(value))


def _scrub_value(value: object) -> object:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        items = [(_scrub_value(k), _scrub_value(v)) for k, v in value.items()]
        pairs = zip(items, value.items(), strict=True)
        changed = any(k is not k0 or v is not v0 for (k, v), (k0, v0) in pairs)
        return dict(items) if changed else value
    if isinstance(value, (list, tuple)):
        parts = [_scrub_value(v) for v in value]
        if all(p is v for p, v in zip(parts, value, strict=True)):
            return value
        return parts if isinstance(value, list) else tuple(parts)
    return value


def _scrub_record(record: logging.LogRecord) -> None:
    message = record.getMessage()
    cleaned = scrub(message)
    if cleaned != message:
        record.msg, record.args = cleaned, None


_installed = False


def install_log_scrubbing() -> None:
    """Blank known secrets in every log record of the process, whatever logger emits it.

    A record factory is used rather than a logger filter because filters on a parent logger do
    not see records that propagate from child loggers.
    """
    global _installed
    if _installed:
        return
    previous = logging.getLogRecordFactory()

    def factory(*args: object, **kwargs: object) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        if _known:
            _scrub_record(record)
        return record

    logging.setLogRecordFactory(factory)
    _installed = True
