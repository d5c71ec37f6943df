#!/bin/sh
# sh deploy/image/rootfs.sh BIN DIR — the runtime image's own files, under DIR:
# BIN stripped, as DIR/usr/local/bin/trainer-webhook, and exactly the shared
# libraries it links (what ldd lists: libmicrohttpd, GnuTLS, OpenSSL, cJSON,
# libyaml, libcurl, PCRE2, glibc and what they link in turn), the dynamic
# loader at the path the binary names for it. deploy/image/context.sh runs it
# for the image, which starts from scratch (Containerfile).
# tests/integration/test_deploy_image.c runs the binary from DIR in a chroot.
set -eu
[ $# = 2 ] || { echo "usage: sh deploy/image/rootfs.sh BIN DIR" >&2 && exit 2; }
bin=$1 out=$2
mkdir -p "$out/usr/local/bin"
# strip: the symbols and debug sections are three quarters of the file.
strip -o "$out/usr/local/bin/trainer-webhook" "$bin"
chmod 0755 "$out/usr/local/bin/trainer-webhook"
ldd "$bin" | while read -r name arrow path rest; do
	case "$name $arrow $path" in
	*" => /"*)  # libfoo.so.1 => /lib/<triplet>/libfoo.so.1 (0x...): under its soname,
		# in the real folder (/usr/lib/<triplet>, where the loader searches)
		dest=$(readlink -f "$(dirname "$path")")/$name ;;
	/*)         # /lib64/ld-linux-x86-64.so.2 (0x...): the loader, where the binary names it
		path=$name dest=$name ;;
	*) continue ;; # linux-vdso.so.1 (0x...): the kernel's
	esac
	mkdir -p "$out$(dirname "$dest")"
	cp -L "$path" "$out$dest"
done
