#!/bin/sh
# sh deploy/release/krew.sh VERSION REPO DIR — the krew manifest of the
# release on stdout: deploy/kubectl-plugin/trainer.yaml with VERSION on its
# version line, REPO (the Makefile's PROJECT_REPO) on homepage, and for each
# platform the uri of its tarball and its sha256, read from
# DIR/trainer-webhook_VERSION_linux_ARCH.tar.gz. A platform whose tarball is
# not in DIR is left out (make krew builds one architecture's; make release
# both, linux/amd64 and linux/arm64).
set -eu
[ $# = 3 ] || { echo "usage: sh deploy/release/krew.sh VERSION REPO DIR" >&2 && exit 2; }
version=$1 repo=$2 dir=$3
root=$(cd "$(dirname "$0")/../.." && pwd)
sums=""
for t in "$dir"/trainer-webhook_"$version"_linux_*.tar.gz; do
	[ -e "$t" ] || continue
	a=${t##*_linux_} && a=${a%.tar.gz}
	sums="$sums $a=$(sha256sum "$t" | cut -d' ' -f1)"
done
[ -n "$sums" ] || { echo "krew.sh: no trainer-webhook_${version}_linux_*.tar.gz in $dir" >&2 && exit 1; }
# A platform is the lines from "    - selector:" to the next one (or the end).
awk -v version="$version" -v repo="$repo" -v sums="$sums" '
BEGIN { n = split(sums, kv, " "); for (i = 1; i <= n; i++) { split(kv[i], p, "="); sum[p[1]] = p[2] } }
function flush() { if (nb && (arch in sum)) for (i = 1; i <= nb; i++) print block[i]; nb = 0; inplat = 0 }
/^  version: / { print "  version: v" version; next }
/^  homepage: / { print "  homepage: " repo; next }
/^    - selector:/ { flush(); inplat = 1; arch = "" }
inplat {
	if ($1 == "arch:") arch = $2
	if ($1 == "uri:") $0 = "      uri: " repo "/releases/download/v" version "/trainer-webhook_" version "_linux_" arch ".tar.gz"
	if ($1 == "sha256:") $0 = "      sha256: " ((arch in sum) ? sum[arch] : "")
	block[++nb] = $0
	next
}
{ print }
END { flush() }
' "$root/deploy/kubectl-plugin/trainer.yaml"
