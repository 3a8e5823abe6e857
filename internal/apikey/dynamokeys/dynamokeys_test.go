package dynamokeys_test

import (
	"os"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/apikey"
	"github.com/mcp-elicitation/elicitation/internal/apikey/apikeytest"
	"github.com/mcp-elicitation/elicitation/internal/apikey/dynamokeys"
	"github.com/mcp-elicitation/elicitation/internal/dynamostore/dynamotest"
)

func TestMain(m *testing.M) { os.Exit(dynamotest.Main(m)) }

func TestContract(t *testing.T) {
	t.Parallel()
	apikeytest.Run(t, func(t *testing.T) (a, b apikey.Store) {
		c1 := dynamotest.Client(dynamotest.Endpoint(t))
		table := dynamotest.Table(t, c1)
		c2 := dynamotest.Client(dynamotest.Endpoint(t))
		return dynamokeys.New(c1, table), dynamokeys.New(c2, table)
	})
}
