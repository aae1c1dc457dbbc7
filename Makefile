# Cairn's entry points. `make test` is what CI runs (.ci/run).

GO        ?= go
DATA      ?= $(CURDIR)/.cairn-data
ADDRESS   ?= 127.0.0.1:9000
BENCHTIME ?= 3s
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
GOLANGCI  := $(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0

# Tools the tests need beyond Go, as command:debian-package pairs. The deps
# target installs only the missing ones. Empty today; the S3 tests will add
# e.g. aws:awscli.
TEST_TOOLS :=

.PHONY: all build run deps test bench lint clean

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/cairn ./cmd/cairn

run: build
	bin/cairn serve --data $(DATA) --address $(ADDRESS)

# deps installs the test tools listed in TEST_TOOLS that are not on PATH
# (apt-get, as root or through sudo). A no-op while the list is empty.
deps:
	@missing=""; \
	for pair in $(TEST_TOOLS); do \
		cmd=$${pair%%:*}; pkg=$${pair#*:}; \
		command -v "$$cmd" >/dev/null 2>&1 || missing="$$missing $$pkg"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "deps: installing$$missing"; \
		sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
		$$sudo apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing; \
	fi

# Unit tests run with the race detector; the integration tests (which build
# and drive the binary) run without it and with a longer timeout. The last
# lines of output are go test's own.
test: deps
	$(GO) build ./...
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 15m $$($(GO) list ./... | grep -v /integration)
	$(GO) test -count=1 -timeout 20m ./integration/...

bench:
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) ./objstore/...

lint:
	$(GO) vet ./...
	$(GOLANGCI) run ./...

clean:
	rm -rf bin
