package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/edgebench/edgebench/collector/store/sqldb"
	"github.com/edgebench/edgebench/wire"
)

// This file is the store's side of runs across two devices: each run as
// the collector drives it (a pair: the target's watch and the loader's
// load), the results of both devices held apart until they are joined
// (pair_parts), and the joined result stored with the pair's end in one
// transaction, so that a run is stored whole or not at all.

// MaxStoredPayload bounds the payload of a stored result: a device's
// result is at most wire.DefaultMaxPayload, and a result joined from a run
// across two devices holds two devices' figures.
const MaxStoredPayload = 2 * wire.DefaultMaxPayload

// The states of a Pair.
const (
	PairWatching  = "watching"  // the watch is sent to the target; the load waits for it to run
	PairLoading   = "loading"   // the load is sent to the loader
	PairJoining   = "joining"   // the load is over: both results are awaited
	PairSucceeded = "succeeded" // joined and stored (ResultID)
	PairFailed    = "failed"    // Reason says why; nothing stored
	PairCancelled = "cancelled" // asked to stop; nothing stored
)

// PairDone reports whether state is one a pair ends in.
func PairDone(state string) bool {
	return state == PairSucceeded || state == PairFailed || state == PairCancelled
}

// The roles of a pair's parts.
const (
	RoleLoader = "loader" // the load's result
	RoleTarget = "target" // the watch's result
)

// Pair is a run across two devices: Loader loads, Target serves and
// watches itself. Its ID is the load's command id, which the joined
// result names; WatchID the target's watch.
type Pair struct {
	ID          string    `json:"id"`
	WatchID     string    `json:"watch_id"`
	Fleet       string    `json:"fleet"`
	Loader      string    `json:"loader"`
	TargetFleet string    `json:"target_fleet"`
	Target      string    `json:"target"`
	Kind        string    `json:"kind"` // loadtest or capacity
	State       string    `json:"state"`
	Reason      string    `json:"reason,omitempty"`
	ResultID    string    `json:"result_id,omitempty"` // the joined result, once stored
	Cancel      bool      `json:"cancel,omitempty"`    // a cancel was asked
	Created     time.Time `json:"created"`
	Updated     time.Time `json:"updated"`
	Deadline    time.Time `json:"deadline"` // past it, a pair not ended fails
}

const pairCols = `id, watch_id, fleet, loader, target_fleet, target, kind, state, reason, result_id, cancel, created, updated, deadline`

func scanPair(row interface{ Scan(...any) error }) (*Pair, error) {
	var p Pair
	var created, updated, deadline int64
	if err := row.Scan(&p.ID, &p.WatchID, &p.Fleet, &p.Loader, &p.TargetFleet, &p.Target, &p.Kind, &p.State, &p.Reason, &p.ResultID,
		&p.Cancel, &created, &updated, &deadline); err != nil {
		return nil, err
	}
	p.Created, p.Updated, p.Deadline = sqldb.UnixTime(created), sqldb.UnixTime(updated), sqldb.UnixTime(deadline)
	return &p, nil
}

