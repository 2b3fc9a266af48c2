"""The page is self-contained (no external reference, no script) and escapes every text from the dataset."""

from __future__ import annotations

import base64
import html
import re
from html.parser import HTMLParser

import pytest

from prm_factory.reports.dataset_report import collect, render_html

ALLOWED_TAGS = set("html head meta title style body h1 h2 p div span b table tr th td img ol li".split())


class PageParser(HTMLParser):
    """Collects the tags and URL-valued attributes of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.urls += [value or "" for name, value in attrs if name in {"src", "href", "action", "srcset"}]


@pytest.fixture(scope="module")
def page(report_dataset) -> str:
    return render_html(collect(report_dataset, version=2, n_samples=8))


@pytest.fixture(scope="module")
def parsed(page) -> PageParser:
    parser = PageParser()
    parser.feed(page)
    return parser


def test_page_has_only_its_own_tags_and_inline_images(parsed):
    assert set(parsed.tags) <= ALLOWED_TAGS  # no script, link, iframe, or tag smuggled in by chain text
    assert parsed.tags.count("img") == 5
    assert parsed.urls and all(url.startswith("data:image/svg+xml;base64,") for url in parsed.urls)
    for url in parsed.urls:
        svg = base64.b64decode(url.split(",", 1)[1]).decode("utf-8")
        assert "<svg" in svg
        # inside an SVG, references are to its own elements (#id) or inline data (imshow's raster)
        assert all(ref.startswith(("#", "data:")) for ref in re.findall(r'href="([^"]*)"', svg))


def test_no_network_reference_outside_the_escaped_dataset_text(page, hostile_texts):
    without_images = page
    for chunk in page.split('src="data:')[1:]:
        without_images = without_images.replace(chunk.split('"', 1)[0], "")
    # escaped problem text holds no "<", so this drops it only where it was escaped; raw markup would stay
    without_dataset_text = re.sub(r"<div class=problem>[^<]*</div>", "", without_images)
    assert "https://example.com" in hostile_texts["problem"]
    assert "http" not in without_dataset_text and "url(" not in without_dataset_text


def test_chain_and_problem_text_is_escaped(page, hostile_texts):
    # absent as written, present once entities are decoded: the text reached the page escaped (the entity
    # spelling of quotes, &quot; or &#34;, is the escaper's choice)
    for text in (hostile_texts["step"], hostile_texts["problem"], "reason <correct>"):  # reasons: in titles
        assert text not in page and text in html.unescape(page), text


def test_sections_and_labels_are_on_the_page(page):
    for heading in (
        "Counts",
        "Label mix per step index",
        "MC value distribution",
        "Verifier vs MC agreement",
        "First-error position",
        "Cost per label",
        "Sample chains (8)",
    ):
        assert f"<h2>{heading}</h2>" in page
    assert "version 2" in page and "first error</span>" in page and "consensus-disputed" in page


def test_empty_version_renders(report_dataset):
    page = render_html(collect(report_dataset, version=0))
    assert "Sample chains (0)" in page and page.count("<img") == 5
