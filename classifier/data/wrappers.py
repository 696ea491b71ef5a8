"""Real agents' request formats, to wrap a generated task in (group 2 of issue 18).

Why: the same ask arrives wrapped very differently by each agent, and the classifier must decide
by the ask, not by the wrapper. Training on every intent inside every wrapper teaches it that
the wrapper's words (its system prompt, reminders, environment blocks, tool list) say nothing
about the task. The formats follow what the agents send, in the chat-shaped view the router
hands the classifier (system/developer turns kept, tool results as ``role: tool``):

- Claude Code: a recorded 2.1 request (system blocks, ``<system-reminder>`` with CLAUDE.md and
  the date, a mid-conversation system turn) and the older layout (CLAUDE.md reminder, todo
  reminder after the ask);
- Codex CLI: developer turns, AGENTS.md and ``<environment_context>`` user turns, then the ask;
- Cline and Roo: ``<task>`` around the ask, ``<environment_details>``, tools described in the
  system prompt as XML and no ``tools`` field; tool results come back as user turns;
- aider: its coders' system prompts, the files and repo map as user turns, the edit-format
  rules as a trailing system turn or appended to the user turn (aider's PyPI package);
- OpenHands: its system prompt sections and ``<EXTRA_INFO>`` after the ask;
- Continue: context items as fenced parts before the ask, its edit prompt, and its
  fill-in-the-middle templates (``@continuedev/core``);
- retrieval prompts with the question after long retrieved context, and text-part lists.

The contents (repositories, CLAUDE.md and AGENTS.md files, documents) are this module's own,
written separately from the hand-written evaluation sets.
"""

from __future__ import annotations

from typing import Any

from classifier.data.pools import ALL_CODE, COMPANIES, PATHS, TOOLSETS
from classifier.data.rand import Rand

Body = dict[str, Any]
Msg = dict[str, Any]


def _fn(name: str, desc: str) -> Msg:
    return {
        "type": "function",
        "function": {"name": name, "description": desc, "parameters": {"type": "object"}},
    }


def _anthropic_tool(name: str, desc: str) -> Msg:
    return {"name": name, "description": desc, "input_schema": {"type": "object", "properties": {}}}


# ------------------------------------------------------------------------------ agent contents

