"""The figures of bench/fleet.py: TTFT, shares, spills, the cache report and route flips.

Plain functions over the turns a mode produced (:class:`Turn`) and what the servers said
at its end (the proxy's /metrics and /readyz, each box's /metrics and session visits).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

PRICES = {"cloud": (1.25, 10.0), "claude": (3.0, 15.0)}  # $ per million input / output tokens
BOX_PREFILL_TPS = 700.0  # the simulated Spark's true rate, for re-prefill seconds


@dataclass
class Turn:
    session: int
    number: int  # the turn's place in its session
    kind: str
    asked: str  # "local" | "cloud" (a team rule on a header) | "auto" (the classifier decides)
    ideal: int = 0  # tokens the box could have had cached, had the session stayed on one box
    sent_at: float = 0.0  # simulated seconds since the run began
    body_bytes: int = 0
    status: int = 0
    route: str = ""
    fallback: bool = False
    ttft: float | None = None  # simulated seconds
    prompt: int = 0
    cached: int = 0
    completion: int = 0


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def counter(metrics: str, name: str, label: str = "") -> dict[str, float]:
    """``name``'s samples in a Prometheus text, summed by ``label``'s value ("" when not asked)."""
    out: dict[str, float] = {}
    for match in re.finditer(rf"^{re.escape(name)}(\{{[^}}]*\}})? (\S+)$", metrics, re.M):
        found = re.search(rf'{label}="([^"]*)"', match[1] or "") if label else None
        key = found[1] if found else ""
        out[key] = out.get(key, 0.0) + float(match[2])
    return out


def cache_report(local: list[Turn], boxes: list[dict[str, Any]]) -> dict[str, Any]:
    """The local prefix-cache hit ratio against its ideal, each box's share, and session moves.

    ``boxes``: per box ``{"prompt": tokens, "visits": [(session, time)]}``."""
    prompt = sum(t.prompt for t in local) or 1
    by_session: dict[int, list[tuple[float, int]]] = {}
    for number, box in enumerate(boxes):
        for session, at in box["visits"]:
            by_session.setdefault(session, []).append((at, number))
    moves = moved = 0
    for visits in by_session.values():
        order = [number for _, number in sorted(visits)]
        changes = sum(a != b for a, b in zip(order, order[1:], strict=False))
        moves += changes
        moved += changes > 0
    box_prompt = sum(b["prompt"] for b in boxes) or 1
    return {
        "hit": sum(t.cached for t in local) / prompt,
        "ideal": sum(min(t.ideal, t.prompt) for t in local) / prompt,
        "box_shares": [b["prompt"] / box_prompt for b in boxes],
        "moved": moved,
        "moves": moves,
        "sessions": len(by_session),
    }


def flips(turns: list[Turn]) -> dict[str, Any]:
    """Moves between the box and the cloud by consecutive answered turns of a session, and their cost:
    a move into the cloud its prompt at the cloud's input price, a move back onto the box
    the prefill of what the box did not have cached (at the box's 700 tokens/s)."""
    by_session: dict[int, list[Turn]] = {}
    for t in sorted(turns, key=lambda t: (t.session, t.number)):
        if t.status == 200 and t.route:
            by_session.setdefault(t.session, []).append(t)
    out = {"flips": 0, "to_cloud_usd": 0.0, "back_prefill_s": 0.0}
    for session in by_session.values():
        for before, turn in zip(session, session[1:], strict=False):
            if (before.route == "local") == (turn.route == "local"):
                continue  # one route: the switch-cost rule weighs changes of route, not of cloud backend
            out["flips"] += 1
            if turn.route == "local":
                out["back_prefill_s"] += (turn.prompt - turn.cached) / BOX_PREFILL_TPS
            else:
                out["to_cloud_usd"] += turn.prompt * PRICES.get(turn.route, PRICES["cloud"])[0] / 1e6
    return out


def summarise(name: str, turns: list[Turn], servers: dict[str, Any], duration: float) -> dict[str, Any]:
    metrics, ready, boxes = servers["metrics"], servers["ready"], servers["boxes"]
    ok = [t for t in turns if t.status == 200 and t.ttft is not None]
    local = [t for t in ok if t.route == "local"]
    spend = sum(
        (t.prompt * PRICES[t.route][0] + t.completion * PRICES[t.route][1]) / 1e6
        for t in ok
        if t.route in PRICES
    )
    endpoints = ready["backends"]["local"]["endpoints"]
    learned = [e.get("admission") or {} for e in endpoints]
    ratio = (learned[0] or {}).get("bytes_per_token")
    errors = [abs(t.body_bytes / ratio - t.prompt) / t.prompt for t in local if ratio and t.prompt]
    local_ttft = [t.ttft for t in local if t.ttft is not None]
    all_ttft = [t.ttft for t in ok if t.ttft is not None]
    return {
        "mode": name,
        "turns": len(turns),
        "failed": len(turns) - len(ok),
        "duration_s": duration,
        "local_p50": pct(local_ttft, 0.5),
        "local_p95": pct(local_ttft, 0.95),
        "all_p50": pct(all_ttft, 0.5),
        "all_p95": pct(all_ttft, 0.95),
        "local_share": sum(t.prompt for t in local) / (sum(t.prompt for t in ok) or 1),
        "cache": cache_report(local, boxes),
        "flips": flips(turns),
        "switch_cost": int(counter(metrics, "offload_decisions_total", "reason").get("switch_cost", 0)),
        "session_moves": int(sum(counter(metrics, "offload_session_moves_total").values())),
        "spills": {k: int(v) for k, v in counter(metrics, "offload_fallbacks_total", "reason").items() if v},
        "abandoned": sum(int(b["state"].get("cancelled", 0)) for b in boxes),
        "preemptions": sum(int(b["state"].get("preemptions", 0)) for b in boxes),
        "cloud_spend": spend,
        "admission": learned,
        "estimate_error_p50": pct(errors, 0.5),
        "estimate_error_p95": pct(errors, 0.95),
    }


ROWS = [
    ("turns (failed)", lambda r: f"{r['turns']} ({r['failed']})"),
    ("simulated duration s", lambda r: f"{r['duration_s']:.0f}"),
    ("TTFT local p50 s", lambda r: f"{r['local_p50']:.1f}"),
    ("TTFT local p95 s", lambda r: f"{r['local_p95']:.1f}"),
    ("TTFT all turns p50 s", lambda r: f"{r['all_p50']:.1f}"),
    ("TTFT all turns p95 s", lambda r: f"{r['all_p95']:.1f}"),
    ("local share of prompt tok", lambda r: f"{r['local_share']:.1%}"),
    ("local prefix-cache hits", lambda r: f"{r['cache']['hit']:.1%}"),
    ("ideal hits, same traffic", lambda r: f"{r['cache']['ideal']:.1%}"),
    ("box shares of local prompt", lambda r: " / ".join(f"{s:.0%}" for s in r["cache"]["box_shares"])),
    ("sessions moved (moves)", lambda r: f"{r['cache']['moved']} ({r['cache']['moves']})"),
    ("proxy's session moves", lambda r: str(r["session_moves"])),
    ("route flips in sessions", lambda r: str(r["flips"]["flips"])),
    ("  flips into cloud $", lambda r: f"{r['flips']['to_cloud_usd']:.2f}"),
    ("  flips back, re-prefill s", lambda r: f"{r['flips']['back_prefill_s']:.0f}"),
    ("flips held (switch_cost)", lambda r: str(r["switch_cost"])),
    ("abandoned on the box", lambda r: str(r["abandoned"])),
    ("box preemptions", lambda r: str(r["preemptions"])),
    ("cloud spend $", lambda r: f"{r['cloud_spend']:.2f}"),
]


def show(results: list[dict[str, Any]], scale: float) -> None:
    print(f"{'':28}" + "".join(f"{r['mode']:>16}" for r in results))
    for label, cell in ROWS:
        print(f"{label:28}" + "".join(f"{cell(r):>16}" for r in results))
    for r in results:
        spills = ", ".join(f"{k} {v}" for k, v in sorted(r["spills"].items())) or "none"
        print(f"spills by reason ({r['mode']}): {spills}")
    first, last = results[0], results[-1]
    print(f"all-turn p95, {last['mode']} / {first['mode']}: {last['all_p95'] / first['all_p95']:.2f}")
    for r in results:
        rates = [a for a in r["admission"] if a]
        if not rates:
            continue
        prefill = ", ".join(f"{float(a['prefill_tps']) / scale:.0f}" for a in rates)
        decode = ", ".join(f"{float(a['decode_tps']) / scale:.1f}" for a in rates)
        print(
            f"learned by {r['mode']}: prefill {prefill} tok/s (box: 700), decode {decode} tok/s (box: 20), "
            f"{rates[0]['bytes_per_token']} bytes a token; prompt estimate error "
            f"p50 {r['estimate_error_p50']:.1%}, p95 {r['estimate_error_p95']:.1%}"
        )
