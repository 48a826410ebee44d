package loadgen

import "testing"

// TestWindowEdges: a request due at the window's start is the window's,
// one due a ns before it the warm-up's; a request that ends a ns before
// the deadline is the window's, one that ends at it is drained; and the
// timeline's second turns at each whole second of the window.
func TestWindowEdges(t *testing.T) {
	sh := &shared{measureStart: 1000, deadline: 5000}
	if sh.inWindow(999) || !sh.inWindow(1000) || !sh.inWindow(4999) {
		t.Errorf("inWindow(999, 1000, 4999) = %v %v %v, want false true true", sh.inWindow(999), sh.inWindow(1000), sh.inWindow(4999))
	}
	w := &worker{sh: sh}
	if tl, win := w.part(&request{counted: false}, 2000); tl != nil || win || w.warmup != 1 {
		t.Errorf("a warm-up request: tally %v, window %v, warm-up %d", tl, win, w.warmup)
	}
	if tl, win := w.part(&request{counted: true}, 4999); tl != &w.win || !win || w.lastEnd != 4999 {
		t.Errorf("a request ending a ns before the deadline: window %v, last end %d", win, w.lastEnd)
	}
	if tl, win := w.part(&request{counted: true}, 5000); tl != &w.drained || win || w.lastEnd != 4999 {
		t.Errorf("a request ending at the deadline: window %v, last end %d", win, w.lastEnd)
	}
	if w.win.requests != 1 || w.drained.requests != 1 {
		t.Errorf("window %d, drained %d requests, want 1 and 1", w.win.requests, w.drained.requests)
	}
	sh.measureStart = 0
	w = &worker{sh: sh}
	for _, tc := range []struct {
		now  int64
		want int
	}{{0, 0}, {999_999_999, 0}, {1_000_000_000, 1}, {2_999_999_999, 2}} {
		w.second(tc.now)
		if w.sec != tc.want {
			t.Errorf("at %d ns: second %d, want %d", tc.now, w.sec, tc.want)
		}
	}
}
