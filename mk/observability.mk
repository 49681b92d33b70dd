# Prometheus and Alertmanager for the observability and alert-intake tests.
# Both are built from the Go module proxy with `go install` into a cache
# outside the repository, keyed by version, once per machine (Prometheus
# takes several minutes cold; Alertmanager under one). Included by the
# Makefile (`include mk/*.mk`); `make test` depends on `observability`.
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
ALERTMANAGER_BIN     := $(VIGIL_CACHE)/alertmanager-$(ALERTMANAGER_VERSION)/alertmanager

.PHONY: observability prometheus alertmanager

observability: prometheus alertmanager ## build Prometheus and Alertmanager for the tests (once, cached)

prometheus: $(PROMETHEUS_BIN) ## build the Prometheus the tests run against
alertmanager: $(ALERTMANAGER_BIN) ## build the Alertmanager the tests run against

$(PROMETHEUS_BIN):
	@echo "observability: building prometheus $(PROMETHEUS_VERSION) into $(@D) (once; several minutes)"
	GOBIN=$(@D) GOFLAGS=-p=2 $(GO) install -trimpath -ldflags="-s -w" -tags remove_all_sd github.com/prometheus/prometheus/cmd/prometheus@$(PROMETHEUS_VERSION)

$(ALERTMANAGER_BIN):
	@echo "observability: building alertmanager $(ALERTMANAGER_VERSION) into $(@D) (once)"
	GOBIN=$(@D) GOFLAGS=-p=2 $(GO) install -trimpath -ldflags="-s -w" github.com/prometheus/alertmanager/cmd/alertmanager@$(ALERTMANAGER_VERSION)
