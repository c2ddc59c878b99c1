"""Reading the tracking page's HTML as a browser would see it (html.parser, no rendering)."""

import re
from html.parser import HTMLParser

#: attributes that make a browser fetch, navigate or submit somewhere
URL_ATTRIBUTES = {
    "src",
    "href",
    "action",
    "formaction",
    "srcset",
    "poster",
    "data",
    "xlink:href",
    "background",
    "ping",
    "manifest",
    "codebase",
    "cite",
    "longdesc",
}


class Page(HTMLParser):
    """The parts of a page the tests read: every tag with its attributes, and text by id."""

    VOID = {"meta", "link", "br", "img", "input", "hr", "source", "wbr", "area", "base", "col"}

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text_by_id: dict[str, str] = {}
        self._open: list[tuple[str, dict, list[str]]] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if tag not in self.VOID:
            self._open.append((tag, attributes, []))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        if tag not in (open_tag for open_tag, _, _ in self._open):
            return  # a stray end tag closes nothing
        while self._open:
            open_tag, attributes, chunks = self._open.pop()
            text = "".join(chunks)
            if "id" in attributes:
                self.text_by_id[attributes["id"]] = " ".join(text.split())
            if self._open:
                self._open[-1][2].append(text)
            if open_tag == tag:
                break

    def handle_data(self, data):
        if self._open:
            self._open[-1][2].append(data)

    def find(self, tag: str, **attributes) -> list[dict]:
        return [
            attrs
            for name, attrs in self.tags
            if name == tag and all(attrs.get(k) == v for k, v in attributes.items())
        ]

    def text(self, element_id: str) -> str:
        return self.text_by_id[element_id]


def assert_self_contained(html: str) -> None:
    """contract "Tracking": nothing is loaded from, sent to or linked at another address."""
    page = Page(html)
    for tag, attributes in page.tags:
        for name, value in attributes.items():
            if name in URL_ATTRIBUTES and value is not None:
                assert not re.match(r"^\s*([a-z][a-z0-9+.-]*:|//|\\\\)", value, re.I), (
                    f"<{tag} {name}={value!r}> points at another address"
                )
        if tag == "meta" and (attributes.get("http-equiv") or "").lower() == "refresh":
            raise AssertionError("a meta refresh may navigate elsewhere")
    assert page.find("link") == [], "no stylesheets, fonts, icons or preloads from anywhere"
    assert page.find("img") == [] and page.find("iframe") == [] and page.find("object") == []
    for attributes in page.find("script"):
        assert "src" not in attributes
    lowered = html.lower()
    for needle in ("http://", "https://", "//", "url(", "@import", "@font-face"):
        assert needle not in lowered, f"{needle!r} found in the page"
