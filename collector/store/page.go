package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/edgebench/edgebench/wire"
)

// Listings page by keyset, as the pages, the API and the commands list:
// a page is the rows after a cursor (the last row of the page before) in
// the listing's order, which an index serves, so that any page costs
// what its rows cost whatever the history holds; an offset would read
// every row before it.

// MaxPage is the most rows one page of a listing holds.
const MaxPage = 1000

// Cursor is a place in a listing of results, the newest received first:
// the rows after it were received before it, or at the same time with a
// smaller id. The zero Cursor is the listing's start.
type Cursor struct {
	Received int64  // the collector's receive time, ns
	ID       string // the result's id
}

// IsZero reports whether c is the listing's start.
func (c Cursor) IsZero() bool { return c.Received == 0 && c.ID == "" }

// String is the cursor as the pages, the API and the commands take it
// back: RECEIVED_NS:ID.
func (c Cursor) String() string {
	if c.IsZero() {
		return ""
	}
	return strconv.FormatInt(c.Received, 10) + ":" + c.ID
}

// ErrCursor says a cursor given back is not one the store wrote.
var ErrCursor = errors.New("not a cursor of this listing")

// ParseCursor reads a Cursor's String; "" is the start.
func ParseCursor(s string) (Cursor, error) {
	if s == "" {
		return Cursor{}, nil
	}
	at, id, ok := strings.Cut(s, ":")
	n, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || n <= 0 || !idLike(id) {
		return Cursor{}, fmt.Errorf("cursor %q: %w (want RECEIVED_NS:ID, as the last page gave it)", wire.Clip(s), ErrCursor)
	}
	return Cursor{Received: n, ID: id}, nil
}

// idLike reports whether s may be a result's or a device's id: what a
// cursor holds is printable ASCII without spaces, at most 64 bytes.
func idLike(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// DeviceCursor is a place in the listing of devices, by fleet and id: the
// rows after it come after it in that order. The zero DeviceCursor is the
// start.
type DeviceCursor struct{ Fleet, ID string }

// String is the cursor as it is taken back: FLEET/ID.
func (c DeviceCursor) String() string {
	if c == (DeviceCursor{}) {
		return ""
	}
	return c.Fleet + "/" + c.ID
}

// ParseDeviceCursor reads a DeviceCursor's String; "" is the start.
func ParseDeviceCursor(s string) (DeviceCursor, error) {
	if s == "" {
		return DeviceCursor{}, nil
	}
	fleet, id, ok := strings.Cut(s, "/")
	if !ok || !idLike(fleet) || !idLike(id) {
		return DeviceCursor{}, fmt.Errorf("cursor %q: %w (want FLEET/DEVICE, as the last page gave it)", wire.Clip(s), ErrCursor)
	}
	return DeviceCursor{Fleet: fleet, ID: id}, nil
}

// DevicePage is one page of the devices.
type DevicePage struct {
	Devices []Device     `json:"devices"`
	Next    DeviceCursor `json:"-"` // the cursor of the page after it; zero when it is the last
}

// DevicesAfter lists at most limit devices (1 to MaxPage; other values
// take MaxPage) after cursor c, by fleet and id.
func (s *Store) DevicesAfter(ctx context.Context, c DeviceCursor, limit int) (DevicePage, error) {
	if limit <= 0 || limit > MaxPage {
		limit = MaxPage
	}
	devs, err := s.devices(ctx, "WHERE (d.fleet, d.id) > (?, ?) ORDER BY d.fleet, d.id LIMIT ?", c.Fleet, c.ID, limit+1)
	if err != nil {
		return DevicePage{}, err
	}
	p := DevicePage{Devices: devs}
	if len(devs) > limit {
		p.Devices = devs[:limit]
		last := p.Devices[limit-1]
		p.Next = DeviceCursor{Fleet: last.Fleet, ID: last.ID}
	}
	return p, nil
}

// DeviceCounts counts the devices the store knows and those online.
func (s *Store) DeviceCounts(ctx context.Context) (total, online int, err error) {
	err = s.db.QueryRow(ctx, s.db.R, "SELECT count(*), count(CASE WHEN online THEN 1 END) FROM devices").Scan(&total, &online)
	if err != nil {
		return 0, 0, fmt.Errorf("devices: %w", s.db.Wrap(err))
	}
	return total, online, nil
}

// RunPage is one page of results.
type RunPage struct {
	Runs []RunRow `json:"runs"`
	Next Cursor   `json:"-"` // the cursor of the page after it; zero when it is the last
}

// RunsAfter lists at most f.Limit results (1 to MaxPage; other values
// take MaxPage) that f selects, received before f.Before (the newest
// first), and the cursor of the next page.
func (s *Store) RunsAfter(ctx context.Context, f Filter) (RunPage, error) {
	limit := f.Limit
	if limit <= 0 || limit > MaxPage {
		limit = MaxPage
	}
	f.Limit = limit + 1
	rows, err := s.Runs(ctx, f)
	if err != nil {
		return RunPage{}, err
	}
	p := RunPage{Runs: rows}
	if len(rows) > limit {
		p.Runs = rows[:limit]
		p.Next = rows[limit-1].cursor
	}
	return p, nil
}

// Cursor is r's place in a listing of results: the cursor of the page
// that follows it.
func (r RunRow) Cursor() Cursor { return r.cursor }
