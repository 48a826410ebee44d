package collector

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/edgebench/edgebench/collector/compare"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/sqldb"
)

// The API's listings, a page at a time: ?limit=N (1 to store.MaxPage,
// default store.MaxPage) rows after ?after= (devices) or before ?before=
// (results, the newest first), the cursor of the next page in a Link
// header (rel="next"), as GitHub's API pages; the body is the page's
// array.
//
//	GET /api/devices?limit=&after=FLEET/ID                         []Device
//	GET /api/runs?limit=&before=CURSOR&fleet=&device=&cmd=   []ExportRow, the newest first

// pageQuery reads ?limit and checks that q holds only the parameters of
// allowed, each once.
func pageQuery(q url.Values, allowed ...string) (int, error) {
	for k, v := range q {
		if k != "limit" && !slices.Contains(allowed, k) {
			return 0, fmt.Errorf("unknown parameter %q: this listing takes limit and %v", k, allowed)
		}
		if len(v) > 1 || len(v[0]) > 256 {
			return 0, fmt.Errorf("%s: give it once, at most 256 bytes", k)
		}
	}
	limit := store.MaxPage
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > store.MaxPage {
			return 0, fmt.Errorf("limit %q: want 1 to %d", s, store.MaxPage)
		}
		limit = n
	}
	return limit, nil
}

// linkNext sets the Link header of the next page: the request's URL with
// param set to cursor.
func linkNext(w http.ResponseWriter, r *http.Request, param, cursor string) {
	if cursor == "" {
		return
	}
	q := r.URL.Query()
	q.Set(param, cursor)
	w.Header().Set("Link", "<"+r.URL.Path+"?"+q.Encode()+`>; rel="next"`)
}

func (c *Collector) listingAPI(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/devices", func(w http.ResponseWriter, r *http.Request) {
		limit, err := pageQuery(r.URL.Query(), "after")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		after, err := store.ParseDeviceCursor(r.URL.Query().Get("after"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p, err := c.store.DevicesAfter(r.Context(), after, limit)
		if err != nil {
			http.Error(w, err.Error(), storeStatus(err))
			return
		}
		if p.Devices == nil {
			p.Devices = []store.Device{}
		}
		linkNext(w, r, "after", p.Next.String())
		writeJSON(w, p.Devices)
	})
	mux.HandleFunc("GET /api/runs", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		limit, err := pageQuery(q, "before", "fleet", "device", "cmd")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		before, err := store.ParseCursor(q.Get("before"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		p, err := c.store.RunsAfter(r.Context(), store.Filter{Fleet: q.Get("fleet"), Device: q.Get("device"), Command: q.Get("cmd"),
			Before: before, Limit: limit})
		if err != nil {
			http.Error(w, err.Error(), storeStatus(err))
			return
		}
		linkNext(w, r, "before", p.Next.String())
		writeJSON(w, compare.ExportRows(p.Runs))
	})
}

// storeStatus is the HTTP status of a store's error: 503 when the
// database is unavailable (try again), 500 else.
func storeStatus(err error) int {
	if sqldb.Unavailable(err) {
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
