"""Tests of finding the ask inside agents' wrappers and separating it from pasted material
(classifier/ask.py, classifier/view.py), and of the split corpus generator (classifier/data/).

Run: .venv/bin/python -m pytest tests/test_classifier_ask.py -q
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import orjson
import pytest

from classifier.ask import find_ask, split_payload
from classifier.data import generate
from classifier.data.rand import Rand
from classifier.data.wrappers import WRAPPERS, fim, wrap
from classifier.features import extract, tokens
from classifier.redirects import redirections
from classifier.view import view

ROOT = Path(__file__).resolve().parents[1]
AGENT_REQUESTS = ROOT / "tests" / "data" / "agent_requests"
RECORDED_ASK = "Write a Python function that reverses a list in rev.py, then run a shell command to check it."


def _recorded(name: str) -> dict[str, Any]:
    path = AGENT_REQUESTS / f"{name}.json"
    if not path.exists():
        pytest.skip(f"no recorded request {path.name}")
    return orjson.loads(path.read_bytes())["body"]


# --------------------------------------------------------------------------- real wrappers


@pytest.mark.parametrize(
    ("name", "api"),
    [
        ("claude_task", "messages"),
        ("claude_tool_result", "messages"),
        ("codex_task", "responses"),
        ("codex_tool_result", "responses"),
    ],
)
def test_recorded_agent_requests_find_the_ask(name: str, api: str) -> None:
    """Claude Code's reminders, mid-conversation system turn and billing header, and Codex's
    developer, skills and environment turns are wrapper: the ask is the user's sentence."""
    from router.dialects import MESSAGES, RESPONSES

    body = _recorded(name)
    v = view((MESSAGES if api == "messages" else RESPONSES).view(body))
    assert v.user == RECORDED_ASK
    assert "x-anthropic-billing-header" not in v.system
    assert "environment_context" not in v.prev_user and "system-reminder" not in v.prev


def test_cline_task_environment_and_tool_result_turns() -> None:
    env = "<environment_details>\n# VSCode Visible Files\nsrc/a.ts\n\n# Current Mode\nACT MODE\n</environment_details>"
    first = {
        "role": "user",
        "content": [
            {"type": "text", "text": "<task>\nprove that sqrt 2 is irrational\n</task>"},
            {"type": "text", "text": env},
        ],
    }
    assert view({"messages": [first]}).user == "prove that sqrt 2 is irrational"
    result = {
        "role": "user",
        "content": [
            {"type": "text", "text": "[read_file for 'src/a.ts'] Result:\nexport const a = 1"},
            {"type": "text", "text": env},
        ],
    }
    loop = view(
        {
            "messages": [
                first,
                {"role": "assistant", "content": "<read_file>\n<path>src/a.ts</path>\n</read_file>"},
                result,
            ]
        }
    )
    assert loop.user == "prove that sqrt 2 is irrational"  # the tool-result turn is not the ask
    feedback = {
        "role": "user",
        "content": [
            result["content"][0],
            {"type": "text", "text": "<feedback>\nnow the cube root of 3\n</feedback>"},
            {"type": "text", "text": env},
        ],
    }
    assert (
        view({"messages": [first, {"role": "assistant", "content": "ok"}, feedback]}).user
        == "now the cube root of 3"
    )