REPOS = [
    (
        "/home/jonas/code/fleetctl",
        "Go 1.23 CLI for managing delivery vans. `go test ./...`, `golangci-lint run`. Errors are wrapped with %w. No global state.",
    ),
    (
        "/Users/priya/dev/bookshelf",
        "Django 5 app for a small library. Run `pytest -q`. Templates in `templates/`, HTMX for partials. Keep views thin, logic in `services.py`.",
    ),
    (
        "/srv/app/harbor-api",
        "FastAPI + SQLModel. `uv run pytest`. Migrations with alembic. All money in integer cents. Docstrings on public functions.",
    ),
    (
        "/home/mei/code/kite-dashboard",
        "React 19 + Vite + TypeScript strict. `pnpm test`, `pnpm lint`. Components are function components with named exports. Copy lives in `src/copy/*.md`.",
    ),
    (
        "/workspace/orbit-sim",
        "Rust workspace, physics simulation. `cargo test --workspace`, `cargo clippy -- -D warnings`. Derivations go in docs/, not comments.",
    ),
    (
        "/home/ana/projects/solace-site",
        "Astro marketing site for Solace Sleep. Brand voice in docs/brand.md: calm, kind, never pushy. `npm run build` must pass.",
    ),
]
GIT_STATUS = [" M src/main.rs", " M README.md", "?? notes.txt", " M app/views.py", " M package.json"]
# The tool lists the agents send with every request, whatever the user asks (round 2): names and
# the head of each description as recorded (tests/data/agent_requests) or as the packages ship
# them. The classifier reads a tool's name and the first 200 characters of its description, so
# that is what is kept. With the f13 corpus's short lists, a long real list was seen only with
# tool requests, and inside an agent it pulled maths and writing asks towards ``tools``.
CC_TOOLS_NEW = [
    _anthropic_tool(name, desc)
    for name, desc in (
        (
            "Agent",
            "Launch a new agent to handle complex, multi-step tasks. Each agent type has specific capabilities and tools available to it.",
        ),
        (
            "Bash",
            "Executes a bash command and returns its output.\n\n- Working directory persists between calls, but prefer absolute paths.",
        ),
        (
            "CronCreate",
            "Schedule a prompt to be enqueued at a future time. Use for both recurring schedules and one-shot reminders.",
        ),
        ("CronDelete", "Cancel a cron job previously scheduled with CronCreate."),
        ("CronList", "List all cron jobs scheduled via CronCreate, both durable and session-only."),
        (
            "Edit",
            "Performs exact string replacement in a file.\n\n- You must Read the file in this conversation before editing, or the call will fail.",
        ),
        ("EnterWorktree", "Use this tool ONLY when explicitly instructed to work in a worktree."),
        (
            "ExitWorktree",
            "Exit a worktree session created by EnterWorktree and return the session to the original working directory.",
        ),
        ("NotebookEdit", "Replaces, inserts, or deletes a single cell in a Jupyter notebook (.ipynb file)."),
        (
            "Read",
            "Reads a file from the local filesystem.\n\n- `file_path` must be an absolute path.\n- Reads up to 2000 lines by default.",
        ),
        ("ReportFindings", "Report code-review findings as a typed list so the host UI can render them."),
        ("ScheduleWakeup", "Schedule when to resume work in /loop dynamic mode."),
        ("SendMessage", "Send a message to another agent."),
        (
            "Skill",
            "Execute a skill within the main conversation\n\nWhen users ask you to perform tasks, check if any of the available skills match.",
        ),
        (
            "TaskCreate",
            "Use this tool to create a structured task list for your current coding session. This helps you track progress, organize complex tasks.",
        ),
        ("TaskGet", "Use this tool to retrieve a task by its ID from the task list."),
        ("TaskList", "Use this tool to list all tasks in the task list."),
        ("TaskOutput", "DEPRECATED: Background tasks return their output file path in the tool result."),
        ("TaskStop", "Stops a running background task by its ID."),
        ("TaskUpdate", "Use this tool to update a task in the task list."),
        (
            "WebFetch",
            "Fetches a URL, converts the page to markdown, and answers `prompt` against it using a small fast model.",
        ),
        ("WebSearch", "Search the web. Returns result blocks with titles and URLs."),
        ("Workflow", "Execute a workflow script that orchestrates multiple subagents deterministically."),
        ("Write", "Writes a file to the local filesystem, overwriting if one exists."),
    )
]
CC_TOOLS_OLD = [
    _anthropic_tool(name, desc)
    for name, desc in (
        ("Task", "Launch a new agent to handle complex, multi-step tasks autonomously."),
        (
            "Bash",
            "Executes a given bash command in a persistent shell session with optional timeout, ensuring proper handling and security measures.",
        ),
        (
            "Glob",
            '- Fast file pattern matching tool that works with any codebase size\n- Supports glob patterns like "**/*.js"',
        ),
        (
            "Grep",
            "A powerful search tool built on ripgrep\n\n  Usage:\n  - ALWAYS use Grep for search tasks.",
        ),
        ("LS", "Lists files and directories in a given path."),
        (
            "ExitPlanMode",
            "Use this tool when you are in plan mode and have finished presenting your plan and are ready to code.",
        ),
        (
            "Read",
            "Reads a file from the local filesystem. You can access any file directly by using this tool.",
        ),
        ("Edit", "Performs exact string replacements in files."),
        ("MultiEdit", "This is a tool for making multiple edits to a single file in one operation."),
        ("Write", "Writes a file to the local filesystem."),
        (
            "NotebookEdit",
            "Completely replaces the contents of a specific cell in a Jupyter notebook (.ipynb file) with new source.",
        ),
        ("WebFetch", "- Fetches content from a specified URL and processes it using an AI model"),
        (
            "TodoWrite",
            "Use this tool to create and manage a structured task list for your current coding session.",
        ),
        ("WebSearch", "- Allows Claude to search the web and use the results to inform responses"),
        ("BashOutput", "- Retrieves output from a running or completed background bash shell"),
        ("KillShell", "- Kills a running background bash shell by its ID"),
    )
]
CC_SYSTEM_NEW = [
    {"type": "text", "text": "You are a Claude agent, built on Anthropic's Claude Agent SDK."},
    {
        "type": "text",
        "text": "\nYou are an interactive agent that helps users with software engineering tasks. Use the "
        "instructions below and the tools available to you to assist the user.\n\nIMPORTANT: Assist with "
        "authorized security testing, defensive security, CTF challenges, and educational contexts.",
    },
]
CC_SYSTEM_OLD = (
    "You are Claude Code, Anthropic's official CLI for Claude.\nYou are an interactive CLI tool that helps users "
    "with software engineering tasks. Use the instructions below and the tools available to you to assist the user."
    "\n\n# Tone and style\nYou should be concise, direct, and to the point."
)
CC_MID_SYSTEM = (
    "Available agent types for the Agent tool:\n- claude: Catch-all for any task that doesn't fit a more specific "
    "agent. (Tools: *)\n- Explore: Read-only search agent for broad fan-out searches.\n- Plan: Software architect "
    "agent for designing implementation plans.\n\nThe following skills are available for use with the Skill tool:\n"
    "- update-config: Use this skill to configure the Claude Code harness via settings.json."
)
CC_TODO = (
    "<system-reminder>\nThis is a reminder that your todo list is currently empty. DO NOT mention this to the user "
    "explicitly because they are already aware.\n</system-reminder>"
)
CODEX_DEV_NEW = (
    "You are a coding agent running in the Codex CLI, a terminal-based coding assistant. Codex CLI is an open source "
    "project led by OpenAI. You are expected to be precise, safe, and helpful.\n\nYour capabilities:\n\n- Receive "
    "user prompts and other context provided by the harness, such as files in the workspace."
)
CODEX_INSTRUCTIONS_OLD = (
    "You are Codex, based on GPT-5. You are running as a coding agent in the Codex CLI on a user's computer.\n\n"
    "## General\n\n- The arguments to `shell` will be passed to execvp()."
)
CODEX_PERMISSIONS = (
    "<permissions instructions>\nFilesystem sandboxing defines which files can be read or written. `sandbox_mode` is "
    "`workspace-write`. Network access is restricted.\n</permissions instructions>"
)
CODEX_TOOLS = [
    _fn("exec_command", "Runs a command in a PTY, returning output or a session ID for ongoing interaction."),
    _fn("write_stdin", "Writes characters to an existing unified exec session and returns recent output."),
    _fn(
        "request_user_input",
        "Request user input for one to three short questions and wait for the response. This tool is only available in Plan mode.",
    ),
    _fn("view_image", "View a local image file from the filesystem when visual inspection is needed."),
    _fn("multi_agent_v1", "Tools for spawning and managing sub-agents."),
    _fn(
        "get_goal",
        "Get the current goal for this thread, including status, budgets, token and elapsed-time usage.",
    ),
    _fn(
        "create_goal",
        "Create a goal only when explicitly requested by the user or system/developer instructions.",
    ),
    _fn("update_goal", "Update the existing goal."),
    {"type": "web_search"},
]
CODEX_TOOLS_OLD = [
    _fn("shell", "Runs a shell command and returns its output."),
    _fn(
        "update_plan",
        "Updates the task plan.\nProvide an optional explanation and a list of plan items, each with a step and status.",
    ),
    {
        "type": "custom",
        "name": "apply_patch",
        "description": "Use the `apply_patch` tool to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.",
    },
    _fn("view_image", "Attach a local image (by filesystem path) to the conversation context for this turn."),
]
CLINE_SYSTEM = (
    "You are Cline, a highly skilled software engineer with extensive knowledge in many programming languages, "
    "frameworks, design patterns, and best practices.\n\n====\n\nTOOL USE\n\nYou have access to a set of tools that "
    "are executed upon the user's approval.\n\n# Tool Use Formatting\n\nTool use is formatted using XML-style tags."
    "\n\n<read_file>\n<path>src/main.js</path>\n</read_file>"
)
ROO_ROLES = [
    "You are Roo, a highly skilled software engineer with extensive knowledge in many programming languages, frameworks, design patterns, and best practices.",
    "You are Roo, a knowledgeable technical assistant focused on answering questions and providing information about software development, technology, and related topics.",
    "You are Roo, an experienced technical leader who is inquisitive and an excellent planner.",
    "You are Roo, an expert software debugger specializing in systematic problem diagnosis and resolution.",
]
AIDER_SYSTEMS = [
    "Act as an expert software developer.\nAlways use best practices when coding.\nRespect and use existing conventions, libraries, etc that are already present in the code base.\nTake requests for changes to the supplied code.\nIf the request is ambiguous, ask questions.",
    "Act as an expert code analyst.\nAnswer questions about the supplied code.\nAlways reply to the user in the same language they are using.",
    "Act as an expert software developer.\nTake requests for changes to the supplied code.\nIf the request is ambiguous, ask questions.\n\nOnce you understand the request you MUST:\n1. Determine if any code changes are needed.",
]
AIDER_REMINDERS = [
    "# *SEARCH/REPLACE block* Rules:\n\nEvery *SEARCH/REPLACE block* must use this format:\n1. The *FULL* file path alone on a line, verbatim.\n2. The opening fence and code language, eg: ```python\n3. The start of search block: <<<<<<< SEARCH",
    "# File editing rules:\n\nReturn edits similar to unified diffs that `diff -U0` would produce.\n\nMake sure you include the first 2 lines with the file paths.",
    "To suggest changes to a file you MUST return the entire content of the updated file.\nYou MUST use this *file listing* format:",
]
OPENHANDS_SYSTEM = (
    "You are OpenHands agent, a helpful AI assistant that can interact with a computer to solve tasks.\n\n<ROLE>\n"
    "* Your primary role is to assist users by executing commands, modifying code, and solving technical problems "
    "effectively.\n</ROLE>"
)
OPENHANDS_TOOLS = [
    _fn("terminal", "Execute a bash command in the terminal within a persistent shell session."),
    _fn("file_editor", "Custom editing tool for viewing, creating and editing files in plain-text format"),
    _fn(
        "task_tracker",
        "This tool provides structured task management capabilities for development workflows.",
    ),
    _fn(
        "think",
        "Use the tool to think about something. It will not obtain new information or make any changes to the repository.",
    ),
    _fn("finish", "Signals the completion of the current task or conversation."),
    _fn(
        "browser",
        "Interact with the browser using Python code. Use it ONLY when you need to interact with a webpage.",
    ),
    _fn("fetch", "Fetches a URL from the internet and optionally extracts its contents as markdown."),
]
CONTINUE_SYSTEM = (
    "<important_rules>\n  You are in chat mode.\n\n  If the user asks to make changes to files offer that they can "
    "use the Apply Button on the code block, or switch to Agent Mode.\n</important_rules>"
)
# Continue's agent mode sends its built-in tools (``@continuedev/core``).
CONTINUE_TOOLS = [
    _fn("read_file", "Use this tool if you need to view the contents of an existing file."),
    _fn(
        "create_new_file", "Create a new file. Only use this when a file doesn't exist and should be created"
    ),
    _fn("run_terminal_command", "Run a terminal command in the current directory."),
    _fn("grep_search", "Perform a search over the repository using ripgrep."),
    _fn("file_glob_search", "Search for files recursively in the project using glob patterns."),
    _fn("search_web", "Performs a web search, returning top results."),
    _fn("view_diff", "View the current diff of working changes"),
    _fn("read_currently_open_file", "Read the currently open file in the IDE."),
    _fn("ls", "List files and folders in a given directory"),
    _fn(
        "fetch_url_content",
        "Can be used to view the contents of a website using a URL. Do NOT use this for files.",
    ),
]
DOCS = [
    (
        "Onboarding guide",
        "New hires get a laptop on day one and a buddy for the first month. Accounts for email, chat and the wiki are created by IT before the start date. Expenses are filed in the finance portal within 30 days.",
    ),
    (
        "Warehouse SOP 12",
        "Pallets are scanned on arrival, labelled with the bay number and stored within two hours. Damaged goods go to bay Z and are reported to the supplier the same day.",
    ),
    (
        "API guide: webhooks",
        "Webhooks are retried with exponential backoff for 24 hours. Each delivery carries an HMAC-SHA256 signature in the X-Signature header. Respond with 2xx within 10 seconds.",
    ),
    (
        "Course notes: probability, week 5",
        "For independent events the probability of both is the product. The expected value is linear, even for dependent variables. Variance adds only for independent variables.",
    ),
    (
        "Brand book",
        "We write like a friend who knows the subject: warm, specific, never pushy. We avoid superlatives and exclamation marks. Headlines are short; body copy tells a small story.",
    ),
    (
        "Quarterly report Q2",
        "Revenue grew 14% to 38.2 million, gross margin was 58%, and the number of enterprise customers rose from 112 to 131. Churn in the SMB segment rose to 3.4%.",
    ),
    (
        "Product sheet",
        "The thermostat learns the household's schedule in a week, supports Matter and works offline. Installation takes 20 minutes; the app shows savings per month.",
    ),
]


