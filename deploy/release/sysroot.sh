#!/bin/sh
# sh deploy/release/sysroot.sh ARCH DIR — a sysroot for cross-building
# trainer-webhook for ARCH (arm64) on another Debian machine: the Debian -dev
# packages of the libraries the Makefile's PKGS names, built for ARCH, with
# every library they depend on, unpacked into DIR from Debian's own .debs, at
# the versions the machine's sources offer when it runs. apt resolves and
# downloads them with a private state of its own under DIR.apt (only ARCH, an
# empty list of installed packages, the machine's sources.list): the
# machine's dpkg database, its architectures and its packages are neither
# read nor changed, and no root is needed. DIR/var/lib/dpkg holds what dpkg
# would have recorded had it installed them (status, info/*.list), so that
# deploy/image/sbom.sh names every library's package and version with
# `dpkg --admindir`. Absolute symlinks are made relative, so that they stay
# inside DIR (for the cross linker and for qemu-ARCH-static -L DIR).
# The Makefile runs it for `make ARCH=arm64` (into build/sysroot-arm64).
set -eu
[ $# = 2 ] || { echo "usage: sh deploy/release/sysroot.sh ARCH DIR" >&2 && exit 2; }
arch=$1 dir=$(realpath -m "$2") # apt wants absolute paths
# The build's -dev packages (tests/deps.sh's, for the binary only) and glibc's.
PKGS="libc6-dev libmicrohttpd-dev libgnutls28-dev libssl-dev libcjson-dev libyaml-dev libcurl4-openssl-dev libpcre2-dev"
state=$dir.apt
rm -rf "$dir" "$state"
mkdir -p "$state/lists/partial" "$state/archives/partial" "$dir/var/lib/dpkg/info" "$dir/var/lib/dpkg/updates"
: >"$state/status"
apt() {
	apt-get -q -o APT::Architecture="$arch" -o APT::Architectures::="$arch" \
		-o Dir::State::Lists="$state/lists" -o Dir::State::status="$state/status" \
		-o Dir::Cache="$state" -o Dir::Cache::archives="$state/archives" \
		-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o Debug::NoLocking=1 "$@"
}
echo "sysroot: the $arch packages $PKGS and their libraries into $dir" >&2
apt update >"$state/update.log" 2>&1 || { cat "$state/update.log" >&2 && exit 1; }
apt install -y --download-only --no-install-recommends $PKGS >"$state/install.log" 2>&1 ||
	{ cat "$state/install.log" >&2 && exit 1; }
db=$dir/var/lib/dpkg
: >"$db/status"
for deb in "$state"/archives/*.deb; do
	dpkg-deb -x "$deb" "$dir"
	pkg=$(dpkg-deb -f "$deb" Package)
	# info/PKG.list: no info/format, so dpkg reads the database in its
	# first format, where list files are never named with the architecture.
	{ printf 'Package: %s\nStatus: install ok installed\n' "$pkg" &&
		dpkg-deb -f "$deb" Priority Section Installed-Size Maintainer Architecture Multi-Arch \
			Source Version Depends Pre-Depends Description && echo; } >>"$db/status"
	dpkg-deb -c "$deb" | awk '{ p = $6; sub(/^\./, "", p); sub(/\/$/, "", p); print (p == "" ? "/." : p) }' \
		>"$db/info/$pkg.list"
done
# /lib/ld-linux-aarch64.so.1 -> /lib/aarch64-linux-gnu/... and the like:
# relative, so that they resolve inside DIR.
find "$dir" -type l | while read -r l; do
	t=$(readlink "$l")
	case $t in
	/*) ln -sfn "$(realpath -m -s --relative-to="$(dirname "$l")" "$dir$t")" "$l" ;;
	esac
done
echo "sysroot: $(ls "$state"/archives/*.deb | wc -l) packages of $arch in $dir" >&2
