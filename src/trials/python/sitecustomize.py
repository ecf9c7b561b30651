"""perfdb's energy hook, first on PYTHONPATH in `perfdb ab --energy-per-call` trials:
`perfdb_energy.install()` (each `triton.testing.do_bench`'s function measured for energy
per call after its timing), then the `sitecustomize` this file shadows, if any."""

import importlib.machinery
import importlib.util
import json
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))

if os.environ.get("PERFDB_ENERGY_DO_BENCH"):
    try:
        import perfdb_energy

        perfdb_energy.install()
    except Exception as e:  # the benchmark runs as it would without perfdb
        sys.stdout.write("perfdb-energy error " + json.dumps({"why": repr(e)}) + "\n")

_rest = [p for p in sys.path if os.path.abspath(p or ".") != _here]
_spec = importlib.machinery.PathFinder.find_spec("sitecustomize", _rest)
if _spec is not None and _spec.loader is not None:
    _mod = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_mod)
