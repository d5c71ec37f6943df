# trainer-webhook: the admission webhook image.
#
#   make image IMAGE=registry.example.com/trainer-webhook:0.4.0
#   make deploy IMAGE=registry.example.com/trainer-webhook:0.4.0   (build, push, apply)
#
# Both bases are pinned by digest (multi-platform indexes), so a rebuild gets
# the same files until someone re-pins them on purpose: `docker buildx
# imagetools inspect debian:bookworm` (or `crane digest`) prints the current
# digest. tests/integration/test_deploy_image.c checks the pins, the labels
# and that the runtime stage installs nothing.

# Build stage: what CI does (.ci/run) without the tests: `sh tests/deps.sh
# build` installs the Debian -dev packages, `make` builds (all). Then the
# runtime's files: the stripped binary and exactly the shared libraries it
# links (deploy/image/rootfs.sh).
FROM debian:bookworm@sha256:6ebd97fa83deb272194a2cf015b3d26a4d538e9ad3a7a79d544c8af5b0a01443 AS build
# --version: make image passes git describe (.git is not in the context).
ARG VERSION=0.4.0
WORKDIR /src
COPY . .
RUN sh tests/deps.sh build && make && sh deploy/image/rootfs.sh build/trainer-webhook /rootfs

# Runtime stage: distroless static (CA certificates, /etc/passwd with the
# nonroot UID 65532, time zones; no shell, no package manager, no libc of its
# own) and the build stage's /rootfs: the binary and its libraries, nothing
# else. No preStop exec is possible: deploy/ uses the kubelet's sleep action.
FROM gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab
ARG VERSION=0.4.0
ARG REVISION=unknown
# The project's repository (make image passes the Makefile's PROJECT_REPO).
ARG SOURCE=""
LABEL org.opencontainers.image.title="trainer-webhook" \
      org.opencontainers.image.description="Admission webhook for Kubeflow Trainer: validates TrainingRuntimes, ClusterTrainingRuntimes and TrainJobs, defaults TrainJobs, expands them into JobSets" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="gcr.io/distroless/static-debian12:nonroot" \
      org.opencontainers.image.base.digest="sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab"
COPY --from=build /rootfs/ /
# A numeric non-root user, so that runAsNonRoot can check it.
USER 65532:65532
EXPOSE 9443 8080
ENTRYPOINT ["/usr/local/bin/trainer-webhook"]
CMD ["serve", "--kube", "--manage-certs"]
