package signing_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/mcp-elicitation/elicitation/internal/sealer"
	"github.com/mcp-elicitation/elicitation/internal/signing"
)

func ring(ids ...string) []sealer.Key {
	var out []sealer.Key
	for _, id := range ids {
		out = append(out, sealer.Key{ID: id, Secret: []byte(strings.Repeat(id, 32))})
	}
	return out
}

// The same keyring derives the same keys (every function of a deployment
// signs alike); each key of the ring its own; what the current key signs,
// the published set verifies, and after a rotation still does.
func TestDerive(t *testing.T) {
	t.Parallel()
	a, err := signing.Derive(ring("k1"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := signing.Derive(ring("k1"))
	if !a[0].Private.Equal(b[0].Private) {
		t.Error("one keyring derived two different keys")
	}
	rotated, _ := signing.Derive(ring("k2", "k1"))
	if rotated[0].Private.Equal(a[0].Private) || !rotated[1].Private.Equal(a[0].Private) || rotated[0].ID == rotated[1].ID {
		t.Error("a rotation did not give a new current key beside the previous one")
	}
	if _, err := signing.Derive(nil); err == nil {
		t.Error("Derive(nil) gave keys")
	}
	signer, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: a[0].Private}, (&jose.SignerOptions{}).WithHeader("kid", a[0].ID))
	jws, _ := signer.Sign([]byte("payload"))
	compact, _ := jws.CompactSerialize()

	srv := httptest.NewServer(signing.Handler(rotated))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil || resp.Header.Get("Content-Type") != "application/jwk-set+json" {
		t.Fatalf("key set: %v %s", err, resp.Header.Get("Content-Type"))
	}
	parsed, _ := jose.ParseSignedCompact(compact, []jose.SignatureAlgorithm{jose.ES256})
	keys := set.Key(a[0].ID)
	if len(keys) != 1 {
		t.Fatalf("the published set has no key %s after the rotation", a[0].ID)
	}
	got, err := parsed.Verify(keys[0])
	if err != nil || !bytes.Equal(got, []byte("payload")) {
		t.Fatalf("the previous key's signature does not verify with the published set: %v", err)
	}
	if set.Keys[0].IsPublic() == false {
		t.Error("the published set holds a private key")
	}
}

func ExampleDerive() {
	keys, err := signing.Derive([]sealer.Key{{ID: "k1", Secret: []byte("a secret of at least thirty-two bytes")}})
	if err != nil {
		panic(err)
	}
	set := signing.JWKS(keys)
	fmt.Println(keys[0].ID, set.Keys[0].Algorithm, set.Keys[0].IsPublic())
	// Output: es256-k1 ES256 true
}
