// Command hello is the yardstick for the functions' bootstraps: an
// aws-lambda-go function that answers every API Gateway event with 200 and
// does nothing else. It is built as the functions are (make lambda-hello,
// infra/lambda.mk) and run under the emulator beside them
// (TestColdAndWarm), so that their size and cold start have something to be
// compared with. It is not a shipped function (testdata: go build ./...
// skips it).
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: "hello"}, nil
	})
}
