"""The wire: strict pydantic models for every body, and their refusals in the one error shape.

Each request and response body is declared once, as a subclass of `Body` (strict: "125" is not
125, true is not 1, 1.0 is not 1; unknown fields refused; frozen). The same declaration is

- the reader: `read(Model, request.data)` validates with pydantic directly (no DRF serializer)
  and turns the first error into an `ApiError` whose `code` is the one the field declares and
  whose `param` is the field's path as clients know it (`seats[2].bets.ante_cents`);
- the OpenAPI schema: `extend_schema(request=Model, responses={200: Model})`, rendered by
  `core.openapi`;
- for answers, a test validates the service's real answers against it.

A field declares its error code with `Refusal(code)` in its `Annotated` metadata (and, for a
list, the codes of a wrong length); a model declares the code of a field it does not know in
`unknown_code`. What has no declaration of its own takes its parent's code.

Query strings are declared the same way (`Query`), read with `read_query`: integers are ASCII
digits only, times must carry their offset, and every refusal is `invalid_parameter`.

Answers are built from the same models: `Model.model_construct(...)` (the values come from our
own code, already known good: validation is for input) dumped with `model_dump(mode="json")`. A
time in an answer is declared `Instant`, which writes it as Python's `isoformat()` always has
(`+00:00`, where pydantic would write `Z`).
"""

from __future__ import annotations

import re
import types
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, Literal, TypeVar, Union, get_args, get_origin

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationError,
)
from pydantic.fields import FieldInfo

from core.codes import ErrorCode
from core.errors import ApiError

__all__ = [
    "DIGITS",
    "Body",
    "Exact",
    "Instant",
    "Moment",
    "NonBlank",
    "Query",
    "Refusal",
    "TimeText",
    "read",
    "read_query",
]


@dataclass(frozen=True, slots=True)
class Refusal:
    """Annotation metadata: the error code of a field, of a list of the wrong length, and of the
    field missing (when it is not the field's own code)."""

    code: ErrorCode
    too_short: ErrorCode | None = None
    too_long: ErrorCode | None = None
    missing: ErrorCode | None = None


class Body(BaseModel):
    """A JSON body as the API declares it: strict, closed, frozen."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    #: The code of a field this model does not declare.
    unknown_code: ClassVar[ErrorCode] = ErrorCode.UNKNOWN_FIELD
    #: A refusal of this body never repeats a value sent (it may be personal data: a winner's
    #: document number), only the field and the rule.
    withheld: ClassVar[bool] = False


M = TypeVar("M", bound=BaseModel)


def read(model: type[M], value: object, *, code: ErrorCode = ErrorCode.INVALID_REQUEST) -> M:
    """`value` (parsed JSON) as `model`, or an `ApiError` naming the first field at fault.

    `code` is the code of a body that is not an object at all.
    """
    try:
        return model.model_validate(value)
    except ValidationError as error:
        raise refusal(model, error, code=code) from None


def refusal(
    model: type[BaseModel], error: ValidationError, *, code: ErrorCode = ErrorCode.INVALID_REQUEST
) -> ApiError:
    """The first of pydantic's errors in the one error shape (see the module's docstring)."""
    errors = error.errors(include_url=False)
    first = errors[0]
    # As the readers always did: an object's unknown field is reported before its other faults.
    for candidate in errors:
        if candidate["type"] == "extra_forbidden" and _within(candidate["loc"][:-1], first["loc"]):
            first = candidate
            break
    loc, kind = tuple(first["loc"]), first["type"]
    if kind in _TAG_ERRORS:
        # A tagged union (a decision's `action`, a Play's `street`): the fault is the tag's field,
        # unless the object has a field no member knows, which is reported first as always.
        unknown = _unknown_key(model, loc, first["input"])
        if unknown is not None:
            loc, kind = (*loc, unknown), "extra_forbidden"
            replaced: Any = {**first, "type": kind, "loc": loc}
            first = replaced
        else:
            loc += (str(first["ctx"]["discriminator"]).strip("'"),)
    found, path = _code_at(model, loc, kind, code)
    param = _param(path)
    shown: Any = {**first, "input": _WITHHELD} if getattr(model, "withheld", False) else first
    return ApiError(found, _message(shown, param, path), param=param or None)


_TAG_ERRORS = ("union_tag_invalid", "union_tag_not_found")


def _unknown_key(model: type[BaseModel], loc: tuple[Any, ...], value: object) -> str | None:
    """A key of `value` (the object a tagged union at `loc` refused) no member declares."""
    if not isinstance(value, dict):
        return None
    known = {name for leaf in _leaves(_annotation_at(model, loc)) for name in leaf.model_fields}
    return next((key for key in value if key not in known), None)


def _annotation_at(model: type[BaseModel], loc: tuple[Any, ...]) -> Any:
    annotation: Any = model
    for key in loc:
        annotation, _ = _unwrap(annotation)
        if get_origin(annotation) in (Union, types.UnionType):
            member = _member(annotation, key)
            if member is not None:
                annotation = member
                continue
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = _field(annotation, key)
            annotation = field.annotation if field is not None else None
        elif get_origin(annotation) in (list, tuple):
            annotation = get_args(annotation)[0]
        elif get_origin(annotation) is dict:
            annotation = get_args(annotation)[1]
    return annotation


def _field(model: type[BaseModel], key: object) -> FieldInfo | None:
    """The field pydantic's error location names by `key`: its name, or its alias (`from`)."""
    found = model.model_fields.get(str(key))
    if found is None:
        found = next((f for f in model.model_fields.values() if f.alias == key), None)
    return found


