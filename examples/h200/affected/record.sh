#!/bin/bash
# The benchmark command `nightly.sh` gives perfdb: runs it and keeps what each pass
# printed (and, in the identity pass, the compiles the recorder kept, and in a timed
# pass the rows perfdb asked for) under DIR, for the tests to replay.
#   record.sh DIR CMD ARGS...
set -o pipefail
D=$1; shift
mkdir -p "$D"
# Each timed pass (one a trial) in a file of its own: timed-1.out, timed-2.out, ...
if [ -n "$PERFDB_PASS" ]; then P=$PERFDB_PASS; else P=timed-$(( $(ls "$D"/timed-*.out 2>/dev/null | wc -l) + 1 )); fi
"$@" 2>&1 | tee "$D/$P.out"
rc=$?
if [ -n "$PERFDB_IDENTITY_DIR" ]; then cp -r "$PERFDB_IDENTITY_DIR" "$D/kept"; fi
if [ -n "$PERFDB_AFFECTED" ]; then cp "$PERFDB_AFFECTED" "$D/$P.affected.tsv"; fi
exit $rc
