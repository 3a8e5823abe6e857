//go:build unix

package lambdatest_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-elicitation/elicitation/internal/lambdatest"
	"github.com/mcp-elicitation/elicitation/internal/percentile"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// BenchmarkMCPMemory measures the MCP function at the memory sizes a
// deployment may choose (docs/benchmarks.md, "128 MB against 256 MB"):
// each size's bootstrap runs under the emulator in a cgroup holding it to
// that much memory and to Lambda's CPU share for it (size / 1,769 MB of one
// CPU, lambdatest.Limits), beside an unlimited one, each on its own stack
// (DynamoDB Local, the review and submit functions). Every round, in an
// order that rotates: a cold start (init from the emulator's INIT REPORT;
// the first answer, a tools/list), 20 elicit_status calls (the emulator's
// REPORT durations: what Lambda bills; and round trips), and one wake: an
// elicit_await in flight when the reviewer's submission lands through the
// submit function, timed from the submission's answer to the await's.
// b.N × 10 rounds; -benchtime 1x gives 10. It reports medians and p99s as
// metrics and logs the table.
func BenchmarkMCPMemory(b *testing.B) {
	testenv.Slow(b, "Lambda emulator")
	sizes := []lambdatest.Limits{
		{MemoryMB: 128, CPU: lambdatest.LambdaCPU(128)},
		{MemoryMB: 256, CPU: lambdatest.LambdaCPU(256)},
		{}, // unlimited: the machine's cores
	}
	type figures struct {
		inits, colds, status, statusRT, wakes []time.Duration
		peak, rss                             int64
		throttled                             int64
		throttledFor                          time.Duration
	}
	stacks := make([]*stack, len(sizes))
	statusEv := make([][]byte, len(sizes))
	figs := make([]figures, len(sizes))
	for i, l := range sizes {
		stacks[i] = newStack(b, stackOptions{mcpLimits: l})
		sel := mustTool(b, stacks[i].fn["mcp"], event(b, "mcp-elicit-selection", phKey, stacks[i].keys["alice"]))
		statusEv[i] = event(b, "mcp-elicit-status", phKey, stacks[i].keys["alice"], phID, sel.ElicitationID)
	}
	b.ResetTimer()
	rounds := 10 * b.N
	for r := range rounds {
		for k := range sizes {
			i := (r + k) % len(sizes)
			s, f := stacks[i], &figs[i]
			// A cold start replaces the stack's MCP function.
			old := s.fn["mcp"]
			fresh := old.Again(b)
			if resp, _ := fresh.Invoke(b, event(b, "mcp-tools-list", phKey, s.keys["alice"])); resp.StatusCode != 200 {
				b.Fatalf("%s: the first call answered %d: %s", sizes[i], resp.StatusCode, resp.Body)
			}
			f.colds = append(f.colds, time.Since(fresh.Started))
			in := fresh.WaitInitDurations()
			if len(in) != 1 {
				b.Fatalf("%s: want one INIT REPORT line:\n%s", sizes[i], fresh.Logs())
			}
			f.inits = append(f.inits, in[0])
			f.peak, f.rss = max(f.peak, old.PeakMemory()), max(f.rss, old.PeakRSS())
			n, d := old.Throttled()
			f.throttled, f.throttledFor = f.throttled+n, f.throttledFor+d
			old.Stop()
			s.fn["mcp"] = fresh

			reports := 1
			for range 20 {
				_, rt := fresh.Invoke(b, statusEv[i])
				f.statusRT = append(f.statusRT, rt)
				reports++
			}
			ds := fresh.WaitDurations(reports)
			if len(ds) < reports {
				b.Fatalf("%s: %d REPORT lines, want %d", sizes[i], len(ds), reports)
			}
			f.status = append(f.status, ds[1:reports]...)
			f.wakes = append(f.wakes, wake(b, s))
		}
	}
	b.StopTimer()
	b.Logf("%d rounds, CPU share = memory / %d MB of one CPU, CFS period 100 ms", rounds, lambdatest.LambdaVCPUMB)
	b.Logf("| limits | init p50 / max | cold start p50 | elicit_status billed mean / p50 / p99 / max | round trip p50 / p99 | wake p50 / max | peak RSS / cgroup charge | CPU throttled |")
	for i, l := range sizes {
		f := &figs[i]
		f.peak, f.rss = max(f.peak, stacks[i].fn["mcp"].PeakMemory()), max(f.rss, stacks[i].fn["mcp"].PeakRSS())
		n, d := stacks[i].fn["mcp"].Throttled()
		f.throttled, f.throttledFor = f.throttled+n, f.throttledFor+d
		b.Logf("| %s | %v / %v | %v | %v / %v / %v / %v | %v / %v | %v / %v | %.1f / %.1f MiB | %d periods, %v |", l,
			pct(f.inits, 50), pct(f.inits, 100), pct(f.colds, 50),
			mean(f.status), pct(f.status, 50), pct(f.status, 99), pct(f.status, 100),
			pct(f.statusRT, 50), pct(f.statusRT, 99),
			pct(f.wakes, 50), pct(f.wakes, 100), float64(f.rss)/(1<<20), float64(f.peak)/(1<<20), f.throttled, f.throttledFor.Round(time.Millisecond))
		name := strconv.Itoa(l.MemoryMB) + "MB"
		if l.MemoryMB == 0 {
			name = "unlimited"
		}
		b.ReportMetric(ms(pct(f.inits, 50)), "init-p50-ms-"+name)
		b.ReportMetric(ms(pct(f.status, 99)), "status-p99-ms-"+name)
		b.ReportMetric(ms(mean(f.status)), "status-mean-ms-"+name)
		b.ReportMetric(ms(pct(f.wakes, 50)), "wake-p50-ms-"+name)
	}
}

