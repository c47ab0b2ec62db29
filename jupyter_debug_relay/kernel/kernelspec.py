"""The ``debug-relay`` kernel spec: a Python kernel that loads the extension at start."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from jupyter_client.kernelspec import KernelSpecManager

KERNEL_NAME = "debug-relay"


def spec_dir() -> Path:
    """The spec shipped with the package (in a wheel) or kept at the top of the repository."""
    package = Path(__file__).resolve().parent.parent
    for base in (package / "kernelspec", package.parent / "kernelspec"):
        if (base / KERNEL_NAME / "kernel.json").is_file():
            return base / KERNEL_NAME
    raise FileNotFoundError("the debug-relay kernel spec is missing from this installation")


def install(user: bool = False, prefix: str | None = None, python: str | None = None) -> str:
    """Install the spec for ``python`` (this interpreter by default); returns the folder written.

    Without ``user`` or ``prefix`` it goes to this environment's prefix (``--sys-prefix``).
    """
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / KERNEL_NAME
        shutil.copytree(spec_dir(), target)
        spec_file = target / "kernel.json"
        spec = json.loads(spec_file.read_text())
        spec["argv"][0] = python or sys.executable
        spec_file.write_text(json.dumps(spec, indent=2) + "\n")
        if not user and prefix is None:
            prefix = sys.prefix
        return KernelSpecManager().install_kernel_spec(
            str(target), KERNEL_NAME, user=user, prefix=os.path.abspath(prefix) if prefix else None
        )
