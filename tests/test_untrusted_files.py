"""Issue 48, in process: the template sandbox, the YAML alias bound and the time-bounded file regex
(the CLI cases are tests/test_hostile_files.py; docs/untrusted-files.md)."""

from __future__ import annotations

import pytest

from glotbench.errors import TaskSpecError
from glotbench.extract import bounded_regex
from glotbench.tasks.judging.declaration import as_decl
from glotbench.tasks.judging.declared import DeclaredJudge
from glotbench.prompts import sandbox
from glotbench.prompts.render import render
from glotbench.yamlfile import AliasBomb, expanded_size, load_yaml

PAYLOADS = [
    "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
    "{{ self.__init__.__globals__.__builtins__.open('/etc/hostname').read() }}",
    "{{ lipsum.__globals__['os'].environ }}",
    "{{ x|attr('__class__') }}",
    "{{ ''.__class__.mro() }}",
    "{% for c in ().__class__.__base__.__subclasses__() %}{{ c }}{% endfor %}",
]


@pytest.mark.parametrize("src", PAYLOADS)
def test_payloads_are_refused_by_the_static_check_and_never_render(src):
    assert sandbox.check(src) is not None
    with pytest.raises(TaskSpecError, match="field 'prompt.user'"):
        render(src, {"x": "y"}, task="t", field="prompt.user")


def test_an_escape_through_a_name_the_check_cannot_see_is_stopped_by_the_sandbox():
    """The attribute name comes from a record, not the template: jinja2's sandbox refuses it at render."""
    src = "{{ (cycler|attr(name)) }}"
    assert sandbox.check(src) is not None  # attr with a variable name is refused outright
    src = "{{ cycler[name] }}"  # item access through a variable: only the sandbox sees it
    assert sandbox.check(src) is None
    with pytest.raises(TaskSpecError, match="sandbox"):
        render(src, {"name": "__init__"}, task="t", field="prompt.user")


def test_the_sandbox_is_immutable():
    with pytest.raises(TaskSpecError, match="sandbox"):
        render("{{ xs.append(1) }}{{ xs }}", {"xs": [0]}, task="t", field="prompt.user")


@pytest.mark.parametrize("src", [
    "{{ question }}", "{{ a.b }} {{ a['b'] }}", "{% for x in xs %}{{ loop.index }}. {{ x.text|upper }}{% endfor %}",
    "{{ '%s!'|format(question) }}", "{{ xs|join(', ') }}", "{{ question if question else 'none' }}",
])
def test_ordinary_templates_pass_and_render(src):
    assert sandbox.check(src) is None
    render(src, {"question": "q", "a": {"b": 1}, "xs": [{"text": "t"}]}, task="t", field="prompt.user")


def test_first_unsafe_names_the_field_anywhere_in_a_file():
    raw = {"name": "t", "options": {"doc_to_text": ["ok {{ x }}", "{{ x.__class__ }}"]}}
    assert sandbox.first_unsafe(raw)[0] == "options.doc_to_text[1]"
    assert sandbox.first_unsafe({"prompt": {"user": "{{ q }}"}}) is None


BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))


def test_an_alias_bomb_is_refused():
    assert len(BOMB) < 1024
    with pytest.raises(AliasBomb, match="alias"):
        load_yaml(BOMB)


def test_a_recursive_alias_is_refused_and_ordinary_aliases_load():
    with pytest.raises(AliasBomb, match="recursive"):
        load_yaml("a: &a [1, *a]\n")
    data = load_yaml("base: &b {temperature: 0, stop: [x]}\nother: *b\nlist: [*b, *b]\n")
    assert data["other"] == data["list"][1] == {"temperature": 0, "stop": ["x"]}
    # the count is the values with every alias expanded, as a plain recursive walk counts them
    def walk(v):
        if isinstance(v, dict):
            return 1 + sum(walk(k) + walk(x) for k, x in v.items())
        if isinstance(v, list):
            return 1 + sum(walk(x) for x in v)
        return 1
    assert expanded_size(data) == walk(data)


def _judge(regex: str) -> DeclaredJudge:
    return DeclaredJudge(as_decl({"name": "j", "prompt": {"en": {"user": "{{ answer }}"}}, "grades": {"a": 1, "b": 0},
                                  "reply": {"regex": regex}, "unreadable": "exclude"}))


def test_the_issue_regex_ends_and_the_reply_is_unreadable():
    verdict = _judge("^(a+)+$").read("a" * 40 + "b")
    assert verdict["unreadable"] and verdict["counted_as"] == "excluded"


def test_a_regex_past_the_time_bound_is_an_unreadable_reply(monkeypatch):
    """``^(a|aa)+$`` backtracks exponentially on 40 'a' and a 'b' (in ``re`` and ``regex`` alike): the
    bound stops it and the verdict says why."""
    monkeypatch.setenv("GLOTBENCH_REGEX_TIMEOUT_S", "0.2")
    verdict = _judge("^(a|aa)+$").read("a" * 40 + "b")
    assert verdict["unreadable"] and "took over 0.2 s" in verdict["reason"], verdict
    assert _judge("^(a|aa)+$").read("aaaa")["unreadable"] is False  # a reply it reads is read


def test_file_regexes_keep_python_re_semantics():
    """Backreferences and lookarounds (which RE2 refuses) work as in ``re``."""
    p = bounded_regex.compile(r"(?<=Grade: )(\w)\1(?!x)")
    assert [m.group(1) for m in bounded_regex.finditer(p, "Grade: aa, Grade: bbx")] == ["a"]
    assert bounded_regex.check("(unclosed")[0] is None


def test_printed_paths_are_only_the_ones_printed_as_they_are():
    src = "{{ meta.level }} {{ a['b'].c }} {{ x.y|upper }} {% if meta.z %}{{ meta.z }}{% endif %} {{ q }} {{ l[0] }}"
    assert sandbox.printed_paths(src) == {("meta", "level"), ("a", "b", "c"), ("meta", "z"), ("l", 0)}
