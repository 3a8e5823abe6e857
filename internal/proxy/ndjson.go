// Newline-delimited JSON-RPC streams below the SDK's
// transport: a lineReader hands each line to a function that may consume it
// (then the SDK never decodes it), and a lineWriter serializes whole messages
// written by the SDK and by the proxy itself.

package proxy

import (
	"bufio"
	"errors"
	"io"
	"sync"
)

// lineReader passes the lines of r through, except those take consumes.
type lineReader struct {
	br      *bufio.Reader
	closer  io.Closer
	max     int
	take    func(line []byte) bool
	done    func(error)
	line    []byte // the start of a line longer than the buffer
	passing bool   // inside a line too long to look at
	pending []byte
	err     error
}

// defaultMaxLine is the longest line a lineReader looks at unless told
// otherwise: the SDK's own limit for a stdio message.
const defaultMaxLine = 16 << 20

// newLineReader returns a lineReader over r. take is called, on the reading
// goroutine, with every complete line (newline included) of at most max
// bytes (0 means defaultMaxLine, a negative value no limit) and reports
// whether it consumed it; longer lines are passed on as they arrive. done,
// if set, is called once when r fails or ends. Close closes r if it is an
// io.Closer.
func newLineReader(r io.Reader, max int, take func(line []byte) bool, done func(error)) *lineReader {
	if max == 0 {
		max = defaultMaxLine
	}
	c, _ := r.(io.Closer)
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), closer: c, max: max, take: take, done: done}
}

func (f *lineReader) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		frag, err := f.br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			if f.passing || (f.max >= 0 && len(f.line)+len(frag) > f.max) {
				f.pending = append(f.line, frag...)
				f.line, f.passing = nil, true
			} else {
				f.line = append(f.line, frag...)
			}
		case err != nil:
			f.err = err
			if f.done != nil {
				f.done(err)
			}
			f.pending = append(f.line, frag...) // an unterminated last line: the SDK judges it
			f.line = nil
			if len(f.pending) == 0 {
				return 0, err
			}
		default:
			line := append(f.line, frag...) // a copy: frag is the buffer's
			f.line = nil
			if f.passing {
				f.passing = false
				f.pending = line
			} else if !f.take(line) {
				f.pending = line
			}
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// Close closes the underlying reader.
func (f *lineReader) Close() error {
	if f.closer != nil {
		return f.closer.Close()
	}
	return nil
}

// lineWriter writes each message to w in one piece, whoever writes it. Close
// calls close if set, otherwise closes w if it is an io.Closer.
type lineWriter struct {
	mu    sync.Mutex
	w     io.Writer
	close func() error
}

// newLineWriter returns a lineWriter over w; close, if not nil, replaces closing w.
func newLineWriter(w io.Writer, close func() error) *lineWriter {
	return &lineWriter{w: w, close: close}
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

func (w *lineWriter) Close() error {
	if w.close != nil {
		return w.close()
	}
	if c, ok := w.w.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
