"""A Python client generated from the service's own OpenAPI schema, and a driver that holds every
call to what issue 10 asks: each body sent is one of the client's typed request models, each answer
parses into the client's typed models (no untyped object, no key the schema does not declare, money
as ints), and parsing loses nothing (`parsed.to_dict()` gives back the JSON received).

The client is made by `openapi-python-client` (a dev dependency: nothing is fetched at test time)
from the schema `manage.py spectacular` writes, with `--meta none` (a bare package, no project
files) and no post-hooks (no `ruff --fix` on the output). `generate` takes about a second.

`Api` drives a live server through the generated functions (`api/<tag>/<operation_id>.py`,
`sync_detailed`). It records what breaks the contract as problems and goes on with the raw JSON
where the typed model fails, so one run lists every lie of the schema met on the way; `finish()`
then fails with all of them. A status other than the one the flow expects stops the flow at once.
"""

from __future__ import annotations

import enum
import importlib
import inspect
import json
import pkgutil
import subprocess
import sys
import types
import typing
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs
import httpx

PACKAGE = "jackpot_generated_client"
# Amounts and counts the flows read: each must be a JSON integer wherever it appears.
INT_FIELDS = frozenset(
    {"id", "seat", "sequence", "count", "limit", "offset", "stakes", "rank", "pool"}
)


def generate(directory: Path) -> tuple[types.ModuleType, str]:
    """Dump the schema, generate the client package into `directory`, import it.

    Returns the package and what the generator printed (its warnings about parts of the schema it
    could not turn into code)."""
    from django.core.management import call_command

    schema = directory / "openapi.json"
    call_command("spectacular", "--format", "openapi-json", "--file", str(schema))
    config = directory / "generator.yaml"
    config.write_text("post_hooks: []\n")  # the default runs `ruff check --fix` on the output
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "openapi_python_client",
            "generate",
            "--path",
            str(schema),
            "--meta",
            "none",
            "--config",
            str(config),
            "--output-path",
            str(directory / PACKAGE),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"openapi-python-client failed:\n{done.stdout}\n{done.stderr}"
    sys.path.insert(0, str(directory))
    try:
        package = importlib.import_module(PACKAGE)
        for module in pkgutil.walk_packages(package.__path__, f"{PACKAGE}."):
            importlib.import_module(module.name)
    finally:
        sys.path.remove(str(directory))
    return package, done.stdout + done.stderr


def forget(package: types.ModuleType) -> None:
    """Drop the generated package from the interpreter (the next session generates anew)."""
    for name in [name for name in sys.modules if name.split(".")[0] == package.__name__]:
        del sys.modules[name]


def value(item: Any) -> Any:
    """An enum member's value, anything else as it is: compares parsed and raw answers alike."""
    return item.value if isinstance(item, enum.Enum) else item


def entry(item: Any, key: str) -> Any:
    """`item.key`, or `item[key]` where the schema declares a map (such as a seat's boxes)."""
    try:
        return getattr(item, key)
    except AttributeError:
        return item[key]