def test_cline_tool_output_in_parts_of_its_own_is_not_the_ask() -> None:
    """Cline sends a tool result as a header part followed by the tool's output in parts of its
    own; a command may hold quotes; its feedback and resumption turns wrap the user's words in
    its own sentences. The ask stays the user's words, and a turn without them decides by the
    task (the earlier turn)."""
    env = {"type": "text", "text": "<environment_details>\n# Current Mode\nACT MODE\n</environment_details>"}
    task = {
        "role": "user",
        "content": [{"type": "text", "text": "<task>\nlist the log files by size\n</task>"}, env],
    }
    call = {"role": "assistant", "content": "<read_file>\n<path>notes.txt</path>\n</read_file>"}
    output = "integral of x^2 from 0 to 1 is 1/3; prove the bound for every n and derive the limit"
    for header in (
        "[read_file for 'notes.txt'] Result:",
        "[execute_command for 'grep -E 'a|b' x.log'] Result:",
        # Roo's read_file, with its own sentence inside the brackets
        "[read_file for 'notes.txt'. Reading multiple files at once is more efficient for the LLM. If other"
        " files are relevant to your current task, please read them simultaneously.] Result:",
    ):
        result = {
            "role": "user",
            "content": [{"type": "text", "text": header}, {"type": "text", "text": output}, env],
        }
        v = view({"messages": [task, call, result]})
        assert v.user == "list the log files by size", header
        assert v.last_role == "tool"
    assert view(
        {
            "messages": [
                task,
                call,
                {
                    "role": "user",
                    "content": output.join(["[execute_command for 'grep -E 'a|b' x'] Result:\n", ""]),
                },
            ]
        }
    ).user == ("list the log files by size")
    feedback = {
        "role": "user",
        "content": [
            {"type": "text", "text": "[attempt_completion] Result:"},
            {
                "type": "text",
                "text": "The user has provided feedback on the results. Consider their input to continue "
                "the task, and then attempt completion again.\n<feedback>\nnow sort them by date\n</feedback>",
            },
            env,
        ],
    }
    assert view({"messages": [task, call, feedback]}).user == "now sort them by date"
    resumed = "[TASK RESUMPTION] This task was interrupted 12 minutes ago. It may or may not be complete."
    assert view(
        {"messages": [task, call, {"role": "user", "content": [{"type": "text", "text": resumed}, env]}]}
    ).user == ("list the log files by size")
    with_words = (
        resumed
        + "\n\nNew instructions for task continuation:\n<user_message>\nalso gzip the big ones\n</user_message>"
    )
    assert (
        view({"messages": [task, call, {"role": "user", "content": with_words}]}).user
        == "also gzip the big ones"
    )


@pytest.mark.parametrize("trailing_system", [True, False])
def test_aider_reminder_and_context_turns(trailing_system: bool) -> None:
    reminder = "# *SEARCH/REPLACE block* Rules:\n\nEvery *SEARCH/REPLACE block* must use this format:\n1. The *FULL* file path"
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "Act as an expert software developer."},
        {"role": "user", "content": "Change get_factorial() to use math.factorial"},
        {"role": "assistant", "content": "Sure."},
        {
            "role": "user",
            "content": "I switched to a new code base. Please don't consider the above files or try to edit them any longer.",
        },
        {"role": "assistant", "content": "Ok."},
        {
            "role": "user",
            "content": "I have *added these files to the chat* so you can go ahead and edit them.\n\na.py\n```\nx = 1\n```",
        },
        {"role": "assistant", "content": "Ok, any changes I propose will be to those files."},
    ]
    ask = "what is the expected maximum of two dice?"
    if trailing_system:
        messages += [{"role": "user", "content": ask}, {"role": "system", "content": reminder}]
    else:
        messages.append({"role": "user", "content": ask + "\n\n" + reminder})
    v = view({"messages": messages})
    assert v.user == ask
    assert v.prev_user == ""  # the files turn is wrapper; the example before the reset is not the user's
    assert "SEARCH/REPLACE" not in v.prev


