"""The one sanitizer: what a terminal would act on is shown or replaced, nothing else moves."""

from __future__ import annotations

import json

import pytest

from gobtui.core.sanitize import REPLACEMENT, json_escaped, one_line, terminal_safe


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[2Jclear", "␛[2Jclear"),  # C0 becomes its control picture
        ("\x1b]0;T\x07", "␛]0;T␇"),
        ("a\x7fb", "a␡b"),
        ("\x9b31m", f"{REPLACEMENT}31m"),  # C1 CSI: ESC's 8-bit twin
        ("\u202egnp.exe\u202c", f"{REPLACEMENT}gnp.exe{REPLACEMENT}"),  # bidi override
        ("\u2066x\u2069", f"{REPLACEMENT}x{REPLACEMENT}"),  # bidi isolate
        ("zero\u200bwidth", f"zero{REPLACEMENT}width"),
        ("half \ud800", f"half {REPLACEMENT}"),  # a lone surrogate
        ("para\u2029graph", "para graph"),
    ],
)
def test_what_a_terminal_acts_on_is_shown_or_replaced(raw: str, shown: str) -> None:
    assert terminal_safe(raw) == shown


def test_plain_text_and_joined_emoji_stay_as_they_are() -> None:
    for text in (
        "plain ascii",
        "café ünïcode 中文",
        "👩\u200d💻 dev",
        "🏴\U000e0067\U000e0062\U000e007f",
    ):
        assert terminal_safe(text) == text


def test_newlines_are_kept_only_where_several_lines_are_shown() -> None:
    assert terminal_safe("a\nb\tc\r\n", multiline=True) == "a\nb\tc\n"
    assert terminal_safe("a\nb") == "a␊b"
    assert one_line("a\nb\tc\r\nd") == "a b c d"


def test_json_keeps_its_value_and_loses_what_a_terminal_acts_on() -> None:
    value = {"title": "x\u009b2J \u202eevil\u202c 👩\u200d💻 \U000e0001 café"}
    encoded = json_escaped(json.dumps(value, ensure_ascii=False))
    assert json.loads(encoded) == value
    assert "\u009b" not in encoded and "\u202e" not in encoded and "\U000e0001" not in encoded
    assert "\\u009b" in encoded and "\\udb40\\udc01" in encoded  # past the BMP: a pair
    assert "café" in encoded and "\u200d" in encoded  # the rest stays as it was
