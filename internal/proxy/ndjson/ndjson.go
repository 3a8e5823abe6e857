// Package ndjson filters newline-delimited JSON-RPC streams below the SDK's
// transport: a Reader hands each line to a function that may consume it
// (then the SDK never decodes it), and a Writer serializes whole messages
// written by the SDK and by the proxy itself.
package ndjson

import (
	"bufio"
	"io"
	"sync"
)

// Reader passes the lines of r through, except those take consumes.
type Reader struct {
	br      *bufio.Reader
	closer  io.Closer
	take    func(line []byte) bool
	done    func(error)
	pending []byte
	err     error
}

// NewReader returns a Reader over r. take is called, on the reading
// goroutine, with every complete line (newline included) and reports
// whether it consumed it; done, if set, is called once when r fails or
// ends. Close closes r if it is an io.Closer.
func NewReader(r io.Reader, take func(line []byte) bool, done func(error)) *Reader {
	c, _ := r.(io.Closer)
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), closer: c, take: take, done: done}
}

func (f *Reader) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, err := f.br.ReadBytes('\n')
		if err != nil {
			f.err = err
			if f.done != nil {
				f.done(err)
			}
			if len(line) == 0 {
				return 0, err
			}
			f.pending = line // an unterminated last line: the SDK judges it
			break
		}
		if f.take(line) {
			continue
		}
		f.pending = line
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// Close closes the underlying reader.
func (f *Reader) Close() error {
	if f.closer != nil {
		return f.closer.Close()
	}
	return nil
}

// Writer writes each message to w in one piece, whoever writes it. Close
// calls close if set, otherwise closes w if it is an io.Closer.
type Writer struct {
	mu    sync.Mutex
	w     io.Writer
	close func() error
}

// NewWriter returns a Writer over w; close, if not nil, replaces closing w.
func NewWriter(w io.Writer, close func() error) *Writer {
	return &Writer{w: w, close: close}
}

func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

func (w *Writer) Close() error {
	if w.close != nil {
		return w.close()
	}
	if c, ok := w.w.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
