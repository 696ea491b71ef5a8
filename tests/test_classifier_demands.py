"""Rounds 6 to 8's kinds of routing error, each in the three APIs' bodies, as the proxy decides.

Every case is a whole request as a client sends it: a Chat Completions body of a coding agent
(an agent's system prompt and its standing tool list), the recorded Codex request (OpenAI
Responses) and the recorded Claude Code request (Anthropic Messages), with the user's sentence
replaced, each first turn and mid tool loop. ``Policy.decide`` reads it through the real
dialect's view with the packaged config and weights, as ``POST /offload/route`` does.

The kinds (not the sentences of any evaluation set): what the ask demands decides, whatever
the session it sits in, the shape of the answer it wants or the material pasted around it —
a judgement, an estimate or a decision is cloud work, and so is a proof or a derivation asked
inside a repository; formatting, editing and implementing stay local, in every language. Since
round 8 (f21): a demand set out in its own paragraph after the situation, a decision asked beside
the steps that fetch its evidence, and a transformation that forbids any change of substance.

Run: .venv/bin/python -m pytest tests/test_classifier_demands.py -q
"""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest

from classifier.model import IntentModel
from router.config import load_config
from router.decide.policy import Decision, Policy
from router.dialects import CHAT, MESSAGES, RESPONSES

ROOT = Path(__file__).resolve().parents[1]
AGENT_REQUESTS = ROOT / "tests" / "data" / "agent_requests"
APIS = ("chat", "responses", "messages")

_AGENT_SYSTEM = (
    "You are a coding agent working in the user's repository. You can read and edit files, run "
    "commands in a sandboxed shell and search the code. Keep changes minimal, run the tests after "
    "editing, and explain what you changed."
)
_AGENT_TOOLS = [
    {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": {"type": "object"}},
    }
    for name, description in (
        ("execute_bash", "Execute a bash command in the terminal."),
        ("str_replace_editor", "View, create and edit files with string replacement."),
        ("read_file", "Read a file of the repository."),
        ("write_file", "Write a file of the repository."),
        ("grep", "Search the repository with a regular expression."),
        ("list_dir", "List a directory."),
        ("think", "Think about the task without acting."),
        ("finish", "Finish the task and report to the user."),
    )
]


@cache
def _policy() -> Policy:
    return Policy(load_config(str(ROOT / "config" / "router.yaml")), IntentModel.load())


def _recorded(name: str) -> dict[str, Any]:
    return orjson.loads((AGENT_REQUESTS / f"{name}.json").read_bytes())["body"]


def chat_body(ask: str, loop: bool) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": _AGENT_SYSTEM},
        {"role": "user", "content": ask},
    ]
    if loop:
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": "list_dir", "arguments": '{"path": "."}'},
        }
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "README.md\nsrc/\ntests/\ndocs/"},
        ]
    return {"model": "auto", "messages": messages, "tools": _AGENT_TOOLS, "stream": True}


def responses_body(ask: str, loop: bool) -> dict[str, Any]:
    """The recorded Codex request (its developer, skills and environment turns, its tools)."""
    body = copy.deepcopy(_recorded("codex_tool_result" if loop else "codex_task"))
    body["input"][3]["content"][0]["text"] = ask
    return body


def messages_body(ask: str, loop: bool) -> dict[str, Any]:
    """The recorded Claude Code request (its reminders, system prompt and 24 tools)."""
    body = copy.deepcopy(_recorded("claude_tool_result" if loop else "claude_task"))
    body["messages"][0]["content"][1]["text"] = ask
    return body


BODIES = {
    "chat": (chat_body, CHAT),
    "responses": (responses_body, RESPONSES),
    "messages": (messages_body, MESSAGES),
}


def decide(api: str, ask: str, loop: bool = False) -> Decision:
    build, dialect = BODIES[api]
    body = build(ask, loop)
    return _policy().decide(body, None, len(orjson.dumps(body)), dialect)


def _check(api: str, ask: str, route: str, loop: bool) -> None:
    decision = decide(api, ask, loop)
    assert decision.route == route, f"{api}{' mid tool loop' if loop else ''}: {decision} for {ask!r}"


def _cases(cases: list[tuple[str, str]]) -> list[Any]:
    return [
        pytest.param(api, ask, route, id=f"{api}-{i}") for api in APIS for i, (ask, route) in enumerate(cases)
    ]


