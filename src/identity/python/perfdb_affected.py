"""Which rows `perfdb run --affected` asks a benchmark to time.

    import perfdb_affected
    if perfdb_affected.wanted(table="softmax", rows="4096", cols="1024"): ...

PERFDB_AFFECTED names a file with one row a line: `table<TAB>variant<TAB>key=value<TAB>...`.
`wanted(**fields)` is true when some listed row has every field given (compared as text;
`table` and `variant` are fields too), and always true when PERFDB_AFFECTED is not set: a
benchmark that asks runs everything outside `perfdb run --affected`.
"""

import os

_rows = None


def _load():
    global _rows
    path = os.environ.get("PERFDB_AFFECTED")
    if not path:
        return None
    rows = []
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 2:
                continue
            row = {"table": parts[0], "variant": parts[1]}
            for kv in parts[2:]:
                k, _, v = kv.partition("=")
                row[k] = v
            rows.append(row)
    _rows = rows
    return rows


def wanted(**fields):
    rows = _rows if _rows is not None else _load()
    if rows is None:
        return True
    want = {k: str(v) for k, v in fields.items()}
    return any(all(r.get(k) == v for k, v in want.items()) for r in rows)
