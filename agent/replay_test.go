package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestReplayGuard(t *testing.T) {
	dir := t.TempDir()
	clk := &fakeClock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	opt := ReplayOptions{Skew: time.Minute, Now: clk.now}
	g, err := OpenReplayGuard(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	now := clk.t
	if err := g.Check("a", now.Add(-time.Second), now.Add(time.Hour)); err != nil {
		t.Fatalf("fresh command: %v", err)
	}
	if err := g.Check("a", now.Add(-time.Second), now.Add(time.Hour)); !errors.Is(err, ErrReplay) {
		t.Errorf("replay: %v", err)
	}
	for _, tc := range []struct {
		name           string
		issued, expiry time.Time
		want           error
	}{
		{"expired", now.Add(-time.Hour), now.Add(-2 * time.Minute), ErrExpired},
		{"expired within skew is fine", now.Add(-time.Hour), now.Add(-30 * time.Second), nil},
		{"future", now.Add(2 * time.Minute), now.Add(time.Hour), ErrNotYetValid},
		{"future within skew is fine", now.Add(30 * time.Second), now.Add(time.Hour), nil},
		{"backwards", now, now.Add(-time.Second), ErrBadValidity},
		{"no expiry", now, time.Time{}, ErrBadValidity},
		{"too long", now, now.Add(48 * time.Hour), ErrBadValidity},
	} {
		err := g.Check(tc.name, tc.issued, tc.expiry)
		if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}

	// A reboot: a new guard over the same directory still knows "a".
	g2, err := OpenReplayGuard(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := g2.Check("a", now, now.Add(time.Hour)); !errors.Is(err, ErrReplay) {
		t.Errorf("replay after reopen: %v", err)
	}
	// Once "a" has expired (plus skew) it is forgotten; the command itself is
	// then refused as expired anyway.
	clk.t = now.Add(time.Hour + 2*time.Minute)
	if err := g2.Check("b", clk.t, clk.t.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if g2.Len() != 1 {
		t.Errorf("Len %d after pruning, want 1", g2.Len())
	}
	if err := g2.Check("a", now, now.Add(time.Hour)); !errors.Is(err, ErrExpired) {
		t.Errorf("old replay: %v", err)
	}
	// Nothing but the state file is left in the directory.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "replay.json" {
		t.Errorf("dir holds %v", ents)
	}
}

func TestReplayGuardBounded(t *testing.T) {
	clk := &fakeClock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	g, err := OpenReplayGuard(t.TempDir(), ReplayOptions{MaxIDs: 3, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := g.Check(fmt.Sprint(i), clk.t, clk.t.Add(time.Duration(i+1)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Check("x", clk.t, clk.t.Add(time.Minute)); !errors.Is(err, ErrReplayFull) {
		t.Errorf("full: %v", err)
	}
	clk.t = clk.t.Add(4 * time.Minute) // "0" (1m + 2m skew) has expired
	if err := g.Check("x", clk.t, clk.t.Add(time.Minute)); err != nil {
		t.Errorf("after pruning: %v", err)
	}
}

func TestReplayGuardCorruptState(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "replay.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	g, err := OpenReplayGuard(dir, ReplayOptions{Now: clk.now})
	if !errors.Is(err, ErrReplayLost) || g == nil {
		t.Fatalf("corrupt state: %v, guard %v", err, g)
	}
	if _, err := os.Stat(filepath.Join(dir, "replay.json.corrupt")); err != nil {
		t.Errorf("corrupt file not kept aside: %v", err)
	}
	// Commands issued before the loss are refused; later ones pass.
	if err := g.Check("old", clk.t.Add(-time.Minute), clk.t.Add(time.Hour)); !errors.Is(err, ErrReplay) {
		t.Errorf("old command after loss: %v", err)
	}
	clk.t = clk.t.Add(time.Second)
	if err := g.Check("new", clk.t, clk.t.Add(time.Hour)); err != nil {
		t.Errorf("new command after loss: %v", err)
	}
	// The floor survives a further restart.
	g2, err := OpenReplayGuard(dir, ReplayOptions{Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	if err := g2.Check("old2", clk.t.Add(-time.Hour), clk.t.Add(time.Hour)); !errors.Is(err, ErrReplay) {
		t.Errorf("old command after loss and restart: %v", err)
	}
}
