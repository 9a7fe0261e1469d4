"""nerve's spiking neurons for PyTorch models.

SpikingJelly-compatible functions (``multistep_if``, ``multistep_lif``,
``multistep_plif``), modules (``neuron.IFNode``, ``LIFNode``,
``ParametricLIFNode``), neurons of any model (``NeuronModel``,
``NeuronNode``; ``QIFNode``, ``EIFNode``, ``IzhikevichNode``, ``ALIFNode``,
``AdExNode``), surrogates (``surrogate.Sigmoid``, ...) and SpikingJelly's
network helpers (``functional.reset_net``, ...), forward
and backward through time on nerve's kernels, on CUDA tensors (the current
stream) and CPU tensors alike. On PyTorch >= 2.4 they are custom operators
(``torch.ops.nerve.neuron_forward`` / ``neuron_backward``) that
``torch.compile(fullgraph=True)`` traces without graph breaks.
"""

from . import functional, models, neuron, surrogate
from ._ops import CUSTOM_OPS
from .models import (AdExNode, ALIFNode, EIFNode, IzhikevichNode, NeuronModel, NeuronNode,
                     QIFNode, multistep_model)
from .neuron import IFNode, LIFNode, ParametricLIFNode
from .neuron_kernel import multistep_if, multistep_lif, multistep_plif

__all__ = ["CUSTOM_OPS", "AdExNode", "ALIFNode", "EIFNode", "IFNode", "IzhikevichNode",
           "LIFNode", "NeuronModel", "NeuronNode", "ParametricLIFNode", "QIFNode", "functional",
           "multistep_if", "multistep_lif", "multistep_model", "multistep_plif", "models",
           "neuron", "surrogate"]