// wake creates a selection, renders its review page, starts an
// elicit_await on the stack's MCP function and, once that invocation is
// polling the request (two more reads of it than before), submits through
// the submit function; it returns the time from the submission's answer to
// the await's (negative if the await answered first).
func wake(b *testing.B, s *stack) time.Duration {
	b.Helper()
	alice := s.keys["alice"]
	sel := mustTool(b, s.fn["mcp"], event(b, "mcp-elicit-selection", phKey, alice))
	id, key := reviewParts(b, sel.ReviewURL)
	page, _ := s.fn["review"].Invoke(b, event(b, "review-get", phID, id, phRKey, key))
	token := pageToken(b, page.Body)
	awaitEv := []byte(strings.Replace(string(event(b, "mcp-elicit-await", phKey, alice, phID, id)), `\"waitSeconds\":2`, `\"waitSeconds\":15`, 1))
	type done struct {
		out toolOutput
		at  time.Time
	}
	ch := make(chan done, 1)
	before := stateReads(s)
	go func() {
		out, _ := tool(b, s.fn["mcp"], awaitEv)
		ch <- done{out, time.Now()}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for stateReads(s) < before+2 {
		if time.Now().After(deadline) {
			b.Fatalf("the await did not start reading the request: %v", s.enforcers["mcp"].Calls())
		}
		time.Sleep(5 * time.Millisecond) // a condition poll: the enforcer has no notification
	}
	form := "token=" + token + "&decision=submitted&option=a&option=c"
	submitEv := []byte(strings.NewReplacer(phID, id, phRKey, key, "token=REPLACE_WITH_PAGE_TOKEN&decision=submitted&f.notify=oncall%40example.com&f.window=tonight", form).
		Replace(string(event(b, "submit-valid"))))
	if sub, _ := s.fn["submit"].Invoke(b, submitEv); sub.StatusCode != 200 {
		b.Fatalf("submission: %d\n%.2000s", sub.StatusCode, sub.Body)
	}
	answered := time.Now()
	select {
	case d := <-ch:
		if d.out.Status != "submitted" {
			b.Fatalf("elicit_await = %+v, want submitted", d.out)
		}
		return d.at.Sub(answered)
	case <-time.After(30 * time.Second):
		b.Fatal("elicit_await did not return")
	}
	return 0
}

// stateReads is how many GetItem reads of request items the MCP function
// has made.
func stateReads(s *stack) int {
	n := 0
	for _, c := range s.enforcers["mcp"].Calls() {
		if rest, ok := strings.CutPrefix(c, "GetItem req# ×"); ok {
			v, _ := strconv.Atoi(rest)
			n += v
		}
	}
	return n
}

// pct is the p-th percentile of ds (nearest rank; 100 the maximum).
func pct(ds []time.Duration, p int) time.Duration {
	return percentile.Of(ds, p).Round(100 * time.Microsecond)
}

func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return (sum / time.Duration(len(ds))).Round(100 * time.Microsecond)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
