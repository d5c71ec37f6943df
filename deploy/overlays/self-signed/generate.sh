#!/bin/sh
# generate.sh BIN NS [DIR] — the self-signed overlay's generated layer.
#
# Runs `BIN certs generate` for the Service trainer-webhook in namespace NS into
# DIR (default: generated/ beside this script) and writes DIR/kustomization.yaml
# (see kustomization.yaml beside this script). Files already there are replaced.
# Used by `make deploy-self-signed` and by tests/integration/test_deploy.c.
set -eu
[ $# -ge 2 ] || { echo "usage: generate.sh BIN NS [DIR]" >&2; exit 2; }
bin=$1 ns=$2
here=$(cd "$(dirname "$0")" && pwd)
out=${3:-$here/generated}
svc=trainer-webhook
case $ns in
'' | *[!a-z0-9-]* | -* | *-) echo "generate.sh: NS \"$ns\" is not a namespace name (a DNS-1123 label)" >&2; exit 2 ;;
esac
[ ${#ns} -le 63 ] || { echo "generate.sh: NS \"$ns\" is longer than 63 characters" >&2; exit 2; }
base=$here/../../base
[ -f "$base/kustomization.yaml" ] || { echo "generate.sh: no base at $base" >&2; exit 2; }

mkdir -p "$out"
chmod 700 "$out"
cabundle=$("$bin" certs generate --service "$svc" --namespace "$ns" --out "$out" --force)
[ -n "$cabundle" ] || { echo "generate.sh: certs generate printed no caBundle" >&2; exit 1; }

# One JSON 6902 "add" per webhook of each configuration (counted in the base).
patch() { # FILE COUNT
	i=0
	: >"$1"
	while [ "$i" -lt "$2" ]; do
		printf -- '- op: add\n  path: /webhooks/%d/clientConfig/caBundle\n  value: %s\n' \
			"$i" "$cabundle" >>"$1"
		i=$((i + 1))
	done
}
nv=$(grep -c '^- name:' "$base/validatingwebhook.yaml")
nm=$(grep -c '^- name:' "$base/mutatingwebhook.yaml")
patch "$out/cabundle-validating.yaml" "$nv"
patch "$out/cabundle-mutating.yaml" "$nm"
# Old kustomize (kubectl 1.20) does not rename the Namespace object itself.
printf -- '- op: replace\n  path: /metadata/name\n  value: %s\n' "$ns" >"$out/namespace-name.yaml"

cat >"$out/kustomization.yaml" <<KEOF
# Written by deploy/overlays/self-signed/generate.sh for namespace $ns. Do not commit.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: $ns
bases:
- ../../../base
generatorOptions:
  disableNameSuffixHash: true
secretGenerator:
- name: trainer-webhook-cert
  type: kubernetes.io/tls
  files:
  - tls.crt
  - tls.key
  - ca.crt
patchesJson6902:
- target:
    group: admissionregistration.k8s.io
    version: v1
    kind: ValidatingWebhookConfiguration
    name: trainer-webhook-validator
  path: cabundle-validating.yaml
- target:
    group: admissionregistration.k8s.io
    version: v1
    kind: MutatingWebhookConfiguration
    name: trainer-webhook-defaulter
  path: cabundle-mutating.yaml
- target:
    version: v1
    kind: Namespace
    name: trainer-webhook-system
  path: namespace-name.yaml
KEOF
echo "generate.sh: wrote $out for namespace $ns (service $svc); caBundle in both webhook configurations" >&2
