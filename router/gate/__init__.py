"""``offload gate``: the route map from evidence.

A capability run on the team's own box (smf-bench-format cases sent through the proxy's
own forwarding to one backend or arm, each answer graded) becomes stored evidence, and the
evidence becomes a proposed ``routing.intents`` table. Re-run it after every recipe or
model change: the stored recipe hash says when the evidence no longer matches the config.

    cases      suites.py       smf-bench's case format, read and checked
    grading    graders.py      regex_match, text_match, text_contains, structural_count,
                               tool_call, programmatic (unit_test)
    code       sandbox.py      model-written code, contained (only with --allow-code)
    sending    runner.py       the cases through the proxy app, in process
    evidence   store.py        gate_runs and gate_results in SQL; fingerprint.py, stage1.py
    reading    stats.py, show.py, propose.py
    command    cli.py          offload gate run | import | show | propose
"""
