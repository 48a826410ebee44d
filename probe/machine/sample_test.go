package machine

import "testing"

func TestThrottleWordRoundTrip(t *testing.T) {
	for w := uint32(0); w < 16; w++ {
		if got := ThrottleFlagsOf(w).Word(); got != w {
			t.Errorf("%#x -> %#x", w, got)
		}
	}
}