def test_ide_edit_fim_and_rag_prompts() -> None:
    edit = (
        "The user has requested a section of code in a file to be rewritten.\n\nThis is the code to rewrite:\n"
        '```python\ndef f(x):\n    return x\n```\n\nThe user\'s request is: "add a docstring"\n\nHere is the rewritten code:'
    )
    v = view({"messages": [{"role": "user", "content": edit}]})
    assert (v.user, v.kind) == ("add a docstring", "edit") and "def f" in v.payload
    for body in (
        {"prompt": "<fim_prefix>def add(a, b):\n    <fim_suffix>\n<fim_middle>"},
        {"prompt": "def add(a, b):\n    ", "suffix": "\n"},
        {"prompt": "[SUFFIX]\n}[PREFIX]func main() {\n"},
        # DeepSeek Coder's tokens are written with fullwidth bars (U+FF5C), and what the file
        # holds (an essay) does not make it a writing ask.
        {
            "prompt": "<\uff5cfim\u2581begin\uff5c># Why we build\n\nThe roof <\uff5cfim\u2581hole\uff5c>\n<\uff5cfim\u2581end\uff5c>"
        },
        # Qwen2.5-Coder's repository-level prompt: the FIM tokens come after the file list.
        {
            "prompt": "<|repo_name|>acme/web\n<|file_sep|>src/a.ts\nexport {}\n<|file_sep|>src/b.ts\n<|fim_prefix|>let x = <|fim_suffix|>;<|fim_middle|>"
        },
    ):
        v = view(body)
        assert v.kind == "fim" and v.user == "", body
        assert "ask:fim" in extract(body).struct
    rag = "Context information is below.\n---------------------\n[1] Handbook\nRemote work up to 3 days.\n---------------------\nGiven the context information and not prior knowledge, answer the query.\nQuery: how many remote days?\nAnswer:"
    v = view({"messages": [{"role": "user", "content": rag}]})
    assert (v.user, v.kind) == ("how many remote days?", "rag") and "Handbook" in v.payload


def test_crewai_task_turn() -> None:
    """CrewAI's task turn (its translations/en.json): the description and the expected output
    are the ask, the context of earlier tasks is payload, the boilerplate is neither."""
    turn = (
        "\nCurrent Task: Compare the two store locations and recommend one.\n\n"
        "This is the expected criteria for your final answer: a recommendation and its two biggest risks\n"
        "you MUST return the actual complete content as the final answer, not a summary.\n\n"
        "This is the context you're working with:\nFootfall counts: 1,200 and 800 a day.\n\n"
        "Begin! This is VERY important to you, use the tools available and give your best Final Answer, "
        "your job depends on it!\n\nThought:"
    )
    v = view(
        {
            "messages": [
                {"role": "system", "content": "You are Analyst. Ten years.\nYour personal goal is: advise"},
                {"role": "user", "content": turn},
            ]
        }
    )
    assert (
        v.user
        == "Compare the two store locations and recommend one.\n\na recommendation and its two biggest risks"
    )
    assert "Footfall" in v.payload and "Begin!" not in v.payload + v.user and "MUST" not in v.user


def test_openhands_workspace_blocks_are_wrapper() -> None:
    text = (
        "which of the two options in the ADR should we take, and why?\n\n<REPOSITORY_INFO>\nAt the user's "
        "request, repository acme/quire has been cloned to /workspace/quire.\n</REPOSITORY_INFO>\n\n"
        "<REPOSITORY_INSTRUCTIONS>\nRun make test before committing.\n</REPOSITORY_INSTRUCTIONS>\n\n"
        "<RUNTIME_INFORMATION>\nToday's date is 2026-11-30 (UTC).\n</RUNTIME_INFORMATION>"
    )
    assert find_ask(text).ask == "which of the two options in the ADR should we take, and why?"


# --------------------------------------------------------------------------- ask and payload


@pytest.mark.parametrize(
    ("text", "ask", "in_payload"),
    [
        (
            "Summarise this in one line:\n\nRevenue rose 18% to 4.2M; margin 61%.",
            "Summarise this in one line:",
            "Revenue",
        ),
        (
            "Label each ticket billing or bug.\n1. the integral renders raw\n2. charged twice",
            "Label each ticket billing or bug.",
            "integral",
        ),
        (
            "Here's the essay our CMS stores:\n\n<p>In 1998 my grandmother</p>\n\nHow do I render it safely?",
            "Here's the essay our CMS stores:\n\nHow do I render it safely?",
            "grandmother",
        ),
        (
            "以下の文章を要約してください：\n来月から経費精算システムが新しくなります。",
            "以下の文章を要約してください：",
            "経費",
        ),
    ],
)
def test_pasted_material_is_payload(text: str, ask: str, in_payload: str) -> None:
    found = find_ask(text)
    assert found.ask == ask and in_payload in found.payload


