# trainer-webhook: the admission webhook image.
#
#   docker build -t trainer-webhook:dev .      (or: make image)
#
# Build stage: the same steps as CI (.ci/run): `sh tests/deps.sh` installs the
# Debian -dev packages, then `make` (all). The test suite runs in CI, not here.
FROM debian:bookworm AS build
WORKDIR /src
COPY . .
RUN sh tests/deps.sh && make

# Runtime stage: only the shared libraries the binary links (libmicrohttpd with
# GnuTLS, cJSON, libyaml, libcurl, OpenSSL, PCRE2) and CA certificates for the API server.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libmicrohttpd12 libgnutls30 libcjson1 libyaml-0-2 libcurl4 libssl3 libpcre2-8-0 ca-certificates \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/trainer-webhook /usr/local/bin/trainer-webhook
# A numeric non-root user, so that runAsNonRoot can check it.
USER 65532:65532
EXPOSE 9443 8080
ENTRYPOINT ["/usr/local/bin/trainer-webhook"]
CMD ["serve", "--kube", "--manage-certs"]
