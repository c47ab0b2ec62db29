"""The doctor: the debugpy each target Python runs, and which of the boot's features are on there, and why not.

An operation like every other (``doctor``: the CLI's ``jupyter-debug-relay doctor``, HTTP's ``GET /doctor``, an MCP
tool): nothing is launched; each Python checks the debugpy it would run (``features.check_folder``)."""

from __future__ import annotations

import asyncio
import glob
import os
import shutil
import sys
import threading
import time
from typing import Annotated, Any

from pydantic import Field

from ..backends.debugpy import features, interpreter, lending
from ..backends.debugpy.boot import table
from ..backends.debugpy.interpreter import Interpreter
from ..errors import RelayError
from ..version import __version__
from . import params as P
from .base import Context, Operation


class DoctorParams(P.Params):
    """Which Pythons to check, and the debugpy to check them with."""

    pythons: Annotated[list[str], Field(description="Interpreters to check (paths); default: this one and every "
                                        "Python 3.8+ found on PATH and in pyenv.")] = []
    debugpy: Annotated[str | None, Field(description="A debugpy package folder to check instead of the one each "
                                         "Python is lent.")] = None


async def _doctor(ctx: Context, p: DoctorParams) -> dict[str, Any]:
    return {"doctor": await examine(p.pythons, p.debugpy)}


def pip_line() -> str:
    """The install that puts the kernel's environment in the proven range."""
    major, minor = table.version_tuple(table.OLDEST)[:2]
    return f'pip install "debugpy>={table.OLDEST},<{major}.{minor + 1}"'


def candidates() -> list[str]:
    """The Pythons a default doctor looks at: this one, then ``python3.X`` on PATH and pyenv's 3.X versions."""
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    named = [sys.executable] + [shutil.which(f"python3.{minor}") or "" for minor in range(8, 20)]
    named += sorted(glob.glob(os.path.join(root, "versions", "3.*", "bin", "python3")))
    return list(dict.fromkeys(path for path in named if path))


async def discover() -> list[Interpreter]:
    """One interpreter per Python version from 3.8 on (this one first), as probed; those the probe refuses are left
    out (too old, broken)."""

    async def probed(path: str) -> Interpreter | None:
        try:
            return await interpreter.probe(path)
        except RelayError:
            return None

    found: dict[tuple[int, int], Interpreter] = {}
    for one in await asyncio.gather(*(probed(path) for path in candidates())):
        if one is not None:
            found.setdefault(one.version, one)
    mine = found.pop(tuple(sys.version_info[:2]), None)
    return ([mine] if mine else []) + [found[version] for version in sorted(found)]


def package_of(folder: str) -> str:
    """The ``debugpy`` package ``folder`` names (itself, or the ``debugpy`` inside it); a clear error otherwise."""
    for package in (folder, os.path.join(folder, "debugpy")):
        package = os.path.abspath(package)
        if os.path.basename(package) == "debugpy" and os.path.isfile(os.path.join(package, "__init__.py")) \
                and os.path.isdir(os.path.join(package, "_vendored")):
            return package
    raise RelayError("file_not_found", f"{folder!r} is no debugpy package folder (a folder named debugpy, holding "
                     "__init__.py and _vendored/).", "Give the folder of a debugpy package, as printed by "
                     "`python -c \"import debugpy, os; print(os.path.dirname(debugpy.__file__))\"`.")


def finish_installs() -> bool:
    """Wait (at most ``lending.INSTALL_TIMEOUT``) for the debugpy copies ``lending.choose`` started installing, as a
    first launch on their Python would: a process that ended before them would leave pip's work half done."""
    running = [thread for thread in threading.enumerate() if thread.name.startswith("debugpy install ")]
    if running:
        print(f"doctor: installing debugpy {lending.VERSION} into {lending.cache_root()} for the Pythons that need a "
              f"copy, as their first launch would (up to {lending.INSTALL_TIMEOUT:.0f} s)...", file=sys.stderr,
              flush=True)
    deadline = time.monotonic() + lending.INSTALL_TIMEOUT
    for thread in running:
        thread.join(max(0.0, deadline - time.monotonic()))
    return bool(running)


async def examine(pythons: list[str], debugpy_folder: str | None) -> dict[str, Any]:
    """The doctor's report: the relay, the kernel's debugpy, and one section per target Python."""
    given = package_of(debugpy_folder) if debugpy_folder else None
    if pythons:
        found = [await interpreter.probe(path) for path in dict.fromkeys(pythons)]  # a wrong path is an error
    else:
        found = await discover()
    loans = [lending.Loan(given) if given else lending.choose(one) for one in found]
    installed = [False] * len(found)
    if any(loan.note for loan in loans) and await asyncio.to_thread(finish_installs):
        for index, one in enumerate(found):
            if loans[index].note:
                loans[index] = lending.choose(one)
                installed[index] = loans[index].note is None
    sections = await asyncio.gather(*(section(one, loan, given, new) for one, loan, new in
                                      zip(found, loans, installed, strict=True)))
    kernel_in_range = table.in_range(lending.KERNEL_VERSION)
    report = {
        "relay": __version__,
        "kernel_debugpy": {
            "version": lending.KERNEL_VERSION, "folder": lending.KERNEL_DEBUGPY, "in_range": kernel_in_range,
            "proven": [table.OLDEST, table.NEWEST],
            "what_to_do": None if kernel_in_range else f"{pip_line()} in the kernel's environment ({sys.prefix})"},
        "targets_run": lending.VERSION,
        "pythons": sections,
        "off": sum(f["state"] == "off" for s in sections for f in s["features"]),
        "errors": sum(s["error"] is not None for s in sections),
    }
    report["exit_code"] = 2 if report["errors"] else 1 if report["off"] else 0
    return report


