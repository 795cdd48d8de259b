"""The page's language catalogues (app/static/i18n/*.json) against what can be worded:
every key in every language, every message id the server can send, every key the page's
code and HTML name, and the same {parameters} in each translation. No browser needed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.server.games import editions_json
from app.server.messages import all_ids
from referee.tiles import Color

STATIC = Path(__file__).resolve().parent.parent / "app" / "static"
LANGUAGES = ("en", "nl", "fr", "de")


def catalogue(code: str) -> dict:
    return json.loads((STATIC / "i18n" / f"{code}.json").read_text(encoding="utf-8"))


def sources() -> str:
    files = [STATIC / "index.html", *sorted((STATIC / "js").rglob("*.js"))]
    return "\n".join(f.read_text(encoding="utf-8") for f in files)


def rule_keys() -> list[str]:
    """rule.<setting>, its .help and one key per choice, from RULE_FIELDS of setup.js."""
    text = (STATIC / "js" / "screens" / "setup.js").read_text(encoding="utf-8")
    block = text[text.index("const RULE_FIELDS = ["):text.index("];", text.index("RULE_FIELDS"))]
    keys = []
    for name, kind in re.findall(r'\["(\w+)", ("\w+"|\[[^\]]*\])\]', block):
        keys += [f"rule.{name}", f"rule.{name}.help"]
        keys += [f"rule.{name}.{v}" for v in re.findall(r'"([\w-]+)"', kind) if kind.startswith("[")]
    assert len(keys) > 30, "RULE_FIELDS not found in setup.js"
    return keys


def used_keys() -> set[str]:
    text = sources()
    keys = set(re.findall(r'\bt\(\s*"([a-z][\w.-]+)"', text))
    keys |= set(re.findall(r'data-i18n(?:-html|-placeholder|-aria)?="([^"]+)"', text))
    # keys handed over as values and worded later (camera reasons, errors, ternaries)
    # (a server message id compared in the code is not a page key: its words are server.<id>)
    keys |= set(re.findall(r'"((?:camera|page|verdict|sample|takeover)\.[a-z_]+)"', text)) - all_ids()
    keys |= set(rule_keys())
    keys |= {f"edition.{e['name']}" for e in editions_json()}
    keys |= {f"color.{c.value}" for c in Color}
    statuses = re.search(r"STATUS_KEYS = \[([\d, ]+)\]", text).group(1)
    keys |= {f"status.{s.strip()}" for s in statuses.split(",")} | {"status.other"}
    return keys


def params(entry) -> set[str]:
    texts = entry.values() if isinstance(entry, dict) else [entry]
    return {p for text in texts for p in re.findall(r"\{(\w+)\}", text)}


def test_every_language_has_every_english_key_and_no_other():
    english = catalogue("en")
    for code in LANGUAGES[1:]:
        words = catalogue(code)
        assert sorted(set(english) - set(words)) == [], f"{code} lacks these keys"
        assert sorted(set(words) - set(english)) == [], f"{code} has keys English lacks"


def test_every_key_the_page_names_is_in_the_catalogues():
    english = catalogue("en")
    missing = sorted(k for k in used_keys() if k not in english)
    assert missing == [], f"the page uses keys no catalogue has: {missing}"


def test_every_message_id_the_server_can_send_is_worded():
    ids = all_ids()
    assert {"turn.counting", "camera.taken_by_watch", "set.gap", "turn.pass"} <= ids
    for code in LANGUAGES:
        words = catalogue(code)
        missing = sorted(i for i in ids if f"server.{i}" not in words)
        assert missing == [], f"{code}: server ids without words: {missing}"


@pytest.mark.parametrize("code", LANGUAGES[1:])
def test_translations_take_the_same_parameters_and_plural_forms(code):
    english, words = catalogue("en"), catalogue(code)
    for key, entry in english.items():
        assert params(words[key]) <= params(entry) | {"count"}, (code, key)
        assert params(entry) - {"count"} <= params(words[key]), (code, key)
        if isinstance(entry, dict):
            assert {"one", "other"} <= set(words[key]), (code, key)
        # A translation is not the English left in place (names and codes aside).
        if isinstance(entry, str) and len(entry) > 12 and "{" not in entry[:2]:
            assert words[key] != entry or key in SAME_IN_ALL, (code, key)


# Words that are the same in every language here (brand-free codes and numbers).
SAME_IN_ALL = {"play.extend"}
