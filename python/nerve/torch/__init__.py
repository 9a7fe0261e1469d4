"""nerve's spiking neurons for PyTorch models.

SpikingJelly-compatible functions (``multistep_if``, ``multistep_lif``,
``multistep_plif``), modules (``neuron.IFNode``, ``LIFNode``,
``ParametricLIFNode``) and surrogates (``surrogate.Sigmoid``, ...), forward
and backward through time on nerve's kernels, on CUDA tensors (the current
stream) and CPU tensors alike. On PyTorch >= 2.4 they are custom operators
(``torch.ops.nerve.neuron_forward`` / ``neuron_backward``) that
``torch.compile(fullgraph=True)`` traces without graph breaks.
"""

from . import neuron, surrogate
from ._ops import CUSTOM_OPS
from .neuron import IFNode, LIFNode, ParametricLIFNode
from .neuron_kernel import multistep_if, multistep_lif, multistep_plif

__all__ = ["CUSTOM_OPS", "IFNode", "LIFNode", "ParametricLIFNode", "multistep_if",
           "multistep_lif", "multistep_plif", "neuron", "surrogate"]