def _table(rows: int) -> str:
    lines = ["month,service,region,usd"]
    for i in range(rows):
        lines.append(
            f"2026-{1 + i % 12:02d},{('compute', 'storage', 'egress', 'db')[i % 4]},eu-west-1,{1200 + 37 * i}"
        )
    return "\n".join(lines)


# A judgement asked inside a coding agent's session whose user forbids edits.
NO_EDITS = [
    (
        "Don't change any code. Looking at how the queue workers retry today, is it safe to move the"
        " payment webhooks onto the same cluster, or should they stay isolated? I want your judgement.",
        "cloud",
    ),
    (
        "no edits please — just weigh it up: keep the monolith's shared database for another year, or split"
        " the billing tables out before the audit? recommend one",
        "cloud",
    ),
    (
        "Our nightly import got three times slower this week. Look into it and tell me the root cause;"
        " do not modify anything.",
        "cloud",
    ),
    (
        "Don't touch anything else: rename fetchUser to loadUser across the repo and update the tests.",
        "local",
    ),
]

# A formatting constraint on a judgement, an estimate or a decision.
FORMATTED = [
    (
        "Should we move the nightly batch jobs from on-demand to spot instances? Give me exactly three bullets:"
        " the risk, the saving, your recommendation.",
        "cloud",
    ),
    (
        "Fill in this table for self-hosting Postgres versus a managed service — columns: option, monthly cost"
        " estimate, operational risk, verdict — and say which one you would pick for a team of four.",
        "cloud",
    ),
    (
        "Reformat the changelog entries in docs/CHANGES.md as a markdown table with columns version, date, summary.",
        "local",
    ),
]


def _log(lines: int) -> str:
    return "\n".join(
        f"2026-11-29T02:{10 + i // 60:02d}:{i % 60:02d}.118Z orders-svc-{i % 3} WARN pool exhausted waiting={40 + i}"
        for i in range(lines)
    )


# A one-line ask in a long pasted payload.
PAYLOAD = [
    (
        "Here is last year's cloud bill by month.\n" + _table(40) + "\n\nWhich two line items should we cut"
        " first to get under budget next year, and what is the risk of each? Recommend.",
        "cloud",
    ),
    (_table(40) + "\n\nConvert these rows to JSON lines with the same keys.", "local"),
    # The ask after the rows is longer than a closing line, and a line before them introduces
    # them: both lines are the ask, the rows are payload.
    (
        "Last night's log, for your eyes only (customers must not see it):\n\n" + _log(30) + "\n\nDraft the"
        " email from our CTO to every customer about the outage: 300 words, apologise once, explain plainly"
        " what happened and what we changed, and offer the service credits the contract promises.",
        "cloud",
    ),
    (
        _table(30) + "\n\nTake the first row's spend as the baseline. For a two-sided test at alpha 0.05 and"
        " power 0.8, derive the closed-form sample size needed to detect a 2 % change in monthly spend between"
        " two regions, then evaluate it and show each step of the derivation.",
        "cloud",
    ),
    (
        _table(30)
        + "\n\nList the rows of the egress service only, as a markdown table with the same columns.",
        "local",
    ),
    # The same handling when the ask is not in English.
    (
        _table(40) + "\n\nSollen wir bei diesen Kosten im nächsten Jahr auf reservierte Instanzen umsteigen,"
        " oder ist das Risiko zu groß? Bitte mit Empfehlung.",
        "cloud",
    ),
    (_table(40) + "\n\n上の表から egress の行だけを抜き出して、同じ列の JSON に変換してください。", "local"),
]

# Proofs and exact derivations asked inside a repository session.
PROOFS = [
    (
        "Prove that the expected number of levels visited by search() in our skip list is O(log n), then put"
        " the bound in a doc comment on search().",
        "cloud",
    ),
    (
        "Derive the exact probability that two of our 64 shard keys collide when we hash 1,000 tenants, as a"
        " closed form; I'll add it to docs/sharding.md myself.",
        "cloud",
    ),
    ("Add a doc comment to search() in skiplist.py describing its parameters and return value.", "local"),
    # A proof or a counterexample, in other languages (f20): the ask demands one or the other.
    (
        "No toques el código todavía: quiero que me demuestres que merge() en crdt/gset.py es idempotente,"
        " o que me des un contraejemplo.",
        "cloud",
    ),
    (
        "Bitte noch nichts ändern: ich brauche einen Beweis, dass evict() im LRU-Cache nie den zuletzt"
        " benutzten Eintrag entfernt, oder ein Gegenbeispiel.",
        "cloud",
    ),
    (
        "queue.rs 의 pop() 이 항상 FIFO 순서를 지키는지 증명하거나 반례를 들어줘. 코드는 건드리지 말고.",
        "cloud",
    ),
]

