"""One node of the variables tree: a header, children fetched when expanded, "show more" paging."""

from __future__ import annotations

from typing import Protocol

import ipywidgets as widgets
from traitlets import Bool, Int, Unicode, observe

from ..model import Scope, Variable, VariablePage
from .format import MONO, esc, one_line, value_box


class VariablesTree(Protocol):
    """What a node asks of its tree (``variables.VariablesTree``): load a page of its children, copy it."""

    def load(self, node: VariableNode, start: int) -> None: ...

    def copy(self, node: VariableNode) -> None: ...

PAGE = 50  # children fetched per page


class VariableNode(widgets.VBox):
    """A scope or a variable; ``expand()`` fetches its first page of children, ``more()`` the next."""

    name = Unicode()
    value = Unicode()
    type = Unicode()
    ref = Int(0)
    truncated = Bool(False)
    cycle = Bool(False)
    expanded = Bool(False)
    loaded = Int(0)
    total = Int(0)
    error = Unicode("")

    def __init__(self, item: Variable | Scope, tree: VariablesTree) -> None:
        self.item, self.tree = item, tree
        self._toggle = widgets.Button(layout=widgets.Layout(width="auto", max_width="60%", height="22px"))
        self._toggle.add_class("jdr-var-toggle")
        self._toggle.on_click(lambda _b: self.toggle())
        self._value = value_box()
        header = [self._toggle, self._value]
        if isinstance(item, Variable) and item.evaluate_name:
            copy = widgets.Button(description="copy", icon="clipboard", tooltip="copy into the notebook",
                                  layout=widgets.Layout(width="auto", height="22px"))
            copy.add_class("jdr-var-copy")
            copy.on_click(lambda _b: tree.copy(self))
            header.append(copy)
        self._children_box = widgets.VBox(layout=widgets.Layout(margin="0 0 0 18px"))
        self._more = widgets.Button(layout=widgets.Layout(width="auto", display="none", height="22px"))
        self._more.add_class("jdr-var-more")
        self._more.on_click(lambda _b: self.more())
        super().__init__([widgets.HBox(header, layout=widgets.Layout(align_items="center")), self._children_box])
        self.add_class("jdr-var")
        with self.hold_trait_notifications():
            self.name = item.name
            self.ref = item.ref
            if isinstance(item, Variable):
                self.value, self.type, self.truncated, self.cycle = item.value, item.type, item.truncated, item.cycle
        self._render()

    @property
    def nodes(self) -> list[VariableNode]:
        """The children fetched so far."""
        return [w for w in self._children_box.children if isinstance(w, VariableNode)]

    def child(self, name: str) -> VariableNode:
        """The fetched child called ``name``."""
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(f"{self.name} has no fetched child {name!r} (fetched: {[n.name for n in self.nodes]})")

    def toggle(self) -> None:
        if self.expanded:
            self.expanded = False
        else:
            self.expand()

    def expand(self) -> None:
        if not self.ref or self.expanded:
            return
        self.expanded = True
        if not self.loaded:
            self.tree.load(self, 0)

    def more(self) -> None:
        if self.loaded < self.total:
            self.tree.load(self, self.loaded)

    def add_page(self, page: VariablePage) -> None:
        """Append a fetched page of children (called on the panel's worker thread)."""
        fresh = [VariableNode(v, self.tree) for v in page.items]
        more = self._children_box.children[len(self.nodes):]
        self._children_box.children = (*self.nodes, *fresh, *more)
        with self.hold_trait_notifications():
            self.loaded += len(page.items)
            self.total = page.total
            self.error = ""

    @observe("expanded", "loaded", "total", "error", "value", "truncated", "cycle")
    def _render(self, change: object = None) -> None:
        arrow = ("▾ " if self.expanded else "▸ ") if self.ref else "  "
        self._toggle.description = f"{arrow}{self.name}"
        self._toggle.disabled = not self.ref
        kind = f' <span style="color:#888">{esc(self.type)}</span>' if self.type else ""
        cut = ' <span class="jdr-truncated" style="color:#b06000" title="the value was cut">[truncated]</span>' \
            if self.truncated else ""
        error = f' <span style="color:#b00020">{esc(self.error)}</span>' if self.error else ""
        if self.cycle:
            cut += (' <span class="jdr-cycle" style="color:#6a1b9a" title="this value is one of its ancestors: '
                    'expanding it would repeat them">↺ cycle</span>')
        self._value.value = one_line(f'<span style="{MONO}">{esc(self.value)}</span>{kind}{cut}{error}', self.value)
        self._children_box.layout.display = "flex" if self.expanded else "none"
        left = self.total - self.loaded
        self._more.description = f"show more ({left} more)"
        self._more.layout.display = "flex" if self.expanded and left > 0 else "none"
        if self._more not in self._children_box.children and left > 0:
            self._children_box.children = (*self._children_box.children, self._more)