def test_rows_of_pasted_data_are_payload_wherever_the_ask_sits() -> None:
    """A CSV export, a table or a log pasted without a blank line or an introduction around a
    one-line ask is payload (f18): the ask is the lines around the rows, before or after them."""
    rows = "\n".join(f"2026-{m:02d},compute,eu-west-1,{1200 + 37 * m}" for m in range(1, 13))
    ask = "Should we buy the savings plan or stay on demand? Recommend one."
    for text in (
        f"month,service,region,usd\n{rows}\n{ask}",
        f"{ask}\nmonth,service,region,usd\n{rows}",
        f"Our bill export.\n{rows}\n{ask}",
    ):
        found = find_ask(text)
        assert ask in found.ask and "eu-west-1" not in found.ask, text
        assert "2026-12,compute" in found.payload
    log = "\n".join(f"[03:{m:02d}] fridge B at {4 + m / 10:.1f}°C, door open" for m in range(8))
    found = find_ask(f"Why did the alarm fire twice? Judge from the log.\n{log}")
    assert found.ask == "Why did the alarm fire twice? Judge from the log." and "fridge" in found.payload
    table = "| plan | price |\n|---|---|\n| basic | 9 |\n| pro | 29 |"
    assert (
        find_ask(f"{table}\nwhich plan should a team of five pick?").ask
        == "which plan should a team of five pick?"
    )
    # Two lines with commas are not a table, and rows alone are not an ask taken away.
    prose = "fix the parser\nit fails on a,b,c\nand on x,y,z\nthanks"
    assert find_ask(prose).ask == prose
    assert find_ask(rows).ask != ""


def test_a_demand_after_the_situation_is_the_ask() -> None:
    """A long message that sets out a situation and then, in a paragraph of its own, demands a
    proof or a judgement (f21): the demand is part of the ask, in any language; a pasted text's
    last paragraph that demands nothing stays payload."""
    situation = (
        "Our ring buffer in fw/src/ringbuf.c keeps uint16_t head and tail counters that wrap freely; the"
        " capacity is 256 and the index is the counter masked by CAP-1. It feeds the telemetry frames"
        " every 10 ms from the interrupt path, and the safety assessor has already read the code and"
        " the tests, and wants more than three years without a fault in the field."
    )
    details = (
        "The producer is the ISR and the consumer the main loop, on a Cortex-M4 where 16-bit loads and"
        " stores are atomic; the barriers are the ones in the code, and nothing else touches the buffer."
    )
    for demand in (
        "Prove that (head - tail) mod 2^16 stays within [0, CAP] at every instant, that the producer never"
        " overwrites a slot the consumer has not read, and that the consumer never reads a slot that is not"
        " completely written; say where the power of two is needed.",
        "Bitte beweise, dass (head - tail) mod 2^16 zu jedem Zeitpunkt in [0, CAP] liegt, dass der Producer"
        " nie einen ungelesenen Slot überschreibt und dass der Consumer nie einen halb geschriebenen Slot"
        " liest, und sag, wo die Zweierpotenz gebraucht wird.",
        "Fais-moi le modèle de menaces de ce composant avant la revue de sûreté : les acteurs, les actifs,"
        " les menaces classées par vraisemblance et impact, et pour chacune le contrôle que tu proposes et"
        " ce qu'il coûte en latence au chemin d'interruption du capteur.",
    ):
        found = find_ask(f"{situation}\n\n{details}\n\n{demand}")
        assert demand in found.ask and situation[:40] in found.ask, demand
        assert details in found.payload
    release = (
        "Bitte Korrektur lesen, geht morgen an die Presse.\n\nDie Sparkasse stellt ihr Filialnetz neu auf."
        " Die Beratung bleibt vor Ort, zwölf Filialen werden zu Beratungscentern.\n\n"
        + "Die Kundinnen und Kunden werden im Januar persönlich informiert. "
        * 8
        + "\n\nÜber die Sparkasse: gegründet 1854, 38 Filialen und 900 Beschäftigte in der Region; sie"
        " fördert jedes Jahr Vereine, Schulen und Kultur mit rund zwei Millionen Euro und ist der größte"
        " Ausbildungsbetrieb im Landkreis, mit 60 Auszubildenden in diesem Jahr und einem eigenen Campus."
    )
    found = find_ask(release)
    assert found.ask == "Bitte Korrektur lesen, geht morgen an die Presse." and "1854" in found.payload


