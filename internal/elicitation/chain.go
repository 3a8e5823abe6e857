package elicitation

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
)

// A request's audit trail is a hash chain: each stored entry carries its
// place in the trail (Seq, from 1), the hash of the entry before it (Prev,
// "" for the first) and its own hash (Hash), computed by EntryHash over the
// request's id, its fields and Prev. A store chains an entry to the trail's
// current head atomically with storing it (ChainEntry is the one place that
// does), so that two writers never fork the chain; VerifyAudit checks a
// trail as read back.
//
// Entries stored before the chain existed carry no hash: they are the
// trail's unchained prefix, read before the chained entries, and reported
// as such rather than as a break. Entries of bounded actions beyond
// AuditCap are counted, not stored, and so not chained.

// auditChainTag starts every entry's hashed encoding: it names the encoding,
// so that a later one can never be mistaken for it.
const auditChainTag = "elicitation-audit-v1"

// AuditHead names the end of a request's chained trail: the last entry's
// Seq and Hash. The zero head is that of a trail with no chained entry.
type AuditHead struct {
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
}

// IsZero reports whether h is the head of a trail with no chained entry.
func (h AuditHead) IsZero() bool { return h.Seq == 0 && h.Hash == "" }

// String is "seq:hash", the form `elicitation audit verify --head` takes.
func (h AuditHead) String() string { return strconv.FormatUint(h.Seq, 10) + ":" + h.Hash }

// Head is the head of the trail that ends with e (zero if e is unchained).
func (e AuditEntry) Head() AuditHead {
	if e.Hash == "" {
		return AuditHead{}
	}
	return AuditHead{Seq: e.Seq, Hash: e.Hash}
}

// SortUnchained orders a trail's unchained prefix (the entries stored
// before the chain) by At, keeping append order for equal times and
// mending clock steps as stores did before the chain; the chained entries
// that follow stay in the order they were stored, which VerifyAudit checks.
func SortUnchained(entries []AuditEntry) {
	n := 0
	for n < len(entries) && entries[n].Hash == "" {
		n++
	}
	slices.SortStableFunc(entries[:n], func(a, b AuditEntry) int { return a.At.Compare(b.At) })
}

// OutcomeHead is the head of a trail at its request's outcome: that of the
// last entry recording a decision (ActionDecided), or zero if there is
// none or it predates the chain.
func OutcomeHead(entries []AuditEntry) AuditHead {
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].Action == ActionDecided {
			return entries[i].Head()
		}
	}
	return AuditHead{}
}

// ChainEntry returns e chained after head in request id's trail: Seq one
// past head's, Prev head's hash, and Hash computed by EntryHash. A store
// calls it with the head it read in the same atomic write that stores the
// entry (or conditions that write on the head being unchanged).
func ChainEntry(id string, head AuditHead, e AuditEntry) AuditEntry {
	e.Seq = head.Seq + 1
	e.Prev = head.Hash
	e.Hash = EntryHash(id, e)
	return e
}

// EntryHash is the hash of entry e of request id's trail: lowercase hex of
// SHA-256 over the concatenation of these parts, each as its length in
// bytes (8 bytes, big-endian) followed by its UTF-8 bytes:
//
//	"elicitation-audit-v1", id, Seq (decimal), At (Unix nanoseconds in
//	decimal, "" for the zero time), Action, Principal, Detail, Via,
//	Issuer, Prev
//
// e's own Hash is not part of it. Every part is length-prefixed, so no two
// different entries share an encoding, and any language recomputes it.
func EntryHash(id string, e AuditEntry) string {
	at := ""
	if !e.At.IsZero() {
		at = strconv.FormatInt(e.At.UnixNano(), 10)
	}
	h := sha256.New()
	for _, part := range []string{
		auditChainTag, id, strconv.FormatUint(e.Seq, 10), at,
		string(e.Action), e.Principal, e.Detail, string(e.Via), e.Issuer, e.Prev,
	} {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(part))))
		h.Write([]byte(part))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// AuditCheck is what VerifyAudit found in a trail that holds.
