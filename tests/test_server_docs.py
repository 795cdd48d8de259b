"""What the server hands out besides games: the API docs with no internet, and QR codes of
the links a second phone joins with."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import quote, urlsplit

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient

from tests.server_helpers import make_app


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    app = make_app(tmp_path_factory.mktemp("docs"))
    with TestClient(app) as c:
        yield c


class _Urls(HTMLParser):
    """Every src/href in a page, and every URL its inline scripts name."""

    def __init__(self):
        super().__init__()
        self.urls: list[str] = []
        self._script = False

    def handle_starttag(self, tag, attrs):
        self.urls += [v for k, v in attrs if k in ("src", "href", "spec-url") and v]
        self._script = tag == "script"

    def handle_endtag(self, tag):
        self._script = False

    def handle_data(self, data):
        if self._script:
            self.urls += re.findall(r"""(?:url|src|href)\s*:\s*['"]([^'"]+)['"]""", data)
            self.urls += re.findall(r"""['"](https?://[^'"]+)['"]""", data)


def _refs(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def test_every_reference_in_the_openapi_document_resolves(client):
    # One dangling $ref and ReDoc-like viewers and client generators refuse the document.
    spec = client.get("/openapi.json").json()
    refs = set(_refs(spec))
    assert refs
    for ref in refs:
        assert ref.startswith("#/components/schemas/"), ref
        assert ref.rsplit("/", 1)[1] in spec["components"]["schemas"], ref


@pytest.mark.parametrize("page", ["/docs"])
def test_the_api_docs_load_everything_from_this_server(client, page):
    # A table's LAN often has no internet: a page loading from a CDN would stay blank.
    response = client.get(page)
    assert response.status_code == 200
    parser = _Urls()
    parser.feed(response.text)
    assert len(parser.urls) >= 3, parser.urls  # script, style or favicon, the OpenAPI
    for url in parser.urls:
        parts = urlsplit(url)
        assert not parts.scheme and not parts.netloc, f"{page} loads {url} from elsewhere"
        assert client.get(url).status_code == 200, url
    assert any(u.endswith(".js") for u in parser.urls)
    assert "/openapi.json" in parser.urls


def _svg_to_image(svg: str, scale: int = 8) -> np.ndarray:
    """Paint the unit squares of the QR's SVG path (black on white) for a QR reader."""
    box = re.search(r'viewBox="0 0 (\d+) (\d+)"', svg)
    w, h = int(box.group(1)), int(box.group(2))
    image = np.full((h * scale, w * scale), 255, np.uint8)
    for x, y in re.findall(r"M(\d+),(\d+)H", svg):
        x, y = int(x), int(y)
        image[y * scale:(y + 1) * scale, x * scale:(x + 1) * scale] = 0
    return cv2.copyMakeBorder(image, 32, 32, 32, 32, cv2.BORDER_CONSTANT, value=255)


def test_a_qr_code_of_a_link_reads_back_as_that_link(client):
    link = "http://192.168.1.20:8000/?g=4f1c2d9e8a7b6c5d4e&token=0123456789abcdef0123456789abcdef"
    response = client.get(f"/api/qr.svg?data={quote(link, safe='')}")  # no token needed
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("image/svg+xml")
    text, _points, _ = cv2.QRCodeDetector().detectAndDecode(_svg_to_image(response.text))
    assert text == link


@pytest.mark.parametrize("data", ["", "x" * 601])
def test_an_empty_or_overlong_qr_text_is_refused_with_words(client, data):
    response = client.get(f"/api/qr.svg?data={data}")
    assert response.status_code == 422
    assert "data" in response.json()["detail"]
    assert client.get("/api/qr.svg").status_code == 422
