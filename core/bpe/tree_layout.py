"""Where each box of a merge graph goes (``ui.views.token_view`` draws them): no two edges cross, no edge
runs through a box, and a token's two parts stand left and right as they do in the token.

Drawing every sub-token exactly once cannot always keep edges apart: in ``'th' + 'at'`` the one
``'t'`` is the left part of one and the right part of the other, so its two edges must cross
``'h'``'s or ``'a'``'s.  So the layout starts from the merge *tree* (each place a sub-token is used),
a tidy tree whose subtrees never overlap, where a part used twice by one token (``' ' + ' '``) is
one box with two edges; then each sub-token still drawn in several places is drawn once wherever
the edges that this adds cross nothing, and stays where it is used otherwise.

Pure geometry (no Streamlit): boxes of given widths, rows ``row`` apart, edges leaving a box's
bottom a little left or right of its centre (its left or right part) and reaching a box's top.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from core.bpe.explain import DagNode

MAX_BOXES = 200  # a longer token's tree is cut (its lowest parts not drawn): a tree a reader can
# follow, and bounded work (the checks for crossings are quadratic)


@dataclass(frozen=True)
class Box:
    id: int
    x: float  # centre
    y: float  # top
    w: float


@dataclass(frozen=True)
class Edge:
    parent: int  # keys into ``Layout.boxes``
    side: int  # -1: the parent's left part, 1: its right part
    child: int


@dataclass(frozen=True)
class Layout:
    boxes: dict[int, Box]
    cut: set[int]  # boxes whose parts are not drawn (``MAX_BOXES``)
    edges: list[Edge]
    lines: list[tuple[float, float, float, float]]  # each edge's (x1, y1, x2, y2)
    width: float
    height: float  # of the rows, down to the bottom of the lowest box


def layout(nodes: list[DagNode], width_of: Callable[[DagNode], float], row: float, node_h: float,
           gap: float) -> Layout:
    """Boxes and edges for ``merge_dag``'s nodes (the token first)."""
    g = _Graph(nodes, width_of, row, node_h)
    g.tidy(gap)
    g.share()
    return g.result()