def _leaves(annotation: Any) -> list[type[BaseModel]]:
    """The models a (nested) union is made of."""
    inner, _ = _unwrap(annotation)
    if isinstance(inner, type) and issubclass(inner, BaseModel):
        return [inner]
    if get_origin(inner) in (Union, types.UnionType):
        return [leaf for member in get_args(inner) for leaf in _leaves(member)]
    return []


def _within(parent: tuple[Any, ...], loc: tuple[Any, ...]) -> bool:
    return loc[: len(parent)] == parent


def _param(path: list[str | int]) -> str:
    text = ""
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else key)
    return text


def _message(error: Any, param: str, path: list[str | int]) -> str:
    kind = error["type"]
    where = param or "the body"
    if kind == "extra_forbidden":
        parent = _param(path[:-1]) or "the body"
        return f"unknown field {path[-1]!r} in {parent}"
    if kind in ("missing", "union_tag_not_found"):
        return f"{where} is required"
    if kind == "union_tag_invalid":
        expected = error["ctx"]["expected_tags"]
        return f"{where} must be one of {expected}, got {_shown(error['ctx']['tag'])}"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"{where} must be an object, got {_shown(error.get('input'))}"
    reason = str(error["msg"]).removeprefix("Value error, ")  # our own validators' words
    return f"{where}: {reason}, got {_shown(error.get('input'))}"


class _Withheld:
    def __repr__(self) -> str:
        return "a value not repeated here"


_WITHHELD = _Withheld()


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _refusals(metadata: Any) -> list[Refusal]:
    return [item for item in metadata if isinstance(item, Refusal)]


def _unwrap(annotation: Any) -> tuple[Any, list[Refusal]]:
    """The type under `Annotated[...]` (and under `X | None`), with the Refusals met."""
    found: list[Refusal] = []
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation, *metadata = get_args(annotation)
            found += _refusals(metadata)
        elif origin in (Union, types.UnionType):
            members = [arg for arg in get_args(annotation) if arg is not type(None)]
            if len(members) != 1:
                return annotation, found
            annotation = members[0]
        else:
            return annotation, found


def _member(union: Any, tag: object) -> Any | None:
    """The member of a union that pydantic's error location names by `tag`: its class name, or
    for a tagged union the value its discriminator field holds (a nested union: any member's)."""
    for member in get_args(union):
        inner, _ = _unwrap(member)
        if getattr(inner, "__name__", None) == tag or tag in _tags(inner):
            return member
    return None