class Raw:
    """The JSON of an answer that did not parse into a typed model, read with attributes like one,
    so the flow can go on (the failure is already recorded)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getattr__(self, name: str) -> Any:
        for key in (name, name.rstrip("_")):  # the generator's `type_` is the JSON's `type`
            if key in self._data:
                return _raw(self._data[key])
        raise AttributeError(name)

    def __getitem__(self, key: str) -> Any:
        return _raw(self._data[key])

    def __repr__(self) -> str:
        return f"Raw({self._data!r})"


def _raw(data: Any) -> Any:
    if isinstance(data, dict):
        return Raw(data)
    if isinstance(data, list):
        return [_raw(item) for item in data]
    return data


@attrs.define
class RawBody:
    """A body the generated request model could not express, sent as it is (the failure is
    recorded): the generated function only calls `body.to_dict()`."""

    payload: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return self.payload


class Api:
    def __init__(self, package: types.ModuleType, base_url: str) -> None:
        self.package = package
        self.base_url = base_url
        self.problems: list[str] = []
        self._client_module = importlib.import_module(f"{package.__name__}.client")
        self._errors = importlib.import_module(f"{package.__name__}.errors")
        self._types = importlib.import_module(f"{package.__name__}.types")
        self._operations: dict[str, types.ModuleType] = {}
        api = importlib.import_module(f"{package.__name__}.api")
        for module in pkgutil.walk_packages(api.__path__, f"{api.__name__}."):
            loaded = importlib.import_module(module.name)
            if hasattr(loaded, "sync_detailed"):
                self._operations[module.name.rsplit(".", 1)[1]] = loaded

    # --- recording -----------------------------------------------------------------------

    def problem(self, message: str) -> None:
        self.problems.append(message)

    def check(self, condition: object, message: str) -> None:
        if not condition:
            self.problem(message)

    def finish(self) -> None:
        assert not self.problems, f"{len(self.problems)} problem(s):\n- " + "\n- ".join(
            self.problems
        )

    # --- the generated operations --------------------------------------------------------

    def operation(self, operation_id: str) -> types.ModuleType:
        assert operation_id in self._operations, (
            f"the generated client has no operation {operation_id}: {sorted(self._operations)}"
        )
        return self._operations[operation_id]

    def parameters(self, operation_id: str) -> dict[str, inspect.Parameter]:
        return dict(inspect.signature(self.operation(operation_id).sync_detailed).parameters)

    def accepts(self, operation_id: str, *names: str) -> bool:
        """Whether the operation declares these parameters; records a problem for each one not."""
        declared = self.parameters(operation_id)
        missing = [name for name in names if name not in declared]
        for name in missing:
            self.problem(
                f"{operation_id}: the schema declares no parameter `{name.rstrip('_')}` "
                f"(the generated function takes {sorted(set(declared) - {'client'})})"
            )
        return not missing

    def argument(self, operation_id: str, name: str, given: Any) -> Any:
        """`given` as the generated parameter's type wants it: an enum member where the schema
        declares an enum (refusing a value the enum lacks), else as it is."""
        annotation = typing.get_type_hints(self.operation(operation_id).sync_detailed).get(name)
        for candidate in _members(annotation):
            if isinstance(candidate, type) and issubclass(candidate, enum.Enum):
                try:
                    return candidate(given)
                except ValueError:
                    self.problem(
                        f"{operation_id}: parameter `{name}` is the enum {candidate.__name__} "
                        f"{[member.value for member in candidate]}, which lacks {given!r}"
                    )
        return given

    def body(self, operation_id: str, payload: dict[str, Any]) -> Any:
        """The operation's generated request model holding exactly `payload`."""
        annotation = typing.get_type_hints(self.operation(operation_id).sync_detailed).get("body")
        candidates = [member for member in _members(annotation) if attrs.has(member)]
        tried = []
        for model in candidates:
            try:
                built = model.from_dict(payload)
            except Exception as error:  # a KeyError, ValueError... from the generated code
                tried.append(f"{model.__name__}.from_dict raises {type(error).__name__}: {error}")
                continue
            found = self.untyped(built, "body")
            dumped = built.to_dict()
            if dumped != payload:
                found.append(f"{model.__name__}.to_dict() gives {dumped}")
            if not found:
                return built
            tried.append(f"{model.__name__}: {'; '.join(found)}")
        self.problem(
            f"{operation_id}: no generated request model holds {json.dumps(payload)}: "
            + (" | ".join(tried) or f"the body is typed {annotation}")
        )
        return RawBody(payload)

    def call(
        self,
        operation_id: str,
        *args: Any,
        token: str | None = None,
        expect: int = 200,
        **kwargs: Any,
    ) -> Any:
        """Call the generated `sync_detailed`; the answer parsed into its typed model.

        Where the answer does not parse into a typed model the problem is recorded and the raw
        JSON comes back instead (read with attributes), so the flow goes on."""
        module = self.operation(operation_id)
        hints = typing.get_type_hints(module.sync_detailed)
        for name, given in kwargs.items():
            accepted = [member for member in _members(hints.get(name)) if isinstance(member, type)]
            if name != "body" and not any(isinstance(given, member) for member in accepted):
                self.problem(
                    f"{operation_id}: parameter `{name.rstrip('_')}` is declared "
                    f"{' | '.join(member.__name__ for member in accepted) or 'nowhere'}, "
                    f"the service takes {type(given).__name__} ({given!r})"
                )
        received: list[httpx.Response] = []
        hooks = {"response": [received.append]}
        client_class = self._client_module.AuthenticatedClient if token else None
        if client_class is not None:
            client = client_class(
                base_url=self.base_url,
                token=token,
                raise_on_unexpected_status=True,
                httpx_args={"event_hooks": hooks},
            )
        else:
            client = self._client_module.Client(
                base_url=self.base_url,
                raise_on_unexpected_status=True,
                httpx_args={"event_hooks": hooks},
            )
        label = f"{operation_id} ({expect})"
        try:
            with client:
                answer = module.sync_detailed(*args, client=client, **kwargs)
            status, parsed, content = int(answer.status_code), answer.parsed, answer.content
        except self._errors.UnexpectedStatus as error:
            status, parsed, content = error.status_code, None, error.content
            self.problem(f"{label}: status {status} is not in the schema: {content[:300]!r}")
        except Exception as error:  # the generated parser crashed on the answer
            if not received:
                raise
            content = received[-1].read()
            status, parsed = received[-1].status_code, None
            self.problem(
                f"{label}: the generated client crashes parsing the answer: "
                f"{type(error).__name__}: {error} (body {content[:300]!r})"
            )
        assert status == expect, (
            f"{operation_id}: expected {expect}, got {status}: {content[:500]!r}\n"
            + "\n".join(self.problems)
        )
        data = json.loads(content) if content else None
        if parsed is None:
            return _raw(data)
        found = self._typed(module, status, parsed, data)
        for message in found:
            self.problem(f"{label}: {message}")
        return _raw(data) if found else parsed

    # --- what typed means ----------------------------------------------------------------

    def _typed(self, module: types.ModuleType, status: int, parsed: Any, data: Any) -> list[str]:
        declared = typing.get_type_hints(module.sync_detailed)["return"]
        models = [
            member
            for member in _members(typing.get_args(declared)[0])
            if attrs.has(member) and (status >= 400) == ("error" in attrs.fields_dict(member))
        ]
        if not isinstance(parsed, tuple(models)):
            return [
                f"parsed into {type(parsed).__name__}, not one of the generated models "
                f"{[model.__name__ for model in models]} (the schema declares {declared})"
            ]
        found = self.untyped(parsed, type(parsed).__name__)
        if not found and parsed.to_dict() != data:
            found.append(f"parsing loses or changes data: {parsed.to_dict()} != {data}")
        return found

    def untyped(self, item: Any, path: str) -> list[str]:
        """Where `item` (a parsed model, recursively) is not typed: untyped objects, keys the
        schema does not declare, amounts and counts that are not ints."""
        found: list[str] = []
        _walk(item, path, found, self._types.Unset)
        return found


