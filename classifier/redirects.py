"""Phrases in an ask that say what it demands, whatever its wrapper implies.

Explicit redirections ("no code yet, solve this first", "don't call any tools", "not a code
question", "just plan": ``nocode``, ``notools``, ``think``) and, since f19, the demand of a
judgement or of a proof (``judge``, ``prove``: their phrases are in ``classifier.demands``).
Each becomes a feature (``redirect:<flag>``) the model weighs against the agent's context.
The phrases are lower-case, per language; only the phrases whose anchor word is among the
ask's tokens are searched for, so an ask without any anchor costs one set intersection.
"""

from __future__ import annotations

import re

from classifier.demands import DEMANDS

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")

# Flag -> phrases (lower-case; "'" for any apostrophe, see redirections()); the demands' flags
# are merged in below.
_EXPLICIT: dict[str, tuple[str, ...]] = {
    "nocode": (
        "no edits",
        "no changes",
        "don't change anything",
        "do not change anything",
        "don't modify anything",
        "do not modify",
        "don't fix anything",
        "do not fix",
        "don't touch anything",
        "read-only",
        "read only",
        "nichts ändern",
        "keine datei ändern",
        "ändere nichts",
        "nicht ändern",
        "nur lesen",
        "nichts anfassen",
        "ne modifie rien",
        "sans rien modifier",
        "ne change rien",
        "ne touche à rien",
        "ne touche pas au code",
        "lecture seule",
        "no cambies nada",
        "sin editar",
        "no toques",
        "no modifiques",
        "sin cambiar nada",
        "sin modificar",
        "solo lectura",
        "não muda nada",
        "não mude nada",
        "não altera",
        "não altere",
        "sem editar",
        "não mexe",
        "não mexa",
        "ничего не правь",
        "без правок",
        "не исправляй",
        "не правь",
        "только посмотри",
        "ничего не трогай",
        "不要改",
        "不要动代码",
        "别改",
        "只读",
        "不要修改",
        "别动代码",
        "変更しないで",
        "触らないで",
        "いじらないで",
        "直さないで",
        "修正しないで",
        "수정하지 마",
        "건드리지 마",
        "바꾸지 마",
        "고치지 마",
        "그대로 두고",
        "no code",
        "not a code question",
        "not a coding question",
        "not about the code",
        "not related to the code",
        "unrelated to the code",
        "unrelated to the repo",
        "nothing to do with the code",
        "forget the code",
        "don't write code",
        "don't write any code",
        "do not write code",
        "do not write any code",
        "without writing code",
        "without code",
        "don't change the code",
        "don't change any code",
        "don't touch the code",
        "don't edit",
        "do not edit",
        "don't modify",
        "before touching the code",
        "on paper",
        "not a code change",
        "ignore the code",
        "don't create any files",
        "not asking about the code",
        "ohne code",
        "kein code",
        "keine codeänderung",
        "nicht um den code",
        "abseits vom code",
        "nichts am code",
        "pas de code",
        "sans code",
        "sans modifier le code",
        "pas une question de code",
        "sans toucher au code",
        "sin código",
        "sin tocar el código",
        "nada de código",
        "no es de código",
        "no toques el código",
        "sem código",
        "não mexe no código",
        "sem alterar",
        "não é sobre o código",
        "não mexa no código",
        "не про код",
        "без кода",
        "не меняй",
        "ничего не меняй",
        "не трогай код",
        "не про программирование",
        "跟代码无关",
        "与代码无关",
        "和代码无关",
        "别改代码",
        "不要改代码",
        "先别改代码",
        "不用写代码",
        "不要写代码",
        "コードとは関係ない",
        "コードは変えない",
        "コードは書かない",
        "コードは触らない",
        "コードと関係ない",
        "코드랑 상관없는",
        "코드와 상관없는",
        "코드는 건드리지",
        "코드 말고",
        "코드와 관계없는",
        # f19: the same refusals in the word orders and verbs people use
        "don't touch",
        "do not touch",
        "leave the code",
        "hands off",
        "investigate only",
        "just investigate",
        "keine änderungen",
        "nicht anfassen",
        "aucune modification",
        "ne touche",
        "sans toucher",
        "sin tocar",
        "ninguna modificación",
        "sem mexer",
        "sem modificar",
        "sem tocar",
        "не трогай",
        "без изменений",
        "не меняя",
        "不改代码",
        "先不要改",
        "不要动",
        "别动",
        "変更せず",
        "変更は不要",
        "触らず",
        "수정 없이",
        "바꾸지 말고",
        "건드리지 말고",
        "nichts fixen",
        "no fixes",
    ),
    "notools": (
        "don't call any tools",
        "don't call tools",
        "don't use any tools",
        "don't use tools",
        "no tools",
        "without tools",
        "without using tools",
        "don't run anything",
        "don't run any",
        "do not run",
        "don't use the terminal",
        "do not use the terminal",
        "don't look anything up",
        "don't search",
        "keine tools",
        "nichts ausführen",
        "sans outils",
        "n'exécute rien",
        "sin herramientas",
        "no ejecutes",
        "sem ferramentas",
        "não rode nada",
        "не запускай",
        "без инструментов",
        "не используй инструменты",
        "不要调用工具",
        "不用调用工具",
        "别调用工具",
        "ツールを使わ",
        "도구를 쓰지",
        "도구 없이",
    ),
    "think": (
        "your call",
        "your opinion",
        "tell me why",
        "want to know why",
        "tu opinión",
        "deine einschätzung",
        "ton avis",
        "sua opinião",
        "твоё мнение",
        "你的判断",
        "判断して",
        "판단해",
        "just plan",
        "only plan",
        "plan only",
        "just think",
        "just reason",
        "your judgement",
        "your judgment",
        "thought experiment",
        "before implementing",
        "don't implement",
        "do not implement",
        "no need to implement",
        "just answer",
        "nur nachdenken",
        "keine umsetzung",
        "réfléchis d'abord",
        "solo piensa",
        "só pensa",
        "просто подумай",
        "сначала подумай",
        "先想清楚",
        "考えるだけ",
        "생각만",
        "just tell me",
        "sag mir nur",
        "sag mir einfach",
        "dis-moi juste",
        "dis-moi seulement",
        "solo dime",
        "só me diz",
        "só me diga",
        "просто скажи",
    ),
}