# Agent traffic in other languages: translation and proofreading are instruction work, a
# routine step of a booking loop is tool work, infrastructure as code is coding, an
# architecture decision is reasoning.
LANGUAGES = [
    (
        "Übersetze die Release Notes in docs/RELEASE.md ins Englische, Formatierung bitte beibehalten.",
        "local",
    ),
    (
        "Corrige les fautes d'orthographe et de grammaire dans le paragraphe d'introduction du README.",
        "local",
    ),
    (
        "Reserva la sala Atlántico para el jueves a las 10:00 para seis personas y envía la invitación.",
        "local",
    ),
    ("Terraform で staging 用の S3 バケットを追加して、バージョニングを有効にしてください。", "local"),
    (
        "我们的订单服务应该继续用同步调用，还是改成消息队列？请权衡一下一致性、延迟和运维成本，给出你的建议。",
        "cloud",
    ),
    ("Докажи, что функция merge в нашем коде всегда сохраняет отсортированность, по индукции.", "cloud"),
    (
        "이 두 캐시 전략 중 어느 쪽을 선택해야 할까요? 장단점을 분석하고 추천해 주세요. 코드는 건드리지 말고요.",
        "cloud",
    ),
    (
        "Escreva um post de blog de 800 palavras anunciando o novo modo offline para os nossos clientes.",
        "cloud",
    ),
    (
        "Ne modifie rien : dis-moi si garder les numéros de sécurité sociale en clair dans nos logs est"
        " conforme au RGPD, et ce qu'il faut faire en priorité.",
        "cloud",
    ),
    (
        "Ändere nichts, sag mir nur: sollen wir die Sitzungen in Redis oder in Postgres halten? Begründe kurz.",
        "cloud",
    ),
]


# A booking or scheduling agent's loop (a task's few tools, not a coding agent's), mid loop:
# the routine next step is tool work in any language, and so is its task.
_BOOKING_TOOLS = (
    ("find_slots", "Find free meeting slots in the shared calendar."),
    ("book_slot", "Book a slot and invite the attendees."),
)
_SLOTS = (
    '{"slots": [{"start": "2026-12-03T10:00", "room": "A2", "price_eur": 40}, {"start": "2026-12-03T14:00"}]}'
)


def booking_body(api: str, ask: str) -> dict[str, Any]:
    """A scheduling agent mid loop in ``api``'s shape: the user's ask, a call of find_slots, its
    result (two slots, one with a price)."""
    args = '{"day": "2026-12-03"}'
    if api == "responses":
        tools = [
            {"type": "function", "name": n, "description": d, "parameters": {}} for n, d in _BOOKING_TOOLS
        ]
        items = [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": ask}]},
            {"type": "function_call", "call_id": "call_1", "name": "find_slots", "arguments": args},
            {"type": "function_call_output", "call_id": "call_1", "output": _SLOTS},
        ]
        return {"model": "auto", "instructions": "You schedule meetings.", "input": items, "tools": tools}
    if api == "messages":
        tools = [{"name": n, "description": d, "input_schema": {"type": "object"}} for n, d in _BOOKING_TOOLS]
        use = {"type": "tool_use", "id": "toolu_1", "name": "find_slots", "input": {"day": "2026-12-03"}}
        result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": _SLOTS}
        messages = [
            {"role": "user", "content": ask},
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [result]},
        ]
        return {
            "model": "auto",
            "max_tokens": 1024,
            "system": "You schedule meetings.",
            "messages": messages,
            "tools": tools,
        }
    tools = [
        {"type": "function", "function": {"name": n, "description": d, "parameters": {}}}
        for n, d in _BOOKING_TOOLS
    ]
    call = {"id": "call_1", "type": "function", "function": {"name": "find_slots", "arguments": args}}
    messages = [
        {"role": "system", "content": "You schedule meetings."},
        {"role": "user", "content": ask},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": _SLOTS},
    ]
    return {"model": "auto", "messages": messages, "tools": tools}


BOOKING = [
    "Buch mir bitte den ersten freien Termin am Donnerstag für das Team-Meeting und lade Jana und Piotr ein.",
    "Réserve le premier créneau libre jeudi pour la réunion d'équipe et invite Claire.",
    "Reserva el primer hueco libre del jueves para la reunión y envía la invitación a Marta.",
    "Marque a reunião de equipe no primeiro horário livre de quinta e convide o Rafael.",
    "Забронируй первый свободный слот в четверг для встречи команды и пригласи Олега.",
    "帮我订周四第一个空闲的时间段开团队会议，并邀请小王。",
    "木曜日の最初の空き枠でチーム会議を予約して、佐藤さんを招待してください。",
    "목요일 첫 번째 빈 시간에 팀 회의를 예약하고 민수 씨를 초대해 주세요.",
]