class _Graph:
    def __init__(self, nodes: list[DagNode], width_of: Callable[[DagNode], float], row: float,
                 node_h: float) -> None:
        self.by_id = {n.id: n for n in nodes}
        self.row = row
        self.node_h = node_h
        self.ids: list[int] = []  # occurrence key -> token id
        self.kids: list[list[int]] = []  # occurrence key -> child keys (one where both parts are equal)
        self.widths = {n.id: width_of(n) for n in nodes}
        self.cut: set[int] = set()
        todo = deque([self._add(nodes[0].id)])
        while todo:  # row by row: parents get smaller keys than their children
            key = todo.popleft()
            parts = self.by_id[self.ids[key]].parts or ()
            parts = parts[:1] if len(set(parts)) == 1 else parts
            if len(self.ids) + len(parts) > MAX_BOXES:
                self.cut.add(key)
                continue
            for part in parts:
                child = self._add(part)
                self.kids[key].append(child)
                todo.append(child)
        self.x = [0.0] * len(self.ids)
        self.y = [0.0] * len(self.ids)
        self.edges: list[Edge] = []
        self.alive = set(range(len(self.ids)))

    def _add(self, token_id: int) -> int:
        self.ids.append(token_id)
        self.kids.append([])
        return len(self.ids) - 1

    def tidy(self, gap: float) -> None:
        """A tidy tree: each subtree's outline row by row, children pushed apart until their
        outlines are ``gap`` apart, the parent centred between them."""
        contour: dict[int, list[tuple[float, float]]] = {}
        offset = [0.0] * len(self.ids)
        for key in reversed(range(len(self.ids))):  # children before parents
            half = self.widths[self.ids[key]] / 2
            below: list[tuple[float, float]] = []
            kids = self.kids[key]
            if len(kids) == 1:
                below = contour.pop(kids[0])
            elif len(kids) == 2:
                left, right = contour.pop(kids[0]), contour.pop(kids[1])
                sep = max(a[1] - b[0] for a, b in zip(left, right)) + gap
                offset[kids[0]], offset[kids[1]] = -sep / 2, sep / 2
                below = [_join(left, right, d, sep / 2) for d in range(max(len(left), len(right)))]
            contour[key] = [(-half, half)] + below
        for key in range(len(self.ids)):  # parents before children
            kids = self.kids[key]
            for child in kids:
                self.x[child] = self.x[key] + offset[child]
                self.y[child] = self.y[key] + self.row
            if not kids:
                continue
            for side in (-1, 1):  # a token made of two equal parts has one child, drawn once
                child = kids[0] if len(kids) == 1 else kids[(side + 1) // 2]
                self.edges.append(Edge(key, side, child))

    def share(self) -> None:
        """Draw a sub-token once wherever that crosses nothing: tallest first, keeping one of its
        places and pointing the others' parents at it."""
        places: dict[int, list[int]] = {}
        for key in range(len(self.ids)):
            places.setdefault(self.ids[key], []).append(key)
        repeated = [i for i, keys in places.items() if len(keys) > 1]
        for token_id in sorted(repeated, key=lambda i: -self.by_id[i].height):
            keys = [k for k in places[token_id] if k in self.alive]
            for keep in keys:  # the first place that can take in another, then as many as it can
                took = False
                for k in keys:
                    if k != keep and k in self.alive and self._try_share(keep, [k]):
                        took = True
                if took:
                    break

    def _try_share(self, keep: int, others: list[int]) -> bool:
        gone = set()
        for other in others:
            gone |= self._subtree(other)
        kept_edges = [e for e in self.edges if e.parent not in gone and e.child not in gone]
        moved = [Edge(e.parent, e.side, keep)
                 for e in self.edges if e.child in others and e.parent not in gone]
        edges = kept_edges + moved
        alive = self.alive - gone
        if keep not in alive or any(self.y[keep] <= self.y[e.parent] for e in moved):
            return False  # an edge always runs down, to a later row
        if any(not self._clear(e, edges, alive) for e in moved):
            return False
        if not self._ordered(edges):
            return False
        self.edges, self.alive = edges, alive
        return True

    def _subtree(self, key: int) -> set[int]:
        found, todo = set(), [key]
        while todo:
            k = todo.pop()
            found.add(k)
            todo.extend(self.kids[k])
        return found

    def segment(self, e: Edge) -> tuple[float, float, float, float]:
        w = self.widths[self.ids[e.parent]]
        return (self.x[e.parent] + e.side * min(12.0, w / 4), self.y[e.parent] + self.node_h,
                self.x[e.child], self.y[e.child])

    def _clear(self, e: Edge, edges: list[Edge], alive: set[int]) -> bool:
        """``e`` crosses no other edge and runs through no box but its own two."""
        s = self.segment(e)
        if any(_cross(s, self.segment(f)) for f in edges if f != e):
            return False
        return not any(_through(s, self._rect(k)) for k in alive if k not in (e.parent, e.child))

    def _ordered(self, edges: list[Edge]) -> bool:
        ends: dict[int, dict[int, float]] = {}
        for e in edges:
            ends.setdefault(e.parent, {})[e.side] = self.x[e.child]
        return all(sides.get(-1, 0) <= sides.get(1, 0) for sides in ends.values() if len(sides) == 2)

    def _rect(self, key: int) -> tuple[float, float, float, float]:
        w = self.widths[self.ids[key]]
        return self.x[key] - w / 2, self.y[key], self.x[key] + w / 2, self.y[key] + self.node_h

    def result(self) -> Layout:
        left = min(self._rect(k)[0] for k in self.alive)
        boxes = {}
        for k in self.alive:
            boxes[k] = Box(self.ids[k], self.x[k] - left, self.y[k], self.widths[self.ids[k]])
        width = max(self._rect(k)[2] for k in self.alive) - left
        height = max(self.y[k] for k in self.alive) + self.node_h
        lines = [(x1 - left, y1, x2 - left, y2) for x1, y1, x2, y2 in map(self.segment, self.edges)]
        return Layout(boxes, self.cut & self.alive, self.edges, lines, width, height)


def _join(left: list, right: list, d: int, half: float) -> tuple[float, float]:
    """Row ``d`` of the outline of two subtrees placed ``half`` to the left and right of centre."""
    sides = []
    if d < len(left):
        sides.append((left[d][0] - half, left[d][1] - half))
    if d < len(right):
        sides.append((right[d][0] + half, right[d][1] + half))
    return min(s[0] for s in sides), max(s[1] for s in sides)


def _orient(ax: float, ay: float, bx: float, by: float, cx: float, cy: float) -> float:
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)


def _cross(s: tuple, t: tuple) -> bool:
    """Two segments cross at a point inside both (sharing an end is not crossing)."""
    (ax, ay, bx, by), (cx, cy, dx, dy) = s, t
    if {(ax, ay), (bx, by)} & {(cx, cy), (dx, dy)}:
        return False
    d1, d2 = _orient(cx, cy, dx, dy, ax, ay), _orient(cx, cy, dx, dy, bx, by)
    d3, d4 = _orient(ax, ay, bx, by, cx, cy), _orient(ax, ay, bx, by, dx, dy)
    return d1 * d2 < 0 and d3 * d4 < 0


def _through(s: tuple, rect: tuple) -> bool:
    """The segment passes through the rectangle's inside (Liang-Barsky clipping)."""
    ax, ay, bx, by = s
    x0, y0, x1, y1 = rect
    lo, hi = 0.0, 1.0
    for p, q in ((ax - bx, ax - x0), (bx - ax, x1 - ax), (ay - by, ay - y0), (by - ay, y1 - ay)):
        if p == 0:
            if q <= 0:
                return False
        elif p < 0:
            lo = max(lo, q / p)
        else:
            hi = min(hi, q / p)
    return hi - lo > 1e-9
