"""Function transforms, as ``torch.func``: ``grad``, ``grad_and_value``, ``vjp``, ``jvp``,
``jacrev``, ``jacfwd``, ``hessian``, ``vmap`` and ``functional_call``.

They compose freely: ``vmap(grad(f))`` gives per-sample gradients, ``jacfwd(jacrev(f))`` a
Hessian. ``vmap`` really batches: each op runs once on the whole batch through its batching rule
(``_rules``); see ``_batched`` for how batched tensors and the autograd graph fit together.
"""

from __future__ import annotations

from . import _rules  # noqa: F401  (registers the batching rules)
from ._batched import BatchedTensor, _install
from ._transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, vjp
from ._vmap import vmap

_install()

__all__ = ["BatchedTensor", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "vjp",
           "vmap"]
