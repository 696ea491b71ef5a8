"""English phrasing templates, one list per intent. Each template takes the generator's
``Rand`` and returns the last user turn (tools: ``(text, toolset name)``)."""

from __future__ import annotations

from collections.abc import Callable

from classifier.data.pools import (
    CITIES,
    COMPANIES,
    FUNCS,
    LANGS,
    PARAGRAPHS,
    PATHS,
    PEOPLE,
    PRODUCTS,
    REVIEWS,
    SENTENCES,
    TOPICS,
    VOICES,
    code_block,
    diff,
    lint_output,
    test_output,
    traceback,
)
from classifier.data.rand import Rand

# A template draws its choices from the generator's Rand; it gives the user turn, or (system prompt, user turn).
Tpl = Callable[[Rand], str | tuple[str, str]]
AskTpl = Callable[[Rand], str]  # a template that gives the user turn only

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
TYPE_ERRORS = [
    'Argument 1 to "get" has incompatible type "str | None"',
    "Property id does not exist on type never",
    "cannot borrow `self.map` as mutable more than once at a time",
]

CODING: list[Tpl] = [
    lambda r: f"Fix this bug:\n{code_block(r)}\n\n{traceback(r)}",
    lambda r: f"{traceback(r)}\n\nwhat's wrong here? it only happens in prod",
    lambda r: (
        f"Refactor `{r.p(FUNCS)}` in {r.p(PATHS)} to {r.p(['use dependency injection', 'be async', 'remove the global state', 'split the parsing from the IO', 'use a dataclass instead of a dict'])}. Keep the public API stable."
    ),
    lambda r: (
        f"Write a {r.p(LANGS)} function that {r.p(['deduplicates a list of dicts by a key while keeping order', 'parses ISO-8601 durations', 'retries an HTTP call with exponential backoff and jitter', 'streams a large CSV and computes per-column stats', 'validates an IBAN', 'implements a token bucket rate limiter'])}."
    ),
    lambda r: (
        f"Add unit tests for {r.p(FUNCS)} in {r.p(PATHS)} using {r.p(['pytest', 'jest', 'go test', 'JUnit 5', 'rspec'])}. Cover edge cases like {r.p(['empty input', 'unicode', 'timezones', 'negative amounts', 'concurrent calls'])}."
    ),
    lambda r: f"Review this diff, anything risky?\n\n{diff(r)}",
    lambda r: (
        f"{r.p(['ruff', 'eslint', 'golangci-lint', 'clippy', 'mypy'])} says:\n{lint_output(r)}\nfix these pls"
    ),
    lambda r: (
        f"Write a SQL query that {r.p(['returns the top 10 customers by revenue in the last 90 days', 'finds users who signed up but never placed an order', 'computes weekly retention cohorts', 'deletes duplicate rows keeping the newest'])}. Tables: users(id, email, created_at), orders(id, user_id, total, created_at)."
    ),
    lambda r: (
        f"regex that matches {r.p(['semver strings like 1.2.3-rc.1', 'UK postcodes', 'a markdown link [text](url)', 'IPv4 addresses but not 999.1.1.1', 'lines that start with TODO or FIXME'])}"
    ),
    lambda r: (
        f"bash one-liner to {r.p(['find all files larger than 100MB and sort by size', 'rename *.jpeg to *.jpg recursively', 'count lines of python code excluding tests', 'kill whatever is listening on port 8080', 'tail the last 500 lines of all logs containing ERROR'])}"
    ),
    lambda r: f"Add docstrings and type hints to this:\n{code_block(r)}",
    lambda r: f"pytest fails:\n{test_output(r)}\ncan you make it pass? the implementation is in {r.p(PATHS)}",
    lambda r: (
        f"Implement {r.p(['pagination', 'soft delete', 'an audit log', 'rate limiting', 'CSV export', 'OAuth login'])} for our {r.p(['FastAPI', 'Express', 'Django', 'Spring Boot', 'Gin', 'Rails'])} service. Current handler:\n{code_block(r)}"
    ),
    lambda r: f"Convert this to {r.p(LANGS)}:\n{code_block(r)}",
    lambda r: f"Optimize this, it's O(n^2) and times out on 1e5 items:\n{code_block(r)}",
    lambda r: (
        f"CI broke after {r.p(['bumping pydantic to v2', 'the node 22 upgrade', 'merging the auth refactor', 'enabling strict mode in tsc'])}. Log:\n{lint_output(r)}\n{traceback(r)}"
    ),
    lambda r: (
        f"write a {r.p(['Dockerfile', 'GitHub Actions workflow', 'Makefile', 'docker-compose.yml', 'Kubernetes Deployment manifest'])} for a {r.p(['FastAPI app with uvicorn', 'Go service', 'Next.js frontend', 'Rust CLI'])} with {r.p(['multi-stage build', 'caching of dependencies', 'a healthcheck', 'non-root user'])}"
    ),
    lambda r: (
        f"why does this {r.p(['deadlock', 'leak memory', 'return stale data', 'panic sometimes'])}?\n{code_block(r)}"
    ),
    lambda r: f"explain what this code does line by line and then simplify it\n{code_block(r)}",
    lambda r: f"Rename {r.p(FUNCS)} to {r.p(FUNCS)}_v2 everywhere in the repo and update the imports",
    lambda r: (
        f"{code_block(r)}\n\n{r.p(['make it thread safe', 'add error handling', 'this is slow, speed it up', 'add logging', 'handle the None case'])}"
    ),
    lambda r: (
        f"Git question: {r.p(['how do I undo the last commit but keep the changes', 'rebase my branch onto main and squash the fixups', 'find which commit introduced this bug with bisect'])}"
    ),
    lambda r: f"The type checker complains: {r.p(TYPE_ERRORS)}. File {r.p(PATHS)}. How do I fix it properly?",
    lambda r: f"how do I {r.p(CODING_QUESTIONS)} in {r.p(LANGS)}?",
    lambda r: f"{r.p(CODE_STUBS)}",
    lambda r: (
        f"quick q: {r.p(CODING_QUESTIONS)}? using {r.p(['FastAPI', 'React', 'Django', 'Spring', 'tokio', 'pandas'])}"
    ),
    lambda r: (
        f"what's the difference between {r.p(['asyncio.gather and TaskGroup', 'useMemo and useCallback', 'a mutex and a RWMutex', 'LEFT JOIN and a subquery with EXISTS', 'Arc<Mutex<T>> and RefCell'])}, and which should I use here?\n{code_block(r)}"
    ),
    lambda r: f"{code_block(r)}",
    lambda r: (
        f"getting `{r.p(['ModuleNotFoundError: No module named yaml', 'ECONNREFUSED 127.0.0.1:5432', 'permission denied (publickey)', 'CORS policy: No Access-Control-Allow-Origin header'])}` when I {r.p(['run the app in docker', 'deploy to staging', 'run the tests in CI', 'start the dev server'])}. ideas?"
    ),
    lambda r: (
        f"Write a migration that adds a non-null `{r.p(['tenant_id', 'deleted_at', 'currency'])}` column to `{r.p(['orders', 'users', 'invoices'])}` without locking the table for minutes"
    ),
]