// AddPair records a pair before its watch is sent, with the trigger's
// request (JSON) for the record.
func (s *Store) AddPair(ctx context.Context, p *Pair, request string) error {
	now := time.Now()
	p.Created, p.Updated = now, now
	_, err := s.db.Exec(ctx, s.db.W, `INSERT INTO pairs (`+pairCols+`, request) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		p.ID, p.WatchID, p.Fleet, p.Loader, p.TargetFleet, p.Target, p.Kind, p.State, p.Reason, p.ResultID, p.Cancel,
		now.UnixNano(), now.UnixNano(), p.Deadline.UnixNano(), request)
	if err != nil {
		return fmt.Errorf("pair %s: %w", p.ID, err)
	}
	return nil
}

// Pair is the pair whose load or watch command is id; sqldb.ErrNotFound when
// id is neither.
func (s *Store) Pair(ctx context.Context, id string) (*Pair, error) {
	p, err := scanPair(s.db.QueryRow(ctx, s.db.R, `SELECT `+pairCols+` FROM pairs WHERE id = ?
		UNION ALL SELECT `+pairCols+` FROM pairs WHERE watch_id = ? LIMIT 1`, id, id))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("pair %s: %w", id, sqldb.ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("pair %s: %w", id, s.db.Wrap(err))
	}
	return p, nil
}

// SetPairState moves pair id to state, with a reason, unless it has
// ended already; it reports whether it did. Of several collectors that
// would end one pair, one does.
func (s *Store) SetPairState(ctx context.Context, id, state, reason string) (bool, error) {
	res, err := s.db.Exec(ctx, s.db.W, `UPDATE pairs SET state = ?, reason = ?, updated = ?
		WHERE id = ? AND state NOT IN (?, ?, ?)`, state, reason, time.Now().UnixNano(), id, PairSucceeded, PairFailed, PairCancelled)
	if err != nil {
		return false, fmt.Errorf("pair %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("pair %s: %w", id, s.db.Wrap(err))
	}
	return n > 0, nil
}

// CancelPair asks pair id to stop (its collector relays the cancel to
// both devices); it reports whether the pair was still going.
func (s *Store) CancelPair(ctx context.Context, id string) (bool, error) {
	res, err := s.db.Exec(ctx, s.db.W, `UPDATE pairs SET cancel = ?, updated = ? WHERE id = ? AND state NOT IN (?, ?, ?)`,
		true, time.Now().UnixNano(), id, PairSucceeded, PairFailed, PairCancelled)
	if err != nil {
		return false, fmt.Errorf("pair %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("pair %s: %w", id, s.db.Wrap(err))
	}
	return n > 0, nil
}

// FailOverduePairs fails the pairs not ended by their deadline (the
// collector that drove them stopped), and lists them.
func (s *Store) FailOverduePairs(ctx context.Context, now time.Time, reason string) ([]Pair, error) {
	rows, err := s.db.Query(ctx, s.db.W, `UPDATE pairs SET state = ?, reason = ?, updated = ?
		WHERE deadline < ? AND state NOT IN (?, ?, ?) RETURNING `+pairCols,
		PairFailed, reason, now.UnixNano(), now.UnixNano(), PairSucceeded, PairFailed, PairCancelled)
	if err != nil {
		return nil, fmt.Errorf("overdue pairs: %w", err)
	}
	defer rows.Close()
	var out []Pair
	for rows.Next() {
		p, err := scanPair(rows)
		if err != nil {
			return nil, fmt.Errorf("overdue pairs: %w", s.db.Wrap(err))
		}
		out = append(out, *p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("overdue pairs: %w", s.db.Wrap(err))
	}
	return out, nil
}

// CommandSentToPair is CommandSentTo, and, when command id is a pair's
// load or watch, the pair's id and the role of the device's result in
// it (RoleLoader, RoleTarget): one query for each result the ingest
// checks.
func (s *Store) CommandSentToPair(ctx context.Context, id, fleet, device string) (sent bool, pair, role string, err error) {
	err = s.db.QueryRow(ctx, s.db.R, `SELECT coalesce(pl.id, pw.id, ''),
		CASE WHEN pl.id IS NOT NULL THEN ? WHEN pw.id IS NOT NULL THEN ? ELSE '' END
		FROM command_targets ct LEFT JOIN pairs pl ON pl.id = ct.command_id LEFT JOIN pairs pw ON pw.watch_id = ct.command_id
		WHERE ct.command_id = ? AND ct.fleet = ? AND ct.target IN (?, ?) LIMIT 1`,
		RoleLoader, RoleTarget, id, fleet, device, wire.AllDevices).Scan(&pair, &role)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, "", "", nil
	case err != nil:
		return false, "", "", fmt.Errorf("command %s of %s/%s: %w", id, fleet, device, s.db.Wrap(err))
	}
	return true, pair, role, nil
}

// AddPairPart keeps the result in of a device for pair id, in role, apart
// from the results until the pair is joined. A result kept already is
// kept once; it reports whether in was new.
func (s *Store) AddPairPart(ctx context.Context, id, role string, in Incoming) (bool, error) {
	r := in.Result
	received := in.Received
	if received.IsZero() {
		received = time.Now()
	}
	res, err := s.db.Exec(ctx, s.db.W, `INSERT INTO pair_parts (result_id, pair_id, role, fleet, device, received, raw)
		VALUES (?,?,?,?,?,?,?) ON CONFLICT DO NOTHING`, r.ID, id, role, r.Fleet, r.Device, received.UnixNano(), in.Raw)
	if err != nil {
		return false, fmt.Errorf("pair %s: %s's result %s: %w", id, role, r.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("pair %s: %w", id, s.db.Wrap(err))
	}
	return n > 0, nil
}

// PairPart is a device's result kept for a pair.
type PairPart struct {
	Role   string
	Result *wire.Result
}

// PairParts are the results kept for pair id, in the order received; a
// payload that no longer decodes is an error.
func (s *Store) PairParts(ctx context.Context, id string) ([]PairPart, error) {
	rows, err := s.db.Query(ctx, s.db.R, `SELECT role, raw FROM pair_parts WHERE pair_id = ? ORDER BY received, result_id`, id)
	if err != nil {
		return nil, fmt.Errorf("pair %s: parts: %w", id, err)
	}
	defer rows.Close()
	var out []PairPart
	for rows.Next() {
		var p PairPart
		var raw []byte
		if err := rows.Scan(&p.Role, &raw); err != nil {
			return nil, fmt.Errorf("pair %s: parts: %w", id, s.db.Wrap(err))
		}
		if p.Result, err = wire.DecodeResult(raw); err != nil {
			return nil, fmt.Errorf("pair %s: a kept result: %w", id, err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pair %s: parts: %w", id, s.db.Wrap(err))
	}
	return out, nil
}

// FinishPair stores the joined result of pair id and ends the pair as
// succeeded, in one transaction: both or neither. It reports false, and
// stores nothing, when the pair had ended already (another collector
// joined it, or it failed meanwhile).
func (s *Store) FinishPair(ctx context.Context, id string, joined Incoming) (bool, error) {
	joined.Prepare()
	tx, err := s.db.W.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("pair %s: begin: %w", id, s.db.Wrap(err))
	}
	defer tx.Rollback()
	res, err := s.db.Exec(ctx, tx, `UPDATE pairs SET state = ?, reason = '', result_id = ?, updated = ?
		WHERE id = ? AND state NOT IN (?, ?, ?)`, PairSucceeded, joined.Result.ID, time.Now().UnixNano(), id,
		PairSucceeded, PairFailed, PairCancelled)
	if err != nil {
		return false, fmt.Errorf("pair %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, s.db.Wrap(err)
	}
	st, err := s.ingestTx(ctx, tx, []Incoming{joined})
	if err != nil {
		return false, fmt.Errorf("pair %s: %w", id, err)
	}
	if st[0] != IngestNew {
		return false, fmt.Errorf("pair %s: the joined result %s is stored already", id, joined.Result.ID)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("pair %s: commit: %w", id, s.db.Wrap(err))
	}
	return true, nil
}

// DeviceOnline says whether device fleet/id is online and its state
// (online, lost, offline); found is false for a device never seen.
func (s *Store) DeviceOnline(ctx context.Context, fleet, id string) (online bool, state string, found bool, err error) {
	err = s.db.QueryRow(ctx, s.db.R, `SELECT online, state FROM devices WHERE fleet = ? AND id = ?`, fleet, id).Scan(&online, &state)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, "", false, nil
	case err != nil:
		return false, "", false, fmt.Errorf("device %s/%s: %w", fleet, id, s.db.Wrap(err))
	}
	return online, state, true, nil
}

// EventsAfter lists the events of command id that device fleet/device
// sent after sequence number seq, in order: what a pair's collector has
// not read yet.
func (s *Store) EventsAfter(ctx context.Context, id, fleet, device string, seq uint32) ([]Event, error) {
	rows, err := s.db.Query(ctx, s.db.R, `SELECT command_id, fleet, device, seq, state, reason, result_id, progress, at, window_edge
		FROM events WHERE command_id = ? AND fleet = ? AND device = ? AND seq > ? ORDER BY seq`, id, fleet, device, int64(seq))
	if err != nil {
		return nil, fmt.Errorf("events %s: %w", id, err)
	}
	defer rows.Close()
	var out []Event
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("events %s: %w", id, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("events %s: %w", id, s.db.Wrap(err))
	}
	return out, nil
}
