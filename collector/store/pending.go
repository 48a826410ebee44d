package store

import (
	"context"
	"fmt"
	"time"

	"github.com/edgebench/edgebench/wire"
)

// PendingWindow bounds how far back PendingCommands looks: a command
// issued longer ago that has not expired is one whose device said it
// runs (its heartbeat then says busy) or never will.
const PendingWindow = 24 * time.Hour

// PendingCommands are the commands that keep a device busy before its
// heartbeat can say so, by device ("fleet/id"): a load test, capacity
// search or watch sent to that device by name, not expired at now, and
// not ended by the device (no terminal event of it). The oldest such
// command of a device is its. A command to a whole fleet is not counted:
// a device offline when it was sent never answers it. Only the commands
// of the last PendingWindow are read: the cost follows new work.
func (s *Store) PendingCommands(ctx context.Context, now time.Time) (map[string]string, error) {
	rows, err := s.db.Query(ctx, s.db.R, `SELECT ct.fleet, ct.target, c.id FROM commands c
		JOIN command_targets ct ON ct.command_id = c.id
		WHERE c.issued_at >= ? AND c.expires_at > ? AND c.kind IN (?, ?, ?) AND ct.target <> ?
		AND NOT EXISTS (SELECT 1 FROM events e WHERE e.command_id = c.id AND e.fleet = ct.fleet AND e.device = ct.target
			AND e.state IN (?, ?, ?, ?, ?))
		ORDER BY c.issued_at DESC, c.id DESC`,
		now.Add(-PendingWindow).UnixNano(), now.UnixNano(),
		string(wire.KindLoadTest), string(wire.KindCapacity), string(wire.KindProbe), wire.AllDevices,
		string(wire.StateRejected), string(wire.StateSucceeded), string(wire.StateFailed), string(wire.StateCancelled), string(wire.StateTimedOut))
	if err != nil {
		return nil, fmt.Errorf("pending commands: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var fleet, device, id string
		if err := rows.Scan(&fleet, &device, &id); err != nil {
			return nil, fmt.Errorf("pending commands: %w", s.db.Wrap(err))
		}
		out[fleet+"/"+device] = id // the newest first: the oldest stays
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pending commands: %w", s.db.Wrap(err))
	}
	return out, nil
}
