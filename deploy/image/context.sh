#!/bin/sh
# sh deploy/image/context.sh BIN DIR — the build context of the runtime image,
# which starts from scratch (Containerfile): DIR/rootfs holds BIN stripped and
# exactly the shared libraries it links (rootfs.sh), the CA certificates, and
# a passwd and group with root and the nonroot user 65532; nothing else. No
# base image is pulled, so there is no digest to trust. Every entry's mtime is
# SOURCE_DATE_EPOCH (the commit's time: the Makefile's), its mode fixed, so
# that two builds of one commit give one image (tests/integration/
# test_image_run.c builds twice and compares). DIR/sbom.spdx.json: what the
# rootfs holds, from dpkg's records (sbom.sh).
set -eu
[ $# = 2 ] || { echo "usage: sh deploy/image/context.sh BIN DIR" >&2 && exit 2; }
bin=$1 dir=$2
: "${SOURCE_DATE_EPOCH:?context.sh: set SOURCE_DATE_EPOCH (the commit time)}"
here=$(dirname "$0")
rm -rf "$dir"
mkdir -p "$dir"
root=$dir/rootfs
sh "$here/rootfs.sh" "$bin" "$root"
mkdir -p "$root/etc/ssl/certs"
# Debian's bundle (ca-certificates), as update-ca-certificates wrote it.
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' \
	>"$root/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$root/etc/group"
# Fixed modes (umask-free) and times; owners are root's in the layer (the
# builder's COPY), the process runs as 65532.
find "$root" -type d -exec chmod 0755 {} +
find "$root" -type f -exec chmod 0644 {} +
# the binary and the dynamic loader the kernel runs for it (exec needs x)
chmod 0755 "$root/usr/local/bin/trainer-webhook"
find "$root" -name 'ld-linux*' -type f -exec chmod 0755 {} +
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
sh "$here/sbom.sh" "$root" "$dir/sbom.spdx.json"
