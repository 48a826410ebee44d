package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/edgebench/edgebench/internal/durable"
)

// Errors of ReplayGuard.Check that the daemon branches on: SPEC 5 says
// replays and expired commands are ignored, not run.
var (
	ErrReplay      = errors.New("replayed command")
	ErrExpired     = errors.New("expired command")
	ErrNotYetValid = errors.New("command issued in the future")
	ErrBadValidity = errors.New("bad command validity window")
	ErrReplayFull  = errors.New("too many live command ids")
	ErrReplayLost  = errors.New("replay state lost")
)

const replayStateFile = "replay.json"

// ReplayOptions tunes a ReplayGuard; zero fields take the defaults.
type ReplayOptions struct {
	MaxIDs int           // ids remembered at once; default 4096
	Skew   time.Duration // clock skew allowed each way; default 2m
	MaxTTL time.Duration // longest validity from now that a command may ask; default 24h
	Now    func() time.Time
}

// ReplayGuard remembers the ids of the commands it has let through until
// they expire, and refuses a command seen before, expired, or not yet
// valid. Its memory is bounded (MaxIDs) and pruned of expired ids, and it is
// saved in its state directory after each new id (temp file, fsync, rename,
// fsync of the directory), so a reboot does not forget. Safe for concurrent
// use.
type ReplayGuard struct {
	mu    sync.Mutex
	path  string
	opt   ReplayOptions
	seen  map[string]time.Time // id -> forget after
	floor time.Time            // commands issued before this are refused (state was lost)
}

type replayState struct {
	V     int                  `json:"v"`
	Floor time.Time            `json:"floor,omitzero"`
	IDs   map[string]time.Time `json:"ids"`
}

// OpenReplayGuard loads the guard saved in dir (which must exist) or starts
// an empty one. When the saved state cannot be read it is moved aside to
// replay.json.corrupt, and OpenReplayGuard returns a working guard together
// with an error wrapping ErrReplayLost: the guard then refuses every command
// issued before now, since it can no longer tell which of those it has seen.
// The caller should log that error and go on.
func OpenReplayGuard(dir string, opt ReplayOptions) (*ReplayGuard, error) {
	if opt.MaxIDs <= 0 {
		opt.MaxIDs = 4096
	}
	if opt.Skew <= 0 {
		opt.Skew = 2 * time.Minute
	}
	if opt.MaxTTL <= 0 {
		opt.MaxTTL = 24 * time.Hour
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	g := &ReplayGuard{path: filepath.Join(dir, replayStateFile), opt: opt, seen: map[string]time.Time{}}
	data, err := os.ReadFile(g.path)
	if errors.Is(err, os.ErrNotExist) {
		return g, nil
	}
	if err != nil {
		return nil, fmt.Errorf("replay guard: %w", err)
	}
	var st replayState
	if err := json.Unmarshal(data, &st); err != nil || st.V != 1 {
		if err == nil {
			err = fmt.Errorf("version %d", st.V)
		}
		g.floor = opt.Now()
		_ = os.Rename(g.path, g.path+".corrupt")
		if serr := g.saveLocked(); serr != nil {
			return nil, fmt.Errorf("replay guard: %w", serr)
		}
		return g, fmt.Errorf("%w: %s: %v; refusing commands issued before %s", ErrReplayLost, g.path, err, g.floor.UTC().Format(time.RFC3339))
	}
	g.floor = st.Floor
	for id, t := range st.IDs {
		g.seen[id] = t
	}
	g.pruneLocked(opt.Now())
	for len(g.seen) > opt.MaxIDs { // a smaller MaxIDs than last time: keep the longest-lived
		ids := slices.SortedFunc(maps.Keys(g.seen), func(a, b string) int { return g.seen[a].Compare(g.seen[b]) })
		for _, id := range ids[:len(g.seen)-opt.MaxIDs] {
			delete(g.seen, id)
		}
	}
	return g, nil
}

// Check lets a command through once: it returns nil and remembers id when
// the command is new and valid now (issuedAt - skew <= now <= expiresAt +
// skew), and an error wrapping ErrReplay, ErrExpired, ErrNotYetValid,
// ErrBadValidity or ErrReplayFull otherwise. An error that wraps none of
// those is a failure to save the state; the id is remembered all the same.
func (g *ReplayGuard) Check(id string, issuedAt, expiresAt time.Time) error {
	if id == "" || len(id) > 128 {
		return fmt.Errorf("%w: command id must have 1 to 128 bytes", ErrBadValidity)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.opt.Now()
	skew := g.opt.Skew
	switch {
	case expiresAt.IsZero() || issuedAt.IsZero():
		return fmt.Errorf("%w: command %s has no issued_at or expires_at", ErrBadValidity, id)
	case expiresAt.Before(issuedAt):
		return fmt.Errorf("%w: command %s expires before it is issued", ErrBadValidity, id)
	case now.After(expiresAt.Add(skew)):
		return fmt.Errorf("%w: command %s expired at %s", ErrExpired, id, expiresAt.UTC().Format(time.RFC3339))
	case issuedAt.After(now.Add(skew)):
		return fmt.Errorf("%w: command %s issued at %s, after now plus %v", ErrNotYetValid, id, issuedAt.UTC().Format(time.RFC3339), skew)
	case expiresAt.Sub(now) > g.opt.MaxTTL:
		return fmt.Errorf("%w: command %s valid until %s, over %v from now", ErrBadValidity, id, expiresAt.UTC().Format(time.RFC3339), g.opt.MaxTTL)
	}
	if !g.floor.IsZero() && issuedAt.Before(g.floor) {
		return fmt.Errorf("%w: command %s issued before the replay state was lost", ErrReplay, id)
	}
	g.pruneLocked(now)
	if _, ok := g.seen[id]; ok {
		return fmt.Errorf("%w: command %s seen before", ErrReplay, id)
	}
	if len(g.seen) >= g.opt.MaxIDs {
		return fmt.Errorf("%w (%d): command %s refused", ErrReplayFull, g.opt.MaxIDs, id)
	}
	g.seen[id] = expiresAt.Add(skew)
	if err := g.saveLocked(); err != nil {
		return fmt.Errorf("replay guard: %w", err)
	}
	return nil
}

// Len returns the number of ids remembered.
func (g *ReplayGuard) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.seen)
}

func (g *ReplayGuard) pruneLocked(now time.Time) {
	for id, t := range g.seen {
		if now.After(t) {
			delete(g.seen, id)
		}
	}
	if !g.floor.IsZero() && now.After(g.floor.Add(g.opt.MaxTTL+2*g.opt.Skew)) {
		g.floor = time.Time{} // every command seen before the loss has expired
	}
}

func (g *ReplayGuard) saveLocked() error {
	data, err := json.Marshal(replayState{V: 1, Floor: g.floor, IDs: g.seen})
	if err != nil {
		return err
	}
	return durable.WriteFile(g.path, data, 0o600)
}
