"""Slot pools shared by the templates: code, tracebacks, diffs, test and lint output, names,
companies, products, pasted paragraphs, and the tool sets the sources offer."""

from __future__ import annotations

from typing import Any

from classifier.data.rand import Rand

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


def code_block(r: Rand) -> str:
    code = r.p(ALL_CODE)
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
    return f"```{tag}\n{code}\n```" if r.random() < 0.75 else code


def traceback(r: Rand) -> str:
    kind = r.n(0, 4)
    if kind == 0:
        return (
            "Traceback (most recent call last):\n"
            f'  File "/app/{r.p(PATHS)}", line {r.n(10, 400)}, in {r.p(FUNCS)}\n'
            f"    {r.p(['total = order.total - order.total * DISCOUNTS[code]', 'return self.d[k]', 'payload = json.loads(req.body)', 'out = [xs[0]]'])}\n"
            f"{r.p(['KeyError', 'IndexError: list index out of range', 'TypeError: unsupported operand type(s) for -: str and float', 'json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)', 'AttributeError: NoneType object has no attribute id'])}"
        )
    if kind == 1:
        return (
            f'Exception in thread "main" java.lang.NullPointerException: Cannot invoke "String.length()"\n'
            f"\tat com.acme.payments.PaymentService.charge(PaymentService.java:{r.n(20, 300)})\n"
            f"\tat com.acme.payments.Controller.post(Controller.java:{r.n(20, 300)})\n\tat java.base/java.lang.Thread.run(Thread.java:833)"
        )
    if kind == 2:
        return f"thread 'main' panicked at 'called `Option::unwrap()` on a `None` value', src/parser/lexer.rs:{r.n(10, 200)}:{r.n(5, 40)}\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"
    if kind == 3:
        return (
            f"TypeError: Cannot read properties of undefined (reading '{r.p(['map', 'length', 'id', 'price'])}')\n"
            f"    at computeTotal (web/components/Cart.tsx:{r.n(5, 90)}:{r.n(3, 30)})\n    at renderWithHooks (react-dom.development.js:14985:18)"
        )
    return f"panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a2b3c]\n\ngoroutine {r.n(1, 90)} [running]:\nmain.(*Worker).process(...)\n\t/src/internal/queue/worker.go:{r.n(10, 99)}"


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


def diff(r: Rand) -> str:
    f = r.p(PATHS)
    return (
        f"diff --git a/{f} b/{f}\n--- a/{f}\n+++ b/{f}\n@@ -{r.n(1, 200)},7 +{r.n(1, 200)},9 @@\n"
        f"{r.p(DIFF_MINUS)}\n{r.p(DIFF_PLUS)}\n{r.p(DIFF_EXTRA)}\n     return result"
    )


def lint_output(r: Rand) -> str:
    f = r.p(PATHS)
    rows = [
        f"{f}:{r.n(1, 300)}:{r.n(1, 80)}: {r.p(['F401 `os` imported but unused', 'E711 comparison to None should be `is None`', 'B006 Do not use mutable data structures for argument defaults', 'UP007 Use `X | Y` for type annotations', 'no-unused-vars', 'SIM108 Use ternary operator'])}"
        for _ in range(r.n(2, 5))
    ]
    return "\n".join(rows) + f"\nFound {len(rows)} errors."


TEST_ARGS = ["[]", "0.1 + 0.2", '"Ünïcode"', "None", "-5"]
TEST_EXPECTED = ["0", "0.3", "[]", "True", '"ok"']


def test_output(r: Rand) -> str:
    return (
        f"============================= FAILURES =============================\n"
        f"___________________ test_{r.p(FUNCS).lower()}_{r.p(['empty', 'rounding', 'unicode', 'expired', 'negative'])} ___________________\n"
        f"    def test_case():\n>       assert {r.p(FUNCS)}({r.p(TEST_ARGS)}) == {r.p(TEST_EXPECTED)}\nE       AssertionError: assert {r.p(['None', '0.30000000000000004', 'False', '[1]'])} == {r.p(['0', '0.3', 'True', '[]'])}\n"
        f"FAILED tests/test_pricing.py::test_case - AssertionError\n========= 1 failed, {r.n(5, 200)} passed in {r.n(1, 30)}.{r.n(10, 99)}s ========="
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
    # Function-calling apps that expose their calculators (round 2): an everyday calculation
    # asked of an app that offers the function for it is a tool call, not hard maths.
    "calc": [
        _tool(
            "calculate_area", "Area of a circle, rectangle or triangle", shape="string", dimensions="object"
        ),
        _tool(
            "solve_quadratic",
            "Roots of a quadratic equation ax^2 + bx + c = 0",
            a="number",
            b="number",
            c="number",
        ),
        _tool(
            "compound_interest",
            "Future value of an investment with compound interest",
            principal="number",
            rate="number",
            years="integer",
        ),
        _tool(
            "convert_units", "Convert a value between units", value="number", source="string", target="string"
        ),
        _tool("describe_stats", "Mean, median and standard deviation of a list of numbers", values="array"),
    ],
    # A shell-like file system (round 3): file-system assistants offer a tool per command, a
    # long list like a coding agent's, and their asks are file operations in everyday words
    # ("put a copy of the notes in archives"), which must not read as writing or reasoning.
    "files": [
        _tool("cd", "Change the current working directory", folder="string"),
        _tool("ls", "List the contents of the current directory", show_hidden="boolean"),
        _tool("mkdir", "Create a new directory", dir_name="string"),
        _tool("touch", "Create a new empty file in the current directory", file_name="string"),
        _tool("mv", "Move or rename a file or directory", source="string", destination="string"),
        _tool("cp", "Copy a file or directory to another location", source="string", destination="string"),
        _tool("rm", "Remove a file or directory", file_name="string"),
        _tool("find", "Find files or directories whose name matches", path="string", pattern="string"),
        _tool("grep", "Search a file for lines matching a pattern", file_name="string", pattern="string"),
        _tool("cat", "Display the contents of a file", file_name="string"),
        _tool("echo", "Write content to a file or display it", content="string", file_name="string"),
        _tool("wc", "Count lines, words or characters of a file", file_name="string", mode="string"),
        _tool("sort", "Sort the lines of a file", file_name="string"),
        _tool("du", "Disk usage of the current directory", human_readable="boolean"),
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
