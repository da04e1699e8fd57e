"""Access to the compiled extension and small helpers shared by the modules."""
from __future__ import annotations

import datetime
import os
from typing import Any, Mapping

from ._bw import ffi, lib  # noqa: F401  (re-exported)
from ._errors import BreakwaterError, ConfigError

NS_PER_S = 1_000_000_000
NS_PER_MS = 1_000_000


def error_from(err: Any, fallback: str) -> BreakwaterError:
    """A Python exception from a filled bw_error_t."""
    message = ffi.string(err.message).decode("utf-8", "replace") or fallback
    field = ffi.string(err.field).decode("utf-8", "replace")
    if err.code == lib.BW_E_NOMEM:
        raise MemoryError(message)
    return ConfigError(message, field)


def c_text(field: str, value: Any) -> bytes:
    """``value``, a str without NUL characters, as the bytes a C string
    takes; TypeError or ValueError naming ``field`` otherwise."""
    if not isinstance(value, str):
        raise TypeError(f"{field} must be a str, not {type(value).__name__}")
    if "\x00" in value:
        raise ValueError(f"{field} must not contain a NUL character")
    return value.encode()


def c_path(path: Any) -> str:
    """A file path (a str or an os.PathLike) as a str a C string can
    carry; TypeError or ValueError naming ``path`` otherwise."""
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str):
        raise TypeError(f"path must be a str or a path, not {type(path).__name__}")
    if "\x00" in path:
        raise ValueError("path must not contain a NUL character")
    return path


def to_text(field: str, value: Any) -> bytes:
    """A keyword argument's value as the text bw_config_set reads."""
    if isinstance(value, bool):
        return b"true" if value else b"false"
    if isinstance(value, int):
        return str(value).encode()
    if isinstance(value, float):
        return repr(value).encode()
    if isinstance(value, str):
        if "\x00" in value:
            raise ValueError(f"{field} must not contain a NUL character")
        return value.encode("utf-8")
    if isinstance(value, datetime.timedelta):
        ms = value / datetime.timedelta(milliseconds=1)
        if ms != int(ms):
            raise ValueError(f"{field} must be a whole number of milliseconds (got {value!r})")
        return f"{int(ms)}ms".encode()
    raise TypeError(
        f"{field} must be a str, int, float, bool or timedelta, "
        f"not {type(value).__name__}")


def configure(kind: int, cfg: Any, fields: Mapping[str, Any], keep: list) -> None:
    """Sets each keyword argument through bw_config_set, then validates.

    Unknown fields raise TypeError (as an unexpected keyword argument would);
    refused values raise ConfigError (a ValueError) naming the field. `keep`
    receives the byte strings the config borrows (names)."""
    err = ffi.new("bw_error_t *")
    for field, value in fields.items():
        if value is None:
            continue
        text = to_text(field, value)
        keep.append(text)
        rc = lib.bw_config_set(kind, cfg, field.encode(), text, err)
        if rc == lib.BW_E_NOTFOUND:
            msg = ffi.string(err.message).decode("utf-8", "replace")
            raise TypeError(f"unexpected keyword argument '{field}': {msg}")
        if rc != lib.BW_OK:
            raise error_from(err, f"bad value for {field}")
    if lib.bw_config_validate(kind, cfg, err) != lib.BW_OK:
        raise error_from(err, "invalid configuration")