def _file(r: Rand) -> tuple[str, str]:
    return r.p(PATHS), r.p(ALL_CODE)


def _env_details(r: Rand, cwd: str, roo: bool) -> str:
    path, _ = _file(r)
    mode = (
        "# Current Mode\n<slug>code</slug>\n<name>💻 Code</name>"
        if roo
        else "# Context Window Usage\n0 / 200K tokens used (0%)\n\n# Current Mode\n"
        + r.p(["ACT MODE", "PLAN MODE"])
    )
    return (
        f"<environment_details>\n# VSCode Visible Files\n{path}\n\n# VSCode Open Tabs\n{path}\n{r.p(PATHS)}\n\n"
        f"# Current Time\n11/{r.n(1, 28)}/2026, {r.n(1, 12)}:{r.n(10, 59)}:00 PM (UTC)\n\n"
        f"# Current Working Directory ({cwd}) Files\n{path}\n{r.p(PATHS)}\nREADME.md\n\n{mode}\n</environment_details>"
    )


def _claude_md(r: Rand, cwd: str, notes: str, new: bool) -> str:
    date = f"# currentDate\nToday's date is 2026-11-{r.n(10, 28)}.\n" if new else ""
    return (
        "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n# claudeMd\n"
        "Codebase and user instructions are shown below. Be sure to adhere to these instructions.\n\n"
        f"Contents of {cwd}/CLAUDE.md (project instructions, checked into the codebase):\n\n{notes}\n{date}\n"
        "      IMPORTANT: this context may or may not be relevant to your tasks. You should not respond to this "
        "context unless it is highly relevant to your task.\n</system-reminder>\n"
    )


