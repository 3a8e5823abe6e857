package lambdaconfig_test

import (
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/lambdaconfig"
)

// RETENTION_DAYS may be fractional (the template's parameter is a Number):
// a request is kept that long, not the whole days below it.
func TestFractionalRetentionDays(t *testing.T) {
	e, err := lambdaconfig.FromEnv(getenv(with("RETENTION_DAYS", "1.5")))
	if err != nil {
		t.Fatal(err)
	}
	if want := 36 * time.Hour; e.Retention != want {
		t.Errorf("RETENTION_DAYS=1.5: Retention %v, want %v", e.Retention, want)
	}
}