type AuditCheck struct {
	// Unchained counts the leading entries stored before the chain.
	Unchained int `json:"unchained"`
	// Chained counts the entries whose chain was verified.
	Chained int `json:"chained"`
	// Head is the last chained entry's (zero when none).
	Head AuditHead `json:"head"`
}

// Ways a trail breaks.
const (
	BreakEdited    = "edited"    // the entry's hash does not match its fields
	BreakRemoved   = "removed"   // entries before this one are missing
	BreakInserted  = "inserted"  // the entry does not follow the one before it
	BreakReordered = "reordered" // the entry comes before one it follows
)

// AuditBreak is the first entry at which a trail fails verification.
type AuditBreak struct {
	Index int    // the entry's position in the trail as read, from 0
	Seq   uint64 // the Seq the entry carries
	Kind  string // BreakEdited, BreakRemoved, BreakInserted or BreakReordered
	// Reason says what did not match.
	Reason string
}

func (b *AuditBreak) Error() string {
	return fmt.Sprintf("audit entry %d (seq %d) %s: %s", b.Index, b.Seq, b.Kind, b.Reason)
}

// VerifyAudit checks request id's trail, its entries in the order a store
// reads them: the unchained prefix, then each chained entry's hash against
// its fields and its Seq and Prev against the entry before it. It returns
// an *AuditBreak naming the first entry that fails. A trail cut short at
// its end still holds: compare Head with a head recorded elsewhere (a
// receipt's) to find that.
func VerifyAudit(id string, entries []AuditEntry) (AuditCheck, error) {
	var c AuditCheck
	for c.Unchained < len(entries) && entries[c.Unchained].Hash == "" {
		c.Unchained++
	}
	seen := map[uint64]bool{}
	for i := c.Unchained; i < len(entries); i++ {
		e := entries[i]
		if b := chainBreak(id, c.Head, e, entries[i+1:], seen); b != "" {
			return c, &AuditBreak{Index: i, Seq: e.Seq, Kind: b, Reason: breakReason(b, c.Head, e)}
		}
		seen[e.Seq] = true
		c.Chained++
		c.Head = e.Head()
	}
	return c, nil
}

// chainBreak is how e, read after the entry whose head is head, breaks the
// chain ("" if it does not); rest is what follows e, seen the Seqs before.
func chainBreak(id string, head AuditHead, e AuditEntry, rest []AuditEntry, seen map[uint64]bool) string {
	want := head.Seq + 1
	switch {
	case e.Hash == "":
		return BreakInserted
	case EntryHash(id, e) != e.Hash:
		return BreakEdited
	case e.Seq == want && e.Prev == head.Hash:
		return ""
	case e.Seq == want, seen[e.Seq]:
		return BreakInserted
	case e.Seq < want:
		return BreakReordered
	}
	for _, r := range rest {
		if r.Seq == want {
			return BreakReordered
		}
	}
	return BreakRemoved
}

func breakReason(kind string, head AuditHead, e AuditEntry) string {
	switch {
	case kind == BreakEdited:
		return "its hash does not match its fields"
	case e.Hash == "":
		return "it has no hash, after the chain began"
	case kind == BreakRemoved && e.Seq == head.Seq+2:
		return fmt.Sprintf("seq %d is missing before it", head.Seq+1)
	case kind == BreakRemoved:
		return fmt.Sprintf("seq %d to %d missing before it", head.Seq+1, e.Seq-1)
	case kind == BreakReordered && e.Seq > head.Seq:
		return fmt.Sprintf("seq %d comes after it", head.Seq+1)
	case kind == BreakReordered:
		return fmt.Sprintf("it is read after seq %d", head.Seq)
	case e.Seq == head.Seq+1:
		return fmt.Sprintf("its prev does not match the hash of seq %d", head.Seq)
	}
	return fmt.Sprintf("seq %d already read", e.Seq)
}
