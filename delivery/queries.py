"""Gone: its pagination lives in `delivery/pagination.py`. Kept only while `webhooks/selectors.py`
(reshaped on another branch) still imports `Page` and `page_of` from here; delete it at merge."""

from delivery.pagination import Page, page_of

__all__ = ["Page", "page_of"]