FS_DOCS = [
    "quarterly_summary.docx",
    "essay_v2.txt",
    "proof_sketch.md",
    "story_draft.txt",
    "market_analysis.csv",
    "poems.txt",
    "meeting_notes.txt",
    "budget_2026.xlsx",
    "thesis_outline.md",
    "press_kit.pdf",
    "ideas.txt",
    "results_final.csv",
]
FS_FOLDERS = [
    "documents",
    "archive",
    "projects/alpha",
    "research",
    "drafts",
    "shared",
    "tmp",
    "reports/2026",
    "workspace",
    "notes",
]
FS_PREAMBLES = [
    "I'm wrapping up my notes for the day.",
    "We're kicking off the quarterly analysis next week.",
    "I'm about to start drafting the launch story.",
    "Our probability homework is due Monday and I'm getting organised.",
    "I've been weighing the pros and cons of how our folders are set up.",
    "Big day: the essay competition closes tonight.",
    "",
    "Quick housekeeping task.",
]


# File operations asked of a file-system assistant (round 3): everyday words, often with a
# preamble about notes, reports, drafts or analyses; the ask is still a tool call.
FS_ASKS: list[Tpl] = [
    lambda r: (
        f"{r.p(FS_PREAMBLES)} Please create a file called '{r.p(FS_DOCS)}' in {r.p(FS_FOLDERS)}.",
        "files",
    ),
    lambda r: (
        f"In the {r.p(FS_FOLDERS)} folder there's '{r.p(FS_DOCS)}'. Move it to {r.p(FS_FOLDERS)} and rename it to '{r.p(FS_DOCS)}'",
        "files",
    ),
    lambda r: (
        f"where did I put my {r.p(['notes', 'draft', 'analysis', 'essay', 'budget', 'proof'])}? look for any file with '{r.p(['notes', 'draft', 'analysis', 'final', 'v2', 'summary'])}' in its name",
        "files",
    ),
    lambda r: (
        f"{r.p(['Show me', 'List', 'Could you display', 'Give me a listing of'])} everything in {r.p(FS_FOLDERS)}{r.p([', hidden files too', ' including the hidden ones', '', ' sorted by name'])}",
        "files",
    ),
    lambda r: (
        f"{r.p(FS_PREAMBLES)} Make a backup of '{r.p(FS_DOCS)}' by copying it into {r.p(FS_FOLDERS)}.",
        "files",
    ),
    lambda r: (f"put the line '{r.p(SENTENCES)}' at the end of {r.p(FS_DOCS)}", "files"),
    lambda r: (
        f"how many {r.p(['lines', 'words', 'characters'])} are in '{r.p(FS_DOCS)}'? {r.p(['and sort it alphabetically', '', 'then show me the last few lines'])}",
        "files",
    ),
    lambda r: (
        f"search {r.p(FS_DOCS)} for every line that mentions '{r.p(['deadline', 'budget', 'theorem', 'customer', 'TODO'])}' and show them to me",
        "files",
    ),
    lambda r: (
        f"go into {r.p(FS_FOLDERS)}, make a new directory called {r.p(['old', 'keep', 'review', 'final'])} and move every .{r.p(['txt', 'csv', 'md', 'docx'])} file into it",
        "files",
    ),
    lambda r: (
        f"{r.p(['Clean up:', 'Tidy up please:', ''])} delete '{r.p(FS_DOCS)}' from {r.p(FS_FOLDERS)}, {r.p(['it is an old draft', 'we do not need it anymore', 'it was a duplicate'])}",
        "files",
    ),
    lambda r: (
        f"{r.p(FS_PREAMBLES)} How much space is {r.p(FS_FOLDERS)} taking up, and which file is the biggest?",
        "files",
    ),
    lambda r: (
        f"open '{r.p(FS_DOCS)}' and show me what's in it, then copy it to {r.p(FS_FOLDERS)}",
        "files",
    ),
]


