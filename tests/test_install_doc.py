"""docs/install.md names every dependency and extra that pyproject.toml declares, and nothing it does not."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib

from jupyter_debug_relay.version import __version__

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


def test_the_readme_names_the_system_packages_the_tests_install():
    installed = re.findall(r"need\+=\(([\w.-]+)\)", (ROOT / ".ci" / "system-deps").read_text())
    readme = (ROOT / "README.md").read_text()
    listed = re.search(r"tests/test_install_doc.py compares this list with .ci/system-deps -->\n.*?: (.*?)\. ", readme,
                       re.S).group(1)
    assert re.split(r",\s+|\s+and\s+", listed.replace("\n", " ")) == installed


def test_the_pages_install_the_wheel_make_wheel_builds_never_a_name_from_pypi():
    wheel = f"jupyter_debug_relay-{__version__}-py3-none-any.whl"
    assert re.search(r"^wheel:\n(\t.*\n)*\t\$\(BIN\)/python -m pip wheel .*--no-deps -w dist \.\n",
                     (ROOT / "Makefile").read_text(), re.M)
    pages = [ROOT / "README.md", ROOT / "notebooks" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        text = page.read_text()
        assert not re.search(r"pip install [\"']?jupyter_debug_relay\b", text), f"{page.name}: not on PyPI"
        named = set(re.findall(r"jupyter_debug_relay-[\w.]+-py3-none-any\.whl", text))
        assert named <= {wheel}, f"{page.name} names {named}; make wheel builds {wheel}"


def test_the_install_page_names_the_extras_make_setup_installs():
    installed = re.search(r'pip install --quiet -e "\.\[([\w,]+)\]"', (ROOT / "Makefile").read_text()).group(1)
    said = re.search(r"`make` creates `\.venv/` and installs the package\n\(editable\) with its (.*?) extras",
                     (ROOT / "docs" / "install.md").read_text()).group(1)
    assert re.findall(r"`(\w+)`", said) == installed.split(",")
