# Deployment checks: lint and render the Helm chart, parse the compose file,
# Dockerfile and systemd unit (deploy/deploy_test.go). Included by the
# Makefile (`include mk/*.mk`).
#
# helm is built once with `go install` into a cache outside the repository
# (about two minutes the first time); set HELM to use another binary.
#
# deploy/'s tests run with -race although they start no goroutines worth
# checking: they import vigil's config and metrics, and with the flags of
# `go vet -race` (run before them by `make test`) they reuse that build
# instead of compiling those packages' dependencies a second time (the
# PostgreSQL grammar's C code among them).

GO          ?= go
HELM_VERSION ?= v3.22.0
TOOLS_BIN   ?= $(HOME)/.cache/vigil/bin
HELM        ?= $(TOOLS_BIN)/helm
CHART       := deploy/helm/vigil
CHART_FULL  := --set redis.enabled=true --set serviceMonitor.enabled=true

.PHONY: deploy-check

$(HELM):
	@mkdir -p $(TOOLS_BIN)
	@echo "deploy: installing helm $(HELM_VERSION) into $(TOOLS_BIN) (once, a few minutes)"
	GOBIN=$(TOOLS_BIN) $(GO) install -trimpath -ldflags="-s -w" helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)

deploy-check: $(HELM) ## lint and render the Helm chart, check compose, Dockerfile and systemd unit
	$(HELM) lint --strict $(CHART)
	$(HELM) lint --strict $(CHART) $(CHART_FULL)
	$(HELM) template vigil $(CHART) >/dev/null
	$(HELM) template vigil $(CHART) $(CHART_FULL) >/dev/null
	VIGIL_HELM=$(HELM) $(GO) test -race -count=1 ./deploy/