TOOLS: list[Tpl] = [
    lambda r: (
        f"What's the weather in {r.p(CITIES)} {r.p(['tomorrow', 'this weekend', 'right now', 'on Friday'])}?",
        "weather",
    ),
    lambda r: (
        f"Schedule a {r.p(['30 min', '1h', '15 minute'])} meeting with {r.p(PEOPLE)} next {r.p(['Monday', 'Tuesday', 'Thursday'])} at {r.n(9, 16)}:00",
        "calendar",
    ),
    lambda r: (
        f"Look up order {r.p(['#', 'ORD-', ''])}{r.n(10000, 99999)} and tell me where it is",
        "orders",
    ),
    lambda r: (f"Search the web for {r.p(TOPICS)} news from this week", "search"),
    lambda r: (
        f"Create a ticket: {r.p(['login page 500s on Safari', 'export button does nothing', 'typo on pricing page', 'webhooks delayed by 10 minutes'])}, priority {r.p(['P1', 'high', 'low', 'P3'])}",
        "tickets",
    ),
    lambda r: (
        f"Send an email to {r.p(PEOPLE)} saying {r.p(['the report is ready', 'I will be late tomorrow', 'thanks for the demo', 'the invoice was paid'])}",
        "email",
    ),
    lambda r: (
        f"How many {r.p(['signups', 'paid conversions', 'refunds', 'active users'])} did we get {r.p(['last week', 'yesterday', 'in October'])}? use the warehouse",
        "sql",
    ),
    lambda r: (f"What's {r.p(['AAPL', 'NVDA', 'SAP', 'TSLA', 'MSFT'])} trading at right now?", "stocks"),
    lambda r: (
        f"Find flights from {r.p(CITIES)} to {r.p(CITIES)} on {r.p(['Dec 3', 'the 14th', 'next Friday', '2027-01-09'])}, cheapest first",
        "flights",
    ),
    lambda r: (
        f"list what's in {r.p(['src/', 'the repo root', 'tests/', 'deploy/'])} and read the README",
        "fs",
    ),
    lambda r: (f"Refund order {r.n(10000, 99999)}, customer says it arrived broken", "orders"),
    lambda r: (
        f"Post in #{r.p(['deploys', 'general', 'oncall', 'marketing'])} that {r.p(['the deploy is done', 'standup is moved to 10:30', 'the outage is resolved'])}",
        "slack",
    ),
    lambda r: (
        f"Convert {r.n(20, 5000)} {r.p(['USD', 'EUR', 'GBP', 'JPY'])} to {r.p(['EUR', 'CHF', 'USD', 'MXN'])}",
        "fx",
    ),
    lambda r: (
        f"Is {r.p(['status.acme.io', 'api.kiteanalytics.com', 'our staging site', 'https://example.org/health'])} up?",
        "http",
    ),
    lambda r: (
        f"Remind me to {r.p(['call the landlord', 'renew the TLS cert', 'send the invoice', 'water the plants'])} at {r.n(1, 11)}{r.p(['am', 'pm'])}",
        "reminders",
    ),
    lambda r: (
        f"Get the open PRs in {r.p(['acme/web', 'kite/etl', 'our monorepo'])} and tell me which ones are waiting on me",
        "github",
    ),
    lambda r: (
        f"Book a table for {r.n(2, 8)} at {r.p(['Nopi', 'Chez Marcel', 'La Taberna', 'the sushi place'])} {r.p(['Friday 8pm', 'tonight', 'Sunday lunch'])}",
        "booking",
    ),
    lambda r: (
        f"Find the CRM contact for {r.p(['jordan.blake@fennelfoods.com', 'mei@kite.io', 'carlos.r@lumenbank.es'])} and update their phone to +1 555 {r.n(100, 999)} {r.n(1000, 9999)}",
        "crm",
    ),
    lambda r: (
        f"check the forecast for {r.p(CITIES)} and if it rains put 'bring umbrella' in my calendar",
        "weather",
    ),
    lambda r: ("run the test suite in the sandbox and show me the failures", "fs"),
    lambda r: ("pull yesterday's revenue by country from the warehouse", "sql"),
    lambda r: (f"Email the customer on order {r.n(10000, 99999)} that it shipped", "orders"),
    # File operations asked of a file-system assistant (round 3): one template per source, each
    # drawing from two of FS_ASKS, so leave-one-source-out still holds out phrasings.
    *[(lambda pair: lambda r: r.p(pair)(r))(FS_ASKS[i::6]) for i in range(6)],
    lambda r: (
        r.p(
            [
                f"What's the area of a circle with radius {r.n(2, 30)} cm?",
                f"Calculate the area of a triangle with base {r.n(3, 20)} and height {r.n(2, 15)}",
                f"roots of {r.n(1, 5)}x^2 + {r.n(2, 9)}x - {r.n(1, 9)} = 0 please",
                f"If I invest {r.n(1, 50)}000 at {r.n(2, 7)}% for {r.n(3, 30)} years, what do I end up with?",
                f"Convert {r.n(5, 300)} {r.p(['miles', 'pounds', 'gallons', 'Fahrenheit'])} to {r.p(['km', 'kg', 'litres', 'Celsius'])}",
                f"mean, median and std dev of {', '.join(str(r.n(1, 99)) for _ in range(r.n(5, 9)))}",
            ]
        ),
        "calc",
    ),
]

