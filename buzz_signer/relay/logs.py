"""buzz-relay's log: plain text (the default) or one JSON object a line (`--log-format
json`, SPEC section 10), with the fields a line carries (`extra=`: the client's address, a
SQLSTATE, a duration) as keys of their own.

At info level a running relay says one line per HTTP request, per websocket connection
(opened; closed, with its duration and messages) and per membership write (its outcome).
Never a secret: the relay key's secret is not in any object a log line is made from.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

__all__ = ["LOG_FORMAT", "configure", "name_worker"]

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# What every LogRecord has: the rest are the `extra=` fields of the call.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message", "asctime", "taskName",
}  # fmt: skip


def fields(record: logging.LogRecord) -> dict[str, Any]:
    """The `extra=` fields of a record."""
    return {k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")}


class TextFormatter(logging.Formatter):
    """The plain format, the fields after the message as key=value."""

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        extra = fields(record)
        if extra:
            line += " " + " ".join(f"{k}={_text(v)}" for k, v in extra.items())
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (UTC, ISO 8601), level, logger, message, the fields, and
    the exception's traceback as `exception` when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry |= {k: v if isinstance(v, int | float | bool) or v is None else str(v)
                  for k, v in fields(record).items()}  # fmt: skip
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def _text(value: Any) -> str:
    text = str(value)
    return json.dumps(text) if not text or any(c.isspace() or c in '"=' for c in text) else text


def configure(level: str, fmt: str) -> None:
    """The root logger at `level`, in `fmt` ("text" or "json"), on standard error."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter(LOG_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # The pool's own warnings come once per connection attempt; an outage is one line at its
    # start and one at its end (outage.py).
    logging.getLogger("psycopg.pool").setLevel(logging.ERROR)
    # aiohttp's access log is ours (server.py), in the same format.
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)


class _Worker(logging.Filter):
    def __init__(self, number: int) -> None:
        super().__init__()
        self.number = number

    def filter(self, record: logging.LogRecord) -> bool:
        record.worker = self.number
        return True


def name_worker(number: int) -> None:
    """Every line of this process names its worker (--workers): `worker=N`."""
    for handler in logging.getLogger().handlers:
        handler.addFilter(_Worker(number))
