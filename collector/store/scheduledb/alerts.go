package scheduledb

import (
	"context"
	"encoding/json"
	"time"
)

// ClaimAlert records that an alert about key was raised and reports whether
// this collector is the first to raise it (several collectors on one
// PostgreSQL raise each alert once).
func (s *ScheduleTables) ClaimAlert(ctx context.Context, key, kind, instance string, at time.Time, body any) (bool, error) {
	b, _ := json.Marshal(body)
	now := time.Now().UnixNano()
	res, err := s.db.Exec(ctx, s.db.W, `INSERT INTO changes (kind, series, metric, result_id, at, detected_at, body, alerted_at)
		VALUES ('alert',?,?,?,?,?,?,?) ON CONFLICT DO NOTHING`, key, kind, instance, at.UnixNano(), now, string(b), now)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}
