"""Log lines for machines and for people: one JSON object per line, or the plain text of old.

`LOG_FORMAT=json` (production: deploy/env.example) makes every handler of the settings' LOGGING,
the Celery worker's (config.celery) and gunicorn's error and access logs (deploy/gunicorn.conf.py)
write `JsonFormatter`'s lines; `text` (the default, for `make run` and the tests) writes
`TEXT_FORMAT`. Both carry the request id (core.request_id) of the request or task the line was
written for: `configure` (Django's LOGGING_CONFIG, the worker's logging) stamps it on each record
as the record is made.

Invariants of a JSON line:
- one line per record: the exception's traceback is a field, never more lines, and every text is
  escaped by json.dumps (a newline in a message cannot forge a second record);
- always `time` (UTC, ISO 8601 with milliseconds and Z), `level`, `logger`, `message`; `request_id`
  when there is one; `exception` when the record has one; for gunicorn's access log, the request's
  `method`, `path`, `status`, `duration_ms`, `remote_addr`, `bytes` and `request_id` (the one the
  response carried: the access line is written after the request's context is gone).

This module needs no Django settings or apps: gunicorn's master, which never sets Django up,
uses it.
"""

from __future__ import annotations

import json
import logging
import logging.config
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from core import request_id

TEXT_FORMAT = "%(asctime)s.%(msecs)03dZ %(levelname)s %(name)s [%(request_id)s] %(message)s"
TEXT_DATE_FORMAT = "%Y-%m-%dT%H:%M:%S"
ACCESS_LOGGER = "gunicorn.access"


def _access_fields(atoms: Mapping[str, Any]) -> dict[str, Any]:
    """gunicorn's access atoms (glogging.Logger.atoms) as named fields."""
    bytes_sent = atoms.get("B")
    return {
        "method": atoms.get("m"),
        "path": atoms.get("U"),
        "status": int(atoms["s"]) if str(atoms.get("s", "")).isdigit() else atoms.get("s"),
        "duration_ms": round(int(atoms.get("D") or 0) / 1000, 3),
        "remote_addr": atoms.get("h"),
        "bytes": bytes_sent if isinstance(bytes_sent, int) else None,
        "user_agent": atoms.get("a"),
    }


def _request_id(record: logging.LogRecord) -> str | None:
    """The id the record was stamped with as it was made (`configure`); a record made before
    that (gunicorn's master, a library configured first) is formatted in its own context."""
    if not hasattr(record, "request_id"):
        return request_id.current()
    stamped = record.request_id
    # "-": TextFormatter's placeholder, when one record is formatted twice
    return stamped if isinstance(stamped, str) and stamped != "-" else None


class JsonFormatter(logging.Formatter):
    """A record as one JSON object on one line (see the module's invariants)."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = datetime.fromtimestamp(record.created, tz=UTC)
        line: dict[str, Any] = {
            "time": stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
        }
        if record.name == ACCESS_LOGGER and isinstance(record.args, Mapping):
            atoms = record.args
            line["message"] = f"{atoms.get('m')} {atoms.get('U')} {atoms.get('s')}"
            line.update(_access_fields(atoms))
            sent = request_id.well_formed(atoms.get("{x-request-id}o"))
            if sent:
                line["request_id"] = sent
        else:
            line["message"] = record.getMessage()
            stamped = _request_id(record)
            if stamped:
                line["request_id"] = stamped
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """The plain line: UTC time, level, logger, [request id or -], message."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT, TEXT_DATE_FORMAT)
        self.converter = time.gmtime

    def format(self, record: logging.LogRecord) -> str:
        record.request_id = _request_id(record) or "-"
        return super().format(record)


def configure(config: dict[str, Any]) -> None:
    """Django's LOGGING_CONFIG (and the Celery worker's logging, config.celery): every record is
    stamped with the request id as it is made, in the request's or the task's own context, so
    the id is right whenever and wherever the record is formatted; then `config` is applied."""
    _stamp_records()
    logging.config.dictConfig(config)


def _stamp_records() -> None:
    made = logging.getLogRecordFactory()
    if getattr(made, "stamps_request_id", False):
        return

    def stamped(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = made(*args, **kwargs)
        record.request_id = request_id.current()
        return record

    stamped.stamps_request_id = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(stamped)


def formatter_config(log_format: str) -> dict[str, Any]:
    """The dictConfig entry of the formatter for `log_format` ("json" or "text")."""
    if log_format == "json":
        return {"()": JsonFormatter}
    if log_format == "text":
        return {"()": TextFormatter}
    raise ValueError(f"LOG_FORMAT must be json or text, not {log_format!r}")
