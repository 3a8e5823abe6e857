package elicitation

import (
	"slices"
	"sync"
	"sync/atomic"
)

// Wakes is a store's registry of the watches on its requests in this
// process (Waiter.Watch): a write that may have changed a request's state
// calls Wake with its id once it committed, and every watch of that id is
// called, each on a goroutine of its own, outside the registry's lock (so
// a wake may read the store, or stop its own watch). The zero value is
// ready to use; it is safe for concurrent use.
type Wakes struct {
	mu      sync.Mutex
	watches map[string][]*wakeWatch // a request's watches, a few at most
}

type wakeWatch struct {
	wake    func()
	stopped atomic.Bool
}

// Watch registers wake for id until stop is called. A wake already on its
// way when stop is called may still arrive.
func (w *Wakes) Watch(id string, wake func()) (stop func()) {
	ww := &wakeWatch{wake: wake}
	w.mu.Lock()
	if w.watches == nil {
		w.watches = map[string][]*wakeWatch{}
	}
	w.watches[id] = append(w.watches[id], ww)
	w.mu.Unlock()
	return func() {
		if ww.stopped.Swap(true) {
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		rest := slices.DeleteFunc(w.watches[id], func(x *wakeWatch) bool { return x == ww })
		if len(rest) == 0 {
			delete(w.watches, id)
		} else {
			w.watches[id] = rest
		}
	}
}

// Wake calls every watch of id, each on a goroutine of its own.
func (w *Wakes) Wake(id string) {
	w.mu.Lock()
	ws := slices.Clone(w.watches[id])
	w.mu.Unlock()
	for _, ww := range ws {
		go func() {
			if !ww.stopped.Load() {
				ww.wake()
			}
		}()
	}
}