def test_a_closing_question_joins_the_ask_and_a_closing_line_that_asks_nothing_does_not_replace_it() -> None:
    """f22: after the situation, a last paragraph that asks a question is part of the ask (in any
    language, "?" or "？"); a long opening order keeps its place when the closing line asks
    nothing (a speech's voice, a letter's signature); the question after a paste still is the ask."""
    facts = "Wir haben 14 Build-Runner, 9.300 EUR im Monat, Wartezeit bis 11 Minuten. " * 8
    question = (
        "Lohnt sich der Umstieg auf größere Instanzen für uns, wenn man die Wartezeit der Entwickler"
        " gegen die Kosten rechnet und die Preise von nächstem Jahr schon einbezieht?"
    )
    assert len(question) > 160
    found = find_ask(f"Kurz zur Lage.\n\n{facts}\n\n{question}")
    assert found.ask.startswith("Kurz zur Lage.") and question in found.ask and facts not in found.ask
    japanese = (
        "状況は以上です。この構成で本当に年末のピークに足りますか？理由も、費用の見込みも、来年の単価も含めて教えてください。"
        * 3
    )
    assert len(japanese) > 160
    assert "足りますか" in find_ask(f"状況を共有します。\n\n{facts}\n\n{japanese}").ask
    order = (
        "Write the speech our head brewer Tomás gives at the brewery's 40th anniversary on Saturday in"
        " the old malting hall, in front of 300 staff, their families and the mayor, about six minutes"
        " long, opening with the first brew in a borrowed garage in 1986 and closing on the apprentices."
    )
    history = (
        "Twelve people then and 140 now, the flood of 2003 took the cellar, gold for the lager in 2019. " * 3
    )
    found = find_ask(f"{order}\n\n{history}\n\nHe is shy and dry, no jokes at anyone's expense.")
    assert found.ask.startswith("Write the speech") and "He is shy and dry" in found.ask
    order = (
        "Proofread this letter before it goes out: spelling and punctuation only, keep every sentence"
        " as it is, and return the corrected text followed by the list of what you changed, one line"
        " per change with the reason, so the office can check it quickly before printing."
    )
    letter = "Dear tenants, the heating will be of from 8 to 12 December while the boiler are replaced. " * 3
    found = find_ask(f"{order}\n\n{letter}\n\nThe caretaker team")
    assert found.ask.startswith("Proofread this letter") and "The caretaker team" in found.ask
    log = "\n".join(
        f"2026-12-02T10:{m:02d}:00Z worker-3 ERROR lease lost, retrying in {m}s" for m in range(12)
    )
    found = find_ask(f"{log}\n\nwhy does this keep happening?")
    assert found.ask == "why does this keep happening?"
    prose = "The boiler replacement starts on the 8th and the heaters arrive on the 7th for every flat. " * 8
    assert find_ask(f"{prose}\n\nwhy is the date wrong?").ask == "why is the date wrong?"


def test_problem_statements_and_code_lines_are_not_payload() -> None:
    """A puzzle's conditions after "Known:" are the task; "def f(x):" is not an introduction."""
    puzzle = (
        "Four teams played each other once. Known:\n— Vortex beat Thunder;\n— Hawks lost twice.\nWho won?"
    )
    assert split_payload(puzzle) == (puzzle, "")
    code = "def f(x):\n    return x\n\nwhat does this do?"
    assert find_ask(code).ask == code
    fenced = find_ask("Fix this bug:\n```python\nx = 1\n```\nKeyError: 'a'")
    assert fenced.ask.startswith("Fix this bug:") and "x = 1" in fenced.payload


