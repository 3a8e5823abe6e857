package dynamostore

import (
	"context"
	"encoding/json"
	"fmt"

	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// The inbox index: a sparse global secondary index of the state items of
// pending requests (partition "pending", sorted by expiresAt). Create puts
// the partition attribute, the headline and the reviewers on the state
// item; the resolution that ends the pending state removes the partition
// attribute in its own update, so the request leaves the index; a vote
// updates the approvers the index projects. A global secondary index is
// eventually consistent: a request created a moment ago may be missing
// from a listing, and one decided a moment ago may still be in it (the
// review page says it is decided).
const (
	pendingIndex   = "pending"
	attrPendingPK  = "ipk"
	attrHeadline   = "headline"
	attrReviewers  = "reviewers"
	pendingPartKey = "pending"
)

// addPending puts on a new request's state item what the index holds.
func addPending(it item, r elicitation.Request) {
	e := elicitation.InboxEntryOf(r)
	it[attrPendingPK] = str(pendingPartKey)
	putStr(it, attrHeadline, e.Headline)
	if len(e.Reviewers) > 0 {
		b, _ := json.Marshal(e.Reviewers) // strings only: cannot fail
		it[attrReviewers] = str(string(b))
	}
}

// PendingEntries implements elicitation.Store: one query of the index,
// from now on, in expiresAt order.
func (s *Store) PendingEntries(ctx context.Context, now time.Time, limit int) ([]elicitation.InboxEntry, error) {
	var out []elicitation.InboxEntry
	err := s.each(ctx, &dynamodb.QueryInput{
		IndexName:                 aws.String(pendingIndex),
		KeyConditionExpression:    aws.String("#ipk = :ipk AND #expiresAt > :now"),
		ExpressionAttributeNames:  names(attrPendingPK, attrExpiresAt),
		ExpressionAttributeValues: item{":ipk": str(pendingPartKey), ":now": num(now.UnixNano())},
	}, func(it item) error {
		if len(out) == limit {
			return errEnough
		}
		out = append(out, decodeEntry(it))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pending entries: query the pending index: %w", err)
	}
	return out, nil
}

func decodeEntry(it item) elicitation.InboxEntry {
	st := decodeState(it).State
	e := elicitation.InboxEntry{
		ID: st.ID, Kind: st.Kind, Owner: st.Owner, Headline: getS(it, attrHeadline),
		CreatedAt: st.CreatedAt, ExpiresAt: st.ExpiresAt, Approvals: st.Approvals, Approvers: st.Approvers,
	}
	if r := getS(it, attrReviewers); r != "" {
		_ = json.Unmarshal([]byte(r), &e.Reviewers) // written by addPending
	}
	return e
}
