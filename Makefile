# trainer-webhook — plain Makefile.
#
#   make            build/trainer-webhook and build/libtrainpolicy.a
#   make run        the server on its embedded default (see README)
#   make test       every test binary under tests/ (unit and integration), as
#                   many at once as make -jN or JOBS=N says (default: the CPUs)
#   make asan       the same tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make valgrind   the unit tests under valgrind's memcheck
#   make bench      the throughput / latency / memory benchmarks (tests/bench)
#   make image      the container image; make deploy IMAGE=...: build, push, apply
#   make ARCH=arm64 the same for linux/arm64, cross-built into build-arm64/
#   make release VERSION=x.y.z   every artifact of a release, both architectures, in dist/
#
# Sources are found by wildcard: a new file in policy/ or webhook/ (or a
# folder of either), certs/ or a new tests/*/test_*.c needs no edit here.

CC       ?= cc
PKGS     := libmicrohttpd gnutls libcjson yaml-0.1 libcurl openssl libpcre2-8
PKG_CONFIG := pkg-config
# make ARCH=arm64: trainer-webhook cross-built for linux/arm64 into
# build-arm64/ (Debian's gcc-aarch64-linux-gnu; sh tests/deps.sh cross)
# against a sysroot of Debian's arm64 packages in build/sysroot-arm64
# (deploy/release/sysroot.sh: apt with a private state, nothing of the
# machine's packages touched). Only the command line's ARCH counts: the
# environment's (a kernel build's) is not this one.
HOST_ARCH := $(shell dpkg --print-architecture 2>/dev/null || uname -m)
ifneq ($(origin ARCH),command line)
ARCH     := $(HOST_ARCH)
endif
TRIPLET_amd64 := x86_64-linux-gnu
TRIPLET_arm64 := aarch64-linux-gnu
ifneq ($(ARCH),$(HOST_ARCH))
BUILD    ?= build-$(ARCH)
SYSROOT  ?= $(CURDIR)/build/sysroot-$(ARCH)
CROSS    ?= $(TRIPLET_$(ARCH))-
CC       := $(CROSS)gcc --sysroot=$(SYSROOT)
PKG_CONFIG := PKG_CONFIG_SYSROOT_DIR=$(SYSROOT) \
	PKG_CONFIG_LIBDIR=$(SYSROOT)/usr/lib/$(TRIPLET_$(ARCH))/pkgconfig:$(SYSROOT)/usr/share/pkgconfig pkg-config
endif
BUILD    ?= build
CSTD     := -std=c17 -D_GNU_SOURCE
WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-missing-field-initializers
OPT      ?= -O2 -g
CFLAGS   ?=
# --version: this release number and the commit built ("0.4.0 (cada370)";
# the commit is left out where there is no git, as in the image's build).
# The file VERSION is the one source of the release number: the chart, the
# image tags in deploy/, the krew manifest and docs/usage.md's examples say the same
# (tests/integration/test_release_sources.c compares them); `make release
# VERSION=x.y.z` builds another.
VERSION  ?= $(shell cat $(dir $(lastword $(MAKEFILE_LIST)))VERSION 2>/dev/null)
# The project's home: its repository and its image registry. Every shipped
# file that links to either says these (the SARIF report's informationUri
# through TW_HOME, the krew manifest, the chart, README, the image labels).
PROJECT_REPO  := https://github.com/trainer-webhook/trainer-webhook
PROJECT_IMAGE := ghcr.io/trainer-webhook/trainer-webhook
GIT_COMMIT := $(shell git describe --always --dirty --abbrev=7 --match=no-tag 2>/dev/null)
CFLAGS   += $(CSTD) $(WARN) $(OPT) -I. $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
CFLAGS   += -DTW_VERSION='"$(VERSION)"' -DTW_COMMIT='"$(GIT_COMMIT)"' -DTW_HOME='"$(PROJECT_REPO)"'
LDLIBS   += $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null) -lpthread -lm
TESTLIBS := -lcmocka

