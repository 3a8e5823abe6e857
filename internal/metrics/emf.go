package metrics

import (
	"encoding/json"
	"io"
	"sync"
	"time"
)

// EMF is the Lambda functions' encoding: each measurement is one line in
// CloudWatch's embedded metric format, written to the function's log
// (standard output), which CloudWatch Logs turns into metrics without any
// call of the function's own. The metric names are the Prometheus names;
// the dimensions are the labels.
//
// A line:
//
//	{"_aws":{"Timestamp":1733356800000,"CloudWatchMetrics":[{"Namespace":"Elicitation",
//	  "Dimensions":[["principal","kind"]],"Metrics":[{"Name":"elicitation_requests_created_total","Unit":"Count"}]}]},
//	 "principal":"ci","kind":"approval","elicitation_requests_created_total":1}
type emfSink struct {
	namespace string
	now       func() time.Time
	mu        sync.Mutex
	w         io.Writer
}

// NewEMF counts into EMF lines written to w in namespace; maxPrincipals
// bounds the principal dimension (0: default); now is the clock of the
// lines' timestamps (nil: time.Now).
func NewEMF(w io.Writer, namespace string, maxPrincipals int, now func() time.Time) *Counts {
	if now == nil {
		now = time.Now
	}
	return newCounts(&emfSink{namespace: namespace, now: now, w: w}, maxPrincipals)
}

// EMFMetadata is an EMF line's _aws object.
type EMFMetadata struct {
	Timestamp         int64                `json:"Timestamp"`
	CloudWatchMetrics []EMFMetricDirective `json:"CloudWatchMetrics"`
}

// EMFMetricDirective says which of a line's members are metrics and
// which are their dimensions.
type EMFMetricDirective struct {
	Namespace  string                `json:"Namespace"`
	Dimensions [][]string            `json:"Dimensions"`
	Metrics    []EMFMetricDefinition `json:"Metrics"`
}

// EMFMetricDefinition names one metric and its unit.
type EMFMetricDefinition struct {
	Name string `json:"Name"`
	Unit string `json:"Unit,omitempty"`
}

func (s *emfSink) count(name string, labels ...Label) { s.write(name, "Count", 1, labels) }

// gauge writes a value as it is now (a gauge): CloudWatch keeps each
// line's value, so its Maximum over a period is the gauge.
func (s *emfSink) gauge(name string, v float64, labels ...Label) { s.write(name, "Count", v, labels) }

func (s *emfSink) seconds(name string, v float64, labels ...Label) {
	s.write(name, "Seconds", v, labels)
}

// write writes one line; a failed write is dropped (a metric never fails
// the work it counts).
func (s *emfSink) write(name, unit string, v float64, labels []Label) {
	line := map[string]any{name: v}
	dims := make([]string, 0, len(labels))
	for _, l := range labels {
		line[l.Name] = l.Value
		dims = append(dims, l.Name)
	}
	line["_aws"] = EMFMetadata{
		Timestamp: s.now().UnixMilli(),
		CloudWatchMetrics: []EMFMetricDirective{{
			Namespace: s.namespace, Dimensions: [][]string{dims},
			Metrics: []EMFMetricDefinition{{Name: name, Unit: unit}},
		}},
	}
	b, err := json.Marshal(line)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = s.w.Write(append(b, '\n'))
}
