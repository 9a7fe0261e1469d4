"""SpikingJelly's network-wide helpers, for networks of nerve's neurons.

`reset_net`, `set_step_mode` and `detach_net` walk a network's modules as
SpikingJelly's ``functional`` ones do, so training loops written for
SpikingJelly run unchanged once its ``neuron`` and ``surrogate`` imports name
nerve's: a module that has ``reset()`` / ``detach()`` is reset / detached, a
module with a ``step_mode`` attribute gets the new mode. Modules of either
package may be mixed in one network.
"""

from __future__ import annotations

from torch import nn

__all__ = ["detach_net", "reset_net", "set_step_mode"]


def _check_net(net: object) -> None:
    if not isinstance(net, nn.Module):
        raise TypeError(f"net must be a torch.nn.Module, not {type(net).__name__}")


def _call_on_each(net: nn.Module, method: str) -> None:
    """Calls `method()` on every module of `net` that has one."""
    _check_net(net)
    for module in net.modules():
        fn = getattr(module, method, None)
        if callable(fn):
            fn()


def reset_net(net: nn.Module) -> None:
    """Puts every stateful module of `net` back to its resting state (call
    it between independent sequences, e.g. after each batch)."""
    _call_on_each(net, "reset")


def detach_net(net: nn.Module) -> None:
    """Cuts every stateful module's state from the graph of earlier steps
    (truncated backpropagation through time)."""
    _call_on_each(net, "detach")


def set_step_mode(net: nn.Module, step_mode: str) -> None:
    """Sets ``step_mode`` ('s': one step; 'm': a sequence over time) on every
    module of `net` that has one."""
    _check_net(net)
    if step_mode not in ("s", "m"):
        raise ValueError(f"step_mode must be 's' (one step) or 'm' (a sequence), not "
                         f"{step_mode!r}")
    for module in net.modules():
        if hasattr(module, "step_mode"):
            module.step_mode = step_mode
