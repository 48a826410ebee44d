package web

import (
	"context"
	"html/template"
	"net/http"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/collector/store"
)

// TriggerStore is what the trigger page reads of the store.
type TriggerStore interface {
	// DevicesAfter lists a page of the devices after a cursor.
	DevicesAfter(ctx context.Context, c store.DeviceCursor, limit int) (store.DevicePage, error)
}

// TriggerPage serves /trigger: a form that sends a load test, a capacity
// search or repetitions to a device, optionally loading another device
// (a run across two devices), through POST /api/trigger as the CLI's
// trigger does, and follows the command until its results land. The
// form's script (trigger.js) sends the API's token typed on the page when
// needToken; the page itself never holds it. Its list of device names is
// the fleet page's first page, a hint only: any device may be typed.
func TriggerPage(st TriggerStore, log *zap.Logger, needToken bool) http.HandlerFunc {
	page := template.Must(template.New("trigger").ParseFS(files, "layout.html", "trigger.html"))
	return func(w http.ResponseWriter, r *http.Request) {
		devs, err := st.DevicesAfter(r.Context(), store.DeviceCursor{}, devicesPerPage)
		if err != nil {
			log.Error("trigger page", zap.Error(err))
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := page.ExecuteTemplate(w, "trigger.html", map[string]any{
			"Title": "trigger", "Devices": devs.Devices, "NeedToken": needToken}); err != nil {
			log.Warn("trigger page", zap.Error(err))
		}
	}
}
