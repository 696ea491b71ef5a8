"""Asks made inside a coding agent, in a repository's vocabulary (round 2 of issue 18).

Why: in a coding agent every request carries the agent's tools, its system prompt and a
repository around it, and the user talks in that vocabulary even when the work is not coding:
"read the design doc and tell me which option holds up", "check the formula in billing.py:
derive the amortised payment", "go through the changelog and write the launch post". And the
reverse: coding and tool asks whose subject is maths or prose ("implement Kahan summation", "add
a reading-time estimate to the essay editor"). The f13 corpus asked maths, reasoning and writing
mostly in their own vocabulary, so inside an agent the file paths, the tool verbs ("check",
"grep", "run", "read") and the tool list decided. These templates put the task's own words next
to the agent's: the route has to come from what is asked for (derive, prove, decide, argue,
write the post) rather than from where it is asked.

They are drawn for a share of the requests wrapped in a coding agent (``generate.AGENT_RATE``)
and follow the same round-robin ownership by source as the other templates, so
leave-one-source-out still holds out phrasings. Written for the generator, independently of the
hand-written evaluation sets.
"""

from __future__ import annotations

from classifier.data.pools import FUNCS, PATHS, PEOPLE, PRODUCTS
from classifier.data.templates_en import AskTpl

DOC_PATHS = [
    "docs/design/scheduler.md",
    "docs/adr/0009-storage-engine.md",
    "notes/capacity-2027.md",
    "RFC-014-multi-region.md",
    "docs/postmortems/outage-0917.md",
    "docs/architecture.md",
    "proposals/event-bus.md",
    "ops/runbook-failover.md",
]
PROSE_PATHS = ["CHANGELOG.md", "RELEASE_NOTES.md", "docs/roadmap.md", "README.md", "docs/changes/v5.md"]
LOOK = ["read", "open", "look at", "check", "go through", "grep for the code in", "skim", "pull up"]
LOOK_CODE = ["check", "look at", "read", "grep", "open", "see"]
THEN = [" and then", ", then", " and", ". then"]
SCRATCH = [
    "scratch/sim.py",
    "notebooks/explore.ipynb",
    "bench/run.py",
    "tools/estimate.py",
    "scripts/check.py",
]

# ---------------------------------------------------------------------------------- maths
# A maths task stated in a codebase's terms: (what to find, where the code is).
MATH_TASKS = [
    lambda r: (
        f"the expected number of attempts until a request succeeds if each attempt fails independently with probability {r.p(['0.2', '0.25', '0.4', '1/3'])} and we give up after {r.n(3, 8)}"
    ),
    lambda r: (
        "a closed form for how many times the innermost statement of the triple loop runs, as an exact sum in n, not big-O"
    ),
    lambda r: (
        f"the probability that {r.p(['10^6', '10^8', '5 million', '2^32'])} random {r.p(['64-bit', '48-bit', '32-bit'])} ids contain a duplicate, with the approximation and its error"
    ),
    lambda r: (
        f"the long-run fraction of time the circuit breaker is open, if it trips with probability {r.p(['0.05', '0.1', '0.02'])} per tick and recovers with probability {r.p(['0.5', '0.3', '0.8'])}: set up the chain and solve it exactly"
    ),
    lambda r: (
        f"the formula behind {r.p(['the monthly instalment', 'the continuous compounding', 'the exponential moving average weight', 'the great-circle distance'])}: derive it from first principles"
    ),
    lambda r: (
        f"the batch size b that minimises the cost {r.n(2, 40)}/b + {r.p(['0.5', '0.01', '3'])}*b per item, with a proof that it is a minimum"
    ),
    lambda r: (
        f"a bound on the error of the {r.p(['trapezoid rule', 'midpoint rule', 'second-order Taylor expansion', 'Simpson rule'])} for step h, proved rather than measured"
    ),
    lambda r: (
        f"whether the sum of 1/n^{r.p(['2', '3', '1.5'])} that the convergence check relies on is finite, with a proof and its value or a tight bound"
    ),
    lambda r: (
        f"the variance of the number of {r.p(['cache misses', 'retries', 'dropped packets', 'failed jobs'])} among {r.n(20, 500)} independent ones, each with probability {r.p(['p', '0.01', '0.3'])}, and why the formula holds"
    ),
    lambda r: (
        f"the number of distinct ways {r.n(5, 12)} jobs can be assigned to {r.n(2, 4)} workers so every worker gets at least one, by inclusion-exclusion"
    ),
    lambda r: (
        "the eigenvalues of the transition matrix and what they say about how fast it converges; do it by hand"
    ),
    lambda r: (
        "a proof that the invariant lo <= target < hi holds after every iteration, and that the loop terminates in at most ceil(log2 n) + 1 steps"
    ),
    lambda r: (
        f"the integral of x^{r.n(2, 4)} e^(-x) from 0 to infinity that the normalisation uses, step by step"
    ),
    lambda r: (
        f"the median and the mean of an exponential with rate {r.p(['λ', '2', '0.5'])} and the exact probability that a sample exceeds twice the mean"
    ),
]
MATH_FRAMES = [
    lambda r, t: f"{r.p(LOOK_CODE)} {r.p(PATHS)}{r.p(THEN)} work out {t}",
    lambda r, t: f"the code in {r.p(PATHS)} assumes it, but I want the maths: {t}",
    lambda r, t: f"before I touch {r.p(PATHS)}: derive {t}",
    lambda r, t: f"{t} - prove it, don't just run {r.p(SCRATCH)}",
    lambda r, t: f"{r.p(LOOK_CODE)} what {r.p(SCRATCH)} prints, then give me the exact answer: {t}",
    lambda r, t: f"question about {r.p(FUNCS)}(): what is {t}? show the derivation",
    lambda r, t: f"I need {t}. exact, with the steps. it goes in the docstring of {r.p(FUNCS)}",
    lambda r, t: f"can you find {t}? the test in {r.p(PATHS)} only checks it numerically",
]


