//go:build unix

package lambdatest

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// Gateway is a stand-in for API Gateway's HTTP API in front of functions:
// an HTTP server that turns each request into a payload 2.0 event (with
// its cookies, headers, query and body), invokes the function route picks
// (nil: 404), and writes the function's response back (Set-Cookie from the
// response's cookies). A browser, or an HTTP client with a cookie jar,
// can then go through a whole flow, redirects and sign-in included.
func Gateway(t testing.TB, route func(method, path string) (routeKey string, f *Function)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, f := route(r.Method, r.URL.Path)
		if f == nil {
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 10<<20))
		ev := events.APIGatewayV2HTTPRequest{
			Version: "2.0", RouteKey: key, RawPath: r.URL.EscapedPath(), RawQueryString: r.URL.RawQuery,
			Headers: map[string]string{},
			RequestContext: events.APIGatewayV2HTTPRequestContext{
				DomainName: r.Host, Stage: "$default", RouteKey: key, RequestID: "gw-" + time.Now().Format("150405.000000000"),
				TimeEpoch: time.Now().UnixMilli(),
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
					Method: r.Method, Path: r.URL.Path, Protocol: "HTTP/1.1", SourceIP: "127.0.0.1", UserAgent: r.UserAgent(),
				},
			},
			Body: string(body),
		}
		for k, vs := range r.Header {
			if strings.EqualFold(k, "Cookie") {
				for _, v := range vs {
					for _, c := range strings.Split(v, ";") {
						if c = strings.TrimSpace(c); c != "" {
							ev.Cookies = append(ev.Cookies, c)
						}
					}
				}
				continue
			}
			ev.Headers[strings.ToLower(k)] = strings.Join(vs, ",")
		}
		b, err := jsonMarshal(ev)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		resp, _ := f.Invoke(t, b)
		for k, v := range resp.Headers {
			w.Header().Set(k, v)
		}
		for k, vs := range resp.MultiValueHeaders {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		for _, c := range resp.Cookies {
			w.Header().Add("Set-Cookie", c)
		}
		out := []byte(resp.Body)
		if resp.IsBase64Encoded {
			out, _ = base64.StdEncoding.DecodeString(resp.Body)
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
