# Cairn's entry points. `make test` is what CI runs (.ci/run).

GO        ?= go
DATA      ?= $(CURDIR)/.cairn-data
ADDRESS   ?= 127.0.0.1:9000
BENCHTIME ?= 3s
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
GOLANGCI  := $(GO) run github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0

# Tools the tests need beyond Go, as check:debian-package pairs. The check is
# a command that must be in /usr/bin (the tests prefer Debian's build there
# to another one on PATH, such as a pyenv aws-cli v1 that lacks options
# they use), or py.MODULE for a module python3 must import
# (/usr/bin/python3 when it exists, as the tests prefer it). The deps
# target installs only the packages whose check fails. The S3 client tests
# (integration/s3_cli_*_test.go) use the first four, the mount tests
# (integration/fs_*_test.go) rsync.
TEST_TOOLS := aws:awscli py.boto3:python3-boto3 rclone:rclone s3cmd:s3cmd rsync:rsync

.PHONY: all build run deps test bench lint clean

all: build

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/cairn ./cmd/cairn

# run serves S3 and Iceberg REST, and mounts the store on $(MOUNT) when
# /dev/fuse is usable here.
MOUNT ?= $(CURDIR)/.cairn-mnt
run: build
	@if [ -c /dev/fuse ] && [ "$$(id -u)" -eq 0 ]; then \
		mkdir -p $(MOUNT); \
		exec bin/cairn serve --data $(DATA) --address $(ADDRESS) --mount $(MOUNT); \
	else \
		echo "run: /dev/fuse is not usable (or not root): serving without the mount"; \
		exec bin/cairn serve --data $(DATA) --address $(ADDRESS); \
	fi

# deps installs the test tools listed in TEST_TOOLS whose check fails
# (apt-get, as root or through sudo). A no-op when all are present.
deps:
	@py=/usr/bin/python3; [ -x "$$py" ] || py=python3; \
	missing=""; \
	for pair in $(TEST_TOOLS); do \
		check=$${pair%%:*}; pkg=$${pair#*:}; \
		case "$$check" in \
		py.*) "$$py" -c "import $${check#py.}" >/dev/null 2>&1 ;; \
		*) [ -x "/usr/bin/$$check" ] ;; \
		esac || missing="$$missing $$pkg"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "deps: installing$$missing"; \
		sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
		$$sudo apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing; \
	fi

# Every package runs under the race detector. The integration tests (which
# build and drive the binary) get a longer timeout; under -race they build
# cairn and their crash workers with -race as well, and a race report of
# any child fails them (integration/race_test.go). The last lines of output
# are go test's own.
test: deps
	$(GO) build ./...
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 15m $$($(GO) list ./... | grep -v '/integration$$')
	$(GO) test -race -count=1 -timeout 25m ./integration/

bench:
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) ./objstore/...

lint:
	$(GO) vet ./...
	$(GOLANGCI) run ./...

clean:
	rm -rf bin
