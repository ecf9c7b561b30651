#!/bin/bash
# The benchmark command `nightly.sh` gives perfdb: runs it and keeps what each pass
# printed (and, in the identity pass, the compiles the recorder kept, and in a timed
# pass the rows perfdb asked for) under DIR, for the tests to replay.
#   record.sh DIR CMD ARGS...
set -o pipefail
D=$1; shift
P=${PERFDB_PASS:-timed}
mkdir -p "$D"
"$@" 2>&1 | tee "$D/$P.out"
rc=$?
if [ -n "$PERFDB_IDENTITY_DIR" ]; then cp -r "$PERFDB_IDENTITY_DIR" "$D/kept"; fi
if [ -n "$PERFDB_AFFECTED" ]; then cp "$PERFDB_AFFECTED" "$D/affected.tsv"; fi
exit $rc
