"""Generate the labelled training corpus ``train.jsonl`` by composing templates.

    python -m classifier.data.generate [--n-per-intent 700] [--seed 7] [--out PATH]

Every example is one OpenAI request body plus its intent and a ``source``. A source is a
*traffic family*: it fixes the wrapper (system prompt, conversation shape, tools, content
parts, typos) and owns a disjoint share of the phrasing templates of every intent (template
``i`` of an intent belongs to source ``i % len(SOURCES)``). Leave-one-source-out evaluation
therefore tests unseen phrasings inside an unseen conversation style, not just re-shuffled
slot fillers. A quarter of the drawn templates are non-English (``MULTI``: German, French, Spanish,
Simplified Chinese, Japanese, Russian, Brazilian Portuguese), under the same round-robin.
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
# like the rest. German, French and Spanish here; Chinese, Japanese, Russian and Portuguese are
# appended below.
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

# ---------------------------------------------------------------------------- more languages
# Simplified Chinese, Japanese, Russian and Brazilian Portuguese, 3 templates per language and
# intent. _interleave() alternates the languages in a per-intent order, so that under the
# i % len(SOURCES) round-robin every source owns two of these languages per intent and all four
# across intents (the language order differs between intents).

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


def fill_followup(text: str) -> str:
    return text.format(
        lint=lint_output(),
        trace=traceback(),
        test=test_output(),
        para=p(PARAGRAPHS),
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


def sample_text(intent: str, source_idx: int) -> tuple[str, str | None]:
    """Last user text (and toolset for tools) from a template owned by this source."""
    base = {
        "coding": CODING,
        "tools": TOOLS,
        "instruction": INSTRUCTION,
        "math": MATH,
        "reasoning": REASONING,
        "writing": WRITING,
    }[intent]
    multi = MULTI[intent]
    pool = [t for i, t in enumerate(base) if i % len(SOURCES) == source_idx]
    mpool = [t for i, t in enumerate(multi) if i % len(SOURCES) == source_idx]
    # A quarter non-English: 7 languages share it (de, fr, es, zh, ja, ru, pt-BR).
    tpl = p(mpool) if mpool and R.random() < 0.25 else p(pool)
    out = tpl()
    if isinstance(out, tuple):
        return out
    return out, None


def followup_text(intent: str, source_idx: int) -> str | None:
    owned = [t for i, t in enumerate(FOLLOWUPS[intent]) if i % len(SOURCES) == source_idx]
    return fill_followup(p(owned)) if owned else None


def make_request(intent: str, source_idx: int) -> dict[str, Any]:
    source = SOURCES[source_idx]
    text, toolset = sample_text(intent, source_idx)
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
        prev_text, _ = sample_text(other, source_idx)
        messages += [
            {"role": "user", "content": prev_text[:600]},
            {"role": "assistant", "content": p(ASSISTANT_FILLERS)},
        ]
    style = R.random()
    fu = followup_text(intent, source_idx)
    if toolset and style < 0.3:
        # Mid tool loop: the user asked, the model called a tool, the result is the last message.
        messages.append({"role": "user", "content": text})
        messages += tool_result_turns(toolset)
    elif fu and style < 0.42:
        # Terse follow-up: the intent is carried by the earlier turn, the last turn is short.
        reply = p(ASSISTANT_BY_INTENT[intent]) if R.random() < 0.7 else p(ASSISTANT_FILLERS)
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