INSTRUCTION: list[Tpl] = [
    lambda r: f"Extract name, email, company and phone from this text as JSON:\n\n{r.p(PARAGRAPHS)}",
    lambda r: (
        "Classify the sentiment of each review as positive, negative or neutral. Output only the labels, one per line.\n"
        + "\n".join(f"{i + 1}. {r.p(REVIEWS)}" for i in range(r.n(3, 6)))
    ),
    lambda r: (
        f"Summarize this in {r.p(['2 sentences', 'one line', '3 bullet points', 'under 50 words'])}:\n{r.p(PARAGRAPHS)}"
    ),
    lambda r: (
        f"Convert this to CSV:\n| name | qty | price |\n|---|---|---|\n| {r.p(['widget', 'bolt', 'cable'])} | {r.n(1, 50)} | {r.n(1, 99)}.{r.n(10, 99)} |\n| {r.p(['nut', 'gear', 'plug'])} | {r.n(1, 50)} | {r.n(1, 99)}.{r.n(10, 99)} |"
    ),
    lambda r: (
        f'Rewrite this to sound more {r.p(["formal", "polite", "neutral", "concise"])}: "{r.p(SENTENCES)}"'
    ),
    lambda r: (
        f"Return ONLY a JSON object with keys title, tags (max 3), language for this text. No prose.\n{r.p(PARAGRAPHS)}"
    ),
    lambda r: f"Turn these notes into a bulleted list, max 5 bullets:\n{r.p(PARAGRAPHS)}",
    lambda r: f"Translate to {r.p(['German', 'French', 'Spanish', 'English', 'Italian'])}: {r.p(SENTENCES)}",
    lambda r: f"Fix grammar and spelling, don't change the meaning: {r.p(SENTENCES)}",
    lambda r: (
        f"Which category does this ticket belong to: billing, technical, account, other? Answer with one word.\n\n{r.p(PARAGRAPHS)}"
    ),
    lambda r: (
        f"Reformat these dates to ISO 8601, one per line: {r.p(['3/4/2026', 'March 5th 2026', '12.11.2025', 'Jan 9, 27'])}, {r.p(['2 Feb 2026', '2026/07/01', '11-30-2025'])}"
    ),
    lambda r: f"Give me a subject line for this email, under 8 words:\n{r.p(PARAGRAPHS)}",
    lambda r: (
        f"Shorten this to under {r.p(['280 characters', '20 words', 'one sentence'])}: {r.p(PARAGRAPHS)}"
    ),
    lambda r: (
        f"Parse this into street, city, postcode, country fields (YAML): {r.p(['221B Baker Street, London NW1 6XE, UK', 'Calle Mayor 12, 28013 Madrid', 'Hauptstr. 5, 10115 Berlin', '15 rue de la Paix, 75002 Paris'])}"
    ),
    lambda r: f"Answer yes or no only: does this message mention a refund?\n{r.p(PARAGRAPHS)}",
    lambda r: (
        f"List every date and amount mentioned, one per line, format `date | amount`:\n{r.p(PARAGRAPHS)}"
    ),
    lambda r: (
        f"Normalize these to lower snake_case: {', '.join(r.sample(['First Name', 'E-mail Address', 'ZipCode', 'createdAt', 'Order ID', 'Unit Price (EUR)'], 4))}"
    ),
    lambda r: (
        f"Label each line as QUESTION, COMPLAINT or PRAISE:\n{r.p(REVIEWS)}\n{r.p(REVIEWS)}\nwhy is shipping so slow?"
    ),
    lambda r: (
        f'Fill this template from the text below. Template: {{"customer": str, "issue": str, "urgent": bool}}\n{r.p(PARAGRAPHS)}'
    ),
    lambda r: f"Sort these alphabetically and remove duplicates: {', '.join(r.choices(CITIES, k=7))}",
    lambda r: f"tl;dr this for the standup: {r.p(PARAGRAPHS)}",
    lambda r: (
        f"Make this a markdown table with columns item/owner/due:\n- ship invoices, {r.p(PEOPLE)}, fri\n- fix onboarding copy, {r.p(PEOPLE)}, mon"
    ),
]


