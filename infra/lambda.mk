# Lambda builds for `sam build` (template.yaml: Metadata BuildMethod makefile) and the API key
# administration targets. The top-level Makefile includes this file; it also works alone:
#
#   make -f infra/lambda.mk build-McpFunction ARTIFACTS_DIR=/tmp/out
#
# sam build runs `make build-<LogicalId>` in the module root (CodeUri: .) with ARTIFACTS_DIR
# set to the function's artifact directory; the bootstrap it needs lands there.
#
#   make lambda            build all five bootstraps into .aws-sam/bootstrap/<function>/
#   make lambda-sizes      ... and print their sizes, beside an aws-lambda-go hello world built the
#                          same way (make lambda-hello: internal/lambdatest/testdata/hello, not shipped)
#   make api-key-create PRINCIPAL=alice TABLE=<table> [NAME=laptop] [EXPIRES=90d]
#   make api-key-list   TABLE=<table>
#   make api-key-revoke TABLE=<table> ID=<key id>
#
# Set LAMBDA_GOARCH=amd64 to build for an x86_64 machine (the emulator tests do that).

GO            ?= go
LAMBDA_GOOS   ?= linux
LAMBDA_GOARCH ?= arm64
LAMBDA_FLAGS  ?= -tags lambda.norpc -trimpath -buildvcs=false -ldflags='-s -w'
ARTIFACTS_DIR ?= .aws-sam/bootstrap/$(LAMBDA_FUNCTION)
ELICITATION   ?= $(GO) run ./cmd/elicitation

LAMBDA_FUNCTIONS := mcp review submit notify oauth

# lambda-build builds ./functions/$(1) into $(2)/bootstrap.
define lambda-build
	GOOS=$(LAMBDA_GOOS) GOARCH=$(LAMBDA_GOARCH) CGO_ENABLED=0 $(GO) build $(LAMBDA_FLAGS) -o $(2)/bootstrap ./functions/$(1)
endef

# The yardstick: an aws-lambda-go hello world, built with the same flags.
LAMBDA_HELLO := ./internal/lambdatest/testdata/hello

.PHONY: build-McpFunction build-ReviewFunction build-SubmitFunction build-NotifyFunction build-OAuthFunction lambda lambda-hello lambda-sizes \
	api-key-create api-key-list api-key-revoke

build-McpFunction:
	$(call lambda-build,mcp,$(ARTIFACTS_DIR))

build-ReviewFunction:
	$(call lambda-build,review,$(ARTIFACTS_DIR))

build-SubmitFunction:
	$(call lambda-build,submit,$(ARTIFACTS_DIR))

build-NotifyFunction:
	$(call lambda-build,notify,$(ARTIFACTS_DIR))

build-OAuthFunction:
	$(call lambda-build,oauth,$(ARTIFACTS_DIR))

lambda:
	@$(foreach f,$(LAMBDA_FUNCTIONS),$(call lambda-build,$(f),.aws-sam/bootstrap/$(f)) &&) true

lambda-hello: LAMBDA_FUNCTION = hello
lambda-hello:
	GOOS=$(LAMBDA_GOOS) GOARCH=$(LAMBDA_GOARCH) CGO_ENABLED=0 $(GO) build $(LAMBDA_FLAGS) -o $(ARTIFACTS_DIR)/bootstrap $(LAMBDA_HELLO)

lambda-sizes: lambda lambda-hello
	@for f in $(LAMBDA_FUNCTIONS) hello; do \
	  b=.aws-sam/bootstrap/$$f/bootstrap; \
	  awk -v f=$$f -v n=$$(wc -c < $$b) -v z=$$(gzip -9 -c $$b | wc -c) \
	    'BEGIN { printf "%-7s bootstrap %5.1f MB (%d bytes, %.1f MiB), gzip -9 %4.1f MiB\n", f, n/1e6, n, n/1048576, z/1048576 }'; \
	done

# API keys live in the deployed table: run with credentials for the account
# (AWS_PROFILE / AWS_REGION), TABLE from the stack's TableName output. The
# values reach the command as environment variables (make puts command-line
# variables there), never pasted into the recipe's text, so any character in
# a NAME ("alice's laptop") arrives as typed.
api-key-create:
	@test -n "$$PRINCIPAL" || { echo "usage: make api-key-create PRINCIPAL=<name> TABLE=<table> [NAME=<note>] [EXPIRES=90d]"; exit 2; }
	@test -n "$$TABLE" || { echo "TABLE is required (the stack's TableName output)"; exit 2; }
	$(ELICITATION) keys --store dynamodb --table "$$TABLE" create --principal "$$PRINCIPAL" $${NAME:+--name "$$NAME"} $${EXPIRES:+--expires "$$EXPIRES"}

api-key-list:
	@test -n "$$TABLE" || { echo "usage: make api-key-list TABLE=<table>"; exit 2; }
	$(ELICITATION) keys --store dynamodb --table "$$TABLE" list

api-key-revoke:
	@test -n "$$TABLE" -a -n "$$ID" || { echo "usage: make api-key-revoke TABLE=<table> ID=<key id>"; exit 2; }
	$(ELICITATION) keys --store dynamodb --table "$$TABLE" revoke "$$ID"