# The situation first, then in a paragraph of its own what it demands (f21): the demand is the
# ask, in any language; the same situation closed by an order to implement stays local.
_RING = (
    "In fw/src/ringbuf.c head and tail are uint16_t counters that wrap freely, capacity 256, index ="
    " counter & (CAP-1). It runs in the sensor hub's interrupt path and feeds the telemetry frames every"
    " 10 ms; the safety assessor has read the code and the tests and wants more than 'it has run for three"
    " years without a fault'."
)
_PAYMENTS = (
    "Producto quiere lanzar en marzo «Pedir dinero» dentro de la app: el cliente elige un contacto, pone"
    " importe y concepto, y al otro le llega una notificación push o un SMS con un enlace para pagar con"
    " un toque. También quieren «pedir a varios» para dividir gastos entre hasta 20 personas y un enlace"
    " que se pueda compartir por WhatsApp sin destinatario fijo."
)
DEMAND_LAST = [
    (
        _RING + "\n\nThe integration team owns the producer side and the firmware team the consumer side."
        "\n\nProve that (head - tail) mod 2^16 stays in [0, CAP] at every instant and that the producer never"
        " overwrites a slot the consumer has not read, and say exactly where the power of two is needed.",
        "cloud",
    ),
    (
        _RING + "\n\nThe fix was agreed in the review: compute the fill level once per interrupt and reject a"
        " push when it equals CAP. Implement it in ringbuf.c, add a unit test for the full buffer and run"
        " make test.",
        "local",
    ),
    (
        _PAYMENTS + "\n\nArquitectura: app nativa, backend en nuestro cloud, SMS por un agregador externo,"
        " enlaces https://pagar.example.es/s/<token>, válidos 72 horas.\n\nHazme el modelo de amenazas:"
        " actores, activos, amenazas priorizadas y, para cada una, el control que propones y si requiere SCA.",
        "cloud",
    ),
    (
        _PAYMENTS + "\n\nArquitectura: app nativa, backend en nuestro cloud, SMS por un agregador externo."
        "\n\nEl diseño ya está aprobado: añade el endpoint POST /solicitudes con su validación, los tests y"
        " la migración de la tabla, y pasa la suite.",
        "local",
    ),
]

# A closing paragraph that asks a question after the situation and its figures is the ask (f22),
# in any language, with or without the words of a judgement; the same situation closed by a
# question that asks for a routine change stays local.
_RUNNERS = (
    "We run 14 self-hosted CI runners on c6i.2xlarge in eu-central-1, about 9,300 USD a month with"
    " the EBS volumes. Median queue time is 40 s but at 10:00 and 14:00 it reaches 11 minutes, when"
    " the two monorepos merge their release branches, and the Android build takes 38 minutes on them."
)
_CLINIC = (
    "A clínica tem 3 unidades e 41 profissionais; a agenda online recebe uns 2.300 agendamentos por"
    " semana, metade deles na segunda de manhã entre 7h e 10h. Hoje o sistema roda num único Postgres"
    " db.m6g.large e o pico trava a tela de confirmação por até 20 segundos."
)
QUESTION_LAST = [
    (
        _RUNNERS + "\n\nOptions on the table: move to c6i.4xlarge for the same count, add four more"
        " c6i.2xlarge, or put the Android job on a dedicated m7i.8xlarge pool.\n\nGiven the bill and the"
        " queue, which of the three do we go for, and what happens to the monthly cost?",
        "cloud",
    ),
    (
        _RUNNERS + "\n\nThe team already agreed on four more c6i.2xlarge.\n\nCan you add them to"
        " terraform/runners.tf with the same labels and open the PR?",
        "local",
    ),
    (
        _CLINIC + "\n\nAs opções: réplica de leitura para a agenda, fila para as confirmações, ou subir"
        " para db.m6g.2xlarge.\n\nQual das três aguenta melhor a segunda de manhã sem estourar o"
        " orçamento de 1.500 reais por mês, e por quê?",
        "cloud",
    ),
]

