package dynamostore_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// fault is what the fault client does to one attempt.
type fault int

const (
	throughputExceeded fault = iota // 400 ProvisionedThroughputExceededException
	throttling                      // 400 ThrottlingException
	serverError                     // 500 InternalServerError
	stalled                         // the attempt times out before any response
	lostResponse                    // the request reaches DynamoDB; its response is lost
	hang                            // no response until the call's context ends
)

func (f fault) String() string {
	return [...]string{"ProvisionedThroughputExceeded", "Throttling", "500", "stalled", "lost-response", "hang"}[f]
}

// faults is an HTTP client in front of the SDK's that fails chosen attempts.
// arm queues faults for the next attempts of one operation ("" for any);
// ops counts the attempts per operation.
type faults struct {
	next dynamodb.HTTPClient

	mu     sync.Mutex
	op     string
	queue  []fault
	ops    map[string]int
	before func(op string) // called before an attempt goes out, if set
	// landed, if set, is called after an attempt's response arrived; when
	// it returns true the response is dropped, as if the connection broke.
	landed func(op string) bool
	// watches are reached's: each closes when op's count reaches at.
	watches []opWatch
}

type opWatch struct {
	op   string
	at   int
	done chan struct{}
}

// reached returns a channel closed once n more attempts of op have gone
// out: how a test knows a waiter is polling, where a sleep would guess.
func (f *faults) reached(op string, n int) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := opWatch{op: op, at: f.ops[op] + n, done: make(chan struct{})}
	f.watches = append(f.watches, w)
	return w.done
}

// wakeWatches closes the watches op's count has reached; f.mu is held.
func (f *faults) wakeWatches(op string) {
	kept := f.watches[:0]
	for _, w := range f.watches {
		if w.op == op && f.ops[op] >= w.at {
			close(w.done)
			continue
		}
		kept = append(kept, w)
	}
	f.watches = kept
}

func newFaults(next dynamodb.HTTPClient) *faults {
	return &faults{next: next, ops: map[string]int{}}
}

func (f *faults) arm(op string, fs ...fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.op, f.queue = op, append([]fault(nil), fs...)
}

func (f *faults) disarm() (left int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	left = len(f.queue)
	f.queue = nil
	return left
}

func (f *faults) setHooks(before func(string), landed func(string) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.before, f.landed = before, landed
}

func (f *faults) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ops[op]
}

func (f *faults) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops = map[string]int{}
}

func (f *faults) Do(req *http.Request) (*http.Response, error) {
	op := strings.TrimPrefix(req.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
	f.mu.Lock()
	f.ops[op]++
	f.wakeWatches(op)
	var k fault
	armed := len(f.queue) > 0 && (f.op == "" || f.op == op)
	if armed {
		k, f.queue = f.queue[0], f.queue[1:]
	}
	before, landed := f.before, f.landed
	f.mu.Unlock()
	if before != nil {
		before(op)
	}
	if !armed {
		resp, err := f.next.Do(req)
		if err == nil && landed != nil && landed(op) {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return nil, &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer (injected)")}
		}
		return resp, err
	}
	switch k {
	case throughputExceeded:
		return errorResponse(req, 400, "ProvisionedThroughputExceededException", "The level of configured provisioned throughput for the table was exceeded (injected)")
	case throttling:
		return errorResponse(req, 400, "ThrottlingException", "Rate of requests exceeds the allowed throughput (injected)")
	case serverError:
		return errorResponse(req, 500, "InternalServerError", "Internal server error (injected)")
	case stalled:
		select {
		case <-time.After(30 * time.Millisecond):
			return nil, &net.OpError{Op: "read", Net: "tcp", Err: timeoutError{}}
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	case lostResponse:
		resp, err := f.next.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return nil, &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer (injected)")}
	case hang:
		<-req.Context().Done()
		return nil, req.Context().Err()
	}
	panic("unknown fault")
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout (injected)" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func errorResponse(req *http.Request, status int, code, msg string) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	body := fmt.Sprintf(`{"__type":"com.amazonaws.dynamodb.v20120810#%s","message":%q}`, code, msg)
	return &http.Response{
		Status: fmt.Sprintf("%d %s", status, http.StatusText(status)), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/x-amz-json-1.0"}, "X-Amzn-Requestid": {"injected"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}, nil
}

// withFaults puts f in front of the client's HTTP client.
func withFaults(f *faults) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		f.next = o.HTTPClient
		o.HTTPClient = f
	}
}

func (f *faults) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.ops {
		n += c
	}
	return n
}

// polling waits until ch (a reached channel) is closed, or fails t.
func polling(t testing.TB, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter never polled")
	}
}
