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
trap 'rm -f "$tmp" "$tmp".*' EXIT
# The package of each file (its path in the image as dpkg knows it: as
# installed, else under its real folder, else without /usr), sorted, once.
# One dpkg -S for the files left at each of those tries, not one a file:
# every call reads dpkg's whole database (one a file: 15 CPU-seconds for 40).
(cd "$root" && find . -type f ! -path ./usr/local/bin/trainer-webhook ! -path ./etc/passwd \
	! -path ./etc/group ! -path ./etc/ssl/certs/ca-certificates.crt | sed 's|^\.||' |
	LC_ALL=C sort) >"$tmp.left"
: >"$tmp.pkgs"
for try in installed real no-usr; do
	# "FILE<tab>PATH": each file left and the path this try asks about
	while read -r f; do
		case $try in
		installed) q=$f ;;
		real) q=$(readlink -f "$f") || q=$f ;;
		no-usr) q=${f#/usr} ;;
		esac
		printf '%s\t%s\n' "$f" "$q"
	done <"$tmp.left" >"$tmp.ask"
	[ -s "$tmp.ask" ] || break
	# "PATH<tab>PACKAGE" of its first owner (dpkg -S: "pkg:arch: /path"),
	# then the package of each file found, and the files left
	cut -f2 "$tmp.ask" | xargs dpkg $admin -S 2>/dev/null |
		awk '{ i = index($0, ": /"); p = substr($0, 1, i - 1); sub(/:.*/, "", p)
		       f = substr($0, i + 2); if (!(f in seen)) { seen[f]; print f "\t" p } }' >"$tmp.got" ||
		true
	awk -F '\t' -v pkgs="$tmp.pkgs" 'FILENAME == ARGV[1] { pkg[$1] = $2; next }
		($2 in pkg) { print pkg[$2] >>pkgs; next } { print $1 }' "$tmp.got" "$tmp.ask" >"$tmp.left"
done
if [ -s "$tmp.left" ]; then
	echo "sbom: no Debian package holds $(head -n 1 "$tmp.left")" >&2
	exit 1
fi
[ -f "$root/etc/ssl/certs/ca-certificates.crt" ] && echo ca-certificates >>"$tmp.pkgs"
LC_ALL=C sort -u "$tmp.pkgs" >"$tmp"
# "PACKAGE<tab>VERSION<tab>ARCHITECTURE" of each, in that order: one
# dpkg-query for them all in the ARCH database; a package it does not hold
# (the CA bundle's, architecture all) from the machine's, as "all".
sed "s/\$/:$arch/" "$tmp" | xargs -r dpkg-query $admin -W -f='${Package}\t${Version}\t${Architecture}\n' \
	2>/dev/null >"$tmp.ver" || true
cut -f1 "$tmp.ver" | LC_ALL=C sort -u | LC_ALL=C comm -23 "$tmp" - |
	xargs -r dpkg-query -W -f='${Package}\t${Version}\tall\n' >>"$tmp.ver"
awk -F '\t' 'FILENAME == ARGV[1] { line[$1] = $0; next } { print line[$1] }' "$tmp.ver" "$tmp" \
	>"$tmp.rows"
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
	while IFS="$(printf '\t')" read -r pkg v a; do
		printf ',\n    {"SPDXID": "SPDXRef-deb-%s", "name": "%s", "versionInfo": "%s",\n' \
			"$(echo "$pkg" | tr -c 'A-Za-z0-9.\n-' '-')" "$pkg" "$v"
		printf '     "supplier": "Organization: Debian", "downloadLocation": "NOASSERTION",\n'
		printf '     "licenseConcluded": "NOASSERTION", "licenseDeclared": "NOASSERTION",\n'
		printf '     "copyrightText": "NOASSERTION", "filesAnalyzed": false,\n'
		printf '     "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",\n'
		printf '       "referenceLocator": "pkg:deb/debian/%s@%s?arch=%s"}]}' "$pkg" "$v" "$a"
	done <"$tmp.rows"
	printf '\n  ],\n  "relationships": [\n'
	printf '    {"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES", "relatedSpdxElement": "SPDXRef-trainer-webhook"}'
	while read -r pkg; do
		printf ',\n    {"spdxElementId": "SPDXRef-trainer-webhook", "relationshipType": "DEPENDS_ON", "relatedSpdxElement": "SPDXRef-deb-%s"}' \
			"$(echo "$pkg" | tr -c 'A-Za-z0-9.\n-' '-')"
	done <"$tmp"
	printf '\n  ]\n}\n'
} >"$out"