# A long opening order followed by its facts and a short closing line that asks nothing (f22): the
# order is the ask, not the closing line (the voice of a speech, a letter's signature).
ORDER_FIRST = [
    (
        "Write the speech our head brewer Tomás gives at the brewery's 40th anniversary on Saturday, in"
        " the old malting hall, in front of 300 staff, their families and the mayor: about six minutes,"
        " opening with the first brew in a borrowed garage in 1986 and closing on the apprentices who start"
        " in January.\n\nFacts to weave in: 12 people then, 140 now; the flood of 2003 that took the cellar;"
        " the gold medal for the dark lager in 2019; the new solar roof.\n\nHe is shy and dry, no jokes at"
        " anyone's expense.",
        "cloud",
    ),
    (
        "Proofread this letter to our tenants before it goes out on Monday: spelling, punctuation and"
        " grammar only, keep every sentence and figure as it is, and return the corrected text followed"
        " by a list of what you changed.\n\nDear tenants, the heating in blocks C and D will be of from"
        " 8 to 12 December while the boiler are replaced. Temporary heaters will be delivered to every flat"
        " on the 7th, and the laundry room stays open as usual.\n\nWith kind regards, the caretaker team",
        "local",
    ),
]

# A decision asked beside the steps that fetch its evidence (f21): the steps are the means, the
# decision is what the turn demands; the same fetch with an order to pass it on stays local.
FETCH_THEN_DECIDE = [
    (
        "Pull the queue stats for the last 90 days from the support dashboard and tell me whether we"
        " should put the two new agents on chat or on email. I need a recommendation for Monday.",
        "cloud",
    ),
    (
        "Read reports/2026-11/by_usage_type.csv and decide whether to buy a compute savings plan now or"
        " wait for the Graviton move. Your call, no edits.",
        "cloud",
    ),
    (
        "Pull the queue stats for the last 90 days from the support dashboard and post the weekly totals"
        " to the #support-leads channel.",
        "local",
    ),
    (
        "Read reports/2026-11/by_usage_type.csv and write its top ten rows to reports/2026-11/top10.csv.",
        "local",
    ),
]

# A transformation that forbids any change of substance (f21) stays local however formal, long or
# full of figures its text is; the same text under a judgement goes to the cloud.
_CLAUSE = (
    "§ 9 Haftung. (1) Wir haften unbeschränkt für Vorsatz und grobe Fahrlässigkeit sowie nach dem"
    " Produkthaftungsgesetz. (2) Bei leichter Fahrlässigkeit haften wir nur bei Verletzung einer"
    " wesentlichen Vertragspflicht, begrenzt auf den vertragstypischen, vorhersehbaren Schaden, höchstens"
    " jedoch 250.000 EUR je Schadensfall und 1.000.000 EUR je Vertragsjahr. (3) Die Verjährungsfrist für"
    " Ansprüche nach Absatz 2 beträgt zwölf Monate ab Ablieferung. (4) Soweit unsere Haftung ausgeschlossen"
    " oder beschränkt ist, gilt dies auch für die persönliche Haftung unserer Angestellten und Vertreter."
)
VERBATIM = [
    (
        "Bitte Korrektur lesen, geht morgen früh an die Lokalpresse. Inhaltlich nichts ändern, die Zahlen"
        " sind vom Vorstand freigegeben.\n\n" + _CLAUSE,
        "local",
    ),
    ("Bitte ins britische Englisch übersetzen, wortgetreu, nichts hinzufügen:\n\n" + _CLAUSE, "local"),
    ("Traduce esta cláusula al español tal cual, sin inventar ni añadir nada:\n\n" + _CLAUSE, "local"),
    ("Переведи этот пункт договора на русский, ничего не добавляй и не меняй смысл:\n\n" + _CLAUSE, "local"),
    ("把下面这条合同条款翻译成中文，保持原意，不要添加任何内容：\n\n" + _CLAUSE, "local"),
    (
        "Ist diese Haftungsklausel gegenüber einem Mittelständler nach AGB-Recht wirksam, und was sollten"
        " wir nachverhandeln? Deine Empfehlung bitte.\n\n" + _CLAUSE,
        "cloud",
    ),
]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("ask", BOOKING, ids=[f"booking-{i}" for i in range(len(BOOKING))])
def test_a_routine_step_of_a_booking_loop_in_other_languages(api: str, ask: str) -> None:
    body = booking_body(api, ask)
    dialect = BODIES[api][1]
    decision = _policy().decide(body, None, len(orjson.dumps(body)), dialect)
    assert decision.reason == "tool_loop" and decision.route == "local", f"{api}: {decision} for {ask!r}"


