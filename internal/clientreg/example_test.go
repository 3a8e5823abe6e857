package clientreg

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"
)

func ExampleCheckRedirectURI() {
	for _, uri := range []string{
		"https://app.example.com/callback",
		"http://127.0.0.1:51004/callback",
		"com.example.app:/oauth2redirect",
		"http://app.example.com/callback",
		"myapp://callback",
		"https://app.example.com/callback#x",
	} {
		fmt.Println(uri, "→", CheckRedirectURI(uri))
	}
	// Output:
	// https://app.example.com/callback → <nil>
	// http://127.0.0.1:51004/callback → <nil>
	// com.example.app:/oauth2redirect → <nil>
	// http://app.example.com/callback → http is allowed only on loopback (127.0.0.1, [::1] or localhost); use https
	// myapp://callback → the private-use scheme "myapp" is not in reverse-domain form (such as com.example.app)
	// https://app.example.com/callback#x → a fragment is not allowed
}

func ExampleRegistry_RegisterHandler() {
	registry, err := New(Config{
		Store: newMemStore(time.Now), // internal/boltstore or internal/dynamostore in the binaries
		Operator: []Client{{
			ID: "ops-cli", Name: "Operations CLI", RedirectURIs: []string{"http://127.0.0.1/callback"},
		}},
	})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(registry.RegisterHandler())
	defer srv.Close()

	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(
		`{"client_name":"Claude Code","redirect_uris":["http://localhost:33418/callback"],
		  "grant_types":["authorization_code","refresh_token"]}`))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var answer struct {
		ClientID string `json:"client_id"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&answer)
	fmt.Println(resp.Status)

	client, err := registry.Lookup(context.Background(), answer.ClientID)
	if err != nil {
		panic(err)
	}
	fmt.Println(client.Name, client.Source, client.AuthMethod)
	fmt.Println(client.RedirectHost("http://localhost:50999/callback"))

	ops, _ := registry.Lookup(context.Background(), "ops-cli")
	fmt.Println(ops.Name, ops.Source)
	// Output:
	// 201 Created
	// Claude Code registered none
	// localhost
	// Operations CLI operator
}
