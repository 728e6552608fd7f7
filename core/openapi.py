"""How the schema is produced: drf-spectacular's views, and our pydantic bodies in OpenAPI 3.1.

The schema is OpenAPI 3.1 (`SPECTACULAR_SETTINGS['OAS_VERSION']`), whose schemas are JSON Schema
2020-12, pydantic's own dialect: a field that may be null is `anyOf: [X, {type: 'null'}]` (or
`type: [X, 'null']`), which every validator reads the same. OpenAPI 3.0's `nullable` meant nothing
beside a lone `$ref` (3.0.3), so strict validators (openapi-core) refused the nulls the service
really answers; tests/api/test_strict_validation.py holds every answer of the flows to the schema.

Importing this module (config.urls does) registers three extensions with drf-spectacular:

- `BodySchema`: a pydantic model given to `extend_schema(request=..., responses=...)` becomes a
  component from its own JSON schema, kept to what the schema's consumers (openapi-python-client,
  schemathesis, Swagger UI) read alike: `enum` rather than `const`, no `propertyNames`, a tagged
  union as a plain `oneOf`. A query string (`core.wire.Query`, given to `parameters=`) becomes
  one parameter per field, and a parameter is absent or has a value: never null, so its schema
  has no null member and no `default: null` (openapi-core would validate a missing one as null).
  It replaces drf_spectacular.contrib.pydantic, which has none of this. A body (and every body
  inside it) is named after its `title` where it declares one, else after its class.
- `TerminalTokenScheme`, `StaffTokenScheme`: the two bearer-token authenticators (drf-spectacular
  warns about, and leaves out, authenticators it cannot describe).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from typing import Any, Literal

from drf_spectacular.contrib.pydantic import PydanticExtension
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.utils import OpenApiParameter
from pydantic import BaseModel
from pydantic.json_schema import (
    CoreModeRef,
    CoreRef,
    DefsRef,
    GenerateJsonSchema,
    JsonSchemaValue,
    model_json_schema,
)
from pydantic_core import core_schema

from core.wire import Body, Query


def component_name(model: type[BaseModel]) -> str:
    """A body's name in the schema: its `title` where it declares one, else its class's name.

    The schema's names are what clients generated from it call their classes, so they stay; a
    title lets the class be renamed in Python (a body whose model is a Django model of the same
    name: `AwardBody`, titled `Award`) without renaming anything a client sees.
    """
    return model.model_config.get("title") or model.__name__


def _subclasses(model: type[BaseModel]) -> Iterator[type[BaseModel]]:
    for subclass in model.__subclasses__():
        yield subclass
        yield from _subclasses(subclass)


def _titled_refs() -> dict[str, CoreRef]:
    """Pydantic's reference of each body whose schema name is its title, and the reference of a
    class of that name (the same module, the same id: pydantic's own clash checks still hold)."""
    refs = {}
    for model in _subclasses(Body):
        name = component_name(model)
        if name != model.__name__:
            refs[f"{model.__module__}.{model.__qualname__}:{id(model)}"] = CoreRef(
                f"{model.__module__}.{name}:{id(model)}"
            )
    return refs


class OpenApi31(GenerateJsonSchema):
    """Pydantic's JSON schema (2020-12, OpenAPI 3.1's dialect), as the consumers read it, with
    each body under its `component_name`."""

    @cached_property
    def _titled(self) -> dict[str, CoreRef]:
        return _titled_refs()

    def get_defs_ref(self, core_mode_ref: CoreModeRef) -> DefsRef:
        core_ref, mode = core_mode_ref
        return super().get_defs_ref((self._titled.get(core_ref, core_ref), mode))

    def literal_schema(self, schema: core_schema.LiteralSchema) -> JsonSchemaValue:
        found = super().literal_schema(schema)
        if "const" in found:
            found["enum"] = [found.pop("const")]
        return found

    def enum_schema(self, schema: core_schema.EnumSchema) -> JsonSchemaValue:
        found = super().enum_schema(schema)
        if "const" in found:
            found["enum"] = [found.pop("const")]
        return found

    def tagged_union_schema(self, schema: core_schema.TaggedUnionSchema) -> JsonSchemaValue:
        # A plain oneOf: OpenAPI's discriminator maps a tag to one component, which a nested
        # union (a UTH Play: one member per street) does not have. The members' enums already
        # make them exclusive, so a oneOf of every leaf says the same.
        found = super().tagged_union_schema(schema)
        leaves: list[JsonSchemaValue] = []
        for member in found.get("oneOf", []):
            if set(member) == {"oneOf"} or set(member) == {"oneOf", "discriminator"}:
                leaves.extend(member["oneOf"])
            else:
                leaves.append(member)
        return {"oneOf": leaves}

    def dict_schema(self, schema: core_schema.DictSchema) -> JsonSchemaValue:
        found = super().dict_schema(schema)
        found.pop("propertyNames", None)
        return found


class BodySchema(PydanticExtension):
    priority = 1  # over drf_spectacular.contrib.pydantic

    def get_name(self, auto_schema: AutoSchema, direction: str) -> str:
        super().get_name(auto_schema, direction)  # turns drf-spectacular's clash warning off
        return component_name(self.target)

    def map_serializer(self, auto_schema: AutoSchema, direction: str) -> dict[str, Any]:
        mode: Literal["validation", "serialization"] = (
            "validation" if direction == "request" else "serialization"
        )
        schema = model_json_schema(
            self.target,
            ref_template="#/components/schemas/{model}",
            schema_generator=OpenApi31,
            mode=mode,
        )
        for name, sub_schema in schema.pop("$defs", {}).items():
            component = ResolvedComponent(
                name=name, type=ResolvedComponent.SCHEMA, object=name, schema=sub_schema
            )
            auto_schema.registry.register_on_missing(component)
        if issubclass(self.target, Query):
            schema["properties"] = {
                name: _never_null(field) for name, field in schema.get("properties", {}).items()
            }
        return schema


def _never_null(schema: JsonSchemaValue) -> JsonSchemaValue:
    """A query parameter's schema without its null: an absent parameter is not a null one."""
    found = dict(schema)
    if found.get("default", ...) is None:
        del found["default"]
    members = found.pop("anyOf", None)
    if members is not None:
        rest = [member for member in members if member.get("type") != "null"]
        if len(rest) == 1:
            found = {**rest[0], **found}
        else:
            found["anyOf"] = rest
    return found


class TerminalTokenScheme(OpenApiAuthenticationExtension):
    """Documents `TerminalAuthentication` (registered on import; no effect on behaviour)."""

    target_class = "tables.api.authentication.TerminalAuthentication"
    name = "terminalToken"

    def get_security_definition(self, auto_schema: AutoSchema) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A table terminal's token: `Authorization: Bearer term_...`.",
        }


class StaffTokenScheme(OpenApiAuthenticationExtension):
    """Documents `StaffTokenAuthentication` (registered on import; no effect on behaviour)."""

    target_class = "jackpot.api.authentication.StaffTokenAuthentication"
    name = "staffToken"

    def get_security_definition(self, auto_schema: AutoSchema) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "A staff member's token: `Authorization: Bearer staff_...`.",
        }


# The header of a conditional GET (the meter, the award list: 304 when nothing changed).
IF_NONE_MATCH = OpenApiParameter(
    "If-None-Match",
    str,
    OpenApiParameter.HEADER,
    # What a header can carry: printable ASCII, not starting with a space.
    pattern=r"^([!-~][ -~]*)?$",
    description="the last ETag seen",
)


def query_parameters(model: type[BaseModel]) -> list[Any]:
    """`extend_schema(parameters=...)` for a query string declared as a model: each field is a
    query parameter, with its type, bounds and description."""
    return [model]