def _poly(r: Rand) -> str:
    return f"{r.n(2, 9)}x^{r.n(2, 5)} - {r.n(1, 9)}x + {r.n(1, 20)}"


MATH: list[Tpl] = [
    lambda r: f"Compute \\int_0^{{{r.n(1, 5)}}} x^{{{r.n(2, 6)}}} e^{{-x}}\\,dx exactly.",
    lambda r: (
        f"How many ways can {r.n(6, 12)} people sit around a round table if {r.p(PEOPLE[:8])} and {r.p(PEOPLE[:8])} refuse to sit next to each other?"
    ),
    lambda r: (
        f"Prove that for every integer n ≥ 1, {r.p(['n^3 - n is divisible by 6', '1 + 3 + ... + (2n-1) = n^2', '7^n - 1 is divisible by 6', 'the sum of the first n cubes is (n(n+1)/2)^2'])}."
    ),
    lambda r: f"Find all integer solutions to {r.n(2, 9)}x + {r.n(10, 40)}y = {r.n(50, 400)} with x, y > 0.",
    lambda r: (
        f"What's the probability that {r.p(['at least two of 30 people share a birthday', 'a random 5-card hand contains exactly two pairs', 'three dice sum to 10', 'a random chord is longer than the side of the inscribed triangle'])}? Give an exact fraction, then a decimal."
    ),
    lambda r: (
        f"Evaluate $\\sum_{{k=1}}^{{\\infty}} \\frac{{k^{r.n(1, 3)}}}{{{r.n(2, 5)}^k}}$ in closed form."
    ),
    lambda r: f"Find the last {r.p(['two', 'three', 'four'])} digits of {r.n(3, 99)}^{r.n(100, 2026)}.",
    lambda r: (
        f"Solve the recurrence a_n = {r.n(2, 6)}a_{{n-1}} - {r.n(1, 9)}a_{{n-2}} with a_0 = {r.n(0, 3)}, a_1 = {r.n(1, 5)}. Closed form please."
    ),
    lambda r: (
        f"Find the eigenvalues and eigenvectors of [[{r.n(1, 5)}, {r.n(0, 3)}], [{r.n(0, 3)}, {r.n(1, 5)}]] and diagonalize it."
    ),
    lambda r: (
        f"Let f(x) = {_poly(r)}. Find the exact minimum of f on [{r.n(-3, 0)}, {r.n(1, 4)}] and justify."
    ),
    lambda r: f"How many positive divisors does {r.n(1000, 99999)} have, and what's their sum?",
    lambda r: (
        f"A bag has {r.n(3, 9)} red and {r.n(3, 9)} blue balls. We draw without replacement until both colours have appeared. Expected number of draws?"
    ),
    lambda r: f"Compute lim_{{x→0}} (sin({r.n(2, 5)}x) - {r.n(2, 5)}x) / x^3.",
    lambda r: f"Find the smallest prime p > {r.n(100, 5000)} such that p ≡ {r.n(1, 4)} (mod {r.n(5, 12)}).",
    lambda r: (
        f"Volume of the solid formed by rotating y = x^{r.n(2, 4)} for 0 ≤ x ≤ {r.n(1, 4)} about the x-axis? Exact answer with π."
    ),
    lambda r: f"Show that √{r.p(['2', '3', '5', '6', '12'])} is irrational, rigorous proof.",
    lambda r: (
        f"Number of lattice paths from (0,0) to ({r.n(4, 9)},{r.n(4, 9)}) using unit right/up steps that never cross above y = x?"
    ),
    lambda r: (
        f"Solve the ODE y'' + {r.n(1, 6)}y' + {r.n(1, 9)}y = {r.p(['e^{-x}', 'sin x', '0', 'x^2'])} with y(0)=1, y'(0)=0."
    ),
    lambda r: (
        f"Compute the determinant of the {r.n(4, 5)}x{r.n(4, 5)} matrix with a_ij = min(i, j) and prove the pattern for general n."
    ),
    lambda r: (
        f"If X ~ Poisson({r.n(2, 9)}) and Y ~ Poisson({r.n(2, 9)}) are independent, what's P(X = Y)? Numeric to 6 decimals."
    ),
    lambda r: (
        f"Find all real x with {r.n(2, 5)}^x + {r.n(2, 5)}^x = {r.n(10, 90)}. Give x to 8 significant digits."
    ),
    lambda r: f"quick check, is {r.n(1000, 99999)} prime? and what's φ({r.n(100, 9999)})?",
    lambda r: f"Find the area enclosed by r = {r.n(1, 4)} + {r.n(1, 3)}cos θ. Show the integral.",
    lambda r: (
        f"How many {r.n(5, 10)}-digit numbers have digits summing to {r.n(15, 40)}? Use generating functions."
    ),
]

