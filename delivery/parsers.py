"""Request parsing that never turns a hostile body into a 500."""

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from delivery.errors import BadRequest

#: Deeper bodies are refused. Real ones nest a few levels (a GeoJSON polygon is 5 deep); a
#: free-form field (zone metadata) nested hundreds deep would pass the decoder, then exhaust
#: the recursion limit when the answer is rendered (a 500) or strain PostgreSQL's jsonb.
MAX_JSON_DEPTH = 64


class SafeJSONParser(JSONParser):
    """DRF's JSON parser, also refusing bodies nested too deep (decoder RecursionError, or more
    than MAX_JSON_DEPTH levels)."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("Request body is not valid JSON") from None
        if _deeper_than(data, MAX_JSON_DEPTH):
            raise BadRequest(f"Request body must not nest deeper than {MAX_JSON_DEPTH} levels")
        return data


def _deeper_than(data, limit: int) -> bool:
    """Whether `data` nests more than `limit` arrays or objects; iterative, one pass."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