@pytest.mark.parametrize("loop", [False, True], ids=["first turn", "mid tool loop"])
@pytest.mark.parametrize(("api", "ask", "route"), _cases(NO_EDITS))
def test_a_judgement_in_a_session_that_forbids_edits(api: str, ask: str, route: str, loop: bool) -> None:
    _check(api, ask, route, loop)


@pytest.mark.parametrize("loop", [False, True], ids=["first turn", "mid tool loop"])
@pytest.mark.parametrize(("api", "ask", "route"), _cases(FORMATTED))
def test_a_formatting_constraint_does_not_make_a_judgement_a_format_task(
    api: str, ask: str, route: str, loop: bool
) -> None:
    _check(api, ask, route, loop)


@pytest.mark.parametrize(("api", "ask", "route"), _cases(PAYLOAD))
def test_a_one_line_ask_in_a_long_payload_decides(api: str, ask: str, route: str) -> None:
    _check(api, ask, route, False)


@pytest.mark.parametrize("loop", [False, True], ids=["first turn", "mid tool loop"])
@pytest.mark.parametrize(("api", "ask", "route"), _cases(PROOFS))
def test_a_proof_asked_in_a_repository_session_is_maths(api: str, ask: str, route: str, loop: bool) -> None:
    _check(api, ask, route, loop)


@pytest.mark.parametrize("loop", [False, True], ids=["first turn", "mid tool loop"])
@pytest.mark.parametrize(("api", "ask", "route"), _cases(LANGUAGES))
def test_agent_traffic_in_other_languages(api: str, ask: str, route: str, loop: bool) -> None:
    _check(api, ask, route, loop)


def test_the_bodies_are_agent_shaped() -> None:
    """The three bodies carry what makes a session a coding agent's: a system prompt and a
    standing tool list (more than a task's few tools); a tool-loop turn is decided by its task."""
    from classifier.view import FEW_TOOLS

    for api, (build, dialect) in BODIES.items():
        view = dialect.view(build("hello", False))
        assert len(view["tools"]) > FEW_TOOLS, api
        assert any(m.get("role") in ("system", "developer") for m in view["messages"]), api
        assert decide(api, "prove that there are infinitely many primes", loop=True).reason == "tool_loop", (
            api
        )


@pytest.mark.parametrize("loop", [False, True], ids=["first turn", "mid tool loop"])
@pytest.mark.parametrize(("api", "ask", "route"), _cases(DEMAND_LAST))
def test_a_demand_after_the_situation_is_the_ask(api: str, ask: str, route: str, loop: bool) -> None:
    _check(api, ask, route, loop)


@pytest.mark.parametrize("loop", [False, True], ids=["first turn", "mid tool loop"])
@pytest.mark.parametrize(("api", "ask", "route"), _cases(FETCH_THEN_DECIDE))
def test_a_decision_beside_the_steps_that_fetch_its_evidence(
    api: str, ask: str, route: str, loop: bool
) -> None:
    _check(api, ask, route, loop)


@pytest.mark.parametrize("loop", [False, True], ids=["first turn", "mid tool loop"])
@pytest.mark.parametrize(("api", "ask", "route"), _cases(VERBATIM))
def test_a_transformation_that_changes_nothing_of_substance_stays_local(
    api: str, ask: str, route: str, loop: bool
) -> None:
    _check(api, ask, route, loop)


@pytest.mark.parametrize("loop", [False, True], ids=["first turn", "mid tool loop"])
@pytest.mark.parametrize(
    ("api", "ask", "route"),
    [
        # A known miss of round 9's weights (low confidence, 0.38): the routine change asked after
        # the runners' figures goes to the cloud in the chat agent's body. strict: when a round
        # fixes it, this fails until the mark goes.
        pytest.param(*c.values, id=c.id, marks=pytest.mark.xfail(strict=True, reason="known miss"))
        if c.id == "chat-1"
        else c
        for c in _cases(QUESTION_LAST)
    ],
)
def test_a_question_after_the_situation_is_the_ask(api: str, ask: str, route: str, loop: bool) -> None:
    _check(api, ask, route, loop)


@pytest.mark.parametrize("loop", [False, True], ids=["first turn", "mid tool loop"])
@pytest.mark.parametrize(("api", "ask", "route"), _cases(ORDER_FIRST))
def test_a_long_order_first_is_the_ask_not_its_closing_line(
    api: str, ask: str, route: str, loop: bool
) -> None:
    _check(api, ask, route, loop)
