"""One debugging task over MCP stdio, against this relay and against @debugmcp/mcp-debugger, in the same run.

The task: a breakpoint, launch to it, the stack, the locals, 20 x (step over + evaluate), continue to the end.
Each server is driven by the official ``mcp`` SDK's client. mcp-debugger is installed with npm into a cache
directory (``$JDR_BENCH_CACHE``, default ``~/.cache/jupyter-debug-relay-bench``); without node or npm, or when it
cannot do the task, its column is left out and the bench says why (our own figures are printed and kept all the
same); a Node older than it asks for is said, and tried. ``--rounds N`` runs the task N times per server,
alternating them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

import anyio
from common import Samples, Table, ms, record
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

MCP_DEBUGGER = "@debugmcp/mcp-debugger@0.24.2"
STEPS = 20
TARGET = """\
def work(n):
    total = 0
    for i in range(n):
        total += i * i  # here
    return total


print("result", work(50))
"""


NODE_WANTED = 22  # mcp-debugger's package.json: engines node >= 22


def node_note(node: str) -> str:
    """A sentence when ``node`` is older than mcp-debugger asks for (it may run all the same), else ""."""
    try:
        version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
        major = int(version.lstrip("v").split(".")[0])
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return "the version of node could not be read"
    return (f"mcp-debugger asks for Node >= {NODE_WANTED}, this is {version}: npm warns, it is run all the same"
            if major < NODE_WANTED else "")


def install_mcp_debugger() -> tuple[str | None, str]:
    """The path of mcp-debugger's entry point (installed once into the cache), or None and why not."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        return None, "node or npm is not on PATH"
    cache = os.environ.get("JDR_BENCH_CACHE", os.path.expanduser("~/.cache/jupyter-debug-relay-bench"))
    entry = os.path.join(cache, "node_modules", "@debugmcp", "mcp-debugger", "dist", "cli.mjs")
    if not os.path.exists(entry):
        os.makedirs(cache, exist_ok=True)
        done = subprocess.run([npm, "install", "--prefix", cache, "--no-audit", "--no-fund", MCP_DEBUGGER],
                              capture_output=True, text=True, timeout=600)
        if done.returncode != 0 or not os.path.exists(entry):
            return None, f"npm install {MCP_DEBUGGER} failed: {done.stderr.strip()[-200:]}"
    return entry, ""


class Measures:
    """One server's figures over the rounds."""

    def __init__(self) -> None:
        self.launch, self.step, self.evaluate = Samples(), Samples(), Samples()
        self.text: list[int] = []  # characters of text returned per task
        self.tools = 0
        self.list_size = 0