LOOP_RESULTS = [
    "ok",
    "3 files changed",
    "PASSED 12 tests",
    "exit code 1\nFAILED test_parse",
    "README.md\nsrc/\ntests/",
    "     1\tdef main():\n     2\t    run()\n",
    "src/app.py:14: TODO handle timeouts\nsrc/db.py:88: TODO retry",
    "On branch main\nnothing to commit, working tree clean",
    "Chunk ID: 4f1a\nWall time: 0.0123 seconds\nProcess exited with code 0\nOutput:\nok\n",
]


def _loop(r: Rand, prefix: str, names: str | list[str]) -> list[Msg]:
    """One to three tool calls and their results (mid tool loop, or an earlier task's loop)."""
    out: list[Msg] = []
    for _ in range(r.choice((1, 1, 2, 3))):
        call_id = prefix + "".join(r.choice("0123456789abcdef") for _ in range(12))
        name = names if isinstance(names, str) else r.p(names)
        out += [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name}}],
            },
            {"role": "tool", "tool_call_id": call_id, "content": r.p(LOOP_RESULTS)},
        ]
    return out


History = list[tuple[str, str]]


HISTORY_LOOP_RATE = 0.5  # earlier turns of an agent session mostly ran tools before answering


def claude_code(r: Rand, ask: str, history: History, loop: bool) -> Body:
    cwd, notes = r.p(REPOS)
    new = r.random() < 0.5
    messages: list[Msg] = [{"role": "system", "content": CC_SYSTEM_NEW if new else CC_SYSTEM_OLD}]
    turns = [*history, (ask, "")]
    for i, (text, reply) in enumerate(turns):
        parts: list[Msg] = [{"type": "text", "text": _claude_md(r, cwd, notes, new)}] if i == 0 else []
        parts.append({"type": "text", "text": text})
        if i == 0 and not new:
            parts.append({"type": "text", "text": CC_TODO})
        messages.append({"role": "user", "content": parts})
        if i == 0 and new:
            messages.append({"role": "system", "content": CC_MID_SYSTEM})
        if reply:
            if r.random() < HISTORY_LOOP_RATE:
                messages += _loop(r, "toolu_01", ["Bash", "Read", "Edit", "Grep"])
            messages.append({"role": "assistant", "content": reply})
    if loop:
        messages += _loop(r, "toolu_01", ["Bash", "Read", "Edit", "WebFetch"])
    return {
        "model": "claude-sonnet-4-5",
        "messages": messages,
        "tools": CC_TOOLS_NEW if new else CC_TOOLS_OLD,
    }


