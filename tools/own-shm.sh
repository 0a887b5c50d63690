#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run one test with a /dev/shm of its own (a private mount namespace with a
# fresh tmpfs there), so that a test attaching to every instrumented
# process it finds (`mach6 serve --attach-all`) sees only its own games and
# can run beside other tests.
#   tools/own-shm.sh PROGRAM ARGS...
# As root the namespace is a plain one; otherwise a user namespace maps the
# user to root in it. Where neither is allowed the program runs as it is
# and says so on stderr (it then sees every segment of the user).
set -u
inner='mount -t tmpfs -o size=1g,mode=1777 mach6-test-shm /dev/shm && exec "$@"'
if unshare --mount --propagation private true 2>/dev/null; then
  exec unshare --mount --propagation private sh -c "$inner" sh "$@"
elif unshare --map-root-user --mount true 2>/dev/null; then
  exec unshare --map-root-user --mount sh -c "$inner" sh "$@"
fi
echo "own-shm.sh: no private mount namespace here; $1 shares /dev/shm with other tests" >&2
exec "$@"
