"""Function transforms, as ``torch.func``: ``grad``, ``grad_and_value``, ``vjp``, ``jvp``,
``jacrev``, ``jacfwd``, ``hessian``, ``vmap`` and ``functional_call``.

They compose freely: ``vmap(grad(f))`` gives per-sample gradients, ``jacfwd(jacrev(f))`` a
Hessian. ``vmap`` really batches: each op runs once on the whole batch through its batching rule
(``_rules``); see ``_batched`` for how batched tensors and the autograd graph fit together.
"""

from __future__ import annotations

from . import _rules  # noqa: F401  (registers the batching rules)
from . import _custom  # noqa: F401  (autograd.Function under vmap)
from ._batched import BatchedTensor, _install
from ._functional_call import functional_call, stack_module_state
from ._transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp
from ._vmap import vmap

_install()

__all__ = ["BatchedTensor", "functional_call", "grad", "grad_and_value", "hessian", "jacfwd",
           "jacrev", "jvp", "stack_module_state", "vjp", "vmap"]