def _math(frame):  # one template per frame, its task drawn from MATH_TASKS
    return lambda r: frame(r, r.p(MATH_TASKS)(r))


MATH_AGENT: list[AskTpl] = [_math(frame) for frame in MATH_FRAMES]

# ------------------------------------------------------------------------------- reasoning
OPTIONS = [
    ("a queue between the services", "direct HTTP calls"),
    ("one shared database", "a database per service"),
    ("feature flags", "long-lived release branches"),
    ("a rewrite", "incremental refactoring"),
    ("blue-green deploys", "canary releases"),
    ("vendoring the library", "pinning and upgrading monthly"),
    ("sharding by tenant", "sharding by region"),
]
FACTORS = [
    "team size, on-call load and what fails first",
    "who gets paged, how we roll back and what it costs in a year",
    "blast radius, migration risk and how hard it is to undo",
    "latency, consistency and the people we have",
]
CLAIMS = [
    "retries are safe because the handlers are idempotent",
    "the cache can never serve data older than the TTL",
    "moving to async workers removes the deadlock",
    "the spike in errors was caused by the deploy",
    "doubling the replicas halves the p99",
    "the new index explains the faster reports",
]
EVENTS = [
    ("the primary fails over", "a schema migration"),
    ("a worker dies", "the nightly reconciliation"),
    ("two deploys overlap", "a config rollout"),
    ("the network partitions", "leader election"),
    ("the queue backs up for an hour", "the billing run"),
]
# Round 4: reasoning about the application's own domain, asked inside the repository: a rule,
# a schema or a process of the product, questioned on a situation, with no code asked for.
DOMAIN_CASES = [
    ("the royalty ledger", "an author disputes a statement two years after it was paid"),
    ("the booking system", "two guests book the last room within the same second"),
    ("the gradebook", "a teacher changes the rubric halfway through the term"),
    ("the inventory sync", "one warehouse stays offline for a whole day"),
    ("the loyalty points", "a refund arrives after the points were already spent"),
    ("the shift planner", "a nurse swaps the same shift twice in one week"),
    ("the tournament bracket", "a team withdraws after the first round"),
    ("the subscription billing", "a customer downgrades mid-cycle and upgrades again"),
    ("the vote counting", "two candidates tie for the last seat"),
    ("the loan tracker", "an object goes straight from one borrower to the next"),
]
SYMPTOMS = [
    "totals that are off by a few cents at month end",
    "orders that show as shipped twice",
    "students who disappear from one report but not another",
    "alarms that fire only on Mondays",
    "duplicate reminders for the same appointment",
]
REASONING_AGENT: list[AskTpl] = [
    lambda r: (
        lambda c: (
            f"before I touch the code: in {c[0]}, what should happen when {c[1]}? walk through the cases and tell me which rule decides each"
        )
    )(r.p(DOMAIN_CASES)),
    lambda r: (
        lambda c: (
            f"{r.p(DOC_PATHS)} sketches two ways to model {c[0]}. which copes better when {c[1]}, and what goes wrong in the other? argue it"
        )
    )(r.p(DOMAIN_CASES)),
    lambda r: (
        lambda c: (
            f"could {c[1]} leave {c[0]} in an inconsistent state, given how {r.p(PATHS)} orders its writes? reason from the code as it is, don't run it"
        )
    )(r.p(DOMAIN_CASES)),
    lambda r: (
        f"{r.p(PEOPLE)} wants to {r.p(['keep the current rule', 'switch to the simpler rule', 'let admins decide case by case'])} for {r.p(DOMAIN_CASES)[0]}, I don't. who's right, and what would change your mind?"
    ),
    lambda r: (
        f"we're seeing {r.p(SYMPTOMS)}. rank the plausible causes from most to least likely and say what evidence would tell them apart"
    ),
    lambda r: (
        lambda c: (
            f"is {c[0]} fair when {c[1]}? think through who loses in the edge cases and give me a verdict, not a patch"
        )
    )(r.p(DOMAIN_CASES)),
    lambda r: (
        f"{r.p(LOOK)} {r.p(DOC_PATHS)} and tell me whether the conclusion that {r.p(CLAIMS)} actually follows. reason it through, don't change anything"
    ),
    lambda r: (
        lambda o: (
            f"{r.p(DOC_PATHS)} proposes {o[0]} instead of {o[1]}. weigh both against {r.p(FACTORS)} and make a call"
        )
    )(r.p(OPTIONS)),
    lambda r: (
        lambda e: (
            f"think it through before running anything: if {e[0]} in the middle of {e[1]}, which states can we end up in, and which of them lose data?"
        )
    )(r.p(EVENTS)),
    lambda r: (
        f"which of these should we do first, and why? {', '.join(r.sample(['add tracing', 'split the monolith', 'move to managed Postgres', 'rewrite the importer', 'add a staging env', 'pay down the flaky tests'], 3))}. think about risk and payoff, no code"
    ),
    lambda r: (
        f"the logs in {r.p(['logs/api.log', 'ops/incident.txt', 'out/trace.json'])} show errors every {r.n(5, 15)} minutes, only on {r.p(['the largest nodes', 'nodes in one zone', 'the newest hosts'])}. is it {r.p(['GC pauses', 'clock skew', 'a cron job', 'connection pool exhaustion'])} or something else? lay out the evidence for each explanation"
    ),
    lambda r: (
        f"{r.p(['my colleague', 'the reviewer', 'the design doc', 'our CTO'])} claims {r.p(CLAIMS)}. is that argument sound? find the hidden assumptions"
    ),
    lambda r: (
        f"compare the two benchmark runs in {r.p(['bench/out', 'results/', 'perf/'])} and decide whether the {r.n(3, 9)}% regression is real or noise, given only {r.n(3, 8)} runs each. argue it carefully"
    ),
    lambda r: (
        f"{r.p(LOOK)} {r.p(DOC_PATHS)}: the timeline contradicts itself about what happened first. work out which order of events is consistent with all of it"
    ),
    lambda r: (
        f"plan only, no edits: how would you sequence {r.p(['moving 20 services to the new cluster', 'retiring the v1 API', 'splitting the users table', 'rotating every credential'])} so nothing customer-facing breaks? what's the riskiest step and why?"
    ),
    lambda r: (
        f"is it ever correct for {r.p(FUNCS)} to be called twice for the same event, given the queue delivers at least once and the lock expires after {r.n(10, 60)}s? reason about the interleavings, no code"
    ),
]

