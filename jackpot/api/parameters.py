"""Query parameters the staff endpoints share, as OpenAPI documents them."""

from drf_spectacular.utils import OpenApiParameter

TIME_RANGE = (("from", "ISO 8601 time, included"), ("to", "ISO 8601 time, excluded"))


def query_parameters(*pairs: tuple[str, str]) -> list[OpenApiParameter]:
    """Text query parameters from (name, description) pairs."""
    return [OpenApiParameter(name, str, description=text) for name, text in pairs]
