package sqldb

import (
	"cmp"
	"database/sql"
	"encoding/json"
	"slices"

	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/verdict"
	"github.com/edgebench/edgebench/wire"
)

// What the store's tables read of the results' columns, and the order
// in which they lock the devices' rows.

// ParseSpec reads a spec as the store keeps it; a result stored before
// specs were (one the backfill could not decode) keeps what the results
// table knows, its URL and connections.
func ParseSpec(stored, url string, conns int) group.Spec {
	var s group.Spec
	if stored == "" || json.Unmarshal([]byte(stored), &s) != nil {
		return group.Spec{URL: url, Connections: conns}
	}
	return s
}

// RunVerdict reads a run's verdict columns back: its figure does not
// stand; the load generator was its limit. Both false without a verdict.
func RunVerdict(limitedBy sql.NullString, valid sql.NullBool) (invalid, generatorBound bool) {
	if !limitedBy.Valid || !valid.Valid {
		return false, false
	}
	return !valid.Bool, limitedBy.String == verdict.Generator
}

// SortedAddrs are the keys of m in (fleet, device) order.
func SortedAddrs[V any](m map[wire.Addr]V) []wire.Addr {
	out := make([]wire.Addr, 0, len(m))
	for a := range m {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b wire.Addr) int {
		return cmp.Or(cmp.Compare(a.Fleet, b.Fleet), cmp.Compare(a.Device, b.Device))
	})
	return out
}
