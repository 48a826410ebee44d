package agent

import (
	"errors"
	"testing"
	"time"
)

// TestReplayWindowEdges walks a command through every edge of its window
// (issued_at - skew .. expires_at + skew), a nanosecond either side: a
// command is let through once anywhere inside, refused as early or
// expired outside, and refused as a replay up to and including the last
// instant it would still be let through, in the same guard and in one
// reopened from its state file.
func TestReplayWindowEdges(t *testing.T) {
	const skew = time.Minute
	issued := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	expires := issued.Add(10 * time.Minute)
	first, last := issued.Add(-skew), expires.Add(skew) // the window, both ends included

	open := func(dir string, clk *fakeClock) *ReplayGuard {
		t.Helper()
		g, err := OpenReplayGuard(dir, ReplayOptions{Skew: skew, Now: clk.now})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	for _, tc := range []struct {
		name string
		at   time.Time
		want error
	}{
		{"a nanosecond before issued_at - skew", first.Add(-time.Nanosecond), ErrNotYetValid},
		{"at issued_at - skew", first, nil},
		{"at issued_at", issued, nil},
		{"at expires_at", expires, nil},
		{"at expires_at + skew", last, nil},
		{"a nanosecond after expires_at + skew", last.Add(time.Nanosecond), ErrExpired},
	} {
		clk := &fakeClock{t: tc.at}
		g := open(t.TempDir(), clk)
		err := g.Check("c", issued, expires)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}

	// Let through once at the window's first instant, the command is a
	// replay at every later instant that would let it through, the last
	// one included, whether the guard stayed up or was reopened (a
	// reboot); then it is expired, and forgotten.
	dir := t.TempDir()
	clk := &fakeClock{t: first}
	g := open(dir, clk)
	if err := g.Check("c", issued, expires); err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Time{first, issued, expires, expires.Add(time.Nanosecond), last.Add(-time.Nanosecond), last} {
		clk.t = at
		if err := g.Check("c", issued, expires); !errors.Is(err, ErrReplay) {
			t.Errorf("replay at %v past issued_at: %v, want %v", at.Sub(issued), err, ErrReplay)
		}
		if err := open(dir, clk).Check("c", issued, expires); !errors.Is(err, ErrReplay) {
			t.Errorf("replay at %v past issued_at after a reopen: %v, want %v", at.Sub(issued), err, ErrReplay)
		}
	}
	clk.t = last.Add(time.Nanosecond)
	if err := g.Check("c", issued, expires); !errors.Is(err, ErrExpired) {
		t.Errorf("after the window: %v, want %v", err, ErrExpired)
	}
	if err := g.Check("d", clk.t, clk.t.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if g.Len() != 1 {
		t.Errorf("%d ids remembered after the window, want 1: the expired one is kept", g.Len())
	}
}
