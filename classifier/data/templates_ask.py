"""Asks around pasted material, and explicit redirections (group 3 of issue 18).

Why: pasted material pulls the route by what it mentions (a text to summarise full of numbers,
tickets to label that mention integrals, code beside a question about a proof), and explicit
redirections ("no code yet, solve this first", "don't call any tools", "just plan") change
what a coding agent is asked. These templates put the topic in the payload and the task in the
instruction, so the model learns to weigh the instruction (``features``: the ask is read apart
from the payload). They are appended to each intent's English templates and follow the same
round-robin ownership by source.
"""

from __future__ import annotations

from classifier.data.pools import (
    COMPANIES,
    FUNCS,
    PARAGRAPHS,
    PEOPLE,
    PRODUCTS,
    traceback,
)
from classifier.data.rand import Rand
from classifier.data.templates_en import Tpl

MATHY_LINES = [
    "The integral of x^2 from 0 to 3 shows as raw LaTeX in the exported PDF",
    "Proof editor freezes when I paste a 40-line induction proof",
    "Can you add a dark theme?",
    "I was billed twice for the annual plan",
    "The probability calculator rounds 0.125 to 0.13",
    "Your blog post about prime numbers has a broken link",
    "Export to CSV drops the last row",
    "the matrix view doesn't load on Safari",
]
STORY_PARAGRAPHS = [
    "The summer I turned eleven, my grandfather taught me to fish off the old pier. He never said much; he would hand me the line, point at the water, and wait.",
    "Every morning the baker on Rue Mercière opened his shutters at five, and every morning the same cat was waiting on the step, as if they had an appointment.",
    "When the lighthouse went automatic, Ilse stayed anyway. She kept the logbook, wrote down the ships, and answered letters nobody had sent yet.",
]
MATH_TEXTS = [
    "In 1736 Leonhard Euler showed that the seven bridges of Königsberg could not all be crossed exactly once; a century later, in 1852, Francis Guthrie posed the four colour problem, settled by Appel and Haken in 1976.",
    "The Basel problem asks for the sum of 1/n^2; Euler found pi^2/6 in 1734. Riemann's 1859 paper extended the sum to complex exponents and stated the hypothesis that still bears his name.",
    "Our Q3 model assumes demand D(p) = 1200 - 35p, marginal cost 8 and a fixed cost of 4,000; the optimum price from the derivative is 21.14 and expected profit 7,150.",
]
NUMBER_PARAGRAPHS = [
    "Net revenue reached 48.2 million (+22% year on year); gross margin 61.3%, operating margin 9.8%. Customer count rose from 1,204 to 1,590, and net retention was 118%.",
    "Tickets closed: 3,412 (-4%). Median first response 2h 14m, p90 11h. CSAT 4.6/5 from 812 surveys. Backlog at month end: 219, of which 31 older than 14 days.",
    "Fleet: 42 vans, average 184 km/day, fuel 9.1 l/100 km, 6 breakdowns (2 tyres, 3 batteries, 1 clutch). On-time delivery 93.7%, up from 91.2%.",
]
TASK_MIX = [
    "- Prove that there are infinitely many primes\n- Write a haiku about rain\n- Fix the null pointer in checkout.ts\n- Summarise the meeting notes",
    "1. integrate x*sin(x)\n2. draft a toast for my sister\n3. book a table for two\n4. is this argument valid: all cats are mammals, so all mammals are cats",
]
DOCSTRING_FUNCS = [
    (
        "binomial_tail(n: int, k: int, p: float) -> float",
        "Return P(X >= k) for X ~ Binomial(n, p), accurate to 1e-12, using the regularised incomplete beta function.",
    ),
    (
        "expected_draws(red: int, blue: int) -> float",
        "Expected number of draws without replacement until both colours have appeared.",
    ),
    ("catalan(n: int) -> int", "The n-th Catalan number C(2n, n) / (n + 1), exact for n up to 10_000."),
    (
        "stationary(P: list[list[float]]) -> list[float]",
        "Stationary distribution pi of a finite irreducible Markov chain: pi P = pi, sum(pi) = 1.",
    ),
]
PROOF_CLAIMS = [
    "this loop terminates for every positive n",
    "the greedy choice gives an optimal schedule",
    "the function returns the n-th Catalan number",
    "the expected number of swaps is n(n-1)/4",
]
PROOF_SNIPPETS = [
    "def catalan(n):\n    return comb(2 * n, n) // (n + 1)",
    "while n != 1:\n    n = n // 2 if n % 2 == 0 else 3 * n + 1",
    "def swaps(xs):\n    return sum(a > b for i, a in enumerate(xs) for b in xs[i + 1:])",
]
NO_CODE = [
    "not a code question: ",
    "no code yet, solve this first: ",
    "unrelated to the repo: ",
    "forget the code for a minute. ",
    "don't edit anything, just answer: ",
    "Not about the code below. ",
    "before touching the code, on paper: ",
    "this has nothing to do with the code: ",
]
NO_TOOLS = [
    "don't call any tools for this one. ",
    "Don't run anything. ",
    "no tools needed, just think: ",
    "don't look anything up, ",
    "Without using the terminal: ",
]
THINK = ["just plan, don't implement yet: ", "only your judgement, no code: ", "thought experiment: "]
JUST_DO = ["skip the explanation, just do it: ", "no need to explain, ", "just do it: "]
CODE_PLAN = [
    "just plan, don't edit anything yet: ",
    "don't write the code yet, plan first: ",
    "only the plan for now: ",
]


