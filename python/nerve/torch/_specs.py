"""The spec text of a neuron layer's forward and backward kernels.

A kernel is specialised on what changes its code: the neuron and its
constants, the element type, which optional tensors it reads and writes, and
the layout pattern of each tensor (`_layout.Plan.pattern`). The batch and
the neuron count are bound at launch; so is T, except for short sequences on
the GPU (`static_sizes`), whose kernels load all their steps together.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, List, Optional, Sequence, Tuple

from .surrogate import SurrogateSpec

# dtype names as tdim spells them, by torch dtype name.
TDIM_TYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64"}


@dataclass(frozen=True)
class Neuron:
    """A neuron layer's constants. kind: "if", "lif", "plif" (decay sigmoid(w),
    w a 0-d tensor) or "plif_decay" (the decay itself a 0-d tensor, as
    SpikingJelly's multistep_plif takes r_tau)."""
    kind: str
    v_threshold: float
    v_reset: Optional[float]
    detach_reset: bool
    surrogate: SurrogateSpec
    tau: float = 2.0
    decay_input: bool = True

    @property
    def has_param(self) -> bool:
        return self.kind in ("plif", "plif_decay")

    def key(self) -> str:
        """A string that names the neuron (a custom op's argument)."""
        return json.dumps([self.kind, self.v_threshold, self.v_reset, self.detach_reset,
                           self.surrogate[0], [list(p) for p in self.surrogate[1]], self.tau,
                           self.decay_input])


@lru_cache(maxsize=None)
def neuron_from_key(key: str) -> Neuron:
    kind, vth, vr, detach, sg_name, sg_params, tau, decay = json.loads(key)
    return Neuron(kind, vth, vr, detach, (sg_name, tuple((p, v) for p, v in sg_params)), tau,
                  decay)


def float_literal(value: float) -> str:
    """`value` as an MLIR float literal: exact (shortest round-trip), with a
    decimal point."""
    text = repr(float(value))
    mantissa, e, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + (e + exponent if e else "")


# The longest sequence a GPU kernel is compiled for (docs/decisions.md):
# nerve's time blocks are 16 f32 or 32 16-bit steps; the steps after the
# last whole block run one at a time, so a shorter sequence of unknown
# length would run entirely that way, one load in flight a thread.
SHORT_SEQUENCE = 32


def static_sizes(steps: int, target: str) -> Dict[str, int]:
    """The sizes a kernel is compiled for: T when the sequence is short and
    runs on the GPU (the compiler then makes the whole sequence one block);
    nothing otherwise (the CPU walks one step at a time anyway)."""
    if target == "cuda" and 0 < steps <= SHORT_SEQUENCE:
        return {"t": steps}
    return {}


def tensor_type(dims: Sequence[str], unit: bool, dtype: str,
                sizes: Optional[Dict[str, int]] = None) -> str:
    """A tdim tensor over `dims` in memory order, strides bound at launch (the
    innermost 1 when `unit`), sizes too except those `sizes` fixes."""
    if not dims:
        return f"!tdim.tensor<[], {dtype}>"
    strides = ["?"] * len(dims)
    if unit:
        strides[-1] = "1"
    sizes = sizes or {}
    spelled = ", ".join(f"{d}: {sizes.get(d, '?')}" for d in dims)
    return f"!tdim.tensor<[{spelled}], {dtype}, strides = [{', '.join(strides)}]>"


def _attrs(neuron: Neuron, backward: bool) -> str:
    items: List[str] = []
    if neuron.kind == "lif":
        items.append(f"tau = {float_literal(neuron.tau)}")
    if neuron.kind in ("lif", "plif"):
        items.append(f"decay_input = {'true' if neuron.decay_input else 'false'}")
    items.append(f"v_threshold = {float_literal(neuron.v_threshold)}")
    if neuron.v_reset is not None:
        items.append(f"v_reset = {float_literal(neuron.v_reset)}")
    if backward:
        if neuron.detach_reset:
            items.append("detach_reset")
        name, params = neuron.surrogate
        spelled = "".join(f", {p} = {float_literal(v)}" for p, v in params)
        items.append(f"surrogate = #neuron.surrogate<{name}{spelled}>")
    return "{" + ", ".join(items) + "}"


def _decay_charge(neuron: Neuron, compute: str) -> str:
    """The charge region of a LIF whose decay is the parameter r:
    h = v + (x - (v - v_reset)) r with decay_input, else h = v - (v - v_reset) r + x
    (soft reset leaks toward 0). Its names stay clear of the kernel's."""
    lines = [f"^bb0(%c_v: {compute}, %c_x: {compute}, %c_r: {compute}):"]
    gap = "%c_v"
    if neuron.v_reset is not None:
        lines.append(f"  %c_vr = arith.constant {float_literal(neuron.v_reset)} : {compute}")
        lines.append(f"  %c_gap = arith.subf %c_v, %c_vr : {compute}")
        gap = "%c_gap"
    if neuron.decay_input:
        lines += [f"  %c_in = arith.subf %c_x, {gap} : {compute}",
                  f"  %c_dv = arith.mulf %c_in, %c_r : {compute}",
                  f"  %c_h = arith.addf %c_v, %c_dv : {compute}"]
    else:
        lines += [f"  %c_leak = arith.mulf {gap}, %c_r : {compute}",
                  f"  %c_vl = arith.subf %c_v, %c_leak : {compute}",
                  f"  %c_h = arith.addf %c_vl, %c_x : {compute}"]
    lines.append(f"  neuron.yield %c_h : {compute}")
    return "charge {\n" + "\n".join(lines) + "\n}"


@dataclass(frozen=True)
class Signature:
    """A kernel's arguments: (name, type) for inputs and outputs, in order."""
    inputs: Tuple[Tuple[str, str], ...]
    outputs: Tuple[Tuple[str, str], ...]

    def header(self, name: str) -> str:
        ins = ", ".join(f"%{n}: {t}" for n, t in self.inputs)
        outs = ", ".join(f"%{n}: {t}" for n, t in self.outputs)
        return f"tdim.kernel @{name}({ins}) -> ({outs}) {{"


def _operand(types: Dict[str, str], keyword: str, name: str) -> str:
    return f"{keyword}(%{name} : {types[name]})" if name in types else ""


def forward_spec(neuron: Neuron, types: Dict[str, str]) -> str:
    """The forward kernel over the tensors `types` names (x, v_init, param;
    spike, v_seq, h_seq, v_last), each with its type."""
    inputs = tuple((n, types[n]) for n in ("x", "v_init", "param") if n in types)
    outputs = tuple((n, types[n]) for n in ("spike", "v_seq", "h_seq", "v_last") if n in types)
    op = "generic" if neuron.kind == "plif_decay" else neuron.kind
    parts = [f"neuron.{op}", _operand(types, "ins", "x"), _operand(types, "init", "v_init")]
    if neuron.kind == "plif":
        parts.append(_operand(types, "w", "param"))
    elif neuron.kind == "plif_decay":
        parts.append(_operand(types, "params", "param"))
    parts += [_operand(types, "outs", "spike"), _operand(types, "v_seq", "v_seq"),
              _operand(types, "h_seq", "h_seq"), _operand(types, "v_last", "v_last"),
              "time t", _attrs(neuron, backward=False)]
    if neuron.kind == "plif_decay":
        parts.append(_decay_charge(neuron, _compute_type(types["x"])))
    body = " ".join(p for p in parts if p)
    return "\n".join([Signature(inputs, outputs).header("forward"), body, "tdim.return", "}"])


def backward_spec(neuron: Neuron, types: Dict[str, str]) -> str:
    """The backward kernel over the tensors `types` names (h_seq, v_init,
    param, grad_spike, grad_v_seq, grad_v_last; grad_x, grad_v_init,
    grad_param)."""
    inputs = tuple((n, types[n]) for n in
                   ("h_seq", "v_init", "param", "grad_spike", "grad_v_seq", "grad_v_last")
                   if n in types)
    outputs = tuple((n, types[n]) for n in ("grad_x", "grad_v_init", "grad_param")
                    if n in types)
    op = {"plif_decay": "generic_grad"}.get(neuron.kind, neuron.kind + "_grad")
    parts = [f"neuron.{op}", _operand(types, "ins", "h_seq")]
    if neuron.has_param:
        parts.append(_operand(types, "init", "v_init"))
        parts.append(_operand(types, "w" if neuron.kind == "plif" else "params", "param"))
    parts += [_operand(types, "grad_spike", "grad_spike"),
              _operand(types, "grad_v_seq", "grad_v_seq"),
              _operand(types, "grad_v_last", "grad_v_last"), _operand(types, "outs", "grad_x"),
              _operand(types, "grad_v_init", "grad_v_init")]
    if neuron.has_param:
        parts.append(_operand(types, "grad_w" if neuron.kind == "plif" else "grad_params",
                              "grad_param"))
    parts += ["time t", _attrs(neuron, backward=True)]
    if neuron.kind == "plif_decay":
        parts.append(_decay_charge(neuron, _compute_type(types["h_seq"])))
    body = " ".join(p for p in parts if p)
    return "\n".join([Signature(inputs, outputs).header("backward"), body, "tdim.return", "}"])


def _compute_type(tensor: str) -> str:
    """The arithmetic type of a neuron over a tensor of this type: f64 for f64
    storage, f32 otherwise (f16 and bf16 are storage types)."""
    return "f64" if ", f64" in tensor else "f32"