REDIRECTS: dict[str, tuple[str, ...]] = {**_EXPLICIT, **DEMANDS}


def _anchor(phrase: str) -> str:
    """The word of a phrase that must be among the ask's tokens for the phrase to be looked for:
    its longest word, or, for Chinese/Japanese/Korean (read as character bigrams), its first two
    characters."""
    if _CJK.search(phrase):
        return phrase.replace(" ", "")[:2]
    return max(re.split(r"[\s'-]+", phrase), key=len)


def _redirect_index() -> dict[str, tuple[tuple[str, str], ...]]:
    index: dict[str, list[tuple[str, str]]] = {}
    for flag, phrases in REDIRECTS.items():
        for phrase in phrases:
            index.setdefault(_anchor(phrase), []).append((phrase, flag))
    return {k: tuple(v) for k, v in index.items()}


REDIRECT_INDEX = _redirect_index()
REDIRECT_ANCHORS = frozenset(REDIRECT_INDEX)
# For finding the paragraph of a message that holds its ask (classifier.ask, before any
# tokenising): the flags that demand a judgement or a proof, and the CJK anchors, which are
# looked for as substrings (the features read CJK text as character bigrams).
_JUDGEMENT = frozenset({"judge", "prove"})
_CJK_ANCHORS = tuple(a for a in REDIRECT_INDEX if _CJK.search(a))
_WORD = re.compile(r"[^\W\d_]+")


def redirections(lower: str, words: set[str]) -> set[str]:
    """The redirection flags of an ask (``lower``: the lower-cased ask; ``words``: its tokens).
    Only the phrases whose anchor word is present are searched for."""
    anchors = words & REDIRECT_ANCHORS
    if not anchors:
        return set()
    lower = lower.replace("’", "'")
    return {flag for a in anchors for phrase, flag in REDIRECT_INDEX[a] if phrase in lower}


def demands(text: str) -> bool:
    """Whether ``text`` (a paragraph, any case) demands a judgement or a proof: its
    :func:`redirections` include ``judge`` or ``prove``."""
    lower = text.lower()
    words = set(_WORD.findall(lower))
    if not lower.isascii():
        words.update(a for a in _CJK_ANCHORS if a in lower)
    return not _JUDGEMENT.isdisjoint(redirections(lower, words))