def _tags(annotation: Any) -> set[object]:
    """The literal values the fields of a model (or of each member of a union) may hold."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        found: set[object] = set()
        for field in annotation.model_fields.values():
            inner, _ = _unwrap(field.annotation)
            if get_origin(inner) is Literal:
                found.update(get_args(inner))
        return found
    if get_origin(annotation) in (Union, types.UnionType):
        return set().union(*(_tags(_unwrap(member)[0]) for member in get_args(annotation)))
    return set()


def _code_at(
    model: type[BaseModel], loc: tuple[Any, ...], kind: str, default: ErrorCode
) -> tuple[ErrorCode, list[str | int]]:
    """Walk `loc` through the declaration: the innermost Refusal met gives the code."""
    annotation: Any = model
    refusal = Refusal(default)
    path: list[str | int] = []
    for key in loc:
        annotation, found = _unwrap(annotation)
        refusal = found[-1] if found else refusal
        if get_origin(annotation) in (Union, types.UnionType):
            member = _member(annotation, key)
            if member is not None:
                annotation = member
                continue  # a union's tag is not part of the field's path
            leaves = _leaves(annotation)
            if kind == "extra_forbidden" and leaves:  # a field no member of the union knows
                return getattr(leaves[0], "unknown_code", ErrorCode.UNKNOWN_FIELD), [*path, key]
        path.append(key)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = _field(annotation, key)
            if field is None:
                unknown = getattr(annotation, "unknown_code", ErrorCode.UNKNOWN_FIELD)
                return unknown, path
            found = _refusals(field.metadata)
            refusal = found[-1] if found else refusal
            annotation = field.annotation
        elif get_origin(annotation) in (list, tuple):
            annotation = get_args(annotation)[0]
        elif get_origin(annotation) is dict:
            annotation = get_args(annotation)[1]
    annotation, found = _unwrap(annotation)
    refusal = found[-1] if found else refusal
    if kind == "missing" and refusal.missing is not None:
        return refusal.missing, path
    if kind == "too_short" and refusal.too_short is not None:
        return refusal.too_short, path
    if kind == "too_long" and refusal.too_long is not None:
        return refusal.too_long, path
    return refusal.code, path


# Query strings --------------------------------------------------------------------------------

_DIGITS = re.compile(r"[0-9]{1,20}")  # enough for any bound; int() of 5,000 digits is slow


def _ascii_digits(value: object) -> object:
    # ASCII digits only: int() also takes " 5", "+5", "1_000" and other scripts' digits.
    if isinstance(value, str):
        if not _DIGITS.fullmatch(value):
            raise ValueError("must be a whole number written in digits 0-9")
        return int(value)
    return value


def _with_offset(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise ValueError("must be an ISO 8601 time with its offset, e.g. 2026-11-29T20:00:00Z")
    # In UTC: PostgreSQL takes offsets up to 15:59 only, RFC 3339 (and Python) up to 23:59.
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError("is out of range in UTC") from None


def _text_only(value: object) -> object:
    if not isinstance(value, str):
        raise ValueError(f"must be an ISO 8601 time in a string, got {type(value).__name__}")
    return value


def _exact(value: object) -> object:
    # A literal compares by ==: without this, 2.0 and True would pass for 2 and 1.
    if type(value) is not int and not isinstance(value, str):
        raise ValueError(f"must be an integer, got {type(value).__name__}")
    return value


#: Text that is not blank (it has a character Python's str.strip() keeps: \x1c-\x1f are
#: whitespace to Python, not to the regex engine) and holds no NUL (PostgreSQL refuses it; the
#: parser answers `malformed_json`, and the schema says so with this same pattern).
NonBlank = Annotated[
    str, Field(min_length=1, pattern=r"^[^\u0000]*[^\s\u0000\u001c-\u001f][^\u0000]*$")
]
#: A literal of ints with its JSON type exact: `Annotated[Literal[3, 4], Exact]`.
Exact = BeforeValidator(_exact)
#: A whole number in a query string is written in digits only: `Annotated[int, Field(...),
#: DIGITS]` (the bounds before, so the schema shows them).
DIGITS = BeforeValidator(_ascii_digits)
#: An ISO 8601 time with its offset, in a query string.
Moment = Annotated[datetime, AfterValidator(_with_offset)]
#: An ISO 8601 time with its offset, in a JSON body (a string: strict models take no text for a
#: datetime, and a number of seconds is refused too); written back in UTC as `Instant` is.
TimeText = Annotated[
    datetime,
    Field(strict=False),
    BeforeValidator(_text_only),
    AfterValidator(_with_offset),
    PlainSerializer(lambda moment: moment.isoformat(), when_used="json"),
]
#: A time in an answer, written as `datetime.isoformat()` writes it (`2026-11-29T21:41:01.249331
#: +00:00`; pydantic alone would write `Z`). A lambda, so that pydantic infers no return type and
#: the schema keeps `format: date-time`.
Instant = Annotated[datetime, PlainSerializer(lambda moment: moment.isoformat(), when_used="json")]


class Query(BaseModel):
    """A query string as the API declares it. Parameters it does not declare are ignored (a
    browser or a proxy may add its own), repeated ones count by their last value."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


Q = TypeVar("Q", bound=Query)


def read_query(model: type[Q], params: Mapping[str, str]) -> Q:
    """The query string as `model`, or `invalid_parameter` naming the parameter."""
    values = {name: params[name] for name in model.model_fields if name in params}
    # A field declared with an alias (`from`) is read by that name.
    for name, field in model.model_fields.items():
        if field.alias and field.alias in params:
            values.pop(name, None)
            values[field.alias] = params[field.alias]
    try:
        return model.model_validate_strings(values)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        param = str(first["loc"][0]) if first["loc"] else None
        if first["type"] == "missing":
            message = f"{param} is required"
        else:
            reason = str(first["msg"]).removeprefix("Value error, ")
            message = f"{param}: {reason}, got {_shown(first.get('input'))}"
        raise ApiError(ErrorCode.INVALID_PARAMETER, message, param=param) from None
