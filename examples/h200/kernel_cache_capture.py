"""The Triton cache a short pass leaves, kept for replay: the six kernels of
`kernel_identity.py` compiled for the base file and for three edits (a comment inside a
kernel, the shared helper, a constexpr default), each in its own folder and cache, and of
each kernel the files an identity is read from (`.ttgir`, `.json`) copied out.

    python kernel_cache_capture.py OUT

Writes OUT/<edit>/<kernel>.ttgir and .json (the cache folder's hash dropped), and
OUT/versions.txt.
"""
import os
import shutil
import subprocess
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_identity as ki  # noqa: E402

KEEP = ["base", "comment_in_kernel", "shared_helper", "constexpr_default"]


def main():
    out = sys.argv[1]
    work = os.path.join(out, "work")
    for name, old, new in ki.EDITS:
        if name not in KEEP:
            continue
        src = textwrap.dedent(ki.KERNELS)
        if old is not None:
            src = src.replace(old, new, 1)
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        open(os.path.join(d, "kernels.py"), "w").write(src)
        cache = os.path.join(d, "cache")
        env = dict(os.environ, TRITON_CACHE_DIR=cache, PYTHONPATH=d)
        subprocess.run([sys.executable, "-c", "import kernels; kernels.run_all()"], check=True, env=env, cwd=d)
        dest = os.path.join(out, name)
        os.makedirs(dest, exist_ok=True)
        for key in os.listdir(cache):
            for f in os.listdir(os.path.join(cache, key)):
                if f.endswith(".ttgir") or (f.endswith(".json") and not f.startswith("__grp__")):
                    shutil.copy(os.path.join(cache, key, f), os.path.join(dest, f))
    import torch, triton
    with open(os.path.join(out, "versions.txt"), "w") as f:
        f.write(f"torch {torch.__version__}\ntriton {triton.__version__}\ncuda {torch.version.cuda}\n"
                f"device {torch.cuda.get_device_name(0)}\n")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
