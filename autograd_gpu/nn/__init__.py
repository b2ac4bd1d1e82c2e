"""``torch.nn``: modules, parameters, layers, losses, ``functional``, ``init`` and ``utils``."""

from __future__ import annotations

from . import functional, init, utils
from .activation import ELU, GELU, LeakyReLU, LogSoftmax, ReLU, Sigmoid, SiLU, Softmax, Softplus, Tanh
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv2d
from .dropout import Dropout
from .linear import Flatten, Identity, Linear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from .parameter import Parameter
from .pooling import AvgPool2d, MaxPool2d
from .sparse import Embedding

__all__ = [
    "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "Dropout", "ELU", "Flatten", "GELU",
    "Identity", "L1Loss", "LeakyReLU", "Linear", "LogSoftmax", "MSELoss", "Module", "ModuleDict",
    "ModuleList", "NLLLoss", "Parameter", "ReLU", "Sequential", "SiLU", "Sigmoid", "Softmax",
    "Softplus", "Tanh", "functional", "init", "utils",
]
__all__ += ["BatchNorm1d", "BatchNorm2d", "Embedding", "LayerNorm"]
__all__ += ["AvgPool2d", "Conv2d", "MaxPool2d"]