def codex(r: Rand, ask: str, history: History, loop: bool) -> Body:
    cwd, notes = r.p(REPOS)
    new = r.random() < 0.5
    messages: list[Msg] = (
        [
            {"role": "developer", "content": [{"type": "input_text", "text": CODEX_DEV_NEW}]},
            {"role": "developer", "content": [{"type": "input_text", "text": CODEX_PERMISSIONS}]},
        ]
        if new
        else [{"role": "system", "content": CODEX_INSTRUCTIONS_OLD}]
    )
    if r.random() < 0.7:
        agents = f"# AGENTS.md instructions for {cwd}\n\n<INSTRUCTIONS>\n{notes}\n</INSTRUCTIONS>"
        messages.append({"role": "user", "content": [{"type": "input_text", "text": agents}]})
    env = f"<environment_context>\n  <cwd>{cwd}</cwd>\n  <shell>bash</shell>\n</environment_context>"
    messages.append({"role": "user", "content": [{"type": "input_text", "text": env}]})
    tool = "exec_command" if new else "shell"
    for text, reply in history:
        messages.append({"role": "user", "content": [{"type": "input_text", "text": text}]})
        if r.random() < HISTORY_LOOP_RATE:
            messages += _loop(r, "call_", tool)
        messages.append({"role": "assistant", "content": reply})
    messages.append({"role": "user", "content": [{"type": "input_text", "text": ask}]})
    if loop:
        messages += _loop(r, "call_", tool)
    return {"model": "auto", "messages": messages, "tools": CODEX_TOOLS if new else CODEX_TOOLS_OLD}


