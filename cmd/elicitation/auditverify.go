package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mcp-elicitation/elicitation/internal/elicitation"
)

// runAuditVerify checks the hash chain of the audit trails of the requests
// named, or of every stored request: one line per request, "ok" or the
// first broken entry and why. It fails when any trail is broken.
func runAuditVerify(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var (
		c    Config
		head string
	)
	fs := flag.NewFlagSet("elicitation audit verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := storeFlags(fs, &c, getenv); err != nil {
		return err
	}
	fs.StringVar(&head, "head", "", "SEQ:HASH: also require the trail to reach this head (a receipt's), with one ID")
	flags, ids := splitOperands(fs, args)
	if err := fs.Parse(flags); err != nil {
		return err
	}
	want, err := parseHead(head)
	if err != nil || (head != "" && len(ids) != 1) {
		return errors.Join(err, errors.New("usage: elicitation audit verify [flags] [--head SEQ:HASH ELICITATION_ID | ELICITATION_ID...]"))
	}
	store, closeStore, err := openForOperator(ctx, c)
	if err != nil {
		return err
	}
	defer closeStore()
	checked, broken := 0, 0
	verify := func(id string) error {
		line, ok, err := verifyTrail(ctx, store, id, want)
		if err != nil {
			return err
		}
		checked++
		if !ok {
			broken++
		}
		_, err = fmt.Fprintln(stdout, id+": "+line)
		return err
	}
	if len(ids) == 0 {
		lister, ok := store.(elicitation.RequestLister)
		if !ok {
			return fmt.Errorf("audit verify: this store cannot list its requests: name them")
		}
		err = lister.EachRequest(ctx, verify)
	}
	for _, id := range ids {
		if err == nil {
			err = verify(id)
		}
	}
	switch {
	case err != nil:
		return fmt.Errorf("audit verify: %w", err)
	case broken > 0:
		return fmt.Errorf("audit verify: %d of %d trails broken", broken, checked)
	}
	return nil
}

// verifyTrail verifies id's trail (and that it reaches want, unless zero)
// and says how it found it.
func verifyTrail(ctx context.Context, store elicitation.Store, id string, want elicitation.AuditHead) (line string, ok bool, err error) {
	tr, err := store.Audit(ctx, id)
	if err != nil {
		return "", false, err
	}
	check, verr := elicitation.VerifyAudit(id, tr.Entries)
	var b *elicitation.AuditBreak
	switch {
	case errors.As(verr, &b):
		return "BROKEN: " + b.Error(), false, nil
	case verr != nil:
		return "", false, verr
	case !want.IsZero() && !reaches(tr.Entries, want):
		return fmt.Sprintf("BROKEN: the trail does not reach head %s (head %s): cut or rewritten", want, check.Head), false, nil
	}
	line = fmt.Sprintf("ok: %d chained, head %s", check.Chained, check.Head)
	if check.Unchained > 0 {
		line += fmt.Sprintf("; %d earlier entries predate the chain (not verifiable)", check.Unchained)
	}
	return line, true, nil
}

// reaches reports whether entries hold the chained entry named by h.
func reaches(entries []elicitation.AuditEntry, h elicitation.AuditHead) bool {
	for _, e := range entries {
		if e.Head() == h {
			return true
		}
	}
	return false
}

// parseHead reads "SEQ:HASH" (AuditHead.String); "" is the zero head.
func parseHead(s string) (elicitation.AuditHead, error) {
	if s == "" {
		return elicitation.AuditHead{}, nil
	}
	seq, hash, ok := strings.Cut(s, ":")
	n, err := strconv.ParseUint(seq, 10, 64)
	if !ok || err != nil || n == 0 || len(hash) != 64 || strings.Trim(hash, "0123456789abcdef") != "" {
		return elicitation.AuditHead{}, fmt.Errorf("--head %q: want SEQ:HASH, a positive number and 64 lowercase hex digits", s)
	}
	return elicitation.AuditHead{Seq: n, Hash: hash}, nil
}
