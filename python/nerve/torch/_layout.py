"""How a neuron layer's tensors are laid out, as nerve's kernels see them.

A neuron acts on every point of the non-time dimensions alike, so those
dimensions only matter through their memory layout. `plan` merges the ones
that every tensor of the call stores contiguously one inside the other
(a contiguous or channels-last [T, B, H, W, C] becomes [t, n0]; a sliced view
keeps the dimension it was sliced in apart), then gives each tensor its own
memory order of t and the merged dimensions and its strides. The kernel's
types are those orders with strides bound at launch (`pattern`), so the
tensors run as they are: no copy, whatever the layout.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple


@dataclass(frozen=True)
class TensorLayout:
    """One tensor of the call: its dimensions (t, n0, n1, ...) in memory
    order, outermost first, with their sizes and strides in elements."""
    dims: Tuple[str, ...]
    sizes: Tuple[int, ...]
    strides: Tuple[int, ...]

    @property
    def unit_innermost(self) -> bool:
        return bool(self.dims) and (self.strides[-1] == 1 or self.sizes[-1] == 1)

    def pattern(self) -> Tuple[Tuple[str, ...], bool]:
        return self.dims, self.unit_innermost


@dataclass(frozen=True)
class Operand:
    """A tensor to lay out: a sequence (with the time dimension at
    `time_dim`) or a state (the sequence's shape without it)."""
    strides: Tuple[int, ...]
    is_sequence: bool


def plan(shape: Sequence[int], time_dim: int, operands: Sequence[Optional[Operand]]
         ) -> List[Optional[TensorLayout]]:
    """The layouts of `operands` (None stays None) for a sequence of `shape`.
    The first operand, a sequence, orders the merged dimensions."""
    space = [d for d in range(len(shape)) if d != time_dim]
    present = [op for op in operands if op is not None]
    # Strides of every operand over the non-time dimensions, by position in `space`.
    space_strides = [_space_strides(op, space, time_dim) for op in present]
    dims = [i for i, d in enumerate(space) if shape[d] > 1]
    first = space_strides[0]
    dims.sort(key=lambda i: (-abs(first[i]), i))
    groups: List[List[int]] = []
    for i in dims:
        if groups and all(st[groups[-1][-1]] == st[i] * shape[space[i]] for st in space_strides):
            groups[-1].append(i)
        else:
            groups.append([i])
    sizes = [_product(shape[space[i]] for i in g) for g in groups]
    layouts: List[Optional[TensorLayout]] = []
    for op in operands:
        if op is None:
            layouts.append(None)
            continue
        st = _space_strides(op, space, time_dim)
        entries = [(f"n{g}", sizes[g], st[group[-1]]) for g, group in enumerate(groups)]
        if not entries:  # a single neuron
            entries = [("n0", 1, 1)]
        if op.is_sequence:
            entries.insert(0, ("t", shape[time_dim], op.strides[time_dim]))
        layouts.append(_ordered(entries))
    return layouts


def _space_strides(op: Operand, space: List[int], time_dim: int) -> List[int]:
    if op.is_sequence:
        return [op.strides[d] for d in space]
    return list(op.strides)


def _product(values) -> int:
    result = 1
    for v in values:
        result *= v
    return result


def _ordered(entries: List[Tuple[str, int, int]]) -> TensorLayout:
    """`entries` in memory order: larger strides outside, dimensions of size
    1 outermost (their stride means nothing), ties in the given order."""
    position = {name: i for i, (name, _, _) in enumerate(entries)}
    entries = sorted(entries, key=lambda e: (e[1] > 1, -abs(e[2]) if e[1] > 1 else 0,
                                             position[e[0]]))
    return TensorLayout(tuple(e[0] for e in entries), tuple(e[1] for e in entries),
                        tuple(e[2] for e in entries))
