# edgebench: see README.md.
GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)
BUILD     := CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)'
CMDS      := $(notdir $(wildcard cmd/*))

# The Go that builds and tests edgebench: a patched release of the one
# go.mod names, since govulncheck finds vulnerabilities in the standard
# library of older ones. The go command fetches it from the module proxy
# the first time (GOTOOLCHAIN=local in the environment keeps the
# machine's own).
GOTOOLCHAIN ?= go1.26.11
export GOTOOLCHAIN
# The Go vulnerability database that govulncheck reads, offline, pinned
# by version and hash (scripts/vulncheck.sh).
VULNDB     := golang.org/x/vulndb@v0.0.0-20261105234957-e22db6528018
VULNDB_SUM := h1:mfngRv0Yoh0VApsXKEN82CjD99kl7mtparN3bs3JnqI=

.PHONY: all build cross test lint vulncheck generate check-generated docs mutate bench demo deb clean

all: build

build:
	@mkdir -p bin
	@for c in $(CMDS); do [ -n "$$(ls cmd/$$c/*.go 2>/dev/null)" ] || continue; \
		echo "build bin/$$c"; $(BUILD) -o bin/$$c ./cmd/$$c || exit 1; done

# Static device binaries for the boards edgebench runs on, and the
# collector's for the machines that host it.
cross: dist/edgebench-linux-armv6 dist/edgebench-linux-armv7 dist/edgebench-linux-arm64 dist/edgebench-linux-amd64 \
	dist/edgebench-collector-linux-armv7 dist/edgebench-collector-linux-arm64 dist/edgebench-collector-linux-amd64

dist/edgebench-linux-armv6: FORCE
	GOOS=linux GOARCH=arm GOARM=6 $(BUILD) -o $@ ./cmd/edgebench
dist/edgebench-linux-armv7: FORCE
	GOOS=linux GOARCH=arm GOARM=7 $(BUILD) -o $@ ./cmd/edgebench
dist/edgebench-linux-arm64: FORCE
	GOOS=linux GOARCH=arm64 $(BUILD) -o $@ ./cmd/edgebench
dist/edgebench-linux-amd64: FORCE
	GOOS=linux GOARCH=amd64 $(BUILD) -o $@ ./cmd/edgebench
dist/edgebench-collector-linux-armv7: FORCE
	GOOS=linux GOARCH=arm GOARM=7 $(BUILD) -o $@ ./cmd/edgebench-collector
dist/edgebench-collector-linux-arm64: FORCE
	GOOS=linux GOARCH=arm64 $(BUILD) -o $@ ./cmd/edgebench-collector
dist/edgebench-collector-linux-amd64: FORCE
	GOOS=linux GOARCH=amd64 $(BUILD) -o $@ ./cmd/edgebench-collector
FORCE:

# gofmt, go vet, staticcheck (pinned in go.mod's tool block; a finding
# that is meant is marked in place with //lint:ignore and why) and
# govulncheck.
lint: vulncheck
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

vulncheck:
	GO=$(GO) scripts/vulncheck.sh $(VULNDB) $(VULNDB_SUM)

generate:
	$(GO) generate ./...

# Generated code is committed: regenerate and fail on any difference, or
# on a generated file that is new and not committed.
check-generated: generate
	@git diff --exit-code -- '*_gen.go' '*_gen_test.go' || { echo "generated code is out of date: run 'make generate' and commit"; exit 1; }
	@new=$$(git status --porcelain --untracked-files=all -- '*_gen.go' '*_gen_test.go'); if [ -n "$$new" ]; then echo "generated files not committed:"; echo "$$new"; exit 1; fi

# The manual pages (docs/man) and shell completions (docs/completion: bash,
# zsh, fish) of both binaries, made from the commands' own flag
# definitions (internal/cli/docs.go). The output is committed, the .debs
# install it, and TestDocsAreCurrent (part of make test) fails when it
# is not what the flags make now.
docs:
	$(GO) test ./cmd/edgebench ./cmd/edgebench-collector -run '^TestDocsAreCurrent$$' -count=1 -args -update-docs

# The hand-made mutants of internal/mutate/mutants.txt: each is applied,
# the tests that guard it run, and the survivors are listed (TESTING.md).
mutate:
	$(GO) run ./internal/mutate

# 32-bit pass: unaligned 64-bit atomics and int overflows show up on arm.
TEST32 := ./loadgen/... ./target/... ./probe/... ./measure/... ./wire/... ./spool/... ./transport/... ./agent/...

# The whole suite: lint, generated code, race-enabled tests, the
# allocation guards without the race detector (it moves values to the
# heap, so they skip under it) and the load generator's tests of time and
# CPU (it slows them many times over), the mutants tagged ci, and the 32-bit
# packages again as armv7 binaries under qemu-user (-short: tests that
# start processes of their own, or read the live process table, skip there).
test: lint check-generated
	$(GO) test -race -timeout 30m ./...
	$(GO) test -count=1 -run 'Alloc|LittlesLaw|SleepsBetweenSends' ./loadgen/... ./probe/... ./wire/...
	$(GO) run ./internal/mutate -ci
	@if command -v qemu-arm-static >/dev/null; then \
		echo "32-bit pass: GOARCH=arm GOARM=7 under qemu-arm-static"; \
		CGO_ENABLED=0 GOARCH=arm GOARM=7 $(GO) test -short -timeout 20m -exec qemu-arm-static $(TEST32); \
	elif [ "$$CI" = true ]; then echo "qemu-arm-static missing: CI must install qemu-user-static"; exit 1; \
	else echo "SKIPPED the 32-bit pass: qemu-arm-static is not installed (apt-get install qemu-user-static)"; fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
	bench/loadgen.sh

deb: cross
	packaging/deb.sh $(VERSION)

# The whole loop on loopback: collector with its embedded broker, two
# agents labelled board=pi4 and board=pi5 running the same test 6 times
# each through the collector, their comparison printed; everything it
# starts it stops. DEMO_BROKER, DEMO_WEB, DEMO_TARGET, DEMO_NGINX,
# DEMO_REPEAT and DEMO_DURATION change it (scripts/demo.sh).
demo: build
	scripts/demo.sh

clean:
	rm -rf bin dist