@pytest.mark.parametrize(
    ("text", "flag"),
    [
        ("No code yet, solve this first: how many ways...", "nocode"),
        ("this is not a code question. what is 2+2", "nocode"),
        ("Don’t call any tools for this one. Think.", "notools"),
        ("just plan, don't edit anything yet", "think"),
        ("跟代码无关，纯数学问题", "nocode"),
        ("코드랑 상관없는 질문인데요", "nocode"),
        ("Вопрос не про код: найди предел", "nocode"),
        ("Give a counterexample to the claim that merge() is commutative.", "prove"),
        ("Ich brauche den Beweis für die Invariante, oder ein Gegenbeispiel.", "prove"),
        ("Quiero que me demuestres la cota, o un contraejemplo.", "prove"),
        ("Une démonstration de la borne, s'il te plaît, ou un contre-exemple.", "prove"),
        ("Приведи контрпример или докажи оценку.", "prove"),
        ("这个结论对吗？给我一个反例。", "prove"),
        ("이 성질이 성립하는지 반례를 찾아줘.", "prove"),
    ],
)
def test_redirections_are_features(text: str, flag: str) -> None:
    assert flag in redirections(text.lower(), set(tokens(text)))
    assert f"redirect:{flag}" in extract({"messages": [{"role": "user", "content": text}]}).struct


def test_no_redirection_in_a_plain_coding_ask() -> None:
    text = "fix the code in parser.py so the tests pass"
    assert redirections(text, set(tokens(text))) == set()


# --------------------------------------------------------------------------- generator


def test_generator_wrappers_keep_the_ask_findable() -> None:
    """Every agent wrapper the corpus uses hands the same ask to the features."""
    r = Rand(3)
    ask = "why does the retry loop in client.py never stop?"
    for name in WRAPPERS:
        for loop in (False, True):
            v = view(wrap(r, name, ask, [], loop, None))
            assert v.user == ask, (name, loop, v.user)
    assert view(fim(r)).kind == "fim"


def test_generator_writes_requests_as_the_policy_classifies_them() -> None:
    """A tool-loop turn is decided by the conversation up to its last user turn
    (router.decide.policy); the generator's decision_view cuts the same place, so the corpus never
    holds a request the classifier would not be handed."""
    from router.decide.steps import _in_tool_loop, _up_to_last_user_turn

    r = Rand(5)
    seen = 0
    for name in ("claude_code", "codex", "openhands"):
        for _ in range(20):
            body = wrap(r, name, "derive the closed form", [("earlier task", "done")], True, None)
            messages = body["messages"]
            assert _in_tool_loop(body, messages)
            assert generate.decision_view(body) == _up_to_last_user_turn(body, messages)
            seen += 1
    assert seen == 60
    for row in generate.generate(30, seed=3):
        body = row["request"]
        messages = body.get("messages")
        assert not (isinstance(messages, list) and _in_tool_loop(body, messages)), row["id"]


def test_generator_is_a_function_of_its_seed() -> None:
    a = generate.generate(6, seed=11)
    assert a == generate.generate(6, seed=11)
    assert a != generate.generate(6, seed=12)
    assert {row["intent"] for row in a} == set(generate.INTENTS)


def test_generator_has_no_module_level_random_state() -> None:
    """Templates draw from the Rand they are handed, never from a module-level generator."""
    for path in (ROOT / "classifier" / "data").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.Assign | ast.AnnAssign):
                source = ast.unparse(node.value) if node.value is not None else ""
                assert "Random(" not in source and "Rand(" not in source, (path.name, source)
        assert "import random\n" not in path.read_text() or path.name == "rand.py", path.name
