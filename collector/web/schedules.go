package web

import (
	"context"
	"html/template"
	"net/http"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
)

// SchedulesStore is what the schedules page reads of the store.
type SchedulesStore interface {
	// Schedules lists the schedules by name, each with its latest run.
	Schedules(ctx context.Context) ([]scheduledb.Schedule, error)
}

// SchedulesPage serves /schedules: the schedules, each with its latest
// firing, and the buttons that pause, resume and remove them through the
// API (needToken: the API wants its token, which the page asks for).
func SchedulesPage(st SchedulesStore, log *zap.Logger, needToken bool) http.HandlerFunc {
	page := template.Must(template.New("schedules").Funcs(template.FuncMap{"labels": group.LabelString}).
		ParseFS(files, "layout.html", "schedules.html"))
	return func(w http.ResponseWriter, r *http.Request) {
		ss, err := st.Schedules(r.Context())
		if err != nil {
			log.Error("schedules page", zap.Error(err))
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := page.ExecuteTemplate(w, "schedules.html", map[string]any{
			"Title": "schedules", "Schedules": ss, "NeedToken": needToken}); err != nil {
			log.Warn("schedules page", zap.Error(err))
		}
	}
}
