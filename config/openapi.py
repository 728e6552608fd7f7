"""How the schema is produced: drf-spectacular's views, and our pydantic bodies in OpenAPI 3.0.

Importing this module (config.urls does) registers three extensions with drf-spectacular:

- `BodySchema`: a pydantic model given to `extend_schema(request=..., responses=...)` becomes a
  component from its own JSON schema, with pydantic's 2020-12 idioms said the OpenAPI 3.0 way
  (`nullable` rather than a `null` member, `enum` rather than `const`, no `propertyNames`, a
  tagged union as a plain `oneOf`). It
  replaces drf_spectacular.contrib.pydantic, whose schema the 3.0 validator refuses.
- `TerminalTokenScheme`, `StaffTokenScheme`: the two bearer-token authenticators (drf-spectacular
  warns about, and leaves out, authenticators it cannot describe).
"""

from __future__ import annotations

from typing import Any, Literal

from drf_spectacular.contrib.pydantic import PydanticExtension
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from drf_spectacular.utils import OpenApiParameter
from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue, model_json_schema
from pydantic_core import core_schema


class OpenApi30(GenerateJsonSchema):
    """Pydantic's JSON schema, in the dialect of OpenAPI 3.0."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        inner = self.generate_inner(schema["schema"])
        if "$ref" in inner:
            return {"allOf": [inner], "nullable": True}
        return {**inner, "nullable": True}

    def union_schema(self, schema: core_schema.UnionSchema) -> JsonSchemaValue:
        found = super().union_schema(schema)
        members = found.get("anyOf", [])
        if any(member.get("type") == "null" for member in members):
            rest = [member for member in members if member.get("type") != "null"]
            found = rest[0] if len(rest) == 1 else {"anyOf": rest}
            if "$ref" in found:
                found = {"allOf": [found]}
            found["nullable"] = True
        return found

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
        # A plain oneOf: OpenAPI 3.0's discriminator maps a tag to one component, which a nested
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

    def map_serializer(self, auto_schema: AutoSchema, direction: str) -> dict[str, Any]:
        mode: Literal["validation", "serialization"] = (
            "validation" if direction == "request" else "serialization"
        )
        schema = model_json_schema(
            self.target,
            ref_template="#/components/schemas/{model}",
            schema_generator=OpenApi30,
            mode=mode,
        )
        for name, sub_schema in schema.pop("$defs", {}).items():
            component = ResolvedComponent(
                name=name, type=ResolvedComponent.SCHEMA, object=name, schema=sub_schema
            )
            auto_schema.registry.register_on_missing(component)
        return schema


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
