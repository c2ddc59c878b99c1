"""Request parsing that never turns a hostile body into a 500."""

import re

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from delivery.errors import JsonTooDeep, UnstorableText

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
            raise JsonTooDeep(MAX_JSON_DEPTH)
        where = unstorable_text_at(data)
        if where is not None:
            raise UnstorableText([unstorable_text_message(where or "Request body")])
        return data


#: A NUL character or a lone surrogate (JSON's `\u0000`, `\ud800`): PostgreSQL text holds
#: neither, the driver refuses them with an error (a 500), and no caller means them.
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def has_unstorable(text: str) -> bool:
    return UNSTORABLE.search(text) is not None


def unstorable_text_message(where: str) -> str:
    return f"{where} must not contain NUL characters or unpaired surrogates"


def unstorable_text_at(data) -> str | None:
    """The path (`metadata.tags[2]`) of the first object key or string in `data` holding a NUL
    or a lone surrogate ("" for the body itself), or None when there is none."""
    stack = [(data, "")]
    while stack:
        value, where = stack.pop()
        if isinstance(value, str):
            if has_unstorable(value):
                return where
        elif isinstance(value, dict):
            for key, child in value.items():
                inner = f"{where}.{key}" if where else str(key)
                if has_unstorable(key):
                    # The key itself is the problem: name its parent, not the text.
                    return f"{where} (an object key)" if where else "an object key"
                stack.append((child, inner))
        elif isinstance(value, list):
            stack.extend((child, f"{where}[{index}]") for index, child in enumerate(value))
    return None


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