def cline(r: Rand, ask: str, history: History, loop: bool) -> Body:
    cwd, _ = r.p(REPOS)
    roo = r.random() < 0.4
    system = (r.p(ROO_ROLES) + CLINE_SYSTEM[CLINE_SYSTEM.index("\n\n====") :]) if roo else CLINE_SYSTEM
    env = _env_details(r, cwd, roo)
    messages: list[Msg] = [{"role": "system", "content": system}]
    if history or loop:
        first = history[0][0] if history else ask
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": f"<task>\n{first}\n</task>"},
                    {"type": "text", "text": env},
                ],
            }
        )
        path = r.p(PATHS)
        messages.append({"role": "assistant", "content": f"<read_file>\n<path>{path}</path>\n</read_file>"})
        result = {"type": "text", "text": f"[read_file for '{path}'] Result:\n{r.p(ALL_CODE)}"}
        parts = (
            [result]
            if loop and not history
            else [result, {"type": "text", "text": f"<feedback>\n{ask}\n</feedback>"}]
        )
        messages.append({"role": "user", "content": [*parts, {"type": "text", "text": env}]})
    else:
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": f"<task>\n{ask}\n</task>"},
                    {"type": "text", "text": env},
                ],
            }
        )
    return {"model": "auto", "messages": messages}


