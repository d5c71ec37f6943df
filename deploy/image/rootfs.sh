#!/bin/sh
# sh deploy/image/rootfs.sh BIN DIR — the runtime image's own files, under DIR:
# BIN stripped, as DIR/usr/local/bin/trainer-webhook, and exactly the shared
# libraries it links (what ldd lists: libmicrohttpd, GnuTLS, OpenSSL, cJSON,
# libyaml, libcurl, PCRE2, glibc and what they link in turn), the dynamic
# loader at the path the binary names for it. deploy/image/context.sh runs it
# for the image, which starts from scratch (Containerfile).
# A binary of another architecture (make ARCH=arm64): SYSROOT=DIR (its
# libraries, deploy/release/sysroot.sh) and CROSS=PREFIX (aarch64-linux-gnu-,
# the cross binutils) in the environment; ldd cannot run it, so the closure is
# read from the ELF files themselves: the interpreter and the NEEDED entries
# (readelf -d), each found in the sysroot's multiarch folders.
# tests/integration/test_deploy_image.c runs the binary from DIR in a chroot.
set -eu
[ $# = 2 ] || { echo "usage: sh deploy/image/rootfs.sh BIN DIR" >&2 && exit 2; }
bin=$1 out=$2
mkdir -p "$out/usr/local/bin"
# strip: the symbols and debug sections are three quarters of the file.
"${CROSS:-}strip" -o "$out/usr/local/bin/trainer-webhook" "$bin"
chmod 0755 "$out/usr/local/bin/trainer-webhook"
if [ -n "${SYSROOT:-}" ]; then
	sysroot=$(cd "$SYSROOT" && pwd -P)
	triplet=${CROSS%-}
	# the loader, where the binary names it
	interp=$("${CROSS}readelf" -l "$bin" | sed -n 's/.*program interpreter: \(.*\)]$/\1/p')
	[ -n "$interp" ] || { echo "rootfs: $bin names no interpreter" >&2 && exit 1; }
	mkdir -p "$out$(dirname "$interp")"
	cp -L "$sysroot$interp" "$out$interp"
	# breadth first over NEEDED; each soname once, the loader's not again
	seen=" ${interp##*/} " todo=$bin
	while [ -n "$todo" ]; do
		next=""
		for f in $todo; do
			for name in $("${CROSS}readelf" -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'); do
				case $seen in *" $name "*) continue ;; esac
				seen="$seen$name "
				path=""
				for d in lib/$triplet usr/lib/$triplet lib usr/lib; do
					[ -e "$sysroot/$d/$name" ] && path=$sysroot/$d/$name && break
				done
				[ -n "$path" ] || { echo "rootfs: $name (NEEDED by $f) is not in $sysroot" >&2 && exit 1; }
				# under its soname, in its real folder inside the sysroot
				real=$(readlink -f "$(dirname "$path")")
				dest=${real#"$sysroot"}/$name
				mkdir -p "$out$(dirname "$dest")"
				cp -L "$path" "$out$dest"
				next="$next $out$dest"
			done
		done
		todo=$next
	done
	exit 0
fi
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
