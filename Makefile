# Build, test and clean edgecore for Windows (and Linux) from one module graph.
# See README.md for the two commands a fresh Debian machine needs.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

# This project's release version: the next minor for a new KubeEdge release
# line. build/released-versions lists the versions released so far, and
# build/package.sh refuses to package a listed version with other contents.
VERSION ?= v0.2.0
GIT_COMMIT ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
# The commit date rather than the clock, so that rebuilding a commit gives
# the same binary.
BUILD_DATE ?= $(shell git log -1 --format=%cI 2>/dev/null || echo unknown)
# Versions as go.mod requires them: the workspace (go.work) replaces these
# modules with patched copies, which have no version of their own.
KUBEEDGE_VERSION := $(shell GOWORK=off go list -m -f '{{.Version}}' github.com/kubeedge/kubeedge)
# KubeEdge builds Kubernetes from its own fork; report the fork's version.
KUBERNETES_VERSION := $(shell GOWORK=off go list -m -f '{{with .Replace}}{{.Version}}{{else}}{{.Version}}{{end}}' k8s.io/kubernetes)

OUT := _output
WIN_EXE := $(OUT)/windows-amd64/edgecore.exe
LINUX_BIN := $(OUT)/linux-amd64/edgecore
PACKAGE := $(OUT)/edgecore-$(VERSION)-windows-amd64.zip
RELEASED := build/released-versions
MINGW_CC ?= x86_64-w64-mingw32-gcc
export WINEPREFIX ?= $(CURDIR)/$(OUT)/wine
export WINEDEBUG ?= -all
# KubeEdge's Kubernetes fork is not in the checksum database; go.sum pins it.
export GONOSUMDB ?= github.com/kubeedge

PKG := github.com/kubeedge-windows/edgecore
# ldflags stamps version $(1) built from KubeEdge $(2); the upgrade scenario
# builds the same code as later releases.
ldflags = -s -w \
	-X $(PKG)/internal/version.version=$(1) \
	-X $(PKG)/internal/version.gitCommit=$(GIT_COMMIT) \
	-X $(PKG)/internal/version.buildDate=$(BUILD_DATE) \
	-X github.com/kubeedge/kubeedge/pkg/version.gitVersion=$(2) \
	-X github.com/kubeedge/kubeedge/pkg/version.gitTreeState=clean \
	-X k8s.io/component-base/version.gitVersion=$(KUBERNETES_VERSION) \
	-X k8s.io/component-base/version.gitTreeState=clean
LDFLAGS := $(call ldflags,$(VERSION),$(KUBEEDGE_VERSION))
# Upstream KubeEdge with patches/ applied, and the workspace that uses it:
# every go command below (builds, unit tests, vet, the e2e mains) runs in
# that one module graph, and so does an editor once go.work exists.
PATCHED := $(OUT)/upstream
WORK := go.work
export GOWORK := $(CURDIR)/$(WORK)
GOBUILD := go build -trimpath -buildvcs=false -ldflags "$(LDFLAGS)"
# Build tags of edgecore itself (not of the reference build of bench-node):
# providerless leaves out cadvisor's cloud metadata probes (and, before
# Kubernetes 1.32, the legacy cloud credential providers); grpcnotrace leaves out golang.org/x/net/trace,
# whose html/template use would stop the linker from dropping unused
# methods (see patches/README.md).
EDGECORE_TAGS := providerless,grpcnotrace

# Sources the binaries depend on, so that make rebuilds only when they change.
SOURCES := $(shell find cmd internal config windows staging -name '*.go' -not -name '*_test.go' 2>/dev/null) go.mod go.sum Makefile

.PHONY: all workspace tools windows linux runtime keadm-fixture containerd-test test unit crash-matrix check-no-crashpoints vet check-deadcode wine-test wine-setup bench bench-node bench-recovery chaos chaos-diskfull conformance upstream-check clean package package-test e2e e2e-upstream-cloud fleet previous-release

all: windows linux

# Windows version information (file and product version, names) and a
# manifest that declares the supported Windows versions, so that the
# kubelet sees the real Windows build rather than a compatibility one.
# The product version string is the whole version ($(VERSION)): upgrade
# and takeover read the installed binary's version from it without
# running the binary (internal/version.OfFile); the fixed numbers are
# taken from it. A build of another version gets its own (winres_version).
SYSO := cmd/edgecore/rsrc_windows_amd64.syso
GO_WINRES := github.com/tc-hib/go-winres@v0.3.3

$(SYSO): Makefile
	go run $(GO_WINRES) simply --arch amd64 --out cmd/edgecore/rsrc --manifest cli \
		--product-name "edgecore for Windows" --product-version $(VERSION) \
		--file-version $(VERSION) --original-filename edgecore.exe \
		--file-description "KubeEdge edge node agent for Windows Server" \
		--copyright "Copyright 2026 the edgecore for Windows authors; Apache License 2.0"
# winres_version sets the version resource of the binary $(1) to $(2).
winres_version = echo '{}' > $(1).winres.json && go run $(GO_WINRES) patch --no-backup --in $(1).winres.json \
	--product-version $(2) --file-version $(2) $(1) && rm -f $(1).winres.json