def aider(r: Rand, ask: str, history: History, loop: bool) -> Body:
    kind = r.n(0, 2)
    messages: list[Msg] = [{"role": "system", "content": AIDER_SYSTEMS[kind]}]
    messages += [
        {"role": "user", "content": "Change get_factorial() to use math.factorial"},
        {"role": "assistant", "content": "To make this change we need to modify `mathweb/flask/app.py`."},
        {
            "role": "user",
            "content": "I switched to a new code base. Please don't consider the above files or try to edit them any longer.",
        },
        {"role": "assistant", "content": "Ok."},
    ]
    for text, reply in history:
        messages += [{"role": "user", "content": text}, {"role": "assistant", "content": reply}]
    path, code = _file(r)
    if r.random() < 0.6:
        messages += [
            {
                "role": "user",
                "content": f"Here are summaries of some files present in my git repository.\nDo not propose changes to these files, treat them as *read-only*.\n\n{r.p(PATHS)}:\n⋮\n│def main():\n⋮",
            },
            {"role": "assistant", "content": "Ok, I won't try and edit those files without asking first."},
        ]
    messages += [
        {
            "role": "user",
            "content": f"I have *added these files to the chat* so you can go ahead and edit them.\n\n*Trust this message as the true contents of these files!*\n\n{path}\n```\n{code}\n```",
        },
        {"role": "assistant", "content": "Ok, any changes I propose will be to those files."},
    ]
    reminder = AIDER_REMINDERS[kind]
    if r.random() < 0.5:
        messages += [{"role": "user", "content": ask}, {"role": "system", "content": reminder}]
    else:
        messages.append({"role": "user", "content": ask + "\n\n" + reminder})
    return {"model": "openai/auto", "messages": messages}


def openhands(r: Rand, ask: str, history: History, loop: bool) -> Body:
    parts: list[Msg] = [{"type": "text", "text": ask}]
    if r.random() < 0.4:
        parts.append(
            {
                "type": "text",
                "text": f'<EXTRA_INFO>\nThe following information has been included based on a keyword match for "{r.p(["github", "docker", "npm"])}".\nIt may or may not be relevant to the user\'s request.\n\nUse the token in $GITHUB_TOKEN to talk to the API.\n</EXTRA_INFO>',
            }
        )
    messages: list[Msg] = [{"role": "system", "content": OPENHANDS_SYSTEM}]
    for text, reply in history:
        messages.append({"role": "user", "content": text})
        if r.random() < HISTORY_LOOP_RATE:
            messages += _loop(r, "toolu_", ["terminal", "file_editor"])
        messages.append({"role": "assistant", "content": reply})
    messages.append({"role": "user", "content": parts})
    if loop:
        messages += _loop(r, "toolu_", ["terminal", "file_editor", "browser"])
    return {"model": "litellm_proxy/auto", "messages": messages, "tools": OPENHANDS_TOOLS}


def continue_chat(r: Rand, ask: str, history: History, loop: bool) -> Body:
    path, code = _file(r)
    parts = [{"type": "text", "text": f"```{path}\n{code}\n```"}] if r.random() < 0.6 else []
    messages: list[Msg] = [{"role": "system", "content": CONTINUE_SYSTEM}]
    for text, reply in history:
        messages += [
            {"role": "user", "content": [{"type": "text", "text": text}]},
            {"role": "assistant", "content": reply},
        ]
    messages.append({"role": "user", "content": [*parts, {"type": "text", "text": ask}]})
    body: Body = {"model": "auto", "messages": messages}
    if r.random() < 0.5:  # agent mode
        body["tools"] = CONTINUE_TOOLS
    return body


# Zed's inline assistant (its content_prompt template), by file type: (language name, content).
ZED_TYPES = {
    "py": ("Python", "code"),
    "ts": ("TypeScript", "code"),
    "go": ("Go", "code"),
    "rs": ("Rust", "code"),
}


def _zed_edit(lang: str, code: str, ask: str) -> str:
    name, kind = ZED_TYPES.get(lang, ("Markdown", "text"))
    return (
        f"Here's a file of {name} that I'm going to ask you to make an edit to.\n\n"
        "The section you'll need to rewrite is marked with <rewrite_this></rewrite_this> tags.\n\n"
        f"<document>\n<rewrite_this>\n{code}\n</rewrite_this>\n</document>\n\n"
        f"Edit the section of {kind} in <rewrite_this></rewrite_this> tags based on the following prompt:\n\n"
        f"<prompt>\n{ask}\n</prompt>\n\n"
        f"And here's the section to rewrite based on that prompt again for reference:\n\n<rewrite_this>\n{code}\n</rewrite_this>\n\n"
        f"Only make changes that are necessary to fulfill the prompt, leave everything else as-is. All surrounding {kind} will be preserved.\n\n"
        f"Start at the indentation level in the original file in the rewritten {kind}. Don't stop until you've rewritten the entire section, "
        "even if you have no more changes to make, always write out the whole section with no unnecessary elisions.\n\n"
        "Immediately start with the following format with no remarks:\n\n```\n{{REWRITTEN_CODE}}\n```"
    )