POLICY_SRC  := $(sort $(wildcard policy/*.c policy/*/*.c))
CERTS_SRC   := $(sort $(wildcard certs/*.c))
WEBHOOK_SRC := $(sort $(filter-out webhook/main.c,$(wildcard webhook/*.c webhook/*/*.c)))
TEST_SRC    := $(sort $(wildcard tests/unit/test_*.c tests/integration/test_*.c))
TESTSUP_SRC := $(sort $(wildcard tests/support/*.c))

POLICY_OBJ  := $(POLICY_SRC:%.c=$(BUILD)/%.o)
CERTS_OBJ   := $(CERTS_SRC:%.c=$(BUILD)/%.o)
WEBHOOK_OBJ := $(WEBHOOK_SRC:%.c=$(BUILD)/%.o)
TESTSUP_OBJ := $(TESTSUP_SRC:%.c=$(BUILD)/%.o)
TEST_BIN    := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BENCH_SRC   := $(sort $(wildcard tests/bench/*.c))
BENCH_BIN   := $(BENCH_SRC:tests/%.c=$(BUILD)/tests/%)
LIBTESTSUP  := $(BUILD)/libtestsupport.a

LIBPOLICY   := $(BUILD)/libtrainpolicy.a
LIBWEBHOOK  := $(BUILD)/libtwebhook.a
BIN         := $(BUILD)/trainer-webhook

.PHONY: FORCE all run test install krew release unit integration asan valgrind bench deps clean image podman-flags deploy fuzz

all: $(LIBPOLICY) $(BIN)

ifdef SYSROOT
# The sysroot before the first object (the compiler and pkg-config read it).
$(POLICY_OBJ) $(CERTS_OBJ) $(WEBHOOK_OBJ) $(BUILD)/webhook/main.o: | $(SYSROOT)/var/lib/dpkg/status
$(SYSROOT)/var/lib/dpkg/status: deploy/release/sysroot.sh
	sh deploy/release/sysroot.sh $(ARCH) $(SYSROOT)
endif

$(BUILD)/%.o: %.c $(wildcard policy/*.h policy/*/*.h webhook/*.h webhook/*/*.h certs/*.h tests/support/*.h) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

# The release and commit in --version, the home in SARIF: version.o and
# sarif.o are rebuilt when one changes (the stamp is rewritten only then).
$(BUILD)/commit.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo '$(VERSION) $(GIT_COMMIT) $(PROJECT_REPO)' | cmp -s - $@ || \
	  echo '$(VERSION) $(GIT_COMMIT) $(PROJECT_REPO)' > $@
$(BUILD)/webhook/cli/version.o $(BUILD)/webhook/cli/sarif.o: $(BUILD)/commit.stamp

# The CRDs built in (webhook/cli/crds/, copied in by the assembler's
# .incbin): the object follows the folder's files.
$(BUILD)/webhook/cli/builtin_crds.o: $(wildcard webhook/cli/crds/*.yaml)
# serve --dev's examples (dev_state.c's .incbin) likewise.
$(BUILD)/webhook/cli/dev_state.o: $(wildcard deploy/runtimes/*.yaml) deploy/samples/admissionreview-trainjob.json

$(LIBPOLICY): $(POLICY_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# Everything of the binary except main(), so that tests can call it.
$(LIBWEBHOOK): $(WEBHOOK_OBJ) $(CERTS_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BIN): $(BUILD)/webhook/main.o $(LIBWEBHOOK) $(LIBPOLICY)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

$(LIBTESTSUP): $(TESTSUP_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/tests/%: tests/%.c $(LIBTESTSUP) $(LIBWEBHOOK) $(LIBPOLICY) $(wildcard tests/support/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LIBTESTSUP) $(LIBWEBHOOK) $(LIBPOLICY) $(LDLIBS) $(TESTLIBS)

# test_linear_cost counts the instructions of these functions alone: its
# wrappers of them (-Wl,--wrap) turn callgrind's instrumentation on where
# they are entered, so that the commands' start runs uninstrumented.
LINEAR_COUNTED := tw_admission_handle tw_findings_add tw_expand_trainjob tp_validate \
	tp_store_put tp_crds_add
$(BUILD)/tests/integration/test_linear_cost: TESTLIBS += $(LINEAR_COUNTED:%=-Wl,--wrap=%)

# make krew's manifest (and tarball beside it) as a file: made again only when
# the binary or what the tarball holds changed, so that the second make test
# of tests/integration/test_release_arm64.c (make ARCH=arm64 this file)
# neither compiles nor packs anything.
$(BUILD)/krew/trainer.yaml: $(BIN) deploy/release/tarball.sh deploy/release/krew.sh \
	deploy/image/rootfs.sh deploy/kubectl-plugin/kubectl-trainer LICENSE NOTICE VERSION \
	$(if $(SYSROOT),$(SYSROOT)/var/lib/dpkg/status)
	@$(MAKE) --no-print-directory krew

# The README's run command: the server on its embedded default (dev
# certificates and the example runtimes built in, in a private folder of the
# user's, 127.0.0.1:9443). Ctrl-C stops it.
run: deps all
	$(BIN) serve --dev

# The README's test command. deps installs missing Debian packages first.
# The build is timed apart from the suite (tests/run.sh times the programs),
# so that the close says what of make test's wall time is the build.
# Without -j, the build of make test and make asan was serial while
# tests/run.sh runs as many programs as there are CPUs: their build takes
# the CPUs' -j too (a -j given is the jobserver's, passed on as it is).
TEST_JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 1))
test: deps
	@t0=$$(date +%s%N); $(MAKE) --no-print-directory $(TEST_JOBS) all $(TEST_BIN) || exit 1; \
	  echo "build time: $$(( ($$(date +%s%N) - t0) / 1000000 )) ms"; \
	  JOBS=$(JOBS) BUILD=$(BUILD) tests/run.sh $(TEST_BIN)

unit: all $(filter $(BUILD)/tests/unit/%,$(TEST_BIN))
	@JOBS=$(JOBS) BUILD=$(BUILD) tests/run.sh $(filter $(BUILD)/tests/unit/%,$(TEST_BIN))

integration: all $(filter $(BUILD)/tests/integration/%,$(TEST_BIN))
	@JOBS=$(JOBS) BUILD=$(BUILD) tests/run.sh $(filter $(BUILD)/tests/integration/%,$(TEST_BIN))

# A separate build tree so that sanitizer objects never mix with plain ones.
asan:
	@t0=$$(date +%s%N); $(MAKE) --no-print-directory $(TEST_JOBS) BUILD=build-asan \
	        OPT="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
	        all $(TEST_BIN:$(BUILD)/%=build-asan/%) || exit 1; \
	  echo "build time: $$(( ($$(date +%s%N) - t0) / 1000000 )) ms"
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	        JOBS=$(JOBS) BUILD=build-asan tests/run.sh $(TEST_BIN:$(BUILD)/%=build-asan/%)

valgrind: all $(filter $(BUILD)/tests/unit/%,$(TEST_BIN))
	@JOBS=$(JOBS) VALGRIND=1 BUILD=$(BUILD) tests/run.sh $(filter $(BUILD)/tests/unit/%,$(TEST_BIN))

# Throughput, latency and memory against nginx (run.sh), the cost of one
# decision without the network (decide.sh: time and instructions), then
# memory against a big cluster behind the fake API server (store_rss.c).
bench: all $(BENCH_BIN)
	tests/bench/run.sh $(BIN)
	@# the same with the CRD engine on (the shipped CRDs from ../shared)
	@if [ -d ../shared/fixtures/upstream/crds ]; then \
	  echo "bench: again with --crds ../shared/fixtures/upstream/crds"; \
	  BENCH_SERVE_ARGS="--crds $$(cd ../shared/fixtures/upstream/crds && pwd)" tests/bench/run.sh $(BIN); fi
	tests/bench/decide.sh $(BUILD)
	@if [ -d ../shared/fixtures/upstream/crds ]; then \
	  tests/bench/decide.sh $(BUILD) --crds "$$(cd ../shared/fixtures/upstream/crds && pwd)"; fi
	$(BUILD)/tests/bench/store_rss $(BIN)

deps:
	@tests/deps.sh

# The binary and the kubectl plugin beside it (kubectl trainer ...).
PREFIX  ?= /usr/local
install: all
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/trainer-webhook
	install -D -m 0755 deploy/kubectl-plugin/kubectl-trainer $(DESTDIR)$(PREFIX)/bin/kubectl-trainer

# The release tarball of ARCH (this machine's, or make ARCH=arm64 krew:
# deploy/release/tarball.sh: trainer-webhook with the libraries it links, so
# that it runs on any glibc Linux from 2.31 on, kubectl-trainer, LICENSE,
# NOTICE) and the krew manifest with its sha256, the release and the home, in
# $(BUILD)/krew (deploy/release/krew.sh; make release: both architectures').
TARBALL  = trainer-webhook_$(VERSION)_linux_$(ARCH).tar.gz
# what rootfs.sh and sbom.sh read for a cross-built binary
CROSS_ENV = $(if $(SYSROOT),SYSROOT=$(SYSROOT) CROSS=$(CROSS) ARCH=$(ARCH))
krew: all
	@rm -rf $(BUILD)/krew && mkdir -p $(BUILD)/krew
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(CROSS_ENV) sh deploy/release/tarball.sh $(BIN) $(VERSION) \
	  $(BUILD)/krew/$(TARBALL)
	sh deploy/release/krew.sh $(VERSION) $(PROJECT_REPO) $(BUILD)/krew > $(BUILD)/krew/trainer.yaml

# make release VERSION=x.y.z: every artifact of a release into dist/, for
# linux/amd64 and linux/arm64 (RELEASE_ARCHS; the other one cross-built, make
# ARCH=arm64): the image index of both as one OCI archive (podman or buildah:
# manifest create/add, then the index and its images as an OCI layout, tarred
# sorted and dated SOURCE_DATE_EPOCH, so one commit gives one archive), the
# chart packaged with the release as its version and appVersion, each
# architecture's tarball and image SBOM, the krew manifest with both
# platforms, and SHA256SUMS of them all. .github/workflows/release.yml runs it
# on a tag, then pushes the image index and the chart and attaches dist/ to
# the release.
DIST ?= dist
HELM ?= $(if $(wildcard .tools/bin/helm),.tools/bin/helm,helm)
RELEASE_ARCHS ?= amd64 arm64
RELEASE_IMAGE = $(PROJECT_IMAGE):$(VERSION)
release:
	@[ -n "$(VERSION)" ] || { echo "make release: VERSION=x.y.z" >&2; exit 2; }
	@case $(BUILDER) in podman|buildah) ;; *) echo "make release: the image index needs podman or buildah (BUILDER=$(BUILDER)): apt-get install podman runc" >&2; exit 1 ;; esac
	$(foreach a,$(RELEASE_ARCHS),$(MAKE) --no-print-directory image krew VERSION=$(VERSION) \
	  $(if $(filter $(a),$(HOST_ARCH)),,ARCH=$(a)) IMAGE=$(RELEASE_IMAGE)-$(a) &&) true
	rm -rf $(DIST) && mkdir -p $(DIST)
	$(foreach a,$(RELEASE_ARCHS),cp $(call arch_build,$(a))/krew/trainer-webhook_$(VERSION)_linux_$(a).tar.gz $(DIST)/ && \
	  cp $(call arch_build,$(a))/image/context/sbom.spdx.json $(DIST)/trainer-webhook_$(VERSION)_linux_$(a).spdx.json &&) true
	sh deploy/release/krew.sh $(VERSION) $(PROJECT_REPO) $(DIST) > $(DIST)/trainer.yaml
	rm -rf $(BUILD)/chart && $(HELM) package charts/trainer-webhook --version $(VERSION) --app-version $(VERSION) -d $(BUILD)/chart
	@# helm package dates its entries now: the same files again, sorted, dated SOURCE_DATE_EPOCH
	tar -C $(BUILD)/chart -xzmf $(BUILD)/chart/trainer-webhook-$(VERSION).tgz
	tar -C $(BUILD)/chart --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$(SOURCE_DATE_EPOCH) \
	  -cf - trainer-webhook | gzip -n -9 > $(DIST)/trainer-webhook-$(VERSION).tgz
	$(ENGINE) manifest rm $(RELEASE_IMAGE) >/dev/null 2>&1 || true # the last release's
	$(ENGINE) manifest create $(RELEASE_IMAGE) >/dev/null
	$(foreach a,$(RELEASE_ARCHS),$(ENGINE) manifest add $(RELEASE_IMAGE) containers-storage:$(RELEASE_IMAGE)-$(a) >/dev/null &&) true
	rm -rf $(BUILD)/image/oci && $(ENGINE) manifest push --all --format oci $(RELEASE_IMAGE) oci:$(BUILD)/image/oci:$(VERSION)
	find $(BUILD)/image/oci -exec touch -h -d @$(SOURCE_DATE_EPOCH) {} +
	tar -C $(BUILD)/image/oci --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$(SOURCE_DATE_EPOCH) \
	  -cf $(DIST)/trainer-webhook_$(VERSION)_image.oci.tar .
	cd $(DIST) && sha256sum * > SHA256SUMS
	@echo "make release: image index $(RELEASE_IMAGE) $$(sed -n 's/.*"digest":"\(sha256:[0-9a-f]*\)".*/\1/p' $(BUILD)/image/oci/index.json)"
	@ls -l $(DIST)
# The build folder of architecture $(1): this one's, or build-$(1).
arch_build = $(if $(filter $(1),$(HOST_ARCH)),$(BUILD),build-$(1))

clean:
	rm -rf build build-asan build-arm64 build-fuzz dist

# The container image, from scratch (Containerfile): deploy/image/context.sh
# makes its context from $(BIN) (stripped, exactly the libraries it links,
# CA certificates, passwd/group with 65532) and the SBOM beside it
# ($(BUILD)/image/context/sbom.spdx.json); nothing is pulled. Two builds of
# one commit give one image: every mtime and the image's created time are
# SOURCE_DATE_EPOCH, the commit's time. Whichever builder the machine has
# (BUILDER=podman, buildah or docker); podman and buildah with
# deploy/image/containers.conf and their own vfs storage in build/containers
# (apt-get install podman runc; tests/deps.sh image). It prints the image ID
# into $(BUILD)/image/id. tests/integration/test_image_run.c builds twice and
# runs it.
SOURCE_DATE_EPOCH ?= $(or $(shell git log -1 --format=%ct 2>/dev/null),0)
IMAGE ?= $(PROJECT_IMAGE):$(VERSION)
BUILDER ?= $(firstword $(foreach b,podman buildah docker,$(if $(shell command -v $(b) 2>/dev/null),$(b))))
CONTAINERS := $(CURDIR)/build/containers
STORE_ARGS := --root $(CONTAINERS)/storage --runroot $(CONTAINERS)/run --storage-driver vfs
PODMAN  := CONTAINERS_CONF=$(CURDIR)/deploy/image/containers.conf podman $(STORE_ARGS)
BUILDAH := CONTAINERS_CONF=$(CURDIR)/deploy/image/containers.conf buildah $(STORE_ARGS)
# podman or buildah, whichever builds: their manifest commands are the same
ENGINE   = $(if $(filter buildah,$(BUILDER)),$(BUILDAH),$(PODMAN))
IMAGE_ARGS = --build-arg VERSION=$(VERSION) --build-arg SOURCE=$(PROJECT_REPO) \
	--build-arg REVISION=$(or $(shell git rev-parse HEAD 2>/dev/null),unknown) \
	--build-arg CREATED=$(shell date -u -d @$(SOURCE_DATE_EPOCH) +%Y-%m-%dT%H:%M:%SZ) \
	$(if $(SYSROOT),--platform linux/$(ARCH)) -f Containerfile -t $(IMAGE) $(BUILD)/image/context
image: all
	@[ -n "$(BUILDER)" ] || { echo "make image: no podman, buildah or docker on PATH: apt-get install podman runc (or sh tests/deps.sh image)" >&2; exit 1; }
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) VERSION=$(VERSION) PROJECT_REPO=$(PROJECT_REPO) $(CROSS_ENV) \
	  sh deploy/image/context.sh $(BIN) $(BUILD)/image/context
	case $(BUILDER) in \
	podman) $(PODMAN) build -q --timestamp $(SOURCE_DATE_EPOCH) $(IMAGE_ARGS) >/dev/null && \
	  $(PODMAN) image inspect --format '{{.Id}}' $(IMAGE) ;; \
	buildah) $(BUILDAH) bud -q --timestamp $(SOURCE_DATE_EPOCH) $(IMAGE_ARGS) ;; \
	docker) SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) docker build -q $(IMAGE_ARGS) ;; \
	*) echo "make image: BUILDER=$(BUILDER): want podman, buildah or docker" >&2; exit 1 ;; \
	esac | tail -1 | sed 's/^sha256://' > $(BUILD)/image/id
	@echo "make image: $(IMAGE) sha256:$$(cat $(BUILD)/image/id) (SBOM: $(BUILD)/image/context/sbom.spdx.json)"