class Run:
    """Calls on one MCP client, counting the text each answer returns."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.text = 0

    async def call(self, name: str, /, **args: Any) -> str:
        result = await self.client.call_tool(name, args)
        text = "".join(getattr(c, "text", "") for c in result.content)
        self.text += len(text)
        if result.is_error:
            raise RuntimeError(f"{name}: {text}")
        return text


async def relay_task(run: Run, path: str, line: int, m: Measures) -> None:
    await run.call("add_breakpoint", path=path, line=line)
    began = time.perf_counter()
    text = await run.call("launch", program=path)
    m.launch.add(ms(time.perf_counter() - began))
    assert "paused" in text, text
    await run.call("snapshot")  # the stack and the locals, in one call
    for _ in range(STEPS):
        began = time.perf_counter()
        await run.call("next")
        m.step.add(ms(time.perf_counter() - began))
        began = time.perf_counter()
        await run.call("evaluate", expression="total")
        m.evaluate.add(ms(time.perf_counter() - began))
    await run.call("remove_breakpoint", id=1)
    await run.call("continue")
    await run.call("terminate")


async def debugger_task(run: Run, path: str, line: int, m: Measures) -> None:
    created = json.loads(await run.call("create_debug_session", language="python", name="bench",
                                        executablePath=sys.executable))
    sid = created["sessionId"]
    await run.call("set_breakpoint", sessionId=sid, file=path, line=line)
    began = time.perf_counter()
    await run.call("start_debugging", sessionId=sid, scriptPath=path)
    deadline = time.monotonic() + 60
    while '"line"' not in await run.call("get_stack_trace", sessionId=sid):  # launch answers before the stop
        if time.monotonic() > deadline:
            raise TimeoutError("mcp-debugger: no stop within 60 s")
        await anyio.sleep(0.01)
    m.launch.add(ms(time.perf_counter() - began))
    await run.call("get_local_variables", sessionId=sid)
    for _ in range(STEPS):
        began = time.perf_counter()
        await run.call("step_over", sessionId=sid)
        m.step.add(ms(time.perf_counter() - began))
        began = time.perf_counter()
        await run.call("evaluate_expression", sessionId=sid, expression="total")
        m.evaluate.add(ms(time.perf_counter() - began))
    await run.call("clear_breakpoints", sessionId=sid)
    await run.call("continue_execution", sessionId=sid)
    await run.call("close_debug_session", sessionId=sid)


async def one(params: StdioServerParameters, task: Any, path: str, line: int, m: Measures) -> None:
    with anyio.fail_after(180):
        async with Client(params) as client:
            listed = await client.list_tools()
            m.tools = len(listed.tools)
            m.list_size = len(listed.model_dump_json(by_alias=True, exclude_none=True))
            run = Run(client)
            await task(run, path, line, m)
            m.text.append(run.text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="mcp-bench-")
    path = os.path.join(folder, "work.py")
    with open(path, "w") as f:
        f.write(TARGET)
    line = next(n for n, text in enumerate(TARGET.splitlines(), 1) if "# here" in text)
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    servers: dict[str, tuple[StdioServerParameters | None, Any, str]] = {
        "this relay": (StdioServerParameters(command=sys.executable, args=["-m", "jupyter_debug_relay.cli", "mcp"],
                                             env=env, cwd=folder), relay_task, ""),
    }
    entry, why = install_mcp_debugger()
    servers["mcp-debugger"] = (None if entry is None else StdioServerParameters(
        command="node", args=[entry, "stdio"], env=dict(os.environ), cwd=folder), debugger_task, why)
    note = node_note("node") if entry is not None else ""
    if note:
        print(note)
    figures = {name: Measures() for name in servers}
    failed: dict[str, str] = {}  # an anchor that could not do the task: why (our own failure stops the bench)
    for _ in range(options.rounds):
        for name, (params, task, _) in servers.items():
            if params is None or name in failed:
                continue
            try:
                anyio.run(one, params, task, path, line, figures[name])
            except Exception as exc:
                if name == "this relay":
                    raise
                failed[name], figures[name] = f"the task failed: {exc!r}"[:400], Measures()
                print(f"{name} failed, its column is left out: {failed[name]}", file=sys.stderr)
    shutil.rmtree(folder, ignore_errors=True)
    names = list(servers)
    print(f"\nMCP stdio, {options.rounds} rounds of the task ({STEPS} steps each); medians in ms, n = samples\n")
    table = Table("", *names, widths=(0, 22, 22))

    def cell(samples: Samples) -> str:
        return f"{samples.median:,.1f} (n={samples.n})" if samples.n else "n/a"

    for label, pick in (("launch → first stop", lambda m: m.launch), ("step over, median", lambda m: m.step),
                        ("evaluate, median", lambda m: m.evaluate)):
        table.row(label, *(cell(pick(figures[n])) for n in names))
    table.row("text returned for the whole task", *(
        f"{sum(figures[n].text) / len(figures[n].text) / 1000:.1f} KB" if figures[n].text else "n/a" for n in names))
    table.row("tools in tools/list", *(str(figures[n].tools) if figures[n].text else "n/a" for n in names))
    table.row("size of tools/list", *(f"{figures[n].list_size / 1000:.1f} KB" if figures[n].text else "n/a"
                                      for n in names))
    for name, (params, _, reason) in servers.items():
        if params is None or name in failed:
            print(f"\n{name} skipped: {reason or failed[name]}")
    record("mcp_bench", {name: {"launch": m.launch.summary() if m.launch.n else None,
                                "step": m.step.summary() if m.step.n else None,
                                "evaluate": m.evaluate.summary() if m.evaluate.n else None,
                                "text_bytes": m.text, "tools": m.tools, "tools_list_bytes": m.list_size}
                         for name, m in figures.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
