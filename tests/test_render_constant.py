"""A template without jinja2 syntax is returned as it is (stripped), exactly as jinja2 renders it."""

from __future__ import annotations

import jinja2
import pytest

from glotbench.prompts.render import _ENV, render

CASES = [
    "You are an AI assistant proficient in Mongolian.",
    "  Та монгол хэлээр хариулна.\n\n",
    "Line one\nline two\n",
    "100% sure # not a comment, } alone",
    "tabs\tand   spaces  ",
    "",
    # with syntax or line ends jinja2 rewrites: the jinja2 path
    "Answer {{ lang }}",
    "a\r\nb\rc",
    "{# comment #}text",
    "{% if true %}x{% endif %}",
]


@pytest.mark.parametrize("src", CASES)
def test_same_as_jinja2(src):
    assert render(src, {"lang": "mn"}, task="t", field="prompt.system") == _ENV.from_string(src).render(lang="mn").strip()


def test_syntax_errors_still_reported():
    with pytest.raises(Exception, match="template syntax error"):
        render("{{ broken", {}, task="t", field="prompt.user")
    with pytest.raises(jinja2.TemplateSyntaxError):
        _ENV.from_string("{{ broken")
