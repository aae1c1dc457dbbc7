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
# (integration/fs_*_test.go) rsync, setfattr and getfattr (attr), the
# console's browser tests (integration/console_test.go) chromium, node and npm.
TEST_TOOLS := aws:awscli py.boto3:python3-boto3 rclone:rclone s3cmd:s3cmd rsync:rsync setfattr:attr \
	chromium:chromium node:nodejs npm:npm

.PHONY: all build run deps console-deps engines test-engines test bench lint clean

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

# The console's browser tests drive Debian's chromium with playwright-core
# from npm (integration/console/package-lock.json). console-deps installs
# it with `npm ci` into PLAYWRIGHT, a cache outside the repository (a no-op
# while the lock file is unchanged), and prints the directory. The tests
# find it through CAIRN_PLAYWRIGHT and skip without it; their screenshots
# go to CAIRN_ARTIFACTS (default /tmp/cairn-artifacts)/console.
PLAYWRIGHT ?= $(or $(CAIRN_PLAYWRIGHT),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/cairn/console)

INSTALL_PLAYWRIGHT = if ! cmp -s integration/console/package-lock.json '$(PLAYWRIGHT)/package-lock.json' || \
		[ ! -f '$(PLAYWRIGHT)/node_modules/playwright-core/package.json' ]; then \
		mkdir -p '$(PLAYWRIGHT)' && \
		cp integration/console/package.json integration/console/package-lock.json '$(PLAYWRIGHT)/' && \
		(cd '$(PLAYWRIGHT)' && npm ci --no-audit --no-fund --loglevel=error) >&2 || exit 1; \
	fi

console-deps:
	@$(INSTALL_PLAYWRIGHT); echo '$(PLAYWRIGHT)'

# The engine tests (integration/engine_*_test.go) run Spark, PyIceberg and
# Trino against the binary. engines installs them from the registries by
# package name into ENGINES, a cache outside the repository
# (integration/engines/install.sh: a no-op once installed), then any
# engine's own install script (integration/engines/*/install.sh), and
# prints the cache directory. The tests find it through CAIRN_ENGINES.
# The S3 client and catalog tests run a second time against three nodes on
# 127.0.0.1-3 sharing one store over etcd (integration/cluster_helpers_test.go).
CLUSTER_TESTS := ^(TestS3SDK|TestS3Minio|TestCLIAws|TestCLIBoto3|TestCLIRclone|TestCLIS3cmd|TestS3Behaviours|TestS3ACL|TestS3PolicyBoto3|TestSTSAssumeRole|TestIcebergClient)$$

ENGINES ?= $(or $(CAIRN_ENGINES),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/cairn/engines)

INSTALL_ENGINES = CAIRN_ENGINES='$(ENGINES)' bash integration/engines/install.sh >&2 || exit 1; \
	for s in integration/engines/*/install.sh; do \
		[ -f "$$s" ] || continue; \
		CAIRN_ENGINES='$(ENGINES)' bash "$$s" >&2 || exit 1; \
	done

engines:
	@$(INSTALL_ENGINES); echo '$(ENGINES)'

# test-engines installs the engines and runs only their tests.
test-engines: engines
	CAIRN_ENGINES='$(ENGINES)' $(GO) test -race -count=1 -timeout 30m -run 'TestEngine' ./integration/

# Every package runs under the race detector. The integration tests (which
# build and drive the binary) get a longer timeout; under -race they build
# cairn and their crash workers with -race as well, and a race report of
# any child fails them (integration/race_test.go). Where Java and Python
# are present the engines are installed and their tests run among the
# integration tests (they skip without CAIRN_ENGINES), hence the longer
# timeout. The last lines of output are go test's own.
test: deps
	$(GO) build ./...
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 15m $$($(GO) list ./... | grep -v '/integration$$')
	CAIRN_TEST_CHUNK_SEGMENTS=2 $(GO) test -count=1 -timeout 10m ./objstore/
	@if command -v java >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1; then \
		$(INSTALL_ENGINES); \
		export CAIRN_ENGINES='$(ENGINES)'; \
	else \
		echo "test: no java or python3 on PATH: the engine tests skip"; \
	fi; \
	if command -v npm >/dev/null 2>&1; then \
		$(INSTALL_PLAYWRIGHT); \
		export CAIRN_PLAYWRIGHT='$(PLAYWRIGHT)'; \
	else \
		echo "test: no npm on PATH: the console's browser tests skip"; \
	fi; \
	echo "$(GO) test -race -count=1 -timeout 35m ./integration/ (CAIRN_ENGINES=$${CAIRN_ENGINES:-unset} CAIRN_PLAYWRIGHT=$${CAIRN_PLAYWRIGHT:-unset})"; \
	$(GO) test -race -count=1 -timeout 35m ./integration/
	CAIRN_TEST_CLUSTER=3 $(GO) test -count=1 -timeout 20m -run '$(CLUSTER_TESTS)' ./integration/

bench:
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) ./objstore/...

lint:
	$(GO) vet ./...
	$(GOLANGCI) run ./...

clean:
	rm -rf bin
