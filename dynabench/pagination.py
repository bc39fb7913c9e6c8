"""The API's pagination (``REST_FRAMEWORK["DEFAULT_PAGINATION_CLASS"]``)."""

from rest_framework.pagination import PageNumberPagination


class Pagination(PageNumberPagination):
    """``?page=N&page_size=M``; ``page_size`` is capped at ``max_page_size``."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 1000