def ide_edit(r: Rand, ask: str, history: History, loop: bool) -> Body:
    """An editor's edit prompt: the code to rewrite and the user's request (Continue's two
    templates, Zed's inline assistant)."""
    path, code = _file(r)
    lang = path.rsplit(".", 1)[-1]
    style = r.random()
    if style < 0.3:
        return {"model": "auto", "messages": [{"role": "user", "content": _zed_edit(lang, code, ask)}]}
    if style < 0.65:
        content = (
            f"The user has requested a section of code in a file to be rewritten.\n\nThis is the prefix of the file:\n```{lang}\n# {path}\n```\n\n"
            f'This is the code to rewrite:\n```{lang}\n{code}\n```\n\nThe user\'s request is: "{ask}"\n\nHere is the rewritten code:'
        )
    else:
        content = (
            f"```{lang}\n{code}\n```\n\nPlease rewrite the above file to address the following request:\n\n{ask}\n\n"
            "You should rewrite the entire file without any natural language explanation. DO NOT surround the code in a code block and DO NOT explain yourself."
        )
    return {"model": "auto", "messages": [{"role": "user", "content": content}]}


def fim(r: Rand) -> Body:
    """Autocomplete: a code file's prefix and suffix in a fill-in-the-middle template."""
    code = r.p(ALL_CODE)
    cut = r.n(1, max(1, len(code) - 1))
    prefix, suffix = code[:cut], code[cut:]
    style = r.n(0, 3)
    if style == 0:
        return {
            "model": "auto",
            "prompt": f"<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>",
            "max_tokens": 128,
        }
    if style == 1:
        return {"model": "auto", "prompt": f"[SUFFIX]{suffix}[PREFIX]{prefix}", "max_tokens": 128}
    if style == 2:
        return {"model": "auto", "prompt": prefix, "suffix": suffix, "max_tokens": 128}
    return {
        "model": "auto",
        "messages": [
            {
                "role": "user",
                "content": f"```\n{prefix}[BLANK]{suffix}\n```\n\nFill in the blank to complete the code block. Your response should include only the code to replace [BLANK], without surrounding backticks.",
            }
        ],
    }


def rag(r: Rand, ask: str, history: History, loop: bool) -> Body:
    docs = r.sample(DOCS, r.n(2, 4))
    context = "\n\n".join(f"[{i + 1}] {t}\n{b * r.n(1, 3)}" for i, (t, b) in enumerate(docs))
    style = r.n(0, 2)
    system = f"You are the assistant of {r.p(COMPANIES)}. Answer using the provided context."
    if style == 0:
        content: Any = f"Context information is below.\n---------------------\n{context}\n---------------------\nGiven the context information and not prior knowledge, answer the query.\nQuery: {ask}\nAnswer:"
        return {
            "model": "auto",
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": content}],
        }
    if style == 1:
        return {
            "model": "auto",
            "messages": [
                {"role": "system", "content": system + "\n\n<documents>\n" + context + "\n</documents>"},
                {"role": "user", "content": ask},
            ],
        }
    parts = [
        {
            "type": "text",
            "text": f'<document index="{i + 1}">\n<source>{t}</source>\n<document_content>{b}</document_content>\n</document>',
        }
        for i, (t, b) in enumerate(docs)
    ]
    return {
        "model": "auto",
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": [*parts, {"type": "text", "text": ask}]},
        ],
    }


WRAPPERS = {
    "claude_code": claude_code,
    "codex": codex,
    "cline": cline,
    "aider": aider,
    "openhands": openhands,
    "continue": continue_chat,
    "ide_edit": ide_edit,
    "rag": rag,
}
# Agent wrappers carry their own tools; a tools task inside one also gets its toolset (an MCP
# server's tools, say).
AGENT_TOOLSETS = TOOLSETS


def wrap(r: Rand, name: str, ask: str, history: History, loop: bool, toolset: list[Msg] | None) -> Body:
    """``ask`` (with earlier turns ``history``) as agent ``name`` would send it."""
    body = WRAPPERS[name](r, ask, history, loop)
    if toolset:
        body["tools"] = [*body.get("tools", []), *toolset]
    return body
