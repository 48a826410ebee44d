package alerts

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/internal/testenv"
)

// TestWebhook4xxNotDelivered: a webhook that answers 400 (or 3xx, or
// 5xx) has not taken the alert: it is posted again after the backoff, and
// counted posted only once a 2xx answers; one answered 4xx every time is
// counted dropped.
func TestWebhook4xxNotDelivered(t *testing.T) {
	var calls atomic.Int64
	answers := []int{400, 302, 503, 204}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		w.WriteHeader(answers[min(int(n)-1, len(answers)-1)])
	}))
	defer srv.Close()
	publish := func(context.Context, string, bool, []byte) error { return nil }
	al := New(Config{Webhook: srv.URL, Retries: 4, Backoff: 10 * time.Millisecond}, storetest.OpenSQLite(t), publish, "edgebench/v1", zap.NewNop())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		al.Run(ctx)
	}()
	defer func() { cancel(); <-done }()
	al.Raise(&Alert{Kind: KindMissed, Fleet: "lab", Subject: "s", At: time.Now(), Summary: "test"})
	testenv.Until(t, "the alert posted", func() bool { return al.Stats().Posted+al.Stats().Dropped == 1 })
	if st := al.Stats(); st.Posted != 1 || calls.Load() != 4 {
		t.Errorf("posted %d after %d calls, want 1 after 4 (400, 302, 503, then 204)", st.Posted, calls.Load())
	}
	answers = []int{404}
	calls.Store(0)
	al.Raise(&Alert{Kind: KindMissed, Fleet: "lab", Subject: "t", At: time.Now(), Summary: "test"})
	testenv.Until(t, "the alert given up", func() bool { return al.Stats().Posted+al.Stats().Dropped == 2 })
	if st := al.Stats(); st.Dropped != 1 || calls.Load() != 4 {
		t.Errorf("dropped %d after %d calls, want 1 after 4 answered 404", st.Dropped, calls.Load())
	}
}
