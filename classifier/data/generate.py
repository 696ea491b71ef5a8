"""Generate the labelled training corpus ``train.jsonl`` by composing templates.

    python -m classifier.data.generate [--n-per-intent 700] [--seed 7] [--out PATH]

Every example is one OpenAI request body plus its intent and a ``source``. A source is a
*traffic family*: it fixes the wrapper (system prompt, conversation shape, tools, content
parts, typos) and owns a disjoint share of the phrasing templates of every intent (template
``i`` of an intent belongs to source ``i % len(SOURCES)``). Leave-one-source-out evaluation
therefore tests unseen phrasings inside an unseen conversation style, not just re-shuffled
slot fillers. A quarter of the drawn templates are non-English (``MULTI``: German, French, Spanish,
Simplified Chinese, Japanese, Russian, Brazilian Portuguese), under the same round-robin; every
source owns one template per intent of each of the last four languages and one of German, French
or Spanish. A conversation continues in the language of its templated user turn: the terse
follow-up (``NATIVE_FOLLOWUPS``, same round-robin) and the canned assistant replies
(``NATIVE_REPLIES``) are mostly in that language, sometimes in English.
``holdout.jsonl`` is hand-written separately and never produced here.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

R = random.Random(0)  # reseeded in main(); templates draw from it


def p(pool: list[str] | tuple[str, ...]) -> str:
    return R.choice(pool)


def n(lo: int, hi: int) -> int:
    return R.randint(lo, hi)


# ============================================================================ slot pools

LANGS = ["python", "typescript", "go", "rust", "java", "javascript", "ruby", "kotlin", "c++", "bash"]
PATHS = [
    "src/billing/invoice.py",
    "app/api/routes/users.ts",
    "internal/queue/worker.go",
    "src/parser/lexer.rs",
    "lib/auth/session.rb",
    "services/payments/src/main/java/com/acme/PaymentService.java",
    "web/components/Cart.tsx",
    "router/backends.py",
    "pkg/cache/lru.go",
    "scripts/migrate_users.sh",
    "tests/test_pricing.py",
    "db/queries/report.sql",
    "frontend/src/hooks/useAuth.js",
    "crates/core/src/config.rs",
    "cmd/server/main.go",
    "etl/jobs/daily_rollup.py",
]
FUNCS = [
    "parse_header",
    "computeTotal",
    "retry_with_backoff",
    "LoadConfig",
    "normalize_email",
    "merge_intervals",
    "handle_webhook",
    "render_invoice",
    "flushBuffer",
    "get_user_by_id",
    "validate_token",
    "apply_discount",
]
PY_CODE = [
    "def merge_intervals(xs):\n    xs.sort()\n    out = [xs[0]]\n    for a, b in xs[1:]:\n        if a <= out[-1][1]:\n            out[-1][1] = max(out[-1][1], b)\n        else:\n            out.append([a, b])\n    return out",
    "class LRUCache:\n    def __init__(self, cap):\n        self.cap = cap\n        self.d = {}\n    def get(self, k):\n        if k not in self.d:\n            return -1\n        v = self.d.pop(k)\n        self.d[k] = v\n        return v",
    "async def fetch_all(urls):\n    async with aiohttp.ClientSession() as s:\n        return [await s.get(u) for u in urls]",
    "def apply_discount(order, code):\n    if code in DISCOUNTS:\n        order.total = order.total - order.total * DISCOUNTS[code]\n    return order.total",
    "for i in range(len(items)):\n    for j in range(len(items)):\n        if items[i].sku == items[j].sku and i != j:\n            dupes.append(items[i])",
    "@app.post('/webhook')\ndef handle_webhook(req: Request):\n    payload = json.loads(req.body)\n    event = payload['type']\n    if event == 'invoice.paid':\n        mark_paid(payload['data']['id'])\n    return {'ok': True}",
]
JS_CODE = [
    "export function computeTotal(items) {\n  let total = 0;\n  items.forEach(i => { total += i.price * i.qty });\n  return total.toFixed(2)\n}",
    "const useAuth = () => {\n  const [user, setUser] = useState(null);\n  useEffect(() => {\n    fetch('/api/me').then(r => r.json()).then(setUser);\n  });\n  return user;\n};",
    "app.get('/users/:id', async (req, res) => {\n  const user = await db.query(`SELECT * FROM users WHERE id = ${req.params.id}`);\n  res.json(user);\n});",
]
GO_CODE = [
    "func (w *Worker) Run(ctx context.Context) error {\n\tfor {\n\t\tjob := <-w.jobs\n\t\tgo w.process(job)\n\t}\n}",
    "func LoadConfig(path string) (*Config, error) {\n\tb, err := os.ReadFile(path)\n\tvar c Config\n\tjson.Unmarshal(b, &c)\n\treturn &c, err\n}",
]
RUST_CODE = [
    "fn parse(input: &str) -> Vec<Token> {\n    let mut out = Vec::new();\n    for c in input.chars() {\n        out.push(Token::from(c).unwrap());\n    }\n    out\n}",
    "impl Cache {\n    pub fn get(&self, k: &str) -> Option<&String> {\n        let guard = self.map.lock().unwrap();\n        guard.get(k)\n    }\n}",
]
SQL_CODE = [
    "SELECT u.id, count(o.id) FROM users u LEFT JOIN orders o ON o.user_id = u.id WHERE o.created_at > now() - interval '30 days' GROUP BY u.id",
    "UPDATE accounts SET balance = balance - 100 WHERE id = 7;\nUPDATE accounts SET balance = balance + 100 WHERE id = 9;",
]
ALL_CODE = PY_CODE + JS_CODE + GO_CODE + RUST_CODE + SQL_CODE


def code_block() -> str:
    code = p(ALL_CODE)
    tag = (
        "python"
        if code in PY_CODE
        else "js"
        if code in JS_CODE
        else "go"
        if code in GO_CODE
        else "rust"
        if code in RUST_CODE
        else "sql"
    )
    return f"```{tag}\n{code}\n```" if R.random() < 0.75 else code


def traceback() -> str:
    kind = n(0, 4)
    if kind == 0:
        return (
            "Traceback (most recent call last):\n"
            f'  File "/app/{p(PATHS)}", line {n(10, 400)}, in {p(FUNCS)}\n'
            f"    {p(['total = order.total - order.total * DISCOUNTS[code]', 'return self.d[k]', 'payload = json.loads(req.body)', 'out = [xs[0]]'])}\n"
            f"{p(['KeyError', 'IndexError: list index out of range', 'TypeError: unsupported operand type(s) for -: str and float', 'json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)', 'AttributeError: NoneType object has no attribute id'])}"
        )
    if kind == 1:
        return (
            f'Exception in thread "main" java.lang.NullPointerException: Cannot invoke "String.length()"\n'
            f"\tat com.acme.payments.PaymentService.charge(PaymentService.java:{n(20, 300)})\n"
            f"\tat com.acme.payments.Controller.post(Controller.java:{n(20, 300)})\n\tat java.base/java.lang.Thread.run(Thread.java:833)"
        )
    if kind == 2:
        return f"thread 'main' panicked at 'called `Option::unwrap()` on a `None` value', src/parser/lexer.rs:{n(10, 200)}:{n(5, 40)}\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"
    if kind == 3:
        return (
            f"TypeError: Cannot read properties of undefined (reading '{p(['map', 'length', 'id', 'price'])}')\n"
            f"    at computeTotal (web/components/Cart.tsx:{n(5, 90)}:{n(3, 30)})\n    at renderWithHooks (react-dom.development.js:14985:18)"
        )
    return f"panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a2b3c]\n\ngoroutine {n(1, 90)} [running]:\nmain.(*Worker).process(...)\n\t/src/internal/queue/worker.go:{n(10, 99)}"


DIFF_MINUS = [
    "-    if user:",
    "-    total = sum(prices)",
    "-  const x = items.map(i => i.id)",
    "-\tdefer mu.Unlock()",
]
DIFF_PLUS = [
    "+    if user is not None and user.active:",
    "+    total = round(sum(prices), 2)",
    "+  const x = items?.map(i => i.id) ?? []",
    "+\tmu.Unlock()",
]
DIFF_EXTRA = [
    '+    log.info("charged %s", user.id)',
    "+    cache.clear()",
    "+  // TODO remove",
    "+\treturn nil",
]


def diff() -> str:
    f = p(PATHS)
    return (
        f"diff --git a/{f} b/{f}\n--- a/{f}\n+++ b/{f}\n@@ -{n(1, 200)},7 +{n(1, 200)},9 @@\n"
        f"{p(DIFF_MINUS)}\n{p(DIFF_PLUS)}\n{p(DIFF_EXTRA)}\n     return result"
    )


def lint_output() -> str:
    f = p(PATHS)
    rows = [
        f"{f}:{n(1, 300)}:{n(1, 80)}: {p(['F401 `os` imported but unused', 'E711 comparison to None should be `is None`', 'B006 Do not use mutable data structures for argument defaults', 'UP007 Use `X | Y` for type annotations', 'no-unused-vars', 'SIM108 Use ternary operator'])}"
        for _ in range(n(2, 5))
    ]
    return "\n".join(rows) + f"\nFound {len(rows)} errors."


TEST_ARGS = ["[]", "0.1 + 0.2", '"Ünïcode"', "None", "-5"]
TEST_EXPECTED = ["0", "0.3", "[]", "True", '"ok"']


def test_output() -> str:
    return (
        f"============================= FAILURES =============================\n"
        f"___________________ test_{p(FUNCS).lower()}_{p(['empty', 'rounding', 'unicode', 'expired', 'negative'])} ___________________\n"
        f"    def test_case():\n>       assert {p(FUNCS)}({p(TEST_ARGS)}) == {p(TEST_EXPECTED)}\nE       AssertionError: assert {p(['None', '0.30000000000000004', 'False', '[1]'])} == {p(['0', '0.3', 'True', '[]'])}\n"
        f"FAILED tests/test_pricing.py::test_case - AssertionError\n========= 1 failed, {n(5, 200)} passed in {n(1, 30)}.{n(10, 99)}s ========="
    )


CITIES = [
    "Berlin",
    "Lyon",
    "Madrid",
    "Austin",
    "Osaka",
    "Toronto",
    "Nairobi",
    "Lisbon",
    "Seattle",
    "Zürich",
    "Bogotá",
    "Melbourne",
]
PEOPLE = [
    "Priya",
    "Jonas",
    "Amélie",
    "Carlos",
    "Mei",
    "Tom",
    "Fatima",
    "Lukas",
    "Sofia",
    "Dmitri",
    "the design team",
    "my manager",
]
COMPANIES = [
    "Northwind Coffee",
    "Brightpath Health",
    "Acme Robotics",
    "Lumen Bank",
    "Verde Outdoor",
    "Kite Analytics",
    "Tidal Fitness",
    "Oakline Furniture",
    "Nimbus Cloud",
    "Harbor Insurance",
    "Pixelcraft Studio",
    "Solace Sleep",
]
PRODUCTS = [
    "a solar-powered e-bike",
    "our new budgeting app",
    "a noise-cancelling headset for call centers",
    "an AI meeting scheduler",
    "a plant-based protein bar",
    "the 2027 line of trail shoes",
    "a zero-fee savings account",
    "a smart thermostat",
    "our open-source observability platform",
    "a subscription coffee service",
    "a kids' coding tablet",
]
VOICES = [
    "warm, witty and plain-spoken",
    "confident but never salesy",
    "playful, lots of short sentences",
    "premium, calm, understated",
    "friendly and inclusive, no jargon",
    "bold and a little irreverent",
]
TOPICS = [
    "remote work burnout",
    "why small teams ship faster",
    "sustainable packaging",
    "the future of urban cycling",
    "financial literacy for Gen Z",
    "sleep and productivity",
    "open-source sustainability",
    "the ethics of AI in hiring",
    "slow travel",
    "building a reading habit",
    "data privacy for small businesses",
]
REVIEWS = [
    "Arrived late and the box was crushed.",
    "Absolutely love it, works as advertised!",
    "It's ok I guess.",
    "Support never answered my emails.",
    "Best purchase this year",
    "Battery dies after 2 hours, disappointed.",
    "meh. does the job",
]
PARAGRAPHS = [
    "On March 3rd the board approved a budget of $2.4M for the Lisbon office, which will open in Q3 2027 with 40 staff. Hiring starts in May; the lease was signed on 14 Feb.",
    "Our Q2 churn rose to 4.1% from 3.2%, mostly among annual plans that renewed after the price change. Support tickets about invoices doubled. Marketing proposes a loyalty discount.",
    "Hi team, quick update: the migration to Postgres 16 finished last night. Two services (billing, search) still point at the old replica and need config changes before Friday.",
    "Dear Ms. Alvarez, thank you for your order #88213. Unfortunately the walnut desk is back-ordered until June 12. We can refund you or ship a similar oak model this week.",
    "Contact: Jordan Blake, Head of Procurement at Fennel Foods (jordan.blake@fennelfoods.com, +44 20 7946 0321). Interested in a 12-month pilot starting September.",
]
SENTENCES = [
    "we gotta push the launch cuz the vendor messed up again",
    "pls send me the doc asap",
    "The meeting is moved to tmrw, sorry for that.",
    "Your package will arrive soon.",
    "we are happy to inform u that ur account is upgraded",
]
TOOLSETS: dict[str, list[dict[str, Any]]] = {}


def _tool(name: str, desc: str, **params: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": desc,
            "parameters": {
                "type": "object",
                "properties": {k: {"type": v} for k, v in params.items()},
                "required": list(params)[:1],
            },
        },
    }


for _name, _tools in {
    "weather": [
        _tool("get_weather", "Current weather and forecast for a city", city="string", days="integer")
    ],
    "calendar": [
        _tool("create_event", "Create a calendar event", title="string", start="string", attendees="array"),
        _tool("list_events", "List events in a date range", start="string", end="string"),
    ],
    "orders": [
        _tool("lookup_order", "Look up an order by id", order_id="string"),
        _tool("issue_refund", "Refund an order", order_id="string", reason="string"),
    ],
    "search": [_tool("web_search", "Search the web", query="string", recency_days="integer")],
    "tickets": [
        _tool(
            "create_ticket",
            "Create an issue in the tracker",
            title="string",
            priority="string",
            body="string",
        )
    ],
    "email": [_tool("send_email", "Send an email", to="string", subject="string", body="string")],
    "sql": [_tool("run_sql", "Run a read-only SQL query on the analytics warehouse", query="string")],
    "stocks": [_tool("get_quote", "Latest stock quote", ticker="string")],
    "flights": [
        _tool("search_flights", "Search flights", origin="string", destination="string", date="string")
    ],
    "fs": [
        _tool("read_file", "Read a file from the workspace", path="string"),
        _tool("list_dir", "List a directory", path="string"),
        _tool("run_command", "Run a shell command in the sandbox", command="string"),
    ],
    "slack": [_tool("post_message", "Post a message to a Slack channel", channel="string", text="string")],
    "fx": [
        _tool(
            "convert_currency",
            "Convert an amount between currencies",
            amount="number",
            source="string",
            target="string",
        )
    ],
    "http": [_tool("http_check", "Check if a URL responds", url="string")],
    "reminders": [_tool("set_reminder", "Set a reminder", text="string", at="string")],
    "github": [
        _tool("list_pull_requests", "List pull requests of a repo", repo="string", state="string"),
        _tool("get_pull_request", "Get one pull request", repo="string", number="integer"),
    ],
    "crm": [
        _tool("find_contact", "Find a CRM contact", email="string"),
        _tool("update_contact", "Update a CRM contact", contact_id="string", fields="object"),
    ],
    "booking": [
        _tool(
            "book_table",
            "Reserve a restaurant table",
            restaurant="string",
            party_size="integer",
            time="string",
        )
    ],
}.items():
    TOOLSETS[_name] = _tools

CODING_TOOLS = TOOLSETS["fs"] + [
    _tool("edit_file", "Apply an edit to a file", path="string", old="string", new="string")
]

# ============================================================================ intent templates
# Each template returns the last user turn. For tools it returns (text, toolset name).

Tpl = Callable[[], Any]

CODING_QUESTIONS = [
    "read a large file line by line without loading it all",
    "mock a datetime in a unit test",
    "parse command line flags",
    "cancel a running task after a timeout",
    "stream a file upload to S3",
    "paginate a REST API with cursors",
    "debounce an input handler",
    "set up structured logging with request ids",
    "write a generic function with a type constraint",
    "profile a slow function",
]
CODE_STUBS = [
    'def slugify(title: str) -> str:\n    """Lower-case, strip accents, replace spaces with dashes."""\n',
    "// TypeScript\n// debounce(fn, ms): returns a debounced version of fn\nexport function debounce<T extends (...args: any[]) => void>(",
    "func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {\n\t// TODO: read-through cache\n",
    "class RateLimiter:\n    def __init__(self, rate: float, burst: int):\n",
    "-- top 5 products by revenue per month\nSELECT",
    "#!/usr/bin/env bash\n# back up the postgres db to s3 nightly, keep 7 days\n",
    "fn parse_duration(s: &str) -> Result<Duration, ParseError> {\n",
    "# pytest fixtures for a temporary sqlite database\nimport pytest\n",
]
PREFIXES = [
    "hey, ",
    "quick one: ",
    "btw ",
    "ok next: ",
    "Hi! ",
    "pls ",
    "question: ",
    "side note, ",
    "Hallo, ",
    "Salut, ",
    "Hola, ",
]

TYPE_ERRORS = [
    'Argument 1 to "get" has incompatible type "str | None"',
    "Property id does not exist on type never",
    "cannot borrow `self.map` as mutable more than once at a time",
]

CODING: list[Tpl] = [
    lambda: f"Fix this bug:\n{code_block()}\n\n{traceback()}",
    lambda: f"{traceback()}\n\nwhat's wrong here? it only happens in prod",
    lambda: (
        f"Refactor `{p(FUNCS)}` in {p(PATHS)} to {p(['use dependency injection', 'be async', 'remove the global state', 'split the parsing from the IO', 'use a dataclass instead of a dict'])}. Keep the public API stable."
    ),
    lambda: (
        f"Write a {p(LANGS)} function that {p(['deduplicates a list of dicts by a key while keeping order', 'parses ISO-8601 durations', 'retries an HTTP call with exponential backoff and jitter', 'streams a large CSV and computes per-column stats', 'validates an IBAN', 'implements a token bucket rate limiter'])}."
    ),
    lambda: (
        f"Add unit tests for {p(FUNCS)} in {p(PATHS)} using {p(['pytest', 'jest', 'go test', 'JUnit 5', 'rspec'])}. Cover edge cases like {p(['empty input', 'unicode', 'timezones', 'negative amounts', 'concurrent calls'])}."
    ),
    lambda: f"Review this diff, anything risky?\n\n{diff()}",
    lambda: (
        f"{p(['ruff', 'eslint', 'golangci-lint', 'clippy', 'mypy'])} says:\n{lint_output()}\nfix these pls"
    ),
    lambda: (
        f"Write a SQL query that {p(['returns the top 10 customers by revenue in the last 90 days', 'finds users who signed up but never placed an order', 'computes weekly retention cohorts', 'deletes duplicate rows keeping the newest'])}. Tables: users(id, email, created_at), orders(id, user_id, total, created_at)."
    ),
    lambda: (
        f"regex that matches {p(['semver strings like 1.2.3-rc.1', 'UK postcodes', 'a markdown link [text](url)', 'IPv4 addresses but not 999.1.1.1', 'lines that start with TODO or FIXME'])}"
    ),
    lambda: (
        f"bash one-liner to {p(['find all files larger than 100MB and sort by size', 'rename *.jpeg to *.jpg recursively', 'count lines of python code excluding tests', 'kill whatever is listening on port 8080', 'tail the last 500 lines of all logs containing ERROR'])}"
    ),
    lambda: f"Add docstrings and type hints to this:\n{code_block()}",
    lambda: f"pytest fails:\n{test_output()}\ncan you make it pass? the implementation is in {p(PATHS)}",
    lambda: (
        f"Implement {p(['pagination', 'soft delete', 'an audit log', 'rate limiting', 'CSV export', 'OAuth login'])} for our {p(['FastAPI', 'Express', 'Django', 'Spring Boot', 'Gin', 'Rails'])} service. Current handler:\n{code_block()}"
    ),
    lambda: f"Convert this to {p(LANGS)}:\n{code_block()}",
    lambda: f"Optimize this, it's O(n^2) and times out on 1e5 items:\n{code_block()}",
    lambda: (
        f"CI broke after {p(['bumping pydantic to v2', 'the node 22 upgrade', 'merging the auth refactor', 'enabling strict mode in tsc'])}. Log:\n{lint_output()}\n{traceback()}"
    ),
    lambda: (
        f"write a {p(['Dockerfile', 'GitHub Actions workflow', 'Makefile', 'docker-compose.yml', 'Kubernetes Deployment manifest'])} for a {p(['FastAPI app with uvicorn', 'Go service', 'Next.js frontend', 'Rust CLI'])} with {p(['multi-stage build', 'caching of dependencies', 'a healthcheck', 'non-root user'])}"
    ),
    lambda: (
        f"why does this {p(['deadlock', 'leak memory', 'return stale data', 'panic sometimes'])}?\n{code_block()}"
    ),
    lambda: f"explain what this code does line by line and then simplify it\n{code_block()}",
    lambda: f"Rename {p(FUNCS)} to {p(FUNCS)}_v2 everywhere in the repo and update the imports",
    lambda: (
        f"{code_block()}\n\n{p(['make it thread safe', 'add error handling', 'this is slow, speed it up', 'add logging', 'handle the None case'])}"
    ),
    lambda: (
        f"Git question: {p(['how do I undo the last commit but keep the changes', 'rebase my branch onto main and squash the fixups', 'find which commit introduced this bug with bisect'])}"
    ),
    lambda: f"The type checker complains: {p(TYPE_ERRORS)}. File {p(PATHS)}. How do I fix it properly?",
    lambda: f"how do I {p(CODING_QUESTIONS)} in {p(LANGS)}?",
    lambda: f"{p(CODE_STUBS)}",
    lambda: (
        f"quick q: {p(CODING_QUESTIONS)}? using {p(['FastAPI', 'React', 'Django', 'Spring', 'tokio', 'pandas'])}"
    ),
    lambda: (
        f"what's the difference between {p(['asyncio.gather and TaskGroup', 'useMemo and useCallback', 'a mutex and a RWMutex', 'LEFT JOIN and a subquery with EXISTS', 'Arc<Mutex<T>> and RefCell'])}, and which should I use here?\n{code_block()}"
    ),
    lambda: f"{code_block()}",
    lambda: (
        f"getting `{p(['ModuleNotFoundError: No module named yaml', 'ECONNREFUSED 127.0.0.1:5432', 'permission denied (publickey)', 'CORS policy: No Access-Control-Allow-Origin header'])}` when I {p(['run the app in docker', 'deploy to staging', 'run the tests in CI', 'start the dev server'])}. ideas?"
    ),
    lambda: (
        f"Write a migration that adds a non-null `{p(['tenant_id', 'deleted_at', 'currency'])}` column to `{p(['orders', 'users', 'invoices'])}` without locking the table for minutes"
    ),
]

TOOLS: list[Tpl] = [
    lambda: (
        f"What's the weather in {p(CITIES)} {p(['tomorrow', 'this weekend', 'right now', 'on Friday'])}?",
        "weather",
    ),
    lambda: (
        f"Schedule a {p(['30 min', '1h', '15 minute'])} meeting with {p(PEOPLE)} next {p(['Monday', 'Tuesday', 'Thursday'])} at {n(9, 16)}:00",
        "calendar",
    ),
    lambda: (f"Look up order {p(['#', 'ORD-', ''])}{n(10000, 99999)} and tell me where it is", "orders"),
    lambda: (f"Search the web for {p(TOPICS)} news from this week", "search"),
    lambda: (
        f"Create a ticket: {p(['login page 500s on Safari', 'export button does nothing', 'typo on pricing page', 'webhooks delayed by 10 minutes'])}, priority {p(['P1', 'high', 'low', 'P3'])}",
        "tickets",
    ),
    lambda: (
        f"Send an email to {p(PEOPLE)} saying {p(['the report is ready', 'I will be late tomorrow', 'thanks for the demo', 'the invoice was paid'])}",
        "email",
    ),
    lambda: (
        f"How many {p(['signups', 'paid conversions', 'refunds', 'active users'])} did we get {p(['last week', 'yesterday', 'in October'])}? use the warehouse",
        "sql",
    ),
    lambda: (f"What's {p(['AAPL', 'NVDA', 'SAP', 'TSLA', 'MSFT'])} trading at right now?", "stocks"),
    lambda: (
        f"Find flights from {p(CITIES)} to {p(CITIES)} on {p(['Dec 3', 'the 14th', 'next Friday', '2027-01-09'])}, cheapest first",
        "flights",
    ),
    lambda: (f"list what's in {p(['src/', 'the repo root', 'tests/', 'deploy/'])} and read the README", "fs"),
    lambda: (f"Refund order {n(10000, 99999)}, customer says it arrived broken", "orders"),
    lambda: (
        f"Post in #{p(['deploys', 'general', 'oncall', 'marketing'])} that {p(['the deploy is done', 'standup is moved to 10:30', 'the outage is resolved'])}",
        "slack",
    ),
    lambda: (
        f"Convert {n(20, 5000)} {p(['USD', 'EUR', 'GBP', 'JPY'])} to {p(['EUR', 'CHF', 'USD', 'MXN'])}",
        "fx",
    ),
    lambda: (
        f"Is {p(['status.acme.io', 'api.kiteanalytics.com', 'our staging site', 'https://example.org/health'])} up?",
        "http",
    ),
    lambda: (
        f"Remind me to {p(['call the landlord', 'renew the TLS cert', 'send the invoice', 'water the plants'])} at {n(1, 11)}{p(['am', 'pm'])}",
        "reminders",
    ),
    lambda: (
        f"Get the open PRs in {p(['acme/web', 'kite/etl', 'our monorepo'])} and tell me which ones are waiting on me",
        "github",
    ),
    lambda: (
        f"Book a table for {n(2, 8)} at {p(['Nopi', 'Chez Marcel', 'La Taberna', 'the sushi place'])} {p(['Friday 8pm', 'tonight', 'Sunday lunch'])}",
        "booking",
    ),
    lambda: (
        f"Find the CRM contact for {p(['jordan.blake@fennelfoods.com', 'mei@kite.io', 'carlos.r@lumenbank.es'])} and update their phone to +1 555 {n(100, 999)} {n(1000, 9999)}",
        "crm",
    ),
    lambda: (
        f"check the forecast for {p(CITIES)} and if it rains put 'bring umbrella' in my calendar",
        "weather",
    ),
    lambda: ("run the test suite in the sandbox and show me the failures", "fs"),
    lambda: ("pull yesterday's revenue by country from the warehouse", "sql"),
    lambda: (f"Email the customer on order {n(10000, 99999)} that it shipped", "orders"),
]

INSTRUCTION: list[Tpl] = [
    lambda: f"Extract name, email, company and phone from this text as JSON:\n\n{p(PARAGRAPHS)}",
    lambda: (
        "Classify the sentiment of each review as positive, negative or neutral. Output only the labels, one per line.\n"
        + "\n".join(f"{i + 1}. {p(REVIEWS)}" for i in range(n(3, 6)))
    ),
    lambda: (
        f"Summarize this in {p(['2 sentences', 'one line', '3 bullet points', 'under 50 words'])}:\n{p(PARAGRAPHS)}"
    ),
    lambda: (
        f"Convert this to CSV:\n| name | qty | price |\n|---|---|---|\n| {p(['widget', 'bolt', 'cable'])} | {n(1, 50)} | {n(1, 99)}.{n(10, 99)} |\n| {p(['nut', 'gear', 'plug'])} | {n(1, 50)} | {n(1, 99)}.{n(10, 99)} |"
    ),
    lambda: f'Rewrite this to sound more {p(["formal", "polite", "neutral", "concise"])}: "{p(SENTENCES)}"',
    lambda: (
        f"Return ONLY a JSON object with keys title, tags (max 3), language for this text. No prose.\n{p(PARAGRAPHS)}"
    ),
    lambda: f"Turn these notes into a bulleted list, max 5 bullets:\n{p(PARAGRAPHS)}",
    lambda: f"Translate to {p(['German', 'French', 'Spanish', 'English', 'Italian'])}: {p(SENTENCES)}",
    lambda: f"Fix grammar and spelling, don't change the meaning: {p(SENTENCES)}",
    lambda: (
        f"Which category does this ticket belong to: billing, technical, account, other? Answer with one word.\n\n{p(PARAGRAPHS)}"
    ),
    lambda: (
        f"Reformat these dates to ISO 8601, one per line: {p(['3/4/2026', 'March 5th 2026', '12.11.2025', 'Jan 9, 27'])}, {p(['2 Feb 2026', '2026/07/01', '11-30-2025'])}"
    ),
    lambda: f"Give me a subject line for this email, under 8 words:\n{p(PARAGRAPHS)}",
    lambda: f"Shorten this to under {p(['280 characters', '20 words', 'one sentence'])}: {p(PARAGRAPHS)}",
    lambda: (
        f"Parse this into street, city, postcode, country fields (YAML): {p(['221B Baker Street, London NW1 6XE, UK', 'Calle Mayor 12, 28013 Madrid', 'Hauptstr. 5, 10115 Berlin', '15 rue de la Paix, 75002 Paris'])}"
    ),
    lambda: f"Answer yes or no only: does this message mention a refund?\n{p(PARAGRAPHS)}",
    lambda: f"List every date and amount mentioned, one per line, format `date | amount`:\n{p(PARAGRAPHS)}",
    lambda: (
        f"Normalize these to lower snake_case: {', '.join(R.sample(['First Name', 'E-mail Address', 'ZipCode', 'createdAt', 'Order ID', 'Unit Price (EUR)'], 4))}"
    ),
    lambda: (
        f"Label each line as QUESTION, COMPLAINT or PRAISE:\n{p(REVIEWS)}\n{p(REVIEWS)}\nwhy is shipping so slow?"
    ),
    lambda: (
        f'Fill this template from the text below. Template: {{"customer": str, "issue": str, "urgent": bool}}\n{p(PARAGRAPHS)}'
    ),
    lambda: f"Sort these alphabetically and remove duplicates: {', '.join(R.choices(CITIES, k=7))}",
    lambda: f"tl;dr this for the standup: {p(PARAGRAPHS)}",
    lambda: (
        f"Make this a markdown table with columns item/owner/due:\n- ship invoices, {p(PEOPLE)}, fri\n- fix onboarding copy, {p(PEOPLE)}, mon"
    ),
]


def _poly() -> str:
    return f"{n(2, 9)}x^{n(2, 5)} - {n(1, 9)}x + {n(1, 20)}"


MATH: list[Tpl] = [
    lambda: f"Compute \\int_0^{{{n(1, 5)}}} x^{{{n(2, 6)}}} e^{{-x}}\\,dx exactly.",
    lambda: (
        f"How many ways can {n(6, 12)} people sit around a round table if {p(PEOPLE[:8])} and {p(PEOPLE[:8])} refuse to sit next to each other?"
    ),
    lambda: (
        f"Prove that for every integer n ≥ 1, {p(['n^3 - n is divisible by 6', '1 + 3 + ... + (2n-1) = n^2', '7^n - 1 is divisible by 6', 'the sum of the first n cubes is (n(n+1)/2)^2'])}."
    ),
    lambda: f"Find all integer solutions to {n(2, 9)}x + {n(10, 40)}y = {n(50, 400)} with x, y > 0.",
    lambda: (
        f"What's the probability that {p(['at least two of 30 people share a birthday', 'a random 5-card hand contains exactly two pairs', 'three dice sum to 10', 'a random chord is longer than the side of the inscribed triangle'])}? Give an exact fraction, then a decimal."
    ),
    lambda: f"Evaluate $\\sum_{{k=1}}^{{\\infty}} \\frac{{k^{n(1, 3)}}}{{{n(2, 5)}^k}}$ in closed form.",
    lambda: f"Find the last {p(['two', 'three', 'four'])} digits of {n(3, 99)}^{n(100, 2026)}.",
    lambda: (
        f"Solve the recurrence a_n = {n(2, 6)}a_{{n-1}} - {n(1, 9)}a_{{n-2}} with a_0 = {n(0, 3)}, a_1 = {n(1, 5)}. Closed form please."
    ),
    lambda: (
        f"Find the eigenvalues and eigenvectors of [[{n(1, 5)}, {n(0, 3)}], [{n(0, 3)}, {n(1, 5)}]] and diagonalize it."
    ),
    lambda: f"Let f(x) = {_poly()}. Find the exact minimum of f on [{n(-3, 0)}, {n(1, 4)}] and justify.",
    lambda: f"How many positive divisors does {n(1000, 99999)} have, and what's their sum?",
    lambda: (
        f"A bag has {n(3, 9)} red and {n(3, 9)} blue balls. We draw without replacement until both colours have appeared. Expected number of draws?"
    ),
    lambda: f"Compute lim_{{x→0}} (sin({n(2, 5)}x) - {n(2, 5)}x) / x^3.",
    lambda: f"Find the smallest prime p > {n(100, 5000)} such that p ≡ {n(1, 4)} (mod {n(5, 12)}).",
    lambda: (
        f"Volume of the solid formed by rotating y = x^{n(2, 4)} for 0 ≤ x ≤ {n(1, 4)} about the x-axis? Exact answer with π."
    ),
    lambda: f"Show that √{p(['2', '3', '5', '6', '12'])} is irrational, rigorous proof.",
    lambda: (
        f"Number of lattice paths from (0,0) to ({n(4, 9)},{n(4, 9)}) using unit right/up steps that never cross above y = x?"
    ),
    lambda: (
        f"Solve the ODE y'' + {n(1, 6)}y' + {n(1, 9)}y = {p(['e^{-x}', 'sin x', '0', 'x^2'])} with y(0)=1, y'(0)=0."
    ),
    lambda: (
        f"Compute the determinant of the {n(4, 5)}x{n(4, 5)} matrix with a_ij = min(i, j) and prove the pattern for general n."
    ),
    lambda: (
        f"If X ~ Poisson({n(2, 9)}) and Y ~ Poisson({n(2, 9)}) are independent, what's P(X = Y)? Numeric to 6 decimals."
    ),
    lambda: f"Find all real x with {n(2, 5)}^x + {n(2, 5)}^x = {n(10, 90)}. Give x to 8 significant digits.",
    lambda: f"quick check, is {n(1000, 99999)} prime? and what's φ({n(100, 9999)})?",
    lambda: f"Find the area enclosed by r = {n(1, 4)} + {n(1, 3)}cos θ. Show the integral.",
    lambda: (
        f"How many {n(5, 10)}-digit numbers have digits summing to {n(15, 40)}? Use generating functions."
    ),
]

REASONING: list[Tpl] = [
    lambda: (
        f"Knights always tell the truth, knaves always lie. {p(PEOPLE[:6])} says: 'At least one of us is a knave.' {p(PEOPLE[:6])} says: 'Exactly one of us is a knight.' Who is what? Show the case analysis."
    ),
    lambda: (
        "Five houses in a row, each a different colour. The Brit lives in the red house; the green house is immediately left of the white one; the coffee drinker lives in the green house; the Norwegian lives in the first house... Who owns the fish? Work it out step by step."
    ),
    lambda: (
        f"Task A must happen before B, C cannot be on {p(['Monday', 'Tuesday'])}, D and E must be on the same day, B is after D, and there are only 3 days with 2 slots each. Find a valid schedule or prove none exists."
    ),
    lambda: (
        f"Think through the second-order effects of {p(['a four-day work week', 'banning short-haul flights', 'a universal basic income pilot', 'congestion pricing'])} on {p(['small businesses', 'housing prices', 'public transit', 'rural towns'])}. Consider incentives, who adapts first, and what could backfire."
    ),
    lambda: (
        f"We're choosing between {p(['Postgres', 'a monolith', 'buying a vendor tool', 'hiring seniors'])} and {p(['DynamoDB', 'microservices', 'building in-house', 'hiring juniors and training them'])} for {p(['a 6-person startup', 'a regulated bank', 'a two-year roadmap'])}. Walk through the trade-offs carefully and commit to a recommendation."
    ),
    lambda: (
        "If all bloops are razzies and some razzies are lazzies, does it follow that some bloops are lazzies? Explain with a counter-model if not."
    ),
    lambda: (
        f"A farmer must get a wolf, a goat and a cabbage across a river; the boat holds him plus one item, and {p(['the wolf eats the goat', 'the goat eats the cabbage'])} if left alone. Now add a second goat that fights the first. Minimal solution? Reason step by step."
    ),
    lambda: (
        "Three boxes are labelled apples, oranges, and mixed; every label is wrong. You may draw one fruit from one box. How do you relabel all boxes? Then generalize to four boxes."
    ),
    lambda: (
        f"Our {p(['conversion rate', 'NPS', 'weekly active users', 'p99 latency'])} moved {n(5, 40)}% the week after {p(['we changed pricing', 'the redesign shipped', 'a competitor launched', 'daylight saving time'])}. List the competing causal explanations and design a way to tell them apart. Be rigorous."
    ),
    lambda: (
        f"Steelman both sides of {p(['whether remote work hurts junior engineers', 'nuclear vs renewables for grid decarbonization', 'open-sourcing model weights'])} and identify the actual crux where they disagree."
    ),
    lambda: (
        f"Find the flaw in this argument: '{p(['Every time we run ads sales go up, so ads cause sales', 'No one has proven it is unsafe, so it is safe', 'Most startups that raise big rounds succeed, so raising big rounds causes success'])}'. Be precise about which inference fails."
    ),
    lambda: (
        "Three prisoners wear hats from a pool of 3 white and 2 black; each sees the others but not his own. The first two say they don't know. What does the third conclude and why?"
    ),
    lambda: (
        f"We have {n(3, 6)} engineers and {n(3, 5)} projects. Ana can't work with Ben, project X needs two backend people, Chen only does frontend, and Y must ship before Z. Figure out an allocation that satisfies everything and justify each step."
    ),
    lambda: (
        "Which of these must be true? (1) If it rains the match is cancelled. (2) The match was not cancelled. (3) Either it rained or the pitch was dry. Reason carefully about each conclusion."
    ),
    lambda: (
        f"Two firms set prices simultaneously, marginal cost {n(1, 9)}, demand q = {n(50, 120)} - p split evenly if prices tie. What's the equilibrium and why? Then consider capacity constraints."
    ),
    lambda: (
        f"Evaluate the claim that '{p(['more data always beats better algorithms', 'a rising tide lifts all boats', 'correlation in this cohort implies the effect generalizes'])}'. Look for counterexamples, hidden assumptions and edge cases, and give a nuanced verdict."
    ),
    lambda: (
        "You meet two guards, one always lies, one always tells the truth, one door leads out. You can ask one question to one guard. What do you ask? Then solve it when a third guard answers randomly."
    ),
    lambda: (
        f"Think hard: is it rational for a {p(['city', 'company', 'country'])} to {p(['subsidize a stadium', 'match a competitor price cut', 'build a seawall now rather than in 20 years'])}? Weigh the uncertainty explicitly and reason to a conclusion."
    ),
    lambda: (
        "In a tournament each of 8 teams plays every other once. Is it possible that every team wins exactly as many games as it loses? Reason it out without brute force."
    ),
    lambda: (
        f"Here is the timeline of a {p(['supply chain disruption', 'failed product launch', 'team conflict'])}: week 1 the supplier warned, week 2 finance froze budgets, week 3 marketing still launched. Analyze the root causes and what decision points mattered most."
    ),
    lambda: (
        "A says B is lying. B says C is lying. C says both A and B are lying. Who is telling the truth? Walk through every case."
    ),
    lambda: (
        f"Devil's advocate: argue carefully why our plan to {p(['expand into Germany next quarter', 'drop the free tier', 'rewrite the app in Rust'])} could fail, rank the risks by likelihood and impact, then say what would change your mind."
    ),
]

WRITING: list[Tpl] = [
    lambda: (
        f"Write a {p(['1200', '1500', '2000', '800'])}-word blog post about {p(TOPICS)} for {p(COMPANIES)}. Brand voice: {p(VOICES)}."
    ),
    lambda: (
        f"Draft a press release announcing {p(PRODUCTS)} from {p(COMPANIES)}. Include a quote from the CEO and a boilerplate paragraph."
    ),
    lambda: (
        f"Write a short story (~{p(['1000', '1500', '2500'])} words) about {p(['a lighthouse keeper who receives letters from the future', 'two rival bakers in Lyon', 'a robot learning to garden', 'the last day of a summer camp'])}."
    ),
    lambda: (
        f"Write the keynote speech for {p(['our annual customer conference', 'a graduation ceremony', 'the product launch event', 'a charity gala'])}, about {p(['15', '10', '20'])} minutes, inspiring but not cheesy."
    ),
    lambda: (
        f"Landing page copy for {p(PRODUCTS)}: hero headline, subhead, three feature blocks, testimonial, CTA. Tone: {p(VOICES)}."
    ),
    lambda: (
        f"An essay on {p(TOPICS)}, around {p(['1500', '2000', '3000'])} words, with a strong opening hook and a personal angle."
    ),
    lambda: (
        f"Write this month's customer newsletter for {p(COMPANIES)}: {p(['new features', 'our sustainability report', 'holiday hours and a founder note', 'a community spotlight'])}. Long-form, in our voice ({p(VOICES)})."
    ),
    lambda: f"Write a long LinkedIn article on {p(TOPICS)}, thought-leadership style, with anecdotes.",
    lambda: (
        f"Write a {p(['wedding', 'retirement', 'farewell', 'birthday'])} speech for my {p(['sister', 'best friend', 'boss', 'grandfather'])}; {p(['she loves sailing and bad puns', 'he spent 30 years at the same company', 'we met in kindergarten'])}."
    ),
    lambda: (
        f"Write product description copy for {p(PRODUCTS)}, ~{p(['300', '500', '700'])} words, brand voice {p(VOICES)}, for the website and the catalogue."
    ),
    lambda: (
        f"Write a customer case study: how {p(COMPANIES)} used {p(PRODUCTS)} to {p(['cut costs by 30%', 'double their NPS', 'expand to 4 new markets'])}. Story arc: challenge, solution, results."
    ),
    lambda: (
        f"Draft the About Us page for {p(COMPANIES)}: founding story, mission, values, team. Make it feel human."
    ),
    lambda: (
        f"Write a poem about {p(['the sea at night', 'a city waking up', 'leaving home', 'autumn in Kyoto'])} in {p(['free verse', 'sonnet form', 'the style of Mary Oliver'])}."
    ),
    lambda: (
        f"Write chapter one of a {p(['mystery', 'sci-fi', 'fantasy', 'literary'])} novel set in {p(CITIES)}. Introduce the protagonist and end on a hook."
    ),
    lambda: (
        f"Write a 3-email nurture sequence for people who downloaded our {p(['pricing guide', 'whitepaper', 'free trial'])} at {p(COMPANIES)}. Each email 200-300 words, {p(VOICES)}."
    ),
    lambda: (
        f"Write an op-ed arguing that {p(['cities should ban cars from their centres', 'every school should teach personal finance', 'open-source deserves public funding'])}, 900 words, for a national newspaper."
    ),
    lambda: (
        f"Script a {p(['2-minute', '90 second', '60 second'])} brand video for {p(COMPANIES)} introducing {p(PRODUCTS)}, with voiceover and scene notes."
    ),
    lambda: (
        f"Rewrite our homepage story in a warmer voice, ~{p(['800', '1000'])} words. Here's the current one: '{p(COMPANIES)} provides solutions for customers. We are leaders in quality.'"
    ),
    lambda: (
        f"Write a eulogy for {p(['my grandmother, a nurse for 40 years', 'our family dog', 'a colleague who loved jazz'])}, heartfelt, 5 minutes long."
    ),
    lambda: (
        f"Give me a long-form feature article for our magazine on {p(TOPICS)}, interviews-style, 2000 words."
    ),
    lambda: (
        f"Write social + blog launch copy for {p(PRODUCTS)}: one long blog post and five tweets in our voice ({p(VOICES)})."
    ),
    lambda: (
        f"Write a bedtime story for a {n(4, 9)}-year-old about {p(['a brave snail', 'a cloud that wanted to be rain', 'a dragon afraid of the dark'])}."
    ),
]

# Non-English phrasings, drawn for 25 % of examples (see sample_text); round-robin over sources
# like the rest. German, French and Spanish here (2 per language and intent); Chinese, Japanese,
# Russian and Portuguese are appended below (6 per language and intent, in two batches).
MULTI: dict[str, list[Tpl]] = {
    "coding": [
        lambda: f"Kannst du diesen Fehler beheben?\n{traceback()}",
        lambda: f"Peux-tu corriger ce bug ? Le test échoue :\n{test_output()}",
        lambda: (
            f"Escribe una función en {p(LANGS)} que {p(['valide un IBAN', 'elimine duplicados de una lista', 'lea un CSV grande por partes'])}."
        ),
        lambda: f"Bitte refaktoriere {p(FUNCS)} in {p(PATHS)}, der Code ist unübersichtlich:\n{code_block()}",
        lambda: f"Ajoute des tests unitaires pour {p(FUNCS)} avec pytest.",
        lambda: f"¿Por qué falla esto?\n{code_block()}\n{traceback()}",
    ],
    "tools": [
        lambda: (f"Wie wird das Wetter morgen in {p(CITIES)}?", "weather"),
        lambda: (
            f"Réserve une table pour {n(2, 6)} personnes ce soir à {p(['Chez Marcel', 'Le Petit Zinc'])}.",
            "booking",
        ),
        lambda: (f"Busca el pedido {n(10000, 99999)} y dime cuándo llega.", "orders"),
        lambda: (f"Erstelle einen Termin mit {p(PEOPLE)} am Donnerstag um 14 Uhr.", "calendar"),
        lambda: (f"Envoie un e-mail à {p(PEOPLE)} pour dire que le rapport est prêt.", "email"),
        lambda: (f"Convierte {n(10, 900)} euros a dólares.", "fx"),
    ],
    "instruction": [
        lambda: f"Fasse diesen Text in zwei Sätzen zusammen:\n{p(PARAGRAPHS)}",
        lambda: f"Extrais le nom, l'e-mail et l'entreprise au format JSON :\n{p(PARAGRAPHS)}",
        lambda: (
            f"Clasifica estas reseñas como positiva, negativa o neutra. Solo las etiquetas.\n{p(REVIEWS)}\n{p(REVIEWS)}"
        ),
        lambda: (
            f"Übersetze ins Englische: {p(['Die Lieferung kommt morgen.', 'Bitte bestätigen Sie den Termin.', 'Wir haben das Problem behoben.'])}"
        ),
        lambda: f"Reformule cette phrase de façon plus formelle : « {p(SENTENCES)} »",
        lambda: f"Convierte esta lista en una tabla markdown: {', '.join(R.sample(CITIES, 4))}",
    ],
    "math": [
        lambda: f"Berechne das Integral \\int_0^{{{n(1, 4)}}} x^{n(2, 5)} \\ln(x)\\,dx exakt.",
        lambda: f"Démontre que pour tout entier n ≥ 1, {p(['n^5 - n est divisible par 5', '2^n > n'])}.",
        lambda: (
            f"¿Cuál es la probabilidad de obtener exactamente {n(2, 5)} seises al lanzar {n(6, 12)} dados? Fracción exacta."
        ),
        lambda: (
            f"Wie viele Möglichkeiten gibt es, {n(5, 10)} Bücher auf {n(2, 4)} Regale zu verteilen, wenn die Reihenfolge zählt?"
        ),
        lambda: f"Trouve toutes les solutions entières de x^2 - {n(2, 13)}y^2 = 1 avec y < 100.",
        lambda: f"Calcula el límite cuando x tiende a 0 de (e^{{{n(2, 5)}x}} - 1 - {n(2, 5)}x) / x^2.",
    ],
    "reasoning": [
        lambda: (
            "Drei Personen, A, B und C. A sagt: B lügt. B sagt: C lügt. C sagt: A und B lügen beide. Wer sagt die Wahrheit? Begründe jeden Schritt."
        ),
        lambda: (
            f"Analyse en profondeur les conséquences d'{p(['une semaine de quatre jours', 'une taxe carbone aux frontières'])} pour les PME. Pèse les arguments et conclus."
        ),
        lambda: (
            "Tres cajas mal etiquetadas: manzanas, naranjas y mixta. Puedes sacar una fruta de una caja. ¿Cómo corriges todas las etiquetas? Razona paso a paso."
        ),
        lambda: (
            f"Wir müssen zwischen {p(['Kubernetes', 'einem Monolithen'])} und {p(['Serverless', 'Microservices'])} entscheiden. Wäge die Vor- und Nachteile sorgfältig ab und gib eine begründete Empfehlung."
        ),
        lambda: (
            "Un fermier doit traverser une rivière avec un loup, une chèvre et un chou. Trouve la solution minimale et explique pourquoi elle est optimale."
        ),
        lambda: (
            f"Nuestro {p(['churn', 'tráfico'])} subió un {n(10, 40)}% después del cambio de precios. ¿Cuáles son las explicaciones causales posibles y cómo distinguirlas?"
        ),
    ],
    "writing": [
        lambda: (
            f"Schreibe einen Blogartikel (ca. {p(['1000', '1500'])} Wörter) über {p(['nachhaltige Verpackung', 'Remote-Arbeit', 'Radfahren in der Stadt'])} für {p(COMPANIES)}, im Ton unserer Marke: herzlich und klar."
        ),
        lambda: (
            f"Rédige un communiqué de presse pour le lancement de {p(['notre application de budget', 'notre nouvelle gamme de chaussures'])}, avec une citation du PDG."
        ),
        lambda: (
            f"Escribe un cuento de unas {p(['1200', '2000'])} palabras sobre {p(['un faro y su guardián', 'dos panaderos rivales'])}."
        ),
        lambda: (
            f"Schreib eine Rede für die Hochzeit meiner {p(['Schwester', 'besten Freundin'])}, lustig und berührend, etwa 5 Minuten."
        ),
        lambda: (
            f"Écris un texte de page d'accueil pour {p(COMPANIES)}, ton chaleureux et premium, environ 600 mots."
        ),
        lambda: (
            f"Redacta un ensayo largo sobre {p(['la ética de la IA', 'el turismo lento'])} para nuestro blog, con una introducción atractiva."
        ),
    ],
}

# Language of every non-English template (English ones are absent): the terse follow-up and the
# canned assistant replies of a conversation continue in it (see followup_text, assistant_reply).
TEMPLATE_LANG: dict[Tpl, str] = {
    t: ("de", "fr", "es")[i % 3] for ts in MULTI.values() for i, t in enumerate(ts)
}

# ---------------------------------------------------------------------------- more languages
# Simplified Chinese, Japanese, Russian and Brazilian Portuguese, first batch: 3 templates per
# language and intent. _interleave() alternates the languages in a per-intent order, so that under
# the i % len(SOURCES) round-robin every source owns two of these languages per intent in this
# batch (the language order differs between intents) and the other two in the second batch.

ZH_NAMES = ["王磊", "李娜", "张伟", "刘洋", "陈静", "老赵", "小周"]
JA_NAMES = ["田中さん", "佐藤さん", "鈴木部長", "高橋さん", "山本さん", "中村課長"]
ZH_CITIES = ["北京", "上海", "深圳", "杭州", "成都", "广州", "东京", "柏林"]
ZH_PARAGRAPHS = [
    "各位好：上周五董事会批准了成都分公司的预算，共计 380 万元，预计 2027 年第三季度开业，首批招聘 35 人。联系人：王磊（wanglei@kite-analytics.cn，电话 138 1234 5678）。",
    "客户反馈：订单 #88213 的实木书桌延迟发货，已经超过承诺时间 12 天。客户要求全额退款，否则会投诉到平台。客服已经第二次跟进，目前还没有结果。",
    "本周进展：支付服务已经迁移到 Postgres 16，搜索和报表两个服务还连着旧的只读副本，需要在周五（3 月 14 日）前改配置。另外下周二要做一次全链路压测。",
]
JA_PARAGRAPHS = [
    "お疲れ様です。3月3日の取締役会で福岡オフィスの予算（2,400万円）が承認されました。開設は2027年第3四半期、初年度は40名体制の予定です。担当：佐藤 健（k.sato@lumenbank.co.jp／03-1234-5678）",
    "お客様より：注文番号88213の商品が破損した状態で届いたとのことです。交換ではなく返金をご希望です。2月14日にも一度お問い合わせをいただいています。",
    "昨日のリリース後、ログイン画面で500エラーが断続的に発生しています。Safariのみで、全ユーザーの約4%に影響。暫定対応として旧バージョンへ切り戻し済みです。",
]
RU_PARAGRAPHS = [
    "Коллеги, добрый день! 3 марта совет директоров утвердил бюджет казанского офиса — 24 млн ₽. Открытие запланировано на III квартал 2027 года, штат 40 человек. Контакт: Ольга Смирнова, o.smirnova@nimbus.ru, +7 912 345-67-89.",
    "Клиент пишет, что заказ № 88213 пришёл с разбитым экраном, и требует вернуть деньги. Это уже второе обращение, первое было 14 февраля, ответа он так и не получил.",
    "Отток во втором квартале вырос до 4,1 % с 3,2 %, в основном среди годовых тарифов после повышения цен. Тикетов по счетам стало вдвое больше. Маркетинг предлагает скидку за лояльность.",
]
PT_PARAGRAPHS = [
    "Pessoal, a diretoria aprovou ontem o orçamento de R$ 2,4 milhões para o escritório de Curitiba, que abre no 3º trimestre de 2027 com 40 pessoas. Contato: Mariana Costa (mariana.costa@verdeoutdoor.com.br, +55 41 99876-5432).",
    "Oi, comprei a mesa de madeira (pedido 88213) e até agora nada. Já passou 20 dias do prazo e ninguém me responde. Quero o reembolso ou uma previsão real de entrega.",
    "Resumo da semana: a migração para o Postgres 16 terminou, mas os serviços de cobrança e busca ainda apontam para a réplica antiga. Precisamos ajustar até sexta, dia 14.",
]
PT_REVIEWS = [
    "Chegou antes do prazo, adorei!",
    "Produto veio com defeito e ninguém responde.",
    "É ok, nada demais.",
    "Péssimo atendimento, nunca mais compro.",
    "Vale cada centavo",
    "A bateria dura umas 2 horas, decepcionado.",
    "Entrega rápida, mas a embalagem veio amassada.",
]


def _interleave(order: str, **by_lang: list[Tpl]) -> list[Tpl]:
    """Templates of several languages, alternating in ``order`` (e.g. ``"zh ja ru pt"``)."""
    langs = order.split()
    assert sorted(langs) == sorted(by_lang) and len({len(v) for v in by_lang.values()}) == 1
    k = len(by_lang[langs[0]])
    TEMPLATE_LANG.update((t, lang) for lang, ts in by_lang.items() for t in ts)
    return [by_lang[lang][i] for i in range(k) for lang in langs]


MULTI["coding"] += _interleave(
    "zh ja ru pt",
    zh=[
        lambda: (
            f"{p(['帮我看下这个报错：', '这个报错怎么回事？', '线上突然报这个错，帮忙定位一下：'])}\n{traceback()}\n{p(['只在生产环境出现，本地复现不了', '昨天还好好的，今天发版之后就这样了', ''])}"
        ),
        lambda: (
            f"给 {p(PATHS)} 里的 {p(FUNCS)} 补{p(['单元测试', '单测'])}，用 {p(['pytest', 'jest', 'go test', 'JUnit 5'])}，{p(['边界情况都要覆盖，比如空输入和负数', '重点测一下并发调用', '记得覆盖时区相关的情况'])}。"
        ),
        lambda: (
            f"{code_block()}\n\n{p(['这段代码太慢了，数据量一大就超时，优化一下', '改成线程安全的', '加上错误处理和日志', '补充类型注解和 docstring', '帮我 review 一下，看看有什么问题'])}"
        ),
    ],
    ja=[
        lambda: (
            f"{p(PATHS)} の `{p(FUNCS)}` を{p(['非同期に書き換えて', 'リファクタリングしてグローバル変数をなくして', 'dataclass を使う形に直して', 'I/O 部分とパース部分に分割して'])}ください。公開APIは変えないでください。"
        ),
        lambda: f"テストが落ちます。直してもらえますか？\n{test_output()}\n実装は {p(PATHS)} にあります。",
        lambda: (
            f"{p(['正規表現で', 'regexで'])}{p(['semver（例: 1.2.3-rc.1）', '日本の郵便番号（123-4567形式）', 'IPv4アドレス（999.1.1.1 は除外）', 'TODO か FIXME で始まる行'])}にマッチさせたいです。{p(['', 'Pythonで使います。', 'JSで使う想定です。'])}"
        ),
    ],
    ru=[
        lambda: (
            f"{p(['ruff', 'eslint', 'mypy', 'golangci-lint', 'clippy'])} ругается:\n{lint_output()}\n{p(['поправь, пожалуйста', 'исправь всё это', 'почини, только без лишних изменений'])}"
        ),
        lambda: (
            f"Напиши SQL-запрос, который {p(['возвращает топ-10 клиентов по выручке за последние 90 дней', 'находит пользователей без единого заказа', 'считает недельные когорты удержания', 'удаляет дубликаты, оставляя самую свежую запись'])}. Таблицы: users(id, email, created_at), orders(id, user_id, total, created_at)."
        ),
        lambda: (
            f"{p(['Почему падает?', 'Что здесь не так?', 'Не понимаю, откуда ошибка'])}\n{code_block()}\n{traceback()}"
        ),
    ],
    pt=[
        lambda: (
            f"{p(['Escreve', 'Escreva', 'Cria'])} uma função em {p(LANGS)} que {p(['valide CPF', 'remova duplicados de uma lista de dicts mantendo a ordem', 'faça retry com backoff exponencial', 'leia um CSV grande em partes e calcule a média por coluna', 'formate valores em reais (R$ 1.234,56)'])}{p(['.', ', com testes.', ' e tipagem completa.'])}"
        ),
        lambda: (
            f"{p(['Revisa esse diff pra mim.', 'Dá uma olhada nesse diff?', 'Pode revisar esse PR?'])} {p(['Tem algo arriscado?', 'Vê se quebra alguma coisa.', 'Algum problema de concorrência?'])}\n\n{diff()}"
        ),
        lambda: (
            f"{p(['comando bash pra', 'one-liner em bash para', 'como faço no terminal pra'])} {p(['achar todos os arquivos maiores que 100MB', 'matar o processo que está na porta 8080', 'renomear *.jpeg para *.jpg recursivamente', 'contar linhas de código python sem os testes'])}?"
        ),
    ],
)
MULTI["tools"] += _interleave(
    "zh ru ja pt",
    zh=[
        lambda: (
            f"{p(ZH_CITIES)}{p(['明天', '这周末', '现在', '周五'])}天气怎么样？{p(['要不要带伞？', '', '适合跑步吗？'])}",
            "weather",
        ),
        lambda: (
            f"给{p(ZH_NAMES)}发封邮件，说一下{p(['周报已经发出了', '明天的会改到下午三点', '发票已经付款了', '演示很顺利，谢谢'])}",
            "email",
        ),
        lambda: (
            f"查一下{p(['昨天', '上周', '十月份'])}的{p(['注册用户数', '付费转化', '退款笔数', '日活'])}，直接查数仓",
            "sql",
        ),
    ],
    ru=[
        lambda: (
            f"{p(['Найди', 'Проверь'])} заказ {p(['№', '#', ''])}{n(10000, 99999)} и скажи, где он сейчас{p(['', ' и когда будет доставлен'])}",
            "orders",
        ),
        lambda: (
            f"Создай тикет: {p(['страница входа отдаёт 500 в Safari', 'кнопка экспорта ничего не делает', 'вебхуки приходят с задержкой 10 минут'])}, приоритет {p(['высокий', 'P1', 'низкий'])}",
            "tickets",
        ),
        lambda: (
            f"Найди авиабилеты из {p(['Москвы', 'Казани', 'Петербурга'])} в {p(['Стамбул', 'Дубай', 'Ереван', 'Сочи'])} на {p(['3 декабря', 'следующую пятницу', '14-е'])}, сначала самые дешёвые",
            "flights",
        ),
    ],
    ja=[
        lambda: (
            f"{p(JA_NAMES)}と{p(['来週月曜', '明日', '木曜日'])}の{n(9, 17)}時から{p(['30分', '1時間'])}、{p(['定例', '1on1', '打ち合わせ'])}の予定を入れておいて",
            "calendar",
        ),
        lambda: (
            f"{p(['NVDA', 'トヨタ（7203）', 'ソニー（6758）', 'AAPL'])}の今の株価を教えてください",
            "stocks",
        ),
        lambda: (
            f"{p(['Postgres 16', 'OpenTelemetry', '生成AIの規制'])}に関する{p(['今週', '直近1週間', '昨日'])}のニュースを検索して、要点を教えて",
            "search",
        ),
    ],
    pt=[
        lambda: (
            f"Converte {n(20, 5000)} {p(['dólares', 'euros', 'libras'])} para reais{p(['', ' pela cotação de hoje'])}",
            "fx",
        ),
        lambda: (
            f"Reserva uma mesa pra {n(2, 8)} pessoas no {p(['Fogo de Chão', 'Mocotó', 'Coco Bambu', 'japonês da esquina'])} {p(['hoje às 20h', 'sábado no almoço', 'sexta às 21h'])}",
            "booking",
        ),
        lambda: (
            f"Me lembra de {p(['pagar o boleto', 'renovar o certificado TLS', 'ligar pro contador', 'mandar a nota fiscal'])} {p(['amanhã às 9h', 'às 15h', 'sexta de manhã'])}",
            "reminders",
        ),
    ],
)
MULTI["instruction"] += _interleave(
    "zh ja pt ru",
    zh=[
        lambda: (
            f"用{p(['两句话', '一句话', '三个要点', '50 字以内'])}总结下面这段内容：\n{p(ZH_PARAGRAPHS + PARAGRAPHS)}"
        ),
        lambda: f"判断下面这条工单属于哪一类：账单、技术、账户、其他。只回答一个词。\n\n{p(ZH_PARAGRAPHS)}",
        lambda: (
            f"把下面的地址拆成省、市、区、街道、邮编字段，输出 YAML：{p(['广东省深圳市南山区科技园南路 88 号，邮编 518057', '浙江省杭州市西湖区文三路 478 号 310013', '四川省成都市武侯区天府大道北段 1700 号 610041'])}"
        ),
    ],
    ja=[
        lambda: (
            f"以下の文章から{p(['氏名、メールアドレス、会社名、電話番号', '日付と金額', '担当者名と連絡先'])}を抽出してJSONで返してください。{p(['説明は不要です。', 'JSON以外は出力しないでください。', ''])}\n\n{p(JA_PARAGRAPHS + PARAGRAPHS)}"
        ),
        lambda: (
            f"次の文を{p(['もっと丁寧な', 'ビジネス向けの', '簡潔な'])}表現に書き直してください：「{p(['明日の会議、無理になったんで来週でいい？', '資料早く送って', 'その件はこっちでは無理です'])}」"
        ),
        lambda: (
            f"{p(['このメモ', '以下の議事メモ'])}を{p(['箇条書き（最大5項目）', 'マークダウンの表（項目／担当／期限）', 'CSV'])}に整形して：\n{p(JA_PARAGRAPHS)}"
        ),
    ],
    pt=[
        lambda: (
            "Classifique cada avaliação como positiva, negativa ou neutra. Responda só com os rótulos, um por linha.\n"
            + "\n".join(f"{i + 1}. {p(PT_REVIEWS)}" for i in range(n(3, 6)))
        ),
        lambda: (
            f"Extrai nome, e-mail, empresa e telefone desse texto e devolve só o JSON:\n{p(PT_PARAGRAPHS + PARAGRAPHS)}"
        ),
        lambda: f"Responde só sim ou não: essa mensagem menciona reembolso?\n{p(PT_PARAGRAPHS + PARAGRAPHS)}",
    ],
    ru=[
        lambda: (
            f"Переведи на {p(['английский', 'немецкий', 'китайский'])}: «{p(['Доставка придёт завтра до обеда.', 'Пожалуйста, подтвердите время встречи.', 'Мы уже исправили ошибку, извините за неудобства.'])}»"
        ),
        lambda: (
            f"Преобразуй в формат ISO 8601, по одной дате в строке: {p(['3 марта 2026', '03.04.2026', '12/11/2025'])}, {p(['2 февраля 2026 г.', '2026/07/01', '30.11.2025'])}"
        ),
        lambda: (
            f"Сократи до {p(['одного предложения', '280 символов', '20 слов'])}, ничего не добавляй:\n{p(RU_PARAGRAPHS)}"
        ),
    ],
)
MULTI["math"] += _interleave(
    "ru pt zh ja",
    ru=[
        lambda: (
            f"Вычисли точно интеграл \\int_0^{{{n(1, 4)}}} x^{{{n(2, 6)}}} e^{{-{n(2, 3)}x}}\\,dx, с выкладками."
        ),
        lambda: (
            f"Докажи, что при любом натуральном n {p(['n^3 - n делится на 6', '7^n - 1 делится на 6', 'сумма первых n кубов равна (n(n+1)/2)^2', '4^n + 15n - 1 делится на 9'])}."
        ),
        lambda: (
            f"Найди собственные значения и собственные векторы матрицы [[{n(1, 5)}, {n(0, 3)}], [{n(0, 3)}, {n(1, 5)}]] и приведи её к диагональному виду."
        ),
    ],
    pt=[
        lambda: (
            f"Qual a probabilidade de {p(['sair exatamente dois pares numa mão de 5 cartas', 'a soma de três dados dar 10', 'pelo menos duas pessoas entre 30 fazerem aniversário no mesmo dia'])}? Quero a fração exata e depois o decimal."
        ),
        lambda: f"Quantos divisores positivos tem {n(1000, 99999)}? E qual a soma deles? Mostra a fatoração.",
        lambda: (
            f"Resolve a EDO y'' + {n(1, 6)}y' + {n(1, 9)}y = {p(['e^{-x}', 'sen x', '0', 'x^2'])} com y(0) = 1 e y'(0) = 0."
        ),
    ],
    zh=[
        lambda: f"求 {n(3, 99)}^{n(100, 2026)} 的最后{p(['两', '三', '四'])}位数字，写出过程。",
        lambda: (
            f"{n(6, 12)} 个人围坐一张圆桌，其中{'和'.join(R.sample(ZH_NAMES, 2))}不能相邻，一共有多少种坐法？"
        ),
        lambda: f"计算极限 lim_{{x→0}} (sin({n(2, 5)}x) - {n(2, 5)}x) / x^3，用泰勒展开做。",
    ],
    ja=[
        lambda: (
            f"次の漸化式の一般項を求めよ：a_n = {n(2, 6)}a_{{n-1}} - {n(1, 9)}a_{{n-2}}, a_0 = {n(0, 3)}, a_1 = {n(1, 5)}"
        ),
        lambda: f"√{p(['2', '3', '5', '6'])} が無理数であることを厳密に証明してください。",
        lambda: (
            f"\\sum_{{k=1}}^{{\\infty}} \\frac{{k^{n(1, 3)}}}{{{n(2, 5)}^k}} の値を閉じた形で求めてください。途中式もお願いします。"
        ),
    ],
)
MULTI["reasoning"] += _interleave(
    "pt ja zh ru",
    pt=[
        lambda: (
            f"Estamos decidindo entre {p(['Postgres', 'um monólito', 'comprar uma ferramenta pronta'])} e {p(['DynamoDB', 'microsserviços', 'desenvolver internamente'])} para {p(['uma startup de 6 pessoas', 'um banco regulado', 'o roadmap dos próximos dois anos'])}. Analisa os trade-offs com cuidado e fecha uma recomendação."
        ),
        lambda: (
            "Três caixas com rótulos maçãs, laranjas e mistas; todos os rótulos estão errados. Você pode tirar uma fruta de uma caixa só. Como corrigir todos os rótulos? Depois generaliza para quatro caixas."
        ),
        lambda: (
            f"Acha a falha nesse argumento: '{p(['Toda vez que rodamos anúncios as vendas sobem, então anúncios causam vendas', 'Ninguém provou que é perigoso, então é seguro', 'A maioria das startups que captam muito dá certo, então captar muito causa sucesso'])}'. Seja preciso sobre qual inferência falha."
        ),
    ],
    ja=[
        lambda: (
            "騎士は常に本当のことを言い、悪党は常に嘘をつきます。Aは「私たちのうち少なくとも一人は悪党だ」と言い、Bは「騎士はちょうど一人だ」と言いました。それぞれ騎士か悪党か、場合分けして答えてください。"
        ),
        lambda: (
            f"{p(['週休3日制', '本社の地方移転', 'フルリモート勤務の廃止'])}を導入した場合、{p(['中小企業', '若手社員の育成', '地域経済'])}にどんな二次的影響が出るか、インセンティブや副作用も含めて深く考察してください。"
        ),
        lambda: (
            f"タスクAはBより先、Cは{p(['月曜', '火曜'])}不可、DとEは同じ日、BはDより後。3日間で各日2枠しかありません。条件を満たすスケジュールを見つけるか、存在しないことを証明してください。"
        ),
    ],
    zh=[
        lambda: "A 说 B 在说谎，B 说 C 在说谎，C 说 A 和 B 都在说谎。到底谁说的是真话？把每种情况都推一遍。",
        lambda: (
            f"我们团队{n(4, 8)}个人，要在{p(['自研', '上 Kubernetes', '重写成 Rust'])}和{p(['买现成的 SaaS', '继续用虚拟机', '维持现有的 Python 代码'])}之间做决定。请仔细权衡利弊、风险和长期成本，最后给出明确建议。"
        ),
        lambda: (
            "8 支球队单循环比赛，每两队只赛一场，没有平局。有没有可能每支球队的胜场数都等于负场数？不要穷举，讲清楚推理。"
        ),
    ],
    ru=[
        lambda: (
            f"Наша {p(['конверсия', 'недельная аудитория', 'p99-задержка'])} изменилась на {n(5, 40)}% через неделю после того, как {p(['мы поменяли цены', 'вышел редизайн', 'конкурент запустил аналог'])}. Перечисли конкурирующие причинные объяснения и предложи, как их различить. Рассуждай строго."
        ),
        lambda: (
            "Три мудреца в колпаках из набора: 3 белых и 2 чёрных. Каждый видит колпаки других, но не свой. Первые двое говорят, что не знают цвет своего колпака. Что может заключить третий и почему?"
        ),
        lambda: (
            f"Побудь адвокатом дьявола: почему наш план {p(['выйти на рынок Казахстана в следующем квартале', 'убрать бесплатный тариф', 'переписать бэкенд на Rust'])} может провалиться? Ранжируй риски по вероятности и ущербу и скажи, что заставило бы тебя передумать."
        ),
    ],
)
MULTI["writing"] += _interleave(
    "ja zh ru pt",
    ja=[
        lambda: (
            f"{p(COMPANIES)}のオウンドメディア向けに、「{p(['リモートワークと燃え尽き', '小さなチームが速く出荷できる理由', '持続可能なパッケージ', '睡眠と生産性'])}」をテーマにしたブログ記事を{p(['3000', '4000', '5000'])}字程度で書いてください。トーンは{p(['親しみやすく、専門用語は少なめ', '落ち着いた上質な感じ', 'テンポよく、少し遊び心のある感じ'])}で。"
        ),
        lambda: (
            f"{p(['妹', '親友', '上司', '同期'])}の{p(['結婚式', '送別会', '退職祝い'])}で話すスピーチ原稿を書いてください。{p(['5分くらい', '3分程度'])}で、笑いあり涙ありの感じでお願いします。"
        ),
        lambda: (
            f"{p(['キャンプ場', '海辺の町', '東京の下町'])}を舞台にした短編小説を{p(['8000', '10000'])}字くらいで書いてください。主人公は{p(['定年を迎えた郵便局員', '中学生の女の子', '売れない漫画家'])}で、最後に少し希望が残る結末に。"
        ),
    ],
    zh=[
        lambda: (
            f"帮我写一篇新品发布新闻稿：{p(COMPANIES)}{p(['推出太阳能电动自行车', '发布新一代智能温控器', '上线零手续费储蓄账户'])}。要有 CEO 引语和公司简介段落，{p(['正式一点', '适合直接发给媒体'])}。"
        ),
        lambda: (
            f"给我们的{p(['智能记账 App', '植物蛋白棒', '儿童编程平板', '降噪耳机'])}写一版落地页文案：主标题、副标题、三个卖点模块、用户评价和行动号召。品牌调性：{p(['温暖、真诚、接地气', '高级、克制、有质感', '年轻、俏皮、短句多'])}。"
        ),
        lambda: (
            f"写一篇关于{p(['城市骑行的未来', '慢旅行', '远程办公倦怠', 'AI 招聘的伦理'])}的长文，{p(['3000', '5000'])} 字左右，开头要抓人，可以加入个人经历。"
        ),
    ],
    ru=[
        lambda: (
            f"Напиши рассказ примерно на {p(['10 000', '15 000'])} знаков о {p(['смотрителе маяка, который получает письма из будущего', 'двух соперничающих пекарях из Казани', 'последнем дне в летнем лагере'])}. {p(['Атмосферно, без хэппи-энда.', 'Тёплый, немного грустный.', ''])}"
        ),
        lambda: (
            f"Подготовь пресс-релиз о запуске {p(['нового приложения для личного бюджета', 'линейки беговых кроссовок 2027 года', 'умного термостата'])} компании {p(COMPANIES)}: цитата генерального директора, ключевые факты, блок «О компании»."
        ),
        lambda: (
            f"Напиши лонгрид для корпоративного блога {p(COMPANIES)} на тему «{p(['Почему маленькие команды релизят быстрее', 'Финансовая грамотность для зумеров', 'Устойчивая упаковка'])}», около {p(['8000', '12 000'])} знаков, живым языком, с примерами."
        ),
    ],
    pt=[
        lambda: (
            f"Escreve um post de blog de umas {p(['1200', '1500', '2000'])} palavras sobre {p(['educação financeira para a geração Z', 'burnout no trabalho remoto', 'embalagens sustentáveis', 'mobilidade urbana de bicicleta'])} para a {p(COMPANIES)}. Tom de voz: {p(['leve, bem-humorado e direto', 'confiante sem ser vendedor', 'acolhedor e sem jargão'])}."
        ),
        lambda: (
            f"Preciso de um discurso de {p(['formatura', 'abertura da convenção anual de clientes', 'lançamento do produto'])} de uns {p(['10', '15'])} minutos, inspirador mas sem ser brega."
        ),
        lambda: (
            f"Escreve a newsletter mensal para os clientes da {p(COMPANIES)} sobre {p(['as novidades do produto', 'nosso relatório de sustentabilidade', 'o horário de fim de ano e um recado do fundador'])}. Texto longo, no nosso tom: {p(['caloroso e próximo', 'divertido e direto'])}."
        ),
    ],
)

# ---------------------------------------------------------------------------- second batch
# 3 more templates per language and intent, of other kinds than the first batch (writing: posts,
# letters, product copy, toasts; reasoning: post-mortems, "why" analyses, decisions, puzzles;
# instruction: translations, fixed-label classification, extraction, strict reformatting). Each
# intent uses the partner order of its first batch ("a b c d" -> "b a d c"): a language that got
# the even sources there gets the odd ones here, so every source owns exactly one template per
# language and intent.

RU_NAMES = ["Ольга", "Дмитрий", "Сергей", "Аня", "Игорь", "Марина", "Павел"]


def _zh_seating() -> str:
    a, b, c, d, e, f = R.sample(ZH_NAMES, 6)
    return (
        f"年会排座位，一张圆桌坐 6 个人：{a}、{b}、{c}、{d}、{e}、{f}。要求：{a}和{b}不能挨着坐；{c}必须坐在{d}正对面；"
        f"{e}要坐在{a}的左手边；{f}不想挨着{c}。有没有满足所有条件的坐法？有的话给出一种并写清推理过程，没有的话证明为什么不行。"
    )


def _zh_founder_letter() -> str:
    topic, notes = p(
        [
            (
                "会员价格要上调",
                [
                    "服务器和人力成本这两年涨了不少，云费用一年涨了 40%",
                    "老用户保留原价到年底",
                    "涨价后要做的三件事：离线模式、多端同步、客服 2 小时内响应",
                    "真诚道歉，也真诚感谢",
                ],
            ),
            (
                "公司成立五周年",
                [
                    "五年前三个人在出租屋里写下第一行代码",
                    "现在有 120 万用户，最难的时候账上只剩两个月工资",
                    "感谢最早一批用户提的建议，很多功能是他们提出来的",
                    "下一个五年想做的事",
                ],
            ),
            (
                "我们决定停掉免费版",
                [
                    "免费版用户占 80%，但我们已经养不起了",
                    "6 月 30 日之后免费版变成只读，数据不会删",
                    "老用户首年五折",
                    "我们知道这会让一些人失望",
                ],
            ),
        ]
    )
    bullets = "\n".join(f"- {x}" for x in notes)
    return (
        f"以创始人的口吻给用户写一封信，说明{topic}。要点如下，请写成一封真诚、有温度的长信（1500 字左右），"
        f"{p(['不要写成冷冰冰的公告', '别有公关腔', '语气像跟老朋友说话'])}：\n{bullets}"
    )


def _zh_product_copy() -> str:
    product, point = p(
        [
            ("这款保温杯", "设计感和 12 小时保温"),
            ("我们新出的降噪耳机", "降噪效果和续航"),
            ("这款儿童编程平板", "安全、护眼和好上手"),
            ("一款植物蛋白棒", "口感和低糖"),
        ]
    )
    return (
        f"给{product}写一段电商详情页文案，突出{point}，"
        f"{p(['风格参考小红书种草笔记', '走高级简约路线', '接地气一点，别太官方'])}，500 字左右。"
    )


def _ja_eulogy() -> str:
    who, memory = p(
        [
            ("30年お世話になった会社の先輩", "釣りが好きで、いつも新人の面倒を見てくれる人でした。"),
            ("大学時代の恩師", "厳しい方でしたが、卒業後もずっと気にかけてくださいました。"),
            ("祖父", "戦後、小さな町工場を一代で築いた人です。"),
        ]
    )
    return (
        f"{who}の告別式で読む弔辞を書いてください。{memory}"
        "3〜4分程度で、しめっぽくなりすぎないようにお願いします。"
    )


def _ja_ranking() -> str:
    return (
        f"A、B、C、D、Eの5人が{p(['社内マラソン大会', '営業成績のランキング', '徒競走'])}で順位を競いました。"
        "A「私はBより上だった」B「私は1位ではない」C「私はDのすぐ後だった」D「Eは最下位だった」E「Aは3位だった」。"
        "このうち1人だけが嘘をついています。順位は一通りに決まりますか？どう絞り込んだか、場合分けして説明してください。"
    )


def _ru_rota() -> str:
    a, b, c, d, e = R.sample(RU_NAMES, 5)
    extra = p(["", f"; {c} просит вторник", f"; {e} не может в пятницу"])
    return (
        f"Составь график дежурств на неделю (пн–пт), по одному человеку в день: {a}, {b}, {c}, {d}, {e}. "
        f"Условия: {a} не может в понедельник и в среду; {b} и {c} не должны дежурить в соседние дни; "
        f"{d} дежурит позже, чем {e}; в пятницу дежурит {a} или {b}{extra}. "
        "Найди расписание или докажи, что его нет. Рассуждай по шагам."
    )


def _ru_toast() -> str:
    occasion, detail = p(
        [
            (
                "юбилей отца, ему 60",
                "Всю жизнь проработал инженером на заводе, обожает рыбалку и свою старую «Ниву».",
            ),
            (
                "свадьбу лучшего друга",
                "Познакомились на первом курсе, вместе ходили в походы по Карелии и чуть не утонули на байдарке.",
            ),
            (
                "проводы коллеги на пенсию",
                "Она 25 лет вела у нас бухгалтерию и всех подкармливала пирожками.",
            ),
        ]
    )
    return (
        f"Помоги с тостом на {occasion}. {detail} Хочется тепло и с юмором, минуты на две, "
        f"без банальностей{p(['', ' и без стихов', ', чтобы в конце все подняли бокалы'])}."
    )


def _ru_case_study() -> str:
    before, done, after = p(
        [
            (
                "отчёты собирали вручную, 3 дня в месяц",
                "интеграция с 1С и CRM за 6 недель",
                "отчёт за 15 минут, ошибок в счетах на 70 % меньше",
            ),
            (
                "заявки терялись в почте, ответ клиенту — 2 дня",
                "единое окно обращений и чат-бот в Telegram",
                "ответ за 20 минут, NPS вырос с 31 до 58",
            ),
            (
                "склад считали в Excel, пересорт каждую неделю",
                "ТСД и учёт по штрихкодам за 2 месяца",
                "инвентаризация за день вместо недели, пересорт почти исчез",
            ),
        ]
    )
    return (
        f"Нужен кейс для сайта: как {p(COMPANIES)} внедрила наш продукт. Исходные данные:\n"
        f"— было: {before}\n— сделали: {done}\n— стало: {after}\n"
        f"— цитата клиента: «{p(['Не верили, что так бывает', 'Жалеем только, что не сделали этого раньше', 'Команда наконец занимается делом, а не таблицами'])}»\n"
        "Структура: задача, решение, результат. Объём 4–5 тысяч знаков, живым языком, без канцелярита."
    )


def _pt_toast() -> str:
    occasion, detail = p(
        [
            (
                "pro aniversário de 60 anos da minha mãe",
                "Ela foi professora a vida toda, criou três filhos praticamente sozinha e ama samba.",
            ),
            (
                "pro casamento do meu irmão",
                "A gente dividiu quarto até os 18 e ele sempre foi o certinho da família.",
            ),
            (
                "pra despedida do nosso chefe que vai se aposentar",
                "Ele tá há 30 anos na empresa e conhece todo mundo pelo nome, até o pessoal da portaria.",
            ),
        ]
    )
    return (
        f"Escreve um brinde {occasion}. {detail} Uns 2 minutos de fala, engraçado no começo "
        f"e que emocione no final{p(['', ', sem clichê', '. Nada muito formal'])}."
    )


PT_NOTES = [
    "- fui desligado semana passada no layoff\n- 4 anos lá, montei o time de dados do zero\n- aprendi muito, sem mágoa nenhuma\n- procurando vaga de head de dados ou staff, remoto",
    "- nosso app passou de 1 milhão de usuários\n- começamos em 3 pessoas numa sala emprestada em Recife\n- agradecer clientes e o time\n- estamos contratando devs backend",
    "- voltei hoje da licença-paternidade\n- foram 5 meses fora\n- a empresa apoiou de verdade\n- acho que mais homens deviam tirar licença longa",
]
PT_MINUTES = [
    "Ata – planejamento Q3\n- Presentes: Bruna (produto), Rafael (dev), Thiago (vendas)\n- Projetor não funcionou, 20 min perdidos\n- Decidido: lançar o app novo em setembro\n- Rafael contra, acha o prazo apertado\n- Thiago prometeu 50 clientes piloto\n- Café acabou às 10h",
    "Ata – retrospectiva da Black Friday\n- Site caiu 2x (21h e 23h40)\n- Time de infra virou a noite, pizza às 3h\n- Vendas 18% acima da meta mesmo assim\n- Ação: teste de carga em outubro, não em novembro\n- Fernanda ganhou o apelido de 'a salvadora do checkout'",
]


def _pt_bullets() -> str:
    return (
        f"Reescreve isso em 3 bullet points, curtos e diretos, sem introdução{p(['', ' nem conclusão'])}:\n"
        f"{p(PT_PARAGRAPHS)}"
    )


MULTI["coding"] += _interleave(
    "ja zh pt ru",
    ja=[
        lambda: (
            f"型チェッカーに怒られてます：\n`{p(TYPE_ERRORS)}`\nファイルは {p(PATHS)} です。"
            f"{p(['# type: ignore で黙らせるんじゃなくて、', 'cast で逃げずに、', ''])}ちゃんとした直し方を教えてください。"
        ),
        lambda: (
            f"{p(['前任者が書いたコードで、誰も読めなくて困ってます。', 'レビューで指摘されたんですが、正直何をしてるのかよく分かってません…', ''])}"
            f"このコードが何をしているか1行ずつ説明して、そのあともっとシンプルに書き直してもらえますか？\n{code_block()}"
        ),
        lambda: (
            f"{p(['orders', 'users', 'invoices'])} テーブルに NOT NULL の `{p(['tenant_id', 'currency', 'region'])}` カラムを追加する"
            f"マイグレーションを書いてください。本番は{p(['約8000万行', '数千万行', '3億行近く'])}あるので、長時間ロックしない方法で。"
            f"{p(['Alembic', 'Rails の migration', 'Flyway', 'Prisma'])}を使っています。"
        ),
    ],
    zh=[
        lambda: (
            f"{p(['帮忙写个', '给我写一个', '需要一个'])} {p(['Dockerfile', 'GitHub Actions workflow', 'docker-compose.yml', 'GitLab CI 配置'])}，"
            f"项目是{p(['FastAPI + uvicorn', 'Go 写的后端服务', 'Next.js 前端', 'Spring Boot 应用'])}，要求："
            f"{'；'.join(R.sample(['多阶段构建', '依赖要缓存', '用非 root 用户跑', '加健康检查', '镜像尽量小', '推到阿里云镜像仓库'], 3))}。"
            f"{p(['', '直接给文件内容就行，不用解释', '顺便说下每一步为啥这么写'])}"
        ),
        lambda: (
            f"git 问题：{p(['不小心把 .env 提交了而且已经 push 到远程了，怎么从历史里彻底删掉？', '怎么把最近三个 commit 合成一个再推上去？', 'rebase 到一半冲突一大堆，怎么放弃回到 rebase 之前的状态', '线上有个 bug 不知道是哪次提交引入的，git bisect 具体怎么用？', '两个分支改了同一个文件，cherry-pick 老是冲突，有没有更好的办法'])}"
        ),
        lambda: (
            f"{p(['/api/orders', '/users/:id', '/v1/invoices'])} 这个接口要加{p(['游标分页', '限流（每个用户每分钟 60 次）', '软删除', '审计日志', 'CSV 导出'])}，"
            f"我们用的是 {p(['FastAPI', 'Gin', 'Spring Boot', 'Express', 'Django'])}。现在的代码：\n{code_block()}\n"
            f"{p(['改完把对应的测试也补上', '返回格式不要动，前端在用', '尽量少改动'])}"
        ),
    ],
    pt=[
        lambda: (
            f"{p(['termina essa função pra mim', 'completa o código abaixo', 'implementa o resto, por favor'])}"
            f"{p(['', ' com testes', ', sem lib externa'])}:\n{p(CODE_STUBS)}"
        ),
        lambda: (
            f"nosso {p(['worker da fila', 'serviço de pagamentos', 'cache em memória'])} "
            f"{p(['ta vazando memoria', 'trava de vez em quando, acho que é deadlock', 'as vezes retorna dado velho'])} "
            f"em produção e ninguem descobre o porque. segue o codigo:\n{code_block()}\nonde ta o problema?"
        ),
        lambda: (
            f"Tô tomando `{p(['ModuleNotFoundError: No module named yaml', 'ECONNREFUSED 127.0.0.1:5432', 'permission denied (publickey)', 'CORS policy: No Access-Control-Allow-Origin header'])}` "
            f"quando {p(['subo o app no docker', 'faço deploy em staging', 'rodo os testes no CI', 'inicio o servidor de dev'])}. "
            f"{p(['Localmente funciona normal.', 'Já reiniciei o container e nada.', 'Começou depois que atualizei as dependências.'])} Alguma ideia?"
        ),
    ],
    ru=[
        lambda: (
            f"Перепиши на {p(LANGS)}, поведение должно остаться тем же"
            f"{p(['', ', и добавь обработку ошибок', ', без сторонних библиотек'])}:\n{code_block()}"
        ),
        lambda: (
            f"Нужен {p(['Kubernetes Deployment и Service', 'Helm-чарт', 'docker-compose.yml', 'манифест для ArgoCD'])} "
            f"для {p(['сервиса на Go', 'FastAPI-приложения', 'воркера очереди на Python', 'фронта на Next.js'])}: "
            f"{', '.join(R.sample(['2 реплики', 'readiness и liveness пробы', 'лимит памяти 512Mi', 'секреты из Vault', 'HPA по CPU', 'запуск не от root'], 3))}."
            f"{p([' Без объяснений, только YAML.', ' Коротко поясни ключевые места.', ''])}"
        ),
        lambda: (
            f"в чем разница между {p(['asyncio.gather и TaskGroup', 'useMemo и useCallback', 'Mutex и RWMutex', 'Arc<Mutex<T>> и RefCell', 'LEFT JOIN и подзапросом с EXISTS'])} "
            f"и что лучше взять вот здесь?\n{code_block()}"
        ),
    ],
)
MULTI["tools"] += _interleave(
    "ru zh pt ja",
    ru=[
        lambda: (
            f"Какая погода {p(['в Казани', 'в Москве', 'в Новосибирске', 'в Сочи'])} {p(['на выходных', 'завтра', 'в пятницу'])}? "
            f"{p(['Зонт брать?', '', 'Хотим на дачу поехать'])}",
            "weather",
        ),
        lambda: (
            f"Найди в CRM контакт {p(['o.smirnova@nimbus.ru', 'i.petrov@lumenbank.ru', 'anna.k@kite.io'])} и поменяй телефон "
            f"на +7 9{n(10, 99)} {n(100, 999)}-{n(10, 99)}-{n(10, 99)}",
            "crm",
        ),
        lambda: (
            f"{p(['Прогони тесты в песочнице', 'Запусти тесты', 'Посмотри, что лежит в src/, прогони линтер'])} и покажи, что упало",
            "fs",
        ),
    ],
    zh=[
        lambda: (
            f"在 #{p(['deploys', 'oncall', 'general', '研发群'])} 频道里发个消息，说{p(['发布已经完成了', '今天的站会改到 10:30', '故障已经恢复', '今晚 10 点停机维护'])}",
            "slack",
        ),
        lambda: (
            f"看看 {p(['acme/web', 'kite/etl', '我们的 monorepo'])} 现在有哪些打开的 PR，哪些在等我 review",
            "github",
        ),
        lambda: (
            f"帮我查{p(['下周五', '12 月 3 号', '明天一早'])}从{p(['上海', '北京', '杭州'])}飞{p(['深圳', '成都', '东京'])}的机票，"
            f"{p(['按价格从低到高排', '只要直飞的', '最好是上午的航班'])}",
            "flights",
        ),
    ],
    pt=[
        lambda: (
            f"Manda um e-mail {p(['pro Rafael', 'pra Bruna', 'pro João do financeiro', 'pra equipe de vendas'])} avisando que "
            f"{p(['o relatório tá pronto', 'vou me atrasar amanhã', 'a nota fiscal já foi paga', 'a reunião mudou pras 15h'])}",
            "email",
        ),
        lambda: (
            f"Puxa do data warehouse {p(['a receita de ontem por estado', 'quantos cadastros tivemos semana passada', 'o número de reembolsos em outubro', 'os usuários ativos por dia nos últimos 7 dias'])}",
            "sql",
        ),
        lambda: (
            f"O que eu tenho na agenda {p(['amanhã', 'na quinta', 'semana que vem'])}? "
            f"{p(['Se tiver horário livre à tarde, marca 1h com a Bruna', '', 'Preciso encaixar uma call de 30 min'])}",
            "calendar",
        ),
    ],
    ja=[
        lambda: (
            f"注文番号{n(10000, 99999)}、{p(['商品が破損して届いたとのことなので', 'お客様都合のキャンセルなので', '二重決済になっているので'])}返金処理をお願いします",
            "orders",
        ),
        lambda: (
            f"{p(['ステージング', 'status.acme.io', 'api.kiteanalytics.com', '社内Wiki'])}落ちてない？{p(['ちょっと確認して', '応答あるか見てみて', ''])}",
            "http",
        ),
        lambda: (
            f"{p(['明日の朝9時', '今日の15時', '金曜の夕方'])}に「{p(['請求書を送る', 'TLS証明書を更新する', '田中さんに電話', '経費精算を出す'])}」ってリマインドして",
            "reminders",
        ),
    ],
)
MULTI["instruction"] += _interleave(
    "ja zh ru pt",
    ja=[
        lambda: (
            "以下の問い合わせを「請求」「技術」「アカウント」「その他」のどれかに分類してください。出力は「番号: ラベル」の形式のみで。\n"
            + "\n".join(
                f"{i + 1}. {t}"
                for i, t in enumerate(
                    R.sample(
                        [
                            "先月分の請求書が二重に届いています",
                            "ログインしようとすると500エラーになります",
                            "パスワードを忘れてしまいました",
                            "登録メールアドレスを変更したいです",
                            "APIのレスポンスがたまにすごく遅いです",
                            "御社の住所を教えてください",
                            "カードの有効期限が切れたので更新したい",
                            "CSVエクスポートで文字化けします",
                        ],
                        n(3, 5),
                    )
                )
            )
        ),
        lambda: (
            "アプリのUI文言を英語に翻訳してください。キーはそのまま、値だけ訳してJSONで返してください。\n{\n"
            + ",\n".join(
                f'  "{k}": "{v}"'
                for k, v in R.sample(
                    [
                        ("login.title", "ログイン"),
                        ("login.forgot", "パスワードをお忘れですか？"),
                        ("cart.empty", "カートに商品がありません"),
                        ("checkout.pay", "お支払いに進む"),
                        ("profile.saved", "変更を保存しました"),
                        ("error.network", "通信エラーが発生しました。時間をおいて再度お試しください"),
                    ],
                    n(3, 5),
                )
            )
            + "\n}"
        ),
        lambda: (
            "次の寸法をセンチメートルに換算して、「品名: 幅×奥行×高さ cm」（小数点以下1桁）の形式で1行ずつ出してください。説明は不要です。\n"
            + "\n".join(
                f"{t}: {n(20, 70)} x {n(10, 40)} x {n(10, 50)} inch"
                for t in R.sample(["デスク", "本棚", "モニター台", "ソファ", "キャビネット"], n(2, 4))
            )
        ),
    ],
    zh=[
        lambda: (
            f"翻译成{p(['英文', '日文', '地道的英文'])}，只要译文，不要解释："
            f"{p(['货已经发出，预计周四送达。', '麻烦确认一下会议时间，谢谢。', '问题已经修复，给您带来的不便深表歉意。', '本周五下午系统维护，期间无法登录。'])}"
        ),
        lambda: (
            f"帮我改一下错别字和病句，{p(['意思和语气都别动', '只改错的地方，别润色'])}，只输出改好的文本：\n"
            + p(
                [
                    "各位同事：因为服务器迁移，周五晚上系统会暂停使用，请大家提前做好准备，在此期间如有紧急问题在联系值班同事，谢谢大家的的配合。",
                    "经过这次项目，让我们团队学到了很多，尤其是在沟通方面，以后我们会再接再励，争取做的更好。",
                    "您好，您反应的问题我们已经收到，技术同事正在抓紧处理，预计明天给您答复，请您耐心等侍。",
                ]
            )
        ),
        lambda: (
            "把下面的日期统一成 YYYY-MM-DD，金额统一成保留两位小数的人民币格式（例：¥1,234.00），一行一条，格式：日期 | 金额。不要任何解释。\n"
            + "\n".join(
                R.sample(
                    [
                        "2026年3月5日 付款 1200 元",
                        "2026年4月1日退款八百块",
                        "26/07/01 收到 3.5 万",
                        "2025.11.30 报销 ¥86.5",
                        "上周五（2026/2/13）支付 2,400",
                        "2025年12月9号 押金 5k",
                    ],
                    n(3, 5),
                )
            )
        ),
    ],
    ru=[
        lambda: (
            "Вытащи из текста реквизиты и верни JSON с полями inn, kpp, company, amount, date. Ничего, кроме JSON.\n\n"
            + p(
                [
                    "Счёт № 417 от 12.03.2026. Поставщик: ООО «Северный ветер», ИНН 7701234567, КПП 770101001. Итого к оплате: 184 500,00 руб., в т. ч. НДС 20 %.",
                    "Добрый день! Направляем счёт за хостинг за февраль: ООО «Облако Плюс», ИНН 5402123456, КПП 540201001, сумма 36 000 ₽, оплатить до 5 марта 2026 г.",
                    "АО «ТехноСнаб», ИНН 6658012345 / КПП 665801001. Акт сверки на 31.12.2025, задолженность в вашу пользу 1 250 000 руб.",
                ]
            )
        ),
        lambda: (
            f"Исправь только орфографию и пунктуацию, {p(['стиль не трогай', 'ничего не переписывай'])}:\n"
            + p(
                [
                    "Добрый день Коллеги! Напоминаю что в пятницу в 15:00 состоится встреча по итогам квартала, прошу всех подготовить отчеты и прислать их мне до четверга заранее спасибо.",
                    "В связи с переездом офиса, доступ к серверной будет ограничен с 10 по 12 марта. Просьба, все вопросы решать через дежурного администратора.",
                    "Мы провели анализ и выяснили что причиной сбоя стала ошибка в конфигураций балансировщика, которая была исправленна в течении часа.",
                ]
            )
        ),
        lambda: (
            "Разметь обращения из чата поддержки одной меткой из списка: ОПЛАТА, ДОСТАВКА, ВОЗВРАТ, ДРУГОЕ. Формат: номер — метка, без комментариев.\n"
            + "\n".join(
                f"{i + 1}) {t}"
                for i, t in enumerate(
                    R.sample(
                        [
                            "не проходит оплата картой мир",
                            "где мой заказ?? уже неделю жду",
                            "хочу вернуть кроссовки, не подошёл размер",
                            "списали деньги дважды",
                            "курьер не позвонил и уехал",
                            "у вас есть самовывоз в Казани?",
                            "пришёл не тот цвет, как оформить возврат",
                        ],
                        n(3, 6),
                    )
                )
            )
        ),
    ],
    pt=[
        lambda: (
            "Transforma essas mensagens em CSV com as colunas nome;produto;quantidade;cidade. Só o CSV, sem comentário.\n"
            + "\n".join(
                R.sample(
                    [
                        "[09:14] Juliana: oi! quero 3 potes do mel de laranjeira, entrega em Campinas",
                        "[09:20] Marcos (Niterói): 2 cafés especiais 250g pfv",
                        "[10:02] Dona Célia: me separa 1 queijo canastra, sou de BH",
                        "[10:45] Pedro - Santos: 6 garrafas de cachaça envelhecida",
                        "[11:30] Ana Paula: 4 granolas sem açúcar, Curitiba",
                    ],
                    n(3, 5),
                )
            )
        ),
        _pt_bullets,
        lambda: (
            f"Traduz pro {p(['inglês', 'espanhol'])}, só a tradução: "
            f'"{p(["O pedido já foi enviado e chega na quinta.", "Consegue confirmar o horário da reunião?", "Corrigimos o problema, desculpa pelo transtorno.", "Segue em anexo a nota fiscal referente a março."])}"'
        ),
    ],
)
MULTI["math"] += _interleave(
    "pt ru ja zh",
    pt=[
        lambda: f"Calcula o limite quando x → 0 de (1 - cos({n(2, 5)}x)) / x^2 sem usar L'Hôpital.",
        lambda: (
            f"Um empréstimo de R$ {n(10, 200)}.000 a {p(['1,2', '1,5', '2,1', '0,9'])}% ao mês, em {p(['12', '24', '36', '48'])} "
            "parcelas fixas (tabela Price). Qual o valor da parcela e quanto pago de juros no total? Mostra a fórmula."
        ),
        lambda: (
            f"Quantos números de {n(5, 8)} dígitos têm soma dos dígitos igual a {n(15, 30)}? "
            "Resolve com funções geradoras ou inclusão-exclusão."
        ),
    ],
    ru=[
        lambda: (
            f"Найди все натуральные решения уравнения {n(2, 9)}x + {n(10, 40)}y = {n(50, 400)}. Объясни, как получил."
        ),
        lambda: (
            f"В мешке {n(3, 9)} красных и {n(3, 9)} синих шаров. Тянем без возвращения, пока не появятся оба цвета. "
            "Найди математическое ожидание числа вытянутых шаров."
        ),
        lambda: (
            f"Найди площадь фигуры, ограниченной кривой r = {n(2, 4)} + {n(1, 2)}cos θ. Распиши интеграл."
        ),
    ],
    ja=[
        lambda: (
            f"サイコロを{n(4, 10)}回振ったとき、{p(['6の目がちょうど2回出る', '出た目の和が偶数になる', '同じ目が一度も続けて出ない', '1の目が少なくとも1回出る'])}"
            "確率を既約分数で求めてください。"
        ),
        lambda: (
            (
                lambda m: (
                    f"(0,0) から ({m},{m}) まで右か上に1マスずつ進む経路のうち、直線 y = x より上に出ないものは何通りですか。"
                )
            )(n(4, 9))
            + "一般の n についても式を示してください。"
        ),
        lambda: (
            f"ABテストの結果です。A: {n(1000, 3000)}人中{n(50, 120)}人がCV、B: {n(1000, 3000)}人中{n(60, 150)}人がCV。"
            "母比率の差の検定で p 値を計算して、有意水準5%で有意かどうか判定してください。"
        ),
    ],
    zh=[
        lambda: (
            f"已知函数 f(x) = {_poly()}，求 f(x) 在区间 [{n(-3, 0)}, {n(1, 4)}] 上的最小值，要有完整过程。"
        ),
        lambda: f"X ~ Poisson({n(2, 9)})，Y ~ Poisson({n(2, 9)})，两者独立，求 P(X = Y)，保留 6 位小数。",
        lambda: f"曲线 y = x^{n(2, 4)}（0 ≤ x ≤ {n(1, 4)}）绕 x 轴旋转一周，求旋转体的体积，结果用 π 表示。",
    ],
)
MULTI["reasoning"] += _interleave(
    "ja pt ru zh",
    ja=[
        lambda: (
            f"転職先で迷っています。A社：年収{p(['750万', '820万'])}、フルリモート、創業3年のスタートアップ、ストックオプションあり。"
            f"B社：年収{p(['680万', '700万'])}、週3出社、大手SIer、残業少なめ、育休の実績あり。"
            f"{p(['来年子どもが生まれる予定です。', '30代前半、独身です。', '今は地方に住んでいます。'])}"
            "メリット・デメリットを整理したうえで、どちらにすべきか結論まで出してください。"
        ),
        lambda: (
            f"なぜ{p(['日本のSaaSではPLG（プロダクト主導の成長）がうまくいきにくいと言われるのか', '社内でDXプロジェクトが何度立ち上がっても定着しないのか', '大企業ほど新規事業が育ちにくいのか'])}、"
            "構造的な要因を掘り下げて分析してください。表面的な理由ではなく、インセンティブや組織の仕組みまで踏み込んでほしいです。"
        ),
        _ja_ranking,
    ],
    pt=[
        lambda: (
            "Quatro colegas — Ana, Bruno, Carla e Diego — pediram cada um uma bebida diferente (café, chá, suco e água) e "
            "sentaram nos lugares 1 a 4 de um balcão. Quem pediu café sentou ao lado da Ana. O Bruno não toma nada com cafeína. "
            "A Carla sentou numa ponta e não pediu água. O Diego está no lugar 2. A Ana não gosta de chá. Quem pediu suco está logo à direita de quem pediu chá. "
            "Dá pra descobrir quem pediu o quê e onde cada um sentou? Mostra o raciocínio."
        ),
        lambda: (
            f"Por que nosso app tem {p(['muito download e pouca retenção', 'muito cadastro e pouca conversão pro plano pago'])}? "
            f"Números: {n(40, 90)} mil downloads no mês, {n(20, 45)}% abrem no dia 1, {n(3, 12)}% no dia 30. "
            f"O onboarding tem {n(5, 9)} telas e pede cartão logo no início. Quero uma análise de causa de verdade, "
            "com hipóteses priorizadas e como testar cada uma, não uma lista genérica de dicas."
        ),
        lambda: (
            f"Recebi duas propostas: CLT de R$ {n(9, 16)} mil com VR, plano de saúde e PLR, ou PJ de R$ {n(15, 24)} mil sem benefício nenhum. "
            "Analisa os prós e contras (férias, 13º, FGTS, estabilidade, impostos, aposentadoria) e fecha uma recomendação "
            f"clara pro meu caso: {p(['tenho filho pequeno', 'sou solteiro e quero juntar dinheiro', 'pretendo sair do país em 2 anos'])}."
        ),
    ],
    ru=[
        _ru_rota,
        lambda: (
            f"Почему после перехода на микросервисы релизы стали медленнее, а не быстрее? Было: монолит, релиз раз в неделю. "
            f"Стало: {n(9, 20)} сервисов, общий стейджинг, релиз раз в две-три недели, на интеграции постоянно что-то ломается. "
            "Разбери причины по уровням (техника, процессы, оргструктура) и скажи, что из этого первопричина, а что следствие."
        ),
        lambda: (
            f"Разбор полётов. Запустили {p(['подписку для малого бизнеса', 'мобильное приложение для клиентов', 'новый тариф «Про»'])}, "
            f"результат — {n(15, 45)}% от плана. Что было:\n— исследование провели на 8 знакомых\n"
            "— цену поставили ниже конкурентов, «чтобы зайти»\n— маркетинг стартовал за неделю до релиза\n"
            "— поддержка узнала о запуске из соцсетей\n"
            "Найди корневые причины, отдели их от симптомов и скажи, какое решение было ключевой ошибкой."
        ),
    ],
    zh=[
        lambda: (
            "帮我做一下这次故障的根因分析，别只罗列现象，要分清直接原因、根本原因和促成因素，最后说清楚哪个决策点最关键：\n"
            + p(
                [
                    "14:02 运营发起大促推送，流量 3 分钟内涨到平时的 8 倍\n14:05 Redis 大量 key 同时过期（上周把 TTL 统一改成了 1 小时）\n"
                    "14:06 数据库连接池打满，下单接口超时\n14:09 自动扩容触发，但新实例要拉 2GB 镜像，10 分钟后才就绪\n14:20 值班同学手动限流，14:35 恢复",
                    "周一：供应商提醒芯片交付可能延迟两周\n周二：采购没有同步给产品，只在周报里提了一句\n"
                    "周四：市场部按原计划官宣发售日期\n下周三：确认延迟，预售订单没法按时发货，客诉激增",
                ]
            )
        ),
        _zh_seating,
        lambda: (
            f"老板在周会上说：“{p(['竞品都上了 AI 功能，我们不上就会被淘汰，所以下季度所有人先停下手头的事做 AI', '去年加大投放之后营收涨了 30%，说明投放就是增长的关键，今年预算再翻一倍', '用户调研里 80% 的人说想要深色模式，所以深色模式是下个版本最重要的功能'])}”。"
            "这个论证有哪些逻辑漏洞？隐含了哪些假设？请逐条分析，最后给出你的判断。"
        ),
    ],
)
MULTI["writing"] += _interleave(
    "zh ja pt ru",
    zh=[
        lambda: (
            f"帮我们公众号写一篇推文。\n主题：{p(['年轻人为什么开始存钱了', '小团队怎么做出好产品', '城市骑行的十年变化', '一个程序员的慢旅行'])}\n"
            f"目标读者：{p(['25-35 岁的一线城市白领', '刚毕业的大学生', '中小企业老板'])}\n"
            f"语气：{p(['真诚、有点幽默，别说教', '温暖克制，像朋友聊天', '干货多，但不枯燥'])}\n"
            f"篇幅：{p(['2000', '3000'])} 字左右\n结构：开头用一个真实场景切入，中间三段展开，结尾引导关注和留言。标题给 3 个备选。"
        ),
        _zh_product_copy,
        _zh_founder_letter,
    ],
    ja=[
        lambda: (
            f"ECサイト用の商品説明文を書いてください。商品：{p(['国産ヒノキのまな板', '折りたたみ式の電動自転車', '在宅ワーク用の昇降デスク', 'オーガニックコットンのベビー服'])}。"
            f"ターゲットは{p(['30〜40代の共働き世帯', '初めて一人暮らしをする大学生', '品質にこだわるシニア層'])}。"
            "400〜600字で、使う場面が目に浮かぶように。"
        ),
        lambda: (
            f"{p(COMPANIES)}のブランドマニフェストを書いてください。{p(['「速さより、確かさを。」', '「毎日を、少しだけ軽く。」', '「つくる人の味方でいる。」'])}"
            "という一文を軸に、私たちが何を大切にし、何をしないのかを宣言する文章にしてください。社内外に向けたもので、800字くらい。"
        ),
        _ja_eulogy,
    ],
    pt=[
        lambda: (
            "Escreve um post pro LinkedIn a partir dessas anotações. Quero algo autêntico, em primeira pessoa, "
            f"sem tom de coach, com um gancho forte na primeira linha:\n{p(PT_NOTES)}"
        ),
        lambda: (
            "Transforma essa ata numa crônica curta e bem-humorada pra newsletter interna, tipo uma historinha com personagens, "
            f"sem inventar fatos:\n{p(PT_MINUTES)}"
        ),
        _pt_toast,
    ],
    ru=[
        lambda: (
            f"Напиши пост для нашего Telegram-канала: {p(['запустили тёмную тему и офлайн-режим', 'мы переезжаем в новый офис в Казани', 'подводим итоги года — 200 тысяч пользователей'])}. "
            f"Живо, эмодзи в меру, 1000–1500 знаков, в конце призыв {p(['оставить фидбек в комментариях', 'поделиться с друзьями', 'прийти на нашу встречу'])}."
        ),
        _ru_case_study,
        _ru_toast,
    ],
)

FOLLOWUPS: dict[str, list[str]] = {
    "coding": [
        "fix it",
        "still failing, same error",
        "again, with the linter output:\n{lint}",
        "now add tests for that",
        "ok that broke something else:\n{trace}",
        "can you make it async too",
        "doesnt compile",
        "apply the same fix to the other handler",
        "and the diff?",
        "ci is red again\n{test}",
    ],
    "tools": [
        "yes go ahead",
        "do it",
        "ok book it",
        "send it",
        "try again with tomorrow instead",
        "also check the other one",
        "cancel that and do next week",
        "yes, use the first result",
    ],
    "instruction": [
        "now as JSON",
        "shorter",
        "only the labels please",
        "make it a table",
        "same for this one: {para}",
        "in bullet points",
        "remove the explanations, just the output",
        "again but in lowercase",
    ],
    "math": [
        "that's wrong, redo the integral carefully",
        "now prove it for general n",
        "exact value, not a decimal",
        "what if the exponent is {k} instead",
        "show the induction step",
        "give the answer mod {k}",
    ],
    "reasoning": [
        "are you sure? re-check the third clue",
        "what if the second statement is false instead",
        "walk me through the case where A lies",
        "ok but consider the opposite incentive",
        "that assumption seems wrong, redo the analysis",
    ],
    "writing": [
        "make it longer, ~1500 words, more playful",
        "punchier intro please, keep the rest",
        "rewrite it in our brand voice: {voice}",
        "add a section on sustainability and a stronger ending",
        "now the German version of the whole post",
        "more emotional, it's for her 60th",
    ],
}


# Terse follow-ups in the language of the templated user turn, written for each language (not
# translated from FOLLOWUPS). Same ownership rule: follow-up i belongs to source i % len(SOURCES),
# so 6 per intent give every source one per language. {para} is a pasted paragraph in that
# language where there is a pool of them (see fill_followup).
NATIVE_FOLLOWUPS: dict[str, dict[str, list[str]]] = {
    "zh": {
        "coding": [
            "还是报错",
            "还是不行，这次报这个：\n{trace}",
            "顺便把测试也写了",
            "lint 又挂了：\n{lint}",
            "改成异步的吧",
            "把 diff 发我看看",
        ],
        "tools": [
            "好的，就这么办",
            "确认，发吧",
            "换成明天再查一次",
            "第一个就行",
            "算了，取消，改到下周",
            "另一个也帮我查一下",
        ],
        "instruction": [
            "改成 JSON 输出",
            "再短一点",
            "只要标签，别的都不要",
            "整理成表格",
            "这条也一样处理：{para}",
            "去掉解释，只给结果",
        ],
        "math": [
            "不对吧，积分再仔细算一遍",
            "推广到一般的 n 并证明",
            "要精确值，不要小数",
            "如果指数换成 {k} 呢？",
            "归纳那一步写详细点",
            "结果对 {k} 取模是多少",
        ],
        "reasoning": [
            "那如果A说的是假话呢？",
            "你确定吗？第三个条件再核对一下",
            "这个假设站不住，重新分析",
            "反过来想呢？如果激励正好相反",
            "把每种情况都列出来",
            "所以最后到底选哪个？给个明确结论",
        ],
        "writing": [
            "再煽情一点",
            "开头再抓人一点，其他不变",
            "写长一点，1500 字左右，轻松一些",
            "加一段讲可持续发展的，结尾再有力一点",
            "换成正式一点的语气",
            "太像广告了，自然一点",
        ],
    },
    "ja": {
        "coding": [
            "まだエラーが出ます",
            "テストも書いて",
            "今度はこれが落ちました：\n{test}",
            "linterに怒られてます：\n{lint}",
            "同じ修正を他のハンドラにもお願い",
            "コンパイル通らないです",
        ],
        "tools": [
            "はい、お願いします",
            "それで予約して",
            "送っておいてください",
            "明日の分でもう一回調べて",
            "やっぱりキャンセルで、来週にして",
            "一番上のでいいです",
        ],
        "instruction": [
            "JSONで出して",
            "もっと短く",
            "ラベルだけでいいです",
            "表にして",
            "これも同じようにお願い：{para}",
            "説明はいらないので結果だけ",
        ],
        "math": [
            "それ違いませんか？積分をもう一度丁寧に",
            "一般の n で証明して",
            "小数じゃなくて厳密な値で",
            "指数が {k} だったら？",
            "帰納法のステップを詳しく",
            "答えを {k} で割った余りは？",
        ],
        "reasoning": [
            "本当に？3つ目の条件をもう一度確認して",
            "Aが嘘をついている場合は？",
            "その前提はおかしい気がします。分析し直して",
            "逆の立場から考えるとどうなりますか",
            "場合分けを全部書き出して",
            "で、結論はどっち？",
        ],
        "writing": [
            "もう少しエモくして",
            "書き出しをもっと引きのある感じに",
            "もっと長く、2000字くらいで",
            "堅すぎるので、もう少しくだけた感じに",
            "最後の段落をもっと力強く",
            "広告っぽさを消して",
        ],
    },
    "ru": {
        "coding": [
            "всё ещё падает",
            "та же ошибка:\n{trace}",
            "теперь допиши тесты",
            "линтер опять ругается:\n{lint}",
            "не компилируется",
            "а дифф покажешь?",
        ],
        "tools": [
            "да, давай",
            "отправляй",
            "бронируй",
            "попробуй на завтра",
            "отмени и перенеси на следующую неделю",
            "бери первый вариант",
        ],
        "instruction": [
            "теперь в JSON",
            "короче",
            "только метки, без пояснений",
            "сделай таблицей",
            "и с этим так же: {para}",
            "убери объяснения, только результат",
        ],
        "math": [
            "неверно, пересчитай интеграл аккуратно",
            "а теперь докажи для произвольного n",
            "нужно точное значение, не десятичная дробь",
            "а если показатель {k}?",
            "распиши шаг индукции подробнее",
            "дай ответ по модулю {k}",
        ],
        "reasoning": [
            "а если предположить обратное?",
            "уверен? перепроверь третье условие",
            "а если второе утверждение ложно?",
            "это допущение неверное, переделай анализ",
            "разбери случай, когда A лжёт",
            "так что в итоге выбрать? дай однозначный ответ",
        ],
        "writing": [
            "сделай короче и живее",
            "добавь эмоций",
            "перепиши вступление, чтобы цепляло",
            "слишком официально, попроще",
            "добавь абзац про экологию и сильную концовку",
            "длиннее, слов на полторы тысячи",
        ],
    },
    "pt": {
        "coding": [
            "continua dando erro",
            "mesmo erro:\n{trace}",
            "agora escreve os testes",
            "o lint reclamou:\n{lint}",
            "nao compila",
            "o CI quebrou de novo\n{test}",
        ],
        "tools": [
            "pode mandar",
            "sim, faz isso",
            "reserva",
            "tenta pra amanhã",
            "cancela e joga pra semana que vem",
            "pega o primeiro",
        ],
        "instruction": [
            "agora em JSON",
            "mais curto",
            "só os rótulos",
            "põe numa tabela",
            "faz o mesmo com esse: {para}",
            "tira as explicações, só o resultado",
        ],
        "math": [
            "acho que tá errado, refaz a integral com calma",
            "agora prova pra n qualquer",
            "quero o valor exato, não decimal",
            "e se o expoente for {k}?",
            "detalha o passo da indução",
            "e o resultado mod {k}?",
        ],
        "reasoning": [
            "e se a Ana estiver mentindo?",
            "tem certeza? confere a terceira pista",
            "e se for o contrário?",
            "essa premissa tá furada, refaz a análise",
            "lista todos os casos",
            "tá, mas qual você escolheria? fecha uma resposta",
        ],
        "writing": [
            "mais curto e com mais emoção",
            "deixa a abertura mais impactante",
            "tá muito formal, deixa mais leve",
            "aumenta pra umas 1500 palavras",
            "tira o tom de propaganda",
            "coloca um final mais forte",
        ],
    },
    "de": {
        "coding": [
            "immer noch derselbe Fehler",
            "jetzt noch Tests dazu",
            "der Linter meckert:\n{lint}",
            "kompiliert nicht",
            "jetzt kommt das:\n{trace}",
            "mach das auch asynchron",
        ],
        "tools": [
            "ja, mach",
            "abschicken",
            "buch das",
            "versuch's mit morgen",
            "storniere das und nimm nächste Woche",
            "nimm das erste Ergebnis",
        ],
        "instruction": [
            "jetzt als JSON",
            "kürzer",
            "nur die Labels bitte",
            "als Tabelle",
            "dasselbe hierfür: {para}",
            "ohne Erklärung, nur das Ergebnis",
        ],
        "math": [
            "das stimmt nicht, rechne das Integral nochmal sorgfältig",
            "jetzt für allgemeines n beweisen",
            "exakter Wert, keine Dezimalzahl",
            "und wenn der Exponent {k} ist?",
            "zeig den Induktionsschritt",
            "Ergebnis modulo {k}?",
        ],
        "reasoning": [
            "bist du sicher? prüf die dritte Bedingung nochmal",
            "und wenn A lügt?",
            "die Annahme passt nicht, analysier das neu",
            "was, wenn die Anreize umgekehrt sind?",
            "geh alle Fälle durch",
            "und was empfiehlst du jetzt konkret?",
        ],
        "writing": [
            "kürzer und lebendiger",
            "emotionaler bitte",
            "der Einstieg muss packender sein",
            "zu förmlich, lockerer",
            "länger, so 1500 Wörter",
            "mach den Schluss stärker",
        ],
    },
    "fr": {
        "coding": [
            "toujours la même erreur",
            "ajoute les tests maintenant",
            "le linter râle :\n{lint}",
            "ça compile pas",
            "maintenant j'ai ça :\n{trace}",
            "applique la même correction à l'autre handler",
        ],
        "tools": [
            "oui vas-y",
            "envoie",
            "réserve",
            "essaie pour demain",
            "annule et décale à la semaine prochaine",
            "prends le premier",
        ],
        "instruction": [
            "maintenant en JSON",
            "plus court",
            "juste les étiquettes",
            "sous forme de tableau",
            "pareil pour celui-ci : {para}",
            "sans explication, juste le résultat",
        ],
        "math": [
            "c'est faux, refais l'intégrale proprement",
            "démontre-le pour n quelconque",
            "valeur exacte, pas de décimales",
            "et si l'exposant vaut {k} ?",
            "détaille l'étape de récurrence",
            "le résultat modulo {k} ?",
        ],
        "reasoning": [
            "tu es sûr ? revérifie le troisième indice",
            "et si A ment ?",
            "cette hypothèse ne tient pas, refais l'analyse",
            "et si on prend le point de vue inverse ?",
            "liste tous les cas",
            "bon, et tu recommandes quoi au final ?",
        ],
        "writing": [
            "plus court et plus vivant",
            "plus d'émotion stp",
            "l'accroche doit être plus forte",
            "trop formel, plus détendu",
            "plus long, environ 1500 mots",
            "une fin plus percutante",
        ],
    },
    "es": {
        "coding": [
            "sigue fallando",
            "ahora añade tests",
            "el linter se queja:\n{lint}",
            "no compila",
            "ahora sale esto:\n{trace}",
            "hazlo asíncrono también",
        ],
        "tools": [
            "sí, dale",
            "envíalo",
            "resérvalo",
            "prueba con mañana",
            "cancela y pásalo a la semana que viene",
            "el primero",
        ],
        "instruction": [
            "ahora en JSON",
            "más corto",
            "solo las etiquetas",
            "en una tabla",
            "lo mismo con este: {para}",
            "sin explicaciones, solo el resultado",
        ],
        "math": [
            "está mal, rehaz la integral con cuidado",
            "ahora demuéstralo para n general",
            "valor exacto, no decimal",
            "¿y si el exponente es {k}?",
            "detalla el paso inductivo",
            "¿el resultado módulo {k}?",
        ],
        "reasoning": [
            "¿seguro? revisa la tercera pista",
            "¿y si A miente?",
            "esa suposición no se sostiene, rehaz el análisis",
            "¿y si lo miras al revés?",
            "enumera todos los casos",
            "vale, ¿y qué recomiendas al final?",
        ],
        "writing": [
            "más corto y con más vida",
            "más emotivo",
            "el arranque tiene que enganchar más",
            "demasiado formal, más cercano",
            "más largo, unas 1500 palabras",
            "un cierre más fuerte",
        ],
    },
}
# A native conversation still switches to English now and then ("fix it" after a Chinese request).
NATIVE_FOLLOWUP_RATE = 0.85
NATIVE_REPLY_RATE = 0.9
LANG_PARAGRAPHS = {"zh": ZH_PARAGRAPHS, "ja": JA_PARAGRAPHS, "ru": RU_PARAGRAPHS, "pt": PT_PARAGRAPHS}


def fill_followup(text: str, lang: str = "en") -> str:
    return text.format(
        lint=lint_output(),
        trace=traceback(),
        test=test_output(),
        para=p(LANG_PARAGRAPHS.get(lang, PARAGRAPHS)),
        k=n(3, 9),
        voice=p(VOICES),
    )


# ============================================================================ sources (wrappers)

SYSTEM_PROMPTS = {
    "ide_agent": [
        "You are an expert software engineer working in the user's repository. Use the tools to read and edit files. Prefer minimal diffs. Run the tests after editing. Never invent file contents.",
        "You are a coding agent embedded in the editor. You can call read_file, edit_file and run_command. Explain briefly, then act. Follow the repo's style guide (ruff, black, 110 columns).",
    ],
    "chat_ui": [
        "You are a helpful assistant.",
        "You are ChatBot, a friendly and knowledgeable assistant. Answer clearly.",
        "",
    ],
    "biz_assistant": [
        "You are the support assistant for {company}. Be polite, concise and never promise refunds without checking the order. Escalate legal questions.",
        "You are {company}'s marketing assistant. You know our brand guidelines: voice is {voice}. Always use British spelling.",
        "You are an internal ops assistant at {company}. You have access to the calendar, email and the analytics warehouse.",
    ],
    "api_oneshot": [""],
    "ci_pipeline": [
        "You are an automated assistant in a CI/CD pipeline. Output must be machine-readable when a format is requested. No greetings.",
        "SYSTEM: batch job worker. Follow the instruction exactly. If the task is ambiguous, do your best and do not ask questions.",
    ],
    "agent_framework": [
        "You are an autonomous agent. Think step by step. You have access to the following tools; call them when they help. Answer in the format:\nThought: ...\nAction: ...\nObservation: ...\nFinal Answer: ...",
        "## Role\nYou are Atlas, a general-purpose agent for the Kite Analytics team.\n## Rules\n- Be accurate.\n- Cite sources when browsing.\n- Ask before sending external messages.",
    ],
}
SOURCES = tuple(SYSTEM_PROMPTS)

ASSISTANT_BY_INTENT = {
    "coding": [
        "Sure, here's the fix:\n```python\ndef apply_discount(order, code):\n    rate = DISCOUNTS.get(code, 0)\n    return order.total * (1 - rate)\n```",
        "I updated `src/billing/invoice.py` and the tests pass locally.",
        "The bug is the missing None check in the handler; patch below.",
    ],
    "tools": [
        "I found 3 matching results. Should I proceed?",
        "The order is in transit. Want me to email the customer?",
        "I can create that event. Confirm the time?",
    ],
    "instruction": [
        '{"name": "Jordan Blake", "company": "Fennel Foods"}',
        "positive\nnegative\nneutral",
        "- Budget approved\n- Office opens Q3\n- Hiring in May",
    ],
    "math": [
        "Using integration by parts twice we get 2 - 5/e.",
        "By inclusion-exclusion the count is 4320.",
        "The closed form is a_n = 2^n + 3n.",
    ],
    "reasoning": [
        "Case 1: suppose A is a knight. Then B must be a knave...",
        "Weighing the trade-offs: the monolith wins on team size, but...",
        "The flaw is the inference from correlation to causation.",
    ],
    "writing": [
        "Here is a first draft of the post:\n\n# Why small teams ship faster\n\nEvery great product starts...",
        "Draft press release:\n\nFOR IMMEDIATE RELEASE...",
        "Once upon a time, in a lighthouse at the edge of the world...",
    ],
}
ASSISTANT_FILLERS = [
    "Sure, here's what I changed:\n```python\ndef f(x):\n    return x\n```",
    "I looked at the file; the issue seems to be the None check.",
    "Here is a first draft. Let me know what to adjust.",
    "The answer is 42/17 ≈ 2.4706.",
    "Done. Anything else?",
    "Let's consider the cases one at a time. Case 1: A is a knight...",
    'Here\'s the JSON:\n{"name": "Jordan Blake"}',
    "I found 3 results for your search.",
    "Voilà le brouillon.",
    "Aquí tienes la primera versión.",
]

# Canned assistant replies in the conversation's language, same shape as ASSISTANT_BY_INTENT.
_FIX = "\n```python\ndef apply_discount(order, code):\n    rate = DISCOUNTS.get(code, 0)\n    return order.total * (1 - rate)\n```"
_STUB = "\n```python\ndef f(x):\n    return x\n```"
NATIVE_REPLIES: dict[str, dict[str, list[str]]] = {
    "zh": {
        "coding": [
            "好的，修复如下：" + _FIX,
            "我改了 `src/billing/invoice.py`，本地测试已经通过。",
            "问题出在 handler 里少了 None 判断，补丁如下。",
        ],
        "tools": [
            "找到 3 条匹配结果，要继续吗？",
            "订单正在配送中，需要我给客户发邮件吗？",
            "可以创建这个日程，时间再确认一下？",
        ],
        "instruction": [
            '{"name": "王磊", "company": "Kite Analytics"}',
            "正面\n负面\n中性",
            "- 预算已批准\n- 第三季度开业\n- 五月开始招聘",
        ],
        "math": ["分部积分两次，得到 2 - 5/e。", "由容斥原理，总数是 4320。", "通项公式为 a_n = 2^n + 3n。"],
        "reasoning": [
            "情况一：假设 A 是骑士，那么 B 一定是骗子……",
            "权衡下来：从团队规模看单体更合适，但是……",
            "漏洞在于把相关性当成了因果。",
        ],
        "writing": [
            "这是初稿：\n\n# 为什么小团队交付更快\n\n每一个好产品的起点……",
            "新闻稿草稿：\n\n【即时发布】……",
            "很久很久以前，在世界尽头的一座灯塔里……",
        ],
    },
    "ja": {
        "coding": [
            "修正版はこちらです：" + _FIX,
            "`src/billing/invoice.py` を修正し、ローカルでテストが通りました。",
            "ハンドラで None チェックが抜けていたのが原因です。パッチは以下の通りです。",
        ],
        "tools": [
            "該当する結果が3件見つかりました。進めてよろしいですか？",
            "ご注文は配送中です。お客様にメールしましょうか？",
            "予定を作成できます。この時間でよろしいですか？",
        ],
        "instruction": [
            '{"name": "佐藤 健", "company": "Lumen Bank"}',
            "ポジティブ\nネガティブ\nニュートラル",
            "- 予算承認済み\n- 第3四半期に開設\n- 5月から採用開始",
        ],
        "math": [
            "部分積分を2回行うと 2 - 5/e になります。",
            "包除原理より、求める数は 4320 通りです。",
            "一般項は a_n = 2^n + 3n です。",
        ],
        "reasoning": [
            "場合1：Aが騎士だと仮定すると、Bは悪党でなければならず……",
            "トレードオフを整理すると、チーム規模の点ではモノリスが有利ですが……",
            "この議論の欠陥は、相関から因果を導いている点です。",
        ],
        "writing": [
            "初稿です：\n\n# 小さなチームが速く出荷できる理由\n\nすべての優れたプロダクトは……",
            "プレスリリース案：\n\n報道関係者各位……",
            "むかしむかし、世界の果ての灯台に……",
        ],
    },
    "ru": {
        "coding": [
            "Вот исправление:" + _FIX,
            "Поправил `src/billing/invoice.py`, локально тесты проходят.",
            "Ошибка в том, что в обработчике нет проверки на None; патч ниже.",
        ],
        "tools": [
            "Нашёл 3 подходящих результата. Продолжить?",
            "Заказ в пути. Написать клиенту?",
            "Могу создать встречу. Подтвердите время?",
        ],
        "instruction": [
            '{"name": "Ольга Смирнова", "company": "Nimbus"}',
            "позитивный\nнегативный\nнейтральный",
            "- Бюджет утверждён\n- Открытие в III квартале\n- Найм с мая",
        ],
        "math": [
            "Дважды интегрируя по частям, получаем 2 - 5/e.",
            "По формуле включений-исключений получается 4320.",
            "Общий член: a_n = 2^n + 3n.",
        ],
        "reasoning": [
            "Случай 1: пусть A рыцарь. Тогда B обязан быть лжецом...",
            "Если взвесить компромиссы: по размеру команды выигрывает монолит, но...",
            "Ошибка в переходе от корреляции к причинности.",
        ],
        "writing": [
            "Вот первый вариант:\n\n# Почему маленькие команды релизят быстрее\n\nЛюбой хороший продукт начинается...",
            "Черновик пресс-релиза:\n\nДЛЯ НЕМЕДЛЕННОЙ ПУБЛИКАЦИИ...",
            "Давным-давно, на маяке на краю света...",
        ],
    },
    "pt": {
        "coding": [
            "Aqui está a correção:" + _FIX,
            "Atualizei `src/billing/invoice.py` e os testes passam localmente.",
            "O bug é a falta de checagem de None no handler; segue o patch.",
        ],
        "tools": [
            "Encontrei 3 resultados. Posso seguir?",
            "O pedido está em trânsito. Quer que eu mande um e-mail pro cliente?",
            "Posso criar o evento. Confirma o horário?",
        ],
        "instruction": [
            '{"name": "Mariana Costa", "company": "Verde Outdoor"}',
            "positiva\nnegativa\nneutra",
            "- Orçamento aprovado\n- Escritório abre no 3º tri\n- Contratações a partir de maio",
        ],
        "math": [
            "Integrando por partes duas vezes, obtemos 2 - 5/e.",
            "Por inclusão-exclusão, o total é 4320.",
            "A forma fechada é a_n = 2^n + 3n.",
        ],
        "reasoning": [
            "Caso 1: suponha que A é cavaleiro. Então B tem que ser mentiroso...",
            "Pesando os trade-offs: pelo tamanho do time o monólito ganha, mas...",
            "A falha está em tirar causalidade de uma correlação.",
        ],
        "writing": [
            "Aqui vai um primeiro rascunho:\n\n# Por que times pequenos entregam mais rápido\n\nTodo grande produto começa...",
            "Rascunho do press release:\n\nPARA DIVULGAÇÃO IMEDIATA...",
            "Era uma vez, num farol no fim do mundo...",
        ],
    },
    "de": {
        "coding": [
            "Hier ist der Fix:" + _FIX,
            "Ich habe `src/billing/invoice.py` angepasst, die Tests laufen lokal durch.",
            "Der Fehler ist die fehlende None-Prüfung im Handler; Patch unten.",
        ],
        "tools": [
            "Ich habe 3 passende Ergebnisse gefunden. Soll ich weitermachen?",
            "Die Bestellung ist unterwegs. Soll ich dem Kunden mailen?",
            "Ich kann den Termin anlegen. Passt die Uhrzeit?",
        ],
        "instruction": [
            '{"name": "Jonas Weber", "company": "Acme Robotics"}',
            "positiv\nnegativ\nneutral",
            "- Budget genehmigt\n- Eröffnung in Q3\n- Einstellungen ab Mai",
        ],
        "math": [
            "Zweimal partiell integriert ergibt sich 2 - 5/e.",
            "Mit Inklusion-Exklusion kommt man auf 4320.",
            "Die geschlossene Form ist a_n = 2^n + 3n.",
        ],
        "reasoning": [
            "Fall 1: Angenommen, A ist ein Ritter. Dann muss B ein Schurke sein...",
            "Abwägung: bei der Teamgröße spricht viel für den Monolithen, aber...",
            "Der Fehler ist der Schluss von Korrelation auf Kausalität.",
        ],
        "writing": [
            "Hier ein erster Entwurf:\n\n# Warum kleine Teams schneller liefern\n\nJedes großartige Produkt beginnt...",
            "Entwurf der Pressemitteilung:\n\nZUR SOFORTIGEN VERÖFFENTLICHUNG...",
            "Es war einmal ein Leuchtturm am Ende der Welt...",
        ],
    },
    "fr": {
        "coding": [
            "Voici le correctif :" + _FIX,
            "J'ai modifié `src/billing/invoice.py`, les tests passent en local.",
            "Le bug vient de l'absence de test sur None dans le handler ; patch ci-dessous.",
        ],
        "tools": [
            "J'ai trouvé 3 résultats. Je continue ?",
            "La commande est en cours de livraison. Je préviens le client par e-mail ?",
            "Je peux créer l'événement. Tu confirmes l'heure ?",
        ],
        "instruction": [
            '{"name": "Amélie Durand", "company": "Oakline Furniture"}',
            "positif\nnégatif\nneutre",
            "- Budget approuvé\n- Ouverture au T3\n- Recrutement dès mai",
        ],
        "math": [
            "Deux intégrations par parties donnent 2 - 5/e.",
            "Par inclusion-exclusion, on obtient 4320.",
            "La forme close est a_n = 2^n + 3n.",
        ],
        "reasoning": [
            "Cas 1 : supposons que A soit chevalier. Alors B doit être un fripon...",
            "En pesant le pour et le contre : côté taille d'équipe, le monolithe l'emporte, mais...",
            "La faille, c'est de passer de la corrélation à la causalité.",
        ],
        "writing": [
            "Voici un premier jet :\n\n# Pourquoi les petites équipes livrent plus vite\n\nTout grand produit commence...",
            "Projet de communiqué :\n\nPOUR DIFFUSION IMMÉDIATE...",
            "Il était une fois, dans un phare au bout du monde...",
        ],
    },
    "es": {
        "coding": [
            "Aquí tienes el arreglo:" + _FIX,
            "He actualizado `src/billing/invoice.py` y los tests pasan en local.",
            "El fallo es que falta comprobar None en el handler; parche abajo.",
        ],
        "tools": [
            "Encontré 3 resultados. ¿Sigo?",
            "El pedido está en camino. ¿Le escribo al cliente?",
            "Puedo crear el evento. ¿Confirmas la hora?",
        ],
        "instruction": [
            '{"name": "Carlos Ruiz", "company": "Lumen Bank"}',
            "positiva\nnegativa\nneutra",
            "- Presupuesto aprobado\n- Apertura en el T3\n- Contrataciones desde mayo",
        ],
        "math": [
            "Integrando por partes dos veces se obtiene 2 - 5/e.",
            "Por inclusión-exclusión, el total es 4320.",
            "La forma cerrada es a_n = 2^n + 3n.",
        ],
        "reasoning": [
            "Caso 1: supongamos que A es caballero. Entonces B tiene que ser bribón...",
            "Sopesando: por tamaño de equipo gana el monolito, pero...",
            "El fallo está en pasar de correlación a causalidad.",
        ],
        "writing": [
            "Aquí va un primer borrador:\n\n# Por qué los equipos pequeños entregan más rápido\n\nTodo gran producto empieza...",
            "Borrador de nota de prensa:\n\nPARA DIFUSIÓN INMEDIATA...",
            "Érase una vez, en un faro en el fin del mundo...",
        ],
    },
}
NATIVE_FILLERS: dict[str, list[str]] = {
    "zh": ["好的，改动如下：" + _STUB, "这是初稿，看看哪里需要调整。", "完成了，还有别的吗？"],
    "ja": [
        "修正内容はこちらです：" + _STUB,
        "初稿を用意しました。調整したい点があれば教えてください。",
        "完了しました。他に何かありますか？",
    ],
    "ru": ["Вот что я поменял:" + _STUB, "Вот черновик. Скажите, что поправить.", "Готово. Что-нибудь ещё?"],
    "pt": [
        "Beleza, olha o que eu mudei:" + _STUB,
        "Segue um primeiro rascunho. Me diz o que ajustar.",
        "Pronto. Mais alguma coisa?",
    ],
    "de": [
        "Hier ist meine Änderung:" + _STUB,
        "Hier ein erster Entwurf. Sag mir, was ich anpassen soll.",
        "Erledigt. Noch etwas?",
    ],
    "fr": [
        "Voici ce que j'ai changé :" + _STUB,
        "Voilà le brouillon. Dis-moi ce qu'il faut ajuster.",
        "C'est fait. Autre chose ?",
    ],
    "es": [
        "Esto es lo que cambié:" + _STUB,
        "Aquí tienes la primera versión. Dime qué ajusto.",
        "Hecho. ¿Algo más?",
    ],
}


def assistant_reply(intent: str | None, lang: str) -> str:
    """A canned assistant turn: for ``intent`` (else a generic filler), mostly in ``lang``."""
    native = lang in NATIVE_REPLIES and R.random() < NATIVE_REPLY_RATE
    if intent is not None and R.random() < 0.7:
        return p(NATIVE_REPLIES[lang][intent] if native else ASSISTANT_BY_INTENT[intent])
    return p(NATIVE_FILLERS[lang] if native else ASSISTANT_FILLERS)


def typo(text: str, rate: float) -> str:
    """Swap or drop letters in a few words: agents paste fast and typo a lot."""
    words = text.split(" ")
    for i, w in enumerate(words):
        if len(w) > 4 and w.isalpha() and R.random() < rate:
            j = R.randrange(len(w) - 1)
            words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2 :] if R.random() < 0.7 else w[:j] + w[j + 1 :]
    return " ".join(words)


def as_parts(text: str) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    if R.random() < 0.15:
        parts.append({"type": "image_url", "image_url": {"url": "https://example.com/screenshot.png"}})
    return parts


def tool_result_turns(toolset: str) -> list[dict[str, Any]]:
    """An assistant tool call and its result: the request is mid tool loop."""
    tool = TOOLSETS[toolset][0]["function"]["name"]
    result = p(
        [
            '{"status": "ok", "items": 3}',
            '{"temp_c": 11, "rain": true}',
            '{"order": "shipped", "eta": "2026-12-02"}',
            '{"rows": [[1204]]}',
            '{"error": "not found"}',
        ]
    )
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": tool, "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": result},
    ]


# The English templates of each intent (the other languages' are in MULTI).
TEMPLATES_BY_INTENT: dict[str, list[Tpl]] = {
    "coding": CODING,
    "tools": TOOLS,
    "instruction": INSTRUCTION,
    "math": MATH,
    "reasoning": REASONING,
    "writing": WRITING,
}


def sample_text(intent: str, source_idx: int) -> tuple[str, str | None, str]:
    """Last user text, toolset (tools only) and language, from a template owned by this source."""
    # Template i belongs to source i % len(SOURCES): this source's are every len(SOURCES)-th.
    pool = TEMPLATES_BY_INTENT[intent][source_idx :: len(SOURCES)]
    mpool = MULTI[intent][source_idx :: len(SOURCES)]
    # A quarter non-English: 7 languages share it (de, fr, es, zh, ja, ru, pt-BR).
    tpl = p(mpool) if mpool and R.random() < 0.25 else p(pool)
    out = tpl()
    lang = TEMPLATE_LANG.get(tpl, "en")
    if isinstance(out, tuple):
        return out[0], out[1], lang
    return out, None, lang


def followup_text(intent: str, source_idx: int, lang: str = "en") -> str | None:
    """A terse follow-up owned by this source, mostly in ``lang`` (the templated turn's language)."""
    native = lang in NATIVE_FOLLOWUPS and R.random() < NATIVE_FOLLOWUP_RATE
    followups = NATIVE_FOLLOWUPS[lang] if native else FOLLOWUPS
    owned = followups[intent][source_idx :: len(SOURCES)]
    return fill_followup(p(owned), lang if native else "en") if owned else None


def make_request(intent: str, source_idx: int) -> dict[str, Any]:
    source = SOURCES[source_idx]
    text, toolset, lang = sample_text(intent, source_idx)
    system = p(SYSTEM_PROMPTS[source]).format(company=p(COMPANIES), voice=p(VOICES))
    messages: list[dict[str, Any]] = []
    if system:
        messages.append({"role": "system", "content": system})
    tools: list[dict[str, Any]] | None = None
    if toolset:
        tools = TOOLSETS[toolset] + (R.sample(list(TOOLSETS.values()), 1)[0] if R.random() < 0.4 else [])
    elif source == "ide_agent" or (source == "agent_framework" and R.random() < 0.7):
        tools = (
            CODING_TOOLS
            if source == "ide_agent"
            else R.sample(list(TOOLSETS.values()), 1)[0] + TOOLSETS["search"]
        )
    elif source == "biz_assistant" and R.random() < 0.4:
        tools = TOOLSETS[p(["orders", "email", "calendar", "crm"])]
    elif R.random() < 0.25:
        # Many clients attach their whole tool list to every request: tools present while the
        # user asks for something else must not mean "tools".
        tools = [t for ts in R.sample(list(TOOLSETS.values()), n(1, 3)) for t in ts]
    # Earlier turns: unrelated history (coding agents get asked math mid-session).
    if source in ("ide_agent", "chat_ui", "agent_framework", "biz_assistant") and R.random() < 0.5:
        other = p(list(FOLLOWUPS))
        prev_text, _, prev_lang = sample_text(other, source_idx)
        messages += [
            {"role": "user", "content": prev_text[:600]},
            {"role": "assistant", "content": assistant_reply(None, prev_lang)},
        ]
    style = R.random()
    fu = followup_text(intent, source_idx, lang)
    if toolset and style < 0.3:
        # Mid tool loop: the user asked, the model called a tool, the result is the last message.
        messages.append({"role": "user", "content": text})
        messages += tool_result_turns(toolset)
    elif fu and style < 0.42:
        # Terse follow-up: the intent is carried by the earlier turn, the last turn is short.
        reply = assistant_reply(intent, lang)
        messages += [
            {"role": "user", "content": text},
            {"role": "assistant", "content": reply},
            {"role": "user", "content": fu},
        ]
    else:
        if source in ("chat_ui", "api_oneshot") and R.random() < 0.5:
            text = typo(text, 0.08)
        if R.random() < 0.15:
            text = p(PREFIXES) + text
        content: Any = as_parts(text) if source == "ci_pipeline" and R.random() < 0.6 else text
        messages.append({"role": "user", "content": content})
    body: dict[str, Any] = {
        "model": p(["gpt-5.1", "local", "auto", "laguna", "offload"]),
        "messages": messages,
    }
    if tools:
        body["tools"] = tools
    if source == "api_oneshot" and R.random() < 0.25 and not tools:
        body = {"model": "auto", "prompt": text, "max_tokens": p([256, 1024, 4096])}
    if R.random() < 0.3:
        body["temperature"] = p([0, 0.2, 0.7, 1.0])
    if R.random() < 0.2:
        body["stream"] = True
    return body


def generate(n_per_intent: int, seed: int) -> list[dict[str, Any]]:
    R.seed(seed)
    rows = []
    intents = ("coding", "tools", "instruction", "math", "reasoning", "writing")
    for intent in intents:
        for i in range(n_per_intent):
            src = i % len(SOURCES)
            rows.append(
                {
                    "id": f"gen-{intent}-{i}",
                    "source": SOURCES[src],
                    "intent": intent,
                    "request": make_request(intent, src),
                }
            )
    R.shuffle(rows)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-per-intent", type=int, default=700)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default=str(Path(__file__).parent / "train.jsonl"))
    args = ap.parse_args(argv)
    rows = generate(args.n_per_intent, args.seed)
    with open(args.out, "wb") as fh:
        for row in rows:
            fh.write(orjson.dumps(row) + b"\n")
    print(f"wrote {len(rows)} examples to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