def _items(r: Rand, lines: list[str]) -> str:
    return "\n".join(f"{i + 1}. {line}" for i, line in enumerate(r.sample(lines, r.n(3, 5))))


INSTRUCTION_ASK: list[Tpl] = [
    lambda r: f"Label each ticket billing, bug, feature or other. Only the labels.\n{_items(r, MATHY_LINES)}",
    lambda r: (
        f"Summarise this in {r.p(['two', 'three'])} bullets for the team:\n\n{r.p(NUMBER_PARAGRAPHS + MATH_TEXTS)}"
    ),
    lambda r: f"Extract every name and year as JSON [{{name, year}}]:\n\n{r.p(MATH_TEXTS)}",
    lambda r: (
        f"Fix only the typos, keep everything else:\n\n{r.p(STORY_PARAGRAPHS).replace('the', 'teh', 1)}"
    ),
    lambda r: (
        f"Translate into {r.p(['German', 'French', 'Spanish'])}, keep the formatting:\n\n{r.p(STORY_PARAGRAPHS + MATH_TEXTS)}"
    ),
    lambda r: (
        f"Which of these are maths, writing, coding or tool requests? One word per line.\n{r.p(TASK_MIX)}"
    ),
    lambda r: f"Give this a title and three tags, as JSON:\n\n{r.p(STORY_PARAGRAPHS)}",
    lambda r: f"Turn this into a CSV with columns metric,value:\n\n{r.p(NUMBER_PARAGRAPHS)}",
    lambda r: f"tl;dr in one line:\n\n{r.p(PARAGRAPHS + MATH_TEXTS)}",
    lambda r: (
        f"Count how many sentences each paragraph has, output as a list:\n\n{r.p(STORY_PARAGRAPHS)}\n\n{r.p(MATH_TEXTS)}"
    ),
]
CODING_ASK: list[Tpl] = [
    lambda r: (lambda f: f'Implement this so the tests pass:\n```python\ndef {f[0]}:\n    """{f[1]}"""\n```')(
        r.p(DOCSTRING_FUNCS)
    ),
    lambda r: (lambda f: f"write unit tests for `{f[0]}`: {f[1]}")(r.p(DOCSTRING_FUNCS)),
    lambda r: (
        f"The essay body shows up escaped on the blog page:\n\n<p>{r.p(STORY_PARAGRAPHS)}</p>\n\nHow do I render it safely in {r.p(['Jinja2', 'React', 'Django templates', 'Go html/template'])}?"
    ),
    lambda r: (
        f"Write a script that reads every post in posts/*.md and prints the ones longer than {r.p(['1000', '1500', '2000'])} words with their titles."
    ),
    lambda r: f"our poem generator crashes:\n{traceback(r)}\nfix it",
    lambda r: (
        f"{r.p(CODE_PLAN)}{r.p(['split', 'refactor', 'move'])} `{r.p(FUNCS)}` into its own module and list the files that change"
    ),
    lambda r: (
        "```python\n# probability that at least two of n people share a birthday\ndef p_shared(n):\n    p = 1\n    for i in range(n):\n        p *= (365 - i) / 365\n    return 1 - p\n```\nmake it raise for n > 365 and vectorise it with numpy"
    ),
    lambda r: (
        f"Add a `/stats` endpoint that returns these numbers as JSON, computed from the orders table:\n\n{r.p(NUMBER_PARAGRAPHS)}"
    ),
]
MATH_ASK: list[Tpl] = [
    lambda r: (
        f"```python\n{r.p(PROOF_SNIPPETS)}\n```\nnot asking about the code: prove that {r.p(PROOF_CLAIMS)}"
    ),
    lambda r: (
        f"{r.p(NO_CODE)}what is the probability that {r.p(['the maximum of 5 uniforms exceeds 0.9', 'two dice sum to at least 9', 'a random permutation of 6 has no fixed point'])}? Exact value, with the derivation."
    ),
    lambda r: (
        f"{r.p(NO_CODE)}how many ways can {r.n(8, 12)} retries be split across {r.n(3, 5)} servers if each gets at least one? Derive it."
    ),
    lambda r: (
        f"Using these numbers, what is the compound annual growth rate, exactly, and how long until revenue doubles at that rate?\n\n{r.p(NUMBER_PARAGRAPHS)}"
    ),
    lambda r: (
        f"{r.p(NO_CODE)}prove that the sum of the first n odd numbers is n^2, then generalise to sums of k-th powers"
    ),
    lambda r: (
        lambda f: (
            f'Here\'s the docstring:\n```python\ndef {f[0]}:\n    """{f[1]}"""\n```\nDon\'t implement it. Derive the closed form and prove it is correct.'
        )
    )(r.p(DOCSTRING_FUNCS)),
]
REASONING_ASK: list[Tpl] = [
    lambda r: (
        f"{r.p(NO_TOOLS)}Is it better to {r.p(['A/B test the new pricing', 'launch in one country first', 'rewrite the checkout'])} or {r.p(['roll it out to everyone', 'wait a quarter', 'buy a hosted solution'])}? Weigh it and decide."
    ),
    lambda r: (
        f"Incident timeline:\n\n14:02 deploy v{r.n(2, 9)}.{r.n(0, 20)}\n14:05 p99 latency up 10x\n14:09 rollback\n14:20 errors back to normal after the cache failover\n\nWas the deploy the cause? Reason about what the timeline does and does not show."
    ),
    lambda r: (
        "```sql\nSELECT plan, avg(churned) FROM users GROUP BY plan;\n-- basic 0.08, pro 0.03\n```\nMy manager says this proves upgrading people to pro cuts churn. Is the argument valid?"
    ),
    lambda r: (
        f"{r.p(THINK)}should {r.p(COMPANIES)} keep its monolith or split out billing? Think through team size, on-call and failure modes, and commit to an answer."
    ),
    lambda r: (
        f"{r.p(NO_CODE)}the nightly job fails on {r.p(['Tuesdays and Thursdays', 'the first of the month', 'days after a deploy'])}. What are the competing explanations and what evidence would separate them?"
    ),
    lambda r: (
        f"Here are last quarter's numbers:\n\n{r.p(NUMBER_PARAGRAPHS)}\n\nWhich of these changes is most likely a real trend and which is noise? Argue it."
    ),
]
WRITING_ASK: list[Tpl] = [
    lambda r: (
        f"{r.p(NO_CODE)}write a {r.p(['toast', 'farewell speech', 'thank-you note'])} for {r.p(PEOPLE)}, who built the first version of this app. Funny, then warm."
    ),
    lambda r: (
        f"Turn these release notes into a friendly customer blog post, ~{r.p(['500', '700'])} words:\n\n- feat(api): add PATCH /v2/invoices/{{id}}\n- fix: VAT rounding on reverse-charge invoices\n- perf: PDF render p95 1.8s -> 420ms"
    ),
    lambda r: (
        f"Using these numbers, write the CEO's letter to shareholders, about 800 words, honest about the misses:\n\n{r.p(NUMBER_PARAGRAPHS)}"
    ),
    lambda r: (
        f"Write a bedtime story that secretly teaches what {r.p(['a prime number', 'infinity', 'a fraction', 'an equation'])} is. The hero is {r.p(['an otter', 'a snail', 'a small dragon'])}."
    ),
    lambda r: (
        f"{r.p(NO_CODE)}write the launch post for {r.p(PRODUCTS)} on our blog, story-led, in our voice."
    ),
    lambda r: (
        "Write a eulogy for my grandfather, a maths teacher for 40 years who loved proving things at the dinner table. About five minutes."
    ),
]
TOOLS_ASK: list[Tpl] = [
    lambda r: (f"{r.p(JUST_DO)}create a ticket '{r.p(MATHY_LINES)}', priority high", "tickets"),
    lambda r: (
        f"Email this to {r.p(PEOPLE)}: 'The proof of concept for the pricing model is ready, the maths checks out and the blog draft is in the drive.'",
        "email",
    ),
    lambda r: (f"{r.p(JUST_DO)}post in #general that the essay contest results are out", "slack"),
]
ASK_TEMPLATES: dict[str, list[Tpl]] = {
    "coding": CODING_ASK,
    "tools": TOOLS_ASK,
    "instruction": INSTRUCTION_ASK,
    "math": MATH_ASK,
    "reasoning": REASONING_ASK,
    "writing": WRITING_ASK,
}
# Redirections put in front of a templated task inside an agent's wrapper: a coding agent asked
# for something else, or asked to plan before coding.
REDIRECT_PREFIXES: dict[str, list[str]] = {
    "coding": CODE_PLAN,
    "tools": JUST_DO,
    "instruction": [
        "don't change any files, just give me the output: ",
        "no code, ",
        "not a code question: ",
    ],
    "math": NO_CODE,
    "reasoning": NO_CODE + NO_TOOLS + THINK,
    "writing": NO_CODE,
}
MULTI_REDIRECTS = {
    "de": ["Keine Codeänderung, nur die Frage: ", "Hat nichts mit dem Code zu tun: "],
    "fr": ["Pas de code pour l'instant : ", "Question hors code : "],
    "es": ["Sin código por ahora: ", "No es de código: "],
    "pt": ["Sem código por enquanto: ", "Não mexe no código, só responde: "],
    "zh": ["先别改代码，", "跟代码无关："],
    "ja": ["コードとは関係ない質問です。", "コードは変えないでください。"],
    "ru": ["Не про код: ", "Ничего не меняй в коде, просто ответь: "],
    "ko": ["코드랑 상관없는 질문인데요, ", "코드는 건드리지 말고, "],
}
