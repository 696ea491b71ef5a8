"""``offload gate``: run | import | show | propose.

offload gate run --suite PATH... --backend NAME [--arm NAME] [--concurrency N]
                 [--limit N] [--stream] [--allow-code] [--config PATH]
offload gate import FILE --backend NAME [--arm NAME] [--config PATH]
offload gate show [--format table|json] [--config PATH]
offload gate propose [--format yaml|json] [--config PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import orjson

from router.config import Config, load_config
from router.gate import propose as proposing
from router.gate import show as showing
from router.gate import stage1, store
from router.gate.runner import Progress, TargetError, new_run_id, resolve_target, run_cases
from router.gate.sandbox import Limits, Sandbox, SandboxError
from router.gate.suites import Case, SuiteError, load
from router.ledger.db import SchemaOutOfDate, ensure_schema
from router.ledger.prices import cost, rates

_CONFIG_HELP = "config file (default: $OFFLOAD_CONFIG, else ./config/router.yaml)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="offload gate", description="The route map from evidence.")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "run", help="run smf-bench-format suites through the proxy to one backend or arm"
    )
    run.add_argument("--suite", nargs="+", required=True, metavar="PATH", help="suite files or folders")
    _target_options(run)
    run.add_argument("--concurrency", type=_positive, default=4, help="cases in flight at once (default 4)")
    run.add_argument("--limit", type=_positive, help="at most N cases per category (a quick check)")
    run.add_argument("--stream", action="store_true", help="ask for streamed answers")
    run.add_argument(
        "--allow-code", action="store_true", help="run model-written code (unit_test cases) in the sandbox"
    )
    imported = commands.add_parser("import", help="a smf-bench stage-1 result file as a run")
    imported.add_argument("file", type=Path)
    _target_options(imported)
    shown = commands.add_parser(
        "show", help="the evidence: per category and difficulty, with Wilson intervals"
    )
    shown.add_argument("--format", choices=("table", "json"), default="table")
    shown.add_argument("--config", help=_CONFIG_HELP)
    proposed = commands.add_parser("propose", help="a routing.intents from the evidence, with a diff")
    proposed.add_argument("--format", choices=("yaml", "json"), default="yaml")
    proposed.add_argument("--config", help=_CONFIG_HELP)
    opts = parser.parse_args(argv)
    config = load_config(opts.config)
    if not config.database.enabled:
        print("offload gate: runs are stored in the database, and database.enabled is false", file=sys.stderr)
        return 2
    try:
        return int(_COMMANDS[opts.command](config, opts))
    except (SuiteError, TargetError, SandboxError, stage1.Stage1Error, SchemaOutOfDate) as exc:
        print(f"offload gate: {exc}", file=sys.stderr)
        return 2


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return int(text)


def _target_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", required=True, help="the backend that answers (a name from backends:)")
    parser.add_argument("--arm", help="a variant of that backend (variant_of), e.g. thinking on")
    parser.add_argument("--config", help=_CONFIG_HELP)


def _limited(cases: list[Case], limit: int | None) -> list[Case]:
    if limit is None:
        return cases
    taken: dict[str, int] = {}
    out = []
    for case in cases:
        taken[case.category] = taken.get(case.category, 0) + 1
        if taken[case.category] <= limit:
            out.append(case)
    return out


def _run(config: Config, opts: argparse.Namespace) -> int:
    target = resolve_target(config, opts.backend, opts.arm)
    ensure_schema(config.database.url)  # a stale PostgreSQL fails now, not after the run
    loaded = load(opts.suite)
    if loaded.skipped:
        left = ", ".join(f"{n} {evaluator}" for evaluator, n in sorted(loaded.skipped.items()))
        print(f"skipped cases the gate does not grade: {left}", file=sys.stderr)
    cases = _limited(loaded.cases, opts.limit)
    code = [c for c in cases if c.runs_code]
    sandbox = None
    if code and not opts.allow_code:
        suites = ", ".join(sorted({c.suite for c in code}))
        raise SuiteError(
            f"{len(code)} cases ({suites}) are graded by running the model's code: pass --allow-code "
            "to run them in the sandbox (docs/gate.md says what it contains), or leave those suites out"
        )
    if code:
        sandbox = Sandbox(Limits(timeout_s=config.gate.case_timeout_s), config.gate.sandbox_python)
        print(
            f"sandbox: {sandbox.containment() or 'resource limits only (see docs/gate.md)'}", file=sys.stderr
        )
    run_id, started, clock = new_run_id(), datetime.now(UTC), time.perf_counter()
    print(
        f"gate run {run_id}: {len(cases)} cases to {target.name} ({target.route}, {target.model})",
        file=sys.stderr,
    )
    progress = Progress(len(cases))
    results = asyncio.run(
        run_cases(
            config, target, cases, run_id, concurrency=opts.concurrency, stream=opts.stream,
            run_code=sandbox.run if sandbox else None, on_result=progress.update,
        )
    )  # fmt: skip
    run = store.Run(
        id=run_id,
        started_at=started,
        source="run",
        target=target.name,
        backend=target.backend,
        route=target.route,
        model=target.model,
        recipe_hash=target.recipe_hash,
        suites=tuple(str(Path(p)) for p in opts.suite),
        finished_at=datetime.now(UTC),
        wall_time_s=round(time.perf_counter() - clock, 3),
    )
    store.save(config.database.url, run, results)
    prompt, completion, cached = store.tokens(config.database.url, run_id)
    price = rates(config.backends[target.name])
    print(
        f"stored run {run_id}: {run.wall_time_s:.0f} s, {prompt:,} prompt and {completion:,} completion tokens"
        f" (${cost(price, prompt, completion, cached):,.2f} at {target.name}'s price)."
        " Next: offload gate show, then offload gate propose"
    )
    return 0


def _import(config: Config, opts: argparse.Namespace) -> int:
    target = resolve_target(config, opts.backend, opts.arm)
    run, results = stage1.read(opts.file, target.name, target.backend, target.route, target.recipe_hash)
    for known in store.runs(config.database.url, limit=1000):
        if (known.target, known.label, known.started_at) == (
            run.target,
            run.label,
            run.started_at.replace(tzinfo=known.started_at.tzinfo),
        ):
            raise stage1.Stage1Error(f"{opts.file}: already imported for {run.target} as run {known.id}")
    store.save(config.database.url, run, results)
    if run.model != target.model:
        print(f"note: the file's model is {run.model}; {target.name} serves {target.model}", file=sys.stderr)
    print(f"imported {len(results)} results as run {run.id} for {target.name} ({run.label})")
    return 0


def _show(config: Config, opts: argparse.Namespace) -> int:
    evidence = store.evidence(config.database.url)
    if opts.format == "json":
        print(orjson.dumps(showing.as_json(config, evidence), option=orjson.OPT_INDENT_2).decode())
    else:
        print(showing.render(config, evidence), end="")
    return 0


def _propose(config: Config, opts: argparse.Namespace) -> int:
    proposal = proposing.propose(config, store.evidence(config.database.url))
    if opts.format == "json":
        print(orjson.dumps(proposing.as_json(config, proposal), option=orjson.OPT_INDENT_2).decode())
    else:
        print(proposing.render_yaml(config, proposal), end="")
    return 0


_COMMANDS = {"run": _run, "import": _import, "show": _show, "propose": _propose}
