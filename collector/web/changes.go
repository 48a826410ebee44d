package web

import (
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/collector/series"
	"github.com/edgebench/edgebench/collector/store"
)

// ChangesPage serves /changes: each series with a change, its req/s drawn
// with the changes marked (red worse, green better), and the changes.
func ChangesPage(st series.Store, log *zap.Logger) http.HandlerFunc {
	page := template.Must(template.New("changes").ParseFS(files, "layout.html", "changes.html"))
	return func(w http.ResponseWriter, r *http.Request) {
		days := 7
		if s := r.URL.Query().Get("days"); s != "" {
			if n, err := strconv.Atoi(s); err == nil && n > 0 && n <= 3650 {
				days = n
			}
		}
		since := time.Now().Add(-time.Duration(days) * 24 * time.Hour)
		cs, err := series.Changes(r.Context(), st, series.Options{Since: since})
		if err == nil && len(cs) > 0 {
			var runs []store.RunRow
			runs, err = st.Runs(r.Context(), store.Filter{Since: since})
			if err == nil {
				err = renderChanges(w, page, cs, runs, days)
				if err == nil {
					return
				}
			}
		}
		if err != nil {
			log.Error("changes page", zap.Error(err))
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		page.ExecuteTemplate(w, "changes.html", map[string]any{"Title": "changes", "Days": days})
	}
}

// renderChanges draws each series' req/s (x: result order, y: from 0 to
// its largest value) with a mark at each change.
func renderChanges(w http.ResponseWriter, page *template.Template, cs []series.Change, runs []store.RunRow, days int) error {
	_, by := series.Of(runs, nil)
	type mark struct {
		X     float64
		Worse bool
		Title string
	}
	type one struct {
		Name    string
		Points  string
		Marks   []mark
		Changes []series.Change
	}
	var out []*one
	bySeries := map[string]*one{}
	for _, ch := range cs {
		s := bySeries[ch.Series]
		if s == nil {
			s = &one{Name: ch.Series}
			rs := by[ch.Series]
			top := 0.0
			for _, r := range rs {
				top = math.Max(top, r.RPS)
			}
			var pts []string
			for i, r := range rs {
				x := 600 * float64(i) / math.Max(1, float64(len(rs)-1))
				y := 115.0
				if top > 0 {
					y = 115 - 110*r.RPS/top
				}
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
			}
			s.Points = strings.Join(pts, " ")
			bySeries[ch.Series] = s
			out = append(out, s)
		}
		s.Changes = append(s.Changes, ch)
		for i, r := range by[ch.Series] {
			if r.ID == ch.ResultID {
				n := len(by[ch.Series])
				x := 600 * float64(i) / math.Max(1, float64(n-1))
				s.Marks = append(s.Marks, mark{X: x, Worse: ch.Worse(), Title: fmt.Sprintf("%s %+.1f%% at %s", ch.Metric, ch.Pct, ch.At.UTC().Format(time.RFC3339))})
			}
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	return page.ExecuteTemplate(w, "changes.html", map[string]any{"Title": "changes", "Days": days, "Series": out})
}