# --------------------------------------------------------------------------------- writing
AUDIENCES = [
    "our customers",
    "the newsletter",
    "the company blog",
    "the status page",
    "investors",
    "new hires",
]
TONES = [
    "warm, plain English",
    "confident but not salesy",
    "playful, short sentences",
    "calm and honest",
    "friendly, no jargon",
]
WRITING_AGENT: list[AskTpl] = [
    lambda r: (
        f"{r.p(LOOK)} {r.p(PROSE_PATHS)} and write the announcement for {r.p(AUDIENCES)}. {r.p(TONES)}, about {r.p(['300', '400', '600', '800'])} words"
    ),
    lambda r: (
        f"write {r.p(['docs/why.md', 'the README intro', 'the about page', 'the launch post'])}: a short persuasive essay on why we built this, for {r.p(['non-technical readers', 'other teams', 'the open-source community'])}. {r.p(TONES)}"
    ),
    lambda r: (
        f"using {r.p(PROSE_PATHS)}, draft a story-led blog post about {r.p(['the v3 rewrite', 'our move to the new database', 'a year of on-call', 'open-sourcing the scheduler'])}, {r.p(['600', '900', '1,200'])} words with a good headline"
    ),
    lambda r: (
        f"write a {r.p(['heartfelt farewell message', 'toast', 'thank-you note', 'welcome letter'])} to {r.p(PEOPLE)} from the team, about {r.p(['150', '200', '300'])} words. it's going in the {r.p(['card', 'channel', 'all-hands deck'])}, not the repo"
    ),
    lambda r: (
        f"draft the postmortem narrative from {r.p(['ops/timeline.txt', 'the incident channel export', DOC_PATHS[4]])}: blameless, readable, around {r.p(['500', '700'])} words"
    ),
    lambda r: (
        f"write the landing page copy for {r.p(PRODUCTS)}: headline, subheadline, three short benefit paragraphs, a call to action. voice: {r.p(TONES)}"
    ),
    lambda r: (
        f"{r.p(LOOK)} {r.p(PROSE_PATHS)} and turn it into a {r.p(['press release', 'customer email', 'LinkedIn post', 'conference talk abstract'])} that people will actually want to read"
    ),
    # Round 3: prose that lives in the repository (an email template, a doc page, an announcement
    # file, the product's copy): written for people, in the product's voice, then saved as a file.
    lambda r: (
        f"draft the copy for {r.p(['templates/email/renewal.html', 'emails/payment_failed.mjml', 'app/mailers/views/invite.text.erb', 'src/mail/downgrade.hbs'])}: {r.p(TONES)}. greet them, say what changed and what they need to do, sign off from the team"
    ),
    lambda r: (
        f"{r.p(['docs/config.md', 'the scheduler section of the handbook', 'docs/architecture/caching.md', 'the sync chapter of the guide'])} is just a list of options. turn it into an explanation a newcomer can follow: what it is for, how it behaves, the trade-offs, in paragraphs"
    ),
    lambda r: (
        f"the copy in {r.p(['site/index.html', 'src/components/Pricing.vue', 'landing/features.md', 'app/src/main/res/values/strings.xml'])} sounds like a brochure. redo it so it sounds like us ({r.p(TONES)}), same facts"
    ),
    lambda r: (
        f"from CHANGELOG.md, write the announcement in {r.p(['content/announcements/', 'blog/_posts/', 'docs/news/'])} for {r.p(AUDIENCES)}: what changed for them and why it matters, {r.p(TONES)}, about {r.p(['250', '400', '500'])} words"
    ),
    lambda r: (
        f"the top of README.md is a wall of badges. write an opening that tells people why this project exists and who it helps, {r.p(TONES)}, two or three paragraphs"
    ),
    lambda r: (
        f"draft {r.p(['docs/faq.md', 'the help center article for exports', 'docs/getting-started.md', 'the migration guide for v4'])} for {r.p(['non-technical users', 'admins', 'new customers'])}: friendly, concrete, in our voice; a page, with headings"
    ),
    lambda r: (
        f"write a {r.p(['short story', 'poem', 'limerick sequence', 'fable'])} for the team newsletter about {r.p(['a flaky test that finally passes', 'a 3am page', 'the oldest cron job in the repo', 'a migration that went too well'])}. funny, a little tender"
    ),
]

