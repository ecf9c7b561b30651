"""Two compiles of `kernel_identity_add.py` from two folders, the add kernel's PTX and TTGIR
diffed: what in them names the folder (`python kernel_identity_diff.py OUT kernel_identity_add.py`)."""
import os, subprocess, sys, re, difflib, glob
out = sys.argv[1]
src = open(sys.argv[2]).read()
for name in ["a", "b"]:
    d = os.path.join(out, "w", name); os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "kernel_identity_add.py"), "w").write(src)
    env = dict(os.environ, TRITON_CACHE_DIR=os.path.join(d, "cache"), PYTHONPATH=d)
    subprocess.run([sys.executable, "-c", "import kernel_identity_add as k; k.go()"], check=True, env=env, cwd=d)
def art(name, ext):
    f = glob.glob(os.path.join(out, "w", name, "cache", "*", "add_kernel." + ext))[0]
    return open(f, errors="replace").read()
for ext in ["ptx", "ttgir"]:
    a, b = art("a", ext), art("b", ext)
    diff = [l for l in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0)]
    print("==", ext, len(diff), "diff lines")
    print("\n".join(diff[:30]))
print("== ttgir head")
print("\n".join(art("a", "ttgir").splitlines()[:6]))
print("== ptx head")
print("\n".join(art("a", "ptx").splitlines()[:25]))
