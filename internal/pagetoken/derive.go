package pagetoken

import (
	"crypto/hmac"
	"crypto/sha256"
	"slices"
)

// Derive returns the keyring's keys, the current one first, each with its
// secret replaced by HMAC-SHA256(secret, purpose): keys for another signer
// (the reviewer's sign-in session) that rotate with this keyring without
// sharing its secrets.
func (k *Keyring) Derive(purpose string) []Key {
	ids := make([]string, 0, len(k.keys))
	for id := range k.keys {
		if id != k.current.ID {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	ids = append([]string{k.current.ID}, ids...)
	out := make([]Key, len(ids))
	for i, id := range ids {
		m := hmac.New(sha256.New, k.keys[id])
		m.Write([]byte(purpose))
		out[i] = Key{ID: id, Secret: m.Sum(nil)}
	}
	return out
}
