"""One enumeration of reasons (router/decide/reasons.py): its strings, the policy's order, and that
the README's table and the console show every reason with the enumeration's own sentence.
Adding a reason to the enumeration without the README's row fails here; the console and the
metrics list the enumeration itself, and these tests check that they do."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from router.decide.policy import Policy
from router.decide.reasons import DECIDED, Reason, all_texts
from tests.harness import make_config
from tests.test_console import BASE, console_client, login, row, seed
from tests.test_console import make_config as console_config

# The reasons table lives in the routing guide (the README links it).
README = Path(__file__).resolve().parents[1] / "docs" / "routing.md"
RULES = [
    {"name": "marketing", "match": {"client": "marketing"}, "route": "cloud"},
    {"name": "titles", "match": {"system_contains": "Generate a title"}, "backend": "local"},
]


def test_a_reason_is_a_plain_string_that_reads_back_as_its_kind() -> None:
    texts = all_texts(Reason, ["marketing", "titles"])
    assert texts[3:5] == ["rule:marketing", "rule:titles"]  # a named kind once per rule, in place
    assert len(texts) == len(Reason) + 1
    for text in texts:
        kind = Reason.of(text)
        assert kind is not None and kind.text(text.partition(":")[2] or None) == text
        assert type(kind.text(text.partition(":")[2] or None)) is str  # not the enum: rows, labels, JSON
    assert Reason.of("rule:a:b") is Reason.RULE  # a rule's name may hold a colon
    for unknown in ("", None, "rule", "classifier:x", "bogus", "Classifier"):
        assert Reason.of(unknown) is None, unknown
    assert Reason.SHADOW_RUN not in DECIDED and set(DECIDED) | {Reason.SHADOW_RUN} == set(Reason)


def test_the_enumeration_follows_the_order_of_the_policys_steps() -> None:
    policy = Policy(make_config("http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1", routing={"rules": RULES}))
    stages = [*policy.steps, *policy.adjustments]
    given = {r for stage in stages for r in stage.reasons}
    assert given == set(DECIDED)  # every reason a decision may have comes from one stage
    order = list(Reason)
    usual = [order.index(stage.reasons[0]) for stage in stages if stage.reasons]
    assert usual == sorted(usual) and len(set(usual)) == len(usual)


def test_the_routing_guides_table_is_the_enumeration_word_for_word() -> None:
    rows = "\n".join(f"| `{r.shown}` | {r.meaning} |" for r in Reason)
    assert f"| reason | when |\n|---|---|\n{rows}\n\n" in README.read_text()


async def test_the_console_shows_and_explains_every_reason(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/usage.db"
    seed(url, [row(1, reason="rule:marketing", intent=None, confidence=None), row(2, reason="shadow_run")])
    async with console_client(console_config(url, rules=RULES)) as client:
        await login(client)
        page = (await client.get(f"{BASE}/decisions")).text
        offered = re.findall(
            r'<option value="([^"]+)">', page.split('<datalist id="reasons">')[1].split("</datalist>")[0]
        )
        assert offered == all_texts(Reason, ["marketing", "titles"])
        legend = page.split('<details class="reasons">')[1].split("</details>")[0]
        for reason in Reason:
            explained = re.search(
                rf'<dt data-reason="{re.escape(reason.shown)}">.*?</dt><dd>(.*?)</dd>',
                html.unescape(legend),
                re.S,
            )
            assert explained, reason
            assert re.sub(r"</?code>", "`", explained.group(1)) == reason.meaning
        titled = re.findall(r'<td title="([^"]*)">(rule:marketing|shadow_run)</td>', page)
        assert {shown: html.unescape(title) for title, shown in titled} == {
            "rule:marketing": Reason.RULE.meaning.replace("`", ""),
            "shadow_run": Reason.SHADOW_RUN.meaning.replace("`", ""),
        }
        one = (await client.get(f"{BASE}/decisions/req-00001")).text
        assert "<code>routing.rules</code>" in one and "rule:marketing" in one


@pytest.mark.parametrize("reason", ["<script>x</script>", "rule:<b>bold</b>"])
async def test_an_unknown_or_hostile_reason_is_shown_escaped_with_no_meaning(
    tmp_path: Path, reason: str
) -> None:
    url = f"sqlite:///{tmp_path}/usage.db"
    seed(url, [row(1, reason=reason)])
    async with console_client(console_config(url)) as client:
        await login(client)
        one = (await client.get(f"{BASE}/decisions/req-00001")).text
        assert reason not in one and html.escape(reason) in one
