"""Helpers of the view tests: read the signed context token off a rendered page."""

import re

HTMX = {"HTTP_HX_REQUEST": "true"}


def token_of(response) -> str:
    return re.search(r'name="token" value="([^"]+)"', response.content.decode()).group(1)
