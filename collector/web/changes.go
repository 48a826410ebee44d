package web

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/store/seriesdb"
)

// ChangesStore is what the changes page reads of the store.
type ChangesStore interface {
	// ListChanges lists a page of the final changes, the latest first.
	ListChanges(ctx context.Context, q seriesdb.ChangeQuery) ([]seriesdb.Change, string, error)
	// ProvisionalChanges lists the provisional claims.
	ProvisionalChanges(ctx context.Context, q seriesdb.ChangeQuery) ([]seriesdb.Change, bool, error)
}

// ChangesQuery reads the query of /changes and /api/changes: days (the
// changes at most that many days old; 0: all; default 7), fleet, device,
// limit (a page's changes, default seriesdb.DefaultChangesLimit, at most
// seriesdb.MaxChangesLimit) and cursor (the next page's, from the page
// before). What is not a number or out of range is an error.
func ChangesQuery(v url.Values, now time.Time) (seriesdb.ChangeQuery, int, error) {
	q := seriesdb.ChangeQuery{Fleet: v.Get("fleet"), Device: v.Get("device"), Cursor: v.Get("cursor")}
	days := 7
	if s := v.Get("days"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > 36500 {
			return q, 0, errors.New("days: want a number of days from 0 (all) to 36500")
		}
		days = n
	}
	if days > 0 {
		q.Since = now.Add(-time.Duration(days) * 24 * time.Hour)
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > seriesdb.MaxChangesLimit {
			return q, 0, fmt.Errorf("limit: want a number from 1 to %d", seriesdb.MaxChangesLimit)
		}
		q.Limit = n
	}
	return q, days, nil
}

// spark is a change drawn small: the values it compared on each side
// (x: their order, y: from the smallest to the largest), with the change
// marked between them, red when worse.
type spark struct {
	Points string
	X      float64
	Worse  bool
	Title  string
}

func sparkOf(c *seriesdb.Change) spark {
	vs := append(append([]float64{}, c.BeforeValues...), c.AfterValues...)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	var pts []string
	for i, v := range vs {
		x := 160 * float64(i) / math.Max(1, float64(len(vs)-1))
		y := 20.0
		if hi > lo {
			y = 36 - 32*(v-lo)/(hi-lo)
		}
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
	}
	x := 0.0
	if len(vs) > 1 {
		x = 160 * (float64(len(c.BeforeValues)) - 0.5) / float64(len(vs)-1)
	}
	return spark{Points: strings.Join(pts, " "), X: x, Worse: c.Worse(),
		Title: fmt.Sprintf("%s %+.1f%%: %d results before, %d after", c.Metric, c.Pct, len(c.BeforeValues), len(c.AfterValues))}
}

// changeRow is a change as the page shows it.
type changeRow struct {
	seriesdb.Change
	Spark   spark
	LeftOut string
}

func rowsOf(cs []seriesdb.Change) []changeRow {
	out := make([]changeRow, len(cs))
	for i := range cs {
		out[i] = changeRow{Change: cs[i], Spark: sparkOf(&cs[i]), LeftOut: cs[i].LeftOutText()}
	}
	return out
}

// ChangesPage serves /changes: the final changes the store found, the
// latest first, a page at a time (?days=7&fleet=&device=&limit=&cursor=),
// each with the values it compared drawn small (red worse, green better),
// and on the first page the provisional claims, which the next results
// may confirm, move or withdraw.
func ChangesPage(st ChangesStore, log *zap.Logger) http.HandlerFunc {
	page := template.Must(template.New("changes").Funcs(template.FuncMap{"labels": group.LabelString}).
		ParseFS(files, "layout.html", "changes.html"))
	return func(w http.ResponseWriter, r *http.Request) {
		q, days, err := ChangesQuery(r.URL.Query(), time.Now())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		cs, next, err := st.ListChanges(r.Context(), q)
		var prov []seriesdb.Change
		var more bool
		if err == nil && q.Cursor == "" {
			prov, more, err = st.ProvisionalChanges(r.Context(), q)
		}
		switch {
		case errors.Is(err, seriesdb.ErrBadCursor):
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		case err != nil:
			log.Error("changes page", zap.Error(err))
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		nextURL := ""
		if next != "" {
			v := r.URL.Query()
			v.Set("cursor", next)
			nextURL = "?" + v.Encode()
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := page.ExecuteTemplate(w, "changes.html", map[string]any{"Title": "changes", "Days": days, "Changes": rowsOf(cs),
			"Provisional": rowsOf(prov), "MoreProvisional": more, "Next": nextURL, "Paged": q.Cursor != ""}); err != nil {
			log.Warn("changes page", zap.Error(err))
		}
	}
}
