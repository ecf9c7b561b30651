#!/bin/sh
# perfdb's CI steps: what examples/ci/github-workflow.yml and examples/ci/gitlab-ci.yml
# run, so that tests/it/ci_recipes.rs runs the very same lines against a local warehouse
# and a local git repository. Run from the project's checkout.
#
#   steps.sh main    on a push to main: run $BENCH once, ingested under label $MAIN at HEAD
#   steps.sh pr      on a pull request: run $BENCH on HEAD, its outputs compared straight
#                    with $MAIN@merge-base in one process and kept under label pr-SHA;
#                    the markdown report goes to perfdb-report.md (and to
#                    $GITHUB_STEP_SUMMARY when set); exits as `perfdb compare` does
#   steps.sh ab      on a pull request, on one runner: the merge base checked out beside,
#                    `perfdb ab` of it against HEAD, interleaved; exits as `perfdb ab` does
#
# Environment: BENCH (the benchmark command, run with sh -c), TRIALS (runs of it a side,
# each one trial: default 5; `ab` decides its own), PERFDB_WAREHOUSE (a
# directory, or s3://bucket/prefix with AWS_* credentials), MAIN (default main), CONTROL
# (the control variant, default torch), MACHINE (the machine class tag, default the
# runner's host name), PERFDB (the binary, default perfdb).
set -eu
PERFDB="${PERFDB:-perfdb}"
MAIN="${MAIN:-main}"
CONTROL="${CONTROL:-torch}"
MACHINE="${MACHINE:-$(hostname)}"
TRIALS="${TRIALS:-5}"
: "${BENCH:?set BENCH to the benchmark command}"
sha=$(git rev-parse HEAD)

case "${1:-}" in
main)
  for _ in $(seq "$TRIALS"); do
    "$PERFDB" run --label "$MAIN" --commit "$sha" --git-dir . --machine "$MACHINE" \
      -- sh -c "$BENCH"
  done
  ;;
pr)
  label="pr-$(echo "$sha" | cut -c1-12)"
  # Each trial's output a file; compared straight from the folder in one process and
  # kept under the PR's label after the verdict. A trial that fails fails the job, as a
  # failed head run fails `compare`.
  out=$(mktemp -d)
  for i in $(seq "$TRIALS"); do
    if ! sh -c "$BENCH" > "$out/trial$i.log" 2>&1; then
      cat "$out/trial$i.log" >&2
      echo "steps.sh: trial $i of the benchmark failed on $sha" >&2
      rm -rf "$out"
      exit 1
    fi
  done
  set +e
  "$PERFDB" compare "$MAIN@merge-base" "$out/" --control "$CONTROL" --format markdown \
    --keep "$label" --commit "$sha" --machine "$MACHINE" > perfdb-report.md
  rc=$?
  set -e
  rm -rf "$out"
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat perfdb-report.md >> "$GITHUB_STEP_SUMMARY"; fi
  exit "$rc"
  ;;
ab)
  base=$(git merge-base HEAD "$MAIN" 2>/dev/null || git merge-base HEAD "origin/$MAIN")
  dir="../perfdb-base-$(echo "$base" | cut -c1-12)"
  git worktree add --detach --force "$dir" "$base" >/dev/null
  set +e
  "$PERFDB" ab --base-dir "$dir" --head-dir . --commit-base "$base" --commit-head "$sha" \
    --machine "$MACHINE" --control "$CONTROL" --format markdown -- sh -c "$BENCH" \
    > perfdb-report.md
  rc=$?
  set -e
  git worktree remove --force "$dir"
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat perfdb-report.md >> "$GITHUB_STEP_SUMMARY"; fi
  exit "$rc"
  ;;
*)
  echo "usage: steps.sh main|pr|ab (see the comment at its top)" >&2
  exit 2
  ;;
esac
