//go:build unix

package lambdatest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// SecretsManager is a stand-in for the one Secrets Manager call the
// functions make (GetSecretValue), serving the secrets it was given.
type SecretsManager struct {
	URL   string
	Reads atomic.Int32

	mu    sync.Mutex
	byARN map[string]int
}

// ReadsOf is how many times the secret arn was read.
func (sm *SecretsManager) ReadsOf(arn string) int {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	return sm.byARN[arn]
}

// NewSecretsManager serves value as the secret arn, and more as further
// arn, value pairs.
func NewSecretsManager(t testing.TB, arn, value string, more ...string) *SecretsManager {
	t.Helper()
	secrets := map[string]string{arn: value}
	for i := 0; i+1 < len(more); i += 2 {
		secrets[more[i]] = more[i+1]
	}
	sm := &SecretsManager{byARN: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		var in struct{ SecretId string }
		if r.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue" || json.NewDecoder(r.Body).Decode(&in) != nil {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"__type":"InvalidRequestException","message":"only GetSecretValue"}`)
			return
		}
		if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"__type":"UnrecognizedClientException","message":"unsigned request"}`)
			return
		}
		value, ok := secrets[in.SecretId]
		if !ok {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"__type":"ResourceNotFoundException","message":"Secrets Manager can't find the specified secret."}`)
			return
		}
		sm.Reads.Add(1)
		sm.mu.Lock()
		sm.byARN[in.SecretId]++
		sm.mu.Unlock()
		_ = json.NewEncoder(w).Encode(map[string]any{
			"ARN": in.SecretId, "Name": "secret", "SecretString": value,
			"VersionId": "00000000-0000-0000-0000-000000000001", "VersionStages": []string{"AWSCURRENT"},
			"CreatedDate": 1.7e9,
		})
	}))
	t.Cleanup(srv.Close)
	sm.URL = srv.URL
	return sm
}
