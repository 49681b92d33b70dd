#!/bin/sh
# compare.sh BASE [BENCH] [ROUNDS]: the load benchmark of commit BASE
# ("before") and of the working tree ("after"), built once each with
# `go test -c` and run alternately (after, before, after, ...) on the same
# machine, ROUNDS rounds (default 3). BENCH is the -test.bench pattern
# (default: the memory store with the raised bound, where the memory per
# session is measured; 'ConcurrentThreads' runs everything, about 5
# minutes per binary).
#
# With HARNESS=1 the "before" binary is BASE's code with the working
# tree's benchmark (internal/loadtest, internal/testenv/modeltest): the
# same measurement of older code, e.g. the scripted model in its own
# process on both sides.
#
# Needs redis-server for the Redis cases. Run from anywhere in the repo:
#   internal/loadtest/compare.sh 49c79e9
#   HARNESS=1 internal/loadtest/compare.sh 49c79e9 'ConcurrentThreads/store=memory/max_runs=1000' 4
set -eu
base=${1:?usage: compare.sh BASE [BENCH] [ROUNDS]}
bench=${2:-ConcurrentThreads/store=memory/max_runs=1000}
rounds=${3:-3}
top=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'git -C "$top" worktree remove --force "$tmp/base" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git -C "$top" worktree add --detach "$tmp/base" "$base" >/dev/null
if [ "${HARNESS:-}" = 1 ]; then
	for d in internal/loadtest internal/testenv/modeltest; do
		rm -rf "${tmp:?}/base/$d"
		cp -R "$top/$d" "$tmp/base/$d"
	done
fi
(cd "$tmp/base" && nice -n 10 go test -c -o "$tmp/before.test" ./internal/loadtest/)
(cd "$top" && nice -n 10 go test -c -o "$tmp/after.test" ./internal/loadtest/)
cd "$top/internal/loadtest"
i=1
while [ "$i" -le "$rounds" ]; do
	for v in after before; do
		echo "== $v (round $i, $(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg))"
		"$tmp/$v.test" -test.run '^$' -test.bench "$bench" -test.benchtime 1x
	done
	i=$((i + 1))
done
