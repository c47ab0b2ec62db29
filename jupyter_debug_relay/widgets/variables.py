"""The variables tree: one node per scope of the selected frame, children fetched lazily."""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as widgets
from traitlets import Int

from ..errors import RelayError
from ..model import Scope, VariablePage
from .lifecycle import close_children
from .variable_node import PAGE, VariableNode
from .worker import OUTRUN


class VariablesTree(widgets.VBox):
    """Scopes as expandable nodes; ``fetch`` runs through ``run`` (the panel's worker), never on the caller."""

    generation = Int(0)  # grows at every stop: pages fetched for an older stop are dropped

    def __init__(
        self,
        fetch: Callable[[int, int, int], VariablePage],
        run: Callable[[Callable[[], None]], None],
        copy: Callable[[VariableNode], None],
    ) -> None:
        self._fetch, self._run, self.copy = fetch, run, copy
        self._scopes = widgets.VBox()
        super().__init__([widgets.HTML("<b>Variables</b>"), self._scopes])
        self.add_class("jdr-variables")

    @property
    def scopes(self) -> list[VariableNode]:
        return list(self._scopes.children)

    def scope(self, name: str) -> VariableNode:
        for node in self.scopes:
            if node.name == name:
                return node
        raise KeyError(f"no scope {name!r} (scopes: {[n.name for n in self.scopes]})")

    def show(self, scopes: list[Scope]) -> None:
        """Replace the tree with ``scopes``; the first cheap scope opens at once."""
        self.clear()
        nodes = [VariableNode(scope, self) for scope in scopes]
        self._scopes.children = nodes
        first = next((n for n, s in zip(nodes, scopes, strict=True) if not s.expensive), None)
        if first is not None:
            first.expand()

    def clear(self) -> None:
        self.generation += 1
        close_children(self._scopes)
        self._scopes.children = ()

    def load(self, node: VariableNode, start: int) -> None:
        generation = self.generation

        def job() -> None:
            if generation != self.generation:
                return
            try:
                page = self._fetch(node.ref, start, PAGE)
            except RelayError as error:
                node.error = error.message
                if error.code not in OUTRUN:  # else the stop that replaces this tree is on its way
                    raise
                return
            if generation == self.generation:
                node.add_page(page)

        self._run(job)
