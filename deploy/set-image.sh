#!/bin/sh
# sh deploy/set-image.sh [--pushed] IMAGE OVERLAY OUTDIR — writes
# OUTDIR/kustomization.yaml: OVERLAY (deploy/base, an overlay of deploy/, or
# your own) with the image trainer-webhook set to IMAGE
# (REGISTRY/NAME:TAG or REGISTRY/NAME@sha256:...), for `kubectl apply -k
# OUTDIR`. --pushed (make deploy): IMAGE was just pushed, so the digest the
# registry gave it (docker's RepoDigests for IMAGE's repository) is set
# instead of the tag, and the pods run exactly what was pushed.
set -eu
pushed=""
if [ "${1:-}" = --pushed ]; then pushed=1 && shift; fi
if [ $# != 3 ]; then
	echo "usage: sh deploy/set-image.sh [--pushed] IMAGE OVERLAY OUTDIR" >&2
	exit 2
fi
image=$1 overlay=$2 out=$3
# The image's name as deploy/base's Deployment gives it (the project's
# registry, the Makefile's PROJECT_IMAGE), which an images: entry matches.
here=$(dirname "$0")
name=$(sed -n 's/^ *image: \([^@]*\):[^:/]*$/\1/p' "$here/base/deployment.yaml")
if [ ! -f "$overlay/kustomization.yaml" ]; then
	echo "set-image: $overlay: no kustomization.yaml" >&2
	exit 2
fi
# The repository: IMAGE without its @digest, and without its :tag (a colon
# after the last slash; one before it is a registry's port).
repo=${image%%@*}
case ${repo##*/} in *:*) repo=${repo%:*} ;; esac
tag=${image#"$repo"}
tag=${tag#:}
case $image in
*@sha256:*) ref="digest: ${image#*@}" ;;
*)
	if [ -n "$pushed" ]; then
		digest=$(docker image inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' "$image" |
			while read -r d; do case $d in "$repo"@*) echo "${d#*@}" && break ;; esac; done)
		if [ -z "$digest" ]; then
			echo "set-image: docker knows no digest of $image in $repo (was it pushed?)" >&2
			exit 1
		fi
		ref="digest: $digest"
	else
		ref="newTag: ${tag:-latest}"
	fi
	;;
esac
mkdir -p "$out"
cat >"$out/kustomization.yaml" <<KUSTOMIZATION
# Written by deploy/set-image.sh (make deploy): $overlay with the image set.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- $(realpath --relative-to="$out" "$overlay")
images:
- name: $name
  newName: $repo
  $ref
KUSTOMIZATION
echo "set-image: $out/kustomization.yaml: $overlay with $repo ${ref#* }" >&2