# ------------------------------------------------------------------ local work on maths and prose
MATH_ALGOS = [
    "Kahan summation",
    "Newton's method for the square root",
    "Welford's running variance",
    "modular exponentiation",
    "a sieve of Eratosthenes up to n",
    "LU decomposition with partial pivoting",
    "the haversine distance",
    "a 4th-order Runge-Kutta step",
    "binomial coefficients mod a prime",
    "Gauss-Legendre quadrature",
    "an exponentially weighted moving average",
    "the Bayesian average of ratings",
]
PROSE_FEATURES = [
    "a word count and reading-time estimate",
    "a table of contents generated from the headings",
    "footnotes",
    "a spell-check pass before publishing",
    "a live markdown preview",
    "an excerpt generator that cuts at a sentence boundary",
    "hyphenation for long words",
]
PROSE_PLACES = [
    "blog post editor",
    "essay submission form",
    "newsletter composer",
    "story reader",
    "docs site",
]
CODING_AGENT: list[AskTpl] = [
    lambda r: f"implement {r.p(MATH_ALGOS)} in {r.p(PATHS)} with tests, including the edge cases",
    lambda r: (
        f"{r.p(FUNCS)} in {r.p(PATHS)} computes {r.p(['the mean', 'the standard deviation', 'the percentile', 'the compound interest', 'the area'])} wrong for {r.p(['empty input', 'a single element', 'negative values', 'very large numbers'])}. fix it and add a regression test"
    ),
    lambda r: f"add {r.p(PROSE_FEATURES)} to the {r.p(PROSE_PLACES)}",
    lambda r: (
        f"write a script that reads every {r.p(['essay', 'poem', 'chapter', 'article'])} in {r.p(['content/', 'posts/', 'manuscript/'])} and reports {r.p(['the average sentence length', 'the most repeated words', 'the word count per section', 'broken links'])}"
    ),
    lambda r: (
        f"the {r.p(MATH_ALGOS)} in {r.p(PATHS)} is O(n^2) and slow on big inputs. vectorise it or find a better algorithm, keep the results identical"
    ),
    lambda r: (
        f"port {r.p(MATH_ALGOS)} from {r.p(['the Python prototype', 'scratch/proto.py', 'the notebook'])} to {r.p(['Rust', 'Go', 'TypeScript'])} and check both agree on random inputs"
    ),
    lambda r: (
        f"the proof checker in {r.p(PATHS)} accepts {r.p(['circular arguments', 'a missing step', 'an empty proof'])}. fix the validation and add tests"
    ),
    lambda r: (
        f"render the {r.p(['LaTeX formulas', 'poems', 'long quotes'])} in the {r.p(PROSE_PLACES)} properly; right now {r.p(['they show up as raw text', 'line breaks get lost', 'the layout breaks on mobile'])}"
    ),
]
COMMANDS = [
    ("run the test suite", "how many tests fail"),
    ("run the linter", "which files have errors"),
    ("check the docker containers", "which ones are unhealthy"),
    ("look at the last 200 lines of the api logs", "whether there are 5xx errors"),
    ("check disk usage on this box", "what is taking the space"),
    ("list the open pull requests", "which ones are waiting on me"),
    ("check which ports are listening", "what's on 5432 and 8080"),
    ("run git log for the last week", "who touched the billing code"),
    ("search the web for the latest release of the framework", "whether it breaks our version"),
    ("fetch the status page JSON", "whether there's an open incident"),
    ("check memory use of the worker processes", "if any is above 2 GB"),
    ("find files larger than 50 MB in the repo", "their sizes"),
]
FILE_OPS = [
    lambda r: (
        f"move {r.p(['the old fixtures', 'every .csv under data/', 'the generated reports', 'last month logs'])} into {r.p(['archive/', 'tests/data/', 'a new folder called old', '/tmp/backup'])}"
    ),
    lambda r: (
        f"create a file named {r.p(['NOTES.txt', 'todo.md', 'scratch/ideas.txt'])} containing '{r.p(['ideas go here', 'TBD', 'draft'])}'"
    ),
    lambda r: (
        f"copy {r.p(['config/dev.yaml', 'the .env.example', 'docs/template.md'])} to {r.p(['config/staging.yaml', '.env', 'docs/new-page.md'])} and show me the diff"
    ),
    lambda r: (
        f"list every file in {r.p(['the repo', 'src/', 'this directory'])} including hidden ones, sorted by size"
    ),
    lambda r: (
        f"find any file with {r.p(['report', 'backup', 'invoice', 'draft'])} in its name and tell me where it is"
    ),
    lambda r: (
        f"delete the {r.p(['empty directories', 'build artifacts', '.pyc files', 'node_modules folders'])} under {r.p(['src/', 'the repo', 'packages/'])}"
    ),
    # Round 3: file operations in everyday words, around documents whose names speak of
    # writing, maths or analysis; the work is still moving files around.
    lambda r: (
        f"{r.p(['I am wrapping up the release notes work', 'before I start on the proof write-up', 'for the analysis I am doing later'])}, can you put a copy of {r.p(PROSE_PATHS + DOC_PATHS)} in {r.p(['archive/', 'docs/old/', 'a new folder called backup'])}"
    ),
    lambda r: (
        f"rename {r.p(DOC_PATHS)} to something with today's date in it and move it under {r.p(['docs/archive/', 'old/', 'notes/done/'])}"
    ),
    lambda r: (
        f"which files in {r.p(['docs/', 'notes/', 'the repo', 'content/'])} mention {r.p(['the pricing essay', 'the theorem', 'the marketing plan', 'the Q3 analysis'])}? just the paths"
    ),
    lambda r: (
        f"make a folder {r.p(['drafts/', 'writing/', 'analysis/'])} and move all the .md files from the root into it, then show me the tree"
    ),
]
TOOLS_AGENT: list[AskTpl] = [
    lambda r: (lambda c: f"{c[0]} and tell me {c[1]}")(r.p(COMMANDS)),
    lambda r: (lambda c: f"can you {c[0]}? I just want to know {c[1]}")(r.p(COMMANDS)),
    lambda r: (lambda c: f"quick one: {c[0]}, then report {c[1]}. no code changes")(r.p(COMMANDS)),
    lambda r: (lambda c: f"{c[0]} - I need to know {c[1]} before standup")(r.p(COMMANDS)),
    lambda r: (lambda c: f"pls {c[0]} and just give me {c[1]}, don't fix anything yet")(r.p(COMMANDS)),
    lambda r: (lambda c: f"{c[1]}? {c[0]} to find out")(r.p(COMMANDS)),
    lambda r: r.p(FILE_OPS)(r),
    lambda r: f"{r.p(['please ', 'can you ', '', 'go ahead and '])}{r.p(FILE_OPS)(r)}",
]
INSTRUCTION_AGENT: list[AskTpl] = [
    lambda r: (
        f"reply with only the {r.p(['file names', 'function names', 'environment variables', 'CLI flags'])} in {r.p(PATHS)}, one per line, nothing else"
    ),
    lambda r: (
        f"reformat {r.p(PROSE_PATHS)} so each entry starts with its component in brackets; don't change any wording"
    ),
    lambda r: (
        f"summarise {r.p(DOC_PATHS + PROSE_PATHS)} in exactly {r.p(['three', 'five'])} bullets, each under {r.p(['12', '15'])} words"
    ),
    lambda r: (
        f"convert the table in {r.p(DOC_PATHS)} to {r.p(['JSON', 'YAML', 'CSV'])}, same order, values unchanged. output only that"
    ),
    lambda r: (
        f"answer yes or no only: does {r.p(PATHS)} {r.p(['have tests', 'import requests', 'handle timeouts', 'log the user id'])}?"
    ),
    lambda r: (
        f"rewrite the docstring of {r.p(FUNCS)} in Google style with Args and Returns. don't touch the code"
    ),
]
AGENT_TEMPLATES: dict[str, list[AskTpl]] = {
    "coding": CODING_AGENT,
    "tools": TOOLS_AGENT,
    "instruction": INSTRUCTION_AGENT,
    "math": MATH_AGENT,
    "reasoning": REASONING_AGENT,
    "writing": WRITING_AGENT,
}
