#!/bin/sh
# sh deploy/release/tarball.sh BIN VERSION OUT.tar.gz — the release tarball
# of trainer-webhook for this machine's architecture, which runs on any glibc
# Linux (Debian 11, Ubuntu 20.04 and later: glibc 2.31 on) whatever its
# libraries: it carries the ones BIN links (rootfs.sh's closure, glibc and its
# loader included) in lib/, and trainer-webhook is a wrapper that runs the
# binary through that loader with that library path, so nothing of the host's
# is loaded but the kernel. kubectl-trainer (the krew plugin) runs it from
# beside itself. LICENSE and NOTICE go with it. Entries are sorted, owned by
# 0:0 and dated SOURCE_DATE_EPOCH, so one commit gives one tarball. A binary
# cross-built for another architecture (make ARCH=arm64 krew): SYSROOT and
# CROSS in the environment, as rootfs.sh reads them.
set -eu
[ $# = 3 ] || { echo "usage: sh deploy/release/tarball.sh BIN VERSION OUT.tar.gz" >&2 && exit 2; }
bin=$1 version=$2 out=$3
: "${SOURCE_DATE_EPOCH:?tarball.sh: set SOURCE_DATE_EPOCH (the commit time)}"
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sh "$root/deploy/image/rootfs.sh" "$bin" "$tmp/rootfs"
dir=$tmp/trainer-webhook
mkdir -p "$dir/lib"
mv "$tmp/rootfs/usr/local/bin/trainer-webhook" "$dir/lib/trainer-webhook"
find "$tmp/rootfs" -type f -exec mv {} "$dir/lib/" \;
loader=$(cd "$dir/lib" && ls ld-linux*)
cat >"$dir/trainer-webhook" <<WRAPPER
#!/bin/sh
# trainer-webhook $version: the binary in lib/ run by the loader and with the
# libraries it was built with (deploy/release/tarball.sh), on any glibc Linux.
here=\$(dirname "\$(readlink -f "\$0")")
exec "\$here/lib/$loader" --library-path "\$here/lib" --argv0 "\$0" "\$here/lib/trainer-webhook" "\$@"
WRAPPER
cp "$root/deploy/kubectl-plugin/kubectl-trainer" "$root/LICENSE" "$root/NOTICE" "$dir/"
chmod 0755 "$dir/trainer-webhook" "$dir/kubectl-trainer" "$dir/lib/trainer-webhook" "$dir/lib/$loader"
find "$dir" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
tar -C "$tmp" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" \
	-cf - trainer-webhook | gzip -n -9 >"$out"