REASONING: list[Tpl] = [
    lambda r: (
        f"Knights always tell the truth, knaves always lie. {r.p(PEOPLE[:6])} says: 'At least one of us is a knave.' {r.p(PEOPLE[:6])} says: 'Exactly one of us is a knight.' Who is what? Show the case analysis."
    ),
    lambda r: (
        "Five houses in a row, each a different colour. The Brit lives in the red house; the green house is immediately left of the white one; the coffee drinker lives in the green house; the Norwegian lives in the first house... Who owns the fish? Work it out step by step."
    ),
    lambda r: (
        f"Task A must happen before B, C cannot be on {r.p(['Monday', 'Tuesday'])}, D and E must be on the same day, B is after D, and there are only 3 days with 2 slots each. Find a valid schedule or prove none exists."
    ),
    lambda r: (
        f"Think through the second-order effects of {r.p(['a four-day work week', 'banning short-haul flights', 'a universal basic income pilot', 'congestion pricing'])} on {r.p(['small businesses', 'housing prices', 'public transit', 'rural towns'])}. Consider incentives, who adapts first, and what could backfire."
    ),
    lambda r: (
        f"We're choosing between {r.p(['Postgres', 'a monolith', 'buying a vendor tool', 'hiring seniors'])} and {r.p(['DynamoDB', 'microservices', 'building in-house', 'hiring juniors and training them'])} for {r.p(['a 6-person startup', 'a regulated bank', 'a two-year roadmap'])}. Walk through the trade-offs carefully and commit to a recommendation."
    ),
    lambda r: (
        "If all bloops are razzies and some razzies are lazzies, does it follow that some bloops are lazzies? Explain with a counter-model if not."
    ),
    lambda r: (
        f"A farmer must get a wolf, a goat and a cabbage across a river; the boat holds him plus one item, and {r.p(['the wolf eats the goat', 'the goat eats the cabbage'])} if left alone. Now add a second goat that fights the first. Minimal solution? Reason step by step."
    ),
    lambda r: (
        "Three boxes are labelled apples, oranges, and mixed; every label is wrong. You may draw one fruit from one box. How do you relabel all boxes? Then generalize to four boxes."
    ),
    lambda r: (
        f"Our {r.p(['conversion rate', 'NPS', 'weekly active users', 'p99 latency'])} moved {r.n(5, 40)}% the week after {r.p(['we changed pricing', 'the redesign shipped', 'a competitor launched', 'daylight saving time'])}. List the competing causal explanations and design a way to tell them apart. Be rigorous."
    ),
    lambda r: (
        f"Steelman both sides of {r.p(['whether remote work hurts junior engineers', 'nuclear vs renewables for grid decarbonization', 'open-sourcing model weights'])} and identify the actual crux where they disagree."
    ),
    lambda r: (
        f"Find the flaw in this argument: '{r.p(['Every time we run ads sales go up, so ads cause sales', 'No one has proven it is unsafe, so it is safe', 'Most startups that raise big rounds succeed, so raising big rounds causes success'])}'. Be precise about which inference fails."
    ),
    lambda r: (
        "Three prisoners wear hats from a pool of 3 white and 2 black; each sees the others but not his own. The first two say they don't know. What does the third conclude and why?"
    ),
    lambda r: (
        f"We have {r.n(3, 6)} engineers and {r.n(3, 5)} projects. Ana can't work with Ben, project X needs two backend people, Chen only does frontend, and Y must ship before Z. Figure out an allocation that satisfies everything and justify each step."
    ),
    lambda r: (
        "Which of these must be true? (1) If it rains the match is cancelled. (2) The match was not cancelled. (3) Either it rained or the pitch was dry. Reason carefully about each conclusion."
    ),
    lambda r: (
        f"Two firms set prices simultaneously, marginal cost {r.n(1, 9)}, demand q = {r.n(50, 120)} - p split evenly if prices tie. What's the equilibrium and why? Then consider capacity constraints."
    ),
    lambda r: (
        f"Evaluate the claim that '{r.p(['more data always beats better algorithms', 'a rising tide lifts all boats', 'correlation in this cohort implies the effect generalizes'])}'. Look for counterexamples, hidden assumptions and edge cases, and give a nuanced verdict."
    ),
    lambda r: (
        "You meet two guards, one always lies, one always tells the truth, one door leads out. You can ask one question to one guard. What do you ask? Then solve it when a third guard answers randomly."
    ),
    lambda r: (
        f"Think hard: is it rational for a {r.p(['city', 'company', 'country'])} to {r.p(['subsidize a stadium', 'match a competitor price cut', 'build a seawall now rather than in 20 years'])}? Weigh the uncertainty explicitly and reason to a conclusion."
    ),
    lambda r: (
        "In a tournament each of 8 teams plays every other once. Is it possible that every team wins exactly as many games as it loses? Reason it out without brute force."
    ),
    lambda r: (
        f"Here is the timeline of a {r.p(['supply chain disruption', 'failed product launch', 'team conflict'])}: week 1 the supplier warned, week 2 finance froze budgets, week 3 marketing still launched. Analyze the root causes and what decision points mattered most."
    ),
    lambda r: (
        "A says B is lying. B says C is lying. C says both A and B are lying. Who is telling the truth? Walk through every case."
    ),
    lambda r: (
        f"Devil's advocate: argue carefully why our plan to {r.p(['expand into Germany next quarter', 'drop the free tier', 'rewrite the app in Rust'])} could fail, rank the risks by likelihood and impact, then say what would change your mind."
    ),
]

