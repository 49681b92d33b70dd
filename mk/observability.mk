# Prometheus and Alertmanager for the observability and alert-intake tests.
# Included by the Makefile (`include mk/*.mk`); `make test` depends on
# `observability`.
#
# Prometheus and promtool: Debian's `prometheus` package when installed
# (.ci/run installs it; 2.42 in Debian 12 serves every API the tests use),
# which saves building it (minutes on a cold 2-core machine). Otherwise,
# and for Alertmanager always, they are built from the Go module proxy with
# `go install` into a cache outside the repository, keyed by version, once
# per machine. Debian's Alertmanager (0.25 in Debian 12) is not used: the
# tests rely on answers of the pinned release, e.g. 404 for an unknown
# silence where 0.25 answers 500.
#
# Alertmanager releases after v0.28.1 do not build this way (their UI assets
# are not in the module), hence the pin.
#
# The tests give Prometheus static targets only, so it is built with the
# `remove_all_sd` tag: without the cloud and Kubernetes service discovery
# plugins (their SDKs are most of its dependencies), a cold build takes
# minutes less. Like every tool built for the tests, both are linked
# without symbol table and DWARF (-s -w): nobody debugs them, and it
# shortens the link of large binaries.

GO                   ?= go
VIGIL_CACHE          ?= $(HOME)/.cache/vigil
PROMETHEUS_VERSION   ?= v0.316.0
ALERTMANAGER_VERSION ?= v0.28.1
PROMETHEUS_BIN       := $(VIGIL_CACHE)/prometheus-$(PROMETHEUS_VERSION)/prometheus
PROMTOOL_BIN         := $(VIGIL_CACHE)/prometheus-$(PROMETHEUS_VERSION)/promtool
ALERTMANAGER_BIN     := $(VIGIL_CACHE)/alertmanager-$(ALERTMANAGER_VERSION)/alertmanager

.PHONY: observability prometheus alertmanager

observability: prometheus alertmanager ## build Prometheus and Alertmanager for the tests (once, cached)

# Debian's package, found where internal/testenv/obsbin looks for it.
DEBIAN_PROMETHEUS := $(wildcard /usr/bin/prometheus)

# Like obsbin: a build in the cache first, else Debian's, else build.
ifeq ($(if $(wildcard $(PROMETHEUS_BIN)),,$(DEBIAN_PROMETHEUS)),)
prometheus: $(PROMETHEUS_BIN) $(PROMTOOL_BIN) ## the Prometheus the tests run against (Debian's, else built once)
else
prometheus:
	@echo "observability: using Debian's prometheus and promtool in /usr/bin (not building Prometheus)"
endif
alertmanager: $(ALERTMANAGER_BIN) ## build the Alertmanager the tests run against

# promtool (deploy/'s tests check the example alert rules with it) is built
# in the same command: it shares nearly all of Prometheus's packages.
$(PROMETHEUS_BIN) $(PROMTOOL_BIN) &:
	@echo "observability: building prometheus $(PROMETHEUS_VERSION) into $(@D) (once; several minutes)"
	GOBIN=$(@D) GOFLAGS=-p=2 $(GO) install -trimpath -ldflags="-s -w" -tags remove_all_sd github.com/prometheus/prometheus/cmd/prometheus@$(PROMETHEUS_VERSION) github.com/prometheus/prometheus/cmd/promtool@$(PROMETHEUS_VERSION)

$(ALERTMANAGER_BIN):
	@echo "observability: building alertmanager $(ALERTMANAGER_VERSION) into $(@D) (once)"
	GOBIN=$(@D) GOFLAGS=-p=2 $(GO) install -trimpath -ldflags="-s -w" github.com/prometheus/alertmanager/cmd/alertmanager@$(ALERTMANAGER_VERSION)