# The flags the image's test gives podman: the same engine settings and storage.
podman-flags:
	@echo '$(STORE_ARGS)'

# A variable's value, for scripts (release.yml: make -s print-PROJECT_IMAGE).
print-%:
	@echo '$($*)'

# make deploy IMAGE=REGISTRY/trainer-webhook:TAG [OVERLAY=deploy/overlays/cert-manager]
# builds the image, pushes it, and applies OVERLAY (deploy/base by default)
# with the image set by the digest the registry gave it (deploy/set-image.sh
# writes $(BUILD)/deploy/kustomization.yaml), so the pods run what was pushed
# even if the tag moves. kubectl: tests/deps.sh's in .tools/bin when it is there.
OVERLAY ?= deploy/base
KUBECTL ?= $(if $(wildcard .tools/bin/kubectl),.tools/bin/kubectl,kubectl)
ifneq ($(filter deploy,$(MAKECMDGOALS)),)
ifeq ($(findstring /,$(IMAGE)),)
$(error make deploy: IMAGE=$(IMAGE) names no registry the cluster can pull from; run make deploy IMAGE=REGISTRY/trainer-webhook:TAG)
endif
endif
# deploy/base creates no namespace (it never owns one it did not create):
# the one the render names is created, unlabelled, when it is missing.
deploy: image
	case $(BUILDER) in \
	docker) docker push $(IMAGE) && sh deploy/set-image.sh --pushed $(IMAGE) $(OVERLAY) $(BUILD)/deploy ;; \
	*) $(if $(filter buildah,$(BUILDER)),$(BUILDAH),$(PODMAN)) push --digestfile $(BUILD)/image/pushed $(IMAGE) && \
	  sh deploy/set-image.sh "$$(echo '$(IMAGE)' | sed 's/:[^:/]*$$//')@$$(cat $(BUILD)/image/pushed)" $(OVERLAY) $(BUILD)/deploy ;; \
	esac
	ns=$$($(KUBECTL) kustomize $(BUILD)/deploy | sed -n 's/^  namespace: //p' | head -1) && \
	  { $(KUBECTL) get namespace "$$ns" >/dev/null 2>&1 || $(KUBECTL) create namespace "$$ns"; }
	$(KUBECTL) apply -k $(BUILD)/deploy

