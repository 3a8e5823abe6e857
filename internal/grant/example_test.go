package grant_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/grant"
	"github.com/mcp-elicitation/elicitation/internal/grant/granttest"
)

// A code is redeemed once: read it, then delete the version read. A
// second presentation finds nothing; a refresh token rotates the same way,
// with a Put over the version read.
func Example() {
	ctx := context.Background()
	var s grant.Store = &granttest.Memory{} // boltstore's or dynamostore's Grants in a server

	code, err := s.Put(ctx, grant.Record{
		Kind: "code", ID: "Splx1OBeZQQYbYS6WxSbIA", Data: []byte(`{"client":"c-1"}`),
		Expires: time.Now().Add(time.Minute),
	})
	fmt.Println("stored:", err)

	for range 2 {
		r, err := s.Get(ctx, "code", code.ID)
		if err == nil {
			err = s.Delete(ctx, "code", r.ID, r.Version)
		}
		switch {
		case err == nil:
			fmt.Printf("redeemed: %s\n", r.Data)
		case errors.Is(err, grant.ErrNotFound), errors.Is(err, grant.ErrConflict):
			fmt.Println("refused: already redeemed")
		}
	}

	_, err = s.Put(ctx, grant.Record{Kind: "code", ID: "a b", Expires: time.Now()})
	fmt.Println(err)
	// Output:
	// stored: <nil>
	// redeemed: {"client":"c-1"}
	// refused: already redeemed
	// grant: invalid record: code: id: byte 1 is not printable ASCII (a space, a control byte or not ASCII)
}