async def section(found: Interpreter, loan: lending.Loan, given: str | None, installed: bool) -> dict[str, Any]:
    """What a target of ``found`` runs: the debugpy folder and each feature of the table for its Python."""
    folder = loan.folder
    source = "given" if given else "kernel" if folder == lending.KERNEL_DEBUGPY else \
        "own" if found.debugpy and found.debugpy[0] == folder else \
        "cache" if folder.startswith(os.path.join(lending.cache_root(), "")) else "other"
    out: dict[str, Any] = {
        "python": found.path, "version": ".".join(map(str, found.version)),
        "debugpy": {"version": None, "folder": folder, "source": source, "in_range": None,
                    "note": loan.note.strip() if loan.note else None, "installed_now": installed},
        "features": [], "what_to_do": [], "error": None}
    try:
        checked = await features.check_folder(found.path, folder)
        if os.path.realpath(checked.get("folder", "")) != os.path.realpath(folder):
            raise RelayError("adapter_failed", f"{found.path} imported debugpy from {checked.get('folder')}, not from "
                             f"{folder}.", "Give the folder of a debugpy package, named debugpy.")
    except RelayError as exc:
        out["error"] = exc.to_dict()
        return out
    except OSError as exc:  # the interpreter went away since its probe
        out["error"] = RelayError("file_not_found", f"{found.path} cannot be run: {exc}.").to_dict()
        return out
    out["version"] = checked.get("python") or out["version"]
    version = str(checked.get("debugpy"))
    out["debugpy"].update(version=version, in_range=table.in_range(version))
    reported = checked.get("features") or {}
    for feature in table.FEATURES:
        if feature.process == "target" and feature.for_python(found.version):
            out["features"].append(state_of(feature, reported.get(feature.name, "the check did not report it")))
    out["what_to_do"] = advice(out, found)
    return out


def state_of(feature: table.Feature, why: str | None) -> dict[str, Any]:
    """One feature's line: on, off (why, and what the user loses) or not checked (its module is not installed)."""
    state = "on" if why is None else "unchecked" if why.startswith(f"{feature.after} is not installed here") \
        or why == "the check did not report it" else "off"
    return {"name": feature.name, "state": state, "why": why, "loses": None if why is None else feature.off,
            "what": feature.what}


def lacking(why: str) -> str:
    """Whose name an off feature misses: ``debugpy``, ``python`` (the standard library), ``needs`` (another feature
    off) or the top package named (a third-party module the feature changes)."""
    if why.startswith("it needs "):
        return "needs"
    top = why.split(" ", 1)[0].split(".", 1)[0]
    if top.startswith(("pydev", "_pydev", "debugpy")):
        return "debugpy"
    return "python" if top in sys.stdlib_module_names else top


def advice(out: dict[str, Any], found: Interpreter) -> list[str]:
    """What the user can do about the features off for one Python (``nothing`` when all are on)."""
    debugpy = out["debugpy"]
    off = [f for f in out["features"] if f["state"] == "off"]
    said: list[str] = []
    if off and not debugpy["in_range"]:
        said.append(f"{pip_line()} in the kernel's environment ({sys.prefix})" if debugpy["source"] == "kernel" else
                    f"use a debugpy from {table.OLDEST} to {table.NEWEST}: {debugpy['version']} is outside the range "
                    "the relay is proven on")
    by_whom: dict[str, list[str]] = {}
    for feature in off:
        by_whom.setdefault(lacking(feature["why"]), []).append(feature["name"])
    for whom, names in by_whom.items():
        listed = ", ".join(names)
        if whom == "debugpy" and debugpy["in_range"]:
            said.append(f"the debugpy in {debugpy['folder']} lacks names debugpy {debugpy['version']} has, needed "
                        f"by {listed}: use an unchanged one (pip install --force-reinstall "
                        f'"debugpy=={debugpy["version"]}" where it was installed)')
        elif whom == "python":
            said.append(f"Python {out['version']} lacks names needed by {listed}: nothing to install; a target runs "
                        "correctly there, only slower as said (a newer Python may have them)")
        elif whom not in ("debugpy", "needs"):
            said.append(f"{whom} in {found.path}'s environment lacks names needed by {listed}: install a version of it "
                        "the relay knows (pip install --upgrade)")
    return said or (["nothing"] if not off else ["nothing to install: a target runs correctly, only slower as said"])


OPERATIONS = (
    Operation("doctor", DoctorParams, _doctor,
              "The debugpy each target Python runs and which of the relay's speed-ups are on there, each off one with "
              "why and what to do.", ("doctor",), ("file_not_found", "adapter_failed", "timeout"),
              budget=lambda p, t: lending.INSTALL_TIMEOUT + 120.0,
              when="Use it when a start's answer has warnings, or before a first launch on a new machine.",
              http=("POST /doctor",), example={"pythons": ["/usr/bin/python3.12"]}),
)

RESULT_TYPES: dict[str, Any] = {"doctor": dict[str, Any]}
