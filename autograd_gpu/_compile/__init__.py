"""``compile`` (``torch.compile``): a step recorded once at the array level and replayed.

``_sym`` and ``_recorder`` record (SymArray, Recorder), ``_program`` turns a recording into one
Python function, ``_trace`` runs the recorded call (places, opaque optimizer calls; ``_patches``
holds its patches of NumPy, the generators and ``Tensor``), ``_state`` finds and guards what
the step reads and changes, ``_api`` is ``compile`` and its three states (record, check,
replay).
"""

from ._api import LIMITS, CompiledFunction, Explanation, OptimizedModule, compile
from ._trace import FullGraphError

__all__ = ["compile", "CompiledFunction", "OptimizedModule", "Explanation", "FullGraphError",
           "LIMITS"]