def _members(annotation: Any) -> Iterable[Any]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return (annotation,) if annotation is not None else ()


def _is_int(item: Any) -> bool:
    return type(item) is int


def _walk(item: Any, path: str, found: list[str], unset: type) -> None:
    if item is None or isinstance(item, unset | enum.Enum | str | bool | int | float):
        return
    if isinstance(item, list):
        for index, element in enumerate(item):
            _walk(element, f"{path}[{index}]", found, unset)
        return
    if isinstance(item, dict):
        found.append(f"{path} is an untyped object (a plain dict with keys {sorted(item)})")
        return
    if not attrs.has(type(item)):
        return  # a datetime, a date: the generator parsed it from its format
    fields = attrs.fields_dict(type(item))
    extra = getattr(item, "additional_properties", None) or {}
    declared = [name for name in fields if name != "additional_properties"]
    if not declared:
        kind = (
            str(fields["additional_properties"].type) if "additional_properties" in fields else ""
        )
        if "Any" in kind or not kind:
            found.append(
                f"{path} is an untyped object ({type(item).__name__}, "
                f"{{type: object, additionalProperties: {{}}}}) with keys {sorted(extra)}"
            )
            return
        for key, element in extra.items():
            _walk(element, f"{path}.{key}", found, unset)
        return
    if extra:
        found.append(
            f"{path} ({type(item).__name__}) has keys the schema does not declare: {sorted(extra)}"
        )
    for name in declared:
        element = getattr(item, name)
        # A typed object under such a name (a report's `stakes`: count, in_cents...) is walked
        # like any other, so its own amounts and counts are held to this rule.
        if (name.endswith("_cents") or name in INT_FIELDS) and not (
            element is None
            or isinstance(element, unset)
            or _is_int(element)
            or attrs.has(type(element))
        ):
            found.append(f"{path}.{name} is {element!r}, not an int")
        _walk(element, f"{path}.{name}", found, unset)
