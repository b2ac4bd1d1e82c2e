import os; os.environ["AUTOGRAD_GPU_KERNELS"]="0"
from tests import fake_cupy; fake_cupy.install(emulate_kernels=False)
import autograd_gpu as ag, numpy as np, gc
from autograd_gpu.utils.checkpoint import auto_checkpoint
from autograd_gpu.utils import _auto_checkpoint as A
nn=ag.nn
dev='cuda'
ag.manual_seed(0)
model = nn.Sequential(*[nn.Sequential(nn.Linear(32, 32), nn.GELU(), nn.Dropout(0.1)) for _ in range(8)]).to(dev)
x = ag.randn(2048, 32, device=dev)
lf=lambda o: (o ** 2).mean()
def step():
    for p in model.parameters(): p.grad=None
    ag.manual_seed(3)
    ag.memory.reset_peak_memory_stats(x.device)
    lf(model(x)).backward()
    return ag.memory.max_memory_allocated(x.device)
bp = step()
plan = auto_checkpoint(model, x, budget="60%", loss_fn=lf, offload=False)
print(plan.segments, plan.predicted_peak/bp, [step()/bp for _ in range(3)], A._peak(model,(x,),lf,x.device)/bp)
gc.collect(); print(ag.memory.memory_allocated(dev)/bp)
for i in range(8):
    plan.remove()
    plan = auto_checkpoint(model, x, budget="60%", loss_fn=lf, offload=False)
    s=step()
    print(plan.segments, round(plan.predicted_peak/bp,4), round(s/bp,4))
