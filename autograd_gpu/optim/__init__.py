"""``autograd_gpu.optim``: optimizers and learning-rate schedulers with PyTorch's API."""

from __future__ import annotations

from . import lr_scheduler
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adadelta, Adamax
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam, RAdam
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .rprop import ASGD, Rprop
from .sgd import SGD

__all__ = ["ASGD", "LBFGS", "SGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax",
           "Muon", "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "lr_scheduler"]
