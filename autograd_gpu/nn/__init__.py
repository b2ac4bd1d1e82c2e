"""``torch.nn``: modules, parameters, layers, losses, ``functional``, ``init`` and ``utils``.

Each module file lists its public classes in ``__all__`` (one file per family, as PyTorch's
``nn.modules``); they are gathered here.
"""

from __future__ import annotations

from . import functional, init, utils
from .activation import *  # noqa: F401,F403
from .channelshuffle import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .module import Module
from .normalization import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .parameter import Parameter
from . import parallel  # noqa: E402  (``torch.nn.parallel``)
from .parallel import DataParallel
from .pixelshuffle import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
from . import (activation, channelshuffle, container, conv, distance, dropout, fold, linear,  # noqa: E402
               loss, normalization, padding, pixelshuffle, pooling, rnn, sparse, transformer,
               upsampling)

FAMILIES = (activation, channelshuffle, container, conv, distance, dropout, fold, linear, loss,
            normalization, padding, pixelshuffle, pooling, rnn, sparse, transformer, upsampling)
__all__ = ["DataParallel", "Module", "Parameter", "functional", "init", "parallel", "utils"]
for _family in FAMILIES:
    __all__ += _family.__all__