windows: $(WIN_EXE)
$(WORK): $(wildcard patches/*.patch) build/patch-upstream.sh go.mod go.sum
	build/patch-upstream.sh $(PATCHED)
workspace: $(WORK)

$(WIN_EXE): $(SOURCES) $(WORK) $(SYSO)
	@command -v $(MINGW_CC) >/dev/null || { echo "$(MINGW_CC) not found: apt-get install gcc-mingw-w64-x86-64"; exit 1; }
	CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC=$(MINGW_CC) $(GOBUILD) -tags $(EDGECORE_TAGS) -o $@ ./cmd/edgecore

linux: $(LINUX_BIN)
# static_build: containerd's client (images import) otherwise links Go's
# plugin package on Linux, which exports every symbol of the binary (17 MB
# of dynamic symbol names, twice the size); it changes nothing else.
$(LINUX_BIN): $(SOURCES) $(WORK)
	CGO_ENABLED=1 GOOS=linux GOARCH=amd64 $(GOBUILD) -tags $(EDGECORE_TAGS),static_build -o $@ ./cmd/edgecore

# Everything CI checks, tools first so that a missing one is named at once:
# unit tests, upstream's module tests against our beehive (conformance), vet
# for Windows and the layering rule, the Windows build and that the linker
# still prunes it, the Linux build, the Wine tests, the release package and
# the end-to-end scenarios.
test: tools unit crash-matrix conformance vet windows check-deadcode linux containerd-test wine-test package-test e2e

tools:
	@build/check-tools.sh

# The race detector runs where the code is concurrent and the test binary
# small: the bus, the stop path, the service lifecycle, the log file, the
# Windows adapters and the fake runtime. The packages that link the kubelet
# run without it: their -race build alone costs about 20 minutes cold.
RACE_PKGS := ./internal/lifecycle/... ./internal/logfile/... ./internal/crashlog/... ./internal/release/... ./windows/... ./test/fakecri/...

# Unit tests and vet use edgecore's build tags: what they check is what ships.
unit: $(WORK)
	go test -tags $(EDGECORE_TAGS) -count=1 ./...
	go test -tags $(EDGECORE_TAGS) -race -count=1 $(RACE_PKGS)
	cd staging/src/github.com/kubeedge/beehive && go test -race -count=1 ./...

# Crash at every step: the test build (crashpoints tag) of join, reset,
# takeover, the upgrade driver (upgrade, rollback) and a ConfigUpdateJob's
# hand-over and driver crashed at each step boundary in turn over the
# recording fakes, the next command run, the host checked before or after
# (docs/testing.md); the matrix is printed. The crash point itself (it
# ends the process at once, TerminateProcess on Windows) is run as a
# Windows program under Wine. Then the release binaries are checked to
# hold none of the crash points' code.
CRASH_PKGS := ./internal/steps/... ./internal/join/ ./internal/reset/ ./internal/upgrade/ ./internal/takeover/
CRASH_MATRIX := $(OUT)/crash-matrix.txt
crash-matrix: $(WORK) wine-setup
	rm -rf $(CRASH_MATRIX) $(OUT)/crash-wine
	CRASH_MATRIX_OUT=$(CURDIR)/$(CRASH_MATRIX) go test -tags $(EDGECORE_TAGS),crashpoints -count=1 -run 'CrashAtEvery|CrashPoint|ArmedBoundary' $(CRASH_PKGS)
	@cat $(CRASH_MATRIX)
	go build -o $(OUT)/wintest ./build/wine/wintest
	$(OUT)/wintest windows -results $(CURDIR)/$(OUT)/crash-wine -tags $(EDGECORE_TAGS),crashpoints -run build/wine/run.sh ./internal/steps/
	$(OUT)/wintest summary -results $(CURDIR)/$(OUT)/crash-wine
	@for s in $(CRASHPOINT_STRINGS); do grep -qF "$$s" $(OUT)/crash-wine/bin/steps.test.exe || \
	  { echo "the crashpoints build lacks $$s: check-no-crashpoints would prove nothing" >&2; exit 1; }; done
	$(MAKE) --no-print-directory check-no-crashpoints

# The release binaries carry no crash point: neither holds the crashpoints
# build's strings (the binaries are stripped, so no symbol is looked for);
# the steps test binary the crash matrix builds holds both.
CRASHPOINT_STRINGS := EDGECORE_CRASHPOINTS 'crash point %q reached'
check-no-crashpoints: $(LINUX_BIN) $(WIN_EXE)
	@for b in $(LINUX_BIN) $(WIN_EXE); do for s in $(CRASHPOINT_STRINGS); do \
	  if grep -qF "$$s" $$b; then echo "$$b holds the crash points of the test build ($$s)" >&2; exit 1; fi; \
	done; echo "$$b: no crash point"; done

# The pages whose tables of figures must name the command that measured
# them; the threat model's tables state bounds the code enforces.
FIGURE_DOCS = $(filter-out docs/threat-model.md,$(wildcard docs/*.md))
vet: $(WORK)
	build/bump-upstream.sh --check
	build/bump-runtime.sh --check
	GOOS=windows go vet -tags $(EDGECORE_TAGS) ./...
	cd staging/src/github.com/kubeedge/beehive && GOOS=windows go vet ./...
	build/check-layers.sh
	go run ./build/checkfigures -makefile Makefile README.md $(FIGURE_DOCS)
	go run ./build/checkrelease -list $(RELEASED)

# That the linker still drops unused methods from edgecore.exe (about
# 20 MB of it): a full link, so not part of vet.
check-deadcode: $(WORK)
	build/check-deadcode.sh $(EDGECORE_TAGS)

wine-setup:
	build/wine/setup.sh

# The container runtime the release bundles, pinned: containerd with ctr,
# the runhcs shim and the Windows CNI plugins, each built from the Go module
# proxy by build/runtime.sh with this Go, CGO_ENABLED=0, in a module of its
# own (not this project's go.mod), and kept per version under
# $(RUNTIME_OUT): a rebuild with the same versions costs nothing.
# containerd's 2.3 line is its long-term support line (to April 2028);
# hcsshim is the newest release the proxy can build (docs/runtime.md, "Which
# containerd"); build/bump-runtime.sh moves them and --check (in vet) says
# when they fall behind.
CONTAINERD_VERSION := v2.3.7
HCSSHIM_VERSION := v0.14.1
CNI_PLUGINS_VERSION := v1.10.0
RUNTIME_OUT := $(OUT)/runtime
RUNTIME_ENV := CONTAINERD_VERSION=$(CONTAINERD_VERSION) HCSSHIM_VERSION=$(HCSSHIM_VERSION) CNI_PLUGINS_VERSION=$(CNI_PLUGINS_VERSION)
RUNTIME_STAMP := $(RUNTIME_OUT)/.built-$(CONTAINERD_VERSION)-$(HCSSHIM_VERSION)-$(CNI_PLUGINS_VERSION)

runtime: $(RUNTIME_STAMP)
$(RUNTIME_STAMP): build/runtime.sh
	$(RUNTIME_ENV) build/runtime.sh $(RUNTIME_OUT)
	touch $@
# The image import (internal/images, TestRealContainerd) and join's
# --registry-config (internal/runtimeinstall, TestRealContainerdRegistry)
# against the containerd the release bundles: its daemon at
# CONTAINERD_VERSION (above: one version, so a bump moves both), built for
# Linux from the module proxy in its own module graph and kept until that
# version changes, with go.mod's client. The import test runs it as root
# in a temporary root, state and socket with the config.toml join writes
# and the native snapshotter, and imports with unpack; the registry test
# pulls through CRI with the hosts.toml, CA and config.toml credentials
# join writes from test/registryd, a registry of go-containerregistry
# behind TLS from a private CA and basic authentication, built in its own
# module (test/registryd/go.mod), and an ImagePrePullJob's pulls through
# the node's runner code. Both fail (never skip) when they cannot
# run: CI runs as root.
CONTAINERD_LINUX := $(OUT)/containerd-linux/$(CONTAINERD_VERSION)/containerd
$(OUT)/containerd-linux/%/containerd:
	build/build-containerd.sh $* $@
REGISTRYD := $(OUT)/registryd/registryd
$(REGISTRYD): test/registryd/main.go test/registryd/go.mod test/registryd/go.sum
	cd test/registryd && GOWORK=off CGO_ENABLED=0 go build -trimpath -buildvcs=false -o $(CURDIR)/$@ .
containerd-test: $(WORK) $(CONTAINERD_LINUX) $(REGISTRYD)
	@[ "$$(id -u)" = 0 ] || { echo "make containerd-test runs containerd, whose native snapshotter needs root: run it as root (sudo make containerd-test), as CI does" >&2; exit 1; }
	EDGECORE_CONTAINERD_BIN=$(CURDIR)/$(CONTAINERD_LINUX) EDGECORE_CONTAINERD_VERSION=$(CONTAINERD_VERSION) \
		go test -tags $(EDGECORE_TAGS) -count=1 -run '^TestRealContainerd$$' -v ./internal/images/ | tee $(OUT)/containerd-test.log
	EDGECORE_BUNDLED_CONTAINERD_BIN=$(CURDIR)/$(CONTAINERD_LINUX) EDGECORE_REGISTRYD_BIN=$(CURDIR)/$(REGISTRYD) \
		go test -tags $(EDGECORE_TAGS) -count=1 -run '^TestRealContainerdRegistry$$' -v ./internal/runtimeinstall/ | tee -a $(OUT)/containerd-test.log
	@for t in TestRealContainerd TestRealContainerdRegistry; do grep -q -- "^--- PASS: $$t " $(OUT)/containerd-test.log || \
		{ echo "$$t did not pass (skipped or not run): see above" >&2; exit 1; }; done

# The Wine tests (build/wine/test.sh): test/wine drives edgecore.exe from
# Linux; every package with Windows-only tests (windows/..., test/winservice,
# found by comparing go list for both OSes) is cross-compiled into a test
# binary and run in the project's prefix. The summary at the end counts
# passed, failed and skipped tests per package and gives each skip's reason.
WINE_RESULTS := $(OUT)/wine-test

FAKECRI_EXE := $(OUT)/windows-amd64/fakecri.exe
FAKECRI_SOURCES := $(wildcard test/fakecri/*.go test/fakecri/cmd/fakecri/*.go) go.mod go.sum
$(FAKECRI_EXE): $(FAKECRI_SOURCES) $(WORK)
	GOOS=windows go build -trimpath -buildvcs=false -o $@ ./test/fakecri/cmd/fakecri

# Upstream's edgecore main built in this module graph (bench-node's
# reference, below): keadm's node in the takeover scenario runs it.
REF := $(OUT)/reference
REF_EXE := $(REF)/windows-amd64/edgecore.exe

# What upstream's keadm v1.23 leaves on a Windows host, made by upstream's
# own code (test/keadmnode): the configuration fixtures of the takeover
# tests (make keadm-fixture writes them; the takeover e2e checks they are
# current) and, in the takeover e2e, the keadm node itself. Stamped as
# upstream's release is, so that keadm's edgeCoreVersion is its own.
KEADMNODE_EXE := $(OUT)/windows-amd64/keadmnode.exe
KEADM_FIXTURES := test/keadmnode/testdata
$(KEADMNODE_EXE): test/keadmnode/main.go go.mod go.sum $(WORK)
	CGO_ENABLED=0 GOOS=windows GOARCH=amd64 $(GOBUILD) -o $@ ./test/keadmnode
# The fixed inputs of the fixtures: documentation addresses, a token of the
# right form that no cloud issued.
KEADM_FIXTURE_ARGS := --edgenode-name win-edge-1 --node-ip 192.0.2.10 --cloudcore-ipport 192.0.2.1:10000 \
	--token 3f6e9a1c0b2d4e5f60718293a4b5c6d7e8f90123456789abcdef0123456789ab.eyJhbGciOiJIUzI1NiJ9.eyJleHAiOjE3MDAwMDAwMDB9.c2lnbmF0dXJl
keadm-fixture: $(KEADMNODE_EXE) wine-setup
	build/wine/run.sh $(KEADMNODE_EXE) config --out 'Z:$(subst /,\,$(CURDIR)/$(KEADM_FIXTURES))' $(KEADM_FIXTURE_ARGS)

# A device mapper's side of the DMI pipe, for test/wine.
DMICLIENT_EXE := $(OUT)/windows-amd64/dmiclient.exe
$(DMICLIENT_EXE): test/wine/dmiclient/main.go go.mod go.sum $(WORK)
	GOOS=windows go build -trimpath -buildvcs=false -o $@ ./test/wine/dmiclient

# The Windows tests import an image archive into the bundle's containerd.exe
# (TestRealContainerdOnWindows): Windows paths, on Wine's drive Z:, which is /.
wine-test: windows wine-setup $(FAKECRI_EXE) $(DMICLIENT_EXE) $(RUNTIME_STAMP)
	RESULTS=$(CURDIR)/$(WINE_RESULTS) TAGS=$(EDGECORE_TAGS) RUNTIME_DIR=$(CURDIR)/$(RUNTIME_OUT) $(RUNTIME_ENV) \
	EDGECORE_CONTAINERD_EXE='Z:$(subst /,\,$(CURDIR)/$(RUNTIME_OUT)/containerd-$(CONTAINERD_VERSION)/containerd.exe)' \
	KUBEEDGE_VERSION=$(KUBEEDGE_VERSION) KUBERNETES_VERSION=$(KUBERNETES_VERSION) \
	EDGECORE_EXE=$(CURDIR)/$(WIN_EXE) FAKECRI_EXE=$(CURDIR)/$(FAKECRI_EXE) \
	DMICLIENT_EXE=$(CURDIR)/$(DMICLIENT_EXE) build/wine/test.sh

# End to end: etcd, a kube-apiserver and upstream cloudcore on loopback,
# built from this module graph, and our edgecore (Windows under Wine, and
# Linux) joining them with a fake container runtime.
E2E := $(OUT)/e2e

$(E2E)/kube-apiserver: $(WORK) test/e2e/kube-apiserver/main.go
	go build -trimpath -o $@ ./test/e2e/kube-apiserver
# Its node lifecycle controller is what marks a node Ready=Unknown.
$(E2E)/kube-controller-manager: $(WORK) test/e2e/kube-controller-manager/main.go
	go build -trimpath -o $@ ./test/e2e/kube-controller-manager
$(E2E)/cloudcore: $(WORK) test/e2e/cloudcore/main.go $(SOURCES)
	go build -trimpath -o $@ ./test/e2e/cloudcore
$(E2E)/controller-manager: $(WORK) test/e2e/controllermanager/main.go $(SOURCES)
	go build -trimpath -o $@ ./test/e2e/controllermanager
$(E2E)/fakecri: $(FAKECRI_SOURCES) $(WORK)
	go build -trimpath -o $@ ./test/fakecri/cmd/fakecri
# The e2e's test build of edgecore.exe, never released: with the build tag
# e2ehns its kernelspace proxier programs a recording HNS that logs each
# call (internal/modules/hns_e2e_windows.go), since Wine has no HNS;
# TestWindowsServices reads those lines.
HNSREC_EXE := $(E2E)/edgecore-hnsrec.exe
$(HNSREC_EXE): $(SOURCES) $(WORK) $(SYSO) $(wildcard test/hnsrec/*.go)
	CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC=$(MINGW_CC) $(GOBUILD) -tags $(EDGECORE_TAGS),e2ehns -o $@ ./cmd/edgecore
# What an administrator runs to rehearse a host shutdown on the service
# (its pre-shutdown event), for TestWindowsNodeShutdown.
PRESHUTDOWN_EXE := $(OUT)/windows-amd64/preshutdown.exe
$(PRESHUTDOWN_EXE): test/e2e/preshutdown/main.go $(wildcard windows/service/*.go windows/stackdump/*.go) go.mod go.sum $(WORK)
	GOOS=windows go build -trimpath -buildvcs=false -o $@ ./test/e2e/preshutdown

# The journey scenario copies this prefix for a host of its own: prepared
# like the test prefix, and never run in, so every copy starts as a clean
# Windows host.
CLEAN_PREFIX := $(OUT)/wine-clean
$(CLEAN_PREFIX)/.prepared: build/wine/setup.sh build/wine/pdh.c build/wine/processprng.c
	WINEPREFIX=$(CURDIR)/$(CLEAN_PREFIX) build/wine/setup.sh
	touch $@

# The upgrade scenario's two release zips: this code released again as the
# next minor version after $(VERSION), stamped as built from the next
# KubeEdge patch release (cloudcore sends a NodeUpgradeJob only to nodes
# older than the job's version), and the minor after that, stamped one
# patch later, whose binary exits at once. Both are above every release.
bump_patch = $(shell echo $(1) | awk -F. -v n=$(2) '{ printf "%s.%s.%d", $$1, $$2, $$3 + n }')
bump_minor = $(shell echo $(1) | awk -F. -v n=$(2) '{ printf "%s.%d.0", $$1, $$2 + n }')
UPGRADE_GOOD_VERSION := $(call bump_minor,$(VERSION),1)
UPGRADE_BAD_VERSION := $(call bump_minor,$(VERSION),2)
UPGRADE_GOOD_KUBEEDGE := $(call bump_patch,$(KUBEEDGE_VERSION),1)
UPGRADE_BAD_KUBEEDGE := $(call bump_patch,$(KUBEEDGE_VERSION),2)
UPGRADE := $(OUT)/upgrade
UPGRADE_GOOD := $(UPGRADE)/edgecore-$(UPGRADE_GOOD_VERSION)-windows-amd64.zip
UPGRADE_BAD := $(UPGRADE)/edgecore-$(UPGRADE_BAD_VERSION)-windows-amd64.zip
$(UPGRADE)/$(UPGRADE_GOOD_VERSION)/edgecore.exe: $(SOURCES) $(WORK) $(SYSO)
	CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC=$(MINGW_CC) go build -trimpath -buildvcs=false -tags $(EDGECORE_TAGS) \
		-ldflags "$(call ldflags,$(UPGRADE_GOOD_VERSION),$(UPGRADE_GOOD_KUBEEDGE))" -o $@.tmp ./cmd/edgecore
	$(call winres_version,$@.tmp,$(UPGRADE_GOOD_VERSION))
	mv $@.tmp $@
$(UPGRADE)/$(UPGRADE_BAD_VERSION)/edgecore.exe: test/e2e/badrelease/main.go
	GOOS=windows GOARCH=amd64 go build -trimpath -buildvcs=false -o $@ ./test/e2e/badrelease
$(UPGRADE_GOOD): $(UPGRADE)/$(UPGRADE_GOOD_VERSION)/edgecore.exe build/package.sh $(RELEASED)
	KUBEEDGE_VERSION=$(UPGRADE_GOOD_KUBEEDGE) build/package.sh $< $(UPGRADE_GOOD_VERSION) $@
$(UPGRADE_BAD): $(UPGRADE)/$(UPGRADE_BAD_VERSION)/edgecore.exe build/package.sh $(RELEASED)
	KUBEEDGE_VERSION=$(UPGRADE_BAD_KUBEEDGE) build/package.sh $< $(UPGRADE_BAD_VERSION) $@

# The previous release of edgecore for Windows: the last one
# build/released-versions lists before $(VERSION), built from its commit
# by that commit's own Makefile in its own module graph (its go.mod's
# modules come from the module proxy), stamped with its commit, and
# packaged by that commit's `make package`. The list's digest is the
# release zip's: on every run, cached or not, the zip must have it
# (build/checkrelease -released) and the binary the e2e runs is taken out
# of that zip, so the scenario upgrades from what was released, byte for
# byte. The zip depends on nothing but that commit (and the Go and mingw
# versions the list names), so it is kept outside _output, keyed by
# version and commit, and a second run (or `make clean`) does not build
# it again.
released_field = $(shell awk -v cur=$(VERSION) '!/^[[:space:]]*(\#|$$)/ && $$1 != cur { f = $$$(1) } END { print f }' $(RELEASED))
PREVIOUS_VERSION := $(call released_field,1)
PREVIOUS_KUBEEDGE := $(call released_field,2)
PREVIOUS_COMMIT := $(call released_field,3)
RELEASE_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/edgecore-windows/releases
PREVIOUS_DIR := $(RELEASE_CACHE)/$(PREVIOUS_VERSION)-$(PREVIOUS_COMMIT)
PREVIOUS_NAME := edgecore-$(PREVIOUS_VERSION)-windows-amd64
PREVIOUS_ZIP := $(PREVIOUS_DIR)/$(PREVIOUS_NAME).zip
PREVIOUS_EXE := $(PREVIOUS_DIR)/edgecore.exe
$(PREVIOUS_ZIP):
	@git cat-file -e '$(PREVIOUS_COMMIT)^{commit}' 2>/dev/null || \
		{ [ "$$(git rev-parse --is-shallow-repository)" = true ] && git fetch --unshallow; } || true
	@git cat-file -e '$(PREVIOUS_COMMIT)^{commit}' 2>/dev/null || \
		{ echo "the previous release's commit $(PREVIOUS_COMMIT) is not in this clone: clone with full history (git fetch --unshallow)" >&2; exit 1; }
	rm -rf $(OUT)/previous && mkdir -p $(OUT)/previous
	git archive $(PREVIOUS_COMMIT) | tar -x -C $(OUT)/previous
	cd $(OUT)/previous && GOWORK=off go mod download
	$(MAKE) -C $(OUT)/previous package VERSION=$(PREVIOUS_VERSION) GIT_COMMIT=$(PREVIOUS_COMMIT) \
		BUILD_DATE=$$(git log -1 --format=%cI $(PREVIOUS_COMMIT))
	mkdir -p $(@D)
	cp $(OUT)/previous/_output/$(PREVIOUS_NAME).zip $@.tmp && mv $@.tmp $@
	rm -rf $(OUT)/previous
previous-release: $(PREVIOUS_ZIP)
	go run ./build/checkrelease -list $(RELEASED) -released -kubeedge $(PREVIOUS_KUBEEDGE) $(PREVIOUS_VERSION) $(PREVIOUS_ZIP)
	unzip -p $(PREVIOUS_ZIP) $(PREVIOUS_NAME)/edgecore.exe > $(PREVIOUS_EXE).tmp && mv $(PREVIOUS_EXE).tmp $(PREVIOUS_EXE)

# E2E_RUN=<regexp> runs only the scenarios it matches.
E2E_RUN ?=
# E2E_CLOUDCORE / E2E_CONTROLLER_MANAGER: another cloudcore and
# controller-manager to run the scenarios against, e.g. built from
# upstream's own tree (docs/cloud-jobs.md).
E2E_CLOUDCORE ?= $(CURDIR)/$(E2E)/cloudcore
E2E_CONTROLLER_MANAGER ?= $(CURDIR)/$(E2E)/controller-manager
# What the e2e scenarios are told: the parts of the cloud, the edges and
# the upgrade scenario's packages.
E2E_ENV = JOURNEY_WINEPREFIX=$(CURDIR)/$(CLEAN_PREFIX) E2E_LOGS=$(CURDIR)/$(OUT)/e2e-logs \
	VERSION=$(VERSION) RELEASE_ZIP=$(CURDIR)/$(PACKAGE) \
	UPGRADE_GOOD_ZIP=$(CURDIR)/$(UPGRADE_GOOD) UPGRADE_BAD_ZIP=$(CURDIR)/$(UPGRADE_BAD) \
	UPGRADE_GOOD_VERSION=$(UPGRADE_GOOD_VERSION) UPGRADE_BAD_VERSION=$(UPGRADE_BAD_VERSION) \
	KUBEEDGE_VERSION=$(KUBEEDGE_VERSION) UPGRADE_GOOD_KUBEEDGE=$(UPGRADE_GOOD_KUBEEDGE) UPGRADE_BAD_KUBEEDGE=$(UPGRADE_BAD_KUBEEDGE) \
	PREVIOUS_EDGECORE_EXE=$(PREVIOUS_EXE) PREVIOUS_VERSION=$(PREVIOUS_VERSION) PREVIOUS_KUBEEDGE=$(PREVIOUS_KUBEEDGE) \
	ETCD_BIN=$$(command -v etcd) KUBE_APISERVER_BIN=$(CURDIR)/$(E2E)/kube-apiserver CLOUDCORE_BIN=$(E2E_CLOUDCORE) \
	KUBE_CONTROLLER_MANAGER_BIN=$(CURDIR)/$(E2E)/kube-controller-manager CONTROLLER_MANAGER_BIN=$(E2E_CONTROLLER_MANAGER) \
	KUBEEDGE_CRDS=$$(go list -m -f '{{.Dir}}' github.com/kubeedge/kubeedge)/build/crds \
	EDGECORE_BIN=$(CURDIR)/$(LINUX_BIN) FAKECRI_BIN=$(CURDIR)/$(E2E)/fakecri \
	EDGECORE_EXE=$(CURDIR)/$(WIN_EXE) FAKECRI_EXE=$(CURDIR)/$(FAKECRI_EXE) PRESHUTDOWN_EXE=$(CURDIR)/$(PRESHUTDOWN_EXE) \
	DMICLIENT_EXE=$(CURDIR)/$(DMICLIENT_EXE) \
	KEADMNODE_EXE=$(CURDIR)/$(KEADMNODE_EXE) KEADM_EDGECORE_EXE=$(CURDIR)/$(REF_EXE) KEADM_FIXTURE_ARGS='$(KEADM_FIXTURE_ARGS)' \
	EDGECORE_HNSREC_EXE=$(CURDIR)/$(HNSREC_EXE) \
	WINE=$$(PATH="$$PATH:/usr/lib/wine" command -v wine64 || command -v wine)

e2e: windows linux wine-setup $(CLEAN_PREFIX)/.prepared $(FAKECRI_EXE) $(PRESHUTDOWN_EXE) $(DMICLIENT_EXE) $(KEADMNODE_EXE) $(REF_EXE) $(HNSREC_EXE) $(E2E)/kube-apiserver $(E2E)/kube-controller-manager $(E2E)/cloudcore $(E2E)/controller-manager $(E2E)/fakecri $(UPGRADE_GOOD) $(UPGRADE_BAD) $(PACKAGE) previous-release
	@command -v etcd >/dev/null || { echo "etcd not found: apt-get install etcd-server"; exit 1; }
	$(E2E_ENV) go test -tags e2e -count=1 -v -timeout 45m $(if $(E2E_RUN),-run '$(E2E_RUN)') ./test/e2e/
	@PATH="$$PATH:/usr/lib/wine" wineserver -k 2>/dev/null || true

# The node's data folder filling up (issue 39, test/e2e/diskfull_test.go):
# the Linux node's database, log and kubelet root on a 64 MiB ext4 volume
# (loop-mounted: run as root) that the test fills while pods run and frees,
# with a kill -9 while it is full. Build tags e2e,chaos: `make chaos` runs
# it too. Not part of `make test`; run it under /tmp/e2e.lock.
chaos-diskfull: linux $(E2E)/kube-apiserver $(E2E)/kube-controller-manager $(E2E)/cloudcore $(E2E)/fakecri
	@command -v etcd >/dev/null || { echo "etcd not found: apt-get install etcd-server"; exit 1; }
	@command -v mkfs.ext4 >/dev/null || { echo "mkfs.ext4 not found: apt-get install e2fsprogs"; exit 1; }
	$(E2E_ENV) go test -tags e2e,chaos -count=1 -v -timeout 20m -run 'TestChaosDiskFull' ./test/e2e/

bench:
	cd staging/src/github.com/kubeedge/beehive && go test -run '^$$' -bench . -benchmem ./pkg/core/context/

# The node benchmark: our edgecore against two builds of upstream's own
# main (edge/cmd/edgecore): the reference, built in our module graph (our
# beehive, patched upstream) with the same flags and build tags, and
# upstream's edgecore as upstream releases it, built from upstream's git
# tag $(KUBEEDGE_VERSION) with upstream's own beehive and api (its
# staging/) and its vendor/, with the same build tags so that the two
# differ only in the module graph. All run on the loopback cloud of the
# e2e tests, alternately BENCH_RUNS times each. On Linux it measures start
# to Ready, then memory and CPU BENCH_WINDOW after Ready with one pod;
# under Wine, start to Ready and the processes the node started meanwhile
# (BENCH_LINUX=0 or BENCH_WINE=0 leaves a part out). It prints a Markdown
# table of medians and ratios under a line with the date and the machine,
# kept in $(BENCH_TABLE), keeps each node's log in $(OUT)/bench-node-logs,
# asserts nothing and is not part of `make test`. Its Services part
# (BENCH_SERVICES=0 leaves it out) runs the Windows node under Wine with
# Services at the node off and on, alternately, with 100 Services and 500
# endpoints in the cloud (the e2e build edgecore-hnsrec.exe: the proxier
# programs a recording HNS), and measures memory and CPU over BENCH_WINDOW;
# then BenchmarkResponderUDP gives the DNS responder's answers per second
# and p99 on the Linux build ($(BENCH_DNS)).
REF_BIN := $(REF)/linux-amd64/edgecore
REF_PKG := github.com/kubeedge/kubeedge/edge/cmd/edgecore
BENCH_RUNS ?= 3
BENCH_WINDOW ?= 60s
BENCH_LINUX ?= 1
BENCH_WINE ?= 1
BENCH_SERVICES ?= 1
BENCH_TABLE := $(OUT)/bench-node.md
BENCH_DNS := $(OUT)/bench-dns.txt

$(REF_EXE): $(WORK) Makefile
	CGO_ENABLED=1 GOOS=windows GOARCH=amd64 CC=$(MINGW_CC) $(GOBUILD) -tags $(EDGECORE_TAGS) -o $@ $(REF_PKG)
$(REF_BIN): $(WORK) Makefile
	CGO_ENABLED=1 GOOS=linux GOARCH=amd64 $(GOBUILD) -tags $(EDGECORE_TAGS) -o $@ $(REF_PKG)

# Upstream's git tree at its release tag: the module zip of
# github.com/kubeedge/kubeedge leaves out the staging/ modules its go.mod
# replaces, so only the git tree builds upstream's edgecore as released.
# Cloned from GitHub (the tag only), or taken from a local clone or mirror
# when KUBEEDGE_GIT names one (make bench-node KUBEEDGE_GIT=/path/to/mirror);
# either way the tag must be the commit pinned here (update it with the
# KubeEdge version), and the build is offline from the tree's vendor/ (see
# build/upstream-tree.sh).
KUBEEDGE_GIT ?= https://github.com/kubeedge/kubeedge.git
UPSTREAM_TAG := $(KUBEEDGE_VERSION)
UPSTREAM_TAG_COMMIT := 1a7ee88d3c61dc781cc9c9053066ab3d38519dd5
UPSTREAM_RELEASE := $(OUT)/upstream-release
UPSTREAM_TREE := $(UPSTREAM_RELEASE)/kubeedge-$(UPSTREAM_TAG)
UPSTREAM_EXE := $(UPSTREAM_RELEASE)/windows-amd64/edgecore.exe
UPSTREAM_BIN := $(UPSTREAM_RELEASE)/linux-amd64/edgecore
$(UPSTREAM_TREE)/go.mod: build/upstream-tree.sh
	build/upstream-tree.sh $(KUBEEDGE_GIT) $(UPSTREAM_TAG) $(UPSTREAM_TAG_COMMIT) $(UPSTREAM_TREE)

# $(1): GOOS, $(2): its C compiler setting.
upstream_build = cd $(UPSTREAM_TREE) && GOWORK=off CGO_ENABLED=1 GOOS=$(1) GOARCH=amd64 $(2) go build -mod=vendor \
	-trimpath -buildvcs=false -tags $(EDGECORE_TAGS) -ldflags "$(LDFLAGS)" -o $(CURDIR)/$@ ./edge/cmd/edgecore
$(UPSTREAM_EXE): $(UPSTREAM_TREE)/go.mod Makefile
	$(call upstream_build,windows,CC=$(MINGW_CC))
$(UPSTREAM_BIN): $(UPSTREAM_TREE)/go.mod Makefile
	$(call upstream_build,linux,)

# Upstream's cloud as upstream releases it: cloudcore and KubeEdge's
# controller-manager built from upstream's git tag $(KUBEEDGE_VERSION) in
# upstream's own tree (its vendor/ and its staging beehive), as bench-node
# builds upstream's edgecore, and the cloud-job scenarios run against them:
# NodeUpgradeJobs (one confirmed, one whose release fails and is rolled
# back) and ConfigUpdateJobs (one that applies, one refused, one rolled
# back) and the pre-pull. The e2e's own cloudcore links this project's
# beehive, which keeps the order of a node's statuses that upstream's does
# not (docs/cloud-jobs.md). Not part of `make test`: it needs upstream's
# git tree (KUBEEDGE_GIT).
UPSTREAM_CLOUDCORE := $(UPSTREAM_RELEASE)/linux-amd64/cloudcore
UPSTREAM_CONTROLLER_MANAGER := $(UPSTREAM_RELEASE)/linux-amd64/controller-manager
E2E_CLOUD_JOBS := ^(TestWindowsCloudJobs|TestWindowsUpgrade)$$
# $(1): the command's folder under upstream's cloud/cmd.
upstream_cloud_build = cd $(UPSTREAM_TREE) && GOWORK=off CGO_ENABLED=0 go build -mod=vendor \
	-trimpath -buildvcs=false -ldflags "$(LDFLAGS)" -o $(CURDIR)/$@ ./cloud/cmd/$(1)
$(UPSTREAM_CLOUDCORE): $(UPSTREAM_TREE)/go.mod Makefile
	$(call upstream_cloud_build,cloudcore)
$(UPSTREAM_CONTROLLER_MANAGER): $(UPSTREAM_TREE)/go.mod Makefile
	$(call upstream_cloud_build,controllermanager)

e2e-upstream-cloud: $(UPSTREAM_CLOUDCORE) $(UPSTREAM_CONTROLLER_MANAGER)
	$(MAKE) e2e E2E_RUN='$(E2E_CLOUD_JOBS)' \
		E2E_CLOUDCORE=$(CURDIR)/$(UPSTREAM_CLOUDCORE) E2E_CONTROLLER_MANAGER=$(CURDIR)/$(UPSTREAM_CONTROLLER_MANAGER)

# A fleet of nodes (test/e2e/fleet_test.go, docs/e2e.md): FLEET_LINUX Linux
# builds of our edgecore and FLEET_WINE edgecore.exe services under Wine
# (each on a Wine host of its own), each with its own fake runtime and
# folders, against one loopback cloud; a NodeUpgradeJob across them with
# FLEET_CONCURRENCY and FLEET_FAILURE_TOLERATE while FLEET_BAD Windows
# nodes fetch, under the job's version, a release that fails its health
# gate ($(FLEET_BAD): the upgrade scenario's broken binary stamped with the
# good release's KubeEdge version); a ConfigUpdateJob and an
# ImagePrePullJob across them; then the same jobs across FLEET_REF upstream
# reference nodes ($(REF_BIN), bench-node's). It asserts how each job ends
# (upstream's controller's rules) and that no node is half-upgraded, prints
# the times and cloudcore's message counts, keeps them in $(FLEET_TABLE),
# and is not part of `make test`. Run it under the e2e lock:
# flock /tmp/e2e.lock make fleet
FLEET_LINUX ?= 16
FLEET_WINE ?= 4
FLEET_BAD ?= 2
FLEET_REF ?= 4
FLEET_CONCURRENCY ?= 2
FLEET_FAILURE_TOLERATE ?= 0.8
FLEET_TABLE := $(OUT)/fleet.md
FLEET_BAD_ZIP := $(UPGRADE)/fleet/edgecore-$(UPGRADE_BAD_VERSION)-windows-amd64.zip
$(FLEET_BAD_ZIP): $(UPGRADE)/$(UPGRADE_BAD_VERSION)/edgecore.exe build/package.sh $(RELEASED)
	KUBEEDGE_VERSION=$(UPGRADE_GOOD_KUBEEDGE) build/package.sh $< $(UPGRADE_BAD_VERSION) $@
fleet: windows linux wine-setup $(CLEAN_PREFIX)/.prepared $(FAKECRI_EXE) $(E2E)/kube-apiserver $(E2E)/kube-controller-manager $(E2E)/cloudcore $(E2E)/controller-manager $(E2E)/fakecri $(REF_BIN) $(UPGRADE_GOOD) $(FLEET_BAD_ZIP)
	@command -v etcd >/dev/null || { echo "etcd not found: apt-get install etcd-server"; exit 1; }
	$(E2E_ENV) REF_EDGECORE_BIN=$(CURDIR)/$(REF_BIN) FLEET_BAD_ZIP=$(CURDIR)/$(FLEET_BAD_ZIP) \
	FLEET_LINUX=$(FLEET_LINUX) FLEET_WINE=$(FLEET_WINE) FLEET_BAD=$(FLEET_BAD) FLEET_REF=$(FLEET_REF) \
	FLEET_CONCURRENCY=$(FLEET_CONCURRENCY) FLEET_FAILURE_TOLERATE=$(FLEET_FAILURE_TOLERATE) FLEET_OUT=$(CURDIR)/$(FLEET_TABLE) \
	go test -tags e2e,fleet -count=1 -v -run '^TestFleet$$' -timeout 90m ./test/e2e/
	@PATH="$$PATH:/usr/lib/wine" wineserver -k 2>/dev/null || true
	@cat $(FLEET_TABLE)

# The loopback cloud both benchmarks run against, and their edges.
BENCH_ENV = ETCD_BIN=$$(command -v etcd) KUBE_APISERVER_BIN=$(CURDIR)/$(E2E)/kube-apiserver CLOUDCORE_BIN=$(CURDIR)/$(E2E)/cloudcore \
	KUBE_CONTROLLER_MANAGER_BIN=$(CURDIR)/$(E2E)/kube-controller-manager \
	KUBEEDGE_CRDS=$$(go list -m -f '{{.Dir}}' github.com/kubeedge/kubeedge)/build/crds \
	EDGECORE_BIN=$(CURDIR)/$(LINUX_BIN) FAKECRI_BIN=$(CURDIR)/$(E2E)/fakecri \
	EDGECORE_EXE=$(CURDIR)/$(WIN_EXE) FAKECRI_EXE=$(CURDIR)/$(FAKECRI_EXE) EDGECORE_HNSREC_EXE=$(CURDIR)/$(HNSREC_EXE) \
	REF_EDGECORE_BIN=$(CURDIR)/$(REF_BIN) REF_EDGECORE_EXE=$(CURDIR)/$(REF_EXE) \
	BENCH_LINUX=$(BENCH_LINUX) BENCH_WINE=$(BENCH_WINE) \
	WINE=$$(PATH="$$PATH:/usr/lib/wine" command -v wine64 || command -v wine)
BENCH_DEPS := windows linux wine-setup $(FAKECRI_EXE) $(E2E)/kube-apiserver $(E2E)/kube-controller-manager $(E2E)/cloudcore $(E2E)/fakecri $(REF_EXE) $(REF_BIN)
# The builds compared with ours, needed by bench-node's Linux and Wine
# parts only (BENCH_LINUX=0 BENCH_WINE=0 runs the Services parts alone).
BENCH_COMPARED = $(if $(filter-out 0,$(BENCH_LINUX) $(BENCH_WINE)),$(REF_EXE) $(REF_BIN) $(UPSTREAM_EXE) $(UPSTREAM_BIN))

bench-node: windows linux wine-setup $(FAKECRI_EXE) $(HNSREC_EXE) $(E2E)/kube-apiserver $(E2E)/kube-controller-manager $(E2E)/cloudcore $(E2E)/fakecri $(BENCH_COMPARED)
	@command -v etcd >/dev/null || { echo "etcd not found: apt-get install etcd-server"; exit 1; }
	$(BENCH_ENV) \
	UPSTREAM_EDGECORE_BIN=$(CURDIR)/$(UPSTREAM_BIN) UPSTREAM_EDGECORE_EXE=$(CURDIR)/$(UPSTREAM_EXE) \
	BENCH_RUNS=$(BENCH_RUNS) BENCH_WINDOW=$(BENCH_WINDOW) BENCH_SERVICES=$(BENCH_SERVICES) \
	BENCH_OUT=$(CURDIR)/$(BENCH_TABLE) BENCH_LOGS=$(CURDIR)/$(OUT)/bench-node-logs \
	go test -tags e2e,benchnode -count=1 -v -run '^TestBenchNode$$' -timeout 60m ./test/e2e/
	@PATH="$$PATH:/usr/lib/wine" wineserver -k 2>/dev/null || true
	go test -tags $(EDGECORE_TAGS) -run '^$$' -bench '^BenchmarkResponderUDP$$' -benchtime 5s -count 3 ./internal/clusterdns/ > $(BENCH_DNS)
	@cat $(BENCH_TABLE) $(BENCH_DNS)

# The recovery benchmark: how long a node takes to be Ready again as
# Kubernetes reads it (the node lifecycle controller of the e2e cluster
# marks a node whose heartbeats stopped Ready=Unknown; only its kubelet
# sets Ready=True), for our edgecore and the reference (bench-node's),
# alternately RECOVERY_RUNS times each, on Linux and under Wine
# (BENCH_LINUX=0 or BENCH_WINE=0 leaves a part out): Ready again after a
# cloud outage counted from cloudcore's start, Ready again after a crash
# from the new process's start, and, labelled as such, the Lease renewed
# after the outage. It prints a Markdown table of medians, maxima and
# ratios under a line with the date and the machine, kept in
# $(RECOVERY_TABLE), keeps each node's log in $(OUT)/bench-recovery-logs,
# asserts nothing and is not part of `make test`.
RECOVERY_RUNS ?= 5
RECOVERY_TABLE := $(OUT)/bench-recovery.md
bench-recovery: $(BENCH_DEPS)
	@command -v etcd >/dev/null || { echo "etcd not found: apt-get install etcd-server"; exit 1; }
	$(BENCH_ENV) BENCH_RUNS=$(RECOVERY_RUNS) \
	BENCH_OUT=$(CURDIR)/$(RECOVERY_TABLE) BENCH_LOGS=$(CURDIR)/$(OUT)/bench-recovery-logs \
	go test -tags e2e,benchnode -count=1 -v -run '^TestBenchRecovery$$' -timeout 120m ./test/e2e/
	@PATH="$$PATH:/usr/lib/wine" wineserver -k 2>/dev/null || true
	@cat $(RECOVERY_TABLE)

# The fault-injection harness (test/e2e/chaos_test.go, chaosrun_test.go):
# our edgecore and the reference (bench-node's) on the loopback cloud, one
# after the other on the same seeded schedule, Linux build and
# edgecore.exe under Wine (BENCH_LINUX=0 or BENCH_WINE=0 leaves a part
# out): CHAOS_KILLS (Linux) and CHAOS_WINE_KILLS kills -9 at random
# moments, CHAOS_LINK_ROUNDS rounds of a cut, a black hole, a delay and
# resets of the link by a proxy between the edge and cloudcore and of
# cloudcore killed and restarted, while the cloud churns pods, ConfigMaps
# and Secrets and logs and exec streams are open. After each fault it
# checks SQLite's integrity_check, that the node's database, its runtime
# and the cloud converge and that the node is Ready again; any violation of
# ours fails the run with the seed (CHAOS_SEED replays it), the
# reference's are counted in the table it prints (kept in $(CHAOS_TABLE)).
# Not part of `make test`: TestLinuxChaosSmoke, a short schedule, is in
# `make e2e`.
CHAOS_KILLS ?= 200
CHAOS_WINE_KILLS ?= 30
CHAOS_LINK_ROUNDS ?= 2
CHAOS_SEED ?=
CHAOS_RUN ?= ^TestChaos
CHAOS_TABLE := $(OUT)/chaos.md
chaos: $(BENCH_DEPS)
	@command -v etcd >/dev/null || { echo "etcd not found: apt-get install etcd-server"; exit 1; }
	$(BENCH_ENV) CHAOS_KILLS=$(CHAOS_KILLS) CHAOS_WINE_KILLS=$(CHAOS_WINE_KILLS) CHAOS_LINK_ROUNDS=$(CHAOS_LINK_ROUNDS) CHAOS_SEED=$(CHAOS_SEED) \
	BENCH_OUT=$(CURDIR)/$(CHAOS_TABLE) BENCH_LOGS=$(CURDIR)/$(OUT)/chaos-logs \
	go test -tags e2e,chaos,benchnode -count=1 -v -run '$(CHAOS_RUN)' -timeout 600m ./test/e2e/
	@PATH="$$PATH:/usr/lib/wine" wineserver -k 2>/dev/null || true
	@cat $(CHAOS_TABLE)

# Upstream KubeEdge's own unit tests of every package that links beehive,
# edge and cloud, compiled against our beehive (see build/conformance.sh).
# After build/bump-upstream.sh: which patches still apply to the new
# upstream, then upstream's module tests against our beehive. It rebuilds
# _output/upstream: run it when no build is going.
upstream-check:
	build/upstream-check.sh

conformance: $(WORK)
	build/conformance.sh


package: $(PACKAGE)
$(PACKAGE): $(WIN_EXE) $(RUNTIME_STAMP) LICENSE NOTICE README.md docs/quickstart.md build/package.sh build/sample/main.go $(RELEASED)
	RUNTIME_DIR=$(RUNTIME_OUT) $(RUNTIME_ENV) build/package.sh $(WIN_EXE) $(VERSION) $@

package-test: package
	PACKAGE_ZIP=$(CURDIR)/$(PACKAGE) VERSION=$(VERSION) $(RUNTIME_ENV) go test -tags package -count=1 -v ./test/package/

clean:
	rm -rf $(OUT) $(SYSO)
