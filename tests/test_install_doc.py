"""docs/install.md names every dependency and extra that pyproject.toml declares, and nothing it does not."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]


def names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].strip() for r in requirements}


def test_the_install_page_lists_the_dependencies_and_extras_of_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    page = (ROOT / "docs" / "install.md").read_text()
    listed = re.search(r"Runtime dependencies: (.*?)\.\n", page, re.S).group(1)
    assert {n.strip() for n in listed.replace("\n", " ").split(",")} == names(project["dependencies"])
    extras = dict(re.findall(r"^\| `(\w+)` \| (.*?) \|", page, re.M))
    assert set(extras) == set(project["optional-dependencies"])
    for extra, requirements in project["optional-dependencies"].items():
        assert {n.strip() for n in extras[extra].split(",")} == names(requirements), extra


def test_the_readme_gives_a_pip_install_beside_the_clone():
    readme = (ROOT / "README.md").read_text()
    assert readme.index("make demo") < readme.index("make test") < readme.index("pip install")
    assert "<the repository URL>" not in (ROOT / "docs" / "install.md").read_text()