# libFuzzer targets (tests/fuzz/fuzz_*.c), built with clang into build-fuzz/
# (policy/, webhook/ and certs/ objects with -fsanitize=fuzzer-no-link plus
# ASan/UBSan), then each run for FUZZ_SECONDS on a seed corpus made from
# ../shared/fixtures, deploy/runtimes and deploy/samples (tests/fuzz/run.sh).
# Fails on any crash, leak or timeout; the input lands in build-fuzz/artifacts/.
#   make fuzz FUZZ_SECONDS=300 FUZZ_TARGETS=fuzz_load FUZZ_CORPUS=DIR
FUZZ_BUILD   := build-fuzz
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= $(patsubst tests/fuzz/%.c,%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_OPT     := -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
                -fno-sanitize-recover=all

$(FUZZ_BUILD)/fuzz/%: tests/fuzz/%.c $(wildcard tests/fuzz/*.h) $(FUZZ_BUILD)/libtwebhook.a \
                      $(FUZZ_BUILD)/libtrainpolicy.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_BUILD)/libtwebhook.a \
	      $(FUZZ_BUILD)/libtrainpolicy.a $(LDLIBS)

fuzz:
	$(MAKE) CC=$(FUZZ_CC) BUILD=$(FUZZ_BUILD) OPT="$(FUZZ_OPT)" \
	        $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz/%)
	@FUZZ_SECONDS=$(FUZZ_SECONDS) sh tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_TARGETS)
