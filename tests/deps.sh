#!/bin/sh
# Installs the Debian packages the build and the tests need, when any is missing.
# Safe to run often: it asks dpkg first and touches apt only when something is absent.
set -e
PKGS="build-essential pkg-config libmicrohttpd-dev libgnutls28-dev libssl-dev libcjson-dev libyaml-dev libcurl4-openssl-dev libcmocka-dev libpcre2-dev openssl curl libxml2-utils"
# libxml2-utils: xmllint checks validate -o junit against tests/support/junit.xsd.
# kubectl (with its built-in kustomize) renders deploy/ in tests/integration/test_deploy.c:
# Debian's kubernetes-client, only when no kubectl is on PATH at all.
command -v kubectl >/dev/null 2>&1 || PKGS="$PKGS kubernetes-client"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing Debian packages:$missing (run as root, or install them)" >&2
	exit 1
fi
echo "deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends $missing >&2
