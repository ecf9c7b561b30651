"""A small persistent background load on one GPU, to make that GPU slower in software for
the blocked-design experiment (a GPU a few percent slower than the others): a loop of
copies of MB megabytes, each followed by a pause of PAUSE_MS, until it is killed. Pinned
like any process (CUDA_VISIBLE_DEVICES). Prints `background: ready` once running.

  MB (default 16), PAUSE_MS (default 1.0)
"""
import os
import sys
import time

import torch

mb = float(os.environ.get("MB", "16"))
pause = float(os.environ.get("PAUSE_MS", "1.0")) / 1e3
n = int(mb * (1 << 20) / 4)
x = torch.randn(n, device="cuda")
y = torch.empty_like(x)
print("background: ready", flush=True)
sys.stdout.close()
while True:
    y.copy_(x)
    torch.cuda.synchronize()
    if pause > 0:
        time.sleep(pause)
