package ratelimit

import "sync"

// Slots bounds what callers hold at once (calls waiting, watches), per
// principal and in all: one principal's holds count against its share,
// never another's. The zero value bounds nothing; NewSlots sets bounds.
type Slots struct {
	max, share int // 0: no bound

	mu    sync.Mutex
	total int
	by    map[string]int
}

// NewSlots bounds the holds at max in all and share per principal (0: no
// bound); a share above max, or none under a max, is max.
func NewSlots(max, share int) *Slots {
	if max > 0 && (share == 0 || share > max) {
		share = max
	}
	return &Slots{max: max, share: share, by: map[string]int{}}
}

// Share is the bound on one principal's holds (0: none).
func (w *Slots) Share() int { return w.share }

// Hold takes a slot for principal unless its share or the total is full;
// release gives it back (once, however often it is called).
func (w *Slots) Hold(principal string) (release func(), ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if (w.share > 0 && w.by[principal] >= w.share) || (w.max > 0 && w.total >= w.max) {
		return nil, false
	}
	if w.by == nil {
		w.by = map[string]int{}
	}
	w.total++
	w.by[principal]++
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.total--
			if w.by[principal]--; w.by[principal] <= 0 {
				delete(w.by, principal)
			}
		})
	}, true
}

// Held is how many slots principal holds, and all principals together.
func (w *Slots) Held(principal string) (mine, total int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.by[principal], w.total
}
