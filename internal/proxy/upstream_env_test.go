package proxy

import (
	"reflect"
	"testing"

	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
)

func TestChildEnv(t *testing.T) {
	t.Parallel()
	proxyEnv := func() []string {
		return []string{"HOME=/home/u", "PATH=/bin", "AWS_SECRET_ACCESS_KEY=s3cr3t", "USER=u", "TERM=() { :; }", "LANG=C", "broken"}
	}
	got := childEnv(upstreamOptions{Environ: proxyEnv, Upstream: config.Upstream{Env: map[string]string{"B": "2", "A": "1", "PATH": "/opt/bin"}}})
	want := []string{"HOME=/home/u", "USER=u", "A=1", "B=2", "PATH=/opt/bin"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("default environment\n got %q\nwant %q", got, want)
	}
	got = childEnv(upstreamOptions{Environ: proxyEnv, Upstream: config.Upstream{InheritEnv: true, Env: map[string]string{"LANG": "de"}}})
	want = []string{"HOME=/home/u", "PATH=/bin", "AWS_SECRET_ACCESS_KEY=s3cr3t", "USER=u", "TERM=() { :; }", "LANG=de"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("inherited environment\n got %q\nwant %q", got, want)
	}
}
