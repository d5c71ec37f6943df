#!/bin/sh
# sh deploy/image/sbom.sh ROOTFS OUT — an SPDX 2.3 JSON document of what the
# image's ROOTFS holds: the binary (its sha256), and for every shared library
# and the CA bundle the Debian package it comes from and that package's
# version, as dpkg records them on the machine that built it (dpkg -S,
# dpkg-query), with a purl. VERSION, PROJECT_REPO and SOURCE_DATE_EPOCH from
# the environment (the Makefile's). A rootfs of another architecture (make
# ARCH=arm64): ARCH and SYSROOT, whose var/lib/dpkg (deploy/release/
# sysroot.sh's) records its libraries' packages; the CA bundle is the
# machine's own (ca-certificates, architecture all).
set -eu
[ $# = 2 ] || { echo "usage: sh deploy/image/sbom.sh ROOTFS OUT" >&2 && exit 2; }
root=$1 out=$2
: "${SOURCE_DATE_EPOCH:?}" "${VERSION:?}" "${PROJECT_REPO:?}"
arch=${ARCH:-$(dpkg --print-architecture)}
# dpkg's database of the libraries: the sysroot's for a foreign rootfs
admin=${SYSROOT:+--admindir=$SYSROOT/var/lib/dpkg}
created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
bin=$root/usr/local/bin/trainer-webhook
bsum=$(sha256sum "$bin" | cut -d' ' -f1)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# The package of each file (its path in the image as dpkg knows it: as
# installed, else under its real folder), sorted, once.
(cd "$root" && find . -type f ! -path ./usr/local/bin/trainer-webhook ! -path ./etc/passwd \
	! -path ./etc/group | sed 's|^\.||' | LC_ALL=C sort) | while read -r f; do
	case $f in
	/etc/ssl/certs/ca-certificates.crt) pkg=ca-certificates ;;
	*)
		pkg=$(dpkg $admin -S "$f" 2>/dev/null || dpkg $admin -S "$(readlink -f "$f")" 2>/dev/null ||
			dpkg $admin -S "${f#/usr}" 2>/dev/null) || {
			echo "sbom: no Debian package holds $f" >&2
			exit 1
		}
		pkg=${pkg%%:*}
		;;
	esac
	echo "$pkg"
done | LC_ALL=C sort -u >"$tmp"
{
	printf '{\n  "spdxVersion": "SPDX-2.3",\n  "dataLicense": "CC0-1.0",\n'
	printf '  "SPDXID": "SPDXRef-DOCUMENT",\n  "name": "trainer-webhook-%s-image",\n' "$VERSION"
	printf '  "documentNamespace": "%s/spdx/image-%s-%s-%s",\n' "$PROJECT_REPO" "$VERSION" "$arch" "$bsum"
	printf '  "creationInfo": {"created": "%s", "creators": ["Tool: trainer-webhook deploy/image/sbom.sh"]},\n' "$created"
	printf '  "documentDescribes": ["SPDXRef-trainer-webhook"],\n  "packages": [\n'
	printf '    {"SPDXID": "SPDXRef-trainer-webhook", "name": "trainer-webhook", "versionInfo": "%s",\n' "$VERSION"
	printf '     "downloadLocation": "%s", "licenseConcluded": "Apache-2.0", "licenseDeclared": "Apache-2.0",\n' "$PROJECT_REPO"
	printf '     "copyrightText": "NOASSERTION", "filesAnalyzed": false,\n'
	printf '     "checksums": [{"algorithm": "SHA256", "checksumValue": "%s"}],\n' "$bsum"
	printf '     "packageFileName": "/usr/local/bin/trainer-webhook"}'
	while read -r pkg; do
		v=$(dpkg-query $admin -W -f='${Version}' "$pkg:$arch" 2>/dev/null ||
			dpkg-query -W -f='${Version}' "$pkg")
		a=$(dpkg-query $admin -W -f='${Architecture}' "$pkg:$arch" 2>/dev/null || echo all)
		printf ',\n    {"SPDXID": "SPDXRef-deb-%s", "name": "%s", "versionInfo": "%s",\n' \
			"$(echo "$pkg" | tr -c 'A-Za-z0-9.\n-' '-')" "$pkg" "$v"
		printf '     "supplier": "Organization: Debian", "downloadLocation": "NOASSERTION",\n'
		printf '     "licenseConcluded": "NOASSERTION", "licenseDeclared": "NOASSERTION",\n'
		printf '     "copyrightText": "NOASSERTION", "filesAnalyzed": false,\n'
		printf '     "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",\n'
		printf '       "referenceLocator": "pkg:deb/debian/%s@%s?arch=%s"}]}' "$pkg" "$v" "$a"
	done <"$tmp"
	printf '\n  ],\n  "relationships": [\n'
	printf '    {"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES", "relatedSpdxElement": "SPDXRef-trainer-webhook"}'
	while read -r pkg; do
		printf ',\n    {"spdxElementId": "SPDXRef-trainer-webhook", "relationshipType": "DEPENDS_ON", "relatedSpdxElement": "SPDXRef-deb-%s"}' \
			"$(echo "$pkg" | tr -c 'A-Za-z0-9.\n-' '-')"
	done <"$tmp"
	printf '\n  ]\n}\n'
} >"$out"