WRITING: list[Tpl] = [
    lambda r: (
        f"Write a {r.p(['1200', '1500', '2000', '800'])}-word blog post about {r.p(TOPICS)} for {r.p(COMPANIES)}. Brand voice: {r.p(VOICES)}."
    ),
    lambda r: (
        f"Draft a press release announcing {r.p(PRODUCTS)} from {r.p(COMPANIES)}. Include a quote from the CEO and a boilerplate paragraph."
    ),
    lambda r: (
        f"Write a short story (~{r.p(['1000', '1500', '2500'])} words) about {r.p(['a lighthouse keeper who receives letters from the future', 'two rival bakers in Lyon', 'a robot learning to garden', 'the last day of a summer camp'])}."
    ),
    lambda r: (
        f"Write the keynote speech for {r.p(['our annual customer conference', 'a graduation ceremony', 'the product launch event', 'a charity gala'])}, about {r.p(['15', '10', '20'])} minutes, inspiring but not cheesy."
    ),
    lambda r: (
        f"Landing page copy for {r.p(PRODUCTS)}: hero headline, subhead, three feature blocks, testimonial, CTA. Tone: {r.p(VOICES)}."
    ),
    lambda r: (
        f"An essay on {r.p(TOPICS)}, around {r.p(['1500', '2000', '3000'])} words, with a strong opening hook and a personal angle."
    ),
    lambda r: (
        f"Write this month's customer newsletter for {r.p(COMPANIES)}: {r.p(['new features', 'our sustainability report', 'holiday hours and a founder note', 'a community spotlight'])}. Long-form, in our voice ({r.p(VOICES)})."
    ),
    lambda r: f"Write a long LinkedIn article on {r.p(TOPICS)}, thought-leadership style, with anecdotes.",
    lambda r: (
        f"Write a {r.p(['wedding', 'retirement', 'farewell', 'birthday'])} speech for my {r.p(['sister', 'best friend', 'boss', 'grandfather'])}; {r.p(['she loves sailing and bad puns', 'he spent 30 years at the same company', 'we met in kindergarten'])}."
    ),
    lambda r: (
        f"Write product description copy for {r.p(PRODUCTS)}, ~{r.p(['300', '500', '700'])} words, brand voice {r.p(VOICES)}, for the website and the catalogue."
    ),
    lambda r: (
        f"Write a customer case study: how {r.p(COMPANIES)} used {r.p(PRODUCTS)} to {r.p(['cut costs by 30%', 'double their NPS', 'expand to 4 new markets'])}. Story arc: challenge, solution, results."
    ),
    lambda r: (
        f"Draft the About Us page for {r.p(COMPANIES)}: founding story, mission, values, team. Make it feel human."
    ),
    lambda r: (
        f"Write a poem about {r.p(['the sea at night', 'a city waking up', 'leaving home', 'autumn in Kyoto'])} in {r.p(['free verse', 'sonnet form', 'the style of Mary Oliver'])}."
    ),
    lambda r: (
        f"Write chapter one of a {r.p(['mystery', 'sci-fi', 'fantasy', 'literary'])} novel set in {r.p(CITIES)}. Introduce the protagonist and end on a hook."
    ),
    lambda r: (
        f"Write a 3-email nurture sequence for people who downloaded our {r.p(['pricing guide', 'whitepaper', 'free trial'])} at {r.p(COMPANIES)}. Each email 200-300 words, {r.p(VOICES)}."
    ),
    lambda r: (
        f"Write an op-ed arguing that {r.p(['cities should ban cars from their centres', 'every school should teach personal finance', 'open-source deserves public funding'])}, 900 words, for a national newspaper."
    ),
    lambda r: (
        f"Script a {r.p(['2-minute', '90 second', '60 second'])} brand video for {r.p(COMPANIES)} introducing {r.p(PRODUCTS)}, with voiceover and scene notes."
    ),
    lambda r: (
        f"Rewrite our homepage story in a warmer voice, ~{r.p(['800', '1000'])} words. Here's the current one: '{r.p(COMPANIES)} provides solutions for customers. We are leaders in quality.'"
    ),
    lambda r: (
        f"Write a eulogy for {r.p(['my grandmother, a nurse for 40 years', 'our family dog', 'a colleague who loved jazz'])}, heartfelt, 5 minutes long."
    ),
    lambda r: (
        f"Give me a long-form feature article for our magazine on {r.p(TOPICS)}, interviews-style, 2000 words."
    ),
    lambda r: (
        f"Write social + blog launch copy for {r.p(PRODUCTS)}: one long blog post and five tweets in our voice ({r.p(VOICES)})."
    ),
    lambda r: (
        f"Write a bedtime story for a {r.n(4, 9)}-year-old about {r.p(['a brave snail', 'a cloud that wanted to be rain', 'a dragon afraid of the dark'])}."
    ),
]

# Non-English phrasings, drawn for 25 % of examples (see sample_text); round-robin over sources
# like the rest. German, French and Spanish here (2 per language and intent); Chinese, Japanese,

# The English templates of each intent (the other languages' are in templates_multi.MULTI).
TEMPLATES_BY_INTENT: dict[str, list[Tpl]] = {
    "coding": CODING,
    "tools": TOOLS,
    "instruction": INSTRUCTION,
    "math": MATH,
    "reasoning": REASONING,
    "writing": WRITING,
}
